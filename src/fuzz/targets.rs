//! One fuzz target per parser of outside input, each seeded with real documents: the PyPI pages,
//! METADATA files, redistrib JSONs and fatbin section captured under `tests/fixtures/sources/`,
//! the H200 capture under `tests/fixtures/h200-root/`, and the H200's own receipt and system
//! document under `docs/h200/` and `tests/fixtures/`.
//!
//! A target runs the parser and whatever reads its result the way cudaup does; where a
//! property must hold beyond "no panic" (an unpacked archive stays inside its directory, an rc
//! edit comes off byte for byte), the target asserts it, so a violation counts like a panic.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use super::engine::Target;
pub use super::safety::{LOCK_FILE, SETTINGS_NUMBERS};
use crate::catalog::update::Net;
use crate::catalog::update::{fatbin, marker, pypi as upypi, redist as uredist, zip as uzip};
use crate::fetch::{Fetcher, Location};
use crate::model::version::Version;
use crate::sources::page;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn fixture(rel: &str) -> Vec<u8> {
    fs_err::read(repo(rel)).unwrap_or_else(|e| panic!("seed {rel}: {e}"))
}

const PYPI: &str = "tests/fixtures/sources/pypi";
const JSON_PAGES: [&str; 4] = [
    "torch.json",
    "tensorflow.json",
    "nvidia-cudnn-cu13.json",
    "cuda-toolkit.json",
];
const METADATA: [&str; 6] = [
    "torch-2.15.0.METADATA",
    "torch-2.15.0-aarch64.METADATA",
    "torch-2.10.0-aarch64.METADATA",
    "tensorflow-2.21.0.METADATA",
    "cuda_toolkit-13.2.2.METADATA",
    "nvidia_cudnn_cu13-9.28.1.4.METADATA",
];

fn json_pages() -> Vec<Vec<u8>> {
    JSON_PAGES
        .iter()
        .map(|n| fixture(&format!("{PYPI}/{n}")))
        .collect()
}

fn metadata_files() -> Vec<Vec<u8>> {
    METADATA
        .iter()
        .map(|n| fixture(&format!("{PYPI}/{n}")))
        .collect()
}

/// The PEP 503 form of a captured PEP 691 page, as PyPI writes it (the same index data in its
/// HTML representation: `data-requires-python` escaped, `data-dist-info-metadata` and
/// `data-core-metadata` where the file has metadata, `data-yanked` where yanked).
fn as_pep503(json: &[u8]) -> Vec<u8> {
    let doc: serde_json::Value = serde_json::from_slice(json).expect("a captured page");
    let name = doc["name"].as_str().unwrap_or("x");
    let mut out = format!(
        "<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" content=\"1.1\">\n    <title>Links for {name}</title>\n  </head>\n  <body>\n    <h1>Links for {name}</h1>\n"
    );
    for f in doc["files"].as_array().into_iter().flatten() {
        let mut attrs = format!(
            "href=\"{}#sha256={}\"",
            f["url"].as_str().unwrap_or(""),
            f["hashes"]["sha256"].as_str().unwrap_or("")
        );
        if let Some(rp) = f["requires-python"].as_str() {
            attrs.push_str(&format!(
                " data-requires-python=\"{}\"",
                rp.replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
            ));
        }
        if f["core-metadata"].is_object() {
            attrs.push_str(
                " data-dist-info-metadata=\"sha256=00\" data-core-metadata=\"sha256=00\"",
            );
        }
        if f["yanked"].as_bool() == Some(true) || f["yanked"].is_string() {
            attrs.push_str(" data-yanked=\"\"");
        }
        out.push_str(&format!(
            "    <a {attrs}>{}</a><br />\n",
            f["filename"].as_str().unwrap_or("")
        ));
    }
    out.push_str("  </body>\n</html>\n<!--SERIAL 31415926-->\n");
    out.into_bytes()
}

fn text(input: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(input)
}

// ---- index pages ----------------------------------------------------------------------------

fn run_index_html(input: &[u8], _: &Path) {
    let text = text(input);
    for page in [
        Location::parse("https://pypi.org/simple/torch/").expect("a URL"),
        Location::parse("/srv/mirror/simple/torch/index.html").expect("a path"),
    ] {
        let files = page::parse_html(&page, &text);
        for f in &files {
            let _ = crate::sources::pypi::parse_wheel_name(&f.filename);
        }
        let _ = page::parse_page(&page, input);
    }
}

/// PEP 503 HTML pages (PyPI's, a mirror's, a `--find-links` listing).
pub const INDEX_HTML: Target = Target {
    name: "index_html",
    seeds: || {
        let mut s: Vec<Vec<u8>> = json_pages().iter().map(|j| as_pep503(j)).collect();
        s.push(b"<a </a>".to_vec());
        s
    },
    dict: &[
        b"<a ",
        b"</a>",
        b"<a href=\"",
        b"\">",
        b"#sha256=",
        b"&amp;",
        b"&gt;",
        b"&lt;",
        b" data-yanked",
        b" data-requires-python=\"",
        b"'",
        b"\"",
        b"../",
        b"http://",
        b"file://",
        b"-py3-none-any.whl",
        b"<html",
        b"<!DOCTYPE",
    ],
    run: run_index_html,
    max_len: 256 << 10,
};

fn run_index_json(input: &[u8], _: &Path) {
    let page = Location::parse("https://pypi.org/simple/torch/").expect("a URL");
    if let Ok(files) = page::parse_json(&page, input) {
        let project = upypi::Project {
            page: page.clone(),
            files: files
                .into_iter()
                .map(|f| upypi::WheelFile {
                    filename: f.filename,
                    url: f.location,
                    sha256: f.sha256,
                    requires_python: f.requires_python,
                    core_metadata: f.core_metadata,
                    uploaded: None,
                    size: f.size,
                })
                .collect(),
        };
        for v in project.releases() {
            let _ = project.wheel_for(&v, "aarch64");
            let _ = project.wheel(&v);
        }
    }
    let _ = page::parse_page(&page, input);
}

/// PEP 691 JSON pages.
pub const INDEX_JSON: Target = Target {
    name: "index_json",
    seeds: json_pages,
    dict: &[
        b"{",
        b"}",
        b"[",
        b"]",
        b"\"files\"",
        b"\"filename\"",
        b"\"url\"",
        b"\"yanked\"",
        b"\"size\"",
        b"null",
        b"true",
        b"false",
        b"-1",
        b"1e999",
        b"\"\\u0000\"",
        b":",
        b"\"core-metadata\"",
        b"\"requires-python\"",
    ],
    run: run_index_json,
    max_len: 512 << 10,
};

// ---- METADATA and markers -------------------------------------------------------------------

fn run_metadata(input: &[u8], _: &Path) {
    let Ok(m) = upypi::Metadata::parse(&text(input), "fuzz") else {
        return;
    };
    for machine in ["x86_64", "aarch64"] {
        for extra in [None, Some("and-cuda"), Some("cudart"), Some("all")] {
            for r in m.requires_on(machine, extra) {
                let _ = r.spec.floor();
                let _ = r.spec.is_exact();
                let _ = r.to_string();
            }
        }
        let _ = upypi::torch_cuda_on(&m, machine);
    }
    if let Some(p) = &m.requires_python {
        let _ = crate::catalog::Spec::parse(p);
    }
}

/// Wheel METADATA (core metadata), with every `Requires-Dist` parsed and its marker evaluated.
pub const METADATA_TARGET: Target = Target {
    name: "metadata",
    seeds: metadata_files,
    dict: &[
        b"Requires-Dist: ",
        b"Name: ",
        b"Version: ",
        b"Requires-Python: ",
        b"; ",
        b"(",
        b")",
        b" and ",
        b" or ",
        b"extra == ",
        b"platform_machine",
        b"'x86_64'",
        b"==",
        b">=",
        b"~=",
        b"[",
        b"]",
        b",",
        b"\n\n",
        b"Classifier: Programming Language :: Python :: 3.",
    ],
    run: run_metadata,
    max_len: 256 << 10,
};

fn marker_seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for m in metadata_files() {
        for line in String::from_utf8_lossy(&m).lines() {
            if let Some((_, mk)) = line
                .strip_prefix("Requires-Dist:")
                .and_then(|l| l.split_once(';'))
            {
                let mk = mk.trim().as_bytes().to_vec();
                if !out.contains(&mk) {
                    out.push(mk);
                }
            }
        }
    }
    out
}

fn run_marker(input: &[u8], _: &Path) {
    let text = text(input);
    for machine in ["x86_64", "aarch64"] {
        let _ = marker::holds(&text, &marker::Env::linux(machine, Some("cudart")));
        let _ = marker::holds(&text, &marker::Env::linux(machine, None));
    }
}

/// PEP 508 environment markers (the `; …` of `Requires-Dist`).
pub const MARKER: Target = Target {
    name: "marker",
    seeds: marker_seeds,
    dict: &[
        b"(",
        b")",
        b" and ",
        b" or ",
        b" not in ",
        b" in ",
        b"==",
        b"!=",
        b"<=",
        b"===",
        b"'",
        b"\"",
        b"extra",
        b"python_version",
        b"sys_platform",
    ],
    run: run_marker,
    max_len: 128 << 10,
};

// ---- zip central directory and members ------------------------------------------------------

/// A wheel the way the loopback PyPI of the tests serves one: the real METADATA, and the real
/// `.nv_fatbin` section in a minimal ELF as a library.
fn wheel_seeds() -> Vec<Vec<u8>> {
    let section = fixture("tests/fixtures/sources/fatbin/libcufile.so.0.nv_fatbin");
    let elf = fatbin::tests::elf_with_fatbin(&section);
    let mut out = Vec::new();
    for (i, meta) in metadata_files().into_iter().take(3).enumerate() {
        let mut buf = std::io::Cursor::new(Vec::new());
        {
            let mut z = ::zip::ZipWriter::new(&mut buf);
            let method = if i == 1 {
                ::zip::CompressionMethod::Stored
            } else {
                ::zip::CompressionMethod::Deflated
            };
            let opts = ::zip::write::SimpleFileOptions::default().compression_method(method);
            z.start_file("nvidia/cu13/lib/libcufile.so.0", opts)
                .expect("zip");
            std::io::Write::write_all(&mut z, &elf).expect("zip");
            z.start_file("x-1.0.dist-info/METADATA", opts).expect("zip");
            std::io::Write::write_all(&mut z, &meta).expect("zip");
            z.start_file("x-1.0.dist-info/RECORD", opts).expect("zip");
            z.finish().expect("zip");
        }
        out.push(buf.into_inner());
    }
    out
}

/// The fetcher the update's own tests use (it reads the local files given here).
fn local_fetcher(dir: &Path) -> Fetcher {
    crate::catalog::update::tests::fetcher(dir)
}

fn run_zip_directory(input: &[u8], sandbox: &Path) {
    let path = sandbox.join("x-1.0-py3-none-any.whl");
    fs_err::write(&path, input).expect("the sandbox is writable");
    let fetcher = local_fetcher(sandbox);
    let mut net = Net::new(&fetcher);
    let loc = Location::File(path);
    if let Ok(entries) = uzip::directory(&mut net, &loc) {
        for e in entries.iter().take(4) {
            let _ = uzip::read(&mut net, &loc, e, 1 << 20);
        }
    }
    if let Ok(Some(e)) = uzip::find(&mut net, &loc, &|e| e.name.ends_with("METADATA")) {
        if let Ok(bytes) = uzip::read(&mut net, &loc, &e, uzip::MAX_METADATA) {
            let _ = upypi::Metadata::parse(&String::from_utf8_lossy(&bytes), "fuzz");
        }
    }
    // What `manifests update` may fetch is bounded by the caps, whatever the directory says.
    assert!(
        net.bytes <= 4 * (1 << 20) + uzip::MAX_METADATA + (1 << 20),
        "{}",
        net.bytes
    );
}

/// The zip central directory and members of a wheel, read by ranges (`manifests update`).
pub const ZIP_DIRECTORY: Target = Target {
    name: "zip_directory",
    seeds: wheel_seeds,
    dict: &[
        b"PK\x01\x02",
        b"PK\x03\x04",
        b"PK\x05\x06",
        b"PK\x06\x06",
        b"PK\x06\x07",
        b"\xff\xff\xff\xff",
        b"\x01\x00\x18\x00",
        b"METADATA",
        b".dist-info/",
    ],
    run: run_zip_directory,
    max_len: 1 << 20,
};

fn run_unpack_zip(input: &[u8], sandbox: &Path) {
    let path = sandbox.join("x-1.0-py3-none-any.whl");
    fs_err::write(&path, input).expect("the sandbox is writable");
    let dest = sandbox.join("dest");
    if dest.exists() {
        let _ = fs_err::remove_dir_all(&dest);
    }
    fs_err::create_dir_all(&dest).expect("the sandbox is writable");
    let map = |p: &Path| Some(p.to_path_buf());
    let opts = crate::unpack::Options {
        map: &map,
        limits: crate::unpack::Limits {
            max_total_bytes: 64 << 20,
            max_entries: 10_000,
        },
        cancel: None,
        threads: 1,
    };
    let _ = crate::unpack::unpack_file(crate::unpack::Format::Zip, &path, &dest, &opts);
    // Whatever the archive says, nothing lands beside `dest`.
    let mut beside: Vec<String> = fs_err::read_dir(sandbox)
        .expect("the sandbox")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "dest" && n != "x-1.0-py3-none-any.whl")
        .collect();
    beside.sort();
    assert!(beside.is_empty(), "written outside dest: {beside:?}");
}

/// Unpacking a wheel into a prefix (the install's zip reader).
pub const UNPACK_ZIP: Target = Target {
    name: "unpack_zip",
    seeds: || {
        let mut s = wheel_seeds();
        s.truncate(2);
        s
    },
    dict: &[
        b"PK\x01\x02",
        b"PK\x03\x04",
        b"PK\x05\x06",
        b"../",
        b"/",
        b"..\\",
        b"\xff\xff\xff\xff",
        b"\xa1\x81",
        b"\xed\x41",
    ],
    run: run_unpack_zip,
    max_len: 1 << 20,
};

// ---- ELF / fatbin ---------------------------------------------------------------------------

fn run_elf_fatbin(input: &[u8], _: &Path) {
    let _ = fatbin::targets_of(input);
    let _ = fatbin::parse_section(input);
    if let Ok(t) = fatbin::targets_of(input) {
        let _ = t.describe();
    }
}

/// ELF section tables and fatbin containers of a wheel's library.
pub const ELF_FATBIN: Target = Target {
    name: "elf_fatbin",
    seeds: || {
        let section = fixture("tests/fixtures/sources/fatbin/libcufile.so.0.nv_fatbin");
        vec![fatbin::tests::elf_with_fatbin(&section), section]
    },
    dict: &[
        b"\x50\xed\x55\xba",
        b"\x7fELF\x02\x01",
        b".nv_fatbin\0",
        b"\x00\x00",
        b"\x10\x00",
        b"\x40\x00\x00\x00",
        b"\xff\xff\xff\xff\xff\xff\xff\xff",
    ],
    run: run_elf_fatbin,
    max_len: 512 << 10,
};

// ---- redistrib JSON -------------------------------------------------------------------------

fn run_redistrib(input: &[u8], _: &Path) {
    let manifest = Location::parse(
        "https://developer.download.nvidia.com/compute/cuda/redist/redistrib_13.4.1.json",
    )
    .expect("a URL");
    if let Ok(r) = crate::sources::redist::Redist::parse(&manifest, input) {
        let _ = r.release();
        for key in r.components() {
            for platform in ["linux-x86_64", "linux-sbsa", "windows-x86_64"] {
                for variant in [None, Some("cuda12"), Some("cuda13")] {
                    let _ = r.component(key, platform, variant);
                }
            }
        }
    }
    for (v, f) in [("13.4.1", true), ("9.27.0", false)] {
        let expected = Version::parse(v).expect("a version");
        if f {
            let _ = uredist::parse_cuda(&manifest, &expected, input);
        } else {
            let _ = uredist::parse_cudnn(&manifest, &expected, input);
        }
    }
    let _ = uredist::listed_versions(&text(input));
}

/// NVIDIA's `redistrib_<version>.json` (both readers: install and `manifests update`).
pub const REDISTRIB: Target = Target {
    name: "redistrib",
    seeds: || {
        vec![
            fixture("tests/fixtures/sources/nvidia/cuda/redistrib_13.4.1.json"),
            fixture("tests/fixtures/sources/nvidia/cudnn/redistrib_9.27.0.json"),
        ]
    },
    dict: &[
        b"\"relative_path\"",
        b"\"sha256\"",
        b"\"size\"",
        b"\"version\"",
        b"\"../\"",
        b"%2e%2e/",
        b"\"release_label\"",
        b"null",
        b"{}",
        b"[]",
        b"\"linux-x86_64\"",
        b"\"cuda13\"",
        b"redistrib_13.4.1.json",
        b"\\\\",
    ],
    run: run_redistrib,
    max_len: 256 << 10,
};

// ---- bundles --------------------------------------------------------------------------------

/// A bundle manifest as `cudaup mirror create --bundle` writes it (the H200 run's plan).
const BUNDLE_SEED: &str = r#"{
  "schema_version": 1,
  "made_by": "cudaup 0.1.0",
  "created": "2026-12-01",
  "profile": "pytorch",
  "target": {
    "os": "linux",
    "arch": "x86_64",
    "gpus": ["NVIDIA H200"],
    "python": "3.12",
    "platforms": ["manylinux_2_28_x86_64", "manylinux2014_x86_64", "linux_x86_64"]
  },
  "plan": [
    {"name": "driver", "version": "580.159.04", "variant": null},
    {"name": "cuda", "version": "13.0.2", "variant": null},
    {"name": "pytorch", "version": "2.15.0", "variant": "cu130"}
  ],
  "toolkit": {"source": "wheels", "cuda": "13.0.2", "cudnn": "9.19.0", "arches": ["9.0"]},
  "framework": {"route": "pytorch", "from": "https://download.pytorch.org/whl/cu130", "requirements": ["torch==2.15.0+cu130"], "variant": "cu130"},
  "files": [
    {"path": "torch/torch-2.15.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl", "sha256": "9e51cf94ed8c1a5c2a23ac8a9b4a7e9f41f1c2a8e74a4a8b0b5f0dce1e0eeb18", "size": 36044}
  ]
}
"#;

fn run_bundle(input: &[u8], sandbox: &Path) {
    let dir = sandbox.join("bundle");
    fs_err::create_dir_all(&dir).expect("the sandbox is writable");
    fs_err::write(dir.join(crate::install::python::bundle::MANIFEST), input).expect("writable");
    let local = crate::install::python::bundle::read_dir(&dir);
    let fetcher = local_fetcher(sandbox);
    let via_fetcher = crate::install::python::bundle::read(&fetcher, &Location::File(dir.clone()));
    assert_eq!(
        local.is_some(),
        via_fetcher.is_some(),
        "the two readers of one bundle disagree"
    );
    if let Some(m) = local {
        let _ = crate::install::python::bundle::write_pages(&dir, &m.files);
    }
}

/// Bundle manifests (`cudaup-bundle.json`).
pub const BUNDLE: Target = Target {
    name: "bundle",
    seeds: || {
        let s = BUNDLE_SEED.as_bytes().to_vec();
        assert!(
            serde_json::from_slice::<crate::install::python::bundle::BundleManifest>(&s).is_ok(),
            "the bundle seed is a bundle manifest"
        );
        vec![s]
    },
    dict: &[
        b"\"path\"",
        b"\"../../x.whl\"",
        b"null",
        b"[]",
        b"{}",
        b"4294967296",
        b"-1",
    ],
    run: run_bundle,
    max_len: 64 << 10,
};

// ---- receipts -------------------------------------------------------------------------------

fn run_receipts(input: &[u8], sandbox: &Path) {
    let home = sandbox.join("home");
    let prefix = sandbox.join("prefix");
    for d in [home.join("receipts/pending"), prefix.clone()] {
        fs_err::create_dir_all(d).expect("the sandbox is writable");
    }
    for p in [
        home.join("receipts/cuda-13.0.2.json"),
        home.join("receipts/pending/cuda-13.0.2.json"),
        home.join("receipts/shell.json"),
        home.join("active.json"),
        prefix.join(crate::model::receipt::FILE_NAME),
    ] {
        fs_err::write(p, input).expect("writable");
    }
    let r = crate::install::receipts::Receipts::load(&home);
    let _ = format!("{r:?}");
    let _ = crate::model::receipt::Receipt::read(&prefix);
}

/// Receipts (`receipts/*.json`, the pending journal, shell.json, active.json, the prefix's own).
pub const RECEIPTS: Target = Target {
    name: "receipts",
    seeds: || vec![fixture("docs/h200/toolkit-receipt.json")],
    dict: &[
        b"\"files\"",
        b"\"prefix\"",
        b"null",
        b"[]",
        b"{}",
        b"\"../\"",
        b"-1",
        b"1e400",
    ],
    run: run_receipts,
    max_len: 256 << 10,
};

// ---- rc files -------------------------------------------------------------------------------

const RC_SEED: &str = "# ~/.bashrc: executed by bash(1) for non-login shells.\n\n# If not running interactively, don't do anything\ncase $- in\n    *i*) ;;\n      *) return;;\nesac\n\nHISTCONTROL=ignoreboth\nshopt -s histappend\nHISTSIZE=1000\nHISTFILESIZE=2000\n\nif [ -f ~/.bash_aliases ]; then\n    . ~/.bash_aliases\nfi\n";

fn run_rc(input: &[u8], _: &Path) {
    let line = crate::shell::source_line(crate::shell::Shell::Posix, Path::new("/home/u/.cudaup"));
    if let Some((new, inserted)) = crate::shell::add(input, &line) {
        // What was added comes off again, leaving the file as it was — but for a marker line
        // an earlier block left without its sourcing line, which goes too (by design).
        let marker = crate::shell::MARKER.as_bytes();
        let expected: Vec<u8> = input
            .split_inclusive(|&b| b == b'\n')
            .filter(|l| l.trim_ascii() != marker)
            .flatten()
            .copied()
            .collect();
        let back = crate::shell::remove(&new, &inserted);
        assert!(
            back == expected,
            "the rc edit did not come off byte for byte"
        );
        assert!(crate::shell::add(&new, &line).is_none(), "added twice");
    }
    let _ = crate::shell::remove(input, input);
}

/// Shell rc files (the hook cudaup adds and removes).
pub const RC: Target = Target {
    name: "rc",
    seeds: || {
        let mut with_block = RC_SEED.as_bytes().to_vec();
        let line =
            crate::shell::source_line(crate::shell::Shell::Posix, Path::new("/home/u/.cudaup"));
        if let Some((new, _)) = crate::shell::add(&with_block, &line) {
            with_block = new;
        }
        vec![
            RC_SEED.as_bytes().to_vec(),
            with_block,
            b"no newline at the end".to_vec(),
        ]
    },
    dict: &[
        b"\n",
        b"\r\n",
        crate::shell::MARKER.as_bytes(),
        b"# cudaup",
        b"\\\n",
        b"\xef\xbb\xbf",
    ],
    run: run_rc,
    max_len: 64 << 10,
};

// ---- config ---------------------------------------------------------------------------------

fn run_config(input: &[u8], _: &Path) {
    let _ =
        crate::settings::file::Config::parse(&text(input), Path::new("/etc/cudaup/config.toml"));
}

/// The config file (`config.toml`), seeded with the example in docs/config.md.
pub const CONFIG: Target = Target {
    name: "config",
    seeds: || {
        let doc = String::from_utf8_lossy(&fixture("docs/config.md")).into_owned();
        let mut out = Vec::new();
        let mut rest = doc.as_str();
        while let Some(i) = rest.find("```toml\n") {
            let body = &rest[i + 8..];
            let Some(end) = body.find("```") else { break };
            out.push(body.as_bytes()[..end].to_vec());
            rest = &body[end + 3..];
        }
        assert!(!out.is_empty(), "docs/config.md has a toml example");
        out
    },
    dict: &[
        b"[",
        b"]",
        b"\"",
        b"=",
        b"\n",
        b"[[",
        b"]]",
        b"version = 1",
        b"policy = ",
        b"\"..\"",
        b"--extra-index-url=",
        b"1e999",
        b"\"\"\"",
    ],
    run: run_config,
    max_len: 64 << 10,
};

// ---- --system-root --------------------------------------------------------------------------

const CAPTURE: &str = "tests/fixtures/h200-root";

/// The H200 capture's files, relative to its top.
fn capture_files() -> &'static Vec<(PathBuf, Vec<u8>)> {
    static FILES: OnceLock<Vec<(PathBuf, Vec<u8>)>> = OnceLock::new();
    FILES.get_or_init(|| {
        let base = repo(CAPTURE);
        let mut out = Vec::new();
        let mut todo = vec![base.clone()];
        while let Some(d) = todo.pop() {
            for e in fs_err::read_dir(&d).expect("the capture").flatten() {
                let p = e.path();
                let t = e.file_type().expect("a type");
                if t.is_dir() {
                    todo.push(p);
                } else if t.is_file() {
                    let rel = p.strip_prefix(&base).expect("inside").to_path_buf();
                    out.push((rel, fs_err::read(&p).expect("readable")));
                }
            }
        }
        out.sort();
        out
    })
}

/// Copies the capture into `to`: files as files, links as the links they are.
fn materialize(to: &Path) {
    let base = repo(CAPTURE);
    let mut todo = vec![base.clone()];
    while let Some(d) = todo.pop() {
        for e in fs_err::read_dir(&d).expect("the capture").flatten() {
            let p = e.path();
            let rel = p.strip_prefix(&base).expect("inside");
            let dst = to.join(rel);
            let t = e.file_type().expect("a type");
            if t.is_dir() {
                fs_err::create_dir_all(&dst).expect("writable");
                todo.push(p);
            } else if t.is_symlink() {
                let target = fs_err::read_link(&p).expect("a link");
                #[cfg(unix)]
                let _ = std::os::unix::fs::symlink(target, &dst);
            } else {
                fs_err::create_dir_all(dst.parent().expect("a parent")).expect("writable");
                let _ = fs_err::copy(&p, &dst);
            }
        }
    }
}

struct NoCommands;

impl crate::world::runner::Runner for NoCommands {
    fn run(
        &self,
        program: &Path,
        _args: &[&str],
        _timeout: Duration,
    ) -> Result<crate::world::runner::Output, crate::world::runner::RunError> {
        Err(crate::world::runner::RunError::new(
            program,
            "nothing runs while fuzzing",
        ))
    }
}

fn catalog() -> &'static crate::catalog::Catalog {
    static CATALOG: OnceLock<crate::catalog::Catalog> = OnceLock::new();
    CATALOG.get_or_init(crate::catalog::Catalog::embedded)
}

/// The input: which captured file (first byte), what to put there (second byte: its bytes, a
/// FIFO, a link out of the capture, a link loop, a directory, a sparse giant), then the bytes.
fn run_system_root(input: &[u8], sandbox: &Path) {
    // The capture is copied once per campaign; each input changes one file, put back after.
    let root = sandbox.join("root");
    if !root.is_dir() {
        materialize(&root);
    }
    let files = capture_files();
    let (which, op, body) = match input {
        [a, b, rest @ ..] => (usize::from(*a), *b, rest),
        _ => (0, 0, &[][..]),
    };
    let (rel, original) = &files[which % files.len()];
    let target = root.join(rel);
    let _ = fs_err::remove_file(&target);
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        let _ = match op % 16 {
            1 => rustix::fs::mkfifoat(
                rustix::fs::CWD,
                &target,
                rustix::fs::Mode::from_raw_mode(0o600),
            )
            .map_err(std::io::Error::from),
            2 => symlink("/dev/zero", &target),
            3 => symlink("../../../../../../../../../../etc/passwd", &target),
            4 => symlink(&target, &target),
            5 => fs_err::create_dir_all(&target),
            6 => fs_err::File::create(&target).and_then(|f| f.set_len(8 << 30)),
            _ => fs_err::write(&target, body),
        };
    }
    #[cfg(not(unix))]
    let _ = fs_err::write(&target, body);
    let process =
        crate::world::process::Process::with_vars(Vec::<(String, String)>::new(), sandbox);
    let opts = crate::detect::Options {
        root: crate::detect::Root::at(&root),
        deep: false,
        nvml_library: None,
        pythons: true,
        cudaup_toolkits: None,
        cudaup_venvs: None,
    };
    let d = crate::detect::detect(&process, &NoCommands, catalog(), &opts);
    let _ = serde_json::to_string(&d.system);
    if target.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        let _ = fs_err::remove_dir_all(&target);
    } else {
        let _ = fs_err::remove_file(&target);
    }
    fs_err::write(&target, original).expect("the capture file put back");
}

/// A captured machine (`--system-root`): one file of the H200 capture replaced per input.
pub const SYSTEM_ROOT: Target = Target {
    name: "system_root",
    seeds: || {
        capture_files()
            .iter()
            .enumerate()
            .map(|(i, (_, bytes))| {
                let mut s = vec![i as u8, 0];
                s.extend_from_slice(bytes);
                s
            })
            .collect()
    },
    dict: &[
        b"\n",
        b"=",
        b"\"",
        b"NAME=",
        b"VERSION_ID=",
        b"nvidia ",
        b"0x10de",
        b"\0",
    ],
    run: run_system_root,
    max_len: 64 << 10,
};

// ---- fleet reports --------------------------------------------------------------------------

const SEP: &[u8] = b"\n\x00--\x00\n";

fn run_fleet(input: &[u8], _: &Path) {
    let mut parts = Vec::new();
    let mut rest = input;
    while let Some(i) = rest.windows(SEP.len()).position(|w| w == SEP) {
        parts.push(&rest[..i]);
        rest = &rest[i + SEP.len()..];
    }
    parts.push(rest);
    let part = |i: usize| {
        parts
            .get(i)
            .map(|b| String::from_utf8_lossy(b).into_owned())
    };
    let files = crate::fleet::HostFiles {
        host: "h200".into(),
        install: part(0),
        verify: part(1),
        system: part(2),
        errors: Vec::new(),
    };
    let row = crate::fleet::host_row(&files);
    let _ = crate::fleet::aggregate(vec![row.clone(), row]);
}

/// A host's report files in `fleet report DIR` (install.json, verify.json, system.json).
pub const FLEET: Target = Target {
    name: "fleet",
    seeds: || {
        let install = br#"{"status":"installed","profile":"cuda-dev","changed":true,"reboot_required":false,"plan":{"status":"ok","profile":"cuda-dev","components":[{"name":"driver","action":"keep","version":"580.159.04","reason":""},{"name":"cuda","action":"install","version":"13.0.2","reason":""},{"name":"cudnn","action":"install","version":"9.19.0","cuda_variant":"13","reason":""}]},"toolkit":{"cuda":"13.0.2"}}"#;
        let verify = br#"{"schema_version":1,"ok":true,"passed":2,"failed":0,"skipped":0,"checks":[{"id":"driver","status":"pass","evidence":["ok"]},{"id":"nvcc","status":"pass","evidence":["ok"],"data":{"installed":"13.0.2"}}]}"#;
        let mut s = install.to_vec();
        s.extend_from_slice(SEP);
        s.extend_from_slice(verify);
        s.extend_from_slice(SEP);
        s.extend_from_slice(&fixture("tests/fixtures/h200-detect.json"));
        vec![s]
    },
    dict: &[
        b"null",
        b"[]",
        b"{}",
        b"\"failed\"",
        b"\"gpus\"",
        b"-1",
        b"1e999",
        SEP,
    ],
    run: run_fleet,
    max_len: 256 << 10,
};

/// Every target.
pub const ALL: &[&Target] = &[
    &INDEX_HTML,
    &INDEX_JSON,
    &METADATA_TARGET,
    &MARKER,
    &ZIP_DIRECTORY,
    &UNPACK_ZIP,
    &ELF_FATBIN,
    &REDISTRIB,
    &BUNDLE,
    &RECEIPTS,
    &RC,
    &CONFIG,
    &SYSTEM_ROOT,
    &FLEET,
    &LOCK_FILE,
    &SETTINGS_NUMBERS,
];
