//! `manifests/cuda.toml`: CUDA toolkit releases, their driver floors and build targets.

use serde::Deserialize;

use crate::version::Version;

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
}

/// One toolkit release (`12.8.1`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaRelease {
    /// Full version.
    pub version: Version,
    /// NVIDIA's name for it (`12.8 Update 1`).
    pub label: String,
    /// The Linux driver it ships with: the floor without minor-version compatibility.
    pub driver_linux: Version,
    /// The Windows driver it ships with, where NVIDIA lists one.
    pub driver_windows: Option<Version>,
    /// Where the row comes from.
    pub source: String,
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
    /// Where the row comes from.
    pub source: String,
}

impl CudaManifest {
    /// The newest CUDA (major.minor) whose release driver is at most `driver` on Linux: what the
    /// driver reports as its CUDA version when nothing better can be asked.
    pub fn newest_supported_by_linux_driver(&self, driver: &Version) -> Option<String> {
        self.release
            .iter()
            .filter(|r| &r.driver_linux <= driver)
            .max_by(|a, b| a.version.cmp(&b.version))
            .map(|r| r.version.prefix(2))
    }

    /// The newest release of the series `version` belongs to (`13.0.88` → `13.0.2`).
    pub fn newest_of_series(&self, version: &Version) -> Option<&Version> {
        self.release
            .iter()
            .map(|r| &r.version)
            .filter(|v| v.prefix(2) == version.prefix(2))
            .max()
    }

    /// The series whose compute-capability range holds `cc`, oldest first.
    pub fn series_building_for(&self, cc: &Version) -> Vec<&CudaSeries> {
        let mut s: Vec<_> = self
            .series
            .iter()
            .filter(|s| &s.sm_min <= cc && cc <= &s.sm_max)
            .collect();
        s.sort_by(|a, b| a.version.cmp(&b.version));
        s
    }
}

#[cfg(test)]
mod tests {
    use crate::catalog::Catalog;
    use crate::version::Version;

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
