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

use crate::fetch::{FetchError, Fetcher, GivenLocation, Location};
use crate::model::request::{Profile, TorchSource};
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
    /// Its base, as configured (parsed once, shown as spelled), or the public default.
    pub base: GivenLocation,
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
    /// How long an answer took (`None`: no answer, or a directory).
    pub millis: Option<u128>,
    /// Why there was no answer, as a kind a message in any language can name.
    pub failure: Option<Failure>,
}

/// Why a route did not answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Failure {
    /// The host name does not resolve.
    Dns,
    /// Nothing listens there.
    Refused,
    /// No answer within the probe's timeout.
    Timeout,
    /// The TLS handshake or the certificate failed.
    Tls,
    /// An HTTP error other than 404 (a filtering proxy's 403).
    Status(u16),
    /// The directory does not exist.
    NoDirectory,
    /// A plain-http location, refused without `--allow-http`.
    PlainHttp,
    /// Something else (the detail says what).
    Other,
}

impl Failure {
    fn of(e: &FetchError) -> Failure {
        use crate::fetch::Cause;
        match e {
            FetchError::Exhausted { last, .. } => Failure::of(last),
            FetchError::Status { status, .. } => Failure::Status(*status),
            FetchError::InsecureHttp { .. } | FetchError::InsecureRedirect { .. } => {
                Failure::PlainHttp
            }
            FetchError::Transport { cause, .. } | FetchError::Read { cause, .. } => match cause {
                Cause::Dns { .. } => Failure::Dns,
                Cause::Refused => Failure::Refused,
                Cause::Timeout { .. } => Failure::Timeout,
                Cause::Tls(_) => Failure::Tls,
                _ => Failure::Other,
            },
            _ => Failure::Other,
        }
    }
}

/// Every route, asked.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Reach {
    /// In the order of [`routes`].
    pub answers: Vec<Answer>,
}

/// A part of an install, by what may serve it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Part {
    /// The CUDA toolkit: NVIDIA's archives, or NVIDIA's CUDA wheels on PyPI or the wheel index.
    Toolkit,
    /// PyTorch: PyTorch's index, PyPI or the wheel index.
    Pytorch,
    /// TensorFlow: PyPI or the wheel index.
    Tensorflow,
    /// JAX: PyPI or the wheel index.
    Jax,
}

impl Part {
    /// How English messages name it.
    pub fn label(self) -> &'static str {
        match self {
            Part::Toolkit => "the CUDA toolkit",
            Part::Pytorch => "PyTorch",
            Part::Tensorflow => "TensorFlow",
            Part::Jax => "JAX",
        }
    }

    /// The services that may serve it.
    pub fn services(self) -> &'static [Service] {
        match self {
            Part::Toolkit => &[Service::NvidiaRedist, Service::Pypi, Service::WheelIndex],
            Part::Pytorch => &[Service::PytorchIndex, Service::Pypi, Service::WheelIndex],
            Part::Tensorflow | Part::Jax => &[Service::Pypi, Service::WheelIndex],
        }
    }

    /// The parts `profile` installs.
    pub fn of(profile: Profile) -> &'static [Part] {
        match profile {
            Profile::Full => &[Part::Toolkit, Part::Pytorch],
            Profile::CudaDev => &[Part::Toolkit],
            Profile::Pytorch | Profile::Cpu => &[Part::Pytorch],
            Profile::Tensorflow => &[Part::Tensorflow],
            Profile::Jax => &[Part::Jax],
        }
    }

    /// Whether the settings leave this part's source to be decided here: the toolkit without
    /// `--source` or `--mirror` (which means the archives), PyTorch under `--torch-source auto`,
    /// TensorFlow and JAX without `--pypi-index` or `--index-url`.
    pub fn unpinned(self, s: &InstallSettings) -> bool {
        match self {
            Part::Toolkit => s.source.is_none() && s.mirror.is_none(),
            Part::Pytorch => s.torch_source == TorchSource::Auto,
            Part::Tensorflow | Part::Jax => s.pypi_index.is_none() && s.index_url.is_none(),
        }
    }

    /// The services an install of this part may take under `s`: a pinned source kind leaves
    /// the others out (`--source redist` or a `--mirror`: NVIDIA's archives only; `--source
    /// wheels`: the indexes; `--torch-source pytorch|pypi`: that index).
    pub fn services_under(self, s: &InstallSettings) -> Vec<Service> {
        use crate::model::request::SourceKind;
        let all = self.services().to_vec();
        let keep = |wanted: &[Service]| -> Vec<Service> {
            all.iter().copied().filter(|x| wanted.contains(x)).collect()
        };
        match self {
            Part::Toolkit => match (s.source, &s.mirror) {
                (Some(SourceKind::Redist), _) | (None, Some(_)) => keep(&[Service::NvidiaRedist]),
                (Some(SourceKind::Wheels), _) => keep(&[Service::Pypi, Service::WheelIndex]),
                (None, None) => all,
            },
            Part::Pytorch => match s.torch_source {
                TorchSource::Auto => all,
                TorchSource::Pytorch => keep(&[Service::PytorchIndex, Service::WheelIndex]),
                TorchSource::Pypi => keep(&[Service::Pypi, Service::WheelIndex]),
            },
            Part::Tensorflow | Part::Jax => all,
        }
    }
}

/// Why a profile cannot work here: the part nothing serves, and how each of its routes failed.
/// What would fix it is [`Greyed::FIX`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Greyed {
    /// The part no route answered for.
    pub part: Part,
    /// Its routes, none reached.
    pub failed: Vec<Answer>,
}

impl Greyed {
    /// What would make it work, in English (the CLI holds it in each language).
    pub const FIX: &'static str = "a mirror this machine reaches (--pypi-index URL, --torch-index URL, --mirror URL|DIR), an offline bundle (`cudaup mirror create` on a machine with network, then --index-url DIR), or a proxy (HTTPS_PROXY)";

    /// `nothing that serves PyTorch answered: PyTorch's index https://… (DNS failure …); …`.
    pub fn reason(&self) -> String {
        let failed: Vec<String> = self
            .failed
            .iter()
            .map(|a| {
                format!(
                    "{} {} ({})",
                    a.route.service.label(),
                    a.route.base,
                    a.detail
                )
            })
            .collect();
        format!(
            "nothing that serves {} answered: {}",
            self.part.label(),
            failed.join("; ")
        )
    }
}

/// PyTorch's index (also `install::python::route::TORCH_INDEX`, which sits above this layer's
/// callers in the same module tree).
const TORCH_INDEX: &str = super::python::route::TORCH_INDEX;

/// The routes the settings name: each service's configured base, else its public default.
pub fn routes(s: &InstallSettings) -> Vec<Route> {
    let route = |service, given: &Option<GivenLocation>, default: &'static str, flag: &str| Route {
        service,
        base: given
            .clone()
            .unwrap_or_else(|| GivenLocation::known(default)),
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

/// Whether an install of `s`'s profile leaves some source to be decided here (see
/// [`Part::unpinned`]): then `plan` and `install` ask [`routes_for`] first.
pub fn wanted(s: &InstallSettings) -> bool {
    Part::of(s.request.profile).iter().any(|p| p.unpinned(s))
}

/// The routes an install of `s`'s profile may take ([`Part::services_under`]), in [`routes`]'
/// order: where a source was given, that location.
pub fn routes_for(s: &InstallSettings) -> Vec<Route> {
    let services: Vec<Service> = Part::of(s.request.profile)
        .iter()
        .flat_map(|p| p.services_under(s))
        .collect();
    // A `--mirror` may be a bundle `mirror create` made, which serves every part: it is asked
    // whatever the profile.
    routes(s)
        .into_iter()
        .filter(|r| services.contains(&r.service) || r.origin == "--mirror")
        .collect()
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
    let base = r.base.as_str().trim_end_matches('/');
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
        millis: None,
        failure: None,
    };
    let answered = |t0: Instant| Answer {
        millis: Some(ms(t0.elapsed())),
        ..answer(true, format!("answered in {} ms", ms(t0.elapsed())))
    };
    match r.base.location() {
        Location::File(dir) => {
            if dir.is_dir() {
                answer(true, format!("{} is a directory", dir.display()))
            } else {
                Answer {
                    failure: Some(Failure::NoDirectory),
                    ..answer(false, format!("{} is not a directory", dir.display()))
                }
            }
        }
        Location::Http(_) => {
            let Ok(loc) = Location::parse(&page(r)) else {
                return Answer {
                    failure: Some(Failure::Other),
                    ..answer(false, format!("{} is not a URL", page(r)))
                };
            };
            let t0 = Instant::now();
            match probe.get_bytes_at_most(&loc, None, 4 << 20) {
                Ok(_) => answered(t0),
                Err(e) => match root_status(&e) {
                    Some(404 | 410) => answered(t0),
                    _ if !e.is_network()
                        && !matches!(
                            e,
                            FetchError::Cancelled
                                | FetchError::InsecureHttp { .. }
                                | FetchError::InsecureRedirect { .. }
                                | FetchError::BadLocation { .. }
                        ) =>
                    {
                        // Answered with something else than an error of the link (a page too
                        // large, not what was expected): the host is there.
                        answered(t0)
                    }
                    _ => Answer {
                        failure: Some(Failure::of(&e)),
                        ..answer(false, e.to_string())
                    },
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

    /// Whether `profile` can work here as far as the network goes: for each part it installs,
    /// some route that serves it answered (one that was not asked counts as not answering; a
    /// `--mirror` serves every part, as a bundle does).
    /// `Err` names the part and how each route asked for it failed. Whether the plan's exact build is on the route that answered is the route
    /// probe's question at install ([`super::python::probe`]); this one is asked before any plan.
    pub fn fits(&self, profile: Profile) -> Result<(), Greyed> {
        for part in Part::of(profile) {
            let asked: Vec<&Answer> = self
                .answers
                .iter()
                .filter(|a| {
                    part.services().contains(&a.route.service) || a.route.origin == "--mirror"
                })
                .collect();
            if asked.iter().any(|a| a.reached) {
                continue;
            }
            return Err(Greyed {
                part: *part,
                failed: asked.into_iter().cloned().collect(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
