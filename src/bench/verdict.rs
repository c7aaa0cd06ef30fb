//! Verdicts: each measurement against NVIDIA's figure for the GPU, and when it falls short, the
//! likely causes — only those the evidence measured during the run shows (NVML's clocks, power,
//! utilisation and clock-event reasons, other processes, the process's CPU time, the form
//! factor, the precision and memory format).

use serde::Serialize;

use crate::catalog::{Reference, Workload};

use super::measure::{ConfigResult, OtherProcess, Run, Static};

/// NVML's clock-event reason bits (`nvmlClocksEventReason*`).
pub mod reason {
    /// The software power cap (the power limit) holds the clocks down.
    pub const SW_POWER_CAP: u64 = 0x4;
    /// Hardware slowdown (high temperature or an external power brake signal).
    pub const HW_SLOWDOWN: u64 = 0x8;
    /// The driver lowers the clocks because the GPU is too hot.
    pub const SW_THERMAL: u64 = 0x20;
    /// Hardware thermal slowdown.
    pub const HW_THERMAL: u64 = 0x40;
    /// The power brake (an external signal, e.g. the PSU).
    pub const HW_POWER_BRAKE: u64 = 0x80;
    /// Applications clocks set below the maximum (`nvidia-smi -ac`).
    pub const APPLICATIONS_CLOCKS: u64 = 0x2;
}

/// A throttle reason counts as a cause when it was set in at least this share of the samples.
pub const REASON_SHARE: f64 = 0.2;
/// Below this mean utilisation (percent) the GPU waited on something during a synthetic run.
pub const BUSY_UTIL: f64 = 85.0;
/// A process using at least this share of one core per wall second is CPU-bound.
pub const CPU_BOUND: f64 = 0.9;
/// Utilisation seen before the bench started that proves another process computes.
pub const FOREIGN_UTIL: f64 = 10.0;
/// A mean SM clock below this share of the maximum is a held-down clock.
pub const CLOCK_SHARE: f64 = 0.85;

/// How a measurement compares with its reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// At or above the reference.
    Above,
    /// Below it, but within the tolerance.
    Within,
    /// Further below than the tolerance.
    Below,
    /// No published figure for this GPU, workload and precision.
    NoReference,
}

/// A likely cause of a shortfall and what shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cause {
    /// `other-process`, `thermal`, `power-cap`, `hw-slowdown`, `clocks`, `form-factor`,
    /// `precision`, `memory-format`, `cpu-bound`, `gpu-idle`, `software`.
    pub kind: &'static str,
    /// The measured evidence, in words.
    pub evidence: String,
}

/// One measurement judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// The configuration (`tf32`, `amp_bf16`, `amp_bf16_cl`).
    pub config: String,
    /// Training or inference.
    pub workload: Workload,
    /// Images per step.
    pub batch: u32,
    /// The measurement.
    pub images_per_s: f64,
    /// The figure it is judged against.
    pub reference: Option<Reference>,
    /// measurement / reference.
    pub ratio: Option<f64>,
    /// The outcome.
    pub status: Status,
    /// One line for the table.
    pub summary: String,
    /// Likely causes, strongest evidence first (empty when nothing fell short).
    pub causes: Vec<Cause>,
}

/// What is known about the GPU beyond one run.
#[derive(Debug, Clone, Default)]
pub struct Context<'a> {
    /// Its name.
    pub gpu: &'a str,
    /// NVML's fixed facts.
    pub static_: Option<&'a Static>,
    /// Utilisation seen before the bench started.
    pub idle_util_before: Option<f64>,
    /// Other processes on it.
    pub other_processes: Option<&'a [OtherProcess]>,
    /// Whether TF32 was allowed for the fp32 run.
    pub tf32: bool,
    /// Compute capability major.
    pub cc_major: u32,
    /// The best training throughput of the same precision in channels-last, when this is an
    /// NCHW run (shows what the memory format costs).
    pub channels_last_ips: Option<f64>,
}

/// The reference for a configuration and workload among a GPU's references: the same precision
/// class (any AMP figure for an AMP run; TF32 for TF32; FP32 for FP32).
pub fn reference_for<'r>(
    refs: &[&'r Reference],
    config: &ConfigResult,
    workload: Workload,
) -> Option<&'r Reference> {
    refs.iter()
        .copied()
        .filter(|r| r.workload == workload)
        .find(|r| {
            if config.is_amp() {
                r.precision.starts_with("amp")
            } else {
                r.precision == config.name
            }
        })
}

/// Judges one run of `config` against `reference`; `tolerance_pct` is the manifest's.
pub fn judge(
    config: &ConfigResult,
    workload: Workload,
    run: &Run,
    reference: Option<&Reference>,
    tolerance_pct: f64,
    ctx: &Context<'_>,
) -> Verdict {
    let ips = run.images_per_s;
    let mut v = Verdict {
        config: config.name.clone(),
        workload,
        batch: run.batch,
        images_per_s: ips,
        reference: reference.cloned(),
        ratio: None,
        status: Status::NoReference,
        summary: String::new(),
        causes: Vec::new(),
    };
    let Some(r) = reference else {
        v.summary = format!(
            "{ips:.0} images/s; no published figure for the {} (manifests/bench.toml leaves it out rather than guess)",
            ctx.gpu
        );
        // Causes still show when the evidence is plain, reference or not.
        v.causes = causes(config, run, None, ctx);
        return v;
    };
    let ratio = ips / r.images_per_s;
    v.ratio = Some(ratio);
    let pct = (ratio - 1.0) * 100.0;
    let against = format!(
        "NVIDIA's {:.0} ({}, {}, batch {})",
        r.images_per_s, r.gpu, r.precision, r.batch
    );
    if ratio >= 1.0 {
        v.status = Status::Above;
        v.summary = format!("{ips:.0} images/s, {pct:+.0}% against {against}");
    } else if -pct <= tolerance_pct {
        v.status = Status::Within;
        v.summary =
            format!("{ips:.0} images/s, within {tolerance_pct:.0}% of {against} ({pct:+.0}%)");
    } else {
        v.status = Status::Below;
        v.causes = causes(config, run, Some(r), ctx);
        if v.causes.is_empty() {
            v.causes.push(Cause {
                kind: "software",
                evidence: format!(
                    "NVML saw no throttling, power capping, held clocks or other process; the gap is software: the reference ran {}, this is eager PyTorch with synthetic data",
                    r.framework
                ),
            });
        }
        v.summary = format!(
            "{ips:.0} images/s, {:.0}% below {against}; likely: {}",
            -pct,
            v.causes
                .iter()
                .map(|c| c.kind)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    v
}

/// The causes the evidence shows, strongest first.
fn causes(
    config: &ConfigResult,
    run: &Run,
    reference: Option<&Reference>,
    ctx: &Context<'_>,
) -> Vec<Cause> {
    let mut out = Vec::new();
    let mut add = |kind: &'static str, evidence: String| out.push(Cause { kind, evidence });
    let w = run.nvml.clone().unwrap_or_default();
    let others: Vec<&OtherProcess> = ctx.other_processes.unwrap_or_default().iter().collect();
    if !others.is_empty() {
        add(
            "other-process",
            format!(
                "{} other process(es) on this GPU: {}",
                others.len(),
                others
                    .iter()
                    .map(|p| match p.used_mib {
                        Some(m) => format!("{} (pid {}, {m:.0} MiB)", p.name, p.pid),
                        None => format!("{} (pid {})", p.name, p.pid),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    } else if let Some(u) = ctx.idle_util_before.filter(|u| *u >= FOREIGN_UTIL) {
        add(
            "other-process",
            format!("the GPU was {u:.0}% busy before the bench touched it: another process (perhaps in another container) computes on it"),
        );
    }
    let thermal = w.share(reason::SW_THERMAL | reason::HW_THERMAL);
    if thermal >= REASON_SHARE {
        add(
            "thermal",
            format!(
                "thermal slowdown in {:.0}% of NVML samples (up to {}°C): check cooling and airflow",
                thermal * 100.0,
                w.temp_max_c.map_or("?".into(), |t| format!("{t:.0}"))
            ),
        );
    }
    let st = ctx.static_.cloned().unwrap_or_default();
    let capped = w.share(reason::SW_POWER_CAP);
    match (st.power_limit_w, st.default_power_limit_w) {
        (Some(limit), Some(default)) if limit < default * 0.95 => add(
            "power-cap",
            format!(
                "the power limit is {limit:.0} W, below the board's default {default:.0} W (`nvidia-smi -pl` or a datacenter policy); at the cap in {:.0}% of samples",
                capped * 100.0
            ),
        ),
        (limit, _) if capped >= 0.5 => add(
            "power-cap",
            format!(
                "at its power limit{} in {:.0}% of NVML samples (mean {} W)",
                limit.map_or(String::new(), |l| format!(" of {l:.0} W")),
                capped * 100.0,
                w.power_mean_w.map_or("?".into(), |p| format!("{p:.0}"))
            ),
        ),
        _ => {}
    }
    let slow = w.share(reason::HW_SLOWDOWN | reason::HW_POWER_BRAKE);
    if slow >= REASON_SHARE {
        add(
            "hw-slowdown",
            format!(
                "hardware slowdown or power brake in {:.0}% of NVML samples: the board or its power supply asks the GPU to slow down",
                slow * 100.0
            ),
        );
    }
    if let (Some(mean), Some(max)) = (w.sm_clock_mean, st.max_sm_clock_mhz) {
        let explained = thermal >= REASON_SHARE || slow >= REASON_SHARE || capped >= 0.5;
        if mean < max * CLOCK_SHARE && !explained {
            let apps = w.share(reason::APPLICATIONS_CLOCKS) >= REASON_SHARE;
            add(
                "clocks",
                format!(
                    "the SM clock averaged {mean:.0} MHz of its {max:.0} MHz{}",
                    if apps {
                        " with applications clocks set (`nvidia-smi -rac` resets them)"
                    } else {
                        " (locked clocks? `nvidia-smi -rgc` resets them)"
                    }
                ),
            );
        }
    }
    if let Some(r) = reference {
        let here = form_factor(ctx.gpu);
        if let Some(here) = here.filter(|f| !f.eq_ignore_ascii_case(&r.form_factor)) {
            add(
                "form-factor",
                format!(
                    "this is the {here} card and the reference the {} module, which runs at a higher power limit and clocks{}",
                    r.form_factor,
                    st.power_limit_w
                        .map_or(String::new(), |l| format!(" (this one's limit: {l:.0} W)"))
                ),
            );
        }
    }
    if config.is_amp() && !config.channels_last {
        add(
            "memory-format",
            match ctx.channels_last_ips {
                Some(cl) => format!(
                    "NCHW layout: the same precision in channels-last ran {cl:.0} images/s ({:+.0}%); Tensor Core convolutions want channels-last (model.to(memory_format=torch.channels_last))",
                    (cl / run.images_per_s - 1.0) * 100.0
                ),
                None => "NCHW layout: Tensor Core convolutions want channels-last".into(),
            },
        );
    }
    if !config.is_amp() && ctx.cc_major >= 8 && !ctx.tf32 {
        add(
            "precision",
            "TF32 was off for the fp32 run (torch.backends.cuda.matmul.allow_tf32 = False)".into(),
        );
    }
    if let Some(r) = reference {
        if !config.is_amp() && r.precision == "tf32" && config.name == "fp32" {
            add(
                "precision",
                "the reference used TF32 and this GPU ran plain FP32".into(),
            );
        }
    }
    if let Some(util) = w.util_mean.filter(|u| *u < BUSY_UTIL) {
        match run.cpu_fraction {
            Some(cpu) if cpu >= CPU_BOUND => add(
                "cpu-bound",
                format!(
                    "the GPU was busy only {util:.0}% of the time while the Python process kept {:.0}% of a core busy: kernel launches cannot keep up (larger batches, CUDA graphs or torch.compile help)",
                    cpu * 100.0
                ),
            ),
            _ => add(
                "gpu-idle",
                format!(
                    "the GPU was busy only {util:.0}% of the time and the process was not CPU-bound: it waited on synchronisations or another process"
                ),
            ),
        }
    }
    out
}

/// The form factor a GPU's name says (`PCIe`, `SXM4`, `NVL`), when it says one.
pub fn form_factor(name: &str) -> Option<String> {
    let upper = name.to_ascii_uppercase();
    if upper.contains("PCIE") {
        return Some("PCIe".into());
    }
    if let Some(i) = upper.find("SXM") {
        let digits: String = upper[i + 3..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        return Some(format!("SXM{digits}"));
    }
    upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| w == "NVL")
        .then(|| "NVL".into())
}
