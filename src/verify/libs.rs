//! Checks `cudart`, `cublas`, `cudnn`: the libraries load, and which file the dynamic loader
//! picked. They are loaded by a child Python (`ctypes.CDLL`, i.e. `dlopen`) started with the
//! active environment — the toolkit's `lib64` first on `LD_LIBRARY_PATH` — which then reads
//! `/proc/self/maps` for the file that was mapped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::process::Process;
use crate::runner::which;

use super::framework::VenvTarget;
use super::toolkit::Toolkit;
use super::{exit_words, json_line, output_lines, Check, Exec};

/// Loads each group's first loadable name; prints `{key: {soname, path, errors}}`.
pub const LOAD_SCRIPT: &str = r#"
import ctypes, json, sys
out = {}
for group in sys.argv[1:]:
    key, names = group.split("=", 1)
    r = {"soname": None, "path": None, "errors": []}
    for name in names.split(","):
        try:
            ctypes.CDLL(name)
        except OSError as e:
            r["errors"].append(str(e))
            continue
        r["soname"] = name
        stem = name.split(".so")[0] + ".so"
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].strip().rsplit("/", 1)[-1].startswith(stem):
                    r["path"] = parts[5].strip()
                    break
        break
    out[key] = r
print(json.dumps(out))
"#;

/// One library's outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Loaded {
    /// The name that loaded.
    pub soname: Option<String>,
    /// The file the loader mapped.
    pub path: Option<String>,
    /// The loader's message for each name that did not load.
    #[serde(default)]
    pub errors: Vec<String>,
}

/// A library to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// `cudart`, `cublas`, `cudnn`.
    pub key: &'static str,
    /// Names to try, in order (`libcudart.so.13`).
    pub names: Vec<String>,
    /// Whether it was installed (a failure to load is then a failure, else "not installed").
    pub installed: bool,
    /// Why it counts as installed or not, for the evidence.
    pub why: String,
}

/// The interpreter that loads the libraries: `python3` on PATH, else a venv's.
pub fn python(process: &Process, venvs: &[VenvTarget]) -> Option<PathBuf> {
    let path = process.path_entries();
    which("python3", &path)
        .or_else(|| which("python", &path))
        .or_else(|| {
            venvs
                .iter()
                .map(|v| v.venv().python())
                .find(|p| p.is_file())
        })
}

/// What to load for `toolkit`, and whether each was installed there.
pub fn wanted(toolkit: &Toolkit) -> Vec<Wanted> {
    let (major, minor) = toolkit
        .cuda
        .as_ref()
        .map_or((0, 0), |v| (v.major(), v.minor()));
    // Sonames: libcudart.so.13 and .12; CUDA 11's is libcudart.so.11.0; older ones M.m.
    let cudart = match major {
        12.. => format!("libcudart.so.{major}"),
        11 => "libcudart.so.11.0".to_owned(),
        _ => format!("libcudart.so.{major}.{minor}"),
    };
    let lib64 = toolkit.dir.join("lib64");
    let has = |stem: &str| !versioned(&lib64, stem).is_empty();
    let receipt = toolkit.receipt.as_ref();
    let in_receipt =
        |part: &str| receipt.is_some_and(|r| r.components.iter().any(|c| c.name.contains(part)));
    let mut out = Vec::new();
    out.push(Wanted {
        key: "cudart",
        names: vec![cudart],
        installed: true,
        why: "the CUDA runtime belongs to every toolkit".into(),
    });
    let cublas = in_receipt("cublas") || has("libcublas.so");
    out.push(Wanted {
        key: "cublas",
        names: vec![format!("libcublas.so.{major}")],
        installed: cublas,
        why: if cublas {
            "cuBLAS is in the toolkit".into()
        } else if receipt.is_some() {
            "cuBLAS was not installed with this toolkit (`--source wheels` leaves it out)".into()
        } else {
            format!("cuBLAS is not in {}", lib64.display())
        },
    });
    let cudnn_receipt = receipt.and_then(|r| r.cudnn.clone());
    let mut cudnn_majors: Vec<String> = cudnn_receipt
        .as_deref()
        .and_then(|v| v.split('.').next())
        .map(|m| vec![m.to_owned()])
        .unwrap_or_default();
    for file in versioned(&lib64, "libcudnn.so") {
        if let Some(m) = file
            .strip_prefix("libcudnn.so.")
            .and_then(|r| r.split('.').next())
        {
            if !cudnn_majors.iter().any(|x| x == m) {
                cudnn_majors.push(m.to_owned());
            }
        }
    }
    // Nothing says which major: the ones in use today, newest first.
    if cudnn_majors.is_empty() {
        cudnn_majors = vec!["9".into(), "8".into()];
    }
    let cudnn = cudnn_receipt.is_some() || has("libcudnn.so");
    out.push(Wanted {
        key: "cudnn",
        names: cudnn_majors
            .iter()
            .map(|m| format!("libcudnn.so.{m}"))
            .collect(),
        installed: cudnn,
        why: match &cudnn_receipt {
            Some(v) => format!("cuDNN {v} was installed with the toolkit"),
            None if cudnn => "cuDNN is in the toolkit".into(),
            None => "not installed".into(),
        },
    });
    out
}

/// `stem.*` files and links in `dir` (`libcudnn.so.9`, `libcudnn.so.9.17.0`).
fn versioned(dir: &Path, stem: &str) -> Vec<String> {
    let prefix = format!("{stem}.");
    let mut names: Vec<String> = fs_err::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Loads the libraries of the toolkit.
pub fn check(
    exec: &Exec<'_>,
    toolkit: Option<&Toolkit>,
    no_toolkit: &str,
    python: Option<&Path>,
) -> Vec<Check> {
    const KEYS: [&str; 3] = ["cudart", "cublas", "cudnn"];
    let Some(toolkit) = toolkit else {
        return KEYS
            .iter()
            .map(|k| Check::skip(*k, vec![no_toolkit.to_owned()]))
            .collect();
    };
    if toolkit.cuda.is_none() {
        return KEYS
            .iter()
            .map(|k| {
                Check::skip(
                    *k,
                    vec!["the toolkit's CUDA version is unknown: no library name to load".into()],
                )
            })
            .collect();
    }
    let Some(python) = python else {
        return KEYS
            .iter()
            .map(|k| {
                Check::skip(
                    *k,
                    vec!["no python3 on PATH to load the libraries with".into()],
                )
            })
            .collect();
    };
    let wanted = wanted(toolkit);
    let groups: Vec<String> = wanted
        .iter()
        .map(|w| format!("{}={}", w.key, w.names.join(",")))
        .collect();
    let mut args = vec!["-I", "-S", "-c", LOAD_SCRIPT];
    args.extend(groups.iter().map(String::as_str));
    let report: Result<BTreeMap<String, Loaded>, Vec<String>> =
        match exec.run(python, &args, &[], Duration::from_secs(60)) {
            Err(e) => Err(vec![e.to_string()]),
            Ok(out) => json_line(&out).map_err(|why| {
                let mut ev = vec![format!(
                    "{} could not load them: {why} ({})",
                    python.display(),
                    exit_words(&out)
                )];
                ev.extend(output_lines(&out).into_iter().rev().take(5).rev());
                ev
            }),
        };
    wanted
        .iter()
        .map(|w| match &report {
            Err(lines) => Check::fail(w.key, lines.clone()),
            Ok(map) => judge(w, &map.get(w.key).cloned().unwrap_or_default(), toolkit),
        })
        .collect()
}

/// Turns one library's outcome into a check.
pub fn judge(w: &Wanted, got: &Loaded, toolkit: &Toolkit) -> Check {
    let data = serde_json::json!({
        "soname": got.soname,
        "path": got.path,
        "tried": w.names,
        "installed": w.installed,
    });
    match (&got.soname, &got.path) {
        (Some(soname), path) => {
            let path = path
                .clone()
                .unwrap_or_else(|| "(file not found in /proc/self/maps)".into());
            let mut ev = vec![format!("{soname} → {path}")];
            let inside = Path::new(&path).starts_with(&toolkit.real)
                || Path::new(&path).starts_with(&toolkit.dir);
            if !inside {
                ev.push(format!(
                    "not from the toolkit {}: the loader found it elsewhere (LD_LIBRARY_PATH, ld.so.cache)",
                    toolkit.dir.display()
                ));
            }
            Check::pass(w.key, ev).data(data)
        }
        (None, _) if w.installed => {
            let mut ev = vec![format!("{} does not load ({})", w.names.join(" / "), w.why)];
            ev.extend(got.errors.iter().cloned());
            ev.push(format!(
                "searched with {} first on LD_LIBRARY_PATH",
                toolkit.dir.join("lib64").display()
            ));
            Check::fail(w.key, ev).data(data)
        }
        (None, _) => {
            let mut ev = vec![w.why.clone()];
            ev.extend(got.errors.iter().take(1).cloned());
            Check::skip(w.key, ev).data(data)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::receipt::ReceiptComponent;
    use crate::install::Receipt;
    use crate::verify::testing::{ok, Scripted};
    use crate::verify::Status;
    use crate::version::Version;

    fn toolkit(dir: &Path, receipt: Option<Receipt>) -> Toolkit {
        Toolkit {
            dir: dir.to_owned(),
            real: dir.to_owned(),
            nvcc: dir.join("bin/nvcc"),
            receipt,
            cuda: Version::parse("13.0"),
        }
    }

    fn receipt(cudnn: Option<&str>, components: &[&str]) -> Receipt {
        Receipt {
            schema_version: 1,
            prefix: "/t".into(),
            cuda: "13.0.2".into(),
            cudnn: cudnn.map(str::to_owned),
            source: "wheels test".into(),
            installed_at: 0,
            components: components
                .iter()
                .map(|n| ReceiptComponent {
                    name: (*n).to_owned(),
                    version: "1".into(),
                    url: String::new(),
                    sha256: String::new(),
                    size: None,
                })
                .collect(),
            files: Vec::new(),
        }
    }

    #[test]
    fn names_and_expectations() {
        let d = tempfile::tempdir().unwrap();
        let w = wanted(&toolkit(
            d.path(),
            Some(receipt(Some("9.17.0"), &["cuda_cudart"])),
        ));
        assert_eq!(w[0].names, ["libcudart.so.13"]);
        let mut old = toolkit(d.path(), None);
        old.cuda = Version::parse("11.8");
        assert_eq!(wanted(&old)[0].names, ["libcudart.so.11.0"]);
        assert_eq!(wanted(&old)[1].names, ["libcublas.so.11"]);
        assert_eq!(w[1].names, ["libcublas.so.13"]);
        assert!(!w[1].installed, "no cuBLAS component in the receipt");
        assert!(w[1].why.contains("--source wheels"));
        assert_eq!(w[2].names, ["libcudnn.so.9"]);
        assert!(w[2].installed);

        let lib64 = d.path().join("lib64");
        fs_err::create_dir_all(&lib64).unwrap();
        fs_err::write(lib64.join("libcublas.so.13.1.0.3"), "").unwrap();
        let w = wanted(&toolkit(d.path(), None));
        assert!(w[1].installed);
        assert!(!w[2].installed);
        assert_eq!(w[2].why, "not installed");
        assert_eq!(w[2].names, ["libcudnn.so.9", "libcudnn.so.8"]);
    }

    #[test]
    fn judging() {
        let d = Path::new("/usr/local/cuda-13.0");
        let tk = toolkit(d, None);
        let w = &wanted(&tk)[0];
        let inside = Loaded {
            soname: Some("libcudart.so.13".into()),
            path: Some("/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13.0.96".into()),
            errors: vec![],
        };
        let c = judge(w, &inside, &tk);
        assert_eq!(c.status, Status::Pass);
        assert_eq!(
            c.evidence,
            ["libcudart.so.13 → /usr/local/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13.0.96"]
        );
        let outside = Loaded {
            path: Some("/usr/lib/x86_64-linux-gnu/libcudart.so.13.0.96".into()),
            ..inside
        };
        let c = judge(w, &outside, &tk);
        assert_eq!(c.status, Status::Pass);
        assert!(c.evidence[1].starts_with("not from the toolkit"));
        let missing = Loaded {
            soname: None,
            path: None,
            errors: vec![
                "libcudart.so.13: cannot open shared object file: No such file or directory".into(),
            ],
        };
        let c = judge(w, &missing, &tk);
        assert_eq!(c.status, Status::Fail);
        assert!(c
            .evidence
            .iter()
            .any(|l| l.contains("cannot open shared object")));
        let cudnn = &wanted(&tk)[2];
        let c = judge(cudnn, &missing, &tk);
        assert_eq!(c.status, Status::Skip);
        assert_eq!(c.evidence[0], "not installed");
    }

    #[test]
    fn one_child_loads_all_three_in_the_active_environment() {
        let d = tempfile::tempdir().unwrap();
        let tk = toolkit(d.path(), Some(receipt(None, &["libcublas"])));
        let answer = format!(
            "{{\"cudart\": {{\"soname\": \"libcudart.so.13\", \"path\": \"{0}/lib64/libcudart.so.13.0.96\", \"errors\": []}}, \"cublas\": {{\"soname\": \"libcublas.so.13\", \"path\": \"{0}/lib64/libcublas.so.13.1.0.3\", \"errors\": []}}, \"cudnn\": {{\"soname\": null, \"path\": null, \"errors\": [\"libcudnn.so.9: cannot open shared object file\"]}}}}",
            d.path().display()
        );
        let r = Scripted::new(move |_, _, _| ok(&format!("warning: noise\n{answer}\n")));
        let process = Process::with_vars([("PATH", "/usr/bin")], "/");
        let exec = Exec::new(&r, &process, Some(d.path()));
        let checks = check(&exec, Some(&tk), "", Some(Path::new("/usr/bin/python3")));
        let st: Vec<Status> = checks.iter().map(|c| c.status).collect();
        assert_eq!(st, [Status::Pass, Status::Pass, Status::Skip]);
        let calls = r.calls.lock().unwrap();
        assert_eq!(calls.len(), 1);
        let ld = calls[0]
            .2
            .iter()
            .find(|(k, _)| k == "LD_LIBRARY_PATH")
            .unwrap();
        assert!(ld
            .1
            .starts_with(&d.path().join("lib64").display().to_string()));
        assert!(calls[0]
            .1
            .contains(&"cudnn=libcudnn.so.9,libcudnn.so.8".to_owned()));
    }

    #[test]
    fn skipped_without_toolkit_or_python() {
        let r = Scripted::new(|_, _, _| None);
        let process = Process::default();
        let exec = Exec::new(&r, &process, None);
        let c = check(&exec, None, "no CUDA toolkit", None);
        assert!(c.iter().all(|c| c.status == Status::Skip));
        let tk = toolkit(Path::new("/t"), None);
        let c = check(&exec, Some(&tk), "", None);
        assert!(c.iter().all(|c| c.status == Status::Skip));
        assert!(c[0].evidence[0].contains("no python3"));
    }
}
