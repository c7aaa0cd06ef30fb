//! On Windows the user's registry is the shell setup: `CUDA_PATH`, `CUDA_PATH_V<major>_<minor>`
//! (NVIDIA's names) and the user `Path` (cudaup's bin, the toolkit's `bin` and `bin\x64`) in
//! `HKCU\Environment`, as NVIDIA's installer does for the whole machine. Each value's previous
//! bytes and type (or its absence) are recorded in a receipt *before* the value is written, so
//! `uninstall` puts back exactly what was there; a value the user changed after cudaup wrote it
//! is not clobbered: `Path` loses only cudaup's entries, any other value is left with a note.

use std::path::Path;

use crate::shell::windows::{
    windows_path_add, windows_path_remove, EnvStore, RegValue, REG_EXPAND_SZ, REG_SZ,
};
use crate::shell::ShellError;

/// The name of the user's PATH value.
pub const PATH: &str = "Path";

/// One value cudaup set.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Recorded {
    /// The value's name (`CUDA_PATH`, `Path`).
    pub name: String,
    /// What was there before cudaup first set it; `None`: no such value.
    pub before: Option<RegValue>,
    /// What cudaup wrote (or is about to write: the receipt goes first).
    pub after: RegValue,
    /// For `Path`: the entries cudaup added, to take out of a `Path` the user changed since.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
}

/// What cudaup set in the user's environment.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RegistryReceipt {
    /// Each value, in the order it was set.
    pub values: Vec<Recorded>,
}

impl RegistryReceipt {
    /// The receipt in `home`, or an empty one.
    pub fn read(home: &Path) -> RegistryReceipt {
        fs_err::read(crate::install::home::Home::at(home).registry_receipt())
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Writes it whole, or removes it when it records nothing (and its folder, once empty).
    pub fn write(&self, home: &Path) -> std::io::Result<()> {
        let path = crate::install::home::Home::at(home).registry_receipt();
        if self.values.is_empty() {
            match fs_err::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            if let Some(dir) = path.parent() {
                let _ = fs_err::remove_dir(dir);
            }
            return Ok(());
        }
        fs_err::create_dir_all(path.parent().expect("has a parent"))?;
        crate::install::receipt_file::write_whole(
            &path,
            &serde_json::to_vec_pretty(self).expect("serialises"),
        )
    }
}

/// What the user's environment should hold for the active stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// Directories for the front of `Path`, first first.
    pub path: Vec<String>,
    /// Variables: (name, value), written as `REG_SZ`.
    pub vars: Vec<(String, String)>,
}

/// NVIDIA's name for a release's own variable: `CUDA_PATH_V13_0` for CUDA 13.0.x.
pub fn versioned_name(cuda: &str) -> Option<String> {
    let mut parts = cuda.split('.');
    let major = parts.next().filter(|p| p.parse::<u32>().is_ok())?;
    let minor = parts.next().filter(|p| p.parse::<u32>().is_ok())?;
    Some(format!("CUDA_PATH_V{major}_{minor}"))
}

/// The environment for a toolkit at `toolkit` (release `cuda`) and cudaup's own copy in
/// `cudaup_bin`: `CUDA_PATH` and `CUDA_PATH_V<major>_<minor>` name the toolkit; `Path` gets
/// cudaup's bin, the toolkit's `bin` (nvcc.exe) and `bin\x64` (its DLLs, from CUDA 13).
pub fn wanted(toolkit: Option<(&Path, &str)>, cudaup_bin: Option<&Path>) -> Wanted {
    let mut path: Vec<String> = cudaup_bin
        .map(|b| b.display().to_string())
        .into_iter()
        .collect();
    let mut vars = Vec::new();
    if let Some((prefix, cuda)) = toolkit {
        let p = prefix.display().to_string();
        path.push(prefix.join("bin").display().to_string());
        path.push(prefix.join("bin").join("x64").display().to_string());
        vars.push(("CUDA_PATH".to_owned(), p.clone()));
        if let Some(name) = versioned_name(cuda) {
            vars.push((name, p));
        }
    }
    Wanted { path, vars }
}

/// One value left as the user has it, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Left {
    /// The value's name.
    pub name: String,
    /// Why it was left.
    pub why: String,
}

/// Why the environment could not be set.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The registry refused a read or a write.
    #[error(transparent)]
    Registry(#[from] ShellError),
    /// The receipt could not be written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Sets `wanted` in `store`, each change recorded in the receipt in `home` before it is made.
/// A value recorded by an earlier install that `wanted` no longer names is put back first (an
/// older release's `CUDA_PATH_V*`). Returns the values changed now, and those left as they are.
pub fn apply(
    store: &mut dyn EnvStore,
    home: &Path,
    wanted: &Wanted,
) -> Result<(Vec<String>, Vec<Left>), RegistryError> {
    let mut receipt = RegistryReceipt::read(home);
    let mut changed = Vec::new();
    let mut left = Vec::new();
    let named = |n: &str| {
        n.eq_ignore_ascii_case(PATH) && !wanted.path.is_empty()
            || wanted.vars.iter().any(|(v, _)| v.eq_ignore_ascii_case(n))
    };
    let stale: Vec<Recorded> = receipt
        .values
        .iter()
        .filter(|r| !named(&r.name))
        .cloned()
        .collect();
    for r in stale {
        if let Some(l) = revert_one(store, &r)? {
            left.push(l);
        }
        receipt.values.retain(|v| v.name != r.name);
        receipt.write(home)?;
        changed.push(r.name);
    }
    for (name, text) in &wanted.vars {
        let current = store.get(name)?;
        let after = RegValue::string(REG_SZ, text);
        if current.as_ref() == Some(&after) {
            continue;
        }
        let before = match receipt
            .values
            .iter()
            .find(|r| r.name.eq_ignore_ascii_case(name))
        {
            // cudaup's earlier value is still there: what was there before cudaup stays recorded.
            Some(r) if current.as_ref() == Some(&r.after) => r.before.clone(),
            _ => current,
        };
        record(&mut receipt, name, before, after.clone(), Vec::new());
        receipt.write(home)?;
        store.set(name, &after)?;
        changed.push(name.clone());
    }
    if !wanted.path.is_empty() {
        let current = store.get(PATH)?;
        let earlier = receipt
            .values
            .iter()
            .find(|r| r.name.eq_ignore_ascii_case(PATH))
            .cloned();
        // The Path to add to: the one before cudaup if nobody changed cudaup's since, else the
        // user's with cudaup's earlier entries taken out.
        let base: Option<RegValue> = match (&earlier, &current) {
            (Some(r), Some(c)) if *c == r.after => r.before.clone(),
            (Some(r), Some(c)) => c.text().map(|t| {
                let t = r
                    .added
                    .iter()
                    .fold(t, |t, d| windows_path_remove(&t, d).unwrap_or(t));
                RegValue::string(c.kind, &t)
            }),
            (_, c) => c.clone(),
        };
        match &base {
            Some(b) if b.text().is_none() => left.push(Left {
                name: PATH.to_owned(),
                why: format!(
                    "it is not a string (registry type {}): left as it is; add {} to it yourself",
                    b.kind,
                    wanted.path.join(";")
                ),
            }),
            _ => {
                let kind = base.as_ref().map_or(REG_EXPAND_SZ, |b| b.kind);
                let mut text = base.as_ref().and_then(RegValue::text);
                let mut added = Vec::new();
                for dir in wanted.path.iter().rev() {
                    if let Some(t) = windows_path_add(text.as_deref(), dir) {
                        text = Some(t);
                        added.push(dir.clone());
                    }
                }
                added.reverse();
                let after = RegValue::string(kind, text.as_deref().unwrap_or(""));
                if current.as_ref() != Some(&after) {
                    // What uninstall puts back: the Path as it would be without cudaup.
                    record(&mut receipt, PATH, base.clone(), after.clone(), added);
                    receipt.write(home)?;
                    store.set(PATH, &after)?;
                    changed.push(PATH.to_owned());
                }
            }
        }
    }
    if !changed.is_empty() {
        store.announce();
    }
    Ok((changed, left))
}

/// Records that `name` goes from `before` (what uninstall puts back) to `after`.
fn record(
    receipt: &mut RegistryReceipt,
    name: &str,
    before: Option<RegValue>,
    after: RegValue,
    added: Vec<String>,
) {
    receipt
        .values
        .retain(|r| !r.name.eq_ignore_ascii_case(name));
    receipt.values.push(Recorded {
        name: name.to_owned(),
        before,
        after,
        added,
    });
}

/// Puts one recorded value back: exactly as it was before cudaup when cudaup's value is still
/// there; for a `Path` the user changed since, only cudaup's entries are taken out; any other
/// value the user changed (or removed) is left, and said.
fn revert_one(store: &mut dyn EnvStore, r: &Recorded) -> Result<Option<Left>, ShellError> {
    let current = store.get(&r.name)?;
    if current == r.before {
        return Ok(None);
    }
    if current.as_ref() == Some(&r.after) {
        match &r.before {
            Some(v) => store.set(&r.name, v)?,
            None => store.remove(&r.name)?,
        }
        return Ok(None);
    }
    let Some(current) = current else {
        return Ok(Some(Left {
            name: r.name.clone(),
            why: "removed since cudaup set it: left removed".into(),
        }));
    };
    if let (false, Some(text)) = (r.added.is_empty(), current.text()) {
        let kept = r
            .added
            .iter()
            .fold(text.clone(), |t, d| windows_path_remove(&t, d).unwrap_or(t));
        if kept != text {
            if kept.is_empty() {
                store.remove(&r.name)?;
            } else {
                store.set(&r.name, &RegValue::string(current.kind, &kept))?;
            }
        }
        return Ok(Some(Left {
            name: r.name.clone(),
            why: format!(
                "changed since cudaup set it: only cudaup's entries ({}) were taken out, the rest is kept",
                r.added.join(";")
            ),
        }));
    }
    Ok(Some(Left {
        name: r.name.clone(),
        why: format!(
            "changed since cudaup set it (now {:?}): left as it is",
            current.text().unwrap_or_default()
        ),
    }))
}

/// Puts back every value the receipt in `home` records (last set first), then forgets the
/// receipt. Returns the values left as the user has them.
pub fn revert(store: &mut dyn EnvStore, home: &Path) -> Result<Vec<Left>, RegistryError> {
    let mut receipt = RegistryReceipt::read(home);
    let mut left = Vec::new();
    let any = !receipt.values.is_empty();
    while let Some(r) = receipt.values.pop() {
        if let Some(l) = revert_one(store, &r)? {
            left.push(l);
        }
        receipt.write(home)?;
    }
    if any {
        store.announce();
    }
    Ok(left)
}

#[cfg(test)]
mod tests;
