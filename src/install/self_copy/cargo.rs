//! Whether `cargo install` put the running binary where it is. Cargo records what it installed
//! in `$CARGO_HOME/.crates2.json` (`{"installs": {"<package id>": {"bins": ["cudaup"], …}}}`)
//! and, in the older format it still writes beside it, `$CARGO_HOME/.crates.toml`
//! (`[v1] "<package id>" = ["cudaup"]`); a binary in `$CARGO_HOME/bin` that one of them lists is
//! cargo's to update and remove.

use std::path::{Path, PathBuf};

use crate::world::process::Process;

/// The binary, when `exe` is one `cargo install` manages: it sits in `$CARGO_HOME/bin`
/// (default `~/.cargo/bin`) and cargo's install records list it.
pub fn cargo_managed(process: &Process, exe: &Path) -> Option<PathBuf> {
    let cargo_home = process
        .path_var("CARGO_HOME")
        .or_else(|| process.home().map(|h| h.join(".cargo")))?;
    let bin = fs_err::canonicalize(cargo_home.join("bin")).ok()?;
    let exe_dir = exe.parent().and_then(|d| fs_err::canonicalize(d).ok())?;
    if exe_dir != bin {
        return None;
    }
    let name = exe.file_name()?.to_str()?;
    listed(&cargo_home, name).then(|| exe.to_owned())
}

fn listed(cargo_home: &Path, bin: &str) -> bool {
    let names = |list: Option<&Vec<serde_json::Value>>| {
        list.is_some_and(|l| l.iter().any(|b| b.as_str() == Some(bin)))
    };
    if let Some(doc) = fs_err::read(cargo_home.join(".crates2.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    {
        let installs = doc.get("installs").and_then(|i| i.as_object());
        if installs.is_some_and(|i| {
            i.values()
                .any(|entry| names(entry.get("bins").and_then(|b| b.as_array())))
        }) {
            return true;
        }
    }
    fs_err::read_to_string(cargo_home.join(".crates.toml"))
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| t.get("v1").and_then(|v| v.as_table()).cloned())
        .is_some_and(|v1| {
            v1.values().any(|bins| {
                bins.as_array()
                    .is_some_and(|l| l.iter().any(|b| b.as_str() == Some(bin)))
            })
        })
}
