//! Writing a refreshed catalog so that a crash or a failed check never leaves a catalog in use
//! that did not pass `manifests check`: each refresh is a new generation directory under
//! `$CUDAUP_HOME/manifests.d/`, checked whole, then published by replacing the
//! `$CUDAUP_HOME/manifests` symlink in one rename. catalog.toml records the sha256 of every file,
//! so a catalog edited afterwards is not used either (`select`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::UpdateError;
use crate::catalog::select::digest;
use crate::catalog::{check, Source};

/// Where the refreshed catalog was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The directory now holding it.
    pub dir: PathBuf,
    /// The files whose text changed.
    pub changed: Vec<String>,
    /// What was in cudaup's way and was renamed rather than removed (a catalog of the user's own
    /// at `$CUDAUP_HOME/manifests`, a symlinked `manifests.d`).
    pub set_aside: Vec<SetAside>,
}

/// Something that was not cudaup's, moved out of its way by a rename: nothing is lost.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SetAside {
    /// Where it was.
    pub from: PathBuf,
    /// Where it is now.
    pub to: PathBuf,
    /// What it was.
    pub what: String,
}

impl std::fmt::Display for SetAside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}) was not cudaup's: it was moved to {}, untouched",
            self.from.display(),
            self.what,
            self.to.display()
        )
    }
}

/// Where `path` is renamed to when it is in the way: beside it, a name no run has used.
fn aside_name(path: &Path) -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = path.with_file_name(format!("{name}.set-aside-{secs}-{}", std::process::id()));
    let mut candidate = base.clone();
    let mut n = 1;
    while candidate.symlink_metadata().is_ok() {
        candidate = PathBuf::from(format!("{}-{n}", base.display()));
        n += 1;
    }
    candidate
}

/// Renames `path` aside (a rename never follows a link nor touches what is inside).
fn set_aside(path: &Path, what: &str, log: &mut Vec<SetAside>) -> Result<(), UpdateError> {
    let to = aside_name(path);
    crate::world::fs::move_aside(path, &to)?;
    tracing::warn!(
        "{} was not cudaup's; moved to {}",
        path.display(),
        to.display()
    );
    log.push(SetAside {
        from: path.to_owned(),
        to,
        what: what.to_owned(),
    });
    Ok(())
}

/// A generation cudaup made: a real directory (not a link) named `catalog-…` directly in
/// `generations`.
fn is_generation(generations: &Path, path: &Path) -> bool {
    path.parent() == Some(generations)
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("catalog-"))
        && path.symlink_metadata().is_ok_and(|m| m.is_dir())
}

fn write_all(dir: &Path, texts: &BTreeMap<String, String>) -> std::io::Result<()> {
    for (name, text) in texts {
        fs_err::write(dir.join(name), text)?;
    }
    Ok(())
}

fn check_dir(dir: &Path) -> Result<(), UpdateError> {
    let problems = check(&Source::Dir(dir.to_owned()));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(UpdateError::Check(
            problems
                .iter()
                .map(|p| format!("  {p}"))
                .collect::<Vec<_>>()
                .join("\n"),
        ))
    }
}

/// catalog.toml with the `[files]` table of every other manifest's sha256.
fn with_digests(texts: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut out = texts.clone();
    let mut table = String::from("\n# sha256 of each manifest after `manifests check` passed: a catalog whose files differ is not used.\n[files]\n");
    for (name, text) in texts.iter().filter(|(n, _)| n.as_str() != "catalog.toml") {
        table.push_str(&format!(
            "{} = \"{}\"\n",
            super::rows::lit(name),
            digest(text)
        ));
    }
    if let Some(meta) = out.get_mut("catalog.toml") {
        // A base that was itself a refreshed catalog carries an old table: drop it.
        if let Some(i) = meta.find("\n# sha256 of each manifest") {
            meta.truncate(i + 1);
        }
        // One newline before the table's blank line, however many the base ended with: the
        // file must come out the same byte for byte when nothing changed.
        let end = meta.trim_end_matches('\n').len();
        meta.truncate(end);
        meta.push('\n');
        meta.push_str(&table);
    }
    out
}

/// Writes a refreshed catalog under `home` and makes it the one in effect at `link`; its
/// generations live in `generations` (the home's `manifests_link` and `manifests_d`, handed down
/// by the caller). On any failure the
/// catalog in effect stays as it was. Only generations cudaup made are ever removed; anything
/// else in the way is renamed aside and listed in [`Written::set_aside`].
pub fn write_refreshed(
    home: &Path,
    generations: &Path,
    link: &Path,
    texts: &BTreeMap<String, String>,
) -> Result<Written, UpdateError> {
    let mut aside = Vec::new();
    let generations = generations.to_path_buf();
    match generations.symlink_metadata() {
        Ok(m) if m.is_dir() => {}
        // A link (or a file) there is not the directory cudaup keeps: never delete through it.
        Ok(m) => set_aside(
            &generations,
            if m.file_type().is_symlink() {
                "a symlink"
            } else {
                "not a directory"
            },
            &mut aside,
        )?,
        Err(_) => {}
    }
    fs_err::create_dir_all(&generations)?;
    let gen = tempfile::Builder::new()
        .prefix("catalog-")
        .tempdir_in(&generations)?;
    let texts = with_digests(texts);
    write_all(gen.path(), &texts)?;
    check_dir(gen.path())?;
    if let Err(why) = crate::catalog::select::verify(gen.path()) {
        return Err(UpdateError::Check(format!("  {why}")));
    }
    let gen = gen.keep();
    let previous = publish(home, &generations, link, &gen, &mut aside)?;
    // Keep the one that was in effect before (for a look at what changed), drop the other
    // generations; nothing else in the directory is cudaup's to remove.
    if generations.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        if let Ok(entries) = fs_err::read_dir(&generations) {
            for e in entries.flatten() {
                let p = e.path();
                if p != gen && Some(&p) != previous.as_ref() && is_generation(&generations, &p) {
                    let _ = fs_err::remove_dir_all(&p);
                }
            }
        }
    }
    let changed = texts.keys().cloned().collect();
    Ok(Written {
        dir: gen,
        changed,
        set_aside: aside,
    })
}

/// Points `link` at `gen` in one rename; returns the generation it pointed at before. A link
/// that points anywhere but at one of cudaup's generations, and a plain directory (a catalog of
/// the user's own), are set aside first.
#[cfg(unix)]
fn publish(
    home: &Path,
    generations: &Path,
    link: &Path,
    gen: &Path,
    aside: &mut Vec<SetAside>,
) -> Result<Option<PathBuf>, UpdateError> {
    let previous = match link.symlink_metadata() {
        Err(_) => None,
        Ok(m) if m.file_type().is_symlink() => {
            let target = fs_err::read_link(link).ok().map(|p| home.join(p));
            match target.filter(|t| is_generation(generations, t)) {
                Some(t) => Some(t),
                None => {
                    set_aside(link, "a symlink to a catalog cudaup did not write", aside)?;
                    None
                }
            }
        }
        Ok(m) => {
            set_aside(
                link,
                if m.is_dir() { "a directory" } else { "a file" },
                aside,
            )?;
            None
        }
    };
    let rel = gen
        .strip_prefix(home)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| gen.to_path_buf());
    crate::world::fs::replace_symlink(&rel, link)?;
    Ok(previous)
}

#[cfg(not(unix))]
fn publish(
    _home: &Path,
    generations: &Path,
    link: &Path,
    gen: &Path,
    aside: &mut Vec<SetAside>,
) -> Result<Option<PathBuf>, UpdateError> {
    // Without symlinks: move the old one aside, then the new one in (a crash between the two
    // leaves no refreshed catalog, and the embedded one is used). Only a catalog that passes
    // the digest check is taken for one cudaup wrote.
    let previous = if link.symlink_metadata().is_ok() {
        if link.is_dir() && crate::catalog::select::verify(link).is_ok() {
            let to = generations.join(format!("catalog-previous-{}", std::process::id()));
            crate::world::fs::move_aside(link, &to)?;
            Some(to)
        } else {
            set_aside(link, "a catalog cudaup did not write", aside)?;
            None
        }
    } else {
        None
    };
    crate::world::fs::publish_dir(gen, link)?;
    Ok(previous)
}

/// Writes the catalog into `dir` (the repository's `manifests/`: `manifests update --write`), after
/// checking the whole set in a scratch copy. Only changed files are replaced, each by a rename.
pub fn write_dir(dir: &Path, texts: &BTreeMap<String, String>) -> Result<Written, UpdateError> {
    let scratch = tempfile::tempdir()?;
    write_all(scratch.path(), texts)?;
    check_dir(scratch.path())?;
    fs_err::create_dir_all(dir)?;
    let mut changed = Vec::new();
    for (name, text) in texts {
        let path = dir.join(name);
        if fs_err::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
            continue;
        }
        crate::world::fs::write_atomic(
            &path,
            text.as_bytes(),
            crate::world::fs::Temp::Unique,
            crate::world::fs::Durability::Fsync,
        )?;
        changed.push(name.clone());
    }
    Ok(Written {
        dir: dir.to_owned(),
        changed,
        set_aside: Vec::new(),
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn embedded() -> BTreeMap<String, String> {
        crate::catalog::EMBEDDED
            .iter()
            .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
            .collect()
    }

    /// Issue 25, finding 6: a plain directory at `$CUDAUP_HOME/manifests` (a user's own
    /// catalog) was removed where the code meant to set it aside.
    #[test]
    fn a_users_own_catalog_directory_is_set_aside_not_removed() {
        let home = tempfile::tempdir().unwrap();
        let own = home.path().join("manifests");
        fs_err::create_dir_all(&own).unwrap();
        fs_err::write(own.join("cuda.toml"), "# mine\n").unwrap();
        let w = write_refreshed(
            home.path(),
            &home.path().join("manifests.d"),
            &home.path().join("manifests"),
            &embedded(),
        )
        .unwrap();
        assert_eq!(w.set_aside.len(), 1, "{:?}", w.set_aside);
        let moved = &w.set_aside[0].to;
        assert_eq!(
            fs_err::read_to_string(moved.join("cuda.toml")).unwrap(),
            "# mine\n"
        );
        assert!(w.set_aside[0].to_string().contains("moved to"));
        assert!(own.symlink_metadata().unwrap().file_type().is_symlink());
        // A second refresh keeps it too, and removes only its own older generation.
        let again = write_refreshed(
            home.path(),
            &home.path().join("manifests.d"),
            &home.path().join("manifests"),
            &embedded(),
        )
        .unwrap();
        assert!(again.set_aside.is_empty());
        let third = write_refreshed(
            home.path(),
            &home.path().join("manifests.d"),
            &home.path().join("manifests"),
            &embedded(),
        )
        .unwrap();
        assert!(moved.join("cuda.toml").is_file());
        assert!(
            !w.dir.exists(),
            "the oldest generation is cudaup's own and goes"
        );
        assert!(again.dir.is_dir() && third.dir.is_dir());
    }

    /// Issue 25, finding 6: with `manifests.d` a symlink, the directories inside its target were
    /// deleted; the link is set aside and nothing behind it is touched.
    #[test]
    fn a_symlinked_generations_directory_is_never_deleted_through() {
        let home = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        for d in ["catalog-looks-like-ours", "precious"] {
            fs_err::create_dir_all(elsewhere.path().join(d)).unwrap();
            fs_err::write(elsewhere.path().join(d).join("keep"), "x").unwrap();
        }
        std::os::unix::fs::symlink(elsewhere.path(), home.path().join("manifests.d")).unwrap();
        let w = write_refreshed(
            home.path(),
            &home.path().join("manifests.d"),
            &home.path().join("manifests"),
            &embedded(),
        )
        .unwrap();
        assert_eq!(w.set_aside.len(), 1, "{:?}", w.set_aside);
        assert_eq!(w.set_aside[0].what, "a symlink");
        for d in ["catalog-looks-like-ours", "precious"] {
            assert!(elsewhere.path().join(d).join("keep").is_file(), "{d}");
        }
        let gens = home.path().join("manifests.d");
        assert!(gens.symlink_metadata().unwrap().is_dir());
        // Entries of a real manifests.d that cudaup did not make stay too.
        fs_err::create_dir_all(gens.join("notes")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("precious"), gens.join("catalog-link"))
            .unwrap();
        write_refreshed(
            home.path(),
            &home.path().join("manifests.d"),
            &home.path().join("manifests"),
            &embedded(),
        )
        .unwrap();
        write_refreshed(
            home.path(),
            &home.path().join("manifests.d"),
            &home.path().join("manifests"),
            &embedded(),
        )
        .unwrap();
        assert!(gens.join("notes").is_dir());
        assert!(elsewhere.path().join("precious/keep").is_file());
    }
}
