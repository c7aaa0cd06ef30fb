//! The three shapes of `cudaup install --json` (installed, nothing to do, dry run), held against
//! golden skeletons in `tests/fixtures/outcome/`: every key the document has, with its value's
//! JSON type in place of the value (an array shows its first element's shape). A key that
//! appears, goes or changes type is a change of the report fleet tools read, and shows here.
//! `CUDAUP_BLESS=1` rewrites the skeletons from today's output. The installed and nothing-to-do
//! reports are `install::report::Outcome`, which `fleet report` reads back: the tests also read
//! each one back as that type.

use std::path::Path;

use cudaup::install::report::Outcome;
use serde_json::{json, Value};

use crate::common::*;

const H200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/h200-detect.json"
);

/// `value` with every leaf replaced by the name of its JSON type.
fn skeleton(value: &Value) -> Value {
    match value {
        Value::Null => json!("null"),
        Value::Bool(_) => json!("bool"),
        Value::Number(_) => json!("number"),
        Value::String(_) => json!("string"),
        Value::Array(a) => Value::Array(a.first().map(skeleton).into_iter().collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), skeleton(v))).collect())
        }
    }
}

fn assert_shape(name: &str, report: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/outcome")
        .join(format!("{name}.json"));
    let got = skeleton(report);
    if std::env::var_os("CUDAUP_BLESS").is_some() {
        let text = serde_json::to_string_pretty(&got).unwrap() + "\n";
        fs_err::write(&path, text).unwrap();
    }
    let want: Value = serde_json::from_str(&fs_err::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        got,
        want,
        "the {name} shape of install --json changed:\n{}",
        serde_json::to_string_pretty(&got).unwrap()
    );
}

fn cuda_dev<'a>(mirror: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "--profile",
        "cuda-dev",
        "--cuda",
        "13.0.2",
        "--cudnn",
        "9.17.0",
        "--mirror",
        mirror,
        "--json",
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn install_json_installed_then_nothing_to_do_keep_their_shapes() {
    let m = synthetic_mirror(&[]);
    let mirror = m.path().display().to_string();
    let ctx = TestContext::new().with_system_file(Path::new(H200));
    let first = ctx.install(&cuda_dev(&mirror, &["--yes"]));
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    let report = first.json();
    assert_eq!(report["status"], "installed", "{report}");
    assert_eq!(report["toolkit"]["cuda"], "13.0.2", "{report}");
    assert_shape("installed", &report);
    let outcome: Outcome = serde_json::from_value(report).unwrap();
    let Outcome::Installed(installed) = outcome else {
        panic!("not read back as installed: {outcome:?}")
    };
    assert!(installed.changed);
    assert_eq!(installed.gpus[0].name, "NVIDIA H200");

    let again = ctx.install(&cuda_dev(&mirror, &["--yes"]));
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    let report = again.json();
    assert_eq!(report["status"], "nothing to do", "{report}");
    assert_eq!(report["changed"], false, "{report}");
    assert_shape("nothing-to-do", &report);
    assert!(matches!(
        serde_json::from_value(report).unwrap(),
        Outcome::NothingToDo(_)
    ));
}

#[test]
fn install_json_dry_run_keeps_its_shape_and_changes_nothing() {
    let m = synthetic_mirror(&[]);
    let mirror = m.path().display().to_string();
    let ctx = TestContext::new().with_system_file(Path::new(H200));
    let dry = ctx.install(&cuda_dev(&mirror, &["--dry-run"]));
    assert_eq!(dry.code, 0, "{}\n{}", dry.stdout, dry.stderr);
    // With --json, stdout is the document alone (the listing is for people).
    let report = dry.json();
    assert_eq!(report["status"], "ok", "{report}");
    assert_shape("dry-run", &report);
    assert!(
        !ctx.cudaup_home().join("toolkits").exists(),
        "a dry run installed something"
    );
}
