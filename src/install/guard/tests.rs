//! The guard's files, their removal and the drift it reads from `.dist-info` directories.

use super::*;

fn venv() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs_err::create_dir_all(dir.path().join("lib/python3.12/site-packages")).unwrap();
    dir
}

fn dist(venv: &Path, name: &str, version: &str, installer: Option<&str>) {
    let info = venv.join(format!(
        "lib/python3.12/site-packages/{name}-{version}.dist-info"
    ));
    fs_err::create_dir_all(&info).unwrap();
    fs_err::write(
        info.join("METADATA"),
        format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nbody\n"),
    )
    .unwrap();
    if let Some(i) = installer {
        fs_err::write(info.join("INSTALLER"), format!("{i}\n")).unwrap();
    }
}

fn packages() -> Packages {
    Packages {
        requirements: vec![
            "torch==2.14.1+cu130".into(),
            "torchvision==0.29.1+cu130".into(),
            "ninja".into(),
        ],
        index_url: "https://download.pytorch.org/whl/cu130".into(),
        extra_index_urls: vec!["https://pypi.org/simple".into()],
        ..Packages::default()
    }
}

#[test]
fn pins_keep_name_and_version_and_drop_extras_and_unpinned() {
    let p = pins(&[
        "tensorflow[and-cuda]==2.21.0".into(),
        "jax[cuda13]==0.12.0.1".into(),
        "ninja".into(),
        "torch>=2".into(),
    ]);
    let got: Vec<String> = p.iter().map(Pin::requirement).collect();
    assert_eq!(got, ["tensorflow==2.21.0", "jax==0.12.0.1"]);
}

#[test]
fn the_files_pin_the_builds_and_their_index_and_go_again_byte_for_byte() {
    let v = venv();
    let record = GuardRecord::planned(&packages(), restore_command(Path::new("/h"))).unwrap();
    assert_eq!(record.indexes, ["https://download.pytorch.org/whl/cu130"]);
    let written = write(v.path(), &record).unwrap();
    assert_eq!(written.files.len(), 5);
    let pip = fs_err::read_to_string(v.path().join(PIP_CONF)).unwrap();
    assert!(
        pip.contains(&format!(
        "[install]\nconstraint = {}\nextra-index-url = https://download.pytorch.org/whl/cu130\n",
        v.path().join(CONSTRAINTS).display()
    )),
        "{pip}"
    );
    let cons = fs_err::read_to_string(v.path().join(CONSTRAINTS)).unwrap();
    assert!(
        cons.ends_with("torch==2.14.1+cu130\ntorchvision==0.29.1+cu130\n"),
        "{cons}"
    );
    let uv: toml::Value =
        toml::from_str(&fs_err::read_to_string(v.path().join(UV_TOML)).unwrap()).unwrap();
    assert_eq!(
        uv["constraint-dependencies"].as_array().unwrap().len(),
        2,
        "{uv}"
    );
    assert_eq!(
        uv["pip"]["extra-index-url"][0].as_str(),
        Some("https://download.pytorch.org/whl/cu130")
    );
    let site = v.path().join("lib/python3.12/site-packages");
    let module = fs_err::read_to_string(site.join(MODULE)).unwrap();
    assert!(
        module
            .contains(r#"PLANNED = [("torch", "2.14.1+cu130"), ("torchvision", "0.29.1+cu130")]"#),
        "{module}"
    );
    assert!(module.contains(r#"RESTORE = "cudaup --home /h repair --fix venv-packages""#));
    assert_eq!(
        fs_err::read_to_string(site.join(PTH))
            .unwrap()
            .lines()
            .last(),
        Some("import _cudaup_guard")
    );
    // Writing again over its own files is fine; a changed file stays when lifted.
    let again = write(v.path(), &record).unwrap();
    assert_eq!(again, written);
    fs_err::create_dir(site.join("__pycache__")).unwrap();
    fs_err::write(
        site.join("__pycache__/_cudaup_guard.cpython-312.pyc"),
        "pyc",
    )
    .unwrap();
    fs_err::write(v.path().join(UV_TOML), "# mine now\n").unwrap();
    let lifted = lift(&written).unwrap();
    assert_eq!(lifted.kept, [v.path().join(UV_TOML)]);
    assert_eq!(lifted.removed.len(), 5, "{:?}", lifted.removed);
    assert_eq!(walk(v.path()), ["uv.toml"]);
}

fn walk(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_owned()];
    while let Some(d) = todo.pop() {
        for e in fs_err::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p.clone());
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_file_that_is_not_the_guards_is_left_and_nothing_is_written() {
    let v = venv();
    fs_err::write(
        v.path().join(PIP_CONF),
        "[global]\nindex-url = https://mirror.example/simple\n",
    )
    .unwrap();
    let record = GuardRecord::planned(&packages(), "cudaup repair".into()).unwrap();
    let e = write(v.path(), &record).unwrap_err();
    assert!(
        matches!(e, GuardError::Foreign(ref p, _) if p == &v.path().join(PIP_CONF)),
        "{e}"
    );
    assert_eq!(walk(v.path()), ["pip.conf"]);
}

#[test]
fn drift_names_the_build_that_replaced_the_planned_one_and_who_installed_it() {
    let v = venv();
    let record = GuardRecord::planned(&packages(), "cudaup repair".into()).unwrap();
    dist(v.path(), "torch", "2.14.1+cu130", Some("pip"));
    dist(v.path(), "torchvision", "0.29.1+cu130", Some("pip"));
    assert_eq!(drift(v.path(), &record), []);
    fs_err::remove_dir_all(
        v.path()
            .join("lib/python3.12/site-packages/torch-2.14.1+cu130.dist-info"),
    )
    .unwrap();
    dist(v.path(), "torch", "2.14.1+cpu", Some("uv"));
    fs_err::remove_dir_all(
        v.path()
            .join("lib/python3.12/site-packages/torchvision-0.29.1+cu130.dist-info"),
    )
    .unwrap();
    let d = drift(v.path(), &record);
    assert_eq!(d.len(), 2);
    let text = d[0].describe();
    assert!(
        text.starts_with("torch 2.14.1+cpu replaced the planned 2.14.1+cu130 (installed by uv, 20"),
        "{text}"
    );
    assert!(text.ends_with(" UTC)"), "{text}");
    assert_eq!(
        d[1].describe(),
        "torchvision 0.29.1+cu130 is no longer installed"
    );
}

#[test]
fn utc_minutes_are_civil_dates() {
    let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_796_462_520);
    assert_eq!(utc_minute(t), "2026-12-05 09:22 UTC");
    assert_eq!(utc_minute(SystemTime::UNIX_EPOCH), "1970-01-01 00:00 UTC");
}

#[test]
fn a_plain_http_mirror_is_named_to_pip_and_uv_as_trusted() {
    let v = venv();
    let p = Packages {
        index_url: "http://10.0.0.2:8080/whl/cu130".into(),
        ..packages()
    };
    write(
        v.path(),
        &GuardRecord::planned(&p, "cudaup repair".into()).unwrap(),
    )
    .unwrap();
    let pip = fs_err::read_to_string(v.path().join(PIP_CONF)).unwrap();
    assert!(pip.ends_with("trusted-host = 10.0.0.2\n"), "{pip}");
    let uv: toml::Value =
        toml::from_str(&fs_err::read_to_string(v.path().join(UV_TOML)).unwrap()).unwrap();
    assert_eq!(uv["allow-insecure-host"][0].as_str(), Some("10.0.0.2"));
    assert_eq!(
        uv["pip"]["extra-index-url"][0].as_str(),
        Some("http://10.0.0.2:8080/whl/cu130")
    );
}

/// A `.dist-info` with `Requires-Dist` lines (as the real wheels' METADATA spells them).
fn dist_requiring(venv: &Path, name: &str, version: &str, requires: &[&str]) {
    dist(venv, name, version, Some("uv"));
    let info = venv.join(format!(
        "lib/python3.12/site-packages/{name}-{version}.dist-info"
    ));
    let lines: String = requires
        .iter()
        .map(|r| format!("Requires-Dist: {r}\n"))
        .collect();
    fs_err::write(
        info.join("METADATA"),
        format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{lines}\nbody\n"),
    )
    .unwrap();
}

#[test]
fn jaxs_build_is_jax_jaxlib_the_plugin_and_its_pjrt_while_torchs_dependencies_float() {
    let v = venv();
    // jax 0.12.0's METADATA (cuda13 extra), the plugin's (with-cuda extra), cut to the lines
    // that matter; numpy and the NVIDIA wheels are dependencies at other versions.
    dist_requiring(
        v.path(),
        "jax",
        "0.12.0",
        &[
            "jaxlib<=0.12.0,>=0.12.0",
            "numpy>=2.0",
            "jaxlib==0.12.0; extra == \"cuda13\"",
            "jax-cuda13-plugin[with-cuda]==0.12.0; extra == \"cuda13\"",
            "jax-cuda12-plugin[with-cuda]==0.12.0; extra == \"cuda12\"",
        ],
    );
    dist_requiring(
        v.path(),
        "jaxlib",
        "0.12.0",
        &["numpy>=2.0", "ml_dtypes>=0.5.0"],
    );
    dist_requiring(
        v.path(),
        "jax_cuda13_plugin",
        "0.12.0",
        &[
            "jax-cuda13-pjrt==0.12.0",
            "nvidia-cublas>=13.0.0.19; extra == \"with-cuda\"",
        ],
    );
    dist_requiring(v.path(), "jax_cuda13_pjrt", "0.12.0", &[]);
    dist_requiring(v.path(), "jax_cuda12_plugin", "0.12.0", &[]);
    dist_requiring(v.path(), "nvidia_cublas", "13.1.0.3", &[]);
    dist_requiring(
        v.path(),
        "torch",
        "2.14.1+cu130",
        &[
            "triton==3.6.0; platform_system == \"Linux\"",
            "cuda-toolkit[cudart]==13.0.2; sys_platform == \"linux\" or sys_platform == \"win32\"",
        ],
    );
    dist_requiring(v.path(), "triton", "3.6.0", &[]);
    let site = site_packages(v.path()).unwrap();
    let got: Vec<String> = released_with(&site, &["jax[cuda13]==0.12.0".into()], "x86_64")
        .iter()
        .map(Pin::requirement)
        .collect();
    assert_eq!(
        got,
        [
            "jax_cuda13_pjrt==0.12.0",
            "jax_cuda13_plugin==0.12.0",
            "jaxlib==0.12.0"
        ],
        "the cuda12 plugin is another extra's; numpy and cuBLAS float"
    );
    let torch = released_with(&site, &["torch==2.14.1+cu130".into()], "x86_64");
    assert!(torch.is_empty(), "{torch:?}");

    // A jaxlib swapped under the planned jax is a drift of the guarded build.
    let jax = Packages {
        requirements: vec!["jax[cuda13]==0.12.0".into()],
        ..Packages::default()
    };
    let mut record = GuardRecord::planned(&jax, "cudaup repair".into()).unwrap();
    record
        .pins
        .extend(released_with(&site, &jax.requirements, "x86_64"));
    assert!(drift(v.path(), &record).is_empty());
    fs_err::remove_dir_all(site.join("jaxlib-0.12.0.dist-info")).unwrap();
    dist(v.path(), "jaxlib", "0.11.2", Some("pip"));
    let drifted: Vec<String> = drift(v.path(), &record)
        .iter()
        .map(|d| d.pin.requirement())
        .collect();
    assert_eq!(drifted, ["jaxlib==0.12.0"]);
}
