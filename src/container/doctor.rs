//! `cudaup container doctor`: the container checks (ids as in the reference table: `ctk-*`,
//! `cdi-*`, `legacy-daemon-reload-risk`, `selinux-label`, `wsl-engine`, `apt-signed-by-conflict`,
//! `image-needs-newer-driver`, `engine-unreachable`, `enroot-container-cli`), each with its evidence and fix, and the
//! map from an engine's error text to the check that explains it ([`explain_error`]).
//!
//! [`gather`] reads everything once (engines, toolkit, specs, config files); [`check`] is a
//! pure function of it, so tests build each broken state from pictures and recorded answers.

use std::path::PathBuf;

use crate::container::cdi::read::{self, Found};
use crate::container::choice::{Path as Way, SYSTEM_SPEC_DIR};
use crate::container::config::{daemon_json, toolkit_toml};
use crate::container::engine::Kind;
use crate::container::host::{Selinux, LEGACY_HOOK};
use crate::container::toolkit::{self, Installed};
use crate::container::Survey;
use crate::detect::Root;
use crate::model::finding::Diagnosis;
use crate::model::finding::Severity;

/// What the checks look at.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// Host, engines, choices.
    pub survey: Survey,
    /// The toolkit as installed.
    pub toolkit: Installed,
    /// Every spec in the directories the engines read (`/etc/cdi`, `/var/run/cdi`, the
    /// per-user one).
    pub specs: Vec<Found>,
    /// `/etc/nvidia-container-runtime/config.toml`.
    pub system_config: Option<String>,
    /// `$XDG_CONFIG_HOME/nvidia-container-runtime/config.toml`.
    pub user_config: Option<String>,
    /// `/etc/docker/daemon.json`.
    pub daemon_json: Option<String>,
    /// The rootless daemon's `daemon.json`.
    pub user_daemon_json: Option<String>,
    /// enroot and pyxis (Slurm clusters), which reach the GPUs through `nvidia-container-cli`
    /// whatever CDI does.
    pub enroot: Enroot,
}

/// enroot, pyxis and the program their GPU hook runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Enroot {
    /// What shows enroot is here: its program on `PATH`, or its NVIDIA hook.
    pub found: Option<String>,
    /// What shows pyxis is here (a Slurm plugstack line loading `spank_pyxis.so`).
    pub pyxis: Option<String>,
    /// `nvidia-container-cli` on `PATH` (libnvidia-container-tools).
    pub container_cli: Option<PathBuf>,
}

/// enroot's NVIDIA hook: it runs `nvidia-container-cli configure` for every container that asks
/// for GPUs (NVIDIA/enroot conf/hooks/98-nvidia.sh).
const ENROOT_HOOK: &str = "/etc/enroot/hooks.d/98-nvidia.sh";

/// Slurm's plugstack files, where pyxis is loaded (`required /usr/lib/slurm/spank_pyxis.so`).
const PLUGSTACK: &str = "/etc/slurm/plugstack.conf";

impl Enroot {
    /// Looks for enroot (on `path_entries`, or its hook under `root`), pyxis (Slurm's
    /// plugstack), and `nvidia-container-cli`.
    pub fn probe(root: &Root, path_entries: &[PathBuf]) -> Enroot {
        let found = toolkit::on_path(path_entries, "enroot")
            .map(|p| format!("{} on PATH", p.display()))
            .or_else(|| {
                root.exists(ENROOT_HOOK)
                    .then(|| format!("{ENROOT_HOOK} exists"))
            });
        let mut plugstack: Vec<PathBuf> = vec![PLUGSTACK.into()];
        plugstack.extend(root.list(format!("{PLUGSTACK}.d")));
        let pyxis = plugstack.iter().find_map(|f| {
            let text = root.read(f)?;
            text.lines()
                .map(str::trim)
                .find(|l| !l.starts_with('#') && l.contains("spank_pyxis.so"))
                .map(|l| format!("{}: {l}", f.display()))
        });
        Enroot {
            found,
            pyxis,
            container_cli: toolkit::on_path(path_entries, "nvidia-container-cli"),
        }
    }
}

/// Reads the inputs. `config_home` is `$XDG_CONFIG_HOME` (else `~/.config`).
pub fn gather(
    root: &Root,
    survey: Survey,
    toolkit: Installed,
    config_home: Option<PathBuf>,
    path_entries: &[PathBuf],
) -> Inputs {
    let mut dirs: Vec<PathBuf> = vec![SYSTEM_SPEC_DIR.into(), "/var/run/cdi".into()];
    let mut specs = read::scan(root, &dirs);
    // The per-user directory is the user's own, not under the picture.
    let user = Root::live();
    if survey.user_spec_dir.is_dir() {
        dirs.push(survey.user_spec_dir.clone());
        specs.extend(read::scan(
            &user,
            std::slice::from_ref(&survey.user_spec_dir),
        ));
    }
    let user_file = |rel: &str| {
        config_home.as_ref().and_then(|c| {
            crate::world::fs::read_regular_text(&c.join(rel), crate::container::setup::MAX_CONFIG)
                .ok()
        })
    };
    Inputs {
        toolkit,
        specs,
        system_config: root.read("/etc/nvidia-container-runtime/config.toml"),
        user_config: user_file("nvidia-container-runtime/config.toml"),
        daemon_json: root.read("/etc/docker/daemon.json"),
        user_daemon_json: user_file("docker/daemon.json"),
        enroot: Enroot::probe(root, path_entries),
        survey,
    }
}

/// Gathers the inputs for this process (its `PATH`, `$XDG_CONFIG_HOME`) and runs the checks.
pub fn for_process(
    root: &Root,
    process: &crate::world::process::Process,
    runner: &dyn crate::world::runner::Runner,
    cudaup_home: &std::path::Path,
) -> Vec<Diagnosis> {
    let inputs = crate::container::Inputs {
        root,
        path_entries: process.path_entries(),
        xdg_runtime_dir: process.path_var("XDG_RUNTIME_DIR"),
        cudaup_home,
    };
    let survey = crate::container::survey(&inputs, runner);
    let facts = toolkit::facts();
    let toolkit = toolkit::probe(runner, &facts, &process.path_entries());
    let config_home = process
        .path_var("XDG_CONFIG_HOME")
        .or_else(|| process.home().map(|h| h.join(".config")));
    check(&gather(
        root,
        survey,
        toolkit,
        config_home,
        &process.path_entries(),
    ))
}

/// Whether containers are set up for GPUs here at all — cudaup's container receipt, an NVIDIA
/// CDI spec, or the toolkit's `nvidia-ctk` — so `cudaup doctor` checks them only then (a
/// machine whose engines were never meant for GPUs gets no container findings).
pub fn in_use(
    root: &Root,
    process: &crate::world::process::Process,
    cudaup_home: &std::path::Path,
) -> bool {
    crate::install::host_files::Receipt::path(cudaup_home).is_file()
        || read::scan(root, &[SYSTEM_SPEC_DIR.into(), "/var/run/cdi".into()])
            .iter()
            .any(|s| s.kind.as_deref() == Some(crate::container::cdi::KIND))
        || toolkit::on_path(&process.path_entries(), "nvidia-ctk").is_some()
}

/// Runs every check.
pub fn check(i: &Inputs) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let facts = toolkit::facts();
    let host = &i.survey.host;
    let legacy: Vec<&crate::container::Choice> = i
        .survey
        .choices
        .iter()
        .filter(|c| matches!(c.path, Way::Legacy { .. }))
        .collect();
    let cdi: Vec<&crate::container::Choice> = i
        .survey
        .choices
        .iter()
        .filter(|c| matches!(c.path, Way::Cdi { .. }))
        .collect();

    for e in &i.survey.engines {
        if let Some(why) = &e.unreachable {
            out.push(
                Diagnosis::new(
                    "engine-unreachable",
                    Severity::Warning,
                    format!("{} is installed but did not answer", e.label()),
                )
                .evidence(format!("{} info: {why}", e.program.display()))
                .fix(match e.kind {
                    Kind::Docker if e.rootless => "systemctl --user start docker",
                    Kind::Docker => "sudo systemctl start docker",
                    Kind::Podman => {
                        "podman system migrate   # then run podman info to see the error"
                    }
                }),
            );
        }
    }

    // Toolkit.
    let version = i.toolkit.version();
    if !legacy.is_empty() && !i.toolkit.any() {
        out.push(
            Diagnosis::new(
                "ctk-missing",
                Severity::Error,
                format!(
                    "{} needs the NVIDIA Container Toolkit's runtime, which is not installed",
                    legacy
                        .iter()
                        .map(|c| c.engine.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .evidence("nvidia-ctk is not on PATH and none of the four packages is installed")
            .fix(format!(
                "sudo cudaup container setup --toolkit --yes   # installs {} pinned",
                facts.install
            )),
        );
    }
    if i.toolkit.skewed() {
        let mut d = Diagnosis::new(
            "ctk-version-skew",
            Severity::Warning,
            "the toolkit's four packages are not of one version",
        );
        for (p, v) in &i.toolkit.packages {
            d = d.evidence(format!("{p} {v}"));
        }
        out.push(d.fix("sudo cudaup container setup --toolkit --yes   # reinstalls the pinned set (install-guide.md)"));
    }
    if let Some(v) = &version {
        let open = facts.open_cves(v);
        if let Some(top) = open.first() {
            let mut d = Diagnosis::new(
                "ctk-cve",
                Severity::Error,
                format!("NVIDIA Container Toolkit {v} is below {}: a malicious image can escape to the host", facts.minimum()),
            );
            for f in &open {
                d = d.evidence(format!("below {}: {} — {}", f.below, f.cves, f.source));
            }
            let _ = top;
            out.push(d.fix(format!(
                "sudo cudaup container setup --toolkit --yes   # upgrades to {}",
                facts.install
            )));
        }
    }

    // Docker's runtime registration, on the legacy path.
    for c in &legacy {
        let Some(e) = i.survey.engines.iter().find(|e| e.label() == c.engine) else {
            continue;
        };
        if e.kind == Kind::Docker && !e.has_nvidia_runtime() {
            let file = if e.rootless {
                &i.user_daemon_json
            } else {
                &i.daemon_json
            };
            let configured = file
                .as_deref()
                .is_some_and(|t| daemon_json::read(t).nvidia_runtime);
            out.push(
                Diagnosis::new(
                    "ctk-runtime-unregistered",
                    Severity::Error,
                    format!("{} has no `nvidia` runtime: `--gpus all` fails with \"could not select device driver \"\" with capabilities: [[gpu]]\"", e.label()),
                )
                .evidence(format!("docker info Runtimes: {}", e.runtimes.join(", ")))
                .evidence(if configured {
                    "daemon.json registers it: the daemon was not restarted since".to_owned()
                } else {
                    "daemon.json does not register it".to_owned()
                })
                .fix(if configured {
                    if e.rootless { "systemctl --user restart docker" } else { "sudo systemctl restart docker" }.to_owned()
                } else {
                    "cudaup container setup --engine docker".to_owned()
                }),
            );
        }
        if let Way::Legacy { no_cgroups } = c.path {
            let effective = |t: &Option<String>| {
                t.as_deref()
                    .and_then(toolkit_toml::no_cgroups)
                    .unwrap_or(false)
            };
            let value = if e.rootless && i.user_config.is_some() {
                effective(&i.user_config)
            } else {
                effective(&i.system_config)
            };
            if value != no_cgroups {
                out.push(
                    Diagnosis::new(
                        "ctk-rootless-cgroups",
                        Severity::Error,
                        if no_cgroups {
                            format!("{} is rootless but the toolkit manages cgroups: containers fail with \"unable to find any existing device filters\"", e.label())
                        } else {
                            format!("{} is rootful but the toolkit's no-cgroups = true: device cgroups are not applied", e.label())
                        },
                    )
                    .evidence(format!("no-cgroups = {value} (toolkit #85, libnvidia-container #207)"))
                    .fix(if no_cgroups {
                        "cudaup container setup   # writes no-cgroups = true in $XDG_CONFIG_HOME/nvidia-container-runtime/config.toml, for this user alone"
                    } else {
                        "sudo nvidia-ctk config --set nvidia-container-cli.no-cgroups=false --in-place"
                    }),
                );
            }
        }
        if e.cgroup_driver.as_deref() == Some("systemd") {
            out.push(
                Diagnosis::new(
                    "legacy-daemon-reload-risk",
                    Severity::Warning,
                    format!("{} uses the legacy runtime with the systemd cgroup driver: `systemctl daemon-reload` drops GPU access in running containers (\"Failed to initialize NVML: Unknown Error\")", e.label()),
                )
                .evidence(format!("cgroup driver systemd; /dev/char/195:* links {}", if host.dev_char_links { "present" } else { "absent" }))
                .fix("upgrade the engine and use CDI (`cudaup container setup`), or `sudo nvidia-ctk system create-dev-char-symlinks --create-all` (toolkit #48)"),
            );
        }
        out.push(
            Diagnosis::new(
                "cdi-engine-too-old",
                Severity::Warning,
                format!("{} cannot use CDI (Docker 25+, Podman 4.1+)", e.label()),
            )
            .evidence(format!("{} {}", e.kind.program(), e.version.as_deref().unwrap_or("?")))
            .fix(format!(
                "upgrade the engine{}, or set `nvidia-ctk config --in-place --set nvidia-container-runtime.mode=cdi` to have the runtime use CDI",
                e.kind
                    .cdi_packages_hint(e.version.as_deref().unwrap_or(""))
                    .map(|h| format!(" ({h})"))
                    .unwrap_or_default()
            )),
        );
    }

    // CDI specs.
    let nvidia_specs: Vec<&Found> = i
        .specs
        .iter()
        .filter(|s| {
            s.kind.as_deref() == Some(crate::container::cdi::KIND) || s.unreadable.is_some()
        })
        .collect();
    if !cdi.is_empty() {
        let readable: Vec<&&Found> = nvidia_specs
            .iter()
            .filter(|s| s.unreadable.is_none())
            .collect();
        if readable.is_empty() {
            let mut d = Diagnosis::new(
                "cdi-spec-missing",
                Severity::Error,
                "no NVIDIA CDI spec where the engines look: `--device nvidia.com/gpu=all` fails with \"unresolvable CDI devices nvidia.com/gpu=all\"",
            );
            for c in &cdi {
                if let Way::Cdi { spec_dir, .. } = &c.path {
                    d = d.evidence(format!(
                        "{} reads {}: no spec of kind nvidia.com/gpu",
                        c.engine,
                        spec_dir.display()
                    ));
                }
            }
            out.push(d.fix("cudaup container setup"));
        }
        let rootless = cdi.iter().any(|c| c.rootless);
        for s in &nvidia_specs {
            if let Some(why) = &s.unreadable {
                out.push(
                    Diagnosis::new(
                        "cdi-spec-unreadable",
                        Severity::Error,
                        format!("{} cannot be read as a CDI spec", s.path.display()),
                    )
                    .evidence(why.clone())
                    .fix("cudaup container setup   # writes a fresh spec"),
                );
            } else if rootless && !s.world_readable() {
                out.push(
                    Diagnosis::new("cdi-spec-unreadable", Severity::Error, format!("{} is not readable by other users: rootless engines cannot load it (toolkit #146)", s.path.display()))
                        .evidence(format!("mode {:o}", s.mode.unwrap_or(0)))
                        .fix(format!("sudo chmod 644 {}", s.path.display())),
                );
            }
        }
        for s in readable {
            let mut stale = Vec::new();
            if let (Some(spec), Some(loaded)) = (&s.driver_version, &host.driver_version) {
                if spec != loaded {
                    stale.push(format!("the spec mounts driver {spec}'s libraries; the loaded driver is {loaded} (/proc/driver/nvidia/version)"));
                }
            }
            for n in &s.numbers {
                if let Some(host) = n.host.filter(|h| *h != n.spec) {
                    stale.push(format!(
                        "device node {} is {}:{} on the host, the spec gives containers {}:{} (the module was loaded again with another number: `nvidia-smi` may work while cuInit fails)",
                        n.path.display(),
                        host.0,
                        host.1,
                        n.spec.0,
                        n.spec.1
                    ));
                }
            }
            for n in &s.device_nodes {
                if !n.exists() {
                    stale.push(format!(
                        "device node {} is gone (\"failed to stat CDI host device\", toolkit #885)",
                        n.display()
                    ));
                }
            }
            if !stale.is_empty() {
                let mut d = Diagnosis::new(
                    "cdi-spec-stale",
                    Severity::Error,
                    format!(
                        "{} does not describe this driver any more",
                        s.path.display()
                    ),
                );
                for l in stale {
                    d = d.evidence(l);
                }
                out.push(d.fix(if s.path.file_name().is_some_and(|n| n == crate::container::cdi::FILE_NAME) {
                    "cudaup container setup   # regenerates it".to_owned()
                } else {
                    format!("sudo nvidia-ctk cdi generate --output={}   # and `systemctl enable --now nvidia-cdi-refresh.path` (toolkit 1.18+)", s.path.display())
                }));
            }
        }
        // Podman 4 reads CDI specs up to 0.6: a 0.7 spec (the toolkit's default from 1.19.1)
        // fails to load, and its devices are "unresolvable" (toolkit #1940, #1860).
        let old_podman: Vec<&crate::container::Engine> = cdi
            .iter()
            .filter_map(|c| i.survey.engines.iter().find(|e| e.label() == c.engine))
            .filter(|e| e.kind == Kind::Podman)
            .filter(|e| {
                e.version
                    .as_deref()
                    .and_then(crate::model::version::Version::parse)
                    .is_some_and(|v| v.major() < 5)
            })
            .collect();
        let too_new: Vec<&&Found> = nvidia_specs
            .iter()
            .filter(|s| {
                s.cdi_version
                    .as_deref()
                    .and_then(crate::model::version::Version::parse)
                    .is_some_and(|v| (v.major(), v.minor()) >= (0, 7))
            })
            .collect();
        if !old_podman.is_empty() && !too_new.is_empty() {
            let mut d = Diagnosis::new(
                "cdi-spec-too-new",
                Severity::Error,
                format!(
                    "{} cannot read a CDI {} spec: `--device nvidia.com/gpu=…` fails with \"unresolvable CDI devices\" (NVIDIA Container Toolkit 1.19.1+ writes 0.7.0)",
                    old_podman.iter().map(|e| e.label()).collect::<Vec<_>>().join(", "),
                    too_new[0].cdi_version.as_deref().unwrap_or("0.7")
                ),
            );
            for e in &old_podman {
                d = d.evidence(format!("podman {}", e.version.as_deref().unwrap_or("?")));
            }
            for s in &too_new {
                d = d.evidence(format!(
                    "{}: cdiVersion {}",
                    s.path.display(),
                    s.cdi_version.as_deref().unwrap_or("?")
                ));
            }
            out.push(
                d.evidence("https://github.com/NVIDIA/nvidia-container-toolkit/issues/1940 (Podman 4.9.3 with toolkit 1.19.1: unresolvable CDI devices; 5.7.0 works); https://github.com/NVIDIA/nvidia-container-toolkit/issues/1860 (\"unknown field additionalGids\")")
                    .fix(format!(
                        "upgrade Podman to 5 or newer; or remove {} and run `cudaup container setup` (its spec is CDI 0.5.0, which Podman 4.1+ reads)",
                        too_new.iter().map(|s| s.path.display().to_string()).collect::<Vec<_>>().join(" ")
                    )),
            );
        }
        if host.legacy_hook {
            out.push(
                Diagnosis::new("cdi-legacy-conflict", Severity::Warning, "CDI is in use and the legacy OCI hook is installed: both may act on one container")
                    .evidence(format!("{LEGACY_HOOK} exists"))
                    .fix(format!("sudo rm {LEGACY_HOOK}   # cdi-support.md")),
            );
        }
    }

    // enroot / pyxis: their GPU hook runs nvidia-container-cli, CDI or not.
    if let Some(found) = &i.enroot.found {
        let mut evidence = vec![found.clone()];
        evidence.extend(
            i.enroot
                .pyxis
                .iter()
                .map(|p| format!("pyxis (Slurm) runs containers through enroot: {p}")),
        );
        let d = match &i.enroot.container_cli {
            None => {
                let mut d = Diagnosis::new(
                    "enroot-container-cli",
                    Severity::Error,
                    "enroot is here but nvidia-container-cli is not: GPU containers (`enroot start`, `srun --container-image`) fail with \"Command not found: nvidia-container-cli\" — a CDI spec does not replace it",
                );
                for e in evidence {
                    d = d.evidence(e);
                }
                d.evidence("enroot's 98-nvidia.sh hook runs `nvidia-container-cli configure` (https://github.com/NVIDIA/enroot/blob/master/conf/hooks/98-nvidia.sh)")
                    .fix(format!(
                        "sudo cudaup container setup --toolkit --yes   # installs libnvidia-container-tools {} with the toolkit",
                        facts.install
                    ))
            }
            Some(cli) => {
                let mut d = Diagnosis::new(
                    "enroot-container-cli",
                    Severity::Info,
                    "enroot reaches the GPUs through nvidia-container-cli, not CDI: the toolkit's security floor applies to it",
                );
                for e in evidence {
                    d = d.evidence(e);
                }
                d.evidence(format!("{} on PATH", cli.display()))
                    .fix("keep the toolkit current (`cudaup container doctor` flags one below its CVE floor)")
            }
        };
        out.push(d);
    }

    // SELinux.
    let selinux_engines: Vec<&crate::container::Engine> =
        i.survey.engines.iter().filter(|e| e.selinux).collect();
    if host.selinux == Selinux::Enforcing || !selinux_engines.is_empty() {
        out.push(
            Diagnosis::new("selinux-label", Severity::Info, "SELinux labels containers: opening the GPU needs `--security-opt=label=disable` (else \"Failed to initialize NVML: Insufficient Permissions\")")
                .evidence(format!("SELinux {:?}; engines labelling: {}", host.selinux, selinux_engines.iter().map(|e| e.label()).collect::<Vec<_>>().join(", ")))
                .fix("run GPU containers with --security-opt=label=disable (it turns labelling off for that container only); cudaup's run lines include it"),
        );
    }

    // WSL.
    if let Some(w) = &host.wsl {
        let mut problems = Vec::new();
        if w.version == 1 {
            problems.push(("WSL1 has no GPU: \"WSL environment detected but no adapters were found\" (toolkit #155)".to_owned(), "wsl --set-version <distro> 2   # from Windows".to_owned()));
        } else {
            if !w.dxg {
                problems.push((
                    "/dev/dxg is missing: no Windows GPU driver, or GPU paravirtualisation is off"
                        .to_owned(),
                    "install the NVIDIA driver on Windows, then `wsl --shutdown`".to_owned(),
                ));
            }
            if !w.libdxcore {
                problems.push(("/usr/lib/wsl/lib/libdxcore.so is missing: NVML reports N/A in containers (toolkit #1739)".to_owned(), "update WSL (`wsl --update` from Windows)".to_owned()));
            }
            if !w.linux_driver_libraries.is_empty() {
                problems.push((
                    format!("Linux driver libraries inside WSL shadow /usr/lib/wsl/lib (\"libnvidia-ml.so.1: file exists\", toolkit #289): {}", w.linux_driver_libraries.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")),
                    "sudo apt-get remove --purge 'libnvidia-compute-*'   # never a Linux driver inside WSL".to_owned(),
                ));
            }
        }
        for (why, fix) in problems {
            out.push(
                Diagnosis::new("wsl-engine", Severity::Error, why.clone())
                    .evidence(format!("WSL{}", w.version))
                    .fix(fix),
            );
        }
    }

    if !host.stale_apt_lists.is_empty() {
        let mut d = Diagnosis::new("apt-signed-by-conflict", Severity::Warning, "old NVIDIA apt lists make `apt update` fail with \"Conflicting values set for option Signed-By\"");
        for l in &host.stale_apt_lists {
            d = d.evidence(format!("{} exists", l.display()));
        }
        out.push(d.fix(format!(
                "sudo rm {}   # `cudaup container setup --toolkit` removes them with a receipt",
                host.stale_apt_lists
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            )));
    }
    out.sort_by_key(|d| std::cmp::Reverse(d.severity()));
    out
}

/// The check that explains an engine's error text (what `docker run` or `podman run` printed).
pub fn explain_error(text: &str) -> Option<&'static str> {
    const MAP: [(&str, &str); 14] = [
        ("could not select device driver", "ctk-runtime-unregistered"),
        ("unresolvable CDI devices", "cdi-spec-missing"),
        ("failed to stat CDI host device", "cdi-spec-stale"),
        (
            "unable to find any existing device filters",
            "ctk-rootless-cgroups",
        ),
        ("devices.allow: permission denied", "ctk-rootless-cgroups"),
        (
            "Failed to initialize NVML: Unknown Error",
            "legacy-daemon-reload-risk",
        ),
        ("unsatisfied condition: cuda", "image-needs-newer-driver"),
        (
            "WSL environment detected but no adapters were found",
            "wsl-engine",
        ),
        ("libnvidia-ml.so.1: file exists", "wsl-engine"),
        ("Insufficient Permissions", "selinux-label"),
        (
            "Conflicting values set for option Signed-By",
            "apt-signed-by-conflict",
        ),
        ("couldn't find libnvidia-ml.so", "container-libs-injected"),
        ("Cannot connect to the Docker daemon", "engine-unreachable"),
        ("error parsing CDI spec", "cdi-spec-unreadable"),
    ];
    MAP.iter()
        .find(|(needle, _)| text.contains(needle))
        .map(|(_, id)| *id)
}

#[cfg(test)]
mod tests;
