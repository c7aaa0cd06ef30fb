"""An independent ResNet-50 measurement to hold `cudaup bench` against (issue 44, step 5).

No published per-GPU ResNet-50 figure exists for the H200 (manifests/bench.toml leaves it out),
so the reference is measured beside bench on the same GPU by this script, written apart from
bench's code: torchvision's ResNet-50, synthetic batches on the GPU, timed with CUDA events over
50 steps after 20 warm-ups (bench times with the wall clock over about 3 s). Rows: training and
inference in AMP bf16 channels-last, training and inference in TF32 (NCHW, as bench's `tf32`
row), and training in TF32 channels-last (a row bench does not measure, for the record).

    python scripts/h200-bench-reference.py > reference.json
    python scripts/h200-bench-reference.py --compare bench/report.json reference.json
"""

import json
import sys


def measure():
    import torch
    import torchvision

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    dev = torch.device("cuda")
    rows = []
    for name, dtype, cl in [
        ("amp_bf16_cl", torch.bfloat16, True),
        ("tf32", None, False),
        ("tf32_cl", None, True),
    ]:
        model = torchvision.models.resnet50().to(dev)
        fmt = torch.channels_last if cl else torch.contiguous_format
        model = model.to(memory_format=fmt)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        loss_fn = torch.nn.CrossEntropyLoss()
        x = torch.randn(256, 3, 224, 224, device=dev).contiguous(memory_format=fmt)
        y = torch.randint(0, 1000, (256,), device=dev)

        def train():
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
                loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()

        def infer():
            with torch.inference_mode(), torch.autocast(
                "cuda", dtype=dtype or torch.float32, enabled=dtype is not None
            ):
                model(x)

        for workload, fn in [("train", train), ("infer", infer)]:
            if name == "tf32_cl" and workload == "infer":
                continue
            model.train(workload == "train")
            for _ in range(20):
                fn()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            for _ in range(50):
                fn()
            end.record()
            torch.cuda.synchronize()
            ms = start.elapsed_time(end)
            rows.append({"config": name, "workload": workload, "batch": 256,
                         "images_per_s": 50 * 256 / (ms / 1000)})
            print(f"{name:12} {workload:6} {rows[-1]['images_per_s']:9.0f} images/s", file=sys.stderr)
        del model, opt, x, y
        torch.cuda.empty_cache()
    print(json.dumps({"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": rows}))


def compare(report_path, reference_path):
    report = json.load(open(report_path))
    ref = json.load(open(reference_path))
    bench = {}
    for cfg in report["gpus"][0]["measured"]["configs"]:
        for workload in ("train", "infer"):
            if cfg.get(workload):
                bench[(cfg["name"], workload)] = cfg[workload]["images_per_s"]
    ok = True
    print(f"{'row':26} {'bench':>9} {'reference':>10} {'bench/ref':>10}")
    for r in ref["rows"]:
        key = (r["config"], r["workload"])
        label = f"{r['workload']} {r['config']}"
        if key not in bench:
            print(f"{label:26} {'—':>9} {r['images_per_s']:10.0f}   (bench has no such row)")
            continue
        ratio = bench[key] / r["images_per_s"]
        good = 0.9 <= ratio <= 1.1
        ok &= good
        print(f"{label:26} {bench[key]:9.0f} {r['images_per_s']:10.0f} {ratio:10.3f} {'within ±10%' if good else 'OUTSIDE ±10%'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        measure()
