//! The copy's bytes written ahead, while the install's steps run ([`stage`]): the copy of a
//! 23 MB binary and its fsync were 85 ms of an install's serial end on the 2-core machine, after
//! the last wheel was in place (docs/benchmarks.md). Only the bytes: whether a copy goes in at
//! all, the receipt and the rename stay [`super::ensure_staged`]'s, once the steps succeeded.
//!
//! A staged copy that is not used (a step failed, or the copy turned out not to be needed) is
//! removed when dropped, with `bin/` if staging made it, so a failed install leaves the home as
//! it found it. One a kill leaves is a temporary file under the names cudaup reserves in `bin/`,
//! which the next install or uninstall sweeps (as a kill inside the copy always could).

use std::path::{Path, PathBuf};

use super::copy::write_temp;
use super::{bin_dir, plan, Action, Running, SelfCopyError};
use crate::world::process::Process;

/// The running binary's bytes in a temporary file in `bin/`, hashed and fsynced.
#[derive(Debug)]
pub struct Staged {
    /// `None` once taken.
    temp: Option<tempfile::NamedTempFile>,
    sha256: String,
    size: u64,
    /// `bin/`, when staging made it (removed with the copy if it is not used).
    made_bin: Option<PathBuf>,
}

/// Writes the copy's bytes ahead when [`super::plan`] says a copy will be made (none is there,
/// or an older one of cudaup's). `Ok(None)`: nothing to copy. Changes nothing outside `bin/`.
pub fn stage(process: &Process, home: &Path) -> Result<Option<Staged>, SelfCopyError> {
    let planned = plan(process, home)?;
    if !matches!(planned.action, Action::Installed | Action::Replaced) {
        return Ok(None);
    }
    let Some(running) = Running::of(process) else {
        return Ok(None);
    };
    let dir = bin_dir(home);
    let made_bin = (!dir.exists()).then(|| dir.clone());
    match write_temp(&dir, &running) {
        Ok((temp, sha256, size)) => {
            let staged = Staged {
                temp: Some(temp),
                sha256,
                size,
                made_bin,
            };
            // Parks this thread only: the install's steps go on (a kill lands mid-step).
            crate::world::checkpoint::reach("self-copy-staged");
            Ok(Some(staged))
        }
        Err(source) => {
            if let Some(dir) = &made_bin {
                let _ = fs_err::remove_dir(dir);
            }
            Err(SelfCopyError::Io {
                path: super::target(home),
                source,
            })
        }
    }
}

impl Staged {
    /// Where the bytes are (kept by the sweep of earlier runs' temporaries).
    pub(super) fn path(&self) -> &Path {
        self.temp.as_ref().map_or(Path::new(""), |t| t.path())
    }

    /// The file, its sha256 and size, for the rename; the copy is no longer removed on drop.
    pub(super) fn take(mut self) -> (tempfile::NamedTempFile, String, u64) {
        let temp = self.temp.take().expect("a staged copy is taken once");
        (temp, std::mem::take(&mut self.sha256), self.size)
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            // Not used: the file goes (NamedTempFile's drop), then `bin/` if staging made it and
            // nothing else arrived there meanwhile.
            drop(temp);
            if let Some(dir) = &self.made_bin {
                let _ = fs_err::remove_dir(dir);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ensure, ensure_staged, target, SelfReceipt};
    use super::*;

    struct World {
        dir: tempfile::TempDir,
    }

    impl World {
        fn new() -> World {
            let w = World {
                dir: tempfile::tempdir().unwrap(),
            };
            fs_err::create_dir_all(w.home()).unwrap();
            w
        }
        fn home(&self) -> PathBuf {
            self.dir.path().join("cudaup")
        }
        fn process(&self, bytes: &[u8]) -> Process {
            let exe = self.dir.path().join("build/cudaup");
            fs_err::create_dir_all(exe.parent().unwrap()).unwrap();
            fs_err::write(&exe, bytes).unwrap();
            let mut p = Process::with_vars(
                [("HOME", self.dir.path().display().to_string())],
                self.dir.path(),
            );
            p.set_exe(&exe);
            p
        }
        /// The installed copy's file name (`cudaup`, `cudaup.exe` on Windows).
        fn copy_name(&self) -> String {
            target(&self.home())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        }
        fn bin(&self) -> Vec<String> {
            let mut names: Vec<String> = fs_err::read_dir(bin_dir(&self.home()))
                .map(|rd| {
                    rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            names
        }
    }

    /// A staged copy is what lands: the same bytes, receipt and mode as a copy made at the end,
    /// and no temporary file is left beside it.
    #[test]
    fn a_staged_copy_lands_as_a_copy_made_at_the_end_would() {
        let w = World::new();
        let p = w.process(b"build one");
        let staged = stage(&p, &w.home())
            .unwrap()
            .expect("no copy yet: one is staged");
        assert_eq!(w.bin().len(), 1, "the staged bytes, in bin/");
        let done = ensure_staged(&p, &w.home(), Some(staged)).unwrap();
        assert_eq!(done.action, Action::Installed);
        assert_eq!(fs_err::read(target(&w.home())).unwrap(), b"build one");
        assert_eq!(w.bin(), [w.copy_name()]);
        let receipt = SelfReceipt::read(&w.home()).unwrap();
        assert_eq!(receipt.sha256, done.sha256.unwrap());
        assert_eq!((receipt.size, receipt.replacing), (9, None));
        // The stamp (device, inode, times) is Unix's; Windows keeps none (receipt.rs).
        assert_eq!(receipt.stamp.is_some(), cfg!(unix));
        // Nothing to stage once the copy is current.
        assert!(stage(&p, &w.home()).unwrap().is_none());
    }

    /// A step failed: the staged copy goes, and `bin/` with it when staging made it, so the home
    /// is as the install found it.
    #[test]
    fn a_staged_copy_not_used_leaves_the_home_as_it_was() {
        let w = World::new();
        let p = w.process(b"build one");
        drop(stage(&p, &w.home()).unwrap().unwrap());
        assert!(!bin_dir(&w.home()).exists(), "bin/ was staging's: gone");
        assert_eq!(fs_err::read_dir(w.home()).unwrap().count(), 0);
        // Replacing an older copy: the old one and bin/ stay, the staged bytes go.
        ensure(&p, &w.home()).unwrap();
        let newer = w.process(b"build two");
        let staged = stage(&newer, &w.home())
            .unwrap()
            .expect("an older copy: staged");
        assert_eq!(w.bin().len(), 2);
        drop(staged);
        assert_eq!(w.bin(), [w.copy_name()]);
        assert_eq!(fs_err::read(target(&w.home())).unwrap(), b"build one");
    }

    /// Killed while the steps ran, after the bytes were staged: the temporary file the kill left
    /// is swept by the next run's copy, which lands, and by uninstall's removal.
    #[test]
    fn a_staged_copy_a_kill_left_is_swept() {
        let w = World::new();
        let p = w.process(b"build one");
        // What a kill leaves: a file under the reserved names, no process holding it.
        let left = |name: &str| {
            fs_err::create_dir_all(bin_dir(&w.home())).unwrap();
            fs_err::write(bin_dir(&w.home()).join(name), b"half a build").unwrap();
        };
        left(".cudaup-Kill01.tmp");
        assert_eq!(w.bin().len(), 1);
        let staged = stage(&p, &w.home()).unwrap().unwrap();
        ensure_staged(&p, &w.home(), Some(staged)).unwrap();
        assert_eq!(w.bin(), [w.copy_name()]);
        left(".cudaup-Kill02.tmp");
        assert_eq!(w.bin().len(), 2);
        super::super::remove(&w.home()).unwrap();
        assert!(!bin_dir(&w.home()).exists());
    }
}
