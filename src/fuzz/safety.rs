//! Fuzz targets of issue 33: what a writable folder may hold at a lock file's name. The
//! property beyond "no panic": a file cudaup did not make is never changed through a lock, and a
//! lock is only ever held on a regular file holding cudaup's `pid N`.

use std::path::Path;

use super::engine::Target;
use crate::world::fs::{lock_file, Taken};

/// The victim's bytes: what must still be there after every input.
const VICTIM: &[u8] = b"root:x:0:0:root:/root:/bin/bash\n";

/// The input: what stands at the lock's name (first byte: nothing, the bytes that follow, a
/// link to the victim, a dangling link, a FIFO, a directory, a hard link to the victim, a link
/// loop), then the bytes.
fn run_lock_file(input: &[u8], sandbox: &Path) {
    let (op, body) = match input {
        [op, rest @ ..] => (*op, rest),
        [] => (0, &[][..]),
    };
    let victim = sandbox.join("victim");
    let lock = sandbox.join(".prefix.lock");
    let _ = fs_err::remove_file(&lock);
    let _ = fs_err::remove_dir(&lock);
    fs_err::write(&victim, VICTIM).expect("the victim written");
    {
        use std::os::unix::fs::symlink;
        let _ = match op % 8 {
            0 => Ok(()),
            2 => symlink(&victim, &lock),
            3 => symlink(sandbox.join("made-through-a-link"), &lock),
            4 => rustix::fs::mkfifoat(
                rustix::fs::CWD,
                &lock,
                rustix::fs::Mode::from_raw_mode(0o600),
            )
            .map_err(std::io::Error::from),
            5 => fs_err::create_dir(&lock),
            6 => fs_err::hard_link(&victim, &lock),
            7 => symlink(&lock, &lock),
            _ => fs_err::write(&lock, body),
        };
    }
    // Read only a plain file: the harness must not hang on the FIFO either.
    let before = fs_err::symlink_metadata(&lock)
        .is_ok_and(|m| m.is_file())
        .then(|| fs_err::read(&lock).ok())
        .flatten();
    let taken = lock_file(&lock, None::<fn(&str)>);
    assert_eq!(
        fs_err::read(&victim).expect("the victim is still there"),
        VICTIM,
        "the lock changed a file it does not own"
    );
    assert!(
        !sandbox.join("made-through-a-link").exists(),
        "the lock created a file through a link"
    );
    if let Ok(Taken::Held(held)) = taken {
        let meta = fs_err::symlink_metadata(held.path()).expect("the held lock exists");
        assert!(meta.is_file(), "a lock held on something not a file");
        let text = fs_err::read_to_string(held.path()).expect("the lock is readable");
        assert_eq!(text, format!("pid {}", std::process::id()));
        // What was there before was cudaup's (or nothing): never someone else's bytes.
        if let Some(before) = before {
            let before = String::from_utf8_lossy(&before);
            let before = before.trim();
            let cudaups = "pid ".starts_with(before)
                || before
                    .strip_prefix("pid ")
                    .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
            assert!(
                cudaups,
                "a lock file of other bytes was overwritten: {before:?}"
            );
        }
    }
    let _ = fs_err::remove_file(&lock);
    let _ = fs_err::remove_dir(&lock);
}

/// A lock file's name in a folder others may write (`/opt/.cuda.lock`, the home's lock).
pub const LOCK_FILE: Target = Target {
    name: "lock_file",
    seeds: || {
        let mut seeds: Vec<Vec<u8>> = (0u8..8).map(|op| vec![op]).collect();
        seeds.push(b"\x01pid 4242".to_vec());
        seeds.push(b"\x01pid 4242\n".to_vec());
        seeds.push(b"\x01".to_vec());
        seeds.push([&b"\x01"[..], VICTIM].concat());
        seeds
    },
    dict: &[b"pid ", b"pid", b"\n", b" ", b"0", b"9", b"\0", b"\xff"],
    run: run_lock_file,
    max_len: 256,
};

/// The number settings (first byte: which variable), then the value: never a panic (the clock
/// overflowed at 2^63 seconds), and a value taken is within its range.
fn run_settings_numbers(input: &[u8], _: &Path) {
    use crate::world::vars;
    let names = [
        vars::CUDAUP_HTTP_TIMEOUT,
        vars::CUDAUP_PROBE_TIMEOUT,
        vars::CUDAUP_HTTP_RETRIES,
        vars::CUDAUP_MAX_DOWNLOAD_BYTES,
        vars::CUDAUP_MAX_UNPACKED_BYTES,
    ];
    let (which, value) = match input {
        [w, rest @ ..] => (usize::from(*w) % names.len(), rest),
        [] => (0, &[][..]),
    };
    let value = String::from_utf8_lossy(value).into_owned();
    let name = names[which];
    let process = crate::world::process::Process::with_vars(
        vec![(name.to_owned(), value.clone())],
        Path::new("/"),
    );
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let cache = Path::new("/nonexistent/cache");
    let taken = match which {
        1 => crate::settings::net::probe_fetcher(&process, cache, false, cancel).is_ok(),
        4 => crate::settings::net::max_unpacked(&process).is_ok(),
        _ => crate::settings::net::fetcher(
            &process,
            cache,
            false,
            cancel,
            std::sync::Arc::new(crate::world::progress::Silent),
        )
        .is_ok(),
    };
    if taken && !value.trim().is_empty() {
        let n: u64 = value.trim().parse().expect("a value taken is a number");
        let ok = match which {
            0 | 1 => (1..=86_400).contains(&n),
            2 => n <= 100,
            _ => n >= 1,
        };
        assert!(ok, "{name}={value} was taken");
    }
}

/// The number settings (`CUDAUP_HTTP_TIMEOUT`, `CUDAUP_PROBE_TIMEOUT`, retries, byte limits).
pub const SETTINGS_NUMBERS: Target = Target {
    name: "settings_numbers",
    seeds: || {
        let mut seeds = Vec::new();
        for w in 0u8..5 {
            for v in [
                "0",
                "1",
                "30",
                "86400",
                "86401",
                "9223372036854775808",
                "-1",
                " 7 ",
            ] {
                let mut s = vec![w];
                s.extend_from_slice(v.as_bytes());
                seeds.push(s);
            }
        }
        seeds
    },
    dict: &[
        b"0",
        b"9",
        b"18446744073709551615",
        b" ",
        b"\r",
        b"\x1b",
        b"+",
        b"e",
    ],
    run: run_settings_numbers,
    max_len: 64,
};
