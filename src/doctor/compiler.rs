//! The host compiler: which gcc versions an nvcc accepts is a fact of each CUDA release, so
//! instead of a table doctor asks the active toolkit's nvcc itself — it compiles an empty `.cu`
//! with `-ccbin gcc` and looks for CUDA's "unsupported GNU version" error.

use std::path::Path;
use std::time::Duration;

use crate::model::finding::Severity;
use crate::world::runner::{which, Runner};

use super::{Diagnosis, Inputs};

/// The words of the `#error` in CUDA's `crt/host_config.h`.
pub const UNSUPPORTED: &str = "unsupported GNU version";

/// `gcc versions later than 13` → 13, from nvcc's error.
pub fn newest_accepted(stderr: &str) -> Option<u32> {
    let rest = stderr.split("later than ").nth(1)?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|d| d.parse().ok())
}

/// `host-compiler-unsupported` (nvcc refuses the gcc on PATH) and `host-compiler-missing` (no
/// gcc at all), only when a toolkit is active. `scratch` is an empty directory for the test file.
pub fn check(inputs: &Inputs<'_>, runner: &dyn Runner, scratch: &Path) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let Some((toolkit, from)) = inputs.intended_toolkit() else {
        return out;
    };
    let nvcc = crate::model::layout::Prefix::at(&toolkit).nvcc();
    if !nvcc.is_file() {
        return out;
    }
    let path = inputs.process.path_entries();
    let Some(gcc) = which("gcc", &path) else {
        out.push(
            Diagnosis::new(
                "host-compiler-missing",
                Severity::Warning,
                "no gcc on PATH: nvcc needs a host compiler for every .cu file",
            )
            .evidence(format!("toolkit {} ({from})", toolkit.display()))
            .fix("Debian/Ubuntu: sudo apt-get install build-essential\nFedora/RHEL: sudo dnf install gcc-c++\nArch: sudo pacman -S base-devel"),
        );
        return out;
    };
    let source = scratch.join("cudaup-doctor-empty.cu");
    let object = scratch.join("cudaup-doctor-empty.o");
    if fs_err::write(&source, "").is_err() {
        return out;
    }
    let (src, obj) = (source.display().to_string(), object.display().to_string());
    let run = runner.run(
        &nvcc,
        &["-ccbin", "gcc", "-c", &src, "-o", &obj],
        Duration::from_secs(120),
    );
    let _ = fs_err::remove_file(&source);
    let _ = fs_err::remove_file(&object);
    let Ok(run) = run else { return out };
    let text = format!("{}\n{}", run.stderr, run.stdout);
    if run.success() || !text.contains(UNSUPPORTED) {
        return out;
    }
    let gcc_version = runner
        .run(
            &gcc,
            &["-dumpfullversion", "-dumpversion"],
            Duration::from_secs(10),
        )
        .ok()
        .filter(|o| o.success())
        .map(|o| o.stdout.trim().to_owned())
        .filter(|v| !v.is_empty());
    let limit = newest_accepted(&text);
    let error_line = text
        .lines()
        .find(|l| l.contains(UNSUPPORTED))
        .unwrap_or("")
        .trim()
        .to_owned();
    let older = limit.map_or("an older gcc".to_owned(), |n| format!("gcc-{n}"));
    let d = Diagnosis::new(
        "host-compiler-unsupported",
        Severity::Error,
        format!(
            "the toolkit's nvcc ({}) refuses the host compiler {} {}: every CUDA build fails",
            nvcc.display(),
            gcc.display(),
            gcc_version.as_deref().unwrap_or("")
        )
        .trim_end()
        .to_owned(),
    )
    .evidence(format!(
        "{} -ccbin gcc -c <empty .cu> printed: {error_line}",
        nvcc.display()
    ))
    .evidence(format!("toolkit {} ({from})", toolkit.display()))
    .fix(format!(
        "install {older} and point nvcc at it: sudo apt-get install {older} g++-{}; export NVCC_CCBIN=/usr/bin/{older}\n\
         (CMake: -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/{older}; torch extensions honour NVCC_CCBIN / CC)\n\
         or use a newer CUDA toolkit that accepts this gcc: cudaup plan --profile cuda-dev",
        limit.map_or("N".to_owned(), |n| n.to_string())
    ));
    out.push(d);
    out
}

#[cfg(test)]
mod tests {
    // Used only by the Unix-only tests below.
    #[cfg(unix)]
    use super::super::testing::*;
    use super::*;
    #[cfg(unix)]
    use crate::world::process::Process;
    #[cfg(unix)]
    use crate::world::runner::Output;

    /// Answers nvcc with CUDA 12.4's refusal and gcc with its version.
    // Used only by the Unix-only tests below.
    #[cfg(unix)]
    struct Refuses;

    #[cfg(unix)]
    impl Runner for Refuses {
        fn run(
            &self,
            program: &Path,
            _: &[&str],
            _: Duration,
        ) -> Result<Output, crate::world::runner::RunError> {
            Ok(if program.ends_with("bin/nvcc") {
                Output {
                    status: Some(1),
                    stdout: String::new(),
                    stderr: "/usr/local/cuda-12.4/bin/../targets/x86_64-linux/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! gcc versions later than 13 are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported host compiler may cause compilation failure or incorrect run time execution. Use at your own risk.\n".into(),
                }
            } else {
                Output {
                    status: Some(0),
                    stdout: "14.2.0\n".into(),
                    stderr: String::new(),
                }
            })
        }
    }

    #[cfg(unix)]
    fn exe(path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, "#!/bin/sh\n").unwrap();
        fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn nvcc_refusing_gcc() {
        let tmp = tempfile::tempdir().unwrap();
        let cuda = tmp.path().join("cuda-12.4");
        exe(&cuda.join("bin/nvcc"));
        exe(&tmp.path().join("gccbin/gcc"));
        let mut w = World::new(h200());
        w.live = true;
        let path = tmp.path().join("gccbin").display().to_string();
        w.process = Process::with_vars(
            [
                ("PATH", path.as_str()),
                ("CUDA_HOME", cuda.to_str().unwrap()),
            ],
            "/",
        );
        let d = check(&w.inputs(), &Refuses, tmp.path());
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].id(), "host-compiler-unsupported");
        assert!(d[0].finding.message.contains("14.2.0"));
        assert!(d[0].finding.fix.as_ref().unwrap().contains("gcc-13"));

        // No gcc on PATH.
        w.process = Process::with_vars(
            [("PATH", "/nowhere"), ("CUDA_HOME", cuda.to_str().unwrap())],
            "/",
        );
        let d = check(&w.inputs(), &Refuses, tmp.path());
        assert_eq!(d[0].id(), "host-compiler-missing");

        // No active toolkit: nothing is run.
        w.process = Process::with_vars([("PATH", path.as_str())], "/");
        assert!(check(&w.inputs(), &Refuses, tmp.path()).is_empty());
    }

    #[test]
    fn limit_from_the_message() {
        assert_eq!(
            newest_accepted(
                "#error -- unsupported GNU version! gcc versions later than 12 are not supported!"
            ),
            Some(12)
        );
        assert_eq!(newest_accepted("nothing"), None);
    }
}
