//! Finding 4: every branch has an end of life, and a plan that keeps a driver of an ended branch
//! always says so, naming the supported branch to move to.

use cudaup::model::plan::Action;
use cudaup::model::request::{Pins, Profile};

use super::*;

const RTX_3090: Gpu = Gpu(
    "NVIDIA GeForce RTX 3090",
    Some("10de:2204"),
    "8.6",
    "Ampere",
);
const A100: Gpu = Gpu("NVIDIA A100-SXM4-80GB", Some("10de:20b2"), "8.0", "Ampere");
const RTX_4090: Gpu = Gpu("NVIDIA GeForce RTX 4090", Some("10de:2684"), "8.9", "Ada");

/// The plan keeps `installed` under `policy` and warns that its branch ended in `when`.
fn kept_with_warning(gpu: Gpu, installed: &str, policy: &str, when: &str) {
    let s = machine(&[gpu], Some(installed), "3.10.12");
    let p = plan(&s, &request(Profile::Pytorch, Pins::default(), policy));
    assert_eq!(driver(&p), (Action::Keep, installed), "{p:#?}");
    let w = p
        .warnings
        .iter()
        .find(|w| w.contains("reached its end of life"))
        .unwrap_or_else(|| panic!("{installed}: no end-of-life warning in {:#?}", p.warnings));
    assert!(w.contains(when) && w.contains("--driver"), "{w}");
}

#[test]
fn r470_ended_on_2024_07_20_and_a_kept_470_says_so() {
    kept_with_warning(RTX_3090, "470.256.02", "auto", "on 2024-07-20");
    kept_with_warning(RTX_3090, "470.256.02", "keep", "on 2024-07-20");
}

/// Not named by the audit: a branch the catalog has no row for (NVIDIA's list of supported
/// branches left it out), and a listed branch whose end of life has passed.
#[test]
fn unlisted_and_ended_branches_warn_too() {
    kept_with_warning(A100, "510.47.03", "keep", "August 2025 at the latest");
    kept_with_warning(A100, "535.288.01", "keep", "June 2026");
    // A supported branch does not.
    let s = machine(&[RTX_4090], Some("580.95.05"), "3.12.3");
    let p = plan(&s, &request(Profile::Pytorch, Pins::default(), "keep"));
    assert!(
        !p.warnings.iter().any(|w| w.contains("end of life")),
        "{:#?}",
        p.warnings
    );
    // Every branch row states its end, except new-feature branches no source dates yet (615).
    let undated: Vec<u32> = catalog()
        .drivers
        .branch
        .iter()
        .filter(|b| b.eol.is_none())
        .map(|b| b.branch)
        .collect();
    assert_eq!(undated, vec![615], "branches without an end of life");
}
