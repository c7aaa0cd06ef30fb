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
