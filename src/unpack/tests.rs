//! Round trips and hostile archives, all built here in temporary directories.

#![cfg(unix)]

use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use sha2::{Digest, Sha256};

use super::*;

fn identity(p: &Path) -> Option<PathBuf> {
    Some(p.to_path_buf())
}

fn opts(map: PathMap<'_>) -> Options<'_> {
    Options {
        map,
        limits: Limits::default(),
        cancel: None,
        threads: 2,
    }
}

/// A root tempdir holding only `dest`, plus a separate tempdir for the archives.
struct Scene {
    root: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Scene {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        fs_err::create_dir(root.path().join("dest")).unwrap();
        Scene {
            root,
            work: tempfile::tempdir().unwrap(),
        }
    }
    fn dest(&self) -> PathBuf {
        self.root.path().join("dest")
    }
    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.work.path().join(name);
        fs_err::write(&path, bytes).unwrap();
        path
    }
    /// Nothing was written next to `dest`, and nothing on the archive side changed.
    fn assert_contained(&self) {
        let names: Vec<_> = fs_err::read_dir(self.root.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            vec![std::ffi::OsString::from("dest")],
            "something escaped dest"
        );
        for e in fs_err::read_dir(self.work.path()).unwrap() {
            let name = e.unwrap().file_name();
            assert!(
                !name.to_string_lossy().contains("evil"),
                "wrote {name:?} next to the archive"
            );
        }
    }
    /// Every path under dest, relative, sorted.
    fn listing(&self) -> Vec<String> {
        fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
            for e in fs_err::read_dir(dir).unwrap() {
                let e = e.unwrap();
                let path = e.path();
                out.push(path.strip_prefix(base).unwrap().display().to_string());
                if e.file_type().unwrap().is_dir() {
                    walk(&path, base, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.dest(), &self.dest(), &mut out);
        out.sort();
        out
    }
}

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn mode(path: &Path) -> u32 {
    fs_err::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

// ---------- building archives ----------

type TarB = ::tar::Builder<Vec<u8>>;

fn tar_with(build: impl FnOnce(&mut TarB)) -> Vec<u8> {
    let mut b = ::tar::Builder::new(Vec::new());
    build(&mut b);
    b.into_inner().unwrap()
}

fn add_file(b: &mut TarB, name: &str, data: &[u8], mode: u32) {
    let mut h = ::tar::Header::new_gnu();
    h.set_size(data.len() as u64);
    h.set_mode(mode);
    h.set_entry_type(::tar::EntryType::Regular);
    b.append_data(&mut h, name, data).unwrap();
}

fn add_dir(b: &mut TarB, name: &str) {
    let mut h = ::tar::Header::new_gnu();
    h.set_size(0);
    h.set_mode(0o755);
    h.set_entry_type(::tar::EntryType::Directory);
    b.append_data(&mut h, name, io::empty()).unwrap();
}

/// An entry with raw name and link bytes written straight into the header, bypassing the
/// checks `tar::Builder` makes.
fn add_raw(b: &mut TarB, name: &[u8], kind: ::tar::EntryType, link: &[u8], data: &[u8]) {
    let mut h = ::tar::Header::new_gnu();
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    h.set_entry_type(kind);
    let gnu = h.as_gnu_mut().unwrap();
    gnu.name[..name.len()].copy_from_slice(name);
    gnu.linkname[..link.len()].copy_from_slice(link);
    h.set_cksum();
    b.append(&h, data).unwrap();
}

fn add_symlink(b: &mut TarB, name: &str, target: &str) {
    add_raw(
        b,
        name.as_bytes(),
        ::tar::EntryType::Symlink,
        target.as_bytes(),
        b"",
    );
}

fn add_hardlink(b: &mut TarB, name: &str, target: &str) {
    add_raw(
        b,
        name.as_bytes(),
        ::tar::EntryType::Link,
        target.as_bytes(),
        b"",
    );
}

fn xz(data: &[u8]) -> Vec<u8> {
    let mut e = liblzma::write::XzEncoder::new(Vec::new(), 6);
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// Multi-block xz, as `xz -T0` writes it.
fn xz_blocks(data: &[u8], block_size: u64) -> Vec<u8> {
    let stream = liblzma::stream::MtStreamBuilder::new()
        .threads(4)
        .block_size(block_size)
        .preset(6)
        .encoder()
        .unwrap();
    let mut e = liblzma::write::XzEncoder::new_stream(Vec::new(), stream);
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// The number of blocks of a single-stream xz file, from its index: the footer's backward size
/// locates the index, which starts with a 0x00 indicator and the record count (a varint).
fn xz_block_count(xz: &[u8]) -> u64 {
    let footer = &xz[xz.len() - 12..];
    assert_eq!(&footer[10..], b"YZ");
    let backward = (u32::from_le_bytes(footer[4..8].try_into().unwrap()) as usize + 1) * 4;
    let index = &xz[xz.len() - 12 - backward..];
    assert_eq!(index[0], 0);
    let (mut count, mut shift) = (0u64, 0);
    for &b in &index[1..] {
        count |= u64::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            break;
        }
    }
    count
}

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// Compressible pseudo-random bytes (a few distinct words, xorshift-chosen).
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let words: [&[u8]; 6] = [
        b"cuda ",
        b"kernel ",
        b"\x7fELF\x02\x01",
        b"libcudart ",
        b"\0\0\0\0",
        b"ptx ",
    ];
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len + 16);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if x.is_multiple_of(5) {
            out.extend_from_slice(&x.to_le_bytes());
        } else {
            out.extend_from_slice(words[(x % 6) as usize]);
        }
    }
    out.truncate(len);
    out
}

fn unpack_tar_xz(scene: &Scene, tar: &[u8], o: &Options<'_>) -> Result<Vec<Entry>, UnpackError> {
    unpack_reader(Format::TarXz, &xz(tar)[..], &scene.dest(), o)
}

// ---------- round trips ----------

#[test]
fn formats_from_file_names() {
    assert_eq!(
        Format::from_file_name("cuda_cudart-linux-x86_64-13.0.96-archive.tar.xz"),
        Some(Format::TarXz)
    );
    assert_eq!(Format::from_file_name("a.TXZ"), Some(Format::TarXz));
    assert_eq!(Format::from_file_name("a.tar.gz"), Some(Format::TarGz));
    assert_eq!(Format::from_file_name("a.tgz"), Some(Format::TarGz));
    assert_eq!(Format::from_file_name("a.zip"), Some(Format::Zip));
    assert_eq!(
        Format::from_file_name("torch-2.8.0-cp312-cp312-manylinux_2_28_x86_64.whl"),
        Some(Format::Zip)
    );
    assert_eq!(Format::from_file_name("a.tar"), None);
    assert_eq!(Format::from_file_name("a.xz"), None);
}

/// A small CUDA-like tree: directories, an executable, a library with its symlink chain, and a
/// hardlink.
fn cuda_like_tar() -> (Vec<u8>, Vec<u8>) {
    let lib = noise(200_000, 7);
    let lib2 = lib.clone();
    let tar = tar_with(move |b| {
        add_dir(b, "./");
        add_dir(b, "bin/");
        add_file(b, "bin/nvcc", b"#!/bin/sh\necho nvcc\n", 0o4755);
        add_dir(b, "lib/");
        add_file(b, "lib/libcudart.so.13.0.96", &lib2, 0o644);
        add_symlink(b, "lib/libcudart.so.13", "libcudart.so.13.0.96");
        add_symlink(b, "lib/libcudart.so", "libcudart.so.13");
        add_symlink(b, "lib64", "lib");
        add_file(b, "include/cuda.h", b"#define CUDA 13\n", 0o664);
        add_hardlink(b, "include/cuda_copy.h", "include/cuda.h");
        add_file(b, "empty", b"", 0o600);
    });
    (tar, lib)
}

fn check_cuda_like(scene: &Scene, entries: &[Entry], lib: &[u8]) {
    let d = scene.dest();
    assert_eq!(fs_err::read(d.join("lib/libcudart.so")).unwrap(), lib);
    assert_eq!(
        fs_err::read_link(d.join("lib/libcudart.so")).unwrap(),
        Path::new("libcudart.so.13")
    );
    assert_eq!(fs_err::read(d.join("lib64/libcudart.so.13")).unwrap(), lib);
    assert_eq!(
        fs_err::read(d.join("include/cuda_copy.h")).unwrap(),
        b"#define CUDA 13\n"
    );
    assert_eq!(
        mode(&d.join("bin/nvcc")) & !0o022,
        0o755,
        "executable, setuid dropped"
    );
    assert_eq!(mode(&d.join("bin/nvcc")) & 0o7000, 0);
    assert_eq!(mode(&d.join("include/cuda.h")) & 0o111, 0);
    assert_eq!(mode(&d.join("lib")) & 0o7000, 0);

    let paths: Vec<_> = entries
        .iter()
        .map(|e| e.path.display().to_string())
        .collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted, "entries sorted by path");
    assert_eq!(paths, scene.listing(), "one entry per thing written");
    let by = |p: &str| {
        entries
            .iter()
            .find(|e| e.path == Path::new(p))
            .unwrap()
            .clone()
    };
    assert_eq!(
        by("lib/libcudart.so.13.0.96"),
        Entry {
            path: "lib/libcudart.so.13.0.96".into(),
            size: lib.len() as u64,
            sha256: Some(sha(lib)),
            kind: EntryKind::File { executable: false },
        }
    );
    assert_eq!(by("bin/nvcc").kind, EntryKind::File { executable: true });
    assert_eq!(
        by("lib64").kind,
        EntryKind::Symlink {
            target: "lib".into()
        }
    );
    assert_eq!(
        by("include").kind,
        EntryKind::Dir,
        "implied directories are listed"
    );
    assert_eq!(
        by("include/cuda_copy.h").sha256,
        Some(sha(b"#define CUDA 13\n"))
    );
    assert_eq!(by("empty").sha256, Some(sha(b"")));
}

#[test]
fn tar_xz_single_block_round_trip() {
    let scene = Scene::new();
    let (tar, lib) = cuda_like_tar();
    let entries = unpack_tar_xz(&scene, &tar, &opts(&identity)).unwrap();
    check_cuda_like(&scene, &entries, &lib);
    scene.assert_contained();
}

#[test]
fn tar_xz_multi_block_round_trip() {
    let files: Vec<(String, Vec<u8>)> = (0..12)
        .map(|i| {
            (
                format!("d{}/f{i}.bin", i % 3),
                noise(150_000 + i * 7_777, i as u64 + 1),
            )
        })
        .collect();
    let tar = tar_with(|b| {
        for (name, data) in &files {
            add_file(b, name, data, 0o644);
        }
    });
    let compressed = xz_blocks(&tar, 64 << 10);
    assert!(
        xz_block_count(&compressed) >= 20,
        "{} blocks",
        xz_block_count(&compressed)
    );
    assert_eq!(xz_block_count(&xz(&tar)), 1);
    for threads in [1, 4] {
        let scene = Scene::new();
        let file = scene.write("multi.tar.xz", &compressed);
        let o = Options {
            threads,
            ..opts(&identity)
        };
        let entries = unpack_file(Format::TarXz, &file, &scene.dest(), &o).unwrap();
        for (name, data) in &files {
            assert_eq!(&fs_err::read(scene.dest().join(name)).unwrap(), data);
            let e = entries.iter().find(|e| e.path == Path::new(name)).unwrap();
            assert_eq!(e.sha256.as_deref(), Some(sha(data).as_str()));
        }
        assert_eq!(entries.len(), files.len() + 3);
        scene.assert_contained();
    }
}

#[test]
fn tar_xz_concatenated_streams() {
    // `cat a.xz b.xz` is one valid xz file; the tar continues across the stream boundary.
    let (tar, lib) = cuda_like_tar();
    let (a, b) = tar.split_at(100_000);
    let mut joined = xz(a);
    joined.extend_from_slice(&[0u8; 8]); // stream padding
    joined.extend_from_slice(&xz_blocks(b, 32 << 10));
    let scene = Scene::new();
    let entries =
        unpack_reader(Format::TarXz, &joined[..], &scene.dest(), &opts(&identity)).unwrap();
    check_cuda_like(&scene, &entries, &lib);
}

#[test]
fn tar_gz_round_trip() {
    let (tar, lib) = cuda_like_tar();
    let scene = Scene::new();
    let file = scene.write("a.tar.gz", &gz(&tar));
    let entries = unpack_file(Format::TarGz, &file, &scene.dest(), &opts(&identity)).unwrap();
    check_cuda_like(&scene, &entries, &lib);
    scene.assert_contained();
}

#[test]
fn strip_top_dir_map() {
    let tar = tar_with(|b| {
        add_dir(b, "cuda_nvcc-linux-x86_64-13.0.88-archive/");
        add_dir(b, "cuda_nvcc-linux-x86_64-13.0.88-archive/bin/");
        add_file(
            b,
            "cuda_nvcc-linux-x86_64-13.0.88-archive/bin/nvcc",
            b"x",
            0o755,
        );
        add_file(
            b,
            "cuda_nvcc-linux-x86_64-13.0.88-archive/LICENSE",
            b"l",
            0o644,
        );
    });
    let scene = Scene::new();
    let entries = unpack_tar_xz(&scene, &tar, &opts(&strip_first_component)).unwrap();
    let paths: Vec<_> = entries
        .iter()
        .map(|e| e.path.display().to_string())
        .collect();
    assert_eq!(paths, ["LICENSE", "bin", "bin/nvcc"]);
    assert_eq!(scene.listing(), paths);
}

#[test]
fn tar_raw_path_is_checked_even_when_the_map_would_skip_it() {
    let tar = tar_with(|b| add_raw(b, b"../evil", ::tar::EntryType::Regular, b"", b"x"));
    let scene = Scene::new();
    let err = unpack_tar_xz(&scene, &tar, &opts(&|_| None)).unwrap_err();
    assert!(matches!(err, UnpackError::Unsafe { .. }), "{err}");
}

#[test]
fn hostile_map_results_are_refused() {
    let tar = tar_with(|b| add_file(b, "a", b"x", 0o644));
    for bad in ["../evil", "/tmp/evil", "x/../../evil"] {
        let scene = Scene::new();
        let map = move |_: &Path| Some(PathBuf::from(bad));
        let err = unpack_tar_xz(&scene, &tar, &opts(&map)).unwrap_err();
        assert!(matches!(err, UnpackError::Unsafe { .. }), "{bad}: {err}");
        scene.assert_contained();
    }
}

// ---------- zip ----------

fn zip_with(build: impl FnOnce(&mut ::zip::ZipWriter<io::Cursor<Vec<u8>>>)) -> Vec<u8> {
    let mut w = ::zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    build(&mut w);
    w.finish().unwrap().into_inner()
}

fn zopts(mode: u32) -> ::zip::write::SimpleFileOptions {
    ::zip::write::SimpleFileOptions::default()
        .compression_method(::zip::CompressionMethod::Deflated)
        .unix_permissions(mode)
}

fn stored() -> ::zip::write::SimpleFileOptions {
    ::zip::write::SimpleFileOptions::default().compression_method(::zip::CompressionMethod::Stored)
}

fn wheel() -> (Vec<u8>, Vec<(String, Vec<u8>)>) {
    let files: Vec<(String, Vec<u8>)> = (0..40)
        .map(|i| {
            (
                format!("nvidia/cu13/lib/lib{i}.so"),
                noise(10_000 + i * 3_000, i as u64 + 9),
            )
        })
        .collect();
    let zip = zip_with(|w| {
        w.add_directory("nvidia/", zopts(0o755)).unwrap();
        for (name, data) in &files {
            w.start_file(name.as_str(), zopts(0o644)).unwrap();
            w.write_all(data).unwrap();
        }
        w.start_file("nvidia/cu13/bin/ptxas", zopts(0o755)).unwrap();
        w.write_all(b"\x7fELF ptxas").unwrap();
        w.add_symlink("nvidia/cu13/lib/libcudart.so", "lib0.so", zopts(0o777))
            .unwrap();
        w.start_file(
            "nvidia_cuda_runtime-13.0.96.dist-info/METADATA",
            zopts(0o644),
        )
        .unwrap();
        w.write_all(b"Name: nvidia-cuda-runtime").unwrap();
        w.start_file("nvidia_cuda_runtime-13.0.96.dist-info/RECORD", zopts(0o644))
            .unwrap();
        w.write_all(b"...").unwrap();
    });
    (zip, files)
}

fn skip_dist_info(p: &Path) -> Option<PathBuf> {
    let first = p.components().next()?.as_os_str().to_str()?;
    (!first.ends_with(".dist-info")).then(|| p.to_path_buf())
}

#[test]
fn zip_round_trip_parallel_and_serial() {
    let (zip, files) = wheel();
    for threads in [1, 2, 8] {
        let scene = Scene::new();
        let file = scene.write("w.whl", &zip);
        let o = Options {
            threads,
            ..opts(&skip_dist_info)
        };
        let entries = unpack_file(Format::Zip, &file, &scene.dest(), &o).unwrap();
        let d = scene.dest();
        for (name, data) in &files {
            assert_eq!(&fs_err::read(d.join(name)).unwrap(), data);
            assert_eq!(mode(&d.join(name)) & 0o111, 0);
        }
        assert_eq!(mode(&d.join("nvidia/cu13/bin/ptxas")) & !0o022, 0o755);
        assert_eq!(
            fs_err::read_link(d.join("nvidia/cu13/lib/libcudart.so")).unwrap(),
            Path::new("lib0.so")
        );
        assert_eq!(
            fs_err::read(d.join("nvidia/cu13/lib/libcudart.so")).unwrap(),
            files[0].1
        );
        assert!(
            !d.join("nvidia_cuda_runtime-13.0.96.dist-info").exists(),
            "dist-info skipped"
        );
        let paths: Vec<_> = entries
            .iter()
            .map(|e| e.path.display().to_string())
            .collect();
        assert_eq!(paths, scene.listing());
        let e = entries
            .iter()
            .find(|e| e.path == Path::new(&files[3].0))
            .unwrap();
        assert_eq!(e.sha256.as_deref(), Some(sha(&files[3].1).as_str()));
        assert_eq!(e.size, files[3].1.len() as u64);
        let link = entries
            .iter()
            .find(|e| e.path == Path::new("nvidia/cu13/lib/libcudart.so"))
            .unwrap();
        assert_eq!(
            link.kind,
            EntryKind::Symlink {
                target: "lib0.so".into()
            }
        );
        scene.assert_contained();
    }
}

#[test]
fn zip_is_not_streamable() {
    let scene = Scene::new();
    let err = unpack_reader(Format::Zip, &b"PK"[..], &scene.dest(), &opts(&identity)).unwrap_err();
    assert!(
        matches!(err, UnpackError::Corrupt(ref m) if m == "zip needs a file"),
        "{err}"
    );
}

// ---------- hostile archives ----------

fn expect_tar_err(build: impl FnOnce(&mut TarB), check: impl Fn(&UnpackError) -> bool) {
    let tar = tar_with(build);
    let scene = Scene::new();
    let err = unpack_tar_xz(&scene, &tar, &opts(&identity)).unwrap_err();
    assert!(check(&err), "unexpected error: {err}");
    scene.assert_contained();
}

fn is_unsafe(e: &UnpackError) -> bool {
    matches!(e, UnpackError::Unsafe { .. })
}

#[test]
fn tar_parent_dir_entry() {
    expect_tar_err(
        |b| add_raw(b, b"../evil", ::tar::EntryType::Regular, b"", b"pwned"),
        is_unsafe,
    );
    expect_tar_err(
        |b| add_raw(b, b"a/../../evil", ::tar::EntryType::Regular, b"", b"pwned"),
        is_unsafe,
    );
}

#[test]
fn tar_absolute_entry() {
    let victim = tempfile::tempdir().unwrap();
    let target = victim.path().join("evil");
    let name = target.to_str().unwrap().as_bytes().to_vec();
    assert!(name.len() < 100);
    expect_tar_err(
        |b| add_raw(b, &name, ::tar::EntryType::Regular, b"", b"pwned"),
        is_unsafe,
    );
    assert!(!target.exists());
}

#[test]
fn tar_control_characters_and_empty_names() {
    expect_tar_err(
        |b| add_raw(b, b"a\nb", ::tar::EntryType::Regular, b"", b"x"),
        is_unsafe,
    );
    expect_tar_err(
        |b| add_raw(b, b"a\x1bb", ::tar::EntryType::Regular, b"", b"x"),
        is_unsafe,
    );
    expect_tar_err(
        |b| add_raw(b, b"C:evil", ::tar::EntryType::Regular, b"", b"x"),
        is_unsafe,
    );
    // An all-zero name field reads as an empty path.
    expect_tar_err(
        |b| add_raw(b, b"", ::tar::EntryType::Regular, b"", b"x"),
        is_unsafe,
    );
    // A NUL inside a pax path (the header field cannot hold one).
    expect_tar_err(
        |b| {
            b.append_pax_extensions([("path", &b"ok\0evil"[..])])
                .unwrap();
            add_file(b, "placeholder", b"x", 0o644);
        },
        is_unsafe,
    );
}

#[test]
fn tar_symlink_escapes() {
    expect_tar_err(|b| add_symlink(b, "lib", "../../etc"), is_unsafe);
    expect_tar_err(|b| add_symlink(b, "a/b/lib", "../../../x"), is_unsafe);
    expect_tar_err(|b| add_symlink(b, "lib", "/etc"), is_unsafe);
    // `x -> .` is harmless, but would make `d/y -> ../x/..` point above dest.
    expect_tar_err(
        |b| {
            add_symlink(b, "x", ".");
            add_symlink(b, "d/y", "../x/..");
        },
        is_unsafe,
    );
}

#[test]
fn tar_write_through_symlink() {
    // The escaping link itself is refused first...
    expect_tar_err(
        |b| {
            add_symlink(b, "lib", "../../etc");
            add_raw(b, b"lib/passwd", ::tar::EntryType::Regular, b"", b"pwned");
        },
        is_unsafe,
    );
    // ...and even a link that stays inside may not be written through.
    expect_tar_err(
        |b| {
            add_dir(b, "sub/");
            add_symlink(b, "lib", "sub");
            add_file(b, "lib/x", b"through", 0o644);
        },
        |e| is_unsafe(e) && e.to_string().contains("through the symlink `lib`"),
    );
    expect_tar_err(
        |b| {
            add_symlink(b, "lib", "sub");
            add_dir(b, "lib/deeper/");
        },
        is_unsafe,
    );
}

#[test]
fn tar_replacing_a_symlink_does_not_follow_it() {
    let tar = tar_with(|b| {
        add_file(b, "real", b"original", 0o644);
        add_symlink(b, "link", "real");
        add_file(b, "link", b"replacement", 0o644);
        add_file(b, "f", b"first", 0o644);
        add_symlink(b, "f", "real");
    });
    let scene = Scene::new();
    let entries = unpack_tar_xz(&scene, &tar, &opts(&identity)).unwrap();
    let d = scene.dest();
    assert_eq!(fs_err::read(d.join("real")).unwrap(), b"original");
    assert!(fs_err::symlink_metadata(d.join("link")).unwrap().is_file());
    assert_eq!(fs_err::read(d.join("link")).unwrap(), b"replacement");
    assert!(fs_err::symlink_metadata(d.join("f")).unwrap().is_symlink());
    assert_eq!(entries.len(), 3);
    assert_eq!(
        entries[0].kind,
        EntryKind::Symlink {
            target: "real".into()
        }
    );
}

#[test]
fn tar_hardlink_escapes() {
    expect_tar_err(|b| add_hardlink(b, "passwd", "../../etc/passwd"), is_unsafe);
    expect_tar_err(|b| add_hardlink(b, "passwd", "/etc/passwd"), is_unsafe);
    // Only to a regular file extracted earlier: not to one that comes later, nor to a symlink.
    expect_tar_err(
        |b| {
            add_hardlink(b, "early", "later");
            add_file(b, "later", b"x", 0o644);
        },
        is_unsafe,
    );
    expect_tar_err(
        |b| {
            add_dir(b, "sub/");
            add_symlink(b, "link", "sub");
            add_hardlink(b, "hl", "link");
        },
        is_unsafe,
    );
}

#[test]
fn tar_special_files() {
    for kind in [
        ::tar::EntryType::Char,
        ::tar::EntryType::Block,
        ::tar::EntryType::Fifo,
    ] {
        expect_tar_err(|b| add_raw(b, b"dev", kind, b"", b""), is_unsafe);
    }
}

#[test]
fn tar_total_size_bomb() {
    let tar = tar_with(|b| {
        add_file(b, "a", &[0u8; 3000], 0o644);
        add_file(b, "b", &[0u8; 3000], 0o644);
    });
    let scene = Scene::new();
    let o = Options {
        limits: Limits {
            max_total_bytes: 5000,
            max_entries: 10,
        },
        ..opts(&identity)
    };
    let err = unpack_tar_xz(&scene, &tar, &o).unwrap_err();
    assert!(matches!(err, UnpackError::TooLarge(_)), "{err}");
    assert!(
        !scene.dest().join("b").exists(),
        "nothing past the limit is written"
    );
    // Skipped entries count too.
    let scene = Scene::new();
    let o = Options {
        map: &|_| None,
        ..o
    };
    assert!(matches!(
        unpack_tar_xz(&scene, &tar, &o),
        Err(UnpackError::TooLarge(_))
    ));
}

#[test]
fn tar_entry_count_bomb() {
    let tar = tar_with(|b| (0..20).for_each(|i| add_file(b, &format!("f{i}"), b"", 0o644)));
    let scene = Scene::new();
    let o = Options {
        limits: Limits {
            max_total_bytes: 1 << 20,
            max_entries: 10,
        },
        ..opts(&identity)
    };
    assert!(matches!(
        unpack_tar_xz(&scene, &tar, &o),
        Err(UnpackError::TooLarge(_))
    ));
    scene.assert_contained();
}

#[test]
fn tar_long_name_bomb_stops_early() {
    // A GNU long-name record larger than the budget (1 MiB under test, 64 MiB otherwise): tar
    // would read it into memory whole, however large.
    let mut h = ::tar::Header::new_gnu();
    let len = 4u64 << 20;
    h.set_size(len);
    h.set_entry_type(::tar::EntryType::GNULongName);
    h.as_gnu_mut().unwrap().name[..13].copy_from_slice(b"././@LongLink");
    h.set_cksum();
    let mut tar = h.as_bytes().to_vec();
    tar.resize(512 + len as usize, b'a');
    let scene = Scene::new();
    let err = unpack_reader(
        Format::TarGz,
        &gz(&tar)[..],
        &scene.dest(),
        &opts(&identity),
    )
    .unwrap_err();
    assert!(matches!(err, UnpackError::TooLarge(_)), "{err}");
}

#[test]
fn tar_cancel_flag() {
    let (tar, _) = cuda_like_tar();
    let scene = Scene::new();
    let cancel = AtomicBool::new(true);
    let o = Options {
        cancel: Some(&cancel),
        ..opts(&identity)
    };
    assert!(matches!(
        unpack_tar_xz(&scene, &tar, &o),
        Err(UnpackError::Cancelled)
    ));
    assert!(scene.listing().is_empty());
}

#[test]
fn corrupt_and_truncated_streams() {
    let (tar, _) = cuda_like_tar();
    let compressed = xz(&tar);
    let scene = Scene::new();
    let cut = &compressed[..compressed.len() - 20];
    let err = unpack_reader(Format::TarXz, cut, &scene.dest(), &opts(&identity)).unwrap_err();
    assert!(matches!(err, UnpackError::Corrupt(_)), "{err}");
    let mut flipped = gz(&tar);
    let n = flipped.len();
    flipped[n - 6] ^= 0xff; // the gzip CRC32 trailer
    let scene = Scene::new();
    let err =
        unpack_reader(Format::TarGz, &flipped[..], &scene.dest(), &opts(&identity)).unwrap_err();
    assert!(matches!(err, UnpackError::Corrupt(_)), "{err}");
}

#[test]
fn reader_errors_stay_io_errors() {
    struct Flaky<'a>(&'a [u8]);
    impl Read for Flaky<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::ConnectionReset,
                    "connection reset",
                ));
            }
            let n = self.0.len().min(buf.len()).min(1000);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let (tar, _) = cuda_like_tar();
    let compressed = xz(&tar);
    let scene = Scene::new();
    let err = unpack_reader(
        Format::TarXz,
        Flaky(&compressed[..compressed.len() / 2]),
        &scene.dest(),
        &opts(&identity),
    )
    .unwrap_err();
    assert!(
        matches!(err, UnpackError::Io(ref e) if e.kind() == io::ErrorKind::ConnectionReset),
        "{err}"
    );
}

fn expect_zip_err(zip: &[u8], o: &Options<'_>, check: impl Fn(&UnpackError) -> bool) {
    let scene = Scene::new();
    let file = scene.write("a.zip", zip);
    let err = unpack_file(Format::Zip, &file, &scene.dest(), o).unwrap_err();
    assert!(check(&err), "unexpected error: {err}");
    scene.assert_contained();
}

/// A check on the error a hostile archive must end in.
type Check = fn(&UnpackError) -> bool;

/// Hostile zips, each with the error it must be refused with: names that climb out or carry
/// control characters, a device file, a member larger than both its headers say, a CRC that
/// does not match. Both routes are tested on them (the streamed one in `streamed.rs`).
fn hostile_zips() -> Vec<(String, Vec<u8>, Check)> {
    let mut cases: Vec<(String, Vec<u8>, Check)> = Vec::new();
    for name in [
        "../evil",
        "a/../../evil",
        "/tmp/evil",
        "a\0b",
        "a\\..\\..\\evil",
        "bell\u{7}",
    ] {
        let zip = zip_with(|w| {
            w.start_file("fine", stored()).unwrap();
            w.write_all(b"ok").unwrap();
            w.start_file(name, stored()).unwrap();
            w.write_all(b"pwned").unwrap();
        });
        cases.push((format!("name {name:?}"), zip, is_unsafe));
    }
    let mut dev = zip_with(|w| {
        w.start_file("dev", stored()).unwrap();
    });
    let c = central(&dev);
    dev[c + 5] = 3; // made by Unix
    dev[c + 38..c + 42].copy_from_slice(&((0o020_644u32) << 16).to_le_bytes());
    cases.push(("device".into(), dev, is_unsafe));
    let data = vec![b'A'; 100_000];
    let mut lying = zip_with(|w| {
        w.start_file("big", zopts(0o644)).unwrap();
        w.write_all(&data).unwrap();
    });
    let c = central(&lying);
    lying[c + 24..c + 28].copy_from_slice(&10u32.to_le_bytes());
    lying[22..26].copy_from_slice(&10u32.to_le_bytes());
    cases.push(("lying size".into(), lying, |e| {
        matches!(e, UnpackError::Corrupt(_) | UnpackError::TooLarge(_))
    }));
    let mut crc = zip_with(|w| {
        w.start_file("f", stored()).unwrap();
        w.write_all(b"hello world").unwrap();
    });
    let at = crc.windows(11).position(|w| w == b"hello world").unwrap();
    crc[at] = b'j';
    cases.push(("crc".into(), crc, |e| matches!(e, UnpackError::Corrupt(_))));
    cases
}

#[test]
fn zip_hostile_names_devices_sizes_and_crcs() {
    for (what, zip, check) in hostile_zips() {
        let scene = Scene::new();
        let file = scene.write("a.zip", &zip);
        let err = unpack_file(Format::Zip, &file, &scene.dest(), &opts(&identity)).unwrap_err();
        assert!(check(&err), "{what}: unexpected error: {err}");
        scene.assert_contained();
    }
}

#[test]
fn zip_symlink_escape_and_write_through() {
    let zip = zip_with(|w| w.add_symlink("lib", "../../etc", zopts(0o777)).unwrap());
    expect_zip_err(&zip, &opts(&identity), is_unsafe);
    let zip = zip_with(|w| w.add_symlink("lib", "/etc", zopts(0o777)).unwrap());
    expect_zip_err(&zip, &opts(&identity), is_unsafe);
    // A file under a symlink, in either order.
    let zip = zip_with(|w| {
        w.add_directory("sub/", zopts(0o755)).unwrap();
        w.add_symlink("lib", "sub", zopts(0o777)).unwrap();
        w.start_file("lib/x", stored()).unwrap();
        w.write_all(b"through").unwrap();
    });
    expect_zip_err(&zip, &opts(&identity), is_unsafe);
    let zip = zip_with(|w| {
        w.start_file("lib/x", stored()).unwrap();
        w.write_all(b"x").unwrap();
        w.add_symlink("lib", "sub", zopts(0o777)).unwrap();
    });
    expect_zip_err(&zip, &opts(&identity), |e| {
        matches!(e, UnpackError::Corrupt(_) | UnpackError::Unsafe { .. })
    });
}

/// Offsets of the first central-directory header of a zip.
fn central(zip: &[u8]) -> usize {
    zip.windows(4).position(|w| w == b"PK\x01\x02").unwrap()
}

#[test]
fn zip_total_size_and_count_bombs() {
    let (zip, _) = wheel();
    let o = Options {
        limits: Limits {
            max_total_bytes: 100_000,
            max_entries: 1000,
        },
        ..opts(&identity)
    };
    expect_zip_err(&zip, &o, |e| matches!(e, UnpackError::TooLarge(_)));
    let o = Options {
        limits: Limits {
            max_total_bytes: 1 << 30,
            max_entries: 10,
        },
        ..opts(&identity)
    };
    expect_zip_err(&zip, &o, |e| matches!(e, UnpackError::TooLarge(_)));
}

#[test]
fn zip_cancel_flag() {
    let (zip, _) = wheel();
    let cancel = AtomicBool::new(true);
    let o = Options {
        cancel: Some(&cancel),
        ..opts(&identity)
    };
    expect_zip_err(&zip, &o, |e| matches!(e, UnpackError::Cancelled));
}

mod streamed;

/// A large member's blocks are asked for before its first write, but the file is only ever as
/// long as what was written (a member cut short, an error after which the tree is removed,
/// never shows a tail of zeros), and a declared size far past the member's compressed size
/// (a hostile header) is believed for preallocation only up to eight times the compressed size.
#[test]
fn a_preallocated_member_is_as_long_as_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits::default();
    let mut tree = tree::Tree::new(dir.path(), &limits, None, false);
    let mut start = |name: &str| {
        tree.start_file(Path::new(name), name, false, 0)
            .unwrap()
            .expect("not a dry run")
    };
    let (honest, hostile) = (start("honest.bin"), start("hostile.bin"));
    tree::preallocate(&honest, 8 << 20, 4 << 20);
    // 64 GiB claimed for 1 MiB of deflate: at most 8 MiB is asked for.
    tree::preallocate(&hostile, 64 << 30, 1 << 20);
    for mut f in [honest, hostile] {
        f.write_all(b"ten bytes!").unwrap();
    }
    let meta = |name: &str| std::fs::metadata(dir.path().join(name)).unwrap();
    assert_eq!(meta("honest.bin").len(), 10);
    assert_eq!(meta("hostile.bin").len(), 10);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        // Where this file system preallocates at all (ext4, xfs, btrfs, tmpfs), the honest
        // member's blocks are there before its bytes are.
        let probe = std::fs::File::create(dir.path().join("probe")).unwrap();
        let keep = rustix::fs::FallocateFlags::KEEP_SIZE;
        if rustix::fs::fallocate(&probe, keep, 0, 8 << 20).is_ok() {
            assert!(meta("honest.bin").blocks() * 512 >= 8 << 20);
        }
        assert!(
            meta("hostile.bin").blocks() * 512 <= 9 << 20,
            "capped at 8 MiB"
        );
    }
}
