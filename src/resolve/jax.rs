//! The search for a JAX stack under one driver: the newest release whose CUDA plugin the driver
//! runs, whose GPU floor every planned GPU meets, with a Python in range, and with a cuDNN among
//! those its `with-cuda` extra floats to that serves every GPU. CUDA 13 plugins are tried before
//! CUDA 12 ones (JAX recommends moving to 13); the floors are the catalog's (jax.toml), never
//! written here.

use crate::catalog::{JaxPlugin, JaxRelease};
use crate::model::request::pin_matches;
use crate::model::version::Version;

use super::stack::{major_floor, meets, newest_first, sm, Stack};
use super::{python, Ctx};

/// The newest JAX stack `driver` runs on every planned GPU, with what was turned down and why
/// appended to `rejected`.
pub fn search<'c>(
    ctx: &Ctx<'c>,
    driver: Option<&Version>,
    rejected: &mut Vec<String>,
) -> Option<Stack<'c>> {
    if ctx.host == super::driver::Host::Windows {
        rejected.push(
            "JAX: its CUDA plugins are built for Linux only (native Windows has CPU wheels only; under WSL2 the Linux wheels are experimental)".into(),
        );
        return None;
    }
    if ctx.platform != crate::catalog::DEFAULT_PLATFORM {
        rejected.push(format!(
            "JAX: the catalog's JAX rows were read for linux-x86_64 wheels, not {}",
            ctx.platform
        ));
        return None;
    }
    for r in newest_first(&ctx.catalog.jax.release, ctx.req.pins.jax.as_ref(), |r| {
        &r.version
    }) {
        let label = format!("JAX {}", r.version);
        let python = match python::choose(
            ctx.system,
            ctx.req.pins.python.as_ref(),
            &r.python_min,
            &r.python_max,
            &[],
        ) {
            // JAX's wheels exist only from Python 3.12: a plan that installs Python first would
            // be a promise the install step does not keep, so the user is told what to install.
            Ok(python::PythonChoice::Install { .. }) => {
                let found: Vec<&str> = ctx
                    .system
                    .pythons
                    .iter()
                    .map(|p| p.version.as_str())
                    .collect();
                rejected.push(format!(
                    "{label}: needs Python {} to {} (its wheels' Requires-Python), and {}; install Python {} (your distro's python{} package, or `uv python install {}`) and plan again",
                    r.python_min,
                    r.python_max,
                    if found.is_empty() {
                        "no Python was found on this machine".to_owned()
                    } else {
                        format!("this machine has Python {}", found.join(", "))
                    },
                    r.python_min,
                    r.python_min,
                    r.python_min
                ));
                continue;
            }
            Ok(p) => p,
            Err(e) => {
                rejected.push(format!("{label}: {e}"));
                continue;
            }
        };
        let mut plugins: Vec<&JaxPlugin> = r.plugin.iter().collect();
        plugins.sort_by_key(|p| std::cmp::Reverse(p.cuda));
        for p in plugins {
            if let Some(mut stack) = with_plugin(ctx, driver, r, p, rejected) {
                stack.python = Some(python);
                return Some(stack);
            }
        }
    }
    None
}

/// The stack of release `r` with plugin `p`, or `None` (and why, in `rejected`).
fn with_plugin<'c>(
    ctx: &Ctx<'c>,
    driver: Option<&Version>,
    r: &'c JaxRelease,
    p: &'c JaxPlugin,
    rejected: &mut Vec<String>,
) -> Option<Stack<'c>> {
    let label = format!("JAX {} with jax[cuda{}]", r.version, p.cuda);
    let cuda = Version::parse(&p.cuda.to_string()).expect("a CUDA major is a version");
    if !pin_matches(ctx.req.pins.cuda.as_ref(), &cuda) {
        rejected.push(format!("{label}: CUDA {}, not the pinned CUDA", p.cuda));
        return None;
    }
    let Some(info) = ctx.catalog.jax.cuda_major(p.cuda) else {
        rejected.push(format!(
            "{label}: the catalog does not say which GPUs CUDA {} plugins serve",
            p.cuda
        ));
        return None;
    };
    let floor = major_floor(ctx, &cuda)?;
    if !meets(driver, &floor) {
        rejected.push(format!(
            "{label}: needs driver {floor} or newer (CUDA {}.x)",
            p.cuda
        ));
        return None;
    }
    let mut stack = Stack::empty();
    stack.need(floor);
    stack.coverage = ctx
        .targets
        .iter()
        .map(|t| {
            if t.cc < info.sm_min {
                Err(format!(
                    "JAX's CUDA {} plugin supports compute capability {} and newer, not {} of the {}",
                    p.cuda, info.sm_min, sm(&t.cc), t.name
                ))
            } else {
                Ok(format!(
                    "{} (XLA compiles for it with the ptxas of the CUDA {} wheels)",
                    sm(&t.cc),
                    p.cuda
                ))
            }
        })
        .collect();
    let misses: Vec<String> = stack
        .coverage
        .iter()
        .filter_map(|c| c.as_ref().err().cloned())
        .collect();
    if !misses.is_empty() {
        rejected.extend(misses.into_iter().map(|m| format!("{label}: {m}")));
        return None;
    }
    match super::constraints::jax_cudnn(ctx, r, p) {
        Ok(Some(c)) => {
            stack.wheel_cudnn = Some(c.summary);
            stack.constraints = c.constraints;
            stack.notes.extend(c.notes);
        }
        Ok(None) => {}
        Err(e) => {
            rejected.push(format!("{label}: {e}"));
            return None;
        }
    }
    stack.jax = Some((r, p));
    Some(stack)
}
