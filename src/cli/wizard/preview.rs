//! The preview: the [`InstallPlan`] for the current answers (made by `InstallPlan::new`, as
//! `cudaup install` makes it), and everything it would change on disk (toolkit, venv, env
//! scripts, rc files, driver). The plan previewed is the plan the wizard then runs.

use std::path::PathBuf;

use crate::error::Result;
use crate::install::home::Home;
use crate::install::plan::{survey, venv_dir, InstallPlan, PlanError, Target, ToolkitPlan};
use crate::model::plan::{Action, Plan, Status};
use crate::model::request::Profile;
use crate::model::system::System;

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
    /// The install plan the wizard runs; `None` when no stack fits (`plan` says why).
    pub install: Option<InstallPlan>,
    /// The resolver's plan, shown.
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
    /// On Windows, what goes into the user's environment (`HKCU\Environment`): the registry is
    /// the shell setup there, not rc files ([`crate::install::env::set_user_environment`]).
    pub user_env: Option<crate::install::env::registry::Wanted>,
    /// The driver.
    pub driver: DriverChange,
}

impl Preview {
    /// Whether the install can go ahead.
    pub fn ready(&self) -> bool {
        self.plan.status == Status::Ok && self.venv_problem.is_none()
    }
}

/// The plan for `a`, made as `cudaup install` makes it, and what it changes.
pub fn preview(ctx: &Ctx<'_>, a: &Answers) -> Result<Preview> {
    let settings = a.settings(ctx.process)?;
    let home = Home::at(&ctx.home);
    let system = survey(ctx.system, None, &venv_dir(&settings, &home), ctx.runner);
    let (plan, install) =
        match InstallPlan::new(&settings, &system, ctx.catalog, &home, Target::Here) {
            Ok(p) => (p.plan.clone(), Some(p)),
            Err(PlanError::Unsupported(plan)) => (*plan, None),
            Err(e) => return Err(e.into()),
        };
    // The framework's row names the route install will take, as `plan` shows it: the indexes
    // the answers give, less the sites the wizard found silent before its first question.
    let index = crate::install::python::route::IndexSettings {
        pypi: settings.pypi_index.clone(),
        torch: settings.torch_index.clone(),
        source: settings.torch_source,
        bundle: None,
    };
    let plan = match crate::install::python::route::unasked(
        &plan,
        &system,
        ctx.catalog,
        &index,
        ctx.reach.as_ref(),
    ) {
        Some((want, candidates)) => crate::install::python::route::apply(
            &plan,
            &crate::install::python::route::RouteView::NotProbed {
                source: index.source,
                variant: want.variant,
                candidates,
            },
        ),
        None => plan,
    };
    let mut preview = Preview {
        install: None,
        plan,
        system,
        toolkit: None,
        default_prefix: None,
        venv: None,
        venv_problem: None,
        env: false,
        cudaup: crate::install::self_copy::plan(ctx.process, &ctx.home).map_err(|e| e.to_string()),
        hooks: Vec::new(),
        user_env: None,
        driver: DriverChange::Unchanged,
    };
    let Some(install) = install else {
        return Ok(preview);
    };
    preview.default_prefix = install.default_prefix(ctx.catalog, &home);
    preview.toolkit = match &install.toolkit {
        Some(ToolkitPlan::Keep { path, .. }) => {
            Some(ToolkitChange::Kept(path.display().to_string()))
        }
        Some(ToolkitPlan::Install { prefix, .. }) => Some(ToolkitChange::New(prefix.clone())),
        None => None,
    };
    let plan = &preview.plan;
    let kept_elsewhere = plan
        .component("cuda")
        .is_some_and(|c| c.action == Action::Keep && c.path.is_some());
    preview.env = matches!(preview.toolkit, Some(ToolkitChange::New(_)))
        || kept_elsewhere
        || preview.cudaup.as_ref().is_ok_and(|c| c.in_home());
    if !matches!(a.profile, Profile::CudaDev) {
        match crate::install::python::step::base_python(plan) {
            Ok(Some(_)) => {
                let venv = crate::install::python::Venv {
                    dir: install.venv.clone(),
                };
                let exists = venv.exists();
                preview.venv = Some((venv.dir, exists));
            }
            Ok(None) => {}
            Err(e) => preview.venv_problem = Some(e.to_string()),
        }
    }
    if preview.env && a.modify_path && super::USER_ENVIRONMENT {
        // What install's env step sets: the new toolkit by its release, cudaup's copy in the home.
        let release = plan.component("cuda").and_then(|c| c.version.clone());
        let toolkit = match (&preview.toolkit, &release) {
            (Some(ToolkitChange::New(prefix)), Some(cuda)) => {
                Some((prefix.as_path(), cuda.as_str()))
            }
            _ => None,
        };
        let bin = preview
            .cudaup
            .as_ref()
            .ok()
            .filter(|c| c.in_home())
            .and_then(|c| c.path.parent());
        preview.user_env = Some(crate::install::env::registry::wanted(toolkit, bin));
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
    preview.install = Some(install);
    Ok(preview)
}
