//! The measurements, as the Python scripts in `python/` print them, and the runs that get them:
//! each script is written to a private temporary directory and run with the venv's python
//! through the [`Runner`], its progress lines handed on as they appear.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::world::runner::Runner;

/// The scripts, embedded: file name and text.
pub const SCRIPTS: &[(&str, &str)] = &[
    ("common.py", include_str!("python/common.py")),
    ("probe.py", include_str!("python/probe.py")),
    ("train.py", include_str!("python/train.py")),
    ("loader.py", include_str!("python/loader.py")),
    ("ddp.py", include_str!("python/ddp.py")),
];

/// What `probe.py` reports: the venv's torch and the GPUs it sees.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Probe {
    /// The interpreter's version.
    pub python: Option<String>,
    /// CPUs this process may run on.
    pub cpu_count: Option<u32>,
    /// torch's version; `None`: torch does not import.
    pub torch: Option<String>,
    /// The CUDA torch was built for (`None`: a CPU build).
    pub cuda: Option<String>,
    /// torchvision's version (ResNet-50 comes from it).
    pub torchvision: Option<String>,
    /// Why torchvision does not import.
    pub torchvision_error: Option<String>,
    /// cuDNN as torch reports it (`91300`).
    pub cudnn: Option<u64>,
    /// `torch.cuda.is_available()`.
    #[serde(default)]
    pub cuda_available: bool,
    /// Why CUDA is unavailable, when torch says.
    pub cuda_error: Option<String>,
    /// NCCL's version in torch.
    pub nccl: Option<String>,
    /// The GPUs torch sees.
    #[serde(default)]
    pub devices: Vec<ProbeDevice>,
    /// Why torch does not import.
    pub error: Option<String>,
}

/// One GPU as torch sees it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct ProbeDevice {
    /// torch's index (PCI bus order: cudaup sets CUDA_DEVICE_ORDER).
    pub index: u32,
    /// Its name.
    pub name: String,
    /// Compute capability.
    pub capability: (u32, u32),
    /// Memory.
    pub memory_mib: u64,
    /// Streaming multiprocessors.
    pub multiprocessors: Option<u32>,
    /// NVML's UUID.
    pub uuid: Option<String>,
    /// PCI address (`00000000:18:00.0`).
    pub pci_bus_id: Option<String>,
}

/// NVML's view of one GPU over a stretch of the run (sampled every 100 ms).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Window {
    /// How many samples.
    pub samples: u32,
    /// Mean GPU utilisation (% of time a kernel ran).
    pub util_mean: Option<f64>,
    /// Lowest GPU utilisation.
    pub util_min: Option<f64>,
    /// Mean SM clock, MHz.
    pub sm_clock_mean: Option<f64>,
    /// Lowest SM clock, MHz.
    pub sm_clock_min: Option<f64>,
    /// Mean board power, W.
    pub power_mean_w: Option<f64>,
    /// Highest board power, W.
    pub power_max_w: Option<f64>,
    /// Highest temperature, °C.
    pub temp_max_c: Option<f64>,
    /// Samples that read the clock-event (throttle) reasons.
    #[serde(default)]
    pub reason_samples: u32,
    /// For each reason bit (NVML's `nvmlClocksEventReason*` value, as a decimal string), in how
    /// many samples it was set.
    #[serde(default)]
    pub reason_counts: BTreeMap<String, u32>,
    /// Most device memory in use (all processes), MiB.
    pub memory_used_max_mib: Option<f64>,
}

impl Window {
    /// The share of samples in which any of `bits` was set.
    pub fn share(&self, bits: u64) -> f64 {
        if self.reason_samples == 0 {
            return 0.0;
        }
        let hits: u32 = self
            .reason_counts
            .iter()
            .filter(|(k, _)| k.parse::<u64>().is_ok_and(|b| b & bits != 0))
            .map(|(_, n)| *n)
            .max()
            .unwrap_or(0);
        f64::from(hits) / f64::from(self.reason_samples)
    }
}

/// NVML facts that do not change during a run.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Static {
    /// Highest SM clock, MHz.
    pub max_sm_clock_mhz: Option<f64>,
    /// The power limit in force, W.
    pub power_limit_w: Option<f64>,
    /// The board's default power limit, W.
    pub default_power_limit_w: Option<f64>,
    /// The PCIe link.
    pub pcie: Option<Pcie>,
}

/// A PCIe link, now and at best.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Pcie {
    /// Generation now (it drops at idle).
    pub gen: Option<u32>,
    /// Lanes now.
    pub width: Option<u32>,
    /// Best generation of the link.
    pub max_gen: Option<u32>,
    /// Most lanes.
    pub max_width: Option<u32>,
}

/// Another process with memory on the GPU.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct OtherProcess {
    /// Its pid.
    pub pid: u32,
    /// Its name.
    pub name: String,
    /// Memory it holds, MiB.
    pub used_mib: Option<f64>,
}

/// One timed stretch of training or inference at one batch size.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Run {
    /// Images per step.
    pub batch: u32,
    /// Steps timed.
    pub iterations: u32,
    /// Wall seconds they took.
    pub seconds: f64,
    /// The throughput.
    pub images_per_s: f64,
    /// CPU seconds of the Python process per wall second (1.0: one core busy all the time).
    pub cpu_fraction: Option<f64>,
    /// Peak memory torch allocated, MiB.
    pub peak_mib: Option<f64>,
    /// NVML over the stretch.
    pub nvml: Option<Window>,
}

/// One way of training (precision and memory format) on one GPU.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct ConfigResult {
    /// `tf32`/`fp32`, `amp_bf16`/`amp_fp16`, `amp_bf16_cl`/`amp_fp16_cl`.
    pub name: String,
    /// Channels-last memory format.
    pub channels_last: bool,
    /// `fp32`, `bfloat16` or `float16`.
    pub dtype: String,
    /// Whether a GradScaler scaled the loss (fp16).
    #[serde(default)]
    pub grad_scaler: bool,
    /// Training at the reference batch.
    pub train: Option<Run>,
    /// Inference at the reference batch.
    pub infer: Option<Run>,
    /// Why it could not be measured.
    pub error: Option<String>,
}

impl ConfigResult {
    /// Whether this is a mixed-precision run.
    pub fn is_amp(&self) -> bool {
        self.name.starts_with("amp")
    }
}

/// One point of the throughput curve.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Point {
    /// Images per step.
    pub batch: u32,
    /// Training throughput.
    pub images_per_s: f64,
    /// Peak memory torch allocated, MiB.
    pub peak_mib: Option<f64>,
}

/// The batch sweep of one configuration: the curve and where memory ran out.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Sweep {
    /// The configuration.
    pub config: String,
    /// The batches that fitted, ascending.
    #[serde(default)]
    pub points: Vec<Point>,
    /// The largest batch that fitted.
    pub largest_fit: Option<u32>,
    /// The smallest batch that did not (`None`: none failed up to `cap`).
    pub smallest_oom: Option<u32>,
    /// Why it did not: `out of memory`, or the library error at that size.
    pub limit: Option<String>,
    /// The largest batch tried.
    pub cap: u32,
    /// The GPU's memory, MiB.
    pub total_mib: Option<f64>,
    /// Why the sweep stopped early.
    pub error: Option<String>,
}

/// What `train.py` reports for one GPU.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Train {
    /// torch's index.
    pub index: u32,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// Whether NVML answered.
    #[serde(default)]
    pub nvml: bool,
    /// NVML's fixed facts.
    #[serde(rename = "static")]
    pub static_: Option<Static>,
    /// Highest utilisation seen in one second before the bench touched the GPU.
    pub idle_util_before: Option<f64>,
    /// Other processes on the GPU (`None`: nvidia-smi did not answer).
    pub other_processes: Option<Vec<OtherProcess>>,
    /// Whether TF32 was allowed for the fp32 run.
    #[serde(default)]
    pub tf32: bool,
    /// Each configuration.
    #[serde(default)]
    pub configs: Vec<ConfigResult>,
    /// The batch sweeps.
    #[serde(default)]
    pub sweep: Vec<Sweep>,
    /// Smaller failures.
    #[serde(default)]
    pub errors: Vec<String>,
    /// Why nothing could be measured.
    pub error: Option<String>,
}

/// One worker count of the input-pipeline test.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct LoaderRun {
    /// DataLoader workers.
    pub workers: u32,
    /// Training throughput fed by them.
    pub images_per_s: f64,
    /// Batches timed.
    pub batches: u32,
    /// NVML meanwhile.
    pub nvml: Option<Window>,
}

/// The GPU-only ceiling of the input-pipeline test.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Ceiling {
    /// Throughput on batches already on the GPU.
    pub images_per_s: f64,
    /// NVML meanwhile.
    pub nvml: Option<Window>,
}

/// What `loader.py` reports.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Loader {
    /// The GPU used.
    #[serde(default)]
    pub index: u32,
    /// Images written.
    pub images: Option<u32>,
    /// Seconds writing them took.
    pub write_seconds: Option<f64>,
    /// Their size on disk.
    pub bytes: Option<u64>,
    /// Whether NVML answered.
    #[serde(default)]
    pub nvml: bool,
    /// The training configuration used.
    pub config: Option<String>,
    /// CPUs available.
    pub cpu_count: Option<u32>,
    /// The GPU-only ceiling.
    pub ceiling: Option<Ceiling>,
    /// Each worker count.
    #[serde(default)]
    pub runs: Vec<LoaderRun>,
    /// Worker counts that failed.
    #[serde(default)]
    pub errors: Vec<String>,
    /// Why nothing could be measured.
    pub error: Option<String>,
}

/// What `ddp.py` reports.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Ddp {
    /// Processes (one per GPU).
    #[serde(default)]
    pub world: u32,
    /// Images per GPU per step.
    #[serde(default)]
    pub batch_per_gpu: u32,
    /// `nccl`.
    pub backend: Option<String>,
    /// NCCL's version.
    pub nccl: Option<String>,
    /// NCCL_NVLS_ENABLE as the ranks saw it.
    pub nvls: Option<String>,
    /// The training configuration.
    pub config: Option<String>,
    /// Total throughput of all GPUs.
    pub images_per_s: Option<f64>,
    /// Each rank's own report.
    #[serde(default)]
    pub ranks: Vec<serde_json::Value>,
    /// What failed.
    pub error: Option<String>,
}

/// Why a script gave no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptFailed {
    /// The script.
    pub script: String,
    /// What happened, with the last lines it printed.
    pub message: String,
}

impl std::fmt::Display for ScriptFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.script, self.message)
    }
}

/// Writes the embedded scripts into `dir`.
pub fn write_scripts(dir: &Path) -> std::io::Result<()> {
    for (name, text) in SCRIPTS {
        fs_err::write(dir.join(name), text)?;
    }
    Ok(())
}

/// One progress line of a script: `{"event": "progress", "message": …}`.
#[derive(Debug, Deserialize)]
struct ProgressLine {
    event: String,
    #[serde(default)]
    message: String,
}

/// The venv's interpreter, the directory holding the scripts, and the environment they run in.
pub struct Interpreter<'a> {
    /// Runs every command.
    pub runner: &'a dyn Runner,
    /// The venv's python.
    pub python: PathBuf,
    /// Where [`write_scripts`] put the scripts.
    pub dir: PathBuf,
    /// Variables set for every script.
    pub env: Vec<(String, String)>,
}

impl Interpreter<'_> {
    /// Runs `script` with the JSON `args`, handing each progress message to `progress`, and
    /// parses its result line.
    pub fn run<T: for<'de> Deserialize<'de>>(
        &self,
        script: &str,
        args: &serde_json::Value,
        timeout: Duration,
        progress: &mut dyn FnMut(&str),
    ) -> Result<T, ScriptFailed> {
        let path_arg = self.dir.join(script).display().to_string();
        let args_arg = args.to_string();
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let fail = |message: String| ScriptFailed {
            script: script.to_owned(),
            message,
        };
        let out = self
            .runner
            .run_streaming(
                &self.python,
                &[path_arg.as_str(), args_arg.as_str()],
                &env,
                timeout,
                &mut |line| {
                    if let Ok(p) = serde_json::from_str::<ProgressLine>(line) {
                        if p.event == "progress" {
                            progress(&p.message);
                        }
                    }
                },
            )
            .map_err(|e| fail(e.to_string()))?;
        let result = out.stdout.lines().rev().find_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l.trim()).ok()?;
            (v.get("event")?.as_str()? == "result").then_some(v)
        });
        let Some(v) = result else {
            let lines: Vec<&str> = out
                .stdout
                .lines()
                .chain(out.stderr.lines())
                .filter(|l| !l.trim().is_empty() && !l.contains("\"event\": \"progress\""))
                .collect();
            let tail = lines[lines.len().saturating_sub(6)..].join("\n");
            let how = match out.status {
                Some(code) => format!("exit {code}"),
                None => format!("killed or timed out after {}s", timeout.as_secs()),
            };
            return Err(fail(format!(
                "it printed no result ({how}); its last lines:\n{tail}"
            )));
        };
        serde_json::from_value(v).map_err(|e| fail(format!("its result is unreadable: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_shares_count_the_worst_bit() {
        let w = Window {
            reason_samples: 10,
            reason_counts: [
                ("4".to_owned(), 6),
                ("32".to_owned(), 3),
                ("1".to_owned(), 9),
            ]
            .into_iter()
            .collect(),
            ..Window::default()
        };
        assert!((w.share(4) - 0.6).abs() < 1e-9);
        assert!((w.share(0x20 | 0x40) - 0.3).abs() < 1e-9);
        assert_eq!(w.share(0x80), 0.0);
        assert_eq!(Window::default().share(4), 0.0);
    }
}
