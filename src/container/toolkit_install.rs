//! `container setup --toolkit --yes`: the NVIDIA Container Toolkit installed for real, not only
//! printed. NVIDIA's guide pipes `curl` into `gpg` and `sed` as root; here the repository's
//! files are files cudaup writes and records like every other setup edit (so `cudaup container
//! uninstall` removes them), the signing key is fetched unprivileged into a scratch directory and
//! checked before anything is written, and only the package manager runs privileged (through
//! `sudo` unless root, as the driver step's commands do).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::toolkit::{Facts, Family};
use crate::world::runner::Runner;

/// The most an armored public key may be (NVIDIA's is about 3 KiB).
pub const MAX_KEY: u64 = 64 << 10;

/// How long fetching the key may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(120);

/// What installing the toolkit takes on this machine.
#[derive(Debug, Clone, Serialize)]
pub struct Install {
    /// The package family.
    pub family: Family,
    /// The release pinned (all four packages).
    pub version: String,
    /// apt: NVIDIA's signing key, fetched from `key_url` and written at `keyring`.
    pub key: Option<Key>,
    /// The repository file written (apt's list, dnf's .repo); `None` for zypper (`zypper ar`).
    pub repo_file: Option<RepoFile>,
    /// The package manager's commands, run after the files are in place.
    pub commands: Vec<Vec<String>>,
    /// NVIDIA's guide's commands, for a person to run instead (setup without `--yes`).
    pub by_hand: Vec<Vec<String>>,
}

/// The signing key.
#[derive(Debug, Clone, Serialize)]
pub struct Key {
    /// Where it is published.
    pub url: String,
    /// Where apt's `signed-by` reads it.
    pub keyring: PathBuf,
}

/// A repository file.
#[derive(Debug, Clone, Serialize)]
pub struct RepoFile {
    /// Where it goes.
    pub path: PathBuf,
    /// Its text.
    #[serde(skip)]
    pub text: String,
}

/// Why the toolkit could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The key could not be fetched.
    #[error("could not fetch NVIDIA's signing key from {url}: {message}; nothing was changed")]
    Fetch {
        /// Where from.
        url: String,
        /// What `curl` said.
        message: String,
    },
    /// What was fetched is not an armored OpenPGP public key.
    #[error("{url} did not serve an armored OpenPGP public key ({message}); nothing was changed")]
    NotAKey {
        /// Where from.
        url: String,
        /// What is wrong with it.
        message: String,
    },
    /// The commands ran, and the toolkit is still not the release asked for.
    #[error("the package manager finished, but `nvidia-ctk --version` says {found}, not {wanted}: check `apt-cache policy nvidia-container-toolkit` (or dnf/zypper's equivalent); `cudaup container doctor` shows what is installed")]
    NotInstalled {
        /// The release asked for.
        wanted: String,
        /// What the probe found afterwards.
        found: String,
    },
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

/// The install of `version` for `family`: files at their system paths (the caller moves them
/// under a prefix), commands through `sudo` (the caller drops it when root).
pub fn steps(family: Family, facts: &Facts, version: &str) -> Install {
    let repo = &facts.repository;
    let pinned = |sep: &str| -> Vec<String> {
        facts
            .packages
            .iter()
            .map(|p| format!("{p}{sep}{version}-1"))
            .collect()
    };
    let by_hand = super::toolkit::install_commands(family, facts, version);
    let (key, repo_file, commands) = match family {
        Family::Apt => {
            let mut install = argv(&["sudo", "apt-get", "install", "-y"]);
            install.extend(pinned("="));
            (
                Some(Key {
                    url: repo.key_url.clone(),
                    keyring: PathBuf::from(&repo.keyring),
                }),
                Some(RepoFile {
                    path: PathBuf::from(&repo.apt_list_path),
                    text: repo.apt_list.clone(),
                }),
                vec![argv(&["sudo", "apt-get", "update"]), install],
            )
        }
        Family::Dnf => {
            let mut install = argv(&["sudo", "dnf", "install", "-y"]);
            install.extend(pinned("-"));
            (
                None,
                Some(RepoFile {
                    path: PathBuf::from(&repo.dnf_repo_path),
                    text: repo.dnf_repo.clone(),
                }),
                vec![install],
            )
        }
        Family::Zypper => {
            let mut install = argv(&["sudo", "zypper", "--gpg-auto-import-keys", "install", "-y"]);
            install.extend(pinned("-"));
            (
                None,
                None,
                vec![
                    argv(&["sudo", "zypper", "ar", &repo.zypper_repo_url]),
                    install,
                ],
            )
        }
    };
    Install {
        family,
        version: version.to_owned(),
        key,
        repo_file,
        commands,
        by_hand,
    }
}

/// Fetches the key at `url` with `curl` (as this user, into `scratch`) and returns its text once
/// it is one armored OpenPGP public key block of a key's size.
pub fn fetch_key(
    runner: &dyn Runner,
    url: &str,
    scratch: &Path,
    echo: &mut dyn FnMut(&str),
) -> Result<String, InstallError> {
    let file = scratch.join("nvidia-container-toolkit-keyring.asc");
    let file_arg = file.display().to_string();
    let max = MAX_KEY.to_string();
    let args = ["-fsSL", "--max-filesize", &max, "-o", &file_arg, url];
    echo(&format!("$ curl {}", args.join(" ")));
    let fetch = |message: String| InstallError::Fetch {
        url: url.to_owned(),
        message,
    };
    let out = runner
        .run(Path::new("curl"), &args, FETCH_TIMEOUT)
        .map_err(|e| fetch(e.to_string()))?;
    if !out.success() {
        return Err(fetch(format!(
            "curl exited with {}: {}",
            out.status.map_or("a signal".to_owned(), |c| c.to_string()),
            out.stderr.trim()
        )));
    }
    let text =
        crate::world::fs::read_regular_text(&file, MAX_KEY).map_err(|e| InstallError::NotAKey {
            url: url.to_owned(),
            message: e.to_string(),
        })?;
    check_key(&text).map_err(|message| InstallError::NotAKey {
        url: url.to_owned(),
        message,
    })?;
    Ok(text)
}

/// Whether `text` is one ASCII-armored OpenPGP public key block and nothing else (an HTML error
/// page, a captive portal or an empty body is refused before it reaches apt's trust).
pub fn check_key(text: &str) -> Result<(), String> {
    const BEGIN: &str = "-----BEGIN PGP PUBLIC KEY BLOCK-----";
    const END: &str = "-----END PGP PUBLIC KEY BLOCK-----";
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let first = lines.iter().position(|l| !l.is_empty());
    let last = lines.iter().rposition(|l| !l.is_empty());
    let (Some(first), Some(last)) = (first, last) else {
        return Err("it is empty".into());
    };
    if lines[first] != BEGIN || lines[last] != END || first == last {
        return Err(format!(
            "it does not start with `{BEGIN}` and end with `{END}`"
        ));
    }
    let body = &lines[first + 1..last];
    if body.iter().any(|l| l.starts_with("-----")) {
        return Err("it holds more than one armored block".into());
    }
    // Armor headers, a blank line, then base64 (and the `=` checksum line).
    let data: Vec<&&str> = body
        .iter()
        .skip_while(|l| l.contains(": "))
        .filter(|l| !l.is_empty())
        .collect();
    let base64 = |c: char| c.is_ascii_alphanumeric() || "+/=".contains(c);
    if data.is_empty() || data.iter().any(|l| !l.chars().all(base64)) {
        return Err("its body is not base64".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests;
