//! `$CUDAUP_HOME`'s layout, one method per entry (rustup's `HomeDirs`), and its lock: every path
//! cudaup keeps there is spelled here and nowhere else.

use std::path::{Path, PathBuf};

use crate::settings::resolve::SettingsError;
use crate::shell::Shell;
use crate::world::fs::{HeldLock, LockError, Taken};
use crate::world::process::Process;

/// The file name of cudaup's own copy's receipt in `receipts/` (`self_copy::RECEIPT` names it
/// from here, so that the layout does not depend on the step that writes it).
pub const SELF_RECEIPT: &str = "self.json";

/// cudaup's home directory: toolkits, venvs, receipts, env scripts, its own copy and caches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// The home at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Home {
        Home { root: root.into() }
    }

    /// The home this process uses: `--home`/`CUDAUP_HOME`, else `$XDG_DATA_HOME/cudaup`, else
    /// `~/.local/share/cudaup`.
    pub fn of(process: &Process) -> Result<Home, SettingsError> {
        process
            .cudaup_home()
            .map(Home::new)
            .ok_or(SettingsError::NoHome)
    }

    /// The home at `root` (borrowed paths from older signatures).
    pub fn at(root: &Path) -> Home {
        Home::new(root)
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where a toolkit cudaup installs goes by default: `toolkits/cuda-<version>`.
    pub fn toolkit(&self, version: &impl std::fmt::Display) -> PathBuf {
        self.root.join("toolkits").join(format!("cuda-{version}"))
    }

    /// The toolkits folder.
    pub fn toolkits(&self) -> PathBuf {
        self.root.join("toolkits")
    }

    /// A profile's default framework venv: `venvs/<profile>`.
    pub fn venv(&self, profile: &str) -> PathBuf {
        self.venvs().join(profile)
    }

    /// The venvs folder.
    pub fn venvs(&self) -> PathBuf {
        self.root.join("venvs")
    }

    /// A command's log: `logs/<kind>-<stamp>.log`.
    pub fn log(&self, kind: &str, stamp: u64) -> PathBuf {
        self.logs().join(format!("{kind}-{stamp}.log"))
    }

    /// The logs folder.
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// The download cache (archives, wheels, their unpacked trees).
    pub fn cache(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// The receipts folder.
    pub fn receipts(&self) -> PathBuf {
        self.root.join("receipts")
    }

    /// Receipts of steps begun and not yet finished (a killed run's are finished by repair).
    pub fn pending(&self) -> PathBuf {
        self.receipts().join("pending")
    }

    /// What the rc-file hooks changed, for a byte-exact revert.
    pub fn shell_receipt(&self) -> PathBuf {
        self.receipts().join("shell.json")
    }

    /// The receipt of cudaup's own copy in `bin/`.
    pub fn self_receipt(&self) -> PathBuf {
        self.receipts().join(SELF_RECEIPT)
    }

    /// The env step begun and not yet done.
    pub fn env_intent(&self) -> PathBuf {
        self.pending().join(".env.json")
    }

    /// What `cudaup container setup` changed on the host, for a byte-exact revert: in a folder
    /// of its own, since every JSON file at the top of `receipts/` is read as a toolkit or venv
    /// receipt (doctor called `container.json` unreadable there).
    pub fn container_receipt(&self) -> PathBuf {
        self.receipts().join("container").join("host-files.json")
    }

    /// CDI specs cudaup writes for a rootless engine that reads them from here.
    pub fn cdi(&self) -> PathBuf {
        self.root.join("cdi")
    }

    /// Which toolkit and cudaup the env scripts put on PATH.
    pub fn active(&self) -> PathBuf {
        self.root.join("active.json")
    }

    /// The env script for a shell family (`env`, `env.fish`, `env.ps1`).
    pub fn env_script(&self, shell: Shell) -> PathBuf {
        self.root.join(shell.script_file_name())
    }

    /// cudaup's own bin folder, on PATH through the env scripts.
    pub fn bin(&self) -> PathBuf {
        self.root.join("bin")
    }

    /// Generations of the refreshed catalog (`manifests update`).
    pub fn manifests_d(&self) -> PathBuf {
        self.root.join("manifests.d")
    }

    /// `bench` results.
    pub fn bench(&self) -> PathBuf {
        self.root.join("bench")
    }

    /// The marker of a driver install waiting for its reboot.
    pub fn reboot_marker(&self) -> PathBuf {
        self.root.join(crate::install::driver::MARKER_FILE)
    }

    /// The lock every command that changes the home takes.
    pub fn lock_path(&self) -> PathBuf {
        self.root.join(".cudaup.lock")
    }

    /// The top-level entries cudaup creates (what uninstall and the litter rules walk).
    pub fn entries(&self) -> Vec<PathBuf> {
        let mut out = vec![
            self.toolkits(),
            self.venvs(),
            self.logs(),
            self.cache(),
            self.receipts(),
            self.active(),
            self.bin(),
            self.manifests_d(),
            self.bench(),
            self.reboot_marker(),
        ];
        out.extend(Shell::ALL.iter().map(|s| self.env_script(*s)));
        out
    }

    /// Locks the home for a command that changes it. Another cudaup holding it is waited for,
    /// after `waiting` is told its `pid N`; with `wait` false, [`HomeError::Busy`] names it.
    pub fn lock(&self, wait: bool, waiting: impl FnOnce(&str)) -> Result<HomeLock, HomeError> {
        let path = self.lock_path();
        let taken = if wait {
            crate::world::fs::lock_file(&path, Some(waiting))
        } else {
            crate::world::fs::lock_file(&path, None::<fn(&str)>)
        };
        match taken {
            Ok(Taken::Held(lock)) => Ok(HomeLock { lock }),
            Ok(Taken::Busy { holder }) => Err(HomeError::Busy { holder, lock: path }),
            Err(source) => Err(HomeError::Lock { source }),
        }
    }
}

/// The home's lock, released when dropped. Its file goes with it, so a home cudaup left alone
/// holds no trace of the lock (a waiter then locks a fresh file: [`crate::world::fs::lock_file`]).
#[derive(Debug)]
pub struct HomeLock {
    lock: HeldLock,
}

impl Drop for HomeLock {
    fn drop(&mut self) {
        let _ = fs_err::remove_file(self.lock.path());
    }
}

/// The home could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum HomeError {
    /// Another cudaup holds it and `--no-wait` was given.
    #[error("another cudaup ({holder}) is changing {}: wait for it to finish, or run again without --no-wait to wait", .lock.parent().unwrap_or(lock).display())]
    Busy {
        /// The lock file.
        lock: PathBuf,
        /// What the holder wrote (`pid N`).
        holder: String,
    },
    /// The lock file could not be made or locked, or what stands at its name is not cudaup's.
    #[error(transparent)]
    Lock {
        /// Why (the path is in it).
        source: LockError,
    },
}
