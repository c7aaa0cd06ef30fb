//! Finding 1: a driver is kept only when NVIDIA's supported-GPU table of that release lists every
//! planned GPU, and the plan names the first release that does.

use cudaup::model::plan::{Action, Status};
use cudaup::model::request::{Pins, Profile};

use super::*;

const RTX_5060: Gpu = Gpu(
    "NVIDIA GeForce RTX 5060",
    Some("10de:2d05"),
    "12.0",
    "Blackwell",
);
const RTX_5050: Gpu = Gpu(
    "NVIDIA GeForce RTX 5050",
    Some("10de:2d83"),
    "12.0",
    "Blackwell",
);
const B300: Gpu = Gpu(
    "NVIDIA B300 SXM6 AC",
    Some("10de:3182"),
    "10.3",
    "Blackwell",
);
const GB300: Gpu = Gpu("NVIDIA GB300", Some("10de:31c2"), "10.3", "Blackwell");
const GB10: Gpu = Gpu("NVIDIA GB10", Some("10de:2e12"), "12.1", "Blackwell");
const PRO_6000_SERVER: Gpu = Gpu(
    "NVIDIA RTX PRO 6000 Blackwell Server Edition",
    Some("10de:2bb5"),
    "12.0",
    "Blackwell",
);
// Not named by the audit: the same class (a GPU a branch reached late, or never).
const PRO_4500_SERVER: Gpu = Gpu(
    "NVIDIA RTX PRO 4500 Blackwell Server Edition",
    Some("10de:2c3a"),
    "12.0",
    "Blackwell",
);
const PRO_2000: Gpu = Gpu(
    "NVIDIA RTX PRO 2000 Blackwell",
    Some("10de:2d30"),
    "12.0",
    "Blackwell",
);
const H200: Gpu = Gpu("NVIDIA H200", Some("10de:2335"), "9.0", "Hopper");

/// `--driver keep` on `driver` is refused, naming the release NVIDIA's table was read for and
/// `first` (the first release of a branch that lists the GPU); `auto` replaces the driver.
fn refused(gpus: &[Gpu], installed: &str, first: &str) {
    let s = machine(gpus, Some(installed), "3.12.3");
    let keep = plan(&s, &request(Profile::CudaDev, Pins::default(), "keep"));
    assert_eq!(keep.status, Status::Unsupported, "{keep:#?}");
    let why = keep.reasons.join("\n");
    assert!(
        why.contains("is not in NVIDIA's supported-GPU table of driver") && why.contains(first),
        "{why}"
    );
    let auto = plan(&s, &request(Profile::CudaDev, Pins::default(), "auto"));
    let (action, v) = driver(&auto);
    assert_eq!(action, Action::Upgrade, "{auto:#?}");
    assert_ne!(v, installed, "{auto:#?}");
    assert!(
        auto.warnings.iter().any(|w| w.contains(&format!(
            "the installed driver {installed} cannot drive every GPU"
        ))),
        "{:#?}",
        auto.warnings
    );
}

/// `--driver keep` on `driver` keeps it.
fn kept(gpus: &[Gpu], driver: &str) {
    let s = machine(gpus, Some(driver), "3.12.3");
    let p = plan(&s, &request(Profile::CudaDev, Pins::default(), "keep"));
    assert_eq!(super::driver(&p), (Action::Keep, driver), "{p:#?}");
}

#[test]
fn rtx_5060_needs_570_158_01_on_r570_and_575_57_08_on_r575() {
    refused(&[RTX_5060], "570.153.02", "570.158.01");
    refused(&[RTX_5060], "575.51.03", "575.57.08");
    kept(&[RTX_5060], "570.158.01");
    kept(&[RTX_5060], "575.57.08");
}

#[test]
fn rtx_5050_is_in_no_r570_release() {
    refused(&[RTX_5050], "570.211.01", "575.64.03");
    kept(&[RTX_5050], "575.64.03");
    // Every install option is a release that lists it.
    let s = machine(&[RTX_5050], None, "3.12.3");
    let p = plan(
        &s,
        &request(Profile::CudaDev, Pins::default(), "570.211.01"),
    );
    assert_eq!(p.status, Status::Unsupported, "{p:#?}");
}

#[test]
fn b300_and_gb300_need_580_82_07() {
    for gpu in [B300, GB300] {
        refused(&[gpu], "580.65.06", "580.82.07");
        refused(&[gpu], "575.57.08", "580.82.07");
        kept(&[gpu], "580.82.07");
        kept(&[gpu], "580.178.04");
    }
}

#[test]
fn gb10_is_judged_release_by_release() {
    // 580.94.13 (the DGX Spark build) lists it; 580.95.05 and 580.105.08 do not; the mainline
    // does from 580.119.02; 590.44.01 does not, 590.48.01 does.
    kept(&[GB10], "580.94.13");
    refused(&[GB10], "580.95.05", "580.94.13");
    kept(&[GB10], "580.119.02");
    refused(&[GB10], "590.44.01", "590.48.01");
}

#[test]
fn rtx_pro_6000_server_needs_r575() {
    refused(&[PRO_6000_SERVER], "570.211.01", "575.57.08");
    kept(&[PRO_6000_SERVER], "575.57.08");
}

/// Not named by the audit: GPUs that reached a branch late in its life.
#[test]
fn gpus_a_branch_reached_late_are_refused_before_their_release() {
    refused(&[PRO_4500_SERVER], "580.126.20", "580.142");
    kept(&[PRO_4500_SERVER], "580.142");
    refused(&[PRO_2000], "570.172.08", "570.190");
    refused(&[PRO_2000], "580.65.06", "580.76.05");
    kept(&[PRO_2000], "570.190");
}

/// Not named by the audit: a machine with two GPUs keeps a driver only when the release lists
/// both, and a picture without PCI ids is judged by the product name.
#[test]
fn every_planned_gpu_must_be_listed_and_names_stand_in_for_missing_ids() {
    kept(&[H200], "580.65.06");
    refused(&[H200, B300], "580.65.06", "580.82.07");
    let no_id = Gpu("NVIDIA GeForce RTX 5060", None, "12.0", "Blackwell");
    refused(&[no_id], "570.153.02", "570.158.01");
    // A branch newer than every table read (620) and a pre-Turing GPU (no table lists it) are
    // left to drivers.toml's architecture windows.
    kept(&[RTX_5060], "620.70.06");
    kept(
        &[Gpu(
            "Tesla V100-SXM2-16GB",
            Some("10de:1db1"),
            "7.0",
            "Volta",
        )],
        "535.288.01",
    );
}
