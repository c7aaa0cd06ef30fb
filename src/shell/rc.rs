//! The rc-file hook: which files get cudaup's sourcing line, and adding and removing it safely.
//!
//! Adding appends one block (a marker comment and the line) and remembers the exact bytes, so that
//! removing it restores the file byte for byte. Both directions write a temporary file next to the
//! real file (after following symlinks) and rename it over, so a crash never leaves a truncated
//! `.bashrc` (code-anchors §6.4, "Non-atomic rc rewrites") and a dotfile symlinked into a dotfiles
//! repository stays a symlink.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{source_line, Shell, ShellError};
use crate::world::process::Process;

/// The comment cudaup puts above its line, so that a person reading the file knows where it came
/// from and how to take it out.
pub const MARKER: &str =
    "# cudaup: set up CUDA and the deep-learning stack (remove with `cudaup uninstall`)";

/// One rc file and the line it should contain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    /// The rc file as the shell names it (it may be a symlink).
    pub file: PathBuf,
    /// The line that loads cudaup's env script, e.g. `. "/home/u/.local/share/cudaup/env"`.
    pub line: String,
}

/// What [`apply`] did to one file: kept in the install receipt so that [`revert`] can undo it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// The rc file as the hook named it.
    pub file: PathBuf,
    /// The exact text appended (line endings included).
    pub inserted: String,
    /// Whether the file did not exist before: [`revert`] then deletes it if nothing else was
    /// added to it since.
    pub created: bool,
    /// Directories made to hold a new file (`~/.config/fish/conf.d`), outermost first:
    /// [`revert`] removes those still empty, innermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created_dirs: Vec<PathBuf>,
}

/// An [`apply`] worked out but not written yet: [`Planned::applied`] is what the receipt will
/// hold, so a caller can record it before [`Planned::write`] changes the file, and a run killed
/// in between leaves a receipt that names a change, never a change that no receipt names.
#[derive(Debug)]
pub struct Planned {
    applied: Applied,
    target: PathBuf,
    new: Vec<u8>,
    metadata: Option<std::fs::Metadata>,
    line: String,
}

/// The rc files to hook for `shells`, with the line each should contain.
///
/// The rules are rustup's (`src/cli/self_update/shell.rs`):
/// - POSIX: `~/.profile` always, created if missing, since it is the only rc file POSIX
///   specifies; `~/.bash_profile`, `~/.bash_login` and `~/.bashrc` only if they exist; and, when
///   zsh is the login shell or is installed, the `.zshenv` that [`zsh_rc_candidates`] picks.
/// - fish: `$XDG_CONFIG_HOME/fish/conf.d/cudaup.fish` (default `~/.config`), a whole file that
///   cudaup owns.
/// - PowerShell: the "current user, all hosts" profile.
///
/// Returns nothing when the home directory is unknown, or when `cudaup_home` is not UTF-8 (the
/// line could not be written faithfully).
pub fn hooks(process: &Process, cudaup_home: &Path, shells: &[Shell]) -> Vec<Hook> {
    let Some(home) = process.home() else {
        tracing::warn!("HOME is not set: no shell profile will be changed");
        return Vec::new();
    };
    if cudaup_home.to_str().is_none() {
        tracing::warn!(
            "{} is not UTF-8: no shell profile will be changed",
            cudaup_home.display()
        );
        return Vec::new();
    }
    let mut out: Vec<Hook> = Vec::new();
    for &shell in shells {
        let files = match shell {
            Shell::Posix => posix_rc_files(process, &home),
            Shell::Fish => vec![fish_conf_file(process, &home)],
            Shell::PowerShell => vec![powershell_profile(process, &home, cfg!(windows))],
        };
        let line = source_line(shell, cudaup_home);
        for file in files {
            if !out.iter().any(|hook| hook.file == file) {
                out.push(Hook {
                    file,
                    line: line.clone(),
                });
            }
        }
    }
    out
}

fn posix_rc_files(process: &Process, home: &Path) -> Vec<PathBuf> {
    let mut files = vec![home.join(".profile")];
    // bash may also read .profile, which is already covered; its own files are only touched
    // when the user has them, because creating .bash_profile would stop bash reading .profile.
    files.extend(
        [".bash_profile", ".bash_login", ".bashrc"]
            .iter()
            .map(|name| home.join(name))
            .filter(|file| file.is_file()),
    );
    if zsh_in_use(process) {
        files.push(zsh_rc(process, home));
    }
    files
}

/// rustup's test for zsh: it is the login shell, or it can be run.
fn zsh_in_use(process: &Process) -> bool {
    process.var("SHELL").is_some_and(|sh| sh.contains("zsh"))
        || process
            .path_entries()
            .iter()
            .any(|dir| dir.join("zsh").is_file())
}

/// The `.zshenv` files zsh may read, in rustup's order: `$ZDOTDIR/.zshenv` when `ZDOTDIR` is set,
/// then `~/.zshenv`. Uninstall looks in all of them.
///
/// rustup takes `ZDOTDIR` from the environment when zsh is the login shell, and otherwise asks
/// `zsh -c 'echo -n $ZDOTDIR'`; the core runs no commands, so a caller that wants the second
/// probe runs it through the runner and sets `ZDOTDIR` on the [`Process`] first.
pub fn zsh_rc_candidates(process: &Process, home: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = process
        .path_var("ZDOTDIR")
        .map(|dir| dir.join(".zshenv"))
        .into_iter()
        .collect();
    let in_home = home.join(".zshenv");
    if !files.contains(&in_home) {
        files.push(in_home);
    }
    files
}

/// The one `.zshenv` to hook, ported from rustup's `Zsh::update_rcs`
/// (rust-lang/rustup, src/cli/self_update/shell.rs at 0367e1d8a0b6116b533a76a4e1e2828236615552):
/// the first of [`zsh_rc_candidates`] that exists, else the first candidate.
///
/// zsh can change `ZDOTDIR` before reading `.zshenv` (the variable is in the environment) or
/// while reading `~/.zshenv` (the file sets it). An existing `$ZDOTDIR/.zshenv` means the first;
/// an existing `~/.zshenv` alone means the second, and that file is the one zsh really reads.
/// uv once created `$ZDOTDIR/.zshenv` in the second case, a file zsh never reads
/// (astral-sh/uv#16865, fixed by astral-sh/uv#16866 by going back to this rule).
fn zsh_rc(process: &Process, home: &Path) -> PathBuf {
    let candidates = zsh_rc_candidates(process, home);
    candidates
        .iter()
        .find(|file| file.is_file())
        .unwrap_or(&candidates[0])
        .clone()
}

/// fish reads every file in `conf.d` at start-up; `$XDG_CONFIG_HOME` moves the whole config dir.
fn fish_conf_file(process: &Process, home: &Path) -> PathBuf {
    process
        .path_var("XDG_CONFIG_HOME")
        .unwrap_or_else(|| home.join(".config"))
        .join("fish/conf.d/cudaup.fish")
}

/// `$PROFILE.CurrentUserAllHosts`. PowerShell on Linux and macOS keeps it under
/// `$XDG_CONFIG_HOME/powershell` (PowerShell's own tests check "Profile should respect
/// XDG_CONFIG_HOME"), default `~/.config/powershell`. On Windows it is
/// `Documents\PowerShell\profile.ps1` under the user profile (PowerShell 7; a redirected Documents
/// folder is not followed).
fn powershell_profile(process: &Process, home: &Path, windows: bool) -> PathBuf {
    if windows {
        process
            .path_var("USERPROFILE")
            .unwrap_or_else(|| home.to_path_buf())
            .join("Documents")
            .join("PowerShell")
            .join("profile.ps1")
    } else {
        process
            .path_var("XDG_CONFIG_HOME")
            .unwrap_or_else(|| home.join(".config"))
            .join("powershell/profile.ps1")
    }
}

/// Appends `line`, under [`MARKER`], to `content`.
///
/// Returns the new content and the exact bytes appended, or `None` when a line of `content`
/// already is `line` (ignoring surrounding whitespace), so applying twice changes nothing. The
/// block uses the file's line ending (CRLF when its first line ends so), starts with a line ending
/// when the file lacks a final one, and is set off from the user's text by a blank line.
pub fn add(content: &[u8], line: &str) -> Option<(Vec<u8>, Vec<u8>)> {
    let wanted = line.trim().as_bytes();
    if content
        .split(|&b| b == b'\n')
        .any(|existing| existing.trim_ascii() == wanted)
    {
        return None;
    }
    let eol: &[u8] = if uses_crlf(content) { b"\r\n" } else { b"\n" };
    let mut inserted = Vec::new();
    if !content.is_empty() {
        if !content.ends_with(b"\n") {
            inserted.extend_from_slice(eol);
        }
        let before_block = [content, &inserted].concat();
        if !before_block.ends_with(b"\n\n") && !before_block.ends_with(b"\n\r\n") {
            inserted.extend_from_slice(eol);
        }
    }
    for text in [MARKER, line] {
        inserted.extend_from_slice(text.as_bytes());
        inserted.extend_from_slice(eol);
    }
    Some(([content, &inserted].concat(), inserted))
}

/// Takes cudaup's block out of `content`.
///
/// Removes the last exact occurrence of `inserted`, which restores the file byte for byte. When
/// the user has edited the block, removes instead every line that matches one of its lines (the
/// marker, the sourcing line) wherever it is. Either way, a [`MARKER`] line left alone by an
/// earlier block whose sourcing line the user deleted goes too. Returns `content` unchanged when
/// none of this is found.
pub fn remove(content: &[u8], inserted: &[u8]) -> Vec<u8> {
    if let Some(at) = rfind(content, inserted) {
        let end = at + inserted.len();
        let mut out = content[..at].to_vec();
        // The block may have started with the line ending that the file's last line lacked; if
        // the user wrote more after the block, that line still needs its ending.
        if end < content.len() && !out.is_empty() && !out.ends_with(b"\n") {
            out.extend_from_slice(if uses_crlf(content) { b"\r\n" } else { b"\n" });
        }
        out.extend_from_slice(&content[end..]);
        if !out
            .split(|&b| b == b'\n')
            .any(|l| l.trim_ascii() == MARKER.as_bytes())
        {
            return out;
        }
        return remove_lines(&out, &[MARKER.as_bytes()]);
    }
    let mut ours: Vec<&[u8]> = inserted
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|text| !text.is_empty())
        .collect();
    ours.push(MARKER.as_bytes());
    remove_lines(content, &ours)
}

/// `content` without the lines whose trimmed text is one of `lines`.
fn remove_lines(content: &[u8], lines: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(content.len());
    for piece in content.split_inclusive(|&b| b == b'\n') {
        if !lines.contains(&piece.trim_ascii()) {
            out.extend_from_slice(piece);
        }
    }
    out
}

fn uses_crlf(content: &[u8]) -> bool {
    content
        .iter()
        .position(|&b| b == b'\n')
        .is_some_and(|at| at > 0 && content[at - 1] == b'\r')
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    (0..=haystack.len() - needle.len())
        .rev()
        .find(|&at| &haystack[at..at + needle.len()] == needle)
}

/// Adds the hook's line to its file: reads it (a missing file counts as empty, and is created
/// along with its directory), [`add`]s, and replaces the file atomically.
///
/// Returns `None` when the line is already there. A read-only file is an error that names the
/// line to add by hand, and the file is left as it was.
pub fn apply(hook: &Hook) -> Result<Option<Applied>, ShellError> {
    plan_apply(hook)?.map(Planned::write).transpose()
}

/// The first half of [`apply`]: reads the file and works out the change, writing nothing.
pub fn plan_apply(hook: &Hook) -> Result<Option<Planned>, ShellError> {
    let by_hand = || format!("add this line to it yourself: {}", hook.line);
    let io_error = |source| ShellError::Io {
        path: hook.file.clone(),
        help: by_hand(),
        source,
    };
    let target = resolve(&hook.file)?;
    remove_temporary(&target);
    let existing = read_if_exists(&target).map_err(io_error)?;
    let content = existing.as_ref().map_or(&[][..], |(bytes, _)| bytes);
    let Some((new, inserted)) = add(content, &hook.line) else {
        return Ok(None);
    };
    let metadata = existing.as_ref().map(|(_, metadata)| metadata.clone());
    if let Some(metadata) = &metadata {
        if !writable(&target, metadata) {
            return Err(ShellError::ReadOnly {
                path: hook.file.clone(),
                line: hook.line.clone(),
            });
        }
    }
    let mut created_dirs: Vec<PathBuf> = target
        .parent()
        .into_iter()
        .flat_map(Path::ancestors)
        .take_while(|d| !d.as_os_str().is_empty() && d.symlink_metadata().is_err())
        .map(Path::to_path_buf)
        .collect();
    created_dirs.reverse();
    Ok(Some(Planned {
        applied: Applied {
            file: hook.file.clone(),
            // `add` builds the block from UTF-8 text and ASCII line endings only.
            inserted: String::from_utf8_lossy(&inserted).into_owned(),
            created: existing.is_none(),
            created_dirs,
        },
        target,
        new,
        metadata,
        line: hook.line.clone(),
    }))
}

impl Planned {
    /// What the receipt should record.
    pub fn applied(&self) -> &Applied {
        &self.applied
    }

    /// Carries over what an earlier hook of the same file recorded (a line put back by repair
    /// into a file cudaup created is still in a file cudaup created).
    pub fn inherit(&mut self, earlier: &Applied) {
        self.applied.created |= earlier.created;
        if self.applied.created_dirs.is_empty() {
            self.applied.created_dirs = earlier.created_dirs.clone();
        }
    }

    /// Writes the change.
    pub fn write(self) -> Result<Applied, ShellError> {
        let line = self.line;
        let io_error = |source| ShellError::Io {
            path: self.applied.file.clone(),
            help: format!("add this line to it yourself: {line}"),
            source,
        };
        write_keeping_links(&self.target, &self.new, self.metadata.as_ref()).map_err(io_error)?;
        Ok(self.applied)
    }
}

/// Undoes [`apply`]: removes the block from the file (see [`remove`]), and deletes the file when
/// cudaup created it and nothing else is in it, then the directories it created for it, if
/// empty. A file that is gone, or no longer holds the block, is left alone.
pub fn revert(applied: &Applied) -> Result<(), ShellError> {
    let lines = applied.inserted.trim().to_owned();
    let io_error = |source| ShellError::Io {
        path: applied.file.clone(),
        help: format!("remove these lines from it yourself:\n{lines}"),
        source,
    };
    let target = resolve(&applied.file)?;
    remove_temporary(&target);
    let Some((content, metadata)) = read_if_exists(&target).map_err(io_error)? else {
        remove_created_dirs(applied);
        return Ok(());
    };
    let new = remove(&content, applied.inserted.as_bytes());
    let delete = applied.created && new.trim_ascii().is_empty();
    if new == content && !delete {
        return Ok(());
    }
    if !writable(&target, &metadata) {
        return Err(ShellError::ReadOnlyRemove {
            path: applied.file.clone(),
            lines,
        });
    }
    if delete {
        fs_err::remove_file(&target).map_err(io_error)?;
        remove_created_dirs(applied);
        Ok(())
    } else {
        write_keeping_links(&target, &new, Some(&metadata)).map_err(io_error)
    }
}

fn remove_created_dirs(applied: &Applied) {
    for dir in applied.created_dirs.iter().rev() {
        // Only if empty: remove_dir refuses otherwise, and never follows a symlink. One already
        // gone (a revert killed halfway) is no reason to stop.
        match fs_err::remove_dir(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(_) => break,
        }
    }
}

/// The temporary file a write of `target` goes through: `.<name>.cudaup-tmp` beside it.
fn temporary(target: &Path) -> PathBuf {
    crate::world::fs::temporary(target, crate::world::fs::Temp::Fixed)
}

/// The temporary file a killed write of the rc file `file` (followed through its symlinks)
/// would have left, if one is there.
pub fn leftover_of(file: &Path) -> Option<PathBuf> {
    let t = temporary(&resolve(file).ok()?);
    t.symlink_metadata().is_ok().then_some(t)
}

/// Removes what a write of `target` killed halfway left beside it.
fn remove_temporary(target: &Path) {
    let _ = fs_err::remove_file(temporary(target));
}

/// Replaces `target`'s content with `bytes`, keeping a hard link a hard link.
///
/// A file with one link is replaced atomically ([`write_atomically`]): a crash leaves the old
/// file or the new one. A file with several links (`~/.bashrc` hard-linked into a dotfiles
/// directory) cannot be renamed over without turning the other names into a separate, stale
/// copy, so it is changed in place instead, as cheaply torn as possible: an append when only
/// bytes are added (a crash leaves the old file plus part of cudaup's block), a truncation when
/// only the end goes (one syscall), and otherwise a rewrite from the first changed byte, which
/// a crash can leave half done. The link is what the user chose to keep; the torn case needs a
/// crash during a write of a few hundred bytes.
fn write_keeping_links(
    target: &Path,
    bytes: &[u8],
    original: Option<&std::fs::Metadata>,
) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let Some(meta) = original.filter(|m| m.nlink() > 1) {
            return write_in_place(target, bytes, meta.len());
        }
    }
    write_atomically(target, bytes, original)
}

#[cfg(unix)]
fn write_in_place(target: &Path, bytes: &[u8], old_len: u64) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom, Write};
    let mut f = fs_err::OpenOptions::new()
        .read(true)
        .write(true)
        .open(target)?;
    let mut old = Vec::with_capacity(old_len as usize);
    f.read_to_end(&mut old)?;
    let same = old.iter().zip(bytes).take_while(|(a, b)| a == b).count();
    if same < bytes.len() {
        f.seek(SeekFrom::Start(same as u64))?;
        f.write_all(&bytes[same..])?;
    }
    if (bytes.len() as u64) < old.len() as u64 {
        f.set_len(bytes.len() as u64)?;
    }
    f.sync_all()
}

/// Follows `path` through any chain of symlinks to the file that holds the content. A dangling
/// link resolves to its missing target, which [`apply`] then creates, keeping the link.
fn resolve(path: &Path) -> Result<PathBuf, ShellError> {
    // Linux gives up after 40 links (ELOOP); so do we.
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match fs_err::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let target = fs_err::read_link(&current).map_err(|source| ShellError::Io {
                    path: path.to_path_buf(),
                    help: "check where the symlink points".into(),
                    source,
                })?;
                current = match current.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            Err(error) if error.kind() != io::ErrorKind::NotFound => {
                return Err(ShellError::Io {
                    path: path.to_path_buf(),
                    help: "check the file's permissions".into(),
                    source: error,
                });
            }
            _ => return Ok(current),
        }
    }
    Err(ShellError::SymlinkLoop {
        path: path.to_path_buf(),
    })
}

fn read_if_exists(path: &Path) -> io::Result<Option<(Vec<u8>, std::fs::Metadata)>> {
    match fs_err::read(path) {
        Ok(bytes) => Ok(Some((bytes, fs_err::metadata(path)?))),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// Whether the user means the file to be written. A rename would replace even a file without
/// write permission (only the directory's matters), so this is checked first: no write bits at
/// all means read-only even for root, and otherwise opening it for writing must succeed.
fn writable(path: &Path, metadata: &std::fs::Metadata) -> bool {
    !metadata.permissions().readonly() && fs_err::OpenOptions::new().write(true).open(path).is_ok()
}

/// Replaces `target` with `bytes` through the one atomic writer: the original's permissions
/// (and owner, where allowed) are kept, and a fixed temporary name beside it means a run killed
/// mid-write leaves a file the next write of the same rc file (or its revert) removes.
fn write_atomically(
    target: &Path,
    bytes: &[u8],
    original: Option<&std::fs::Metadata>,
) -> io::Result<()> {
    use crate::world::fs::{write_atomic_with, Durability, Temp};
    write_atomic_with(target, bytes, Temp::Fixed, Durability::Fsync, original)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::{symlink, PermissionsExt};

    use super::*;

    fn process(home: &Path, extra: &[(&str, &str)]) -> Process {
        let mut vars = vec![("HOME".to_owned(), home.to_str().unwrap().to_owned())];
        vars.extend(
            extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        Process::with_vars(vars, home)
    }

    fn files(hooks: &[Hook], home: &Path) -> Vec<String> {
        hooks
            .iter()
            .map(|hook| {
                hook.file
                    .strip_prefix(home)
                    .unwrap_or(&hook.file)
                    .display()
                    .to_string()
            })
            .collect()
    }

    const LINE: &str = r#". "/h/.local/share/cudaup/env""#;

    #[test]
    fn bash_profile_always_bashrc_only_when_present() {
        let home = tempfile::tempdir().unwrap();
        let cudaup = home.path().join(".local/share/cudaup");
        let p = process(home.path(), &[("SHELL", "/bin/bash")]);
        let hooks = hooks(&p, &cudaup, &[Shell::Posix]);
        assert_eq!(files(&hooks, home.path()), [".profile"]);
        assert_eq!(hooks[0].line, format!(". \"{}/env\"", cudaup.display()));

        fs_err::write(home.path().join(".bashrc"), "alias ll='ls -l'\n").unwrap();
        fs_err::write(home.path().join(".bash_profile"), "").unwrap();
        let hooks = super::hooks(&p, &cudaup, &[Shell::Posix]);
        assert_eq!(
            files(&hooks, home.path()),
            [".profile", ".bash_profile", ".bashrc"]
        );

        // .profile is created by apply, with the line in it.
        let applied = apply(&hooks[0]).unwrap().unwrap();
        assert!(applied.created);
        let profile = fs_err::read_to_string(home.path().join(".profile")).unwrap();
        assert_eq!(profile, format!("{MARKER}\n{}\n", hooks[0].line));
    }

    #[test]
    fn zsh_rule_is_rustups() {
        let home = tempfile::tempdir().unwrap();
        let zdotdir = home.path().join(".config/zsh");
        fs_err::create_dir_all(&zdotdir).unwrap();
        let zdot = zdotdir.to_str().unwrap();
        let zsh_file = |extra: &[(&str, &str)]| {
            let mut vars = vec![("SHELL", "/usr/bin/zsh")];
            vars.extend_from_slice(extra);
            let hooks = hooks(
                &process(home.path(), &vars),
                Path::new("/c"),
                &[Shell::Posix],
            );
            let mut files = files(&hooks, home.path());
            assert_eq!(files.remove(0), ".profile");
            assert_eq!(files.len(), 1, "{files:?}");
            files.remove(0)
        };
        // ZDOTDIR unset: ~/.zshenv, created if needed.
        assert_eq!(zsh_file(&[]), ".zshenv");
        // ZDOTDIR set, neither file exists: $ZDOTDIR/.zshenv is created.
        assert_eq!(zsh_file(&[("ZDOTDIR", zdot)]), ".config/zsh/.zshenv");
        // ZDOTDIR set by ~/.zshenv itself (uv#16865): the file zsh reads is ~/.zshenv.
        fs_err::write(
            home.path().join(".zshenv"),
            "export ZDOTDIR=~/.config/zsh\n",
        )
        .unwrap();
        assert_eq!(zsh_file(&[("ZDOTDIR", zdot)]), ".zshenv");
        // Both exist: $ZDOTDIR/.zshenv comes first.
        fs_err::write(zdotdir.join(".zshenv"), "").unwrap();
        assert_eq!(zsh_file(&[("ZDOTDIR", zdot)]), ".config/zsh/.zshenv");
        // Only $ZDOTDIR/.zshenv exists.
        fs_err::remove_file(home.path().join(".zshenv")).unwrap();
        assert_eq!(zsh_file(&[("ZDOTDIR", zdot)]), ".config/zsh/.zshenv");
        // ZDOTDIR unset but $ZDOTDIR/.zshenv exists: zsh would not read it.
        assert_eq!(zsh_file(&[]), ".zshenv");

        // Uninstall looks in both places.
        let p = process(home.path(), &[("ZDOTDIR", zdot)]);
        assert_eq!(
            zsh_rc_candidates(&p, home.path()),
            [zdotdir.join(".zshenv"), home.path().join(".zshenv")]
        );
        // ZDOTDIR=$HOME lists the file once.
        let p = process(home.path(), &[("ZDOTDIR", home.path().to_str().unwrap())]);
        assert_eq!(
            zsh_rc_candidates(&p, home.path()),
            [home.path().join(".zshenv")]
        );
    }

    #[test]
    fn zsh_is_skipped_when_absent() {
        let home = tempfile::tempdir().unwrap();
        let p = process(home.path(), &[("SHELL", "/bin/bash")]);
        let hooks = hooks(&p, Path::new("/c"), &[Shell::Posix]);
        assert_eq!(files(&hooks, home.path()), [".profile"]);
        // zsh on PATH counts even when it is not the login shell.
        let bin = home.path().join("bin");
        fs_err::create_dir(&bin).unwrap();
        fs_err::write(bin.join("zsh"), "").unwrap();
        let p = process(
            home.path(),
            &[("SHELL", "/bin/bash"), ("PATH", bin.to_str().unwrap())],
        );
        let hooks = super::hooks(&p, Path::new("/c"), &[Shell::Posix]);
        assert_eq!(files(&hooks, home.path()), [".profile", ".zshenv"]);
    }

    #[test]
    fn fish_conf_d_file() {
        let home = tempfile::tempdir().unwrap();
        let cudaup = Path::new("/data/cudaup");
        let hooks = hooks(&process(home.path(), &[]), cudaup, &[Shell::Fish]);
        assert_eq!(
            files(&hooks, home.path()),
            [".config/fish/conf.d/cudaup.fish"]
        );
        assert_eq!(hooks[0].line, r#"source "/data/cudaup/env.fish""#);

        let xdg = home.path().join("xdg");
        let p = process(home.path(), &[("XDG_CONFIG_HOME", xdg.to_str().unwrap())]);
        let hooks = super::hooks(&p, cudaup, &[Shell::Fish]);
        assert_eq!(files(&hooks, home.path()), ["xdg/fish/conf.d/cudaup.fish"]);

        // The whole file is cudaup's: created with its directories, deleted on revert.
        let applied = apply(&hooks[0]).unwrap().unwrap();
        assert!(applied.created);
        assert_eq!(
            fs_err::read_to_string(&hooks[0].file).unwrap(),
            format!("{MARKER}\nsource \"/data/cudaup/env.fish\"\n")
        );
        revert(&applied).unwrap();
        assert!(!hooks[0].file.exists());
    }

    #[test]
    fn powershell_profile_paths() {
        let home = tempfile::tempdir().unwrap();
        let hooks = hooks(
            &process(home.path(), &[]),
            Path::new("/data/cudaup"),
            &[Shell::PowerShell],
        );
        assert_eq!(
            files(&hooks, home.path()),
            [".config/powershell/profile.ps1"]
        );
        assert_eq!(hooks[0].line, ". '/data/cudaup/env.ps1'");

        let p = process(home.path(), &[("XDG_CONFIG_HOME", "/x")]);
        assert_eq!(
            powershell_profile(&p, home.path(), false),
            Path::new("/x/powershell/profile.ps1")
        );
        let p = process(home.path(), &[("USERPROFILE", "/win/u")]);
        assert_eq!(
            powershell_profile(&p, home.path(), true),
            Path::new("/win/u/Documents/PowerShell/profile.ps1")
        );
    }

    #[test]
    fn no_home_no_hooks() {
        let p = Process::with_vars([("SHELL", "/bin/zsh")], "/");
        assert!(hooks(&p, Path::new("/c"), &Shell::ALL).is_empty());
    }

    #[test]
    fn add_is_idempotent_and_remove_restores() {
        for original in [
            &b""[..],
            b"export A=1\n",
            b"export A=1",
            b"export A=1\r\nexport B=2\r\n",
            b"export A=1\r\nexport B=2",
            b"export A=1\n\n",
            b"\n",
        ] {
            let (new, inserted) = add(original, LINE).unwrap();
            assert!(new.starts_with(original));
            assert_eq!(add(&new, LINE), None, "second add of {original:?}");
            assert_eq!(remove(&new, &inserted), original, "{original:?}");
            // Line endings follow the file.
            let text = String::from_utf8(new).unwrap();
            if original.windows(2).any(|w| w == b"\r\n") {
                assert!(!text.replace("\r\n", "").contains('\n'), "{text:?}");
            } else {
                assert!(!text.contains('\r'));
            }
            // The block sits on its own lines, set off by a blank line.
            if !original.is_empty() {
                assert!(
                    text.contains(&format!("\n\n{MARKER}"))
                        || text.contains(&format!("\r\n\r\n{MARKER}")),
                    "{text:?}"
                );
            }
        }
    }

    #[test]
    fn add_sees_the_line_even_if_indented() {
        assert_eq!(add(format!("  {LINE}  \r\n").as_bytes(), LINE), None);
        // A commented-out line does not count.
        assert!(add(format!("# {LINE}\n").as_bytes(), LINE).is_some());
    }

    #[test]
    fn remove_keeps_what_the_user_added_after() {
        let (new, inserted) = add(b"export A=1", LINE).unwrap();
        let edited = [&new[..], b"export B=2\n"].concat();
        assert_eq!(remove(&edited, &inserted), b"export A=1\nexport B=2\n");
    }

    #[test]
    fn remove_falls_back_to_our_lines() {
        let (_, inserted) = add(b"export A=1\n", LINE).unwrap();
        // The user moved our lines around and edited spacing.
        let edited = format!("{LINE}   \nexport A=1\n  {MARKER}\nexport B=2\n");
        assert_eq!(
            remove(edited.as_bytes(), &inserted),
            b"export A=1\nexport B=2\n"
        );
        // Nothing of ours: unchanged.
        assert_eq!(remove(b"export A=1\n", &inserted), b"export A=1\n");
        assert_eq!(remove(b"", &inserted), b"");
    }

    fn hook(file: &Path) -> Hook {
        Hook {
            file: file.to_path_buf(),
            line: LINE.into(),
        }
    }

    #[test]
    fn apply_twice_then_revert_is_byte_identical() {
        let dir = tempfile::tempdir().unwrap();
        for (name, original) in [
            ("lf", &b"export A=1\n"[..]),
            ("crlf", b"export A=1\r\n"),
            ("no-final-newline", b"export A=1"),
            ("empty", b""),
        ] {
            let file = dir.path().join(name);
            fs_err::write(&file, original).unwrap();
            let applied = apply(&hook(&file)).unwrap().unwrap();
            assert!(!applied.created);
            assert_eq!(apply(&hook(&file)).unwrap(), None, "{name}");
            let content = fs_err::read_to_string(&file).unwrap();
            assert_eq!(content.matches(MARKER).count(), 1, "{name}");
            assert_eq!(content.matches(LINE).count(), 1, "{name}");
            // The record survives the receipt.
            let json = serde_json::to_string(&applied).unwrap();
            let applied: Applied = serde_json::from_str(&json).unwrap();
            revert(&applied).unwrap();
            assert_eq!(fs_err::read(&file).unwrap(), original, "{name}");
            // Reverting again finds nothing to do.
            revert(&applied).unwrap();
            assert_eq!(fs_err::read(&file).unwrap(), original, "{name}");
        }
    }

    #[test]
    fn revert_deletes_the_file_it_created() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".profile");
        let applied = apply(&hook(&file)).unwrap().unwrap();
        assert!(applied.created);
        let mode = fs_err::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
        revert(&applied).unwrap();
        assert!(!file.exists());

        // If the user added to it since, it stays, without our lines.
        let applied = apply(&hook(&file)).unwrap().unwrap();
        let mut content = fs_err::read(&file).unwrap();
        content.extend_from_slice(b"export MINE=1\n");
        fs_err::write(&file, &content).unwrap();
        revert(&applied).unwrap();
        assert_eq!(fs_err::read(&file).unwrap(), b"export MINE=1\n");

        // Gone already: nothing to do.
        fs_err::remove_file(&file).unwrap();
        revert(&applied).unwrap();
        assert!(!file.exists());
    }

    #[test]
    fn a_hard_linked_rc_file_keeps_its_inode() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles-bashrc");
        let file = dir.path().join(".bashrc");
        fs_err::write(&real, "export A=1\n").unwrap();
        std::fs::hard_link(&real, &file).unwrap();
        let ino = fs_err::metadata(&file).unwrap().ino();
        let applied = apply(&hook(&file)).unwrap().unwrap();
        assert_eq!(fs_err::metadata(&file).unwrap().ino(), ino);
        assert!(fs_err::read_to_string(&real).unwrap().contains(LINE));
        // Something of the user's after the block: the revert rewrites from the block on.
        let mut content = fs_err::read(&file).unwrap();
        content.extend_from_slice(b"export B=2\n");
        fs_err::write(&file, &content).unwrap();
        revert(&applied).unwrap();
        assert_eq!(fs_err::metadata(&file).unwrap().ino(), ino);
        assert_eq!(fs_err::metadata(&real).unwrap().nlink(), 2);
        assert_eq!(fs_err::read(&real).unwrap(), b"export A=1\nexport B=2\n");
        // The plain case: the block at the end is cut off.
        let applied = apply(&hook(&file)).unwrap().unwrap();
        revert(&applied).unwrap();
        assert_eq!(fs_err::read(&real).unwrap(), b"export A=1\nexport B=2\n");
        assert_eq!(fs_err::metadata(&file).unwrap().ino(), ino);
    }

    #[test]
    fn directories_made_for_a_new_file_go_when_empty() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".config/fish/conf.d/cudaup.fish");
        let applied = plan_apply(&hook(&file)).unwrap().unwrap();
        assert_eq!(
            applied.applied().created_dirs,
            [
                dir.path().join(".config"),
                dir.path().join(".config/fish"),
                dir.path().join(".config/fish/conf.d")
            ]
        );
        let applied = applied.write().unwrap();
        revert(&applied).unwrap();
        assert!(!dir.path().join(".config").exists());
        // A directory the user put something in stays.
        let applied = apply(&hook(&file)).unwrap().unwrap();
        fs_err::write(dir.path().join(".config/fish/config.fish"), "").unwrap();
        revert(&applied).unwrap();
        assert!(!dir.path().join(".config/fish/conf.d").exists());
        assert!(dir.path().join(".config/fish/config.fish").exists());
    }

    #[test]
    fn symlinked_rc_file_stays_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let dotfiles = dir.path().join("dotfiles");
        fs_err::create_dir(&dotfiles).unwrap();
        let real = dotfiles.join("bashrc");
        fs_err::write(&real, "export A=1\n").unwrap();
        let home = dir.path().join("home");
        fs_err::create_dir(&home).unwrap();
        // A relative link, through a second link, as dotfile managers make them.
        let middle = home.join(".bashrc.d");
        symlink("../dotfiles/bashrc", &middle).unwrap();
        let link = home.join(".bashrc");
        symlink(&middle, &link).unwrap();

        let applied = apply(&hook(&link)).unwrap().unwrap();
        assert_eq!(applied.file, link);
        assert!(fs_err::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(fs_err::symlink_metadata(&middle)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(fs_err::read_to_string(&real).unwrap().contains(LINE));
        // No temporary file left behind.
        assert_eq!(fs_err::read_dir(&dotfiles).unwrap().count(), 1);

        revert(&applied).unwrap();
        assert!(fs_err::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs_err::read(&real).unwrap(), b"export A=1\n");
    }

    #[test]
    fn dangling_symlink_target_is_created_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles/profile");
        let link = dir.path().join(".profile");
        symlink(&real, &link).unwrap();
        let applied = apply(&hook(&link)).unwrap().unwrap();
        assert!(applied.created);
        assert!(fs_err::read_to_string(&real).unwrap().contains(LINE));
        revert(&applied).unwrap();
        assert!(!real.exists());
        assert!(fs_err::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn symlink_loop_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        symlink(&b, &a).unwrap();
        symlink(&a, &b).unwrap();
        assert!(matches!(
            apply(&hook(&a)),
            Err(ShellError::SymlinkLoop { .. })
        ));
    }

    #[test]
    fn read_only_file_is_an_error_and_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".bashrc");
        fs_err::write(&file, "export A=1\n").unwrap();
        fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
        let error = apply(&hook(&file)).unwrap_err();
        assert!(matches!(error, ShellError::ReadOnly { .. }));
        let message = error.to_string();
        assert!(message.contains(LINE), "{message}");
        assert!(message.contains(".bashrc"), "{message}");
        assert_eq!(fs_err::read(&file).unwrap(), b"export A=1\n");
        assert_eq!(
            fs_err::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o444
        );

        // Made read-only after cudaup hooked it: revert says what to remove by hand.
        fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let applied = apply(&hook(&file)).unwrap().unwrap();
        fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
        let before = fs_err::read(&file).unwrap();
        let error = revert(&applied).unwrap_err();
        assert!(error.to_string().contains(MARKER), "{error}");
        assert_eq!(fs_err::read(&file).unwrap(), before);
    }

    #[test]
    fn mode_is_preserved() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".zshenv");
        fs_err::write(&file, "export SECRET=1\n").unwrap();
        fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let applied = apply(&hook(&file)).unwrap().unwrap();
        let mode = || fs_err::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(), 0o600);
        revert(&applied).unwrap();
        assert_eq!(mode(), 0o600);
        assert_eq!(fs_err::read(&file).unwrap(), b"export SECRET=1\n");
    }

    #[test]
    fn hooked_profile_is_sourced_by_a_real_shell() {
        // End to end: the line apply writes really loads the env script.
        let Some(dash) = ["/usr/bin/dash", "/bin/dash", "/bin/sh"]
            .iter()
            .map(Path::new)
            .find(|p| p.is_file())
        else {
            return;
        };
        let home = tempfile::tempdir().unwrap();
        let cudaup = home.path().join("my cudaup");
        fs_err::create_dir(&cudaup).unwrap();
        fs_err::write(cudaup.join("env"), "export CUDAUP_SOURCED=yes\n").unwrap();
        let p = process(home.path(), &[]);
        for hook in hooks(&p, &cudaup, &[Shell::Posix]) {
            apply(&hook).unwrap();
        }
        let profile = home.path().join(".profile");
        let output = std::process::Command::new(dash)
            .arg("-c")
            .arg(format!(
                ". '{}'; echo \"$CUDAUP_SOURCED\"",
                profile.display()
            ))
            .env_clear()
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout), "yes\n");
    }
}
