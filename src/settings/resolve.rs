//! Flags, `CUDAUP_*` variables and the config file resolved once into [`InstallSettings`]
//! (flags > environment > file > built-in defaults). `plan`, `install`, `mirror create` and the
//! wizard all come through here, so one answer has one type and one precedence rule.

use std::path::{Path, PathBuf};

use crate::catalog::Catalog;
use crate::fetch::GivenLocation;
use crate::model::request::TorchSource;
use crate::model::request::{DriverPolicy, Pins, Profile, Request, SourceKind, WithComponent};
use crate::model::system::System;
use crate::model::version::VersionPin;
use crate::settings::combine::{combine_fields, Combine};
use crate::settings::file::{Config, ConfigError};
use crate::shell::Shell;
use crate::world::process::Process;
use crate::world::vars;

/// Settings that cannot be used: a config file's error (with FILE:LINE:COLUMN), or a flag's or
/// variable's value (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The config file is broken, or contradicts a flag.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A flag's or variable's value (`what` names it: `--cuda`, `CUDAUP_MIRROR`).
    #[error("{what} {value}: {message}")]
    Invalid {
        /// The flag or variable.
        what: String,
        /// Its value, as given.
        value: String,
        /// What is wrong, and what to give instead.
        message: String,
    },
    /// Answers that cannot go together.
    #[error("{0}")]
    Conflict(String),
    /// Neither `--home`, `CUDAUP_HOME`, `XDG_DATA_HOME` nor `HOME` says where cudaup's home is.
    #[error("cannot tell where cudaup's home is: set HOME or --home")]
    NoHome,
}

impl SettingsError {
    /// A bad value of a flag or variable.
    /// The value is echoed with its control characters escaped (an ESC or a CR in a variable
    /// must not reach the terminal) and cut to 200 characters.
    pub fn invalid(what: &str, value: &str, message: impl Into<String>) -> SettingsError {
        let mut shown: String = value
            .chars()
            .take(200)
            .flat_map(|c| {
                if c.is_control() {
                    c.escape_default().collect::<Vec<_>>()
                } else {
                    vec![c]
                }
            })
            .collect();
        if value.chars().count() > 200 {
            shown.push('…');
        }
        SettingsError::Invalid {
            what: what.to_owned(),
            value: shown,
            message: message.into(),
        }
    }
}

/// One layer of install answers (the flags, the environment, or the config file): `None` is
/// "this layer does not say".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstallOptions {
    /// `--profile`.
    pub profile: Option<Profile>,
    /// `--cuda`.
    pub cuda: Option<VersionPin>,
    /// `--cudnn`.
    pub cudnn: Option<VersionPin>,
    /// `--torch`.
    pub torch: Option<VersionPin>,
    /// `--tensorflow`.
    pub tensorflow: Option<VersionPin>,
    /// `--jax`.
    pub jax: Option<VersionPin>,
    /// `--python`.
    pub python: Option<VersionPin>,
    /// `--driver`.
    pub driver: Option<DriverPolicy>,
    /// `--components`.
    pub components: Option<String>,
    /// `--source`.
    pub source: Option<SourceKind>,
    /// `--mirror`.
    pub mirror: Option<GivenLocation>,
    /// `--index-url`.
    pub index_url: Option<GivenLocation>,
    /// `--pypi-index`.
    pub pypi_index: Option<GivenLocation>,
    /// `--torch-index`.
    pub torch_index: Option<GivenLocation>,
    /// `--torch-source`.
    pub torch_source: Option<TorchSource>,
    /// `--allow-http`.
    pub allow_http: Option<bool>,
    /// `--allow-unverified`.
    pub allow_unverified: Option<bool>,
    /// `--prefix`.
    pub prefix: Option<PathBuf>,
    /// `--venv`.
    pub venv: Option<PathBuf>,
    /// `--no-cudnn`.
    pub no_cudnn: Option<bool>,
    /// `--verify`.
    pub verify: Option<bool>,
    /// `--no-modify-path` (as `Some(false)`).
    pub modify_path: Option<bool>,
    /// `--shell` (repeatable).
    pub shells: Option<Vec<Shell>>,
    /// `--with`.
    pub with: Option<Vec<WithComponent>>,
    /// `--no-guard` (as `Some(false)`).
    pub guard: Option<bool>,
}

combine_fields!(InstallOptions {
    profile,
    cuda,
    cudnn,
    torch,
    tensorflow,
    jax,
    python,
    driver,
    components,
    source,
    mirror,
    index_url,
    pypi_index,
    torch_index,
    torch_source,
    allow_http,
    allow_unverified,
    prefix,
    venv,
    no_cudnn,
    verify,
    modify_path,
    shells,
    with,
    guard,
});

impl InstallOptions {
    /// The answers the `CUDAUP_*` variables give, each checked as its flag is.
    pub fn from_env(process: &Process) -> Result<InstallOptions, SettingsError> {
        let location = |name: &str| {
            process
                .var(name)
                .map(|v| check_location(name, v, process.cwd()))
                .transpose()
        };
        Ok(InstallOptions {
            components: process.var(vars::CUDAUP_COMPONENTS).map(str::to_owned),
            mirror: location(vars::CUDAUP_MIRROR)?,
            index_url: location(vars::CUDAUP_INDEX_URL)?,
            pypi_index: location(vars::CUDAUP_PYPI_INDEX)?,
            torch_index: location(vars::CUDAUP_TORCH_INDEX)?,
            torch_source: process
                .var(vars::CUDAUP_TORCH_SOURCE)
                .map(|v| {
                    v.parse::<TorchSource>()
                        .map_err(|e| SettingsError::invalid(vars::CUDAUP_TORCH_SOURCE, v, e))
                })
                .transpose()?,
            ..InstallOptions::default()
        })
    }

    /// The answers a config file gives (it checked them when it was read).
    pub fn from_config(c: &Config) -> InstallOptions {
        let mut shells: Option<Vec<Shell>> = None;
        if let Some(names) = &c.shell.shells {
            let mut families = Vec::new();
            for family in names.iter().map(|n| n.family()) {
                if !families.contains(&family) {
                    families.push(family);
                }
            }
            shells = Some(families);
        }
        InstallOptions {
            profile: c.profile,
            cuda: c.pins.cuda.clone(),
            cudnn: c.pins.cudnn.clone(),
            torch: c.pins.torch.clone(),
            tensorflow: c.pins.tensorflow.clone(),
            jax: c.pins.jax.clone(),
            python: c.pins.python.clone(),
            driver: c.driver.clone(),
            components: c.install.components.clone(),
            source: c.sources.source,
            mirror: c.sources.nvidia_mirror.clone(),
            index_url: c.sources.index_url.clone(),
            pypi_index: c.sources.pypi_index.clone(),
            torch_index: c.sources.torch_index.clone(),
            torch_source: c.sources.torch_source,
            allow_http: c.sources.allow_http,
            allow_unverified: None,
            prefix: c.install.prefix.clone(),
            venv: c.install.venv.clone(),
            no_cudnn: c.install.no_cudnn,
            verify: c.install.verify,
            modify_path: c.shell.modify_path,
            shells,
            with: None,
            guard: None,
        }
    }
}

/// Every install answer, resolved: what `plan`, `install` and `mirror create` act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallSettings {
    /// Profile, pins and driver policy, for the resolver.
    pub request: Request,
    /// The toolkit's components (`None`: the default set).
    pub components: Option<String>,
    /// The toolkit's source (`None`: the default, or what an offline bundle holds).
    pub source: Option<SourceKind>,
    /// A copy of NVIDIA's layout.
    pub mirror: Option<GivenLocation>,
    /// The package index for the wheel toolkit.
    pub index_url: Option<GivenLocation>,
    /// PyPI or a mirror, for the frameworks.
    pub pypi_index: Option<GivenLocation>,
    /// PyTorch's index or a copy of its layout.
    pub torch_index: Option<GivenLocation>,
    /// Which index may serve PyTorch.
    pub torch_source: TorchSource,
    /// Plain-http locations accepted.
    pub allow_http: bool,
    /// The toolkit prefix (`None`: `$CUDAUP_HOME/toolkits/cuda-<version>`).
    pub prefix: Option<PathBuf>,
    /// The framework venv (`None`: `$CUDAUP_HOME/venvs/<profile>`).
    pub venv: Option<PathBuf>,
    /// Leave cuDNN out.
    pub no_cudnn: bool,
    /// Run `verify` afterwards.
    pub verify: bool,
    /// Hook the env script into rc files.
    pub modify_path: bool,
    /// The shells to hook (`None`: those found here).
    pub shells: Option<Vec<Shell>>,
    /// Optional framework components.
    pub with: Vec<WithComponent>,
    /// Guard the venv cudaup creates against silent swaps of its framework build.
    pub guard: bool,
    /// Whether a flag, variable or the config file chose the profile; when none did,
    /// `request.profile` is a stand-in until [`InstallSettings::for_machine`] makes it the
    /// profile the machine is offered.
    pub profile_given: bool,
    /// Why the machine was offered the profile, once [`InstallSettings::for_machine`] chose it
    /// (`no NVIDIA GPU here, so PyTorch for the CPU`): what `plan` and `install` say.
    pub offered: Option<String>,
}

impl InstallSettings {
    /// Resolves `flags` (already parsed and checked by the CLI) over the environment and the
    /// config file. A flag that changes the profile or the source is checked against the file's
    /// other answers, so `--profile cpu` over a file pinning CUDA is an error, not a surprise.
    pub fn resolve(
        flags: InstallOptions,
        process: &Process,
        file: Option<&Config>,
    ) -> Result<InstallSettings, SettingsError> {
        let env = InstallOptions::from_env(process)?;
        if let Some(c) = file {
            if let Some(p) = flags.profile {
                c.check_profile(p)?;
            }
            if let Some(k) = flags.source.or(env.source) {
                c.check_source(k)?;
            }
        }
        let file = file.map(InstallOptions::from_config).unwrap_or_default();
        let o = flags.combine(env).combine(file);
        let profile = o.profile.unwrap_or(Profile::Full);
        check_cpu_pins(profile, o.cudnn.is_some())?;
        Ok(InstallSettings {
            request: Request {
                profile,
                pins: Pins {
                    cuda: o.cuda,
                    cudnn: o.cudnn,
                    torch: o.torch,
                    tensorflow: o.tensorflow,
                    jax: o.jax,
                    python: o.python,
                },
                driver: o.driver.unwrap_or(DriverPolicy::Auto),
                allow_unverified: o.allow_unverified.unwrap_or(false),
            },
            components: o.components,
            source: o.source,
            mirror: o.mirror,
            index_url: o.index_url,
            pypi_index: o.pypi_index,
            torch_index: o.torch_index,
            torch_source: o.torch_source.unwrap_or_default(),
            allow_http: o.allow_http.unwrap_or(false),
            prefix: o.prefix,
            venv: o.venv,
            no_cudnn: o.no_cudnn.unwrap_or(false),
            verify: o.verify.unwrap_or(false),
            modify_path: o.modify_path.unwrap_or(true),
            shells: o.shells,
            with: o.with.unwrap_or_default(),
            guard: o.guard.unwrap_or(true),
            profile_given: o.profile.is_some(),
            offered: None,
        })
    }

    /// These settings for `system`: when no flag, variable or config file chose the profile, it
    /// becomes the one the machine is offered ([`crate::resolve::offer`], the rule `wizard`,
    /// `plan`, `install` and `bench` share), with why in `offered`; a chosen profile is kept. A
    /// cuDNN pin where cpu is offered is a conflict naming the profile that works here.
    pub fn for_machine(
        mut self,
        system: &System,
        catalog: &Catalog,
    ) -> Result<InstallSettings, SettingsError> {
        if !self.profile_given {
            let offer = crate::resolve::offer::offer(system, &self.request, catalog);
            // Offered cpu under a cuDNN pin: a machine without an NVIDIA GPU (a CUDA pin keeps
            // cpu off a GPU machine's list), where cuda-dev is the profile with cuDNN that plans.
            if offer.profile == Profile::Cpu && self.request.pins.cudnn.is_some() {
                let dev = Request {
                    profile: Profile::CudaDev,
                    ..self.request.clone()
                };
                let builds = crate::resolve::resolve(system, &dev, catalog).status
                    == crate::model::plan::Status::Ok;
                return Err(SettingsError::Conflict(format!(
                    "--cudnn: this machine's default profile is cpu ({}), which installs no cuDNN; {}",
                    offer.why,
                    if builds {
                        "`--profile cuda-dev` installs the CUDA toolkit and cuDNN here, for building"
                    } else {
                        "no profile with cuDNN plans here: leave --cudnn out"
                    }
                )));
            }
            self.request.profile = offer.profile;
            self.offered = Some(offer.why);
        }
        Ok(self)
    }
}

/// The cpu profile installs no cuDNN: a cuDNN pin on it is a conflict, not a silent no-op.
fn check_cpu_pins(profile: Profile, cudnn_pinned: bool) -> Result<(), SettingsError> {
    if profile == Profile::Cpu && cudnn_pinned {
        return Err(SettingsError::Conflict(
            "--cudnn: the cpu profile installs no cuDNN: leave --cudnn out, or choose a profile with cuDNN (cuda-dev; full and tensorflow where an NVIDIA GPU is)".into(),
        ));
    }
    Ok(())
}

/// A source location from a flag or variable, checked as the config file checks its keys: an
/// `https://`, `http://` or `file://` URL, or a directory that exists (a relative one is taken
/// from `cwd` and made absolute). Anything else — an option-looking `--extra-index-url=…`, a
/// control character, a missing directory — is refused before any of it is used.
pub fn check_location(what: &str, value: &str, cwd: &Path) -> Result<GivenLocation, SettingsError> {
    let bad = |m: &str| SettingsError::invalid(what, value, m);
    if value.trim().is_empty() {
        return Err(bad("empty: give a URL or a directory"));
    }
    if value.starts_with('-') {
        return Err(bad(
            "looks like an option, not a location: give an https://, http:// or file:// URL, or a directory",
        ));
    }
    if value.chars().any(char::is_control) {
        return Err(bad("contains a control character"));
    }
    if value.contains("://") {
        return match GivenLocation::parse(value) {
            Ok(given) => Ok(given),
            Err(crate::fetch::FetchError::BadLocation { message, .. }) => Err(bad(&message)),
            Err(e) => Err(bad(&e.to_string())),
        };
    }
    let dir = cwd.join(value);
    if !dir.is_dir() {
        return Err(bad(
            "neither a URL nor an existing directory: give an https://, http:// or file:// URL, or the directory of a mirror",
        ));
    }
    GivenLocation::parse(&dir.display().to_string()).map_err(|e| bad(&e.to_string()))
}

/// A version pin from a flag (`--cuda 12.8`), parsed once.
pub fn check_pin(what: &str, value: &str) -> Result<VersionPin, SettingsError> {
    VersionPin::parse(value).map_err(|e| SettingsError::invalid(what, value, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(vars: &[(&str, &str)]) -> Process {
        Process::with_vars(vars.iter().copied(), "/")
    }

    #[test]
    fn an_unchosen_profile_becomes_the_machines_offer_and_a_chosen_one_stays() {
        let catalog = Catalog::embedded();
        let h200: System =
            serde_json::from_str(include_str!("../../tests/fixtures/h200-detect.json")).unwrap();
        let mut bare = h200.clone();
        bare.gpus.clear();
        let unchosen = || InstallSettings::resolve(InstallOptions::default(), &process(&[]), None);
        let s = unchosen().unwrap();
        assert!(!s.profile_given && s.offered.is_none());
        let here = s.clone().for_machine(&bare, &catalog).unwrap();
        assert_eq!(here.request.profile, Profile::Cpu);
        assert_eq!(
            here.offered.as_deref(),
            Some("no NVIDIA GPU here, so PyTorch for the CPU")
        );
        let there = s.for_machine(&h200, &catalog).unwrap();
        assert_eq!(there.request.profile, Profile::Full);
        let chosen = InstallSettings::resolve(
            InstallOptions {
                profile: Some(Profile::Pytorch),
                ..Default::default()
            },
            &process(&[]),
            None,
        )
        .unwrap()
        .for_machine(&bare, &catalog)
        .unwrap();
        assert_eq!(chosen.request.profile, Profile::Pytorch);
        assert_eq!(chosen.offered, None);
        // A cuDNN pin on a machine offered cpu: the profile with cuDNN that plans here.
        let pinned = InstallSettings::resolve(
            InstallOptions {
                cudnn: VersionPin::parse("9").ok(),
                ..Default::default()
            },
            &process(&[]),
            None,
        )
        .unwrap();
        let e = pinned.clone().for_machine(&bare, &catalog).unwrap_err();
        assert!(
            e.to_string()
                .contains("this machine's default profile is cpu (no NVIDIA GPU here")
                && e.to_string().contains("`--profile cuda-dev`"),
            "{e}"
        );
        assert_eq!(
            pinned.for_machine(&h200, &catalog).unwrap().request.profile,
            Profile::Full
        );
    }

    #[cfg(unix)] // a temp path written into a TOML basic string, where a Windows path's backslashes are escapes
    #[test]
    fn flags_win_over_the_environment_which_wins_over_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display().to_string();
        let text = format!(
            "version = 1\nprofile = \"cuda-dev\"\n[pins]\ncuda = \"12.8\"\n[sources]\nnvidia_mirror = \"{d}\"\npypi_index = \"https://file.example/simple\"\n"
        );
        let file = Config::parse(&text, Path::new("c.toml")).unwrap();
        let env = process(&[(vars::CUDAUP_PYPI_INDEX, "https://env.example/simple")]);
        let flags = InstallOptions {
            cuda: Some(VersionPin::parse("13.0.2").unwrap()),
            ..Default::default()
        };
        let s = InstallSettings::resolve(flags, &env, Some(&file)).unwrap();
        assert_eq!(s.request.profile, Profile::CudaDev);
        assert_eq!(s.request.pins.cuda.unwrap().to_string(), "13.0.2");
        assert_eq!(
            s.pypi_index
                .as_ref()
                .map(crate::fetch::GivenLocation::as_str),
            Some("https://env.example/simple")
        );
        assert_eq!(
            s.mirror.as_ref().map(crate::fetch::GivenLocation::as_str),
            Some(d.as_str())
        );
        assert!(s.modify_path);
    }

    #[test]
    fn a_flag_profile_is_checked_against_the_file() {
        let file = Config::parse(
            "version = 1\n[pins]\ncuda = \"12.8\"\n",
            Path::new("c.toml"),
        )
        .unwrap();
        let flags = InstallOptions {
            profile: Some(Profile::Cpu),
            ..Default::default()
        };
        let e = InstallSettings::resolve(flags, &process(&[]), Some(&file)).unwrap_err();
        assert!(e.to_string().contains("c.toml:3:1"), "{e}");
    }

    #[test]
    fn locations_from_flags_and_variables_are_checked_like_config_keys() {
        let cwd = tempfile::tempdir().unwrap();
        for bad in [
            "--extra-index-url=https://evil.example",
            "-r/etc/passwd",
            "--target=/tmp/x",
            "",
            "no-such-dir",
            "ftp://x",
        ] {
            let e = check_location("--pypi-index", bad, cwd.path()).unwrap_err();
            assert!(e.to_string().starts_with("--pypi-index"), "{e}");
        }
        fs_err::create_dir(cwd.path().join("mirror")).unwrap();
        let ok = check_location("--mirror", "mirror", cwd.path()).unwrap();
        // The directory is made absolute, and parsed once: a local location.
        assert!(Path::new(ok.as_str()).is_absolute());
        assert_eq!(ok.as_path(), Some(cwd.path().join("mirror").as_path()));
        assert!(check_location("--mirror", "https://m.example/nvidia", cwd.path()).is_ok());
        // A URL keeps the user's spelling (the parser's text would add a `/` to a bare host).
        let bare = check_location("--pypi-index", "https://m.example", cwd.path()).unwrap();
        assert_eq!(bare.as_str(), "https://m.example");
        assert!(bare.is_http());
        let env = process(&[(vars::CUDAUP_TORCH_INDEX, "--index-url=x")]);
        let e = InstallOptions::from_env(&env).unwrap_err();
        assert!(e.to_string().starts_with("CUDAUP_TORCH_INDEX"), "{e}");
    }

    #[test]
    fn skip_is_a_policy_of_its_own() {
        let file = Config::parse(
            "version = 1\n[driver]\npolicy = \"skip\"\n",
            Path::new("c.toml"),
        )
        .unwrap();
        let s = InstallSettings::resolve(InstallOptions::default(), &process(&[]), Some(&file))
            .unwrap();
        assert_eq!(s.request.driver, DriverPolicy::Skip);
    }
}
