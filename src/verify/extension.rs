//! Checks `extension:N`: the `full` profile's promise. A `torch.utils.cpp_extension` CUDA
//! extension (`programs/extension/`) is built in the venv against the installed toolkit
//! (`CUDA_HOME` points at it, its nvcc compiles the kernel, `-lcudart` resolves in its `lib64`),
//! then run on each GPU and checked against the CPU.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use crate::model::system::Gpu;

use super::framework::VenvTarget;
use super::toolkit::Toolkit;
use super::{exit_words, json_line, output_lines, Check, Exec};

/// Builds and runs the extension; `argv[1]` is the directory with the sources.
pub const SCRIPT: &str = include_str!("programs/extension/build.py");
/// The extension's binding.
pub const CPP: &str = include_str!("programs/extension/cudaup_ext.cpp");
/// Its kernel.
pub const CU: &str = include_str!("programs/extension/cudaup_ext_kernel.cu");

/// The largest |GPU − CPU| allowed for `2.5 x + 1` over 65536 floats up to 9362.
pub const TOLERANCE: f64 = 1e-2;

/// What [`SCRIPT`] prints.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ExtensionReport {
    /// torch's version.
    pub torch: Option<String>,
    /// The CUDA torch was built for (`None`: a CPU build).
    pub cuda: Option<String>,
    /// The toolkit cpp_extension took.
    pub cuda_home: Option<String>,
    /// Whether it built.
    #[serde(default)]
    pub built: bool,
    /// How long the build took.
    pub build_seconds: Option<f64>,
    /// Why it did not build.
    pub build_error: Option<String>,
    /// The runs.
    #[serde(default)]
    pub devices: Vec<ExtensionRun>,
    /// torch did not import.
    pub error: Option<String>,
}

/// One GPU's run.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ExtensionRun {
    /// torch's index.
    pub index: usize,
    /// The GPU.
    pub name: Option<String>,
    /// max |GPU − CPU|.
    pub max_abs_err: Option<f64>,
    /// What went wrong.
    pub error: Option<String>,
}

/// `TORCH_CUDA_ARCH_LIST` for the GPUs (`9.0;8.9`), else the oldest CUDA 13 target.
fn arch_list(gpus: &[Gpu]) -> String {
    let mut v: Vec<String> = gpus
        .iter()
        .filter_map(|g| g.compute_capability.clone())
        .collect();
    v.sort();
    v.dedup();
    if v.is_empty() {
        "7.5".into()
    } else {
        v.join(";")
    }
}

/// The extension check of venv `n`, skipped for `why`.
pub fn skipped(n: usize, venv: &VenvTarget, why: &str) -> Check {
    Check::skip(format!("extension:{n}"), vec![why.to_owned()])
        .subject(venv.dir.display().to_string())
}

/// Builds the extension in venv `n` against `tk` and runs it on each GPU.
pub fn check(
    exec: &Exec<'_>,
    n: usize,
    venv: &VenvTarget,
    tk: Option<&Toolkit>,
    gpus: &[Gpu],
    dir: &Path,
) -> Check {
    let id = format!("extension:{n}");
    let subject = venv.dir.display().to_string();
    let Some(tk) = tk else {
        return skipped(
            n,
            venv,
            "no CUDA toolkit to build a torch extension against",
        );
    };
    if venv.kind_is_tensorflow() {
        return Check::skip(
            id,
            vec!["a TensorFlow venv: the torch extension does not apply".into()],
        )
        .subject(subject);
    }
    let work = dir.join(format!("extension-{n}"));
    if let Err(e) = fs_err::create_dir_all(&work)
        .and_then(|_| fs_err::write(work.join("cudaup_ext.cpp"), CPP))
        .and_then(|_| fs_err::write(work.join("cudaup_ext_kernel.cu"), CU))
    {
        return Check::fail(id, vec![format!("cannot write the extension: {e}")]).subject(subject);
    }
    let python = venv.venv().python();
    let work_arg = work.display().to_string();
    let archs = arch_list(gpus);
    // The venv's own tools (ninja from PyPI) first, then the toolkit's.
    let path = super::prepend(
        exec.env()
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_str()),
        &crate::model::layout::Prefix::at(&venv.dir).venv_scripts(),
    );
    let out = match exec.run(
        &python,
        &["-c", SCRIPT, &work_arg],
        &[
            ("TORCH_CUDA_ARCH_LIST", &archs),
            ("PATH", &path),
            ("MAX_JOBS", "4"),
        ],
        Duration::from_secs(1200),
    ) {
        Ok(o) => o,
        Err(e) => return Check::fail(id, vec![e.to_string()]).subject(subject),
    };
    let report: ExtensionReport = match json_line(&out) {
        Ok(r) => r,
        Err(why) => {
            let mut ev = vec![format!(
                "{} could not run the build: {why} ({})",
                python.display(),
                exit_words(&out)
            )];
            ev.extend(output_lines(&out).into_iter().rev().take(8).rev());
            return Check::fail(id, ev).subject(subject);
        }
    };
    judge(&id, &report, tk, gpus, &archs).subject(subject)
}

/// Turns a report into the check.
pub fn judge(id: &str, r: &ExtensionReport, tk: &Toolkit, gpus: &[Gpu], archs: &str) -> Check {
    let data = serde_json::json!({
        "torch": r.torch, "cuda": r.cuda, "cuda_home": r.cuda_home, "built": r.built,
        "build_seconds": r.build_seconds, "arch_list": archs,
        "devices": r.devices.iter().map(|d| serde_json::json!({"index": d.index, "max_abs_err": d.max_abs_err, "error": d.error})).collect::<Vec<_>>(),
    });
    if let Some(e) = &r.error {
        return Check::skip(
            id,
            vec![format!(
                "torch does not import in this venv ({e}); see the framework check"
            )],
        )
        .data(data);
    }
    let torch = r.torch.as_deref().unwrap_or("?");
    let Some(cuda) = &r.cuda else {
        return Check::skip(
            id,
            vec![format!(
                "torch {torch} is a CPU-only build: no CUDA extension to build"
            )],
        )
        .data(data);
    };
    if let Some(home) = &r.cuda_home {
        let same = match (fs_err::canonicalize(home), fs_err::canonicalize(&tk.dir)) {
            (Ok(a), Ok(b)) => a == b,
            _ => Path::new(home) == tk.dir,
        };
        if !same {
            return Check::fail(
                id,
                vec![format!(
                    "torch.utils.cpp_extension took CUDA_HOME={home}, not the toolkit {}",
                    tk.dir.display()
                )],
            )
            .data(data);
        }
    }
    if let Some(e) = r
        .build_error
        .as_deref()
        .filter(|e| e.contains("Ninja is required"))
    {
        // torch.utils.cpp_extension builds only with Ninja, a build tool and not part of the
        // stack: cudaup puts it into the venvs it makes for a toolkit profile, and a venv
        // without it is skipped with the way to add it, not failed.
        let first = e.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or(e);
        return Check::skip(
            id,
            vec![format!(
                "torch {torch} found no working Ninja to build the extension with ({}); `pip install ninja` in the venv adds it",
                first.trim()
            )],
        )
        .data(data);
    }
    if let Some(e) = &r.build_error {
        let mut ev = vec![format!(
            "torch {torch} (CUDA {cuda}): the extension does not build against {}:",
            tk.dir.display()
        )];
        let lines: Vec<&str> = e.lines().filter(|l| !l.trim().is_empty()).collect();
        let errors: Vec<String> = lines
            .iter()
            .filter(|l| {
                let l = l.to_ascii_lowercase();
                l.contains("error") || l.contains("cannot find") || l.contains("fatal")
            })
            .take(8)
            .map(|l| l.trim().to_owned())
            .collect();
        if errors.is_empty() {
            ev.extend(
                lines
                    .iter()
                    .rev()
                    .take(8)
                    .rev()
                    .map(|l| l.trim().to_owned()),
            );
        } else {
            ev.extend(errors);
        }
        return Check::fail(id, ev).data(data);
    }
    let mut ev = vec![format!(
        "torch {torch} (CUDA {cuda}) builds a cpp_extension CUDA extension against {} (TORCH_CUDA_ARCH_LIST={archs}) in {:.0} s",
        tk.dir.display(),
        r.build_seconds.unwrap_or(0.0)
    )];
    if gpus.is_empty() {
        ev.push("no GPU here to run it on".into());
        return Check::pass(id, ev).data(data);
    }
    let mut ok = r.devices.len() >= gpus.len();
    if !ok {
        ev.push(format!(
            "torch ran it on {} GPU(s), nvidia-smi lists {}",
            r.devices.len(),
            gpus.len()
        ));
    }
    for d in &r.devices {
        let who = format!(
            "GPU {}: {}",
            d.index,
            d.name.as_deref().unwrap_or("unnamed")
        );
        match (&d.error, d.max_abs_err) {
            (Some(e), _) => {
                ok = false;
                ev.push(format!("{who}: {e}"));
            }
            (None, Some(err)) if err <= TOLERANCE => ev.push(format!(
                "{who}: axpb(x) = 2.5 x + 1 matches the CPU (max error {err:.1e})"
            )),
            (None, err) => {
                ok = false;
                ev.push(format!(
                    "{who}: axpb differs from the CPU (max error {err:?})"
                ));
            }
        }
    }
    if ok {
        Check::pass(id, ev).data(data)
    } else {
        Check::fail(id, ev).data(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::Status;

    fn tk() -> Toolkit {
        Toolkit {
            dir: "/no/such/cuda".into(),
            real: "/no/such/cuda".into(),
            nvcc: "/no/such/cuda/bin/nvcc".into(),
            receipt: None,
            cuda: crate::model::version::Version::parse("13.0"),
        }
    }

    fn gpu() -> Gpu {
        Gpu {
            index: 0,
            vendor: crate::model::system::Vendor::Nvidia,
            name: "NVIDIA H200".into(),
            pci_id: None,
            compute_capability: Some("9.0".into()),
            architecture: None,
            memory_mib: None,
        }
    }

    fn report(json: &str) -> ExtensionReport {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn judging_the_build_and_the_runs() {
        let ok = report(
            r#"{"torch": "2.11.0+cu130", "cuda": "13.0", "cuda_home": "/no/such/cuda", "built": true, "build_seconds": 41.5, "devices": [{"index": 0, "name": "NVIDIA H200", "max_abs_err": 0.0}]}"#,
        );
        let c = judge("extension:0", &ok, &tk(), &[gpu()], "9.0");
        assert_eq!(c.status, Status::Pass, "{c:?}");
        assert!(c.evidence[0].contains("builds a cpp_extension CUDA extension against /no/such/cuda (TORCH_CUDA_ARCH_LIST=9.0) in 42 s"), "{c:?}");
        assert_eq!(
            c.evidence[1],
            "GPU 0: NVIDIA H200: axpb(x) = 2.5 x + 1 matches the CPU (max error 0.0e0)"
        );
        let c = judge("extension:0", &ok, &tk(), &[], "7.5");
        assert_eq!(c.status, Status::Pass);
        assert_eq!(c.evidence[1], "no GPU here to run it on");

        let broken = report(
            r#"{"torch": "2.11.0+cu130", "cuda": "13.0", "cuda_home": "/no/such/cuda", "build_error": "RuntimeError: Error building extension 'cudaup_ext': [1/3] c++ ...\n/usr/bin/ld: cannot find -lcudart: No such file or directory\ncollect2: error: ld returned 1 exit status\nninja: build stopped: subcommand failed."}"#,
        );
        let c = judge("extension:0", &broken, &tk(), &[gpu()], "9.0");
        assert_eq!(c.status, Status::Fail);
        assert!(
            c.evidence
                .iter()
                .any(|l| l.contains("cannot find -lcudart")),
            "{c:?}"
        );

        let other =
            report(r#"{"torch": "2.11.0+cu130", "cuda": "13.0", "cuda_home": "/usr/local/cuda"}"#);
        let c = judge("extension:0", &other, &tk(), &[gpu()], "9.0");
        assert_eq!(c.status, Status::Fail);
        assert!(c.evidence[0].contains("CUDA_HOME=/usr/local/cuda"));

        let cpu = report(r#"{"torch": "2.11.0+cpu", "cuda": null}"#);
        assert_eq!(
            judge("e", &cpu, &tk(), &[gpu()], "9.0").status,
            Status::Skip
        );
        // torch's own words when it finds no Ninja: skipped with the fix, not failed.
        let no_ninja = report(
            r#"{"torch": "2.11.0+cu130", "cuda": "13.0", "cuda_home": "/no/such/cuda", "build_error": "Traceback (most recent call last):\n  ...\nRuntimeError: Ninja is required to load C++ extensions"}"#,
        );
        let c = judge("extension:0", &no_ninja, &tk(), &[gpu()], "9.0");
        assert_eq!(c.status, Status::Skip, "{c:?}");
        assert!(
            c.evidence[0].contains("Ninja is required to load C++ extensions")
                && c.evidence[0].contains("pip install ninja"),
            "{c:?}"
        );
        let none = report(r#"{"error": "ModuleNotFoundError: No module named 'torch'"}"#);
        assert_eq!(
            judge("e", &none, &tk(), &[gpu()], "9.0").status,
            Status::Skip
        );
        assert_eq!(arch_list(&[gpu(), gpu()]), "9.0");
    }
}
