//! Windows' facts: `ver`'s two spellings, the toolkits `CUDA_PATH*` name, and (under Wine, or
//! on Windows) a whole `detect` of a machine whose driver files and toolkits sit in a temporary
//! folder, nothing run.

use super::*;

#[test]
fn ver_gives_the_version_on_windows_and_under_wine() {
    assert_eq!(
        parse_ver("\r\nMicrosoft Windows [Version 10.0.22631.4460]\r\n").as_deref(),
        Some("10.0.22631.4460")
    );
    assert_eq!(
        parse_ver("\r\nMicrosoft Windows 6.1.7601\r\n").as_deref(),
        Some("6.1.7601")
    );
    assert_eq!(parse_ver("'ver' is not recognized"), None);
    assert_eq!(parse_ver("Version 10..0"), None);
}

#[test]
fn cuda_path_comes_first_then_each_versioned_one_by_name() {
    let process = Process::with_vars(
        [
            ("CUDA_PATH_V13_0", "D:\\cuda\\v13.0"),
            ("CUDA_PATH", "D:\\cuda\\v13.0"),
            ("CUDA_PATH_V12_4", "D:\\cuda\\v12.4"),
            ("CUDA_PATH_V11_8", ""),
            ("CUDA_HOME", "elsewhere"),
        ],
        "/",
    );
    assert_eq!(
        cuda_path_vars(&process),
        [
            PathBuf::from("D:\\cuda\\v13.0"),
            PathBuf::from("D:\\cuda\\v12.4"),
            PathBuf::from("D:\\cuda\\v13.0"),
        ]
    );
}

/// Answers `cmd /c ver` as Windows 11 does; starts nothing else.
#[cfg(windows)]
struct Ver;

#[cfg(windows)]
impl Runner for Ver {
    fn run(
        &self,
        program: &std::path::Path,
        args: &[&str],
        _timeout: Duration,
    ) -> Result<crate::world::runner::Output, crate::world::runner::RunError> {
        if program == std::path::Path::new("cmd") && args == ["/c", "ver"] {
            return Ok(crate::world::runner::Output {
                status: Some(0),
                stdout: "\r\nMicrosoft Windows [Version 10.0.22631.4460]\r\n".into(),
                stderr: String::new(),
            });
        }
        Err(crate::world::runner::RunError::new(
            program,
            "nothing else runs in this test",
        ))
    }
}

/// Issue 43, run under Wine in CI: `detect` on Windows names the version `ver` gives, the
/// driver's nvidia-smi.exe and nvml.dll where they are, and one toolkit per `CUDA_PATH*`
/// (read from its version.json, each once).
#[cfg(windows)]
#[test]
fn detect_on_windows_reads_ver_the_driver_files_and_cuda_path_toolkits() {
    use crate::model::system::{OsFamily, Owner};
    let dir = tempfile::tempdir().unwrap();
    let system32 = dir.path().join("Windows").join("System32");
    fs_err::create_dir_all(&system32).unwrap();
    for f in ["nvidia-smi.exe", "nvml.dll"] {
        fs_err::write(system32.join(f), "stand-in").unwrap();
    }
    let toolkit = |v: &str, full: &str| {
        let root = dir.path().join("CUDA").join(format!("v{v}"));
        fs_err::create_dir_all(root.join("bin")).unwrap();
        fs_err::write(root.join("bin").join("nvcc.exe"), "stand-in").unwrap();
        fs_err::write(
            root.join("version.json"),
            format!(r#"{{"cuda": {{"name": "CUDA SDK", "version": "{full}"}}}}"#),
        )
        .unwrap();
        root
    };
    let v13 = toolkit("13.0", "13.0.2");
    let v12 = toolkit("12.4", "12.4.1");
    let empty_path = dir.path().join("empty");
    fs_err::create_dir_all(&empty_path).unwrap();
    let process = Process::with_vars(
        [
            (
                "SYSTEMROOT",
                dir.path().join("Windows").display().to_string(),
            ),
            (
                "PROGRAMFILES",
                dir.path().join("none").display().to_string(),
            ),
            ("CUDA_PATH", v13.display().to_string()),
            ("CUDA_PATH_V13_0", v13.display().to_string()),
            ("CUDA_PATH_V12_4", v12.display().to_string()),
            ("PATH", empty_path.display().to_string()),
        ],
        dir.path(),
    );
    let opts = crate::detect::Options {
        root: crate::detect::Root::live(),
        deep: false,
        nvml_library: None,
        pythons: true,
        cudaup_toolkits: None,
        cudaup_venvs: None,
    };
    let catalog = crate::catalog::Catalog::embedded();
    let d = crate::detect::detect(&process, &Ver, &catalog, &opts);
    assert_eq!(d.system.os.family, OsFamily::Windows);
    assert_eq!(d.system.os.version.as_deref(), Some("10.0.22631.4460"));
    assert_eq!(d.os_pretty_name.as_deref(), Some("Windows 10.0.22631.4460"));
    // Under Wine, /proc and /.dockerenv are the Linux host's, seen through Z:: not Windows'.
    assert_eq!(
        (d.system.os.kernel.as_deref(), d.container.as_deref()),
        (None, None)
    );
    assert_eq!(
        d.driver_files,
        [system32.join("nvidia-smi.exe"), system32.join("nvml.dll")]
    );
    // Only this test's toolkits (the host's own, seen through Wine's Z:, are not its business).
    let real = |p: &std::path::Path| fs_err::canonicalize(p).unwrap();
    let mut ours: Vec<(String, std::path::PathBuf, Owner)> = d
        .system
        .toolkits
        .iter()
        .map(|t| {
            (
                t.version.clone(),
                std::path::PathBuf::from(&t.path),
                t.owner,
            )
        })
        .filter(|(_, p, _)| p.starts_with(real(dir.path())))
        .collect();
    ours.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        ours,
        [
            ("12.4.1".to_owned(), real(&v12), Owner::System),
            ("13.0.2".to_owned(), real(&v13), Owner::System),
        ]
    );
    // No wsl.exe in this System32 yet: said as such; with one, its path.
    assert_eq!(d.wsl_exe, Some(None));
    fs_err::write(system32.join("wsl.exe"), "stand-in").unwrap();
    let d = crate::detect::detect(&process, &Ver, &catalog, &opts);
    assert_eq!(d.wsl_exe, Some(Some(system32.join("wsl.exe"))));
}

#[test]
fn wsl_exe_is_looked_for_in_system32_only() {
    let dir = tempfile::tempdir().unwrap();
    let process = Process::with_vars([("SYSTEMROOT", dir.path().display().to_string())], "/");
    assert_eq!(wsl_exe(&process), None);
    let system32 = dir.path().join("System32");
    fs_err::create_dir_all(&system32).unwrap();
    fs_err::write(system32.join("wsl.exe"), "stand-in").unwrap();
    assert_eq!(wsl_exe(&process), Some(system32.join("wsl.exe")));
    assert_eq!(
        wsl_exe(&Process::with_vars(Vec::<(String, String)>::new(), "/")),
        None
    );
}

/// python.org's default places, newest first: this user's `Programs\Python` (no admin), then
/// all users' under Program Files; a folder without `python.exe` or of another name is no
/// Python. Nothing is run.
#[test]
fn pythons_are_found_where_python_orgs_installer_puts_them_newest_first() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("AppData").join("Local");
    let files = tmp.path().join("Program Files");
    let user = local.join("Programs").join("Python");
    for dir in [
        user.join("Python312"),
        user.join("Python313"),
        files.join("Python311"),
        files.join("Python314t"),
    ] {
        fs_err::create_dir_all(&dir).unwrap();
        fs_err::write(dir.join("python.exe"), b"MZ").unwrap();
    }
    fs_err::create_dir_all(user.join("Python310")).unwrap();
    fs_err::create_dir_all(files.join("PythonTools")).unwrap();
    fs_err::write(files.join("PythonTools").join("python.exe"), b"MZ").unwrap();
    let process = Process::with_vars(
        [
            ("LOCALAPPDATA", local.to_str().unwrap()),
            ("PROGRAMFILES", files.to_str().unwrap()),
        ],
        "/",
    );
    assert_eq!(
        python_installs(&process),
        [
            files.join("Python314t").join("python.exe"),
            user.join("Python313").join("python.exe"),
            user.join("Python312").join("python.exe"),
            files.join("Python311").join("python.exe"),
        ]
    );
    assert!(python_installs(&Process::with_vars([("X", "y")], "/")).is_empty());
}
