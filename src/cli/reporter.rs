//! The three faces of progress: indicatif bars on a terminal, plain lines otherwise, JSON lines
//! with `--json`. Only this file knows indicatif.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;
use std::time::Instant;

use indicatif::{HumanBytes, MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::world::progress::{Phase, Reporter};

/// Bars per file and one for the whole install.
pub struct Bars {
    multi: MultiProgress,
    overall: ProgressBar,
    bars: Mutex<HashMap<usize, ProgressBar>>,
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
        overall.set_prefix("total");
        Self {
            multi,
            overall,
            bars: Mutex::new(HashMap::new()),
        }
    }
}

impl Reporter for Bars {
    fn start(&self, id: usize, name: &str, total: Option<u64>) {
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
        bar.set_message("queued");
        self.bars.lock().expect("bars lock").insert(id, bar);
    }
    fn phase(&self, id: usize, phase: Phase) {
        if let Some(b) = self.bars.lock().expect("bars lock").get(&id) {
            b.set_message(phase.name());
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
            b.finish_with_message(outcome.to_owned());
        }
    }
    fn message(&self, text: &str) {
        let _ = self.multi.println(text);
    }
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
        match total {
            Some(t) => self.line(&format!("fetch  {name} ({})", HumanBytes(t))),
            None => self.line(&format!("fetch  {name}")),
        }
    }
    fn phase(&self, id: usize, phase: Phase) {
        if matches!(phase, Phase::Resuming | Phase::Unpacking) {
            if let Some((name, _, _)) = self.started.lock().expect("lock").get(&id) {
                self.line(&format!(
                    "{:<6} {name}",
                    &phase.name()[..phase.name().len().min(6)]
                ));
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
            let secs = t0.elapsed().as_secs_f64();
            let rate = if secs > 0.0 && bytes > 0 {
                format!(", {}/s", HumanBytes((bytes as f64 / secs) as u64))
            } else {
                String::new()
            };
            self.line(&format!("{outcome:<6} {name} in {secs:.1}s{rate}"));
        }
    }
    fn message(&self, text: &str) {
        self.line(&format!("note   {text}"));
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
