//! The package repositories the driver's packages come from: Debian's contrib/non-free/
//! non-free-firmware components, NVIDIA's CUDA repository, EPEL, RPM Fusion. Read from apt's
//! sources (one-line and deb822) and dnf's `.repo` files.

use std::path::PathBuf;

use crate::detect::Root;
use crate::model::system::System;

use super::distro::{Family, Route};
use super::DriverStepError;

/// NVIDIA's CUDA repositories live under this path, for apt and dnf alike.
const NVIDIA_REPOS: &str = "developer.download.nvidia.com/compute/cuda/repos";

/// Commands that enable repositories, and what to tell the user about them.
#[derive(Debug, Default)]
pub(crate) struct RepoPlan {
    pub commands: Vec<Vec<String>>,
    pub notices: Vec<String>,
}

/// One `deb` entry of apt's sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AptEntry {
    pub uri: String,
    pub suite: String,
    pub components: Vec<String>,
    pub signed_by: Option<String>,
    pub file: PathBuf,
}

/// What the route needs, checked against this machine's sources.
pub(crate) fn repositories(
    system: &System,
    route: &Route,
    root: &Root,
) -> Result<RepoPlan, DriverStepError> {
    let mut plan = RepoPlan::default();
    match route.family {
        Family::Debian | Family::Ubuntu => {
            let entries = apt_entries(root);
            if route.family == Family::Debian {
                debian_components(system, root, &entries, &mut plan)?;
            }
            if from_nvidia_apt(route) && !entries.iter().any(|e| e.uri.contains(NVIDIA_REPOS)) {
                let dir = repo_dir(system, &route.distro);
                let keyring = format!("https://{NVIDIA_REPOS}/{dir}/cuda-keyring_1.1-1_all.deb");
                return Err(DriverStepError::RepositoryMissing {
                    what: format!(
                        "NVIDIA's CUDA repository ({} come from it)",
                        packages(route)
                    ),
                    commands: vec![
                        format!("# download NVIDIA's keyring package {keyring}"),
                        "sudo dpkg -i cuda-keyring_1.1-1_all.deb".into(),
                    ],
                });
            }
        }
        Family::Rhel => {
            let repos = yum_repos(root);
            if !repos.contains(NVIDIA_REPOS) {
                let dir = repo_dir(system, "rhel");
                let major = dir
                    .trim_start_matches("rhel")
                    .split('/')
                    .next()
                    .unwrap_or("");
                return Err(DriverStepError::RepositoryMissing {
                    what: format!("NVIDIA's CUDA repository ({} comes from it)", route.package),
                    commands: vec![format!(
                        "sudo dnf config-manager --add-repo https://{NVIDIA_REPOS}/{dir}/cuda-rhel{major}.repo"
                    )],
                });
            }
            if !has_epel(&repos) {
                // NVIDIA's DKMS streams need dkms, which EPEL carries. Rebuilds ship
                // epel-release in their own signed repositories; RHEL itself does not.
                if route.distro == "rhel" || system.os.distro.as_deref() == Some("rhel") {
                    let major = major_version(system).unwrap_or_else(|| "<major>".into());
                    return Err(DriverStepError::RepositoryMissing {
                        what: "EPEL (dkms, which NVIDIA's DKMS packages need, comes from it)".into(),
                        commands: vec![format!(
                            "sudo dnf install https://dl.fedoraproject.org/pub/epel/epel-release-latest-{major}.noarch.rpm"
                        )],
                    });
                }
                plan.notices.push(
                    "EPEL is enabled first (epel-release): dkms, which NVIDIA's DKMS packages need, comes from it".into(),
                );
                plan.commands.push(super::argv(&[
                    "sudo",
                    "dnf",
                    "install",
                    "-y",
                    "epel-release",
                ]));
            }
        }
        Family::Fedora => {
            let repos = yum_repos(root);
            if route.is_akmod() {
                if !repos.contains("rpmfusion-nonfree") {
                    return Err(DriverStepError::RepositoryMissing {
                        what: format!("RPM Fusion's nonfree repository ({} comes from it)", route.package),
                        commands: vec![
                            "# enable RPM Fusion free and nonfree as https://rpmfusion.org/Configuration says".into(),
                        ],
                    });
                }
            } else if !repos.contains(NVIDIA_REPOS) {
                let dir = repo_dir(system, "fedora");
                let name = dir.split('/').next().unwrap_or("fedora");
                let url = format!("https://{NVIDIA_REPOS}/{dir}/cuda-{name}.repo");
                return Err(DriverStepError::RepositoryMissing {
                    what: format!("NVIDIA's CUDA repository ({} comes from it)", route.package),
                    commands: vec![
                        format!("sudo dnf config-manager addrepo --from-repofile={url}   # dnf5 (Fedora 41 and later)"),
                        format!("sudo dnf config-manager --add-repo {url}   # dnf4"),
                    ],
                });
            }
        }
        Family::Other => {}
    }
    Ok(plan)
}

/// Debian: the driver and its firmware are in contrib, non-free and (from Debian 12)
/// non-free-firmware. Missing components are added for the main suite in a file of cudaup's.
fn debian_components(
    system: &System,
    root: &Root,
    entries: &[AptEntry],
    plan: &mut RepoPlan,
) -> Result<(), DriverStepError> {
    let mut wanted = vec!["contrib", "non-free"];
    if major_version(system)
        .and_then(|m| m.parse::<u32>().ok())
        .is_none_or(|m| m >= 12)
    {
        wanted.push("non-free-firmware");
    }
    let codename = os_release_field(root, "VERSION_CODENAME");
    // The main archive entry: Debian's own URI, a suite without `-updates`/`-security`,
    // carrying `main`; the codename decides when several match.
    let archive = |by_codename: bool| -> Vec<&AptEntry> {
        entries
            .iter()
            .filter(|e| {
                !e.uri.contains("security") && !e.suite.contains('-') && !e.suite.contains('/')
            })
            .filter(|e| e.components.iter().any(|c| c == "main"))
            .filter(|e| !by_codename || codename.as_ref().is_none_or(|c| &e.suite == c))
            .collect()
    };
    let mut main = archive(true);
    if main.is_empty() {
        main = archive(false);
    }
    let Some(first) = main.first() else {
        let suite = codename.unwrap_or_else(|| "<codename>".into());
        return Err(DriverStepError::RepositoryMissing {
            what: format!(
                "Debian's {} components (the driver and firmware-misc-nonfree come from them)",
                wanted.join(", ")
            ),
            commands: vec![format!(
                "# add `{}` to the Components of Debian's {suite} entry in /etc/apt/sources.list or /etc/apt/sources.list.d/, then `sudo apt-get update`",
                wanted.join(" ")
            )],
        });
    };
    let have: Vec<&str> = main
        .iter()
        .filter(|e| e.uri == first.uri && e.suite == first.suite)
        .flat_map(|e| e.components.iter().map(String::as_str))
        .collect();
    let missing: Vec<&str> = wanted.into_iter().filter(|w| !have.contains(w)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let path = "/etc/apt/sources.list.d/cudaup-debian-non-free.sources";
    let mut lines = vec![
        "Types: deb".to_owned(),
        format!("URIs: {}", first.uri),
        format!("Suites: {}", first.suite),
        format!("Components: {}", missing.join(" ")),
    ];
    // apt refuses two entries for one source with different Signed-By values.
    if let Some(s) = &first.signed_by {
        lines.push(format!("Signed-By: {s}"));
    }
    plan.notices.push(format!(
        "Debian's {} component(s) are not enabled for {} {} ({}): cudaup adds them in {path}",
        missing.join(", "),
        first.uri,
        first.suite,
        first.file.display()
    ));
    plan.commands.push(super::write_file_command(path, &lines));
    Ok(())
}

/// Whether the apt row's packages come from NVIDIA's repository (unversioned names chosen by
/// a pinning package) rather than the distro's archive.
fn from_nvidia_apt(route: &Route) -> bool {
    route
        .extra
        .iter()
        .any(|e| e.starts_with("nvidia-driver-pinning-"))
        || matches!(route.package.as_str(), "nvidia-open" | "cuda-drivers")
}

fn packages(route: &Route) -> String {
    let mut all = route.extra.clone();
    all.push(route.package.clone());
    all.join(", ")
}

/// `ubuntu2404/x86_64`, `debian12/x86_64`, `rhel9/sbsa`, `fedora41/x86_64`.
fn repo_dir(system: &System, distro: &str) -> String {
    let version = system.os.version.clone().unwrap_or_default();
    let version = match distro {
        "rhel" => version.split('.').next().unwrap_or("").to_owned(),
        _ => version.replace('.', ""),
    };
    let arch = match system.os.arch.as_str() {
        "aarch64" => "sbsa",
        other => other,
    };
    format!("{distro}{version}/{arch}")
}

fn major_version(system: &System) -> Option<String> {
    system
        .os
        .version
        .as_deref()
        .and_then(|v| v.split('.').next())
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

fn os_release_field(root: &Root, key: &str) -> Option<String> {
    let text = root.read("/etc/os-release")?;
    text.lines().find_map(|l| {
        let (k, v) = l.trim().split_once('=')?;
        (k == key)
            .then(|| v.trim().trim_matches('"').to_owned())
            .filter(|v| !v.is_empty())
    })
}

/// Every `.repo` file under /etc/yum.repos.d, concatenated (only searched for names and URLs).
fn yum_repos(root: &Root) -> String {
    root.list("/etc/yum.repos.d")
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "repo"))
        .filter_map(|p| root.read(&p))
        .collect::<Vec<_>>()
        .join("\n")
}

fn has_epel(repos: &str) -> bool {
    repos.lines().any(|l| l.trim() == "[epel]")
}

/// apt's `deb` entries: /etc/apt/sources.list and /etc/apt/sources.list.d/*.{list,sources}.
pub(crate) fn apt_entries(root: &Root) -> Vec<AptEntry> {
    let mut files = vec![PathBuf::from("/etc/apt/sources.list")];
    files.extend(root.list("/etc/apt/sources.list.d"));
    let mut out = Vec::new();
    for file in files {
        let Some(text) = root.read(&file) else {
            continue;
        };
        match file.extension().and_then(|e| e.to_str()) {
            Some("list") => out.extend(one_line_entries(&text, &file)),
            Some("sources") => out.extend(deb822_entries(&text, &file)),
            _ => {}
        }
    }
    out
}

/// `deb [opt=val …] uri suite component…`, `#` comments.
fn one_line_entries(text: &str, file: &std::path::Path) -> Vec<AptEntry> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut rest = match line.strip_prefix("deb") {
            Some(r) if r.starts_with([' ', '\t']) => r.trim_start(),
            _ => continue,
        };
        let mut signed_by = None;
        if let Some(opts) = rest.strip_prefix('[') {
            let Some((inside, after)) = opts.split_once(']') else {
                continue;
            };
            for opt in inside.split_whitespace() {
                if let Some(v) = opt.strip_prefix("signed-by=") {
                    signed_by = Some(v.to_owned());
                }
            }
            rest = after.trim_start();
        }
        let mut words = rest.split_whitespace();
        let (Some(uri), Some(suite)) = (words.next(), words.next()) else {
            continue;
        };
        out.push(AptEntry {
            uri: uri.trim_end_matches('/').to_owned(),
            suite: suite.to_owned(),
            components: words.map(str::to_owned).collect(),
            signed_by,
            file: file.to_path_buf(),
        });
    }
    out
}

/// deb822 stanzas: `Types`, `URIs`, `Suites`, `Components`, `Signed-By`, `Enabled`.
fn deb822_entries(text: &str, file: &std::path::Path) -> Vec<AptEntry> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for stanza in lines.split(|l| l.trim().is_empty()) {
        let mut fields: Vec<(String, String)> = Vec::new();
        for line in stanza {
            if line.trim_start().starts_with('#') {
                continue;
            }
            if line.starts_with([' ', '\t']) {
                // A continuation line (e.g. an inline Signed-By key): append.
                if let Some(last) = fields.last_mut() {
                    last.1.push('\n');
                    last.1.push_str(line.trim());
                }
                continue;
            }
            if let Some((k, v)) = line.split_once(':') {
                fields.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
            }
        }
        let get = |k: &str| {
            fields
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        };
        let types = get("types").unwrap_or_default();
        if !types.split_whitespace().any(|t| t == "deb") {
            continue;
        }
        if get("enabled").is_some_and(|e| e.eq_ignore_ascii_case("no")) {
            continue;
        }
        // An inline key cannot be repeated on one line; only a path is carried over.
        let signed_by = get("signed-by").filter(|s| !s.contains('\n'));
        let components: Vec<String> = get("components")
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        for uri in get("uris").unwrap_or_default().split_whitespace() {
            for suite in get("suites").unwrap_or_default().split_whitespace() {
                out.push(AptEntry {
                    uri: uri.trim_end_matches('/').to_owned(),
                    suite: suite.to_owned(),
                    components: components.clone(),
                    signed_by: signed_by.clone(),
                    file: file.to_path_buf(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_with_options_and_comments() {
        let text = "# comment\ndeb [arch=amd64 signed-by=/usr/share/keyrings/d.gpg] http://deb.debian.org/debian/ bookworm main contrib # x\ndeb-src http://deb.debian.org/debian bookworm main\ndeb http://security.debian.org/debian-security bookworm-security main\n";
        let e = one_line_entries(text, std::path::Path::new("/etc/apt/sources.list"));
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].uri, "http://deb.debian.org/debian");
        assert_eq!(e[0].suite, "bookworm");
        assert_eq!(e[0].components, ["main", "contrib"]);
        assert_eq!(e[0].signed_by.as_deref(), Some("/usr/share/keyrings/d.gpg"));
        assert_eq!(e[1].suite, "bookworm-security");
    }

    #[test]
    fn deb822_stanzas() {
        let text = "Types: deb deb-src\nURIs: https://deb.debian.org/debian\nSuites: trixie trixie-updates\nComponents: main non-free-firmware\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\nTypes: deb\nURIs: http://example.org/x\nSuites: stable\nComponents: main\nEnabled: no\n";
        let e = deb822_entries(
            text,
            std::path::Path::new("/etc/apt/sources.list.d/debian.sources"),
        );
        assert_eq!(e.len(), 2);
        assert_eq!(e[1].suite, "trixie-updates");
        assert_eq!(e[0].components, ["main", "non-free-firmware"]);
        assert_eq!(
            e[0].signed_by.as_deref(),
            Some("/usr/share/keyrings/debian-archive-keyring.gpg")
        );
    }
}
