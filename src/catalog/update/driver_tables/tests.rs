use super::*;
use crate::catalog::embedded_text;

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sources/nvidia-drivers"
);

fn readme(release: &str) -> String {
    fs_err::read_to_string(format!("{FIXTURES}/{release}/README.md")).unwrap()
}

fn v(s: &str) -> Version {
    Version::parse(s).unwrap()
}

fn committed() -> DriverSupport {
    toml::from_str(embedded_text("driver_support.toml").unwrap()).unwrap()
}

#[test]
fn the_reader_finds_the_rtx_5060_first_in_570_158_01() {
    let before = parse(&readme("570.153.02")).unwrap();
    let after = parse(&readme("570.158.01")).unwrap();
    assert!(!before.contains_key("10de:2d05"));
    assert_eq!(after["10de:2d05"], "NVIDIA GeForce RTX 5060");
    // Rows with subsystem ids count for their device (Quadro RTX 8000 is `1E30 10DE 129E`).
    assert_eq!(after["10de:1e30"], "Quadro RTX 6000");
    let newest = parse(&readme("595.45.04")).unwrap();
    assert_eq!(newest["10de:31c2"], "NVIDIA GB300");
    assert!(parse("# README\nno table here\n").is_err());
    assert!(parse("## Compatible GPUs\n| a | b |\n").is_err());
}

/// The committed file says of each captured release exactly what its real table lists.
#[test]
fn the_committed_table_agrees_with_the_real_readmes() {
    let t = committed();
    for release in ["570.153.02", "570.158.01", "595.45.04"] {
        let real: BTreeSet<String> = parse(&readme(release)).unwrap().into_keys().collect();
        let file: BTreeSet<String> = t
            .gpu
            .iter()
            .filter(|g| g.lists(&v(release)))
            .map(|g| g.pci_id.clone())
            .collect();
        assert_eq!(real, file, "{release}");
    }
}

/// Rewriting the file from its own runs changes no byte (the generator's layout), and reading the
/// newest table again onto the file without it gives the committed file back.
#[test]
fn rewriting_is_a_fixed_point_and_rereading_595_45_04_restores_it() {
    let text = embedded_text("driver_support.toml").unwrap();
    let t = committed();
    let (same, changes) = merged(&t, &[]);
    assert!(same == text, "the rewrite differs from the committed file");
    assert!(changes.is_empty());

    let mut without = t.clone();
    without.release.retain(|r| r.version != v("595.45.04"));
    let (old_text, _) = merged(&without, &[]);
    let old: DriverSupport = toml::from_str(&old_text).unwrap();
    assert!(!old.release.iter().any(|r| r.version == v("595.45.04")));
    let table = parse(&readme("595.45.04")).unwrap();
    let (again, changes) = merged(&old, &[(v("595.45.04"), table)]);
    assert!(
        again == text,
        "re-reading 595.45.04 does not restore the file"
    );
    assert_eq!(changes.len(), 1);
    assert!(
        changes[0].contains("driver 595.45.04's table read"),
        "{changes:?}"
    );
}

/// `read` asks for the releases the catalog names that no row has read, from a loopback copy of
/// the README layout; a release with no README there is a note, a README without the table
/// stops the update.
#[test]
fn read_takes_the_named_releases_from_a_loopback_copy() {
    let mut c = crate::catalog::Catalog::embedded();
    let (old_text, _) = {
        let mut without = c.driver_support.clone();
        without.release.retain(|r| r.version != v("595.45.04"));
        merged(&without, &[])
    };
    c.driver_support = toml::from_str(&old_text).unwrap();
    // 595.45.04 is CUDA 13.2.0's driver in cuda.toml.
    let want = candidates(&c);
    assert!(want.contains(&v("595.45.04")), "{want:?}");
    assert!(!want.contains(&v("570.158.01")), "{want:?}");

    let dir = tempfile::tempdir().unwrap();
    let fetcher = super::super::tests::fetcher(dir.path());
    let mut net = Net::new(&fetcher);
    let mut notes = Vec::new();
    let base = Location::parse(FIXTURES).unwrap();
    let got = read(&mut net, &base, &c, &mut notes).unwrap();
    let releases: Vec<String> = got.iter().map(|(r, _)| r.to_string()).collect();
    assert_eq!(releases, vec!["595.45.04"], "{notes:#?}");
    assert!(got[0].1.contains_key("10de:31c2"));
    assert!(
        notes.iter().any(|n| n.contains("no README at")),
        "{notes:#?}"
    );

    // A README without the table: bad data, naming the URL.
    let bad = tempfile::tempdir().unwrap();
    fs_err::create_dir_all(bad.path().join("595.45.04")).unwrap();
    fs_err::write(
        bad.path().join("595.45.04/README.md"),
        "# NVIDIA Linux Open GPU Kernel Module Source\n",
    )
    .unwrap();
    let base = Location::parse(&bad.path().display().to_string()).unwrap();
    let err = read(&mut net, &base, &c, &mut Vec::new()).unwrap_err();
    assert!(
        matches!(err, UpdateError::BadData { ref url, .. } if url.contains("595.45.04")),
        "{err}"
    );
}
