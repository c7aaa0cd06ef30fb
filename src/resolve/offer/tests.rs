//! The offer on machine pictures: the H200 machine and variations of it.

use super::*;
use crate::model::request::{DriverPolicy, Pins};
use crate::model::system::{Gpu, Vendor};
use crate::model::version::VersionPin;

fn h200() -> System {
    serde_json::from_str(include_str!("../../../tests/fixtures/h200-detect.json")).unwrap()
}

fn gpu(name: &str, pci: &str, cc: Option<&str>, vendor: Vendor) -> Gpu {
    Gpu {
        index: 0,
        vendor,
        name: name.into(),
        pci_id: Some(pci.into()),
        compute_capability: cc.map(str::to_owned),
        architecture: None,
        memory_mib: None,
    }
}

fn with_gpus(gpus: Vec<Gpu>) -> System {
    let mut s = h200();
    s.gpus = gpus;
    s
}

fn today() -> Date {
    Date::parse("2026-12-05").unwrap()
}

fn offered(system: &System) -> Profile {
    offer_on(system, &Request::default(), &Catalog::embedded(), today()).profile
}

#[test]
fn a_gpu_a_full_stack_fits_is_offered_full_and_no_nvidia_gpu_is_offered_cpu() {
    assert_eq!(offered(&h200()), Profile::Full);
    assert_eq!(offered(&with_gpus(Vec::new())), Profile::Cpu);
    // An AMD or Intel GPU has no CUDA: the CPU build, not a refusal.
    let amd = gpu("AMD Radeon RX 7900 XTX", "1002:744c", None, Vendor::Amd);
    assert_eq!(offered(&with_gpus(vec![amd])), Profile::Cpu);
    let o = offer_on(
        &with_gpus(Vec::new()),
        &Request::default(),
        &Catalog::embedded(),
        today(),
    );
    assert!(o.why.contains("no NVIDIA GPU"), "{o:?}");
}

#[test]
fn a_gpu_no_stack_serves_is_offered_what_works_on_it() {
    // Compute capability unknown: no GPU profile can be vouched for; the CPU build can.
    let unknown = gpu("NVIDIA Mystery", "10de:ffff", None, Vendor::Nvidia);
    let o = offer_on(
        &with_gpus(vec![unknown]),
        &Request::default(),
        &Catalog::embedded(),
        today(),
    );
    assert_eq!(o.profile, Profile::Cpu, "{o:?}");
    assert!(
        o.why.contains("no full or pytorch or cuda-dev stack fits"),
        "{o:?}"
    );
    // Whatever is offered plans: the offer is never a refusal when something fits.
    for cc in ["3.0", "3.5", "5.0", "6.1", "7.0", "8.9", "10.0", "12.0"] {
        let s = with_gpus(vec![gpu(
            "NVIDIA GPU",
            "10de:0001",
            Some(cc),
            Vendor::Nvidia,
        )]);
        let o = offered(&s);
        let req = Request {
            profile: o,
            ..Request::default()
        };
        let plan = crate::resolve::resolve_on(&s, &req, &Catalog::embedded(), today());
        assert_eq!(plan.status, Status::Ok, "cc {cc}: {o} offered, {plan:?}");
    }
}

#[test]
fn the_offer_follows_the_pins_not_the_driver_policy() {
    // An old driver kept: full is still the offer, and its plan refuses the driver (the
    // refusal to see), rather than the CPU build offered to a GPU machine.
    let mut old = h200();
    old.driver.as_mut().unwrap().version = "510.47.03".into();
    let keep = Request {
        driver: DriverPolicy::Keep,
        ..Request::default()
    };
    assert_eq!(
        offer_on(&old, &keep, &Catalog::embedded(), today()).profile,
        Profile::Full
    );
    // A pin nothing matches: no profile plans, and the offer stays full for its refusal.
    let nothing = Request {
        pins: Pins {
            cuda: VersionPin::parse("99.9").ok(),
            ..Pins::default()
        },
        ..Request::default()
    };
    let o = offer_on(&h200(), &nothing, &Catalog::embedded(), today());
    assert_eq!(o.profile, Profile::Full, "{o:?}");
    assert!(o.why.contains("the plan says why"), "{o:?}");
}
