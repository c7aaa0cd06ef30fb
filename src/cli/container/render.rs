//! What the `container` commands print for a person: the survey (host, engines, the path each
//! takes and why), setup's plan, and what uninstall put back. `--json` prints the documents
//! themselves instead.

use std::io::Write;

use crate::cli::Style;
use crate::container::{self, Survey};
use crate::error::Result;

/// Lines for what [`crate::install::host_files::undo`] did (also `cudaup uninstall`'s).
pub(crate) fn render_undone(
    undone: &[crate::install::host_files::Undone],
    style: &Style,
    out: &mut dyn Write,
) -> Result<()> {
    if undone.is_empty() {
        writeln!(out, "container setup changed no file: nothing to put back")?;
    }
    for u in undone {
        match &u.why {
            Some(why) => writeln!(out, "  {} {} ({why})", style.warn("kept"), u.path.display())?,
            None => writeln!(out, "  {} {}", u.action, u.path.display())?,
        }
    }
    Ok(())
}

pub(super) fn render_setup(
    survey: &Survey,
    plan: &container::setup::Plan,
    style: &Style,
    out: &mut dyn Write,
) -> Result<()> {
    render_plan(survey, style, out)?;
    writeln!(out)?;
    writeln!(out, "{}", style.heading("Setup"))?;
    for n in &plan.notices {
        writeln!(out, "  {} {n}", style.warn("note"))?;
    }
    if plan.edits.is_empty() && plan.commands.is_empty() {
        writeln!(out, "  nothing to change: every engine is set up")?;
    }
    for e in &plan.edits {
        let verb = if e.bytes.is_some() { "write" } else { "remove" };
        let root = if e.needs_root { " (needs root)" } else { "" };
        writeln!(out, "  {verb} {} — {}{root}", e.path.display(), e.what)?;
    }
    if let Some(t) = &plan.toolkit {
        let files: Vec<String> = t
            .key
            .iter()
            .map(|k| {
                format!(
                    "fetch NVIDIA's signing key {} (curl, as you) into {}",
                    k.url,
                    k.keyring.display()
                )
            })
            .chain(
                t.repo_file
                    .iter()
                    .map(|r| format!("write {}", r.path.display())),
            )
            .collect();
        let root = if plan.toolkit_needs_root {
            " (needs root)"
        } else {
            ""
        };
        writeln!(
            out,
            "  toolkit {}: with --yes, {}{root}, then:",
            t.version,
            if files.is_empty() {
                "add NVIDIA's repository".to_owned()
            } else {
                files.join(", ")
            }
        )?;
    }
    for c in &plan.commands {
        writeln!(out, "  $ {}", crate::install::driver::shell_line(c))?;
    }
    for l in &plan.run_lines {
        writeln!(out, "  then: {l}")?;
    }
    Ok(())
}

pub(super) fn render_plan(s: &Survey, style: &Style, out: &mut dyn Write) -> Result<()> {
    let h = &s.host;
    writeln!(out, "{}", style.heading("Host"))?;
    writeln!(
        out,
        "  driver      {}",
        h.driver_version.as_deref().unwrap_or("not loaded")
    )?;
    writeln!(out, "  cgroups     {:?}", h.cgroups)?;
    writeln!(out, "  SELinux     {:?}", h.selinux)?;
    match &h.wsl {
        Some(w) => writeln!(
            out,
            "  WSL         {} (/dev/dxg {}, libdxcore.so {})",
            w.version,
            if w.dxg { "present" } else { "missing" },
            if w.libdxcore { "present" } else { "missing" }
        )?,
        None => writeln!(out, "  WSL         no")?,
    }
    writeln!(
        out,
        "  user        {}",
        if h.root { "root" } else { "not root" }
    )?;
    writeln!(out)?;
    writeln!(out, "{}", style.heading("Engines"))?;
    if s.engines.is_empty() {
        writeln!(
            out,
            "  none found on PATH (docker, podman): install one (Podman needs no daemon and no root: `apt-get install podman`)"
        )?;
    }
    for (e, c) in s.engines.iter().zip(&s.choices) {
        let cgroups = match (&e.cgroup_version, &e.cgroup_driver) {
            (Some(v), Some(d)) => format!(", cgroup v{v} ({d})"),
            _ => String::new(),
        };
        writeln!(out, "  {}{cgroups}", style.good(&e.label()))?;
        let path = match &c.path {
            container::choice::Path::Cdi { spec_dir, .. } => {
                format!("CDI, spec in {}", spec_dir.display())
            }
            container::choice::Path::Legacy { .. } => {
                "legacy `nvidia` runtime (NVIDIA Container Toolkit)".to_owned()
            }
            container::choice::Path::None => "nothing to set up".to_owned(),
        };
        writeln!(out, "    path      {path}")?;
        for r in &c.reasons {
            writeln!(out, "    {} {r}", style.dim("because"))?;
        }
        if !c.run_flags.is_empty() {
            writeln!(
                out,
                "    run with  {} run {} IMAGE",
                e.kind.program(),
                c.run_flags.join(" ")
            )?;
        }
    }
    Ok(())
}
