//! `manifests/cuda.toml`: CUDA toolkit releases, their driver floors and build targets.

use serde::Deserialize;

use super::Date;
use crate::model::version::Version;

/// The whole cuda.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaManifest {
    /// Format version of the file.
    pub schema_version: u32,
    /// Toolkit releases, newest first.
    pub release: Vec<CudaRelease>,
    /// Minor-version-compatibility floors per major.
    pub major: Vec<CudaMajor>,
    /// Build targets per major.minor series.
    pub series: Vec<CudaSeries>,
    /// Machine architectures and NVIDIA's names for them (redist platform, repository
    /// directory, `targets/` directory, wheel tag).
    #[serde(default)]
    pub platform: Vec<Platform>,
    /// Which GPUs run SASS built for another compute capability (NVIDIA's binary
    /// compatibility, per family of compute capabilities).
    #[serde(default)]
    pub family: Vec<SassFamily>,
}

/// The platform rows that stand for a Linux machine architecture.
pub const DEFAULT_PLATFORM: &str = "linux-x86_64";

/// A machine architecture as NVIDIA names it in each place cudaup reads or writes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    /// The redistrib JSON platform key (`linux-sbsa`): the key every platform-specific row
    /// of the catalog uses.
    pub name: String,
    /// The machine architecture as `uname -m` and Rust name it (`aarch64`).
    pub arch: String,
    /// The directory of NVIDIA's CUDA repositories (`ubuntu2404/sbsa`).
    pub repo: String,
    /// The toolkit's `targets/<dir>` (`sbsa-linux`).
    pub targets: String,
    /// The dpkg architecture (`arm64`).
    pub debian_arch: String,
    /// The suffix of its manylinux wheel tags (`aarch64`).
    pub wheel_arch: String,
    /// Where the row comes from.
    pub source: String,
}

/// Compute capabilities of which SASS built for one runs on those after it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SassFamily {
    /// The family's major (`12`).
    pub major: u32,
    /// Its compute capabilities, oldest first: SASS for one runs on itself and those after it.
    pub compute_capabilities: Vec<Version>,
    /// Where the row comes from.
    pub source: String,
}

/// One toolkit release (`12.8.1`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaRelease {
    /// Full version.
    pub version: Version,
    /// NVIDIA's name for it (`12.8 Update 1`, `13.4 GA` for 13.4.1). Never derived from the
    /// version: from 13.4 the third digit is a build number, not an update count.
    pub label: Option<String>,
    /// The Linux driver it ships with: the floor without minor-version compatibility. Absent
    /// when the toolkit bundles no driver (Linux, from 13.4): the major's minor-version floor
    /// applies, and `recommended_branch` says what NVIDIA advises for the release's new features.
    pub driver_linux: Option<Version>,
    /// The Windows driver it ships with, where NVIDIA lists one.
    pub driver_windows: Option<Version>,
    /// For a release without a bundled driver: the branch NVIDIA released with it for its new
    /// features (R615 for 13.4).
    pub recommended_branch: Option<u32>,
    /// For a release without a bundled driver: a driver release NVIDIA publishes as running it
    /// natively (its driver redist carries a CUDA compat package of this version: 620.70.06's is
    /// `cuda13.5`). From it on the release needs no minor-version compatibility; below it the
    /// catalog does not claim native support.
    pub native_driver_linux: Option<Version>,
    /// NVIDIA's release date (`release_date` of the redistrib JSON).
    pub date: Option<Date>,
    /// Redistributable platforms with a `cuda_nvcc` archive (`linux-x86_64`, `linux-sbsa`, ...).
    #[serde(default)]
    pub platforms: Vec<String>,
    /// When `manifests update` derived this row from `source`; absent for hand-curated rows.
    pub derived: Option<Date>,
    /// Where the row comes from.
    pub source: String,
}

impl CudaRelease {
    /// Whether NVIDIA publishes this release for `platform`: its redist platforms list it. A row
    /// without a list is one read before platforms were recorded, and stands for Linux x86_64
    /// only; another platform is never assumed.
    pub fn on_platform(&self, platform: &str) -> bool {
        if self.platforms.is_empty() {
            platform == DEFAULT_PLATFORM
        } else {
            self.platforms.iter().any(|p| p == platform)
        }
    }

    /// NVIDIA's name, or the version where the label is not sourced.
    pub fn name(&self) -> String {
        self.label
            .clone()
            .unwrap_or_else(|| format!("CUDA {}", self.version))
    }

    /// The Linux driver at which the release is fully supported: its bundled driver, else the
    /// driver release NVIDIA publishes as running it natively, else the first release of the
    /// branch NVIDIA recommends with it.
    pub fn full_support_linux(&self) -> Option<Version> {
        self.driver_linux
            .clone()
            .or_else(|| self.native_driver_linux.clone())
            .or_else(|| {
                self.recommended_branch
                    .and_then(|b| Version::parse(&b.to_string()))
            })
    }
}

/// The driver floor for a whole CUDA major under minor-version compatibility.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaMajor {
    /// CUDA major version.
    pub major: u32,
    /// Linux floor.
    pub driver_linux: Version,
    /// Windows floor.
    pub driver_windows: Option<Version>,
    /// Where the row comes from.
    pub source: String,
}

/// What one major.minor series can compile for.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaSeries {
    /// `12.8`.
    pub version: Version,
    /// Lowest compute capability it compiles for offline.
    pub sm_min: Version,
    /// Highest compute capability it compiles for.
    pub sm_max: Version,
    /// Compute capabilities inside `sm_min..=sm_max` it cannot compile for (sm_107 before 13.4).
    #[serde(default)]
    pub sm_excluded: Vec<Version>,
    /// Every compute capability its compiler generates machine code for, as the compiler itself
    /// lists it (`manifests update` reads it from the series' nvcc wheel). When present it is
    /// the whole truth: a capability inside `sm_min..=sm_max` but not here is not built for.
    #[serde(default)]
    pub sass: Vec<Version>,
    /// The virtual architectures (`compute_NN`) it emits PTX for.
    #[serde(default)]
    pub ptx: Vec<Version>,
    /// The compiler build that confirmed `sass` (`nvidia-cuda-nvcc-cu12 12.8.93`).
    pub compiler: Option<String>,
    /// When `manifests update` read the compiler; absent for hand-curated rows.
    pub derived: Option<Date>,
    /// Where the row comes from.
    pub source: String,
}

/// The first series NVIDIA publishes a compiler wheel for (`nvidia-cuda-nvcc-cu11` starts at
/// 11.7.99: https://pypi.org/project/nvidia-cuda-nvcc-cu11/#history). From it on, every series'
/// targets must be confirmed by its compiler; older series keep their curated ranges.
pub const FIRST_COMPILER_SERIES: (u32, u32) = (11, 7);

impl CudaSeries {
    /// Whether the series compiles for compute capability `cc` offline: in its compiler's list
    /// where one was read, else inside its curated range and not excluded.
    pub fn builds_for(&self, cc: &Version) -> bool {
        if !self.sass.is_empty() {
            return self.sass.iter().any(|s| s == cc);
        }
        &self.sm_min <= cc && cc <= &self.sm_max && !self.sm_excluded.iter().any(|x| x == cc)
    }

    /// Whether a compiler must confirm this series' targets (see [`FIRST_COMPILER_SERIES`]).
    pub fn needs_compiler(&self) -> bool {
        (self.version.major(), self.version.minor()) >= FIRST_COMPILER_SERIES
    }

    /// `sm_50 … sm_120` (the compiler's list) or `sm_50 to sm_120` (the curated range).
    pub fn describe(&self) -> String {
        let sm = |v: &Version| format!("sm_{}{}", v.major(), v.minor());
        if !self.sass.is_empty() {
            return self.sass.iter().map(sm).collect::<Vec<_>>().join(" ");
        }
        let mut s = format!("{} to {}", sm(&self.sm_min), sm(&self.sm_max));
        if !self.sm_excluded.is_empty() {
            s.push_str(" except ");
            s.push_str(
                &self
                    .sm_excluded
                    .iter()
                    .map(sm)
                    .collect::<Vec<_>>()
                    .join(", "),
            );
        }
        s
    }
}

impl CudaManifest {
    /// The platform row of a Linux machine architecture (`aarch64` → `linux-sbsa`).
    pub fn platform_for_arch(&self, arch: &str) -> Option<&Platform> {
        self.platform.iter().find(|p| p.arch == arch)
    }

    /// The platform row named `name` (`linux-sbsa`).
    pub fn platform(&self, name: &str) -> Option<&Platform> {
        self.platform.iter().find(|p| p.name == name)
    }

    /// Whether SASS built for `built` runs on a GPU of compute capability `gpu`: the same
    /// capability, or a later one of the same [`SassFamily`]. Capabilities no family row lists
    /// run only their own SASS.
    pub fn sass_runs_on(&self, built: &Version, gpu: &Version) -> bool {
        if built == gpu {
            return true;
        }
        self.family.iter().any(|f| {
            let pos = |v: &Version| f.compute_capabilities.iter().position(|c| c == v);
            matches!((pos(built), pos(gpu)), (Some(b), Some(g)) if b <= g)
        })
    }

    /// The newest CUDA (major.minor) whose release driver is at most `driver` on Linux: what the
    /// driver reports as its CUDA version when nothing better can be asked.
    pub fn newest_supported_by_linux_driver(&self, driver: &Version) -> Option<String> {
        self.release
            .iter()
            .filter(|r| r.full_support_linux().is_some_and(|d| &d <= driver))
            .max_by(|a, b| a.version.cmp(&b.version))
            .map(|r| r.version.prefix(2))
    }

    /// The release `version` names when it is one (`13.0.2`), else the newest release of its
    /// series (`13.0.88`, a component version found on disk → `13.0.3`).
    pub fn newest_of_series(&self, version: &Version) -> Option<&Version> {
        if let Some(r) = self.release.iter().find(|r| &r.version == version) {
            return Some(&r.version);
        }
        self.release
            .iter()
            .map(|r| &r.version)
            .filter(|v| v.prefix(2) == version.prefix(2))
            .max()
    }

    /// The series whose compute-capability range holds `cc`, oldest first.
    pub fn series_building_for(&self, cc: &Version) -> Vec<&CudaSeries> {
        let mut s: Vec<_> = self.series.iter().filter(|s| s.builds_for(cc)).collect();
        s.sort_by(|a, b| a.version.cmp(&b.version));
        s
    }
}

#[cfg(test)]
mod tests {
    use crate::catalog::Catalog;
    use crate::model::version::Version;

    #[test]
    fn driver_to_newest_cuda_matches_nvidia_smi() {
        let c = Catalog::embedded().cuda;
        let v = |s: &str| Version::parse(s).unwrap();
        // nvidia-smi on the H200 machine: driver 580.159.04, "CUDA Version: 13.0".
        assert_eq!(
            c.newest_supported_by_linux_driver(&v("580.159.04"))
                .as_deref(),
            Some("13.0")
        );
        assert_eq!(
            c.newest_supported_by_linux_driver(&v("535.129.03"))
                .as_deref(),
            Some("12.2")
        );
        assert_eq!(
            c.newest_supported_by_linux_driver(&v("570.124.06"))
                .as_deref(),
            Some("12.8")
        );
        assert_eq!(c.newest_supported_by_linux_driver(&v("440.33")), None);
    }

    #[test]
    fn series_for_pascal_stops_at_12_9() {
        let c = Catalog::embedded().cuda;
        let s = c.series_building_for(&Version::parse("6.1").unwrap());
        assert_eq!(s.first().unwrap().version.prefix(2), "11.0");
        assert_eq!(s.last().unwrap().version.prefix(2), "12.9");
    }
}
