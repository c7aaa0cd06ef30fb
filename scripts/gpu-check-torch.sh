#!/usr/bin/env bash
# Proof on a GPU machine: cudaup's post-install check passes against a real CUDA torch, and fails
# with the right message against a CPU-only torch stand-in.
# Usage: scripts/gpu-check-torch.sh CUDAUP VENV_WITH_TORCH TORCH_PIN   (e.g. /opt/torch/.venv 2.11)
set -uo pipefail
cudaup=${1:?usage: gpu-check-torch.sh CUDAUP VENV TORCH_PIN}
venv=${2:?usage}
pin=${3:?usage}
home=$(mktemp -d)
echo "== the real torch in $venv"
time "$cudaup" --home "$home" install --profile pytorch --torch "$pin" --venv "$venv" --yes --no-modify-path
echo "exit code $?"

echo "== a CPU-only stand-in claiming the same version"
stand_in=$(mktemp -d)/cpu-venv
"$venv/bin/python" -m venv --without-pip "$stand_in"
site=$("$stand_in/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
version=$("$venv/bin/python" -c 'import torch; print(torch.__version__)' 2>/dev/null)
mkdir -p "$site/torch/cuda"
cat >"$site/torch/version.py" <<PY
__version__ = '$version'
cuda = None
PY
cat >"$site/torch/__init__.py" <<'PY'
from torch.version import __version__
from torch import version, cuda
PY
cat >"$site/torch/cuda/__init__.py" <<'PY'
def is_available(): return False
def get_arch_list(): return []
def device_count(): return 0
PY
"$cudaup" --home "$home" install --profile pytorch --torch "$pin" --venv "$stand_in" --yes --no-modify-path
echo "exit code $? (4 expected)"
