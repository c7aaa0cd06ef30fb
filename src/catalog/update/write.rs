//! Writing a refreshed catalog so that a crash or a failed check never leaves a catalog in use
//! that did not pass `manifests check`: each refresh is a new generation directory under
//! `$CUDAUP_HOME/manifests.d/`, checked whole, then published by replacing the
//! `$CUDAUP_HOME/manifests` symlink in one rename. catalog.toml records the sha256 of every file,
//! so a catalog edited afterwards is not used either (`select`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::UpdateError;
use crate::catalog::select::{digest, refreshed_dir};
use crate::catalog::{check, Source};

/// Where the refreshed catalog was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The directory now holding it.
    pub dir: PathBuf,
    /// The files whose text changed.
    pub changed: Vec<String>,
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
        meta.push_str(&table);
    }
    out
}

/// Writes a refreshed catalog under `home` and makes it the one in effect. On any failure the
/// catalog in effect stays as it was.
pub fn write_refreshed(
    home: &Path,
    texts: &BTreeMap<String, String>,
) -> Result<Written, UpdateError> {
    let generations = home.join("manifests.d");
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
    let link = refreshed_dir(home);
    let previous = publish(home, &link, &gen)?;
    // Keep the one that was in effect before (for a look at what changed), drop the rest.
    if let Ok(entries) = fs_err::read_dir(&generations) {
        for e in entries.flatten() {
            let p = e.path();
            if p != gen && Some(&p) != previous.as_ref() {
                let _ = fs_err::remove_dir_all(&p);
            }
        }
    }
    let changed = texts.keys().cloned().collect();
    Ok(Written { dir: gen, changed })
}

/// Points `link` at `gen` in one rename; returns the generation it pointed at before.
#[cfg(unix)]
fn publish(home: &Path, link: &Path, gen: &Path) -> Result<Option<PathBuf>, UpdateError> {
    let previous = fs_err::read_link(link).ok().map(|p| home.join(p));
    if link.exists() && previous.is_none() {
        // A plain directory from before generations: set it aside under manifests.d.
        let aside = home
            .join("manifests.d")
            .join(format!("previous-{}", std::process::id()));
        fs_err::rename(link, &aside)?;
    }
    let rel = gen
        .strip_prefix(home)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| gen.to_path_buf());
    let tmp = home.join(format!(".manifests.new-{}", std::process::id()));
    let _ = fs_err::remove_file(&tmp);
    std::os::unix::fs::symlink(&rel, &tmp)?;
    fs_err::rename(&tmp, link)?;
    Ok(previous)
}

#[cfg(not(unix))]
fn publish(home: &Path, link: &Path, gen: &Path) -> Result<Option<PathBuf>, UpdateError> {
    // Without symlinks: move the old one aside, then the new one in (a crash between the two
    // leaves no refreshed catalog, and the embedded one is used).
    let aside = home
        .join("manifests.d")
        .join(format!("previous-{}", std::process::id()));
    let previous = if link.exists() {
        fs_err::rename(link, &aside)?;
        Some(aside)
    } else {
        None
    };
    fs_err::rename(gen, link)?;
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
        let tmp = dir.join(format!(".{name}.new-{}", std::process::id()));
        fs_err::write(&tmp, text)?;
        fs_err::rename(&tmp, &path)?;
        changed.push(name.clone());
    }
    Ok(Written {
        dir: dir.to_owned(),
        changed,
    })
}
