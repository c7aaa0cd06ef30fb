//! The up-front reachability check as `plan`, `install` and the wizard show it: which download
//! sites were asked and how each answered, and a profile that cannot work here with what would
//! make it work (`install::reach` decides; this file only asks it and renders, in the chosen
//! language).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use crate::error::Result;
use crate::install::reach::{self, Greyed, Reach, Route};
use crate::model::request::Profile;
use crate::world::process::Process;

use super::i18n::reach::ReachWords;
use super::Style;

/// Asks `routes` at once with the probe's short timeout (a spinner on a terminal).
pub(super) fn ask(
    routes: &[Route],
    allow_http: bool,
    process: &Process,
    words: &ReachWords,
    cancel: Arc<AtomicBool>,
) -> Result<Reach> {
    let probe = super::probe_fetcher(process, allow_http, cancel)?;
    let spinner = process.stdout_is_tty.then(|| {
        let pb = indicatif::ProgressBar::new_spinner();
        pb.set_message(words.heading);
        pb.enable_steady_tick(Duration::from_millis(80));
        pb
    });
    let reach = reach::probe(&probe, routes);
    if let Some(pb) = spinner {
        pb.finish_and_clear();
    }
    Ok(reach)
}

/// The sites asked, one line each: what answered, in how long, and what did not, and why.
pub(super) fn render(reach: &Reach, words: &ReachWords, style: &Style) -> String {
    let mut o = format!("{}\n", style.heading(words.heading));
    for a in &reach.answers {
        let service = words.service(a.route.service);
        let line = match (a.reached, a.millis) {
            (true, Some(ms)) => style.good(&(words.answered)(service, a.route.base.as_str(), ms)),
            (true, None) => style.good(&format!("{service} {}", a.route.base)),
            (false, _) => style.warn(&(words.failed)(
                service,
                a.route.base.as_str(),
                &words.why(a),
            )),
        };
        o.push_str(&format!("  {line}\n"));
    }
    o
}

/// `profile` cannot work here: the part no site serves, and each site's failure ([`render_fix`]
/// says what would work).
pub(super) fn render_greyed(profile: Profile, g: &Greyed, words: &ReachWords) -> String {
    let mut o = format!("{}\n", (words.greyed)(profile.name(), words.part(g.part)));
    for a in &g.failed {
        o.push_str(&format!(
            "  - {}\n",
            (words.failed)(
                words.service(a.route.service),
                a.route.base.as_str(),
                &words.why(a)
            )
        ));
    }
    o
}

/// What would make a greyed profile work.
pub(super) fn render_fix(words: &ReachWords) -> String {
    format!("  {} {}\n", words.fix_label, words.fix)
}

/// The JSON of a check: the sites and, when the profile cannot work here, why.
pub(super) fn to_json(reach: &Reach, greyed: Option<&Greyed>) -> serde_json::Value {
    let mut doc = serde_json::json!({ "sites": reach.answers });
    if let Some(g) = greyed {
        doc["refused"] = serde_json::json!({
            "part": g.part,
            "reason": g.reason(),
            "fix": Greyed::FIX,
        });
    }
    doc
}
