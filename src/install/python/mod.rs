//! Python virtual environments for the frameworks: create one with `python -m venv` (or
//! `uv venv` when uv is on PATH), install the planned wheels with pip (or uv) from the plan's
//! index and the configured mirrors, keep the installer's log, and check the result.

pub mod bundle;
pub mod check;
pub mod marker;
pub mod mirrors;
pub mod preload;
pub mod probe;
pub mod progress;
pub mod proof;
pub mod record;
pub mod route;
pub mod step;
pub mod view;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::world::progress::Reporter;
use crate::world::runner::Runner;

use progress::PipLines;

/// Why the Python step failed.
#[derive(Debug, thiserror::Error)]
pub enum PyEnvError {
    /// The interpreter cannot make venvs (Debian/Ubuntu without python3-venv).
    #[error("{python} cannot create a virtual environment: {detail}; install the venv module (Debian/Ubuntu: `sudo apt-get install python3-venv`, or python{minor}-venv), or put uv on PATH")]
    NoVenv {
        /// The interpreter.
        python: String,
        /// Its major.minor.
        minor: String,
        /// What it said.
        detail: String,
    },
    /// A command failed; the log has the details.
    #[error("{what} failed (exit {code}); the last lines:\n{tail}\nfull log: {log}")]
    Failed {
        /// What was being done.
        what: String,
        /// Exit status (-1: killed or timed out).
        code: i32,
        /// The end of its output.
        tail: String,
        /// The log file.
        log: String,
    },
    /// Ctrl-C while pip or uv ran (exit code 130): one line saying what is left, and that the
    /// same command resumes from the wheels already in the cache.
    #[error("cancelled (Ctrl-C) while {what}: {left}; the same command again resumes {from}")]
    Cancelled {
        /// What was running (`installing the framework`).
        what: String,
        /// What is left on the machine.
        left: String,
        /// Where it resumes from (`from the wheels downloaded in full, kept in DIR`).
        from: String,
    },
    /// No index, mirror or bundle can serve the planned framework (nothing was changed).
    #[error(transparent)]
    NoRoute(#[from] route::NoRoute),
    /// The installed framework is not what was planned.
    #[error("{0}")]
    Check(String),
    /// A venv given by the user (`bench --venv`) has no interpreter.
    #[error("--venv {venv}: not a Python environment (no {python})")]
    NoInterpreter {
        /// The directory given.
        venv: String,
        /// The interpreter it lacks.
        python: String,
    },
    /// A directory that is not a venv is in the way.
    #[error("{0} exists and is not a Python virtual environment; choose another --venv")]
    NotAVenv(String),
    /// A program could not be started.
    #[error("{0}")]
    Run(String),
    /// The plan lacks what the framework step needs (only a resolver bug gets here).
    #[error("{0}")]
    Plan(String),
    /// This machine cannot run the step (no Python in the stack's range is installed).
    #[error("{0}")]
    Unsupported(String),
    /// Local I/O.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The installer to drive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tool {
    /// `python -m venv` and `python -m pip`.
    Pip,
    /// `uv venv` and `uv pip install`, much faster.
    Uv(PathBuf),
}

/// A venv directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Venv {
    /// Its root.
    pub dir: PathBuf,
}

impl Venv {
    /// The venv's interpreter.
    pub fn python(&self) -> PathBuf {
        crate::model::layout::Prefix::at(&self.dir).venv_python()
    }

    /// Whether `dir` holds a venv.
    pub fn exists(&self) -> bool {
        self.dir.join("pyvenv.cfg").is_file()
    }
}

/// What to pip-install, and from where.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packages {
    /// Requirements (`torch==2.14.1+cu130`).
    pub requirements: Vec<String>,
    /// The first index (empty with `no_index`).
    pub index_url: String,
    /// More indexes.
    pub extra_index_urls: Vec<String>,
    /// Pages or folders listing wheels (`--find-links`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub find_links: Vec<String>,
    /// Use no index at all, only `find_links` (a folder of wheels).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_index: bool,
    /// Ignore pip's and uv's own configuration (an offline bundle: a config file's extra
    /// index would send them to the network).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub isolated: bool,
    /// `install --locked`: every distribution to install, each as `name==version
    /// --hash=sha256:…` (the lock's wheels and their dependencies). When set, these lines are
    /// the requirements, passed as a file with `--require-hashes`: pip and uv then check every
    /// download against the lock before anything is installed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hashed: Vec<String>,
}

impl Packages {
    /// The index flags for `tool`. uv prefers `--extra-index-url` over `--index-url` and stops
    /// at the first index that has a package, so the route's own index goes there for uv: a
    /// tagged `torch==…+cu132` is then found on PyTorch's index, not missed on PyPI.
    pub fn index_args(&self, tool: &Tool) -> Vec<String> {
        let mut args = Vec::new();
        let (first, extra): (Option<&String>, Vec<&String>) = match tool {
            Tool::Uv(_) if !self.extra_index_urls.is_empty() && !self.index_url.is_empty() => (
                self.extra_index_urls.first(),
                std::iter::once(&self.index_url)
                    .chain(self.extra_index_urls.iter().skip(1))
                    .collect(),
            ),
            _ => (
                Some(&self.index_url).filter(|u| !u.is_empty()),
                self.extra_index_urls.iter().collect(),
            ),
        };
        if self.no_index {
            args.push("--no-index".to_owned());
        } else if let Some(first) = first {
            args.extend(["--index-url".to_owned(), first.clone()]);
        }
        if !self.no_index {
            for e in extra {
                args.extend(["--extra-index-url".to_owned(), e.clone()]);
            }
        }
        for f in &self.find_links {
            args.extend(["--find-links".to_owned(), f.clone()]);
        }
        // Plain-http mirrors (allowed with --allow-http) must be named to pip and uv as well.
        let all = std::iter::once(&self.index_url)
            .chain(&self.extra_index_urls)
            .chain(&self.find_links);
        for url in all {
            if let Some(host) = url
                .strip_prefix("http://")
                .and_then(|r| r.split('/').next())
            {
                args.push(match tool {
                    Tool::Uv(_) => "--allow-insecure-host".into(),
                    Tool::Pip => "--trusted-host".into(),
                });
                args.push(host.split(':').next().unwrap_or(host).to_owned());
            }
        }
        args
    }

    /// Where the packages come from, in words (`https://pypi.org/simple`, `--find-links DIR`).
    pub fn origin(&self) -> String {
        let mut parts = Vec::new();
        if !self.no_index && !self.index_url.is_empty() {
            parts.push(self.index_url.clone());
        }
        parts.extend(self.find_links.iter().map(|f| format!("--find-links {f}")));
        parts.join(" ")
    }
}

/// The machine a download is for (`pip download --python-version … --platform …`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DownloadTarget {
    /// major.minor of CPython.
    pub python: String,
    /// Platform tags, most specific first (`manylinux_2_28_x86_64`, …, `linux_x86_64`).
    pub platforms: Vec<String>,
}

const LONG: Duration = Duration::from_secs(3 * 3600);

/// One run of the Python tools: the runner, the tool, the log file and the progress display.
pub struct Session<'a> {
    runner: &'a dyn Runner,
    tool: Tool,
    log: fs_err::File,
    log_path: PathBuf,
    reporter: &'a dyn Reporter,
    next_id: usize,
    cache: Option<PathBuf>,
    cancel: Option<&'a AtomicBool>,
}

impl<'a> Session<'a> {
    /// A session logging to `log_path` (created, with its directory) and reporting progress to
    /// `reporter`.
    pub fn new(
        runner: &'a dyn Runner,
        tool: Tool,
        log_path: PathBuf,
        reporter: &'a dyn Reporter,
    ) -> std::io::Result<Self> {
        if let Some(dir) = log_path.parent() {
            fs_err::create_dir_all(dir)?;
        }
        let log = fs_err::File::create(&log_path)?;
        Ok(Self {
            runner,
            tool,
            log,
            log_path,
            reporter,
            next_id: 0,
            cache: None,
            cancel: None,
        })
    }

    /// Gives uv and pip their caches under `dir`, cudaup's download cache: `uv/`
    /// (`UV_CACHE_DIR`) and `pip/` (`PIP_CACHE_DIR`). cudaup's home keeps them, so a re-install,
    /// a second venv of the same pins or the run after a Ctrl-C takes the wheels already
    /// downloaded from there, and `uninstall --purge` takes them away.
    pub fn set_cache(&mut self, dir: Option<PathBuf>) {
        self.cache = dir;
    }

    /// Ctrl-C's flag: a step that fails once it is set is [`PyEnvError::Cancelled`] (pip and
    /// uv get the terminal's SIGINT with cudaup and stop), not a failure.
    pub fn set_cancel(&mut self, cancel: Option<&'a AtomicBool>) {
        self.cancel = cancel;
    }

    fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::SeqCst))
    }

    /// The cache the tool keeps its wheels in.
    fn tool_cache(&self) -> Option<PathBuf> {
        let sub = match self.tool {
            Tool::Uv(_) => "uv",
            Tool::Pip => "pip",
        };
        self.cache.as_ref().map(|d| d.join(sub))
    }

    /// The log file.
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// Runs a step: every line to the log, progress to the reporter, the tail in the error.
    fn step(
        &mut self,
        what: &str,
        program: &Path,
        args: &[&str],
    ) -> Result<crate::world::runner::Output, PyEnvError> {
        writeln!(self.log, "$ {} {}", program.display(), args.join(" "))?;
        let cache = self.tool_cache().map(|d| d.display().to_string());
        let resume_from = format!(
            "from the wheels downloaded in full, kept in {}",
            cache.as_deref().unwrap_or("pip's or uv's own cache")
        );
        // `uv venv`, `python -m venv`: said as what they do.
        let doing = if what.ends_with("venv") {
            "making the venv"
        } else {
            what
        };
        // Ctrl-C before the step started: it does not start.
        if self.cancelled() {
            return Err(PyEnvError::Cancelled {
                what: doing.to_owned(),
                left: String::new(),
                from: resume_from,
            });
        }
        let log = &mut self.log;
        let mut lines = PipLines::new(self.reporter, self.next_id);
        let mut env = vec![
            ("PIP_NO_INPUT", "1"),
            ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
        ];
        match &self.tool {
            Tool::Uv(_) => {
                // The platform's certificate store, as cudaup's own downloads and pip use: uv's
                // bundled roots refuse a network whose TLS is re-signed by a local authority (a
                // company proxy, this CI's mirror), where pip and cudaup succeed.
                env.push(("UV_SYSTEM_CERTS", "1"));
                if let Some(dir) = &cache {
                    env.push(("UV_CACHE_DIR", dir.as_str()));
                }
            }
            Tool::Pip => {
                if let Some(dir) = &cache {
                    env.push(("PIP_CACHE_DIR", dir.as_str()));
                }
            }
        }
        let out = self
            .runner
            .run_streaming(program, args, &env, LONG, &mut |line| {
                let _ = writeln!(log, "{line}");
                lines.line(line);
            })
            .map_err(|e| PyEnvError::Run(e.to_string()))?;
        lines.finish(out.success());
        self.next_id = lines.next_id();
        let _ = writeln!(self.log, "# exit {:?}", out.status);
        if !out.success() && self.cancelled() {
            return Err(PyEnvError::Cancelled {
                what: doing.to_owned(),
                left: String::new(),
                from: resume_from,
            });
        }
        if !out.success() {
            return Err(PyEnvError::Failed {
                what: what.to_owned(),
                code: out.status.unwrap_or(-1),
                tail: lines.tail(),
                log: self.log_path.display().to_string(),
            });
        }
        Ok(out)
    }

    /// Creates `venv` from `python` (a no-op returning `false` if it is already a venv).
    pub fn create(
        &mut self,
        python: &Path,
        python_version: &str,
        venv: &Venv,
    ) -> Result<bool, PyEnvError> {
        if venv.exists() {
            return Ok(false);
        }
        if venv.dir.exists()
            && fs_err::read_dir(&venv.dir)
                .map(|mut d| d.next().is_some())
                .unwrap_or(true)
        {
            return Err(PyEnvError::NotAVenv(venv.dir.display().to_string()));
        }
        let dir = venv.dir.display().to_string();
        let python_arg = python.display().to_string();
        let result = match self.tool.clone() {
            Tool::Uv(uv) => self.step("uv venv", &uv, &["venv", "--python", &python_arg, &dir]),
            Tool::Pip => self.step("python -m venv", python, &["-m", "venv", &dir]),
        };
        match result {
            Ok(_) => {
                // Marked before anything is installed, so a venv cudaup made is known as its.
                if let Err(e) = marker::mark(&venv.dir) {
                    let _ = fs_err::remove_dir_all(&venv.dir);
                    return Err(e.into());
                }
                Ok(true)
            }
            Err(PyEnvError::Failed { tail, .. })
                if tail.contains("ensurepip") || tail.contains("No module named venv") =>
            {
                let _ = fs_err::remove_dir_all(&venv.dir);
                Err(PyEnvError::NoVenv {
                    python: python_arg,
                    minor: python_version
                        .split('.')
                        .take(2)
                        .collect::<Vec<_>>()
                        .join("."),
                    detail: tail.lines().last().unwrap_or("").to_owned(),
                })
            }
            Err(e) => {
                let _ = fs_err::remove_dir_all(&venv.dir);
                Err(e)
            }
        }
    }

    /// Installs `packages` into `venv`.
    pub fn install(&mut self, venv: &Venv, packages: &Packages) -> Result<(), PyEnvError> {
        self.install_with(venv, packages, false, &[])
    }

    /// Installs `packages` with the plan's constraints (`nvidia-cudnn-cu12<9.11`): written to a
    /// file beside the log and passed as `-c`, so what the requirements leave floating stays
    /// within what every planned GPU runs.
    pub fn install_constrained(
        &mut self,
        venv: &Venv,
        packages: &Packages,
        constraints: &[String],
    ) -> Result<(), PyEnvError> {
        self.install_with(venv, packages, false, constraints)
    }

    /// Installs `packages` again over whatever is there (repair: a CPU-only torch, a damaged
    /// package), then whatever of their dependencies is missing: the forced pass takes only the
    /// named packages (`--no-deps`: the gigabytes of CUDA wheels under them stay), so a
    /// dependency that is gone (a JAX CUDA plugin uninstalled, leaving a CPU-only jaxlib) comes
    /// back with the second, ordinary pass, which leaves everything present alone.
    pub fn reinstall(&mut self, venv: &Venv, packages: &Packages) -> Result<(), PyEnvError> {
        self.install_with(venv, packages, true, &[])?;
        self.install_with(venv, packages, false, &[])
    }

    /// pip's progress flag: `raw` counters from pip 24.1 (pypa/pip#12586), else none.
    fn progress_flag(&self, python: &Path) -> &'static str {
        let version = self
            .runner
            .run(python, &["-m", "pip", "--version"], Duration::from_secs(60))
            .ok()
            .filter(|o| o.success())
            .and_then(|o| {
                o.stdout
                    .split_whitespace()
                    .nth(1)
                    .and_then(crate::model::version::Version::parse)
            });
        match version {
            Some(v) if v >= crate::model::version::Version::parse("24.1").expect("a version") => {
                "raw"
            }
            _ => "off",
        }
    }

    /// The plan's constraints (`nvidia-cudnn-cu12<9.11`) as a file beside the log, and the
    /// `-c FILE` arguments that pass it.
    fn constraints_args(&mut self, constraints: &[String]) -> Result<Vec<String>, PyEnvError> {
        if constraints.is_empty() {
            return Ok(Vec::new());
        }
        let file = self.log_path.with_extension("constraints.txt");
        fs_err::write(&file, constraints.join("\n") + "\n")?;
        writeln!(
            self.log,
            "# constraints ({}): {}",
            file.display(),
            constraints.join(", ")
        )?;
        Ok(vec!["-c".into(), file.display().to_string()])
    }

    /// The lock's hashed requirements as a file beside the log, and `--require-hashes -r FILE`.
    fn hashed_args(&mut self, hashed: &[String]) -> Result<Vec<String>, PyEnvError> {
        let file = self.log_path.with_extension("locked.txt");
        fs_err::write(&file, hashed.join("\n") + "\n")?;
        writeln!(
            self.log,
            "# locked requirements with their sha256 ({}): {} distributions",
            file.display(),
            hashed.len()
        )?;
        Ok(vec![
            "--require-hashes".into(),
            "-r".into(),
            file.display().to_string(),
        ])
    }

    fn install_with(
        &mut self,
        venv: &Venv,
        packages: &Packages,
        force: bool,
        constraints: &[String],
    ) -> Result<(), PyEnvError> {
        let python = venv.python();
        let python_arg = python.display().to_string();
        let mut args: Vec<String> = Vec::new();
        let program: PathBuf = match &self.tool {
            Tool::Uv(uv) => {
                args.extend(["pip", "install", "--python", &python_arg].map(str::to_owned));
                if packages.isolated {
                    args.push("--no-config".into());
                }
                uv.clone()
            }
            Tool::Pip => {
                args.extend(["-m", "pip", "install", "--progress-bar"].map(str::to_owned));
                args.push(self.progress_flag(&python).to_owned());
                if packages.isolated {
                    args.push("--isolated".into());
                }
                python.clone()
            }
        };
        if force {
            args.push("--force-reinstall".into());
            args.push("--no-deps".into());
        }
        args.extend(packages.index_args(&self.tool));
        args.extend(self.constraints_args(constraints)?);
        if packages.hashed.is_empty() {
            args.extend(packages.requirements.iter().cloned());
        } else {
            args.extend(self.hashed_args(&packages.hashed)?);
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        self.step("installing the framework", &program, &refs)?;
        Ok(())
    }

    /// Downloads `packages` and all their dependencies as wheels for `target` into `dest`, with
    /// `python`'s pip (`pip download --only-binary=:all:`; uv has no download command), within
    /// the plan's `constraints`.
    pub fn download(
        &mut self,
        python: &Path,
        packages: &Packages,
        constraints: &[String],
        target: &DownloadTarget,
        dest: &Path,
    ) -> Result<(), PyEnvError> {
        let mut args: Vec<String> = ["-m", "pip", "download", "--progress-bar"]
            .map(str::to_owned)
            .to_vec();
        args.push(self.progress_flag(python).to_owned());
        if packages.isolated {
            args.push("--isolated".into());
        }
        let cp = format!("cp{}", target.python.replace('.', ""));
        args.extend(
            [
                "--only-binary=:all:",
                "--implementation",
                "cp",
                "--python-version",
                &target.python,
                "--abi",
                &cp,
                "--abi",
                "abi3",
                "--abi",
                "none",
            ]
            .map(str::to_owned),
        );
        for p in &target.platforms {
            args.extend(["--platform".to_owned(), p.clone()]);
        }
        args.extend(["-d".to_owned(), dest.display().to_string()]);
        // pip's tags for another machine are the ones given: the generic Tool::Pip flags apply.
        args.extend(packages.index_args(&Tool::Pip));
        args.extend(self.constraints_args(constraints)?);
        args.extend(packages.requirements.iter().cloned());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        self.step("downloading the framework", python, &refs)?;
        Ok(())
    }
}

/// Runs `script` with the venv's Python and parses the one JSON line it prints.
pub fn report<T: for<'de> Deserialize<'de>>(
    runner: &dyn Runner,
    venv: &Venv,
    script: &str,
) -> Result<T, PyEnvError> {
    report_with(runner, venv, script, &[])
}

/// [`report`], with arguments for the script (`sys.argv[1:]`).
pub fn report_with<T: for<'de> Deserialize<'de>>(
    runner: &dyn Runner,
    venv: &Venv,
    script: &str,
    args: &[&str],
) -> Result<T, PyEnvError> {
    let mut argv = vec!["-c", script];
    argv.extend_from_slice(args);
    let out = runner
        .run(&venv.python(), &argv, Duration::from_secs(600))
        .map_err(|e| PyEnvError::Run(e.to_string()))?;
    let line = out
        .stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .unwrap_or("");
    serde_json::from_str(line).map_err(|e| {
        PyEnvError::Check(format!(
            "could not read what {} reports ({e}): {}{}",
            venv.python().display(),
            out.stdout.trim(),
            out.stderr.trim()
        ))
    })
}

/// What a framework install leaves behind, for doctor, repair and uninstall.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VenvReceipt {
    /// Format version.
    pub schema_version: u32,
    /// The venv.
    pub venv: PathBuf,
    /// The interpreter it was made from.
    pub base_python: String,
    /// Whether cudaup created it (uninstall removes only what it created).
    pub created: bool,
    /// The profile.
    pub profile: String,
    /// What was installed, and from where.
    pub packages: Packages,
    /// The route it came from, and the build it had to be (a PyPI build carries no tag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<RouteRecord>,
    /// Seconds since the Unix epoch.
    pub installed_at: u64,
    /// The guard cudaup set up in the venv, and the files it wrote ([`crate::install::guard`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<Box<crate::install::guard::GuardRecord>>,
}

/// The route of an install, as the receipt keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteRecord {
    /// `pytorch`, `pypi` or `bundle`.
    pub route: route::RouteKind,
    /// The base it came from.
    pub base: String,
    /// The planned build (`cu132`, `cpu`); `None` for TensorFlow.
    pub variant: Option<String>,
}

impl VenvReceipt {
    /// Writes it to `$CUDAUP_HOME/receipts/venv-<name>.json`. A venv an earlier install created
    /// (its receipt says so and its marker agrees) stays created: a re-install never turns
    /// cudaup's venv into one uninstall leaves behind.
    pub fn register(&self, home: &Path) -> std::io::Result<PathBuf> {
        let kind = crate::install::receipt_file::VENV;
        let path = crate::install::home::Home::at(home)
            .receipts()
            .join(crate::install::receipt_file::file_name(kind, &self.venv));
        let previous: Option<VenvReceipt> = fs_err::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        let mut receipt = self.clone();
        receipt.created |= marker::still_created(previous.as_ref(), &self.venv);
        crate::install::receipt_file::register(home, kind, &self.venv, &receipt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_flags_for_pip_and_uv() {
        let p = Packages {
            requirements: vec!["torch==2.15.0+cu132".into()],
            index_url: "https://download.pytorch.org/whl/cu132".into(),
            extra_index_urls: vec!["http://10.0.0.2:8080/simple".into()],
            ..Packages::default()
        };
        assert_eq!(
            p.index_args(&Tool::Pip),
            [
                "--index-url",
                "https://download.pytorch.org/whl/cu132",
                "--extra-index-url",
                "http://10.0.0.2:8080/simple",
                "--trusted-host",
                "10.0.0.2"
            ]
        );
        // uv takes --extra-index-url first and stops at the first index with the package: the
        // route's own index goes there.
        assert_eq!(
            p.index_args(&Tool::Uv("uv".into())),
            [
                "--index-url",
                "http://10.0.0.2:8080/simple",
                "--extra-index-url",
                "https://download.pytorch.org/whl/cu132",
                "--allow-insecure-host",
                "10.0.0.2"
            ]
        );
        let flat = Packages {
            find_links: vec!["/srv/wheels".into()],
            no_index: true,
            ..Packages::default()
        };
        assert_eq!(
            flat.index_args(&Tool::Pip),
            ["--no-index", "--find-links", "/srv/wheels"]
        );
        assert_eq!(flat.origin(), "--find-links /srv/wheels");
    }
}
