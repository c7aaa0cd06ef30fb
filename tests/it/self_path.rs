//! cudaup on PATH after the first run (issue 20): `install` and the wizard copy the running binary
//! to `$CUDAUP_HOME/bin/cudaup`, the env scripts put that directory on PATH, and a new login shell
//! — bash, zsh, fish, sh — with an empty HOME but for what cudaup wrote finds that copy. A second
//! run replaces it in place, `uninstall` removes it and nothing else, and a file that is not
//! cudaup's is never overwritten. Every install plans for the H200 picture and installs from the
//! synthetic mirror into a temporary home.
//!
//! Tests that start real shells are named `needs_shells_*`; a shell that is not installed is
//! skipped, and each test prints how many it checked and which it skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

const H200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/h200-detect.json"
);

/// The login shells a user may open, as (program, what it reads here). `sh` is dash on Debian:
/// as a login shell it reads ~/.profile (a non-login sh reads only $ENV, and inherits PATH from
/// the login shell it was started from).
const SHELLS: [(&str, &str); 5] = [
    ("bash", "~/.profile"),
    ("zsh", "~/.zshenv"),
    ("fish", "~/.config/fish/conf.d/cudaup.fish"),
    ("sh", "~/.profile"),
    (
        "pwsh",
        "~/.config/powershell/Microsoft.PowerShell_profile.ps1",
    ),
];

/// A user's home (HOME) with cudaup's at its default place (a [`TestContext`] that passes no
/// `--home`), and a mirror to install from.
struct Machine {
    ctx: TestContext,
    home: PathBuf,
    mirror: tempfile::TempDir,
    /// Where test copies of the binary live (outside HOME, as a build directory would be).
    builds: tempfile::TempDir,
}

impl Machine {
    fn new() -> Machine {
        let ctx = TestContext::new().with_default_home();
        Machine {
            home: ctx.home(),
            ctx,
            mirror: synthetic_mirror(&[]),
            builds: tempfile::tempdir().unwrap(),
        }
    }

    fn home(&self) -> &Path {
        &self.home
    }

    fn cudaup_home(&self) -> PathBuf {
        self.ctx.cudaup_home()
    }

    fn copy(&self) -> PathBuf {
        self.cudaup_home().join("bin/cudaup")
    }

    /// Runs `exe` (the test binary, or a copy of it) in the context's environment.
    fn run_with(&self, exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = self.ctx.command_of(exe, args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        crate::common::context::run(&mut cmd)
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_with(Path::new(env!("CARGO_BIN_EXE_cudaup")), args, &[])
    }

    fn install_args(&self) -> Vec<String> {
        [
            "install",
            "--system",
            H200,
            "--profile",
            "cuda-dev",
            "--cuda",
            "13.0.2",
            "--cudnn",
            "9.17.0",
            "--mirror",
            &self.mirror.path().display().to_string(),
            "--yes",
        ]
        .map(str::to_owned)
        .to_vec()
    }

    /// `cudaup install` (cuda-dev from the mirror) run by `exe`, plus `extra` flags.
    fn install_with(&self, exe: &Path, extra: &[&str]) -> Run {
        let mut args = self.install_args();
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.run_with(exe, &args, &[])
    }

    fn install(&self, extra: &[&str]) -> Run {
        self.install_with(Path::new(env!("CARGO_BIN_EXE_cudaup")), extra)
    }

    /// A copy of the test binary with `tag` appended: another build, as far as bytes go, that
    /// still runs (the ELF loader ignores what follows the last segment).
    fn other_build(&self, tag: &str) -> PathBuf {
        let dir = self.builds.path().join(tag);
        fs_err::create_dir_all(&dir).unwrap();
        let exe = dir.join("cudaup");
        fs_err::copy(env!("CARGO_BIN_EXE_cudaup"), &exe).unwrap();
        let mut f = fs_err::OpenOptions::new().append(true).open(&exe).unwrap();
        std::io::Write::write_all(&mut f, format!("\nanother build: {tag}\n").as_bytes()).unwrap();
        exe
    }
}

fn ok(run: &Run) {
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
}

fn same_bytes(a: &Path, b: &Path) -> bool {
    cudaup::fetch::sha256_file(a).unwrap() == cudaup::fetch::sha256_file(b).unwrap()
}

/// Where `program` is installed, if it is.
fn installed(program: &str) -> Option<PathBuf> {
    ["/usr/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(program))
        .find(|p| p.is_file())
}

/// Opens each login shell on `home` (nothing in the environment but what [`hermetic`] sets, HOME
/// and the tools' PATH among it, and TERM) and asks it for `cudaup`: where it finds it, and what
/// `cudaup --version` says. Every shell that runs must find `expected`, which must answer as the
/// installed copy. Returns how many shells were checked; says which were skipped.
fn login_shells_find(test: &str, home: &Path, expected: &Path) -> usize {
    let mut checked = 0;
    let mut skipped = Vec::new();
    for (shell, reads) in SHELLS {
        let Some(program) = installed(shell) else {
            skipped.push(shell);
            continue;
        };
        let args = match shell {
            "fish" => vec!["-l", "-c", "command -v cudaup; and cudaup --version"],
            // -Login must come first; the profile is read unless -NoProfile.
            "pwsh" => vec![
                "-Login",
                "-NoLogo",
                "-Command",
                "(Get-Command cudaup -CommandType Application).Source; cudaup --version",
            ],
            _ => vec!["-l", "-c", "command -v cudaup && cudaup --version"],
        };
        let mut cmd = Command::new(&program);
        cmd.args(&args).current_dir(home);
        let out = guarded_output(hermetic(&mut cmd, home).env("TERM", "dumb"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{shell} -l (reads {reads}) finds no cudaup:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut lines = stdout.lines();
        assert_eq!(
            lines.next().map(Path::new),
            Some(expected),
            "{shell}: {stdout}"
        );
        assert!(
            stdout.contains("(the installed copy: new shells run this one)"),
            "{shell}: {stdout}"
        );
        checked += 1;
    }
    #[allow(clippy::print_stderr)]
    {
        if skipped.is_empty() {
            eprintln!("{test}: {checked} of {} login shells checked", SHELLS.len());
        } else {
            eprintln!(
                "SKIPPED in {test}: {} of {} login shells ({}: not installed); {checked} checked",
                skipped.len(),
                SHELLS.len(),
                skipped.join(", ")
            );
        }
    }
    checked
}

/// Every file under `dir`, relative, with its bytes (what a "nothing else changed" check compares).
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs_err::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() && !p.is_symlink() {
                stack.push(p);
            } else {
                let bytes = fs_err::read(&p).unwrap_or_default();
                out.push((p.strip_prefix(dir).unwrap().to_owned(), bytes));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn needs_shells_install_puts_cudaup_on_path_replaces_it_in_place_and_uninstall_takes_only_it() {
    let m = Machine::new();
    // A user's own .bashrc (CRLF, no final newline) that must come back byte for byte.
    let bashrc = b"alias ll='ls -l'\r\nexport EDITOR=vim".to_vec();
    fs_err::write(m.home().join(".bashrc"), &bashrc).unwrap();
    let first = m.install(&["--json"]);
    ok(&first);
    let report = first.json();
    assert_eq!(report["cudaup"]["action"], "installed", "{report}");
    assert_eq!(report["cudaup"]["path"], m.copy().display().to_string());
    let copy = m.copy();
    assert!(same_bytes(&copy, Path::new(env!("CARGO_BIN_EXE_cudaup"))));
    let env = fs_err::read_to_string(m.cudaup_home().join("env")).unwrap();
    assert!(
        env.contains(&format!("'{}'", m.cudaup_home().join("bin").display())),
        "{env}"
    );
    login_shells_find("needs_shells_install_puts_cudaup_on_path", m.home(), &copy);

    // The same binary again: nothing to copy, the same file.
    let inode = |p: &Path| {
        use std::os::unix::fs::MetadataExt;
        fs_err::metadata(p).unwrap().ino()
    };
    let before = inode(&copy);
    let again = m.install(&["--json"]);
    ok(&again);
    assert_eq!(
        again.json()["cudaup"],
        serde_json::Value::Null,
        "nothing to do: {}",
        again.stdout
    );
    assert_eq!(inode(&copy), before);

    // Another build: the copy is replaced in place, and new shells run that build.
    let other = m.other_build("two");
    let replaced = m.install_with(&other, &[]);
    ok(&replaced);
    assert!(
        replaced.stdout.contains(&format!(
            "replaced the copy of cudaup 0.1.0 in {} with cudaup 0.1.0",
            copy.display()
        )),
        "{}",
        replaced.stdout
    );
    assert!(same_bytes(&copy, &other), "the new build is in place");
    assert_ne!(inode(&copy), before, "a new file, renamed over the old one");
    login_shells_find("needs_shells_install_replaced", m.home(), &copy);

    // Uninstall: the copy goes, a file of the user's beside it stays, the rc files come back.
    let canary = m.cudaup_home().join("bin/my-script");
    fs_err::write(&canary, "#!/bin/sh\necho mine\n").unwrap();
    let dry = m.run(&["uninstall", "--dry-run"]);
    ok(&dry);
    // The copy is the last thing removed (what is kept, the download cache, is said after it).
    let last = dry
        .stdout
        .lines()
        .rfind(|l| l.starts_with("  - remove"))
        .unwrap();
    assert_eq!(
        last,
        format!("  - remove cudaup's own copy {} (last)", copy.display()),
        "{}",
        dry.stdout
    );
    // Run from the installed copy itself: a running binary can remove its own file.
    let gone = m.run_with(&copy, &["uninstall", "--yes"], &[]);
    ok(&gone);
    assert!(!copy.exists(), "{}", gone.stdout);
    assert_eq!(fs_err::read(&canary).unwrap(), b"#!/bin/sh\necho mine\n");
    assert_eq!(fs_err::read(m.home().join(".bashrc")).unwrap(), bashrc);
    for created in [".profile", ".zshenv", ".config/fish/conf.d/cudaup.fish"] {
        assert!(!m.home().join(created).exists(), "{created} is gone");
    }
    assert!(!m.cudaup_home().join("receipts").exists());
}

#[test]
fn needs_shells_wizard_puts_cudaup_on_path_and_says_so() {
    let m = Machine::new();
    let config = m.home().join("cudaup.toml");
    fs_err::write(
        &config,
        format!(
            "version = 1\nprofile = \"cuda-dev\"\n[pins]\ncuda = \"13.0.2\"\ncudnn = \"9.17.0\"\n[install]\nverify = false\n[shell]\nmodify_path = true\n[sources]\nnvidia_mirror = \"{}\"\n",
            m.mirror.path().display()
        ),
    )
    .unwrap();
    let c = config.display().to_string();
    let run = m.run(&["wizard", "--config", &c, "--yes"]);
    ok(&run);
    let copy = m.copy();
    assert!(
        run.stdout.contains("cudaup itself  ~/.local/share/cudaup/bin/cudaup (a copy of this program: `cudaup` works in new shells)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "1. Put CUDA and `cudaup` on PATH in this shell (new shells do it by themselves):\n       . \"{}/env\"",
            m.cudaup_home().display()
        )),
        "{}",
        run.stdout
    );
    assert!(run
        .stdout
        .contains("Later: `cudaup verify` checks the stack"));
    assert!(same_bytes(&copy, Path::new(env!("CARGO_BIN_EXE_cudaup"))));
    login_shells_find("needs_shells_wizard", m.home(), &copy);
}

#[test]
fn needs_shells_no_modify_path_leaves_the_rc_files_and_says_how_to_run_it() {
    let m = Machine::new();
    let run = m.install(&["--no-modify-path"]);
    ok(&run);
    let copy = m.copy();
    let source = format!(". \"{}/env\"", m.cudaup_home().display());
    assert!(
        run.stdout.contains(&format!(
            "run cudaup as {}, or `{source}` puts it (and the toolkit) on PATH in a shell",
            copy.display()
        )),
        "{}",
        run.stdout
    );
    for rc in [".profile", ".zshenv", ".bashrc", ".config"] {
        assert!(!m.home().join(rc).exists(), "{rc} was not touched");
    }
    // The one line works in a plain POSIX shell.
    let mut sh = Command::new("sh");
    sh.args(["-c", &format!("{source} && command -v cudaup")]);
    let out = guarded_output(hermetic(&mut sh, m.home()));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        copy.display().to_string()
    );
}

#[test]
fn a_file_cudaup_did_not_write_stops_the_install_before_anything_changes() {
    let m = Machine::new();
    let copy = m.copy();
    fs_err::create_dir_all(copy.parent().unwrap()).unwrap();
    let mine = b"#!/bin/sh\necho my own cudaup wrapper\n";
    fs_err::write(&copy, mine).unwrap();
    let before = snapshot(m.home());
    for extra in [&[][..], &["--dry-run"][..]] {
        let run = m.install(extra);
        assert_eq!(run.code, 1, "{extra:?}: {}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "error: {} is not a copy cudaup installed: no receipt of cudaup's names it, and it is not this cudaup (sha256 ",
                copy.display()
            )),
            "{}",
            run.stderr
        );
        assert!(
            run.stderr
                .contains(&format!("hint: cudaup never overwrites a file it did not write. If that one is yours and you want cudaup there, move it away (mv {0} {0}.old)", copy.display())),
            "{}",
            run.stderr
        );
        assert!(
            !run.stderr.contains("caused by"),
            "said once: {}",
            run.stderr
        );
        assert_eq!(snapshot(m.home()), before, "{extra:?}: nothing changed");
    }
    // The wizard stops the same way, after showing it.
    let config = m.builds.path().join("cudaup.toml");
    fs_err::write(
        &config,
        format!(
            "version = 1\nprofile = \"cuda-dev\"\n[pins]\ncuda = \"13.0.2\"\ncudnn = \"9.17.0\"\n[install]\nverify = false\n[sources]\nnvidia_mirror = \"{}\"\n",
            m.mirror.path().display()
        ),
    )
    .unwrap();
    let wizard = m.run(&["wizard", "--config", &config.display().to_string(), "--yes"]);
    assert_eq!(wizard.code, 1, "{}\n{}", wizard.stdout, wizard.stderr);
    assert!(
        wizard.stdout.contains("cudaup itself  cannot be copied:"),
        "{}",
        wizard.stdout
    );
    assert_eq!(snapshot(m.home()), before);
    // Doctor has nothing to say about a file of the user's where cudaup never put one, and
    // uninstall has nothing to remove.
    assert_eq!(fs_err::read(&copy).unwrap(), mine);
}

#[test]
fn killed_between_the_copy_and_its_receipt_a_rerun_converges() {
    let m = Machine::new();
    let two = m.other_build("two");
    let three = m.other_build("three");
    let test_binary = PathBuf::from(env!("CARGO_BIN_EXE_cudaup"));
    // (checkpoint, whether a copy is there already, the binary that re-runs). Build two is
    // killed; the unit tests of install::self_copy walk every state without processes (each
    // round here copies the 160 MB test binary with fsyncs, so it keeps to three).
    for (checkpoint, replacing, rerun) in [
        // The copy landed, its final receipt did not: another build still knows it is cudaup's.
        ("self-copy-renamed", false, &test_binary),
        // A temporary file is left: swept.
        ("self-copy-written", true, &three),
        // The old copy is still there, vouched for as the one being replaced.
        ("self-copy-recorded", true, &three),
    ] {
        // The toolkit stays installed between rounds; cudaup's copy starts over.
        let _ = fs_err::remove_dir_all(m.cudaup_home().join("bin"));
        let _ = fs_err::remove_file(m.cudaup_home().join("receipts/self.json"));
        if replacing {
            ok(&m.install(&["--no-modify-path"]));
        }
        let mut args = m.install_args();
        args.push("--no-modify-path".into());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        kill_at_checkpoint(m.ctx.command_of(&two, &args), checkpoint);
        let what = format!(
            "{checkpoint}, replacing {replacing}, re-run by {}",
            rerun.display()
        );
        let run = m.install_with(rerun, &["--no-modify-path"]);
        assert_eq!(run.code, 0, "{what}: {}\n{}", run.stdout, run.stderr);
        assert!(same_bytes(&m.copy(), rerun), "{what}");
        let leftovers: Vec<String> = fs_err::read_dir(m.cudaup_home().join("bin"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(leftovers, ["cudaup"], "{what}");
        let doctor = m.run_with(rerun, &["doctor", "--json"], &[]);
        let findings = doctor.json()["findings"].clone();
        assert!(
            !findings.to_string().contains("self-copy"),
            "{what}: {findings}"
        );
    }
}

/// Issue 38: cudaup's copy is written ahead while the toolkit installs (`self_copy::stage`).
/// Killed mid-install once those bytes are in `bin/`: doctor counts them as litter and `repair
/// --fix litter` removes them; killed again, a re-run puts the copy in place with nothing beside
/// it; and an install that fails after staging leaves no `bin/` at all.
#[test]
fn a_copy_written_ahead_by_a_killed_install_is_litter_and_a_rerun_converges() {
    let test_binary = Path::new(env!("CARGO_BIN_EXE_cudaup"));
    let bin = |m: &Machine| -> Vec<String> {
        let mut names: Vec<String> = fs_err::read_dir(m.cudaup_home().join("bin"))
            .map(|rd| {
                rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    let staged = |names: &[String]| {
        names.len() == 1 && names[0].starts_with(".cudaup-") && names[0].ends_with(".tmp")
    };
    // Each round on a fresh machine: the kill may land before or after the (small) toolkit
    // committed, and a toolkit already in place leaves the copy nothing to run beside.
    let killed = || {
        let m = Machine::new();
        let args = m.install_args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        kill_at_checkpoint(m.ctx.command_of(test_binary, &args), "self-copy-staged");
        assert!(staged(&bin(&m)), "{:?}", bin(&m));
        m
    };
    let m = killed();
    let doctor = m.run(&["doctor", "--json"]);
    let litter = doctor.json()["findings"].to_string();
    assert!(
        litter.contains("a copy of cudaup an interrupted install wrote ahead"),
        "{litter}"
    );
    ok(&m.run(&["repair", "--fix", "litter", "--yes"]));
    assert!(bin(&m).is_empty(), "{:?}", bin(&m));
    let m = killed();
    ok(&m.install(&["--no-modify-path"]));
    assert_eq!(bin(&m), ["cudaup"]);
    assert!(same_bytes(&m.copy(), test_binary));
    // A failed install: the bytes written ahead go, with the bin/ they were written into.
    let broken = Machine::new();
    let mut dirs = vec![broken.mirror.path().to_owned()];
    while let Some(dir) = dirs.pop() {
        for e in fs_err::read_dir(&dir).unwrap().map(Result::unwrap) {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                dirs.push(p);
            } else if p.to_string_lossy().ends_with(".tar.xz") {
                // As long as the manifest says, other bytes: a checksum mismatch.
                let flipped: Vec<u8> = fs_err::read(&p).unwrap().iter().map(|b| !b).collect();
                fs_err::write(&p, flipped).unwrap();
            }
        }
    }
    let run = broken.install(&["--no-modify-path"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(!broken.cudaup_home().join("bin").exists(), "{}", run.stderr);
}

#[test]
fn version_says_where_the_binary_is_and_whether_new_shells_run_it() {
    let m = Machine::new();
    let test_binary = Path::new(env!("CARGO_BIN_EXE_cudaup"));
    let copy = m.copy();
    let v = m.run(&["--version"]);
    ok(&v);
    assert_eq!(
        v.stdout,
        format!(
            "cudaup 0.1.0\n  this binary:    {} (not the installed copy)\n  installed copy: {}: none yet (`cudaup install` or `cudaup wizard` puts this binary there)\n",
            test_binary.display(),
            copy.display()
        )
    );
    ok(&m.install(&["--no-modify-path"]));
    let v = m.run(&["-V"]);
    assert!(
        v.stdout.ends_with(&format!(
            "installed copy: {} (the same build as this one)\n",
            copy.display()
        )),
        "{}",
        v.stdout
    );
    let from_copy = m.run_with(&copy, &["--version"], &[]);
    assert_eq!(
        from_copy.stdout,
        format!(
            "cudaup 0.1.0\n  this binary:    {} (the installed copy: new shells run this one)\n",
            copy.display()
        )
    );
    let other = m.other_build("two");
    let v = m.run_with(&other, &["--version"], &[]);
    assert!(
        v.stdout.contains(&format!("installed copy: {} (cudaup 0.1.0, another build: `cudaup install` or `cudaup repair --fix self-copy` replaces it with this one)", copy.display())),
        "{}",
        v.stdout
    );
}

#[test]
fn doctor_finds_a_missing_or_stale_copy_and_repair_puts_it_back() {
    let m = Machine::new();
    ok(&m.install(&[]));
    let copy = m.copy();
    fs_err::remove_file(&copy).unwrap();
    let doctor = m.run(&["doctor", "--json"]);
    let doc = doctor.json();
    let finding = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "self-copy-missing")
        .unwrap_or_else(|| panic!("{doc}"))
        .clone();
    assert_eq!(finding["severity"], "warning");
    assert!(finding["evidence"][0]
        .as_str()
        .unwrap()
        .contains("receipts/self.json records cudaup 0.1.0 there"));
    assert!(finding["fix"]
        .as_str()
        .unwrap()
        .starts_with("cudaup repair --fix self-copy"));
    let dry = m.run(&["repair", "--dry-run"]);
    assert!(
        dry.stdout.contains(&format!(
            "[self-copy] copy this cudaup to {} (it is gone)",
            copy.display()
        )),
        "{}",
        dry.stdout
    );
    let fixed = m.run(&["repair", "--fix", "self-copy-missing", "--yes"]);
    ok(&fixed);
    assert!(same_bytes(&copy, Path::new(env!("CARGO_BIN_EXE_cudaup"))));
    assert!(m
        .run(&["repair", "--yes"])
        .stdout
        .contains("nothing to repair"));

    // Another build in place: the running one finds it stale, and repair replaces it.
    let other = m.other_build("two");
    ok(&m.install_with(&other, &[]));
    let human = m.run(&["doctor"]);
    assert!(
        human.stdout.contains(&format!("note [self-copy-stale]: the installed copy {} is another build of cudaup 0.1.0 than this one", copy.display())),
        "{}",
        human.stdout
    );
    ok(&m.run(&["repair", "--fix", "self-copy", "--yes"]));
    assert!(same_bytes(&copy, Path::new(env!("CARGO_BIN_EXE_cudaup"))));
    let clean = m.run(&["doctor", "--json"]);
    assert!(!clean.stdout.contains("self-copy"), "{}", clean.stdout);

    // Someone replaced the copy with a script of their own: it is theirs now. Doctor says so,
    // repair leaves it, uninstall leaves it and forgets cudaup's copy.
    let theirs = b"#!/bin/sh\nexec /opt/other/cudaup \"$@\"\n";
    fs_err::write(&copy, theirs).unwrap();
    let human = m.run(&["doctor"]);
    assert!(
        human.stdout.contains("warning [self-copy-changed]"),
        "{}",
        human.stdout
    );
    assert!(m
        .run(&["repair", "--yes"])
        .stdout
        .contains("nothing to repair"));
    let dry = m.run(&["uninstall", "--dry-run"]);
    assert!(
        dry.stdout.contains(&format!(
            "  - leave {} in place (its sha256 ",
            copy.display()
        )),
        "{}",
        dry.stdout
    );
    let gone = m.run(&["uninstall", "--yes"]);
    ok(&gone);
    assert!(
        gone.stdout
            .contains(&format!("left in place: {}", copy.display())),
        "{}",
        gone.stdout
    );
    assert_eq!(fs_err::read(&copy).unwrap(), theirs);
    assert!(!m.cudaup_home().join("receipts").exists());
}

#[test]
fn needs_shells_repair_gives_a_stack_an_older_cudaup_installed_its_copy() {
    let m = Machine::new();
    ok(&m.install(&[]));
    // What an older cudaup left: the stack and its env, no copy, no receipt, env without bin/.
    fs_err::remove_dir_all(m.cudaup_home().join("bin")).unwrap();
    fs_err::remove_file(m.cudaup_home().join("receipts/self.json")).unwrap();
    let active = m.cudaup_home().join("active.json");
    let mut doc: serde_json::Value =
        serde_json::from_slice(&fs_err::read(&active).unwrap()).unwrap();
    doc.as_object_mut().unwrap().remove("cudaup_bin");
    fs_err::write(&active, doc.to_string()).unwrap();
    let doctor = m.run(&["doctor"]);
    assert!(
        doctor.stdout.contains("note [self-copy-not-installed]"),
        "{}",
        doctor.stdout
    );
    ok(&m.run(&["repair", "--yes"]));
    login_shells_find("needs_shells_repair_gives_a_stack", m.home(), &m.copy());
}

#[test]
fn a_binary_cargo_installed_is_left_to_cargo() {
    let m = Machine::new();
    // `cargo install --path .` put it in ~/.cargo/bin and recorded it.
    let cargo_bin = m.home().join(".cargo/bin");
    fs_err::create_dir_all(&cargo_bin).unwrap();
    let exe = cargo_bin.join("cudaup");
    fs_err::copy(env!("CARGO_BIN_EXE_cudaup"), &exe).unwrap();
    fs_err::write(
        m.home().join(".cargo/.crates2.json"),
        r#"{"installs":{"cudaup 0.1.0 (path+file:///src/cudaup)":{"version_req":null,"bins":["cudaup"],"features":[],"all_features":false,"no_default_features":false,"profile":"release","target":"x86_64-unknown-linux-gnu","rustc":"rustc 1.89.0"}}}"#,
    )
    .unwrap();
    // An earlier `cargo run` install left a copy that would shadow cargo's.
    ok(&m.install(&["--no-modify-path"]));
    let run = m.install_with(&exe, &["--no-modify-path"]);
    ok(&run);
    assert!(
        run.stdout.contains(&format!(
            "removed {}: cudaup runs from {}, which `cargo install` manages",
            m.copy().display(),
            exe.display()
        )),
        "{}",
        run.stdout
    );
    assert!(!m.copy().exists());
    let env = fs_err::read_to_string(m.cudaup_home().join("env")).unwrap();
    let bin = format!("'{}'", m.cudaup_home().join("bin").display());
    assert!(!env.contains(&bin), "no copy, so not on PATH:\n{env}");
    let v = m.run_with(&exe, &["--version"], &[]);
    assert!(
        v.stdout.contains(
            "(installed by `cargo install`, which manages it: cudaup makes no copy of it)"
        ),
        "{}",
        v.stdout
    );
    // And uninstall leaves cargo's binary alone.
    ok(&m.run_with(&exe, &["uninstall", "--yes"], &[]));
    assert!(exe.is_file());
}

#[test]
fn needs_shells_a_profile_without_a_toolkit_still_puts_cudaup_on_path() {
    use crate::common::{server::Server, wheels};
    let m = Machine::new();
    // A PyTorch index with a torch that needs nothing from PyPI, and an empty PyPI beside it:
    // the install runs offline.
    let index = tempfile::tempdir().unwrap();
    let build = index.path().join("build");
    let tag = "2.14.1+cu130";
    let built = vec![
        wheels::fake_torch_with(&build, tag, Some("13.0"), crate::framework::ARCH, &[]),
        wheels::fake_companion(&build, "torchvision", "0.29.1+cu130", tag),
        wheels::fake_companion(&build, "torchaudio", "2.11.0+cu130", tag),
    ];
    wheels::write_index(&index.path().join("whl/cu130"), &built);
    fs_err::create_dir_all(index.path().join("simple")).unwrap();
    let server = Server::start(index.path().to_owned());
    let (torch, pypi) = (
        format!("{}/whl", server.url()),
        format!("{}/simple", server.url()),
    );
    let run = m.run_with(
        Path::new(env!("CARGO_BIN_EXE_cudaup")),
        &[
            "install",
            "--system",
            H200,
            "--profile",
            "pytorch",
            "--torch",
            "2.14",
            "--torch-index",
            &torch,
            "--pypi-index",
            &pypi,
            "--allow-http",
            "--yes",
        ],
        &[("CUDAUP_NO_UV", "1")],
    );
    ok(&run);
    assert!(
        run.stdout.contains("installed torch 2.14.1 (cu130)"),
        "{}",
        run.stdout
    );
    let env = fs_err::read_to_string(m.cudaup_home().join("env")).unwrap();
    assert!(
        env.contains(&format!("'{}'", m.cudaup_home().join("bin").display())),
        "{env}"
    );
    assert!(
        !env.contains("CUDA_HOME"),
        "no toolkit, so no CUDA_HOME:\n{env}"
    );
    let profile = fs_err::read_to_string(m.home().join(".profile")).unwrap();
    assert!(
        profile.contains(&format!(". \"{}/env\"", m.cudaup_home().display())),
        "{profile}"
    );
    login_shells_find(
        "needs_shells_a_profile_without_a_toolkit",
        m.home(),
        &m.copy(),
    );
}
