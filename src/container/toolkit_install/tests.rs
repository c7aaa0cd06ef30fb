use super::*;

const KEY: &str = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBF5cJ7UBEADA0hbmgH3yyHMWBmSgmNiBN2NOeU7ZdPT3ksI8Wg6ccYabCVR1\n=Rwjb\n-----END PGP PUBLIC KEY BLOCK-----\n";

/// An armored public key passes; what a broken mirror, a captive portal or a wrong URL serves
/// does not, and the reason says what was wrong.
#[test]
fn only_one_armored_public_key_block_is_taken() {
    assert_eq!(check_key(KEY), Ok(()));
    assert_eq!(
        check_key("-----BEGIN PGP PUBLIC KEY BLOCK-----\nComment: NVIDIA\n\nmQINBF5c\n-----END PGP PUBLIC KEY BLOCK-----"),
        Ok(())
    );
    assert!(check_key("").unwrap_err().contains("empty"));
    assert!(check_key("<html><body>502 Bad Gateway</body></html>\n")
        .unwrap_err()
        .contains("does not start"));
    assert!(check_key(&format!("{KEY}{KEY}"))
        .unwrap_err()
        .contains("more than one"));
    assert!(check_key(
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n<script>\n-----END PGP PUBLIC KEY BLOCK-----\n"
    )
    .unwrap_err()
    .contains("base64"));
    assert!(check_key(
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nmQIN\n-----END PGP PRIVATE KEY BLOCK-----\n"
    )
    .is_err());
}

/// apt: the key and the list are files, the four packages pinned to one release; dnf: the .repo
/// file as NVIDIA publishes it; zypper: `zypper ar`. Only the package manager is privileged.
#[test]
fn each_family_gets_its_files_and_pinned_commands() {
    let f = super::super::toolkit::facts();
    let apt = steps(Family::Apt, &f, "1.20.0");
    let key = apt.key.as_ref().expect("apt has a key");
    assert_eq!(
        key.url,
        "https://nvidia.github.io/libnvidia-container/gpgkey"
    );
    let list = apt.repo_file.as_ref().expect("apt has a list");
    assert_eq!(
        list.text,
        format!(
            "deb [signed-by={}] https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH) /\n",
            key.keyring.display()
        )
    );
    assert_eq!(apt.commands[0], ["sudo", "apt-get", "update"]);
    assert_eq!(
        apt.commands[1][4..],
        [
            "nvidia-container-toolkit=1.20.0-1",
            "nvidia-container-toolkit-base=1.20.0-1",
            "libnvidia-container-tools=1.20.0-1",
            "libnvidia-container1=1.20.0-1"
        ]
    );
    assert!(apt
        .commands
        .iter()
        .all(|c| c[0] == "sudo" && c[1] == "apt-get"));
    let dnf = steps(Family::Dnf, &f, "1.20.0");
    assert!(dnf.key.is_none());
    let repo = dnf.repo_file.as_ref().expect("dnf has a .repo");
    assert!(
        repo.text.starts_with("[nvidia-container-toolkit]\n")
            && repo.text.contains("repo_gpgcheck=1")
    );
    assert!(dnf.commands[0].contains(&"libnvidia-container1-1.20.0-1".to_owned()));
    let zypper = steps(Family::Zypper, &f, "1.20.0");
    assert!(zypper.repo_file.is_none() && zypper.commands[0][2] == "ar");
    // What a person runs by hand is NVIDIA's guide, as before.
    assert!(apt
        .by_hand
        .iter()
        .any(|c| c.iter().any(|w| w.contains("gpg --dearmor"))));
}
