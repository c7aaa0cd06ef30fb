//! `cudaup doctor --deep`: the full hash of every file of every toolkit cudaup installed,
//! against the sha256 its receipt records — the check `repair` makes before it restores
//! anything, without restoring anything.
//!
//! Plain `doctor` checks every receipt entry's existence and size and hashes only executables
//! and shared libraries ([`super::installed`]): fast enough to run often, blind to a header, a
//! static library or a data file edited in place at the same size (the unpacked cache shares
//! its files with the prefix through hard links, so such an edit also reaches the next install
//! of that version, which the cache's stat stamps catch only when the edit moved the mtime).
//! This hashes the rest, on all cores, and reports each file whose content differs, with
//! `cudaup repair --fix toolkit-files` as the fix (it hashes the same way, drops damaged cache
//! trees and puts the verified bytes back). What plain `doctor` already reports (a missing
//! file, another size, a changed executable) is left to its own findings.

use std::path::PathBuf;

use crate::install::receipt::{Receipt, ReceiptFile};
use crate::install::receipts::Receipts;
use crate::model::finding::Severity;

use super::installed::{hashed, inspect_all, Hash, Problem};
use super::{repair, Diagnosis};

/// How many changed files one finding names before it says "and N more".
const SHOWN: usize = 20;

/// Adds [`check`]'s findings to `report`, most severe first as the rest.
pub fn add_to(report: &mut super::Report, receipts: &Receipts) {
    report.findings.extend(check(receipts));
    report
        .findings
        .sort_by_key(|d| std::cmp::Reverse(d.severity()));
}

/// `toolkit-content-changed` for each toolkit with files whose content is not what cudaup
/// installed.
pub fn check(receipts: &Receipts) -> Vec<Diagnosis> {
    receipts
        .toolkits
        .iter()
        .filter(|(_, r)| r.prefix.is_dir())
        .filter_map(|(file, r)| toolkit(file, r))
        .collect()
}

fn toolkit(file: &std::path::Path, receipt: &Receipt) -> Option<Diagnosis> {
    // The files plain doctor does not hash: those with a recorded sha256 outside bin/ and the
    // shared libraries.
    let rest: Vec<ReceiptFile> = receipt
        .files
        .iter()
        .filter(|f| f.link.is_none() && f.sha256.is_some() && !hashed(&f.path))
        .cloned()
        .collect();
    let bytes: u64 = rest.iter().filter_map(|f| f.size).sum();
    let changed: Vec<(PathBuf, String)> = inspect_all(&receipt.prefix, &rest, Hash::All)
        .into_iter()
        .filter_map(|(path, problem)| match problem {
            // Missing, resized or no longer a file: plain doctor's findings say so.
            Problem::Changed(why)
                if why.starts_with("has sha256") || why.starts_with("cannot be read") =>
            {
                Some((path, why))
            }
            _ => None,
        })
        .collect();
    if changed.is_empty() {
        return None;
    }
    let prefix = &receipt.prefix;
    let mut d = Diagnosis::new(
        "toolkit-content-changed",
        Severity::Error,
        format!(
            "{} file(s) of the CUDA {} toolkit in {} hold other bytes than cudaup installed",
            changed.len(),
            receipt.cuda,
            prefix.display()
        ),
    )
    .evidence(format!(
        "receipt {}: {} more files hashed in full ({} MB: headers, static libraries, data)",
        file.display(),
        rest.len(),
        bytes / 1_000_000
    ));
    for (path, why) in changed.iter().take(SHOWN) {
        d = d.evidence(format!("{} {why}", prefix.join(path).display()));
    }
    if changed.len() > SHOWN {
        d = d.evidence(format!("… and {} more", changed.len() - SHOWN));
    }
    Some(d.fix(format!(
        "{}   # restores them from the verified download",
        repair("toolkit-files")
    )))
}

#[cfg(test)]
mod tests;
