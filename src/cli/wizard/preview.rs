//! The preview: the plan for the current answers, computed the way `cudaup install` computes
//! it, and everything it would change on disk (toolkit, venv, env scripts, rc files, driver).

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::model::plan::{Action, Plan, Status};
use crate::model::request::Profile;
use crate::model::system::System;
use crate::model::version::Version;
use crate::world::runner::Runner;

use super::{Answers, Ctx};

/// What happens to the toolkit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolkitChange {
    /// Installed into this new prefix.
    New(PathBuf),
    /// An installed toolkit is kept.
    Kept(String),
}

/// What happens to the driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverChange {
    /// Nothing.
    Unchanged,
    /// It must be installed or upgraded to this version (then a reboot).
    Change(String),
    /// It is Windows' (WSL2): at least this version.
    Manual(String),
}

/// The plan for the current answers, and everything it changes on disk.
#[derive(Debug, Clone)]
pub struct Preview {
    /// The plan install will execute.
    pub plan: Plan,
    /// The machine planned for (with the venv's Python, when the venv exists).
    pub system: System,
    /// The toolkit, for profiles with one.
    pub toolkit: Option<ToolkitChange>,
    /// The prefix cudaup picks when none is given.
    pub default_prefix: Option<PathBuf>,
    /// The venv, and whether it exists already.
    pub venv: Option<(PathBuf, bool)>,
    /// Why the framework step cannot run (e.g. no Python in range).
    pub venv_problem: Option<String>,
    /// Whether env scripts are written (a toolkit is installed or kept, or cudaup's copy goes
    /// into `$CUDAUP_HOME/bin`).
    pub env: bool,
    /// What happens to cudaup's own copy, or why it cannot be made.
    pub cudaup: std::result::Result<crate::install::self_copy::Planned, String>,
    /// rc files to get the line: (file, line, already there).
    pub hooks: Vec<(PathBuf, String, bool)>,
    /// The driver.
    pub driver: DriverChange,
}

impl Preview {
    /// Whether the install can go ahead.
    pub fn ready(&self) -> bool {
        self.plan.status == Status::Ok && self.venv_problem.is_none()
    }
}

/// The plan for `a`, computed the way `cudaup install` computes it, and what it changes.
pub fn preview(ctx: &Ctx<'_>, a: &Answers) -> Result<Preview> {
    let settings = a.settings(ctx.process)?;
    let request = &settings.request;
    let mut system = ctx.system.clone();
    let venv_dir = a
        .venv
        .clone()
        .unwrap_or_else(|| crate::install::home::Home::at(&ctx.home).venv(a.profile.name()));
    if let Some(found) = probe_venv(ctx.runner, &venv_dir) {
        system.pythons.retain(|p| p.path != found.path);
        system.pythons.insert(0, found);
    }
    let plan = crate::resolve::resolve(&system, request, ctx.catalog);
    let mut preview = Preview {
        plan,
        system,
        toolkit: None,
        default_prefix: None,
        venv: None,
        venv_problem: None,
        env: false,
        cudaup: crate::install::self_copy::plan(ctx.process, &ctx.home).map_err(|e| e.to_string()),
        hooks: Vec::new(),
        driver: DriverChange::Unchanged,
    };
    if preview.plan.status != Status::Ok {
        return Ok(preview);
    }
    let plan = &preview.plan;
    let cuda = plan.component("cuda");
    if a.profile.has_toolkit() {
        if let Some(c) = cuda {
            let version = c.version.as_deref().and_then(Version::parse);
            preview.default_prefix = version.map(|v| {
                let v = crate::install::summary::release_to_install(ctx.catalog, &v);
                crate::install::home::Home::at(&ctx.home).toolkit(&v)
            });
            let kept = c.path.clone().filter(|_| c.action == Action::Keep);
            preview.toolkit = match (kept, &a.prefix) {
                (Some(path), None) => Some(ToolkitChange::Kept(path)),
                (_, Some(prefix)) => Some(ToolkitChange::New(prefix.clone())),
                (None, None) => preview.default_prefix.clone().map(ToolkitChange::New),
            };
        }
    }
    let kept_elsewhere = cuda.is_some_and(|c| c.action == Action::Keep && c.path.is_some());
    preview.env = matches!(preview.toolkit, Some(ToolkitChange::New(_)))
        || kept_elsewhere
        || preview.cudaup.as_ref().is_ok_and(|c| c.in_home());
    if !matches!(a.profile, Profile::CudaDev) {
        let indexes = crate::install::python::route::IndexSettings {
            pypi: a.pypi_index.clone(),
            torch: a.torch_index.clone(),
            source: a.torch_source,
            bundle: None,
        };
        match crate::install::python::step::step(
            plan,
            &preview.system,
            ctx.catalog,
            venv_dir,
            &indexes,
            false,
        ) {
            Ok(Some(step)) => {
                let exists = step.venv.exists();
                preview.venv = Some((step.venv.dir, exists));
            }
            Ok(None) => {}
            Err(e) => preview.venv_problem = Some(e.to_string()),
        }
    }
    if preview.env && a.modify_path {
        for h in crate::shell::hooks(ctx.process, &ctx.home, &a.shells) {
            let already = fs_err::read_to_string(&h.file).is_ok_and(|t| t.contains(&h.line));
            preview.hooks.push((h.file, h.line, already));
        }
    }
    preview.driver = match plan.component("driver") {
        Some(d) if matches!(d.action, Action::Install | Action::Upgrade) => {
            DriverChange::Change(d.version.clone().unwrap_or_default())
        }
        Some(d) if d.action == Action::Manual => {
            DriverChange::Manual(d.version.clone().unwrap_or_default())
        }
        _ => DriverChange::Unchanged,
    };
    Ok(preview)
}

/// The Python of an existing venv, as `cudaup install` sees it.
fn probe_venv(runner: &dyn Runner, dir: &Path) -> Option<crate::model::system::Python> {
    let venv = crate::install::python::Venv {
        dir: dir.to_owned(),
    };
    if !venv.exists() {
        return None;
    }
    let candidate = crate::detect::python::Candidate {
        interpreter: venv.python(),
        venv: Some(dir.to_owned()),
    };
    crate::detect::python::inspect(&crate::detect::Root::live(), runner, &candidate)
        .map(|f| f.python)
}
