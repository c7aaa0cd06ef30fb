//! Progress of long work, behind a trait: the library reports, the CLI decides how it looks
//! (indicatif bars on a terminal, plain lines otherwise, JSON lines with `--json`).

/// What a piece of work is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Bytes are arriving (and, for streamable archives, being unpacked as they arrive).
    Downloading,
    /// Resuming an interrupted download.
    Resuming,
    /// Checking a file already in the cache or on a local mirror.
    Verifying,
    /// Unpacking an archive from a file.
    Unpacking,
    /// Linking unpacked files into the staging prefix.
    Installing,
}

impl Phase {
    /// Lower-case name used in plain and JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Downloading => "downloading",
            Phase::Resuming => "resuming",
            Phase::Verifying => "verifying",
            Phase::Unpacking => "unpacking",
            Phase::Installing => "installing",
        }
    }
}

/// Receives progress events. Implementations must be cheap: `advance` is called per buffer.
pub trait Reporter: Send + Sync {
    /// A task (`id`) starts; `total` bytes when known.
    fn start(&self, id: usize, name: &str, total: Option<u64>);
    /// The task entered a phase.
    fn phase(&self, id: usize, phase: Phase);
    /// `bytes` more were processed.
    fn advance(&self, id: usize, bytes: u64);
    /// The task ended; `outcome` is a short phrase (`done`, `cached`, `failed: …`).
    fn finish(&self, id: usize, outcome: &str);
    /// A free-standing message (a retry, a warning).
    fn message(&self, text: &str);
}

/// Reports nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Reporter for Silent {
    fn start(&self, _: usize, _: &str, _: Option<u64>) {}
    fn phase(&self, _: usize, _: Phase) {}
    fn advance(&self, _: usize, _: u64) {}
    fn finish(&self, _: usize, _: &str) {}
    fn message(&self, _: &str) {}
}
