#!/usr/bin/env python3
"""Packs distributions installed in a Python environment back into wheels, for a machine that
has them installed but cannot reach an index (the H200 proof: its image holds torch and JAX, and
nothing can be fetched there).

    wheels-from-venv.py SITE_PACKAGES OUT_DIR NAME [NAME...]

For each NAME (a distribution, or `NAME[extra]` to take the distributions its extra requires as
well, recursively, with their own requirements), reads `NAME-VERSION.dist-info/RECORD` and
writes OUT_DIR/NAME-VERSION-TAG.whl holding every file the RECORD lists under SITE_PACKAGES
(scripts and data outside it are left out) plus the dist-info, stored uncompressed (a proof
machine has the disk, not the time to deflate gigabytes). The tag is the dist-info's WHEEL
`Tag:` lines, compressed. The files are the installed ones: a rebuilt wheel's sha256 is not the index's, so such a
folder proves an install path, never a download's integrity. Prints one line per wheel.
"""
from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def dist_infos(site: Path) -> dict[str, Path]:
    out = {}
    for d in site.glob("*.dist-info"):
        name = d.name[: -len(".dist-info")].rsplit("-", 1)[0]
        out[normalize(name)] = d
    return out


def marker_class():
    """PEP 508 markers: `packaging`'s evaluator, or the copy pip vendors (every venv has pip)."""
    try:
        from packaging.markers import Marker
    except ImportError:
        from pip._vendor.packaging.markers import Marker
    return Marker


def requirements(info: Path, extras: set[str]) -> list[tuple[str, set[str]]]:
    """The distributions METADATA requires on this platform, with those of `extras`.

    Each marker is evaluated (a regex cannot: `sys_platform == 'linux' or sys_platform ==
    'win32'` holds on Linux), once without an extra and once per requested extra."""
    marker_of = marker_class()
    out = []
    for line in (info / "METADATA").read_text(errors="replace").splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        req, _, marker = line[len("Requires-Dist:") :].partition(";")
        m = re.match(r"\s*([A-Za-z0-9._-]+)\s*(\[([^\]]*)\])?", req)
        if not m:
            continue
        marker = marker.strip()
        if marker:
            wanted = marker_of(marker)
            if not any(wanted.evaluate({"extra": e}) for e in [""] + sorted(extras)):
                continue
        sub = {e.strip() for e in (m.group(3) or "").split(",") if e.strip()}
        out.append((normalize(m.group(1)), sub))
    return out


def pack(site: Path, info: Path, out: Path) -> Path:
    meta = (info / "METADATA").read_text(errors="replace")
    name = re.search(r"^Name:\s*(\S+)", meta, re.M).group(1)
    version = re.search(r"^Version:\s*(\S+)", meta, re.M).group(1)
    # Every `Tag:` line, compressed back into the file name's tag set (`py2.py3-none-any`):
    # the first alone would make a py2.py3 wheel a py2 one, which no CPython 3 installs.
    tags = re.findall(r"^Tag:\s*(\S+)", (info / "WHEEL").read_text(), re.M)
    parts = [t.split("-") for t in tags]
    tag = "-".join(
        ".".join(dict.fromkeys(p[i] for p in parts)) for i in range(3)
    )
    wheel = out / f"{re.sub(r'[-.]+', '_', name)}-{version}-{tag}.whl"
    members = []
    for row in (info / "RECORD").read_text().splitlines():
        path = row.rsplit(",", 2)[0].strip('"')
        if not path or path.startswith("..") or path.startswith("/"):
            continue
        if (site / path).is_file():
            members.append(path)
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as z:
        for m in members:
            z.write(site / m, m)
    return wheel


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    site, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    infos = dist_infos(site)
    todo: list[tuple[str, set[str]]] = []
    for arg in sys.argv[3:]:
        m = re.match(r"([^\[]+)(\[(.*)\])?$", arg)
        todo.append((normalize(m.group(1)), set(filter(None, (m.group(3) or "").split(",")))))
    # A name is packed once, but walked again whenever it is required with an extra not yet
    # followed (torch requires `cuda-toolkit[cudart]`, `cuda-toolkit[cublas]`, … one per line).
    followed: dict[str, set[str]] = {}
    missing = []
    while todo:
        name, extras = todo.pop()
        info = infos.get(name)
        if info is None:
            if name not in missing:
                missing.append(name)
            continue
        if name not in followed:
            wheel = pack(site, info, out)
            print(f"{wheel.name} ({wheel.stat().st_size >> 20} MiB)")
            followed[name] = set()
            todo.extend(requirements(info, extras))
        elif not extras <= followed[name]:
            todo.extend(requirements(info, extras - followed[name]))
        followed[name] |= extras
    for m in missing:
        print(f"not installed here: {m}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
