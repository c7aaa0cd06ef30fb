use std::path::Path;

use super::*;
use crate::cli::i18n::Lang;
use crate::container::cdi::generate::tests::fake_driver;
use crate::container::choice::{choose, tests::host};
use crate::container::engine::{parse_info, Kind};
use crate::container::toolkit::Installed;
use crate::container::Survey;
use crate::world::prompt::{Answer, ScriptedPrompter};
use crate::world::runner::{Output, RunError};

/// The step runs no command (its commands are printed).
struct NoRunner;

impl Runner for NoRunner {
    fn run(
        &self,
        program: &Path,
        _: &[&str],
        _: std::time::Duration,
    ) -> std::result::Result<Output, RunError> {
        Err(RunError::new(program, "the container step runs no command"))
    }
}

/// A rootless Podman 5.5 user (spec and containers.conf are the user's own files) over a fake
/// driver, in `dir`: the offer, and the home its receipts go to.
fn ready(dir: &Path) -> (Offer, std::path::PathBuf) {
    let driver_dir = dir.join("driver");
    fake_driver(&driver_dir, "580.95.05");
    let driver = Root::at(&driver_dir);
    let home = dir.join("home");
    let engine = parse_info(
        Kind::Podman,
        r#"{"host":{"cgroupManager":"systemd","cgroupVersion":"v2","security":{"rootless":true,"selinuxEnabled":false}},"version":{"Version":"5.5.2"}}"#,
        false,
    )
    .unwrap();
    let host = host(false);
    let user_spec_dir = home.join("cdi");
    let engines = vec![engine];
    let choices = choose(&engines, &host, &user_spec_dir);
    let survey = Survey {
        host,
        engines,
        choices,
        user_spec_dir,
    };
    let opts = Options {
        prefix: None,
        driver_root: &driver,
        config_home: dir.join("config"),
        install_toolkit: false,
        only: None,
        toolkit: Installed::default(),
        family: None,
    };
    (crate::container::offer::offer(&survey, &opts), home)
}

fn run(
    offer: Offer,
    home: &Path,
    p: &mut ScriptedPrompter,
    unattended: bool,
) -> (ExitCode, String) {
    let mut out = Vec::new();
    let code = step(
        offer,
        home,
        &NoRunner,
        p,
        unattended,
        Lang::En.strings(),
        &Style::new(false),
        &mut out,
    )
    .unwrap();
    (code, String::from_utf8(out).unwrap())
}

/// Asked, and yes: the files are written with receipts, and `container uninstall`'s undo puts
/// them back. No: nothing is written and the command for later is said.
#[test]
fn a_yes_writes_the_users_files_and_a_no_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (offer, home) = ready(dir.path());
    let spec = home.join("cdi/cudaup-nvidia.json");
    let conf = dir.path().join("config/containers/containers.conf");

    let mut no = ScriptedPrompter::new([Answer::Confirm(false)]);
    let (code, text) = run(offer.clone(), &home, &mut no, false);
    assert_eq!(code, ExitCode::Ok);
    assert!(
        no.was_asked("Set up rootless Podman 5.5.2 to reach the GPUs"),
        "{:?}",
        no.asked
    );
    assert!(
        text.contains(&format!("write {}", spec.display())),
        "{text}"
    );
    assert!(
        text.contains("Not set up: `cudaup container setup`"),
        "{text}"
    );
    assert!(!spec.exists() && !conf.exists());

    let mut yes = ScriptedPrompter::new([Answer::Default]);
    let (code, text) = run(offer, &home, &mut yes, false);
    assert_eq!(code, ExitCode::Ok, "{text}");
    assert!(spec.is_file() && conf.is_file(), "{text}");
    assert!(
        text.contains(&format!("wrote {}", spec.display())),
        "{text}"
    );
    let undone = crate::install::host_files::undo(&home, false).unwrap();
    assert_eq!(undone.len(), 2, "{undone:?}");
    assert!(!spec.exists() && !conf.exists());
}

/// Unattended (`wizard --yes`) nothing is asked or written; Ctrl-C at the question is a no;
/// files that need root are named with the sudo command, and nothing is asked.
#[test]
fn unattended_cancelled_or_root_only_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (offer, home) = ready(dir.path());
    let mut p = ScriptedPrompter::new([]);
    let (code, text) = run(offer.clone(), &home, &mut p, true);
    assert_eq!(code, ExitCode::Ok);
    assert!(p.asked.is_empty(), "{:?}", p.asked);
    assert!(text.contains("Not set up"), "{text}");

    let mut p = ScriptedPrompter::new([Answer::Cancel]);
    let (code, text) = run(offer, &home, &mut p, false);
    assert_eq!(code, ExitCode::Ok);
    assert!(text.contains("Not set up"), "{text}");
    assert!(!home.join("cdi").exists());

    let root = Offer::NeedsRoot {
        engines: vec!["rootless Podman 4.3.1".into()],
        paths: vec!["/etc/cdi/cudaup-nvidia.json".into()],
    };
    let mut p = ScriptedPrompter::new([]);
    let (_, text) = run(root, &home, &mut p, false);
    assert!(p.asked.is_empty());
    assert!(
        text.contains("rootless Podman 4.3.1 can reach the GPUs once root writes /etc/cdi/cudaup-nvidia.json: run `sudo cudaup container setup`."),
        "{text}"
    );
    let (_, text) = run(
        Offer::NoEngine,
        &home,
        &mut ScriptedPrompter::new([]),
        false,
    );
    assert!(text.is_empty(), "{text}");
}
