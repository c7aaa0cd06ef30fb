//! The install's room on disk: what each filesystem must hold, the refusal's numbers, and
//! the take-back of a run the disk could not hold (on real files in a temporary cache).

use super::*;
use crate::fetch::Artifact;
use crate::install::Shape;

fn item(name: &str, location: Location, size: u64) -> Item {
    Item {
        component: name.into(),
        version: "1.0".into(),
        key: name.into(),
        title: name.into(),
        artifact: Artifact {
            name: format!("{name} 1.0"),
            location,
            sha256: {
                use sha2::Digest;
                hex::encode(sha2::Sha256::digest(name))
            },
            size: Some(size),
            max: None,
        },
        shape: Shape::RedistArchive,
    }
}

fn remote(name: &str, size: u64) -> Item {
    item(
        name,
        Location::parse(&format!("https://example.com/{name}.tar.xz")).unwrap(),
        size,
    )
}

/// A tree in the unpacked cache, complete (with its entry list).
fn unpack_into_cache(cache: &Cache, item: &Item, bytes: &[u8]) {
    let dir = cache.unpacked(&cache_key(item));
    fs_err::create_dir_all(&dir).unwrap();
    fs_err::write(dir.join("lib.so"), bytes).unwrap();
    let entries = vec![crate::unpack::Entry {
        path: "lib.so".into(),
        size: bytes.len() as u64,
        sha256: None,
        kind: crate::unpack::EntryKind::File { executable: false },
    }];
    assemble::write_entries(&dir.join(assemble::ENTRIES_FILE), &entries).unwrap();
}

#[test]
fn an_install_needs_its_downloads_and_at_least_as_much_again_unpacked() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(dir.path().join("home/cache"));
    let prefix = dir.path().join("opt/cuda");
    let nvcc = remote("nvcc", 1000);
    let cublas = remote("cublas", 50_000);
    let mirror = dir.path().join("mirror/cudart.tar.xz");
    let cudart = item("cudart", Location::File(mirror), 300);
    let items = [nvcc.clone(), cublas.clone(), cudart.clone()];
    let rooms = rooms(&cache, &prefix, &items).unwrap();
    // One filesystem (the temporary directory's): counted once, the prefix's hard links free.
    assert_eq!(rooms.len(), 1, "{rooms:?}");
    assert_eq!(rooms[0].at, dir.path());
    // A local mirror's archive is unpacked in place, never copied into the cache.
    assert_eq!(rooms[0].download, 51_000);
    assert_eq!(rooms[0].unpacked, 51_300);
    assert_eq!(rooms[0].copied, 0);

    // A finished download is not fetched again; half a download only needs its rest; an
    // unpacked tree needs nothing more.
    fs_err::create_dir_all(cache.dir().join("downloads")).unwrap();
    fs_err::write(cache.download(&nvcc.artifact.sha256), [0u8; 1000]).unwrap();
    fs_err::write(cache.partial(&cublas.artifact.sha256), [0u8; 20_000]).unwrap();
    unpack_into_cache(&cache, &cudart, b"cudart");
    let rooms = super::rooms(&cache, &prefix, &items).unwrap();
    assert_eq!(rooms[0].download, 30_000);
    assert_eq!(rooms[0].unpacked, 51_000);

    // A wheel whose index states no size counts with the size the catalog records for it,
    // unpacked only: it streams into its tree and never lands in `downloads/`. `mirror create`
    // keeps the wheel itself, so there it is a download.
    let mut wheel = item(
        "nvidia-cuda-nvcc",
        Location::parse("https://example.com/nvidia_cuda_nvcc-13.0.88-py3-none-any.whl").unwrap(),
        0,
    );
    wheel.shape = Shape::Wheel;
    wheel.artifact.size = None;
    wheel.artifact.max = Some(crate::fetch::Cap::recorded(7_000));
    assert!(wheel.streams());
    let rooms = super::rooms(&cache, &prefix, std::slice::from_ref(&wheel)).unwrap();
    assert_eq!((rooms[0].download, rooms[0].unpacked), (0, 7_000));
    let mirror = rooms_for(&cache, &prefix, &[wheel], false).unwrap();
    assert_eq!((mirror[0].download, mirror[0].unpacked), (7_000, 0));
}

#[test]
fn a_filesystem_short_of_room_is_refused_with_the_numbers() {
    let room = |free| Room {
        at: "/home/u/.cudaup/cache".into(),
        free,
        download: 2 << 30,
        unpacked: 2 << 30,
        copied: 0,
        copied_into: "the prefix",
        installed: 0,
    };
    assert!(short(vec![room(4 << 30)]).is_none(), "exactly enough fits");
    let prefix = Room {
        at: "/opt".into(),
        free: 1 << 20,
        download: 0,
        unpacked: 0,
        copied: 3 << 30,
        copied_into: "the prefix",
        installed: 0,
    };
    let no = short(vec![room(300 << 20), prefix]).expect("refused");
    assert_eq!(no.rooms.len(), 2);
    let said = no.to_string();
    for part in [
        "nothing was written",
        "/home/u/.cudaup/cache needs at least 4.00 GiB (2.00 GiB to download, 2.00 GiB unpacked) and has 300.00 MiB free",
        "/opt needs at least 3.00 GiB (3.00 GiB copied into the prefix, which is on another filesystem than the cache) and has 1.00 MiB free",
        "free some space",
    ] {
        assert!(said.contains(part), "`{part}` not in: {said}");
    }
    // Met mid-way with the archives' sizes fitting: the message does not claim they do not.
    let mid = NoSpace {
        rooms: vec![room(5 << 30)],
        met: Some("No space left on device (os error 28)".into()),
    }
    .to_string();
    assert!(
        mid.contains("filled up during the install (No space left on device")
            && mid
                .contains("has 5.00 GiB free, and this install needs more there than the 4.00 GiB")
            && !mid.contains("nothing was written"),
        "{mid}"
    );
}

/// What is under `dir`, with each file's bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for e in fs_err::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p.clone());
                out.push((p.strip_prefix(dir).unwrap().to_owned(), Vec::new()));
            } else {
                let bytes = fs_err::read(&p).unwrap();
                out.push((p.strip_prefix(dir).unwrap().to_owned(), bytes));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_run_the_disk_could_not_hold_takes_back_what_it_added_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(dir.path().join("cache"));
    let old = remote("old", 10);
    let new = remote("new", 10);
    let other = remote("someone-elses", 10);
    // Before the run: an earlier install's download, tree and locks, and another item's.
    fs_err::create_dir_all(cache.dir().join("downloads")).unwrap();
    for i in [&old, &other] {
        fs_err::write(cache.download(&i.artifact.sha256), b"verified").unwrap();
        drop(cache.lock(&i.artifact.sha256, || {}).unwrap());
        unpack_into_cache(&cache, i, b"kept");
        drop(cache.lock_unpacking(&cache_key(i), || {}).unwrap());
    }
    let kept = tree(cache.dir());
    let items = [old.clone(), new.clone()];
    let before = Before::note(&cache, &items);
    // The run: a finished download and a half one, a tree, a half-built tree, their locks.
    fs_err::write(cache.partial(&old.artifact.sha256), b"half").unwrap();
    fs_err::write(cache.download(&new.artifact.sha256), b"verified too").unwrap();
    drop(cache.lock(&new.artifact.sha256, || {}).unwrap());
    unpack_into_cache(&cache, &new, b"new");
    let half = cache.unpacking(&cache_key(&new), 0);
    fs_err::create_dir_all(half.join("lib")).unwrap();
    fs_err::write(half.join("lib/x.so"), b"partly").unwrap();
    drop(cache.lock_unpacking(&cache_key(&new), || {}).unwrap());
    before.take_back(&cache, &items);
    assert_eq!(tree(cache.dir()), kept);

    // A cache the run made itself goes entirely.
    let fresh = Cache::new(dir.path().join("fresh/cache"));
    let before = Before::note(&fresh, &items);
    fs_err::create_dir_all(fresh.dir().join("downloads")).unwrap();
    fs_err::write(fresh.partial(&new.artifact.sha256), b"half").unwrap();
    drop(fresh.lock(&new.artifact.sha256, || {}).unwrap());
    before.take_back(&fresh, &items);
    assert!(!fresh.dir().exists(), "{:?}", tree(fresh.dir()));
}

#[test]
fn a_tree_another_cudaup_is_unpacking_is_left_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(dir.path().join("cache"));
    let new = remote("new", 10);
    let items = [new.clone()];
    let before = Before::note(&cache, &items);
    let half = cache.unpacking(&cache_key(&new), 7);
    fs_err::create_dir_all(&half).unwrap();
    // Held by "another process": a second open file description on the same lock file.
    let theirs = cache.lock_unpacking(&cache_key(&new), || {}).unwrap();
    before.take_back(&cache, &items);
    assert!(half.is_dir());
    assert!(theirs.path().exists());
}

#[test]
fn the_workers_take_the_largest_first_and_an_unknown_size_counts_as_largest() {
    let mut sizeless = remote("cudnn", 0);
    sizeless.artifact.size = None;
    let mut recorded = remote("cublas", 0);
    recorded.artifact.size = None;
    recorded.artifact.max = Some(crate::fetch::Cap {
        recorded: Some(420),
        ..crate::fetch::WHEEL_CAP
    });
    let items = [
        remote("cudart", 2),
        recorded,
        remote("nvrtc", 90),
        sizeless,
        remote("nvcc", 37),
    ];
    let names: Vec<&str> = largest_first(&items)
        .into_iter()
        .map(|i| items[i].component.as_str())
        .collect();
    assert_eq!(names, ["cudnn", "cublas", "nvrtc", "nvcc", "cudart"]);
}
