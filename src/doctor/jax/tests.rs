use super::super::testing::*;
use super::*;
use crate::install::python::{Packages, VenvReceipt};

fn venv_with(dists: &[&str]) -> (tempfile::TempDir, VenvReceipt) {
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("jax");
    let site = venv.join("lib/python3.12/site-packages");
    fs_err::create_dir_all(&site).unwrap();
    for d in dists {
        fs_err::create_dir_all(site.join(format!("{d}.dist-info"))).unwrap();
    }
    let receipt = VenvReceipt {
        schema_version: 1,
        venv,
        base_python: "/usr/bin/python3.12".into(),
        created: true,
        profile: "jax".into(),
        packages: Packages {
            requirements: vec!["jax[cuda13]==0.12.0.1".into()],
            index_url: "https://pypi.org/simple".into(),
            ..Packages::default()
        },
        route: None,
        installed_at: 0,
        guard: None,
    };
    (dir, receipt)
}

fn findings(receipt: VenvReceipt) -> Vec<Diagnosis> {
    let mut w = World::new(h200());
    w.receipts.venvs.push(("venv-jax.json".into(), receipt));
    check(&w.inputs())
}

#[test]
fn a_jax_venv_without_its_plugin_is_an_error_that_repair_fixes() {
    let (_d, r) = venv_with(&["jax-0.12.0.1", "jaxlib-0.12.0.1"]);
    let f = findings(r);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].id(), "jax-cpu-only");
    assert_eq!(f[0].severity(), Severity::Error);
    let text = format!("{:?}", f[0]);
    assert!(
        text.contains("jax-cuda13-plugin is not installed"),
        "{text}"
    );
    assert!(text.contains("cudaup repair --fix venv-packages"), "{text}");
    assert!(text.contains("jax 0.12.0.1, jaxlib 0.12.0.1"), "{text}");
}

#[test]
fn a_healthy_jax_venv_has_no_finding_and_tensorflow_beside_it_is_a_warning() {
    let (_d, r) = venv_with(&[
        "jax-0.12.0.1",
        "jaxlib-0.12.0.1",
        "jax_cuda13_plugin-0.12.0.1",
        "jax_cuda13_pjrt-0.12.0.1",
    ]);
    assert!(findings(r).is_empty());
    let (_d, r) = venv_with(&[
        "jax-0.12.0.1",
        "jax_cuda13_plugin-0.12.0.1",
        "tensorflow-2.21.0",
    ]);
    let f = findings(r);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].id(), "jax-with-tensorflow");
    assert_eq!(f[0].severity(), Severity::Warning);
}
