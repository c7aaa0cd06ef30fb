//! Index pages (PEP 691 JSON, PEP 503 HTML) kept in the cache (`<cache>/index/`) with their
//! validators, as an HTTP cache keeps them: a re-install asks the index only whether the page
//! changed (`If-None-Match` with the ETag, `If-Modified-Since` with the Last-Modified), and a
//! `304 Not Modified` costs no body and no parse of a new one. A page the server says is fresh
//! (`Cache-Control: max-age`, at most [`MAX_FRESH`]) is used without asking at all until then;
//! `no-store` keeps it out of the cache, `no-cache` has it asked every time.
//!
//! What this changes for trust: nothing. A page only names files and their sha256; every file
//! downloaded is still hashed against what the page in use says, and a wheel's unpacked tree is
//! keyed by that sha256. A changed page is a `200` with the new body, which replaces the copy;
//! a cached copy whose bytes do not match the sha256 recorded beside it (a torn write, an
//! edit) is dropped and the page fetched whole. When the index cannot be reached at all, the
//! copy is used as it is, said in a warning (so a re-install works offline from the unpacked
//! cache); a page never fetched is still an error.

use std::io::Read;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::limit::Limit;
use super::{stream, FetchError, Fetcher, Location, MAX_DOCUMENT};
use crate::world::fs::{write_atomic, Durability, Temp};

/// The longest a page is used without asking the index, whatever max-age it states: an index
/// that publishes a fix is seen within this.
pub const MAX_FRESH: Duration = Duration::from_secs(600);

/// What is kept beside a page's bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Meta {
    v: u32,
    url: String,
    accept: String,
    etag: Option<String>,
    last_modified: Option<String>,
    /// When the index last gave or confirmed these bytes (seconds since the epoch).
    checked: u64,
    /// How long after `checked` the page may be used without asking (capped at [`MAX_FRESH`]).
    fresh_for: u64,
    sha256: String,
}

const META_VERSION: u32 = 1;

/// A page as the cache holds it.
struct Cached {
    meta: Meta,
    body: Vec<u8>,
}

/// What the response headers say about caching.
#[derive(Debug, Default, PartialEq, Eq)]
struct Policy {
    etag: Option<String>,
    last_modified: Option<String>,
    fresh_for: u64,
    store: bool,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn header(
    headers: &reqwest::header::HeaderMap,
    name: reqwest::header::HeaderName,
) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// Reads `Cache-Control`, `ETag` and `Last-Modified`.
fn policy(headers: &reqwest::header::HeaderMap) -> Policy {
    let control = header(headers, reqwest::header::CACHE_CONTROL)
        .unwrap_or_default()
        .to_ascii_lowercase();
    let directives: Vec<&str> = control.split(',').map(str::trim).collect();
    let store = !directives.contains(&"no-store");
    let fresh_for = if directives.contains(&"no-cache") {
        0
    } else {
        directives
            .iter()
            .find_map(|d| d.strip_prefix("max-age="))
            .and_then(|n| n.trim_matches('"').parse::<u64>().ok())
            .unwrap_or(0)
            .min(MAX_FRESH.as_secs())
    };
    Policy {
        etag: header(headers, reqwest::header::ETAG),
        last_modified: header(headers, reqwest::header::LAST_MODIFIED),
        fresh_for,
        store,
    }
}

/// What the index answered.
enum Reply {
    Body(Vec<u8>, Policy),
    NotModified(Policy),
}

impl Fetcher {
    /// An index page at `loc`, asked for with `accept` (PEP 691 negotiation), at most
    /// [`MAX_DOCUMENT`] bytes, through the page cache (see the module's text). A local page is
    /// read as it is.
    pub fn get_page(&self, loc: &Location, accept: &str) -> Result<Vec<u8>, FetchError> {
        let Location::Http(url) = loc else {
            return self.get_bytes(loc, Some(accept));
        };
        self.check_trust(loc)?;
        let (meta_path, body_path) = self.paths(url.as_str(), accept);
        let cached = read_cached(&meta_path, &body_path, url.as_str(), accept);
        let now = now();
        if let Some(c) = &cached {
            if c.meta.checked <= now && now < c.meta.checked.saturating_add(c.meta.fresh_for) {
                return Ok(c.body.clone());
            }
        }
        let asked = if cached.is_some() {
            // One attempt: if the index cannot be reached, the copy serves (said below).
            self.ask(url, accept, cached.as_ref().map(|c| &c.meta))
        } else {
            self.with_retries(&loc.to_string(), |_| self.ask(url, accept, None))
        };
        match (asked, cached) {
            (Ok(Reply::NotModified(p)), Some(mut c)) => {
                c.meta.checked = now;
                c.meta.fresh_for = p.fresh_for;
                // A 304 may carry newer validators.
                c.meta.etag = p.etag.or(c.meta.etag);
                c.meta.last_modified = p.last_modified.or(c.meta.last_modified);
                let _ = store_meta(&meta_path, &c.meta);
                Ok(c.body)
            }
            (Ok(Reply::NotModified(_)), None) => Err(FetchError::Status {
                url: url.to_string(),
                status: 304,
            }),
            (Ok(Reply::Body(body, p)), cached) => {
                if p.store {
                    let meta = Meta {
                        v: META_VERSION,
                        url: url.to_string(),
                        accept: accept.to_owned(),
                        etag: p.etag,
                        last_modified: p.last_modified,
                        checked: now,
                        fresh_for: p.fresh_for,
                        sha256: hex::encode(Sha256::digest(&body)),
                    };
                    let kept = cached.map(|c| c.meta);
                    let same_body = kept.as_ref().is_some_and(|k| k.sha256 == meta.sha256);
                    // Without freshness, when it was checked matters to nothing but the
                    // offline warning: an unchanged page from a server without validators is
                    // not written again (no writes, no rename for the next fsync to carry).
                    let unchanged = same_body
                        && meta.fresh_for == 0
                        && kept.as_ref().is_some_and(|k| {
                            k.fresh_for == 0
                                && k.etag == meta.etag
                                && k.last_modified == meta.last_modified
                        });
                    // A cache: a page that cannot be kept is fetched again next time.
                    if !unchanged {
                        let _ = if same_body {
                            Ok(())
                        } else {
                            write_atomic(&body_path, &body, Temp::Unique, Durability::Fast)
                        }
                        .and_then(|()| store_meta(&meta_path, &meta));
                    }
                } else {
                    let _ = fs_err::remove_file(&meta_path);
                }
                Ok(body)
            }
            (Err(e), Some(c)) if e.is_transient() => {
                let age = now.saturating_sub(c.meta.checked);
                // A warning, not a progress message: pages are read while planning, whose
                // fetcher reports nothing.
                tracing::warn!(
                    "{url}: {e}; using this index page as the index gave it {} ago (every file it names is still checked against its sha256)",
                    ago(age)
                );
                Ok(c.body)
            }
            (Err(e), _) => Err(e),
        }
    }

    /// Where the page of `url` asked with `accept` is kept: its record and its bytes.
    fn paths(&self, url: &str, accept: &str) -> (PathBuf, PathBuf) {
        let key = hex::encode(Sha256::digest(format!("{url}\n{accept}")));
        let dir = self.cache.pages();
        (
            dir.join(format!("{key}.json")),
            dir.join(format!("{key}.body")),
        )
    }

    /// One request for the page, conditional when `meta` has validators.
    fn ask(
        &self,
        url: &reqwest::Url,
        accept: &str,
        meta: Option<&Meta>,
    ) -> Result<Reply, FetchError> {
        let mut req = self
            .client()?
            .get(url.clone())
            .header(reqwest::header::ACCEPT_ENCODING, "identity")
            .header(reqwest::header::ACCEPT, accept);
        if let Some(m) = meta {
            if let Some(etag) = &m.etag {
                req = req.header(reqwest::header::IF_NONE_MATCH, etag);
            }
            if let Some(lm) = &m.last_modified {
                req = req.header(reqwest::header::IF_MODIFIED_SINCE, lm);
            }
        }
        let resp = req
            .send()
            .map_err(|source| FetchError::transport(url.as_str(), source))?;
        let status = resp.status().as_u16();
        let policy = policy(resp.headers());
        if status == 304 && meta.is_some() {
            return Ok(Reply::NotModified(policy));
        }
        if !resp.status().is_success() {
            return Err(FetchError::Status {
                url: url.to_string(),
                status,
            });
        }
        let limit = Limit::Document(MAX_DOCUMENT);
        let (body, _) = stream::decoded(url.as_str(), resp)?;
        let mut out = Vec::new();
        body.take(limit.room(0))
            .read_to_end(&mut out)
            .map_err(|source| FetchError::read(url.as_str(), source))?;
        if out.len() as u64 > limit.bytes() {
            return Err(FetchError::TooLong {
                url: url.to_string(),
                limit,
            });
        }
        Ok(Reply::Body(out, policy))
    }
}

/// The cached page of `url` for `accept`, when its record reads and its bytes match it.
fn read_cached(
    meta: &std::path::Path,
    body: &std::path::Path,
    url: &str,
    accept: &str,
) -> Option<Cached> {
    let meta: Meta =
        serde_json::from_slice(&crate::world::fs::read_regular(meta, 1 << 20).ok()?).ok()?;
    if meta.v != META_VERSION || meta.url != url || meta.accept != accept {
        return None;
    }
    let body = crate::world::fs::read_regular(body, MAX_DOCUMENT).ok()?;
    if hex::encode(Sha256::digest(&body)) != meta.sha256 {
        tracing::debug!(
            "{url}: the cached index page does not match its record; fetching it whole"
        );
        return None;
    }
    Some(Cached { meta, body })
}

/// `age` seconds in words: "40 s", "12 min", "3 h", "2 days".
fn ago(age: u64) -> String {
    match age {
        0..120 => format!("{age} s"),
        120..7_200 => format!("{} min", age / 60),
        7_200..172_800 => format!("{} h", age / 3_600),
        _ => format!("{} days", age / 86_400),
    }
}

fn store_meta(path: &std::path::Path, meta: &Meta) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(meta).expect("a page record serialises");
    write_atomic(path, &bytes, Temp::Unique, Durability::Fast)
}

#[cfg(test)]
mod tests;
