#!/usr/bin/env bash
# Stages Podman for a device with no engine and no network (issue 44's container step): this
# Debian 12 machine's Podman 4.3.1, conmon, runc and the static busybox, the libraries they load
# except glibc's own (the device's glibc is newer; mixing two glibcs breaks the loader), and
# Podman's configuration, packed as DEST/pm.tar.xz with the layout scripts/h200-container-proof.sh
# unpacks: pm/bin, pm/lib, pm/etc/containers, pm/share/containers.
#   apt-get install podman runc conmon busybox-static   # once, here
#   scripts/h200-stage-podman.sh .devc                  # DEST inside the checkout, git-ignored
set -euo pipefail
dest=${1:?usage: $0 DEST}
for p in podman conmon runc busybox; do command -v "$p" >/dev/null || { echo "error: $p is not installed here (apt-get install podman runc conmon busybox-static)" >&2; exit 2; }; done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/pm/bin" "$tmp/pm/lib" "$tmp/pm/etc" "$tmp/pm/share"
for p in podman conmon runc busybox; do cp -L "$(command -v "$p")" "$tmp/pm/bin/"; done
# Every library the three dynamic programs load, glibc's excepted.
for p in podman conmon runc; do ldd "$(command -v "$p")"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux-x86-64)\.so' |
  while read -r lib; do cp -L "$lib" "$tmp/pm/lib/"; done
cp -rL /etc/containers "$tmp/pm/etc/"
cp -rL /usr/share/containers "$tmp/pm/share/"
mkdir -p "$dest"
tar -C "$tmp" -cJf "$dest/pm.tar.xz" pm
echo "$dest/pm.tar.xz: $(du -h "$dest/pm.tar.xz" | cut -f1) ($(podman --version), $(runc --version | head -1), $(ls "$tmp/pm/lib" | wc -l) libraries)"
