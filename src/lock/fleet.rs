//! `fleet report DIR --lock FILE`: every host's collected reports held against its part of the
//! lock — which part its `system.json` is (or that the lock does not cover it), and where its
//! install report's driver, CUDA, cuDNN or framework differs from that part.

use crate::fleet::{HostFiles, HostRow, LockDrift, LockReport};
use crate::model::system::System;

use super::{Host, Lock};

/// The hosts of `rows` (with their `files`, matched by name) that drifted from `lock`.
pub fn drift(lock: &Lock, file: &str, files: &[HostFiles], rows: &[HostRow]) -> LockReport {
    let mut drifted = Vec::new();
    for row in rows {
        let system = files
            .iter()
            .find(|f| f.host == row.host)
            .and_then(|f| f.system.as_deref())
            .and_then(|t| serde_json::from_str::<System>(t).ok());
        let Some(system) = system else {
            drifted.push(LockDrift {
                host: row.host.clone(),
                lock_host: None,
                differences: vec![
                    "no readable system.json: which part of the lock it is cannot be told".into(),
                ],
            });
            continue;
        };
        match lock.host_for(&system, file) {
            Err(e) => drifted.push(LockDrift {
                host: row.host.clone(),
                lock_host: None,
                differences: vec![e.to_string()],
            }),
            Ok(host) => {
                let differences = differences(host, row);
                if !differences.is_empty() {
                    drifted.push(LockDrift {
                        host: row.host.clone(),
                        lock_host: Some(host.name.clone()),
                        differences,
                    });
                }
            }
        }
    }
    LockReport {
        file: file.to_owned(),
        drifted,
    }
}

/// Where `row`'s installed stack is not `host`.
fn differences(host: &Host, row: &HostRow) -> Vec<String> {
    let Some(stack) = &row.stack else {
        return vec![format!("no stack installed ({})", row.status)];
    };
    let mut out = Vec::new();
    let mut differ = |what: &str, have: Option<&str>, locked: Option<String>, same: bool| {
        if !same {
            out.push(format!(
                "{what} {} (the lock: {})",
                have.unwrap_or("none"),
                locked.as_deref().unwrap_or("none")
            ));
        }
    };
    if let Some(d) = host.driver.as_ref().filter(|d| d.action != "skip") {
        let have = row.driver.as_ref().and_then(|d| d.version.as_deref());
        differ(
            "driver",
            have,
            d.version.clone(),
            have == d.version.as_deref(),
        );
    }
    differ(
        "CUDA",
        stack.cuda.as_deref(),
        host.cuda.clone(),
        stack.cuda == host.cuda,
    );
    // The report adds the build's CUDA major (`9.17.0 (cuda12)`).
    let cudnn = stack
        .cudnn
        .as_deref()
        .map(|c| c.split(' ').next().unwrap_or(c));
    differ(
        "cuDNN",
        stack.cudnn.as_deref(),
        host.cudnn.clone(),
        cudnn == host.cudnn.as_deref(),
    );
    let locked = host.framework.as_ref().map(|f| match &f.variant {
        Some(v) if f.name != "tensorflow" => format!("{} {} ({v})", f.name, f.version),
        _ => format!("{} {}", f.name, f.version),
    });
    differ(
        "framework",
        stack.framework.as_deref(),
        locked.clone(),
        stack.framework == locked,
    );
    out
}
