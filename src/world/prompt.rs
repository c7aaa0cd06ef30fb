//! Asking the user: the [`Prompter`] trait, and its implementations.
//!
//! - [`DialoguerPrompter`] asks on the terminal (the only code that touches dialoguer);
//! - [`StdinPrompter`] asks one plain line (`Proceed? [y/N]`) and reads the answer from standard
//!   input: the confirmation of install, repair and uninstall (the only `read_line` on stdin);
//! - [`ScriptedPrompter`] answers from a list, for tests;
//! - [`DefaultsPrompter`] takes every default, for `--yes` runs without questions.
//!
//! EOF and Ctrl-C at a prompt are [`PromptError::Cancelled`], never a "yes" (code-anchors §6.3
//! convention 18): the caller exits with code 130 and changes nothing.

use std::collections::VecDeque;
use std::fmt;
use std::io;

/// Why a question got no answer.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    /// The user cancelled: Ctrl-C, Escape, end of input.
    #[error("cancelled")]
    Cancelled,
    /// The terminal failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// There is no terminal to ask at (stdin or stdout is not one), and nothing answers for the
    /// user: the message says what to pass instead (`--yes`).
    #[error("{0}")]
    NoTerminal(String),
}

/// What [`StdinPrompter`] says when there is no terminal to ask at.
pub const NO_TERMINAL: &str =
    "cannot ask for confirmation without a terminal: re-run with --yes (or --dry-run to look first)";

/// The result of a question.
pub type Result<T> = std::result::Result<T, PromptError>;

/// Checks a typed answer: `Err` carries the message to show before asking again.
pub type Validate<'a> = &'a dyn Fn(&str) -> std::result::Result<(), String>;

/// Something that can ask the user questions.
pub trait Prompter {
    /// One of `items`; `default` is highlighted first. Returns its index.
    fn select(&mut self, prompt: &str, items: &[String], default: usize) -> Result<usize>;
    /// Yes or no; Enter takes `default`.
    fn confirm(&mut self, prompt: &str, default: bool) -> Result<bool>;
    /// A line of text, prefilled with `default` (Enter keeps it), asked again until `validate`
    /// accepts it.
    fn input(&mut self, prompt: &str, default: &str, validate: Validate<'_>) -> Result<String>;
}

fn from_dialoguer(e: dialoguer::Error) -> PromptError {
    let dialoguer::Error::IO(e) = e;
    match e.kind() {
        // console reports Ctrl-C in raw mode as Interrupted (after raising SIGINT), and a closed
        // terminal as UnexpectedEof.
        io::ErrorKind::Interrupted | io::ErrorKind::UnexpectedEof => PromptError::Cancelled,
        _ => PromptError::Io(e),
    }
}

/// Words the prompts print that dialoguer would otherwise print in English.
#[derive(Debug, Clone, Copy)]
pub struct Labels {
    /// After a confirm answered yes.
    pub yes: &'static str,
    /// After a confirm answered no.
    pub no: &'static str,
    /// Before a validation message.
    pub error: &'static str,
    /// Between a prompt and its answer: `": "`, or the full-width `"："` in Chinese.
    pub colon: &'static str,
}

impl Default for Labels {
    fn default() -> Self {
        Self {
            yes: "yes",
            no: "no",
            error: "error",
            colon: ": ",
        }
    }
}

/// dialoguer's plain theme, with the words it prints translated, and no colon after a prompt
/// that already ends in a question mark.
struct Theme(Labels);

impl Theme {
    fn colon(&self, prompt: &str) -> &'static str {
        if prompt.ends_with(['?', '？', ':', '：']) {
            " "
        } else {
            self.0.colon
        }
    }
}

impl dialoguer::theme::Theme for Theme {
    fn format_prompt(&self, f: &mut dyn fmt::Write, prompt: &str) -> fmt::Result {
        write!(f, "{prompt}{}", self.colon(prompt).trim_end())
    }

    fn format_input_prompt(
        &self,
        f: &mut dyn fmt::Write,
        prompt: &str,
        default: Option<&str>,
    ) -> fmt::Result {
        match default {
            Some(d) => write!(f, "{prompt} [{d}]{}", self.colon(prompt)),
            None => write!(f, "{prompt}{}", self.colon(prompt)),
        }
    }

    fn format_input_prompt_selection(
        &self,
        f: &mut dyn fmt::Write,
        prompt: &str,
        sel: &str,
    ) -> fmt::Result {
        write!(f, "{prompt}{}{sel}", self.colon(prompt))
    }

    fn format_select_prompt_selection(
        &self,
        f: &mut dyn fmt::Write,
        prompt: &str,
        sel: &str,
    ) -> fmt::Result {
        self.format_input_prompt_selection(f, prompt, sel)
    }

    fn format_error(&self, f: &mut dyn fmt::Write, err: &str) -> fmt::Result {
        write!(f, "{}{}{err}", self.0.error, self.0.colon)
    }

    fn format_confirm_prompt_selection(
        &self,
        f: &mut dyn fmt::Write,
        prompt: &str,
        selection: Option<bool>,
    ) -> fmt::Result {
        match selection {
            Some(true) => write!(f, "{prompt} {}", self.0.yes),
            Some(false) => write!(f, "{prompt} {}", self.0.no),
            None => write!(f, "{prompt}"),
        }
    }
}

/// Asks one plain line on `out` and reads the answer from standard input: `y`, `Y` or `yes` is
/// yes, Enter takes the default, anything else (and end of input) is no. Without a terminal it
/// asks nothing: [`PromptError::NoTerminal`].
pub struct StdinPrompter<'a> {
    out: &'a mut dyn io::Write,
    terminal: bool,
}

impl<'a> StdinPrompter<'a> {
    /// Asks on `out`; `terminal` is whether stdin and stdout are both terminals.
    pub fn new(out: &'a mut dyn io::Write, terminal: bool) -> Self {
        Self { out, terminal }
    }

    fn line(&mut self, prompt: &str) -> Result<String> {
        if !self.terminal {
            return Err(PromptError::NoTerminal(NO_TERMINAL.to_owned()));
        }
        write!(self.out, "{prompt}")?;
        self.out.flush()?;
        let mut answer = String::new();
        io::stdin().read_line(&mut answer)?;
        Ok(answer.trim().to_owned())
    }
}

impl Prompter for StdinPrompter<'_> {
    fn select(&mut self, prompt: &str, items: &[String], default: usize) -> Result<usize> {
        for (i, item) in items.iter().enumerate() {
            writeln!(self.out, "  {}) {item}", i + 1)?;
        }
        loop {
            let answer = self.line(&format!("{prompt} [{}] ", default + 1))?;
            if answer.is_empty() {
                return Ok(default);
            }
            match answer.parse::<usize>() {
                Ok(n) if (1..=items.len()).contains(&n) => return Ok(n - 1),
                _ => writeln!(self.out, "1 to {}", items.len())?,
            }
        }
    }

    fn confirm(&mut self, prompt: &str, default: bool) -> Result<bool> {
        let hint = if default { "[Y/n]" } else { "[y/N]" };
        let answer = self.line(&format!("{prompt} {hint} "))?;
        Ok(match answer.as_str() {
            "" => default,
            a => matches!(a, "y" | "Y" | "yes"),
        })
    }

    fn input(&mut self, prompt: &str, default: &str, validate: Validate<'_>) -> Result<String> {
        loop {
            let answer = self.line(&format!("{prompt} [{default}] "))?;
            let answer = if answer.is_empty() {
                default.to_owned()
            } else {
                answer
            };
            match validate(&answer) {
                Ok(()) => return Ok(answer),
                Err(why) => writeln!(self.out, "{why}")?,
            }
        }
    }
}

/// Asks on the terminal (stderr), with arrow keys, Enter and typed text.
pub struct DialoguerPrompter {
    term: dialoguer::console::Term,
    theme: Theme,
}

impl DialoguerPrompter {
    /// Asks on standard error, printing `labels` where dialoguer would print English words.
    pub fn new(labels: Labels) -> Self {
        Self {
            term: dialoguer::console::Term::stderr(),
            theme: Theme(labels),
        }
    }

    fn finish<T>(&self, r: std::result::Result<Option<T>, dialoguer::Error>) -> Result<T> {
        // A prompt interrupted half-way leaves the cursor hidden.
        let _ = self.term.show_cursor();
        match r {
            Ok(Some(v)) => Ok(v),
            // Escape or q.
            Ok(None) => Err(PromptError::Cancelled),
            Err(e) => Err(from_dialoguer(e)),
        }
    }
}

impl Prompter for DialoguerPrompter {
    fn select(&mut self, prompt: &str, items: &[String], default: usize) -> Result<usize> {
        let r = dialoguer::Select::with_theme(&self.theme)
            .with_prompt(prompt)
            .items(items)
            .default(default)
            .interact_on_opt(&self.term);
        self.finish(r)
    }

    fn confirm(&mut self, prompt: &str, default: bool) -> Result<bool> {
        let r = dialoguer::Confirm::with_theme(&self.theme)
            .with_prompt(prompt)
            .default(default)
            .interact_on_opt(&self.term);
        self.finish(r)
    }

    fn input(&mut self, prompt: &str, default: &str, validate: Validate<'_>) -> Result<String> {
        // Read key by key rather than with dialoguer's Input, which ignores Escape: here Escape
        // cancels a text prompt as it does a list. The default is prefilled rather than
        // hidden: the user sees it and can edit or clear it.
        let r = self.read_text(prompt, default, validate);
        let _ = self.term.show_cursor();
        r.map(|s| s.trim().to_owned())
    }
}

impl DialoguerPrompter {
    /// One line of text: printable keys insert at the cursor, Backspace/Delete, Left/Right,
    /// Home/End move and edit, Enter offers it to `validate` (a refusal is printed and the line
    /// stays to be edited), Escape, Ctrl-C and a closed terminal cancel.
    fn read_text(&self, prompt: &str, default: &str, validate: Validate<'_>) -> Result<String> {
        use dialoguer::console::Key;
        let term = &self.term;
        if !term.is_term() {
            return Err(PromptError::Io(io::Error::new(
                io::ErrorKind::NotConnected,
                "not a terminal",
            )));
        }
        let head = format!("{prompt}{}", self.theme.colon(prompt));
        let mut text: Vec<char> = default.chars().collect();
        let mut at = text.len();
        loop {
            let shown: String = text.iter().collect();
            term.clear_line()?;
            term.write_str(&format!("{head}{shown}"))?;
            let back = text.len() - at;
            if back > 0 {
                term.move_cursor_left(back)?;
            }
            let key = term.read_key().map_err(|e| match e.kind() {
                io::ErrorKind::Interrupted | io::ErrorKind::UnexpectedEof => PromptError::Cancelled,
                _ => PromptError::Io(e),
            })?;
            match key {
                Key::Escape => {
                    term.write_line("")?;
                    return Err(PromptError::Cancelled);
                }
                Key::Enter => {
                    let value: String = text.iter().collect();
                    match validate(value.trim()) {
                        Ok(()) => {
                            term.clear_line()?;
                            term.write_line(&format!("{head}{value}"))?;
                            return Ok(value);
                        }
                        Err(why) => {
                            term.write_line("")?;
                            term.write_line(&format!("{}: {why}", self.theme.0.error))?;
                        }
                    }
                }
                Key::Char(c) if !c.is_control() => {
                    text.insert(at, c);
                    at += 1;
                }
                Key::Backspace if at > 0 => {
                    at -= 1;
                    text.remove(at);
                }
                Key::Del if at < text.len() => {
                    text.remove(at);
                }
                Key::ArrowLeft if at > 0 => at -= 1,
                Key::ArrowRight if at < text.len() => at += 1,
                Key::Home => at = 0,
                Key::End => at = text.len(),
                _ => {}
            }
        }
    }
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Pick the item at this index.
    Select(usize),
    /// Answer a confirm.
    Confirm(bool),
    /// Type this text (a text the validator refuses is recorded, and the next answer is taken,
    /// as a person would type again).
    Input(String),
    /// Press Enter: take the default.
    Default,
    /// Ctrl-C.
    Cancel,
}

/// Answers from a list, and records what was asked. When the answers run out it behaves like
/// EOF: [`PromptError::Cancelled`].
#[derive(Debug, Default)]
pub struct ScriptedPrompter {
    answers: VecDeque<Answer>,
    /// Every prompt, in order, with what was answered (`prompt -> answer`), and refused inputs
    /// (`prompt -> refused "text": message`).
    pub asked: Vec<String>,
}

impl ScriptedPrompter {
    /// A prompter that gives these answers, in order.
    pub fn new(answers: impl IntoIterator<Item = Answer>) -> Self {
        Self {
            answers: answers.into_iter().collect(),
            asked: Vec::new(),
        }
    }

    /// Whether any prompt containing `text` was asked.
    pub fn was_asked(&self, text: &str) -> bool {
        self.asked.iter().any(|a| a.contains(text))
    }

    fn next(&mut self, prompt: &str) -> Result<Answer> {
        match self.answers.pop_front() {
            None | Some(Answer::Cancel) => {
                self.asked.push(format!("{prompt} -> cancelled"));
                Err(PromptError::Cancelled)
            }
            Some(a) => Ok(a),
        }
    }

    fn misfit(prompt: &str, answer: &Answer) -> PromptError {
        PromptError::Io(io::Error::other(format!(
            "scripted answer {answer:?} does not fit the question `{prompt}`"
        )))
    }
}

impl Prompter for ScriptedPrompter {
    fn select(&mut self, prompt: &str, items: &[String], default: usize) -> Result<usize> {
        let i = match self.next(prompt)? {
            Answer::Select(i) if i < items.len() => i,
            Answer::Default => default,
            a => return Err(Self::misfit(prompt, &a)),
        };
        self.asked.push(format!("{prompt} -> {}", items[i]));
        Ok(i)
    }

    fn confirm(&mut self, prompt: &str, default: bool) -> Result<bool> {
        let b = match self.next(prompt)? {
            Answer::Confirm(b) => b,
            Answer::Default => default,
            a => return Err(Self::misfit(prompt, &a)),
        };
        self.asked.push(format!("{prompt} -> {b}"));
        Ok(b)
    }

    fn input(&mut self, prompt: &str, default: &str, validate: Validate<'_>) -> Result<String> {
        loop {
            let text = match self.next(prompt)? {
                Answer::Input(t) => t.trim().to_owned(),
                Answer::Default => default.to_owned(),
                a => return Err(Self::misfit(prompt, &a)),
            };
            match validate(&text) {
                Ok(()) => {
                    self.asked.push(format!("{prompt} -> {text:?}"));
                    return Ok(text);
                }
                Err(msg) => self
                    .asked
                    .push(format!("{prompt} -> refused {text:?}: {msg}")),
            }
        }
    }
}

/// Takes every default without asking: what `--yes` means. An invalid default is an error.
#[derive(Debug, Default, Clone, Copy)]
pub struct DefaultsPrompter;

impl Prompter for DefaultsPrompter {
    fn select(&mut self, _prompt: &str, _items: &[String], default: usize) -> Result<usize> {
        Ok(default)
    }

    fn confirm(&mut self, _prompt: &str, default: bool) -> Result<bool> {
        Ok(default)
    }

    fn input(&mut self, prompt: &str, default: &str, validate: Validate<'_>) -> Result<String> {
        validate(default)
            .map(|()| default.to_owned())
            .map_err(|msg| PromptError::Io(io::Error::other(format!("{prompt}: {msg}"))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items() -> Vec<String> {
        vec!["a".into(), "b".into()]
    }

    #[test]
    fn scripted_answers_in_order_and_refused_text_is_typed_again() {
        let mut p = ScriptedPrompter::new([
            Answer::Select(1),
            Answer::Default,
            Answer::Input("x".into()),
            Answer::Input("12.8".into()),
        ]);
        assert_eq!(p.select("pick", &items(), 0).unwrap(), 1);
        assert!(p.confirm("sure", true).unwrap());
        let v = |s: &str| {
            crate::model::version::Version::parse(s)
                .map(|_| ())
                .ok_or_else(|| "not a version".to_owned())
        };
        assert_eq!(p.input("cuda", "", &v).unwrap(), "12.8");
        assert!(p.asked.iter().any(|a| a.contains("refused \"x\"")));
        // Out of answers: EOF, which is a cancel and never a yes.
        assert!(matches!(
            p.confirm("again", true),
            Err(PromptError::Cancelled)
        ));
    }

    #[test]
    fn a_misfit_answer_is_an_error_and_cancel_cancels() {
        let mut p = ScriptedPrompter::new([Answer::Confirm(true), Answer::Cancel]);
        assert!(matches!(
            p.select("pick", &items(), 0),
            Err(PromptError::Io(_))
        ));
        assert!(matches!(
            p.select("pick", &items(), 0),
            Err(PromptError::Cancelled)
        ));
    }

    #[test]
    fn defaults_prompter_takes_defaults() {
        let mut p = DefaultsPrompter;
        assert_eq!(p.select("pick", &items(), 1).unwrap(), 1);
        assert!(!p.confirm("sure", false).unwrap());
        assert_eq!(p.input("x", "d", &|_| Ok(())).unwrap(), "d");
        assert!(p.input("x", "d", &|_| Err("no".into())).is_err());
    }

    #[test]
    fn interrupts_and_eof_are_cancels() {
        for kind in [io::ErrorKind::Interrupted, io::ErrorKind::UnexpectedEof] {
            let e = from_dialoguer(dialoguer::Error::IO(io::Error::new(kind, "x")));
            assert!(matches!(e, PromptError::Cancelled));
        }
        let e = from_dialoguer(dialoguer::Error::IO(io::Error::other("x")));
        assert!(matches!(e, PromptError::Io(_)));
    }
}
