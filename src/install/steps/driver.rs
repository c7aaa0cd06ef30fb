//! The driver step: runs the commands `locate` prepared (their output streamed to the caller,
//! line by line) and, when the new driver needs a reboot, writes the marker the next run reads.

use std::path::Path;

use crate::detect::Root;
use crate::install::driver::DriverStep;
use crate::install::report::DriverReport;
use crate::world::runner::Runner;

use super::StepError;

/// What the driver step did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverDone {
    /// The report's `driver`: the commands run, and whether Secure Boot needs a key enrolled.
    pub report: DriverReport,
    /// The new driver loads only after a reboot (the marker is written).
    pub reboot_required: bool,
}

/// Runs `step` when it has commands to run; `None` when there is nothing to run here.
pub fn run(
    step: &DriverStep,
    runner: &dyn Runner,
    home: &Path,
    root: &Root,
    echo: &mut dyn FnMut(&str),
) -> Result<Option<DriverDone>, StepError> {
    if !step.runnable || step.commands.is_empty() {
        return Ok(None);
    }
    let done = crate::install::driver::execute(step, runner, echo)?;
    if done.reboot_required {
        let version = step.driver_version.clone().unwrap_or_default();
        crate::install::driver::write_reboot_marker(
            home,
            root,
            &version,
            "a new NVIDIA driver was installed",
        )?;
    }
    Ok(Some(DriverDone {
        report: DriverReport {
            commands: Some(step.shell_lines()),
            mok_enrolment_needed: Some(done.mok_enrolment_needed),
            manual: None,
        },
        reboot_required: done.reboot_required,
    }))
}
