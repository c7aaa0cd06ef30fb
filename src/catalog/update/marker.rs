//! PEP 508 environment markers, evaluated for the machine a catalog row describes (Linux
//! x86_64) and one extra. Comparisons on variables the row does not fix (`python_version`) are
//! taken as true: the row states the Python range separately.

/// The environment markers are evaluated in.
#[derive(Debug, Clone)]
pub struct Env<'a> {
    /// `extra == "and-cuda"` holds only for this extra.
    pub extra: Option<&'a str>,
    /// `linux`.
    pub sys_platform: &'a str,
    /// `Linux`.
    pub platform_system: &'a str,
    /// `x86_64`.
    pub platform_machine: &'a str,
}

impl Env<'_> {
    /// Linux on x86_64, with `extra`.
    pub fn linux_x86_64(extra: Option<&str>) -> Env<'_> {
        Env {
            extra,
            sys_platform: "linux",
            platform_system: "Linux",
            platform_machine: "x86_64",
        }
    }

    /// Linux on `machine` (`x86_64`, `aarch64`), with `extra`.
    pub fn linux<'a>(machine: &'a str, extra: Option<&'a str>) -> Env<'a> {
        Env {
            platform_machine: machine,
            ..Env::linux_x86_64(extra)
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Open,
    Close,
    And,
    Or,
    Word(String),
    Str(String),
    Op(String),
}

fn lex(s: &str) -> Option<Vec<Tok>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        match c {
            ' ' | '\t' => i += 1,
            '(' => {
                out.push(Tok::Open);
                i += 1;
            }
            ')' => {
                out.push(Tok::Close);
                i += 1;
            }
            '"' | '\'' => {
                let end = s[i + 1..].find(c)? + i + 1;
                out.push(Tok::Str(s[i + 1..end].to_owned()));
                i = end + 1;
            }
            '=' | '!' | '<' | '>' | '~' => {
                let mut j = i + 1;
                while j < b.len() && matches!(b[j], b'=' | b'<' | b'>' | b'~' | b'!') {
                    j += 1;
                }
                out.push(Tok::Op(s[i..j].to_owned()));
                i = j;
            }
            _ => {
                let mut j = i;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || matches!(b[j], b'_' | b'.')) {
                    j += 1;
                }
                if j == i {
                    return None;
                }
                let w = &s[i..j];
                out.push(match w {
                    "and" => Tok::And,
                    "or" => Tok::Or,
                    "in" => Tok::Op("in".into()),
                    "not" => Tok::Op("not".into()),
                    _ => Tok::Word(w.to_owned()),
                });
                i = j;
            }
        }
    }
    Some(out)
}

/// The deepest nesting of parentheses a marker may have. Real markers nest two or three deep;
/// the parser recurses once per level, so a hostile one 500,000 deep overflowed the stack.
const MAX_DEPTH: usize = 32;

struct Parser<'t, 'e> {
    toks: &'t [Tok],
    at: usize,
    env: &'t Env<'e>,
    depth: usize,
}

impl Parser<'_, '_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.at).cloned();
        self.at += 1;
        t
    }
    fn or(&mut self) -> Option<bool> {
        let mut v = self.and()?;
        while self.peek() == Some(&Tok::Or) {
            self.at += 1;
            v |= self.and()?;
        }
        Some(v)
    }
    fn and(&mut self) -> Option<bool> {
        let mut v = self.atom()?;
        while self.peek() == Some(&Tok::And) {
            self.at += 1;
            v &= self.atom()?;
        }
        Some(v)
    }
    fn value(&mut self) -> Option<(Option<String>, bool)> {
        // (value, is a variable this environment does not fix)
        match self.next()? {
            Tok::Str(s) => Some((Some(s), false)),
            Tok::Word(w) => Some(match w.as_str() {
                "extra" => (self.env.extra.map(str::to_owned), false),
                "sys_platform" => (Some(self.env.sys_platform.to_owned()), false),
                "platform_system" => (Some(self.env.platform_system.to_owned()), false),
                "platform_machine" => (Some(self.env.platform_machine.to_owned()), false),
                "os_name" => (Some("posix".to_owned()), false),
                _ => (None, true),
            }),
            _ => None,
        }
    }
    fn atom(&mut self) -> Option<bool> {
        if self.peek() == Some(&Tok::Open) {
            self.at += 1;
            if self.depth == MAX_DEPTH {
                return None;
            }
            self.depth += 1;
            let v = self.or()?;
            self.depth -= 1;
            if self.next()? != Tok::Close {
                return None;
            }
            return Some(v);
        }
        let (left, free_l) = self.value()?;
        let mut op = match self.next()? {
            Tok::Op(o) => o,
            _ => return None,
        };
        if op == "not" {
            match self.next()? {
                Tok::Op(o) if o == "in" => op = "not in".into(),
                _ => return None,
            }
        }
        let (right, free_r) = self.value()?;
        if free_l || free_r {
            return Some(true);
        }
        let (l, r) = (left.unwrap_or_default(), right.unwrap_or_default());
        Some(match op.as_str() {
            "==" | "===" => l == r,
            "!=" => l != r,
            "in" => r.contains(&l),
            "not in" => !r.contains(&l),
            // Ordering comparisons of fixed string variables: not meaningful here.
            _ => true,
        })
    }
}

/// Whether `marker` holds in `env`; `None` when it does not parse.
pub fn holds(marker: &str, env: &Env<'_>) -> Option<bool> {
    let toks = lex(marker.trim())?;
    if toks.is_empty() {
        return Some(true);
    }
    let mut p = Parser {
        toks: &toks,
        at: 0,
        env,
        depth: 0,
    };
    let v = p.or()?;
    (p.at == toks.len()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_from_real_metadata() {
        let linux = Env::linux_x86_64(None);
        let and_cuda = Env::linux_x86_64(Some("and-cuda"));
        assert_eq!(holds("platform_system == \"Linux\"", &linux), Some(true));
        assert_eq!(
            holds(
                "platform_system == \"Linux\" and python_version < \"3.15\"",
                &linux
            ),
            Some(true)
        );
        assert_eq!(holds("extra == \"and-cuda\"", &linux), Some(false));
        assert_eq!(holds("extra == \"and-cuda\"", &and_cuda), Some(true));
        let ct = "(sys_platform == 'linux' and platform_machine == 'aarch64' or sys_platform == 'linux' and platform_machine == 'x86_64' or sys_platform == 'win32' and platform_machine == 'AMD64') and extra == 'cudart'";
        assert_eq!(holds(ct, &Env::linux_x86_64(Some("cudart"))), Some(true));
        assert_eq!(holds(ct, &Env::linux_x86_64(Some("cublas"))), Some(false));
        let arm_only =
            "(sys_platform == 'linux' and platform_machine == 'aarch64') and extra == 'all'";
        assert_eq!(
            holds(arm_only, &Env::linux_x86_64(Some("all"))),
            Some(false)
        );
        assert_eq!(holds("sys_platform != \"win32\"", &linux), Some(true));
        assert_eq!(holds("'linux' in sys_platform", &linux), Some(true));
        assert_eq!(holds("platform_system ==", &linux), None);
        assert_eq!(holds("(extra == 'x'", &linux), None);
    }

    /// Issue 25, finding 3: a `Requires-Dist` marker nested 500,000 parentheses deep overflowed
    /// the stack (SIGABRT) in `manifests update`; past the depth limit it does not parse.
    #[test]
    fn a_marker_nested_500000_deep_does_not_parse_and_does_not_overflow() {
        let linux = Env::linux_x86_64(None);
        let deep = format!(
            "{}os_name == 'posix'{}",
            "(".repeat(500_000),
            ")".repeat(500_000)
        );
        assert_eq!(holds(&deep, &linux), None);
        let open_only = "(".repeat(500_000);
        assert_eq!(holds(&open_only, &linux), None);
        let fine = format!(
            "{}os_name == 'posix'{}",
            "(".repeat(MAX_DEPTH),
            ")".repeat(MAX_DEPTH)
        );
        assert_eq!(holds(&fine, &linux), Some(true));
    }
}
