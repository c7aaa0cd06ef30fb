//! Finding 8: a plan on the last torch line with kernels for a GPU's architecture says so, with
//! the source, so "upgrade torch" does not look like a fix.

use cudaup::model::plan::Status;
use cudaup::model::request::{Pins, Profile};

use super::*;

fn last_line_warning(gpu: Gpu) -> Option<String> {
    let s = machine(&[gpu], Some("580.95.05"), "3.12.3");
    let p = plan(&s, &request(Profile::Pytorch, Pins::default(), "keep"));
    assert_eq!(p.status, Status::Ok, "{p:#?}");
    let w = p
        .warnings
        .iter()
        .find(|w| w.contains("last release line"))
        .cloned();
    if w.is_some() {
        assert!(version(&p, "torch").starts_with("2.14."), "{p:#?}");
    }
    w
}

#[test]
fn pascal_maxwell_and_volta_plans_say_torch_2_14_is_their_last_line() {
    for gpu in [
        Gpu(
            "NVIDIA GeForce GTX 1080 Ti",
            Some("10de:1b06"),
            "6.1",
            "Pascal",
        ),
        Gpu("Tesla V100-SXM2-16GB", Some("10de:1db1"), "7.0", "Volta"),
        Gpu(
            "NVIDIA GeForce GTX 980",
            Some("10de:13c0"),
            "5.2",
            "Maxwell",
        ),
    ] {
        let w = last_line_warning(gpu).unwrap_or_else(|| panic!("{}: no last-line note", gpu.0));
        assert!(
            w.contains(gpu.0) && w.contains("pytorch/pytorch/issues/190385"),
            "{w}"
        );
    }
}

/// Not named by the audit: a Turing or a Blackwell GPU gets no such note, and a mixed machine
/// names only the GPU the line is last for.
#[test]
fn newer_architectures_get_no_last_line_note() {
    assert_eq!(
        last_line_warning(Gpu("Tesla T4", Some("10de:1eb8"), "7.5", "Turing")),
        None
    );
    assert_eq!(
        last_line_warning(Gpu(
            "NVIDIA GeForce RTX 5090",
            Some("10de:2b85"),
            "12.0",
            "Blackwell"
        )),
        None
    );
    let s = machine(
        &[
            Gpu("Tesla V100-SXM2-16GB", Some("10de:1db1"), "7.0", "Volta"),
            Gpu("Tesla T4", Some("10de:1eb8"), "7.5", "Turing"),
        ],
        Some("580.95.05"),
        "3.12.3",
    );
    let p = plan(&s, &request(Profile::Pytorch, Pins::default(), "keep"));
    let w = p
        .warnings
        .iter()
        .find(|w| w.contains("last release line"))
        .unwrap_or_else(|| panic!("{:#?}", p.warnings));
    assert!(w.contains("Tesla V100") && !w.contains("Tesla T4"), "{w}");
}
