//! Text from outside (a path, a host's report, a variable) as it may be shown on a terminal:
//! control characters (ESC, CR, …) escaped, so no input can move the cursor, rewrite a line or
//! send an escape sequence to the reader's terminal.

/// `text` with every control character but the newline escaped (`\r`, `\u{1b}`).
pub fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\n' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A path for a shell command line shown to the user: `quote` (the usual POSIX quoting) when it
/// holds no control character, else ANSI-C quoting (`$'…'`, bash and zsh) with every control
/// character as `\xNN`, so what the terminal shows is exactly what the shell will get.
pub fn shell_word(word: &str, quote: impl Fn(&str) -> String) -> String {
    if !word.chars().any(char::is_control) {
        return quote(word);
    }
    let mut out = String::from("$'");
    for c in word.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_that_moves_the_cursor_survives() {
        let shown = escape_controls("/home/u\r/tmp\x1b[2J\tx\nnext");
        assert_eq!(shown, "/home/u\\r/tmp\\u{1b}[2J\\tx\nnext");
        let word = shell_word("/home/u/cudaup\r~ #", |w| format!("'{w}'"));
        assert_eq!(word, "$'/home/u/cudaup\\x0d~ #'");
        assert!(!word.chars().any(char::is_control));
        assert_eq!(shell_word("/plain", |w| w.to_owned()), "/plain");
    }
}
