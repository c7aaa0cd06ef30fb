//! Unit tests of the wizard's flow: the questions are scripted with
//! [`crate::world::prompt::ScriptedPrompter`], so every branch runs without a terminal.

use super::ask::expand;
use super::show::width;
use super::*;
use crate::settings::file as config;
use crate::world::prompt::{Answer, ScriptedPrompter};
use crate::world::runner::{Output, RunError};

/// Runs nothing: the tests never need a command.
struct NoCommands;

impl Runner for NoCommands {
    fn run(&self, program: &Path, _: &[&str], _: Duration) -> Result<Output, RunError> {
        Err(RunError::new(program, "no commands in unit tests"))
    }
}

fn h200() -> System {
    serde_json::from_str(include_str!("../../../tests/fixtures/h200-detect.json")).unwrap()
}

fn no_gpu() -> System {
    let mut s = h200();
    s.gpus.clear();
    s.driver = None;
    s.toolkits.clear();
    s
}

struct World {
    home: tempfile::TempDir,
    process: Process,
    catalog: Catalog,
    style: Style,
}

impl World {
    fn new() -> Self {
        let home = tempfile::tempdir().unwrap();
        let mut process =
            Process::with_vars([("HOME", home.path().display().to_string())], home.path());
        // The "running binary" the install would copy to $CUDAUP_HOME/bin.
        let exe = home.path().join("build/cudaup");
        fs_err::create_dir_all(exe.parent().unwrap()).unwrap();
        fs_err::write(&exe, b"a cudaup build").unwrap();
        process.set_exe(exe);
        Self {
            home,
            process,
            catalog: Catalog::load(&crate::catalog::Source::Embedded).unwrap(),
            style: Style::new(false),
        }
    }

    fn ctx<'a>(&'a self, system: &'a System, lang: Lang) -> Ctx<'a> {
        Ctx {
            s: lang.strings(),
            style: &self.style,
            catalog: &self.catalog,
            system,
            process: &self.process,
            runner: &NoCommands,
            home: self.home.path().join(".local/share/cudaup"),
            verbose: false,
            dry_run: false,
            unattended: false,
            cannot_confirm: false,
            reach: None,
            reach_words: lang.reach(),
        }
    }
}

fn go(d: Decision) -> (Answers, Preview) {
    match d {
        Decision::Go(a, p) => (*a, *p),
        other => panic!("expected Go, got {other:?}"),
    }
}

fn drive_with(
    ctx: &Ctx<'_>,
    answers: Vec<Answer>,
) -> (
    std::result::Result<Decision, Stop>,
    ScriptedPrompter,
    String,
) {
    let mut p = ScriptedPrompter::new(answers);
    let mut out = Vec::new();
    let initial = Answers::initial(ctx.process, ctx.system, ctx.catalog, None).unwrap();
    let r = drive(ctx, &mut p, &mut out, initial);
    (r, p, String::from_utf8(out).unwrap())
}

#[test]
fn full_is_suggested_with_a_gpu_and_cpu_without() {
    let w = World::new();
    let gpu = h200();
    let (r, p, out) = drive_with(
        &w.ctx(&gpu, Lang::En),
        vec![Answer::Default, Answer::Default],
    );
    let (a, _) = go(r.unwrap());
    assert_eq!(a.profile, Profile::Full);
    assert!(p.asked[0].contains("What should cudaup set up? -> full"));
    assert!(out.contains("An NVIDIA GPU is here"));
    assert!(out.contains("Plan (full profile) for NVIDIA H200"));
    assert!(out.contains("What will change on disk"));

    let none = no_gpu();
    let (r, p, out) = drive_with(
        &w.ctx(&none, Lang::En),
        vec![Answer::Default, Answer::Default],
    );
    let (a, _) = go(r.unwrap());
    assert_eq!(a.profile, Profile::Cpu);
    assert!(p.asked[0].contains("-> cpu"));
    assert!(out.contains("No NVIDIA GPU is here"));
}

#[test]
fn customise_pins_cuda_and_asks_only_what_the_profile_needs() {
    let w = World::new();
    let system = no_gpu();
    let ctx = w.ctx(&system, Lang::En);
    let (r, p, out) = drive_with(
        &ctx,
        vec![
            Answer::Select(3), // cuda-dev
            Answer::Select(1), // Customise
            Answer::Input("thirteen".into()),
            Answer::Input("13.0".into()),
            Answer::Default,        // prefix
            Answer::Default,        // the source: auto, as `cudaup install`
            Answer::Select(2),      // components: complete
            Answer::Confirm(false), // no rc file
            Answer::Confirm(false), // no verify
            Answer::Select(0),      // Install
        ],
    );
    let (a, preview) = go(r.unwrap());
    assert_eq!(a.profile, Profile::CudaDev);
    assert_eq!(a.source, None, "auto, as `cudaup install` takes it");
    assert!(
        p.was_asked("Where should the CUDA toolkit come from? -> Whichever answers"),
        "{:?}",
        p.asked
    );
    assert_eq!(a.components.as_deref(), Some("complete"));
    assert!(
        p.was_asked("Which parts of the CUDA toolkit? -> complete: standard plus cuda-gdb"),
        "{:?}",
        p.asked
    );
    assert_eq!(
        a.cuda.as_ref().map(|c| c.to_string()).as_deref(),
        Some("13.0")
    );
    assert_eq!(a.prefix, None, "the default prefix stays implicit");
    assert!(!a.verify);
    assert!(!a.modify_path && a.shells.is_empty());
    assert!(p.was_asked("refused \"thirteen\": `thirteen` is not a version"));
    // cuda-dev has no framework: no PyTorch, Python or venv questions.
    assert!(!p.was_asked("PyTorch version"));
    assert!(!p.was_asked("Python version"));
    assert!(!p.was_asked("virtual environment"));
    assert_eq!(
        preview.toolkit,
        Some(ToolkitChange::New(
            ctx.home.join("toolkits").join("cuda-13.0.3")
        ))
    );
    assert!(out.contains("Plan (cuda-dev profile)"));
    assert!(out.contains("cuda-13.0.3 (a new folder)"));
    assert!(out.contains("no startup file is changed"), "{out}");
    // The plan is shown twice: before and after customising.
    assert_eq!(out.matches("Plan (cuda-dev profile)").count(), 2);
}

// Unix-only fact: the shells' rc files get the line (Windows: the user environment, the twin
// below).
#[cfg(unix)]
#[test]
fn the_changes_name_the_rc_files_and_the_env_script() {
    let w = World::new();
    fs_err::write(w.home.path().join(".bashrc"), "# mine\n").unwrap();
    let system = no_gpu();
    let ctx = w.ctx(&system, Lang::En);
    let (r, _, out) = drive_with(&ctx, vec![Answer::Select(3), Answer::Select(0)]);
    let (_, preview) = go(r.unwrap());
    assert!(preview.env);
    let files: Vec<&PathBuf> = preview.hooks.iter().map(|h| &h.0).collect();
    assert_eq!(
        files,
        vec![
            &w.home.path().join(".profile"),
            &w.home.path().join(".bashrc")
        ]
    );
    assert!(out.contains("~/.profile: one line added: . \""), "{out}");
    assert!(out.contains("~/.bashrc: one line added"));
    assert!(out.contains(&format!("{}/env (and env.fish", ctx.home.display())));
    assert!(
        out.contains("cudaup itself  ~/.local/share/cudaup/bin/cudaup (a copy of this program: `cudaup` works in new shells)"),
        "{out}"
    );
    assert!(out.contains("puts the toolkit and cudaup on PATH"), "{out}");
}

/// On Windows the registry is the shell setup: the changes name the user environment's values
/// (PATH's new folders first, CUDA_PATH and CUDA_PATH_V13_<minor> for the new toolkit) and that
/// uninstall puts them back; no rc file is touched, and the summary's line is PowerShell's.
#[cfg(windows)]
#[test]
fn on_windows_the_changes_name_the_user_environment_not_rc_files() {
    let w = World::new();
    fs_err::write(w.home.path().join(".bashrc"), "# mine\n").unwrap();
    let system = no_gpu();
    let ctx = w.ctx(&system, Lang::En);
    let (r, _, out) = drive_with(&ctx, vec![Answer::Select(3), Answer::Select(0)]);
    let (a, preview) = go(r.unwrap());
    assert!(preview.env && a.reaches_new_shells());
    assert!(preview.hooks.is_empty(), "{:?}", preview.hooks);
    let Some(ToolkitChange::New(prefix)) = &preview.toolkit else {
        panic!("a new toolkit: {out}")
    };
    let bin = ctx.home.join("bin");
    let wanted = preview.user_env.clone().expect("the user environment");
    assert_eq!(
        wanted.path,
        [
            bin.display().to_string(),
            prefix.join("bin").display().to_string(),
            prefix.join("bin").join("x64").display().to_string()
        ]
    );
    let p = prefix.display().to_string();
    let release = preview
        .plan
        .component("cuda")
        .unwrap()
        .version
        .clone()
        .unwrap();
    let versioned = crate::install::env::registry::versioned_name(&release).unwrap();
    assert!(versioned.starts_with("CUDA_PATH_V13_"), "{versioned}");
    assert_eq!(
        wanted.vars,
        [("CUDA_PATH".to_owned(), p.clone()), (versioned, p.clone())]
    );
    assert!(
        out.contains(&format!(r"HKCU\Environment\Path: {} first", bin.display())),
        "{out}"
    );
    assert!(
        out.contains(&format!(r"HKCU\Environment\CUDA_PATH = {p}")),
        "{out}"
    );
    assert!(
        out.contains("`cudaup uninstall` puts each value back"),
        "{out}"
    );
    assert!(
        !out.contains(".bashrc") && !out.contains("no startup file"),
        "{out}"
    );
    // The settings install runs with write the registry.
    assert!(a.settings(ctx.process).unwrap().modify_path);

    // Declined in Customise: nothing in the registry, and the settings say so.
    let (r, p, out) = drive_with(
        &ctx,
        vec![
            Answer::Select(3),
            Answer::Select(1), // Customise
            Answer::Default,   // CUDA
            Answer::Default,   // prefix
            Answer::Default,   // source
            Answer::Default,   // components
            Answer::Confirm(false),
            Answer::Default, // verify
            Answer::Select(0),
        ],
    );
    let (a, preview) = go(r.unwrap());
    assert!(
        p.was_asked("Put cudaup's folders on your user PATH"),
        "{:?}",
        p.asked
    );
    assert!(!a.reaches_new_shells() && preview.user_env.is_none());
    assert!(out.contains("no startup file is changed"), "{out}");
    assert!(!a.settings(ctx.process).unwrap().modify_path);
}

#[test]
fn without_a_toolkit_the_env_still_puts_cudaup_on_path_and_a_foreign_file_is_named() {
    let w = World::new();
    let system = h200();
    let ctx = w.ctx(&system, Lang::En);
    // pytorch: no toolkit, but the env scripts put cudaup on PATH, and the rc files get the line.
    let (r, _, out) = drive_with(&ctx, vec![Answer::Select(1), Answer::Select(0)]);
    let (_, preview) = go(r.unwrap());
    assert!(preview.toolkit.is_none() && preview.env, "{out}");
    // New shells get it: the rc files' line (on Windows the user PATH, cudaup's bin only).
    if cfg!(windows) {
        let wanted = preview.user_env.clone().expect("the user environment");
        assert_eq!(wanted.path, [ctx.home.join("bin").display().to_string()]);
        assert!(wanted.vars.is_empty(), "{wanted:?}");
    } else {
        assert!(!preview.hooks.is_empty(), "{out}");
    }
    assert!(
        out.contains("env (and env.fish, env.ps1): puts cudaup on PATH\n"),
        "{out}"
    );
    let text = summary(ctx.s, ctx.style, &preview, ". \"/h/env\"", true, None);
    assert!(
        text.contains("1. Put `cudaup` on PATH in this shell (new shells do it by themselves):\n       . \"/h/env\""),
        "{text}"
    );
    // No rc file chosen: the full path too.
    let text = summary(ctx.s, ctx.style, &preview, ". \"/h/env\"", false, None);
    // `bin/cudaup`; on Windows `bin\cudaup.exe`.
    let copy = ctx
        .home
        .join("bin")
        .join(format!("cudaup{}", std::env::consts::EXE_SUFFIX));
    assert!(
        text.contains(&format!("add this line to your shell's startup file to keep it):\n       . \"/h/env\"\n     Or run cudaup by its full path: {}", copy.display())),
        "{text}"
    );
    // A file of the user's where the copy goes: the preview says so before anything is asked.
    fs_err::create_dir_all(copy.parent().unwrap()).unwrap();
    fs_err::write(&copy, b"#!/bin/sh\n").unwrap();
    let (r, _, out) = drive_with(&ctx, vec![Answer::Select(1), Answer::Select(0)]);
    let (_, preview) = go(r.unwrap());
    assert!(preview.cudaup.is_err());
    assert!(
        out.contains("cudaup itself  cannot be copied: ")
            && out.contains("is not a copy cudaup installed"),
        "{out}"
    );
    let zh = w.ctx(&system, Lang::Zh);
    let (_, _, out) = drive_with(&zh, vec![Answer::Select(1), Answer::Select(0)]);
    assert!(
        out.contains("cudaup 本身") && out.contains("无法复制："),
        "{out}"
    );
}

#[test]
fn cancel_at_the_confirm_step_and_eof_are_cancels() {
    let w = World::new();
    let system = no_gpu();
    let ctx = w.ctx(&system, Lang::En);
    let (r, _, _) = drive_with(&ctx, vec![Answer::Select(3), Answer::Select(2)]);
    assert!(matches!(r, Ok(Decision::Cancel)));
    // Input ends at the confirm step: never a yes.
    let (r, p, _) = drive_with(&ctx, vec![Answer::Select(3)]);
    assert!(matches!(r, Err(Stop::Cancel)));
    assert!(p.was_asked("Go ahead? -> cancelled"));
    let (r, _, _) = drive_with(&ctx, vec![Answer::Cancel]);
    assert!(matches!(r, Err(Stop::Cancel)));
}

#[test]
fn a_plan_that_does_not_fit_offers_only_customise_and_cancel() {
    let w = World::new();
    let system = no_gpu();
    let ctx = w.ctx(&system, Lang::En);
    let (r, p, out) = drive_with(
        &ctx,
        vec![
            Answer::Select(3),
            Answer::Select(1), // Customise
            Answer::Input("99.9".into()),
            Answer::Default,
            Answer::Default,
            Answer::Default, // components
            Answer::Confirm(false),
            Answer::Confirm(false),
            // Now nothing fits: the first choice is Customise, the second Cancel.
            Answer::Select(1),
        ],
    );
    assert!(matches!(r, Ok(Decision::Cancel)));
    assert!(out.contains("No cuda-dev stack"), "{out}");
    assert!(out.contains("Nothing fits these choices"));
    assert!(p.was_asked("Go ahead? -> Cancel"));
}

#[test]
fn mirrors_from_the_list_and_plain_http_needs_a_yes() {
    let w = World::new();
    let system = h200();
    let ctx = w.ctx(&system, Lang::En);
    let script = |trust: bool| {
        vec![
            Answer::Select(1), // pytorch
            Answer::Select(1), // Customise
            Answer::Default,   // CUDA
            Answer::Default,   // torch
            Answer::Default,   // Python
            Answer::Default,   // venv
            Answer::Select(1), // PyPI: TUNA
            Answer::Select(4), // PyTorch index: another one
            Answer::Input("ftp://mirror.lan/whl".into()),
            Answer::Input("http://mirror.lan/whl".into()),
            Answer::Default, // sh/bash/zsh shells (Windows: the user PATH), cudaup goes on PATH
            Answer::Default, // verify
            Answer::Confirm(trust), // plain http?
            Answer::Select(0), // Install
        ]
    };
    let (r, p, out) = drive_with(&ctx, script(true));
    let (a, _) = go(r.unwrap());
    assert_eq!(
        a.pypi_index
            .as_ref()
            .map(crate::fetch::GivenLocation::as_str),
        Some("https://pypi.tuna.tsinghua.edu.cn/simple")
    );
    assert_eq!(
        a.torch_index
            .as_ref()
            .map(crate::fetch::GivenLocation::as_str),
        Some("http://mirror.lan/whl")
    );
    assert!(a.allow_http);
    assert!(p.was_asked("refused \"ftp://mirror.lan/whl\""));
    assert!(p.was_asked("http://mirror.lan/whl is plain http"));
    // pytorch keeps no toolkit of its own here: no toolkit or source questions; the shells are
    // asked about, since the env scripts put cudaup itself on PATH.
    assert!(!p.was_asked("CUDA toolkit come from"));
    if cfg!(windows) {
        assert!(
            p.was_asked("Put cudaup's folders on your user PATH"),
            "{:?}",
            p.asked
        );
        assert!(!p.was_asked("Load cudaup's environment in new"));
    } else {
        assert!(p.was_asked("Load cudaup's environment in new sh/bash/zsh shells"));
    }
    assert!(out.contains("Python venv"), "{out}");

    // Not trusted: the http index is dropped, the rest is kept.
    let (r, _, out) = drive_with(&ctx, script(false));
    let (a, _) = go(r.unwrap());
    assert_eq!(a.torch_index, None);
    assert_eq!(
        a.pypi_index
            .as_ref()
            .map(crate::fetch::GivenLocation::as_str),
        Some("https://pypi.tuna.tsinghua.edu.cn/simple")
    );
    assert!(!a.allow_http);
    assert!(out.contains("Plain-http sources left out"));
}

#[test]
fn the_saved_config_has_the_agreed_keys_and_reads_back() {
    let w = World::new();
    let system = no_gpu();
    let mut a = Answers::initial(&w.process, &system, &w.catalog, None).unwrap();
    a.profile = Profile::CudaDev;
    a.cuda = Some(crate::model::version::VersionPin::parse("13.0").unwrap());
    a.torch = Some(crate::model::version::VersionPin::parse("2.8").unwrap()); // no use to cuda-dev: not saved
    a.driver = Some(crate::model::request::DriverPolicy::Keep);
    a.prefix = Some("/opt/cuda".into());
    a.nvidia_mirror = crate::fetch::GivenLocation::parse("/srv/mirror").ok();
    a.shells = vec![Shell::Posix];
    let path = w.home.path().join("cudaup.toml");
    let text = a
        .to_config(path.clone(), Lang::Zh, Some("/bin/bash"))
        .to_toml();
    for needle in [
        "version = 1",
        "profile = \"cuda-dev\"",
        "lang = \"zh\"",
        "[pins]",
        "cuda = \"13.0\"",
        "# torch = ",
        "[driver]",
        "policy = \"keep\"",
        "[install]",
        "prefix = \"/opt/cuda\"",
        "no_cudnn = false",
        "verify = true",
        "[shell]",
        "modify_path = true",
        "shells = [\"bash\"]",
        "[sources]",
        "source = \"redist\"",
        "nvidia_mirror = \"/srv/mirror\"",
        "allow_http = false",
    ] {
        assert!(text.contains(needle), "{needle:?} not in\n{text}");
    }
    // The config module reads it back (install --config uses the same reader) to the
    // same answers, minus what the profile has no use for.
    let back = Config::parse(&text, &path).unwrap();
    let again = Answers::initial(&w.process, &system, &w.catalog, Some(&back)).unwrap();
    let mut fitted = a.clone();
    fitted.fit_profile();
    assert_eq!(again, fitted);
    assert_eq!(back.lang, Some(config::Lang::Zh));
}

#[test]
fn unattended_takes_the_suggestions_or_stops_without_yes() {
    let w = World::new();
    let system = no_gpu();
    let mut ctx = w.ctx(&system, Lang::En);
    ctx.unattended = true;
    let mut out = Vec::new();
    let mut initial = Answers::initial(&w.process, &system, &w.catalog, None).unwrap();
    initial.profile = Profile::CudaDev;
    let d = drive(&ctx, &mut DefaultsPrompter, &mut out, initial.clone()).unwrap();
    assert_eq!(go(d).0.profile, Profile::CudaDev);
    // --config without --yes and without a terminal: show the plan, then refuse.
    ctx.cannot_confirm = true;
    let r = drive(&ctx, &mut DefaultsPrompter, &mut out, initial.clone());
    assert!(
        matches!(r, Err(Stop::Fail(ref e @ Error::Prompt(PromptError::NoTerminal(ref m))))
            if m.contains("add --yes") && e.exit_code() == ExitCode::Usage),
        "{r:?}"
    );
    // Unattended and nothing fits: exit code 5, not an endless loop.
    ctx.cannot_confirm = false;
    initial.cuda = Some(crate::model::version::VersionPin::parse("99.9").unwrap());
    let d = drive(&ctx, &mut DefaultsPrompter, &mut out, initial).unwrap();
    assert!(matches!(d, Decision::Unsupported));
}

#[test]
fn chinese_strings_reach_the_screen() {
    let w = World::new();
    let system = no_gpu();
    let ctx = w.ctx(&system, Lang::Zh);
    let (r, p, out) = drive_with(&ctx, vec![Answer::Select(3), Answer::Select(0)]);
    go(r.unwrap());
    assert!(out.contains("没有检测到 NVIDIA 显卡"));
    assert!(out.contains("磁盘上会有这些改动"));
    assert!(p.was_asked("要安装哪一套环境？ -> cuda-dev"));
    assert!(p.was_asked("开始安装吗？ -> 安装"));
}

#[test]
fn summary_lists_the_next_steps() {
    let w = World::new();
    let gpu = h200();
    let ctx = w.ctx(&gpu, Lang::En);
    let (r, _, _) = drive_with(&ctx, vec![Answer::Select(3), Answer::Select(0)]);
    let (_, mut preview) = go(r.unwrap());
    preview.venv = Some((PathBuf::from("/v"), false));
    preview.driver = DriverChange::Change("580.95.05".into());
    let text = summary(ctx.s, ctx.style, &preview, ". \"/h/env\"", true, None);
    assert!(
        text.contains(
            "1. Put CUDA and `cudaup` on PATH in this shell (new shells do it by themselves)"
        ),
        "{text}"
    );
    assert!(text.contains(". \"/h/env\""));
    // The activation is written for the shell people type into here: a POSIX shell's `bin/activate`;
    // on Windows PowerShell's Scripts\Activate.ps1.
    let activate = if cfg!(windows) {
        r". '/v\Scripts\Activate.ps1'"
    } else {
        ". \"/v/bin/activate\""
    };
    assert!(
        text.contains(&format!(
            "2. Activate the Python environment:\n       {activate}"
        )),
        "{text}"
    );
    assert!(text.contains("3. Install NVIDIA driver 580.95.05"));
    assert!(text.contains("then reboot"));
    // install ran the driver step and left a reboot marker: reboot first.
    let text = summary(
        ctx.s,
        ctx.style,
        &preview,
        ". \"/h/env\"",
        true,
        Some("580.95.05"),
    );
    assert!(
        text.contains("3. Reboot now to load NVIDIA driver 580.95.05"),
        "{text}"
    );
}

#[test]
fn paths_expand_and_widths_count_cjk_twice() {
    let home = Path::new("/home/u");
    assert_eq!(expand("~/cuda", Some(home)), PathBuf::from("/home/u/cuda"));
    assert_eq!(expand("~", Some(home)), PathBuf::from("/home/u"));
    assert_eq!(expand("/opt/x", Some(home)), PathBuf::from("/opt/x"));
    assert_eq!(expand("rel", Some(home)), PathBuf::from("rel"));
    assert_eq!(width("CUDA 工具包"), 5 + 6);
}

#[test]
fn jax_is_offered_and_its_plan_is_previewed() {
    let w = World::new();
    let system = h200();
    let ctx = w.ctx(&system, Lang::En);
    let (r, p, out) = drive_with(&ctx, vec![Answer::Select(5), Answer::Select(0)]);
    let (a, _) = go(r.unwrap());
    assert_eq!(a.profile, Profile::Jax);
    assert!(
        p.was_asked("-> jax         NVIDIA driver and JAX with its CUDA plugin and wheels"),
        "{:?}",
        p.asked
    );
    assert!(out.contains("jax[cuda13]"), "{out}");
    // Chinese: the same line in Chinese.
    let zh = w.ctx(&system, Lang::Zh);
    let (_, p, _) = drive_with(&zh, vec![Answer::Select(5), Answer::Select(0)]);
    assert!(p.was_asked("显卡驱动 + JAX"), "{:?}", p.asked);
}

/// M19: the plan the wizard previews is the plan `cudaup install` makes from the same answers on
/// the same machine (its `plan_for`), for every profile on several machines; the wizard then
/// runs that very object (`preview.install` goes to `run_plan`), so nothing is detected or
/// resolved again after the questions.
#[test]
fn the_previewed_plan_is_the_plan_install_runs_on_every_machine() {
    let w = World::new();
    let mut no_driver = h200();
    no_driver.driver = None;
    let mut no_toolkit = h200();
    no_toolkit.toolkits.clear();
    let mut no_python = h200();
    no_python.pythons.clear();
    let mut t4 = h200();
    t4.gpus[0].name = "Tesla T4".into();
    t4.gpus[0].pci_id = Some("10de:1eb8".into());
    t4.gpus[0].compute_capability = Some("7.5".into());
    t4.gpus[0].architecture = Some("Turing".into());
    let machines = [
        ("H200", h200()),
        ("no GPU", no_gpu()),
        ("H200 without a driver", no_driver),
        ("H200 without a toolkit", no_toolkit),
        ("H200 without Python", no_python),
        ("T4", t4),
    ];
    let (mut planned, mut unsupported) = (0, 0);
    for (name, system) in &machines {
        let ctx = w.ctx(system, Lang::En);
        for profile in PROFILES {
            let mut a = Answers::initial(&w.process, system, &w.catalog, None).unwrap();
            a.profile = profile;
            a.fit_profile();
            let previewed = preview(&ctx, &a).unwrap();
            let home = crate::install::home::Home::at(&ctx.home);
            let settings = a.settings(&w.process).unwrap();
            let install = crate::cli::install::plan_for(
                &settings,
                system,
                None,
                &home,
                &NoCommands,
                &w.catalog,
            )
            .unwrap();
            match (&previewed.install, install) {
                (Some(shown), Ok(run)) => {
                    assert_eq!(shown, &run, "{name}, {profile}");
                    planned += 1;
                }
                (None, Err(refused)) => {
                    assert_eq!(previewed.plan, *refused, "{name}, {profile}");
                    unsupported += 1;
                }
                (shown, run) => panic!("{name}, {profile}: previewed {shown:?}, install {run:?}"),
            }
        }
    }
    // Both outcomes were compared, not only one.
    assert!(
        planned >= 10 && unsupported >= 1,
        "{planned} planned, {unsupported} refused"
    );
}

/// A reach where PyTorch's index and PyPI did not answer and NVIDIA's server did.
fn only_nvidia() -> crate::install::reach::Reach {
    use crate::install::reach::{Answer as Site, Failure, Reach, Route, Service};
    let site = |service, base: &str, reached| Site {
        route: Route {
            service,
            base: crate::fetch::GivenLocation::parse(base).unwrap(),
            origin: "default".into(),
        },
        reached,
        detail: if reached {
            "answered in 9 ms"
        } else {
            "refused"
        }
        .into(),
        millis: reached.then_some(9),
        failure: (!reached).then_some(Failure::Refused),
    };
    Reach {
        answers: vec![
            site(
                Service::PytorchIndex,
                "https://download.pytorch.org/whl",
                false,
            ),
            site(Service::Pypi, "https://pypi.org/simple", false),
            site(
                Service::NvidiaRedist,
                "https://developer.download.nvidia.com",
                true,
            ),
        ],
    }
}

/// What cannot work here is greyed with why and what would (issue 37): the suggestion moves to
/// a profile that can, a greyed one chosen is refused and the question asked again, and the
/// offered ones carry their toolkit's size.
#[test]
fn profiles_the_download_sites_cannot_serve_are_greyed_and_not_taken() {
    let w = World::new();
    let none = no_gpu();
    let mut ctx = w.ctx(&none, Lang::En);
    ctx.reach = Some(only_nvidia());
    // Enter: the moved suggestion (cuda-dev); then the plan's Go.
    let (r, p, out) = drive_with(&ctx, vec![Answer::Default, Answer::Default]);
    let (a, _) = go(r.unwrap());
    assert_eq!(a.profile, Profile::CudaDev);
    assert!(
        out.contains("cpu cannot work here: nothing that serves PyTorch answered:")
            && out.contains("PyPI https://pypi.org/simple: no answer (connection refused)")
            && out.contains("what would work: a mirror this machine reaches")
            && out.contains("`cpu` cannot work here (see above), so `cuda-dev` is the suggestion."),
        "{out}"
    );
    assert!(p.asked[0].contains("-> cuda-dev"), "{:?}", p.asked);
    assert!(
        p.asked[0].contains("[CUDA toolkit: about "),
        "{:?}",
        p.asked
    );
    // Choosing a greyed one (cpu, the fifth) is refused and asked again.
    let (r, p, out) = drive_with(
        &ctx,
        vec![Answer::Select(4), Answer::Select(3), Answer::Default],
    );
    assert_eq!(go(r.unwrap()).0.profile, Profile::CudaDev);
    assert!(
        out.contains("`cpu` cannot work here (see above): choose another"),
        "{out}"
    );
    assert_eq!(
        p.asked
            .iter()
            .filter(|q| q.starts_with("What should cudaup set up?"))
            .count(),
        2,
        "{:?}",
        p.asked
    );
    // In Chinese too.
    let mut zh = w.ctx(&none, Lang::Zh);
    zh.reach = Some(only_nvidia());
    let (r, _, out) = drive_with(&zh, vec![Answer::Default, Answer::Default]);
    assert_eq!(go(r.unwrap()).0.profile, Profile::CudaDev);
    assert!(
        out.contains("cpu 在本机无法使用：提供 PyTorch 的站点都没有应答："),
        "{out}"
    );
}

#[test]
fn nothing_reachable_stops_the_wizard_with_the_fix() {
    let w = World::new();
    let none = no_gpu();
    let mut ctx = w.ctx(&none, Lang::En);
    let mut reach = only_nvidia();
    reach.answers[2].reached = false;
    ctx.reach = Some(reach);
    let (r, _, out) = drive_with(&ctx, vec![Answer::Default]);
    assert!(matches!(r, Ok(Decision::Unreachable)), "{r:?}");
    assert!(out.contains("No profile can work here"), "{out}");
}
