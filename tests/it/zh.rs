//! Chinese end to end (issue 37): under `--lang zh` the flows a newcomer meets first — `plan`,
//! an install refused, a dry-run install, `wizard --yes --dry-run`, a refusal for want of any
//! download site, an error — print no English sentence. What counts as one: three or more
//! lower-case English words in a row, or two small words such as `the`, `no`, once URLs,
//! paths, flags, `code`, "quoted" words of other programs, commands (`$ …`, `sudo …`,
//! `cudaup …`, whatever comes before a `   # comment`), lists of bare names and JSON are set
//! aside (names — NVIDIA, PyTorch,
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
        // `code` spans are commands and names; "quoted" text is another program's own words
        // (CUDA's "no kernel image is available…"), which users search for as printed.
        let mut plain = String::new();
        let mut quote = None;
        for c in t.chars() {
            if quote == Some(c) {
                quote = None;
                plain.push(' ');
            } else if quote.is_none() && (c == '`' || c == '"') {
                quote = Some(c);
                plain.push(' ');
            } else if quote.is_none() {
                plain.push(c);
            }
        }
        // A command with its comment (`CMD   # why`): the command is as typed.
        let plain = match plain.find("   # ") {
            Some(i) => plain[i..].to_owned(),
            None => plain,
        };
        let plain = without_commands(&plain);
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
        // A line of bare lower-case names (the toolkit's components) is a list, not a sentence.
        let names = plain.split_whitespace().all(|w| {
            w.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_-+".contains(c))
        });
        if (worst >= 3 || small >= 2) && !(names && small == 0) {
            found.push(line.to_owned());
        }
    }
    found
}

/// `text` with the shell commands it shows set aside: from `sudo ` or `cudaup ` (at the start
/// or after a space or a Chinese mark) to a `  # ` comment, a Chinese character or the end.
fn without_commands(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        let starts = rest.starts_with("sudo ") || rest.starts_with("cudaup ");
        let after_break =
            out.is_empty() || out.ends_with(|c: char| c.is_whitespace() || (c as u32) >= 0x3000);
        if starts && after_break {
            let end = rest
                .find("  # ")
                .into_iter()
                .chain(rest.find(|c: char| (c as u32) >= 0x3000))
                .min()
                .unwrap_or(rest.len());
            out.push(' ');
            rest = &rest[end..];
            continue;
        }
        let c = rest.chars().next().expect("not empty");
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
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
    // Commands, other programs' quoted words and lists of names are not sentences…
    assert!(english_lines(concat!(
        "    修复：    sudo modprobe nvidia   # 它打印的错误会说明原因\n",
        "    修复：    cudaup container setup\n",
        "CUDA 调用会报 \"no kernel image is available for execution on the device\"\n",
        "  nvcc crt nvvm nvptxcompiler cudart culibos cccl nvrtc\n",
    ))
    .is_empty());
    // …but a sentence after a command's comment still is.
    assert_eq!(
        english_lines("  sudo reboot   # and the module will load then\n").len(),
        1
    );
}
