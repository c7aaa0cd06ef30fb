//! One default profile (issue 37): with no profile chosen, `plan`, `install --dry-run`,
//! `wizard --yes --dry-run` and `bench` take the same one on each machine (docs/plan.md, "The
//! default profile"). Each machine is this test's live machine with an `nvidia-smi` stand-in
//! printing what the real one prints there; no host is reached (every source is a loopback port
//! nothing listens on, or an empty local copy of PyPI).

use std::net::TcpListener;

use crate::common::*;

/// What `nvidia-smi` prints bare (the driver's banner); the query lines differ per machine.
fn banner(driver: &str) -> String {
    format!(
        "+-----------------------------------------------------------------------------------------+\n\
         | NVIDIA-SMI {driver}             Driver Version: {driver}     CUDA Version: 13.0     |\n\
         +-----------------------------------------------------------------------------------------+\n"
    )
}

fn dead() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}")
}

/// A machine: its name, what its `nvidia-smi` prints (driver, `--query-gpu` lines) if it has one,
/// and the profile it is offered.
type Machine = (
    &'static str,
    Option<(&'static str, &'static str)>,
    &'static str,
);

/// The five machines.
fn machines() -> Vec<Machine> {
    vec![
        ("no GPU", None, "cpu"),
        (
            "an H200",
            Some((
                "580.159.04",
                "0, NVIDIA H200, 0x233510DE, 580.159.04, 143771, 9.0\n",
            )),
            "full",
        ),
        (
            "an RTX 4090",
            Some((
                "580.159.04",
                "0, NVIDIA GeForce RTX 4090, 0x268410DE, 580.159.04, 24564, 8.9\n",
            )),
            "full",
        ),
        (
            "a Kepler GTX 780 (no PyTorch wheel serves it)",
            Some((
                "470.256.02",
                "0, NVIDIA GeForce GTX 780, 0x100410DE, 470.256.02, 3072, 3.5\n",
            )),
            "cuda-dev",
        ),
        (
            "an NVIDIA GPU of unknown compute capability",
            Some((
                "580.159.04",
                "0, NVIDIA Mystery Board, 0xFFFF10DE, 580.159.04, 8192, [N/A]\n",
            )),
            "cpu",
        ),
    ]
}

/// The word after `marker` in `text`, up to a space, comma or parenthesis.
fn after<'t>(text: &'t str, marker: &str) -> Option<&'t str> {
    let i = text.find(marker)? + marker.len();
    text[i..]
        .split([' ', ',', ')', ':', '`'])
        .find(|w| !w.is_empty())
}

#[test]
fn plan_install_wizard_and_bench_agree_on_the_default_profile() {
    for (name, smi, expected) in machines() {
        let mut ctx = TestContext::new();
        if let Some((driver, query)) = smi {
            ctx = ctx.with_nvidia_smi(&banner(driver), query);
        }
        let down = dead();
        // PyPI answers (an empty local copy): the wizard offers what could work, as it does
        // on a PyPI-only network, rather than stopping because no download site answered.
        let pypi = tempfile::tempdir().unwrap();
        for (k, v) in [
            ("CUDAUP_TORCH_INDEX", format!("{down}/whl")),
            ("CUDAUP_PYPI_INDEX", pypi.path().display().to_string()),
            ("CUDAUP_MIRROR", down.clone()),
            ("CUDAUP_PROBE_TIMEOUT", "2".into()),
            ("CUDAUP_NO_UV", "1".into()),
        ] {
            ctx = ctx.with_env(k, &v);
        }
        let plan = ctx.cudaup(&["plan", "--json"]);
        let planned = plan.json()["profile"].as_str().map(str::to_owned);

        let install = ctx.cudaup(&["install", "--dry-run", "--driver", "keep", "--allow-http"]);
        let installed = after(&install.stdout, "profile ").map(str::to_owned);

        let wizard = ctx.cudaup(&["wizard", "--yes", "--dry-run"]);
        let wizard_text = format!("{}{}", wizard.stdout, wizard.stderr);
        let suggested = after(&wizard_text, "Plan (").map(str::to_owned);

        let bench = ctx.cudaup(&["bench", "--quick"]);
        let benched = after(&bench.stderr, "default profile is ")
            .or_else(|| after(&bench.stderr, "default profile, "))
            .map(str::to_owned);

        let all = [
            ("plan", &planned),
            ("install --dry-run", &installed),
            ("wizard --yes --dry-run", &suggested),
            ("bench", &benched),
        ];
        for (command, got) in all {
            assert_eq!(
                got.as_deref(),
                Some(expected),
                "on {name}, {command} took {got:?}:\n--- plan ---\n{}{}\n--- install ---\n{}{}\n--- wizard ---\n{wizard_text}\n--- bench ---\n{}",
                plan.stdout,
                plan.stderr,
                install.stdout,
                install.stderr,
                bench.stderr
            );
        }
        // install says it chose the default, and why.
        assert!(
            install
                .stdout
                .contains(&format!("profile {expected}: this machine's default (")),
            "{}",
            install.stdout
        );
    }
}
