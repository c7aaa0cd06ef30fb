"""cudaup bench, input pipeline: writes a CIFAR-10-shaped dataset (32x32 RGB PNGs, 10 classes,
ImageFolder layout) to a directory, then trains ResNet-50 (AMP, channels-last) from it through a
real DataLoader at 0, 2, 4, ... workers while NVML samples the GPU's utilisation; the ceiling is
the same step on batches already on the GPU."""

import os
import time

import common as c


def write_dataset(root, count):
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(0)
    per_class = count // 10
    for k in range(10):
        d = os.path.join(root, "class%d" % k)
        os.makedirs(d, exist_ok=True)
        # A smooth colour field plus noise: PNG sizes like CIFAR's photos, not incompressible noise.
        base = rng.integers(0, 256, size=(1, 1, 3))
        for i in range(per_class):
            ramp = np.linspace(0, 64, 32, dtype=np.float32)[None, :, None]
            img = np.clip(base + ramp + rng.normal(0, 24, size=(32, 32, 3)), 0, 255).astype(np.uint8)
            Image.fromarray(img, "RGB").save(os.path.join(d, "%05d.png" % i), compress_level=1)
    return per_class * 10


def main():
    a = c.args()
    r = {"index": a.get("index", 0), "runs": [], "errors": []}
    try:
        import torch
        import torchvision
        from torchvision import transforms
    except Exception as e:
        r["error"] = c.describe(e)
        c.result(r)
        return
    index = r["index"]
    quick = a.get("quick", False)
    root = a["dir"]
    count = int(a.get("images", 20000 if quick else 50000))
    batch = int(a.get("batch", 256))
    seconds = 4.0 if quick else 10.0
    workers = a.get("workers") or default_workers(r)
    dev = torch.device("cuda", index)
    torch.cuda.set_device(dev)
    torch.backends.cudnn.benchmark = True
    c.progress("writing %d CIFAR-10-shaped images to %s" % (count, root), phase="loader")
    t = time.monotonic()
    r["images"] = write_dataset(root, count)
    r["write_seconds"] = time.monotonic() - t
    r["bytes"] = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(root) for f in fs)
    uuid = c.device_uuid(torch, index)
    nvml = c.Nvml()
    h = nvml.handle(uuid=uuid, pci_bus_id=c.device_pci(torch, index))
    r["nvml"] = h is not None
    cfg = c.configs(torch, index)[2]
    r["config"] = cfg.name
    trainer = c.Trainer(torch, dev, cfg, num_classes=10, image=32)
    tf = transforms.Compose([
        transforms.RandomCrop(32, padding=4),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)),
    ])
    data = torchvision.datasets.ImageFolder(root, transform=tf)
    with c.Sampler(nvml, h) as sampler:
        c.progress("GPU %d: ceiling (batches already on the GPU)" % index, phase="loader")
        x, y = trainer.batch(batch)
        n, wall, _, t0, t1 = c.timed(torch, lambda: trainer.step(x, y), 5, seconds)
        r["ceiling"] = {"images_per_s": n * batch / wall, "nvml": sampler.window(t0, t1)}
        del x, y
        for w in workers:
            c.progress("GPU %d: DataLoader with %d worker(s)" % (index, w), phase="loader", workers=w)
            try:
                r["runs"].append(run_loader(torch, trainer, data, batch, w, seconds, sampler))
            except Exception as e:
                r["errors"].append("%d workers: %s" % (w, c.describe(e)))
    c.result(r)


def default_workers(r):
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    r["cpu_count"] = cpus
    out, w = [0, 2, 4], 8
    while w <= cpus:
        out.append(w)
        w *= 2
    if cpus not in out and cpus > 4:
        out.append(cpus)
    return [w for w in out if w <= max(cpus, 2)]


def run_loader(torch, trainer, data, batch, workers, seconds, sampler):
    loader = torch.utils.data.DataLoader(
        data, batch_size=batch, shuffle=True, drop_last=True, num_workers=workers,
        pin_memory=True, persistent_workers=workers > 0,
        prefetch_factor=4 if workers > 0 else None,
    )
    cl = torch.channels_last

    def batches():
        while True:
            for x, y in loader:
                yield x, y

    it = batches()
    for _ in range(3):  # worker start-up and cuDNN's choice of algorithms
        x, y = next(it)
        trainer.step(x.to(trainer.device, non_blocking=True).contiguous(memory_format=cl),
                     y.to(trainer.device, non_blocking=True))
    torch.cuda.synchronize()
    t0, n = time.monotonic(), 0
    while n < 3 or time.monotonic() - t0 < seconds:
        x, y = next(it)
        trainer.step(x.to(trainer.device, non_blocking=True).contiguous(memory_format=cl),
                     y.to(trainer.device, non_blocking=True))
        n += 1
    torch.cuda.synchronize()
    t1 = time.monotonic()
    del it, loader
    return {"workers": workers, "images_per_s": n * batch / (t1 - t0), "batches": n,
            "nvml": sampler.window(t0, t1)}


if __name__ == "__main__":
    main()
