//! Issue 27: the first run on the machine one is on. Each test is one finding of the new
//! user's report.

use crate::common::cudaup;

/// The H200 machine's `detect --json`.
const H200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/h200-detect.json"
);

/// Finding 7: a GPU given by its PCI id alone is looked up in the catalog's gpus.toml, not
/// refused for want of a name and a compute capability.
#[test]
fn a_system_document_gpu_given_by_pci_id_alone_is_looked_up_in_the_catalog() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("machine.json");
    fs_err::write(
        &file,
        r#"{"os": {"family": "linux"}, "gpus": [{"pci_id": "10de:2335"}]}"#,
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let run = cudaup(
        &["plan", "--system", f, "--profile", "pytorch", "--json"],
        home.path(),
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let plan = run.json();
    assert_eq!(plan["status"], "ok", "{plan}");
    let text = cudaup(
        &["plan", "--system", f, "--profile", "pytorch"],
        home.path(),
    );
    assert!(
        text.stdout.contains("for NVIDIA H200 SXM 141GB")
            && text.stdout.contains("compute capability 9.0"),
        "{}",
        text.stdout
    );
    assert!(
        !text.stdout.contains("compute capability unknown"),
        "{}",
        text.stdout
    );

    // What the file states wins over the table.
    fs_err::write(
        &file,
        r#"{"os": {"family": "linux"}, "gpus": [{"index": 0, "vendor": "nvidia", "name": "my H200", "pci_id": "10de:2335"}]}"#,
    )
    .unwrap();
    let named = cudaup(
        &["plan", "--system", f, "--profile", "pytorch"],
        home.path(),
    );
    assert!(named.stdout.contains("for my H200"), "{}", named.stdout);

    // An id the table does not know, with no name: refused, naming the id (exit 2).
    fs_err::write(
        &file,
        r#"{"os": {"family": "linux"}, "gpus": [{"pci_id": "10de:0001"}]}"#,
    )
    .unwrap();
    let unknown = cudaup(&["plan", "--system", f], home.path());
    assert_eq!(unknown.code, 2, "{}{}", unknown.stdout, unknown.stderr);
    assert!(
        unknown
            .stderr
            .contains("10de:0001 is not in the catalog's gpus.toml"),
        "{}",
        unknown.stderr
    );
}

/// Finding 8: a pin the catalog has no release for says so in full, instead of ending the
/// reasons at "what stood in the way:".
#[test]
fn a_pin_no_release_matches_is_named_and_no_reason_ends_at_a_colon() {
    let home = tempfile::tempdir().unwrap();
    let gpuless = home.path().join("gpuless.json");
    fs_err::write(&gpuless, r#"{"os": {"family": "linux"}}"#).unwrap();
    let gpuless = gpuless.to_str().unwrap();
    for (args, pin) in [
        (
            vec![
                "--system",
                gpuless,
                "--profile",
                "cuda-dev",
                "--cuda",
                "99.9",
            ],
            "--cuda 99.9",
        ),
        (
            vec!["--system", H200, "--profile", "cuda-dev", "--cuda", "99.9"],
            "--cuda 99.9",
        ),
        (
            vec!["--system", H200, "--profile", "full", "--torch", "99.9"],
            "--torch 99.9",
        ),
    ] {
        let mut argv = vec!["plan"];
        argv.extend(&args);
        let run = cudaup(&argv, home.path());
        assert_eq!(run.code, 5, "{args:?}: {}{}", run.stdout, run.stderr);
        let why_not: Vec<&str> = run
            .stdout
            .lines()
            .skip_while(|l| *l != "Why not")
            .skip(1)
            .take_while(|l| !l.is_empty())
            .collect();
        assert!(
            why_not.iter().any(|l| l.contains(&format!(
                "{pin}: no {} release in the catalog matches it (it has ",
                if pin.starts_with("--cuda") {
                    "CUDA"
                } else {
                    "PyTorch"
                }
            ))),
            "{args:?}:\n{}",
            run.stdout
        );
        assert!(
            !why_not.last().unwrap().ends_with(':'),
            "{args:?}: the reasons end at a colon:\n{}",
            run.stdout
        );
    }
}

/// Finding 3: a venv cudaup makes for a framework beside a CUDA toolkit gets Ninja (PyPI
/// `ninja`), which `torch.utils.cpp_extension` needs to build the extensions the toolkit is
/// there for — from the same indexes as the framework (here a loopback PyTorch index for torch
/// and a loopback PyPI-like index for the rest, nothing else reachable).
#[test]
fn a_framework_venv_beside_a_toolkit_gets_ninja() {
    use crate::common::server::Server;
    use crate::common::wheels;
    let root = tempfile::tempdir().unwrap();
    let build = root.path().join("build");
    fs_err::create_dir_all(&build).unwrap();
    let tag = "2.14.1+cu130";
    let torch = vec![
        wheels::fake_torch_with(&build, tag, Some("13.0"), crate::framework::ARCH, &[]),
        wheels::fake_companion(&build, "torchvision", "0.29.1+cu130", tag),
        wheels::fake_companion(&build, "torchaudio", "2.11.0+cu130", tag),
    ];
    wheels::write_index(&root.path().join("whl/cu130"), &torch);
    let ninja = wheels::build_wheel(
        &build,
        "ninja",
        "1.13.0",
        &[],
        &[wheels::WheelFile::new(
            "ninja/__init__.py",
            "__version__ = '1.13.0'\n",
        )],
    );
    wheels::write_index(&root.path().join("simple"), &[ninja]);
    let server = Server::start(root.path().to_owned());

    let home = tempfile::tempdir().unwrap();
    let venv = home.path().join("venv");
    let (home_arg, venv_arg) = (
        home.path().display().to_string(),
        venv.display().to_string(),
    );
    let torch_index = format!("{}/whl", server.url());
    let pypi_index = format!("{}/simple", server.url());
    // The `full` plan has a toolkit (from a mirror in NVIDIA's layout).
    let mirror = crate::common::synthetic_mirror(&[]);
    let mirror_arg = mirror.path().display().to_string();
    let args = [
        "--home",
        &home_arg,
        "install",
        "--system",
        H200,
        "--profile",
        "full",
        "--torch",
        "2.14",
        "--cuda",
        "13.0.2",
        "--cudnn",
        "9.17.0",
        "--mirror",
        &mirror_arg,
        "--driver",
        "keep",
        "--torch-index",
        &torch_index,
        "--pypi-index",
        &pypi_index,
        "--venv",
        &venv_arg,
        "--allow-http",
        "--no-modify-path",
        "--yes",
    ];
    let run = crate::common::cudaup_env(
        &args,
        home.path(),
        &[("CUDAUP_NO_UV", "1"), ("CUDAUP_TEST_NO_RETRY_DELAY", "1")],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("then pip install ninja (CUDA extensions build with it)"),
        "{}",
        run.stdout
    );
    let out = std::process::Command::new(venv.join("bin/python"))
        .args(["-c", "import ninja; print(ninja.__version__)"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "1.13.0",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `install` of CUDA 13.0.2 and cuDNN 9.17.0 for the H200 picture from `mirror` into `home`,
/// touching no rc file.
fn toolkit_args<'a>(home: &'a str, mirror: &'a str) -> Vec<&'a str> {
    vec![
        "--home",
        home,
        "install",
        "--system",
        H200,
        "--driver",
        "keep",
        "--profile",
        "cuda-dev",
        "--cuda",
        "13.0.2",
        "--cudnn",
        "9.17.0",
        "--mirror",
        mirror,
        "--no-modify-path",
        "--yes",
    ]
}

/// Installs CUDA 13.0.2 from a synthetic mirror into `home`.
fn toolkit_install(home: &std::path::Path, mirror: &std::path::Path) {
    let (h, m) = (home.display().to_string(), mirror.display().to_string());
    let run = cudaup(&toolkit_args(&h, &m), home);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
}

/// Runs a command line cudaup printed, through sh.
fn run_printed(line: &str, home: &std::path::Path) -> std::process::Output {
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c").arg(line).current_dir(home);
    crate::common::hermetic(&mut cmd, home);
    crate::common::guarded_output(&mut cmd)
}

/// Finding 6: `uninstall` without `--purge` ends by saying what it kept, its size, and a
/// command that removes it — one that still works once cudaup's own copy is gone.
#[test]
fn uninstall_says_what_it_kept_and_the_command_that_removes_it() {
    let mirror = crate::common::synthetic_mirror(&[]);
    let home = tempfile::tempdir().unwrap();
    let h = home.path().display().to_string();

    // Run by a cudaup that stays (not the copy in $CUDAUP_HOME/bin): `… uninstall --purge`.
    toolkit_install(home.path(), mirror.path());
    let cache = home.path().join("cache");
    assert!(cache.is_dir());
    let run = cudaup(&["--home", &h, "uninstall", "--yes"], home.path());
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains(&format!("  - keep the download cache {}", cache.display())),
        "{}",
        run.stdout
    );
    let kept = run
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("kept in "))
        .collect::<Vec<_>>();
    assert!(
        kept.first()
            .is_some_and(|l| l.starts_with(&format!("kept in {} (", h)) && l.ends_with("):")),
        "{}",
        run.stdout
    );
    assert!(
        kept.iter()
            .any(|l| l.trim_start().starts_with("cache ") && l.contains("the download cache")),
        "{}",
        run.stdout
    );
    let hint = kept.last().unwrap();
    let cmd = hint
        .strip_prefix("to remove it too: ")
        .expect("the last line is the command");
    assert!(
        cmd.ends_with(&format!("uninstall --purge --home {h}")),
        "{}",
        run.stdout
    );
    assert!(!home.path().join("bin/cudaup").exists());
    // (with --yes: no terminal here to answer the question)
    let out = run_printed(&format!("{cmd} --yes"), home.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !cache.exists() && !home.path().exists(),
        "--purge leaves no home"
    );
    fs_err::create_dir_all(home.path()).unwrap();

    // Run by cudaup's own copy, which uninstall removes: the command needs no cudaup.
    toolkit_install(home.path(), mirror.path());
    let copy = home.path().join("bin/cudaup");
    assert!(copy.is_file());
    let run = crate::common::cudaup_exe(
        &copy,
        &["--home", &h, "uninstall", "--yes"],
        home.path(),
        &[],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(!copy.exists(), "the copy goes last");
    let cmd = run
        .stdout
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("to remove it too: "))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        cmd.starts_with("rm -rf ") && cmd.contains(&cache.display().to_string()),
        "{cmd}"
    );
    let out = run_printed(cmd, home.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!cache.exists());
}

/// Finding 5: Ctrl-C during downloads says "cancelled" once, with how to resume (no line per
/// task), exits 130, and the same command again finishes the install. The downloads come from a
/// loopback mirror that trickles every archive, and the signal is a real SIGINT sent mid-way.
#[test]
fn ctrl_c_during_downloads_says_cancelled_once_with_the_resume_hint() {
    use crate::common::server::{Fault, Server};
    let mirror = crate::common::synthetic_mirror(&[]);
    let server = Server::start(mirror.path().to_owned());
    let mut archives = Vec::new();
    let mut dirs = vec![mirror.path().to_owned()];
    while let Some(d) = dirs.pop() {
        for e in fs_err::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.to_string_lossy().ends_with(".tar.xz") {
                archives.push(p.strip_prefix(mirror.path()).unwrap().display().to_string());
            }
        }
    }
    for a in &archives {
        let slow = Fault::Trickle {
            bytes_per_chunk: 16,
            delay_ms: 100,
        };
        server.fault(a, slow, 1);
    }
    let home = tempfile::tempdir().unwrap();
    let h = home.path().display().to_string();
    let url = server.url();
    let mut args = toolkit_args(&h, &url);
    args.push("--allow-http");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cudaup"));
    cmd.args(&args).current_dir(home.path());
    crate::common::hermetic(&mut cmd, home.path());
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until archives are on their way, then Ctrl-C.
    let t0 = std::time::Instant::now();
    while !server
        .requests()
        .iter()
        .any(|r| r.path.ends_with(".tar.xz"))
    {
        assert!(t0.elapsed().as_secs() < 60, "no archive was asked for");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{stderr}");
    let said: Vec<&str> = stdout
        .lines()
        .chain(stderr.lines())
        .filter(|l| l.contains("cancelled"))
        .collect();
    assert_eq!(said.len(), 1, "one cancelled line:\n{stdout}\n{stderr}");
    assert!(
        said[0].contains("the same command again resumes where it stopped"),
        "{}",
        said[0]
    );
    assert!(!stderr.contains("also failed"), "{stderr}");
    assert!(
        !home.path().join("toolkits/cuda-13.0.2/bin").exists(),
        "nothing half-installed"
    );

    // The same command again, with the mirror at full speed, installs.
    server.clear_faults();
    let again = cudaup(&args, home.path());
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert!(home.path().join("toolkits/cuda-13.0.2/bin/nvcc").is_file());
}

/// Issue 37's Proof 3 in a terminal: Ctrl-C typed at five points of a framework install
/// (cudaup asking PyPI for torch's page; pip asking for it; pip downloading torch, torchvision,
/// torchaudio), each moment held open by a loopback PyPI that trickles that one response. The
/// key goes through a pseudo-terminal, whose line discipline sends SIGINT to the foreground
/// process group — cudaup and the pip it runs — as a user's terminal does. Each time: exit 130,
/// one line saying what is left and that the same command resumes, no venv left behind; then the
/// same command, typed again in a terminal at full speed, completes.
#[test]
fn ctrl_c_typed_in_a_terminal_at_five_points_of_a_framework_install_is_130_and_the_same_command_completes(
) {
    use crate::common::pty::Pty;
    use crate::common::server::{Fault, Server};
    use crate::common::TestContext;
    use expectrl::Expect;
    use std::path::Path;
    use std::time::{Duration, Instant};

    let index = crate::pypi_only::pypi_with_torch_that_imports();
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
        // Only the moment's request is slow: earlier ones of the same path are served.
        for _ in 1..nth {
            server.fault(&path, Fault::IgnoreRange, 1);
        }
        let slow = Fault::Trickle {
            bytes_per_chunk: 8,
            delay_ms: 200,
        };
        server.fault(&path, slow, 1);
        let ctx = TestContext::new()
            .with_env("CUDAUP_NO_UV", "1")
            .with_env("CUDAUP_PROBE_TIMEOUT", "60");
        let pypi = format!("{}/simple", server.url());
        let torch_index = format!("{}/whl", crate::dead_ends::dead());
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
        let mut term = Pty::start(ctx.command(&args));
        let t0 = Instant::now();
        while server.requests().iter().filter(|r| r.path == path).count() < nth
            || server.sent(&path) == 0
        {
            assert!(
                t0.elapsed().as_secs() < 120,
                "{path} was not asked for {nth} time(s): {:?}",
                server.requests()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(300));
        // Ctrl-C, as typed.
        term.session.send("\x03").expect("typing into the pty");
        let code = term.finish();
        let text = term.text();
        assert_eq!(code, 130, "at {path} ({nth}):\n{text}");
        let said: Vec<&str> = text.lines().filter(|l| l.contains("cancelled")).collect();
        assert_eq!(said.len(), 1, "one line at {path}:\n{text}");
        // What it was doing, what is left, and that the same command resumes.
        assert!(
            said[0].contains("cancelled (Ctrl-C) while ")
                && said[0].contains("the same command again resumes"),
            "{}",
            said[0]
        );
        assert!(
            !Path::new(&venv).exists(),
            "no half-made venv at {path}:\n{text}"
        );

        // The same command again, in a terminal, at full speed: it completes.
        server.clear_faults();
        let mut again = Pty::start(ctx.command(&args));
        again
            .session
            .set_expect_timeout(Some(Duration::from_secs(120)));
        again.expect("installed torch 2.15.0");
        let code = again.finish();
        assert_eq!(code, 0, "after {path}:\n{}", again.text());
        assert!(Path::new(&venv).join("bin/python").exists());
    }
}

/// The fixed words a report must show, in one language.
type Words = fn(&cudaup::cli::i18n::Report) -> Vec<String>;

/// Finding 9: with `--lang zh` (or a zh_* locale) detect, plan, verify and doctor speak Chinese
/// in every fixed heading, label and table header, and the same runs in English show the
/// English ones: no fixed English heading is left in the Chinese output.
#[test]
fn reports_speak_chinese_with_lang_zh_and_no_english_heading_is_left() {
    use cudaup::cli::i18n::report::{EN, ZH};
    let home = tempfile::tempdir().unwrap();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/h200-root");
    // Each command, and the fixed words its report must show.
    let cases: [(Vec<&str>, Words); 4] = [
        (vec!["detect", "--system-root", root], |w| {
            [
                w.machine,
                w.os,
                w.kernel,
                w.secure_boot,
                w.installed,
                w.driver,
                w.cuda_toolkit,
            ]
            .iter()
            .map(|s| s.to_string())
            .chain([
                (w.gpus)("PCI scan"),
                w.findings.into(),
                w.nothing_wrong.into(),
            ])
            .collect()
        }),
        (vec!["plan", "--system", H200, "--profile", "full"], |w| {
            let mut v: Vec<String> = w.columns.iter().map(|s| s.to_string()).collect();
            v.extend([
                (w.plan_for)("full", "NVIDIA H200"),
                w.why.into(),
                w.warnings.into(),
            ]);
            v
        }),
        (vec!["doctor", "--system-root", root], |w| {
            vec![
                w.doctor.into(),
                w.warning.into(),
                w.evidence.into(),
                w.fix.into(),
                (w.doctor_summary)(0, 1, 0),
            ]
        }),
        (vec!["verify"], |w| vec![(w.passed)(0)]),
    ];
    let only_ascii_words = |s: &str| s.chars().any(|c| c.is_ascii_alphabetic()) && s.is_ascii();
    for (args, words) in cases {
        let en = cudaup(&args, home.path());
        let mut zh_args = args.clone();
        zh_args.extend(["--lang", "zh"]);
        let zh = cudaup(&zh_args, home.path());
        let by_locale = crate::common::cudaup_env(&args, home.path(), &[("LANG", "zh_CN.UTF-8")]);
        assert_eq!(en.code, zh.code, "{args:?}: {}\n{}", zh.stdout, zh.stderr);
        assert_eq!(
            zh.stdout, by_locale.stdout,
            "{args:?}: --lang zh and LANG=zh_CN agree"
        );
        for (w, other) in words(&EN).iter().zip(words(&ZH)) {
            assert!(
                en.stdout.contains(w.as_str()),
                "{args:?}: English shows {w:?}:\n{}",
                en.stdout
            );
            assert!(
                zh.stdout.contains(other.as_str()),
                "{args:?}: Chinese shows {other:?}:\n{}",
                zh.stdout
            );
            // A fixed English word that is not a name (CUDA, cuDNN) is gone from the Chinese.
            if only_ascii_words(w) && w != &other {
                let line_start = zh
                    .stdout
                    .lines()
                    .any(|l| l.trim_start().starts_with(w.as_str()));
                assert!(
                    !line_start,
                    "{args:?}: {w:?} left in English:\n{}",
                    zh.stdout
                );
            }
        }
    }
}
