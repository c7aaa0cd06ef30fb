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

/// An H200 with no driver yet, or on an older one, as a first install sees it.
fn h200_installing(installed: Option<(&str, &str)>, policy: &str, pin: Option<&str>) -> Plan {
    let mut m = json!({
        "os": {"family": "linux", "distro": "ubuntu", "version": "24.04", "arch": "x86_64", "wsl": false},
        "gpus": [{"index": 0, "vendor": "nvidia", "name": "NVIDIA H200", "pci_id": "10de:2335",
                  "compute_capability": "9.0", "architecture": "Hopper"}],
        "pythons": [{"path": "/usr/bin/python3", "version": "3.12.3"}]
    });
    if let Some((d, c)) = installed {
        m["driver"] = json!({"version": d, "cuda_version": c});
    }
    let s: cudaup::model::system::System = serde_json::from_value(m).unwrap();
    let pins = Pins {
        cuda: pin.map(|p| VersionPin::parse(p).unwrap()),
        ..Pins::default()
    };
    plan(&s, &request(Profile::CudaDev, pins, policy))
}

/// A driver the plan installs, not one installed: 620.70.06 runs CUDA 13.5 natively (NVIDIA's
/// driver redist builds its CUDA compat package for 13.5), so a plan that installs it takes 13.5
/// without a pin and without the minor-version warning, driverless or over an R580.
#[test]
fn a_planned_r620_driver_runs_13_5_natively() {
    for installed in [None, Some(("580.95.05", "13.0"))] {
        for policy in ["620.70.06", "latest"] {
            let p = h200_installing(installed, policy, None);
            assert_eq!(p.status, Status::Ok, "{p:#?}");
            let (action, version_planned) = driver(&p);
            assert_eq!(version_planned, "620.70.06", "{policy}");
            let expected = match installed {
                None => cudaup::model::plan::Action::Install,
                Some(_) => cudaup::model::plan::Action::Upgrade,
            };
            assert_eq!(action, expected, "{policy}");
            assert_eq!(version(&p, "cuda"), "13.5.0", "{policy}: {p:#?}");
            assert!(!minor_compat(&p), "{policy}: {:#?}", p.warnings);
        }
    }
}

/// Not named by the audit: the native claim starts at the release the source names. A driver
/// kept below it (R595) runs a 13.5 pin only through minor-version compatibility, and the warning
/// names the driver that would run it natively; a kept R615 without a 13.5 report gets 13.4.
#[test]
fn below_the_native_driver_13_5_stays_minor_compat_and_says_which_driver_is_native() {
    let p = h200_installing(Some(("595.45.04", "13.2")), "keep", Some("13.5"));
    assert_eq!(version(&p, "cuda"), "13.5.0", "{p:#?}");
    assert!(
        p.warnings
            .iter()
            .any(|w| w.contains("minor-version compatibility")
                && w.contains("driver 620.70.06 and newer run it natively")),
        "{:#?}",
        p.warnings
    );
    let p = h200_installing(Some(("615.71.09", "13.4")), "keep", None);
    assert!(version(&p, "cuda").starts_with("13.4."), "{p:#?}");
}
