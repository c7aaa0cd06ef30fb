//! Every environment variable cudaup reads, in one place (uv's `EnvVars` registry).

/// Where cudaup keeps toolkits, venvs, receipts and its cache. Same as `--home`.
pub const CUDAUP_HOME: &str = "CUDAUP_HOME";
/// A directory of manifests that replaces the embedded catalog. Same as `--manifests`.
pub const CUDAUP_MANIFESTS: &str = "CUDAUP_MANIFESTS";
/// Log filter for `tracing` (e.g. `cudaup=debug`); `-v` and `-q` set it too.
pub const CUDAUP_LOG: &str = "CUDAUP_LOG";
/// Overrides the NVML library path (default `libnvidia-ml.so.1`, or `nvml.dll` on Windows).
pub const CUDAUP_NVML_LIBRARY: &str = "CUDAUP_NVML_LIBRARY";
/// Set to `1` to skip NVML and go straight to `nvidia-smi` and sysfs (for debugging probes).
pub const CUDAUP_NO_NVML: &str = "CUDAUP_NO_NVML";
