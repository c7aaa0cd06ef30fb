#!/usr/bin/env bash
# Proof on the H200 machine for the developer toolkit (issue 13): `cudaup install --profile
# cuda-dev --source wheels --components standard` of CUDA 13.0.2 from a local wheel mirror, then
# `cudaup verify` with every library call on the GPU, the CMake project and the torch extension.
#
# The device has no network and takes 64 MiB per command, so 1.5 GB of NVIDIA's wheels cannot
# travel. scripts/h200-toolkit-mirror.py stages what does (here) and rebuilds the rest (there):
#   - the small wheels the device lacks travel as PyPI's real wheels (crt, CCCL, nvJPEG, NVML
#     dev, profiler API, culibos, cu++filt, compute-sanitizer: about 20 MiB);
#   - every other wheel of the set travels "slim": its dist-info and each member under 1 MiB,
#     verbatim; there its large members are found in the torch venv's site-packages (torch
#     2.11.0+cu130 installed CUDA 13.0.2's cuBLAS, cuFFT, cuRAND, cuSOLVER, cuSPARSE,
#     nvJitLink, CUPTI, NVTX, NVRTC and runtime wheels) or in the machine's own CUDA 13.0.2
#     toolkit (nvcc, NVVM, nvptxcompiler, NPP), matched by name and size and checked against
#     the sha256 the real wheel's RECORD gives; cuDNN is rebuilt from the venv's own dist-info.
# A member found only by name with other bytes is taken and counted; a wheel that cannot be
# rebuilt is left out of the set (`--components standard,-npp`), and the transcript says which.
#
# Here (a machine that reaches PyPI; NVIDIA_WHEEL_CACHE=DIR reuses cached wheels, laid out
# by-sha256/<sha256>/<file> as tests/it/toolkit.rs caches them):
#   cargo build --release && scripts/h200-toolkit-proof.sh stage
# writes target/h200-carry/ (about 24 MiB; CARRY_DIR=DIR writes it elsewhere, e.g. into the
# checkout the device command is made from) and prints the device call.
# There (the lead runs it), carrying target/release/cudaup and target/h200-carry:
#   bash scripts/h200-toolkit-proof.sh run
# writes to $OUT: transcript.txt (everything, in order), verify.txt, mirror.txt (how each wheel
# was made), machine.txt, receipt.json (the install's receipt) and verify.json (verify --json,
# when time is left). The whole run keeps under $BUDGET_S seconds (default 560).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}
carry=${CARRY_DIR:-$here/target/h200-carry}
cuda_release=13.0.2

stage() {
  python3 "$here/scripts/h200-toolkit-mirror.py" stage "$carry" "$here" "$cuda_release" || exit 1
  local bin="$here/target/release/cudaup"
  [ -x "$bin" ] || { echo "error: build the release binary first: cargo build --release" >&2; exit 2; }
  local total; total=$(du -sbc "$bin" "$carry" | tail -1 | cut -f1)
  echo "cudaup: $(du -h "$bin" | cut -f1) ($("$bin" --version)); carried with the checkout: $(( total / 1048576 )) MiB"
  cat <<EOF

The device call (one command):
  run(command="bash scripts/h200-toolkit-proof.sh run",
      carry=["target/release/cudaup", "target/h200-carry"], timeout_s=600)
EOF
}

run_proof() {
  local out=${OUT:-$PWD/h200-toolkit-proof}
  mkdir -p "$out"
  local cudaup=${CUDAUP:-$here/target/release/cudaup}
  local venv=${VENV:-/opt/torch/.venv}
  local system_cuda=${SYSTEM_CUDA:-}
  if [ -z "$system_cuda" ]; then
    system_cuda=/usr/local/cuda-13.0; [ -d "$system_cuda" ] || system_cuda=/usr/local/cuda
  fi
  local budget=${BUDGET_S:-560}
  # WORK=DIR works there (made if missing) and KEEP_WORK=1 leaves it for the next step of
  # scripts/h200-proof.sh; MODIFY_PATH=1 lets the install hook the rc files (uninstall's test).
  local work=${WORK:-}
  if [ -n "$work" ]; then mkdir -p "$work"; else work=$(mktemp -d "${TMPDIR:-/tmp}/cudaup-proof.XXXXXX"); fi
  local path_args=(--no-modify-path)
  [ -n "${MODIFY_PATH:-}" ] && path_args=()
  local home=$work/home prefix=$work/cuda-$cuda_release py=$venv/bin/python
  local t=$out/transcript.txt
  : >"$t"
  log() { echo "$*" | tee -a "$t"; }
  left() { echo $(( budget - ($(date +%s) - began) )); }
  since() { "$py" -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$1"; }
  local began; began=$(date +%s)
  {
    nvidia-smi
    echo "CPUs: $(nproc); $(uname -srm)"
    "$py" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, "cuDNN", torch.backends.cudnn.version())'
    "$system_cuda/bin/nvcc" --version | tail -2
    command -v cmake ninja; cmake --version | head -1; ninja --version
  } >"$out/machine.txt" 2>&1
  log "== the machine"; cat "$out/machine.txt" >>"$t"
  [ -x "$cudaup" ] || { log "error: no cudaup binary at $cudaup (carry target/release/cudaup)"; return 2; }
  [ -f "$carry/wheels.json" ] || { log "error: no $carry/wheels.json (run \`$0 stage\` where PyPI is reachable and carry target/h200-carry)"; return 2; }
  log "== $("$cudaup" --version)"

  log "== the wheel mirror of CUDA $cuda_release's standard set (carried wheels as they are; the others rebuilt, each member checked against the real wheel's RECORD)"
  local site; site=$("$py" -c 'import site; print(site.getsitepackages()[0])')
  local t0; t0=$(date +%s.%N)
  "$py" "$here/scripts/h200-toolkit-mirror.py" rebuild "$carry" "$site" "$system_cuda" "$work/wheels" 2>&1 \
    | tee "$out/mirror.txt" | tee -a "$t"
  "$py" "$here/scripts/make-wheel-mirror.py" "$work/wheels" "$work/mirror" 2>&1 | tee -a "$t"
  log "mirror: $(ls "$work/wheels"/*.whl | wc -l) wheels, $(du -sh "$work/wheels" | cut -f1), in $(since "$t0") s"
  local missing; missing=$("$py" -c 'import json,sys; print(",".join(json.load(open(sys.argv[1]))["missing"]))' "$work/wheels/summary.json")

  # What the mirror cannot serve is left out, by name.
  local components=${COMPONENTS:-standard}
  if [ -n "$missing" ]; then
    components+=$("$py" - "$here/manifests/components.toml" "$missing" <<'PY'
import sys, tomllib
doc = tomllib.load(open(sys.argv[1], "rb"))
gone = set(sys.argv[2].split(","))
print("".join(f",-{c['name']}" for c in doc["component"] if c.get("wheel") in gone))
PY
)
    log "== not in the mirror, so left out: $missing (--components $components)"
  fi
  # cuDNN: the venv's own (torch's pin), when the catalog plans it for this CUDA.
  local cudnn_args=(--no-cudnn) cudnn
  cudnn=$(ls "$work/wheels" | sed -nE 's/^nvidia_cudnn_cu13-([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' | head -1)
  if [ -n "$cudnn" ] && "$cudaup" --home "$home" plan --profile cuda-dev --cuda "$cuda_release" --cudnn "$cudnn" \
        --driver keep --json 2>>"$t" \
      | "$py" -c 'import json,sys; d=json.load(sys.stdin); c=[c for c in d["components"] if c["name"]=="cudnn"]; sys.exit(0 if c and str(c[0].get("version","")).startswith(sys.argv[1]) else 1)' "$cudnn"; then
    cudnn_args=(--cudnn "$cudnn")
  else
    log "== cuDNN: the catalog plans no cuDNN ${cudnn:-?} (the venv's, the only one here) for CUDA $cuda_release: --no-cudnn"
  fi

  local cmd=("$cudaup" --home "$home" install --profile cuda-dev --cuda "$cuda_release" "${cudnn_args[@]}"
             --components "$components" --source wheels --index-url "$work/mirror/simple"
             --prefix "$prefix" --driver keep --yes "${path_args[@]}")
  log "== \$ cudaup $(echo "${cmd[*]:3}" | sed "s#$work#\$WORK#g")"
  t0=$(date +%s.%N)
  timeout "$(left)" "${cmd[@]}" 2>&1 | sed "s#$work#\$WORK#g" | tee -a "$t"
  local icode=${PIPESTATUS[0]}
  log "install: exit $icode in $(since "$t0") s; prefix $(du -sh "$prefix" 2>/dev/null | cut -f1)"
  cp "$prefix/.cudaup-receipt.json" "$out/receipt.json" 2>/dev/null || true
  log "== the prefix"
  (cd "$prefix" && ls && ls -l lib64/libcudart.so lib64/libnvrtc.so lib64/libcublas.so lib64/libcudnn.so lib64/stubs nvvm/lib64 extras/CUPTI targets/x86_64-linux 2>&1 | head -40
   head -16 version.json) 2>&1 | sed "s#$work#\$WORK#g" | tee -a "$t"

  if [ -n "${SKIP_VERIFY:-}" ]; then
    [ -n "${KEEP_WORK:-}" ] || rm -rf "$work"
    return "$icode"
  fi
  log "== \$ cudaup verify --venv $venv"
  t0=$(date +%s.%N)
  timeout "$(left)" "$cudaup" --home "$home" verify --venv "$venv" 2>&1 | sed "s#$work#\$WORK#g" | tee "$out/verify.txt" | tee -a "$t"
  local vcode=${PIPESTATUS[0]}
  log "verify: exit $vcode in $(since "$t0") s"
  # The JSON document too, when time is left (it runs every check again).
  if [ "$(left)" -gt 120 ]; then
    timeout "$(left)" "$cudaup" --home "$home" verify --venv "$venv" --json >"$out/verify.json" 2>/dev/null || true
  fi
  log "== wall time: $(( $(date +%s) - began )) s"
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$work"
  [ "$icode" = 0 ] || return "$icode"
  return "$vcode"
}

case "$mode" in
  stage) stage ;;
  run) run_proof ;;
  *) sed -n '2,28p' "$0" >&2; exit 2 ;;
esac
