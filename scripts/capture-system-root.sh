#!/usr/bin/env bash
# Copies what `cudaup detect --system-root DIR` reads into DIR, so a machine's picture can be
# attached to a bug report or turned into a test fixture. Reads only; needs no root. Libraries
# and package directories are recorded by name only (empty placeholders): their names carry the
# versions detect reads.
# Usage: scripts/capture-system-root.sh DIR
set -euo pipefail
out=${1:?usage: capture-system-root.sh DIR}
mkdir -p "$out"
copy() { # a file's bytes (procfs/sysfs files report size 0, so cat rather than cp)
  local src=$1
  [ -r "$src" ] && [ -f "$src" ] || return 0
  mkdir -p "$out$(dirname "$src")"
  cat "$src" >"$out$src" 2>/dev/null || rm -f "$out$src"
}
placeholder() { # an empty file or directory of the same name
  local src=$1
  mkdir -p "$out$(dirname "$src")"
  # Directories get a marker file so they survive in git, which keeps no empty directories.
  if [ -d "$src" ]; then mkdir -p "$out$src" && : >"$out$src/.captured"; else : >"$out$src"; fi
}
link() { # a symlink, as a symlink
  local src=$1
  mkdir -p "$out$(dirname "$src")"
  ln -sfn "$(readlink "$src")" "$out$src"
}
for f in /etc/os-release /usr/lib/os-release /proc/version /proc/modules \
         /proc/driver/nvidia/version /sys/module/nvidia/version /sys/module/nouveau/version \
         /etc/ld.so.cache /.dockerenv /run/.containerenv /proc/1/cgroup; do
  copy "$f"
done
for f in /sys/firmware/efi/efivars/SecureBoot-*; do copy "$f"; done
for d in /sys/bus/pci/devices/*; do
  for f in vendor device class; do copy "$d/$f"; done
done
for d in /usr/local/cuda* /opt/cuda; do
  [ -e "$d" ] || continue
  if [ -L "$d" ]; then link "$d"; continue; fi
  for f in version.json version.txt include/cudnn_version.h; do copy "$d/$f"; done
  [ -e "$d/bin/nvcc" ] && placeholder "$d/bin/nvcc"
  for f in "$d"/lib64/libcudnn.so.*; do [ -e "$f" ] && placeholder "$f"; done
done
for f in /usr/include/cudnn_version*.h /usr/include/*-linux-gnu/cudnn_version*.h; do copy "$f"; done
for dir in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/local/nvidia/lib64 /usr/lib/wsl/lib; do
  for f in "$dir"/libcudnn.so.* "$dir"/libnvidia-ml.so.*; do [ -e "$f" ] && placeholder "$f"; done
done
# Pythons: interpreter links, venv configs, and the few package files detect reads.
for p in /usr/bin/python3 /usr/local/bin/python3 /opt/*/.venv/bin/python3 /opt/*/venv/bin/python3 \
         /root/.venv/bin/python3 /home/*/.venv/bin/python3; do
  [ -e "$p" ] || continue
  if [ -L "$p" ]; then link "$p"; else placeholder "$p"; fi
  copy "$(dirname "$(dirname "$p")")/pyvenv.cfg"
done
for site in /usr/lib/python3/dist-packages /usr/local/lib/python3*/dist-packages \
            /opt/*/.venv/lib/python3*/site-packages /opt/*/venv/lib/python3*/site-packages \
            /root/.venv/lib/python3*/site-packages /home/*/.venv/lib/python3*/site-packages; do
  [ -d "$site" ] || continue
  mkdir -p "$out$site" && : >"$out$site/.captured"
  copy "$site/torch/version.py"
  copy "$site/tensorflow/python/platform/build_info.py"
  for d in "$site"/torch-*.dist-info "$site"/tensorflow*-*.dist-info "$site"/nvidia_cudnn_cu*-*.dist-info; do
    [ -e "$d" ] && placeholder "$d"
  done
done
echo "captured into $out"
