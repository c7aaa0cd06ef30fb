//! A fault-injecting HTTP/1.1 file server on 127.0.0.1, so download tests run hermetically and
//! can make the network misbehave on purpose (errors, resets, short bodies, ignored ranges, slow
//! links, bodies that never end, compression nobody asked for). Standard library (and flate2)
//! only; a thread per connection, one request per connection (`Connection: close`).

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

const PEP691: &str = "application/vnd.pypi.simple.v1+json";
/// Longest request head accepted; anything bigger is a bad request, not a reason to buffer forever.
const MAX_HEAD: usize = 64 * 1024;

/// A misbehaviour injected into the responses for one path; see [`Server::fault`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Answer with this status and a short text body; 429 also carries `Retry-After: 0`.
    Status(u16),
    /// Send correct headers (full Content-Length) and this many body bytes, then reset the
    /// connection (the client reads the bytes, then gets ECONNRESET).
    ResetAfter(u64),
    /// Send correct headers and this many body bytes, then close cleanly (an early EOF).
    Truncate(u64),
    /// Content-Length is off by this much. Positive: claims more than the body, sends the body,
    /// closes. Negative: claims fewer and sends only that many.
    WrongLength(i64),
    /// Answer 200 with the whole file even when a Range was asked for.
    IgnoreRange,
    /// Answer 416 to a request with a Range header; a request without one is served normally and
    /// does not consume the fault.
    RangeNotSatisfiable,
    /// Send the body `bytes_per_chunk` at a time, sleeping `delay_ms` between chunks.
    Trickle {
        bytes_per_chunk: usize,
        delay_ms: u64,
    },
    /// Send `after` body bytes, then go silent for `ms` before sending the rest.
    Stall { after: u64, ms: u64 },
    /// No Content-Length: the file's bytes, then zeros without end (up to 4 GiB), until the
    /// client hangs up: a server that never stops sending.
    Endless,
    /// No Content-Length; the body ends when the connection closes.
    NoLength,
    /// `Content-Encoding: gzip` whatever the client asked for: the body gzip-compressed.
    Gzip,
    /// Send `after` body bytes, then SIGKILL the process set with [`Server::set_victim`]: a
    /// kill at a moment chosen inside a download.
    Kill { after: u64 },
}

/// One request as the server saw it, and the status it answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logged {
    pub method: String,
    /// Percent-decoded, without the query string (the raw request target if it does not decode).
    pub path: String,
    /// The Range header as sent.
    pub range: Option<String>,
    /// The Accept header as sent.
    pub accept: Option<String>,
    pub status: u16,
}

/// The running server; dropping it stops it (see the `Drop` impl).
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    /// Per decoded path, faults still to apply, in order, each with its remaining count.
    faults: Mutex<HashMap<String, VecDeque<(Fault, usize)>>>,
    log: Mutex<Vec<Logged>>,
    /// Clones of the live connections, so shutdown can wake threads blocked in read or write.
    conns: Mutex<HashMap<u64, TcpStream>>,
    next_id: AtomicU64,
    /// Body bytes written per decoded path (accepted by the kernel: the client read at most
    /// that many).
    sent: Mutex<HashMap<String, u64>>,
    /// The process [`Fault::Kill`] kills (0: none).
    victim: std::sync::atomic::AtomicU32,
}

/// A panicking test thread must not turn every later lock into a second panic.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Server {
    /// Binds 127.0.0.1 on a free port and serves the files under `root` until dropped.
    pub fn start(root: PathBuf) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("listener address");
        let shared = Arc::new(Shared::default());
        let sh = Arc::clone(&shared);
        let accept = thread::Builder::new()
            .name("test-http-accept".into())
            .spawn(move || accept_loop(listener, Arc::new(root), sh))
            .expect("spawn the accept thread");
        Server {
            addr,
            shared,
            accept: Some(accept),
        }
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Applies `fault` to the next `times` GET/HEAD requests for `path` (percent-decoded, no query;
    /// a missing leading `/` is added). Faults queued for one path apply in the order given.
    /// Every request to the path consumes one use, even one answered 404, except that
    /// `RangeNotSatisfiable` waits for a request that has a Range header.
    pub fn fault(&self, path: &str, fault: Fault, times: usize) {
        if times == 0 {
            return;
        }
        let key = format!("/{}", path.strip_prefix('/').unwrap_or(path));
        lock(&self.shared.faults)
            .entry(key)
            .or_default()
            .push_back((fault, times));
    }

    /// Forgets every fault not yet used up.
    pub fn clear_faults(&self) {
        lock(&self.shared.faults).clear();
    }

    /// The requests answered so far, in arrival order (logged before the body is sent).
    pub fn requests(&self) -> Vec<Logged> {
        lock(&self.shared.log).clone()
    }

    /// Empties the request log.
    pub fn clear_log(&self) {
        lock(&self.shared.log).clear();
    }

    /// The process a [`Fault::Kill`] kills.
    pub fn set_victim(&self, pid: u32) {
        self.shared.victim.store(pid, SeqCst);
    }

    /// Body bytes written so far for `path`, over all requests.
    pub fn sent(&self, path: &str) -> u64 {
        let key = format!("/{}", path.strip_prefix('/').unwrap_or(path));
        lock(&self.shared.sent).get(&key).copied().unwrap_or(0)
    }
}

impl Drop for Server {
    /// Stops accepting, wakes every connection thread (their sleeps and blocked I/O end) and joins.
    fn drop(&mut self) {
        self.shared.stop.store(true, SeqCst);
        let Some(accept) = self.accept.take() else {
            return;
        };
        // accept() has no timeout: connecting to ourselves is what wakes it to see the flag.
        // Retried, because one connect can fail (e.g. out of descriptors) and a hang is worse.
        let deadline = Instant::now() + Duration::from_secs(5);
        while !accept.is_finished() && Instant::now() < deadline {
            let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
            thread::sleep(Duration::from_millis(5));
        }
        if accept.is_finished() {
            let _ = accept.join();
        }
    }
}

fn accept_loop(listener: TcpListener, root: Arc<PathBuf>, shared: Arc<Shared>) {
    let mut workers: Vec<JoinHandle<()>> = Vec::new();
    for conn in listener.incoming() {
        if shared.stop.load(SeqCst) {
            break;
        }
        let Ok(stream) = conn else {
            thread::sleep(Duration::from_millis(5)); // e.g. EMFILE: do not spin
            continue;
        };
        workers.retain(|w| !w.is_finished());
        let id = shared.next_id.fetch_add(1, SeqCst);
        if let Ok(clone) = stream.try_clone() {
            lock(&shared.conns).insert(id, clone);
        }
        let (root, sh) = (Arc::clone(&root), Arc::clone(&shared));
        let spawned = thread::Builder::new().spawn(move || {
            handle(stream, &root, &sh);
            lock(&sh.conns).remove(&id); // the last descriptor: this is what closes the socket
        });
        match spawned {
            Ok(w) => workers.push(w),
            Err(_) => drop(lock(&shared.conns).remove(&id)),
        }
    }
    for c in lock(&shared.conns).values() {
        let _ = c.shutdown(Shutdown::Both);
    }
    for w in workers {
        let _ = w.join();
    }
}

/// Sleeps `ms` in slices; false if the server is shutting down meanwhile.
fn nap(shared: &Shared, ms: u64) -> bool {
    let end = Instant::now() + Duration::from_millis(ms);
    while !shared.stop.load(SeqCst) {
        let now = Instant::now();
        if now >= end {
            return true;
        }
        thread::sleep((end - now).min(Duration::from_millis(10)));
    }
    false
}

struct Request {
    method: String,
    target: String,
    bad: bool,
    /// The head's last byte is still unread (see [`read_request`]).
    pending: bool,
    range: Option<String>,
    accept: Option<String>,
}

struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
    /// What Content-Length says (none: the body ends with the connection); `send` is how many
    /// body bytes actually go out.
    claim: Option<u64>,
    send: usize,
    /// How to send: Trickle, Stall and ResetAfter act in [`send`].
    fault: Option<Fault>,
    path: String,
}

impl Reply {
    fn new(status: u16, ctype: &str, body: Vec<u8>, path: &str) -> Reply {
        let headers = vec![("Content-Type", ctype.to_string())];
        let (claim, send) = (Some(body.len() as u64), body.len());
        Reply {
            status,
            headers,
            body,
            claim,
            send,
            fault: None,
            path: path.into(),
        }
    }

    fn text(status: u16, path: &str) -> Reply {
        let body = format!("{status} {}\n", reason(status)).into_bytes();
        Reply::new(status, "text/plain", body, path)
    }
}

fn handle(mut stream: TcpStream, root: &Path, shared: &Shared) {
    let _ = stream.set_nodelay(true); // so Trickle's small chunks leave when written
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(30)));
    // Closed or silent before a request: nobody to answer.
    let Some(req) = read_request(&stream) else {
        return;
    };
    let reply = respond(&req, root, shared);
    lock(&shared.log).push(Logged {
        method: req.method.clone(),
        path: reply.path.clone(),
        range: req.range.clone(),
        accept: req.accept.clone(),
        status: reply.status,
    });
    let reset = matches!(reply.fault, Some(Fault::ResetAfter(_)));
    if req.pending && !reset {
        let _ = stream.read(&mut [0u8; 1]); // the byte read_request left unread; see there
    }
    if send(&mut stream, &reply, req.method == "HEAD", shared).is_ok() && reset {
        // Let the bytes already written reach the client before the reset discards the queue.
        nap(shared, 50);
    }
}

/// Reads the request head by peeking, and consumes all of it but its last byte. Closing a socket
/// with unread input makes the kernel send a RST instead of a FIN; std cannot set SO_LINGER (and
/// the crate forbids `unsafe`), so this is how [`Fault::ResetAfter`] resets the connection.
fn read_request(stream: &TcpStream) -> Option<Request> {
    let (mut head, mut buf) = (Vec::new(), vec![0u8; 8192]);
    let end = loop {
        let n = match stream.peek(&mut buf) {
            Ok(0) | Err(_) if head.is_empty() => return None,
            Ok(0) | Err(_) => break None,
            Ok(n) => n,
        };
        let old = head.len();
        head.extend_from_slice(&buf[..n]);
        // The head ends at the first empty line (CRLF or bare LF), which lies past `old`.
        let found = (old.saturating_sub(2)..head.len()).find_map(|i| match &head[i..] {
            [b'\n', b'\n', ..] => Some(i + 2),
            [b'\n', b'\r', b'\n', ..] => Some(i + 3),
            _ => None,
        });
        let take = match found {
            Some(e) => (e - old).saturating_sub(1),
            None if head.len() > MAX_HEAD => break None,
            None => n, // consume what was peeked, or the next peek returns it again at once
        };
        if (&*stream).read_exact(&mut buf[..take]).is_err() {
            break None;
        }
        if let Some(e) = found {
            head.truncate(e);
            break Some(e);
        }
    };
    let text = String::from_utf8_lossy(&head);
    let mut lines = text.lines();
    let first: Vec<&str> = lines.next().unwrap_or("").split(' ').collect();
    let mut req = Request {
        method: first.first().unwrap_or(&"").to_string(),
        target: first.get(1).unwrap_or(&"").to_string(),
        bad: end.is_none() || first.len() != 3 || !first[2].starts_with("HTTP/1."),
        pending: end.is_some(),
        range: None,
        accept: None,
    };
    for line in lines.take_while(|l| !l.is_empty()) {
        let Some((name, value)) = line.split_once(':') else {
            req.bad = true;
            continue;
        };
        let value = Some(value.trim().to_string());
        match name.trim().to_ascii_lowercase().as_str() {
            "range" => req.range = value,
            "accept" => req.accept = value,
            _ => {}
        }
    }
    Some(req)
}

fn respond(req: &Request, root: &Path, shared: &Shared) -> Reply {
    let raw = req.target.split('?').next().unwrap_or("");
    let decoded = percent_decode(raw).filter(|p| p.starts_with('/'));
    let (Some(path), false) = (decoded, req.bad) else {
        return Reply::text(400, raw);
    };
    if req.method != "GET" && req.method != "HEAD" {
        let mut r = Reply::text(405, &path);
        r.headers.push(("Allow", "GET, HEAD".into()));
        return r;
    }
    let Some(file) = resolve(root, &path) else {
        return Reply::text(400, &path);
    };
    let fault = take_fault(shared, &path, req.range.is_some());
    if let Some(Fault::Status(code)) = fault {
        let mut r = Reply::text(code, &path);
        if code == 429 {
            r.headers.push(("Retry-After", "0".into()));
        }
        return r;
    }
    let Some((file, ctype)) = locate(file, req.accept.as_deref()) else {
        return Reply::text(404, &path);
    };
    let Ok(data) = std::fs::read(&file) else {
        return Reply::text(404, &path);
    };
    let total = data.len() as u64;
    let want = match (fault, req.range.as_deref()) {
        (Some(Fault::IgnoreRange), _) | (_, None) => Want::Whole,
        (Some(Fault::RangeNotSatisfiable), Some(_)) => Want::Unsatisfiable,
        (_, Some(spec)) => parse_range(spec, total),
    };
    let mut reply = match want {
        Want::Whole => Reply::new(200, ctype, data, &path),
        Want::Unsatisfiable => {
            let mut r = Reply::text(416, &path);
            r.headers
                .push(("Content-Range", format!("bytes */{total}")));
            r
        }
        Want::Part(a, b) => {
            let mut r = Reply::new(206, ctype, data[a as usize..=b as usize].to_vec(), &path);
            r.headers
                .push(("Content-Range", format!("bytes {a}-{b}/{total}")));
            r
        }
    };
    reply.headers.push(("Accept-Ranges", "bytes".into()));
    let len = reply.body.len();
    match fault {
        Some(Fault::ResetAfter(n) | Fault::Truncate(n)) => reply.send = len.min(n as usize),
        Some(Fault::WrongLength(d)) => {
            let claim = (len as i64).saturating_add(d).max(0) as u64;
            reply.claim = Some(claim);
            reply.send = len.min(claim as usize);
        }
        Some(Fault::Endless | Fault::NoLength) => reply.claim = None,
        Some(Fault::Gzip) => {
            use std::io::Write as _;
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(&reply.body).expect("gzip in memory");
            reply.body = gz.finish().expect("gzip in memory");
            reply.claim = Some(reply.body.len() as u64);
            reply.send = reply.body.len();
            reply.headers.push(("Content-Encoding", "gzip".into()));
        }
        _ => {}
    }
    reply.fault = fault;
    reply
}

fn take_fault(shared: &Shared, path: &str, ranged: bool) -> Option<Fault> {
    let mut faults = lock(&shared.faults);
    let queue = faults.get_mut(path)?;
    let (fault, left) = queue.front_mut()?;
    if *fault == Fault::RangeNotSatisfiable && !ranged {
        return None;
    }
    let fault = *fault;
    *left -= 1;
    if *left == 0 {
        queue.pop_front();
    }
    Some(fault)
}

enum Want {
    Whole,
    Part(u64, u64),
    Unsatisfiable,
}

/// `bytes=N-`, `bytes=N-M` or `bytes=-S`; anything else (multiple ranges, other units, nonsense)
/// is ignored and the whole file served, as RFC 9110 allows.
fn parse_range(spec: &str, total: u64) -> Want {
    let Some((a, b)) = spec
        .trim()
        .strip_prefix("bytes=")
        .and_then(|s| s.split_once('-'))
    else {
        return Want::Whole;
    };
    let (a, b) = (a.trim(), b.trim());
    if a.is_empty() {
        return match b.parse::<u64>() {
            Ok(0) => Want::Unsatisfiable,
            Ok(_) if total == 0 => Want::Unsatisfiable,
            Ok(n) => Want::Part(total.saturating_sub(n), total - 1),
            Err(_) => Want::Whole,
        };
    }
    let end = b
        .parse::<u64>()
        .or(if b.is_empty() { Ok(u64::MAX) } else { Err(()) });
    match (a.parse::<u64>(), end) {
        (Ok(start), Ok(end)) if start <= end && start >= total => Want::Unsatisfiable,
        (Ok(start), Ok(end)) if start <= end => Want::Part(start, end.min(total - 1)),
        _ => Want::Whole,
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let hex = |c: u8| (c as char).to_digit(16);
    let (b, mut out, mut i) = (s.as_bytes(), Vec::new(), 0);
    while i < b.len() {
        if b[i] == b'%' {
            let (hi, lo) = (hex(*b.get(i + 1)?)?, hex(*b.get(i + 2)?)?);
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Maps a decoded path under `root`; None (a 400) for `..` or characters that could escape it.
fn resolve(root: &Path, path: &str) -> Option<PathBuf> {
    let mut out = root.to_path_buf();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => return None,
            s if s.contains(['\\', '\0']) => return None,
            s => out.push(s),
        }
    }
    Some(out)
}

/// The file to serve and its Content-Type; a directory serves its index (JSON per PEP 691 when
/// the client asks for it and the directory has one).
fn locate(file: PathBuf, accept: Option<&str>) -> Option<(PathBuf, &'static str)> {
    if file.is_dir() {
        let json = file.join("index.json");
        if accept.is_some_and(|a| a.contains(PEP691)) && json.is_file() {
            return Some((json, PEP691));
        }
        let html = file.join("index.html");
        return html.is_file().then_some((html, "text/html"));
    }
    let ctype = match file.extension().and_then(|e| e.to_str()) {
        Some("json") => "application/json",
        Some("html") => "text/html",
        _ => "application/octet-stream",
    };
    file.is_file().then_some((file, ctype))
}

fn send(stream: &mut TcpStream, reply: &Reply, head_only: bool, shared: &Shared) -> io::Result<()> {
    let status = reply.status;
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    if let Some(claim) = reply.claim {
        out.push_str(&format!("Content-Length: {claim}\r\n"));
    }
    for (name, value) in &reply.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("Connection: close\r\n\r\n");
    stream.write_all(out.as_bytes())?;
    let body = if head_only {
        &[][..]
    } else {
        &reply.body[..reply.send]
    };
    let count = |n: usize| *lock(&shared.sent).entry(reply.path.clone()).or_default() += n as u64;
    match reply.fault {
        Some(Fault::Kill { after }) if !head_only => {
            let (first, _) = body.split_at(body.len().min(after as usize));
            stream.write_all(first)?;
            stream.flush()?;
            count(first.len());
            let pid = shared.victim.load(SeqCst);
            if pid != 0 {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
            return Ok(());
        }
        Some(Fault::Endless) if !head_only => {
            stream.write_all(body)?;
            count(body.len());
            let zeros = vec![0u8; 64 * 1024];
            for _ in 0..(4u64 << 30) / zeros.len() as u64 {
                if shared.stop.load(SeqCst) {
                    return Ok(());
                }
                stream.write_all(&zeros)?;
                count(zeros.len());
            }
        }
        Some(Fault::Trickle {
            bytes_per_chunk: chunk,
            delay_ms,
        }) => {
            for (i, piece) in body.chunks(chunk.max(1)).enumerate() {
                if i > 0 && !nap(shared, delay_ms) {
                    return Ok(());
                }
                stream.write_all(piece)?;
                count(piece.len());
            }
        }
        Some(Fault::Stall { after, ms }) => {
            let (first, rest) = body.split_at(body.len().min(after as usize));
            stream.write_all(first)?;
            count(first.len());
            if !nap(shared, ms) {
                return Ok(());
            }
            stream.write_all(rest)?;
            count(rest.len());
        }
        _ => {
            stream.write_all(body)?;
            count(body.len());
        }
    }
    stream.flush()?;
    if !matches!(reply.fault, Some(Fault::ResetAfter(_))) {
        // An orderly FIN: with Connection: close, this is how the client knows the body ended.
        stream.shutdown(Shutdown::Write)?;
    }
    Ok(())
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        206 => "Partial Content",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        416 => "Range Not Satisfiable",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Injected Fault",
    }
}
