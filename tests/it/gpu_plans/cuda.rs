//! Finding 6: the newest CUDA the driver runs natively is preferred (13.5 on R620, whose driver
//! reports CUDA 13.5), and the minor-version-compatibility warning appears only where it applies.

use cudaup::model::plan::{Plan, Status};
use cudaup::model::request::{Pins, Profile};
use cudaup::model::version::VersionPin;
use serde_json::json;

use super::*;

/// An H200 on `driver`, which reports `cuda` as nvidia-smi and NVML do.
fn h200(driver: &str, cuda: &str, pin: Option<&str>) -> Plan {
    let s: cudaup::model::system::System = serde_json::from_value(json!({
        "os": {"family": "linux", "distro": "ubuntu", "version": "24.04", "arch": "x86_64", "wsl": false},
        "gpus": [{"index": 0, "vendor": "nvidia", "name": "NVIDIA H200", "pci_id": "10de:2335",
                  "compute_capability": "9.0", "architecture": "Hopper"}],
        "driver": {"version": driver, "cuda_version": cuda},
        "pythons": [{"path": "/usr/bin/python3", "version": "3.12.3"}]
    }))
    .unwrap();
    let pins = Pins {
        cuda: pin.map(|p| VersionPin::parse(p).unwrap()),
        ..Pins::default()
    };
    plan(&s, &request(Profile::CudaDev, pins, "keep"))
}

fn minor_compat(p: &Plan) -> bool {
    p.warnings
        .iter()
        .any(|w| w.contains("minor-version compatibility"))
}

#[test]
fn r620_reporting_cuda_13_5_gets_13_5_without_a_minor_compat_warning() {
    for pin in [None, Some("13.5")] {
        let p = h200("620.70.06", "13.5", pin);
        assert_eq!(p.status, Status::Ok, "{p:#?}");
        assert_eq!(version(&p, "cuda"), "13.5.0", "{p:#?}");
        assert!(!minor_compat(&p), "{:#?}", p.warnings);
    }
}

/// Not named by the audit: a driver reporting 13.4 takes 13.4 natively (13.5 would need minor-
/// version compatibility), and a 13.5 pin on a 13.0 driver still says it runs that way.
#[test]
fn the_driver_report_bounds_native_support_and_the_warning_stays_where_it_applies() {
    let p = h200("615.71.09", "13.4", None);
    assert!(version(&p, "cuda").starts_with("13.4."), "{p:#?}");
    assert!(!minor_compat(&p), "{:#?}", p.warnings);
    let p = h200("580.95.05", "13.0", Some("13.5"));
    assert_eq!(version(&p, "cuda"), "13.5.0", "{p:#?}");
    assert!(minor_compat(&p), "{:#?}", p.warnings);
}
