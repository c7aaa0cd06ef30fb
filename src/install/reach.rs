//! Reachability, asked once up front: every place an install may download from (PyTorch's
//! index, NVIDIA's redistributables, PyPI, and the mirrors and indexes the settings name) is
//! asked for one small page at the same time, with the probe's short timeout
//! (`CUDAUP_PROBE_TIMEOUT`), before anyone chooses. What answers decides what can work here:
//! [`Reach::fits`] says, per profile, whether some route for each of its parts answered, and when
//! none did, why and what would fix it — so the wizard offers only what can work, and shows the
//! rest greyed with the reason.
//!
//! A host that answers with a page, or with 404 (it is there, the page is not), is reached; a
//! refused connection, a DNS failure, a timeout or another HTTP error (a filtering proxy's 403)
//! is not. A directory is reached when it exists.

use std::time::{Duration, Instant};

use crate::fetch::{FetchError, Fetcher, Location};
use crate::model::request::Profile;
use crate::settings::InstallSettings;
use crate::sources::{pypi, redist};

/// What a route serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Service {
    /// PyTorch's wheel index or a copy of it: every torch build.
    PytorchIndex,
    /// NVIDIA's redistributable archives or a mirror of their layout: the toolkit.
    NvidiaRedist,
    /// PyPI or a mirror: TensorFlow, JAX, PyPI's torch, NVIDIA's CUDA wheels, dependencies.
    Pypi,
    /// The index `--index-url` names (NVIDIA's wheels, or an offline bundle).
    WheelIndex,
}

impl Service {
    /// How messages name it.
    pub fn label(self) -> &'static str {
        match self {
            Service::PytorchIndex => "PyTorch's index",
            Service::NvidiaRedist => "NVIDIA's redistributables",
            Service::Pypi => "PyPI",
            Service::WheelIndex => "the wheel index",
        }
    }
}

/// One place to ask.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Route {
    /// What it serves.
    pub service: Service,
    /// Its base, as configured.
    pub base: String,
    /// `default`, or the setting that named it (`--pypi-index`).
    pub origin: String,
}

/// How one route answered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Answer {
    /// The route.
    #[serde(flatten)]
    pub route: Route,
    /// Whether it answered.
    pub reached: bool,
    /// How: `answered in 120 ms`, or why not.
    pub detail: String,
}

/// Every route, asked.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Reach {
    /// In the order of [`routes`].
    pub answers: Vec<Answer>,
}

/// Why a profile cannot work here, and what would make it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Greyed {
    /// What did not answer.
    pub reason: String,
    /// What to do about it.
    pub fix: String,
}

/// PyTorch's index (also `install::python::route::TORCH_INDEX`, which sits above this layer's
/// callers in the same module tree).
const TORCH_INDEX: &str = super::python::route::TORCH_INDEX;

/// The routes the settings name: each service's configured base, else its public default.
pub fn routes(s: &InstallSettings) -> Vec<Route> {
    let route = |service, given: &Option<String>, default: &str, flag: &str| Route {
        service,
        base: given.clone().unwrap_or_else(|| default.to_owned()),
        origin: if given.is_some() {
            flag.to_owned()
        } else {
            "default".to_owned()
        },
    };
    let mut out = vec![
        route(
            Service::PytorchIndex,
            &s.torch_index,
            TORCH_INDEX,
            "--torch-index",
        ),
        route(
            Service::Pypi,
            &s.pypi_index,
            pypi::PYPI_SIMPLE,
            "--pypi-index",
        ),
        route(
            Service::NvidiaRedist,
            &s.mirror,
            redist::NVIDIA_BASE,
            "--mirror",
        ),
    ];
    if let Some(index) = &s.index_url {
        out.push(Route {
            service: Service::WheelIndex,
            base: index.clone(),
            origin: "--index-url".into(),
        });
    }
    out
}

/// Asks every route at once with `probe` (one attempt, the probe's timeouts).
pub fn probe(probe: &Fetcher, routes: &[Route]) -> Reach {
    let answers = std::thread::scope(|s| {
        let handles: Vec<_> = routes
            .iter()
            .map(|r| s.spawn(move || ask(probe, r)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a reachability probe panicked"))
            .collect()
    });
    Reach { answers }
}

/// The small page asked of each service: PyPI's `pip` project page (its root lists every
/// project), PyTorch's `torch` page, NVIDIA's redist listing.
fn page(r: &Route) -> String {
    let base = r.base.trim_end_matches('/');
    match r.service {
        Service::Pypi | Service::WheelIndex => format!("{base}/pip/"),
        Service::PytorchIndex => format!("{base}/torch/"),
        Service::NvidiaRedist => format!("{base}/compute/cuda/redist/"),
    }
}

fn ask(probe: &Fetcher, r: &Route) -> Answer {
    let answer = |reached: bool, detail: String| Answer {
        route: r.clone(),
        reached,
        detail,
    };
    match Location::parse(&r.base) {
        Err(e) => answer(false, e.to_string()),
        Ok(Location::File(dir)) => {
            if dir.is_dir() {
                answer(true, format!("{} is a directory", dir.display()))
            } else {
                answer(false, format!("{} is not a directory", dir.display()))
            }
        }
        Ok(Location::Http(_)) => {
            let Ok(loc) = Location::parse(&page(r)) else {
                return answer(false, format!("{} is not a URL", page(r)));
            };
            let t0 = Instant::now();
            let took = |t0: Instant| format!("answered in {} ms", ms(t0.elapsed()));
            match probe.get_bytes_at_most(&loc, None, 4 << 20) {
                Ok(_) => answer(true, took(t0)),
                Err(e) => match root_status(&e) {
                    Some(404 | 410) => answer(true, took(t0)),
                    _ if !e.is_network() && !matches!(e, FetchError::Cancelled) => {
                        // Answered with something else than an error of the link (a page too
                        // large, not what was expected): the host is there.
                        answer(true, took(t0))
                    }
                    _ => answer(false, e.to_string()),
                },
            }
        }
    }
}

fn root_status(e: &FetchError) -> Option<u16> {
    match e {
        FetchError::Exhausted { last, .. } => root_status(last),
        FetchError::Status { status, .. } => Some(*status),
        _ => None,
    }
}

fn ms(d: Duration) -> u128 {
    d.as_millis()
}

impl Reach {
    /// Whether some route of `service` answered.
    pub fn reaches(&self, service: Service) -> bool {
        self.answers
            .iter()
            .any(|a| a.route.service == service && a.reached)
    }

    /// `PyTorch's index https://download.pytorch.org/whl (DNS failure …)` for each route of
    /// `service` that did not answer.
    fn failures(&self, service: Service) -> Vec<String> {
        self.answers
            .iter()
            .filter(|a| a.route.service == service && !a.reached)
            .map(|a| format!("{} {} ({})", service.label(), a.route.base, a.detail))
            .collect()
    }

    /// Whether `profile` can work here as far as the network goes: for each part it installs,
    /// some route that serves it answered. `Err` says what did not and what would fix it.
    /// Whether the plan's exact build is on the route that answered is the route probe's
    /// question at install ([`super::python::probe`]); this one is asked before any plan.
    pub fn fits(&self, profile: Profile) -> Result<(), Greyed> {
        let torch = [Service::PytorchIndex, Service::Pypi, Service::WheelIndex];
        let pypi = [Service::Pypi, Service::WheelIndex];
        // The toolkit: NVIDIA's archives, or NVIDIA's CUDA wheels on PyPI or the wheel index.
        let toolkit = [Service::NvidiaRedist, Service::Pypi, Service::WheelIndex];
        let mut parts: Vec<(&str, &[Service])> = Vec::new();
        match profile {
            Profile::Full => {
                parts.push(("the CUDA toolkit", &toolkit));
                parts.push(("PyTorch", &torch));
            }
            Profile::CudaDev => parts.push(("the CUDA toolkit", &toolkit)),
            Profile::Pytorch | Profile::Cpu => parts.push(("PyTorch", &torch)),
            Profile::Tensorflow => parts.push(("TensorFlow", &pypi)),
            Profile::Jax => parts.push(("JAX", &pypi)),
        }
        for (what, services) in parts {
            if services.iter().any(|s| self.reaches(*s)) {
                continue;
            }
            let failed: Vec<String> = services.iter().flat_map(|s| self.failures(*s)).collect();
            return Err(Greyed {
                reason: format!(
                    "nothing that serves {what} answered: {}",
                    failed.join("; ")
                ),
                fix: "a mirror this machine reaches (--pypi-index URL, --torch-index URL, --mirror URL|DIR), an offline bundle (`cudaup mirror create` on a machine with network, then --index-url DIR), or a proxy (HTTPS_PROXY)".into(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
