#!/usr/bin/env bash
# Proof on a GPU machine without network: install a CUDA 13 toolkit from NVIDIA's real wheels,
# carried over as a local mirror directory, then compile the seed's addKernel with the installed
# nvcc for this GPU's architecture and run it.
#
# On a connected machine:
#   pip download --no-deps -d wheels nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 \
#       nvidia-nvvm==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85
#   python3 scripts/make-wheel-mirror.py wheels wheel-mirror
# Copy cudaup and wheel-mirror/ to the GPU machine, then:
#   scripts/gpu-install-from-wheels.sh path/to/cudaup wheel-mirror [sm_XY]
set -euo pipefail
cudaup=${1:?usage: gpu-install-from-wheels.sh CUDAUP WHEEL_MIRROR [ARCH]}
mirror=$(cd "${2:?usage: gpu-install-from-wheels.sh CUDAUP WHEEL_MIRROR [ARCH]}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
arch=${3:-}
if [ -z "$arch" ]; then
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)
  arch="sm_${cc/./}"
fi
# The wheel route: components.toml's CUDA 13 wheels, less NVRTC (not needed to build addKernel,
# and the largest wheel) when the mirror does not carry it.
manifests="$work/manifests"
mkdir -p "$manifests"
"$cudaup" manifests check >/dev/null
for f in gpus cuda drivers cudnn pytorch tensorflow components; do
  cp "$here/../manifests/$f.toml" "$manifests/"
done
if ! ls "$mirror"/simple/nvidia-cuda-nvrtc >/dev/null 2>&1; then
  sed -i 's/, "nvidia-cuda-nvrtc"\]/]/' "$manifests/components.toml"
fi
prefix="$work/cuda-13.0"
time "$cudaup" --home "$work/home" --manifests "$manifests" install --profile cuda-dev --cuda 13.0 \
  --no-cudnn --source wheels --index-url "$mirror/simple" --prefix "$prefix" --yes
"$prefix/bin/nvcc" --version
"$prefix/bin/nvcc" -arch="$arch" "$here/addKernel.cu" -o "$work/addKernel"
"$work/addKernel"
echo "installed toolkit: $prefix ($(jq -r '.files | length' "$prefix/.cudaup-receipt.json" 2>/dev/null || echo '?') files in the receipt)"
