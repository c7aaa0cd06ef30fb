//! The one font face cudaup embeds (DejaVu Sans), registered once with plotters for every chart it
//! draws (`bench`'s and `monitor`'s plots): process-wide state, so it sits with the other seams
//! and neither command reaches into the other for it.

use std::sync::Once;

use plotters::style::{register_font, FontStyle};

/// Registers the one embedded face under every style plotters asks for.
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The same face for every style plotters may ask for: only one is embedded.
        for style in [FontStyle::Normal, FontStyle::Bold] {
            let _ = register_font("sans-serif", style, dejavu::sans::regular());
        }
    });
}
