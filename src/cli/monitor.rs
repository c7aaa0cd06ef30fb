//! `cudaup monitor`: the flags, the terminal (the live view's raw mode and alternate screen, left
//! as they were on any exit), the watched command's process and exit code, and the rendering of
//! the summary. Sampling, recording, judging and drawing are [`crate::monitor`]'s.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;

use crate::error::{ExitCode, Result};
use crate::monitor::record::{self, CsvFile};
use crate::monitor::sample::{Record, Sample};
use crate::monitor::summary::{self, Severity, Summary};
use crate::monitor::view::{self, History, Look};
use crate::monitor::watch::{sleep_or_cancel, watch, Display, Options, Run};
use crate::monitor::words::Words;
use crate::monitor::{nvml, MonitorError};
use crate::world::process::Process;

use super::Style;

/// `cudaup monitor` flags.
#[derive(Debug, Clone, Args)]
pub struct MonitorArgs {
    /// Seconds between samples (0.1 to 60)
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0, value_parser = seconds(0.1, 60.0))]
    pub interval: f64,
    /// Stop after SECONDS [default: when the command ends, or at q / Ctrl-C]
    #[arg(long, value_name = "SECONDS", value_parser = seconds(0.1, 31_536_000.0))]
    pub duration: Option<f64>,
    /// Stream one JSON object per sample to stdout, and the summary as the last one (the
    /// schema is in docs/monitor.md); the watched command's own stdout then goes to stderr
    #[arg(long)]
    pub json: bool,
    /// Also write one CSV row per GPU per sample to FILE
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// At the end, plot utilisation, memory and power over the run into FILE (PNG)
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Judge a recorded `--json` stream (this machine's or a fleet host's) instead of the GPUs:
    /// the same summary, verdict and plot as the live run gave
    #[arg(long, value_name = "FILE", conflicts_with_all = ["command", "duration", "no_tui"])]
    pub replay: Option<PathBuf>,
    /// No live view: one line per sample instead (the default when stdout is not a terminal)
    #[arg(long)]
    pub no_tui: bool,
    /// The command to run and watch, after `--`; monitor exits with its exit code
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// What `--help` adds after the flags.
pub const AFTER_HELP: &str = "Examples:\n  cudaup monitor\n  cudaup monitor -- python train.py --epochs 1\n  cudaup monitor --json --plot run.png -- python train.py > run.jsonl\n  cudaup monitor --replay run.jsonl\n\n\
Alone at a terminal it shows every GPU live (q quits). With a command after `--` it runs it,\n\
samples while it runs (the command keeps the terminal), and at the end prints a summary and a\n\
verdict with its evidence: input-bound (the GPU waits while the command's CPU prepares data),\n\
memory near full, power or thermal throttling, a PCIe link below its best, another process on\n\
the GPU. The exit code is then the command's. Exit code 5 when there is no GPU to watch.";

fn seconds(min: f64, max: f64) -> impl Fn(&str) -> std::result::Result<f64, String> + Clone {
    move |s: &str| {
        let v: f64 = s
            .parse()
            .map_err(|_| format!("`{s}` is not a number of seconds"))?;
        if v.is_finite() && (min..=max).contains(&v) {
            Ok(v)
        } else {
            Err(format!("must be between {min} and {max} seconds"))
        }
    }
}

pub(super) fn run(
    args: &MonitorArgs,
    process: &Process,
    style: &Style,
    cancel: Arc<AtomicBool>,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let words = Words::of(style.lang().code());
    if let Some(path) = &args.replay {
        return replay(args, process, &process.cwd().join(path), words, out);
    }
    if process.var(crate::world::vars::CUDAUP_NO_NVML) == Some("1") {
        return Err(MonitorError::NoGpu(
            "NVML is switched off (CUDAUP_NO_NVML=1): no GPU to watch".into(),
        )
        .into());
    }
    let library = process
        .var(crate::world::vars::CUDAUP_NVML_LIBRARY)
        .unwrap_or(crate::detect::gpu::nvml::default_library())
        .to_owned();
    let opts = Options {
        interval: Duration::from_secs_f64(args.interval),
        duration: args.duration.map(Duration::from_secs_f64),
        command: args.command.clone(),
        cwd: process.cwd().to_owned(),
        command_stdout_to_stderr: args.json,
        csv: args.csv.as_ref().map(|p| process.cwd().join(p)),
    };
    let tui = !args.json
        && !args.no_tui
        && args.command.is_empty()
        && process.stdout_is_tty
        && process.stdin_is_tty;
    let proc_dir = Path::new("/proc");
    let run = nvml::with_nvml(&library, proc_dir, |source| -> Result<Run> {
        if tui {
            let mut screen = Screen::enter()?;
            screen.look.color = style.color();
            screen.look.interval_s = args.interval;
            screen.words = words;
            Ok(watch(source, &opts, proc_dir, &mut screen, &cancel)?)
        } else if args.json {
            Ok(watch(
                source,
                &opts,
                proc_dir,
                &mut Json { out: &mut *out },
                &cancel,
            )?)
        } else if args.command.is_empty() {
            Ok(watch(
                source,
                &opts,
                proc_dir,
                &mut Lines { out: &mut *out },
                &cancel,
            )?)
        } else {
            Ok(watch(source, &opts, proc_dir, &mut Quiet, &cancel)?)
        }
    })??;
    let to_stderr = !args.command.is_empty() && !args.json;
    finish(args, process, &run, to_stderr, words, out)
}

/// The `--json` stream: a record a line on stdout.
struct Json<'o> {
    out: &'o mut dyn Write,
}

impl Display for Json<'_> {
    fn show(&mut self, sample: &Sample, _: &History) -> std::io::Result<()> {
        record::write_json(self.out, &Record::Sample(sample.clone()))
    }
    fn wait(&mut self, wait: Duration, cancel: &AtomicBool) -> std::io::Result<bool> {
        Ok(sleep_or_cancel(wait, cancel))
    }
}

/// Without a terminal and without a command: a line per sample, as `nvidia-smi dmon` prints.
struct Lines<'o> {
    out: &'o mut dyn Write,
}

impl Display for Lines<'_> {
    fn show(&mut self, s: &Sample, _: &History) -> std::io::Result<()> {
        writeln!(self.out, "{}", plain_line(s))?;
        self.out.flush()
    }
    fn wait(&mut self, wait: Duration, cancel: &AtomicBool) -> std::io::Result<bool> {
        Ok(sleep_or_cancel(wait, cancel))
    }
}

/// With a command: the terminal is the command's; nothing is shown until the summary.
struct Quiet;

impl Display for Quiet {
    fn show(&mut self, _: &Sample, _: &History) -> std::io::Result<()> {
        Ok(())
    }
    fn wait(&mut self, wait: Duration, cancel: &AtomicBool) -> std::io::Result<bool> {
        Ok(sleep_or_cancel(wait, cancel))
    }
}

fn plain_line(s: &Sample) -> String {
    let gpus = s
        .gpus
        .iter()
        .map(|g| {
            format!(
                "gpu{} util {}% mem {}/{} MiB power {} W temp {} C",
                g.index,
                g.util_gpu.map_or("-".into(), |v| v.to_string()),
                g.mem_used_mib.map_or("-".into(), |v| v.to_string()),
                g.mem_total_mib.map_or("-".into(), |v| v.to_string()),
                g.power_w.map_or("-".into(), |v| format!("{v:.0}")),
                g.temp_c.map_or("-".into(), |v| v.to_string()),
            )
        })
        .collect::<Vec<_>>()
        .join(" | ");
    format!("{:>8.1}s {gpus}", s.t_ms as f64 / 1000.0)
}

fn replay(
    args: &MonitorArgs,
    process: &Process,
    path: &Path,
    words: &'static Words,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let recording = record::read(path)?;
    let exit_code = recording
        .summary
        .as_ref()
        .and_then(|s| s.command.as_ref()?.exit_code);
    if let Some(csv) = &args.csv {
        let mut file = CsvFile::create(&process.cwd().join(csv))?;
        for s in &recording.samples {
            file.push(s)?;
        }
        file.finish()?;
    }
    let run = Run {
        samples: recording.samples,
        exit_code,
        cancelled: false,
    };
    finish(args, process, &run, false, words, out)?;
    // The recorded command's code was its own; judging the recording worked.
    Ok(ExitCode::Ok)
}

fn finish(
    args: &MonitorArgs,
    process: &Process,
    run: &Run,
    to_stderr: bool,
    words: &'static Words,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let summary = summary::summarise(&run.samples, run.exit_code, words);
    if let Some(plot) = &args.plot {
        crate::monitor::plot::write(&process.cwd().join(plot), &run.samples)?;
    }
    if args.json {
        record::write_json(out, &Record::Summary(summary.clone()))?;
    } else if to_stderr {
        // The command's stdout is the user's (`monitor -- cmd > out.txt` keeps it clean).
        let mut err = std::io::stderr().lock();
        write_summary(&mut err, &summary, words)?;
    } else {
        write_summary(out, &summary, words)?;
    }
    Ok(match run.exit_code {
        Some(code) => ExitCode::Passed(u8::try_from(code.clamp(0, 255)).unwrap_or(1)),
        None if run.cancelled => ExitCode::Cancelled,
        None => ExitCode::Ok,
    })
}

fn write_summary(out: &mut dyn Write, s: &Summary, words: &Words) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(out, "{}", (words.summary)(s.duration_s, s.samples))?;
    for g in &s.gpus {
        writeln!(out, "  {}", (words.gpu_line)(g))?;
    }
    if let Some(c) = &s.command {
        writeln!(out, "  {}", (words.command_line)(c))?;
    }
    writeln!(out, "{}", words.verdict)?;
    for v in &s.verdicts {
        let mark = match v.severity {
            Severity::Problem => "✗",
            Severity::Note => "•",
            Severity::Ok => "✓",
        };
        writeln!(out, "  {mark} {}", v.evidence)?;
        writeln!(out, "    {}: {}", words.fix, v.advice)?;
    }
    Ok(())
}

/// The live view's terminal: raw mode and the alternate screen while it lives, the terminal as
/// it was once it is dropped (on q, on an error, and on a panic through ratatui's hook).
struct Screen {
    terminal: ratatui::DefaultTerminal,
    look: Look,
    words: &'static Words,
}

impl Screen {
    fn enter() -> std::io::Result<Self> {
        Ok(Self {
            terminal: ratatui::try_init()?,
            look: Look {
                color: false,
                interval_s: 1.0,
            },
            words: Words::of("en"),
        })
    }
}

impl Display for Screen {
    fn show(&mut self, _: &Sample, history: &History) -> std::io::Result<()> {
        let (look, words) = (self.look, self.words);
        self.terminal.draw(|f| {
            let area = f.area();
            view::render(area, f.buffer_mut(), history, words, look);
        })?;
        Ok(())
    }

    /// Waits up to `wait` for a key; true for q, Esc or Ctrl-C (raw mode turns Ctrl-C into a
    /// key, not a signal).
    fn wait(&mut self, wait: Duration, _: &AtomicBool) -> std::io::Result<bool> {
        use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
        let until = Instant::now() + wait;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if !event::poll(left)? {
                return Ok(false);
            }
            if let Event::Key(k) = event::read()? {
                if k.kind == KeyEventKind::Press
                    && (matches!(k.code, KeyCode::Char('q') | KeyCode::Esc)
                        || (k.code == KeyCode::Char('c')
                            && k.modifiers.contains(KeyModifiers::CONTROL)))
                {
                    return Ok(true);
                }
            }
            if left.is_zero() {
                return Ok(false);
            }
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        ratatui::restore();
    }
}
