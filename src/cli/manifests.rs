//! `cudaup manifests check [DIR]`, `manifests update`, `manifests status`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::{Args, Subcommand};

use crate::catalog::update::{self, Options, PARTS};
use crate::catalog::{check, Catalog, Date, Selection, Source, EMBEDDED};
use crate::error::{ExitCode, Result};
use crate::fetch::Location;
use crate::world::process::Process;

use super::{GlobalArgs, Style};

/// Catalog subcommands.
#[derive(Debug, Subcommand)]
pub enum ManifestsCommand {
    /// Validate a catalog: schema, cross-references between files, and a source on every row.
    /// Problems are printed as FILE:LINE: MESSAGE; exit code 2 when there are any
    Check {
        /// The directory to check [default: the catalog in effect]
        dir: Option<PathBuf>,
    },
    /// Read the publishers' own data (NVIDIA's redist listings and redistrib JSONs, PyPI's
    /// metadata, PyTorch's index, the wheels' fatbin headers) and write a refreshed catalog to
    /// $CUDAUP_HOME/manifests, which plans then use; only metadata and single zip members are
    /// read, never whole wheels
    #[command(
        after_help = "Examples:\n  cudaup manifests update\n  cudaup manifests update --index-url https://mirrors.example.cn/pypi/simple --skip nvidia-redist,pytorch-index\n  cudaup manifests update --write manifests/      # regenerate a checkout's embedded catalog\n\n\
A source that cannot be reached keeps its rows as they were (exit code 3); a source that answers\n\
something else than it publishes stops the update and changes nothing (exit code 4), as does a\n\
refreshed catalog that fails `manifests check`."
    )]
    Update(UpdateArgs),
    /// Say which catalog is in effect, how old it is, and when each part was read and from where
    Status {
        /// Print it as JSON
        #[arg(long)]
        json: bool,
    },
}

/// `cudaup manifests update` flags.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// Write the refreshed files into DIR (e.g. a checkout's manifests/) instead of
    /// $CUDAUP_HOME/manifests
    #[arg(long, value_name = "DIR")]
    pub write: Option<PathBuf>,
    /// A copy of NVIDIA's download layout [default: https://developer.download.nvidia.com]
    #[arg(long, value_name = "URL|DIR", env = "CUDAUP_MIRROR")]
    pub mirror: Option<String>,
    /// PyPI or a mirror of it (PEP 691 or PEP 503) [default: https://pypi.org/simple]
    #[arg(long, value_name = "URL|DIR", env = "CUDAUP_INDEX_URL")]
    pub index_url: Option<String>,
    /// PyTorch's wheel index or a mirror of its `<base>/<variant>/` layout
    /// [default: https://download.pytorch.org/whl]
    #[arg(long, value_name = "URL|DIR", env = "CUDAUP_TORCH_INDEX")]
    pub torch_index: Option<String>,
    /// NVIDIA's driver READMEs by release tag (`<base>/<release>/README.md`), or a copy of that
    /// layout [default: https://raw.githubusercontent.com/NVIDIA/open-gpu-kernel-modules]
    #[arg(long, value_name = "URL|DIR", env = "CUDAUP_DRIVER_TABLES")]
    pub driver_tables: Option<String>,
    /// Accept plain-http mirrors
    #[arg(long)]
    pub allow_http: bool,
    /// Read the sources of an unattended config file ([sources])
    #[arg(long, value_name = "FILE", env = "CUDAUP_CONFIG")]
    pub config: Option<PathBuf>,
    /// Read only these parts (nvidia-redist, pypi, pytorch-index, fatbin, compilers,
    /// driver-tables), comma-separated
    #[arg(long, value_name = "PARTS", value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(update::PARTS))]
    pub only: Vec<String>,
    /// Leave these parts out (their rows stay as they are)
    #[arg(long, value_name = "PARTS", value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(update::PARTS))]
    pub skip: Vec<String>,
    /// The most MiB the fatbin reads may fetch in this run (results are cached by the wheel's
    /// sha256, so later runs fetch only new wheels)
    #[arg(long, value_name = "MIB", default_value_t = 96)]
    pub fatbin_budget: u64,
    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,
}

fn name_of(source: &Source) -> String {
    match source {
        Source::Embedded => "the embedded catalog".to_owned(),
        Source::Dir(d) => d.display().to_string(),
    }
}

impl ManifestsCommand {
    /// Whether the command writes into `$CUDAUP_HOME` (a refreshed catalog).
    pub fn changes_home(&self) -> bool {
        matches!(self, ManifestsCommand::Update(a) if a.write.is_none())
    }
}

pub(super) fn run(
    cmd: &ManifestsCommand,
    selection: &Selection,
    global: &GlobalArgs,
    process: &Process,
    cancel: Arc<AtomicBool>,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    match cmd {
        ManifestsCommand::Check { dir } => {
            let source = match dir {
                Some(d) => Source::Dir(d.clone()),
                None => selection.source.clone(),
            };
            run_check(&source, style, out)
        }
        ManifestsCommand::Status { json } => status(selection, process, *json, style, out),
        ManifestsCommand::Update(args) => {
            run_update(args, selection, global, process, cancel, style, out)
        }
    }
}

fn run_check(source: &Source, style: &Style, out: &mut dyn Write) -> Result<ExitCode> {
    let problems = check(source);
    let name = name_of(source);
    if problems.is_empty() {
        writeln!(out, "{} {name}: no problems", style.good("ok"))?;
        return Ok(ExitCode::Ok);
    }
    for p in &problems {
        writeln!(out, "{p}")?;
    }
    writeln!(
        out,
        "{} {name}: {} problem(s)",
        style.bad("error"),
        problems.len()
    )?;
    Ok(ExitCode::Usage)
}

/// The texts of the catalog at `source`.
fn texts_of(source: &Source) -> Result<BTreeMap<String, String>> {
    EMBEDDED
        .iter()
        .map(|(name, text)| {
            let t = match source {
                Source::Embedded => (*text).to_owned(),
                Source::Dir(d) => fs_err::read_to_string(d.join(name)).map_err(|e| {
                    crate::catalog::CatalogError::Manifest {
                        path: d.join(name),
                        message: format!("cannot read it: {}", e.kind()),
                    }
                })?,
            };
            Ok(((*name).to_owned(), t))
        })
        .collect()
}

fn location(s: &str, allow_http: bool) -> Result<Location> {
    let loc = Location::parse(s)?;
    if !loc.is_authenticated() && !allow_http {
        return Err(crate::fetch::FetchError::InsecureHttp { url: s.to_owned() }.into());
    }
    Ok(loc)
}

#[allow(clippy::too_many_arguments)]
fn run_update(
    args: &UpdateArgs,
    selection: &Selection,
    global: &GlobalArgs,
    process: &Process,
    cancel: Arc<AtomicBool>,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let config = super::args::load_config(args.config.as_deref())?;
    let sources = config
        .as_ref()
        .map(|c| c.sources.clone())
        .unwrap_or_default();
    let allow_http = args.allow_http || sources.allow_http == Some(true);
    let pick = |flag: &Option<String>,
                file: Option<&crate::fetch::GivenLocation>,
                default: &str|
     -> String {
        flag.clone()
            .or_else(|| file.map(ToString::to_string))
            .unwrap_or_else(|| default.to_owned())
    };
    let parts: Vec<String> = PARTS
        .iter()
        .filter(|p| args.only.is_empty() || args.only.iter().any(|o| o == *p))
        .filter(|p| !args.skip.iter().any(|s| s == *p))
        .map(|p| (*p).to_owned())
        .collect();
    let home = crate::install::home::Home::of(process)?.root().to_owned();
    let opts = Options {
        nvidia: location(
            &pick(
                &args.mirror,
                sources.nvidia_mirror.as_ref(),
                crate::sources::redist::NVIDIA_BASE,
            ),
            allow_http,
        )?,
        pypi: location(
            &pick(
                &args.index_url,
                sources.index_url.as_ref().or(sources.pypi_index.as_ref()),
                crate::sources::pypi::PYPI_SIMPLE,
            ),
            allow_http,
        )?,
        torch: location(
            &pick(
                &args.torch_index,
                sources.torch_index.as_ref(),
                crate::install::python::step::TORCH_INDEX,
            ),
            allow_http,
        )?,
        driver_tables: location(
            args.driver_tables.as_deref().unwrap_or(update::TABLES_BASE),
            allow_http,
        )?,
        parts,
        fatbin_budget: args.fatbin_budget.saturating_mul(1 << 20),
        today: Date::today(),
        cache_dir: crate::install::home::Home::at(&home).cache(),
    };
    // The base: the directory being rewritten, else the catalog in effect.
    let base_source = match &args.write {
        Some(d) if d.join("catalog.toml").exists() => Source::Dir(d.clone()),
        _ => selection.source.clone(),
    };
    let base = match &base_source {
        Source::Dir(_) if selection.refreshed && base_source == selection.source => {
            selection.load()?
        }
        s => Catalog::load(s)?,
    };
    let texts = texts_of(&base_source)?;
    let reporter = Arc::new(super::reporter::Lines::new(Box::new(std::io::stderr())));
    let fetcher = super::fetcher(process, allow_http, cancel, reporter)?;
    let refreshed = update::refresh(&fetcher, &base, &texts, &opts)?;
    let written = match &args.write {
        Some(dir) => update::write_dir(dir, &refreshed.texts)?,
        None => {
            let h = crate::install::home::Home::at(&home);
            update::write_refreshed(
                &home,
                &h.manifests_d(),
                &h.manifests_link(),
                &refreshed.texts,
            )?
        }
    };
    let code = if refreshed.any_unreachable() {
        ExitCode::Network
    } else {
        ExitCode::Ok
    };
    if args.json {
        let doc = serde_json::json!({
            "status": if code == ExitCode::Ok { "ok" } else { "partial" },
            "written": written.dir,
            "set_aside": written.set_aside,
            "parts": refreshed.parts,
            "bytes": refreshed.bytes,
            "changes": refreshed.changes,
            "notes": refreshed.notes,
        });
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).expect("serialises")
        )?;
        return Ok(code);
    }
    writeln!(out, "{}", style.heading("Sources"))?;
    for p in &refreshed.parts {
        let status = if p.status == "ok" {
            style.good("ok")
        } else if p.status == "skipped" {
            style.dim("skipped")
        } else {
            style.warn(&p.status)
        };
        writeln!(
            out,
            "  {:<14} {status}  {}  ({} bytes)",
            p.name, p.url, p.bytes
        )?;
    }
    if refreshed.changes.is_empty() {
        writeln!(out, "\nNo row changed.")?;
    } else {
        writeln!(out, "\n{}", style.heading("Changes"))?;
        for c in &refreshed.changes {
            writeln!(out, "  {c}")?;
        }
    }
    if !refreshed.notes.is_empty() && (global.verbose > 0 || refreshed.notes.len() <= 12) {
        writeln!(out, "\n{}", style.heading("Not turned into rows"))?;
        for n in &refreshed.notes {
            writeln!(out, "  - {n}")?;
        }
    } else if !refreshed.notes.is_empty() {
        writeln!(
            out,
            "\n{} facts were not turned into rows; -v lists them",
            refreshed.notes.len()
        )?;
    }
    writeln!(
        out,
        "\nFetched {} bytes ({:.1} MiB). Wrote {}{}",
        refreshed.bytes,
        refreshed.bytes as f64 / f64::from(1 << 20),
        written.dir.display(),
        if args.write.is_none() {
            "; plans use it from now on (`cudaup manifests status`)".to_owned()
        } else {
            format!(" ({} file(s) changed)", written.changed.len())
        }
    )?;
    for a in &written.set_aside {
        writeln!(out, "{} {a}", style.warn("!"))?;
    }
    if code != ExitCode::Ok {
        writeln!(
            out,
            "{} some sources could not be read: their rows are kept as they were (exit code 3)",
            style.warn("!")
        )?;
    }
    Ok(code)
}

fn status(
    selection: &Selection,
    process: &Process,
    json: bool,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let catalog = selection.load()?;
    let today = Date::today();
    let age = catalog.age_days(&today);
    let embedded_date = crate::catalog::select::embedded_meta().date;
    let refreshed_dir = process
        .cudaup_home()
        .map(|h| crate::install::home::Home::new(h).manifests_link());
    if json {
        let doc = serde_json::json!({
            "in_effect": catalog.origin,
            "date": catalog.meta.date,
            "age_days": age,
            "stale": age > crate::catalog::STALE_AFTER_DAYS,
            "embedded_date": embedded_date,
            "refreshed_dir": refreshed_dir,
            "notes": selection.notes,
            "parts": catalog.meta.part,
        });
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).expect("serialises")
        )?;
        return Ok(ExitCode::Ok);
    }
    writeln!(
        out,
        "Catalog in effect: {} — dated {}, {age} days old{}",
        catalog.origin,
        catalog.meta.date,
        if age > crate::catalog::STALE_AFTER_DAYS {
            style.warn(" (stale: `cudaup manifests update`)")
        } else {
            String::new()
        }
    )?;
    writeln!(out, "  {}", catalog.meta.origin)?;
    if !selection.refreshed {
        writeln!(out, "  built-in catalog: {embedded_date}")?;
    }
    for n in &selection.notes {
        writeln!(out, "  {} {n}", style.warn("!"))?;
    }
    writeln!(out, "\n{}", style.heading("Parts"))?;
    for p in &catalog.meta.part {
        writeln!(
            out,
            "  {:<14} read {:<10}  {}  {}",
            p.name,
            p.read
                .map(|d| d.to_string())
                .unwrap_or_else(|| "never".into()),
            p.url,
            if p.status == "ok" {
                style.good("ok")
            } else {
                style.warn(&p.status)
            }
        )?;
    }
    Ok(ExitCode::Ok)
}
