#!/usr/bin/env bash
# Issue 44's proof on one H200 (kind nvidia-h200), in two device calls of under 10 minutes each.
#   a  the pipeline: CUDA 13.0.2's standard set from a local wheel mirror (install with rc hooks,
#      verify, doctor, a deleted library -> doctor -> repair -> repair is a no-op, uninstall
#      --purge leaves $HOME's files and the work directory as they were); containers: Podman
#      carried in, cudaup's CDI spec, `container verify` (addKernel, a cuBLAS GEMM, nvidia-smi -L
#      inside); monitor: ResNet-50 fed by 0 and by 8 DataLoader workers, each against
#      `nvidia-smi dmon` sampled beside it, with a --plot PNG.
#   b  `bench --quick` against an independent measurement (scripts/h200-bench-reference.py).
#   f  the full profile with uv brought by cudaup: the image's torch, torchvision and torchaudio
#      packed back into wheels (with every requirement) beside uv's real wheel, `install --profile
#      full` from that folder (cuDNN pinned to the image's own nvidia-cudnn-cu13, the only one
#      there), verify, doctor, torch's CUDA library removed -> doctor -> repair -> verify ->
#      repair (nothing to do), uninstall --purge with $HOME byte-exact.
#   j  JAX: `install --profile jax` from a folder of wheels (the device's installed jax[cuda13]
#      packed back into wheels by scripts/wheels-from-venv.py, nvcc/nvvm from the toolkit mirror,
#      uv's real wheel carried), uv brought and verified by cudaup, `verify` (a jitted matmul on
#      the GPU, whose CUDA libraries), doctor, the plugin removed -> doctor -> repair -> doctor,
#      uninstall --purge.
# Carried in .devc/ (git-ignored), made here:
#   cargo build --release && cp target/release/cudaup .devc/cudaup
#   CARRY_DIR=$PWD/.devc/h200-carry scripts/h200-toolkit-proof.sh stage
#   scripts/h200-stage-podman.sh .devc
#   mkdir -p .devc/uv && pip download --no-deps --only-binary=:all: --platform musllinux_1_1_x86_64 \
#     --python-version 3.12 uv==0.13.9 -d .devc/uv          (part j: the uv wheel manifests/uv.toml pins)
#   part j's call carries .devc/cudaup, .devc/uv and .devc/jaxcarry (h200-carry's wheels.json cut to
#   nvidia-cuda-nvcc, nvidia-nvvm and nvidia-cuda-crt, with their files) to stay under 64 MiB.
# The device call: run(command="bash scripts/h200-proof.sh a", carry=[".devc"], timeout_s=600)
# Writes $OUT/transcript-<part>.txt (device paths replaced by $WORK), the plots, and
# $OUT/proof-<part>.tar.gz with every file the steps wrote.
set -uo pipefail
part=${1:?usage: $0 a|b|c|f|j|m}
here=$(cd "$(dirname "$0")/.." && pwd)
D=$here/.devc
C=$D/cudaup
W=/opt/cudaup-proof
P=$W/out-$part
OUT=${OUT:-$here/h200-proof}
mkdir -p "$W" "$P" "$OUT"
chmod +x "$C" 2>/dev/null
export NCCL_NVLS_ENABLE=0
py=/opt/torch/.venv/bin/python; [ -x "$py" ] || py=python3
T=$P/transcript.txt
exec > >(sed -u "s#$W#\$WORK#g" | tee "$T" "$OUT/transcript-$part.txt") 2>&1  # $OUT's copy survives a timeout
began=$(date +%s)
step() {
  local t0; t0=$(date +%s.%N)
  echo; echo "\$ $*"
  "$@"; local code=$?
  echo "[exit $code in $(python3 -c "import time,sys; print(f'{time.time()-float(sys.argv[1]):.1f}')" "$t0") s]"
  return $code
}
finish() {
  echo; echo "== wall time of part $part: $(( $(date +%s) - began )) s"
  sleep 1
  cp "$P"/*.png "$OUT/" 2>/dev/null
  tar -C "$P" -czf "$OUT/proof-$part.tar.gz" . 2>/dev/null
}
trap finish EXIT

echo "== the machine ($(date -u))"
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv
echo "CPUs: $(nproc); $(uname -srm); $(. /etc/os-release; echo "$PRETTY_NAME")"
$py -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__)'
step "$C" --version
ldconfig -p | grep -E "libnvidia-ml.so.1|libcuda.so.1" || echo "NVML/libcuda not in the loader cache"
# The image sets LD_LIBRARY_PATH to its own toolkit, which shadows a venv's CUDA wheels (verify
# says so, and its fix is to unset it): the steps run as a user who followed that fix; part j
# puts it back for one verify to show the finding.
echo "LD_LIBRARY_PATH in the image: ${LD_LIBRARY_PATH:-<unset>}"; unset LD_LIBRARY_PATH

snapshot() {  # $HOME's files (caches aside: the CUDA driver's JIT cache ~/.nv is the GPU programs', not cudaup's; $OUT is this script's) and the work tree, with their sha256
  local out_rel="./${OUT#"$HOME"/}"
  (cd ~ && find . -xdev \( -path ./.cache -o -path ./.nv -o -path ./.local/share/containers -o -path ./.config/containers -o -path "$out_rel" \) -prune -o -type f -print0 | sort -z | xargs -0 sha256sum)
  find "$W/t" -mindepth 1 -maxdepth 1 ! -name wheels ! -name mirror | sort  # the mirror is the proof's own
}

part_a() {
  home=$W/t/home prefix=$W/t/cuda-13.0.2
  echo; echo "== 1. the pipeline: the toolkit from a local mirror of carried and rebuilt wheels"
  mkdir -p "$W/t"
  snapshot > "$P/before.txt"
  WORK=$W/t KEEP_WORK=1 MODIFY_PATH=1 OUT=$P/toolkit CUDAUP=$C CARRY_DIR=$D/h200-carry BUDGET_S=260 \
    bash "$here/scripts/h200-toolkit-proof.sh" run >/dev/null 2>&1 &
  local tk=$!
  # (the toolkit proof's own transcript is printed below once it ends)
  wait $tk; echo "toolkit proof: exit $?"
  sed "s#$W#\$WORK#g" "$P/toolkit/transcript.txt"
  echo; echo "== doctor, a deleted library, repair, repair again"
  step "$C" --home "$home" doctor
  lib=$(readlink -f "$prefix/lib64/libcufft.so")
  step rm -f "$lib"
  step "$C" --home "$home" doctor
  step "$C" --home "$home" repair --yes
  step "$C" --home "$home" repair --yes
  step "$C" --home "$home" doctor

  echo; echo "== 3. containers: Podman (Debian 12's 4.3.1, carried), cudaup's CDI spec, addKernel and cuBLAS inside"
  NVCC=$prefix/bin/nvcc CUDAUP=$C HOME_DIR=$home W=$W/pm-work OUT=$P TRANSCRIPT=container-transcript.txt \
    timeout 200 bash "$here/scripts/h200-container-proof.sh" "$D" >/dev/null 2>&1
  echo "container proof: exit $?"
  cat "$P/container-transcript.txt"

  echo; echo "== 1 (end). uninstall --purge, then \$HOME and the work tree as before the install"
  step "$C" --home "$home" uninstall --purge --yes
  ls -la "$W/t"
  snapshot > "$P/after.txt"
  if diff "$P/before.txt" "$P/after.txt"; then echo "byte-exact: every file of \$HOME (caches aside) and the work tree as before"; else echo "DIFFERS (above)"; fi

  monitor_runs
}

monitor_runs() {
  echo; echo "== 2. monitor: ResNet-50 fed by ${MONITOR_WORKERS:-0 8} DataLoader workers (JPEGs ${JPEG:-375x500}); nvidia-smi dmon beside"
  for w in ${MONITOR_WORKERS:-0 8}; do
    TZ=UTC nvidia-smi dmon -s pum -o DT -d 1 > "$P/dmon-w$w.txt" 2>&1 &
    local dm=$!
    step "$C" --home "$W/mon-home" monitor --json --plot "$P/monitor-w$w.png" -- \
      "$py" "$here/scripts/h200-monitor-train.py" --workers $w --seconds 40 --jpeg "${JPEG:-375x500}" > "$P/monitor-w$w.jsonl" 2> "$P/monitor-w$w.err"
    sleep 1; kill $dm 2>/dev/null; wait $dm 2>/dev/null
    grep -v '^\[' "$P/monitor-w$w.err" | tail -14
    step "$py" "$here/scripts/h200-monitor-compare.py" "$P/monitor-w$w.jsonl" "$P/dmon-w$w.txt"
  done
}

part_b() {
  echo; echo "== 5. bench --quick, and an independent measurement beside it"
  step timeout 420 "$C" --home "$W/bench-home" bench --quick --venv /opt/torch/.venv --out "$P/bench"
  cp "$P/bench/throughput.png" "$P/bench-throughput.png" 2>/dev/null
  "$py" "$here/scripts/h200-bench-reference.py" > "$P/reference.json"
  step "$py" "$here/scripts/h200-bench-reference.py" --compare "$P/bench/report.json" "$P/reference.json"
}

part_c() {  # the container step alone, on a toolkit installed the same way as in part a
  home=$W/t/home prefix=$W/t/cuda-13.0.2
  mkdir -p "$W/t"
  WORK=$W/t KEEP_WORK=1 OUT=$P/toolkit CUDAUP=$C CARRY_DIR=$D/h200-carry BUDGET_S=200 SKIP_VERIFY=1 \
    bash "$here/scripts/h200-toolkit-proof.sh" run >/dev/null 2>&1
  echo "toolkit: exit $? ($(grep -m1 '^install: exit' "$P/toolkit/transcript.txt" | sed "s#$W#\$WORK#g"))"
  echo; echo "== 3. containers: Podman (Debian 12's 4.3.1, carried), cudaup's CDI spec, addKernel and cuBLAS inside"
  NVCC=$prefix/bin/nvcc CUDAUP=$C HOME_DIR=$home W=$W/pm-work OUT=$P TRANSCRIPT=container-transcript.txt \
    timeout 240 bash "$here/scripts/h200-container-proof.sh" "$D" >/dev/null 2>&1
  echo "container proof: exit $?"
  cat "$P/container-transcript.txt"
  step "$C" --home "$home" uninstall --purge --yes
}

part_j() {
  local home=$W/j/home venv=$W/j/venv wheels=$W/j/wheels site
  site=$(/opt/torch/.venv/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  mkdir -p "$W/j"
  echo; echo "== 4. JAX: a folder of wheels: the image's jax[cuda13] packed back, the toolkit's nvcc/nvvm, uv's real wheel"
  local carry=$D/h200-carry; [ -d "$D/jaxcarry" ] && carry=$D/jaxcarry  # nvcc, nvvm, crt alone: the calls' 64 MiB
  "$py" "$here/scripts/h200-toolkit-mirror.py" rebuild "$carry" "$site" /usr/local/cuda-13.0 "$W/j/tk" > "$P/tk-mirror.txt" 2>&1
  echo "toolkit wheels rebuilt: exit $? ($(ls "$W/j/tk"/*.whl 2>/dev/null | wc -l) wheels)"
  mkdir -p "$wheels"
  step "$py" "$here/scripts/wheels-from-venv.py" "$site" "$wheels" 'jax[cuda13]'
  for n in nvidia_cuda_nvcc nvidia_nvvm nvidia_cuda_crt; do cp -n "$W/j/tk/$n"-*.whl "$wheels/"; done
  cp "$D"/uv/*.whl "$wheels/"
  ls "$wheels" | sed 's/^/  /'
  echo; echo "== install --profile jax (the plan for this H200 on driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader))"
  step "$C" --home "$home" plan --profile jax --jax 0.11.2 --driver keep --pypi-index "$wheels"
  step "$C" --home "$home" install --profile jax --jax 0.11.2 --driver keep --pypi-index "$wheels" --venv "$venv" --no-modify-path --yes
  step "$C" --home "$home" verify --venv "$venv"
  step "$C" --home "$home" verify --venv "$venv" --json > "$P/verify-jax.json"
  step "$C" --home "$home" doctor
  # The image's loader cache lists its system toolkit, so a by-name lookup of the plugin can land
  # there (verify says so and names the fix). Follow the fix's second half on this throwaway
  # machine: the toolkit's ld.so.conf.d entries out, ldconfig, verify again; put back at the end.
  local confs; confs=$(grep -l '/usr/local/cuda' /etc/ld.so.conf.d/*.conf 2>/dev/null | xargs -r grep -L '/usr/local/nvidia' || true)  # the toolkit's entries, never the driver's
  if [ -n "$confs" ]; then
    echo; echo "== verify's advice followed: $(echo $confs) out of /etc/ld.so.conf.d, ldconfig, verify"
    mkdir -p "$W/j/ldconf"; mv $confs "$W/j/ldconf/"; ldconfig
    ldconfig -p | grep -E 'libcublasLt|libnvJitLink' | sed 's/^/  cache: /'
    step "$C" --home "$home" verify --venv "$venv"
    mv "$W"/j/ldconf/*.conf /etc/ld.so.conf.d/; ldconfig
  fi
  echo; echo "== the plugin removed: doctor, repair, doctor, repair again"
  step rm -rf "$venv"/lib/python3.12/site-packages/jax_cuda13_plugin*
  step "$C" --home "$home" doctor
  step "$C" --home "$home" repair --yes
  step "$C" --home "$home" verify --venv "$venv"
  step "$C" --home "$home" repair --yes
  echo; echo "== a system cuBLAS first on LD_LIBRARY_PATH: verify names it"
  LD_LIBRARY_PATH=/usr/local/cuda-13.0/lib64 step "$C" --home "$home" verify --venv "$venv"
  step "$C" --home "$home" uninstall --purge --yes
}

part_f() {
  local home=$W/f/home venv=$W/f/venv wheels=$W/f/wheels site tv cudnn
  site=$(/opt/torch/.venv/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  mkdir -p "$W/f" "$wheels"
  echo; echo "== 1. the full profile: the image's torch packed back into wheels, uv's real wheel"
  snapshot > "$P/before.txt"
  step "$py" "$here/scripts/wheels-from-venv.py" "$site" "$wheels" torch torchvision torchaudio > "$P/packed.txt"
  tail -3 "$P/packed.txt"; echo "($(ls "$wheels" | wc -l) wheels, $(du -sh "$wheels" | cut -f1))"
  cp "$D"/uv/*.whl "$wheels/"
  # Real PyPI wheels for what the image lacks (torchaudio 2.11.0 is a 1.7 MiB wheel there);
  # -n: a distribution the image has stays the packed one.
  [ -d "$D/fullcarry" ] && cp -n "$D"/fullcarry/*.whl "$wheels/"
  tv=$("$py" -c 'import torch; print(torch.__version__.split("+")[0])')
  cudnn=$("$py" -c 'import importlib.metadata as m; v=m.version("nvidia-cudnn-cu13").split("."); print(".".join(v[:3]))')
  echo "torch $tv; the image's cuDNN wheel: nvidia-cudnn-cu13 $cudnn"
  local args=(--profile full --torch "$tv" --cudnn "$cudnn" --driver keep --torch-source pypi --pypi-index "$wheels")
  step "$C" --home "$home" plan "${args[@]}"
  step "$C" --home "$home" install "${args[@]}" --venv "$venv" --no-modify-path --yes
  ls "$home"/tools 2>/dev/null | sed 's/^/  tools: /'
  step "$C" --home "$home" verify --venv "$venv"
  step "$C" --home "$home" doctor
  echo; echo "== torch's libtorch_cuda.so removed: doctor, repair, verify, repair again"
  step rm -f "$venv"/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so
  step "$C" --home "$home" doctor
  step "$C" --home "$home" repair --yes
  step "$C" --home "$home" verify --venv "$venv" --json > "$P/verify-after-repair.json"; echo "verify after repair: $(grep -c '"passed"' "$P/verify-after-repair.json") passed lines"
  step "$C" --home "$home" repair --yes
  step "$C" --home "$home" uninstall --purge --yes
  ls -la "$W/f"
  snapshot > "$P/after.txt"
  if diff "$P/before.txt" "$P/after.txt"; then echo "byte-exact: every file of \$HOME (caches aside) as before"; else echo "DIFFERS (above)"; fi
}

case "$part" in
  f) part_f ;;
  j) part_j ;;
  m) monitor_runs ;;
  a) part_a ;;
  c) part_c ;;
  b) part_b ;;
  *) echo "usage: $0 a|b" >&2; exit 2 ;;
esac
