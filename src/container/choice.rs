//! Which way each engine reaches the GPUs, and why: CDI by default (NVIDIA's recommendation for
//! Podman, immune to the `daemon-reload` loss of the legacy hook, the GPU Operator's default
//! since 25.10), the legacy `nvidia` runtime only for engines too old for CDI.

use std::path::PathBuf;

use serde::Serialize;

use super::engine::{Engine, Kind};
use super::host::Host;
use crate::model::version::Version;

/// How an engine gets the GPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "path", rename_all = "kebab-case")]
pub enum Path {
    /// The engine reads a CDI spec and injects the devices itself (`--device nvidia.com/gpu=all`).
    Cdi {
        /// The directory the spec goes in, one this engine reads.
        spec_dir: PathBuf,
        /// Whether that directory must be added to the engine's configuration (rootless
        /// Podman's `containers.conf` `cdi_spec_dirs`, Docker's `cdi-spec-dirs`).
        dir_configured: bool,
        /// Docker ≥ 25 whose `daemon.json` must turn `features.cdi` on (and a restart).
        enable_feature: bool,
    },
    /// The `nvidia` runtime of the NVIDIA Container Toolkit (`--runtime=nvidia --gpus all`).
    Legacy {
        /// Whether `no-cgroups = true` must be set (rootless engines).
        no_cgroups: bool,
    },
    /// Nothing cudaup sets up: the reason says what to do instead.
    None,
}

/// One engine's choice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Choice {
    /// The engine (`rootless Podman 4.3.1`).
    pub engine: String,
    /// Docker or Podman.
    pub kind: Kind,
    /// Rootless.
    pub rootless: bool,
    /// The way chosen.
    #[serde(flatten)]
    pub path: Path,
    /// Why, one reason a line, as `plan` explains its choices.
    pub reasons: Vec<String>,
    /// What a container is started with on this path.
    pub run_flags: Vec<String>,
}

/// Where specs go for engines that read the standard directories. `/etc/cdi` survives a reboot;
/// `/var/run/cdi` is cleared at boot (cdi-support.md), so cudaup writes the first.
pub const SYSTEM_SPEC_DIR: &str = "/etc/cdi";

/// The first Podman that reads extra spec directories (`containers.conf` `[engine]
/// cdi_spec_dirs`, `--cdi-spec-dir`): containers/podman #25717 (2025), which fixed #25691
/// ("cdi_spec_dirs from containers.conf is not respected"). Podman 4.3.1 (Debian 12) ignores the
/// key (tested: its binary does not contain it, and the device stays unresolvable).
pub const PODMAN_USER_SPEC_DIRS: &str = "5.5.0";

/// Chooses for every engine that answered. `user_spec_dir` is the per-user directory
/// (`$CUDAUP_HOME/cdi`) for rootless engines that cannot write `/etc/cdi`.
pub fn choose(engines: &[Engine], host: &Host, user_spec_dir: &std::path::Path) -> Vec<Choice> {
    engines
        .iter()
        .map(|e| choose_one(e, host, user_spec_dir))
        .collect()
}

fn choose_one(e: &Engine, host: &Host, user_spec_dir: &std::path::Path) -> Choice {
    let mut reasons = Vec::new();
    let selinux_flag = (e.selinux || host.selinux == super::host::Selinux::Enforcing)
        .then(|| "--security-opt=label=disable".to_owned());
    let choice = |path: Path, reasons: Vec<String>, mut run_flags: Vec<String>| {
        run_flags.extend(selinux_flag.clone());
        Choice {
            engine: e.label(),
            kind: e.kind,
            rootless: e.rootless,
            path,
            reasons,
            run_flags,
        }
    };
    if let Some(why) = &e.unreachable {
        return choice(
            Path::None,
            vec![format!("{} did not answer `info`: {why}", e.label())],
            Vec::new(),
        );
    }
    if e.desktop {
        return choice(
            Path::None,
            vec!["Docker Desktop runs its own VM and brings its GPU support (Settings → Resources → WSL integration, \"WSL 2 GPU paravirtualization\"): no toolkit or spec belongs in this distro".to_owned()],
            vec!["--gpus=all".to_owned()],
        );
    }
    if let Some(wsl) = &host.wsl {
        if wsl.version == 1 {
            return choice(
                Path::None,
                vec!["WSL1 has no GPU paravirtualisation (\"WSL environment detected but no adapters were found\", toolkit #155): convert the distro with `wsl --set-version <distro> 2`".to_owned()],
                Vec::new(),
            );
        }
    }
    let has_cdi = e.release_has_cdi().unwrap_or(false);
    let version = e.version.clone().unwrap_or_default();
    if has_cdi {
        reasons.push(format!(
            "{} {version} injects CDI devices itself (since {}); CDI is NVIDIA's recommendation for Podman, survives `systemctl daemon-reload` (the legacy hook loses the GPUs then, toolkit #48) and is the GPU Operator's default since 25.10",
            e.kind.program(),
            e.kind.first_cdi_release()
        ));
        let reads_user_dirs = e.kind == Kind::Docker
            || e.parsed_version()
                .is_some_and(|v| v >= Version::parse(PODMAN_USER_SPEC_DIRS).expect("a version"));
        let (spec_dir, dir_configured) = if e.rootless && !host.root && reads_user_dirs {
            reasons.push(format!(
                "rootless and not root: the spec goes in {} (no root needed) and the engine is told to read it",
                user_spec_dir.display()
            ));
            (user_spec_dir.to_path_buf(), true)
        } else if e.rootless && !host.root {
            reasons.push(format!(
                "Podman before {PODMAN_USER_SPEC_DIRS} reads CDI specs from {SYSTEM_SPEC_DIR} and /var/run/cdi only (containers.conf `cdi_spec_dirs` was ignored until podman #25717, which fixed #25691): writing the spec there needs root once, then every rootless container uses it"
            ));
            (PathBuf::from(SYSTEM_SPEC_DIR), false)
        } else {
            reasons.push(format!(
                "the spec goes in {SYSTEM_SPEC_DIR}, which outlives a reboot (/var/run/cdi is cleared at boot)"
            ));
            (PathBuf::from(SYSTEM_SPEC_DIR), false)
        };
        let enable_feature = e.kind == Kind::Docker && e.cdi_spec_dirs.is_empty();
        if enable_feature {
            reasons.push("Docker reports no CDI spec directories: `features.cdi` is turned on in daemon.json, then the daemon restarts".to_owned());
        }
        let device = "--device=nvidia.com/gpu=all".to_owned();
        return choice(
            Path::Cdi {
                spec_dir,
                dir_configured,
                enable_feature,
            },
            reasons,
            vec![device],
        );
    }
    reasons.push(format!(
        "{} {version} predates CDI (needs {}): the toolkit's `nvidia` runtime is registered instead; upgrading the engine is the better fix{}",
        e.kind.program(),
        e.kind.first_cdi_release(),
        e.kind
            .cdi_packages_hint(&version)
            .map(|h| format!(" ({h})"))
            .unwrap_or_default()
    ));
    if e.rootless {
        reasons.push("rootless: the toolkit's `no-cgroups = true` goes in this user's config ($XDG_CONFIG_HOME/nvidia-container-runtime/config.toml), so a rootful engine keeps its own (libnvidia-container #207)".to_owned());
    }
    if e.cgroup_driver.as_deref() == Some("systemd") {
        reasons.push("legacy runtime with the systemd cgroup driver: `systemctl daemon-reload` drops device access in running containers (toolkit #48); `nvidia-ctk system create-dev-char-symlinks --create-all` is run to soften it".to_owned());
    }
    choice(
        Path::Legacy {
            no_cgroups: e.rootless,
        },
        reasons,
        vec!["--runtime=nvidia".to_owned(), "--gpus=all".to_owned()],
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::container::engine::parse_info;
    use crate::container::host::{Cgroups, Selinux};

    pub(crate) fn host(root: bool) -> Host {
        Host {
            cgroups: Cgroups::V2,
            selinux: Selinux::Off,
            wsl: None,
            driver_version: Some("580.95.05".into()),
            root,
            legacy_hook: false,
            dev_char_links: true,
            stale_apt_lists: Vec::new(),
        }
    }

    fn podman(version: &str, rootless: bool) -> Engine {
        let text = format!(
            r#"{{"host":{{"cgroupManager":"systemd","cgroupVersion":"v2","security":{{"rootless":{rootless},"selinuxEnabled":false}}}},"version":{{"Version":"{version}"}}}}"#
        );
        parse_info(Kind::Podman, &text, !rootless).unwrap()
    }

    #[test]
    fn rootless_podman_gets_a_user_spec_dir() {
        let c = &choose(
            &[podman("5.6.1", true)],
            &host(false),
            std::path::Path::new("/home/u/.local/share/cudaup/cdi"),
        )[0];
        assert_eq!(
            c.path,
            Path::Cdi {
                spec_dir: "/home/u/.local/share/cudaup/cdi".into(),
                dir_configured: true,
                enable_feature: false
            }
        );
        assert!(c.reasons.iter().any(|r| r.contains("daemon-reload")));
    }

    #[test]
    fn rootless_podman_before_5_5_needs_etc_cdi() {
        let c = &choose(
            &[podman("4.9.3", true)],
            &host(false),
            std::path::Path::new("/u/cdi"),
        )[0];
        assert!(
            matches!(&c.path, Path::Cdi { spec_dir, dir_configured: false, .. } if spec_dir == std::path::Path::new("/etc/cdi"))
        );
        assert!(c.reasons.iter().any(|r| r.contains("#25691")));
    }

    #[test]
    fn rootful_podman_uses_etc_cdi() {
        let c = &choose(
            &[podman("5.2.0", false)],
            &host(true),
            std::path::Path::new("/x"),
        )[0];
        assert!(
            matches!(&c.path, Path::Cdi { spec_dir, dir_configured: false, .. } if spec_dir == std::path::Path::new("/etc/cdi"))
        );
    }

    #[test]
    fn old_engines_get_the_legacy_runtime() {
        let c = &choose(
            &[podman("4.0.2", true)],
            &host(false),
            std::path::Path::new("/x"),
        )[0];
        assert_eq!(c.path, Path::Legacy { no_cgroups: true });
        let docker = parse_info(
            Kind::Docker,
            r#"{"ServerVersion":"20.10.24","CgroupDriver":"systemd","CgroupVersion":"2","SecurityOptions":[]}"#,
            true,
        )
        .unwrap();
        let c = &choose(&[docker], &host(true), std::path::Path::new("/x"))[0];
        assert_eq!(c.path, Path::Legacy { no_cgroups: false });
        assert!(c.reasons.iter().any(|r| r.contains("#48")));
        assert_eq!(c.run_flags, ["--runtime=nvidia", "--gpus=all"]);
    }

    #[test]
    fn docker_without_the_cdi_feature_turns_it_on() {
        let docker = parse_info(
            Kind::Docker,
            r#"{"ServerVersion":"26.1.4","CgroupDriver":"systemd","CgroupVersion":"2","SecurityOptions":["name=selinux"]}"#,
            true,
        )
        .unwrap();
        let c = &choose(&[docker], &host(true), std::path::Path::new("/x"))[0];
        assert!(matches!(
            c.path,
            Path::Cdi {
                enable_feature: true,
                ..
            }
        ));
        assert!(c
            .run_flags
            .contains(&"--security-opt=label=disable".to_owned()));
    }

    /// Debian's Docker: 12's docker.io 20.10 predates CDI, and the plan says which package has
    /// it; 13's docker.io 26.1 gets CDI with `features.cdi` turned on.
    #[test]
    fn debians_docker_packages_are_named_where_cdi_is_missing() {
        let old = parse_info(
            Kind::Docker,
            r#"{"ServerVersion":"20.10.24+dfsg1","CgroupDriver":"systemd","CgroupVersion":"2","Runtimes":{"runc":{"path":"runc"}},"SecurityOptions":[]}"#,
            true,
        )
        .unwrap();
        let c = &choose(&[old], &host(true), std::path::Path::new("/x"))[0];
        assert!(matches!(c.path, Path::Legacy { .. }));
        let why = c.reasons.join("\n");
        assert!(
            why.contains("this is Debian 12 (bookworm)'s docker.io 20.10.24+dfsg1; Debian 13 (trixie)'s docker.io 26.1.5+dfsg1 has CDI (setup turns `features.cdi` on in daemon.json)"),
            "{why}"
        );
        let new = parse_info(
            Kind::Docker,
            r#"{"ServerVersion":"26.1.5+dfsg1","CgroupDriver":"systemd","CgroupVersion":"2","Runtimes":{"runc":{"path":"runc"}},"SecurityOptions":[]}"#,
            true,
        )
        .unwrap();
        let c = &choose(&[new], &host(true), std::path::Path::new("/x"))[0];
        assert!(matches!(
            c.path,
            Path::Cdi {
                enable_feature: true,
                dir_configured: false,
                ..
            }
        ));
        // A release no row names gets no hint about itself, only where CDI is.
        assert_eq!(
            Kind::Docker.cdi_packages_hint("19.03.15").as_deref(),
            Some("Debian 13 (trixie)'s docker.io 26.1.5+dfsg1 has CDI (setup turns `features.cdi` on in daemon.json)")
        );
        assert_eq!(
            Kind::Podman.cdi_packages_hint("4.0.0").as_deref(),
            Some("Debian 12 (bookworm)'s podman 4.3.1+ds1 has CDI")
        );
        assert_eq!(Kind::Docker.first_cdi_release().to_string(), "25.0.0");
    }
}
