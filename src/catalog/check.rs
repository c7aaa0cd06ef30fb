//! `cudaup manifests check`: schema, cross-references and sources of a catalog, reported with
//! file:line so a maintainer can jump to each problem.

use std::fmt;
use std::path::PathBuf;

use serde::de::DeserializeOwned;

use super::{
    describe_toml_error, line_col, BenchManifest, Catalog, ComponentsManifest, CudaManifest,
    CudnnManifest, DriverManifest, GpuTable, PytorchManifest, Source, TensorflowManifest,
    TensorrtManifest, EMBEDDED,
};
use crate::version::Version;

/// One problem in a catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The manifest file.
    pub file: PathBuf,
    /// One-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// The text of each manifest, and where it came from.
struct Texts {
    base: PathBuf,
    files: Vec<(String, String)>,
}

impl Texts {
    fn read(source: &Source) -> (Self, Vec<Problem>) {
        let mut problems = Vec::new();
        let base = match source {
            Source::Embedded => PathBuf::from("<embedded>/manifests"),
            Source::Dir(d) => d.clone(),
        };
        let files = EMBEDDED
            .iter()
            .filter_map(|(name, embedded)| match source {
                Source::Embedded => Some(((*name).to_owned(), (*embedded).to_owned())),
                Source::Dir(d) => match fs_err::read_to_string(d.join(name)) {
                    Ok(t) => Some(((*name).to_owned(), t)),
                    Err(e) => {
                        problems.push(Problem {
                            file: d.join(name),
                            line: None,
                            message: format!("cannot read it: {}", e.kind()),
                        });
                        None
                    }
                },
            })
            .collect();
        (Self { base, files }, problems)
    }

    fn text(&self, name: &str) -> &str {
        self.files
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, t)| t.as_str())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.base.join(name)
    }

    /// A problem located at the first line of `name` containing `needle` (a row's key value).
    fn at(&self, name: &str, needle: &str, message: String) -> Problem {
        let text = self.text(name);
        let line = text.find(needle).map(|off| line_col(text, off).0);
        Problem {
            file: self.path(name),
            line,
            message,
        }
    }

    fn parse<T: DeserializeOwned>(&self, name: &str, problems: &mut Vec<Problem>) -> Option<T> {
        let text = self.text(name);
        match toml::from_str::<T>(text) {
            Ok(v) => Some(v),
            Err(e) => {
                let line = e.span().map(|s| line_col(text, s.start).0);
                problems.push(Problem {
                    file: self.path(name),
                    line,
                    message: describe_toml_error(text, &e)
                        .split_once(": ")
                        .map_or_else(|| e.message().to_owned(), |(_, m)| m.to_owned()),
                });
                None
            }
        }
    }
}

/// Validates the catalog at `source`; an empty list means it is sound.
pub fn check(source: &Source) -> Vec<Problem> {
    let (texts, mut problems) = Texts::read(source);
    if !problems.is_empty() {
        return problems;
    }
    let gpus: Option<GpuTable> = texts.parse("gpus.toml", &mut problems);
    let cuda: Option<CudaManifest> = texts.parse("cuda.toml", &mut problems);
    let drivers: Option<DriverManifest> = texts.parse("drivers.toml", &mut problems);
    let cudnn: Option<CudnnManifest> = texts.parse("cudnn.toml", &mut problems);
    let pytorch: Option<PytorchManifest> = texts.parse("pytorch.toml", &mut problems);
    let tensorflow: Option<TensorflowManifest> = texts.parse("tensorflow.toml", &mut problems);
    let components: Option<ComponentsManifest> = texts.parse("components.toml", &mut problems);
    let bench: Option<BenchManifest> = texts.parse("bench.toml", &mut problems);
    let tensorrt: Option<TensorrtManifest> = texts.parse("tensorrt.toml", &mut problems);
    let (
        Some(gpus),
        Some(cuda),
        Some(drivers),
        Some(cudnn),
        Some(pytorch),
        Some(tensorflow),
        Some(components),
        Some(bench),
        Some(tensorrt),
    ) = (
        gpus, cuda, drivers, cudnn, pytorch, tensorflow, components, bench, tensorrt,
    )
    else {
        return problems;
    };
    let catalog = Catalog {
        gpus,
        cuda,
        drivers,
        cudnn,
        pytorch,
        tensorflow,
        components,
        bench,
        tensorrt,
    };
    cross_check(&catalog, &texts, &mut problems);
    sources_check(&texts, &mut problems);
    problems
}

/// Every `source = "…"` names something a reader can follow: a URL or a repository path.
fn sources_check(texts: &Texts, problems: &mut Vec<Problem>) {
    for (name, text) in &texts.files {
        let mut in_row = false;
        let mut row_line = 0;
        let mut has_source = false;
        let close_row =
            |in_row: bool, has_source: bool, line: usize, problems: &mut Vec<Problem>| {
                if in_row && !has_source {
                    problems.push(Problem {
                        file: texts.path(name),
                        line: Some(line),
                        message: "row has no `source`".into(),
                    });
                }
            };
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            if l.starts_with("[[") {
                close_row(in_row, has_source, row_line, problems);
                in_row = true;
                row_line = i + 1;
                has_source = false;
            } else if let Some(v) = l.strip_prefix("source") {
                has_source = true;
                let v = v.trim_start_matches([' ', '=']).trim_matches('"');
                if !(v.contains("http") || v.contains('/')) {
                    problems.push(Problem {
                        file: texts.path(name),
                        line: Some(i + 1),
                        message: format!("source `{v}` names no URL or repository path"),
                    });
                }
            }
        }
        close_row(in_row, has_source, row_line, problems);
    }
}

fn cross_check(c: &Catalog, t: &Texts, problems: &mut Vec<Problem>) {
    for (needle, msg) in c.components.problems() {
        problems.push(t.at("components.toml", &needle, msg));
    }
    let mut p = |name: &str, needle: &str, msg: String| problems.push(t.at(name, needle, msg));
    for (needle, msg) in c.bench.problems() {
        p("bench.toml", &needle, msg);
    }
    let majors: Vec<u32> = c.cuda.major.iter().map(|m| m.major).collect();
    for (needle, msg) in c.tensorrt.problems(&majors) {
        p("tensorrt.toml", &needle, msg);
    }

    for d in &c.gpus.device {
        if c.gpus.chip(&d.chip).is_none() {
            p(
                "gpus.toml",
                &d.pci_id,
                format!("{} names unknown chip `{}`", d.pci_id, d.chip),
            );
        }
    }
    let architectures: Vec<&str> = c
        .gpus
        .chip
        .iter()
        .map(|c| c.architecture.as_str())
        .collect();

    let series_known = |v: &Version| {
        c.cuda
            .series
            .iter()
            .any(|s| s.version.prefix(2) == v.prefix(2))
    };
    let release_known = |v: &Version| {
        c.cuda
            .release
            .iter()
            .any(|r| r.version.prefix(2) == v.prefix(2))
    };
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
    }
    for s in &c.cuda.series {
        if s.sm_min > s.sm_max {
            p(
                "cuda.toml",
                &format!("version = \"{}\"", s.version),
                format!("series {}: sm_min above sm_max", s.version),
            );
        }
        if !release_known(&s.version) {
            p(
                "cuda.toml",
                &format!("version = \"{}\"", s.version),
                format!("series {} has no [[release]]", s.version),
            );
        }
    }

    for a in &c.drivers.architecture {
        if !architectures.contains(&a.name.as_str()) {
            p(
                "drivers.toml",
                &format!("name = \"{}\"", a.name),
                format!("architecture `{}` is not in gpus.toml", a.name),
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

    for r in &c.cudnn.release {
        let needle = format!("version = \"{}\"", r.version);
        if r.cuda_variant != r.cuda_min.major().to_string()
            || r.cuda_min.major() != r.cuda_max.major()
        {
            p(
                "cudnn.toml",
                &needle,
                format!(
                    "cuDNN {} variant {} disagrees with its CUDA range {}..{}",
                    r.version, r.cuda_variant, r.cuda_min, r.cuda_max
                ),
            );
        }
        for v in [&r.cuda_min, &r.cuda_max] {
            if !release_known(v) {
                p(
                    "cudnn.toml",
                    &needle,
                    format!("cuDNN {}: CUDA {v} is not in cuda.toml", r.version),
                );
            }
        }
    }

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
        for v in &r.variant {
            let expected = format!("cu{}{}", v.cuda.major(), v.cuda.minor());
            if v.name != expected {
                p(
                    "pytorch.toml",
                    &format!("name = \"{}\"", v.name),
                    format!(
                        "torch {} variant `{}` should be named `{expected}` for CUDA {}",
                        r.version, v.name, v.cuda
                    ),
                );
            }
            if !release_known(&v.cuda) {
                p(
                    "pytorch.toml",
                    &format!("name = \"{}\"", v.name),
                    format!(
                        "torch {} {}: CUDA {} is not in cuda.toml",
                        r.version, v.name, v.cuda
                    ),
                );
            }
            if v.arch_list.is_empty() {
                p(
                    "pytorch.toml",
                    &format!("name = \"{}\"", v.name),
                    format!("torch {} {}: empty arch_list", r.version, v.name),
                );
            }
        }
    }
    for r in &c.tensorflow.release {
        if !series_known(&r.cuda) && !release_known(&r.cuda) {
            p(
                "tensorflow.toml",
                &format!("version = \"{}\"", r.version),
                format!(
                    "TensorFlow {}: CUDA {} is not in cuda.toml",
                    r.version, r.cuda
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_catalog_passes() {
        let problems = check(&Source::Embedded);
        assert!(
            problems.is_empty(),
            "{}",
            problems
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }

    #[test]
    fn problems_carry_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in EMBEDDED {
            fs_err::write(dir.path().join(name), text).unwrap();
        }
        let tf = dir.path().join("tensorflow.toml");
        let text = fs_err::read_to_string(&tf).unwrap();
        // A release that points at a CUDA cudaup does not know, and a row without a source.
        let broken = text.replacen("cuda = \"12.5\"", "cuda = \"12.7\"", 1)
            + "\n[[release]]\nversion = \"9.9.9\"\npython_min = \"3.10\"\npython_max = \"3.12\"\ncuda = \"12.5\"\ncudnn = \"9.3\"\nand_cuda = true\nwindows_native_gpu = false\nsource = \"my memory\"\n";
        fs_err::write(&tf, broken).unwrap();
        let problems = check(&Source::Dir(dir.path().into()));
        let text: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        assert!(
            text.iter()
                .any(|p| p.contains("tensorflow.toml:")
                    && p.contains("CUDA 12.7 is not in cuda.toml")),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|p| p.contains("source `my memory` names no URL")),
            "{text:?}"
        );
        assert!(problems.iter().all(|p| p.line.is_some()), "{text:?}");
    }

    #[test]
    fn schema_errors_name_line() {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in EMBEDDED {
            fs_err::write(dir.path().join(name), text).unwrap();
        }
        fs_err::write(
            dir.path().join("cudnn.toml"),
            "schema_version = 1\n\n[[release]]\nversion = \"9.1.0\"\ncolour = \"blue\"\n",
        )
        .unwrap();
        let problems = check(&Source::Dir(dir.path().into()));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].line, Some(5), "{problems:?}");
        assert!(problems[0].message.contains("colour"), "{problems:?}");
    }
}
