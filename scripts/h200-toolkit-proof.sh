#!/usr/bin/env bash
# Proof on the H200 machine for the developer toolkit (issue 13): `cudaup install --profile
# cuda-dev --source wheels --components standard` of CUDA 13.0.2 from a local wheel mirror, then
# `cudaup verify` with every library call on the GPU, the CMake project and the torch extension.
#
# The device has no network and takes 64 MiB per command, so NVIDIA's wheels cannot travel. They
# are rebuilt there, file by file, each file checked against the sha256 the real wheel's RECORD
# gives for it:
#   - from the torch venv's site-packages, where torch 2.11.0+cu130 installed NVIDIA's wheels of
#     the same CUDA 13.0.2 (nvidia-cublas, -cufft, -curand, -cusolver, -cusparse, -nvjitlink,
#     -cuda-cupti, -nvtx, -cuda-nvrtc, -cuda-runtime, -cufile, -cudnn-cu13): each installed
#     dist-info's RECORD names its files;
#   - for the rest of the standard set (nvcc, crt, nvvm, cccl, nvptxcompiler, culibos, npp,
#     nvjpeg, nvml-dev, profiler-api, sanitizer-api, cuxxfilt), from the files of the machine's
#     own CUDA 13.0.2 toolkit (/usr/local/cuda-13.0), found by name, size and sha256 from the
#     real wheel's RECORD — the RECORDs travel (`stage` below puts them in target/h200-carry).
# A file found nowhere with the right hash is taken from the toolkit by name and size, and
# counted; a wheel that cannot be rebuilt is left out of the set, and the transcript says which.
#
# Here (a machine that reaches PyPI):
#   cargo build --release && scripts/h200-toolkit-proof.sh stage
# writes target/h200-carry/ (the RECORDs and metadata, about 2 MB) and prints the device call.
# There (the lead runs it), carrying target/release/cudaup and target/h200-carry:
#   scripts/h200-toolkit-proof.sh run
# writes to $OUT: transcript.txt (everything, in order), verify.txt, mirror.txt (how each wheel
# was rebuilt), machine.txt, receipt.json (the install's receipt), and with VERIFY_JSON=1 also
# verify.json (verify runs a second time for it).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}
carry=${CARRY_DIR:-$here/target/h200-carry}
cuda_release=13.0.2

stage() {
  python3 - "$carry" "$cuda_release" "$here" <<'PY'
"""Downloads (or reuses) the standard set's wheels of the release and keeps their dist-info
directories: enough to rebuild each wheel from installed files and check every byte."""
import hashlib, io, json, os, pathlib, shutil, sys, tomllib, urllib.request, zipfile

carry, release, repo = pathlib.Path(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
doc = tomllib.loads((repo / "manifests/components.toml").read_text())
comps = {c["name"]: c for c in doc["component"]}
sets = {s["name"]: s for s in doc["set"]}
def members(name):
    s = sets[name]
    out = members(s["includes"]) if s.get("includes") else []
    return out + [c for c in s["components"] if c not in out]
pins = next(w for w in doc["wheels"] if w["cuda"] == release)["packages"]
want = [(comps[c]["wheel"], pins[comps[c]["wheel"]]["version"]) for c in members("standard")
        if comps[c].get("wheel") in pins and pins[comps[c]["wheel"]].get("x86_64")]
cache = repo / "target/tmp/nvidia-wheels/by-sha256"
shutil.rmtree(carry, ignore_errors=True)
(carry / "recipes").mkdir(parents=True)
index = []
for pkg, version in want:
    req = urllib.request.Request(f"https://pypi.org/simple/{pkg}/",
                                 headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    files = json.load(urllib.request.urlopen(req, timeout=60))["files"]
    f = [f for f in files if f["filename"].endswith("_x86_64.whl") and "manylinux" in f["filename"]
         and (f["filename"].split("-")[1] == version
              or f["filename"].split("-")[1].startswith(version + "."))][-1]
    sha = f["hashes"]["sha256"]
    cached = cache / sha / f["filename"]
    if cached.is_file():
        data = cached.read_bytes()
    else:
        print(f"downloading {f['filename']} ({f['size'] / 2**20:.1f} MiB)", file=sys.stderr)
        data = urllib.request.urlopen(f["url"], timeout=600).read()
    if hashlib.sha256(data).hexdigest() != sha:
        sys.exit(f"error: {f['filename']} does not hash to PyPI's sha256")
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        infos = [i for i in z.infolist() if ".dist-info/" in i.filename]
        for i in infos:
            dest = carry / "recipes" / i.filename
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(z.read(i))
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in z.infolist()}
    dist = infos[0].filename.split("/")[0]
    (carry / "recipes" / dist / "cudaup-modes.json").write_text(json.dumps(modes))
    index.append({"package": pkg, "version": version, "wheel": f["filename"], "sha256": sha,
                  "size": f["size"], "dist_info": dist, "url": f["url"]})
(carry / "wheels.json").write_text(json.dumps({"cuda": release, "wheels": index}, indent=1))
total = sum(p.stat().st_size for p in carry.rglob("*") if p.is_file())
print(f"{len(index)} wheels' dist-info in {carry} ({total / 2**20:.1f} MiB)")
PY
  local bin="$here/target/release/cudaup"
  [ -x "$bin" ] || { echo "error: build the release binary first: cargo build --release" >&2; exit 2; }
  echo "cudaup: $(du -h "$bin" | cut -f1) ($("$bin" --version))"
  cat <<EOF

The device call (one command, about 15 MiB carried):
  run(command="scripts/h200-toolkit-proof.sh run",
      carry=["target/release/cudaup", "target/h200-carry"], timeout_s=600)
EOF
}

run_proof() {
  local out=${OUT:-$PWD/h200-toolkit-proof}
  mkdir -p "$out"
  local cudaup=${CUDAUP:-$here/target/release/cudaup}
  local venv=${VENV:-/opt/torch/.venv}
  local system_cuda=${SYSTEM_CUDA:-/usr/local/cuda-13.0}
  local work; work=$(mktemp -d /tmp/cudaup-proof.XXXXXX)
  local home=$work/home
  local t=$out/transcript.txt
  : >"$t"
  log() { echo "$*" | tee -a "$t"; }
  local began; began=$(date +%s)
  {
    nvidia-smi
    echo "CPUs: $(nproc)"
    "$venv/bin/python" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, "cuDNN", torch.backends.cudnn.version())'
    "$system_cuda/bin/nvcc" --version | tail -2
    command -v cmake ninja; cmake --version | head -1; ninja --version
  } >"$out/machine.txt" 2>&1
  log "== the machine"; cat "$out/machine.txt" >>"$t"
  [ -x "$cudaup" ] || { log "error: no cudaup binary at $cudaup (carry target/release/cudaup)"; return 2; }
  [ -f "$carry/wheels.json" ] || { log "error: no $carry/wheels.json (run \`$0 stage\` where PyPI is reachable and carry target/h200-carry)"; return 2; }
  log "== cudaup $("$cudaup" --version)"

  log "== the wheel mirror: rebuilding each wheel of CUDA $cuda_release's standard set, every file checked against its RECORD"
  local site; site=$("$venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')
  "$venv/bin/python" - "$carry" "$site" "$system_cuda" "$work/wheels" <<'PY' 2>&1 | tee "$out/mirror.txt" | tee -a "$t"
import base64, csv, hashlib, io, json, os, pathlib, sys, zipfile

carry, site, system, dest = map(pathlib.Path, sys.argv[1:5])
dest.mkdir(parents=True, exist_ok=True)
spec = json.loads((carry / "wheels.json").read_text())

def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()

# The system toolkit's files by (name, size); symlinks resolved.
by_name = {}
for root, _dirs, files in os.walk(system):
    for n in files:
        p = pathlib.Path(root) / n
        try:
            real = p.resolve(strict=True)
            size = real.stat().st_size
        except OSError:
            continue
        by_name.setdefault((n, size), set()).add(real)
        by_name.setdefault((n, None), set()).add(real)

def record(dist_dir):
    with open(dist_dir / "RECORD", newline="") as fh:
        return [r for r in csv.reader(fh) if r]

# The standard set from the recipes; cuDNN from the venv's own dist-info (torch's pin), whose
# RECORD is the wheel's (pip only adds its own files to it).
jobs = [(w, carry / "recipes" / w["dist_info"]) for w in spec["wheels"]]
for d in sorted(site.glob("nvidia_cudnn_cu13-*.dist-info")):
    tag = next(l.split(":", 1)[1].strip() for l in (d / "WHEEL").read_text().splitlines() if l.startswith("Tag:"))
    dist, version = d.name[: -len(".dist-info")].split("-")
    jobs.append(({"package": "nvidia-cudnn-cu13", "version": version, "dist_info": d.name,
                  "wheel": f"{dist}-{version}-{tag}.whl"}, d))

summary = {"rebuilt": [], "missing": []}
for w, recipe in jobs:
    installed = site / w["dist_info"]
    modes_file = recipe / "cudaup-modes.json"
    modes = json.loads(modes_file.read_text()) if modes_file.is_file() else {}
    rows = record(recipe)
    name = w["wheel"]
    same = other = 0
    sources = set()
    missing = []
    entries = []
    for path, hashed, size in rows:
        if path.endswith(".dist-info/RECORD") or not hashed or "__pycache__" in path:
            continue
        if path.endswith(("/INSTALLER", "/REQUESTED", "/direct_url.json")) and ".dist-info/" in path:
            continue  # pip's own additions
        want = hashed.split("=", 1)[1]
        cands = []
        if installed.is_dir() and (site / path).is_file():
            cands.append(site / path)
        if path.startswith(w["dist_info"] + "/"):
            cands.append(recipe / path[len(w["dist_info"]) + 1:])
        base = path.rsplit("/", 1)[-1]
        cands += sorted(by_name.get((base, int(size)), ()))
        hit = next((c for c in cands if c.is_file() and c.stat().st_size == int(size) and digest(c) == want), None)
        if hit is not None:
            same += 1
        else:
            # Same name, other bytes (a build difference): taken, and counted.
            loose = sorted(by_name.get((base, None), ()))
            hit = loose[0] if loose else None
            if hit is None:
                missing.append(path)
                continue
            other += 1
        sources.add("venv" if str(hit).startswith(str(site)) else "recipe" if str(hit).startswith(str(carry)) else str(system))
        entries.append((path, hit))
    if missing:
        print(f"  {name}: cannot be rebuilt, {len(missing)} file(s) found nowhere (first: {missing[0]})")
        summary["missing"].append(w["package"])
        continue
    out = dest / name
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for path, src in entries:
            info = zipfile.ZipInfo(path, (2025, 10, 9, 0, 0, 0))
            mode = modes.get(path, 0o755 if os.access(src, os.X_OK) else 0o644)
            info.external_attr = (0o100000 | mode) << 16
            with open(src, "rb") as fh, z.open(info, "w") as zf:
                while chunk := fh.read(1 << 20):
                    zf.write(chunk)
        z.write(recipe / "RECORD", f"{w['dist_info']}/RECORD")
    where = " + ".join(sorted(s for s in sources if s != "recipe")) or "metadata only"
    note = f", {other} differing from PyPI's (taken by name)" if other else ""
    print(f"  {name}: {same} file(s) identical to PyPI's wheel{note}; from {where}")
    summary["rebuilt"].append(w["package"])
(dest / "summary.json").write_text(json.dumps(summary))
PY
  local py="$venv/bin/python"
  "$py" "$here/scripts/make-wheel-mirror.py" "$work/wheels" "$work/mirror" 2>&1 | tee -a "$t"
  local missing; missing=$("$py" -c 'import json,sys; print(",".join(json.load(open(sys.argv[1]))["missing"]))' "$work/wheels/summary.json")

  # The components the mirror cannot serve are left out, by name.
  local components=standard
  if [ -n "$missing" ]; then
    components+=$("$py" - "$here/manifests/components.toml" "$missing" <<'PY'
import sys, tomllib
doc = tomllib.load(open(sys.argv[1], "rb"))
gone = set(sys.argv[2].split(","))
print("".join(f",-{c['name']}" for c in doc["component"] if c.get("wheel") in gone))
PY
)
    log "== not rebuildable here, so left out: $missing (--components $components)"
  fi
  # cuDNN: the venv's own (torch's pin), when the catalog has that release for CUDA 13.
  local cudnn_args=(--no-cudnn) cudnn
  cudnn=$(ls -d "$site"/nvidia_cudnn_cu13-*.dist-info 2>/dev/null | sed -E 's/.*cu13-([0-9]+\.[0-9]+\.[0-9]+).*/\1/' | head -1)
  if [ -n "$cudnn" ] && "$cudaup" --home "$home" plan --profile cuda-dev --cuda "$cuda_release" --cudnn "$cudnn" --driver keep --json 2>/dev/null \
      | "$py" -c 'import json,sys; c=[c for c in json.load(sys.stdin)["components"] if c["name"]=="cudnn"][0]; sys.exit(0 if c["action"]=="install" and c["version"]==sys.argv[1] else 1)' "$cudnn"; then
    cudnn_args=(--cudnn "$cudnn")
  else
    log "== cuDNN: the catalog plans no cuDNN $cudnn (the venv's) for CUDA $cuda_release, and no other cuDNN wheel is here: --no-cudnn"
  fi

  local cmd=("$cudaup" --home "$home" install --profile cuda-dev --cuda "$cuda_release" "${cudnn_args[@]}"
             --components "$components" --source wheels --index-url "$work/mirror/simple"
             --prefix "$work/cuda-$cuda_release" --driver keep --yes --no-modify-path)
  log "== ${cmd[*]/#$work/\$WORK}"
  local t0; t0=$(date +%s.%N)
  "${cmd[@]}" 2>&1 | tee -a "$t"
  local code=${PIPESTATUS[0]}
  log "install: exit $code in $("$py" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)") s"
  cp "$work/cuda-$cuda_release/.cudaup-receipt.json" "$out/receipt.json" 2>/dev/null || true
  log "== the prefix"
  (cd "$work/cuda-$cuda_release" && ls && ls -l lib64/libcudart.so lib64/libcudnn.so lib64/stubs nvvm/lib64 extras/CUPTI targets/x86_64-linux 2>&1 | head -40; head -12 version.json) 2>&1 | tee -a "$t"

  log "== cudaup verify --venv $venv"
  t0=$(date +%s.%N)
  timeout 540 "$cudaup" --home "$home" verify --venv "$venv" 2>&1 | tee "$out/verify.txt" | tee -a "$t"
  code=${PIPESTATUS[0]}
  log "verify: exit $code in $("$py" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)") s"
  # The JSON document too, on request (it runs every check again).
  if [ "${VERIFY_JSON:-0}" = 1 ]; then
    timeout 300 "$cudaup" --home "$home" verify --venv "$venv" --json >"$out/verify.json" 2>/dev/null || true
  fi
  log "== wall time: $(( $(date +%s) - began )) s"
  rm -rf "$work"
  return "$code"
}

case "$mode" in
  stage) stage ;;
  run) run_proof ;;
  *) sed -n '2,27p' "$0" >&2; exit 2 ;;
esac
