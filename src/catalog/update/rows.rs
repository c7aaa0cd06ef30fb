//! Edits manifest text row by row, so a refreshed catalog is a reviewable diff: untouched rows and
//! every comment stay byte for byte; a changed row changes only its changed lines.
//!
//! A row is a `[[name]]` header and the `key = value` lines under it, up to the first blank line,
//! comment or header — the form every manifest in `manifests/` is written in.

use crate::model::version::Version;

/// A row: the header's line and the line after its last key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The header line.
    pub start: usize,
    /// One past the last key line.
    pub end: usize,
}

/// A manifest's lines.
#[derive(Debug, Clone)]
pub struct Doc {
    lines: Vec<String>,
    trailing_newline: bool,
}

/// A TOML string literal.
pub fn lit(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

/// A TOML array of version strings.
pub fn lit_versions<'a>(vs: impl IntoIterator<Item = &'a Version>) -> String {
    let items: Vec<String> = vs.into_iter().map(|v| lit(&v.to_string())).collect();
    format!("[{}]", items.join(", "))
}

/// A TOML array of strings.
pub fn lit_strings<'a>(vs: impl IntoIterator<Item = &'a String>) -> String {
    let items: Vec<String> = vs.into_iter().map(|v| lit(v)).collect();
    format!("[{}]", items.join(", "))
}

impl Doc {
    /// Splits `text` into lines.
    pub fn new(text: &str) -> Self {
        Self {
            lines: text.lines().map(str::to_owned).collect(),
            trailing_newline: text.ends_with('\n'),
        }
    }

    /// The text again.
    pub fn text(&self) -> String {
        let mut s = self.lines.join("\n");
        if self.trailing_newline {
            s.push('\n');
        }
        s
    }

    /// Every `[[header]]` row, in order.
    pub fn rows(&self, header: &str) -> Vec<Span> {
        let tag = format!("[[{header}]]");
        let mut out = Vec::new();
        for (i, l) in self.lines.iter().enumerate() {
            if l.trim() == tag {
                let mut end = i + 1;
                while end < self.lines.len() && is_key_line(&self.lines[end]) {
                    end += 1;
                }
                out.push(Span { start: i, end });
            }
        }
        out
    }

    /// The row whose header is line `start`.
    fn span_at(&self, start: usize) -> Span {
        let mut end = start + 1;
        while end < self.lines.len() && is_key_line(&self.lines[end]) {
            end += 1;
        }
        Span { start, end }
    }

    /// The raw value of `key` in `row`.
    pub fn raw(&self, row: Span, key: &str) -> Option<String> {
        let row = self.span_at(row.start);
        self.lines[row.start + 1..row.end].iter().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == key).then(|| v.trim().to_owned())
        })
    }

    /// The string value of `key` in `row`.
    pub fn string(&self, row: Span, key: &str) -> Option<String> {
        let raw = self.raw(row, key)?;
        match toml::from_str::<toml::Table>(&format!("v = {raw}"))
            .ok()?
            .remove("v")?
        {
            toml::Value::String(s) => Some(s),
            other => Some(other.to_string()),
        }
    }

    /// The row whose `key` has string value `value`.
    pub fn find(&self, header: &str, key: &str, value: &str) -> Option<Span> {
        self.rows(header)
            .into_iter()
            .find(|r| self.string(*r, key).as_deref() == Some(value))
    }

    /// Sets `key = literal` in `row`: the line is replaced, or added before `source` (which
    /// stays last). Returns whether the text changed.
    pub fn set(&mut self, row: Span, key: &str, literal: &str) -> bool {
        // Earlier edits may have added lines to the row: measure it again.
        let row = self.span_at(row.start);
        let line = format!("{key} = {literal}");
        for i in row.start + 1..row.end {
            if self.lines[i]
                .split_once('=')
                .is_some_and(|(k, _)| k.trim() == key)
            {
                if self.lines[i] == line {
                    return false;
                }
                self.lines[i] = line;
                return true;
            }
        }
        let at = (row.start + 1..row.end)
            .find(|i| {
                self.lines[*i]
                    .split_once('=')
                    .is_some_and(|(k, _)| k.trim() == "source")
            })
            .unwrap_or(row.end);
        self.lines.insert(at, line);
        true
    }

    /// Removes `key` from `row`; returns whether it was there.
    pub fn remove(&mut self, row: Span, key: &str) -> bool {
        let row = self.span_at(row.start);
        let at = (row.start + 1..row.end).find(|i| {
            self.lines[*i]
                .split_once('=')
                .is_some_and(|(k, _)| k.trim() == key)
        });
        match at {
            Some(i) => {
                self.lines.remove(i);
                true
            }
            None => false,
        }
    }

    /// Sets a top-level `key = literal` (before the first table header), replacing its line or
    /// adding it after `schema_version`.
    pub fn set_top(&mut self, key: &str, literal: &str) {
        let line = format!("{key} = {literal}");
        let first_table = self
            .lines
            .iter()
            .position(|l| l.trim_start().starts_with('['))
            .unwrap_or(self.lines.len());
        for l in &mut self.lines[..first_table] {
            if l.split_once('=').is_some_and(|(k, _)| k.trim() == key) {
                *l = line;
                return;
            }
        }
        let at = self.lines[..first_table]
            .iter()
            .position(|l| l.starts_with("schema_version"))
            .map_or(first_table, |i| i + 1);
        self.lines.insert(at, line);
    }

    /// Inserts `block` (lines, ending with a blank line) before line `at`.
    pub fn insert(&mut self, at: usize, block: Vec<String>) {
        let at = at.min(self.lines.len());
        self.lines.splice(at..at, block);
    }

    /// Appends `block` at the end of the file.
    pub fn append(&mut self, mut block: Vec<String>) {
        if self.lines.last().is_some_and(|l| !l.trim().is_empty()) {
            block.insert(0, String::new());
        }
        while block.last().is_some_and(|l| l.is_empty()) {
            block.pop();
        }
        self.lines.extend(block);
    }

    /// The lines of a new row: header, `key = literal` lines, a blank line.
    pub fn block(header: &str, keys: &[(&str, String)]) -> Vec<String> {
        let mut out = vec![format!("[[{header}]]")];
        out.extend(keys.iter().map(|(k, v)| format!("{k} = {v}")));
        out.push(String::new());
        out
    }

    /// The line before which a row for `version` goes among `header` rows ordered by `key`,
    /// newest first (`descending`) or oldest first: the first row it precedes, or `None` (after
    /// the last).
    pub fn position(
        &self,
        header: &str,
        key: &str,
        version: &Version,
        descending: bool,
    ) -> Option<usize> {
        self.rows(header).into_iter().find_map(|r| {
            let v = self.string(r, key).and_then(|s| Version::parse(&s))?;
            let before = if descending {
                &v < version
            } else {
                &v > version
            };
            before.then(|| self.comment_start(r.start))
        })
    }

    /// Whether line `i` exists and is blank.
    pub fn is_blank(&self, i: usize) -> bool {
        self.lines.get(i).is_some_and(|l| l.trim().is_empty())
    }

    /// The first line of the comment block directly above line `i`.
    pub fn comment_start(&self, i: usize) -> usize {
        let mut s = i;
        while s > 0 && self.lines[s - 1].trim_start().starts_with('#') {
            s -= 1;
        }
        s
    }

    /// One past the last line of `row` and the rows nested under it (`[[release.variant]]`).
    pub fn end_with_children(&self, row: Span, child: &str) -> usize {
        let tag = format!("[[{child}]]");
        let mut end = row.end;
        let mut i = row.end;
        while i < self.lines.len() {
            let t = self.lines[i].trim();
            if t == tag {
                let mut e = i + 1;
                while e < self.lines.len() && is_key_line(&self.lines[e]) {
                    e += 1;
                }
                end = e;
                i = e;
            } else if t.is_empty() || t.starts_with('#') {
                i += 1;
            } else {
                break;
            }
        }
        end
    }
}

fn is_key_line(l: &str) -> bool {
    let t = l.trim();
    !t.is_empty() && !t.starts_with('#') && !t.starts_with('[') && t.contains('=')
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# head\nschema_version = 1\n\n# newest\n[[release]]\nversion = \"2.0\"\nsource = \"a\"\n\n[[release]]\nversion = \"1.0\"\nsource = \"b\"\n";

    #[test]
    fn edits_keep_everything_else_byte_for_byte() {
        let mut d = Doc::new(TEXT);
        assert_eq!(d.text(), TEXT);
        let r = d.find("release", "version", "1.0").unwrap();
        assert!(d.set(r, "date", &lit("2026-01-01")));
        assert!(!d.set(r, "date", &lit("2026-01-01")), "no change, no edit");
        let at = d.position("release", "version", &Version::parse("3.0").unwrap(), true);
        assert_eq!(at, Some(3), "before the comment above the newest row");
        d.insert(
            at.unwrap(),
            Doc::block("release", &[("version", lit("3.0")), ("source", lit("c"))]),
        );
        assert_eq!(
            d.text(),
            "# head\nschema_version = 1\n\n[[release]]\nversion = \"3.0\"\nsource = \"c\"\n\n# newest\n[[release]]\nversion = \"2.0\"\nsource = \"a\"\n\n[[release]]\nversion = \"1.0\"\ndate = \"2026-01-01\"\nsource = \"b\"\n"
        );
        assert_eq!(
            d.position("release", "version", &Version::parse("0.5").unwrap(), true),
            None
        );
        let parsed: toml::Table = toml::from_str(&d.text()).unwrap();
        assert_eq!(parsed["release"].as_array().unwrap().len(), 3);
    }
}
