//! `cudaup verify`: runs the checks of [`crate::verify`] and renders them (an aligned list, or
//! the JSON document). Exit code 4 when any check failed.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::catalog::Catalog;
use crate::error::{Error, ExitCode, Result};
use crate::verify::{self, Check, Context, Options, Report, Status};
use crate::world::process::Process;
use crate::world::runner::Runner;

use super::{GlobalArgs, Style};

/// `cudaup verify` flags.
#[derive(Debug, Clone, Args)]
pub struct VerifyArgs {
    /// Print every check as one JSON document
    #[arg(long)]
    pub json: bool,
    /// Also measure, per GPU, matmul TFLOP/s (bf16, fp16, fp32 at 8192×8192) and pinned
    /// host↔device bandwidth, through the venv's torch
    #[arg(long)]
    pub bench: bool,
    /// Check the framework in this venv instead of the ones cudaup installed (repeatable)
    #[arg(long = "venv", value_name = "DIR")]
    pub venvs: Vec<PathBuf>,
    /// Also run addKernel inside a container through the path `cudaup container setup` chose,
    /// and compare the GPU UUIDs inside with the host's (`cudaup container verify`)
    #[arg(long)]
    pub container: bool,
    /// Check this CUDA toolkit instead of the active one [default: $CUDAUP_HOME/active.json, else
    /// the nvcc on PATH]
    #[arg(long, value_name = "DIR")]
    pub toolkit: Option<PathBuf>,
}

pub(super) fn run(
    args: &VerifyArgs,
    global: &GlobalArgs,
    process: &Process,
    runner: &dyn Runner,
    catalog: &Catalog,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    if let Some(dir) = &args.toolkit {
        if !dir.is_dir() {
            return Err(Error::Usage(format!(
                "--toolkit {}: not a directory",
                dir.display()
            )));
        }
    }
    for dir in &args.venvs {
        let venv = crate::install::python::Venv { dir: dir.clone() };
        if !venv.exists() || !venv.python().is_file() {
            return Err(Error::Usage(format!(
                "--venv {}: not a Python virtual environment (no pyvenv.cfg and bin/python)",
                dir.display()
            )));
        }
    }
    let nvml_library = (process.var(crate::world::vars::CUDAUP_NO_NVML) != Some("1")).then(|| {
        process
            .var(crate::world::vars::CUDAUP_NVML_LIBRARY)
            .unwrap_or(crate::detect::gpu::nvml::default_library())
            .to_owned()
    });
    let nvml = move || {
        nvml_library
            .as_deref()
            .and_then(|lib| crate::detect::gpu::nvml::probe(lib).ok())
    };
    let pci_gpus = || {
        let root = crate::detect::Root::live();
        crate::detect::gpu::pci::gpus_from_functions(
            &crate::detect::gpu::pci::scan(&root),
            &catalog.gpus,
        )
    };
    let ctx = Context {
        process,
        runner,
        gpu_table: &catalog.gpus,
        nvml: &nvml,
        pci_gpus: &pci_gpus,
        components: &catalog.components,
    };
    let mut report = verify::verify(
        &ctx,
        &Options {
            toolkit: args.toolkit.clone(),
            venvs: args.venvs.clone(),
            bench: args.bench,
        },
    );
    if args.container {
        let nvcc = args
            .toolkit
            .as_ref()
            .map(|t| crate::model::layout::Prefix::at(t).nvcc());
        let inside = super::container::checks_in_container(
            &super::root::RootArgs::default(),
            process,
            runner,
            None,
            nvcc,
        )?;
        report.append(inside);
    }
    if args.json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&report).expect("the report serialises")
        )?;
    } else {
        write!(out, "{}", render(&report, style, global.quiet))?;
    }
    Ok(if report.ok {
        ExitCode::Ok
    } else {
        ExitCode::Verification
    })
}

/// The human report: one aligned row per check (✓ pass, ✗ fail, - skipped), its evidence
/// under it, and the tally. `quiet` keeps only the failures.
pub fn render(report: &Report, style: &Style, quiet: bool) -> String {
    let shown: Vec<&Check> = report
        .checks
        .iter()
        .filter(|c| !quiet || c.status == Status::Fail)
        .collect();
    let width = shown
        .iter()
        .map(|c| c.id.chars().count())
        .max()
        .unwrap_or(0)
        + 2;
    let mut o = String::new();
    for c in shown {
        let mark = match c.status {
            Status::Pass => style.good("✓"),
            Status::Fail => style.bad("✗"),
            Status::Skip => style.dim("-"),
        };
        let mut lines = c.evidence.iter();
        let first = lines.next().map(String::as_str).unwrap_or("");
        let first = match c.status {
            Status::Skip => style.dim(first),
            _ => first.to_owned(),
        };
        o.push_str(&format!("{mark} {:<width$}{first}\n", c.id));
        for l in lines {
            o.push_str(&format!("  {:<width$}{}\n", "", style.dim(l)));
        }
    }
    if quiet {
        return o;
    }
    let w = style.words();
    let mut tally = Vec::new();
    if report.failed > 0 {
        tally.push(style.bad(&(w.failed)(report.failed)));
    }
    tally.push((w.passed)(report.passed));
    if report.skipped > 0 {
        tally.push((w.skipped)(report.skipped));
    }
    o.push_str(&format!("\n{}\n", tally.join(w.comma)));
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_aligned_and_marked() {
        let report = Report {
            schema_version: 1,
            ok: false,
            passed: 1,
            failed: 1,
            skipped: 1,
            toolkit: None,
            venvs: vec![],
            checks: vec![
                Check::pass(
                    "driver",
                    vec![
                        "NVIDIA driver 580.159.04, 1 GPU".into(),
                        "[0] NVIDIA H200".into(),
                    ],
                ),
                Check::fail(
                    "addkernel:0",
                    vec!["nvcc -arch=sm_90 could not build".into()],
                ),
                Check::skip("cudnn", vec!["not installed".into()]),
            ],
        };
        let text = render(&report, &Style::new(false), false);
        assert_eq!(
            text,
            "✓ driver       NVIDIA driver 580.159.04, 1 GPU\n               [0] NVIDIA H200\n✗ addkernel:0  nvcc -arch=sm_90 could not build\n- cudnn        not installed\n\n1 failed, 1 passed, 1 skipped\n"
        );
        let quiet = render(&report, &Style::new(false), true);
        assert_eq!(quiet, "✗ addkernel:0  nvcc -arch=sm_90 could not build\n");
    }
}
