//! `cudaup container`: GPUs in Docker and Podman containers, through CDI by default.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::container::{self, Survey};
use crate::detect::Root;
use crate::error::{Error, ExitCode, Result};
use crate::world::process::Process;
use crate::world::runner::Runner;

use super::Style;

/// `cudaup container …`.
#[derive(Debug, Subcommand)]
pub enum ContainerCommand {
    /// Show the container engines here (Docker and Podman, rootful and rootless, versions,
    /// cgroups, SELinux, WSL) and how each will reach the GPUs, with the reasons: CDI by
    /// default, the toolkit's legacy runtime only for engines too old for CDI
    #[command(after_help = "Examples:\n  cudaup container plan\n  cudaup container plan --json")]
    Plan(PlanArgs),
    /// Print the CDI spec of the loaded driver (what `nvidia-ctk cdi generate` writes): device
    /// nodes, the driver's libraries and binaries, firmware
    #[command(
        after_help = "Examples:\n  cudaup container spec\n  cudaup container spec --driver-root /captured/tree"
    )]
    Spec(SpecArgs),
}

/// Where the host's files are read from.
#[derive(Debug, Clone, Args)]
pub struct RootArgs {
    /// Read the host's files (cgroups, SELinux, WSL, the driver) under DIR instead of /
    #[arg(long, value_name = "DIR")]
    pub system_root: Option<PathBuf>,
}

impl RootArgs {
    fn root(&self) -> Result<Root> {
        match &self.system_root {
            Some(d) if !d.is_dir() => Err(Error::Usage(format!(
                "--system-root {}: not a directory",
                d.display()
            ))),
            Some(d) => Ok(Root::at(d)),
            None => Ok(Root::live()),
        }
    }
}

/// `cudaup container plan` flags.
#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// Print the survey (host, engines, choices) as JSON
    #[arg(long)]
    pub json: bool,
}

/// `cudaup container spec` flags.
#[derive(Debug, Args)]
pub struct SpecArgs {
    /// Read the driver's files under DIR instead of / (the spec's host paths then lie under DIR)
    #[arg(long, value_name = "DIR")]
    pub driver_root: Option<PathBuf>,
}

pub(super) fn run(
    cmd: &ContainerCommand,
    process: &Process,
    runner: &dyn Runner,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
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
            let root = RootArgs {
                system_root: args.driver_root.clone(),
            }
            .root()?;
            let generated = container::cdi::generate::generate(&root)
                .map_err(|e| Error::Usage(e.to_string()))?;
            out.write_all(&generated.spec.to_json())?;
            Ok(ExitCode::Ok)
        }
    }
}

fn home(process: &Process) -> Result<PathBuf> {
    process.cudaup_home().ok_or_else(|| {
        Error::Usage("cannot tell where cudaup's home is: set HOME or --home".into())
    })
}

fn survey(args: &RootArgs, process: &Process, runner: &dyn Runner) -> Result<Survey> {
    let root = args.root()?;
    let home = home(process)?;
    let inputs = container::Inputs {
        root: &root,
        path_entries: process.path_entries(),
        xdg_runtime_dir: process.path_var("XDG_RUNTIME_DIR"),
        cudaup_home: &home,
    };
    Ok(container::survey(&inputs, runner))
}

fn render_plan(s: &Survey, style: &Style, out: &mut dyn Write) -> Result<()> {
    let h = &s.host;
    writeln!(out, "{}", style.heading("Host"))?;
    writeln!(
        out,
        "  driver      {}",
        h.driver_version.as_deref().unwrap_or("not loaded")
    )?;
    writeln!(out, "  cgroups     {:?}", h.cgroups)?;
    writeln!(out, "  SELinux     {:?}", h.selinux)?;
    match &h.wsl {
        Some(w) => writeln!(
            out,
            "  WSL         {} (/dev/dxg {}, libdxcore.so {})",
            w.version,
            if w.dxg { "present" } else { "missing" },
            if w.libdxcore { "present" } else { "missing" }
        )?,
        None => writeln!(out, "  WSL         no")?,
    }
    writeln!(
        out,
        "  user        {}",
        if h.root { "root" } else { "not root" }
    )?;
    writeln!(out)?;
    writeln!(out, "{}", style.heading("Engines"))?;
    if s.engines.is_empty() {
        writeln!(
            out,
            "  none found on PATH (docker, podman): install one (Podman needs no daemon and no root: `apt-get install podman`)"
        )?;
    }
    for (e, c) in s.engines.iter().zip(&s.choices) {
        let cgroups = match (&e.cgroup_version, &e.cgroup_driver) {
            (Some(v), Some(d)) => format!(", cgroup v{v} ({d})"),
            _ => String::new(),
        };
        writeln!(out, "  {}{cgroups}", style.good(&e.label()))?;
        let path = match &c.path {
            container::choice::Path::Cdi { spec_dir, .. } => {
                format!("CDI, spec in {}", spec_dir.display())
            }
            container::choice::Path::Legacy { .. } => {
                "legacy `nvidia` runtime (NVIDIA Container Toolkit)".to_owned()
            }
            container::choice::Path::None => "nothing to set up".to_owned(),
        };
        writeln!(out, "    path      {path}")?;
        for r in &c.reasons {
            writeln!(out, "    {} {r}", style.dim("because"))?;
        }
        if !c.run_flags.is_empty() {
            writeln!(
                out,
                "    run with  {} run {} IMAGE",
                e.kind.program(),
                c.run_flags.join(" ")
            )?;
        }
    }
    Ok(())
}
