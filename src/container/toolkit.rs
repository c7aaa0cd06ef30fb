//! The NVIDIA Container Toolkit: what is installed (the four packages, `nvidia-ctk --version`),
//! whether it is above the CVE floor, and the commands that install the pinned set from
//! NVIDIA's repository — planned like the driver step (argv lists, privileged ones through
//! `sudo`, run by [`crate::install::driver::execute`] only with consent).

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::detect::Root;
use crate::model::version::Version;
use crate::world::runner::Runner;

/// The embedded facts (`toolkit.toml`).
#[derive(Debug, Clone, Deserialize)]
pub struct Facts {
    /// The release installed.
    pub install: String,
    /// The first release whose specs are CDI 0.7.0 (which Podman before 5 cannot read).
    pub cdi_0_7_from: String,
    /// The four packages.
    pub packages: Vec<String>,
    /// Security floors.
    pub floor: Vec<Floor>,
    /// NVIDIA's package repository.
    pub repository: Repository,
}

/// NVIDIA's package repository as `container setup --toolkit --yes` writes it (`toolkit.toml`).
#[derive(Debug, Clone, Deserialize)]
pub struct Repository {
    /// NVIDIA's signing key (ASCII-armored).
    pub key_url: String,
    /// Where apt's `signed-by` finds it.
    pub keyring: String,
    /// apt's source list.
    pub apt_list_path: String,
    /// Its text.
    pub apt_list: String,
    /// dnf's repository file.
    pub dnf_repo_path: String,
    /// Its text.
    pub dnf_repo: String,
    /// The .repo zypper adds.
    pub zypper_repo_url: String,
}

/// One security floor.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Floor {
    /// Releases below this have the CVEs.
    pub below: String,
    /// Which.
    pub cves: String,
    /// Where it is published.
    pub source: String,
}

/// The facts cudaup ships.
pub fn facts() -> Facts {
    toml::from_str(include_str!("toolkit.toml")).expect("toolkit.toml is valid")
}

impl Facts {
    /// The floors `version` is below, highest first.
    pub fn open_cves(&self, version: &str) -> Vec<&Floor> {
        let Some(v) = Version::parse(version) else {
            return Vec::new();
        };
        let mut out: Vec<&Floor> = self
            .floor
            .iter()
            .filter(|f| Version::parse(&f.below).is_some_and(|b| v < b))
            .collect();
        out.sort_by_key(|f| std::cmp::Reverse(Version::parse(&f.below)));
        out
    }

    /// The enforced floor (the highest).
    pub fn minimum(&self) -> &str {
        self.floor
            .iter()
            .max_by_key(|f| Version::parse(&f.below))
            .map(|f| f.below.as_str())
            .unwrap_or("0")
    }
}

/// What is installed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Installed {
    /// `nvidia-ctk --version`'s version.
    pub ctk: Option<String>,
    /// Each of the four packages with its version (`1.17.8-1`), as the package manager says.
    pub packages: Vec<(String, String)>,
}

impl Installed {
    /// Whether anything of the toolkit is there.
    pub fn any(&self) -> bool {
        self.ctk.is_some() || !self.packages.is_empty()
    }

    /// The toolkit's version (`nvidia-ctk`'s, else the first package's upstream part).
    pub fn version(&self) -> Option<String> {
        self.ctk
            .clone()
            .or_else(|| self.packages.first().map(|(_, v)| upstream(v).to_owned()))
    }

    /// Whether the packages disagree about the version.
    pub fn skewed(&self) -> bool {
        let mut vs: Vec<&str> = self.packages.iter().map(|(_, v)| upstream(v)).collect();
        vs.dedup();
        vs.len() > 1
    }
}

/// `1.17.8` from `1.17.8-1` or `1.17.8-1.el9`.
fn upstream(v: &str) -> &str {
    v.split_once('-').map(|(u, _)| u).unwrap_or(v)
}

/// Parses `nvidia-ctk --version` (`NVIDIA Container Toolkit CLI version 1.17.8\ncommit: …`).
pub fn parse_ctk_version(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.split_once("version ").map(|(_, v)| v.trim()))
        .and_then(|v| v.split_whitespace().next())
        .filter(|v| Version::parse(v).is_some())
        .map(str::to_owned)
}

/// Parses `dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}\n' …` or
/// `rpm -q --qf '%{NAME} %{VERSION}-%{RELEASE} ii\n' …` (installed rows only).
pub fn parse_package_rows(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (name, version, status) = (w.next()?, w.next()?, w.next().unwrap_or("ii"));
            status
                .starts_with("ii")
                .then(|| (name.to_owned(), version.to_owned()))
        })
        .collect()
}

/// Asks the machine. `root` decides which package manager is asked (its os-release).
pub fn probe(runner: &dyn Runner, facts: &Facts, path_entries: &[std::path::PathBuf]) -> Installed {
    let t = Duration::from_secs(15);
    let find = |name: &str| {
        path_entries
            .iter()
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    };
    let ctk = find("nvidia-ctk")
        .and_then(|p| runner.run(&p, &["--version"], t).ok())
        .and_then(|o| parse_ctk_version(&o.stdout));
    let pkgs: Vec<&str> = facts.packages.iter().map(String::as_str).collect();
    let packages = if let Some(dpkg) = find("dpkg-query") {
        let mut args = vec!["-W", "-f", "${Package} ${Version} ${db:Status-Abbrev}\\n"];
        args.extend(&pkgs);
        runner
            .run(&dpkg, &args, t)
            .map(|o| parse_package_rows(&o.stdout))
            .unwrap_or_default()
    } else if let Some(rpm) = find("rpm") {
        let mut args = vec!["-q", "--qf", "%{NAME} %{VERSION}-%{RELEASE} ii\\n"];
        args.extend(&pkgs);
        runner
            .run(&rpm, &args, t)
            .map(|o| parse_package_rows(&o.stdout))
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    Installed { ctk, packages }
}

/// The package manager family, from os-release `ID` / `ID_LIKE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Debian, Ubuntu and derivatives.
    Apt,
    /// RHEL, Fedora, Amazon Linux and rebuilds.
    Dnf,
    /// openSUSE, SLES.
    Zypper,
}

/// The family of the machine under `root`, or `None` (no package route: NVIDIA publishes none).
pub fn family(root: &Root) -> Option<Family> {
    let (_, release) = crate::detect::os::probe(root);
    let ids: Vec<String> = release.id.into_iter().chain(release.id_like).collect();
    ids.iter().find_map(|id| match id.as_str() {
        "debian" | "ubuntu" => Some(Family::Apt),
        "rhel" | "fedora" | "centos" | "rocky" | "almalinux" | "amzn" | "ol" => Some(Family::Dnf),
        "opensuse" | "suse" | "sles" | "opensuse-leap" | "opensuse-tumbleweed" => {
            Some(Family::Zypper)
        }
        _ => None,
    })
}

const REPO: &str = "https://nvidia.github.io/libnvidia-container";
const KEYRING: &str = "/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg";

fn sudo(args: &[&str]) -> Vec<String> {
    std::iter::once("sudo")
        .chain(args.iter().copied())
        .map(str::to_owned)
        .collect()
}

/// The install guide's commands for `family`, the four packages pinned to `version`.
pub fn install_commands(family: Family, facts: &Facts, version: &str) -> Vec<Vec<String>> {
    let pinned = |sep: &str| -> Vec<String> {
        facts
            .packages
            .iter()
            .map(|p| format!("{p}{sep}{version}-1"))
            .collect()
    };
    match family {
        Family::Apt => {
            let key = format!("curl -fsSL {REPO}/gpgkey | gpg --dearmor --yes -o {KEYRING}");
            let list = format!(
                "curl -fsSL {REPO}/stable/deb/nvidia-container-toolkit.list | sed 's#deb https://#deb [signed-by={KEYRING}] https://#g' > /etc/apt/sources.list.d/nvidia-container-toolkit.list"
            );
            let mut install = sudo(&["apt-get", "install", "-y"]);
            install.extend(pinned("="));
            vec![
                sudo(&["sh", "-c", &key]),
                sudo(&["sh", "-c", &list]),
                sudo(&["apt-get", "update"]),
                install,
            ]
        }
        Family::Dnf => {
            let repo = format!(
                "curl -fsSL {REPO}/stable/rpm/nvidia-container-toolkit.repo > /etc/yum.repos.d/nvidia-container-toolkit.repo"
            );
            let mut install = sudo(&["dnf", "install", "-y"]);
            install.extend(pinned("-"));
            vec![sudo(&["sh", "-c", &repo]), install]
        }
        Family::Zypper => {
            let mut install = sudo(&["zypper", "--gpg-auto-import-keys", "install", "-y"]);
            install.extend(pinned("-"));
            vec![
                sudo(&[
                    "zypper",
                    "ar",
                    &format!("{REPO}/stable/rpm/nvidia-container-toolkit.repo"),
                ]),
                install,
            ]
        }
    }
}

/// Whether a program is on the path.
pub fn on_path(path_entries: &[std::path::PathBuf], name: &str) -> Option<std::path::PathBuf> {
    path_entries
        .iter()
        .map(|d| d.join(name))
        .find(|p| Path::new(p).is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The floors, highest first, and the release installed above all of them.
    #[test]
    fn the_floor_is_1_19_1_and_the_install_is_above_it() {
        let f = facts();
        assert_eq!(f.minimum(), "1.19.1");
        assert_eq!(f.open_cves("1.17.5").len(), 2);
        assert_eq!(f.open_cves("1.16.1").len(), 4);
        assert_eq!(f.open_cves("1.17.8")[0].below, "1.19.1");
        assert_eq!(f.open_cves("1.19.0").len(), 1);
        assert!(f.open_cves("1.19.1").is_empty());
        assert_eq!(f.install, "1.20.0");
        assert!(f.open_cves(&f.install).is_empty());
        assert!(Version::parse(&f.install).unwrap() >= Version::parse(f.minimum()).unwrap());
    }

    #[test]
    fn versions_are_read() {
        assert_eq!(
            parse_ctk_version("NVIDIA Container Toolkit CLI version 1.17.8\ncommit: f202b80a9b9d0db00d9b1d73c0128c8962c55f4d\n").as_deref(),
            Some("1.17.8")
        );
        let rows = parse_package_rows("nvidia-container-toolkit 1.17.8-1 ii \nnvidia-container-toolkit-base 1.17.8-1 ii \nlibnvidia-container-tools 1.17.5-1 ii \nlibnvidia-container1 1.17.8-1 rc \n");
        let installed = Installed {
            ctk: None,
            packages: rows,
        };
        assert_eq!(installed.packages.len(), 3);
        assert!(installed.skewed());
        assert_eq!(installed.version().as_deref(), Some("1.17.8"));
    }

    #[test]
    fn four_packages_pinned_to_one_version_per_family() {
        let f = facts();
        let apt = install_commands(Family::Apt, &f, "1.18.0");
        let last = apt.last().unwrap();
        assert_eq!(
            &last[4..],
            [
                "nvidia-container-toolkit=1.18.0-1",
                "nvidia-container-toolkit-base=1.18.0-1",
                "libnvidia-container-tools=1.18.0-1",
                "libnvidia-container1=1.18.0-1"
            ]
        );
        assert!(apt[1][3]
            .contains("signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg"));
        let dnf = install_commands(Family::Dnf, &f, "1.18.0");
        assert!(dnf[1].contains(&"libnvidia-container1-1.18.0-1".to_owned()));
        assert!(install_commands(Family::Zypper, &f, "1.18.0")[0][2] == "ar");
    }
}
