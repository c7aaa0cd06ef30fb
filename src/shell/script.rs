//! The env scripts: one per shell family, generated from an [`EnvSpec`].
//!
//! Each script may be sourced any number of times (an rc file read twice, a user who sources it
//! by hand): a directory already on a list is left where it is, and nothing the user had is
//! dropped. A list variable that was unset or empty gets just our directories, never a trailing
//! separator, because an empty element in `PATH` or `LD_LIBRARY_PATH` means the current
//! directory.

use std::path::Path;

use super::{EnvSpec, Shell};

/// The first lines of every script (after the shell's comment sign).
const HEADER: [&str; 3] = [
    "cudaup: the environment of the active CUDA stack.",
    "Written by cudaup, which rewrites it whenever the stack changes: edits here do not last.",
    "Sourcing it again is harmless: a directory already listed is not added twice.",
];

/// The env script for `shell` that sets up `spec`.
///
/// Entries that cannot be expressed are left out with a warning: paths that are not UTF-8, list
/// entries that contain the list separator, and variable names that are not identifiers.
pub fn script(shell: Shell, spec: &EnvSpec) -> String {
    match shell {
        Shell::Posix => posix(spec),
        Shell::Fish => fish(spec),
        Shell::PowerShell => powershell(spec),
    }
}

/// The line an rc file needs to load the env script of `shell` from `cudaup_home`.
///
/// A `cudaup_home` that is not UTF-8 is written lossily; [`super::hooks`] refuses such homes
/// before it gets here.
pub fn source_line(shell: Shell, cudaup_home: &Path) -> String {
    let file = cudaup_home.join(shell.script_file_name());
    let file = file.to_string_lossy();
    match shell {
        // rustup's form (`. "…/env"`): `.` rather than `source`, which dash lacks (rustup#2623).
        Shell::Posix => format!(". \"{}\"", posix_double_quote(&file)),
        Shell::Fish => format!("source \"{}\"", fish_double_quote(&file)),
        Shell::PowerShell => format!(". {}", pwsh_quote(&file)),
    }
}

/// The command that activates the venv at `venv` in `shell`: the activation script CPython's
/// `venv` writes for that shell, in the venv's scripts folder (`bin/`, `Scripts\` on Windows).
pub fn activate_line(shell: Shell, venv: &Path) -> String {
    let scripts = crate::model::layout::Prefix::at(venv).venv_scripts();
    match shell {
        Shell::Posix => format!(
            ". \"{}\"",
            posix_double_quote(&scripts.join("activate").to_string_lossy())
        ),
        Shell::Fish => format!(
            "source \"{}\"",
            fish_double_quote(&scripts.join("activate.fish").to_string_lossy())
        ),
        Shell::PowerShell => format!(
            ". {}",
            pwsh_quote(&scripts.join("Activate.ps1").to_string_lossy())
        ),
    }
}

fn posix(spec: &EnvSpec) -> String {
    let mut out = header("#");
    for (var, dirs) in lists(spec, &[':']) {
        // Prepend in reverse so that the first directory of the spec ends up first.
        for dir in dirs.iter().rev() {
            let dir = posix_quote(dir);
            // `${VAR:-}` and `${VAR:+…}` keep `set -u` shells happy, and the `:+` form adds the
            // separator only when there is something after it.
            out.push_str(&format!(
                "case \":${{{var}:-}}:\" in\n    *:{dir}:*) ;;\n    *) export {var}={dir}\"${{{var}:+:${var}}}\" ;;\nesac\n"
            ));
        }
    }
    for (name, value) in vars(spec) {
        out.push_str(&format!("export {name}={}\n", posix_quote(value)));
    }
    out
}

fn fish(spec: &EnvSpec) -> String {
    let mut out = header("#");
    // fish 3.0+ imports every variable whose name ends in PATH as a list split on `:` and
    // exports it joined with `:` ("PATH variables", fish-language(1)), so LD_LIBRARY_PATH is a
    // list here just like PATH. An empty inherited value becomes a list of one empty element,
    // and prepending to that would export "DIR:" (the current directory): replace it instead.
    for (var, dirs) in lists(spec, &[':']) {
        for dir in dirs.iter().rev() {
            let dir = fish_quote(dir);
            out.push_str(&format!(
                "if test -z \"${var}\"\n    set -gx {var} {dir}\nelse if not contains -- {dir} ${var}\n    set -gx {var} {dir} ${var}\nend\n"
            ));
        }
    }
    for (name, value) in vars(spec) {
        out.push_str(&format!("set -gx {name} {}\n", fish_quote(value)));
    }
    out
}

fn powershell(spec: &EnvSpec) -> String {
    let mut out = header("#");
    // A script block keeps the helper and its variables out of the user's session when the
    // script is dot-sourced; environment changes are process-wide and survive it.
    out.push_str(
        "& {
    $sep = [IO.Path]::PathSeparator
    # $IsWindows exists from PowerShell 6 on; Windows PowerShell (5.1 and older) runs only on Windows.
    $onWindows = ($PSVersionTable.PSEdition -ne 'Core') -or $IsWindows
    function Add-CudaupEntry([string]$Name, [string]$Dir) {
        $current = [Environment]::GetEnvironmentVariable($Name)
        $entries = @(if ($current) { $current.Split($sep) })
        # Windows compares paths without regard to case; Linux and macOS do not.
        $present = if ($onWindows) { $entries -contains $Dir } else { $entries -ccontains $Dir }
        if (-not $present) {
            [Environment]::SetEnvironmentVariable($Name, ((@($Dir) + $entries) -join $sep))
        }
    }
",
    );
    // `;` separates PATH on Windows; `:` separates LD_LIBRARY_PATH, which only Linux reads.
    for (var, dirs) in lists(spec, &[';']) {
        let (indent, close) = if var == "LD_LIBRARY_PATH" {
            out.push_str("    if (-not $onWindows) {\n");
            ("        ", "    }\n")
        } else {
            ("    ", "")
        };
        for dir in dirs.iter().rev() {
            if var == "LD_LIBRARY_PATH" && dir.contains(':') {
                tracing::warn!("left {dir:?} out of LD_LIBRARY_PATH: it contains ':'");
                continue;
            }
            out.push_str(&format!(
                "{indent}Add-CudaupEntry {} {}\n",
                pwsh_quote(var),
                pwsh_quote(dir)
            ));
        }
        out.push_str(close);
    }
    for (name, value) in vars(spec) {
        out.push_str(&format!(
            "    [Environment]::SetEnvironmentVariable({}, {})\n",
            pwsh_quote(name),
            pwsh_quote(value)
        ));
    }
    out.push_str("}\n");
    out
}

fn header(comment: &str) -> String {
    let mut out: String = HEADER
        .iter()
        .map(|line| format!("{comment} {line}\n"))
        .collect();
    out.push('\n');
    out
}

/// The list variables of `spec` with their usable entries, skipping empty lists.
fn lists<'a>(spec: &'a EnvSpec, separators: &[char]) -> Vec<(&'static str, Vec<&'a str>)> {
    [
        ("PATH", &spec.path),
        ("LD_LIBRARY_PATH", &spec.ld_library_path),
    ]
    .into_iter()
    .map(|(var, dirs)| {
        let dirs = dirs
            .iter()
            .filter_map(|dir| list_entry(var, dir, separators))
            .collect::<Vec<_>>();
        (var, dirs)
    })
    .filter(|(_, dirs)| !dirs.is_empty())
    .collect()
}

fn list_entry<'a>(var: &str, dir: &'a Path, separators: &[char]) -> Option<&'a str> {
    let Some(text) = dir.to_str() else {
        tracing::warn!("left {} out of {var}: it is not UTF-8", dir.display());
        return None;
    };
    if text.is_empty() {
        // An empty entry would mean the current directory.
        tracing::warn!("left an empty directory out of {var}");
        return None;
    }
    if text.contains(separators) {
        tracing::warn!("left {text:?} out of {var}: it contains a list separator");
        return None;
    }
    Some(text)
}

/// The variables of `spec` whose names every shell accepts.
fn vars(spec: &EnvSpec) -> impl Iterator<Item = (&str, &str)> {
    spec.vars.iter().filter_map(|(name, value)| {
        if is_identifier(name) {
            Some((name.as_str(), value.as_str()))
        } else {
            tracing::warn!("left variable {name:?} out of the env script: not a valid name");
            None
        }
    })
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// POSIX single quotes: nothing inside is special, and a `'` is written as `'\''`.
fn posix_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The inside of POSIX double quotes, where `\`, `"`, `$` and `` ` `` are special.
fn posix_double_quote(text: &str) -> String {
    escape(text, &['\\', '"', '$', '`'])
}

/// fish single quotes: only `\` and `'` need a backslash.
fn fish_quote(text: &str) -> String {
    format!("'{}'", escape(text, &['\\', '\'']))
}

/// The inside of fish double quotes, where `\`, `"` and `$` are special.
fn fish_double_quote(text: &str) -> String {
    escape(text, &['\\', '"', '$'])
}

/// PowerShell single quotes: a quote is doubled. PowerShell also takes the typographic single
/// quotes (U+2018–U+201B) as quotes, so those are doubled too.
fn pwsh_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        if matches!(c, '\'' | '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}') {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

fn escape(text: &str, special: &[char]) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if special.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests;
