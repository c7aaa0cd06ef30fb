//! A deterministic, seeded mutation fuzzer: stable Rust has no `cargo fuzz`, and the property
//! checked needs no coverage feedback to be worth checking — any bytes into a parser of outside
//! input must give a value or an error, never a panic, a hang, or an allocation sized by the
//! input. Each input is a real document (the seed corpus) with a stack of random edits.
//!
//! Panics are caught per input and recorded; a watchdog thread ends the process (exit code 70)
//! when one input runs longer than the hang limit, after saving it; with an output directory the
//! input under test is written there first, so a crash that kills the process (a stack overflow)
//! leaves it behind too.

use std::cell::RefCell;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

/// The exit code of a process the watchdog ended.
pub const HANG_EXIT: i32 = 70;

/// One parser under test.
pub struct Target {
    /// Its name (`index_html`).
    pub name: &'static str,
    /// Real documents to start from.
    pub seeds: fn() -> Vec<Vec<u8>>,
    /// Tokens worth inserting (tags, magic numbers, keywords).
    pub dict: &'static [&'static [u8]],
    /// Runs the parser on one input, in `sandbox` (a directory of its own to write in, kept
    /// between inputs: removing files is slow on some disks, so a target overwrites or puts
    /// back what it changed).
    pub run: fn(&[u8], &Path),
    /// The longest input to make.
    pub max_len: usize,
}

/// How long a campaign runs.
#[derive(Debug, Clone, Copy)]
pub enum Budget {
    /// This many inputs.
    Runs(u64),
    /// Until this much time has passed.
    Time(Duration),
}

/// What a campaign saw.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    /// Inputs run.
    pub runs: u64,
    /// Inputs that panicked, and the first messages.
    pub panics: u64,
    /// The first few panic messages.
    pub messages: Vec<String>,
    /// How long the slowest input ran.
    pub slowest: Duration,
    /// The slowest input itself.
    pub slowest_input: Vec<u8>,
    /// Inputs saved (panics) under the output directory.
    pub saved: Vec<PathBuf>,
}

/// xorshift64*: small, fast, and the same sequence for the same seed everywhere.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (0 is replaced: xorshift never leaves 0).
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
}

const INTERESTING: [u64; 12] = [
    0,
    1,
    7,
    8,
    16,
    32,
    0x7f,
    0xffff,
    0x7fff_ffff,
    0xffff_ffff,
    0x7fff_ffff_ffff_ffff,
    u64::MAX,
];

/// One random edit of `data`; `other` is another corpus entry to splice from.
fn mutate_once(rng: &mut Rng, data: &mut Vec<u8>, other: &[u8], dict: &[&[u8]], max_len: usize) {
    let len = data.len();
    match rng.below(12) {
        0 if len > 0 => {
            let i = rng.below(len);
            data[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            data[i] = rng.next() as u8;
        }
        2 if len > 0 => {
            let i = rng.below(len);
            data[i] = *b"\0\xff\x7f\x80<>\"'()\n:;=#&{}[],"
                .get(rng.below(20))
                .unwrap_or(&0);
        }
        3 if len > 0 => {
            // A little-endian integer field set to an edge value.
            let v = INTERESTING[rng.below(INTERESTING.len())];
            let width = [2usize, 4, 8][rng.below(3)];
            let at = rng.below(len);
            for k in 0..width.min(len - at) {
                data[at + k] = (v >> (8 * k)) as u8;
            }
        }
        4 if len > 0 => {
            let at = rng.below(len);
            let n = 1 + rng.below((len - at).min(256));
            data.drain(at..at + n);
        }
        5 if len > 0 => {
            let at = rng.below(len);
            let n = 1 + rng.below((len - at).min(256));
            let chunk = data[at..at + n].to_vec();
            let to = rng.below(len + 1);
            data.splice(to..to, chunk);
        }
        6 | 7 if !dict.is_empty() => {
            let tok = dict[rng.below(dict.len())];
            let at = rng.below(len + 1);
            if rng.one_in(2) || at + tok.len() > len {
                data.splice(at..at, tok.iter().copied());
            } else {
                data[at..at + tok.len()].copy_from_slice(tok);
            }
        }
        8 if !other.is_empty() => {
            let at = rng.below(len + 1);
            let from = rng.below(other.len());
            data.truncate(at);
            data.extend_from_slice(&other[from..]);
        }
        9 if len > 0 => {
            // A short piece repeated many times: deep nesting, long runs.
            let at = rng.below(len);
            let n = 1 + rng.below((len - at).min(8));
            let most = if rng.one_in(8) { 50_000 } else { 500 };
            let times = 1 + rng.below(most);
            let chunk = data[at..at + n].repeat(times);
            let to = rng.below(len + 1);
            data.splice(to..to, chunk);
        }
        10 => {
            let at = rng.below(len + 1);
            data.truncate(at);
        }
        _ => {
            let at = rng.below(len + 1);
            let n = 1 + rng.below(16);
            let bytes: Vec<u8> = (0..n).map(|_| 0x20 + (rng.next() % 95) as u8).collect();
            data.splice(at..at, bytes);
        }
    }
    data.truncate(max_len);
}

/// A mutated copy of one corpus entry: one to eight edits.
pub fn mutate(rng: &mut Rng, corpus: &[Vec<u8>], dict: &[&[u8]], max_len: usize) -> Vec<u8> {
    let mut data = corpus[rng.below(corpus.len())].clone();
    let other = &corpus[rng.below(corpus.len())];
    for _ in 0..1 + rng.below(8) {
        mutate_once(rng, &mut data, other, dict, max_len);
    }
    data
}

thread_local! {
    /// Set while this thread runs a fuzz input: its panics are recorded, not printed.
    static CAUGHT: RefCell<Option<String>> = const { RefCell::new(None) };
    static FUZZING: RefCell<bool> = const { RefCell::new(false) };
}

/// Installs (once) a panic hook that keeps quiet on fuzzing threads and leaves every other
/// thread's panics (other tests) to the hook that was there.
fn quiet_panics_while_fuzzing() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if FUZZING.with(|f| *f.borrow()) {
                let at = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                let msg = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                // Assertion messages can carry whole inputs: the start says enough.
                let mut msg = format!("{at}: {msg}");
                if msg.len() > 400 {
                    let mut cut = 400;
                    while !msg.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    msg.truncate(cut);
                    msg.push('…');
                }
                CAUGHT.with(|c| *c.borrow_mut() = Some(msg));
            } else {
                previous(info);
            }
        }));
    });
}

fn millis(t: Instant, origin: Instant) -> u64 {
    t.duration_since(origin).as_millis() as u64 + 1
}

/// Runs `target` on mutations of its seeds until `budget` is spent. `out`: where inputs that
/// panic or hang are saved (and the input under test, `current`). `hang` is the limit for one
/// input.
pub fn campaign(
    target: &Target,
    seed: u64,
    budget: Budget,
    out: Option<&Path>,
    hang: Duration,
) -> Stats {
    quiet_panics_while_fuzzing();
    let mut rng = Rng::new(seed ^ fnv(target.name));
    let mut corpus = (target.seeds)();
    assert!(!corpus.is_empty(), "{}: no seeds", target.name);
    let seeds = corpus.len();
    let sandbox = tempfile::Builder::new()
        .prefix(&format!("fuzz-{}-", target.name))
        .tempdir()
        .expect("a sandbox directory");
    let origin = Instant::now();
    // The watchdog: `started` is when the running input began (0: none running).
    let started = Arc::new(AtomicU64::new(0));
    let current: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
    let done = Arc::new(AtomicU64::new(0));
    // Counts the watchdog can report when it ends the process.
    let counts = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
    let watchdog = {
        let (started, current, done) = (started.clone(), current.clone(), done.clone());
        let counts = counts.clone();
        let out = out.map(Path::to_path_buf);
        let name = target.name;
        std::thread::spawn(move || {
            while done.load(Ordering::Relaxed) == 0 {
                std::thread::sleep(Duration::from_millis(50));
                let s = started.load(Ordering::Relaxed);
                if s != 0 && millis(Instant::now(), origin) - s > hang.as_millis() as u64 {
                    let input = current.lock().map(|c| c.clone()).unwrap_or_default();
                    let saved = out.as_ref().map(|d| save(d, name, "hang", &input));
                    // Not a panic of this thread (that would only end the watchdog): the
                    // whole process ends, and the script counts a hang.
                    #[allow(clippy::print_stderr)]
                    {
                        eprintln!(
                            "fuzz {name}: HANG: one input ran over {:?} ({} bytes; saved as {:?})",
                            hang,
                            input.len(),
                            saved
                        );
                    }
                    #[allow(clippy::print_stdout)]
                    {
                        println!(
                            "FUZZ target={name} runs={} panics={} hang=1 peak_rss_kib={}",
                            counts.0.load(Ordering::Relaxed) + 1,
                            counts.1.load(Ordering::Relaxed),
                            peak_rss_kib().unwrap_or(0)
                        );
                    }
                    std::process::exit(HANG_EXIT);
                }
            }
        })
    };
    let deadline = match budget {
        Budget::Time(d) => Some(origin + d),
        Budget::Runs(_) => None,
    };
    let mut stats = Stats::default();
    // Opened once: rewriting it costs two system calls per input, no path lookup.
    let mut current_file = out.and_then(|d| {
        fs_err::create_dir_all(d).ok()?;
        fs_err::File::create(d.join(format!("{}.current", target.name)))
            .ok()
            .map(|f| f.into_parts().0)
    });
    loop {
        match budget {
            Budget::Runs(n) if stats.runs >= n => break,
            Budget::Time(_) if deadline.is_some_and(|d| Instant::now() >= d) => break,
            _ => {}
        }
        // The seeds themselves first, then mutations.
        let input = if (stats.runs as usize) < seeds {
            corpus[stats.runs as usize].clone()
        } else {
            mutate(&mut rng, &corpus, target.dict, target.max_len)
        };
        if let Some(f) = current_file.as_mut() {
            let _ = f.set_len(0);
            let _ = write_at_start(f, &input);
        }
        if let Ok(mut c) = current.lock() {
            c.clone_from(&input);
        }
        let t0 = Instant::now();
        started.store(millis(t0, origin), Ordering::Relaxed);
        FUZZING.with(|f| *f.borrow_mut() = true);
        let result =
            std::panic::catch_unwind(AssertUnwindSafe(|| (target.run)(&input, sandbox.path())));
        FUZZING.with(|f| *f.borrow_mut() = false);
        started.store(0, Ordering::Relaxed);
        if t0.elapsed() > stats.slowest {
            stats.slowest = t0.elapsed();
            stats.slowest_input.clone_from(&input);
        }
        stats.runs += 1;
        counts.0.store(stats.runs, Ordering::Relaxed);
        if result.is_err() {
            stats.panics += 1;
            counts.1.store(stats.panics, Ordering::Relaxed);
            let msg = CAUGHT.with(|c| c.borrow_mut().take()).unwrap_or_default();
            if stats.messages.len() < 5 {
                stats.messages.push(msg);
            }
            if let Some(d) = out {
                stats.saved.push(save(d, target.name, "panic", &input));
            }
        } else if corpus.len() < 512 && rng.one_in(16) {
            // Some survivors breed: edits stack up over generations.
            corpus.push(input);
        }
    }
    done.store(1, Ordering::Relaxed);
    let _ = watchdog.join();
    drop(current_file);
    if let Some(d) = out {
        let _ = fs_err::remove_file(d.join(format!("{}.current", target.name)));
    }
    stats
}

#[cfg(unix)]
fn write_at_start(f: &mut std::fs::File, input: &[u8]) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(f, input, 0)
}

#[cfg(not(unix))]
fn write_at_start(f: &mut std::fs::File, input: &[u8]) -> std::io::Result<()> {
    use std::io::{Seek, Write};
    f.seek(std::io::SeekFrom::Start(0))?;
    f.write_all(input)
}

fn save(dir: &Path, target: &str, kind: &str, input: &[u8]) -> PathBuf {
    let path = dir.join(format!("{target}-{kind}-{:016x}", fnv_bytes(input)));
    let _ = fs_err::create_dir_all(dir).and_then(|()| fs_err::write(&path, input));
    path
}

fn fnv(s: &str) -> u64 {
    fnv_bytes(s.as_bytes())
}

fn fnv_bytes(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, c| {
        (h ^ u64::from(*c)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// This process's peak resident set size, in KiB (Linux's `VmHWM`).
pub fn peak_rss_kib() -> Option<u64> {
    let status = fs_err::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_makes_the_same_inputs() {
        let corpus = vec![b"<a href=\"x\">x</a>".to_vec(), b"{\"files\": []}".to_vec()];
        let a: Vec<Vec<u8>> = {
            let mut r = Rng::new(7);
            (0..50)
                .map(|_| mutate(&mut r, &corpus, &[b"<a "], 4096))
                .collect()
        };
        let mut r = Rng::new(7);
        let b: Vec<Vec<u8>> = (0..50)
            .map(|_| mutate(&mut r, &corpus, &[b"<a "], 4096))
            .collect();
        assert_eq!(a, b);
        assert!(a.iter().all(|x| x.len() <= 4096));
        assert!(a.iter().any(|x| !corpus.contains(x)));
    }

    #[test]
    fn a_panicking_target_is_counted_and_its_input_saved() {
        fn boom(input: &[u8], _: &Path) {
            assert!(!input.contains(&b'!'), "found a bang");
        }
        let t = Target {
            name: "selftest",
            seeds: || vec![b"abc".to_vec()],
            dict: &[b"!"],
            run: boom,
            max_len: 64,
        };
        let out = tempfile::tempdir().unwrap();
        let s = campaign(
            &t,
            1,
            Budget::Runs(300),
            Some(out.path()),
            Duration::from_secs(10),
        );
        assert_eq!(s.runs, 300);
        assert!(s.panics > 0, "{s:?}");
        assert!(s.messages[0].contains("found a bang"), "{:?}", s.messages);
        assert!(s
            .saved
            .iter()
            .all(|p| fs_err::read(p).unwrap().contains(&b'!')));
    }
}
