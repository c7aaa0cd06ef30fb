//! `cudaup fleet report DIR [--json]`: one row per host from the reports a fleet tool collected
//! (`DIR/<host>/install.json`, `verify.json`, `system.json`, as the Ansible role in
//! `scripts/ansible/` fetches them), and the hosts whose stack differs from the majority of the
//! hosts with the same GPU architectures. Exit code 0 when every host is installed, verified, not
//! waiting for a reboot and in line with its group; 1 otherwise.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use crate::error::{Error, ExitCode, Result};
use crate::fleet::{self, FleetReport, GpuInfo, HostFiles, HostRow};

use super::i18n::report::{pad, width};
use super::Style;

/// `cudaup fleet` subcommands.
#[derive(Debug, Subcommand)]
pub enum FleetCommand {
    /// One row per host from the collected reports (DIR/<host>/install.json, verify.json,
    /// system.json): GPUs, driver, CUDA, cuDNN, framework, verify result, problems; hosts whose
    /// stack differs from the majority of the hosts with the same GPUs are flagged
    #[command(
        after_help = "Examples:\n  ansible-playbook -i inventory.ini scripts/ansible/site.yml\n  cudaup fleet report scripts/ansible/reports\n  cudaup fleet report scripts/ansible/reports --json\n\n\
Exit code 0 when every host is installed, verified, not waiting for a reboot and in line with\n\
its group; 1 otherwise; 2 when DIR holds no host reports."
    )]
    Report(ReportArgs),
}

/// `cudaup fleet report` flags.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The directory with one subdirectory per host
    pub dir: PathBuf,
    /// Print the rows and flags as one JSON document
    #[arg(long)]
    pub json: bool,
    /// Also hold every host against its part of this lock file (`cudaup lock`): the hosts it
    /// does not cover, and those whose driver, CUDA, cuDNN or framework differ, are named
    #[arg(long, value_name = "FILE")]
    pub lock: Option<PathBuf>,
}

pub(super) fn run(cmd: &FleetCommand, style: &Style, out: &mut dyn Write) -> Result<ExitCode> {
    let FleetCommand::Report(args) = cmd;
    let hosts = read_dir(&args.dir)?;
    let mut report = fleet::aggregate(hosts.iter().map(fleet::host_row).collect());
    if let Some(path) = &args.lock {
        let lock = super::lock::read(path)?;
        let held =
            crate::lock::fleet::drift(&lock, &path.display().to_string(), &hosts, &report.hosts);
        report.ok &= held.drifted.is_empty();
        report.lock = Some(held);
    }
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

/// Every subdirectory of `dir` is a host; its files are read as text.
fn read_dir(dir: &Path) -> Result<Vec<HostFiles>> {
    let entries = fs_err::read_dir(dir)?;
    let mut hosts = Vec::new();
    for entry in entries {
        let entry = entry?;
        if !entry.path().is_dir() {
            continue;
        }
        let mut files = HostFiles {
            host: entry.file_name().to_string_lossy().into_owned(),
            ..Default::default()
        };
        for (name, slot) in [
            ("install.json", &mut files.install),
            ("verify.json", &mut files.verify),
            ("system.json", &mut files.system),
        ] {
            match crate::world::fs::read_regular_text(
                &entry.path().join(name),
                crate::detect::root::MAX_REPORT,
            ) {
                Ok(text) => *slot = Some(text),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => files.errors.push(format!("{name}: {e}")),
            }
        }
        hosts.push(files);
    }
    if hosts.is_empty() {
        return Err(Error::Usage(format!(
            "{}: no host reports (expected one directory per host holding install.json, verify.json and system.json, as scripts/ansible/ fetches them)",
            dir.display()
        )));
    }
    Ok(hosts)
}

/// `GeForce RTX 5090 (12.0)`, `2× NVIDIA H200 (9.0)`, joined with ` + `.
fn gpus_cell(gpus: &[GpuInfo]) -> String {
    if gpus.is_empty() {
        return "no GPU".into();
    }
    let mut seen: Vec<(String, usize)> = Vec::new();
    for g in gpus {
        let name = g.name.strip_prefix("NVIDIA ").unwrap_or(&g.name);
        let label = match &g.compute_capability {
            Some(cc) => format!("{name} ({cc})"),
            None => name.to_owned(),
        };
        match seen.iter_mut().find(|(l, _)| *l == label) {
            Some((_, n)) => *n += 1,
            None => seen.push((label, 1)),
        }
    }
    seen.into_iter()
        .map(|(l, n)| if n > 1 { format!("{n}× {l}") } else { l })
        .collect::<Vec<_>>()
        .join(" + ")
}

fn driver_cell(row: &HostRow) -> String {
    let Some(d) = &row.driver else {
        return "-".into();
    };
    let v = d.version.as_deref().unwrap_or("?");
    match d.action.as_str() {
        "keep" => v.to_owned(),
        "skip" => "-".into(),
        "manual" => format!("≥{v} (manual)"),
        other => format!("{v} ({other})"),
    }
}

/// verify's own tally: `1 failed, 1 passed, 3 skipped`.
fn verify_cell(row: &HostRow) -> String {
    let Some(v) = &row.verify else {
        return "-".into();
    };
    let mut parts = Vec::new();
    if v.failed > 0 {
        parts.push(format!("{} failed", v.failed));
    }
    parts.push(format!("{} passed", v.passed));
    if v.skipped > 0 {
        parts.push(format!("{} skipped", v.skipped));
    }
    parts.join(", ")
}

/// The human report: the table, each host's problems, the groups and the flagged hosts.
pub fn render(report: &FleetReport, style: &Style) -> String {
    // In the run's language (a zh run's stdout says the rest of the report through the message
    // table; a table header is not one sentence it could match).
    let header = [
        "host",
        "GPUs",
        "driver",
        "CUDA",
        "cuDNN",
        "framework",
        "verify",
        "problems",
    ]
    .map(|h| crate::cli::i18n::messages::translate(style.lang(), h));
    let cell = |o: &Option<String>| o.clone().unwrap_or_else(|| "-".into());
    let rows: Vec<[String; 8]> = report
        .hosts
        .iter()
        .map(|r| {
            let stack = r.stack.clone().unwrap_or(fleet::Stack {
                cuda: None,
                cudnn: None,
                framework: None,
            });
            let host = if r.differs_from_majority {
                format!("{} !", r.host)
            } else {
                r.host.clone()
            };
            [
                host,
                gpus_cell(&r.gpus),
                if r.stack.is_some() {
                    driver_cell(r)
                } else {
                    r.status.clone()
                },
                cell(&stack.cuda),
                cell(&stack.cudnn),
                cell(&stack.framework),
                verify_cell(r),
                if r.problems.is_empty() {
                    "-".into()
                } else {
                    r.problems.len().to_string()
                },
            ]
        })
        .collect();
    let mut widths = header.clone().map(|h| width(&h));
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(width(c));
        }
    }
    let line = |cells: &[String]| -> String {
        let mut l = String::from("  ");
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                l.push_str(c);
            } else {
                l.push_str(&pad(c, widths[i] + 2));
            }
        }
        l.trim_end().to_owned()
    };
    let mut o = String::new();
    let hosts = report.hosts.len();
    o.push_str(&style.heading(&format!(
        "Fleet: {hosts} host{}",
        if hosts == 1 { "" } else { "s" }
    )));
    o.push('\n');
    o.push_str(&line(&header));
    o.push('\n');
    for (row, r) in rows.iter().zip(&report.hosts) {
        let text = line(row);
        o.push_str(&if r.status == "failed" || r.status == "missing" {
            style.bad(&text)
        } else if r.differs_from_majority {
            style.warn(&text)
        } else {
            text
        });
        o.push('\n');
    }

    if report.hosts.iter().any(|r| !r.problems.is_empty()) {
        o.push_str(&format!("\n{}\n", style.heading("Problems")));
        for r in report.hosts.iter().filter(|r| !r.problems.is_empty()) {
            o.push_str(&format!("  {}\n", r.host));
            for p in &r.problems {
                o.push_str(&format!("    - {p}\n"));
            }
        }
    }

    o.push_str(&format!(
        "\n{}\n  ({})\n",
        style.heading("Stacks by GPU architecture"),
        fleet::COMPARISON_NOTE
    ));
    for g in &report.groups {
        let name = if g.architectures.is_empty() {
            "no NVIDIA GPU".to_owned()
        } else {
            g.architectures.join(" + ")
        };
        let n = g.hosts.len();
        let verdict = if n == 1 {
            "one host, nothing to compare".to_owned()
        } else if let Some(m) = &g.majority {
            if g.majority_count == n {
                format!("all {n} agree: {}", m.describe())
            } else {
                format!("{} of {n} have {}", g.majority_count, m.describe())
            }
        } else {
            format!("{n} hosts, no majority stack")
        };
        o.push_str(&format!("  {name}: {} — {verdict}\n", g.hosts.join(", ")));
    }
    if report.flagged.is_empty() {
        o.push_str("  no host differs from the majority of its group\n");
    } else {
        o.push_str(&format!(
            "\n{}\n",
            style.warn("Differs from the majority (marked ! above)")
        ));
        for f in &report.flagged {
            o.push_str(&format!("  {}: {}\n", f.host, f.message));
        }
    }
    if let Some(lock) = &report.lock {
        o.push_str(&format!(
            "\n{}\n",
            style.heading(&format!("Held against the lock {}", lock.file))
        ));
        if lock.drifted.is_empty() {
            o.push_str("  every host has its part of the lock\n");
        }
        for d in &lock.drifted {
            let part = d
                .lock_host
                .as_deref()
                .map_or_else(String::new, |h| format!(" (host {h} of the lock)"));
            o.push_str(&format!(
                "  {}{part}: {}\n",
                style.warn(&format!("{} drifted", d.host)),
                d.differences.join("; ")
            ));
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn install(cuda: &str) -> String {
        serde_json::json!({
            "status": "installed", "changed": false, "reboot_required": false,
            "plan": {"status": "ok", "components": [
                {"name": "driver", "action": "keep", "version": "575.57.08"},
                {"name": "cuda", "action": "install", "version": cuda},
                {"name": "cudnn", "action": "install", "version": "9.17.0", "cuda_variant": "12"},
            ], "reasons": [], "warnings": []},
            "toolkit": {"cuda": cuda},
        })
        .to_string()
    }

    fn host(name: &str, gpus: usize, cuda: &str) -> HostFiles {
        let gpu = serde_json::json!({"index": 0, "vendor": "nvidia", "name": "NVIDIA GeForce RTX 5090",
            "compute_capability": "12.0", "architecture": "Blackwell"});
        HostFiles {
            host: name.into(),
            install: Some(install(cuda)),
            verify: Some(r#"{"ok":true,"passed":6,"failed":0,"skipped":1,"checks":[]}"#.into()),
            system: Some(serde_json::json!({"gpus": vec![gpu; gpus]}).to_string()),
            errors: Vec::new(),
        }
    }

    #[test]
    fn the_table_and_the_flags() {
        let report = fleet::aggregate(vec![
            fleet::host_row(&host("a", 2, "12.9.1")),
            fleet::host_row(&host("b", 1, "12.9.1")),
            fleet::host_row(&host("c", 1, "12.8.1")),
        ]);
        let text = render(&report, &Style::new(false));
        let expected = "\
Fleet: 3 hosts
  host  GPUs                        driver     CUDA    cuDNN            framework  verify               problems
  a     2× GeForce RTX 5090 (12.0)  575.57.08  12.9.1  9.17.0 (cuda12)  -          6 passed, 1 skipped  -
  b     GeForce RTX 5090 (12.0)     575.57.08  12.9.1  9.17.0 (cuda12)  -          6 passed, 1 skipped  -
  c !   GeForce RTX 5090 (12.0)     575.57.08  12.8.1  9.17.0 (cuda12)  -          6 passed, 1 skipped  -
";
        assert!(text.starts_with(expected), "{text}");
        assert!(
            text.contains("  Blackwell: a, b, c — 2 of 3 have CUDA 12.9.1"),
            "{text}"
        );
        assert!(text.contains("compared only among hosts with the same GPU architectures"));
        assert!(text.contains("  c: differs from the majority of the 3 Blackwell hosts"));
        assert!(!report.ok);
    }

    #[test]
    fn an_empty_directory_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_dir(dir.path()).unwrap_err();
        assert!(err.to_string().contains("no host reports"), "{err}");
    }
}
