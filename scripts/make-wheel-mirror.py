#!/usr/bin/env python3
"""Turns a directory of wheels into a static PEP 503 package index that cudaup (and pip) can use,
from a plain directory, file:// or any static HTTP server.

    python3 scripts/make-wheel-mirror.py WHEEL_DIR OUT_DIR

writes OUT_DIR/packages/<wheel> (hard links, else copies) and OUT_DIR/simple/<name>/index.html
with a #sha256= fragment on every link. Then:

    cudaup install --profile cuda-dev --source wheels --index-url OUT_DIR/simple ...

To fill WHEEL_DIR from PyPI (or a PyPI mirror) on a connected machine:

    pip download --no-deps -d WHEEL_DIR nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 \\
        nvidia-nvvm==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 nvidia-cuda-nvrtc==13.0.88
"""
import hashlib
import html
import os
import re
import shutil
import sys
from pathlib import Path


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    packages = out / "packages"
    packages.mkdir(parents=True, exist_ok=True)
    by_name: dict[str, list[tuple[str, str]]] = {}
    for wheel in sorted(src.glob("*.whl")):
        target = packages / wheel.name
        if not target.exists():
            try:
                os.link(wheel, target)
            except OSError:
                shutil.copyfile(wheel, target)
        digest = hashlib.sha256(target.read_bytes()).hexdigest()
        name = normalize(wheel.name.split("-")[0])
        by_name.setdefault(name, []).append((wheel.name, digest))
    simple = out / "simple"
    for name, files in by_name.items():
        page = simple / name
        page.mkdir(parents=True, exist_ok=True)
        links = "\n".join(
            f'<a href="../../packages/{html.escape(f)}#sha256={d}">{html.escape(f)}</a><br/>' for f, d in files
        )
        (page / "index.html").write_text(
            f"<!DOCTYPE html>\n<html><body><h1>Links for {name}</h1>\n{links}\n</body></html>\n"
        )
    index = "\n".join(f'<a href="{n}/">{n}</a><br/>' for n in sorted(by_name))
    simple.mkdir(parents=True, exist_ok=True)
    (simple / "index.html").write_text(f"<!DOCTYPE html>\n<html><body>\n{index}\n</body></html>\n")
    print(f"{sum(len(v) for v in by_name.values())} wheels, {len(by_name)} projects -> {simple}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
