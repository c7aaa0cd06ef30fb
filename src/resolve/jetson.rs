//! A Jetson's plan: the board's stack (driver, CUDA, cuDNN, TensorRT) comes with JetPack, so
//! cudaup installs none of it. The plan is `unsupported` (exit code 5, "unsupported system")
//! and says which JetPack the board runs, what it ships, and which PyTorch builds fit it.

use crate::catalog::{JetsonRelease, JetsonTorch, TorchKind};
use crate::model::plan::JetsonAdvice;
use crate::model::plan::{Plan, Status};
use crate::model::system::Jetson;
use crate::model::version::Version;

use super::Ctx;

/// The plan for a Jetson.
pub(super) fn plan(ctx: &Ctx<'_>, j: &Jetson, warnings: Vec<String>) -> Plan {
    let jets = &ctx.catalog.jetson;
    let module = j.model.as_deref().and_then(|m| jets.module_of(m));
    let l4t = j.l4t.as_deref().and_then(Version::parse);
    let release = l4t.as_ref().and_then(|v| jets.release(v));
    let board = j.model.clone().unwrap_or_else(|| "a Jetson".to_owned());
    let mut reasons = Vec::new();
    let mut advice = JetsonAdvice {
        model: j.model.clone(),
        module: module.map(|m| m.name.clone()),
        l4t: j.l4t.clone(),
        jetpack: None,
        cuda: None,
        cudnn: None,
        tensorrt: None,
        pytorch: Vec::new(),
        newest: None,
        source: String::new(),
    };
    match release {
        Some(r) => {
            advice.jetpack = Some(r.jetpack.clone());
            advice.cuda = r.cuda.as_ref().map(|v| v.to_string());
            advice.cudnn = r.cudnn.clone();
            advice.tensorrt = r.tensorrt.clone();
            advice.source = r.source.clone();
            reasons.push(format!(
                "{board} runs L4T {} = JetPack {}: its driver{} come with JetPack (`sudo apt install nvidia-jetpack`, or NVIDIA SDK Manager to flash another release), so cudaup installs no driver, toolkit or cuDNN here",
                r.l4t,
                r.jetpack,
                shipped(r)
            ));
            if let Some(m) = module.filter(|m| !r.modules.iter().any(|x| x == &m.name)) {
                reasons.push(format!(
                    "JetPack {} is not listed for {} modules (it supports {})",
                    r.jetpack,
                    m.name,
                    r.modules.join(", ")
                ));
            }
            let torches: Vec<&JetsonTorch> = r
                .pytorch
                .iter()
                .filter(|t| module.is_none_or(|m| t.serves(&m.name)))
                .collect();
            for t in torches {
                advice.pytorch.extend(torch_lines(ctx, r, t, module));
            }
            if advice.pytorch.is_empty() {
                reasons.push(format!(
                    "the catalog lists no PyTorch build for JetPack {}",
                    r.jetpack
                ));
            } else {
                reasons.push(format!("PyTorch for JetPack {}:", r.jetpack));
                reasons.extend(advice.pytorch.iter().map(|l| format!("  {l}")));
            }
        }
        None => {
            reasons.push(format!(
                "{board} runs NVIDIA's Linux for Tegra{}: its driver, CUDA, cuDNN and TensorRT come with JetPack, so cudaup installs none of them; {}: find its JetPack at https://developer.nvidia.com/embedded/jetpack-archive",
                j.l4t
                    .as_deref()
                    .map(|v| format!(" {v}"))
                    .unwrap_or_default(),
                if j.l4t.is_some() {
                    "the catalog does not know this L4T release"
                } else {
                    "its L4T release is not known here (/etc/nv_tegra_release says it: `cat /etc/nv_tegra_release`)"
                }
            ));
        }
    }
    if let Some(m) = module {
        if let Some(n) = jets.newest_for(&m.name) {
            if l4t.as_ref().is_none_or(|v| &n.l4t > v) {
                let line = format!("JetPack {} (L4T {}{})", n.jetpack, n.l4t, shipped(n));
                reasons.push(format!(
                    "the newest JetPack the catalog knows for {} modules is {line}",
                    m.name
                ));
                advice.newest = Some(line);
            }
        }
        reasons.push(format!(
            "the GPU is the integrated {} (compute capability {}); `cudaup plan --profile cpu` plans CPU-only PyTorch",
            m.gpu, m.compute_capability
        ));
    }
    Plan {
        status: Status::Unsupported,
        profile: ctx.req.profile,
        components: Vec::new(),
        reasons,
        warnings,
        constraints: Vec::new(),
        catalog: Default::default(),
        jetson: Some(advice),
        rejected: Vec::new(),
    }
}

/// `, CUDA 12.6, cuDNN 9.3 and TensorRT 10.3`: what the release ships, as far as known.
fn shipped(r: &JetsonRelease) -> String {
    let parts: Vec<String> = [
        r.cuda.as_ref().map(|c| format!("CUDA {c}")),
        r.cudnn.as_ref().map(|c| format!("cuDNN {c}")),
        r.tensorrt.as_ref().map(|c| format!("TensorRT {c}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    match parts.len() {
        0 => ", CUDA, cuDNN and TensorRT".to_owned(),
        1 => format!(" and {}", parts[0]),
        _ => format!(
            ", {} and {}",
            parts[..parts.len() - 1].join(", "),
            parts[parts.len() - 1]
        ),
    }
}

/// One line per PyTorch choice: a wheel, an index, or the catalog's own linux-sbsa releases of
/// the JetPack's CUDA major that serve the module's GPU.
fn torch_lines(
    ctx: &Ctx<'_>,
    r: &JetsonRelease,
    t: &JetsonTorch,
    module: Option<&crate::catalog::JetsonModule>,
) -> Vec<String> {
    let python = t
        .python
        .as_deref()
        .map(|p| format!(" (Python {p})"))
        .unwrap_or_default();
    let note = t
        .note
        .as_deref()
        .map(|n| format!(" — {n}"))
        .unwrap_or_default();
    match t.kind {
        TorchKind::Wheel => vec![format!(
            "NVIDIA's wheel torch {}{python}: pip install {}{note}",
            t.version.as_deref().unwrap_or("?"),
            t.url.as_deref().unwrap_or("?")
        )],
        TorchKind::Index => vec![format!(
            "Jetson AI Lab's index{python}: pip install torch --index-url {}{note}",
            t.url.as_deref().unwrap_or("?")
        )],
        TorchKind::Upstream => {
            let (Some(cuda), Some(m)) = (&r.cuda, module) else {
                return Vec::new();
            };
            let mut out = Vec::new();
            let mut releases: Vec<_> = ctx.catalog.pytorch.release.iter().collect();
            releases.sort_by(|a, b| b.version.cmp(&a.version));
            for tr in releases {
                // The newest build of this release the JetPack's CUDA runs and that has SASS
                // (or PTX) for the module's GPU.
                let mut vs: Vec<_> = tr
                    .variants_for(ctx.platform)
                    .into_iter()
                    .filter(|v| v.cuda.major() == cuda.major() && v.cuda <= *cuda)
                    .filter(|v| {
                        !matches!(
                            v.kernels_for(&m.compute_capability, |b, g| {
                                ctx.catalog.cuda.sass_runs_on(b, g)
                            }),
                            crate::catalog::Kernels::None
                        )
                    })
                    .collect();
                vs.sort_by(|a, b| b.cuda.cmp(&a.cuda));
                if let Some(v) = vs.first() {
                    out.push(format!(
                        "PyTorch's own aarch64 wheel torch {} {} (Python {}-{}): pip install torch=={} --index-url {}{note}",
                        tr.version, v.name, tr.python_min, v.python_max.as_ref().unwrap_or(&tr.python_max), tr.version, v.index_url()
                    ));
                }
                if out.len() == 3 {
                    break;
                }
            }
            out
        }
    }
}
