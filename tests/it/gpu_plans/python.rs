//! Finding 3: the Requires-Python of every wheel a plan installs (torchvision, torchaudio,
//! tensorflow) is applied to the exact Python, PEP 440 exclusions included: torchvision 0.26.0 -
//! 0.29.2 declare `>=3.10,!=3.14.1`.

use cudaup::model::plan::{Plan, Status};
use cudaup::model::request::{Pins, Profile};
use cudaup::model::version::VersionPin;

use super::*;

const RTX_4090: Gpu = Gpu("NVIDIA GeForce RTX 4090", Some("10de:2684"), "8.9", "Ada");

fn torch_plan(python: &str, pins: Pins) -> Plan {
    let s = machine(&[RTX_4090], Some("580.95.05"), python);
    plan(&s, &request(Profile::Pytorch, pins, "keep"))
}

fn python_pin(v: &str) -> Pins {
    Pins {
        python: Some(VersionPin::parse(v).unwrap()),
        ..Pins::default()
    }
}

/// On Python 3.14.1 the newest installable pair is torch 2.10.0 with torchvision 0.25.0.
#[test]
fn python_3_14_1_gets_the_newest_torchvision_that_does_not_exclude_it() {
    let p = torch_plan("3.14.1", python_pin("3.14.1"));
    assert_eq!(p.status, Status::Ok, "{p:#?}");
    assert_eq!(version(&p, "torch"), "2.10.0", "{p:#?}");
    assert_eq!(version(&p, "torchvision"), "0.25.0", "{p:#?}");
    assert!(
        p.rejected
            .iter()
            .any(|r| r.contains("torchvision 0.29.2 declares Requires-Python >=3.10,!=3.14.1")),
        "{:#?}",
        p.rejected
    );
    // Unpinned, the machine's 3.14.1 is never kept for torchvision 0.29.2.
    let p = torch_plan("3.14.1", Pins::default());
    assert_eq!(p.status, Status::Ok, "{p:#?}");
    let kept_excluded = version(&p, "python") == "3.14.1" && version(&p, "torchvision") == "0.29.2";
    assert!(!kept_excluded, "{p:#?}");
}

/// Not named by the audit: the exclusion is of one exact version (3.14.2 keeps torch 2.15 with
/// torchvision 0.29.2), and a pinned older torch whose companion excludes the Python is refused
/// with the reason.
#[test]
fn the_exclusion_is_exact_and_names_the_wheel() {
    let p = torch_plan("3.14.2", Pins::default());
    assert_eq!(version(&p, "torch"), "2.15.0", "{p:#?}");
    assert_eq!(version(&p, "python"), "3.14.2", "{p:#?}");
    assert_eq!(version(&p, "torchvision"), "0.29.2", "{p:#?}");
    let pins = Pins {
        torch: Some(VersionPin::parse("2.14").unwrap()),
        ..python_pin("3.14.1")
    };
    let p = torch_plan("3.14.1", pins);
    assert_eq!(p.status, Status::Unsupported, "{p:#?}");
    assert!(
        p.reasons
            .join("\n")
            .contains("torchvision 0.29.1 declares Requires-Python >=3.10,!=3.14.1, which excludes the pinned Python 3.14.1"),
        "{:#?}",
        p.reasons
    );
}
