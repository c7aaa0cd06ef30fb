//! JAX from the real PyPI on this GPU-less machine (issue 41): the plan is an H200's (a machine
//! picture), the venv is made here from a Python 3.12 or newer, and the install brings
//! `jax[cuda13]` with its plugin; verify skips the GPU part and says why; a plugin that goes
//! missing is what doctor names and repair puts back. Needs PyPI and a Python >= 3.12 (pyenv's,
//! when PATH has none); without either the test records its skip.

use std::path::{Path, PathBuf};

use crate::common::*;

/// A Python 3.12 or newer: on the host's PATH, else under pyenv's versions.
fn python_3_12() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .flat_map(|d| ["python3.12", "python3.13", "python3.14"].map(|n| d.join(n)));
    let root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pyenv")));
    let pyenv = root
        .and_then(|r| fs_err::read_dir(r.join("versions")).ok())
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap_or_default().to_string_lossy();
            ["3.12", "3.13", "3.14"].iter().any(|v| n.starts_with(v))
        })
        .map(|p| p.join("bin/python3"));
    // A pyenv shim runs whichever version pyenv selects: ask each what it is.
    on_path.chain(pyenv).filter(|p| p.is_file()).find(|p| {
        std::process::Command::new(p)
            .args(["-c", "import sys; print(sys.version_info >= (3, 12))"])
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "True")
            && !p.to_string_lossy().contains("/shims/")
    })
}

#[test]
fn needs_network_jax_installs_from_pypi_and_repair_restores_its_plugin() {
    const NAME: &str = "needs_network_jax_installs_from_pypi_and_repair_restores_its_plugin";
    let Some(python) = python_3_12() else {
        skipped(NAME, "no Python 3.12 or newer on PATH or under pyenv");
        return;
    };
    let ctx = TestContext::new().with_system(&serde_json::json!({
        "os": {"family": "linux", "distro": "ubuntu", "version": "24.04", "arch": "x86_64", "wsl": false},
        "gpus": [{"index": 0, "vendor": "nvidia", "name": "NVIDIA H200", "compute_capability": "9.0", "architecture": "Hopper"}],
        "driver": {"version": "580.95.05"}
    }));
    // The Python 3.12 first on PATH, so the venv is made from it.
    let path = path_with(&[&ctx.bin(), python.parent().unwrap()]);
    let ctx = ctx.with_env("PATH", &path);
    let venv = ctx.home().join("venv");
    let run = ctx.install(&[
        "--profile",
        "jax",
        "--venv",
        &venv.display().to_string(),
        "--no-modify-path",
        "--yes",
    ]);
    let text = format!("{}\n{}", run.stdout, run.stderr);
    if run.code == 3 || text.contains("error sending request") {
        skipped(NAME, "PyPI did not answer");
        return;
    }
    assert_eq!(run.code, 0, "{text}");
    assert!(
        run.stdout.contains("installed JAX 0.12.0.1 (cuda13)"),
        "{text}"
    );
    assert!(
        text.contains("JAX 0.12.0.1 with jax-cuda13-plugin as planned, by their metadata; their files as their RECORDs list; its CUDA plugin loads here (no GPU on this machine: `cudaup verify` on a GPU machine runs its GPU check)"),
        "{text}"
    );
    // The venv imports jax, and the plugin's wheel is in it.
    let py = venv.join("bin/python");
    let out = std::process::Command::new(&py)
        .args([
            "-c",
            "import jax, importlib.metadata as m; print(jax.__version__, m.version('jax-cuda13-plugin'))",
        ])
        .env_clear()
        .env("HOME", ctx.home())
        .env("JAX_PLATFORMS", "cpu")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "0.12.0.1 0.12.0.1",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // verify imports it and skips the GPU part, saying why.
    let v = ctx.cudaup(&["verify", "--json"]);
    let doc: serde_json::Value =
        serde_json::from_str(&v.stdout).unwrap_or_else(|e| panic!("{e}: {}", v.stdout));
    let fw = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "framework:0")
        .unwrap_or_else(|| panic!("{}", v.stdout));
    assert_eq!(fw["status"], "skip", "{fw}");
    assert!(
        fw.to_string()
            .contains("jax 0.12.0.1 (CUDA 13) imports; no GPU here to run on"),
        "{fw}"
    );

    // The plugin goes missing: doctor says JAX runs on the CPU, repair puts it back.
    let site = fs_err::read_dir(venv.join("lib"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("site-packages"))
        .next()
        .unwrap();
    // The loader line that keeps a toolkit's libraries from shadowing the wheels' (see below).
    assert!(site.join(cudaup::install::python::preload::PTH).is_file());
    assert!(site
        .join(cudaup::install::python::preload::MODULE)
        .is_file());
    for e in fs_err::read_dir(&site).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.starts_with("jax_cuda13_plugin") {
            fs_err::remove_dir_all(e.path()).unwrap();
        }
    }
    let doc = ctx.cudaup(&["doctor"]);
    assert!(
        doc.stdout.contains("error [jax-cpu-only]"),
        "{}",
        doc.stdout
    );
    assert!(!doc.stdout.contains("receipt-unreadable"), "{}", doc.stdout);
    let rep = ctx.cudaup(&["repair", "--yes"]);
    assert_eq!(rep.code, 0, "{}\n{}", rep.stdout, rep.stderr);
    assert!(
        rep.stdout.contains("repaired [venv-packages]"),
        "{}",
        rep.stdout
    );
    let doc = ctx.cudaup(&["doctor"]);
    assert!(!doc.stdout.contains("jax-cpu-only"), "{}", doc.stdout);
    let again = ctx.cudaup(&["repair", "--yes"]);
    assert!(
        again.stdout.contains("nothing to repair"),
        "{}",
        again.stdout
    );
}

/// Builds stand-ins of the CUDA libraries JAX's plugin met twice on a GPU, each with its soname,
/// the `DT_NEEDED` entries of the real ones and a RUNPATH of `$ORIGIN` (as NVIDIA's wheels have),
/// into `dir`: `libnvJitLink.so.13` ← `libcublasLt.so.13` ← `libcublas.so.13`, and
/// `libcusolver.so.12` ← `libcusparse.so.12` (which sorts after it). `false` without a C compiler.
fn cuda_like_libraries(dir: &Path) -> bool {
    fs_err::create_dir_all(dir).unwrap();
    let libs: [(&str, &str, &[&str]); 5] = [
        ("libnvJitLink.so.13", "int jit(void) { return 1; }", &[]),
        (
            "libcublasLt.so.13",
            "int jit(void); int lt(void) { return jit() + 1; }",
            &["libnvJitLink.so.13"],
        ),
        (
            "libcublas.so.13",
            "int lt(void); int blas(void) { return lt() + 1; }",
            &["libcublasLt.so.13"],
        ),
        (
            "libcusparse.so.12",
            "int jit(void); int sparse(void) { return jit() + 2; }",
            &["libnvJitLink.so.13"],
        ),
        (
            "libcusolver.so.12",
            "int sparse(void); int lt(void); int solve(void) { return sparse() + lt(); }",
            &["libcusparse.so.12", "libcublasLt.so.13"],
        ),
    ];
    libs.iter().all(|(name, code, needs)| {
        let source = dir.join(format!("{name}.c"));
        fs_err::write(&source, code).unwrap();
        let mut cc = std::process::Command::new("cc");
        cc.args(["-shared", "-fPIC", "-o"])
            .arg(dir.join(name))
            .arg(&source)
            .arg(format!("-Wl,-soname,{name}"))
            .arg("-Wl,--enable-new-dtags,-rpath,$ORIGIN")
            .arg(format!("-L{}", dir.display()));
        for n in *needs {
            cc.arg(format!("-l:{n}"));
        }
        cc.status().is_ok_and(|s| s.success())
    })
}

/// Where each stand-in library was mapped in a Python process that made the venv's site-packages
/// a site directory (its `.pth` lines run, as at a venv's start) and then, with `load`, loaded the
/// wheel's `libcublas.so.13` and `libcusolver.so.12` by path, as JAX's plugin does; with `lib64`
/// on `LD_LIBRARY_PATH`.
fn mapped_from(site: &Path, lib64: &Path, load: bool) -> String {
    let lib = site.join("nvidia/cu13/lib");
    let load = if load { "ctypes.CDLL" } else { "str" };
    let script = format!(
        "import site, ctypes\nsite.addsitedir({site:?})\n{load}({blas:?})\n{load}({solver:?})\n\
         print('\\n'.join(sorted({{l.split()[-1] for l in open('/proc/self/maps') if '/libnv' in l or '/libcu' in l}})))",
        site = site.display().to_string(),
        blas = lib.join("libcublas.so.13").display().to_string(),
        solver = lib.join("libcusolver.so.12").display().to_string(),
    );
    let out = std::process::Command::new("python3")
        .args(["-c", &script])
        .env("LD_LIBRARY_PATH", lib64)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Found on an H100 (docs/h200, session 5): with a toolkit's `lib64` on `LD_LIBRARY_PATH`, as
/// cudaup's env puts it, JAX ran the toolkit's `libcublasLt` and `libnvJitLink` beside its
/// wheels' copies. The loader line cudaup writes into a JAX venv keeps the wheels' copies the
/// only ones; without it the toolkit's load (the test sees the problem it fixes).
#[test]
fn needs_cc_a_jax_venv_keeps_its_wheels_libraries_with_a_toolkit_on_ld_library_path() {
    const NAME: &str =
        "jax::needs_cc_a_jax_venv_keeps_its_wheels_libraries_with_a_toolkit_on_ld_library_path";
    let root = tempfile::tempdir().unwrap();
    let venv = root.path().join("venv");
    let site = venv.join("lib/python3.12/site-packages");
    let wheel_lib = site.join("nvidia/cu13/lib");
    let lib64 = root.path().join("toolkit/lib64");
    if !cuda_like_libraries(&wheel_lib) || !cuda_like_libraries(&lib64) {
        skipped(
            NAME,
            "no C compiler (cc) to build the stand-in CUDA libraries",
        );
        return;
    }

    let before = mapped_from(&site, &lib64, true);
    assert!(
        before.contains(&lib64.join("libcublasLt.so.13").display().to_string()),
        "without cudaup's line the toolkit's copy should load (else this test proves nothing):\n{before}"
    );

    cudaup::install::python::preload::write(&venv).unwrap();
    let after = mapped_from(&site, &lib64, true);
    for name in [
        "libnvJitLink.so.13",
        "libcublasLt.so.13",
        "libcublas.so.13",
        "libcusparse.so.12",
        "libcusolver.so.12",
    ] {
        assert!(
            after.contains(&wheel_lib.join(name).display().to_string()),
            "{name} not from the wheel:\n{after}"
        );
    }
    assert!(
        !after.contains(&lib64.display().to_string()),
        "a toolkit copy still loads:\n{after}"
    );

    // At start-up, before anything asks: with the toolkit on LD_LIBRARY_PATH the line has
    // loaded the wheels' copies; with nothing there that holds them it loads nothing.
    let started = mapped_from(&site, &lib64, false);
    assert!(
        started.contains(&wheel_lib.join("libnvJitLink.so.13").display().to_string()),
        "{started}"
    );
    let quiet = mapped_from(&site, &root.path().join("empty"), false);
    assert_eq!(quiet.trim(), "", "loaded with nothing to shadow:\n{quiet}");
}
