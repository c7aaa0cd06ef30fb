//! Checks the toolkit's command-line tools on the seed's `addKernel`: `cuobjdump` lists its SASS,
//! `nvdisasm` disassembles its cubin, `cu++filt` demangles its kernel's name, and
//! `compute-sanitizer` runs it under memcheck on each GPU. `nvprune`, `cuda-gdb`, `ncu` and
//! `nsys` answer `--version`. A tool that is not in the toolkit is skipped, unless the receipt
//! says its component was installed.

use std::path::Path;
use std::time::Duration;

use crate::model::system::Gpu;
use crate::model::version::Version;

use super::kernel::{Built, OK_LINE};
use super::toolkit::Toolkit;
use super::{exit_words, output_lines, Check, Exec};

/// addKernel's mangled name.
const MANGLED: &str = "_Z9addKernelPiPKiS1_";

/// A tool and the catalog component that installs it.
struct Tool {
    id: &'static str,
    bin: &'static str,
    component: &'static str,
}

const TOOLS: &[Tool] = &[
    Tool {
        id: "cuobjdump",
        bin: "bin/cuobjdump",
        component: "cuobjdump",
    },
    Tool {
        id: "nvdisasm",
        bin: "bin/nvdisasm",
        component: "nvdisasm",
    },
    Tool {
        id: "cu++filt",
        bin: "bin/cu++filt",
        component: "cuxxfilt",
    },
    Tool {
        id: "compute-sanitizer",
        bin: "bin/compute-sanitizer",
        component: "sanitizer",
    },
    Tool {
        id: "nvprune",
        bin: "bin/nvprune",
        component: "nvprune",
    },
    Tool {
        id: "cuda-gdb",
        bin: "bin/cuda-gdb",
        component: "gdb",
    },
    Tool {
        id: "ncu",
        bin: "bin/ncu",
        component: "nsight-compute",
    },
    Tool {
        id: "nsys",
        bin: "bin/nsys",
        component: "nsight-systems",
    },
];

const T: Duration = Duration::from_secs(120);

/// Runs each tool the toolkit has. `built` are addKernel's builds; `installed` the catalog
/// components the receipt lists (`None`: no receipt).
pub fn check(
    exec: &Exec<'_>,
    tk: &Toolkit,
    built: &[Built],
    gpus: &[Gpu],
    installed: Option<&[String]>,
    dir: &Path,
) -> Vec<Check> {
    let mut out = Vec::new();
    for t in TOOLS {
        let path = tk.dir.join(t.bin);
        if !path.is_file() {
            let listed = tk
                .receipt
                .as_ref()
                .is_some_and(|r| r.files.iter().any(|f| f.path == Path::new(t.bin)));
            if listed {
                out.push(Check::fail(
                    t.id,
                    vec![format!(
                        "{} was installed but {} is missing",
                        t.component,
                        path.display()
                    )],
                ));
            } else if let Some(why) = route_gap(tk, t, installed) {
                out.push(Check::skip(t.id, vec![why]));
            }
            continue;
        }
        let check = match t.id {
            "cuobjdump" => cuobjdump(exec, &path, built),
            "nvdisasm" => nvdisasm(exec, tk, &path, dir),
            "cu++filt" => cufilt(exec, &path),
            "compute-sanitizer" => {
                let mut c = sanitizer(exec, &path, built, gpus);
                // Measured on the H200: without TreeLauncherSubreaper beside it the sanitizer
                // exits 255, "Target application terminated before first instrumented API
                // call"; PyPI's nvidia-cuda-sanitizer-api wheel (13.0.85) does not ship it.
                let reaper = tk.dir.join("compute-sanitizer/TreeLauncherSubreaper");
                if c.status == super::Status::Fail && !reaper.exists() {
                    c.evidence.push(format!(
                        "{} is missing: the sanitizer cannot start its target without it; PyPI's sanitizer wheel does not ship it, NVIDIA's redist archive does (`cudaup install --source redist`)",
                        reaper.display()
                    ));
                }
                c
            }
            id => version(exec, id, &path),
        };
        out.push(check.data(serde_json::json!({"tool": path})));
    }
    out
}

/// Why a tool is missing from a toolkit cudaup installed, when the route is the reason: the wheel
/// route has no `cuobjdump`/`nvdisasm` wheels before CUDA 13.2 (components.toml: "wheels from
/// CUDA 13.2") and no `cu++filt` binary at all (its wheel carries only the library), while
/// NVIDIA's redistributable archives have each. `None` when the tool was simply not asked for.
fn route_gap(tk: &Toolkit, t: &Tool, installed: Option<&[String]>) -> Option<String> {
    let asked = installed.is_some_and(|i| i.iter().any(|c| c == t.component));
    let receipt = tk.receipt.as_ref();
    let wheels = receipt.is_some_and(|r| r.source.starts_with("wheels"));
    let cuda = receipt.and_then(|r| Version::parse(&r.cuda));
    let series = cuda.as_ref().map(|v| v.prefix(2)).unwrap_or_default();
    let before_wheels = cuda
        .as_ref()
        .is_some_and(|v| (v.major(), v.minor()) < (13, 2));
    let no_wheel = matches!(t.id, "cuobjdump" | "nvdisasm") && before_wheels;
    if wheels && (no_wheel || (asked && t.id == "cu++filt")) {
        let what = if asked {
            format!("the {} wheel has no {} binary", t.component, t.bin)
        } else {
            format!("NVIDIA publishes no {} wheel for it", t.id)
        };
        return Some(format!(
            "this route (PyPI wheels) has no {} for CUDA {series}: {what}; the redist route does (`cudaup install --source redist`)",
            t.id
        ));
    }
    asked.then(|| {
        format!(
            "{} is installed, but this route ships no {} (NVIDIA's redistributable archive has it)",
            t.component, t.bin
        )
    })
}

fn run(
    exec: &Exec<'_>,
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<crate::world::runner::Output, String> {
    exec.run(program, args, env, T).map_err(|e| e.to_string())
}

fn failed(id: &str, what: String, out: Option<&crate::world::runner::Output>) -> Check {
    let mut ev = vec![what];
    if let Some(o) = out {
        ev.extend(output_lines(o).into_iter().take(6));
    }
    Check::fail(id, ev)
}

fn cuobjdump(exec: &Exec<'_>, path: &Path, built: &[Built]) -> Check {
    let Some(b) = built.first() else {
        return Check::skip(
            "cuobjdump",
            vec!["addKernel was not built (see addkernel): nothing to dump".into()],
        );
    };
    let bin = b.binary.display().to_string();
    match run(exec, path, &["-sass", &bin], &[]) {
        Err(e) => failed("cuobjdump", e, None),
        Ok(o) if o.success() && o.stdout.contains(MANGLED) => {
            let arch = o
                .stdout
                .lines()
                .find(|l| l.contains("arch ="))
                .map(|l| l.trim().to_owned());
            let mut ev = vec![format!("cuobjdump -sass lists addKernel's SASS in {bin}")];
            ev.extend(arch);
            Check::pass("cuobjdump", ev)
        }
        Ok(o) => failed(
            "cuobjdump",
            format!(
                "cuobjdump -sass {bin} did not list addKernel ({})",
                exit_words(&o)
            ),
            Some(&o),
        ),
    }
}

fn nvdisasm(exec: &Exec<'_>, tk: &Toolkit, path: &Path, dir: &Path) -> Check {
    // A cubin of its own (nvcc -cubin), so this needs no cuobjdump.
    let cubin = dir.join("addKernel.cubin");
    let (src, out) = (
        dir.join("addKernel.cu").display().to_string(),
        cubin.display().to_string(),
    );
    match run(exec, &tk.nvcc, &["-cubin", "-o", &out, &src], &[]) {
        Ok(o) if o.success() && cubin.is_file() => {}
        Ok(o) => {
            return failed(
                "nvdisasm",
                format!(
                    "nvcc -cubin did not build a cubin to disassemble ({})",
                    exit_words(&o)
                ),
                Some(&o),
            )
        }
        Err(e) => return failed("nvdisasm", e, None),
    }
    match run(exec, path, &[&out], &[]) {
        Err(e) => failed("nvdisasm", e, None),
        Ok(o) if o.success() && o.stdout.contains(MANGLED) => {
            let n = o
                .stdout
                .lines()
                .filter(|l| l.trim_start().starts_with("/*"))
                .count();
            Check::pass(
                "nvdisasm",
                vec![format!(
                    "nvdisasm disassembles addKernel's cubin: {n} SASS instruction(s)"
                )],
            )
        }
        Ok(o) => failed(
            "nvdisasm",
            format!(
                "nvdisasm {out} did not disassemble addKernel ({})",
                exit_words(&o)
            ),
            Some(&o),
        ),
    }
}

fn cufilt(exec: &Exec<'_>, path: &Path) -> Check {
    match run(exec, path, &[MANGLED], &[]) {
        Err(e) => failed("cu++filt", e, None),
        Ok(o) if o.success() && o.stdout.trim().starts_with("addKernel(") => Check::pass(
            "cu++filt",
            vec![format!("cu++filt {MANGLED} → {}", o.stdout.trim())],
        ),
        Ok(o) => failed(
            "cu++filt",
            format!(
                "cu++filt {MANGLED} did not demangle it ({})",
                exit_words(&o)
            ),
            Some(&o),
        ),
    }
}

fn sanitizer(exec: &Exec<'_>, path: &Path, built: &[Built], gpus: &[Gpu]) -> Check {
    if gpus.is_empty() || built.is_empty() {
        return version(exec, "compute-sanitizer", path);
    }
    let mut ev = Vec::new();
    let mut ok = true;
    for g in gpus {
        let arch = g
            .compute_capability
            .as_deref()
            .and_then(super::kernel::sm_arch);
        let Some(b) = built.iter().find(|b| b.arch == arch).or(built.first()) else {
            continue;
        };
        let index = g.index.to_string();
        let bin = b.binary.display().to_string();
        match run(
            exec,
            path,
            &["--tool", "memcheck", "--error-exitcode", "3", &bin],
            &[("CUDA_VISIBLE_DEVICES", &index)],
        ) {
            Err(e) => {
                ok = false;
                ev.push(format!("GPU {}: {e}", g.index));
            }
            Ok(o) => {
                let text = format!("{}\n{}", o.stdout, o.stderr);
                let summary = text
                    .lines()
                    .find(|l| l.contains("ERROR SUMMARY"))
                    .map(|l| l.trim().trim_start_matches('=').trim().to_owned());
                let clean = o.success()
                    && text.contains(OK_LINE)
                    && summary.as_deref().is_some_and(|s| s.contains(" 0 errors"));
                ok &= clean;
                ev.push(format!(
                    "GPU {}: memcheck on addKernel: {}",
                    g.index,
                    summary.unwrap_or_else(|| format!("no error summary ({})", exit_words(&o)))
                ));
                if !clean {
                    ev.extend(output_lines(&o).into_iter().take(6));
                }
            }
        }
    }
    if ok {
        Check::pass("compute-sanitizer", ev)
    } else {
        Check::fail("compute-sanitizer", ev)
    }
}

fn version(exec: &Exec<'_>, id: &str, path: &Path) -> Check {
    match run(exec, path, &["--version"], &[]) {
        Err(e) => failed(id, e, None),
        Ok(o) if o.success() => {
            let lines = output_lines(&o);
            let has = |w: &str| {
                lines
                    .iter()
                    .find(|l| l.to_ascii_lowercase().contains(w))
                    .cloned()
            };
            let first = has("version")
                .or_else(|| has("release"))
                .or_else(|| lines.first().cloned());
            Check::pass(
                id,
                vec![format!(
                    "{} --version: {}",
                    path.display(),
                    first.unwrap_or_else(|| "answers".into())
                )],
            )
        }
        Ok(o) => failed(
            id,
            format!("{} --version failed ({})", path.display(), exit_words(&o)),
            Some(&o),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::testing::{ok, Scripted};
    use crate::verify::Status;

    fn tk(dir: &Path) -> Toolkit {
        Toolkit {
            dir: dir.to_owned(),
            real: dir.to_owned(),
            nvcc: dir.join("bin/nvcc"),
            receipt: None,
            cuda: crate::model::version::Version::parse("13.0"),
        }
    }

    #[test]
    fn each_tool_is_asked_what_it_is_for() {
        let d = tempfile::tempdir().unwrap();
        for t in [
            "bin/nvcc",
            "bin/cuobjdump",
            "bin/nvdisasm",
            "bin/cu++filt",
            "bin/compute-sanitizer",
            "bin/nvprune",
        ] {
            fs_err::create_dir_all(d.path().join("bin")).unwrap();
            fs_err::write(d.path().join(t), "").unwrap();
        }
        let r = Scripted::new(|program, args, _| {
            let name = program.file_name().unwrap().to_str().unwrap();
            match name {
                "nvcc" => {
                    let out = args[args.iter().position(|a| *a == "-o").unwrap() + 1];
                    fs_err::write(out, "").unwrap();
                    ok("")
                }
                "cuobjdump" => ok("Fatbin elf code:\n================\narch = sm_75\n\tFunction : _Z9addKernelPiPKiS1_\n"),
                "nvdisasm" => ok("\t.text._Z9addKernelPiPKiS1_:\n        /*0000*/  LDC R1, c[0x0][0x37c] ;\n"),
                "cu++filt" => ok("addKernel(int*, int const*, int const*)\n"),
                _ => ok("NVIDIA (R) Compute Sanitizer\nCopyright (c) 2020-2025 NVIDIA Corporation\nVersion 2025.3.1.0\n"),
            }
        });
        let process = crate::world::process::Process::default();
        let exec = Exec::new(&r, &process, None);
        let built = [Built {
            arch: None,
            binary: d.path().join("addKernel_default"),
        }];
        let checks = check(
            &exec,
            &tk(d.path()),
            &built,
            &[],
            Some(&["gdb".to_owned()]),
            d.path(),
        );
        let ids: Vec<&str> = checks.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "cuobjdump",
                "nvdisasm",
                "cu++filt",
                "compute-sanitizer",
                "nvprune",
                "cuda-gdb"
            ]
        );
        for c in &checks[..5] {
            assert_eq!(c.status, Status::Pass, "{c:?}");
        }
        assert_eq!(
            checks[2].evidence[0],
            "cu++filt _Z9addKernelPiPKiS1_ → addKernel(int*, int const*, int const*)"
        );
        assert!(
            checks[3].evidence[0].contains("Version 2025.3.1.0"),
            "{:?}",
            checks[3]
        );
        assert_eq!(
            checks[5].status,
            Status::Skip,
            "gdb installed, but no cuda-gdb among its files"
        );
    }
}
