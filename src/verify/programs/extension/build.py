# cudaup-verify-extension: builds cudaup_ext.cpp + cudaup_ext_kernel.cu (in argv[1]) with
# torch.utils.cpp_extension.load against CUDA_HOME, runs it on every GPU, prints one JSON line.
import json
import os
import sys
import time

r = {"devices": []}


def err(e):
    return "%s: %s" % (type(e).__name__, e)


try:
    import torch

    r["torch"] = torch.__version__
    r["cuda"] = torch.version.cuda
    if torch.version.cuda is not None:
        from torch.utils import cpp_extension

        r["cuda_home"] = cpp_extension.CUDA_HOME
        work = sys.argv[1]
        build = os.path.join(work, "build")
        os.makedirs(build, exist_ok=True)
        t0 = time.time()
        try:
            ext = cpp_extension.load(
                name="cudaup_ext",
                sources=[os.path.join(work, "cudaup_ext.cpp"), os.path.join(work, "cudaup_ext_kernel.cu")],
                build_directory=build,
                verbose=False,
            )
        except Exception as e:
            r["build_error"] = err(e)
        else:
            r["built"] = True
            r["build_seconds"] = time.time() - t0
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            for i in range(count):
                d = {"index": i}
                try:
                    d["name"] = torch.cuda.get_device_name(i)
                    x = torch.arange(1 << 16, dtype=torch.float32, device="cuda:%d" % i) / 7.0
                    y = ext.axpb(x, 2.5, 1.0)
                    ref = x.cpu() * 2.5 + 1.0
                    d["max_abs_err"] = float((y.cpu() - ref).abs().max())
                except Exception as e:
                    d["error"] = err(e)
                r["devices"].append(d)
except Exception as e:
    r["error"] = err(e)
print(json.dumps(r))
