//! The README and `docs/` are what a user reads first: every `cudaup …` command they show must
//! be one cudaup accepts, no page may point at a path outside the repository, and the
//! `--system` document's example must be what `detect --json` really prints.

use crate::common::cudaup;
use clap::Parser;
use std::path::{Path, PathBuf};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown page under docs/.
fn pages() -> Vec<(PathBuf, String)> {
    let mut paths = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = fs_err::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths
        .into_iter()
        .map(|p| {
            let text = fs_err::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// Splits a shell command line into words: single and double quotes, no expansion.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(word);
    }
    out
}

/// The cudaup invocation in a shell line, if it is one: `cudaup ARGS`, `$ cudaup ARGS`, or
/// `cargo run [--release] -- ARGS`, cut at a comment, a pipe, a redirection or `&&`.
/// A synopsis (`[--json]`, `full|pytorch`, `…`) is not a command and gives `None`.
fn invocation(line: &str) -> Option<Vec<String>> {
    let line = line.trim().trim_start_matches("$ ").trim();
    let mut ws = words(line);
    let cut = ws
        .iter()
        .position(|w| {
            w.starts_with('#') || matches!(w.as_str(), "|" | "&&" | ";" | ">" | "2>&1" | "&")
        })
        .unwrap_or(ws.len());
    ws.truncate(cut);
    let args = match ws.first().map(String::as_str) {
        Some("cudaup") => ws[1..].to_vec(),
        Some("cargo") if ws.get(1).map(String::as_str) == Some("run") => {
            let dash = ws.iter().position(|w| w == "--")?;
            ws[dash + 1..].to_vec()
        }
        _ => return None,
    };
    let synopsis = args
        .iter()
        .any(|a| a.contains('[') || a.contains('|') || a.contains('…') || a.contains("..."));
    if synopsis {
        return None;
    }
    let mut argv = vec!["cudaup".to_owned()];
    argv.extend(args);
    Some(argv)
}

/// Where a command was shown: a code block holds whole commands, a span in prose may only name
/// one (`cudaup fleet report`, without the arguments it needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    Block,
    Prose,
}

/// Every cudaup command a page shows: shell lines in its code blocks (in a block with `$ `
/// prompts only the prompted lines, the rest being output; a trailing `\` joins the next
/// line) and inline code spans in its prose.
fn commands(text: &str) -> Vec<(usize, Shown, Vec<String>)> {
    let mut out = Vec::new();
    let mut fence: Option<(String, bool)> = None;
    let mut pending = String::new();
    let lines: Vec<&str> = text.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => {
                    let prompted = lines[n + 1..]
                        .iter()
                        .take_while(|l| !l.trim_start().starts_with("```"))
                        .any(|l| l.trim_start().starts_with("$ "));
                    Some((rest.trim().to_owned(), prompted))
                }
            };
            continue;
        }
        match &fence {
            Some((lang, _)) if matches!(lang.as_str(), "json" | "toml" | "yaml" | "ini") => {}
            Some((_, prompted)) => {
                if *prompted && pending.is_empty() && !trimmed.starts_with("$ ") {
                    continue;
                }
                let joined = format!("{pending}{trimmed}");
                if let Some(head) = joined.strip_suffix('\\') {
                    pending = format!("{head} ");
                    continue;
                }
                pending.clear();
                if let Some(argv) = invocation(&joined) {
                    out.push((n + 1, Shown::Block, argv));
                }
            }
            None => {
                for (i, span) in line.split('`').enumerate() {
                    if i % 2 == 1 && (span.starts_with("cudaup ") || span == "cudaup") {
                        if let Some(argv) = invocation(span) {
                            out.push((n + 1, Shown::Prose, argv));
                        }
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_command_in_the_readme_and_docs_parses() {
    let mut failures = Vec::new();
    let mut count = 0;
    for (path, text) in pages() {
        for (line, shown, argv) in commands(&text) {
            count += 1;
            match cudaup::cli::Cli::try_parse_from(&argv) {
                Ok(_) => {}
                // Prose may name a command without the arguments it needs.
                Err(e)
                    if shown == Shown::Prose
                        && e.kind() == clap::error::ErrorKind::MissingRequiredArgument => {}
                Err(e) => {
                    let first = e.to_string().lines().next().unwrap_or_default().to_owned();
                    failures.push(format!(
                        "{}:{line}: `{}`: {first}",
                        path.strip_prefix(repo()).unwrap().display(),
                        argv.join(" ")
                    ));
                }
            }
        }
    }
    assert!(
        count > 50,
        "only {count} commands found: is the extraction broken?"
    );
    assert!(
        failures.is_empty(),
        "{} of {count} commands do not parse:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_extraction_finds_commands_and_skips_synopses() {
    let page = "Run `cudaup plan --profile pytorch` or `cudaup env --shell fish | source`.\n\
                ```\ncudaup plan [--json]\n$ cudaup install --profile cuda-dev \\\n    --yes   # go\n```\n\
                ```sh\ncargo run --release -- wizard     # set up\n```\n";
    let found: Vec<String> = commands(page)
        .into_iter()
        .map(|(_, _, a)| a.join(" "))
        .collect();
    assert_eq!(
        found,
        [
            "cudaup plan --profile pytorch",
            "cudaup env --shell fish",
            "cudaup install --profile cuda-dev --yes",
            "cudaup wizard",
        ]
    );
    // And a command cudaup does not accept is caught.
    let bad = invocation("cudaup plan --profile gpu").unwrap();
    assert!(cudaup::cli::Cli::try_parse_from(&bad).is_err());
}

#[test]
fn no_page_points_outside_the_repository() {
    // A user has only the repository: no page may send them to the developers' machines.
    let forbidden = [
        "/work/",
        "/root/",
        "../shared",
        "shared/design",
        "shared/reference",
    ];
    let mut found = Vec::new();
    for (path, text) in pages() {
        for (n, line) in text.lines().enumerate() {
            let scratch = line
                .match_indices("/tmp/cudaup-")
                // scripts/bench-install's documented defaults are its own, not a machine's.
                .any(|(i, _)| !line[i..].starts_with("/tmp/cudaup-bench-"));
            if scratch || forbidden.iter().any(|f| line.contains(f)) {
                found.push(format!("{}:{}: {line}", path.display(), n + 1));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
    let readme = &pages()[0].1;
    assert!(
        !readme.contains("target/debug/"),
        "the README shows a debug-build path"
    );
    assert!(
        readme.lines().count() < 250,
        "the README is a front page: long text goes under docs/"
    );
}

#[test]
fn every_link_into_docs_leads_to_a_page() {
    let mut broken = Vec::new();
    for (path, text) in pages() {
        let dir = path.parent().unwrap();
        for (i, part) in text.split("](").enumerate().skip(1) {
            let target = part.split(')').next().unwrap_or_default();
            let file = target.split('#').next().unwrap_or_default();
            if file.is_empty() || file.contains("://") || file.starts_with("mailto:") {
                continue;
            }
            if !dir.join(file).exists() {
                broken.push(format!("{} link {i}: {target}", path.display()));
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The example in docs/system-document.md is generated, not written: it must be exactly what
/// `cudaup detect --json --system-root tests/fixtures/h200-root` prints today.
#[test]
fn the_system_document_example_is_what_detect_prints() {
    let home = tempfile::tempdir().unwrap();
    let root = repo().join("tests/fixtures/h200-root");
    let run = cudaup(
        &["detect", "--json", "--system-root", root.to_str().unwrap()],
        home.path(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let page = fs_err::read_to_string(repo().join("docs/system-document.md")).unwrap();
    let example = page
        .split("```json\n")
        .nth(1)
        .and_then(|s| s.split("\n```").next())
        .expect("the page has a JSON example");
    let shown: serde_json::Value = serde_json::from_str(example).unwrap();
    assert_eq!(
        shown,
        run.json(),
        "docs/system-document.md's example is stale: paste the output of the command it names"
    );
}
