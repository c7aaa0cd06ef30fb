//! The thin binary: parse the command line, set up logging, run the library, map the result to
//! an exit code.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use clap::Parser;
use cudaup::cli::{self, Cli};
use cudaup::world::process::Process;
use cudaup::world::runner::SystemRunner;

fn main() {
    let cli = Cli::parse();
    init_tracing(cli.global.verbose, cli.global.quiet);
    let mut process = Process::from_os();
    // Ctrl-C sets a flag every long loop checks, so an install stops cleanly and rolls back; a
    // second Ctrl-C exits at once.
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let code = match cli::run(cli, &mut process, &SystemRunner, cancel, &mut out) {
        Ok(code) => code.code(),
        Err(e) => {
            let _ = out.flush();
            let mut err = std::io::stderr().lock();
            // In the language of the run (the message table: cli/i18n/messages.toml).
            let lang = cli::i18n::report::progress_lang();
            // Line by line: an error may hold several (a route refusal and its ways out).
            let mut say = |text: String| {
                for line in text.lines() {
                    let _ = writeln!(err, "{}", cli::i18n::messages::translate_line(lang, line));
                }
            };
            say(format!("error: {e}"));
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                say(format!("  caused by: {s}"));
                source = s.source();
            }
            e.exit_code().code()
        }
    };
    let _ = out.flush();
    std::process::exit(code);
}

fn init_tracing(verbose: u8, quiet: bool) {
    use tracing_subscriber::EnvFilter;
    let default = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0 | 1) => "warn",
        (false, 2) => "cudaup=debug",
        (false, _) => "cudaup=trace",
    };
    let filter = EnvFilter::try_from_env(cudaup::world::vars::CUDAUP_LOG)
        .unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .init();
}
