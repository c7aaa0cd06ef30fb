#!/usr/bin/env bash
# Benchmark (not a test): wall time of `cudaup detect --json` against `nvidia-smi -q`, the
# baseline named in issue 2 (cudaup's whole detect should need at most a third of it).
# Usage: scripts/bench-detect.sh [path/to/cudaup] [runs]
set -euo pipefail
bin=${1:-target/dist/cudaup}
runs=${2:-21}
median_ms() { # runs "$@" $runs times, prints the median wall time in milliseconds
  local times=()
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(date +%s%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'
}
"$bin" detect --json >/dev/null # warm the page cache once
ours=$(median_ms "$bin" detect --json)
if command -v nvidia-smi >/dev/null; then
  base=$(median_ms nvidia-smi -q)
  awk -v o="$ours" -v b="$base" 'BEGIN {printf "cudaup detect --json: %s ms (median of %d)\nnvidia-smi -q:        %s ms\nratio:                %.2f (target <= 0.33)\n", o, '"$runs"', b, o/b}'
else
  echo "cudaup detect --json: $ours ms (median of $runs); no nvidia-smi here, so no ratio"
fi
