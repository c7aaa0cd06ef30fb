//! Checks `addkernel:N`: the seed guide's first CUDA program (`scripts/addKernel.cu`), compiled
//! with the active nvcc once per GPU architecture (`-arch=sm_XY` from the compute capability)
//! in a temporary directory, then run on each GPU and its result checked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::model::system::Gpu;
use crate::model::version::Version;

use super::toolkit::Toolkit;
use super::{error_lines, exit_words, output_lines, Check, Exec};

/// The program, as the seed guide has it.
pub const ADD_KERNEL: &str = include_str!("../../scripts/addKernel.cu");

/// What a good run prints last.
pub const OK_LINE: &str = "addKernel OK";

/// `sm_90` for compute capability `9.0`, `sm_120` for `12.0`.
pub fn sm_arch(cc: &str) -> Option<String> {
    let v = Version::parse(cc)?;
    (v.minor() < 10).then(|| format!("sm_{}{}", v.major(), v.minor()))
}

/// A build of the program, for the checks that take it apart (`cuobjdump`, `compute-sanitizer`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    /// `sm_90`, or `None` for nvcc's default architecture.
    pub arch: Option<String>,
    /// The executable.
    pub binary: PathBuf,
}

/// Compiles the kernel in `dir` and runs it on every GPU. Without a GPU it is compiled for
/// nvcc's default architecture (so a toolkit that cannot compile fails here too) and the run is
/// skipped.
pub fn check(
    exec: &Exec<'_>,
    toolkit: Option<&Toolkit>,
    no_toolkit: &str,
    gpus: &[Gpu],
    dir: &Path,
) -> (Vec<Check>, Vec<Built>) {
    let Some(toolkit) = toolkit else {
        return (
            vec![Check::skip("addkernel", vec![no_toolkit.to_owned()])],
            Vec::new(),
        );
    };
    if let Err(e) = fs_err::write(dir.join("addKernel.cu"), ADD_KERNEL) {
        return (
            vec![Check::fail(
                "addkernel",
                vec![format!(
                    "cannot write the program to {}: {e}",
                    dir.display()
                )],
            )],
            Vec::new(),
        );
    }
    if gpus.is_empty() {
        return match compile(exec, toolkit, dir, None) {
            Ok((binary, built)) => (
                vec![Check::pass(
                    "addkernel",
                    vec![
                        "addKernel.cu compiles and links; no GPU here to run it on".into(),
                        built,
                    ],
                )
                .data(serde_json::json!({"arch": null, "compiled": true, "ran": false}))],
                vec![Built { arch: None, binary }],
            ),
            Err(lines) => {
                let mut ev = vec!["nvcc could not build addKernel.cu:".to_owned()];
                ev.extend(lines);
                (
                    vec![Check::fail("addkernel", ev)
                        .data(serde_json::json!({"arch": null, "compiled": false}))],
                    Vec::new(),
                )
            }
        };
    }
    // One build per architecture, shared by every GPU of it.
    let mut builds: BTreeMap<String, Result<(PathBuf, String), Vec<String>>> = BTreeMap::new();
    let checks = gpus
        .iter()
        .map(|g| {
            let id = format!("addkernel:{}", g.index);
            let subject = format!("GPU {}: {}", g.index, g.name);
            let Some(arch) = g.compute_capability.as_deref().and_then(sm_arch) else {
                return Check::skip(
                    id,
                    vec![format!(
                        "the compute capability of GPU {} ({}) is unknown: no -arch to build for",
                        g.index, g.name
                    )],
                )
                .subject(subject);
            };
            let build = builds
                .entry(arch.clone())
                .or_insert_with(|| compile(exec, toolkit, dir, Some(&arch)));
            match build {
                Err(lines) => {
                    let mut ev = vec![format!("nvcc -arch={arch} could not build addKernel.cu:")];
                    ev.extend(lines.iter().cloned());
                    Check::fail(id, ev)
                        .subject(subject)
                        .data(serde_json::json!({"arch": arch, "compiled": false}))
                }
                Ok((binary, built)) => run_on(exec, g, binary, &arch, built).subject(subject),
            }
        })
        .collect();
    let built = builds
        .into_iter()
        .filter_map(|(arch, b)| {
            b.ok().map(|(binary, _)| Built {
                arch: Some(arch),
                binary,
            })
        })
        .collect();
    (checks, built)
}

fn compile(
    exec: &Exec<'_>,
    toolkit: &Toolkit,
    dir: &Path,
    arch: Option<&str>,
) -> Result<(PathBuf, String), Vec<String>> {
    // `.exe` on Windows: the name nvcc's linker gives and Windows runs.
    let binary = dir.join(format!(
        "addKernel_{}{}",
        arch.unwrap_or("default"),
        std::env::consts::EXE_SUFFIX
    ));
    let source = dir.join("addKernel.cu");
    let arch_flag = arch.map(|a| format!("-arch={a}"));
    let out_arg = binary.display().to_string();
    let src_arg = source.display().to_string();
    let mut args: Vec<&str> = arch_flag.iter().map(String::as_str).collect();
    args.extend(["-o", &out_arg, &src_arg]);
    let started = Instant::now();
    let out = exec
        .run(&toolkit.nvcc, &args, &[], Duration::from_secs(300))
        .map_err(|e| vec![e.to_string()])?;
    if !out.success() || !binary.is_file() {
        let mut lines = error_lines(&output_lines(&out), 10);
        if lines.is_empty() {
            lines.push(format!(
                "nvcc ended with {} and wrote no program",
                exit_words(&out)
            ));
        }
        return Err(lines);
    }
    Ok((
        binary,
        format!(
            "built with {} {}in {:.1} s",
            toolkit.nvcc.display(),
            arch_flag.map(|a| a + " ").unwrap_or_default(),
            started.elapsed().as_secs_f64()
        ),
    ))
}

fn run_on(exec: &Exec<'_>, g: &Gpu, binary: &Path, arch: &str, built: &str) -> Check {
    let id = format!("addkernel:{}", g.index);
    let index = g.index.to_string();
    let data = |ok: bool| serde_json::json!({"arch": arch, "compiled": true, "ran": ok});
    let out = match exec.run(
        binary,
        &[],
        &[("CUDA_VISIBLE_DEVICES", &index)],
        Duration::from_secs(120),
    ) {
        Ok(o) => o,
        Err(e) => return Check::fail(id, vec![built.to_owned(), e.to_string()]).data(data(false)),
    };
    let lines = output_lines(&out);
    let printed_ok = out.stdout.lines().any(|l| l.trim() == OK_LINE);
    if out.success() && printed_ok {
        let mut ev = vec![format!("{OK_LINE} on GPU {} ({arch})", g.index)];
        ev.extend(lines.into_iter().filter(|l| l.trim() != OK_LINE));
        ev.push(built.to_owned());
        Check::pass(id, ev).data(data(true))
    } else {
        let mut ev = vec![format!(
            "addKernel did not pass on GPU {} ({}, no `{OK_LINE}`)",
            g.index,
            exit_words(&out)
        )];
        ev.extend(lines.into_iter().take(10));
        ev.push(built.to_owned());
        Check::fail(id, ev).data(data(false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::testing::{failed, ok, Scripted};
    use crate::verify::Status;
    use crate::world::process::Process;

    #[test]
    fn arch_from_compute_capability() {
        assert_eq!(sm_arch("9.0").as_deref(), Some("sm_90"));
        assert_eq!(sm_arch("8.6").as_deref(), Some("sm_86"));
        assert_eq!(sm_arch("12.0").as_deref(), Some("sm_120"));
        assert_eq!(sm_arch("10.3").as_deref(), Some("sm_103"));
        assert_eq!(sm_arch("unknown"), None);
    }

    #[test]
    fn the_program_is_the_seeds() {
        assert!(ADD_KERNEL.contains("__global__ void addKernel"));
        assert!(ADD_KERNEL.contains(OK_LINE));
    }

    fn gpu(index: u32, cc: Option<&str>) -> Gpu {
        Gpu {
            index,
            vendor: crate::model::system::Vendor::Nvidia,
            name: "NVIDIA H200".into(),
            pci_id: None,
            compute_capability: cc.map(str::to_owned),
            architecture: None,
            memory_mib: None,
        }
    }

    fn toolkit() -> Toolkit {
        Toolkit {
            dir: "/cuda".into(),
            real: "/cuda".into(),
            nvcc: "/cuda/bin/nvcc".into(),
            receipt: None,
            cuda: Version::parse("13.0"),
        }
    }

    /// An nvcc that "builds" by writing an empty file, and a program whose output is `run`.
    fn runner(run: Option<crate::world::runner::Output>) -> Scripted {
        Scripted::new(move |program, args, _| {
            if program.ends_with("nvcc") {
                let out = args[args.iter().position(|a| *a == "-o").unwrap() + 1];
                fs_err::write(out, "").unwrap();
                ok("")
            } else {
                run.clone()
            }
        })
    }

    #[test]
    fn builds_once_per_architecture_and_runs_per_gpu() {
        let r = runner(ok("device 0: NVIDIA H200 (compute capability 9.0)\n{1,2,3,4,5} + {10,20,30,40,50} = {11,22,33,44,55}\naddKernel OK\n"));
        let process = Process::default();
        let exec = Exec::new(&r, &process, None);
        let tk = toolkit();
        let dir = tempfile::tempdir().unwrap();
        let (checks, built) = check(
            &exec,
            Some(&tk),
            "",
            &[gpu(0, Some("9.0")), gpu(1, Some("9.0"))],
            dir.path(),
        );
        assert_eq!(built.len(), 1);
        assert_eq!(checks.len(), 2);
        assert!(
            checks.iter().all(|c| c.status == Status::Pass),
            "{checks:?}"
        );
        assert_eq!(checks[1].id, "addkernel:1");
        assert_eq!(checks[0].evidence[0], "addKernel OK on GPU 0 (sm_90)");
        let calls = r.calls.lock().unwrap();
        let nvcc: Vec<_> = calls.iter().filter(|c| c.0.ends_with("nvcc")).collect();
        assert_eq!(nvcc.len(), 1);
        assert_eq!(nvcc[0].1[0], "-arch=sm_90");
        let runs: Vec<_> = calls.iter().filter(|c| !c.0.ends_with("nvcc")).collect();
        assert!(runs[1]
            .2
            .contains(&("CUDA_VISIBLE_DEVICES".to_owned(), "1".to_owned())));
    }

    #[test]
    fn compile_errors_and_wrong_results_fail_with_their_lines() {
        let r = Scripted::new(|_, _, _| {
            failed(
                1,
                "",
                "nvcc fatal   : Unsupported gpu architecture 'compute_35'\n",
            )
        });
        let process = Process::default();
        let exec = Exec::new(&r, &process, None);
        let tk = toolkit();
        let dir = tempfile::tempdir().unwrap();
        let c = &check(&exec, Some(&tk), "", &[gpu(0, Some("3.5"))], dir.path()).0[0];
        assert_eq!(c.status, Status::Fail);
        assert!(
            c.evidence[1].contains("Unsupported gpu architecture"),
            "{c:?}"
        );

        let r = runner(failed(1, "device 0: X\n", "wrong result at 2\n"));
        let exec = Exec::new(&r, &process, None);
        let c = &check(&exec, Some(&tk), "", &[gpu(0, Some("9.0"))], dir.path()).0[0];
        assert_eq!(c.status, Status::Fail);
        assert!(c.evidence.iter().any(|l| l == "wrong result at 2"), "{c:?}");
    }

    #[test]
    fn skipped_without_toolkit_or_capability_and_built_without_a_gpu() {
        let r = runner(None);
        let process = Process::default();
        let exec = Exec::new(&r, &process, None);
        let dir = tempfile::tempdir().unwrap();
        let c = check(
            &exec,
            None,
            "no CUDA toolkit",
            &[gpu(0, Some("9.0"))],
            dir.path(),
        )
        .0;
        assert_eq!(c[0].status, Status::Skip);
        let tk = toolkit();
        let c = check(&exec, Some(&tk), "", &[gpu(0, None)], dir.path()).0;
        assert_eq!(c[0].status, Status::Skip);
        assert!(r.calls.lock().unwrap().is_empty());
        // No GPU: compiled for nvcc's default architecture, not run.
        let (c, built) = check(&exec, Some(&tk), "", &[], dir.path());
        assert_eq!(c[0].status, Status::Pass, "{c:?}");
        assert_eq!(
            c[0].evidence[0],
            "addKernel.cu compiles and links; no GPU here to run it on"
        );
        assert_eq!(built[0].arch, None);
        let calls = r.calls.lock().unwrap();
        assert_eq!(calls.len(), 1);
        assert!(!calls[0].1.iter().any(|a| a.starts_with("-arch")));
        drop(calls);
        // A toolkit whose nvcc cannot compile (ptxas gone) fails even without a GPU.
        let r = Scripted::new(|_, _, _| {
            failed(
                1,
                "",
                "sh: 1: ptxas: not found\nnvcc fatal   : Failed to run ptxas\n",
            )
        });
        let exec = Exec::new(&r, &process, None);
        let (c, _) = check(&exec, Some(&tk), "", &[], dir.path());
        assert_eq!(c[0].status, Status::Fail);
        assert!(c[0].evidence.iter().any(|l| l.contains("ptxas")), "{c:?}");
    }
}
