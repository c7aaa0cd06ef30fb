//! The plan's promise for a framework stack: the toolkit it installs compiles for every GPU it
//! serves. Where the toolkit of the framework's own CUDA cannot (torch cu132 on a Rubin, whose
//! sm_107 only CUDA 13.4's compiler knows), the oldest newer toolkit of the same major whose
//! compiler can is taken, and the plan says so: PyTorch builds extensions with a toolkit of the
//! same major and another minor (it warns and goes on; only a different major is refused:
//! torch/utils/cpp_extension.py, `_check_cuda_version`).

use super::stack::pick_toolkit;
use super::Ctx;
use crate::catalog::CudaRelease;
use crate::model::version::Version;

/// The toolkit release (and its note) of the oldest series above `cuda`, of the same major,
/// that builds for every served GPU and that the driver runs; with the series.
pub(super) fn newer_of_major<'c>(
    ctx: &Ctx<'c>,
    cuda: &Version,
    driver: Option<&Version>,
    served: &[usize],
) -> Option<((&'c CudaRelease, Option<String>), Version)> {
    let mut series: Vec<&Version> = ctx
        .catalog
        .cuda
        .series
        .iter()
        .map(|s| &s.version)
        .filter(|s| s.major() == cuda.major() && s.prefix(2) > cuda.prefix(2))
        .filter(|s| s.minor() > cuda.minor())
        .collect();
    series.sort();
    series.into_iter().find_map(|s| {
        pick_toolkit(ctx, s, driver, served)
            .ok()
            .map(|t| (t, s.clone()))
    })
}

/// What the plan says when the toolkit is not the framework's own CUDA.
pub(super) fn mismatch_note(
    label: &str,
    torch_cuda: &Version,
    toolkit: &Version,
    why: &str,
) -> String {
    format!(
        "{label} is built with CUDA {}, but {why}: the toolkit is CUDA {} (the oldest {}.x whose compiler builds for every GPU); PyTorch builds extensions with it and warns about the minor-version difference",
        torch_cuda.prefix(2),
        toolkit.prefix(2),
        toolkit.major()
    )
}
