//! `cudaup lock`: the arguments, and the rendering of what [`crate::lock`] makes and checks.
//! `lock --system a.json --system b.json` writes one lock for the fleet, `lock --check FILE`
//! says whether this machine has its part, `lock --pylock FILE` prints its Python part as PEP
//! 751 `pylock.toml`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::Args;

use crate::catalog::Catalog;
use crate::error::{ExitCode, Result};
use crate::install::home::Home;
use crate::install::plan::{InstallPlan, PlanError, Target};
use crate::lock::{Host, Lock};
use crate::settings::{InstallOptions, InstallSettings};
use crate::world::process::Process;
use crate::world::runner::Runner;

use super::args::{source_options, IndexArgs, SourceArgs, StackArgs};
use super::Style;

/// `cudaup lock` flags.
#[derive(Debug, Args)]
pub struct LockArgs {
    /// A machine picture (`cudaup detect --json` run there, or a file holding its `os` and
    /// `gpus`); repeat for every kind of host the fleet has [default: this machine]
    #[arg(long = "system", value_name = "FILE")]
    pub systems: Vec<PathBuf>,
    #[command(flatten)]
    pub stack: StackArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub index: IndexArgs,
    /// Leave cuDNN out
    #[arg(long)]
    pub no_cudnn: bool,
    /// Write to FILE instead of stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Say whether this machine (or the one --system pictures) has its part of the lock LOCK:
    /// exit code 0 when it does, 1 when something differs, 5 when the lock does not cover it
    #[arg(long, value_name = "LOCK", conflicts_with = "pylock")]
    pub check: Option<PathBuf>,
    /// Print the Python part of the lock LOCK as PEP 751 pylock.toml
    #[arg(long, value_name = "LOCK")]
    pub pylock: Option<PathBuf>,
}

/// Reads the lock at `path`.
pub(super) fn read(path: &Path) -> Result<Lock> {
    let text = crate::world::fs::read_regular_text(path, 64 << 20)?;
    Ok(Lock::parse(&path.display().to_string(), &text)?)
}

/// The pins of `host` as one layer of install settings: the lock's profile and exact releases.
pub(super) fn pins(lock: &Lock, host: &Host) -> Result<InstallOptions> {
    let pin = |v: &Option<String>| {
        v.as_deref()
            .map(crate::model::version::VersionPin::parse)
            .transpose()
            .map_err(|e| crate::lock::LockError::Differs(format!("the lock's {e}")))
    };
    let framework = |name: &str| {
        host.framework
            .as_ref()
            .filter(|f| f.name == name)
            .map(|f| f.version.clone())
    };
    let profile =
        <crate::model::request::Profile as clap::ValueEnum>::from_str(&lock.profile, true)
            .map_err(|_| crate::lock::LockError::Parse {
                path: "the lock".into(),
                message: format!("unknown profile {}", lock.profile),
            })?;
    Ok(InstallOptions {
        profile: Some(profile),
        cuda: pin(&host.cuda)?,
        cudnn: pin(&host.cudnn)?,
        torch: pin(&framework("torch"))?,
        tensorflow: pin(&framework("tensorflow"))?,
        jax: pin(&framework("jax"))?,
        python: pin(&host.python)?,
        ..InstallOptions::default()
    })
}

#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    args: &LockArgs,
    process: &Process,
    runner: &dyn Runner,
    catalog: &Catalog,
    style: &Style,
    cancel: Arc<AtomicBool>,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    if let Some(path) = &args.pylock {
        return emit(args, &crate::lock::pylock::export(&read(path)?), out);
    }
    if let Some(path) = &args.check {
        return check(args, path, process, runner, catalog, style, out);
    }
    let flags = InstallOptions {
        no_cudnn: args.no_cudnn.then_some(true),
        ..source_options(&args.source, &args.index, &args.stack, process)?
    };
    let settings = InstallSettings::resolve(flags, process, None)?;
    let home = Home::of(process)?;
    let mut pictures: Vec<(String, crate::model::system::System, Target)> = Vec::new();
    for p in &args.systems {
        let name = p.file_stem().map_or_else(
            || p.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        pictures.push((
            name,
            crate::detect::picture::load_system(p, catalog)?,
            Target::Picture,
        ));
    }
    if pictures.is_empty() {
        let live = super::detect::detect_live(process, runner, catalog, false).system;
        pictures.push(("here".into(), live, Target::Here));
    }
    let mut hosts = Vec::new();
    let mut profile = None;
    for (name, system, target) in pictures {
        let s = settings.clone().for_machine(&system, catalog)?;
        let plan = match InstallPlan::new(&s, &system, catalog, &home, target) {
            Ok(plan) => plan,
            Err(PlanError::Unsupported(plan)) => {
                writeln!(out, "{name}:")?;
                return super::install::render_unsupported(&plan, out);
            }
            Err(e) => return Err(e.into()),
        };
        let (located, fetcher) =
            crate::lock::make::locate(&plan, catalog, process, &home, cancel.clone())?;
        let dependency = match crate::lock::make::dependencies(
            &located,
            catalog,
            (process, runner, &home),
            &fetcher,
        )? {
            Ok(d) => d,
            Err(why) => {
                // stderr: the lock itself may be going to stdout.
                writeln!(
                    std::io::stderr().lock(),
                    "{name}: the framework's dependencies are not locked, only its own wheels ({why}): uv resolves them"
                )?;
                Vec::new()
            }
        };
        hosts.push(crate::lock::make::host(
            &name, &plan, &located, &fetcher, dependency,
        )?);
        profile.get_or_insert(plan.plan.profile.name());
    }
    let lock = crate::lock::make::assemble(catalog, profile.unwrap_or("full"), hosts);
    emit(args, &lock.to_toml(), out)
}

/// Writes `text` to `--output` (whole, or not at all) or stdout.
fn emit(args: &LockArgs, text: &str, out: &mut dyn Write) -> Result<ExitCode> {
    match &args.output {
        Some(path) => {
            use crate::world::fs::{write_atomic, Durability, Temp};
            write_atomic(path, text.as_bytes(), Temp::Unique, Durability::Fsync)?;
        }
        None => write!(out, "{text}")?,
    }
    Ok(ExitCode::Ok)
}

#[allow(clippy::too_many_arguments)]
fn check(
    args: &LockArgs,
    path: &Path,
    process: &Process,
    runner: &dyn Runner,
    catalog: &Catalog,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let lock = read(path)?;
    let live = super::detect::detect_live(process, runner, catalog, false).system;
    let system = match args.systems.first() {
        Some(p) => crate::detect::picture::load_system(p, catalog)?,
        None => live,
    };
    let host = lock.host_for(&system, &path.display().to_string())?;
    let home = Home::of(process)?;
    let receipts = crate::install::receipts::Receipts::load(home.root());
    let differences = crate::lock::check::differences(host, &system, &receipts);
    if differences.is_empty() {
        writeln!(
            out,
            "{}",
            style.good(&format!(
                "this machine matches host {} of {}",
                host.name,
                path.display()
            ))
        )?;
        return Ok(ExitCode::Ok);
    }
    writeln!(
        out,
        "{}",
        style.bad(&format!(
            "this machine differs from host {} of {}:",
            host.name,
            path.display()
        ))
    )?;
    for d in differences {
        writeln!(out, "  {d}")?;
    }
    writeln!(
        out,
        "  cudaup install --locked {} puts the locked stack here",
        path.display()
    )?;
    Ok(ExitCode::Failure)
}
