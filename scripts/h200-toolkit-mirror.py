#!/usr/bin/env python3
"""The wheel mirror of scripts/h200-toolkit-proof.sh: staged here, rebuilt on a machine without
network from what it already has.

    h200-toolkit-mirror.py stage CARRY_DIR REPO RELEASE
        (where PyPI is reachable) for every wheel of RELEASE's `standard` set in
        REPO/manifests/components.toml: the real wheel when the device lacks it and it fits the
        budget (smallest first, $CARRY_BUDGET_MIB, default 24), else a "slim" wheel: the real
        wheel's dist-info and every member under 1 MiB or deflating under 256 KiB, verbatim
        (headers, nvcc.profile, ...).
        Wheels come from $NVIDIA_WHEEL_CACHE or REPO/target/tmp/nvidia-wheels (laid out
        by-sha256/<sha256>/<file>, as tests/it/toolkit.rs caches them), else from PyPI.
    h200-toolkit-mirror.py rebuild CARRY_DIR SITE_PACKAGES SYSTEM_CUDA WHEEL_DIR
        (on the device) writes WHEEL_DIR/<wheel>.whl for each staged wheel: a carried one as is
        (checked against PyPI's sha256), a slim one completed with its large members found in
        SITE_PACKAGES (where torch's NVIDIA wheels are installed) or SYSTEM_CUDA, each matched
        by name and size and checked against the sha256 in the wheel's RECORD. cuDNN is rebuilt
        from the venv's own dist-info (torch's pin). Prints how each wheel was made; a member
        found nowhere with the right bytes but present by name is taken and counted (its RECORD
        row then names the bytes taken), one found nowhere leaves that wheel out (summary.json).

The devices this is for: see /work/brief/DEVICE-FACTS.md (torch 2.11.0+cu130's venv holds
CUDA 13.0.2's cuBLAS, cuFFT, cuRAND, cuSOLVER, cuSPARSE, nvJitLink, CUPTI, NVTX, NVRTC, the
runtime, cuFile and cuDNN 9.19; /usr/local/cuda-13.0 is NVIDIA's CUDA 13.0.2 toolkit).
"""
from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import shutil
import sys
import tomllib
import urllib.request
import zipfile
from pathlib import Path

SMALL = 1 << 20  # members under this travel verbatim in a slim wheel,
SMALL_PACKED = 256 << 10  # and so do those that deflate under this (large headers: cuda.h)
# The wheels the device's torch venv has (DEVICE-FACTS.md); $ON_DEVICE overrides (comma list).
ON_DEVICE = ("nvidia-cublas,nvidia-cufft,nvidia-curand,nvidia-cusolver,nvidia-cusparse,"
             "nvidia-nvjitlink,nvidia-cuda-cupti,nvidia-nvtx,nvidia-cuda-nvrtc,"
             "nvidia-cuda-runtime,nvidia-cufile")


def b64digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()


def standard_pins(repo: Path, release: str) -> list[tuple[str, str]]:
    doc = tomllib.loads((repo / "manifests/components.toml").read_text())
    comps = {c["name"]: c for c in doc["component"]}
    sets = {s["name"]: s for s in doc["set"]}

    def members(name: str) -> list[str]:
        s = sets[name]
        out = members(s["includes"]) if s.get("includes") else []
        return out + [c for c in s["components"] if c not in out]

    pins = next(w for w in doc["wheels"] if w["cuda"] == release)["packages"]
    return [(comps[c]["wheel"], pins[comps[c]["wheel"]]["version"]) for c in members("standard")
            if comps[c].get("wheel") in pins and pins[comps[c]["wheel"]].get("x86_64")]


def pypi_file(pkg: str, version: str) -> dict:
    req = urllib.request.Request(f"https://pypi.org/simple/{pkg}/",
                                 headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        files = json.load(r)["files"]
    hits = [f for f in files if f["filename"].endswith("_x86_64.whl")
            and "manylinux" in f["filename"] and f["filename"].split("-")[1] == version]
    if not hits:
        sys.exit(f"error: PyPI has no x86_64 wheel of {pkg} {version}")
    return hits[-1]


def stage(carry: Path, repo: Path, release: str) -> int:
    caches = [Path(p) for p in os.environ.get("NVIDIA_WHEEL_CACHE", "").split(":") if p]
    caches.append(repo / "target/tmp/nvidia-wheels")
    on_device = set(os.environ.get("ON_DEVICE", ON_DEVICE).split(","))
    budget = float(os.environ.get("CARRY_BUDGET_MIB", "24")) * 2**20
    shutil.rmtree(carry, ignore_errors=True)
    (carry / "wheels").mkdir(parents=True)
    (carry / "slim").mkdir()
    found = []
    for pkg, version in standard_pins(repo, release):
        f = pypi_file(pkg, version)
        sha = f["hashes"]["sha256"]
        path = next((c / "by-sha256" / sha / f["filename"] for c in caches
                     if (c / "by-sha256" / sha / f["filename"]).is_file()), None)
        if path is None:
            path = caches[-1] / "by-sha256" / sha / f["filename"]
            path.parent.mkdir(parents=True, exist_ok=True)
            print(f"downloading {f['filename']} ({f['size'] / 2**20:.1f} MiB)", file=sys.stderr)
            with urllib.request.urlopen(f["url"], timeout=600) as r, open(path, "wb") as out:
                shutil.copyfileobj(r, out, 1 << 20)
        if hashlib.sha256(path.read_bytes()).hexdigest() != sha:
            sys.exit(f"error: {path} does not hash to PyPI's sha256 {sha}")
        found.append((pkg, version, f, path))
    index = []
    spent = 0
    for pkg, version, f, path in sorted(found, key=lambda t: t[2]["size"]):
        entry = {"package": pkg, "version": version, "wheel": f["filename"],
                 "sha256": f["hashes"]["sha256"], "size": f["size"], "url": f["url"]}
        if pkg not in on_device and spent + f["size"] <= budget:
            shutil.copyfile(path, carry / "wheels" / f["filename"])
            spent += f["size"]
            entry["how"] = "wheel"
        else:
            with zipfile.ZipFile(path) as z, \
                    zipfile.ZipFile(carry / "slim" / f["filename"], "w",
                                    zipfile.ZIP_DEFLATED) as slim:
                def small(i: zipfile.ZipInfo) -> bool:
                    return (i.file_size < SMALL or i.compress_size < SMALL_PACKED
                            or ".dist-info/" in i.filename)
                for info in z.infolist():
                    if small(info):
                        slim.writestr(info, z.read(info), zipfile.ZIP_DEFLATED)
                entry["big"] = {i.filename: (i.external_attr >> 16) & 0o7777
                                for i in z.infolist() if not small(i)}
            entry["how"] = "slim"
        index.append(entry)
    (carry / "wheels.json").write_text(json.dumps({"cuda": release, "wheels": index}, indent=1))
    total = sum(p.stat().st_size for p in carry.rglob("*") if p.is_file())
    real = [e["package"] for e in index if e["how"] == "wheel"]
    print(f"{carry}: {total / 2**20:.1f} MiB — {len(real)} real wheel(s) "
          f"({spent / 2**20:.1f} MiB: {', '.join(real)}), {len(index) - len(real)} slim")
    return 0


def read_record(text: str) -> list[list[str]]:
    return [r for r in csv.reader(io.StringIO(text)) if r]


def record_text(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


class Finder:
    """Files of the system toolkit and the venv's nvidia/ tree, by (basename, size); symlinks
    resolved, so a wheel's `libnppc.so.13` finds the toolkit's `libnppc.so.13.0.1.2`."""

    def __init__(self, roots: list[Path]):
        self.by = {}
        for root in roots:
            for d, _dirs, files in os.walk(root):
                for n in files:
                    p = Path(d) / n
                    try:
                        real = p.resolve(strict=True)
                        size = real.stat().st_size
                    except OSError:
                        continue
                    self.by.setdefault((n, size), set()).add(real)
                    self.by.setdefault((n, None), set()).add(real)

    def exact(self, name: str, size: int, digest: str, first: list[Path]) -> Path | None:
        for c in first + sorted(self.by.get((name, size), ())):
            if c.is_file() and c.stat().st_size == size and b64digest(c) == digest:
                return c
        return None

    def loose(self, name: str) -> Path | None:
        hits = sorted(self.by.get((name, None), ()))
        return hits[0] if hits else None


def where(p: Path, site: Path, system: Path) -> str:
    return "the venv" if p.is_relative_to(site) else str(system) if p.is_relative_to(system) \
        else str(p.parent)


def rebuild(carry: Path, site: Path, system: Path, dest: Path) -> int:
    spec = json.loads((carry / "wheels.json").read_text())
    site, system = site.resolve(), system.resolve()
    dest.mkdir(parents=True, exist_ok=True)
    finder = Finder([system, site / "nvidia"])
    summary = {"carried": [], "rebuilt": [], "missing": [], "differing": {}}

    def write(name: str, members: list, record_name: str, record: str,
              attr: int = 0o100644 << 16) -> None:
        """members: (ZipInfo, bytes | Path); the wheel is stored, not deflated (fast)."""
        with zipfile.ZipFile(dest / name, "w", zipfile.ZIP_STORED) as z:
            for info, src in members:
                info.compress_type = zipfile.ZIP_STORED
                if isinstance(src, bytes):
                    z.writestr(info, src)
                else:
                    with open(src, "rb") as fh, z.open(info, "w") as zf:
                        shutil.copyfileobj(fh, zf, 1 << 20)
            info = zipfile.ZipInfo(record_name, (2025, 10, 9, 0, 0, 0))
            info.external_attr = attr
            z.writestr(info, record)

    for w in spec["wheels"]:
        name = w["wheel"]
        if w["how"] == "wheel":
            src = carry / "wheels" / name
            if hashlib.sha256(src.read_bytes()).hexdigest() != w["sha256"]:
                print(f"  {name}: the carried wheel does not hash to PyPI's sha256: left out")
                summary["missing"].append(w["package"])
                continue
            shutil.copyfile(src, dest / name)
            print(f"  {name}: PyPI's wheel, carried ({w['size'] / 2**20:.2f} MiB)")
            summary["carried"].append(w["package"])
            continue
        with zipfile.ZipFile(carry / "slim" / name) as slim:
            infos = {i.filename: i for i in slim.infolist()}
            record_name = next(n for n in infos if n.endswith(".dist-info/RECORD"))
            record = slim.read(record_name).decode()
            rows = read_record(record)
            members, missing, differing, exact = [], [], [], 0
            for row in rows:
                path = row[0]
                if path == record_name:
                    continue
                if path in infos:
                    members.append((infos[path], slim.read(path)))
                    continue
                digest, size = row[1].split("=", 1)[1], int(row[2])
                base = path.rsplit("/", 1)[-1]
                hit = finder.exact(base, size, digest, [site / path])
                if hit is None:
                    hit = finder.loose(base)
                    if hit is None:
                        missing.append(path)
                        continue
                    differing.append(f"{path} ({where(hit, site, system)}: {hit.name})")
                    row[1], row[2] = "sha256=" + b64digest(hit), str(hit.stat().st_size)
                else:
                    exact += 1
                info = zipfile.ZipInfo(path, (2025, 10, 9, 0, 0, 0))
                info.external_attr = (0o100000 | w["big"].get(path, 0o755)) << 16
                members.append((info, hit))
                summary.setdefault("from", {}).setdefault(name, set()).add(
                    where(hit, site, system))
        if missing:
            print(f"  {name}: cannot be rebuilt, {len(missing)} member(s) found nowhere "
                  f"(first: {missing[0]}): left out")
            summary["missing"].append(w["package"])
            continue
        # PyPI's RECORD as it is, unless a member's bytes differ (then its row names them).
        write(name, members, record_name, record_text(rows) if differing else record,
              infos[record_name].external_attr)
        src = " + ".join(sorted(summary.get("from", {}).get(name, ()))) or "the slim wheel alone"
        print(f"  {name}: rebuilt, {len(members) - len(differing)} of {len(members)} member(s) "
              f"byte-identical to PyPI's wheel ({exact} large one(s) from {src})"
              + (f"; {len(differing)} taken by name with other bytes: {'; '.join(differing)}"
                 if differing else ""))
        summary["rebuilt"].append(w["package"])
        if differing:
            summary["differing"][w["package"]] = differing

    # cuDNN: torch's pin, from the venv's dist-info; pip's RECORD is the wheel's plus pip's files.
    for d in sorted(site.glob("nvidia_cudnn_cu13-*.dist-info")):
        lines = (d / "WHEEL").read_text().splitlines()
        tag = next(x.split(":", 1)[1].strip() for x in lines if x.startswith("Tag:"))
        dist, version = d.name[: -len(".dist-info")].split("-")
        name = f"{dist}-{version}-{tag}.whl"
        record_name = f"{d.name}/RECORD"
        members, rows, bad = [], [], []
        for row in read_record((d / "RECORD").read_text()):
            path = row[0]
            if path == record_name or "__pycache__" in path or path.startswith("..") or \
                    path.endswith((".dist-info/INSTALLER", ".dist-info/REQUESTED",
                                   ".dist-info/direct_url.json")):
                continue
            src = site / path
            if not row[1] or not src.is_file() or b64digest(src) != row[1].split("=", 1)[1]:
                bad.append(path)
                continue
            info = zipfile.ZipInfo(path, (2025, 10, 9, 0, 0, 0))
            info.external_attr = (0o100000 | (src.stat().st_mode & 0o777)) << 16
            members.append((info, src))
            rows.append(row)
        if bad:
            print(f"  {name}: {len(bad)} installed file(s) differ from the RECORD "
                  f"(first: {bad[0]}): left out")
            summary["missing"].append("nvidia-cudnn-cu13")
            continue
        write(name, members, record_name, record_text(rows + [[record_name, "", ""]]))
        print(f"  {name}: rebuilt from the venv's installed wheel, {len(members)} member(s) "
              "each matching its RECORD")
        summary["rebuilt"].append("nvidia-cudnn-cu13")
    summary.pop("from", None)
    (dest / "summary.json").write_text(json.dumps(summary, indent=1))
    return 0


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "stage":
        return stage(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4])
    if len(sys.argv) == 6 and sys.argv[1] == "rebuild":
        return rebuild(*map(Path, sys.argv[2:6]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
