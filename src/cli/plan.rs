//! `cudaup plan`: the stack for this machine (or another one's System JSON), with reasons.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::catalog::Catalog;
use crate::error::{ExitCode, Result};
use crate::model::plan::{Action, Plan, Status};
use crate::model::system::System;
use crate::settings::{InstallOptions, InstallSettings};
use crate::world::process::Process;
use crate::world::runner::Runner;

use super::args::{IndexArgs, StackArgs};
use super::i18n::messages::translate;
use super::i18n::report::pad;
use super::{GlobalArgs, Style};

/// `cudaup plan` flags.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Plan for the machine described in FILE (a `detect --json` document; `os` and `gpus`
    /// suffice) instead of this one
    #[arg(long, value_name = "FILE")]
    pub system: Option<PathBuf>,
    #[command(flatten)]
    pub stack: StackArgs,
    /// Read the answers (profile, pins, driver policy) from an unattended config file; flags
    /// override it, CUDAUP_* variables sit between
    #[arg(long, value_name = "FILE", env = crate::world::vars::CUDAUP_CONFIG)]
    pub config: Option<PathBuf>,
    /// Print the Plan document as JSON
    #[arg(long)]
    pub json: bool,
    /// Ask the framework's routes now (a short request to each index) and show the one install
    /// would take; without it, the order install asks them in
    #[arg(long)]
    pub probe: bool,
    #[command(flatten)]
    pub index: IndexArgs,
    /// Accept plain-http indexes (for --probe)
    #[arg(long)]
    pub allow_http: bool,
}

pub(super) fn run(
    args: &PlanArgs,
    global: &GlobalArgs,
    process: &Process,
    runner: &dyn Runner,
    catalog: &Catalog,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let file = super::args::load_config(args.config.as_deref())?;
    let indexes = args.index.options(process)?;
    let flags = InstallOptions {
        pypi_index: indexes.pypi_index,
        torch_index: indexes.torch_index,
        torch_source: indexes.torch_source,
        allow_http: args.allow_http.then_some(true),
        ..args.stack.options()?
    };
    let settings = InstallSettings::resolve(flags, process, file.as_ref())?;
    let mut pythons_here = false;
    let system = match &args.system {
        Some(path) => {
            let mut picture = crate::detect::picture::load_system(path, catalog)?;
            // A picture that lists no Python (a hand-written one) is planned with this
            // machine's, the ones `install --system` puts the framework into: the python row
            // shows the interpreter install will use.
            if picture.pythons.is_empty() {
                picture.pythons = super::detect::detect_live(process, runner, catalog, false)
                    .system
                    .pythons;
                pythons_here = !picture.pythons.is_empty();
            }
            picture
        }
        None => super::detect::detect_live(process, runner, catalog, false).system,
    };
    // No profile chosen: the machine's offer (the rule install, the wizard and bench share).
    let settings = settings.for_machine(&system, catalog)?;
    let request = &settings.request;
    // This machine's download sites, where a source is left to decide (a picture's machine is
    // elsewhere: its network is not this one's).
    let reach = match args.system {
        None if crate::install::reach::wanted(&settings) => Some(super::reach::ask(
            &crate::install::reach::routes_for(&settings),
            settings.allow_http,
            process,
            style.lang().reach(),
            std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
        )?),
        _ => None,
    };
    let greyed = reach.as_ref().and_then(|r| r.fits(request.profile).err());
    let plan = crate::resolve::resolve(&system, request, catalog);
    let index = crate::install::python::route::IndexSettings {
        pypi: settings.pypi_index.clone(),
        torch: settings.torch_index.clone(),
        source: settings.torch_source,
        bundle: None,
    };
    // A site this machine did not reach just now is not the route install will take.
    let unasked =
        crate::install::python::route::unasked(&plan, &system, catalog, &index, reach.as_ref());
    let route = match unasked {
        Some((want, candidates)) => Some(if args.probe {
            let probe = super::probe_fetcher(
                process,
                settings.allow_http,
                std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
            )?;
            match crate::install::python::probe::choose(&probe, &want, &candidates, &index) {
                Ok(r) => crate::install::python::route::RouteView::Chosen(Box::new(r)),
                Err(e) => crate::install::python::route::RouteView::None {
                    error: e.to_string(),
                    attempts: e.attempts,
                },
            }
        } else {
            crate::install::python::route::RouteView::NotProbed {
                source: index.source,
                variant: want.variant.clone(),
                candidates,
            }
        }),
        None => None,
    };
    let toolkit = crate::install::summary::for_plan(
        &plan,
        catalog,
        settings.components.as_deref(),
        &crate::sources::pypi::wheel_platform(system.os.family, &system.os.arch),
    )
    .map_err(crate::install::plan::PlanError::Components)?;
    if args.json {
        let mut doc = match &route {
            Some(r) => crate::install::python::route::describe_in_plan(&plan, r),
            None => serde_json::to_value(&plan).expect("Plan serialises"),
        };
        if let Some(t) = &toolkit {
            doc["toolkit_components"] = serde_json::to_value(t).expect("the summary serialises");
        }
        if let Some(why) = &settings.offered {
            doc["profile_offered"] = why.as_str().into();
        }
        if let Some(r) = &reach {
            doc["reach"] = super::reach::to_json(r, greyed.as_ref());
        }
        if pythons_here {
            doc["pythons_from"] = "this machine".into();
        }
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).expect("Plan serialises")
        )?;
    } else if !global.quiet || plan.status == Status::Unsupported {
        let shown = match &route {
            Some(r) => crate::install::python::route::apply(&plan, r),
            None => plan.clone(),
        };
        if let Some(why) = &settings.offered {
            writeln!(
                out,
                "profile {}: this machine's default ({why}; --profile chooses another)\n",
                request.profile
            )?;
        }
        if pythons_here && request.profile.framework_component().is_some() {
            writeln!(out, "{}\n", style.words().pythons_here)?;
        }
        if let Some(r) = &reach {
            let words = style.lang().reach();
            writeln!(out, "{}", super::reach::render(r, words, style))?;
            if let Some(g) = &greyed {
                writeln!(
                    out,
                    "{}{}",
                    super::reach::render_greyed(request.profile, g, words),
                    super::reach::render_fix(words)
                )?;
            }
        }
        write!(
            out,
            "{}",
            render(&shown, &system, style, global.verbose > 0)
        )?;
        if let Some(t) = &toolkit {
            write!(out, "{}", t.render())?;
        }
        if let Some(r) = &route {
            writeln!(out, "\n{}", style.heading("Framework route"))?;
            for line in r.lines() {
                writeln!(out, "  {line}")?;
            }
        }
    }
    if let Some(crate::install::python::route::RouteView::None { attempts, .. }) = &route {
        return Ok(if attempts.iter().any(|a| a.network) {
            ExitCode::Network
        } else {
            ExitCode::Unsupported
        });
    }
    Ok(match plan.status {
        Status::Ok if greyed.is_some() => ExitCode::Network,
        Status::Ok => ExitCode::Ok,
        Status::Unsupported => ExitCode::Unsupported,
    })
}

/// The human plan: a table, then reasons, warnings and (with -v) the rejected alternatives.
pub fn render(plan: &Plan, system: &System, style: &Style, verbose: bool) -> String {
    let w = style.words();
    let mut o = String::new();
    let gpus: Vec<&str> = system.nvidia_gpus().map(|g| g.name.as_str()).collect();
    let target = if gpus.is_empty() {
        w.this_machine.to_owned()
    } else {
        gpus.join(" + ")
    };
    let profile = plan.profile.to_string();
    match plan.status {
        Status::Ok => o.push_str(&style.heading(&(w.plan_for)(&profile, &target))),
        Status::Unsupported => o.push_str(&style.bad(&(w.no_stack_for)(&profile, &target))),
    }
    o.push('\n');
    if !plan.components.is_empty() {
        let [component, action, version, reason] = w.columns;
        o.push_str(&format!(
            "  {} {} {} {reason}\n",
            pad(component, 12),
            pad(action, 8),
            pad(version, 22)
        ));
        for c in &plan.components {
            let mut version = c.version.clone().unwrap_or_else(|| "-".into());
            if let Some(v) = &c.variant {
                version.push_str(&format!(" ({v})"));
            }
            if let Some(v) = &c.cuda_variant {
                version.push_str(&format!(" (cuda{v})"));
            }
            let action = match c.action {
                Action::Keep => "keep",
                Action::Install => "install",
                Action::Upgrade => "upgrade",
                Action::Skip => "skip",
                Action::Manual => "manual",
            };
            let action = format!("{action:<8}");
            let action = match c.action {
                Action::Install | Action::Upgrade => style.good(&action),
                Action::Manual => style.warn(&action),
                _ => action,
            };
            o.push_str(&format!(
                "  {:<12} {action} {version:<22} {}\n",
                c.name,
                translate(style.lang(), &c.reason)
            ));
            if let Some(p) = &c.path {
                o.push_str(&format!(
                    "  {:<12} {:<8} {:<22} {}\n",
                    "",
                    "",
                    "",
                    style.dim(&format!("at {p}"))
                ));
            }
            for cmd in &c.commands {
                o.push_str(&format!(
                    "  {:<12} {:<8} {:<22} {}\n",
                    "",
                    "",
                    "",
                    style.dim(&format!("$ {cmd}"))
                ));
            }
            if let Some(url) = &c.index_url {
                if c.name == "torch" {
                    o.push_str(&format!(
                        "  {:<12} {:<8} {:<22} {}\n",
                        "",
                        "",
                        "",
                        style.dim(&format!("from {url}"))
                    ));
                }
            }
        }
    }
    if !plan.constraints.is_empty() {
        o.push('\n');
        o.push_str(&style.heading(w.constraints));
        o.push('\n');
        for c in &plan.constraints {
            o.push_str(&format!(
                "  {:<34} {}\n",
                c.requirement,
                translate(style.lang(), &c.reason)
            ));
        }
    }
    if !plan.reasons.is_empty() {
        o.push('\n');
        o.push_str(&style.heading(if plan.status == Status::Ok {
            w.why
        } else {
            w.why_not
        }));
        o.push('\n');
        for r in &plan.reasons {
            o.push_str(&format!("  - {r}\n"));
        }
    }
    if !plan.warnings.is_empty() {
        o.push('\n');
        o.push_str(&style.heading(w.warnings));
        o.push('\n');
        for w in &plan.warnings {
            o.push_str(&format!("  {} {w}\n", style.warn("!")));
        }
    }
    o.push_str(&style.dim(&format!(
        "\n{}\n",
        (w.catalog)(
            &plan.catalog.origin,
            &plan.catalog.date.to_string(),
            plan.catalog.age_days
        )
    )));
    if verbose && !plan.rejected.is_empty() {
        o.push('\n');
        o.push_str(&style.heading(w.rejected));
        o.push('\n');
        for r in &plan.rejected {
            o.push_str(&format!("  - {r}\n"));
        }
    } else if !plan.rejected.is_empty() {
        let n = plan.rejected.len();
        o.push_str(&style.dim(&format!("\n{}\n", (w.rejected_count)(n))));
    }
    o
}
