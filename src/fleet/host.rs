//! One host's row: reading its `install.json`, `verify.json` and `system.json` (any of which may
//! be missing or broken) into a [`HostRow`], turning whatever cannot be read into problems.

use serde_json::Value;

use super::{DriverInfo, GpuInfo, HostFiles, HostRow, Stack, VerifyCounts};

fn parse(name: &str, text: Option<&str>, problems: &mut Vec<String>) -> Option<Value> {
    let text = text?;
    match serde_json::from_str::<Value>(text) {
        Ok(v) if v.is_object() => Some(escaped(v)),
        Ok(_) => {
            problems.push(format!("{name}: not a JSON object"));
            None
        }
        Err(e) => {
            problems.push(format!("{name}: not JSON ({e})"));
            None
        }
    }
}

/// Every string a host sent, its control characters escaped: the report reaches the admin's
/// terminal, and a host must not be able to send it escape sequences.
fn escaped(v: Value) -> Value {
    use crate::model::text::escape_controls;
    match v {
        Value::String(s) => Value::String(escape_controls(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(escaped).collect()),
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, v)| (escape_controls(&k), escaped(v)))
                .collect(),
        ),
        v => v,
    }
}

fn string(v: &Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

fn component<'a>(plan: &'a Value, name: &str) -> Option<&'a Value> {
    plan["components"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == name)
}

fn active(c: &Value) -> bool {
    !matches!(c["action"].as_str(), Some("skip") | None)
}

/// GPUs from a System document (NVIDIA ones first, in index order).
fn gpus_from_system(system: &Value) -> Option<Vec<GpuInfo>> {
    let gpus = system["gpus"].as_array()?;
    let mut out: Vec<(bool, GpuInfo)> = gpus
        .iter()
        .filter_map(|g| {
            Some((
                g["vendor"] != "nvidia",
                GpuInfo {
                    name: string(&g["name"])?,
                    compute_capability: string(&g["compute_capability"]),
                    architecture: string(&g["architecture"]),
                },
            ))
        })
        .collect();
    out.sort_by_key(|(other, _)| *other);
    Some(out.into_iter().map(|(_, g)| g).collect())
}

/// GPUs from the plan's reasons (`NVIDIA H200 (compute capability 9.0): sm_90 …`), when there
/// is no system.json.
fn gpus_from_plan(plan: &Value) -> Vec<GpuInfo> {
    const MARK: &str = " (compute capability ";
    plan["reasons"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(|r| {
            let at = r.find(MARK)?;
            let rest = &r[at + MARK.len()..];
            let cc = &rest[..rest.find(')')?];
            Some(GpuInfo {
                name: r[..at].to_owned(),
                compute_capability: Some(cc.to_owned()),
                architecture: None,
            })
        })
        .collect()
}

fn is_nvidia(g: &GpuInfo) -> bool {
    g.compute_capability.is_some() || g.architecture.is_some()
}

fn architectures(gpus: &[GpuInfo]) -> Vec<String> {
    let mut set: Vec<String> = gpus
        .iter()
        .filter(|g| is_nvidia(g))
        .map(|g| match (&g.architecture, &g.compute_capability) {
            (Some(a), _) => a.clone(),
            (None, Some(cc)) => format!("cc {cc}"),
            (None, None) => unreachable!("filtered"),
        })
        .collect();
    set.sort();
    set.dedup();
    set
}

/// `12.9.1` from `.../toolkits/cuda-12.9.1` (cudaup names its toolkits so).
fn release_from_path(path: &str) -> Option<String> {
    let name = path.trim_end_matches('/').rsplit('/').next()?;
    let v = name.strip_prefix("cuda-")?;
    (v.split('.').count() == 3 && v.split('.').all(|p| p.parse::<u32>().is_ok()))
        .then(|| v.to_owned())
}

/// The CUDA release of the stack: what this run installed, else what the receipt says (verify's
/// nvcc check), else the kept toolkit's directory, else the plan's version (which for a kept
/// toolkit may be nvcc's build number, e.g. 12.9.86 for 12.9.1).
fn cuda_release(install: &Value, plan: &Value, verify: Option<&Value>) -> Option<String> {
    let c = component(plan, "cuda").filter(|c| active(c))?;
    if let Some(v) = string(&install["toolkit"]["cuda"]) {
        return Some(v);
    }
    let from_receipt = verify.and_then(|v| {
        v["checks"]
            .as_array()?
            .iter()
            .find(|c| c["id"] == "nvcc")
            .and_then(|c| string(&c["data"]["installed"]))
    });
    from_receipt
        .or_else(|| c["path"].as_str().and_then(release_from_path))
        .or_else(|| string(&c["version"]))
}

fn framework(plan: &Value) -> Option<String> {
    if let Some(t) = component(plan, "torch").filter(|c| active(c)) {
        let version = t["version"].as_str().unwrap_or("?");
        return Some(match t["variant"].as_str() {
            Some(v) => format!("torch {version} ({v})"),
            None => format!("torch {version}"),
        });
    }
    component(plan, "tensorflow")
        .filter(|c| active(c))
        .map(|t| format!("tensorflow {}", t["version"].as_str().unwrap_or("?")))
}

fn text_lines(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().filter_map(string).collect(),
        _ => Vec::new(),
    }
}

/// One host's row from its files. Never fails: what cannot be read becomes a problem.
pub fn host_row(files: &HostFiles) -> HostRow {
    let mut problems: Vec<String> = files
        .errors
        .iter()
        .map(|e| crate::model::text::escape_controls(e))
        .collect();
    let install = parse("install.json", files.install.as_deref(), &mut problems);
    let verify = parse("verify.json", files.verify.as_deref(), &mut problems);
    let system = parse("system.json", files.system.as_deref(), &mut problems);
    let mut row = HostRow {
        host: crate::model::text::escape_controls(&files.host),
        status: "missing".into(),
        changed: None,
        reboot_required: false,
        gpus: Vec::new(),
        architectures: Vec::new(),
        driver: None,
        stack: None,
        verify: None,
        problems: Vec::new(),
        differs_from_majority: false,
    };
    let plan = install
        .as_ref()
        .map(|i| &i["plan"])
        .filter(|p| p.is_object());
    row.gpus = system
        .as_ref()
        .and_then(gpus_from_system)
        .or_else(|| plan.map(gpus_from_plan))
        .unwrap_or_default();
    row.architectures = architectures(&row.gpus);

    match &install {
        None if files.install.is_none() => problems.insert(
            0,
            "no install.json: the run stopped before cudaup reported".into(),
        ),
        None => {}
        Some(i) if i["status"] == "failed" => {
            row.status = "failed".into();
            let code = i["exit_code"]
                .as_i64()
                .map(|c| format!(" (exit code {c})"))
                .unwrap_or_default();
            let mut lines = text_lines(&i["error"]);
            lines.retain(|l| !l.trim().is_empty());
            let why = if lines.is_empty() {
                "no message".to_owned()
            } else {
                lines.join(" / ")
            };
            problems.insert(0, format!("install failed{code}: {why}"));
        }
        Some(i) => {
            row.status = string(&i["status"]).unwrap_or_else(|| "unknown".into());
            row.changed = i["changed"].as_bool();
            row.reboot_required = i["reboot_required"].as_bool().unwrap_or(false);
            match plan {
                Some(plan) => {
                    row.driver = component(plan, "driver").map(|d| DriverInfo {
                        version: string(&d["version"]),
                        action: string(&d["action"]).unwrap_or_else(|| "?".into()),
                    });
                    row.stack = Some(Stack {
                        cuda: cuda_release(i, plan, verify.as_ref()),
                        cudnn: component(plan, "cudnn").filter(|c| active(c)).map(|c| {
                            let v = c["version"].as_str().unwrap_or("?");
                            match c["cuda_variant"].as_str() {
                                Some(n) => format!("{v} (cuda{n})"),
                                None => v.to_owned(),
                            }
                        }),
                        framework: framework(plan),
                    });
                    if row.reboot_required {
                        problems.push(format!(
                            "reboot pending: driver {} is installed but not loaded yet",
                            row.driver
                                .as_ref()
                                .and_then(|d| d.version.as_deref())
                                .unwrap_or("?")
                        ));
                    }
                    if let Some(why) = i["driver"]["manual"].as_str() {
                        problems.push(format!("driver not installed automatically: {why}"));
                    }
                    for w in plan["warnings"].iter_array() {
                        if let Some(w) = w.as_str() {
                            problems.push(format!("warning: {w}"));
                        }
                    }
                }
                None => problems.push("install.json has no plan".into()),
            }
        }
    }

    match &verify {
        Some(v) => {
            let count = |k: &str| v[k].as_u64().unwrap_or(0);
            let counts = VerifyCounts {
                ok: v["ok"].as_bool().unwrap_or(false),
                passed: count("passed"),
                failed: count("failed"),
                skipped: count("skipped"),
            };
            for c in v["checks"].iter_array() {
                if c["status"] == "fail" {
                    let first = c["evidence"]
                        .iter_array()
                        .next()
                        .and_then(Value::as_str)
                        .unwrap_or("failed");
                    problems.push(format!(
                        "verify {}: {first}",
                        c["id"].as_str().unwrap_or("?")
                    ));
                }
            }
            row.verify = Some(counts);
        }
        None if files.verify.is_none() && row.stack.is_some() => {
            problems.push("no verify.json: verify did not run".into())
        }
        None => {}
    }
    row.problems = problems;
    row
}

/// Iterating a JSON array that may be absent.
trait IterArray {
    fn iter_array(&self) -> std::slice::Iter<'_, Value>;
}

impl IterArray for Value {
    fn iter_array(&self) -> std::slice::Iter<'_, Value> {
        match self {
            Value::Array(a) => a.iter(),
            _ => [].iter(),
        }
    }
}
