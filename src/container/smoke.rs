//! `cudaup container verify` (and `verify --container`): proves a CUDA kernel runs inside a
//! container through the path setup chose, and that the container sees the host's GPUs.
//!
//! The image is made here, with no registry: the seed guide's addKernel (compiled by the host's
//! nvcc with the CUDA runtime linked statically) plus the shared libraries it and `nvidia-smi`
//! load (`ldd`), packed into a tar and imported (`podman import` / `docker import`). The driver's
//! libraries and `nvidia-smi` are not in the image: the CDI spec (or the toolkit's runtime)
//! brings them, which is what is being proved. Checks:
//! - `container-kernel`: addKernel prints its sums and `addKernel OK` inside the container;
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

/// Packs `files` (host paths, kept at the same paths) and `binary` (at `/cudaup/<name>`) into a
/// tar for `import`.
pub fn pack(tar_path: &Path, binary: &Path, files: &[PathBuf]) -> std::io::Result<()> {
    let mut b = tar::Builder::new(fs_err::File::create(tar_path)?);
    b.follow_symlinks(true);
    let mut seen = std::collections::BTreeSet::new();
    for f in files {
        let rel = f.strip_prefix("/").unwrap_or(f).to_path_buf();
        if seen.insert(rel.clone()) {
            b.append_path_with_name(f, &rel)?;
        }
    }
    let name = binary.file_name().unwrap_or_default();
    b.append_path_with_name(binary, Path::new("cudaup").join(name))?;
    b.into_inner()?.sync_all()
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
    let (src_s, bin_s) = (src.display().to_string(), bin.display().to_string());
    // `-arch=native` builds SASS for the GPUs here; without a GPU nvcc refuses it, and its
    // default (PTX, JIT-compiled by the driver's libnvidia-ptxjitcompiler) is taken.
    let mut built = None;
    for arch in [Some("-arch=native"), None] {
        let mut args = vec!["-cudart", "static", "-o", &bin_s, &src_s];
        if let Some(a) = arch {
            args.insert(0, a);
        }
        match runner.run(nvcc, &args, TIMEOUT) {
            Ok(o) if o.success() && bin.is_file() => {
                built = Some(format!("built with {} {}", nvcc.display(), args.join(" ")));
                break;
            }
            Ok(o) if arch.is_none() => {
                let mut ev = vec!["nvcc could not build addKernel.cu:".to_owned()];
                ev.extend(tail(&o));
                checks.push(Check::fail("container-kernel", ev));
                return checks;
            }
            Err(e) if arch.is_none() => {
                checks.push(Check::fail("container-kernel", vec![e.to_string()]));
                return checks;
            }
            _ => {}
        }
    }
    let built = built.unwrap_or_default();
    // The image: addKernel's libraries (and nvidia-smi's, which the spec mounts but whose libc
    // the image must have).
    let mut files = Vec::new();
    for b in std::iter::once(bin.clone()).chain(opts.host_nvidia_smi.clone()) {
        if let Ok(o) = runner.run(
            &opts.ldd,
            &[&b.display().to_string()],
            Duration::from_secs(30),
        ) {
            files.extend(parse_ldd(&o.stdout));
        }
    }
    let tar = opts.work.join("image.tar");
    if let Err(e) = pack(&tar, &bin, &files) {
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
}
