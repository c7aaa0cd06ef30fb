//! Free disk space under `$CUDAUP_HOME` and the toolkit prefixes (std has no statvfs without
//! libc, so doctor runs `df -P DIR` and reads it; when df fails the check is skipped), and the
//! leftovers of interrupted runs that take it up.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::model::finding::Severity;
use crate::world::runner::{which, Runner};

use super::{Diagnosis, Inputs};

/// Below this, a toolkit or a framework install does not fit: error.
pub const ERROR_BELOW: u64 = 1 << 30;
/// Below this, the next install (a CUDA toolkit is ~5 GiB unpacked, torch ~6 GiB) will not fit.
pub const WARN_BELOW: u64 = 5 << 30;

/// One filesystem as `df -P` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DfRow {
    /// Free bytes for unprivileged users.
    pub available: u64,
    /// Total bytes.
    pub total: u64,
    /// Where it is mounted.
    pub mount: String,
}

/// Parses POSIX `df -P` output (1024-byte blocks):
///
/// ```text
/// Filesystem     1024-blocks      Used Available Capacity Mounted on
/// /dev/nvme0n1p2   959786032 412345678 498612345      46% /
/// ```
pub fn parse_df(text: &str) -> Option<DfRow> {
    let mut lines = text.lines();
    let header = lines.next()?;
    if !header.contains("Available") {
        return None;
    }
    // A long device name may wrap onto its own line: join the rest.
    let rest: Vec<&str> = lines.flat_map(str::split_whitespace).collect();
    if rest.len() < 6 {
        return None;
    }
    let total: u64 = rest[1].parse().ok()?;
    let available: u64 = rest[3].parse().ok()?;
    Some(DfRow {
        available: available * 1024,
        total: total * 1024,
        mount: rest[5..].join(" "),
    })
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// The directory itself, or its nearest existing ancestor (a home not created yet).
fn existing(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find(|d| d.is_dir()).map(Path::to_path_buf)
}

/// `litter`: what interrupted runs left (half-unpacked cache trees, staging directories beside
/// a prefix, a prefix set aside by an interrupted commit) that no running cudaup is using.
pub fn litter(inputs: &Inputs<'_>) -> Vec<Diagnosis> {
    let Some(home) = inputs.process.cudaup_home() else {
        return Vec::new();
    };
    let found = crate::install::litter::find(&home, inputs.receipts);
    if found.is_empty() {
        return Vec::new();
    }
    let total: u64 = found.iter().map(|l| l.bytes).sum();
    let mut d = Diagnosis::new(
        "litter",
        Severity::Warning,
        format!(
            "{} leftover(s) of interrupted cudaup runs take {} ({})",
            found.len(),
            indicatif::HumanBytes(total),
            home.display()
        ),
    );
    for l in found.iter().take(10) {
        d = d.evidence(format!(
            "{}: {} ({})",
            l.path.display(),
            l.what,
            indicatif::HumanBytes(l.bytes)
        ));
    }
    if found.len() > 10 {
        d = d.evidence(format!("... and {} more", found.len() - 10));
    }
    vec![d.fix(super::repair("litter"))]
}

/// `toolkit-install-interrupted`: a toolkit install killed before it finished (its journal is
/// still in `receipts/pending/`), in place but unrecorded, or not in place at all.
pub fn interrupted(inputs: &Inputs<'_>) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    for (journal, r) in &inputs.receipts.pending {
        let own = crate::install::Receipt::read(&r.prefix).ok().flatten();
        let in_place = own.is_some_and(|own| own.same_install(r));
        let state = if in_place {
            "the toolkit is in place but its install did not record it"
        } else {
            "it did not get the toolkit in place"
        };
        out.push(
            Diagnosis::new(
                "toolkit-install-interrupted",
                Severity::Warning,
                format!(
                    "an install of CUDA {} into {} was interrupted: {state}",
                    r.cuda,
                    r.prefix.display()
                ),
            )
            .evidence(format!("{}: the install's journal", journal.display()))
            .fix(format!(
                "{}   # or run the same install again; `cudaup uninstall` removes what it left",
                super::repair("toolkit-files")
            )),
        );
    }
    out
}

/// `low-disk-space`, one per filesystem; [`litter`] and [`interrupted`].
pub fn check(inputs: &Inputs<'_>, runner: &dyn Runner) -> Vec<Diagnosis> {
    let mut out = litter(inputs);
    out.extend(interrupted(inputs));
    let mut path = inputs.process.path_entries();
    path.extend(["/usr/bin", "/bin"].map(PathBuf::from));
    let Some(df) = which("df", &path) else {
        return out;
    };
    let mut dirs: Vec<(PathBuf, String)> = Vec::new();
    if let Some(home) = inputs.process.cudaup_home() {
        dirs.push((home, "$CUDAUP_HOME".into()));
    }
    for (_, r) in &inputs.receipts.toolkits {
        dirs.push((r.prefix.clone(), format!("CUDA {} toolkit", r.cuda)));
    }
    if let Some(t) = &inputs.receipts.active.toolkit {
        dirs.push((t.clone(), "the active toolkit".into()));
    }
    let mut seen: Vec<String> = Vec::new();
    for (dir, what) in dirs {
        let Some(at) = existing(&dir) else { continue };
        let arg = at.display().to_string();
        let Ok(o) = runner.run(&df, &["-P", &arg], Duration::from_secs(10)) else {
            continue;
        };
        let Some(row) = o.success().then(|| parse_df(&o.stdout)).flatten() else {
            continue;
        };
        if seen.contains(&row.mount) {
            continue;
        }
        seen.push(row.mount.clone());
        let severity = if row.available < ERROR_BELOW {
            Severity::Error
        } else if row.available < WARN_BELOW {
            Severity::Warning
        } else {
            continue;
        };
        out.push(
            Diagnosis::new(
                "low-disk-space",
                severity,
                format!(
                    "only {} free on {} (holding {what}, {}): installs, pip and the download cache need several GiB",
                    gib(row.available),
                    row.mount,
                    dir.display()
                ),
            )
            .evidence(format!(
                "df -P {arg}: {} available of {}",
                gib(row.available),
                gib(row.total)
            ))
            .fix("du -sh \"$CUDAUP_HOME\"/cache/*   # cudaup's download cache can go: rm -r \"$CUDAUP_HOME/cache\"\npip cache purge; uv cache clean\nor free space elsewhere on that filesystem"),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;
    use crate::world::process::Process;
    #[cfg(unix)]
    use crate::world::runner::Output;

    #[test]
    fn df_output() {
        let row = parse_df("Filesystem     1024-blocks      Used Available Capacity Mounted on\n/dev/nvme0n1p2   959786032 412345678 498612345      46% /\n").unwrap();
        assert_eq!(row.available, 498_612_345 * 1024);
        assert_eq!(row.mount, "/");
        let wrapped = parse_df("Filesystem 1024-blocks Used Available Capacity Mounted on\nserver.example.com:/export/very/long/name\n 100 90 10 90% /mnt/my data\n").unwrap();
        assert_eq!(wrapped.available, 10 * 1024);
        assert_eq!(wrapped.mount, "/mnt/my data");
        assert_eq!(parse_df("df: /x: No such file or directory\n"), None);
    }

    // Used only by the Unix-only tests below.
    #[cfg(unix)]
    struct Df(&'static str);

    #[cfg(unix)]
    impl Runner for Df {
        fn run(
            &self,
            _: &Path,
            _: &[&str],
            _: Duration,
        ) -> Result<Output, crate::world::runner::RunError> {
            Ok(Output {
                status: Some(0),
                stdout: self.0.into(),
                stderr: String::new(),
            })
        }
    }

    #[test]
    fn litter_is_counted_with_its_size() {
        let home = tempfile::tempdir().unwrap();
        let mut w = World::new(h200());
        w.process = Process::with_vars([("CUDAUP_HOME", home.path().to_str().unwrap())], "/");
        assert!(litter(&w.inputs()).is_empty());
        let tmp = home
            .path()
            .join(format!("cache/unpacked/.tmp-{}-l1-7-0", "b".repeat(64)));
        fs_err::create_dir_all(&tmp).unwrap();
        fs_err::write(tmp.join("f"), vec![0u8; 2048]).unwrap();
        let d = litter(&w.inputs());
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].id(), "litter");
        assert!(d[0].finding.message.contains("2.00 KiB"), "{:?}", d[0]);
        assert!(d[0].evidence[0].contains("half-unpacked"), "{:?}", d[0]);
        assert_eq!(
            d[0].finding.fix.as_deref(),
            Some("cudaup repair --fix litter")
        );
    }

    #[cfg(unix)]
    #[test]
    fn low_space_is_reported_once_per_filesystem() {
        let home = tempfile::tempdir().unwrap();
        let mut w = World::new(h200());
        w.live = true;
        w.process = Process::with_vars(
            [
                ("CUDAUP_HOME", home.path().to_str().unwrap()),
                ("PATH", "/usr/bin:/bin"),
            ],
            "/",
        );
        w.receipts.active.toolkit = Some(home.path().join("toolkits/cuda-13.0"));
        let low = Df("Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/sda1 100000000 99500000 500000 99% /\n");
        let d = check(&w.inputs(), &low);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].id(), "low-disk-space");
        assert_eq!(d[0].severity(), Severity::Error);
        let fine = Df("Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/sda1 100000000 50000000 50000000 50% /\n");
        assert!(check(&w.inputs(), &fine).is_empty());
    }
}
