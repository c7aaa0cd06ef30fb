"""Compares a `cudaup monitor --json` recording with `nvidia-smi dmon` sampled beside it (issue 44).

    TZ=UTC nvidia-smi dmon -s pum -o DT -d 1 > dmon.txt &   # beside
    cudaup monitor --json -- python train.py > run.jsonl
    python scripts/h200-monitor-compare.py run.jsonl dmon.txt

Both are read over the monitor's active window (from its first sample with work on the GPU, the
rule src/monitor/summary.rs applies, to its last sample): utilisation mean (dmon's `sm`, the
same NVML reading as nvidia-smi's GPU-Util), memory peak (dmon's `fb`) and power mean (`pwr`),
each with the difference relative to dmon's. Prints a table and, last, one JSON line. Exit 0
when every figure is within 5% (or, for utilisation, 5 percentage points where 5% of a small
mean is less than one step of a 1 s sampler), 1 otherwise.
"""

import datetime as dt
import json
import sys


def monitor(path):
    samples, summary = [], None
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if r.get("kind") == "sample":
            samples.append(r)
        elif r.get("kind") == "summary":
            summary = r
    active = next(
        (
            i
            for i, s in enumerate(samples)
            if any(
                (g.get("util_gpu") or 0) > 0 or any(p.get("watched") for p in g.get("processes") or [])
                for g in s["gpus"]
            )
        ),
        0,
    )
    return samples, active, summary


def dmon(path):
    names, rows = None, []
    for line in open(path):
        if line.startswith("#"):
            if names is None:
                names = line[1:].split()
            continue
        parts = line.split()
        if not names or len(parts) != len(names):
            continue
        r = dict(zip(names, parts))
        when = dt.datetime.strptime(r["Date"] + r["Time"], "%Y%m%d%H:%M:%S").replace(tzinfo=dt.timezone.utc)
        r["unix"] = when.timestamp()
        rows.append(r)
    return rows


def num(v):
    try:
        return float(v)
    except ValueError:
        return None


def main():
    samples, active, summary = monitor(sys.argv[1])
    rows = dmon(sys.argv[2])
    start = samples[active]["unix_ms"] / 1000 - 0.5
    end = samples[-1]["unix_ms"] / 1000 + 0.5
    window = [r for r in rows if start <= r["unix"] <= end and r.get("gpu") == "0"]
    g = summary["gpus"][0]
    d_util = [x for x in (num(r["sm"]) for r in window) if x is not None]
    d_fb = [x for x in (num(r["fb"]) for r in rows if r.get("gpu") == "0" and start <= r["unix"] <= end) if x is not None]
    d_pwr = [x for x in (num(r["pwr"]) for r in window) if x is not None]
    figures = [
        ("utilisation mean, %", g["util_mean"], sum(d_util) / len(d_util), 5.0),
        ("memory peak, MiB", g["mem_peak_mib"], max(d_fb), None),
        ("power mean, W", g["power_mean_w"], sum(d_pwr) / len(d_pwr), None),
    ]
    ok = True
    out = {"window_s": round(end - start, 1), "monitor_samples": len(samples) - active, "dmon_samples": len(window), "figures": []}
    print(f"window: {end - start:.0f} s; monitor {len(samples) - active} samples, dmon {len(window)}")
    print(f"{'':22} {'monitor':>10} {'dmon':>10} {'diff':>8}")
    for name, m, d, points in figures:
        rel = abs(m - d) / d if d else (0.0 if m == d else float("inf"))
        good = rel <= 0.05 or (points is not None and abs(m - d) <= points)
        ok &= good
        print(f"{name:22} {m:10.1f} {d:10.1f} {100 * rel:7.1f}% {'ok' if good else 'OFF'}")
        out["figures"].append({"name": name, "monitor": round(m, 2), "dmon": round(d, 2), "rel_diff": round(rel, 4), "ok": good})
    out["verdicts"] = [v["kind"] for v in summary["verdicts"]]
    out["ok"] = ok
    print(json.dumps(out))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
