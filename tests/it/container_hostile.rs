//! `cudaup container` against a hostile host (issue 39): links in `--root-prefix` that lead out
//! of it, a FIFO or non-UTF-8 `daemon.json`, a driver root whose library names lead to other
//! files and whose GPU UUIDs are no device names, the home's lock, and the Dockerfile of a host
//! whose plan uses minor-version compatibility. Each asserts the outcome and that nothing
//! outside what cudaup may touch changed (a canary tree hashed before and after).

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use sha2::Digest;

use crate::common::*;
use crate::container::{fake_driver, host_picture, Bin, DOCKER_26, DOCKER_28};

/// Every file under `dir` with its bytes' sha256 and every link with its target, sorted.
fn canary(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs_err::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let meta = p.symlink_metadata().unwrap();
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            if meta.is_dir() {
                out.push((rel, "dir".into()));
                todo.push(p);
            } else if meta.file_type().is_symlink() {
                out.push((
                    rel,
                    format!("-> {}", fs_err::read_link(&p).unwrap().display()),
                ));
            } else if !meta.is_file() {
                // A FIFO or a device: its kind, never its bytes (reading a FIFO blocks).
                out.push((rel, format!("{:?}", meta.file_type())));
            } else {
                out.push((
                    rel,
                    hex::encode(sha2::Sha256::digest(fs_err::read(&p).unwrap())),
                ));
            }
        }
    }
    out.sort();
    out
}

struct Host {
    home: tempfile::TempDir,
    prefix: tempfile::TempDir,
    driver: Tree,
    bin: Bin,
    host: Tree,
}

impl Host {
    fn new(docker: &str) -> Self {
        let driver = Tree::new();
        fake_driver(&driver, "580.95.05", false);
        let bin = Bin::new();
        bin.engine("docker", docker, None);
        let host = host_picture(0);
        host.symlink("/dev/char/195:0", "../nvidia0");
        Host {
            home: tempfile::tempdir().unwrap(),
            prefix: tempfile::tempdir().unwrap(),
            driver,
            bin,
            host,
        }
    }

    /// `container setup --engine docker` over this host; the run ends within 60 s or fails.
    fn setup(&self, extra: &[&str]) -> Run {
        self.run(&[], extra)
    }

    /// The same, with global flags (`--no-wait`) before `container`.
    fn run(&self, global: &[&str], extra: &[&str]) -> Run {
        let args: Vec<String> = global
            .iter()
            .copied()
            .chain([
                "container",
                "setup",
                "--engine",
                "docker",
                "--system-root",
                &self.host.root_arg(),
                "--root-prefix",
                self.prefix.path().to_str().unwrap(),
                "--driver-root",
                self.driver.path().to_str().unwrap(),
            ])
            .map(|s| s.to_string())
            .chain(extra.iter().map(|s| s.to_string()))
            .collect();
        let home = self.home.path().to_owned();
        let env = [
            ("PATH".to_owned(), self.bin.path()),
            (
                "XDG_CONFIG_HOME".to_owned(),
                home.join(".config").display().to_string(),
            ),
        ];
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let _ = tx.send(cudaup_env(&args, &home, &env));
        });
        rx.recv_timeout(Duration::from_secs(60))
            .expect("container setup hung (a FIFO read without O_NONBLOCK?)")
    }
}

#[test]
fn links_in_the_root_prefix_never_lead_a_write_out_of_it() {
    let h = Host::new(DOCKER_26);
    let outside = tempfile::tempdir().unwrap();
    fs_err::create_dir_all(outside.path().join("cdi")).unwrap();
    fs_err::write(outside.path().join("daemon.json"), "{\"mine\": true}\n").unwrap();
    let before = canary(outside.path());
    // An image rootfs is full of absolute links: here two of them name the host's files.
    let link = |at: &str, to: &Path| {
        let p = h.prefix.path().join(at);
        fs_err::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(to, p).unwrap();
    };
    link("etc/cdi", &outside.path().join("cdi"));
    link(
        "etc/docker/daemon.json",
        &outside.path().join("daemon.json"),
    );
    let r = h.setup(&[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        canary(outside.path()),
        before,
        "a write left the root prefix"
    );
    // The links were followed as the image would follow them: inside the prefix.
    let inside = h
        .prefix
        .path()
        .join(outside.path().strip_prefix("/").unwrap());
    assert!(
        inside.join("cdi/cudaup-nvidia.json").is_file(),
        "{}",
        r.stdout
    );
    let d: serde_json::Value =
        serde_json::from_slice(&fs_err::read(inside.join("daemon.json")).unwrap()).unwrap();
    assert_eq!(d["features"]["cdi"], true);
    // And uninstall takes back exactly that.
    let un = cudaup(&["uninstall", "--yes"], h.home.path());
    assert_eq!(un.code, 0, "{}\n{}", un.stdout, un.stderr);
    assert!(!inside.join("cdi/cudaup-nvidia.json").exists());
    assert_eq!(canary(outside.path()), before);
}

#[test]
fn a_fifo_or_a_non_utf8_daemon_json_is_refused_at_once_and_nothing_is_written() {
    for case in ["fifo", "latin-1"] {
        let h = Host::new(DOCKER_26);
        let daemon = h.prefix.path().join("etc/docker/daemon.json");
        fs_err::create_dir_all(daemon.parent().unwrap()).unwrap();
        if case == "fifo" {
            let st = std::process::Command::new("mkfifo")
                .arg(&daemon)
                .status()
                .unwrap();
            assert!(st.success());
        } else {
            fs_err::write(&daemon, b"{\"log-opts\": {\"tag\": \"caf\xe9\"}}\n").unwrap();
        }
        let before = canary(h.prefix.path());
        for extra in [&["--dry-run"][..], &[]] {
            let r = h.setup(extra);
            assert_eq!(r.code, 2, "{case} {extra:?}: {}\n{}", r.stdout, r.stderr);
            assert!(r.stderr.contains("daemon.json"), "{}", r.stderr);
            assert!(r.stderr.contains("nothing was changed"), "{}", r.stderr);
            if case == "fifo" {
                assert!(r.stderr.contains("not a regular file"), "{}", r.stderr);
            }
        }
        // Not the spec either: a refused setup leaves nothing, and records nothing.
        assert_eq!(canary(h.prefix.path()), before, "{case}");
        assert!(!h
            .home
            .path()
            .join(".local/share/cudaup/receipts/container")
            .exists());
    }
}

#[test]
fn a_hostile_driver_root_mounts_no_foreign_file_and_names_no_bad_device() {
    let driver = Tree::new();
    fake_driver(&driver, "580.95.05", false);
    // A library name that leads to /etc/shadow, and a UUID that is no CDI device name.
    driver.file("/etc/shadow", "root:$6$secret:19000:0:99999:7:::\n");
    let lib = driver
        .path()
        .join("usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.95.05");
    fs_err::remove_file(&lib).unwrap();
    std::os::unix::fs::symlink("/etc/shadow", &lib).unwrap();
    driver.file(
        "/proc/driver/nvidia/gpus/0000:19:00.0/information",
        "Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-1;touch /tmp/x\nDevice Minor: \t 0\n",
    );
    let home = tempfile::tempdir().unwrap();
    let r = cudaup(
        &[
            "container",
            "spec",
            "--driver-root",
            driver.path().to_str().unwrap(),
        ],
        home.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains("shadow"), "{}", r.stdout);
    assert!(!r.stdout.contains("touch"), "{}", r.stdout);
    let spec: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let names: Vec<&str> = spec["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["0", "all"]);
    // The honest libraries are still there, mounted from where their names lead.
    assert!(r.stdout.contains("libcuda.so.580.95.05"), "{}", r.stdout);
    assert!(r.stderr.contains("left out of the spec"), "{}", r.stderr);
    assert!(r.stderr.contains("not a CDI device name"), "{}", r.stderr);
}

#[test]
fn a_second_setup_waits_for_the_home_lock_or_says_who_holds_it() {
    let h = Host::new(DOCKER_28);
    let cudaup_home = h.home.path().join(".local/share/cudaup");
    fs_err::create_dir_all(&cudaup_home).unwrap();
    let home = cudaup::install::home::Home::at(&cudaup_home);
    let held = home.lock(false, |_| {}).unwrap();
    let before = canary(h.prefix.path());
    let r = h.run(&["--no-wait"], &[]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(&format!("pid {}", std::process::id())),
        "{}",
        r.stderr
    );
    assert_eq!(canary(h.prefix.path()), before);
    drop(held);
    // A dry run takes no lock.
    let _held = home.lock(false, |_| {}).unwrap();
    let dry = h.run(&["--no-wait"], &["--dry-run"]);
    assert_eq!(dry.code, 0, "{}\n{}", dry.stdout, dry.stderr);
}

#[test]
fn the_dockerfile_of_a_4090_on_r580_starts_from_an_image_its_driver_runs() {
    let mut picture: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/h200-detect.json")).unwrap();
    picture["gpus"][0]["name"] = "NVIDIA GeForce RTX 4090".into();
    picture["gpus"][0]["pci_id"] = "10de:2684".into();
    picture["gpus"][0]["compute_capability"] = "8.9".into();
    picture["gpus"][0]["architecture"] = "Ada Lovelace".into();
    picture["gpus"][0]["memory_mib"] = 24564.into();
    picture["driver"]["version"] = "580.95.05".into();
    picture["driver"]["cuda_version"] = "13.0".into();
    let home = tempfile::tempdir().unwrap();
    let system = home.path().join("4090.json");
    fs_err::write(&system, serde_json::to_vec(&picture).unwrap()).unwrap();
    let plan = cudaup(
        &[
            "plan",
            "--profile",
            "full",
            "--driver",
            "keep",
            "--system",
            system.to_str().unwrap(),
            "--json",
        ],
        home.path(),
    );
    assert_eq!(plan.code, 0, "{}", plan.stderr);
    let r = cudaup(
        &[
            "container",
            "dockerfile",
            "--profile",
            "full",
            "--driver",
            "keep",
            "--system",
            system.to_str().unwrap(),
        ],
        home.path(),
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let from = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("FROM "))
        .expect("a FROM line");
    let tag = from.strip_prefix("nvidia/cuda:").expect("NVIDIA's image");
    let cuda = cudaup::model::version::Version::parse(tag.split('-').next().unwrap()).unwrap();
    assert!(
        cuda <= cudaup::model::version::Version::parse("13.0.99").unwrap(),
        "{from} needs a newer CUDA than driver 580.95.05 runs natively:\n{}",
        r.stdout
    );
}

/// Issue 39, finding 7: a damaged container receipt. Truncated, `container uninstall` (and
/// `cudaup uninstall`) exit 1 saying the receipt is damaged and naming the host files it still
/// shows, and change nothing;
/// a forged record (a file elsewhere, with that file's digest) is kept, never removed.
#[test]
fn a_damaged_container_receipt_undoes_nothing_it_cannot_prove() {
    let h = Host::new(DOCKER_26);
    let r = h.setup(&[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let cudaup_home = h.home.path().join(".local/share/cudaup");
    let receipt = cudaup::install::host_files::Receipt::path(&cudaup_home);
    let whole = fs_err::read_to_string(&receipt).unwrap();
    let spec = h.prefix.path().join("etc/cdi/cudaup-nvidia.json");
    assert!(spec.is_file(), "{}", r.stdout);
    let before = canary(h.prefix.path());

    fs_err::write(&receipt, &whole[..whole.len() * 2 / 3]).unwrap();
    let un = cudaup(&["container", "uninstall"], h.home.path());
    assert_eq!(un.code, 1, "{}\n{}", un.stdout, un.stderr);
    assert!(
        un.stderr.contains("is damaged") && un.stderr.contains("changes none"),
        "{}",
        un.stderr
    );
    assert!(
        un.stderr.contains(&spec.display().to_string()),
        "names the spec it still shows: {}",
        un.stderr
    );
    assert_eq!(canary(h.prefix.path()), before, "nothing changed");
    // `cudaup uninstall` too: it refuses, and the home (with the receipt) stays.
    let all = cudaup(&["uninstall", "--yes"], h.home.path());
    assert_eq!(all.code, 1, "{}\n{}", all.stdout, all.stderr);
    assert!(all.stderr.contains("is damaged"), "{}", all.stderr);
    assert!(receipt.is_file(), "the damaged receipt is kept");
    assert_eq!(canary(h.prefix.path()), before, "nothing changed");

    // A record forged into a whole receipt: another file with its own digest.
    let victim = h.prefix.path().join("etc/hostname");
    fs_err::write(&victim, "node-1\n").unwrap();
    let before = canary(h.prefix.path());
    let mut doc: serde_json::Value = serde_json::from_str(&whole).unwrap();
    doc["files"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "path": victim,
            "before": null,
            "after_sha256": hex::encode(sha2::Sha256::digest(b"node-1\n")),
            "created_dirs": [h.home.path()],
            "what": "forged"
        }));
    fs_err::write(&receipt, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let un = cudaup(&["container", "uninstall"], h.home.path());
    assert_eq!(un.code, 1, "{}\n{}", un.stdout, un.stderr);
    assert!(un.stdout.contains("damaged"), "{}", un.stdout);
    assert_eq!(fs_err::read_to_string(&victim).unwrap(), "node-1\n");
    // What the receipt proves is undone: the spec it wrote goes.
    assert!(!spec.exists(), "{}", un.stdout);
    let after = canary(h.prefix.path());
    assert!(after.iter().any(|(p, _)| p == "etc/hostname"), "{after:?}");
    assert_ne!(after, before);
}

/// Issue 39, finding 7: setup's `daemon.json` edit keeps what cudaup does not own — an integer
/// past u64 and f64 stays as written, the members keep their order — and the file keeps its
/// mode; uninstall puts the original bytes back.
#[test]
fn the_daemon_json_edit_keeps_values_and_mode() {
    use std::os::unix::fs::PermissionsExt;
    let h = Host::new(DOCKER_26);
    let conf = h.prefix.path().join("etc/docker/daemon.json");
    fs_err::create_dir_all(conf.parent().unwrap()).unwrap();
    let original = "{\n  \"max-concurrent-uploads\": 123456789012345678901234567890,\n  \"log-opts\": {\"max-size\": \"10m\"}\n}\n";
    fs_err::write(&conf, original).unwrap();
    fs_err::set_permissions(&conf, std::fs::Permissions::from_mode(0o640)).unwrap();
    let r = h.setup(&[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let edited = fs_err::read_to_string(&conf).unwrap();
    assert!(
        edited.contains("\"max-concurrent-uploads\": 123456789012345678901234567890,")
            && edited.contains("\"log-opts\": {\"max-size\": \"10m\"}"),
        "{edited}"
    );
    let v: serde_json::Value = serde_json::from_str(&edited).unwrap();
    assert_eq!(v["features"]["cdi"], true, "{edited}");
    let mode = |p: &Path| fs_err::metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&conf), 0o640);
    let un = cudaup(&["container", "uninstall"], h.home.path());
    assert_eq!(un.code, 0, "{}\n{}", un.stdout, un.stderr);
    assert_eq!(fs_err::read_to_string(&conf).unwrap(), original);
    assert_eq!(mode(&conf), 0o640);
}

/// The owner half of the daemon.json test: as root, a `daemon.json` owned by another user keeps
/// its owner through setup and uninstall.
#[test]
fn needs_root_the_daemon_json_edit_keeps_its_owner() {
    use std::os::unix::fs::MetadataExt;
    let test = "needs_root_the_daemon_json_edit_keeps_its_owner";
    let uid = std::process::Command::new("id").arg("-u").output();
    if !uid.is_ok_and(|o| o.stdout.starts_with(b"0\n")) {
        return skipped(test, "not root: only root can give a file another owner");
    }
    let h = Host::new(DOCKER_26);
    let conf = h.prefix.path().join("etc/docker/daemon.json");
    fs_err::create_dir_all(conf.parent().unwrap()).unwrap();
    fs_err::write(&conf, "{\"debug\": true}\n").unwrap();
    std::os::unix::fs::chown(&conf, Some(4242), Some(4343)).unwrap();
    let r = h.setup(&[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let owner = |p: &Path| {
        let m = fs_err::metadata(p).unwrap();
        (m.uid(), m.gid())
    };
    assert!(fs_err::read_to_string(&conf).unwrap().contains("\"cdi\""));
    assert_eq!(owner(&conf), (4242, 4343));
    let un = cudaup(&["container", "uninstall"], h.home.path());
    assert_eq!(un.code, 0, "{}\n{}", un.stdout, un.stderr);
    assert_eq!(owner(&conf), (4242, 4343));
}
