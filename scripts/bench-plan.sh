#!/usr/bin/env bash
# Benchmark (not a test): wall time of `cudaup plan` over the full embedded catalog, for a few
# machines, against the 20 ms (median) budget of issue 3. Each run is a whole process: start-up,
# catalog parse, resolve, render. The last cases plan from a refreshed catalog in $CUDAUP_HOME
# (issue 12: read from disk, every file's sha256 checked against catalog.toml first).
# Usage: scripts/bench-plan.sh [path/to/cudaup] [runs]
set -euo pipefail
bin=${1:-target/dist/cudaup}
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
cat >"$tmp/pascal.json" <<'JSON'
{"os": {"family": "linux", "distro": "ubuntu", "version": "24.04", "arch": "x86_64", "wsl": false},
 "gpus": [{"index": 0, "vendor": "nvidia", "name": "NVIDIA GeForce GTX 1080 Ti", "compute_capability": "6.1", "architecture": "Pascal"}],
 "driver": {"version": "580.95.05"}}
JSON
# A refreshed catalog as `manifests update` leaves it: the files, dated today, with their sha256.
home="$tmp/home"; mkdir -p "$home/manifests"
cp "$here"/manifests/*.toml "$home/manifests/"
sed -i "s/^date = .*/date = \"$(date -u +%Y-%m-%d)\"/" "$home/manifests/catalog.toml"
{ echo; echo "[files]"
  for f in "$home"/manifests/*.toml; do
    n=$(basename "$f"); [ "$n" = catalog.toml ] && continue
    echo "\"$n\" = \"$(sha256sum "$f" | cut -d' ' -f1)\""
  done; } >>"$home/manifests/catalog.toml"
in_effect=$("$bin" --home "$home" plan --system "$here/tests/fixtures/h200-detect.json" --json)
grep -q '"origin": "refreshed' <<<"$in_effect" \
  || { echo "the refreshed catalog is not in effect" >&2; exit 1; }
# Median wall ms and median CPU ms (user + sys) of "$@". On a loaded machine the wall time
# measures the queue for a core; the CPU time is what the plan itself costs.
median_ms() {
  local times=() cpus=() cpu
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(date +%s%N)
    cpu=$( { TIMEFORMAT='%3U %3S'; time "$@" >/dev/null 2>&1 || true; } 2>&1 )
    t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
    cpus+=($(awk '{printf "%d", ($1 + $2) * 1000000}' <<<"$cpu"))
  done
  local wall c
  wall=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}')
  c=$(printf '%s\n' "${cpus[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}')
  echo "$wall $c"
}
printf '%-44s %10s %s %8s\n' "machine (plan --json)" "median ms" "vs 20 ms budget" "cpu ms"
for case in "H200 fixture, full:$here/tests/fixtures/h200-detect.json:full" \
            "RTX 4090 + GTX 1080 Ti, full:$tmp/mixed.json:full" \
            "Tesla K80, full (unsupported, worst case):$tmp/k80.json:full" \
            "Tesla K80, cuda-dev:$tmp/k80.json:cuda-dev" \
            "GTX 1080 Ti, tensorflow (constraints):$tmp/pascal.json:tensorflow" \
            "H200 fixture, full, refreshed catalog:$here/tests/fixtures/h200-detect.json:full:$home" \
            "GTX 1080 Ti, tensorflow, refreshed catalog:$tmp/pascal.json:tensorflow:$home"; do
  IFS=: read -r name file profile with_home <<<"$case"
  read -r ms cpu < <(median_ms "$bin" --home "${with_home:-$tmp/empty}" plan --system "$file" --profile "$profile" --json)
  awk -v n="$name" -v m="$ms" -v c="$cpu" 'BEGIN {printf "%-44s %10s %.2fx %22s\n", n, m, m/20, c}'
done
