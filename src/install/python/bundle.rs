//! Offline bundles (`cudaup mirror create DIR`): the wheels a plan needs — NVIDIA's toolkit
//! wheels and the framework with every dependency, for the target machine's Python and
//! platform — in a PEP 503 directory index (`DIR/<project>/index.html` linking each wheel with
//! its `#sha256=`), with a manifest (`DIR/cudaup-bundle.json`) saying what the bundle is for.
//! `cudaup install --index-url DIR` (or `--mirror DIR`) then reads both from it and needs no
//! network; pip reads the same tree as `--index-url file:///DIR`.
//!
//! PEP 691's JSON form is left out: a static directory cannot negotiate it (`Accept`), and pip,
//! uv and cudaup all read the HTML form.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fetch::{Fetcher, Location};
use crate::model::system::{OsFamily, System};
use crate::sources::pypi::normalize;
use crate::world::fs::{write_atomic, Durability, Temp};

use super::route::RouteKind;

/// The manifest's file name, at the bundle's root.
pub const MANIFEST: &str = "cudaup-bundle.json";

/// What a bundle is for and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleManifest {
    /// Format version (1).
    pub schema_version: u32,
    /// `cudaup 0.1.0`.
    pub made_by: String,
    /// The day it was made (UTC, `2026-12-01`).
    pub created: String,
    /// The profile planned.
    pub profile: String,
    /// The machine it is for.
    pub target: BundleTarget,
    /// The plan's components (name, version, build).
    pub plan: Vec<Planned>,
    /// The toolkit part, if the profile has one.
    pub toolkit: Option<BundleToolkit>,
    /// The framework part, if the profile has one.
    pub framework: Option<BundleFramework>,
    /// Every wheel in the bundle.
    pub files: Vec<BundleFile>,
}

/// The machine a bundle is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleTarget {
    /// `linux`, `windows`, `macos`.
    pub os: String,
    /// `x86_64`, `aarch64`.
    pub arch: String,
    /// Its GPUs' names.
    pub gpus: Vec<String>,
    /// major.minor of the Python the framework is for.
    pub python: Option<String>,
    /// The platform tags the framework's wheels were chosen for.
    pub platforms: Vec<String>,
}

/// One planned component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Planned {
    /// `torch`.
    pub name: String,
    /// `2.15.0`.
    pub version: Option<String>,
    /// `cu132`.
    pub variant: Option<String>,
}

/// The toolkit part of a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleToolkit {
    /// `redist` (NVIDIA's layout under DIR) or `wheels` (the PEP 503 tree).
    pub source: String,
    /// The CUDA release.
    pub cuda: String,
    /// The cuDNN release, if any.
    pub cudnn: Option<String>,
    /// The machine architectures.
    pub arches: Vec<String>,
}

/// The framework part of a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleFramework {
    /// The route its wheels came from.
    pub route: RouteKind,
    /// That route's base.
    pub from: String,
    /// The requirement lines it was downloaded for.
    pub requirements: Vec<String>,
    /// The planned build (`cu132`), if a torch.
    pub variant: Option<String>,
}

/// One wheel in the bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleFile {
    /// Its path under the bundle (`torch/torch-2.15.0-….whl`).
    pub path: String,
    /// Its sha256.
    pub sha256: String,
    /// Its size.
    pub size: u64,
}

/// Reads the manifest of the bundle at `base` (a directory, or an http(s) mirror serving one),
/// `None` when `base` is no bundle.
pub fn read(fetcher: &Fetcher, base: &Location) -> Option<BundleManifest> {
    let bytes = fetcher.get_bytes(&base.join(MANIFEST), None).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Reads the manifest of a local bundle directory.
pub fn read_dir(dir: &Path) -> Option<BundleManifest> {
    // A regular file of a manifest's size only: a FIFO or a device there is no bundle.
    let bytes =
        crate::world::fs::read_regular(&dir.join(MANIFEST), crate::fetch::MAX_DOCUMENT).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Writes the manifest (atomically: a reader never sees half of it).
pub fn write_manifest(dir: &Path, m: &BundleManifest) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(m).expect("the manifest serialises") + "\n";
    write_atomic(
        &dir.join(MANIFEST),
        text.as_bytes(),
        Temp::Unique,
        Durability::Fsync,
    )
}

/// The project a wheel file belongs to (`torch-2.15.0-….whl` → `torch`).
pub fn project_of(filename: &str) -> Option<String> {
    let stem = filename.strip_suffix(".whl")?;
    Some(normalize(stem.split('-').next()?))
}

/// Puts the wheel at `src` into the bundle as `DIR/<project>/<filename>` (`filename` defaults
/// to `src`'s name; a hard link when possible, else a copy; through a temporary name, so a killed
/// run leaves no half wheel under the real name), unless an identical one is there. `sha256` is
/// the wheel's when known (the fetcher verified it), else it is computed.
pub fn add_wheel(
    dir: &Path,
    src: &Path,
    filename: Option<&str>,
    sha256: Option<&str>,
) -> std::io::Result<BundleFile> {
    let filename = match filename {
        Some(f) => f.to_owned(),
        None => src
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| std::io::Error::other(format!("{}: not a file name", src.display())))?
            .to_owned(),
    };
    // Names come from indexes and pip: nothing may climb out of the project folder.
    if filename.contains('/') || filename.contains('\\') || filename.starts_with('.') {
        return Err(std::io::Error::other(format!(
            "{filename}: not a plain wheel file name"
        )));
    }
    let project = project_of(&filename)
        .ok_or_else(|| std::io::Error::other(format!("{filename}: not a wheel")))?;
    let sha = match sha256 {
        Some(s) => s.to_owned(),
        None => crate::fetch::sha256_file(src)?,
    };
    let size = fs_err::metadata(src)?.len();
    let target_dir = dir.join(&project);
    fs_err::create_dir_all(&target_dir)?;
    let target = target_dir.join(&filename);
    let same = fs_err::metadata(&target).is_ok_and(|m| m.len() == size)
        && crate::fetch::sha256_file(&target).is_ok_and(|s| s == sha);
    if !same {
        crate::world::fs::copy_atomic(src, &target)?;
    }
    Ok(BundleFile {
        path: format!("{project}/{filename}"),
        sha256: sha,
        size,
    })
}

/// Fetches `artifact` (verified against its sha256, through the cache) into the bundle.
pub fn add_fetched(
    dir: &Path,
    fetcher: &Fetcher,
    id: usize,
    artifact: &crate::fetch::Artifact,
) -> Result<BundleFile, crate::install::InstallError> {
    let fetched = fetcher.fetch::<()>(id, artifact, None)?;
    fetcher.reporter().finish(id, "bundled");
    Ok(add_wheel(
        dir,
        &fetched.path,
        Some(&artifact.location.file_name().replace("%2B", "+")),
        Some(&artifact.sha256),
    )?)
}

/// Writes the PEP 503 pages: `DIR/<project>/index.html` for every project folder with wheels
/// (each link `<file, + as %2B>#sha256=<hex>`, the hashes from `known` or computed), and
/// `DIR/index.html` listing the projects. Returns every wheel with its hash.
pub fn write_pages(dir: &Path, known: &[BundleFile]) -> std::io::Result<Vec<BundleFile>> {
    let mut all = Vec::new();
    let mut projects = Vec::new();
    for entry in fs_err::read_dir(dir)? {
        let entry = entry?;
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || normalize(&name) != name {
            continue;
        }
        let mut files: Vec<String> = fs_err::read_dir(entry.path())?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(".whl") && !f.starts_with('.'))
            .collect();
        if files.is_empty() {
            continue;
        }
        files.sort();
        let mut links = String::new();
        for f in &files {
            let path = format!("{name}/{f}");
            let on_disk = entry.path().join(f);
            let size = fs_err::metadata(&on_disk)?.len();
            let sha = match known.iter().find(|k| k.path == path && k.size == size) {
                Some(k) => k.sha256.clone(),
                None => crate::fetch::sha256_file(&on_disk)?,
            };
            links.push_str(&format!(
                "<a href=\"{}#sha256={sha}\">{}</a><br/>\n",
                href(f),
                html_escape(f)
            ));
            all.push(BundleFile {
                path,
                sha256: sha,
                size,
            });
        }
        write_atomic(
            &entry.path().join("index.html"),
            page(&format!("Links for {name}"), &links).as_bytes(),
            Temp::Unique,
            Durability::Fsync,
        )?;
        projects.push(name);
    }
    projects.sort();
    let links: String = projects
        .iter()
        .map(|p| format!("<a href=\"{p}/\">{p}</a><br/>\n"))
        .collect();
    write_atomic(
        &dir.join("index.html"),
        page("Simple index", &links).as_bytes(),
        Temp::Unique,
        Durability::Fsync,
    )?;
    all.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(all)
}

/// A file name as a relative link: what could end or redirect the attribute is escaped.
fn href(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        match c {
            '+' | '"' | '#' | '?' | '%' | ' ' | '<' | '>' | '\'' | '&' => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html>\n<head><meta name=\"pypi:repository-version\" content=\"1.0\">\
         <title>{title}</title></head>\n<body>\n<h1>{title}</h1>\n{body}</body>\n</html>\n"
    )
}

/// The platform tags for `pip download --platform`, most specific first. Linux: every manylinux
/// tag up to `glibc` (PEP 600 and the legacy aliases, which pip does not expand for another
/// machine), then `linux_<arch>` (older PyTorch wheels). macOS: the OS version's tag, which pip
/// expands to the older ones itself.
pub fn platform_tags(system: &System, glibc: (u32, u32)) -> Vec<String> {
    let arch = system.os.arch.as_str();
    match system.os.family {
        OsFamily::Linux => {
            let mut out: Vec<String> = (5..=glibc.1.max(17))
                .rev()
                .map(|minor| format!("manylinux_{}_{minor}_{arch}", glibc.0))
                .collect();
            out.push(format!("manylinux2014_{arch}"));
            out.push(format!("manylinux2010_{arch}"));
            out.push(format!("manylinux1_{arch}"));
            out.push(format!("linux_{arch}"));
            out
        }
        OsFamily::Macos => {
            let major = system
                .os
                .version
                .as_deref()
                .and_then(|v| v.split('.').next())
                .and_then(|m| m.parse::<u32>().ok())
                .unwrap_or(14)
                .max(11);
            let arch = if arch == "aarch64" { "arm64" } else { arch };
            vec![format!("macosx_{major}_0_{arch}")]
        }
        OsFamily::Windows => vec![if arch == "aarch64" {
            "win_arm64".to_owned()
        } else {
            "win_amd64".to_owned()
        }],
    }
}

/// A staging folder for pip's downloads inside the bundle (so moving them in is a rename), left
/// by no one once the bundle is made.
pub fn staging(dir: &Path) -> PathBuf {
    dir.join(format!(".cudaup-download-{}", std::process::id()))
}

/// Removes what a killed `mirror create` left in the bundle: staging folders and half-copied
/// wheels named for a process that no longer runs (another one running now keeps its own).
pub fn sweep(dir: &Path) -> std::io::Result<usize> {
    let dead = |name: &str, marker: &str| {
        name.rsplit_once(marker)
            .and_then(|(_, pid)| pid.parse::<u32>().ok())
            .is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists())
    };
    let mut removed = 0;
    let Ok(entries) = fs_err::read_dir(dir) else {
        return Ok(0);
    };
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if name.starts_with(".cudaup-download-") && dead(&name, "-") {
            fs_err::remove_dir_all(&path)?;
            removed += 1;
        } else if entry.file_type().is_ok_and(|t| t.is_dir()) && !name.starts_with('.') {
            for inner in fs_err::read_dir(&path)?.filter_map(|e| e.ok()) {
                let n = inner.file_name().to_string_lossy().into_owned();
                // Older runs named their half wheels `.<wheel>.tmp-cudaup-<pid>`.
                let pid = crate::world::fs::temporary_pid(&n);
                let gone = pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists());
                if n.starts_with('.') && (gone || dead(&n, ".tmp-cudaup-")) {
                    fs_err::remove_file(inner.path())?;
                    removed += 1;
                }
            }
        }
    }
    Ok(removed)
}

/// The wheels pip left in `staging`, moved into the bundle's tree. The folder is removed.
pub fn take_downloads(dir: &Path, staging: &Path) -> std::io::Result<Vec<BundleFile>> {
    let mut out = Vec::new();
    let mut names: Vec<PathBuf> = fs_err::read_dir(staging)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    names.sort();
    for path in names {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if name.as_deref().is_some_and(|n| n.ends_with(".whl")) {
            out.push(add_wheel(dir, &path, None, None)?);
        }
    }
    fs_err::remove_dir_all(staging)?;
    Ok(out)
}

/// The framework part of a bundle: the route asked like an install asks it (for the target's
/// Python and platform), then `pip download` of the requirements and every dependency from it
/// into a staging folder, moved into the tree. A failed download leaves no staging folder.
pub fn add_framework(
    dir: &Path,
    job: &FrameworkJob<'_>,
    probe: &Fetcher,
    session: &mut super::Session<'_>,
) -> Result<(super::route::Route, Vec<BundleFile>), super::PyEnvError> {
    let route = super::probe::choose(probe, job.want, job.candidates, job.settings)?;
    sweep(dir)?;
    let packages = super::step::packages_for(&route);
    let staging = staging(dir);
    let _ = fs_err::remove_dir_all(&staging);
    fs_err::create_dir_all(&staging)?;
    if let Err(e) = session.download(job.pip, &packages, &job.constraints, &job.target, &staging) {
        let _ = fs_err::remove_dir_all(&staging);
        return Err(e);
    }
    let files = take_downloads(dir, &staging)?;
    Ok((route, files))
}

/// What [`add_framework`] downloads, and with what.
#[derive(Debug, Clone)]
pub struct FrameworkJob<'a> {
    /// The framework and its companions, for the target.
    pub want: &'a super::route::Want,
    /// The routes to ask.
    pub candidates: &'a [super::route::Candidate],
    /// The index settings.
    pub settings: &'a super::route::IndexSettings,
    /// The target's Python and platform tags.
    pub target: super::DownloadTarget,
    /// A Python here with pip (`pip download` runs with it; uv has no download command).
    pub pip: &'a Path,
    /// The plan's constraints (`-c`).
    pub constraints: Vec<String>,
}

/// Checks that the finished bundle serves `want` by itself, as an install on the target will
/// ask it.
pub fn check_serves(
    dir: &Path,
    want: &super::route::Want,
    probe: &Fetcher,
) -> Result<super::route::Route, super::route::NoRoute> {
    let settings = super::route::IndexSettings {
        bundle: Some(crate::fetch::GivenLocation::dir(dir)),
        ..Default::default()
    };
    let only = super::route::Candidate {
        route: RouteKind::Bundle,
        base: crate::fetch::GivenLocation::dir(dir),
        origin: "bundle".into(),
        refused: None,
        note: None,
    };
    super::probe::choose(probe, want, std::slice::from_ref(&only), &settings)
}

/// A Python here whose pip can download (`python3`, else `python`, on `path`).
pub fn pip_here(runner: &dyn crate::world::runner::Runner, path: &[PathBuf]) -> Option<PathBuf> {
    ["python3", "python"].into_iter().find_map(|name| {
        let python = crate::world::runner::which(name, path)?;
        runner
            .run(
                &python,
                &["-m", "pip", "--version"],
                std::time::Duration::from_secs(60),
            )
            .ok()
            .filter(|o| o.success())
            .map(|_| python)
    })
}

/// The glibc of the machine `python` runs on (`platform.libc_ver()`), as (2, N).
pub fn glibc_of(runner: &dyn crate::world::runner::Runner, python: &Path) -> Option<(u32, u32)> {
    let out = runner
        .run(
            python,
            &["-c", "import platform; print(platform.libc_ver()[1])"],
            std::time::Duration::from_secs(60),
        )
        .ok()
        .filter(|o| o.success())?;
    let mut it = out.stdout.trim().split('.').map(|p| p.parse::<u32>().ok());
    Some((it.next()??, it.next()??))
}

/// Seconds since the epoch (log names).
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Today's date, UTC, `YYYY-MM-DD` (days since the epoch to a civil date: Howard Hinnant's
/// algorithm).
pub fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wheels_land_in_a_pep503_tree_with_hashes() {
        let src = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let a = src
            .path()
            .join("torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl");
        fs_err::write(&a, b"torch").unwrap();
        let b = src.path().join("Filelock-3.20.0-py3-none-any.whl");
        fs_err::write(&b, b"filelock").unwrap();
        let fa = add_wheel(dir.path(), &a, None, None).unwrap();
        assert_eq!(
            fa.path,
            "torch/torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl"
        );
        add_wheel(dir.path(), &b, None, None).unwrap();
        // Again: nothing changes.
        add_wheel(dir.path(), &a, None, Some(&fa.sha256)).unwrap();
        let all = write_pages(dir.path(), std::slice::from_ref(&fa)).unwrap();
        assert_eq!(all.len(), 2);
        let page = fs_err::read_to_string(dir.path().join("torch/index.html")).unwrap();
        assert!(page.contains(&format!(
            "torch-2.15.0%2Bcu132-cp312-cp312-manylinux_2_28_x86_64.whl#sha256={}",
            fa.sha256
        )));
        let root = fs_err::read_to_string(dir.path().join("index.html")).unwrap();
        assert!(root.contains("<a href=\"filelock/\">filelock</a>"));
        // cudaup's own reader takes the tree as an index.
        let files = crate::sources::flat::list_dir(&dir.path().join("torch"), None, false);
        assert_eq!(files.len(), 1);
        assert!(add_wheel(dir.path(), &a, Some("../evil.whl"), None).is_err());
        assert!(add_wheel(dir.path(), &a, Some(".hidden.whl"), None).is_err());
    }

    #[test]
    fn a_killed_run_leaves_nothing_the_next_one_keeps() {
        let dir = tempfile::tempdir().unwrap();
        // What a run killed while pip downloaded, and while a wheel was copied in, leaves.
        let gone = u32::MAX;
        fs_err::create_dir_all(dir.path().join(format!(".cudaup-download-{gone}/x"))).unwrap();
        fs_err::create_dir_all(dir.path().join("torch")).unwrap();
        let half = dir.path().join(format!(
            "torch/.torch-2.15.0-py3-none-any.whl.tmp-cudaup-{gone}"
        ));
        fs_err::write(&half, b"half").unwrap();
        let copied = dir.path().join(format!(
            "torch/.torch-2.16.0-py3-none-any.whl.{gone}.0.cudaup-tmp"
        ));
        fs_err::write(&copied, b"half").unwrap();
        // This process's own staging is not touched.
        let mine = staging(dir.path());
        fs_err::create_dir_all(&mine).unwrap();
        assert_eq!(sweep(dir.path()).unwrap(), 3);
        assert!(!half.exists());
        assert!(!copied.exists());
        assert!(mine.is_dir());
        let all = write_pages(dir.path(), &[]).unwrap();
        assert!(all.is_empty(), "{all:?}");
        assert_eq!(href("a+b\"#.whl"), "a%2Bb%22%23.whl");
    }

    #[test]
    fn platform_tags_for_linux_include_the_legacy_aliases() {
        let system: System =
            serde_json::from_str(r#"{"os": {"family": "linux", "arch": "x86_64"}, "gpus": []}"#)
                .unwrap();
        let tags = platform_tags(&system, (2, 28));
        assert_eq!(tags[0], "manylinux_2_28_x86_64");
        assert!(tags.contains(&"manylinux_2_17_x86_64".to_owned()));
        assert!(tags.contains(&"manylinux2014_x86_64".to_owned()));
        assert_eq!(tags.last().unwrap(), "linux_x86_64");
        assert_eq!(today().len(), 10);
    }
}
