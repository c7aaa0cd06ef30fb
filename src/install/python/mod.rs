//! Python virtual environments for the frameworks: create one with `python -m venv` (or
//! `uv venv` when uv is on PATH), install the planned wheels with pip (or uv) from the plan's
//! index and the configured mirrors, keep the installer's log, and check the result.

pub mod check;
pub mod step;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::world::runner::Runner;

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
    /// The installed framework is not what was planned.
    #[error("{0}")]
    Check(String),
    /// A directory that is not a venv is in the way.
    #[error("{0} exists and is not a Python virtual environment; choose another --venv")]
    NotAVenv(String),
    /// A program could not be started.
    #[error("{0}")]
    Run(String),
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
        if cfg!(windows) {
            self.dir.join("Scripts").join("python.exe")
        } else {
            self.dir.join("bin").join("python")
        }
    }

    /// Whether `dir` holds a venv.
    pub fn exists(&self) -> bool {
        self.dir.join("pyvenv.cfg").is_file()
    }
}

/// What to pip-install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packages {
    /// Requirements (`torch==2.14.1+cu130`).
    pub requirements: Vec<String>,
    /// The first index.
    pub index_url: String,
    /// More indexes.
    pub extra_index_urls: Vec<String>,
}

const LONG: Duration = Duration::from_secs(3 * 3600);

/// One run of the Python tools: the runner, the tool, the log file and where interesting lines
/// go.
pub struct Session<'a> {
    runner: &'a dyn Runner,
    tool: Tool,
    log: fs_err::File,
    log_path: PathBuf,
    show: &'a mut dyn FnMut(&str),
}

impl<'a> Session<'a> {
    /// A session logging to `log_path` (created, with its directory).
    pub fn new(
        runner: &'a dyn Runner,
        tool: Tool,
        log_path: PathBuf,
        show: &'a mut dyn FnMut(&str),
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
            show,
        })
    }

    /// The log file.
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// Runs a step, logging every line and showing the interesting ones.
    fn step(
        &mut self,
        what: &str,
        program: &Path,
        args: &[&str],
    ) -> Result<crate::world::runner::Output, PyEnvError> {
        writeln!(self.log, "$ {} {}", program.display(), args.join(" "))?;
        let mut lines: Vec<String> = Vec::new();
        let log = &mut self.log;
        let show = &mut self.show;
        let out = self
            .runner
            .run_streaming(
                program,
                args,
                &[
                    ("PIP_NO_INPUT", "1"),
                    ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
                ],
                LONG,
                &mut |line| {
                    let _ = writeln!(log, "{line}");
                    let l = line.trim_start();
                    if [
                        "Collecting",
                        "Downloading",
                        "Installing",
                        "Successfully",
                        "Resolved",
                        "Prepared",
                        "Installed",
                        "+",
                    ]
                    .iter()
                    .any(|p| l.starts_with(p))
                    {
                        show(l);
                    }
                    lines.push(line.to_owned());
                },
            )
            .map_err(|e| PyEnvError::Run(e.to_string()))?;
        if !out.success() {
            let tail = lines
                .iter()
                .rev()
                .take(15)
                .rev()
                .cloned()
                .collect::<Vec<_>>()
                .join("\n");
            return Err(PyEnvError::Failed {
                what: what.to_owned(),
                code: out.status.unwrap_or(-1),
                tail,
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
            Ok(_) => Ok(true),
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
    /// package).
    pub fn reinstall(&mut self, venv: &Venv, packages: &Packages) -> Result<(), PyEnvError> {
        self.install_with(venv, packages, true, &[])
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
                uv.clone()
            }
            Tool::Pip => {
                args.extend(["-m", "pip", "install", "--progress-bar", "off"].map(str::to_owned));
                python.clone()
            }
        };
        if force {
            args.push("--force-reinstall".into());
            args.push("--no-deps".into());
        }
        args.push("--index-url".into());
        args.push(packages.index_url.clone());
        for extra in &packages.extra_index_urls {
            args.push("--extra-index-url".into());
            args.push(extra.clone());
        }
        // Plain-http mirrors (allowed with --allow-http) must be named to pip and uv as well.
        for url in std::iter::once(&packages.index_url).chain(&packages.extra_index_urls) {
            if let Some(host) = url
                .strip_prefix("http://")
                .and_then(|r| r.split('/').next())
            {
                args.push(match self.tool {
                    Tool::Uv(_) => "--allow-insecure-host".into(),
                    Tool::Pip => "--trusted-host".into(),
                });
                args.push(host.split(':').next().unwrap_or(host).to_owned());
            }
        }
        if !constraints.is_empty() {
            let file = self.log_path.with_extension("constraints.txt");
            fs_err::write(&file, constraints.join("\n") + "\n")?;
            writeln!(
                self.log,
                "# constraints ({}): {}",
                file.display(),
                constraints.join(", ")
            )?;
            args.push("-c".into());
            args.push(file.display().to_string());
        }
        args.extend(packages.requirements.iter().cloned());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        self.step("installing the framework", &program, &refs)?;
        Ok(())
    }
}

/// Runs `script` with the venv's Python and parses the one JSON line it prints.
pub fn report<T: for<'de> Deserialize<'de>>(
    runner: &dyn Runner,
    venv: &Venv,
    script: &str,
) -> Result<T, PyEnvError> {
    let out = runner
        .run(&venv.python(), &["-c", script], Duration::from_secs(600))
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
    /// Seconds since the Unix epoch.
    pub installed_at: u64,
}

impl VenvReceipt {
    /// Writes it to `$CUDAUP_HOME/receipts/venv-<name>.json`.
    pub fn register(&self, home: &Path) -> std::io::Result<PathBuf> {
        crate::install::receipt_file::register(
            home,
            crate::install::receipt_file::VENV,
            &self.venv,
            self,
        )
    }
}
