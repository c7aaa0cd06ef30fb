//! cudaup's installed copy (`$CUDAUP_HOME/bin/cudaup`, what new shells run): gone, edited since
//! cudaup wrote it, another build than the running one, never made (an older cudaup installed the
//! stack), or in the way of the binary `cargo install` manages.

use crate::install::self_copy::{self, Health, VERSION};
use crate::model::finding::Severity;

use super::{repair, Diagnosis, Inputs};

/// The installed-copy check.
pub fn check(inputs: &Inputs<'_>) -> Option<Diagnosis> {
    let home = inputs.process.cudaup_home()?;
    let r = inputs.receipts;
    let stack_here = !r.toolkits.is_empty() || !r.venvs.is_empty() || !r.shell.hooks.is_empty();
    let fix = || {
        format!(
            "{}   # copies this cudaup there (what `cudaup install` does too)",
            repair("self-copy")
        )
    };
    let receipt = format!("receipt {}", self_copy::receipt_path(&home).display());
    let health = match self_copy::health(inputs.process, &home, stack_here) {
        Ok(h) => h,
        Err(e) => {
            return Some(
                Diagnosis::new(
                    "self-copy-unreadable",
                    Severity::Warning,
                    format!(
                        "cudaup's installed copy {} cannot be checked",
                        self_copy::target(&home).display()
                    ),
                )
                .evidence(e.to_string()),
            )
        }
    };
    Some(match health {
        Health::Fine => return None,
        Health::Missing { path, version } => Diagnosis::new(
            "self-copy-missing",
            Severity::Warning,
            format!(
                "cudaup's installed copy {} is gone: new shells find no `cudaup`",
                path.display()
            ),
        )
        .evidence(format!("{receipt} records cudaup {version} there"))
        .fix(fix()),
        Health::Changed { path, why } => Diagnosis::new(
            "self-copy-changed",
            Severity::Warning,
            format!(
                "{} is no longer the copy of cudaup that cudaup installed: new shells run whatever it is now",
                path.display()
            ),
        )
        .evidence(why)
        .evidence(receipt)
        .fix(format!(
            "if that file is yours, keep it (cudaup never overwrites or removes it);\n\
             to have cudaup's copy back: mv {0} {0}.old && {1}",
            path.display(),
            repair("self-copy")
        )),
        Health::Stale {
            path,
            sha256,
            version,
            running,
            running_size,
        } => {
            let other_version = version.as_deref().filter(|v| *v != VERSION);
            let (severity, message) = match (other_version, &version) {
                (Some(v), _) => (
                    Severity::Warning,
                    format!(
                        "new shells run cudaup {v} from {}, not this cudaup {VERSION}",
                        path.display()
                    ),
                ),
                (None, Some(_)) => (
                    Severity::Info,
                    format!(
                        "the installed copy {} is another build of cudaup {VERSION} than this one",
                        path.display()
                    ),
                ),
                (None, None) => (
                    Severity::Warning,
                    format!(
                        "new shells run an earlier copy of cudaup from {}, not this one",
                        path.display()
                    ),
                ),
            };
            Diagnosis::new("self-copy-stale", severity, message)
                .evidence(format!(
                    "installed copy: {}, sha256 {}…{}",
                    path.display(),
                    &sha256[..12],
                    version
                        .as_deref()
                        .map(|v| format!(", cudaup {v} ({receipt})"))
                        .unwrap_or_default()
                ))
                .evidence(format!(
                    "this binary:    {}, {running_size} bytes, cudaup {VERSION}: not the same bytes",
                    running.display()
                ))
                .fix(fix())
        }
        Health::NotInstalled { path } => Diagnosis::new(
            "self-copy-not-installed",
            Severity::Info,
            format!(
                "cudaup set up this machine but has no copy of itself in {}: `cudaup` works only where you built or installed it",
                path.display()
            ),
        )
        .evidence(format!(
            "receipts in {} name what cudaup installed; {} is not there (an older cudaup made no copy)",
            crate::install::home::Home::at(&home).receipts().display(),
            path.display()
        ))
        .fix(fix()),
        Health::ShadowsCargo { path, cargo } => Diagnosis::new(
            "self-copy-shadows-cargo",
            Severity::Warning,
            format!(
                "an earlier copy of cudaup in {} comes before {} in shells that load cudaup's env",
                path.display(),
                cargo.display()
            ),
        )
        .evidence(format!(
            "this cudaup is {}, which `cargo install` manages (its install records list it)",
            cargo.display()
        ))
        .evidence(receipt)
        .fix(format!(
            "{}   # removes the copy; `cargo install` keeps {} up to date",
            repair("self-copy"),
            cargo.display()
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;
    use crate::world::process::Process;

    #[test]
    fn findings_for_a_stale_a_missing_and_a_changed_copy() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("cudaup");
        let exe = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name).join("cudaup");
            fs_err::create_dir_all(p.parent().unwrap()).unwrap();
            fs_err::write(&p, bytes).unwrap();
            p
        };
        let (one, two) = (exe("one", b"build one"), exe("two", b"build two"));
        let mut w = World::new(h200());
        let process = |exe: &std::path::Path| {
            let mut p =
                Process::with_vars([("CUDAUP_HOME", home.display().to_string())], dir.path());
            p.set_exe(exe);
            p
        };
        w.process = process(&one);
        assert_eq!(
            check(&w.inputs()),
            None,
            "nothing installed: nothing to say"
        );
        self_copy::ensure(&w.process, &home).unwrap();
        assert_eq!(check(&w.inputs()), None);

        w.process = process(&two);
        let d = check(&w.inputs()).unwrap();
        assert_eq!((d.id(), d.severity()), ("self-copy-stale", Severity::Info));
        assert!(
            d.evidence[0].contains("installed copy:"),
            "{:?}",
            d.evidence
        );
        assert!(d.evidence[1].contains(&two.display().to_string()));
        assert_eq!(
            d.finding.fix.as_deref().unwrap().lines().next().unwrap(),
            "cudaup repair --fix self-copy   # copies this cudaup there (what `cudaup install` does too)"
        );

        fs_err::write(self_copy::target(&home), b"edited").unwrap();
        let d = check(&w.inputs()).unwrap();
        assert_eq!(d.id(), "self-copy-changed");
        assert!(d
            .finding
            .fix
            .as_deref()
            .unwrap()
            .contains(".old && cudaup repair --fix self-copy"));

        fs_err::remove_file(self_copy::target(&home)).unwrap();
        let d = check(&w.inputs()).unwrap();
        assert_eq!(
            (d.id(), d.severity()),
            ("self-copy-missing", Severity::Warning)
        );
        assert!(d.evidence[0].contains(&format!("records cudaup {VERSION} there")));
    }
}
