//! `container setup --toolkit --yes` installs the NVIDIA Container Toolkit for real: the key is
//! fetched as the user and checked, the repository's files are written and recorded (so
//! `container uninstall` removes them), the package manager runs the four pinned packages, and
//! `nvidia-ctk --version` must say the release afterwards. Every program it runs is a stand-in
//! that records its arguments (curl, apt-get, systemctl, the engine); the files go under a root
//! prefix; the test guard refuses the host's privileged programs.

use std::path::Path;

use crate::common::*;
use crate::container::{host_picture, Bin};

/// Legacy rootful Docker (Debian 12's docker.io predates CDI): its path needs the toolkit.
const DOCKER_20: &str = r#"{"ServerVersion":"20.10.24+dfsg1","CgroupDriver":"cgroupfs","CgroupVersion":"1","Runtimes":{"runc":{"path":"runc"}},"SecurityOptions":[]}"#;

const KEY: &str = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBF5cJ7UBEADA0hbmgH3yyHMWBmSgmNiBN2NOeU7ZdPT3ksI8Wg6ccYabCVR1\n=Rwjb\n-----END PGP PUBLIC KEY BLOCK-----\n";

const LIST: &str = "deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.asc] https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH) /\n";

/// A machine whose programs are stand-ins: `curl` serves `served` to its `-o` file, `apt-get`
/// exits with `apt_status` and (on success) leaves an `nvidia-ctk` of `installs` behind.
struct Machine {
    home: tempfile::TempDir,
    prefix: tempfile::TempDir,
    host: Tree,
    bin: Bin,
    log: std::path::PathBuf,
}

impl Machine {
    fn new(served: &str, apt_status: u8, installs: &str) -> Self {
        let home = tempfile::tempdir().unwrap();
        let prefix = tempfile::tempdir().unwrap();
        let log = home.path().join("commands.log");
        let bin = Bin::new();
        let served_file = home.path().join("served");
        fs_err::write(&served_file, served).unwrap();
        let dir = Path::new(bin.path().split(':').next().unwrap()).to_owned();
        bin.engine("docker", DOCKER_20, None)
            .program(
                "curl",
                &format!(
                    "echo \"curl $*\" >> {log}\nout=''\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=\"$2\"; shift; done\ncp {served} \"$out\"",
                    log = log.display(),
                    served = served_file.display()
                ),
            )
            .program(
                "apt-get",
                &format!(
                    "echo \"apt-get $*\" >> {log}\n[ {apt_status} = 0 ] || {{ echo 'E: Unable to locate package' >&2; exit {apt_status}; }}\nif [ \"$1\" = install ]; then printf '#!/bin/sh\\necho \"NVIDIA Container Toolkit CLI version {installs}\"\\n' > {ctk}; chmod 755 {ctk}; fi",
                    log = log.display(),
                    ctk = dir.join("nvidia-ctk").display()
                ),
            )
            // No toolkit package installed before (the host's dpkg database is not asked).
            .program("dpkg-query", "exit 0")
            .program(
                "systemctl",
                &format!("echo \"systemctl $*\" >> {}", log.display()),
            );
        Machine {
            home,
            prefix,
            host: host_picture(0),
            bin,
            log,
        }
    }

    fn setup(&self, extra: &[&str]) -> Run {
        let args = [
            "container",
            "setup",
            "--engine",
            "docker",
            "--system-root",
            &self.host.root_arg(),
            "--root-prefix",
            self.prefix.path().to_str().unwrap(),
            "--toolkit",
        ];
        cudaup_env(
            &[&args[..], extra].concat(),
            self.home.path(),
            &[("PATH", &self.bin.path())],
        )
    }

    fn log(&self) -> Vec<String> {
        fs_err::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Every regular file under the prefix, relative.
    fn files(&self) -> Vec<String> {
        fn walk(dir: &Path, top: &Path, out: &mut Vec<String>) {
            for e in fs_err::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    walk(&p, top, out);
                } else {
                    out.push(p.strip_prefix(top).unwrap().display().to_string());
                }
            }
        }
        let mut out = Vec::new();
        walk(self.prefix.path(), self.prefix.path(), &mut out);
        out.sort();
        out
    }
}

#[test]
fn container_setup_toolkit_yes_fetches_the_key_writes_the_repository_and_installs_the_pinned_packages(
) {
    let m = Machine::new(KEY, 0, "1.20.0");
    let r = m.setup(&["--yes", "--json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let log = m.log();
    assert_eq!(log.len(), 4, "{log:?}");
    assert!(
        log[0].starts_with("curl -fsSL --max-filesize 65536 -o ")
            && log[0].ends_with(" https://nvidia.github.io/libnvidia-container/gpgkey"),
        "{log:?}"
    );
    // The key lands in a scratch directory of the user's, never straight into the host's path.
    assert!(!log[0].contains("/usr/share/keyrings"), "{log:?}");
    assert_eq!(log[1], "apt-get update");
    assert_eq!(log[2], "apt-get install -y nvidia-container-toolkit=1.20.0-1 nvidia-container-toolkit-base=1.20.0-1 libnvidia-container-tools=1.20.0-1 libnvidia-container1=1.20.0-1");
    assert_eq!(log[3], "systemctl restart docker");
    let p = m.prefix.path();
    assert_eq!(
        fs_err::read_to_string(p.join("usr/share/keyrings/nvidia-container-toolkit-keyring.asc"))
            .unwrap(),
        KEY
    );
    assert_eq!(
        fs_err::read_to_string(p.join("etc/apt/sources.list.d/nvidia-container-toolkit.list"))
            .unwrap(),
        LIST
    );
    let daemon = fs_err::read_to_string(p.join("etc/docker/daemon.json")).unwrap();
    assert!(daemon.contains("nvidia-container-runtime"), "{daemon}");
    let j = r.json();
    assert_eq!(j["applied"]["toolkit"], "1.20.0", "{j}");
    assert_eq!(j["plan"]["toolkit"]["version"], "1.20.0", "{j}");
    assert_eq!(
        j["applied"]["commands_run"].as_array().unwrap().len(),
        3,
        "{j}"
    );
    assert_eq!(
        m.files(),
        [
            "etc/apt/sources.list.d/nvidia-container-toolkit.list",
            "etc/docker/daemon.json",
            "usr/share/keyrings/nvidia-container-toolkit-keyring.asc"
        ]
    );

    // And back: every file setup wrote goes, the directories it made with them.
    let un = cudaup(&["container", "uninstall"], m.home.path());
    assert_eq!(un.code, 0, "{}\n{}", un.stdout, un.stderr);
    assert!(m.files().is_empty(), "{:?}", m.files());
}

/// Without --yes nothing is fetched or run, no repository file is written (a list whose key is
/// missing would break `apt-get update` for everything), and NVIDIA's guide is printed to run
/// by hand.
#[test]
fn container_setup_toolkit_without_yes_writes_no_repository_and_prints_the_guide() {
    let m = Machine::new(KEY, 0, "1.20.0");
    let r = m.setup(&[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(m.log().is_empty(), "{:?}", m.log());
    assert_eq!(m.files(), ["etc/docker/daemon.json"]);
    assert!(
        r.stdout
            .contains("toolkit 1.20.0: with --yes, fetch NVIDIA's signing key"),
        "{}",
        r.stdout
    );
    let by_hand = r
        .stdout
        .split("Run these")
        .nth(1)
        .expect("the commands to run");
    assert!(by_hand.contains("gpg --dearmor"), "{by_hand}");
    assert!(
        by_hand.contains("apt-get install -y nvidia-container-toolkit=1.20.0-1"),
        "{by_hand}"
    );
}

/// What goes wrong says so with its exit code, and leaves what `container uninstall` can put
/// back: a key that is not one is refused before any file is written (4); a package manager
/// that fails stops the run (1) naming the command; packages that did not bring the release
/// asked for are a failure (1).
#[test]
fn container_setup_toolkit_failures_are_named_and_undoable() {
    // An HTML page where the key should be: nothing written, nothing installed.
    let m = Machine::new("<html><body>502 Bad Gateway</body></html>\n", 0, "1.20.0");
    let r = m.setup(&["--yes"]);
    assert_eq!(r.code, 4, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("did not serve an armored OpenPGP public key")
            && r.stderr.contains("nothing was changed"),
        "{}",
        r.stderr
    );
    assert_eq!(m.log().len(), 1, "only curl ran: {:?}", m.log());
    assert!(m.files().is_empty(), "{:?}", m.files());

    // apt-get fails: the run stops there, naming the command; uninstall removes what was written.
    let m = Machine::new(KEY, 100, "1.20.0");
    let r = m.setup(&["--yes"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("apt-get update"), "{}", r.stderr);
    assert!(
        !m.log().iter().any(|l| l.starts_with("systemctl")),
        "{:?}",
        m.log()
    );
    let un = cudaup(&["container", "uninstall"], m.home.path());
    assert_eq!(un.code, 0, "{}\n{}", un.stdout, un.stderr);
    assert!(m.files().is_empty(), "{:?}", m.files());

    // The packages installed, but an older release answers: said, not reported as done.
    let m = Machine::new(KEY, 0, "1.17.8");
    let r = m.setup(&["--yes"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("says 1.17.8, not 1.20.0"), "{}", r.stderr);
}
