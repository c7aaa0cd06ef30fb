//! Fleet reports: what `cudaup fleet report DIR` makes of the reports a fleet tool (the Ansible
//! role in `scripts/ansible/`) collects from every host — `DIR/<host>/install.json`
//! (`install --json`), `verify.json` (`verify --json`) and `system.json` (`detect --json`, the
//! machine cudaup planned for).
//!
//! Pure: [`host_row`] turns one host's file contents into a [`HostRow`]; [`aggregate`] groups the
//! rows by GPU architecture set and flags hosts whose stack (CUDA, cuDNN, framework) differs from
//! the majority of their group. Different GPUs rightly get different stacks (a GTX 1080 Ti cannot
//! use CUDA 13; an RTX 5090 needs 12.8 or newer), so hosts are only compared with hosts that have
//! the same architectures. Reading the directory and rendering are the CLI's job.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

/// The schema version of the `fleet report --json` document.
pub const SCHEMA_VERSION: u32 = 1;

/// What the output says about how hosts are compared.
pub const COMPARISON_NOTE: &str = "stacks are compared only among hosts with the same GPU architectures: different GPUs may rightly get different stacks";

/// One host's collected files, as text; `None` when the file is absent.
#[derive(Debug, Clone, Default)]
pub struct HostFiles {
    /// The host's name (its directory's name: the inventory name).
    pub host: String,
    /// `install.json`.
    pub install: Option<String>,
    /// `verify.json`.
    pub verify: Option<String>,
    /// `system.json`.
    pub system: Option<String>,
    /// Files that exist but could not be read (`verify.json: permission denied`).
    pub errors: Vec<String>,
}

/// One GPU of a host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuInfo {
    /// The name as detect reports it (`NVIDIA GeForce RTX 5090`).
    pub name: String,
    /// Compute capability (`12.0`), when known.
    pub compute_capability: Option<String>,
    /// Architecture (`Blackwell`), when known.
    pub architecture: Option<String>,
}

/// The driver as the host's plan has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DriverInfo {
    /// The version kept, or installed / upgraded to (for `manual`: the minimum).
    pub version: Option<String>,
    /// `keep`, `install`, `upgrade`, `skip` or `manual`.
    pub action: String,
}

/// What `verify --json` counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifyCounts {
    /// No check failed.
    pub ok: bool,
    /// Checks passed.
    pub passed: u64,
    /// Checks failed.
    pub failed: u64,
    /// Checks that could not apply on the host.
    pub skipped: u64,
}

/// The part of a host's stack that hosts with the same GPUs should share.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Stack {
    /// The CUDA toolkit release (`12.9.1`).
    pub cuda: Option<String>,
    /// cuDNN and the CUDA major of its build (`9.17.0 (cuda12)`).
    pub cudnn: Option<String>,
    /// The framework (`torch 2.8.0 (cu128)`, `tensorflow 2.20.0`).
    pub framework: Option<String>,
}

impl Stack {
    /// `CUDA 12.9.1, cuDNN 9.17.0 (cuda12), no framework`.
    pub fn describe(&self) -> String {
        format!(
            "CUDA {}, cuDNN {}, {}",
            self.cuda.as_deref().unwrap_or("none"),
            self.cudnn.as_deref().unwrap_or("none"),
            self.framework.as_deref().unwrap_or("no framework")
        )
    }
}

/// One row of the fleet report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostRow {
    /// The host.
    pub host: String,
    /// The install report's status (`installed`, `nothing to do`, `installed, verification
    /// failed`), `failed` when the install failed, `missing` when there is no install report.
    pub status: String,
    /// Whether the last install run changed the host.
    pub changed: Option<bool>,
    /// A new driver waits for a reboot.
    pub reboot_required: bool,
    /// The host's GPUs (from system.json, else from the plan's reasons).
    pub gpus: Vec<GpuInfo>,
    /// The sorted set of NVIDIA GPU architectures (`cc X.Y` where the architecture is unknown);
    /// empty without an NVIDIA GPU. Hosts are compared within the same set.
    pub architectures: Vec<String>,
    /// The driver.
    pub driver: Option<DriverInfo>,
    /// The stack, when the install report has a plan.
    pub stack: Option<Stack>,
    /// What verify counted, when there is a verify report.
    pub verify: Option<VerifyCounts>,
    /// Everything that needs a look: failures, failed checks, plan warnings, pending reboots.
    pub problems: Vec<String>,
    /// Set by [`aggregate`]: the stack differs from the majority of the hosts with the same
    /// architectures (or they have no majority).
    pub differs_from_majority: bool,
}

impl HostRow {
    /// Whether this host is done: installed, verified, no reboot pending, not flagged.
    pub fn healthy(&self) -> bool {
        self.stack.is_some()
            && self.verify.as_ref().is_some_and(|v| v.ok)
            && !self.reboot_required
            && !self.differs_from_majority
    }
}

/// Hosts with the same GPU architectures, and the stack most of them have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Group {
    /// The architecture set (empty: hosts without an NVIDIA GPU).
    pub architectures: Vec<String>,
    /// The hosts with a stack in this group.
    pub hosts: Vec<String>,
    /// The stack more than half of them have; `None` with one host or without a majority.
    pub majority: Option<Stack>,
    /// How many hosts have the majority's stack.
    pub majority_count: usize,
}

/// A host whose stack differs from its group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flag {
    /// The host.
    pub host: String,
    /// Its group's architectures.
    pub architectures: Vec<String>,
    /// Its stack.
    pub stack: Stack,
    /// The group's majority stack; `None` when the group has none.
    pub majority: Option<Stack>,
    /// One line for people.
    pub message: String,
}

/// The whole report (`fleet report --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FleetReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Every host is healthy (see [`HostRow::healthy`]).
    pub ok: bool,
    /// One row per host, sorted by name.
    pub hosts: Vec<HostRow>,
    /// The architecture groups, sorted.
    pub groups: Vec<Group>,
    /// Hosts whose stack differs from their group's majority.
    pub flagged: Vec<Flag>,
    /// [`COMPARISON_NOTE`].
    pub note: String,
}

fn parse(name: &str, text: Option<&str>, problems: &mut Vec<String>) -> Option<Value> {
    let text = text?;
    match serde_json::from_str::<Value>(text) {
        Ok(v) if v.is_object() => Some(v),
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
    let mut problems = files.errors.clone();
    let install = parse("install.json", files.install.as_deref(), &mut problems);
    let verify = parse("verify.json", files.verify.as_deref(), &mut problems);
    let system = parse("system.json", files.system.as_deref(), &mut problems);
    let mut row = HostRow {
        host: files.host.clone(),
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

/// Sorts the rows, groups them by architecture set, and flags every host whose stack differs
/// from the majority of its group (every host of a group whose stacks disagree without a
/// majority). Hosts without a stack (failed or missing installs) are not compared.
pub fn aggregate(mut rows: Vec<HostRow>) -> FleetReport {
    rows.sort_by(|a, b| a.host.cmp(&b.host));
    let mut by_arch: BTreeMap<Vec<String>, Vec<usize>> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        if r.stack.is_some() {
            by_arch.entry(r.architectures.clone()).or_default().push(i);
        }
    }
    let mut groups = Vec::new();
    let mut flagged = Vec::new();
    for (arch, members) in by_arch {
        let mut counts: BTreeMap<&Stack, usize> = BTreeMap::new();
        for &i in &members {
            *counts
                .entry(rows[i].stack.as_ref().expect("grouped"))
                .or_default() += 1;
        }
        let (top, top_count) = counts
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(s, n)| ((*s).clone(), *n))
            .expect("a group has a host");
        let n = members.len();
        let majority = (n > 1 && top_count * 2 > n).then_some(top);
        let arch_name = if arch.is_empty() {
            "without an NVIDIA GPU".to_owned()
        } else {
            arch.join(" + ")
        };
        if n > 1 && counts.len() > 1 {
            for &i in &members {
                let stack = rows[i].stack.clone().expect("grouped");
                if majority.as_ref() == Some(&stack) {
                    continue;
                }
                let message = match &majority {
                    Some(m) => format!(
                        "differs from the majority of the {n} {arch_name} hosts ({top_count} have {}): this host has {}",
                        m.describe(),
                        stack.describe()
                    ),
                    None => format!(
                        "the {n} {arch_name} hosts have no majority stack; this host has {}",
                        stack.describe()
                    ),
                };
                rows[i].differs_from_majority = true;
                flagged.push(Flag {
                    host: rows[i].host.clone(),
                    architectures: arch.clone(),
                    stack,
                    majority: majority.clone(),
                    message,
                });
            }
        }
        groups.push(Group {
            architectures: arch,
            hosts: members.iter().map(|&i| rows[i].host.clone()).collect(),
            majority_count: if majority.is_some() { top_count } else { 0 },
            majority,
        });
    }
    flagged.sort_by(|a, b| a.host.cmp(&b.host));
    FleetReport {
        schema_version: SCHEMA_VERSION,
        ok: !rows.is_empty() && rows.iter().all(HostRow::healthy),
        hosts: rows,
        groups,
        flagged,
        note: COMPARISON_NOTE.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn install(driver: (&str, &str), cuda: &str, cudnn: Option<(&str, &str)>) -> String {
        let cudnn = match cudnn {
            Some((v, n)) => {
                serde_json::json!({"name": "cudnn", "action": "install", "version": v, "cuda_variant": n, "reason": ""})
            }
            None => {
                serde_json::json!({"name": "cudnn", "action": "skip", "version": null, "reason": ""})
            }
        };
        serde_json::json!({
            "status": "installed", "profile": "cuda-dev", "changed": true, "reboot_required": false,
            "plan": {"status": "ok", "profile": "cuda-dev", "components": [
                {"name": "driver", "action": driver.1, "version": driver.0, "reason": ""},
                {"name": "cuda", "action": "install", "version": cuda, "reason": ""},
                cudnn,
            ], "reasons": ["NVIDIA GeForce GTX 1080 Ti (compute capability 6.1): sm_61 (CUDA 12.2)"],
               "warnings": ["keeping the installed driver holds this plan back"]},
            "toolkit": {"cuda": cuda},
        })
        .to_string()
    }

    fn system(name: &str, cc: &str, arch: &str) -> String {
        serde_json::json!({"schema_version": 1, "os": {"family": "linux"}, "gpus": [
            {"index": 0, "vendor": "nvidia", "name": name, "compute_capability": cc, "architecture": arch}
        ]})
        .to_string()
    }

    const VERIFY: &str = r#"{"schema_version":1,"ok":false,"passed":1,"failed":1,"skipped":2,
        "checks":[{"id":"driver","status":"fail","evidence":["no NVIDIA driver/GPU here"]},
                  {"id":"nvcc","status":"pass","evidence":["ok"],"data":{"installed":"12.2.2"}}]}"#;

    fn host(
        name: &str,
        gpu: (&str, &str, &str),
        cuda: &str,
        cudnn: Option<(&str, &str)>,
    ) -> HostFiles {
        HostFiles {
            host: name.into(),
            install: Some(install(("535.183.01", "keep"), cuda, cudnn)),
            verify: Some(VERIFY.into()),
            system: Some(system(gpu.0, gpu.1, gpu.2)),
            errors: Vec::new(),
        }
    }

    const PASCAL: (&str, &str, &str) = ("NVIDIA GeForce GTX 1080 Ti", "6.1", "Pascal");
    const BLACKWELL: (&str, &str, &str) = ("NVIDIA GeForce RTX 5090", "12.0", "Blackwell");

    #[test]
    fn a_row_has_every_column_and_honest_problems() {
        let row = host_row(&host("a", PASCAL, "12.2.2", Some(("9.10.2", "12"))));
        assert_eq!(row.status, "installed");
        assert_eq!(row.architectures, ["Pascal"]);
        assert_eq!(row.gpus[0].compute_capability.as_deref(), Some("6.1"));
        assert_eq!(
            row.driver,
            Some(DriverInfo {
                version: Some("535.183.01".into()),
                action: "keep".into()
            })
        );
        let stack = row.stack.clone().unwrap();
        assert_eq!(stack.cuda.as_deref(), Some("12.2.2"));
        assert_eq!(stack.cudnn.as_deref(), Some("9.10.2 (cuda12)"));
        assert_eq!(stack.framework, None);
        assert_eq!(
            row.verify,
            Some(VerifyCounts {
                ok: false,
                passed: 1,
                failed: 1,
                skipped: 2
            })
        );
        assert!(row
            .problems
            .contains(&"verify driver: no NVIDIA driver/GPU here".to_owned()));
        assert!(row
            .problems
            .iter()
            .any(|p| p.starts_with("warning: keeping")));
        assert!(!row.healthy(), "a failed check is not healthy");
    }

    #[test]
    fn gpus_come_from_the_plan_without_a_system_file() {
        let mut files = host("a", PASCAL, "12.2.2", None);
        files.system = None;
        let row = host_row(&files);
        assert_eq!(row.gpus[0].name, "NVIDIA GeForce GTX 1080 Ti");
        assert_eq!(row.architectures, ["cc 6.1"]);
        assert_eq!(row.stack.unwrap().cudnn, None);
    }

    #[test]
    fn a_kept_toolkit_shows_its_release_not_the_nvcc_build() {
        let mut i: Value =
            serde_json::from_str(&install(("535.183.01", "keep"), "12.2.2", None)).unwrap();
        i["toolkit"] = Value::Null;
        i["plan"]["components"][1] = serde_json::json!({"name": "cuda", "action": "keep", "version": "12.2.82",
            "path": "/opt/cudaup/toolkits/cuda-12.2.2", "reason": ""});
        let row = host_row(&HostFiles {
            host: "a".into(),
            install: Some(i.to_string()),
            verify: None,
            system: None,
            errors: Vec::new(),
        });
        assert_eq!(row.stack.unwrap().cuda.as_deref(), Some("12.2.2"));
        assert!(row.problems.iter().any(|p| p.starts_with("no verify.json")));
    }

    #[test]
    fn failed_missing_and_broken_reports_are_problems_not_crashes() {
        let failed = host_row(&HostFiles {
            host: "f".into(),
            install: Some(r#"{"status":"failed","exit_code":3,"error":["error: network: connection refused"]}"#.into()),
            verify: None,
            system: None,
            errors: Vec::new(),
        });
        assert_eq!(failed.status, "failed");
        assert_eq!(
            failed.problems,
            ["install failed (exit code 3): error: network: connection refused"]
        );
        let missing = host_row(&HostFiles {
            host: "m".into(),
            ..Default::default()
        });
        assert_eq!(missing.status, "missing");
        assert!(missing.problems[0].starts_with("no install.json"));
        let broken = host_row(&HostFiles {
            host: "b".into(),
            install: Some("{not json".into()),
            verify: Some("[]".into()),
            system: None,
            errors: Vec::new(),
        });
        assert!(broken
            .problems
            .iter()
            .any(|p| p.starts_with("install.json: not JSON")));
        assert!(broken
            .problems
            .iter()
            .any(|p| p == "verify.json: not a JSON object"));
        let report = aggregate(vec![failed, missing, broken]);
        assert!(report.groups.is_empty() && report.flagged.is_empty());
        assert!(!report.ok);
    }

    #[test]
    fn a_pending_reboot_is_a_problem() {
        let mut i: Value =
            serde_json::from_str(&install(("595.71.05", "install"), "13.2.2", None)).unwrap();
        i["reboot_required"] = true.into();
        let row = host_row(&HostFiles {
            host: "r".into(),
            install: Some(i.to_string()),
            ..Default::default()
        });
        assert!(row.reboot_required);
        assert!(row.problems.contains(
            &"reboot pending: driver 595.71.05 is installed but not loaded yet".to_owned()
        ));
    }

    #[test]
    fn only_hosts_with_the_same_gpus_are_compared() {
        let rows = vec![
            host_row(&host("p1", PASCAL, "12.2.2", Some(("9.10.2", "12")))),
            host_row(&host("p2", PASCAL, "12.2.2", Some(("9.10.2", "12")))),
            host_row(&host("p3", PASCAL, "12.6.3", Some(("9.10.2", "12")))),
            // A different GPU, a different stack: not a deviation.
            host_row(&host("b1", BLACKWELL, "12.9.1", Some(("9.17.0", "12")))),
        ];
        let report = aggregate(rows);
        assert_eq!(report.flagged.len(), 1, "{:#?}", report.flagged);
        let flag = &report.flagged[0];
        assert_eq!(flag.host, "p3");
        assert_eq!(flag.architectures, ["Pascal"]);
        assert_eq!(
            flag.majority.as_ref().unwrap().cuda.as_deref(),
            Some("12.2.2")
        );
        assert!(flag
            .message
            .contains("differs from the majority of the 3 Pascal hosts (2 have CUDA 12.2.2"));
        let p3 = report.hosts.iter().find(|h| h.host == "p3").unwrap();
        assert!(p3.differs_from_majority);
        assert!(
            !report
                .hosts
                .iter()
                .find(|h| h.host == "b1")
                .unwrap()
                .differs_from_majority
        );
        assert_eq!(report.groups.len(), 2);
        assert_eq!(report.groups[1].architectures, ["Pascal"]);
        assert_eq!(report.groups[1].majority_count, 2);
        assert_eq!(
            report.groups[0].majority, None,
            "one host: nothing to compare"
        );
    }

    #[test]
    fn a_tie_flags_every_host_of_the_group() {
        let report = aggregate(vec![
            host_row(&host("a", BLACKWELL, "12.9.1", None)),
            host_row(&host("b", BLACKWELL, "12.8.1", None)),
        ]);
        assert_eq!(report.flagged.len(), 2);
        assert!(report.flagged[0].message.contains("no majority"));
        assert_eq!(report.groups[0].majority, None);
    }

    #[test]
    fn a_healthy_fleet_is_ok() {
        let good = r#"{"ok":true,"passed":7,"failed":0,"skipped":0,"checks":[]}"#;
        let mut files = host("a", PASCAL, "12.2.2", None);
        files.verify = Some(good.into());
        let mut other = host("b", PASCAL, "12.2.2", None);
        other.verify = Some(good.into());
        let report = aggregate(vec![host_row(&other), host_row(&files)]);
        assert!(report.ok, "{report:#?}");
        assert_eq!(report.hosts[0].host, "a", "sorted by host");
    }
}
