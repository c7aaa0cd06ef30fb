//! A cudaup command in a real pseudo-terminal (expectrl), driven as a person drives it: keys
//! typed once a prompt shows, Ctrl-C typed as a character the terminal turns into SIGINT for
//! its foreground process group (cudaup and the pip it runs). Every wait is bounded.

use std::process::Command;
use std::time::{Duration, Instant};

use expectrl::process::unix::WaitStatus;
use expectrl::{Eof, Expect, Session};

/// A command running in a pseudo-terminal, and everything it printed so far.
pub struct Pty {
    /// The terminal's other end.
    pub session: expectrl::session::OsSession,
    seen: Vec<u8>,
    code: Option<i32>,
}

impl Pty {
    /// Starts `cmd` (built on [`super::hermetic`]) in a 160×50 terminal of type xterm; each
    /// wait for text is at most 10 s until the test says otherwise.
    pub fn start(mut cmd: Command) -> Pty {
        cmd.env("TERM", "xterm");
        let mut session = Session::spawn(cmd).expect("the command starts in a pty");
        session
            .get_process_mut()
            .set_window_size(160, 50)
            .expect("pty size");
        session.set_expect_timeout(Some(Duration::from_secs(10)));
        Pty {
            session,
            seen: Vec::new(),
            code: None,
        }
    }

    /// Waits until `text` is on the screen.
    pub fn expect(&mut self, text: &str) {
        match self.session.expect(text) {
            Ok(found) => self.seen.extend_from_slice(found.as_bytes()),
            Err(e) => {
                // What it printed after the last match too (all of it, when it has exited).
                if let Ok(rest) = self.session.expect(Eof) {
                    self.seen.extend_from_slice(rest.as_bytes());
                }
                panic!(
                    "waiting for {text:?}: {e}\n--- the terminal showed ---\n{}",
                    self.text()
                )
            }
        }
    }

    /// Types `keys` once `prompt` is shown (and has had a moment to put the terminal in raw
    /// mode, so that the keys are read as keys).
    pub fn answer(&mut self, prompt: &str, keys: &str) {
        self.expect(prompt);
        std::thread::sleep(Duration::from_millis(50));
        self.session.send(keys).expect("typing into the pty");
    }

    /// The exit code, once the command has exited (the status is read once: waiting reaps it).
    pub fn exited(&mut self) -> Option<i32> {
        if self.code.is_none() {
            match self.session.get_process().status() {
                Ok(WaitStatus::Exited(_, code)) => self.code = Some(code),
                Ok(WaitStatus::Signaled(_, sig, _)) => {
                    panic!("killed by {sig:?}\n{}", self.text())
                }
                _ => {}
            }
        }
        self.code
    }

    /// Reads to the end and returns the exit code.
    pub fn finish(&mut self) -> i32 {
        if let Ok(rest) = self.session.expect(Eof) {
            self.seen.extend_from_slice(rest.as_bytes());
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(code) = self.exited() {
                return code;
            }
            assert!(
                Instant::now() < deadline,
                "the command did not exit\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What the terminal showed, without control sequences.
    pub fn text(&self) -> String {
        strip_ansi(&String::from_utf8_lossy(&self.seen))
    }
}

/// `s` without terminal control sequences and carriage returns.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() || c == '~' {
                        break;
                    }
                }
            }
            continue;
        }
        if c != '\r' {
            out.push(c);
        }
    }
    out
}
