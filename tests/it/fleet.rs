//! The fleet: the Ansible role in `scripts/ansible/` run by real `ansible-core` (installed from
//! the package registry with pip, once, into CARGO_TARGET_TMPDIR) against an inventory of hosts
//! on this machine — local connection, each host with its own tree standing for `/` (its
//! CUDAUP_HOME, HOME, binary, config and reports inside), its own machine picture
//! (`install --system`), and a synthetic mirror served over loopback HTTP — then
//! `cudaup fleet report` over the reports the role fetched.
//!
//! Nothing here reboots or touches the real system: the role's reboot runs a stand-in command
//! (cudaup_reboot_command) that records the "reboot" and loads the "new driver" into the host's
//! machine picture. This machine has no GPU, so `verify` fails its GPU checks on every host, and
//! the fleet report must say so.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::{json, Value};

use crate::common::server::Server;
use crate::common::*;

/// The Python that runs pip, ansible-playbook and the modules (sys.executable of `python3`).
pub(crate) fn python() -> PathBuf {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    assert!(out.status.success());
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// ansible-core installed with pip into CARGO_TARGET_TMPDIR/ansible (kept across runs: `done`
/// marks a finished install). `Err` says why pip could not install it.
pub(crate) fn ansible(python: &Path) -> Result<PathBuf, String> {
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ansible");
    if dir.join("done").exists() {
        return Ok(dir);
    }
    // Into a fresh directory beside it, renamed into place: a killed run leaves no half install.
    let tmp =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("ansible.{}", std::process::id()));
    let _ = fs_err::remove_dir_all(&tmp);
    let out = Command::new(python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--target",
        ])
        .arg(&tmp)
        .arg("ansible-core")
        .output()
        .map_err(|e| format!("pip did not run: {e}"))?;
    if !out.status.success() {
        let _ = fs_err::remove_dir_all(&tmp);
        return Err(format!(
            "pip install ansible-core failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    fs_err::write(tmp.join("done"), "").unwrap();
    let _ = fs_err::remove_dir_all(&dir);
    fs_err::rename(&tmp, &dir).unwrap();
    Ok(dir)
}

/// One host of the test lab: its name and the tree standing for its `/`.
pub(crate) struct Host {
    pub(crate) name: &'static str,
    pub(crate) tree: Tree,
}

impl Host {
    pub(crate) fn at(&self, machine_path: &str) -> PathBuf {
        self.tree.path().join(machine_path.trim_start_matches('/'))
    }
    pub(crate) fn s(&self, machine_path: &str) -> String {
        self.at(machine_path).display().to_string()
    }
}

pub(crate) fn system(gpu: (&str, &str, &str, &str), driver: Option<(&str, &str, &str)>) -> Value {
    json!({
        "schema_version": 1,
        "os": {"family": "linux", "distro": "ubuntu", "version": "24.04", "arch": "x86_64",
               "kernel": "6.8.0-45-generic", "wsl": false, "secure_boot": false},
        "gpus": [{"index": 0, "vendor": "nvidia", "name": gpu.0, "pci_id": gpu.1,
                  "compute_capability": gpu.2, "architecture": gpu.3, "memory_mib": null}],
        "driver": driver.map(|(v, cuda, module)| json!({"version": v, "cuda_version": cuda, "kernel_module": module})),
    })
}

const GTX_1080_TI: (&str, &str, &str, &str) =
    ("NVIDIA GeForce GTX 1080 Ti", "10de:1b06", "6.1", "Pascal");
pub(crate) const RTX_5090: (&str, &str, &str, &str) =
    ("NVIDIA GeForce RTX 5090", "10de:2b85", "12.0", "Blackwell");
pub(crate) const RTX_4090: (&str, &str, &str, &str) =
    ("NVIDIA GeForce RTX 4090", "10de:2684", "8.9", "Ada");

/// Stands in for the driver step, which cannot run here (no GPU, and tests never touch the real
/// system): `cudaup install --json` runs the real binary; when its plan installs or upgrades the
/// driver and the report does not already ask for a reboot (with `--system`, cudaup installs no
/// driver), the report says what the driver step would: changed, reboot required.
const DRIVER_STAND_IN: &str = r#"
import json, subprocess, sys
REAL = sys.argv.pop(1)
run = subprocess.run([REAL] + sys.argv[1:], stdout=subprocess.PIPE)
out = run.stdout
if "install" in sys.argv and "--json" in sys.argv and run.returncode == 0:
    report = json.loads(out)
    driver = next((c for c in report["plan"]["components"] if c["name"] == "driver"), None)
    if driver and driver["action"] in ("install", "upgrade") and not report["reboot_required"]:
        report["reboot_required"] = True
        report["changed"] = True
        report["driver"] = {"stand_in": "driver %s installed by the test's stand-in" % driver["version"]}
    out = (json.dumps(report, indent=2) + "\n").encode()
sys.stdout.buffer.write(out)
sys.exit(run.returncode)
"#;

/// host, driver action, driver, CUDA, cuDNN, cuDNN's CUDA major.
type Expected = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
);

pub(crate) struct Lab {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) python: PathBuf,
    pub(crate) ansible: PathBuf,
}

impl Lab {
    pub(crate) fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    /// ansible-playbook site.yml; returns its exit code, the PLAY RECAP (host → counter → n)
    /// and the whole output.
    pub(crate) fn playbook(&self) -> (i32, BTreeMap<String, BTreeMap<String, u64>>, String) {
        let site = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/ansible/site.yml");
        fs_err::create_dir_all(self.path("control-home/.ansible")).unwrap();
        let mut cmd = Command::new(&self.python);
        cmd.arg(self.ansible.join("bin/ansible-playbook"))
            .arg("-i")
            .arg(self.path("inventory.yml"))
            .arg(site)
            .current_dir(self.dir.path());
        let out = crate::common::hermetic(&mut cmd, &self.path("control-home"))
            .env("PYTHONPATH", &self.ansible)
            .env("ANSIBLE_HOME", self.path("control-home/.ansible"))
            .env("ANSIBLE_LOCAL_TEMP", self.path("ansible-tmp/local"))
            .env("ANSIBLE_REMOTE_TEMP", self.path("ansible-tmp/remote"))
            .env("ANSIBLE_CONFIG", self.path("ansible.cfg"))
            .env("ANSIBLE_NOCOLOR", "1")
            .env("ANSIBLE_FORKS", "8")
            .env("ANSIBLE_PIPELINING", "1")
            .env("ANSIBLE_RETRY_FILES_ENABLED", "0")
            .env("LC_ALL", "C.UTF-8")
            .output()
            .expect("ansible-playbook runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), recap(&text), text)
    }
}

/// The PLAY RECAP: `node-1 : ok=11 changed=4 unreachable=0 failed=0 skipped=6 ...`.
fn recap(output: &str) -> BTreeMap<String, BTreeMap<String, u64>> {
    let Some((_, tail)) = output.split_once("PLAY RECAP") else {
        panic!("no PLAY RECAP in:\n{output}");
    };
    tail.lines()
        .filter_map(|l| {
            let (host, counters) = l.split_once(" : ")?;
            let counters: BTreeMap<String, u64> = counters
                .split_whitespace()
                .filter_map(|kv| {
                    let (k, v) = kv.split_once('=')?;
                    Some((k.to_owned(), v.parse().ok()?))
                })
                .collect();
            (!counters.is_empty()).then(|| (host.trim().to_owned(), counters))
        })
        .collect()
}

fn component<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["plan"]["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {report}"))
}

fn read_json(path: &Path) -> Value {
    let text = fs_err::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

#[test]
#[allow(clippy::print_stderr)]
fn ansible_installs_each_host_its_own_stack_and_a_second_run_changes_nothing() {
    let python = python();
    let ansible = match ansible(&python) {
        Ok(dir) => dir,
        Err(why) => {
            eprintln!("skipped: ansible-core could not be installed: {why}");
            return;
        }
    };
    let lab = Lab {
        dir: tempfile::tempdir().unwrap(),
        python: python.clone(),
        ansible,
    };
    fs_err::write(lab.path("ansible.cfg"), "[defaults]\n").unwrap();

    // One mirror for the fleet, with every release the hosts need, served over plain HTTP.
    let mirror = tempfile::tempdir().unwrap();
    for (cuda, cudnn) in [
        ("12.1.1", "9.10.2"),
        ("12.2.2", "9.10.2"),
        ("12.9.2", "9.28.0"),
        ("13.0.3", "9.28.1"),
        ("13.2.2", "9.28.1"),
    ] {
        crate::common::mirror::MirrorSpec::from_args(&["--cuda", cuda, "--cudnn", cudnn])
            .build(mirror.path());
    }
    let server = Server::start(mirror.path().to_owned());

    // The cudaup "binary" every host gets: the driver-step stand-in around the real one.
    let stand_in = lab.path("cudaup-stand-in");
    fs_err::write(
        &stand_in,
        format!(
            "#!/bin/sh\nexec {} - {} \"$@\" <<'PY'\n{DRIVER_STAND_IN}\nPY\n",
            python.display(),
            env!("CARGO_BIN_EXE_cudaup")
        ),
    )
    .unwrap();
    fs_err::set_permissions(
        &stand_in,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();

    // One config for the whole fleet: no CUDA pin, the lab mirror over plain HTTP.
    let config = lab.path("cudaup.toml");
    fs_err::write(
        &config,
        format!(
            "version = 1\nprofile = \"cuda-dev\"\n\n[shell]\nmodify_path = false\n\n[sources]\nnvidia_mirror = \"{}\"\nallow_http = true\n",
            server.url()
        ),
    )
    .unwrap();

    let hosts: Vec<Host> = [
        "node-1080ti",
        "node-1080ti-b",
        "node-1080ti-c",
        "node-4090",
        "node-5090",
        "node-h200",
    ]
    .into_iter()
    .map(|name| Host {
        name,
        tree: Tree::new(),
    })
    .collect();
    let host = |name: &str| hosts.iter().find(|h| h.name == name).unwrap();
    let gtx = system(GTX_1080_TI, Some(("535.183.01", "12.2", "proprietary")));
    for h in &hosts {
        let picture = match h.name {
            "node-4090" => system(RTX_4090, None), // fresh from the OS install: no driver yet
            "node-5090" => system(RTX_5090, Some(("575.57.08", "12.9", "open"))),
            "node-h200" => {
                let mut s = read_json(Path::new(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/tests/fixtures/h200-detect.json"
                )));
                // What install --system plans with: the GPUs and the driver.
                s["toolkits"] = json!([]);
                s["cudnn"] = json!([]);
                s["pythons"] = json!([]);
                s
            }
            _ => gtx.clone(),
        };
        h.tree
            .file("/etc/cudaup/system.json", picture.to_string())
            .dir("/home/admin")
            .dir("/var/log");
    }
    // What the stand-in reboot loads: the driver the plan installed on node-4090.
    host("node-4090").tree.file(
        "/etc/cudaup/system-after-reboot.json",
        system(RTX_4090, Some(("595.71.05", "13.2", "open"))).to_string(),
    );

    // The inventory: every host local, everything of cudaup's inside the host's tree.
    let fetched = lab.path("reports");
    let mut inventory_hosts = serde_json::Map::new();
    for h in &hosts {
        let mut vars = json!({
            "ansible_connection": "local",
            "ansible_python_interpreter": python.display().to_string(),
            "cudaup_bin_dir": h.s("/usr/local/bin"),
            "cudaup_config_path": h.s("/etc/cudaup/cudaup.toml"),
            "cudaup_report_dir": h.s("/var/lib/cudaup/reports"),
            "cudaup_home": h.s("/opt/cudaup"),
            "cudaup_system_file": h.s("/etc/cudaup/system.json"),
            "cudaup_environment": {"HOME": h.s("/home/admin"), "PATH": tools_path(), "CUDAUP_NO_NVML": "1", "CUDAUP_TEST_GUARD": test_name()},
            "cudaup_reboot_command": format!(
                "echo \"$(date +%s) {{{{ inventory_hostname }}}}\" >> {log}; if [ -f {after} ]; then cp {after} {picture}; fi",
                log = h.s("/var/log/reboots.log"),
                after = h.s("/etc/cudaup/system-after-reboot.json"),
                picture = h.s("/etc/cudaup/system.json"),
            ),
        });
        match h.name {
            // Its own copy of the mirror, as a directory, through the role's cudaup_mirror.
            "node-h200" => vars["cudaup_mirror"] = json!(mirror.path().display().to_string()),
            // Pinned by hand: same GPUs as the other two 1080 Ti nodes, an older CUDA.
            "node-1080ti-c" => vars["cudaup_install_extra_args"] = json!(["--cuda", "12.1"]),
            _ => {}
        }
        inventory_hosts.insert(h.name.to_owned(), vars);
    }
    let inventory = json!({"all": {
        "children": {"gpu_nodes": {"hosts": inventory_hosts}},
        "vars": {
            "cudaup_binary_src": stand_in.display().to_string(),
            "cudaup_config_src": config.display().to_string(),
            "cudaup_fetch_dir": fetched.display().to_string(),
            "cudaup_become": false,
            // No GPU here: every host fails verify's GPU checks; the fleet report shows it.
            "cudaup_fail_on_verify": false,
        },
    }});
    fs_err::write(
        lab.path("inventory.yml"),
        serde_json::to_string_pretty(&inventory).unwrap(),
    )
    .unwrap();

    // First run: everything is installed; node-4090 gets a driver, so it "reboots" and cudaup
    // runs again.
    let (code, stats, output) = lab.playbook();
    assert_eq!(code, 0, "{output}");
    assert_eq!(stats.len(), hosts.len(), "{output}");
    for (name, s) in &stats {
        assert_eq!((s["failed"], s["unreachable"]), (0, 0), "{name}: {s:?}");
        assert!(
            s["changed"] > 0,
            "{name}: a first run changes the host: {s:?}"
        );
    }
    for h in &hosts {
        let log = h.at("/var/log/reboots.log");
        if h.name == "node-4090" {
            let text = fs_err::read_to_string(&log).unwrap();
            assert_eq!(text.lines().count(), 1, "one reboot: {text}");
            assert!(text.contains("node-4090"));
        } else {
            assert!(!log.exists(), "{} needed no reboot", h.name);
        }
    }

    // The reports came back, one directory per host, and each host got its own plan.
    let report = |name: &str, file: &str| read_json(&fetched.join(name).join(file));
    let plans: Vec<Expected> = vec![
        // host, driver action, driver, CUDA, cuDNN, cuDNN's CUDA major
        (
            "node-1080ti",
            "keep",
            "535.183.01",
            "12.2.2",
            Some("9.10.2"),
            Some("12"),
        ),
        (
            "node-1080ti-b",
            "keep",
            "535.183.01",
            "12.2.2",
            Some("9.10.2"),
            Some("12"),
        ),
        (
            "node-1080ti-c",
            "keep",
            "535.183.01",
            "12.1.1",
            Some("9.10.2"),
            Some("12"),
        ),
        // Before the catalog knew cuDNN for CUDA 13.2 this host got none.
        (
            "node-4090",
            "keep",
            "595.71.05",
            "13.2.2",
            Some("9.28.1"),
            Some("13"),
        ),
        (
            "node-5090",
            "keep",
            "575.57.08",
            "12.9.2",
            Some("9.28.0"),
            Some("12"),
        ),
        (
            "node-h200",
            "keep",
            "580.159.04",
            "13.0.3",
            Some("9.28.1"),
            Some("13"),
        ),
    ];
    for (name, action, driver, cuda, cudnn, variant) in &plans {
        let install = report(name, "install.json");
        assert_eq!(install["profile"], "cuda-dev", "{name}");
        assert_eq!(install["reboot_required"], false, "{name}: {install}");
        let d = component(&install, "driver");
        assert_eq!(
            (d["action"].as_str(), d["version"].as_str()),
            (Some(*action), Some(*driver)),
            "{name}"
        );
        let c = component(&install, "cudnn");
        assert_eq!(c["version"].as_str(), *cudnn, "{name}");
        assert_eq!(c["cuda_variant"].as_str(), *variant, "{name}");
        let toolkit = host(name).at(&format!("/opt/cudaup/toolkits/cuda-{cuda}/bin/nvcc"));
        assert!(
            toolkit.is_file(),
            "{name}: {} is installed",
            toolkit.display()
        );
        if *name == "node-4090" {
            // The report kept is the run after the reboot: it only continued.
            assert_eq!(install["changed"], false, "{install}");
            assert_eq!(component(&install, "cuda")["action"], "keep");
        } else {
            assert_eq!(install["changed"], true, "{name}");
            assert_eq!(install["toolkit"]["cuda"], *cuda, "{name}");
        }
        let verify = report(name, "verify.json");
        assert_eq!(verify["ok"], false, "{name}: no GPU on this machine");
        assert!(
            verify["checks"]
                .as_array()
                .unwrap()
                .iter()
                // No GPU here: what needs one is skipped, not failed (issue 13); the synthetic
                // libraries still fail their link checks.
                .any(|c| c["id"] == "driver" && c["status"] == "skip"),
            "{name}: {verify}"
        );
        assert!(report(name, "system.json")["gpus"].is_array());
    }
    // A GTX 1080 Ti cannot use CUDA 13; an RTX 5090 needs 12.8 or newer.
    assert!(report("node-1080ti", "install.json")["toolkit"]["cuda"]
        .as_str()
        .unwrap()
        .starts_with("12."));
    // The HTTP mirror served the fleet; node-h200 used its own directory.
    let served: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    for manifest in [
        "redistrib_12.1.1.json",
        "redistrib_12.2.2.json",
        "redistrib_12.9.2.json",
        "redistrib_13.2.2.json",
    ] {
        assert!(
            served.iter().any(|p| p.ends_with(manifest)),
            "{manifest}: {served:?}"
        );
    }
    assert!(!served.iter().any(|p| p.ends_with("redistrib_13.0.3.json")));
    assert!(report("node-h200", "install.json")["toolkit"]["source"]
        .as_str()
        .unwrap()
        .contains(&mirror.path().display().to_string()));

    // The fleet report: one row per host, stacks compared only among the same GPUs.
    let fetched_arg = fetched.display().to_string();
    let table = cudaup(&["fleet", "report", &fetched_arg], lab.dir.path());
    eprintln!("{}", table.stdout);
    assert_eq!(
        table.code, 1,
        "verification failed on every host: {}",
        table.stderr
    );
    for h in &hosts {
        assert!(table.stdout.contains(h.name), "{}", table.stdout);
    }
    assert!(table
        .stdout
        .contains("compared only among hosts with the same GPU architectures"));
    let fleet = cudaup(&["fleet", "report", &fetched_arg, "--json"], lab.dir.path()).json();
    let rows = fleet["hosts"].as_array().unwrap();
    assert_eq!(rows.len(), hosts.len());
    for (name, _, _, cuda, _, _) in &plans {
        let row = rows.iter().find(|r| r["host"] == *name).unwrap();
        assert_eq!(row["stack"]["cuda"], *cuda, "{name}: {row}");
        assert_eq!(row["verify"]["ok"], false, "{name}");
        assert!(
            row["problems"]
                .as_array()
                .unwrap()
                .iter()
                // Without a GPU here the driver check is skipped; what fails is named (the
                // lab's stand-in nvcc builds nothing).
                .any(|p| p.as_str().unwrap().starts_with("verify ")),
            "{name}: {row}"
        );
    }
    // Only the hand-pinned 1080 Ti differs from its group; the others' different stacks are
    // those of different GPUs.
    let flagged: Vec<&str> = fleet["flagged"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["host"].as_str().unwrap())
        .collect();
    assert_eq!(flagged, ["node-1080ti-c"], "{fleet}");
    assert_eq!(fleet["flagged"][0]["architectures"], json!(["Pascal"]));
    assert_eq!(fleet["flagged"][0]["majority"]["cuda"], "12.2.2");
    assert_eq!(fleet["groups"].as_array().unwrap().len(), 4);

    // Second run: a healthy fleet changes nothing, and nobody reboots.
    let (code, stats, output) = lab.playbook();
    assert_eq!(code, 0, "{output}");
    assert_eq!(stats.len(), hosts.len(), "{output}");
    for (name, s) in &stats {
        assert_eq!(s["failed"], 0, "{name}: {s:?}");
        assert_eq!(
            s["changed"], 0,
            "{name}: a second run changes nothing: {s:?}\n{output}"
        );
    }
    for h in &hosts {
        assert_eq!(
            report(h.name, "install.json")["changed"],
            false,
            "{}",
            h.name
        );
    }
    let log = fs_err::read_to_string(host("node-4090").at("/var/log/reboots.log")).unwrap();
    assert_eq!(log.lines().count(), 1, "no second reboot: {log}");
    drop(server);
}

#[test]
fn fleet_report_needs_host_directories() {
    let dir = tempfile::tempdir().unwrap();
    let run = cudaup(
        &["fleet", "report", &dir.path().display().to_string()],
        dir.path(),
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("no host reports"), "{}", run.stderr);
    // A host whose run stopped before cudaup reported is a row with a problem, not a crash.
    fs_err::create_dir_all(dir.path().join("node-lost")).unwrap();
    fs_err::write(dir.path().join("node-lost/verify.json"), "{truncated").unwrap();
    let run = cudaup(
        &[
            "fleet",
            "report",
            &dir.path().display().to_string(),
            "--json",
        ],
        dir.path(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["hosts"][0]["status"], "missing");
    let problems = j["hosts"][0]["problems"].to_string();
    assert!(problems.contains("no install.json"), "{problems}");
    assert!(problems.contains("verify.json: not JSON"), "{problems}");
}
