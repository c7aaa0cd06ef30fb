//! The wizard's answers: what it suggests for this machine, what a config file and the
//! environment overlay, and how the answers become `cudaup install` arguments or a saved config.

use std::path::PathBuf;

use crate::cli::i18n::Lang;
use crate::cli::install::{InstallArgs, SourceArgs, SourceKind};
use crate::cli::plan::StackArgs;
use crate::model::request::{DriverPolicy, Pins, Profile};
use crate::model::system::System;
use crate::settings::file::{self as config, Config, DriverChoice, ShellName};
use crate::shell::Shell;
use crate::world::process::Process;

/// Everything the wizard asks for: what `--save` writes and the install runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answers {
    /// The stack.
    pub profile: Profile,
    /// Pinned CUDA version.
    pub cuda: Option<String>,
    /// Pinned cuDNN version.
    pub cudnn: Option<String>,
    /// Pinned PyTorch version.
    pub torch: Option<String>,
    /// Pinned TensorFlow version.
    pub tensorflow: Option<String>,
    /// Pinned Python version.
    pub python: Option<String>,
    /// Driver policy (`keep`, `latest`, a version); `None` is the default policy.
    pub driver: Option<String>,
    /// Toolkit prefix; `None` is `$CUDAUP_HOME/toolkits/cuda-<version>`.
    pub prefix: Option<PathBuf>,
    /// The venv; `None` is `$CUDAUP_HOME/venvs/<profile>`.
    pub venv: Option<PathBuf>,
    /// Leave cuDNN out.
    pub no_cudnn: bool,
    /// The toolkit's components; `None` is the default set.
    pub components: Option<String>,
    /// Run `cudaup verify` afterwards.
    pub verify: bool,
    /// Hook the env script into rc files.
    pub modify_path: bool,
    /// The shell families to hook.
    pub shells: Vec<Shell>,
    /// Redistributable archives or wheels.
    pub source: SourceKind,
    /// A mirror of NVIDIA's layout.
    pub nvidia_mirror: Option<String>,
    /// The index for `source = wheels`.
    pub index_url: Option<String>,
    /// PyPI or a mirror, for the framework.
    pub pypi_index: Option<String>,
    /// PyTorch's index or a mirror.
    pub torch_index: Option<String>,
    /// Which index may serve PyTorch.
    pub torch_source: crate::install::python::route::TorchSource,
    /// Accept plain-http sources.
    pub allow_http: bool,
}

impl Answers {
    /// What the wizard suggests for this machine: `full` with an NVIDIA GPU, else `cpu`; no
    /// pins; NVIDIA's and PyPI's servers; every shell found here hooked; verify afterwards.
    pub fn suggested(process: &Process, system: &System) -> Self {
        Self {
            profile: if system.nvidia_gpus().next().is_some() {
                Profile::Full
            } else {
                Profile::Cpu
            },
            cuda: None,
            cudnn: None,
            torch: None,
            tensorflow: None,
            python: None,
            driver: None,
            prefix: None,
            venv: None,
            no_cudnn: false,
            components: None,
            verify: true,
            modify_path: true,
            shells: crate::cli::env::shells_here(process),
            source: SourceKind::Redist,
            nvidia_mirror: None,
            index_url: None,
            pypi_index: None,
            torch_index: None,
            torch_source: Default::default(),
            allow_http: false,
        }
    }

    /// The starting answers: the suggestions, overlaid with what the config file answers, then
    /// with the sources the environment names (`CUDAUP_MIRROR` and friends), which take
    /// precedence over the file (flags > env > file > defaults, as for `cudaup install`).
    pub fn initial(process: &Process, system: &System, config: Option<&Config>) -> Self {
        let mut a = Self::suggested(process, system);
        if let Some(c) = config {
            a.overlay(c);
        }
        let env = |name: &str| process.var(name).map(str::to_owned);
        if let Some(m) = env("CUDAUP_MIRROR") {
            a.nvidia_mirror = Some(m);
        }
        if let Some(m) = env("CUDAUP_INDEX_URL") {
            a.index_url = Some(m);
        }
        if let Some(m) = env("CUDAUP_PYPI_INDEX") {
            a.pypi_index = Some(m);
        }
        if let Some(m) = env("CUDAUP_TORCH_INDEX") {
            a.torch_index = Some(m);
        }
        if let Some(t) = env(crate::world::vars::CUDAUP_TORCH_SOURCE).and_then(|t| t.parse().ok()) {
            a.torch_source = t;
        }
        a
    }

    /// Takes every answer the config file gives.
    fn overlay(&mut self, c: &Config) {
        if let Some(p) = c.profile {
            self.profile = p;
        }
        let pins = [
            (&mut self.cuda, &c.pins.cuda),
            (&mut self.cudnn, &c.pins.cudnn),
            (&mut self.torch, &c.pins.torch),
            (&mut self.tensorflow, &c.pins.tensorflow),
            (&mut self.python, &c.pins.python),
        ];
        for (mine, theirs) in pins {
            if theirs.is_some() {
                mine.clone_from(theirs);
            }
        }
        if let Some(d) = &c.driver {
            self.driver = match d.policy() {
                DriverPolicy::Auto => None,
                DriverPolicy::Keep => Some("keep".into()),
                DriverPolicy::Latest => Some("latest".into()),
                DriverPolicy::Version(v) => Some(v.to_string()),
            };
        }
        if c.install.prefix.is_some() {
            self.prefix.clone_from(&c.install.prefix);
        }
        if c.install.venv.is_some() {
            self.venv.clone_from(&c.install.venv);
        }
        self.no_cudnn = c.install.no_cudnn.unwrap_or(self.no_cudnn);
        if c.install.components.is_some() {
            self.components.clone_from(&c.install.components);
        }
        self.verify = c.install.verify.unwrap_or(self.verify);
        self.modify_path = c.shell.modify_path.unwrap_or(self.modify_path);
        if let Some(names) = &c.shell.shells {
            self.shells.clear();
            for family in names.iter().map(|n| n.family()) {
                if !self.shells.contains(&family) {
                    self.shells.push(family);
                }
            }
        }
        if let Some(k) = c.sources.source {
            self.source = match k {
                config::SourceKind::Redist => SourceKind::Redist,
                config::SourceKind::Wheels => SourceKind::Wheels,
            };
        }
        let s = &c.sources;
        for (mine, theirs) in [
            (&mut self.nvidia_mirror, &s.nvidia_mirror),
            (&mut self.index_url, &s.index_url),
            (&mut self.pypi_index, &s.pypi_index),
            (&mut self.torch_index, &s.torch_index),
        ] {
            if theirs.is_some() {
                mine.clone_from(theirs);
            }
        }
        self.allow_http = s.allow_http.unwrap_or(self.allow_http);
        self.torch_source = s.torch_source.unwrap_or(self.torch_source);
    }

    /// Drops the answers the profile has no use for (a PyTorch pin for cuda-dev, a prefix for
    /// pytorch, …), so that the plan and the saved file only carry what applies.
    pub fn fit_profile(&mut self) {
        let p = self.profile;
        if p == Profile::Cpu {
            self.cuda = None;
            self.cudnn = None;
        }
        if !p.has_torch() {
            self.torch = None;
            self.torch_index = None;
            self.torch_source = Default::default();
        }
        if p != Profile::Tensorflow {
            self.tensorflow = None;
        }
        if !p.has_toolkit() {
            self.prefix = None;
            self.no_cudnn = false;
            self.components = None;
            self.source = SourceKind::Redist;
            self.index_url = None;
        }
        if p == Profile::CudaDev {
            self.venv = None;
        }
        if p == Profile::Cpu && matches!(self.driver.as_deref(), Some(d) if d != "keep") {
            self.driver = None;
        }
    }

    /// The profile, pins and driver policy, as `cudaup install` takes them.
    pub fn stack_args(&self) -> StackArgs {
        StackArgs {
            profile: Some(self.profile),
            cuda: self.cuda.clone(),
            cudnn: self.cudnn.clone(),
            torch: self.torch.clone(),
            tensorflow: self.tensorflow.clone(),
            python: self.python.clone(),
            driver: self.driver.clone(),
            components: self.components.clone(),
        }
    }

    /// The `cudaup install` these answers amount to (verify is the wizard's own step).
    pub fn install_args(&self, dry_run: bool) -> InstallArgs {
        InstallArgs {
            stack: self.stack_args(),
            config: None,
            verify: false,
            source: SourceArgs {
                source: Some(self.source),
                mirror: self.nvidia_mirror.clone(),
                index_url: self.index_url.clone(),
                allow_http: self.allow_http,
            },
            system: None,
            prefix: self.prefix.clone(),
            venv: self.venv.clone(),
            pypi_index: self.pypi_index.clone(),
            torch_index: self.torch_index.clone(),
            torch_source: Some(self.torch_source),
            no_cudnn: self.no_cudnn,
            no_modify_path: !self.modify_path || self.shells.is_empty(),
            shells: self.shells.iter().map(|s| s.name().to_owned()).collect(),
            yes: true,
            dry_run,
            json: false,
            with: Vec::new(),
        }
    }

    /// The unattended config file for these answers (`cudaup install --config FILE --yes` reads
    /// it). `login_shell` (`$SHELL`) names the POSIX shell: `bash`, `zsh`, else `sh`.
    pub fn to_config(&self, path: PathBuf, lang: Lang, login_shell: Option<&str>) -> Config {
        let mut a = self.clone();
        a.fit_profile();
        let toolkit = a.profile.has_toolkit();
        let mut c = Config::new(path);
        c.profile = Some(a.profile);
        c.lang = Some(lang.into());
        c.pins = Pins {
            cuda: a.cuda,
            cudnn: a.cudnn,
            torch: a.torch,
            tensorflow: a.tensorflow,
            python: a.python,
        };
        c.driver = a.driver.as_deref().and_then(DriverChoice::parse);
        c.install.prefix = a.prefix;
        c.install.venv = a.venv;
        c.install.no_cudnn = toolkit.then_some(a.no_cudnn);
        c.install.components = a.components.filter(|_| toolkit);
        c.install.verify = Some(a.verify);
        c.shell.modify_path = Some(a.modify_path && !a.shells.is_empty());
        let posix = match login_shell.and_then(|s| s.rsplit('/').next()) {
            Some("bash") => ShellName::Bash,
            Some("zsh") => ShellName::Zsh,
            _ => ShellName::Sh,
        };
        c.shell.shells = (!a.shells.is_empty()).then(|| {
            a.shells
                .iter()
                .map(|s| match s {
                    Shell::Posix => posix,
                    Shell::Fish => ShellName::Fish,
                    Shell::PowerShell => ShellName::Powershell,
                })
                .collect()
        });
        c.sources.source = toolkit.then_some(match a.source {
            SourceKind::Redist => config::SourceKind::Redist,
            SourceKind::Wheels => config::SourceKind::Wheels,
        });
        c.sources.nvidia_mirror = a.nvidia_mirror;
        c.sources.index_url = a.index_url;
        c.sources.pypi_index = a.pypi_index;
        c.sources.torch_index = a.torch_index;
        c.sources.torch_source = (a.torch_source != Default::default()).then_some(a.torch_source);
        c.sources.allow_http = Some(a.allow_http);
        c
    }
}
