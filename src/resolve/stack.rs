//! The search for a stack under one driver: the newest framework release whose wheel serves the
//! GPUs, whose CUDA the driver runs, with a Python in range, and (in `full`) a toolkit of the
//! same CUDA and a cuDNN for it.

use crate::catalog::{
    CudaRelease, CudnnRelease, JaxPlugin, JaxRelease, Kernels, TfRelease, TorchRelease,
    TorchVariant,
};
use crate::model::plan::Constraint;
use crate::model::request::{pin_matches, Profile};
use crate::model::version::Version;

use super::python::{self, PythonChoice};
use super::Ctx;

/// A stack that fits one driver.
#[derive(Debug, Clone)]
pub struct Stack<'c> {
    /// PyTorch release and wheel variant (`None` variant = CPU wheel).
    pub torch: Option<(&'c TorchRelease, Option<&'c TorchVariant>)>,
    /// TensorFlow release.
    pub tensorflow: Option<&'c TfRelease>,
    /// JAX release and the CUDA plugin its extra brings.
    pub jax: Option<(&'c JaxRelease, &'c JaxPlugin)>,
    /// CUDA toolkit release.
    pub cuda: Option<&'c CudaRelease>,
    /// cuDNN build.
    pub cudnn: Option<&'c CudnnRelease>,
    /// Why no cuDNN could be planned (cuda-dev only; `full` rejects the stack instead).
    pub cudnn_missing: Option<String>,
    /// The Python it goes into.
    pub python: Option<PythonChoice>,
    /// For each target: how it is served (`sm_86 SASS`), or why it is left out.
    pub coverage: Vec<Result<String, String>>,
    /// The highest driver floor this stack needs.
    pub floor: Option<Version>,
    /// Warnings this stack brings (minor-version compatibility, JIT).
    pub notes: Vec<String>,
    /// Bounds for what the framework's requirements leave floating.
    pub constraints: Vec<Constraint>,
    /// TensorFlow or JAX: which cuDNN their CUDA wheels bring, in words.
    pub wheel_cudnn: Option<String>,
}

impl Stack<'_> {
    /// How many targets it serves.
    pub fn served(&self) -> usize {
        self.coverage.iter().filter(|c| c.is_ok()).count()
    }

    pub(super) fn empty() -> Self {
        Self {
            torch: None,
            tensorflow: None,
            jax: None,
            cuda: None,
            cudnn: None,
            cudnn_missing: None,
            python: None,
            coverage: Vec::new(),
            floor: None,
            notes: Vec::new(),
            constraints: Vec::new(),
            wheel_cudnn: None,
        }
    }

    pub(super) fn need(&mut self, floor: Version) {
        if self.floor.as_ref().is_none_or(|f| *f < floor) {
            self.floor = Some(floor);
        }
    }
}

/// Minor-version-compatibility floor of a CUDA major on this host.
pub(super) fn major_floor(ctx: &Ctx<'_>, cuda: &Version) -> Option<Version> {
    let m = ctx
        .catalog
        .cuda
        .major
        .iter()
        .find(|m| m.major == cuda.major())?;
    if ctx.host.windows_driver() {
        m.driver_windows.clone()
    } else {
        Some(m.driver_linux.clone())
    }
}

/// The driver at which a toolkit release is fully supported on this host: the one it ships
/// with, or for a release without a bundled driver the branch NVIDIA released with it.
fn release_floor(ctx: &Ctx<'_>, r: &CudaRelease) -> Option<Version> {
    if ctx.host.windows_driver() {
        r.driver_windows.clone()
    } else {
        r.full_support_linux()
    }
}

/// The lowest driver that fully supports a release of `series`: it runs every release of it.
fn series_floor(ctx: &Ctx<'_>, series: &Version) -> Option<Version> {
    ctx.catalog
        .cuda
        .release
        .iter()
        .filter(|r| r.version.prefix(2) == series.prefix(2))
        .filter_map(|r| release_floor(ctx, r))
        .min()
}

/// Whether `driver` is the installed one and reports a CUDA version of at least `series`: NVIDIA's
/// driver states the newest CUDA it runs without minor-version compatibility.
fn native_by_report(ctx: &Ctx<'_>, series: &Version, driver: Option<&Version>) -> bool {
    let Some(d) = ctx.system.driver.as_ref() else {
        return false;
    };
    let installed = Version::parse(&d.version);
    let reported = d.cuda_version.as_deref().and_then(Version::parse);
    match (driver, installed, reported) {
        (Some(planned), Some(installed), Some(reported)) if *planned == installed => {
            let mm = |v: &Version| (v.major(), v.minor());
            mm(series) <= mm(&reported)
        }
        _ => false,
    }
}

pub(super) fn meets(driver: Option<&Version>, floor: &Version) -> bool {
    driver.is_none_or(|d| d >= floor)
}

pub(super) fn sm(v: &Version) -> String {
    format!("sm_{}{}", v.major(), v.minor())
}

/// How a torch variant serves each target.
fn torch_coverage(ctx: &Ctx<'_>, v: &TorchVariant) -> Vec<Result<String, String>> {
    ctx.targets
        .iter()
        .map(
            |t| match v.kernels_for(&t.cc, |b, g| ctx.catalog.cuda.sass_runs_on(b, g)) {
                Kernels::Sass(a) => Ok(format!("{} SASS", sm(&a))),
                Kernels::Ptx(p) => Ok(format!(
                    "{} PTX, compiled by the driver at first use",
                    sm(&p)
                )),
                Kernels::None => Err(format!(
                    "no {} kernels for the {} (wheel has {}{})",
                    sm(&t.cc),
                    t.name,
                    v.arch_list.iter().map(sm).collect::<Vec<_>>().join(" "),
                    v.ptx
                        .as_ref()
                        .map(|p| format!(" + PTX {}", sm(p)))
                        .unwrap_or_default()
                )),
            },
        )
        .collect()
}

/// The newest toolkit release of `series` the driver runs and that builds for every served
/// target: one the driver fully supports if any, else one it runs under minor-version
/// compatibility (noted).
pub(super) fn pick_toolkit<'c>(
    ctx: &Ctx<'c>,
    series: &Version,
    driver: Option<&Version>,
    served: &[usize],
) -> Result<(&'c CudaRelease, Option<String>), String> {
    let row = ctx
        .catalog
        .cuda
        .series
        .iter()
        .find(|s| s.version.prefix(2) == series.prefix(2))
        .ok_or_else(|| format!("CUDA {series}: its build targets are not in the catalog"))?;
    for &i in served {
        let t = &ctx.targets[i];
        if !row.builds_for(&t.cc) {
            return Err(format!(
                "CUDA {series} cannot build for {} of the {} (its compiler covers {})",
                sm(&t.cc),
                t.name,
                row.describe()
            ));
        }
    }
    let mut releases: Vec<&CudaRelease> = ctx
        .catalog
        .cuda
        .release
        .iter()
        .filter(|r| r.version.prefix(2) == series.prefix(2))
        .filter(|r| pin_matches(ctx.req.pins.cuda.as_ref(), &r.version))
        .collect();
    // NVIDIA publishes each release per platform: one without an archive for this machine's
    // platform is never planned for it.
    let for_platform = releases.len();
    releases.retain(|r| r.on_platform(ctx.platform));
    if releases.is_empty() && for_platform > 0 {
        return Err(format!(
            "no CUDA {series} release in the catalog is published for {}",
            ctx.platform
        ));
    }
    releases.sort_by(|a, b| b.version.cmp(&a.version));
    // A driver that fully supports one release of a series runs them all: the releases of a
    // series share its PTX ISA version, so the newest (bug and security fixes) is taken. Without
    // a driver (a build machine) every release is as good.
    // The installed driver's own word (NVML's or nvidia-smi's "CUDA Version") counts too: a
    // release with no bundled driver in the catalog (13.5) is native on a driver reporting it.
    let series_supported = native_by_report(ctx, series, driver)
        || ctx
            .catalog
            .cuda
            .release
            .iter()
            .filter(|r| r.version.prefix(2) == series.prefix(2) && r.on_platform(ctx.platform))
            .any(|r| match release_floor(ctx, r) {
                Some(f) => meets(driver, &f),
                None => driver.is_none(),
            });
    if let (true, Some(r)) = (series_supported, releases.first()) {
        return Ok((r, None));
    }
    let floor = major_floor(ctx, series)
        .ok_or_else(|| format!("CUDA {series}: no driver floor in the catalog"))?;
    match (releases.first(), meets(driver, &floor)) {
        (Some(r), true) => Ok((
            r,
            Some(match (&r.driver_linux, r.recommended_branch) {
                (None, branch) if !ctx.host.windows_driver() => format!(
                    "CUDA {} bundles no driver; it runs on this one through minor-version compatibility (floor {floor}): kernels built for your GPU run, PTX newer than the driver cannot be JIT-compiled{}",
                    r.version,
                    match (&r.native_driver_linux, branch) {
                        (Some(d), _) => format!("; driver {d} and newer run it natively"),
                        (None, Some(b)) => format!("; NVIDIA released branch {b} with it for its new features"),
                        (None, None) => String::new(),
                    }
                ),
                _ => format!(
                    "CUDA {} runs on this driver through minor-version compatibility (floor {floor}): kernels built for your GPU run, PTX newer than the driver cannot be JIT-compiled",
                    r.version
                ),
            }),
        )),
        (Some(_), false) => Err(format!("CUDA {series} needs driver {floor} or newer")),
        (None, _) => Err(format!("no CUDA {series} release matches the pins")),
    }
}

/// The newest cuDNN build for a toolkit series that the driver runs and that supports every
/// served target.
fn pick_cudnn<'c>(
    ctx: &Ctx<'c>,
    series: &Version,
    driver: Option<&Version>,
    served: &[usize],
) -> Result<&'c CudnnRelease, String> {
    let mut rows: Vec<&CudnnRelease> = ctx
        .catalog
        .cudnn
        .release
        .iter()
        .filter(|r| r.supports_cuda(series))
        .filter(|r| pin_matches(ctx.req.pins.cudnn.as_ref(), &r.version))
        .collect();
    rows.sort_by(|a, b| b.version.cmp(&a.version));
    let any = !rows.is_empty();
    // A build's GPU list is per platform: one known only for another platform is not planned.
    rows.retain(|r| r.on_platform(ctx.platform));
    if rows.is_empty() {
        let pin = ctx
            .req
            .pins
            .cudnn
            .as_ref()
            .map(|p| format!("{p} "))
            .unwrap_or_default();
        return Err(if any {
            format!(
                "no cuDNN {pin}build for CUDA {series} in the catalog has a {} GPU list",
                ctx.platform
            )
        } else {
            format!("no cuDNN {pin}build in the catalog for CUDA {series}")
        });
    }
    let mut why = String::new();
    for r in rows {
        let floor = if ctx.host.windows_driver() {
            r.driver_windows
                .clone()
                .or_else(|| major_floor(ctx, series))
        } else {
            r.driver_linux.clone().or_else(|| major_floor(ctx, series))
        };
        if !floor.as_ref().is_some_and(|f| meets(driver, f)) {
            why = format!("cuDNN {} needs a newer driver", r.version);
            continue;
        }
        let runs = |b: &Version, g: &Version| ctx.catalog.cuda.sass_runs_on(b, g);
        if let Some(&i) = served
            .iter()
            .find(|&&i| !r.supports_cc_on(ctx.platform, &ctx.targets[i].cc, runs))
        {
            why = format!(
                "cuDNN {} for CUDA {} ({}) does not support {} of the {}",
                r.version,
                r.cuda_variant,
                ctx.platform,
                sm(&ctx.targets[i].cc),
                ctx.targets[i].name
            );
            continue;
        }
        return Ok(r);
    }
    Err(why)
}

fn served_indices(coverage: &[Result<String, String>]) -> Vec<usize> {
    coverage
        .iter()
        .enumerate()
        .filter(|(_, c)| c.is_ok())
        .map(|(i, _)| i)
        .collect()
}

/// Which is better: more GPUs served, then the newest GPU served; the caller's order (newest
/// release first) breaks ties.
fn better(a: &Stack<'_>, b: &Stack<'_>, ctx: &Ctx<'_>) -> bool {
    let top = |s: &Stack<'_>| {
        served_indices(&s.coverage)
            .iter()
            .map(|&i| ctx.targets[i].cc.clone())
            .max()
    };
    (a.served(), top(a)) > (b.served(), top(b))
}

/// The releases matching `pin`, newest first.
pub(super) fn newest_first<'c, T>(
    all: &'c [T],
    pin: Option<&crate::model::version::VersionPin>,
    version: impl Fn(&T) -> &Version,
) -> Vec<&'c T> {
    let mut out: Vec<&T> = all
        .iter()
        .filter(|r| pin_matches(pin, version(r)))
        .collect();
    out.sort_by(|a, b| version(b).cmp(version(a)));
    out
}

/// The Requires-Python rows of a torch release's companions (torchvision, torchaudio).
fn companions_python<'c>(
    ctx: &Ctx<'c>,
    r: &TorchRelease,
) -> Vec<&'c crate::catalog::RequiresPython> {
    [
        ("torchvision", &r.torchvision),
        ("torchaudio", &r.torchaudio),
    ]
    .into_iter()
    .filter_map(|(name, v)| {
        crate::catalog::requires_python(&ctx.catalog.pytorch.requires_python, name, v.as_deref()?)
    })
    .collect()
}

/// `full` and `pytorch`: the newest torch whose wheel serves every GPU; if none serves every
/// GPU, the one serving the most (the rest are named as left out).
pub fn search_torch<'c>(
    ctx: &Ctx<'c>,
    driver: Option<&Version>,
    rejected: &mut Vec<String>,
) -> Option<Stack<'c>> {
    let releases = newest_first(
        &ctx.catalog.pytorch.release,
        ctx.req.pins.torch.as_ref(),
        |r| &r.version,
    );
    let mut best_partial: Option<Stack<'c>> = None;
    for r in releases {
        let requires = companions_python(ctx, r);
        let python = match python::choose(
            ctx.system,
            ctx.req.pins.python.as_ref(),
            &r.python_min,
            &r.python_max,
            &requires,
        ) {
            Ok(p) => p,
            Err(e) => {
                rejected.push(format!("torch {}: {e}", r.version));
                continue;
            }
        };
        // The variant PyPI serves by default is the best-tested one: try it first, then the
        // others from the newest CUDA down.
        // A wheel is built for a series (13.0): a release pin (13.0.2) picks the series here and
        // the release for the toolkit.
        let cuda_pin = ctx.req.pins.cuda.as_ref().map(|p| p.series());
        let mut variants: Vec<&TorchVariant> = r
            .variants_for(ctx.platform)
            .into_iter()
            .filter(|v| {
                let ok = cuda_pin
                    .as_ref()
                    .is_none_or(|p| pin_matches(Some(p), &v.cuda));
                if !ok {
                    rejected.push(format!(
                        "torch {} {}: built for CUDA {}, not the pinned CUDA",
                        r.version, v.name, v.cuda
                    ));
                }
                ok
            })
            .collect();
        // In the pytorch profile cuDNN is the wheel torch pins: --cudnn picks the release.
        if let (Profile::Pytorch, Some(pin)) = (ctx.req.profile, ctx.req.pins.cudnn.as_ref()) {
            variants.retain(|v| {
                let ok = v
                    .cudnn
                    .as_deref()
                    .and_then(Version::parse)
                    .is_some_and(|c| pin_matches(Some(pin), &c));
                if !ok {
                    rejected.push(format!(
                        "torch {} {}: its wheel depends on cuDNN {}, not the pinned {pin}",
                        r.version,
                        v.name,
                        v.cudnn.as_deref().unwrap_or("(not in the catalog)")
                    ));
                }
                ok
            });
        }
        if variants.is_empty() && !r.variant.is_empty() && cuda_pin.is_none() {
            rejected.push(format!(
                "torch {}: no CUDA wheel for {} in the catalog",
                r.version, ctx.platform
            ));
        }
        variants.sort_by(|a, b| {
            let default = |v: &TorchVariant| r.is_pypi_default(v);
            default(b).cmp(&default(a)).then(b.cuda.cmp(&a.cuda))
        });
        for v in variants {
            let label = format!("torch {} {}", r.version, v.name);
            // A platform's wheels may stop at an older Python than the release's.
            let python = match &v.python_max {
                Some(max) if max < &r.python_max => match python::choose(
                    ctx.system,
                    ctx.req.pins.python.as_ref(),
                    &r.python_min,
                    max,
                    &requires,
                ) {
                    Ok(p) => p,
                    Err(e) => {
                        rejected.push(format!("{label} ({}): {e}", ctx.platform));
                        continue;
                    }
                },
                _ => python.clone(),
            };
            let Some(floor) = major_floor(ctx, &v.cuda) else {
                rejected.push(format!(
                    "{label}: no driver floor for CUDA {} in the catalog",
                    v.cuda
                ));
                continue;
            };
            if !meets(driver, &floor) {
                rejected.push(format!(
                    "{label}: needs driver {floor} or newer (CUDA {}.x)",
                    v.cuda.major()
                ));
                continue;
            }
            let coverage = torch_coverage(ctx, v);
            for miss in coverage.iter().filter_map(|c| c.as_ref().err()) {
                rejected.push(format!("{label}: {miss}"));
            }
            let served = served_indices(&coverage);
            if served.is_empty() {
                continue;
            }
            let mut stack = Stack::empty();
            stack.need(floor);
            stack.torch = Some((r, Some(v)));
            stack.python = Some(python.clone());
            for (i, c) in coverage.iter().enumerate() {
                if let Ok(how) = c {
                    if how.contains("PTX") {
                        stack.notes.push(format!(
                            "the {} runs torch {} through PTX JIT: the first start compiles kernels and takes minutes",
                            ctx.targets[i].name, r.version
                        ));
                    }
                }
            }
            stack.coverage = coverage;
            if ctx.req.profile.has_toolkit() {
                let toolkit = match pick_toolkit(ctx, &v.cuda, driver, &served) {
                    Ok(t) => Ok((t, v.cuda.clone())),
                    Err(e) => super::toolkit_fit::newer_of_major(ctx, &v.cuda, driver, &served)
                        .map(|(t, series)| {
                            stack.notes.push(super::toolkit_fit::mismatch_note(
                                &label, &v.cuda, &series, &e,
                            ));
                            (t, series)
                        })
                        .ok_or(e),
                };
                let series = match toolkit {
                    Ok(((t, note), series)) => {
                        stack.cuda = Some(t);
                        stack.notes.extend(note);
                        series
                    }
                    Err(e) => {
                        rejected.push(format!("{label}: {e}"));
                        continue;
                    }
                };
                match pick_cudnn(ctx, &series, driver, &served) {
                    Ok(c) => stack.cudnn = Some(c),
                    Err(e) => {
                        rejected.push(format!("{label}: {e}"));
                        continue;
                    }
                }
            }
            if stack.served() == ctx.targets.len() {
                return Some(stack);
            }
            if best_partial.as_ref().is_none_or(|b| better(&stack, b, ctx)) {
                best_partial = Some(stack);
            }
        }
    }
    best_partial
}

/// `tensorflow`: the newest release whose CUDA the driver runs and whose build serves the GPUs.
pub fn search_tensorflow<'c>(
    ctx: &Ctx<'c>,
    driver: Option<&Version>,
    rejected: &mut Vec<String>,
) -> Option<Stack<'c>> {
    let releases = newest_first(
        &ctx.catalog.tensorflow.release,
        ctx.req.pins.tensorflow.as_ref(),
        |r| &r.version,
    );
    let last_windows = ctx
        .catalog
        .tensorflow
        .release
        .iter()
        .filter(|r| r.windows_native_gpu)
        .map(|r| r.version.to_string())
        .max();
    for r in releases {
        let label = format!("TensorFlow {}", r.version);
        if !r.gpu_platforms.iter().any(|p| p == ctx.platform) {
            rejected.push(format!(
                "{label}: no GPU build for {}{}",
                ctx.platform,
                ctx.catalog
                    .tensorflow
                    .platform(ctx.platform)
                    .map(|p| format!(" ({})", p.note))
                    .unwrap_or_default()
            ));
            continue;
        }
        if ctx.host == super::driver::Host::Windows && !r.windows_native_gpu {
            rejected.push(format!(
                "{label}: no GPU build for native Windows{}; use WSL2",
                last_windows
                    .as_ref()
                    .map(|v| format!(" (the last was {v})"))
                    .unwrap_or_default()
            ));
            continue;
        }
        if !r.and_cuda {
            rejected.push(format!(
                "{label}: needs a system CUDA {} and cuDNN {} (no `and-cuda` wheels); the tensorflow profile installs pip wheels only",
                r.cuda, r.cudnn
            ));
            continue;
        }
        if !pin_matches(ctx.req.pins.cuda.as_ref(), &r.cuda) {
            rejected.push(format!(
                "{label}: built for CUDA {}, not the pinned CUDA",
                r.cuda
            ));
            continue;
        }
        let requires: Vec<&crate::catalog::RequiresPython> = crate::catalog::requires_python(
            &ctx.catalog.tensorflow.requires_python,
            "tensorflow",
            &r.version.to_string(),
        )
        .into_iter()
        .collect();
        let python = match python::choose(
            ctx.system,
            ctx.req.pins.python.as_ref(),
            &r.python_min,
            &r.python_max,
            &requires,
        ) {
            Ok(p) => p,
            Err(e) => {
                rejected.push(format!("{label}: {e}"));
                continue;
            }
        };
        let Some(floor) = major_floor(ctx, &r.cuda) else {
            continue;
        };
        if !meets(driver, &floor) {
            rejected.push(format!(
                "{label}: needs driver {floor} or newer (CUDA {}.x)",
                r.cuda.major()
            ));
            continue;
        }
        let Some(series) = ctx
            .catalog
            .cuda
            .series
            .iter()
            .find(|s| s.version.prefix(2) == r.cuda.prefix(2))
        else {
            rejected.push(format!(
                "{label}: CUDA {} build targets are not in the catalog",
                r.cuda
            ));
            continue;
        };
        let mut stack = Stack::empty();
        stack.need(floor);
        stack.coverage = ctx
            .targets
            .iter()
            .map(|t| {
                if t.cc < series.sm_min || series.sm_excluded.contains(&t.cc) {
                    Err(format!(
                        "its CUDA {} build cannot run on {} of the {}",
                        r.cuda,
                        sm(&t.cc),
                        t.name
                    ))
                } else if t.cc > series.sm_max {
                    Ok(format!(
                        "PTX of {}, compiled by the driver at first use",
                        sm(&series.sm_max)
                    ))
                } else {
                    Ok(format!("{} (CUDA {})", sm(&t.cc), r.cuda))
                }
            })
            .collect();
        for miss in stack.coverage.iter().filter_map(|c| c.as_ref().err()) {
            rejected.push(format!("{label}: {miss}"));
        }
        if stack.served() < ctx.targets.len() {
            continue;
        }
        for (t, c) in ctx.targets.iter().zip(&stack.coverage) {
            if c.as_ref().is_ok_and(|c| c.starts_with("PTX")) {
                stack.notes.push(format!(
                    "the {} is newer than TensorFlow {}'s CUDA {} build: it runs through PTX JIT (slow first start)",
                    t.name, r.version, r.cuda
                ));
            }
        }
        let failing = ctx.targets.iter().find_map(|t| {
            ctx.catalog
                .tensorflow
                .known_failure(&r.version, &t.cc)
                .map(|f| (t, f))
        });
        if let Some((t, f)) = failing {
            rejected.push(format!(
                "{label}: known to fail on {} ({}): {}; instead: {} (reports: {})",
                sm(&t.cc),
                t.name,
                f.failure,
                f.instead,
                f.source
                    .split_whitespace()
                    .filter(|w| w.starts_with("https://"))
                    .map(|w| w.trim_end_matches([';', ',', ')']))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            continue;
        }
        match super::constraints::tensorflow_cudnn(ctx, r) {
            Ok(c) => {
                stack.wheel_cudnn = Some(c.summary);
                stack.constraints = c.constraints;
                stack.notes.extend(c.notes);
            }
            Err(e) => {
                rejected.push(format!("{label}: {e}"));
                continue;
            }
        }
        stack.tensorflow = Some(r);
        stack.python = Some(python);
        return Some(stack);
    }
    None
}

/// `cuda-dev`: the newest toolkit that builds for every GPU and that the driver runs — fully
/// supported if possible, else under minor-version compatibility — plus the newest cuDNN for it.
pub fn search_toolkit<'c>(
    ctx: &Ctx<'c>,
    driver: Option<&Version>,
    rejected: &mut Vec<String>,
) -> Option<Stack<'c>> {
    let mut series: Vec<Version> = ctx
        .catalog
        .cuda
        .series
        .iter()
        .map(|s| s.version.clone())
        .filter(|s| {
            ctx.req.pins.cuda.as_ref().is_none_or(|p| {
                let pin = p.version();
                pin.prefix(2) == s.prefix(2) || (pin.parts().len() == 1 && pin.major() == s.major())
            })
        })
        .collect();
    series.sort_by(|a, b| b.cmp(a));
    let all: Vec<usize> = (0..ctx.targets.len()).collect();
    let mut fallback: Option<Stack<'c>> = None;
    for s in series {
        match pick_toolkit(ctx, &s, driver, &all) {
            Ok((release, note)) => {
                let mut stack = Stack::empty();
                if let Some(f) = if note.is_some() {
                    major_floor(ctx, &s)
                } else {
                    series_floor(ctx, &s).or_else(|| major_floor(ctx, &s))
                } {
                    stack.need(f);
                }
                stack.cuda = Some(release);
                stack.coverage = ctx
                    .targets
                    .iter()
                    .map(|t| Ok(format!("{} (CUDA {s})", sm(&t.cc))))
                    .collect();
                match pick_cudnn(ctx, &s, driver, &all) {
                    Ok(c) => stack.cudnn = Some(c),
                    // A pinned cuDNN is part of the request: never drop it silently.
                    Err(e) if ctx.req.pins.cudnn.is_some() => {
                        rejected.push(format!("CUDA {}: {e}", release.version));
                        continue;
                    }
                    Err(e) => stack.cudnn_missing = Some(e),
                }
                match note {
                    None => return Some(stack),
                    Some(n) => {
                        rejected.push(format!(
                            "CUDA {}: only through minor-version compatibility on this driver",
                            release.version
                        ));
                        stack.notes.push(n);
                        if fallback.is_none() {
                            fallback = Some(stack);
                        }
                    }
                }
            }
            Err(e) => rejected.push(format!("CUDA {s}: {e}")),
        }
    }
    fallback
}

/// `cpu`: the newest torch with a Python in range; the CPU wheel.
pub fn search_cpu<'c>(ctx: &Ctx<'c>, rejected: &mut Vec<String>) -> Option<Stack<'c>> {
    let releases = newest_first(
        &ctx.catalog.pytorch.release,
        ctx.req.pins.torch.as_ref(),
        |r| &r.version,
    );
    for r in releases {
        match python::choose(
            ctx.system,
            ctx.req.pins.python.as_ref(),
            &r.python_min,
            &r.python_max,
            &companions_python(ctx, r),
        ) {
            Ok(p) => {
                let mut stack = Stack::empty();
                stack.torch = Some((r, None));
                stack.python = Some(p);
                return Some(stack);
            }
            Err(e) => rejected.push(format!("torch {}: {e}", r.version)),
        }
    }
    None
}

/// What `better` offers over `current` (a newer framework, or in cuda-dev a newer toolkit).
pub fn newer_than(better: &Stack<'_>, current: &Stack<'_>) -> Option<String> {
    if let (Some((b, bv)), Some((c, cv))) = (better.torch, current.torch) {
        let newer_cuda = bv.map(|v| &v.cuda) > cv.map(|v| &v.cuda);
        if b.version > c.version || (b.version == c.version && newer_cuda) {
            return Some(format!(
                "torch {} ({})",
                b.version,
                bv.map_or("cpu", |v| v.name.as_str())
            ));
        }
        return None;
    }
    if let (Some(b), Some(c)) = (better.tensorflow, current.tensorflow) {
        return (b.version > c.version).then(|| format!("TensorFlow {}", b.version));
    }
    match (better.cuda, current.cuda) {
        (Some(b), Some(c)) if b.version > c.version => Some(format!("CUDA {}", b.version)),
        _ => None,
    }
}
