//! Compiler observations → `[[series]]` rows of cuda.toml: each series' SASS and PTX targets as
//! its own compiler lists them, with the wheel as the source; a series the catalog has releases
//! of but no row for gets one, when its major's driver floor is catalogued (the `[[major]]` row
//! with its minor-version-compatibility source).

use super::compiler::CompilerObs;
use super::rows::{lit, lit_versions, Doc};
use crate::catalog::{Catalog, Date};
use crate::model::version::Version;

fn sm(v: &Version) -> String {
    format!("sm_{}{}", v.major(), v.minor())
}

fn source(o: &CompilerObs) -> String {
    format!(
        "{} ({}: the target table of its bin/ptxas, i.e. the --gpu-name values `ptxas --help` lists: {}; {})",
        o.wheel.url,
        o.name(),
        o.targets.sass.iter().map(sm).collect::<Vec<_>>().join(" "),
        o.page
    )
}

/// Writes what each compiler said into `doc` (cuda.toml).
pub fn apply(
    doc: &mut Doc,
    base: &Catalog,
    compilers: &[CompilerObs],
    today: Date,
    changes: &mut Vec<String>,
    notes: &mut Vec<String>,
) {
    for o in compilers {
        let (Some(min), Some(max)) = (o.targets.sass.first(), o.targets.sass.last()) else {
            continue;
        };
        let sass = lit_versions(&o.targets.sass);
        let ptx = lit_versions(&o.targets.ptx);
        let keys: Vec<(&str, String)> = vec![
            ("sm_min", lit(&min.to_string())),
            ("sm_max", lit(&max.to_string())),
            ("sass", sass),
            ("ptx", ptx),
            ("compiler", lit(&o.name())),
        ];
        let version = o.series.to_string();
        if let Some(row) = doc.find("series", "version", &version) {
            let mut changed = false;
            for (k, v) in &keys {
                changed |= doc.set(row, k, v);
            }
            if !changed {
                continue;
            }
            // The compiler's list is the whole truth: the curated exclusions go with the range.
            doc.remove(row, "sm_excluded");
            doc.set(row, "derived", &lit(&today.to_string()));
            doc.set(row, "source", &lit(&source(o)));
            let was = base.cuda.series.iter().find(|s| s.version == o.series);
            let lost: Vec<String> = was
                .map(|s| {
                    let mut caps: Vec<&Version> = base
                        .cuda
                        .family
                        .iter()
                        .flat_map(|f| &f.compute_capabilities)
                        .collect();
                    caps.sort();
                    caps.dedup();
                    caps.into_iter()
                        .filter(|c| s.builds_for(c) && !o.targets.sass.contains(*c))
                        .map(sm)
                        .collect()
                })
                .unwrap_or_default();
            changes.push(format!(
                "cuda.toml: series {version}: targets from {} ({}){}",
                o.name(),
                o.targets.describe(),
                if lost.is_empty() {
                    String::new()
                } else {
                    format!("; no longer claims {}", lost.join(" "))
                }
            ));
            continue;
        }
        if !base.cuda.major.iter().any(|m| m.major == o.series.major()) {
            notes.push(format!(
                "CUDA {version}: its compiler {} was read, but the catalog has no [[major]] driver floor for CUDA {}.x, so no series row was added",
                o.name(),
                o.series.major()
            ));
            continue;
        }
        let mut row = vec![("version", lit(&version))];
        row.extend(keys);
        row.push(("derived", lit(&today.to_string())));
        row.push((
            "source",
            lit(&format!(
                "{}; driver floor: the [[major]] {} row (minor-version compatibility)",
                source(o),
                o.series.major()
            )),
        ));
        let block = Doc::block("series", &row);
        match doc.position("series", "version", &o.series, false) {
            Some(at) => doc.insert(at, block),
            None => {
                // After the last series row, not at the end of the file.
                let last = doc.rows("series").last().copied();
                match last {
                    Some(r) => {
                        let mut b = vec![String::new()];
                        b.extend(block);
                        b.pop();
                        doc.insert(r.end, b);
                    }
                    None => doc.append(block),
                }
            }
        }
        changes.push(format!(
            "cuda.toml: + series {version} ({}: {})",
            o.name(),
            o.targets.describe()
        ));
    }
}
