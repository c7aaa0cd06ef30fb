"""cudaup bench, several GPUs: DistributedDataParallel ResNet-50 training (AMP, channels-last,
synthetic data) on every GPU, one process per GPU started the way torchrun starts them
(MASTER_ADDR/MASTER_PORT, RANK, LOCAL_RANK, WORLD_SIZE in each process's environment), NCCL
with NVLink SHARP off. Prints one result line (JSON) with the total images/s."""

import datetime
import json
import os
import socket
import sys
import time

import common as c


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def worker(rank, world, port, batch, seconds, out_dir, warmup):
    os.environ.update({
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": str(rank),
        "LOCAL_RANK": str(rank), "WORLD_SIZE": str(world), "NCCL_NVLS_ENABLE": "0",
    })
    report = {"rank": rank}
    try:
        import torch
        import torch.distributed as dist
        dev = torch.device("cuda", rank)
        torch.cuda.set_device(dev)
        torch.backends.cudnn.benchmark = True
        dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev,
                                timeout=datetime.timedelta(seconds=180))
        cfg = c.configs(torch, rank)[2]
        trainer = c.Trainer(torch, dev, cfg)
        trainer.model = torch.nn.parallel.DistributedDataParallel(
            trainer.model, device_ids=[rank], gradient_as_bucket_view=True)
        trainer.opt = torch.optim.SGD(trainer.model.parameters(), lr=0.1, momentum=0.9)
        x, y = trainer.batch(batch)
        for _ in range(warmup):
            trainer.step(x, y)
        torch.cuda.synchronize()
        dist.barrier()
        t0, n = time.monotonic(), 0
        # Every rank runs the same number of steps: rank 0 decides when to stop.
        flag = torch.zeros(1, device=dev)
        while True:
            trainer.step(x, y)
            n += 1
            if n % 5 == 0:
                if rank == 0 and time.monotonic() - t0 >= seconds:
                    flag.fill_(1)
                dist.broadcast(flag, 0)
                if flag.item() > 0:
                    break
        torch.cuda.synchronize()
        dist.barrier()
        report.update({"steps": n, "seconds": time.monotonic() - t0, "config": cfg.name})
        dist.destroy_process_group()
    except Exception as e:
        report["error"] = c.describe(e)
    with open(os.path.join(out_dir, "rank%d.json" % rank), "w") as f:
        json.dump(report, f)


def main():
    a = c.args()
    r = {"ranks": []}
    try:
        import torch
        import torch.multiprocessing as mp
    except Exception as e:
        r["error"] = c.describe(e)
        c.result(r)
        return
    world = int(a.get("world") or torch.cuda.device_count())
    batch = int(a.get("batch", 256))
    quick = a.get("quick", False)
    seconds = 4.0 if quick else 15.0
    out_dir = a["dir"]
    os.makedirs(out_dir, exist_ok=True)
    r.update({"world": world, "batch_per_gpu": batch, "backend": "nccl",
              "nccl": ".".join(str(v) for v in torch.cuda.nccl.version()),
              "nvls": os.environ.get("NCCL_NVLS_ENABLE")})
    c.progress("DDP on %d GPUs (NCCL %s), batch %d per GPU" % (world, r["nccl"], batch), phase="ddp")
    try:
        mp.spawn(worker, args=(world, free_port(), batch, seconds, out_dir, 5 if quick else 10),
                 nprocs=world, join=True)
    except Exception as e:
        r["error"] = c.describe(e)
    for rank in range(world):
        try:
            with open(os.path.join(out_dir, "rank%d.json" % rank)) as f:
                r["ranks"].append(json.load(f))
        except OSError:
            r["ranks"].append({"rank": rank, "error": "this rank left no report"})
    ok = [x for x in r["ranks"] if "error" not in x]
    if len(ok) == world and world:
        steps, wall = ok[0]["steps"], max(x["seconds"] for x in ok)
        r["config"] = ok[0]["config"]
        r["images_per_s"] = steps * batch * world / wall
    elif "error" not in r:
        r["error"] = next(x["error"] for x in r["ranks"] if "error" in x)
    c.result(r)


if __name__ == "__main__":
    sys.exit(main())
