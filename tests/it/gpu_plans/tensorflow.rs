//! Finding 2: TensorFlow on Blackwell. The floating cuDNN of TF 2.20+ is bounded by the newest
//! catalogued build in range that serves the GPUs (pip takes the newest), not by the first; an
//! exact pin the catalog has no row for is unknown, never fitting; releases public reports show
//! failing on a compute capability are refused, naming what to use instead.

use cudaup::model::plan::Status;
use cudaup::model::request::{Pins, Profile};
use cudaup::model::version::VersionPin;

use super::*;

const RTX_5090: Gpu = Gpu(
    "NVIDIA GeForce RTX 5090",
    Some("10de:2b85"),
    "12.0",
    "Blackwell",
);
const RTX_5060_TI: Gpu = Gpu(
    "NVIDIA GeForce RTX 5060 Ti",
    Some("10de:2d04"),
    "12.0",
    "Blackwell",
);
const PRO_6000: Gpu = Gpu(
    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
    Some("10de:2bb1"),
    "12.0",
    "Blackwell",
);
const B200: Gpu = Gpu("NVIDIA B200", Some("10de:2901"), "10.0", "Blackwell");
const GTX_1080_TI: Gpu = Gpu(
    "NVIDIA GeForce GTX 1080 Ti",
    Some("10de:1b06"),
    "6.1",
    "Pascal",
);
const A100: Gpu = Gpu("NVIDIA A100-SXM4-80GB", Some("10de:20b2"), "8.0", "Ampere");

fn tf(gpus: &[Gpu], pin: Option<&str>) -> cudaup::model::plan::Plan {
    let s = machine(gpus, Some("580.95.05"), "3.12.3");
    let pins = Pins {
        tensorflow: pin.map(|p| VersionPin::parse(p).unwrap()),
        ..Pins::default()
    };
    plan(&s, &request(Profile::Tensorflow, pins, "keep"))
}

#[test]
fn every_blackwell_gpu_gets_tensorflow_2_21_with_the_cudnn_pip_takes() {
    for gpu in [RTX_5090, RTX_5060_TI, PRO_6000, B200] {
        let p = tf(&[gpu], None);
        assert_eq!(p.status, Status::Ok, "{p:#?}");
        assert_eq!(version(&p, "tensorflow"), "2.21.0", "{}", gpu.0);
        assert!(p.constraints.is_empty(), "{:#?}", p.constraints);
        let reason = &p.component("tensorflow").unwrap().reason;
        assert!(
            reason.contains("cuDNN 9.28.0, serves every GPU"),
            "{reason}"
        );
        let pinned = tf(&[gpu], Some("2.21"));
        assert_eq!(version(&pinned, "tensorflow"), "2.21.0", "{pinned:#?}");
    }
}

#[test]
fn tensorflow_2_17_on_sm_120_is_refused_naming_the_reports_and_the_alternatives() {
    let p = tf(&[RTX_5090], Some("2.17"));
    assert_eq!(p.status, Status::Unsupported, "{p:#?}");
    let why = p.reasons.join("\n");
    for needle in [
        "known to fail on sm_120",
        "CUDA_ERROR_INVALID_PTX",
        "TensorFlow 2.21",
        "NGC",
        "PyTorch",
        "tensorflow/tensorflow/issues/101746",
    ] {
        assert!(why.contains(needle), "{needle}: {why}");
    }
}

/// Not named by the audit: an exact cuDNN pin the catalog has no row for is unknown on any GPU
/// (TF 2.16 and 2.17 pin 8.9.7.29), and TF 2.19's catalogued 9.3.0 pin is refused on Blackwell
/// for its missing code, while it fits an A100.
#[test]
fn an_uncatalogued_exact_pin_is_unknown_and_a_catalogued_one_is_judged() {
    for gpu in [A100, B200] {
        let p = tf(&[gpu], Some("2.16"));
        assert_eq!(p.status, Status::Unsupported, "{p:#?}");
        let why = p.reasons.join("\n");
        assert!(
            why.contains("nvidia-cudnn-cu12==8.9.7.29, which the catalog has no row for")
                && why.contains("unknown"),
            "{why}"
        );
    }
    let blackwell = tf(&[RTX_5090], Some("2.19"));
    assert_eq!(blackwell.status, Status::Unsupported, "{blackwell:#?}");
    assert!(
        blackwell
            .reasons
            .join("\n")
            .contains("9.3.0.75, which has no code for sm_120"),
        "{:#?}",
        blackwell.reasons
    );
    let ampere = tf(&[A100], Some("2.19"));
    assert_eq!(version(&ampere, "tensorflow"), "2.19.1", "{ampere:#?}");
}

/// Not named by the audit: a Pascal card beside a Blackwell one bounds the float to the newest
/// build that serves both (9.10.2: 9.11 and later have no sm_61), not to the first in range.
#[test]
fn a_mixed_machine_floats_to_the_newest_build_serving_every_gpu() {
    let p = tf(&[GTX_1080_TI, RTX_5090], None);
    assert_eq!(version(&p, "tensorflow"), "2.21.0", "{p:#?}");
    assert_eq!(p.constraints.len(), 1, "{:#?}", p.constraints);
    assert_eq!(p.constraints[0].requirement, "nvidia-cudnn-cu12<9.11");
    assert!(
        p.constraints[0]
            .reason
            .contains("cuDNN 9.10.2 serves every planned GPU"),
        "{}",
        p.constraints[0].reason
    );
}

/// `--allow-unverified` goes on with an exact cuDNN pin the catalog has no row for, and the plan
/// says it is unverified; a release known to fail on a GPU is still refused under it.
#[test]
fn allow_unverified_takes_an_uncatalogued_pin_and_says_so_but_not_a_known_failure() {
    let s = machine(&[A100], Some("580.95.05"), "3.12.3");
    let pins = Pins {
        tensorflow: Some(VersionPin::parse("2.16").unwrap()),
        ..Pins::default()
    };
    let mut r = request(Profile::Tensorflow, pins, "keep");
    let refused = plan(&s, &r);
    assert_eq!(refused.status, Status::Unsupported, "{refused:#?}");
    assert!(
        refused.reasons.join("\n").contains("--allow-unverified"),
        "the refusal names the opt-in: {:#?}",
        refused.reasons
    );
    r.allow_unverified = true;
    let p = plan(&s, &r);
    assert_eq!(p.status, Status::Ok, "{p:#?}");
    assert_eq!(version(&p, "tensorflow"), "2.16.2");
    let unverified: Vec<_> = p
        .warnings
        .iter()
        .filter(|w| w.starts_with("unverified:"))
        .collect();
    assert_eq!(unverified.len(), 1, "{:#?}", p.warnings);
    assert!(
        unverified[0].contains("nvidia-cudnn-cu12==8.9.7.29, which the catalog has no row for"),
        "{}",
        unverified[0]
    );
    assert!(
        p.component("tensorflow")
            .unwrap()
            .reason
            .contains("pins cuDNN 8.9.7.29, unverified"),
        "{:#?}",
        p.component("tensorflow")
    );
    // Nothing else moves: the same plan as without the flag for a catalogued release.
    let mut plain = request(Profile::Tensorflow, Pins::default(), "keep");
    let before = plan(&s, &plain);
    plain.allow_unverified = true;
    let after = plan(&s, &plain);
    assert_eq!(format!("{before:?}"), format!("{after:?}"));

    let blackwell = machine(&[RTX_5090], Some("580.95.05"), "3.12.3");
    let pins = Pins {
        tensorflow: Some(VersionPin::parse("2.17").unwrap()),
        ..Pins::default()
    };
    let mut r = request(Profile::Tensorflow, pins, "keep");
    r.allow_unverified = true;
    let known = plan(&blackwell, &r);
    assert_eq!(known.status, Status::Unsupported, "{known:#?}");
    assert!(
        known.reasons.join("\n").contains("known to fail on sm_120"),
        "{:#?}",
        known.reasons
    );
}

/// The flag end to end: `plan --system` refuses the uncatalogued pin (exit 3's refusal naming the
/// flag), and with `--allow-unverified` plans it, the JSON carrying the warning.
#[test]
fn plan_allow_unverified_flag_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let system = dir.path().join("a100.json");
    fs_err::write(
        &system,
        serde_json::to_string(&machine(&[A100], Some("580.95.05"), "3.12.3")).unwrap(),
    )
    .unwrap();
    let args = [
        "plan",
        "--system",
        system.to_str().unwrap(),
        "--profile",
        "tensorflow",
        "--tensorflow",
        "2.16",
        "--driver",
        "keep",
        "--json",
    ];
    let refused = crate::common::cudaup(&args, dir.path());
    let j = refused.json();
    assert_eq!(j["status"], "unsupported", "{}", refused.stdout);
    assert_ne!(refused.code, 0, "{}", refused.stdout);
    assert!(
        refused.stdout.contains("--allow-unverified"),
        "{}",
        refused.stdout
    );

    let mut with = args.to_vec();
    with.push("--allow-unverified");
    let ok = crate::common::cudaup(&with, dir.path());
    assert_eq!(ok.code, 0, "{}\n{}", ok.stdout, ok.stderr);
    let j = ok.json();
    assert_eq!(j["status"], "ok", "{}", ok.stdout);
    let warnings = j["warnings"].to_string();
    assert!(
        warnings.contains("unverified: TensorFlow 2.16.2"),
        "{warnings}"
    );
}
