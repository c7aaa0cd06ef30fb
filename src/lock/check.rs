//! `lock --check`: whether this machine has its part of the lock — the locked driver, a toolkit
//! of the locked release (and cuDNN) that cudaup installed, and a venv holding the locked
//! framework requirements. Each difference is one line.

use crate::install::receipts::Receipts;
use crate::model::system::System;

use super::Host;

/// What of `host` this machine (`system`, with cudaup's `receipts`) does not have.
pub fn differences(host: &Host, system: &System, receipts: &Receipts) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(d) = &host.driver {
        let here = system.driver.as_ref().map(|d| d.version.clone());
        if let (Some(want), false) = (&d.version, d.action == "skip") {
            if here.as_ref() != Some(want) {
                out.push(format!(
                    "driver {} (the lock: {want})",
                    here.as_deref().unwrap_or("none")
                ));
            }
        }
    }
    if let Some(cuda) = &host.cuda {
        let toolkits: Vec<&crate::install::Receipt> =
            receipts.toolkits.iter().map(|(_, r)| r).collect();
        match toolkits.iter().find(|r| &r.cuda == cuda) {
            None => out.push(format!(
                "CUDA toolkit {cuda}: not installed by cudaup here (installed: {})",
                list(toolkits.iter().map(|r| r.cuda.clone()))
            )),
            Some(r) if r.cudnn != host.cudnn => out.push(format!(
                "cuDNN {} with CUDA {cuda} (the lock: {})",
                r.cudnn.as_deref().unwrap_or("none"),
                host.cudnn.as_deref().unwrap_or("none")
            )),
            Some(_) => {}
        }
    }
    if let Some(f) = &host.framework {
        let has = |reqs: &[String]| f.requirements.iter().all(|r| reqs.contains(r));
        if !receipts
            .venvs
            .iter()
            .any(|(_, v)| has(&v.packages.requirements))
        {
            out.push(format!(
                "{} {}: no venv cudaup installed holds {} (venvs: {})",
                f.name,
                f.version,
                f.requirements.join(" "),
                list(
                    receipts
                        .venvs
                        .iter()
                        .map(|(_, v)| v.packages.requirements.join(" "))
                )
            ));
        }
    }
    out
}

fn list(items: impl Iterator<Item = String>) -> String {
    let all: Vec<String> = items.filter(|s| !s.is_empty()).collect();
    if all.is_empty() {
        "none".into()
    } else {
        all.join("; ")
    }
}
