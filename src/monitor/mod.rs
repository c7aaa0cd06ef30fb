//! `cudaup monitor`: watching the GPUs while they work, and saying why a run is slow. The guide
//! cudaup is built from has a monitoring chapter (nvidia-smi, dmon, the profilers) and a
//! troubleshooting chapter ("GPU-Util is low", "CUDA out of memory"); the tools users reach for
//! (nvidia-smi, nvtop, nvitop, gpustat, dcgmi) show the numbers but not the reason. This module
//! samples every GPU through a [`Source`] (NVML live, [`nvml::with_nvml`]), adds the watched
//! command's CPU use from `/proc` ([`procs`]), streams and records the samples ([`record`]),
//! draws the live view ([`view`]) and folds a run into a summary with verdicts ([`summary`]) and
//! a plot ([`plot`]). A recording replays through the same summary, so a fleet host's stream is
//! judged exactly as a live run.

pub mod nvml;
pub mod plot;
pub mod procs;
pub mod record;
pub mod sample;
pub mod summary;
pub mod view;
pub mod watch;
pub mod words;

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use sample::{GpuSample, Sample, SCHEMA_VERSION};

/// Why `monitor` could not watch.
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    /// No GPU to watch: no driver, no NVML, or NVML sees no GPU (exit 5, as `bench`).
    #[error("{0}")]
    NoGpu(String),
    /// NVML failed while watching.
    #[error("NVML: {0}")]
    Nvml(String),
    /// A recording given to `--replay` cannot be read (exit 2).
    #[error("--replay {path}: {message}", path = .path.display())]
    Replay {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line.
        message: String,
    },
    /// The command to watch could not be started.
    #[error("could not start `{command}`: {source}")]
    Spawn {
        /// The command as given.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// The live view or the stream could not be written (a closed terminal or pipe).
    #[error("showing the samples: {0}")]
    Display(std::io::Error),
    /// A `--csv` or `--plot` file could not be written.
    #[error("writing {path}: {source}", path = .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Where samples of every GPU come from: NVML on a live machine, a recording in a test.
pub trait Source {
    /// Every GPU now.
    fn sample(&mut self) -> Result<Vec<GpuSample>, MonitorError>;
}

/// Makes [`Sample`]s: a source's GPUs, the time, and the watched command's tree (its CPU use,
/// and which of the GPUs' processes are its own).
pub struct Sampler {
    start: Instant,
    tree: Option<procs::TreeCpu>,
}

impl Sampler {
    /// Starts the clock; `watched` is the command's pid, read through `proc_dir` (`/proc`).
    pub fn new(watched: Option<u32>, proc_dir: &Path) -> Self {
        Self {
            start: Instant::now(),
            tree: watched.map(|pid| procs::TreeCpu::new(proc_dir, pid)),
        }
    }

    /// One sample from `source`.
    pub fn sample(&mut self, source: &mut dyn Source) -> Result<Sample, MonitorError> {
        let mut gpus = source.sample()?;
        let command = self.tree.as_mut().map(|t| t.sample());
        if let Some(tree) = &self.tree {
            let pids = tree.current();
            for p in gpus.iter_mut().flat_map(|g| g.processes.iter_mut()) {
                p.watched = pids.contains(&p.pid);
            }
        }
        Ok(Sample {
            schema_version: SCHEMA_VERSION,
            t_ms: u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX),
            unix_ms: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            gpus,
            command,
        })
    }
}
