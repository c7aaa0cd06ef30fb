//! The engine and toolkit configuration files cudaup edits, one module each: each function takes
//! the file's current text (or none) and returns the new text, so the edit is a pure function
//! that tests check byte for byte; [`super::edit`] writes it with a receipt.

pub mod containers_conf;
pub mod daemon_json;
pub mod toolkit_toml;

/// Why a configuration file cannot be edited.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// It does not parse: cudaup will not rewrite what it cannot read.
    #[error("{file} does not parse ({message}); fix it (or move it aside) and run setup again")]
    Unparsable {
        /// The file.
        file: String,
        /// The parser's message.
        message: String,
    },
}
