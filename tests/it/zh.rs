//! Chinese end to end (issue 37): under `--lang zh` the flows a newcomer meets first — `plan`,
//! an install refused, a dry-run install, `wizard --yes --dry-run`, a refusal for want of any
//! download site, an error — print no English sentence. What counts as one: three or more
//! lower-case English words in a row, or two small words such as `the`, `no`, once URLs,
//! paths, flags, `code`, commands (`$ …`) and JSON are set aside (names — NVIDIA, PyTorch,
//! CUDA — and versions are not sentences). The
//! machine has no GPU; PyPI is a local index of stand-in wheels, PyTorch's index a dead port.

use crate::common::wheels;
use crate::common::*;

fn dead() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}")
}

/// Words no name or command is made of: two of them on a line make it English.
const SMALL_WORDS: &[&str] = &[
    "the", "a", "an", "no", "not", "is", "are", "was", "of", "for", "to", "in", "on", "at", "with",
    "and", "or", "this", "that", "it", "its", "be", "by", "from", "as", "found", "here", "only",
    "can", "cannot", "needs", "would", "will", "does", "has", "than", "which", "what", "when",
    "where", "none", "every", "any", "into", "runs", "your", "you", "then", "but",
];

/// The lines of `text` that hold an English sentence: three lower-case English words in a
/// row, or two of the [`SMALL_WORDS`].
pub fn english_lines(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("$ ") || t.starts_with(['{', '}', '[', ']', '"']) {
            continue;
        }
        // `code` spans are commands and names.
        let mut plain = String::new();
        let mut in_code = false;
        for c in t.chars() {
            if c == '`' {
                in_code = !in_code;
                plain.push(' ');
            } else if !in_code {
                plain.push(c);
            }
        }
        let mut run = 0;
        let mut worst = 0;
        let mut small = 0;
        for token in plain.split(|c: char| c.is_whitespace() || "（）()，：；、。".contains(c))
        {
            if token.is_empty() {
                continue;
            }
            let w = token.trim_matches(|c: char| ",.;:!?'\"[]".contains(c));
            let is_word = !token.contains('/')
                && !token.starts_with("--")
                && w.len() >= 2
                && w.chars().all(|c| c.is_ascii_lowercase() || c == '\'');
            run = if is_word { run + 1 } else { 0 };
            worst = worst.max(run);
            if is_word && SMALL_WORDS.contains(&w) {
                small += 1;
            }
        }
        if worst >= 3 || small >= 2 {
            found.push(line.to_owned());
        }
    }
    found
}

fn pypi_with_the_cuda_build() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("build");
    let built = vec![
        wheels::fake_torch_with(&dir, "2.15.0", Some("13.2"), &["sm_90"], &[]),
        wheels::fake_companion(&dir, "torchvision", "0.29.2", "2.15.0"),
        wheels::fake_companion(&dir, "torchaudio", "2.11.1", "2.15.0"),
    ];
    wheels::write_index(&root.path().join("simple"), &built);
    root
}

#[test]
fn a_chinese_first_run_prints_no_english_sentence() {
    let index = pypi_with_the_cuda_build();
    let down = dead();
    let pypi = index.path().join("simple");
    let ctx = TestContext::new()
        .with_env("CUDAUP_NO_UV", "1")
        .with_env("CUDAUP_PROBE_TIMEOUT", "5")
        .with_env("CUDAUP_PYPI_INDEX", pypi.to_str().unwrap())
        .with_env("CUDAUP_TORCH_INDEX", &format!("{down}/whl"))
        .with_env("CUDAUP_MIRROR", &down)
        .with_env("LANG", "zh_CN.UTF-8");
    let nothing = TestContext::new()
        .with_env("CUDAUP_PROBE_TIMEOUT", "2")
        .with_env("CUDAUP_PYPI_INDEX", &format!("{down}/simple"))
        .with_env("CUDAUP_TORCH_INDEX", &format!("{down}/whl"))
        .with_env("LANG", "zh_CN.UTF-8");
    let system = ctx.system_arg();
    let flows: Vec<(&str, Run, Vec<i32>)> = vec![
        ("plan", ctx.cudaup(&["plan", "--allow-http"]), vec![0]),
        (
            "plan --profile full (refused here)",
            ctx.cudaup(&["plan", "--profile", "full", "--allow-http"]),
            vec![5],
        ),
        (
            "install --profile full (refused here)",
            ctx.cudaup(&[
                "install",
                "--profile",
                "full",
                "--driver",
                "keep",
                "--yes",
                "--allow-http",
            ]),
            vec![5],
        ),
        (
            "install --dry-run",
            ctx.cudaup(&[
                "install",
                "--dry-run",
                "--driver",
                "keep",
                "--system",
                &system,
                "--allow-http",
            ]),
            vec![0],
        ),
        (
            "wizard --yes --dry-run",
            ctx.cudaup(&["wizard", "--yes", "--dry-run"]),
            vec![0],
        ),
        (
            "install with no download site",
            nothing.cudaup(&[
                "install",
                "--driver",
                "keep",
                "--yes",
                "--allow-http",
                "--system",
                &system,
            ]),
            vec![3],
        ),
        (
            "an error",
            ctx.cudaup(&["install", "--config", "/nonexistent/cudaup.toml"]),
            vec![2],
        ),
    ];
    let mut report = String::new();
    for (name, run, codes) in &flows {
        assert!(
            codes.contains(&run.code),
            "{name}: exit {}\n{}\n{}",
            run.code,
            run.stdout,
            run.stderr
        );
        let text = format!("{}\n{}", run.stdout, run.stderr);
        assert!(
            text.chars().any(|c| (c as u32) >= 0x4E00),
            "{name} says nothing in Chinese:\n{text}"
        );
        for line in english_lines(&text) {
            report.push_str(&format!("{name}: {line}\n"));
        }
    }
    assert!(report.is_empty(), "English in a zh run:\n{report}");
}

#[test]
fn the_english_sentence_check_finds_sentences_and_spares_names() {
    assert_eq!(
        english_lines("  - no NVIDIA GPU found\n没有找到 NVIDIA GPU\n  torch install 2.15.0\n$ pip install a b c\n"),
        ["  - no NVIDIA GPU found"]
    );
    assert!(english_lines(
        "来自 https://pypi.org/simple/the/long/path 的 `cudaup mirror create` --allow-http"
    )
    .is_empty());
}
