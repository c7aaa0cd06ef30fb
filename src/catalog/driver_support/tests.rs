use super::*;
use crate::catalog::{check, Source, EMBEDDED};

fn v(s: &str) -> Version {
    Version::parse(s).unwrap()
}

fn table() -> DriverSupport {
    toml::from_str(
        r#"
schema_version = 1
[[release]]
version = "570.153.02"
source = "a"
[[release]]
version = "570.158.01"
source = "b"
[[release]]
version = "580.94.13"
source = "c"
[[release]]
version = "580.95.05"
source = "d"
[[release]]
version = "580.119.02"
source = "e"

[[gpu]]
pci_id = "10de:2e12"
name = "NVIDIA GB10"
listed = ["580.94.13", "580.119.02"]
source = "c"

[[gpu]]
pci_id = "10de:2d05"
name = "NVIDIA GeForce RTX 5060"
listed = ["570.158.01", "580.94.13..580.119.02"]
source = "b"
"#,
    )
    .unwrap()
}

#[test]
fn a_release_is_judged_by_the_newest_read_release_of_its_branch_at_or_below_it() {
    let t = table();
    let gb10 = t.find(Some("10de:2E12"), "whatever");
    assert_eq!(
        t.listing(&gb10, 580, Some(&v("580.94.13"))),
        Listing::Listed
    );
    // Between two read releases and after the last one: the one below decides.
    assert!(matches!(
        t.listing(&gb10, 580, Some(&v("580.105.08"))),
        Listing::NotListed { judged_by, .. } if judged_by == v("580.95.05")
    ));
    assert_eq!(
        t.listing(&gb10, 580, Some(&v("580.178.04"))),
        Listing::Listed
    );
    // A branch never read, and a release older than any read: not decided here.
    assert_eq!(
        t.listing(&gb10, 620, Some(&v("620.70.06"))),
        Listing::Unknown
    );
    assert_eq!(
        t.listing(&gb10, 570, Some(&v("570.86.10"))),
        Listing::Unknown
    );
    // Branch-wide: no 570 table lists GB10.
    assert!(matches!(
        t.listing(&gb10, 570, None),
        Listing::NotListed { first, .. } if first == vec![v("580.94.13")]
    ));
    let rtx = t.find(None, "NVIDIA GeForce RTX 5060");
    assert_eq!(t.listing(&rtx, 570, None), Listing::Listed);
    assert!(matches!(
        t.listing(&rtx, 570, Some(&v("570.153.02"))),
        Listing::NotListed { first, .. } if first == vec![v("570.158.01"), v("580.94.13")]
    ));
    // An unknown GPU is never decided by the table.
    assert_eq!(
        t.listing(&t.find(Some("10de:ffff"), "x"), 570, None),
        Listing::Unknown
    );
}

#[test]
fn runs_parse_only_within_one_branch() {
    assert_eq!(
        parse_run("580.94.13"),
        Some((v("580.94.13"), v("580.94.13")))
    );
    assert!(parse_run("570.158.01..575.57.08").is_none());
    assert!(parse_run("580.119.02..580.94.13").is_none());
    assert!(parse_run("580").is_none());
}

/// The copy of the catalog with `drivers.toml` edited by `edit`, and what `manifests check` says.
fn check_with(edit: impl Fn(&str) -> String) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in EMBEDDED {
        let text = if *name == "drivers.toml" {
            edit(text)
        } else {
            (*text).to_owned()
        };
        fs_err::write(dir.path().join(name), text).unwrap();
    }
    check(&Source::Dir(dir.path().into()))
        .iter()
        .map(|p| p.to_string())
        .collect()
}

#[test]
fn check_refuses_a_floor_that_lets_through_a_release_whose_table_lacks_the_gpu() {
    assert_eq!(check_with(str::to_owned), Vec::<String>::new());
    // The floor of before: any 575 for B300 / GB300, whose tables do not list them.
    let old = check_with(|t| {
        t.replacen(
            "compute_capability = \"10.3\"\nmin_versions = [\"580.82.07\"]",
            "compute_capability = \"10.3\"\nmin_branch = 575",
            1,
        )
    });
    assert!(
        old.iter().any(|p| p.contains("drivers.toml:")
            && p.contains("lets driver 575.51.02 through")
            && p.contains("10de:3182")
            && p.contains("no release of branch 575 read lists it")),
        "{old:#?}"
    );
    // Not named: a name floor below the first release of a branch that lists the GPU.
    let low = check_with(|t| {
        t.replacen(
            "gpu = \"B200\"\nmin_version = \"570.133.20\"",
            "gpu = \"GB10\"\nmin_versions = [\"580.65.06\"]",
            1,
        )
    });
    assert!(
        low.iter()
            .any(|p| p.contains("lets driver 580.65.06 through") && p.contains("from 580.94.13")),
        "{low:#?}"
    );
}

#[test]
fn check_refuses_runs_of_unread_releases_and_bad_ids() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in EMBEDDED {
        let text = if *name == "driver_support.toml" {
            text.replacen("pci_id = \"10de:2d05\"", "pci_id = \"10de:2D05\"", 1)
                .replacen(
                    "\"570.158.01..570.211.01\"",
                    "\"570.158.02..570.211.01\"",
                    1,
                )
        } else {
            (*text).to_owned()
        };
        fs_err::write(dir.path().join(name), text).unwrap();
    }
    let problems: Vec<String> = check(&Source::Dir(dir.path().into()))
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert!(
        problems.iter().any(|p| p.contains("`10de:2D05` is not")),
        "{problems:#?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.contains("run `570.158.02..570.211.01`")),
        "{problems:#?}"
    );
}

#[test]
fn per_branch_floors() {
    let f: crate::catalog::GpuFloor = toml::from_str(
        "gpu = \"X\"\nmin_versions = [\"570.158.01\", \"575.57.08\"]\nsource = \"s\"",
    )
    .unwrap();
    assert!(f.problem(570, Some(&v("570.153.02"))).is_some());
    assert!(f.problem(570, Some(&v("570.158.01"))).is_none());
    assert!(f.problem(575, Some(&v("575.51.03"))).is_some());
    assert!(f.problem(580, Some(&v("580.65.06"))).is_none());
    assert!(f.problem(565, None).is_some());
    assert!(f.problem(575, None).is_none());
    let why = f.problem(570, Some(&v("570.86.15"))).unwrap();
    assert!(
        why.contains("570.158.01 on branch 570") && why.contains("575.57.08 on branch 575"),
        "{why}"
    );
}
