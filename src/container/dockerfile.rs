//! `cudaup container dockerfile`: the host's plan as a Dockerfile, so "works on the host" and
//! "works in the container" are one resolver answer.
//!
//! - A plan with a CUDA toolkit (profiles `full`, `cuda-dev`) starts from NVIDIA's
//!   `nvidia/cuda:<release>[-cudnn]-devel-ubuntu24.04`, whose CUDA the host driver must run
//!   (checked as [`super::image::fit`] checks a pulled image).
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
    /// The base image's CUDA is newer than the host driver runs.
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
    let python = wanted("python")
        .and_then(|c| c.version.as_deref())
        .and_then(crate::model::version::Version::parse)
        .map(|v| v.prefix(2))
        .unwrap_or_else(|| "3.12".to_owned());
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
    if let Some(cuda) = cuda {
        let cudnn = wanted("cudnn").is_some();
        base = format!(
            "nvidia/cuda:{cuda}-{}devel-ubuntu24.04",
            if cudnn { "cudnn-" } else { "" }
        );
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
            if !fit.runs {
                return Err(DockerfileError::DriverTooOld {
                    base,
                    cuda: series,
                    driver: d.to_owned(),
                    driver_cuda: fit.driver_cuda.unwrap_or_else(|| "no CUDA".into()),
                });
            }
            notes.push(format!(
                "driver {d} runs CUDA {} ≥ {series}: the base image's CUDA runs here",
                fit.driver_cuda.unwrap_or_default()
            ));
        }
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
        let pins: Vec<String> = frameworks
            .iter()
            .map(|c| format!("{}=={}", c.name, c.version.as_deref().unwrap_or_default()))
            .collect();
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
}
