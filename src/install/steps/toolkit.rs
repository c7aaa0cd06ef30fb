//! The toolkit step: records what the env step will do (so `repair` can finish it should this run
//! be killed), installs the archives `locate` resolved, registers the receipt, and asks the new
//! `nvcc` for its version.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::fetch::Fetcher;
use crate::install::env::Intent;
use crate::install::{Receipt, Resolved, ToolkitSpec};
use crate::world::runner::Runner;

use super::StepError;

/// What the toolkit step did.
#[derive(Debug, Clone)]
pub struct ToolkitDone {
    /// The receipt written into the prefix.
    pub receipt: Receipt,
    /// What `nvcc --version` answered, when it ran.
    pub banner: Option<String>,
    /// Built for another machine architecture: nvcc was not run here.
    pub foreign: bool,
    /// The toolkit has a `bin/nvcc`.
    pub has_nvcc: bool,
}

/// Installs `spec` from `resolved` with `fetcher`; `intent` is the env step to come, recorded
/// in `home` first.
pub fn run(
    spec: &ToolkitSpec,
    resolved: &Resolved,
    fetcher: &Fetcher,
    intent: &Intent,
    home: &Path,
    runner: &dyn Runner,
) -> Result<ToolkitDone, StepError> {
    intent.record(home)?;
    let receipt = crate::install::install(fetcher, spec, &resolved.items).inspect_err(|_| {
        let _ = Intent::done(home);
    })?;
    crate::install::receipts::register(home, &receipt)?;
    let nvcc: PathBuf = crate::model::layout::Prefix::at(&spec.prefix).nvcc();
    // A toolkit for another architecture cannot run here.
    let foreign = spec.arch != std::env::consts::ARCH;
    let has_nvcc = nvcc.is_file();
    let banner = (has_nvcc && !foreign)
        .then(|| {
            runner
                .run(&nvcc, &["--version"], Duration::from_secs(30))
                .ok()
        })
        .flatten()
        .filter(|o| o.success())
        .and_then(|o| crate::detect::toolkits::parse_nvcc_version(&o.stdout));
    Ok(ToolkitDone {
        receipt,
        banner,
        foreign,
        has_nvcc,
    })
}
