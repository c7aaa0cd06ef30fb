//! Windows for real, end to end under Wine (issue 43): `cudaup.exe install --profile cuda-dev`
//! in a private Wine prefix, from a loopback index of NVIDIA's real `win_amd64` wheels (fetched
//! once from PyPI into target/tmp and reused while their bytes hash right), puts the toolkit in
//! NVIDIA's Windows layout under `%LOCALAPPDATA%\cudaup` and sets `CUDA_PATH`,
//! `CUDA_PATH_V<major>_<minor>` and the user `Path` in `HKCU\Environment` (read back with
//! `wine reg query`); `cudaup.exe uninstall --purge` then leaves the registry key byte for byte
//! as it was (`wine reg export`) and the prefix's user folders as they were.
//!
//! `.ci/windows` runs it, naming the cross-built binary in `CUDAUP_WINE_EXE`; anywhere else it
//! records its skip. Three components keep it cheap (nvcc, crt, cudart: about 38 MB of wheels,
//! no cuDNN): the compiler driver, its headers and the runtime are what exercise every part of
//! the Windows layout (`bin\`, `bin\x64\`, `include\`, `lib\x64\`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sha2::Digest;

use crate::common::server::Server;
use crate::common::*;

/// The components installed: every Windows folder of NVIDIA's layout, and nothing large.
const COMPONENTS: &str = "nvcc,crt,cudart";

/// The wheels of those components, as the catalog pins them for `cuda`.
const WHEELS: [&str; 3] = ["nvidia-cuda-nvcc", "nvidia-cuda-crt", "nvidia-cuda-runtime"];

/// NVIDIA's `win_amd64` wheel of `package` `version` from PyPI, in the cache the Linux
/// real-wheels test uses (`by-sha256/<sha256>/<file>`): reused while its size is the one it was
/// verified with, else fetched and checked against PyPI's sha256. `Err` when PyPI cannot be
/// reached.
pub(crate) fn windows_wheel(package: &str, version: &str) -> Result<PathBuf, String> {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nvidia-wheels");
    let client = reqwest::blocking::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .timeout(std::time::Duration::from_secs(600))
        .build()
        .unwrap();
    let page = client
        .get(format!("https://pypi.org/simple/{package}/"))
        .header("Accept", "application/vnd.pypi.simple.v1+json")
        .send()
        .and_then(|r| r.error_for_status())
        .and_then(|r| r.bytes())
        .map_err(|e| format!("https://pypi.org/simple/{package}/: {e}"))?;
    let doc: serde_json::Value = serde_json::from_slice(&page).map_err(|e| e.to_string())?;
    let file = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|f| {
            let name = f["filename"].as_str().unwrap_or("");
            let v = name.split('-').nth(1).unwrap_or("");
            name.ends_with("-win_amd64.whl")
                && (v == version || v.starts_with(&format!("{version}.")))
        })
        .unwrap_or_else(|| panic!("PyPI has no win_amd64 wheel of {package} {version}"));
    crate::toolkit::cached_pypi_file(&client, file, &cache)
}

/// A Wine prefix of its own under target/tmp, made afresh.
struct Wine {
    prefix: PathBuf,
}

impl Wine {
    fn new() -> Wine {
        let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wine-e2e");
        let _ = fs_err::remove_dir_all(&prefix);
        let wine = Wine { prefix };
        let boot = wine.run("wineboot", &["--init"]);
        assert!(boot.status.success(), "wineboot: {}", text(&boot));
        wine
    }

    fn run(&self, program: &str, args: &[&str]) -> Output {
        Command::new(program)
            .args(args)
            .env("WINEPREFIX", &self.prefix)
            .env("WINEDEBUG", "-all")
            // The host's variables stay out of the Windows process's environment.
            .env_remove("CUDAUP_HOME")
            .env_remove("XDG_DATA_HOME")
            .output()
            .unwrap_or_else(|e| panic!("{program}: {e}"))
    }

    fn wine(&self, args: &[&str]) -> Output {
        self.run("wine", args)
    }

    /// `HKCU\Environment` as `wine reg export` writes it (UTF-16, byte for byte).
    fn environment(&self) -> Vec<u8> {
        let file = self.prefix.join("environment.reg");
        let _ = fs_err::remove_file(&file);
        let out = self.wine(&["reg", "export", r"HKCU\Environment", &windows_path(&file)]);
        assert!(out.status.success(), "reg export: {}", text(&out));
        let bytes = fs_err::read(&file).unwrap();
        fs_err::remove_file(&file).unwrap();
        bytes
    }

    /// Every file and folder under the prefix's `drive_c/users`, with each file's sha256.
    fn users(&self) -> BTreeMap<PathBuf, String> {
        let root = self.prefix.join("drive_c/users");
        let mut out = BTreeMap::new();
        let mut todo = vec![root.clone()];
        while let Some(dir) = todo.pop() {
            for e in fs_err::read_dir(&dir).unwrap() {
                let path = e.unwrap().path();
                let meta = path.symlink_metadata().unwrap();
                let what = if meta.is_dir() {
                    todo.push(path.clone());
                    "dir".to_owned()
                } else if meta.is_file() {
                    hex::encode(sha2::Sha256::digest(fs_err::read(&path).unwrap()))
                } else {
                    format!("link to {:?}", fs_err::read_link(&path).ok())
                };
                out.insert(path.strip_prefix(&root).unwrap().to_owned(), what);
            }
        }
        out
    }
}

/// A host path as Wine's `Z:` drive names it.
fn windows_path(p: &Path) -> String {
    format!("Z:{}", p.display()).replace('/', "\\")
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn needs_network_wine_cuda_dev_from_windows_wheels_sets_the_registry_and_uninstall_puts_it_back() {
    let test = "needs_network_wine_cuda_dev_from_windows_wheels_sets_the_registry_and_uninstall_puts_it_back";
    let Some(exe) = std::env::var_os("CUDAUP_WINE_EXE").map(PathBuf::from) else {
        return skipped(
            test,
            "needs cudaup.exe and Wine: .ci/windows runs it (CUDAUP_WINE_EXE names the binary)",
        );
    };
    assert!(
        exe.is_file(),
        "CUDAUP_WINE_EXE: {} is not a file",
        exe.display()
    );
    let catalog = cudaup::catalog::Catalog::embedded();
    let m = &catalog.components;
    // The newest release the catalog records wheels for (all three have win_amd64 ones).
    let cuda = m.wheel_releases().last().unwrap().to_string();
    let pins = m
        .wheels_for(&cudaup::model::version::Version::parse(&cuda).unwrap())
        .unwrap();
    let mut wheels = Vec::new();
    for w in WHEELS {
        let pin = &pins.packages[w];
        assert!(pin.win_amd64.is_some(), "{w}: no win_amd64 size recorded");
        match windows_wheel(w, &pin.version) {
            Ok(p) => wheels.push(p),
            Err(why) => return skipped(test, &format!("PyPI is not reachable: {why}")),
        }
    }
    let index = tempfile::tempdir().unwrap();
    crate::common::wheels::write_index_with(
        &index.path().join("simple"),
        &wheels,
        Some(&index.path().join("packages")),
    );
    let server = Server::start(index.path().to_owned());
    let wine = Wine::new();
    let system = wine.prefix.join("machine.json");
    fs_err::write(
        &system,
        r#"{"os": {"family": "windows", "arch": "x86_64"}, "gpus": []}"#,
    )
    .unwrap();
    let registry_before = wine.environment();
    let users_before = wine.users();

    let exe_arg = exe.display().to_string();
    let index_url = format!("{}/simple", server.url());
    let system_arg = windows_path(&system);
    let install = wine.wine(&[
        &exe_arg,
        "install",
        "--profile",
        "cuda-dev",
        "--driver",
        "keep",
        "--system",
        &system_arg,
        "--cuda",
        &cuda,
        "--components",
        COMPONENTS,
        "--no-cudnn",
        "--index-url",
        &index_url,
        "--allow-http",
        "--yes",
    ]);
    assert!(install.status.success(), "install: {}", text(&install));
    let said = text(&install);
    assert!(
        said.contains(r"set HKCU\Environment\CUDA_PATH = ")
            && said.contains("on PATH in new shells"),
        "{said}"
    );

    // The toolkit in NVIDIA's Windows layout, in %LOCALAPPDATA%\cudaup.
    let homes: Vec<PathBuf> = fs_err::read_dir(wine.prefix.join("drive_c/users"))
        .unwrap()
        .map(|e| e.unwrap().path().join("AppData/Local/cudaup"))
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(homes.len(), 1, "{homes:?}\n{}", text(&install));
    let prefix = homes[0].join("toolkits").join(format!("cuda-{cuda}"));
    for file in [
        "bin/nvcc.exe",
        "bin/ptxas.exe",
        "bin/nvcc.profile",
        "bin/x64/cudart64_13.dll",
        "lib/x64/cudart.lib",
        "include/cuda_runtime.h",
        "include/crt/host_defines.h",
        "version.json",
    ] {
        assert!(
            prefix.join(file).is_file(),
            "{file} missing\n{}",
            text(&install)
        );
    }
    assert!(!prefix.join("lib64").exists(), "no Linux layout on Windows");
    let mut todo = vec![prefix.clone()];
    while let Some(dir) = todo.pop() {
        for e in fs_err::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let meta = p.symlink_metadata().unwrap();
            assert!(
                !meta.file_type().is_symlink(),
                "a link in the toolkit: {p:?}"
            );
            if meta.is_dir() {
                todo.push(p);
            }
        }
    }

    // The user's environment, read back from the registry.
    let query = wine.wine(&["reg", "query", r"HKCU\Environment"]);
    assert!(query.status.success(), "reg query: {}", text(&query));
    let values = String::from_utf8_lossy(&query.stdout).to_string();
    let value = |name: &str| {
        values
            .lines()
            .map(str::trim)
            .find_map(|l| {
                let mut parts = l.splitn(3, "    ");
                if parts.next()? != name {
                    return None;
                }
                Some((parts.next()?.to_owned(), parts.next()?.to_owned()))
            })
            .unwrap_or_else(|| panic!("no {name} in HKCU\\Environment:\n{values}"))
    };
    let (kind, cuda_path) = value("CUDA_PATH");
    assert_eq!(kind, "REG_SZ");
    assert!(
        cuda_path.ends_with(&format!(r"\AppData\Local\cudaup\toolkits\cuda-{cuda}")),
        "{cuda_path}"
    );
    let mut release = cuda.split('.');
    let versioned = format!(
        "CUDA_PATH_V{}_{}",
        release.next().unwrap(),
        release.next().unwrap()
    );
    assert_eq!(value(&versioned).1, cuda_path);
    let (_, path) = value("Path");
    let entries: Vec<&str> = path.split(';').collect();
    assert!(entries[0].ends_with(r"\AppData\Local\cudaup\bin"), "{path}");
    assert!(
        entries.contains(&format!(r"{cuda_path}\bin").as_str()),
        "{path}"
    );
    assert!(
        entries.contains(&format!(r"{cuda_path}\bin\x64").as_str()),
        "{path}"
    );

    // Uninstall: the registry key byte for byte, the user folders file for file.
    let uninstall = wine.wine(&[&exe_arg, "uninstall", "--purge", "--yes"]);
    assert!(
        uninstall.status.success(),
        "uninstall: {}",
        text(&uninstall)
    );
    assert!(
        wine.environment() == registry_before,
        "HKCU\\Environment differs after uninstall:\n{}",
        String::from_utf8_lossy(&wine.wine(&["reg", "query", r"HKCU\Environment"]).stdout)
    );
    let users_after = wine.users();
    let changed: Vec<_> = users_before
        .keys()
        .chain(users_after.keys())
        .filter(|k| users_before.get(*k) != users_after.get(*k))
        .collect();
    assert!(
        changed.is_empty(),
        "changed under drive_c/users: {changed:?}\n{}",
        text(&uninstall)
    );
    drop(server);
}

/// The plan for a Windows machine sizes the toolkit from NVIDIA's `win_amd64` wheels (the
/// catalog's sizes for them), and shows no size for NVIDIA's archives, which Windows does not
/// install; a component without a Windows wheel (`culibos`) is named.
#[test]
fn a_windows_plan_sizes_the_win_amd64_wheels_and_no_archives() {
    let ctx = TestContext::new();
    let system = ctx.dir().join("windows.json");
    fs_err::write(
        &system,
        r#"{"os": {"family": "windows", "arch": "x86_64"}, "gpus": []}"#,
    )
    .unwrap();
    let plan = ctx
        .cudaup(&[
            "plan",
            "--profile",
            "cuda-dev",
            "--driver",
            "keep",
            "--system",
            &system.display().to_string(),
            "--json",
        ])
        .json();
    let t = &plan["toolkit_components"];
    assert!(t["redist"].is_null(), "{t}");
    let cuda = cudaup::model::version::Version::parse(t["cuda"].as_str().unwrap()).unwrap();
    let catalog = cudaup::catalog::Catalog::embedded();
    let m = &catalog.components;
    let pins = m.wheels_for(&cuda).unwrap();
    let want: u64 = m
        .members("standard")
        .iter()
        .filter_map(|n| m.component(n)?.wheel.clone())
        .filter_map(|w| pins.packages.get(&w)?.win_amd64)
        .sum();
    assert_eq!(t["wheels"]["bytes"].as_u64(), Some(want), "{t}");
    assert!(
        t["wheels"]["missing"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "culibos"),
        "{t}"
    );
}
