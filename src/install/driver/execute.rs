//! Runs a prepared driver step through the [`Runner`], one command at a time.

use std::path::Path;
use std::time::Duration;

use crate::world::runner::Runner;

use super::{DriverStep, DriverStepError};

/// The longest one command may run: package downloads and a DKMS build of NVIDIA's module take
/// minutes, not hours.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// How many lines of a failed command's output the error keeps.
const FAILURE_TAIL_LINES: usize = 40;

/// What [`execute`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Executed {
    /// The commands that ran, in order (all of them: it stops at the first failure).
    pub commands_run: Vec<Vec<String>>,
    /// Whether the machine must reboot now.
    pub reboot_required: bool,
    /// Whether a Machine Owner Key must be enrolled (Secure Boot): run the step's
    /// `mok_import` interactively (with a terminal: mokutil asks for a password), then reboot.
    pub mok_enrolment_needed: bool,
}

/// Runs the step's commands in order. Before each, `echo` gets `$ <command>`; while it runs,
/// each line it prints. Stops at the first failure, whose error carries the end of its output.
/// Privileged commands start with `sudo`; whether sudo may prompt is the caller's business (the
/// Runner gives commands no standard input, so a password prompt needs a cached credential,
/// `sudo -v` beforehand, or a terminal-attached runner).
pub fn execute(
    step: &DriverStep,
    runner: &dyn Runner,
    echo: &mut dyn FnMut(&str),
) -> Result<Executed, DriverStepError> {
    if !step.runnable {
        return Err(DriverStepError::NotRunnable(
            step.commands
                .iter()
                .map(|c| shell_line(c))
                .collect::<Vec<_>>()
                .join("; "),
        ));
    }
    let mut done = Executed::default();
    for command in &step.commands {
        let Some((program, args)) = command.split_first() else {
            continue;
        };
        let line = shell_line(command);
        echo(&format!("$ {line}"));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = runner
            .run_streaming(Path::new(program), &args, &[], COMMAND_TIMEOUT, &mut |l| {
                echo(l)
            })
            .map_err(|e| DriverStepError::CommandStart {
                command: line.clone(),
                message: e.to_string(),
            })?;
        if !out.success() {
            return Err(DriverStepError::CommandFailed {
                command: line,
                status: out.status,
                output: tail(&out.stdout, &out.stderr),
                completed: done.commands_run.len(),
            });
        }
        done.commands_run.push(command.clone());
    }
    let installed = !done.commands_run.is_empty();
    done.reboot_required = step.reboot_required && installed;
    done.mok_enrolment_needed = step.mok_enrolment_needed && installed;
    Ok(done)
}

fn tail(stdout: &str, stderr: &str) -> String {
    let lines: Vec<&str> = stdout.lines().chain(stderr.lines()).collect();
    let start = lines.len().saturating_sub(FAILURE_TAIL_LINES);
    lines[start..].join("\n")
}

/// One argv as a shell line: plain words as they are, others single-quoted.
pub fn shell_line(argv: &[String]) -> String {
    argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
}

/// Quotes `word` for a POSIX shell unless it is made only of safe characters: in double quotes
/// when that keeps it readable (no `"`, `$`, backquote, `!`, and every backslash literal), else
/// in single quotes. The Windows placeholder `<installer>.exe` is shown as it is.
pub(crate) fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_owned();
    }
    if word.starts_with('<') && word.ends_with(".exe") && !word.contains(char::is_whitespace) {
        return word.to_owned();
    }
    let chars: Vec<char> = word.chars().collect();
    let literal_backslashes = chars
        .iter()
        .enumerate()
        .all(|(i, c)| *c != '\\' || chars.get(i + 1).is_some_and(|n| !"$`\"\\\n".contains(*n)));
    if literal_backslashes && !word.contains(['"', '$', '`', '!']) {
        format!("\"{word}\"")
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Quotes `word` for a POSIX shell with single quotes only (for text inside `sh -c` scripts).
pub(crate) fn single_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
