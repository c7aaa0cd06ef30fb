//! The profile a machine is offered when nobody chose one: the one rule `wizard`, `plan`,
//! `install` and `bench` share (docs/plan.md, "The default profile").
//!
//! A machine without an NVIDIA GPU is offered `cpu`: every GPU profile would be refused there
//! (`cuda-dev` alone plans, for a build machine, which is a choice to make knowingly, not a
//! default). A machine with one is offered the first of `full`, `pytorch`, `cuda-dev` and `cpu`
//! that the resolver plans for it with the request's pins (and the default driver policy: under
//! `--driver keep` an old driver is the refusal to see), so an old GPU that
//! no PyTorch build serves is offered what does work on it instead of a refusal. When none plans
//! (a pin nothing matches), the offer stays `full` and its refusal says why. A CUDA or cuDNN pin
//! leaves `cpu` out of the GPU machine's list.

use crate::catalog::{Catalog, Date};
use crate::model::plan::Status;
use crate::model::request::{DriverPolicy, Profile, Request};
use crate::model::system::System;

/// The profiles a machine with an NVIDIA GPU is offered, best first.
const WITH_GPU: [Profile; 4] = [
    Profile::Full,
    Profile::Pytorch,
    Profile::CudaDev,
    Profile::Cpu,
];

/// The profile offered, and why in one line (the plan and the wizard show it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// The profile.
    pub profile: Profile,
    /// Why this one.
    pub why: String,
}

/// The profile `system` is offered, today, for `req`'s pins (its profile and driver policy are
/// not read). A Jetson is offered `full`, whose plan names what JetPack brings.
pub fn offer(system: &System, req: &Request, catalog: &Catalog) -> Offer {
    offer_on(system, req, catalog, Date::today())
}

/// [`offer`] as of `today`.
pub fn offer_on(system: &System, req: &Request, catalog: &Catalog, today: Date) -> Offer {
    if system.nvidia_gpus().next().is_none() {
        return Offer {
            profile: Profile::Cpu,
            why: "no NVIDIA GPU here, so PyTorch for the CPU".into(),
        };
    }
    // The driver policy is not the machine's: under `--driver keep` an old driver is the
    // refusal to see, not a reason to offer the CPU build on a GPU machine.
    let resolve = |profile: Profile| {
        let req = Request {
            profile,
            driver: DriverPolicy::Auto,
            ..req.clone()
        };
        super::resolve_on(system, &req, catalog, today)
    };
    // A Jetson: JetPack brings the stack, and the full plan says which.
    if resolve(Profile::Full).jetson.is_some() {
        return Offer {
            profile: Profile::Full,
            why: "a Jetson, whose CUDA stack JetPack brings: the plan says which".into(),
        };
    }
    let plans = |profile: Profile| resolve(profile).status == Status::Ok;
    // A CUDA or cuDNN pin asks for CUDA: the CPU build is no answer to it.
    let cuda_pinned = req.pins.cuda.is_some() || req.pins.cudnn.is_some();
    let candidates = if cuda_pinned {
        &WITH_GPU[..3]
    } else {
        &WITH_GPU[..]
    };
    match candidates.iter().position(|p| plans(*p)) {
        Some(0) => Offer {
            profile: Profile::Full,
            why: "an NVIDIA GPU a full stack fits".into(),
        },
        Some(i) => Offer {
            profile: WITH_GPU[i],
            why: format!(
                "no {} stack fits this machine's GPU{}; {} does",
                WITH_GPU[..i]
                    .iter()
                    .map(|p| p.name())
                    .collect::<Vec<_>>()
                    .join(" or "),
                if system.nvidia_gpus().count() > 1 {
                    "s"
                } else {
                    ""
                },
                WITH_GPU[i]
            ),
        },
        None => Offer {
            profile: Profile::Full,
            why: "no profile fits this machine: the plan says why".into(),
        },
    }
}

#[cfg(test)]
mod tests;
