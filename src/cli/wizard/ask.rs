//! Customise: the questions after the profile (pins, folders, sources, mirrors, shells,
//! verify), each answer checked as it is typed.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::i18n::Strings;
use crate::fetch::GivenLocation;
use crate::model::request::Profile;
use crate::model::request::SourceKind;
use crate::model::version::Version;
use crate::model::version::VersionPin;
use crate::shell::Shell;
use crate::world::prompt::Prompter;

use super::show::tilde;
use super::{Answers, Ctx, Preview, Stop};
use crate::install::python::route::{KnownMirror, RouteKind, KNOWN_MIRRORS};
use crate::model::request::TorchSource;

/// Customise: pins, folders, sources, shells, verify.
pub(super) fn customise(
    ctx: &Ctx<'_>,
    p: &mut dyn Prompter,
    out: &mut dyn Write,
    a: &mut Answers,
    preview: &Preview,
) -> std::result::Result<(), Stop> {
    let s = ctx.s;
    writeln!(out, "\n{}", ctx.style.heading(s.customise_heading))?;
    out.flush()?;
    let version = |text: &str| -> std::result::Result<(), String> {
        let plain = text
            .split('.')
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if text.is_empty() || (plain && Version::parse(text).is_some()) {
            Ok(())
        } else {
            Err((s.bad_version)(text))
        }
    };
    let pin = |p: &mut dyn Prompter, prompt: &str, current: &Option<VersionPin>| {
        let shown = current.as_ref().map(|c| c.to_string()).unwrap_or_default();
        // The check above let only plain versions (or nothing) through.
        p.input(prompt, &shown, &version)
            .map(|t| VersionPin::parse(&t).ok())
    };
    if a.profile != Profile::Cpu {
        a.cuda = pin(p, s.pin_cuda, &a.cuda)?;
    }
    if a.profile.has_torch() {
        a.torch = pin(p, s.pin_torch, &a.torch)?;
    }
    if a.profile == Profile::Tensorflow {
        a.tensorflow = pin(p, s.pin_tensorflow, &a.tensorflow)?;
    }
    if a.profile == Profile::Jax {
        a.jax = pin(p, s.pin_jax, &a.jax)?;
    }
    if a.profile != Profile::CudaDev {
        a.python = pin(p, s.pin_python, &a.python)?;
    }

    let home = ctx.process.home();
    let path_ok = |text: &str| -> std::result::Result<(), String> {
        if expand(text, home.as_deref()).is_absolute() {
            Ok(())
        } else {
            Err(s.bad_path.to_owned())
        }
    };
    if a.profile.has_toolkit() {
        // The default prefix names the CUDA release, which the pins just given may change.
        let fresh = super::preview(ctx, a).ok();
        let default = fresh
            .as_ref()
            .and_then(|f| f.default_prefix.clone())
            .or_else(|| preview.default_prefix.clone())
            .unwrap_or_else(|| {
                crate::install::home::Home::at(&ctx.home)
                    .toolkits()
                    .join("cuda")
            });
        let current = a.prefix.clone().unwrap_or_else(|| default.clone());
        let text = p.input(s.prefix_prompt, &current.display().to_string(), &path_ok)?;
        let chosen = expand(&text, home.as_deref());
        // The default stays implicit, so it follows the CUDA version.
        a.prefix = (chosen != default).then_some(chosen);

        let items = vec![
            s.source_auto.to_owned(),
            s.source_nvidia.to_owned(),
            s.source_mirror.to_owned(),
            s.source_wheels.to_owned(),
        ];
        let current = match (a.source, &a.nvidia_mirror) {
            (Some(SourceKind::Wheels), _) => 3,
            (_, Some(_)) => 2,
            (Some(SourceKind::Redist), None) => 1,
            (None, None) => 0,
        };
        out.flush()?;
        match p.select(s.source_prompt, &items, current)? {
            0 => {
                a.source = None;
                a.nvidia_mirror = None;
            }
            1 => {
                a.source = Some(SourceKind::Redist);
                a.nvidia_mirror = None;
            }
            2 => {
                a.source = Some(SourceKind::Redist);
                let start = a.nvidia_mirror.as_ref().map_or("", GivenLocation::as_str);
                a.nvidia_mirror = Some(input_location(p, s, s.mirror_prompt, start)?);
            }
            _ => {
                a.source = Some(SourceKind::Wheels);
                let current = a.index_url.as_ref().map(GivenLocation::as_str);
                a.index_url = ask_index(ctx, p, s.wheels_index_prompt, current)?;
            }
        }
        a.components = ask_components(ctx, p, a, fresh.as_ref().unwrap_or(preview))?;
    }
    if a.profile != Profile::CudaDev {
        let default = crate::install::home::Home::at(&ctx.home).venv(a.profile.name());
        let current = a.venv.clone().unwrap_or_else(|| default.clone());
        let text = p.input(s.venv_prompt, &current.display().to_string(), &path_ok)?;
        let chosen = expand(&text, home.as_deref());
        a.venv = (chosen != default).then_some(chosen);
        let current = a.pypi_index.as_ref().map(GivenLocation::as_str);
        a.pypi_index = ask_index(ctx, p, s.pypi_prompt, current)?;
        if a.profile.has_torch() {
            ask_torch_index(ctx, p, out, a)?;
        }
    }

    if (a.profile.has_toolkit() || preview.env) && super::USER_ENVIRONMENT {
        out.flush()?;
        a.modify_path = p.confirm(s.user_env_prompt, a.modify_path)?;
        a.shells.clear();
    } else if a.profile.has_toolkit() || preview.env {
        let mut chosen = Vec::new();
        for shell in crate::cli::env::shells_here(ctx.process) {
            let files: Vec<String> = crate::shell::hooks(ctx.process, &ctx.home, &[shell])
                .iter()
                .map(|h| tilde(ctx.process, &h.file))
                .collect();
            if files.is_empty() {
                continue;
            }
            let name = match shell {
                Shell::Posix => "sh/bash/zsh",
                Shell::Fish => "fish",
                Shell::PowerShell => "PowerShell",
            };
            let was = a.modify_path && a.shells.contains(&shell);
            out.flush()?;
            if p.confirm(&(s.shell_prompt)(name, &files.join(", ")), was)? {
                chosen.push(shell);
            }
        }
        a.modify_path = !chosen.is_empty();
        a.shells = chosen;
    }
    out.flush()?;
    a.verify = p.confirm(s.verify_prompt, a.verify)?;

    let plain_http = |a: &Answers| -> Vec<String> {
        [
            &a.nvidia_mirror,
            &a.index_url,
            &a.pypi_index,
            &a.torch_index,
        ]
        .into_iter()
        .flatten()
        .filter(|u| u.is_plain_http())
        .map(ToString::to_string)
        .collect()
    };
    a.allow_http = false;
    for url in plain_http(a) {
        out.flush()?;
        if !p.confirm(&(s.http_prompt)(&url), false)? {
            for slot in [
                &mut a.nvidia_mirror,
                &mut a.index_url,
                &mut a.pypi_index,
                &mut a.torch_index,
            ] {
                if slot.as_ref().is_some_and(GivenLocation::is_plain_http) {
                    *slot = None;
                }
            }
            writeln!(out, "{}", ctx.style.warn(s.http_dropped))?;
            return Ok(());
        }
    }
    a.allow_http = !plain_http(a).is_empty();
    Ok(())
}

/// The known mirrors of one kind, as the wizard lists them.
fn mirrors(kind: RouteKind) -> Vec<&'static KnownMirror> {
    KNOWN_MIRRORS.iter().filter(|m| m.kind == kind).collect()
}

fn mirror_label(ctx: &Ctx<'_>, m: &KnownMirror) -> String {
    (ctx.s.mirror_item)(m)
}

/// The component set, each with what it downloads on the route chosen; `None` is the default.
fn ask_components(
    ctx: &Ctx<'_>,
    p: &mut dyn Prompter,
    a: &Answers,
    preview: &Preview,
) -> std::result::Result<Option<String>, Stop> {
    let sets = &ctx.catalog.components.set;
    let wheels = a.source == Some(SourceKind::Wheels);
    let items: Vec<String> = sets
        .iter()
        .map(|set| {
            let size = crate::install::summary::for_plan(
                &preview.plan,
                ctx.catalog,
                Some(&set.name),
                &crate::sources::pypi::wheel_platform(ctx.system.os.family, &ctx.system.os.arch),
            )
            .ok()
            .flatten()
            .and_then(|t| if wheels { t.wheels } else { t.redist })
            .map(|r| {
                let approx = if r.exact { "" } else { "≈ " };
                format!("{approx}{}", indicatif::HumanBytes(r.bytes))
            })
            .unwrap_or_else(|| "?".into());
            (ctx.s.set_label)(&set.name, &set.summary, &size)
        })
        .collect();
    let mut items = items;
    let default = crate::catalog::DEFAULT_SET;
    let current = a.components.as_deref().unwrap_or(default);
    // A list from the config file (`standard,-npp`) is kept unless another set is picked.
    let at = match sets.iter().position(|s| s.name == current) {
        Some(i) => i,
        None => {
            items.push(current.to_owned());
            items.len() - 1
        }
    };
    let i = p.select(ctx.s.components_prompt, &items, at)?;
    let chosen = sets.get(i).map_or(current, |s| s.name.as_str());
    Ok((chosen != default).then(|| chosen.to_owned()))
}

/// PyPI, one of the known mirrors (README: Mirrors), or a URL/folder typed in.
fn ask_index(
    ctx: &Ctx<'_>,
    p: &mut dyn Prompter,
    prompt: &str,
    current: Option<&str>,
) -> std::result::Result<Option<GivenLocation>, Stop> {
    let s = ctx.s;
    let known = mirrors(RouteKind::Pypi);
    let mut items = vec![s.pypi_default.to_owned()];
    items.extend(known.iter().map(|m| mirror_label(ctx, m)));
    items.push(s.other_location.to_owned());
    let other = items.len() - 1;
    let norm = |u: &str| u.trim_end_matches('/').to_owned();
    let default = match current.map(norm) {
        None => 0,
        Some(u) => known
            .iter()
            .position(|m| m.url == u)
            .map_or(other, |i| i + 1),
    };
    Ok(match p.select(prompt, &items, default)? {
        0 => None,
        i if i < other => Some(known_location(known[i - 1])),
        _ => {
            let start = if default == other {
                current.unwrap_or("")
            } else {
                ""
            };
            Some(input_location(p, s, s.location_prompt, start)?)
        }
    })
}

/// PyTorch's index, a known copy of it, PyPI only, or a URL/folder typed in.
fn ask_torch_index(
    ctx: &Ctx<'_>,
    p: &mut dyn Prompter,
    out: &mut dyn Write,
    a: &mut Answers,
) -> std::result::Result<(), Stop> {
    let s = ctx.s;
    let known = mirrors(RouteKind::Pytorch);
    let mut items = vec![s.torch_default.to_owned()];
    items.extend(known.iter().map(|m| mirror_label(ctx, m)));
    let pypi_only = items.len();
    items.push(s.torch_pypi_only.to_owned());
    items.push(s.other_location.to_owned());
    let other = items.len() - 1;
    let current = match (&a.torch_index, a.torch_source) {
        (None, TorchSource::Pypi) => pypi_only,
        (None, _) => 0,
        (Some(u), _) => known
            .iter()
            .position(|m| m.url == u.as_str().trim_end_matches('/'))
            .map_or(other, |i| i + 1),
    };
    out.flush()?;
    match p.select(s.torch_prompt, &items, current)? {
        0 => {
            a.torch_index = None;
            a.torch_source = TorchSource::Auto;
        }
        i if i == pypi_only => {
            a.torch_index = None;
            a.torch_source = TorchSource::Pypi;
        }
        i if i < pypi_only => {
            a.torch_index = Some(known_location(known[i - 1]));
            a.torch_source = TorchSource::Auto;
        }
        _ => {
            let start = match &a.torch_index {
                Some(u) if current == other => u.to_string(),
                _ => String::new(),
            };
            a.torch_index = Some(input_location(p, s, s.location_prompt, &start)?);
            a.torch_source = TorchSource::Auto;
        }
    }
    Ok(())
}

/// A URL or folder typed in, asked until [`location_ok`] takes it.
fn input_location(
    p: &mut dyn Prompter,
    s: &Strings,
    prompt: &str,
    start: &str,
) -> std::result::Result<GivenLocation, Stop> {
    let text = p.input(prompt, start, &|t| location_ok(s, t))?;
    Ok(GivenLocation::parse(&text).expect("location_ok accepted only a location that parses"))
}

/// A known mirror's URL as a location (`every_known_mirror_is_an_https_location` parses each).
fn known_location(m: &KnownMirror) -> GivenLocation {
    GivenLocation::parse(m.url).expect("the known mirrors' URLs parse")
}

fn location_ok(s: &Strings, text: &str) -> std::result::Result<(), String> {
    match crate::fetch::Location::parse(text) {
        _ if text.is_empty() => Err((s.bad_location)("empty")),
        Err(e) => Err((s.bad_location)(&e.to_string())),
        Ok(crate::fetch::Location::File(dir)) if !dir.is_dir() => Err((s.bad_location)(&format!(
            "{}: no such folder",
            dir.display()
        ))),
        Ok(_) => Ok(()),
    }
}

/// `~` and `~/x` under the home directory; other text as a path.
pub(super) fn expand(text: &str, home: Option<&Path>) -> PathBuf {
    match (text.strip_prefix('~'), home) {
        (Some(""), Some(h)) => h.to_owned(),
        (Some(rest), Some(h)) if rest.starts_with('/') => h.join(rest.trim_start_matches('/')),
        _ => PathBuf::from(text),
    }
}
