use std::path::Path;

use super::*;
use crate::container::choice::{choose, tests::host};
use crate::container::engine::{parse_info, Kind};
use crate::container::toolkit::Installed;
use crate::detect::Root;

fn podman(version: &str) -> crate::container::Engine {
    parse_info(
        Kind::Podman,
        &format!(
            r#"{{"host":{{"cgroupManager":"systemd","cgroupVersion":"v2","security":{{"rootless":true,"selinuxEnabled":false}}}},"version":{{"Version":"{version}"}}}}"#
        ),
        false,
    )
    .unwrap()
}

fn survey(engines: Vec<crate::container::Engine>, home: &Path) -> Survey {
    let host = host(false);
    let user_spec_dir = home.join("cdi");
    let choices = choose(&engines, &host, &user_spec_dir);
    Survey {
        host,
        engines,
        choices,
        user_spec_dir,
    }
}

fn options<'a>(driver: &'a Root, config: &Path) -> Options<'a> {
    Options {
        prefix: None,
        driver_root: driver,
        config_home: config.to_owned(),
        install_toolkit: true,
        only: None,
        toolkit: Installed::default(),
        family: None,
    }
}

/// No engine: nothing offered. Rootless Podman 5.5 as a user: ready, writing only the user's
/// files (the spec in $CUDAUP_HOME/cdi, containers.conf), and never the toolkit even when the
/// options asked for it; once those files are there, set up. Podman 4.3 needs /etc/cdi: root.
/// A legacy Docker without the toolkit: refused with setup's own reason.
#[test]
fn the_offer_follows_what_setup_would_do() {
    let dir = tempfile::tempdir().unwrap();
    let driver_dir = dir.path().join("driver");
    crate::container::cdi::generate::tests::fake_driver(&driver_dir, "580.95.05");
    let driver = Root::at(&driver_dir);
    let config = dir.path().join("config");
    let home = dir.path().join("home");
    let opts = options(&driver, &config);

    assert!(matches!(
        offer(&survey(Vec::new(), &home), &opts),
        Offer::NoEngine
    ));

    let s = survey(vec![podman("5.5.2")], &home);
    let Offer::Ready { engines, plan } = offer(&s, &opts) else {
        panic!("{:?}", offer(&s, &opts));
    };
    assert_eq!(engines, ["rootless Podman 5.5.2"]);
    assert!(
        plan.toolkit.is_none() && plan.commands.is_empty(),
        "{plan:?}"
    );
    let paths: Vec<&Path> = plan.edits.iter().map(|e| e.path.as_path()).collect();
    assert_eq!(
        paths,
        [
            home.join("cdi/cudaup-nvidia.json"),
            config.join("containers/containers.conf")
        ]
    );
    for e in &plan.edits {
        fs_err::create_dir_all(e.path.parent().unwrap()).unwrap();
        fs_err::write(&e.path, e.bytes.as_ref().unwrap()).unwrap();
    }
    assert!(
        matches!(offer(&s, &opts), Offer::SetUp { ref engines } if engines.len() == 1),
        "{:?}",
        offer(&s, &opts)
    );

    let s = survey(vec![podman("4.3.1")], &home);
    let Offer::NeedsRoot { paths, .. } = offer(&s, &opts) else {
        panic!("{:?}", offer(&s, &opts));
    };
    assert_eq!(paths, [Path::new("/etc/cdi/cudaup-nvidia.json")]);

    let docker = parse_info(
        Kind::Docker,
        r#"{"ServerVersion":"20.10.24+dfsg1","CgroupDriver":"systemd","CgroupVersion":"2","Runtimes":{"runc":{"path":"runc"}},"SecurityOptions":[]}"#,
        false,
    )
    .unwrap();
    let Offer::Refused { reason } = offer(&survey(vec![docker], &home), &opts) else {
        panic!("a legacy Docker without the toolkit is refused");
    };
    assert!(
        reason.contains("predates CDI") && reason.contains("--toolkit"),
        "{reason}"
    );
}
