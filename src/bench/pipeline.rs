//! Verdicts on the input pipeline (is training input-bound, and which DataLoader worker count
//! fixes it) and on DistributedDataParallel scaling.

use serde::Serialize;

use super::measure::{Ddp, Loader};

/// A worker count keeps up when it reaches this share of the GPU-only ceiling.
pub const KEEPS_UP: f64 = 0.9;
/// Scaling at or above this efficiency is good.
pub const GOOD_SCALING: f64 = 0.9;

/// The input-pipeline verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoaderVerdict {
    /// Whether the fewest workers tried (0) left the GPU waiting.
    pub input_bound: bool,
    /// The fewest workers that keep up, if any did.
    pub fix_workers: Option<u32>,
    /// In words.
    pub summary: String,
}

/// Judges the DataLoader runs against the GPU-only ceiling.
pub fn judge_loader(l: &Loader) -> Option<LoaderVerdict> {
    let ceiling = l.ceiling.as_ref()?.images_per_s;
    let mut runs: Vec<_> = l.runs.iter().collect();
    runs.sort_by_key(|r| r.workers);
    let first = runs.first()?;
    let share = |ips: f64| ips / ceiling;
    let util = |r: &super::measure::LoaderRun| {
        r.nvml
            .as_ref()
            .and_then(|w| w.util_mean)
            .map_or(String::new(), |u| format!(", GPU busy {u:.0}%"))
    };
    let fix = runs.iter().find(|r| share(r.images_per_s) >= KEEPS_UP);
    let input_bound = share(first.images_per_s) < KEEPS_UP;
    let summary = match (input_bound, fix) {
        (false, _) => format!(
            "not input-bound: {} workers already feed {:.0} images/s, {:.0}% of the {ceiling:.0} the GPU reaches on batches already in its memory{}",
            first.workers,
            first.images_per_s,
            share(first.images_per_s) * 100.0,
            util(first)
        ),
        (true, Some(f)) => format!(
            "input-bound with {} workers ({:.0} images/s, {:.0}% of the GPU's {ceiling:.0}{}); num_workers={} fixes it ({:.0} images/s, {:.0}%{}), with pin_memory=True and persistent_workers=True",
            first.workers,
            first.images_per_s,
            share(first.images_per_s) * 100.0,
            util(first),
            f.workers,
            f.images_per_s,
            share(f.images_per_s) * 100.0,
            util(f)
        ),
        (true, None) => {
            let best = runs
                .iter()
                .max_by(|a, b| a.images_per_s.total_cmp(&b.images_per_s))
                .expect("not empty");
            format!(
                "input-bound at every worker count tried, up to {} (best: {} workers, {:.0} images/s, {:.0}% of the GPU's {ceiling:.0}{}): the CPUs cannot decode and augment fast enough; decode once into a tensor file, or augment on the GPU (torchvision.transforms.v2 on tensors, NVIDIA DALI)",
                runs.last().expect("not empty").workers,
                best.workers,
                best.images_per_s,
                share(best.images_per_s) * 100.0,
                util(best)
            )
        }
    };
    Some(LoaderVerdict {
        input_bound,
        fix_workers: fix.map(|f| f.workers),
        summary,
    })
}

/// The scaling verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DdpVerdict {
    /// All GPUs' throughput / (GPUs × one GPU's).
    pub scaling_efficiency: f64,
    /// One GPU's throughput it is compared with.
    pub single_gpu_images_per_s: f64,
    /// In words.
    pub summary: String,
}

/// Judges DDP's total against `single` (one GPU's throughput in the same configuration).
pub fn judge_ddp(d: &Ddp, single: f64) -> Option<DdpVerdict> {
    let total = d.images_per_s?;
    if d.world == 0 || single <= 0.0 {
        return None;
    }
    let eff = total / (f64::from(d.world) * single);
    let head = format!(
        "{} GPUs: {total:.0} images/s, {:.1}× one GPU's {single:.0} = {:.0}% scaling efficiency",
        d.world,
        total / single,
        eff * 100.0
    );
    let summary = if eff >= GOOD_SCALING {
        format!("{head}: scales well")
    } else {
        format!("{head}: below {:.0}%; check how the GPUs are linked (`nvidia-smi topo -m`: NVLink or PCIe), NCCL_DEBUG=INFO for the transport NCCL chose, and that no GPU is slower than the others", GOOD_SCALING * 100.0)
    };
    Some(DdpVerdict {
        scaling_efficiency: eff,
        single_gpu_images_per_s: single,
        summary,
    })
}
