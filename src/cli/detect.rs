//! `cudaup detect`: runs detection and renders the report (human or JSON).

use crate::cli::i18n::report::{pad, Report};
use std::io::Write;

use crate::catalog::Catalog;
use crate::detect::{self, Detection, Options, Root};
use crate::error::{ExitCode, Result};
use crate::model::finding::Severity;
use crate::model::system::{Gpu, KernelModule, Owner, Vendor};
use crate::model::version::Version;
use crate::world::process::Process;
use crate::world::runner::Runner;

use super::{DetectArgs, GlobalArgs, Style};

pub(super) fn run(
    args: &DetectArgs,
    global: &GlobalArgs,
    process: &Process,
    runner: &dyn Runner,
    catalog: &Catalog,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let root = args.root.root()?;
    let detection = detect::detect(process, runner, catalog, &options(process, root, args.deep));
    for f in &detection.findings {
        tracing::debug!(id = f.id, "{}", f.message);
    }
    if args.json {
        let text = serde_json::to_string_pretty(&detection.system).expect("System serialises");
        writeln!(out, "{text}")?;
    } else if !global.quiet {
        write!(out, "{}", render(&detection, catalog, style))?;
    }
    Ok(ExitCode::Ok)
}

/// What detect reads: `root`, the NVML library, and the home's toolkits and venvs (as paths).
pub(super) fn options(process: &Process, root: Root, deep: bool) -> Options {
    let home = crate::install::home::Home::of(process).ok();
    Options {
        root,
        deep,
        nvml_library: nvml_library(process),
        cudaup_toolkits: home.as_ref().map(|h| h.toolkits()),
        cudaup_venvs: home.as_ref().map(|h| h.venvs()),
        pythons: true,
    }
}

/// The NVML library to load, or `None` when `CUDAUP_NO_NVML=1`.
fn nvml_library(process: &Process) -> Option<String> {
    if process.var(crate::world::vars::CUDAUP_NO_NVML) == Some("1") {
        return None;
    }
    Some(
        process
            .var(crate::world::vars::CUDAUP_NVML_LIBRARY)
            .unwrap_or(detect::gpu::nvml::default_library())
            .to_owned(),
    )
}

/// Detects the live machine (what `plan` and later commands start from).
pub(super) fn detect_live(
    process: &Process,
    runner: &dyn Runner,
    catalog: &Catalog,
    deep: bool,
) -> Detection {
    detect::detect(
        process,
        runner,
        catalog,
        &options(process, Root::live(), deep),
    )
}

/// [`detect_live`] without the Pythons: for an install whose profile has no framework
/// (`cuda-dev`), whose plan never reads them (`install::plan`'s tests hold it so); each
/// interpreter is a process start, 20 ms of a re-install's 70 ms on the 2-core machine.
pub(super) fn detect_live_without_pythons(
    process: &Process,
    runner: &dyn Runner,
    catalog: &Catalog,
) -> Detection {
    let opts = detect::Options {
        pythons: false,
        ..options(process, Root::live(), false)
    };
    detect::detect(process, runner, catalog, &opts)
}

/// The human report: short, aligned, in plain words.
pub fn render(d: &Detection, catalog: &Catalog, style: &Style) -> String {
    let s = &d.system;
    let w = style.words();
    let mut o = String::new();
    let row = |o: &mut String, label: &str, value: &str| {
        o.push_str(&format!("  {}{value}\n", pad(label, 14)));
    };

    o.push_str(&style.heading(w.machine));
    o.push('\n');
    let os_name = d
        .os_pretty_name
        .clone()
        .or_else(|| s.os.distro.clone())
        .unwrap_or_else(|| format!("{:?}", s.os.family).to_lowercase());
    let mut os_line = format!("{os_name} ({})", s.os.arch);
    if s.os.wsl {
        os_line.push_str(", inside WSL2");
    }
    if let Some(c) = &d.container {
        os_line.push_str(&format!(", in a {c} container"));
    }
    row(&mut o, w.os, &os_line);
    if let Some(k) = &s.os.kernel {
        row(&mut o, w.kernel, k);
    }
    row(
        &mut o,
        w.secure_boot,
        match s.os.secure_boot {
            Some(true) => w.secure_boot_state[0],
            Some(false) => w.secure_boot_state[1],
            None => w.secure_boot_state[2],
        },
    );
    if !d.driver_files.is_empty() {
        let files: Vec<String> = d
            .driver_files
            .iter()
            .map(|f| f.display().to_string())
            .collect();
        row(&mut o, w.driver_files, &files.join(", "));
    }
    match &d.wsl_exe {
        Some(Some(exe)) => row(&mut o, w.wsl, &(w.wsl_found)(&exe.display().to_string())),
        Some(None) => row(&mut o, w.wsl, w.wsl_missing),
        None => {}
    }

    o.push('\n');
    o.push_str(&style.heading(&(w.gpus)(d.gpu_source)));
    o.push('\n');
    if s.gpus.is_empty() {
        o.push_str(&format!("  {}\n", w.none_found));
    }
    let driver_cuda = s
        .driver
        .as_ref()
        .and_then(|d| d.cuda_version.as_deref())
        .and_then(Version::parse);
    for g in &s.gpus {
        o.push_str(&format!("  [{}] {}\n", g.index, style.heading(&g.name)));
        o.push_str(&format!("      {}\n", gpu_facts(g)));
        if let Some(can) = what_it_can_run(g, catalog) {
            o.push_str(&format!("      {}\n", style.dim(&can)));
        }
    }

    o.push('\n');
    o.push_str(&style.heading(w.installed));
    o.push('\n');
    match &s.driver {
        Some(drv) => {
            let mut line = format!("NVIDIA {}", drv.version);
            match drv.kernel_module {
                Some(KernelModule::Open) => line.push_str(", open kernel module"),
                Some(KernelModule::Proprietary) => line.push_str(", proprietary kernel module"),
                None => {}
            }
            if let Some(c) = &driver_cuda {
                line.push_str(&format!(" (runs CUDA up to {c})"));
            }
            row(&mut o, w.driver, &line);
        }
        None => row(&mut o, w.driver, &style.warn(w.no_driver)),
    }
    if s.nouveau_loaded {
        row(&mut o, "", &style.warn("nouveau is loaded"));
    }
    list_rows(
        &mut o,
        w,
        w.cuda_toolkit,
        s.toolkits.iter().map(|t| {
            let owner = if t.owner == Owner::Cudaup {
                " (cudaup)"
            } else {
                ""
            };
            format!("{:<12}{}{owner}", t.version, t.path)
        }),
    );
    list_rows(
        &mut o,
        w,
        "cuDNN",
        s.cudnn
            .iter()
            .map(|c| format!("{:<12}{}", c.version, c.path)),
    );
    list_rows(
        &mut o,
        w,
        "Python",
        s.pythons.iter().map(|p| {
            let mut line = format!("{:<12}{}", p.version, p.path);
            for (name, fw) in [("torch", &p.torch), ("tensorflow", &p.tensorflow)] {
                if let Some(fw) = fw {
                    let cuda = match (&fw.cuda, fw.cuda_available) {
                        (Some(c), Some(true)) => format!("CUDA {c}, GPU works"),
                        (Some(c), Some(false)) => format!("CUDA {c}, GPU NOT usable"),
                        (Some(c), None) => format!("CUDA {c}"),
                        (None, _) => "CPU only".to_owned(),
                    };
                    line.push_str(&format!(
                        "\n{:16}{:<12}{name} {} ({cuda})",
                        "", "", fw.version
                    ));
                }
            }
            line
        }),
    );

    o.push('\n');
    o.push_str(&style.heading(w.findings));
    o.push('\n');
    if d.findings.is_empty() {
        o.push_str(&format!("  {}\n", style.good(w.nothing_wrong)));
    }
    for f in &d.findings {
        let tag = match f.severity {
            Severity::Error => style.bad(w.error),
            Severity::Warning => style.warn(w.warning),
            Severity::Info => style.dim(w.note),
        };
        o.push_str(&format!("  {tag}: {}\n", f.message));
        if let Some(fix) = &f.fix {
            o.push_str(&format!("    {} {fix}\n", w.fix));
        }
    }
    o
}

fn list_rows(o: &mut String, w: &Report, label: &str, rows: impl Iterator<Item = String>) {
    let rows: Vec<String> = rows.collect();
    if rows.is_empty() {
        o.push_str(&format!("  {}{}\n", pad(label, 14), w.none_found));
    }
    for (i, r) in rows.iter().enumerate() {
        let l = if i == 0 { label } else { "" };
        o.push_str(&format!("  {}{r}\n", pad(l, 14)));
    }
}

fn gpu_facts(g: &Gpu) -> String {
    let mut parts = Vec::new();
    if let Some(a) = &g.architecture {
        parts.push(a.clone());
    }
    match (&g.compute_capability, g.vendor) {
        (Some(cc), _) => parts.push(format!("compute capability {cc}")),
        (None, Vendor::Nvidia) => parts.push("compute capability unknown".into()),
        (None, Vendor::Amd) => parts.push("no CUDA (use ROCm builds)".into()),
        (None, Vendor::Intel) => parts.push("no CUDA (use oneAPI / XPU builds)".into()),
        (None, Vendor::Apple) => parts.push("no CUDA (use PyTorch's MPS backend)".into()),
    }
    if let Some(m) = g.memory_mib {
        parts.push(format!("{:.0} GiB", m as f64 / 1024.0));
    }
    if let Some(id) = &g.pci_id {
        parts.push(format!("PCI {id}"));
    }
    parts.join(", ")
}

/// "CUDA 11.8 and newer toolkits build for it", from the catalog's series table.
fn what_it_can_run(g: &Gpu, catalog: &Catalog) -> Option<String> {
    let cc = Version::parse(g.compute_capability.as_deref()?)?;
    let series = catalog.cuda.series_building_for(&cc);
    let newest_known = catalog.cuda.series.iter().map(|s| &s.version).max()?;
    let sm = format!("sm_{}{}", cc.major(), cc.minor());
    Some(match (series.first(), series.last()) {
        (Some(first), Some(last)) if &last.version == newest_known => {
            format!(
                "CUDA {} and newer toolkits build for it ({sm})",
                first.version
            )
        }
        (Some(first), Some(last)) => format!(
            "CUDA {} to {} toolkits build for it ({sm}); newer ones dropped it",
            first.version, last.version
        ),
        _ => format!("no CUDA toolkit from 11.0 on builds for compute capability {cc}"),
    })
}
