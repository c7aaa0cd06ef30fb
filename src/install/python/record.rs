//! The framework's files in a venv, held against each distribution's `.dist-info/RECORD`: a file
//! RECORD lists that is gone, or has another size, breaks the framework at import (torch without
//! `libtorch_cuda.so`) while its `version.py` still reads right. Sizes only, never hashes: one
//! `stat` per file, cheap enough for every `doctor` run (torch's RECORD lists about 15,000).
//! `doctor` reports what this finds and `repair` reinstalls the distributions it names, so the
//! two agree without importing anything.

use std::path::{Component, Path};

/// The most files named in one problem line.
const SHOWN: usize = 3;

/// For each of `names` (distributions installed in the venv at `venv`) whose RECORD lists files
/// that are missing or changed in size: one line naming the distribution, how many, and the
/// first few. Scripts and data outside site-packages (`../../bin/…`) are not looked at.
pub fn problems(venv: &Path, names: &[String]) -> Vec<String> {
    let Some(site) = crate::install::guard::site_packages(venv) else {
        return Vec::new();
    };
    let norm = crate::sources::pypi::normalize;
    let infos = dist_infos(&site);
    let mut out = Vec::new();
    for name in names {
        let Some(info) = infos.get(&norm(name)) else {
            continue;
        };
        let Ok(record) = crate::world::fs::read_regular_text(&info.join("RECORD"), 64 << 20) else {
            continue;
        };
        let mut missing = Vec::new();
        let mut resized = Vec::new();
        for line in record.lines() {
            // `path,sha256=…,size`: the path may hold commas, the last two fields may not.
            let mut fields = line.rsplitn(3, ',');
            let (Some(size), Some(_), Some(path)) = (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let Ok(size) = size.trim().parse::<u64>() else {
                continue;
            };
            let path = path.trim_matches('"');
            let rel = Path::new(path);
            if rel.is_absolute() || rel.components().any(|c| c == Component::ParentDir) {
                continue;
            }
            // The installer's own bookkeeping (INSTALLER, REQUESTED, direct_url.json) is
            // rewritten by whichever installer ran last, and imports nothing: on a GPU, uv's
            // INSTALLER differed from the size a wheel's RECORD gave, and repair never converged.
            if rel
                .components()
                .next()
                .is_some_and(|c| c.as_os_str().to_string_lossy().ends_with(".dist-info"))
            {
                continue;
            }
            match site.join(rel).symlink_metadata() {
                Err(_) => missing.push(path.to_owned()),
                Ok(m) if m.is_file() && m.len() != size => resized.push(path.to_owned()),
                Ok(_) => {}
            }
        }
        if missing.is_empty() && resized.is_empty() {
            continue;
        }
        let mut parts = Vec::new();
        for (what, list) in [("missing", &missing), ("of another size", &resized)] {
            if list.is_empty() {
                continue;
            }
            let more = list.len().saturating_sub(SHOWN);
            let shown = list
                .iter()
                .take(SHOWN)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            parts.push(format!("{} {what} ({shown}{more})", list.len()));
        }
        out.push(format!(
            "{name}'s RECORD lists files that are not as installed: {}",
            parts.join("; ")
        ));
    }
    out
}

/// The `.dist-info` folders of `site`, by normalised distribution name.
pub fn dist_infos(site: &Path) -> std::collections::BTreeMap<String, std::path::PathBuf> {
    let norm = crate::sources::pypi::normalize;
    fs_err::read_dir(site)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let file = e.file_name().to_string_lossy().into_owned();
            let stem = file.strip_suffix(".dist-info")?;
            let name = stem.rsplit_once('-').map_or(stem, |(n, _)| n);
            Some((norm(name), e.path()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_or_truncated_library_is_named_and_scripts_outside_and_installer_files_are_not_looked_at(
    ) {
        let venv = tempfile::tempdir().unwrap();
        let site = venv.path().join("lib/python3.12/site-packages");
        let info = site.join("torch-2.14.1+cu130.dist-info");
        fs_err::create_dir_all(site.join("torch/lib")).unwrap();
        fs_err::create_dir_all(&info).unwrap();
        // Rewritten by the last installer (uv writes `uv`): never a problem, whatever RECORD says.
        fs_err::write(info.join("INSTALLER"), "uv").unwrap();
        fs_err::write(site.join("torch/__init__.py"), "x = 1\n").unwrap();
        fs_err::write(site.join("torch/lib/libtorch_cuda.so"), vec![0u8; 10]).unwrap();
        fs_err::write(site.join("torch/lib/libc10.so"), vec![0u8; 10]).unwrap();
        fs_err::write(
            info.join("RECORD"),
            "torch/__init__.py,sha256=abc,6\n\
             torch/lib/libtorch_cuda.so,sha256=def,10\n\
             torch/lib/libc10.so,sha256=ghi,10\n\
             ../../../bin/torchrun,sha256=jkl,99\n\
             torch-2.14.1+cu130.dist-info/INSTALLER,sha256=mno,4\n\
             torch-2.14.1+cu130.dist-info/RECORD,,\n",
        )
        .unwrap();
        let names = vec!["torch".to_owned(), "torchvision".to_owned()];
        assert!(problems(venv.path(), &names).is_empty(), "intact");
        fs_err::remove_file(site.join("torch/lib/libtorch_cuda.so")).unwrap();
        fs_err::write(site.join("torch/lib/libc10.so"), vec![0u8; 3]).unwrap();
        assert_eq!(
            problems(venv.path(), &names),
            ["torch's RECORD lists files that are not as installed: 1 missing (torch/lib/libtorch_cuda.so); 1 of another size (torch/lib/libc10.so)"]
        );
    }
}
