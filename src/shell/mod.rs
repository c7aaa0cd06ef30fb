//! Shell environment: env scripts for each shell, the rc-file hook, and the Windows user PATH.
//!
//! The design is rustup's (code-anchors §1.3, convention 13): cudaup writes one env script per
//! shell family into its home ([`script`]), and adds a single sourcing line, under a marker
//! comment, to each rc file the user's shells read ([`hooks`], [`apply`]). The env script is
//! idempotent, so an rc file that is read twice (a login bash that sources `.bashrc` from
//! `.bash_profile`) does no harm, and the hook never needs to change when the stack does: only the
//! script is rewritten.
//!
//! On Windows the user's environment lives in the registry instead ([`windows`]), and
//! [`shadowing`] warns about an `LD_LIBRARY_PATH` that would hide the CUDA libraries that
//! framework wheels carry.
//!
//! Everything here is pure or takes its inputs as arguments: nothing reads `std::env`.

mod ld_path;
mod rc;
mod script;
pub mod windows;

use std::path::PathBuf;

pub use ld_path::{list_dir, shadowing};
pub use rc::{
    add, apply, hooks, leftover_of, plan_apply, remove, revert, zsh_rc_candidates, Applied, Hook,
    Planned, MARKER,
};
pub use script::{activate_line, script, source_line};
pub use windows::{windows_path_add, windows_path_remove};

/// What the active stack puts in the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvSpec {
    /// Directories prepended to `PATH`; the first one ends up first.
    pub path: Vec<PathBuf>,
    /// Directories prepended to `LD_LIBRARY_PATH` (Linux only), in the same order.
    pub ld_library_path: Vec<PathBuf>,
    /// Variables set outright, e.g. `CUDA_HOME` and `CUDA_PATH`.
    pub vars: Vec<(String, String)>,
}

/// A family of shells that share one env script and one kind of rc file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shell {
    /// sh, bash, zsh, dash, ksh and friends: one POSIX script serves them all.
    Posix,
    /// fish 3.0 or later.
    Fish,
    /// PowerShell 7 (`pwsh`) on any platform, and Windows PowerShell 5.1.
    PowerShell,
}

impl Shell {
    /// Every shell family, in the order cudaup sets them up.
    pub const ALL: [Shell; 3] = [Shell::Posix, Shell::Fish, Shell::PowerShell];

    /// The shell a person types next steps into here: PowerShell on Windows (its terminal's
    /// default shell), a POSIX shell elsewhere.
    pub const INTERACTIVE: Shell = if cfg!(windows) {
        Shell::PowerShell
    } else {
        Shell::Posix
    };

    /// The family of a shell named on the command line or in `$SHELL`.
    ///
    /// Accepts a bare name (`zsh`), a path (`/usr/bin/zsh`), a Windows executable (`pwsh.exe`)
    /// and the `-bash` form login shells give themselves, ignoring case.
    pub fn parse(name: &str) -> Option<Shell> {
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
        let base = base.strip_prefix('-').unwrap_or(base).to_ascii_lowercase();
        let base = base.strip_suffix(".exe").unwrap_or(&base);
        match base {
            "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "pdksh" | "ash" => Some(Shell::Posix),
            "fish" => Some(Shell::Fish),
            "powershell" | "pwsh" => Some(Shell::PowerShell),
            _ => None,
        }
    }

    /// A short name for messages and `cudaup env --shell`.
    pub fn name(self) -> &'static str {
        match self {
            Shell::Posix => "sh",
            Shell::Fish => "fish",
            Shell::PowerShell => "powershell",
        }
    }

    /// The file name of this family's env script inside cudaup's home.
    pub fn script_file_name(self) -> &'static str {
        match self {
            Shell::Posix => "env",
            Shell::Fish => "env.fish",
            Shell::PowerShell => "env.ps1",
        }
    }
}

impl std::fmt::Display for Shell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Errors from editing rc files and the Windows registry.
#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    /// The rc file (or the file its symlink points to) cannot be written.
    #[error("cannot edit '{}': it is read-only\nhelp: add this line to it yourself: {line}", path.display())]
    ReadOnly {
        /// The file as the hook names it.
        path: PathBuf,
        /// The line the user should add by hand.
        line: String,
    },

    /// cudaup's lines could not be taken out of a read-only rc file.
    #[error("cannot edit '{}': it is read-only\nhelp: remove these lines from it yourself:\n{lines}", path.display())]
    ReadOnlyRemove {
        /// The file as the receipt names it.
        path: PathBuf,
        /// The lines the user should remove by hand.
        lines: String,
    },

    /// Reading or writing an rc file failed.
    #[error("could not update shell profile '{}': {source}\nhelp: {help}", path.display())]
    Io {
        /// The file as the hook names it.
        path: PathBuf,
        /// What the user can do by hand instead.
        help: String,
        /// The underlying error (from `fs_err`, so it names the real path too).
        #[source]
        source: std::io::Error,
    },

    /// A symlink chain did not end (a loop, or more than 40 links).
    #[error("'{}' is a symlink loop", path.display())]
    SymlinkLoop {
        /// The file as the hook names it.
        path: PathBuf,
    },

    /// The Windows registry refused a read or a write (the message names the value).
    #[error("cannot change the Windows user environment: {0}")]
    Registry(String),
}
