//! Running external commands, behind a trait so tests can script what a command prints.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A command that could not be run at all (not found, not executable, refused by the test
/// guard); a command that ran and failed is an [`Output`] with its status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not run `{program}`: {message}")]
pub struct RunError {
    /// The program that was started.
    pub program: String,
    /// Why it failed.
    pub message: String,
}

impl RunError {
    /// `program` could not be run, for `message`.
    pub fn new(program: &Path, message: impl Into<String>) -> RunError {
        RunError {
            program: program.display().to_string(),
            message: message.into(),
        }
    }
}

type Result<T> = std::result::Result<T, RunError>;

/// What a finished command printed and how it exited.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// Exit status; `None` when it was killed by a signal or timed out.
    pub status: Option<i32>,
    /// Standard output, lossily decoded.
    pub stdout: String,
    /// Standard error, lossily decoded.
    pub stderr: String,
}

impl Output {
    /// Whether the command exited with status 0.
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }
}

/// Runs programs. The real one spawns processes; tests substitute recorded answers.
pub trait Runner: Send + Sync {
    /// Runs `program` with `args`, waiting at most `timeout`. An `Err` means it could not be
    /// started at all (not found, not executable); a non-zero exit is an `Ok` with that status.
    fn run(&self, program: &Path, args: &[&str], timeout: Duration) -> Result<Output>;

    /// Runs `program` with extra environment variables, handing every line it prints (stdout
    /// and stderr) to `on_line` as it appears — for long installers whose progress and log the
    /// user should see. The default runs it to the end and replays the lines.
    fn run_streaming(
        &self,
        program: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        timeout: Duration,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<Output> {
        let _ = env;
        let out = self.run(program, args, timeout)?;
        for line in out.stdout.lines().chain(out.stderr.lines()) {
            on_line(line);
        }
        Ok(out)
    }
}

/// Spawns real processes, with stdin closed and a hard timeout.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemRunner;

impl Runner for SystemRunner {
    fn run_streaming(
        &self,
        program: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        timeout: Duration,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<Output> {
        Self::spawn_streaming(program, args, env, timeout, on_line)
    }

    fn run(&self, program: &Path, args: &[&str], timeout: Duration) -> Result<Output> {
        refuse_in_tests(program)?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| RunError::new(program, e.to_string()))?;
        // Read both pipes on threads so a chatty child cannot block on a full pipe while we wait.
        let stdout = child.stdout.take().map(read_to_end_thread);
        let stderr = child.stderr.take().map(read_to_end_thread);
        let started = std::time::Instant::now();
        let status = loop {
            match child
                .try_wait()
                .map_err(|e| RunError::new(program, e.to_string()))?
            {
                Some(status) => break status.code(),
                None if started.elapsed() >= timeout => {
                    tracing::debug!(program = %program.display(), "timed out; killing");
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                None => std::thread::sleep(Duration::from_millis(2)),
            }
        };
        let join = |h: Option<std::thread::JoinHandle<Vec<u8>>>| {
            h.and_then(|h| h.join().ok())
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default()
        };
        Ok(Output {
            status,
            stdout: join(stdout),
            stderr: join(stderr),
        })
    }
}

impl SystemRunner {
    fn spawn_streaming(
        program: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        timeout: Duration,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<Output> {
        use std::io::BufRead;
        refuse_in_tests(program)?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| RunError::new(program, e.to_string()))?;
        let (tx, rx) = std::sync::mpsc::channel::<(bool, String)>();
        let pipe = |r: Box<dyn std::io::Read + Send>,
                    is_err: bool,
                    tx: std::sync::mpsc::Sender<(bool, String)>| {
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(r)
                    .lines()
                    .map_while(std::result::Result::ok)
                {
                    if tx.send((is_err, line)).is_err() {
                        break;
                    }
                }
            })
        };
        let out_t = child
            .stdout
            .take()
            .map(|o| pipe(Box::new(o), false, tx.clone()));
        let err_t = child
            .stderr
            .take()
            .map(|e| pipe(Box::new(e), true, tx.clone()));
        drop(tx);
        let started = std::time::Instant::now();
        let (mut stdout, mut stderr) = (String::new(), String::new());
        let mut status = None;
        loop {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok((is_err, line)) => {
                    on_line(&line);
                    let buf = if is_err { &mut stderr } else { &mut stdout };
                    buf.push_str(&line);
                    buf.push('\n');
                    continue;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    status = child
                        .wait()
                        .map_err(|e| RunError::new(program, e.to_string()))?
                        .code();
                    break;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            }
            if started.elapsed() >= timeout {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
        }
        for t in [out_t, err_t].into_iter().flatten() {
            let _ = t.join();
        }
        Ok(Output {
            status,
            stdout,
            stderr,
        })
    }
}

/// The host programs a test must never reach: the driver probe and everything privileged. A test
/// that needs one puts a stand-in of it on a `PATH` it made.
pub const GUARDED_PROGRAMS: &[&str] = &[
    "nvidia-smi",
    "apt-get",
    "apt",
    "dnf",
    "yum",
    "zypper",
    "sudo",
    "pkexec",
    "modprobe",
    "mokutil",
    "dkms",
    "systemctl",
];

/// Where a host's own programs and libraries live; anything else (a test's temporary
/// directory, the build tree) is a stand-in the test made.
const HOST_PREFIXES: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/snap", "/etc",
];

/// The start of every line the guard prints, so a test harness can fail the test on sight.
pub const GUARD_MARKER: &str = "cudaup test guard:";

/// In a test run (`CUDAUP_TEST_GUARD=<test name>`), refuses to start the host's copy of a
/// [`GUARDED_PROGRAMS`] entry. Checked here, where every command goes through, so a test that
/// forgot its machine picture fails naming itself instead of probing or changing the machine
/// it runs on. Outside tests it costs one environment lookup.
pub fn refuse_in_tests(program: &Path) -> Result<()> {
    let Some(test) = std::env::var_os(crate::world::vars::CUDAUP_TEST_GUARD) else {
        return Ok(());
    };
    let path: Vec<_> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    match guarded_host_program(program, &path) {
        None => Ok(()),
        Some(real) => Err(RunError::new(
            program,
            refusal(&test.to_string_lossy(), &real),
        )),
    }
}

/// The host file `program` would start when it is one of [`GUARDED_PROGRAMS`] and not a stand-in
/// (a bare name is looked up in `path`, as `Command` does; a stand-in that links to the host's
/// program is the host's program).
fn guarded_host_program(program: &Path, path: &[std::path::PathBuf]) -> Option<std::path::PathBuf> {
    let name = program.file_name()?.to_string_lossy();
    if !GUARDED_PROGRAMS.contains(&name.as_ref()) {
        return None;
    }
    let found = if program.components().count() > 1 {
        program.to_path_buf()
    } else {
        // Not there at all: starting it fails on its own.
        which(&name, path)?
    };
    let real = std::fs::canonicalize(&found).unwrap_or(found);
    is_host_path(&real).then_some(real)
}

/// In a test run, the refusal (printed with [`GUARD_MARKER`]) of loading the host's NVML
/// `library`: a bare name is searched for in the host's library directories, so only a path to
/// a stand-in the test made may load. `None` outside tests and for a stand-in.
pub fn nvml_refused_in_tests(library: &str) -> Option<String> {
    let test = std::env::var_os(crate::world::vars::CUDAUP_TEST_GUARD)?;
    host_library(library).map(|real| refusal(&test.to_string_lossy(), &real))
}

fn host_library(library: &str) -> Option<std::path::PathBuf> {
    let path = Path::new(library);
    if !path.is_absolute() {
        return Some(path.to_path_buf());
    }
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    is_host_path(&real).then_some(real)
}

fn refusal(test: &str, what: &Path) -> String {
    let message = format!(
        "test `{test}` tried to reach the host's {} (a test must use a machine picture, or a stand-in on a PATH it made)",
        what.display()
    );
    // Straight to stderr, not through `tracing`: the harness must see it whatever the log filter.
    #[allow(clippy::print_stderr)]
    {
        eprintln!("{GUARD_MARKER} {message}");
    }
    message
}

/// Whether `path` (absolute, symlinks resolved) is one of the host's own files.
pub fn is_host_path(path: &Path) -> bool {
    HOST_PREFIXES.iter().any(|p| path.starts_with(p))
}

fn read_to_end_thread<R: std::io::Read + Send + 'static>(
    mut r: R,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// Finds `name` in the given `PATH` entries, as a shell would.
pub fn which(name: &str, path: &[std::path::PathBuf]) -> Option<std::path::PathBuf> {
    // Windows finds `nvidia-smi` as `nvidia-smi.exe`.
    let exe =
        (cfg!(windows) && Path::new(name).extension().is_none()).then(|| format!("{name}.exe"));
    path.iter()
        .flat_map(|dir| [Some(dir.join(name)), exe.as_ref().map(|e| dir.join(e))])
        .flatten()
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path)
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

// Stand-ins are shell scripts with an execute bit, and the guard names Unix paths.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn exe(path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, "#!/bin/sh\n").unwrap();
        fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn the_hosts_privileged_programs_are_guarded_and_a_tests_stand_ins_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let stand_ins = dir.path().join("bin");
        exe(&stand_ins.join("nvidia-smi"));
        exe(&stand_ins.join("python3"));
        let path = vec![stand_ins.clone()];
        // A stand-in, found by name or given by path, runs.
        assert_eq!(guarded_host_program(Path::new("nvidia-smi"), &path), None);
        assert_eq!(
            guarded_host_program(&stand_ins.join("nvidia-smi"), &path),
            None
        );
        // The host's copy, by path, does not; nor does a name found on a host PATH.
        assert_eq!(
            guarded_host_program(Path::new("/usr/bin/sudo"), &path),
            Some("/usr/bin/sudo".into())
        );
        assert_eq!(
            guarded_host_program(Path::new("/usr/sbin/modprobe"), &[]),
            Some("/usr/sbin/modprobe".into())
        );
        // A link in the test's directory to the host's program is the host's program.
        if Path::new("/bin/sh").exists() {
            std::os::unix::fs::symlink("/bin/sh", stand_ins.join("systemctl")).unwrap();
            let got = guarded_host_program(Path::new("systemctl"), &path).unwrap();
            assert!(is_host_path(&got), "{}", got.display());
        }
        // Programs off the list are never the guard's business.
        assert_eq!(guarded_host_program(Path::new("/usr/bin/env"), &path), None);
        // Missing everywhere: nothing to refuse (starting it fails on its own).
        assert_eq!(guarded_host_program(Path::new("dkms"), &path), None);
    }

    #[test]
    fn nvml_by_name_is_the_hosts_and_a_stand_in_library_is_not() {
        assert!(host_library("libnvidia-ml.so.1").is_some());
        assert!(host_library("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1").is_some());
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("libnvidia-ml.so.1");
        fs_err::write(&lib, "").unwrap();
        assert_eq!(host_library(&lib.display().to_string()), None);
    }
}
