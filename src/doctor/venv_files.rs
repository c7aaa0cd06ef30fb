//! The framework's files in each venv cudaup installed, held against their `RECORD`
//! ([`crate::install::python::record`]): a torch whose `libtorch_cuda.so` was deleted still
//! reads as the planned build from its `version.py`, and fails only at import. `repair` finds the
//! same through the same check and reinstalls the distributions.

use crate::model::finding::Severity;

use super::{Diagnosis, Inputs};

/// One diagnosis per venv whose framework files are not as installed.
pub fn check(inputs: &Inputs<'_>) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    for (path, r) in &inputs.receipts.venvs {
        if !r.venv.join("pyvenv.cfg").is_file() {
            continue;
        }
        let names = super::repair::planned_names(r);
        let problems = crate::install::python::record::problems(&r.venv, &names);
        if problems.is_empty() {
            continue;
        }
        let mut d = Diagnosis::new(
            "venv-files-missing",
            Severity::Error,
            format!(
                "{}: files of the framework cudaup installed are missing or changed, so it fails to import",
                r.venv.display()
            ),
        )
        .evidence(format!(
            "receipt {} installed {}",
            path.display(),
            r.packages.requirements.join(" ")
        ));
        for p in problems {
            d = d.evidence(p);
        }
        out.push(d.fix(super::repair("venv-packages")));
    }
    out
}
