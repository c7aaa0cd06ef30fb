//! Finding 5: every PCI id NVIDIA's newest supported-GPU table lists is known, so a GPU with no
//! driver yet (no compute capability from NVML) is planned; and `plan --system` completes a
//! picture from the catalog in effect, not only from the embedded one.

use std::path::Path;

use cudaup::catalog::{Catalog, DriverSupport};

use crate::common::*;

/// A machine with `pci_id` and no driver, as a first install sees it.
fn picture(dir: &Path, pci_id: &str) -> String {
    let path = dir.join("machine.json");
    fs_err::write(
        &path,
        format!(
            r#"{{"os": {{"family": "linux", "distro": "ubuntu", "version": "24.04", "arch": "x86_64", "wsl": false}},
"gpus": [{{"pci_id": "{pci_id}"}}],
"pythons": [{{"path": "/usr/bin/python3", "version": "3.12.3"}}]}}"#
        ),
    )
    .unwrap();
    path.display().to_string()
}

fn plan_json(home: &Path, manifests: Option<&str>, system: &str) -> Run {
    let mut args = Vec::new();
    if let Some(m) = manifests {
        args.extend(["--manifests", m]);
    }
    args.extend([
        "plan",
        "--system",
        system,
        "--profile",
        "cuda-dev",
        "--json",
    ]);
    cudaup(&args, home)
}

/// Every id of the newest table read is in gpus.toml, except the one no source gives a compute
/// capability for (DRIVE P2021), which stays out rather than guessed.
#[test]
fn gpus_toml_knows_every_id_of_the_newest_table() {
    let c = Catalog::embedded();
    let t: &DriverSupport = &c.driver_support;
    let newest = t.release.last().unwrap().version.clone();
    let missing: Vec<&str> = t
        .gpu
        .iter()
        .filter(|g| g.lists(&newest) && c.gpus.lookup(&g.pci_id).is_none())
        .map(|g| g.pci_id.as_str())
        .collect();
    assert_eq!(missing, vec!["10de:29bb"], "newest table {newest}");
}

/// The GB300 node's first install (the audit's case) and two ids it did not name: planned from
/// the PCI id alone, with a driver whose table lists the GPU.
#[test]
fn a_driverless_gpu_known_only_by_its_pci_id_is_planned() {
    let home = tempfile::tempdir().unwrap();
    for (id, cc, name) in [
        ("10de:31c2", "10.3", "NVIDIA GB300"),
        ("10de:2d30", "12.0", "NVIDIA RTX PRO 2000 Blackwell"),
        ("10de:2b8c", "12.0", "NVIDIA GeForce RTX 5090 D v2"),
    ] {
        let system = picture(home.path(), id);
        let run = plan_json(home.path(), None, &system);
        assert_eq!(run.code, 0, "{id}: {}\n{}", run.stdout, run.stderr);
        let j = run.json();
        assert_eq!(j["status"], "ok", "{id}: {j}");
        let driver = j["components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "driver")
            .unwrap();
        assert_eq!(driver["action"], "install", "{id}: {j}");
        assert!(
            j["reasons"].to_string().contains(cc)
                || j.to_string().contains(&format!("compute capability {cc}")),
            "{id}: {j}"
        );
        assert!(j.to_string().contains(name), "{id}: {j}");
    }
}

/// `--manifests DIR` (and so a refreshed catalog) completes the picture with its own gpus.toml:
/// without the GB300 row there, the same picture is refused for want of a name.
#[test]
fn plan_system_completes_pictures_from_the_catalog_in_effect() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in cudaup::catalog::EMBEDDED {
        let text = if *name == "gpus.toml" {
            text.replace("pci_id = \"10de:31c2\"", "pci_id = \"10de:31c3\"")
        } else {
            (*text).to_owned()
        };
        fs_err::write(dir.path().join(name), text).unwrap();
    }
    let m = dir.path().display().to_string();
    let system = picture(home.path(), "10de:31c2");
    let run = plan_json(home.path(), Some(&m), &system);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("10de:31c2 is not in the catalog's gpus.toml"),
        "{}",
        run.stderr
    );
    // And the id only that catalog knows is completed from it.
    let other = picture(home.path(), "10de:31c3");
    let run = plan_json(home.path(), Some(&m), &other);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("NVIDIA GB300"), "{}", run.stdout);
}
