//! `cudaup container dockerfile`: the host's plan as a Dockerfile, so "works on the host" and
//! "works in the container" are one resolver answer.
//!
//! - A plan with a CUDA toolkit (profiles `full`, `cuda-dev`) starts from NVIDIA's
//!   `nvidia/cuda:<release>[-cudnn]-devel-ubuntu24.04`, whose CUDA the host driver must run
//!   natively: inside a container the image's `NVIDIA_REQUIRE_CUDA` is checked against the host
//!   driver (as [`super::image::fit`] checks a pulled image), so the container plan is its own.
//!   Where the host plan uses minor-version compatibility (an R580 driver, CUDA 13.0, running a
//!   CUDA 13.2 toolkit), the image is the newest release the driver runs natively (13.0.x); the
//!   framework wheels bring their own CUDA runtime, which runs on that driver by the same
//!   minor-version compatibility. The reason is written into the Dockerfile.
//! - A framework-only plan (`pytorch`, `tensorflow`) starts from `python:<major.minor>-slim`:
//!   the wheels carry their CUDA runtime, the driver comes from the host through CDI.
//!
//! Either way the framework is installed with the plan's exact pins from the plan's index, and
//! the pins are kept as pip constraints (`PIP_CONSTRAINT`) so a later `pip install` in the image
//! cannot move them.

use crate::catalog::Catalog;
use crate::model::plan::{Action, Plan, Status};

/// A rendered Dockerfile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dockerfile {
    /// The text.
    pub text: String,
    /// The base image.
    pub base: String,
    /// Lines for the person (the driver check, what the image needs at run time).
    pub notes: Vec<String>,
}

/// Why no Dockerfile.
#[derive(Debug, thiserror::Error)]
pub enum DockerfileError {
    /// The plan found no stack.
    #[error("the plan found no compatible stack ({0}): `cudaup plan` says why")]
    NoStack(String),
    /// A value from the plan (the catalog, an index) is not what its kind may be: it would be
    /// read by the shell of a `RUN` line.
    #[error("the plan's {what} `{value}` is not a valid {what}: refusing to write it into a Dockerfile (`cudaup manifests check` names the catalog row)")]
    Unsafe {
        /// What kind of value (version, name, index URL, image).
        what: &'static str,
        /// The value, escaped.
        value: String,
    },
    /// The base image's CUDA is newer than the host driver runs, and not of the driver's
    /// CUDA major (no minor-version compatibility to fall back on).
    #[error("{base} needs CUDA {cuda}, newer than driver {driver} runs ({driver_cuda}): pin an older CUDA (`--cuda {driver_cuda}`) or upgrade the driver")]
    DriverTooOld {
        /// Base image.
        base: String,
        /// Its CUDA.
        cuda: String,
        /// Host driver.
        driver: String,
        /// What that driver runs.
        driver_cuda: String,
    },
}

fn checked<'v>(
    value: &'v str,
    what: &'static str,
    ok: fn(&str) -> bool,
) -> Result<&'v str, DockerfileError> {
    if ok(value) {
        Ok(value)
    } else {
        Err(DockerfileError::Unsafe {
            what,
            value: value.escape_default().to_string(),
        })
    }
}

/// Renders `plan`. `driver` is the host's loaded driver (`None`: not checked).
pub fn render(
    plan: &Plan,
    driver: Option<&str>,
    catalog: &Catalog,
) -> Result<Dockerfile, DockerfileError> {
    if plan.status != Status::Ok {
        return Err(DockerfileError::NoStack(plan.reasons.join("; ")));
    }
    let wanted = |name: &str| {
        plan.component(name)
            .filter(|c| !matches!(c.action, Action::Skip | Action::Manual) && c.version.is_some())
    };
    use crate::model::safe;
    let python = wanted("python")
        .and_then(|c| c.version.as_deref())
        .and_then(crate::model::version::Version::parse)
        .map(|v| v.prefix(2))
        .unwrap_or_else(|| "3.12".to_owned());
    checked(&python, "version", safe::is_version)?;
    let mut notes = Vec::new();
    let mut lines: Vec<String> = vec![format!(
        "# Made by `cudaup container dockerfile` from the plan for this machine (profile {}, catalog {}).",
        plan.profile.name(),
        plan.catalog.date
    )];
    let base;
    // A kept toolkit's version is nvcc's (`13.0.88`); the image is tagged by release.
    let cuda = wanted("cuda").and_then(|c| c.version.clone()).map(|v| {
        crate::model::version::Version::parse(&v)
            .and_then(|p| catalog.cuda.newest_of_series(&p).map(|r| r.to_string()))
            .unwrap_or(v)
    });
    let frameworks: Vec<&crate::model::plan::Component> =
        ["torch", "torchvision", "torchaudio", "tensorflow"]
            .iter()
            .filter_map(|n| wanted(n))
            .collect();
    if let Some(mut cuda) = cuda {
        checked(&cuda, "version", safe::is_version)?;
        let cudnn = wanted("cudnn").is_some();
        let image = |cuda: &str| {
            format!(
                "nvidia/cuda:{cuda}-{}devel-ubuntu24.04",
                if cudnn { "cudnn-" } else { "" }
            )
        };
        if let Some(d) = driver {
            let series = crate::model::version::Version::parse(&cuda)
                .map(|v| v.prefix(2))
                .unwrap_or_default();
            let fit = super::image::fit(
                Some(super::image::parse_requirement(&format!("cuda>={series}"))),
                d,
                catalog,
                false,
            );
            let driver_cuda = fit
                .driver_cuda
                .as_deref()
                .and_then(crate::model::version::Version::parse);
            let wanted_v = crate::model::version::Version::parse(&series);
            if fit.runs {
                notes.push(format!(
                    "driver {d} runs CUDA {} ≥ {series}: the base image's CUDA runs here",
                    fit.driver_cuda.unwrap_or_default()
                ));
            } else if let (Some(have), Some(want), Some(native)) = (
                driver_cuda.as_ref(),
                wanted_v.as_ref(),
                driver_cuda
                    .as_ref()
                    .and_then(|h| catalog.cuda.newest_of_series(h)),
            ) {
                if have.major() != want.major() {
                    return Err(DockerfileError::DriverTooOld {
                        base: image(&cuda),
                        cuda: series,
                        driver: d.to_owned(),
                        driver_cuda: have.to_string(),
                    });
                }
                // The host runs CUDA `series` by minor-version compatibility; an image saying
                // `cuda>=series` would be refused at start. The newest release the driver runs
                // natively instead, and the reason in the file.
                let why = format!(
                    "the host plan's CUDA {cuda} runs on driver {d} (CUDA {have}) through minor-version compatibility, but a container's NVIDIA_REQUIRE_CUDA is checked against the driver: the base image is CUDA {native}, the newest release this driver runs natively; the framework wheels bring their own CUDA {want} runtime, which runs on it by the same minor-version compatibility"
                );
                lines.push(format!("# {why}."));
                notes.push(why);
                cuda = native.to_string();
            } else {
                return Err(DockerfileError::DriverTooOld {
                    base: image(&cuda),
                    cuda: series,
                    driver: d.to_owned(),
                    driver_cuda: fit.driver_cuda.unwrap_or_else(|| "no CUDA".into()),
                });
            }
        }
        base = image(&cuda);
        checked(&base, "image", safe::is_image)?;
        lines.push(format!("FROM {base}"));
        if !frameworks.is_empty() {
            lines.push(
                "RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv && rm -rf /var/lib/apt/lists/*"
                    .to_owned(),
            );
            lines.push("RUN python3 -m venv /opt/venv".to_owned());
            lines.push("ENV PATH=/opt/venv/bin:$PATH".to_owned());
        }
    } else {
        base = format!("python:{python}-slim");
        lines.push(format!("FROM {base}"));
        notes.push("the framework's wheels bring their CUDA runtime; the driver comes from the host (CDI or the toolkit's runtime)".to_owned());
    }
    lines.push(
        "ENV NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility".to_owned(),
    );

    if !frameworks.is_empty() {
        let pins = frameworks
            .iter()
            .map(|c| {
                Ok(format!(
                    "{}=={}",
                    checked(&c.name, "name", safe::is_name)?,
                    checked(
                        c.version.as_deref().unwrap_or_default(),
                        "version",
                        safe::is_version
                    )?
                ))
            })
            .collect::<Result<Vec<String>, DockerfileError>>()?;
        lines.push(format!(
            "RUN printf '{}\\n' > /etc/cudaup-constraints.txt",
            pins.join("\\n")
        ));
        lines.push("ENV PIP_CONSTRAINT=/etc/cudaup-constraints.txt".to_owned());
        // One install per index: PyTorch's own index serves torch, PyPI the rest.
        let mut by_index: Vec<(String, Vec<String>)> = Vec::new();
        for (c, pin) in frameworks.iter().zip(&pins) {
            let index = c
                .index_url
                .clone()
                .unwrap_or_else(|| "https://pypi.org/simple".into());
            checked(&index, "index URL", safe::is_index_url)?;
            match by_index.iter_mut().find(|(i, _)| *i == index) {
                Some((_, p)) => p.push(pin.clone()),
                None => by_index.push((index, vec![pin.clone()])),
            }
        }
        for (index, pins) in by_index {
            let extra = if index.contains("pypi.org") {
                String::new()
            } else {
                " --extra-index-url https://pypi.org/simple".to_owned()
            };
            lines.push(format!(
                "RUN pip install --no-cache-dir --index-url {index}{extra} {}",
                pins.join(" ")
            ));
        }
    }
    lines.push(String::new());
    Ok(Dockerfile {
        text: lines.join("\n"),
        base,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::plan::Component;

    fn plan(components: Vec<Component>) -> Plan {
        let catalog = Catalog::embedded();
        let system: crate::model::system::System =
            serde_json::from_str(include_str!("../../tests/fixtures/h200-detect.json")).unwrap();
        let mut p = crate::resolve::resolve(
            &system,
            &crate::model::request::Request::default(),
            &catalog,
        );
        p.status = Status::Ok;
        p.components = components;
        p
    }

    fn c(name: &str, version: &str, index: Option<&str>) -> Component {
        let mut c = Component::new(
            name,
            Action::Install,
            Some(version.to_owned()),
            "test".to_owned(),
        );
        c.index_url = index.map(str::to_owned);
        c
    }

    #[test]
    fn a_framework_plan_gets_a_slim_base_and_its_pins() {
        let p = plan(vec![
            c("python", "3.12.3", None),
            c(
                "torch",
                "2.15.0",
                Some("https://download.pytorch.org/whl/cu132"),
            ),
            c("torchvision", "0.29.2", Some("https://pypi.org/simple")),
        ]);
        let d = render(&p, Some("580.159.04"), &Catalog::embedded()).unwrap();
        assert_eq!(d.base, "python:3.12-slim");
        assert!(d.text.contains("RUN pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cu132 --extra-index-url https://pypi.org/simple torch==2.15.0\n"), "{}", d.text);
        assert!(d.text.contains("RUN pip install --no-cache-dir --index-url https://pypi.org/simple torchvision==0.29.2"));
        assert!(d
            .text
            .contains("torch==2.15.0\\ntorchvision==0.29.2\\n' > /etc/cudaup-constraints.txt"));
    }

    #[test]
    fn a_toolkit_plan_gets_nvidias_image_if_the_driver_runs_it() {
        let p = plan(vec![c("cuda", "13.0.2", None), c("cudnn", "9.17.0", None)]);
        let d = render(&p, Some("580.159.04"), &Catalog::embedded()).unwrap();
        assert_eq!(d.base, "nvidia/cuda:13.0.2-cudnn-devel-ubuntu24.04");
        let err = render(&p, Some("550.54.15"), &Catalog::embedded()).unwrap_err();
        assert!(matches!(err, DockerfileError::DriverTooOld { .. }), "{err}");
    }

    #[test]
    fn an_rtx_4090_on_r580_gets_an_image_its_driver_runs_natively() {
        // The host plan: CUDA 13.2.2 and torch cu132 on 580.95.05 (CUDA 13.0), by minor-version
        // compatibility.
        let p = plan(vec![
            c("python", "3.12.3", None),
            c("cuda", "13.2.2", None),
            c("cudnn", "9.28.1", None),
            c(
                "torch",
                "2.15.0",
                Some("https://download.pytorch.org/whl/cu132"),
            ),
        ]);
        let catalog = Catalog::embedded();
        let d = render(&p, Some("580.95.05"), &catalog).unwrap();
        let native = catalog
            .cuda
            .newest_of_series(&crate::model::version::Version::parse("13.0").unwrap())
            .unwrap()
            .to_string();
        assert!(native.starts_with("13.0."), "{native}");
        assert_eq!(
            d.base,
            format!("nvidia/cuda:{native}-cudnn-devel-ubuntu24.04")
        );
        assert!(d.text.contains("# the host plan's CUDA 13.2.2 runs on driver 580.95.05 (CUDA 13.0) through minor-version compatibility"), "{}", d.text);
        // The image the file starts from is one this driver starts.
        let fit = crate::container::image::fit(
            Some(crate::container::image::parse_requirement("cuda>=13.0")),
            "580.95.05",
            &catalog,
            false,
        );
        assert!(fit.runs);
        // The framework stays the host plan's.
        assert!(d.text.contains("torch==2.15.0"), "{}", d.text);
        // A driver of an older CUDA major has no minor-version compatibility to offer.
        let err = render(&p, Some("535.183.01"), &catalog).unwrap_err();
        assert!(matches!(err, DockerfileError::DriverTooOld { .. }), "{err}");
    }

    #[test]
    fn catalog_or_index_values_that_a_shell_would_read_are_refused() {
        let catalog = Catalog::embedded();
        for (bad, what) in [
            (
                c("torchvision", "0.29.2'; touch /tmp/pwned; '", None),
                "version",
            ),
            (
                c(
                    "torch",
                    "2.15.0",
                    Some("https://x/simple; touch /tmp/pwned"),
                ),
                "index URL",
            ),
            (c("torch", "2.15.0", Some("https://x/$(id)")), "index URL"),
        ] {
            let p = plan(vec![c("python", "3.12.3", None), bad]);
            match render(&p, None, &catalog) {
                Err(DockerfileError::Unsafe { what: w, .. }) => assert_eq!(w, what),
                other => panic!("{what}: {other:?}"),
            }
        }
    }
}
