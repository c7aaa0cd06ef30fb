//! The wizard's answers: what it suggests for this machine, what a config file and the
//! environment overlay, and how the answers become `cudaup install` arguments or a saved config.

use std::path::PathBuf;

use crate::catalog::Catalog;
use crate::cli::i18n::Lang;
use crate::fetch::GivenLocation;
use crate::model::request::{DriverPolicy, Pins, Profile, SourceKind};
use crate::model::system::System;
use crate::model::version::VersionPin;
use crate::settings::combine::Combine;
use crate::settings::file::{Config, ShellName};
use crate::settings::{InstallOptions, InstallSettings, SettingsError};
use crate::shell::Shell;
use crate::world::process::Process;

/// Everything the wizard asks for: what `--save` writes and the install runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answers {
    /// The stack.
    pub profile: Profile,
    /// Pinned CUDA version.
    pub cuda: Option<VersionPin>,
    /// Pinned cuDNN version.
    pub cudnn: Option<VersionPin>,
    /// Pinned PyTorch version.
    pub torch: Option<VersionPin>,
    /// Pinned TensorFlow version.
    pub tensorflow: Option<VersionPin>,
    /// Pinned JAX version.
    pub jax: Option<VersionPin>,
    /// Pinned Python version.
    pub python: Option<VersionPin>,
    /// Driver policy; `None` is the default policy.
    pub driver: Option<DriverPolicy>,
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
    /// Redistributable archives or wheels; `None` is auto (`cudaup install`'s default: the
    /// archives where NVIDIA's server answers, else NVIDIA's CUDA 13+ wheels from the index).
    pub source: Option<SourceKind>,
    /// A mirror of NVIDIA's layout.
    pub nvidia_mirror: Option<GivenLocation>,
    /// The index for `source = wheels`.
    pub index_url: Option<GivenLocation>,
    /// PyPI or a mirror, for the framework.
    pub pypi_index: Option<GivenLocation>,
    /// PyTorch's index or a mirror.
    pub torch_index: Option<GivenLocation>,
    /// Which index may serve PyTorch.
    pub torch_source: crate::model::request::TorchSource,
    /// Accept plain-http sources.
    pub allow_http: bool,
}

impl Answers {
    /// What the wizard suggests for this machine: the profile it is offered (the default
    /// `plan` and `install` take: `resolve::offer`); no pins; the toolkit's source auto, as for
    /// `cudaup install`; NVIDIA's and PyPI's servers; every shell found here hooked; verify
    /// afterwards.
    pub fn suggested(process: &Process, system: &System, catalog: &Catalog) -> Self {
        Self {
            profile: crate::resolve::offer::offer(system, &Default::default(), catalog).profile,
            cuda: None,
            cudnn: None,
            torch: None,
            tensorflow: None,
            jax: None,
            python: None,
            driver: None,
            prefix: None,
            venv: None,
            no_cudnn: false,
            components: None,
            verify: true,
            modify_path: true,
            shells: crate::cli::env::shells_here(process),
            source: None,
            nvidia_mirror: None,
            index_url: None,
            pypi_index: None,
            torch_index: None,
            torch_source: Default::default(),
            allow_http: false,
        }
    }

    /// The starting answers: the suggestions, under what the config file answers, under the
    /// `CUDAUP_*` variables (flags > env > file > defaults, as for `cudaup install`: the same
    /// layers, combined the same way).
    pub fn initial(
        process: &Process,
        system: &System,
        catalog: &Catalog,
        config: Option<&Config>,
    ) -> Result<Self, SettingsError> {
        let file = config.map(InstallOptions::from_config).unwrap_or_default();
        let suggested = Self::suggested(process, system, catalog);
        let layers = InstallOptions::from_env(process)?
            .combine(file)
            .combine(suggested.options());
        Ok(Self::from_options(layers, &suggested))
    }

    /// Answers from resolved layers; what no layer gives comes from `base`.
    fn from_options(o: InstallOptions, base: &Answers) -> Self {
        Self {
            profile: o.profile.unwrap_or(base.profile),
            cuda: o.cuda,
            cudnn: o.cudnn,
            torch: o.torch,
            tensorflow: o.tensorflow,
            jax: o.jax,
            python: o.python,
            driver: o.driver.filter(|d| *d != DriverPolicy::Auto),
            prefix: o.prefix,
            venv: o.venv,
            no_cudnn: o.no_cudnn.unwrap_or(base.no_cudnn),
            components: o.components,
            verify: o.verify.unwrap_or(base.verify),
            modify_path: o.modify_path.unwrap_or(base.modify_path),
            shells: o.shells.unwrap_or_else(|| base.shells.clone()),
            source: o.source.or(base.source),
            nvidia_mirror: o.mirror,
            index_url: o.index_url,
            pypi_index: o.pypi_index,
            torch_index: o.torch_index,
            torch_source: o.torch_source.unwrap_or(base.torch_source),
            allow_http: o.allow_http.unwrap_or(base.allow_http),
        }
    }

    /// These answers as one layer of install settings.
    pub fn options(&self) -> InstallOptions {
        InstallOptions {
            profile: Some(self.profile),
            cuda: self.cuda.clone(),
            cudnn: self.cudnn.clone(),
            torch: self.torch.clone(),
            tensorflow: self.tensorflow.clone(),
            jax: self.jax.clone(),
            python: self.python.clone(),
            driver: self.driver.clone(),
            components: self.components.clone(),
            source: self.source,
            mirror: self.nvidia_mirror.clone(),
            index_url: self.index_url.clone(),
            pypi_index: self.pypi_index.clone(),
            torch_index: self.torch_index.clone(),
            torch_source: Some(self.torch_source),
            allow_http: Some(self.allow_http),
            // The wizard only offers what the catalog vouches for.
            allow_unverified: None,
            prefix: self.prefix.clone(),
            venv: self.venv.clone(),
            no_cudnn: Some(self.no_cudnn),
            verify: Some(self.verify),
            modify_path: Some(self.modify_path),
            shells: Some(self.shells.clone()),
            with: None,
            guard: None,
        }
    }

    /// Whether new shells get cudaup's environment: a chosen shell's rc file, or on Windows the
    /// user environment in the registry ([`super::USER_ENVIRONMENT`]).
    pub fn reaches_new_shells(&self) -> bool {
        self.modify_path && (!self.shells.is_empty() || super::USER_ENVIRONMENT)
    }

    /// The install settings these answers amount to: what the preview plans and the install
    /// runs with.
    pub fn settings(&self, process: &Process) -> Result<InstallSettings, SettingsError> {
        let layer = InstallOptions {
            // verify is the wizard's own step, after the install.
            verify: Some(false),
            modify_path: Some(self.reaches_new_shells()),
            ..self.options()
        };
        InstallSettings::resolve(layer, process, None)
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
        if p != Profile::Jax {
            self.jax = None;
        }
        if !p.has_toolkit() {
            self.prefix = None;
            self.no_cudnn = false;
            self.components = None;
            self.source = None;
            self.index_url = None;
        }
        if p == Profile::CudaDev {
            self.venv = None;
        }
        if p == Profile::Cpu
            && matches!(
                self.driver,
                Some(DriverPolicy::Latest | DriverPolicy::Version(_))
            )
        {
            self.driver = None;
        }
    }

    /// The unattended config file for these answers (`cudaup install --config FILE --yes` reads
    /// it). `login_shell` (`$SHELL`) names the POSIX shell: `bash`, `zsh`, else `sh`.
    pub fn to_config(&self, path: PathBuf, lang: Lang, login_shell: Option<&str>) -> Config {
        let mut a = self.clone();
        a.fit_profile();
        let toolkit = a.profile.has_toolkit();
        let reaches_new_shells = a.reaches_new_shells();
        let mut c = Config::new(path);
        c.profile = Some(a.profile);
        c.lang = Some(lang.into());
        c.pins = Pins {
            cuda: a.cuda,
            cudnn: a.cudnn,
            torch: a.torch,
            tensorflow: a.tensorflow,
            jax: a.jax,
            python: a.python,
        };
        c.driver = a.driver;
        c.install.prefix = a.prefix;
        c.install.venv = a.venv;
        c.install.no_cudnn = toolkit.then_some(a.no_cudnn);
        c.install.components = a.components.filter(|_| toolkit);
        c.install.verify = Some(a.verify);
        c.shell.modify_path = Some(reaches_new_shells);
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
        c.sources.source = a.source.filter(|_| toolkit);
        c.sources.nvidia_mirror = a.nvidia_mirror;
        c.sources.index_url = a.index_url;
        c.sources.pypi_index = a.pypi_index;
        c.sources.torch_index = a.torch_index;
        c.sources.torch_source = (a.torch_source != Default::default()).then_some(a.torch_source);
        c.sources.allow_http = Some(a.allow_http);
        c
    }
}

/// The download sites the `profiles` may take with answers `a` (`install::reach::routes_for`),
/// each site once.
pub(super) fn routes(
    a: &Answers,
    profiles: &[Profile],
    process: &Process,
) -> Result<Vec<crate::install::reach::Route>, SettingsError> {
    let mut out: Vec<crate::install::reach::Route> = Vec::new();
    for p in profiles {
        let mut b = a.clone();
        b.profile = *p;
        b.fit_profile();
        for r in crate::install::reach::routes_for(&b.settings(process)?) {
            if !out
                .iter()
                .any(|o| o.service == r.service && o.base == r.base)
            {
                out.push(r);
            }
        }
    }
    Ok(out)
}

/// The toolkit download each of `profiles` would bring with answers `a`, from the catalog's
/// sizes (`None`: no toolkit, no plan, or no sizes for its release).
pub(super) fn toolkit_sizes(
    ctx: &super::Ctx<'_>,
    a: &Answers,
    profiles: &[Profile],
) -> Result<Vec<Option<u64>>, SettingsError> {
    profiles
        .iter()
        .map(|p| {
            let mut b = a.clone();
            b.profile = *p;
            b.fit_profile();
            let settings = b.settings(ctx.process)?;
            let plan = crate::resolve::resolve(ctx.system, &settings.request, ctx.catalog);
            Ok(crate::install::summary::for_plan(
                &plan,
                ctx.catalog,
                settings.components.as_deref(),
                &crate::sources::pypi::wheel_platform(ctx.system.os.family, &ctx.system.os.arch),
            )
            .ok()
            .flatten()
            .and_then(|t| t.bytes()))
        })
        .collect()
}

/// The toolkit source `auto` takes where `reach` was asked: NVIDIA's archives where its server
/// (or the mirror) answered, else NVIDIA's CUDA wheels where an index did; with the sentence a
/// saved config keeps about it. `None` when no site that serves the toolkit answered.
pub(super) fn probed_source(reach: &crate::install::reach::Reach) -> Option<(SourceKind, String)> {
    use crate::install::reach::Service;
    let site = |service: Service| {
        reach
            .answers
            .iter()
            .find(|a| a.route.service == service && a.reached)
    };
    if let Some(a) = site(Service::NvidiaRedist) {
        return Some((
            SourceKind::Redist,
            format!(
                "source auto, probed by the wizard: NVIDIA's redistributables at {} answered",
                a.route.base
            ),
        ));
    }
    let index = site(Service::WheelIndex).or_else(|| site(Service::Pypi))?;
    let nvidia = reach
        .answers
        .iter()
        .find(|a| a.route.service == Service::NvidiaRedist)
        .map(|a| {
            format!(
                "NVIDIA's redistributables at {} did not answer ({}); ",
                a.route.base,
                crate::cli::i18n::reach::EN.why(a)
            )
        })
        .unwrap_or_default();
    Some((
        SourceKind::Wheels,
        format!(
            "source auto, probed by the wizard: {nvidia}NVIDIA's CUDA wheels from {}",
            index.route.base
        ),
    ))
}
