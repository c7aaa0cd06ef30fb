//! CUDA toolkits on disk: /usr/local/cuda*, /opt/cuda, `CUDA_HOME` / `CUDA_PATH`, the `nvcc` on
//! `PATH`, and cudaup's own under `$CUDAUP_HOME/toolkits`.

use std::path::{Path, PathBuf};

use crate::model::system::{Owner, Toolkit};

use super::root::Root;

/// Where to look, as machine paths: fixed locations plus what the environment names.
#[derive(Debug, Clone, Default)]
pub struct ToolkitHints {
    /// `CUDA_HOME`, `CUDA_PATH` and the parent of the `nvcc` found on `PATH`.
    pub from_env: Vec<PathBuf>,
    /// `$CUDAUP_HOME/toolkits`, whose children cudaup owns.
    pub cudaup_toolkits: Option<PathBuf>,
}

/// Reads the toolkit version from version.json (CUDA 11.1+), else version.txt (older).
///
/// ```text
/// {"cuda" : {"name" : "CUDA SDK", "version" : "13.0.2"}, "cuda_nvcc" : {…}}
/// CUDA Version 10.2.89
/// ```
pub fn parse_version_files(
    version_json: Option<&str>,
    version_txt: Option<&str>,
) -> Option<String> {
    if let Some(json) = version_json {
        let value: serde_json::Value = serde_json::from_str(json).ok()?;
        let v = value
            .get("cuda")
            .and_then(|c| c.get("version"))
            .or_else(|| value.get("cuda_nvcc").and_then(|c| c.get("version")))
            .and_then(|v| v.as_str());
        if let Some(v) = v {
            return Some(v.to_owned());
        }
    }
    version_txt?
        .split_whitespace()
        .find(|w| w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_owned)
}

/// The release from `nvcc --version` (`Cuda compilation tools, release 12.2, V12.2.140`).
pub fn parse_nvcc_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.contains("release"))?;
    line.split(", V")
        .nth(1)
        .map(|v| v.trim().to_owned())
        .or_else(|| {
            line.split("release ")
                .nth(1)
                .and_then(|r| r.split(',').next())
                .map(|r| r.trim().to_owned())
        })
}

/// Finds every toolkit once, named by its real (symlink-resolved) directory. `nvcc_version` is
/// asked only for a directory that has `bin/nvcc` but no version file.
pub fn probe(
    root: &Root,
    hints: &ToolkitHints,
    nvcc_version: &dyn Fn(&Path) -> Option<String>,
) -> Vec<Toolkit> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    for dir in ["/usr/local", "/opt"] {
        candidates.extend(root.list(dir).into_iter().filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n == "cuda" || n.starts_with("cuda-"))
        }));
    }
    candidates.extend(hints.from_env.iter().cloned());
    if let Some(own) = &hints.cudaup_toolkits {
        // Hidden entries are cudaup's staging and set-aside directories, not toolkits.
        candidates.extend(root.list(own).into_iter().filter(|p| {
            !p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.'))
        }));
    }

    let mut seen: Vec<PathBuf> = Vec::new();
    let mut out = Vec::new();
    for candidate in candidates {
        let real = resolve(root, &candidate);
        if seen.contains(&real) {
            continue;
        }
        seen.push(real.clone());
        let version = parse_version_files(
            root.read(real.join("version.json")).as_deref(),
            root.read(real.join("version.txt")).as_deref(),
        )
        .or_else(|| {
            let nvcc = crate::model::layout::Prefix::at(&real).nvcc();
            if root.is_live() {
                nvcc.is_file().then(|| nvcc_version(&nvcc)).flatten()
            } else {
                // Distro packages ship no version file, and a captured tree runs nothing: the
                // directory's name (`cuda-13.0`) is the best evidence left.
                root.exists(&nvcc)
                    .then(|| version_from_dir_name(&real))
                    .flatten()
            }
        });
        let Some(version) = version else { continue };
        let owner = match &hints.cudaup_toolkits {
            Some(own) if real.starts_with(resolve(root, own)) => Owner::Cudaup,
            _ => Owner::System,
        };
        out.push(Toolkit {
            version,
            path: real.display().to_string(),
            owner,
        });
    }
    out
}

/// `13.0` from `/usr/local/cuda-13.0`.
fn version_from_dir_name(dir: &Path) -> Option<String> {
    let v = dir.file_name()?.to_str()?.strip_prefix("cuda-")?;
    crate::model::version::Version::parse(v).map(|_| v.to_owned())
}

/// Resolves symlinks of a machine path inside the root (so /usr/local/cuda → /usr/local/cuda-13.0
/// also in a captured tree).
pub fn resolve(root: &Root, path: &Path) -> PathBuf {
    if root.is_live() {
        return fs_err::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    }
    let mut current = path.to_path_buf();
    for _ in 0..16 {
        match root.read_link(&current) {
            Some(target) if target.is_absolute() => current = target,
            Some(target) => current = current.parent().unwrap_or(Path::new("/")).join(target),
            None => break,
        }
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_json_and_txt() {
        let json = r#"{"cuda" : {"name" : "CUDA SDK", "version" : "13.0.2"}, "cuda_nvcc": {"name": "CUDA NVCC", "version": "13.0.88"}}"#;
        assert_eq!(
            parse_version_files(Some(json), None).as_deref(),
            Some("13.0.2")
        );
        assert_eq!(
            parse_version_files(None, Some("CUDA Version 10.2.89\n")).as_deref(),
            Some("10.2.89")
        );
        assert_eq!(parse_version_files(Some("{not json"), None), None);
    }

    #[test]
    fn nvcc_banner() {
        let text = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2023 NVIDIA Corporation\nBuilt on Tue_Aug_15_22:02:13_PDT_2023\nCuda compilation tools, release 12.2, V12.2.140\nBuild cuda_12.2.r12.2/compiler.33191640_0\n";
        assert_eq!(parse_nvcc_version(text).as_deref(), Some("12.2.140"));
    }
}
