//! Observations → catalog rows. What a source states is written as it states it, with the URL
//! and the date it was read; what no source states (labels, driver kinds and end of life, build
//! targets of a new series) is never filled in: such rows stay curated, or are left out.

use std::collections::BTreeMap;

use super::fatbin::Targets;
use super::pypi::{CudnnWheelObs, TfObs, TorchObs};
use super::pytorch_index::VariantObs;
use super::rows::{lit, lit_strings, lit_versions, Doc};
use super::{parts_after, Observations, PartReport, UpdateError};
use crate::catalog::{Catalog, Date, Requirement};
use crate::model::version::Version;

/// Why NVIDIA's cuDNN wheels are read as "any toolkit of the major".
const CUDNN_RANGE: &str = "the wheel names only the CUDA major (nvidia-cudnn-cuNN, Requires-Dist nvidia-cublas for it), as NVIDIA's conda package states the range: https://anaconda.org/anaconda/cudnn/files/modal/info/6939cfb21edf2ac08b9a91ae (cudnn-9.17.0.29: cuda-version >=13,<14); driver floor: the CUDA major's minor-version floor, which is what every readable cuDNN matrix (9.10.2, 9.17.0) states for its builds";

struct Texts<'t> {
    files: &'t mut BTreeMap<String, String>,
}

impl Texts<'_> {
    fn edit<T>(&mut self, name: &str, f: impl FnOnce(&mut Doc) -> T) -> Result<T, UpdateError> {
        let text = self
            .files
            .get(name)
            .ok_or_else(|| UpdateError::Usage(format!("the catalog has no {name}")))?;
        let mut doc = Doc::new(text);
        let out = f(&mut doc);
        self.files.insert(name.to_owned(), doc.text());
        Ok(out)
    }
}

fn sm_list(t: &Targets) -> Vec<Version> {
    t.sass.iter().cloned().collect()
}

/// Applies what the sources said; returns one line per change.
pub fn apply(
    base: &Catalog,
    files: &mut BTreeMap<String, String>,
    obs: &Observations,
    today: Date,
    notes: &mut Vec<String>,
) -> Result<Vec<String>, UpdateError> {
    let mut t = Texts { files };
    let mut changes = Vec::new();
    cuda(&mut t, base, obs, today, &mut changes, notes)?;
    t.edit("cuda.toml", |doc| {
        super::series::apply(doc, base, &obs.compilers, today, &mut changes, notes)
    })?;
    cudnn(&mut t, base, obs, today, &mut changes, notes)?;
    for o in &obs.pypi.torch {
        torch_release(&mut t, base, o, obs, today, &mut changes, notes)?;
    }
    for v in obs.torch_index.iter() {
        torch_variant(&mut t, base, v, today, &mut changes, notes)?;
    }
    for o in &obs.pypi.torch_sbsa {
        torch_sbsa(&mut t, base, o, today, &mut changes, notes)?;
    }
    for o in &obs.pypi.tensorflow {
        tensorflow(&mut t, base, o, today, &mut changes, notes)?;
    }
    for o in &obs.jax {
        t.edit("jax.toml", |doc| {
            super::jax::apply(doc, base, o, today, &mut changes)
        })?;
    }
    if let Some(pin) = &obs.uv {
        t.files
            .insert("uv.toml".to_owned(), super::uv::render(pin, today));
        changes.push(format!(
            "uv.toml: uv {} -> {} (its wheels and binaries)",
            base.uv.version, pin.version
        ));
    }
    // Last: the releases to read Requires-Python for include the rows added above.
    if !obs.pypi.indexed.is_empty() {
        let named = super::requires_python::named(t.files).map_err(UpdateError::Check)?;
        for (file, releases) in named {
            t.edit(file, |doc| {
                super::requires_python::apply(
                    doc,
                    file,
                    &releases,
                    &obs.pypi.indexed,
                    today,
                    &mut changes,
                    notes,
                )
            })?;
        }
    }
    Ok(changes)
}

fn append_source(doc: &mut Doc, row: super::rows::Span, url: &str) -> bool {
    let old = doc.string(row, "source").unwrap_or_default();
    if old.contains(url) {
        return false;
    }
    doc.set(row, "source", &lit(&format!("{old}; {url}")))
}

fn cuda(
    t: &mut Texts<'_>,
    base: &Catalog,
    obs: &Observations,
    today: Date,
    changes: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Result<(), UpdateError> {
    for o in &obs.cuda {
        let known = base.cuda.release.iter().find(|r| r.version == o.version);
        t.edit("cuda.toml", |doc| {
            let mut keys: Vec<(&str, String)> = Vec::new();
            if let Some(d) = o.date {
                keys.push(("date", lit(&d.to_string())));
            }
            if !o.platforms.is_empty() {
                keys.push(("platforms", lit_strings(&o.platforms)));
            }
            match known {
                Some(r) => {
                    let Some(row) = doc.find("release", "version", &o.version.to_string()) else {
                        return;
                    };
                    let mut changed = false;
                    for (k, v) in &keys {
                        changed |= doc.set(row, k, v);
                    }
                    if changed {
                        doc.set(row, "derived", &lit(&today.to_string()));
                        append_source(doc, row, &o.url);
                        changes.push(format!("cuda.toml: CUDA {}: date and platforms from its redistrib JSON", o.version));
                    }
                    if let (Some(bundled), Some(curated)) = (&o.driver, &r.driver_linux) {
                        if bundled != curated {
                            notes.push(format!("CUDA {}: the redistrib JSON bundles driver {bundled}; the catalog keeps {curated} (NVIDIA's Table 3)", o.version));
                        }
                    }
                }
                None => {
                    let mut row = vec![("version", lit(&o.version.to_string()))];
                    match &o.driver {
                        Some(d) => row.push(("driver_linux", lit(&d.to_string()))),
                        None => notes.push(format!(
                            "CUDA {}: its redistrib JSON bundles no nvidia_driver: plans use the {}.x minor-version floor",
                            o.version,
                            o.version.major()
                        )),
                    }
                    row.extend(keys.clone());
                    row.push(("derived", lit(&today.to_string())));
                    row.push(("source", lit(&format!("{} (redistrib JSON: release_date, cuda_nvcc platforms{}; no label: NVIDIA names releases in its release notes, which are not machine-readable)", o.url, if o.driver.is_some() { ", nvidia_driver" } else { ", no nvidia_driver component" }))));
                    let block = Doc::block("release", &row);
                    match doc.position("release", "version", &o.version, true) {
                        Some(at) => doc.insert(at, block),
                        None => doc.append(block),
                    }
                    changes.push(format!("cuda.toml: + CUDA {} (from {})", o.version, o.url));
                    if !base.cuda.series.iter().any(|s| s.version.prefix(2) == o.version.prefix(2)) {
                        notes.push(format!("CUDA {}: no [[series]] row says what {} compiles for, and NVIDIA publishes that only in its release notes: plans use it once that row is curated", o.version, o.version.prefix(2)));
                    }
                }
            }
        })?;
    }
    Ok(())
}

/// The redist facts of a cuDNN release's variant: its platforms and date.
fn redist_facts<'o>(
    obs: &'o Observations,
    version: &Version,
    major: &str,
) -> Option<(&'o super::redist::CudnnObs, Vec<String>)> {
    let r = obs.cudnn.iter().find(|c| &c.version == version)?;
    let platforms = r.variants.iter().find(|(m, _)| m == major)?.1.clone();
    Some((r, platforms))
}

fn cudnn(
    t: &mut Texts<'_>,
    base: &Catalog,
    obs: &Observations,
    today: Date,
    changes: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Result<(), UpdateError> {
    let mut wheels: Vec<&CudnnWheelObs> = obs.pypi.cudnn.iter().collect();
    wheels.sort_by(|a, b| a.version.cmp(&b.version));
    for w in wheels {
        let version = Version::parse(&w.version.prefix(3)).expect("a prefix is a version");
        let rows: Vec<_> = base
            .cudnn
            .release
            .iter()
            .filter(|r| r.cuda_variant == w.major && r.version == version)
            .collect();
        let redist = redist_facts(obs, &version, &w.major);
        t.edit("cudnn.toml", |doc| {
            if !rows.is_empty() {
                for span in doc.rows("release") {
                    let same = doc.string(span, "version").as_deref() == Some(version.to_string().as_str())
                        && doc.string(span, "cuda_variant").as_deref() == Some(w.major.as_str());
                    if same && doc.raw(span, "wheel").is_none() {
                        doc.set(span, "wheel", &lit(&w.version.to_string()));
                        doc.set(span, "derived", &lit(&today.to_string()));
                        append_source(doc, span, &w.page);
                        changes.push(format!("cudnn.toml: cuDNN {version} cuda{}: wheel {} ({})", w.major, w.version, w.page));
                    }
                }
                return;
            }
            let Some(targets) = &w.targets else {
                notes.push(format!("cuDNN {} cuda{}: its GPU list was not read, so no row was added", w.version, w.major));
                return;
            };
            let major: u32 = w.major.parse().unwrap_or(0);
            let mut row = vec![
                ("version", lit(&version.to_string())),
                ("cuda_variant", lit(&w.major)),
                ("cuda", lit(&format!(">={major}.0,<{}", major + 1))),
                ("compute_capabilities", lit_versions(&sm_list(targets))),
                ("wheel", lit(&w.version.to_string())),
            ];
            if let Some((r, platforms)) = &redist {
                row.push(("platforms", lit_strings(platforms)));
                if let Some(d) = r.date {
                    row.push(("date", lit(&d.to_string())));
                }
            }
            row.push(("derived", lit(&today.to_string())));
            let redist_url = redist.as_ref().map(|(r, _)| format!("; {}", r.url)).unwrap_or_default();
            row.push(("source", lit(&format!(
                "{} ({}: {}; {CUDNN_RANGE}){redist_url}",
                w.wheel.url, "libcudnn_cnn.so.9 .nv_fatbin", targets.describe()
            ))));
            let mut block = vec![format!("# --- cuDNN {version} cuda{} (derived by `cudaup manifests update` on {today}) ---", w.major), String::new()];
            block.extend(Doc::block("release", &row));
            // The linux-sbsa build, read the same way from the aarch64 wheel (its own GPU list).
            if let (Some(aw), Some(at)) = (&w.sbsa, &w.sbsa_targets) {
                block.extend(Doc::block("release.build", &[
                    ("platform", lit("linux-sbsa")),
                    ("compute_capabilities", lit_versions(&sm_list(at))),
                    ("wheel", lit(&w.version.to_string())),
                    ("derived", lit(&today.to_string())),
                    ("source", lit(&format!("{} (libcudnn_cnn.so.9 .nv_fatbin: {}; the manylinux aarch64 wheel)", aw.url, at.describe()))),
                ]));
                changes.push(format!("cudnn.toml: + cuDNN {version} cuda{} linux-sbsa ({})", w.major, at.describe()));
            } else if w.sbsa.is_some() {
                notes.push(format!("cuDNN {} cuda{}: the GPU list of its aarch64 wheel was not read, so the row has no linux-sbsa build", w.version, w.major));
            }
            match doc.position("release", "version", &version, false) {
                Some(at) => doc.insert(at, block),
                None => doc.append(block),
            }
            changes.push(format!("cudnn.toml: + cuDNN {version} cuda{} ({}; {})", w.major, targets.describe(), w.wheel.url));
        })?;
    }
    for r in &obs.cudnn {
        for (major, _) in &r.variants {
            let has_row = base
                .cudnn
                .release
                .iter()
                .any(|c| &c.cuda_variant == major && c.version == r.version);
            let has_wheel = obs
                .pypi
                .cudnn
                .iter()
                .any(|w| &w.major == major && w.version.prefix(3) == r.version.to_string());
            if !has_row && !has_wheel {
                notes.push(format!("cuDNN {} cuda{major} ({}): no wheel on the index to read its GPU list from (the tar.xz archives cannot be read in part), so no row was added", r.version, r.url));
            }
        }
    }
    Ok(())
}

fn variant_name(cuda: &Version) -> String {
    format!("cu{}{}", cuda.major(), cuda.minor())
}

fn mm(v: &Version) -> String {
    v.prefix(2)
}

fn variant_row(
    name: &str,
    cuda: &Version,
    targets: &Targets,
    cudnn: Option<&str>,
    tagged: bool,
    today: Date,
    source: String,
) -> Vec<(&'static str, String)> {
    let mut row = vec![
        ("name", lit(name)),
        ("cuda", lit(&mm(cuda))),
        ("arch_list", lit_versions(&sm_list(targets))),
    ];
    if let Some(p) = targets.ptx.iter().max() {
        row.push(("ptx", lit(&p.to_string())));
    }
    if let Some(c) = cudnn {
        row.push(("cudnn", lit(c)));
    }
    if !tagged {
        row.push(("companions_tagged", "false".into()));
    }
    row.push(("derived", lit(&today.to_string())));
    row.push(("source", lit(&source)));
    row
}

fn torch_release(
    t: &mut Texts<'_>,
    base: &Catalog,
    o: &TorchObs,
    obs: &Observations,
    today: Date,
    changes: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Result<(), UpdateError> {
    let known = base.pytorch.release.iter().find(|r| r.version == o.version);
    if let Some(r) = known {
        // Re-read: what the catalog says must still be what the wheel says.
        let default = o.cuda.as_ref().map(variant_name);
        let mut drift = Vec::new();
        if default.is_some() && default != r.pypi_default {
            drift.push(format!(
                "PyPI now serves {} (catalog: {:?})",
                default.clone().unwrap_or_default(),
                r.pypi_default
            ));
        }
        if let (Some(d), Some(pin)) = (&default, &o.cudnn) {
            if let Some(v) = r.variant.iter().find(|v| &v.name == d) {
                if v.cudnn.as_deref() != Some(pin.as_str()) {
                    drift.push(format!("{d} pins cuDNN {pin} (catalog: {:?})", v.cudnn));
                }
            }
        }
        if let Some(p) = o
            .python_min
            .as_ref()
            .filter(|p| mm(p) != r.python_min.prefix(2))
        {
            drift.push(format!("Requires-Python >={p} (catalog: {})", r.python_min));
        }
        if drift.is_empty() {
            return Ok(());
        }
        notes.push(format!(
            "torch {}: the wheel disagrees with the catalog ({}): {}",
            o.version,
            o.metadata_url,
            drift.join("; ")
        ));
        return Ok(());
    }
    let (Some(cuda), Some(targets)) = (&o.cuda, &o.targets) else {
        notes.push(format!(
            "torch {}: its CUDA variant or GPU list could not be read, so no row was added",
            o.version
        ));
        return Ok(());
    };
    let name = variant_name(cuda);
    if o.python_min.is_none() || o.python_max.is_none() {
        notes.push(format!(
            "torch {}: no Requires-Python or Python classifiers, so no row was added",
            o.version
        ));
        return Ok(());
    }
    let tagged = obs
        .torch_index
        .iter()
        .find(|v| v.release == o.version && v.variant == name)
        .and_then(|v| v.companions_tagged)
        .unwrap_or(false);
    let mut row = vec![
        ("version", lit(&o.version.to_string())),
        (
            "python_min",
            lit(&mm(o.python_min.as_ref().expect("checked"))),
        ),
        (
            "python_max",
            lit(&mm(o.python_max.as_ref().expect("checked"))),
        ),
    ];
    if let Some(v) = &o.torchvision {
        row.push(("torchvision", lit(&v.to_string())));
    }
    if let Some(v) = &o.torchaudio {
        row.push(("torchaudio", lit(&v.to_string())));
    }
    row.push(("pypi_default", lit(&name)));
    row.push(("derived", lit(&today.to_string())));
    row.push(("source", lit(&format!(
        "{} (Requires-Python, Python classifiers, the cuda-toolkit / nvidia-cuda-runtime pin that makes PyPI's build {name}; companions: the newest torchvision / torchaudio whose torch requirement admits it)",
        o.metadata_url
    ))));
    let mut block = Doc::block("release", &row);
    block.extend(Doc::block(
        "release.variant",
        &variant_row(
            &name,
            cuda,
            &targets.clone(),
            o.cudnn.as_deref(),
            tagged,
            today,
            format!(
                "{} (torch/lib/libtorch_cuda_linalg.so .nv_fatbin: {}; METADATA pins cuDNN {})",
                o.wheel.url,
                targets.describe(),
                o.cudnn.as_deref().unwrap_or("(none)")
            ),
        ),
    ));
    t.edit("pytorch.toml", |doc| {
        match doc.position("release", "version", &o.version, true) {
            Some(at) => doc.insert(at, block),
            None => doc.append(block),
        }
    })?;
    changes.push(format!(
        "pytorch.toml: + torch {} ({name}: {})",
        o.version,
        targets.describe()
    ));
    Ok(())
}

/// PyPI's Linux aarch64 torch wheel: a `platform = "linux-sbsa"`, `pypi = true` variant under
/// its release (added above in this run, or already catalogued), never a change to the x86_64
/// rows.
fn torch_sbsa(
    t: &mut Texts<'_>,
    base: &Catalog,
    o: &TorchObs,
    today: Date,
    changes: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Result<(), UpdateError> {
    let Some(cuda) = &o.cuda else { return Ok(()) };
    let name = variant_name(cuda);
    let version = o.version.to_string();
    let known = base
        .pytorch
        .release
        .iter()
        .filter(|r| r.version == o.version)
        .flat_map(|r| r.variants_for("linux-sbsa"))
        .find(|v| v.name == name);
    if let Some(v) = known {
        if let (Some(pin), Some(had)) = (&o.cudnn, &v.cudnn) {
            if pin != had {
                notes.push(format!(
                    "torch {version} {name} (linux-sbsa): the aarch64 wheel pins cuDNN {pin} (catalog: {had}) ({})",
                    o.metadata_url
                ));
            }
        }
        return Ok(());
    }
    let Some(targets) = &o.targets else {
        notes.push(format!(
            "torch {version}: the GPU list of PyPI's aarch64 wheel ({name}) could not be read, so no linux-sbsa row was added"
        ));
        return Ok(());
    };
    let mut row = variant_row(
        &name,
        cuda,
        targets,
        o.cudnn.as_deref(),
        true,
        today,
        format!(
            "{} (torch/lib/libtorch_cuda_linalg.so .nv_fatbin: {}; METADATA {} pins cuDNN {}; PyPI's manylinux aarch64 wheel)",
            o.wheel.url,
            targets.describe(),
            o.metadata_url,
            o.cudnn.as_deref().unwrap_or("(none)")
        ),
    );
    row.insert(1, ("platform", lit("linux-sbsa")));
    let at = row.len() - 2;
    row.insert(at, ("pypi", "true".into()));
    let block = Doc::block("release.variant", &row);
    let added = t.edit("pytorch.toml", |doc| {
        let release = doc.find("release", "version", &version)?;
        let at = doc.end_with_children(release, "release.variant");
        let mut block = block;
        block.insert(0, String::new());
        block.pop();
        doc.insert(at, block);
        Some(())
    })?;
    match added {
        Some(()) => changes.push(format!(
            "pytorch.toml: + torch {version} {name} linux-sbsa ({})",
            targets.describe()
        )),
        None => notes.push(format!(
            "torch {version}: PyPI's aarch64 wheel is {name}, but the release has no row to put it under"
        )),
    }
    Ok(())
}

fn torch_variant(
    t: &mut Texts<'_>,
    base: &Catalog,
    v: &VariantObs,
    today: Date,
    changes: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Result<(), UpdateError> {
    let Some(release) = base.pytorch.release.iter().find(|r| r.version == v.release) else {
        return Ok(());
    };
    let Some(cuda) = v
        .variant
        .strip_prefix("cu")
        .filter(|d| d.len() >= 3)
        .and_then(|d| Version::parse(&format!("{}.{}", &d[..d.len() - 1], &d[d.len() - 1..])))
    else {
        return Ok(());
    };
    let version = v.release.to_string();
    t.edit("pytorch.toml", |doc| {
        let Some(row) = doc.find("release", "version", &version) else {
            return;
        };
        if v.known {
            let Some(tagged) = v.companions_tagged else { return };
            let cur = release.variant.iter().find(|x| x.name == v.variant);
            if cur.is_some_and(|c| c.companions_tagged != tagged) {
                let end = doc.end_with_children(row, "release.variant");
                let span = doc
                    .rows("release.variant")
                    .into_iter()
                    .filter(|s| s.start > row.start && s.start < end)
                    .find(|s| doc.string(*s, "name").as_deref() == Some(v.variant.as_str()));
                if let Some(s) = span {
                    doc.set(s, "companions_tagged", if tagged { "true" } else { "false" });
                    doc.set(s, "derived", &lit(&today.to_string()));
                    append_source(doc, s, &v.page);
                    changes.push(format!("pytorch.toml: torch {version} {}: companions_tagged = {tagged} ({})", v.variant, v.page));
                }
            }
            return;
        }
        let Some(targets) = &v.targets else {
            notes.push(format!("torch {version} {}: on the index, but its GPU list was not read, so no row was added", v.variant));
            return;
        };
        let end = doc.end_with_children(row, "release.variant");
        let mut block = vec![String::new()];
        block.extend(Doc::block("release.variant", &variant_row(
            &v.variant,
            &cuda,
            targets,
            v.cudnn.as_deref(),
            v.companions_tagged.unwrap_or(false),
            today,
            format!("{} (torch/lib/libtorch_cuda_linalg.so .nv_fatbin: {}; METADATA {} pins cuDNN {})", v.wheel.url, targets.describe(), v.metadata_url.as_deref().unwrap_or("-"), v.cudnn.as_deref().unwrap_or("(none)")),
        )));
        block.pop();
        doc.insert(end, block);
        changes.push(format!("pytorch.toml: + torch {version} {} ({}; {})", v.variant, targets.describe(), v.page));
    })?;
    Ok(())
}

fn tensorflow(
    t: &mut Texts<'_>,
    base: &Catalog,
    o: &TfObs,
    today: Date,
    changes: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Result<(), UpdateError> {
    let reqs: Vec<Requirement> = o
        .and_cuda
        .iter()
        .filter_map(|r| Requirement::parse(r))
        .collect();
    let version = o.version.to_string();
    if let Some(_row) = base
        .tensorflow
        .release
        .iter()
        .find(|r| r.version == o.version)
    {
        if reqs.is_empty() {
            return Ok(());
        }
        t.edit("tensorflow.toml", |doc| {
            if let Some(span) = doc.find("release", "version", &version) {
                doc.set(span, "and_cuda_requires", &lit_strings(&o.and_cuda));
                doc.set(span, "derived", &lit(&today.to_string()));
                append_source(doc, span, &o.metadata_url);
                changes.push(format!(
                    "tensorflow.toml: TensorFlow {version}: and-cuda extra from its METADATA"
                ));
            }
        })?;
        return Ok(());
    }
    let floor_of = |prefix: &str| {
        reqs.iter()
            .find(|r| r.name.starts_with(prefix))
            .and_then(|r| r.spec.floor())
            .map(mm)
    };
    let (Some(cuda), Some(cudnn), Some(py_min), Some(py_max)) = (
        floor_of("nvidia-cuda-runtime-cu"),
        floor_of("nvidia-cudnn-cu"),
        o.python_min.as_ref(),
        o.python_max.as_ref(),
    ) else {
        notes.push(format!("TensorFlow {version}: no and-cuda extra with a CUDA runtime and cuDNN, or no Python range, so no row was added"));
        return Ok(());
    };
    let row = vec![
        ("version", lit(&version)),
        ("python_min", lit(&mm(py_min))),
        ("python_max", lit(&mm(py_max))),
        ("cuda", lit(&cuda)),
        ("cudnn", lit(&cudnn)),
        ("and_cuda", "true".to_owned()),
        ("windows_native_gpu", "false".to_owned()),
        ("and_cuda_requires", lit_strings(&o.and_cuda)),
        ("derived", lit(&today.to_string())),
        ("source", lit(&format!(
            "{} (Requires-Python, Python classifiers; CUDA and cuDNN: the and-cuda extra's nvidia-cuda-runtime-cu12 and nvidia-cudnn-cu12 requirements; native Windows GPU builds ended with 2.10: https://www.tensorflow.org/install/pip)",
            o.metadata_url
        ))),
    ];
    t.edit("tensorflow.toml", |doc| {
        let block = Doc::block("release", &row);
        match doc.position("release", "version", &o.version, true) {
            Some(at) => doc.insert(at, block),
            None => doc.append(block),
        }
    })?;
    changes.push(format!(
        "tensorflow.toml: + TensorFlow {version} (CUDA {cuda}, cuDNN {cudnn}, {})",
        o.metadata_url
    ));
    Ok(())
}

/// Rewrites catalog.toml in place: how each part went, and the catalog's date (today when every
/// part was read, else the base catalog's: a stale part keeps the whole catalog's age honest).
/// A run that changed no row keeps the origin and the byte counts of the run that made the rows,
/// so an update run twice writes nothing the second time.
pub fn stamp(
    base: &Catalog,
    files: &mut BTreeMap<String, String>,
    report: &[PartReport],
    today: Date,
    complete: bool,
    changed: bool,
) -> Result<(), UpdateError> {
    let parts = parts_after(&base.meta.part, report, today);
    let date = if complete {
        today
    } else {
        std::cmp::min(base.meta.date, today)
    };
    let origin = format!(
        "`cudaup manifests update` on {today} over the {} catalog ({})",
        base.origin,
        report
            .iter()
            .map(|p| format!("{}: {}", p.name, p.status.split(':').next().unwrap_or("")))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut t = Texts { files };
    t.edit("catalog.toml", |doc| {
        doc.set_top("date", &lit(&date.to_string()));
        if changed {
            doc.set_top("origin", &lit(&origin));
        }
        for p in &parts {
            let Some(row) = doc.find("part", "name", &p.name) else {
                continue;
            };
            doc.set(row, "url", &lit(&p.url));
            if let Some(r) = p.read {
                doc.set(row, "read", &lit(&r.to_string()));
            }
            doc.set(row, "status", &lit(&p.status));
            if changed {
                doc.set(row, "bytes", &p.bytes.to_string());
            }
        }
    })?;
    Ok(())
}
