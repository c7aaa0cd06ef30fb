//! The environment step of an install (env scripts, rc hooks) and `cudaup env`.

use std::io::Write;

use clap::builder::TypedValueParser;
use clap::Args;

use crate::error::{Error, ExitCode, Result};
use crate::install::receipts::Active;
use crate::shell::{self, Shell};
use crate::world::process::Process;

/// The shells set up on this machine (the library's: an install hooks them when no shell is named).
pub use crate::install::env::shells_here;

/// `cudaup env` flags.
#[derive(Debug, Args)]
pub struct EnvArgs {
    /// The shell to print for: sh, bash, zsh, dash, fish, powershell [default: from $SHELL]
    #[arg(long, value_name = "SHELL", value_parser = shell_parser())]
    pub shell: Option<Shell>,
}

/// `--shell`'s closed vocabulary, each name mapped onto its shell family.
fn shell_parser() -> impl clap::builder::TypedValueParser<Value = Shell> {
    clap::builder::PossibleValuesParser::new([
        "sh",
        "bash",
        "zsh",
        "dash",
        "ksh",
        "fish",
        "powershell",
        "pwsh",
    ])
    .map(|s| Shell::parse(&s).expect("each listed name is a shell"))
}

/// `cudaup env`: prints the env script of the active stack.
pub fn run(args: &EnvArgs, process: &Process, out: &mut dyn Write) -> Result<ExitCode> {
    let home = crate::install::home::Home::of(process)?.root().to_owned();
    let shell = match args.shell {
        Some(s) => s,
        // Windows sets no $SHELL (Git Bash and MSYS do): PowerShell's script there, for the
        // window it runs in; new windows read the user's environment from the registry.
        None if cfg!(windows) && process.var("SHELL").is_none() => Shell::PowerShell,
        None => {
            let name = process.var("SHELL").unwrap_or("sh");
            Shell::parse(name).ok_or_else(|| {
                Error::Usage(format!(
                    "$SHELL is {name}: pass --shell sh, bash, zsh, dash, fish or powershell"
                ))
            })?
        }
    };
    write!(out, "{}", shell::script(shell, &Active::read(&home).spec()))?;
    Ok(ExitCode::Ok)
}
