//! `LD_LIBRARY_PATH` shadowing: a user's `LD_LIBRARY_PATH` wins over the RPATH of a framework
//! wheel, so an old CUDA runtime listed there is loaded instead of the one the wheel carries.
//! cudaup only warns about it: the variable is the user's, and removing it could break whatever
//! they set it for.

use std::path::{Path, PathBuf};

/// Library families that PyTorch and TensorFlow wheels bring themselves (as `nvidia-*` wheels).
/// Each is a file-name prefix, matched with a `.so.<version>` suffix after it.
const WHEEL_LIBRARIES: [(&str, bool); 4] = [
    // (prefix, whether more characters may follow the prefix before `.so.`)
    ("libcudart", false),
    ("libcublas", true),
    ("libcudnn", true),
    ("libnccl", true),
];

/// Directories in the user's `LD_LIBRARY_PATH` that hold CUDA libraries a framework wheel carries
/// itself (`libcudart.so.*`, `libcublas*.so.*`, `libcudnn*.so.*`, `libnccl*.so.*`) and could
/// shadow the wheel's copies, with the matching file names, sorted.
///
/// `list` gives the file names in a directory ([`list_dir`] reads the real one; tests pass a
/// fake). Only versioned names count: the loader asks for sonames such as `libcudart.so.12`,
/// never the bare `.so` development link. Empty entries (the current directory) are skipped, and
/// a directory listed twice is reported once.
pub fn shadowing(
    ld_library_path: &str,
    list: &dyn Fn(&Path) -> Vec<String>,
) -> Vec<(PathBuf, Vec<String>)> {
    let mut out: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for entry in ld_library_path.split(':').filter(|entry| !entry.is_empty()) {
        let dir = PathBuf::from(entry);
        if out.iter().any(|(seen, _)| *seen == dir) {
            continue;
        }
        let mut names: Vec<String> = list(&dir)
            .into_iter()
            .filter(|name| is_wheel_library(name))
            .collect();
        if !names.is_empty() {
            names.sort();
            names.dedup();
            out.push((dir, names));
        }
    }
    out
}

fn is_wheel_library(name: &str) -> bool {
    WHEEL_LIBRARIES.iter().any(|&(prefix, more)| {
        let Some(rest) = name.strip_prefix(prefix) else {
            return false;
        };
        let Some(at) = rest.find(".so.") else {
            return false;
        };
        (more || at == 0) && !rest[at..].trim_start_matches(".so.").is_empty()
    })
}

/// The names of the entries in `dir`; an unreadable or missing directory has none (a stale
/// `LD_LIBRARY_PATH` entry is common and harmless).
pub fn list_dir(dir: &Path) -> Vec<String> {
    fs_err::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(dir: &Path) -> Vec<String> {
        let names: &[&str] = match dir.to_str().unwrap() {
            "/usr/local/cuda-11.8/lib64" => &[
                "libcudart.so",
                "libcudart.so.11.0",
                "libcudart.so.11.8.89",
                "libcublas.so.11",
                "libcublasLt.so.11",
                "libcufft.so.10",
                "libnvrtc.so.11.2",
            ],
            "/opt/cudnn/lib" => &["libcudnn.so.8", "libcudnn_ops_infer.so.8", "libcudnn.so"],
            "/opt/nccl/lib" => &["libnccl.so.2", "libnccl-net.so", "README"],
            "/home/u/lib" => &["libfoo.so.1", "libcudart_static.a", "libcudartx.so.1"],
            _ => &[],
        };
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn finds_the_libraries_wheels_carry() {
        let found = shadowing(
            "/usr/local/cuda-11.8/lib64::/home/u/lib:/opt/cudnn/lib:/missing:/opt/nccl/lib:/opt/cudnn/lib",
            &fake,
        );
        assert_eq!(
            found,
            [
                (
                    PathBuf::from("/usr/local/cuda-11.8/lib64"),
                    vec![
                        "libcublas.so.11".to_owned(),
                        "libcublasLt.so.11".to_owned(),
                        "libcudart.so.11.0".to_owned(),
                        "libcudart.so.11.8.89".to_owned(),
                    ]
                ),
                (
                    PathBuf::from("/opt/cudnn/lib"),
                    vec![
                        "libcudnn.so.8".to_owned(),
                        "libcudnn_ops_infer.so.8".to_owned()
                    ]
                ),
                (
                    PathBuf::from("/opt/nccl/lib"),
                    vec!["libnccl.so.2".to_owned()]
                ),
            ]
        );
    }

    #[test]
    fn nothing_to_report() {
        assert!(shadowing("", &fake).is_empty());
        assert!(shadowing("::", &fake).is_empty());
        assert!(shadowing("/home/u/lib", &fake).is_empty());
    }

    #[test]
    fn names_that_look_alike_do_not_count() {
        for name in [
            "libcudart.so",
            "libcudart.so.",
            "libcudart_static.a",
            "libcudartx.so.1",
            "libcublas.so",
            "libcuda.so.1",
            "libnvrtc.so.12",
        ] {
            assert!(!is_wheel_library(name), "{name}");
        }
        for name in [
            "libcudart.so.12",
            "libcublasLt.so.12.1.3.1",
            "libcudnn_cnn_infer.so.8",
            "libnccl.so.2.18.1",
        ] {
            assert!(is_wheel_library(name), "{name}");
        }
    }

    #[cfg(unix)] // LD_LIBRARY_PATH is :-separated, and C: has a colon
    #[test]
    fn list_dir_reads_a_real_directory() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("libcudart.so.12"), "").unwrap();
        fs_err::write(dir.path().join("libz.so.1"), "").unwrap();
        let path = dir.path().to_str().unwrap();
        assert_eq!(
            shadowing(&format!("{path}:/does/not/exist"), &list_dir),
            [(dir.path().to_path_buf(), vec!["libcudart.so.12".to_owned()])]
        );
    }
}
