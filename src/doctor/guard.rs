//! The guard of each venv cudaup installed ([`crate::install::guard`]): a planned framework
//! build another one replaced, named with the installer that did it (the `.dist-info`'s
//! `INSTALLER`) and when (its mtime); and guard files changed since they were written.

use crate::install::guard::{self, GuardRecord};
use crate::model::finding::Severity;

use super::{Diagnosis, Inputs};

/// One diagnosis per guarded venv whose planned builds were replaced, and per venv whose guard
/// files were changed.
pub fn check(inputs: &Inputs<'_>) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    for (path, r) in &inputs.receipts.venvs {
        let Some(record) = &r.guard else {
            continue;
        };
        let venv = r.venv.display();
        let drift = guard::drift(&r.venv, record);
        if !drift.is_empty() {
            let mut d = Diagnosis::new(
                "framework-replaced",
                Severity::Error,
                format!(
                    "{venv} no longer has the framework build cudaup installed: {}",
                    drift
                        .iter()
                        .map(guard::Drift::describe)
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            )
            .evidence(format!("receipt {} pins {}", path.display(), pins(record)));
            for x in &drift {
                if let Some(i) = &x.now {
                    d = d.evidence(format!(
                        "{}'s .dist-info: Version {}, INSTALLER {}",
                        x.pin.name,
                        i.version,
                        i.installer.as_deref().unwrap_or("(none)")
                    ));
                }
            }
            out.push(d.fix(record.restore.clone()));
        }
        let changed: Vec<String> = guard::changed(record)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        if !changed.is_empty() {
            out.push(
                Diagnosis::new(
                    "guard-changed",
                    Severity::Info,
                    format!(
                        "the guard of {venv} was changed or removed by hand: {}",
                        changed.join(", ")
                    ),
                )
                .evidence(format!("receipt {} records their sha256", path.display()))
                .fix(format!("cudaup guard on {venv}   # writes them again")),
            );
        }
    }
    out
}

fn pins(record: &GuardRecord) -> String {
    record
        .pins
        .iter()
        .map(guard::Pin::requirement)
        .collect::<Vec<_>>()
        .join(", ")
}
