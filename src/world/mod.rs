//! Every seam to the outside world, each behind a small type or trait so the core stays testable
//! and the same code runs for real: the process environment and streams ([`process`]), running
//! commands ([`runner`]), progress ([`progress`]), questions ([`prompt`]), atomic files ([`fs`]),
//! the environment variables cudaup reads ([`vars`]), the embedded font charts draw with
//! ([`fonts`]) and the crash checkpoints of the tests ([`checkpoint`]).

pub mod checkpoint;
pub mod fonts;
pub mod fs;
pub mod process;
pub mod progress;
pub mod prompt;
pub mod runner;
pub mod vars;
