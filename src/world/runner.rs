//! Running external commands, behind a trait so tests can script what a command prints.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::error::{Error, Result};

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
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::Command {
                program: program.display().to_string(),
                message: e.to_string(),
            })?;
        // Read both pipes on threads so a chatty child cannot block on a full pipe while we wait.
        let stdout = child.stdout.take().map(read_to_end_thread);
        let stderr = child.stderr.take().map(read_to_end_thread);
        let started = std::time::Instant::now();
        let status = loop {
            match child.try_wait()? {
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
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().map_err(|e| Error::Command {
            program: program.display().to_string(),
            message: e.to_string(),
        })?;
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
                    status = child.wait()?.code();
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
    path.iter()
        .map(|dir| dir.join(name))
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
