//! Turns a chosen driver and stack into the Plan's components, reasons and warnings.

use crate::model::plan::{Action, Component, Plan, Status};
use crate::model::request::Profile;
use crate::model::system::{OsFamily, System};
use crate::model::version::Version;

use super::driver::{DriverOption, Host};
use super::python::PythonChoice;
use super::stack::Stack;
use super::Ctx;

/// The plan for a found stack.
pub(super) fn plan(
    ctx: &Ctx<'_>,
    option: &DriverOption,
    options: &[DriverOption],
    stack: Stack<'_>,
    mut warnings: Vec<String>,
    rejected: Vec<String>,
) -> Plan {
    let mut components = vec![driver_component(ctx, option, options, &stack)];
    if let (Some(v), Host::Linux) = (&option.version, ctx.host) {
        warnings.extend(super::branches::eol_warning(
            ctx.catalog,
            &ctx.targets,
            v,
            &ctx.today,
        ));
    }
    if matches!(option.action, Action::Install | Action::Upgrade) {
        warnings.push(
            "the driver changes: reboot afterwards (cudaup continues where it stopped)".into(),
        );
        if ctx.system.os.secure_boot == Some(true) {
            warnings.push("Secure Boot is on: the new kernel module must be signed; DKMS asks for a Machine Owner Key (MOK) password, and the next boot asks you to enrol it".into());
        }
        if ctx.system.nouveau_loaded {
            warnings.push(
                "nouveau is loaded: the driver step blacklists it and rebuilds the initramfs"
                    .into(),
            );
        }
    }
    if let Some(p) = &stack.python {
        components.push(python_component(p));
    }
    if let Some(cuda) = stack.cuda {
        let series = cuda.version.prefix(2);
        let existing = ctx
            .system
            .toolkits
            .iter()
            .find(|t| Version::parse(&t.version).is_some_and(|v| v.prefix(2) == series));
        let why = match stack.torch {
            Some((r, Some(v))) if v.cuda.prefix(2) == series => format!(
                "CUDA {series} matches torch {} {}, so custom CUDA extensions build against it",
                r.version, v.name
            ),
            Some((r, Some(v))) => format!(
                "CUDA {series}: the oldest {}.x whose compiler builds for every GPU (torch {} {} is built with CUDA {}, whose compiler does not); custom CUDA extensions build against it",
                cuda.version.major(),
                r.version,
                v.name,
                v.cuda.prefix(2)
            ),
            _ => format!(
                "the newest CUDA that builds for every GPU and that the driver runs ({})",
                cuda.name()
            ),
        };
        let mut c = match existing {
            Some(t) => {
                let mut c = Component::new(
                    "cuda",
                    Action::Keep,
                    Some(t.version.clone()),
                    format!("{why}; already installed"),
                );
                c.path = Some(t.path.clone());
                c
            }
            None => Component::new("cuda", Action::Install, Some(cuda.version.to_string()), why),
        };
        c.cuda_variant = None;
        components.push(c);
    }
    if let Some(cudnn) = stack.cudnn {
        let planned = cudnn.version.to_string();
        let have = ctx.system.cudnn.iter().any(|c| {
            !c.path.contains("site-packages")
                && Version::parse(&c.version).is_some_and(|v| v == cudnn.version)
        });
        let reason = format!(
            "the newest cuDNN in the catalog built for CUDA {} that supports every GPU and CUDA {series} (it supports CUDA {})",
            cudnn.cuda_variant,
            cudnn.cuda,
            series = stack.cuda.map(|c| c.version.prefix(2)).unwrap_or_default()
        );
        let mut c = Component::new(
            "cudnn",
            if have { Action::Keep } else { Action::Install },
            Some(planned),
            reason,
        );
        c.cuda_variant = Some(cudnn.cuda_variant.clone());
        components.push(c);
    } else if let Some(why) = &stack.cudnn_missing {
        components.push(Component::new("cudnn", Action::Skip, None, why.clone()));
        warnings.push(format!("no cuDNN: {why}"));
    }
    if let Some((release, _)) = stack.torch {
        warnings.extend(last_line_notes(ctx, &release.version));
    }
    if let Some((release, variant)) = stack.torch {
        components.extend(torch_components(
            ctx.system,
            release,
            variant,
            stack.python.as_ref(),
            ctx.system.os.family,
        ));
    }
    if let Some(tf) = stack.tensorflow {
        let installed =
            installed_framework(ctx.system, stack.python.as_ref(), |p| p.tensorflow.as_ref());
        let version = tf.version.to_string();
        let action = match installed {
            Some(v) if Version::parse(&v) == Some(tf.version.clone()) => Action::Keep,
            Some(_) => Action::Upgrade,
            None => Action::Install,
        };
        components.push(Component::new(
            "tensorflow",
            action,
            Some(version),
            format!(
                "the newest TensorFlow whose CUDA {} build the driver runs and whose cuDNN serves every GPU; `tensorflow[and-cuda]` brings CUDA and cuDNN as wheels: {}",
                tf.cuda,
                stack.wheel_cudnn.as_deref().unwrap_or("as its tested build")
            ),
        ));
    }
    if let Some((jax, plugin)) = stack.jax {
        let mut c = Component::new(
            "jax",
            Action::Install,
            Some(jax.version.to_string()),
            format!(
                "the newest JAX whose CUDA {major} plugin the driver runs and whose GPU floor (compute capability {floor}) every GPU meets; `jax[cuda{major}]` brings jaxlib, {plugin} {pv}, jax-cuda{major}-pjrt {pjrt} and CUDA {major} as wheels: {cudnn}",
                major = plugin.cuda,
                floor = ctx
                    .catalog
                    .jax
                    .cuda_major(plugin.cuda)
                    .map(|c| c.sm_min.to_string())
                    .unwrap_or_default(),
                plugin = plugin.name(),
                pv = plugin.version,
                pjrt = plugin.pjrt,
                cudnn = stack.wheel_cudnn.as_deref().unwrap_or("no cuDNN wheel named"),
            ),
        );
        c.variant = Some(format!("cuda{}", plugin.cuda));
        components.push(c);
    }

    let mut reasons = Vec::new();
    for (t, c) in ctx.targets.iter().zip(&stack.coverage) {
        match c {
            Ok(how) => reasons.push(format!("{} (compute capability {}): {how}", t.name, t.cc)),
            Err(why) => warnings.push(format!("{} is left out of this plan: {why}", t.name)),
        }
    }
    warnings.extend(stack.notes);
    Plan {
        status: Status::Ok,
        profile: ctx.req.profile,
        components,
        reasons,
        warnings,
        constraints: stack.constraints,
        catalog: Default::default(),
        jetson: None,
        rejected,
    }
}

fn driver_component(
    ctx: &Ctx<'_>,
    option: &DriverOption,
    options: &[DriverOption],
    stack: &Stack<'_>,
) -> Component {
    let floor = stack
        .floor
        .as_ref()
        .map(|f| format!("; the stack needs {f} or newer"))
        .unwrap_or_default();
    let installed = ctx.system.driver.as_ref().map(|d| d.version.clone());
    match option.action {
        Action::Keep => {
            let runs = ctx
                .system
                .driver
                .as_ref()
                .and_then(|d| d.cuda_version.clone())
                .map(|c| format!(" runs CUDA up to {c}"))
                .unwrap_or_default();
            let mut c = Component::new(
                "driver",
                Action::Keep,
                option.version.as_ref().map(|v| v.to_string()),
                if runs.is_empty() {
                    format!("the installed driver serves every GPU{floor}")
                } else {
                    format!("the installed driver{runs} and serves every GPU{floor}")
                },
            );
            c.branch = option.branch.filter(|_| ctx.host == Host::Linux);
            c.kernel_module = option.module;
            c
        }
        Action::Skip => Component::new(
            "driver",
            Action::Skip,
            None,
            format!("{}{floor}", option.reason),
        ),
        Action::Manual => Component::new(
            "driver",
            Action::Manual,
            manual_minimum(ctx, stack).map(|f| f.to_string()),
            format!(
                "{}{}",
                option.reason,
                match &installed {
                    Some(v) => format!("; the installed {v} is too old for this stack"),
                    None => String::new(),
                }
            ),
        ),
        _ => {
            let mut why = format!("{}; it serves every GPU{floor}", option.reason);
            if let (Some(v), Some(first)) = (&installed, options.first()) {
                if first.action == Action::Keep && !std::ptr::eq(first, option) {
                    why = format!("the installed {v} fits no stack (see -v); {why}");
                } else if first.action != Action::Keep {
                    why = format!("the installed {v} cannot drive every GPU; {why}");
                }
            }
            let mut c = Component::new(
                "driver",
                option.action,
                option.version.as_ref().map(|v| v.to_string()),
                why,
            );
            c.branch = option.branch;
            c.kernel_module = option.module;
            c.commands = option.commands.clone();
            c
        }
    }
}

/// The oldest Windows driver that runs the stack and drives every GPU: the stack's floor, raised
/// to the first branch of the newest architecture (Blackwell needs R570).
fn manual_minimum(ctx: &Ctx<'_>, stack: &Stack<'_>) -> Option<Version> {
    let branch_floor = ctx
        .targets
        .iter()
        .filter_map(|t| {
            ctx.catalog
                .drivers
                .architecture(t.architecture.as_deref()?)?
                .min_branch
        })
        .max()
        .and_then(|b| Version::parse(&b.to_string()));
    match (stack.floor.clone(), branch_floor) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

fn python_component(p: &PythonChoice) -> Component {
    match p {
        PythonChoice::Keep { path, version } => {
            let mut c = Component::new("python", Action::Keep, Some(version.clone()), "found on this machine, in the release's range");
            c.path = Some(path.clone());
            c
        }
        PythonChoice::Install { version } => Component::new(
            "python",
            Action::Install,
            Some(version.clone()),
            format!("no Python in range was found: install Python {version} (your distro's python{version} package, or `uv python install {version}`)"),
        ),
    }
}

/// The framework version installed in the chosen Python, if any.
fn installed_framework(
    system: &System,
    python: Option<&PythonChoice>,
    pick: impl Fn(&crate::model::system::Python) -> Option<&crate::model::system::Framework>,
) -> Option<String> {
    let Some(PythonChoice::Keep { path, .. }) = python else {
        return None;
    };
    let p = system.pythons.iter().find(|p| &p.path == path)?;
    pick(p).map(|f| f.version.clone())
}

/// For a torch release on the last line with kernels for a planned GPU's architecture: that it is
/// the last, and why, with the source's first address.
fn last_line_notes(ctx: &Ctx<'_>, torch: &Version) -> Vec<String> {
    ctx.catalog
        .pytorch
        .last_line
        .iter()
        .filter(|l| torch.prefix(2) == l.torch.prefix(2))
        .filter_map(|l| {
            let gpus: Vec<String> = ctx
                .targets
                .iter()
                .filter_map(|t| {
                    let arch = t.architecture.as_deref()?;
                    l.architectures
                        .iter()
                        .any(|a| a == arch)
                        .then(|| format!("{} ({arch})", t.name))
                })
                .collect();
            if gpus.is_empty() {
                return None;
            }
            let cite = l
                .source
                .split_whitespace()
                .find(|w| w.starts_with("https://"))
                .map(|w| w.trim_end_matches([';', ',', ')']))
                .unwrap_or_default();
            Some(format!(
                "torch {torch} is on the last release line with kernels for the {}: {} ({cite}); a newer torch will not run on it",
                gpus.join(", "),
                l.why
            ))
        })
        .collect()
}

/// The CUDA of the torch installed in the chosen Python, if any.
fn installed_cuda(system: &System, python: Option<&PythonChoice>) -> Option<String> {
    let Some(PythonChoice::Keep { path, .. }) = python else {
        return None;
    };
    let p = system.pythons.iter().find(|p| &p.path == path)?;
    p.torch.as_ref()?.cuda.clone()
}

fn torch_components(
    system: &System,
    release: &crate::catalog::TorchRelease,
    variant: Option<&crate::catalog::TorchVariant>,
    python: Option<&PythonChoice>,
    family: OsFamily,
) -> Vec<Component> {
    let (variant_name, index_url) = match (variant, family) {
        (Some(v), _) => (v.name.clone(), Some(v.index_url())),
        // PyPI's macOS wheels are the CPU+MPS build.
        (None, OsFamily::Macos) => ("cpu".to_owned(), Some("https://pypi.org/simple".to_owned())),
        (None, _) => (
            "cpu".to_owned(),
            Some("https://download.pytorch.org/whl/cpu".to_owned()),
        ),
    };
    let installed = installed_framework(system, python, |p| p.torch.as_ref());
    let wanted_local = variant
        .map(|v| v.name.clone())
        .unwrap_or_else(|| "cpu".into());
    // PyPI's build carries no tag: it is the planned one when it is the release's PyPI variant
    // and its CUDA is that variant's.
    let pypi_build = |v: &str| {
        !v.contains('+')
            && variant.is_some_and(|var| {
                release.pypi_default.as_ref() == Some(&var.name)
                    && installed_cuda(system, python)
                        .and_then(|c| Version::parse(&c))
                        .is_some_and(|c| c.prefix(2) == var.cuda.prefix(2))
            })
    };
    let action = match &installed {
        Some(v)
            if Version::parse(v) == Some(release.version.clone())
                && (v.ends_with(&format!("+{wanted_local}")) || pypi_build(v)) =>
        {
            Action::Keep
        }
        Some(_) => Action::Upgrade,
        None => Action::Install,
    };
    let reason = match variant {
        // PyPI's torch for Windows is the CPU build: PyTorch publishes its Windows CUDA builds
        // on its own index only ("Windows CPU only wheels are available on PyPI",
        // https://github.com/pytorch/pytorch.github.io/pull/757).
        Some(v) if family == OsFamily::Windows => format!(
            "the newest PyTorch whose {} wheel serves every planned GPU and whose CUDA {} the driver runs; PyPI's torch for Windows is the CPU build, so this one comes from PyTorch's index (or a mirror of it: --torch-index)",
            v.name, v.cuda
        ),
        Some(v) => format!(
            "the newest PyTorch whose {} wheel serves every planned GPU and whose CUDA {} the driver runs",
            v.name, v.cuda
        ),
        None => "the newest PyTorch with a Python in range; CPU build".to_owned(),
    };
    let mut torch = Component::new("torch", action, Some(release.version.to_string()), reason);
    torch.variant = Some(variant_name.clone());
    torch.index_url = index_url.clone();
    let mut out = vec![torch];
    // Where PyTorch's index is not known to carry `+<variant>` builds of the companions, the
    // untagged PyPI release is planned (stable-ABI py3 wheels that work with any CUDA build).
    let tagged = variant.is_none_or(|v| v.companions_tagged);
    for (name, version) in [
        ("torchvision", &release.torchvision),
        ("torchaudio", &release.torchaudio),
    ] {
        if let Some(v) = version {
            let reason = if tagged {
                format!("the release that matches torch {}", release.version)
            } else {
                format!(
                    "the release that matches torch {}: PyPI's build (a `+{variant_name}` build on PyTorch's index is not confirmed)",
                    release.version
                )
            };
            let mut c = Component::new(name, Action::Install, Some(v.clone()), reason);
            if tagged {
                c.variant = Some(variant_name.clone());
                c.index_url = index_url.clone();
            } else {
                c.index_url = Some("https://pypi.org/simple".to_owned());
            }
            out.push(c);
        }
    }
    out
}

/// `--profile cpu`: no driver, CPU torch.
pub(super) fn cpu(ctx: &Ctx<'_>, warnings: Vec<String>) -> Plan {
    let mut rejected = Vec::new();
    match super::stack::search_cpu(ctx, &mut rejected) {
        Some(stack) => {
            let mut components = vec![Component::new(
                "driver",
                Action::Skip,
                None,
                "the cpu profile needs no GPU driver",
            )];
            if let Some(p) = &stack.python {
                components.push(python_component(p));
            }
            if let Some((r, v)) = stack.torch {
                components.extend(torch_components(
                    ctx.system,
                    r,
                    v,
                    stack.python.as_ref(),
                    ctx.system.os.family,
                ));
            }
            let mut reasons = vec!["CPU-only PyTorch: no CUDA, runs anywhere".to_owned()];
            if ctx.system.os.family == OsFamily::Macos {
                reasons.push(
                    "on Apple silicon this wheel uses the GPU through the MPS backend".into(),
                );
            } else if !ctx.targets.is_empty() {
                reasons.push("an NVIDIA GPU is present: `--profile pytorch` would use it".into());
            }
            Plan {
                status: Status::Ok,
                profile: Profile::Cpu,
                components,
                reasons,
                warnings,
                constraints: Vec::new(),
                catalog: Default::default(),
                jetson: None,
                rejected,
            }
        }
        None => Plan {
            status: Status::Unsupported,
            profile: Profile::Cpu,
            components: Vec::new(),
            reasons: rejected.clone(),
            warnings,
            constraints: Vec::new(),
            catalog: Default::default(),
            jetson: None,
            rejected,
        },
    }
}
