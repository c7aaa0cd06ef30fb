//! `cudaup monitor` from the outside. The live tests load a stand-in NVML (a small C library with
//! nvml.h's entry points, tests/fixtures/fake-nvml/fake_nvml.c, built here with the machine's C
//! compiler and named through CUDAUP_NVML_LIBRARY), so the binary runs its real NVML code on a
//! machine without a GPU; where no C compiler is found they skip, counted. The replay tests read
//! the recorded streams in tests/fixtures/monitor/.

use std::path::{Path, PathBuf};

use crate::common::{cudaup, cudaup_env, skipped};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/monitor")
        .join(name)
        .display()
        .to_string()
}

/// The stand-in NVML, built once per test run (None, and the skip counted, without a compiler).
fn fake_nvml(test: &str) -> Option<PathBuf> {
    static BUILT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let out = crate::common::run_dir().join("libfake-nvml.so");
        let source =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-nvml/fake_nvml.c");
        let ok = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-O1", "-o"])
            .arg(&out)
            .arg(&source)
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(out)
    });
    if built.is_none() {
        skipped(test, "no C compiler (cc) to build the stand-in NVML");
    }
    built.clone()
}

#[test]
fn needs_cc_a_watched_commands_exit_code_passes_through_with_a_summary_on_stderr() {
    let Some(nvml) = fake_nvml("monitor::needs_cc_a_watched_commands_exit_code") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let pid_file = home.path().join("pid");
    let env = [
        ("CUDAUP_NO_NVML", "0"),
        ("CUDAUP_NVML_LIBRARY", nvml.to_str().unwrap()),
        ("FAKE_NVML_PID_FILE", pid_file.to_str().unwrap()),
        ("FAKE_NVML_UTIL", "12"),
    ];
    let script = format!(
        "echo $$ > {}; echo 'epoch 1 done'; sleep 1; exit 3",
        pid_file.display()
    );
    let plot = home.path().join("run.png");
    let run = cudaup_env(
        &[
            "monitor",
            "--interval",
            "0.2",
            "--plot",
            plot.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
        ],
        home.path(),
        &env,
    );
    assert_eq!(
        run.code, 3,
        "stdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    // The command's output is its own; the summary goes to stderr.
    assert_eq!(run.stdout, "epoch 1 done\n");
    assert!(run.stderr.contains("Summary:"), "{}", run.stderr);
    assert!(
        run.stderr.contains("GPU 0 NVIDIA H200: util mean 12%"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("exit code 3"), "{}", run.stderr);
    assert!(plot.is_file());
}

#[test]
fn needs_cc_the_json_stream_marks_the_commands_process_and_ends_with_the_summary() {
    let Some(nvml) = fake_nvml("monitor::needs_cc_the_json_stream") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let pid_file = home.path().join("pid");
    let csv = home.path().join("run.csv");
    let env = [
        ("CUDAUP_NO_NVML", "0"),
        ("CUDAUP_NVML_LIBRARY", nvml.to_str().unwrap()),
        ("FAKE_NVML_PID_FILE", pid_file.to_str().unwrap()),
        ("FAKE_NVML_GPUS", "2"),
    ];
    let script = format!("echo $$ > {}; echo noise; sleep 1", pid_file.display());
    let run = cudaup_env(
        &[
            "monitor",
            "--json",
            "--interval",
            "0.2",
            "--csv",
            csv.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
        ],
        home.path(),
        &env,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The command's stdout went to stderr: stdout is only the stream.
    assert!(run.stderr.contains("noise"), "{}", run.stderr);
    let lines: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.len() >= 3, "{}", run.stdout);
    let (summary, samples) = lines.split_last().unwrap();
    assert_eq!(summary["kind"], "summary");
    assert_eq!(summary["schema_version"], 1);
    assert_eq!(summary["command"]["exit_code"], 0);
    assert!(samples
        .iter()
        .all(|s| s["kind"] == "sample" && s["gpus"].as_array().unwrap().len() == 2));
    let g = &samples.last().unwrap()["gpus"][0];
    assert_eq!(g["name"], "NVIDIA H200");
    assert_eq!(g["mem_total_mib"], 143771);
    assert_eq!(g["pcie"]["max_gen"], 5);
    // No NVLink or ECC entry points in this driver: missing, not zero.
    assert!(
        g.get("nvlink").is_none() && g.get("ecc_uncorrected").is_none(),
        "{g}"
    );
    let watched: Vec<_> = samples
        .iter()
        .flat_map(|s| s["gpus"][0]["processes"].as_array().unwrap().clone())
        .filter(|p| p["watched"] == true)
        .collect();
    assert!(!watched.is_empty(), "{}", run.stdout);
    assert_eq!(watched[0]["mem_mib"], 2048);
    let rows = fs_err::read_to_string(&csv).unwrap();
    assert_eq!(rows.lines().count(), 1 + 2 * samples.len());
    // The stream replays to the same verdict.
    let stream = home.path().join("run.jsonl");
    fs_err::write(&stream, &run.stdout).unwrap();
    let again = cudaup(
        &["monitor", "--replay", stream.to_str().unwrap(), "--json"],
        home.path(),
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    let replayed: serde_json::Value = serde_json::from_str(again.stdout.trim()).unwrap();
    let kinds = |v: &serde_json::Value| {
        v["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["kind"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(kinds(&replayed), kinds(summary));
}

#[test]
fn needs_cc_no_driver_loaded_is_exit_5_with_the_reason() {
    let Some(nvml) = fake_nvml("monitor::needs_cc_no_driver_loaded") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let env = [
        ("CUDAUP_NO_NVML", "0"),
        ("CUDAUP_NVML_LIBRARY", nvml.to_str().unwrap()),
        ("FAKE_NVML_NO_DRIVER", "1"),
    ];
    let run = cudaup_env(
        &["monitor", "--", "sh", "-c", "touch ran"],
        home.path(),
        &env,
    );
    assert_eq!(run.code, 5, "{}", run.stderr);
    assert!(
        run.stderr.contains("installed but not loaded"),
        "{}",
        run.stderr
    );
    // Nothing to watch: the command was not started.
    assert!(!home.path().join("ran").exists());
}

#[test]
fn without_a_gpu_it_says_so_and_exits_5() {
    let home = tempfile::tempdir().unwrap();
    // A library path that is not there: the load fails as on a machine without a driver.
    let nvml = home.path().join("no-driver/libnvidia-ml.so.1");
    let env = [
        ("CUDAUP_NO_NVML", "0"),
        ("CUDAUP_NVML_LIBRARY", nvml.to_str().unwrap()),
    ];
    let run = cudaup_env(&["monitor", "--duration", "1"], home.path(), &env);
    assert_eq!(run.code, 5, "{}", run.stderr);
    assert!(
        run.stderr.contains("no NVIDIA driver here"),
        "{}",
        run.stderr
    );
    let zh = cudaup_env(&["monitor", "--lang", "zh"], home.path(), &[]);
    assert_eq!(zh.code, 5, "{}", zh.stderr);
}

#[test]
fn replay_judges_a_recording_in_english_and_chinese() {
    let home = tempfile::tempdir().unwrap();
    let run = cudaup(
        &["monitor", "--replay", &fixture("input-bound.jsonl")],
        home.path(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("✗ input-bound: GPU 0 was busy"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("num_workers=8"), "{}", run.stdout);
    let zh = cudaup(
        &[
            "monitor",
            "--lang",
            "zh",
            "--replay",
            &fixture("input-bound.jsonl"),
        ],
        home.path(),
    );
    assert!(zh.stdout.contains("数据输入瓶颈"), "{}", zh.stdout);
    assert!(zh.stdout.contains("结论"), "{}", zh.stdout);
    let healthy = cudaup(
        &[
            "monitor",
            "--replay",
            &fixture("healthy-workers.jsonl"),
            "--json",
        ],
        home.path(),
    );
    let s: serde_json::Value = serde_json::from_str(healthy.stdout.trim()).unwrap();
    assert_eq!(s["verdicts"][0]["kind"], "busy");
    let plot = home.path().join("p.png");
    let with_plot = cudaup(
        &[
            "monitor",
            "--replay",
            &fixture("oom-near.jsonl"),
            "--plot",
            plot.to_str().unwrap(),
        ],
        home.path(),
    );
    assert_eq!(with_plot.code, 0, "{}", with_plot.stderr);
    assert!(with_plot.stdout.contains("expandable_segments"));
    assert!(plot.is_file());
}

#[test]
fn a_broken_recording_or_bad_flags_are_exit_2() {
    let home = tempfile::tempdir().unwrap();
    let bad = home.path().join("bad.jsonl");
    fs_err::write(
        &bad,
        "{\"kind\":\"sample\",\"schema_version\":1,\"t_ms\":0,\"gpus\":[]}\n{oops\n",
    )
    .unwrap();
    let run = cudaup(&["monitor", "--replay", bad.to_str().unwrap()], home.path());
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("line 2: not a monitor record"),
        "{}",
        run.stderr
    );
    let missing = cudaup(&["monitor", "--replay", "nope.jsonl"], home.path());
    assert_eq!(missing.code, 2, "{}", missing.stderr);
    for args in [
        &["monitor", "--interval", "0"][..],
        &["monitor", "--interval", "nan"],
        &["monitor", "--duration", "-1"],
        &["monitor", "--replay", "x.jsonl", "--", "sh"],
    ] {
        let r = cudaup(args, home.path());
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    }
}
