//! The page cache against a scripted index on the loopback interface: each request's headers
//! are recorded and answered from a script, so what was asked (and whether anything was) is
//! asserted along with what the caller got.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use super::*;

/// One request's headers, names lower-cased.
type Headers = Vec<(String, String)>;

/// One scripted answer: status, extra headers, body.
type Answer = (u16, Vec<(&'static str, String)>, Vec<u8>);

/// An index answering each request with the next answer of its script (the last one repeats);
/// `asked` holds each request's headers, lower-cased.
struct Index {
    url: String,
    asked: Arc<Mutex<Vec<Headers>>>,
    script: Arc<Mutex<Vec<Answer>>>,
    stop: Arc<AtomicBool>,
}

impl Index {
    fn start(script: Vec<Answer>) -> Index {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://{}/simple/nvidia-cublas/",
            listener.local_addr().unwrap()
        );
        let asked = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(script));
        let stop = Arc::new(AtomicBool::new(false));
        let (a, s, st) = (asked.clone(), script.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut headers = Vec::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = line.split_once(':') {
                        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
                    }
                }
                let n = {
                    let mut asked = a.lock().unwrap();
                    asked.push(headers);
                    asked.len()
                };
                let (status, extra, body) = {
                    let s = s.lock().unwrap();
                    s[(n - 1).min(s.len() - 1)].clone()
                };
                let mut head = format!(
                    "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                    if status == 304 { 0 } else { body.len() }
                );
                for (k, v) in extra {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                let _ = conn.write_all(head.as_bytes());
                if status != 304 {
                    let _ = conn.write_all(&body);
                }
            }
        });
        Index {
            url,
            asked,
            script,
            stop,
        }
    }

    fn location(&self) -> Location {
        Location::parse(&self.url).unwrap()
    }

    fn requests(&self) -> Vec<Headers> {
        self.asked.lock().unwrap().clone()
    }

    fn then(&self, script: Vec<Answer>) {
        *self.script.lock().unwrap() = script;
        self.asked.lock().unwrap().clear();
    }

    /// Stops answering: later connections are refused.
    fn close(self) -> Location {
        let loc = self.location();
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag and drops the listener.
        let _ = std::net::TcpStream::connect(
            loc.to_string()
                .trim_start_matches("http://")
                .split('/')
                .next()
                .unwrap(),
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
        loc
    }
}

fn has(req: &[(String, String)], name: &str) -> Option<String> {
    req.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

fn fetcher(cache: &std::path::Path) -> Fetcher {
    let mut s = super::super::Settings::new(cache.to_owned());
    s.allow_http = true;
    s.attempts = 2;
    s.backoff = Duration::ZERO;
    Fetcher::new(
        s,
        Arc::new(AtomicBool::new(false)),
        Arc::new(crate::world::progress::Silent),
    )
}

const ACCEPT: &str = "application/vnd.pypi.simple.v1+json, text/html;q=0.1";

fn page(v: &str) -> Vec<u8> {
    format!(r#"{{"meta": {{"api-version": "1.0"}}, "name": "nvidia-cublas", "files": [{{"filename": "nvidia_cublas-{v}-py3-none-manylinux_2_27_x86_64.whl", "url": "x.whl", "hashes": {{"sha256": "{}"}}}}]}}"#, "ab".repeat(32)).into_bytes()
}

#[test]
fn an_unchanged_page_is_asked_with_its_validators_and_a_304_serves_the_copy() {
    let cache = tempfile::tempdir().unwrap();
    let index = Index::start(vec![(
        200,
        vec![
            ("ETag", "\"v1\"".into()),
            ("Last-Modified", "Sat, 05 Dec 2026 10:00:00 GMT".into()),
        ],
        page("13.1.0.3"),
    )]);
    let f = fetcher(cache.path());
    assert_eq!(
        f.get_page(&index.location(), ACCEPT).unwrap(),
        page("13.1.0.3")
    );
    let first = index.requests();
    assert_eq!(first.len(), 1);
    assert_eq!(has(&first[0], "if-none-match"), None);

    index.then(vec![(304, vec![], Vec::new())]);
    assert_eq!(
        f.get_page(&index.location(), ACCEPT).unwrap(),
        page("13.1.0.3")
    );
    let again = index.requests();
    assert_eq!(again.len(), 1, "one conditional request");
    assert_eq!(has(&again[0], "if-none-match").as_deref(), Some("\"v1\""));
    assert_eq!(
        has(&again[0], "if-modified-since").as_deref(),
        Some("Sat, 05 Dec 2026 10:00:00 GMT")
    );
    assert_eq!(has(&again[0], "accept").as_deref(), Some(ACCEPT));
}

#[test]
fn a_changed_page_replaces_the_copy_and_its_new_validator_is_asked_next() {
    let cache = tempfile::tempdir().unwrap();
    let index = Index::start(vec![(
        200,
        vec![("ETag", "\"v1\"".into())],
        page("13.1.0.3"),
    )]);
    let f = fetcher(cache.path());
    f.get_page(&index.location(), ACCEPT).unwrap();
    // The index now names another file (and another sha256): that is what the caller gets.
    index.then(vec![(
        200,
        vec![("ETag", "\"v2\"".into())],
        page("13.1.0.4"),
    )]);
    assert_eq!(
        f.get_page(&index.location(), ACCEPT).unwrap(),
        page("13.1.0.4")
    );
    index.then(vec![(304, vec![], Vec::new())]);
    assert_eq!(
        f.get_page(&index.location(), ACCEPT).unwrap(),
        page("13.1.0.4")
    );
    assert_eq!(
        has(&index.requests()[0], "if-none-match").as_deref(),
        Some("\"v2\"")
    );
}

#[test]
fn a_page_the_index_calls_fresh_is_used_without_asking_for_at_most_ten_minutes() {
    let cache = tempfile::tempdir().unwrap();
    let index = Index::start(vec![(
        200,
        vec![("Cache-Control", "max-age=86400, public".into())],
        page("13.1.0.3"),
    )]);
    let f = fetcher(cache.path());
    f.get_page(&index.location(), ACCEPT).unwrap();
    index.then(vec![(500, vec![], Vec::new())]);
    assert_eq!(
        f.get_page(&index.location(), ACCEPT).unwrap(),
        page("13.1.0.3")
    );
    assert!(index.requests().is_empty(), "{:?}", index.requests());
    // The day the index allowed is cut to MAX_FRESH.
    let (meta, _) = f.paths(&index.url, ACCEPT);
    let m: Meta = serde_json::from_slice(&fs_err::read(&meta).unwrap()).unwrap();
    assert_eq!(m.fresh_for, MAX_FRESH.as_secs());
    // Past it, the index is asked again.
    let mut stale = m.clone();
    stale.checked -= MAX_FRESH.as_secs() + 1;
    store_meta(&meta, &stale).unwrap();
    index.then(vec![(200, vec![], page("13.1.0.4"))]);
    assert_eq!(
        f.get_page(&index.location(), ACCEPT).unwrap(),
        page("13.1.0.4")
    );
    assert_eq!(index.requests().len(), 1);
}

#[test]
fn no_store_keeps_nothing_and_no_cache_asks_every_time() {
    let cache = tempfile::tempdir().unwrap();
    let index = Index::start(vec![(
        200,
        vec![("Cache-Control", "no-store".into())],
        page("13.1.0.3"),
    )]);
    let f = fetcher(cache.path());
    f.get_page(&index.location(), ACCEPT).unwrap();
    let (meta, _) = f.paths(&index.url, ACCEPT);
    assert!(!meta.exists());

    index.then(vec![(
        200,
        vec![
            ("Cache-Control", "no-cache, max-age=600".into()),
            ("ETag", "\"v1\"".into()),
        ],
        page("13.1.0.3"),
    )]);
    f.get_page(&index.location(), ACCEPT).unwrap();
    index.then(vec![(304, vec![], Vec::new())]);
    f.get_page(&index.location(), ACCEPT).unwrap();
    assert_eq!(index.requests().len(), 1, "asked although max-age said 600");
}

#[test]
fn a_copy_that_does_not_match_its_record_is_dropped_and_the_page_fetched_whole() {
    let cache = tempfile::tempdir().unwrap();
    let index = Index::start(vec![(
        200,
        vec![("ETag", "\"v1\"".into())],
        page("13.1.0.3"),
    )]);
    let f = fetcher(cache.path());
    f.get_page(&index.location(), ACCEPT).unwrap();
    // A hostile edit of the kept copy: another file, another sha256.
    let (_, body) = f.paths(&index.url, ACCEPT);
    fs_err::write(&body, page("6.6.6")).unwrap();
    index.then(vec![(
        200,
        vec![("ETag", "\"v1\"".into())],
        page("13.1.0.3"),
    )]);
    assert_eq!(
        f.get_page(&index.location(), ACCEPT).unwrap(),
        page("13.1.0.3")
    );
    assert_eq!(
        has(&index.requests()[0], "if-none-match"),
        None,
        "the copy is not trusted, so nothing is asked conditionally"
    );
    assert_eq!(fs_err::read(&body).unwrap(), page("13.1.0.3"));
}

#[test]
fn an_unreachable_index_serves_the_copy_and_says_so_and_without_one_it_is_an_error() {
    let cache = tempfile::tempdir().unwrap();
    let index = Index::start(vec![(
        200,
        vec![("ETag", "\"v1\"".into())],
        page("13.1.0.3"),
    )]);
    let f = fetcher(cache.path());
    f.get_page(&index.location(), ACCEPT).unwrap();
    let loc = index.close();
    // (The warning it prints is asserted by the integration test.)
    assert_eq!(f.get_page(&loc, ACCEPT).unwrap(), page("13.1.0.3"));
    let empty = tempfile::tempdir().unwrap();
    let err = fetcher(empty.path()).get_page(&loc, ACCEPT).unwrap_err();
    assert!(err.is_network(), "{err}");
}

#[test]
fn a_local_page_is_read_as_it_is_and_nothing_is_kept() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("index.html");
    fs_err::write(&file, b"<a href='x.whl'>x</a>").unwrap();
    let f = fetcher(cache.path());
    assert_eq!(
        f.get_page(&Location::File(file), ACCEPT).unwrap(),
        b"<a href='x.whl'>x</a>"
    );
    assert!(!f.cache().pages().exists());
}

#[cfg(unix)]
#[test]
fn an_unchanged_page_from_a_server_without_validators_is_not_written_again() {
    use std::os::unix::fs::MetadataExt;
    let cache = tempfile::tempdir().unwrap();
    let index = Index::start(vec![(200, vec![], page("13.1.0.3"))]);
    let f = fetcher(cache.path());
    f.get_page(&index.location(), ACCEPT).unwrap();
    let (meta, body) = f.paths(&index.url, ACCEPT);
    let inodes = || {
        (
            fs_err::metadata(&meta).unwrap().ino(),
            fs_err::metadata(&body).unwrap().ino(),
        )
    };
    let before = inodes();
    assert_eq!(
        f.get_page(&index.location(), ACCEPT).unwrap(),
        page("13.1.0.3")
    );
    assert_eq!(
        index.requests().len(),
        2,
        "asked again: nothing says it is fresh"
    );
    assert_eq!(inodes(), before, "neither file replaced");
    // A changed page is written.
    index.then(vec![(200, vec![], page("13.1.0.4"))]);
    assert_eq!(
        f.get_page(&index.location(), ACCEPT).unwrap(),
        page("13.1.0.4")
    );
    assert_ne!(inodes().1, before.1);
    assert_eq!(fs_err::read(&body).unwrap(), page("13.1.0.4"));
}
