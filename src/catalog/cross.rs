//! The cross-references `manifests check` verifies between rows and files. Each finding names
//! the file and a needle (the row's key) that `check` turns into a line number.

use super::{Catalog, Requirement};
use crate::model::version::Version;

/// Reports a problem: file, a needle locating the row, the message.
pub(super) type Report<'a> = dyn FnMut(&str, &str, String) + 'a;

const KINDS: &[&str] = &["production", "new-feature", "lts", "unknown"];

pub(super) fn check(c: &Catalog, p: &mut Report<'_>) {
    gpus(c, p);
    cuda(c, p);
    drivers(c, p);
    driver_support(c, p);
    cudnn(c, p);
    pytorch(c, p);
    tensorflow(c, p);
    requires_python(c, p);
    meta(c, p);
}

/// Every Requires-Python row is of a release the catalog plans (a torch row's companion, a
/// TensorFlow row): a row of nothing would never apply.
fn requires_python(c: &Catalog, p: &mut Report<'_>) {
    let named = |package: &str, v: &Version| match package {
        "tensorflow" => c.tensorflow.release.iter().any(|r| r.version == *v),
        "torchvision" => c
            .pytorch
            .release
            .iter()
            .any(|r| r.torchvision.as_deref().and_then(Version::parse).as_ref() == Some(v)),
        "torchaudio" => c
            .pytorch
            .release
            .iter()
            .any(|r| r.torchaudio.as_deref().and_then(Version::parse).as_ref() == Some(v)),
        _ => false,
    };
    for l in c.pytorch.last_line.iter().filter(|l| {
        !c.pytorch
            .release
            .iter()
            .any(|r| r.version.prefix(2) == l.torch.prefix(2))
    }) {
        p(
            "pytorch.toml",
            &l.source,
            format!(
                "[[last_line]] torch {}: no release of that line in the catalog",
                l.torch
            ),
        );
    }
    for (file, rows) in [
        ("pytorch.toml", &c.pytorch.requires_python),
        ("tensorflow.toml", &c.tensorflow.requires_python),
    ] {
        for r in rows.iter().filter(|r| !named(&r.package, &r.version)) {
            p(
                file,
                &r.source,
                format!(
                    "Requires-Python row of {} {}: no release in the catalog installs it",
                    r.package, r.version
                ),
            );
        }
    }
}

fn release_known(c: &Catalog, v: &Version) -> bool {
    c.cuda
        .release
        .iter()
        .any(|r| r.version.prefix(2) == v.prefix(2))
}

fn gpus(c: &Catalog, p: &mut Report<'_>) {
    for d in &c.gpus.device {
        if c.gpus.chip(&d.chip).is_none() {
            p(
                "gpus.toml",
                &d.pci_id,
                format!("{} names unknown chip `{}`", d.pci_id, d.chip),
            );
        }
    }
}

fn cuda(c: &Catalog, p: &mut Report<'_>) {
    let mut seen = Vec::new();
    for r in &c.cuda.release {
        let needle = format!("version = \"{}\"", r.version);
        if seen.contains(&r.version) {
            p(
                "cuda.toml",
                &needle,
                format!("release {} is listed twice", r.version),
            );
        }
        seen.push(r.version.clone());
        if !c.cuda.major.iter().any(|m| m.major == r.version.major()) {
            p(
                "cuda.toml",
                &needle,
                format!("release {} has no [[major]] floor", r.version),
            );
        }
        if let Some(b) = r.recommended_branch {
            if c.drivers.branch(b).is_none() {
                p(
                    "cuda.toml",
                    &needle,
                    format!(
                        "release {}: recommended branch {b} is not in drivers.toml",
                        r.version
                    ),
                );
            }
        }
        if let Some(d) = &r.native_driver_linux {
            // The bundled driver already says where native support starts; a second floor
            // could only contradict it.
            if r.driver_linux.is_some() {
                p(
                    "cuda.toml",
                    &needle,
                    format!(
                        "release {}: native_driver_linux beside a bundled driver_linux",
                        r.version
                    ),
                );
            }
            if c.drivers.branch(d.major()).is_none() {
                p(
                    "cuda.toml",
                    &needle,
                    format!(
                        "release {}: native driver {d} is of a branch drivers.toml does not have",
                        r.version
                    ),
                );
            }
        }
    }
    for s in &c.cuda.series {
        let needle = format!("version = \"{}\"", s.version);
        if s.sm_min > s.sm_max {
            p(
                "cuda.toml",
                &needle,
                format!("series {}: sm_min above sm_max", s.version),
            );
        }
        if !release_known(c, &s.version) {
            p(
                "cuda.toml",
                &needle,
                format!("series {} has no [[release]]", s.version),
            );
        }
        series_targets(s, &needle, p);
        plausible_targets(c, s, &needle, p);
    }
}

/// A compiler's target list read from a mirror is outside input: `lto_9999` in a hostile ptxas
/// table once became `sm_max = "999.9"` and passed. A target is plausible when its minor is a
/// digit and its major is at most two generations past the newest GPU the catalog knows (NVIDIA's
/// compilers list targets a generation ahead of the boards, never more; cc 12.x GPUs today).
fn plausible_targets(c: &Catalog, s: &super::cuda::CudaSeries, needle: &str, p: &mut Report<'_>) {
    let newest = c
        .gpus
        .chip
        .iter()
        .filter_map(|chip| Version::parse(&chip.compute_capability))
        .map(|v| v.major())
        .max()
        .unwrap_or(0);
    let minor = |v: &Version| {
        v.prefix(2)
            .rsplit('.')
            .next()
            .and_then(|m| m.parse::<u32>().ok())
    };
    let bad: Vec<String> = std::iter::once(&s.sm_min)
        .chain(std::iter::once(&s.sm_max))
        .chain(s.sass.iter())
        .filter(|v| v.major() == 0 || v.major() > newest + 2 || minor(v).is_none_or(|m| m > 9))
        .map(|v| v.to_string())
        .collect();
    if !bad.is_empty() {
        p(
            "cuda.toml",
            needle,
            format!(
                "series {}: target(s) {} are no compute capability a GPU has or will soon have (the newest GPU in gpus.toml is {newest}.x): a compiler table read from a mirror is not trusted past that",
                s.version,
                bad.join(", ")
            ),
        );
    }
}

/// A series' targets must be its compiler's: from the first series NVIDIA ships a compiler wheel
/// for, a row without the compiler's list is a claim nothing confirms.
fn series_targets(s: &super::cuda::CudaSeries, needle: &str, p: &mut Report<'_>) {
    if s.needs_compiler() && (s.sass.is_empty() || s.compiler.is_none()) {
        p(
            "cuda.toml",
            needle,
            format!(
                "series {}: no compiler confirms its targets (it needs `sass` and `compiler`, read by `cudaup manifests update` from the series' nvcc wheel)",
                s.version
            ),
        );
    }
    if s.sass.is_empty() {
        return;
    }
    if s.sass.first() != Some(&s.sm_min) || s.sass.last() != Some(&s.sm_max) {
        p(
            "cuda.toml",
            needle,
            format!(
                "series {}: sm_min..sm_max ({}..{}) is not the range of its compiler's list",
                s.version, s.sm_min, s.sm_max
            ),
        );
    }
    if s.sass.windows(2).any(|w| w[0] >= w[1]) {
        p(
            "cuda.toml",
            needle,
            format!("series {}: `sass` is not sorted or repeats", s.version),
        );
    }
    if let Some(x) = s.sm_excluded.iter().find(|x| s.sass.contains(x)) {
        p(
            "cuda.toml",
            needle,
            format!(
                "series {}: {x} is both excluded and in the compiler's list",
                s.version
            ),
        );
    }
}

fn drivers(c: &Catalog, p: &mut Report<'_>) {
    let architectures: Vec<&str> = c
        .gpus
        .chip
        .iter()
        .map(|c| c.architecture.as_str())
        .collect();
    for a in &c.drivers.architecture {
        if !architectures.contains(&a.name.as_str()) && a.compute_capabilities.is_empty() {
            p(
                "drivers.toml",
                &format!("name = \"{}\"", a.name),
                format!(
                    "architecture `{}` is not in gpus.toml and lists no compute_capabilities",
                    a.name
                ),
            );
        }
    }
    for pkg in &c.drivers.package {
        const METHODS: &[&str] = &[
            "apt",
            "dnf",
            "dnf-module",
            "pacman",
            "runfile",
            "windows-installer",
        ];
        if !METHODS.contains(&pkg.method.as_str()) {
            p(
                "drivers.toml",
                &format!("method = \"{}\"", pkg.method),
                format!("unknown method `{}`", pkg.method),
            );
        }
    }
    for b in &c.drivers.branch {
        let needle = format!("branch = {}", b.branch);
        if !KINDS.contains(&b.kind.as_str()) {
            p(
                "drivers.toml",
                &needle,
                format!("branch {}: unknown kind `{}`", b.branch, b.kind),
            );
        }
        if let Some(l) = b.latest.as_ref().filter(|l| l.major() != b.branch) {
            p(
                "drivers.toml",
                &needle,
                format!(
                    "branch {}: latest {l} is not a {} release",
                    b.branch, b.branch
                ),
            );
        }
        if b.open_only {
            let proprietary = c.drivers.package.iter().find(|r| {
                r.proprietary.is_some()
                    && r.min_branch.is_none_or(|m| b.branch >= m)
                    && r.max_branch.is_none_or(|m| b.branch <= m)
                    && r.method != "windows-installer"
            });
            if let Some(r) = proprietary {
                p(
                    "drivers.toml",
                    &needle,
                    format!(
                        "branch {} ships only open modules, but the {:?} package row offers a proprietary flavor",
                        b.branch, r.distros
                    ),
                );
            }
        }
    }
    for f in &c.drivers.floor {
        if f.compute_capability.is_none() && f.gpu.is_none()
            || f.min_branch.is_none()
                && f.min_version.is_none()
                && f.min_versions.is_empty()
                && f.open_module.is_none()
        {
            p(
                "drivers.toml",
                &f.source,
                "a [[floor]] needs a GPU (compute_capability or gpu) and a floor (min_branch, min_version or open_module)".into(),
            );
        }
    }
    for pref in &c.drivers.preference {
        for k in pref.kinds.iter().filter(|k| !KINDS.contains(&k.as_str())) {
            p(
                "drivers.toml",
                &format!("class = \"{}\"", pref.class),
                format!("preference `{}`: unknown kind `{k}`", pref.class),
            );
        }
    }
}

/// driver_support.toml: every run names releases whose tables were read, and no driver floor of
/// drivers.toml lets through a read release that does not list a GPU the floor covers.
fn driver_support(c: &Catalog, p: &mut Report<'_>) {
    let t = &c.driver_support;
    let read: Vec<&Version> = t.release.iter().map(|r| &r.version).collect();
    if read.windows(2).any(|w| w[0] >= w[1]) || read.iter().any(|v| v.parts().len() < 2) {
        p(
            "driver_support.toml",
            "[[release]]",
            "the [[release]] rows must be distinct driver releases, oldest first".into(),
        );
    }
    let mut seen = std::collections::BTreeSet::new();
    for g in &t.gpu {
        let needle = format!("pci_id = \"{}\"", g.pci_id);
        let id_ok = g.pci_id.len() == 9
            && g.pci_id.starts_with("10de:")
            && g.pci_id[5..]
                .chars()
                .all(|ch| ch.is_ascii_hexdigit() && !ch.is_ascii_uppercase());
        if !id_ok || !seen.insert(g.pci_id.as_str()) {
            p(
                "driver_support.toml",
                &needle,
                format!("`{}` is not a distinct lower-case NVIDIA PCI id", g.pci_id),
            );
        }
        for run in &g.listed {
            let ends_read = super::parse_run(run)
                .is_some_and(|(a, b)| read.contains(&&a) && read.contains(&&b));
            if !ends_read {
                p(
                    "driver_support.toml",
                    &needle,
                    format!(
                        "{}: run `{run}` is not `first..last` of releases in [[release]]",
                        g.pci_id
                    ),
                );
            }
        }
    }
    for f in
        c.drivers.floor.iter().filter(|f| {
            f.min_branch.is_some() || f.min_version.is_some() || !f.min_versions.is_empty()
        })
    {
        for g in &t.gpu {
            let cc = c
                .gpus
                .lookup(&g.pci_id)
                .and_then(|k| Version::parse(k.compute_capability));
            let applies = match (&f.compute_capability, &cc) {
                (Some(_), None) => false,
                (_, Some(cc)) => f.applies(&g.name, cc),
                (None, None) => f.applies(&g.name, &Version::parse("0.0").expect("literal")),
            };
            if !applies {
                continue;
            }
            for branch in t.branches() {
                let Some(from) = f.allows_from(branch) else {
                    continue;
                };
                // The oldest read release of the branch the floor lets through.
                let Some(r0) = read
                    .iter()
                    .filter(|r| r.major() == branch && **r >= &from)
                    .min()
                else {
                    continue;
                };
                let first = t.first_in_branch(&[g], branch);
                if first.as_ref().is_none_or(|f1| *r0 < f1) {
                    p(
                        "drivers.toml",
                        &f.source,
                        format!(
                            "the floor for {} lets driver {r0} through, but NVIDIA's table for {r0} does not list {} ({}){}",
                            f.gpu.clone().or(f.compute_capability.as_ref().map(|c| format!("compute capability {c}"))).unwrap_or_default(),
                            g.name,
                            g.pci_id,
                            match first {
                                Some(f1) => format!("; branch {branch} lists it from {f1}"),
                                None => format!("; no release of branch {branch} read lists it"),
                            }
                        ),
                    );
                }
            }
        }
    }
}

fn cudnn(c: &Catalog, p: &mut Report<'_>) {
    for r in &c.cudnn.release {
        let needle = format!("version = \"{}\"", r.version);
        let majors: Vec<u32> = r.cuda.clauses.iter().map(|c| c.version.major()).collect();
        let floor = r.cuda.floor();
        let agrees = floor.is_some_and(|f| f.major().to_string() == r.cuda_variant)
            && majors.iter().all(|m| {
                m.to_string() == r.cuda_variant || *m == floor.map_or(0, |f| f.major() + 1)
            });
        if !agrees {
            p(
                "cudnn.toml",
                &needle,
                format!(
                    "cuDNN {} variant {} disagrees with its CUDA range `{}` (it needs a floor in CUDA {} and no bound past the next major)",
                    r.version, r.cuda_variant, r.cuda, r.cuda_variant
                ),
            );
        }
        if let Some(f) = floor.filter(|f| !release_known(c, f)) {
            p(
                "cudnn.toml",
                &needle,
                format!("cuDNN {}: CUDA {f} is not in cuda.toml", r.version),
            );
        }
        if r.driver_linux.is_none()
            && !c
                .cuda
                .major
                .iter()
                .any(|m| m.major.to_string() == r.cuda_variant)
        {
            p(
                "cudnn.toml",
                &needle,
                format!(
                    "cuDNN {}: no driver_linux and no CUDA {} [[major]] floor to fall back on",
                    r.version, r.cuda_variant
                ),
            );
        }
        if r.compute_capabilities.is_empty() {
            p(
                "cudnn.toml",
                &needle,
                format!("cuDNN {}: no compute capabilities", r.version),
            );
        }
    }
}

fn pytorch(c: &Catalog, p: &mut Report<'_>) {
    let mut seen = Vec::new();
    for r in &c.pytorch.release {
        let needle = format!("version = \"{}\"", r.version);
        if seen.contains(&r.version) {
            p(
                "pytorch.toml",
                &needle,
                format!("torch {} is listed twice", r.version),
            );
        }
        seen.push(r.version.clone());
        if r.python_min > r.python_max {
            p(
                "pytorch.toml",
                &needle,
                format!("torch {}: python_min above python_max", r.version),
            );
        }
        if let Some(d) = &r.pypi_default {
            if d != "cpu" && !r.variant.iter().any(|v| &v.name == d) {
                p(
                    "pytorch.toml",
                    &needle,
                    format!(
                        "torch {}: pypi_default `{d}` is not one of its variants",
                        r.version
                    ),
                );
            }
        }
        let mut keys = Vec::new();
        for v in &r.variant {
            let vneedle = format!("name = \"{}\"", v.name);
            let key = (v.name.as_str(), v.platform.as_str());
            if keys.contains(&key) {
                p(
                    "pytorch.toml",
                    &vneedle,
                    format!(
                        "torch {} {} ({}) is listed twice",
                        r.version, v.name, v.platform
                    ),
                );
            }
            keys.push(key);
            let expected = format!("cu{}{}", v.cuda.major(), v.cuda.minor());
            if v.name != expected {
                p(
                    "pytorch.toml",
                    &vneedle,
                    format!(
                        "torch {} variant `{}` should be named `{expected}` for CUDA {}",
                        r.version, v.name, v.cuda
                    ),
                );
            }
            if !release_known(c, &v.cuda) {
                p(
                    "pytorch.toml",
                    &vneedle,
                    format!(
                        "torch {} {}: CUDA {} is not in cuda.toml",
                        r.version, v.name, v.cuda
                    ),
                );
            }
            if v.arch_list.is_empty() {
                p(
                    "pytorch.toml",
                    &vneedle,
                    format!("torch {} {}: empty arch_list", r.version, v.name),
                );
            }
        }
    }
}

fn tensorflow(c: &Catalog, p: &mut Report<'_>) {
    let series_known = |v: &Version| {
        c.cuda
            .series
            .iter()
            .any(|s| s.version.prefix(2) == v.prefix(2))
    };
    for r in &c.tensorflow.release {
        let needle = format!("version = \"{}\"", r.version);
        if !series_known(&r.cuda) && !release_known(c, &r.cuda) {
            p(
                "tensorflow.toml",
                &needle,
                format!(
                    "TensorFlow {}: CUDA {} is not in cuda.toml",
                    r.version, r.cuda
                ),
            );
        }
        for req in &r.and_cuda_requires {
            if Requirement::parse(req).is_none() {
                p(
                    "tensorflow.toml",
                    &needle,
                    format!("TensorFlow {}: `{req}` is not a requirement", r.version),
                );
            }
        }
    }
}

fn meta(c: &Catalog, p: &mut Report<'_>) {
    for part in &c.meta.part {
        if !part.url.contains("://") && !part.url.starts_with('/') {
            p(
                "catalog.toml",
                &format!("name = \"{}\"", part.name),
                format!("part `{}`: url `{}` is not a URL", part.name, part.url),
            );
        }
    }
}
