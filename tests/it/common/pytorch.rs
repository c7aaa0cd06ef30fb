//! The install the guard, lock and uv tests share: `--profile pytorch` of a stand-in torch
//! `2.14` from a loopback PyTorch index, onto a machine picture with the driver kept.

use std::path::Path;

/// `--home HOME install --system SYSTEM --driver keep --venv VENV --yes --allow-http --profile
/// pytorch --torch 2.14 --torch-index TORCH_INDEX`.
pub fn install_args(home: &Path, venv: &Path, system: &str, torch_index: &str) -> Vec<String> {
    let mut args: Vec<String> = vec!["--home".into(), home.display().to_string()];
    args.extend(["install", "--system", system, "--driver", "keep", "--venv"].map(String::from));
    args.push(venv.display().to_string());
    args.extend(
        [
            "--yes",
            "--allow-http",
            "--profile",
            "pytorch",
            "--torch",
            "2.14",
            "--torch-index",
            torch_index,
        ]
        .map(String::from),
    );
    args
}
