//! The three faces of progress: indicatif bars on a terminal, plain lines otherwise, JSON lines
//! with `--json`. Only this file knows indicatif.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;
use std::time::Instant;

use indicatif::{HumanBytes, MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::i18n::report::{pad, progress_words};
use crate::world::progress::{Phase, Reporter};

/// The progress display a step asks for: JSON lines with `--json`, bars on a terminal, nothing
/// with `--quiet` (the framework's installer) or plain lines on stderr.
pub fn for_progress(
    kind: crate::install::run::Progress,
    json: bool,
    tty: bool,
    quiet: bool,
) -> std::sync::Arc<dyn Reporter> {
    use crate::install::run::Progress;
    use std::sync::Arc;
    match kind {
        Progress::Download { .. } if json => Arc::new(JsonLines::new(Box::new(std::io::stderr()))),
        Progress::Download { total } if tty && !quiet => Arc::new(Bars::new(total)),
        Progress::Framework if quiet && !json => Arc::new(crate::world::progress::Silent),
        Progress::Framework if json => Arc::new(JsonLines::new(Box::new(std::io::stderr()))),
        Progress::Framework if tty => Arc::new(Bars::growing()),
        Progress::Download { .. } | Progress::Framework => {
            Arc::new(Lines::new(Box::new(std::io::stderr())))
        }
    }
}

/// Bars per file and one for the whole install.
pub struct Bars {
    multi: MultiProgress,
    overall: ProgressBar,
    bars: Mutex<HashMap<usize, ProgressBar>>,
    /// The total is not known up front (pip's downloads): each task adds its size to it.
    grow: bool,
}

impl Bars {
    /// Bars on stderr; `total` is the sum of all download sizes when known.
    pub fn new(total: u64) -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let overall = multi.add(ProgressBar::new(total));
        overall.set_style(
            ProgressStyle::with_template("{prefix:>12.bold} [{bar:30.green}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        overall.set_prefix(progress_words().total);
        Self {
            multi,
            overall,
            bars: Mutex::new(HashMap::new()),
            grow: false,
        }
    }

    /// Bars whose total grows as tasks start with their sizes (pip names each download's size
    /// only when it starts).
    pub fn growing() -> Self {
        let mut bars = Self::new(0);
        bars.grow = true;
        bars
    }
}

impl Reporter for Bars {
    fn start(&self, id: usize, name: &str, total: Option<u64>) {
        if self.grow {
            self.overall.inc_length(total.unwrap_or(0));
        }
        let bar = self
            .multi
            .insert_before(&self.overall, ProgressBar::new(total.unwrap_or(0)));
        bar.set_style(
            ProgressStyle::with_template(
                "{msg:>12} {prefix:<40!} [{bar:20.cyan}] {bytes}/{total_bytes} {bytes_per_sec}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        bar.set_prefix(name.to_owned());
        bar.set_message(progress_words().queued);
        self.bars.lock().expect("bars lock").insert(id, bar);
    }
    fn phase(&self, id: usize, phase: Phase) {
        if let Some(b) = self.bars.lock().expect("bars lock").get(&id) {
            b.set_message(progress_words().phase(phase));
            if matches!(
                phase,
                Phase::Downloading | Phase::Resuming | Phase::Verifying
            ) {
                b.set_position(0);
            }
        }
    }
    fn advance(&self, id: usize, bytes: u64) {
        if let Some(b) = self.bars.lock().expect("bars lock").get(&id) {
            b.inc(bytes);
        }
        self.overall.inc(bytes);
    }
    fn finish(&self, id: usize, outcome: &str) {
        if let Some(b) = self.bars.lock().expect("bars lock").remove(&id) {
            if ended_well(outcome) {
                // What the task did not report byte by byte (a pip older than 24.1 prints no
                // counters; a cached file is not read again) still counts towards the total.
                let rest = b.length().unwrap_or(0).saturating_sub(b.position());
                self.overall.inc(rest);
                b.finish_with_message(progress_words().outcome(outcome));
            } else {
                // indicatif's finish draws a bar full (and its rate from that jump): a stopped
                // or failed task keeps the bar where its bytes stood.
                b.abandon_with_message(if cancelled(outcome) {
                    progress_words().outcome("stopped")
                } else {
                    progress_words().say(outcome)
                });
            }
        }
    }
    fn message(&self, text: &str) {
        let _ = self.multi.println(progress_words().say(text));
    }
}

/// Whether a task's outcome is a success (`done`, `cached`), as opposed to a failure.
fn ended_well(outcome: &str) -> bool {
    !outcome.starts_with("failed") && !cancelled(outcome)
}

/// Whether a task ended because of Ctrl-C. Every task then ends so: the command says it once,
/// with how to resume, instead of one line per task.
fn cancelled(outcome: &str) -> bool {
    matches!(outcome, "failed: cancelled" | "cancelled")
}

impl Drop for Bars {
    fn drop(&mut self) {
        self.overall.finish_and_clear();
    }
}

/// One line per start and finish, for logs and pipes.
pub struct Lines {
    out: Mutex<Box<dyn Write + Send>>,
    started: Mutex<HashMap<usize, (String, Instant, u64)>>,
}

impl Lines {
    /// Lines to `out` (stderr in the binary).
    pub fn new(out: Box<dyn Write + Send>) -> Self {
        Self {
            out: Mutex::new(out),
            started: Mutex::new(HashMap::new()),
        }
    }
    fn line(&self, text: &str) {
        let mut o = self.out.lock().expect("output lock");
        let _ = writeln!(o, "{text}");
    }
}

impl Reporter for Lines {
    fn start(&self, id: usize, name: &str, total: Option<u64>) {
        self.started
            .lock()
            .expect("lock")
            .insert(id, (name.to_owned(), Instant::now(), 0));
        let fetch = pad(progress_words().fetch, 6);
        match total {
            Some(t) => self.line(&format!("{fetch} {name} ({})", HumanBytes(t))),
            None => self.line(&format!("{fetch} {name}")),
        }
    }
    fn phase(&self, id: usize, phase: Phase) {
        if matches!(phase, Phase::Resuming | Phase::Unpacking) {
            if let Some((name, _, _)) = self.started.lock().expect("lock").get(&id) {
                let words = progress_words();
                let word = if std::ptr::eq(words, &crate::cli::i18n::report::EN) {
                    // `resumi`, `unpack`: the plain lines keep their six-column verbs.
                    phase.name()[..phase.name().len().min(6)].to_owned()
                } else {
                    words.phase(phase).to_owned()
                };
                self.line(&format!("{} {name}", pad(&word, 6)));
            }
        }
    }
    fn advance(&self, id: usize, bytes: u64) {
        if let Some(s) = self.started.lock().expect("lock").get_mut(&id) {
            s.2 += bytes;
        }
    }
    fn finish(&self, id: usize, outcome: &str) {
        if let Some((name, t0, bytes)) = self.started.lock().expect("lock").remove(&id) {
            if cancelled(outcome) {
                return;
            }
            let secs = t0.elapsed().as_secs_f64();
            let rate = if secs > 0.0 && bytes > 0 {
                format!(", {}/s", HumanBytes((bytes as f64 / secs) as u64))
            } else {
                String::new()
            };
            let words = progress_words();
            let outcome = pad(&words.outcome(outcome), 6);
            self.line(&format!("{outcome} {name} {}{rate}", (words.took)(secs)));
        }
    }
    fn message(&self, text: &str) {
        let words = progress_words();
        self.line(&format!(
            "{} {}",
            pad(words.progress_note, 6),
            words.say(text)
        ));
    }
}

/// JSON lines on stderr: `{"event":"start","id":0,"name":"…","total":123}` and so on, so a
/// script can follow along while stdout carries the final report.
pub struct JsonLines {
    out: Mutex<Box<dyn Write + Send>>,
    last: Mutex<HashMap<usize, (u64, Instant)>>,
}

impl JsonLines {
    /// JSON lines to `out`.
    pub fn new(out: Box<dyn Write + Send>) -> Self {
        Self {
            out: Mutex::new(out),
            last: Mutex::new(HashMap::new()),
        }
    }
    fn emit(&self, v: serde_json::Value) {
        let mut o = self.out.lock().expect("output lock");
        let _ = writeln!(o, "{v}");
    }
}

impl Reporter for JsonLines {
    fn start(&self, id: usize, name: &str, total: Option<u64>) {
        self.last
            .lock()
            .expect("lock")
            .insert(id, (0, Instant::now()));
        self.emit(serde_json::json!({"event": "start", "id": id, "name": name, "total": total}));
    }
    fn phase(&self, id: usize, phase: Phase) {
        self.emit(serde_json::json!({"event": "phase", "id": id, "phase": phase.name()}));
    }
    fn advance(&self, id: usize, bytes: u64) {
        // At most a few lines per second per task.
        let mut last = self.last.lock().expect("lock");
        let e = last.entry(id).or_insert((0, Instant::now()));
        e.0 += bytes;
        if e.1.elapsed().as_millis() >= 250 {
            e.1 = Instant::now();
            let done = e.0;
            drop(last);
            self.emit(serde_json::json!({"event": "progress", "id": id, "bytes": done}));
        }
    }
    fn finish(&self, id: usize, outcome: &str) {
        let bytes = self
            .last
            .lock()
            .expect("lock")
            .remove(&id)
            .map_or(0, |e| e.0);
        self.emit(
            serde_json::json!({"event": "finish", "id": id, "outcome": outcome, "bytes": bytes}),
        );
    }
    fn message(&self, text: &str) {
        self.emit(serde_json::json!({"event": "message", "text": text}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Issue 27, findings 5 and 8: after Ctrl-C the bars stay where their bytes stood
    /// (indicatif's finish would draw them full, at an absurd rate), and the plain lines say
    /// nothing per task: the command's one "cancelled" line says it. A download that ends well
    /// moves the total by what it did not report (pip before 24.1 has no counters).
    #[test]
    fn a_cancelled_task_keeps_its_bar_and_prints_no_line() {
        let bars = Bars::new(300);
        bars.multi.set_draw_target(ProgressDrawTarget::hidden());
        bars.start(0, "cudnn", Some(100));
        bars.start(1, "cublas", Some(200));
        let (a, b) = {
            let map = bars.bars.lock().unwrap();
            (map[&0].clone(), map[&1].clone())
        };
        bars.advance(0, 100);
        bars.advance(1, 40);
        bars.finish(0, "done");
        bars.finish(1, "failed: cancelled");
        assert_eq!(a.position(), 100);
        assert_eq!(b.position(), 40, "frozen where it stood, not drawn full");
        assert_eq!(b.message(), "stopped");
        assert_eq!(bars.overall.position(), 140);

        // pip without progress counters: each finished download still moves the total.
        let pip = Bars::growing();
        pip.multi.set_draw_target(ProgressDrawTarget::hidden());
        pip.start(0, "torch", Some(1000));
        pip.start(1, "nvidia-cublas", Some(500));
        pip.advance(1, 100);
        pip.finish(0, "downloaded");
        assert_eq!(pip.overall.position(), 1100);
        pip.finish(1, "downloaded");
        assert_eq!(pip.overall.position(), 1500);
        assert_eq!(pip.overall.length(), Some(1500));

        let out = Shared::default();
        let lines = Lines::new(Box::new(out.clone()));
        lines.start(0, "cudnn", Some(100));
        lines.start(1, "cublas", Some(200));
        lines.finish(0, "done");
        lines.finish(1, "failed: cancelled");
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert!(text.contains("done   cudnn"), "{text}");
        assert!(!text.contains("cancelled"), "{text}");
    }
}
