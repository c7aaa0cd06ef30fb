//! The three shapes read back as themselves: what install writes is what fleet reads.

use super::*;

fn plan() -> serde_json::Value {
    serde_json::json!({"status": "ok", "profile": "cuda-dev", "components": [], "reasons": [],
        "warnings": [], "constraints": []})
}

#[test]
fn each_shape_reads_back_as_itself() {
    let installed = Outcome::Installed(Box::new(Installed {
        schema_version: SCHEMA_VERSION,
        status: InstalledStatus::VerificationFailed,
        profile: "cuda-dev".into(),
        changed: true,
        reboot_required: false,
        gpus: vec![PlannedGpu {
            name: "NVIDIA H200".into(),
            compute_capability: Some("9.0".into()),
            architecture: Some("Hopper".into()),
        }],
        plan: plan(),
        driver: Some(DriverReport {
            manual: Some("no repository for this OS".into()),
            ..Default::default()
        }),
        toolkit: Some(ToolkitReport {
            cuda: "13.0.2".into(),
            ..Default::default()
        }),
        venv: None,
        cudaup: None,
        env: Some(EnvReport::default()),
        verify: Some(serde_json::json!({"ok": false})),
    }));
    let nothing = Outcome::NothingToDo(NothingToDo {
        schema_version: SCHEMA_VERSION,
        status: NothingStatus::NothingToDo,
        profile: "cuda-dev".into(),
        changed: false,
        reboot_required: false,
        gpus: Vec::new(),
        plan: plan(),
        env: None,
    });
    let dry = Outcome::DryRun(plan());
    for outcome in [installed, nothing, dry] {
        let back: Outcome = serde_json::from_str(&outcome.to_json()).unwrap();
        assert_eq!(back, outcome);
    }
}

#[test]
fn the_status_words_are_todays() {
    let text = serde_json::to_value(InstalledStatus::VerificationFailed).unwrap();
    assert_eq!(text, "installed, verification failed");
    let text = serde_json::to_value(NothingStatus::NothingToDo).unwrap();
    assert_eq!(text, "nothing to do");
    // Nothing to do keeps `env: null` (a fleet tool sees the key), installed leaves it out.
    let nothing = NothingToDo {
        schema_version: SCHEMA_VERSION,
        status: NothingStatus::NothingToDo,
        profile: "pytorch".into(),
        changed: false,
        reboot_required: false,
        gpus: Vec::new(),
        plan: plan(),
        env: None,
    };
    assert_eq!(
        serde_json::to_value(&nothing).unwrap()["env"],
        serde_json::Value::Null
    );
    assert!(serde_json::to_value(&nothing)
        .unwrap()
        .as_object()
        .unwrap()
        .contains_key("env"));
}

#[test]
fn an_older_or_smaller_report_still_reads() {
    let old = serde_json::json!({"status": "installed", "profile": "cuda-dev", "changed": true,
        "plan": plan(), "toolkit": {"cuda": "12.2.2"}, "driver": {"stand_in": "a test's"}});
    let Outcome::Installed(i) = serde_json::from_value(old).unwrap() else {
        panic!("not read as installed")
    };
    assert_eq!(i.schema_version, 0);
    assert_eq!(i.toolkit.unwrap().cuda, "12.2.2");
    assert_eq!(i.driver, Some(DriverReport::default()));
}
