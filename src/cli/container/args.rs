//! The arguments of `cudaup container …`: the subcommands and their flags (parsed by clap; what
//! they do is in `cli/container.rs` and the `container` module).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::cli::root::RootArgs;
use crate::container;

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
    /// Set the engines up: the CDI spec of the loaded driver where each engine reads it (no
    /// root needed for rootless Podman), the engines' configuration, and with --toolkit the
    /// NVIDIA Container Toolkit from NVIDIA's repository (four packages pinned to one version,
    /// never below the CVE floor). Every file is undone by `cudaup container uninstall` (and
    /// `cudaup uninstall`)
    #[command(
        after_help = "Examples:\n  cudaup container setup --dry-run\n  cudaup container setup\n  sudo cudaup container setup --toolkit --yes\n\n\
Commands (package installs, daemon restarts) run only with --yes; without it they are printed."
    )]
    Setup(SetupArgs),
    /// Put back every file `container setup` changed, byte for byte
    Uninstall(UninstallArgs),
    /// Check the container setup: toolkit (missing, version skew, under the CVE floor), runtime
    /// registration, rootless cgroups, CDI specs (missing, unreadable, stale), CDI next to the
    /// legacy hook, engines too old for CDI, the daemon-reload risk, SELinux, WSL, old apt lists;
    /// each with its evidence and fix
    #[command(
        after_help = "Examples:\n  cudaup container doctor\n  cudaup container doctor --error 'unresolvable CDI devices nvidia.com/gpu=all'\n  cudaup container doctor --image nvcr.io/nvidia/pytorch:25.01-py3"
    )]
    Doctor(DoctorArgs),
    /// Print a Dockerfile of this machine's plan: NVIDIA's CUDA image whose CUDA the host driver
    /// runs, or a slim Python base, with the plan's framework pins as pip constraints
    #[command(
        after_help = "Examples:\n  cudaup container dockerfile --profile pytorch > Dockerfile\n  cudaup container dockerfile --check nvcr.io/nvidia/pytorch:25.01-py3"
    )]
    Dockerfile(DockerfileArgs),
    /// Prove it: build addKernel with the host's nvcc, import a tiny image holding it, run it in a
    /// container through the chosen path, and compare the GPU UUIDs inside with the host's
    Verify(VerifyArgs),
}

/// `cudaup container doctor` flags.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// Say which check explains this error text (what `docker run` or `podman run` printed)
    #[arg(long, value_name = "TEXT")]
    pub error: Option<String>,
    /// Also check whether this driver runs IMAGE (its NVIDIA_REQUIRE_CUDA; the image must be
    /// pulled)
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// Print the findings as JSON
    #[arg(long)]
    pub json: bool,
}

/// `cudaup container dockerfile` flags.
#[derive(Debug, Args)]
pub struct DockerfileArgs {
    /// Plan for the machine described in FILE (a `detect --json` document) instead of this one
    #[arg(long, value_name = "FILE")]
    pub system: Option<PathBuf>,
    #[command(flatten)]
    pub stack: crate::cli::args::StackArgs,
    /// Instead: read IMAGE's NVIDIA_REQUIRE_CUDA (through the engine's inspect) and say whether
    /// this driver runs it
    #[arg(long, value_name = "IMAGE")]
    pub check: Option<String>,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

/// `cudaup container verify` flags.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// Only this engine (docker or podman)
    #[arg(long, value_enum)]
    pub engine: Option<container::engine::Kind>,
    /// The nvcc to build addKernel with [default: the active toolkit's, else the one on PATH,
    /// else /usr/local/cuda/bin/nvcc]
    #[arg(long, value_name = "FILE")]
    pub nvcc: Option<PathBuf>,
    /// Print the checks as JSON (verify's document)
    #[arg(long)]
    pub json: bool,
}

/// `cudaup container setup` flags.
#[derive(Debug, Args)]
pub struct SetupArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// Write system files (/etc/cdi, /etc/docker/daemon.json, …) under DIR instead of /
    #[arg(long, value_name = "DIR")]
    pub root_prefix: Option<PathBuf>,
    /// Read the driver's files under DIR instead of / for the spec
    #[arg(long, value_name = "DIR")]
    pub driver_root: Option<PathBuf>,
    /// Only this engine (docker or podman)
    #[arg(long, value_enum)]
    pub engine: Option<container::engine::Kind>,
    /// Install (or upgrade) the NVIDIA Container Toolkit from NVIDIA's repository
    #[arg(long)]
    pub toolkit: bool,
    /// Run the commands (package installs, restarts) too
    #[arg(short, long)]
    pub yes: bool,
    /// Show what would be written and run, and change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print the plan (and what was done) as JSON
    #[arg(long)]
    pub json: bool,
}

/// `cudaup container uninstall` flags.
#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// Show what would be put back, and change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print what was done as JSON
    #[arg(long)]
    pub json: bool,
}

impl ContainerCommand {
    /// Whether it changes the host files cudaup records in `$CUDAUP_HOME` (and so takes the
    /// home's lock: two setups at once would race on the host-file receipts).
    pub fn changes_home(&self) -> bool {
        match self {
            ContainerCommand::Setup(a) => !a.dry_run,
            ContainerCommand::Uninstall(a) => !a.dry_run,
            _ => false,
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
