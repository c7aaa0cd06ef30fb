//! Servers that never stop sending, or send what was not asked for (issue 11, item 2 and the
//! network-error and gzip cases of item 5): every download is bounded by the size its source
//! lists, else the Content-Length, else a ceiling, and each error names its cause and limit.

use std::net::TcpListener;

use crate::common::server::{Fault, Server};
use crate::hostile::*;

fn http(server: &Server) -> Vec<String> {
    vec!["--mirror".into(), server.url(), "--allow-http".into()]
}

fn install(sb: &Sandbox, source: &[String], env: &[(&str, &str)]) -> crate::common::Run {
    let refs: Vec<&str> = source.iter().map(String::as_str).collect();
    sb.install_env(&refs, Some(&sb.prefix()), env)
}

/// Far below the 4 GiB an endless body would reach, far above what socket buffers hold.
const BOUNDED: u64 = 64 << 20;

/// The redistrib JSON lists a size: reading stops there, on the first request and on a resumed
/// one, whatever the server still has; the install verifies and succeeds.
#[test]
fn a_declared_size_is_never_exceeded() {
    let m = Redist::new(&[]);
    let nvcc = m.archive_path("cuda_nvcc");
    for (name, faults) in [
        ("endless", vec![(Fault::Endless, 1)]),
        (
            "reset, then endless on resume",
            vec![(Fault::ResetAfter(60), 1), (Fault::Endless, 1)],
        ),
    ] {
        let server = Server::start(m.path().to_owned());
        for (f, n) in faults {
            server.fault(&nvcc, f, n);
        }
        let sb = Sandbox::new();
        let run = install(&sb, &http(&server), &[]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        assert!(
            server.sent(&nvcc) < BOUNDED,
            "{name}: {} bytes sent",
            server.sent(&nvcc)
        );
        sb.assert_canary(name);
        assert_eq!(sb.uninstall().code, 0);
        sb.assert_clean(name);
    }
}

/// A wheel index that gives no size (PEP 503 HTML), a server with no Content-Length that never
/// stops: cut off at the ceiling, exit 4, the error names the ceiling, nothing kept.
#[test]
fn a_wheel_without_any_size_stops_at_the_ceiling() {
    let index = wheel_index(&[]);
    let server = Server::start(index.path().to_owned());
    let wheel = "/nvidia-cuda-nvcc/nvidia_cuda_nvcc-13.0.88-py3-none-manylinux_2_27_x86_64.whl";
    server.fault(wheel, Fault::Endless, 100);
    let sb = Sandbox::new();
    let source = vec![
        "--source".into(),
        "wheels".into(),
        "--index-url".into(),
        server.url(),
        "--allow-http".into(),
    ];
    let run = install(&sb, &source, &[("CUDAUP_MAX_DOWNLOAD_BYTES", "1000000")]);
    sb.assert_refused(&run, "the download ceiling of", "endless wheel");
    assert!(
        run.stderr.contains("CUDAUP_MAX_DOWNLOAD_BYTES"),
        "{}",
        run.stderr
    );
    assert!(server.sent(wheel) < BOUNDED, "{} sent", server.sent(wheel));
    assert_eq!(
        server.requests().iter().filter(|r| r.path == wheel).count(),
        1,
        "not retried"
    );
    // (Wheels stream without touching the download cache, so it may not even exist.)
    let partials: Vec<_> = std::fs::read_dir(sb.cudaup_home().join("cache/downloads"))
        .into_iter()
        .flatten()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".partial"))
        .collect();
    assert!(partials.is_empty(), "{partials:?}");
    // Without the fault the same index installs (the Content-Length is then the limit).
    server.clear_faults();
    let sb = Sandbox::new();
    let run = install(&sb, &source, &[("CUDAUP_MAX_DOWNLOAD_BYTES", "1000000")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(sb.uninstall().code, 0);
    sb.assert_clean("wheel index");
}

/// Issue 33, finding 8: a wheel whose index gives no size, from a server that never stops, is
/// bounded by the size the catalog records for it (nvidia-cuda-nvcc 13.0.88 for x86_64:
/// 37,384,532 bytes, and a quarter more), not by the 2 GiB any wheel may have: exit 4, the error
/// names the catalog's size, the server sent no more than that, nothing is kept.
#[test]
fn a_wheel_without_a_size_stops_at_the_size_the_catalog_records() {
    let index = wheel_index(&[]);
    let server = Server::start(index.path().to_owned());
    let wheel = "/nvidia-cuda-nvcc/nvidia_cuda_nvcc-13.0.88-py3-none-manylinux_2_27_x86_64.whl";
    server.fault(wheel, Fault::Endless, 100);
    let sb = Sandbox::new();
    let source = vec![
        "--source".into(),
        "wheels".into(),
        "--index-url".into(),
        server.url(),
        "--allow-http".into(),
    ];
    let run = install(&sb, &source, &[]);
    let recorded: u64 = 37_384_532;
    let bound = recorded + recorded / 4;
    sb.assert_refused(
        &run,
        "its catalog entry allows (it records 35.65 MiB",
        "endless wheel",
    );
    let sent = server.sent(wheel);
    // What the client read stops one byte past the bound; the socket buffers hold a few MiB more.
    assert!(
        sent > bound && sent < bound + (16 << 20),
        "{sent} sent, bound {bound}"
    );
    assert_eq!(
        server.requests().iter().filter(|r| r.path == wheel).count(),
        1,
        "not retried"
    );
    let downloads = snapshot(&sb.cudaup_home().join("cache/downloads"));
    assert!(
        downloads
            .keys()
            .all(|k| !k.to_string_lossy().ends_with(".partial")),
        "{downloads:?}"
    );
}

/// A redistrib JSON that never ends is refused at the document limit, not read forever.
#[test]
fn an_endless_manifest_stops_at_the_document_limit() {
    let m = Redist::new(&[]);
    let server = Server::start(m.path().to_owned());
    let json = "/compute/cuda/redist/redistrib_13.0.2.json";
    server.fault(json, Fault::Endless, 100);
    let sb = Sandbox::new();
    let run = install(&sb, &http(&server), &[]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("a redistrib JSON or index page may have"),
        "{}",
        run.stderr
    );
    assert!(server.sent(json) < 2 * BOUNDED, "{}", server.sent(json));
    sb.assert_canary("endless manifest");
}

/// `Content-Encoding: gzip` although cudaup asks for identity: decoded, verified, installed;
/// on a resumed request it restarts from zero rather than append compressed bytes.
#[test]
fn a_gzipped_reply_is_decoded_and_verified() {
    let m = Redist::new(&[]);
    let nvcc = m.archive_path("cuda_nvcc");
    let server = Server::start(m.path().to_owned());
    server.fault(&nvcc, Fault::Gzip, 1);
    server.fault("/compute/cuda/redist/redistrib_13.0.2.json", Fault::Gzip, 1);
    let sb = Sandbox::new();
    let run = install(&sb, &http(&server), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(sb.prefix().join("include/cuda_nvcc.h").is_file());
    assert_eq!(sb.uninstall().code, 0);

    let server = Server::start(m.path().to_owned());
    server.fault(&nvcc, Fault::ResetAfter(60), 1);
    server.fault(&nvcc, Fault::Gzip, 1);
    let sb = Sandbox::new();
    let run = install(&sb, &http(&server), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("compressed the resumed part"),
        "{}",
        run.stderr
    );
    assert_eq!(sb.uninstall().code, 0);
    sb.assert_clean("gzip");
}

/// A local mirror's file must be exactly what was hashed: a longer file, a FIFO, or a link to
/// /dev/zero is refused before it is read to the end.
#[test]
fn a_local_mirror_file_is_bounded_too() {
    let m = Redist::new(&[]);
    let archive = m
        .path()
        .join(m.archive_path("cuda_nvcc").trim_start_matches('/'));
    let sb = Sandbox::new();
    let mut bytes = fs_err::read(&archive).unwrap();
    bytes.extend_from_slice(b"trailing bytes nobody hashed");
    fs_err::write(&archive, &bytes).unwrap();
    let run = sb.install(&["--mirror", &m.arg()], Some(&sb.prefix()));
    sb.assert_refused(&run, "the download is longer than", "longer local file");
    fs_err::remove_file(&archive).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &archive).unwrap();
    let run = sb.install(&["--mirror", &m.arg()], Some(&sb.prefix()));
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("not a regular file"), "{}", run.stderr);
    sb.assert_canary("/dev/zero");
}

/// Each network failure is named by its cause, not by reqwest's outer words.
#[test]
fn network_errors_name_their_cause() {
    let m = Redist::new(&[]);
    let nvcc = m.archive_path("cuda_nvcc");
    let no_retry = [("CUDAUP_HTTP_RETRIES", "0"), ("CUDAUP_HTTP_TIMEOUT", "1")];
    let check = |what: &str, run: &crate::common::Run, needle: &str| {
        assert_eq!(run.code, 3, "{what}: {}", run.stderr);
        assert!(
            run.stderr.contains(needle),
            "{what}: `{needle}` in\n{}",
            run.stderr
        );
        for vague in ["error sending request", "error decoding response body"] {
            assert!(!run.stderr.contains(vague), "{what}: vague: {}", run.stderr);
        }
    };
    let sb = Sandbox::new();
    // Refused: a port nothing listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let source = vec![
        "--mirror".into(),
        format!("http://127.0.0.1:{port}"),
        "--allow-http".into(),
    ];
    check(
        "refused",
        &install(&sb, &source, &no_retry),
        "connection refused",
    );
    // Reset mid-body.
    let server = Server::start(m.path().to_owned());
    server.fault(&nvcc, Fault::ResetAfter(60), 10);
    check("reset", &install(&sb, &http(&server), &no_retry), "reset");
    // Silent past the read timeout.
    let server = Server::start(m.path().to_owned());
    server.fault(
        &nvcc,
        Fault::Stall {
            after: 60,
            ms: 3000,
        },
        10,
    );
    check(
        "timeout",
        &install(&sb, &http(&server), &no_retry),
        "timed out",
    );
    // Closed before the Content-Length was reached.
    let server = Server::start(m.path().to_owned());
    server.fault(&nvcc, Fault::Truncate(60), 10);
    let run = install(&sb, &http(&server), &no_retry);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("closed the connection")
            || run.stderr.contains("the download ended after"),
        "{}",
        run.stderr
    );
    // A name that does not resolve.
    let source = vec!["--mirror".into(), "https://nothing-here.invalid".into()];
    check("dns", &install(&sb, &source, &no_retry), "does not resolve");
    // TLS to something that answers in plain text: named, and never retried.
    let plain = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = plain.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in plain.incoming() {
            let Ok(mut conn) = conn else { continue };
            let _ = std::io::Write::write_all(&mut conn, b"HTTP/1.1 400 Bad Request\r\n\r\n");
        }
    });
    let source = vec!["--mirror".into(), format!("https://{addr}")];
    let run = install(&sb, &source, &[("CUDAUP_HTTP_RETRIES", "3")]);
    check("tls", &run, "TLS failed");
    assert!(!run.stderr.contains("retrying"), "{}", run.stderr);
    sb.assert_canary("network errors");
}

/// Issue 38: wheels are unpacked while they download, before their hash is known. A mirror
/// that serves other bytes than its index's sha256 gets its members inflated into the staging
/// tree (seen here, parked just before the hash is checked), and then nothing of them lands
/// anywhere else: exit 4 naming the checksum, no prefix, no unpacked tree, no staging tree, no
/// download kept, and nothing outside the sandbox touched.
#[test]
fn a_streamed_wheel_whose_hash_fails_leaves_nothing_of_what_it_inflated() {
    let index = wheel_index(&[]);
    // Every wheel swapped for one with an extra member, under the index's old sha256.
    for (project, component) in WHEELS {
        let dir = index.path().join(project);
        let served = fs_err::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "whl"))
            .unwrap();
        let version = served
            .file_name()
            .unwrap()
            .to_string_lossy()
            .split('-')
            .nth(1)
            .unwrap()
            .to_owned();
        let mut members = harmless(component)[1..].to_vec();
        members.push(file(
            &format!("bin/planted-{component}"),
            "not what the index hashed",
        ));
        let (_, bytes) = wheel(project, &version, &members);
        fs_err::write(&served, bytes).unwrap();
    }
    let server = Server::start(index.path().to_owned());
    let source: Vec<String> = vec![
        "--source".into(),
        "wheels".into(),
        "--index-url".into(),
        server.url(),
        "--allow-http".into(),
    ];
    // The planted members under `root`, relative (a walk that tolerates trees vanishing under it).
    fn planted(root: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        let mut dirs = vec![root.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let p = e.path();
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    dirs.push(p);
                } else if e.file_name().to_string_lossy().starts_with("planted-") {
                    out.push(p.strip_prefix(root).unwrap().to_owned());
                }
            }
        }
        out
    }

    // Parked after a wheel's members were inflated, before its hash is checked.
    let sb = Sandbox::new();
    let refs: Vec<&str> = source.iter().map(String::as_str).collect();
    let args = sb.install_args(&refs, Some(&sb.prefix()));
    let child = parked(&sb, &args, "unkept-consumed");
    let staged = planted(&sb.cudaup_home().join("cache/unpacked"));
    kill(child);
    assert!(
        staged.iter().all(|p| p
            .components()
            .next()
            .is_some_and(|c| c.as_os_str().to_string_lossy().starts_with(".tmp-"))),
        "only in staging trees: {staged:?}"
    );
    assert!(
        !staged.is_empty(),
        "the members were inflated before the hash was known"
    );
    assert!(planted(sb.prefix().parent().unwrap()).is_empty());

    // Run to the end: refused, and nothing of the inflated members is left anywhere.
    let sb = Sandbox::new();
    let run = install(&sb, &source, &[]);
    assert!(run.stderr.contains("checksum mismatch"), "{}", run.stderr);
    assert!(planted(&sb.cudaup_home()).is_empty());
    assert!(planted(sb.prefix().parent().unwrap()).is_empty());
    // No download kept, no tree built or half built: only lock files (and their folders), and
    // the index pages with their validators (`cache/index/`, docs/install.md). Those are the
    // pages' own bytes, sha256 and all: a wheel that does not match them is what was refused.
    let cache = snapshot(&sb.cudaup_home().join("cache"));
    assert!(
        cache.iter().all(|(k, v)| v.starts_with("dir")
            || k.to_string_lossy().ends_with(".lock")
            || k.starts_with("index")),
        "{cache:#?}"
    );
    sb.assert_refused(&run, "checksum mismatch", "wheel with another hash");
}

/// Issue 38: a wheel streamed into its staging tree whose connection breaks resumes inside the
/// same stream from the byte where it broke (`Range`); a server that ignores the range makes
/// the next attempt start again from byte 0 into a fresh staging tree. Either way the install
/// succeeds, the prefix holds the wheel's files once, and no wheel is kept in the cache.
#[test]
fn a_broken_wheel_stream_resumes_or_restarts_cleanly() {
    let index = wheel_index(&[]);
    let wheel = "/nvidia-cuda-nvcc/nvidia_cuda_nvcc-13.0.88-py3-none-manylinux_2_27_x86_64.whl";
    let source: Vec<String> = vec![
        "--source".into(),
        "wheels".into(),
        "--index-url".into(),
        "URL".into(),
        "--allow-http".into(),
    ];
    for (name, faults, resumed) in [
        ("reset", vec![(Fault::ResetAfter(100), 1)], true),
        (
            "reset, then the range ignored",
            vec![(Fault::ResetAfter(100), 1), (Fault::IgnoreRange, 1)],
            false,
        ),
    ] {
        let server = Server::start(index.path().to_owned());
        for (f, n) in faults {
            server.fault(wheel, f, n);
        }
        let mut source = source.clone();
        source[3] = server.url();
        let sb = Sandbox::new();
        let run = install(&sb, &source, &[]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let log: Vec<_> = server
            .requests()
            .into_iter()
            .filter(|r| r.path == wheel)
            .collect();
        let ranged = log[1]
            .range
            .as_deref()
            .is_some_and(|r| r.starts_with("bytes=") && !r.starts_with("bytes=0-"));
        assert!(ranged, "{name}: resumed with Range: {log:?}");
        if !resumed {
            assert!(
                log.len() >= 3 && log[2].range.is_none(),
                "{name}: restarted: {log:?}"
            );
        }
        assert!(
            sb.prefix().join("include/cuda_nvcc.h").is_file(),
            "{name}: {:?}",
            snapshot(&sb.prefix()).keys().collect::<Vec<_>>()
        );
        let kept: Vec<_> = snapshot(&sb.cudaup_home().join("cache/downloads"))
            .into_iter()
            .filter(|(k, _)| !k.to_string_lossy().ends_with(".lock"))
            .collect();
        assert!(kept.is_empty(), "{name}: {kept:?}");
        assert_eq!(sb.uninstall().code, 0);
        sb.assert_clean(name);
    }
}

/// Ctrl-C while a wheel streams: exit 130, and the one line says what is true of wheels (nothing
/// of a wheel cut off is kept, so it downloads again from its first byte); the same command
/// again asks for the wheel from byte 0 and installs it.
#[test]
fn ctrl_c_during_a_wheel_says_it_downloads_again_and_it_does() {
    let index = wheel_index(&[]);
    let wheel = "/nvidia-cuda-nvcc/nvidia_cuda_nvcc-13.0.88-py3-none-manylinux_2_27_x86_64.whl";
    let server = Server::start(index.path().to_owned());
    // The stand-in wheel is a few hundred bytes: 4 every 100 ms keeps it streaming for seconds.
    let slow = Fault::Trickle {
        bytes_per_chunk: 4,
        delay_ms: 100,
    };
    server.fault(wheel, slow, 1);
    let url = server.url();
    let source = ["--source", "wheels", "--index-url", &url, "--allow-http"];
    let sb = Sandbox::new();
    let args = sb.install_args(&source, Some(&sb.prefix()));
    let child = sb.spawn(&args, &[]);
    let t0 = std::time::Instant::now();
    while !server.requests().iter().any(|r| r.path == wheel) {
        assert!(t0.elapsed().as_secs() < 60, "the wheel was never asked for");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let int = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(int.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let said: Vec<&str> = stderr.lines().filter(|l| l.contains("cancelled")).collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].contains("except a wheel cut off mid-download: only a wheel's finished, verified tree is kept, so it downloads again from its first byte"),
        "{}",
        said[0]
    );
    assert!(!sb.prefix().exists(), "no prefix after Ctrl-C");

    server.clear_log();
    let again = install(&sb, &source.map(String::from), &[]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    let asked: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.path == wheel)
        .collect();
    assert!(
        !asked.is_empty() && asked.iter().all(|r| r.range.is_none()),
        "from byte 0: {asked:?}"
    );
    assert!(sb.prefix().join("include/cuda_nvcc.h").is_file());
    assert_eq!(sb.uninstall().code, 0);
    sb.assert_clean("ctrl-c during a wheel");
}
