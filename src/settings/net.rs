//! The download settings every command shares, from `CUDAUP_*` variables: retries, timeouts and
//! size limits, for the fetcher that downloads and the one that only probes routes.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use crate::fetch::{Fetcher, Settings};
use crate::settings::resolve::SettingsError;
use crate::world::process::Process;
use crate::world::progress::Reporter;
use crate::world::vars;

/// The fetcher every command uses, from the environment; `cache` is the home's download cache
/// (`Home::cache`), handed down so that settings never reach up into the install layer.
pub fn fetcher(
    process: &Process,
    cache: &Path,
    allow_http: bool,
    cancel: Arc<AtomicBool>,
    reporter: Arc<dyn Reporter>,
) -> Result<Fetcher, SettingsError> {
    fetcher_with(process, cache, allow_http, cancel, reporter, |_| {})
}

/// The fetcher that asks the framework's routes: one attempt each, and a short wait
/// (`CUDAUP_PROBE_TIMEOUT` seconds, default 8) before the next route is taken.
pub fn probe_fetcher(
    process: &Process,
    cache: &Path,
    allow_http: bool,
    cancel: Arc<AtomicBool>,
) -> Result<Fetcher, SettingsError> {
    let what = "not a number of seconds";
    let seconds = match number(process, vars::CUDAUP_PROBE_TIMEOUT, what)? {
        Some(0) => {
            return Err(SettingsError::invalid(
                vars::CUDAUP_PROBE_TIMEOUT,
                "0",
                what,
            ))
        }
        Some(s) => s,
        None => 8,
    };
    fetcher_with(
        process,
        cache,
        allow_http,
        cancel,
        Arc::new(crate::world::progress::Silent),
        |s| {
            s.attempts = 1;
            s.connect_timeout = Duration::from_secs(seconds);
            s.read_timeout = Duration::from_secs(seconds);
        },
    )
}

fn fetcher_with(
    process: &Process,
    cache: &Path,
    allow_http: bool,
    cancel: Arc<AtomicBool>,
    reporter: Arc<dyn Reporter>,
    tweak: impl FnOnce(&mut Settings),
) -> Result<Fetcher, SettingsError> {
    let mut settings = Settings::new(cache.to_path_buf());
    settings.allow_http = allow_http;
    if let Some(n) = number(process, vars::CUDAUP_HTTP_RETRIES, "not a number")? {
        settings.attempts = n as u32 + 1;
    }
    if let Some(s) = number(process, vars::CUDAUP_HTTP_TIMEOUT, "not a number")? {
        settings.read_timeout = Duration::from_secs(s);
    }
    if let Some(n) = number(process, vars::CUDAUP_MAX_DOWNLOAD_BYTES, "not a number")? {
        settings.max_download = n;
    }
    if process.var(vars::CUDAUP_TEST_NO_RETRY_DELAY) == Some("1") {
        settings.backoff = Duration::ZERO;
    }
    tweak(&mut settings);
    Ok(Fetcher::new(settings, cancel, reporter))
}

/// `CUDAUP_MAX_UNPACKED_BYTES`, else 64 GiB: the most one archive may unpack to.
pub fn max_unpacked(process: &Process) -> Result<u64, SettingsError> {
    Ok(number(
        process,
        vars::CUDAUP_MAX_UNPACKED_BYTES,
        "not a number of bytes",
    )?
    .unwrap_or(crate::unpack::Limits::default().max_total_bytes))
}

fn number(process: &Process, name: &str, what: &str) -> Result<Option<u64>, SettingsError> {
    process
        .var(name)
        .map(|v| {
            v.parse::<u64>()
                .map_err(|_| SettingsError::invalid(name, v, what))
        })
        .transpose()
}
