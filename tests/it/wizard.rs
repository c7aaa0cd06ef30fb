//! `cudaup wizard` end to end, in a real pseudo-terminal (expectrl): answered like a person, with
//! arrow keys, Enter and typed text, in English and Chinese, installing the CUDA toolkit from a
//! synthetic mirror in NVIDIA's layout. This machine has no GPU, so the tests pick `cuda-dev` and
//! pin CUDA 13.0 (the synthetic mirror's release). Every wait is bounded.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use expectrl::Expect;

use crate::common::pty::Pty;
use crate::common::*;

const UP: &str = "\x1b[A";
const DOWN: &str = "\x1b[B";
const ENTER: &str = "\r";
const BACKSPACE: &str = "\x7f";

/// `cudaup ARGS` (the wizard) in a pseudo-terminal, in `home`, with the hermetic environment
/// and `env`.
fn spawn(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Pty {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cudaup"));
    // The hermetic environment every test command gets.
    crate::common::hermetic(&mut cmd, home)
        .args(args)
        .current_dir(home)
        .env("CUDAUP_TEST_NO_RETRY_DELAY", "1");
    // The wizard asks the download sites before its first question: PyPI, PyTorch's index
    // and NVIDIA's redistributables (a mirror of their layout) are local stand-ins here
    // (folders, which answer by existing), so no public host is asked or decides what the
    // tests see; a test's own variables win (its synthetic mirror).
    let stand_in = home.join("index-stand-in");
    fs_err::create_dir_all(&stand_in).expect("a stand-in index folder");
    cmd.env("CUDAUP_PYPI_INDEX", &stand_in)
        .env("CUDAUP_TORCH_INDEX", &stand_in)
        .env("CUDAUP_MIRROR", &stand_in)
        .env("CUDAUP_PROBE_TIMEOUT", "2");
    for (k, v) in env {
        cmd.env(k, v);
    }
    Pty::start(cmd)
}

fn on_path(program: &str) -> bool {
    ["/usr/bin", "/bin"]
        .iter()
        .any(|d| Path::new(d).join(program).is_file())
}

/// Answers the shell questions: the POSIX one with `posix`, the others (fish and PowerShell,
/// asked only where they are installed) with no.
fn answer_shells(w: &mut Pty, posix_prompt: &str, other_prompt: &str, posix: &str) {
    w.answer(posix_prompt, posix);
    if on_path("fish") {
        w.answer(&format!("{other_prompt} fish"), "n");
    }
    if on_path("pwsh") {
        w.answer(&format!("{other_prompt} PowerShell"), "n");
    }
}

fn nvcc_version(prefix: &Path) -> String {
    let out = Command::new(prefix.join("bin/nvcc"))
        .arg("--version")
        .output()
        .expect("the installed nvcc runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The download sites the wizard listed (all three) are the local stand-ins: no host was asked.
fn asked_no_public_host(text: &str) {
    let sites: Vec<&str> = text
        .split("\nDownload sites (asked now)\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no list of the sites asked:\n{text}"))
        .lines()
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(sites.len(), 3, "{text}");
    for site in sites {
        // A local stand-in is a folder; a host would be a URL.
        assert!(!site.contains("://"), "a host was asked: {site}\n{text}");
    }
}

fn cudaup_home(home: &Path) -> PathBuf {
    home.join(".local/share/cudaup")
}

#[test]
fn english_run_customises_installs_from_a_mirror_verifies_and_says_what_next() {
    // The wizard asks no cuDNN question: the mirror carries the cuDNN the plan picks for 13.0.
    let mirror = synthetic_mirror(&["--cudnn", "9.28.1"]);
    let home = tempfile::tempdir().unwrap();
    let mirror_dir = mirror.path().display().to_string();
    let mut w = spawn(
        home.path(),
        &["wizard"],
        &[("LANG", "en_US.UTF-8"), ("CUDAUP_MIRROR", &mirror_dir)],
    );

    w.expect("This is what cudaup found on this machine:");
    w.expect("No NVIDIA GPU is here, so `cpu` is the suggestion");
    // cpu is highlighted (the last item): one up is cuda-dev.
    w.expect("cpu         PyTorch without a GPU");
    w.answer("", &format!("{UP}{ENTER}"));
    w.expect("Plan (cuda-dev profile) for this machine");
    w.expect("What will change on disk");
    w.answer("Go ahead?", &format!("{DOWN}{ENTER}"));
    w.expect("Customise: press Enter to keep a value");
    w.answer(
        "CUDA version (e.g. 12.8; empty: cudaup chooses)",
        "13.0.2\r",
    );
    w.answer("Install the CUDA toolkit into", ENTER);
    w.expect("Where should the CUDA toolkit come from?");
    // The choices are auto (as `cudaup install`), NVIDIA's server, a mirror; CUDAUP_MIRROR
    // makes the mirror the current answer (every site the wizard asks is local): Enter keeps
    // it, and its prefilled folder is erased and typed again.
    w.answer("A mirror of NVIDIA's download layout", ENTER);
    w.answer(
        "Mirror URL or folder",
        &format!(
            "{}{mirror_dir}\r",
            BACKSPACE.repeat(mirror_dir.chars().count())
        ),
    );
    // The component sets, with what each downloads; Enter keeps `standard`.
    w.expect("Which parts of the CUDA toolkit?");
    w.answer("complete: standard plus cuda-gdb", ENTER);
    answer_shells(
        &mut w,
        "Load cudaup's environment in new sh/bash/zsh shells",
        "Load cudaup's environment in new",
        "y",
    );
    w.answer(
        "Check the stack with `cudaup verify` after installing?",
        "y",
    );
    // The plan again, with the pin, then install.
    w.expect("Plan (cuda-dev profile) for this machine");
    w.expect("cuda-13.0.2 (a new folder)");
    w.answer("Go ahead?", ENTER);
    w.expect("installed CUDA 13.0.2 in");
    w.expect("Checking that it works (cudaup verify)");
    w.expect("Done. Next steps:");
    let code = w.finish();
    let text = w.text();
    asked_no_public_host(&text);

    let cudaup_home = cudaup_home(home.path());
    let prefix = cudaup_home.join("toolkits/cuda-13.0.2");
    assert!(prefix.join("bin/nvcc").is_file(), "{text}");
    assert!(nvcc_version(&prefix).contains("release 13.0, V13.0.88"));
    // verify ran: nvcc is the release the receipt records. The synthetic libraries are not
    // real ELF files and there is no GPU, so some checks fail: exit code 4, as `cudaup verify`.
    assert!(text.contains("✓ nvcc"), "{text}");
    assert!(
        text.contains("Some checks failed: `cudaup doctor`"),
        "{text}"
    );
    assert_eq!(code, 4, "{text}");
    // The summary, with the real paths.
    let env_line = format!(". \"{}/env\"", cudaup_home.display());
    assert!(
        text.contains(&format!(
            "1. Put CUDA and `cudaup` on PATH in this shell (new shells do it by themselves):\n       {env_line}"
        )),
        "{text}"
    );
    assert!(text.contains("`cudaup verify` checks the stack"));
    // …and `cudaup` is there to type it: the wizard copied itself where the env puts PATH.
    assert!(
        text.contains("cudaup itself  ~/.local/share/cudaup/bin/cudaup (a copy of this program"),
        "{text}"
    );
    assert!(cudaup_home.join("bin/cudaup").is_file());
    // The rc file the wizard said it would touch got the line.
    let profile = fs_err::read_to_string(home.path().join(".profile")).unwrap();
    assert!(profile.contains(&env_line));
    assert!(text.contains("~/.profile: one line added"));
}

#[test]
fn chinese_run_edits_the_prefix_saves_the_answers_and_skips_verify() {
    // The wizard asks no cuDNN question: the mirror carries the cuDNN the plan picks for 13.0.
    let mirror = synthetic_mirror(&["--cudnn", "9.28.1"]);
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let prefix = root.path().join("cuda");
    let saved = root.path().join("cudaup.toml");
    let mirror_dir = mirror.path().display().to_string();
    let mut w = spawn(
        home.path(),
        &["wizard", "--save", &saved.display().to_string()],
        &[("LANG", "zh_CN.UTF-8"), ("CUDAUP_MIRROR", &mirror_dir)],
    );
    w.expect("cudaup 在这台机器上找到了这些：");
    w.expect("没有检测到 NVIDIA 显卡");
    w.expect("不用显卡的 PyTorch");
    w.answer("", &format!("{UP}{ENTER}"));
    w.expect("磁盘上会有这些改动");
    w.answer("开始安装吗？", &format!("{DOWN}{ENTER}"));
    w.answer("CUDA 版本（例如 12.8；留空自动选择）", "13.0.2\r");
    // The prefix is prefilled with the default: erase it and type another.
    let default_prefix = cudaup_home(home.path()).join("toolkits/cuda-13.0.2");
    w.expect("CUDA 工具包安装到");
    w.answer(
        &default_prefix.display().to_string(),
        &format!(
            "{}{}\r",
            BACKSPACE.repeat(default_prefix.display().to_string().chars().count()),
            prefix.display()
        ),
    );
    // CUDAUP_MIRROR makes the mirror the current answer: Enter keeps it, twice.
    w.expect("CUDA 工具包从哪里下载？");
    w.answer("NVIDIA 官方下载服务器", ENTER);
    w.answer("镜像网址或目录", ENTER);
    w.expect("安装 CUDA 工具包的哪些部分？");
    w.answer("complete：standard 加上", ENTER);
    answer_shells(
        &mut w,
        "在新开的 sh/bash/zsh 终端里自动加载",
        "在新开的",
        "n",
    );
    w.answer("安装完成后用 `cudaup verify` 检查一遍吗？", "n");
    w.expect("不修改任何启动文件");
    w.answer("开始安装吗？", ENTER);
    w.expect("已把你的选择保存到");
    w.expect("已安装 CUDA 13.0.2 到");
    w.expect("完成。接下来：");
    let code = w.finish();
    let text = w.text();
    assert_eq!(code, 0, "{text}");
    assert!(prefix.join("bin/nvcc").is_file(), "{text}");
    assert!(nvcc_version(&prefix).contains("release 13.0"));
    assert!(
        text.contains("没有检查：随时可以运行 `cudaup verify`。"),
        "{text}"
    );
    let env_line = format!(". \"{}/env\"", cudaup_home(home.path()).display());
    assert!(
        text.contains(&format!(
            "1. 把 CUDA 和 `cudaup` 加入 PATH（想长期生效，把这一行加到 Shell 启动文件里）：\n       {env_line}\n     或者直接用完整路径运行 cudaup：{}",
            cudaup_home(home.path()).join("bin/cudaup").display()
        )),
        "{text}"
    );
    assert!(
        !home.path().join(".profile").exists(),
        "no rc file was chosen"
    );
    // The saved answers, in the config format `cudaup install --config` reads.
    let config = fs_err::read_to_string(&saved).unwrap();
    for needle in [
        "version = 1".to_owned(),
        "profile = \"cuda-dev\"".to_owned(),
        "lang = \"zh\"".to_owned(),
        "cuda = \"13.0.2\"".to_owned(),
        format!("prefix = \"{}\"", prefix.display()),
        "verify = false".to_owned(),
        "modify_path = false".to_owned(),
        format!("nvidia_mirror = \"{mirror_dir}\""),
    ] {
        assert!(config.contains(&needle), "{needle:?} not in\n{config}");
    }
    assert!(text.contains(&format!(
        "cudaup install --config {} --yes",
        saved.display()
    )));
}

#[test]
fn dry_run_asks_and_shows_but_installs_nothing() {
    let mirror = synthetic_mirror(&[]);
    let home = tempfile::tempdir().unwrap();
    let saved = home.path().join("answers.toml");
    let mirror_dir = mirror.path().display().to_string();
    let mut w = spawn(
        home.path(),
        &["wizard", "--dry-run", "--save", "answers.toml"],
        &[("LANG", "C"), ("CUDAUP_MIRROR", &mirror_dir)],
    );
    w.expect("cpu         PyTorch without a GPU");
    w.answer("", &format!("{UP}{ENTER}"));
    w.expect("What will change on disk");
    w.answer("Finish (dry run: install nothing)", ENTER);
    w.expect("Dry run: nothing was installed or changed.");
    let code = w.finish();
    let text = w.text();
    assert_eq!(code, 0, "{text}");
    assert!(
        !cudaup_home(home.path()).join("toolkits").exists(),
        "{text}"
    );
    assert!(!home.path().join(".profile").exists());
    assert!(!text.contains("installed CUDA"));
    // --save with --dry-run just writes (relative to the working directory).
    let config = fs_err::read_to_string(&saved).unwrap();
    assert!(config.contains("profile = \"cuda-dev\""), "{config}");
}

#[test]
fn cancel_at_the_confirm_step_exits_130_and_installs_nothing() {
    let mirror = synthetic_mirror(&[]);
    let home = tempfile::tempdir().unwrap();
    let mirror_dir = mirror.path().display().to_string();
    let mut w = spawn(home.path(), &["wizard"], &[("CUDAUP_MIRROR", &mirror_dir)]);
    w.expect("cpu         PyTorch without a GPU");
    w.answer("", &format!("{UP}{ENTER}"));
    w.expect("What will change on disk");
    w.answer("Go ahead?", &format!("{DOWN}{DOWN}{ENTER}"));
    w.expect("Cancelled: nothing was installed or changed.");
    let code = w.finish();
    assert_eq!(code, 130, "{}", w.text());
    assert!(!cudaup_home(home.path()).join("toolkits").exists());
    assert!(!home.path().join(".profile").exists());
}

/// Escape cancels a text prompt as it does a list (issue 37): exit 130, nothing installed.
#[test]
fn escape_at_a_text_prompt_cancels() {
    let home = tempfile::tempdir().unwrap();
    let mut w = spawn(home.path(), &["wizard"], &[("LANG", "en_US.UTF-8")]);
    w.expect("cpu         PyTorch without a GPU");
    w.answer("", &format!("{UP}{ENTER}"));
    w.answer("Go ahead?", &format!("{DOWN}{ENTER}"));
    w.expect("Customise: press Enter to keep a value");
    // Typed a little, edited, then Escape.
    w.answer("CUDA version (e.g. 12.8; empty: cudaup chooses)", "13.1");
    std::thread::sleep(Duration::from_millis(100));
    w.session.send(BACKSPACE).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    w.session.send("\x1b").unwrap();
    w.expect("Cancelled: nothing was installed or changed.");
    let code = w.finish();
    assert_eq!(code, 130, "{}", w.text());
    asked_no_public_host(&w.text());
    assert!(!cudaup_home(home.path()).join("toolkits").exists());
}

/// Issue 37's proof in a terminal: on a GPU-less machine whose only way out is PyPI, Enter at
/// every question (the suggested `cpu`, then "Go ahead") installs PyPI's torch and the wizard's
/// verify passes (exit 0). PyTorch's index and NVIDIA's server are dead https ports.
#[test]
fn every_default_in_a_terminal_installs_from_pypi_and_verify_passes() {
    every_default_in_a_terminal(
        &[],
        &Said {
            suggestion: "No NVIDIA GPU is here, so `cpu` is the suggestion",
            cpu_row: "cpu         PyTorch without a GPU",
            from: "from",
            go_ahead: "Go ahead?",
            installed: "installed torch 2.15.0",
            verifying: "Checking that it works (cudaup verify)",
            tally: "1 passed, 6 skipped",
            done: "Done. Next steps:",
        },
    );
}

/// The same in Chinese (`--lang zh`, over an English `LANG`): every line the wizard printed in
/// the terminal is Chinese, and the install and its verify are the same.
#[test]
fn every_default_in_a_terminal_in_chinese_installs_from_pypi_and_verify_passes() {
    let text = every_default_in_a_terminal(
        &["--lang", "zh"],
        &Said {
            suggestion: "没有检测到 NVIDIA 显卡，推荐 `cpu`",
            cpu_row: "cpu         不用显卡的 PyTorch",
            from: "来自",
            go_ahead: "开始安装吗？",
            installed: "已安装 torch 2.15.0",
            verifying: "正在检查能否正常工作（cudaup verify）",
            tally: "通过 1 项，跳过 6 项",
            done: "完成。接下来：",
        },
    );
    assert!(
        crate::zh::english_lines(&text).is_empty(),
        "English in the zh run: {:?}\n{text}",
        crate::zh::english_lines(&text)
    );
}

/// What [`every_default_in_a_terminal`] waits for, in the run's language.
struct Said {
    suggestion: &'static str,
    cpu_row: &'static str,
    from: &'static str,
    go_ahead: &'static str,
    installed: &'static str,
    verifying: &'static str,
    tally: &'static str,
    done: &'static str,
}

/// `cudaup wizard ARGS` in a pty on the PyPI-only machine, Enter at every question: exit 0, the
/// `cpu` venv made. Returns what the terminal showed.
fn every_default_in_a_terminal(args: &[&str], said: &Said) -> String {
    let index = crate::pypi_only::pypi_with_torch_that_imports();
    let pypi = index.path().join("simple").display().to_string();
    let down = crate::dead_ends::dead().replace("http://", "https://");
    let torch = format!("{down}/whl");
    let home = tempfile::tempdir().unwrap();
    let mut argv = vec!["wizard"];
    argv.extend_from_slice(args);
    let mut w = spawn(
        home.path(),
        &argv,
        &[
            ("LANG", "en_US.UTF-8"),
            ("CUDAUP_NO_UV", "1"),
            ("CUDAUP_PYPI_INDEX", &pypi),
            ("CUDAUP_TORCH_INDEX", &torch),
            ("CUDAUP_MIRROR", &down),
        ],
    );
    w.expect(said.suggestion);
    w.answer(said.cpu_row, ENTER);
    w.expect(&format!("{} {pypi}", said.from));
    w.answer(said.go_ahead, ENTER);
    // pip creates the venv and installs: seconds, more on a loaded machine.
    w.session.set_expect_timeout(Some(Duration::from_secs(120)));
    w.expect(said.installed);
    w.expect(said.verifying);
    w.expect(said.tally);
    w.expect(said.done);
    let code = w.finish();
    assert_eq!(code, 0, "{}", w.text());
    assert!(cudaup_home(home.path())
        .join("venvs/cpu/bin/python")
        .exists());
    w.text()
}

/// Escape cancels a list too (docs/wizard.md: at any prompt): at the profile question and at
/// "Go ahead?", exit 130, nothing installed.
#[test]
fn escape_at_a_list_cancels() {
    for at_confirm in [false, true] {
        let home = tempfile::tempdir().unwrap();
        let mut w = spawn(home.path(), &["wizard"], &[("LANG", "en_US.UTF-8")]);
        w.expect("cpu         PyTorch without a GPU");
        if at_confirm {
            w.answer("", &format!("{UP}{ENTER}"));
            w.expect("Go ahead?");
        }
        std::thread::sleep(Duration::from_millis(100));
        w.session.send("\x1b").unwrap();
        w.expect("Cancelled: nothing was installed or changed.");
        let code = w.finish();
        assert_eq!(code, 130, "{}", w.text());
        assert!(!cudaup_home(home.path()).join("toolkits").exists());
        assert!(!home.path().join(".profile").exists());
    }
}

#[test]
fn ctrl_c_at_a_prompt_is_a_cancel_never_a_yes() {
    let home = tempfile::tempdir().unwrap();
    let mut w = spawn(home.path(), &["wizard"], &[]);
    w.expect("cpu         PyTorch without a GPU");
    std::thread::sleep(Duration::from_millis(100));
    w.session.send("\x03").unwrap();
    // A Ctrl-C that reaches the process as SIGINT before the prompt reads keys only sets the
    // cancel flag; a second one exits at once. Either way: 130.
    std::thread::sleep(Duration::from_millis(500));
    if w.exited().is_none() {
        let _ = w.session.send("\x03");
    }
    let code = w.finish();
    assert_eq!(code, 130, "{}", w.text());
    assert!(!cudaup_home(home.path()).join("toolkits").exists());
}

#[test]
fn bare_cudaup_at_a_terminal_is_the_wizard_and_without_one_is_the_help() {
    let mirror = synthetic_mirror(&[]);
    let home = tempfile::tempdir().unwrap();
    let mirror_dir = mirror.path().display().to_string();
    let mut w = spawn(home.path(), &[], &[("CUDAUP_MIRROR", &mirror_dir)]);
    w.expect("cpu         PyTorch without a GPU");
    w.answer("", &format!("{UP}{ENTER}"));
    w.expect("What will change on disk");
    w.answer("Go ahead?", &format!("{DOWN}{DOWN}{ENTER}"));
    w.expect("Cancelled: nothing was installed or changed.");
    assert_eq!(w.finish(), 130, "{}", w.text());
    assert!(!cudaup_home(home.path()).join("toolkits").exists());

    let piped = cudaup(&[], home.path());
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert!(piped.stdout.contains("Usage: cudaup"), "{}", piped.stdout);
}

#[test]
fn without_a_terminal_it_fails_at_once_and_says_how_to_run_unattended() {
    let home = tempfile::tempdir().unwrap();
    let run = cudaup(&["wizard"], home.path());
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stdout.is_empty(),
        "nothing detected or asked: {}",
        run.stdout
    );
    assert!(run
        .stderr
        .contains("cudaup install --config cudaup.toml --yes"));
    assert!(run.stderr.contains("cudaup wizard --save cudaup.toml"));
    let zh = cudaup_env(&["wizard"], home.path(), &[("LANG", "zh_CN.UTF-8")]);
    assert_eq!(zh.code, 2);
    assert!(zh.stderr.contains("没有终端"), "{}", zh.stderr);
}

#[test]
fn without_a_terminal_a_config_with_yes_installs_and_without_yes_stops() {
    let mirror = synthetic_mirror(&[]);
    let home = tempfile::tempdir().unwrap();
    let prefix = home.path().join("cuda");
    let config = home.path().join("cudaup.toml");
    fs_err::write(
        &config,
        format!(
            "version = 1\nprofile = \"cuda-dev\"\n[pins]\ncuda = \"13.0.2\"\ncudnn = \"9.17.0\"\n[install]\nprefix = \"{}\"\nverify = false\n[shell]\nmodify_path = false\n[sources]\nnvidia_mirror = \"{}\"\n",
            prefix.display(),
            mirror.path().display()
        ),
    )
    .unwrap();
    let config = config.display().to_string();
    let stop = cudaup(&["wizard", "--config", &config], home.path());
    assert_eq!(stop.code, 2, "{}\n{}", stop.stdout, stop.stderr);
    assert!(stop.stderr.contains("add --yes"), "{}", stop.stderr);
    assert!(!prefix.exists());

    let run = cudaup(&["wizard", "--config", &config, "--yes"], home.path());
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(prefix.join("bin/nvcc").is_file());
    assert!(run.stdout.contains("Done. Next steps:"), "{}", run.stdout);
}
