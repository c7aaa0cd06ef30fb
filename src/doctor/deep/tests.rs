//! `doctor --deep` on a toolkit prefix laid out on disk with its receipt: an edit plain doctor
//! cannot see is named with the fix, and what plain doctor reports is left to it.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::*;
use crate::install::receipts::Receipts;

fn file(path: &str, bytes: &[u8]) -> ReceiptFile {
    ReceiptFile {
        path: PathBuf::from(path),
        size: Some(bytes.len() as u64),
        sha256: Some(hex::encode(Sha256::digest(bytes))),
        link: None,
    }
}

fn receipts(prefix: &Path, files: Vec<ReceiptFile>) -> Receipts {
    Receipts {
        toolkits: vec![(
            PathBuf::from("/h/receipts/toolkit.json"),
            Receipt {
                schema_version: 1,
                prefix: prefix.to_path_buf(),
                cuda: "13.0.2".into(),
                cudnn: None,
                source: "wheels /m".into(),
                installed_at: 0,
                components: vec![],
                files,
            },
        )],
        ..Receipts::default()
    }
}

#[test]
fn an_edit_at_the_same_size_that_plain_doctor_cannot_see_is_named_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("cuda");
    for dir in ["bin", "include", "lib64"] {
        fs_err::create_dir_all(p.join(dir)).unwrap();
    }
    let files = [
        ("bin/nvcc", &b"NVCC"[..]),
        ("include/cuda.h", b"#define CUDA 1\n"),
        ("include/cublas.h", b"#define CUBLAS 1\n"),
        ("lib64/libcublas_static.a", b"!<arch>\n"),
    ];
    for (path, bytes) in files {
        fs_err::write(p.join(path), bytes).unwrap();
    }
    let r = receipts(&p, files.iter().map(|(path, b)| file(path, b)).collect());
    assert!(check(&r).is_empty(), "intact");

    // Same sizes, other bytes: a header and a static library (deep's), an executable (plain
    // doctor's, which hashes bin/), and a header of another size (plain doctor's too).
    fs_err::write(p.join("include/cuda.h"), b"#define CUDA 2\n").unwrap();
    fs_err::write(p.join("lib64/libcublas_static.a"), b"!<arch>X").unwrap();
    fs_err::write(p.join("bin/nvcc"), b"EVIL").unwrap();
    fs_err::write(p.join("include/cublas.h"), b"#define CUBLAS 12\n").unwrap();
    let found = check(&r);
    assert_eq!(found.len(), 1, "{found:?}");
    let d = &found[0];
    assert_eq!(d.id(), "toolkit-content-changed");
    assert_eq!(d.severity(), Severity::Error);
    assert_eq!(
        d.finding.message,
        format!(
            "2 file(s) of the CUDA 13.0.2 toolkit in {} hold other bytes than cudaup installed",
            p.display()
        )
    );
    assert!(
        d.evidence[0].contains("3 more files hashed in full"),
        "{:?}",
        d.evidence
    );
    assert_eq!(d.evidence.len(), 3, "{:?}", d.evidence);
    assert!(d.evidence[1].starts_with(&format!(
        "{} has sha256",
        p.join("include/cuda.h").display()
    )));
    assert!(d.evidence[2].starts_with(&format!(
        "{} has sha256",
        p.join("lib64/libcublas_static.a").display()
    )));
    assert_eq!(
        d.finding.fix.as_deref(),
        Some("cudaup repair --fix toolkit-files   # restores them from the verified download")
    );
}

#[test]
fn a_prefix_that_is_gone_is_left_to_plain_doctor() {
    let tmp = tempfile::tempdir().unwrap();
    let r = receipts(&tmp.path().join("gone"), vec![file("include/cuda.h", b"x")]);
    assert!(check(&r).is_empty());
}
