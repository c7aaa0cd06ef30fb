//! Findings: something that looks wrong, with the evidence and the fix. `detect` reports the ones
//! it can see; `doctor` adds its own checks later, each a [`Diagnosis`] (a finding plus the facts
//! it was concluded from: a document, which container's checks build too).

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

/// A finding with its evidence: [`Finding`] carries the id, severity, message and fix; doctor adds
/// the facts it was concluded from, one line each, so a reader can check the reasoning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnosis {
    /// Id, severity, message and fix.
    pub finding: Finding,
    /// What was seen, one fact a line.
    pub evidence: Vec<String>,
}

impl Diagnosis {
    /// A diagnosis without evidence or fix yet.
    pub fn new(id: &'static str, severity: Severity, message: impl Into<String>) -> Self {
        Self {
            finding: Finding::new(id, severity, message),
            evidence: Vec::new(),
        }
    }

    /// Adds one line of evidence.
    pub fn evidence(mut self, line: impl Into<String>) -> Self {
        self.evidence.push(line.into());
        self
    }

    /// Sets the fix (commands one a line, or `cudaup repair --fix ID`).
    pub fn fix(mut self, fix: impl Into<String>) -> Self {
        self.finding.fix = Some(fix.into());
        self
    }

    /// The stable id.
    pub fn id(&self) -> &'static str {
        self.finding.id
    }

    /// How bad it is.
    pub fn severity(&self) -> Severity {
        self.finding.severity
    }
}

impl From<Finding> for Diagnosis {
    fn from(finding: Finding) -> Self {
        Self {
            finding,
            evidence: Vec::new(),
        }
    }
}

impl Serialize for Diagnosis {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Out<'a> {
            id: &'a str,
            severity: Severity,
            message: &'a str,
            evidence: &'a [String],
            fix: Option<&'a str>,
        }
        Out {
            id: self.finding.id,
            severity: self.finding.severity,
            message: &self.finding.message,
            evidence: &self.evidence,
            fix: self.finding.fix.as_deref(),
        }
        .serialize(s)
    }
}
