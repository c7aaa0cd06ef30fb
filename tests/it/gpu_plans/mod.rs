//! Plans over machine pictures for the catalog audit of 2026-12-04 (issue 34): each finding as
//! the plan a user would get, and two cases per finding the audit did not name, so the class is
//! tested and not the example. The catalog is the embedded one, the day fixed.

mod cuda;
mod driver_tables;
mod eol;
mod last_line;
mod pictures;
mod python;
mod tensorflow;

use cudaup::catalog::{Catalog, Date};
use cudaup::model::plan::{Action, Plan, Status};
use cudaup::model::request::{DriverPolicy, Pins, Profile, Request};
use cudaup::model::system::System;
use serde_json::json;

/// One GPU: marketing name, PCI id (`None`: a picture without one), compute capability,
/// architecture.
#[derive(Clone, Copy)]
pub struct Gpu(
    pub &'static str,
    pub Option<&'static str>,
    pub &'static str,
    pub &'static str,
);

/// An Ubuntu 24.04 x86_64 machine with `gpus`, `driver` installed (or none) and `python`.
pub fn machine(gpus: &[Gpu], driver: Option<&str>, python: &str) -> System {
    let gpus: Vec<_> = gpus
        .iter()
        .enumerate()
        .map(|(i, g)| {
            json!({"index": i, "vendor": "nvidia", "name": g.0, "pci_id": g.1,
                   "compute_capability": g.2, "architecture": g.3})
        })
        .collect();
    serde_json::from_value(json!({
        "os": {"family": "linux", "distro": "ubuntu", "version": "24.04", "arch": "x86_64", "wsl": false},
        "gpus": gpus,
        "driver": driver.map(|d| json!({"version": d})),
        "pythons": [{"path": "/usr/bin/python3", "version": python}]
    }))
    .expect("a valid machine picture")
}

/// A request for `profile` under driver policy `driver`, with `pins`.
pub fn request(profile: Profile, pins: Pins, driver: &str) -> Request {
    Request {
        profile,
        pins,
        driver: driver.parse::<DriverPolicy>().expect("a driver policy"),
        ..Request::default()
    }
}

/// The embedded catalog, loaded once.
pub fn catalog() -> &'static Catalog {
    static C: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
    C.get_or_init(Catalog::embedded)
}

/// The plan on 2026-12-05.
pub fn plan(s: &System, r: &Request) -> Plan {
    cudaup::resolve::resolve_on(s, r, catalog(), Date::parse("2026-12-05").expect("a date"))
}

/// The version the plan gives `name`.
pub fn version<'p>(p: &'p Plan, name: &str) -> &'p str {
    p.component(name)
        .and_then(|c| c.version.as_deref())
        .unwrap_or_else(|| panic!("no {name} version in {p:#?}"))
}

/// The driver's action and version in an Ok plan.
pub fn driver(p: &Plan) -> (Action, &str) {
    assert_eq!(p.status, Status::Ok, "{p:#?}");
    let d = p.component("driver").expect("a driver line");
    (d.action, d.version.as_deref().unwrap_or(""))
}
