//! A JAX venv keeps its own CUDA libraries when a toolkit is on `LD_LIBRARY_PATH`.
//!
//! JAX's CUDA plugin loads the CUDA wheels' libraries by path (`_load_nvidia_libraries` in
//! jax-ml/jax `jax_plugins/cuda/__init__.py`), but `libcublas.so.13` before `libcublasLt.so.13`,
//! and `libnvJitLink.so.13` not at all: the loader then resolves those by name, and
//! `LD_LIBRARY_PATH` wins over the wheels' RUNPATH. cudaup's env puts the active toolkit's `lib64`
//! there (as NVIDIA's post-install steps do), so on a GPU the toolkit's `libcublasLt` and
//! `libnvJitLink` ran beside the wheels' copies in one JAX process (docs/h200, session 5).
//! JAX's own advice is to leave `LD_LIBRARY_PATH` unset; a user with a toolkit active cannot.
//!
//! So the venv gets a `.pth` line that, at interpreter start, loads by path every wheel library
//! whose file name a directory on `LD_LIBRARY_PATH` also holds, each after the wheel libraries
//! its `DT_NEEDED` entries name (read from the ELF file: a fixed order missed `libcusolver`
//! needing `libcusparse` on the next GPU run).
//! glibc keeps one library per soname: later lookups by name (a `DT_NEEDED` of the wheels'
//! `libcublas`, the plugin's own) find the wheel's copy already loaded. With no such directory it
//! does nothing. The files live inside the venv cudaup made, so `uninstall` removes them with it.

use std::io;
use std::path::Path;

use crate::world::fs::{write_atomic, Durability, Temp};

/// The `.pth` file site-packages gets; Python runs its `import` line at start-up.
pub const PTH: &str = "cudaup-cuda-wheels.pth";

/// The module the `.pth` line imports.
pub const MODULE: &str = "_cudaup_cuda_wheels.py";

const PTH_TEXT: &str = "import _cudaup_cuda_wheels\n";

/// What runs at start-up: standard library only, never raises (a `.pth` line that raises makes
/// Python print a traceback at every start).
const MODULE_TEXT: &str = r#"# Written by cudaup into the venv it made; removed with the venv.
# Loads, by path, each CUDA library of this venv's NVIDIA wheels whose file name a directory on
# LD_LIBRARY_PATH also holds, before anything asks for it by name, each after the wheel libraries
# it needs: glibc keeps one library per soname, so JAX then runs on the wheels' copies and not
# on a toolkit's beside them. Nothing happens when LD_LIBRARY_PATH holds none of them.
def _needed(path):
    # The DT_NEEDED names of a 64-bit little-endian ELF file; [] when it cannot be read.
    import struct
    with open(path, "rb") as f:
        head = f.read(64)
        if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
            return []
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        f.seek(phoff)
        ph = f.read(phentsize * phnum)
        loads, dynamic = [], None
        for i in range(phnum):
            kind, _, offset, vaddr, _, size = struct.unpack_from("<IIQQQQ", ph, i * phentsize)
            if kind == 1:
                loads.append((vaddr, offset, size))
            elif kind == 2:
                dynamic = (offset, size)
        if dynamic is None:
            return []
        f.seek(dynamic[0])
        raw = f.read(dynamic[1])
        needed, strtab = [], None
        for i in range(0, len(raw) - 15, 16):
            tag, value = struct.unpack_from("<qQ", raw, i)
            if tag == 0:
                break
            if tag == 1:
                needed.append(value)
            elif tag == 5:
                strtab = value
        at = next((o + strtab - v for v, o, n in loads if strtab is not None and v <= strtab < v + n), None)
        if at is None:
            return []
        names = []
        for n in needed:
            f.seek(at + n)
            names.append(f.read(256).split(b"\0", 1)[0].decode())
        return names

def _preload():
    import os
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    if not dirs:
        return
    import ctypes
    import glob
    here = os.path.dirname(os.path.abspath(__file__))
    wheel = {os.path.basename(p): p for p in glob.glob(os.path.join(here, "nvidia", "*", "lib", "lib*.so*"))}
    shadowed = sorted(n for n in wheel if any(os.path.exists(os.path.join(d, n)) for d in dirs))
    done = set()
    def load(name):
        if name in done:
            return
        done.add(name)
        try:
            needs = _needed(wheel[name])
        except Exception:
            needs = []
        for dep in needs:
            if dep in wheel:
                load(dep)
        try:
            ctypes.CDLL(wheel[name], mode=ctypes.RTLD_GLOBAL)
        except OSError:
            pass
    for name in shadowed:
        load(name)

try:
    _preload()
except Exception:
    pass
"#;

/// Writes the `.pth` file and its module into the site-packages of the venv at `venv`. A venv
/// whose site-packages cannot be found is left as it is (`Ok`): JAX's own loading then applies.
pub fn write(venv: &Path) -> io::Result<()> {
    let Some(site) = crate::install::guard::site_packages(venv) else {
        return Ok(());
    };
    write_atomic(
        &site.join(MODULE),
        MODULE_TEXT.as_bytes(),
        Temp::Unique,
        Durability::Fsync,
    )?;
    write_atomic(
        &site.join(PTH),
        PTH_TEXT.as_bytes(),
        Temp::Unique,
        Durability::Fsync,
    )
}
