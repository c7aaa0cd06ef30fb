//! This process's environment: `CUDA_HOME`/`CUDA_PATH` pointing nowhere, the `nvcc` on `PATH`
//! against the toolkit the user means, and an `LD_LIBRARY_PATH` that shadows a wheel's CUDA
//! libraries. Only on the live machine; paths are read directly (they are this machine's).

use std::path::{Path, PathBuf};

use crate::detect::toolkits::parse_version_files;
use crate::model::finding::Severity;

use super::{Diagnosis, Inputs};

/// Every environment check.
pub fn check(inputs: &Inputs<'_>) -> Vec<Diagnosis> {
    let mut out = cuda_home(inputs);
    out.extend(nvcc_path_order(inputs));
    out.extend(shadowing(inputs, &crate::shell::list_dir));
    out
}

fn real(p: &Path) -> PathBuf {
    fs_err::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The toolkit's version from its files, for evidence.
fn toolkit_version(dir: &Path) -> Option<String> {
    parse_version_files(
        fs_err::read_to_string(dir.join("version.json"))
            .ok()
            .as_deref(),
        fs_err::read_to_string(dir.join("version.txt"))
            .ok()
            .as_deref(),
    )
}

fn describe(dir: &Path) -> String {
    match toolkit_version(dir) {
        Some(v) => format!("{} (CUDA {v})", dir.display()),
        None => dir.display().to_string(),
    }
}

/// A toolkit to suggest instead: cudaup's active one, else the first detected one.
fn candidate(inputs: &Inputs<'_>) -> Option<PathBuf> {
    inputs
        .receipts
        .active
        .toolkit
        .clone()
        .filter(|t| crate::model::layout::Prefix::at(t).nvcc().is_file())
        .or_else(|| {
            inputs
                .system
                .toolkits
                .iter()
                .map(|t| PathBuf::from(&t.path))
                .find(|t| crate::model::layout::Prefix::at(t).nvcc().is_file())
        })
}

/// `cuda-home-invalid`: `CUDA_HOME` or `CUDA_PATH` names a missing directory (error) or one
/// without `bin/nvcc` (warning: builds that read it, such as torch's cpp_extension, fail).
fn cuda_home(inputs: &Inputs<'_>) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        let Some(dir) = inputs.process.path_var(var) else {
            continue;
        };
        let fix = match candidate(inputs) {
            Some(c) => format!("export {var}={}", c.display()),
            None => format!(
                "unset {var}   # or point it at a CUDA toolkit (the directory holding bin/nvcc)"
            ),
        };
        if !dir.exists() {
            out.push(
                Diagnosis::new(
                    "cuda-home-invalid",
                    Severity::Error,
                    format!("{var} points to {}, which does not exist", dir.display()),
                )
                .evidence(format!("{var}={}", dir.display()))
                .evidence("build tools that read it (torch.utils.cpp_extension, CMake, setup.py builds) fail to find CUDA")
                .fix(fix),
            );
        } else if !crate::model::layout::Prefix::at(&dir).nvcc().is_file() {
            out.push(
                Diagnosis::new(
                    "cuda-home-invalid",
                    Severity::Warning,
                    format!(
                        "{var} points to {}, which has no bin/nvcc: it is not a CUDA toolkit",
                        dir.display()
                    ),
                )
                .evidence(format!("{var}={}", dir.display()))
                .evidence(format!(
                    "{} is missing",
                    crate::model::layout::Prefix::at(&dir).nvcc().display()
                ))
                .fix(fix),
            );
        }
    }
    out
}

/// `nvcc-path-order`: the first `nvcc` on `PATH` belongs to another toolkit than the one
/// `CUDA_HOME` (or cudaup's active toolkit) names, or several toolkits are on `PATH`.
/// `nvcc-not-on-path`: the intended toolkit has no `nvcc` on `PATH` at all.
fn nvcc_path_order(inputs: &Inputs<'_>) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let path = inputs.process.path_entries();
    // Every nvcc on PATH in order, by toolkit (the real directory above bin/).
    let mut found: Vec<(PathBuf, PathBuf)> = Vec::new();
    for dir in &path {
        let Some(nvcc) = crate::world::runner::which("nvcc", std::slice::from_ref(dir)) else {
            continue;
        };
        let top = real(&nvcc)
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| dir.clone());
        if !found.iter().any(|(_, t)| *t == top) {
            found.push((nvcc, top));
        }
    }
    let intended = inputs
        .intended_toolkit()
        .filter(|(t, _)| crate::model::layout::Prefix::at(t).nvcc().is_file());
    let listing: Vec<String> = found
        .iter()
        .enumerate()
        .map(|(i, (nvcc, top))| {
            format!(
                "PATH nvcc #{}: {} → {}",
                i + 1,
                nvcc.display(),
                describe(top)
            )
        })
        .collect();
    match (&intended, found.first()) {
        (Some((want, from)), Some((nvcc, first))) if real(want) != *first => {
            let mut d = Diagnosis::new(
                "nvcc-path-order",
                Severity::Warning,
                format!(
                    "the nvcc on PATH ({}) is not the toolkit {from} names ({}): code built with nvcc and code built through CUDA_HOME use different CUDA",
                    nvcc.display(),
                    want.display()
                ),
            )
            .evidence(format!("{from}: {}", describe(want)));
            d.evidence.extend(listing);
            out.push(d.fix(format!(
                "export PATH={}:$PATH\nor, for cudaup's active toolkit: . \"$CUDAUP_HOME/env\"",
                crate::model::layout::Prefix::at(want).bin().display()
            )));
        }
        (Some((want, from)), None) => {
            out.push(
                Diagnosis::new(
                    "nvcc-not-on-path",
                    Severity::Info,
                    format!(
                        "no nvcc on PATH, although {from} names the toolkit {}",
                        want.display()
                    ),
                )
                .evidence(format!("PATH={}", inputs.process.var("PATH").unwrap_or("")))
                .fix(format!(
                    "export PATH={}:$PATH\nor: . \"$CUDAUP_HOME/env\"",
                    crate::model::layout::Prefix::at(want).bin().display()
                )),
            );
        }
        (None, _) if found.len() > 1 => {
            let mut d = Diagnosis::new(
                "nvcc-path-order",
                Severity::Info,
                format!(
                    "{} CUDA toolkits are reachable from PATH; the first one wins ({})",
                    found.len(),
                    found[0].1.display()
                ),
            );
            d.evidence = listing;
            out.push(d.fix(format!(
                "keep one toolkit's bin on PATH, and set CUDA_HOME to the same toolkit: export CUDA_HOME={}",
                found[0].1.display()
            )));
        }
        _ => {}
    }
    out
}

/// `ld-library-path-shadowing`: `LD_LIBRARY_PATH` directories that hold CUDA libraries a
/// framework wheel carries itself. cudaup's own entries (a toolkit cudaup installed — the active
/// one, or one a shell that has not sourced the new env script still lists — put there by its
/// env script) are not counted.
pub fn shadowing(inputs: &Inputs<'_>, list: &dyn Fn(&Path) -> Vec<String>) -> Option<Diagnosis> {
    let ld = inputs.process.var("LD_LIBRARY_PATH")?;
    let own: Vec<PathBuf> = inputs
        .receipts
        .active
        .toolkit
        .iter()
        .cloned()
        .chain(
            inputs
                .system
                .toolkits
                .iter()
                .filter(|t| t.owner == crate::model::system::Owner::Cudaup)
                .map(|t| PathBuf::from(&t.path)),
        )
        .collect();
    let hits: Vec<(PathBuf, Vec<String>)> = crate::shell::shadowing(ld, list)
        .into_iter()
        .filter(|(dir, _)| !own.iter().any(|t| dir.starts_with(t)))
        .collect();
    if hits.is_empty() {
        return None;
    }
    let wheels: Vec<String> = inputs
        .torches()
        .iter()
        .filter(|s| s.torch.cuda.is_some())
        .map(|s| format!("torch {} in {}", s.torch.version, s.python))
        .chain(inputs.system.pythons.iter().filter_map(|p| {
            let tf = p.tensorflow.as_ref()?;
            tf.cuda
                .as_ref()
                .map(|_| format!("tensorflow {} in {}", tf.version, p.path))
        }))
        .chain(
            super::jax::sites(inputs)
                .into_iter()
                .map(|s| format!("{} in {}", s.requirement, s.receipt.venv.display())),
        )
        .collect();
    let mut d = Diagnosis::new(
        "ld-library-path-shadowing",
        if wheels.is_empty() {
            Severity::Info
        } else {
            Severity::Warning
        },
        format!(
            "LD_LIBRARY_PATH lists {} with CUDA libraries that framework wheels carry themselves: the loader takes these first, so a wheel can load the wrong cuDNN/cuBLAS/runtime",
            hits.iter()
                .map(|(d, _)| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    for (dir, libs) in &hits {
        d = d.evidence(format!("{}: {}", dir.display(), libs.join(", ")));
    }
    d = if wheels.is_empty() {
        d.evidence("no CUDA framework wheel was found now; any installed later is affected")
    } else {
        d.evidence(format!("affected: {}", wheels.join("; ")))
    };
    let keep: Vec<&str> = ld
        .split(':')
        .filter(|e| !e.is_empty() && !hits.iter().any(|(d, _)| d == Path::new(e)))
        .collect();
    let fix = if keep.is_empty() {
        "unset LD_LIBRARY_PATH   # and remove where your shell profile sets it".to_owned()
    } else {
        format!(
            "export LD_LIBRARY_PATH={}   # and change it where your shell profile sets it",
            keep.join(":")
        )
    };
    Some(d.fix(fix))
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;
    use crate::world::process::Process;

    #[cfg(unix)]
    fn exe(path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, "#!/bin/sh\n").unwrap();
        fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn cuda_home_missing_and_without_nvcc() {
        let tmp = tempfile::tempdir().unwrap();
        let mut w = World::new(h200());
        w.live = true;
        w.process = Process::with_vars(
            [
                ("CUDA_HOME", "/definitely/not/here"),
                ("CUDA_PATH", tmp.path().to_str().unwrap()),
            ],
            "/",
        );
        let d = cuda_home(&w.inputs());
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].id(), "cuda-home-invalid");
        assert_eq!(d[0].severity(), Severity::Error);
        assert_eq!(d[1].severity(), Severity::Warning);
    }

    #[cfg(unix)]
    #[test]
    fn nvcc_on_path_is_not_cuda_home() {
        let tmp = tempfile::tempdir().unwrap();
        let old = tmp.path().join("cuda-12.4");
        let new = tmp.path().join("cuda-13.0");
        exe(&old.join("bin/nvcc"));
        exe(&new.join("bin/nvcc"));
        let mut w = World::new(h200());
        w.live = true;
        let path = format!(
            "{}:{}:/usr/bin",
            old.join("bin").display(),
            new.join("bin").display()
        );
        w.process = Process::with_vars(
            [
                ("PATH", path.as_str()),
                ("CUDA_HOME", new.to_str().unwrap()),
            ],
            "/",
        );
        let d = nvcc_path_order(&w.inputs());
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].id(), "nvcc-path-order");
        assert_eq!(d[0].severity(), Severity::Warning);
        assert_eq!(d[0].evidence.len(), 3, "{:?}", d[0].evidence);
        // The right order: nothing but the note that two are reachable.
        let path = format!(
            "{}:{}",
            new.join("bin").display(),
            old.join("bin").display()
        );
        w.process = Process::with_vars(
            [
                ("PATH", path.as_str()),
                ("CUDA_HOME", new.to_str().unwrap()),
            ],
            "/",
        );
        assert!(nvcc_path_order(&w.inputs()).is_empty());
    }

    #[test]
    fn shadowing_skips_cudaups_own_entry() {
        let fake = |d: &Path| -> Vec<String> {
            match d.to_str().unwrap() {
                "/opt/old/lib64" | "/h/toolkits/cuda-13.0/lib64" => {
                    vec!["libcudart.so.12".into(), "libcublas.so.12".into()]
                }
                _ => vec![],
            }
        };
        let mut w = World::new(h200());
        w.live = true;
        w.receipts.active.toolkit = Some(PathBuf::from("/h/toolkits/cuda-13.0"));
        w.process = Process::with_vars(
            [(
                "LD_LIBRARY_PATH",
                "/h/toolkits/cuda-13.0/lib64:/opt/old/lib64:/usr/lib",
            )],
            "/",
        );
        let d = shadowing(&w.inputs(), &fake).unwrap();
        assert_eq!(d.severity(), Severity::Warning);
        assert_eq!(
            d.evidence[0],
            "/opt/old/lib64: libcublas.so.12, libcudart.so.12"
        );
        assert!(d
            .finding
            .fix
            .unwrap()
            .starts_with("export LD_LIBRARY_PATH=/h/toolkits/cuda-13.0/lib64:/usr/lib"));
        w.process = Process::with_vars([("LD_LIBRARY_PATH", "/h/toolkits/cuda-13.0/lib64")], "/");
        assert!(shadowing(&w.inputs(), &fake).is_none());
        // A toolkit cudaup installed that is no longer the active one (a shell that has not
        // sourced the new env script) is still cudaup's own entry.
        w.receipts.active.toolkit = Some(PathBuf::from("/h/toolkits/cuda-13.4.2"));
        w.system.toolkits.push(crate::model::system::Toolkit {
            version: "13.0.2".into(),
            path: "/h/toolkits/cuda-13.0".into(),
            owner: crate::model::system::Owner::Cudaup,
        });
        assert!(shadowing(&w.inputs(), &fake).is_none());
    }
}
