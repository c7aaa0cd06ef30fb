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
    Ok(Fetcher::new(
        probe_settings(process, cache, allow_http)?,
        cancel,
        Arc::new(crate::world::progress::Silent),
    ))
}

/// The probe's settings: [`settings`] with one attempt and `CUDAUP_PROBE_TIMEOUT`'s waits.
pub fn probe_settings(
    process: &Process,
    cache: &Path,
    allow_http: bool,
) -> Result<Settings, SettingsError> {
    let seconds = ranged(process, vars::CUDAUP_PROBE_TIMEOUT, SECONDS)?.unwrap_or(8);
    let mut s = settings(process, cache, allow_http)?;
    s.attempts = 1;
    s.connect_timeout = Duration::from_secs(seconds);
    s.read_timeout = Duration::from_secs(seconds);
    Ok(s)
}

fn fetcher_with(
    process: &Process,
    cache: &Path,
    allow_http: bool,
    cancel: Arc<AtomicBool>,
    reporter: Arc<dyn Reporter>,
    tweak: impl FnOnce(&mut Settings),
) -> Result<Fetcher, SettingsError> {
    let mut settings = settings(process, cache, allow_http)?;
    tweak(&mut settings);
    Ok(Fetcher::new(settings, cancel, reporter))
}

/// The download settings from the environment, for fetchers made later from one reading
/// (`install::locate::Net`).
pub fn settings(
    process: &Process,
    cache: &Path,
    allow_http: bool,
) -> Result<Settings, SettingsError> {
    let mut settings = Settings::new(cache.to_path_buf());
    settings.allow_http = allow_http;
    if let Some(n) = ranged(process, vars::CUDAUP_HTTP_RETRIES, RETRIES)? {
        settings.attempts = u32::try_from(n).expect("at most 100") + 1;
    }
    if let Some(s) = ranged(process, vars::CUDAUP_HTTP_TIMEOUT, SECONDS)? {
        settings.read_timeout = Duration::from_secs(s);
    }
    if let Some(n) = ranged(process, vars::CUDAUP_MAX_DOWNLOAD_BYTES, BYTES)? {
        settings.max_download = n;
    }
    if process.var(vars::CUDAUP_TEST_NO_RETRY_DELAY) == Some("1") {
        settings.backoff = Duration::ZERO;
    }
    Ok(settings)
}

/// `CUDAUP_MAX_UNPACKED_BYTES`, else 64 GiB: the most one archive may unpack to.
pub fn max_unpacked(process: &Process) -> Result<u64, SettingsError> {
    Ok(ranged(process, vars::CUDAUP_MAX_UNPACKED_BYTES, BYTES)?
        .unwrap_or(crate::unpack::Limits::default().max_total_bytes))
}

/// The values a number setting may take, and how its error says so.
struct Range {
    least: u64,
    most: u64,
    what: &'static str,
}

/// Timeouts: a second to a day (0 would time out at once; 2^63 overflowed the clock).
const SECONDS: Range = Range {
    least: 1,
    most: 86_400,
    what: "not a number of seconds from 1 to 86400 (one day)",
};

/// Retries of a download: none to a hundred.
const RETRIES: Range = Range {
    least: 0,
    most: 100,
    what: "not a number of retries from 0 to 100",
};

/// Size limits: at least one byte.
const BYTES: Range = Range {
    least: 1,
    most: u64::MAX,
    what: "not a number of bytes (at least 1)",
};

/// The variable `name` as a number within `range` (absent: `None`); anything else is a
/// settings error (exit code 2) naming the variable and the range.
fn ranged(process: &Process, name: &str, range: Range) -> Result<Option<u64>, SettingsError> {
    process
        .var(name)
        .map(|v| {
            v.trim()
                .parse::<u64>()
                .ok()
                .filter(|n| (range.least..=range.most).contains(n))
                .ok_or_else(|| SettingsError::invalid(name, v, range.what))
        })
        .transpose()
}

#[cfg(test)]
mod tests;
