//! The framework's dependencies in a lock: what the install would bring besides the framework's
//! own wheels, resolved by uv (`uv pip compile`, the installer cudaup brings) for the host's
//! Python and platform from the same indexes, requirements and constraints the install uses,
//! without installing anything. uv writes the resolution as PEP 751 `pylock.toml` with every
//! wheel's URL, size and sha256; the wheels that fit the host are kept, so `install --locked`
//! can hand pip or uv a requirement file where every distribution carries its hashes.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use crate::install::python::probe::{wheel_tags, Target};
use crate::install::python::{Packages, Tool};
use crate::sources::pypi::normalize;
use crate::world::runner::Runner;

use super::{LockError, LockedFile};

/// How long uv may take to resolve (it reads index pages and wheel metadata).
const RESOLVE: Duration = Duration::from_secs(600);

/// The platform uv resolves for: the manylinux floor cudaup's wheel choice assumes elsewhere
/// (`Target::fits` takes any manylinux tag of the architecture).
fn python_platform(target: &Target) -> String {
    format!("{}-manylinux_2_28", target.arch)
}

/// The dependencies of `packages` for `target`, resolved by the uv at `uv` in `work` (a
/// temporary folder), every fitting wheel with its sha256; the distributions named in `own`
/// (the framework's wheels, held on their own) are left out.
pub fn resolve(
    uv: &Path,
    runner: &dyn Runner,
    packages: &Packages,
    constraints: &[String],
    target: &Target,
    own: &[String],
    (work, cache): (&Path, Option<&Path>),
) -> Result<Vec<LockedFile>, LockError> {
    let input = work.join("requirements.in");
    fs_err::write(&input, packages.requirements.join("\n") + "\n")?;
    let output = work.join("pylock.toml");
    let python = format!("{}.{}", target.python.0, target.python.1);
    let mut args: Vec<String> = vec![
        "pip".into(),
        "compile".into(),
        input.display().to_string(),
        "-o".into(),
        output.display().to_string(),
        "--python-version".into(),
        python,
        "--python-platform".into(),
        python_platform(target),
        "--no-header".into(),
        "--quiet".into(),
    ];
    if packages.isolated {
        args.push("--no-config".into());
    }
    if !constraints.is_empty() {
        let file = work.join("constraints.txt");
        fs_err::write(&file, constraints.join("\n") + "\n")?;
        args.extend(["-c".into(), file.display().to_string()]);
    }
    args.extend(packages.index_args(&Tool::Uv(uv.to_owned())));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let cache = cache.map(|c| c.display().to_string());
    let mut env = vec![("UV_SYSTEM_CERTS", "1")];
    if let Some(c) = &cache {
        env.push(("UV_CACHE_DIR", c.as_str()));
    }
    let out = runner
        .run_streaming(uv, &refs, &env, RESOLVE, &mut |_| {})
        .map_err(|e| LockError::Resolve(format!("{} did not run: {e}", uv.display())))?;
    if !out.success() {
        let last: Vec<&str> = out.stderr.lines().rev().take(6).collect();
        return Err(LockError::Resolve(
            last.into_iter().rev().collect::<Vec<_>>().join("\n"),
        ));
    }
    let text = fs_err::read_to_string(&output)?;
    wheels(&text, target, own)
}

#[derive(Deserialize)]
struct Pylock {
    #[serde(default)]
    packages: Vec<Package>,
}

#[derive(Deserialize)]
struct Package {
    name: String,
    version: Option<String>,
    #[serde(default)]
    wheels: Vec<Wheel>,
}

#[derive(Deserialize)]
struct Wheel {
    url: Option<String>,
    path: Option<String>,
    name: Option<String>,
    size: Option<u64>,
    hashes: std::collections::BTreeMap<String, String>,
}

/// The wheels of uv's `pylock.toml` that fit `target`, outside `own`. A distribution with no
/// fitting wheel (an sdist only) cannot be locked: the lock holds wheels, built by their
/// publisher, never a build on the host.
pub fn wheels(pylock: &str, target: &Target, own: &[String]) -> Result<Vec<LockedFile>, LockError> {
    let doc: Pylock = toml::from_str(pylock)
        .map_err(|e| LockError::Resolve(format!("uv's pylock.toml did not parse: {e}")))?;
    let own: Vec<String> = own.iter().map(|n| normalize(n)).collect();
    let mut out = Vec::new();
    for p in doc.packages {
        if own.contains(&normalize(&p.name)) {
            continue;
        }
        let version = p.version.clone().unwrap_or_default();
        let mut fit = Vec::new();
        for w in &p.wheels {
            let at = w.url.clone().or_else(|| w.path.clone()).unwrap_or_default();
            let filename = w.name.clone().unwrap_or_else(|| {
                let last = at.rsplit('/').next().unwrap_or_default();
                crate::sources::page::percent_decode(last).unwrap_or_else(|| last.to_owned())
            });
            let fits = wheel_tags(&filename).is_some_and(|t| target.fits(&t));
            let Some(sha256) = w.hashes.get("sha256") else {
                continue;
            };
            if fits {
                fit.push(LockedFile {
                    name: p.name.clone(),
                    version: version.clone(),
                    filename,
                    url: at,
                    sha256: sha256.to_ascii_lowercase(),
                    size: w.size,
                });
            }
        }
        if fit.is_empty() {
            return Err(LockError::Resolve(format!(
                "{} {version} has no wheel with a sha256 for {}: the lock holds wheels only",
                p.name,
                target.describe()
            )));
        }
        fit.sort_by(|a, b| a.filename.cmp(&b.filename));
        out.extend(fit);
    }
    out.sort_by(|a, b| (normalize(&a.name), &a.filename).cmp(&(normalize(&b.name), &b.filename)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::system::OsFamily;

    fn target() -> Target {
        Target {
            python: (3, 12),
            os: OsFamily::Linux,
            arch: "x86_64".into(),
        }
    }

    // uv 0.13.9's `pip compile -o pylock.toml` for `requests==2.32.3` (python 3.12,
    // x86_64-manylinux_2_28), cut to two packages; a third stands for an sdist-only one.
    const UV_PYLOCK: &str = r#"
lock-version = "1.0"
created-by = "uv"
requires-python = ">=3.12"

[[packages]]
name = "charset-normalizer"
version = "3.5.3"
sdist = { url = "https://files.pythonhosted.org/packages/c2/c3/cae6d3bdefd96a941ffc247c714ac4babc488a69012e11c058f6c17c6c47/charset_normalizer-3.5.3.tar.gz", upload-time = 2026-11-23T02:46:51Z, size = 189359, hashes = { sha256 = "a250888753faa289e2997962fbb17c4960cbdb58575533ca6fceee68c224bdff" } }
wheels = [
    { url = "https://files.pythonhosted.org/packages/67/92/6db11254f4009dd980e17473a0ee4a4b54945df4d8346af4bef8999ab85a/charset_normalizer-3.5.3-cp312-cp312-manylinux1_x86_64.manylinux_2_28_x86_64.manylinux_2_5_x86_64.whl", upload-time = 2026-11-23T02:43:57Z, size = 257134, hashes = { sha256 = "e5e4785d8a0adeadfbdf75f4efc357911842674651cbafd7e97f69b11ec3cbc6" } },
    { url = "https://files.pythonhosted.org/packages/d2/0d/07ab8eb9b7015274353eac2add4067bde1ab1b51912bbae505392905eedd/charset_normalizer-3.5.3-py3-none-any.whl", upload-time = 2026-11-23T02:46:50Z, size = 68878, hashes = { sha256 = "96e268b0cbda016ac519513294fcd17032264085b600abaac58b93049477e132" } },
]

[[packages]]
name = "requests"
version = "2.32.3"
wheels = [{ url = "https://files.pythonhosted.org/packages/f9/9b/335f9764261e915ed497fcdeb11df5dfd6f7bf257d4a6a2a686d80da4d54/requests-2.32.3-py3-none-any.whl", upload-time = 2024-05-29T15:37:47Z, size = 64928, hashes = { sha256 = "70761cfe03c773ceb22aa2f671b4757976145175cdfca038c02654d061d6dcc6" } }]
"#;

    #[test]
    fn the_fitting_wheels_of_uvs_resolution_are_held_with_their_hashes() {
        let got = wheels(UV_PYLOCK, &target(), &["Requests".into()]).unwrap();
        let names: Vec<&str> = got.iter().map(|f| f.filename.as_str()).collect();
        assert_eq!(
            names,
            [
                "charset_normalizer-3.5.3-cp312-cp312-manylinux1_x86_64.manylinux_2_28_x86_64.manylinux_2_5_x86_64.whl",
                "charset_normalizer-3.5.3-py3-none-any.whl"
            ],
            "the framework's own distribution (named in `own`) is left out"
        );
        assert_eq!(got[1].size, Some(68878));
        assert_eq!(
            got[1].sha256,
            "96e268b0cbda016ac519513294fcd17032264085b600abaac58b93049477e132"
        );
        // Another architecture keeps only the pure-Python wheel.
        let arm = Target {
            arch: "aarch64".into(),
            ..target()
        };
        let got = wheels(UV_PYLOCK, &arm, &["requests".into()]).unwrap();
        assert_eq!(got.len(), 1);
        assert!(got[0].filename.ends_with("py3-none-any.whl"));
    }

    #[test]
    fn a_dependency_with_no_fitting_wheel_cannot_be_locked() {
        let text = format!(
            "{UV_PYLOCK}\n[[packages]]\nname = \"only-sdist\"\nversion = \"1.0\"\nsdist = {{ url = \"https://example.org/only_sdist-1.0.tar.gz\", hashes = {{ sha256 = \"00\" }} }}\n"
        );
        let e = wheels(&text, &target(), &[]).unwrap_err().to_string();
        assert!(e.contains("only-sdist 1.0 has no wheel"), "{e}");
        assert!(e.contains("the lock holds wheels only"), "{e}");
    }
}
