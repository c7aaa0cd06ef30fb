//! The command line: clap definitions, and the glue from parsed arguments to library calls.

mod args;
mod bench;
mod container;
mod detect;
mod doctor;
mod env;
mod fleet;
mod guard;
pub mod i18n;
mod install;
mod lock;
mod manifests;
mod mirror;
mod monitor;
mod plan;
mod reach;
mod repair;
mod reporter;
mod root;
mod self_copy;
mod style;
mod uninstall;
mod verify;
mod version;
mod wizard;

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::error::{ExitCode, Result};
use crate::world::process::Process;
use crate::world::runner::Runner;

pub use style::Style;

/// cudaup: from a bare OS to a working GPU deep-learning stack, and keeping it working.
#[derive(Debug, Parser)]
#[command(
    name = "cudaup",
    version,
    about = "From a bare OS to a working GPU deep-learning stack (driver, CUDA, cuDNN, PyTorch)",
    long_about = "cudaup detects your GPUs and what is installed, picks a driver, CUDA toolkit, cuDNN \
and framework that fit together and fit the hardware, installs them, and proves they work.\n\n\
Run `cudaup` alone at a terminal (or `cudaup wizard`) to be asked a few questions and set \
up; `cudaup detect` shows what this machine has; `cudaup install --config FILE --yes` \
sets up a machine unattended.",
    after_help = "Exit codes: 0 ok, 1 failure, 2 bad usage/config/manifest, 3 network, \
4 verification failed, 5 no compatible stack, 130 cancelled.",
    // `--version` also says where this binary is and whether new shells run it (cli/version.rs).
    disable_version_flag = true
)]
pub struct Cli {
    /// Print the version, where this binary is, and whether it is the copy in $CUDAUP_HOME/bin
    /// that new shells run
    #[arg(short = 'V', long)]
    pub version: bool,
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags every subcommand takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Where cudaup keeps toolkits, environments and receipts [default: ~/.local/share/cudaup]
    #[arg(long, global = true, env = crate::world::vars::CUDAUP_HOME, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Read the compatibility catalog from DIR instead of the copy built into cudaup
    #[arg(long, global = true, env = crate::world::vars::CUDAUP_MANIFESTS, value_name = "DIR")]
    pub manifests: Option<PathBuf>,
    /// Print only errors
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Explain more (repeat for debug logs: -vv)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// When to use colours
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// When another cudaup is changing $CUDAUP_HOME, exit (code 1, naming it) instead of
    /// waiting for it to finish
    #[arg(long, global = true)]
    pub no_wait: bool,
    /// The language of the reports (en, zh) [default: from LC_ALL, LC_MESSAGES or LANG]
    #[arg(long, global = true, value_enum)]
    pub lang: Option<i18n::Lang>,
}

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// When writing to a terminal and NO_COLOR is unset.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show what this machine has: OS, GPUs and their compute capability, driver, CUDA
    /// toolkits, cuDNN, Pythons with torch / TensorFlow, and what looks wrong
    #[command(
        after_help = "Examples:\n  cudaup detect\n  cudaup detect --json > machine.json\n  cudaup detect --system-root ./captured-tree\n\n\
scripts/capture-system-root.sh DIR copies the files detect reads into DIR, for bug reports."
    )]
    Detect(DetectArgs),
    /// Choose the driver, CUDA toolkit, cuDNN and framework for this machine (or another
    /// one's), with the reason for each choice
    #[command(
        after_help = "Examples:\n  cudaup plan\n  cudaup plan --profile pytorch --json\n  cudaup plan --torch 2.8 --cuda 12.8 -v\n  cudaup plan --system other-machine.json --profile cuda-dev\n\n\
Exit code 5 when no compatible stack exists; the output says why."
    )]
    Plan(plan::PlanArgs),
    /// Install what the plan chooses for a profile (driver, CUDA toolkit and cuDNN, PyTorch or
    /// TensorFlow in a venv): fetched, sha256-verified, unpacked and put in place in one step,
    /// with a receipt
    #[command(
        after_help = "Examples:\n  cudaup install --profile cuda-dev --dry-run\n  cudaup install --profile cuda-dev --cuda 12.8 --yes\n  cudaup install --profile cuda-dev --source wheels --index-url https://mirrors.example.cn/pypi/simple --yes\n  cudaup install --profile cuda-dev --mirror /mnt/usb/cuda-mirror --prefix /opt/cuda --yes\n\n\
Downloads resume after a broken connection and are cached in $CUDAUP_HOME/cache; Ctrl-C or any\n\
failure leaves the prefix as it was."
    )]
    Install(install::InstallArgs),
    /// Prove the installed stack works: nvidia-smi answers, nvcc is the installed release and
    /// compiles and runs a CUDA kernel (addKernel) on every GPU, cudart/cuBLAS/cuDNN load, and each
    /// venv's framework computes on every GPU; --bench adds TFLOP/s and copy bandwidth
    #[command(
        after_help = "Examples:\n  cudaup verify\n  cudaup verify --json\n  cudaup verify --bench\n  cudaup verify --toolkit /usr/local/cuda-13.0 --venv /opt/torch/.venv\n\n\
Exit code 4 when any check failed; checks that cannot apply here are skipped, not failed."
    )]
    Verify(verify::VerifyArgs),
    /// Print the environment script of the active stack (PATH, LD_LIBRARY_PATH, CUDA_HOME) for a
    /// shell: `eval "$(cudaup env)"`, or `cudaup env --shell fish | source`
    Env(env::EnvArgs),
    /// Check the whole stack for what is broken or about to break (driver, GPU support,
    /// toolkits, CUDA_HOME, LD_LIBRARY_PATH, torch builds, cuDNN, host compiler, disk space,
    /// cudaup's installed files), each with its evidence and fix
    Doctor(doctor::DoctorArgs),
    /// Put back what is broken, from the receipts: toolkit files (from the cache first, else
    /// fetched again), the planned framework over a damaged or CPU-only one, the env scripts,
    /// rc-file lines and cudaup's own copy in $CUDAUP_HOME/bin. A second repair finds nothing to do
    Repair(repair::RepairArgs),
    /// Remove everything cudaup installed — toolkits, the venvs it created, env scripts, rc-file
    /// lines (restored byte for byte), the download cache with --purge, and last its own copy in
    /// $CUDAUP_HOME/bin — and nothing else
    Uninstall(uninstall::UninstallArgs),
    /// Offline mirrors of NVIDIA's download layout
    #[command(subcommand)]
    Mirror(mirror::MirrorCommand),
    /// Work with the compatibility catalog
    #[command(subcommand)]
    Manifests(manifests::ManifestsCommand),
    /// Set up the stack by answering a few questions
    Wizard(wizard::WizardArgs),
    /// Is this machine as fast as it should be, and why not: ResNet-50 throughput per GPU against
    /// NVIDIA's figures, the largest batch, the input pipeline and multi-GPU scaling
    #[command(after_help = bench::AFTER_HELP)]
    Bench(bench::BenchArgs),
    /// Watch every GPU live (utilisation, memory, power, clocks and what holds them down, PCIe,
    /// NVLink, errors, processes), or run a command and say at the end why it was slow
    #[command(after_help = monitor::AFTER_HELP)]
    Monitor(monitor::MonitorArgs),
    /// One lock file for a whole fleet: the driver, the toolkit's archives, cuDNN, the framework
    /// wheels and uv, each with its sha256, for every machine picture (`install --locked FILE`
    /// installs exactly that)
    #[command(
        after_help = "Examples:\n  cudaup lock --system a.json --system b.json --profile pytorch -o cudaup.lock\n  cudaup lock --check cudaup.lock\n  cudaup lock --pylock cudaup.lock -o pylock.toml\n  cudaup install --locked cudaup.lock --yes"
    )]
    Lock(lock::LockArgs),
    /// The guard of a venv cudaup installed: constraints in its pip.conf and uv.toml keep the
    /// planned framework build, and a startup check says when another build replaced it
    #[command(subcommand)]
    Guard(guard::GuardCommand),
    /// Fleets: `fleet report DIR` reads the reports scripts/ansible/ collects from every host
    #[command(subcommand)]
    Fleet(fleet::FleetCommand),
    /// GPUs in Docker and Podman containers: which engines are here and how each reaches the
    /// GPUs (CDI by default), the CDI spec of the loaded driver
    #[command(subcommand)]
    Container(container::ContainerCommand),
}

/// `cudaup detect` flags.
#[derive(Debug, Args)]
#[command(mut_arg("system_root", |a| a.help("Read every file under DIR instead of /, and run no command and no NVML")))]
pub struct DetectArgs {
    /// Print the System document as JSON (the format `plan --system FILE` reads)
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub root: root::RootArgs,
    /// Also import torch in each Python to check that CUDA works (takes seconds)
    #[arg(long)]
    pub deep: bool,
}

/// Whether `command` changes `$CUDAUP_HOME` (and so takes its lock).
fn changes_home(command: &Command) -> bool {
    match command {
        Command::Install(a) => !a.dry_run,
        Command::Repair(a) => !a.dry_run,
        Command::Uninstall(_) | Command::Mirror(_) => true,
        Command::Wizard(a) => !a.dry_run,
        Command::Manifests(m) => m.changes_home(),
        Command::Container(c) => c.changes_home(),
        Command::Guard(g) => g.changes_home(),
        _ => false,
    }
}

/// The fetcher every command uses, caching in this process's home.
pub fn fetcher(
    process: &Process,
    allow_http: bool,
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
    reporter: std::sync::Arc<dyn crate::world::progress::Reporter>,
) -> Result<crate::fetch::Fetcher> {
    let cache = crate::install::home::Home::of(process)?.cache();
    Ok(crate::settings::net::fetcher(
        process, &cache, allow_http, cancel, reporter,
    )?)
}

/// The fetcher that asks the framework's routes (short timeouts), caching in this process's home.
pub fn probe_fetcher(
    process: &Process,
    allow_http: bool,
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Result<crate::fetch::Fetcher> {
    let cache = crate::install::home::Home::of(process)?.cache();
    Ok(crate::settings::net::probe_fetcher(
        process, &cache, allow_http, cancel,
    )?)
}

/// The one confirmation of install, repair and uninstall: `prompt [y/N]` on `out`, the answer
/// from stdin; without a terminal, `PromptError::NoTerminal` (exit 2, naming `--yes`).
fn confirm(process: &Process, out: &mut dyn Write, prompt: &str) -> Result<bool> {
    let terminal = process.stdin_is_tty && process.stdout_is_tty;
    let mut asker = crate::world::prompt::StdinPrompter::new(out, terminal);
    Ok(crate::world::prompt::Prompter::confirm(
        &mut asker, prompt, false,
    )?)
}

/// Takes the home's lock, saying on stderr whom it waits for. A home that does not exist has
/// nothing to protect from repair or uninstall, and is not made for them.
fn lock_home(
    process: &Process,
    no_wait: bool,
    command: Option<&Command>,
) -> Result<Option<crate::install::home::HomeLock>> {
    let home = crate::install::home::Home::of(process)?;
    let undoes = matches!(
        command,
        Some(
            Command::Repair(_)
                | Command::Uninstall(_)
                | Command::Container(container::ContainerCommand::Uninstall(_))
        )
    );
    if undoes && !home.root().is_dir() {
        return Ok(None);
    }
    let mut lock = home.lock(!no_wait, |holder| {
        let _ = writeln!(
            std::io::stderr(),
            "waiting for another cudaup ({holder}) to finish changing {} (--no-wait exits instead)",
            home.root().display()
        );
    })?;
    // Every command that writes into the home marks it as cudaup's first; uninstall only
    // reads the marker (it never makes a directory cudaup's).
    if !matches!(command, Some(Command::Uninstall(_))) {
        lock.claim()
            .map_err(crate::install::home::HomeError::from)?;
    } else {
        lock.uninstalling();
    }
    Ok(Some(lock))
}

/// Runs a parsed command line. Output goes to `out`; the caller prints errors.
pub fn run(
    cli: Cli,
    process: &mut Process,
    runner: &dyn Runner,
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    crate::world::checkpoint::arm(
        process
            .var(crate::world::vars::CUDAUP_TEST_CHECKPOINT)
            .map(str::to_owned),
    );
    crate::world::fs::space::arm(process.var(crate::world::vars::CUDAUP_TEST_FREE_BYTES));
    if let Some(home) = &cli.global.home {
        // Receipts and env scripts record this path; a relative one would mean a
        // different place from another directory, and a second run would not find them.
        let home = process.cwd().join(home);
        process.set_var(crate::world::vars::CUDAUP_HOME, home.display().to_string());
    }
    let style = Style::new(match cli.global.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => process.stdout_is_tty && process.var("NO_COLOR").is_none(),
    })
    .with_lang({
        // The wizard has a `--lang` of its own (the global one then does not reach it).
        let flag = match &cli.command {
            Some(Command::Wizard(a)) => a.lang.or(cli.global.lang),
            _ => cli.global.lang,
        };
        flag.unwrap_or_else(|| i18n::Lang::from_env(process))
    });
    i18n::report::set_progress_lang(style.lang());
    // A zh run says the library's English sentences in Chinese (i18n/messages.toml), line by
    // line, whatever command printed them.
    let mut translated;
    let out: &mut dyn Write = match style.lang() {
        i18n::Lang::Zh => {
            translated = i18n::messages::Translating::new(out, i18n::Lang::Zh);
            &mut translated
        }
        i18n::Lang::En => out,
    };
    if cli.version {
        return version::run(process, out);
    }
    // --manifests DIR, else the refreshed catalog when it is newer and intact, else the embedded.
    let refreshed = crate::install::home::Home::of(process)
        .ok()
        .map(|h| h.manifests_link());
    let selection = crate::catalog::select(cli.global.manifests.as_deref(), refreshed.as_deref());
    // One cudaup at a time changes a home: receipts, env scripts, rc hooks and the self copy
    // are read, changed and written back as one.
    let _lock = match &cli.command {
        Some(c) if changes_home(c) => lock_home(process, cli.global.no_wait, Some(c))?,
        None if process.stdin_is_tty && process.stdout_is_tty => {
            lock_home(process, cli.global.no_wait, None)?
        }
        _ => None,
    };
    // `manifests check` must work on a catalog too broken to load.
    if let Some(Command::Manifests(cmd)) = &cli.command {
        return manifests::run(cmd, &selection, &cli.global, process, cancel, &style, out);
    }
    let mut catalog = selection.load()?;
    catalog.notes.extend(selection.notes.iter().cloned());
    match cli.command {
        Some(Command::Detect(args)) => {
            detect::run(&args, &cli.global, process, runner, &catalog, &style, out)
        }
        Some(Command::Plan(args)) => {
            plan::run(&args, &cli.global, process, runner, &catalog, &style, out)
        }
        Some(Command::Install(args)) => install::run_install(
            &args,
            &cli.global,
            process,
            runner,
            &catalog,
            &style,
            cancel,
            out,
        ),
        Some(Command::Env(args)) => env::run(&args, process, out),
        Some(Command::Doctor(args)) => {
            doctor::run(&args, &cli.global, process, runner, &catalog, &style, out)
        }
        Some(Command::Verify(args)) => {
            verify::run(&args, &cli.global, process, runner, &catalog, &style, out)
        }
        Some(Command::Uninstall(args)) => uninstall::run(&args, process, &style, out),
        Some(Command::Repair(args)) => {
            repair::run(&args, process, runner, &catalog, &style, cancel, out)
        }
        Some(Command::Mirror(cmd)) => mirror::run_mirror(
            &cmd,
            &cli.global,
            process,
            runner,
            &catalog,
            &style,
            cancel,
            out,
        ),
        Some(Command::Wizard(args)) => wizard::run(
            &args,
            &cli.global,
            process,
            runner,
            &catalog,
            &style,
            cancel,
            out,
        ),
        Some(Command::Fleet(cmd)) => fleet::run(&cmd, &style, out),
        Some(Command::Guard(cmd)) => guard::run(&cmd, process, &style, out),
        Some(Command::Lock(args)) => {
            lock::run(&args, process, runner, &catalog, &style, cancel, out)
        }
        Some(Command::Monitor(args)) => monitor::run(&args, process, &style, cancel, out),
        Some(Command::Container(cmd)) => {
            container::run(&cmd, process, runner, &catalog, &style, out)
        }
        Some(Command::Bench(args)) => {
            bench::run(&args, &cli.global, process, runner, &catalog, &style, out)
        }
        Some(Command::Manifests(_)) => unreachable!("handled before the catalog loads"),
        // A person at a terminal who types just `cudaup` wants their machine set up;
        // a script that does gets the help, never a question it cannot answer.
        None if process.stdin_is_tty && process.stdout_is_tty => wizard::run(
            &wizard::WizardArgs::default(),
            &cli.global,
            process,
            runner,
            &catalog,
            &style,
            cancel,
            out,
        ),
        None => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            write!(out, "{}", cmd.render_help())?;
            Ok(ExitCode::Ok)
        }
    }
}
