#!/usr/bin/env python3
"""Generate manifests/gpus.toml: NVIDIA PCI device id -> GPU chip -> architecture
and CUDA compute capability.

Usage:
    python3 scripts/gen_gpus_table.py [PATH/TO/pci.ids] [--output FILE]

Inputs (real data only):
  * The PCI ID database (https://pci-ids.ucw.cz/). Without an argument the
    script uses the copy shipped in the crates.io package pci-ids 0.2.6
    (~/.cargo/registry/src/*/pci-ids-0.2.6/pciids/pci.ids, pci.ids 2025-07-11),
    then /usr/share/misc/pci.ids, then /usr/share/hwdata/pci.ids.
  * The CHIPS table below: chip codename -> architecture + compute capability.
    pci.ids device names start with the chip codename ("2204  GA102 [GeForce
    RTX 3090]"); each CHIPS row cites the NVIDIA compute-capability list and
    the product(s) that pin the chip (the product is named with that chip in
    pci.ids). Sources:
      [GPUS]      https://developer.nvidia.com/cuda-gpus (current revision)
      [GPUS-2022] the same page, 2022 revision, copied in
                  https://blog.csdn.net/HaoZiHuang/article/details/125834480
                  (Tesla/Quadro/data-center lists: K10/K20/K40/K80, Quadro Kxxxx,
                  T4, T1000/T600/T400, Quadro RTX, A100/A30)
      [GPUS-2017] the same page, 2017 revision, copied in
                  https://cnblogs.com/ahuo/p/6904820.html and
                  https://gist.github.com/zachnicoll/f404a070611ccffda607bc65e4636d8f
                  (GeForce lists: GTX 6xx/7xx/TITAN, GT 730, RTX 20xx)
      [LEGACY]    https://developer.nvidia.com/cuda-legacy-gpus (Maxwell..Volta)
      [WIKI]      Wikipedia "CUDA", table "GPUs supported" (chip codename per
                  compute capability); used as a cross-check of every row and
                  as the only chip<->product link for GB102, GB110 and GB20B.
      [NIX]       NixOS/nixpkgs pkgs/development/cuda-modules/gpus.nix
                  (10.0 = "NVIDIA B100"; 6.1 = "GTX 1030 (GP108)")

Matching: only vendor 10de devices whose name starts with a CHIPS codename,
optionally followed by a pci.ids variant suffix (GL = workstation/data-center,
M / GLM = mobile, BM = mobile refresh), then end of name, " " or "[".
Functions that are not GPUs (HD Audio, USB, UCSI, NVSwitch, bridges and
controllers) are dropped even when their name starts with a chip codename.

Deliberately NOT mapped (no device rows are emitted for them):
  * Pre-Kepler chips (Tesla G8x/G9x/GT2xx, Fermi GF1xx, NV*) and chipsets
    (nForce, MCP*, C5x/C6x/C7x, CK804): out of scope.
  * GK11x   (0fa0/0fa5/0fa7: FPGA, emulation and "Tegra on x86" ids; no
             product and no compute-capability source).
  * GB120   (3340: no product named in pci.ids; codename in no CC table).
  * GB6-128 / GB6-256 (2d2c/2c2c: engineering-sample ids; codename in no
             CC table).
  * TA1090SA [THOR] (2b00: Jetson Thor SoC function; not a codename of any
             CC table, and Thor's CC was renumbered 10.1 -> 11.0 in CUDA 13).
  * Integrated Tegra GPUs GK20A (3.2), GM20B (5.3), GP10B (6.2), GV10B (7.2),
    GA10B (8.7), GB10B (11.0): they have no GPU entry in pci.ids (only
    Tegra/Parker/Xavier/Orin/THOR bridge and controller functions), so
    nothing to map.
  * "GK10x" (3.0) is not a pci.ids codename; its members GK104/GK106/GK107
    are mapped individually.
"""

from __future__ import annotations

import argparse
import collections
import glob
import os
import re
import sys

NVIDIA = "10de"

GPUS = "https://developer.nvidia.com/cuda-gpus"
GPUS_2022 = "https://developer.nvidia.com/cuda-gpus, 2022 revision"
GPUS_2017 = "https://developer.nvidia.com/cuda-gpus, 2017 revision"
LEGACY = "https://developer.nvidia.com/cuda-legacy-gpus"

ARCHITECTURES = (
    "Kepler", "Maxwell", "Pascal", "Volta", "Turing",
    "Ampere", "Ada", "Hopper", "Blackwell",
)

# Compute-capability majors each architecture may carry (sanity check).
ARCH_MAJORS = {
    "Kepler": {3}, "Maxwell": {5}, "Pascal": {6}, "Volta": {7},
    "Turing": {7}, "Ampere": {8}, "Ada": {8}, "Hopper": {9},
    "Blackwell": {10, 11, 12},
}

# (codename, architecture, compute capability, source). Order = output order.
CHIPS = [
    # Kepler
    ("GK104", "Kepler", "3.0",
     f"{GPUS_2022} (Tesla K10, Quadro K5000, Quadro K4200: 3.0)"),
    ("GK106", "Kepler", "3.0",
     f"{GPUS_2022} (Quadro K4000: 3.0)"),
    ("GK107", "Kepler", "3.0",
     f"{GPUS_2022} (Quadro K2000, K600, K420, Quadro 410: 3.0)"),
    ("GK110", "Kepler", "3.5",
     f"{GPUS_2022} (Tesla K20, Quadro K6000, Quadro K5200: 3.5)"),
    ("GK110B", "Kepler", "3.5",
     f"{GPUS_2022} (Tesla K40: 3.5); {GPUS_2017} (GeForce GTX 780 Ti, GTX TITAN Black, GTX TITAN Z: 3.5)"),
    ("GK180", "Kepler", "3.5",
     f"{GPUS_2022} (Tesla K40: 3.5; pci.ids names the Tesla K40c chip GK180)"),
    ("GK208", "Kepler", "3.5",
     f"{GPUS_2017} (Quadro K610M, Quadro K510M: 3.5)"),
    ("GK208B", "Kepler", "3.5",
     f"{GPUS_2017} (GeForce GT 730: 3.5); Wikipedia CUDA table (GK208: GT 730, GT 720, GT 710 = 3.5)"),
    ("GK210", "Kepler", "3.7",
     f"{GPUS_2022} (Tesla K80: 3.7)"),
    # Maxwell
    ("GM107", "Maxwell", "5.0",
     f"{LEGACY} (GeForce GTX 750 Ti, Quadro K2200, K1200, K620: 5.0)"),
    ("GM108", "Maxwell", "5.0",
     f"{LEGACY} (GeForce 940M, Quadro K620M, Quadro M500M: 5.0)"),
    ("GM200", "Maxwell", "5.2",
     f"{LEGACY} (GeForce GTX TITAN X, GTX 980 Ti, Quadro M6000, Tesla M40: 5.2)"),
    ("GM204", "Maxwell", "5.2",
     f"{LEGACY} (GeForce GTX 980, GTX 970, Quadro M5000, Tesla M60: 5.2)"),
    ("GM206", "Maxwell", "5.2",
     f"{LEGACY} (GeForce GTX 960, GTX 950, Quadro M2000: 5.2)"),
    # Pascal
    ("GP100", "Pascal", "6.0",
     f"{LEGACY} (Tesla P100, Quadro GP100: 6.0)"),
    ("GP102", "Pascal", "6.1",
     f"{LEGACY} (GeForce GTX 1080 Ti, NVIDIA TITAN Xp, Quadro P6000, Tesla P40: 6.1)"),
    ("GP104", "Pascal", "6.1",
     f"{LEGACY} (GeForce GTX 1080, GTX 1070, Quadro P5000, Tesla P4: 6.1)"),
    ("GP106", "Pascal", "6.1",
     f"{LEGACY} (GeForce GTX 1060: 6.1)"),
    ("GP107", "Pascal", "6.1",
     f"{LEGACY} (GeForce GTX 1050, Quadro P1000, P600, P400: 6.1)"),
    ("GP108", "Pascal", "6.1",
     f"{LEGACY} (Quadro P500, P520: 6.1); nixpkgs gpus.nix (GT 1030 (GP108): 6.1)"),
    # Volta
    ("GV100", "Volta", "7.0",
     f"{LEGACY} (NVIDIA V100, Quadro GV100, NVIDIA TITAN V: 7.0)"),
    # Turing
    ("TU102", "Turing", "7.5",
     f"{GPUS_2022} (Quadro RTX 8000, Quadro RTX 6000: 7.5); {GPUS_2017} (GeForce RTX 2080 Ti, NVIDIA TITAN RTX: 7.5)"),
    ("TU104", "Turing", "7.5",
     f"{GPUS_2022} (NVIDIA T4, Quadro RTX 5000: 7.5); {GPUS_2017} (GeForce RTX 2080: 7.5)"),
    ("TU106", "Turing", "7.5",
     f"{GPUS_2017} (GeForce RTX 2070, RTX 2060: 7.5)"),
    ("TU116", "Turing", "7.5",
     f"{GPUS_2022} (GeForce GTX 1650 Ti: 7.5); nixpkgs gpus.nix (GTX 1660 Ti: 7.5)"),
    ("TU117", "Turing", "7.5",
     f"{GPUS_2022} (T1000, T600, T400: 7.5)"),
    # Ampere
    ("GA100", "Ampere", "8.0",
     f"{GPUS_2022} (NVIDIA A100, A30: 8.0)"),
    ("GA102", "Ampere", "8.6",
     f"{GPUS} (GeForce RTX 3090, RTX A6000, A40, A10: 8.6)"),
    ("GA103", "Ampere", "8.6",
     f"{GPUS} (GeForce RTX 30 series: 8.6; pci.ids names GA103 GeForce RTX 3060 Ti / RTX 3080 Ti Laptop)"),
    ("GA104", "Ampere", "8.6",
     f"{GPUS} (RTX A4000, RTX A3000: 8.6); {GPUS_2022} (GeForce RTX 3070: 8.6)"),
    ("GA106", "Ampere", "8.6",
     f"{GPUS} (GeForce RTX 30 series: 8.6; pci.ids names GA106 GeForce RTX 3060)"),
    ("GA107", "Ampere", "8.6",
     f"{GPUS} (NVIDIA A2, A16, GeForce RTX 3050: 8.6)"),
    # Ada Lovelace
    ("AD102", "Ada", "8.9",
     f"{GPUS} (GeForce RTX 4090, RTX 6000 Ada, L40, L40S: 8.9)"),
    ("AD103", "Ada", "8.9",
     f"{GPUS} (GeForce RTX 4080: 8.9)"),
    ("AD104", "Ada", "8.9",
     f"{GPUS} (GeForce RTX 4070 Ti, RTX 4000 Ada, L4: 8.9)"),
    ("AD106", "Ada", "8.9",
     f"{GPUS} (GeForce RTX 4060 Ti: 8.9)"),
    ("AD107", "Ada", "8.9",
     f"{GPUS} (GeForce RTX 4060, RTX 2000 Ada: 8.9)"),
    # Hopper
    ("GH100", "Hopper", "9.0",
     f"{GPUS} (NVIDIA H100, H200, GH200: 9.0)"),
    # Blackwell
    ("GB100", "Blackwell", "10.0",
     f"{GPUS} (NVIDIA B200, GB200: 10.0)"),
    ("GB202", "Blackwell", "12.0",
     f"{GPUS} (GeForce RTX 5090, RTX PRO 6000 Blackwell: 12.0)"),
    ("GB203", "Blackwell", "12.0",
     f"{GPUS} (GeForce RTX 5080, RTX 5070 Ti, RTX PRO 4500 / 4000 Blackwell: 12.0)"),
    ("GB205", "Blackwell", "12.0",
     f"{GPUS} (GeForce RTX 5070: 12.0)"),
    ("GB206", "Blackwell", "12.0",
     f"{GPUS} (GeForce RTX 5060 Ti, RTX 5060: 12.0)"),
    ("GB207", "Blackwell", "12.0",
     f"{GPUS} (GeForce RTX 5050: 12.0)"),
]

# pci.ids variant suffixes after the chip codename.
VARIANT_SUFFIXES = ("", "M", "GL", "GLM", "BM")

# Names (or bracket text) of functions that are not GPUs.
NON_GPU = re.compile(
    r"(?i)\b(audio|usb|ucsi|nvswitch|bridge|controller|smbus|sata|root complex|endpoint)\b"
)

# Kepler-or-newer codename families, to report codenames the table lacks.
MODERN_FAMILY = re.compile(r"^(GK|GM|GP|GV|TU|GA|AD|GH|GB|TA)[0-9]")

# Expected to be seen unmapped (see module docstring); anything else fails.
# GB102 (B100), GB110 (B300?) and GB20B (GB10?) are left out: their compute capability or their
# chip-to-product link rests only on secondary sources (nixpkgs, Wikipedia).
KNOWN_UNMAPPED = {"GK11x", "GB120", "GB6", "TA1090SA", "GB102", "GB110", "GB20B"}

# Required coverage: pci_id -> (chip, substring of the name).
REQUIRED = {
    "10de:2335": ("GH100", "H200 SXM"),
    "10de:2330": ("GH100", "H100 SXM5"),
    "10de:2b85": ("GB202", "RTX 5090"),
    "10de:2c02": ("GB203", "RTX 5080"),
    "10de:2204": ("GA102", "RTX 3090"),
    "10de:1b06": ("GP102", "GTX 1080 Ti"),
    "10de:1db4": ("GV100", "V100 PCIe 16GB"),
    "10de:1e04": ("TU102", "RTX 2080 Ti"),
    "10de:2684": ("AD102", "RTX 4090"),
    "10de:20b0": ("GA100", "A100 SXM4 40GB"),
    "10de:102d": ("GK210", "Tesla K80"),
    "10de:1024": ("GK180", "Tesla K40c"),
    "10de:17c8": ("GM200", "GTX 980 Ti"),
    "10de:1eb8": ("TU104", "Tesla T4"),
    "10de:2901": ("GB100", "B200"),  # present in pci.ids 2025-07-11
}

DEFAULT_PATHS = (
    os.path.expanduser("~/.cargo/registry/src/*/pci-ids-0.2.6/pciids/pci.ids"),
    "/usr/share/misc/pci.ids",
    "/usr/share/hwdata/pci.ids",
)


def find_pci_ids() -> str:
    for pattern in DEFAULT_PATHS:
        matches = sorted(glob.glob(pattern))
        if matches:
            return matches[0]
    sys.exit("gen_gpus_table: no pci.ids found; pass its path as an argument")


def read_pci_ids(path: str):
    """Return (version, date, {device_id: name}) for vendor 10de."""
    version = date = None
    devices: dict[str, str] = {}
    in_nvidia = False
    vendor_re = re.compile(r"^([0-9a-f]{4})  (.*)$")
    device_re = re.compile(r"^\t([0-9a-f]{4})  (.*)$")
    with open(path, encoding="utf-8", errors="replace") as fh:
        for raw in fh:
            line = raw.rstrip("\n")
            if line.startswith("#"):
                m = re.match(r"^#\s*Version:\s*(\S+)", line)
                if m and version is None:
                    version = m.group(1)
                m = re.match(r"^#\s*Date:\s*(\d{4}-\d{2}-\d{2})", line)
                if m and date is None:
                    date = m.group(1)
                continue
            m = vendor_re.match(line)
            if m:
                in_nvidia = m.group(1) == NVIDIA
                continue
            if line.startswith("C "):  # device-class section: vendors are over
                in_nvidia = False
                continue
            if in_nvidia:
                m = device_re.match(line)
                if m:
                    dev, name = m.group(1), m.group(2).strip()
                    if dev in devices:
                        sys.exit(f"gen_gpus_table: duplicate device {dev} in {path}")
                    devices[dev] = name
    if not version or not date:
        sys.exit(f"gen_gpus_table: no Version/Date header in {path}")
    if not devices:
        sys.exit(f"gen_gpus_table: no vendor {NVIDIA} devices in {path}")
    return version, date, devices


def split_codename(name: str, chip_names: list[str]):
    """Return (chip, rest) when name starts with chip+variant suffix, else None."""
    m = re.match(r"^[A-Za-z0-9]+", name)
    if not m:
        return None
    token = m.group(0)
    rest = name[len(token):]
    if rest and not (rest.startswith(" ") or rest.startswith("[")):
        return None
    for chip in chip_names:  # longest first: GK110B before GK110
        if token.startswith(chip) and token[len(chip):] in VARIANT_SUFFIXES:
            return chip, rest
    return None


def display_name(full: str, rest: str) -> str:
    """The bracketed marketing name, or the full name when there is none."""
    m = re.match(r"^(?: / [^\[\]]+)? ?\[(.+)\]$", rest)
    if m:
        return m.group(1).strip()
    return full


def toml_str(s: str) -> str:
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def check_chip_table() -> None:
    seen = set()
    for codename, arch, cc, source in CHIPS:
        assert codename not in seen, f"duplicate chip {codename}"
        seen.add(codename)
        assert arch in ARCHITECTURES, f"{codename}: bad architecture {arch}"
        assert re.fullmatch(r"\d+\.\d", cc), f"{codename}: bad compute capability {cc}"
        assert int(cc.split(".")[0]) in ARCH_MAJORS[arch], f"{codename}: {cc} is not {arch}"
        assert source, f"{codename}: no source"


def build(path: str):
    check_chip_table()
    version, date, devices = read_pci_ids(path)
    chip_names = sorted((c[0] for c in CHIPS), key=lambda c: (-len(c), c))
    rows = []
    dropped_non_gpu = []
    unmapped = collections.Counter()
    for dev in sorted(devices):
        full = devices[dev]
        hit = split_codename(full, chip_names)
        if hit is None:
            token = re.match(r"^[A-Za-z0-9]*", full).group(0)
            if MODERN_FAMILY.match(token):
                base = re.sub(r"(GLM|GL|BM|M)$", "", token) or token
                unmapped[base] += 1
            continue
        chip, rest = hit
        if NON_GPU.search(full):
            dropped_non_gpu.append(f"{NVIDIA}:{dev}  {full}")
            continue
        rows.append({
            "pci_id": f"{NVIDIA}:{dev}",
            "chip": chip,
            "name": display_name(full, rest),
        })
    unexpected = sorted(set(unmapped) - KNOWN_UNMAPPED)
    if unexpected:
        sys.exit(
            "gen_gpus_table: Kepler-or-newer codenames with no CHIPS row: "
            + ", ".join(unexpected)
            + " (add a sourced CHIPS row or list them in KNOWN_UNMAPPED)"
        )
    used = {r["chip"] for r in rows}
    unused = [c[0] for c in CHIPS if c[0] not in used]
    if unused:
        sys.exit(f"gen_gpus_table: CHIPS rows with no device in pci.ids: {unused}")
    return version, date, rows, dropped_non_gpu, unmapped


def render(path: str, version: str, date: str, rows) -> str:
    crate = re.search(r"pci-ids-(\d+\.\d+\.\d+)[/\\]pciids[/\\]pci\.ids$", path)
    shipped = f", as shipped in crates.io pci-ids {crate.group(1)}" if crate else ""
    out = [
        f"# Generated by scripts/gen_gpus_table.py from pci.ids {version}; do not edit by hand.",
        f"# Source: https://pci-ids.ucw.cz/ (pci.ids {date}{shipped}); NVIDIA (10de) GPU functions only.",
        "# Chip compute capabilities: https://developer.nvidia.com/cuda-gpus and",
        "# https://developer.nvidia.com/cuda-legacy-gpus (see each [[chip]] source).",
        "schema_version = 1",
        "",
    ]
    for codename, arch, cc, source in CHIPS:
        out += [
            "[[chip]]",
            f"codename = {toml_str(codename)}",
            f"architecture = {toml_str(arch)}",
            f"compute_capability = {toml_str(cc)}",
            f"source = {toml_str(source)}",
            "",
        ]
    dev_source = f"https://pci-ids.ucw.cz/ (pci.ids {date})"
    for r in rows:
        out += [
            "[[device]]",
            f"pci_id = {toml_str(r['pci_id'])}",
            f"chip = {toml_str(r['chip'])}",
            f"name = {toml_str(r['name'])}",
            f"source = {toml_str(dev_source)}",
            "",
        ]
    return "\n".join(out).rstrip("\n") + "\n"


def check_required(rows) -> None:
    chips = {c[0]: c for c in CHIPS}
    by_id = {r["pci_id"]: r for r in rows}
    missing = []
    for pci_id, (chip, name_part) in sorted(REQUIRED.items()):
        r = by_id.get(pci_id)
        if r is None:
            missing.append(f"{pci_id} missing")
        elif r["chip"] != chip or name_part not in r["name"] or chip not in chips:
            missing.append(f"{pci_id} is {r['chip']} {r['name']!r}, want {chip} ~{name_part!r}")
    if missing:
        sys.exit("gen_gpus_table: required coverage failed:\n  " + "\n  ".join(missing))


# Rows appended after the generated table: chips the bundled pci.ids predates, each cited.
HAND_CURATED = """
# --- Hand-curated after the generated table (issue 12): chips pci.ids 2025-07-11 lacks. Kept by
# scripts/gen_gpus_table.py (HAND_CURATED). GB10 (12.1) and Rubin (10.7) have no PCI id in any
# source read (GB10 has a range, below); drivers.toml maps Rubin's compute capability to its architecture.
[[chip]]
codename = "GB110"
architecture = "Blackwell"
compute_capability = "10.3"
source = "https://developer.nvidia.com/cuda-gpus (NVIDIA B300, GB300: 10.3); Wikipedia 'CUDA', GPUs supported (GB110 = compute capability 10.3; as read for scripts/gen_gpus_table.py [WIKI])"

[[device]]
pci_id = "10de:3182"
chip = "GB110"
name = "B300 SXM6 AC"
source = "secondary: pci.ids after 2025-07-11 ('3182  GB110 [B300 SXM6 AC]', as quoted by public B300 host tooling found by string search); https://pci-ids.ucw.cz/read/PC/10de/3182"

# DGX Spark's GB10: no single PCI id is published in any source read, but NVIDIA's own kernel
# treats every id of 10de:2e00-2e3f as the DGX Spark integrated GPU.
[[chip]]
codename = "GB10"
architecture = "Blackwell"
compute_capability = "12.1"
source = "https://developer.nvidia.com/cuda-gpus (NVIDIA GB10, DGX Spark: 12.1; shared/reference/compat.md [GPUS])"

[[device_range]]
first = "10de:2e00"
last = "10de:2e3f"
chip = "GB10"
name = "GB10"
source = "https://github.com/NVIDIA/NV-Kernels/pull/396 (NVIDIA: 'Replace the explicit DGX Spark iGPU device ID list with a range check covering 0x2E00-0x2E3F to accommodate all possible DGX Spark iGPU PCI device IDs'; merged 2026-04-28)"

# Ids NVIDIA's supported-GPU table of 595.45.04 lists that pci.ids 2025-07-11 lacks (issue 34). The
# chip is NVIDIA's own word where its source names one (GB110, gb20x), else the chip pci.ids gives
# the neighbouring ids of the same block (every GB20x chip is compute capability 12.0 either way).
# Left out: 10de:29bb 'NVIDIA DRIVE P2021'. Its chip is now named (pci.ids 2026-08-22, pciutils/pciids
# c1c12547: '29bb  GB102 [DRIVE P2021]', beside '29bc  GB102 [B100]'), but no NVIDIA source gives
# GB102's compute capability: developer.nvidia.com/cuda-gpus lists only B200/GB200 (10.0) and
# B300/GB300 (10.3), the MIG guide only GB100/GB202 products, and NVIDIA's kernel modules put GB100
# (10.0), GB102 and GB110 (10.3) in one architecture (ctrl2080mc.h ARCHITECTURE_GB10x), so the
# architecture does not decide it. A GPU without a compute capability is left out, not guessed.

[[device]]
pci_id = "10de:31c2"
chip = "GB110"
name = "GB300"
source = "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/README.md (Compatible GPUs: 'NVIDIA GB300 | 31C2', listed from 580.82.07); https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/src/common/shared/inc/detect-self-hosted.h (NVIDIA: 'devid >= 0x31c0 && devid <= 0x31ff   // GB110 Self-Hosted')"

[[device]]
pci_id = "10de:2b8c"
chip = "GB202"
name = "GeForce RTX 5090 D v2"
source = "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/README.md (Compatible GPUs: 'NVIDIA GeForce RTX 5090 D v2 | 2B8C'); .../595.45.04/src/nvidia/src/kernel/gpu/mem_mgr/arch/maxwell/mem_mgr_gm107.c (NVIDIA: 'gb20x_devid[] = { 0x2B8C }'); derived: chip GB202 as pci.ids names the RTX 5090 D (2b87) it is a version of"

[[device]]
pci_id = "10de:2bb9"
chip = "GB202"
name = "RTX 6000D"
source = "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/README.md (Compatible GPUs: 'NVIDIA RTX 6000D | 2BB9', listed from 580.82.07); derived: chip GB202, which pci.ids gives every other id of the 2bb0-2bbf block (2bb1, 2bb3, 2bb4, 2bb5: RTX PRO 5000/6000 Blackwell)"

[[device]]
pci_id = "10de:2c33"
chip = "GB203"
name = "RTX PRO 4000 Blackwell SFF Edition"
source = "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/README.md (Compatible GPUs: 'NVIDIA RTX PRO 4000 Blackwell SFF Edition | 2C33', listed from 570.190); derived: chip GB203, as pci.ids names the RTX PRO 4000 Blackwell (2c34)"

[[device]]
pci_id = "10de:2c77"
chip = "GB203"
name = "RTX PRO 5000 Blackwell Embedded GPU"
source = "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/README.md (Compatible GPUs: 'NVIDIA RTX PRO 5000 Blackwell Embedded GPU | 2C77'); derived: chip GB203, which pci.ids gives every other id of the 2c00-2c7f block (RTX 5080, RTX PRO 4000/4500/5000 Laptop)"

[[device]]
pci_id = "10de:2c79"
chip = "GB203"
name = "RTX PRO 4000 Blackwell Embedded GPU"
source = "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/README.md (Compatible GPUs: 'NVIDIA RTX PRO 4000 Blackwell Embedded GPU | 2C79'); derived: chip GB203, which pci.ids gives every other id of the 2c00-2c7f block"

[[device]]
pci_id = "10de:2d30"
chip = "GB206"
name = "RTX PRO 2000 Blackwell"
source = "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/README.md (Compatible GPUs: 'NVIDIA RTX PRO 2000 Blackwell | 2D30', listed from 570.190); derived: chip GB206, as pci.ids names the RTX PRO 2000 Blackwell Generation Laptop GPU (2d39)"

[[device]]
pci_id = "10de:2d79"
chip = "GB206"
name = "RTX PRO 2000 Blackwell Embedded GPU"
source = "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/README.md (Compatible GPUs: 'NVIDIA RTX PRO 2000 Blackwell Embedded GPU | 2D79'); derived: chip GB206, which pci.ids gives every other id of the 2d00-2d7f block (RTX 5060, 5060 Ti, RTX PRO 2000 Laptop)"

[[device]]
pci_id = "10de:2df9"
chip = "GB207"
name = "RTX PRO 500 Blackwell Embedded GPU"
source = "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/README.md (Compatible GPUs: 'NVIDIA RTX PRO 500 Blackwell Embedded GPU | 2DF9'); derived: chip GB207, which pci.ids gives every other id of the 2d80-2dff block (RTX 5050, RTX PRO 500/1000 Blackwell Laptop)"
"""


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pci_ids", nargs="?", help="path to pci.ids")
    ap.add_argument("--output", default=os.path.join(here, "..", "manifests", "gpus.toml"))
    args = ap.parse_args()
    path = args.pci_ids or find_pci_ids()
    if not os.path.isfile(path):
        sys.exit(f"gen_gpus_table: {path}: no such file")

    version, date, rows, dropped, unmapped = build(path)
    check_required(rows)
    text = render(path, version, date, rows)
    assert text == render(path, version, date, rows)  # deterministic
    text += HAND_CURATED

    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)

    arch_of = {c[0]: c[1] for c in CHIPS}
    per_arch = collections.Counter(arch_of[r["chip"]] for r in rows)
    print(f"pci.ids {version} ({path})")
    print(f"wrote {os.path.normpath(args.output)}: {len(CHIPS)} chips, {len(rows)} devices")
    for arch in ARCHITECTURES:
        print(f"  {arch:<10} {per_arch.get(arch, 0):4d}")
    print(f"dropped {len(dropped)} non-GPU functions with a chip codename (audio/USB/UCSI/NVSwitch)")
    print("unmapped Kepler-or-newer codenames: "
          + ", ".join(f"{k} ({v})" for k, v in sorted(unmapped.items())))


if __name__ == "__main__":
    main()
