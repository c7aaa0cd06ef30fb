//! The Ansible role with `cudaup_lock` (issue 42, item 3): one lock made from two machine
//! pictures, the role run by real `ansible-core` against three local hosts (as
//! `tests/it/fleet.rs` does), each host installing its part with `install --locked` from the
//! lab's synthetic mirror; the host the lock does not cover fails, naming what does not fit,
//! and `fleet report --lock` names it as drifted while the other two have their parts.

use serde_json::{json, Value};

use crate::common::server::Server;
use crate::common::*;
use crate::fleet::{ansible, python, system, Host, Lab, RTX_4090, RTX_5090};

const H200: (&str, &str, &str, &str) = ("NVIDIA H200", "10de:2335", "9.0", "Hopper");

#[test]
fn ansible_installs_one_lock_on_every_host_and_the_report_names_the_one_it_does_not_cover() {
    let python = python();
    let ansible = match ansible(&python) {
        Ok(dir) => dir,
        Err(why) => {
            skipped(
                "ansible_installs_one_lock_on_every_host_and_the_report_names_the_one_it_does_not_cover",
                &format!("ansible-core could not be installed: {why}"),
            );
            return;
        }
    };
    let lab = Lab {
        dir: tempfile::tempdir().unwrap(),
        python: python.clone(),
        ansible,
    };
    fs_err::write(lab.path("ansible.cfg"), "[defaults]\n").unwrap();
    let mirror = synthetic_mirror(&[]);
    let server = Server::start(mirror.path().to_owned());
    let driver = Some(("580.159.04", "13.0", "open"));
    let hosts: Vec<(Host, Value)> = [
        ("node-h200", system(H200, driver)),
        ("node-4090", system(RTX_4090, driver)),
        ("node-5090", system(RTX_5090, driver)),
    ]
    .into_iter()
    .map(|(name, picture)| {
        let tree = Tree::new();
        tree.file("/etc/cudaup/system.json", picture.to_string())
            .dir("/home/admin");
        (Host { name, tree }, picture)
    })
    .collect();

    // The lock, made once on the control machine from the pictures of the two kinds of host.
    let lock = lab.path("fleet.lock");
    let mut args = vec![
        "lock".to_owned(),
        "--profile".into(),
        "cuda-dev".into(),
        "--cuda".into(),
        "13.0.2".into(),
        "--cudnn".into(),
        "9.17.0".into(),
        "--driver".into(),
        "keep".into(),
        "--mirror".into(),
        server.url(),
        "--allow-http".into(),
        "-o".into(),
        lock.display().to_string(),
    ];
    for (h, _) in &hosts[..2] {
        args.extend(["--system".to_owned(), h.s("/etc/cudaup/system.json")]);
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    fs_err::create_dir_all(lab.path("maker")).unwrap();
    let made = cudaup(&refs, &lab.path("maker"));
    assert_eq!(made.code, 0, "{}\n{}", made.stdout, made.stderr);

    let config = lab.path("cudaup.toml");
    fs_err::write(
        &config,
        format!(
            "version = 1\nprofile = \"cuda-dev\"\n\n[shell]\nmodify_path = false\n\n[sources]\nnvidia_mirror = \"{}\"\nallow_http = true\n",
            server.url()
        ),
    )
    .unwrap();
    let fetched = lab.path("reports");
    let mut inventory_hosts = serde_json::Map::new();
    for (h, _) in &hosts {
        inventory_hosts.insert(
            h.name.to_owned(),
            json!({
                "ansible_connection": "local",
                "ansible_python_interpreter": python.display().to_string(),
                "cudaup_bin_dir": h.s("/usr/local/bin"),
                "cudaup_config_path": h.s("/etc/cudaup/cudaup.toml"),
                "cudaup_lock_path": h.s("/etc/cudaup/cudaup.lock"),
                "cudaup_report_dir": h.s("/var/lib/cudaup/reports"),
                "cudaup_home": h.s("/opt/cudaup"),
                "cudaup_system_file": h.s("/etc/cudaup/system.json"),
                "cudaup_install_extra_args": ["--driver", "keep"],
                "cudaup_environment": {"HOME": h.s("/home/admin"), "PATH": tools_path(), "CUDAUP_NO_NVML": "1", "CUDAUP_TEST_GUARD": test_name()},
            }),
        );
    }
    let inventory = json!({"all": {
        "children": {"gpu_nodes": {"hosts": inventory_hosts}},
        "vars": {
            "cudaup_binary_src": env!("CARGO_BIN_EXE_cudaup"),
            "cudaup_config_src": config.display().to_string(),
            "cudaup_lock": lock.display().to_string(),
            "cudaup_fetch_dir": fetched.display().to_string(),
            "cudaup_become": false,
            "cudaup_fail_on_verify": false,
        },
    }});
    fs_err::write(
        lab.path("inventory.yml"),
        serde_json::to_string_pretty(&inventory).unwrap(),
    )
    .unwrap();

    let (code, stats, output) = lab.playbook();
    assert_ne!(code, 0, "node-5090 fails: {output}");
    for name in ["node-h200", "node-4090"] {
        assert_eq!(stats[name]["failed"], 0, "{name}: {output}");
        let h = &hosts.iter().find(|(h, _)| h.name == name).unwrap().0;
        assert!(h.at("/etc/cudaup/cudaup.lock").is_file());
        assert!(
            h.at("/opt/cudaup/toolkits/cuda-13.0.2/bin/nvcc").is_file(),
            "{name}: {output}"
        );
    }
    assert_eq!(stats["node-5090"]["failed"], 1, "{output}");
    let failed: Value =
        serde_json::from_slice(&fs_err::read(fetched.join("node-5090/install.json")).unwrap())
            .unwrap();
    assert_eq!(failed["status"], "failed");
    assert!(
        failed["error"].to_string().contains("GPU class sm_120"),
        "{failed}"
    );
    assert!(!hosts[2].0.at("/opt/cudaup/toolkits").exists());

    let report = cudaup(
        &[
            "fleet",
            "report",
            &fetched.display().to_string(),
            "--lock",
            &lock.display().to_string(),
            "--json",
        ],
        lab.dir.path(),
    );
    let drifted: Vec<(String, Value)> = report.json()["lock"]["drifted"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", report.stdout))
        .iter()
        .map(|d| {
            (
                d["host"].as_str().unwrap().to_owned(),
                d["differences"].clone(),
            )
        })
        .collect();
    assert_eq!(drifted.len(), 1, "{drifted:?}");
    assert_eq!(drifted[0].0, "node-5090");
    assert!(
        drifted[0].1.to_string().contains("GPU class sm_120"),
        "{drifted:?}"
    );
}
