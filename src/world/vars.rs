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
/// A mirror of NVIDIA's download layout. Same as `--mirror`.
pub const CUDAUP_MIRROR: &str = "CUDAUP_MIRROR";
/// The package index for `--source wheels`. Same as `--index-url`.
pub const CUDAUP_INDEX_URL: &str = "CUDAUP_INDEX_URL";
/// Retries per download after the first attempt (default 3).
pub const CUDAUP_HTTP_RETRIES: &str = "CUDAUP_HTTP_RETRIES";
/// Seconds to wait for the next bytes of a response before giving up on it (default 30).
pub const CUDAUP_HTTP_TIMEOUT: &str = "CUDAUP_HTTP_TIMEOUT";
/// Test hook: `1` makes retries immediate.
pub const CUDAUP_TEST_NO_RETRY_DELAY: &str = "CUDAUP_TEST_NO_RETRY_DELAY";
/// The most bytes one archive may unpack to before cudaup calls it a decompression bomb
/// (default 64 GiB).
pub const CUDAUP_MAX_UNPACKED_BYTES: &str = "CUDAUP_MAX_UNPACKED_BYTES";
/// The most bytes one download may have when neither its source nor the server states a size
/// (default 4 GiB); a server that sends more is cut off there.
pub const CUDAUP_MAX_DOWNLOAD_BYTES: &str = "CUDAUP_MAX_DOWNLOAD_BYTES";
/// PyPI or a mirror of it, for framework installs. Same as `--pypi-index`.
pub const CUDAUP_PYPI_INDEX: &str = "CUDAUP_PYPI_INDEX";
/// The base of PyTorch's wheel index or a mirror of it. Same as `--torch-index`.
pub const CUDAUP_TORCH_INDEX: &str = "CUDAUP_TORCH_INDEX";
/// Which kind of index may serve PyTorch: `auto`, `pytorch` or `pypi`. Same as `--torch-source`.
pub const CUDAUP_TORCH_SOURCE: &str = "CUDAUP_TORCH_SOURCE";
/// Seconds the framework's routes get to answer before the next is taken (default 8).
pub const CUDAUP_PROBE_TIMEOUT: &str = "CUDAUP_PROBE_TIMEOUT";
/// Set to `1` to use pip even when uv is on PATH.
pub const CUDAUP_NO_UV: &str = "CUDAUP_NO_UV";
/// Test hook: park at this named checkpoint (see `checkpoint.rs`) until killed.
pub const CUDAUP_TEST_CHECKPOINT: &str = "CUDAUP_TEST_CHECKPOINT";
/// Test hook: every filesystem reports this many free bytes (see `world/fs/space.rs`), so a
/// test can fill a disk without filling one.
pub const CUDAUP_TEST_FREE_BYTES: &str = "CUDAUP_TEST_FREE_BYTES";
/// The toolkit's components (a set or a list). Same as `--components`.
pub const CUDAUP_COMPONENTS: &str = "CUDAUP_COMPONENTS";
/// An unattended config file. Same as `--config`.
pub const CUDAUP_CONFIG: &str = "CUDAUP_CONFIG";
/// Test hook: the name of the test this run belongs to; the host's `nvidia-smi`, NVML and
/// privileged commands are then refused with an error naming it (see `runner.rs`).
pub const CUDAUP_TEST_GUARD: &str = "CUDAUP_TEST_GUARD";
