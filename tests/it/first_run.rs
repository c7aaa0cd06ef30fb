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
    let run = cudaup(&["plan", "--system", f, "--profile", "pytorch", "--json"], home.path());
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let plan = run.json();
    assert_eq!(plan["status"], "ok", "{plan}");
    let text = cudaup(&["plan", "--system", f, "--profile", "pytorch"], home.path());
    assert!(
        text.stdout.contains("for NVIDIA H200 SXM 141GB")
            && text.stdout.contains("compute capability 9.0"),
        "{}",
        text.stdout
    );
    assert!(!text.stdout.contains("compute capability unknown"), "{}", text.stdout);

    // What the file states wins over the table.
    fs_err::write(
        &file,
        r#"{"os": {"family": "linux"}, "gpus": [{"index": 0, "vendor": "nvidia", "name": "my H200", "pci_id": "10de:2335"}]}"#,
    )
    .unwrap();
    let named = cudaup(&["plan", "--system", f, "--profile", "pytorch"], home.path());
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
        unknown.stderr.contains("10de:0001 is not in the catalog's gpus.toml"),
        "{}",
        unknown.stderr
    );
}
