//! Which container engines this user can reach, and what each says about itself.
//!
//! An engine is found by its program on `PATH` and asked `info --format '{{json .}}'`; Docker is
//! asked again at the rootless socket (`$XDG_RUNTIME_DIR/docker.sock`) when that exists. Every
//! answer is parsed by a pure function, so tests feed recorded `info` documents.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::model::version::Version;
use crate::world::runner::Runner;

/// How long `info` may take: a daemon that is down answers at once, a wedged one is named.
const INFO_TIMEOUT: Duration = Duration::from_secs(20);

/// The two engines cudaup configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Docker Engine (moby), through `dockerd`.
    Docker,
    /// Podman, daemonless.
    Podman,
}

impl Kind {
    /// The program's name.
    pub fn program(self) -> &'static str {
        match self {
            Kind::Docker => "docker",
            Kind::Podman => "podman",
        }
    }

    /// The first release that injects CDI devices itself: Docker 25 (`features.cdi`), Podman
    /// 4.1.0 (`engines.toml`, with sources).
    pub fn first_cdi_release(self) -> Version {
        let facts = facts();
        let first = match self {
            Kind::Docker => facts.docker.first_cdi,
            Kind::Podman => facts.podman.first_cdi,
        };
        Version::parse(&first).expect("engines.toml holds versions")
    }

    /// Where a release of this engine with CDI comes from, when the engine here predates it: the
    /// distribution packages that have one, and the one this release is (`engines.toml`).
    pub fn cdi_packages_hint(self, version: &str) -> Option<String> {
        let first = self.first_cdi_release();
        let rows: Vec<Package> = facts()
            .package
            .into_iter()
            .filter(|p| p.engine == self.program())
            .collect();
        let this = rows.iter().find(|p| p.version == version);
        let with: Vec<String> = rows
            .iter()
            .filter(|p| Version::parse(&p.version).is_some_and(|v| v >= first))
            .map(|p| format!("{}'s {} {}", p.distro, p.package, p.version))
            .collect();
        let mut parts = Vec::new();
        if let Some(p) = this {
            parts.push(format!(
                "this is {}'s {} {}",
                p.distro, p.package, p.version
            ));
        }
        if !with.is_empty() {
            parts.push(format!(
                "{} {} CDI{}",
                with.join(" and "),
                if with.len() == 1 { "has" } else { "have" },
                if self == Kind::Docker {
                    " (setup turns `features.cdi` on in daemon.json)"
                } else {
                    ""
                }
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// The engines' facts (`engines.toml`).
#[derive(Debug, Clone, serde::Deserialize)]
struct Facts {
    docker: EngineFacts,
    podman: EngineFacts,
    package: Vec<Package>,
}

#[derive(Debug, Clone, serde::Deserialize)]
struct EngineFacts {
    first_cdi: String,
}

/// One distribution package of an engine (each row's `source` is for people).
#[derive(Debug, Clone, serde::Deserialize)]
struct Package {
    distro: String,
    engine: String,
    package: String,
    version: String,
}

fn facts() -> Facts {
    toml::from_str(include_str!("engines.toml")).expect("engines.toml is valid")
}

/// One engine this user can run containers with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Engine {
    /// Docker or Podman.
    pub kind: Kind,
    /// The program that was asked (`/usr/bin/podman`).
    pub program: PathBuf,
    /// The socket asked (`unix:///run/user/1000/docker.sock`), for a second Docker daemon.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Whether the engine runs without root (rootless Docker's daemon, Podman as a user).
    pub rootless: bool,
    /// The server's version (`28.2.2`, `4.3.1`); `None` when the daemon did not answer.
    pub version: Option<String>,
    /// `1` or `2`, as the engine reports it.
    pub cgroup_version: Option<String>,
    /// `systemd` or `cgroupfs`.
    pub cgroup_driver: Option<String>,
    /// Runtimes the engine knows besides its default (`nvidia`, `runc`).
    pub runtimes: Vec<String>,
    /// The default runtime (`runc`, `crun`, `nvidia`).
    pub default_runtime: Option<String>,
    /// Whether the engine reports SELinux labelling on.
    pub selinux: bool,
    /// The CDI spec directories the engine reports (Docker with `features.cdi` on), empty
    /// when it reports none.
    pub cdi_spec_dirs: Vec<PathBuf>,
    /// Docker Desktop (`OperatingSystem: Docker Desktop`): its own VM, its own GPU path.
    pub desktop: bool,
    /// Why the engine did not answer, in its words (`Cannot connect to the Docker daemon…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreachable: Option<String>,
}

impl Engine {
    /// A name for messages: `rootless Podman 4.3.1`, `Docker 28.2.2`.
    pub fn label(&self) -> String {
        let name = match self.kind {
            Kind::Docker if self.desktop => "Docker Desktop",
            Kind::Docker => "Docker",
            Kind::Podman => "Podman",
        };
        let mode = if self.rootless { "rootless " } else { "" };
        match &self.version {
            Some(v) => format!("{mode}{name} {v}"),
            None => format!("{mode}{name}"),
        }
    }

    /// The parsed server version.
    pub fn parsed_version(&self) -> Option<Version> {
        self.version.as_deref().and_then(Version::parse)
    }

    /// Whether this release can inject CDI devices (`None`: version unknown).
    pub fn release_has_cdi(&self) -> Option<bool> {
        self.parsed_version()
            .map(|v| v >= self.kind.first_cdi_release())
    }

    /// Whether the engine has a runtime named `nvidia` registered.
    pub fn has_nvidia_runtime(&self) -> bool {
        self.runtimes.iter().any(|r| r == "nvidia")
            || self.default_runtime.as_deref() == Some("nvidia")
    }

    /// The arguments that reach this engine (`-H unix://…` for a second Docker daemon).
    pub fn base_args(&self) -> Vec<String> {
        match &self.host {
            Some(h) => vec!["-H".to_owned(), h.clone()],
            None => Vec::new(),
        }
    }
}

/// Finds the engines on `path_entries` and asks each for its `info`. `rootless_docker_socket`
/// is `$XDG_RUNTIME_DIR/docker.sock` when it exists.
pub fn detect(
    runner: &dyn Runner,
    path_entries: &[PathBuf],
    rootless_docker_socket: Option<&Path>,
    euid_is_root: bool,
) -> Vec<Engine> {
    let mut out = Vec::new();
    for kind in [Kind::Docker, Kind::Podman] {
        let Some(program) = path_entries
            .iter()
            .map(|d| d.join(kind.program()))
            .find(|p| p.is_file())
        else {
            continue;
        };
        let mut hosts: Vec<Option<String>> = vec![None];
        if kind == Kind::Docker {
            if let Some(sock) = rootless_docker_socket {
                hosts.push(Some(format!("unix://{}", sock.display())));
            }
        }
        for host in hosts {
            let mut args: Vec<String> = Vec::new();
            if let Some(h) = &host {
                args.extend(["-H".to_owned(), h.clone()]);
            }
            args.extend(["info", "--format", "{{json .}}"].map(str::to_owned));
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            let answer = runner.run(&program, &argv, INFO_TIMEOUT);
            let engine = match answer {
                Ok(o) if o.success() => parse_info(kind, &o.stdout, euid_is_root),
                Ok(o) => Err(first_line(if o.stderr.trim().is_empty() {
                    &o.stdout
                } else {
                    &o.stderr
                })),
                Err(e) => Err(e.to_string()),
            };
            let mut engine = engine.unwrap_or_else(|why| Engine {
                kind,
                program: program.clone(),
                host: None,
                rootless: kind == Kind::Podman && !euid_is_root,
                version: None,
                cgroup_version: None,
                cgroup_driver: None,
                runtimes: Vec::new(),
                default_runtime: None,
                selinux: false,
                cdi_spec_dirs: Vec::new(),
                desktop: false,
                unreachable: Some(why),
            });
            engine.program = program.clone();
            if host.is_some() {
                // The second daemon is the rootless one, whatever it failed to say.
                engine.rootless = true;
                engine.host = host;
            }
            // A rootful Docker that is not running is worth naming only when no rootless one
            // answers; a failed second socket is always named.
            out.push(engine);
        }
    }
    out
}

fn first_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no answer")
        .to_owned()
}

/// Parses `docker info --format '{{json .}}'` or `podman info --format json` (Podman's
/// `{{json .}}` is the same document).
pub fn parse_info(kind: Kind, text: &str, euid_is_root: bool) -> Result<Engine, String> {
    let v: serde_json::Value =
        serde_json::from_str(text.trim()).map_err(|e| format!("unreadable info: {e}"))?;
    let s = |v: &serde_json::Value| v.as_str().map(str::to_owned).filter(|s| !s.is_empty());
    let engine = match kind {
        Kind::Docker => {
            let security: Vec<String> = v["SecurityOptions"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            let has = |name: &str| {
                security
                    .iter()
                    .any(|o| o.split(',').any(|kv| kv == format!("name={name}")))
            };
            let mut runtimes: Vec<String> = v["Runtimes"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            runtimes.sort();
            // `docker info` reports a client-side error in the same document when the daemon
            // is down (`ServerErrors`).
            if let Some(errors) = v["ServerErrors"].as_array().filter(|a| !a.is_empty()) {
                return Err(errors
                    .iter()
                    .filter_map(|e| e.as_str())
                    .collect::<Vec<_>>()
                    .join("; "));
            }
            Engine {
                kind,
                program: PathBuf::new(),
                host: None,
                rootless: has("rootless"),
                version: s(&v["ServerVersion"]),
                cgroup_version: s(&v["CgroupVersion"]),
                cgroup_driver: s(&v["CgroupDriver"]),
                runtimes,
                default_runtime: s(&v["DefaultRuntime"]),
                selinux: has("selinux"),
                cdi_spec_dirs: v["CDISpecDirs"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| x.as_str().map(PathBuf::from))
                            .collect()
                    })
                    .unwrap_or_default(),
                desktop: v["OperatingSystem"]
                    .as_str()
                    .is_some_and(|o| o.contains("Docker Desktop")),
                unreachable: None,
            }
        }
        Kind::Podman => {
            let host = &v["host"];
            let rootless = host["security"]["rootless"]
                .as_bool()
                .unwrap_or(!euid_is_root);
            let mut runtimes: Vec<String> = Vec::new();
            if let Some(name) = s(&host["ociRuntime"]["name"]) {
                runtimes.push(name);
            }
            Engine {
                kind,
                program: PathBuf::new(),
                host: None,
                rootless,
                version: s(&v["version"]["Version"]),
                cgroup_version: s(&host["cgroupVersion"])
                    .map(|c| c.trim_start_matches('v').to_owned()),
                cgroup_driver: s(&host["cgroupManager"]),
                default_runtime: s(&host["ociRuntime"]["name"]),
                runtimes,
                selinux: host["security"]["selinuxEnabled"]
                    .as_bool()
                    .unwrap_or(false),
                cdi_spec_dirs: Vec::new(),
                desktop: false,
                unreachable: None,
            }
        }
    };
    if engine.version.is_none() {
        return Err("info names no server version".to_owned());
    }
    Ok(engine)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Trimmed from Docker 28.2.2's `docker info --format '{{json .}}'` (rootful, Ubuntu 24.04).
    pub(crate) const DOCKER_28: &str = r#"{"ID":"x","Containers":0,"Driver":"overlay2","CgroupDriver":"systemd","CgroupVersion":"2","KernelVersion":"6.8.0-49-generic","OperatingSystem":"Ubuntu 24.04.1 LTS","ServerVersion":"28.2.2","Runtimes":{"io.containerd.runc.v2":{"path":"runc"},"nvidia":{"path":"nvidia-container-runtime"},"runc":{"path":"runc"}},"DefaultRuntime":"runc","SecurityOptions":["name=apparmor","name=seccomp,profile=builtin","name=cgroupns"],"CDISpecDirs":["/etc/cdi","/var/run/cdi"]}"#;

    #[test]
    fn docker_info_is_read() {
        let e = parse_info(Kind::Docker, DOCKER_28, true).unwrap();
        assert_eq!(e.version.as_deref(), Some("28.2.2"));
        assert_eq!(e.cgroup_driver.as_deref(), Some("systemd"));
        assert_eq!(e.cgroup_version.as_deref(), Some("2"));
        assert!(e.has_nvidia_runtime());
        assert!(!e.rootless);
        assert_eq!(
            e.cdi_spec_dirs,
            vec![PathBuf::from("/etc/cdi"), PathBuf::from("/var/run/cdi")]
        );
        assert_eq!(e.release_has_cdi(), Some(true));
    }

    #[test]
    fn rootless_docker_and_selinux_come_from_security_options() {
        let text = r#"{"ServerVersion":"24.0.7","CgroupDriver":"systemd","CgroupVersion":"2","SecurityOptions":["name=seccomp,profile=builtin","name=rootless","name=selinux","name=cgroupns"],"Runtimes":{"runc":{"path":"runc"}}}"#;
        let e = parse_info(Kind::Docker, text, false).unwrap();
        assert!(e.rootless && e.selinux && !e.has_nvidia_runtime());
        assert_eq!(e.release_has_cdi(), Some(false));
    }

    #[test]
    fn a_docker_daemon_that_is_down_is_named_by_its_error() {
        let text = r#"{"ServerErrors":["Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"]}"#;
        let why = parse_info(Kind::Docker, text, true).unwrap_err();
        assert!(why.contains("Cannot connect"), "{why}");
    }

    #[test]
    fn podman_info_is_read() {
        // Trimmed from Podman 4.3.1 (Debian 12) `podman info --format json`, run as a user.
        let text = r#"{"host":{"cgroupManager":"cgroupfs","cgroupVersion":"v1","ociRuntime":{"name":"crun","path":"/usr/bin/crun"},"security":{"rootless":true,"selinuxEnabled":false}},"version":{"Version":"4.3.1"}}"#;
        let e = parse_info(Kind::Podman, text, false).unwrap();
        assert_eq!(e.label(), "rootless Podman 4.3.1");
        assert_eq!(e.cgroup_version.as_deref(), Some("1"));
        assert_eq!(e.release_has_cdi(), Some(true));
        let old = text.replace("4.3.1", "4.0.3");
        let e = parse_info(Kind::Podman, &old, false).unwrap();
        assert_eq!(e.release_has_cdi(), Some(false));
    }
}
