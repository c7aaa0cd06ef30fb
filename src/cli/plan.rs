//! `cudaup plan`: the stack for this machine (or another one's System JSON), with reasons.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::catalog::Catalog;
use crate::error::{Error, ExitCode, Result};
use crate::model::plan::{Action, Plan, Status};
use crate::model::request::{DriverPolicy, Profile};
use crate::model::system::System;
use crate::model::version::VersionPin;
use crate::settings::resolve::check_pin;
use crate::settings::{InstallOptions, InstallSettings, SettingsError};
use crate::world::process::Process;
use crate::world::runner::Runner;

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
    /// PyPI or a mirror of it, as for install
    #[arg(long, value_name = "URL|DIR")]
    pub pypi_index: Option<String>,
    /// PyTorch's index or a copy of its layout, as for install
    #[arg(long, value_name = "URL|DIR")]
    pub torch_index: Option<String>,
    /// Which index may serve PyTorch (auto, pytorch, pypi), as for install
    #[arg(long, value_name = "SOURCE", value_parser = super::install::torch_source_parser())]
    pub torch_source: Option<crate::model::request::TorchSource>,
    /// Accept plain-http indexes (for --probe)
    #[arg(long)]
    pub allow_http: bool,
}

/// What to set up: the profile, pins and driver policy (shared by plan, install and mirror).
#[derive(Debug, Clone, Args)]
pub struct StackArgs {
    /// What to set up: full (driver + CUDA + cuDNN + PyTorch), pytorch, tensorflow, jax, cuda-dev,
    /// cpu [default: full]
    #[arg(long, value_enum)]
    pub profile: Option<Profile>,
    /// Pin the CUDA version (toolkit and wheel), e.g. 12.8 or 12.8.1
    #[arg(long, value_name = "VERSION")]
    pub cuda: Option<String>,
    /// Pin cuDNN, e.g. 9.10
    #[arg(long, value_name = "VERSION")]
    pub cudnn: Option<String>,
    /// Pin PyTorch, e.g. 2.8
    #[arg(long, value_name = "VERSION")]
    pub torch: Option<String>,
    /// Pin TensorFlow, e.g. 2.20
    #[arg(long, value_name = "VERSION")]
    pub tensorflow: Option<String>,
    /// Pin JAX, e.g. 0.12 (the jax, jaxlib and CUDA plugin release)
    #[arg(long, value_name = "VERSION")]
    pub jax: Option<String>,
    /// Pin Python, e.g. 3.12
    #[arg(long, value_name = "VERSION")]
    pub python: Option<String>,
    /// Driver policy: keep (never change it), latest (newest branch every GPU supports), or a
    /// version such as 580.95.05 [default: keep the installed driver when a good stack fits it,
    /// otherwise the newest branch every GPU supports]
    #[arg(long, value_name = "POLICY")]
    pub driver: Option<String>,
    /// The toolkit's components: minimal, standard or complete, or a comma-separated list of
    /// sets and components, `-name` leaving one out (`standard,-npp,cufile`) [default: standard]
    #[arg(long, value_name = "SET|LIST")]
    pub components: Option<String>,
    /// Go on with a framework whose exact cuDNN pin the catalog has no row for (its GPU support
    /// is then unverified, and the plan says so) instead of refusing it; a release known to fail
    /// on a GPU is still refused
    #[arg(long)]
    pub allow_unverified: bool,
}

impl StackArgs {
    /// The profile, pins, driver policy and components as one layer of settings, each value
    /// parsed once (a bad one names its flag).
    pub fn options(&self) -> Result<InstallOptions> {
        let pin = |flag: &str, v: &Option<String>| -> Result<Option<VersionPin>> {
            Ok(v.as_deref().map(|v| check_pin(flag, v)).transpose()?)
        };
        let driver = match &self.driver {
            Some(d) => Some(
                d.parse::<DriverPolicy>()
                    .map_err(|e| SettingsError::invalid("--driver", d, e))?,
            ),
            None => None,
        };
        Ok(InstallOptions {
            profile: self.profile,
            cuda: pin("--cuda", &self.cuda)?,
            cudnn: pin("--cudnn", &self.cudnn)?,
            torch: pin("--torch", &self.torch)?,
            tensorflow: pin("--tensorflow", &self.tensorflow)?,
            jax: pin("--jax", &self.jax)?,
            python: pin("--python", &self.python)?,
            driver,
            components: self.components.clone(),
            allow_unverified: self.allow_unverified.then_some(true),
            ..InstallOptions::default()
        })
    }
}

/// Reads a System document given with `--system`, completing its GPUs from the `gpus.toml` of
/// the catalog in effect (a refreshed or `--manifests` one knows GPUs the embedded one does not;
/// see [`load_system_with`]).
pub fn load_system(path: &std::path::Path, catalog: &Catalog) -> Result<System> {
    load_system_with(path, &catalog.gpus)
}

/// Reads a System document, completing each GPU from `table` the way `detect` does for a PCI
/// scan: a GPU given by its `pci_id` alone (`{"index": 0, "vendor": "nvidia", "pci_id":
/// "10de:2335"}`, or even without `index` and `vendor`) gets the name, compute capability and
/// architecture the table knows; what the file states wins. A GPU the table does not know and
/// the file gives no name for is refused, naming its PCI id.
pub fn load_system_with(
    path: &std::path::Path,
    table: &crate::catalog::GpuTable,
) -> Result<System> {
    let bad = |message: String| Error::SystemFile {
        path: path.to_owned(),
        message,
    };
    let text =
        fs_err::read_to_string(path).map_err(|e| bad(format!("cannot read it: {}", e.kind())))?;
    // serde_json's own words end with " at line L column C": said once, in front.
    let at = |e: &serde_json::Error| {
        let words = e.to_string();
        let tail = format!(" at line {} column {}", e.line(), e.column());
        format!(
            "line {}, column {}: {}",
            e.line(),
            e.column(),
            words.strip_suffix(&tail).unwrap_or(&words)
        )
    };
    let mut system: System = match serde_json::from_str(&text) {
        Ok(s) => s,
        Err(first) => {
            let Ok(mut value) = serde_json::from_str::<serde_json::Value>(&text) else {
                return Err(bad(at(&first)));
            };
            name_gpus_by_pci_id(&mut value, table).map_err(bad)?;
            // Still wrong after the table's help: the parser's own words, with its position.
            serde_json::from_value(value).map_err(|_| bad(at(&first)))?
        }
    };
    for gpu in system
        .gpus
        .iter_mut()
        .filter(|g| g.vendor == crate::model::system::Vendor::Nvidia)
    {
        crate::detect::gpu::complete_from_table(gpu, table);
    }
    Ok(system)
}

/// Fills the `index`, `vendor` and `name` a GPU entry with a `pci_id` may leave out.
fn name_gpus_by_pci_id(
    value: &mut serde_json::Value,
    table: &crate::catalog::GpuTable,
) -> std::result::Result<(), String> {
    let Some(gpus) = value.get_mut("gpus").and_then(|g| g.as_array_mut()) else {
        return Ok(());
    };
    for (i, gpu) in gpus.iter_mut().enumerate() {
        let Some(gpu) = gpu.as_object_mut() else {
            continue;
        };
        let Some(pci_id) = gpu
            .get("pci_id")
            .and_then(|p| p.as_str())
            .map(str::to_owned)
        else {
            continue;
        };
        let known = table.lookup(&pci_id);
        gpu.entry("index").or_insert_with(|| i.into());
        if !gpu.contains_key("vendor") {
            let vendor = match pci_id.to_ascii_lowercase().split(':').next() {
                Some("10de") => "nvidia",
                Some("1002") => "amd",
                Some("8086") => "intel",
                _ => return Err(format!("gpus[{i}]: PCI id {pci_id}: give its `vendor`")),
            };
            gpu.insert("vendor".into(), vendor.into());
        }
        if !gpu.contains_key("name") {
            let Some(k) = &known else {
                return Err(format!(
                    "gpus[{i}]: PCI id {pci_id} is not in the catalog's gpus.toml: give its `name` and `compute_capability`"
                ));
            };
            gpu.insert("name".into(), format!("NVIDIA {}", k.name).into());
        }
    }
    Ok(())
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
    let file = super::install::load_config(args.config.as_deref())?;
    let cwd = process.cwd();
    let location = |flag: &str, v: &Option<String>| {
        v.as_deref()
            .map(|v| crate::settings::resolve::check_location(flag, v, cwd))
            .transpose()
    };
    let flags = InstallOptions {
        pypi_index: location("--pypi-index", &args.pypi_index)?,
        torch_index: location("--torch-index", &args.torch_index)?,
        torch_source: args.torch_source,
        allow_http: args.allow_http.then_some(true),
        ..args.stack.options()?
    };
    let settings = InstallSettings::resolve(flags, process, file.as_ref())?;
    let request = &settings.request;
    let system = match &args.system {
        Some(path) => load_system(path, catalog)?,
        None => super::detect::detect_live(process, runner, catalog, false).system,
    };
    let plan = crate::resolve::resolve(&system, request, catalog);
    let route = match crate::install::python::route::want(&plan, &system, catalog) {
        Some(want) if plan.status == Status::Ok => {
            let index = crate::install::python::route::IndexSettings {
                pypi: settings.pypi_index.clone(),
                torch: settings.torch_index.clone(),
                source: settings.torch_source,
                bundle: None,
            };
            let candidates = crate::install::python::route::candidates(&want, &index);
            Some(if args.probe {
                let probe = super::install::probe_fetcher(
                    process,
                    settings.allow_http,
                    std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
                )?;
                match crate::install::python::probe::choose(&probe, &want, &candidates, &index) {
                    Ok(r) => crate::install::python::route::RouteView::Chosen(r),
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
            })
        }
        _ => None,
    };
    let toolkit = crate::install::summary::for_plan(
        &plan,
        catalog,
        settings.components.as_deref(),
        &system.os.arch,
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
                c.name, c.reason
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
            o.push_str(&format!("  {:<34} {}\n", c.requirement, c.reason));
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
