//! Each verdict from its recorded stream (tests/fixtures/monitor/*.jsonl, one record a line as
//! `monitor --json` writes them), read through the same reader `--replay` uses.

use super::*;
use crate::monitor::record;
use crate::monitor::words::{EN, ZH};

fn replay(name: &str) -> Summary {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/monitor")
        .join(format!("{name}.jsonl"));
    let r = record::read(&path).unwrap();
    summarise(&r.samples, Some(0), &EN)
}

fn kinds(s: &Summary) -> Vec<Kind> {
    s.verdicts.iter().map(|v| v.kind).collect()
}

#[test]
fn an_idle_gpu_beside_a_busy_main_process_is_input_bound_with_its_evidence() {
    let s = replay("input-bound");
    assert_eq!(kinds(&s), [Kind::InputBound], "{s:#?}");
    let v = &s.verdicts[0];
    assert_eq!((v.severity, v.gpu), (Severity::Problem, Some(0)));
    // The start-up samples (no work on the GPU yet) are not counted as idleness.
    let util = s.gpus[0].util_mean.unwrap();
    assert!((15.0..25.0).contains(&util), "{util}");
    assert!(v.evidence.contains("of 16 CPU cores"), "{}", v.evidence);
    assert!(
        v.evidence.contains(&format!("{util:.0}%")),
        "{}",
        v.evidence
    );
    // One process: no DataLoader workers, so the advice is to add them.
    assert!(v.advice.contains("num_workers=8"), "{}", v.advice);
    let c = s.command.as_ref().unwrap();
    assert_eq!((c.processes_max, c.cores_available), (1, 16));
    assert!(c.cpu_cores_mean >= CPU_BUSY);
}

#[test]
fn a_busy_gpu_fed_by_workers_is_not_input_bound() {
    let s = replay("healthy-workers");
    assert_eq!(kinds(&s), [Kind::Busy], "{s:#?}");
    assert_eq!(s.verdicts[0].severity, Severity::Ok);
    assert!(s.gpus[0].util_mean.unwrap() > 95.0);
}

#[test]
fn memory_at_the_top_is_an_oom_warning() {
    let s = replay("oom-near");
    assert_eq!(kinds(&s), [Kind::MemoryNearFull], "{s:#?}");
    assert!(s.verdicts[0].evidence.contains("139800 of 143771 MiB"));
    assert!(s.verdicts[0].advice.contains("expandable_segments"));
}

#[test]
fn heat_is_a_problem_and_the_power_cap_a_note() {
    let s = replay("throttled");
    let k = kinds(&s);
    assert!(k.contains(&Kind::Thermal), "{k:?}");
    assert!(k.contains(&Kind::PowerCapped), "{k:?}");
    // Problems first.
    assert_eq!(s.verdicts[0].kind, Kind::Thermal);
    assert!(s.verdicts[0].evidence.contains("91 °C"));
    let share = s.gpus[0].throttle_share["hw-thermal"];
    assert!((0.5..0.8).contains(&share), "{share}");
    // A throttled GPU is not "busy, nothing held it back".
    assert!(!k.contains(&Kind::Busy));
}

#[test]
fn a_busy_link_below_its_best_is_degraded() {
    let s = replay("pcie-degraded");
    assert_eq!(kinds(&s), [Kind::PcieDegraded], "{s:#?}");
    assert!(s.verdicts[0].evidence.contains("Gen3 x8"));
    assert!(s.verdicts[0].evidence.contains("Gen5 x16"));
}

#[test]
fn two_processes_on_one_gpu_are_named_and_an_idle_gpu_is_said() {
    let s = replay("two-processes");
    let about = |gpu: u32| {
        s.verdicts
            .iter()
            .filter(|v| v.gpu == Some(gpu))
            .map(|v| v.kind)
            .collect::<Vec<_>>()
    };
    // Shared, and busy while shared (the sharing is a note, not what held it back).
    assert_eq!(about(0), [Kind::OtherProcess, Kind::Busy], "{s:#?}");
    let v = s
        .verdicts
        .iter()
        .find(|v| v.kind == Kind::OtherProcess)
        .unwrap();
    // No command was watched: sharing is worth knowing, not a fault of the run.
    assert_eq!(v.severity, Severity::Note);
    assert!(
        v.evidence.contains("3101 python 40960 MiB"),
        "{}",
        v.evidence
    );
    assert!(
        v.evidence.contains("3177 python 20480 MiB"),
        "{}",
        v.evidence
    );
    // GPU 1 never worked: idle, and this stream has no CPU figures to say why.
    assert_eq!(about(1), [Kind::GpuIdle]);
    let idle = s.verdicts.iter().find(|v| v.gpu == Some(1)).unwrap();
    assert!(
        idle.evidence.contains("no CPU figures"),
        "{}",
        idle.evidence
    );
}

#[test]
fn a_gpu_the_command_never_used_gets_no_idle_verdict() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/monitor/two-processes.jsonl");
    let mut samples = record::read(&path).unwrap().samples;
    for (k, s) in samples.iter_mut().enumerate() {
        s.command = Some(crate::monitor::sample::CommandSample {
            pid: 3101,
            cpu_cores: if k == 0 { 0.0 } else { 1.0 },
            processes: 1,
            threads: 4,
            cores_available: 8,
        });
        s.gpus[0].processes[0].watched = true;
    }
    let s = summarise(&samples, Some(0), &EN);
    assert!(s.verdicts.iter().all(|v| v.gpu != Some(1)), "{s:#?}");
    // With a command running, the other process competes with it: a problem.
    let v = s
        .verdicts
        .iter()
        .find(|v| v.kind == Kind::OtherProcess)
        .unwrap();
    assert_eq!(v.severity, Severity::Problem);
    assert!(v.evidence.contains("3177"));
    assert!(!v.evidence.contains("3101"));
}

#[test]
fn a_lowered_power_limit_and_errors_are_problems() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/monitor/throttled.jsonl");
    let mut samples = record::read(&path).unwrap().samples;
    for (k, s) in samples.iter_mut().enumerate() {
        let g = &mut s.gpus[0];
        g.power_limit_w = Some(450.0);
        g.temp_c = Some(60);
        g.throttle = Some(vec!["sw-power-cap".into()]);
        g.ecc_uncorrected = Some(if k > 20 { 2 } else { 0 });
        if k == 25 {
            g.xid = vec![79];
        }
    }
    let s = summarise(&samples, Some(0), &EN);
    let k = kinds(&s);
    assert!(k.contains(&Kind::PowerLimitLowered), "{k:?}");
    assert!(!k.contains(&Kind::PowerCapped), "{k:?}");
    let v = s.verdicts.iter().find(|v| v.kind == Kind::Errors).unwrap();
    assert!(
        v.evidence.contains("2 new uncorrected ECC"),
        "{}",
        v.evidence
    );
    assert!(v.evidence.contains("79"), "{}", v.evidence);
    let lowered = s
        .verdicts
        .iter()
        .find(|v| v.kind == Kind::PowerLimitLowered)
        .unwrap();
    assert!(lowered.advice.contains("-pl 700"), "{}", lowered.advice);
}

#[test]
fn one_sample_is_too_short_to_judge() {
    let s = summarise(&[Sample::default()], None, &EN);
    assert_eq!(kinds(&s), [Kind::TooShort]);
    assert_eq!(summarise(&[], None, &EN).verdicts[0].kind, Kind::TooShort);
}

#[test]
fn chinese_verdicts_carry_the_same_numbers_and_no_english_sentence() {
    for name in [
        "input-bound",
        "healthy-workers",
        "oom-near",
        "throttled",
        "pcie-degraded",
        "two-processes",
    ] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/monitor")
            .join(format!("{name}.jsonl"));
        let samples = record::read(&path).unwrap().samples;
        let en = summarise(&samples, Some(0), &EN);
        let zh = summarise(&samples, Some(0), &ZH);
        assert_eq!(kinds(&en), kinds(&zh), "{name}");
        for v in &zh.verdicts {
            for text in [&v.evidence, &v.advice] {
                assert!(
                    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
                    "{text}"
                );
                // English words of the sentences must not leak (commands and names may).
                for word in [" the ", " was ", " while ", " GPU is ", " of the "] {
                    assert!(!text.contains(word), "{name}: {text}");
                }
            }
        }
        // The numbers are the same in both languages.
        let en_digits: String = en.verdicts[0]
            .evidence
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        let zh_digits: String = zh.verdicts[0]
            .evidence
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        let mut a: Vec<char> = en_digits.chars().collect();
        let mut b: Vec<char> = zh_digits.chars().collect();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(
            a, b,
            "{name}: {}\n{}",
            en.verdicts[0].evidence, zh.verdicts[0].evidence
        );
    }
}

#[test]
fn the_summary_round_trips_as_the_streams_last_record() {
    let s = replay("input-bound");
    let line = serde_json::to_string(&crate::monitor::sample::Record::Summary(s.clone())).unwrap();
    assert!(line.starts_with("{\"kind\":\"summary\""), "{line}");
    let back: crate::monitor::sample::Record = serde_json::from_str(&line).unwrap();
    assert_eq!(back, crate::monitor::sample::Record::Summary(s));
}
