//! The toolkit step: records what the env step will do (so `repair` can finish it should this run
//! be killed), installs the archives `locate` resolved, registers the receipt, and asks the new
//! `nvcc` for its version. `repair` installs the toolkit a receipt records again
//! ([`ToolkitStep::from_receipt`], [`repair`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::fetch::{FetchError, Fetcher, Location};
use crate::install::env::Intent;
use crate::install::{InstallError, Receipt, Resolved, Source, ToolkitSpec};
use crate::model::receipt::ReceiptSource;
use crate::model::version::Version;
use crate::world::runner::Runner;

use super::StepError;

/// A toolkit to install: what, from where, to where, and the archives or wheels that make it.
#[derive(Debug, Clone)]
pub struct ToolkitStep {
    /// The release, the prefix, the source.
    pub spec: ToolkitSpec,
    /// The archives or wheels, and what the source does not have.
    pub resolved: Resolved,
}

/// Why a receipt does not say what to install again.
#[derive(Debug, thiserror::Error)]
pub enum ReceiptError {
    /// Its source is not `<kind> <location>`, or its CUDA release is not a version.
    #[error("{0}")]
    Unreadable(String),
    /// Its source's location is not one cudaup can fetch from.
    #[error(transparent)]
    Location(#[from] FetchError),
    /// A component's URL is not one cudaup can fetch from.
    #[error(transparent)]
    Items(#[from] InstallError),
}

impl ToolkitStep {
    /// The toolkit `receipt` records, as it was installed: its release, cuDNN, prefix and source,
    /// and the components it lists, for this machine's architecture; registered in `home`.
    pub fn from_receipt(receipt: &Receipt, home: &Path) -> Result<ToolkitStep, ReceiptError> {
        let items = crate::install::items_from_receipt(receipt)?;
        let cuda = Version::parse(&receipt.cuda)
            .ok_or_else(|| ReceiptError::Unreadable("bad CUDA version in the receipt".into()))?;
        let source = match receipt.source() {
            Some(ReceiptSource::Wheels(l)) => Source::Wheels(Location::parse(l)?),
            Some(ReceiptSource::Redist(l)) => Source::Redist(Location::parse(l)?),
            None => {
                return Err(ReceiptError::Unreadable(format!(
                    "{}: unreadable source in the receipt",
                    receipt.prefix.display()
                )))
            }
        };
        Ok(ToolkitStep {
            spec: ToolkitSpec {
                cuda,
                cudnn: receipt.cudnn.as_deref().and_then(Version::parse),
                prefix: receipt.prefix.clone(),
                source,
                arch: std::env::consts::ARCH.to_owned(),
                // What the receipt's wheels were built for (repair installs them again).
                os: if items
                    .iter()
                    .any(|i| i.shape == crate::install::layout::Shape::WindowsWheel)
                {
                    crate::model::system::OsFamily::Windows
                } else {
                    crate::model::system::OsFamily::Linux
                },
                max_unpacked: crate::unpack::Limits::default().max_total_bytes,
                register_in: Some(home.to_owned()),
            },
            resolved: Resolved {
                items,
                notes: Vec::new(),
            },
        })
    }

    /// Whether one of its archives or wheels comes over plain http (a receipt records what its
    /// install accepted).
    pub fn over_http(&self) -> bool {
        self.resolved
            .items
            .iter()
            .any(|i| !i.artifact.location.is_authenticated())
    }
}

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

/// Installs `step` with `fetcher`; `intent` is the env step to come, recorded in `home` first.
pub fn run(
    step: &ToolkitStep,
    fetcher: &Fetcher,
    intent: &Intent,
    home: &Path,
    runner: &dyn Runner,
) -> Result<ToolkitDone, StepError> {
    let spec = &step.spec;
    intent.record(home)?;
    let receipt =
        crate::install::install(fetcher, spec, &step.resolved.items).inspect_err(|_| {
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

/// Installs `step` again over its prefix and registers the new receipt (repair). The trees of
/// the unpacked cache that no longer match what was unpacked go first (the prefix shares their
/// files through hard links, so an edit in the prefix edits them too): `on_dropped` hears how
/// many, before the install unpacks them again from the verified downloads.
pub fn repair(
    step: &ToolkitStep,
    fetcher: &Fetcher,
    home: &Path,
    on_dropped: &mut dyn FnMut(usize),
) -> Result<Receipt, StepError> {
    let dropped = crate::install::drop_damaged_cache(fetcher, &step.resolved.items)?;
    if dropped > 0 {
        on_dropped(dropped);
    }
    let receipt = crate::install::install(fetcher, &step.spec, &step.resolved.items)?;
    crate::install::receipts::register(home, &receipt)?;
    Ok(receipt)
}

#[cfg(test)]
mod tests;
