//! The uv cudaup brought (`$CUDAUP_HOME/tools/uv-<version>/uv`, see [`crate::install::uv`]):
//! gone, or no longer the bytes its receipt records.

use crate::install::home::Home;
use crate::install::uv;
use crate::model::finding::Severity;

use super::{Diagnosis, Inputs};

/// The uv check: nothing to say when cudaup brought no uv, or its copy is intact.
pub fn check(inputs: &Inputs<'_>) -> Option<Diagnosis> {
    let home = Home::at(&inputs.process.cudaup_home()?);
    let r = uv::receipt(&home)?;
    let receipt = format!(
        "receipt {} records uv {} with sha256 {}",
        home.receipts().join(uv::RECEIPT).display(),
        r.version,
        r.sha256
    );
    match uv::removal(&home)? {
        Ok((path, _)) if path.symlink_metadata().is_err() => Some(
            Diagnosis::new(
                "uv-missing",
                Severity::Info,
                format!("the uv cudaup brought ({}) is gone", path.display()),
            )
            .evidence(receipt)
            .fix("nothing to do: the next `cudaup install` or `cudaup repair` of a venv fetches and verifies it again"),
        ),
        Ok(_) => None,
        Err((path, why)) => Some(
            Diagnosis::new(
                "uv-changed",
                Severity::Warning,
                format!(
                    "{} is no longer the uv cudaup brought: cudaup leaves it alone and installs with pip until it is gone",
                    path.display()
                ),
            )
            .evidence(why)
            .evidence(receipt)
            .fix(format!(
                "if it is not yours: rm {}   # the next install fetches uv {} again",
                path.display(),
                r.version
            )),
        ),
    }
}
