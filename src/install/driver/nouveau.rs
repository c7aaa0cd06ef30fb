//! nouveau, the kernel's own NVIDIA driver, holds the GPU and blocks NVIDIA's module: it is
//! blacklisted in modprobe.d and the initramfs is rebuilt so that early boot does not load it.

use crate::detect::Root;
use crate::model::system::System;

use super::distro::Family;

/// The file cudaup writes.
pub(crate) const BLACKLIST_FILE: &str = "/etc/modprobe.d/blacklist-nouveau.conf";

/// Its lines.
pub(crate) const BLACKLIST_LINES: [&str; 2] = ["blacklist nouveau", "options nouveau modeset=0"];

/// Commands and notices for nouveau.
#[derive(Debug, Default)]
pub(crate) struct NouveauPlan {
    pub commands: Vec<Vec<String>>,
    pub notices: Vec<String>,
}

/// What to do about nouveau: nothing when it is neither loaded nor shipped with the running
/// kernel, or already blacklisted and not loaded.
pub(crate) fn plan(system: &System, family: Family, root: &Root) -> NouveauPlan {
    let present = system.nouveau_loaded || module_present(system, root);
    if !present {
        return NouveauPlan::default();
    }
    let blacklisted = already_blacklisted(root);
    if blacklisted && !system.nouveau_loaded {
        return NouveauPlan::default();
    }
    let mut out = NouveauPlan::default();
    if !blacklisted {
        let lines: Vec<String> = BLACKLIST_LINES.iter().map(|l| (*l).to_owned()).collect();
        out.commands
            .push(super::write_file_command(BLACKLIST_FILE, &lines));
    }
    let initramfs = match family {
        Family::Ubuntu | Family::Debian => Some(super::argv(&["sudo", "update-initramfs", "-u"])),
        Family::Rhel | Family::Fedora => Some(super::argv(&["sudo", "dracut", "--force"])),
        Family::Other => None,
    };
    out.commands.extend(initramfs);
    let why = if system.nouveau_loaded {
        "nouveau (the kernel's own NVIDIA driver) is loaded and holds the GPU"
    } else {
        "nouveau (the kernel's own NVIDIA driver) ships with this kernel and would take the GPU at boot"
    };
    out.notices.push(if blacklisted {
        format!("{why}: it is already blacklisted, so the initramfs is rebuilt; the reboot unloads it")
    } else {
        format!(
            "{why}: cudaup blacklists it in {BLACKLIST_FILE} and rebuilds the initramfs; the reboot unloads it"
        )
    });
    out
}

/// Whether the running kernel ships nouveau as a module (modules.dep lists it).
fn module_present(system: &System, root: &Root) -> bool {
    let Some(kernel) = system.os.kernel.as_deref() else {
        return false;
    };
    root.read(format!("/lib/modules/{kernel}/modules.dep"))
        .is_some_and(|dep| {
            dep.lines().filter_map(|l| l.split(':').next()).any(|m| {
                m.rsplit('/')
                    .next()
                    .is_some_and(|f| f.starts_with("nouveau.ko"))
            })
        })
}

/// Whether a modprobe.d file already says `blacklist nouveau`.
fn already_blacklisted(root: &Root) -> bool {
    ["/etc/modprobe.d", "/usr/lib/modprobe.d", "/lib/modprobe.d"]
        .iter()
        .flat_map(|d| root.list(d))
        .filter(|p| p.extension().is_some_and(|e| e == "conf"))
        .filter_map(|p| root.read(&p))
        .any(|text| {
            text.lines().any(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                words.as_slice() == ["blacklist", "nouveau"]
            })
        })
}
