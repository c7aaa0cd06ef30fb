//! `$CUDAUP_HOME`'s layout, one method per entry (rustup's `HomeDirs`), and its lock: every path
//! cudaup keeps there is spelled here and nowhere else.

use std::path::{Path, PathBuf};

mod marker;

pub use marker::{ClaimError, Found, HomeMarker, NotAHome};

use crate::settings::resolve::SettingsError;
use crate::shell::Shell;
use crate::world::fs::{HeldLock, LockError, Taken};
use crate::world::process::Process;

/// The file name of cudaup's own copy's receipt in `receipts/` (`self_copy::RECEIPT` names it
/// from here, so that the layout does not depend on the step that writes it).
pub const SELF_RECEIPT: &str = "self.json";

/// The commands that keep a log in `logs/` (uninstall removes only files named after them).
pub const LOG_KINDS: [&str; 3] = ["install", "repair", "mirror"];

/// The name of the home marker.
pub const MARKER_FILE: &str = ".cudaup-home";

/// One top-level entry of the home.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// `toolkits/`: default toolkit prefixes.
    Toolkits,
    /// `venvs/`: default framework venvs.
    Venvs,
    /// `logs/`: command logs.
    Logs,
    /// `cache/`: downloads and unpacked trees.
    Cache,
    /// `receipts/`: what was installed where.
    Receipts,
    /// `active.json`: the stack the env scripts describe.
    Active,
    /// `bin/`: cudaup's own copy.
    Bin,
    /// `manifests`: the link to the refreshed catalog in effect.
    ManifestsLink,
    /// `manifests.d/`: generations of the refreshed catalog.
    ManifestsD,
    /// `bench/`: bench results.
    Bench,
    /// `tools/`: the uv cudaup brought.
    Tools,
    /// `cdi/`: CDI specs for a rootless engine.
    Cdi,
    /// The reboot marker of a driver install.
    RebootMarker,
    /// An env script (`env`, `env.fish`, `env.ps1`).
    EnvScript(Shell),
}

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

    /// The home this process uses: `--home`/`CUDAUP_HOME`, else (on Windows)
    /// `%LOCALAPPDATA%\cudaup`, else `$XDG_DATA_HOME/cudaup`, else `~/.local/share/cudaup`
    /// ([`Process::cudaup_home`]).
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

    /// A command's log: `logs/<kind>-<stamp>.log`, `kind` one of [`LOG_KINDS`].
    pub fn log(&self, kind: &str, stamp: u64) -> PathBuf {
        debug_assert!(LOG_KINDS.contains(&kind), "a log kind uninstall knows");
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

    /// uv's cache (the framework step points `UV_CACHE_DIR` here too, through [`Self::cache`]).
    pub fn uv_cache(&self) -> PathBuf {
        self.cache().join("uv")
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

    /// What cudaup set in the Windows user environment (`HKCU\Environment`: `Path`, `CUDA_PATH`,
    /// `CUDA_PATH_V<major>_<minor>`), each value's previous bytes and type with it, for a
    /// byte-exact revert. In a folder of its own: every JSON file at the top of `receipts/` is
    /// read as a toolkit or venv receipt.
    pub fn registry_receipt(&self) -> PathBuf {
        self.receipts().join("windows").join("environment.json")
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

    /// Tools cudaup brings for its own use (uv: [`crate::install::uv`]).
    pub fn tools(&self) -> PathBuf {
        self.root.join("tools")
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

    /// The refreshed catalog in effect: a link into [`Home::manifests_d`].
    pub fn manifests_link(&self) -> PathBuf {
        self.root.join("manifests")
    }

    /// The marker that makes a directory cudaup's home ([`HomeMarker`]).
    pub fn marker(&self) -> PathBuf {
        self.root.join(MARKER_FILE)
    }

    /// The top-level entries cudaup creates, each with what it is (what uninstall and the
    /// litter rules walk).
    pub fn entries(&self) -> Vec<(Entry, PathBuf)> {
        let mut out = vec![
            (Entry::Toolkits, self.toolkits()),
            (Entry::Venvs, self.venvs()),
            (Entry::Logs, self.logs()),
            (Entry::Cache, self.cache()),
            (Entry::Receipts, self.receipts()),
            (Entry::Active, self.active()),
            (Entry::Bin, self.bin()),
            (Entry::ManifestsLink, self.manifests_link()),
            (Entry::ManifestsD, self.manifests_d()),
            (Entry::Bench, self.bench()),
            (Entry::Tools, self.tools()),
            (Entry::Cdi, self.cdi()),
            (Entry::RebootMarker, self.reboot_marker()),
        ];
        out.extend(
            Shell::ALL
                .iter()
                .map(|s| (Entry::EnvScript(*s), self.env_script(*s))),
        );
        out
    }

    /// Whether `name` is one of cudaup's log files (`<kind>-<stamp>.log`, see [`Home::log`]).
    pub fn is_log_name(name: &str) -> bool {
        let Some(stem) = name.strip_suffix(".log") else {
            return false;
        };
        let Some((kind, stamp)) = stem.split_once('-') else {
            return false;
        };
        LOG_KINDS.contains(&kind) && !stamp.is_empty() && stamp.bytes().all(|b| b.is_ascii_digit())
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
            Ok(Taken::Held(lock)) => Ok(HomeLock {
                lock: Some(lock),
                home: self.clone(),
                claimed: None,
                uninstalling: false,
            }),
            Ok(Taken::Busy { holder }) => Err(HomeError::Busy { holder, lock: path }),
            Err(source) => Err(HomeError::Lock { source }),
        }
    }
}

/// The home's lock, released when dropped. Its file goes with it, so a home cudaup left alone
/// holds no trace of the lock (a waiter then locks a fresh file: [`crate::world::fs::lock_file`]).
#[derive(Debug)]
pub struct HomeLock {
    /// `None` once released (in `drop`).
    lock: Option<HeldLock>,
    home: Home,
    /// The marker this command wrote, if it wrote one.
    claimed: Option<HomeMarker>,
    /// Held by `uninstall`: the home, once emptied, goes with the lock.
    uninstalling: bool,
}

impl HomeLock {
    /// Held by `uninstall`: if the home is empty once the lock is gone, the folder goes too. On
    /// Linux uninstall removes it itself; on Windows the lock file stays (delete-pending) until
    /// its handle is closed, so the folder can only go after that.
    pub fn uninstalling(&mut self) {
        self.uninstalling = true;
    }

    /// Marks the home as cudaup's ([`HomeMarker::claim`]) for a command that writes into it. A
    /// marker written now is taken back when the lock goes if the command added nothing.
    pub fn claim(&mut self) -> Result<(), ClaimError> {
        let (marker, new) = HomeMarker::claim_new(&self.home)?;
        if new {
            self.claimed = Some(marker);
        }
        Ok(())
    }
}

impl Drop for HomeLock {
    fn drop(&mut self) {
        if let Some(marker) = &self.claimed {
            HomeMarker::unclaim_if_unused(&self.home, marker);
        }
        if let Some(lock) = self.lock.take() {
            let _ = fs_err::remove_file(lock.path());
            drop(lock);
        }
        if self.uninstalling && cfg!(windows) && self.home.marker().symlink_metadata().is_err() {
            // Refused unless empty: only a home uninstall emptied (its marker gone) goes.
            let _ = fs_err::remove_dir(self.home.root());
        }
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
    /// The home could not be marked as cudaup's.
    #[error(transparent)]
    Marker(#[from] ClaimError),
    /// The lock file could not be made or locked, or what stands at its name is not cudaup's.
    #[error(transparent)]
    Lock {
        /// Why (the path is in it).
        source: LockError,
    },
}
