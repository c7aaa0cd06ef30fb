//! Checks `framework:N` and `bench:N`: each venv's torch (or TensorFlow) imports, sees every GPU,
//! and multiplies two matrices on each GPU as the CPU does; with `--bench`, matmul TFLOP/s
//! (bf16, fp16, fp32 at 8192×8192) and pinned host↔device bandwidth per GPU, through torch.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::install::python::check::serves;
use crate::install::python::Venv;
use crate::install::receipts::Receipts;
use crate::model::system::Gpu;
use crate::model::version::Version;
use crate::world::process::Process;

use super::{exit_words, json_line, output_lines, Check, Exec};

/// Largest relative error (max |GPU − CPU| / max |CPU|) a 512×512 fp32 matmul may show.
pub const TOLERANCE: f64 = 1e-3;

/// The matmul size of `--bench`.
pub const BENCH_N: u32 = 8192;

/// The pinned buffer `--bench` copies each way, in MiB.
pub const BENCH_MIB: u32 = 256;

/// A venv to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VenvTarget {
    /// Its root.
    pub dir: PathBuf,
    /// The profile it was installed for (`pytorch`, `tensorflow`, `cpu`, …), when cudaup did.
    pub profile: Option<String>,
}

impl VenvTarget {
    /// The venv.
    pub fn venv(&self) -> Venv {
        Venv {
            dir: self.dir.clone(),
        }
    }

    /// Whether it holds JAX (by its profile).
    pub fn kind_is_jax(&self) -> bool {
        self.profile.as_deref() == Some("jax")
    }

    /// Whether it holds TensorFlow (by its profile).
    pub fn kind_is_tensorflow(&self) -> bool {
        self.profile.as_deref() == Some("tensorflow")
    }

    /// Which framework to import: the profile's, else whichever is there.
    fn kind(&self) -> &'static str {
        match self.profile.as_deref() {
            Some("tensorflow") => "tensorflow",
            Some("jax") => "jax",
            Some("full" | "pytorch" | "cpu") => "torch",
            _ => "auto",
        }
    }
}

/// `--venv` dirs, else every venv in the receipts.
pub fn targets(receipts: &Receipts, flags: &[PathBuf]) -> Vec<VenvTarget> {
    let profile_of = |dir: &Path| {
        receipts
            .venvs
            .iter()
            .find(|(_, r)| same_dir(&r.venv, dir))
            .map(|(_, r)| r.profile.clone())
    };
    if !flags.is_empty() {
        return flags
            .iter()
            .map(|d| {
                let dir = std::path::absolute(d).unwrap_or_else(|_| d.clone());
                VenvTarget {
                    profile: profile_of(&dir),
                    dir,
                }
            })
            .collect();
    }
    let mut out: Vec<VenvTarget> = Vec::new();
    for (_, r) in &receipts.venvs {
        if !out.iter().any(|v| v.dir == r.venv) {
            out.push(VenvTarget {
                dir: r.venv.clone(),
                profile: Some(r.profile.clone()),
            });
        }
    }
    out
}

/// Whether two paths name one folder, both made absolute the same way (on Windows a path
/// without a drive, `\v\pt`, is on the current drive), and on Windows without regard to case,
/// as its file systems compare names.
fn same_dir(a: &Path, b: &Path) -> bool {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let (a, b) = (abs(a), abs(b));
    if cfg!(windows) {
        a.to_string_lossy().to_lowercase() == b.to_string_lossy().to_lowercase()
    } else {
        a == b
    }
}

/// Imports the framework, lists the GPUs and compares a matmul on each with the CPU's.
/// `argv[1]`: `torch`, `tensorflow`, `jax` or `auto`. For JAX it also lists the CUDA libraries
/// the process mapped (`/proc/self/maps`), so the check can say whose copies JAX runs on.
pub const CHECK_SCRIPT: &str = r#"# cudaup-verify-framework
import json, sys
N = 512
r = {}
def err(e):
    return "%s: %s" % (type(e).__name__, e)
try:
    import importlib.util
    kind = sys.argv[1] if len(sys.argv) > 1 else "auto"
    if kind == "auto":
        kind = next((m for m in ("torch", "tensorflow", "jax") if importlib.util.find_spec(m)), None)
    r["framework"] = kind
    r["devices"] = []
    if kind == "torch":
        import torch
        r["version"] = torch.__version__
        r["cuda"] = torch.version.cuda
        r["available"] = bool(torch.cuda.is_available())
        r["device_count"] = torch.cuda.device_count() if r["available"] else 0
        r["arch_list"] = list(torch.cuda.get_arch_list()) if r["available"] else []
        torch.backends.cuda.matmul.allow_tf32 = False
        g = torch.Generator().manual_seed(0)
        a = torch.randn(N, N, generator=g)
        b = torch.randn(N, N, generator=g)
        ref = a @ b
        scale = float(ref.abs().max())
        for i in range(r["device_count"]):
            d = {"index": i}
            try:
                d["name"] = torch.cuda.get_device_name(i)
                d["capability"] = list(torch.cuda.get_device_capability(i))
                dev = torch.device("cuda", i)
                out = (a.to(dev) @ b.to(dev)).cpu()
                d["max_rel_err"] = float((out - ref).abs().max()) / scale
            except Exception as e:
                d["error"] = err(e)
            r["devices"].append(d)
    elif kind == "tensorflow":
        import numpy as np
        import tensorflow as tf
        r["version"] = tf.__version__
        try:
            r["cuda"] = tf.sysconfig.get_build_info().get("cuda_version")
        except Exception:
            r["cuda"] = None
        try:
            tf.config.experimental.enable_tensor_float_32_execution(False)
        except Exception:
            pass
        gpus = tf.config.list_physical_devices("GPU")
        r["available"] = bool(gpus)
        r["device_count"] = len(gpus)
        rng = np.random.default_rng(0)
        a = rng.standard_normal((N, N)).astype(np.float32)
        b = rng.standard_normal((N, N)).astype(np.float32)
        ref = a @ b
        scale = float(np.abs(ref).max())
        for i, gpu in enumerate(gpus):
            d = {"index": i, "name": gpu.name}
            try:
                details = tf.config.experimental.get_device_details(gpu)
                d["name"] = details.get("device_name", gpu.name)
                if details.get("compute_capability"):
                    d["capability"] = list(details["compute_capability"])
                with tf.device("/GPU:%d" % i):
                    out = tf.matmul(tf.constant(a), tf.constant(b)).numpy()
                d["max_rel_err"] = float(np.abs(out - ref).max()) / scale
            except Exception as e:
                d["error"] = err(e)
            r["devices"].append(d)
    elif kind == "jax":
        import os
        import numpy as np
        from importlib import metadata
        import jax
        r["version"] = jax.__version__
        r["prefix"] = sys.prefix
        for major in ("13", "12"):
            try:
                metadata.version("jax-cuda%s-plugin" % major)
                r["cuda"] = major
                break
            except metadata.PackageNotFoundError:
                pass
        try:
            gpus = jax.devices("gpu")
        except Exception as e:
            gpus = []
            r["backend_error"] = err(e)
        r["available"] = bool(gpus)
        r["device_count"] = len(gpus)
        rng = np.random.default_rng(0)
        a = rng.standard_normal((N, N)).astype(np.float32)
        b = rng.standard_normal((N, N)).astype(np.float32)
        ref = a @ b
        scale = float(np.abs(ref).max())
        mm = jax.jit(lambda x, y: jax.numpy.matmul(x, y, precision="highest"))
        for i, dev in enumerate(gpus):
            d = {"index": i, "name": getattr(dev, "device_kind", str(dev))}
            try:
                cc = getattr(dev, "compute_capability", None)
                if cc:
                    d["capability"] = [int(x) for x in str(cc).split(".")[:2]]
                out = np.asarray(mm(jax.device_put(a, dev), jax.device_put(b, dev)))
                d["max_rel_err"] = float(np.abs(out - ref).max()) / scale
            except Exception as e:
                d["error"] = err(e)
            r["devices"].append(d)
        libs = {}
        want = ("libcuda.so", "libcudart", "libcublas", "libcudnn.so", "libcufft", "libcusolver", "libcusparse", "libnccl", "libnvJitLink")
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split(None, 5)[-1].strip() if line.count(" ") >= 5 else ""
                base = os.path.basename(path)
                if path.startswith("/") and base.startswith(want):
                    libs[base] = os.path.realpath(path)
        r["libraries"] = libs
        r["ld_library_path"] = os.environ.get("LD_LIBRARY_PATH", "")
except Exception as e:
    r["error"] = err(e)
print(json.dumps(r))
"#;

/// What [`CHECK_SCRIPT`] prints.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct FrameworkReport {
    /// `torch`, `tensorflow`, or `None` when neither is installed.
    pub framework: Option<String>,
    /// Its version.
    pub version: Option<String>,
    /// The CUDA it was built for (`None`: a CPU build).
    pub cuda: Option<String>,
    /// Whether it can use a GPU.
    #[serde(default)]
    pub available: bool,
    /// GPUs it sees.
    #[serde(default)]
    pub device_count: usize,
    /// torch's `get_arch_list()`.
    #[serde(default)]
    pub arch_list: Vec<String>,
    /// Each GPU's matmul.
    #[serde(default)]
    pub devices: Vec<DeviceResult>,
    /// The import (or anything before the GPUs) failed.
    pub error: Option<String>,
    /// JAX: the venv's `sys.prefix`.
    pub prefix: Option<String>,
    /// JAX: the CUDA libraries the process mapped, by file name, with their real paths.
    #[serde(default)]
    pub libraries: std::collections::BTreeMap<String, String>,
    /// JAX: why it has no GPU backend, as JAX says.
    pub backend_error: Option<String>,
    /// JAX: the process's `LD_LIBRARY_PATH` (empty when unset), to name what shadows a wheel.
    #[serde(default)]
    pub ld_library_path: Option<String>,
}

/// One GPU's matmul in [`CHECK_SCRIPT`].
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct DeviceResult {
    /// The framework's index.
    pub index: usize,
    /// Its name.
    pub name: Option<String>,
    /// Compute capability.
    pub capability: Option<(u32, u32)>,
    /// max |GPU − CPU| / max |CPU|.
    pub max_rel_err: Option<f64>,
    /// What went wrong on this GPU.
    pub error: Option<String>,
}

/// Runs the check for one venv. The flag says whether this venv's torch ran on the GPUs (so
/// `--bench` can use it).
pub fn check(
    exec: &Exec<'_>,
    n: usize,
    target: &VenvTarget,
    gpus: &[Gpu],
    process: &Process,
) -> (Check, bool) {
    let id = format!("framework:{n}");
    let subject = target.dir.display().to_string();
    let venv = target.venv();
    let python = venv.python();
    if !python.is_file() {
        return (
            Check::fail(
                id,
                vec![format!(
                    "{} has no {} (the venv is gone or broken)",
                    target.dir.display(),
                    python.display()
                )],
            )
            .subject(subject),
            false,
        );
    }
    let out = match exec.run(
        &python,
        &["-c", CHECK_SCRIPT, target.kind()],
        &[],
        Duration::from_secs(600),
    ) {
        Ok(o) => o,
        Err(e) => return (Check::fail(id, vec![e.to_string()]).subject(subject), false),
    };
    let report: FrameworkReport = match json_line(&out) {
        Ok(r) => r,
        Err(why) => {
            let mut ev = vec![format!(
                "{} could not run the check: {why} ({})",
                python.display(),
                exit_words(&out)
            )];
            ev.extend(output_lines(&out).into_iter().rev().take(8).rev());
            return (Check::fail(id, ev).subject(subject), false);
        }
    };
    let visible = process.var("CUDA_VISIBLE_DEVICES").map(str::to_owned);
    let (mut check, ran) = judge(
        &id,
        &report,
        gpus,
        target.profile.as_deref(),
        visible.as_deref(),
    );
    check.subject = Some(subject);
    (check, ran && report.framework.as_deref() == Some("torch"))
}

/// Judges a report: `(check, whether it ran on every GPU)`.
pub fn judge(
    id: &str,
    r: &FrameworkReport,
    gpus: &[Gpu],
    profile: Option<&str>,
    cuda_visible_devices: Option<&str>,
) -> (Check, bool) {
    let data = serde_json::json!({
        "framework": r.framework,
        "version": r.version,
        "cuda": r.cuda,
        "available": r.available,
        "device_count": r.device_count,
        "devices": r.devices.iter().map(|d| serde_json::json!({
            "index": d.index, "name": d.name, "max_rel_err": d.max_rel_err, "error": d.error,
        })).collect::<Vec<_>>(),
    });
    let fail = |lines: Vec<String>| (Check::fail(id, lines).data(data.clone()), false);
    let name = r.framework.as_deref().unwrap_or("torch");
    if let Some(e) = &r.error {
        return fail(vec![format!("`import {name}` failed: {e}")]);
    }
    let Some(fw) = r.framework.as_deref() else {
        return fail(vec![
            "none of torch, tensorflow or jax is installed in this venv".into(),
        ]);
    };
    let version = r.version.as_deref().unwrap_or("?");
    let build = match &r.cuda {
        Some(c) => format!("CUDA {c}"),
        None => "CPU-only build".into(),
    };
    let head = format!("{fw} {version} ({build})");
    if profile == Some("cpu") {
        return (
            Check::pass(
                id,
                vec![match &r.cuda {
                    None => format!("{head} imports; a CPU build, as the cpu profile installs"),
                    // PyPI's build, taken where PyTorch's CPU index was out of reach.
                    Some(_) => format!(
                        "{head} imports; the CUDA build PyPI serves, which the cpu profile runs on the CPU"
                    ),
                }],
            )
            .data(data.clone()),
            false,
        );
    }
    if gpus.is_empty() {
        return (
            Check::skip(id, vec![format!("{head} imports; no GPU here to run on")])
                .data(data.clone()),
            false,
        );
    }
    if r.cuda.is_none() {
        return fail(vec![format!(
            "{head}: it will never use the {} GPU(s) here; reinstall the CUDA build (`cudaup install`)",
            gpus.len()
        )]);
    }
    if !r.available || r.device_count == 0 {
        return fail(vec![format!(
            "{head} sees no GPU ({fw} reports CUDA unavailable{}); a driver older than CUDA {} needs is the usual cause (see `cudaup detect`)",
            r.backend_error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default(),
            r.cuda.as_deref().unwrap_or("?")
        )]);
    }
    let mut problems: Vec<String> = Vec::new();
    if r.device_count != gpus.len() {
        let mut p = format!(
            "{fw} sees {} GPU(s), nvidia-smi lists {}",
            r.device_count,
            gpus.len()
        );
        if let Some(v) = cuda_visible_devices {
            p.push_str(&format!(" (CUDA_VISIBLE_DEVICES={v} hides some)"));
        }
        problems.push(p);
    }
    if fw == "torch" {
        for g in gpus {
            let Some(cc) = g.compute_capability.as_deref().and_then(Version::parse) else {
                continue;
            };
            if !serves(&r.arch_list, &cc) {
                problems.push(format!(
                    "this torch has no kernels for GPU {} ({}, sm_{}{}; it has {})",
                    g.index,
                    g.name,
                    cc.major(),
                    cc.minor(),
                    r.arch_list.join(" ")
                ));
            }
        }
    }
    let mut lines = Vec::new();
    if fw == "jax" {
        lines.extend(jax_libraries(r, &mut problems));
    }
    for d in &r.devices {
        let who = format!(
            "GPU {}: {}",
            d.index,
            d.name.as_deref().unwrap_or("unnamed")
        );
        match (&d.error, d.max_rel_err) {
            (Some(e), _) => problems.push(format!("{who}: the matmul failed: {e}")),
            (None, Some(err)) if err.is_finite() && err <= TOLERANCE => lines.push(format!(
                "{who}: 512×512 fp32 matmul matches the CPU (max rel. error {err:.1e})"
            )),
            (None, Some(err)) => problems.push(format!(
                "{who}: 512×512 fp32 matmul differs from the CPU (max rel. error {err:.1e} > {TOLERANCE:.0e})"
            )),
            (None, None) => problems.push(format!("{who}: no matmul result")),
        }
    }
    if problems.is_empty() {
        let mut ev = vec![format!(
            "{head} sees all {} GPU(s) and computes correctly on each",
            r.device_count
        )];
        ev.extend(lines);
        (Check::pass(id, ev).data(data), true)
    } else {
        let mut ev = vec![format!("{head}: {}", problems[0])];
        ev.extend(problems.into_iter().skip(1));
        ev.extend(lines);
        fail(ev)
    }
}

/// Whose CUDA libraries JAX runs on: each one the process mapped (the driver's `libcuda` aside)
/// must come from the venv, where the plugin's `with-cuda` wheels put them. A copy from elsewhere
/// means something shadows them (`LD_LIBRARY_PATH`, or another framework loaded its own first:
/// glibc keeps the first library of a soname), which JAX's guide warns about. Returns the
/// evidence line; a shadowing copy goes to `problems`.
fn jax_libraries(r: &FrameworkReport, problems: &mut Vec<String>) -> Option<String> {
    let prefix = r.prefix.as_deref()?;
    let inside = |path: &str| Path::new(path).starts_with(prefix);
    let libs = || {
        r.libraries
            .iter()
            .filter(|(n, _)| !n.starts_with("libcuda.so"))
    };
    // The folders the venv's own copies were loaded from: where lookups by name should land.
    let mut wheel_dirs: Vec<&str> = libs()
        .filter(|(_, p)| inside(p))
        .filter_map(|(_, p)| Path::new(p).parent()?.to_str())
        .collect();
    wheel_dirs.sort_unstable();
    wheel_dirs.dedup();
    let on_path: Vec<&str> = r
        .ld_library_path
        .as_deref()
        .unwrap_or("")
        .split(':')
        .filter(|d| !d.is_empty())
        .collect();
    let mut ours = Vec::new();
    for (name, path) in libs() {
        if inside(path) {
            ours.push(name.as_str());
            continue;
        }
        let dir = Path::new(path)
            .parent()
            .map_or_else(String::new, |d| d.display().to_string());
        let named = on_path.iter().any(|d| {
            Path::new(d) == Path::new(&dir)
                || std::fs::canonicalize(d).is_ok_and(|c| c == Path::new(&dir))
        });
        let why = if named {
            format!("LD_LIBRARY_PATH puts {dir} first; unset it for this venv")
        } else if wheel_dirs.is_empty() {
            "a copy outside the venv shadows the plugin's (another framework imported first, or the loader cache); run JAX alone in this venv".to_owned()
        } else {
            // Not LD_LIBRARY_PATH: the loader cache (an /etc/ld.so.conf.d entry) answered a
            // lookup by name, so two copies run in one process (seen on a GPU image whose
            // system toolkit is in ld.so.conf.d).
            format!(
                "{dir} is in the loader cache (ldconfig, an /etc/ld.so.conf.d entry) and answered a lookup by name, so two copies run in one process; start JAX with LD_LIBRARY_PATH={} so the wheels' copies are found first, or take {dir} out of /etc/ld.so.conf.d and run ldconfig",
                wheel_dirs.join(":")
            )
        };
        problems.push(format!(
            "{name} is loaded from {path}, not from the CUDA wheels in {prefix}: {why}"
        ));
    }
    (!ours.is_empty()).then(|| {
        format!(
            "CUDA libraries loaded from the venv's wheels: {}",
            ours.join(", ")
        )
    })
}

/// Times matmuls and copies on every GPU; prints `{version, devices: [...]}`.
/// `argv[1]`: the matrix size; `argv[2]`: the copy size in MiB.
pub const BENCH_SCRIPT: &str = r#"# cudaup-verify-bench
import json, sys
r = {"devices": []}
def err(e):
    return "%s: %s" % (type(e).__name__, e)
try:
    import torch
    n, mib = int(sys.argv[1]), int(sys.argv[2])
    r["version"] = torch.__version__
    torch.backends.cuda.matmul.allow_tf32 = False
    def timed(fn, target_ms=500.0, most=100):
        fn(); fn()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize()
        iters = max(1, min(most, int(target_ms / max(s.elapsed_time(e), 1e-3))))
        s.record()
        for _ in range(iters):
            fn()
        e.record(); e.synchronize()
        return s.elapsed_time(e) / iters
    for i in range(torch.cuda.device_count()):
        dev = torch.device("cuda", i)
        torch.cuda.set_device(dev)
        d = {"index": i, "name": torch.cuda.get_device_name(i), "tflops": {}, "errors": []}
        for name, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16), ("fp32", torch.float32)):
            if dt is torch.bfloat16 and torch.cuda.get_device_capability(i) < (8, 0):
                continue
            try:
                a = torch.randn(n, n, device=dev, dtype=dt)
                b = torch.randn(n, n, device=dev, dtype=dt)
                c = torch.empty(n, n, device=dev, dtype=dt)
                ms = timed(lambda: torch.matmul(a, b, out=c))
                d["tflops"][name] = 2.0 * n ** 3 / (ms / 1e3) / 1e12
                del a, b, c
            except Exception as e:
                d["errors"].append("%s matmul: %s" % (name, err(e)))
            torch.cuda.empty_cache()
        try:
            nbytes = mib << 20
            host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
            buf = torch.empty(nbytes, dtype=torch.uint8, device=dev)
            d["h2d_gbs"] = nbytes / (timed(lambda: buf.copy_(host, non_blocking=True), most=20) / 1e3) / 1e9
            d["d2h_gbs"] = nbytes / (timed(lambda: host.copy_(buf, non_blocking=True), most=20) / 1e3) / 1e9
            del host, buf
        except Exception as e:
            d["errors"].append("copy: %s" % err(e))
        torch.cuda.empty_cache()
        r["devices"].append(d)
except Exception as e:
    r["error"] = err(e)
print(json.dumps(r))
"#;

/// What [`BENCH_SCRIPT`] prints.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct BenchReport {
    /// torch's version.
    pub version: Option<String>,
    /// One entry per GPU.
    #[serde(default)]
    pub devices: Vec<BenchDevice>,
    /// The import failed.
    pub error: Option<String>,
}

/// One GPU's measurements.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct BenchDevice {
    /// torch's index (PCI order, as nvidia-smi's).
    pub index: u32,
    /// Its name.
    pub name: Option<String>,
    /// TFLOP/s by dtype (`bf16`, `fp16`, `fp32`).
    #[serde(default)]
    pub tflops: std::collections::BTreeMap<String, f64>,
    /// Host → device, GB/s (10⁹ bytes).
    pub h2d_gbs: Option<f64>,
    /// Device → host, GB/s.
    pub d2h_gbs: Option<f64>,
    /// What could not be measured.
    #[serde(default)]
    pub errors: Vec<String>,
}

/// `--bench`: one check per GPU, through the first venv whose torch ran on the GPUs.
pub fn bench(exec: &Exec<'_>, venv: Option<&VenvTarget>, gpus: &[Gpu]) -> Vec<Check> {
    if gpus.is_empty() {
        return vec![Check::skip("bench", vec!["no GPU to measure".into()])];
    }
    let Some(venv) = venv else {
        return vec![Check::skip(
            "bench",
            vec!["no venv whose torch runs on the GPUs here (the bench runs through torch)".into()],
        )];
    };
    let (n, mib) = (BENCH_N.to_string(), BENCH_MIB.to_string());
    let python = venv.venv().python();
    let report: Result<BenchReport, Vec<String>> = exec
        .run(
            &python,
            &["-c", BENCH_SCRIPT, &n, &mib],
            &[],
            Duration::from_secs(600),
        )
        .map_err(|e| vec![e.to_string()])
        .and_then(|out| {
            json_line::<BenchReport>(&out).map_err(|why| {
                let mut ev = vec![format!(
                    "the bench did not finish: {why} ({})",
                    exit_words(&out)
                )];
                ev.extend(output_lines(&out).into_iter().rev().take(8).rev());
                ev
            })
        })
        .and_then(|r| match &r.error {
            Some(e) => Err(vec![format!("the bench failed: {e}")]),
            None => Ok(r),
        });
    gpus.iter()
        .map(|g| {
            let id = format!("bench:{}", g.index);
            let subject = format!("GPU {}: {}", g.index, g.name);
            let check = match &report {
                Err(lines) => Check::fail(id, lines.clone()),
                Ok(r) => match r.devices.iter().find(|d| d.index == g.index) {
                    None => Check::fail(id, vec![format!("torch did not measure GPU {}", g.index)]),
                    Some(d) => bench_check(&id, d),
                },
            };
            check.subject(subject)
        })
        .collect()
}

/// One GPU's bench as a check.
pub fn bench_check(id: &str, d: &BenchDevice) -> Check {
    let data = serde_json::json!({
        "matmul_n": BENCH_N,
        "tflops": d.tflops,
        "copy_mib": BENCH_MIB,
        "h2d_gbs": d.h2d_gbs,
        "d2h_gbs": d.d2h_gbs,
    });
    let mut ev = Vec::new();
    let flops: Vec<String> = ["bf16", "fp16", "fp32"]
        .iter()
        .filter_map(|k| d.tflops.get(*k).map(|v| format!("{k} {v:.1}")))
        .collect();
    if !flops.is_empty() {
        ev.push(format!(
            "matmul {BENCH_N}×{BENCH_N}: {} TFLOP/s",
            flops.join(" · ")
        ));
    }
    if let (Some(h), Some(dh)) = (d.h2d_gbs, d.d2h_gbs) {
        ev.push(format!(
            "copies ({BENCH_MIB} MiB pinned): host→device {h:.1} GB/s · device→host {dh:.1} GB/s"
        ));
    }
    ev.extend(d.errors.iter().cloned());
    if d.errors.is_empty() && !flops.is_empty() {
        Check::pass(id, ev).data(data)
    } else {
        if ev.is_empty() {
            ev.push("nothing was measured".into());
        }
        Check::fail(id, ev).data(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::python::{Packages, VenvReceipt};
    use crate::verify::testing::{ok, Scripted};
    use crate::verify::Status;

    fn h200(index: u32) -> Gpu {
        Gpu {
            index,
            vendor: crate::model::system::Vendor::Nvidia,
            name: "NVIDIA H200".into(),
            pci_id: None,
            compute_capability: Some("9.0".into()),
            architecture: None,
            memory_mib: None,
        }
    }

    fn torch_report(devices: usize, err: f64) -> FrameworkReport {
        FrameworkReport {
            framework: Some("torch".into()),
            version: Some("2.11.0+cu130".into()),
            cuda: Some("13.0".into()),
            available: true,
            device_count: devices,
            arch_list: vec!["sm_80".into(), "sm_90".into(), "sm_100".into()],
            devices: (0..devices)
                .map(|i| DeviceResult {
                    index: i,
                    name: Some("NVIDIA H200".into()),
                    capability: Some((9, 0)),
                    max_rel_err: Some(err),
                    error: None,
                })
                .collect(),
            error: None,
            ..Default::default()
        }
    }

    #[test]
    fn a_working_torch_passes() {
        let (c, ran) = judge(
            "framework:0",
            &torch_report(2, 2e-7),
            &[h200(0), h200(1)],
            None,
            None,
        );
        assert_eq!(c.status, Status::Pass, "{c:?}");
        assert!(ran);
        assert_eq!(
            c.evidence[0],
            "torch 2.11.0+cu130 (CUDA 13.0) sees all 2 GPU(s) and computes correctly on each"
        );
        assert_eq!(
            c.evidence[1],
            "GPU 0: NVIDIA H200: 512×512 fp32 matmul matches the CPU (max rel. error 2.0e-7)"
        );
    }

    #[test]
    fn what_fails() {
        let gpus = [h200(0), h200(1)];
        let (c, _) = judge("f", &torch_report(1, 1e-7), &gpus, None, Some("0"));
        assert_eq!(c.status, Status::Fail);
        assert!(c.evidence[0].contains("sees 1 GPU(s), nvidia-smi lists 2 (CUDA_VISIBLE_DEVICES=0"));
        let (c, _) = judge("f", &torch_report(2, 0.5), &gpus, None, None);
        assert_eq!(c.status, Status::Fail);
        assert!(c.evidence[0].contains("differs from the CPU"));
        let mut r = torch_report(2, 1e-7);
        r.arch_list = vec!["sm_100".into(), "sm_120".into()];
        let (c, _) = judge("f", &r, &gpus, None, None);
        assert!(c.evidence[0].contains("no kernels for GPU 0"), "{c:?}");
        let mut r = torch_report(0, 0.0);
        r.cuda = None;
        r.available = false;
        let (c, _) = judge("f", &r, &gpus, None, None);
        assert!(c.evidence[0].contains("CPU-only build"));
        let r = FrameworkReport {
            framework: Some("torch".into()),
            error: Some("ImportError: libcudnn.so.9: cannot open shared object file".into()),
            ..FrameworkReport::default()
        };
        let (c, _) = judge("f", &r, &gpus, None, None);
        assert_eq!(c.status, Status::Fail);
        assert!(c.evidence[0].starts_with("`import torch` failed: ImportError"));
        let (c, _) = judge("f", &FrameworkReport::default(), &gpus, None, None);
        assert!(c.evidence[0].contains("none of torch, tensorflow or jax"));
    }

    #[test]
    fn what_is_skipped_or_excused() {
        let mut r = torch_report(0, 0.0);
        r.available = false;
        let (c, ran) = judge("f", &r, &[], None, None);
        assert_eq!(c.status, Status::Skip);
        assert!(!ran);
        assert_eq!(
            c.evidence[0],
            "torch 2.11.0+cu130 (CUDA 13.0) imports; no GPU here to run on"
        );
        // The cpu profile on PyPI's CUDA build (where PyTorch's CPU index was out of reach).
        let (c, _) = judge("f", &r, &[], Some("cpu"), None);
        assert_eq!(c.status, Status::Pass);
        assert_eq!(
            c.evidence[0],
            "torch 2.11.0+cu130 (CUDA 13.0) imports; the CUDA build PyPI serves, which the cpu profile runs on the CPU"
        );
        r.cuda = None;
        let (c, _) = judge("f", &r, &[h200(0)], Some("cpu"), None);
        assert_eq!(c.status, Status::Pass);
    }

    #[test]
    fn tensorflow_reports_pass_without_arch_lists() {
        let r = FrameworkReport {
            framework: Some("tensorflow".into()),
            version: Some("2.20.0".into()),
            cuda: Some("12.5.1".into()),
            available: true,
            device_count: 1,
            arch_list: vec![],
            devices: vec![DeviceResult {
                index: 0,
                name: Some("NVIDIA H200".into()),
                capability: Some((9, 0)),
                max_rel_err: Some(3e-7),
                error: None,
            }],
            error: None,
            ..Default::default()
        };
        let (c, ran) = judge("f", &r, &[h200(0)], Some("tensorflow"), None);
        assert_eq!(c.status, Status::Pass, "{c:?}");
        assert!(ran);
    }

    fn jax_report(cublas: &str) -> FrameworkReport {
        FrameworkReport {
            framework: Some("jax".into()),
            version: Some("0.12.0.1".into()),
            cuda: Some("13".into()),
            available: true,
            device_count: 1,
            devices: vec![DeviceResult {
                index: 0,
                name: Some("NVIDIA H200".into()),
                capability: Some((9, 0)),
                max_rel_err: Some(2e-7),
                error: None,
            }],
            prefix: Some("/v/jax".into()),
            libraries: [
                (
                    "libcuda.so.1",
                    "/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05",
                ),
                ("libcublas.so.13", cublas),
                (
                    "libcudnn.so.9",
                    "/v/jax/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
                ),
            ]
            .into_iter()
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
            .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn jax_passes_with_the_plugins_libraries_and_names_them() {
        let r = jax_report("/v/jax/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13");
        let (c, _) = judge("f", &r, &[h200(0)], Some("jax"), None);
        assert_eq!(c.status, Status::Pass, "{c:?}");
        let ev = c.evidence.join("\n");
        assert!(
            ev.contains(
                "CUDA libraries loaded from the venv's wheels: libcublas.so.13, libcudnn.so.9"
            ),
            "{ev}"
        );
        assert!(!ev.contains("libcuda.so.1"), "{ev}");
    }

    #[test]
    fn jax_fails_when_a_system_cublas_shadows_the_plugins() {
        let r = jax_report("/usr/local/cuda-13.0/lib64/libcublas.so.13.1.0.3");
        let (c, ran) = judge("f", &r, &[h200(0)], Some("jax"), None);
        assert_eq!(c.status, Status::Fail, "{c:?}");
        assert!(!ran);
        assert!(
            c.evidence[0].contains(
                "libcublas.so.13 is loaded from /usr/local/cuda-13.0/lib64/libcublas.so.13.1.0.3, not from the CUDA wheels in /v/jax"
            ),
            "{c:?}"
        );
    }

    /// Seen on a GPU image: with LD_LIBRARY_PATH not naming the system toolkit, its copy is
    /// loaded beside the wheel's through the loader cache, and the fix names the wheels' folder.
    #[test]
    fn a_shadowing_copy_names_ld_library_path_or_the_loader_cache() {
        let sys = "/usr/local/cuda-13.0/targets/x86_64-linux/lib";
        let mut r =
            jax_report("/v/jax/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13");
        r.libraries.insert(
            "libcublasLt.so.13.1.0.3".into(),
            format!("{sys}/libcublasLt.so.13.1.0.3"),
        );
        r.ld_library_path = Some("/usr/local/nvidia/lib64:/usr/local/nvidia/lib".into());
        let (c, _) = judge("f", &r, &[h200(0)], Some("jax"), None);
        assert_eq!(c.status, Status::Fail, "{c:?}");
        let ev = c.evidence.join("\n");
        assert!(
            ev.contains(&format!("{sys} is in the loader cache"))
                && ev.contains("start JAX with LD_LIBRARY_PATH=/v/jax/lib/python3.12/site-packages/nvidia/cu13/lib:/v/jax/lib/python3.12/site-packages/nvidia/cudnn/lib"),
            "{ev}"
        );
        r.ld_library_path = Some(format!("/opt/x:{sys}"));
        let (c, _) = judge("f", &r, &[h200(0)], Some("jax"), None);
        let ev = c.evidence.join("\n");
        assert!(
            ev.contains(&format!(
                "LD_LIBRARY_PATH puts {sys} first; unset it for this venv"
            )),
            "{ev}"
        );
    }

    #[test]
    fn jax_on_the_cpu_backend_fails_with_jaxs_own_words() {
        let mut r = jax_report("/v/jax/x/libcublas.so.13");
        r.available = false;
        r.device_count = 0;
        r.devices.clear();
        r.backend_error = Some("RuntimeError: Unable to initialize backend 'cuda'".into());
        let (c, _) = judge("f", &r, &[h200(0)], Some("jax"), None);
        assert_eq!(c.status, Status::Fail);
        assert!(
            c.evidence[0].contains("RuntimeError: Unable to initialize backend 'cuda'"),
            "{c:?}"
        );
        // With no GPU on the machine, the check is skipped, saying so.
        let (c, _) = judge("f", &r, &[], Some("jax"), None);
        assert_eq!(c.status, Status::Skip);
        assert!(c.evidence[0].contains("no GPU here to run on"), "{c:?}");
    }

    #[test]
    fn targets_come_from_flags_or_receipts() {
        let receipt = |dir: &str, profile: &str| {
            (
                PathBuf::from("r.json"),
                VenvReceipt {
                    schema_version: 1,
                    venv: dir.into(),
                    base_python: "/usr/bin/python3".into(),
                    created: true,
                    profile: profile.into(),
                    packages: Packages {
                        requirements: vec![],
                        index_url: String::new(),
                        extra_index_urls: vec![],
                        ..Packages::default()
                    },
                    route: None,
                    installed_at: 0,
                    guard: None,
                },
            )
        };
        let receipts = Receipts {
            venvs: vec![receipt("/v/tf", "tensorflow"), receipt("/v/pt", "pytorch")],
            ..Receipts::default()
        };
        let t = targets(&receipts, &[]);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].kind(), "tensorflow");
        assert_eq!(t[1].kind(), "torch");
        let t = targets(
            &receipts,
            &[PathBuf::from("/v/pt"), PathBuf::from("/elsewhere")],
        );
        assert_eq!(t[0].profile.as_deref(), Some("pytorch"));
        assert_eq!(t[1].kind(), "auto");
        // Windows compares names without regard to case: `--venv /V/PT` is the receipt's.
        if cfg!(windows) {
            let t = targets(&receipts, &[PathBuf::from("/V/PT")]);
            assert_eq!(t[0].profile.as_deref(), Some("pytorch"));
        }
    }

    #[test]
    fn bench_parses_and_renders() {
        let out = r#"{"version": "2.11.0+cu130", "devices": [{"index": 0, "name": "NVIDIA H200", "tflops": {"bf16": 701.23, "fp16": 690.1, "fp32": 51.04}, "errors": [], "h2d_gbs": 53.2, "d2h_gbs": 52.81}]}"#;
        let d = tempfile::tempdir().unwrap();
        fs_err::create_dir_all(d.path().join("bin")).unwrap();
        let r = Scripted::new(move |_, args, _| {
            assert!(args[1].starts_with("# cudaup-verify-bench"));
            assert_eq!(&args[2..], ["8192", "256"]);
            ok(out)
        });
        let process = Process::default();
        let exec = Exec::new(&r, &process, None);
        let v = VenvTarget {
            dir: d.path().to_owned(),
            profile: None,
        };
        let c = bench(&exec, Some(&v), &[h200(0)]);
        assert_eq!(c[0].status, Status::Pass, "{c:?}");
        assert_eq!(
            c[0].evidence,
            [
                "matmul 8192×8192: bf16 701.2 · fp16 690.1 · fp32 51.0 TFLOP/s",
                "copies (256 MiB pinned): host→device 53.2 GB/s · device→host 52.8 GB/s"
            ]
        );
        let c = bench(&exec, None, &[h200(0)]);
        assert_eq!(c[0].status, Status::Skip);
        let c = bench(&exec, Some(&v), &[]);
        assert_eq!(c[0].status, Status::Skip);
        let oom = BenchDevice {
            index: 0,
            tflops: [("bf16".to_owned(), 100.0)].into_iter().collect(),
            errors: vec!["fp32 matmul: OutOfMemoryError: CUDA out of memory".into()],
            ..BenchDevice::default()
        };
        assert_eq!(bench_check("bench:0", &oom).status, Status::Fail);
    }
}
