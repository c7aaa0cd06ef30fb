//! The guard (issue 42): a venv cudaup creates refuses a swap of its planned torch for a CPU
//! stand-in from a loopback index (pip through the venv's pip.conf, uv through its uv.toml); a
//! swap forced past the constraints is said once at the next `import torch`, doctor and `guard
//! status` name the installer and the time, and `repair` puts the planned build back. `guard
//! off|on` and uninstall remove exactly what the guard wrote. Everything offline: the wheels
//! are built here and carry no dependencies.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::context::run;
use crate::common::server::Server;
use crate::common::wheels;
use crate::common::*;
use crate::framework::ARCH;

const H200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/h200-detect.json"
);
const TAG: &str = "2.14.1+cu130";

/// `whl/cu130` with the planned torch and companions, `whl/cpu` with a CPU torch of the same
/// release, and an empty `simple/` standing in for PyPI.
fn indexes() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let build = root.path().join("build");
    let cuda = vec![
        wheels::fake_torch_with(&build.join("cu"), TAG, Some("13.0"), ARCH, &[]),
        wheels::fake_companion(&build.join("cu"), "torchvision", "0.29.1+cu130", TAG),
        wheels::fake_companion(&build.join("cu"), "torchaudio", "2.11.0+cu130", TAG),
    ];
    wheels::write_index(&root.path().join("whl/cu130"), &cuda);
    let cpu = vec![wheels::fake_torch_with(
        &build.join("cpu"),
        "2.14.1+cpu",
        None,
        &[],
        &[],
    )];
    wheels::write_index(&root.path().join("whl/cpu"), &cpu);
    fs_err::create_dir_all(root.path().join("simple")).unwrap();
    fs_err::write(root.path().join("simple/index.html"), "<html></html>").unwrap();
    root
}

/// `cudaup install --profile pytorch` into `home/venv` from `server`'s indexes; with
/// `CUDAUP_NO_UV=1` the loopback `simple/` stands in for PyPI, else the real PyPI serves uv.
fn install(home: &Path, server: &Server, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let torch = format!("{}/whl", server.url());
    let pypi = format!("{}/simple", server.url());
    let mut args = crate::common::pytorch::install_args(home, &home.join("venv"), H200, &torch);
    if env.contains(&("CUDAUP_NO_UV", "1")) {
        args.extend(["--pypi-index".to_owned(), pypi]);
    }
    args.extend(extra.iter().map(|e| (*e).to_owned()));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut all = vec![("CUDAUP_TEST_NO_RETRY_DELAY", "1")];
    all.extend_from_slice(env);
    cudaup_env(&argv, home, &all)
}

/// Runs the venv's Python (or pip) with `args`, without the test's own variables.
fn python(venv: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(venv.join("bin/python"));
    cmd.args(args)
        .env_remove("CUDAUP_GUARD_WARNED")
        .env_remove("PIP_CONSTRAINT")
        .env_remove("PIP_CONFIG_FILE")
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

fn torch_version(venv: &Path) -> String {
    let r = python(
        venv,
        &["-c", "import torch; print(torch.__version__)"],
        &[("CUDAUP_GUARD_QUIET", "1")],
    );
    r.stdout.trim().to_owned()
}

/// Every file under `dir`, relative, sorted (bytecode caches left out).
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for e in fs_err::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() && !p.is_symlink() {
                todo.push(p);
            } else if !p.to_string_lossy().contains("__pycache__") {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

fn site(venv: &Path) -> PathBuf {
    fs_err::read_dir(venv.join("lib"))
        .unwrap()
        .map(|e| e.unwrap().path().join("site-packages"))
        .find(|p| p.is_dir())
        .unwrap()
}

#[test]
fn a_guarded_venv_refuses_a_cpu_swap_says_a_forced_one_and_repair_restores_it() {
    let index = indexes();
    let server = Server::start(index.path().to_owned());
    let home = tempfile::tempdir().unwrap();
    let venv = home.path().join("venv");
    let r = install(home.path(), &server, &[], &[("CUDAUP_NO_UV", "1")]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(torch_version(&venv), TAG);
    for f in ["pip.conf", "uv.toml", "cudaup-guard-constraints.txt"] {
        assert!(venv.join(f).is_file(), "{f}");
    }
    assert!(site(&venv).join("cudaup_guard.pth").is_file());
    let quiet = python(&venv, &["-c", "import torch"], &[]);
    assert_eq!(
        (quiet.code, quiet.stderr.as_str()),
        (0, ""),
        "a kept build is not talked about"
    );

    // A swap asked of pip is refused by the venv's own pip.conf: nothing changes.
    let cpu = format!("{}/whl/cpu", server.url());
    let host = server
        .url()
        .trim_start_matches("http://")
        .split(':')
        .next()
        .unwrap()
        .to_owned();
    let pip = |flags: &[&str], env: &[(&str, &str)]| {
        let mut a = vec!["-m", "pip"];
        a.extend_from_slice(flags);
        a.extend_from_slice(&[
            "install",
            "--index-url",
            &cpu,
            "--trusted-host",
            &host,
            "torch==2.14.1+cpu",
        ]);
        python(&venv, &a, env)
    };
    let refused = pip(&[], &[]);
    assert_eq!(refused.code, 1, "{}\n{}", refused.stdout, refused.stderr);
    assert!(
        refused.stderr.contains("ResolutionImpossible")
            || refused.stderr.contains("conflicting dependencies"),
        "{}",
        refused.stderr
    );
    assert_eq!(torch_version(&venv), TAG);

    // `pip --isolated` still reads the venv's own pip.conf; forced past it (no config file at
    // all), the next Python says so, once for the process and its children, with the command
    // that restores it.
    assert_eq!(pip(&["--isolated"], &[]).code, 1);
    let forced = pip(&[], &[("PIP_CONFIG_FILE", "/dev/null")]);
    assert_eq!(forced.code, 0, "{}\n{}", forced.stdout, forced.stderr);
    assert_eq!(torch_version(&venv), "2.14.1+cpu");
    let said = python(
        &venv,
        &[
            "-c",
            "import torch, subprocess, sys; subprocess.run([sys.executable, '-c', 'pass'])",
        ],
        &[],
    );
    assert_eq!(said.code, 0, "{}", said.stderr);
    assert_eq!(
        said.stderr.matches("cudaup's guard:").count(),
        1,
        "{}",
        said.stderr
    );
    assert!(
        said.stderr
            .contains("torch 2.14.1+cpu replaced the planned 2.14.1+cu130 (installed by pip, "),
        "{}",
        said.stderr
    );
    let h = home.path().display().to_string();
    assert!(
        said.stderr.contains(&format!(
            "restore it: cudaup --home {h} repair --fix venv-packages"
        )),
        "{}",
        said.stderr
    );

    // doctor and `guard status` name the installer; status exits 1.
    let tree = no_gpu_tree();
    let doctor = cudaup(
        &[
            "--home",
            &h,
            "doctor",
            "--json",
            "--system-root",
            &tree.root_arg(),
        ],
        home.path(),
    );
    let found = doctor.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "framework-replaced")
        .cloned()
        .unwrap_or_else(|| panic!("{}", doctor.stdout));
    assert!(
        found["message"]
            .as_str()
            .unwrap()
            .contains("installed by pip"),
        "{found}"
    );
    let v = venv.display().to_string();
    let status = cudaup(&["--home", &h, "guard", "status", &v], home.path());
    assert_eq!(status.code, 1, "{}\n{}", status.stdout, status.stderr);
    assert!(status.stdout.contains("guard on"), "{}", status.stdout);
    assert!(
        status
            .stdout
            .contains("torch 2.14.1+cpu replaced the planned 2.14.1+cu130 (installed by pip"),
        "{}",
        status.stdout
    );

    // repair puts the planned build back, and the guard is quiet again.
    let fixed = cudaup_env(
        &["--home", &h, "repair", "--yes"],
        home.path(),
        &[("CUDAUP_NO_UV", "1")],
    );
    assert_eq!(fixed.code, 0, "{}\n{}", fixed.stdout, fixed.stderr);
    assert_eq!(torch_version(&venv), TAG);
    let quiet = python(&venv, &["-c", "import torch"], &[]);
    assert_eq!(quiet.stderr, "");
    let status = cudaup(&["--home", &h, "guard", "status", &v], home.path());
    assert_eq!(status.code, 0, "{}", status.stdout);
}

#[test]
fn guard_off_on_and_uninstall_remove_exactly_what_the_guard_wrote() {
    let index = indexes();
    let server = Server::start(index.path().to_owned());
    let home = tempfile::tempdir().unwrap();
    let venv = home.path().join("venv");
    // A venv that was there before: --no-guard leaves it unguarded, `guard on` guards it, and
    // uninstall (which keeps a venv it did not create) takes the guard's files out again.
    let made = Command::new(tools().join("python3"))
        .args(["-m", "venv", &venv.display().to_string()])
        .output()
        .unwrap();
    assert!(made.status.success());
    let r = install(
        home.path(),
        &server,
        &["--no-guard"],
        &[("CUDAUP_NO_UV", "1")],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let before = files(&venv);
    assert!(
        !before
            .iter()
            .any(|f| f.contains("guard") || f == "pip.conf"),
        "{before:?}"
    );
    let h = home.path().display().to_string();
    let v = venv.display().to_string();
    let status = cudaup(&["--home", &h, "guard", "status", &v], home.path());
    assert_eq!(status.code, 0);
    assert!(status.stdout.contains("no guard"), "{}", status.stdout);

    let on = cudaup(&["--home", &h, "guard", "on", &v], home.path());
    assert_eq!(on.code, 0, "{}\n{}", on.stdout, on.stderr);
    assert!(on.stdout.contains("guard on for"), "{}", on.stdout);
    assert!(
        on.stdout.contains(
            "keeps torch==2.14.1+cu130, torchvision==0.29.1+cu130, torchaudio==2.11.0+cu130"
        ),
        "{}",
        on.stdout
    );
    let guarded = files(&venv);
    let added: Vec<&String> = guarded.iter().filter(|f| !before.contains(f)).collect();
    assert_eq!(added.len(), 5, "{added:?}");
    // The startup check runs (and compiles itself) without a word while all is well.
    assert_eq!(python(&venv, &["-c", "import torch"], &[]).stderr, "");

    let off = cudaup(&["--home", &h, "guard", "off", &v], home.path());
    assert_eq!(off.code, 0, "{}\n{}", off.stdout, off.stderr);
    assert!(off.stdout.contains("5 file(s) removed"), "{}", off.stdout);
    assert_eq!(files(&venv), before);
    assert!(!fs_err::read_dir(site(&venv).join("__pycache__"))
        .map(|d| d
            .flatten()
            .any(|e| e.file_name().to_string_lossy().contains("cudaup")))
        .unwrap_or(false));
    let status = cudaup(&["--home", &h, "guard", "status", &v], home.path());
    assert!(status.stdout.contains("guard off"), "{}", status.stdout);

    // On again, then uninstall: the venv stays (cudaup did not create it), the guard goes.
    assert_eq!(
        cudaup(&["--home", &h, "guard", "on", &v], home.path()).code,
        0
    );
    let gone = cudaup(&["--home", &h, "uninstall", "--yes"], home.path());
    assert_eq!(gone.code, 0, "{}\n{}", gone.stdout, gone.stderr);
    assert_eq!(files(&venv), before);

    // A venv no receipt names is refused with exit code 2.
    let stray = cudaup(&["--home", &h, "guard", "on", &v], home.path());
    assert_eq!(stray.code, 2, "{}", stray.stderr);
    assert!(stray.stderr.contains("no venv receipt"), "{}", stray.stderr);
}

#[test]
fn needs_network_uv_refuses_the_swap_through_the_venvs_uv_toml() {
    let index = indexes();
    let server = Server::start(index.path().to_owned());
    let home = tempfile::tempdir().unwrap();
    let venv = home.path().join("venv");
    // Without CUDAUP_NO_UV cudaup brings uv from PyPI (the one part that needs the network).
    let r = install(home.path(), &server, &[], &[]);
    let uv = home.path().join("tools/uv-0.13.9/uv");
    if r.code != 0 || !uv.is_file() {
        skipped(
            "needs_network_uv_refuses_the_swap_through_the_venvs_uv_toml",
            "PyPI did not answer: no uv was brought",
        );
        return;
    }
    let cpu = format!("{}/whl/cpu", server.url());
    let uv_install = |extra: &[&str]| {
        let mut cmd = Command::new(&uv);
        cmd.current_dir(&venv)
            .args([
                "pip",
                "install",
                "--python",
                "bin/python",
                "--index-url",
                &cpu,
            ])
            .args(extra)
            .arg("torch==2.14.1+cpu")
            .env("UV_CACHE_DIR", home.path().join("uv-cache"))
            .env_remove("UV_CONSTRAINT");
        run(&mut cmd)
    };
    let refused = uv_install(&[]);
    assert_ne!(refused.code, 0, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("torch==2.14.1+cu130"),
        "{}",
        refused.stderr
    );
    assert_eq!(torch_version(&venv), TAG);
    let forced = uv_install(&["--no-config"]);
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    let said = python(&venv, &["-c", "import torch"], &[]);
    assert!(
        said.stderr
            .contains("torch 2.14.1+cpu replaced the planned 2.14.1+cu130 (installed by uv, "),
        "{}",
        said.stderr
    );
}
