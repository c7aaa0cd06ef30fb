//! `cudaup container`: GPUs in Docker and Podman containers, through CDI by default.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::container::{self, ContainerError, Survey};
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
    pub stack: super::plan::StackArgs,
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

/// Where the host's files are read from.
#[derive(Debug, Clone, Args)]
pub struct RootArgs {
    /// Read the host's files (cgroups, SELinux, WSL, the driver) under DIR instead of /
    #[arg(long, value_name = "DIR")]
    pub system_root: Option<PathBuf>,
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
    catalog: &crate::catalog::Catalog,
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

/// Lines for what [`crate::install::host_files::undo`] did (also `cudaup uninstall`'s).
pub(super) fn render_undone(
    undone: &[crate::install::host_files::Undone],
    style: &Style,
    out: &mut dyn Write,
) -> Result<()> {
    if undone.is_empty() {
        writeln!(out, "container setup changed no file: nothing to put back")?;
    }
    for u in undone {
        match &u.why {
            Some(why) => writeln!(out, "  {} {} ({why})", style.warn("kept"), u.path.display())?,
            None => writeln!(out, "  {} {}", u.action, u.path.display())?,
        }
    }
    Ok(())
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
    let driver_root = RootArgs {
        system_root: args.driver_root.clone(),
    }
    .root()?;
    if let Some(p) = &args.root_prefix {
        if !p.is_dir() {
            return Err(Error::Usage(format!(
                "--root-prefix {}: not a directory",
                p.display()
            )));
        }
    }
    let facts = container::toolkit::facts();
    let host_root = args.root.root()?;
    let opts = container::setup::Options {
        prefix: args.root_prefix.as_deref(),
        driver_root: &driver_root,
        config_home: process
            .path_var("XDG_CONFIG_HOME")
            .or_else(|| process.home().map(|h| h.join(".config")))
            .ok_or_else(|| {
                Error::Usage("cannot tell the config directory: set HOME or XDG_CONFIG_HOME".into())
            })?,
        install_toolkit: args.toolkit,
        only: args.engine,
        toolkit: container::toolkit::probe(runner, &facts, &process.path_entries()),
        family: container::toolkit::family(&host_root),
    };
    let plan = container::setup::plan(&survey, &opts).map_err(ContainerError::from)?;
    let root_needed: Vec<&container::setup::Edit> =
        plan.edits.iter().filter(|e| e.needs_root).collect();
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
                .map(|e| e.path.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            toolkit: if args.toolkit { " --toolkit" } else { "" },
        }
        .into());
    }
    let mut lines = Vec::new();
    let applied = container::setup::apply(&plan, &home, args.yes, runner, &mut |l| {
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
    if !args.yes && !plan.commands.is_empty() {
        writeln!(out, "Run these (or run setup again with --yes):")?;
        for c in &plan.commands {
            writeln!(out, "  {}", crate::install::driver::shell_line(c))?;
        }
    }
    writeln!(out, "`cudaup container uninstall` puts every file back.")?;
    Ok(ExitCode::Ok)
}

fn render_setup(
    survey: &Survey,
    plan: &container::setup::Plan,
    style: &Style,
    out: &mut dyn Write,
) -> Result<()> {
    render_plan(survey, style, out)?;
    writeln!(out)?;
    writeln!(out, "{}", style.heading("Setup"))?;
    for n in &plan.notices {
        writeln!(out, "  {} {n}", style.warn("note"))?;
    }
    if plan.edits.is_empty() && plan.commands.is_empty() {
        writeln!(out, "  nothing to change: every engine is set up")?;
    }
    for e in &plan.edits {
        let verb = if e.bytes.is_some() { "write" } else { "remove" };
        let root = if e.needs_root { " (needs root)" } else { "" };
        writeln!(out, "  {verb} {} — {}{root}", e.path.display(), e.what)?;
    }
    for c in &plan.commands {
        writeln!(out, "  $ {}", crate::install::driver::shell_line(c))?;
    }
    for l in &plan.run_lines {
        writeln!(out, "  then: {l}")?;
    }
    Ok(())
}

fn home(process: &Process) -> Result<PathBuf> {
    Ok(crate::install::home::Home::of(process)?.root().to_owned())
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
        findings.extend(image_finding(image, &root, process, runner, catalog)?);
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

fn image_fit(
    image: &str,
    root: &Root,
    process: &Process,
    runner: &dyn Runner,
    catalog: &crate::catalog::Catalog,
) -> Result<container::image::Fit> {
    let engine = ["podman", "docker"]
        .iter()
        .find_map(|n| container::toolkit::on_path(&process.path_entries(), n))
        .ok_or_else(|| {
            ContainerError::NoEngine(
                "--check reads the image through docker or podman, and neither is on PATH".into(),
            )
        })?;
    let requirement =
        container::image::inspect(runner, &engine, image).map_err(ContainerError::Image)?;
    let driver = container::Host::probe(root)
        .driver_version
        .ok_or_else(|| ContainerError::NoDriver("no NVIDIA driver is loaded here (/proc/driver/nvidia/version): nothing to compare the image with".into()))?;
    // Forward compatibility is for Data Center GPUs (and Jetson): an H100/H200/A100-class name.
    let datacenter = root
        .list("/proc/driver/nvidia/gpus")
        .iter()
        .filter_map(|d| root.read(d.join("information")))
        .any(|t| {
            [
                "H100", "H200", "H20", "A100", "A30", "A40", "L40", "L4", "B200", "GB200", "V100",
                "T4",
            ]
            .iter()
            .any(|m| t.contains(m))
        });
    Ok(container::image::fit(
        requirement,
        &driver,
        catalog,
        datacenter,
    ))
}

fn image_finding(
    image: &str,
    root: &Root,
    process: &Process,
    runner: &dyn Runner,
    catalog: &crate::catalog::Catalog,
) -> Result<Vec<crate::doctor::Diagnosis>> {
    let fit = image_fit(image, root, process, runner, catalog)?;
    if fit.runs {
        return Ok(Vec::new());
    }
    let need = fit
        .requirement
        .as_ref()
        .and_then(|r| r.cuda.clone())
        .unwrap_or_default();
    let mut d = crate::doctor::Diagnosis::new(
        "image-needs-newer-driver",
        crate::model::finding::Severity::Error,
        format!(
            "{image} needs cuda>={need}; driver {} runs CUDA {}{}",
            fit.driver,
            fit.driver_cuda.as_deref().unwrap_or("?"),
            fit.needs_driver
                .as_deref()
                .map(|n| format!(" (cuda>={need} needs driver ≥ {n})"))
                .unwrap_or_default()
        ),
    )
    .evidence(format!(
        "NVIDIA_REQUIRE_CUDA={}",
        fit.requirement
            .as_ref()
            .map(|r| r.raw.as_str())
            .unwrap_or("")
    ));
    d = d.fix(fit.ways_out.join("\n"));
    Ok(vec![d])
}

fn dockerfile(
    args: &DockerfileArgs,
    process: &Process,
    runner: &dyn Runner,
    catalog: &crate::catalog::Catalog,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    if let Some(image) = &args.check {
        let fit = image_fit(image, &Root::live(), process, runner, catalog)?;
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
            for d in image_finding(image, &Root::live(), process, runner, catalog)? {
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
        Some(path) => super::plan::load_system(path, catalog)?,
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
    let checks =
        checks_in_container_at(&args.root, process, runner, args.engine, args.nvcc.clone())?;
    let mut report = crate::verify::Report {
        schema_version: crate::verify::SCHEMA_VERSION,
        ok: true,
        passed: 0,
        failed: 0,
        skipped: 0,
        toolkit: None,
        venvs: Vec::new(),
        checks: Vec::new(),
    };
    append(&mut report, checks);
    Ok((report, None))
}

/// Adds `checks` to `report`, counting them (`cudaup verify --container`).
pub(super) fn append(report: &mut crate::verify::Report, checks: Vec<crate::verify::Check>) {
    use crate::verify::Status;
    report.checks.extend(checks);
    let count = |s: Status| report.checks.iter().filter(|c| c.status == s).count();
    report.passed = count(Status::Pass);
    report.failed = count(Status::Fail);
    report.skipped = count(Status::Skip);
    report.ok = report.failed == 0;
}

/// The in-container checks on this machine (`cudaup verify --container`).
pub(super) fn checks_in_container(
    process: &Process,
    runner: &dyn Runner,
    engine: Option<container::engine::Kind>,
    nvcc: Option<PathBuf>,
) -> Result<Vec<crate::verify::Check>> {
    checks_in_container_at(
        &RootArgs { system_root: None },
        process,
        runner,
        engine,
        nvcc,
    )
}

fn checks_in_container_at(
    root: &RootArgs,
    process: &Process,
    runner: &dyn Runner,
    only: Option<container::engine::Kind>,
    nvcc: Option<PathBuf>,
) -> Result<Vec<crate::verify::Check>> {
    let survey = survey(root, process, runner)?;
    let pick =
        survey.engines.iter().zip(&survey.choices).find(|(e, c)| {
            c.path != container::choice::Path::None && only.is_none_or(|o| e.kind == o)
        });
    let Some((engine, choice)) = pick else {
        return Ok(vec![crate::verify::Check::skip(
            "container-kernel",
            vec!["no container engine set up for the GPUs here: `cudaup container setup` first (`cudaup container plan` shows the engines)".into()],
        )]);
    };
    let work = tempfile::tempdir()?;
    let path = process.path_entries();
    let nvcc = nvcc
        .filter(|p| p.is_file())
        .or_else(|| {
            process
                .cudaup_home()
                .and_then(|h| crate::install::receipts::Active::read(&h).toolkit)
                .map(|t| crate::model::layout::Prefix::at(&t).nvcc())
                .filter(|p| p.is_file())
        })
        .or_else(|| container::toolkit::on_path(&path, "nvcc"))
        .or_else(|| Some(PathBuf::from("/usr/local/cuda/bin/nvcc")).filter(|p| p.is_file()));
    let opts = container::smoke::Options {
        engine,
        choice,
        nvcc,
        work: work.path(),
        host_nvidia_smi: container::toolkit::on_path(&path, "nvidia-smi"),
        ldd: container::toolkit::on_path(&path, "ldd")
            .unwrap_or_else(|| PathBuf::from("/usr/bin/ldd")),
    };
    Ok(container::smoke::run(&opts, runner))
}
