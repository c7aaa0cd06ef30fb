//! Which driver branches and releases can drive the planned GPUs, and which to prefer: the
//! architecture windows and the finer per-GPU floors of drivers.toml, NVIDIA's end-of-life dates,
//! and the branch kinds each class of GPU should get (LTS for data-center GPUs).

use crate::catalog::{Branch, Catalog, Date, Listing, OpenModule, Preference};
use crate::model::version::Version;

use super::Target;

/// The newest driver release of a branch that cudaup knows: the branch row's `latest` (a cited
/// point release), else the driver the newest CUDA release of that branch ships with.
pub fn newest_of_branch(catalog: &Catalog, branch: u32) -> Option<Version> {
    let shipped = catalog
        .cuda
        .release
        .iter()
        .filter_map(|r| r.driver_linux.as_ref())
        .filter(|d| d.major() == branch)
        .max()
        .cloned();
    let stated = catalog
        .drivers
        .branch(branch)
        .and_then(|b| b.latest.clone());
    match (stated, shipped) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// Why `branch` cannot drive one of the targets, if it cannot: the architecture's window, or a
/// GPU's floor that no release of the branch meets.
pub fn branch_problem(catalog: &Catalog, targets: &[Target], branch: u32) -> Option<String> {
    problem(catalog, targets, branch, None)
}

/// Why driver `version` cannot drive one of the targets, if it cannot (the branch's problems,
/// and floors within a branch: HGX B200 needs 570.133.20, not any 570).
pub fn driver_problem(catalog: &Catalog, targets: &[Target], version: &Version) -> Option<String> {
    problem(catalog, targets, version.major(), Some(version))
}

fn problem(
    catalog: &Catalog,
    targets: &[Target],
    branch: u32,
    version: Option<&Version>,
) -> Option<String> {
    targets.iter().find_map(|t| {
        if let Some(arch) = t
            .architecture
            .as_deref()
            .and_then(|a| catalog.drivers.architecture(a))
        {
            if let Some(last) = arch.last_branch.filter(|l| branch > *l) {
                return Some(format!(
                    "{} ({}) is supported up to branch {last} only",
                    t.name, arch.name
                ));
            }
            if let Some(min) = arch.min_branch.filter(|m| branch < *m) {
                return Some(format!(
                    "{} ({}) needs branch {min} or newer",
                    t.name, arch.name
                ));
            }
        }
        if let Some(why) = table_problem(catalog, t, branch, version) {
            return Some(why);
        }
        catalog
            .drivers
            .floor
            .iter()
            .filter(|f| f.applies(&t.name, &t.cc))
            .find_map(|f| f.problem(branch, version))
            .map(|why| format!("{} (compute capability {}) {why}", t.name, t.cc))
    })
}

/// Whether the open kernel module of driver `version` leaves out a target that could use either
/// flavour (its table does not list it), so the proprietary flavour must drive it.
pub fn open_module_lacks(catalog: &Catalog, targets: &[Target], version: &Version) -> bool {
    let table = &catalog.driver_support;
    targets.iter().any(|t| {
        super::driver::open_flavour(catalog, t) == Some(OpenModule::Supported)
            && matches!(
                table.listing(
                    &table.find(t.pci_id.as_deref(), &t.name),
                    version.major(),
                    Some(version)
                ),
                Listing::NotListed { .. }
            )
    })
}

/// Why NVIDIA's supported-GPU table of the release (or of every read release of `branch`) says
/// it does not drive `t`, naming the first release of each branch that lists it. The table is
/// that of the open kernel modules: it decides for GPUs only the open module drives (Blackwell
/// and newer, Grace Hopper); a Turing-to-Hopper GPU it leaves out is driven by the proprietary
/// module, which has no such table here (a Tesla T4 is listed only from 575, yet R535 drives
/// it), and the architecture windows and floors decide for it.
fn table_problem(
    catalog: &Catalog,
    t: &Target,
    branch: u32,
    version: Option<&Version>,
) -> Option<String> {
    if super::driver::open_flavour(catalog, t) != Some(OpenModule::Required) {
        return None;
    }
    let table = &catalog.driver_support;
    let rows = table.find(t.pci_id.as_deref(), &t.name);
    let Listing::NotListed { judged_by, first } = table.listing(&rows, branch, version) else {
        return None;
    };
    let id = rows
        .first()
        .map_or_else(|| t.name.clone(), |r| r.pci_id.clone());
    let what = match version {
        Some(v) if *v == judged_by => format!("NVIDIA's supported-GPU table of driver {v}"),
        Some(v) => format!(
            "NVIDIA's supported-GPU table of driver {judged_by} (the newest read at or below {v})"
        ),
        None => format!("no supported-GPU table of branch {branch} (read up to {judged_by})"),
    };
    let firsts = if first.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = first.iter().map(|f| f.to_string()).collect();
        format!(
            "; the first release of each branch that lists it: {}",
            list.join(", ")
        )
    };
    Some(format!("{} ({id}) is not in {what}{firsts}", t.name))
}

/// The branch-kind preference that applies to the targets: the first class (data-center) that
/// covers one of them, else the catch-all class.
pub fn preference<'c>(catalog: &'c Catalog, targets: &[Target]) -> Option<&'c Preference> {
    let classes = &catalog.drivers.preference;
    classes
        .iter()
        .filter(|p| !p.gpus.is_empty())
        .find(|p| targets.iter().any(|t| p.covers(&t.name)))
        .or_else(|| classes.iter().find(|p| p.gpus.is_empty()))
}

/// The branches to try when installing a driver, best first: branches still supported before
/// ended ones, then the kinds the GPUs' class prefers, then the newest. `any_kind` (the `latest`
/// policy) orders supported branches by number alone.
pub fn install_order<'c>(
    catalog: &'c Catalog,
    targets: &[Target],
    today: &Date,
    any_kind: bool,
) -> Vec<&'c Branch> {
    let pref = preference(catalog, targets);
    let rank = |b: &Branch| -> usize {
        match pref {
            _ if any_kind => 0,
            Some(p) => p
                .kinds
                .iter()
                .position(|k| *k == b.kind)
                .unwrap_or(p.kinds.len()),
            None => usize::from(!matches!(b.kind.as_str(), "production" | "lts")),
        }
    };
    let mut order: Vec<&Branch> = catalog.drivers.branch.iter().collect();
    order.sort_by_key(|b| (b.ended(today), rank(b), std::cmp::Reverse(b.branch)));
    order
}

/// Why the plan picks `branch` when installing: its kind and support window, and the class
/// preference that ranked it.
pub fn install_reason(catalog: &Catalog, targets: &[Target], b: &Branch, today: &Date) -> String {
    let mut why = format!("branch {} ({})", b.branch, b.describe(today));
    if let Some(p) = preference(catalog, targets).filter(|p| p.kinds.first() == Some(&b.kind)) {
        why.push_str(&format!(": {}", p.why));
    }
    if b.ended(today) {
        why.push_str("; no supported branch drives every GPU");
    }
    why
}

/// A warning when `version`'s branch is past its end of life, naming the supported branch a
/// driver install would take instead.
pub fn eol_warning(
    catalog: &Catalog,
    targets: &[Target],
    version: &Version,
    today: &Date,
) -> Option<String> {
    let branch = version.major();
    let eol = match catalog.drivers.branch(branch) {
        Some(b) if b.ended(today) => b.eol.map(|e| e.human()).unwrap_or_default(),
        Some(_) => return None,
        // A branch the catalog has no row for: ended when NVIDIA's list of supported branches
        // left it out.
        None => {
            let u = catalog
                .drivers
                .unlisted_ended
                .as_ref()
                .filter(|u| branch < u.before && u.eol.days() < today.days())?;
            format!("{} at the latest", u.eol.human())
        }
    };
    // A month reads "in July 2024", a day "on 2024-07-20".
    let eol = if eol.contains('-') {
        format!("on {eol}")
    } else {
        format!("in {eol}")
    };
    let instead = install_order(catalog, targets, today, false)
        .into_iter()
        .filter(|c| !c.ended(today) && c.branch != branch)
        .find(|c| {
            branch_problem(catalog, targets, c.branch).is_none()
                && newest_of_branch(catalog, c.branch).is_some()
        });
    Some(match instead {
        Some(c) => format!(
            "driver {version}: branch {branch} reached its end of life {eol}, so NVIDIA no longer ships fixes for it; branch {} ({}) is supported: `--driver {}` plans it",
            c.branch,
            c.describe(today),
            newest_of_branch(catalog, c.branch).map(|v| v.to_string()).unwrap_or_default()
        ),
        None => format!(
            "driver {version}: branch {branch} reached its end of life {eol}, and no supported branch drives every GPU here"
        ),
    })
}
