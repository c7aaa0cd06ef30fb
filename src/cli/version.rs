//! `cudaup --version`: the version, where the running binary lives, and whether it is the copy
//! in `$CUDAUP_HOME/bin` that new shells find (and that copy's version when it is another build).

use std::io::Write;
use std::path::Path;

use crate::error::{ExitCode, Result};
use crate::install::self_copy::{self, Found, Whereabouts, VERSION};
use crate::world::process::Process;

/// Prints the version report.
pub fn run(process: &Process, out: &mut dyn Write) -> Result<ExitCode> {
    // The first line is what scripts parse: `cudaup X.Y.Z`, as clap printed it.
    writeln!(out, "cudaup {VERSION}")?;
    let Some(home) = process.cudaup_home() else {
        return Ok(ExitCode::Ok);
    };
    for line in lines(&self_copy::whereabouts(process, &home), &home) {
        writeln!(out, "{line}")?;
    }
    Ok(ExitCode::Ok)
}

fn lines(w: &Whereabouts, home: &Path) -> Vec<String> {
    let copy = self_copy::target(home);
    match w {
        Whereabouts::Unknown => vec![format!(
            "  this binary:    unknown (the OS did not say); the installed copy is {}",
            copy.display()
        )],
        Whereabouts::Installed(path) => vec![format!(
            "  this binary:    {} (the installed copy: new shells run this one)",
            path.display()
        )],
        Whereabouts::Cargo(path) => vec![format!(
            "  this binary:    {} (installed by `cargo install`, which manages it: cudaup makes no copy of it)",
            path.display()
        )],
        Whereabouts::Elsewhere {
            running,
            copy,
            found,
        } => {
            let state = match found {
                Found::Absent => format!(
                    "{}: none yet (`cudaup install` or `cudaup wizard` puts this binary there)",
                    copy.display()
                ),
                Found::Running => format!("{} (this binary)", copy.display()),
                Found::Ours(c) if c.current => format!("{} (the same build as this one)", copy.display()),
                Found::Ours(c) => format!(
                    "{} ({}, another build: `cudaup install` or `cudaup repair --fix self-copy` replaces it with this one)",
                    copy.display(),
                    c.version
                        .as_deref()
                        .map_or_else(|| "an earlier cudaup".to_owned(), |v| format!("cudaup {v}"))
                ),
                Found::Foreign(why) => format!(
                    "{} is not a copy cudaup installed ({why})",
                    copy.display()
                ),
            };
            vec![
                format!(
                    "  this binary:    {} (not the installed copy)",
                    running.display()
                ),
                format!("  installed copy: {state}"),
            ]
        }
    }
}

// Its one test uses Unix paths and a binary named `cudaup`.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::install::self_copy::Copy;
    use std::path::PathBuf;

    #[test]
    fn each_case_says_where_and_which() {
        let home = Path::new("/h/.local/share/cudaup");
        let copy = self_copy::target(home);
        let running = PathBuf::from("/src/target/release/cudaup");
        let other = |found| Whereabouts::Elsewhere {
            running: running.clone(),
            copy: copy.clone(),
            found,
        };
        let text = |w: &Whereabouts| lines(w, home).join("\n");
        assert!(text(&Whereabouts::Installed(copy.clone()))
            .contains("(the installed copy: new shells run this one)"));
        let t = text(&other(Found::Absent));
        assert!(
            t.contains("/src/target/release/cudaup (not the installed copy)"),
            "{t}"
        );
        assert!(
            t.contains("/h/.local/share/cudaup/bin/cudaup: none yet"),
            "{t}"
        );
        let ours = |current, version: Option<&str>| {
            Found::Ours(Copy {
                sha256: "ab".repeat(32),
                size: 1,
                version: version.map(str::to_owned),
                current,
            })
        };
        assert!(text(&other(ours(true, Some(VERSION)))).contains("(the same build as this one)"));
        let t = text(&other(ours(false, Some("0.0.9"))));
        assert!(
            t.contains("(cudaup 0.0.9, another build: `cudaup install`"),
            "{t}"
        );
        assert!(text(&other(ours(false, None))).contains("(an earlier cudaup, another build"));
        assert!(text(&other(Found::Foreign("a symlink".into())))
            .contains("is not a copy cudaup installed (a symlink)"));
        assert!(
            text(&Whereabouts::Cargo(PathBuf::from("/h/.cargo/bin/cudaup")))
                .contains("`cargo install`")
        );
    }
}
