//! Issue 25, end to end: what a hostile capture or reports directory holds can neither hang nor
//! exhaust the real binary (`detect`, `doctor`, `fleet report`): a FIFO where a probed file
//! should be, a sparse 8 GiB file, a link to `/dev/zero` and a link out of the capture.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::TestContext;

/// Copies the H200 capture (files and links) into `to`.
fn copy_capture(from: &Path, to: &Path) {
    for e in fs_err::read_dir(from).unwrap().flatten() {
        let dst = to.join(e.file_name());
        let t = e.file_type().unwrap();
        if t.is_dir() {
            fs_err::create_dir_all(&dst).unwrap();
            copy_capture(&e.path(), &dst);
        } else if t.is_symlink() {
            std::os::unix::fs::symlink(fs_err::read_link(e.path()).unwrap(), &dst).unwrap();
        } else {
            fs_err::copy(e.path(), &dst).unwrap();
        }
    }
}

fn mkfifo(path: &Path) {
    let _ = fs_err::remove_file(path);
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Runs `cmd`, failing the test if it is still running after `limit` (the finding: for ever).
fn finishes_within(mut cmd: Command, limit: Duration) -> (i32, String, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {limit:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue 25, finding 7: a FIFO at any probed file hung `detect` and `doctor` for ever; a sparse
/// 8 GiB `os-release` aborted them; a link to `/dev/zero` read about 1 GiB.
#[test]
fn detect_and_doctor_finish_on_a_capture_with_a_fifo_a_sparse_giant_and_links_out() {
    let ctx = TestContext::new();
    let capture = ctx.dir().join("capture");
    copy_capture(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-root"),
        &capture,
    );
    mkfifo(&capture.join("proc/modules"));
    mkfifo(&capture.join("sys/module/nvidia/version"));
    let _ = fs_err::remove_file(capture.join("etc/os-release"));
    fs_err::File::create(capture.join("etc/os-release"))
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    let _ = fs_err::remove_file(capture.join("proc/version"));
    std::os::unix::fs::symlink("/dev/zero", capture.join("proc/version")).unwrap();
    let _ = fs_err::remove_file(capture.join("proc/1/cgroup"));
    std::os::unix::fs::symlink(
        "../../../../../../../../etc/hostname",
        capture.join("proc/1/cgroup"),
    )
    .unwrap();
    let root = capture.display().to_string();
    for args in [
        vec!["detect", "--system-root", root.as_str(), "--json"],
        vec!["doctor", "--system-root", root.as_str()],
    ] {
        let (code, stdout, stderr) = finishes_within(ctx.command(&args), Duration::from_secs(60));
        assert!(
            code == 0 || code == 1,
            "{args:?} exited {code} (a crash is 101 or a signal)\n{stdout}\n{stderr}"
        );
        assert!(!stderr.contains("memory allocation"), "{stderr}");
        if args[0] == "detect" {
            let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            // What could be read still was: the GPUs on the captured PCI bus.
            assert!(
                doc["gpus"].as_array().is_some_and(|g| !g.is_empty()),
                "{stdout}"
            );
        }
    }
}

/// Issue 25, finding 7: `fleet report` on a reports directory with a FIFO for a host's
/// install.json hung for ever, and a sparse giant aborted it; both are the host's problems now.
#[test]
fn fleet_report_finishes_on_a_directory_with_a_fifo_and_a_sparse_giant() {
    let ctx = TestContext::new();
    let reports = ctx.dir().join("reports");
    for host in ["gpu-a", "gpu-b"] {
        fs_err::create_dir_all(reports.join(host)).unwrap();
    }
    mkfifo(&reports.join("gpu-a/install.json"));
    fs_err::File::create(reports.join("gpu-b/install.json"))
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    std::os::unix::fs::symlink("/dev/zero", reports.join("gpu-b/system.json")).unwrap();
    let dir = reports.display().to_string();
    let (code, stdout, stderr) = finishes_within(
        ctx.command(&["fleet", "report", dir.as_str()]),
        Duration::from_secs(60),
    );
    assert!(code != 101 && code >= 0, "exit {code}\n{stdout}\n{stderr}");
    let all = format!("{stdout}{stderr}");
    assert!(all.contains("not a regular file"), "{all}");
    assert!(all.contains("longer than"), "{all}");
}

/// Issue 25, finding 1: a PEP 503 page holding `<a </a>` made `manifests update` (and every
/// other reader of index pages: they share one parser now) exit 101.
#[test]
fn manifests_update_on_a_page_with_an_anchor_closed_inside_its_tag_does_not_panic() {
    let ctx = TestContext::new();
    let index = ctx.dir().join("simple");
    for project in ["torch", "torchvision", "torchaudio", "tensorflow"] {
        fs_err::create_dir_all(index.join(project)).unwrap();
        fs_err::write(
            index.join(project).join("index.html"),
            "<!DOCTYPE html><html><body><a </a></body></html>",
        )
        .unwrap();
    }
    let dir = index.display().to_string();
    let run = ctx.cudaup(&["manifests", "update", "--index-url", &dir, "--only", "pypi"]);
    assert_ne!(run.code, 101, "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    // The pages were read, as pages that list no files.
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("No row changed"), "{}", run.stdout);
}
