#!/usr/bin/env bash
# Benchmark (not a test): wall time of `cudaup plan` over the full embedded catalog, for a few
# machines, against the 20 ms (median) budget of issue 3. Each run is a whole process: start-up,
# catalog parse, resolve, render.
# Usage: scripts/bench-plan.sh [path/to/cudaup] [runs]
set -euo pipefail
bin=${1:-target/release/cudaup}
runs=${2:-31}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/mixed.json" <<'JSON'
{"os": {"family": "linux", "distro": "ubuntu", "version": "24.04", "arch": "x86_64", "wsl": false},
 "gpus": [{"index": 0, "vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9", "architecture": "Ada"},
          {"index": 1, "vendor": "nvidia", "name": "NVIDIA GeForce GTX 1080 Ti", "compute_capability": "6.1", "architecture": "Pascal"}]}
JSON
cat >"$tmp/k80.json" <<'JSON'
{"os": {"family": "linux", "distro": "ubuntu", "version": "20.04", "arch": "x86_64", "wsl": false},
 "gpus": [{"index": 0, "vendor": "nvidia", "name": "Tesla K80", "compute_capability": "3.7", "architecture": "Kepler"}],
 "driver": {"version": "470.256.02"}}
JSON
median_ms() {
  local times=()
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(date +%s%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'
}
printf '%-44s %10s %s\n' "machine (plan --json)" "median ms" "vs 20 ms budget"
for case in "H200 fixture, full:$here/tests/fixtures/h200-detect.json:full" \
            "RTX 4090 + GTX 1080 Ti, full:$tmp/mixed.json:full" \
            "Tesla K80, full (unsupported, worst case):$tmp/k80.json:full" \
            "Tesla K80, cuda-dev:$tmp/k80.json:cuda-dev"; do
  IFS=: read -r name file profile <<<"$case"
  ms=$(median_ms "$bin" plan --system "$file" --profile "$profile" --json)
  awk -v n="$name" -v m="$ms" 'BEGIN {printf "%-44s %10s %.2fx\n", n, m, m/20}'
done
