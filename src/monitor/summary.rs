//! What a run showed and why it was slow: the samples folded into per-GPU figures, then judged.
//! The rules are the guide's troubleshooting chapter ("GPU-Util is low", "CUDA out of memory")
//! made measurable: each verdict names the numbers it stands on, so a user can check it against
//! `nvidia-smi dmon`, and says what to change. A live run and a `--replay` of its stream give the
//! same summary, because both fold the same records.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::sample::{CommandSample, GpuProcess, Sample, Throttle, SCHEMA_VERSION};
use super::words::{Facts, Words};

/// Below this mean utilisation (percent, over the active part of the run) the GPU waited for
/// work more than it worked. nvidia-smi's "GPU-Util" is the share of time a kernel ran, so 50%
/// means half of the time nothing ran at all.
pub const IDLE_UTIL: f64 = 50.0;
/// From this many cores (CPU seconds per wall second, the whole process tree) the command was
/// busy on the CPU: one Python main thread preparing batches shows as about 1.0.
pub const CPU_BUSY: f64 = 0.8;
/// A process tree using this share of the machine's cores has no CPU left to give.
pub const CPU_SATURATED: f64 = 0.85;
/// Memory at or above this share of the board's at the peak is an out-of-memory waiting to
/// happen (the caching allocator's fragmentation takes the rest).
pub const MEMORY_NEAR_FULL: f64 = 0.95;
/// A clock-event reason counts when it was set in at least this share of the samples (the
/// same rule `bench` applies).
pub const REASON_SHARE: f64 = 0.2;
/// A power limit this far below the board's default was lowered by someone.
pub const LOWERED_LIMIT: f64 = 0.98;
/// Samples at or above this utilisation are "busy" for judging the PCIe link (an idle link
/// drops its generation to save power, which is no fault).
pub const BUSY_FOR_LINK: u32 = 30;
/// A busy link below its best in at least this share of the busy samples is degraded.
pub const LINK_SHARE: f64 = 0.5;
/// Another process holding at least this much memory on a GPU competes with the command.
pub const OTHER_PROCESS_MIB: u64 = 256;

/// The run, folded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// From the first sample to the last, seconds.
    pub duration_s: f64,
    /// How many samples.
    pub samples: u32,
    /// Per GPU.
    pub gpus: Vec<GpuSummary>,
    /// The watched command, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandSummary>,
    /// What held the run back (or that nothing did), most serious first.
    pub verdicts: Vec<Verdict>,
}

/// One GPU over the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuSummary {
    /// NVML's index.
    pub index: u32,
    /// The board's name.
    pub name: String,
    /// Mean utilisation over the active part of the run (from the first sample with work on
    /// the GPU), percent.
    pub util_mean: Option<f64>,
    /// Highest utilisation, percent.
    pub util_max: Option<u32>,
    /// Most memory in use, MiB.
    pub mem_peak_mib: Option<u64>,
    /// The board's memory, MiB.
    pub mem_total_mib: Option<u64>,
    /// Mean power over the active part, W.
    pub power_mean_w: Option<f64>,
    /// Highest power, W.
    pub power_max_w: Option<f64>,
    /// The power limit in force (the last seen), W.
    pub power_limit_w: Option<f64>,
    /// The board's default limit, W.
    pub power_default_limit_w: Option<f64>,
    /// Hottest, °C.
    pub temp_max_c: Option<u32>,
    /// For each clock-event reason seen, the share of samples it was set in.
    pub throttle_share: BTreeMap<String, f64>,
    /// The link while busy, when it ran below its best: (gen, width, best gen, best width, share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_below_best: Option<LinkShortfall>,
    /// New uncorrected ECC errors during the run.
    #[serde(default)]
    pub ecc_new: u64,
    /// Xid errors during the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub xid: Vec<u64>,
    /// Processes outside the watched command that held memory here (the most each held).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_processes: Vec<GpuProcess>,
    /// Whether the watched command had a process on this GPU.
    #[serde(default)]
    pub used_by_command: bool,
}

/// A PCIe link that ran below its best while the GPU was busy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkShortfall {
    /// Generation seen most often while busy.
    pub gen: u32,
    /// Lanes seen most often while busy.
    pub width: u32,
    /// Best generation.
    pub max_gen: u32,
    /// Most lanes.
    pub max_width: u32,
    /// Share of the busy samples below the best.
    pub share: f64,
}

/// The watched command over the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommandSummary {
    /// Its pid.
    pub pid: u32,
    /// Mean CPU use over the active part of the run, cores.
    pub cpu_cores_mean: f64,
    /// Highest, cores.
    pub cpu_cores_max: f64,
    /// Most processes the tree had at once (1 = no DataLoader workers).
    pub processes_max: u32,
    /// The machine's cores.
    pub cores_available: u32,
    /// Its exit code (128 + N for a signal), once it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}

/// How much a verdict matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// Something to change: it cost time or will fail.
    Problem,
    /// Worth knowing; not a fault.
    Note,
    /// Nothing held the run back.
    Ok,
}

/// What a verdict says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The GPU waited for batches the CPU was busy making.
    InputBound,
    /// The GPU waited, and the CPU was not busy either (I/O, sync, too little work).
    GpuIdle,
    /// Memory at the peak was close to full.
    MemoryNearFull,
    /// The power limit held the clocks down (a note at the default limit).
    PowerCapped,
    /// Someone lowered the power limit.
    PowerLimitLowered,
    /// Too hot.
    Thermal,
    /// The hardware slowed down (power brake, fast trigger).
    HwSlowdown,
    /// The PCIe link ran below its best while busy.
    PcieDegraded,
    /// Another process held the GPU.
    OtherProcess,
    /// ECC or Xid errors.
    Errors,
    /// Busy throughout: the GPU itself is the limit.
    Busy,
    /// Too few samples to judge.
    TooShort,
}

/// One judgement, with the numbers it stands on and what to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// What it says.
    pub kind: Kind,
    /// How much it matters.
    pub severity: Severity,
    /// The GPU it is about, when it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<u32>,
    /// The evidence, in words.
    pub evidence: String,
    /// What to change.
    pub advice: String,
}

/// Folds `samples` (in time order) into a summary, judged in the language of `words`.
/// `exit_code` is the watched command's, when it ended.
pub fn summarise(samples: &[Sample], exit_code: Option<i32>, words: &Words) -> Summary {
    let duration_s = match (samples.first(), samples.last()) {
        (Some(a), Some(b)) => b.t_ms.saturating_sub(a.t_ms) as f64 / 1000.0,
        _ => 0.0,
    };
    let active = active_from(samples);
    let gpus = gpu_indices(samples)
        .into_iter()
        .map(|i| gpu_summary(i, samples, active))
        .collect::<Vec<_>>();
    let command = command_summary(&samples[active..], exit_code);
    let mut verdicts = Vec::new();
    if samples.len() < 2 {
        verdicts.push(verdict(Kind::TooShort, None, &Facts::default(), words));
    } else {
        let seconds = samples[active..]
            .first()
            .zip(samples.last())
            .map(|(a, b)| b.t_ms.saturating_sub(a.t_ms) as f64 / 1000.0)
            .unwrap_or(0.0);
        for g in &gpus {
            judge_gpu(g, command.as_ref(), seconds, words, &mut verdicts);
        }
    }
    verdicts.sort_by_key(|v| v.severity);
    Summary {
        schema_version: SCHEMA_VERSION,
        duration_s,
        samples: u32::try_from(samples.len()).unwrap_or(u32::MAX),
        gpus,
        command,
        verdicts,
    }
}

/// The first sample with work on a GPU (a watched process, or a kernel running): start-up time
/// (imports, reading a dataset index) is not the GPU's idleness.
fn active_from(samples: &[Sample]) -> usize {
    samples
        .iter()
        .position(|s| {
            s.gpus
                .iter()
                .any(|g| g.util_gpu.is_some_and(|u| u > 0) || g.processes.iter().any(|p| p.watched))
        })
        .unwrap_or(0)
}

fn gpu_indices(samples: &[Sample]) -> Vec<u32> {
    let mut seen: Vec<u32> = samples
        .iter()
        .flat_map(|s| s.gpus.iter().map(|g| g.index))
        .collect();
    seen.sort_unstable();
    seen.dedup();
    seen
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0u32), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / f64::from(n))
}

fn gpu_summary(index: u32, samples: &[Sample], active: usize) -> GpuSummary {
    let of = |s: &'_ Sample| s.gpus.iter().find(|g| g.index == index).cloned();
    let all: Vec<_> = samples.iter().filter_map(of).collect();
    let busy: Vec<_> = samples[active..].iter().filter_map(of).collect();
    let last = all.last().cloned().unwrap_or_default();
    let mut throttle_share = BTreeMap::new();
    let with_reasons = all.iter().filter(|g| g.throttle.is_some()).count();
    if with_reasons > 0 {
        for t in Throttle::ALL {
            let hits = all.iter().filter(|g| g.throttled_by(t)).count();
            if hits > 0 {
                throttle_share.insert(t.name().to_owned(), hits as f64 / with_reasons as f64);
            }
        }
    }
    let ecc: Vec<u64> = all.iter().filter_map(|g| g.ecc_uncorrected).collect();
    let mut others: BTreeMap<u32, GpuProcess> = BTreeMap::new();
    for p in all.iter().flat_map(|g| &g.processes).filter(|p| !p.watched) {
        let e = others.entry(p.pid).or_insert_with(|| p.clone());
        if p.mem_mib > e.mem_mib {
            e.mem_mib = p.mem_mib;
        }
    }
    GpuSummary {
        index,
        name: last.name.clone(),
        util_mean: mean(busy.iter().filter_map(|g| g.util_gpu.map(f64::from))),
        util_max: all.iter().filter_map(|g| g.util_gpu).max(),
        mem_peak_mib: all.iter().filter_map(|g| g.mem_used_mib).max(),
        mem_total_mib: all.iter().filter_map(|g| g.mem_total_mib).max(),
        power_mean_w: mean(busy.iter().filter_map(|g| g.power_w)),
        power_max_w: all.iter().filter_map(|g| g.power_w).reduce(f64::max),
        power_limit_w: all.iter().rev().find_map(|g| g.power_limit_w),
        power_default_limit_w: all.iter().rev().find_map(|g| g.power_default_limit_w),
        temp_max_c: all.iter().filter_map(|g| g.temp_c).max(),
        throttle_share,
        pcie_below_best: link_shortfall(&busy),
        ecc_new: match (ecc.first(), ecc.last()) {
            (Some(a), Some(b)) => b.saturating_sub(*a),
            _ => 0,
        },
        xid: all.iter().flat_map(|g| g.xid.iter().copied()).collect(),
        other_processes: others.into_values().collect(),
        used_by_command: all.iter().any(|g| g.processes.iter().any(|p| p.watched)),
    }
}

fn link_shortfall(busy: &[super::sample::GpuSample]) -> Option<LinkShortfall> {
    let links: Vec<_> = busy
        .iter()
        .filter(|g| g.util_gpu.is_some_and(|u| u >= BUSY_FOR_LINK))
        .filter_map(|g| g.pcie.as_ref())
        .filter_map(|p| Some((p.gen?, p.width?, p.max_gen?, p.max_width?)))
        .collect();
    if links.is_empty() {
        return None;
    }
    let below: Vec<_> = links
        .iter()
        .filter(|(g, w, mg, mw)| g < mg || w < mw)
        .collect();
    let share = below.len() as f64 / links.len() as f64;
    if share < LINK_SHARE {
        return None;
    }
    // The link seen most often while below its best.
    let mut counts: BTreeMap<(u32, u32, u32, u32), usize> = BTreeMap::new();
    for l in &below {
        *counts.entry(**l).or_default() += 1;
    }
    let ((gen, width, max_gen, max_width), _) = counts.into_iter().max_by_key(|(_, n)| *n)?;
    Some(LinkShortfall {
        gen,
        width,
        max_gen,
        max_width,
        share,
    })
}

fn command_summary(samples: &[Sample], exit_code: Option<i32>) -> Option<CommandSummary> {
    let cmds: Vec<&CommandSample> = samples.iter().filter_map(|s| s.command.as_ref()).collect();
    let first = cmds.first()?;
    Some(CommandSummary {
        pid: first.pid,
        cpu_cores_mean: mean(cmds.iter().map(|c| c.cpu_cores)).unwrap_or(0.0),
        cpu_cores_max: cmds.iter().map(|c| c.cpu_cores).fold(0.0, f64::max),
        processes_max: cmds.iter().map(|c| c.processes).max().unwrap_or(0),
        cores_available: first.cores_available,
        exit_code,
    })
}

fn verdict(kind: Kind, gpu: Option<u32>, facts: &Facts, words: &Words) -> Verdict {
    let (severity, evidence, advice) = words.verdict(kind, facts);
    Verdict {
        kind,
        severity,
        gpu,
        evidence,
        advice,
    }
}

fn judge_gpu(
    g: &GpuSummary,
    command: Option<&CommandSummary>,
    seconds: f64,
    words: &Words,
    out: &mut Vec<Verdict>,
) {
    // With a command, only the GPUs it used are its business; the others get no idle verdict.
    let watched_elsewhere = command.is_some() && !g.used_by_command;
    let mut facts = Facts {
        gpu: g.index,
        seconds,
        util_mean: g.util_mean.unwrap_or(0.0),
        ..Facts::default()
    };
    if let Some(c) = command {
        facts.cpu_cores = c.cpu_cores_mean;
        facts.cores = c.cores_available;
        facts.processes = c.processes_max;
    }
    let start = out.len();
    let mut say = |kind: Kind, facts: &Facts| out.push(verdict(kind, Some(g.index), facts, words));
    if let Some(util) = g.util_mean.filter(|_| !watched_elsewhere) {
        if util < IDLE_UTIL {
            match command {
                Some(c) if c.cpu_cores_mean >= CPU_BUSY => {
                    facts.saturated =
                        c.cpu_cores_mean >= CPU_SATURATED * f64::from(c.cores_available.max(1));
                    say(Kind::InputBound, &facts);
                }
                Some(_) => say(Kind::GpuIdle, &facts),
                None => {
                    facts.no_cpu_data = true;
                    say(Kind::GpuIdle, &facts);
                }
            }
        }
    }
    if let (Some(peak), Some(total)) = (g.mem_peak_mib, g.mem_total_mib) {
        if total > 0 && peak as f64 >= MEMORY_NEAR_FULL * total as f64 {
            facts.peak_mib = peak;
            facts.total_mib = total;
            say(Kind::MemoryNearFull, &facts);
        }
    }
    let share = |names: &[Throttle]| {
        names
            .iter()
            .filter_map(|t| g.throttle_share.get(t.name()))
            .copied()
            .fold(0.0, f64::max)
    };
    let power = share(&[Throttle::SwPowerCap]);
    if power >= REASON_SHARE {
        facts.share = power;
        facts.limit_w = g.power_limit_w.unwrap_or(0.0);
        facts.default_w = g.power_default_limit_w.unwrap_or(0.0);
        facts.power_mean_w = g.power_mean_w.unwrap_or(0.0);
        let lowered = matches!((g.power_limit_w, g.power_default_limit_w),
            (Some(l), Some(d)) if l < LOWERED_LIMIT * d);
        say(
            if lowered {
                Kind::PowerLimitLowered
            } else {
                Kind::PowerCapped
            },
            &facts,
        );
    }
    let thermal = share(&[Throttle::SwThermal, Throttle::HwThermal]);
    if thermal >= REASON_SHARE {
        facts.share = thermal;
        facts.temp_max = g.temp_max_c.unwrap_or(0);
        say(Kind::Thermal, &facts);
    }
    let slowdown = share(&[Throttle::HwSlowdown, Throttle::HwPowerBrake]);
    if slowdown >= REASON_SHARE {
        facts.share = slowdown;
        say(Kind::HwSlowdown, &facts);
    }
    if let Some(l) = &g.pcie_below_best {
        facts.link = (l.gen, l.width, l.max_gen, l.max_width);
        facts.share = l.share;
        say(Kind::PcieDegraded, &facts);
    }
    let holders: Vec<&GpuProcess> = g
        .other_processes
        .iter()
        .filter(|_| command.is_some() || g.other_processes.len() > 1)
        .filter(|p| p.mem_mib.is_none_or(|m| m >= OTHER_PROCESS_MIB))
        .collect();
    if !holders.is_empty() {
        facts.others = holders
            .iter()
            .map(|p| (p.pid, p.name.clone().unwrap_or_default(), p.mem_mib))
            .collect();
        facts.during_command = command.is_some();
        say(Kind::OtherProcess, &facts);
    }
    if g.ecc_new > 0 || !g.xid.is_empty() {
        facts.ecc = g.ecc_new;
        facts.xid = g.xid.clone();
        say(Kind::Errors, &facts);
    }
    let problems = out[start..]
        .iter()
        .any(|v| v.severity == Severity::Problem || v.kind == Kind::GpuIdle);
    if !problems && !watched_elsewhere && g.util_mean.is_some_and(|u| u >= IDLE_UTIL) {
        out.push(verdict(Kind::Busy, Some(g.index), &facts, words));
    }
}

#[cfg(test)]
mod tests;
