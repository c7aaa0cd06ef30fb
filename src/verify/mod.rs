//! `cudaup verify`: proves the installed stack works — the seed guide's checks (§3–4), run
//! automatically, each with the evidence it rests on, and real work in every library.
//!
//! 1. `driver`: `nvidia-smi` answers; the driver version and every GPU ([`driver`]). A machine
//!    with no NVIDIA GPU at all skips it (and every GPU run); one with a GPU and no driver fails.
//! 2. `nvcc`: the active toolkit's `nvcc --version` is the release its receipt says was installed
//!    ([`toolkit`]).
//!    On Windows, `host-compiler`: nvcc needs Microsoft's `cl.exe` on `PATH` to compile; without
//!    it the checks that compile are skipped with that reason ([`host_compiler`]).
//! 3. `addkernel:N`: the seed's `addKernel` compiled with that nvcc for each GPU's architecture
//!    and run on that GPU; without a GPU, compiled for nvcc's default ([`kernel`]).
//! 4. `cuobjdump`, `nvdisasm`, `cu++filt`, `compute-sanitizer`, … on that build ([`tools`]).
//! 5. `libraries`, then `cudart`, `cublas`, `cufft`, `curand`, `cusparse`, `cusolver`, `cudnn`,
//!    `nvrtc`, `nvjitlink`, `npp`, `nvjpeg`, `cupti`, `nvtx`, `nvml`, `profiler`: one program
//!    linking every library, run per GPU, one real call into each checked against the CPU, and
//!    the file the loader mapped ([`libs`]).
//! 6. `cmake`: a `find_package(CUDAToolkit)` project configured, built and run ([`cmake`]).
//! 7. `framework:N`: each venv's torch (or TensorFlow) sees every GPU and multiplies matrices on
//!    each one as the CPU does ([`framework`]); `extension:N`: a `torch.utils.cpp_extension`
//!    CUDA extension built against the toolkit and run on each GPU ([`extension`]).
//! 8. `bench:N` (`--bench`): matmul TFLOP/s and pinned host↔device bandwidth per GPU.
//!
//! Every command goes through [`Runner`], so tests script what the tools print. A check that
//! cannot apply here (no toolkit, no GPU, no venv) is skipped with the reason, never failed.

pub mod cmake;
pub mod driver;
pub mod extension;
pub mod framework;
pub mod host_compiler;
pub mod kernel;
pub mod libs;
pub mod tensorrt;
pub mod toolkit;
pub mod tools;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::catalog::{ComponentsManifest, GpuTable};
use crate::detect::gpu::DriverReport;
use crate::install::receipts::Receipts;
use crate::model::system::Gpu;
use crate::world::process::Process;
use crate::world::runner::{Output, Runner};

/// The version of the `verify --json` document.
pub const SCHEMA_VERSION: u32 = 1;

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It ran and what it proves holds.
    Pass,
    /// It ran and found something broken (exit code 4).
    Fail,
    /// It cannot apply here (no toolkit, no GPU, nothing installed); the evidence says why.
    Skip,
}

/// One check and what it rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// Stable name: `driver`, `nvcc`, `addkernel:0`, `cudart`, `cublas`, `cudnn`,
    /// `framework:0`, `bench:0` (the number is the GPU index, or the venv's position).
    pub id: String,
    /// Pass, fail or skip.
    pub status: Status,
    /// What it is about (a GPU, a venv, a toolkit), when that is not the whole machine.
    pub subject: Option<String>,
    /// Human-readable evidence: the first line sums it up, the others back it.
    pub evidence: Vec<String>,
    /// Machine-readable facts (versions, paths, measurements); `null` when there are none.
    pub data: serde_json::Value,
}

impl Check {
    fn new(id: impl Into<String>, status: Status, evidence: Vec<String>) -> Self {
        Self {
            id: id.into(),
            status,
            subject: None,
            evidence,
            data: serde_json::Value::Null,
        }
    }

    /// A passed check.
    pub fn pass(id: impl Into<String>, evidence: Vec<String>) -> Self {
        Self::new(id, Status::Pass, evidence)
    }

    /// A failed check.
    pub fn fail(id: impl Into<String>, evidence: Vec<String>) -> Self {
        Self::new(id, Status::Fail, evidence)
    }

    /// A check that does not apply here.
    pub fn skip(id: impl Into<String>, evidence: Vec<String>) -> Self {
        Self::new(id, Status::Skip, evidence)
    }

    /// Names what the check is about.
    pub fn subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    /// Attaches machine-readable facts.
    pub fn data(mut self, data: serde_json::Value) -> Self {
        self.data = data;
        self
    }
}

/// The `verify --json` document.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// No check failed.
    pub ok: bool,
    /// How many checks passed.
    pub passed: usize,
    /// How many failed.
    pub failed: usize,
    /// How many were skipped.
    pub skipped: usize,
    /// The toolkit that was checked, if any.
    pub toolkit: Option<PathBuf>,
    /// The venvs whose framework was checked.
    pub venvs: Vec<PathBuf>,
    /// Every check, in order.
    pub checks: Vec<Check>,
}

impl Report {
    /// Adds `checks` after the report's own and counts them again (`verify --container`, and
    /// `container verify`'s report, which starts empty).
    pub fn append(&mut self, checks: Vec<Check>) {
        self.checks.extend(checks);
        let count = |s: Status| self.checks.iter().filter(|c| c.status == s).count();
        self.passed = count(Status::Pass);
        self.failed = count(Status::Fail);
        self.skipped = count(Status::Skip);
        self.ok = self.failed == 0;
    }

    /// A report of `checks` about `toolkit` and `venvs`, counted.
    pub fn new(toolkit: Option<PathBuf>, venvs: Vec<PathBuf>, checks: Vec<Check>) -> Self {
        let count = |s: Status| checks.iter().filter(|c| c.status == s).count();
        Self {
            schema_version: SCHEMA_VERSION,
            ok: count(Status::Fail) == 0,
            passed: count(Status::Pass),
            failed: count(Status::Fail),
            skipped: count(Status::Skip),
            toolkit,
            venvs,
            checks,
        }
    }
}

/// What to verify.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--toolkit DIR`: this toolkit instead of the active one.
    pub toolkit: Option<PathBuf>,
    /// `--venv DIR` (repeatable): these venvs instead of the ones in the receipts.
    pub venvs: Vec<PathBuf>,
    /// `--bench`: measure matmul throughput and copy bandwidth too.
    pub bench: bool,
}

/// The world verify runs in.
pub struct Context<'a> {
    /// The environment (PATH, LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES) and cudaup's home.
    pub process: &'a Process,
    /// Runs every command.
    pub runner: &'a dyn Runner,
    /// Fills in compute capabilities nvidia-smi does not print (old drivers).
    pub gpu_table: &'a GpuTable,
    /// Asked for the GPUs only when nvidia-smi does not answer (NVML, in the binary).
    pub nvml: &'a (dyn Fn() -> Option<DriverReport> + Sync),
    /// The GPUs on the PCI bus, asked when no driver answers: with none, the GPU checks are
    /// skipped; with some, the missing driver is a failure.
    pub pci_gpus: &'a (dyn Fn() -> Vec<Gpu> + Sync),
    /// Which catalog component installs which library or tool (receipts name artifacts).
    pub components: &'a ComponentsManifest,
}

/// Runs every check.
pub fn verify(ctx: &Context<'_>, opts: &Options) -> Report {
    let receipts = ctx
        .process
        .cudaup_home()
        .map(|h| Receipts::load(&h))
        .unwrap_or_default();

    let chosen = toolkit::choose(ctx.process, &receipts, opts.toolkit.as_deref());
    let exec = Exec::new(
        ctx.runner,
        ctx.process,
        chosen.as_ref().map(|c| c.dir.as_path()),
    );

    let (driver_check, gpus) = driver::check(ctx, &exec);
    let (nvcc_check, tk) = toolkit::check(&exec, chosen.as_ref(), &receipts);
    let no_toolkit = toolkit::absent_reason(chosen.as_ref(), tk.as_ref());

    let venvs = framework::targets(&receipts, &opts.venvs);
    let installed = tk
        .as_ref()
        .and_then(|t| libs::installed_components(t, ctx.components));
    let work = tempfile::Builder::new().prefix("cudaup-verify-").tempdir();
    let dir = match &work {
        Ok(d) => d.path().to_owned(),
        Err(e) => {
            let mut checks = vec![driver_check, nvcc_check];
            checks.push(Check::fail(
                "verify",
                vec![format!(
                    "cannot make a temporary directory to build in: {e}"
                )],
            ));
            return Report::new(None, Vec::new(), checks);
        }
    };
    let path = ctx.process.path_entries();
    // nvcc that cannot compile here (Windows without cl.exe): the builds are skipped, the rest run.
    let host = tk
        .as_ref()
        .and_then(|_| host_compiler::missing(cfg!(windows), &path));
    let (build_tk, no_build) = match host {
        Some(_) => (None, host_compiler::SKIPPED.to_owned()),
        None => (tk.as_ref(), no_toolkit.clone()),
    };
    let (linux_tk, not_here) = match build_tk {
        Some(_) if cfg!(windows) => (None, host_compiler::LINUX_ONLY.to_owned()),
        _ => (build_tk, no_build.clone()),
    };

    // Compiling, linking and importing frameworks take seconds each: side by side.
    let (kernel_checks, lib_checks, cmake_check, fw) = std::thread::scope(|s| {
        let k = s.spawn(|| {
            let (mut checks, built) = kernel::check(&exec, build_tk, &no_build, &gpus, &dir);
            if let Some(t) = build_tk {
                checks.extend(tools::check(
                    &exec,
                    t,
                    &built,
                    &gpus,
                    installed.as_deref(),
                    &dir,
                ));
            }
            checks
        });
        let l = s.spawn(|| libs::check(&exec, linux_tk, &not_here, &gpus, ctx.components, &dir));
        let c = s.spawn(|| cmake::check(&exec, linux_tk, &not_here, &gpus, &path, &dir));
        let f = s.spawn(|| {
            venvs
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let (check, torch_gpu) = framework::check(&exec, i, v, &gpus, ctx.process);
                    let ext = match &host {
                        Some(_) => extension::skipped(i, v, host_compiler::SKIPPED),
                        None => extension::check(&exec, i, v, tk.as_ref(), &gpus, &dir),
                    };
                    (check, torch_gpu, ext)
                })
                .collect::<Vec<_>>()
        });
        (
            k.join().expect("kernel checks do not panic"),
            l.join().expect("library checks do not panic"),
            c.join().expect("the cmake check does not panic"),
            f.join().expect("framework checks do not panic"),
        )
    });

    let mut checks = vec![driver_check, nvcc_check];
    checks.extend(host);
    checks.extend(kernel_checks);
    checks.extend(lib_checks);
    checks.push(cmake_check);
    if venvs.is_empty() {
        checks.push(Check::skip(
            "framework",
            vec!["no framework venv: cudaup installed none, and no --venv was given".into()],
        ));
    }
    let mut bench_venv: Option<&framework::VenvTarget> = None;
    let mut extensions = Vec::new();
    for (v, (check, torch_gpu, ext)) in venvs.iter().zip(fw) {
        if torch_gpu && bench_venv.is_none() {
            bench_venv = Some(v);
        }
        checks.push(check);
        extensions.push(ext);
    }
    checks.extend(extensions);
    checks.extend(tensorrt::check(&exec, bench_venv, &gpus, &receipts));
    if opts.bench {
        checks.extend(framework::bench(&exec, bench_venv, &gpus));
    }
    drop(work);
    Report::new(
        tk.as_ref().map(|t| t.dir.clone()),
        venvs.iter().map(|v| v.dir.clone()).collect(),
        checks,
    )
}

/// Runs commands in the active environment: the toolkit's `bin` first on `PATH`, its `lib64`
/// first on `LD_LIBRARY_PATH` (Windows has no such variable: its loader searches `PATH`, so the
/// toolkit's DLL folder goes there), `CUDA_HOME`, and CUDA's device order set to the PCI bus
/// order nvidia-smi uses, so "GPU 1" means the same GPU to every tool.
pub struct Exec<'a> {
    runner: &'a dyn Runner,
    env: Vec<(String, String)>,
}

impl<'a> Exec<'a> {
    /// The environment of `toolkit` on top of `process`'s.
    pub fn new(runner: &'a dyn Runner, process: &Process, toolkit: Option<&Path>) -> Self {
        let mut env = vec![("CUDA_DEVICE_ORDER".to_owned(), "PCI_BUS_ID".to_owned())];
        if let Some(t) = toolkit {
            let bin = crate::model::layout::Prefix::at(t).bin();
            if cfg!(windows) {
                // CUDA 13 keeps the Windows DLLs in bin\x64, CUDA 12 and older beside nvcc in bin\.
                let dlls = prepend(process.var("PATH"), &bin.join("x64"));
                env.push(("PATH".into(), prepend(Some(&dlls), &bin)));
            } else {
                env.push(("PATH".into(), prepend(process.var("PATH"), &bin)));
                env.push((
                    "LD_LIBRARY_PATH".into(),
                    prepend(process.var("LD_LIBRARY_PATH"), &t.join("lib64")),
                ));
            }
            env.push(("CUDA_HOME".into(), t.display().to_string()));
            env.push(("CUDA_PATH".into(), t.display().to_string()));
        }
        Self { runner, env }
    }

    /// The variables set for every command.
    pub fn env(&self) -> &[(String, String)] {
        &self.env
    }

    /// Runs `program`; `extra` variables win over the common ones.
    pub fn run(
        &self,
        program: &Path,
        args: &[&str],
        extra: &[(&str, &str)],
        timeout: Duration,
    ) -> Result<Output, crate::world::runner::RunError> {
        let mut env: Vec<(&str, &str)> = self
            .env
            .iter()
            .filter(|(k, _)| !extra.iter().any(|(e, _)| e == k))
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        env.extend_from_slice(extra);
        self.runner
            .run_streaming(program, args, &env, timeout, &mut |_| {})
    }
}

/// `dir` first in a search list (`:`-separated; `;` on Windows), without an empty element when
/// the list was unset and without a second copy of `dir`. A `dir` holding the separator cannot
/// be listed: the list is then left as it was, and the checks that need `dir` say what they
/// miss.
pub(crate) fn prepend(list: Option<&str>, dir: &Path) -> String {
    let rest = list.unwrap_or("");
    let entries = std::iter::once(dir.to_path_buf()).chain(
        std::env::split_paths(rest).filter(|e| !e.as_os_str().is_empty() && e.as_path() != dir),
    );
    match std::env::join_paths(entries) {
        Ok(joined) => joined.to_string_lossy().into_owned(),
        Err(_) => rest.to_owned(),
    }
}

/// The non-empty lines of what a command printed, stdout then stderr.
fn output_lines(out: &Output) -> Vec<String> {
    out.stdout
        .lines()
        .chain(out.stderr.lines())
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// How a command ended, in words.
fn exit_words(out: &Output) -> String {
    match out.status {
        Some(code) => format!("exit {code}"),
        None => "killed or timed out".to_owned(),
    }
}

/// The last line of stdout that holds a JSON object (interpreters print warnings around it).
fn json_line<T: for<'de> serde::Deserialize<'de>>(out: &Output) -> Result<T, String> {
    let line = out
        .stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| "it printed no report".to_owned())?;
    serde_json::from_str(line).map_err(|e| format!("its report is unreadable ({e})"))
}

/// Up to `n` lines that carry the error, else the last `n`.
fn error_lines(lines: &[String], n: usize) -> Vec<String> {
    let hits: Vec<String> = lines
        .iter()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error")
                || l.contains("fatal")
                || l.contains("failed")
                || l.contains("cannot find")
                || l.contains("undefined reference")
        })
        .take(n)
        .cloned()
        .collect();
    if hits.is_empty() {
        lines[lines.len().saturating_sub(n)..].to_vec()
    } else {
        hits
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! A runner that answers from a script, recording the environment of each call.

    use std::path::Path;
    use std::sync::Mutex;
    use std::time::Duration;

    use crate::world::runner::{Output, Runner};

    type Answer = dyn Fn(&Path, &[&str], &[(&str, &str)]) -> Option<Output> + Send + Sync;

    /// One recorded call: program, arguments, environment.
    pub type Call = (String, Vec<String>, Vec<(String, String)>);

    /// Answers with `f`; `None` means "not found".
    pub struct Scripted {
        f: Box<Answer>,
        pub calls: Mutex<Vec<Call>>,
    }

    impl Scripted {
        pub fn new(
            f: impl Fn(&Path, &[&str], &[(&str, &str)]) -> Option<Output> + Send + Sync + 'static,
        ) -> Self {
            Self {
                f: Box::new(f),
                calls: Mutex::new(Vec::new()),
            }
        }
    }

    pub fn ok(stdout: &str) -> Option<Output> {
        Some(Output {
            status: Some(0),
            stdout: stdout.to_owned(),
            stderr: String::new(),
        })
    }

    pub fn failed(code: i32, stdout: &str, stderr: &str) -> Option<Output> {
        Some(Output {
            status: Some(code),
            stdout: stdout.to_owned(),
            stderr: stderr.to_owned(),
        })
    }

    impl Runner for Scripted {
        fn run(
            &self,
            program: &Path,
            args: &[&str],
            timeout: Duration,
        ) -> Result<Output, crate::world::runner::RunError> {
            self.run_streaming(program, args, &[], timeout, &mut |_| {})
        }

        fn run_streaming(
            &self,
            program: &Path,
            args: &[&str],
            env: &[(&str, &str)],
            _timeout: Duration,
            _on_line: &mut dyn FnMut(&str),
        ) -> Result<Output, crate::world::runner::RunError> {
            self.calls.lock().unwrap().push((
                program.display().to_string(),
                args.iter().map(|a| (*a).to_owned()).collect(),
                env.iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ));
            (self.f)(program, args, env).ok_or_else(|| {
                crate::world::runner::RunError::new(
                    program,
                    "No such file or directory (os error 2)",
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Unix-only fact: `:` separates a search list (Windows: `;`, below).
    #[cfg(unix)]
    #[test]
    fn prepend_puts_the_dir_first_once() {
        let d = Path::new("/t/lib64");
        assert_eq!(prepend(None, d), "/t/lib64");
        assert_eq!(prepend(Some(""), d), "/t/lib64");
        assert_eq!(prepend(Some("/a:/t/lib64:/b"), d), "/t/lib64:/a:/b");
        assert_eq!(prepend(Some("/a::/b"), d), "/t/lib64:/a:/b");
        // A dir holding the separator cannot be listed: the list stays as it was.
        assert_eq!(prepend(Some("/a:/b"), Path::new("/t:x")), "/a:/b");
    }

    #[cfg(windows)]
    #[test]
    fn prepend_puts_the_dir_first_once_in_a_windows_list() {
        let d = Path::new(r"C:\t\bin");
        assert_eq!(prepend(None, d), r"C:\t\bin");
        assert_eq!(
            prepend(Some(r"C:\a;C:\t\bin;;C:\b"), d),
            r"C:\t\bin;C:\a;C:\b"
        );
        // `;` separates a Windows list; a drive's `:` does not.
        assert_eq!(prepend(Some(r"C:\a;D:\b"), d), r"C:\t\bin;C:\a;D:\b");
    }

    // Unix-only fact: the toolkit's libraries reach the loader through LD_LIBRARY_PATH, and `:`
    // separates the lists (Windows: PATH only, `;`, below).
    #[cfg(unix)]
    #[test]
    fn exec_sets_the_active_environment_and_extra_wins() {
        let runner = testing::Scripted::new(|_, _, _| testing::ok(""));
        let process = Process::with_vars([("PATH", "/usr/bin"), ("LD_LIBRARY_PATH", "/x")], "/");
        let exec = Exec::new(&runner, &process, Some(Path::new("/cuda")));
        exec.run(
            Path::new("/bin/true"),
            &[],
            &[("CUDA_DEVICE_ORDER", "FASTEST_FIRST")],
            Duration::from_secs(1),
        )
        .unwrap();
        let calls = runner.calls.lock().unwrap();
        let env = &calls[0].2;
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("PATH"), Some("/cuda/bin:/usr/bin"));
        assert_eq!(get("LD_LIBRARY_PATH"), Some("/cuda/lib64:/x"));
        assert_eq!(get("CUDA_HOME"), Some("/cuda"));
        assert_eq!(get("CUDA_DEVICE_ORDER"), Some("FASTEST_FIRST"));
        assert_eq!(
            env.iter().filter(|(k, _)| k == "CUDA_DEVICE_ORDER").count(),
            1
        );
    }

    #[cfg(windows)]
    #[test]
    fn exec_on_windows_puts_the_toolkits_programs_and_dlls_on_path() {
        let runner = testing::Scripted::new(|_, _, _| testing::ok(""));
        let process = Process::with_vars([("PATH", r"C:\Windows\System32")], r"C:\");
        let exec = Exec::new(&runner, &process, Some(Path::new(r"C:\cuda")));
        exec.run(
            Path::new(r"C:\cuda\bin\nvcc.exe"),
            &[],
            &[("CUDA_DEVICE_ORDER", "FASTEST_FIRST")],
            Duration::from_secs(1),
        )
        .unwrap();
        let calls = runner.calls.lock().unwrap();
        let env = &calls[0].2;
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(
            get("PATH"),
            Some(r"C:\cuda\bin;C:\cuda\bin\x64;C:\Windows\System32")
        );
        assert_eq!(get("LD_LIBRARY_PATH"), None);
        assert_eq!(get("CUDA_PATH"), Some(r"C:\cuda"));
        assert_eq!(get("CUDA_DEVICE_ORDER"), Some("FASTEST_FIRST"));
    }

    #[test]
    fn error_lines_prefer_errors() {
        let l = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            error_lines(&l(&["a", "x.cu(3): error: bad", "b"]), 5),
            l(&["x.cu(3): error: bad"])
        );
        assert_eq!(error_lines(&l(&["a", "b", "c"]), 2), l(&["b", "c"]));
    }
}
