//! Check `cmake`: a small project (`programs/cmake/`) that does what most CUDA projects do —
//! `project(... LANGUAGES CUDA)` and `find_package(CUDAToolkit)` — is configured against the
//! toolkit, must find it there with every `CUDA::` target the toolkit's files call for (cudart,
//! cuda_driver from `lib64/stubs`, the math libraries, NVRTC, nvJitLink, NPP, nvJPEG, CUPTI,
//! NVML, NVTX…), is built, and its program is run on each GPU.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::model::system::Gpu;
use crate::world::runner::which;

use super::toolkit::Toolkit;
use super::{error_lines, exit_words, output_lines, Check, Exec};

/// The project.
pub const CMAKE_LISTS: &str = include_str!("programs/cmake/CMakeLists.txt");
/// Its program.
pub const MAIN: &str = include_str!("programs/cmake/main.cu");

/// `CUDA::` targets FindCUDAToolkit defines when a file is there, and whether the program links
/// (and calls) them.
const TARGETS: &[(&str, &[&str], bool)] = &[
    ("cudart", &["lib64/libcudart.so"], true),
    ("cudart_static", &["lib64/libcudart_static.a"], false),
    ("cuda_driver", &["lib64/stubs/libcuda.so"], true),
    ("culibos", &["lib64/libculibos.a"], false),
    ("cublas", &["lib64/libcublas.so"], true),
    ("cublasLt", &["lib64/libcublasLt.so"], false),
    ("cufft", &["lib64/libcufft.so"], true),
    ("cufftw", &["lib64/libcufftw.so"], false),
    ("curand", &["lib64/libcurand.so"], true),
    ("cusparse", &["lib64/libcusparse.so"], true),
    ("cusolver", &["lib64/libcusolver.so"], true),
    ("nvrtc", &["lib64/libnvrtc.so"], true),
    ("nvJitLink", &["lib64/libnvJitLink.so"], false),
    ("nppc", &["lib64/libnppc.so"], false),
    ("npps", &["lib64/libnpps.so"], false),
    ("nvjpeg", &["lib64/libnvjpeg.so"], false),
    (
        "cupti",
        &["lib64/libcupti.so", "extras/CUPTI/lib64/libcupti.so"],
        false,
    ),
    ("nvml", &["lib64/stubs/libnvidia-ml.so"], false),
    ("nvtx3", &["include/nvtx3/nvToolsExt.h"], false),
    (
        "nvptxcompiler_static",
        &["lib64/libnvptxcompiler_static.a"],
        false,
    ),
];

/// The targets this toolkit must provide, and the ones to link.
pub fn targets(tk: &Path) -> (Vec<&'static str>, Vec<&'static str>) {
    let here: Vec<&(&str, &[&str], bool)> = TARGETS
        .iter()
        .filter(|(_, files, _)| files.iter().any(|f| tk.join(f).exists()))
        .collect();
    (
        here.iter().map(|t| t.0).collect(),
        here.iter().filter(|t| t.2).map(|t| t.0).collect(),
    )
}

/// `-- cudaup: NAME=VALUE` lines of the configure step.
fn reported(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.split_once("cudaup: "))
        .filter_map(|(_, kv)| kv.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

fn inside(tk: &Toolkit, p: &str) -> bool {
    let path = Path::new(p);
    let real = fs_err::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    path.starts_with(&tk.dir) || path.starts_with(&tk.real) || real.starts_with(&tk.real)
}

/// Configures, builds and runs the project in `dir`.
pub fn check(
    exec: &Exec<'_>,
    toolkit: Option<&Toolkit>,
    no_toolkit: &str,
    gpus: &[Gpu],
    path: &[PathBuf],
    dir: &Path,
) -> Check {
    let Some(tk) = toolkit else {
        return Check::skip("cmake", vec![no_toolkit.to_owned()]);
    };
    let Some(cmake) = which("cmake", path) else {
        return Check::skip(
            "cmake",
            vec!["no cmake on PATH to build a find_package(CUDAToolkit) project with (`pip install cmake`, or your distribution's package)".into()],
        );
    };
    let src = dir.join("cmake-src");
    let build = dir.join("cmake-build");
    if let Err(e) = fs_err::create_dir_all(&src)
        .and_then(|_| fs_err::write(src.join("CMakeLists.txt"), CMAKE_LISTS))
        .and_then(|_| fs_err::write(src.join("main.cu"), MAIN))
    {
        return Check::fail("cmake", vec![format!("cannot write the project: {e}")]);
    }
    let (must, link) = targets(&tk.dir);
    let mut archs: Vec<String> = gpus
        .iter()
        .filter_map(|g| super::kernel::sm_arch(g.compute_capability.as_deref()?))
        .map(|a| a.trim_start_matches("sm_").to_owned())
        .collect();
    archs.sort();
    archs.dedup();
    let ninja = which("ninja", path);
    let mut args: Vec<String> = vec![
        "-S".into(),
        src.display().to_string(),
        "-B".into(),
        build.display().to_string(),
        format!("-DCUDAToolkit_ROOT={}", tk.dir.display()),
        format!("-DCMAKE_CUDA_COMPILER={}", tk.nvcc.display()),
        format!("-DCUDAUP_TARGETS={}", must.join(";")),
        format!("-DCUDAUP_LINK={}", link.join(";")),
    ];
    if !archs.is_empty() {
        args.push(format!("-DCMAKE_CUDA_ARCHITECTURES={}", archs.join(";")));
    }
    if let Some(n) = &ninja {
        args.extend([
            "-G".into(),
            "Ninja".into(),
            format!("-DCMAKE_MAKE_PROGRAM={}", n.display()),
        ]);
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let started = Instant::now();
    let configured = match exec.run(&cmake, &argv, &[], Duration::from_secs(300)) {
        Err(e) => return Check::fail("cmake", vec![e.to_string()]),
        Ok(o) => o,
    };
    let facts = reported(&format!("{}\n{}", configured.stdout, configured.stderr));
    let fact = |k: &str| facts.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let data = serde_json::json!({
        "cmake": cmake,
        "generator": if ninja.is_some() { "Ninja" } else { "default" },
        "targets": must,
        "linked": link,
        "reported": facts.iter().map(|(k, v)| (k.clone(), v.clone())).collect::<std::collections::BTreeMap<_, _>>(),
    });
    if !configured.success() {
        let mut ev = vec![format!(
            "cmake could not configure a find_package(CUDAToolkit) project against {} ({}):",
            tk.dir.display(),
            exit_words(&configured)
        )];
        ev.extend(error_lines(&output_lines(&configured), 10));
        return Check::fail("cmake", ev).data(data);
    }
    // FindCUDAToolkit must have found this toolkit, not another one on the machine.
    let mut foreign: Vec<String> = Vec::new();
    for (k, v) in &facts {
        let wrong = match k.as_str() {
            "CUDAToolkit_BIN_DIR" | "CUDAToolkit_LIBRARY_DIR" => !v.is_empty() && !inside(tk, v),
            t if t.starts_with("target CUDA::") => {
                !v.is_empty() && !v.ends_with("-NOTFOUND") && !inside(tk, v)
            }
            _ => false,
        };
        if wrong {
            foreign.push(format!("{k} = {v}"));
        }
    }
    if !foreign.is_empty() {
        let mut ev = vec![format!(
            "FindCUDAToolkit found files outside {}:",
            tk.dir.display()
        )];
        ev.extend(foreign);
        return Check::fail("cmake", ev).data(data);
    }
    let bargs = ["--build", &build.display().to_string()].map(str::to_owned);
    let bargv: Vec<&str> = bargs.iter().map(String::as_str).collect();
    let built = match exec.run(&cmake, &bargv, &[], Duration::from_secs(600)) {
        Err(e) => return Check::fail("cmake", vec![e.to_string()]).data(data),
        Ok(o) => o,
    };
    let program = build.join("cmake_check");
    if !built.success() || !program.is_file() {
        let mut ev = vec![format!("cmake --build failed ({}):", exit_words(&built))];
        ev.extend(error_lines(&output_lines(&built), 10));
        return Check::fail("cmake", ev).data(data);
    }
    let took = started.elapsed().as_secs_f64();
    let mut ev = vec![format!(
        "find_package(CUDAToolkit) finds CUDA {} in {} with all {} targets it should ({}); built{} in {took:.1} s",
        fact("CUDAToolkit_VERSION").unwrap_or_else(|| "?".into()),
        tk.dir.display(),
        must.len(),
        must.join(" "),
        if ninja.is_some() { " with Ninja" } else { "" },
    )];
    if gpus.is_empty() {
        ev.push("no GPU here to run the program on".into());
        return Check::pass("cmake", ev).data(data);
    }
    let mut ok = true;
    for g in gpus {
        let index = g.index.to_string();
        match exec.run(
            &program,
            &[],
            &[("CUDA_VISIBLE_DEVICES", &index)],
            Duration::from_secs(120),
        ) {
            Ok(o) if o.success() && o.stdout.contains("cmake-check OK") => {
                ev.push(format!(
                    "GPU {}: cmake_check OK ({})",
                    g.index,
                    link.join(", ")
                ));
            }
            Ok(o) => {
                ok = false;
                ev.push(format!(
                    "GPU {}: cmake_check failed ({}): {}",
                    g.index,
                    exit_words(&o),
                    output_lines(&o).join("; ")
                ));
            }
            Err(e) => {
                ok = false;
                ev.push(format!("GPU {}: {e}", g.index));
            }
        }
    }
    if ok {
        Check::pass("cmake", ev).data(data)
    } else {
        Check::fail("cmake", ev).data(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_follow_the_files() {
        let d = tempfile::tempdir().unwrap();
        for f in [
            "lib64/libcudart.so",
            "lib64/stubs/libcuda.so",
            "lib64/libcublas.so",
            "include/nvtx3/nvToolsExt.h",
            "extras/CUPTI/lib64/libcupti.so",
        ] {
            let p = d.path().join(f);
            fs_err::create_dir_all(p.parent().unwrap()).unwrap();
            fs_err::write(p, "").unwrap();
        }
        let (must, link) = targets(d.path());
        assert_eq!(must, ["cudart", "cuda_driver", "cublas", "cupti", "nvtx3"]);
        assert_eq!(link, ["cudart", "cuda_driver", "cublas"]);
        let text = "-- cudaup: CUDAToolkit_VERSION=13.0.88\n-- cudaup: target CUDA::cublas=/t/lib64/libcublas.so\nother\n";
        assert_eq!(
            reported(text),
            [
                ("CUDAToolkit_VERSION".to_owned(), "13.0.88".to_owned()),
                (
                    "target CUDA::cublas".to_owned(),
                    "/t/lib64/libcublas.so".to_owned()
                )
            ]
        );
    }

    #[test]
    fn the_project_asks_for_what_it_is_told() {
        assert!(CMAKE_LISTS.contains("find_package(CUDAToolkit REQUIRED)"));
        assert!(CMAKE_LISTS.contains("CUDAUP_TARGETS"));
        assert!(MAIN.contains("cmake-check OK"));
    }
}
