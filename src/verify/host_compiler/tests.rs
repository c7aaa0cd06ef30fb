//! The host-compiler check: said on Windows without cl.exe, silent with it and elsewhere, and a
//! whole `verify` under Wine that skips the builds for that reason and runs the rest.

use super::*;
use crate::verify::Status;

#[test]
fn on_windows_a_missing_cl_fails_with_the_fix_and_a_found_one_passes_quietly() {
    let d = tempfile::tempdir().unwrap();
    let path = vec![d.path().to_path_buf()];
    let c = missing(true, &path).expect("no cl.exe on PATH");
    assert_eq!(c.id, "host-compiler");
    assert_eq!(c.status, Status::Fail);
    assert!(
        c.evidence[0].contains("cl.exe") && c.evidence[0].contains("PATH"),
        "{c:?}"
    );
    assert!(
        c.evidence[1].contains("\"Desktop development with C++\" workload"),
        "{c:?}"
    );
    assert!(c.evidence[2].contains("x64 Native Tools"), "{c:?}");

    let cl = d.path().join("cl.exe");
    fs_err::write(&cl, b"MZ").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs_err::set_permissions(&cl, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    assert_eq!(missing(true, &path), None);
}

#[test]
fn elsewhere_nothing_is_said() {
    assert_eq!(missing(false, &[]), None);
}

/// A whole `verify` on Windows with nvcc and no cl.exe: the host-compiler check fails with
/// the fix, the builds are skipped for that reason (nothing is compiled), and the rest run.
#[cfg(windows)]
#[test]
fn verify_on_windows_without_cl_skips_the_builds_and_runs_the_rest() {
    use crate::verify::testing::{ok, Scripted};
    use crate::verify::{verify, Context, Options};
    use crate::world::process::Process;

    const BANNER: &str =
        "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\n";
    let tk = tempfile::tempdir().unwrap();
    let nvcc = crate::model::layout::Prefix::at(tk.path()).nvcc();
    fs_err::create_dir_all(nvcc.parent().unwrap()).unwrap();
    fs_err::write(&nvcc, b"MZ").unwrap();
    let empty = tempfile::tempdir().unwrap();
    let runner = Scripted::new(|program, args, _| {
        (program.ends_with("nvcc.exe") && args == ["--version"]).then(|| ok(BANNER))?
    });
    let process = Process::with_vars([("PATH", empty.path().display().to_string())], "/");
    let catalog = crate::catalog::Catalog::load(&crate::catalog::Source::Embedded).unwrap();
    let ctx = Context {
        process: &process,
        runner: &runner,
        gpu_table: &catalog.gpus,
        nvml: &|| None,
        pci_gpus: &Vec::new,
        components: &catalog.components,
    };
    let opts = Options {
        toolkit: Some(tk.path().to_path_buf()),
        ..Options::default()
    };
    let report = verify(&ctx, &opts);
    let status = |id: &str| {
        let c = report
            .checks
            .iter()
            .find(|c| c.id == id)
            .unwrap_or_else(|| panic!("no {id}: {report:?}"));
        (c.status, c.evidence[0].clone())
    };
    assert_eq!(status("nvcc").0, Status::Pass, "{report:?}");
    assert_eq!(status(ID).0, Status::Fail);
    for id in ["addkernel", "libraries", "cmake"] {
        assert_eq!(status(id), (Status::Skip, SKIPPED.to_owned()), "{id}");
    }
    // The driver check ran (no GPU here: skipped for that reason, not for cl.exe).
    assert_eq!(status("driver").0, Status::Skip);
    assert_ne!(status("driver").1, SKIPPED);
    assert!(!report.ok);
    // Nothing was compiled: nvcc was asked its version, and nothing else ran it.
    let calls = runner.calls.lock().unwrap();
    assert!(
        calls
            .iter()
            .filter(|c| c.0.ends_with("nvcc.exe"))
            .all(|c| c.1 == ["--version"]),
        "{calls:?}"
    );
    drop(calls);

    // With cl.exe on PATH: no host-compiler check, addKernel is compiled (to an .exe), and
    // the two Linux-layout checks say they do not run on Windows yet.
    fs_err::write(empty.path().join("cl.exe"), b"MZ").unwrap();
    let report = verify(&ctx, &opts);
    assert!(report.checks.iter().all(|c| c.id != ID), "{report:?}");
    for id in ["libraries", "cmake"] {
        let c = report.checks.iter().find(|c| c.id == id).unwrap();
        assert_eq!(
            (c.status, c.evidence[0].as_str()),
            (Status::Skip, LINUX_ONLY),
            "{id}"
        );
    }
    let calls = runner.calls.lock().unwrap();
    assert!(
        calls.iter().any(|c| c.0.ends_with("nvcc.exe")
            && c.1.iter().any(|a| a.ends_with("addKernel_default.exe"))),
        "{calls:?}"
    );
}
