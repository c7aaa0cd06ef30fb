//! The resolver: from a System, a Request and the Catalog to a Plan, with a reason for every
//! choice and a named reason for every refusal.
//!
//! Invariants for every GPU in the plan: the toolkit builds for its compute capability and the
//! wheel carries SASS (same major, minor not above the GPU's) or PTX the driver can JIT; the driver
//! meets every floor and never leaves a GPU's supported branches; cuDNN has a build for the
//! toolkit's CUDA major that supports the GPU; in `full` the toolkit's major.minor equals the
//! wheel's CUDA; Python is in the release's range. Among stacks that hold, the newest framework
//! wins.

mod branches;
mod compose;
mod constraints;
pub mod driver;
mod jax;
mod jetson;
pub mod offer;
pub mod python;
mod stack;
mod toolkit_fit;

use crate::catalog::{Catalog, Date, STALE_AFTER_DAYS};
use crate::model::plan::{Action, CatalogInfo, Plan, Status};
use crate::model::request::{Profile, Request};
use crate::model::system::{OsFamily, System, Vendor};
use crate::model::version::Version;

use driver::Host;

/// An NVIDIA GPU the plan must serve.
#[derive(Debug, Clone)]
pub struct Target {
    /// Its name (`NVIDIA GeForce RTX 3090`).
    pub name: String,
    /// Compute capability.
    pub cc: Version,
    /// Architecture, for the driver's branch windows.
    pub architecture: Option<String>,
    /// `10de:2d05`, for NVIDIA's per-release supported-GPU tables; `None` when unknown.
    pub pci_id: Option<String>,
}

/// Everything a search step reads.
pub(crate) struct Ctx<'c> {
    pub system: &'c System,
    pub req: &'c Request,
    pub catalog: &'c Catalog,
    pub targets: Vec<Target>,
    pub host: Host,
    /// The day the plan is made: end-of-life dates and the catalog's age are judged against it.
    pub today: Date,
    /// The platform whose rows apply (`linux-sbsa` on an aarch64 Linux machine).
    pub platform: &'c str,
}

fn unsupported(
    profile: Profile,
    reasons: Vec<String>,
    warnings: Vec<String>,
    rejected: Vec<String>,
) -> Plan {
    Plan {
        status: Status::Unsupported,
        profile,
        components: Vec::new(),
        reasons,
        warnings,
        constraints: Vec::new(),
        catalog: CatalogInfo::default(),
        jetson: None,
        rejected,
    }
}

/// Plans a stack for `system`, today.
pub fn resolve(system: &System, req: &Request, catalog: &Catalog) -> Plan {
    resolve_on(system, req, catalog, Date::today())
}

/// Plans a stack for `system` as of `today` (end-of-life dates, the catalog's age).
pub fn resolve_on(system: &System, req: &Request, catalog: &Catalog, today: Date) -> Plan {
    let mut plan = plan(system, req, catalog, today);
    let age = catalog.age_days(&today);
    plan.catalog = CatalogInfo {
        origin: catalog.origin.clone(),
        date: catalog.meta.date.to_string(),
        age_days: age,
    };
    plan.warnings.extend(catalog.notes.iter().cloned());
    if age > STALE_AFTER_DAYS {
        plan.warnings.push(format!(
            "the compatibility catalog is from {} ({age} days old): newer CUDA, cuDNN, drivers and frameworks may exist; `cudaup manifests update` reads the publishers' sources",
            catalog.meta.date
        ));
    }
    plan
}

fn plan(system: &System, req: &Request, catalog: &Catalog, today: Date) -> Plan {
    let profile = req.profile;
    let mut warnings = Vec::new();
    let mut targets = Vec::new();
    for g in system.gpus.iter().filter(|g| g.vendor == Vendor::Nvidia) {
        match g.compute_capability.as_deref().and_then(Version::parse) {
            Some(cc) => targets.push(Target {
                name: g.name.clone(),
                pci_id: g.pci_id.clone(),
                cc: cc.clone(),
                architecture: g.architecture.clone().or_else(|| {
                    catalog
                        .gpus
                        .architecture_of(&cc.prefix(2))
                        .or_else(|| {
                            catalog
                                .drivers
                                .architecture_for_cc(&cc)
                                .map(|a| a.name.as_str())
                        })
                        .map(str::to_owned)
                }),
            }),
            None => warnings.push(format!(
                "{} ({}): compute capability unknown, so it is left out of the plan",
                g.name,
                g.pci_id.as_deref().unwrap_or("no PCI id")
            )),
        }
    }
    let Some(platform) = platform(system, catalog) else {
        return unsupported(
            profile,
            vec![format!(
                "the catalog has no rows for {} Linux machines (it knows {}): no CUDA, cuDNN or framework build can be vouched for here",
                system.os.arch,
                catalog
                    .cuda
                    .platform
                    .iter()
                    .map(|p| p.arch.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )],
            warnings,
            Vec::new(),
        );
    };
    let ctx = Ctx {
        system,
        req,
        catalog,
        targets,
        host: driver::host_of(system),
        today,
        platform,
    };

    if profile == Profile::Cpu {
        return compose::cpu(&ctx, warnings);
    }
    // A Jetson's driver, CUDA, cuDNN and TensorRT come with JetPack: say which, and what PyTorch
    // fits, instead of planning desktop packages.
    if let Some(j) = &system.os.jetson {
        return jetson::plan(&ctx, j, warnings);
    }
    // A picture without the L4T files is still a Jetson when its GPU is one: never a desktop
    // driver from apt on a board whose driver is part of its BSP.
    if let Some((j, why)) = crate::detect::jetson::from_gpu(system, &catalog.jetson) {
        let mut warnings = warnings;
        warnings.push(why);
        return jetson::plan(&ctx, &j, warnings);
    }
    if system.os.family == OsFamily::Macos {
        // The cpu profile takes no cuDNN pin: its way out only without one.
        let cpu = if req.pins.cudnn.is_none() {
            ": `cudaup plan --profile cpu` plans the PyPI torch, which includes MPS"
        } else {
            " (the cpu profile's PyPI torch, which includes it, takes no --cudnn)"
        };
        return unsupported(
            profile,
            vec![format!("macOS has no CUDA: NVIDIA GPUs and CUDA are not available there; on Apple silicon PyTorch uses the GPU through its MPS backend{cpu}")],
            warnings,
            Vec::new(),
        );
    }
    if ctx.targets.is_empty()
        && profile == Profile::CudaDev
        && system.nvidia_gpus().next().is_none()
    {
        // A build machine, a container or CI: the toolkit compiles without a GPU.
        warnings.push("no NVIDIA GPU here: the toolkit compiles CUDA code, but nothing can run on this machine".into());
        let option = driver::DriverOption {
            version: None,
            action: Action::Skip,
            branch: None,
            module: None,
            commands: Vec::new(),
            reason: "no NVIDIA GPU, so no driver".into(),
        };
        let mut tried = Vec::new();
        return match stack::search_toolkit(&ctx, None, &mut tried) {
            Some(stack) => compose::plan(&ctx, &option, &[], stack, warnings, tried),
            None => {
                let mut reasons = vec![format!(
                    "no CUDA toolkit in the catalog matches the request{}:",
                    if req.pins.cudnn.is_some() {
                        " (with the pinned cuDNN)"
                    } else {
                        ""
                    }
                )];
                reasons.extend(summarise(&tried));
                reasons.extend(unmatched_pins(req, catalog));
                unsupported(profile, reasons, warnings, tried)
            }
        };
    }
    if ctx.targets.is_empty() {
        let vendors: Vec<Vendor> = system.gpus.iter().map(|g| g.vendor).collect();
        let mut reasons = Vec::new();
        if vendors.contains(&Vendor::Amd) {
            reasons.push("an AMD GPU has no CUDA: use PyTorch's ROCm builds (https://pytorch.org/get-started/locally/)".to_owned());
        }
        if vendors.contains(&Vendor::Intel) {
            reasons.push("an Intel GPU has no CUDA: use PyTorch's XPU builds (https://pytorch.org/get-started/locally/)".to_owned());
        }
        let nvidia = system.nvidia_gpus().next().is_some();
        if nvidia {
            reasons.push("no NVIDIA GPU with a known compute capability".to_owned());
        } else {
            reasons.push("no NVIDIA GPU found".to_owned());
        }
        // Only a way out that plans here: the cpu profile takes no cuDNN pin; a machine without
        // an NVIDIA GPU still builds with one (cuda-dev).
        match (req.pins.cudnn.is_some(), nvidia) {
            (false, _) => reasons.push("`--profile cpu` plans CPU-only PyTorch".to_owned()),
            (true, false) => reasons.push(
                "`--profile cuda-dev` installs the CUDA toolkit and the pinned cuDNN here, to build code for a GPU machine"
                    .to_owned(),
            ),
            (true, true) => {}
        }
        return unsupported(profile, reasons, warnings, Vec::new());
    }

    let options = match driver::options(
        system,
        catalog,
        &ctx.targets,
        ctx.host,
        &req.driver,
        &ctx.today,
    ) {
        Ok(o) => {
            warnings.extend(o.notes);
            o.list
        }
        Err(e) => return unsupported(profile, vec![e], warnings, Vec::new()),
    };
    let search = |option: &driver::DriverOption, tried: &mut Vec<String>| match profile {
        Profile::Full | Profile::Pytorch => {
            stack::search_torch(&ctx, option.version.as_ref(), tried)
        }
        Profile::Tensorflow => stack::search_tensorflow(&ctx, option.version.as_ref(), tried),
        Profile::Jax => jax::search(&ctx, option.version.as_ref(), tried),
        Profile::CudaDev => stack::search_toolkit(&ctx, option.version.as_ref(), tried),
        Profile::Cpu => unreachable!("planned above"),
    };
    let mut rejected = Vec::new();
    for (i, option) in options.iter().enumerate() {
        let mut tried = Vec::new();
        let found = search(option, &mut tried);
        let label = match &option.version {
            Some(v) => format!("driver {v}"),
            None => "a new Windows driver".to_owned(),
        };
        rejected.extend(tried.into_iter().map(|t| format!("with {label}: {t}")));
        if let Some(stack) = found {
            // Keeping the driver may hold the stack back: say what the next driver would bring.
            let next = options[i + 1..].iter().find(|o| o.action != Action::Keep);
            if let (Action::Keep, Some(next)) = (option.action, next) {
                if let Some(gain) =
                    search(next, &mut Vec::new()).and_then(|b| stack::newer_than(&b, &stack))
                {
                    let with = match &next.version {
                        Some(v) => format!("driver {v}"),
                        None => "a newer Windows driver".to_owned(),
                    };
                    warnings.push(format!(
                        "keeping the installed driver holds this plan back: {with} would allow {gain}; `--driver latest` plans it"
                    ));
                }
            }
            return compose::plan(&ctx, option, &options, stack, warnings, rejected);
        }
    }
    let mut reasons = vec![format!("no {profile} stack fits; what stood in the way:")];
    reasons.extend(summarise(&rejected));
    reasons.extend(unmatched_pins(req, catalog));
    unsupported(profile, reasons, warnings, rejected)
}

/// The pins no release in the catalog matches (`--cuda 99.9`), each said in full: such a pin
/// leaves no candidate to reject, so without this the reasons would end at "what stood in the
/// way:".
fn unmatched_pins(req: &Request, catalog: &Catalog) -> Vec<String> {
    let check = |what: &str,
                 flag: &str,
                 pin: Option<&crate::model::version::VersionPin>,
                 known: Vec<&Version>| {
        let pin = pin?;
        if known
            .iter()
            .any(|v| crate::model::request::pin_matches(Some(pin), v))
        {
            return None;
        }
        let range = match (known.iter().min(), known.iter().max()) {
            (Some(lo), Some(hi)) => format!(" (it has {lo} to {hi})"),
            _ => String::new(),
        };
        Some(format!(
            "{flag} {pin}: no {what} release in the catalog matches it{range}; `cudaup manifests update` reads newer releases from the publishers"
        ))
    };
    let pins = &req.pins;
    [
        check(
            "CUDA",
            "--cuda",
            pins.cuda.as_ref(),
            catalog.cuda.release.iter().map(|r| &r.version).collect(),
        ),
        check(
            "cuDNN",
            "--cudnn",
            pins.cudnn.as_ref(),
            catalog.cudnn.release.iter().map(|r| &r.version).collect(),
        ),
        check(
            "PyTorch",
            "--torch",
            pins.torch.as_ref(),
            catalog.pytorch.release.iter().map(|r| &r.version).collect(),
        ),
        check(
            "TensorFlow",
            "--tensorflow",
            pins.tensorflow.as_ref(),
            catalog
                .tensorflow
                .release
                .iter()
                .map(|r| &r.version)
                .collect(),
        ),
        check(
            "JAX",
            "--jax",
            pins.jax.as_ref(),
            catalog.jax.release.iter().map(|r| &r.version).collect(),
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The platform whose rows apply to this machine: on Linux the catalog's row of its
/// architecture (`aarch64` → `linux-sbsa`), `None` for one the catalog does not know; Windows
/// and WSL2 machines read the x86_64 rows.
pub fn platform<'c>(system: &System, catalog: &'c Catalog) -> Option<&'c str> {
    if system.os.family != OsFamily::Linux || system.os.wsl {
        return catalog
            .cuda
            .platform(crate::catalog::DEFAULT_PLATFORM)
            .map(|p| p.name.as_str())
            .or(Some(crate::catalog::DEFAULT_PLATFORM));
    }
    let arch = match system.os.arch.as_str() {
        "arm64" => "aarch64",
        a => a,
    };
    match catalog.cuda.platform_for_arch(arch) {
        Some(p) => Some(p.name.as_str()),
        // A catalog without platform rows predates them: it speaks for x86_64 only.
        None if catalog.cuda.platform.is_empty() && arch == "x86_64" => {
            Some(crate::catalog::DEFAULT_PLATFORM)
        }
        None => None,
    }
}

/// Groups rejections (`with driver D: candidate: why`) by their reason, so an unsupported plan
/// says in a few lines what stood in the way and for how many candidates.
fn summarise(rejected: &[String]) -> Vec<String> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for r in rejected {
        let rest = r
            .strip_prefix("with ")
            .and_then(|r| r.split_once(": ").map(|(_, rest)| rest))
            .unwrap_or(r);
        let (candidate, why) = rest.split_once(": ").unwrap_or(("", rest));
        match groups.iter_mut().find(|(w, _)| w == why) {
            Some((_, c)) => {
                if !c.iter().any(|x| x == candidate) {
                    c.push(candidate.to_owned());
                }
            }
            None => groups.push((why.to_owned(), vec![candidate.to_owned()])),
        }
    }
    groups
        .into_iter()
        .take(10)
        .map(|(why, candidates)| match candidates.len() {
            0 | 1 if candidates.first().is_none_or(|c| c.is_empty()) => why,
            1 => format!("{}: {why}", candidates[0]),
            n => format!("{} and {} more: {why}", candidates[0], n - 1),
        })
        .collect()
}
