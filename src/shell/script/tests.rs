//! Tests of the env scripts: each shell's text, and sourcing them twice.

use std::path::PathBuf;
use std::process::Command;

use super::*;

fn spec() -> EnvSpec {
    EnvSpec {
        path: vec![
            PathBuf::from("/opt/cuda x/bin"),
            PathBuf::from("/opt/it's $HOME/`bin`"),
        ],
        ld_library_path: vec![
            PathBuf::from("/opt/cuda x/lib64"),
            PathBuf::from("/opt/cudnn/lib"),
        ],
        vars: vec![
            ("CUDA_HOME".into(), "/opt/cuda x".into()),
            ("CUDA_PATH".into(), "/opt/it's \"$x\"".into()),
        ],
    }
}

/// Where `program` lives, or None after saying why the test is skipped.
fn shell_or_skip(program: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|candidate| candidate.is_file())
    });
    if found.is_none() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("skipped: `{program}` is not installed (apt-get install {program})");
        }
    }
    found
}

/// Runs `program` with `args` and exactly `env`, and returns its output lines; it must
/// succeed without writing to stderr.
fn run(program: &Path, args: &[&str], env: &[(&str, &str)]) -> Vec<String> {
    // An empty HOME (and ZDOTDIR), so the user's own .zshenv or fish config cannot change
    // what the test sees.
    let home = tempfile::tempdir().unwrap();
    let output = Command::new(program)
        .args(args)
        .env_clear()
        .env("HOME", home.path())
        .env("ZDOTDIR", home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{} failed: {}",
        program.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stderr.is_empty(),
        "{} wrote to stderr: {}",
        program.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Prints the exported variables from a child process, so the tests see what programs will
/// see rather than the shell's own view (fish keeps PATH as a list internally).
const REPORT: &str = "/usr/bin/env";

fn exported(lines: &[String], name: &str) -> Option<String> {
    let prefix = format!("{name}=");
    lines
        .iter()
        .find_map(|line| line.strip_prefix(&prefix).map(str::to_owned))
}

/// Checks the variables after sourcing the script twice, from a given start.
fn check(lines: &[String], start_path: Option<&str>, start_ld: Option<&str>) {
    let expected_path = {
        let mut list = vec!["/opt/cuda x/bin", "/opt/it's $HOME/`bin`"];
        list.extend(start_path.into_iter().flat_map(|p| p.split(':')));
        list.join(":")
    };
    assert_eq!(
        exported(lines, "PATH").as_deref(),
        Some(expected_path.as_str())
    );
    let expected_ld = {
        let mut list = vec!["/opt/cuda x/lib64", "/opt/cudnn/lib"];
        list.extend(
            start_ld
                .filter(|v| !v.is_empty())
                .into_iter()
                .flat_map(|p| p.split(':')),
        );
        list.join(":")
    };
    assert_eq!(
        exported(lines, "LD_LIBRARY_PATH").as_deref(),
        Some(expected_ld.as_str())
    );
    assert_eq!(exported(lines, "CUDA_HOME").as_deref(), Some("/opt/cuda x"));
    assert_eq!(
        exported(lines, "CUDA_PATH").as_deref(),
        Some("/opt/it's \"$x\"")
    );
}

/// The starting environments: PATH set, and LD_LIBRARY_PATH unset, empty, or set.
fn starts() -> Vec<(&'static str, Option<&'static str>)> {
    vec![
        ("/usr/bin:/bin", None),
        ("/usr/bin:/bin", Some("")),
        ("/usr/bin:/bin", Some("/home/u/lib")),
    ]
}

fn posix_shell(program: &str) {
    let Some(shell) = shell_or_skip(program) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("env");
    fs_err::write(&file, script(Shell::Posix, &spec())).unwrap();
    let source = format!("set -eu; . '{0}'; . '{0}'; exec {REPORT}", file.display());
    for (path, ld) in starts() {
        let mut env = vec![("PATH", path)];
        if let Some(ld) = ld {
            env.push(("LD_LIBRARY_PATH", ld));
        }
        let lines = run(&shell, &["-c", &source], &env);
        check(&lines, Some(path), ld);
    }
    // A user entry that is one of ours stays where the user put it.
    let lines = run(
        &shell,
        &["-c", &source],
        &[
            ("PATH", "/usr/bin:/opt/cuda x/bin"),
            ("LD_LIBRARY_PATH", "/opt/cudnn/lib:/home/u/lib"),
        ],
    );
    assert_eq!(
        exported(&lines, "PATH").as_deref(),
        Some("/opt/it's $HOME/`bin`:/usr/bin:/opt/cuda x/bin")
    );
    assert_eq!(
        exported(&lines, "LD_LIBRARY_PATH").as_deref(),
        Some("/opt/cuda x/lib64:/opt/cudnn/lib:/home/u/lib")
    );
}

#[test]
fn posix_script_runs_in_sh() {
    posix_shell("sh");
}

#[test]
fn posix_script_runs_in_dash() {
    posix_shell("dash");
}

#[test]
fn posix_script_runs_in_bash() {
    posix_shell("bash");
}

#[test]
fn posix_script_runs_in_zsh() {
    posix_shell("zsh");
}

#[test]
fn posix_script_with_unset_path_adds_no_empty_entry() {
    let Some(shell) = shell_or_skip("dash") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("env");
    fs_err::write(&file, script(Shell::Posix, &spec())).unwrap();
    // dash gives itself a default PATH when started without one, so unset it in the shell.
    for prelude in ["unset PATH", "PATH=''"] {
        let source = format!("{prelude}; . '{0}'; . '{0}'; exec {REPORT}", file.display());
        let lines = run(&shell, &["-c", &source], &[]);
        assert_eq!(
            exported(&lines, "PATH").as_deref(),
            Some("/opt/cuda x/bin:/opt/it's $HOME/`bin`"),
            "{prelude}"
        );
    }
}

#[test]
fn fish_script_runs_in_fish() {
    let Some(fish) = shell_or_skip("fish") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("env.fish");
    fs_err::write(&file, script(Shell::Fish, &spec())).unwrap();
    // fish wants a writable config dir; keep it out of the real HOME.
    let home = dir.path().to_str().unwrap().to_owned();
    let source = format!("source '{0}'; source '{0}'; exec {REPORT}", file.display());
    for (path, ld) in starts() {
        let mut env = vec![("PATH", path), ("HOME", home.as_str())];
        if let Some(ld) = ld {
            env.push(("LD_LIBRARY_PATH", ld));
        }
        let lines = run(&fish, &["--no-config", "-c", &source], &env);
        check(&lines, Some(path), ld);
    }
    // A user entry that is one of ours stays where the user put it.
    let lines = run(
        &fish,
        &["--no-config", "-c", &source],
        &[
            ("HOME", home.as_str()),
            ("PATH", "/usr/bin:/opt/cuda x/bin"),
            ("LD_LIBRARY_PATH", "/opt/cudnn/lib:/home/u/lib"),
        ],
    );
    assert_eq!(
        exported(&lines, "PATH").as_deref(),
        Some("/opt/it's $HOME/`bin`:/usr/bin:/opt/cuda x/bin")
    );
    assert_eq!(
        exported(&lines, "LD_LIBRARY_PATH").as_deref(),
        Some("/opt/cuda x/lib64:/opt/cudnn/lib:/home/u/lib")
    );
}

#[test]
fn posix_script_text() {
    let text = script(
        Shell::Posix,
        &EnvSpec {
            path: vec![PathBuf::from("/c/bin")],
            ld_library_path: vec![],
            vars: vec![("CUDA_HOME".into(), "/c".into())],
        },
    );
    assert!(text.contains(
        "case \":${PATH:-}:\" in\n    *:'/c/bin':*) ;;\n    *) export PATH='/c/bin'\"${PATH:+:$PATH}\" ;;\nesac\n"
    ));
    assert!(text.ends_with("export CUDA_HOME='/c'\n"));
    // Nothing touches LD_LIBRARY_PATH when the spec has no library directories.
    assert!(!text.contains("LD_LIBRARY_PATH"));
}

#[test]
fn unusable_entries_are_left_out() {
    let text = script(
        Shell::Posix,
        &EnvSpec {
            path: vec![PathBuf::from("/a:b"), PathBuf::new(), PathBuf::from("/ok")],
            ld_library_path: vec![],
            vars: vec![
                ("NOT-A-NAME".into(), "x".into()),
                ("_OK1".into(), "y".into()),
            ],
        },
    );
    assert!(!text.contains("/a:b"));
    assert!(!text.contains("''"));
    assert!(text.contains("'/ok'"));
    assert!(!text.contains("NOT-A-NAME"));
    assert!(text.contains("export _OK1='y'"));
}

#[test]
fn powershell_script_text() {
    let text = script(
        Shell::PowerShell,
        &EnvSpec {
            path: vec![
                PathBuf::from(r"C:\CUDA\bin"),
                PathBuf::from(r"C:\it's\bin"),
                PathBuf::from(r"C:\a;b"),
            ],
            ld_library_path: vec![PathBuf::from("/opt/cuda/lib64")],
            vars: vec![("CUDA_PATH".into(), "C:\\CUDA \u{2019}x".into())],
        },
    );
    // Prepended in reverse, so C:\CUDA\bin ends up first.
    let first = text.find(r"Add-CudaupEntry 'PATH' 'C:\it''s\bin'").unwrap();
    let second = text.find(r"Add-CudaupEntry 'PATH' 'C:\CUDA\bin'").unwrap();
    assert!(first < second);
    // An entry with the Windows separator in it cannot be expressed.
    assert!(!text.contains(r"C:\a;b"));
    // LD_LIBRARY_PATH only where it means something.
    assert!(text.contains(
        "    if (-not $onWindows) {\n        Add-CudaupEntry 'LD_LIBRARY_PATH' '/opt/cuda/lib64'\n    }\n"
    ));
    assert!(text.contains(
        "[Environment]::SetEnvironmentVariable('CUDA_PATH', 'C:\\CUDA \u{2019}\u{2019}x')"
    ));
    assert!(text.contains("[IO.Path]::PathSeparator"));
    assert!(text.trim_end().ends_with('}'));
    // Balanced braces and parentheses: a cheap syntax check, since pwsh is not installed here.
    for (open, close) in [('{', '}'), ('(', ')')] {
        assert_eq!(
            text.matches(open).count(),
            text.matches(close).count(),
            "unbalanced {open}{close} in:\n{text}"
        );
    }
}

#[cfg(unix)] // POSIX shell lines over /-separated paths
#[test]
fn source_lines_quote_the_path() {
    let home = Path::new("/home/u/my $dir");
    assert_eq!(
        source_line(Shell::Posix, home),
        r#". "/home/u/my \$dir/env""#
    );
    assert_eq!(
        source_line(Shell::Fish, home),
        r#"source "/home/u/my \$dir/env.fish""#
    );
    assert_eq!(
        source_line(Shell::PowerShell, Path::new("/home/o'k")),
        ". '/home/o''k/env.ps1'"
    );
}

#[test]
fn posix_source_line_works_in_dash() {
    let Some(dash) = shell_or_skip("dash") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("we\"ird $home `x`");
    fs_err::create_dir(&home).unwrap();
    fs_err::write(home.join("env"), "export CUDAUP_SOURCED=yes\n").unwrap();
    let line = source_line(Shell::Posix, &home);
    let lines = run(&dash, &["-c", &format!("{line}; exec {REPORT}")], &[]);
    assert_eq!(exported(&lines, "CUDAUP_SOURCED").as_deref(), Some("yes"));
}

#[test]
fn fish_source_line_works_in_fish() {
    let Some(fish) = shell_or_skip("fish") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("we\"ird $home 'x'");
    fs_err::create_dir(&home).unwrap();
    fs_err::write(home.join("env.fish"), "set -gx CUDAUP_SOURCED yes\n").unwrap();
    let line = source_line(Shell::Fish, &home);
    let fake_home = dir.path().to_str().unwrap();
    let lines = run(
        &fish,
        &["--no-config", "-c", &format!("{line}; exec {REPORT}")],
        &[("HOME", fake_home)],
    );
    assert_eq!(exported(&lines, "CUDAUP_SOURCED").as_deref(), Some("yes"));
}

// Unix-only fact: a venv's activation scripts are in bin/ (Windows: Scripts\, below).
#[cfg(unix)]
#[test]
fn each_shell_activates_a_venv_with_its_own_script() {
    let v = Path::new("/v/it's");
    assert_eq!(activate_line(Shell::Posix, v), ". \"/v/it's/bin/activate\"");
    assert_eq!(
        activate_line(Shell::Fish, v),
        "source \"/v/it's/bin/activate.fish\""
    );
    assert_eq!(
        activate_line(Shell::PowerShell, v),
        ". '/v/it''s/bin/Activate.ps1'"
    );
}

#[cfg(windows)]
#[test]
fn powershell_activates_a_windows_venv_from_scripts() {
    let v = Path::new(r"C:\Users\me\AppData\Local\cudaup\venvs\pytorch");
    assert_eq!(
        activate_line(Shell::PowerShell, v),
        r". 'C:\Users\me\AppData\Local\cudaup\venvs\pytorch\Scripts\Activate.ps1'"
    );
    assert_eq!(Shell::INTERACTIVE, Shell::PowerShell);
}
