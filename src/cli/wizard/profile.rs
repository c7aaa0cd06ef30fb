//! The wizard's first question, the profile: what the download sites cannot serve here is shown
//! greyed with why and the fix, the suggestion moves to the first profile that can work, a greyed
//! choice is asked again, and each profile with a toolkit shows the catalog's download size.

use std::io::Write;

use super::answers::Answers;
use super::{Ctx, Decision, Stop};
use crate::error::Error;

/// Asks for the profile and puts it into `a`; `Some` ends the wizard there (nothing can work).
pub(super) fn choose(
    ctx: &Ctx<'_>,
    p: &mut dyn crate::world::prompt::Prompter,
    out: &mut dyn Write,
    a: &mut Answers,
) -> std::result::Result<Option<Decision>, Stop> {
    let s = ctx.s;
    // What cannot work here is shown greyed, with why and what would make it work.
    let words = ctx.reach_words;
    let greyed: Vec<Option<crate::install::reach::Greyed>> = super::PROFILES
        .iter()
        .map(|p| ctx.reach.as_ref().and_then(|r| r.fits(*p).err()))
        // A profile none of whose sites was asked (unattended, another profile given) is not
        // known to fail.
        .map(|g| g.filter(|g| !g.failed.is_empty()))
        .collect();
    for (profile, g) in super::PROFILES.iter().zip(&greyed) {
        if let Some(g) = g {
            write!(
                out,
                "{}",
                ctx.style
                    .dim(&super::super::reach::render_greyed(*profile, g, words))
            )?;
        }
    }
    if greyed.iter().any(Option::is_some) {
        write!(
            out,
            "{}",
            ctx.style.dim(&super::super::reach::render_fix(words))
        )?;
    }
    let mut default = super::PROFILES
        .iter()
        .position(|p| *p == a.profile)
        .unwrap_or(0);
    if greyed[default].is_some() {
        let Some(other) = greyed.iter().position(Option::is_none) else {
            writeln!(out, "\n{}", ctx.style.bad(words.none_fits))?;
            return Ok(Some(Decision::Unreachable));
        };
        writeln!(
            out,
            "{}",
            (words.moved)(
                super::PROFILES[default].name(),
                super::PROFILES[other].name()
            )
        )?;
        default = other;
    }
    let sizes = super::answers::toolkit_sizes(ctx, a, &super::PROFILES).map_err(Error::from)?;
    let items: Vec<String> = super::PROFILES
        .iter()
        .zip(s.profile_lines)
        .zip(greyed.iter().zip(&sizes))
        .map(|((p, line), (g, size))| {
            let tag = match (g, size) {
                (Some(_), _) => format!(" {}", words.greyed_tag),
                (None, Some(bytes)) => format!(
                    " {}",
                    (words.size)(&indicatif::HumanBytes(*bytes).to_string())
                ),
                (None, None) => String::new(),
            };
            format!("{:<11} {line}{tag}", p.name())
        })
        .collect();
    out.flush()?;
    loop {
        let chosen = p.select(s.profile_prompt, &items, default)?;
        if greyed[chosen].is_none() {
            a.profile = super::PROFILES[chosen];
            break;
        }
        writeln!(
            out,
            "{}",
            ctx.style
                .warn(&(words.chose_greyed)(super::PROFILES[chosen].name()))
        )?;
        default = chosen;
    }
    a.fit_profile();
    Ok(None)
}
