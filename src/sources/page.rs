//! The one reader of package index pages: PEP 691 JSON and PEP 503 HTML (and any page of links
//! to files, a `--find-links` listing too). Both the install routes and `manifests update` read
//! pages through it. A page comes from a publisher, a mirror or a hostile server alike, so any
//! bytes give a list of files or an error, never a panic.

use serde_json::Value;

use crate::fetch::Location;

/// A file listed on an index page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexFile {
    /// File name.
    pub filename: String,
    /// Where to get it.
    pub location: Location,
    /// Its sha256, when stated.
    pub sha256: Option<String>,
    /// Its size, when stated (PEP 700).
    pub size: Option<u64>,
    /// Whether it was yanked.
    pub yanked: bool,
    /// `requires-python` (`data-requires-python`), entities decoded.
    pub requires_python: Option<String>,
    /// The index serves `<url>.metadata` (PEP 658 / 714).
    pub core_metadata: bool,
    /// `upload-time` (PEP 700), as written.
    pub upload_time: Option<String>,
}

impl IndexFile {
    /// A file known only by name and place (a flat folder of wheels).
    pub fn plain(filename: String, location: Location) -> Self {
        Self {
            filename,
            location,
            sha256: None,
            size: None,
            yanked: false,
            requires_python: None,
            core_metadata: false,
            upload_time: None,
        }
    }
}

/// Reads a project page: PEP 691 JSON when it looks like JSON, else PEP 503 HTML. An error when
/// it is neither, or JSON without the `files` PEP 691 requires.
pub fn parse_page(page: &Location, bytes: &[u8]) -> Result<Vec<IndexFile>, String> {
    let text = String::from_utf8_lossy(bytes);
    let head = text.trim_start();
    if head.starts_with('{') {
        return parse_json(page, bytes).map_err(|m| format!("not a PEP 691 project page: {m}"));
    }
    if text.contains("<a ") || text.contains("<html") || text.contains("<!DOCTYPE") {
        return Ok(parse_html(page, &text));
    }
    Err("neither a PEP 691 JSON page nor a PEP 503 HTML page".into())
}

/// Parses a PEP 691 JSON page. Every file must have a `filename` and a `url` (PEP 691); a link
/// that does not resolve leaves its file out.
pub fn parse_json(page: &Location, bytes: &[u8]) -> Result<Vec<IndexFile>, String> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let files = doc
        .get("files")
        .and_then(Value::as_array)
        .ok_or("no `files` array")?;
    let mut out = Vec::new();
    for f in files {
        let filename = f
            .get("filename")
            .and_then(Value::as_str)
            .ok_or("a file without `filename`")?;
        let url = f
            .get("url")
            .and_then(Value::as_str)
            .ok_or("a file without `url`")?;
        let Some(location) = resolve(page, url) else {
            continue;
        };
        let set = |k: &str| {
            f.get(k)
                .is_some_and(|v| !v.is_null() && v.as_bool() != Some(false))
        };
        out.push(IndexFile {
            filename: filename.to_owned(),
            location,
            sha256: f
                .get("hashes")
                .and_then(|h| h.get("sha256"))
                .and_then(Value::as_str)
                .map(str::to_ascii_lowercase),
            size: f.get("size").and_then(Value::as_u64),
            yanked: set("yanked"),
            requires_python: f
                .get("requires-python")
                .and_then(Value::as_str)
                .map(str::to_owned),
            core_metadata: set("core-metadata") || set("data-dist-info-metadata"),
            upload_time: f
                .get("upload-time")
                .and_then(Value::as_str)
                .map(str::to_owned),
        });
    }
    Ok(out)
}

/// Parses a PEP 503 HTML page: `<a href="URL#sha256=HEX" data-requires-python="…"
/// data-core-metadata="…">filename</a>`. An anchor without a closing tag, or without an
/// `href`, lists nothing.
pub fn parse_html(page: &Location, text: &str) -> Vec<IndexFile> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<a ") {
        rest = &rest[start + 3..];
        let close = match tag_end(rest) {
            TagEnd::At(close) => close,
            // `<a </a>`: another tag starts inside this one; this anchor has no text, no file.
            TagEnd::Broken(at) => {
                rest = &rest[at..];
                continue;
            }
            TagEnd::Missing => break,
        };
        let attrs = &rest[..close];
        let after = &rest[close + 1..];
        // The text runs from the end of the opening tag to the closing one, which comes after it.
        let Some(end) = after.find("</a>") else { break };
        let text = &after[..end];
        if text.contains("<a ") {
            // Not closed before the next anchor opens: that one is read on its own.
            rest = after;
            continue;
        }
        let filename = decode(text.trim());
        rest = &after[end..];
        let Some(href) = attr(attrs, "href") else {
            continue;
        };
        let (url, fragment) = href.split_once('#').unwrap_or((&href, ""));
        let Some(location) = resolve(page, url) else {
            continue;
        };
        out.push(IndexFile {
            filename,
            location,
            sha256: fragment
                .strip_prefix("sha256=")
                .map(str::to_ascii_lowercase),
            size: None,
            yanked: has_attr(attrs, "data-yanked"),
            requires_python: attr(attrs, "data-requires-python"),
            core_metadata: has_attr(attrs, "data-core-metadata")
                || has_attr(attrs, "data-dist-info-metadata"),
            upload_time: None,
        });
    }
    out
}

enum TagEnd {
    /// The `>` that ends the tag.
    At(usize),
    /// A `<` outside quotes: the tag never ends; scanning goes on from there.
    Broken(usize),
    /// The text ends first.
    Missing,
}

/// Where the tag whose attributes `s` starts with ends: the first `>` outside quotes (some
/// indexes write `data-requires-python=">=3.9"` unescaped).
fn tag_end(s: &str) -> TagEnd {
    let mut quote = None;
    for (i, b) in s.bytes().enumerate() {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'>') => return TagEnd::At(i),
            (None, b'<') => return TagEnd::Broken(i),
            (None, _) => {}
        }
    }
    TagEnd::Missing
}

/// The HTML character references index pages use.
fn decode(s: &str) -> String {
    s.replace("&gt;", ">")
        .replace("&lt;", "<")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Where attribute `name` starts in `attrs` (at a word boundary: `href` is not `data-href`).
fn attr_at(attrs: &str, name: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = attrs[from..].find(name) {
        let at = from + i;
        let before_ok = at == 0 || attrs.as_bytes()[at - 1].is_ascii_whitespace();
        let next = attrs.as_bytes().get(at + name.len()).copied();
        if before_ok
            && matches!(
                next,
                None | Some(b'=' | b' ' | b'\t' | b'\n' | b'\r' | b'/')
            )
        {
            return Some(at);
        }
        from = at + name.len();
    }
    None
}

fn has_attr(attrs: &str, name: &str) -> bool {
    attr_at(attrs, name).is_some()
}

/// The quoted value of attribute `name`, character references decoded.
fn attr(attrs: &str, name: &str) -> Option<String> {
    let rest = attrs[attr_at(attrs, name)? + name.len()..].strip_prefix('=')?;
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let rest = &rest[1..];
    rest.find(quote).map(|e| decode(&rest[..e]))
}

/// Resolves a link on `page` (absolute, root-relative or relative).
pub fn resolve(page: &Location, link: &str) -> Option<Location> {
    match page {
        Location::Http(u) => u.join(link).ok().map(Location::Http),
        Location::File(p) => {
            if link.starts_with("http://")
                || link.starts_with("https://")
                || link.starts_with("file://")
            {
                return Location::parse(link).ok();
            }
            // A static index's page is `<dir>/index.html`; links are relative to `<dir>/`.
            let dir = if p.extension().is_some() {
                p.parent()?.to_owned()
            } else {
                p.clone()
            };
            // A link is a URL: `torch-2.14.1%2Bcu130-….whl` names the file `…+cu130…` (PyTorch's
            // pages, and folders copied from them, escape `+`). A segment that decodes to a
            // separator or a control character names no file.
            let mut path = if link.starts_with('/') {
                std::path::PathBuf::from("/")
            } else {
                dir
            };
            for seg in link.split('/').filter(|s| !s.is_empty()) {
                let seg = percent_decode(seg)?;
                if seg.contains(['/', '\\']) || seg.chars().any(char::is_control) {
                    return None;
                }
                path.push(seg);
            }
            Some(Location::File(normalize_path(&path)))
        }
    }
}

/// `seg` with its `%XX` escapes decoded; `None` for a broken escape or bytes that are not UTF-8.
pub fn percent_decode(seg: &str) -> Option<String> {
    let b = seg.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn normalize_path(p: &std::path::Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 25, finding 1: `<a </a>` made both former parsers slice backwards (exit 101).
    #[test]
    fn an_anchor_closed_inside_its_own_tag_is_no_file_not_a_panic() {
        let page = Location::parse("https://pypi.org/simple/x/").unwrap();
        for html in [
            "<a </a>",
            "<html><a </a>",
            "<a href=\"x.whl\"</a>",
            "<a </a><a href=\"x-1.0-py3-none-any.whl#sha256=00\">x-1.0-py3-none-any.whl</a>",
            "<a >",
            "<a \u{e9}>\u{e9}</a>",
            "<a href='",
            "<a href=",
            "<a href=\"x.whl\" title='<a '>",
            "<a a=\"",
        ] {
            let files = parse_html(&page, html);
            assert!(files.len() <= 1, "{html}: {files:?}");
            let _ = parse_page(&page, html.as_bytes());
        }
        let files = parse_html(
            &page,
            "<a </a><a href=\"x-1.0-py3-none-any.whl#sha256=00\">x-1.0-py3-none-any.whl</a>",
        );
        assert_eq!(
            files
                .iter()
                .map(|f| f.filename.as_str())
                .collect::<Vec<_>>(),
            ["x-1.0-py3-none-any.whl"]
        );
    }

    #[test]
    fn a_raw_greater_than_inside_a_quoted_attribute_does_not_end_the_tag() {
        let page = Location::parse("https://pypi.org/simple/x/").unwrap();
        let f = parse_html(
            &page,
            r#"<a href="x-1.0-py3-none-any.whl" data-requires-python=">=3.9">x-1.0-py3-none-any.whl</a>"#,
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].filename, "x-1.0-py3-none-any.whl");
        assert_eq!(f[0].requires_python.as_deref(), Some(">=3.9"));
    }

    #[test]
    fn attributes_are_matched_whole_and_decoded() {
        let page = Location::parse("https://pypi.org/simple/x/").unwrap();
        let html = r#"<a data-href="evil.whl" href="x-1.0-py3-none-any.whl?a=1&amp;b=2#sha256=AB" data-requires-python="&gt;=3.10" data-yanked>x-1.0-py3-none-any.whl</a>"#;
        let f = parse_html(&page, html);
        assert_eq!(f.len(), 1);
        assert_eq!(
            f[0].location.to_string(),
            "https://pypi.org/simple/x/x-1.0-py3-none-any.whl?a=1&b=2"
        );
        assert_eq!(f[0].sha256.as_deref(), Some("ab"));
        assert_eq!(f[0].requires_python.as_deref(), Some(">=3.10"));
        assert!(f[0].yanked);
        assert!(!f[0].core_metadata);
    }

    #[cfg(unix)] // Unix file URLs (file:///srv/...); Windows ones carry a drive letter
    #[test]
    fn a_folder_pages_escaped_links_name_its_files() {
        let page = Location::File("/srv/whl/torch/index.html".into());
        let files = parse_html(
            &page,
            r#"<a href="torch-2.14.1%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl">torch-2.14.1+cu130-cp312-cp312-manylinux_2_28_x86_64.whl</a>
               <a href="../up%2Fone.whl">up/one.whl</a>
               <a href="/abs/x%20y.whl">x y.whl</a>"#,
        );
        let at: Vec<String> = files.iter().map(|f| f.location.to_string()).collect();
        assert_eq!(
            at,
            [
                "/srv/whl/torch/torch-2.14.1+cu130-cp312-cp312-manylinux_2_28_x86_64.whl",
                "/abs/x y.whl"
            ],
            "%2B decodes to `+`; a segment decoding to `/` names no file"
        );
    }

    #[test]
    fn a_page_that_is_neither_is_an_error() {
        let page = Location::parse("https://pypi.org/simple/x/").unwrap();
        assert!(parse_page(&page, b"503 Service Unavailable").is_err());
        assert!(parse_page(&page, b"{\"files\": 3}").is_err());
        assert!(parse_page(&page, b"{\"files\": [{\"url\": \"x\"}]}").is_err());
        assert_eq!(parse_page(&page, b"{\"files\": []}").unwrap(), vec![]);
    }
}
