//! Check `nvcc`: which toolkit is active, and whether its `nvcc --version` is the release that
//! was installed there (the receipt's `cuda`, else the toolkit's own `version.json`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::install::receipts::Receipts;
use crate::install::Receipt;
use crate::model::version::Version;
use crate::world::process::Process;
use crate::world::runner::which;

use super::{exit_words, output_lines, Check, Exec};

/// The toolkit to check and how it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    /// Its root (the directory holding `bin/nvcc`).
    pub dir: PathBuf,
    /// `--toolkit`, `active.json` or `nvcc on PATH`.
    pub how: &'static str,
}

/// `--toolkit DIR`, else the active toolkit (`$CUDAUP_HOME/active.json`), else the toolkit of
/// the `nvcc` on `PATH`.
pub fn choose(process: &Process, receipts: &Receipts, flag: Option<&Path>) -> Option<Chosen> {
    if let Some(dir) = flag {
        return Some(Chosen {
            dir: std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned()),
            how: "--toolkit",
        });
    }
    if let Some(dir) = &receipts.active.toolkit {
        return Some(Chosen {
            dir: dir.clone(),
            how: "active.json",
        });
    }
    let nvcc = which("nvcc", &process.path_entries())?;
    let real = fs_err::canonicalize(&nvcc).unwrap_or(nvcc);
    Some(Chosen {
        dir: real.parent()?.parent()?.to_path_buf(),
        how: "nvcc on PATH",
    })
}

/// A toolkit whose nvcc could be asked.
#[derive(Debug, Clone)]
pub struct Toolkit {
    /// Its root, as chosen.
    pub dir: PathBuf,
    /// Its root with symlinks resolved (to tell whether a loaded library came from it).
    pub real: PathBuf,
    /// `bin/nvcc`.
    pub nvcc: PathBuf,
    /// The receipt of the install, if cudaup installed it.
    pub receipt: Option<Receipt>,
    /// The CUDA release (major.minor at least): nvcc's, else the receipt's.
    pub cuda: Option<Version>,
}

/// What `nvcc --version` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvccVersion {
    /// `13.0` from `release 13.0`.
    pub release: String,
    /// `13.0.88` from `V13.0.88`, when printed.
    pub build: Option<String>,
}

/// Parses `Cuda compilation tools, release 13.0, V13.0.88`.
pub fn parse_nvcc(text: &str) -> Option<NvccVersion> {
    let line = text.lines().find(|l| l.contains("release "))?;
    let after = line.split("release ").nth(1)?;
    let release = after.split(',').next()?.trim().to_owned();
    Version::parse(&release)?;
    let build = after
        .split(", V")
        .nth(1)
        .map(|b| b.trim().to_owned())
        .filter(|b| Version::parse(b).is_some());
    Some(NvccVersion { release, build })
}

/// Whether two releases agree on major.minor (`13.0` and `13.0.2`).
pub fn same_release(a: &Version, b: &Version) -> bool {
    a.prefix(2) == b.prefix(2)
}

/// The receipt of the install at `dir`: the one registered in the home, else the one inside.
pub fn receipt_for(receipts: &Receipts, dir: &Path) -> Option<Receipt> {
    let real = fs_err::canonicalize(dir).unwrap_or_else(|_| dir.to_owned());
    receipts
        .toolkits
        .iter()
        .map(|(_, r)| r)
        .find(|r| r.prefix == dir || fs_err::canonicalize(&r.prefix).is_ok_and(|p| p == real))
        .cloned()
        .or_else(|| Receipt::read(dir).ok().flatten())
}

/// Runs the check. The toolkit comes back whenever it has an nvcc, even a mismatched one, so
/// the kernel and library checks still run against it.
pub fn check(
    exec: &Exec<'_>,
    chosen: Option<&Chosen>,
    receipts: &Receipts,
) -> (Check, Option<Toolkit>) {
    let Some(chosen) = chosen else {
        return (
            Check::skip(
                "nvcc",
                vec!["no CUDA toolkit: none is active in $CUDAUP_HOME/active.json, none was given with --toolkit, and there is no nvcc on PATH".into()],
            ),
            None,
        );
    };
    let dir = &chosen.dir;
    let subject = dir.display().to_string();
    let nvcc = crate::model::layout::Prefix::at(dir).nvcc();
    if !dir.is_dir() {
        return (
            Check::fail(
                "nvcc",
                vec![format!(
                    "the toolkit {} ({}) does not exist",
                    dir.display(),
                    chosen.how
                )],
            )
            .subject(subject),
            None,
        );
    }
    if !nvcc.is_file() {
        return (
            Check::fail(
                "nvcc",
                vec![format!(
                    "{} has no {}",
                    dir.display(),
                    Path::new(crate::model::layout::BIN)
                        .join(crate::model::layout::NVCC)
                        .display()
                )],
            )
            .subject(subject),
            None,
        );
    }
    let receipt = receipt_for(receipts, dir);
    let installed: Option<(Version, String)> = match &receipt {
        Some(r) => Version::parse(&r.cuda).map(|v| (v, "the receipt says".to_owned())),
        None => version_file(dir).map(|v| (v, "its version.json says".to_owned())),
    };
    let toolkit = |cuda: Option<Version>| Toolkit {
        dir: dir.clone(),
        real: fs_err::canonicalize(dir).unwrap_or_else(|_| dir.clone()),
        nvcc: nvcc.clone(),
        receipt: receipt.clone(),
        cuda,
    };
    let out = match exec.run(&nvcc, &["--version"], &[], Duration::from_secs(30)) {
        Ok(out) if out.success() => out,
        Ok(out) => {
            let mut ev = vec![format!(
                "{} --version failed ({})",
                nvcc.display(),
                exit_words(&out)
            )];
            ev.extend(output_lines(&out).into_iter().take(5));
            return (
                Check::fail("nvcc", ev).subject(subject),
                Some(toolkit(installed.map(|i| i.0))),
            );
        }
        Err(e) => {
            return (
                Check::fail("nvcc", vec![format!("{}: {e}", nvcc.display())]).subject(subject),
                None,
            )
        }
    };
    let Some(got) = parse_nvcc(&out.stdout) else {
        let mut ev = vec![format!(
            "{} --version printed no `release X.Y`",
            nvcc.display()
        )];
        ev.extend(output_lines(&out).into_iter().take(5));
        return (
            Check::fail("nvcc", ev).subject(subject),
            Some(toolkit(installed.map(|i| i.0))),
        );
    };
    let release = Version::parse(&got.release).expect("parse_nvcc checked it");
    let said = match &got.build {
        Some(b) => format!("release {}, V{b}", got.release),
        None => format!("release {}", got.release),
    };
    let data = serde_json::json!({
        "toolkit": dir,
        "chosen_by": chosen.how,
        "nvcc": nvcc,
        "release": got.release,
        "build": got.build,
        "installed": installed.as_ref().map(|i| i.0.to_string()),
        "receipt": receipt.is_some(),
    });
    let where_ = format!("{} ({})", nvcc.display(), chosen.how);
    let check = match &installed {
        Some((want, source)) if same_release(want, &release) => Check::pass(
            "nvcc",
            vec![format!("nvcc {said}: CUDA {want} as {source}"), where_],
        ),
        Some((want, source)) => Check::fail(
            "nvcc",
            vec![
                format!(
                    "nvcc {said}, but {source} CUDA {want} was installed in {}",
                    dir.display()
                ),
                where_,
                "something replaced this nvcc, or the receipt is stale: reinstall the toolkit"
                    .into(),
            ],
        ),
        None => Check::pass(
            "nvcc",
            vec![
                format!("nvcc {said} (no receipt or version.json to compare with)"),
                where_,
            ],
        ),
    };
    (
        check.subject(subject).data(data),
        Some(toolkit(Some(release))),
    )
}

/// The toolkit's own record of its release (`version.json`, `version.txt`).
fn version_file(dir: &Path) -> Option<Version> {
    let json = fs_err::read_to_string(dir.join("version.json")).ok();
    let txt = fs_err::read_to_string(dir.join("version.txt")).ok();
    crate::detect::toolkits::parse_version_files(json.as_deref(), txt.as_deref())
        .and_then(|v| Version::parse(&v))
}

/// Why the toolkit-based checks cannot run, when they cannot.
pub fn absent_reason(chosen: Option<&Chosen>, toolkit: Option<&Toolkit>) -> String {
    match (chosen, toolkit) {
        (None, _) => "no CUDA toolkit (install one with `cudaup install --profile cuda-dev`, or name one with --toolkit DIR)".into(),
        (Some(c), None) => format!("the toolkit {} has no working nvcc (see the nvcc check)", c.dir.display()),
        (Some(_), Some(_)) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::testing::{ok, Scripted};
    use crate::verify::Status;

    const BANNER: &str = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\nBuilt on Wed_Aug_20_01:58:59_PM_PDT_2025\nCuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0.r13.0/compiler.36424714_0\n";

    #[test]
    fn parses_nvcc_banners() {
        assert_eq!(
            parse_nvcc(BANNER),
            Some(NvccVersion {
                release: "13.0".into(),
                build: Some("13.0.88".into())
            })
        );
        assert_eq!(
            parse_nvcc("Cuda compilation tools, release 9.2, V9.2.148\n")
                .unwrap()
                .release,
            "9.2"
        );
        assert_eq!(
            parse_nvcc("Cuda compilation tools, release 12.2\n").unwrap(),
            NvccVersion {
                release: "12.2".into(),
                build: None
            }
        );
        assert_eq!(parse_nvcc("nvcc fatal: nope"), None);
        assert_eq!(parse_nvcc("release notes, V1"), None);
    }

    #[test]
    fn releases_compare_by_major_minor() {
        let v = |s: &str| Version::parse(s).unwrap();
        assert!(same_release(&v("13.0.2"), &v("13.0")));
        assert!(!same_release(&v("12.8.1"), &v("13.0")));
        assert!(!same_release(&v("13.1"), &v("13.0")));
    }

    fn toolkit_dir(version_json: Option<&str>) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        fs_err::create_dir_all(d.path().join("bin")).unwrap();
        fs_err::write(crate::model::layout::Prefix::at(d.path()).nvcc(), "").unwrap();
        if let Some(j) = version_json {
            fs_err::write(d.path().join("version.json"), j).unwrap();
        }
        d
    }

    fn run_check(
        dir: &Path,
        receipts: &Receipts,
        banner: &'static str,
    ) -> (Check, Option<Toolkit>) {
        let runner = Scripted::new(move |_, _, _| ok(banner));
        let process = Process::with_vars([("PATH", "/usr/bin")], "/");
        let exec = Exec::new(&runner, &process, Some(dir));
        let chosen = Chosen {
            dir: dir.to_owned(),
            how: "--toolkit",
        };
        check(&exec, Some(&chosen), receipts)
    }

    fn receipt(prefix: &Path, cuda: &str) -> Receipt {
        Receipt {
            schema_version: 1,
            prefix: prefix.to_owned(),
            cuda: cuda.into(),
            cudnn: None,
            source: "redist test".into(),
            installed_at: 0,
            components: Vec::new(),
            files: Vec::new(),
        }
    }

    #[test]
    fn matches_the_receipt() {
        let d = toolkit_dir(None);
        let receipts = Receipts {
            toolkits: vec![(PathBuf::from("r.json"), receipt(d.path(), "13.0.2"))],
            ..Receipts::default()
        };
        let (c, tk) = run_check(d.path(), &receipts, BANNER);
        assert_eq!(c.status, Status::Pass, "{c:?}");
        assert_eq!(
            c.evidence[0],
            "nvcc release 13.0, V13.0.88: CUDA 13.0.2 as the receipt says"
        );
        assert_eq!(tk.unwrap().cuda.unwrap().prefix(2), "13.0");
    }

    #[test]
    fn mismatch_with_the_receipt_fails() {
        let d = toolkit_dir(None);
        let receipts = Receipts {
            toolkits: vec![(PathBuf::from("r.json"), receipt(d.path(), "12.8.1"))],
            ..Receipts::default()
        };
        let (c, tk) = run_check(d.path(), &receipts, BANNER);
        assert_eq!(c.status, Status::Fail);
        assert!(c.evidence[0].contains("CUDA 12.8.1 was installed"), "{c:?}");
        assert!(tk.is_some(), "later checks still use the toolkit");
    }

    #[test]
    fn without_a_receipt_version_json_decides() {
        let d = toolkit_dir(Some(
            r#"{"cuda": {"name": "CUDA SDK", "version": "13.0.2"}}"#,
        ));
        let (c, _) = run_check(d.path(), &Receipts::default(), BANNER);
        assert_eq!(c.status, Status::Pass);
        assert!(c.evidence[0].contains("its version.json says"));
        let d = toolkit_dir(Some(
            r#"{"cuda": {"name": "CUDA SDK", "version": "12.9.1"}}"#,
        ));
        let (c, _) = run_check(d.path(), &Receipts::default(), BANNER);
        assert_eq!(c.status, Status::Fail);
        let d = toolkit_dir(None);
        let (c, _) = run_check(d.path(), &Receipts::default(), BANNER);
        assert_eq!(c.status, Status::Pass);
        assert!(c.evidence[0].contains("nothing") || c.evidence[0].contains("no receipt"));
    }

    #[test]
    fn no_toolkit_is_skipped_and_a_missing_nvcc_fails() {
        let runner = Scripted::new(|_, _, _| None);
        let process = Process::default();
        let exec = Exec::new(&runner, &process, None);
        let (c, tk) = check(&exec, None, &Receipts::default());
        assert_eq!(c.status, Status::Skip);
        assert!(tk.is_none());
        let d = tempfile::tempdir().unwrap();
        let chosen = Chosen {
            dir: d.path().to_owned(),
            how: "active.json",
        };
        let (c, tk) = check(&exec, Some(&chosen), &Receipts::default());
        assert_eq!(c.status, Status::Fail);
        let want = if cfg!(windows) {
            r"has no bin\nvcc.exe"
        } else {
            "has no bin/nvcc"
        };
        assert!(c.evidence[0].ends_with(want), "{c:?}");
        assert!(tk.is_none());
    }
}
