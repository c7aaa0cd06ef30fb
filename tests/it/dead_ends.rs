//! The first run is never a dead end (issue 37): on a machine without a GPU whose only way out
//! is PyPI, the `cpu` profile takes PyPI's torch (the CUDA build, which runs on the CPU) instead
//! of failing; and no refusal recommends a command that is refused on the same machine.
//! PyTorch's index is a port nothing listens on; PyPI is a loopback index of stand-in wheels.

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use crate::common::server::Server;
use crate::common::wheels;
use crate::common::*;

/// A URL nothing answers on: a port bound once and released.
pub(crate) fn dead() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}")
}

/// A PyPI-style index at `<root>/simple` holding what PyPI serves for torch 2.15.0 on Linux
/// x86_64: the cu132 build, untagged, and its companions.
fn pypi_with_the_cuda_build() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("build");
    let built = vec![
        wheels::fake_torch_with(&dir, "2.15.0", Some("13.2"), &["sm_90"], &[]),
        wheels::fake_companion(&dir, "torchvision", "0.29.2", "2.15.0"),
        wheels::fake_companion(&dir, "torchaudio", "2.11.1", "2.15.0"),
    ];
    wheels::write_index(&root.path().join("simple"), &built);
    root
}

fn context() -> TestContext {
    TestContext::new()
        .with_env("CUDAUP_NO_UV", "1")
        .with_env("CUDAUP_PROBE_TIMEOUT", "5")
}

#[test]
fn without_a_gpu_and_pytorchs_index_the_cpu_profile_takes_pypis_build() {
    let index = pypi_with_the_cuda_build();
    let server = Server::start(index.path().to_owned());
    let ctx = context();
    let pypi = format!("{}/simple", server.url());
    let torch_index = format!("{}/whl", dead());
    let venv = ctx.dir().join("venv");
    let venv_arg = venv.display().to_string();
    let sources = [
        "--pypi-index",
        &pypi,
        "--torch-index",
        &torch_index,
        "--allow-http",
    ];

    // The plan says, before anything is asked, what PyPI's build costs and why it would do.
    let system = ctx.system_arg();
    let mut plan = vec!["plan", "--system", &system, "--profile", "cpu"];
    plan.extend_from_slice(&sources);
    let shown = ctx.cudaup(&plan);
    assert_eq!(shown.code, 0, "{}\n{}", shown.stdout, shown.stderr);
    assert!(
        shown.stdout.contains(
            "PyPI's torch 2.15.0 for Linux x86_64 is the cu132 build, which runs on the CPU too; it is a larger download than the cpu build, as it brings CUDA 13.2's libraries"
        ) && shown.stdout.contains("(cuBLAS alone: about 386 MiB)"),
        "{}",
        shown.stdout
    );

    let mut args = vec![
        "--profile",
        "cpu",
        "--venv",
        &venv_arg,
        "--yes",
        "--no-modify-path",
    ];
    args.extend_from_slice(&sources);
    let run = ctx.install(&args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("pip install torch==2.15.0 torchvision==0.29.2 torchaudio==2.11.1"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("which runs on the CPU too"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("not PyTorch's index {torch_index}")),
        "the dead route is named: {}",
        run.stdout
    );
    let out = Command::new(venv.join("bin/python"))
        .args([
            "-c",
            "import torch; print(torch.__version__, torch.version.cuda)",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2.15.0 13.2");

    // The receipt records the route and the build it holds (verify's judgement of it:
    // verify::framework's what_is_skipped_or_excused).
    let receipts = ctx.cudaup_home().join("receipts");
    let receipt = fs_err::read_dir(&receipts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("venv-")
        })
        .expect("a venv receipt");
    let receipt: serde_json::Value =
        serde_json::from_slice(&fs_err::read(receipt).unwrap()).unwrap();
    assert_eq!(receipt["route"]["route"], "pypi", "{receipt:#}");
    assert_eq!(receipt["profile"], "cpu", "{receipt:#}");
    assert!(Path::new(&venv).join("bin/python").exists());
}

/// The plan names the route install will take (issue 37): where the download sites asked up
/// front found PyTorch's index silent, the torch row is PyPI's build, with why, and the route
/// says the index did not answer; where the index answers, the row is the index's as before.
/// `plan` asks this machine's sites only without `--system`: the profile is given (cpu plans on
/// any machine), the indexes are a local PyPI and a dead port or a loopback server.
#[test]
fn the_plans_torch_row_names_the_route_install_takes_when_pytorchs_index_is_down() {
    let index = pypi_with_the_cuda_build();
    let pypi = index.path().join("simple").display().to_string();
    let down = format!("{}/whl", dead());
    let ctx = context()
        .with_env("CUDAUP_PYPI_INDEX", &pypi)
        .with_env("CUDAUP_TORCH_INDEX", &down)
        .with_env("CUDAUP_MIRROR", &dead());
    let args = ["plan", "--profile", "cpu", "--allow-http"];

    let shown = ctx.cudaup(&args);
    assert_eq!(shown.code, 0, "{}\n{}", shown.stdout, shown.stderr);
    let text = &shown.stdout;
    let torch_row = row(text, "torch");
    assert!(torch_row.contains(&format!("from {pypi}")), "{text}");
    assert!(
        torch_row.contains(
            "PyPI's torch 2.15.0 for Linux x86_64 is the cu132 build, which runs on the CPU too"
        ),
        "{text}"
    );
    assert!(!text.contains(&format!("{down}/cpu")), "{text}");
    assert!(
        text.contains(&format!(
            "PyTorch's index {down} (not usable: it did not answer just now (see Download sites)), then PyPI {pypi}"
        )),
        "{text}"
    );

    let doc = ctx.cudaup(&[&args[..], &["--json"]].concat()).json();
    let torch = doc["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "torch")
        .expect("a torch row");
    assert_eq!(torch["index_url"], pypi.as_str(), "{doc:#}");
    assert_eq!(torch["route"], "pypi", "{doc:#}");
    let candidates = doc["framework_route"]["candidates"].as_array().unwrap();
    assert_eq!(candidates[0]["route"], "pytorch");
    assert_eq!(
        candidates[0]["refused"],
        "it did not answer just now (see Download sites)"
    );
    assert!(candidates[1]["refused"].is_null(), "{doc:#}");

    // PyTorch's index answers (an empty loopback server: a 404 is an answer): its CPU build,
    // from it, as before.
    let empty = tempfile::tempdir().unwrap();
    let server = Server::start(empty.path().to_owned());
    let up = format!("{}/whl", server.url());
    let shown = ctx.cudaup_env(&args, &[("CUDAUP_TORCH_INDEX", &up)]);
    assert_eq!(shown.code, 0, "{}\n{}", shown.stdout, shown.stderr);
    let torch_row = row(&shown.stdout, "torch");
    assert!(
        torch_row.contains(&format!("from {up}/cpu")),
        "{}",
        shown.stdout
    );
    assert!(!torch_row.contains("PyPI's torch"), "{}", shown.stdout);
    assert!(!shown.stdout.contains("not usable"), "{}", shown.stdout);
}

/// The plan's row of `name` with its continuation line (`from …`).
fn row(plan: &str, name: &str) -> String {
    plan.lines()
        .skip_while(|l| !l.trim_start().starts_with(&format!("{name} ")))
        .take(2)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A machine picture with this machine's Python (the framework would go into it).
fn picture(
    os: (&str, &str),
    gpus: serde_json::Value,
    driver: serde_json::Value,
) -> serde_json::Value {
    let (python, version) = local_python();
    serde_json::json!({
        "schema_version": 1,
        "os": {"family": os.0, "distro": "ubuntu", "version": "24.04", "arch": os.1,
               "kernel": "6.8.0-45-generic", "wsl": false, "secure_boot": null},
        "gpus": gpus, "driver": driver, "nouveau_loaded": false,
        "toolkits": [], "cudnn": [],
        "pythons": [{"path": python, "version": version, "torch": null, "tensorflow": null}]
    })
}

fn nvidia(name: &str, pci: &str, cc: Option<&str>) -> serde_json::Value {
    serde_json::json!([{"index": 0, "vendor": "nvidia", "name": name, "pci_id": pci,
                        "compute_capability": cc, "architecture": null, "memory_mib": 8192}])
}

fn driver(version: &str) -> serde_json::Value {
    serde_json::json!({"version": version, "cuda_version": null, "kernel_module": "proprietary"})
}

/// The machines the refusals are walked on.
fn machines() -> Vec<(&'static str, serde_json::Value)> {
    let x86 = ("linux", "x86_64");
    vec![
        (
            "no GPU",
            picture(x86, serde_json::json!([]), serde_json::Value::Null),
        ),
        (
            "H200",
            picture(
                x86,
                nvidia("NVIDIA H200", "10de:2335", Some("9.0")),
                driver("580.159.04"),
            ),
        ),
        (
            "RTX 4090, driver 550",
            picture(
                x86,
                nvidia("NVIDIA GeForce RTX 4090", "10de:2684", Some("8.9")),
                driver("550.163.01"),
            ),
        ),
        (
            "Kepler GTX 780",
            picture(
                x86,
                nvidia("NVIDIA GeForce GTX 780", "10de:1004", Some("3.5")),
                driver("470.256.02"),
            ),
        ),
        (
            "an NVIDIA GPU of unknown capability",
            picture(
                x86,
                nvidia("NVIDIA Mystery", "10de:ffff", None),
                serde_json::Value::Null,
            ),
        ),
        (
            "AMD GPU",
            picture(
                x86,
                serde_json::json!([{"index": 0, "vendor": "amd", "name": "AMD Radeon RX 7900 XTX",
                                    "pci_id": "1002:744c", "compute_capability": null,
                                    "architecture": null, "memory_mib": 24576}]),
                serde_json::Value::Null,
            ),
        ),
        (
            "macOS",
            picture(
                ("macos", "arm64"),
                serde_json::json!([]),
                serde_json::Value::Null,
            ),
        ),
    ]
}

/// The commands a refusal offers as ways out, as the flags to change: every `--flag value` in a
/// backticked command or in a "what would work instead" line, and each profile of a "use
/// --profile a, b or c" list. Placeholders (URL, DIR, FILE) are not commands to run.
fn ways_out(text: &str) -> Vec<(String, String)> {
    let mut spans: Vec<&str> = text.split('`').skip(1).step_by(2).collect();
    let mut fixes = false;
    for line in text.lines() {
        if line.contains("what would work instead") {
            fixes = true;
        } else if fixes && line.trim_start().starts_with("- ") {
            spans.push(line);
        }
        if let Some(i) = line.find("(use --profile ") {
            spans.push(&line[i..]);
        }
    }
    let mut out = Vec::new();
    for span in spans {
        let words: Vec<&str> = span
            .split(|c: char| c.is_whitespace() || c == ',' || c == ')' || c == '(' || c == ':')
            .filter(|w| !w.is_empty())
            .collect();
        for (i, w) in words.iter().enumerate() {
            let Some(flag) = [
                "--profile",
                "--cuda",
                "--torch-source",
                "--driver",
                "--torch",
            ]
            .into_iter()
            .find(|f| w == f) else {
                continue;
            };
            let mut values = vec![words.get(i + 1).copied().unwrap_or_default()];
            // "use --profile cuda-dev, full or tensorflow"
            if span.starts_with("(use --profile") {
                values.extend(words[i + 2..].iter().copied().filter(|v| *v != "or"));
            }
            for v in values {
                let placeholder = v.is_empty() || v.chars().all(|c| c.is_ascii_uppercase());
                if !placeholder && !out.contains(&(flag.to_owned(), v.to_owned())) {
                    out.push((flag.to_owned(), v.to_owned()));
                }
            }
        }
    }
    out
}

/// `args` with `flag` set to `value` (replaced where given, else added).
fn with_flag(args: &[String], flag: &str, value: &str) -> Vec<String> {
    let mut out = args.to_vec();
    match out.iter().position(|a| a == flag) {
        Some(i) => out[i + 1] = value.to_owned(),
        None => out.extend([flag.to_owned(), value.to_owned()]),
    }
    out
}

/// Runs `args`; for a refusal, runs every way out it offers and requires each to be accepted.
/// Returns how many ways out were run.
fn walk(ctx: &TestContext, machine: &str, args: &[String]) -> usize {
    let strs: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = ctx.cudaup(&strs);
    if run.code == 0 {
        return 0;
    }
    let text = format!("{}{}", run.stdout, run.stderr);
    let ways = ways_out(&text);
    for (flag, value) in &ways {
        let next = with_flag(args, flag, value);
        let strs: Vec<&str> = next.iter().map(String::as_str).collect();
        let again = ctx.cudaup(&strs);
        assert_eq!(
            again.code, 0,
            "on {machine}, `{}` was refused (exit {}) offering `{flag} {value}`, which is refused too (exit {}):\n--- the first refusal ---\n{text}\n--- the way out's ---\n{}{}",
            args.join(" "),
            run.code,
            again.code,
            again.stdout,
            again.stderr
        );
    }
    ways.len()
}

#[test]
fn no_refusal_offers_a_way_out_that_is_refused_on_the_same_machine() {
    let mut ways = 0;
    for (name, doc) in machines() {
        let ctx = TestContext::new().with_system(&doc);
        let system = ctx.system_arg();
        // No profile first: the machine's default (issue 37, item 1), then each profile.
        for profile in ["", "full", "pytorch", "tensorflow", "cuda-dev", "cpu"] {
            let mut args: Vec<String> = ["plan", "--system", &system].map(str::to_owned).to_vec();
            if !profile.is_empty() {
                args.extend(["--profile".to_owned(), profile.to_owned()]);
            }
            let base = args.len();
            ways += walk(&ctx, name, &args);
            for pin in [["--driver", "keep"], ["--cuda", "99.9"], ["--cudnn", "9"]] {
                args.extend(pin.map(str::to_owned));
                ways += walk(&ctx, name, &args);
                args.truncate(base);
            }
        }
    }
    assert!(ways >= 5, "only {ways} ways out were offered and run");
}

#[test]
fn no_route_refusal_offers_a_way_out_that_is_refused_on_the_same_machine() {
    // PyPI's builds of torch 2.15.0 (cu132) and 2.14.1 (cu130) on a loopback index; PyTorch's
    // index does not answer.
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("build");
    let built = vec![
        wheels::fake_torch_with(&dir, "2.15.0", Some("13.2"), &["sm_90"], &[]),
        wheels::fake_companion(&dir, "torchvision", "0.29.2", "2.15.0"),
        wheels::fake_companion(&dir, "torchaudio", "2.11.1", "2.15.0"),
        wheels::fake_torch_with(&dir, "2.14.1", Some("13.0"), &["sm_90"], &[]),
        wheels::fake_companion(&dir, "torchvision", "0.29.1", "2.14.1"),
        wheels::fake_companion(&dir, "torchaudio", "2.11.0", "2.14.1"),
    ];
    wheels::write_index(&root.path().join("simple"), &built);
    let server = Server::start(root.path().to_owned());
    let ctx = context().with_system_file(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/h200-detect.json"
    )));
    let system = ctx.system_arg();
    let pypi = format!("{}/simple", server.url());
    let torch_index = format!("{}/whl", dead());
    let venv = ctx.dir().join("venv").display().to_string();
    let base: Vec<String> = [
        "install",
        "--dry-run",
        "--driver",
        "keep",
        "--system",
        &system,
        "--venv",
        &venv,
        "--allow-http",
        "--pypi-index",
        &pypi,
        "--torch-index",
        &torch_index,
    ]
    .map(str::to_owned)
    .to_vec();
    let mut ways = 0;
    for extra in [
        &["--profile", "pytorch", "--torch", "2.14", "--cuda", "13.2"][..],
        &[
            "--profile",
            "pytorch",
            "--torch",
            "2.14",
            "--cuda",
            "13.2",
            "--torch-source",
            "pypi",
        ],
        &["--profile", "full", "--torch", "2.14", "--cuda", "13.2"],
    ] {
        let mut args = base.clone();
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        ways += walk(&ctx, "H200 reaching only PyPI", &args);
    }
    assert!(ways >= 2, "only {ways} ways out were offered and run");
}

/// Ctrl-C at five points of a framework install (cudaup asking PyPI for torch's page; pip asking
/// for it; pip downloading torch, torchvision, torchaudio), each held open by a loopback PyPI
/// that trickles that one response. The signal goes to the whole process group, as a terminal
/// sends it. Each time: exit 130, one line saying what is left and that the same command
/// resumes, no venv left behind; then the same command, at full speed, completes.
#[test]
fn ctrl_c_at_five_points_of_a_framework_install_is_130_and_the_same_command_completes() {
    use crate::common::server::Fault;
    use std::os::unix::process::CommandExt;
    let index = pypi_with_the_cuda_build();
    let mut wheel_paths = Vec::new();
    for project in ["torch", "torchvision", "torchaudio"] {
        let dir = index.path().join("simple").join(project);
        let wheel = fs_err::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .find(|n| n.ends_with(".whl"))
            .unwrap_or_else(|| panic!("a wheel in {}", dir.display()));
        wheel_paths.push(format!("/simple/{project}/{wheel}"));
    }
    let page = "/simple/torch/".to_owned();
    // (the path held open, which request to it is the moment)
    let points = [
        (page.clone(), 1),
        (page, 2),
        (wheel_paths[0].clone(), 1),
        (wheel_paths[1].clone(), 1),
        (wheel_paths[2].clone(), 1),
    ];
    for (path, nth) in points {
        let server = Server::start(index.path().to_owned());
        let slow = Fault::Trickle {
            bytes_per_chunk: 8,
            delay_ms: 200,
        };
        // Only the moment's request is slow: earlier ones of the same path are served.
        for _ in 1..nth {
            server.fault(&path, Fault::IgnoreRange, 1);
        }
        server.fault(&path, slow, 1);
        let ctx = context().with_env("CUDAUP_PROBE_TIMEOUT", "60");
        let pypi = format!("{}/simple", server.url());
        let torch_index = format!("{}/whl", dead());
        let venv = ctx.dir().join("venv").display().to_string();
        let system = ctx.system_arg();
        let args = [
            "install",
            "--driver",
            "keep",
            "--system",
            &system,
            "--profile",
            "cpu",
            "--venv",
            &venv,
            "--yes",
            "--no-modify-path",
            "--allow-http",
            "--pypi-index",
            &pypi,
            "--torch-index",
            &torch_index,
        ];
        let mut cmd = ctx.command(&args);
        cmd.process_group(0)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let child = cmd.spawn().unwrap();
        let t0 = std::time::Instant::now();
        while server.requests().iter().filter(|r| r.path == path).count() < nth
            || server.sent(&path) == 0
        {
            assert!(
                t0.elapsed().as_secs() < 120,
                "{path} was not asked for {nth} time(s): {:?}",
                server.requests()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
        let kill = Command::new("kill")
            .args(["-INT", "--", &format!("-{}", child.id())])
            .status()
            .unwrap();
        assert!(kill.success());
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(130),
            "at {path} ({nth}):\n{stdout}\n{stderr}"
        );
        let said: Vec<&str> = stdout
            .lines()
            .chain(stderr.lines())
            .filter(|l| l.contains("cancelled"))
            .collect();
        assert_eq!(said.len(), 1, "one line at {path}:\n{stdout}\n{stderr}");
        assert!(
            said[0].contains("the same command again resumes"),
            "{}",
            said[0]
        );
        assert!(
            !Path::new(&venv).exists(),
            "no half-made venv at {path}: {}",
            said[0]
        );
        // The same command again completes.
        server.clear_faults();
        let again = ctx.cudaup(&args);
        assert_eq!(
            again.code, 0,
            "after {path}:\n{}\n{}",
            again.stdout, again.stderr
        );
        assert!(Path::new(&venv).join("bin/python").exists());
    }
}

/// Reachability decides before anything is downloaded (issue 37): with no source pinned,
/// `plan`, `install` and the wizard ask the download sites at once and say what answered; a
/// profile none of them can serve is refused with what would work (exit 3), and nothing is
/// written. A pinned source (`--torch-source pypi`) is not asked about.
#[test]
fn the_download_sites_are_asked_first_and_what_cannot_work_is_refused_with_the_fix() {
    let down = dead();
    let alive = tempfile::tempdir().unwrap();
    let pypi_dir = alive.path().join("simple");
    fs_err::create_dir_all(&pypi_dir).unwrap();
    let nothing = context()
        .with_env("CUDAUP_TORCH_INDEX", &format!("{down}/whl"))
        .with_env("CUDAUP_PYPI_INDEX", &format!("{down}/simple"))
        .with_env("CUDAUP_MIRROR", &down)
        .with_env("CUDAUP_PROBE_TIMEOUT", "2");

    // plan: the sites, then the refusal and its fix; the plan itself still shown.
    let plan = nothing.cudaup(&["plan", "--allow-http"]);
    assert_eq!(plan.code, 3, "{}\n{}", plan.stdout, plan.stderr);
    for text in [
        "Download sites (asked now)",
        &format!("PyTorch's index {down}/whl: no answer (connection refused)"),
        &format!("PyPI {down}/simple: no answer (connection refused)"),
        "cpu cannot work here: nothing that serves PyTorch answered:",
        "what would work: a mirror this machine reaches (--pypi-index URL",
        "Plan (cpu profile) for this machine",
    ] {
        assert!(plan.stdout.contains(text), "{text}:\n{}", plan.stdout);
    }
    let json = nothing.cudaup(&["plan", "--allow-http", "--json"]);
    assert_eq!(json.code, 3, "{}", json.stderr);
    let doc = json.json();
    assert_eq!(doc["reach"]["refused"]["part"], "pytorch", "{doc:#}");
    assert_eq!(doc["reach"]["sites"][1]["failure"], "refused", "{doc:#}");

    // install: refused before anything is fetched or written.
    let install = nothing.cudaup(&["install", "--yes", "--allow-http", "--driver", "keep"]);
    assert_eq!(install.code, 3, "{}\n{}", install.stdout, install.stderr);
    assert!(
        install.stdout.contains("Download sites (asked now)")
            && install
                .stderr
                .contains("cpu cannot work here: nothing that serves PyTorch answered:"),
        "{}\n{}",
        install.stdout,
        install.stderr
    );
    assert!(!nothing.cudaup_home().join("venvs").exists());
    assert!(!nothing.cudaup_home().join("bin").exists());

    // The wizard: nothing any profile needs answered, so it stops and says what would work.
    let wizard = nothing.cudaup(&["wizard", "--yes", "--dry-run"]);
    assert_eq!(wizard.code, 3, "{}\n{}", wizard.stdout, wizard.stderr);
    assert!(
        wizard
            .stdout
            .contains("No profile can work here: none of the download sites answered.")
            && wizard.stdout.contains("what would work: a mirror"),
        "{}",
        wizard.stdout
    );

    // A pinned PyTorch source leaves nothing to ask: no sites, no refusal from them.
    let pinned = nothing.cudaup(&["plan", "--allow-http", "--torch-source", "pypi"]);
    assert!(
        !pinned.stdout.contains("Download sites"),
        "{}",
        pinned.stdout
    );
    assert_ne!(pinned.code, 3, "{}\n{}", pinned.stdout, pinned.stderr);

    // PyPI reached (a local copy): every profile that needs only PyPI can work.
    let some = nothing.with_env("CUDAUP_PYPI_INDEX", pypi_dir.to_str().unwrap());
    let plan = some.cudaup(&["plan", "--allow-http"]);
    assert_eq!(plan.code, 0, "{}\n{}", plan.stdout, plan.stderr);
    assert!(
        plan.stdout
            .contains(&format!("PyPI {}", pypi_dir.display()))
            && !plan.stdout.contains("cannot work here"),
        "{}",
        plan.stdout
    );
    let wizard = some.cudaup(&["wizard", "--yes", "--dry-run"]);
    assert_eq!(wizard.code, 0, "{}\n{}", wizard.stdout, wizard.stderr);
    assert!(
        wizard.stdout.contains("Download sites (asked now)")
            && wizard.stdout.contains("Plan (cpu profile)"),
        "{}",
        wizard.stdout
    );
}

/// A hand-written `--system` picture without Pythons (issue 37): `plan` shows the interpreter
/// `install --system` will use (this machine's), never "install Python 3.x" followed by an
/// install into another one; the dry-run install plans the same Python.
#[test]
fn a_picture_without_pythons_is_planned_with_the_python_install_uses() {
    let index = pypi_with_the_cuda_build();
    let server = Server::start(index.path().to_owned());
    let ctx = context();
    let picture = ctx.dir().join("hand-written.json");
    fs_err::write(
        &picture,
        format!(
            r#"{{"os": {{"family": "linux", "arch": "{}"}}, "gpus": []}}"#,
            std::env::consts::ARCH
        ),
    )
    .unwrap();
    let pic = picture.display().to_string();
    let (python, version) = local_python();
    let plan = ctx.cudaup(&["plan", "--system", &pic, "--profile", "cpu"]);
    assert_eq!(plan.code, 0, "{}\n{}", plan.stdout, plan.stderr);
    let row = plan
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("python "))
        .unwrap_or_else(|| panic!("a python row:\n{}", plan.stdout));
    assert!(
        row.contains("keep") && row.contains(&version) && !row.contains("install Python"),
        "{row}"
    );
    assert!(
        plan.stdout.contains(&format!("at {python}"))
            && plan.stdout.contains("The picture lists no Python"),
        "{}",
        plan.stdout
    );
    let json = ctx.cudaup(&["plan", "--system", &pic, "--profile", "cpu", "--json"]);
    assert_eq!(json.json()["pythons_from"], "this machine");

    // The dry-run install makes its venv from that same interpreter.
    let pypi = format!("{}/simple", server.url());
    let torch = format!("{}/whl", dead());
    let install = ctx.cudaup(&[
        "install",
        "--driver",
        "keep",
        "--system",
        &pic,
        "--profile",
        "cpu",
        "--dry-run",
        "--pypi-index",
        &pypi,
        "--torch-index",
        &torch,
        "--allow-http",
    ]);
    assert_eq!(install.code, 0, "{}\n{}", install.stdout, install.stderr);
    assert!(
        install.stdout.contains(&format!("(from {python})")),
        "{}",
        install.stdout
    );
}
