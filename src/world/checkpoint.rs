//! Crash checkpoints for tests (rustup's `checkpoint`): with `CUDAUP_TEST_CHECKPOINT=<name>`, the
//! process announces itself and parks at that point until it is killed, so a test can kill an
//! install at an exact step and prove that a re-run or a repair converges.

use std::sync::OnceLock;

static WANTED: OnceLock<Option<String>> = OnceLock::new();

/// Sets the checkpoint to park at (once, at start-up, from `CUDAUP_TEST_CHECKPOINT`).
pub fn arm(name: Option<String>) {
    let _ = WANTED.set(name.filter(|n| !n.is_empty()));
}

/// Parks here forever if `name` is the armed checkpoint.
pub fn reach(name: &str) {
    if WANTED.get().and_then(|w| w.as_deref()) == Some(name) {
        use std::io::Write;
        let mut err = std::io::stderr();
        let _ = writeln!(
            err,
            "cudaup: parked at checkpoint {name} (pid {})",
            std::process::id()
        );
        let _ = err.flush();
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}
