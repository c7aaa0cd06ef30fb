//! cudaup's own copy, `$CUDAUP_HOME/bin/cudaup`: what makes `cudaup verify` (the wizard's last
//! line) work in the next shell, as rustup's `~/.cargo/bin` does for `rustup`.
//!
//! `install` and the wizard copy the running binary there ([`ensure`]) and the env scripts put
//! that directory on `PATH` ([`crate::install::receipts::Active::cudaup_bin`]). The file is
//! cudaup's only while it is a copy cudaup wrote: its sha256 is the one the receipt
//! (`$CUDAUP_HOME/receipts/self.json`) records, or the one the receipt records as being replaced
//! while a replacement is under way, or the running binary's own (a run killed after the copy
//! landed, before its receipt did). Anything else at that path is the user's: it is never
//! overwritten or removed.
//!
//! A copy is atomic and durable: the bytes go into a temporary file in `bin/`, hashed as they are
//! written, which is fsynced, recorded in the receipt, renamed over the target, and the directory
//! fsynced. Killed at any instant, the path holds the old copy or the new one, and the receipt
//! vouches for whichever it is, so a re-run (by this binary or another) converges.
//!
//! When `cargo install` put the running binary in `$CARGO_HOME/bin` ([`cargo_managed`]), cargo
//! manages it: cudaup makes no copy, and takes an earlier copy of its own out of the way so it
//! cannot shadow the one cargo updates.

mod cargo;
mod copy;
mod health;
mod inspect;
mod receipt;
mod running;
mod stage;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use cargo::cargo_managed;
pub use copy::{
    ensure, ensure_staged, install, plan, remove, temporaries, Action, Installed, Planned, Removed,
    SelfCopyError,
};
pub use health::{health, whereabouts, Health, Whereabouts};
pub use inspect::{inspect, Copy, Found};
pub use receipt::{SelfReceipt, Stamp};
pub use running::Running;
pub use stage::{stage, Staged};

/// This cudaup's version (the library and the binary are one crate).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The receipt's file name in `$CUDAUP_HOME/receipts/`.
pub const RECEIPT: &str = crate::install::home::SELF_RECEIPT;

/// Temporary files in `bin/` start with this (and end in `.tmp`): names cudaup reserves, so a
/// run may sweep those an earlier, killed run left.
const TEMP_PREFIX: &str = ".cudaup-";

/// The directory the env scripts put on `PATH` for cudaup itself.
pub fn bin_dir(home: &Path) -> PathBuf {
    crate::install::home::Home::at(home).bin()
}

/// Where the installed copy lives: `$CUDAUP_HOME/bin/cudaup`.
pub fn target(home: &Path) -> PathBuf {
    bin_dir(home).join(if cfg!(windows) {
        "cudaup.exe"
    } else {
        "cudaup"
    })
}

/// The directory the env scripts put on `PATH` for cudaup: `bin/` once cudaup put its copy
/// there (its receipt says so; a copy deleted since is doctor's to report, and harmless on PATH).
pub fn on_path(home: &Path) -> Option<PathBuf> {
    receipt_path(home).is_file().then(|| bin_dir(home))
}

/// Where its receipt lives.
pub fn receipt_path(home: &Path) -> PathBuf {
    crate::install::home::Home::at(home).self_receipt()
}
