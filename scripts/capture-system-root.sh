#!/usr/bin/env bash
# Copies the files `cudaup detect --system-root DIR` reads into DIR, so a machine's picture can be
# attached to a bug report or turned into a test fixture. Reads only; needs no root.
# Usage: scripts/capture-system-root.sh DIR
set -euo pipefail
out=${1:?usage: capture-system-root.sh DIR}
mkdir -p "$out"
copy() { # copy a file's bytes (procfs/sysfs files report size 0, so cat rather than cp)
  local src=$1
  [ -r "$src" ] || return 0
  mkdir -p "$out$(dirname "$src")"
  cat "$src" >"$out$src" 2>/dev/null || rm -f "$out$src"
}
for f in /etc/os-release /usr/lib/os-release /proc/version /proc/modules \
         /proc/driver/nvidia/version /sys/module/nvidia/version /sys/module/nouveau/version \
         /etc/ld.so.cache /.dockerenv /run/.containerenv /proc/1/cgroup; do
  copy "$f"
done
for f in /sys/firmware/efi/efivars/SecureBoot-*; do copy "$f"; done
for d in /sys/bus/pci/devices/*; do
  for f in vendor device class subsystem_vendor subsystem_device; do copy "$d/$f"; done
done
# CUDA toolkits: only their version files, not the toolkits.
for d in /usr/local/cuda*; do
  for f in version.json version.txt include/cudnn_version.h; do copy "$d/$f"; done
done
for f in /usr/include/cudnn_version.h /usr/include/x86_64-linux-gnu/cudnn_version*.h; do copy "$f"; done
echo "captured into $out"
