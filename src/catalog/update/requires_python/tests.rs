//! The Requires-Python reader over the real PEP 691 pages of torchvision and torchaudio
//! (tests/fixtures/sources/pypi, captured from pypi.org: the files of the releases named there,
//! verbatim).

use super::*;
use crate::catalog::Date;
use crate::fetch::Location;

fn page(name: &str) -> Project {
    let text = fs_err::read_to_string(format!(
        "{}/tests/fixtures/sources/pypi/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("the fixture exists");
    let page = Location::parse(&format!("https://pypi.org/simple/{name}/")).expect("a URL");
    let files = super::super::pypi::parse_page(&page, text.as_bytes()).expect("a real page");
    Project { page, files }
}

fn v(s: &str) -> Version {
    Version::parse(s).expect("a version")
}

#[test]
fn real_pages_declare_per_release() {
    let vision = page("torchvision");
    assert_eq!(
        declared("torchvision", &vision, &v("0.29.2")),
        Declared::One(">=3.10,!=3.14.1".into())
    );
    // 0.26.0's files write the clauses the other way round: the same specifier.
    assert_eq!(
        declared("torchvision", &vision, &v("0.26.0")),
        Declared::One("!=3.14.1,>=3.10".into())
    );
    assert_eq!(
        declared("torchvision", &vision, &v("0.25.0")),
        Declared::One(">=3.10".into())
    );
    assert_eq!(
        declared("torchvision", &vision, &v("0.15.2")),
        Declared::Absent,
        "not in the captured subset"
    );
    let audio = page("torchaudio");
    assert_eq!(
        declared("torchaudio", &audio, &v("2.11.0")),
        Declared::Nothing
    );
    assert_eq!(
        declared("torchaudio", &audio, &v("2.11.1")),
        Declared::One(">=3.10".into())
    );
}

/// Not every file alike: no value is taken (one file of 0.29.2 edited to declare `>=3.11`, one to
/// declare nothing).
#[test]
fn files_that_disagree_give_no_value() {
    let mut vision = page("torchvision");
    let mut of_release = vision
        .files
        .iter_mut()
        .filter(|f| f.filename.starts_with("torchvision-0.29.2-"));
    of_release.next().expect("a file").requires_python = Some(">=3.11".into());
    of_release.next().expect("a second file").requires_python = None;
    match declared("torchvision", &vision, &v("0.29.2")) {
        Declared::Differ(values) => assert_eq!(
            values,
            vec![
                Some(">=3.11".to_owned()),
                None,
                Some(">=3.10,!=3.14.1".to_owned())
            ]
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn sdists_and_pre_releases_are_told_apart() {
    assert_eq!(
        release_of("torchvision", "torchvision-0.15.2.tar.gz"),
        Some(v("0.15.2"))
    );
    assert_eq!(
        release_of(
            "tensorflow",
            "tensorflow-2.21.0rc1-cp312-cp312-manylinux_2_27_x86_64.whl"
        ),
        None
    );
    assert_eq!(release_of("torchvision", "other-0.15.2.tar.gz"), None);
}

/// The embedded pytorch.toml with the rows of torchvision 0.29.2 and torchaudio 2.11.1 taken out
/// and torchvision 0.25.0's changed: the pages bring back the same rows (0.26.0, written the
/// other way round on the page, is left alone), in order; applied again, nothing changes.
#[test]
fn rows_are_derived_in_place_and_a_second_pass_changes_nothing() {
    let embedded = crate::catalog::EMBEDDED
        .iter()
        .find(|(n, _)| *n == "pytorch.toml")
        .expect("pytorch.toml")
        .1;
    let drop = |text: &str, package: &str, version: &str| {
        let row =
            format!("[[requires_python]]\npackage = \"{package}\"\nversion = \"{version}\"\n");
        let at = text.find(&row).expect("the row");
        let end = at + text[at..].find("\n\n").expect("a row ends") + 2;
        format!("{}{}", &text[..at], &text[end..])
    };
    let mut old = drop(embedded, "torchvision", "0.29.2");
    old = drop(&old, "torchaudio", "2.11.1");
    old = old.replacen(
        "version = \"0.25.0\"\nrequires_python = \">=3.10\"",
        "version = \"0.25.0\"\nrequires_python = \">=3.9\"",
        1,
    );
    let mut texts = BTreeMap::new();
    for (name, text) in crate::catalog::EMBEDDED {
        texts.insert((*name).to_owned(), (*text).to_owned());
    }
    texts.insert("pytorch.toml".into(), old.clone());
    let named = named(&texts).expect("the texts parse");
    let (file, releases) = &named[0];
    assert_eq!(*file, "pytorch.toml");
    let pages: BTreeMap<String, Project> = [
        ("torchvision".to_owned(), page("torchvision")),
        ("torchaudio".to_owned(), page("torchaudio")),
    ]
    .into();
    let today = Date::parse("2026-12-06").expect("a date");
    let mut doc = Doc::new(&old);
    let (mut changes, mut notes) = (Vec::new(), Vec::new());
    apply(
        &mut doc,
        file,
        releases,
        &pages,
        today,
        &mut changes,
        &mut notes,
    );
    assert_eq!(
        changes,
        vec![
            "pytorch.toml: + Requires-Python of torchaudio 2.11.1: '>=3.10' (https://pypi.org/simple/torchaudio/)",
            "pytorch.toml: torchvision 0.25.0: Requires-Python '>=3.10' (was '>=3.9'; https://pypi.org/simple/torchvision/)",
            "pytorch.toml: + Requires-Python of torchvision 0.29.2: '>=3.10,!=3.14.1' (https://pypi.org/simple/torchvision/)",
        ]
    );
    // Releases outside the captured pages keep their rows, and say so.
    assert!(
        notes.iter().any(|n| n
            .starts_with("torchvision 0.15.2: no file on https://pypi.org/simple/torchvision/")),
        "{notes:#?}"
    );
    let text = doc.text();
    let rows = |t: &str| -> Vec<(String, String, String)> {
        rows_of(t)
            .into_iter()
            .map(|r| {
                (
                    r.package,
                    r.version.to_string(),
                    r.requires_python.to_string(),
                )
            })
            .collect()
    };
    assert_eq!(
        rows(&text),
        rows(embedded),
        "the same rows, in the same order"
    );
    assert!(text.contains(
        "source = \"https://pypi.org/simple/torchvision/ (PEP 691 page, read 2026-12-06: every file of torchvision 0.29.2 has requires-python '>=3.10,!=3.14.1')\""
    ));
    // Everything but the three rows is byte for byte the embedded text.
    let untouched = |t: &str| {
        let mut t = drop(t, "torchvision", "0.29.2");
        t = drop(&t, "torchaudio", "2.11.1");
        drop(&t, "torchvision", "0.25.0")
    };
    assert_eq!(untouched(&text), untouched(embedded));

    let mut again = Doc::new(&text);
    let mut changes = Vec::new();
    apply(
        &mut again,
        file,
        releases,
        &pages,
        today,
        &mut changes,
        &mut Vec::new(),
    );
    assert!(changes.is_empty(), "{changes:#?}");
    assert_eq!(again.text(), text);
}
