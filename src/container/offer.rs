//! The wizard's container step: after an install, whether `container setup` can be offered on
//! this machine, and what it would change. Decided from the same survey and setup plan as
//! `cudaup container setup`, so the offer never promises what setup would refuse.

use std::path::PathBuf;

use super::choice::Path as Way;
use super::setup::{self, Options, Plan};
use super::Survey;

/// What the wizard can offer.
#[derive(Debug, Clone)]
pub enum Offer {
    /// No container engine on `PATH`: nothing to offer, nothing to say.
    NoEngine,
    /// Every engine that can reach the GPUs already does.
    SetUp {
        /// The engines (`rootless Podman 4.3.1`).
        engines: Vec<String>,
    },
    /// Setup would refuse (an engine needs the toolkit, a file it cannot take, no engine that
    /// can use the GPUs): why, and that `cudaup container setup` says more.
    Refused {
        /// Setup's own message.
        reason: String,
    },
    /// Setting up needs root for these files: `sudo cudaup container setup` does it.
    NeedsRoot {
        /// The engines.
        engines: Vec<String>,
        /// The files only root may write.
        paths: Vec<PathBuf>,
    },
    /// Setup can run now, as this user, writing `plan`'s files.
    Ready {
        /// The engines.
        engines: Vec<String>,
        /// What setup writes (and the commands it would print).
        plan: Box<Plan>,
    },
}

/// The offer for the host `survey` describes, with setup's `opts` (no toolkit install: that
/// stays `container setup --toolkit`'s, which needs root).
pub fn offer(survey: &Survey, opts: &Options<'_>) -> Offer {
    if survey.engines.is_empty() {
        return Offer::NoEngine;
    }
    let engines: Vec<String> = survey
        .engines
        .iter()
        .zip(&survey.choices)
        .filter(|(e, c)| c.path != Way::None && opts.only.is_none_or(|k| e.kind == k))
        .map(|(e, _)| e.label())
        .collect();
    let opts = Options {
        install_toolkit: false,
        ..opts.clone()
    };
    let plan = match setup::plan(survey, &opts) {
        Ok(plan) => plan,
        Err(e) => {
            return Offer::Refused {
                reason: e.to_string(),
            }
        }
    };
    if plan.edits.is_empty() && plan.commands.is_empty() {
        return Offer::SetUp { engines };
    }
    let paths: Vec<PathBuf> = plan
        .root_needed(false)
        .into_iter()
        .map(|p| p.to_path_buf())
        .collect();
    if !paths.is_empty() {
        return Offer::NeedsRoot { engines, paths };
    }
    Offer::Ready {
        engines,
        plan: Box::new(plan),
    }
}

// Uses the Linux driver picture of `cdi::generate::tests` (containers are Linux-only).
#[cfg(all(test, unix))]
mod tests;
