//! The process environment, read once at the edge and handed to the core.
//!
//! Core code never calls `std::env::var`: tests build a [`Process`] with exactly the variables
//! they want, so detection and planning are hermetic (rustup's `Process`, code-anchors §6.3/2).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Environment variables, working directory and terminal facts of one cudaup invocation.
#[derive(Debug, Clone, Default)]
pub struct Process {
    vars: BTreeMap<String, String>,
    cwd: PathBuf,
    /// Whether standard output is a terminal (decides colours and progress bars).
    pub stdout_is_tty: bool,
    /// Whether standard input is a terminal (decides whether prompting is possible).
    pub stdin_is_tty: bool,
    /// The running binary, as the OS names it (`std::env::current_exe`): what `install` copies
    /// to `$CUDAUP_HOME/bin` and what `--version` and `doctor` compare that copy with.
    exe: Option<PathBuf>,
}

/// A variable's name as cudaup looks it up. Windows' names are case-insensitive (`Path` is
/// `PATH`): they are kept in capitals there, so `var("PATH")` finds them.
fn name(os_name: String) -> String {
    if cfg!(windows) {
        os_name.to_ascii_uppercase()
    } else {
        os_name
    }
}

impl Process {
    /// Snapshot of the real process: its environment, cwd and terminal status.
    pub fn from_os() -> Self {
        use std::io::IsTerminal;
        Self {
            vars: std::env::vars_os()
                .filter_map(|(k, v)| Some((name(k.into_string().ok()?), v.into_string().ok()?)))
                .collect(),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            stdout_is_tty: std::io::stdout().is_terminal(),
            stdin_is_tty: std::io::stdin().is_terminal(),
            exe: std::env::current_exe().ok(),
        }
    }

    /// A process with the given variables and working directory, and no terminal.
    pub fn with_vars<I, K, V>(vars: I, cwd: impl Into<PathBuf>) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        Self {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            cwd: cwd.into(),
            stdout_is_tty: false,
            stdin_is_tty: false,
            exe: None,
        }
    }

    /// The value of a variable, treating an empty value as unset.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// The names of the variables set (each once).
    pub fn var_names(&self) -> impl Iterator<Item = &str> {
        self.vars.keys().map(String::as_str)
    }

    /// The variable as a path, when set.
    pub fn path_var(&self, name: &str) -> Option<PathBuf> {
        self.var(name).map(PathBuf::from)
    }

    /// The entries of `PATH`, in order.
    pub fn path_entries(&self) -> Vec<PathBuf> {
        self.var("PATH")
            .map(|p| std::env::split_paths(&OsString::from(p)).collect())
            .unwrap_or_default()
    }

    /// The current working directory.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The user's home directory, from `HOME` (or `USERPROFILE` on Windows).
    pub fn home(&self) -> Option<PathBuf> {
        self.path_var("HOME")
            .or_else(|| self.path_var("USERPROFILE"))
    }

    /// cudaup's home: `--home`/`CUDAUP_HOME`, else on Windows `%LOCALAPPDATA%\cudaup`, else
    /// `$XDG_DATA_HOME/cudaup`, else `~/.local/share/cudaup`.
    pub fn cudaup_home(&self) -> Option<PathBuf> {
        self.path_var(crate::world::vars::CUDAUP_HOME)
            // Windows keeps per-user application data, never roamed, in %LOCALAPPDATA% (NVIDIA's
            // wheels under it need no admin); `Home::of` documents the whole order.
            .or_else(|| {
                cfg!(windows)
                    .then(|| self.path_var("LOCALAPPDATA"))
                    .flatten()
                    .map(|d| d.join("cudaup"))
            })
            .or_else(|| self.path_var("XDG_DATA_HOME").map(|d| d.join("cudaup")))
            .or_else(|| self.home().map(|h| h.join(".local/share/cudaup")))
    }

    /// The running binary, when the OS could say (a process built with [`Process::with_vars`]
    /// has none until [`Process::set_exe`]).
    pub fn exe(&self) -> Option<&Path> {
        self.exe.as_deref()
    }

    /// Names the running binary (tests stand a copy of a binary in for it).
    pub fn set_exe(&mut self, exe: impl Into<PathBuf>) {
        self.exe = Some(exe.into());
    }

    /// Sets a variable (used by the CLI to apply `--home` and friends before the core runs).
    pub fn set_var(&mut self, name: &str, value: impl Into<String>) {
        self.vars.insert(name.to_owned(), value.into());
    }
}
