//! Rendering for people: "what will change on disk" for a preview, and the closing summary of
//! what to run next.

use std::path::Path;

use crate::cli::i18n::Strings;
use crate::model::plan::Status;
use crate::world::process::Process;

use super::{Ctx, DriverChange, Preview, Style, ToolkitChange};

/// Columns of terminal cells: CJK characters take two.
pub(super) fn width(text: &str) -> usize {
    text.chars()
        .map(|c| if (c as u32) >= 0x2E80 { 2 } else { 1 })
        .sum()
}

fn pad(label: &str, to: usize) -> String {
    format!("{label}{}", " ".repeat(to.saturating_sub(width(label))))
}

/// `~/x` for paths under the home directory.
pub(super) fn tilde(process: &Process, path: &Path) -> String {
    match process
        .home()
        .and_then(|h| path.strip_prefix(h).ok().map(Path::to_owned))
    {
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

/// "What will change on disk".
pub fn render_changes(ctx: &Ctx<'_>, p: &Preview) -> String {
    let s = ctx.s;
    let mut rows: Vec<(&str, String)> = Vec::new();
    if p.plan.status != Status::Ok {
        return String::new();
    }
    match &p.toolkit {
        Some(ToolkitChange::New(prefix)) => rows.push((
            s.label_toolkit,
            (s.toolkit_new)(&prefix.display().to_string()),
        )),
        Some(ToolkitChange::Kept(path)) => rows.push((s.label_toolkit, (s.toolkit_kept)(path))),
        None => {}
    }
    if let Some((dir, exists)) = &p.venv {
        let d = dir.display().to_string();
        rows.push((
            s.label_venv,
            if *exists {
                (s.venv_reused)(&d)
            } else {
                (s.venv_new)(&d)
            },
        ));
    }
    if let Some(why) = &p.venv_problem {
        rows.push((s.label_venv, ctx.style.warn(&(s.venv_problem)(why))));
    }
    match &p.cudaup {
        Ok(c) => {
            use crate::install::self_copy::Action;
            let path = tilde(ctx.process, &c.path);
            let row = match c.action {
                Action::Installed => Some((s.self_new)(&path)),
                Action::Replaced => Some((s.self_replace)(&path)),
                Action::Unchanged | Action::Running => Some((s.self_same)(&path)),
                Action::CargoManaged => Some((s.self_cargo)(&path)),
                Action::Unknown => None,
            };
            rows.extend(row.map(|r| (s.label_self, r)));
        }
        Err(why) => rows.push((s.label_self, ctx.style.warn(&(s.self_refused)(why)))),
    }
    if p.env {
        let script = crate::install::home::Home::at(&ctx.home)
            .env_script(crate::shell::Shell::Posix)
            .display()
            .to_string();
        rows.push((
            s.label_env,
            if p.toolkit.is_some() {
                (s.env_scripts)(&script)
            } else {
                (s.env_scripts_cudaup)(&script)
            },
        ));
        if let Some(w) = &p.user_env {
            for dir in &w.path {
                rows.push((s.label_user_env, (s.user_env_path)(dir)));
            }
            for (name, value) in &w.vars {
                rows.push((s.label_user_env, (s.user_env_var)(name, value)));
            }
            rows.push((s.label_user_env, s.user_env_undo.to_owned()));
        } else if p.hooks.is_empty() {
            rows.push((s.label_rc, s.rc_none.to_owned()));
        }
        for (file, line, already) in &p.hooks {
            let f = tilde(ctx.process, file);
            rows.push((
                s.label_rc,
                if *already {
                    (s.rc_already)(&f)
                } else {
                    (s.rc_add)(&f, line)
                },
            ));
        }
    }
    if matches!(p.toolkit, Some(ToolkitChange::New(_))) {
        rows.push((
            s.label_cache,
            (s.cache)(
                &crate::install::home::Home::at(&ctx.home)
                    .cache()
                    .display()
                    .to_string(),
            ),
        ));
    }
    rows.push((
        s.label_driver,
        match &p.driver {
            DriverChange::Unchanged => s.driver_unchanged.to_owned(),
            DriverChange::Change(v) => ctx.style.warn(&(s.driver_change)(v)),
            DriverChange::Manual(v) => ctx.style.warn(&(s.driver_manual)(v)),
        },
    ));
    let w = rows.iter().map(|(l, _)| width(l)).max().unwrap_or(0) + 2;
    let mut o = format!("{}\n", ctx.style.heading(s.changes_heading));
    let mut last = "";
    for (label, value) in &rows {
        let shown = if *label == last { "" } else { label };
        o.push_str(&format!("  {}{value}\n", pad(shown, w)));
        last = label;
    }
    o.push_str(&format!("{}\n", ctx.style.dim(s.changes_footer)));
    o
}

/// The closing summary: what to run next.
pub(super) fn summary(
    s: &Strings,
    style: &Style,
    p: &Preview,
    line: &str,
    hooked: bool,
    reboot: Option<&str>,
) -> String {
    let mut steps = Vec::new();
    let cudaup = p.cudaup.as_ref().ok().filter(|c| c.in_home());
    if p.env {
        let what = match (p.toolkit.is_some(), cudaup.is_some()) {
            (true, true) => s.env_what_both,
            (true, false) => s.env_what_cuda,
            (false, _) => s.env_what_cudaup,
        };
        steps.push(if hooked {
            (s.step_env_hooked)(what, line)
        } else {
            (s.step_env_manual)(what, line)
        });
        if let (false, Some(c)) = (hooked, cudaup) {
            let last = steps.len() - 1;
            steps[last].push_str(&format!(
                "\n     {}",
                (s.step_cudaup_path)(&c.path.display().to_string())
            ));
        }
    }
    if let Some((venv, _)) = &p.venv {
        steps.push((s.step_venv)(&crate::shell::activate_line(
            crate::shell::Shell::INTERACTIVE,
            venv,
        )));
    }
    match (&p.driver, reboot) {
        (_, Some(v)) => steps.push((s.step_reboot)(v)),
        (DriverChange::Change(v), None) => steps.push((s.step_driver)(v)),
        (DriverChange::Manual(v), None) => steps.push((s.step_driver_manual)(v)),
        (DriverChange::Unchanged, None) => {}
    }
    let mut o = format!("\n{}\n", style.heading(s.summary_heading));
    for (i, step) in steps.iter().enumerate() {
        o.push_str(&format!("  {}. {step}\n", i + 1));
    }
    o.push_str(&format!("  {}\n", s.step_later));
    o
}
