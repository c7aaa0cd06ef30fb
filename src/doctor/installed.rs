//! What cudaup installed, against its receipts: every toolkit file exists with its size (and,
//! under `bin/` and for `lib64/*.so*`, its sha256 — what breaks), symlinks point where they did;
//! venvs and their interpreters exist; hooked rc files still hold the inserted text; the active
//! toolkit and the env script are there.

use std::path::{Path, PathBuf};

use crate::install::receipt::{Receipt, ReceiptFile};
use crate::model::finding::Severity;

use super::{repair, Diagnosis, Inputs};

/// How many paths a finding names before it says "and N more".
const SHOWN: usize = 8;

/// Every receipt check.
pub fn check(inputs: &Inputs<'_>) -> Vec<Diagnosis> {
    let r = inputs.receipts;
    let mut out = Vec::new();
    for (path, e) in &r.unreadable {
        out.push(
            Diagnosis::new(
                "receipt-unreadable",
                Severity::Warning,
                format!("the receipt {} cannot be read", path.display()),
            )
            .evidence(e.clone())
            .fix(format!(
                "if what it describes is gone, delete {}; otherwise reinstall it so the receipt is written again",
                path.display()
            )),
        );
    }
    for (file, receipt) in &r.toolkits {
        out.extend(toolkit(file, receipt));
    }
    out.extend(venvs(inputs));
    out.extend(shell(inputs));
    out.extend(active(inputs));
    out
}

/// Whether a file's content is worth hashing: executables and shared libraries break programs
/// when they change; headers and docs rarely do.
pub fn hashed(path: &Path) -> bool {
    let s = path.to_string_lossy();
    s.starts_with("bin/") || (s.starts_with("lib64/") && s.contains(".so"))
}

/// Which files' contents a receipt check hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hash {
    /// Executables and shared libraries ([`hashed`]): doctor's check, fast enough to run often.
    Executables,
    /// Every file with a recorded sha256: repair's, which must not leave a changed header.
    All,
}

/// What is wrong with one receipt entry, if anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// Not there.
    Missing,
    /// There, but not what the receipt recorded (how, in words).
    Changed(String),
}

fn inspect(prefix: &Path, f: &ReceiptFile, hash: Hash) -> Option<Problem> {
    let p = prefix.join(&f.path);
    let Ok(meta) = fs_err::symlink_metadata(&p) else {
        return Some(Problem::Missing);
    };
    if let Some(link) = &f.link {
        return match fs_err::read_link(&p) {
            Ok(t) if &t == link => None,
            Ok(t) => Some(Problem::Changed(format!(
                "points to {} instead of {}",
                t.display(),
                link.display()
            ))),
            Err(_) => Some(Problem::Changed(format!(
                "is no longer a symlink to {}",
                link.display()
            ))),
        };
    }
    if let Some(size) = f.size {
        if !meta.is_file() {
            return Some(Problem::Changed("is no longer a regular file".into()));
        }
        if meta.len() != size {
            return Some(Problem::Changed(format!(
                "is {} bytes instead of {size}",
                meta.len()
            )));
        }
        let hash_it = hash == Hash::All || hashed(&f.path);
        if let Some(want) = f.sha256.as_deref().filter(|_| hash_it) {
            match crate::fetch::sha256_file(&p) {
                Ok(got) if got.eq_ignore_ascii_case(want) => {}
                Ok(got) => {
                    return Some(Problem::Changed(format!(
                        "has sha256 {}… instead of {}…",
                        &got[..12],
                        &want[..want.len().min(12)]
                    )))
                }
                Err(e) => return Some(Problem::Changed(format!("cannot be read: {e}"))),
            }
        }
    }
    None
}

/// Checks every entry, hashing on all cores (a real toolkit's bin/ and lib64/ are gigabytes):
/// the one receipt check doctor (`Hash::Executables`) and repair (`Hash::All`) share. Hashes
/// compare without regard to case.
pub fn inspect_all(prefix: &Path, files: &[ReceiptFile], hash: Hash) -> Vec<(PathBuf, Problem)> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(4)
        .clamp(1, 16);
    let chunk = files.len().div_ceil(threads).max(1);
    let mut out: Vec<(PathBuf, Problem)> = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .filter_map(|f| inspect(prefix, f, hash).map(|p| (f.path.clone(), p)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn reinstall(receipt: &Receipt) -> String {
    let cudnn = match &receipt.cudnn {
        Some(v) => format!(" --cudnn {v}"),
        None => " --no-cudnn".to_owned(),
    };
    format!(
        "cudaup install --profile cuda-dev --cuda {}{cudnn} --prefix {} --yes",
        receipt.cuda,
        receipt.prefix.display()
    )
}

/// `toolkit-prefix-missing`, `toolkit-files-missing`, `toolkit-files-changed`.
fn toolkit(file: &Path, receipt: &Receipt) -> Vec<Diagnosis> {
    let prefix = &receipt.prefix;
    if !prefix.is_dir() {
        return vec![Diagnosis::new(
            "toolkit-prefix-missing",
            Severity::Error,
            format!(
                "the CUDA {} toolkit cudaup installed in {} is gone",
                receipt.cuda,
                prefix.display()
            ),
        )
        .evidence(format!("receipt {} names it", file.display()))
        .fix(format!(
            "{}   # rebuilds it from the receipt\nor: {}\nor, if you removed it on purpose: rm {}",
            repair("toolkit-files"),
            reinstall(receipt),
            file.display()
        ))];
    }
    let problems = inspect_all(prefix, &receipt.files, Hash::Executables);
    let hashed_count = receipt
        .files
        .iter()
        .filter(|f| f.sha256.is_some() && hashed(&f.path))
        .count();
    let basis = format!(
        "receipt {}: {} entries checked for existence and size, {hashed_count} executables and libraries by sha256",
        file.display(),
        receipt.files.len()
    );
    let mut out = Vec::new();
    let missing: Vec<&PathBuf> = problems
        .iter()
        .filter(|(_, p)| *p == Problem::Missing)
        .map(|(f, _)| f)
        .collect();
    let changed: Vec<(&PathBuf, &String)> = problems
        .iter()
        .filter_map(|(f, p)| match p {
            Problem::Changed(why) => Some((f, why)),
            Problem::Missing => None,
        })
        .collect();
    let more = |n: usize| (n > SHOWN).then(|| format!("… and {} more", n - SHOWN));
    if !missing.is_empty() {
        let mut d = Diagnosis::new(
            "toolkit-files-missing",
            Severity::Error,
            format!(
                "{} file(s) of the CUDA {} toolkit in {} are missing",
                missing.len(),
                receipt.cuda,
                prefix.display()
            ),
        )
        .evidence(basis.clone());
        for m in missing.iter().take(SHOWN) {
            d = d.evidence(format!("missing: {}", prefix.join(m).display()));
        }
        if let Some(m) = more(missing.len()) {
            d = d.evidence(m);
        }
        out.push(d.fix(format!(
            "{}   # puts them back from the download cache\nor: {}",
            repair("toolkit-files"),
            reinstall(receipt)
        )));
    }
    if !changed.is_empty() {
        let mut d = Diagnosis::new(
            "toolkit-files-changed",
            Severity::Error,
            format!(
                "{} file(s) of the CUDA {} toolkit in {} differ from what cudaup installed",
                changed.len(),
                receipt.cuda,
                prefix.display()
            ),
        )
        .evidence(basis);
        for (f, why) in changed.iter().take(SHOWN) {
            d = d.evidence(format!("{} {why}", prefix.join(f).display()));
        }
        if let Some(m) = more(changed.len()) {
            d = d.evidence(m);
        }
        out.push(d.fix(format!(
            "{}   # restores them from the download cache\nor: {}",
            repair("toolkit-files"),
            reinstall(receipt)
        )));
    }
    out
}

/// `venv-missing`, `venv-python-missing`.
fn venvs(inputs: &Inputs<'_>) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    for (file, r) in &inputs.receipts.venvs {
        let venv = crate::install::python::Venv {
            dir: r.venv.clone(),
        };
        let again = format!(
            "cudaup install --profile {} --venv {} --yes",
            r.profile,
            r.venv.display()
        );
        if !r.venv.is_dir() {
            out.push(
                Diagnosis::new(
                    "venv-missing",
                    Severity::Error,
                    format!(
                        "the {} environment cudaup installed in {} is gone",
                        r.profile,
                        r.venv.display()
                    ),
                )
                .evidence(format!("receipt {} names it", file.display()))
                .fix(format!(
                    "{}   # recreates it from the receipt\nor: {again}\nor, if you removed it on purpose: rm {}",
                    repair("venv-packages"),
                    file.display()
                )),
            );
            continue;
        }
        let python = venv.python();
        if !python.is_file() {
            let mut d = Diagnosis::new(
                "venv-python-missing",
                Severity::Error,
                format!(
                    "the venv {} has no working interpreter ({})",
                    r.venv.display(),
                    python.display()
                ),
            )
            .evidence(format!(
                "receipt {}: made from {}",
                file.display(),
                r.base_python
            ));
            if let Ok(target) = fs_err::read_link(&python) {
                d = d.evidence(format!(
                    "{} is a symlink to {}, which is gone (the base Python was removed or upgraded)",
                    python.display(),
                    target.display()
                ));
            }
            out.push(d.fix(format!(
                "{}   # recreates the venv with the same packages\nor: rm -r {} && {again}",
                repair("venv-packages"),
                r.venv.display()
            )));
        }
    }
    out
}

/// `shell-hook-missing`: an rc file cudaup hooked no longer holds the inserted text (an error
/// when the sourcing line is gone too, a note when only its exact bytes changed), and
/// `env-script-missing`: rc files source an env script that is not there.
fn shell(inputs: &Inputs<'_>) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let hooks = &inputs.receipts.shell.hooks;
    for h in hooks {
        let content = fs_err::read_to_string(&h.file).ok();
        if content.as_deref().is_some_and(|c| c.contains(&h.inserted)) {
            continue;
        }
        let line = h
            .inserted
            .lines()
            .map(str::trim)
            .rfind(|l| !l.is_empty() && !l.starts_with('#'))
            .unwrap_or("");
        let line_there = !line.is_empty() && content.as_deref().is_some_and(|c| c.contains(line));
        let (severity, message) = match (&content, line_there) {
            (None, _) => (
                Severity::Warning,
                format!("{} is gone: shells that read it no longer get cudaup's environment", h.file.display()),
            ),
            (Some(_), false) => (
                Severity::Warning,
                format!("{} no longer sources cudaup's env script: new shells miss PATH, LD_LIBRARY_PATH and CUDA_HOME", h.file.display()),
            ),
            (Some(_), true) => (
                Severity::Info,
                format!("cudaup's lines in {} were edited; the environment still loads, but uninstall cannot take them out byte for byte", h.file.display()),
            ),
        };
        out.push(
            Diagnosis::new("shell-hook-missing", severity, message)
                .evidence(format!(
                    "receipts/shell.json: {} got {:?}",
                    h.file.display(),
                    h.inserted
                ))
                .fix(format!(
                    "{}\nor add this line to {} yourself: {line}",
                    repair("rc-hook"),
                    h.file.display()
                )),
        );
    }
    if let (false, Some(home)) = (hooks.is_empty(), inputs.process.cudaup_home()) {
        let script = crate::install::home::Home::at(&home).env_script(crate::shell::Shell::Posix);
        if !script.is_file() {
            out.push(
                Diagnosis::new(
                    "env-script-missing",
                    Severity::Error,
                    format!(
                        "{} is missing, but {} rc file(s) source it: every new shell prints an error",
                        script.display(),
                        hooks.len()
                    ),
                )
                .evidence(format!(
                    "hooked: {}",
                    hooks
                        .iter()
                        .map(|h| h.file.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
                .fix(format!(
                    "{}   # rewrites the env scripts for the active stack",
                    repair("env-scripts")
                )),
            );
        }
    }
    out
}

/// `active-toolkit-missing`: the env scripts point at a toolkit that is not there.
fn active(inputs: &Inputs<'_>) -> Option<Diagnosis> {
    let t = inputs.receipts.active.toolkit.as_ref()?;
    if crate::model::layout::Prefix::at(t).nvcc().is_file() {
        return None;
    }
    Some(
        Diagnosis::new(
            "active-toolkit-missing",
            Severity::Error,
            format!(
                "cudaup's env scripts put {} on PATH and in CUDA_HOME, but it has no bin/nvcc",
                t.display()
            ),
        )
        .evidence("$CUDAUP_HOME/active.json names it")
        .fix(format!(
            "{}   # when cudaup installed it (a receipt names it)\nor install a toolkit again: cudaup install --profile cuda-dev",
            repair("toolkit-files")
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use sha2::{Digest, Sha256};

    // Used only by the Unix-only tests below.
    #[cfg(unix)]
    fn receipt(prefix: &Path, files: Vec<ReceiptFile>) -> Receipt {
        Receipt {
            schema_version: 1,
            prefix: prefix.to_path_buf(),
            cuda: "13.0.2".into(),
            cudnn: None,
            source: "redist /m".into(),
            installed_at: 0,
            components: vec![],
            files,
        }
    }

    #[cfg(unix)]
    fn file(path: &str, bytes: &[u8]) -> ReceiptFile {
        ReceiptFile {
            path: PathBuf::from(path),
            size: Some(bytes.len() as u64),
            sha256: Some(hex::encode(Sha256::digest(bytes))),
            link: None,
        }
    }

    #[cfg(unix)]
    #[test]
    fn missing_changed_and_relinked_files() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("cuda");
        fs_err::create_dir_all(p.join("bin")).unwrap();
        fs_err::create_dir_all(p.join("lib64")).unwrap();
        fs_err::create_dir_all(p.join("include")).unwrap();
        fs_err::write(p.join("bin/nvcc"), b"NVCC").unwrap();
        fs_err::write(p.join("lib64/libcudart.so.13.0.96"), b"evil").unwrap();
        fs_err::write(p.join("include/cuda.h"), b"other").unwrap();
        std::os::unix::fs::symlink("libcudart.so.12", p.join("lib64/libcudart.so")).unwrap();
        let r = receipt(
            &p,
            vec![
                file("bin/nvcc", b"NVCC"),
                file("bin/ptxas", b"PTXAS"),
                file("lib64/libcudart.so.13.0.96", b"good"),
                // Same size, different bytes, but a header: not hashed, so not reported.
                file("include/cuda.h", b"cudah"),
                ReceiptFile {
                    path: PathBuf::from("lib64/libcudart.so"),
                    size: None,
                    sha256: None,
                    link: Some(PathBuf::from("libcudart.so.13")),
                },
            ],
        );
        let d = toolkit(Path::new("/h/receipts/x.json"), &r);
        let ids: Vec<_> = d.iter().map(Diagnosis::id).collect();
        assert_eq!(ids, vec!["toolkit-files-missing", "toolkit-files-changed"]);
        assert!(
            d[0].evidence[1].ends_with("bin/ptxas"),
            "{:?}",
            d[0].evidence
        );
        let changed = &d[1].evidence;
        assert_eq!(changed.len(), 3, "{changed:?}");
        assert!(changed[1].contains("libcudart.so points to libcudart.so.12"));
        assert!(changed[2].contains("libcudart.so.13.0.96 has sha256"));

        // Repair's check is the same one, hashing every file: the changed header counts too, and
        // an upper-case hex in a receipt is the same hash.
        assert_eq!(
            crate::doctor::repair::toolkit_problems(&r),
            vec![
                "1 file(s) missing".to_owned(),
                "3 file(s) changed (include/cuda.h, lib64/libcudart.so, lib64/libcudart.so.13.0.96)"
                    .to_owned()
            ]
        );
        let mut upper = r.clone();
        for f in upper.files.iter_mut() {
            f.sha256 = f.sha256.as_ref().map(|h| h.to_uppercase());
        }
        assert_eq!(
            inspect_all(&p, &upper.files, Hash::All).len(),
            inspect_all(&p, &r.files, Hash::All).len()
        );

        fs_err::remove_dir_all(&p).unwrap();
        let d = toolkit(Path::new("/h/receipts/x.json"), &r);
        assert_eq!(d[0].id(), "toolkit-prefix-missing");
    }

    #[test]
    fn hashed_paths() {
        assert!(hashed(Path::new("bin/nvcc")));
        assert!(hashed(Path::new("lib64/libcublas.so.13.0.0.19")));
        assert!(!hashed(Path::new("lib64/libcudart_static.a")));
        assert!(!hashed(Path::new("include/cuda.h")));
    }
}
