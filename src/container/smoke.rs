//! `cudaup container verify` (and `verify --container`): proves a CUDA kernel runs inside a
//! container through the path setup chose, and that the container sees the host's GPUs.
//!
//! The image is made here, with no registry: the seed guide's addKernel (compiled by the host's
//! nvcc with the CUDA runtime linked statically) plus the shared libraries it and `nvidia-smi`
//! load (`ldd`), packed into a tar and imported (`podman import` / `docker import`). The driver's
//! libraries and `nvidia-smi` are not in the image: the CDI spec (or the toolkit's runtime)
//! brings them, which is what is being proved. Checks:
//! - `container-kernel`: addKernel prints its sums and `addKernel OK` inside the container;
//! - `container-cublas`: verify's library program (`programs/libs.cu`), built with cuBLAS alone
//!   and the toolkit's library directory as its run path, multiplies two matrices with
//!   `cublasSgemm` inside the container and checks them against the CPU. cuBLAS travels in the
//!   image (as it does in CUDA's own images); the driver still comes through the spec;
//! - `container-gpus`: `nvidia-smi -L` inside lists the same GPU UUIDs as on the host;
//! - an engine error is mapped to the doctor check that explains it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::verify::Check;
use crate::world::runner::{Output, Runner};

use super::choice::Choice;
use super::engine::Engine;

/// What the proof needs.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    /// The engine.
    pub engine: &'a Engine,
    /// Its path to the GPUs.
    pub choice: &'a Choice,
    /// nvcc to build the kernel with.
    pub nvcc: Option<PathBuf>,
    /// A scratch directory.
    pub work: &'a Path,
    /// The host's `nvidia-smi`, for the UUIDs to compare with.
    pub host_nvidia_smi: Option<PathBuf>,
    /// `ldd`.
    pub ldd: PathBuf,
}

const TIMEOUT: Duration = Duration::from_secs(300);

fn tail(o: &Output) -> Vec<String> {
    let lines: Vec<String> = o
        .stdout
        .lines()
        .chain(o.stderr.lines())
        .map(str::to_owned)
        .filter(|l| !l.trim().is_empty())
        .collect();
    lines[lines.len().saturating_sub(8)..].to_vec()
}

fn explained(mut lines: Vec<String>) -> Vec<String> {
    if let Some(id) = super::doctor::explain_error(&lines.join("\n")) {
        lines.push(format!(
            "`cudaup container doctor` check {id} explains this error"
        ));
    }
    lines
}

/// The files `ldd` says `binary` loads (the loader included), as absolute paths.
pub fn parse_ldd(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let path = match l.split_once("=>") {
                Some((_, rest)) => rest.split_whitespace().next()?,
                None => l.split_whitespace().next()?,
            };
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

/// GPU UUIDs in `nvidia-smi -L` output.
pub fn uuids(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == ')' || c == '(')
        .filter(|w| w.starts_with("GPU-") || w.starts_with("MIG-"))
        .map(str::to_owned)
        .collect()
}

/// Packs `files` (host paths, kept at the same paths) and each of `binaries` (at
/// `/cudaup/<name>`) into a tar for `import`.
pub fn pack(tar_path: &Path, binaries: &[PathBuf], files: &[PathBuf]) -> std::io::Result<()> {
    let mut b = tar::Builder::new(fs_err::File::create(tar_path)?);
    b.follow_symlinks(true);
    let mut seen = std::collections::BTreeSet::new();
    for f in files {
        let rel = f.strip_prefix("/").unwrap_or(f).to_path_buf();
        if seen.insert(rel.clone()) {
            b.append_path_with_name(f, &rel)?;
        }
    }
    for binary in binaries {
        let name = binary.file_name().unwrap_or_default();
        b.append_path_with_name(binary, Path::new("cudaup").join(name))?;
    }
    b.into_inner()?.sync_all()
}

/// Builds `bin` with `nvcc` and `args`: first with `-arch=native` (SASS for the GPUs here),
/// then, where nvcc refuses that (no GPU), with its default (PTX, JIT-compiled by the driver).
/// Ok: how it was built; Err: the evidence of the last failure.
fn compile(
    runner: &dyn Runner,
    nvcc: &Path,
    args: &[String],
    bin: &Path,
) -> Result<String, Vec<String>> {
    let mut last = Vec::new();
    for arch in [Some("-arch=native"), None] {
        let mut argv: Vec<&str> = arch.into_iter().collect();
        argv.extend(args.iter().map(String::as_str));
        match runner.run(nvcc, &argv, TIMEOUT) {
            Ok(o) if o.success() && bin.is_file() => {
                return Ok(format!("built with {} {}", nvcc.display(), argv.join(" ")));
            }
            Ok(o) => {
                last = vec![format!(
                    "nvcc could not build {}:",
                    bin.file_name().unwrap_or_default().to_string_lossy()
                )];
                last.extend(tail(&o));
            }
            Err(e) => last = vec![e.to_string()],
        }
    }
    Err(last)
}

/// The directory of `nvcc`'s toolkit that holds `libcublas.so` (a runfile's `lib64`, or the
/// `targets/` directory a wheel-made toolkit links it from), if the toolkit has cuBLAS.
pub fn cublas_lib_dir(nvcc: &Path) -> Option<PathBuf> {
    let tk = nvcc.parent()?.parent()?;
    ["lib64", "targets/x86_64-linux/lib"]
        .iter()
        .map(|d| tk.join(d))
        .find(|d| d.join("libcublas.so").exists())
}

/// nvcc's arguments (without the architecture) for verify's library program with cuBLAS alone.
/// The library directory becomes the program's run path: the image keeps host paths, so the
/// loader finds the image's copy of cuBLAS at the same place inside.
pub fn cublas_args(lib: &Path, source: &Path, binary: &Path) -> Vec<String> {
    vec![
        "-o".into(),
        binary.display().to_string(),
        source.display().to_string(),
        "-Xcompiler".into(),
        "-Wno-deprecated-declarations".into(),
        "-DHAVE_CUBLAS".into(),
        format!("-L{}", lib.display()),
        "-lcublas".into(),
        "-Xlinker".into(),
        format!("-rpath={}", lib.display()),
    ]
}

/// The `container-cublas` check from the library program's output inside the container.
pub fn judge_cublas(o: &Output, engine: &str, flags: &str, built: &str) -> Check {
    let results = crate::verify::libs::parse_results(&o.stdout);
    match results.get("cublas") {
        Some(r) if r.ok => {
            let mut ev = vec![
                format!("cuBLAS ran in {engine} (run {flags}): {}", r.detail),
                format!("loaded {}", r.file),
            ];
            if let Some(rt) = results.get("cudart") {
                ev.push(format!("runtime: {}", rt.detail));
            }
            ev.push(built.to_owned());
            Check::pass("container-cublas", ev)
        }
        Some(r) => Check::fail(
            "container-cublas",
            explained(vec![
                format!("cuBLAS failed in {engine} (run {flags}): {}", r.detail),
                format!("loaded {}", r.file),
            ]),
        ),
        None => {
            let mut ev = vec![format!(
                "the cuBLAS program reported nothing in {engine} (run {flags}; exit {}):",
                o.status
                    .map_or_else(|| "by a signal".to_owned(), |c| c.to_string())
            )];
            ev.extend(tail(o));
            Check::fail("container-cublas", explained(ev))
        }
    }
}

/// Builds the image and runs the checks.
pub fn run(opts: &Options<'_>, runner: &dyn Runner) -> Vec<Check> {
    let mut checks = Vec::new();
    let engine = opts.engine;
    let Some(nvcc) = &opts.nvcc else {
        checks.push(Check::skip("container-kernel", vec!["no nvcc to build addKernel with: install a toolkit (`cudaup install --profile cuda-dev`) or pass --nvcc".into()]));
        return checks;
    };
    let src = opts.work.join("addKernel.cu");
    let bin = opts.work.join("addKernel");
    if let Err(e) = fs_err::write(&src, crate::verify::kernel::ADD_KERNEL) {
        checks.push(Check::fail("container-kernel", vec![e.to_string()]));
        return checks;
    }
    let args = vec![
        "-cudart".to_owned(),
        "static".into(),
        "-o".into(),
        bin.display().to_string(),
        src.display().to_string(),
    ];
    let built = match compile(runner, nvcc, &args, &bin) {
        Ok(how) => how,
        Err(ev) => {
            checks.push(Check::fail("container-kernel", ev));
            return checks;
        }
    };
    // cuBLAS: built now, judged inside the container below; a toolkit without it is a skip.
    let blas_bin = opts.work.join("cublas-gemm");
    let blas: Result<String, Check> = match cublas_lib_dir(nvcc) {
        None => Err(Check::skip(
            "container-cublas",
            vec![format!(
                "the toolkit of {} has no cuBLAS (no lib64/libcublas.so): install one with it (`cudaup install --profile cuda-dev`) or pass --nvcc of one that has",
                nvcc.display()
            )],
        )),
        Some(lib) => {
            let src = opts.work.join("libs.cu");
            match fs_err::write(&src, crate::verify::libs::PROGRAM) {
                Err(e) => Err(Check::fail("container-cublas", vec![e.to_string()])),
                Ok(()) => compile(runner, nvcc, &cublas_args(&lib, &src, &blas_bin), &blas_bin)
                    .map_err(|ev| Check::fail("container-cublas", ev)),
            }
        }
    };
    // The image: addKernel's libraries (and nvidia-smi's, which the spec mounts but whose libc
    // the image must have).
    let mut files = Vec::new();
    let mut binaries = vec![bin.clone()];
    if blas.is_ok() {
        binaries.push(blas_bin.clone());
    }
    for b in binaries.iter().cloned().chain(opts.host_nvidia_smi.clone()) {
        if let Ok(o) = runner.run(
            &opts.ldd,
            &[&b.display().to_string()],
            Duration::from_secs(30),
        ) {
            files.extend(parse_ldd(&o.stdout));
        }
    }
    let tar = opts.work.join("image.tar");
    if let Err(e) = pack(&tar, &binaries, &files) {
        checks.push(Check::fail(
            "container-kernel",
            vec![format!("cannot pack the test image: {e}")],
        ));
        return checks;
    }
    let image = "localhost/cudaup-smoke:latest";
    let mut base: Vec<String> = engine.base_args();
    base.extend(["import".into(), tar.display().to_string(), image.into()]);
    let argv: Vec<&str> = base.iter().map(String::as_str).collect();
    match runner.run(&engine.program, &argv, TIMEOUT) {
        Ok(o) if o.success() => {}
        Ok(o) => {
            let mut ev = vec![format!("{} import failed:", engine.kind.program())];
            ev.extend(tail(&o));
            checks.push(Check::fail("container-kernel", explained(ev)));
            return checks;
        }
        Err(e) => {
            checks.push(Check::fail("container-kernel", vec![e.to_string()]));
            return checks;
        }
    }
    let run_in = |cmd: &[&str]| -> Result<Output, crate::world::runner::RunError> {
        let mut args: Vec<String> = engine.base_args();
        args.extend(["run".into(), "--rm".into(), "--network=none".into()]);
        args.extend(opts.choice.run_flags.iter().cloned());
        args.push(image.into());
        args.extend(cmd.iter().map(|s| s.to_string()));
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        runner.run(&engine.program, &argv, TIMEOUT)
    };
    let flags = opts.choice.run_flags.join(" ");
    match run_in(&["/cudaup/addKernel"]) {
        Ok(o) if o.success() && o.stdout.contains(crate::verify::kernel::OK_LINE) => {
            let mut ev = vec![format!("addKernel ran in {} (run {flags})", engine.label())];
            ev.extend(o.stdout.lines().map(str::to_owned));
            ev.push(built);
            checks.push(Check::pass("container-kernel", ev));
        }
        Ok(o) => {
            let mut ev = vec![format!(
                "addKernel failed in {} (run {flags}):",
                engine.label()
            )];
            ev.extend(tail(&o));
            checks.push(Check::fail("container-kernel", explained(ev)));
        }
        Err(e) => checks.push(Check::fail("container-kernel", vec![e.to_string()])),
    }
    checks.push(match blas {
        Err(check) => check,
        Ok(how) => match run_in(&["/cudaup/cublas-gemm"]) {
            Ok(o) => judge_cublas(&o, &engine.label(), &flags, &how),
            Err(e) => Check::fail("container-cublas", vec![e.to_string()]),
        },
    });
    let host = opts
        .host_nvidia_smi
        .as_ref()
        .and_then(|s| runner.run(s, &["-L"], Duration::from_secs(60)).ok())
        .map(|o| uuids(&o.stdout))
        .unwrap_or_default();
    match run_in(&["nvidia-smi", "-L"]) {
        Ok(o) if o.success() => {
            let inside = uuids(&o.stdout);
            let same = !inside.is_empty() && (host.is_empty() || host == inside);
            let mut ev = vec![if same {
                format!(
                    "nvidia-smi -L inside lists {} GPU(s){}",
                    inside.len(),
                    if host.is_empty() {
                        ""
                    } else {
                        ", the host's UUIDs"
                    }
                )
            } else {
                format!("the container sees {inside:?}, the host {host:?}")
            }];
            ev.extend(o.stdout.lines().map(str::to_owned));
            checks.push(if same {
                Check::pass("container-gpus", ev)
            } else {
                Check::fail("container-gpus", ev)
            });
        }
        Ok(o) => {
            let mut ev = vec!["nvidia-smi -L failed inside:".to_owned()];
            ev.extend(tail(&o));
            checks.push(Check::fail("container-gpus", explained(ev)));
        }
        Err(e) => checks.push(Check::fail("container-gpus", vec![e.to_string()])),
    }
    checks
}

/// The in-container checks on the host `inputs` describes (`cudaup container verify`, `cudaup
/// verify --container`): the first engine set up for the GPUs (`only` that engine when given),
/// addKernel and cuBLAS built with `nvcc` (else the active toolkit's, the one on `PATH`, or
/// `/usr/local/cuda/bin/nvcc`). No engine set up is a skip that says what to do.
pub fn checks_in_container(
    inputs: &super::Inputs<'_>,
    runner: &dyn Runner,
    only: Option<super::engine::Kind>,
    nvcc: Option<PathBuf>,
) -> std::io::Result<Vec<Check>> {
    let survey = super::survey(inputs, runner);
    let pick = survey
        .engines
        .iter()
        .zip(&survey.choices)
        .find(|(e, c)| c.path != super::choice::Path::None && only.is_none_or(|o| e.kind == o));
    let Some((engine, choice)) = pick else {
        return Ok(vec![Check::skip(
            "container-kernel",
            vec!["no container engine set up for the GPUs here: `cudaup container setup` first (`cudaup container plan` shows the engines)".into()],
        )]);
    };
    let work = tempfile::tempdir()?;
    let path = &inputs.path_entries;
    let nvcc = nvcc
        .filter(|p| p.is_file())
        .or_else(|| {
            crate::install::receipts::Active::read(inputs.cudaup_home)
                .toolkit
                .map(|t| crate::model::layout::Prefix::at(&t).nvcc())
                .filter(|p| p.is_file())
        })
        .or_else(|| super::toolkit::on_path(path, "nvcc"))
        .or_else(|| Some(PathBuf::from("/usr/local/cuda/bin/nvcc")).filter(|p| p.is_file()));
    let opts = Options {
        engine,
        choice,
        nvcc,
        work: work.path(),
        host_nvidia_smi: super::toolkit::on_path(path, "nvidia-smi"),
        ldd: super::toolkit::on_path(path, "ldd").unwrap_or_else(|| PathBuf::from("/usr/bin/ldd")),
    };
    Ok(run(&opts, runner))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldd_and_nvidia_smi_are_read() {
        let ldd = "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n";
        assert_eq!(
            parse_ldd(ldd),
            [
                "/lib/x86_64-linux-gnu/libstdc++.so.6",
                "/lib/x86_64-linux-gnu/libc.so.6",
                "/lib64/ld-linux-x86-64.so.2"
            ]
            .map(PathBuf::from)
        );
        assert_eq!(
            uuids("GPU 0: NVIDIA H200 (UUID: GPU-1c1a8b1e-3d4f-9a2b-8c7d-0e1f2a3b4c5d)\n"),
            ["GPU-1c1a8b1e-3d4f-9a2b-8c7d-0e1f2a3b4c5d"]
        );
    }

    fn out(stdout: &str, status: i32) -> Output {
        Output {
            status: Some(status),
            stdout: stdout.into(),
            stderr: String::new(),
        }
    }

    #[test]
    fn cublas_is_found_built_with_its_run_path_and_judged() {
        let tk = tempfile::tempdir().unwrap();
        let nvcc = tk.path().join("bin/nvcc");
        assert_eq!(
            cublas_lib_dir(&nvcc),
            None,
            "no cuBLAS: a skip, not a build"
        );
        let lib = tk.path().join("targets/x86_64-linux/lib");
        fs_err::create_dir_all(&lib).unwrap();
        fs_err::write(lib.join("libcublas.so"), "").unwrap();
        assert_eq!(cublas_lib_dir(&nvcc), Some(lib.clone()));
        let args = cublas_args(&lib, Path::new("/w/libs.cu"), Path::new("/w/cublas-gemm"));
        let rpath = format!("-rpath={}", lib.display());
        assert!(
            args.iter().any(|a| a == "-DHAVE_CUBLAS") && args.contains(&rpath),
            "{args:?}"
        );
        assert!(!args
            .iter()
            .any(|a| a.starts_with("-DHAVE_") && a != "-DHAVE_CUBLAS"));

        let good = out(
            "RESULT {\"lib\":\"cudart\",\"ok\":true,\"detail\":\"NVIDIA H200\",\"file\":\"\"}\n\
             RESULT {\"lib\":\"cublas\",\"ok\":true,\"detail\":\"SGEMM 64x64x64: max relative error 1e-7\",\"file\":\"/t/lib/libcublas.so.13\"}\nDONE\n",
            0,
        );
        let c = judge_cublas(&good, "podman", "--device nvidia.com/gpu=all", "built");
        let j = serde_json::to_value(&c).unwrap();
        assert_eq!(j["status"], "pass", "{j}");
        assert!(j.to_string().contains("/t/lib/libcublas.so.13"), "{j}");

        let bad = out(
            "RESULT {\"lib\":\"cublas\",\"ok\":false,\"detail\":\"cublasCreate(&h) returned 3\",\"file\":\"\"}\nDONE\n",
            0,
        );
        let j = serde_json::to_value(judge_cublas(&bad, "podman", "", "built")).unwrap();
        assert_eq!(j["status"], "fail", "{j}");
        assert!(j.to_string().contains("returned 3"), "{j}");

        // A program that could not start (its library missing in the image) reports nothing.
        let gone = Output {
            status: Some(127),
            stdout: String::new(),
            stderr: "error while loading shared libraries: libcublas.so.13".into(),
        };
        let j = serde_json::to_value(judge_cublas(&gone, "podman", "", "built")).unwrap();
        assert_eq!(j["status"], "fail", "{j}");
        assert!(
            j.to_string().contains("exit 127") && j.to_string().contains("libcublas.so.13"),
            "{j}"
        );
    }
}
