//! How a receipt lands in `$CUDAUP_HOME/receipts/`: one JSON file per installed thing, named
//! after the path it describes, written whole (temp file, then rename) so a crash never leaves
//! half a receipt for doctor or uninstall to trip over.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// Writes `value` to `$CUDAUP_HOME/receipts/<kind><target as a file name>.json` and returns
/// that path. `kind` tells receipt kinds apart (`""` for toolkits, `"venv-"` for venvs).
pub(crate) fn register(
    home: &Path,
    kind: &str,
    target: &Path,
    value: &impl Serialize,
) -> std::io::Result<PathBuf> {
    let dir = home.join("receipts");
    fs_err::create_dir_all(&dir)?;
    let name: String = target
        .display()
        .to_string()
        .trim_start_matches('/')
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = dir.join(format!("{kind}{name}.json"));
    let tmp = dir.join(format!(".{kind}{name}.json.tmp"));
    fs_err::write(
        &tmp,
        serde_json::to_vec_pretty(value).expect("receipts serialise"),
    )?;
    fs_err::rename(&tmp, &path)?;
    Ok(path)
}
