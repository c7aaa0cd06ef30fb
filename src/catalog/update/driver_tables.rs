//! NVIDIA's supported-GPU tables (part `driver-tables`): the "Compatible GPUs" table in the README
//! of each release tag of NVIDIA/open-gpu-kernel-modules, read from `<base>/<release>/README.md`
//! (raw.githubusercontent.com's layout, or a mirror or directory of it), for the releases the
//! catalog names (branch `latest`, the drivers toolkits ship with, floors) that
//! driver_support.toml has not read yet. The file is rewritten whole from its runs plus the new
//! tables, in the layout `scripts/gen_driver_support.py` writes, so reading nothing new changes
//! no byte.

use std::collections::{BTreeMap, BTreeSet};

use super::{Net, UpdateError};
use crate::catalog::{Catalog, DriverSupport};
use crate::fetch::Location;
use crate::model::version::Version;

/// Where NVIDIA's READMEs are served by release tag.
pub const TABLES_BASE: &str = "https://raw.githubusercontent.com/NVIDIA/open-gpu-kernel-modules";

/// The public page a release's table is cited by.
fn cite(release: &Version) -> String {
    format!("https://github.com/NVIDIA/open-gpu-kernel-modules/blob/{release}/README.md")
}

/// PCI id (`10de:2d05`) → product name, of one release's table.
pub type Table = BTreeMap<String, String>;

/// The table of one README: every `| Name | DDDD [VVVV SSSS] |` row after the "Compatible GPUs"
/// heading; a device counts as listed when any row names it, with its first row's name.
pub fn parse(readme: &str) -> Result<Table, String> {
    let at = readme
        .find("## Compatible GPUs")
        .ok_or("no \"Compatible GPUs\" section")?;
    let mut out = Table::new();
    for line in readme[at..].lines() {
        let cells: Vec<&str> = line.trim().split('|').map(str::trim).collect();
        // `| name | ids |` splits into ["", name, ids, ""].
        let [first, name, ids, last] = cells.as_slice() else {
            continue;
        };
        let words: Vec<&str> = ids.split_whitespace().collect();
        let hex = |w: &&str| w.len() == 4 && w.chars().all(|c| c.is_ascii_hexdigit());
        if !first.is_empty()
            || !last.is_empty()
            || name.is_empty()
            || words.is_empty()
            || words.len() > 3
            || !words.iter().all(hex)
        {
            continue;
        }
        out.entry(format!("10de:{}", words[0].to_ascii_lowercase()))
            .or_insert_with(|| (*name).to_owned());
    }
    if out.is_empty() {
        return Err("the \"Compatible GPUs\" section has no table rows".into());
    }
    Ok(out)
}

/// The releases the catalog names whose tables have not been read: newer than the oldest table
/// read (older READMEs have none), oldest first.
pub fn candidates(catalog: &Catalog) -> Vec<Version> {
    let t = &catalog.driver_support;
    let read: BTreeSet<&Version> = t.release.iter().map(|r| &r.version).collect();
    let Some(oldest) = read.iter().next().map(|v| v.major()) else {
        return Vec::new();
    };
    let named = catalog
        .drivers
        .branch
        .iter()
        .filter_map(|b| b.latest.clone())
        .chain(
            catalog
                .cuda
                .release
                .iter()
                .filter_map(|r| r.driver_linux.clone()),
        )
        .chain(
            catalog
                .drivers
                .floor
                .iter()
                .flat_map(|f| f.min_versions.iter().cloned().chain(f.min_version.clone())),
        );
    let mut out: Vec<Version> = named
        .filter(|v| v.major() >= oldest && v.parts().len() > 1 && !read.contains(v))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Reads the tables of [`candidates`] under `base`. A release with no README there (no such tag:
/// a toolkit's runfile driver that was never published on GitHub) is a note; a README without the
/// table is bad data.
pub fn read(
    net: &mut Net<'_>,
    base: &Location,
    catalog: &Catalog,
    notes: &mut Vec<String>,
) -> Result<Vec<(Version, Table)>, UpdateError> {
    let mut out = Vec::new();
    for v in candidates(catalog) {
        let loc = base.join(&format!("{v}/README.md"));
        let Some(bytes) = net.get_optional(&loc, None)? else {
            notes.push(format!(
                "driver {v}: no README at {loc}, so its supported-GPU table was not read"
            ));
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let table = parse(&text).map_err(|message| UpdateError::BadData {
            url: loc.to_string(),
            message,
        })?;
        out.push((v, table));
    }
    Ok(out)
}

/// Every release's table as the file records it.
fn tables_of(t: &DriverSupport) -> BTreeMap<Version, Table> {
    t.release
        .iter()
        .map(|r| {
            let table = t
                .gpu
                .iter()
                .filter(|g| g.lists(&r.version))
                .map(|g| (g.pci_id.clone(), g.name.clone()))
                .collect();
            (r.version.clone(), table)
        })
        .collect()
}

const HEADER: &str =
    "# NVIDIA's supported-GPU tables: which driver releases list each GPU. Generated by
# scripts/gen_driver_support.py from the \"Compatible GPUs\" table in the README of every release
# tag of https://github.com/NVIDIA/open-gpu-kernel-modules (one commit per driver release; the same
# data as the driver's supported-gpus.json). The tables list Turing and newer GPUs only; older GPUs
# are judged by drivers.toml's architecture windows. `cudaup manifests update` adds the releases the
# catalog names that no [[release]] row has read yet. Schema: manifests/README.md.
schema_version = 1
";

/// The text of driver_support.toml for the tables in `t` and `new`, and one line per release
/// added.
pub fn merged(t: &DriverSupport, new: &[(Version, Table)]) -> (String, Vec<String>) {
    let mut tables = tables_of(t);
    let mut changes = Vec::new();
    for (v, table) in new {
        let newly: Vec<&str> = table
            .keys()
            .filter(|id| !t.gpu.iter().any(|g| g.pci_id == **id))
            .map(String::as_str)
            .collect();
        changes.push(format!(
            "driver_support.toml: driver {v}'s table read ({} GPUs{})",
            table.len(),
            if newly.is_empty() {
                String::new()
            } else {
                format!("; first listed anywhere: {}", newly.join(", "))
            }
        ));
        tables.insert(v.clone(), table.clone());
    }
    (render(&tables), changes)
}

/// The file for these tables, byte for byte what the generator writes.
fn render(tables: &BTreeMap<Version, Table>) -> String {
    let mut out = String::from(HEADER);
    for v in tables.keys() {
        out.push_str(&format!(
            "\n[[release]]\nversion = \"{v}\"\nsource = \"{}\"\n",
            cite(v)
        ));
    }
    let mut ids: Vec<&String> = tables.values().flat_map(|t| t.keys()).collect();
    ids.sort_by_key(|id| u32::from_str_radix(id.get(5..).unwrap_or(""), 16).unwrap_or(u32::MAX));
    ids.dedup();
    for id in ids {
        let listing: Vec<(&Version, &String)> = tables
            .iter()
            .filter_map(|(v, t)| t.get(id).map(|n| (v, n)))
            .collect();
        let mut runs: Vec<(Version, Version)> = Vec::new();
        let mut open: Option<(Version, Version)> = None;
        for (v, t) in tables {
            let inside = t.contains_key(id);
            if let Some((a, b)) = open.take() {
                if inside && a.major() == v.major() {
                    open = Some((a, v.clone()));
                    continue;
                }
                runs.push((a, b));
            }
            if inside {
                open = Some((v.clone(), v.clone()));
            }
        }
        runs.extend(open);
        let run_text: Vec<String> = runs
            .iter()
            .map(|(a, b)| {
                if a == b {
                    format!("\"{a}\"")
                } else {
                    format!("\"{a}..{b}\"")
                }
            })
            .collect();
        let (Some((first, _)), Some((newest, name))) = (listing.first(), listing.last()) else {
            continue;
        };
        out.push_str(&format!(
            "\n[[gpu]]\npci_id = \"{id}\"\nname = \"{}\"\nlisted = [{}]\nsource = \"{} (first release listing it); {} (newest)\"\n",
            name.replace('\\', "\\\\").replace('"', "\\\""),
            run_text.join(", "),
            cite(first),
            cite(newest)
        ));
    }
    out
}

#[cfg(test)]
mod tests;
