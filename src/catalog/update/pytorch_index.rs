//! PyTorch's wheel index (`<base>/<variant>/torch/`, `torchvision/`, `torchaudio/`), or a mirror of
//! its layout: which CUDA variants each recent release was built for, what a new variant's wheel
//! pins, and whether the companions exist with the variant's `+<variant>` tag.

use super::pypi::{self, WheelFile};
use super::{Net, Targets, UpdateError};
use crate::catalog::Catalog;
use crate::fetch::Location;
use crate::model::version::Version;

/// One (release, variant) the index has.
#[derive(Debug, Clone)]
pub struct VariantObs {
    /// The torch release.
    pub release: Version,
    /// `cu132`.
    pub variant: String,
    /// The variant's Linux x86_64 wheel.
    pub wheel: WheelFile,
    /// The index page.
    pub page: String,
    /// Whether the release's torchvision and torchaudio exist as `+<variant>` builds there.
    pub companions_tagged: Option<bool>,
    /// The cuDNN wheel version it pins (read for variants the catalog lacks).
    pub cudnn: Option<String>,
    /// Where that came from.
    pub metadata_url: Option<String>,
    /// Whether the catalog has this variant already.
    pub known: bool,
    /// Filled by the fatbin probe (variants the catalog lacks).
    pub targets: Option<Targets>,
}

/// The variant names worth asking the index about: the ones the recent releases have, and one
/// per CUDA series from 12.6 on.
fn candidates(catalog: &Catalog, window: &[&crate::catalog::TorchRelease]) -> Vec<String> {
    let mut out: Vec<String> = window
        .iter()
        .flat_map(|r| r.variant.iter().map(|v| v.name.clone()))
        .collect();
    for s in &catalog.cuda.series {
        if s.version >= Version::parse("12.6").expect("a version") {
            out.push(format!("cu{}{}", s.version.major(), s.version.minor()));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Reads the index for the newest three catalogued releases.
pub fn read(
    net: &mut Net<'_>,
    base: &Location,
    catalog: &Catalog,
    notes: &mut Vec<String>,
) -> Result<Vec<VariantObs>, UpdateError> {
    let mut releases: Vec<&crate::catalog::TorchRelease> = catalog.pytorch.release.iter().collect();
    releases.sort_by(|a, b| b.version.cmp(&a.version));
    releases.truncate(3);
    let mut out = Vec::new();
    let mut answered = false;
    for variant in candidates(catalog, &releases) {
        let index = base.join(&variant);
        let Some(torch) = pypi::project(net, &index, "torch")? else {
            continue;
        };
        answered = true;
        let mut vision: Option<Option<pypi::Project>> = None;
        let mut audio: Option<Option<pypi::Project>> = None;
        for r in &releases {
            let Some(w) = torch.wheel(&r.version).filter(|w| {
                w.filename
                    .split('-')
                    .nth(1)
                    .is_some_and(|v| v.ends_with(&format!("+{variant}")))
            }) else {
                continue;
            };
            let known = r.variant.iter().any(|v| v.name == variant);
            let has = |p: &Option<pypi::Project>, v: &Option<String>| -> Option<bool> {
                let v = v.as_ref()?;
                let tagged = format!("{v}+{variant}");
                Some(p.as_ref().is_some_and(|p| {
                    p.files
                        .iter()
                        .any(|f| f.filename.split('-').nth(1) == Some(tagged.as_str()))
                }))
            };
            if vision.is_none() {
                vision = Some(pypi::project(net, &index, "torchvision")?);
                audio = Some(pypi::project(net, &index, "torchaudio")?);
            }
            let tv = has(vision.as_ref().expect("read above"), &r.torchvision);
            let ta = has(audio.as_ref().expect("read above"), &r.torchaudio);
            let companions_tagged = match (tv, ta) {
                (Some(a), Some(b)) => Some(a && b),
                (a, b) => a.or(b),
            };
            let (cudnn, metadata_url) = if known {
                (None, None)
            } else {
                let m = pypi::metadata(net, w)?;
                let pin = m
                    .requires(None)
                    .into_iter()
                    .find(|q| q.name.starts_with("nvidia-cudnn-cu"))
                    .filter(|q| q.spec.is_exact())
                    .and_then(|q| q.spec.floor().map(|f| f.to_string()));
                (pin, Some(m.url))
            };
            out.push(VariantObs {
                release: r.version.clone(),
                variant: variant.clone(),
                wheel: w.clone(),
                page: torch.page.to_string(),
                companions_tagged,
                cudnn,
                metadata_url,
                known,
                targets: None,
            });
        }
    }
    if !answered {
        notes.push(format!("{base}: no variant page answered"));
    }
    Ok(out)
}
