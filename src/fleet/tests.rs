//! Unit tests of the fleet report: rows from hand-made host files, and the comparison of stacks
//! within architecture groups.

use serde_json::Value;

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
        "schema_version": 1, "status": "installed", "profile": "cuda-dev", "changed": true,
        "reboot_required": false,
        "gpus": [{"name": "NVIDIA GeForce GTX 1080 Ti", "compute_capability": "6.1"}],
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

fn host(name: &str, gpu: (&str, &str, &str), cuda: &str, cudnn: Option<(&str, &str)>) -> HostFiles {
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
fn gpus_come_from_the_install_report_without_a_system_file() {
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
        install: Some(
            r#"{"status":"failed","exit_code":3,"error":["error: network: connection refused"]}"#
                .into(),
        ),
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
    // A dry run's document is a plan, not an install report: said, not read as one.
    let dry_run = host_row(&HostFiles {
        host: "d".into(),
        install: Some(r#"{"status":"ok","profile":"cuda-dev","components":[]}"#.into()),
        ..Default::default()
    });
    assert_eq!(dry_run.status, "ok");
    assert!(
        dry_run.problems.iter().any(|p| p.contains("a dry run")),
        "{:?}",
        dry_run.problems
    );
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
    assert!(row
        .problems
        .contains(&"reboot pending: driver 595.71.05 is installed but not loaded yet".to_owned()));
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

#[test]
fn a_hosts_strings_reach_the_terminal_escaped() {
    let mut files = host(
        "h1\x1b]0;owned\x07",
        ("H200", "9.0", "Hopper"),
        "13.0.2",
        None,
    );
    files.install = Some(
        files
            .install
            .unwrap()
            .replace("13.0.2", "13.0.2\\u001b[2J\\r"),
    );
    files.errors.push("verify.json: \x1b[31mred".into());
    let row = host_row(&files);
    let text = serde_json::to_string(&row).unwrap();
    let shown = format!("{row:?} {text}");
    assert!(!row.host.chars().any(char::is_control), "{:?}", row.host);
    assert!(row.host.contains("\\u{1b}"), "{}", row.host);
    for p in &row.problems {
        assert!(!p.chars().any(|c| c.is_control()), "{p:?}");
    }
    let stack = row.stack.as_ref().map(|s| s.describe()).unwrap_or_default();
    assert!(!stack.chars().any(|c| c.is_control()), "{stack:?} {shown}");
}

#[test]
fn a_jax_host_names_its_release_and_plugin() {
    let mut files = host("j", PASCAL, "12.2.2", None);
    let mut i: Value = serde_json::from_str(files.install.as_deref().unwrap()).unwrap();
    i["profile"] = "jax".into();
    i["plan"]["profile"] = "jax".into();
    i["plan"]["components"][1] = serde_json::json!({"name": "jax", "action": "install",
        "version": "0.12.0.1", "variant": "cuda12", "reason": ""});
    files.install = Some(i.to_string());
    let row = host_row(&files);
    assert_eq!(
        row.stack.unwrap().framework.as_deref(),
        Some("jax 0.12.0.1 (cuda12)")
    );
}
