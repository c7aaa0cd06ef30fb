//! `cudaup bench`: the guide's tuning chapters, measured. Per GPU, ResNet-50 training and
//! inference throughput on synthetic 224×224 images (fp32/TF32, AMP, AMP in channels-last),
//! each against NVIDIA's published figure for that GPU with a verdict and the likely cause of a
//! shortfall; the batch-size curve up to the largest batch that fits, and the gradient
//! accumulation that reaches a wanted effective batch; the input pipeline (a CIFAR-10-shaped
//! dataset on disk through a real DataLoader at 0, 2, 4, … workers); and DistributedDataParallel
//! scaling on several GPUs.
//!
//! The measuring is Python (`python/*.py`, embedded), run with the venv's interpreter through
//! the [`Runner`]; judging, the report and the plot are here, so they are tested without a GPU.

pub mod batch;
pub mod measure;
pub mod pipeline;
pub mod plot;
pub mod verdict;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::catalog::{BenchManifest, Reference, Workload};
use crate::error::{Error, Result};
use crate::install::receipts::Receipts;
use crate::model::request::Profile;
use crate::resolve::offer::Offer;
use crate::world::process::Process;
use crate::world::runner::{RunError, Runner};

use measure::{Ddp, Interpreter, Loader, Probe, ProbeDevice, Train};

/// The version of the `bench --json` document.
pub const SCHEMA_VERSION: u32 = 1;

/// The report's file name in the output directory.
pub const REPORT_FILE: &str = "report.json";
/// The plot's file name in the output directory.
pub const PLOT_FILE: &str = "throughput.png";
/// Scratch directories (scripts, the dataset) start with this; a crashed run's are removed by
/// the next run in the same directory.
pub const SCRATCH_PREFIX: &str = ".cudaup-bench-scratch-";

/// What to measure.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--venv DIR`: this venv instead of the one cudaup installed.
    pub venv: Option<PathBuf>,
    /// `--quick`: shorter timings, a smaller dataset, fewer bisection steps.
    pub quick: bool,
    /// Images per step where no reference sets one.
    pub batch: u32,
    /// The effective batch to reach with gradient accumulation [default: each run's batch].
    pub effective_batch: Option<u32>,
    /// The largest batch the sweep tries.
    pub max_batch: u32,
    /// Where the report and the plot go.
    pub out_dir: PathBuf,
}

/// The world the bench runs in.
pub struct Context<'a> {
    /// The environment and cudaup's home (for the receipts).
    pub process: &'a Process,
    /// Runs the venv's python.
    pub runner: &'a dyn Runner,
    /// The reference figures.
    pub references: &'a BenchManifest,
    /// The profile this machine is offered (asked only when nothing can be benched, to say
    /// what to install: the same default `cudaup install` takes).
    pub offer: &'a dyn Fn() -> Offer,
}

/// What to install so there is a GPU PyTorch to bench, by the profile this machine is offered:
/// `cudaup install` alone when that default has one, else why nothing cudaup installs here can
/// be benched.
pub fn install_advice(offer: &Offer) -> String {
    if matches!(offer.profile, Profile::Full | Profile::Pytorch) {
        format!(
            "`cudaup install` sets up this machine's default profile, {}, with PyTorch for its GPU",
            offer.profile
        )
    } else {
        format!(
            "this machine's default profile is {} ({}): no PyTorch for a GPU to bench",
            offer.profile, offer.why
        )
    }
}

/// One GPU's results.
#[derive(Debug, Clone, Serialize)]
pub struct GpuReport {
    /// torch's index.
    pub index: u32,
    /// Its name.
    pub name: String,
    /// Compute capability.
    pub capability: String,
    /// Memory, MiB.
    pub memory_mib: u64,
    /// Each measurement judged.
    pub verdicts: Vec<verdict::Verdict>,
    /// Per configuration: where memory ran out, and the accumulation for the wanted batch.
    pub batches: Vec<BatchReport>,
    /// Everything measured.
    pub measured: Option<Train>,
    /// Why this GPU could not be measured.
    pub error: Option<String>,
}

/// The batch-size findings of one configuration.
#[derive(Debug, Clone, Serialize)]
pub struct BatchReport {
    /// The configuration.
    pub config: String,
    /// The largest batch that fitted.
    pub largest_fit: Option<u32>,
    /// The smallest that did not run.
    pub smallest_oom: Option<u32>,
    /// Why it did not: `out of memory`, or the library error at that size.
    pub limit: Option<String>,
    /// Reaching the wanted effective batch.
    pub accumulation: Option<batch::Accumulation>,
}

/// The input-pipeline section.
#[derive(Debug, Clone, Serialize)]
pub struct LoaderReport {
    /// The verdict.
    pub verdict: Option<pipeline::LoaderVerdict>,
    /// What was measured.
    pub measured: Option<Loader>,
    /// Why it could not be measured.
    pub error: Option<String>,
}

/// The several-GPU section.
#[derive(Debug, Clone, Serialize)]
pub struct DdpReport {
    /// `ran`, `skipped` or `failed`.
    pub status: &'static str,
    /// Why it was skipped or failed, or how it went.
    pub note: String,
    /// The verdict.
    pub verdict: Option<pipeline::DdpVerdict>,
    /// What was measured.
    pub measured: Option<Ddp>,
}

/// The `bench --json` document (also written to `report.json`).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Every part was measured (verdicts below a reference do not make it false).
    pub ok: bool,
    /// `--quick`.
    pub quick: bool,
    /// The venv.
    pub venv: PathBuf,
    /// The venv's torch and friends, and the machine's CPUs.
    pub software: Probe,
    /// The tolerance verdicts use, percent.
    pub tolerance_pct: f64,
    /// Each GPU.
    pub gpus: Vec<GpuReport>,
    /// The input pipeline (on the first GPU).
    pub loader: LoaderReport,
    /// DistributedDataParallel on all GPUs.
    pub ddp: DdpReport,
    /// The report file.
    pub report: PathBuf,
    /// The plot, when one could be drawn.
    pub plot: Option<PathBuf>,
    /// What failed.
    pub errors: Vec<String>,
}

/// The venv to bench: `--venv`, else the first framework venv for torch in the receipts.
pub fn choose_venv(
    process: &Process,
    flag: Option<&Path>,
    offer: &dyn Fn() -> Offer,
) -> Result<PathBuf> {
    if let Some(dir) = flag {
        let venv = crate::install::python::Venv {
            dir: std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned()),
        };
        if !venv.python().is_file() {
            return Err(crate::install::python::PyEnvError::NoInterpreter {
                venv: dir.display().to_string(),
                python: venv.python().display().to_string(),
            }
            .into());
        }
        return Ok(venv.dir);
    }
    let receipts = process
        .cudaup_home()
        .map(|h| Receipts::load(&h))
        .unwrap_or_default();
    let venv = crate::verify::framework::targets(&receipts, &[])
        .into_iter()
        .find(|v| !matches!(v.profile.as_deref(), Some("tensorflow" | "cpu")))
        .ok_or_else(|| {
            Error::Unsupported(format!(
                "no PyTorch venv to bench: cudaup installed none, and no --venv DIR was given; {}",
                install_advice(&offer())
            ))
        })?;
    if !venv.venv().python().is_file() {
        return Err(Error::Unsupported(format!(
            "the venv cudaup installed at {} has no python any more; `cudaup repair` puts it back",
            venv.dir.display()
        )));
    }
    Ok(venv.dir)
}

/// Refuses, with the reason, a venv whose torch cannot bench a GPU here (exit code 5).
pub fn refuse(probe: &Probe, venv: &Path, offer: &dyn Fn() -> Offer) -> Result<()> {
    let v = venv.display();
    let Some(torch) = &probe.torch else {
        return Err(Error::Unsupported(format!(
            "torch does not import in {v} ({}); the bench needs PyTorch with CUDA and torchvision (--venv DIR): {}",
            probe.error.as_deref().unwrap_or("no error text"),
            install_advice(&offer())
        )));
    };
    if probe.torchvision.is_none() {
        return Err(Error::Unsupported(format!(
            "torchvision does not import in {v} ({}); the bench takes ResNet-50 from it: pip install the torchvision that matches torch {torch}",
            probe.torchvision_error.as_deref().unwrap_or("no error text")
        )));
    }
    let Some(cuda) = &probe.cuda else {
        return Err(Error::Unsupported(format!(
            "torch {torch} in {v} is a CPU-only build: there is no GPU to bench through it; {}",
            install_advice(&offer())
        )));
    };
    if !probe.cuda_available || probe.devices.is_empty() {
        return Err(Error::Unsupported(format!(
            "torch {torch} (CUDA {cuda}) sees no GPU here{}: the bench needs an NVIDIA GPU (`cudaup doctor` says why none is usable)",
            probe
                .cuda_error
                .as_deref()
                .map_or(String::new(), |e| format!(" ({e})"))
        )));
    }
    Ok(())
}

fn timeout(quick: bool) -> Duration {
    Duration::from_secs(if quick { 900 } else { 3600 })
}

/// Runs the whole bench. `progress` receives a line per step as it starts.
pub fn run(ctx: &Context<'_>, opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Report> {
    let venv = choose_venv(ctx.process, opts.venv.as_deref(), ctx.offer)?;
    fs_err::create_dir_all(&opts.out_dir)?;
    remove_stale_scratch(&opts.out_dir);
    let scratch = tempfile::Builder::new()
        .prefix(SCRATCH_PREFIX)
        .tempdir_in(&opts.out_dir)?;
    measure::write_scripts(scratch.path())?;
    let py = Interpreter {
        runner: ctx.runner,
        python: crate::install::python::Venv { dir: venv.clone() }.python(),
        dir: scratch.path().to_owned(),
        env: [
            ("CUDA_DEVICE_ORDER", "PCI_BUS_ID"),
            ("NCCL_NVLS_ENABLE", "0"),
            ("PYTHONDONTWRITEBYTECODE", "1"),
            ("PYTHONUNBUFFERED", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect(),
    };
    progress(&format!("checking the torch in {}", venv.display()));
    let probe: Probe = py
        .run(
            "probe.py",
            &serde_json::json!({}),
            Duration::from_secs(300),
            progress,
        )
        .map_err(|e| RunError::new(&py.python, e.to_string()))?;
    refuse(&probe, &venv, ctx.offer)?;
    let mut errors = Vec::new();

    let mut trains = Vec::new();
    for d in &probe.devices {
        let refs = ctx.references.for_gpu(&d.name);
        let args = serde_json::json!({
            "index": d.index,
            "uuid": d.uuid,
            "pci_bus_id": d.pci_bus_id,
            "quick": opts.quick,
            "batch": opts.batch,
            "max_batch": opts.max_batch,
            "train_batch": reference_batches(&refs, Workload::Train),
            "infer_batch": reference_batches(&refs, Workload::Infer),
        });
        let t = py.run::<Train>("train.py", &args, timeout(opts.quick), progress);
        trains.push(t.map_err(|e| e.to_string()));
    }

    progress("input pipeline: a CIFAR-10-shaped dataset through a DataLoader");
    let loader_args = serde_json::json!({
        "index": probe.devices[0].index,
        "quick": opts.quick,
        "dir": scratch.path().join("cifar10-shaped"),
        "batch": opts.batch,
    });
    let loader = py
        .run::<Loader>("loader.py", &loader_args, timeout(opts.quick), progress)
        .map_err(|e| e.to_string());

    let ddp = if probe.devices.len() >= 2 {
        let args = serde_json::json!({
            "world": probe.devices.len(),
            "quick": opts.quick,
            "batch": opts.batch,
            "dir": scratch.path().join("ddp"),
        });
        Some(
            py.run::<Ddp>("ddp.py", &args, timeout(opts.quick), progress)
                .map_err(|e| e.to_string()),
        )
    } else {
        None
    };
    drop(scratch);

    let mut report = assemble(
        &probe,
        &venv,
        ctx.references,
        opts,
        trains,
        loader,
        ddp,
        &mut errors,
    );
    let plot_path = opts.out_dir.join(PLOT_FILE);
    let title = format!(
        "ResNet-50 training throughput by batch size: {}",
        gpu_names(&probe.devices)
    );
    match plot::write(&plot_path, &title, &plot_series(&report.gpus)) {
        Ok(()) => report.plot = Some(plot_path),
        Err(e) => report.errors.push(e.to_string()),
    }
    report.ok = report.errors.is_empty();
    write_report(&report)?;
    Ok(report)
}

/// Builds the report from what the scripts measured: verdicts, batches, pipeline and scaling.
#[allow(clippy::too_many_arguments)]
pub fn assemble(
    probe: &Probe,
    venv: &Path,
    references: &BenchManifest,
    opts: &Options,
    trains: Vec<std::result::Result<Train, String>>,
    loader: std::result::Result<Loader, String>,
    ddp: Option<std::result::Result<Ddp, String>>,
    errors: &mut Vec<String>,
) -> Report {
    let mut gpus = Vec::new();
    for (d, t) in probe.devices.iter().zip(trains) {
        let mut g = GpuReport {
            index: d.index,
            name: d.name.clone(),
            capability: format!("{}.{}", d.capability.0, d.capability.1),
            memory_mib: d.memory_mib,
            verdicts: Vec::new(),
            batches: Vec::new(),
            measured: None,
            error: None,
        };
        match t {
            Err(e) => {
                errors.push(format!("GPU {}: {e}", d.index));
                g.error = Some(e);
            }
            Ok(t) => {
                if let Some(e) = &t.error {
                    errors.push(format!("GPU {}: {e}", d.index));
                    g.error = Some(e.clone());
                }
                for c in &t.configs {
                    if let Some(e) = &c.error {
                        errors.push(format!("GPU {} {}: {e}", d.index, c.name));
                    }
                }
                for s in &t.sweep {
                    if let Some(e) = &s.error {
                        errors.push(format!("GPU {} {} sweep: {e}", d.index, s.config));
                    }
                }
                errors.extend(t.errors.iter().map(|e| format!("GPU {}: {e}", d.index)));
                g.verdicts = judge_gpu(d, &t, references);
                g.batches = batches(&t, opts.effective_batch);
                g.measured = Some(t);
            }
        }
        gpus.push(g);
    }
    let loader = match loader {
        Ok(l) => {
            if let Some(e) = &l.error {
                errors.push(format!("input pipeline: {e}"));
            }
            errors.extend(l.errors.iter().map(|e| format!("input pipeline: {e}")));
            LoaderReport {
                verdict: pipeline::judge_loader(&l),
                error: l.error.clone(),
                measured: Some(l),
            }
        }
        Err(e) => {
            errors.push(format!("input pipeline: {e}"));
            LoaderReport {
                verdict: None,
                measured: None,
                error: Some(e),
            }
        }
    };
    let ddp = ddp_report(ddp, &gpus, probe.devices.len(), errors);
    Report {
        schema_version: SCHEMA_VERSION,
        ok: errors.is_empty(),
        quick: opts.quick,
        venv: venv.to_owned(),
        software: probe.clone(),
        tolerance_pct: references.tolerance_pct,
        gpus,
        loader,
        ddp,
        report: opts.out_dir.join(REPORT_FILE),
        plot: None,
        errors: errors.clone(),
    }
}

/// The batch of each precision class's reference (`amp`, `tf32`, `fp32`) for a workload.
fn reference_batches(refs: &[&Reference], workload: Workload) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for r in refs.iter().filter(|r| r.workload == workload) {
        let class = if r.precision.starts_with("amp") {
            "amp"
        } else {
            r.precision.as_str()
        };
        m.entry(class).or_insert(r.batch.into());
    }
    serde_json::Value::Object(m)
}

fn judge_gpu(d: &ProbeDevice, t: &Train, references: &BenchManifest) -> Vec<verdict::Verdict> {
    let refs = references.for_gpu(&d.name);
    let cl_ips = t
        .configs
        .iter()
        .find(|c| c.is_amp() && c.channels_last)
        .and_then(|c| c.train.as_ref())
        .map(|r| r.images_per_s);
    let mut out = Vec::new();
    for c in &t.configs {
        let ctx = verdict::Context {
            gpu: &d.name,
            static_: t.static_.as_ref(),
            idle_util_before: t.idle_util_before,
            other_processes: t.other_processes.as_deref(),
            tf32: t.tf32,
            cc_major: d.capability.0,
            channels_last_ips: (c.is_amp() && !c.channels_last).then_some(cl_ips).flatten(),
        };
        for (workload, run) in [(Workload::Train, &c.train), (Workload::Infer, &c.infer)] {
            if let Some(run) = run {
                let r = verdict::reference_for(&refs, c, workload);
                out.push(verdict::judge(
                    c,
                    workload,
                    run,
                    r,
                    references.tolerance_pct,
                    &ctx,
                ));
            }
        }
    }
    out
}

fn batches(t: &Train, effective: Option<u32>) -> Vec<BatchReport> {
    t.sweep
        .iter()
        .map(|s| {
            let own = t
                .configs
                .iter()
                .find(|c| c.name == s.config)
                .and_then(|c| c.train.as_ref())
                .map_or(256, |r| r.batch);
            BatchReport {
                config: s.config.clone(),
                largest_fit: s.largest_fit,
                smallest_oom: s.smallest_oom,
                limit: s.limit.clone(),
                accumulation: batch::accumulation(s, effective.unwrap_or(own)),
            }
        })
        .collect()
}

fn ddp_report(
    ddp: Option<std::result::Result<Ddp, String>>,
    gpus: &[GpuReport],
    count: usize,
    errors: &mut Vec<String>,
) -> DdpReport {
    let Some(ddp) = ddp else {
        return DdpReport {
            status: "skipped",
            note: format!("{count} GPU here: DistributedDataParallel scaling needs two or more"),
            verdict: None,
            measured: None,
        };
    };
    let d = match ddp {
        Err(e) => {
            errors.push(format!("DDP: {e}"));
            return DdpReport {
                status: "failed",
                note: e,
                verdict: None,
                measured: None,
            };
        }
        Ok(d) => d,
    };
    if let Some(e) = &d.error {
        errors.push(format!("DDP: {e}"));
        return DdpReport {
            status: "failed",
            note: e.clone(),
            verdict: None,
            measured: Some(d),
        };
    }
    // One GPU's throughput in the same configuration and batch, averaged over the GPUs.
    let singles: Vec<f64> = gpus
        .iter()
        .filter_map(|g| g.measured.as_ref())
        .filter_map(|t| {
            t.configs
                .iter()
                .find(|c| Some(&c.name) == d.config.as_ref())
                .and_then(|c| c.train.as_ref())
                .filter(|r| r.batch == d.batch_per_gpu)
                .map(|r| r.images_per_s)
        })
        .collect();
    let single = if singles.is_empty() {
        0.0
    } else {
        singles.iter().sum::<f64>() / singles.len() as f64
    };
    let verdict = pipeline::judge_ddp(&d, single);
    DdpReport {
        status: "ran",
        note: verdict.as_ref().map_or_else(
            || "no single-GPU run in the same configuration and batch to compare with".into(),
            |v| v.summary.clone(),
        ),
        verdict,
        measured: Some(d),
    }
}

fn gpu_names(devices: &[ProbeDevice]) -> String {
    let mut names: Vec<String> = Vec::new();
    for d in devices {
        if !names.contains(&d.name) {
            names.push(d.name.clone());
        }
    }
    if devices.len() > 1 && names.len() == 1 {
        format!("{}× {}", devices.len(), names[0])
    } else {
        names.join(", ")
    }
}

/// How a configuration is named in the table and the legend.
pub fn config_label(name: &str) -> String {
    let (base, cl) = match name.strip_suffix("_cl") {
        Some(b) => (b, true),
        None => (name, false),
    };
    let base = match base {
        "tf32" => "TF32".to_owned(),
        "fp32" => "FP32".to_owned(),
        other => match other.strip_prefix("amp_") {
            Some(dt) => format!("AMP {dt}"),
            None => other.to_owned(),
        },
    };
    if cl {
        format!("{base} channels-last")
    } else if name.starts_with("amp") {
        format!("{base} NCHW")
    } else {
        base
    }
}

/// The plot's lines: each GPU's sweep per configuration.
pub fn plot_series(gpus: &[GpuReport]) -> Vec<plot::Series> {
    let many = gpus.len() > 1;
    gpus.iter()
        .filter_map(|g| g.measured.as_ref().map(|t| (g.index, t)))
        .flat_map(|(i, t)| {
            t.sweep
                .iter()
                .filter(|s| !s.points.is_empty())
                .map(move |s| plot::Series {
                    label: if many {
                        format!("GPU {i} {}", config_label(&s.config))
                    } else {
                        config_label(&s.config)
                    },
                    points: s.points.iter().map(|p| (p.batch, p.images_per_s)).collect(),
                })
        })
        .collect()
}

/// Writes `report.json` atomically.
pub fn write_report(report: &Report) -> Result<()> {
    crate::world::fs::write_atomic(
        &report.report,
        &serde_json::to_vec_pretty(report).expect("the report serialises"),
        crate::world::fs::Temp::Unique,
        crate::world::fs::Durability::Fsync,
    )?;
    Ok(())
}

/// Removes scratch directories a killed run left in `dir` (only cudaup's, by their prefix).
fn remove_stale_scratch(dir: &Path) {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let stale = e.file_name().to_string_lossy().starts_with(SCRATCH_PREFIX)
            && e.file_type().is_ok_and(|t| t.is_dir());
        if stale {
            let _ = fs_err::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests;
