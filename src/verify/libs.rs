//! Checks `libraries`, then one check per library (`cudart`, `cublas`, `cufft`, `curand`,
//! `cusparse`, `cusolver`, `cudnn`, `nvrtc`, `nvjitlink`, `npp`, `nvjpeg`, `cupti`, `nvtx`,
//! `nvml`, `profiler`): one program (`programs/libs.cu`) that links every library the toolkit
//! has — through the unversioned names and `lib64/stubs`, as any build does — is compiled with
//! the toolkit's nvcc, then run on each GPU, where it makes one real call into each library,
//! checks the numbers against the CPU, and names the file the loader mapped.
//!
//! Without a GPU the program is still compiled and linked (the `libraries` check), and each
//! library's run is skipped. A library the receipt says was installed but whose header or
//! library file is missing fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::catalog::ComponentsManifest;
use crate::model::system::Gpu;

use super::toolkit::Toolkit;
use super::{error_lines, exit_words, output_lines, Check, Exec};

/// The program.
pub const PROGRAM: &str = include_str!("programs/libs.cu");

/// A library the program can call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Library {
    /// Check id and the program's `HAVE_` macro (upper-cased).
    pub id: &'static str,
    /// How people write it.
    pub name: &'static str,
    /// The catalog component that installs it.
    pub component: &'static str,
    /// A header the program includes.
    pub header: &'static str,
    /// `-l` names (found in `lib64/` or `lib64/stubs/`).
    pub link: &'static [&'static str],
    /// A library it cannot be tested without.
    pub needs: Option<&'static str>,
}

/// Every library, in the order the program calls them.
pub const LIBRARIES: &[Library] = &[
    Library {
        id: "cudart",
        name: "the CUDA runtime",
        component: "cudart",
        header: "cuda_runtime.h",
        link: &[],
        needs: None,
    },
    Library {
        id: "cublas",
        name: "cuBLAS",
        component: "cublas",
        header: "cublas_v2.h",
        link: &["cublas"],
        needs: None,
    },
    Library {
        id: "cufft",
        name: "cuFFT",
        component: "cufft",
        header: "cufft.h",
        link: &["cufft"],
        needs: None,
    },
    Library {
        id: "curand",
        name: "cuRAND",
        component: "curand",
        header: "curand.h",
        link: &["curand"],
        needs: None,
    },
    Library {
        id: "cusparse",
        name: "cuSPARSE",
        component: "cusparse",
        header: "cusparse.h",
        link: &["cusparse"],
        needs: None,
    },
    Library {
        id: "cusolver",
        name: "cuSOLVER",
        component: "cusolver",
        header: "cusolverDn.h",
        link: &["cusolver"],
        needs: None,
    },
    Library {
        id: "cudnn",
        name: "cuDNN",
        component: "cudnn",
        header: "cudnn.h",
        link: &["cudnn"],
        needs: None,
    },
    Library {
        id: "nvrtc",
        name: "NVRTC and the driver API",
        component: "nvrtc",
        header: "nvrtc.h",
        link: &["nvrtc", "cuda"],
        needs: None,
    },
    Library {
        id: "nvjitlink",
        name: "nvJitLink",
        component: "nvjitlink",
        header: "nvJitLink.h",
        link: &["nvJitLink"],
        needs: Some("nvrtc"),
    },
    Library {
        id: "npp",
        name: "NPP",
        component: "npp",
        header: "npps.h",
        link: &["npps", "nppc"],
        needs: None,
    },
    Library {
        id: "nvjpeg",
        name: "nvJPEG",
        component: "nvjpeg",
        header: "nvjpeg.h",
        link: &["nvjpeg"],
        needs: None,
    },
    Library {
        id: "cupti",
        name: "CUPTI",
        component: "cupti",
        header: "cupti.h",
        link: &["cupti"],
        needs: None,
    },
    Library {
        id: "nvtx",
        name: "NVTX",
        component: "nvtx",
        header: "nvtx3/nvToolsExt.h",
        link: &[],
        needs: None,
    },
    Library {
        id: "nvml",
        name: "NVML",
        component: "nvml",
        header: "nvml.h",
        link: &["nvidia-ml"],
        needs: None,
    },
    Library {
        id: "profiler",
        name: "the profiler API",
        component: "profiler",
        header: "cuda_profiler_api.h",
        link: &[],
        needs: None,
    },
];

/// Where a library stands in the toolkit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presence {
    /// Header and libraries are there: it is built into the program.
    Present,
    /// The receipt says it was installed, but these files are missing.
    Broken(Vec<String>),
    /// Not installed.
    Absent(String),
}

/// The include and library directories of a toolkit (CUPTI may live in `extras/CUPTI`).
fn dirs(tk: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut inc = vec![tk.join("include")];
    let mut lib = vec![tk.join("lib64"), tk.join("lib64/stubs")];
    if tk.join("extras/CUPTI/include").is_dir() {
        inc.push(tk.join("extras/CUPTI/include"));
        lib.push(tk.join("extras/CUPTI/lib64"));
    }
    (inc, lib)
}

/// The catalog components the toolkit's receipt lists (`None`: no receipt to go by).
pub fn installed_components(tk: &Toolkit, m: &ComponentsManifest) -> Option<Vec<String>> {
    let r = tk.receipt.as_ref()?;
    let mut out: Vec<String> = r
        .components
        .iter()
        .filter_map(|c| {
            if c.name == "cudnn" || c.name.starts_with("nvidia-cudnn") {
                return Some("cudnn".to_owned());
            }
            m.component_by_artifact(&c.name).map(|d| d.name.clone())
        })
        .collect();
    out.sort();
    out.dedup();
    Some(out)
}

/// The paths the toolkit's receipt lists (`None`: no receipt).
pub fn listed(tk: &Toolkit) -> Option<std::collections::BTreeSet<PathBuf>> {
    tk.receipt
        .as_ref()
        .map(|r| r.files.iter().map(|f| f.path.clone()).collect())
}

/// Where each library stands. `installed`: the catalog components the receipt names;
/// `listed`: the paths it lists (a missing file the receipt lists is broken; one it never
/// listed was not installed).
pub fn presence(
    tk: &Path,
    installed: Option<&[String]>,
    listed: Option<&std::collections::BTreeSet<PathBuf>>,
) -> Vec<(Library, Presence)> {
    let (inc, lib) = dirs(tk);
    let found_header = |h: &str| inc.iter().any(|d| d.join(h).is_file());
    let found_lib = |l: &str| lib.iter().any(|d| d.join(format!("lib{l}.so")).exists());
    let mut out: Vec<(Library, Presence)> = Vec::new();
    for l in LIBRARIES {
        let mut missing: Vec<String> = Vec::new();
        if !found_header(l.header) {
            missing.push(format!("include/{}", l.header));
        }
        for name in l.link {
            if !found_lib(name) {
                missing.push(if *name == "cuda" || *name == "nvidia-ml" {
                    format!("lib64/stubs/lib{name}.so")
                } else {
                    format!("lib64/lib{name}.so")
                });
            }
        }
        if let Some(need) = l.needs {
            if !matches!(
                out.iter().find(|(o, _)| o.id == need),
                Some((_, Presence::Present))
            ) {
                out.push((
                    *l,
                    Presence::Absent(format!(
                        "{} is tested through {need}, which is not here",
                        l.name
                    )),
                ));
                continue;
            }
        }
        let component = installed.is_some_and(|i| i.iter().any(|c| c == l.component));
        let expected = match listed {
            Some(files) => missing.iter().any(|m| files.contains(Path::new(m))),
            None => l.id == "cudart",
        };
        let p = if missing.is_empty() {
            Presence::Present
        } else if expected {
            Presence::Broken(missing)
        } else if component {
            Presence::Absent(format!(
                "{} is installed, but this route ships no {}",
                l.name,
                missing.join(", ")
            ))
        } else if installed.is_some() {
            Presence::Absent(format!("{} was not installed with this toolkit", l.name))
        } else {
            Presence::Absent(format!(
                "{} is not in this toolkit ({} missing)",
                l.name,
                missing.join(", ")
            ))
        };
        out.push((*l, p));
    }
    out
}

/// The nvcc arguments that build the program from `source` into `binary`.
pub fn build_args(tk: &Path, present: &[Library], source: &Path, binary: &Path) -> Vec<String> {
    let (inc, lib) = dirs(tk);
    let mut a: Vec<String> = vec![
        "-o".into(),
        binary.display().to_string(),
        source.display().to_string(),
        "-Xcompiler".into(),
        "-Wno-deprecated-declarations".into(),
    ];
    for d in inc.iter().skip(1) {
        a.push(format!("-I{}", d.display()));
    }
    for d in lib.iter().skip(2) {
        a.push(format!("-L{}", d.display()));
    }
    for l in present.iter().filter(|l| l.id != "cudart") {
        a.push(format!("-DHAVE_{}", l.id.to_ascii_uppercase()));
    }
    for l in present {
        a.extend(l.link.iter().map(|n| format!("-l{n}")));
    }
    a
}

/// One GPU's run: its results by library, or why there are none.
pub type Run = Result<BTreeMap<String, LibResult>, Vec<String>>;

/// One `RESULT` line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct LibResult {
    /// The library's id.
    pub lib: String,
    /// Whether the call and the comparison succeeded.
    pub ok: bool,
    /// What it did, or what went wrong.
    pub detail: String,
    /// The file the loader mapped for it.
    #[serde(default)]
    pub file: String,
}

/// The `RESULT` lines of a run, by library.
pub fn parse_results(stdout: &str) -> BTreeMap<String, LibResult> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("RESULT "))
        .filter_map(|j| serde_json::from_str::<LibResult>(j).ok())
        .map(|r| (r.lib.clone(), r))
        .collect()
}

/// Builds the program in `dir` and runs it on every GPU.
pub fn check(
    exec: &Exec<'_>,
    toolkit: Option<&Toolkit>,
    no_toolkit: &str,
    gpus: &[Gpu],
    components: &ComponentsManifest,
    dir: &Path,
) -> Vec<Check> {
    let Some(tk) = toolkit else {
        return vec![Check::skip("libraries", vec![no_toolkit.to_owned()])];
    };
    let installed = installed_components(tk, components);
    let state = presence(&tk.dir, installed.as_deref(), listed(tk).as_ref());
    let present: Vec<Library> = state
        .iter()
        .filter(|(_, p)| *p == Presence::Present)
        .map(|(l, _)| *l)
        .collect();
    let source = dir.join("libs.cu");
    let binary = dir.join("libs");
    let build = if let Err(e) = fs_err::write(&source, PROGRAM) {
        Err(vec![format!("cannot write the program: {e}")])
    } else {
        let args = build_args(&tk.dir, &present, &source, &binary);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let started = Instant::now();
        match exec.run(&tk.nvcc, &argv, &[], Duration::from_secs(600)) {
            Err(e) => Err(vec![e.to_string()]),
            Ok(out) if out.success() && binary.is_file() => Ok(started.elapsed()),
            Ok(out) => {
                let mut lines = error_lines(&output_lines(&out), 12);
                if lines.is_empty() {
                    lines.push(format!(
                        "nvcc ended with {} and wrote no program",
                        exit_words(&out)
                    ));
                }
                Err(lines)
            }
        }
    };
    let linked: Vec<&str> = present.iter().map(|l| l.id).collect();
    let mut checks = vec![match &build {
        Ok(took) => Check::pass(
            "libraries",
            vec![
                format!(
                    "one program links all {} libraries of the toolkit: {}",
                    present.len(),
                    linked.join(", ")
                ),
                format!(
                    "built with {} in {:.1} s",
                    tk.nvcc.display(),
                    took.as_secs_f64()
                ),
            ],
        )
        .data(serde_json::json!({"linked": linked})),
        Err(lines) => {
            let mut ev = vec![format!(
                "the program linking {} does not build with {}:",
                linked.join(", "),
                tk.nvcc.display()
            )];
            ev.extend(lines.iter().cloned());
            Check::fail("libraries", ev).data(serde_json::json!({"linked": linked}))
        }
    }];
    // Run it on each GPU.
    let mut runs: Vec<(&Gpu, Run)> = Vec::new();
    if build.is_ok() {
        for g in gpus {
            let index = g.index.to_string();
            let r = match exec.run(
                &binary,
                &[],
                &[("CUDA_VISIBLE_DEVICES", &index)],
                Duration::from_secs(300),
            ) {
                Err(e) => Err(vec![e.to_string()]),
                Ok(out) => {
                    let results = parse_results(&out.stdout);
                    if results.is_empty() {
                        let mut ev = vec![format!(
                            "the program printed no result ({})",
                            exit_words(&out)
                        )];
                        ev.extend(output_lines(&out).into_iter().rev().take(6).rev());
                        Err(ev)
                    } else {
                        Ok(results)
                    }
                }
            };
            runs.push((g, r));
        }
    }
    for (l, p) in &state {
        let check = match p {
            Presence::Absent(why) => Check::skip(l.id, vec![why.clone()]),
            Presence::Broken(missing) => Check::fail(
                l.id,
                vec![format!(
                    "{} was installed but {} {} missing from {}",
                    l.name,
                    missing.join(", "),
                    if missing.len() == 1 { "is" } else { "are" },
                    tk.dir.display()
                )],
            ),
            Presence::Present if build.is_err() => Check::skip(
                l.id,
                vec![format!(
                    "{} not run: the test program did not build (see `libraries`)",
                    l.name
                )],
            ),
            Presence::Present if gpus.is_empty() => Check::skip(
                l.id,
                vec![format!("{} links; no GPU here to run it on", l.name)],
            ),
            Presence::Present => judge(l, &runs, tk),
        };
        checks.push(check);
    }
    checks
}

/// One library's runs on every GPU as a check.
pub fn judge(l: &Library, runs: &[(&Gpu, Run)], tk: &Toolkit) -> Check {
    let mut ok = true;
    let mut lines = Vec::new();
    let mut files = Vec::new();
    for (g, r) in runs {
        match r {
            Err(ev) => {
                ok = false;
                lines.push(format!("GPU {}: {}", g.index, ev.join("; ")));
            }
            Ok(results) => match results.get(l.id) {
                None => {
                    ok = false;
                    lines.push(format!(
                        "GPU {}: the program stopped before it got to {}",
                        g.index, l.name
                    ));
                }
                Some(res) => {
                    ok &= res.ok;
                    lines.push(format!("GPU {}: {}", g.index, res.detail));
                    if !res.file.is_empty() && !files.contains(&res.file) {
                        files.push(res.file.clone());
                    }
                }
            },
        }
    }
    for f in &files {
        let inside = Path::new(f).starts_with(&tk.real) || Path::new(f).starts_with(&tk.dir);
        lines.push(if inside {
            format!("loaded {f}")
        } else {
            format!("loaded {f}: not from the toolkit {} (LD_LIBRARY_PATH or ld.so.cache found it first)", tk.dir.display())
        });
    }
    let data = serde_json::json!({"files": files});
    if ok {
        Check::pass(l.id, lines).data(data)
    } else {
        Check::fail(l.id, lines).data(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::receipt::ReceiptComponent;
    use crate::install::Receipt;
    use crate::model::version::Version;
    use crate::verify::testing::{failed, ok, Scripted};
    use crate::verify::Status;

    fn manifest() -> ComponentsManifest {
        crate::catalog::Catalog::embedded().components
    }

    fn toolkit(dir: &Path, components: Option<&[&str]>) -> Toolkit {
        Toolkit {
            dir: dir.to_owned(),
            real: dir.to_owned(),
            nvcc: dir.join("bin/nvcc"),
            receipt: components.map(|c| Receipt {
                schema_version: 1,
                prefix: dir.to_owned(),
                cuda: "13.0.2".into(),
                cudnn: None,
                source: "wheels test".into(),
                installed_at: 0,
                components: c
                    .iter()
                    .map(|n| ReceiptComponent {
                        name: (*n).to_owned(),
                        version: "1".into(),
                        url: String::new(),
                        sha256: String::new(),
                        size: None,
                    })
                    .collect(),
                files: Vec::new(),
            }),
            cuda: Version::parse("13.0"),
        }
    }

    fn touch(root: &Path, p: &str) {
        let f = root.join(p);
        fs_err::create_dir_all(f.parent().unwrap()).unwrap();
        fs_err::write(f, "").unwrap();
    }

    fn gpu(index: u32) -> Gpu {
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

    #[test]
    fn what_is_built_in_follows_the_files_and_the_receipt() {
        let d = tempfile::tempdir().unwrap();
        for f in [
            "include/cuda_runtime.h",
            "include/cublas_v2.h",
            "lib64/libcublas.so",
            "include/cufft.h",
            "include/nvrtc.h",
            "lib64/libnvrtc.so",
            "lib64/stubs/libcuda.so",
            "include/nvJitLink.h",
            "lib64/libnvJitLink.so",
        ] {
            touch(d.path(), f);
        }
        let tk = toolkit(
            d.path(),
            Some(&[
                "nvidia-cuda-runtime",
                "nvidia-cublas",
                "nvidia-cufft",
                "nvidia-cuda-nvrtc",
                "nvidia-nvjitlink",
            ]),
        );
        let m = manifest();
        let installed = installed_components(&tk, &m).unwrap();
        assert!(installed.contains(&"cufft".to_owned()));
        let mut files: std::collections::BTreeSet<PathBuf> = [
            "include/cuda_runtime.h",
            "include/cublas_v2.h",
            "lib64/libcublas.so",
            "include/cufft.h",
            "lib64/libcufft.so",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let state = presence(d.path(), Some(&installed), Some(&files));
        let get = |id: &str| state.iter().find(|(l, _)| l.id == id).unwrap().1.clone();
        assert_eq!(get("cublas"), Presence::Present);
        assert_eq!(get("nvjitlink"), Presence::Present);
        assert_eq!(
            get("cufft"),
            Presence::Broken(vec!["lib64/libcufft.so".into()])
        );
        assert!(matches!(get("cudnn"), Presence::Absent(w) if w.contains("was not installed")));
        // A file the receipt never listed is not broken: the route does not ship it.
        files.remove(Path::new("lib64/libcufft.so"));
        let state = presence(d.path(), Some(&installed), Some(&files));
        let cufft = &state.iter().find(|(l, _)| l.id == "cufft").unwrap().1;
        assert!(
            matches!(cufft, Presence::Absent(w) if w.contains("ships no lib64/libcufft.so")),
            "{cufft:?}"
        );
        let present: Vec<Library> = state
            .iter()
            .filter(|(_, p)| *p == Presence::Present)
            .map(|(l, _)| *l)
            .collect();
        let args = build_args(
            d.path(),
            &present,
            Path::new("/w/libs.cu"),
            Path::new("/w/libs"),
        );
        assert!(args.contains(&"-DHAVE_CUBLAS".to_owned()) && args.contains(&"-lcuda".to_owned()));
        assert!(!args.iter().any(|a| a == "-DHAVE_CUFFT"));
    }

    #[test]
    fn results_are_parsed_and_judged_per_gpu() {
        let out = "noise\nRESULT {\"lib\":\"cublas\",\"ok\":true,\"detail\":\"SGEMM 64x64x64 matches the CPU (max rel. error 1.2e-07)\",\"file\":\"/t/lib64/libcublas.so.13\"}\nRESULT {\"lib\":\"cufft\",\"ok\":false,\"detail\":\"cufftPlan1d(&plan, n, CUFFT_C2C, 1) returned 5\",\"file\":\"/usr/lib/libcufft.so.12\"}\nDONE\n";
        let r = parse_results(out);
        assert_eq!(r.len(), 2);
        let d = tempfile::tempdir().unwrap();
        let tk = toolkit(Path::new("/t"), None);
        let g0 = gpu(0);
        let runs = vec![(&g0, Ok(r))];
        let cublas = judge(&LIBRARIES[1], &runs, &tk);
        assert_eq!(cublas.status, Status::Pass);
        assert_eq!(
            cublas.evidence,
            [
                "GPU 0: SGEMM 64x64x64 matches the CPU (max rel. error 1.2e-07)",
                "loaded /t/lib64/libcublas.so.13"
            ]
        );
        let cufft = judge(&LIBRARIES[2], &runs, &tk);
        assert_eq!(cufft.status, Status::Fail);
        assert!(cufft.evidence[1].contains("not from the toolkit"));
        let curand = judge(&LIBRARIES[3], &runs, &tk);
        assert_eq!(curand.status, Status::Fail);
        assert!(curand.evidence[0].contains("stopped before"));
        drop(d);
    }

    #[test]
    fn without_a_gpu_it_is_built_and_the_runs_are_skipped() {
        let d = tempfile::tempdir().unwrap();
        for f in [
            "include/cuda_runtime.h",
            "include/cublas_v2.h",
            "lib64/libcublas.so",
            "bin/nvcc",
        ] {
            touch(d.path(), f);
        }
        let work = tempfile::tempdir().unwrap();
        let runner = Scripted::new(|program, args, _| {
            assert!(
                program.ends_with("nvcc"),
                "nothing but nvcc runs without a GPU"
            );
            let out = args[args.iter().position(|a| *a == "-o").unwrap() + 1];
            fs_err::write(out, "").unwrap();
            ok("")
        });
        let process = crate::world::process::Process::default();
        let exec = Exec::new(&runner, &process, Some(d.path()));
        let tk = toolkit(d.path(), None);
        let checks = check(&exec, Some(&tk), "", &[], &manifest(), work.path());
        assert_eq!(checks[0].id, "libraries");
        assert_eq!(checks[0].status, Status::Pass, "{:?}", checks[0]);
        assert!(
            checks[0].evidence[0].contains("all 2 libraries"),
            "{:?}",
            checks[0]
        );
        let cublas = checks.iter().find(|c| c.id == "cublas").unwrap();
        assert_eq!(cublas.status, Status::Skip);
        assert_eq!(cublas.evidence[0], "cuBLAS links; no GPU here to run it on");
        assert!(checks
            .iter()
            .filter(|c| c.id != "libraries")
            .all(|c| c.status == Status::Skip));

        // A compiler that fails: the build check fails with its words, the libraries with it.
        let runner = Scripted::new(|_, _, _| {
            failed(1, "", "/usr/bin/ld: cannot find -lcublas: No such file or directory\ncollect2: error: ld returned 1 exit status\n")
        });
        let exec = Exec::new(&runner, &process, Some(d.path()));
        let checks = check(&exec, Some(&tk), "", &[gpu(0)], &manifest(), work.path());
        assert_eq!(checks[0].status, Status::Fail);
        assert!(
            checks[0]
                .evidence
                .iter()
                .any(|l| l.contains("cannot find -lcublas")),
            "{:?}",
            checks[0]
        );
        assert_eq!(
            checks.iter().find(|c| c.id == "cublas").unwrap().status,
            Status::Skip
        );
    }
}
