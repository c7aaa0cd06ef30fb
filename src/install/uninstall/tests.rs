//! Uninstall against homes it must not trust: a directory cudaup never made, entries with
//! cudaup's names that are the user's, receipts naming folders cudaup did not create, toolkit
//! files changed since, and (a property) random home contents around what cudaup made.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::*;
use crate::install::python::VenvReceipt;
use crate::install::receipt::{Receipt, ReceiptFile};

/// Every entry under `dir`: kind and bytes (or link target).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for e in fs_err::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_owned();
            let meta = fs_err::symlink_metadata(&p).unwrap();
            if meta.file_type().is_symlink() {
                out.insert(rel, format!("link {:?}", fs_err::read_link(&p).unwrap()));
            } else if meta.is_dir() {
                out.insert(rel, "dir".into());
                walk(root, &p, out);
            } else {
                let bytes = fs_err::read(&p).unwrap();
                out.insert(rel, format!("file {}", hex::encode(Sha256::digest(&bytes))));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn process() -> Process {
    Process::with_vars(Vec::<(String, String)>::new(), Path::new("/"))
}

fn plan(home: &Home, purge: bool) -> Result<Vec<Step>, UninstallError> {
    super::plan(home, &process(), purge)
}

fn uninstall(home: &Home, purge: bool) -> Result<Outcome, UninstallError> {
    let steps = plan(home, purge)?;
    Ok(run(home, &steps).unwrap())
}

/// A venv cudaup made in `dir`, registered in `home`.
fn cudaup_venv(home: &Home, dir: &Path) {
    fs_err::create_dir_all(dir.join("bin")).unwrap();
    fs_err::write(dir.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    crate::install::python::marker::mark(dir).unwrap();
    venv_receipt(dir, true).register(home.root()).unwrap();
}

fn venv_receipt(dir: &Path, created: bool) -> VenvReceipt {
    VenvReceipt {
        schema_version: 1,
        venv: dir.to_owned(),
        base_python: "/usr/bin/python3".into(),
        created,
        profile: "pytorch".into(),
        packages: Default::default(),
        route: None,
        installed_at: 1,
        guard: None,
    }
}

/// A toolkit prefix cudaup installed: `files` with their receipt inside and in the home.
fn cudaup_toolkit(home: &Home, prefix: &Path, files: &[(&str, &[u8])]) -> Receipt {
    let mut listed = Vec::new();
    for (rel, bytes) in files {
        let p = prefix.join(rel);
        fs_err::create_dir_all(p.parent().unwrap()).unwrap();
        fs_err::write(&p, bytes).unwrap();
        listed.push(ReceiptFile {
            path: rel.into(),
            size: Some(bytes.len() as u64),
            sha256: Some(hex::encode(Sha256::digest(bytes))),
            link: None,
        });
    }
    let receipt = Receipt {
        schema_version: 1,
        prefix: prefix.to_owned(),
        cuda: "13.0.2".into(),
        cudnn: None,
        source: "redist file:///m".into(),
        installed_at: 1,
        components: Vec::new(),
        files: listed,
    };
    receipt.write_into(prefix).unwrap();
    crate::install::receipts::register(home.root(), &receipt).unwrap();
    receipt
}

#[test]
fn a_directory_cudaup_never_marked_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let projects = dir.path().join("projects");
    for d in ["env/bin", "logs", "cache", "manifests.d", "toolkits"] {
        fs_err::create_dir_all(projects.join(d)).unwrap();
    }
    fs_err::write(projects.join("env/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    fs_err::write(projects.join("logs/install-1.log"), "my log\n").unwrap();
    fs_err::write(projects.join("active.json"), "{}").unwrap();
    let before = snapshot(dir.path());
    let home = Home::new(&projects);
    for purge in [false, true] {
        let err = plan(&home, purge).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("not a cudaup home"), "{text}");
        assert!(text.contains(".cudaup-home"), "{text}");
    }
    assert_eq!(snapshot(dir.path()), before);
    // An empty or missing directory has nothing to remove, and is no error.
    assert_eq!(
        plan(&Home::new(dir.path().join("nothing")), true).unwrap(),
        []
    );
}

/// Seen once in `hostile_crash` (a kill ~0.3 s into a cold install): the home held its marker and
/// `receipts/pending/`, made just before the journal was to be written there, and nothing else;
/// uninstall found nothing to do and left both.
#[test]
fn an_install_killed_before_its_journal_leaves_nothing_after_uninstall() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::new(dir.path().join("home"));
    fs_err::create_dir_all(home.root()).unwrap();
    HomeMarker::claim(&home).unwrap();
    fs_err::create_dir_all(home.pending()).unwrap();
    assert_eq!(
        plan(&home, false).unwrap(),
        [Step::File {
            path: home.receipts()
        }]
    );
    uninstall(&home, false).unwrap();
    assert!(!home.root().exists(), "{:?}", snapshot(dir.path()));

    // A journal folder that holds anything is not taken for empty.
    fs_err::create_dir_all(home.root()).unwrap();
    HomeMarker::claim(&home).unwrap();
    fs_err::create_dir_all(home.pending()).unwrap();
    fs_err::write(home.pending().join("notes.txt"), "mine\n").unwrap();
    assert_eq!(plan(&home, false).unwrap(), []);
}

#[test]
fn a_home_of_an_older_cudaup_is_adopted_by_its_receipts() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::new(dir.path().join("home"));
    cudaup_venv(&home, &home.venv("pytorch"));
    assert!(!home.marker().exists(), "made as an older cudaup would");
    uninstall(&home, true).unwrap();
    assert!(!home.root().exists(), "everything was cudaup's");
}

#[test]
fn in_a_marked_home_only_what_cudaup_wrote_goes() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::new(dir.path().join("home"));
    HomeMarker::claim(&home).unwrap();
    crate::install::env::write_scripts(home.root(), None).unwrap();
    // The user edited one env script, and keeps notes among cudaup's logs.
    fs_err::write(
        home.env_script(crate::shell::Shell::Fish),
        "set -x MINE 1\n",
    )
    .unwrap();
    fs_err::create_dir_all(home.logs()).unwrap();
    fs_err::write(home.log("install", 17), "cudaup's log\n").unwrap();
    fs_err::write(home.logs().join("notes.txt"), "mine\n").unwrap();
    fs_err::write(home.logs().join("install-final.log"), "mine too\n").unwrap();
    let steps = plan(&home, true).unwrap();
    let out = run(&home, &steps).unwrap();
    assert!(!home.env_script(crate::shell::Shell::Posix).exists());
    assert!(!home.active().exists());
    assert!(!home.log("install", 17).exists());
    assert_eq!(
        fs_err::read_to_string(home.env_script(crate::shell::Shell::Fish)).unwrap(),
        "set -x MINE 1\n"
    );
    assert!(home.logs().join("notes.txt").is_file());
    assert!(home.logs().join("install-final.log").is_file());
    assert!(
        out.kept
            .iter()
            .any(|(p, why)| p.ends_with("env.fish") && why.contains("not the env script")),
        "{:?}",
        out.kept
    );
    assert!(
        home.marker().is_file(),
        "kept while the home holds anything"
    );
}

#[test]
fn entries_there_before_cudaup_are_never_removed() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::new(dir.path().join("home"));
    for d in ["cache/mine", "logs", "manifests.d"] {
        fs_err::create_dir_all(home.root().join(d)).unwrap();
    }
    fs_err::write(home.root().join("logs/install-3.log"), "the user's\n").unwrap();
    fs_err::write(home.root().join("active.json"), "{}").unwrap();
    let before = snapshot(home.root());
    let marker = HomeMarker::claim(&home).unwrap();
    assert_eq!(
        marker.preexisting,
        ["active.json", "cache", "logs", "manifests.d"]
    );
    cudaup_venv(&home, &home.venv("pytorch"));
    uninstall(&home, true).unwrap();
    let mut after = snapshot(home.root());
    after.remove(Path::new(crate::install::home::MARKER_FILE));
    assert_eq!(after, before, "only cudaup's venv and receipts went");
}

#[test]
fn a_venv_receipt_alone_never_removes_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::new(dir.path().join("home"));
    HomeMarker::claim(&home).unwrap();
    let thesis = dir.path().join("thesis");
    fs_err::create_dir_all(&thesis).unwrap();
    fs_err::write(thesis.join("chapter1.tex"), "\\chapter{One}\n").unwrap();
    venv_receipt(&thesis, true).register(home.root()).unwrap();
    let out = uninstall(&home, false).unwrap();
    assert!(thesis.join("chapter1.tex").is_file(), "the thesis stays");
    assert!(
        out.kept
            .iter()
            .any(|(p, why)| p == &thesis && why.contains("no marker")),
        "{:?}",
        out.kept
    );
    assert!(
        !home.root().exists(),
        "the receipt went, and the home with it"
    );
}

#[test]
fn a_reinstall_never_downgrades_created() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::new(dir.path().join("home"));
    let venv = home.venv("pytorch");
    cudaup_venv(&home, &venv);
    // The second install found the venv there and did not create it.
    let path = venv_receipt(&venv, false).register(home.root()).unwrap();
    let r: VenvReceipt = serde_json::from_slice(&fs_err::read(&path).unwrap()).unwrap();
    assert!(r.created);
    uninstall(&home, false).unwrap();
    assert!(!venv.exists(), "the venv cudaup made is removed");
    // A venv without cudaup's marker is not upgraded by an old receipt either.
    let theirs = dir.path().join("theirs");
    fs_err::create_dir_all(&theirs).unwrap();
    venv_receipt(&theirs, true).register(home.root()).unwrap();
    let path = venv_receipt(&theirs, false).register(home.root()).unwrap();
    let r: VenvReceipt = serde_json::from_slice(&fs_err::read(&path).unwrap()).unwrap();
    assert!(!r.created);
}

#[test]
fn toolkit_files_go_only_while_they_match_the_receipt() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::new(dir.path().join("home"));
    HomeMarker::claim(&home).unwrap();
    let prefix = dir.path().join("opt/cuda");
    cudaup_toolkit(
        &home,
        &prefix,
        &[
            ("bin/nvcc", b"nvcc"),
            ("include/a.h", b"int a;"),
            ("include/b.h", b"int b;"),
            ("lib64/libx.so", b"ELF"),
        ],
    );
    // Changed (same size, then another size), and a folder of the user's, empty.
    fs_err::write(prefix.join("include/a.h"), "int z;").unwrap();
    fs_err::write(prefix.join("include/b.h"), "int b; int c;").unwrap();
    fs_err::create_dir_all(prefix.join("mydata")).unwrap();
    let out = uninstall(&home, false).unwrap();
    assert!(!prefix.join("bin").exists() && !prefix.join("lib64").exists());
    assert_eq!(
        fs_err::read_to_string(prefix.join("include/a.h")).unwrap(),
        "int z;"
    );
    assert!(prefix.join("include/b.h").is_file());
    assert!(
        prefix.join("mydata").is_dir(),
        "a folder cudaup did not make"
    );
    let why: Vec<&str> = out.kept.iter().map(|(_, w)| w.as_str()).collect();
    assert!(why.iter().any(|w| w.contains("sha256 differs")), "{why:?}");
    assert!(why.iter().any(|w| w.contains("size")), "{why:?}");
}

#[test]
fn a_home_receipt_for_a_prefix_without_its_own_removes_only_matching_files() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::new(dir.path().join("home"));
    HomeMarker::claim(&home).unwrap();
    let prefix = dir.path().join("shared/cuda");
    cudaup_toolkit(
        &home,
        &prefix,
        &[("bin/nvcc", b"nvcc"), ("README", b"ours")],
    );
    // Another machine over NFS put its own tree here: same names, other bytes, no receipt.
    fs_err::remove_file(prefix.join(crate::install::receipt::FILE_NAME)).unwrap();
    fs_err::write(prefix.join("bin/nvcc"), "theirs").unwrap();
    fs_err::write(prefix.join("README"), "them").unwrap();
    let before = snapshot(&prefix);
    uninstall(&home, false).unwrap();
    assert_eq!(snapshot(&prefix), before);
}

/// xorshift64*: the same home for the same seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn pick<'a>(&mut self, of: &[&'a str]) -> &'a str {
        of[(self.next() % of.len() as u64) as usize]
    }
}

/// Names a user might have, many of them cudaup's: top-level entries and files inside.
const TOP: &[&str] = &[
    "env",
    "env.fish",
    "env.ps1",
    "active.json",
    "logs",
    "cache",
    "receipts",
    "toolkits",
    "venvs",
    "bin",
    "manifests",
    "manifests.d",
    "bench",
    "cdi",
    "notes.md",
    ".cudaup.lock",
];
const INNER: &[&str] = &[
    "install-x.log",
    "notes.log",
    "pyvenv.cfg",
    "self.json",
    "shell.json",
    "cudaup",
    "toolkit-x.json",
    "venv-x.json",
    ".cudaup-venv",
    "cuda-13.0.2",
    "data.bin",
];

/// Plants random user entries under `root` (top-level names from [`TOP`], some folders with
/// files from [`INNER`]); returns nothing, the snapshot tells what is there.
fn plant(rng: &mut Rng, root: &Path, top: &[&str]) {
    for _ in 0..(1 + rng.next() % 6) {
        let name = rng.pick(top);
        let p = root.join(name);
        if p.symlink_metadata().is_ok() {
            continue;
        }
        match rng.next() % 3 {
            0 => fs_err::write(&p, format!("user {name} {}\n", rng.next())).unwrap(),
            1 => {
                fs_err::create_dir_all(&p).unwrap();
                for _ in 0..(rng.next() % 4) {
                    let inner = rng.pick(INNER);
                    let _ = fs_err::write(p.join(inner), format!("user {inner}\n"));
                }
            }
            #[cfg(unix)]
            _ => std::os::unix::fs::symlink("/etc/hostname", &p).unwrap(),
            // A Windows symbolic link needs a privilege a test cannot count on: a file instead.
            #[cfg(not(unix))]
            _ => fs_err::write(&p, "user link stand-in\n").unwrap(),
        }
    }
}

/// What cudaup makes in a home: env scripts, a venv it created, a toolkit, a log.
fn cudaup_makes(home: &Home) {
    crate::install::env::write_scripts(home.root(), None).unwrap();
    cudaup_venv(home, &home.venv("pytorch"));
    cudaup_toolkit(home, &home.toolkit(&"13.0.2"), &[("bin/nvcc", b"nvcc")]);
    fs_err::create_dir_all(home.logs()).unwrap();
    let _ = fs_err::write(home.log("install", 42), "log\n");
}

/// For random home contents, `uninstall --purge` removes only what cudaup made: a directory it
/// never marked is refused whole; in a home it marked over the user's entries, every one of
/// them stays byte for byte; in a home it made, the user's files added later (in its folders
/// too, named like cudaup's) stay, and nothing of cudaup's is left but what holds them.
#[test]
fn purge_removes_only_what_cudaup_made_whatever_the_home_holds() {
    for seed in 1..=60u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().join("home"));
        fs_err::create_dir_all(home.root()).unwrap();
        plant(&mut rng, home.root(), TOP);
        let before = snapshot(dir.path());

        // Never marked: refused, whatever it holds (unless it is empty).
        match plan(&home, true) {
            Err(UninstallError::NotAHome(_)) => {}
            Err(e) => panic!("seed {seed}: {e}"),
            Ok(steps) => assert!(steps.is_empty(), "seed {seed}: {steps:?}"),
        }
        assert_eq!(
            snapshot(dir.path()),
            before,
            "seed {seed}: refused, yet changed"
        );

        // Marked over the user's entries, then cudaup installs (where its names are free).
        HomeMarker::claim(&home).unwrap();
        let free = |p: PathBuf| p.symlink_metadata().is_err();
        if free(home.venvs())
            && free(home.toolkits())
            && free(home.receipts())
            && free(home.logs())
            && free(home.env_script(crate::shell::Shell::Posix))
            && free(home.env_script(crate::shell::Shell::Fish))
            && free(home.env_script(crate::shell::Shell::PowerShell))
            && free(home.active())
        {
            cudaup_makes(&home);
        }
        // And the user adds files of their own, inside cudaup's folders too.
        let venvs = home.venvs();
        if venvs.is_dir() {
            plant(&mut rng, &venvs, &["mine", "other-venv", "pytorch2"]);
        }
        let user_after: Vec<PathBuf> = snapshot(home.root())
            .keys()
            .filter(|k| k.starts_with("venvs") && !k.starts_with("venvs/pytorch"))
            .cloned()
            .collect();
        uninstall(&home, true).unwrap();
        let after = snapshot(dir.path());
        for (path, what) in &before {
            assert_eq!(
                after.get(path),
                Some(what),
                "seed {seed}: the user's {} changed",
                path.display()
            );
        }
        for rel in &user_after {
            assert!(
                home.root().join(rel).symlink_metadata().is_ok(),
                "seed {seed}: the user's {} went",
                rel.display()
            );
        }
        // Nothing of cudaup's is left but the folders holding the user's files.
        for gone in [
            home.venv("pytorch"),
            home.toolkit(&"13.0.2"),
            home.log("install", 42),
        ] {
            assert!(
                !gone.exists() || before.contains_key(gone.strip_prefix(dir.path()).unwrap()),
                "seed {seed}: {} is left",
                gone.display()
            );
        }
    }
}

/// Issue 43, thinking like an attacker: a link to a folder outside the prefix, planted where
/// cudaup made a folder of the prefix, holds files with exactly the receipt's names, sizes and
/// bytes. Uninstall removes nothing through it, keeps the link, and says why.
// Unix only for now: Wine 8 makes a directory link (`symlink_dir` succeeds) that it then
// cannot see (`symlink_metadata` says not found), so the Windows walker's refusal cannot be
// shown under Wine; a real Windows needs Developer Mode or an administrator to make one.
#[cfg(unix)]
#[test]
fn a_link_planted_for_a_folder_of_the_prefix_is_never_walked_through() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::new(dir.path().join("home"));
    HomeMarker::claim(&home).unwrap();
    let prefix = dir.path().join("opt").join("cuda");
    cudaup_toolkit(
        &home,
        &prefix,
        &[("bin/nvcc", b"nvcc"), ("lib/cudart.dll", b"MZ cudart")],
    );
    let outside = dir.path().join("outside");
    fs_err::create_dir_all(&outside).unwrap();
    fs_err::write(outside.join("cudart.dll"), "MZ cudart").unwrap();
    fs_err::remove_dir_all(prefix.join("lib")).unwrap();
    std::os::unix::fs::symlink(&outside, prefix.join("lib")).unwrap();
    let out = uninstall(&home, false).unwrap();
    assert_eq!(
        fs_err::read_to_string(outside.join("cudart.dll")).unwrap(),
        "MZ cudart",
        "a file outside the prefix was removed through the link"
    );
    assert!(
        prefix
            .join("lib")
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink()),
        "the link is kept"
    );
    assert!(!prefix.join("bin").exists(), "the real folder's file goes");
    let why: Vec<&str> = out.kept.iter().map(|(_, w)| w.as_str()).collect();
    assert!(
        why.iter().any(|w| w.contains("no longer a directory")),
        "{why:?}"
    );
}
