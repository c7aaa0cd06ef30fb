//! Findings: something that looks wrong, with the evidence and the fix. `detect` reports the ones
//! it can see; `doctor` adds its own checks later.

use serde::Serialize;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing is broken.
    Info,
    /// Something works worse than it should, or will break soon.
    Warning,
    /// Something is broken.
    Error,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable identifier (`driver-library-mismatch`), usable with `repair --fix`.
    pub id: &'static str,
    /// How bad it is.
    pub severity: Severity,
    /// What is wrong, in plain words, with the evidence.
    pub message: String,
    /// What to do about it.
    pub fix: Option<String>,
}

impl Finding {
    /// A finding without a fix.
    pub fn new(id: &'static str, severity: Severity, message: impl Into<String>) -> Self {
        Self {
            id,
            severity,
            message: message.into(),
            fix: None,
        }
    }

    /// Adds the fix.
    pub fn with_fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}
