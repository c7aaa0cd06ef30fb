//! The watch loop over a source that plays GPU samples back (NVML's place), with real commands:
//! exit codes passed through, the command's own process marked as watched, the duration, Ctrl-C,
//! and a broken display that leaves no command running.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::*;
use crate::monitor::sample::{GpuProcess, GpuSample};

/// Plays one GPU back; when `pid_file` names a file, the pid written there holds memory on it.
struct Played {
    pid_file: Option<PathBuf>,
    calls: u32,
}

impl Source for Played {
    fn sample(&mut self) -> Result<Vec<GpuSample>, MonitorError> {
        self.calls += 1;
        let processes = self
            .pid_file
            .as_ref()
            .and_then(|f| fs_err::read_to_string(f).ok())
            .and_then(|s| s.trim().parse().ok())
            .map(|pid| GpuProcess {
                pid,
                name: Some("sh".into()),
                mem_mib: Some(1024),
                watched: false,
            })
            .into_iter()
            .collect();
        Ok(vec![GpuSample {
            index: 0,
            name: "NVIDIA H200".into(),
            util_gpu: Some(40),
            processes,
            ..GpuSample::default()
        }])
    }
}

/// Counts what it was shown; fails on the `fail_at`th sample.
struct Counter {
    shown: usize,
    fail_at: Option<usize>,
}

impl Display for Counter {
    fn show(&mut self, _: &Sample, _: &History) -> std::io::Result<()> {
        self.shown += 1;
        if Some(self.shown) == self.fail_at {
            return Err(std::io::Error::other("the terminal went away"));
        }
        Ok(())
    }
    fn wait(&mut self, wait: Duration, cancel: &AtomicBool) -> std::io::Result<bool> {
        Ok(sleep_or_cancel(wait, cancel))
    }
}

fn opts(dir: &Path, command: &[&str]) -> Options {
    Options {
        interval: Duration::from_millis(50),
        duration: None,
        command: command.iter().map(OsString::from).collect(),
        cwd: dir.to_owned(),
        command_stdout_to_stderr: false,
        csv: None,
    }
}

fn display() -> Counter {
    Counter {
        shown: 0,
        fail_at: None,
    }
}

#[cfg(unix)] // runs sh and Unix signals
#[test]
fn the_commands_exit_code_and_signal_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = Played {
        pid_file: None,
        calls: 0,
    };
    let cancel = AtomicBool::new(false);
    let run = watch(
        &mut source,
        &opts(dir.path(), &["sh", "-c", "sleep 0.2; exit 7"]),
        Path::new("/proc"),
        &mut display(),
        &cancel,
    )
    .unwrap();
    assert_eq!(run.exit_code, Some(7));
    assert!(!run.samples.is_empty());
    assert!(run.samples.iter().all(|s| s.command.is_some()));
    let run = watch(
        &mut source,
        &opts(dir.path(), &["sh", "-c", "kill -TERM $$"]),
        Path::new("/proc"),
        &mut display(),
        &cancel,
    )
    .unwrap();
    assert_eq!(run.exit_code, Some(128 + 15));
}

#[cfg(unix)] // runs sh and Unix signals
#[test]
fn the_commands_own_process_on_the_gpu_is_marked_watched() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let mut source = Played {
        pid_file: Some(pid_file.clone()),
        calls: 0,
    };
    let o = opts(
        dir.path(),
        &[
            "sh",
            "-c",
            &format!("echo $$ > {}; sleep 0.6", pid_file.display()),
        ],
    );
    let run = watch(
        &mut source,
        &o,
        Path::new("/proc"),
        &mut display(),
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(run.exit_code, Some(0));
    let marked = run
        .samples
        .iter()
        .flat_map(|s| &s.gpus[0].processes)
        .filter(|p| p.watched)
        .count();
    assert!(marked > 0, "{:#?}", run.samples);
}

#[test]
fn without_a_command_the_duration_or_ctrl_c_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = Played {
        pid_file: None,
        calls: 0,
    };
    let mut o = opts(dir.path(), &[]);
    o.duration = Some(Duration::from_millis(120));
    o.csv = Some(dir.path().join("run.csv"));
    let run = watch(
        &mut source,
        &o,
        Path::new("/proc"),
        &mut display(),
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!((run.exit_code, run.cancelled), (None, false));
    assert!(run.samples.len() >= 2, "{}", run.samples.len());
    let csv = fs_err::read_to_string(dir.path().join("run.csv")).unwrap();
    assert_eq!(csv.lines().count(), run.samples.len() + 1);
    // Ctrl-C already pressed: one sample, then it stops, saying it was cancelled.
    let run = watch(
        &mut source,
        &opts(dir.path(), &[]),
        Path::new("/proc"),
        &mut display(),
        &AtomicBool::new(true),
    )
    .unwrap();
    assert_eq!((run.samples.len(), run.cancelled), (1, true));
}

#[cfg(unix)] // runs sh and Unix signals
#[test]
fn a_broken_display_stops_the_watch_and_the_command_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = Played {
        pid_file: None,
        calls: 0,
    };
    let started = std::time::Instant::now();
    let err = watch(
        &mut source,
        &opts(dir.path(), &["sleep", "30"]),
        Path::new("/proc"),
        &mut Counter {
            shown: 0,
            fail_at: Some(2),
        },
        &AtomicBool::new(false),
    )
    .unwrap_err();
    assert!(err.to_string().contains("the terminal went away"), "{err}");
    // The command was killed, not waited for for 30 s.
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_command_that_does_not_exist_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = Played {
        pid_file: None,
        calls: 0,
    };
    let err = watch(
        &mut source,
        &opts(dir.path(), &["cudaup-no-such-program", "--flag"]),
        Path::new("/proc"),
        &mut display(),
        &AtomicBool::new(false),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("could not start `cudaup-no-such-program --flag`"),
        "{err}"
    );
    assert_eq!(source.calls, 0);
}

#[test]
fn a_long_run_keeps_every_other_sample_past_the_cap() {
    let mut kept = Vec::new();
    for t in 0..=(MAX_KEPT as u64) {
        keep(
            &mut kept,
            Sample {
                t_ms: t,
                ..Sample::default()
            },
        );
    }
    assert_eq!(kept.len(), MAX_KEPT / 2 + 1);
    assert_eq!(kept.first().map(|s| s.t_ms), Some(0));
    assert!(kept.windows(2).all(|w| w[1].t_ms == w[0].t_ms + 2));
}
