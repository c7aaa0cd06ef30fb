//! The guard: a venv cudaup installed keeps the framework build it was given. A later
//! `pip install X` or `uv pip install X` whose resolution would swap the planned torch (or
//! TensorFlow, JAX) for a CPU or other-variant build is refused by constraints in the venv's own
//! `pip.conf` and `uv.toml`; a swap forced past them (`pip --isolated`, `uv --no-config`, a
//! `uv sync` of a project) is said at the next Python start by a `.pth` hook that compares the
//! planned versions with the `.dist-info` directories (no torch import, no CUDA), naming the
//! command that restores the build. What the guard wrote is recorded, with each file's sha256,
//! in the venv's receipt ([`GuardRecord`]): `guard off` and uninstall remove exactly those files.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::install::python::{Packages, VenvReceipt};

/// The constraints file, in the venv's root (pip's `constraint`, uv's `constraint-dependencies`
/// say the same pins).
pub const CONSTRAINTS: &str = "cudaup-guard-constraints.txt";
/// pip reads `<venv>/pip.conf` for every pip run with this venv's interpreter.
pub const PIP_CONF: &str = "pip.conf";
/// uv reads `uv.toml` from the directory it runs in and its parents (or `--config-file`).
pub const UV_TOML: &str = "uv.toml";
/// The startup hook's `.pth` line, in site-packages.
pub const PTH: &str = "cudaup_guard.pth";
/// The startup hook's module, in site-packages.
pub const MODULE: &str = "_cudaup_guard.py";
/// The first line of every file the guard writes: a file without it is someone else's.
const HEADER: &str = "# Written by cudaup's guard (docs/guard.md).";
const HOOK: &str = include_str!("hook.py");

/// One planned distribution and the version (with its local tag) it must stay at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    /// The distribution (`torch`).
    pub name: String,
    /// Its version (`2.14.1+cu130`).
    pub version: String,
}

impl Pin {
    /// `torch==2.14.1+cu130`.
    pub fn requirement(&self) -> String {
        format!("{}=={}", self.name, self.version)
    }
}

/// A file the guard wrote, and its sha256 then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardFile {
    /// Where.
    pub path: PathBuf,
    /// Its sha256 when written.
    pub sha256: String,
}

/// The guard of one venv, as its receipt keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardRecord {
    /// The planned builds.
    pub pins: Vec<Pin>,
    /// The index the planned builds came from (pip's and uv's extra index).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indexes: Vec<String>,
    /// The folders or pages of wheels they came from (a bundle).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub find_links: Vec<String>,
    /// The command that puts the planned builds back.
    pub restore: String,
    /// What the guard wrote (empty while it is off).
    #[serde(default)]
    pub files: Vec<GuardFile>,
}

/// Why the guard could not be set up or changed.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    /// A file the guard would write is someone else's.
    #[error("{0} was not written by cudaup's guard: it stays as it is, and the guard is not set up (move it away, then `cudaup guard on {1}`)")]
    Foreign(PathBuf, PathBuf),
    /// The venv has no `site-packages` for the startup hook.
    #[error("{0} has no lib/python*/site-packages: not a venv the guard can watch")]
    NoSite(PathBuf),
    /// No receipt names the venv.
    #[error(
        "no venv receipt in {home} names {venv}: the guard watches venvs cudaup installed into"
    )]
    NotCudaups {
        /// The venv given.
        venv: PathBuf,
        /// The receipts' folder.
        home: PathBuf,
    },
    /// The receipt's requirements pin no version.
    #[error("the receipt of {0} pins no framework version: nothing to guard")]
    NothingPinned(PathBuf),
    /// Local I/O.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The `name==version` pins of `requirements` (extras dropped: `tensorflow[and-cuda]==2.21.0`
/// pins `tensorflow`); requirements without `==` pin nothing.
pub fn pins(requirements: &[String]) -> Vec<Pin> {
    requirements
        .iter()
        .filter_map(|r| {
            let (name, version) = r.split_once("==")?;
            let name = name.split('[').next().unwrap_or(name).trim();
            let version = version.split(';').next().unwrap_or(version).trim();
            (!name.is_empty() && !version.is_empty()).then(|| Pin {
                name: name.to_owned(),
                version: version.to_owned(),
            })
        })
        .collect()
}

/// The distributions released with `requirements`' pins, as installed in `site`: what a
/// pinned distribution requires (with the extras its requirement names) at exactly its own
/// version — `jax[cuda13]==0.12.0` requires `jaxlib==0.12.0` and
/// `jax-cuda13-plugin[with-cuda]==0.12.0`, which requires `jax-cuda13-pjrt==0.12.0` — read
/// from the installed METADATA, each pinned at its installed version. They are the build: a
/// swap of jaxlib or the plugin is a swap of JAX. A requirement at another version (torch's
/// triton, TensorFlow's NVIDIA wheels) is a dependency, and floats as before.
pub fn released_with(site: &Path, requirements: &[String], machine: &str) -> Vec<Pin> {
    use crate::catalog::update::pypi::Metadata;
    use crate::catalog::{Op, Requirement};
    use crate::model::version::Version;
    let norm = crate::sources::pypi::normalize;
    let infos = crate::install::python::record::dist_infos(site);
    let metadata = |name: &str| {
        let dir = infos.get(&norm(name))?;
        let text = fs_err::read_to_string(dir.join("METADATA")).ok()?;
        Metadata::parse(&text, &dir.display().to_string()).ok()
    };
    let own = pins(requirements);
    let mut queue: Vec<(String, Vec<String>, String)> = requirements
        .iter()
        .filter_map(|r| {
            let req = Requirement::parse(r)?;
            let pin = own.iter().find(|p| norm(&p.name) == req.name)?;
            Some((req.name, req.extras, pin.version.clone()))
        })
        .collect();
    let mut out: Vec<Pin> = Vec::new();
    while let Some((name, extras, version)) = queue.pop() {
        let Some(meta) = metadata(&name) else {
            continue;
        };
        let base = Version::parse(version.split('+').next().unwrap_or(&version));
        let asked = std::iter::once(None).chain(extras.iter().map(|e| Some(e.as_str())));
        for extra in asked {
            for r in meta.requires_on(machine, extra) {
                let same = r.spec.is_exact()
                    && r.spec
                        .clauses
                        .iter()
                        .any(|c| c.op == Op::Eq && Some(&c.version) == base.as_ref());
                let known = own.iter().chain(&out).any(|p| norm(&p.name) == r.name);
                if !same || known {
                    continue;
                }
                let Some(installed) = metadata(&r.name) else {
                    continue;
                };
                out.push(Pin {
                    name: installed.name.clone(),
                    version: installed.version.clone(),
                });
                queue.push((r.name, r.extras, installed.version));
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The command that restores the planned builds of a venv of `home`.
pub fn restore_command(home: &Path) -> String {
    format!(
        "cudaup --home {} repair --fix venv-packages",
        shell_word(&home.display().to_string())
    )
}

fn shell_word(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:=@".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

impl GuardRecord {
    /// The guard of what `packages` installed; `None` when nothing is pinned.
    pub fn planned(packages: &Packages, restore: String) -> Option<GuardRecord> {
        let pins = pins(&packages.requirements);
        if pins.is_empty() {
            return None;
        }
        Some(GuardRecord {
            pins,
            indexes: [&packages.index_url]
                .into_iter()
                .filter(|u| !u.is_empty() && !packages.no_index)
                .cloned()
                .collect(),
            find_links: packages.find_links.clone(),
            restore,
            files: Vec::new(),
        })
    }

    /// Whether its files are in place (the guard is on).
    pub fn is_on(&self) -> bool {
        !self.files.is_empty()
    }
}

/// The venv's `site-packages` (the first `lib/python*/site-packages`, or `Lib/site-packages`).
pub fn site_packages(venv: &Path) -> Option<PathBuf> {
    let windows = venv.join("Lib").join("site-packages");
    if windows.is_dir() {
        return Some(windows);
    }
    let mut found: Vec<PathBuf> = fs_err::read_dir(venv.join("lib"))
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
        .map(|e| e.path().join("site-packages"))
        .filter(|p| p.is_dir())
        .collect();
    found.sort();
    found.into_iter().next()
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The files of `record` for `venv`, with their bytes.
fn contents(venv: &Path, record: &GuardRecord) -> Result<Vec<(PathBuf, String)>, GuardError> {
    let site = site_packages(venv).ok_or_else(|| GuardError::NoSite(venv.to_owned()))?;
    let constraints = venv.join(CONSTRAINTS);
    let pins: Vec<String> = record.pins.iter().map(Pin::requirement).collect();
    let off = format!(
        "# `cudaup guard off {}` removes it; `cudaup guard status {}` shows it.\n",
        venv.display(),
        venv.display()
    );
    let mut cons = format!("{HEADER}\n{off}# The builds cudaup installed, kept by pip and uv.\n");
    for p in &pins {
        cons += &format!("{p}\n");
    }
    let mut pip = format!(
        "{HEADER}\n{off}[install]\nconstraint = {}\n",
        constraints.display()
    );
    if !record.indexes.is_empty() {
        pip += &format!("extra-index-url = {}\n", record.indexes.join("\n    "));
    }
    if !record.find_links.is_empty() {
        pip += &format!("find-links = {}\n", record.find_links.join("\n    "));
    }
    // A plain-http mirror (allowed with --allow-http) is ignored by pip and uv unless named.
    let mut insecure: Vec<String> = record
        .indexes
        .iter()
        .chain(&record.find_links)
        .filter_map(|u| {
            u.strip_prefix("http://")?
                .split(['/', ':'])
                .next()
                .map(str::to_owned)
        })
        .collect();
    insecure.sort();
    insecure.dedup();
    if !insecure.is_empty() {
        pip += &format!("trusted-host = {}\n", insecure.join("\n    "));
    }
    let toml_list = |items: &[String]| {
        let quoted: Vec<String> = items
            .iter()
            .map(|i| serde_json::to_string(i).expect("a string serialises"))
            .collect();
        format!("[{}]", quoted.join(", "))
    };
    let mut uv = format!(
        "{HEADER}\n{off}constraint-dependencies = {}\n",
        toml_list(&pins)
    );
    if !insecure.is_empty() {
        uv += &format!("allow-insecure-host = {}\n", toml_list(&insecure));
    }
    if !record.indexes.is_empty() || !record.find_links.is_empty() {
        uv += "\n[pip]\n";
        if !record.indexes.is_empty() {
            uv += &format!("extra-index-url = {}\n", toml_list(&record.indexes));
        }
        if !record.find_links.is_empty() {
            uv += &format!("find-links = {}\n", toml_list(&record.find_links));
        }
    }
    let venv_abs = std::path::absolute(venv)?;
    let planned: Vec<String> = record
        .pins
        .iter()
        .map(|p| {
            format!(
                "({}, {})",
                serde_json::to_string(&p.name).expect("a string serialises"),
                serde_json::to_string(&p.version).expect("a string serialises")
            )
        })
        .collect();
    let module = format!(
        "{HEADER}\n{}",
        HOOK.replace("__PLANNED__", &format!("[{}]", planned.join(", ")))
            .replace(
                "__VENV__",
                &serde_json::to_string(&venv_abs.display().to_string())
                    .expect("a string serialises")
            )
            .replace(
                "__RESTORE__",
                &serde_json::to_string(&record.restore).expect("a string serialises")
            )
    );
    let pth = format!("{HEADER}\nimport _cudaup_guard\n");
    Ok(vec![
        (constraints, cons),
        (venv.join(PIP_CONF), pip),
        (venv.join(UV_TOML), uv),
        (site.join(MODULE), module),
        (site.join(PTH), pth),
    ])
}

/// Whether `path` is free for the guard: absent, or a file it wrote.
fn ours_or_absent(path: &Path) -> bool {
    match crate::world::fs::read_regular_no_follow(path, 1 << 20) {
        Ok(bytes) => bytes.starts_with(HEADER.as_bytes()),
        Err(_) => path.symlink_metadata().is_err(),
    }
}

/// Writes the guard's files into `venv` and returns `record` with them. Refused, with nothing
/// written, when a file in the way is not the guard's.
pub fn write(venv: &Path, record: &GuardRecord) -> Result<GuardRecord, GuardError> {
    use crate::world::fs::{write_atomic, Durability, Temp};
    let files = contents(venv, record)?;
    if let Some((path, _)) = files.iter().find(|(p, _)| !ours_or_absent(p)) {
        return Err(GuardError::Foreign(path.clone(), venv.to_owned()));
    }
    let mut out = record.clone();
    out.files.clear();
    for (path, text) in files {
        write_atomic(&path, text.as_bytes(), Temp::Fixed, Durability::Fsync)?;
        out.files.push(GuardFile {
            path,
            sha256: sha256(text.as_bytes()),
        });
    }
    Ok(out)
}

/// What [`lift`] left.
#[derive(Debug, Default)]
pub struct Lifted {
    /// Files removed.
    pub removed: Vec<PathBuf>,
    /// Files changed since the guard wrote them: left as they are.
    pub kept: Vec<PathBuf>,
}

/// Removes the files the guard wrote that are still as it wrote them (and the bytecode Python
/// compiled from its module); a changed one stays, named in [`Lifted::kept`].
pub fn lift(record: &GuardRecord) -> std::io::Result<Lifted> {
    let mut out = Lifted::default();
    for f in &record.files {
        match crate::world::fs::read_regular_no_follow(&f.path, 1 << 20) {
            Ok(bytes) if sha256(&bytes) == f.sha256 => {
                fs_err::remove_file(&f.path)?;
                out.removed.push(f.path.clone());
            }
            Ok(_) => out.kept.push(f.path.clone()),
            Err(_) if f.path.symlink_metadata().is_err() => {}
            Err(_) => out.kept.push(f.path.clone()),
        }
        if f.path.file_name().is_some_and(|n| n == MODULE) {
            out.removed.extend(remove_bytecode(&f.path)?);
        }
    }
    Ok(out)
}

/// `__pycache__/_cudaup_guard.*.pyc` beside the module.
fn remove_bytecode(module: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let Some(cache) = module.parent().map(|p| p.join("__pycache__")) else {
        return Ok(out);
    };
    for e in fs_err::read_dir(&cache).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("_cudaup_guard.") && name.ends_with(".pyc") {
            fs_err::remove_file(e.path())?;
            out.push(e.path());
        }
    }
    Ok(out)
}

/// A distribution as its `.dist-info` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// `Version:` of its METADATA (or of the directory name).
    pub version: String,
    /// Its INSTALLER file (`pip`, `uv`).
    pub installer: Option<String>,
    /// When the `.dist-info` was written.
    pub modified: Option<SystemTime>,
}

fn norm(name: &str) -> String {
    crate::sources::pypi::normalize(name).replace('-', "_")
}

/// `name` in `venv`, from its `.dist-info` directory.
pub fn installed(venv: &Path, name: &str) -> Option<Installed> {
    let site = site_packages(venv)?;
    let want = norm(name);
    for e in fs_err::read_dir(&site).ok()?.filter_map(|e| e.ok()) {
        let entry = e.file_name().to_string_lossy().into_owned();
        let Some((dist, version)) = entry
            .strip_suffix(".dist-info")
            .and_then(|s| s.split_once('-'))
        else {
            continue;
        };
        if norm(dist) != want {
            continue;
        }
        let info = e.path();
        let metadata = crate::world::fs::read_regular_text(&info.join("METADATA"), 1 << 20)
            .unwrap_or_default();
        let version = metadata
            .lines()
            .take_while(|l| !l.trim().is_empty())
            .find_map(|l| l.strip_prefix("Version:"))
            .map_or_else(|| version.to_owned(), |v| v.trim().to_owned());
        let installer = crate::world::fs::read_regular_text(&info.join("INSTALLER"), 4096)
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty());
        let modified = fs_err::metadata(&info).ok().and_then(|m| m.modified().ok());
        return Some(Installed {
            version,
            installer,
            modified,
        });
    }
    None
}

/// A planned build no longer in the venv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// What was planned.
    pub pin: Pin,
    /// What is there instead (`None`: nothing).
    pub now: Option<Installed>,
}

impl Drift {
    /// `torch 2.14.1+cpu replaced the planned 2.14.1+cu130 (installed by pip, 2026-12-05 09:12 UTC)`.
    pub fn describe(&self) -> String {
        match &self.now {
            None => format!(
                "{} {} is no longer installed",
                self.pin.name, self.pin.version
            ),
            Some(i) => format!(
                "{} {} replaced the planned {} (installed by {}, {})",
                self.pin.name,
                i.version,
                self.pin.version,
                i.installer.as_deref().unwrap_or("an unknown installer"),
                i.modified
                    .map_or_else(|| "at an unknown time".into(), utc_minute)
            ),
        }
    }
}

/// `2026-12-05 09:12 UTC`.
fn utc_minute(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let (h, m) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    let date = crate::catalog::Date::from_days(days);
    format!("{date} {h:02}:{m:02} UTC")
}

/// The planned builds of `record` that `venv` no longer has.
pub fn drift(venv: &Path, record: &GuardRecord) -> Vec<Drift> {
    record
        .pins
        .iter()
        .filter_map(|pin| {
            let now = installed(venv, &pin.name);
            let same = now
                .as_ref()
                .is_some_and(|i| same_version(&i.version, &pin.version));
            (!same).then(|| Drift {
                pin: pin.clone(),
                now,
            })
        })
        .collect()
}

fn same_version(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (
                crate::model::version::Version::parse(a.split('+').next().unwrap_or(a)),
                crate::model::version::Version::parse(b.split('+').next().unwrap_or(b)),
            ),
            (Some(x), Some(y)) if x == y && a.split_once('+').map(|t| t.1) == b.split_once('+').map(|t| t.1)
        )
}

/// A venv's guard, as `guard status` shows it.
#[derive(Debug, Clone)]
pub struct Status {
    /// The venv.
    pub venv: PathBuf,
    /// Its receipt's guard (`None`: never set up).
    pub record: Option<GuardRecord>,
    /// The planned builds the venv no longer has.
    pub drift: Vec<Drift>,
    /// The guard's files changed or gone since they were written.
    pub changed: Vec<PathBuf>,
    /// The command that puts the planned builds back.
    pub restore: String,
}

/// The receipt of `venv` in `home` (its path and contents).
fn receipt_of(home: &Path, venv: &Path) -> Result<(PathBuf, VenvReceipt), GuardError> {
    let abs = std::path::absolute(venv)?;
    crate::install::receipts::Receipts::load(home)
        .venvs
        .into_iter()
        .find(|(_, r)| r.venv == abs || std::path::absolute(&r.venv).ok().as_ref() == Some(&abs))
        .ok_or_else(|| GuardError::NotCudaups {
            venv: venv.to_owned(),
            home: crate::install::home::Home::at(home).receipts(),
        })
}

/// The files of `record` changed or gone since the guard wrote them.
pub fn changed(record: &GuardRecord) -> Vec<PathBuf> {
    record
        .files
        .iter()
        .filter(|f| {
            crate::world::fs::read_regular_no_follow(&f.path, 1 << 20)
                .map_or(true, |b| sha256(&b) != f.sha256)
        })
        .map(|f| f.path.clone())
        .collect()
}

/// The guard of `venv` (a venv of `home`'s receipts).
pub fn status(home: &Path, venv: &Path) -> Result<Status, GuardError> {
    let (_, receipt) = receipt_of(home, venv)?;
    let planned = receipt
        .guard
        .as_deref()
        .cloned()
        .or_else(|| GuardRecord::planned(&receipt.packages, restore_command(home)));
    Ok(Status {
        venv: receipt.venv.clone(),
        drift: planned
            .as_ref()
            .map(|r| drift(&receipt.venv, r))
            .unwrap_or_default(),
        changed: receipt.guard.as_deref().map(changed).unwrap_or_default(),
        restore: receipt
            .guard
            .as_ref()
            .map_or_else(|| restore_command(home), |r| r.restore.clone()),
        record: receipt.guard.map(|g| *g),
    })
}

/// Turns the guard of `venv` on (its files written again from the receipt) or off (its files
/// removed, the pins kept in the receipt for `on`). Returns the new status and what `off` left.
pub fn set(home: &Path, venv: &Path, on: bool) -> Result<(Status, Lifted), GuardError> {
    let (_, mut receipt) = receipt_of(home, venv)?;
    let mut lifted = Lifted::default();
    let record = match receipt.guard.as_deref().cloned() {
        Some(r) => r,
        None => GuardRecord::planned(&receipt.packages, restore_command(home))
            .ok_or_else(|| GuardError::NothingPinned(receipt.venv.clone()))?,
    };
    let record = if on {
        write(&receipt.venv, &record)?
    } else {
        lifted = lift(&record)?;
        GuardRecord {
            files: Vec::new(),
            ..record
        }
    };
    receipt.guard = Some(Box::new(record));
    crate::install::receipt_file::register(
        home,
        crate::install::receipt_file::VENV,
        &receipt.venv.clone(),
        &receipt,
    )?;
    Ok((status(home, venv)?, lifted))
}

/// The framework step's guard: `before` lifts the guard of the venv's last install (its pins
/// would refuse a new plan's builds), `after` sets it up for the new receipt, or puts the old one
/// back when the install failed. Never fails an install: what went wrong is a note.
#[derive(Debug, Default)]
pub struct Turn {
    previous: Option<GuardRecord>,
}

impl Turn {
    /// Lifts the guard `venv`'s receipt in `home` records, if it is on.
    pub fn before(home: &Path, venv: &Path, notes: &mut Vec<String>) -> Turn {
        let previous = receipt_of(home, venv)
            .ok()
            .and_then(|(_, r)| r.guard.map(|g| *g))
            .filter(GuardRecord::is_on);
        if let Some(p) = &previous {
            if let Err(e) = lift(p) {
                notes.push(format!(
                    "the guard of {} could not be lifted: {e}",
                    venv.display()
                ));
            }
        }
        Turn { previous }
    }

    /// After a failed install: the old guard again.
    pub fn failed(self, venv: &Path) {
        if let Some(p) = self.previous {
            // Best effort: the install's own error is what the caller reports.
            let _ = write(venv, &p);
        }
    }

    /// After the install: sets up the guard in `receipt` when `wanted` and the venv is
    /// cudaup's (its marker says so) or was guarded before.
    pub fn after(
        self,
        receipt: &mut VenvReceipt,
        home: &Path,
        wanted: bool,
        notes: &mut Vec<String>,
    ) {
        let cudaups = crate::install::python::marker::agrees(&receipt.venv).is_ok();
        if !wanted || !(cudaups || self.previous.is_some()) {
            return;
        }
        let planned =
            GuardRecord::planned(&receipt.packages, restore_command(home)).map(|mut r| {
                if let Some(site) = site_packages(&receipt.venv) {
                    let arch = std::env::consts::ARCH;
                    r.pins
                        .extend(released_with(&site, &receipt.packages.requirements, arch));
                }
                r
            });
        let Some(record) = planned.or_else(|| {
            self.previous.clone().map(|p| GuardRecord {
                files: Vec::new(),
                ..p
            })
        }) else {
            return;
        };
        match write(&receipt.venv, &record) {
            Ok(r) => receipt.guard = Some(Box::new(r)),
            Err(e) => notes.push(format!("the guard is not set up: {e}")),
        }
    }
}

#[cfg(test)]
mod tests;
