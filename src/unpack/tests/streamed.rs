//! Wheels unpacked from a stream ([`unpack_wheel_stream`]) against the file route
//! ([`unpack_file`]): the same tree and entries for a plain wheel, RECORD's hashes taken, and
//! every hostile case either refused while streaming or handed to the file route, with nothing
//! written outside `dest`.

use base64::Engine as _;

use super::*;

/// A stream that hands out a few bytes per read, as a network body does.
struct Trickle<'a>(&'a [u8]);

impl Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = out.len().min(self.0.len()).min(7_777);
        out[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

fn stream(scene: &Scene, zip: &[u8], o: &Options<'_>) -> Result<Streamed, UnpackError> {
    unpack_wheel_stream(io::BufReader::new(Trickle(zip)), &scene.dest(), o)
}

fn record_line(name: &str, data: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(data));
    format!("{name},sha256={b64},{}\n", data.len())
}

/// NVIDIA's shape: files (one executable), a directory entry, METADATA, and a RECORD that lists
/// every file (a name with a comma quoted, as Python's csv module writes it).
fn plain_wheel(
    build: impl FnOnce(&mut ::zip::ZipWriter<io::Cursor<Vec<u8>>>, &mut String),
) -> Vec<u8> {
    zip_with(|w| {
        let mut record = String::new();
        w.add_directory("nvidia/cu13/include/", zopts(0o755))
            .unwrap();
        for i in 0..30 {
            let name = format!("nvidia/cu13/lib/lib{i}.so");
            let data = noise(5_000 + i * 7_001, i as u64 + 3);
            w.start_file(name.as_str(), zopts(0o644)).unwrap();
            w.write_all(&data).unwrap();
            record += &record_line(&name, &data);
        }
        w.start_file("nvidia/cu13/bin/ptxas", zopts(0o755)).unwrap();
        w.write_all(b"\x7fELF ptxas").unwrap();
        record += &record_line("nvidia/cu13/bin/ptxas", b"\x7fELF ptxas");
        w.start_file("nvidia/cu13/include/a,b.h", stored()).unwrap();
        w.write_all(b"#define X 1\n").unwrap();
        record += &record_line("\"nvidia/cu13/include/a,b.h\"", b"#define X 1\n");
        build(w, &mut record);
        w.start_file("nvidia_x-1.0.dist-info/METADATA", zopts(0o644))
            .unwrap();
        w.write_all(b"Name: nvidia-x").unwrap();
        w.start_file("nvidia_x-1.0.dist-info/RECORD", zopts(0o644))
            .unwrap();
        record += "nvidia_x-1.0.dist-info/RECORD,,\n";
        w.write_all(record.as_bytes()).unwrap();
    })
}

fn unpacked(s: Result<Streamed, UnpackError>) -> Vec<Entry> {
    match s.unwrap() {
        Streamed::Unpacked(e) => e,
        Streamed::NeedsFile(why) => panic!("needs a file: {why}"),
    }
}

#[test]
fn a_streamed_wheel_unpacks_as_the_file_route_does() {
    let zip = plain_wheel(|_, _| {});
    let by_file = Scene::new();
    let file = by_file.write("w.whl", &zip);
    let want = unpack_file(Format::Zip, &file, &by_file.dest(), &opts(&skip_dist_info)).unwrap();
    let scene = Scene::new();
    let got = unpacked(stream(&scene, &zip, &opts(&skip_dist_info)));
    assert_eq!(got, want);
    assert_eq!(scene.listing(), by_file.listing());
    for e in &got {
        let (a, b) = (scene.dest().join(&e.path), by_file.dest().join(&e.path));
        assert_eq!(mode(&a), mode(&b), "{}", e.path.display());
        if matches!(e.kind, EntryKind::File { .. }) {
            assert_eq!(fs_err::read(&a).unwrap(), fs_err::read(&b).unwrap());
            assert_eq!(
                e.sha256.as_deref(),
                Some(sha(&fs_err::read(&a).unwrap()).as_str())
            );
        }
    }
    assert_ne!(mode(&scene.dest().join("nvidia/cu13/bin/ptxas")) & 0o100, 0);
    scene.assert_contained();
}

/// The data descriptor form (a writer that cannot seek back): the same tree.
#[test]
fn members_with_data_descriptors_stream_too() {
    let files: Vec<(String, Vec<u8>)> = (0..5)
        .map(|i| {
            (
                format!("nvidia/cu13/lib/d{i}.so"),
                noise(40_000 * (i + 1), i as u64),
            )
        })
        .collect();
    let mut w = ::zip::ZipWriter::new_stream(Vec::new());
    for (name, data) in &files {
        w.start_file(name.as_str(), zopts(0o644)).unwrap();
        w.write_all(data).unwrap();
    }
    let zip = w.finish().unwrap().into_inner();
    assert!(zip[6] & 8 != 0, "the writer used data descriptors");
    let scene = Scene::new();
    let got = unpacked(stream(&scene, &zip, &opts(&identity)));
    assert_eq!(
        got.iter().filter(|e| e.sha256.is_some()).count(),
        files.len()
    );
    for (name, data) in &files {
        assert_eq!(&fs_err::read(scene.dest().join(name)).unwrap(), data);
    }
    scene.assert_contained();
}

/// RECORD is the hash source for the files it lists with their size (here a well-formed hash
/// of other bytes, to show it is not recomputed); a file it omits, or lists with another size,
/// is hashed from disk.
#[test]
fn the_sha256_comes_from_record_when_it_lists_the_file_with_its_size() {
    let zip = plain_wheel(|w, record| {
        w.start_file("nvidia/cu13/lib/listed.so", zopts(0o644))
            .unwrap();
        w.write_all(b"real bytes").unwrap();
        *record += &record_line("nvidia/cu13/lib/listed.so", b"other byte");
        w.start_file("nvidia/cu13/lib/resized.so", zopts(0o644))
            .unwrap();
        w.write_all(b"real bytes").unwrap();
        *record += &record_line("nvidia/cu13/lib/resized.so", b"other bytes!");
        w.start_file("nvidia/cu13/lib/unlisted.so", zopts(0o644))
            .unwrap();
        w.write_all(b"unlisted").unwrap();
    });
    let scene = Scene::new();
    let got = unpacked(stream(&scene, &zip, &opts(&skip_dist_info)));
    let hash = |p: &str| {
        got.iter()
            .find(|e| e.path == Path::new(p))
            .and_then(|e| e.sha256.clone())
            .unwrap()
    };
    assert_eq!(hash("nvidia/cu13/lib/listed.so"), sha(b"other byte"));
    assert_eq!(hash("nvidia/cu13/lib/resized.so"), sha(b"real bytes"));
    assert_eq!(hash("nvidia/cu13/lib/unlisted.so"), sha(b"unlisted"));
}

/// What the streaming reader does not follow goes to the file route: a symlink (the kind only
/// the central directory gives), a local header that disagrees with the central directory,
/// bytes before the first member.
#[test]
fn unusual_archives_are_handed_to_the_file_route() {
    let (with_link, _) = wheel();
    let mut renamed = plain_wheel(|_, _| {});
    // The first file's local name differs from its central directory name.
    let at = renamed
        .windows(5)
        .position(|w| w == b"lib0.")
        .expect("first member's local name");
    renamed[at + 3] = b'9';
    let mut prefixed = b"MZ self-extractor".to_vec();
    prefixed.extend_from_slice(&plain_wheel(|_, _| {}));
    for (what, zip) in [
        ("symlink", with_link),
        ("renamed", renamed),
        ("prefixed", prefixed),
    ] {
        let scene = Scene::new();
        match stream(&scene, &zip, &opts(&skip_dist_info)) {
            Ok(Streamed::NeedsFile(_)) => {}
            other => panic!("{what}: {other:?}"),
        }
        scene.assert_contained();
    }
}

/// The hostile archives of the file route's tests, streamed: refused with the same kind of
/// error while streaming, or handed to the file route (which refuses them); never anything
/// outside `dest`.
#[test]
fn hostile_wheels_are_refused_or_handed_over_and_nothing_escapes() {
    let mut cases = hostile_zips();
    let whole = plain_wheel(|_, _| {});
    cases.push(
        ("truncated".into(), whole[..whole.len() / 2].to_vec(), |e| {
            matches!(e, UnpackError::Corrupt(_))
        }),
    );
    for (what, zip, check) in cases {
        let scene = Scene::new();
        match stream(&scene, &zip, &opts(&identity)) {
            Err(e) => assert!(check(&e), "{what}: {e}"),
            Ok(Streamed::NeedsFile(_)) => {
                let file = scene.write("a.zip", &zip);
                let fresh = Scene::new();
                let e = unpack_file(Format::Zip, &file, &fresh.dest(), &opts(&identity));
                assert!(e.as_ref().is_err_and(check), "{what}: file route: {e:?}");
            }
            Ok(Streamed::Unpacked(e)) => panic!("{what}: unpacked {e:?}"),
        }
        scene.assert_contained();
    }
}

#[test]
fn streamed_bombs_and_cancel_stop() {
    let zip = plain_wheel(|_, _| {});
    for (limits, what) in [
        (
            Limits {
                max_total_bytes: 100_000,
                max_entries: 1000,
            },
            "bytes",
        ),
        (
            Limits {
                max_total_bytes: 1 << 30,
                max_entries: 10,
            },
            "entries",
        ),
    ] {
        let scene = Scene::new();
        let o = Options {
            limits,
            ..opts(&identity)
        };
        let e = stream(&scene, &zip, &o).unwrap_err();
        assert!(matches!(e, UnpackError::TooLarge(_)), "{what}: {e}");
        scene.assert_contained();
    }
    let cancel = AtomicBool::new(true);
    let scene = Scene::new();
    let o = Options {
        cancel: Some(&cancel),
        ..opts(&identity)
    };
    let e = stream(&scene, &zip, &o).unwrap_err();
    assert!(matches!(e, UnpackError::Cancelled), "{e}");
}
