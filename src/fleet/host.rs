//! One host's row: reading its `install.json`, `verify.json` and `system.json` (any of which may
//! be missing or broken) into a [`HostRow`], turning whatever cannot be read into problems.

use serde::Deserialize;
use serde_json::Value;

use crate::install::report::{InstalledStatus, Outcome, PlannedGpu};

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

/// The part of the plan document a row shows (the plan is the resolver's document; the
/// install report carries it as written).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PlanView {
    components: Vec<ComponentView>,
    warnings: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ComponentView {
    name: String,
    action: Option<String>,
    version: Option<String>,
    variant: Option<String>,
    cuda_variant: Option<String>,
    path: Option<String>,
}

impl PlanView {
    /// The component `name`, when the plan installs, upgrades or keeps it.
    fn active(&self, name: &str) -> Option<&ComponentView> {
        self.component(name)
            .filter(|c| !matches!(c.action.as_deref(), Some("skip") | None))
    }

    fn component(&self, name: &str) -> Option<&ComponentView> {
        self.components.iter().find(|c| c.name == name)
    }
}

/// What a row needs of an install report, whichever of its two run shapes it has.
struct Ran {
    status: String,
    changed: bool,
    reboot_required: bool,
    gpus: Vec<GpuInfo>,
    plan: serde_json::Value,
    driver_manual: Option<String>,
    toolkit_cuda: Option<String>,
}

impl Ran {
    fn of(outcome: Outcome) -> Option<Self> {
        let gpus = |g: Vec<PlannedGpu>| -> Vec<GpuInfo> {
            g.into_iter()
                .map(|g| GpuInfo {
                    name: g.name,
                    compute_capability: g.compute_capability,
                    architecture: g.architecture,
                })
                .collect()
        };
        match outcome {
            Outcome::Installed(i) => Some(Self {
                status: match i.status {
                    InstalledStatus::Installed => "installed",
                    InstalledStatus::VerificationFailed => "installed, verification failed",
                }
                .into(),
                changed: i.changed,
                reboot_required: i.reboot_required,
                gpus: gpus(i.gpus),
                plan: i.plan,
                driver_manual: i.driver.and_then(|d| d.manual),
                toolkit_cuda: i.toolkit.map(|t| t.cuda),
            }),
            Outcome::NothingToDo(n) => Some(Self {
                status: "nothing to do".into(),
                changed: n.changed,
                reboot_required: n.reboot_required,
                gpus: gpus(n.gpus),
                plan: n.plan,
                driver_manual: None,
                toolkit_cuda: None,
            }),
            Outcome::DryRun(_) => None,
        }
    }
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
fn cuda_release(
    installed: Option<&str>,
    plan: &PlanView,
    verify: Option<&Value>,
) -> Option<String> {
    let c = plan.active("cuda")?;
    if let Some(v) = installed {
        return Some(v.to_owned());
    }
    let from_receipt = verify.and_then(|v| {
        v["checks"]
            .as_array()?
            .iter()
            .find(|c| c["id"] == "nvcc")
            .and_then(|c| string(&c["data"]["installed"]))
    });
    from_receipt
        .or_else(|| c.path.as_deref().and_then(release_from_path))
        .or_else(|| c.version.clone())
}

fn framework(plan: &PlanView) -> Option<String> {
    if let Some(t) = plan.active("torch") {
        let version = t.version.as_deref().unwrap_or("?");
        return Some(match &t.variant {
            Some(v) => format!("torch {version} ({v})"),
            None => format!("torch {version}"),
        });
    }
    if let Some(j) = plan.active("jax") {
        let version = j.version.as_deref().unwrap_or("?");
        return Some(match &j.variant {
            Some(v) => format!("jax {version} ({v})"),
            None => format!("jax {version}"),
        });
    }
    plan.active("tensorflow")
        .map(|t| format!("tensorflow {}", t.version.as_deref().unwrap_or("?")))
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
    let ran = match &install {
        Some(i) if i["status"] != "failed" => {
            match serde_json::from_value::<Outcome>(i.clone()).map(Ran::of) {
                Ok(Some(ran)) => Some(ran),
                Ok(None) => {
                    problems
                        .push("install.json is a plan, not an install report (a dry run?)".into());
                    None
                }
                Err(e) => {
                    problems.push(format!("install.json: not an install report ({e})"));
                    None
                }
            }
        }
        _ => None,
    };
    row.gpus = system
        .as_ref()
        .and_then(gpus_from_system)
        .or_else(|| ran.as_ref().map(|r| r.gpus.clone()))
        .unwrap_or_default();
    row.architectures = architectures(&row.gpus);

    match (&install, ran) {
        (None, _) if files.install.is_none() => problems.insert(
            0,
            "no install.json: the run stopped before cudaup reported".into(),
        ),
        (Some(i), _) if i["status"] == "failed" => {
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
        (Some(i), None) => {
            row.status = string(&i["status"]).unwrap_or_else(|| "unknown".into());
        }
        (None, _) => {}
        (Some(_), Some(ran)) => {
            row.status = ran.status;
            row.changed = Some(ran.changed);
            row.reboot_required = ran.reboot_required;
            match serde_json::from_value::<PlanView>(ran.plan) {
                Ok(plan) => {
                    row.driver = plan.component("driver").map(|d| DriverInfo {
                        version: d.version.clone(),
                        action: d.action.clone().unwrap_or_else(|| "?".into()),
                    });
                    row.stack = Some(Stack {
                        cuda: cuda_release(ran.toolkit_cuda.as_deref(), &plan, verify.as_ref()),
                        cudnn: plan.active("cudnn").map(|c| {
                            let v = c.version.as_deref().unwrap_or("?");
                            match &c.cuda_variant {
                                Some(n) => format!("{v} (cuda{n})"),
                                None => v.to_owned(),
                            }
                        }),
                        framework: framework(&plan),
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
                    if let Some(why) = ran.driver_manual {
                        problems.push(format!("driver not installed automatically: {why}"));
                    }
                    for w in plan.warnings {
                        problems.push(format!("warning: {w}"));
                    }
                }
                Err(_) => problems.push("install.json has no plan".into()),
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
