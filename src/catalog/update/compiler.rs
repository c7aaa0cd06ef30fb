//! What each CUDA series compiles for, read from that series' own compiler: NVIDIA's nvcc wheel on
//! PyPI (`nvidia-cuda-nvcc-cu11`, `nvidia-cuda-nvcc-cu12`, `nvidia-cuda-nvcc` for 13.x), newest
//! build of each series. Every one of them carries `ptxas` (the 12.x wheels carry no `nvcc`
//! driver at all), and ptxas keeps a table of the GPUs it generates code for: each real target
//! is registered as `sm_NN`, `compute_NN` and `lto_NN`, and only the `lto_NN` names never appear
//! for a target it lacks. That table is what `ptxas --help` prints as the allowed `--gpu-name`
//! values and what `nvcc --list-gpu-code` / `--list-gpu-arch` print; the `needs_network_` test
//! over the real wheels runs both and checks they agree with this reading.
//!
//! The binary is read, never run: an update may read a mirror, and a mirror's binary is not
//! something to execute on the maintainer's machine.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::pypi::{self, Project, WheelFile};
use super::{zip, Net, Targets, UpdateError};
use crate::catalog::Catalog;
use crate::fetch::Location;
use crate::model::version::Version;

/// NVIDIA's compiler wheels, by CUDA major.
pub const PROJECTS: &[(u32, &str)] = &[
    (11, "nvidia-cuda-nvcc-cu11"),
    (12, "nvidia-cuda-nvcc-cu12"),
    (13, "nvidia-cuda-nvcc"),
];

/// The largest ptxas read (13.5.37's is 50.7 MB; 12.8.93's 31.9 MB).
const MAX_PTXAS: u64 = 128 << 20;

/// What one series' compiler compiles for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompilerObs {
    /// The series (`12.8`).
    pub series: Version,
    /// `nvidia-cuda-nvcc-cu12`.
    pub package: String,
    /// The wheel's version (`12.8.93`), the compiler's own.
    pub version: Version,
    /// The wheel read.
    pub wheel: WheelFile,
    /// The project page.
    pub page: String,
    /// What it generates code for (SASS), and the virtual architectures it takes (PTX).
    pub targets: Targets,
}

impl CompilerObs {
    /// `nvidia-cuda-nvcc-cu12 12.8.93`: the value of a series' `compiler` key.
    pub fn name(&self) -> String {
        format!("{} {}", self.package, self.version)
    }
}

/// The targets in ptxas's own table: every `lto_NN` name in the binary (`lto_100`, not the
/// feature-set spellings `lto_100a` / `lto_100f`). `NN` is major × 10 + minor.
pub fn targets_of_ptxas(bin: &[u8]) -> Result<Targets, String> {
    if bin.get(..4) != Some(b"\x7fELF") {
        return Err("ptxas is not an ELF file".into());
    }
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut found = BTreeSet::new();
    let mut i = 0;
    while let Some(off) = bin[i..].windows(4).position(|w| w == b"lto_") {
        let at = i + off;
        i = at + 4;
        if at > 0 && word(bin[at - 1]) {
            continue;
        }
        let digits = bin[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        if !(2..=4).contains(&digits) || bin.get(i + digits).is_some_and(|b| word(*b)) {
            continue;
        }
        let n: u32 = std::str::from_utf8(&bin[i..i + digits])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or("unreadable target number")?;
        if let Some(v) = Version::parse(&format!("{}.{}", n / 10, n % 10)) {
            found.insert(v);
        }
    }
    // A real ptxas lists a dozen or more; a handful is a file that only mentions the names.
    if found.len() < 4 {
        return Err(format!(
            "no target table in the binary ({} lto_ names)",
            found.len()
        ));
    }
    Ok(Targets {
        ptx: found.clone(),
        sass: found,
    })
}

/// The newest final build of every series on the project's page.
fn newest_per_series(p: &Project) -> Vec<(Version, Version)> {
    let mut out: Vec<(Version, Version)> = Vec::new();
    for v in p.releases() {
        let series = Version::parse(&v.prefix(2)).expect("a prefix is a version");
        match out.iter_mut().find(|(s, _)| *s == series) {
            Some(slot) if slot.1 < v => slot.1 = v,
            Some(_) => {}
            None => out.push((series, v)),
        }
    }
    out
}

/// Cached results, by the wheel's claimed sha256 and its URL ([`super::fatbin::cache_stem`]).
struct Cache {
    dir: PathBuf,
}

impl Cache {
    fn path(&self, w: &WheelFile) -> Option<PathBuf> {
        let stem = super::fatbin::cache_stem(w.sha256.as_deref()?, &w.url.to_string())?;
        Some(self.dir.join(format!("{stem}-ptxas.json")))
    }

    fn get(&self, w: &WheelFile) -> Option<Targets> {
        let b = fs_err::read(self.path(w)?).ok()?;
        serde_json::from_slice(&b).ok()
    }

    fn put(&self, w: &WheelFile, t: &Targets) {
        let Some(path) = self.path(w) else { return };
        // A cache that cannot be written only costs the next run the same bytes again.
        let _ = crate::world::fs::write_atomic(
            &path,
            &serde_json::to_vec(t).unwrap_or_default(),
            crate::world::fs::Temp::Unique,
            crate::world::fs::Durability::Fast,
        );
    }
}

/// Reads the compiler of every catalogued series whose row does not already name that very
/// compiler build: newest series first, within `budget` bytes of ptxas (results cached under
/// `cache_dir` by the wheel's claimed sha256 and its URL, so never across indexes).
pub fn read(
    net: &mut Net<'_>,
    index: &Location,
    catalog: &Catalog,
    budget: u64,
    cache_dir: PathBuf,
    notes: &mut Vec<String>,
) -> Result<Vec<CompilerObs>, UpdateError> {
    let cache = Cache { dir: cache_dir };
    let mut left = budget;
    let mut out = Vec::new();
    let mut any_page = false;
    for (major, package) in PROJECTS {
        let Some(p) = pypi::project(net, index, package)? else {
            notes.push(format!(
                "the index has no {package}, so no CUDA {major}.x series' targets were read from a compiler"
            ));
            continue;
        };
        any_page = true;
        let mut series = newest_per_series(&p);
        series.sort_by(|a, b| b.0.cmp(&a.0));
        for (s, v) in series {
            let catalogued = catalog
                .cuda
                .release
                .iter()
                .any(|r| r.version.prefix(2) == s.to_string());
            if !catalogued || s.major() != *major {
                continue;
            }
            let name = format!("{package} {v}");
            let row = catalog.cuda.series.iter().find(|r| r.version == s);
            if row.is_some_and(|r| r.compiler.as_deref() == Some(name.as_str())) {
                continue;
            }
            let Some(w) = p.wheel(&v) else { continue };
            let targets = match cache.get(w) {
                Some(t) => t,
                None => {
                    let Some(entry) = zip::find(net, &w.url, &|e| e.name.ends_with("/bin/ptxas"))?
                    else {
                        notes.push(format!(
                            "{}: no bin/ptxas in the wheel, so CUDA {s}'s targets were not read",
                            w.filename
                        ));
                        continue;
                    };
                    if entry.compressed > left {
                        notes.push(format!(
                            "{}: reading its ptxas would fetch {} bytes, {left} are left of the run's budget (--fatbin-budget): CUDA {s} keeps its row; a later run reads it",
                            w.filename, entry.compressed
                        ));
                        continue;
                    }
                    left -= entry.compressed;
                    let bin = zip::read(net, &w.url, &entry, MAX_PTXAS)?;
                    let t = targets_of_ptxas(&bin).map_err(|message| UpdateError::BadData {
                        url: format!("{}#{}", w.url, entry.name),
                        message,
                    })?;
                    cache.put(w, &t);
                    t
                }
            };
            out.push(CompilerObs {
                series: s,
                package: (*package).to_owned(),
                version: v,
                wheel: w.clone(),
                page: p.page.to_string(),
                targets,
            });
        }
    }
    if !any_page {
        notes.push(
            "no compiler wheel was found on the index: every [[series]] keeps its targets".into(),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elf(body: &[u8]) -> Vec<u8> {
        let mut b = b"\x7fELF\x02\x01\x01\0".to_vec();
        b.extend_from_slice(body);
        b
    }

    #[test]
    fn the_lto_table_is_the_target_list_and_feature_spellings_are_not_targets() {
        // The layout of a real ptxas: NUL-separated names, base and feature-set spellings.
        let t = targets_of_ptxas(&elf(
            b"\0sm_20\0lto_50\0lto_75\0lto_90\0lto_90a\0lto_100\0lto_100f\0lto_121\0compute_30\0",
        ))
        .unwrap();
        assert_eq!(
            t.describe(),
            "sm_50 sm_75 sm_90 sm_100 sm_121 + PTX sm_50 sm_75 sm_90 sm_100 sm_121"
        );
        // Words that merely contain the letters are not names.
        let t = targets_of_ptxas(&elf(
            b"\0xlto_80\0lto_80\0lto_86\0lto_89\0lto_90\0lto_9000000\0",
        ))
        .unwrap();
        assert_eq!(t.sass.len(), 4);
    }

    #[test]
    fn a_file_without_the_table_is_refused() {
        assert!(targets_of_ptxas(b"#!/bin/sh\nlto_80 lto_86 lto_89 lto_90\n").is_err());
        assert!(targets_of_ptxas(&elf(b"lto_80\0")).is_err());
        assert!(targets_of_ptxas(b"").is_err());
    }
}
