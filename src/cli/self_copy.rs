//! What `install` (and its dry run) says about cudaup's own copy in `$CUDAUP_HOME/bin`, and how
//! to run `cudaup` afterwards.

use std::io::Write;
use std::path::Path;

use crate::error::Result;
use crate::install::self_copy::{Action, Installed, Planned, VERSION};

use super::Style;

/// One line for the list of what an install will do.
pub fn planned(p: &Planned) -> String {
    let path = p.path.display();
    match p.action {
        Action::Installed => format!(
            "cudaup {VERSION} into {path}: a copy of this binary, which new shells find on PATH"
        ),
        Action::Replaced => format!(
            "cudaup {VERSION} into {path}: replaces {} with this binary",
            previous(p.previous_version.as_deref())
        ),
        Action::Unchanged | Action::Running => format!("cudaup in {path}: already this binary"),
        Action::CargoManaged => match &p.remove {
            Some(old) => format!(
                "cudaup stays in {path}, where `cargo install` manages it; the earlier copy {} is removed so it cannot shadow that one",
                old.display()
            ),
            None => format!("cudaup stays in {path}, where `cargo install` manages it: no copy"),
        },
        Action::Unknown => "cudaup: the OS did not say which binary runs, so no copy is made".into(),
    }
}

fn previous(version: Option<&str>) -> String {
    version.map_or_else(
        || "an earlier copy".to_owned(),
        |v| format!("the copy of cudaup {v}"),
    )
}

/// What was done, once it is done.
pub fn done(out: &mut dyn Write, style: &Style, d: &Installed) -> Result<()> {
    let path = d.path.display();
    match d.action {
        Action::Installed => writeln!(
            out,
            "{} cudaup {VERSION} in {path}",
            style.good("installed")
        )?,
        Action::Replaced => writeln!(
            out,
            "{} {} in {path} with cudaup {VERSION}",
            style.good("replaced"),
            previous(d.previous_version.as_deref())
        )?,
        Action::Unchanged | Action::Running => {
            writeln!(out, "{} cudaup {VERSION} in {path}", style.good("checked"))?
        }
        Action::CargoManaged => {
            if let Some(old) = &d.removed {
                writeln!(
                    out,
                    "{} {}: cudaup runs from {path}, which `cargo install` manages",
                    style.good("removed"),
                    old.display()
                )?;
            }
        }
        Action::Unknown => writeln!(
            out,
            "  {} the OS did not say which binary runs: cudaup made no copy of itself",
            style.warn("note:")
        )?,
    }
    Ok(())
}

/// How to run cudaup from now on, after the env step: `hooked` when startup files load the env
/// script (now or from before), `source` the line that loads it in this shell.
pub fn how_to_run(
    out: &mut dyn Write,
    d: &Installed,
    hooked: bool,
    source: &str,
    home: &Path,
) -> Result<()> {
    if !d.in_home() {
        return Ok(());
    }
    let copy = crate::install::self_copy::target(home);
    if hooked {
        writeln!(
            out,
            "  `cudaup` is on PATH in new shells; in this one: {source}"
        )?;
    } else {
        writeln!(
            out,
            "  your shell startup files are as they were: run cudaup as {}, or `{source}` puts it (and the toolkit) on PATH in a shell",
            copy.display()
        )?;
    }
    Ok(())
}
