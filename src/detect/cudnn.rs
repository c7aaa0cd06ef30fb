//! cuDNN copies: system libraries (linker cache and library directories), headers, and the
//! `nvidia-cudnn-cu*` wheels inside Python environments.

use std::path::{Path, PathBuf};

use crate::model::system::Cudnn;

use super::root::Root;

/// Parses `#define CUDNN_MAJOR 9` / `CUDNN_MINOR` / `CUDNN_PATCHLEVEL` from cudnn_version.h
/// (cuDNN 8+) or cudnn.h (cuDNN 7).
pub fn parse_version_header(text: &str) -> Option<String> {
    let get = |name: &str| {
        text.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("#define") && w.next() == Some(name))
                .then(|| w.next()?.parse::<u32>().ok())
                .flatten()
        })
    };
    Some(format!(
        "{}.{}.{}",
        get("CUDNN_MAJOR")?,
        get("CUDNN_MINOR")?,
        get("CUDNN_PATCHLEVEL")?
    ))
}

/// The paths of `libcudnn.so.*` named in an ld.so.cache: the file is a string table, so the
/// NUL-separated strings that are absolute paths to libcudnn are enough (both cache formats).
pub fn parse_ld_cache(bytes: &[u8]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = bytes
        .split(|b| *b == 0)
        .filter_map(|s| std::str::from_utf8(s).ok())
        .filter(|s| s.starts_with('/') && s.contains("/libcudnn.so"))
        .map(PathBuf::from)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The version in a fully versioned library name (`libcudnn.so.9.14.0` → `9.14.0`).
fn version_from_library(name: &str) -> Option<String> {
    let v = name.strip_prefix("libcudnn.so.")?;
    (v.matches('.').count() >= 2 && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .then(|| v.to_owned())
}

/// The version in a wheel's dist-info name (`nvidia_cudnn_cu12-9.10.2.21.dist-info`).
fn version_from_dist_info(name: &str) -> Option<String> {
    let rest = name
        .strip_prefix("nvidia_cudnn_cu")
        .and_then(|r| r.strip_suffix(".dist-info"))?;
    rest.split_once('-').map(|(_, v)| v.to_owned())
}

/// Finds cuDNN. `lib_dirs` and `include_dirs` are machine paths to scan besides the linker
/// cache; `site_dirs` are Python site-packages directories.
pub fn probe(
    root: &Root,
    lib_dirs: &[PathBuf],
    include_dirs: &[PathBuf],
    site_dirs: &[PathBuf],
) -> Vec<Cudnn> {
    // The usual directories first, so a merged-/usr system reports /usr/lib/… rather than the
    // /lib/… alias the linker cache may list first.
    let mut dirs: Vec<PathBuf> = lib_dirs.to_vec();
    dirs.extend(
        root.read_bytes("/etc/ld.so.cache")
            .map(|b| parse_ld_cache(&b))
            .unwrap_or_default()
            .iter()
            .filter_map(|p| p.parent().map(Path::to_path_buf)),
    );
    let mut out: Vec<Cudnn> = Vec::new();
    fn push(out: &mut Vec<Cudnn>, version: String, path: &Path) {
        let path = path.display().to_string();
        if !out.iter().any(|c| c.version == version && c.path == path) {
            out.push(Cudnn { version, path });
        }
    }
    let mut seen_dirs = Vec::new();
    for dir in dirs {
        // /lib and /usr/lib are one directory on merged-/usr systems: report it once, by the
        // name the linker cache gives first.
        let real = super::toolkits::resolve(root, &dir);
        if seen_dirs.contains(&real) {
            continue;
        }
        seen_dirs.push(real);
        for file in root.list(&dir) {
            if let Some(v) = file
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(version_from_library)
            {
                push(&mut out, v, &dir);
            }
        }
    }
    let lib_versions: Vec<String> = out.iter().map(|c| c.version.clone()).collect();
    for dir in include_dirs {
        for header in [
            "cudnn_version.h",
            "cudnn_version_v9.h",
            "cudnn_version_v8.h",
        ] {
            if let Some(v) = root
                .read(dir.join(header))
                .and_then(|t| parse_version_header(&t))
            {
                // A header next to a library of the same version adds nothing.
                if !lib_versions.contains(&v) {
                    push(&mut out, v, dir);
                }
                break;
            }
        }
    }
    for site in site_dirs {
        for entry in root.list(site) {
            if let Some(v) = entry
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(version_from_dist_info)
            {
                push(&mut out, v, &site.join("nvidia/cudnn"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header() {
        let h = "#ifndef CUDNN_VERSION_H_\n#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 14\n#define CUDNN_PATCHLEVEL 0\n#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n";
        assert_eq!(parse_version_header(h).as_deref(), Some("9.14.0"));
        assert_eq!(parse_version_header("#define CUDNN_MAJOR 9\n"), None);
    }

    #[test]
    fn ld_cache_strings() {
        let mut cache = b"glibc-ld.so.cache1.1\0\0\0libcudnn.so.9\0/usr/lib/x86_64-linux-gnu/libcudnn.so.9\0libc.so.6\0/lib/x86_64-linux-gnu/libc.so.6\0".to_vec();
        cache.extend_from_slice(b"/usr/lib/x86_64-linux-gnu/libcudnn.so.9\0");
        assert_eq!(
            parse_ld_cache(&cache),
            vec![PathBuf::from("/usr/lib/x86_64-linux-gnu/libcudnn.so.9")]
        );
    }

    #[test]
    fn names() {
        assert_eq!(
            version_from_library("libcudnn.so.9.14.0").as_deref(),
            Some("9.14.0")
        );
        assert_eq!(version_from_library("libcudnn.so.9"), None);
        assert_eq!(
            version_from_dist_info("nvidia_cudnn_cu13-9.13.0.50.dist-info").as_deref(),
            Some("9.13.0.50")
        );
        assert_eq!(
            version_from_dist_info("nvidia_cublas_cu12-12.8.dist-info"),
            None
        );
    }
}
