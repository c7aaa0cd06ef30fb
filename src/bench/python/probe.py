"""cudaup bench: what this venv's torch can do here. Prints one result line (JSON); imports
nothing heavy before torch so a missing torch is reported, not raised."""

import os
import platform

import common as c


def main():
    r = {"python": platform.python_version(), "devices": []}
    try:
        r["cpu_count"] = len(os.sched_getaffinity(0))
    except AttributeError:
        r["cpu_count"] = os.cpu_count()
    try:
        import torch
    except Exception as e:
        r["torch"] = None
        r["error"] = c.describe(e)
        c.result(r)
        return
    r["torch"] = torch.__version__
    r["cuda"] = torch.version.cuda
    try:
        import torchvision
        r["torchvision"] = torchvision.__version__
    except Exception as e:
        r["torchvision"] = None
        r["torchvision_error"] = c.describe(e)
    try:
        r["cudnn"] = torch.backends.cudnn.version()
    except Exception:
        r["cudnn"] = None
    try:
        r["cuda_available"] = bool(torch.cuda.is_available())
        r["nccl"] = ".".join(str(v) for v in torch.cuda.nccl.version()) if r["cuda_available"] else None
    except Exception as e:
        r["cuda_available"] = False
        r["cuda_error"] = c.describe(e)
    if r.get("cuda_available"):
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            r["devices"].append({
                "index": i,
                "name": p.name,
                "capability": list(torch.cuda.get_device_capability(i)),
                "memory_mib": p.total_memory // 2**20,
                "multiprocessors": p.multi_processor_count,
                "uuid": c.device_uuid(torch, i),
                "pci_bus_id": c.device_pci(torch, i),
            })
    c.result(r)


if __name__ == "__main__":
    main()
