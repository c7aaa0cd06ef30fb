//! The library's own sentences — plan reasons, install report lines, refusals, errors and their
//! hints, which the library words in English — held as data with their Chinese
//! (`messages.toml`, one `[[message]]` per sentence: `en` with `{}` for each value, `zh` with
//! `{0}`, `{1}`… for the same values in any order). A zh run says each line through
//! [`translate`]: the first template the whole line matches gives its Chinese, the values filled
//! in (each value itself translated when it is a sentence of the table); a line of sentences
//! joined by `; ` is translated sentence by sentence. A line no template matches stays as it is:
//! `tests/it/zh.rs` finds those in the flows a newcomer meets first.
//!
//! [`Translating`] applies it to everything a command prints on stdout in a zh run, line by line
//! (indentation, bullets and colours kept; JSON left alone), so no call site needs to know.

use std::io::{self, Write};
use std::sync::OnceLock;

use super::Lang;

#[derive(serde::Deserialize)]
struct File {
    message: Vec<Entry>,
}

#[derive(serde::Deserialize)]
struct Entry {
    en: String,
    zh: String,
}

/// One sentence: the English split at its holes, and the Chinese.
struct Template {
    pieces: Vec<String>,
    zh: String,
}

fn table() -> &'static [Template] {
    static TABLE: OnceLock<Vec<Template>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let file: File = toml::from_str(include_str!("messages.toml"))
            .expect("messages.toml is checked by its test");
        file.message
            .into_iter()
            .map(|e| Template {
                pieces: e.en.split("{}").map(str::to_owned).collect(),
                zh: e.zh,
            })
            .collect()
    })
}

/// Whether `value`'s brackets close in order: a value never cuts a parenthesised aside in two
/// (`PyTorch's index {}: {}` must not take `URL (not usable` as the URL).
fn balanced(value: &str) -> bool {
    let mut depth = 0i32;
    for c in value.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// The values of `line` in the holes of `pieces`, when the whole line matches.
fn capture(pieces: &[String], line: &str) -> Option<Vec<String>> {
    let rest = line.strip_prefix(pieces[0].as_str())?;
    if pieces.len() == 1 {
        return rest.is_empty().then(Vec::new);
    }
    let next = &pieces[1];
    if next.is_empty() {
        // A hole at the end (or two holes side by side: the first takes nothing more).
        if pieces.len() == 2 {
            return (!rest.is_empty() && balanced(rest)).then(|| vec![rest.to_owned()]);
        }
    }
    // Each place the next literal occurs, shortest value first.
    let mut from = 0;
    while let Some(i) = rest[from..].find(next.as_str()).map(|i| i + from) {
        if (i > 0 || next.is_empty()) && balanced(&rest[..i]) {
            if let Some(mut more) = capture(&pieces[1..], &rest[i..]) {
                more.insert(0, rest[..i].to_owned());
                return Some(more);
            }
        }
        from = i + next.len().max(1);
        if from > rest.len() {
            break;
        }
        while !rest.is_char_boundary(from) {
            from += 1;
        }
    }
    None
}

fn fill(zh: &str, values: &[String]) -> String {
    let mut o = zh.to_owned();
    for (i, v) in values.iter().enumerate() {
        o = o.replace(&format!("{{{i}}}"), &say(v).unwrap_or_else(|| v.clone()));
    }
    o
}

/// The Chinese of one whole sentence, if the table has it.
fn sentence(line: &str) -> Option<String> {
    if line.trim().is_empty() {
        return None;
    }
    table()
        .iter()
        .find_map(|t| capture(&t.pieces, line).map(|v| fill(&t.zh, &v)))
}

/// The Chinese of `line`: the table's sentence, else each of its `; `-joined sentences (when
/// one of them is in the table).
fn say(line: &str) -> Option<String> {
    if let Some(zh) = sentence(line) {
        return Some(zh);
    }
    if !line.contains("; ") {
        return None;
    }
    let parts: Vec<(String, bool)> = line
        .split("; ")
        .map(|p| match sentence(p) {
            Some(zh) => (zh, true),
            None => (p.to_owned(), false),
        })
        .collect();
    parts.iter().any(|(_, t)| *t).then(|| {
        parts
            .into_iter()
            .map(|(p, _)| p)
            .collect::<Vec<_>>()
            .join("；")
    })
}

/// `line` in `lang`: unchanged in English; in Chinese, [`say`]'s, else the line as it is.
pub fn translate(lang: Lang, line: &str) -> String {
    match lang {
        Lang::En => line.to_owned(),
        Lang::Zh => say(line).unwrap_or_else(|| line.to_owned()),
    }
}

/// One printed line in `lang`: its indentation, colour codes and bullet (`- `, `! `) kept, the
/// rest translated.
pub fn translate_line(lang: Lang, line: &str) -> String {
    if lang == Lang::En {
        return line.to_owned();
    }
    let trimmed = line.trim_start();
    // JSON documents stay as the library wrote them.
    if trimmed.starts_with(['{', '}', '[', ']', '"']) {
        return line.to_owned();
    }
    let (head, body) = split_head(line);
    let (body, tail) = split_tail(body);
    // A table row or a labelled line: the cell after the last column gap, or the text after a
    // Chinese label (`修复： …`), first — a template that starts with a value would otherwise
    // take the label into that value.
    let cut = body.rfind("  ").map(|i| i + 2).or_else(|| {
        body.find("： ").map(|i| i + "： ".len()).or_else(|| {
            body.find(": ")
                .filter(|i| !body[..*i].is_ascii())
                .map(|i| i + 2)
        })
    });
    if let Some(i) = cut {
        let (label, cell) = body.split_at(i);
        if let Some(zh) = say(cell.trim_start()) {
            let gap = &cell[..cell.len() - cell.trim_start().len()];
            return format!("{head}{label}{gap}{zh}{tail}");
        }
    }
    if let Some(zh) = sentence(body) {
        return format!("{head}{zh}{tail}");
    }
    match say(body) {
        Some(zh) => format!("{head}{zh}{tail}"),
        None => format!("{head}{body}{tail}"),
    }
}

/// Leading spaces, colour codes and a bullet; the rest.
fn split_head(line: &str) -> (&str, &str) {
    let mut i = 0;
    let b = line.as_bytes();
    loop {
        if i < b.len() && b[i] == b' ' {
            i += 1;
        } else if line[i..].starts_with("\u{1b}[") {
            match line[i..].find('m') {
                Some(m) => i += m + 1,
                None => break,
            }
        } else if let Some(bullet) = ["- ", "! "].iter().find(|p| line[i..].starts_with(**p)) {
            i += bullet.len();
        } else {
            break;
        }
    }
    line.split_at(i)
}

/// The line without its trailing colour codes; those codes.
fn split_tail(body: &str) -> (&str, &str) {
    let mut end = body.len();
    while body[..end].ends_with('m') {
        match body[..end].rfind("\u{1b}[") {
            Some(i) if body[i..end].bytes().all(|c| c != b' ') => end = i,
            _ => break,
        }
    }
    body.split_at(end)
}

/// A writer that says every whole line in `lang` ([`translate_line`]); a partial line (a prompt)
/// goes out as it is when flushed.
pub struct Translating<'a> {
    inner: &'a mut dyn Write,
    lang: Lang,
    pending: Vec<u8>,
}

impl<'a> Translating<'a> {
    /// Wraps `inner`.
    pub fn new(inner: &'a mut dyn Write, lang: Lang) -> Self {
        Self {
            inner,
            lang,
            pending: Vec::new(),
        }
    }

    fn emit_lines(&mut self) -> io::Result<()> {
        while let Some(i) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=i).collect();
            let text = String::from_utf8_lossy(&line[..line.len() - 1]);
            writeln!(self.inner, "{}", translate_line(self.lang, &text))?;
        }
        Ok(())
    }
}

impl Write for Translating<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        self.emit_lines()?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.emit_lines()?;
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            self.inner.write_all(&rest)?;
        }
        self.inner.flush()
    }
}

impl Drop for Translating<'_> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests;
