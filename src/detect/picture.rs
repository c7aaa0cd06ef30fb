//! A machine's picture: the System document given with `--system` (a `detect --json` output, or
//! a hand-written one with `os` and `gpus`), read and completed from the catalog's GPU table the
//! way `detect` completes a PCI scan, for plan, install, mirror create and container setup to
//! plan for another machine.

use std::path::{Path, PathBuf};

use crate::catalog::{Catalog, GpuTable};
use crate::model::system::System;

/// A picture that cannot be used (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("system description {}: {message}", path.display())]
pub struct PictureError {
    /// The file given on the command line.
    pub path: PathBuf,
    /// What is wrong with it.
    pub message: String,
}

/// Reads a System document given with `--system`, completing its GPUs from the `gpus.toml` of
/// the catalog in effect (a refreshed or `--manifests` one knows GPUs the embedded one does not;
/// see [`load_system_with`]).
pub fn load_system(path: &Path, catalog: &Catalog) -> Result<System, PictureError> {
    load_system_with(path, &catalog.gpus)
}

/// Reads a System document, completing each GPU from `table` the way `detect` does for a PCI
/// scan: a GPU given by its `pci_id` alone (`{"index": 0, "vendor": "nvidia", "pci_id":
/// "10de:2335"}`, or even without `index` and `vendor`) gets the name, compute capability and
/// architecture the table knows; what the file states wins. A GPU given by its name alone
/// (`{"name": "NVIDIA GeForce RTX 4090"}`) is looked up by that name. A GPU the table does not
/// know and the file gives no name for is refused, naming its PCI id.
pub fn load_system_with(path: &Path, table: &GpuTable) -> Result<System, PictureError> {
    let bad = |message: String| PictureError {
        path: path.to_owned(),
        message,
    };
    let text =
        fs_err::read_to_string(path).map_err(|e| bad(format!("cannot read it: {}", e.kind())))?;
    // serde_json's own words end with " at line L column C": said once, in front.
    let at = |e: &serde_json::Error| {
        let words = e.to_string();
        let tail = format!(" at line {} column {}", e.line(), e.column());
        format!(
            "line {}, column {}: {}",
            e.line(),
            e.column(),
            words.strip_suffix(&tail).unwrap_or(&words)
        )
    };
    let mut system: System = match serde_json::from_str(&text) {
        Ok(s) => s,
        Err(first) => {
            let Ok(mut value) = serde_json::from_str::<serde_json::Value>(&text) else {
                return Err(bad(at(&first)));
            };
            name_gpus_by_pci_id(&mut value, table).map_err(bad)?;
            // Still wrong after the table's help: the parser's own words, with its position.
            serde_json::from_value(value).map_err(|_| bad(at(&first)))?
        }
    };
    for (i, gpu) in system
        .gpus
        .iter_mut()
        .enumerate()
        .filter(|(_, g)| g.vendor == crate::model::system::Vendor::Nvidia)
    {
        // Given by its name alone: the table's PCI id for that name, then as a PCI scan.
        if gpu.pci_id.is_none() && gpu.compute_capability.is_none() {
            if let Some((id, _)) = table
                .by_name(&gpu.name)
                .map_err(|e| bad(format!("gpus[{i}]: {e}")))?
            {
                gpu.pci_id = Some(id.to_owned());
            }
        }
        super::gpu::complete_from_table(gpu, table);
    }
    Ok(system)
}

/// Fills the `index`, `vendor` and `name` a GPU entry with a `pci_id` may leave out; an entry
/// with a `name` and no `pci_id` gets the PCI id the table has for that name
/// (`"NVIDIA GeForce RTX 4090"`), as nvidia-smi names it.
fn name_gpus_by_pci_id(value: &mut serde_json::Value, table: &GpuTable) -> Result<(), String> {
    let Some(gpus) = value.get_mut("gpus").and_then(|g| g.as_array_mut()) else {
        return Ok(());
    };
    for (i, gpu) in gpus.iter_mut().enumerate() {
        let Some(gpu) = gpu.as_object_mut() else {
            continue;
        };
        let by_name = match (gpu.get("pci_id"), gpu.get("name").and_then(|n| n.as_str())) {
            (None, Some(name)) => table
                .by_name(name)
                .map_err(|e| format!("gpus[{i}]: {e}"))?
                .map(|(id, _)| id.to_owned()),
            _ => None,
        };
        if let Some(id) = &by_name {
            gpu.insert("pci_id".into(), id.as_str().into());
        }
        let Some(pci_id) = gpu
            .get("pci_id")
            .and_then(|p| p.as_str())
            .map(str::to_owned)
        else {
            continue;
        };
        let known = table.lookup(&pci_id);
        gpu.entry("index").or_insert_with(|| i.into());
        if !gpu.contains_key("vendor") {
            let vendor = match pci_id.to_ascii_lowercase().split(':').next() {
                Some("10de") => "nvidia",
                Some("1002") => "amd",
                Some("8086") => "intel",
                _ => return Err(format!("gpus[{i}]: PCI id {pci_id}: give its `vendor`")),
            };
            gpu.insert("vendor".into(), vendor.into());
        }
        if !gpu.contains_key("name") {
            let Some(k) = &known else {
                return Err(format!(
                    "gpus[{i}]: PCI id {pci_id} is not in the catalog's gpus.toml: give its `name` and `compute_capability`"
                ));
            };
            gpu.insert("name".into(), format!("NVIDIA {}", k.name).into());
        }
    }
    Ok(())
}
