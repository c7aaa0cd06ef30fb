//! `cudaup manifests update` against loopback fakes of the three publishers, built from the real
//! documents in tests/fixtures/sources/ (README there says where each came from): a release that
//! appears at a source appears in `plan`; a source that is down, slow or answers garbage leaves
//! the catalog in effect as it was (exit 3 / 4); a refreshed catalog that fails `manifests check`
//! is never used.

use std::path::{Path, PathBuf};

use crate::common::server::{Fault, Server};
use crate::common::*;

const SOURCES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sources");
const H200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/h200-detect.json"
);

fn fixture(p: &str) -> Vec<u8> {
    fs_err::read(format!("{SOURCES}/{p}")).unwrap()
}

/// A `.nv_fatbin` section in the layout of the real one in fixtures/sources/fatbin: one container
/// (magic, version 1, 16-byte header, payload size), entries with a 64-byte header (kind, 0x0101,
/// header size, payload size, …, SM number at offset 28) and a small payload.
fn fatbin_section(entries: &[(u16, u32)]) -> Vec<u8> {
    let mut body = Vec::new();
    for (kind, arch) in entries {
        let mut h = vec![0u8; 64];
        h[0..2].copy_from_slice(&kind.to_le_bytes());
        h[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
        h[4..8].copy_from_slice(&64u32.to_le_bytes());
        h[8..16].copy_from_slice(&16u64.to_le_bytes());
        h[24..28].copy_from_slice(&0x0001_0007u32.to_le_bytes());
        h[28..32].copy_from_slice(&arch.to_le_bytes());
        body.extend(h);
        body.extend([0u8; 16]);
    }
    let mut out = Vec::new();
    out.extend(0xBA55_ED50u32.to_le_bytes());
    out.extend(1u16.to_le_bytes());
    out.extend(16u16.to_le_bytes());
    out.extend((body.len() as u64).to_le_bytes());
    out.extend(body);
    out
}

/// A minimal ELF64 whose section table has `.shstrtab` and `.nv_fatbin` (holding `section`).
fn elf(section: &[u8]) -> Vec<u8> {
    let strtab = b"\0.shstrtab\0.nv_fatbin\0";
    let mut out = vec![0u8; 64];
    out[..4].copy_from_slice(b"\x7fELF");
    out[4] = 2;
    out[5] = 1;
    out[6] = 1;
    let str_off = out.len();
    out.extend_from_slice(strtab);
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
    let fat_off = out.len();
    out.extend_from_slice(section);
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
    let shoff = out.len();
    let header = |name: u32, off: usize, size: usize| {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(&name.to_le_bytes());
        h[4..8].copy_from_slice(&1u32.to_le_bytes());
        h[0x18..0x20].copy_from_slice(&(off as u64).to_le_bytes());
        h[0x20..0x28].copy_from_slice(&(size as u64).to_le_bytes());
        h
    };
    out.extend(vec![0u8; 64]);
    out.extend(header(1, str_off, strtab.len()));
    out.extend(header(11, fat_off, section.len()));
    out[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
    out[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
    out[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
    out[0x3e..0x40].copy_from_slice(&1u16.to_le_bytes());
    out
}

/// A wheel (zip) with `members`.
fn wheel(path: &Path, members: &[(&str, Vec<u8>)]) {
    fs_err::create_dir_all(path.parent().unwrap()).unwrap();
    let mut z = zip::ZipWriter::new(fs_err::File::create(path).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in members {
        z.start_file(*name, opts).unwrap();
        std::io::Write::write_all(&mut z, bytes).unwrap();
    }
    z.finish().unwrap();
}

/// The three publishers under one directory, served by one loopback server.
struct Sources {
    root: tempfile::TempDir,
    server: Server,
}

impl Sources {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let server = Server::start(root.path().to_owned());
        let s = Self { root, server };
        s.nvidia();
        s.pypi();
        s.pytorch();
        s.drivers();
        s
    }

    /// NVIDIA's driver READMEs by release tag: the real ones of fixtures/sources/nvidia-drivers.
    fn drivers(&self) {
        for tag in ["570.153.02", "570.158.01", "595.45.04"] {
            self.write(
                &format!("drivers/{tag}/README.md"),
                fixture(&format!("nvidia-drivers/{tag}/README.md")),
            );
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.path(rel);
        fs_err::create_dir_all(p.parent().unwrap()).unwrap();
        fs_err::write(p, bytes).unwrap();
    }

    /// NVIDIA: the real redistrib_13.4.1.json and redistrib_9.27.0.json, listed in the shape of
    /// NVIDIA's directory pages (`<a href='redistrib_X.json'>`, see the fixtures README).
    fn nvidia(&self) {
        let listing = |files: &[&str]| {
            let mut s = String::from("<html><body><ul>\n");
            for f in files {
                s += &format!(
                    "<li><a href='{f}'>{f}</a> <span class='date'>2026-09-09</span></li>\n"
                );
            }
            s + "</ul></body></html>\n"
        };
        self.write(
            "nvidia/compute/cuda/redist/index.html",
            listing(&["redistrib_13.4.1.json"]),
        );
        self.write(
            "nvidia/compute/cuda/redist/redistrib_13.4.1.json",
            fixture("nvidia/cuda/redistrib_13.4.1.json"),
        );
        self.write(
            "nvidia/compute/cudnn/redist/index.html",
            listing(&["redistrib_9.27.0.json"]),
        );
        self.write(
            "nvidia/compute/cudnn/redist/redistrib_9.27.0.json",
            fixture("nvidia/cudnn/redistrib_9.27.0.json"),
        );
    }

    /// PyPI: the real PEP 691 pages, their file URLs pointing at this server (as a mirror does),
    /// each Linux x86_64 wheel a small zip with the project's real METADATA and, for cuDNN, the
    /// real .nv_fatbin section of nvidia-cufile's libcufile.so.0 as its libcudnn_cnn.so.9.
    fn pypi(&self) {
        let base = self.server.url();
        for project in [
            "torch",
            "tensorflow",
            "nvidia-cudnn-cu13",
            "cuda-toolkit",
            "jax",
            "jaxlib",
            "jax-cuda13-plugin",
            "jax-cuda12-plugin",
            "uv",
        ] {
            let text = String::from_utf8(fixture(&format!("pypi/{project}.json"))).unwrap();
            let text = text.replace(
                "https://files.pythonhosted.org/packages/",
                &format!("{base}/files/"),
            );
            let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
            for f in doc["files"].as_array().unwrap() {
                let name = f["filename"].as_str().unwrap();
                let rel = f["url"]
                    .as_str()
                    .unwrap()
                    .strip_prefix(&format!("{base}/"))
                    .unwrap();
                if project == "uv" {
                    // uv's pinned wheels of the newest release (Linux's statically linked
                    // ones, Windows' win_amd64), holding its real RECORD (the one member
                    // `manifests update` reads).
                    for (tag, record) in [
                        ("musllinux_1_1_x86_64", "x86_64"),
                        ("musllinux_1_1_aarch64", "aarch64"),
                        ("win_amd64", "win_amd64"),
                    ] {
                        if name.starts_with("uv-0.13.9-") && name.ends_with(&format!("{tag}.whl")) {
                            let record = fixture(&format!("pypi/uv-0.13.9-{record}.RECORD"));
                            wheel(&self.path(rel), &[("uv-0.13.9.dist-info/RECORD", record)]);
                        }
                    }
                    continue;
                }
                // torch's and cuDNN's aarch64 wheels too: `manifests update` reads the
                // linux-sbsa side.
                let arm =
                    matches!(project, "torch" | "nvidia-cudnn-cu13") && name.contains("aarch64");
                if !name.ends_with(".whl")
                    || !(name.contains("x86_64") || name.contains("-any") || arm)
                {
                    continue;
                }
                let version = name.split('-').nth(1).unwrap();
                let dist = name.split('-').next().unwrap();
                let metadata = match project {
                    "torch" if arm => fixture("pypi/torch-2.15.0-aarch64.METADATA"),
                    "torch" => fixture("pypi/torch-2.15.0.METADATA"),
                    "tensorflow" => fixture("pypi/tensorflow-2.21.0.METADATA"),
                    "cuda-toolkit" => fixture("pypi/cuda_toolkit-13.2.2.METADATA"),
                    // Only the release the catalog lacks is read: 0.12.0.1's own files.
                    "jax" => fixture("pypi/jax-0.12.0.1.METADATA"),
                    "jax-cuda13-plugin" => fixture("pypi/jax_cuda13_plugin-0.12.0.1.METADATA"),
                    "jax-cuda12-plugin" => fixture("pypi/jax_cuda12_plugin-0.12.0.1.METADATA"),
                    "jaxlib" => b"Metadata-Version: 2.1\nName: jaxlib\n".to_vec(),
                    _ => fixture("pypi/nvidia_cudnn_cu13-9.28.1.4.METADATA"),
                };
                let mut members = vec![(format!("{dist}-{version}.dist-info/METADATA"), metadata)];
                if arm && project == "nvidia-cudnn-cu13" {
                    // The targets measured in the real 9.28.1.4 aarch64 wheel's libcudnn_cnn.so.9
                    // (sm_110 is Thor's), in the real section's header layout.
                    let mut sections: Vec<(u16, u32)> = [75, 80, 86, 90, 100, 110, 120]
                        .iter()
                        .map(|a| (2, *a))
                        .collect();
                    sections.push((1, 120));
                    members.push((
                        "nvidia/cudnn/lib/libcudnn_cnn.so.9".into(),
                        elf(&fatbin_section(&sections)),
                    ));
                } else if arm {
                    // The targets measured in the real 2.15.0 aarch64 wheel's linalg library.
                    let sections: Vec<(u16, u32)> =
                        [80, 90, 100, 110, 120].iter().map(|a| (2, *a)).collect();
                    members.push((
                        "torch/lib/libtorch_cuda_linalg.so".into(),
                        elf(&fatbin_section(&sections)),
                    ));
                }
                if project == "nvidia-cudnn-cu13" && !arm {
                    members.push((
                        "nvidia/cudnn/lib/libcudnn_cnn.so.9".into(),
                        elf(&fixture("fatbin/libcufile.so.0.nv_fatbin")),
                    ));
                }
                let members: Vec<(&str, Vec<u8>)> = members
                    .iter()
                    .map(|(n, b)| (n.as_str(), b.clone()))
                    .collect();
                wheel(&self.path(rel), &members);
            }
            self.write(&format!("pypi/{project}/index.json"), text);
        }
        // The companions' pages, for their Requires-Python (no wheel of theirs is read: no torch
        // release here is new).
        for project in ["torchvision", "torchaudio"] {
            let text = String::from_utf8(fixture(&format!("pypi/{project}.json"))).unwrap();
            let text = text.replace(
                "https://files.pythonhosted.org/packages/",
                &format!("{base}/files/"),
            );
            self.write(&format!("pypi/{project}/index.json"), text);
        }
    }

    /// PyTorch's index: a PEP 503 page for cu130 with a torch 2.15.0+cu130 wheel (2.15.0's real
    /// METADATA; a libtorch_cuda_linalg.so whose fatbin lists sm_75 … sm_120).
    fn pytorch(&self) {
        let name = "torch-2.15.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl";
        let sections: Vec<(u16, u32)> =
            [75, 80, 86, 90, 100, 120].iter().map(|a| (2, *a)).collect();
        wheel(
            &self.path(&format!("whl/cu130/torch/{name}")),
            &[
                (
                    "torch-2.15.0.dist-info/METADATA",
                    fixture("pypi/torch-2.15.0.METADATA"),
                ),
                (
                    "torch/lib/libtorch_cuda_linalg.so",
                    elf(&fatbin_section(&sections)),
                ),
            ],
        );
        self.write(
            "whl/cu130/torch/index.html",
            format!(
                "<!DOCTYPE html><html><body><h1>Links for torch</h1>\n<a href=\"/whl/cu130/torch/{}\">{name}</a><br/>\n</body></html>\n",
                name.replace('+', "%2B")
            ),
        );
    }

    fn args(&self) -> Vec<String> {
        let u = self.server.url();
        vec![
            "--mirror".into(),
            format!("{u}/nvidia"),
            "--index-url".into(),
            format!("{u}/pypi"),
            "--torch-index".into(),
            format!("{u}/whl"),
            "--driver-tables".into(),
            format!("{u}/drivers"),
            "--allow-http".into(),
        ]
    }
}

/// The embedded catalog without what the sources are about to bring: the cuDNN builds for
/// CUDA 13, the CUDA 13.4.1 row, torch 2.15.0's cu130 variant (absent anyway).
fn old_catalog() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in cudaup::catalog::EMBEDDED {
        let text = match *name {
            "cudnn.toml" => drop_rows(text, |row| row.contains("cuda_variant = \"13\"")),
            "cuda.toml" => drop_rows(text, |row| row.contains("version = \"13.4.1\"")),
            // The newest supported-GPU table not read yet (CUDA 13.2.0's driver names it).
            "driver_support.toml" => text.replacen(
                "[[release]]\nversion = \"595.45.04\"\nsource = \"https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/README.md\"\n\n",
                "",
                1,
            ),
            _ => (*text).to_owned(),
        };
        fs_err::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn drop_rows(text: &str, drop: impl Fn(&str) -> bool) -> String {
    let mut parts = text.split("\n[[release]]\n");
    let mut out = parts.next().unwrap().to_owned();
    for row in parts {
        if !drop(row) {
            out.push_str("\n[[release]]\n");
            out.push_str(row);
        }
    }
    out
}

fn run(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut all = vec!["--home".to_owned(), home.display().to_string()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let mut e = vec![
        ("CUDAUP_TEST_NO_RETRY_DELAY", "1"),
        ("CUDAUP_HTTP_RETRIES", "0"),
    ];
    e.extend_from_slice(env);
    cudaup_env(&refs, home, &e)
}

fn update(
    home: &Path,
    base: &Path,
    sources: &Sources,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Run {
    let base = base.display().to_string();
    let mut args: Vec<String> = vec![
        "--manifests".into(),
        base,
        "manifests".into(),
        "update".into(),
    ];
    args.extend(sources.args());
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run(home, &refs, env)
}

/// The plan `j` was made from the refreshed catalog in the home.
fn assert_refreshed(j: &serde_json::Value) {
    assert!(
        j["catalog"]["origin"]
            .as_str()
            .unwrap()
            .starts_with("refreshed"),
        "{}",
        j["catalog"]
    );
}

fn component<'j>(plan: &'j serde_json::Value, name: &str) -> &'j serde_json::Value {
    plan["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {plan}"))
}

#[test]
fn a_new_release_at_the_sources_appears_in_plan_after_update() {
    let sources = Sources::new();
    let base = old_catalog();
    let home = tempfile::tempdir().unwrap();
    let b = base.path().display().to_string();

    // Before: no cuDNN for CUDA 13 in the catalog, so the H200 stays on a CUDA 12 wheel.
    let before = run(
        home.path(),
        &["--manifests", &b, "plan", "--system", H200, "-v"],
        &[],
    );
    assert_eq!(before.code, 0, "{}", before.stderr);
    assert!(
        before
            .stdout
            .contains("no cuDNN build in the catalog for CUDA 13.2"),
        "{}",
        before.stdout
    );

    let up = update(home.path(), base.path(), &sources, &[], &[]);
    assert_eq!(up.code, 0, "{}\n{}", up.stdout, up.stderr);
    assert!(up.stdout.contains("+ cuDNN 9.28.1 cuda13"), "{}", up.stdout);
    assert!(
        up.stdout.contains(
            "+ cuDNN 9.28.1 cuda13 linux-sbsa (sm_75 sm_80 sm_86 sm_90 sm_100 sm_110 sm_120"
        ),
        "the aarch64 wheel's own GPU list: {}",
        up.stdout
    );
    assert!(up.stdout.contains("+ CUDA 13.4.1"), "{}", up.stdout);
    assert!(up.stdout.contains("+ torch 2.15.0 cu130"), "{}", up.stdout);
    assert!(up.stdout.contains("Fetched "), "{}", up.stdout);
    // Metadata and single members only: far less than one real wheel.
    let bytes: u64 = up
        .stdout
        .split("Fetched ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    assert!(bytes > 0 && bytes < 2_000_000, "{bytes}");
    // No whole-wheel request: every wheel request carried a Range.
    for r in sources.server.requests() {
        if r.path.ends_with(".whl") {
            assert!(r.range.is_some(), "{r:?}");
        }
    }

    // After: the refreshed catalog is in effect (no --manifests), and the plan uses what arrived.
    let after = run(home.path(), &["plan", "--system", H200, "--json"], &[]);
    assert_eq!(after.code, 0, "{}", after.stderr);
    let j = after.json();
    assert_eq!(component(&j, "torch")["version"], "2.15.0");
    assert_eq!(component(&j, "torch")["variant"], "cu132");
    assert_eq!(component(&j, "cudnn")["version"], "9.28.1");
    assert_refreshed(&j);
    // The new PyTorch variant, and the new CUDA release.
    let cu130 = run(
        home.path(),
        &["plan", "--system", H200, "--cuda", "13.0", "--json"],
        &[],
    );
    assert_eq!(
        component(&cu130.json(), "torch")["variant"],
        "cu130",
        "{}",
        cu130.stdout
    );
    let cuda = run(
        home.path(),
        &[
            "plan",
            "--system",
            H200,
            "--profile",
            "cuda-dev",
            "--cuda",
            "13.4.1",
            "--json",
        ],
        &[],
    );
    assert_eq!(
        component(&cuda.json(), "cuda")["version"],
        "13.4.1",
        "{}",
        cuda.stdout
    );

    // NVIDIA's table of 595.45.04 was read: the file is the committed one again (GB300's
    // 10de:31c2 is listed from 580.82.07 through 595.45.04).
    assert_eq!(
        fs_err::read_to_string(home.path().join("manifests/driver_support.toml")).unwrap(),
        fs_err::read_to_string(format!(
            "{}/manifests/driver_support.toml",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    );
    // The derived rows say where and when they came from.
    let cudnn = fs_err::read_to_string(home.path().join("manifests/cudnn.toml")).unwrap();
    assert!(
        cudnn.contains(&format!("{}/files/", sources.server.url())),
        "row cites the wheel's URL"
    );
    assert!(cudnn.contains("derived = \"20"), "row carries its date");
    // 9.27.0's redist platforms reached no row (no 9.27 wheel at the fake PyPI): said so.
    let status = run(home.path(), &["manifests", "status", "--json"], &[]);
    let s = status.json();
    assert!(
        s["in_effect"].as_str().unwrap().starts_with("refreshed"),
        "{s}"
    );
    for p in s["parts"].as_array().unwrap() {
        assert_eq!(p["status"], "ok", "{p}");
        assert!(
            p["url"].as_str().unwrap().starts_with("http://127.0.0.1"),
            "{p}"
        );
    }

    // A refreshed catalog edited afterwards is not used.
    fs_err::write(
        home.path().join("manifests/cudnn.toml"),
        cudnn.replace("9.28.1", "9.99.9"),
    )
    .unwrap();
    let tampered = run(home.path(), &["plan", "--system", H200, "--json"], &[]);
    let t = tampered.json();
    assert_eq!(t["catalog"]["origin"], "embedded");
    assert!(
        t["warnings"]
            .to_string()
            .contains("changed after `manifests check` passed"),
        "{}",
        t["warnings"]
    );
}

fn refreshed_digest(home: &Path) -> Option<String> {
    fs_err::read_to_string(home.join("manifests/catalog.toml")).ok()
}

/// `manifests update` run twice over the same loopback sources writes the same bytes, with a
/// part down (its status once carried the retries' timing) and the `[files]` table restamped
/// (each run used to add a blank line before it). Issue 34, finding 7.
#[test]
fn update_twice_writes_the_same_bytes() {
    let sources = Sources::new();
    let home = tempfile::tempdir().unwrap();
    // PyTorch's index down: nothing listens on port 9.
    let mut args = vec!["manifests".to_owned(), "update".to_owned()];
    let url = sources.server.url();
    args.extend(sources.args().into_iter().map(|a| {
        if a == format!("{url}/whl") {
            "http://127.0.0.1:9/whl".to_owned()
        } else {
            a
        }
    }));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let snapshot = |home: &Path| -> Vec<(String, String)> {
        cudaup::catalog::EMBEDDED
            .iter()
            .map(|(name, _)| {
                (
                    (*name).to_owned(),
                    fs_err::read_to_string(home.join("manifests").join(name)).unwrap(),
                )
            })
            .collect()
    };
    let first = run(home.path(), &refs, &[]);
    assert_eq!(first.code, 3, "{}\n{}", first.stdout, first.stderr);
    let once = snapshot(home.path());
    let meta = &once.iter().find(|(n, _)| n == "catalog.toml").unwrap().1;
    assert!(
        meta.contains("pytorch-index") && !meta.contains("attempts in"),
        "{meta}"
    );
    assert!(!meta.contains("\n\n\n"), "{meta}");
    let second = run(home.path(), &refs, &[]);
    assert_eq!(second.code, 3, "{}\n{}", second.stdout, second.stderr);
    assert!(
        second.stdout.contains("No row changed"),
        "{}",
        second.stdout
    );
    for ((name, a), (_, b)) in once.iter().zip(snapshot(home.path())) {
        assert!(*a == b, "{name} differs after the second run");
    }
}

#[test]
fn a_source_that_is_down_keeps_its_rows_and_exits_3() {
    let sources = Sources::new();
    let base = old_catalog();
    let home = tempfile::tempdir().unwrap();
    sources
        .server
        .fault("/nvidia/compute/cuda/redist/", Fault::Status(503), 100);
    let up = update(home.path(), base.path(), &sources, &[], &[]);
    assert_eq!(up.code, 3, "{}\n{}", up.stdout, up.stderr);
    assert!(
        up.stdout.contains("nvidia-redist  unreachable"),
        "{}",
        up.stdout
    );
    assert!(up.stdout.contains("kept as they were"), "{}", up.stdout);
    // The parts that answered were applied; NVIDIA's rows are as they were.
    let cuda = fs_err::read_to_string(home.path().join("manifests/cuda.toml")).unwrap();
    assert!(!cuda.contains("version = \"13.4.1\""));
    let cudnn = fs_err::read_to_string(home.path().join("manifests/cudnn.toml")).unwrap();
    assert!(cudnn.contains("version = \"9.28.1\""));
    let status = run(home.path(), &["manifests", "status"], &[]);
    assert!(status.stdout.contains("nvidia-redist"), "{}", status.stdout);

    // Every source down (nothing listens on port 9): nothing is written, the catalog in effect
    // stays as it was.
    let before = refreshed_digest(home.path());
    let args: Vec<String> = sources
        .args()
        .into_iter()
        .map(|a| a.replace(&sources.server.url(), "http://127.0.0.1:9"))
        .collect();
    let b = base.path().display().to_string();
    let mut all = vec!["--manifests", b.as_str(), "manifests", "update"];
    all.extend(args.iter().map(String::as_str));
    let down = run(home.path(), &all, &[]);
    assert_eq!(down.code, 3, "{}\n{}", down.stdout, down.stderr);
    assert!(
        down.stderr.contains("no source could be read"),
        "{}",
        down.stderr
    );
    assert_eq!(refreshed_digest(home.path()), before);
}

#[test]
fn a_slow_source_times_out_with_exit_3() {
    let sources = Sources::new();
    let base = old_catalog();
    let home = tempfile::tempdir().unwrap();
    sources.server.fault(
        "/pypi/torch/",
        Fault::Stall {
            after: 10,
            ms: 5_000,
        },
        10,
    );
    let up = update(
        home.path(),
        base.path(),
        &sources,
        &["--skip", "nvidia-redist,pytorch-index,driver-tables"],
        &[("CUDAUP_HTTP_TIMEOUT", "1")],
    );
    assert_eq!(up.code, 3, "{}\n{}", up.stdout, up.stderr);
    assert!(
        up.stderr.contains("no source could be read"),
        "{}",
        up.stderr
    );
    assert!(
        refreshed_digest(home.path()).is_none(),
        "nothing was written"
    );
}

#[test]
fn garbage_from_a_source_changes_nothing_and_exits_4() {
    let sources = Sources::new();
    let base = old_catalog();
    let home = tempfile::tempdir().unwrap();
    let up = update(home.path(), base.path(), &sources, &[], &[]);
    assert_eq!(up.code, 0, "{}\n{}", up.stdout, up.stderr);
    let good = refreshed_digest(home.path()).unwrap();
    // A mirror answering an error page where PEP 691 JSON belongs.
    sources.write(
        "pypi/torch/index.json",
        "{\"files\": \"503 Service Unavailable\"}",
    );
    let bad = update(home.path(), base.path(), &sources, &[], &[]);
    assert_eq!(bad.code, 4, "{}\n{}", bad.stdout, bad.stderr);
    assert!(
        bad.stderr.contains("not a PEP 691 project page"),
        "{}",
        bad.stderr
    );
    assert_eq!(refreshed_digest(home.path()).unwrap(), good);
    // A redistrib JSON that is not the release its name says.
    sources.write("pypi/torch/index.json", fixture("pypi/torch.json"));
    let doc = String::from_utf8(fixture("nvidia/cuda/redistrib_13.4.1.json")).unwrap();
    sources.write(
        "nvidia/compute/cuda/redist/redistrib_13.4.1.json",
        doc.replace(
            "\"release_label\": \"13.4.1\"",
            "\"release_label\": \"13.4.0\"",
        ),
    );
    let bad = update(home.path(), base.path(), &sources, &[], &[]);
    assert_eq!(bad.code, 4, "{}\n{}", bad.stdout, bad.stderr);
    assert_eq!(refreshed_digest(home.path()).unwrap(), good);
}

#[test]
fn a_refreshed_catalog_that_fails_check_is_never_used() {
    let sources = Sources::new();
    let base = old_catalog();
    let home = tempfile::tempdir().unwrap();
    // A release of a CUDA major the catalog has no floor for: its row cannot pass the check.
    // (The real 13.4.1 document, renamed.)
    let doc = String::from_utf8(fixture("nvidia/cuda/redistrib_13.4.1.json")).unwrap();
    sources.write(
        "nvidia/compute/cuda/redist/index.html",
        "<a href='redistrib_14.0.0.json'>redistrib_14.0.0.json</a>",
    );
    sources.write(
        "nvidia/compute/cuda/redist/redistrib_14.0.0.json",
        doc.replace(
            "\"release_label\": \"13.4.1\"",
            "\"release_label\": \"14.0.0\"",
        ),
    );
    let up = update(home.path(), base.path(), &sources, &[], &[]);
    assert_eq!(up.code, 4, "{}\n{}", up.stdout, up.stderr);
    assert!(
        up.stderr.contains("fails `manifests check`")
            && up.stderr.contains("14.0.0 has no [[major]]"),
        "{}",
        up.stderr
    );
    assert!(refreshed_digest(home.path()).is_none());
    let plan = run(home.path(), &["plan", "--system", H200, "--json"], &[]);
    assert_eq!(plan.json()["catalog"]["origin"], "embedded");
    // --write DIR checks first too: the directory is untouched.
    let out = tempfile::tempdir().unwrap();
    for (name, text) in cudaup::catalog::EMBEDDED {
        fs_err::write(out.path().join(name), text).unwrap();
    }
    let o = out.path().display().to_string();
    let up = update(home.path(), base.path(), &sources, &["--write", &o], &[]);
    assert_eq!(up.code, 4);
    for (name, text) in cudaup::catalog::EMBEDDED {
        assert_eq!(
            &fs_err::read_to_string(out.path().join(name)).unwrap(),
            text
        );
    }
}

/// PyPI's aarch64 torch wheel (2.15.0's real aarch64 METADATA: cuda-toolkit 13.2.2, cuDNN
/// 9.26.0.51) becomes a `platform = "linux-sbsa"` row under its release, read from the wheel's own
/// fatbin; the x86_64 rows are untouched, and a GB10 plan uses the new row.
#[test]
fn pypis_aarch64_torch_wheel_becomes_a_linux_sbsa_row() {
    let sources = Sources::new();
    let base = old_catalog();
    // The catalog before: 2.15.0 without its linux-sbsa row.
    let path = base.path().join("pytorch.toml");
    let text = fs_err::read_to_string(&path).unwrap();
    let start = text
        .find("[[release.variant]]\nname = \"cu132\"\nplatform = \"linux-sbsa\"")
        .unwrap();
    let end = start + text[start..].find("\n\n").unwrap() + 2;
    let before = format!("{}{}", &text[..start], &text[end..]);
    fs_err::write(&path, &before).unwrap();
    let home = tempfile::tempdir().unwrap();
    let up = update(home.path(), base.path(), &sources, &[], &[]);
    assert_eq!(up.code, 0, "{}\n{}", up.stdout, up.stderr);
    assert!(
        up.stdout
            .contains("+ torch 2.15.0 cu132 linux-sbsa (sm_80 sm_90 sm_100 sm_110 sm_120"),
        "{}",
        up.stdout
    );
    let after = fs_err::read_to_string(home.path().join("manifests/pytorch.toml")).unwrap();
    let catalog_dir = home.path().join("manifests");
    let c = cudaup::catalog::Catalog::load(&cudaup::catalog::Source::Dir(catalog_dir)).unwrap();
    let r = c
        .pytorch
        .release
        .iter()
        .find(|r| r.version.to_string() == "2.15.0")
        .unwrap();
    let arm = r.variants_for("linux-sbsa");
    assert_eq!(arm.len(), 1, "{after}");
    assert_eq!(arm[0].name, "cu132");
    assert_eq!(arm[0].pypi, Some(true));
    assert_eq!(arm[0].cudnn.as_deref(), Some("9.26.0.51"));
    assert_eq!(
        arm[0]
            .arch_list
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>(),
        ["8.0", "9.0", "10.0", "11.0", "12.0"]
    );
    // Every line that was there is still there: only the new row was added.
    for l in before.lines() {
        assert!(after.contains(l), "lost: {l}");
    }
    // A GB10 plan takes it.
    let dir = tempfile::tempdir().unwrap();
    let spark = dir.path().join("spark.json");
    fs_err::write(&spark, r#"{"os": {"family": "linux", "distro": "ubuntu", "version": "24.04", "arch": "aarch64", "wsl": false},
        "gpus": [{"index": 0, "vendor": "nvidia", "name": "NVIDIA GB10", "compute_capability": "12.1", "architecture": "Blackwell"}],
        "driver": {"version": "580.95.05"}, "pythons": [{"path": "/usr/bin/python3", "version": "3.12.3"}]}"#).unwrap();
    let plan = run(
        home.path(),
        &[
            "plan",
            "--system",
            spark.to_str().unwrap(),
            "--profile",
            "pytorch",
            "--json",
        ],
        &[],
    );
    assert_eq!(plan.code, 0, "{}\n{}", plan.stdout, plan.stderr);
    assert_eq!(component(&plan.json(), "torch")["variant"], "cu132");
}

/// Takes the `[[requires_python]]` row of `package` `version` out of a manifest's text.
fn drop_requires_python(text: &str, package: &str, version: &str) -> String {
    let row = format!("[[requires_python]]\npackage = \"{package}\"\nversion = \"{version}\"\n");
    let at = text
        .find(&row)
        .unwrap_or_else(|| panic!("no row {package} {version}"));
    match text[at..].find("\n\n") {
        Some(e) => format!("{}{}", &text[..at], &text[at + e + 2..]),
        // The file's last row.
        None => format!("{}\n", text[..at].trim_end_matches('\n')),
    }
}

/// Issue 34, finding 3/4: the Requires-Python rows come from the index. A catalog without
/// torchvision 0.29.2's and TensorFlow 2.21.0's rows, and with torchvision 0.25.0's wrong, gets
/// them from the real PEP 691 pages (the same values as the committed rows), the plan on Python
/// 3.14.1 then leaves that Python for torchvision 0.29.2, and a second update changes nothing.
#[test]
fn update_derives_requires_python_rows_from_the_index() {
    let sources = Sources::new();
    let base = old_catalog();
    let pytorch = fs_err::read_to_string(base.path().join("pytorch.toml")).unwrap();
    let pytorch = ["0.26.0", "0.29.1", "0.29.2"]
        .iter()
        .fold(pytorch, |t, v| drop_requires_python(&t, "torchvision", v))
        .replacen(
            "version = \"0.25.0\"\nrequires_python = \">=3.10\"",
            "version = \"0.25.0\"\nrequires_python = \">=3.9\"",
            1,
        );
    fs_err::write(base.path().join("pytorch.toml"), pytorch).unwrap();
    let tf = fs_err::read_to_string(base.path().join("tensorflow.toml")).unwrap();
    fs_err::write(
        base.path().join("tensorflow.toml"),
        drop_requires_python(&tf, "tensorflow", "2.21.0"),
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let py_3_14_1 = |manifests: Option<&Path>| {
        let b = manifests.map(|m| m.display().to_string());
        let mut args: Vec<&str> = Vec::new();
        if let Some(b) = &b {
            args.extend(["--manifests", b.as_str()]);
        }
        args.extend([
            "plan",
            "--system",
            H200,
            "--profile",
            "pytorch",
            "--python",
            "3.14.1",
            "--json",
        ]);
        let plan = run(home.path(), &args, &[]);
        assert_eq!(plan.code, 0, "{}\n{}", plan.stdout, plan.stderr);
        plan.json()
    };
    // Before: without the rows, a torchvision that excludes 3.14.1 is planned with it.
    let before = py_3_14_1(Some(base.path()));
    let tv = component(&before, "torchvision")["version"].clone();
    assert!(
        ["0.26.0", "0.29.1", "0.29.2"].contains(&tv.as_str().unwrap()),
        "{before}"
    );

    let up = update(home.path(), base.path(), &sources, &[], &[]);
    assert_eq!(up.code, 0, "{}\n{}", up.stdout, up.stderr);
    for line in [
        "+ Requires-Python of torchvision 0.26.0: '!=3.14.1,>=3.10'",
        "+ Requires-Python of torchvision 0.29.1: '!=3.14.1,>=3.10'",
        "+ Requires-Python of torchvision 0.29.2: '>=3.10,!=3.14.1'",
        "torchvision 0.25.0: Requires-Python '>=3.10' (was '>=3.9'",
        "+ Requires-Python of tensorflow 2.21.0: '>=3.10'",
    ] {
        assert!(up.stdout.contains(line), "{line}: {}", up.stdout);
    }
    // The rows are the committed ones again (values and order; the source names the mirror).
    let rows = |text: &str| -> Vec<(String, String, String)> {
        let t: toml::Table = toml::from_str(text).unwrap();
        t.get("requires_python")
            .and_then(|r| r.as_array())
            .unwrap()
            .iter()
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap().to_owned();
                // The clauses as a set: the page may write them in another order.
                let mut clauses: Vec<String> = s("requires_python")
                    .split(',')
                    .map(|c| c.trim().to_owned())
                    .collect();
                clauses.sort();
                (s("package"), s("version"), clauses.join(","))
            })
            .collect()
    };
    for file in ["pytorch.toml", "tensorflow.toml"] {
        let refreshed = fs_err::read_to_string(home.path().join("manifests").join(file)).unwrap();
        let committed = cudaup::catalog::EMBEDDED
            .iter()
            .find(|(n, _)| *n == file)
            .unwrap()
            .1;
        assert_eq!(rows(&refreshed), rows(committed), "{file}");
        if file == "tensorflow.toml" {
            assert!(
                refreshed.contains(&format!(
                    "{}/pypi/tensorflow/ (PEP 691 page, read ",
                    sources.server.url()
                )),
                "the row cites the page it came from"
            );
        }
    }
    // After: the refreshed catalog is in effect, and 3.14.1 gets the newest torchvision that
    // admits it.
    let j = py_3_14_1(None);
    assert_refreshed(&j);
    assert_eq!(component(&j, "torchvision")["version"], "0.25.0", "{j}");

    let snapshot = || -> Vec<String> {
        ["pytorch.toml", "tensorflow.toml", "catalog.toml"]
            .iter()
            .map(|f| fs_err::read_to_string(home.path().join("manifests").join(f)).unwrap())
            .collect()
    };
    let once = snapshot();
    // The second run reads the refreshed catalog in effect.
    let mut args = vec!["manifests".to_owned(), "update".to_owned()];
    args.extend(sources.args());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let again = run(home.path(), &refs, &[]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert!(
        !again.stdout.contains("Requires-Python"),
        "{}",
        again.stdout
    );
    assert_eq!(once, snapshot(), "a second update writes the same bytes");
}

#[test]
fn a_jax_release_on_pypi_becomes_a_row_with_its_plugins() {
    let sources = Sources::new();
    let base = old_catalog();
    // The catalog before: no JAX 0.12.0.1 (its row and its plugin rows).
    let path = base.path().join("jax.toml");
    let text = fs_err::read_to_string(&path).unwrap();
    let before = drop_rows(&text, |row| row.starts_with("version = \"0.12.0.1\""));
    assert!(!before.contains("0.12.0.1\""), "{before}");
    fs_err::write(&path, &before).unwrap();
    let home = tempfile::tempdir().unwrap();
    let up = update(home.path(), base.path(), &sources, &[], &[]);
    assert_eq!(up.code, 0, "{}\n{}", up.stdout, up.stderr);
    assert!(
        up.stdout.contains(
            "jax.toml: + JAX 0.12.0.1 (jax[cuda13] -> 13-plugin 0.12.0.1, jax[cuda12] -> 12-plugin 0.12.0.1"
        ),
        "{}",
        up.stdout
    );
    let dir = home.path().join("manifests");
    let after = fs_err::read_to_string(dir.join("jax.toml")).unwrap();
    for l in before.lines() {
        assert!(after.contains(l), "lost: {l}");
    }
    // What the update read is what the shipped row says (read by hand from PyPI).
    let new = cudaup::catalog::Catalog::load(&cudaup::catalog::Source::Dir(dir)).unwrap();
    let shipped = cudaup::catalog::Catalog::embedded();
    let row = |c: &cudaup::catalog::Catalog| {
        let r = c
            .jax
            .release
            .iter()
            .find(|r| r.version.to_string() == "0.12.0.1")
            .unwrap()
            .clone();
        (
            r.python_min.to_string(),
            r.python_max.to_string(),
            r.plugin
                .iter()
                .map(|p| {
                    (
                        p.cuda,
                        p.version.to_string(),
                        p.pjrt.to_string(),
                        p.with_cuda_requires.clone(),
                    )
                })
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(row(&new), row(&shipped), "{after}");
    assert_eq!(
        new.jax.release[0].version.to_string(),
        "0.12.0.1",
        "newest first"
    );
    // jax-cuda13-plugin 0.12.1 (no jax asks for it) is no row.
    assert!(!after.contains("\"0.12.1\""), "{after}");
    // And a plan takes it.
    let plan = run(
        home.path(),
        &["plan", "--system", H200, "--profile", "jax", "--json"],
        &[],
    );
    let j: serde_json::Value = serde_json::from_str(&plan.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", plan.stdout, plan.stderr));
    assert_refreshed(&j);
    assert_eq!(component(&j, "jax")["version"], "0.12.0.1", "{j}");
}

/// uv (issue 38): a uv release newer than the catalog's pin becomes the pin, each wheel's name,
/// size and sha256 from the index's page and the binary's hash and size from the wheel's real
/// RECORD; what the update writes is what the shipped uv.toml says (read by hand from PyPI), and
/// a second update keeps it.
#[test]
fn a_newer_uv_on_pypi_becomes_the_pin() {
    let sources = Sources::new();
    let base = old_catalog();
    let path = base.path().join("uv.toml");
    let shipped_text = fs_err::read_to_string(&path).unwrap();
    fs_err::write(&path, shipped_text.replace("0.13.9", "0.13.8")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let up = update(home.path(), base.path(), &sources, &[], &[]);
    assert_eq!(up.code, 0, "{}\n{}", up.stdout, up.stderr);
    assert!(
        up.stdout.contains("uv.toml: uv 0.13.8 -> 0.13.9"),
        "{}",
        up.stdout
    );
    let dir = home.path().join("manifests");
    let new = cudaup::catalog::Catalog::load(&cudaup::catalog::Source::Dir(dir.clone())).unwrap();
    let shipped = cudaup::catalog::Catalog::embedded();
    assert_eq!(new.uv.version, "0.13.9");
    // Every value but where it was read (the loopback index here, PyPI there).
    let values = |c: &cudaup::catalog::Catalog| {
        c.uv.wheel
            .iter()
            .map(|w| {
                let mut w = w.clone();
                w.source.clear();
                w
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(values(&new), values(&shipped), "{}", new.uv.source);
    assert!(new.uv.source.ends_with("/pypi/uv/"), "{}", new.uv.source);
    // Updated again over the refreshed catalog: nothing about uv changes.
    let again = tempfile::tempdir().unwrap();
    let up = update(again.path(), &dir, &sources, &[], &[]);
    assert_eq!(up.code, 0, "{}\n{}", up.stdout, up.stderr);
    assert!(!up.stdout.contains("uv.toml:"), "{}", up.stdout);
    assert_eq!(
        fs_err::read_to_string(again.path().join("manifests/uv.toml")).unwrap(),
        fs_err::read_to_string(dir.join("uv.toml")).unwrap()
    );
}
