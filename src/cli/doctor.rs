//! `cudaup doctor`: detects the machine, reads the receipts, runs every check and renders the
//! findings (human or JSON); `--explain` prints advice instead.

use std::io::Write;

use clap::{Args, ValueEnum};

use crate::catalog::Catalog;
use crate::detect::{self, Root};
use crate::doctor::{self, explain::Topic, Facts, Inputs, Report};
use crate::error::{ExitCode, Result};
use crate::install::receipts::Receipts;
use crate::model::finding::Severity;
use crate::world::process::Process;
use crate::world::runner::Runner;

use super::i18n::report::pad;
use super::{GlobalArgs, Style};

/// What the exit code means, for `--help`.
pub const AFTER_HELP: &str = "Examples:\n  cudaup doctor\n  cudaup doctor --json\n  cudaup doctor --deep\n  cudaup doctor --system-root ./captured-tree\n  cudaup doctor --explain oom\n\n\
Every finding has a stable id (usable with `cudaup repair --fix ID`), a severity, the evidence and the fix.\n\
Exit codes: 0 no error-severity finding (warnings and notes allowed), 1 at least one error, 2 bad usage.";

/// `cudaup doctor` flags.
#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
#[command(mut_arg("system_root", |a| a.help("Read the machine's files under DIR instead of / and run no command and no NVML (environment, compiler and disk checks are skipped)")))]
pub struct DoctorArgs {
    /// Print {"findings": [{"id","severity","message","evidence","fix"}], "summary": {...}}
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub root: super::root::RootArgs,
    /// Also hash every file of every toolkit cudaup installed against its receipt (plain
    /// doctor hashes only executables and shared libraries): slower, reads gigabytes
    #[arg(long)]
    pub deep: bool,
    /// Print practical advice instead of checking: oom (CUDA out of memory) or util (low GPU
    /// utilisation)
    #[arg(long, value_enum, value_name = "TOPIC")]
    pub explain: Option<ExplainTopic>,
}

/// `--explain` topics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExplainTopic {
    /// CUDA out of memory: batch size, accumulation, bf16, checkpointing, fragmentation
    Oom,
    /// Low GPU utilisation: data loading, preprocessing, synchronisations, profiling
    Util,
}

impl From<ExplainTopic> for Topic {
    fn from(t: ExplainTopic) -> Self {
        match t {
            ExplainTopic::Oom => Topic::Oom,
            ExplainTopic::Util => Topic::Util,
        }
    }
}

pub(super) fn run(
    args: &DoctorArgs,
    global: &GlobalArgs,
    process: &Process,
    runner: &dyn Runner,
    catalog: &Catalog,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    if let Some(topic) = args.explain {
        let topic = Topic::from(topic);
        if args.json {
            let j = serde_json::json!({"explain": topic.name(), "text": topic.text()});
            writeln!(out, "{}", serde_json::to_string_pretty(&j).expect("json"))?;
        } else {
            write!(out, "{}", topic.text())?;
        }
        return Ok(ExitCode::Ok);
    }
    let root = args.root.root()?;
    let mut report = diagnose(process, runner, catalog, root);
    if args.deep {
        let receipts = process.cudaup_home().map(|h| Receipts::load(&h));
        doctor::deep::add_to(&mut report, &receipts.unwrap_or_default());
    }
    if args.json {
        let text = serde_json::to_string_pretty(&report.document()).expect("json");
        writeln!(out, "{text}")?;
    } else {
        write!(out, "{}", render(&report, style, global.quiet))?;
    }
    Ok(if report.has_errors() {
        ExitCode::Failure
    } else {
        ExitCode::Ok
    })
}

/// Detects `root`, gathers the other inputs and runs every check.
pub fn diagnose(process: &Process, runner: &dyn Runner, catalog: &Catalog, root: Root) -> Report {
    let live = root.is_live();
    let detection = detect::detect(
        process,
        runner,
        catalog,
        &super::detect::options(process, root.clone(), false),
    );
    let facts = Facts::gather(&root, process, &detection.system);
    let receipts = process
        .cudaup_home()
        .map(|h| Receipts::load(&h))
        .unwrap_or_default();
    let scratch = tempfile::tempdir();
    let scratch_path = scratch
        .as_ref()
        .map(|d| d.path().to_path_buf())
        .unwrap_or_else(|_| std::env::temp_dir());
    let inputs = Inputs {
        system: &detection.system,
        facts: &facts,
        receipts: &receipts,
        process,
        catalog,
        live,
    };
    doctor::diagnose(&inputs, &detection.findings, runner, &scratch_path)
}

/// The human report: one block per finding (severity, id, message, evidence, fix), then the
/// summary. `quiet` keeps only the errors.
pub fn render(report: &Report, style: &Style, quiet: bool) -> String {
    let w = style.words();
    let mut o = String::new();
    if !quiet {
        o.push_str(&style.heading(w.doctor));
        o.push('\n');
        if report.findings.is_empty() {
            o.push_str(&format!("  {}\n", style.good(w.nothing_wrong)));
        }
    }
    for d in &report.findings {
        if quiet && d.severity() != Severity::Error {
            continue;
        }
        let tag = match d.severity() {
            Severity::Error => style.bad(w.error),
            Severity::Warning => style.warn(w.warning),
            Severity::Info => style.dim(w.note),
        };
        o.push_str(&format!("  {tag} [{}]: {}\n", d.id(), d.finding.message));
        let mut block = |label: &str, lines: &mut dyn Iterator<Item = &str>| {
            for (i, line) in lines.enumerate() {
                let l = if i == 0 { label } else { "" };
                o.push_str(&format!("    {} {line}\n", style.dim(&pad(l, 9))));
            }
        };
        block(w.evidence, &mut d.evidence.iter().map(String::as_str));
        if let Some(fix) = &d.finding.fix {
            block(w.fix, &mut fix.lines());
        }
    }
    if quiet {
        return o;
    }
    let (e, warnings, n) = (
        report.count(Severity::Error),
        report.count(Severity::Warning),
        report.count(Severity::Info),
    );
    o.push('\n');
    let summary = (w.doctor_summary)(e, warnings, n);
    o.push_str(&if e > 0 {
        style.bad(&summary)
    } else {
        style.good(&summary)
    });
    o.push('\n');
    for s in &report.skipped {
        o.push_str(&format!("{}\n", style.dim(&(w.skipped_checks)(s))));
    }
    o
}
