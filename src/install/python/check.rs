//! After the install: run the framework inside the venv and compare what it says with the plan.

use serde::Deserialize;

use crate::install::driver::shell_line;
use crate::model::version::Version;
use crate::world::runner::Runner;

use super::{Venv, VenvReceipt};

/// What the torch inside the venv says about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct TorchReport {
    /// `torch.__version__`.
    pub version: Option<String>,
    /// `torch.version.cuda` (`None`: a CPU build).
    pub cuda: Option<String>,
    /// `torch.cuda.is_available()`.
    #[serde(default)]
    pub available: bool,
    /// `torch.cuda.get_arch_list()`.
    #[serde(default)]
    pub arch_list: Vec<String>,
    /// Each device's name and compute capability.
    #[serde(default)]
    pub devices: Vec<(String, (u32, u32))>,
    /// The import failed: the exception.
    pub error: Option<String>,
}

/// The script run with the venv's Python; prints one JSON object.
pub const TORCH_SCRIPT: &str = r#"
import json
r = {}
try:
    import torch
    r["version"] = torch.__version__
    r["cuda"] = torch.version.cuda
    r["available"] = bool(torch.cuda.is_available())
    r["arch_list"] = list(torch.cuda.get_arch_list()) if r["available"] else []
    r["devices"] = [[torch.cuda.get_device_name(i), list(torch.cuda.get_device_capability(i))]
                    for i in range(torch.cuda.device_count())] if r["available"] else []
except Exception as e:
    r["error"] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(r))
"#;

/// What was planned for torch.
#[derive(Debug, Clone)]
pub struct TorchExpectation {
    /// `2.14.1`.
    pub version: Version,
    /// `cu130`, or `cpu`.
    pub variant: String,
    /// CUDA of the variant (`13.0`); `None` for cpu.
    pub cuda: Option<Version>,
    /// pip's flags for where the planned wheel comes from (`--index-url URL`, or `--no-index
    /// --find-links DIR` for a folder of wheels), for the printed fix.
    pub index_args: Vec<String>,
    /// The requirement it was installed by (`torch==2.15.0` from PyPI, which carries no tag);
    /// `None`: `torch==<version>+<variant>`.
    pub requirement: Option<String>,
    /// Compute capabilities of the GPUs it must serve.
    pub gpus: Vec<(String, Version)>,
    /// Whether this machine has those GPUs (a plan made for another machine does not check
    /// CUDA availability here).
    pub gpus_here: bool,
}

/// Compares the report with the plan. `Ok` carries notes; `Err` says what is wrong and how to
/// fix it.
pub fn judge_torch(
    report: &TorchReport,
    want: &TorchExpectation,
    venv_python: &str,
) -> Result<Vec<String>, String> {
    judge_build(report, want, venv_python)?;
    let got = report.version.as_deref().unwrap_or("nothing");
    let fix = torch_fix(want, venv_python);
    let mut notes = Vec::new();
    if want.cuda.is_none() {
        return Ok(notes);
    }
    if !report.available {
        if want.gpus_here {
            return Err(format!(
                "torch {got} cannot use the GPU here (torch.cuda.is_available() is False): check the driver with `cudaup detect`; a driver older than CUDA {} needs is the usual cause",
                want.cuda.as_ref().map(|c| c.to_string()).unwrap_or_default()
            ));
        }
        // torch lists its architectures only when it sees a GPU.
        notes.push("the planned GPUs are not usable here (another machine, or the driver comes first): CUDA availability and architectures were not checked".into());
        return Ok(notes);
    }
    for (name, cc) in &want.gpus {
        if !serves(&report.arch_list, cc) {
            return Err(format!(
                "this torch has no kernels for the {name} (sm_{}{}; it has {}); {fix}",
                cc.major(),
                cc.minor(),
                report.arch_list.join(" ")
            ));
        }
    }
    notes.push(format!(
        "torch {got} sees {} GPU(s): {}",
        report.devices.len(),
        report
            .devices
            .iter()
            .map(|d| d.0.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Ok(notes)
}

/// The printed fix for a torch that is not the planned one.
pub fn torch_fix(want: &TorchExpectation, venv_python: &str) -> String {
    let requirement = want
        .requirement
        .clone()
        .unwrap_or_else(|| format!("torch=={}+{}", want.version, want.variant));
    format!(
        "fix: {venv_python} -m pip install --force-reinstall {requirement} {}",
        shell_line(&want.index_args)
    )
}

/// The build part of [`judge_torch`]: the import worked (when `report` comes from one), and the
/// version and the CUDA build are the planned ones; what torch's files tell without an import.
pub fn judge_build(
    report: &TorchReport,
    want: &TorchExpectation,
    venv_python: &str,
) -> Result<(), String> {
    let fix = torch_fix(want, venv_python);
    if let Some(e) = &report.error {
        return Err(format!("`import torch` failed in the venv: {e}; {fix}"));
    }
    let got = report.version.as_deref().unwrap_or("nothing");
    if Version::parse(got) != Some(want.version.clone()) {
        return Err(format!(
            "torch {got} is installed where {} was planned; {fix}",
            want.version
        ));
    }
    match (&want.cuda, report.cuda.as_deref().and_then(Version::parse)) {
        (Some(cuda), None) => Err(format!(
            "a CPU-only torch ({got}) is installed where the CUDA {cuda} build ({}) was planned: it will never use the GPU; {fix}",
            want.variant
        )),
        (Some(cuda), Some(have)) if have.prefix(2) != cuda.prefix(2) => Err(format!(
            "torch {got} is built for CUDA {have}, but CUDA {cuda} ({}) was planned; {fix}",
            want.variant
        )),
        _ => Ok(()),
    }
}

/// Whether an arch list (`sm_86`, `sm_90a`, `compute_120`) runs on compute capability `cc`:
/// SASS of the same major and a minor not above, or PTX of an older architecture.
pub fn serves(arch_list: &[String], cc: &Version) -> bool {
    arch_list.iter().any(|a| {
        let (kind, num) = match a.split_once('_') {
            Some(p) => p,
            None => return false,
        };
        let digits: String = num.chars().take_while(char::is_ascii_digit).collect();
        let Ok(n) = digits.parse::<u32>() else {
            return false;
        };
        let (major, minor) = (n / 10, n % 10);
        match kind {
            "sm" => major == cc.major() && minor <= cc.minor(),
            "compute" => (major, minor) <= (cc.major(), cc.minor()),
            _ => false,
        }
    })
}

/// Checks the installed wheels against the plan's constraints (`nvidia-cudnn-cu12<9.11`, each
/// keeping a wheel on builds that serve every planned GPU). `Ok` carries a note per constraint.
pub fn judge_constraints(
    installed: &std::collections::BTreeMap<String, String>,
    constraints: &[String],
) -> Result<Vec<String>, String> {
    let mut notes = Vec::new();
    for c in constraints {
        let Some(req) = crate::catalog::Requirement::parse(c) else {
            return Err(format!("the plan's constraint `{c}` does not parse"));
        };
        match installed.get(&req.name) {
            Some(v) if Version::parse(v).is_some_and(|v| req.spec.contains(&v)) => {
                notes.push(format!("{} {v} is within {c}", req.name));
            }
            Some(v) => {
                return Err(format!(
                    "{} {v} is installed, outside the plan's constraint {c}: it has no code for one of the planned GPUs; fix: pip install '{c}'",
                    req.name
                ))
            }
            None => notes.push(format!("{} is not installed, so {c} holds", req.name)),
        }
    }
    Ok(notes)
}

/// What the TensorFlow inside the venv says about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct TfReport {
    /// `tf.__version__`.
    pub version: Option<String>,
    /// The CUDA it was built for.
    pub cuda: Option<String>,
    /// GPUs it sees.
    #[serde(default)]
    pub gpus: usize,
    /// The import failed.
    pub error: Option<String>,
}

/// The TensorFlow check script.
pub const TF_SCRIPT: &str = r#"
import json
r = {}
try:
    import tensorflow as tf
    r["version"] = tf.__version__
    from tensorflow.python.platform import build_info
    r["cuda"] = build_info.build_info.get("cuda_version")
    try:
        r["gpus"] = len(tf.config.list_physical_devices("GPU"))
    except Exception:
        r["gpus"] = 0
except Exception as e:
    r["error"] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(r))
"#;

/// Compares a TensorFlow report with the plan.
pub fn judge_tf(
    report: &TfReport,
    version: &Version,
    gpus_here: bool,
) -> Result<Vec<String>, String> {
    if let Some(e) = &report.error {
        return Err(format!("`import tensorflow` failed in the venv: {e}"));
    }
    let got = report.version.as_deref().unwrap_or("nothing");
    if Version::parse(got) != Some(version.clone()) {
        return Err(format!(
            "TensorFlow {got} is installed where {version} was planned"
        ));
    }
    if report.cuda.is_none() {
        return Err(format!("a CPU-only TensorFlow ({got}) is installed; fix: pip install --force-reinstall 'tensorflow[and-cuda]=={version}'"));
    }
    if gpus_here && report.gpus == 0 {
        return Err(format!(
            "TensorFlow {got} sees no GPU: check the driver with `cudaup detect`"
        ));
    }
    Ok(Vec::new())
}

/// What the JAX inside the venv says about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct JaxReport {
    /// `jax.__version__`.
    pub version: Option<String>,
    /// `jaxlib`'s version.
    pub jaxlib: Option<String>,
    /// The installed CUDA plugins, by distribution name (`jax-cuda13-plugin`), with versions.
    #[serde(default)]
    pub plugins: std::collections::BTreeMap<String, String>,
    /// GPUs JAX sees (`jax.devices("gpu")`).
    #[serde(default)]
    pub gpus: usize,
    /// Why JAX has no GPU backend here, as it says.
    pub gpu_error: Option<String>,
    /// The import failed.
    pub error: Option<String>,
}

/// The JAX check script: versions from the distributions' metadata, GPUs from JAX itself.
pub const JAX_SCRIPT: &str = r#"
import json
from importlib import metadata
r = {"plugins": {}}
for major in ("12", "13"):
    name = "jax-cuda%s-plugin" % major
    try:
        r["plugins"][name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        pass
try:
    import jax
    r["version"] = jax.__version__
    import jaxlib
    r["jaxlib"] = jaxlib.__version__
    try:
        r["gpus"] = len(jax.devices("gpu"))
    except Exception as e:
        r["gpus"] = 0
        r["gpu_error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
except Exception as e:
    r["error"] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(r))
"#;

/// The release and CUDA major of a planned JAX requirement (`jax[cuda13]==0.12.0.1`).
pub fn jax_planned(requirement: &str) -> Option<(Version, u32)> {
    let rest = requirement.strip_prefix("jax[cuda")?;
    let (major, version) = rest.split_once("]==")?;
    Some((Version::parse(version)?, major.parse().ok()?))
}

/// Compares a JAX report with the plan: the planned release, its CUDA `major` plugin (a jaxlib
/// without it runs on the CPU only, silently), and on a machine with GPUs, JAX seeing them.
/// `index_args` are pip's flags for where the planned wheels come from, for the printed fix.
pub fn judge_jax(
    report: &JaxReport,
    version: &Version,
    major: u32,
    gpus_here: bool,
    index_args: &[String],
) -> Result<Vec<String>, String> {
    if let Some(e) = &report.error {
        return Err(format!("`import jax` failed in the venv: {e}"));
    }
    let got = report.version.as_deref().unwrap_or("nothing");
    if Version::parse(got) != Some(version.clone()) {
        return Err(format!(
            "JAX {got} is installed where {version} was planned"
        ));
    }
    let plugin = format!("jax-cuda{major}-plugin");
    let fix = format!("pip install --force-reinstall 'jax[cuda{major}]=={version}'");
    let fix = match index_args {
        [] => fix,
        args => format!("{fix} {}", shell_line(args)),
    };
    match report.plugins.get(&plugin) {
        None => {
            return Err(format!(
                "{plugin} is not installed: this jaxlib runs on the CPU only; fix: {fix}"
            ))
        }
        Some(v) if Version::parse(v) != Some(version.clone()) => {
            return Err(format!(
                "{plugin} {v} is installed where {version} was planned; fix: {fix}"
            ))
        }
        Some(_) => {}
    }
    if let Some(other) = report.plugins.keys().find(|k| **k != plugin) {
        return Err(format!(
            "{other} is installed beside {plugin}: JAX would load either; fix: pip uninstall -y {other}"
        ));
    }
    if gpus_here && report.gpus == 0 {
        return Err(format!(
            "JAX {got} sees no GPU and falls back to the CPU ({}): check the driver with `cudaup detect` and that LD_LIBRARY_PATH does not point at another CUDA",
            report.gpu_error.as_deref().unwrap_or("no GPU backend")
        ));
    }
    if !gpus_here {
        return Ok(vec![format!(
            "no GPU on this machine: JAX {got} with {plugin} is installed; `cudaup verify` on a GPU machine runs its GPU check"
        )]);
    }
    Ok(Vec::new())
}

/// Why a framework venv is broken, if it is: the planned packages do not import, or are not
/// the planned build.
pub fn venv_problem(runner: &dyn Runner, v: &VenvReceipt) -> Option<String> {
    let venv = Venv {
        dir: v.venv.clone(),
    };
    let python = venv.python().display().to_string();
    let pinned = |name: &str| {
        v.packages
            .requirements
            .iter()
            .find_map(|r| r.strip_prefix(&format!("{name}==")).map(str::to_owned))
    };
    if let Some(torch) = pinned("torch") {
        // A build from PyPI carries no tag: the receipt's route says which it had to be.
        let planned = v.route.as_ref().and_then(|r| r.variant.clone());
        let (version, variant) = torch
            .split_once('+')
            .unwrap_or((&torch, planned.as_deref().unwrap_or("cpu")));
        let cuda = variant
            .strip_prefix("cu")
            .filter(|d| d.len() >= 2)
            .and_then(|d| Version::parse(&format!("{}.{}", &d[..d.len() - 1], &d[d.len() - 1..])));
        let want = TorchExpectation {
            version: Version::parse(version)?,
            variant: variant.to_owned(),
            cuda,
            index_args: v.packages.index_args(&super::Tool::Pip),
            requirement: Some(format!("torch=={torch}")),
            gpus: Vec::new(),
            gpus_here: false,
        };
        return match super::report::<TorchReport>(runner, &venv, TORCH_SCRIPT) {
            Ok(r) => judge_torch(&r, &want, &python).err(),
            Err(e) => Some(e.to_string()),
        };
    }
    if let Some((version, cuda)) = v.packages.requirements.iter().find_map(|r| jax_planned(r)) {
        return match super::report::<JaxReport>(runner, &venv, JAX_SCRIPT) {
            Ok(r) => judge_jax(
                &r,
                &version,
                cuda,
                false,
                &v.packages.index_args(&super::Tool::Pip),
            )
            .err(),
            Err(e) => Some(e.to_string()),
        };
    }
    if let Some(tf) = v
        .packages
        .requirements
        .iter()
        .find_map(|r| r.strip_prefix("tensorflow[and-cuda]=="))
    {
        return match super::report::<TfReport>(runner, &venv, TF_SCRIPT) {
            Ok(r) => judge_tf(&r, &Version::parse(tf)?, false).err(),
            Err(e) => Some(e.to_string()),
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::python::Packages;

    fn want() -> TorchExpectation {
        TorchExpectation {
            version: Version::parse("2.14.1").unwrap(),
            variant: "cu130".into(),
            cuda: Version::parse("13.0"),
            index_args: vec![
                "--index-url".into(),
                "https://download.pytorch.org/whl/cu130".into(),
            ],
            requirement: None,
            gpus: vec![("NVIDIA H200".into(), Version::parse("9.0").unwrap())],
            gpus_here: true,
        }
    }

    fn report(cuda: Option<&str>, arch: &[&str]) -> TorchReport {
        TorchReport {
            version: Some("2.14.1+cu130".into()),
            cuda: cuda.map(str::to_owned),
            available: cuda.is_some(),
            arch_list: arch.iter().map(|a| (*a).to_owned()).collect(),
            devices: vec![("NVIDIA H200".into(), (9, 0))],
            error: None,
        }
    }

    #[test]
    fn a_good_torch_passes() {
        let r = report(
            Some("13.0"),
            &["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
        );
        assert!(judge_torch(&r, &want(), "/v/bin/python").is_ok());
    }

    #[test]
    fn cpu_only_torch_is_an_error_with_the_fix() {
        let mut r = report(None, &[]);
        r.version = Some("2.14.1+cpu".into());
        let e = judge_torch(&r, &want(), "/v/bin/python").unwrap_err();
        assert!(e.contains("CPU-only torch"), "{e}");
        assert!(e.contains("pip install --force-reinstall torch==2.14.1+cu130 --index-url https://download.pytorch.org/whl/cu130"), "{e}");
    }

    #[test]
    fn the_fix_for_a_folder_of_wheels_names_the_folder_not_an_empty_index() {
        // Found on a GPU: a `--pypi-index DIR` route printed `--index-url ` with nothing after it.
        let folder = Packages {
            requirements: vec!["torch==2.14.1".into()],
            no_index: true,
            find_links: vec!["/srv/my wheels".into()],
            ..Packages::default()
        };
        let mut w = want();
        w.index_args = folder.index_args(&super::super::Tool::Pip);
        w.requirement = Some("torch==2.14.1".into());
        let mut r = report(None, &[]);
        r.version = Some("2.14.1+cpu".into());
        let e = judge_torch(&r, &w, "/v/bin/python").unwrap_err();
        assert!(
            e.ends_with("fix: /v/bin/python -m pip install --force-reinstall torch==2.14.1 --no-index --find-links \"/srv/my wheels\""),
            "{e}"
        );
    }

    #[test]
    fn missing_kernels_and_unavailable_cuda() {
        let r = report(Some("13.0"), &["sm_100", "sm_120"]);
        assert!(judge_torch(&r, &want(), "p")
            .unwrap_err()
            .contains("no kernels for the NVIDIA H200"));
        let mut r = report(Some("13.0"), &["sm_90"]);
        r.available = false;
        assert!(judge_torch(&r, &want(), "p")
            .unwrap_err()
            .contains("is_available() is False"));
        let mut w = want();
        w.gpus_here = false;
        assert!(judge_torch(&r, &w, "p").is_ok());
        // Where torch does see a GPU, the kernels are checked even for another machine's plan.
        let r = report(Some("13.0"), &["sm_100", "sm_120"]);
        assert!(judge_torch(&r, &w, "p").is_err());
    }

    #[test]
    fn constraints_are_checked_against_what_pip_installed() {
        let mut installed = std::collections::BTreeMap::new();
        installed.insert("nvidia-cudnn-cu12".to_owned(), "9.10.2.21".to_owned());
        let c = vec!["nvidia-cudnn-cu12<9.11".to_owned()];
        assert!(judge_constraints(&installed, &c).unwrap()[0].contains("within"));
        installed.insert("nvidia-cudnn-cu12".to_owned(), "9.28.0.42".to_owned());
        let e = judge_constraints(&installed, &c).unwrap_err();
        assert!(e.contains("9.28.0.42") && e.contains("outside"), "{e}");
    }

    #[test]
    fn arch_matching() {
        let v = |s: &str| Version::parse(s).unwrap();
        let l = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert!(serves(&l(&["sm_86"]), &v("8.9")));
        assert!(!serves(&l(&["sm_86"]), &v("9.0")));
        assert!(serves(&l(&["sm_90a"]), &v("9.0")));
        assert!(serves(&l(&["compute_90"]), &v("12.0")));
        assert!(!serves(&l(&["sm_100", "sm_120"]), &v("6.1")));
    }

    fn jax(plugins: &[(&str, &str)], gpus: usize) -> JaxReport {
        JaxReport {
            version: Some("0.12.0.1".into()),
            jaxlib: Some("0.12.0.1".into()),
            plugins: plugins
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            gpus,
            gpu_error: (gpus == 0).then(|| "RuntimeError: Unknown backend: 'gpu'".into()),
            error: None,
        }
    }

    #[test]
    fn jax_without_its_plugin_is_a_cpu_jaxlib_with_the_fix() {
        let v = Version::parse("0.12.0.1").unwrap();
        let e = judge_jax(&jax(&[], 0), &v, 13, false, &[]).unwrap_err();
        assert_eq!(
            e,
            "jax-cuda13-plugin is not installed: this jaxlib runs on the CPU only; fix: pip install --force-reinstall 'jax[cuda13]==0.12.0.1'"
        );
        // From a folder of wheels the fix names the folder, as the install did.
        let folder = [
            "--no-index".to_owned(),
            "--find-links".into(),
            "/srv/w".into(),
        ];
        let e = judge_jax(&jax(&[], 0), &v, 13, false, &folder).unwrap_err();
        assert!(
            e.ends_with("fix: pip install --force-reinstall 'jax[cuda13]==0.12.0.1' --no-index --find-links /srv/w"),
            "{e}"
        );
    }

    #[test]
    fn jax_judges_plugin_version_a_second_plugin_and_the_gpus() {
        let v = Version::parse("0.12.0.1").unwrap();
        let good = [("jax-cuda13-plugin", "0.12.0.1")];
        // No GPU here: installed, and the note says where the GPU check runs.
        let notes = judge_jax(&jax(&good, 0), &v, 13, false, &[]).unwrap();
        assert!(notes[0].starts_with("no GPU on this machine"), "{notes:?}");
        // GPUs here that JAX does not see: its own words.
        let e = judge_jax(&jax(&good, 0), &v, 13, true, &[]).unwrap_err();
        assert!(
            e.contains("falls back to the CPU (RuntimeError: Unknown backend: 'gpu')"),
            "{e}"
        );
        assert_eq!(
            judge_jax(&jax(&good, 2), &v, 13, true, &[]).unwrap(),
            Vec::<String>::new()
        );
        let e = judge_jax(
            &jax(&[("jax-cuda13-plugin", "0.12.1")], 1),
            &v,
            13,
            true,
            &[],
        )
        .unwrap_err();
        assert!(
            e.starts_with("jax-cuda13-plugin 0.12.1 is installed where 0.12.0.1 was planned"),
            "{e}"
        );
        let both = [
            ("jax-cuda12-plugin", "0.12.0.1"),
            ("jax-cuda13-plugin", "0.12.0.1"),
        ];
        let e = judge_jax(&jax(&both, 1), &v, 13, true, &[]).unwrap_err();
        assert!(
            e.starts_with("jax-cuda12-plugin is installed beside jax-cuda13-plugin"),
            "{e}"
        );
    }
}
