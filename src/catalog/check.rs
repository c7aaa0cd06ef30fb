//! `cudaup manifests check`: schema, cross-references and sources of a catalog, reported with
//! file:line so a maintainer can jump to each problem.

use std::fmt;
use std::path::PathBuf;

use serde::de::DeserializeOwned;

use super::{
    describe_toml_error, line_col, BenchManifest, Catalog, CatalogMeta, ComponentsManifest,
    CudaManifest, CudnnManifest, DriverManifest, DriverSupport, GpuTable, JaxManifest,
    JetsonManifest, PytorchManifest, Source, TensorflowManifest, TensorrtManifest, EMBEDDED,
};

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
    let driver_support: Option<DriverSupport> = texts.parse("driver_support.toml", &mut problems);
    let cudnn: Option<CudnnManifest> = texts.parse("cudnn.toml", &mut problems);
    let pytorch: Option<PytorchManifest> = texts.parse("pytorch.toml", &mut problems);
    let tensorflow: Option<TensorflowManifest> = texts.parse("tensorflow.toml", &mut problems);
    let jax: Option<JaxManifest> = texts.parse("jax.toml", &mut problems);
    let components: Option<ComponentsManifest> = texts.parse("components.toml", &mut problems);
    let bench: Option<BenchManifest> = texts.parse("bench.toml", &mut problems);
    let tensorrt: Option<TensorrtManifest> = texts.parse("tensorrt.toml", &mut problems);
    let jetson: Option<JetsonManifest> = texts.parse("jetson.toml", &mut problems);
    let meta: Option<CatalogMeta> = texts.parse("catalog.toml", &mut problems);
    let uv: Option<super::uv::UvPin> = texts.parse("uv.toml", &mut problems);
    if let Some(message) = uv.as_ref().and_then(|u| u.check().err()) {
        problems.push(Problem {
            file: texts.path("uv.toml"),
            line: None,
            message,
        });
    }
    let (
        Some(gpus),
        Some(cuda),
        Some(drivers),
        Some(driver_support),
        Some(cudnn),
        Some(pytorch),
        Some(tensorflow),
        Some(jax),
        Some(components),
        Some(bench),
        Some(tensorrt),
        Some(jetson),
        Some(meta),
        Some(uv),
    ) = (
        gpus,
        cuda,
        drivers,
        driver_support,
        cudnn,
        pytorch,
        tensorflow,
        jax,
        components,
        bench,
        tensorrt,
        jetson,
        meta,
        uv,
    )
    else {
        return problems;
    };
    let catalog = Catalog {
        gpus,
        cuda,
        drivers,
        driver_support,
        cudnn,
        pytorch,
        tensorflow,
        jax,
        components,
        bench,
        tensorrt,
        jetson,
        meta,
        uv,
        origin: String::new(),
        notes: Vec::new(),
    };
    cross_check(&catalog, &texts, &mut problems);
    values_check(&catalog, &texts, &mut problems);
    sources_check(&texts, &mut problems);
    problems
}

/// Every version, name and index URL that reaches a generated command line (a Dockerfile's
/// `RUN`, a printed `pip install`) has its kind's grammar: a row holding `'; touch /x` is
/// refused here, where it is read, not written into a file a shell runs.
fn values_check(c: &Catalog, t: &Texts, problems: &mut Vec<Problem>) {
    use crate::model::safe;
    let mut p = |needle: &str, msg: String| problems.push(t.at("pytorch.toml", needle, msg));
    for r in &c.pytorch.release {
        for (what, value) in [
            ("torchvision", r.torchvision.as_deref()),
            ("torchaudio", r.torchaudio.as_deref()),
        ] {
            if let Some(v) = value.filter(|v| !safe::is_version(v)) {
                p(
                    v,
                    format!(
                        "torch {}: {what} `{}` is not a version",
                        r.version,
                        v.escape_default()
                    ),
                );
            }
        }
        for variant in &r.variant {
            if !safe::is_name(&variant.name) {
                p(
                    &variant.name,
                    format!(
                        "torch {}: variant `{}` is not a name",
                        r.version,
                        variant.name.escape_default()
                    ),
                );
            } else if !safe::is_index_url(&variant.index_url()) {
                p(
                    &variant.name,
                    format!(
                        "torch {}: index URL `{}` is not a URL a command line can carry",
                        r.version,
                        variant.index_url().escape_default()
                    ),
                );
            }
        }
    }
}

/// Every `source = "…"` names something a reader can follow: a URL or a repository path.
fn sources_check(texts: &Texts, problems: &mut Vec<Problem>) {
    /// What a row said about where it comes from.
    #[derive(Default)]
    struct Row {
        line: usize,
        source: Option<(usize, String)>,
        derived: bool,
    }
    for (name, text) in &texts.files {
        let mut row: Option<Row> = None;
        let close = |row: Option<Row>, problems: &mut Vec<Problem>| {
            let Some(row) = row else { return };
            let problem = |line: usize, message: String| Problem {
                file: texts.path(name),
                line: Some(line),
                message,
            };
            match &row.source {
                None => problems.push(problem(row.line, "row has no `source`".into())),
                Some((line, v)) => {
                    if !(v.contains("http") || v.contains('/')) {
                        problems.push(problem(
                            *line,
                            format!("source `{v}` names no URL or repository path"),
                        ));
                    } else if row.derived && !v.contains("http") {
                        problems.push(problem(
                            *line,
                            "a derived row's source must be the URL it was read from".into(),
                        ));
                    }
                }
            }
        };
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            let value = |key: &str| {
                l.strip_prefix(key)
                    .map(str::trim_start)
                    .and_then(|v| v.strip_prefix('='))
                    .map(|v| v.trim().trim_matches('"').to_owned())
            };
            if l.starts_with("[[") {
                close(row.take(), problems);
                row = Some(Row {
                    line: i + 1,
                    ..Row::default()
                });
            } else if let Some(r) = row.as_mut() {
                if let Some(v) = value("source") {
                    r.source = Some((i + 1, v));
                } else if value("derived").is_some() {
                    r.derived = true;
                }
            }
        }
        close(row.take(), problems);
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
    for (needle, msg) in c.jax.problems() {
        p("jax.toml", &needle, msg);
    }
    super::cross::check(c, &mut p);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_a_shell_would_read_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for entry in fs_err::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/manifests")).unwrap() {
            let e = entry.unwrap();
            fs_err::copy(e.path(), dir.path().join(e.file_name())).unwrap();
        }
        let path = dir.path().join("pytorch.toml");
        let text = fs_err::read_to_string(&path).unwrap();
        let bad = text.replacen(
            "torchvision = \"0.29.2\"",
            "torchvision = \"0.29.2'; touch /tmp/pwned; '\"",
            1,
        );
        assert_ne!(bad, text, "the fixture has no torchvision 0.29.2 row");
        fs_err::write(&path, bad).unwrap();
        let problems = check(&Source::Dir(dir.path().to_owned()));
        assert!(
            problems
                .iter()
                .any(|p| p.to_string().contains("is not a version")),
            "{problems:?}"
        );
    }

    #[test]
    fn a_compiler_target_no_gpu_could_have_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for entry in fs_err::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/manifests")).unwrap() {
            let e = entry.unwrap();
            fs_err::copy(e.path(), dir.path().join(e.file_name())).unwrap();
        }
        let path = dir.path().join("cuda.toml");
        let text = fs_err::read_to_string(&path).unwrap();
        // What a hostile ptxas table (`lto_9999`) made of the newest series.
        let at = text.rfind("sm_max = \"").expect("a series with sm_max");
        let end = at + text[at..].find('\n').unwrap();
        let bad = format!("{}sm_max = \"999.9\"{}", &text[..at], &text[end..]);
        fs_err::write(&path, bad).unwrap();
        let problems = check(&Source::Dir(dir.path().to_owned()));
        assert!(
            problems
                .iter()
                .any(|p| p.to_string().contains("999.9 are no compute capability")),
            "{problems:?}"
        );
    }

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
