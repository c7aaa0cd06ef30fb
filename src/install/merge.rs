//! The merged staging tree: every unpacked archive of one install laid over the others, checked
//! as a whole before anything is written into the staging directory.
//!
//! The unpacker checks each archive on its own, and that is not enough: archives are harmless
//! alone and hostile together. Component A ships `include/x -> .`; component B ships
//! `include/x/x/x/y -> ../../../..` (four `..` under four real directories: fine in B) and
//! files under `include/y/`. Merged naively, A's link turns B's four directories into one, `y`
//! points four levels above the prefix, and B's files land there. So the merged tree is what
//! gets checked, in memory, before the first write:
//! - every path is relative, made of normal components, and its first component is not a name
//!   cudaup reserves ([`crate::unpack::is_reserved`]);
//! - every proper ancestor of every entry is a directory of the merged tree: nothing is ever
//!   placed under a symlink or a file, whichever archive brought it;
//! - a path is the same kind in every archive that has it (a file in one archive and a directory
//!   in another is refused, not left to an OS error), and the same bytes or link target;
//! - every symlink, resolved against the merged tree the way the kernel would (following the
//!   merged tree's other links, 40 hops at most), stays inside the prefix.
//!
//! Writing ([`Merged::write`]) then never writes onto an existing path: directories with
//! `mkdir`, files with `link` or an `O_CREAT | O_EXCL` copy, symlinks with `symlink`, all of
//! which fail rather than follow or replace what is there, in a staging directory cudaup created
//! empty, parents before children.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use sha2::{Digest, Sha256};

use super::receipt::ReceiptFile;
use super::{InstallError, Item, Unpacked};
use crate::unpack::{Entry, EntryKind, UnpackError};

/// Linux's limit on symlinks followed in one lookup (ELOOP past it).
const MAX_HOPS: usize = 40;

/// What a merged path is.
#[derive(Debug)]
enum Kind<'a> {
    Dir,
    File {
        /// The file in the unpacked cache.
        src: PathBuf,
        entry: &'a Entry,
    },
    Link {
        target: PathBuf,
    },
}

#[derive(Debug)]
struct Node<'a> {
    kind: Kind<'a>,
    /// The component that brought it (`cuda_nvcc 13.0.88`), for messages.
    by: String,
}

/// Every archive of an install, merged and checked; see the module documentation.
#[derive(Debug)]
pub(super) struct Merged<'a> {
    nodes: BTreeMap<PathBuf, Node<'a>>,
}

fn label(item: &Item) -> String {
    format!("{} {}", item.component, item.version)
}

/// An unsafe merge: exit code 4, like an unsafe archive, naming both components.
fn refuse(by: &[&str], path: &Path, reason: String) -> InstallError {
    let mut names: Vec<&str> = by.to_vec();
    names.dedup();
    InstallError::Unpack {
        name: names.join(" + "),
        source: UnpackError::Unsafe {
            entry: crate::unpack::display_path(path),
            reason,
        },
    }
}

fn kind_name(kind: &Kind<'_>) -> &'static str {
    match kind {
        Kind::Dir => "a directory",
        Kind::File { .. } => "a file",
        Kind::Link { .. } => "a symlink",
    }
}

impl<'a> Merged<'a> {
    /// Lays `trees` over one another (in order) and adds NVIDIA's compatibility links for a
    /// Linux `arch` (none for a Windows toolkit: `None`), refusing any merge the module
    /// documentation rules out.
    pub(super) fn build(
        trees: &'a [(&'a Item, Unpacked)],
        arch: Option<&str>,
    ) -> Result<Merged<'a>, InstallError> {
        let mut merged = Merged {
            nodes: BTreeMap::new(),
        };
        for (item, tree) in trees {
            let by = label(item);
            for e in &tree.entries {
                merged.add_entry(&by, &tree.dir, e)?;
            }
        }
        if let Some(arch) = arch {
            merged.add_compat_links(arch);
        }
        merged.check_links()?;
        Ok(merged)
    }

    fn add_entry(&mut self, by: &str, dir: &Path, e: &'a Entry) -> Result<(), InstallError> {
        let path = &e.path;
        let normal = path.components().all(|c| matches!(c, Component::Normal(_)));
        if !normal || path.as_os_str().is_empty() {
            return Err(refuse(
                &[by],
                path,
                "not a relative path of plain names".into(),
            ));
        }
        if crate::unpack::is_reserved(path) {
            return Err(refuse(
                &[by],
                path,
                format!(
                    "a name cudaup reserves for its own files (`{}*` at the top of the prefix)",
                    crate::unpack::RESERVED_PREFIX
                ),
            ));
        }
        self.ensure_parents(by, path)?;
        let kind = match &e.kind {
            EntryKind::Dir => Kind::Dir,
            EntryKind::File { .. } => Kind::File {
                src: dir.join(path),
                entry: e,
            },
            EntryKind::Symlink { target } => Kind::Link {
                target: target.clone(),
            },
        };
        match self.nodes.get(path) {
            None => {
                self.nodes.insert(
                    path.clone(),
                    Node {
                        kind,
                        by: by.to_owned(),
                    },
                );
                Ok(())
            }
            Some(prev) => match (&prev.kind, &kind) {
                (Kind::Dir, Kind::Dir) => Ok(()),
                (Kind::File { entry: a, .. }, Kind::File { entry: b, .. })
                    if a.sha256 == b.sha256 && a.size == b.size =>
                {
                    Ok(())
                }
                (Kind::Link { target: a }, Kind::Link { target: b }) if a == b => Ok(()),
                (Kind::File { .. }, Kind::File { .. }) | (Kind::Link { .. }, Kind::Link { .. }) => {
                    Err(InstallError::Conflict {
                        path: path.display().to_string(),
                        first: prev.by.clone(),
                        second: by.to_owned(),
                    })
                }
                (a, b) => Err(refuse(
                    &[&prev.by, by],
                    path,
                    format!(
                        "{} in {} but {} in {}: the archives disagree about what this path is",
                        kind_name(a),
                        prev.by,
                        kind_name(b),
                        by
                    ),
                )),
            },
        }
    }

    /// Makes every proper ancestor of `path` a directory of the merged tree, or refuses.
    fn ensure_parents(&mut self, by: &str, path: &Path) -> Result<(), InstallError> {
        let mut ancestor = PathBuf::new();
        let parts: Vec<Component<'_>> = path.components().collect();
        for c in &parts[..parts.len().saturating_sub(1)] {
            ancestor.push(c);
            match self.nodes.get(&ancestor) {
                None => {
                    self.nodes.insert(
                        ancestor.clone(),
                        Node {
                            kind: Kind::Dir,
                            by: by.to_owned(),
                        },
                    );
                }
                Some(Node { kind: Kind::Dir, .. }) => {}
                Some(prev @ Node {
                    kind: Kind::Link { .. },
                    ..
                }) => {
                    return Err(refuse(
                        &[&prev.by, by],
                        path,
                        format!(
                            "{by} puts it under `{}`, which {} makes a symlink: it would be written through that link",
                            ancestor.display(),
                            prev.by
                        ),
                    ))
                }
                Some(prev @ Node {
                    kind: Kind::File { .. },
                    ..
                }) => {
                    return Err(refuse(
                        &[&prev.by, by],
                        path,
                        format!(
                            "{by} needs `{}` to be a directory, but it is a file in {}",
                            ancestor.display(),
                            prev.by
                        ),
                    ))
                }
            }
        }
        Ok(())
    }

    /// NVIDIA's runfile layout (`lib -> lib64`, `targets/<arch>-linux/...`), where the archives
    /// left room for it: the path is free, its ancestors are directories or free, and the target
    /// exists in the merged tree.
    fn add_compat_links(&mut self, arch: &str) {
        for (path, target) in super::layout::compat_links(arch) {
            if self.nodes.contains_key(&path) {
                continue;
            }
            let mut ancestors_free = true;
            let mut ancestor = PathBuf::new();
            if let Some(parent) = path.parent() {
                for c in parent.components() {
                    ancestor.push(c);
                    match self.nodes.get(&ancestor) {
                        None
                        | Some(Node {
                            kind: Kind::Dir, ..
                        }) => {}
                        Some(_) => ancestors_free = false,
                    }
                }
            }
            let lands = self.resolve(&path, &target).ok();
            let exists = lands.is_some_and(|p| self.nodes.contains_key(&p));
            if !ancestors_free || !exists {
                continue;
            }
            let by = "cudaup's runfile-layout links".to_owned();
            // Checked above: every ancestor is a directory or free, so this cannot fail.
            let _ = self.ensure_parents(&by, &path);
            self.nodes.insert(
                path,
                Node {
                    kind: Kind::Link { target },
                    by,
                },
            );
        }
    }

    /// Resolves the symlink `link -> target` against the merged tree, following the tree's
    /// links as the kernel would; the path it lands on (which may not exist), or why it leaves.
    fn resolve(&self, link: &Path, target: &Path) -> Result<PathBuf, String> {
        let shown = || format!("`{}` -> `{}`", link.display(), target.display());
        let mut at: Vec<OsString> = link
            .parent()
            .into_iter()
            .flat_map(Path::components)
            .map(|c| c.as_os_str().to_owned())
            .collect();
        // Components still to walk, the next one last.
        let mut todo: Vec<OsString> = Vec::new();
        let push = |todo: &mut Vec<OsString>, t: &Path| -> Result<(), String> {
            if t.has_root() {
                return Err(format!("{} is absolute", shown()));
            }
            todo.extend(t.components().rev().map(|c| c.as_os_str().to_owned()));
            Ok(())
        };
        push(&mut todo, target)?;
        let mut hops = 0;
        while let Some(c) = todo.pop() {
            if c == "." {
                continue;
            }
            if c == ".." {
                if at.pop().is_none() {
                    return Err(format!("{} leads out of the prefix", shown()));
                }
                continue;
            }
            at.push(c);
            let here: PathBuf = at.iter().collect();
            if let Some(Node {
                kind: Kind::Link { target: next },
                ..
            }) = self.nodes.get(&here)
            {
                hops += 1;
                if hops > MAX_HOPS {
                    return Err(format!(
                        "{}: more than {MAX_HOPS} levels of symlinks",
                        shown()
                    ));
                }
                at.pop();
                push(&mut todo, next)?;
            }
        }
        Ok(at.iter().collect())
    }

    fn check_links(&self) -> Result<(), InstallError> {
        for (path, node) in &self.nodes {
            if let Kind::Link { target } = &node.kind {
                if let Err(reason) = self.resolve(path, target) {
                    return Err(refuse(&[&node.by], path, reason));
                }
            }
        }
        Ok(())
    }

    /// Writes the merged tree into `staging` (an empty directory cudaup created) and returns the
    /// receipt's file list (files and symlinks, sorted).
    pub(super) fn write(
        &self,
        staging: &Path,
        cancel: &AtomicBool,
    ) -> Result<Vec<ReceiptFile>, InstallError> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        for (path, node) in &self.nodes {
            if cancel.load(Ordering::Relaxed) {
                return Err(InstallError::Cancelled);
            }
            let dst = staging.join(path);
            match &node.kind {
                Kind::Dir => {
                    #[cfg_attr(not(unix), allow(unused_mut))]
                    let mut builder = std::fs::DirBuilder::new();
                    #[cfg(unix)]
                    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o755);
                    builder.create(&dst).map_err(|e| at(&dst, e))?;
                }
                Kind::File { src, entry } => {
                    link_or_copy(src, &dst, entry, &mut buf)?;
                    out.push(ReceiptFile {
                        path: path.clone(),
                        size: Some(entry.size),
                        sha256: entry.sha256.clone(),
                        link: None,
                    });
                }
                Kind::Link { target } => {
                    crate::world::fs::symlink(target, &dst).map_err(|e| at(&dst, e))?;
                    out.push(ReceiptFile {
                        path: path.clone(),
                        size: None,
                        sha256: None,
                        link: Some(target.clone()),
                    });
                }
            }
        }
        Ok(out)
    }
}

fn at(path: &Path, e: std::io::Error) -> InstallError {
    InstallError::Io(std::io::Error::new(
        e.kind(),
        format!("{}: {e}", path.display()),
    ))
}

/// A hard link from the unpacked cache, or, where the filesystem refuses one (another device,
/// too many links), a copy into a new file (`O_EXCL`) whose bytes are hashed on the way and must
/// be the verified ones. Neither writes onto, or through, anything already at `dst`.
fn link_or_copy(
    src: &Path,
    dst: &Path,
    entry: &Entry,
    buf: &mut Vec<u8>,
) -> Result<(), InstallError> {
    match std::fs::hard_link(src, dst) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(at(dst, e)),
        Err(e) => tracing::debug!("hard link {} failed ({e}); copying", src.display()),
    }
    let mut options = fs_err::OpenOptions::new();
    options.write(true).create_new(true);
    // Windows has no execute bit: what runs is told by the name (`.exe`, `.dll`).
    #[cfg(unix)]
    fs_err::os::unix::fs::OpenOptionsExt::mode(
        &mut options,
        if matches!(entry.kind, EntryKind::File { executable: true }) {
            0o755
        } else {
            0o644
        },
    );
    let mut out = options.open(dst)?;
    let mut input = fs_err::File::open(src)?;
    if buf.is_empty() {
        buf.resize(1 << 20, 0);
    }
    let mut hasher = Sha256::new();
    loop {
        let n = std::io::Read::read(&mut input, buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        std::io::Write::write_all(&mut out, &buf[..n])?;
    }
    let got = hex::encode(hasher.finalize());
    if entry.sha256.as_deref().is_some_and(|want| want != got) {
        return Err(InstallError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{}: the unpacked cache no longer holds the verified bytes; run the command again",
                src.display()
            ),
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
