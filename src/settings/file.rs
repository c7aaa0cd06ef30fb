//! The unattended config file (`cudaup.toml`, ARCHITECTURE.md "Unattended config"): every answer
//! the wizard asks for, as TOML, so `cudaup install --config cudaup.toml` runs without a question.
//!
//! ```toml
//! version = 1                 # required: the format of this file
//! profile = "full"            # full | pytorch | tensorflow | jax | cuda-dev | cpu
//! lang = "en"                 # en | zh
//!
//! [pins]                      # all optional; versions match by prefix ("12.8" matches 12.8.1)
//! cuda = "12.8"
//! cudnn = "9.10"
//! torch = "2.8"
//! tensorflow = "2.20"
//! python = "3.12"
//!
//! [driver]
//! policy = "keep"             # auto | keep | latest | install | upgrade | skip | "580.95.05"
//!
//! [install]
//! prefix = "/opt/cuda"        # the toolkit prefix (absolute)
//! venv = "/opt/venvs/torch"   # the framework venv (absolute)
//! no_cudnn = false
//! components = "standard"     # minimal | standard | complete, or a list: "standard,-npp"
//! verify = true               # run `cudaup verify` afterwards
//!
//! [shell]
//! modify_path = true
//! shells = ["bash", "zsh"]    # sh | bash | zsh | fish | powershell (default: those present)
//!
//! [sources]
//! source = "redist"           # redist | wheels
//! nvidia_mirror = "https://mirror.example/nvidia"
//! index_url = "https://mirrors.example/pypi/simple"
//! pypi_index = "https://mirrors.example/pypi/simple"
//! torch_index = "https://mirrors.example/pytorch/whl"
//! torch_source = "auto"      # auto | pytorch | pypi: which index may serve PyTorch
//! allow_http = false
//! ```
//!
//! # Precedence
//! For every answer, the first of these that gives one wins:
//! 1. a command-line flag (`--profile`, `--cuda`, `--prefix`, `--mirror`, …);
//! 2. a `CUDAUP_*` environment variable (`CUDAUP_MIRROR`, `CUDAUP_INDEX_URL`,
//!    `CUDAUP_PYPI_INDEX`, `CUDAUP_TORCH_INDEX`, …);
//! 3. this file;
//! 4. the built-in default.
//!
//! So every field of [`Config`] is an `Option`: `None` means "the file does not say", and the
//! caller falls through to the default. The CLI does the merging; this module only reads, checks
//! and writes the file.
//!
//! # Checks
//! The file is read strictly, because nobody is watching when it is used: unknown keys, wrong
//! types, malformed values and answers that contradict each other are all errors, each as
//! `FILE:LINE:COLUMN: message` pointing at the offending key (or array element). When the file
//! has several problems, the first in the file is reported. Contradictions with the profile are
//! only checked when the file names a profile; a caller that takes the profile from a flag
//! instead re-checks with [`Config::check_profile`].

use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::catalog::line_col;
use crate::fetch::GivenLocation;
pub use crate::model::request::SourceKind;
use crate::model::request::{DriverPolicy, Pins, Profile};
use crate::model::version::VersionPin;

/// The config format this cudaup reads (the `version` key).
pub const CONFIG_VERSION: i64 = 1;

/// A config file that cannot be used: where, and why.
///
/// Displays as `FILE:LINE:COLUMN: message`; an error that belongs to no position (an unreadable
/// file) has `line` and `column` 0 and displays as `FILE: message`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct ConfigError {
    /// The config file, as given.
    pub file: PathBuf,
    /// One-based line of the offending key; 0 when the error has no position.
    pub line: usize,
    /// One-based column (in bytes) of the offending key; 0 when the error has no position.
    pub column: usize,
    /// What is wrong, and what to do instead.
    pub message: String,
}

impl ConfigError {
    /// The message as printed: a file's bytes may carry terminal escape sequences or megabytes
    /// of one value, so control characters are escaped and the whole is cut to a screenful.
    fn render(&self) -> String {
        let text = if self.line == 0 {
            format!("{}: {}", self.file.display(), self.message)
        } else {
            format!(
                "{}:{}:{}: {}",
                self.file.display(),
                self.line,
                self.column,
                self.message
            )
        };
        echoable(&text, 600)
    }
}

/// `text` with control characters escaped (newlines kept) and cut after `max` characters.
fn echoable(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push_str(&format!(
                "… ({} more bytes)",
                text.len() - text.char_indices().nth(max).map_or(0, |(at, _)| at)
            ));
            break;
        }
        if c.is_control() && c != '\n' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The language of cudaup's messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// English.
    En,
    /// Simplified Chinese.
    Zh,
}

impl Lang {
    /// The name in the file.
    pub fn name(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A shell whose rc file cudaup may hook (`[shell] shells`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShellName {
    /// `sh`: `~/.profile`.
    Sh,
    /// `bash`: `~/.profile` and the bash rc files that exist.
    Bash,
    /// `zsh`: `.zshenv`.
    Zsh,
    /// `fish`: fish's `conf.d`.
    Fish,
    /// `powershell`: the PowerShell profile (`pwsh` and Windows PowerShell).
    Powershell,
}

impl ShellName {
    /// Every name, in the order the file lists them by default.
    pub const ALL: [ShellName; 5] = [
        ShellName::Sh,
        ShellName::Bash,
        ShellName::Zsh,
        ShellName::Fish,
        ShellName::Powershell,
    ];

    /// The name in the file.
    pub fn name(self) -> &'static str {
        match self {
            ShellName::Sh => "sh",
            ShellName::Bash => "bash",
            ShellName::Zsh => "zsh",
            ShellName::Fish => "fish",
            ShellName::Powershell => "powershell",
        }
    }

    /// The family whose env script and hook serve this shell.
    pub fn family(self) -> crate::shell::Shell {
        match self {
            ShellName::Sh | ShellName::Bash | ShellName::Zsh => crate::shell::Shell::Posix,
            ShellName::Fish => crate::shell::Shell::Fish,
            ShellName::Powershell => crate::shell::Shell::PowerShell,
        }
    }

    fn parse(s: &str) -> Option<ShellName> {
        ShellName::ALL.into_iter().find(|n| n.name() == s)
    }
}

impl fmt::Display for ShellName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `[install]`: where things go, and what to do after.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstallConfig {
    /// The toolkit prefix (`--prefix`), absolute.
    pub prefix: Option<PathBuf>,
    /// The framework's virtual environment (`--venv`), absolute.
    pub venv: Option<PathBuf>,
    /// Leave cuDNN out (`--no-cudnn`).
    pub no_cudnn: Option<bool>,
    /// The toolkit components (`--components`): a set or a comma-separated list.
    pub components: Option<String>,
    /// Run `cudaup verify` after installing.
    pub verify: Option<bool>,
}

/// `[shell]`: the shell environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellConfig {
    /// Hook the env script into shell rc files (`false` is `--no-modify-path`).
    pub modify_path: Option<bool>,
    /// Which shells to hook, never empty and without repeats; `None` means those present.
    pub shells: Option<Vec<ShellName>>,
}

/// `[sources]`: where bytes come from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourcesConfig {
    /// Redistributable archives or wheels (`--source`).
    pub source: Option<SourceKind>,
    /// A copy of NVIDIA's download layout (`--mirror`, `CUDAUP_MIRROR`): an https://, http:// or
    /// file:// URL, or an absolute directory.
    pub nvidia_mirror: Option<GivenLocation>,
    /// The package index for `source = "wheels"` (`--index-url`, `CUDAUP_INDEX_URL`).
    pub index_url: Option<GivenLocation>,
    /// PyPI or a mirror of it, for the frameworks (`--pypi-index`, `CUDAUP_PYPI_INDEX`).
    pub pypi_index: Option<GivenLocation>,
    /// PyTorch's wheel index or a mirror of it (`--torch-index`, `CUDAUP_TORCH_INDEX`).
    pub torch_index: Option<GivenLocation>,
    /// Which kind of index may serve PyTorch (`--torch-source`, `CUDAUP_TORCH_SOURCE`).
    pub torch_source: Option<crate::model::request::TorchSource>,
    /// Accept plain-http locations (`--allow-http`); required when any of the above is http://.
    pub allow_http: Option<bool>,
}

/// A checked config file. Every answer is `None` when the file leaves it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The file it came from (or will be written to), as given.
    pub path: PathBuf,
    /// Which stack to set up (`--profile`).
    pub profile: Option<Profile>,
    /// The language of messages.
    pub lang: Option<Lang>,
    /// Fixed versions (`--cuda`, `--cudnn`, `--torch`, `--tensorflow`, `--python`), each plain
    /// dotted numbers such as `12.8`.
    pub pins: Pins,
    /// What to do about the driver (`--driver`).
    pub driver: Option<DriverPolicy>,
    /// `[install]`.
    pub install: InstallConfig,
    /// `[shell]`.
    pub shell: ShellConfig,
    /// `[sources]`.
    pub sources: SourcesConfig,
    /// Where each key sits in the file, for errors found after parsing.
    positions: Positions,
}

/// Key (`pins.cuda`) → (line, column). Not part of the answers: every two compare equal, so a
/// config equals its own `to_toml` read back.
#[derive(Debug, Clone, Default)]
struct Positions(BTreeMap<&'static str, (usize, usize)>);

impl PartialEq for Positions {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Positions {}

// ---------------------------------------------------------------------------------------------
// The file as TOML gives it.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    version: Option<Spanned<i64>>,
    profile: Option<Spanned<String>>,
    lang: Option<Spanned<String>>,
    #[serde(default)]
    pins: RawPins,
    #[serde(default)]
    driver: RawDriver,
    #[serde(default)]
    install: RawInstall,
    #[serde(default)]
    shell: RawShell,
    #[serde(default)]
    sources: RawSources,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPins {
    cuda: Option<Spanned<String>>,
    cudnn: Option<Spanned<String>>,
    torch: Option<Spanned<String>>,
    tensorflow: Option<Spanned<String>>,
    jax: Option<Spanned<String>>,
    python: Option<Spanned<String>>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDriver {
    policy: Option<Spanned<String>>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInstall {
    prefix: Option<Spanned<String>>,
    venv: Option<Spanned<String>>,
    no_cudnn: Option<Spanned<bool>>,
    components: Option<Spanned<String>>,
    verify: Option<Spanned<bool>>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShell {
    modify_path: Option<Spanned<bool>>,
    shells: Option<Spanned<Vec<Spanned<String>>>>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSources {
    source: Option<Spanned<String>>,
    nvidia_mirror: Option<Spanned<String>>,
    index_url: Option<Spanned<String>>,
    pypi_index: Option<Spanned<String>>,
    torch_index: Option<Spanned<String>>,
    torch_source: Option<Spanned<String>>,
    allow_http: Option<Spanned<bool>>,
}

/// Collects the problems of one file; the first in the file wins.
struct Checker<'a> {
    text: &'a str,
    path: &'a Path,
    positions: Positions,
    errors: Vec<ConfigError>,
}

impl<'a> Checker<'a> {
    /// Records where `key` sits (its value starts at `value_start`) and returns the position.
    fn place(&mut self, key: &'static str, value_start: usize) -> (usize, usize) {
        let at = line_col(self.text, key_start(self.text, value_start));
        self.positions.0.insert(key, at);
        at
    }

    fn error_at(&mut self, (line, column): (usize, usize), message: String) {
        self.errors.push(ConfigError {
            file: self.path.to_owned(),
            line,
            column,
            message,
        });
    }

    /// A string value: placed, and not empty.
    fn string(&mut self, key: &'static str, v: &Option<Spanned<String>>) -> Option<String> {
        let v = v.as_ref()?;
        let at = self.place(key, v.span().start);
        if v.get_ref().trim().is_empty() {
            self.error_at(
                at,
                format!("{key} is empty: give it a value, or leave the key out for the default"),
            );
            return None;
        }
        Some(v.get_ref().clone())
    }

    fn boolean(&mut self, key: &'static str, v: &Option<Spanned<bool>>) -> Option<bool> {
        let v = v.as_ref()?;
        self.place(key, v.span().start);
        Some(*v.get_ref())
    }

    /// A component selection: set and component names, commas, and `-` to leave one out (the
    /// names themselves are checked against the catalog when installing).
    fn components(&mut self, key: &'static str, v: &Option<Spanned<String>>) -> Option<String> {
        let s = self.string(key, v)?;
        let ok = s.split(',').all(|item| {
            let name = item.trim().trim_start_matches(['-', '+']);
            !name.is_empty()
                && name
                    .chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-')
        });
        if !ok {
            let at = self.positions.0[key];
            self.error_at(
                at,
                format!(
                    "{key} = {}: name a set (minimal, standard, complete) or a comma-separated \
                     list of sets and components, `-name` to leave one out (\"standard,-npp\")",
                    quote(&s)
                ),
            );
            return None;
        }
        Some(s)
    }

    /// A pin: plain dotted numbers.
    fn pin(&mut self, key: &'static str, v: &Option<Spanned<String>>) -> Option<VersionPin> {
        let s = self.string(key, v)?;
        let pin = VersionPin::parse(&s).ok().filter(|_| is_version(&s));
        if pin.is_none() {
            let at = self.positions.0[key];
            self.error_at(
                at,
                format!(
                    "{key} = {}: not a version: use numbers like 12.8",
                    quote(&s)
                ),
            );
            return None;
        }
        pin
    }

    /// An absolute path, without control characters (a NUL would cut it short at the OS).
    fn path(&mut self, key: &'static str, v: &Option<Spanned<String>>) -> Option<PathBuf> {
        let s = self.string(key, v)?;
        if let Some(c) = s.chars().find(|c| c.is_control()) {
            let at = self.positions.0[key];
            self.error_at(
                at,
                format!(
                    "{key} = {}: contains the control character {}: a path cannot hold it",
                    quote(&s),
                    c.escape_unicode()
                ),
            );
            return None;
        }
        if !is_absolute(&s) {
            let at = self.positions.0[key];
            self.error_at(
                at,
                format!(
                    "{key} = {}: a relative path: use an absolute path (a config is copied \
                     between machines and run from any directory)",
                    quote(&s)
                ),
            );
            return None;
        }
        Some(PathBuf::from(s))
    }

    /// A location: https://, http://, file:// or an absolute directory, parsed once here.
    fn location(
        &mut self,
        key: &'static str,
        v: &Option<Spanned<String>>,
    ) -> Option<GivenLocation> {
        let s = self.string(key, v)?;
        let at = self.positions.0[key];
        let problem = if s.contains("://") || is_absolute(&s) {
            match GivenLocation::parse(&s) {
                Ok(given) => return Some(given),
                Err(crate::fetch::FetchError::BadLocation { message, .. }) => message,
                Err(e) => e.to_string(),
            }
        } else {
            "neither a URL nor an absolute directory: use https://, http://, file://, or an \
             absolute path"
                .to_owned()
        };
        self.error_at(at, format!("{key} = {}: {problem}", quote(&s)));
        None
    }
}

impl Config {
    /// A config that answers nothing, to fill in (the wizard) and write with [`Config::to_toml`].
    pub fn new(path: PathBuf) -> Config {
        Config {
            path,
            profile: None,
            lang: None,
            pins: Pins::default(),
            driver: None,
            install: InstallConfig::default(),
            shell: ShellConfig::default(),
            sources: SourcesConfig::default(),
            positions: Positions::default(),
        }
    }

    /// Reads and checks the config file at `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = fs_err::read_to_string(path).map_err(|e| ConfigError {
            file: path.to_owned(),
            line: 0,
            column: 0,
            message: format!("cannot read the config file: {}", e.kind()),
        })?;
        Config::parse(&text, path)
    }

    /// Checks `text`, the contents of the config file `path` (named in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let (line, column) = match e.span() {
                Some(span) => line_col(text, span.start),
                None => (1, 1),
            };
            ConfigError {
                file: path.to_owned(),
                line,
                column,
                message: toml_message(&e),
            }
        })?;
        let mut c = Checker {
            text,
            path,
            positions: Positions::default(),
            errors: Vec::new(),
        };

        match &raw.version {
            None => c.error_at(
                (1, 1),
                format!("missing `version = {CONFIG_VERSION}`: the first line of a cudaup config"),
            ),
            Some(v) => {
                let at = c.place("version", v.span().start);
                if *v.get_ref() != CONFIG_VERSION {
                    c.error_at(
                        at,
                        format!(
                            "version = {}: this cudaup reads config version {CONFIG_VERSION}",
                            v.get_ref()
                        ),
                    );
                }
            }
        }

        let profile = c.string("profile", &raw.profile).and_then(|s| {
            let p = parse_profile(&s);
            if p.is_none() {
                let at = c.positions.0["profile"];
                c.error_at(
                    at,
                    format!(
                        "profile = {}: not a profile: use full, pytorch, tensorflow, jax, cuda-dev or cpu",
                        quote(&s)
                    ),
                );
            }
            p
        });
        let lang = c.string("lang", &raw.lang).and_then(|s| {
            let l = match s.as_str() {
                "en" => Some(Lang::En),
                "zh" => Some(Lang::Zh),
                _ => None,
            };
            if l.is_none() {
                let at = c.positions.0["lang"];
                c.error_at(at, format!("lang = {}: use en or zh", quote(&s)));
            }
            l
        });

        let pins = Pins {
            cuda: c.pin("pins.cuda", &raw.pins.cuda),
            cudnn: c.pin("pins.cudnn", &raw.pins.cudnn),
            torch: c.pin("pins.torch", &raw.pins.torch),
            tensorflow: c.pin("pins.tensorflow", &raw.pins.tensorflow),
            jax: c.pin("pins.jax", &raw.pins.jax),
            python: c.pin("pins.python", &raw.pins.python),
        };

        let driver = c.string("driver.policy", &raw.driver.policy).and_then(|s| {
            let d = DriverPolicy::parse(&s);
            if d.is_none() {
                let at = c.positions.0["driver.policy"];
                c.error_at(
                    at,
                    format!(
                        "driver.policy = {}: use auto, keep, latest, install, upgrade, skip, or a \
                         driver version such as 580.95.05",
                        quote(&s)
                    ),
                );
            }
            d
        });

        let install = InstallConfig {
            prefix: c.path("install.prefix", &raw.install.prefix),
            venv: c.path("install.venv", &raw.install.venv),
            no_cudnn: c.boolean("install.no_cudnn", &raw.install.no_cudnn),
            components: c.components("install.components", &raw.install.components),
            verify: c.boolean("install.verify", &raw.install.verify),
        };

        let modify_path = c.boolean("shell.modify_path", &raw.shell.modify_path);
        let shells = raw.shell.shells.as_ref().and_then(|list| {
            let at = c.place("shell.shells", list.span().start);
            if list.get_ref().is_empty() {
                c.error_at(
                    at,
                    "shell.shells = []: names no shell: leave the key out for the shells present, \
                     or set modify_path = false"
                        .to_owned(),
                );
                return None;
            }
            let mut names = Vec::new();
            for item in list.get_ref() {
                let at = line_col(text, item.span().start);
                let s = item.get_ref();
                match ShellName::parse(s) {
                    None if s.trim().is_empty() => c.error_at(
                        at,
                        "shell.shells: an empty name: use sh, bash, zsh, fish or powershell"
                            .to_owned(),
                    ),
                    None => c.error_at(
                        at,
                        format!(
                            "shell.shells: {} is not a shell cudaup hooks: use sh, bash, zsh, \
                             fish or powershell",
                            quote(s)
                        ),
                    ),
                    Some(n) if names.contains(&n) => {
                        c.error_at(at, format!("shell.shells: {} is listed twice", quote(s)))
                    }
                    Some(n) => names.push(n),
                }
            }
            (names.len() == list.get_ref().len()).then_some(names)
        });
        if let (Some(false), Some(_)) = (modify_path, &raw.shell.shells) {
            let at = c.positions.0["shell.shells"];
            c.error_at(
                at,
                "shell.shells: modify_path = false hooks no shell: remove one of the two"
                    .to_owned(),
            );
        }
        let shell = ShellConfig {
            modify_path,
            shells,
        };

        let source = c
            .string("sources.source", &raw.sources.source)
            .and_then(|s| {
                let k = match s.as_str() {
                    "redist" => Some(SourceKind::Redist),
                    "wheels" => Some(SourceKind::Wheels),
                    _ => None,
                };
                if k.is_none() {
                    let at = c.positions.0["sources.source"];
                    c.error_at(
                        at,
                        format!("sources.source = {}: use redist or wheels", quote(&s)),
                    );
                }
                k
            });
        let torch_source = c
            .string("sources.torch_source", &raw.sources.torch_source)
            .and_then(|v| {
                let parsed = v.parse::<crate::model::request::TorchSource>();
                if parsed.is_err() {
                    let at = c.positions.0["sources.torch_source"];
                    c.error_at(
                        at,
                        format!(
                            "sources.torch_source = {}: use auto, pytorch or pypi",
                            quote(&v)
                        ),
                    );
                }
                parsed.ok()
            });
        let sources = SourcesConfig {
            source,
            nvidia_mirror: c.location("sources.nvidia_mirror", &raw.sources.nvidia_mirror),
            index_url: c.location("sources.index_url", &raw.sources.index_url),
            pypi_index: c.location("sources.pypi_index", &raw.sources.pypi_index),
            torch_index: c.location("sources.torch_index", &raw.sources.torch_index),
            torch_source,
            allow_http: c.boolean("sources.allow_http", &raw.sources.allow_http),
        };

        let config = Config {
            path: path.to_owned(),
            profile,
            lang,
            pins,
            driver,
            install,
            shell,
            sources,
            positions: c.positions.clone(),
        };
        if c.errors.is_empty() {
            if let Some(p) = config.profile {
                c.errors.extend(config.profile_conflicts(p));
            }
            c.errors.extend(config.own_conflicts());
        }
        match c.errors.into_iter().min_by_key(|e| (e.line, e.column)) {
            Some(e) => Err(e),
            None => Ok(config),
        }
    }

    /// Checks the file's answers against `profile`, when it comes from elsewhere than the file
    /// (a `--profile` flag): e.g. a CUDA pin with the cpu profile. [`Config::parse`] already
    /// does this for a profile the file names.
    pub fn check_profile(&self, profile: Profile) -> Result<(), ConfigError> {
        match self.profile_conflicts(profile).into_iter().next() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Checks the file's pins against a source kind that comes from elsewhere (a `--source`
    /// flag): wheels carry CUDA 13 and newer only.
    pub fn check_source(&self, source: SourceKind) -> Result<(), ConfigError> {
        match self.source_conflict(source, "pins.cuda") {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// An error at `key`'s position (line 1, column 1 when the file has no such key).
    fn error(&self, key: &str, message: String) -> ConfigError {
        let (line, column) = self.positions.0.get(key).copied().unwrap_or((1, 1));
        ConfigError {
            file: self.path.clone(),
            line,
            column,
            message,
        }
    }

    /// Keys that make no sense with `profile`, in file order.
    fn profile_conflicts(&self, profile: Profile) -> Vec<ConfigError> {
        let mut errors = Vec::new();
        let mut no = |key: &str, what: &str| {
            errors.push(self.error(
                key,
                format!("{key}: the {profile} profile {what}: remove it or choose another profile"),
            ))
        };
        let cpu = profile == Profile::Cpu;
        if cpu && self.pins.cuda.is_some() {
            no("pins.cuda", "installs no CUDA");
        }
        if cpu && self.pins.cudnn.is_some() {
            no("pins.cudnn", "installs no cuDNN");
        }
        if !profile.has_torch() && self.pins.torch.is_some() {
            no("pins.torch", "installs no PyTorch");
        }
        if profile != Profile::Tensorflow && self.pins.tensorflow.is_some() {
            no("pins.tensorflow", "installs no TensorFlow");
        }
        if profile != Profile::Jax && self.pins.jax.is_some() {
            no("pins.jax", "installs no JAX");
        }
        if cpu
            && matches!(
                self.driver,
                Some(DriverPolicy::Latest | DriverPolicy::Version(_))
            )
        {
            no("driver.policy", "installs no driver");
        }
        if !profile.has_toolkit() && self.install.prefix.is_some() {
            no("install.prefix", "installs no CUDA toolkit");
        }
        if !profile.has_toolkit() && self.install.no_cudnn == Some(true) {
            no("install.no_cudnn", "installs no toolkit cuDNN to leave out");
        }
        if !profile.has_toolkit() && self.install.components.is_some() {
            no("install.components", "installs no CUDA toolkit");
        }
        if profile == Profile::CudaDev && self.install.venv.is_some() {
            no("install.venv", "installs no framework into a venv");
        }
        errors.sort_by_key(|e| (e.line, e.column));
        errors
    }

    /// Answers that contradict each other whatever the profile.
    fn own_conflicts(&self) -> Vec<ConfigError> {
        let mut errors = Vec::new();
        if self.install.no_cudnn == Some(true) && self.pins.cudnn.is_some() {
            errors.push(self.error(
                "install.no_cudnn",
                "install.no_cudnn = true leaves out the cuDNN that pins.cudnn pins: remove one \
                 of the two"
                    .to_owned(),
            ));
        }
        if let Some(source) = self.sources.source {
            errors.extend(self.source_conflict(source, "sources.source"));
        }
        if self.sources.allow_http != Some(true) {
            let s = &self.sources;
            for (key, value) in [
                ("sources.nvidia_mirror", &s.nvidia_mirror),
                ("sources.index_url", &s.index_url),
                ("sources.pypi_index", &s.pypi_index),
                ("sources.torch_index", &s.torch_index),
            ] {
                if value.as_ref().is_some_and(GivenLocation::is_plain_http) {
                    errors.push(self.error(
                        key,
                        format!(
                            "{key}: a plain http:// location: set allow_http = true in [sources] \
                             to accept it (bytes are still checked against the sha256s it serves, \
                             but nothing proves those are genuine)"
                        ),
                    ));
                }
            }
        }
        errors
    }

    /// A CUDA pin below 13 with the wheels source, reported at `at_key`.
    fn source_conflict(&self, source: SourceKind, at_key: &str) -> Option<ConfigError> {
        let pin = self.pins.cuda.as_ref()?;
        let major = pin.version().major();
        (source == SourceKind::Wheels && major < 13).then(|| {
            self.error(
                at_key,
                format!(
                    "source = \"wheels\" with pins.cuda = {}: NVIDIA's CUDA wheels start at CUDA \
                     13: use source = \"redist\", or pin CUDA 13 or newer",
                    quote(&pin.to_string())
                ),
            )
        })
    }

    /// The file holding these answers, commented so a person can edit it: every key the config
    /// answers is set, every other one is a commented-out example. [`Config::parse`] of the
    /// result equals `self` (as long as `self` is a valid config).
    pub fn to_toml(&self) -> String {
        let mut o = String::new();
        let line = |o: &mut String, key: &str, value: Option<String>, example: &str| {
            match value {
                Some(v) => writeln!(o, "{key} = {v}"),
                None => writeln!(o, "# {key} = {example}"),
            }
            .expect("writing to a String");
        };
        let s = |v: &Option<GivenLocation>| v.as_ref().map(|l| quote(l.as_str()));
        let b = |v: Option<bool>| v.map(|b| b.to_string());
        let p = |v: &Option<PathBuf>| v.as_deref().map(|p| quote(&p.to_string_lossy()));

        o.push_str(
            "# cudaup unattended config: `cudaup install --config FILE` takes every answer from \
             here.\n# Command-line flags win over CUDAUP_* environment variables, which win over \
             this file.\n# A key left out (or commented out) takes the built-in default.\n\n",
        );
        o.push_str("# The format of this file.\n");
        writeln!(o, "version = {CONFIG_VERSION}").expect("writing to a String");
        o.push_str(
            "\n# What to set up: full (driver + CUDA + cuDNN + PyTorch), pytorch, tensorflow, jax,\n\
             # cuda-dev (driver + CUDA + cuDNN) or cpu. Default: full.\n",
        );
        line(
            &mut o,
            "profile",
            self.profile.map(|p| quote(p.name())),
            "\"full\"",
        );
        o.push_str("# The language of messages: en or zh.\n");
        line(&mut o, "lang", self.lang.map(|l| quote(l.name())), "\"en\"");

        o.push_str(
            "\n[pins]\n# Fixed versions, matched by prefix (\"12.8\" matches 12.8.1). Default: \
             the newest that fits.\n",
        );
        line(
            &mut o,
            "cuda",
            self.pins.cuda.as_ref().map(|p| quote(&p.to_string())),
            "\"12.8\"",
        );
        line(
            &mut o,
            "cudnn",
            self.pins.cudnn.as_ref().map(|p| quote(&p.to_string())),
            "\"9.10\"",
        );
        line(
            &mut o,
            "torch",
            self.pins.torch.as_ref().map(|p| quote(&p.to_string())),
            "\"2.8\"",
        );
        line(
            &mut o,
            "tensorflow",
            self.pins.tensorflow.as_ref().map(|p| quote(&p.to_string())),
            "\"2.20\"",
        );
        line(
            &mut o,
            "jax",
            self.pins.jax.as_ref().map(|p| quote(&p.to_string())),
            "\"0.12\"",
        );
        line(
            &mut o,
            "python",
            self.pins.python.as_ref().map(|p| quote(&p.to_string())),
            "\"3.12\"",
        );

        o.push_str(
            "\n[driver]\n# auto (keep the installed driver when a good stack fits it, else the \
             newest branch),\n# keep (never change it), latest / install / upgrade (the newest \
             branch every GPU supports),\n# skip (never touch it, and do not fail without one), \
             or a version such as \"580.95.05\".\n",
        );
        line(
            &mut o,
            "policy",
            self.driver.as_ref().map(|d| quote(&d.to_string())),
            "\"auto\"",
        );

        o.push_str(
            "\n[install]\n# The toolkit prefix (absolute). Default: \
             $CUDAUP_HOME/toolkits/cuda-<version>.\n",
        );
        line(&mut o, "prefix", p(&self.install.prefix), "\"/opt/cuda\"");
        o.push_str(
            "# The virtual environment for PyTorch / TensorFlow (absolute). Default: \
             $CUDAUP_HOME/venvs/<profile>.\n",
        );
        line(
            &mut o,
            "venv",
            p(&self.install.venv),
            "\"/opt/venvs/torch\"",
        );
        o.push_str("# Leave cuDNN out of the toolkit.\n");
        line(&mut o, "no_cudnn", b(self.install.no_cudnn), "false");
        o.push_str(
            "# The toolkit's components: minimal, standard, complete, or a list (\"standard,-npp\").\n",
        );
        line(
            &mut o,
            "components",
            self.install.components.as_deref().map(quote),
            "\"standard\"",
        );
        o.push_str("# Run `cudaup verify` afterwards.\n");
        line(&mut o, "verify", b(self.install.verify), "true");

        o.push_str("\n[shell]\n# Hook cudaup's env script into shell rc files.\n");
        line(&mut o, "modify_path", b(self.shell.modify_path), "true");
        o.push_str(
            "# Which shells to hook: sh, bash, zsh, fish, powershell. Default: those present.\n",
        );
        let shells = self.shell.shells.as_ref().map(|list| {
            let names: Vec<String> = list.iter().map(|n| quote(n.name())).collect();
            format!("[{}]", names.join(", "))
        });
        line(&mut o, "shells", shells, "[\"bash\", \"zsh\"]");

        o.push_str(
            "\n[sources]\n# redist (NVIDIA's archives) or wheels (NVIDIA's CUDA 13+ wheels from \
             a package index).\n",
        );
        line(
            &mut o,
            "source",
            self.sources.source.map(|k| quote(k.name())),
            "\"redist\"",
        );
        o.push_str(
            "# A copy of NVIDIA's download layout: https://, http://, file:// or an absolute \
             directory.\n",
        );
        line(
            &mut o,
            "nvidia_mirror",
            s(&self.sources.nvidia_mirror),
            "\"https://developer.download.nvidia.com\"",
        );
        o.push_str("# The package index for source = \"wheels\".\n");
        line(
            &mut o,
            "index_url",
            s(&self.sources.index_url),
            "\"https://pypi.org/simple\"",
        );
        o.push_str("# PyPI or a mirror of it, for the frameworks and their dependencies.\n");
        line(
            &mut o,
            "pypi_index",
            s(&self.sources.pypi_index),
            "\"https://pypi.org/simple\"",
        );
        o.push_str("# PyTorch's wheel index or a mirror of its layout.\n");
        line(
            &mut o,
            "torch_index",
            s(&self.sources.torch_index),
            "\"https://download.pytorch.org/whl\"",
        );
        o.push_str(
            "# Which index may serve PyTorch: auto (ask each, take the first that has the planned \
             build), pytorch, or pypi (when the planned build is the one PyPI serves).\n",
        );
        line(
            &mut o,
            "torch_source",
            self.sources.torch_source.map(|t| quote(t.name())),
            "\"auto\"",
        );
        o.push_str("# Accept plain http:// locations above.\n");
        line(&mut o, "allow_http", b(self.sources.allow_http), "false");
        o
    }
}

/// TOML's message, with a hint for the commonest slip: a version written as a bare number.
fn toml_message(e: &toml::de::Error) -> String {
    let message = e.message().trim_end();
    if message.starts_with("invalid type: floating point") && message.ends_with("expected a string")
    {
        format!("{message}: put the version in quotes")
    } else {
        message.to_owned()
    }
}

/// `s` as a TOML basic string, escaped, and cut after 80 characters (a value may be huge).
fn quote(s: &str) -> String {
    const MAX: usize = 80;
    match s.char_indices().nth(MAX) {
        Some((at, _)) => format!(
            "{}… ({} bytes in all)",
            toml::Value::String(s[..at].to_owned()),
            s.len()
        ),
        None => toml::Value::String(s.to_owned()).to_string(),
    }
}

fn parse_profile(s: &str) -> Option<Profile> {
    [
        Profile::Full,
        Profile::Pytorch,
        Profile::Tensorflow,
        Profile::Jax,
        Profile::CudaDev,
        Profile::Cpu,
    ]
    .into_iter()
    .find(|p| p.name() == s)
}

/// Plain dotted numbers: `12`, `12.8`, `580.95.05`.
fn is_version(s: &str) -> bool {
    !s.is_empty()
        && s.split('.')
            .all(|p| !p.is_empty() && p.len() <= 9 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Absolute on this machine, or rooted (`/opt/cuda` read on Windows).
fn is_absolute(s: &str) -> bool {
    let p = Path::new(s);
    p.is_absolute() || p.has_root()
}

/// Where the key of the value starting at `value_start` begins: back over `=`, then over the
/// (possibly dotted, possibly quoted) key. Falls back to the value itself.
fn key_start(text: &str, value_start: usize) -> usize {
    let b = text.as_bytes();
    let bare = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
    let skip_blanks = |i: &mut usize| {
        while *i > 0 && matches!(b[*i - 1], b' ' | b'\t') {
            *i -= 1;
        }
    };
    let mut i = value_start.min(b.len());
    skip_blanks(&mut i);
    if i == 0 || b[i - 1] != b'=' {
        return value_start;
    }
    i -= 1;
    loop {
        skip_blanks(&mut i);
        if i == 0 {
            return value_start;
        }
        match b[i - 1] {
            q @ (b'"' | b'\'') => match text[..i - 1].rfind(q as char) {
                Some(j) => i = j,
                None => return value_start,
            },
            c if bare(c) => {
                while i > 0 && bare(b[i - 1]) {
                    i -= 1;
                }
            }
            _ => return value_start,
        }
        let segment = i;
        skip_blanks(&mut i);
        if i > 0 && b[i - 1] == b'.' {
            i -= 1;
        } else {
            return segment;
        }
    }
}

#[cfg(test)]
mod tests;
