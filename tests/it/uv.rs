//! cudaup brings uv (issue 38): with no uv on PATH, a PyTorch install fetches the pinned uv
//! wheel from the step's own indexes (here the real PyPI, the extra index beside a loopback
//! PyTorch index), checks it against manifests/uv.toml, installs with it, keeps uv's cache in
//! the home, and `uninstall --purge` leaves neither. The library's own tests (src/install/uv)
//! cover a loopback mirror, wrong bytes and a changed copy without the network.

use crate::common::server::Server;
use crate::common::*;
use crate::framework::{torch_index, ARCH};

const H200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/h200-detect.json"
);

#[test]
fn needs_network_uv_is_brought_verified_used_and_purged() {
    let index = torch_index(Some("13.0"), ARCH);
    let server = Server::start(index.path().to_owned());
    let home = tempfile::tempdir().unwrap();
    let torch_index = format!("{}/whl", server.url());
    let h = home.path().display().to_string();
    let venv = home.path().join("venv");
    let args = crate::common::pytorch::install_args(home.path(), &venv, H200, &torch_index);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = cudaup_env(&argv, home.path(), &[("CUDAUP_TEST_NO_RETRY_DELAY", "1")]);
    let text = format!("{}\n{}", run.stdout, run.stderr);
    if run.code != 0
        && (text.contains("no uv could be had") || text.contains("error sending request"))
    {
        skipped(
            "needs_network_uv_is_brought_verified_used_and_purged",
            "PyPI did not answer",
        );
        return;
    }
    assert_eq!(run.code, 0, "{text}");
    assert!(
        text.contains("installer: uv 0.13.9 (fetched and verified by cudaup"),
        "{text}"
    );
    let uv = home.path().join("tools/uv-0.13.9/uv");
    assert!(uv.is_file(), "{text}");
    assert!(
        home.path().join("cache/uv").is_dir(),
        "uv's cache lives in the home"
    );
    assert!(
        run.stdout.contains("installed torch 2.14.1 (cu130)"),
        "{text}"
    );

    // doctor finds cudaup's copy intact.
    let doc = cudaup_env(&["--home", &h, "doctor", "--json"], home.path(), &[]);
    assert!(!doc.stdout.contains("\"uv-"), "{}", doc.stdout);
    let un = cudaup_env(
        &["--home", &h, "uninstall", "--purge", "--yes"],
        home.path(),
        &[],
    );
    assert_eq!(un.code, 0, "{}\n{}", un.stdout, un.stderr);
    assert!(!home.path().join("tools").exists(), "{}", un.stdout);
    assert!(!home.path().join("cache").exists(), "{}", un.stdout);
}
