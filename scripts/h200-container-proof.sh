#!/bin/bash
# cudaup container proof on the H200: Debian 12's Podman 4.3.1 carried in, a CDI spec written by
# cudaup from the loaded driver, addKernel run inside a container.
# Carried beside it in .devc/: pm.tar.xz (Debian 12's podman, conmon, runc, busybox, their
# libraries and /etc/containers, /usr/share/containers) and cudaup.xz (a stripped cudaup); see
# docs/container.md. Writes its transcript to $OUT/$TRANSCRIPT (default transcript.txt).
# CUDAUP=BIN uses that cudaup instead of unpacking cudaup.xz; NVCC=PATH builds the in-container
# programs with that nvcc (a toolkit with cuBLAS, e.g. one cudaup installed; default
# /usr/local/cuda/bin/nvcc); HOME_DIR=DIR is cudaup's --home.
B=${1:-$PWD/.devc}
W=${W:-/opt/cudaup-proof}
mkdir -p "$W"
T=$OUT/${TRANSCRIPT:-transcript.txt}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
exec > >(tee -a "$T") 2>&1
step() { echo; echo "\$ $*"; "$@"; echo "[exit $?]"; }
echo "== the machine"; date -u
cat /etc/os-release | head -4; uname -r
grep -E "^Cap(Eff|Bnd)" /proc/self/status; mount | grep cgroup | head -12
ls -la /dev/nvidia* ; cat /proc/driver/nvidia/version; ls /proc/driver/nvidia/gpus/ 2>&1
ls /usr/local/nvidia/ /usr/local/nvidia/bin 2>&1 | head; ls /usr/local/nvidia/lib64 | grep -E "so\.[0-9]+\.[0-9]+" | head -40
nvidia-smi -L 2>&1 || /usr/local/nvidia/bin/nvidia-smi -L
echo "== unpacking"
mkdir -p $W/pm && tar -C "$W" -xJf "$B/pm.tar.xz"
[ -n "${CUDAUP:-}" ] || { xz -dc "$B/cudaup.xz" > $W/cudaup && chmod +x $W/cudaup; }
mkdir -p /etc/containers /usr/share/containers && cp -r --update=none $W/pm/etc/containers/* /etc/containers/ && cp --update=none $W/pm/share/containers/* /usr/share/containers/
mkdir -p $W/bin
# Podman hands conmon (and conmon runc) a clean environment: each gets a wrapper that points
# the loader at the carried Debian libraries.
# $W is written into them now: Podman starts them with an environment of its own.
for p in podman conmon runc; do printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/pm/lib exec %s/pm/bin/%s "$@"\n' "$W" "$W" $p > $W/bin/$p; chmod +x $W/bin/$p; done
printf '[engine]\nconmon_path = ["%s/bin/conmon"]\nruntime = "runc"\n[engine.runtimes]\nrunc = ["%s/bin/runc"]\n' "$W" "$W" > $W/pm/containers.conf
export CONTAINERS_CONF=$W/pm/containers.conf
export PATH=$W/bin:/usr/local/cuda/bin:/usr/local/nvidia/bin:$PATH
step podman --version
step podman info --format '{{.Host.CgroupsVersion}} {{.Host.CgroupManager}} {{.Host.OCIRuntime.Name}} {{.Store.GraphDriverName}}'
# A busybox image, no registry: does a plain container run at all?
mkdir -p $W/bb/bin && cp $W/pm/bin/busybox $W/bb/bin/ && for a in sh ls cat env true; do ln -sf busybox $W/bb/bin/$a; done
tar -C $W/bb -cf $W/bb.tar . && step podman import $W/bb.tar localhost/bb:1
if ! podman run --rm --network=none localhost/bb:1 /bin/true; then
  echo "plain run failed; retrying with ulimits lowered (no CAP_SYS_RESOURCE?)"
  printf '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n' >> $W/pm/containers.conf
  step podman run --rm --network=none localhost/bb:1 /bin/true
fi
cat $W/pm/containers.conf
C=${CUDAUP:-$W/cudaup}
[ -n "${HOME_DIR:-}" ] && C="$C --home $HOME_DIR"
step $C --version
step $C container plan
step $C container doctor
step $C container setup --engine podman
step ls -la /etc/cdi
cp /etc/cdi/cudaup-nvidia.json $OUT/cdi-spec.json
step $C container doctor
step $C doctor
step podman run --rm --network=none --device nvidia.com/gpu=all localhost/bb:1 /bin/sh -c 'ls -l /dev/nvidia*; ls -l /usr/lib/x86_64-linux-gnu | head -30; nvidia-smi -L'
step $C container verify --engine podman --nvcc $NVCC
$C container verify --engine podman --nvcc $NVCC --json > $OUT/container-verify.json 2>&1
step $C container uninstall
step ls -la /etc/cdi
echo "== done"; date -u
