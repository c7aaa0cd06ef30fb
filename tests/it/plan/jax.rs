//! JAX plans over machine pictures: the CUDA 13 plugin where the driver runs CUDA 13 and every
//! GPU meets its compute-capability floor, the CUDA 12 plugin otherwise, refusals with their
//! reason, and the cuDNN bound for GPUs newer cuDNN builds dropped.

use super::*;

const RTX2080: (&str, &str, &str) = ("NVIDIA GeForce RTX 2080", "7.5", "Turing");
const GTX1080: (&str, &str, &str) = ("NVIDIA GeForce GTX 1080", "6.1", "Pascal");
const GTX750TI: (&str, &str, &str) = ("NVIDIA GeForce GTX 750 Ti", "5.0", "Maxwell");

fn keep(m: &M) -> Plan {
    plan(m, &with_driver(Profile::Jax, "keep"))
}

#[test]
fn h100_on_r580_gets_the_cuda13_plugin() {
    let p = keep(&M::ubuntu().with(H100).driver("580.95.05"));
    assert_eq!(p.status, Status::Ok, "{p:#?}");
    let jax = comp(&p, "jax");
    assert_eq!(jax.version.as_deref(), Some("0.12.0.1"));
    assert_eq!(jax.variant.as_deref(), Some("cuda13"));
    assert!(
        jax.reason
            .contains("jax-cuda13-plugin 0.12.0.1, jax-cuda13-pjrt 0.12.0.1"),
        "{}",
        jax.reason
    );
    // The newest cuDNN the plugin floats to serves Hopper: nothing is bounded.
    assert!(p.constraints.is_empty(), "{:?}", p.constraints);
    assert!(p.reasons[0].contains("sm_90"), "{:?}", p.reasons);
}

#[test]
fn turing_on_r535_gets_the_cuda12_plugin_and_says_why_not_13() {
    let p = plan(
        &M::ubuntu().with(RTX2080).driver("535.247.01"),
        &Request {
            driver: DriverPolicy::Keep,
            ..req(Profile::Jax)
        },
    );
    assert_eq!(p.status, Status::Ok, "{p:#?}");
    assert_eq!(comp(&p, "jax").variant.as_deref(), Some("cuda12"));
    assert!(
        p.rejected
            .iter()
            .any(|r| r.contains("JAX 0.12.0.1 with jax[cuda13]: needs driver 580")),
        "{:?}",
        p.rejected
    );
}

#[test]
fn pascal_gets_cuda12_with_cudnn_held_below_the_builds_that_dropped_it() {
    // JAX's guide: CUDA 12 plugins serve compute capability 5.2 and newer, CUDA 13 ones 7.5.
    // The plugin floats nvidia-cudnn-cu12>=9.10.2.21, and cuDNN 9.11 dropped Pascal.
    let p = keep(&M::ubuntu().with(GTX1080).driver("580.95.05"));
    assert_eq!(p.status, Status::Ok, "{p:#?}");
    assert_eq!(comp(&p, "jax").variant.as_deref(), Some("cuda12"));
    assert_eq!(p.constraints.len(), 1, "{:?}", p.constraints);
    assert_eq!(p.constraints[0].requirement, "nvidia-cudnn-cu12<9.11");
    assert!(
        p.rejected.iter().any(|r| {
            r.contains(
            "jax[cuda13]: JAX's CUDA 13 plugin supports compute capability 7.5 and newer, not sm_61"
        )
        }),
        "{:?}",
        p.rejected
    );
}

#[test]
fn maxwell_below_5_2_is_refused_with_the_floor() {
    let p = keep(&M::ubuntu().with(GTX750TI).driver("580.95.05"));
    assert_eq!(p.status, Status::Unsupported, "{p:#?}");
    let why = p.reasons.join("\n");
    assert!(
        why.contains("JAX's CUDA 12 plugin supports compute capability 5.2 and newer, not sm_50"),
        "{why}"
    );
}

#[test]
fn python_3_11_only_is_refused_naming_3_12() {
    let p = keep(&M::ubuntu().with(H100).driver("580.95.05").python("3.11.7"));
    assert_eq!(p.status, Status::Unsupported, "{p:#?}");
    let why = p.reasons.join("\n");
    assert!(
        why.contains("needs Python 3.12 to 3.15") && why.contains("this machine has Python 3.11.7"),
        "{why}"
    );
    assert!(why.contains("`uv python install 3.12`"), "{why}");
}

#[test]
fn pins_choose_the_release_and_the_plugins_cuda() {
    let m = M::ubuntu().with(H100).driver("580.95.05");
    let older = plan(&m, &pinned(Profile::Jax, |p| p.jax = Some(pin("0.11"))));
    assert_eq!(version_of(&older, "jax"), "0.11.2");
    let cu12 = plan(&m, &pinned(Profile::Jax, |p| p.cuda = Some(pin("12"))));
    assert_eq!(comp(&cu12, "jax").variant.as_deref(), Some("cuda12"));
    let none = plan(&m, &pinned(Profile::Jax, |p| p.jax = Some(pin("0.9"))));
    assert_eq!(none.status, Status::Unsupported);
}

#[test]
fn windows_is_refused_and_wsl_is_planned() {
    let w = plan(
        &M::windows().with(RTX4090).driver("581.57"),
        &req(Profile::Jax),
    );
    assert_eq!(w.status, Status::Unsupported);
    assert!(
        w.reasons.join("\n").contains("built for Linux only"),
        "{:?}",
        w.reasons
    );
    let l = plan(&M::wsl().with(RTX4090).driver("581.57"), &req(Profile::Jax));
    assert_eq!(l.status, Status::Ok, "{l:#?}");
}
