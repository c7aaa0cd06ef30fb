//! Python frameworks: a CPU-only torch, a torch wheel without kernels for the GPU (from the
//! catalog's arch lists), and system cuDNN against a wheel's cuDNN.

use std::path::{Path, PathBuf};

use crate::catalog::{Kernels, TorchVariant};
use crate::install::driver::shell_line;
use crate::install::python::Tool;
use crate::model::finding::Severity;
use crate::model::version::Version;

use super::{Diagnosis, Inputs, TorchSite};

/// Every Python check.
pub fn check(inputs: &Inputs<'_>) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let torches = inputs.torches();
    out.extend(cpu_only(inputs, &torches));
    out.extend(kernels(inputs, &torches));
    out.extend(cudnn_copies(inputs));
    out
}

/// The requirement the receipt recorded for torch (`torch==2.11.0+cu130`), if any.
fn planned_torch(site: &TorchSite<'_>) -> Option<String> {
    site.receipt?
        .packages
        .requirements
        .iter()
        .find(|r| r.starts_with("torch==") || r.starts_with("torch>") || r == &"torch")
        .cloned()
}

/// `torch-cpu-only`: an error where cudaup installed a CUDA build (the receipt's profile), a
/// warning elsewhere; only when there is an NVIDIA GPU to use.
fn cpu_only(inputs: &Inputs<'_>, torches: &[TorchSite<'_>]) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let gpu_here = !inputs.nvidia_gpus().is_empty();
    // Without a GPU here, a CPU-only torch is a problem only where cudaup installed a CUDA build
    // (a plan made for another machine's GPU with `install --system`).
    let asked_for_cuda = |s: &TorchSite<'_>| planned_torch(s).is_some_and(|p| p.contains("+cu"));
    for site in torches
        .iter()
        .filter(|s| s.torch.cuda.is_none() && (gpu_here || asked_for_cuda(s)))
    {
        let expected_cuda = site
            .receipt
            .is_some_and(|r| matches!(r.profile.as_str(), "full" | "pytorch"));
        let mut d = Diagnosis::new(
            "torch-cpu-only",
            if expected_cuda {
                Severity::Error
            } else {
                Severity::Warning
            },
            format!(
                "torch {} in {} is a CPU-only build; it will never use the GPU",
                site.torch.version, site.python
            ),
        )
        .evidence("torch/version.py: cuda = None");
        if let Some(r) = site.receipt {
            d = d.evidence(format!(
                "cudaup installed this venv ({}) with profile {}{}",
                r.venv.display(),
                r.profile,
                planned_torch(site)
                    .map(|p| format!(", asking for {p}"))
                    .unwrap_or_default()
            ));
        }
        let fix = match (site.receipt, planned_torch(site)) {
            (Some(r), Some(req)) if expected_cuda => format!(
                "{} -m pip install --force-reinstall {req} {}\nor: {}",
                site.python,
                shell_line(&r.packages.index_args(&Tool::Pip)),
                super::repair("venv-packages")
            ),
            _ => format!(
                "reinstall torch from a CUDA index: cudaup plan --profile pytorch shows the build; e.g. {} -m pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu130",
                site.python
            ),
        };
        out.push(d.fix(fix));
    }
    out
}

/// The catalog's variant for an installed torch: the release by version, the variant by the
/// local tag (`+cu130`) or the CUDA version (`13.0` → `cu130`).
fn variant<'c>(inputs: &Inputs<'c>, site: &TorchSite<'_>) -> Option<&'c TorchVariant> {
    let cuda = Version::parse(site.torch.cuda.as_deref()?)?;
    let version = Version::parse(&site.torch.version)?;
    let release = inputs
        .catalog
        .pytorch
        .release
        .iter()
        .find(|r| r.version == version)?;
    let tag = site
        .torch
        .version
        .split_once('+')
        .map(|(_, t)| t.to_owned())
        .filter(|t| t.starts_with("cu"));
    let by_cuda = format!("cu{}{}", cuda.major(), cuda.minor());
    // The arch list of this machine's platform: an x86_64 wheel's says nothing about aarch64's.
    let platform = crate::resolve::platform(inputs.system, inputs.catalog)?;
    let variants = release.variants_for(platform);
    variants
        .iter()
        .find(|v| tag.as_deref() == Some(v.name.as_str()))
        .or_else(|| variants.iter().find(|v| v.name == by_cuda))
        .copied()
}

fn arch_list(v: &TorchVariant) -> String {
    let mut s: Vec<String> = v
        .arch_list
        .iter()
        .map(|a| format!("sm_{}{}", a.major(), a.minor()))
        .collect();
    if let Some(p) = &v.ptx {
        s.push(format!("compute_{}{} (PTX)", p.major(), p.minor()));
    }
    s.join(" ")
}

/// `torch-no-kernels-for-gpu` (neither SASS nor PTX: CUDA errors "no kernel image is available")
/// and `torch-ptx-only` (JIT-compiled at first use).
fn kernels(inputs: &Inputs<'_>, torches: &[TorchSite<'_>]) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    for site in torches {
        let Some(v) = variant(inputs, site) else {
            continue;
        };
        for g in inputs.nvidia_gpus() {
            let Some(cc) = g.compute_capability.as_deref().and_then(Version::parse) else {
                continue;
            };
            let source = format!(
                "arch list from cudaup's catalog (manifests/pytorch.toml, torch {} {}): {} — not read from the wheel: torch keeps it inside torch/_C, readable only by importing torch",
                site.torch.version.split('+').next().unwrap_or(&site.torch.version),
                v.name,
                arch_list(v)
            );
            let confirm = format!(
                "{} -c 'import torch; print(torch.cuda.get_arch_list())'   # confirms",
                site.python
            );
            match v.kernels_for(&cc, |b, g| inputs.catalog.cuda.sass_runs_on(b, g)) {
                Kernels::Sass(_) => {}
                Kernels::Ptx(p) => out.push(
                    Diagnosis::new(
                        "torch-ptx-only",
                        Severity::Warning,
                        format!(
                            "torch {} in {} has no native code for the {} (compute capability {cc}); the driver JIT-compiles its PTX (compute_{}{}) at first use, which is slow and can fail",
                            site.torch.version, site.python, g.name, p.major(), p.minor()
                        ),
                    )
                    .evidence(source)
                    .fix(format!("cudaup plan --profile pytorch   # a build with sm_{}{} SASS\n{confirm}", cc.major(), cc.minor())),
                ),
                Kernels::None => out.push(
                    Diagnosis::new(
                        "torch-no-kernels-for-gpu",
                        Severity::Error,
                        format!(
                            "torch {} in {} carries no kernels (SASS or PTX) for the {} (compute capability {cc}): CUDA calls fail with \"no kernel image is available for execution on the device\"",
                            site.torch.version, site.python, g.name
                        ),
                    )
                    .evidence(source)
                    .fix(format!("cudaup plan --profile pytorch   # picks a torch and CUDA variant that serve compute capability {cc}\n{confirm}")),
                ),
            }
        }
    }
    out
}

fn is_wheel(path: &str) -> bool {
    // A Windows venv spells it `Lib\site-packages\nvidia\`.
    let path = path.replace('\\', "/");
    path.contains("/site-packages/nvidia/") || path.contains("/dist-packages/nvidia/")
}

/// How the dynamic loader finds a program's libraries here. Linux: `LD_LIBRARY_PATH`, and a
/// prefix's `lib64/` or `lib/` beside its `include/`. Windows has no such variable: its loader
/// searches `PATH`, and NVIDIA's Windows packages keep the DLLs in `bin\` (`lib\x64` holds only
/// the import libraries a build links with, which nothing loads).
struct Loader {
    /// The variable that lists the library folders.
    var: &'static str,
    /// The library folders beside a prefix's `include/`, most likely first.
    dirs: &'static [&'static str],
}

const LOADER: Loader = if cfg!(windows) {
    Loader {
        var: "PATH",
        dirs: &["bin"],
    }
} else {
    Loader {
        var: "LD_LIBRARY_PATH",
        dirs: &["lib64", "lib"],
    }
};

/// Whether a file name is a cuDNN library: `libcudnn*` on Linux, `cudnn*.dll` on Windows.
fn is_cudnn_library(name: &str) -> bool {
    if cfg!(windows) {
        let name = name.to_ascii_lowercase();
        name.starts_with("cudnn") && name.ends_with(".dll")
    } else {
        name.starts_with("libcudnn")
    }
}

/// The directory a cuDNN copy's libraries are in. detect names the directory it found the copy
/// by, which for a toolkit's (or a distribution's) headers is `include/`; the loader and
/// `LD_LIBRARY_PATH` deal in the library directory beside it: the `LD_LIBRARY_PATH` entry under
/// the same root that holds `libcudnn*`, else `lib64` or `lib` there (on Windows: the `PATH`
/// entry, else `bin\`; see [`Loader`]).
fn library_dir(path: &str, ld: &[PathBuf], live: bool) -> PathBuf {
    let p = Path::new(path);
    let Some(root) = p
        .file_name()
        .filter(|n| *n == "include")
        .and_then(|_| p.parent())
    else {
        return p.to_path_buf();
    };
    let has_cudnn = |d: &Path| {
        crate::shell::list_dir(d)
            .iter()
            .any(|n| is_cudnn_library(n))
    };
    let beside: Vec<PathBuf> = LOADER.dirs.iter().map(|d| root.join(d)).collect();
    let candidates = ld
        .iter()
        .filter(|e| e.starts_with(root))
        .cloned()
        .chain(beside.iter().cloned());
    if live {
        if let Some(d) = candidates.clone().find(|d| has_cudnn(d)) {
            return d;
        }
    }
    candidates
        .into_iter()
        .next()
        .unwrap_or_else(|| root.join(LOADER.dirs[0]))
}

/// `cudnn-mismatch`: a system cuDNN and a wheel's cuDNN of different versions. The copy in
/// cudaup's own toolkit is cudaup's doing (its env script puts that `lib64` on
/// `LD_LIBRARY_PATH`): a note while torch can load it in place of its own — same major, not
/// older — and a warning only when it cannot.
fn cudnn_copies(inputs: &Inputs<'_>) -> Option<Diagnosis> {
    let all = &inputs.system.cudnn;
    let (wheels, system): (Vec<_>, Vec<_>) = all.iter().partition(|c| is_wheel(&c.path));
    let key = |v: &str| Version::parse(v).map(|v| v.prefix(3));
    let pairs: Vec<_> = system
        .iter()
        .flat_map(|s| wheels.iter().map(move |w| (*s, *w)))
        .filter(|(s, w)| key(&s.version) != key(&w.version))
        .collect();
    let (s0, w0) = *pairs.first()?;
    let major = |v: &str| Version::parse(v).map(|v| v.major());
    let different_major = pairs
        .iter()
        .any(|(s, w)| major(&s.version) != major(&w.version));
    let ld: Vec<PathBuf> = if inputs.live {
        inputs
            .process
            .var(LOADER.var)
            .map(|v| {
                std::env::split_paths(v)
                    .filter(|e| !e.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let lib = library_dir(&s0.path, &ld, inputs.live);
    // cudaup's own toolkits: the active one, and every one detect says cudaup installed.
    let own = inputs
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
        .find(|t| Path::new(&s0.path).starts_with(t));
    // torch accepts a cuDNN of its major that is not older than its own: "starting with cuDNN 7,
    // minor versions are backwards-compatible" (torch/backends/cudnn/__init__.py, which compares
    // the runtime's major and minor with the compiled ones when it first uses cuDNN).
    let loadable = !different_major
        && pairs.iter().all(|(s, w)| {
            match (Version::parse(&s.version), Version::parse(&w.version)) {
                (Some(s), Some(w)) => s.prefix(2) >= w.prefix(2),
                _ => false,
            }
        });
    let severity = if own.is_some() && loadable {
        Severity::Info
    } else {
        Severity::Warning
    };
    let whose = match &own {
        Some(t) => format!("cudaup's toolkit {}", t.display()),
        None => "the system's".to_owned(),
    };
    let mut d = Diagnosis::new(
        "cudnn-mismatch",
        severity,
        format!(
            "two cuDNN versions: {whose} {} ({}) and the wheel's {} ({}){}",
            s0.version,
            lib.display(),
            w0.version,
            w0.path,
            if different_major {
                ": different majors, so a program that loads one and links the other fails"
            } else {
                ""
            }
        ),
    );
    for (s, w) in &pairs {
        d = d.evidence(format!(
            "system cuDNN {} in {}; wheel cuDNN {} in {}",
            s.version, s.path, w.version, w.path
        ));
    }
    d = d.evidence(if cfg!(windows) {
        // torch/__init__.py on Windows adds torch\lib (and the nvidia wheels' bin folders) with
        // os.add_dll_directory and loads torch\lib's DLLs before it falls back to PATH.
        "torch loads its own copy (the cuDNN DLLs in torch\\lib or site-packages\\nvidia\\cudnn\\bin, which torch adds with os.add_dll_directory before PATH is searched); \
         the system copy serves programs built with the CUDA toolkit, and torch only when its own copy is missing and PATH lists the system's"
    } else {
        "torch loads the wheel's copy (nvidia-cudnn-cu*, found through torch's RPATH into site-packages/nvidia/cudnn/lib); \
         the system copy serves programs built with the CUDA toolkit, and TensorFlow or torch only when LD_LIBRARY_PATH puts it first"
    });
    let on_ld = ld.contains(&lib);
    if on_ld {
        d = d.evidence(match &own {
            Some(t) => format!(
                "{} lists {}: {} the toolkit {} there for the programs built with it{}",
                LOADER.var,
                lib.display(),
                if cfg!(windows) {
                    "cudaup (its env script or its user PATH entry) puts"
                } else {
                    "cudaup's env script puts"
                },
                t.display(),
                if loadable {
                    format!("; torch may load its cuDNN {}, which it accepts (the same major, not older than the wheel's {})", s0.version, w0.version)
                } else {
                    format!("; torch may load its cuDNN {} instead of its own {}, which it does not accept", s0.version, w0.version)
                }
            ),
            None => format!(
                "{} lists {}: torch may load the system's {} instead of its own",
                LOADER.var,
                lib.display(),
                s0.version
            ),
        });
    }
    let w_mm = Version::parse(&w0.version)
        .map(|v| v.prefix(2))
        .unwrap_or_default();
    let in_catalog = inputs
        .catalog
        .cudnn
        .release
        .iter()
        .any(|r| r.version.prefix(2) == w_mm);
    let align = if in_catalog {
        format!("cudaup install --profile cuda-dev --cudnn {w_mm}")
    } else {
        format!("install cuDNN {w_mm} for the system from NVIDIA's packages (cudaup's catalog has no {w_mm} build yet)")
    };
    let take_out = match &own {
        Some(_) if cfg!(windows) => format!(
            "if it does not: run torch from a shell whose PATH leaves {} out (cudaup put it on PATH)",
            lib.display()
        ),
        Some(_) => format!(
            "if it does not: run torch without the toolkit's libraries (env -u LD_LIBRARY_PATH python …), or leave the env script out of that shell ({} is on LD_LIBRARY_PATH because of it)",
            lib.display()
        ),
        None => format!(
            "if it does not: take {} out of {}",
            lib.display(),
            LOADER.var
        ),
    };
    Some(d.fix(format!(
        "nothing to do while torch imports and torch.backends.cudnn.version() matches the wheel (`cudaup verify` checks it);\n\
         {take_out}\n\
         to align the {} copy with the wheel: {align}",
        if own.is_some() { "toolkit's" } else { "system" }
    )))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::super::testing::*;
    use super::*;
    use crate::install::python::{Packages, VenvReceipt};
    use crate::model::system::{Cudnn, Framework};

    #[test]
    fn cpu_only_torch_from_detect_and_from_a_receipt() {
        let mut s = h200();
        s.pythons[0].torch = Some(Framework {
            version: "2.11.0+cpu".into(),
            cuda: None,
            cuda_available: None,
        });
        let w = World::new(s.clone());
        let d = check(&w.inputs());
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].id(), "torch-cpu-only");
        assert_eq!(d[0].severity(), Severity::Warning);

        let mut w = World::new(s);
        w.receipts.venvs.push((
            PathBuf::from("/h/receipts/venv-x.json"),
            VenvReceipt {
                schema_version: 1,
                venv: PathBuf::from("/opt/torch/.venv"),
                base_python: "/usr/bin/python3".into(),
                created: true,
                profile: "pytorch".into(),
                packages: Packages {
                    requirements: vec!["torch==2.11.0+cu130".into()],
                    index_url: "https://download.pytorch.org/whl/cu130".into(),
                    extra_index_urls: vec![],
                    ..Packages::default()
                },
                route: None,
                installed_at: 0,
                guard: None,
            },
        ));
        let d = check(&w.inputs());
        assert_eq!(d[0].severity(), Severity::Error);
        assert!(d[0]
            .finding
            .fix
            .as_ref()
            .unwrap()
            .contains("torch==2.11.0+cu130 --index-url https://download.pytorch.org/whl/cu130"));
    }

    #[test]
    fn no_kernels_for_pascal_in_a_cu130_wheel() {
        let mut s = h200();
        s.gpus = vec![gpu("NVIDIA GeForce GTX 1080", "10de:1b80", "6.1", "Pascal")];
        let w = World::new(s);
        let d = check(&w.inputs());
        let k = d
            .iter()
            .find(|d| d.id() == "torch-no-kernels-for-gpu")
            .expect("found");
        assert!(k.evidence[0].contains("pytorch.toml"), "{:?}", k.evidence);
        assert!(k.evidence[0].contains("sm_75"));
    }

    #[test]
    fn system_and_wheel_cudnn() {
        let mut s = h200();
        s.cudnn = vec![
            Cudnn {
                version: "9.14.0".into(),
                path: "/usr/lib/x86_64-linux-gnu".into(),
            },
            Cudnn {
                version: "9.19.0.56".into(),
                path: "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn".into(),
            },
        ];
        let w = World::new(s.clone());
        assert_eq!(w.ids(), vec!["cudnn-mismatch"]);
        s.cudnn[0].version = "9.19.0".into();
        let w = World::new(s);
        assert!(w.ids().is_empty());
    }

    /// Issue 27, finding 4: cudaup's own toolkit carries a cuDNN and its env script puts the
    /// toolkit's lib64 on LD_LIBRARY_PATH. That is cudaup's doing: a note while torch accepts
    /// the toolkit's cuDNN, and every fix names lib64 (where the libraries are), never the
    /// include/ directory detect found the headers in.
    // Unix-only facts: lib64 and LD_LIBRARY_PATH (Windows: bin\ and PATH, the twin below).
    #[cfg(unix)]
    #[test]
    fn cudaups_own_toolkit_cudnn_is_a_note_and_the_fix_names_lib64() {
        use crate::model::system::{Owner, Toolkit};
        use crate::world::process::Process;
        let tk = "/h/.local/share/cudaup/toolkits/cuda-13.4.2";
        let mut s = h200();
        s.toolkits.push(Toolkit {
            version: "13.4.2".into(),
            path: tk.into(),
            owner: Owner::Cudaup,
        });
        s.cudnn = vec![
            Cudnn {
                version: "9.28.1".into(),
                path: format!("{tk}/include"),
            },
            Cudnn {
                version: "9.19.0.56".into(),
                path:
                    "/h/.local/share/cudaup/venvs/pytorch/lib/python3.12/site-packages/nvidia/cudnn"
                        .into(),
            },
        ];
        let mut w = World::new(s.clone());
        w.live = true;
        w.receipts.active.toolkit = Some(PathBuf::from(tk));
        let ld = format!("{tk}/lib64");
        w.process = Process::with_vars([("LD_LIBRARY_PATH", ld.as_str())], "/");
        let d = cudnn_copies(&w.inputs()).expect("two copies");
        assert_eq!(d.severity(), Severity::Info, "{d:?}");
        assert!(
            d.finding
                .message
                .contains(&format!("cudaup's toolkit {tk} 9.28.1 ({tk}/lib64)")),
            "{d:?}"
        );
        assert!(
            d.evidence
                .iter()
                .any(|e| e.contains("cudaup's env script puts the toolkit")
                    && e.contains("which it accepts")),
            "{:?}",
            d.evidence
        );
        let fix = d.finding.fix.clone().unwrap();
        assert!(fix.contains(&format!("{tk}/lib64")), "{fix}");
        assert!(!fix.contains("include"), "{fix}");

        // A toolkit cuDNN older than the wheel's is one torch refuses: a warning.
        let mut older = s.clone();
        older.cudnn[0].version = "9.10.2".into();
        let mut w2 = World::new(older);
        w2.live = true;
        w2.receipts.active.toolkit = Some(PathBuf::from(tk));
        w2.process = Process::with_vars([("LD_LIBRARY_PATH", ld.as_str())], "/");
        let d = cudnn_copies(&w2.inputs()).unwrap();
        assert_eq!(d.severity(), Severity::Warning);
        assert!(
            d.evidence
                .iter()
                .any(|e| e.contains("which it does not accept")),
            "{:?}",
            d.evidence
        );

        // Someone else's toolkit found by its headers: the fix still names its lib64.
        let mut other = s;
        other.cudnn[0].path = "/opt/cuda/include".into();
        let d = cudnn_copies(&World::new(other).inputs()).unwrap();
        assert_eq!(d.severity(), Severity::Warning);
        let fix = d.finding.fix.unwrap();
        assert!(
            fix.contains("take /opt/cuda/lib64 out of LD_LIBRARY_PATH"),
            "{fix}"
        );
    }

    /// The Windows twin: NVIDIA's Windows packages keep the DLLs in bin\ and Windows' loader
    /// searches PATH, so the note and every fix name bin\ and PATH, never lib64,
    /// LD_LIBRARY_PATH or include\.
    #[cfg(windows)]
    #[test]
    fn cudaups_own_toolkit_cudnn_on_windows_is_a_note_and_the_fix_names_bin_and_path() {
        use crate::model::system::{Owner, Toolkit};
        use crate::world::process::Process;
        let tk = r"C:\Users\me\AppData\Local\cudaup\toolkits\cuda-13.4.2";
        let bin = format!(r"{tk}\bin");
        let mut s = h200();
        s.toolkits.push(Toolkit {
            version: "13.4.2".into(),
            path: tk.into(),
            owner: Owner::Cudaup,
        });
        s.cudnn = vec![
            Cudnn {
                version: "9.28.1".into(),
                path: format!(r"{tk}\include"),
            },
            Cudnn {
                version: "9.19.0.56".into(),
                path:
                    r"C:\Users\me\AppData\Local\cudaup\venvs\pytorch\Lib\site-packages\nvidia\cudnn"
                        .into(),
            },
        ];
        let mut w = World::new(s.clone());
        w.live = true;
        w.receipts.active.toolkit = Some(PathBuf::from(tk));
        let path = format!(r"{bin};C:\Windows\System32");
        w.process = Process::with_vars([("PATH", path.as_str())], r"C:\");
        let d = cudnn_copies(&w.inputs()).expect("two copies");
        assert_eq!(d.severity(), Severity::Info, "{d:?}");
        assert!(
            d.finding
                .message
                .contains(&format!("cudaup's toolkit {tk} 9.28.1 ({bin})")),
            "{d:?}"
        );
        assert!(
            d.evidence
                .iter()
                .any(|e| e.starts_with(&format!("PATH lists {bin}: cudaup"))
                    && e.contains("which it accepts")),
            "{:?}",
            d.evidence
        );
        assert!(
            d.evidence
                .iter()
                .all(|e| !e.contains("LD_LIBRARY_PATH") && !e.contains("RPATH")),
            "{:?}",
            d.evidence
        );
        let fix = d.finding.fix.clone().unwrap();
        assert!(fix.contains(&format!("PATH leaves {bin} out")), "{fix}");
        assert!(
            !fix.contains("include") && !fix.contains("lib64") && !fix.contains("LD_LIBRARY_PATH"),
            "{fix}"
        );

        // Someone else's toolkit found by its headers: the fix names its bin\ and PATH.
        let mut other = s;
        other.cudnn[0].path = r"C:\cuda\include".into();
        let d = cudnn_copies(&World::new(other).inputs()).unwrap();
        assert_eq!(d.severity(), Severity::Warning);
        let fix = d.finding.fix.unwrap();
        assert!(fix.contains(r"take C:\cuda\bin out of PATH"), "{fix}");
    }
}
