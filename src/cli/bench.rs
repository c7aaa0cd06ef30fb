//! `cudaup bench`: runs [`crate::bench`] with progress on stderr, then prints the table (or the
//! JSON document) and names the report and the plot. Exit codes: 0 when everything was
//! measured (a verdict below the reference is a finding, not a failure), 1 when a part could not
//! be measured (the report says which), 5 when nothing can be benched here (no GPU, no torch,
//! no venv), 2 for bad flags.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::bench::{self, config_label, verdict::Status, Options, Report};
use crate::catalog::{Catalog, Workload};
use crate::error::{ExitCode, Result};
use crate::world::process::Process;
use crate::world::runner::Runner;

use super::{GlobalArgs, Style};

/// `cudaup bench` flags.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Bench the torch in this venv [default: the PyTorch venv cudaup installed]
    #[arg(long, value_name = "DIR")]
    pub venv: Option<PathBuf>,
    /// Print the report as one JSON document (progress still goes to stderr)
    #[arg(long)]
    pub json: bool,
    /// Short timings, a 20,000-image dataset and a coarser largest-batch search (minutes, not
    /// tens of minutes)
    #[arg(long)]
    pub quick: bool,
    /// Images per step where no reference figure sets the batch
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub batch: u32,
    /// The effective batch you want: the gradient accumulation that reaches it where it does not
    /// fit [default: each run's batch]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1048576))]
    pub effective_batch: Option<u32>,
    /// The largest batch the sweep tries before it stops growing
    #[arg(long, value_name = "N", default_value_t = 8192, value_parser = clap::value_parser!(u32).range(32..=262144))]
    pub max_batch: u32,
    /// Where report.json and throughput.png go [default: $CUDAUP_HOME/bench/<UTC date-time>]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// What `--help` adds after the flags.
pub const AFTER_HELP: &str = "Examples:\n  cudaup bench --quick\n  cudaup bench --venv /opt/torch/.venv --json > bench.json\n  cudaup bench --effective-batch 4096 --out ./bench-run\n\n\
Per GPU: ResNet-50 training and inference on synthetic 224x224 images in TF32/FP32, AMP (bf16, or\n\
fp16 with a GradScaler) and AMP channels-last, each against NVIDIA's published figure for that GPU\n\
(manifests/bench.toml) with the likely cause of a shortfall (NVML clocks, power, throttle\n\
reasons, other processes, CPU time); the largest batch that fits and the throughput curve; a\n\
CIFAR-10-shaped dataset through a DataLoader at 0, 2, 4, ... workers; DistributedDataParallel\n\
scaling on several GPUs (NCCL, NCCL_NVLS_ENABLE=0).\n\n\
Exit codes: 0 measured, 1 a part could not be measured, 2 bad flags, 5 nothing to bench here\n\
(no GPU, no torch, no venv).";

pub(super) fn run(
    args: &BenchArgs,
    global: &GlobalArgs,
    process: &Process,
    runner: &dyn Runner,
    catalog: &Catalog,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let out_dir = match &args.out {
        Some(d) => process.cwd().join(d),
        None => crate::install::home::Home::of(process)?
            .bench()
            .join(utc_stamp(std::time::SystemTime::now())),
    };
    let opts = Options {
        venv: args.venv.as_ref().map(|v| process.cwd().join(v)),
        quick: args.quick,
        batch: args.batch,
        effective_batch: args.effective_batch,
        max_batch: args.max_batch,
        out_dir,
    };
    // Only a refusal asks it: detecting the machine costs a second.
    let offer = || {
        let system = super::detect::detect_live(process, runner, catalog, false).system;
        crate::resolve::offer::offer(&system, &Default::default(), catalog)
    };
    let ctx = bench::Context {
        process,
        runner,
        references: &catalog.bench,
        offer: &offer,
    };
    let mut stderr = std::io::stderr();
    let quiet = global.quiet;
    let mut progress = |line: &str| {
        if !quiet {
            let _ = writeln!(stderr, "{} {line}", style.dim("…"));
        }
    };
    let report = bench::run(&ctx, &opts, &mut progress)?;
    if args.json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&report).expect("the report serialises")
        )?;
    } else {
        write!(out, "{}", render(&report, style))?;
    }
    Ok(if report.ok {
        ExitCode::Ok
    } else {
        ExitCode::Failure
    })
}

/// `YYYYMMDD-HHMMSS` in UTC.
fn utc_stamp(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (proleptic Gregorian), by 400-year eras.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The human report.
pub fn render(r: &Report, style: &Style) -> String {
    let mut o = String::new();
    let sw = &r.software;
    o.push_str(&format!(
        "torch {} (CUDA {}, cuDNN {}), torchvision {}, Python {} in {}{}\n",
        sw.torch.as_deref().unwrap_or("?"),
        sw.cuda.as_deref().unwrap_or("?"),
        sw.cudnn.map_or("?".into(), |v| v.to_string()),
        sw.torchvision.as_deref().unwrap_or("?"),
        sw.python.as_deref().unwrap_or("?"),
        r.venv.display(),
        if r.quick { " — quick run" } else { "" }
    ));
    for g in &r.gpus {
        o.push_str(&format!(
            "\n{}\n",
            &format!(
                "GPU {}: {} (compute {}, {} GiB)",
                g.index,
                g.name,
                g.capability,
                g.memory_mib / 1024
            )
        ));
        if let Some(e) = &g.error {
            o.push_str(&format!("  {} {e}\n", style.bad("could not measure:")));
        }
        if !g.verdicts.is_empty() {
            o.push_str(&format!(
                "  {:<33} {:>6} {:>9} {:>10}  {}\n",
                "ResNet-50", "batch", "images/s", "reference", "verdict"
            ));
        }
        for v in &g.verdicts {
            let what = format!(
                "{} {}",
                match v.workload {
                    Workload::Train => "train",
                    Workload::Infer => "infer",
                },
                config_label(&v.config)
            );
            let reference = v
                .reference
                .as_ref()
                .map_or("—".to_owned(), |x| format!("{:.0}", x.images_per_s));
            let verdict = match (v.status, v.ratio) {
                (Status::Above, Some(q)) => style.good(&format!(
                    "{:+.0}%, as fast as it should be",
                    (q - 1.0) * 100.0
                )),
                (Status::Within, Some(q)) => style.good(&format!(
                    "{:+.0}%, within {:.0}%",
                    (q - 1.0) * 100.0,
                    r.tolerance_pct
                )),
                (Status::Below, Some(q)) => {
                    style.bad(&format!("{:+.0}%, below", (q - 1.0) * 100.0))
                }
                _ => style.dim("no published figure"),
            };
            o.push_str(&format!(
                "  {what:<33} {:>6} {:>9.0} {reference:>10}  {verdict}\n",
                v.batch, v.images_per_s
            ));
            for c in &v.causes {
                o.push_str(&format!(
                    "      {} {}\n",
                    style.dim(&format!("{}:", c.kind)),
                    c.evidence
                ));
            }
        }
        let refs: Vec<&crate::catalog::Reference> = {
            let mut seen: Vec<&crate::catalog::Reference> = Vec::new();
            for x in g.verdicts.iter().filter_map(|v| v.reference.as_ref()) {
                if !seen.contains(&x) {
                    seen.push(x);
                }
            }
            seen
        };
        for x in refs {
            o.push_str(&format!(
                "  {} {} {} {:?} {:.0} images/s at batch {} ({}): {}\n",
                style.dim("reference:"),
                x.gpu,
                x.precision,
                x.workload,
                x.images_per_s,
                x.batch,
                x.framework,
                x.source.split_whitespace().next().unwrap_or("")
            ));
        }
        for b in &g.batches {
            let fit = match (b.largest_fit, b.smallest_oom) {
                (Some(l), Some(m)) => match b.limit.as_deref() {
                    None | Some("out of memory") => {
                        format!("largest batch that fits {l} (out of memory at {m})")
                    }
                    Some(why) => format!("largest batch that runs {l} (batch {m} failed: {why})"),
                },
                (Some(l), None) => format!("batch {l} fits (the largest tried)"),
                (None, _) => "not even batch 32 fits".into(),
            };
            o.push_str(&format!("  {:<33} {fit}\n", config_label(&b.config)));
            if let Some(a) = &b.accumulation {
                o.push_str(&format!("  {:<33} {}\n", "", style.dim(&a.advice)));
            }
        }
    }
    o.push_str(&format!(
        "\n{}\n",
        "Input pipeline (CIFAR-10-shaped PNGs, DataLoader)"
    ));
    match (&r.loader.verdict, &r.loader.measured) {
        (Some(v), Some(m)) => {
            o.push_str(&format!("  {}\n", v.summary));
            if let Some(c) = &m.ceiling {
                o.push_str(&format!(
                    "  {:>8} {:>9.0} images/s{}\n",
                    "GPU only",
                    c.images_per_s,
                    busy(c.nvml.as_ref())
                ));
            }
            for run in &m.runs {
                o.push_str(&format!(
                    "  {:>8} {:>9.0} images/s{}\n",
                    format!("{} wkr", run.workers),
                    run.images_per_s,
                    busy(run.nvml.as_ref())
                ));
            }
        }
        _ => o.push_str(&format!(
            "  {} {}\n",
            style.bad("not measured:"),
            r.loader
                .error
                .as_deref()
                .unwrap_or("no DataLoader run finished")
        )),
    }
    o.push_str(&format!(
        "\n{}\n  {}: {}\n",
        "Several GPUs (DistributedDataParallel)", r.ddp.status, r.ddp.note
    ));
    if !r.errors.is_empty() {
        o.push_str(&format!("\n{}\n", style.bad("Not measured:")));
        for e in &r.errors {
            o.push_str(&format!("  {e}\n"));
        }
    }
    o.push_str(&format!("\nreport: {}\n", r.report.display()));
    if let Some(p) = &r.plot {
        o.push_str(&format!("plot:   {}\n", p.display()));
    }
    o
}

fn busy(w: Option<&crate::bench::measure::Window>) -> String {
    w.and_then(|w| w.util_mean)
        .map_or(String::new(), |u| format!(", GPU busy {u:.0}%"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_stamps() {
        let t = |s: u64| utc_stamp(std::time::UNIX_EPOCH + std::time::Duration::from_secs(s));
        assert_eq!(t(0), "19700101-000000");
        assert_eq!(t(951_782_400), "20000229-000000");
        assert_eq!(t(1_764_578_645), "20251201-084405");
    }
}
