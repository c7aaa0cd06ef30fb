//! `cudaup container setup`: from the [`Survey`], the files to write (each undoable through
//! [`super::edit`]) and the commands to run (with consent), then doing them.
//!
//! System paths (`/etc/cdi`, `/etc/docker/daemon.json`, the toolkit's config, apt lists) are
//! written under `prefix` when one is given (tests, images being built); per-user paths
//! (`$XDG_CONFIG_HOME`, `$CUDAUP_HOME`) come from the environment as they are.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::cdi::{self, generate::Generated};
use super::choice::{self, Path as Way};
use super::config::{containers_conf, daemon_json, toolkit_toml, ConfigError};
use super::engine::Kind;
use super::toolkit;
use super::toolkit_install;
use super::Survey;
use crate::detect::Root;
use crate::model::version::Version;

mod apply;
pub use apply::{apply, Applied};

/// What setup needs besides the survey.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    /// Where system paths are written (`None`: `/`).
    pub prefix: Option<&'a Path>,
    /// Where the driver's files are read for the spec.
    pub driver_root: &'a Root,
    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    pub config_home: PathBuf,
    /// Install (or upgrade) the NVIDIA Container Toolkit from NVIDIA's repository.
    pub install_toolkit: bool,
    /// Only this engine.
    pub only: Option<Kind>,
    /// The toolkit as installed now.
    pub toolkit: toolkit::Installed,
    /// The package family, for toolkit commands.
    pub family: Option<toolkit::Family>,
}

impl<'a> Options<'a> {
    /// The options for this process's host: the config directory from `$XDG_CONFIG_HOME` (else
    /// `~/.config`), the toolkit as `runner` finds it on `PATH`, and the package family of
    /// `host_root`'s os-release.
    pub fn for_host(
        process: &crate::world::process::Process,
        runner: &dyn crate::world::runner::Runner,
        host_root: &Root,
        driver_root: &'a Root,
        prefix: Option<&'a Path>,
    ) -> Result<Self, SetupError> {
        let config_home = process
            .path_var("XDG_CONFIG_HOME")
            .or_else(|| process.home().map(|h| h.join(".config")))
            .ok_or(SetupError::NoConfigHome)?;
        Ok(Self {
            prefix,
            driver_root,
            config_home,
            install_toolkit: false,
            only: None,
            toolkit: toolkit::probe(runner, &toolkit::facts(), &process.path_entries()),
            family: toolkit::family(host_root),
        })
    }
}

/// One file to write.
#[derive(Debug, Clone, Serialize)]
pub struct Edit {
    /// Where it is written.
    pub path: PathBuf,
    /// What for.
    pub what: String,
    /// The new bytes (`None`: the file is removed).
    #[serde(skip)]
    pub bytes: Option<Vec<u8>>,
    /// Whether writing it needs root (a system path, no prefix, not root).
    pub needs_root: bool,
}

/// What setup will do.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Plan {
    /// Files, in order.
    pub edits: Vec<Edit>,
    /// Commands, in order (run only with consent).
    pub commands: Vec<Vec<String>>,
    /// Lines to read first.
    pub notices: Vec<String>,
    /// The driver the spec is made for.
    pub driver_version: Option<String>,
    /// How to run a GPU container afterwards, per engine.
    pub run_lines: Vec<String>,
    /// The toolkit's install, when one is planned: with consent its files are written and its
    /// commands (the first of [`Plan::commands`]) run; without, [`Plan::by_hand`] prints NVIDIA's
    /// guide instead.
    pub toolkit: Option<toolkit_install::Install>,
    /// Whether writing the toolkit's repository files needs root.
    #[serde(skip)]
    pub toolkit_needs_root: bool,
}

impl Plan {
    /// The files only root may write: the edits', and with `run_commands` the toolkit's
    /// repository files too.
    pub fn root_needed(&self, run_commands: bool) -> Vec<&Path> {
        let mut out: Vec<&Path> = self
            .edits
            .iter()
            .filter(|e| e.needs_root)
            .map(|e| e.path.as_path())
            .collect();
        if let Some(t) = self
            .toolkit
            .as_ref()
            .filter(|_| run_commands && self.toolkit_needs_root)
        {
            out.extend(t.key.iter().map(|k| k.keyring.as_path()));
            out.extend(t.repo_file.iter().map(|r| r.path.as_path()));
        }
        out
    }

    /// The commands a person runs instead of `--yes`: NVIDIA's guide for the toolkit (which sets
    /// the repository up itself), then the rest.
    pub fn by_hand(&self) -> Vec<Vec<String>> {
        match &self.toolkit {
            None => self.commands.clone(),
            Some(t) => t
                .by_hand
                .iter()
                .chain(self.commands.iter().skip(t.commands.len()))
                .cloned()
                .collect(),
        }
    }
}

/// Why setup cannot plan.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The spec could not be generated.
    #[error(transparent)]
    Spec(#[from] cdi::generate::GenerateError),
    /// A config file cannot be edited.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Neither `$XDG_CONFIG_HOME` nor `$HOME` says where the per-user configs are.
    #[error("cannot tell the config directory: set HOME or XDG_CONFIG_HOME")]
    NoConfigHome,
    /// No engine to set up.
    #[error("no container engine answered here{0}: install Podman (`apt-get install podman`, no daemon and no root needed) or start Docker, then run setup again")]
    NoEngine(String),
    /// A file setup must read or write is not one it can take: a FIFO, a device, a directory, a
    /// file past the size of any real config, text that is not UTF-8, or a path whose links
    /// lead out of `--root-prefix`.
    #[error("{path}: {message}; nothing was changed", path = .path.display())]
    File {
        /// The path.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The legacy path needs the toolkit, which is not installed and was not asked for.
    #[error("{engine} predates CDI and needs the NVIDIA Container Toolkit's `nvidia` runtime, which is not installed: upgrade the engine (Docker 25+, Podman 4.1+), or run `cudaup container setup --toolkit` to install the toolkit {version} from NVIDIA's repository")]
    ToolkitNeeded {
        /// The engine.
        engine: String,
        /// The release that would be installed.
        version: String,
    },
}

/// A pure edit of a config file's text: the new text, or `None` when nothing changes.
type EditFn<'a> = dyn Fn(Option<&str>) -> Result<Option<String>, ConfigError> + 'a;

/// The most a config file or a spec cudaup edits may hold (real ones are a few KiB).
pub const MAX_CONFIG: u64 = 1 << 20;

/// The text of the config file at `path`: `None` when there is none; an error for anything that
/// is not a regular UTF-8 file of a config's size (read without blocking on a FIFO, and never
/// more than one byte past the cap of a `/dev/zero`).
fn read_text(path: &Path) -> Result<Option<String>, SetupError> {
    match crate::world::fs::read_regular_text(path, MAX_CONFIG) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(SetupError::File {
            path: path.to_owned(),
            message: e.to_string(),
        }),
    }
}

/// Where the system path `p` lies: under `prefix` (an image's rootfs, a test's tree) with every
/// link in it followed as that tree's own (an absolute target is the prefix's `/`, `..` stops
/// at its top), so no link there leads a write out of it; `p` itself without a prefix.
fn system_path(prefix: Option<&Path>, p: &str) -> Result<PathBuf, SetupError> {
    match prefix {
        None => Ok(PathBuf::from(p)),
        Some(prefix) => Root::at(prefix)
            .resolve(Path::new(p))
            .filter(|resolved| resolved.starts_with(prefix))
            .ok_or_else(|| SetupError::File {
                path: prefix.join(p.trim_start_matches('/')),
                message: "too many levels of symbolic links under --root-prefix".into(),
            }),
    }
}

/// Works out the plan.
pub fn plan(survey: &Survey, opts: &Options<'_>) -> Result<Plan, SetupError> {
    let mut plan = Plan::default();
    let sys = |p: &str| system_path(opts.prefix, p);
    let needs_root = |system: bool| system && opts.prefix.is_none() && !survey.host.root;
    let sudo = |mut argv: Vec<String>| -> Vec<String> {
        if survey.host.root && argv.first().is_some_and(|a| a == "sudo") {
            argv.remove(0);
        }
        argv
    };
    let facts = toolkit::facts();
    let selected: Vec<(usize, &choice::Choice)> = survey
        .choices
        .iter()
        .enumerate()
        .filter(|(_, c)| opts.only.is_none_or(|k| c.kind == k))
        .filter(|(_, c)| c.path != Way::None)
        .collect();
    if selected.is_empty() {
        let why: Vec<String> = survey
            .choices
            .iter()
            .flat_map(|c| c.reasons.iter().map(move |r| format!("{}: {r}", c.engine)))
            .collect();
        return Err(SetupError::NoEngine(if why.is_empty() {
            String::new()
        } else {
            format!(" ({})", why.join("; "))
        }));
    }
    // Several edits may touch one file (rootful Docker's daemon.json for two reasons): later
    // ones build on the planned bytes.
    let mut planned: Vec<Edit> = Vec::new();
    let edit_text = |planned: &mut Vec<Edit>,
                     path: PathBuf,
                     what: &str,
                     system: bool,
                     f: &EditFn<'_>|
     -> Result<bool, SetupError> {
        let current = match planned.iter().find(|e| e.path == path) {
            Some(e) => e
                .bytes
                .as_ref()
                .map(|b| String::from_utf8_lossy(b).into_owned()),
            None => read_text(&path)?,
        };
        if let Some(new) = f(current.as_deref())? {
            planned.retain(|e| e.path != path);
            planned.push(Edit {
                path,
                what: what.to_owned(),
                bytes: Some(new.into_bytes()),
                needs_root: needs_root(system),
            });
            return Ok(true);
        }
        Ok(false)
    };
    let mut spec: Option<Generated> = None;
    let mut restarts: Vec<Vec<String>> = Vec::new();
    let mut want_toolkit = false;

    for (i, c) in selected {
        let engine = &survey.engines[i];
        match &c.path {
            Way::Cdi {
                spec_dir,
                dir_configured,
                enable_feature,
            } => {
                let generated = match &spec {
                    Some(g) => g.clone(),
                    None => {
                        let g = cdi::generate::generate(opts.driver_root)?;
                        plan.notices.extend(
                            g.skipped
                                .iter()
                                .map(|s| format!("left out of the CDI spec: {s}")),
                        );
                        spec = Some(g.clone());
                        g
                    }
                };
                let system = !dir_configured;
                let file = if system {
                    sys(&spec_dir.join(cdi::FILE_NAME).display().to_string())?
                } else {
                    spec_dir.join(cdi::FILE_NAME)
                };
                let bytes = generated.spec.to_json();
                if read_text(&file)?.as_deref().map(str::as_bytes) != Some(&bytes[..])
                    && !planned.iter().any(|e| e.path == file)
                {
                    planned.push(Edit {
                        path: file,
                        what: format!(
                            "CDI spec of driver {}",
                            generated.driver_version.as_deref().unwrap_or("(WSL)")
                        ),
                        bytes: Some(bytes),
                        needs_root: needs_root(system),
                    });
                }
                if *dir_configured {
                    let d = spec_dir.display().to_string();
                    match c.kind {
                        Kind::Podman => {
                            let conf = opts.config_home.join("containers/containers.conf");
                            let name = conf.display().to_string();
                            edit_text(
                                &mut planned,
                                conf,
                                "Podman reads cudaup's CDI spec directory",
                                false,
                                &|cur| containers_conf::edit(cur, &d, &name),
                            )?;
                        }
                        Kind::Docker => {
                            let conf = opts.config_home.join("docker/daemon.json");
                            let name = conf.display().to_string();
                            let change = daemon_json::Change {
                                cdi_feature: *enable_feature,
                                cdi_spec_dirs: vec![d.clone()],
                                ..Default::default()
                            };
                            let changed = edit_text(
                                &mut planned,
                                conf,
                                "rootless Docker reads cudaup's CDI spec directory",
                                false,
                                &|cur| daemon_json::edit(cur, &change, &name),
                            )?;
                            restarts.extend(changed.then(|| {
                                vec![
                                    "systemctl".into(),
                                    "--user".into(),
                                    "restart".into(),
                                    "docker".into(),
                                ]
                            }));
                        }
                    }
                } else if *enable_feature {
                    let conf = sys("/etc/docker/daemon.json")?;
                    let name = conf.display().to_string();
                    let change = daemon_json::Change {
                        cdi_feature: true,
                        ..Default::default()
                    };
                    let changed =
                        edit_text(&mut planned, conf, "Docker's CDI feature", true, &|cur| {
                            daemon_json::edit(cur, &change, &name)
                        })?;
                    restarts.extend(changed.then(|| {
                        sudo(
                            ["sudo", "systemctl", "restart", "docker"]
                                .map(str::to_owned)
                                .to_vec(),
                        )
                    }));
                }
                if survey.host.legacy_hook {
                    plan.notices.push(format!(
                        "{} is present: the legacy hook and CDI \"can conflict\" (cdi-support.md); the spec sets NVIDIA_VISIBLE_DEVICES=void so the hook stays idle, and removing the file is the clean fix",
                        super::host::LEGACY_HOOK
                    ));
                }
            }
            Way::Legacy { no_cgroups } => {
                if !opts.toolkit.any() && !opts.install_toolkit {
                    return Err(SetupError::ToolkitNeeded {
                        engine: engine.label(),
                        version: facts.install.clone(),
                    });
                }
                want_toolkit = true;
                if c.kind == Kind::Docker {
                    let (conf, system) = if engine.rootless {
                        (opts.config_home.join("docker/daemon.json"), false)
                    } else {
                        (sys("/etc/docker/daemon.json")?, true)
                    };
                    let name = conf.display().to_string();
                    let change = daemon_json::Change {
                        nvidia_runtime: true,
                        ..Default::default()
                    };
                    let changed = edit_text(
                        &mut planned,
                        conf,
                        "Docker's `nvidia` runtime",
                        system,
                        &|cur| daemon_json::edit(cur, &change, &name),
                    )?;
                    restarts.extend(changed.then(|| {
                        if engine.rootless {
                            ["systemctl", "--user", "restart", "docker"]
                                .map(str::to_owned)
                                .to_vec()
                        } else {
                            sudo(
                                ["sudo", "systemctl", "restart", "docker"]
                                    .map(str::to_owned)
                                    .to_vec(),
                            )
                        }
                    }));
                } else {
                    plan.notices.push(format!("{}: Podman before 4.1 reaches the GPUs through the toolkit's OCI hook ({}), which the toolkit package installs; upgrading Podman to get CDI is the better fix", engine.label(), super::host::LEGACY_HOOK));
                }
                if *no_cgroups {
                    let user = opts
                        .config_home
                        .join("nvidia-container-runtime/config.toml");
                    let base = match read_text(&user)? {
                        Some(text) => Some(text),
                        None => read_text(&sys("/etc/nvidia-container-runtime/config.toml")?)?,
                    };
                    let name = user.display().to_string();
                    edit_text(
                        &mut planned,
                        user,
                        "rootless no-cgroups for this user",
                        false,
                        &|cur| {
                            toolkit_toml::set_no_cgroups(cur.or(base.as_deref()), true, &name).map(
                                |r| {
                                    r.or_else(|| {
                                        cur.is_none().then(|| base.clone().unwrap_or_default())
                                    })
                                },
                            )
                        },
                    )?;
                }
                if engine.cgroup_driver.as_deref() == Some("systemd") && !survey.host.dev_char_links
                {
                    restarts.push(sudo(
                        [
                            "sudo",
                            "nvidia-ctk",
                            "system",
                            "create-dev-char-symlinks",
                            "--create-all",
                        ]
                        .map(str::to_owned)
                        .to_vec(),
                    ));
                }
            }
            Way::None => {}
        }
        plan.run_lines.push(format!(
            "{} run --rm {} IMAGE nvidia-smi -L",
            c.kind.program(),
            c.run_flags.join(" ")
        ));
    }

    // The toolkit: installed when the legacy path needs it or when asked, and upgraded when
    // below the CVE floor.
    let installed = opts.toolkit.version();
    if let Some(v) = &installed {
        for f in facts.open_cves(v) {
            plan.notices.push(format!(
                "the installed toolkit {v} is below {}: {} ({}){}",
                f.below,
                f.cves,
                f.source,
                if opts.install_toolkit {
                    "; it is upgraded"
                } else {
                    "; `cudaup container setup --toolkit` upgrades it"
                }
            ));
        }
    }
    let below_floor = installed
        .as_deref()
        .is_some_and(|v| !facts.open_cves(v).is_empty());
    if opts.install_toolkit && (installed.is_none() || below_floor || opts.toolkit.skewed())
        || want_toolkit && installed.is_none()
    {
        match opts.family {
            Some(family) => {
                if family == toolkit::Family::Apt {
                    for list in &survey.host.stale_apt_lists {
                        planned.push(Edit {
                            path: sys(&list.display().to_string())?,
                            what: "old NVIDIA apt list (\"Conflicting values set for option Signed-By\")".to_owned(),
                            bytes: None,
                            needs_root: needs_root(true),
                        });
                    }
                }
                let mut install = toolkit_install::steps(family, &facts, &facts.install);
                install.commands = install.commands.into_iter().map(sudo).collect();
                install.by_hand = install.by_hand.into_iter().map(sudo).collect();
                // Resolved under the prefix, and read now so that a FIFO or a device there is
                // refused before anything is written.
                if let Some(k) = &mut install.key {
                    k.keyring = sys(&k.keyring.display().to_string())?;
                    read_text(&k.keyring)?;
                }
                if let Some(r) = &mut install.repo_file {
                    r.path = sys(&r.path.display().to_string())?;
                    read_text(&r.path)?;
                }
                plan.commands.extend(install.commands.iter().cloned());
                plan.toolkit_needs_root = needs_root(true);
                plan.toolkit = Some(install);
                let writes_0_7 = Version::parse(&facts.install)
                    .zip(Version::parse(&facts.cdi_0_7_from))
                    .is_some_and(|(i, f)| i >= f);
                for e in survey.engines.iter().filter(|e| {
                    e.kind == Kind::Podman
                        && e.version
                            .as_deref()
                            .and_then(Version::parse)
                            .is_some_and(|v| v.major() < 5)
                }) {
                    if writes_0_7 {
                        plan.notices.push(format!(
                            "{}: the toolkit {} writes CDI 0.7.0 specs (its nvidia-cdi-refresh service fills /var/run/cdi/nvidia.yaml), which Podman before 5 cannot load (\"unresolvable CDI devices\", NVIDIA/nvidia-container-toolkit#1940); cudaup's own spec is CDI 0.5.0: keep it, disable nvidia-cdi-refresh.path, or upgrade Podman",
                            e.label(),
                            facts.install
                        ));
                    }
                }
            }
            None => plan.notices.push("NVIDIA publishes the toolkit for apt, dnf and zypper distributions only; this one is none of them".to_owned()),
        }
    }
    plan.commands.extend(restarts);
    plan.edits = planned;
    plan.driver_version = spec.and_then(|g| g.driver_version);
    Ok(plan)
}
