//! The catalog's facts against their primary sources: each CUDA series' targets against NVIDIA's
//! own compilers (the real nvcc wheels from PyPI, run here), and `manifests check` catching a fact
//! that is removed.
//!
//! Tests that need PyPI say so in their name (`needs_network_…`); offline they are skipped and
//! the skip is counted in `$CARGO_TARGET_TMPDIR/skipped-tests.txt` (`.ci/run` prints the list).

use std::collections::BTreeSet;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use cudaup::catalog::{Catalog, Source, EMBEDDED};

use crate::common::*;

/// Records a skipped test where `.ci/run` counts and prints it, and says so on stderr.
fn skipped(test: &str, why: &str) {
    #[allow(clippy::print_stderr)] // a skip must be seen, and counted
    {
        eprintln!("SKIPPED {test}: {why}");
    }
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped-tests.txt");
    let mut old = fs_err::read_to_string(&file).unwrap_or_default();
    old.push_str(&format!("{test}: {why}\n"));
    fs_err::write(file, old).unwrap();
}

/// The compilers the test reads: one build of each series whose facts were wrong or new.
const NVCC: &[&str] = &[
    "nvidia-cuda-nvcc-cu12==12.8.93",
    "nvidia-cuda-nvcc-cu12==12.9.86",
    "nvidia-cuda-nvcc==13.0.88",
    "nvidia-cuda-nvcc==13.5.37",
];

/// The real wheels, fetched once into the test target directory; `None` when PyPI cannot be
/// reached.
fn nvcc_wheels() -> Option<PathBuf> {
    std::panic::catch_unwind(|| pypi_wheels("nvcc-wheels", NVCC, &[None])).ok()
}

/// The embedded catalog with the compiler-read facts of `series` taken out (their curated
/// ranges of before, which claimed sm_103/sm_107/sm_110 for 12.8 and 12.9) and no 13.5 row.
fn catalog_before(dir: &Path) {
    for (name, text) in EMBEDDED {
        let text = if *name == "cuda.toml" {
            let mut out = Vec::new();
            let mut series: Option<String> = None;
            let mut skip_row = false;
            for l in text.lines() {
                if l == "[[series]]" {
                    series = Some(String::new());
                    skip_row = false;
                } else if l.trim().is_empty() || l.starts_with('[') {
                    series = None;
                }
                if let Some(s) = series.as_mut() {
                    if let Some(v) = l.strip_prefix("version = ") {
                        *s = v.trim_matches('"').to_owned();
                        skip_row = s == "13.5";
                        if skip_row {
                            out.pop(); // the header
                        }
                    }
                    let old = match s.as_str() {
                        "12.8" => Some(("5.0", "12.0")),
                        "12.9" => Some(("5.0", "12.1")),
                        "13.0" => Some(("7.5", "12.1")),
                        _ => None,
                    };
                    if skip_row {
                        continue;
                    }
                    if let Some((min, max)) = old {
                        let key = l.split(" = ").next().unwrap_or("");
                        match key {
                            "sass" | "ptx" | "compiler" | "derived" => continue,
                            "sm_min" => {
                                out.push(format!("sm_min = \"{min}\""));
                                continue;
                            }
                            "sm_max" => {
                                out.push(format!("sm_max = \"{max}\""));
                                continue;
                            }
                            "source" => {
                                out.push("source = \"curated range\"".to_owned());
                                continue;
                            }
                            _ => {}
                        }
                    }
                }
                out.push(l.to_owned());
            }
            out.join("\n") + "\n"
        } else {
            (*text).to_owned()
        };
        fs_err::write(dir.join(name), text).unwrap();
    }
}

fn sm(cc: &str) -> String {
    cc.replace('.', "")
}

/// The base `sm_NN` names in a compiler's own listing (`sm_100a`/`sm_100f` are feature sets of
/// sm_100, not targets of their own).
fn base_targets(listing: &str) -> BTreeSet<String> {
    listing
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter_map(|w| w.strip_prefix("sm_"))
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        .map(str::to_owned)
        .collect()
}

/// Runs the wheel's own compiler: `nvcc --list-gpu-code` where the wheel has nvcc (13.x), else
/// the `--gpu-name` values `ptxas --help` allows (12.x wheels ship ptxas without nvcc).
fn run_compiler(wheel: &Path, work: &Path) -> BTreeSet<String> {
    let mut z = zip::ZipArchive::new(fs_err::File::open(wheel).unwrap()).unwrap();
    let names: Vec<String> = z.file_names().map(|n| n.unwrap().into_owned()).collect();
    let mut extract = |suffix: &str| -> Option<PathBuf> {
        let name = names.iter().find(|n| n.ends_with(suffix))?;
        let mut bytes = Vec::new();
        z.by_name(name).unwrap().read_to_end(&mut bytes).unwrap();
        let to = work.join(suffix.trim_start_matches('/').replace('/', "_"));
        fs_err::write(&to, bytes).unwrap();
        fs_err::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).unwrap();
        Some(to)
    };
    let (exe, args): (PathBuf, &[&str]) = match extract("/bin/nvcc") {
        Some(nvcc) => (nvcc, &["--list-gpu-code"]),
        None => (
            extract("/bin/ptxas").expect("every nvcc wheel has ptxas"),
            &["--help"],
        ),
    };
    let out = Command::new(&exe).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let listing = if args == ["--help"] {
        let from = text.find("--gpu-name").unwrap();
        let allowed = from + text[from..].find("Allowed values").unwrap();
        let end = allowed + text[allowed..].find("'.").unwrap();
        text[allowed..end].to_owned()
    } else {
        text.into_owned()
    };
    base_targets(&listing)
}

#[test]
fn needs_network_series_targets_are_what_the_real_compilers_list() {
    let test = "catalog_facts::needs_network_series_targets_are_what_the_real_compilers_list";
    let Some(wheels) = nvcc_wheels() else {
        return skipped(
            test,
            "PyPI is not reachable (pip download of the nvcc wheels failed)",
        );
    };
    let index = wheel_index(&wheels);
    let before = tempfile::tempdir().unwrap();
    catalog_before(before.path());
    // The old facts are refused: no compiler confirms 12.8, 12.9 and 13.0.
    let home = tempfile::tempdir().unwrap();
    let check = cudaup(
        &["manifests", "check", before.path().to_str().unwrap()],
        home.path(),
    );
    assert_ne!(check.code, 0, "{}", check.stdout);
    for s in ["12.8", "12.9", "13.0"] {
        assert!(
            check
                .stdout
                .contains(&format!("series {s}: no compiler confirms its targets")),
            "{}\n{}",
            check.stdout,
            check.stderr
        );
    }
    // `manifests update` reads each series' compiler from the index (a directory here: the
    // code path of any mirror) and writes the compilers' lists.
    let simple = index.path().join("simple");
    let update = |base: &Path, out: &Path| {
        cudaup(
            &[
                "--manifests",
                base.to_str().unwrap(),
                "manifests",
                "update",
                "--only",
                "compilers",
                "--index-url",
                simple.to_str().unwrap(),
                "--write",
                out.to_str().unwrap(),
            ],
            home.path(),
        )
    };
    let after = tempfile::tempdir().unwrap();
    let up = update(before.path(), after.path());
    assert_eq!(up.code, 0, "{}\n{}", up.stdout, up.stderr);
    assert!(
        up.stdout
            .contains("+ series 13.5 (nvidia-cuda-nvcc 13.5.37"),
        "{}",
        up.stdout
    );
    assert!(
        up.stdout
            .contains("series 12.8: targets from nvidia-cuda-nvcc-cu12 12.8.93"),
        "{}",
        up.stdout
    );
    assert!(
        up.stdout.contains("no longer claims sm_103 sm_107 sm_110"),
        "{}",
        up.stdout
    );
    let c = Catalog::load(&Source::Dir(after.path().to_path_buf())).unwrap();
    let row = |s: &str| {
        c.cuda
            .series
            .iter()
            .find(|r| r.version.to_string() == s)
            .unwrap_or_else(|| panic!("no series {s}"))
    };
    let builds =
        |s: &str, cc: &str| row(s).builds_for(&cudaup::model::version::Version::parse(cc).unwrap());
    // The issue's facts: 12.8 has no sm_103/sm_107/sm_110; 12.9 no sm_107/sm_110; sm_107 from 13.4.
    for cc in ["10.3", "10.7", "11.0"] {
        assert!(!builds("12.8", cc), "12.8 claims {cc}");
    }
    assert!(builds("12.9", "10.3") && builds("12.9", "12.1"));
    assert!(!builds("12.9", "10.7") && !builds("12.9", "11.0"));
    assert!(builds("13.0", "11.0") && !builds("13.0", "10.7") && !builds("13.0", "7.0"));
    assert!(builds("13.5", "10.7"));
    // The row of every series is exactly what its compiler, run here, lists.
    let work = tempfile::tempdir().unwrap();
    for (series, file) in [
        ("12.8", "nvidia_cuda_nvcc_cu12-12.8.93"),
        ("12.9", "nvidia_cuda_nvcc_cu12-12.9.86"),
        ("13.0", "nvidia_cuda_nvcc-13.0.88"),
        ("13.5", "nvidia_cuda_nvcc-13.5.37"),
    ] {
        let wheel = fs_err::read_dir(&wheels)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(file))
            .unwrap();
        let listed = run_compiler(&wheel, work.path());
        let row = row(series);
        let catalog: BTreeSet<String> = row.sass.iter().map(|v| sm(&v.to_string())).collect();
        assert_eq!(
            catalog, listed,
            "series {series}: the catalog against {file}"
        );
        assert!(row.source.contains(file), "{}", row.source);
        assert!(row
            .compiler
            .as_deref()
            .unwrap()
            .ends_with(&file[file.rfind('-').unwrap() + 1..]));
    }
    // The refreshed catalog passes check, and a second run changes nothing.
    let check = cudaup(
        &["manifests", "check", after.path().to_str().unwrap()],
        home.path(),
    );
    assert_eq!(check.code, 0, "{}", check.stdout);
    let again = tempfile::tempdir().unwrap();
    let up = update(after.path(), again.path());
    assert_eq!(up.code, 0, "{}\n{}", up.stdout, up.stderr);
    assert!(up.stdout.contains("No row changed"), "{}", up.stdout);
    assert_eq!(
        fs_err::read_to_string(after.path().join("cuda.toml")).unwrap(),
        fs_err::read_to_string(again.path().join("cuda.toml")).unwrap()
    );
}

// ------------------------------------------------------------------------------------------
// The plan's promise: a toolkit it installs compiles for every GPU it serves.
// ------------------------------------------------------------------------------------------

mod plans {
    use cudaup::catalog::{Catalog, Date};
    use cudaup::model::plan::{Action, Plan, Status};
    use cudaup::model::request::{DriverPolicy, Pins, Profile, Request};
    use cudaup::model::system::System;
    use cudaup::model::version::Version;
    use serde_json::json;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    fn pin(s: &str) -> cudaup::model::version::VersionPin {
        cudaup::model::version::VersionPin::parse(s).unwrap()
    }

    fn system(name: &str, cc: &str, arch: &str, driver: Option<&str>) -> System {
        serde_json::from_value(json!({
            "os": {"family": "linux", "distro": "ubuntu", "version": "24.04", "arch": "x86_64", "wsl": false},
            "gpus": [{"index": 0, "vendor": "nvidia", "name": name, "compute_capability": cc, "architecture": arch}],
            "driver": driver.map(|d| json!({"version": d})),
            "pythons": [{"path": "/usr/bin/python3", "version": "3.12.3"}]
        }))
        .unwrap()
    }

    fn request(profile: Profile, pins: Pins, driver: &str) -> Request {
        Request {
            profile,
            pins,
            driver: driver.parse::<DriverPolicy>().unwrap(),
            ..Request::default()
        }
    }

    fn catalog() -> &'static Catalog {
        static C: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
        C.get_or_init(Catalog::embedded)
    }

    fn plan(s: &System, r: &Request) -> Plan {
        let c = catalog();
        let p = cudaup::resolve::resolve_on(s, r, c, Date::parse("2026-12-01").unwrap());
        promise_holds(s, c, &p);
        p
    }

    fn version<'p>(p: &'p Plan, name: &str) -> &'p str {
        p.component(name)
            .and_then(|c| c.version.as_deref())
            .unwrap_or_else(|| panic!("no {name} version in {p:#?}"))
    }

    /// The promise itself: a toolkit the plan installs compiles for every GPU it serves, as the
    /// series' compiler lists it.
    fn promise_holds(s: &System, c: &Catalog, p: &Plan) {
        if p.status != Status::Ok {
            assert!(!p.reasons.is_empty(), "a refusal names why");
            return;
        }
        let Some(cuda) = p.component("cuda").filter(|x| x.action == Action::Install) else {
            return;
        };
        let series = v(&v(cuda.version.as_deref().unwrap()).prefix(2));
        let row = c.cuda.series.iter().find(|r| r.version == series).unwrap();
        for g in s.nvidia_gpus() {
            let cc = v(g.compute_capability.as_deref().unwrap());
            let left_out = p
                .warnings
                .iter()
                .any(|w| w.starts_with(&g.name) && w.contains("left out"));
            assert!(
                left_out || row.builds_for(&cc),
                "CUDA {series} is planned for {} ({cc}), which its compiler ({}) cannot build for:\n{p:#?}",
                g.name,
                row.describe()
            );
        }
    }

    const B300: (&str, &str, &str) = ("NVIDIA B300 SXM6 AC", "10.3", "Blackwell");
    const RUBIN: (&str, &str, &str) = ("NVIDIA GPU (10de:ffff)", "10.7", "Rubin");

    /// The B300 on driver 575: no 575 release lists it in NVIDIA's supported-GPU table (issue 34),
    /// so the driver is not kept. On 580.82.07, the first that does, CUDA 12.8 has no sm_103: a 12.x
    /// toolkit is 12.9, and a 12.8 pin is refused naming the missing target.
    #[test]
    fn b300_needs_580_82_07_and_a_12_x_toolkit_is_12_9() {
        let old = system(B300.0, B300.1, B300.2, Some("575.57.08"));
        let kept = plan(&old, &request(Profile::Full, Pins::default(), "keep"));
        assert_eq!(kept.status, Status::Unsupported, "{kept:#?}");
        assert!(kept.reasons[0].contains("580.82.07"), "{:#?}", kept.reasons);
        let s = system(B300.0, B300.1, B300.2, Some("580.82.07"));
        let full = plan(&s, &request(Profile::Full, Pins::default(), "keep"));
        assert_eq!(full.status, Status::Ok, "{full:#?}");
        let twelve = |cuda: &str| {
            plan(
                &s,
                &request(
                    Profile::CudaDev,
                    Pins {
                        cuda: Some(pin(cuda)),
                        ..Pins::default()
                    },
                    "keep",
                ),
            )
        };
        let dev = twelve("12");
        assert!(version(&dev, "cuda").starts_with("12.9."), "{dev:#?}");
        let pinned = twelve("12.8");
        assert_eq!(pinned.status, Status::Unsupported);
        assert!(
            pinned.reasons.iter().any(|r| r.contains("sm_103")),
            "{:#?}",
            pinned.reasons
        );
    }

    /// The issue's Rubin on driver 615: torch's own CUDA (13.2) cannot compile sm_107, so the
    /// full plan keeps torch 2.15 cu132 and takes the 13.4 toolkit, saying why; cuda-dev gets 13.4.
    #[test]
    fn rubin_on_615_gets_a_toolkit_whose_compiler_has_sm_107() {
        let s = system(RUBIN.0, RUBIN.1, RUBIN.2, Some("615.71.09"));
        let full = plan(&s, &request(Profile::Full, Pins::default(), "keep"));
        assert_eq!(full.status, Status::Ok, "{full:#?}");
        let cuda = version(&full, "cuda");
        assert!(
            cuda.starts_with("13.4.") || cuda.starts_with("13.5."),
            "{full:#?}"
        );
        assert!(
            full.warnings
                .iter()
                .any(|w| w.contains("cannot build for sm_107") && w.contains("the toolkit is CUDA")),
            "{:#?}",
            full.warnings
        );
        let dev = plan(&s, &request(Profile::CudaDev, Pins::default(), "keep"));
        assert_eq!(dev.status, Status::Ok, "{dev:#?}");
        assert!(version(&dev, "cuda").starts_with("13.4."), "{dev:#?}");
    }

    /// A 13.5 pin plans 13.5.0: its targets are its compiler's.
    #[test]
    fn a_13_5_pin_is_planned() {
        let s = system("NVIDIA H200", "9.0", "Hopper", Some("580.95.05"));
        let p = plan(
            &s,
            &request(
                Profile::CudaDev,
                Pins {
                    cuda: Some(pin("13.5")),
                    ..Pins::default()
                },
                "keep",
            ),
        );
        assert_eq!(p.status, Status::Ok, "{p:#?}");
        assert_eq!(version(&p, "cuda"), "13.5.0");
    }

    /// Every GPU generation on every current branch, in every profile with a toolkit: the promise
    /// holds (checked in `plan`), whatever the plan decides.
    #[test]
    fn the_promise_holds_across_gpus_drivers_and_profiles() {
        let gpus = [
            ("Tesla V100", "7.0", "Volta"),
            ("Tesla T4", "7.5", "Turing"),
            ("NVIDIA A100", "8.0", "Ampere"),
            ("NVIDIA L40S", "8.9", "Ada"),
            ("NVIDIA H200", "9.0", "Hopper"),
            ("NVIDIA B200", "10.0", "Blackwell"),
            B300,
            RUBIN,
            ("NVIDIA GeForce RTX 5090", "12.0", "Blackwell"),
        ];
        let mut planned = 0;
        for (name, cc, arch) in gpus {
            for driver in [
                None,
                Some("570.211.01"),
                Some("575.57.08"),
                Some("580.95.05"),
                Some("595.71.05"),
                Some("615.71.09"),
            ] {
                for profile in [Profile::Full, Profile::CudaDev] {
                    let s = system(name, cc, arch, driver);
                    let policy = if driver.is_some() { "keep" } else { "auto" };
                    let p = plan(&s, &request(profile, Pins::default(), policy));
                    planned += usize::from(p.status == Status::Ok);
                }
            }
        }
        assert!(planned > 60, "{planned} plans were ok");
    }

    /// `--cudnn 9.26.0` (the build torch 2.15 pins) is a row now: cuda-dev and full plan it.
    #[test]
    fn a_cudnn_9_26_0_pin_is_planned() {
        let s = system("NVIDIA H200", "9.0", "Hopper", Some("580.95.05"));
        for profile in [Profile::CudaDev, Profile::Full] {
            let p = plan(
                &s,
                &request(
                    profile,
                    Pins {
                        cudnn: Some(pin("9.26.0")),
                        ..Pins::default()
                    },
                    "keep",
                ),
            );
            assert_eq!(p.status, Status::Ok, "{p:#?}");
            assert_eq!(version(&p, "cudnn"), "9.26.0", "{p:#?}");
        }
        // Every release a framework pins has its row (PyPI's builds: 9.23.x, 9.21.0, ...).
        let c = catalog();
        for (release, variant) in [
            ("9.26.0", "13"),
            ("9.24.0", "13"),
            ("9.23.0", "13"),
            ("9.23.1", "12"),
            ("9.21.0", "13"),
            ("9.18.0", "12"),
            ("9.17.1", "13"),
            ("9.15.0", "12"),
            ("9.13.0", "13"),
            ("9.11.0", "12"),
        ] {
            assert!(
                c.cudnn
                    .release
                    .iter()
                    .any(|r| r.version.to_string() == release && r.cuda_variant == variant),
                "no cuDNN {release} cuda{variant} row"
            );
        }
    }
}

/// `manifests update` over its own output changes nothing: every file is byte for byte the same
/// (before, each run rewrote the cuDNN 9.10.2 cuda12 row and restamped catalog.toml). NVIDIA's and
/// PyTorch's hosts are left out: they are not reachable from CI.
#[test]
fn needs_network_manifests_update_run_twice_writes_nothing() {
    let test = "catalog_facts::needs_network_manifests_update_run_twice_writes_nothing";
    let home = tempfile::tempdir().unwrap();
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    let update = |base: Option<&Path>, out: &Path| {
        let mut args = Vec::new();
        if let Some(b) = base {
            args.extend(["--manifests".to_owned(), b.display().to_string()]);
        }
        args.extend(
            [
                "manifests",
                "update",
                "--skip",
                "nvidia-redist,pytorch-index,driver-tables",
                "--write",
            ]
            .map(str::to_owned),
        );
        args.push(out.display().to_string());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        cudaup_env(&refs, home.path(), &[("CUDAUP_HTTP_RETRIES", "1")])
    };
    let up = update(None, first.path());
    if up.code == 3 && up.stdout.contains("unreachable") {
        return skipped(test, "PyPI is not reachable");
    }
    assert_eq!(up.code, 0, "{}\n{}", up.stdout, up.stderr);
    assert!(!up.stdout.contains("cuDNN 9.10.2"), "{}", up.stdout);
    let again = update(Some(first.path()), second.path());
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert!(again.stdout.contains("No row changed"), "{}", again.stdout);
    for (name, _) in EMBEDDED {
        assert_eq!(
            fs_err::read_to_string(first.path().join(name)).unwrap(),
            fs_err::read_to_string(second.path().join(name)).unwrap(),
            "{name} was rewritten"
        );
    }
}

/// A fact taken out of the catalog is caught by `manifests check`: a series whose compiler
/// confirmation is removed, and one whose range no longer matches its compiler's list.
#[test]
fn a_removed_compiler_fact_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in EMBEDDED {
        let text = if *name == "cuda.toml" {
            let mut series = String::new();
            text.lines()
                .filter_map(|l| {
                    if let Some(v) = l.strip_prefix("version = ") {
                        series = v.trim_matches('"').to_owned();
                    }
                    match (series.as_str(), l.split(" = ").next()) {
                        ("13.4", Some("compiler")) => None,
                        ("12.9", Some("sm_max")) => Some("sm_max = \"12.0\"".to_owned()),
                        _ => Some(l.to_owned()),
                    }
                })
                .collect::<Vec<_>>()
                .join("\n")
                + "\n"
        } else {
            (*text).to_owned()
        };
        fs_err::write(dir.path().join(name), text).unwrap();
    }
    let home = tempfile::tempdir().unwrap();
    let check = cudaup(
        &["manifests", "check", dir.path().to_str().unwrap()],
        home.path(),
    );
    assert_eq!(check.code, 2, "{}\n{}", check.stdout, check.stderr);
    assert!(
        check
            .stdout
            .contains("series 13.4: no compiler confirms its targets"),
        "{}",
        check.stdout
    );
    assert!(
        check.stdout.contains(
            "series 12.9: sm_min..sm_max (5.0..12.0) is not the range of its compiler's list"
        ),
        "{}",
        check.stdout
    );
    assert!(
        check.stdout.contains("cuda.toml:"),
        "file:line: {}",
        check.stdout
    );
}

/// A `--system` picture of an Orin that carries no L4T files (GPU 8.7 with no PCI id, kernel
/// `5.15.148-tegra`, aarch64) is planned as a Jetson: JetPack's answer, never an apt driver or
/// PyTorch's desktop index; a discrete aarch64 GPU (with a PCI id) is not.
#[test]
fn a_jetson_picture_is_planned_as_a_jetson_from_its_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let picture = |gpu: &str| {
        let p = dir.path().join("machine.json");
        fs_err::write(
            &p,
            format!(
                r#"{{"os": {{"family": "linux", "distro": "ubuntu", "version": "22.04", "arch": "aarch64", "wsl": false, "kernel": "5.15.148-tegra"}},
                "gpus": [{gpu}], "pythons": [{{"path": "/usr/bin/python3", "version": "3.10.12"}}]}}"#
            ),
        )
        .unwrap();
        p
    };
    for profile in ["full", "pytorch", "cuda-dev"] {
        let orin = picture(
            r#"{"index": 0, "vendor": "nvidia", "name": "Orin (nvgpu)", "compute_capability": "8.7"}"#,
        );
        let run = cudaup(
            &[
                "plan",
                "--system",
                orin.to_str().unwrap(),
                "--profile",
                profile,
                "--json",
            ],
            home.path(),
        );
        assert_eq!(run.code, 5, "{profile}: {}\n{}", run.stdout, run.stderr);
        let plan = run.json();
        assert_eq!(plan["jetson"]["module"], "Orin", "{plan}");
        assert!(plan["components"].as_array().unwrap().is_empty(), "{plan}");
        let text = plan.to_string();
        assert!(
            !text.contains("nvidia-open") && !text.contains("apt-get"),
            "{text}"
        );
        assert!(!text.contains("download.pytorch.org"), "{text}");
        assert!(text.contains("JetPack"), "{text}");
    }
    // Thor (11.0) likewise; a GH200-like discrete GPU with a PCI id is not a Jetson.
    let thor = picture(
        r#"{"index": 0, "vendor": "nvidia", "name": "NVIDIA Thor", "compute_capability": "11.0"}"#,
    );
    let run = cudaup(
        &["plan", "--system", thor.to_str().unwrap(), "--json"],
        home.path(),
    );
    assert_eq!(run.json()["jetson"]["module"], "Thor", "{}", run.stdout);
    let gh200 = picture(
        r#"{"index": 0, "vendor": "nvidia", "name": "NVIDIA GH200 480GB", "pci_id": "10de:2342", "compute_capability": "9.0", "architecture": "Hopper"}"#,
    );
    let run = cudaup(
        &["plan", "--system", gh200.to_str().unwrap(), "--json"],
        home.path(),
    );
    assert!(run.json()["jetson"].is_null(), "{}", run.stdout);
}
