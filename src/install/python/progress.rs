//! pip's and uv's output, read line by line: every line goes to the log, and what it says about
//! progress goes to the [`Reporter`] as packages and bytes — a task per download
//! (`Downloading torch-….whl (899.7 MB)`, then pip's `--progress-bar raw` counters where pip has
//! them, 24.1 and newer), a note per phase — never the raw lines, and a retry only once per host.
//! On failure, [`PipLines::tail`] gives the last lines that say something (no counters, no
//! repeated retries).

use std::collections::{HashSet, VecDeque};

use crate::world::progress::{Phase, Reporter};

const TAIL: usize = 15;

/// Reads one pip or uv run.
pub struct PipLines<'a> {
    reporter: &'a dyn Reporter,
    next_id: usize,
    /// The download in progress: its id and the bytes reported so far.
    active: Option<(usize, u64)>,
    retried: HashSet<String>,
    tail: VecDeque<String>,
    /// Packages downloaded (or taken from pip's cache), and their bytes.
    pub downloads: usize,
    /// Bytes of those downloads, as pip states their sizes.
    pub bytes: u64,
}

impl<'a> PipLines<'a> {
    /// A reader reporting to `reporter`; task ids start at `first_id`.
    pub fn new(reporter: &'a dyn Reporter, first_id: usize) -> Self {
        Self {
            reporter,
            next_id: first_id,
            active: None,
            retried: HashSet::new(),
            tail: VecDeque::new(),
            downloads: 0,
            bytes: 0,
        }
    }

    /// The next task id free after this run.
    pub fn next_id(&self) -> usize {
        self.next_id
    }

    fn end_active(&mut self, outcome: &str) {
        if let Some((id, _)) = self.active.take() {
            self.reporter.finish(id, outcome);
        }
    }

    fn start(&mut self, name: &str, size: Option<u64>) -> usize {
        self.end_active("downloaded");
        let id = self.next_id;
        self.next_id += 1;
        self.downloads += 1;
        self.bytes += size.unwrap_or(0);
        self.reporter.start(id, name, size);
        id
    }

    /// Takes one line of output.
    pub fn line(&mut self, raw: &str) {
        let line = raw.trim();
        if line.is_empty() {
            return;
        }
        if let Some((done, _total)) = raw_progress(line) {
            if let Some((id, seen)) = &mut self.active {
                if done > *seen {
                    self.reporter.advance(*id, done - *seen);
                    *seen = done;
                }
            }
            return;
        }
        if let Some(host) = retry_host(line) {
            if self.retried.insert(host.clone()) {
                self.reporter.message(&format!(
                    "{} is retrying {host} ({}); the log has every attempt",
                    installer(line),
                    retry_reason(line)
                ));
            }
            self.remember(line);
            return;
        }
        self.remember(line);
        if let Some((name, size)) = download_line(line) {
            let id = self.start(&name, size);
            self.reporter.phase(id, Phase::Downloading);
            self.active = Some((id, 0));
        } else if let Some((name, size)) = line.strip_prefix("Using cached ").map(split_size) {
            let id = self.start(&name, size);
            self.reporter.finish(id, "cached");
        } else if let Some(name) = line.strip_prefix("Downloaded ") {
            // uv, after its `Downloading torch (846.8MiB)`.
            if self.active.is_some() {
                self.end_active("downloaded");
            } else {
                let _ = name;
            }
        } else if let Some(list) = line.strip_prefix("Installing collected packages:") {
            self.end_active("downloaded");
            let n = list.split(',').filter(|p| !p.trim().is_empty()).count();
            self.reporter
                .message(&format!("installing {n} package(s) into the venv"));
        } else if let Some(list) = line.strip_prefix("Successfully installed ") {
            self.end_active("downloaded");
            self.reporter.message(&format!(
                "installed {} package(s)",
                list.split_whitespace().count()
            ));
        } else if line.starts_with("Successfully downloaded ") || line.starts_with("Saved ") {
            self.end_active("downloaded");
        } else if ["Resolved ", "Prepared ", "Installed ", "Uninstalled "]
            .iter()
            .any(|p| line.starts_with(p))
            && line.contains(" package")
        {
            // uv's summaries: `Resolved 25 packages in 1.2s`.
            self.end_active("downloaded");
            self.reporter.message(line);
        }
    }

    fn remember(&mut self, line: &str) {
        if self.tail.len() == TAIL {
            self.tail.pop_front();
        }
        self.tail.push_back(line.to_owned());
    }

    /// Ends the run (a download still open is finished).
    pub fn finish(&mut self, ok: bool) {
        self.end_active(if ok { "downloaded" } else { "stopped" });
    }

    /// The last lines worth showing when the run failed: pip's `ERROR:` lines and what led to
    /// them, without progress counters or repeated retries.
    pub fn tail(&self) -> String {
        self.tail.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

fn installer(line: &str) -> &'static str {
    if line.starts_with("warning:") || line.contains("uv") {
        "uv"
    } else {
        "pip"
    }
}

/// `Progress 10240 of 8239447` (pip 24.1+, `--progress-bar raw`; newer pips add ` bytes` and a
/// task prefix).
fn raw_progress(line: &str) -> Option<(u64, Option<u64>)> {
    let at = line.find("Progress ")?;
    let mut words = line[at + "Progress ".len()..].split_whitespace();
    let done = words.next()?.parse().ok()?;
    if words.next()? != "of" {
        return None;
    }
    let total = words.next().and_then(|t| t.parse().ok());
    Some((done, total))
}

/// pip's `WARNING: Retrying (Retry(total=4, …)) after connection broken by '…': /simple/torch/`
/// names no host in its tail; the host is inside the urllib3 message (`host='pypi.org'`) or the
/// URL. uv says `Request failed after 3 retries` / `error sending request for url (…)`.
fn retry_host(line: &str) -> Option<String> {
    let retrying = line.starts_with("WARNING: Retrying (")
        || (line.starts_with("warning:") && line.contains("retr"));
    if !retrying {
        return None;
    }
    if let Some(at) = line.find("host='") {
        let rest = &line[at + 6..];
        return rest.split('\'').next().map(str::to_owned);
    }
    if let Some(at) = line.find("Connection to ") {
        let rest = &line[at + "Connection to ".len()..];
        return rest.split(' ').next().map(str::to_owned);
    }
    for scheme in ["https://", "http://"] {
        if let Some(at) = line.find(scheme) {
            let rest = &line[at + scheme.len()..];
            return rest.split(['/', ')', '\'', ' ']).next().map(str::to_owned);
        }
    }
    Some("the index".to_owned())
}

fn retry_reason(line: &str) -> &'static str {
    let l = line.to_ascii_lowercase();
    if l.contains("connection refused") {
        "connection refused"
    } else if l.contains("timed out") || l.contains("timeout") {
        "timed out"
    } else if l.contains("name or service not known")
        || l.contains("temporary failure in name resolution")
        || l.contains("nodename nor servname")
        || l.contains("failed to resolve")
    {
        "the host name does not resolve"
    } else if l.contains("ssl") || l.contains("certificate") {
        "TLS failed"
    } else if l.contains("reset") {
        "connection reset"
    } else {
        "the connection broke"
    }
}

/// `Downloading torch-2.15.0-….whl (899.7 MB)` (pip; older pips print the URL) or
/// `Downloading torch (846.8MiB)` (uv).
fn download_line(line: &str) -> Option<(String, Option<u64>)> {
    let rest = line.strip_prefix("Downloading ")?;
    let (name, size) = split_size(rest);
    // pip's links: keep the file name.
    let name = name.rsplit('/').next().unwrap_or(&name).to_owned();
    Some((name, size))
}

/// `name (12.3 MB)` → (`name`, bytes).
fn split_size(rest: &str) -> (String, Option<u64>) {
    match rest.rfind(" (") {
        Some(at) if rest.ends_with(')') => (
            rest[..at].trim().to_owned(),
            parse_size(&rest[at + 2..rest.len() - 1]),
        ),
        _ => (rest.trim().to_owned(), None),
    }
}

/// `899.7 MB`, `12 kB`, `345 bytes` (pip, SI units) or `846.8MiB` (uv, binary units).
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (num, unit) = text.split_at(split);
    let num: f64 = num.parse().ok()?;
    let mult = match unit.trim() {
        "" | "B" | "bytes" | "byte" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some((num * mult) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Record(Mutex<Vec<String>>);

    impl Reporter for Record {
        fn start(&self, id: usize, name: &str, total: Option<u64>) {
            self.0
                .lock()
                .unwrap()
                .push(format!("start {id} {name} {total:?}"));
        }
        fn phase(&self, id: usize, phase: Phase) {
            self.0
                .lock()
                .unwrap()
                .push(format!("phase {id} {}", phase.name()));
        }
        fn advance(&self, id: usize, bytes: u64) {
            self.0.lock().unwrap().push(format!("advance {id} {bytes}"));
        }
        fn finish(&self, id: usize, outcome: &str) {
            self.0
                .lock()
                .unwrap()
                .push(format!("finish {id} {outcome}"));
        }
        fn message(&self, text: &str) {
            self.0.lock().unwrap().push(format!("message {text}"));
        }
    }

    #[test]
    fn pip_downloads_become_tasks_with_bytes() {
        let r = Record::default();
        let mut p = PipLines::new(&r, 0);
        for l in [
            "Looking in indexes: https://pypi.org/simple",
            "Collecting torch==2.15.0",
            "  Downloading torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl (899.7 MB)",
            "Progress 0 of 899700000",
            "Progress 1000 of 899700000 bytes",
            "Progress 899700000 of 899700000",
            "Collecting filelock",
            "  Using cached filelock-3.20.0-py3-none-any.whl (16 kB)",
            "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f>: Failed to establish a new connection: [Errno 111] Connection refused')': /simple/sympy/",
            "WARNING: Retrying (Retry(total=3, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f>: Failed to establish a new connection: [Errno 111] Connection refused')': /simple/sympy/",
            "Installing collected packages: filelock, torch",
            "Successfully installed filelock-3.20.0 torch-2.15.0",
        ] {
            p.line(l);
        }
        p.finish(true);
        let events = r.0.lock().unwrap().clone();
        assert_eq!(
            events,
            [
                "start 0 torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl Some(899700000)",
                "phase 0 downloading",
                "advance 0 1000",
                "advance 0 899699000",
                "finish 0 downloaded",
                "start 1 filelock-3.20.0-py3-none-any.whl Some(16000)",
                "finish 1 cached",
                "message pip is retrying the index (connection refused); the log has every attempt",
                "message installing 2 package(s) into the venv",
                "message installed 2 package(s)",
            ]
        );
        assert_eq!((p.downloads, p.bytes), (2, 899_716_000));
        // The tail keeps the retry once per line but never the counters.
        assert!(!p.tail().contains("Progress"));
        assert!(p.tail().contains("Successfully installed"));
    }

    #[test]
    fn uv_summaries_and_sizes() {
        let r = Record::default();
        let mut p = PipLines::new(&r, 5);
        for l in [
            "Using Python 3.11.2 environment at: /v",
            "Resolved 3 packages in 12ms",
            "Downloading torch (846.8MiB)",
            " Downloaded torch",
            "Prepared 3 packages in 4.1s",
            "Installed 3 packages in 20ms",
            " + torch==2.15.0",
        ] {
            p.line(l);
        }
        let events = r.0.lock().unwrap().clone();
        assert_eq!(events[0], "message Resolved 3 packages in 12ms");
        assert_eq!(events[1], "start 5 torch Some(887934156)");
        assert_eq!(events[3], "finish 5 downloaded");
        assert_eq!(events[4], "message Prepared 3 packages in 4.1s");
        assert_eq!(p.next_id(), 6);
        assert_eq!(
            retry_host("WARNING: Retrying (Retry(total=4)) after connection broken by 'ConnectTimeoutError(<x>, 'Connection to download.pytorch.org timed out. (connect timeout=15)')': /whl/cu132/torch/"),
            Some("download.pytorch.org".into())
        );
        assert_eq!(
            retry_host("WARNING: Retrying (Retry(total=4)) after connection broken by 'NameResolutionError(\"HTTPSConnection(host='pypi.org', port=443): Failed to resolve 'pypi.org'\")': /simple/torch/"),
            Some("pypi.org".into())
        );
    }
}
