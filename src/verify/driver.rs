//! Check `driver`: `nvidia-smi` answers (the seed guide's first command), with the driver
//! version and every GPU. Its GPU list — completed from the PCI table where an old driver does
//! not print the compute capability — is what the per-GPU checks run on.

use std::path::PathBuf;
use std::time::Duration;

use crate::detect::gpu::{self, nvidia_smi};
use crate::model::system::Gpu;
use crate::world::runner::which;

use super::{exit_words, output_lines, Check, Context, Exec};

const TIMEOUT: Duration = Duration::from_secs(30);

/// The summary that starts every "no driver" failure.
pub const NO_DRIVER: &str = "no NVIDIA driver/GPU here";

/// Runs nvidia-smi; returns the check and the GPUs the other checks can use.
pub fn check(ctx: &Context<'_>, exec: &Exec<'_>) -> (Check, Vec<Gpu>) {
    let mut path = ctx.process.path_entries();
    path.push(PathBuf::from("/usr/lib/wsl/lib"));
    let Some(smi) = which("nvidia-smi", &path) else {
        return without_smi(ctx, "nvidia-smi is not on PATH".into(), false);
    };
    let banner = match exec.run(&smi, &[], &[], TIMEOUT) {
        Ok(out) if out.success() => out,
        Ok(out) => {
            let mut lines = output_lines(&out);
            lines.truncate(3);
            let (check, gpus) = without_smi(
                ctx,
                format!("{} failed ({})", smi.display(), exit_words(&out)),
                true,
            );
            let mut check = check;
            check.evidence.extend(lines);
            return (check, gpus);
        }
        Err(e) => return without_smi(ctx, e.to_string(), true),
    };
    let query = |fields: &str| {
        exec.run(
            &smi,
            &[
                &format!("--query-gpu={fields}"),
                "--format=csv,noheader,nounits",
            ],
            &[],
            TIMEOUT,
        )
        .ok()
        .filter(|o| o.success())
        .map(|o| nvidia_smi::parse_query(&o.stdout))
        .filter(|(g, _)| !g.is_empty())
    };
    let (mut gpus, queried_driver) = query(nvidia_smi::QUERY)
        .or_else(|| query(nvidia_smi::QUERY_WITHOUT_CC))
        .unwrap_or_default();
    for g in &mut gpus {
        gpu::complete_from_table(g, ctx.gpu_table);
    }
    let driver = queried_driver.or_else(|| banner_driver_version(&banner.stdout));
    let cuda = nvidia_smi::parse_cuda_version(&banner.stdout);
    let data = serde_json::json!({
        "nvidia_smi": smi,
        "driver": driver,
        "cuda": cuda,
        "gpus": gpus,
    });
    let head = driver_words(driver.as_deref(), cuda.as_deref());
    if gpus.is_empty() {
        let check = Check::fail(
            "driver",
            vec![format!(
                "{NO_DRIVER}: nvidia-smi answers ({head}) but lists no GPU"
            )],
        )
        .data(data);
        return (check, gpus);
    }
    let mut evidence = vec![format!("{head}, {}", gpu_count(gpus.len()))];
    evidence.extend(gpus.iter().map(gpu_line));
    (Check::pass("driver", evidence).data(data), gpus)
}

/// nvidia-smi cannot be run or fails: the check fails, and NVML may still name the GPUs (a
/// container without nvidia-smi, a broken PATH).
/// `smi_found`: an nvidia-smi is there but failed (a driver is half there: never a skip).
fn without_smi(ctx: &Context<'_>, why: String, smi_found: bool) -> (Check, Vec<Gpu>) {
    let report = (ctx.nvml)().filter(|r| !r.gpus.is_empty());
    match report {
        Some(r) => {
            let mut gpus = r.gpus;
            for g in &mut gpus {
                gpu::complete_from_table(g, ctx.gpu_table);
            }
            let mut evidence = vec![
                format!(
                    "{why}; NVML answers: {}, {}",
                    driver_words(r.driver_version.as_deref(), r.cuda_version.as_deref()),
                    gpu_count(gpus.len())
                ),
                "put nvidia-smi on PATH (it ships with the driver's utilities)".into(),
            ];
            evidence.extend(gpus.iter().map(gpu_line));
            let data = serde_json::json!({
                "nvidia_smi": null,
                "driver": r.driver_version,
                "cuda": r.cuda_version,
                "gpus": gpus,
            });
            (Check::fail("driver", evidence).data(data), gpus)
        }
        // Nothing answers: a machine with NVIDIA GPUs on its PCI bus needs a driver; one
        // without (a build box, CI) is not broken, it just cannot run the GPU checks.
        None => {
            let pci: Vec<Gpu> = (ctx.pci_gpus)()
                .into_iter()
                .filter(|g| g.vendor == crate::model::system::Vendor::Nvidia)
                .collect();
            if pci.is_empty() && !smi_found {
                return (
                    Check::skip(
                        "driver",
                        vec![
                            format!("no NVIDIA GPU here ({why}; NVML does not answer; the PCI bus has none): what needs a GPU is skipped, the rest is still built and checked"),
                        ],
                    ),
                    Vec::new(),
                );
            }
            let names: Vec<String> = pci.iter().map(|g| g.name.clone()).collect();
            let first = if pci.is_empty() {
                format!("{NO_DRIVER}: {why}")
            } else {
                format!(
                    "{NO_DRIVER}: {why}, but the PCI bus has {}: {}",
                    gpu_count(pci.len()),
                    names.join(", ")
                )
            };
            (
                Check::fail(
                    "driver",
                    vec![
                        first,
                        "install the NVIDIA driver (`cudaup plan` names the one to use)".into(),
                    ],
                ),
                Vec::new(),
            )
        }
    }
}

fn driver_words(driver: Option<&str>, cuda: Option<&str>) -> String {
    match (driver, cuda) {
        (Some(d), Some(c)) => format!("NVIDIA driver {d} (runs CUDA up to {c})"),
        (Some(d), None) => format!("NVIDIA driver {d}"),
        (None, _) => "NVIDIA driver of unknown version".to_owned(),
    }
}

fn gpu_count(n: usize) -> String {
    if n == 1 {
        "1 GPU".into()
    } else {
        format!("{n} GPUs")
    }
}

/// `[0] NVIDIA H200, compute capability 9.0, 140 GiB`.
pub fn gpu_line(g: &Gpu) -> String {
    let mut line = format!("[{}] {}", g.index, g.name);
    match &g.compute_capability {
        Some(cc) => line.push_str(&format!(", compute capability {cc}")),
        None => line.push_str(", compute capability unknown"),
    }
    if let Some(m) = g.memory_mib {
        line.push_str(&format!(", {:.0} GiB", m as f64 / 1024.0));
    }
    line
}

/// The `Driver Version: 580.159.04` of nvidia-smi's banner.
pub fn banner_driver_version(text: &str) -> Option<String> {
    let at = text.find("Driver Version")?;
    text[at + "Driver Version".len()..]
        .split(|c: char| c.is_whitespace() || c == ':' || c == '|')
        .find(|w| !w.is_empty())
        .filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::testing::{failed, ok, Scripted};
    use crate::world::process::Process;

    const BANNER: &str = "+-----------------------------------------------------------------------------------------+\n| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |\n+-----------------------------------------+------------------------+----------------------+\n";

    fn table() -> crate::catalog::GpuTable {
        crate::catalog::Catalog::load(&crate::catalog::Source::Embedded)
            .unwrap()
            .gpus
    }

    fn smi_dir() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("nvidia-smi");
        fs_err::write(&p, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs_err::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        d
    }

    fn run(
        runner: &Scripted,
        path: &str,
        nvml: &(dyn Fn() -> Option<gpu::DriverReport> + Sync),
    ) -> (Check, Vec<Gpu>) {
        run_with_pci(runner, path, nvml, &Vec::new)
    }

    fn run_with_pci(
        runner: &Scripted,
        path: &str,
        nvml: &(dyn Fn() -> Option<gpu::DriverReport> + Sync),
        pci: &(dyn Fn() -> Vec<Gpu> + Sync),
    ) -> (Check, Vec<Gpu>) {
        let process = Process::with_vars([("PATH", path)], "/");
        let table = table();
        let components = crate::catalog::Catalog::embedded().components;
        let ctx = Context {
            process: &process,
            runner,
            gpu_table: &table,
            nvml,
            pci_gpus: pci,
            components: &components,
        };
        let exec = Exec::new(runner, &process, None);
        check(&ctx, &exec)
    }

    #[test]
    fn banner_parse() {
        assert_eq!(banner_driver_version(BANNER).as_deref(), Some("580.159.04"));
        assert_eq!(banner_driver_version("Driver Version: N/A"), None);
    }

    #[test]
    fn one_h200() {
        let d = smi_dir();
        let runner = Scripted::new(|_, args, _| {
            if args.is_empty() {
                ok(BANNER)
            } else {
                ok("0, NVIDIA H200, 0x233510DE, 580.159.04, 143771, 9.0\n")
            }
        });
        let (c, gpus) = run(&runner, &d.path().display().to_string(), &|| None);
        assert_eq!(c.status, super::super::Status::Pass, "{c:?}");
        assert_eq!(
            c.evidence[0],
            "NVIDIA driver 580.159.04 (runs CUDA up to 13.0), 1 GPU"
        );
        assert_eq!(
            c.evidence[1],
            "[0] NVIDIA H200, compute capability 9.0, 140 GiB"
        );
        assert_eq!(gpus[0].architecture.as_deref(), Some("Hopper"));
    }

    #[test]
    fn old_driver_gets_the_capability_from_the_table() {
        let d = smi_dir();
        let runner = Scripted::new(|_, args, _| {
            if args.is_empty() {
                ok(BANNER)
            } else if args[0].contains("compute_cap") {
                failed(
                    2,
                    "",
                    "Field \"compute_cap\" is not a valid field to query.",
                )
            } else {
                ok("0, Tesla K80, 0x102D10DE, 470.256.02, 11441\n")
            }
        });
        let (c, gpus) = run(&runner, &d.path().display().to_string(), &|| None);
        assert_eq!(c.status, super::super::Status::Pass);
        assert_eq!(gpus[0].compute_capability.as_deref(), Some("3.7"));
    }

    #[test]
    fn no_driver() {
        // No GPU at all: nothing is broken, the GPU checks are skipped.
        let runner = Scripted::new(|_, _, _| None);
        let (c, gpus) = run(&runner, "/nonexistent", &|| None);
        assert_eq!(c.status, super::super::Status::Skip);
        assert!(
            c.evidence[0].starts_with("no NVIDIA GPU here"),
            "{:?}",
            c.evidence
        );
        assert!(gpus.is_empty());
        // A GPU on the bus and no driver: a failure naming it.
        let h200 = || {
            vec![Gpu {
                index: 0,
                vendor: crate::model::system::Vendor::Nvidia,
                name: "NVIDIA H200".into(),
                pci_id: Some("10de:2335".into()),
                compute_capability: Some("9.0".into()),
                architecture: None,
                memory_mib: None,
            }]
        };
        let (c, _) = run_with_pci(&runner, "/nonexistent", &|| None, &h200);
        assert_eq!(c.status, super::super::Status::Fail);
        assert!(c.evidence[0].starts_with(NO_DRIVER), "{:?}", c.evidence);
        assert!(
            c.evidence[0].ends_with("the PCI bus has 1 GPU: NVIDIA H200"),
            "{:?}",
            c.evidence
        );

        let d = smi_dir();
        let runner = Scripted::new(|_, _, _| {
            failed(9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n", "")
        });
        let (c, gpus) = run(&runner, &d.path().display().to_string(), &|| None);
        assert_eq!(c.status, super::super::Status::Fail);
        assert!(
            c.evidence[0].contains("failed (exit 9)"),
            "{:?}",
            c.evidence
        );
        assert!(c
            .evidence
            .iter()
            .any(|l| l.contains("couldn't communicate")));
        assert!(gpus.is_empty());
    }

    #[test]
    fn nvml_names_the_gpus_when_nvidia_smi_is_missing() {
        let runner = Scripted::new(|_, _, _| None);
        let nvml = || {
            Some(gpu::DriverReport {
                driver_version: Some("580.159.04".into()),
                cuda_version: Some("13.0".into()),
                gpus: vec![Gpu {
                    index: 0,
                    vendor: crate::model::system::Vendor::Nvidia,
                    name: "NVIDIA H200".into(),
                    pci_id: Some("10de:2335".into()),
                    compute_capability: Some("9.0".into()),
                    architecture: None,
                    memory_mib: Some(143771),
                }],
            })
        };
        let (c, gpus) = run(&runner, "/nonexistent", &nvml);
        assert_eq!(c.status, super::super::Status::Fail);
        assert!(c.evidence[0].contains("NVML answers"), "{:?}", c.evidence);
        assert_eq!(gpus.len(), 1);
    }
}
