//! `cudaup container`: GPUs in Docker and Podman containers, through CDI by default. The
//! arguments are in [`args`]; what each command does is in the `container` module; this file
//! calls it and renders the answer.

mod args;
mod offer;
mod render;

use std::io::Write;
use std::path::PathBuf;

use crate::container::{self, ContainerError, Survey};
use crate::detect::Root;
use crate::error::{Error, ExitCode, Result};
use crate::world::process::Process;
use crate::world::runner::Runner;

pub use args::ContainerCommand;
use args::{DockerfileArgs, DoctorArgs, SetupArgs, VerifyArgs};

pub(super) use offer::wizard_step;
use render::render_undone;
use render::{render_plan, render_setup};

use super::root::RootArgs;
use super::Style;

pub(super) fn run(
    cmd: &ContainerCommand,
    process: &Process,
    runner: &dyn Runner,
    catalog: &crate::catalog::Catalog,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    container::linux_only()?;
    match cmd {
        ContainerCommand::Plan(args) => {
            let survey = survey(&args.root, process, runner)?;
            if args.json {
                let text = serde_json::to_string_pretty(&survey).expect("the survey serialises");
                writeln!(out, "{text}")?;
            } else {
                render_plan(&survey, style, out)?;
            }
            Ok(ExitCode::Ok)
        }
        ContainerCommand::Spec(args) => {
            let root = RootArgs::at(args.driver_root.clone()).root()?;
            let generated =
                container::cdi::generate::generate(&root).map_err(ContainerError::from)?;
            out.write_all(&generated.spec.to_json())?;
            let mut err = std::io::stderr().lock();
            for s in &generated.skipped {
                writeln!(err, "note: left out of the spec: {s}")?;
            }
            Ok(ExitCode::Ok)
        }
        ContainerCommand::Setup(args) => setup(args, process, runner, style, out),
        ContainerCommand::Doctor(args) => doctor(args, process, runner, catalog, style, out),
        ContainerCommand::Dockerfile(args) => dockerfile(args, process, runner, catalog, out),
        ContainerCommand::Verify(args) => {
            let (report, _) = verify(args, process, runner)?;
            if args.json {
                let text = serde_json::to_string_pretty(&report).expect("serialises");
                writeln!(out, "{text}")?;
            } else {
                write!(out, "{}", super::verify::render(&report, style, false))?;
            }
            Ok(if report.ok {
                ExitCode::Ok
            } else {
                ExitCode::Verification
            })
        }
        ContainerCommand::Uninstall(args) => {
            let home = home(process)?;
            let undone = crate::install::host_files::undo(&home, args.dry_run)
                .map_err(ContainerError::from)?;
            if args.json {
                let text = serde_json::to_string_pretty(&undone).expect("serialises");
                writeln!(out, "{text}")?;
            } else {
                render_undone(&undone, style, out)?;
            }
            Ok(if undone.iter().any(|u| u.action == "kept") {
                ExitCode::Failure
            } else {
                ExitCode::Ok
            })
        }
    }
}

fn setup(
    args: &SetupArgs,
    process: &Process,
    runner: &dyn Runner,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let survey = survey(&args.root, process, runner)?;
    let home = home(process)?;
    let driver_root = RootArgs::at(args.driver_root.clone()).root()?;
    if let Some(p) = &args.root_prefix {
        if !p.is_dir() {
            return Err(Error::Usage(format!(
                "--root-prefix {}: not a directory",
                p.display()
            )));
        }
    }
    let host_root = args.root.root()?;
    let opts = container::setup::Options {
        install_toolkit: args.toolkit,
        only: args.engine,
        ..container::setup::Options::for_host(
            process,
            runner,
            &host_root,
            &driver_root,
            args.root_prefix.as_deref(),
        )
        .map_err(ContainerError::from)?
    };
    let plan = container::setup::plan(&survey, &opts).map_err(ContainerError::from)?;
    let root_needed = plan.root_needed(args.yes);
    if !args.json {
        render_setup(&survey, &plan, style, out)?;
    }
    if args.dry_run {
        if args.json {
            let text =
                serde_json::to_string_pretty(&serde_json::json!({"survey": survey, "plan": plan}))
                    .expect("serialises");
            writeln!(out, "{text}")?;
        }
        return Ok(ExitCode::Ok);
    }
    if !root_needed.is_empty() {
        return Err(ContainerError::NeedsRoot {
            paths: root_needed
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            toolkit: if args.toolkit { " --toolkit" } else { "" },
        }
        .into());
    }
    let mut lines = Vec::new();
    let probe = || {
        container::toolkit::probe(
            runner,
            &container::toolkit::facts(),
            &process.path_entries(),
        )
        .version()
    };
    let applied = container::setup::apply(&plan, &home, args.yes, runner, &probe, &mut |l| {
        lines.push(l.to_owned())
    })?;
    if args.json {
        let text = serde_json::to_string_pretty(
            &serde_json::json!({"survey": survey, "plan": plan, "applied": applied}),
        )
        .expect("serialises");
        writeln!(out, "{text}")?;
        return Ok(ExitCode::Ok);
    }
    for l in &lines {
        writeln!(out, "{l}")?;
    }
    for p in &applied.written {
        writeln!(out, "  {} {}", style.good("wrote"), p.display())?;
    }
    if let Some(v) = &applied.toolkit {
        writeln!(
            out,
            "  {} the NVIDIA Container Toolkit {v} (nvidia-ctk --version)",
            style.good("installed")
        )?;
    }
    if !args.yes && !plan.commands.is_empty() {
        writeln!(out, "Run these (or run setup again with --yes):")?;
        for c in &plan.by_hand() {
            writeln!(out, "  {}", crate::install::driver::shell_line(c))?;
        }
    }
    writeln!(out, "`cudaup container uninstall` puts every file back.")?;
    Ok(ExitCode::Ok)
}

fn home(process: &Process) -> Result<PathBuf> {
    Ok(crate::install::home::Home::of(process)?.root().to_owned())
}

fn survey(args: &RootArgs, process: &Process, runner: &dyn Runner) -> Result<Survey> {
    let root = args.root()?;
    let home = home(process)?;
    Ok(container::survey(&inputs(&root, process, &home), runner))
}

/// What the container module reads of this process: `root`'s files, `PATH`,
/// `$XDG_RUNTIME_DIR`, `$CUDAUP_HOME`.
fn inputs<'a>(
    root: &'a Root,
    process: &Process,
    home: &'a std::path::Path,
) -> container::Inputs<'a> {
    container::Inputs {
        root,
        path_entries: process.path_entries(),
        xdg_runtime_dir: process.path_var("XDG_RUNTIME_DIR"),
        cudaup_home: home,
    }
}

/// The container checks as doctor findings.
pub fn container_findings(
    root: &Root,
    process: &Process,
    runner: &dyn Runner,
) -> Result<Vec<crate::doctor::Diagnosis>> {
    let home = home(process)?;
    Ok(container::doctor::for_process(root, process, runner, &home))
}

fn doctor(
    args: &DoctorArgs,
    process: &Process,
    runner: &dyn Runner,
    catalog: &crate::catalog::Catalog,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    if let Some(text) = &args.error {
        let id = container::doctor::explain_error(text);
        if args.json {
            writeln!(out, "{}", serde_json::json!({"error": text, "check": id}))?;
        } else {
            match id {
                Some(id) => writeln!(
                    out,
                    "{id}: run `cudaup container doctor` for its evidence and fix"
                )?,
                None => writeln!(out, "no container check explains this text")?,
            }
        }
        return Ok(if id.is_some() {
            ExitCode::Ok
        } else {
            ExitCode::Failure
        });
    }
    let root = args.root.root()?;
    let mut findings = container_findings(&root, process, runner)?;
    if let Some(image) = &args.image {
        findings.extend(container::image::image_finding(
            image,
            &root,
            &process.path_entries(),
            runner,
            catalog,
        )?);
    }
    let report = crate::doctor::Report {
        findings,
        skipped: Vec::new(),
    };
    if args.json {
        let text = serde_json::to_string_pretty(&report.document()).expect("json");
        writeln!(out, "{text}")?;
    } else {
        write!(out, "{}", super::doctor::render(&report, style, false))?;
    }
    Ok(if report.has_errors() {
        ExitCode::Failure
    } else {
        ExitCode::Ok
    })
}

fn dockerfile(
    args: &DockerfileArgs,
    process: &Process,
    runner: &dyn Runner,
    catalog: &crate::catalog::Catalog,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    if let Some(image) = &args.check {
        let path = process.path_entries();
        let fit = container::image::image_fit(image, &Root::live(), &path, runner, catalog)?;
        if args.json {
            let text = serde_json::to_string_pretty(&fit).expect("serialises");
            writeln!(out, "{text}")?;
        } else if fit.runs {
            writeln!(
                out,
                "{image} runs on driver {} (CUDA {}): it asks {}",
                fit.driver,
                fit.driver_cuda.as_deref().unwrap_or("?"),
                fit.requirement
                    .as_ref()
                    .map(|r| r.raw.clone())
                    .unwrap_or_else(|| "no NVIDIA_REQUIRE_CUDA".into())
            )?;
        } else {
            for d in container::image::image_finding(image, &Root::live(), &path, runner, catalog)?
            {
                writeln!(out, "{}", d.finding.message)?;
                for l in d.finding.fix.iter().flat_map(|f| f.lines()) {
                    writeln!(out, "  - {l}")?;
                }
            }
        }
        return Ok(if fit.runs {
            ExitCode::Ok
        } else {
            ExitCode::Failure
        });
    }
    let system = match &args.system {
        Some(path) => crate::detect::picture::load_system(path, catalog)?,
        None => super::detect::detect_live(process, runner, catalog, false).system,
    };
    let settings = crate::settings::InstallSettings::resolve(args.stack.options()?, process, None)?;
    let plan = crate::resolve::resolve(&system, &settings.request, catalog);
    let driver = system.driver.as_ref().map(|d| d.version.clone());
    let df = container::dockerfile::render(&plan, driver.as_deref(), catalog)
        .map_err(ContainerError::from)?;
    if args.json {
        let j = serde_json::json!({"base": df.base, "notes": df.notes, "dockerfile": df.text});
        writeln!(out, "{}", serde_json::to_string_pretty(&j).expect("json"))?;
    } else {
        for n in &df.notes {
            writeln!(out, "# {n}")?;
        }
        write!(out, "{}", df.text)?;
    }
    Ok(ExitCode::Ok)
}

/// Runs the in-container proof; the report is verify's document. Returns the report and the
/// engine used.
pub fn verify(
    args: &VerifyArgs,
    process: &Process,
    runner: &dyn Runner,
) -> Result<(crate::verify::Report, Option<String>)> {
    let checks = checks_in_container(&args.root, process, runner, args.engine, args.nvcc.clone())?;
    Ok((crate::verify::Report::new(None, Vec::new(), checks), None))
}

/// The in-container checks on the host `root` names (`container verify`, and `cudaup verify
/// --container` on this machine).
pub(super) fn checks_in_container(
    root: &RootArgs,
    process: &Process,
    runner: &dyn Runner,
    only: Option<container::engine::Kind>,
    nvcc: Option<PathBuf>,
) -> Result<Vec<crate::verify::Check>> {
    let root = root.root()?;
    let home = home(process)?;
    Ok(container::smoke::checks_in_container(
        &inputs(&root, process, &home),
        runner,
        only,
        nvcc,
    )?)
}
