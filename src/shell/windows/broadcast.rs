//! Tells every top-level window that the user's environment changed, as Windows' own
//! Environment Variables dialog does: `WM_SETTINGCHANGE` with `"Environment"`, so Explorer (and
//! what it starts from now on) reads the new `Path` and `CUDA_PATH` without a new logon.
//!
//! The only `unsafe` in cudaup (Cargo.toml's `unsafe_code = "deny"` says why it is allowed here
//! alone): no maintained safe crate wraps `SendMessageTimeoutW`, and the call is one line.
#![allow(unsafe_code)]

use windows_sys::Win32::UI::WindowsAndMessaging::{
    SendMessageTimeoutW, HWND_BROADCAST, SMTO_ABORTIFHUNG, WM_SETTINGCHANGE,
};

/// Broadcasts the change, waiting at most 5 s for each window and skipping hung ones (rustup's
/// and uv's settings). A window that does not answer only misses the news: nothing to report.
pub fn environment_changed() {
    let name: Vec<u16> = "Environment".encode_utf16().chain([0]).collect();
    let mut result: usize = 0;
    // SAFETY: `name` is a NUL-terminated UTF-16 string that outlives the call (the call returns
    // only once every window answered or timed out, and copies nothing it keeps); `result` is a
    // valid place for the one `usize` the call writes; HWND_BROADCAST with WM_SETTINGCHANGE is
    // the documented way to announce an environment change, and takes no other pointer.
    unsafe {
        SendMessageTimeoutW(
            HWND_BROADCAST,
            WM_SETTINGCHANGE,
            0,
            name.as_ptr() as isize,
            SMTO_ABORTIFHUNG,
            5000,
            &mut result,
        );
    }
}
