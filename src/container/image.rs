//! Will this driver run that image? An image's `NVIDIA_REQUIRE_CUDA`
//! (`cuda>=12.8 brand=tesla,driver>=470,driver<471 …`) against the newest CUDA the loaded driver
//! supports — the check the legacy runtime makes at start ("requirement error: unsatisfied
//! condition: cuda>=12.8, please update your driver"), made before the container is run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::ContainerError;
use crate::catalog::Catalog;
use crate::detect::Root;
use crate::model::finding::Diagnosis;
use crate::model::version::Version;
use crate::world::runner::Runner;

/// What an image asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Requirement {
    /// The whole `NVIDIA_REQUIRE_CUDA` value.
    pub raw: String,
    /// `12.8` from `cuda>=12.8`.
    pub cuda: Option<String>,
    /// The `brand=…,driver>=…` alternatives (older drivers the image accepts on those brands).
    pub alternatives: Vec<String>,
}

/// The verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fit {
    /// The image's requirement (`None`: the image states none).
    pub requirement: Option<Requirement>,
    /// The loaded driver.
    pub driver: String,
    /// The newest CUDA that driver runs (`13.0`).
    pub driver_cuda: Option<String>,
    /// Whether it runs.
    pub runs: bool,
    /// The driver the image needs, when it does not run (`580.65.06`).
    pub needs_driver: Option<String>,
    /// What to do, when it does not run.
    pub ways_out: Vec<String>,
}

/// Parses `NVIDIA_REQUIRE_CUDA`.
pub fn parse_requirement(value: &str) -> Requirement {
    let mut cuda = None;
    let mut alternatives = Vec::new();
    for word in value.split_whitespace() {
        if let Some(v) = word.strip_prefix("cuda>=") {
            cuda = Some(v.to_owned());
        } else if word.contains("driver") {
            alternatives.push(word.to_owned());
        }
    }
    Requirement {
        raw: value.to_owned(),
        cuda,
        alternatives,
    }
}

/// The `NVIDIA_REQUIRE_CUDA` of a `Config.Env` list (`["PATH=…", "NVIDIA_REQUIRE_CUDA=…"]`).
pub fn requirement_from_env(env_json: &str) -> Result<Option<Requirement>, String> {
    let env: Vec<String> = serde_json::from_str(env_json.trim())
        .map_err(|e| format!("the engine's inspect answer is not an Env list: {e}"))?;
    Ok(env
        .iter()
        .find_map(|kv| kv.strip_prefix("NVIDIA_REQUIRE_CUDA="))
        .map(parse_requirement))
}

/// Asks the engine for the image's environment (`<engine> image inspect --format
/// '{{json .Config.Env}}' IMAGE`, which Docker and Podman both answer).
pub fn inspect(
    runner: &dyn Runner,
    engine: &Path,
    image: &str,
) -> Result<Option<Requirement>, String> {
    let out = runner
        .run(
            engine,
            &[
                "image",
                "inspect",
                "--format",
                "{{json .Config.Env}}",
                image,
            ],
            Duration::from_secs(30),
        )
        .map_err(|e| e.to_string())?;
    if !out.success() {
        return Err(format!(
            "{} image inspect {image}: {} (pull the image first: the check reads the local copy)",
            engine.display(),
            out.stderr.trim()
        ));
    }
    requirement_from_env(&out.stdout)
}

/// Whether `driver` runs an image with `requirement`. `datacenter`: the GPU may use forward
/// compatibility (Data Center GPUs, select NGC-ready RTX, Jetson).
pub fn fit(
    requirement: Option<Requirement>,
    driver: &str,
    catalog: &Catalog,
    datacenter: bool,
) -> Fit {
    let driver_v = Version::parse(driver);
    let driver_cuda = driver_v
        .as_ref()
        .and_then(|d| catalog.cuda.newest_supported_by_linux_driver(d));
    let needed = requirement
        .as_ref()
        .and_then(|r| r.cuda.as_deref())
        .and_then(Version::parse);
    let runs = match (&needed, &driver_cuda) {
        (None, _) => true,
        (Some(n), Some(have)) => Version::parse(have).is_some_and(|h| h >= *n),
        (Some(_), None) => false,
    };
    let needs_driver = (!runs)
        .then(|| {
            let n = needed.as_ref()?;
            catalog
                .cuda
                .release
                .iter()
                .filter(|r| r.version.prefix(2) == n.prefix(2))
                .filter_map(|r| r.full_support_linux())
                .min()
                .map(|v| v.to_string())
        })
        .flatten();
    let mut ways_out = Vec::new();
    if !runs {
        let n = needed.as_ref().map(|n| n.to_string()).unwrap_or_default();
        ways_out.push(format!(
            "an older tag of the image, built for CUDA {} or older",
            driver_cuda.as_deref().unwrap_or("?")
        ));
        ways_out.push(format!(
            "a newer driver{} (`cudaup install --profile pytorch --driver upgrade` plans it)",
            needs_driver
                .as_deref()
                .map(|d| format!(" (≥ {d} for CUDA {n})"))
                .unwrap_or_default()
        ));
        if datacenter {
            ways_out.push("forward compatibility: this is a Data Center GPU, so the image's cuda-compat package can run CUDA newer than the driver (https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html)".to_owned());
        }
    }
    Fit {
        requirement,
        driver: driver.to_owned(),
        driver_cuda,
        runs,
        needs_driver,
        ways_out,
    }
}

/// Whether the driver loaded under `root` runs `image`: its `NVIDIA_REQUIRE_CUDA`, read through
/// the first of podman and docker on `path_entries` (`doctor --image`, `dockerfile --check`).
pub fn image_fit(
    image: &str,
    root: &Root,
    path_entries: &[PathBuf],
    runner: &dyn Runner,
    catalog: &Catalog,
) -> Result<Fit, ContainerError> {
    let engine = ["podman", "docker"]
        .iter()
        .find_map(|n| super::toolkit::on_path(path_entries, n))
        .ok_or_else(|| {
            ContainerError::NoEngine(
                "--check reads the image through docker or podman, and neither is on PATH".into(),
            )
        })?;
    let requirement = inspect(runner, &engine, image).map_err(ContainerError::Image)?;
    let driver = super::Host::probe(root)
        .driver_version
        .ok_or_else(|| ContainerError::NoDriver("no NVIDIA driver is loaded here (/proc/driver/nvidia/version): nothing to compare the image with".into()))?;
    // Forward compatibility is for Data Center GPUs (and Jetson): an H100/H200/A100-class name.
    let datacenter = root
        .list("/proc/driver/nvidia/gpus")
        .iter()
        .filter_map(|d| root.read(d.join("information")))
        .any(|t| {
            [
                "H100", "H200", "H20", "A100", "A30", "A40", "L40", "L4", "B200", "GB200", "V100",
                "T4",
            ]
            .iter()
            .any(|m| t.contains(m))
        });
    Ok(fit(requirement, &driver, catalog, datacenter))
}

/// `image-needs-newer-driver` when the driver under `root` does not run `image` (none when it
/// does), with the requirement as evidence and the ways out as the fix.
pub fn image_finding(
    image: &str,
    root: &Root,
    path_entries: &[PathBuf],
    runner: &dyn Runner,
    catalog: &Catalog,
) -> Result<Vec<Diagnosis>, ContainerError> {
    let fit = image_fit(image, root, path_entries, runner, catalog)?;
    if fit.runs {
        return Ok(Vec::new());
    }
    let need = fit
        .requirement
        .as_ref()
        .and_then(|r| r.cuda.clone())
        .unwrap_or_default();
    let d = Diagnosis::new(
        "image-needs-newer-driver",
        crate::model::finding::Severity::Error,
        format!(
            "{image} needs cuda>={need}; driver {} runs CUDA {}{}",
            fit.driver,
            fit.driver_cuda.as_deref().unwrap_or("?"),
            fit.needs_driver
                .as_deref()
                .map(|n| format!(" (cuda>={need} needs driver ≥ {n})"))
                .unwrap_or_default()
        ),
    )
    .evidence(format!(
        "NVIDIA_REQUIRE_CUDA={}",
        fit.requirement
            .as_ref()
            .map(|r| r.raw.as_str())
            .unwrap_or("")
    ))
    .fix(fit.ways_out.join("\n"));
    Ok(vec![d])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `nvidia/cuda:12.8.1-base-ubuntu24.04`'s value (its image config).
    const CUDA_12_8: &str = "cuda>=12.8 brand=unknown,driver>=470,driver<471 brand=grid,driver>=470,driver<471 brand=tesla,driver>=470,driver<471";

    #[test]
    fn the_requirement_is_read_from_the_env_list() {
        let env = format!(
            r#"["PATH=/usr/local/sbin:/usr/bin","NVIDIA_REQUIRE_CUDA={CUDA_12_8}","NV_CUDA_CUDART_VERSION=12.8.90-1"]"#
        );
        let r = requirement_from_env(&env).unwrap().unwrap();
        assert_eq!(r.cuda.as_deref(), Some("12.8"));
        assert_eq!(r.alternatives.len(), 3);
        assert_eq!(requirement_from_env(r#"["PATH=/bin"]"#).unwrap(), None);
        assert!(requirement_from_env("null x").is_err());
    }

    #[test]
    fn an_old_driver_is_told_what_it_needs() {
        let catalog = crate::catalog::Catalog::embedded();
        let r = parse_requirement(CUDA_12_8);
        let f = fit(Some(r.clone()), "550.54.15", &catalog, true);
        assert!(!f.runs);
        assert_eq!(f.driver_cuda.as_deref(), Some("12.4"));
        assert!(
            f.needs_driver
                .as_deref()
                .is_some_and(|d| d.starts_with("570")),
            "{f:?}"
        );
        assert_eq!(f.ways_out.len(), 3);
        assert!(fit(Some(r), "580.95.05", &catalog, false).runs);
        assert!(fit(None, "535.129.03", &catalog, false).runs);
    }
}
