//! Podman's per-user `containers.conf` (`$XDG_CONFIG_HOME/containers/containers.conf`): its
//! `[engine]` table's `cdi_spec_dirs` tells rootless Podman to read a spec directory the user
//! owns. Setting the key replaces Podman's defaults, so `/etc/cdi` and `/var/run/cdi` are
//! kept in the list.
//!
//! The edit is textual — a line added under `[engine]` (or the list on an existing
//! `cdi_spec_dirs` line rewritten) — so the user's comments and layout stay as they were.

use super::ConfigError;

/// Podman's default CDI directories.
const DEFAULT_SPEC_DIRS: [&str; 2] = ["/etc/cdi", "/var/run/cdi"];

/// The new text with `dir` in `cdi_spec_dirs`, or `None` when it is already there.
pub fn edit(current: Option<&str>, dir: &str, file: &str) -> Result<Option<String>, ConfigError> {
    let text = current.unwrap_or("");
    let parsed: toml::Table =
        text.parse()
            .map_err(|e: toml::de::Error| ConfigError::Unparsable {
                file: file.to_owned(),
                message: e.message().to_owned(),
            })?;
    let existing: Option<Vec<String>> = parsed
        .get("engine")
        .and_then(|e| e.get("cdi_spec_dirs"))
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        });
    if existing
        .as_ref()
        .is_some_and(|dirs| dirs.iter().any(|d| d == dir))
    {
        return Ok(None);
    }
    let mut dirs: Vec<String> = existing
        .clone()
        .unwrap_or_else(|| DEFAULT_SPEC_DIRS.map(str::to_owned).to_vec());
    dirs.push(dir.to_owned());
    let value = toml::Value::Array(dirs.into_iter().map(toml::Value::String).collect());
    let line = format!("cdi_spec_dirs = {value}");
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut in_engine = false;
    let mut engine_header: Option<usize> = None;
    let mut replaced = false;
    for (i, l) in lines.iter_mut().enumerate() {
        let t = l.trim();
        if t.starts_with('[') {
            in_engine = t == "[engine]";
            if in_engine {
                engine_header = Some(i);
            }
        } else if in_engine && existing.is_some() && t.starts_with("cdi_spec_dirs") {
            *l = line.clone();
            replaced = true;
        }
    }
    if !replaced {
        match engine_header {
            Some(i) => lines.insert(i + 1, line),
            None => {
                if lines.last().is_some_and(|l| !l.trim().is_empty()) {
                    lines.push(String::new());
                }
                lines.push("[engine]".to_owned());
                lines.push(line);
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    // A multi-line array cudaup could not rewrite in place would leave a broken file.
    let reparsed: toml::Table =
        out.parse()
            .map_err(|e: toml::de::Error| ConfigError::Unparsable {
                file: file.to_owned(),
                message: format!(
                "cudaup's edit would not parse ({}); add {dir} to [engine] cdi_spec_dirs by hand",
                e.message()
            ),
            })?;
    let ok = reparsed
        .get("engine")
        .and_then(|e| e.get("cdi_spec_dirs"))
        .and_then(|v| v.as_array())
        .is_some_and(|a| a.iter().any(|x| x.as_str() == Some(dir)));
    if !ok {
        return Err(ConfigError::Unparsable {
            file: file.to_owned(),
            message: format!("cdi_spec_dirs spans several lines; add {dir} to it by hand"),
        });
    }
    Ok(Some(out))
}

/// The spec directories a `containers.conf` names, if it names any.
pub fn spec_dirs(text: &str) -> Option<Vec<String>> {
    let parsed: toml::Table = text.parse().ok()?;
    parsed
        .get("engine")?
        .get("cdi_spec_dirs")?
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_gets_an_engine_table() {
        let new = edit(None, "/home/u/.local/share/cudaup/cdi", "c")
            .unwrap()
            .unwrap();
        assert_eq!(
            new,
            "[engine]\ncdi_spec_dirs = [\"/etc/cdi\", \"/var/run/cdi\", \"/home/u/.local/share/cudaup/cdi\"]\n"
        );
        assert_eq!(
            edit(Some(&new), "/home/u/.local/share/cudaup/cdi", "c").unwrap(),
            None
        );
    }

    #[test]
    fn comments_and_other_tables_stay() {
        let text = "# mine\n[containers]\nlog_size_max = 10\n\n[engine]\n# runtime\nruntime = \"crun\"\ncdi_spec_dirs = [\"/opt/cdi\"]\n";
        let new = edit(Some(text), "/u/cdi", "c").unwrap().unwrap();
        assert_eq!(
            new,
            "# mine\n[containers]\nlog_size_max = 10\n\n[engine]\n# runtime\nruntime = \"crun\"\ncdi_spec_dirs = [\"/opt/cdi\", \"/u/cdi\"]\n"
        );
        assert_eq!(spec_dirs(&new).unwrap(), ["/opt/cdi", "/u/cdi"]);
    }

    #[test]
    fn broken_toml_is_refused() {
        assert!(edit(Some("[engine\n"), "/u", "containers.conf").is_err());
    }
}
