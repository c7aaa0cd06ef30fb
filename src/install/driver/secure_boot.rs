//! Secure Boot: the kernel loads only signed modules, so the module DKMS builds is signed with a
//! Machine Owner Key (MOK) that the firmware must be told to trust — once, at the next boot.

use crate::detect::Root;
use crate::model::system::System;

use super::distro::{Family, Route};

/// DKMS 3's own default certificate (`mok_certificate`), also what Debian and Ubuntu use.
pub(crate) const DKMS_DEFAULT_CERT: &str = "/var/lib/dkms/mok.pub";

/// Where Ubuntu's shim-signed tooling keeps the key on releases whose DKMS signs with it.
const SHIM_SIGNED_CERT: &str = "/var/lib/shim-signed/mok/MOK.der";

/// What to say and run for Secure Boot.
#[derive(Debug, Default)]
pub(crate) struct SecureBootPlan {
    pub notices: Vec<String>,
    pub mok_import: Option<Vec<String>>,
}

/// Notices (printed before anything is installed) and the mokutil command, when Secure Boot is
/// on.
pub(crate) fn plan(system: &System, route: &Route, root: &Root) -> SecureBootPlan {
    if system.os.secure_boot != Some(true) {
        return SecureBootPlan::default();
    }
    let cert = if route.is_akmod() {
        None
    } else {
        mok_certificate(root, route.family)
    };
    let mok_import = cert
        .as_ref()
        .map(|c| super::argv(&["sudo", "mokutil", "--import", c]));
    let signer = if route.is_akmod() { "akmods" } else { "DKMS" };
    let mut notices = vec![
        format!(
            "Secure Boot is on: the kernel loads only signed modules. {signer} builds the NVIDIA kernel module on this machine and signs it with a Machine Owner Key (MOK) it creates here; the firmware must be told to trust that key, once."
        ),
    ];
    match &mok_import {
        Some(cmd) => notices.push(format!(
            "after the install, `{}` asks you to choose a one-time password (you need it only once, at the next boot)",
            super::shell_line(cmd)
        )),
        None => notices.push(format!(
            "after the install, import the key {signer} created with `sudo mokutil --import <its public key>`; mokutil asks you to choose a one-time password (you need it only once, at the next boot)"
        )),
    }
    notices.push(
        "at the next boot a blue MOK Manager screen appears (it times out quickly, so watch for it): choose \"Enroll MOK\" → \"Continue\" → \"Yes\", type that password, then reboot"
            .into(),
    );
    notices.push(
        "until the key is enrolled the NVIDIA module will not load (modprobe: \"Key was rejected by service\"); if you miss the screen, run the mokutil command again and reboot"
            .into(),
    );
    SecureBootPlan {
        notices,
        mok_import,
    }
}

/// The certificate DKMS signs with: `mok_certificate` in /etc/dkms/framework.conf (or its
/// `framework.conf.d/*.conf`, later files win) when set; else a key that already exists;
/// else DKMS's default on Debian and Ubuntu. `None` when it cannot be known.
pub(crate) fn mok_certificate(root: &Root, family: Family) -> Option<String> {
    let mut configs = vec![std::path::PathBuf::from("/etc/dkms/framework.conf")];
    configs.extend(
        root.list("/etc/dkms/framework.conf.d")
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "conf")),
    );
    let configured = configs
        .iter()
        .filter_map(|p| root.read(p))
        .flat_map(|text| {
            text.lines()
                .filter_map(|l| {
                    let l = l.trim();
                    let v = l.strip_prefix("mok_certificate=")?;
                    Some(v.trim().trim_matches('"').trim_matches('\'').to_owned())
                })
                .collect::<Vec<_>>()
        })
        .next_back()
        // `$kernelver` and friends are expanded by DKMS, per kernel: not a single file.
        .filter(|v| !v.is_empty() && !v.contains('$'));
    if configured.is_some() {
        return configured;
    }
    if let Some(existing) = [DKMS_DEFAULT_CERT, SHIM_SIGNED_CERT]
        .into_iter()
        .find(|p| root.exists(p))
    {
        return Some(existing.to_owned());
    }
    family.is_apt().then(|| DKMS_DEFAULT_CERT.to_owned())
}
