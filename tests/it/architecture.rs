//! The house's layering, read from the source: every `crate::` path in non-test code is an edge
//! between two top-level modules of `src/` (the `pub use` aliases in `lib.rs` resolved to the
//! module they name), and the graph of those edges must have no cycle. A cycle means a lower
//! layer reaches up (settings into install, world into error, ...); the failure names the cycle
//! and, for each edge in it, the first file and line that makes it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `from -> to -> first site ("src/x.rs:12")`.
type Graph = BTreeMap<String, BTreeMap<String, String>>;

#[test]
fn no_cycle_between_top_level_modules() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = graph(&src);
    assert!(
        graph.values().map(BTreeMap::len).sum::<usize>() > 20,
        "the graph was not read: {graph:?}"
    );
    let cycles = strongly_connected(&graph);
    let report: Vec<String> = cycles
        .iter()
        .map(|set| {
            let mut lines = vec![format!("cycle: {}", set.join(", "))];
            for a in set {
                for (b, site) in &graph[a] {
                    if set.contains(b) {
                        lines.push(format!("  {a} -> {b}  ({site})"));
                    }
                }
            }
            lines.join("\n")
        })
        .collect();
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// The check itself finds a cycle when there is one (and none when there is none).
#[test]
fn the_import_graph_check_sees_a_cycle() {
    fn edge(g: &mut Graph, a: &str, b: &str) {
        g.entry(a.into())
            .or_default()
            .insert(b.into(), "site".into());
    }
    let mut g = Graph::new();
    edge(&mut g, "world", "model");
    edge(&mut g, "install", "world");
    edge(&mut g, "cli", "install");
    assert!(strongly_connected(&g).is_empty());
    edge(&mut g, "world", "cli");
    assert_eq!(
        strongly_connected(&g),
        vec![vec!["cli".to_owned(), "install".into(), "world".into()]]
    );
}

/// Every edge between top-level modules, with its first site.
fn graph(src: &Path) -> Graph {
    let modules = top_level_modules(src);
    let aliases = lib_aliases(&src.join("lib.rs"));
    let mut graph = Graph::new();
    for file in rust_files(src) {
        let rel = file.strip_prefix(src).expect("under src");
        let Some(from) = module_of(rel) else { continue };
        if rel.starts_with("fuzz") || rel.file_name().is_some_and(|n| n == "tests.rs") {
            continue; // test-only code may reach anywhere
        }
        let text = fs_err::read_to_string(&file).expect("a source file reads");
        for (line_no, line) in without_tests(&text).lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            for to in targets(code) {
                let to = aliases.get(&to).cloned().unwrap_or(to);
                if to != from && modules.contains(&to) {
                    let site = format!("src/{}:{}", rel.display(), line_no + 1);
                    graph
                        .entry(from.clone())
                        .or_default()
                        .entry(to)
                        .or_insert(site);
                }
            }
        }
    }
    graph
}

/// The first segment after each `crate::` on a line, `crate::{a::x, b}` groups included.
fn targets(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `mycrate::`, not `crate::`
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                out.push(first_ident(item.trim()));
            }
        } else {
            out.push(first_ident(rest));
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

fn first_ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The source with `#[cfg(test)]` (and `#[cfg(all(test, ...))]`) modules blanked out, line
/// numbers kept.
fn without_tests(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut skipping = false;
    let mut depth = 0i32;
    let mut armed = false;
    for line in text.lines() {
        let t = line.trim_start();
        if !skipping && (t.starts_with("#[cfg(test)]") || t.starts_with("#[cfg(all(test")) {
            armed = true;
        } else if armed && !skipping {
            if t.contains("mod ") && t.contains('{') {
                skipping = true;
                depth = 0;
            }
            armed = t.starts_with("#[");
        }
        if skipping {
            depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
            out.push('\n');
            if depth <= 0 {
                skipping = false;
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `src/x.rs` and `src/x/` for every `x` (`lib` and `main` are the crate's roots).
fn top_level_modules(src: &Path) -> BTreeSet<String> {
    fs_err::read_dir(src)
        .expect("src/ lists")
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            let name = p.file_stem()?.to_str()?.to_owned();
            (p.is_dir() || p.extension().is_some_and(|x| x == "rs")).then_some(name)
        })
        .filter(|n| n != "lib" && n != "main")
        .collect()
}

/// The top-level module a file belongs to (`None` for `lib.rs` and `main.rs`).
fn module_of(rel: &Path) -> Option<String> {
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib" && name != "main").then(|| name.to_owned())
}

/// `pub use m::{A, B};` and `pub use m::A;` in `lib.rs`: `crate::A` is module `m`.
fn lib_aliases(lib: &Path) -> BTreeMap<String, String> {
    let text = fs_err::read_to_string(lib).expect("lib.rs reads");
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let module = first_ident(rest);
        let names = rest[module.len()..].trim_start_matches("::");
        let names = names
            .trim_end_matches(';')
            .trim_matches(|c| c == '{' || c == '}');
        for name in names.split(',') {
            let name = name.split(" as ").last().unwrap_or(name).trim();
            let name = name.rsplit("::").next().unwrap_or(name);
            if !name.is_empty() {
                out.insert(name.to_owned(), module.clone());
            }
        }
    }
    out
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs_err::read_dir(dir).expect("a source dir lists").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The sets of two or more modules that reach each other (Tarjan), each sorted.
fn strongly_connected(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        let next: Vec<&'a str> = s
            .graph
            .get(v)
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        for w in next {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut set = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                set.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                set.sort();
                s.out.push(set);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}
