//! The watch loop: start the command (when there is one), sample every interval until it ends,
//! the time is up, or the user quits, and hand each sample to a [`Display`] (the live view, the
//! JSON stream, plain lines: the command line's choice). Library code, so a test drives it with
//! a recorded [`Source`] and a real command and checks the exit code and the samples.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::record::CsvFile;
use super::sample::Sample;
use super::view::History;
use super::{MonitorError, Sampler, Source};

/// The most samples kept for the summary and the plot; past it every other one is dropped (a
/// week at one a second stays a few hundred MiB, and still covers the whole run).
pub const MAX_KEPT: usize = 100_000;

/// How long the live view remembers (its sparklines), in samples.
pub const HISTORY: usize = 600;

/// What to watch, and for how long.
#[derive(Debug, Clone)]
pub struct Options {
    /// Between samples.
    pub interval: Duration,
    /// Stop after this long (else when the command ends, or the user quits).
    pub duration: Option<Duration>,
    /// The command to run and watch (program first); empty for none.
    pub command: Vec<OsString>,
    /// Where the command runs.
    pub cwd: PathBuf,
    /// Send the command's stdout to stderr (stdout carries the `--json` stream).
    pub command_stdout_to_stderr: bool,
    /// Also write the samples as CSV here.
    pub csv: Option<PathBuf>,
}

/// Where the samples are shown while the watch runs.
pub trait Display {
    /// The newest sample (and the remembered ones, for the sparklines).
    fn show(&mut self, sample: &Sample, history: &History) -> std::io::Result<()>;
    /// Waits up to `wait`; true when the user asked to stop (q, Esc, Ctrl-C).
    fn wait(&mut self, wait: Duration, cancel: &AtomicBool) -> std::io::Result<bool>;
}

/// A watch, ended.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// The samples (thinned past [`MAX_KEPT`]).
    pub samples: Vec<Sample>,
    /// The command's exit code (128 + N for a signal), when one ran.
    pub exit_code: Option<i32>,
    /// Whether the user stopped it with Ctrl-C.
    pub cancelled: bool,
}

/// Watches until the command ends, the duration is over, or the user quits.
pub fn watch(
    source: &mut dyn Source,
    opts: &Options,
    proc_dir: &Path,
    display: &mut dyn Display,
    cancel: &AtomicBool,
) -> Result<Run, MonitorError> {
    let shown = |e: std::io::Error| MonitorError::Display(e);
    let mut child = match opts.command.split_first() {
        Some((program, rest)) => {
            let mut cmd = std::process::Command::new(program);
            cmd.args(rest).current_dir(&opts.cwd);
            if opts.command_stdout_to_stderr {
                cmd.stdout(std::io::stderr());
            }
            Some(cmd.spawn().map_err(|source| {
                MonitorError::Spawn {
                    command: opts
                        .command
                        .iter()
                        .map(|a| a.to_string_lossy())
                        .collect::<Vec<_>>()
                        .join(" "),
                    source,
                }
            })?)
        }
        None => None,
    };
    let mut sampler = Sampler::new(child.as_ref().map(std::process::Child::id), proc_dir);
    let mut csv = opts.csv.as_deref().map(CsvFile::create).transpose()?;
    let stop_at = opts.duration.map(|d| Instant::now() + d);
    let mut history = History::new(HISTORY);
    let mut run = Run::default();
    let result = (|| -> Result<(), MonitorError> {
        loop {
            let started = Instant::now();
            let sample = sampler.sample(source)?;
            display.show(&sample, &history).map_err(shown)?;
            if let Some(c) = &mut csv {
                c.push(&sample)?;
            }
            history.push(sample.clone());
            keep(&mut run.samples, sample);
            if let Some(c) = &mut child {
                if let Some(status) = c.try_wait().map_err(shown)? {
                    run.exit_code = Some(code_of(status));
                    return Ok(());
                }
            }
            if stop_at.is_some_and(|t| Instant::now() >= t) {
                return Ok(());
            }
            let quit = display
                .wait(opts.interval.saturating_sub(started.elapsed()), cancel)
                .map_err(shown)?;
            if quit || cancel.load(Ordering::SeqCst) {
                run.cancelled = cancel.load(Ordering::SeqCst);
                return Ok(());
            }
        }
    })();
    if let Some(mut c) = child {
        if run.exit_code.is_none() {
            if result.is_err() {
                // The watch broke (NVML lost the GPU): the command is not left running alone.
                let _ = c.kill();
            }
            // Ctrl-C reached the command too (one process group): wait for it to end.
            run.exit_code = Some(code_of(c.wait().map_err(shown)?));
        }
    }
    result?;
    if let Some(c) = csv {
        c.finish()?;
    }
    Ok(run)
}

/// Keeps `sample`, dropping every other kept one once there are [`MAX_KEPT`].
fn keep(samples: &mut Vec<Sample>, sample: Sample) {
    samples.push(sample);
    if samples.len() > MAX_KEPT {
        let mut odd = false;
        samples.retain(|_| {
            odd = !odd;
            odd
        });
    }
}

/// A command's exit code as a shell reports it: 128 + N when signal N ended it.
#[cfg(unix)]
pub fn code_of(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}

/// A command's exit code.
#[cfg(not(unix))]
pub fn code_of(status: std::process::ExitStatus) -> i32 {
    status.code().unwrap_or(1)
}

/// Sleeps up to `wait`, returning early (true) when Ctrl-C was pressed: the wait of every
/// display that reads no keys.
pub fn sleep_or_cancel(wait: Duration, cancel: &AtomicBool) -> bool {
    let until = Instant::now() + wait;
    loop {
        if cancel.load(Ordering::SeqCst) {
            return true;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

#[cfg(test)]
mod tests;
