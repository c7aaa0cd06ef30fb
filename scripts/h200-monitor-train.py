"""ResNet-50 training fed by a real JPEG pipeline, for `cudaup monitor -- python ...` (issue 44).

The data is what an ImageNet loader does per image: decode a JPEG (PIL), RandomResizedCrop to
224, flip, to a tensor, normalise. The JPEGs are made at start (photo-like: smooth gradients
with noise, 375x500 like ImageNet's median) so nothing is downloaded. With --workers 0 the main
process decodes every image itself and the GPU waits (input-bound); with --workers 8 the
DataLoader's processes keep it fed. Training is fp32 with TF32 and channels-last, so the GPU's
rate (about 1,000-1,500 images/s on an H200) is within what 8 workers decode.

    python scripts/h200-monitor-train.py --workers 0 --seconds 40
"""

import argparse
import io
import time

import numpy as np
import torch
import torchvision
import torchvision.transforms as T
from PIL import Image


class Jpegs(torch.utils.data.Dataset):
    def __init__(self, count: int, distinct: int = 64, h: int = 375, w: int = 500):
        rng = np.random.default_rng(0)
        yy, xx = np.mgrid[0:h, 0:w]
        self.blobs = []
        for i in range(distinct):
            base = np.stack(
                [(xx * (i + 1) % 256), (yy * (i + 3) % 256), ((xx + yy) * (i + 5) % 256)], -1
            ).astype(np.float32)
            img = np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)
            buf = io.BytesIO()
            Image.fromarray(img).save(buf, format="JPEG", quality=90)
            self.blobs.append(buf.getvalue())
        self.count = count
        self.tf = T.Compose(
            [
                T.RandomResizedCrop(224),
                T.RandomHorizontalFlip(),
                T.ToTensor(),
                T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
            ]
        )

    def __len__(self):
        return self.count

    def __getitem__(self, i):
        img = Image.open(io.BytesIO(self.blobs[i % len(self.blobs)])).convert("RGB")
        return self.tf(img), i % 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--jpeg", default="375x500", help="the JPEGs' size, HxW (smaller decodes faster)")
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    dev = torch.device("cuda")
    model = torchvision.models.resnet50().to(dev).to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    h, w = (int(v) for v in a.jpeg.split("x"))
    data = Jpegs(count=10**7, h=h, w=w)
    loader = torch.utils.data.DataLoader(
        data,
        batch_size=a.batch,
        shuffle=False,
        num_workers=a.workers,
        pin_memory=True,
        persistent_workers=a.workers > 0,
        prefetch_factor=4 if a.workers > 0 else None,
    )
    began = time.time()
    images = 0
    steps = 0
    for x, y in loader:
        x = x.to(dev, non_blocking=True).to(memory_format=torch.channels_last)
        y = y.to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        images += x.shape[0]
        steps += 1
        if steps % 20 == 0:
            torch.cuda.synchronize()
            if time.time() - began >= a.seconds:
                break
    torch.cuda.synchronize()
    took = time.time() - began
    print(
        f"workers={a.workers} batch={a.batch}: {steps} steps, {images} images in {took:.1f} s "
        f"= {images / took:.0f} images/s, loss {loss.item():.3f}, "
        f"peak memory {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB allocated",
        flush=True,
    )


if __name__ == "__main__":
    main()
