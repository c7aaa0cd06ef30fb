//! `cudaup mirror create`: the flags become settings, the settings an [`InstallPlan`] for this
//! machine (or a `--system` picture's, unspliced: the bundle is for that machine's Python), and
//! `install::mirror::create` fills the directory; this file renders what it says.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::Args;

use crate::catalog::Catalog;
use crate::error::{ExitCode, Result};
use crate::install::home::Home;
use crate::install::locate::Net;
use crate::install::mirror::{
    MirrorCtx, MirrorEvents, MirrorOptions, MirroredFramework, MirroredToolkit,
};
use crate::install::plan::{InstallPlan, PlanError, Target};
use crate::install::python::bundle::MANIFEST;
use crate::install::run::Progress;
use crate::install::Source;
use crate::settings::{InstallOptions, InstallSettings};
use crate::world::process::Process;
use crate::world::progress::Reporter;
use crate::world::runner::Runner;

use super::args::{source_options, IndexArgs, SourceArgs, StackArgs};
use super::{GlobalArgs, Style};

/// `cudaup mirror` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum MirrorCommand {
    /// Download everything a plan needs into DIR, for a machine without network: the toolkit
    /// (NVIDIA's layout with its redistrib JSONs, or with --source wheels NVIDIA's wheels) and
    /// the framework with every dependency for the target's Python and platform, in a PEP 503
    /// index with a manifest (cudaup-bundle.json); `cudaup install --index-url DIR` (or
    /// `--mirror DIR`) then needs no network
    Create(MirrorArgs),
}

/// `cudaup mirror create` flags.
#[derive(Debug, Args)]
pub struct MirrorArgs {
    /// The directory to fill (created if needed; existing files are checked, not refetched)
    pub dir: PathBuf,
    /// Plan for the machine described in FILE (its `detect --json`) instead of this one
    #[arg(long, value_name = "FILE")]
    pub system: Option<PathBuf>,
    #[command(flatten)]
    pub stack: StackArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Leave cuDNN out
    #[arg(long)]
    pub no_cudnn: bool,
    /// Also mirror this machine architecture (x86_64, aarch64); repeatable [default: the
    /// planned machine's]
    #[arg(long = "arch", value_name = "ARCH")]
    pub arches: Vec<String>,
    #[command(flatten)]
    pub index: IndexArgs,
    /// The target machine's glibc (2.N), which decides the manylinux wheels it can run
    /// [default: this machine's; 2.28 with --system]
    #[arg(long, value_name = "2.N", value_parser = parse_glibc)]
    pub glibc: Option<(u32, u32)>,
}

impl MirrorArgs {
    /// The flags as one layer of settings, each value checked.
    fn options(&self, process: &Process) -> Result<InstallOptions> {
        Ok(InstallOptions {
            no_cudnn: self.no_cudnn.then_some(true),
            ..source_options(&self.source, &self.index, &self.stack, process)?
        })
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn run_mirror(
    cmd: &MirrorCommand,
    global: &GlobalArgs,
    process: &Process,
    runner: &dyn Runner,
    catalog: &Catalog,
    style: &Style,
    cancel: Arc<AtomicBool>,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let MirrorCommand::Create(args) = cmd;
    let s = InstallSettings::resolve(args.options(process)?, process, None)?;
    let system = match &args.system {
        Some(p) => crate::detect::picture::load_system(p, catalog)?,
        None => super::detect::detect_live(process, runner, catalog, false).system,
    };
    // No profile chosen: the pictured machine's offer, as install there will take.
    let s = s.for_machine(&system, catalog)?;
    let home = Home::of(process)?;
    let target = match args.system {
        Some(_) => Target::Picture,
        None => Target::Here,
    };
    let plan = match InstallPlan::new(&s, &system, catalog, &home, target) {
        Ok(plan) => plan,
        Err(PlanError::Unsupported(plan)) => return super::install::render_unsupported(&plan, out),
        Err(e) => return Err(e.into()),
    };
    let net = Net::new(process, &home.cache(), s.allow_http, cancel)?;
    let talk = !global.quiet;
    let mut shown = Shown {
        out: &mut *out,
        style,
        talk,
        quiet: global.quiet,
        tty: process.stdout_is_tty,
        dir: &args.dir,
    };
    let options = MirrorOptions {
        dir: args.dir.clone(),
        arches: args.arches.clone(),
        glibc: args.glibc,
        picture: args.system.is_some(),
    };
    let mut ctx = MirrorCtx {
        process,
        runner,
        catalog,
        home: &home,
        net: &net,
        events: &mut shown,
    };
    let made = crate::install::mirror::create(&plan, &options, &mut ctx)?;
    if talk {
        let mut pins = format!("--profile {}", plan.plan.profile.name());
        if let Some(c) = &made.manifest.toolkit {
            pins.push_str(&format!(" --cuda {}", c.cuda));
            if let Some(set) = &s.components {
                pins.push_str(&format!(" --components {set}"));
            }
        }
        writeln!(out, "  manifest: {}", args.dir.join(MANIFEST).display())?;
        writeln!(
            out,
            "  install from it (no network needed):  cudaup install {pins} {}",
            made.install_from.join(" ")
        )?;
    }
    Ok(ExitCode::Ok)
}

/// How `mirror create` is shown: the CLI's side of [`MirrorEvents`].
struct Shown<'a> {
    out: &'a mut dyn Write,
    style: &'a Style,
    /// Human output on stdout (not --quiet).
    talk: bool,
    quiet: bool,
    tty: bool,
    dir: &'a std::path::Path,
}

impl MirrorEvents for Shown<'_> {
    fn progress(&mut self, kind: Progress) -> Arc<dyn Reporter> {
        super::reporter::for_progress(kind, false, self.tty, self.quiet)
    }

    fn left_out(&mut self, note: &str) -> std::io::Result<()> {
        writeln!(self.out, "  left out: {note}")
    }

    fn toolkit_done(&mut self, done: &MirroredToolkit) -> std::io::Result<()> {
        if !self.talk {
            return Ok(());
        }
        let (count, bytes) = (done.count, indicatif::HumanBytes(done.bytes));
        let dir = self.dir.display();
        match done.source {
            Source::Redist(_) => writeln!(
                self.out,
                "{} {count} archive(s), {bytes} and {} manifest(s) in {dir}",
                self.style.good("mirrored"),
                done.manifests,
            ),
            Source::Wheels(_) => writeln!(
                self.out,
                "{} {count} toolkit wheel(s), {bytes} in {dir}",
                self.style.good("bundled"),
            ),
        }
    }

    fn framework_done(&mut self, done: &MirroredFramework) -> std::io::Result<()> {
        if !self.talk {
            return Ok(());
        }
        writeln!(
            self.out,
            "{} {} ({} wheel(s) with every dependency, {}) from {} {}",
            self.style.good("bundled"),
            done.route.requirements.join(" "),
            done.wheels,
            indicatif::HumanBytes(done.bytes),
            done.route.route.label(),
            done.route.base
        )?;
        writeln!(
            self.out,
            "  for Python {} on {} (log: {})",
            done.python,
            done.platform.as_deref().unwrap_or("?"),
            done.log.display()
        )
    }

    fn uv_done(&mut self, file: &str, bytes: u64) -> std::io::Result<()> {
        if !self.talk {
            return Ok(());
        }
        writeln!(
            self.out,
            "{} {file} ({}), checked against manifests/uv.toml: installs from the bundle bring uv from it",
            self.style.good("bundled"),
            indicatif::HumanBytes(bytes)
        )
    }
}

/// `--glibc 2.N`, checked by clap as the flag is parsed.
fn parse_glibc(text: &str) -> std::result::Result<(u32, u32), String> {
    let mut it = text.split('.').map(|p| p.parse::<u32>().ok());
    match (it.next().flatten(), it.next().flatten(), it.next()) {
        (Some(major), Some(minor), None) if major == 2 => Ok((major, minor)),
        _ => Err("give the target's glibc as 2.N (e.g. 2.35 for Ubuntu 22.04)".into()),
    }
}
