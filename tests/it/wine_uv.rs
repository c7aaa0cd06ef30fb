//! uv on Windows, end to end under Wine (issue 43): `cudaup.exe install --profile cpu`, its
//! framework step's installer brought from a loopback copy of PyTorch's index that also serves
//! uv's real `win_amd64` wheel (fetched once from PyPI into target/tmp, as tests/it/wine.rs
//! fetches NVIDIA's). With a spoiled sha256 in the catalog the wheel is refused and no uv is
//! placed or run (the installer falls back to pip, saying why); with the shipped catalog
//! `uv.exe` lands in `%LOCALAPPDATA%\cudaup\tools\uv-<version>` with the pinned bytes and its
//! receipt, and answers `uv.exe --version` under Wine.
//!
//! The venv's base Python is a stand-in the test plants as `.venv\Scripts\python.exe` (with its
//! `pyvenv.cfg`), which `detect` finds in the working directory as it finds any venv there:
//! Wine has no Python, so the step stops at `uv venv`/`python -m venv` after the installer was
//! chosen; no torch is downloaded. `.ci/windows` runs it (`CUDAUP_WINE_EXE`); elsewhere it
//! records its skip.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sha2::Digest;

use crate::common::server::Server;
use crate::common::*;

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `wine <args>` in `prefix`, started in `cwd`, with none of the host's cudaup variables.
fn wine(prefix: &Path, cwd: &Path, args: &[&str]) -> Output {
    Command::new("wine")
        .args(args)
        .current_dir(cwd)
        .env("WINEPREFIX", prefix)
        .env("WINEDEBUG", "-all")
        .env_remove("CUDAUP_HOME")
        .env_remove("CUDAUP_MANIFESTS")
        .env_remove("XDG_DATA_HOME")
        .output()
        .unwrap_or_else(|e| panic!("wine: {e}"))
}

#[test]
fn needs_network_wine_uv_exe_is_fetched_verified_and_runs_and_a_wrong_sha256_is_refused() {
    let test =
        "needs_network_wine_uv_exe_is_fetched_verified_and_runs_and_a_wrong_sha256_is_refused";
    let Some(exe) = std::env::var_os("CUDAUP_WINE_EXE").map(PathBuf::from) else {
        return skipped(
            test,
            "needs cudaup.exe and Wine: .ci/windows runs it (CUDAUP_WINE_EXE names the binary)",
        );
    };
    let catalog = cudaup::catalog::Catalog::embedded();
    let pin = &catalog.uv;
    let pinned = pin
        .wheel_for_os("windows", "x86_64")
        .expect("uv.toml's Windows row");
    let wheel = match crate::wine::windows_wheel("uv", &pin.version) {
        Ok(w) => w,
        Err(why) => return skipped(test, &format!("PyPI is not reachable: {why}")),
    };
    assert_eq!(wheel.file_name().unwrap(), pinned.filename.as_str());

    // PyTorch's index, copied: the planned torch listed (never fetched), and uv beside it.
    let root = tempfile::tempdir().unwrap();
    let cpu = root.path().join("whl/cpu");
    crate::common::wheels::write_index_with(
        &cpu,
        &[wheel],
        Some(&root.path().join("whl/packages")),
    );
    let torch = cpu.join("torch");
    fs_err::create_dir_all(&torch).unwrap();
    let server = Server::start(root.path().to_owned());

    // A private prefix, with the stand-in for the bcryptprimitives.dll Wine 8 lacks (Rust
    // programs, uv.exe as cudaup.exe, take their random bytes from it; see .ci/wine).
    let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wine-uv");
    let _ = fs_err::remove_dir_all(&prefix);
    let work = tempfile::tempdir().unwrap();
    let boot = wine(&prefix, work.path(), &["wineboot", "--init"]);
    assert!(boot.status.success(), "wineboot: {}", text(&boot));
    let dll = exe.with_file_name("bcryptprimitives.dll");
    fs_err::copy(
        &dll,
        prefix.join("drive_c/windows/system32/bcryptprimitives.dll"),
    )
    .unwrap();

    // The base Python: a venv in the working directory, as `detect` reads one from its files.
    let venv = work.path().join(".venv");
    fs_err::create_dir_all(venv.join("Scripts")).unwrap();
    fs_err::write(venv.join("Scripts/python.exe"), b"MZ").unwrap();
    let system = work.path().join("machine.json");
    let python = "3.14.0";
    fs_err::write(
        venv.join("pyvenv.cfg"),
        format!("home = C:\\Python314\r\nversion = {python}\r\n"),
    )
    .unwrap();
    fs_err::write(
        &system,
        format!(
            r#"{{"os": {{"family": "windows", "arch": "x86_64"}}, "gpus": [], "pythons": [{{"path": "Z:{}", "version": "{python}"}}]}}"#,
            venv.join("Scripts/python.exe").display().to_string().replace('/', "\\\\")
        ),
    )
    .unwrap();
    let plan = Command::new(env!("CARGO_BIN_EXE_cudaup"))
        .args([
            "plan",
            "--profile",
            "cpu",
            "--driver",
            "keep",
            "--json",
            "--system",
        ])
        .arg(&system)
        .output()
        .unwrap();
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).expect("plan --json");
    let planned = |name: &str| {
        plan["components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .and_then(|c| c["version"].as_str())
            .unwrap_or_else(|| panic!("no {name} in the plan: {plan}"))
            .to_owned()
    };
    let listed = format!("torch-{}+cpu-cp314-cp314-win_amd64.whl", planned("torch"));
    fs_err::write(
        torch.join("index.html"),
        format!(
            "<a href=\"../../packages/{listed}#sha256={}\">{listed}</a>\n",
            "a".repeat(64)
        ),
    )
    .unwrap();

    let local = || {
        let users: Vec<PathBuf> = fs_err::read_dir(prefix.join("drive_c/users"))
            .unwrap()
            .map(|e| e.unwrap().path().join("AppData/Local/cudaup"))
            .filter(|p| p.is_dir())
            .collect();
        users.into_iter().next()
    };
    let exe_arg = exe.display().to_string();
    let torch_index = format!("{}/whl", server.url());
    let system_arg = format!("Z:{}", system.display()).replace('/', "\\");
    let install = |manifests: Option<&Path>| {
        let mut args = vec![
            exe_arg.clone(),
            "install".into(),
            "--profile".into(),
            "cpu".into(),
            "--driver".into(),
            "keep".into(),
            "--system".into(),
            system_arg.clone(),
            "--torch-index".into(),
            torch_index.clone(),
            "--allow-http".into(),
            "--yes".into(),
        ];
        if let Some(m) = manifests {
            args.push("--manifests".into());
            args.push(format!("Z:{}", m.display()).replace('/', "\\"));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        wine(&prefix, work.path(), &args)
    };

    // A catalog whose Windows uv sha256 is not the wheel's: refused, nothing placed or run.
    let spoiled = tempfile::tempdir().unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests");
    for e in fs_err::read_dir(&shipped).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            fs_err::copy(&p, spoiled.path().join(p.file_name().unwrap())).unwrap();
        }
    }
    let uv_toml = spoiled.path().join("uv.toml");
    let good = fs_err::read_to_string(&uv_toml).unwrap();
    let bad = good.replace(&pinned.sha256, &"0".repeat(64));
    assert_ne!(good, bad);
    fs_err::write(&uv_toml, bad).unwrap();
    let refused = install(Some(spoiled.path()));
    let said = text(&refused);
    assert!(!refused.status.success(), "{said}");
    assert!(
        said.contains("installer: pip (no uv could be had: checksum mismatch")
            && said.contains(&pinned.sha256),
        "{said}"
    );
    let home = local().unwrap_or_else(|| panic!("no cudaup home\n{said}"));
    let placed = home
        .join("tools")
        .join(format!("uv-{}", pin.version))
        .join("uv.exe");
    assert!(!placed.exists(), "a refused uv was placed\n{said}");
    assert!(!home.join("receipts/uv.json").exists(), "{said}");

    // The shipped catalog: fetched from the copy, checked, placed with its receipt.
    let brought = install(None);
    let said = text(&brought);
    assert!(
        said.contains(&format!(
            "installer: uv {} (fetched and verified by cudaup into",
            pin.version
        )),
        "{said}"
    );
    // cudaup drove it: uv itself got as far as asking the stand-in Python.
    assert!(
        said.contains("uv venv failed") && said.contains("Failed to inspect Python interpreter"),
        "{said}"
    );
    let bytes = fs_err::read(&placed).unwrap_or_else(|e| panic!("{e}\n{said}"));
    assert_eq!(
        hex::encode(sha2::Sha256::digest(&bytes)),
        pinned.binary_sha256
    );
    let receipt: serde_json::Value =
        serde_json::from_slice(&fs_err::read(home.join("receipts/uv.json")).unwrap()).unwrap();
    assert_eq!(receipt["wheel"], pinned.filename.as_str(), "{receipt}");
    assert!(
        receipt["from"].as_str().unwrap().starts_with(&torch_index),
        "{receipt}"
    );
    // And it runs under Wine.
    let version = wine(
        &prefix,
        work.path(),
        &[&placed.display().to_string(), "--version"],
    );
    assert!(
        String::from_utf8_lossy(&version.stdout).starts_with(&format!("uv {} ", pin.version)),
        "{}",
        text(&version)
    );
    drop(server);
}
