//! Every container check, each triggered by the state that should raise it.

use std::path::{Path, PathBuf};

use super::*;
use crate::container::choice::choose;
use crate::container::engine::{parse_info, Engine};
use crate::container::host::{Cgroups, Host, Wsl};

fn host() -> Host {
    Host {
        cgroups: Cgroups::V2,
        selinux: Selinux::Off,
        wsl: None,
        driver_version: Some("580.95.05".into()),
        root: true,
        legacy_hook: false,
        dev_char_links: true,
        stale_apt_lists: Vec::new(),
    }
}

fn podman() -> Engine {
    parse_info(
        Kind::Podman,
        r#"{"host":{"cgroupManager":"systemd","cgroupVersion":"v2","security":{"rootless":false,"selinuxEnabled":false}},"version":{"Version":"5.4.2"}}"#,
        true,
    )
    .unwrap()
}

fn podman_version(v: &str) -> Engine {
    parse_info(
        Kind::Podman,
        &format!(r#"{{"host":{{"cgroupManager":"systemd","cgroupVersion":"v2","security":{{"rootless":false,"selinuxEnabled":false}}}},"version":{{"Version":"{v}"}}}}"#),
        true,
    )
    .unwrap()
}

fn old_docker(rootless: bool) -> Engine {
    let sec = if rootless { r#","name=rootless""# } else { "" };
    parse_info(
        Kind::Docker,
        &format!(r#"{{"ServerVersion":"20.10.24","CgroupDriver":"systemd","CgroupVersion":"2","Runtimes":{{"runc":{{"path":"runc"}}}},"SecurityOptions":["name=seccomp"{sec}]}}"#),
        !rootless,
    )
    .unwrap()
}

fn inputs(engines: Vec<Engine>, host: Host) -> Inputs {
    let choices = choose(&engines, &host, Path::new("/nonexistent/cudaup/cdi"));
    Inputs {
        survey: Survey {
            host,
            engines,
            choices,
            user_spec_dir: PathBuf::from("/nonexistent/cudaup/cdi"),
        },
        toolkit: Installed::default(),
        specs: Vec::new(),
        system_config: None,
        user_config: None,
        daemon_json: None,
        user_daemon_json: None,
        enroot: Enroot::default(),
    }
}

fn ids(i: &Inputs) -> Vec<&'static str> {
    check(i).iter().map(|d| d.id()).collect()
}

fn good_spec(dir: &Path, version: &str) -> Found {
    let node = dir.join("nvidia0");
    fs_err::write(&node, "").unwrap();
    Found {
        path: "/etc/cdi/cudaup-nvidia.json".into(),
        kind: Some("nvidia.com/gpu".into()),
        driver_version: Some(version.into()),
        device_nodes: vec![node],
        cdi_version: Some("0.5.0".into()),
        numbers: Vec::new(),
        mode: Some(0o644),
        unreadable: None,
    }
}

#[test]
fn a_healthy_cdi_machine_has_no_findings() {
    let dir = tempfile::tempdir().unwrap();
    let mut i = inputs(vec![podman()], host());
    i.specs.push(good_spec(dir.path(), "580.95.05"));
    assert!(ids(&i).is_empty(), "{:?}", ids(&i));
}

#[test]
fn cdi_spec_missing_stale_unreadable_and_the_legacy_hook() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = host();
    h.legacy_hook = true;
    let i = inputs(vec![podman()], h.clone());
    assert_eq!(ids(&i), ["cdi-spec-missing", "cdi-legacy-conflict"]);

    let mut i = inputs(vec![podman()], host());
    let mut spec = good_spec(dir.path(), "570.124.06");
    spec.device_nodes.push(dir.path().join("nvidia1"));
    i.specs.push(spec);
    let found = check(&i);
    let stale = found.iter().find(|d| d.id() == "cdi-spec-stale").unwrap();
    assert!(stale.evidence[0].contains("570.124.06") && stale.evidence[0].contains("580.95.05"));
    assert!(stale.evidence[1].contains("nvidia1"));

    let mut rootless = podman();
    rootless.rootless = true;
    let mut h = host();
    h.root = false;
    let mut i = inputs(vec![rootless], h);
    let mut spec = good_spec(dir.path(), "580.95.05");
    spec.mode = Some(0o600);
    i.specs.push(spec);
    i.specs.push(Found {
        path: "/var/run/cdi/nvidia.yaml".into(),
        kind: None,
        driver_version: None,
        device_nodes: Vec::new(),
        cdi_version: None,
        numbers: Vec::new(),
        mode: Some(0o644),
        unreadable: Some("no `kind:` line: not a CDI spec".into()),
    });
    assert_eq!(ids(&i), ["cdi-spec-unreadable", "cdi-spec-unreadable"]);
}

#[test]
fn legacy_docker_without_the_toolkit_or_its_runtime() {
    let i = inputs(vec![old_docker(false)], host());
    let found = ids(&i);
    for id in [
        "ctk-missing",
        "ctk-runtime-unregistered",
        "legacy-daemon-reload-risk",
        "cdi-engine-too-old",
    ] {
        assert!(found.contains(&id), "{id} in {found:?}");
    }
    // Registered in daemon.json but not restarted: the fix is the restart.
    let mut i = inputs(vec![old_docker(false)], host());
    i.daemon_json =
        Some(r#"{"runtimes":{"nvidia":{"path":"nvidia-container-runtime","args":[]}}}"#.into());
    let d = check(&i)
        .into_iter()
        .find(|d| d.id() == "ctk-runtime-unregistered")
        .unwrap();
    assert_eq!(
        d.finding.fix.as_deref(),
        Some("sudo systemctl restart docker")
    );
}

#[test]
fn rootless_cgroups_both_ways() {
    let mut i = inputs(vec![old_docker(true)], host());
    i.toolkit.ctk = Some("1.20.0".into());
    i.system_config = Some("[nvidia-container-cli]\n#no-cgroups = false\n".into());
    assert!(ids(&i).contains(&"ctk-rootless-cgroups"));
    i.user_config = Some("[nvidia-container-cli]\nno-cgroups = true\n".into());
    assert!(!ids(&i).contains(&"ctk-rootless-cgroups"));

    let mut i = inputs(vec![old_docker(false)], host());
    i.toolkit.ctk = Some("1.20.0".into());
    i.system_config = Some("[nvidia-container-cli]\nno-cgroups = true\n".into());
    let d = check(&i)
        .into_iter()
        .find(|d| d.id() == "ctk-rootless-cgroups")
        .unwrap();
    assert!(d.finding.message.contains("rootful"));
}

#[test]
fn toolkit_cves_and_skew() {
    let dir = tempfile::tempdir().unwrap();
    let mut i = inputs(vec![podman()], host());
    i.specs.push(good_spec(dir.path(), "580.95.05"));
    i.toolkit.packages = vec![
        ("nvidia-container-toolkit".into(), "1.17.5-1".into()),
        ("nvidia-container-toolkit-base".into(), "1.17.5-1".into()),
        ("libnvidia-container-tools".into(), "1.17.3-1".into()),
        ("libnvidia-container1".into(), "1.17.5-1".into()),
    ];
    assert_eq!(ids(&i), ["ctk-cve", "ctk-version-skew"]);
    let cve = check(&i).into_iter().next().unwrap();
    // Highest floor first: the 2026 bulletin's, then NVIDIAScape's.
    assert!(
        cve.evidence[0].contains("below 1.19.1: CVE-2026-24260")
            && cve.evidence[1].contains("CVE-2025-23266"),
        "{:?}",
        cve.evidence
    );
    assert!(cve.finding.message.contains("is below 1.19.1"), "{cve:?}");
}

#[test]
fn selinux_wsl_apt_lists_and_an_engine_that_is_down() {
    let mut h = host();
    h.selinux = Selinux::Enforcing;
    h.stale_apt_lists = vec!["/etc/apt/sources.list.d/nvidia-docker.list".into()];
    h.wsl = Some(Wsl {
        version: 2,
        dxg: true,
        libdxcore: false,
        linux_driver_libraries: vec!["/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1".into()],
    });
    let mut down = podman();
    down.kind = Kind::Docker;
    down.unreachable = Some("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?".into());
    let dir = tempfile::tempdir().unwrap();
    let mut i = inputs(vec![podman(), down], h);
    i.specs.push(good_spec(dir.path(), "580.95.05"));
    let found = ids(&i);
    assert_eq!(
        found.iter().filter(|id| **id == "wsl-engine").count(),
        2,
        "{found:?}"
    );
    for id in [
        "selinux-label",
        "apt-signed-by-conflict",
        "engine-unreachable",
    ] {
        assert!(found.contains(&id), "{id} in {found:?}");
    }
    let mut h = host();
    h.wsl = Some(Wsl {
        version: 1,
        dxg: false,
        libdxcore: false,
        linux_driver_libraries: Vec::new(),
    });
    let i = inputs(vec![podman()], h);
    let wsl = check(&i)
        .into_iter()
        .find(|d| d.id() == "wsl-engine")
        .unwrap();
    assert!(wsl.finding.message.contains("WSL1"));
}

#[test]
fn engine_errors_map_to_their_rows() {
    let cases = [
        ("docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].", "ctk-runtime-unregistered"),
        ("Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all", "cdi-spec-missing"),
        ("Error: crun: failed to stat CDI host device \"/dev/dri/renderD129\"", "cdi-spec-stale"),
        ("nvidia-container-cli: mount error: failed to add device rules: unable to find any existing device filters attached to the cgroup: bpf_prog_query(BPF_CGROUP_DEVICE) failed: operation not permitted", "ctk-rootless-cgroups"),
        ("Failed to initialize NVML: Unknown Error", "legacy-daemon-reload-risk"),
        ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a newer version", "image-needs-newer-driver"),
        ("nvidia-container-cli: initialization error: WSL environment detected but no adapters were found", "wsl-engine"),
        ("Failed to initialize NVML: Insufficient Permissions", "selinux-label"),
        ("E: Conflicting values set for option Signed-By regarding source https://nvidia.github.io/libnvidia-container/stable/deb/amd64/", "apt-signed-by-conflict"),
        ("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system.", "container-libs-injected"),
    ];
    for (text, id) in cases {
        assert_eq!(explain_error(text), Some(id), "{text}");
    }
    // Cosmetic: the host GIDs of /dev/dri (troubleshooting doc) is never flagged.
    assert_eq!(
        explain_error("groups: cannot find name for group ID 993"),
        None
    );
}

/// Issue 39, finding 8: Podman before 5 cannot read the CDI 0.7 specs toolkit 1.19.1+ writes
/// (toolkit #1940); Podman 5, or a 0.5/0.6 spec, raises nothing.
#[test]
fn podman_4_with_a_cdi_0_7_spec() {
    let dir = tempfile::tempdir().unwrap();
    let spec = |version: &str| Found {
        path: "/etc/cdi/nvidia.yaml".into(),
        cdi_version: Some(version.into()),
        ..good_spec(dir.path(), "580.95.05")
    };
    let mut i = inputs(vec![podman_version("4.9.3")], host());
    i.specs.push(spec("0.7.0"));
    let found = check(&i);
    assert_eq!(
        found.iter().map(|d| d.id()).collect::<Vec<_>>(),
        ["cdi-spec-too-new"]
    );
    let d = &found[0];
    assert!(d.evidence.iter().any(|e| e == "podman 4.9.3"), "{d:?}");
    assert!(
        d.evidence
            .iter()
            .any(|e| e == "/etc/cdi/nvidia.yaml: cdiVersion 0.7.0"),
        "{d:?}"
    );
    assert!(
        d.evidence.iter().any(|e| e.contains("issues/1940")),
        "{d:?}"
    );
    for (podman, version) in [("5.4.2", "0.7.0"), ("4.9.3", "0.6.0"), ("4.9.3", "0.5.0")] {
        let mut i = inputs(vec![podman_version(podman)], host());
        i.specs.push(spec(version));
        assert!(ids(&i).is_empty(), "{podman} {version}: {:?}", ids(&i));
    }
}

/// Issue 39, finding 8: a spec whose device numbers drifted from the host's nodes is stale,
/// though every node it names still exists.
#[test]
fn drifted_device_numbers_make_a_spec_stale() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = good_spec(dir.path(), "580.95.05");
    spec.numbers = vec![
        crate::container::cdi::read::NodeNumbers {
            path: "/dev/nvidia-uvm".into(),
            spec: (510, 0),
            host: Some((508, 0)),
        },
        crate::container::cdi::read::NodeNumbers {
            path: "/dev/nvidiactl".into(),
            spec: (195, 255),
            host: Some((195, 255)),
        },
    ];
    let mut i = inputs(vec![podman()], host());
    i.specs.push(spec.clone());
    let found = check(&i);
    let stale = found.iter().find(|d| d.id() == "cdi-spec-stale").unwrap();
    assert_eq!(stale.evidence.len(), 1, "{stale:?}");
    assert!(
        stale.evidence[0].contains("/dev/nvidia-uvm is 508:0 on the host")
            && stale.evidence[0].contains("510:0"),
        "{stale:?}"
    );
    spec.numbers[0].host = Some((510, 0));
    let mut i = inputs(vec![podman()], host());
    i.specs.push(spec);
    assert!(ids(&i).is_empty(), "{:?}", ids(&i));
}

/// Issue 39, finding 8: enroot (and pyxis on Slurm) need nvidia-container-cli whatever CDI does;
/// found from its hook and Slurm's plugstack in a picture.
#[cfg(unix)] // an executable bit: Windows has none
#[test]
fn enroot_and_pyxis_need_nvidia_container_cli() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs_err::create_dir_all(root.join("etc/enroot/hooks.d")).unwrap();
    fs_err::write(
        root.join("etc/enroot/hooks.d/98-nvidia.sh"),
        "#! /bin/bash\n",
    )
    .unwrap();
    fs_err::create_dir_all(root.join("etc/slurm/plugstack.conf.d")).unwrap();
    fs_err::write(
        root.join("etc/slurm/plugstack.conf.d/pyxis.conf"),
        "# pyxis\nrequired /usr/local/lib/slurm/spank_pyxis.so\n",
    )
    .unwrap();
    let bin = root.join("bin");
    fs_err::create_dir_all(&bin).unwrap();
    let probe = |entries: &[PathBuf]| Enroot::probe(&Root::at(root), entries);
    let without = probe(std::slice::from_ref(&bin));
    assert_eq!(
        without.found.as_deref(),
        Some("/etc/enroot/hooks.d/98-nvidia.sh exists")
    );
    assert!(
        without.pyxis.as_deref().is_some_and(
            |p| p.ends_with("pyxis.conf: required /usr/local/lib/slurm/spank_pyxis.so")
        ),
        "{without:?}"
    );
    assert_eq!(without.container_cli, None);
    let mut i = inputs(vec![podman()], host());
    i.specs.push(good_spec(root, "580.95.05"));
    i.enroot = without;
    let found = check(&i);
    assert_eq!(found.len(), 1, "{found:?}");
    let d = &found[0];
    assert_eq!(
        (d.id(), d.severity()),
        ("enroot-container-cli", Severity::Error)
    );
    assert!(
        d.evidence.iter().any(|e| e.contains("pyxis (Slurm)")),
        "{d:?}"
    );

    let cli = bin.join("nvidia-container-cli");
    fs_err::write(&cli, "#!/bin/sh\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs_err::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).unwrap();
    i.enroot = probe(std::slice::from_ref(&bin));
    assert_eq!(i.enroot.container_cli.as_deref(), Some(cli.as_path()));
    let found = check(&i);
    assert_eq!(
        found
            .iter()
            .map(|d| (d.id(), d.severity()))
            .collect::<Vec<_>>(),
        [("enroot-container-cli", Severity::Info)]
    );
    // No enroot: no row.
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(
        Enroot::probe(&Root::at(empty.path()), &[]),
        Enroot::default()
    );
}
