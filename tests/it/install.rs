//! `cudaup install --profile cuda-dev` and `cudaup mirror create` against synthetic mirrors in
//! NVIDIA's exact layout (tests/it/common/mirror.rs), served from a directory or from a
//! loopback HTTP server that injects faults, and against real NVIDIA wheels through a loopback
//! index. Every failure must leave nothing installed.

use std::path::{Path, PathBuf};
use std::process::Command;

use cudaup::install::report::{InstalledStatus, Outcome};

use crate::common::server::{Fault, Server};
use crate::common::*;

const H200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/h200-detect.json"
);

const NVCC: &str =
    "/compute/cuda/redist/cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-13.0.88-archive.tar.xz";

/// One test's machine: a [`TestContext`] planning for the H200 picture, and beside its HOME the
/// directory the toolkit's prefix goes in (so a failed install can be seen to leave nothing).
struct Env {
    ctx: TestContext,
}

impl Env {
    fn new() -> Self {
        let ctx = TestContext::new().with_system_file(Path::new(H200));
        fs_err::create_dir_all(ctx.dir().join("root")).unwrap();
        Self { ctx }
    }
    /// The prefix's parent.
    fn root(&self) -> PathBuf {
        self.ctx.dir().join("root")
    }
    /// `$CUDAUP_HOME`.
    fn home(&self) -> PathBuf {
        self.ctx.cudaup_home()
    }
    fn prefix(&self) -> PathBuf {
        self.root().join("cuda")
    }
    /// `cudaup install` of CUDA 13.0.2 and cuDNN 9.17.0 from `source` into the prefix (the
    /// picture, the driver kept), then `extra`.
    fn run_install(&self, source: &str, extra: &[&str], env: &[(&str, &str)]) -> Run {
        let prefix = self.prefix().display().to_string();
        let mut args = vec![
            "--profile",
            "cuda-dev",
            "--cuda",
            "13.0.2",
            "--cudnn",
            "9.17.0",
            "--mirror",
            source,
            "--prefix",
            &prefix,
        ];
        args.extend_from_slice(extra);
        self.install_with(&args, env)
    }
    /// `cudaup install` for the picture with the driver kept, then `args`.
    fn install_with(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let system = self.ctx.system_arg();
        let mut all = vec!["install", "--driver", "keep", "--system", &system];
        all.extend_from_slice(args);
        self.ctx.cudaup_env(&all, env)
    }
    fn install(&self, source: &str, extra: &[&str]) -> Run {
        self.install_env(source, extra, &[])
    }
    fn install_env(&self, source: &str, extra: &[&str], env: &[(&str, &str)]) -> Run {
        let mut args = vec!["--yes"];
        args.extend_from_slice(extra);
        self.run_install(source, &args, env)
    }
    /// Nothing but the lock file is left beside the prefix, and the prefix does not exist.
    fn assert_nothing_installed(&self) {
        assert!(
            !self.prefix().exists(),
            "the prefix must not exist after a failed install"
        );
        let left: Vec<String> = fs_err::read_dir(self.root())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != ".cuda.lock")
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}

fn assert_installed(prefix: &Path) {
    let nvcc = prefix.join("bin/nvcc");
    let out = Command::new(&nvcc)
        .arg("--version")
        .output()
        .expect("nvcc runs");
    assert!(String::from_utf8_lossy(&out.stdout)
        .contains("Cuda compilation tools, release 13.0, V13.0.88"));
    assert_eq!(
        fs_err::read_link(prefix.join("lib64/libcudart.so")).unwrap(),
        Path::new("libcudart.so.13")
    );
    assert!(prefix.join("lib64/libcudart.so.13.0.96").is_file());
    let cudnn = fs_err::read_to_string(prefix.join("include/cudnn_version.h")).unwrap();
    assert!(cudnn.contains("#define CUDNN_MINOR 17"));
}

#[test]
fn installs_from_a_directory_mirror_with_a_receipt() {
    let m = synthetic_mirror(&[]);
    let env = Env::new();
    let run = env.install(&m.path().display().to_string(), &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let prefix = env.prefix();
    assert_installed(&prefix);
    // NVIDIA's layout: lib64, nvvm, and the runfile's targets/ links.
    assert!(prefix.join("nvvm/bin/cicc").exists() || prefix.join("nvvm").is_dir());
    assert_eq!(
        fs_err::read_link(prefix.join("lib")).unwrap(),
        Path::new("lib64")
    );
    assert!(prefix
        .join("targets/x86_64-linux/include/cuda_runtime.h")
        .is_file());
    assert!(prefix.join("share/licenses/cuda_nvcc").is_dir());
    // The receipt lists every file with its size and sha256, and the archives.
    let receipt: serde_json::Value =
        serde_json::from_slice(&fs_err::read(prefix.join(".cudaup-receipt.json")).unwrap())
            .unwrap();
    assert_eq!(receipt["cuda"], "13.0.2");
    assert_eq!(receipt["cudnn"], "9.17.0");
    let standard = cudaup::catalog::Catalog::embedded()
        .components
        .members("standard")
        .len();
    assert_eq!(
        receipt["components"].as_array().unwrap().len(),
        standard + 1,
        "the standard set's components + cuDNN"
    );
    let files = receipt["files"].as_array().unwrap();
    let nvcc = files.iter().find(|f| f["path"] == "bin/nvcc").unwrap();
    let bytes = fs_err::read(prefix.join("bin/nvcc")).unwrap();
    assert_eq!(nvcc["size"], bytes.len());
    assert_eq!(nvcc["sha256"].as_str().unwrap(), sha256_hex(&bytes));
    assert!(files
        .iter()
        .any(|f| f["path"] == "lib64/libcudart.so" && f["link"] == "libcudart.so.13"));
    // Registered in the home, so doctor and uninstall can find it.
    let registered = fs_err::read_dir(env.home().join("receipts"))
        .unwrap()
        .filter(|e| {
            !["shell.json", "self.json"]
                .contains(&e.as_ref().unwrap().file_name().to_str().unwrap())
        })
        .count();
    assert_eq!(registered, 1);
    // The env scripts point at the toolkit, and .profile sources them (once).
    let script = fs_err::read_to_string(env.home().join("env")).unwrap();
    assert!(
        script.contains(&format!("{}/bin", prefix.display())),
        "{script}"
    );
    let profile = fs_err::read_to_string(env.ctx.home().join(".profile")).unwrap();
    assert_eq!(profile.matches("/env\"").count(), 1, "{profile}");
    assert!(
        run.stdout.contains("nvcc --version: 13.0.88"),
        "{}",
        run.stdout
    );

    // A second install is served from the unpacked cache and converges on the same prefix.
    let again = env.install(&m.path().display().to_string(), &[]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stderr.contains("cached"), "{}", again.stderr);
    assert_installed(&prefix);
}

/// Points the mirror's `cuda_nvcc` (linux-x86_64) at `bytes`, stored under `rel`, with a
/// matching sha256 and size: what an attacker who controls the mirror can do. Returns the
/// original manifest text.
fn point_nvcc_at(m: &Path, rel: &str, bytes: &[u8]) -> String {
    let manifest_path = m.join("compute/cuda/redist/redistrib_13.0.2.json");
    let original = fs_err::read_to_string(&manifest_path).unwrap();
    fs_err::write(m.join("compute/cuda/redist").join(rel), bytes).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&original).unwrap();
    let entry = &mut doc["cuda_nvcc"]["linux-x86_64"];
    entry["relative_path"] = rel.into();
    entry["sha256"] = sha256_hex(bytes).into();
    entry["size"] = bytes.len().to_string().into();
    fs_err::write(&manifest_path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    original
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

#[test]
fn dry_run_and_missing_yes_change_nothing() {
    let m = synthetic_mirror(&[]);
    let env = Env::new();
    let mirror_arg = m.path().display().to_string();
    let dry = env.run_install(&mirror_arg, &["--dry-run"], &[]);
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(
        dry.stdout.contains("cuda_nvcc") && dry.stdout.contains("cudnn"),
        "{}",
        dry.stdout
    );
    env.assert_nothing_installed();
    let no_yes = env.run_install(&mirror_arg, &[], &[]);
    assert_eq!(no_yes.code, 2);
    assert!(no_yes.stderr.contains("--yes"), "{}", no_yes.stderr);
    env.assert_nothing_installed();
}

#[test]
fn json_output_reports_what_was_installed() {
    let m = synthetic_mirror(&[]);
    let env = Env::new();
    let run = env.install(&m.path().display().to_string(), &["--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["status"], "installed");
    // The document is the library's Outcome: read back, it says what was done.
    let Outcome::Installed(done) = serde_json::from_value(j).unwrap() else {
        panic!("not an install's report: {}", run.stdout)
    };
    assert_eq!(done.status, InstalledStatus::Installed);
    assert_eq!(done.profile, "cuda-dev");
    assert!(done.changed);
    assert!(!done.reboot_required);
    assert_eq!(done.driver, None, "a picture's driver is never touched");
    assert_eq!(done.venv, None, "cuda-dev installs no framework");
    let toolkit = done.toolkit.expect("a toolkit was installed");
    assert_eq!(toolkit.prefix, env.prefix().display().to_string());
    assert_eq!(toolkit.cuda, "13.0.2");
    assert_eq!(toolkit.cudnn.as_deref(), Some("9.17.0"));
    assert_eq!(toolkit.nvcc.as_deref(), Some("13.0.88"));
    assert!(
        toolkit.source.starts_with("redist ")
            && toolkit.source.contains(&m.path().display().to_string()),
        "{}",
        toolkit.source
    );
    for name in ["cuda_nvcc", "cudnn"] {
        assert!(
            toolkit.components.iter().any(|c| c.name == name),
            "{name}: {:?}",
            toolkit.components
        );
    }
    let source = format!(". \"{}/env\"", env.home().display());
    assert_eq!(done.env.expect("the env step ran").source, source);
    // Progress went to stderr as JSON lines.
    let events: Vec<serde_json::Value> = run
        .stderr
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(events.iter().any(|e| e["event"] == "start"));
    assert!(events
        .iter()
        .any(|e| e["event"] == "finish" && e["outcome"] == "done"));
}

#[test]
fn plain_http_needs_allow_http_and_file_urls_work() {
    let m = synthetic_mirror(&[]);
    let server = Server::start(m.path().to_owned());
    let env = Env::new();
    let refused = env.install(&server.url(), &[]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("refusing plain http"),
        "{}",
        refused.stderr
    );
    env.assert_nothing_installed();
    let ok = env.install(&server.url(), &["--allow-http"]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert_installed(&env.prefix());
    let env2 = Env::new();
    let file_url = format!("file://{}", m.path().display());
    let ok = env2.install(&file_url, &[]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
}

/// Each fault on the nvcc archive: the install resumes or retries and succeeds.
#[test]
fn transient_faults_are_survived() {
    let m = synthetic_mirror(&[]);
    // (name, faults, requests at least, resumed with Range)
    type Case = (&'static str, Vec<(Fault, usize)>, usize, bool);
    let cases: Vec<Case> = vec![
        ("reset mid-body", vec![(Fault::ResetAfter(300), 1)], 2, true),
        ("500 then OK", vec![(Fault::Status(500), 2)], 3, false),
        ("truncated body", vec![(Fault::Truncate(300), 1)], 2, true),
        // Reading stops at the size the redistrib JSON lists: the bytes verify at once.
        (
            "Content-Length too long",
            vec![(Fault::WrongLength(100), 1)],
            1,
            false,
        ),
        (
            "Range ignored",
            vec![(Fault::ResetAfter(300), 1), (Fault::IgnoreRange, 1)],
            2,
            false,
        ),
        (
            "416 on resume",
            vec![(Fault::ResetAfter(300), 1), (Fault::RangeNotSatisfiable, 1)],
            3,
            false,
        ),
        (
            "slow trickle",
            vec![(
                Fault::Trickle {
                    bytes_per_chunk: 64,
                    delay_ms: 5,
                },
                1,
            )],
            1,
            false,
        ),
        (
            "stall past the read timeout",
            vec![(
                Fault::Stall {
                    after: 200,
                    ms: 4000,
                },
                1,
            )],
            2,
            true,
        ),
    ];
    for (name, faults, requests, resumes) in cases {
        let server = Server::start(m.path().to_owned());
        for (f, times) in faults {
            server.fault(NVCC, f, times);
        }
        let env = Env::new();
        let run = env.install_env(
            &server.url(),
            &["--allow-http"],
            &[("CUDAUP_HTTP_TIMEOUT", "1")],
        );
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        assert_installed(&env.prefix());
        let log: Vec<_> = server
            .requests()
            .into_iter()
            .filter(|r| r.path == NVCC)
            .collect();
        assert!(
            log.len() >= requests,
            "{name}: {requests} request(s) expected ({log:?})"
        );
        if resumes {
            assert!(
                log[1]
                    .range
                    .as_deref()
                    .is_some_and(|r| r.starts_with("bytes=") && !r.starts_with("bytes=0-")),
                "{name}: resumed with Range ({log:?})"
            );
        }
    }
}

/// Faults that do not go away: a clear error, the right exit code, nothing installed.
#[test]
fn lasting_faults_fail_cleanly() {
    let m = synthetic_mirror(&[]);
    for (name, fault, code, needle) in [
        ("404", Fault::Status(404), 3, "HTTP 404"),
        (
            "500 forever",
            Fault::Status(503),
            3,
            "failed after 4 attempts",
        ),
        (
            "reset forever",
            Fault::ResetAfter(100),
            3,
            "failed after 4 attempts",
        ),
    ] {
        let server = Server::start(m.path().to_owned());
        server.fault(NVCC, fault, 100);
        let env = Env::new();
        let run = env.install(&server.url(), &["--allow-http"]);
        assert_eq!(run.code, code, "{name}: {}", run.stderr);
        assert!(run.stderr.contains(needle), "{name}: {}", run.stderr);
        env.assert_nothing_installed();
    }
}

#[test]
fn a_wrong_checksum_installs_nothing() {
    let m = synthetic_mirror(&[]);
    let archive = m.path().join(NVCC.trim_start_matches('/'));
    let mut bytes = fs_err::read(&archive).unwrap();
    let last = bytes.len() - 20;
    bytes[last] ^= 0xff;
    fs_err::write(&archive, bytes).unwrap();
    let env = Env::new();
    let run = env.install(&m.path().display().to_string(), &[]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(run.stderr.contains("checksum mismatch"), "{}", run.stderr);
    env.assert_nothing_installed();
    // Over http the corrupt download is discarded, not cached.
    let server = Server::start(m.path().to_owned());
    let env = Env::new();
    let run = env.install(&server.url(), &["--allow-http"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    env.assert_nothing_installed();
    let cached: Vec<_> = fs_err::read_dir(env.home().join("cache/downloads"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    assert!(
        cached.iter().all(|n| !n.ends_with(".partial")),
        "{cached:?}"
    );
}

#[test]
fn a_broken_manifest_is_a_verification_error() {
    let m = synthetic_mirror(&[]);
    fs_err::write(
        m.path().join("compute/cuda/redist/redistrib_13.0.2.json"),
        "{\"release_label\": ",
    )
    .unwrap();
    let env = Env::new();
    let run = env.install(&m.path().display().to_string(), &[]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr.contains("not a redistrib JSON"),
        "{}",
        run.stderr
    );
    env.assert_nothing_installed();
}

/// A mirror whose JSON points `cuda_nvcc` at a hostile archive, with a matching sha256 (the
/// attacker controls the mirror): refused, nothing written anywhere.
#[test]
fn hostile_archives_never_write_outside_staging() {
    let evil_cases = [
        ("dotdot.tar.xz", "tar.xz"),
        ("absolute.tar.xz", "tar.xz"),
        ("symlink-escape.tar.xz", "tar.xz"),
        ("hardlink-escape.tar.gz", "tar.gz"),
        ("device.tar.gz", "tar.gz"),
        ("dotdot.zip", "zip"),
    ];
    let m = synthetic_mirror(&["--evil"]);
    let manifest_path = m.path().join("compute/cuda/redist/redistrib_13.0.2.json");
    for (file, ext) in evil_cases {
        let env = Env::new();
        let evil = fs_err::read(m.path().join("evil").join(file)).unwrap();
        let original = point_nvcc_at(
            m.path(),
            &format!("cuda_nvcc/linux-x86_64/evil-archive.{ext}"),
            &evil,
        );
        let run = env.install(&m.path().display().to_string(), &[]);
        fs_err::write(&manifest_path, original).unwrap();
        assert_eq!(run.code, 4, "{file}: {}", run.stderr);
        assert!(
            run.stderr.contains("unsafe archive entry") || run.stderr.contains("unsafe"),
            "{file}: {}",
            run.stderr
        );
        env.assert_nothing_installed();
        for escaped in ["escape", "hardlink-escape", "owned"] {
            assert!(
                !env.root().join(escaped).exists(),
                "{file} escaped to {escaped}"
            );
            for home in [env.ctx.home(), env.home()] {
                assert!(
                    !home.join(escaped).exists(),
                    "{file} escaped into {}",
                    home.display()
                );
            }
            assert!(
                !env.home().join("cache").join(escaped).exists(),
                "{file} escaped into the cache"
            );
        }
    }
}

#[test]
fn a_decompression_bomb_is_stopped() {
    let m = synthetic_mirror(&["--evil"]);
    let env = Env::new();
    let bomb = fs_err::read(m.path().join("evil/bomb.tar.gz")).unwrap();
    point_nvcc_at(
        m.path(),
        "cuda_nvcc/linux-x86_64/bomb-archive.tar.gz",
        &bomb,
    );
    let run = env.install_env(
        &m.path().display().to_string(),
        &[],
        &[("CUDAUP_MAX_UNPACKED_BYTES", "10000000")],
    );
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(run.stderr.contains("beyond the limit"), "{}", run.stderr);
    env.assert_nothing_installed();
}

#[test]
fn a_prefix_cudaup_did_not_make_is_left_alone() {
    let m = synthetic_mirror(&[]);
    let env = Env::new();
    fs_err::create_dir_all(env.prefix().join("bin")).unwrap();
    fs_err::write(env.prefix().join("bin/nvcc"), "mine").unwrap();
    let run = env.install(&m.path().display().to_string(), &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("was not installed by cudaup"),
        "{}",
        run.stderr
    );
    assert_eq!(
        fs_err::read_to_string(env.prefix().join("bin/nvcc")).unwrap(),
        "mine"
    );
}

#[test]
fn ctrl_c_halfway_rolls_back() {
    let m = synthetic_mirror(&[]);
    let server = Server::start(m.path().to_owned());
    // A slow nvcc archive: about 10 s to arrive.
    server.fault(
        NVCC,
        Fault::Trickle {
            bytes_per_chunk: 16,
            delay_ms: 150,
        },
        1,
    );
    let env = Env::new();
    let prefix = env.prefix().display().to_string();
    let url = server.url();
    let system = env.ctx.system_arg();
    let child = env
        .ctx
        .command(&[
            "install",
            "--system",
            &system,
            "--driver",
            "keep",
            "--profile",
            "cuda-dev",
            "--cuda",
            "13.0.2",
            "--cudnn",
            "9.17.0",
            "--mirror",
            &url,
            "--allow-http",
            "--prefix",
            &prefix,
            "--yes",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !server.requests().iter().any(|r| r.path == NVCC) {
        assert!(
            started.elapsed().as_secs() < 30,
            "the download never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        started.elapsed().as_secs() < 9,
        "Ctrl-C must not wait for the download to finish"
    );
    env.assert_nothing_installed();
}

#[test]
#[allow(clippy::print_stderr)]
fn needs_root_a_full_disk_installs_nothing() {
    // A 256 KiB tmpfs for the prefix's parent: the toolkit does not fit. Needs root (CI runs as
    // root); elsewhere the test says why it could not run.
    let env = Env::new();
    let mount = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(env.root())
        .output();
    match mount {
        Ok(o) if o.status.success() => {}
        other => {
            eprintln!("skipping: cannot mount a tmpfs here ({other:?})");
            return;
        }
    }
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let root = env.root();
    let _guard = Unmount(&root);
    // Big enough archives: the synthetic toolkit with a padded nvcc.
    let m = synthetic_mirror(&["--pad-mib", "1"]);
    let run = env.install(&m.path().display().to_string(), &[]);
    // Measured before anything is written (issue 33, finding 10): refused with the numbers.
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("not enough free disk space")
            && run
                .stderr
                .contains("copied into the prefix, which is on another filesystem")
            && run.stderr.contains("and has 256.00 KiB free"),
        "{}",
        run.stderr
    );
    env.assert_nothing_installed();
}

#[test]
fn mirror_create_then_install_offline() {
    let upstream = synthetic_mirror(&[]);
    let server = Server::start(upstream.path().to_owned());
    let ctx = TestContext::new().with_system_file(Path::new(H200));
    let out_dir = tempfile::tempdir().unwrap();
    let out_arg = out_dir.path().join("mirror").display().to_string();
    let system = ctx.system_arg();
    let url = server.url();
    let run = ctx.cudaup(&[
        "mirror",
        "create",
        &out_arg,
        "--system",
        &system,
        "--driver",
        "keep",
        "--profile",
        "cuda-dev",
        "--cuda",
        "13.0.2",
        "--cudnn",
        "9.17.0",
        "--mirror",
        &url,
        "--allow-http",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for manifest in [
        "compute/cuda/redist/redistrib_13.0.2.json",
        "compute/cudnn/redist/redistrib_9.17.0.json",
    ] {
        assert_eq!(
            fs_err::read(out_dir.path().join("mirror").join(manifest)).unwrap(),
            fs_err::read(upstream.path().join(manifest)).unwrap(),
            "{manifest} is copied byte for byte"
        );
    }
    drop(server);
    // The server is gone: the install uses only the new mirror.
    let env = Env::new();
    let run = env.install(&out_arg, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_installed(&env.prefix());
}

/// Real NVIDIA wheels (the two small ones), fetched from PyPI once with pip and then served by a
/// loopback PEP 503 index.
#[test]
fn needs_network_real_nvidia_wheels_through_a_loopback_index() {
    let wheels = pypi_wheels(
        "nvidia-wheels",
        &["nvidia-cuda-runtime==13.0.96", "nvidia-cuda-crt==13.0.88"],
        &[None],
    );
    let index = wheel_index(&wheels);
    let server = Server::start(index.path().to_owned());
    let env = Env::new();
    let prefix = env.prefix().display().to_string();
    let index_url = format!("{}/simple", server.url());
    let run = env.install_with(
        &[
            "--profile",
            "cuda-dev",
            "--cuda",
            "13.0.2",
            "--cudnn",
            "9.17.0",
            "--no-cudnn",
            // Just these two (CUDA 13.0.2's metapackage pins them).
            "--components",
            "cudart,crt",
            "--source",
            "wheels",
            "--index-url",
            &index_url,
            "--allow-http",
            "--prefix",
            &prefix,
            "--yes",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let prefix = env.prefix();
    assert!(prefix.join("lib64/libcudart.so.13").is_file());
    assert!(prefix.join("include/cuda_runtime.h").is_file());
    assert!(prefix.join("include/crt/host_config.h").is_file());
    assert!(
        !prefix
            .join("nvidia_cuda_runtime-13.0.96.dist-info")
            .exists(),
        "packaging metadata stays out"
    );
    let receipt = fs_err::read_to_string(prefix.join(".cudaup-receipt.json")).unwrap();
    assert!(
        receipt.contains("nvidia-cuda-runtime") && receipt.contains("\"version\": \"13.0.96\"")
    );
    // The index was asked for PEP 691 JSON first.
    let log = server.requests();
    assert!(log.iter().any(|r| r
        .accept
        .as_deref()
        .is_some_and(|a| a.contains("application/vnd.pypi.simple.v1+json"))));
}

#[test]
fn leftovers_of_a_killed_run_are_cleaned_up() {
    let m = synthetic_mirror(&[]);
    let env = Env::new();
    // A staging directory and a set-aside prefix, as a run killed at the wrong moment leaves them.
    fs_err::create_dir_all(env.root().join(".cuda.staging-abc123/bin")).unwrap();
    fs_err::create_dir_all(env.root().join(".cuda.old-4242")).unwrap();
    fs_err::write(env.root().join(".cuda.old-4242/.cudaup-receipt.json"), "{}").unwrap();
    let run = env.install(&m.path().display().to_string(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_installed(&env.prefix());
    let mut left: Vec<String> = fs_err::read_dir(env.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, [".cuda.lock", "cuda"]);
}
