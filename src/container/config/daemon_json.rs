//! Docker's `daemon.json` (`/etc/docker/daemon.json`, or `~/.config/docker/daemon.json` for
//! rootless Docker): the `nvidia` runtime for the legacy path, `features.cdi` for Docker 25+,
//! and `cdi-spec-dirs` when the spec is in a per-user directory.
//!
//! What `nvidia-ctk runtime configure --runtime=docker` writes: `runtimes.nvidia =
//! {"args": [], "path": "nvidia-container-runtime"}`; with `--cdi.enabled`, `features.cdi =
//! true`. The rest of the document is kept (keys come out in sorted order, as serde_json writes
//! them; undo restores the original bytes).

use serde_json::{json, Map, Value};

use super::ConfigError;

/// What to set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    /// Register the toolkit's `nvidia` runtime.
    pub nvidia_runtime: bool,
    /// Turn `features.cdi` on.
    pub cdi_feature: bool,
    /// Directories to add to `cdi-spec-dirs` (Docker's defaults are kept in front).
    pub cdi_spec_dirs: Vec<String>,
}

/// Docker's default CDI spec directories, which an explicit `cdi-spec-dirs` replaces.
const DEFAULT_SPEC_DIRS: [&str; 2] = ["/etc/cdi", "/var/run/cdi"];

/// The new text, or `None` when the file already says all of it.
pub fn edit(
    current: Option<&str>,
    change: &Change,
    file: &str,
) -> Result<Option<String>, ConfigError> {
    let mut doc: Map<String, Value> = match current.map(str::trim) {
        None | Some("") => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => {
                return Err(ConfigError::Unparsable {
                    file: file.to_owned(),
                    message: "not a JSON object".to_owned(),
                })
            }
            Err(e) => {
                return Err(ConfigError::Unparsable {
                    file: file.to_owned(),
                    message: e.to_string(),
                })
            }
        },
    };
    let before = doc.clone();
    if change.nvidia_runtime {
        let runtimes = doc
            .entry("runtimes")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(r) = runtimes {
            r.entry("nvidia")
                .or_insert_with(|| json!({"args": [], "path": "nvidia-container-runtime"}));
        }
    }
    if change.cdi_feature {
        let features = doc
            .entry("features")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(f) = features {
            f.insert("cdi".to_owned(), Value::Bool(true));
        }
    }
    if !change.cdi_spec_dirs.is_empty() {
        let dirs = doc
            .entry("cdi-spec-dirs")
            .or_insert_with(|| Value::Array(DEFAULT_SPEC_DIRS.iter().map(|d| json!(d)).collect()));
        if let Value::Array(a) = dirs {
            for d in &change.cdi_spec_dirs {
                if !a.iter().any(|x| x.as_str() == Some(d)) {
                    a.push(json!(d));
                }
            }
        }
    }
    if doc == before && current.is_some() {
        return Ok(None);
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(doc)).expect("serialises");
    text.push('\n');
    Ok(Some(text))
}

/// What `daemon.json` says, for doctor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Read {
    /// `runtimes.nvidia` present.
    pub nvidia_runtime: bool,
    /// `features.cdi` true.
    pub cdi_feature: bool,
    /// `exec-opts` names `native.cgroupdriver=systemd`.
    pub systemd_cgroups: bool,
}

/// Reads the facts doctor needs (an unparsable file reads as empty).
pub fn read(text: &str) -> Read {
    let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    Read {
        nvidia_runtime: v["runtimes"]["nvidia"].is_object(),
        cdi_feature: v["features"]["cdi"].as_bool() == Some(true),
        systemd_cgroups: v["exec-opts"].as_array().is_some_and(|a| {
            a.iter()
                .any(|o| o.as_str() == Some("native.cgroupdriver=systemd"))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_is_added_and_the_rest_kept() {
        let text = "{\n    \"log-driver\": \"journald\",\n    \"runtimes\": {\"crun\": {\"path\": \"/usr/bin/crun\"}}\n}\n";
        let change = Change {
            nvidia_runtime: true,
            ..Change::default()
        };
        let new = edit(Some(text), &change, "daemon.json").unwrap().unwrap();
        let v: Value = serde_json::from_str(&new).unwrap();
        assert_eq!(v["runtimes"]["nvidia"]["path"], "nvidia-container-runtime");
        assert_eq!(v["runtimes"]["crun"]["path"], "/usr/bin/crun");
        assert_eq!(v["log-driver"], "journald");
        assert_eq!(edit(Some(&new), &change, "daemon.json").unwrap(), None);
        assert!(read(&new).nvidia_runtime);
    }

    #[test]
    fn cdi_feature_and_a_user_spec_dir() {
        let change = Change {
            cdi_feature: true,
            cdi_spec_dirs: vec!["/home/u/.local/share/cudaup/cdi".into()],
            ..Change::default()
        };
        let new = edit(None, &change, "daemon.json").unwrap().unwrap();
        assert_eq!(
            new,
            "{\n  \"cdi-spec-dirs\": [\n    \"/etc/cdi\",\n    \"/var/run/cdi\",\n    \"/home/u/.local/share/cudaup/cdi\"\n  ],\n  \"features\": {\n    \"cdi\": true\n  }\n}\n"
        );
        assert!(read(&new).cdi_feature);
    }

    #[test]
    fn a_broken_file_is_refused() {
        let err = edit(
            Some("{\"a\": "),
            &Change::default(),
            "/etc/docker/daemon.json",
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("/etc/docker/daemon.json does not parse"),
            "{err}"
        );
    }
}
