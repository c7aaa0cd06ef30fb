//! Docker's `daemon.json` (`/etc/docker/daemon.json`, or `~/.config/docker/daemon.json` for
//! rootless Docker): the `nvidia` runtime for the legacy path, `features.cdi` for Docker 25+,
//! and `cdi-spec-dirs` when the spec is in a per-user directory.
//!
//! What `nvidia-ctk runtime configure --runtime=docker` writes: `runtimes.nvidia =
//! {"args": [], "path": "nvidia-container-runtime"}`; with `--cdi.enabled`, `features.cdi =
//! true`. The rest of the document is kept: members stay in the file's order and every value
//! cudaup does not change is written back as its own text, byte for byte (an integer past what
//! an f64 holds, `1.50`, `\u00e9`), so only the members it owns change; undo restores the
//! original bytes.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
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

/// A JSON object's members in the file's order, each value as the text it was written as.
struct Members(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Box<RawValue>>()? {
                    out.push((k, v));
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl Members {
    /// The one member named `key`: `Ok(None)` when absent, an error when named twice (which of
    /// them Docker takes is not cudaup's to guess).
    fn one(&self, key: &str, file: &str) -> Result<Option<usize>, ConfigError> {
        let mut at = self.0.iter().enumerate().filter(|(_, (k, _))| k == key);
        match (at.next(), at.next()) {
            (Some((i, _)), None) => Ok(Some(i)),
            (None, _) => Ok(None),
            (Some(_), Some(_)) => Err(unparsable(file, format!("it names `{key}` twice"))),
        }
    }

    /// The members of the object member `key` (empty when absent).
    fn object(&self, key: &str, file: &str) -> Result<(Option<usize>, Members), ConfigError> {
        match self.one(key, file)? {
            None => Ok((None, Members(Vec::new()))),
            Some(i) => serde_json::from_str(self.0[i].1.get())
                .map(|m| (Some(i), m))
                .map_err(|_| unparsable(file, format!("`{key}` is not a JSON object"))),
        }
    }

    /// Sets member `key` (at `at`, else appended) to `value`.
    fn put(&mut self, at: Option<usize>, key: &str, value: Box<RawValue>) {
        match at {
            Some(i) => self.0[i].1 = value,
            None => self.0.push((key.to_owned(), value)),
        }
    }

    /// The object's text, indented for depth `indent` (values as they are).
    fn text(&self, indent: usize) -> String {
        if self.0.is_empty() {
            return "{}".to_owned();
        }
        let pad = " ".repeat(indent + 2);
        let items: Vec<String> = self
            .0
            .iter()
            .map(|(k, v)| {
                let key = serde_json::to_string(k).expect("a string serialises");
                format!("{pad}{key}: {}", v.get())
            })
            .collect();
        format!("{{\n{}\n{}}}", items.join(",\n"), " ".repeat(indent))
    }
}

fn unparsable(file: &str, message: String) -> ConfigError {
    ConfigError::Unparsable {
        file: file.to_owned(),
        message,
    }
}

/// Text as a raw JSON value (text cudaup made: always valid).
fn raw(text: String) -> Box<RawValue> {
    RawValue::from_string(text).expect("cudaup writes valid JSON")
}

/// The new text, or `None` when the file already says all of it.
pub fn edit(
    current: Option<&str>,
    change: &Change,
    file: &str,
) -> Result<Option<String>, ConfigError> {
    let Some(text) = current.filter(|t| !t.trim().is_empty()) else {
        return Ok(Some(fresh(change)));
    };
    let mut doc: Members = serde_json::from_str(text).map_err(|e| {
        unparsable(
            file,
            if e.is_data() {
                "not a JSON object".to_owned()
            } else {
                e.to_string()
            },
        )
    })?;
    let mut changed = false;
    if change.nvidia_runtime {
        let (at, mut runtimes) = doc.object("runtimes", file)?;
        if runtimes.one("nvidia", file)?.is_none() {
            runtimes.put(None, "nvidia", raw(nvidia_runtime().to_string()));
            doc.put(at, "runtimes", raw(runtimes.text(2)));
            changed = true;
        }
    }
    if change.cdi_feature {
        let (at, mut features) = doc.object("features", file)?;
        let cdi = features.one("cdi", file)?;
        if cdi.is_none_or(|i| features.0[i].1.get().trim() != "true") {
            features.put(cdi, "cdi", raw("true".to_owned()));
            doc.put(at, "features", raw(features.text(2)));
            changed = true;
        }
    }
    if !change.cdi_spec_dirs.is_empty() {
        let at = doc.one("cdi-spec-dirs", file)?;
        let mut dirs: Vec<Box<RawValue>> = match at {
            Some(i) => serde_json::from_str(doc.0[i].1.get())
                .map_err(|_| unparsable(file, "`cdi-spec-dirs` is not a JSON array".into()))?,
            None => DEFAULT_SPEC_DIRS
                .iter()
                .map(|d| raw(json!(d).to_string()))
                .collect(),
        };
        let mut grew = at.is_none();
        for d in &change.cdi_spec_dirs {
            let listed = dirs
                .iter()
                .any(|x| serde_json::from_str::<String>(x.get()).is_ok_and(|s| s == *d));
            if !listed {
                dirs.push(raw(json!(d).to_string()));
                grew = true;
            }
        }
        if grew {
            let items: Vec<&str> = dirs.iter().map(|d| d.get()).collect();
            doc.put(
                at,
                "cdi-spec-dirs",
                raw(format!("[\n    {}\n  ]", items.join(",\n    "))),
            );
            changed = true;
        }
    }
    if !changed {
        return Ok(None);
    }
    let mut out = doc.text(0);
    out.push('\n');
    Ok(Some(out))
}

/// The toolkit's runtime entry, as `nvidia-ctk runtime configure` writes it.
fn nvidia_runtime() -> Value {
    json!({"args": [], "path": "nvidia-container-runtime"})
}

/// A daemon.json where there was none: what `change` asks for, keys sorted.
fn fresh(change: &Change) -> String {
    let mut doc = Map::new();
    if change.nvidia_runtime {
        doc.insert("runtimes".into(), json!({ "nvidia": nvidia_runtime() }));
    }
    if change.cdi_feature {
        doc.insert("features".into(), json!({"cdi": true}));
    }
    if !change.cdi_spec_dirs.is_empty() {
        let mut dirs: Vec<Value> = DEFAULT_SPEC_DIRS.iter().map(|d| json!(d)).collect();
        for d in &change.cdi_spec_dirs {
            if !dirs.iter().any(|x| x.as_str() == Some(d)) {
                dirs.push(json!(d));
            }
        }
        doc.insert("cdi-spec-dirs".into(), Value::Array(dirs));
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(doc)).expect("serialises");
    text.push('\n');
    text
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

    /// Issue 39, finding 7: values cudaup does not own come back as their own text: an
    /// integer past u64 and f64, a decimal with a trailing zero, an escaped string, the members'
    /// order; only `features` changes. The result parses, and a second edit changes nothing.
    #[test]
    fn values_it_does_not_own_are_kept_byte_for_byte() {
        let text = "{\n  \"max-concurrent-downloads\": 123456789012345678901234567890,\n  \"ratio\": 1.50,\n  \"label\": \"caf\\u00e9\",\n  \"features\": {\"buildkit\": true, \"cdi\": false},\n  \"default-ulimits\": {\"nofile\": {\"Hard\": 64000, \"Name\": \"nofile\", \"Soft\": 64000}}\n}\n";
        let change = Change {
            cdi_feature: true,
            ..Change::default()
        };
        let new = edit(Some(text), &change, "daemon.json").unwrap().unwrap();
        for kept in [
            "\"max-concurrent-downloads\": 123456789012345678901234567890,",
            "\"ratio\": 1.50,",
            "\"label\": \"caf\\u00e9\",",
            "\"default-ulimits\": {\"nofile\": {\"Hard\": 64000, \"Name\": \"nofile\", \"Soft\": 64000}}",
        ] {
            assert!(new.contains(kept), "{kept} in {new}");
        }
        let order: Vec<usize> = [
            "max-concurrent",
            "ratio",
            "label",
            "features",
            "default-ulimits",
        ]
        .iter()
        .map(|k| new.find(k).unwrap())
        .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{new}");
        let v: Value = serde_json::from_str(&new).unwrap();
        assert_eq!(v["features"]["cdi"], true);
        assert_eq!(v["features"]["buildkit"], true);
        assert!(read(&new).cdi_feature);
        assert_eq!(edit(Some(&new), &change, "daemon.json").unwrap(), None);
        // A member cudaup edits named twice is refused, not guessed.
        let twice = "{\"features\": {}, \"features\": {\"cdi\": false}}";
        let err = edit(Some(twice), &change, "daemon.json").unwrap_err();
        assert!(err.to_string().contains("names `features` twice"), "{err}");
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
