"""cudaup bench, one GPU: ResNet-50 training throughput on synthetic 224x224 images in fp32/TF32,
AMP and AMP + channels-last; inference throughput; and the batch-size sweep up to the largest
batch that fits (grow until out of memory, then bisect back). Prints progress lines and one
result line (JSON)."""

import gc
import time

import common as c


def main():
    a = c.args()
    r = {"index": a["index"], "configs": [], "sweep": [], "errors": []}
    # Before torch touches the GPU: whatever computes on it now, or holds memory, is another
    # process (this one has no CUDA context yet, so it cannot be mistaken for one).
    nvml = c.Nvml()
    h = nvml.handle(uuid=a.get("uuid"), pci_bus_id=a.get("pci_bus_id"))
    r["nvml"] = h is not None
    r["static"] = nvml.static(h) if h is not None else None
    r["idle_util_before"] = c.idle_util(nvml, h)
    r["other_processes"] = c.other_processes(a.get("uuid"))
    try:
        import torch
    except Exception as e:
        r["error"] = c.describe(e)
        c.result(r)
        return
    index = a["index"]
    quick = a.get("quick", False)
    batch = int(a.get("batch", 256))
    # The batch of each precision's reference figure, so the two are measured alike.
    train_batch = a.get("train_batch", {})
    infer_batch = a.get("infer_batch", {})
    cap = int(a.get("max_batch", 8192))
    seconds = 3.0 if quick else 10.0
    sweep_seconds = 1.5 if quick else 4.0
    bisect_steps = 2 if quick else 4
    dev = torch.device("cuda", index)
    torch.cuda.set_device(dev)
    torch.backends.cudnn.benchmark = True
    # TF32 for the fp32 run on Ampere and newer, as NVIDIA's TF32 references use it.
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    if h is None:
        h = nvml.handle(uuid=c.device_uuid(torch, index), pci_bus_id=c.device_pci(torch, index))
        r["nvml"] = h is not None
        r["static"] = nvml.static(h) if h is not None else None
    r["name"] = torch.cuda.get_device_name(index)
    r["tf32"] = bool(torch.backends.cuda.matmul.allow_tf32)
    configs = c.configs(torch, index)
    with c.Sampler(nvml, h) as sampler:
        for cfg in configs:
            klass = "amp" if cfg.amp_dtype is not None else cfg.name
            tb = int(train_batch.get(klass, batch))
            ib = int(infer_batch.get(klass, batch))
            c.progress("GPU %d: training %s at batch %d" % (index, cfg.name, tb), phase="train", config=cfg.name)
            entry = {"name": cfg.name, "channels_last": cfg.channels_last,
                     "dtype": "fp32" if cfg.amp_dtype is None else str(cfg.amp_dtype).replace("torch.", ""),
                     "grad_scaler": cfg.amp_dtype is torch.float16}
            trainer = None
            try:
                trainer = c.Trainer(torch, dev, cfg)
                x, y = trainer.batch(tb)
                torch.cuda.reset_peak_memory_stats(dev)
                n, wall, cpu, t0, t1 = c.timed(torch, lambda: trainer.step(x, y), 5 if quick else 10, seconds)
                entry["train"] = {
                    "batch": tb, "iterations": n, "seconds": wall,
                    "images_per_s": n * tb / wall, "cpu_fraction": cpu / wall,
                    "peak_mib": torch.cuda.max_memory_allocated(dev) / 2**20,
                    "nvml": sampler.window(t0, t1),
                }
                if cfg.name != configs[1].name:
                    c.progress("GPU %d: inference %s at batch %d" % (index, cfg.name, ib), phase="infer", config=cfg.name)
                    xi = x if ib == tb else trainer.batch(ib)[0]
                    trainer.model.eval()
                    n, wall, cpu, t0, t1 = c.timed(torch, lambda: trainer.infer(xi), 5, seconds / 2)
                    trainer.model.train()
                    del xi
                    entry["infer"] = {
                        "batch": ib, "iterations": n, "seconds": wall,
                        "images_per_s": n * ib / wall, "cpu_fraction": cpu / wall,
                        "nvml": sampler.window(t0, t1),
                    }
                del x, y
            except Exception as e:
                if c.is_oom(e):
                    entry["error"] = "out of memory at batch %d" % tb
                else:
                    entry["error"] = c.describe(e)
            r["configs"].append(entry)
            if cfg is not configs[1] and a.get("sweep", True) and trainer is not None:
                s = sweep(torch, dev, index, trainer, entry, tb, cap, sweep_seconds, bisect_steps)
                s["config"] = cfg.name
                r["sweep"].append(s)
            trainer = None
            gc.collect()
            torch.cuda.empty_cache()
    c.result(r)


def try_batch(torch, dev, trainer, b, seconds):
    """One point of the curve: ((images/s, peak MiB), None), or (None, why) when batch `b`
    does not run: out of memory, or another limit of the libraries at that size (a tensor past
    32-bit indexing, a cuDNN refusal), which ends the growth the same way."""
    fitted, why = None, None
    try:
        x, y = trainer.batch(b)
        torch.cuda.reset_peak_memory_stats(dev)
        n, wall, _, _, _ = c.timed(torch, lambda: trainer.step(x, y), 2, seconds, min_iters=2)
        fitted = (n * b / wall, torch.cuda.max_memory_allocated(dev) / 2**20)
        del x, y
    except Exception as e:
        why = "out of memory" if c.is_oom(e) else c.describe(e)
    # Outside the except block, so the traceback and the tensors it holds are gone.
    x = y = None
    gc.collect()
    torch.cuda.empty_cache()
    return fitted, why


def sweep(torch, dev, index, trainer, entry, batch, cap, seconds, bisect_steps):
    """Doubles the batch from 32 until it does not fit (or reaches `cap`), then bisects between
    the last batch that fitted and the first that did not."""
    points, largest, smallest_oom, limit = [], None, None, None
    b = 32
    try:
        while b <= cap:
            if b == batch and "train" in entry:
                got = (entry["train"]["images_per_s"], entry["train"]["peak_mib"])
            else:
                c.progress("GPU %d: %s batch %d" % (index, trainer.cfg.name, b), phase="sweep", config=trainer.cfg.name, batch=b)
                got, why = try_batch(torch, dev, trainer, b, seconds)
            if got is None:
                smallest_oom, limit = b, why
                break
            points.append({"batch": b, "images_per_s": got[0], "peak_mib": got[1]})
            largest = b
            b *= 2
        lo, hi = largest, smallest_oom
        for _ in range(bisect_steps if lo and hi else 0):
            mid = (lo + hi) // 2 // 8 * 8
            if mid <= lo:
                break
            c.progress("GPU %d: %s batch %d (bisecting)" % (index, trainer.cfg.name, mid), phase="sweep", config=trainer.cfg.name, batch=mid)
            got, why = try_batch(torch, dev, trainer, mid, seconds)
            if got is None:
                hi, limit = mid, why
            else:
                lo = mid
                points.append({"batch": mid, "images_per_s": got[0], "peak_mib": got[1]})
        largest, smallest_oom = lo, hi
    except Exception as e:
        return {"points": points, "largest_fit": largest, "smallest_oom": smallest_oom,
                "limit": limit, "cap": cap, "error": c.describe(e)}
    points.sort(key=lambda p: p["batch"])
    return {"points": points, "largest_fit": largest, "smallest_oom": smallest_oom, "limit": limit,
            "cap": cap, "total_mib": torch.cuda.get_device_properties(dev).total_memory / 2**20}


if __name__ == "__main__":
    main()
