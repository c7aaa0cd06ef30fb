//! Check `tensorrt`: where a venv has TensorRT (or was installed `--with tensorrt`), a small CNN
//! goes from torch to ONNX to a TensorRT engine, runs on the GPU, and must match torch's outputs;
//! TensorRT's latency is reported beside torch's. A venv without TensorRT gets no check.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use crate::install::receipts::Receipts;
use crate::model::system::Gpu;

use super::framework::VenvTarget;
use super::{exit_words, json_line, output_lines, Check, Exec};

/// The script (run with the venv's python).
pub const SCRIPT: &str = include_str!("tensorrt.py");

/// Largest relative error TensorRT's outputs may show against torch's (fp32 engine; TensorRT
/// may pick TF32 tactics).
pub const TOLERANCE: f64 = 1e-2;

/// The images per inference the latency is measured at.
pub const BATCH: u32 = 32;

/// What [`SCRIPT`] prints.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct TrtReport {
    /// Whether `import tensorrt` worked.
    #[serde(default)]
    pub installed: bool,
    /// TensorRT's version.
    pub version: Option<String>,
    /// torch's.
    pub torch: Option<String>,
    /// The GPU it ran on.
    pub gpu: Option<String>,
    /// Which ONNX exporter torch used.
    pub exporter: Option<String>,
    /// The ONNX file's size.
    pub onnx_bytes: Option<u64>,
    /// Seconds building the engine took.
    pub build_seconds: Option<f64>,
    /// max |TensorRT − torch| / max |torch|.
    pub max_rel_err: Option<f64>,
    /// Images per inference.
    pub batch: Option<u32>,
    /// Median TensorRT latency, ms.
    pub trt_ms: Option<f64>,
    /// Median torch latency, ms.
    pub torch_ms: Option<f64>,
    /// What failed.
    pub error: Option<String>,
}

/// Whether the venv has a `tensorrt` package, and whether its receipt says cudaup put one there.
fn presence(venv: &Path, receipts: &Receipts) -> (bool, bool) {
    let installed = ["lib", "Lib"].iter().any(|lib| {
        let base = venv.join(lib);
        let direct = base.join("site-packages").join("tensorrt").is_dir();
        direct
            || fs_err::read_dir(&base).is_ok_and(|d| {
                d.flatten()
                    .any(|e| e.path().join("site-packages").join("tensorrt").is_dir())
            })
    });
    let planned = receipts.venvs.iter().any(|(_, r)| {
        r.venv == venv
            && r.packages
                .requirements
                .iter()
                .any(|q| q.starts_with("tensorrt"))
    });
    (installed, planned)
}

/// The check for the first venv whose torch ran on the GPUs; `None` when TensorRT is neither
/// there nor expected.
pub fn check(
    exec: &Exec<'_>,
    venv: Option<&VenvTarget>,
    gpus: &[Gpu],
    receipts: &Receipts,
) -> Option<Check> {
    let venv = venv?;
    let (installed, planned) = presence(&venv.dir, receipts);
    let subject = venv.dir.display().to_string();
    if !installed {
        return planned.then(|| {
            Check::fail(
                "tensorrt",
                vec![format!(
                    "cudaup installed TensorRT into {subject} (--with tensorrt) but its tensorrt package is gone; `cudaup repair` puts it back"
                )],
            )
            .subject(subject.clone())
        });
    }
    if gpus.is_empty() {
        return Some(
            Check::skip("tensorrt", vec!["no GPU to build an engine for".into()]).subject(subject),
        );
    }
    let args = format!("{{\"batch\": {BATCH}, \"iters\": 50}}");
    let python = venv.venv().python();
    let check = match exec.run(
        &python,
        &["-c", SCRIPT, &args],
        &[],
        Duration::from_secs(600),
    ) {
        Err(e) => Check::fail("tensorrt", vec![e.to_string()]),
        Ok(out) => match json_line::<TrtReport>(&out) {
            Err(why) => {
                let mut ev = vec![format!(
                    "the TensorRT check did not finish: {why} ({})",
                    exit_words(&out)
                )];
                ev.extend(output_lines(&out).into_iter().rev().take(8).rev());
                Check::fail("tensorrt", ev)
            }
            Ok(r) => judge(&r),
        },
    };
    Some(check.subject(subject))
}

/// Judges a report.
pub fn judge(r: &TrtReport) -> Check {
    let data = serde_json::json!({
        "version": r.version, "exporter": r.exporter, "onnx_bytes": r.onnx_bytes,
        "build_seconds": r.build_seconds, "max_rel_err": r.max_rel_err, "batch": r.batch,
        "trt_ms": r.trt_ms, "torch_ms": r.torch_ms, "gpu": r.gpu,
    });
    let v = r.version.as_deref().unwrap_or("?");
    if !r.installed {
        return Check::fail(
            "tensorrt",
            vec![format!(
                "`import tensorrt` failed: {}",
                r.error.as_deref().unwrap_or("no error text")
            )],
        )
        .data(data);
    }
    if let Some(e) = &r.error {
        return Check::fail("tensorrt", vec![format!("TensorRT {v}: {e}")]).data(data);
    }
    let Some(err) = r.max_rel_err else {
        return Check::fail(
            "tensorrt",
            vec![format!("TensorRT {v}: no outputs to compare")],
        )
        .data(data);
    };
    let latency = match (r.trt_ms, r.torch_ms) {
        (Some(t), Some(p)) if t > 0.0 => format!(
            "latency at batch {}: TensorRT {t:.3} ms, PyTorch {p:.3} ms ({:.1}× faster)",
            r.batch.unwrap_or(BATCH),
            p / t
        ),
        _ => "latency not measured".into(),
    };
    let head = format!(
        "TensorRT {v}: a small CNN exported to ONNX ({} bytes) and built into an engine in {:.1} s",
        r.onnx_bytes.unwrap_or(0),
        r.build_seconds.unwrap_or(0.0)
    );
    if err.is_finite() && err <= TOLERANCE {
        Check::pass(
            "tensorrt",
            vec![
                head,
                format!("its outputs match PyTorch's (max rel. error {err:.1e})"),
                latency,
            ],
        )
        .data(data)
    } else {
        Check::fail(
            "tensorrt",
            vec![
                format!("{head}, but its outputs differ from PyTorch's (max rel. error {err:.1e} > {TOLERANCE:.0e})"),
                latency,
            ],
        )
        .data(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::testing::{ok, Scripted};
    use crate::verify::Status;

    fn good() -> TrtReport {
        serde_json::from_str(r#"{"installed": true, "version": "11.4.0.106", "torch": "2.11.0+cu130", "gpu": "NVIDIA H200", "input": [32, 3, 64, 64], "exporter": "torchscript", "onnx_bytes": 390211, "build_seconds": 7.42, "max_rel_err": 0.00021, "batch": 32, "trt_ms": 0.118, "torch_ms": 0.402}"#).unwrap()
    }

    #[test]
    fn matching_outputs_pass_with_both_latencies() {
        let c = judge(&good());
        assert_eq!(c.status, Status::Pass, "{c:?}");
        assert_eq!(
            c.evidence[1],
            "its outputs match PyTorch's (max rel. error 2.1e-4)"
        );
        assert_eq!(
            c.evidence[2],
            "latency at batch 32: TensorRT 0.118 ms, PyTorch 0.402 ms (3.4× faster)"
        );
    }

    #[test]
    fn wrong_outputs_and_failures_fail() {
        let c = judge(&TrtReport {
            max_rel_err: Some(0.5),
            ..good()
        });
        assert_eq!(c.status, Status::Fail);
        assert!(c.evidence[0].contains("differ from PyTorch's"));
        let c = judge(&TrtReport {
            error: Some("the ONNX parser refused the model: x".into()),
            ..good()
        });
        assert!(c.evidence[0].contains("ONNX parser refused"));
        let c = judge(&TrtReport {
            installed: false,
            error: Some("ImportError: libnvinfer.so.11: cannot open shared object file".into()),
            ..TrtReport::default()
        });
        assert!(c.evidence[0].contains("libnvinfer"));
    }

    #[test]
    fn only_venvs_with_tensorrt_get_the_check() {
        let venv = tempfile::tempdir().unwrap();
        fs_err::create_dir_all(venv.path().join("bin")).unwrap();
        let target = VenvTarget {
            dir: venv.path().to_owned(),
            profile: Some("pytorch".into()),
        };
        let runner = Scripted::new(|_, args, _| {
            assert!(args[1].starts_with("# cudaup-verify-tensorrt"));
            ok(&format!(
                "[TRT] [W] a warning\n{}",
                r#"{"installed": true, "version": "11.4.0.106", "max_rel_err": 0.0003, "onnx_bytes": 1, "build_seconds": 1.0, "batch": 32, "trt_ms": 0.1, "torch_ms": 0.3}"#
            ))
        });
        let process = crate::world::process::Process::default();
        let exec = Exec::new(&runner, &process, None);
        let gpu = Gpu {
            index: 0,
            vendor: crate::model::system::Vendor::Nvidia,
            name: "NVIDIA H200".into(),
            pci_id: None,
            compute_capability: Some("9.0".into()),
            architecture: None,
            memory_mib: None,
        };
        let receipts = Receipts::default();
        assert!(check(&exec, Some(&target), std::slice::from_ref(&gpu), &receipts).is_none());
        assert!(
            runner.calls.lock().unwrap().is_empty(),
            "no python started for a venv without TensorRT"
        );
        fs_err::create_dir_all(venv.path().join("lib/python3.12/site-packages/tensorrt")).unwrap();
        let c = check(&exec, Some(&target), &[gpu], &receipts).unwrap();
        assert_eq!(c.status, Status::Pass, "{c:?}");
        assert!(check(&exec, None, &[], &receipts).is_none());
    }
}
