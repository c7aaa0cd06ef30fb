#!/usr/bin/env bash
# Proof on the H200 machine for `cudaup bench` (issue 18): the whole `bench --quick` with the
# torch in /opt/torch/.venv, its table as a transcript, report.json, throughput.png, and the
# refusal of a venv without torch (exit 5). Everything lands in $OUT.
#
# Usage: scripts/h200-bench-proof.sh [CUDAUP] [VENV]
#   CUDAUP  the cudaup binary [default: target/release/cudaup, carried over]
#   VENV    a venv with CUDA torch and torchvision [default: /opt/torch/.venv]
#   OUT     where the results go [default: ./h200-bench-proof]
#   TRT_WHEELS  optional: a directory holding tensorrt-cu13, -bindings and -libs wheels; they
#           are installed into VENV without network and `cudaup verify` runs its TensorRT check.
#
# The device run stays under 10 minutes: the bench is capped at 540 s (a quick run takes about
# five), the rest takes seconds.
set -uo pipefail
cudaup=${1:-target/release/cudaup}
venv=${2:-/opt/torch/.venv}
out=${OUT:-$PWD/h200-bench-proof}
mkdir -p "$out"
home=$(mktemp -d)
# NVLink SHARP stays off for every NCCL user on these machines (cudaup sets it for its own
# processes too).
export NCCL_NVLS_ENABLE=0
began=$(date +%s)

{
  echo "== machine"
  nvidia-smi
  nvidia-smi --query-gpu=name,pci.bus_id,power.limit,power.default_limit,clocks.max.sm,temperature.gpu --format=csv
  echo "CPUs: $(nproc)"
  "$venv/bin/python" -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__, "cuDNN", torch.backends.cudnn.version())'
} >"$out/machine.txt" 2>&1

echo "== cudaup bench --quick --venv $venv --effective-batch 4096" | tee "$out/transcript.txt"
timeout 540 "$cudaup" --home "$home" bench --quick --venv "$venv" --effective-batch 4096 \
  --out "$out/run" 2>&1 | tee -a "$out/transcript.txt"
code=${PIPESTATUS[0]}
echo "exit code $code (0: everything measured)" | tee -a "$out/transcript.txt"
cp "$out/run/report.json" "$out/bench.json" 2>/dev/null || echo "no report.json" | tee -a "$out/transcript.txt"
cp "$out/run/throughput.png" "$out/throughput.png" 2>/dev/null || echo "no throughput.png" | tee -a "$out/transcript.txt"

echo "== a venv without torch is refused" | tee -a "$out/transcript.txt"
bare=$(mktemp -d)/notorch
python3 -m venv --without-pip "$bare" 2>/dev/null || "$venv/bin/python" -m venv --without-pip "$bare"
"$cudaup" --home "$home" bench --quick --venv "$bare" --out "$out/refused" 2>&1 | tee -a "$out/transcript.txt"
echo "exit code ${PIPESTATUS[0]} (5 expected)" | tee -a "$out/transcript.txt"

if [ -n "${TRT_WHEELS:-}" ]; then
  echo "== TensorRT from $TRT_WHEELS, then cudaup verify" | tee -a "$out/transcript.txt"
  "$venv/bin/python" -m pip install --no-index --find-links "$TRT_WHEELS" tensorrt-cu13 2>&1 | tail -3 | tee -a "$out/transcript.txt"
  timeout 240 "$cudaup" --home "$home" verify --venv "$venv" 2>&1 | tee -a "$out/transcript.txt"
  echo "exit code ${PIPESTATUS[0]}" | tee -a "$out/transcript.txt"
else
  echo "== TensorRT: not run (no TRT_WHEELS; the tensorrt-cu13-libs wheel is not on PyPI, see the README)" | tee -a "$out/transcript.txt"
fi
echo "wall time: $(( $(date +%s) - began )) s" | tee -a "$out/transcript.txt"
ls -la "$out" >>"$out/transcript.txt"
