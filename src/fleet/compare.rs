//! Comparing hosts: grouping the rows by GPU architecture set and flagging every host whose
//! stack differs from the majority of its group.

use std::collections::BTreeMap;

use super::{Flag, FleetReport, Group, HostRow, Stack, COMPARISON_NOTE, SCHEMA_VERSION};

/// Sorts the rows, groups them by architecture set, and flags every host whose stack differs
/// from the majority of its group (every host of a group whose stacks disagree without a
/// majority). Hosts without a stack (failed or missing installs) are not compared.
pub fn aggregate(mut rows: Vec<HostRow>) -> FleetReport {
    rows.sort_by(|a, b| a.host.cmp(&b.host));
    let mut by_arch: BTreeMap<Vec<String>, Vec<usize>> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        if r.stack.is_some() {
            by_arch.entry(r.architectures.clone()).or_default().push(i);
        }
    }
    let mut groups = Vec::new();
    let mut flagged = Vec::new();
    for (arch, members) in by_arch {
        let mut counts: BTreeMap<&Stack, usize> = BTreeMap::new();
        for &i in &members {
            *counts
                .entry(rows[i].stack.as_ref().expect("grouped"))
                .or_default() += 1;
        }
        let (top, top_count) = counts
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(s, n)| ((*s).clone(), *n))
            .expect("a group has a host");
        let n = members.len();
        let majority = (n > 1 && top_count * 2 > n).then_some(top);
        let arch_name = if arch.is_empty() {
            "without an NVIDIA GPU".to_owned()
        } else {
            arch.join(" + ")
        };
        if n > 1 && counts.len() > 1 {
            for &i in &members {
                let stack = rows[i].stack.clone().expect("grouped");
                if majority.as_ref() == Some(&stack) {
                    continue;
                }
                let message = match &majority {
                    Some(m) => format!(
                        "differs from the majority of the {n} {arch_name} hosts ({top_count} have {}): this host has {}",
                        m.describe(),
                        stack.describe()
                    ),
                    None => format!(
                        "the {n} {arch_name} hosts have no majority stack; this host has {}",
                        stack.describe()
                    ),
                };
                rows[i].differs_from_majority = true;
                flagged.push(Flag {
                    host: rows[i].host.clone(),
                    architectures: arch.clone(),
                    stack,
                    majority: majority.clone(),
                    message,
                });
            }
        }
        groups.push(Group {
            architectures: arch,
            hosts: members.iter().map(|&i| rows[i].host.clone()).collect(),
            majority_count: if majority.is_some() { top_count } else { 0 },
            majority,
        });
    }
    flagged.sort_by(|a, b| a.host.cmp(&b.host));
    FleetReport {
        schema_version: SCHEMA_VERSION,
        ok: !rows.is_empty() && rows.iter().all(HostRow::healthy),
        hosts: rows,
        groups,
        flagged,
        note: COMPARISON_NOTE.into(),
        lock: None,
    }
}
