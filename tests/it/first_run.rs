//! Issue 27: the first run on the machine one is on. Each test is one finding of the new
//! user's report.

use crate::common::cudaup;

/// Finding 7: a GPU given by its PCI id alone is looked up in the catalog's gpus.toml, not
/// refused for want of a name and a compute capability.
#[test]
fn a_system_document_gpu_given_by_pci_id_alone_is_looked_up_in_the_catalog() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("machine.json");
    fs_err::write(
        &file,
        r#"{"os": {"family": "linux"}, "gpus": [{"pci_id": "10de:2335"}]}"#,
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let run = cudaup(
        &["plan", "--system", f, "--profile", "pytorch", "--json"],
        home.path(),
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let plan = run.json();
    assert_eq!(plan["status"], "ok", "{plan}");
    let text = cudaup(
        &["plan", "--system", f, "--profile", "pytorch"],
        home.path(),
    );
    assert!(
        text.stdout.contains("for NVIDIA H200 SXM 141GB")
            && text.stdout.contains("compute capability 9.0"),
        "{}",
        text.stdout
    );
    assert!(
        !text.stdout.contains("compute capability unknown"),
        "{}",
        text.stdout
    );

    // What the file states wins over the table.
    fs_err::write(
        &file,
        r#"{"os": {"family": "linux"}, "gpus": [{"index": 0, "vendor": "nvidia", "name": "my H200", "pci_id": "10de:2335"}]}"#,
    )
    .unwrap();
    let named = cudaup(
        &["plan", "--system", f, "--profile", "pytorch"],
        home.path(),
    );
    assert!(named.stdout.contains("for my H200"), "{}", named.stdout);

    // An id the table does not know, with no name: refused, naming the id (exit 2).
    fs_err::write(
        &file,
        r#"{"os": {"family": "linux"}, "gpus": [{"pci_id": "10de:0001"}]}"#,
    )
    .unwrap();
    let unknown = cudaup(&["plan", "--system", f], home.path());
    assert_eq!(unknown.code, 2, "{}{}", unknown.stdout, unknown.stderr);
    assert!(
        unknown
            .stderr
            .contains("10de:0001 is not in the catalog's gpus.toml"),
        "{}",
        unknown.stderr
    );
}

/// Finding 8: a pin the catalog has no release for says so in full, instead of ending the
/// reasons at "what stood in the way:".
#[test]
fn a_pin_no_release_matches_is_named_and_no_reason_ends_at_a_colon() {
    let home = tempfile::tempdir().unwrap();
    let h200 = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/h200-detect.json"
    );
    let gpuless = home.path().join("gpuless.json");
    fs_err::write(&gpuless, r#"{"os": {"family": "linux"}}"#).unwrap();
    let gpuless = gpuless.to_str().unwrap();
    for (args, pin) in [
        (
            vec![
                "--system",
                gpuless,
                "--profile",
                "cuda-dev",
                "--cuda",
                "99.9",
            ],
            "--cuda 99.9",
        ),
        (
            vec!["--system", h200, "--profile", "cuda-dev", "--cuda", "99.9"],
            "--cuda 99.9",
        ),
        (
            vec!["--system", h200, "--profile", "full", "--torch", "99.9"],
            "--torch 99.9",
        ),
    ] {
        let mut argv = vec!["plan"];
        argv.extend(&args);
        let run = cudaup(&argv, home.path());
        assert_eq!(run.code, 5, "{args:?}: {}{}", run.stdout, run.stderr);
        let why_not: Vec<&str> = run
            .stdout
            .lines()
            .skip_while(|l| *l != "Why not")
            .skip(1)
            .take_while(|l| !l.is_empty())
            .collect();
        assert!(
            why_not.iter().any(|l| l.contains(&format!(
                "{pin}: no {} release in the catalog matches it (it has ",
                if pin.starts_with("--cuda") {
                    "CUDA"
                } else {
                    "PyTorch"
                }
            ))),
            "{args:?}:\n{}",
            run.stdout
        );
        assert!(
            !why_not.last().unwrap().ends_with(':'),
            "{args:?}: the reasons end at a colon:\n{}",
            run.stdout
        );
    }
}
