//! What a framework's own requirements let pip float, and the bound that keeps it on the GPUs.
//!
//! TensorFlow 2.20 and later (and every JAX CUDA plugin) ask for `nvidia-cudnn-cu12>=9.3.0.75,<10` in their `and-cuda` extra:
//! pip takes the newest 9.x, and cuDNN's builds from 9.11 carry no code for compute
//! capability < 7.5. The facts come from cudnn.toml (which GPUs each build serves) and the
//! framework's row (its requirement as the wheel states it), never from a rule written here.

use crate::catalog::{CudnnRelease, JaxPlugin, JaxRelease, Op, Requirement, Spec, TfRelease};
use crate::model::plan::Constraint;
use crate::model::request::pin_matches;
use crate::model::version::Version;

use super::Ctx;

/// The cuDNN a framework's CUDA extra gets (TensorFlow's `and-cuda`, a JAX plugin's
/// `with-cuda`), and what bounds it.
#[derive(Debug, Clone)]
pub struct ExtraCudnn {
    /// What the plan says about it (`pins cuDNN 9.3.0.75`, `cuDNN 9.10.2 under the constraint`).
    pub summary: String,
    /// Constraints to pass pip.
    pub constraints: Vec<Constraint>,
    /// What the plan must warn about (a build taken unverified under `--allow-unverified`).
    pub notes: Vec<String>,
}

fn sm(v: &Version) -> String {
    format!("sm_{}{}", v.major(), v.minor())
}

/// The cuDNN wheel of a CUDA major (components.toml names it), e.g. `nvidia-cudnn-cu12`.
fn cudnn_wheel(ctx: &Ctx<'_>, major: u32) -> String {
    ctx.catalog
        .components
        .cudnn_wheel(major)
        .map(str::to_owned)
        .unwrap_or_else(|| format!("nvidia-cudnn-cu{major}"))
}

/// The first GPU none of a version's rows serve, as `sm_61 (NVIDIA GeForce GTX 1080 Ti)`. (The
/// 9.10.2 matrix lists one package twice, with and without Blackwell: a GPU either row serves is
/// served.)
fn unserved(ctx: &Ctx<'_>, rows: &[&CudnnRelease]) -> Option<String> {
    ctx.targets
        .iter()
        .find(|t| {
            !rows.iter().any(|r| {
                r.supports_cc_on(ctx.platform, &t.cc, |b, g| {
                    ctx.catalog.cuda.sass_runs_on(b, g)
                })
            })
        })
        .map(|t| format!("{} ({})", sm(&t.cc), t.name))
}

/// The catalog's cuDNN builds of variant `major` that `spec` allows, grouped by version, oldest
/// first.
fn versions_in<'c>(ctx: &Ctx<'c>, major: u32, spec: &Spec) -> Vec<Vec<&'c CudnnRelease>> {
    let mut rows: Vec<&CudnnRelease> = ctx
        .catalog
        .cudnn
        .release
        .iter()
        .filter(|r| r.cuda_variant == major.to_string())
        .filter(|r| spec.contains(r.wheel.as_ref().unwrap_or(&r.version)))
        .collect();
    rows.sort_by(|a, b| a.version.cmp(&b.version));
    let mut out: Vec<Vec<&CudnnRelease>> = Vec::new();
    for r in rows {
        match out.last_mut() {
            Some(g) if g[0].version == r.version => g.push(r),
            _ => out.push(vec![r]),
        }
    }
    out
}

/// Works out which cuDNN `tensorflow[and-cuda]==r.version` brings for the planned GPUs, with the
/// constraint that keeps a floating requirement on builds that serve them. `Err` says why the
/// release cannot serve them at all.
pub fn tensorflow_cudnn(ctx: &Ctx<'_>, r: &TfRelease) -> Result<ExtraCudnn, String> {
    let major = r.cuda.major();
    let wheel = cudnn_wheel(ctx, major);
    let Some(req) = r.and_cuda(&wheel) else {
        if let Some(p) = ctx.req.pins.cudnn.as_ref() {
            return Err(format!(
                "its `and-cuda` extra names no {wheel} requirement, so --cudnn {p} cannot be applied"
            ));
        }
        return Ok(ExtraCudnn {
            summary: format!("cuDNN {} (its tested build)", r.cudnn),
            constraints: Vec::new(),
            notes: Vec::new(),
        });
    };
    extra_cudnn(
        ctx,
        &Extra {
            name: "`and-cuda`",
            owner: format!("TensorFlow {}", r.version),
            major,
            wheel,
        },
        &req,
    )
}

/// The same for the cuDNN a JAX CUDA plugin's `with-cuda` extra floats (`None` when the extra
/// names no cuDNN: it then brings none, and nothing is bounded).
pub fn jax_cudnn(
    ctx: &Ctx<'_>,
    jax: &JaxRelease,
    plugin: &JaxPlugin,
) -> Result<Option<ExtraCudnn>, String> {
    let wheel = cudnn_wheel(ctx, plugin.cuda);
    let Some(req) = plugin.with_cuda(&wheel) else {
        return match ctx.req.pins.cudnn.as_ref() {
            Some(p) => Err(format!(
                "its `with-cuda` extra names no {wheel} requirement, so --cudnn {p} cannot be applied"
            )),
            None => Ok(None),
        };
    };
    extra_cudnn(
        ctx,
        &Extra {
            name: "`with-cuda`",
            owner: format!("JAX {}", jax.version),
            major: plugin.cuda,
            wheel,
        },
        &req,
    )
    .map(Some)
}

/// A framework extra that names a cuDNN wheel.
struct Extra {
    /// How the plan names it (`` `and-cuda` ``).
    name: &'static str,
    /// `TensorFlow 2.21.0`.
    owner: String,
    /// The CUDA major of its wheels.
    major: u32,
    /// `nvidia-cudnn-cu12`.
    wheel: String,
}

fn extra_cudnn(ctx: &Ctx<'_>, extra: &Extra, req: &Requirement) -> Result<ExtraCudnn, String> {
    let (wheel, major, name) = (&extra.wheel, extra.major, extra.name);
    let pin = ctx.req.pins.cudnn.as_ref();
    if req.spec.is_exact() {
        let pinned = req
            .spec
            .floor()
            .cloned()
            .expect("an exact spec has a version");
        if let Some(p) = pin.filter(|p| !pin_matches(Some(p), &pinned)) {
            return Err(format!(
                "its {name} extra pins {wheel}=={pinned}, not the pinned cuDNN {p}"
            ));
        }
        let known = ctx.catalog.cudnn.release.iter().find(|c| {
            c.cuda_variant == major.to_string() && c.version.prefix(3) == pinned.prefix(3)
        });
        let Some(row) = known else {
            // Unknown is not fitting: without the build's GPU list nothing says it runs here.
            // The user may still take it, and the plan then says it is unverified.
            let unknown = format!(
                "its {name} extra pins {wheel}=={pinned}, which the catalog has no row for, so whether it has code for the planned GPUs is unknown"
            );
            if !ctx.req.allow_unverified {
                return Err(format!("{unknown} (--allow-unverified takes it anyway)"));
            }
            return Ok(ExtraCudnn {
                summary: format!("pins cuDNN {pinned}, unverified"),
                constraints: Vec::new(),
                notes: vec![format!(
                    "unverified: {}: {unknown}; taken because of --allow-unverified",
                    extra.owner
                )],
            });
        };
        if let Some(why) = unserved(ctx, &[row]) {
            return Err(format!(
                "its {name} extra pins {wheel}=={pinned}, which has no code for {why}"
            ));
        }
        return Ok(ExtraCudnn {
            summary: format!("pins cuDNN {pinned}"),
            constraints: Vec::new(),
            notes: Vec::new(),
        });
    }
    float(ctx, extra, req, pin)
}

/// A floating cuDNN requirement. pip takes the newest build the range allows, so what matters is
/// the newest catalogued build in range that serves every planned GPU: when it is the newest in
/// range, nothing is bounded; otherwise the bound sits right above it (below the next build that
/// drops a GPU), and pip takes it. (The first build in range may lack a GPU that later builds
/// serve: TensorFlow 2.21 asks for cuDNN >= 9.3.0, which has no sm_120, while pip takes 9.28.)
fn float(
    ctx: &Ctx<'_>,
    extra: &Extra,
    req: &Requirement,
    pin: Option<&crate::model::version::VersionPin>,
) -> Result<ExtraCudnn, String> {
    let (wheel, major, name) = (extra.wheel.as_str(), extra.major, extra.name);
    let groups: Vec<Vec<&CudnnRelease>> = versions_in(ctx, major, &req.spec)
        .into_iter()
        .filter(|g| pin_matches(pin, &g[0].version))
        .collect();
    let mut constraints = Vec::new();
    if let Some(p) = pin {
        if groups.is_empty() {
            return Err(format!(
                "its {name} extra asks for {req}, and the catalog has no cuDNN {p} build in that range"
            ));
        }
        constraints.push(Constraint {
            requirement: format!("{wheel}=={p}.*"),
            reason: format!("--cudnn {p}: {req} would otherwise float to the newest release"),
        });
    }
    let version = |g: &[&CudnnRelease]| g[0].version.clone();
    let Some(newest) = groups.last().map(|g| version(g)) else {
        return Ok(ExtraCudnn {
            summary: format!("floats {wheel} ({req})"),
            constraints,
            notes: Vec::new(),
        });
    };
    let Some(good) = groups.iter().rposition(|g| unserved(ctx, g).is_none()) else {
        let why = unserved(ctx, &groups[groups.len() - 1]).unwrap_or_default();
        return Err(format!(
            "its {name} extra asks for {req}, and no catalogued cuDNN in that range has code for {why}"
        ));
    };
    let good_version = version(&groups[good]);
    let Some(bad) = groups.get(good + 1) else {
        return Ok(ExtraCudnn {
            summary: format!(
                "floats {wheel} to the newest release its extra allows ({req}); the newest catalogued, cuDNN {newest}, serves every GPU"
            ),
            constraints,
            notes: Vec::new(),
        });
    };
    let first_bad = version(bad);
    let why = unserved(ctx, bad).unwrap_or_default();
    // The bound sits right after the newest build known to serve every GPU: below the next
    // minor when the first failing build after it is in a later one (`<9.11`), so a patch
    // release the catalog does not list (9.11.0 beside 9.11.1) is never let through.
    let bound =
        if (first_bad.major(), first_bad.minor()) > (good_version.major(), good_version.minor()) {
            Version::parse(&format!(
                "{}.{}",
                good_version.major(),
                good_version.minor() + 1
            ))
            .expect("a version")
        } else {
            first_bad.clone()
        };
    let requirement = format!("{wheel}{}", Spec::one(Op::Lt, bound));
    constraints.push(Constraint {
        requirement: requirement.clone(),
        reason: format!(
            "{req} lets pip take the newest cuDNN ({newest}), but from cuDNN {first_bad} the builds carry no code for {why}; cuDNN {good_version} serves every planned GPU",
        ),
    });
    Ok(ExtraCudnn {
        summary: format!(
            "cuDNN {good_version} with the constraint {requirement} (its extra floats {req})"
        ),
        constraints,
        notes: Vec::new(),
    })
}
