//! The lock's text, its reading back, which host a machine is, and the pylock export.

use super::*;

fn file(name: &str, filename: &str, sha: &str) -> LockedFile {
    LockedFile {
        name: name.into(),
        version: "2.14.1+cu130".into(),
        filename: filename.into(),
        url: format!("https://download.pytorch.org/whl/cu130/{filename}"),
        sha256: sha.repeat(64),
        size: Some(10),
    }
}

fn host(name: &str, arch: &str, gpus: &[&str]) -> Host {
    Host {
        name: name.into(),
        os: "linux".into(),
        arch: arch.into(),
        distro: Some("ubuntu 24.04".into()),
        gpus: gpus.iter().map(|s| s.to_string()).collect(),
        python: Some("3.12".into()),
        driver: Some(LockedDriver {
            action: "keep".into(),
            version: Some("580.159.04".into()),
            branch: Some("580".into()),
        }),
        cuda: None,
        cudnn: None,
        framework: Some(LockedFramework {
            name: "torch".into(),
            version: "2.14.1".into(),
            variant: Some("cu130".into()),
            index: "https://download.pytorch.org/whl/cu130".into(),
            requirements: vec!["torch==2.14.1+cu130".into()],
        }),
        toolkit: Vec::new(),
        wheel: vec![file(
            "torch",
            &format!("torch-2.14.1+cu130-cp312-cp312-manylinux_2_28_{arch}.whl"),
            "a",
        )],
        dependency: Vec::new(),
    }
}

fn lock() -> Lock {
    Lock {
        schema_version: SCHEMA_VERSION,
        catalog_date: "2026-12-01".into(),
        profile: "pytorch".into(),
        uv: LockedUv {
            version: "0.13.9".into(),
            source: "https://pypi.org/pypi/uv/0.13.9/json".into(),
            wheel: vec![file(
                "x86_64",
                "uv-0.13.9-py3-none-musllinux_1_1_x86_64.whl",
                "b",
            )],
        },
        hosts: vec![
            host("arm", "aarch64", &["9.0"]),
            host("h200", "x86_64", &["9.0"]),
        ],
    }
}

fn system(arch: &str, cc: &str) -> System {
    let mut s: System = serde_json::from_value(serde_json::json!({
        "os": {"family": "linux", "arch": arch},
        "gpus": [{"index": 0, "vendor": "nvidia", "name": "GPU", "compute_capability": cc}]
    }))
    .unwrap();
    s.os.arch = arch.into();
    s
}

#[test]
fn the_text_reads_back_the_same_and_is_the_same_bytes_each_time() {
    let text = lock().to_toml();
    assert_eq!(text, lock().to_toml());
    assert!(text.starts_with("# cudaup lock"), "{text}");
    assert!(text.contains("[[host]]\nname = \"arm\""), "{text}");
    assert_eq!(Lock::parse("l.toml", &text).unwrap(), lock());
    let newer = text.replace("schema_version = 1", "schema_version = 2");
    let e = Lock::parse("l.toml", &newer).unwrap_err().to_string();
    assert!(e.contains("schema_version 2 (this cudaup reads 1)"), "{e}");
    let unknown = format!("{text}\nextra = 1\n");
    assert!(Lock::parse("l.toml", &unknown).is_err());
}

#[test]
fn a_machine_is_the_host_of_its_os_arch_and_gpu_class_or_is_told_which_part_misfits() {
    let l = lock();
    assert_eq!(
        l.host_for(&system("x86_64", "9.0"), "l").unwrap().name,
        "h200"
    );
    assert_eq!(
        l.host_for(&system("aarch64", "9.0"), "l").unwrap().name,
        "arm"
    );
    let e = l
        .host_for(&system("x86_64", "12.0"), "l.toml")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "this machine is not covered by the lock l.toml: GPU class sm_120 (host h200: sm_90) (the lock's hosts: arm, h200)"
    );
}

#[test]
fn pylock_lists_each_wheel_with_its_hash_and_a_marker_per_arch() {
    let text = pylock::export(&lock());
    let doc: toml::Value = toml::from_str(&text).unwrap();
    assert_eq!(doc["lock-version"].as_str(), Some("1.0"));
    assert_eq!(doc["requires-python"].as_str(), Some(">=3.12"));
    let packages = doc["packages"].as_array().unwrap();
    assert_eq!(packages.len(), 2);
    assert_eq!(
        packages[0]["marker"].as_str(),
        Some("platform_machine == 'aarch64'")
    );
    assert_eq!(
        packages[1]["wheels"][0]["hashes"]["sha256"].as_str(),
        Some("a".repeat(64).as_str())
    );
}

#[test]
fn a_locked_install_hashes_every_distribution_or_none() {
    let mut h = host("h200", "x86_64", &["9.0"]);
    assert!(
        h.hashed_requirements().is_empty(),
        "without dependencies pip's all-or-nothing hash mode cannot be used"
    );
    let dep = |filename: &str, sha: &str| LockedFile {
        name: "filelock".into(),
        version: "3.20.0".into(),
        ..file("filelock", filename, sha)
    };
    h.dependency = vec![
        dep("filelock-3.20.0-py3-none-any.whl", "b"),
        dep("filelock-3.20.0-cp312-cp312-manylinux_2_28_x86_64.whl", "c"),
    ];
    assert_eq!(
        h.hashed_requirements(),
        [
            format!("torch==2.14.1+cu130 --hash=sha256:{}", "a".repeat(64)),
            format!(
                "filelock==3.20.0 --hash=sha256:{} --hash=sha256:{}",
                "b".repeat(64),
                "c".repeat(64)
            ),
        ]
    );
}

/// uv's Windows wheel is locked only for a lock with a Windows host, named apart from Linux's
/// bare architectures; a lock of Linux hosts holds Linux's two, as before Windows had one.
#[test]
fn uvs_windows_wheel_is_locked_only_beside_a_windows_host() {
    let catalog = crate::catalog::Catalog::embedded();
    let names = |hosts: Vec<Host>| -> Vec<String> {
        make::assemble(&catalog, "pytorch", hosts)
            .uv
            .wheel
            .into_iter()
            .map(|w| w.name)
            .collect()
    };
    assert_eq!(
        names(vec![host("a", "x86_64", &["9.0"])]),
        ["x86_64", "aarch64"]
    );
    let mut windows = host("w", "x86_64", &["8.9"]);
    windows.os = "windows".into();
    let with = names(vec![host("a", "x86_64", &["9.0"]), windows]);
    assert_eq!(with, ["x86_64", "aarch64", "windows-x86_64"]);
    let lock = make::assemble(&catalog, "pytorch", vec![]);
    assert!(lock.uv.wheel.iter().all(|w| !w.filename.contains("win")));
}
