//! `manifests/bench.toml`: NVIDIA's published ResNet-50 throughput per GPU, the references
//! `cudaup bench` measures against.

use serde::{Deserialize, Serialize};

/// The whole bench.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchManifest {
    /// Format version of the file.
    pub schema_version: u32,
    /// How far below a reference (in percent) still counts as "as fast as it should be".
    pub tolerance_pct: f64,
    /// One published figure each.
    pub reference: Vec<Reference>,
}

/// What a figure measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// One full training step (forward, backward, optimizer) per batch.
    Train,
    /// Forward passes only.
    Infer,
}

/// One published figure.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// The GPU, in words (`A100 80GB SXM4`).
    pub gpu: String,
    /// The names torch and nvidia-smi print for GPUs this figure applies to (case-insensitive).
    pub names: Vec<String>,
    /// The form factor of the GPU that was measured (`SXM4`, `PCIe`, …).
    pub form_factor: String,
    /// Training or inference.
    pub workload: Workload,
    /// `fp32`, `tf32`, `amp-fp16` or `amp-bf16`.
    pub precision: String,
    /// Images per GPU per step.
    pub batch: u32,
    /// Framework, container and data pipeline of the measurement.
    pub framework: String,
    /// The figure.
    pub images_per_s: f64,
    /// Where it was published (a URL and the table and row).
    pub source: String,
}

/// The precisions a reference may name.
pub const PRECISIONS: &[&str] = &["fp32", "tf32", "amp-fp16", "amp-bf16"];

impl BenchManifest {
    /// The references for a GPU called `name` (as torch or nvidia-smi prints it).
    pub fn for_gpu(&self, name: &str) -> Vec<&Reference> {
        let name = name.trim();
        self.reference
            .iter()
            .filter(|r| r.names.iter().any(|n| n.eq_ignore_ascii_case(name)))
            .collect()
    }

    /// Problems a schema cannot see, as `(text to find the row by, message)`.
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if !(0.0..100.0).contains(&self.tolerance_pct) {
            out.push((
                "tolerance_pct".to_owned(),
                format!(
                    "tolerance_pct {} is not a percentage below 100",
                    self.tolerance_pct
                ),
            ));
        }
        for (i, r) in self.reference.iter().enumerate() {
            let at = format!("gpu = \"{}\"", r.gpu);
            let what = format!("{} {:?} {}", r.gpu, r.workload, r.precision);
            if !PRECISIONS.contains(&r.precision.as_str()) {
                out.push((
                    format!("precision = \"{}\"", r.precision),
                    format!(
                        "{what}: unknown precision (one of {})",
                        PRECISIONS.join(", ")
                    ),
                ));
            }
            if !(r.images_per_s.is_finite() && r.images_per_s > 0.0) {
                out.push((at.clone(), format!("{what}: images_per_s must be positive")));
            }
            if r.batch == 0 {
                out.push((at.clone(), format!("{what}: batch must be positive")));
            }
            if r.names.is_empty() || r.names.iter().any(|n| n.trim().is_empty()) {
                out.push((at.clone(), format!("{what}: names must list GPU names")));
            }
            if !r.source.starts_with("https://") {
                out.push((
                    at.clone(),
                    format!("{what}: source must start with an https:// URL"),
                ));
            }
            let twice = self.reference[..i].iter().any(|o| {
                o.workload == r.workload
                    && o.precision == r.precision
                    && o.names.iter().any(|n| r.names.contains(n))
            });
            if twice {
                out.push((
                    at,
                    format!(
                        "{what}: a GPU name has two references for this workload and precision"
                    ),
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn embedded() -> BenchManifest {
        toml::from_str(include_str!("../../manifests/bench.toml")).unwrap()
    }

    #[test]
    fn the_embedded_references_are_sound_and_found_by_name() {
        let m = embedded();
        assert_eq!(m.problems(), Vec::<(String, String)>::new());
        let a100 = m.for_gpu("nvidia a100-sxm4-80gb");
        assert!(a100
            .iter()
            .any(|r| r.workload == Workload::Train && r.precision == "tf32"));
        assert!(m.for_gpu("NVIDIA H200").is_empty(), "left out, not guessed");
    }

    #[test]
    fn problems_name_the_row() {
        let mut m = embedded();
        m.reference[0].precision = "fp8".into();
        m.reference[1].images_per_s = 0.0;
        m.reference[2].source = "memory".into();
        let dup = m.reference[3].clone();
        m.reference.push(dup);
        let p = m.problems();
        assert!(
            p.iter()
                .any(|(n, m)| n == "precision = \"fp8\"" && m.contains("unknown precision")),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|(_, m)| m.contains("images_per_s must be positive")),
            "{p:?}"
        );
        assert!(p.iter().any(|(_, m)| m.contains("https://")), "{p:?}");
        assert!(p.iter().any(|(_, m)| m.contains("two references")), "{p:?}");
    }
}
