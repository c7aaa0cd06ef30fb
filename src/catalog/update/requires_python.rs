//! The `[[requires_python]]` rows, from the index: what every file of a release the catalog
//! names (a torch row's torchvision or torchaudio, a TensorFlow row) declares as its
//! `requires-python` on the project's PEP 691 page (PEP 503's `data-requires-python`).
//!
//! A row says what pip will check, so it is written only when every file of the release says the
//! same thing. A release whose files declare nothing gets no row (torchaudio before 2.11.1), and
//! files that disagree, or a release the index does not carry, leave the row as it was, with a
//! note: the plan keeps applying the curated row rather than a guess.

use std::collections::{BTreeMap, BTreeSet};

use super::pypi::{is_final, Project};
use super::rows::{lit, Doc};
use crate::catalog::{PytorchManifest, RequiresPython, Spec, TensorflowManifest};
use crate::model::version::Version;
use crate::sources::pypi::{normalize, parse_wheel_name};

/// What the files of one release declare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declared {
    /// The index lists no file of the release.
    Absent,
    /// Files, none with `requires-python`.
    Nothing,
    /// Every file declares this (as the first file writes it).
    One(String),
    /// The files disagree (each distinct value; `None`: a file that declares nothing).
    Differ(Vec<Option<String>>),
}

/// The release a file of `project` belongs to, when it is a final one: the wheel's version, or
/// an sdist's (`torchvision-0.15.2.tar.gz`).
fn release_of(project: &str, filename: &str) -> Option<Version> {
    if filename.ends_with(".whl") {
        let raw = filename.split('-').nth(1)?;
        return is_final(raw)
            .then(|| parse_wheel_name(filename).map(|w| w.version))
            .flatten();
    }
    let stem = filename
        .strip_suffix(".tar.gz")
        .or_else(|| filename.strip_suffix(".zip"))?;
    let (name, raw) = stem.rsplit_once('-')?;
    (normalize(name) == normalize(project) && is_final(raw))
        .then(|| Version::parse(raw))
        .flatten()
}

/// What the files of `version` on `page` declare.
pub fn declared(package: &str, page: &Project, version: &Version) -> Declared {
    let values: Vec<Option<&str>> = page
        .files
        .iter()
        .filter(|f| release_of(package, &f.filename).as_ref() == Some(version))
        .map(|f| f.requires_python.as_deref().map(str::trim))
        .map(|r| r.filter(|r| !r.is_empty()))
        .collect();
    let Some(first) = values.first() else {
        return Declared::Absent;
    };
    let same = |a: Option<&str>, b: Option<&str>| match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a == b || same_spec(a, b),
        _ => false,
    };
    if values.iter().all(|v| same(*v, *first)) {
        return match first {
            None => Declared::Nothing,
            Some(s) => Declared::One((*s).to_owned()),
        };
    }
    let mut distinct: Vec<Option<String>> = Vec::new();
    for v in values {
        if !distinct.iter().any(|d| same(d.as_deref(), v)) {
            distinct.push(v.map(str::to_owned));
        }
    }
    Declared::Differ(distinct)
}

/// Whether two specifiers hold the same clauses, in any order (`!=3.14.1,>=3.10` is
/// `>=3.10,!=3.14.1`).
fn same_spec(a: &str, b: &str) -> bool {
    match (Spec::parse(a), Spec::parse(b)) {
        (Some(a), Some(b)) => {
            a.clauses.len() == b.clauses.len() && a.clauses.iter().all(|c| b.clauses.contains(c))
        }
        _ => false,
    }
}

/// Releases by package: `(torchvision, 0.29.2)`.
pub type Releases = BTreeSet<(String, Version)>;

/// The releases each file's rows are about, as the merged texts name them (rows added by this
/// update included), per manifest file.
pub fn named(texts: &BTreeMap<String, String>) -> Result<Vec<(&'static str, Releases)>, String> {
    let parse = |name: &str| -> Result<&String, String> {
        texts
            .get(name)
            .ok_or_else(|| format!("the catalog has no {name}"))
    };
    let pytorch: PytorchManifest =
        toml::from_str(parse("pytorch.toml")?).map_err(|e| format!("pytorch.toml: {e}"))?;
    let tensorflow: TensorflowManifest =
        toml::from_str(parse("tensorflow.toml")?).map_err(|e| format!("tensorflow.toml: {e}"))?;
    let mut companions = BTreeSet::new();
    for r in &pytorch.release {
        for (package, v) in [
            ("torchvision", &r.torchvision),
            ("torchaudio", &r.torchaudio),
        ] {
            if let Some(v) = v.as_deref().and_then(Version::parse) {
                companions.insert((package.to_owned(), v));
            }
        }
    }
    let tf = tensorflow
        .release
        .iter()
        .map(|r| ("tensorflow".to_owned(), r.version.clone()))
        .collect();
    Ok(vec![("pytorch.toml", companions), ("tensorflow.toml", tf)])
}

/// The rows a manifest file holds now.
fn rows_of(text: &str) -> Vec<RequiresPython> {
    #[derive(serde::Deserialize)]
    struct Rows {
        #[serde(default)]
        requires_python: Vec<RequiresPython>,
    }
    toml::from_str::<Rows>(text)
        .map(|r| r.requires_python)
        .unwrap_or_default()
}

/// The line a new row of `package` `version` goes before: among the rows of its package, oldest
/// first; after the last row of the file when its package has none; `None` to append.
fn position(doc: &Doc, package: &str, version: &Version) -> Option<usize> {
    let rows = doc.rows("requires_python");
    let same: Vec<_> = rows
        .iter()
        .filter(|r| doc.string(**r, "package").as_deref() == Some(package))
        .collect();
    if let Some(next) = same.iter().find(|r| {
        doc.string(***r, "version")
            .and_then(|v| Version::parse(&v))
            .is_some_and(|v| &v > version)
    }) {
        return Some(doc.comment_start(next.start));
    }
    let last = same.last().copied().or(rows.last())?;
    doc.is_blank(last.end).then_some(last.end + 1)
}

/// Writes what the index declares into `doc` (the text of `file`) for the releases `named`.
pub fn apply(
    doc: &mut Doc,
    file: &str,
    named: &Releases,
    pages: &BTreeMap<String, Project>,
    today: crate::catalog::Date,
    changes: &mut Vec<String>,
    notes: &mut Vec<String>,
) {
    let rows = rows_of(&doc.text());
    for (package, version) in named {
        let Some(page) = pages.get(package) else {
            continue;
        };
        let row = rows
            .iter()
            .find(|r| &r.package == package && &r.version == version);
        let url = page.page.to_string();
        match declared(package, page, version) {
            Declared::Absent => {
                if row.is_some() {
                    notes.push(format!(
                        "{package} {version}: no file on {url}, so its Requires-Python row is kept as it was"
                    ));
                }
            }
            Declared::Nothing => {
                if let Some(r) = row {
                    notes.push(format!(
                        "{package} {version}: no file on {url} declares requires-python now (the catalog has '{}'): the row is kept",
                        r.requires_python
                    ));
                }
            }
            Declared::Differ(values) => notes.push(format!(
                "{package} {version}: the files on {url} declare different requires-python ({}), so no row is written from them",
                values
                    .iter()
                    .map(|v| v.as_deref().map_or("none".to_owned(), |v| format!("'{v}'")))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Declared::One(spec) => {
                if Spec::parse(&spec).is_none() {
                    notes.push(format!(
                        "{package} {version}: requires-python '{spec}' on {url} is not a specifier cudaup reads, so no row is written from it"
                    ));
                    continue;
                }
                if row.is_some_and(|r| same_spec(&r.requires_python.to_string(), &spec)) {
                    continue;
                }
                let source = format!(
                    "{url} (PEP 691 page, read {today}: every file of {package} {version} has requires-python '{spec}')"
                );
                match doc
                    .rows("requires_python")
                    .into_iter()
                    .find(|r| {
                        doc.string(*r, "package").as_deref() == Some(package.as_str())
                            && doc.string(*r, "version").and_then(|v| Version::parse(&v)).as_ref()
                                == Some(version)
                    }) {
                    Some(span) => {
                        doc.set(span, "requires_python", &lit(&spec));
                        doc.set(span, "source", &lit(&source));
                        changes.push(format!(
                            "{file}: {package} {version}: Requires-Python '{spec}' (was '{}'; {url})",
                            row.map(|r| r.requires_python.to_string()).unwrap_or_default()
                        ));
                    }
                    None => {
                        let block = Doc::block(
                            "requires_python",
                            &[
                                ("package", lit(package)),
                                ("version", lit(&version.to_string())),
                                ("requires_python", lit(&spec)),
                                ("source", lit(&source)),
                            ],
                        );
                        match position(doc, package, version) {
                            Some(at) => doc.insert(at, block),
                            None => doc.append(block),
                        }
                        changes.push(format!(
                            "{file}: + Requires-Python of {package} {version}: '{spec}' ({url})"
                        ));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
