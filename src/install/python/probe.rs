//! Asking the routes: each candidate's index page for the framework package, fetched through the
//! real [`Fetcher`] (one attempt, short timeouts), read for a wheel of the planned version that
//! runs on the target's Python and platform. All candidates are asked at once, so the slowest
//! dead host costs one timeout, not one per route.
//!
//! A route's layout is found by asking: PyTorch's `<base>/<variant>/<project>/`, then a flat
//! `<base>/<variant>/` listing (a mirror made for `pip --find-links`), then `<base>/<project>/`
//! (one variant's index given directly, or a PyPI mirror given as `--torch-index`). A PyPI-style
//! route is `<base>/<project>/`, or for a directory a flat folder of wheels (`pip download`'s).

use std::path::Path;

use crate::fetch::{FetchError, Fetcher, GivenLocation, Location};
use crate::model::system::OsFamily;
use crate::sources::pypi::{self, IndexError, IndexFile};

use super::route::{
    fixes, Alternatives, Attempt, Candidate, IndexSettings, Layout, NoRoute, Route, RouteKind, Want,
};

/// The parts of a wheel file name that decide where it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelTags {
    /// Distribution, normalised (`torch`).
    pub name: String,
    /// Version as written (`2.15.0+cu132`).
    pub version: String,
    /// Python tags (`cp312`, `py3`).
    pub python: Vec<String>,
    /// ABI tags (`cp312`, `abi3`, `none`).
    pub abi: Vec<String>,
    /// Platform tags (`manylinux_2_28_x86_64`, `any`).
    pub platform: Vec<String>,
}

/// Parses `{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl` (a `%2B` in an href'd name
/// is a `+`).
pub fn wheel_tags(filename: &str) -> Option<WheelTags> {
    let name = filename.replace("%2B", "+").replace("%2b", "+");
    let stem = name.strip_suffix(".whl")?;
    let parts: Vec<&str> = stem.split('-').collect();
    if parts.len() < 5 {
        return None;
    }
    let n = parts.len();
    let split = |s: &str| s.split('.').map(str::to_owned).collect::<Vec<_>>();
    Some(WheelTags {
        name: pypi::normalize(parts[0]),
        version: parts[1].to_owned(),
        python: split(parts[n - 3]),
        abi: split(parts[n - 2]),
        platform: split(parts[n - 1]),
    })
}

/// The interpreter and machine a wheel must run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Major and minor of CPython.
    pub python: (u32, u32),
    /// The OS.
    pub os: OsFamily,
    /// `x86_64` or `aarch64`.
    pub arch: String,
}

impl Target {
    /// The target of `want`.
    pub fn of(want: &Want) -> Option<Target> {
        let mut it = want.python.split('.').map(|p| p.parse::<u32>().ok());
        Some(Target {
            python: (it.next()??, it.next()??),
            os: want.os,
            arch: want.arch.clone(),
        })
    }

    /// `cp312`.
    pub fn cp(&self) -> String {
        format!("cp{}{}", self.python.0, self.python.1)
    }

    /// Whether a wheel with these tags installs here (CPython, this platform).
    pub fn fits(&self, w: &WheelTags) -> bool {
        let cp = self.cp();
        let (major, minor) = self.python;
        let py_ok = w.python.iter().any(|t| {
            *t == cp
                || *t == format!("py{major}")
                || *t == format!("py{major}{minor}")
                // cp3X with the stable ABI runs on every later 3.Y.
                || (t.strip_prefix(&format!("cp{major}"))
                    .and_then(|m| m.parse::<u32>().ok())
                    .is_some_and(|m| m <= minor)
                    && w.abi.iter().any(|a| a == "abi3"))
        });
        let abi_ok = w.abi.iter().any(|a| *a == cp || a == "abi3" || a == "none");
        py_ok && abi_ok && w.platform.iter().any(|p| self.platform_fits(p))
    }

    fn platform_fits(&self, p: &str) -> bool {
        if p == "any" {
            return true;
        }
        match self.os {
            OsFamily::Linux => {
                p.ends_with(&format!("_{}", self.arch))
                    && (p.starts_with("manylinux") || p.starts_with("linux"))
            }
            OsFamily::Macos => {
                let arch = if self.arch == "aarch64" {
                    "arm64"
                } else {
                    &self.arch
                };
                p.starts_with("macosx_") && (p.ends_with(arch) || p.ends_with("universal2"))
            }
            OsFamily::Windows => {
                p == if self.arch == "aarch64" {
                    "win_arm64"
                } else {
                    "win_amd64"
                }
            }
        }
    }

    /// `cp312 on linux x86_64`.
    pub fn describe(&self) -> String {
        format!(
            "{} on {} {}",
            self.cp(),
            super::route::os_name(self.os),
            self.arch
        )
    }
}

/// How one layout of one route answered.
#[derive(Debug)]
enum Page {
    /// The files it lists, and the layout pip needs for it.
    Listed(Layout, Location, Vec<IndexFile>),
    /// There is no such page (404, no such directory): try the next layout.
    Missing(String),
    /// It failed: unreachable, refused, timed out, an error status, or not an index.
    Failed {
        /// In words, with the cause.
        why: String,
        /// A network failure (exit code 3) rather than a page that is not an index.
        network: bool,
    },
}

fn classify(e: &FetchError) -> Page {
    match e {
        FetchError::Exhausted { last, .. } => classify(last),
        FetchError::Status {
            status: 404 | 410, ..
        } => Page::Missing(e.to_string()),
        FetchError::Local(io) if io.kind() == std::io::ErrorKind::NotFound => {
            Page::Missing(e.to_string())
        }
        FetchError::Cancelled => Page::Failed {
            why: "cancelled".into(),
            network: false,
        },
        e => Page::Failed {
            why: e.to_string(),
            network: e.is_network() || matches!(e, FetchError::InsecureHttp { .. }),
        },
    }
}

/// A location for pip: URLs as they are, directories as absolute `file://` URLs (for
/// `--index-url`) or paths (for `--find-links`).
fn pip_url(loc: &Location, dir_as_url: bool) -> String {
    match loc {
        Location::Http(u) => u.to_string(),
        Location::File(p) => {
            let abs = std::path::absolute(p).unwrap_or_else(|_| p.clone());
            if dir_as_url {
                reqwest::Url::from_directory_path(&abs)
                    .map(|u| u.to_string())
                    .unwrap_or_else(|_| abs.display().to_string())
            } else {
                abs.display().to_string()
            }
        }
    }
}

/// The project page of an index (`<index>/<project>/`).
fn index_page(fetcher: &Fetcher, index: &Location, project: &str) -> Page {
    if let Location::File(dir) = index {
        // pip reads `<dir>/<project>/index.html`; a folder without it is not this layout.
        if !dir
            .join(pypi::normalize(project))
            .join("index.html")
            .is_file()
        {
            return Page::Missing(format!(
                "{} has no {}/index.html",
                dir.display(),
                pypi::normalize(project)
            ));
        }
    }
    match pypi::list(fetcher, index, project) {
        Ok((page, files)) => Page::Listed(
            Layout::Index {
                url: pip_url(index, true),
            },
            page,
            files,
        ),
        Err(IndexError::Fetch(e)) => classify(&e),
        Err(e) => Page::Failed {
            why: e.to_string(),
            network: false,
        },
    }
}

/// A flat listing: an HTML page of links to wheels, or a folder of wheels.
fn flat_page(fetcher: &Fetcher, at: &Location, project: &str) -> Page {
    match at {
        Location::File(dir) => {
            let files = crate::sources::flat::list_dir(dir, Some(project), false);
            if files.is_empty() {
                return Page::Missing(format!("{} holds no {project} wheels", dir.display()));
            }
            Page::Listed(
                Layout::FindLinks {
                    url: pip_url(at, false),
                },
                at.clone(),
                files,
            )
        }
        Location::Http(_) => {
            // `<dir>/`: the trailing slash makes relative links resolve inside it.
            let page = at.join("");
            match fetcher.get_bytes(&page, Some("text/html")) {
                Ok(bytes) => {
                    let files = pypi::parse_html(&page, &String::from_utf8_lossy(&bytes));
                    if !files.iter().any(|f| f.filename.ends_with(".whl")) {
                        return Page::Missing(format!("{page} lists no wheels"));
                    }
                    Page::Listed(
                        Layout::FindLinks {
                            url: page.to_string(),
                        },
                        page,
                        files,
                    )
                }
                Err(e) => classify(&e),
            }
        }
    }
}

/// `download.pytorch.org`, `127.0.0.1:8080` or the directory.
fn host_of(base: &GivenLocation) -> String {
    match base.location() {
        Location::Http(u) => match (u.host_str(), u.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_owned(),
            _ => base.to_string(),
        },
        Location::File(p) => p.display().to_string(),
    }
}

/// A layout to try.
enum Try {
    /// A PEP 503/691 index at this location.
    Index(Location),
    /// A flat listing at this location.
    Flat(Location),
}

/// What asking one candidate found.
#[derive(Debug)]
enum Answer {
    /// It lists the planned wheel.
    Serves {
        layout: Layout,
        tagged: bool,
        what: String,
        /// The planned wheel's size, when the listing states it (PEP 700).
        size: Option<u64>,
    },
    /// It answered without it, or failed.
    Not(Attempt),
}

/// Asks one candidate, layout after layout, until one answers.
fn ask(fetcher: &Fetcher, want: &Want, target: &Target, c: &Candidate) -> Answer {
    let host = host_of(&c.base);
    let attempt = |outcome: String, network: bool| {
        Answer::Not(Attempt {
            route: c.route,
            base: c.base.to_string(),
            host: host.clone(),
            outcome,
            network,
        })
    };
    let base = c.base.location();
    let project = &want.packages[0].name;
    let mut layouts = Vec::new();
    if let (RouteKind::Pytorch, Some(v)) = (c.route, &want.variant) {
        layouts.push(Try::Index(base.join(v)));
        layouts.push(Try::Flat(base.join(v)));
    }
    layouts.push(Try::Index(base.clone()));
    if base.as_path().is_some() {
        layouts.push(Try::Flat(base.clone()));
    }
    let mut missing = Vec::new();
    for layout in &layouts {
        let page = match layout {
            Try::Index(index) => index_page(fetcher, index, project),
            Try::Flat(at) => flat_page(fetcher, at, project),
        };
        match page {
            Page::Listed(layout, page, files) => {
                return judge(want, target, c, &host, layout, &page, &files);
            }
            Page::Missing(why) => missing.push(why),
            Page::Failed { why, network } => return attempt(why, network),
        }
    }
    attempt(
        format!(
            "no {project} page in any layout cudaup knows ({})",
            missing.join("; ")
        ),
        false,
    )
}

/// Whether a listing holds the planned wheel for the target.
fn judge(
    want: &Want,
    target: &Target,
    c: &Candidate,
    host: &str,
    layout: Layout,
    page: &Location,
    files: &[IndexFile],
) -> Answer {
    let main = &want.packages[0];
    let fitting: Vec<WheelTags> = files
        .iter()
        .filter(|f| !f.yanked)
        .filter_map(|f| wheel_tags(&f.filename))
        .filter(|w| w.name == pypi::normalize(&main.name) && target.fits(w))
        .collect();
    let has = |version: &str| fitting.iter().any(|w| w.version == version);
    // The largest stated size among the fitting files of `version` (a listing may carry several
    // platform tags of one release; the one pip picks is among them).
    let size_of = |version: &str| {
        files
            .iter()
            .filter(|f| !f.yanked)
            .filter(|f| {
                wheel_tags(&f.filename).is_some_and(|w| {
                    w.name == pypi::normalize(&main.name) && target.fits(&w) && w.version == version
                })
            })
            .filter_map(|f| f.size)
            .max()
    };
    if let Some(tagged) = want.tagged_version().filter(|t| has(t)) {
        return Answer::Serves {
            layout,
            tagged: true,
            size: size_of(tagged.as_str()),
            what: format!(
                "{} lists {} {tagged} for {}",
                page,
                main.name,
                target.describe()
            ),
        };
    }
    let untagged_listed = has(&main.version);
    match (&want.pypi_build, untagged_listed) {
        (Ok(why), true) => {
            return Answer::Serves {
                layout,
                tagged: false,
                size: size_of(&main.version),
                what: format!(
                    "{} lists {} {} for {}: {why}",
                    page,
                    main.name,
                    main.version,
                    target.describe()
                ),
            }
        }
        (Err(why), true) => {
            return Answer::Not(Attempt {
                route: c.route,
                base: c.base.to_string(),
                host: host.to_owned(),
                outcome: format!(
                    "it lists only the untagged {} {}, not the planned build: {why}",
                    main.name, main.version
                ),
                network: false,
            })
        }
        _ => {}
    }
    let mut versions: Vec<&str> = fitting.iter().map(|w| w.version.as_str()).collect();
    versions.sort_by(|a, b| {
        crate::model::version::Version::parse(b)
            .cmp(&crate::model::version::Version::parse(a))
            .then(b.cmp(a))
    });
    versions.dedup();
    let listed = if versions.is_empty() {
        format!("no {} wheel for {} at all", main.name, target.describe())
    } else {
        let shown: Vec<&str> = versions.iter().take(6).copied().collect();
        format!(
            "for {} it has {}{}",
            target.describe(),
            shown.join(", "),
            if versions.len() > shown.len() {
                ", …"
            } else {
                ""
            }
        )
    };
    let wanted = want
        .tagged_version()
        .map(|t| {
            if want.pypi_build.is_ok() {
                format!("{t} (or PyPI's {})", main.version)
            } else {
                t
            }
        })
        .unwrap_or_else(|| main.version.clone());
    Answer::Not(Attempt {
        route: c.route,
        base: c.base.to_string(),
        host: host.to_owned(),
        outcome: format!("{page} has no {} {wanted}: {listed}", main.name),
        network: false,
    })
}

/// Whether PyPI (or the mirror) answers at all, for the dependencies of a route that carries
/// only the framework: `Err` says how it failed.
fn reachable(fetcher: &Fetcher, base: &GivenLocation, project: &str) -> Result<(), String> {
    let index = base.location();
    if let Location::File(dir) = index {
        return if dir.is_dir() {
            Ok(())
        } else {
            Err(format!("{} is not a directory", dir.display()))
        };
    }
    match index_page(fetcher, index, project) {
        Page::Listed(..) | Page::Missing(_) => Ok(()),
        Page::Failed { why, .. } => Err(why),
    }
}

/// Asks every usable candidate (at once) and takes the first, in order, that serves `want`.
pub fn choose(
    fetcher: &Fetcher,
    want: &Want,
    candidates: &[Candidate],
    settings: &IndexSettings,
) -> Result<Route, NoRoute> {
    let Some(target) = Target::of(want) else {
        return Err(NoRoute {
            wanted: want.describe(),
            attempts: Vec::new(),
            fixes: vec![format!(
                "the plan's Python `{}` is not a version",
                want.python
            )],
        });
    };
    let pypi = settings.pypi_base();
    let needs_deps = candidates.iter().any(|c| c.route == RouteKind::Pytorch);
    let (answers, deps) = std::thread::scope(|s| {
        let handles: Vec<_> = candidates
            .iter()
            .map(|c| {
                let target = &target;
                s.spawn(move || match &c.refused {
                    Some(why) => Answer::Not(Attempt {
                        route: c.route,
                        base: c.base.to_string(),
                        host: host_of(&c.base),
                        outcome: format!("not asked: {why}"),
                        network: false,
                    }),
                    None => ask(fetcher, want, target, c),
                })
            })
            .collect();
        let deps = needs_deps.then(|| {
            let pypi = &pypi;
            s.spawn(move || reachable(fetcher, pypi, &want.packages[0].name))
        });
        let answers: Vec<Answer> = handles
            .into_iter()
            .map(|h| h.join().expect("a probe thread panicked"))
            .collect();
        let deps = deps.map(|h| h.join().expect("a probe thread panicked"));
        (answers, deps)
    });
    let mut tried = Vec::new();
    for (c, answer) in candidates.iter().zip(answers) {
        match answer {
            Answer::Serves {
                layout,
                tagged,
                what,
                size,
            } => {
                let mut dependencies = None;
                let mut why = what;
                if c.route == RouteKind::Pytorch {
                    match (&deps, &layout) {
                        (Some(Ok(())), _) => dependencies = Some(pypi.to_string()),
                        // PyTorch's own index carries torch's dependencies too.
                        (Some(Err(e)), Layout::Index { .. }) => why.push_str(&format!(
                            "; the dependencies come from it too ({} did not answer: {e})",
                            host_of(&pypi)
                        )),
                        (Some(Err(e)), Layout::FindLinks { .. }) => {
                            tried.push(Attempt {
                                route: c.route,
                                base: c.base.to_string(),
                                host: host_of(&pypi),
                                outcome: format!(
                                    "it lists the framework's wheels only, and {} did not answer for the dependencies: {e}",
                                    host_of(&pypi)
                                ),
                                network: true,
                            });
                            continue;
                        }
                        (None, _) => {}
                    }
                }
                return Ok(Route {
                    route: c.route,
                    base: c.base.clone(),
                    layout,
                    dependencies,
                    tagged,
                    requirements: want.requirements(tagged),
                    why,
                    tried,
                    wheel_size: size,
                });
            }
            Answer::Not(a) => tried.push(a),
        }
    }
    let found = alternatives(fetcher, want, &target, candidates, settings);
    let fixes = fixes(want, settings, &tried, &found);
    Err(NoRoute {
        wanted: want.describe(),
        attempts: tried,
        fixes,
    })
}

/// After every route failed: asks what a changed request would find, so the fixes offer only
/// what works here (a CUDA pin whose build PyPI lists, `--torch-source auto` when another route
/// lists the planned wheel). Asked one after the other: this is the failure path.
fn alternatives(
    fetcher: &Fetcher,
    want: &Want,
    target: &Target,
    asked: &[Candidate],
    settings: &IndexSettings,
) -> Alternatives {
    let mut found = Alternatives::default();
    if want.pypi_build.is_err() && want.framework == super::route::Framework::Torch {
        // PyPI's untagged build of the release, whatever its variant.
        let untagged = Want {
            pypi_build: Ok(String::new()),
            variant: None,
            ..want.clone()
        };
        let pypi = Candidate {
            route: RouteKind::Pypi,
            base: settings.pypi_base(),
            origin: String::new(),
            refused: None,
            note: None,
        };
        found.pypi_lists_release = matches!(
            ask(fetcher, &untagged, target, &pypi),
            Answer::Serves { tagged: false, .. }
        );
    }
    if settings.source != super::route::TorchSource::Auto {
        let auto = IndexSettings {
            source: super::route::TorchSource::Auto,
            ..settings.clone()
        };
        found.auto_serves = super::route::candidates(want, &auto)
            .into_iter()
            .filter(|c| c.refused.is_none())
            .filter(|c| !asked.iter().any(|a| a.route == c.route && a.base == c.base))
            .find(|c| matches!(ask(fetcher, want, target, c), Answer::Serves { .. }))
            .map(|c| format!("{} {}", c.route.label(), c.base));
    }
    found
}

/// Whether `dir` is an offline bundle made by `cudaup mirror create` (its manifest is there).
pub fn is_bundle_dir(dir: &Path) -> bool {
    dir.join(super::bundle::MANIFEST).is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(minor: u32) -> Target {
        Target {
            python: (3, minor),
            os: OsFamily::Linux,
            arch: "x86_64".into(),
        }
    }

    #[test]
    fn tags_decide_where_a_wheel_runs() {
        let w = wheel_tags("torch-2.15.0%2Bcu132-cp312-cp312-manylinux_2_28_x86_64.whl").unwrap();
        assert_eq!(w.name, "torch");
        assert_eq!(w.version, "2.15.0+cu132");
        assert!(target(12).fits(&w));
        assert!(!target(11).fits(&w));
        let aarch = Target {
            arch: "aarch64".into(),
            ..target(12)
        };
        assert!(!aarch.fits(&w));
        let any = wheel_tags("filelock-3.20.0-py3-none-any.whl").unwrap();
        assert!(target(11).fits(&any));
        let abi3 = wheel_tags("torchaudio-2.11.1-cp310-abi3-manylinux2014_x86_64.whl").unwrap();
        assert!(target(12).fits(&abi3));
        assert!(!target(9).fits(&abi3));
        let free = wheel_tags("torch-2.15.0-cp314-cp314t-manylinux_2_28_x86_64.whl").unwrap();
        assert!(
            !target(14).fits(&free),
            "free-threaded builds are another ABI"
        );
        let mac = Target {
            os: OsFamily::Macos,
            arch: "aarch64".into(),
            ..target(12)
        };
        assert!(mac.fits(&wheel_tags("torch-2.15.0-cp312-none-macosx_11_0_arm64.whl").unwrap()));
        let win = Target {
            os: OsFamily::Windows,
            ..target(12)
        };
        assert!(win.fits(&wheel_tags("torch-2.15.0-cp312-cp312-win_amd64.whl").unwrap()));
        assert!(wheel_tags("torch-2.15.0.tar.gz").is_none());
    }

    use crate::install::python::route::{candidates, Framework, TorchSource, Wanted};
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    fn fetcher(dir: &Path) -> Fetcher {
        let mut s = crate::fetch::Settings::new(dir.join("cache"));
        s.attempts = 1;
        Fetcher::new(
            s,
            Arc::new(AtomicBool::new(false)),
            Arc::new(crate::world::progress::Silent),
        )
    }

    fn want(variant: &str, pypi: &str) -> Want {
        Want {
            framework: Framework::Torch,
            packages: vec![Wanted {
                name: "torch".into(),
                extras: String::new(),
                version: "2.15.0".into(),
                tagged: true,
            }],
            variant: Some(variant.into()),
            pypi_build: if pypi == variant {
                Ok("PyPI's is the plan's".into())
            } else {
                Err(format!("PyPI's is {pypi}"))
            },
            pypi_variant: Some(pypi.into()),
            pypi_first: false,
            python: "3.12".into(),
            os: OsFamily::Linux,
            arch: "x86_64".into(),
        }
    }

    /// `dir/<sub>/<project>/index.html` linking `files`.
    fn page(dir: &Path, sub: &str, files: &[&str]) {
        let p = dir.join(sub).join("torch");
        fs_err::create_dir_all(&p).unwrap();
        let links: String = files
            .iter()
            .map(|f| format!("<a href=\"{}#sha256=00\">{f}</a>\n", f.replace('+', "%2B")))
            .collect();
        fs_err::write(p.join("index.html"), links).unwrap();
    }

    const TAGGED: &str = "torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl";
    const UNTAGGED: &str = "torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl";

    #[test]
    fn layouts_are_found_by_asking() {
        let tmp = tempfile::tempdir().unwrap();
        let f = fetcher(tmp.path());
        let w = want("cu132", "cu132");
        // PyTorch's own layout.
        let torch = tmp.path().join("whl");
        page(&torch, "cu132", &[TAGGED]);
        let s = IndexSettings {
            torch: crate::fetch::GivenLocation::parse(&torch.display().to_string()).ok(),
            source: TorchSource::Pytorch,
            ..IndexSettings::default()
        };
        let r = choose(&f, &w, &candidates(&w, &s), &s).unwrap();
        assert!(r.tagged);
        assert_eq!(r.requirements, ["torch==2.15.0+cu132"]);
        assert!(
            matches!(&r.layout, Layout::Index { url } if url.starts_with("file:///") && url.ends_with("/whl/cu132/"))
        );
        // PyPI (a PyPI-style tree) given as --torch-index: `<base>/<project>/`, PyPI's build.
        let pypi = tmp.path().join("simple");
        page(&pypi, "", &[UNTAGGED]);
        let s = IndexSettings {
            torch: crate::fetch::GivenLocation::parse(&pypi.display().to_string()).ok(),
            source: TorchSource::Pytorch,
            ..IndexSettings::default()
        };
        let r = choose(&f, &w, &candidates(&w, &s), &s).unwrap();
        assert!(!r.tagged);
        assert_eq!(r.requirements, ["torch==2.15.0"]);
        // A flat folder: --find-links, no index.
        let flat = tmp.path().join("flat");
        fs_err::create_dir_all(&flat).unwrap();
        fs_err::write(flat.join(UNTAGGED), "").unwrap();
        let s = IndexSettings {
            pypi: crate::fetch::GivenLocation::parse(&flat.display().to_string()).ok(),
            source: TorchSource::Pypi,
            ..IndexSettings::default()
        };
        let r = choose(&f, &w, &candidates(&w, &s), &s).unwrap();
        assert_eq!(
            r.layout,
            Layout::FindLinks {
                url: flat.display().to_string()
            }
        );
        let p = crate::install::python::step::packages_for(&r);
        assert!(p.no_index);
        assert_eq!(p.find_links, [flat.display().to_string()]);
    }

    #[test]
    fn an_index_without_the_wheel_is_not_a_network_failure() {
        let tmp = tempfile::tempdir().unwrap();
        let f = fetcher(tmp.path());
        // cu130 planned, PyPI's is cu132: the untagged wheel is not the plan's.
        let w = want("cu130", "cu132");
        let dir = tmp.path().join("simple");
        page(
            &dir,
            "",
            &[
                UNTAGGED,
                "torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl",
            ],
        );
        let s = IndexSettings {
            pypi: crate::fetch::GivenLocation::parse(&dir.display().to_string()).ok(),
            source: TorchSource::Pypi,
            ..IndexSettings::default()
        };
        let e = choose(&f, &w, &candidates(&w, &s), &s).unwrap_err();
        assert!(!e.is_network());
        assert!(
            e.attempts[0]
                .outcome
                .contains("lists only the untagged torch 2.15.0"),
            "{e}"
        );
        // Nothing for this Python: the versions it does have are named.
        let w = Want {
            python: "3.10".into(),
            ..want("cu132", "cu132")
        };
        let e = choose(&f, &w, &candidates(&w, &s), &s).unwrap_err();
        assert!(
            e.attempts[0]
                .outcome
                .contains("no torch wheel for cp310 on linux x86_64 at all"),
            "{e}"
        );
        // A directory that is not there is "missing", not a network failure.
        let s = IndexSettings {
            pypi: crate::fetch::GivenLocation::parse(
                &tmp.path().join("nope").display().to_string(),
            )
            .ok(),
            source: TorchSource::Pypi,
            ..IndexSettings::default()
        };
        let e = choose(&f, &w, &candidates(&w, &s), &s).unwrap_err();
        assert!(!e.is_network(), "{e}");
        assert!(e.to_string().contains("what would work instead:"), "{e}");
    }

    #[test]
    fn hosts_are_named() {
        let host = |at: &str| host_of(&GivenLocation::parse(at).unwrap());
        assert_eq!(
            host("https://download.pytorch.org/whl"),
            "download.pytorch.org"
        );
        assert_eq!(host("http://127.0.0.1:9/simple"), "127.0.0.1:9");
        assert_eq!(host("/srv/wheels"), "/srv/wheels");
    }
}
