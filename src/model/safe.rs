//! Which strings may stand in generated text that a shell or Docker reads (a Dockerfile's `RUN`
//! line, a printed command): the grammar each kind of value has, so a catalog row or an index
//! holding `'; touch /x` is refused where it is read (`manifests check`) and again where it
//! would be written. Checking, not escaping: a version with a quote in it is no version.

/// A PEP 440 version as the catalog and indexes write them, local part included
/// (`2.15.0`, `2.15.0+cu132`, `1.0rc1`, `2!1.0.post1.dev2`): digits, letters, `.`, `+`, `!`,
/// `-`, `_`; starting with a digit (or `v`), at most 64 characters.
pub fn is_version(s: &str) -> bool {
    let body = s.strip_prefix('v').unwrap_or(s);
    !body.is_empty()
        && body.len() <= 64
        && body.starts_with(|c: char| c.is_ascii_digit())
        && body
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '!' | '-' | '_'))
}

/// A distribution or variant name (`torch`, `nvidia-cudnn-cu13`, `cu132`): PEP 508's name
/// characters, at most 100.
pub fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// An index URL: `http(s)://`, then only the characters RFC 3986 allows outside quotes that a
/// shell reads as data (no quote, `$`, backtick, `;`, `&`, `|`, `<`, `>`, space or control
/// character), at most 2,048.
pub fn is_index_url(s: &str) -> bool {
    (s.starts_with("https://") || s.starts_with("http://"))
        && s.len() <= 2048
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    '-' | '.'
                        | '_'
                        | '~'
                        | ':'
                        | '/'
                        | '?'
                        | '#'
                        | '['
                        | ']'
                        | '@'
                        | '!'
                        | '+'
                        | ','
                        | '='
                        | '%'
                )
        })
}

/// A Docker image reference (`nvidia/cuda:13.0.2-cudnn-devel-ubuntu24.04`, `python:3.12-slim`).
pub fn is_image(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/' | ':' | '@'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_values_pass_and_shell_words_do_not() {
        for v in [
            "2.15.0",
            "2.15.0+cu132",
            "1.0rc1",
            "2!1.0.post1.dev2",
            "9.28.0.42",
            "v1.2",
        ] {
            assert!(is_version(v), "{v}");
        }
        for v in [
            "",
            "2.15.0'; touch /x; '",
            "2.15 .0",
            "$(id)",
            "1.0\n",
            "x1.0",
            &"9".repeat(65),
        ] {
            assert!(!is_version(v), "{v:?}");
        }
        assert!(is_name("nvidia-cudnn-cu13") && is_name("cu132") && is_name("jax_cuda13_plugin"));
        assert!(!is_name("torch'") && !is_name("-rf") && !is_name(""));
        for u in [
            "https://pypi.org/simple",
            "https://download.pytorch.org/whl/cu132",
            "http://127.0.0.1:8080/simple/",
            "https://mirrors.example.cn/pypi/simple?x=1",
        ] {
            assert!(is_index_url(u), "{u}");
        }
        for u in [
            "https://x/simple; touch /x",
            "https://x/$(id)",
            "https://x/'a'",
            "ftp://x/simple",
            "https://x/a b",
            "https://x/`id`",
            "https://x/a|b",
        ] {
            assert!(!is_index_url(u), "{u}");
        }
        assert!(is_image("nvidia/cuda:13.0.2-cudnn-devel-ubuntu24.04"));
        assert!(!is_image("python:3.12 && rm -rf /"));
    }
}
