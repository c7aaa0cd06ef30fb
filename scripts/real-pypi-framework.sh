#!/usr/bin/env bash
# The H200's framework from real PyPI, through cudaup's own route choice, beside a plain pip
# install of the same requirements. NOT part of CI: it downloads several GB.
#
#   scripts/real-pypi-framework.sh            # uses target/debug/cudaup (builds it if missing)
#   CUDAUP=path/to/cudaup scripts/real-pypi-framework.sh
#
# What it does:
#   1. `cudaup plan --system tests/fixtures/h200-detect.json --profile pytorch --probe`: the plan
#      for the H200 and the route `auto` takes from here (download.pytorch.org does not answer
#      on this machine, PyPI does, so it must be PyPI: torch 2.15.0 is PyPI's cu132 build).
#   2. `cudaup install` of that plan into a fresh venv in a temporary home (pip, no cache, so
#      both runs download everything), timed; then torch.__version__ and torch.version.cuda in
#      the venv, and the route in the venv's receipt.
#   3. A plain `python -m venv` + `pip install <the same requirements>` into another venv, timed.
#   4. Everything it made (venvs, home, temporary files) is deleted again.
# It refuses to start unless the disk keeps 5 GB free after the biggest step (one venv of
# about 7 GB plus pip's temporary copies of the wheels, ~3.5 GB; the venvs are made one after
# the other and each is deleted before the next). It prints the most disk the run took.
set -euo pipefail
cd "$(dirname "$0")/.."

need_gb=$((5 + 11))
avail_gb=$(df --output=avail -BG "${TMPDIR:-/tmp}" | tail -1 | tr -dc '0-9')
echo "free on ${TMPDIR:-/tmp}: ${avail_gb} GB (need ${need_gb} GB: 5 GB left after ~11 GB of venv and temporary files)"
if [ "$avail_gb" -lt "$need_gb" ]; then
  echo "not enough disk: free some space or set TMPDIR to a roomier disk" >&2
  exit 1
fi

CUDAUP=${CUDAUP:-target/debug/cudaup}
if [ ! -x "$CUDAUP" ]; then
  cargo build --quiet
fi
CUDAUP=$(realpath "$CUDAUP")
H200=$(realpath tests/fixtures/h200-detect.json)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/real-pypi.XXXXXX")
# The least free space seen while it runs, sampled every second.
( free0=$(df --output=avail -B1M "$WORK" | tail -1 | tr -dc '0-9'); least=$free0
  while sleep 1; do
    f=$(df --output=avail -B1M "$WORK" | tail -1 | tr -dc '0-9')
    [ "$f" -lt "$least" ] && least=$f
    echo "$((free0 - least))" >"$WORK.peak"
  done ) &
watcher=$!
cleanup() {
  kill "$watcher" 2>/dev/null || true
  rm -rf "$WORK" "$WORK.peak"
}
trap cleanup EXIT
export PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 CUDAUP_NO_UV=1

echo
echo "== 1. the plan for the H200, and the route from here"
"$CUDAUP" --home "$WORK/home" plan --system "$H200" --profile pytorch --probe | sed -n '/torch /,$p'
reqs=$("$CUDAUP" --home "$WORK/home" plan --system "$H200" --profile pytorch --probe --json \
  | python3 -c 'import json,sys; r=json.load(sys.stdin)["framework_route"]; print(r["route"], " ".join(r["requirements"]))')
route=${reqs%% *}
reqs=${reqs#* }
echo "route: $route   requirements: $reqs"
if [ "$route" != "pypi" ]; then
  echo "expected auto to take PyPI here (download.pytorch.org does not answer)" >&2
  exit 1
fi

echo
echo "== 2. cudaup install (auto route, pip, empty cache)"
t0=$(date +%s.%N)
"$CUDAUP" --home "$WORK/home" install --system "$H200" --profile pytorch \
  --venv "$WORK/cudaup-venv" --driver keep --yes --no-modify-path 2>"$WORK/cudaup-progress.txt"
t1=$(date +%s.%N)
cudaup_s=$(python3 -c "print(f'{$t1-$t0:.1f}')")
tail -n 3 "$WORK/cudaup-progress.txt"
echo "in the venv: $("$WORK/cudaup-venv/bin/python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)')"
python3 - "$WORK/home/receipts" <<'EOF'
import json, pathlib, sys
for p in pathlib.Path(sys.argv[1]).glob("venv-*.json"):
    r = json.loads(p.read_text())
    print("receipt route:", r["route"]["route"], r["route"]["base"], r["route"]["variant"], "|", " ".join(r["packages"]["requirements"]))
EOF
du -sh "$WORK/cudaup-venv" | sed 's/^/venv size: /'
python=$(python3 -c "import json,pathlib; print(next(json.loads(p.read_text())['base_python'] for p in pathlib.Path('$WORK/home/receipts').glob('venv-*.json')))")
rm -rf "$WORK/cudaup-venv"

echo
echo "== 3. plain pip: $python -m venv, then pip install $reqs"
t0=$(date +%s.%N)
"$python" -m venv "$WORK/pip-venv"
# shellcheck disable=SC2086
"$WORK/pip-venv/bin/python" -m pip install --quiet $reqs
t1=$(date +%s.%N)
pip_s=$(python3 -c "print(f'{$t1-$t0:.1f}')")
echo "in the venv: $("$WORK/pip-venv/bin/python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)')"
rm -rf "$WORK/pip-venv"

echo
echo "== result"
echo "cudaup install (probe + venv + pip + check): ${cudaup_s} s"
echo "plain venv + pip install:                    ${pip_s} s"
python3 -c "print(f'ratio cudaup/pip: {$cudaup_s/$pip_s:.2f}')"
echo "most disk taken at once: $(cat "$WORK.peak" 2>/dev/null || echo '?') MiB (other processes' writes included)"
