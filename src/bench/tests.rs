//! The bench's judging, report and orchestration, on recorded-looking results
//! (`tests/fixtures/bench/`): no GPU and no torch needed.

use std::path::Path;

use super::measure::{Ddp, Loader, Probe, Train};
use super::verdict::{Context as VerdictContext, Status};
use super::*;
use crate::catalog::Catalog;
#[cfg(unix)]
use crate::verify::testing::{ok, Scripted};
#[cfg(unix)]
use crate::world::runner::{Output, RunError, Runner};

/// The scripted runner, handing each line it answers with to `on_line` as the real one does
/// (used by the tests of a Unix venv's stand-in Python).
#[cfg(unix)]
struct Replaying(Scripted);

#[cfg(unix)]
impl Runner for Replaying {
    fn run(
        &self,
        program: &Path,
        args: &[&str],
        t: std::time::Duration,
    ) -> Result<Output, RunError> {
        self.0.run(program, args, t)
    }

    fn run_streaming(
        &self,
        program: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        t: std::time::Duration,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<Output, RunError> {
        let out = self.0.run_streaming(program, args, env, t, &mut |_| {})?;
        out.stdout.lines().for_each(&mut *on_line);
        Ok(out)
    }
}

const A100: &str = include_str!("../../tests/fixtures/bench/a100-hot-shared.train.json");
const H200: &str = include_str!("../../tests/fixtures/bench/h200.train.json");
const LOADER: &str = include_str!("../../tests/fixtures/bench/h200.loader.json");
const PROBES: &str = include_str!("../../tests/fixtures/bench/probes.json");

fn train(text: &str) -> Train {
    serde_json::from_str(text).unwrap()
}

fn probe(name: &str) -> Probe {
    let all: serde_json::Value = serde_json::from_str(PROBES).unwrap();
    serde_json::from_value(all[name].clone()).unwrap()
}

fn manifest() -> BenchManifest {
    Catalog::embedded().bench
}

fn opts(out: &Path) -> Options {
    Options {
        venv: None,
        quick: true,
        batch: 256,
        effective_batch: None,
        max_batch: 8192,
        out_dir: out.to_owned(),
    }
}

fn verdicts(t: &Train) -> Vec<verdict::Verdict> {
    let d = measure::ProbeDevice {
        index: 0,
        name: t.name.clone(),
        capability: (if t.name.contains("H200") { 9 } else { 8 }, 0),
        memory_mib: 81920,
        ..Default::default()
    };
    judge_gpu(&d, t, &manifest())
}

fn find<'a>(v: &'a [verdict::Verdict], config: &str, w: Workload) -> &'a verdict::Verdict {
    v.iter()
        .find(|x| x.config == config && x.workload == w)
        .unwrap_or_else(|| panic!("no verdict for {config} {w:?}"))
}

#[test]
fn a_hot_shared_a100_is_below_its_references_and_the_verdicts_say_why() {
    let v = verdicts(&train(A100));
    let tf32 = find(&v, "tf32", Workload::Train);
    assert_eq!(tf32.status, Status::Below);
    assert_eq!(tf32.reference.as_ref().unwrap().images_per_s, 938.0);
    assert!((tf32.ratio.unwrap() - 702.4 / 938.0).abs() < 1e-9);
    let kinds: Vec<&str> = tf32.causes.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, ["other-process", "thermal"], "{:#?}", tf32.causes);
    assert!(tf32.causes[0]
        .evidence
        .contains("python3 (pid 48213, 20480 MiB)"));
    assert!(tf32.causes[1]
        .evidence
        .contains("60% of NVML samples (up to 88°C)"));
    assert!(
        tf32.summary
            .starts_with("702 images/s, 25% below NVIDIA's 938"),
        "{}",
        tf32.summary
    );

    let nchw = find(&v, "amp_bf16", Workload::Train);
    assert_eq!(nchw.reference.as_ref().unwrap().precision, "amp-fp16");
    let mf = nchw
        .causes
        .iter()
        .find(|c| c.kind == "memory-format")
        .unwrap();
    assert!(
        mf.evidence
            .contains("channels-last ran 1910 images/s (+34%)"),
        "{}",
        mf.evidence
    );

    // Inference has an AMP figure for the A100 but no TF32 one: that is said, not guessed.
    assert_eq!(
        find(&v, "tf32", Workload::Infer).status,
        Status::NoReference
    );
    assert_eq!(
        find(&v, "amp_bf16_cl", Workload::Infer).status,
        Status::Below
    );
}

#[test]
fn a_healthy_gpu_is_within_or_above_and_names_no_cause() {
    let mut t = train(A100);
    t.other_processes = Some(vec![]);
    for c in &mut t.configs {
        for run in [&mut c.train, &mut c.infer].into_iter().flatten() {
            run.nvml.as_mut().unwrap().reason_counts.clear();
            run.nvml.as_mut().unwrap().sm_clock_mean = Some(1400.0);
        }
    }
    t.configs[2].train.as_mut().unwrap().images_per_s = 2400.0;
    t.configs[0].train.as_mut().unwrap().images_per_s = 990.0;
    let v = verdicts(&t);
    let cl = find(&v, "amp_bf16_cl", Workload::Train);
    assert_eq!(cl.status, Status::Within, "{cl:?}");
    assert!(cl.causes.is_empty());
    assert!(
        cl.summary.contains("within 15% of NVIDIA's 2470"),
        "{}",
        cl.summary
    );
    assert_eq!(find(&v, "tf32", Workload::Train).status, Status::Above);
    // Far below with clean evidence: the gap is software, and the verdict says what the
    // reference ran.
    let nchw = find(&v, "amp_bf16", Workload::Train);
    assert_eq!(nchw.causes[0].kind, "memory-format");
    t.configs[2].train.as_mut().unwrap().images_per_s = 1500.0;
    let v = verdicts(&t);
    let cl = find(&v, "amp_bf16_cl", Workload::Train);
    assert_eq!(cl.causes.len(), 1);
    assert_eq!(cl.causes[0].kind, "software");
    assert!(cl.causes[0].evidence.contains("NGC pytorch-21.03"));
}

#[test]
fn power_caps_pcie_cards_held_clocks_and_cpu_bound_runs_are_named() {
    let mut t = train(A100);
    t.other_processes = Some(vec![]);
    t.name = "NVIDIA A100 80GB PCIe".into();
    let st = t.static_.as_mut().unwrap();
    st.power_limit_w = Some(250.0);
    st.default_power_limit_w = Some(300.0);
    let run = t.configs[0].train.as_mut().unwrap();
    let w = run.nvml.as_mut().unwrap();
    w.reason_counts.clear();
    w.util_mean = Some(62.0);
    w.sm_clock_mean = Some(1100.0);
    run.cpu_fraction = Some(0.99);
    let v = verdicts(&t);
    let kinds: Vec<&str> = find(&v, "tf32", Workload::Train)
        .causes
        .iter()
        .map(|c| c.kind)
        .collect();
    assert_eq!(
        kinds,
        ["power-cap", "clocks", "form-factor", "cpu-bound"],
        "{v:#?}"
    );
    let c = &find(&v, "tf32", Workload::Train).causes;
    assert!(c[0]
        .evidence
        .contains("250 W, below the board's default 300 W"));
    assert!(c[2]
        .evidence
        .contains("PCIe card and the reference the SXM4 module"));
    assert!(c[3].evidence.contains("busy only 62%"));
}

#[test]
fn a_gpu_without_a_published_figure_gets_numbers_and_no_guess() {
    let v = verdicts(&train(H200));
    assert_eq!(v.len(), 5, "train for 3 configs, inference for 2");
    for x in &v {
        assert_eq!(x.status, Status::NoReference);
        assert!(x
            .summary
            .contains("no published figure for the NVIDIA H200"));
        // What the evidence shows plainly still shows: NCHW costs the AMP run 43%.
        let kinds: Vec<&str> = x.causes.iter().map(|c| c.kind).collect();
        if x.config == "amp_bf16" {
            assert_eq!(kinds, ["memory-format"], "{x:?}");
            assert!(x.causes[0].evidence.contains("(+43%)"));
        } else {
            assert!(kinds.is_empty(), "{x:?}");
        }
    }
    // Busy before the bench started: another process, even with none listed.
    let mut t = train(H200);
    t.idle_util_before = Some(45.0);
    let v = verdicts(&t);
    assert_eq!(v[0].causes[0].kind, "other-process");
}

#[test]
fn form_factors_come_from_the_name() {
    use verdict::form_factor;
    assert_eq!(
        form_factor("NVIDIA A100-SXM4-80GB").as_deref(),
        Some("SXM4")
    );
    assert_eq!(form_factor("Tesla V100-PCIE-16GB").as_deref(), Some("PCIe"));
    assert_eq!(form_factor("NVIDIA H200 NVL").as_deref(), Some("NVL"));
    assert_eq!(form_factor("NVIDIA H200"), None);
}

#[test]
fn the_loader_verdict_names_the_worker_count_that_fixes_it() {
    let l: Loader = serde_json::from_str(LOADER).unwrap();
    let v = pipeline::judge_loader(&l).unwrap();
    assert!(v.input_bound);
    assert_eq!(v.fix_workers, Some(16));
    assert!(v.summary.starts_with("input-bound with 0 workers (3900 images/s, 10% of the GPU's 41000, GPU busy 9%); num_workers=16 fixes it"), "{}", v.summary);
    let mut slow = l.clone();
    slow.runs.pop();
    let v = pipeline::judge_loader(&slow).unwrap();
    assert_eq!(v.fix_workers, None);
    assert!(
        v.summary
            .contains("every worker count tried, up to 8 (best: 8 workers"),
        "{}",
        v.summary
    );
    let mut fast = l.clone();
    fast.runs[0].images_per_s = 39000.0;
    let v = pipeline::judge_loader(&fast).unwrap();
    assert!(!v.input_bound);
    assert!(v.summary.starts_with("not input-bound"));
    fast.ceiling = None;
    assert!(pipeline::judge_loader(&fast).is_none());
}

#[test]
fn ddp_scaling_against_one_gpu() {
    let d = Ddp {
        world: 2,
        batch_per_gpu: 256,
        config: Some("amp_bf16_cl".into()),
        images_per_s: Some(5800.0),
        ..Ddp::default()
    };
    let v = pipeline::judge_ddp(&d, 3020.9).unwrap();
    assert!((v.scaling_efficiency - 5800.0 / 6041.8).abs() < 1e-9);
    assert!(v.summary.ends_with("scales well"), "{}", v.summary);
    let v = pipeline::judge_ddp(
        &Ddp {
            images_per_s: Some(4000.0),
            ..d.clone()
        },
        3020.9,
    )
    .unwrap();
    assert!(v.summary.contains("nvidia-smi topo -m"), "{}", v.summary);
    assert!(pipeline::judge_ddp(
        &Ddp {
            images_per_s: None,
            ..d
        },
        3020.9
    )
    .is_none());
}

#[test]
fn refusals_say_what_is_missing() {
    let venv = Path::new("/v");
    let full = || Offer {
        profile: Profile::Full,
        why: "a GPU".into(),
    };
    let msg = |p: &str| refuse(&probe(p), venv, &full).unwrap_err();
    for (p, needle) in [
        (
            "no-torch",
            "torch does not import in /v (ModuleNotFoundError",
        ),
        (
            "cpu-torch",
            "is a CPU-only build: there is no GPU to bench through it; `cudaup install` sets up this machine's default profile, full,",
        ),
        ("no-gpu", "torch 2.11.0+cu130 (CUDA 13.0) sees no GPU here"),
        ("no-torchvision", "torchvision does not import"),
    ] {
        let e = msg(p);
        assert_eq!(e.exit_code(), crate::ExitCode::Unsupported, "{p}");
        assert!(e.to_string().contains(needle), "{p}: {e}");
    }
    assert!(refuse(&probe("h200"), venv, &full).is_ok());
    // Without a GPU, the default installs no GPU PyTorch: no install is advised.
    let cpu = || Offer {
        profile: Profile::Cpu,
        why: "no NVIDIA GPU here, so PyTorch for the CPU".into(),
    };
    let e = refuse(&probe("cpu-torch"), venv, &cpu)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("this machine's default profile is cpu (no NVIDIA GPU here")
            && !e.contains("cudaup install"),
        "{e}"
    );
}

#[test]
fn the_report_has_its_shape_and_the_accumulation_for_a_wanted_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(dir.path());
    o.effective_batch = Some(4096);
    let mut errors = Vec::new();
    let r = assemble(
        &probe("h200"),
        Path::new("/opt/torch/.venv"),
        &manifest(),
        &o,
        vec![Ok(train(H200))],
        Ok(serde_json::from_str(LOADER).unwrap()),
        None,
        &mut errors,
    );
    assert!(r.ok, "{:?}", r.errors);
    let j = serde_json::to_value(&r).unwrap();
    assert_eq!(j["schema_version"], 1);
    assert_eq!(j["software"]["torch"], "2.11.0+cu130");
    let g = &j["gpus"][0];
    assert_eq!(g["name"], "NVIDIA H200");
    assert_eq!(g["capability"], "9.0");
    assert_eq!(g["verdicts"][0]["status"], "no-reference");
    assert_eq!(g["verdicts"][0]["workload"], "train");
    assert!(g["measured"]["configs"][2]["train"]["nvml"]["util_mean"].is_number());
    assert_eq!(g["batches"][0]["config"], "tf32");
    assert_eq!(g["batches"][0]["largest_fit"], 1408);
    assert_eq!(g["batches"][0]["smallest_oom"], 1536);
    assert_eq!(g["batches"][0]["accumulation"]["micro_batch"], 1024);
    assert_eq!(g["batches"][0]["accumulation"]["steps"], 4);
    assert_eq!(g["batches"][1]["accumulation"]["micro_batch"], 2048);
    assert_eq!(j["loader"]["verdict"]["fix_workers"], 16);
    assert_eq!(j["ddp"]["status"], "skipped");
    assert_eq!(
        j["ddp"]["note"],
        "1 GPU here: DistributedDataParallel scaling needs two or more"
    );
    assert_eq!(
        j["report"],
        dir.path().join("report.json").display().to_string()
    );
    let s = plot_series(&r.gpus);
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].label, "TF32");
    assert_eq!(s[1].label, "AMP bf16 channels-last");
    assert_eq!(s[1].points.last(), Some(&(2304, 3198.4)));
    // A failed part makes the report not ok and says which.
    let mut errors = Vec::new();
    let r = assemble(
        &probe("h200"),
        Path::new("/v"),
        &manifest(),
        &o,
        vec![Err("train.py: it printed no result (exit 139)".into())],
        Err("loader.py: killed".into()),
        Some(Err("ddp.py: exit 1".into())),
        &mut errors,
    );
    assert!(!r.ok);
    assert_eq!(r.errors.len(), 3, "{:?}", r.errors);
    assert_eq!(r.ddp.status, "failed");
}

#[cfg(unix)] // stand-in Python of a Unix venv (bin/python, a shell script)
#[test]
fn run_goes_through_the_runner_and_leaves_a_report_a_plot_and_no_scratch() {
    let venv = tempfile::tempdir().unwrap();
    fs_err::create_dir_all(venv.path().join("bin")).unwrap();
    fs_err::write(venv.path().join("bin/python"), "").unwrap();
    let out = tempfile::tempdir().unwrap();
    // A scratch directory a killed run left behind, and a file of the user's beside it.
    fs_err::create_dir_all(out.path().join(format!("{SCRATCH_PREFIX}old/x"))).unwrap();
    fs_err::write(out.path().join("notes.txt"), "mine").unwrap();
    let runner = Replaying(Scripted::new(|_, args, env| {
        let script = Path::new(args[0]).file_name()?.to_str()?.to_owned();
        assert!(
            Path::new(args[0]).is_file(),
            "the script is written before it runs"
        );
        assert!(env.contains(&("NCCL_NVLS_ENABLE", "0")));
        assert!(env.contains(&("CUDA_DEVICE_ORDER", "PCI_BUS_ID")));
        let progress = r#"{"event": "progress", "message": "working"}"#;
        let all: serde_json::Value = serde_json::from_str(PROBES).unwrap();
        let result = match script.as_str() {
            "probe.py" => all["h200"].to_string(),
            "train.py" => {
                let a: serde_json::Value = serde_json::from_str(args[1]).unwrap();
                assert_eq!(a["index"], 0);
                assert_eq!(a["quick"], true);
                serde_json::from_str::<serde_json::Value>(H200)
                    .unwrap()
                    .to_string()
            }
            "loader.py" => serde_json::from_str::<serde_json::Value>(LOADER)
                .unwrap()
                .to_string(),
            other => panic!("{other} runs only with two GPUs"),
        };
        ok(&format!(
            "{progress}\nsome warning torch printed\n{result}\n"
        ))
    }));
    let process = crate::world::process::Process::default();
    let m = manifest();
    let offer = || Offer {
        profile: Profile::Full,
        why: "a GPU".into(),
    };
    let ctx = Context {
        process: &process,
        runner: &runner,
        references: &m,
        offer: &offer,
    };
    let mut o = opts(out.path());
    o.venv = Some(venv.path().to_owned());
    let mut lines = Vec::new();
    let r = run(&ctx, &o, &mut |l| lines.push(l.to_owned())).unwrap();
    assert!(r.ok, "{:?}", r.errors);
    assert!(lines.iter().any(|l| l == "working"));
    let on_disk: serde_json::Value =
        serde_json::from_slice(&fs_err::read(out.path().join(REPORT_FILE)).unwrap()).unwrap();
    assert_eq!(on_disk["gpus"][0]["name"], "NVIDIA H200");
    let png = fs_err::read(out.path().join(PLOT_FILE)).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(
        r.plot.as_deref(),
        Some(out.path().join(PLOT_FILE).as_path())
    );
    let left: Vec<String> = fs_err::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut left = left;
    left.sort();
    assert_eq!(left, ["notes.txt", "report.json", "throughput.png"]);
    assert_eq!(runner.0.calls.lock().unwrap().len(), 3);
}

#[cfg(unix)] // stand-in Python of a Unix venv (bin/python, a shell script)
#[test]
fn a_script_that_dies_is_reported_with_its_last_lines() {
    let venv = tempfile::tempdir().unwrap();
    fs_err::create_dir_all(venv.path().join("bin")).unwrap();
    fs_err::write(venv.path().join("bin/python"), "").unwrap();
    let out = tempfile::tempdir().unwrap();
    let runner = Scripted::new(|_, _, _| {
        crate::verify::testing::failed(1, "", "Traceback (most recent call last):\nImportError: libcudnn.so.9: cannot open shared object file")
    });
    let process = crate::world::process::Process::default();
    let m = manifest();
    let offer = || Offer {
        profile: Profile::Full,
        why: "a GPU".into(),
    };
    let ctx = Context {
        process: &process,
        runner: &runner,
        references: &m,
        offer: &offer,
    };
    let mut o = opts(out.path());
    o.venv = Some(venv.path().to_owned());
    let e = run(&ctx, &o, &mut |_| {}).unwrap_err();
    assert_eq!(e.exit_code(), crate::ExitCode::Failure);
    assert!(
        e.to_string()
            .contains("probe.py: it printed no result (exit 1)"),
        "{e}"
    );
    assert!(e.to_string().contains("libcudnn.so.9"), "{e}");
}

#[cfg(unix)] // stand-in Python of a Unix venv (bin/python, a shell script)
#[test]
#[allow(clippy::print_stderr)]
fn the_embedded_scripts_compile() {
    let Some(python) = ["/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.is_file())
    else {
        eprintln!("SKIPPED the_embedded_scripts_compile: no python3 on this machine");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    measure::write_scripts(dir.path()).unwrap();
    fs_err::write(
        dir.path().join("tensorrt.py"),
        crate::verify::tensorrt::SCRIPT,
    )
    .unwrap();
    let names = measure::SCRIPTS
        .iter()
        .map(|(n, _)| *n)
        .chain(["tensorrt.py"]);
    for name in names {
        let out = std::process::Command::new(python)
            .args([
                "-c",
                "import ast,sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])",
            ])
            .arg(dir.path().join(name))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn verdict_context_defaults_are_harmless() {
    let t = train(H200);
    let ctx = VerdictContext::default();
    let v = verdict::judge(
        &t.configs[0],
        Workload::Train,
        t.configs[0].train.as_ref().unwrap(),
        None,
        15.0,
        &ctx,
    );
    assert_eq!(v.status, Status::NoReference);
}
