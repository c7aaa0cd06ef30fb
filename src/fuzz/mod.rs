//! Fuzzing every parser of outside input (issue 25): `engine` mutates real documents, `targets`
//! feeds them to the parsers. `cargo test` runs a short deterministic campaign per target (a
//! fixed seed, a few thousand inputs); `scripts/fuzz` runs long time-bounded campaigns, one
//! target per process (the `long_` tests below, driven by `CUDAUP_FUZZ_*`), and counts runs,
//! panics, hangs and peak memory. Inputs that once broke a parser are replayed from
//! `src/fuzz/regressions/<target>/`.

mod engine;
mod safety;
mod targets;

use std::path::PathBuf;
use std::time::Duration;

use engine::{campaign, Budget, Target};

/// The longest one input may run before it counts as a hang (debug build, loaded machine).
const HANG: Duration = Duration::from_secs(10);

/// Replays the saved inputs of `target` (crashes found before), then a short campaign.
fn short(target: &Target, runs: u64) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("src/fuzz/regressions")
        .join(target.name);
    if let Ok(rd) = fs_err::read_dir(&dir) {
        let sandbox = tempfile::tempdir().expect("a sandbox");
        for e in rd
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        {
            let input = fs_err::read(e.path()).expect("a saved input");
            (target.run)(&input, sandbox.path());
        }
    }
    let s = campaign(target, 25, Budget::Runs(runs), None, HANG);
    assert_eq!(
        s.panics, 0,
        "{}: {} of {} inputs panicked: {:?}",
        target.name, s.panics, s.runs, s.messages
    );
}

/// One long campaign, for `scripts/fuzz`: `CUDAUP_FUZZ_TARGET`, `CUDAUP_FUZZ_SECONDS`,
/// `CUDAUP_FUZZ_SEED`, `CUDAUP_FUZZ_OUT` (where panicking and hanging inputs are saved),
/// `CUDAUP_FUZZ_HANG_MS` (the hang limit). Prints one line of counts.
#[test]
#[ignore = "long: run by scripts/fuzz"]
fn long_campaign() {
    let name = std::env::var("CUDAUP_FUZZ_TARGET").expect("CUDAUP_FUZZ_TARGET");
    let seconds: u64 = std::env::var("CUDAUP_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let seed: u64 = std::env::var("CUDAUP_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let out = std::env::var_os("CUDAUP_FUZZ_OUT").map(PathBuf::from);
    let hang = std::env::var("CUDAUP_FUZZ_HANG_MS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(HANG, Duration::from_millis);
    let target = targets::ALL
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no fuzz target {name}"));
    let s = campaign(
        target,
        seed,
        Budget::Time(Duration::from_secs(seconds)),
        out.as_deref(),
        hang,
    );
    #[allow(clippy::print_stdout)]
    {
        println!(
            "FUZZ target={} runs={} panics={} slowest_ms={} peak_rss_kib={}",
            target.name,
            s.runs,
            s.panics,
            s.slowest.as_millis(),
            engine::peak_rss_kib().unwrap_or(0)
        );
        for m in &s.messages {
            println!("FUZZ panic: {m}");
        }
    }
}

/// The target names, for `scripts/fuzz`.
#[test]
#[ignore = "run by scripts/fuzz"]
fn list_targets() {
    #[allow(clippy::print_stdout)]
    for t in targets::ALL {
        println!("FUZZ target={}", t.name);
    }
}

macro_rules! short_campaigns {
    ($($test:ident: $target:ident, $runs:expr;)*) => {
        $(
            #[test]
            fn $test() {
                short(&targets::$target, $runs);
            }
        )*
    };
}

short_campaigns! {
    fuzz_index_html: INDEX_HTML, 3000;
    fuzz_index_json: INDEX_JSON, 1500;
    fuzz_metadata: METADATA_TARGET, 1500;
    fuzz_marker: MARKER, 4000;
    fuzz_zip_directory: ZIP_DIRECTORY, 1500;
    fuzz_unpack_zip: UNPACK_ZIP, 1000;
    fuzz_elf_fatbin: ELF_FATBIN, 3000;
    fuzz_redistrib: REDISTRIB, 1000;
    fuzz_bundle: BUNDLE, 1500;
    fuzz_receipts: RECEIPTS, 1500;
    fuzz_rc: RC, 3000;
    fuzz_config: CONFIG, 2000;
    fuzz_system_root: SYSTEM_ROOT, 300;
    fuzz_fleet: FLEET, 2000;
    fuzz_lock_file: LOCK_FILE, 2000;
    fuzz_settings_numbers: SETTINGS_NUMBERS, 3000;
}

/// The fuzzer is strong enough to matter: on the PEP 503 parser as it was before issue 25, with
/// the same seeds and tokens, it finds finding 1 (`<a </a>`, a backwards slice) by itself.
#[test]
fn the_campaign_rediscovers_finding_1_in_the_old_parser() {
    fn old_parse_html(input: &[u8], _: &std::path::Path) {
        let text = String::from_utf8_lossy(input);
        let mut rest = &text[..];
        while let Some(start) = rest.find("<a ") {
            rest = &rest[start + 3..];
            let Some(close) = rest.find('>') else { break };
            let Some(end) = rest.find("</a>") else { break };
            let _ = rest[close + 1..end].trim();
            rest = &rest[end..];
        }
    }
    let old = Target {
        name: "old_index_html",
        run: old_parse_html,
        seeds: || {
            // The real pages only: the `<a </a>` seed the target carries is left out.
            let mut s = (targets::INDEX_HTML.seeds)();
            s.retain(|p| p.len() > 100);
            s
        },
        ..targets::INDEX_HTML
    };
    let s = campaign(&old, 25, Budget::Runs(3000), None, HANG);
    assert!(s.panics > 0, "3,000 inputs did not find it: {s:?}");
    assert!(
        s.messages[0].contains("begin > end") || s.messages[0].contains("byte index"),
        "{:?}",
        s.messages
    );
}
