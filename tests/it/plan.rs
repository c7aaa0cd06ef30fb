//! `cudaup plan`: scenarios across GPU generations, drivers, operating systems, pins and mixed
//! boxes. Every plan is checked against the resolver's invariants (not a snapshot of today's
//! versions); scenarios add what is specific to them.

use cudaup::catalog::{Catalog, Date, Kernels};
use cudaup::model::plan::{Action, Plan, Status};
use cudaup::model::request::{DriverPolicy, Pins, Profile, Request};
use cudaup::model::system::System;
use cudaup::model::version::Version;
use serde_json::json;

use crate::common::*;

fn v(s: &str) -> Version {
    Version::parse(s).unwrap()
}

/// The day the scenarios are judged on: the catalog's own date, so end-of-life dates and the
/// catalog's age read the same whenever the suite runs.
fn today() -> Date {
    Date::parse("2026-12-01").unwrap()
}

/// A GPU by marketing name, compute capability and architecture.
fn gpu(name: &str, cc: &str, arch: &str) -> serde_json::Value {
    json!({"index": 0, "vendor": "nvidia", "name": name, "compute_capability": cc, "architecture": arch})
}

const GTX1080TI: (&str, &str, &str) = ("NVIDIA GeForce GTX 1080 Ti", "6.1", "Pascal");
const GTX980TI: (&str, &str, &str) = ("NVIDIA GeForce GTX 980 Ti", "5.2", "Maxwell");
const K80: (&str, &str, &str) = ("Tesla K80", "3.7", "Kepler");
const K40: (&str, &str, &str) = ("Tesla K40c", "3.5", "Kepler");
const V100: (&str, &str, &str) = ("Tesla V100-SXM2-16GB", "7.0", "Volta");
const T4: (&str, &str, &str) = ("Tesla T4", "7.5", "Turing");
const A100: (&str, &str, &str) = ("NVIDIA A100-SXM4-40GB", "8.0", "Ampere");
const RTX3090: (&str, &str, &str) = ("NVIDIA GeForce RTX 3090", "8.6", "Ampere");
const RTX4090: (&str, &str, &str) = ("NVIDIA GeForce RTX 4090", "8.9", "Ada");
const L40S: (&str, &str, &str) = ("NVIDIA L40S", "8.9", "Ada");
const H100: (&str, &str, &str) = ("NVIDIA H100 80GB HBM3", "9.0", "Hopper");
const B200: (&str, &str, &str) = ("NVIDIA B200", "10.0", "Blackwell");
const RTX5090: (&str, &str, &str) = ("NVIDIA GeForce RTX 5090", "12.0", "Blackwell");

/// A machine: distro, GPUs, driver, Pythons.
struct M {
    os: serde_json::Value,
    gpus: Vec<serde_json::Value>,
    driver: serde_json::Value,
    pythons: Vec<serde_json::Value>,
}

impl M {
    fn linux(distro: &str, version: &str) -> Self {
        Self {
            os: json!({"family": "linux", "distro": distro, "version": version, "arch": "x86_64", "wsl": false}),
            gpus: Vec::new(),
            driver: serde_json::Value::Null,
            pythons: vec![json!({"path": "/usr/bin/python3", "version": "3.12.3"})],
        }
    }
    fn ubuntu() -> Self {
        Self::linux("ubuntu", "24.04")
    }
    fn wsl() -> Self {
        let mut m = Self::linux("ubuntu", "22.04");
        m.os["wsl"] = json!(true);
        m
    }
    fn windows() -> Self {
        let mut m = Self::ubuntu();
        m.os = json!({"family": "windows", "arch": "x86_64"});
        m.pythons = vec![json!({"path": "C:\\Python312\\python.exe", "version": "3.12.7"})];
        m
    }
    fn with(mut self, g: (&str, &str, &str)) -> Self {
        let mut value = gpu(g.0, g.1, g.2);
        value["index"] = json!(self.gpus.len());
        self.gpus.push(value);
        self
    }
    fn driver(mut self, version: &str) -> Self {
        self.driver = json!({"version": version});
        self
    }
    fn python(mut self, version: &str) -> Self {
        self.pythons =
            vec![json!({"path": format!("/usr/bin/python{version}"), "version": version})];
        self
    }
    fn no_python(mut self) -> Self {
        self.pythons.clear();
        self
    }
    fn system(&self) -> System {
        let doc = json!({"os": self.os, "gpus": self.gpus, "driver": self.driver, "pythons": self.pythons});
        serde_json::from_value(doc).unwrap()
    }
}

fn req(profile: Profile) -> Request {
    Request {
        profile,
        pins: Pins::default(),
        driver: DriverPolicy::Auto,
        ..Request::default()
    }
}

fn pin(v: &str) -> cudaup::model::version::VersionPin {
    cudaup::model::version::VersionPin::parse(v).unwrap()
}

fn pinned(profile: Profile, f: impl FnOnce(&mut Pins)) -> Request {
    let mut r = req(profile);
    f(&mut r.pins);
    r
}

fn with_driver(profile: Profile, policy: &str) -> Request {
    Request {
        driver: policy.parse().unwrap(),
        ..req(profile)
    }
}

/// Resolves and checks every invariant of an `ok` plan; returns the plan.
fn plan(m: &M, r: &Request) -> Plan {
    let catalog = Catalog::embedded();
    let system = m.system();
    let plan = cudaup::resolve::resolve_on(&system, r, &catalog, today());
    if plan.status == Status::Ok {
        check_invariants(&system, r, &catalog, &plan);
    } else {
        assert!(!plan.reasons.is_empty(), "an unsupported plan says why");
        assert!(plan.components.is_empty());
    }
    plan
}

fn comp<'p>(plan: &'p Plan, name: &str) -> &'p cudaup::model::plan::Component {
    plan.component(name)
        .unwrap_or_else(|| panic!("no {name} in {plan:#?}"))
}

fn version_of(plan: &Plan, name: &str) -> String {
    comp(plan, name).version.clone().unwrap()
}

fn check_invariants(system: &System, r: &Request, catalog: &Catalog, plan: &Plan) {
    let host_windows =
        system.os.wsl || system.os.family == cudaup::model::system::OsFamily::Windows;
    let driver = comp(plan, "driver");
    if r.profile == Profile::Cpu {
        assert_eq!(driver.action, Action::Skip);
        return;
    }
    // WSL2 and Windows: never a Linux driver.
    if host_windows {
        assert!(
            matches!(driver.action, Action::Keep | Action::Manual),
            "{driver:?}"
        );
        assert!(driver.commands.is_empty());
    }
    if driver.action == Action::Skip && system.nvidia_gpus().next().is_none() {
        // A build machine: no driver, so only the toolkit and its cuDNN are planned.
        assert_eq!(r.profile, Profile::CudaDev);
        let cuda = v(comp(plan, "cuda").version.as_deref().unwrap());
        if let Some(c) = plan.component("cudnn").filter(|c| c.action != Action::Skip) {
            assert!(catalog.cudnn.release.iter().any(|x| {
                x.version.to_string() == *c.version.as_ref().unwrap()
                    && x.supports_cuda(&v(&cuda.prefix(2)))
            }));
        }
        return;
    }
    let effective = v(driver
        .version
        .as_deref()
        .expect("the driver in effect has a version"));
    let floor = |cuda: &Version| {
        let m = catalog
            .cuda
            .major
            .iter()
            .find(|m| m.major == cuda.major())
            .unwrap();
        if host_windows {
            m.driver_windows.clone().unwrap()
        } else {
            m.driver_linux.clone()
        }
    };
    let left_out: Vec<&str> = plan
        .warnings
        .iter()
        .filter(|w| w.contains("is left out of this plan"))
        .map(String::as_str)
        .collect();
    let served: Vec<_> = system
        .nvidia_gpus()
        .filter(|g| g.compute_capability.is_some())
        .filter(|g| !left_out.iter().any(|w| w.starts_with(&g.name)))
        .collect();
    assert!(!served.is_empty(), "an ok plan serves at least one GPU");
    // A legacy GPU never gets a branch past its last one; a new one never one below its first.
    if !host_windows {
        let branch = effective.major();
        for g in &served {
            let a = catalog
                .drivers
                .architecture(g.architecture.as_deref().unwrap())
                .unwrap();
            assert!(
                a.last_branch.is_none_or(|l| branch <= l),
                "{} on branch {branch}",
                g.name
            );
            assert!(
                a.min_branch.is_none_or(|m| branch >= m),
                "{} on branch {branch}",
                g.name
            );
        }
    }
    let torch = plan.component("torch");
    let torch_cuda = torch.map(|t| {
        let release = catalog
            .pytorch
            .release
            .iter()
            .find(|x| x.version.to_string() == *t.version.as_ref().unwrap())
            .unwrap();
        // The variant of this machine's platform: another platform's row never decides it.
        let platform = cudaup::resolve::platform(system, catalog).expect("a known platform");
        let variant = release
            .variants_for(platform)
            .into_iter()
            .find(|x| Some(&x.name) == t.variant.as_ref())
            .unwrap();
        // The wheel carries SASS or PTX for every served GPU.
        for g in &served {
            let cc = v(g.compute_capability.as_deref().unwrap());
            assert_ne!(
                variant.kernels_for(&cc, |b, g| catalog.cuda.sass_runs_on(b, g)),
                Kernels::None,
                "{} has no kernels in {}",
                g.name,
                variant.name
            );
        }
        // The driver meets the wheel's CUDA floor.
        assert!(
            effective >= floor(&variant.cuda),
            "driver {effective} below the floor for {}",
            variant.cuda
        );
        // Python in range.
        let py = v(&version_of(plan, "python"));
        let py = v(&py.prefix(2));
        assert!(
            release.python_min <= py && py <= release.python_max,
            "python {py} outside torch {}",
            release.version
        );
        variant.cuda.clone()
    });
    if let Some(cuda) = plan.component("cuda") {
        let cv = v(cuda.version.as_deref().unwrap());
        let series = catalog
            .cuda
            .series
            .iter()
            .find(|s| s.version.prefix(2) == cv.prefix(2))
            .expect("series known");
        for g in &served {
            let cc = v(g.compute_capability.as_deref().unwrap());
            assert!(
                series.sm_min <= cc && cc <= series.sm_max,
                "CUDA {cv} cannot build for {}",
                g.name
            );
        }
        assert!(
            effective >= floor(&cv),
            "driver {effective} below CUDA {cv}'s floor"
        );
        if r.profile == Profile::Full {
            assert_eq!(
                cv.prefix(2),
                torch_cuda.as_ref().unwrap().prefix(2),
                "full: toolkit matches torch"
            );
        }
        if let Some(cudnn) = plan.component("cudnn").filter(|c| c.action != Action::Skip) {
            let row = catalog
                .cudnn
                .release
                .iter()
                .find(|x| {
                    x.version.to_string() == *cudnn.version.as_ref().unwrap()
                        && Some(&x.cuda_variant) == cudnn.cuda_variant.as_ref()
                        && x.supports_cuda(&v(&cv.prefix(2)))
                })
                .expect("a catalog row");
            assert_eq!(row.cuda_variant, cv.major().to_string());
            for g in &served {
                assert!(
                    row.supports_cc_on(
                        cudaup::resolve::platform(system, catalog).unwrap(),
                        &v(g.compute_capability.as_deref().unwrap()),
                        |b, g| catalog.cuda.sass_runs_on(b, g)
                    ),
                    "cuDNN {} vs {}",
                    row.version,
                    g.name
                );
            }
        }
    }
    if r.profile == Profile::Full {
        assert!(plan.component("cuda").is_some() && plan.component("torch").is_some());
    }
    if let Some(tf) = plan.component("tensorflow") {
        let release = catalog
            .tensorflow
            .release
            .iter()
            .find(|x| x.version.to_string() == *tf.version.as_ref().unwrap())
            .unwrap();
        assert!(effective >= floor(&release.cuda));
    }
    for c in &plan.components {
        assert!(!c.reason.is_empty(), "{} has a reason", c.name);
    }
}

// ---------------------------------------------------------------- Kepler

#[test]
fn k80_full_is_refused_because_no_cudnn_supports_kepler() {
    let p = plan(
        &M::linux("ubuntu", "20.04").with(K80).driver("470.256.02"),
        &req(Profile::Full),
    );
    assert_eq!(p.status, Status::Unsupported);
    assert!(
        p.reasons
            .iter()
            .any(|r| r.contains("does not support sm_37 of the Tesla K80")),
        "{:#?}",
        p.reasons
    );
}

#[test]
fn k80_pytorch_gets_the_last_wheel_with_sm37_on_its_last_branch() {
    let p = plan(
        &M::linux("ubuntu", "20.04").with(K80).driver("470.256.02"),
        &req(Profile::Pytorch),
    );
    assert_eq!(p.status, Status::Ok);
    assert_eq!(comp(&p, "driver").action, Action::Keep);
    assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cu118"));
    assert_eq!(version_of(&p, "torch"), "2.7.1");
}

#[test]
fn k40_has_no_wheel() {
    let p = plan(
        &M::ubuntu().with(K40).driver("470.256.02"),
        &req(Profile::Pytorch),
    );
    assert_eq!(p.status, Status::Unsupported);
    assert!(
        p.reasons.iter().any(|r| r.contains("no sm_35 kernels")),
        "{:#?}",
        p.reasons
    );
}

#[test]
fn k80_cuda_dev_keeps_470_with_cuda_11_4_and_says_cudnn_is_out() {
    let p = plan(
        &M::ubuntu().with(K80).driver("470.256.02"),
        &req(Profile::CudaDev),
    );
    assert_eq!(p.status, Status::Ok);
    assert_eq!(
        version_of(&p, "cuda"),
        "11.4.4",
        "the newest 11.x the 470 driver fully supports"
    );
    assert_eq!(comp(&p, "cudnn").action, Action::Skip);
    assert!(
        p.warnings.iter().any(|w| w.contains("no cuDNN")),
        "{:#?}",
        p.warnings
    );
}

#[test]
fn kepler_without_driver_gets_branch_470() {
    let p = plan(
        &M::linux("ubuntu", "20.04").with(K80),
        &req(Profile::Pytorch),
    );
    assert_eq!(p.status, Status::Ok);
    assert_eq!(comp(&p, "driver").branch, Some(470));
    assert_eq!(
        comp(&p, "driver").kernel_module,
        Some(cudaup::model::system::KernelModule::Proprietary)
    );
}

// ---------------------------------------------------------------- Maxwell, Pascal, Volta

#[test]
fn gtx_980_ti_gets_proprietary_580() {
    let p = plan(
        &M::linux("ubuntu", "22.04").with(GTX980TI),
        &req(Profile::Full),
    );
    let d = comp(&p, "driver");
    assert_eq!(d.action, Action::Install);
    assert_eq!(d.branch, Some(580));
    assert_eq!(
        d.kernel_module,
        Some(cudaup::model::system::KernelModule::Proprietary)
    );
    assert!(
        d.commands
            .iter()
            .any(|c| c.contains("nvidia-driver-580") && !c.contains("open")),
        "{:?}",
        d.commands
    );
    assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cu126"));
}

#[test]
fn gtx_1080_ti_never_gets_cu128_or_newer() {
    let p = plan(&M::ubuntu().with(GTX1080TI), &req(Profile::Full));
    assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cu126"));
    assert!(
        p.rejected
            .iter()
            .any(|r| r.contains("cu130: no sm_61 kernels for the NVIDIA GeForce GTX 1080 Ti")),
        "{:#?}",
        p.rejected
    );
    assert!(version_of(&p, "cuda").starts_with("12.6"));
}

#[test]
fn gtx_1080_ti_keeps_535_under_minor_version_compatibility() {
    let p = plan(
        &M::ubuntu().with(GTX1080TI).driver("535.129.03"),
        &req(Profile::Full),
    );
    assert_eq!(comp(&p, "driver").action, Action::Keep);
    assert!(
        p.warnings
            .iter()
            .any(|w| w.contains("minor-version compatibility")),
        "{:#?}",
        p.warnings
    );
}

#[test]
fn pascal_latest_stops_at_its_last_branch() {
    let p = plan(
        &M::ubuntu().with(GTX1080TI).driver("535.129.03"),
        &with_driver(Profile::Full, "latest"),
    );
    assert_eq!(comp(&p, "driver").branch, Some(580));
    assert_eq!(comp(&p, "driver").action, Action::Upgrade);
}

#[test]
fn v100_uses_cu126_on_current_releases() {
    let p = plan(
        &M::ubuntu().with(V100).driver("580.95.05"),
        &req(Profile::Pytorch),
    );
    assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cu126"));
}

#[test]
fn v100_with_torch_2_10_gets_cu128_which_still_had_volta() {
    let p = plan(
        &M::ubuntu().with(V100).driver("580.95.05"),
        &pinned(Profile::Pytorch, |p| p.torch = Some(pin("2.10"))),
    );
    assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cu128"));
}

#[test]
fn v100_with_torch_2_11_falls_back_to_cu126() {
    let p = plan(
        &M::ubuntu().with(V100).driver("580.95.05"),
        &pinned(Profile::Pytorch, |p| p.torch = Some(pin("2.11"))),
    );
    assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cu126"));
    assert!(
        p.rejected
            .iter()
            .any(|r| r.contains("cu128: no sm_70 kernels")),
        "{:#?}",
        p.rejected
    );
}

// ---------------------------------------------------------------- Turing, Ampere, Ada, Hopper

#[test]
fn t4_without_driver_gets_the_newest_stable_branch_open_module() {
    let p = plan(&M::ubuntu().with(T4), &req(Profile::Full));
    let d = comp(&p, "driver");
    assert_eq!(d.action, Action::Install);
    assert_eq!(
        d.kernel_module,
        Some(cudaup::model::system::KernelModule::Open)
    );
    let catalog = Catalog::embedded();
    let kind = &catalog
        .drivers
        .branch
        .iter()
        .find(|b| Some(b.branch) == d.branch)
        .unwrap()
        .kind;
    assert!(kind == "production" || kind == "lts", "{kind}");
    assert!(p.warnings.iter().any(|w| w.contains("reboot")));
}

#[test]
fn t4_on_r535_and_r550_keeps_its_driver() {
    // NVIDIA's open-module table lists the Tesla T4 only from 575; the proprietary module has
    // driven it since R410. The table decides for GPUs only the open module drives (Blackwell),
    // never for a Turing card on an older branch.
    for driver in ["535.247.01", "550.163.01", "570.195.03"] {
        let m = M::ubuntu().with(T4).driver(driver);
        for profile in [Profile::Pytorch, Profile::Jax] {
            let p = plan(&m, &with_driver(profile, "keep"));
            assert_eq!(p.status, Status::Ok, "{driver} {profile}: {:?}", p.reasons);
            assert_eq!(comp(&p, "driver").action, Action::Keep);
        }
        let auto = plan(&m, &req(Profile::Pytorch));
        assert_eq!(
            comp(&auto, "driver").action,
            Action::Keep,
            "{driver}: {auto:#?}"
        );
    }
}

#[test]
fn t4_on_a_release_whose_open_module_lacks_it_gets_the_proprietary_module() {
    let p = plan(
        &M::ubuntu().with(T4),
        &with_driver(Profile::Pytorch, "570.195.03"),
    );
    assert_eq!(p.status, Status::Ok, "{:?}", p.reasons);
    let d = comp(&p, "driver");
    assert_eq!(
        d.kernel_module,
        Some(cudaup::model::system::KernelModule::Proprietary),
        "{d:?}"
    );
    // A release whose open module lists it keeps the open one.
    let p = plan(
        &M::ubuntu().with(T4),
        &with_driver(Profile::Pytorch, "580.95.05"),
    );
    assert_eq!(
        comp(&p, "driver").kernel_module,
        Some(cudaup::model::system::KernelModule::Open)
    );
}

#[test]
fn t4_pytorch_profile_may_take_a_wheel_without_a_known_toolkit() {
    let full = plan(
        &M::ubuntu().with(T4).driver("595.58.03"),
        &req(Profile::Full),
    );
    let torch_only = plan(
        &M::ubuntu().with(T4).driver("595.58.03"),
        &req(Profile::Pytorch),
    );
    assert!(v(&version_of(&torch_only, "torch")) >= v(&version_of(&full, "torch")));
    assert!(torch_only.component("cuda").is_none());
}

#[test]
fn a100_on_550_keeps_the_driver_with_a_cuda_12_wheel() {
    let p = plan(
        &M::ubuntu().with(A100).driver("550.54.15"),
        &req(Profile::Full),
    );
    assert_eq!(comp(&p, "driver").action, Action::Keep);
    assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cu126"));
    assert!(
        p.rejected.iter().any(|r| r.contains("needs driver 580")),
        "{:#?}",
        p.rejected
    );
}

#[test]
fn rtx_3090_on_debian_with_580_gets_cuda_13() {
    let p = plan(
        &M::linux("debian", "12").with(RTX3090).driver("580.95.05"),
        &req(Profile::Full),
    );
    assert_eq!(comp(&p, "driver").action, Action::Keep);
    // Before issue 12: CUDA 13.0.2 with torch 2.14.1 (no cuDNN for 13.2 in the catalog).
    assert!(version_of(&p, "cuda").starts_with("13.2"));
    assert_eq!(comp(&p, "cudnn").cuda_variant.as_deref(), Some("13"));
}

#[test]
fn rtx_4090_runs_the_sm86_binary() {
    let p = plan(
        &M::ubuntu().with(RTX4090).driver("580.95.05"),
        &req(Profile::Pytorch),
    );
    assert!(
        p.reasons.iter().any(|r| r.contains("sm_86 SASS")),
        "{:#?}",
        p.reasons
    );
}

#[test]
fn l40s_data_center() {
    let p = plan(
        &M::linux("rocky", "9.4").with(L40S).driver("580.95.05"),
        &req(Profile::Full),
    );
    assert_eq!(p.status, Status::Ok);
}

#[test]
fn h100_on_rocky_without_driver_uses_dnf_module() {
    let p = plan(&M::linux("rocky", "9.4").with(H100), &req(Profile::Full));
    let d = comp(&p, "driver");
    assert!(
        d.commands.iter().any(
            |c| c.starts_with("sudo dnf module install -y nvidia-driver:") && c.ends_with("-open")
        ),
        "{:?}",
        d.commands
    );
}

#[test]
fn h200_machine_keeps_driver_and_toolkit() {
    let system: System =
        serde_json::from_str(include_str!("../fixtures/h200-detect.json")).unwrap();
    let catalog = Catalog::embedded();
    let p = cudaup::resolve::resolve_on(&system, &req(Profile::Full), &catalog, today());
    check_invariants(&system, &req(Profile::Full), &catalog, &p);
    assert_eq!(comp(&p, "driver").action, Action::Keep);
    assert_eq!(version_of(&p, "driver"), "580.159.04");
    // Before issue 12 the plan kept CUDA 13.0 with torch 2.14.1 cu130: the catalog had no cuDNN
    // for CUDA 13.2. Now torch 2.15.0 cu132 with CUDA 13.2 and a cuDNN built for it.
    assert_eq!(version_of(&p, "torch"), "2.15.0");
    assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cu132"));
    assert_eq!(comp(&p, "cuda").action, Action::Install);
    assert!(version_of(&p, "cuda").starts_with("13.2"));
    assert_eq!(comp(&p, "cudnn").cuda_variant.as_deref(), Some("13"));
    assert_eq!(
        comp(&p, "python").path.as_deref(),
        Some("/opt/torch/.venv/bin/python3")
    );
}

#[test]
fn cuda_dev_prefers_a_toolkit_the_driver_fully_supports() {
    let system: System =
        serde_json::from_str(include_str!("../fixtures/h200-detect.json")).unwrap();
    let catalog = Catalog::embedded();
    let p = cudaup::resolve::resolve_on(&system, &req(Profile::CudaDev), &catalog, today());
    check_invariants(&system, &req(Profile::CudaDev), &catalog, &p);
    // 13.1 would need 590.44.01; the installed 580.159.04 fully supports 13.0.
    assert!(
        version_of(&p, "cuda").starts_with("13.0"),
        "{:#?}",
        p.components
    );
    assert!(
        p.rejected.iter().any(|r| r.contains("13.1")),
        "{:#?}",
        p.rejected
    );
}

// ---------------------------------------------------------------- Blackwell

#[test]
fn b200_needs_the_open_module() {
    let p = plan(&M::ubuntu().with(B200), &req(Profile::Full));
    assert_eq!(
        comp(&p, "driver").kernel_module,
        Some(cudaup::model::system::KernelModule::Open)
    );
    assert!(comp(&p, "driver").branch.unwrap() >= 570);
}

#[test]
fn rtx_5090_on_575_keeps_it_with_cu128() {
    let p = plan(
        &M::ubuntu().with(RTX5090).driver("575.57.08"),
        &req(Profile::Full),
    );
    assert_eq!(comp(&p, "driver").action, Action::Keep);
    assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cu128"));
    assert!(version_of(&p, "cuda").starts_with("12.8"));
}

#[test]
fn rtx_5090_on_a_pre_blackwell_driver_is_upgraded() {
    let p = plan(
        &M::ubuntu().with(RTX5090).driver("560.35.03"),
        &req(Profile::Pytorch),
    );
    let d = comp(&p, "driver");
    assert_eq!(d.action, Action::Upgrade);
    assert!(d.reason.contains("cannot drive every GPU"), "{}", d.reason);
}

#[test]
fn rtx_5090_keep_policy_on_a_pre_blackwell_driver_is_refused() {
    let p = plan(
        &M::ubuntu().with(RTX5090).driver("560.35.03"),
        &with_driver(Profile::Pytorch, "keep"),
    );
    assert_eq!(p.status, Status::Unsupported);
    assert!(
        p.reasons[0].contains("needs branch 570"),
        "{:#?}",
        p.reasons
    );
}

#[test]
fn rtx_5090_with_an_old_torch_pin_is_refused_with_the_reason() {
    let p = plan(
        &M::ubuntu().with(RTX5090).driver("580.95.05"),
        &pinned(Profile::Pytorch, |p| p.torch = Some(pin("2.5"))),
    );
    assert_eq!(p.status, Status::Unsupported);
    assert!(
        p.reasons
            .iter()
            .any(|r| r.contains("no sm_120 kernels for the NVIDIA GeForce RTX 5090")),
        "{:#?}",
        p.reasons
    );
}

#[test]
fn rtx_5090_with_driver_pinned_below_blackwell_is_refused() {
    let p = plan(
        &M::ubuntu().with(RTX5090),
        &with_driver(Profile::Pytorch, "470.82.01"),
    );
    assert_eq!(p.status, Status::Unsupported);
    assert!(
        p.reasons[0].contains("needs branch 570"),
        "{:#?}",
        p.reasons
    );
}

// ---------------------------------------------------------------- mixed boxes

#[test]
fn blackwell_and_pascal_cannot_share_a_driver() {
    let p = plan(
        &M::ubuntu().with(RTX5090).with(GTX1080TI),
        &req(Profile::Full),
    );
    assert_eq!(p.status, Status::Unsupported);
    assert!(
        p.reasons[0].contains("RTX 5090") && p.reasons[0].contains("GTX 1080 Ti"),
        "{:#?}",
        p.reasons
    );
}

#[test]
fn ada_and_pascal_share_cu126_and_the_proprietary_580() {
    let p = plan(
        &M::ubuntu().with(RTX4090).with(GTX1080TI),
        &req(Profile::Full),
    );
    assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cu126"));
    assert_eq!(
        comp(&p, "driver").kernel_module,
        Some(cudaup::model::system::KernelModule::Proprietary)
    );
    assert_eq!(p.reasons.len(), 2, "both GPUs served: {:#?}", p.reasons);
}

#[test]
fn a_cuda_13_pin_leaves_the_pascal_card_out_and_says_so() {
    let p = plan(
        &M::ubuntu()
            .with(RTX4090)
            .with(GTX1080TI)
            .driver("580.95.05"),
        &pinned(Profile::Pytorch, |p| p.cuda = Some(pin("13.0"))),
    );
    assert_eq!(p.status, Status::Ok);
    assert!(
        p.warnings.iter().any(|w| w
            .starts_with("NVIDIA GeForce GTX 1080 Ti is left out of this plan: no sm_61 kernels")),
        "{:#?}",
        p.warnings
    );
}

#[test]
fn kepler_and_ampere_share_the_cu118_wheel_on_470() {
    let p = plan(
        &M::linux("ubuntu", "20.04")
            .with(K80)
            .with(RTX3090)
            .driver("470.256.02"),
        &req(Profile::Pytorch),
    );
    assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cu118"));
    assert_eq!(p.reasons.len(), 2, "{:#?}", p.reasons);
}

#[test]
fn an_unknown_gpu_is_named_and_left_out() {
    let mut m = M::ubuntu().with(RTX3090).driver("580.95.05");
    m.gpus.push(json!({"index": 1, "vendor": "nvidia", "name": "NVIDIA GPU (unknown device 10de:ffff)", "pci_id": "10de:ffff"}));
    let p = plan(&m, &req(Profile::Pytorch));
    assert_eq!(p.status, Status::Ok);
    assert!(
        p.warnings
            .iter()
            .any(|w| w.contains("10de:ffff") && w.contains("compute capability unknown")),
        "{:#?}",
        p.warnings
    );
}

// ---------------------------------------------------------------- WSL2, Windows, macOS, other vendors

#[test]
fn wsl2_keeps_the_windows_driver() {
    let p = plan(
        &M::wsl().with(RTX3090).driver("566.36"),
        &req(Profile::Full),
    );
    assert_eq!(comp(&p, "driver").action, Action::Keep);
}

#[test]
fn wsl2_with_an_old_windows_driver_keeps_it_or_says_what_to_install_on_windows() {
    let m = M::wsl().with(RTX3090).driver("512.15");
    // By default the installed driver is kept while a good stack fits it, and the plan says what
    // a newer one would bring.
    let p = plan(&m, &req(Profile::Pytorch));
    assert_eq!(comp(&p, "driver").action, Action::Keep);
    assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cu118"));
    assert!(
        p.warnings.iter().any(|w| w.contains("--driver latest")),
        "{:#?}",
        p.warnings
    );
    // --driver latest: the user is told what to install on Windows.
    let p = plan(&m, &with_driver(Profile::Pytorch, "latest"));
    let d = comp(&p, "driver");
    assert_eq!(d.action, Action::Manual);
    assert!(
        d.reason.contains("never a Linux driver inside WSL2"),
        "{}",
        d.reason
    );
    assert!(v(d.version.as_deref().unwrap()) > v("512.15"));
}

#[test]
fn wsl2_blackwell_needs_at_least_r570_on_windows() {
    let p = plan(
        &M::wsl().with(RTX5090).driver("546.01"),
        &req(Profile::Pytorch),
    );
    let d = comp(&p, "driver");
    assert_eq!(d.action, Action::Manual);
    assert!(v(d.version.as_deref().unwrap()) >= v("570"), "{d:?}");
}

#[test]
fn wsl2_without_driver_information() {
    let p = plan(&M::wsl().with(RTX4090), &req(Profile::Pytorch));
    assert_eq!(comp(&p, "driver").action, Action::Manual);
}

#[test]
fn windows_native_pytorch() {
    let p = plan(
        &M::windows().with(RTX4090).driver("581.57"),
        &req(Profile::Full),
    );
    assert_eq!(comp(&p, "driver").action, Action::Keep);
    assert!(comp(&p, "torch")
        .index_url
        .as_deref()
        .unwrap()
        .starts_with("https://download.pytorch.org/whl/cu"));
}

/// Issue 43: on native Windows the driver step is shown, never run (NVIDIA's installer; winget
/// has no display driver), the CUDA floors are the Windows column of cuda.toml, and a PyTorch
/// plan says that PyPI's Windows torch is the CPU build and takes the CUDA one from PyTorch's
/// index.
#[test]
fn windows_shows_the_driver_step_floors_from_the_windows_column_and_torch_from_pytorchs_index() {
    let catalog = Catalog::embedded();
    let floor = |major: u32| {
        let m = catalog
            .cuda
            .major
            .iter()
            .find(|m| m.major == major)
            .unwrap();
        (m.driver_linux.clone(), m.driver_windows.clone().unwrap())
    };
    // 527.41 is past CUDA 12's Linux floor (525.60.13) but short of its Windows one (528.33):
    // kept, it runs no CUDA 12 build on Windows.
    let (linux12, windows12) = floor(12);
    let old = v("527.41");
    assert!(linux12 <= old && old < windows12);
    let m = M::windows().with(RTX3090).driver("527.41");
    let p = plan(&m, &with_driver(Profile::Pytorch, "keep"));
    let torch = comp(&p, "torch");
    let variant = torch.variant.clone().unwrap();
    assert!(variant.starts_with("cu11"), "{variant}: {p:#?}");

    // A new driver: shown with the Windows floor of the planned CUDA, no command to run.
    let p = plan(&m, &with_driver(Profile::Pytorch, "latest"));
    let d = comp(&p, "driver");
    assert_eq!(d.action, Action::Manual);
    assert!(d.commands.is_empty(), "{d:?}");
    assert!(
        d.reason.contains("NVIDIA's installer") && d.reason.contains("cudaup runs nothing"),
        "{}",
        d.reason
    );
    let torch = comp(&p, "torch");
    let cuda = v(&catalog
        .pytorch
        .release
        .iter()
        .find(|r| r.version.to_string() == *torch.version.as_ref().unwrap())
        .unwrap()
        .variant
        .iter()
        .find(|x| Some(&x.name) == torch.variant.as_ref())
        .unwrap()
        .cuda
        .to_string());
    assert!(
        v(d.version.as_deref().unwrap()) >= floor(cuda.major()).1,
        "{d:?}"
    );
    assert!(
        torch
            .index_url
            .as_deref()
            .unwrap()
            .starts_with("https://download.pytorch.org/whl/cu"),
        "{torch:?}"
    );
    assert!(
        torch.reason.contains(
            "PyPI's torch for Windows is the CPU build, so this one comes from PyTorch's index"
        ),
        "{}",
        torch.reason
    );
}

#[test]
fn windows_native_tensorflow_points_to_wsl2() {
    let p = plan(
        &M::windows().with(RTX4090).driver("581.57"),
        &req(Profile::Tensorflow),
    );
    assert_eq!(p.status, Status::Unsupported);
    assert!(
        p.reasons
            .iter()
            .any(|r| r.contains("no GPU build for native Windows") && r.contains("WSL2")),
        "{:#?}",
        p.reasons
    );
}

#[test]
fn macos_is_unsupported_and_names_mps() {
    let mut m = M::ubuntu();
    m.os = json!({"family": "macos", "arch": "aarch64"});
    m.gpus
        .push(json!({"index": 0, "vendor": "apple", "name": "Apple M2 Max"}));
    let p = plan(&m, &req(Profile::Full));
    assert_eq!(p.status, Status::Unsupported);
    assert!(p.reasons[0].contains("MPS"), "{:#?}", p.reasons);
    let cpu = plan(&m, &req(Profile::Cpu));
    assert_eq!(cpu.status, Status::Ok);
    assert_eq!(
        comp(&cpu, "torch").index_url.as_deref(),
        Some("https://pypi.org/simple")
    );
}

#[test]
fn amd_and_intel_get_honest_alternatives() {
    let mut m = M::ubuntu();
    m.gpus.push(
        json!({"index": 0, "vendor": "amd", "name": "AMD GPU (1002:73bf)", "pci_id": "1002:73bf"}),
    );
    let p = plan(&m, &req(Profile::Full));
    assert_eq!(p.status, Status::Unsupported);
    assert!(
        p.reasons.iter().any(|r| r.contains("ROCm")),
        "{:#?}",
        p.reasons
    );
    m.gpus[0] = json!({"index": 0, "vendor": "intel", "name": "Intel GPU (8086:56a0)"});
    let p = plan(&m, &req(Profile::Full));
    assert!(
        p.reasons.iter().any(|r| r.contains("XPU")),
        "{:#?}",
        p.reasons
    );
}

#[test]
fn no_gpu_cpu_profile_plans_the_cpu_wheel() {
    let p = plan(&M::ubuntu(), &req(Profile::Cpu));
    assert_eq!(p.status, Status::Ok);
    assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cpu"));
    assert_eq!(
        comp(&p, "torch").index_url.as_deref(),
        Some("https://download.pytorch.org/whl/cpu")
    );
    let gpu_profile = plan(&M::ubuntu(), &req(Profile::Full));
    assert_eq!(gpu_profile.status, Status::Unsupported);
    assert!(gpu_profile
        .reasons
        .iter()
        .any(|r| r.contains("--profile cpu")));
}

// ---------------------------------------------------------------- TensorFlow

#[test]
fn tensorflow_on_ampere() {
    let p = plan(
        &M::ubuntu().with(RTX3090).driver("535.129.03"),
        &req(Profile::Tensorflow),
    );
    assert_eq!(p.status, Status::Ok);
    let tf = comp(&p, "tensorflow");
    assert_eq!(tf.action, Action::Install);
    assert!(p.component("torch").is_none() && p.component("cuda").is_none());
}

#[test]
fn tensorflow_on_blackwell_runs_through_ptx_jit() {
    let p = plan(
        &M::ubuntu().with(RTX5090).driver("580.95.05"),
        &req(Profile::Tensorflow),
    );
    assert_eq!(p.status, Status::Ok);
    assert!(
        p.warnings.iter().any(|w| w.contains("PTX JIT")),
        "{:#?}",
        p.warnings
    );
}

#[test]
fn tensorflow_on_kepler_is_refused() {
    let p = plan(
        &M::ubuntu().with(K80).driver("470.256.02"),
        &req(Profile::Tensorflow),
    );
    assert_eq!(p.status, Status::Unsupported);
}

// ---------------------------------------------------------------- pins

#[test]
fn python_pin_picks_the_newest_torch_that_supports_it() {
    let p = plan(
        &M::ubuntu()
            .with(RTX3090)
            .driver("580.95.05")
            .python("3.9.18"),
        &pinned(Profile::Pytorch, |p| p.python = Some(pin("3.9"))),
    );
    assert_eq!(comp(&p, "python").action, Action::Keep);
    let catalog = Catalog::embedded();
    let newest_for_39 = catalog
        .pytorch
        .release
        .iter()
        .filter(|r| r.python_min <= v("3.9"))
        .map(|r| r.version.clone())
        .max()
        .unwrap();
    assert_eq!(v(&version_of(&p, "torch")), newest_for_39);
}

#[test]
fn no_python_in_range_means_installing_one() {
    let p = plan(
        &M::ubuntu()
            .with(RTX3090)
            .driver("580.95.05")
            .python("3.8.10"),
        &req(Profile::Pytorch),
    );
    assert_eq!(comp(&p, "python").action, Action::Install);
    assert!(comp(&p, "python").reason.contains("uv python install"));
}

#[test]
fn a_machine_described_by_os_and_gpus_only() {
    let p = plan(&M::ubuntu().with(RTX3090).no_python(), &req(Profile::Full));
    assert_eq!(p.status, Status::Ok);
    assert_eq!(comp(&p, "driver").action, Action::Install);
}

#[test]
fn cuda_pin_selects_toolkit_and_wheel() {
    let p = plan(
        &M::ubuntu().with(RTX3090).driver("580.95.05"),
        &pinned(Profile::Full, |p| p.cuda = Some(pin("12.8"))),
    );
    assert!(version_of(&p, "cuda").starts_with("12.8"));
    assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cu128"));
}

#[test]
fn cudnn_pin() {
    let p = plan(
        &M::ubuntu().with(RTX4090).driver("580.95.05"),
        &pinned(Profile::Full, |p| {
            p.cudnn = Some(pin("9.10"));
            p.cuda = Some(pin("12"));
        }),
    );
    assert!(
        version_of(&p, "cudnn").starts_with("9.10"),
        "{:#?}",
        p.components
    );
}

#[test]
fn exact_driver_version_pin_is_installed() {
    let p = plan(
        &M::ubuntu().with(RTX3090).driver("535.129.03"),
        &with_driver(Profile::Pytorch, "575.57.08"),
    );
    let d = comp(&p, "driver");
    assert_eq!(d.action, Action::Upgrade);
    assert_eq!(d.version.as_deref(), Some("575.57.08"));
    assert_eq!(d.branch, Some(575));
}

#[test]
fn fedora_arch_and_debian_commands_come_from_the_catalog() {
    let fedora = plan(
        &M::linux("fedora", "40").with(RTX4090),
        &req(Profile::Pytorch),
    );
    assert!(
        comp(&fedora, "driver")
            .commands
            .iter()
            .any(|c| c.starts_with("sudo dnf install -y")),
        "{:?}",
        comp(&fedora, "driver").commands
    );
    let arch = plan(&M::linux("arch", "").with(RTX4090), &req(Profile::Pytorch));
    assert!(
        comp(&arch, "driver")
            .commands
            .iter()
            .any(|c| c.contains("NVIDIA-Linux-x86_64-") && c.contains("--kernel-module-type=open")),
        "{:?}",
        comp(&arch, "driver").commands
    );
    let debian = plan(
        &M::linux("debian", "12").with(RTX4090),
        &req(Profile::Pytorch),
    );
    assert!(!comp(&debian, "driver").commands.is_empty());
}

#[test]
fn secure_boot_and_nouveau_are_warned_about_when_the_driver_changes() {
    let mut m = M::ubuntu().with(RTX4090);
    m.os["secure_boot"] = json!(true);
    let mut system = m.system();
    system.nouveau_loaded = true;
    let p = cudaup::resolve::resolve_on(
        &system,
        &req(Profile::Pytorch),
        &Catalog::embedded(),
        today(),
    );
    assert!(
        p.warnings.iter().any(|w| w.contains("Secure Boot")),
        "{:#?}",
        p.warnings
    );
    assert!(
        p.warnings.iter().any(|w| w.contains("nouveau")),
        "{:#?}",
        p.warnings
    );
}

// ---------------------------------------------------------------- the command line

#[test]
fn plan_json_has_the_contract_shape() {
    let home = tempfile::tempdir().unwrap();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/h200-detect.json"
    );
    let run = cudaup(&["plan", "--system", fixture, "--json"], home.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    let mut keys: Vec<&str> = j.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "catalog",
            "components",
            "constraints",
            "framework_route",
            "profile",
            "profile_offered",
            "reasons",
            "status",
            "toolkit_components",
            "warnings"
        ]
    );
    // No profile was chosen: the machine's offer, and why (issue 37).
    assert_eq!(j["profile_offered"], "an NVIDIA GPU a full stack fits");
    assert_eq!(j["toolkit_components"]["set"], "standard");
    assert_eq!(j["catalog"]["origin"], "embedded");
    assert!(j["catalog"]["date"].as_str().unwrap().starts_with("20"));
    assert!(j["constraints"].is_array());
    assert_eq!(j["status"], "ok");
    assert_eq!(j["profile"], "full");
    for c in j["components"].as_array().unwrap() {
        for k in ["name", "action", "version", "reason"] {
            assert!(c.get(k).is_some(), "{k} missing in {c}");
        }
        assert!(["keep", "install", "upgrade", "skip", "manual"]
            .contains(&c["action"].as_str().unwrap()));
    }
    let torch = j["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "torch")
        .unwrap();
    assert!(torch["index_url"]
        .as_str()
        .unwrap()
        .starts_with("https://download.pytorch.org/whl/cu13"));
    assert!(torch["variant"].is_string());
}

#[test]
fn unsupported_exits_5_and_explains() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("mac.json");
    fs_err::write(
        &file,
        r#"{"os": {"family": "macos", "arch": "aarch64"}, "gpus": []}"#,
    )
    .unwrap();
    let f = file.display().to_string();
    let run = cudaup(&["plan", "--system", &f, "--profile", "full"], home.path());
    assert_eq!(run.code, 5);
    assert!(run.stdout.contains("No full stack"), "{}", run.stdout);
    let json = cudaup(
        &["plan", "--system", &f, "--profile", "full", "--json"],
        home.path(),
    );
    assert_eq!(json.code, 5);
    assert_eq!(json.json()["status"], "unsupported");
    // With no profile chosen, this machine is offered what works on it (issue 37).
    let run = cudaup(&["plan", "--system", &f], home.path());
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stdout
            .starts_with("profile cpu: this machine's default (no NVIDIA GPU here"),
        "{}",
        run.stdout
    );
}

#[test]
fn verbose_lists_rejected_alternatives() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("pascal.json");
    let m = M::ubuntu().with(GTX1080TI).driver("580.95.05");
    fs_err::write(&file, serde_json::to_string(&m.system()).unwrap()).unwrap();
    let run = cudaup(
        &["plan", "--system", &file.display().to_string(), "-v"],
        home.path(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("Rejected alternatives"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("no sm_61 kernels for the NVIDIA GeForce GTX 1080 Ti"),
        "{}",
        run.stdout
    );
}

#[test]
fn bad_inputs_are_usage_errors() {
    let home = tempfile::tempdir().unwrap();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/h200-detect.json"
    );
    let run = cudaup(
        &["plan", "--system", fixture, "--driver", "newest"],
        home.path(),
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("not a driver policy"), "{}", run.stderr);
    let run = cudaup(
        &["plan", "--system", fixture, "--torch", "two"],
        home.path(),
    );
    assert_eq!(run.code, 2);
    let broken = home.path().join("broken.json");
    fs_err::write(
        &broken,
        "{\"os\": {\"family\": \"linux\"},\n \"gpus\": [oops]}",
    )
    .unwrap();
    let run = cudaup(
        &["plan", "--system", &broken.display().to_string()],
        home.path(),
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("broken.json") && run.stderr.contains("line 2"),
        "{}",
        run.stderr
    );
    let run = cudaup(
        &["plan", "--system", "/nonexistent/system.json"],
        home.path(),
    );
    assert_eq!(run.code, 2);
    let run = cudaup(&["plan", "--profile", "gaming"], home.path());
    assert_eq!(run.code, 2);
}

#[test]
fn manifests_check_cli() {
    let home = tempfile::tempdir().unwrap();
    let run = cudaup(&["manifests", "check"], home.path());
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.stdout.contains("no problems"));
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in cudaup::catalog::EMBEDDED {
        fs_err::write(dir.path().join(name), text).unwrap();
    }
    fs_err::write(dir.path().join("pytorch.toml"), "schema_version = 1\n\n[[release]]\nversion = \"2.99.0\"\npython_min = \"3.10\"\npython_max = \"3.14\"\npypi_default = \"cu999\"\nsource = \"https://example.invalid/\"\n").unwrap();
    let run = cudaup(
        &["manifests", "check", &dir.path().display().to_string()],
        home.path(),
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stdout.contains(
            "pytorch.toml:4: torch 2.99.0: pypi_default `cu999` is not one of its variants"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn manifests_dir_replaces_the_embedded_catalog() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in cudaup::catalog::EMBEDDED {
        fs_err::write(dir.path().join(name), text).unwrap();
    }
    // Keep only the releases up to 2.8 in this catalog.
    let torch = fs_err::read_to_string(dir.path().join("pytorch.toml")).unwrap();
    let mut chunks = torch.split("\n[[release]]\n");
    let mut kept = chunks.next().unwrap().to_owned();
    for chunk in chunks {
        let old = [
            "2.0.", "2.1.", "2.2.", "2.3.", "2.4.", "2.5.", "2.6.", "2.7.", "2.8.",
        ];
        if old
            .iter()
            .any(|v| chunk.starts_with(&format!("version = \"{v}")))
        {
            kept.push_str("\n[[release]]\n");
            kept.push_str(chunk);
        }
    }
    fs_err::write(dir.path().join("pytorch.toml"), kept).unwrap();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/h200-detect.json"
    );
    let dir_arg = dir.path().display().to_string();
    for run in [
        cudaup(
            &[
                "--manifests",
                &dir_arg,
                "plan",
                "--system",
                fixture,
                "--profile",
                "pytorch",
                "--json",
            ],
            home.path(),
        ),
        cudaup_env(
            &[
                "plan",
                "--system",
                fixture,
                "--profile",
                "pytorch",
                "--json",
            ],
            home.path(),
            &[("CUDAUP_MANIFESTS", &dir_arg)],
        ),
    ] {
        assert_eq!(run.code, 0, "{}", run.stderr);
        let j = run.json();
        let torch = j["components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "torch")
            .unwrap()
            .clone();
        assert_eq!(torch["version"], "2.8.0", "{torch}");
    }
}

// ---------------------------------------------------------------- issue 12: the catalog of 2026-12
// Each test names the fact of shared/reference/compat-2026-12.md it covers and, where the plan
// changed, what it was before.

const A100_PCIE: (&str, &str, &str) = ("NVIDIA A100 80GB PCIe", "8.0", "Ampere");
const H200: (&str, &str, &str) = ("NVIDIA H200", "9.0", "Hopper");
const B300: (&str, &str, &str) = ("NVIDIA B300 SXM6 AC", "10.3", "Blackwell");
const RUBIN: (&str, &str, &str) = ("NVIDIA GPU (10de:ffff)", "10.7", "Rubin");

fn branch_of(p: &Plan) -> u32 {
    comp(p, "driver").branch.unwrap()
}

/// #2: the full profile on every current CUDA-13 GPU. Before: torch 2.14.1 / CUDA 13.0.2 /
/// cuDNN 9.17.0, with "torch 2.15.0 cu132: no cuDNN build in the catalog for CUDA 13.2".
#[test]
fn full_profile_on_current_gpus_gets_torch_2_15_cu132_with_a_cudnn_for_cuda_13_2() {
    for g in [RTX4090, RTX5090, H200, A100] {
        for driver in ["580.95.05", "595.71.05"] {
            let p = plan(&M::ubuntu().with(g).driver(driver), &req(Profile::Full));
            assert_eq!(version_of(&p, "torch"), "2.15.0", "{} on {driver}", g.0);
            assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cu132"));
            assert!(version_of(&p, "cuda").starts_with("13.2"), "{p:#?}");
            let cudnn = comp(&p, "cudnn");
            assert_eq!(cudnn.cuda_variant.as_deref(), Some("13"));
            assert!(
                v(cudnn.version.as_deref().unwrap()) >= v("9.28"),
                "{cudnn:?}"
            );
            assert!(
                !p.rejected.iter().any(|r| r.contains("no cuDNN build")),
                "{:#?}",
                p.rejected
            );
        }
    }
}

/// #2: cuda-dev on a 595 driver, and on a machine without a GPU. Before: CUDA 13.2.2 / 13.3
/// with no cuDNN at all.
#[test]
fn cuda_dev_on_595_and_without_a_gpu_gets_a_cudnn() {
    let p = plan(
        &M::ubuntu().with(RTX4090).driver("595.71.05"),
        &req(Profile::CudaDev),
    );
    assert!(version_of(&p, "cuda").starts_with("13.2"), "{p:#?}");
    assert_eq!(comp(&p, "cudnn").action, Action::Install);
    assert_eq!(comp(&p, "cudnn").cuda_variant.as_deref(), Some("13"));
    let p = plan(&M::ubuntu(), &req(Profile::CudaDev));
    assert_eq!(p.status, Status::Ok);
    // No driver to be compatible with: the newest series with build targets, 13.5 (its
    // compiler's list, read from the nvidia-cuda-nvcc 13.5.37 wheel).
    assert_eq!(version_of(&p, "cuda"), "13.5.0");
    assert_eq!(comp(&p, "cudnn").action, Action::Install, "{p:#?}");
}

/// #2: `--cudnn` is never silently dropped: an unknown one is refused, a known one honoured.
#[test]
fn a_cudnn_pin_is_honoured_or_refused_never_ignored() {
    let m = M::ubuntu().with(RTX4090).driver("595.71.05");
    let p = plan(
        &m,
        &pinned(Profile::CudaDev, |p| p.cudnn = Some(pin("9.99"))),
    );
    assert_eq!(p.status, Status::Unsupported);
    assert!(
        p.reasons.iter().any(|r| r.contains("cuDNN 9.99")),
        "{:#?}",
        p.reasons
    );
    let p = plan(
        &m,
        &pinned(Profile::CudaDev, |p| p.cudnn = Some(pin("9.20"))),
    );
    assert!(version_of(&p, "cudnn").starts_with("9.20"), "{p:#?}");
    // The pytorch profile takes the cuDNN torch's wheel pins: the pin picks the release.
    let p = plan(
        &m,
        &pinned(Profile::Pytorch, |p| p.cudnn = Some(pin("9.24"))),
    );
    assert_eq!(version_of(&p, "torch"), "2.14.1", "{p:#?}");
}

/// #6: `--cuda 13.0` gives 13.0.3 (before: 13.0.2), on any driver of the 13.0 series.
#[test]
fn cuda_13_0_pin_gives_13_0_3() {
    for driver in ["580.95.05", "580.159.04"] {
        let p = plan(
            &M::ubuntu().with(RTX4090).driver(driver),
            &pinned(Profile::CudaDev, |p| p.cuda = Some(pin("13.0"))),
        );
        assert_eq!(version_of(&p, "cuda"), "13.0.3", "{driver}: {p:#?}");
        assert!(
            !p.warnings.iter().any(|w| w.contains("minor-version")),
            "a release of a series the driver supports: {:#?}",
            p.warnings
        );
    }
    let p = plan(
        &M::ubuntu().with(H100).driver("580.95.05"),
        &pinned(Profile::Full, |p| p.cuda = Some(pin("13.0"))),
    );
    assert_eq!(version_of(&p, "cuda"), "13.0.3");
    assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cu130"));
}

/// #6, #7: 13.4 bundles no driver; its GA is 13.4.1 and 13.4.2 is Update 1, and on R615 it is
/// fully supported while on R580 it runs through minor-version compatibility.
#[test]
fn cuda_13_4_has_no_bundled_driver_and_its_labels_are_nvidias() {
    let c = Catalog::embedded();
    let r = |ver: &str| c.cuda.release.iter().find(|r| r.version == v(ver)).unwrap();
    assert_eq!(r("13.4.1").label.as_deref(), Some("13.4 GA"));
    assert_eq!(r("13.4.2").label.as_deref(), Some("13.4 Update 1"));
    assert!(r("13.4.1").driver_linux.is_none() && r("13.4.1").recommended_branch == Some(615));
    for ver in ["12.8.2", "12.9.2", "13.0.3", "13.1.2", "13.3.1", "13.5.0"] {
        r(ver);
    }
    let pin = |p: &mut Pins| p.cuda = Some(pin("13.4"));
    let on_615 = plan(
        &M::ubuntu().with(RTX4090).driver("615.71.09"),
        &pinned(Profile::CudaDev, pin),
    );
    assert_eq!(version_of(&on_615, "cuda"), "13.4.2");
    assert!(
        !on_615
            .warnings
            .iter()
            .any(|w| w.contains("bundles no driver")),
        "{:#?}",
        on_615.warnings
    );
    let on_580 = plan(
        &M::ubuntu().with(RTX4090).driver("580.95.05"),
        &pinned(Profile::CudaDev, pin),
    );
    assert_eq!(version_of(&on_580, "cuda"), "13.4.2");
    assert!(
        on_580
            .warnings
            .iter()
            .any(|w| w.contains("bundles no driver") && w.contains("branch 615")),
        "{:#?}",
        on_580.warnings
    );
    // 13.5's targets come from its own compiler: a pin is planned.
    let p = plan(
        &M::ubuntu().with(RTX4090),
        &pinned(Profile::CudaDev, |p| {
            p.cuda = Some(cudaup::model::version::VersionPin::parse("13.5").unwrap())
        }),
    );
    assert_eq!(version_of(&p, "cuda"), "13.5.0", "{p:#?}");
}

/// #8: sm_107 (Rubin) builds only from 13.4; R615 is its first branch.
#[test]
fn rubin_needs_cuda_13_4_and_r615() {
    // 13.4 or newer: the R620 driver planned for a data-center GPU runs 13.5 natively.
    let p = plan(&M::ubuntu().with(RUBIN), &req(Profile::CudaDev));
    let cuda = Version::parse(&version_of(&p, "cuda")).unwrap();
    assert!(cuda >= Version::parse("13.4").unwrap(), "{p:#?}");
    assert!(branch_of(&p) >= 615, "{p:#?}");
    let p = plan(
        &M::ubuntu().with(RUBIN),
        &pinned(Profile::CudaDev, |p| p.cuda = Some(pin("13.3"))),
    );
    assert_eq!(p.status, Status::Unsupported);
    assert!(
        p.reasons.iter().any(|r| r.contains("sm_107")),
        "{:#?}",
        p.reasons
    );
    let p = plan(
        &M::ubuntu().with(RUBIN).driver("610.43.02"),
        &with_driver(Profile::CudaDev, "keep"),
    );
    assert_eq!(p.status, Status::Unsupported);
    assert!(
        p.reasons[0].contains("needs branch 615"),
        "{:#?}",
        p.reasons
    );
}

/// #9, #10, #11: 615 is a new-feature branch with open modules only; 620 LTS can be planned, and
/// data-center GPUs get it (LTS), GeForce the production branch.
#[test]
fn branches_615_and_620_and_who_gets_which() {
    let c = Catalog::embedded();
    let b = |n: u32| c.drivers.branch(n).unwrap();
    assert_eq!(b(615).kind, "new-feature");
    assert!(b(615).open_only && b(620).open_only);
    let a100 = plan(&M::ubuntu().with(A100_PCIE), &req(Profile::Full));
    assert_eq!(branch_of(&a100), 620, "{a100:#?}");
    let d = comp(&a100, "driver");
    assert!(
        d.reason.contains("lts") && d.reason.contains("data-center"),
        "{}",
        d.reason
    );
    assert!(
        d.commands.iter().any(|c| c.contains("nvidia-open")),
        "{:?}",
        d.commands
    );
    let geforce = plan(&M::ubuntu().with(RTX4090), &req(Profile::Full));
    assert_eq!(branch_of(&geforce), 595, "{geforce:#?}");
    assert_eq!(
        version_of(&geforce, "driver"),
        "595.91.07",
        "the newest cited 595 release"
    );
    // No proprietary package on an open-only branch.
    let p = plan(
        &M::ubuntu().with(RTX4090),
        &with_driver(Profile::Pytorch, "615.71.09"),
    );
    let cmds = &comp(&p, "driver").commands;
    assert!(
        cmds.iter().any(|c| c.ends_with("nvidia-open"))
            && !cmds.iter().any(|c| c.contains("cuda-drivers")),
        "{cmds:?}"
    );
    // `latest` takes the newest supported branch.
    let p = plan(
        &M::ubuntu().with(RTX4090),
        &with_driver(Profile::Pytorch, "latest"),
    );
    assert_eq!(branch_of(&p), 620);
}

/// #12: kept drivers past end of life are named; 535 (June 2026), 570 (February 2026) and 610
/// (August 2026). Before: kept silently.
#[test]
fn end_of_life_branches_are_warned_about_when_kept() {
    for (g, driver, month) in [
        (GTX1080TI, "535.129.03", "June 2026"),
        (A100, "570.124.06", "February 2026"),
        (RTX4090, "610.43.02", "August 2026"),
    ] {
        let p = plan(&M::ubuntu().with(g).driver(driver), &req(Profile::Pytorch));
        assert_eq!(comp(&p, "driver").action, Action::Keep, "{p:#?}");
        let w = p
            .warnings
            .iter()
            .find(|w| w.contains("end of life"))
            .unwrap_or_else(|| panic!("{driver}: {:#?}", p.warnings));
        assert!(w.contains(month) && w.contains("--driver"), "{w}");
    }
    // A supported branch is not warned about.
    let p = plan(
        &M::ubuntu().with(RTX4090).driver("580.95.05"),
        &req(Profile::Pytorch),
    );
    assert!(
        !p.warnings.iter().any(|w| w.contains("end of life")),
        "{:#?}",
        p.warnings
    );
    // Installing never picks an ended branch while a supported one serves the GPUs.
    let p = plan(
        &M::ubuntu().with(RTX4090).driver("535.129.03"),
        &with_driver(Profile::Pytorch, "latest"),
    );
    let c = Catalog::embedded();
    assert!(!c.drivers.branch(branch_of(&p)).unwrap().ended(&today()));
}

/// #16: per-GPU floors: HGX B200 needs 570.133.20; B300 (10.3) 580.82.07, the first release
/// whose supported-GPU table lists it (issue 34).
#[test]
fn b200_on_570_86_is_flagged_and_b300_needs_580_82_07() {
    let m = M::ubuntu().with(B200).driver("570.86.15");
    let p = plan(&m, &req(Profile::Pytorch));
    assert_ne!(comp(&p, "driver").action, Action::Keep, "{p:#?}");
    assert!(
        p.warnings
            .iter()
            .any(|w| w.contains("570.86.15") && w.contains("570.133.20")),
        "{:#?}",
        p.warnings
    );
    let p = plan(&m, &with_driver(Profile::Pytorch, "keep"));
    assert_eq!(p.status, Status::Unsupported);
    assert!(p.reasons[0].contains("570.133.20"), "{:#?}", p.reasons);
    // A B200 on a new enough 570 is kept (and told 570 ended).
    let p = plan(
        &M::ubuntu().with(B200).driver("570.211.01"),
        &req(Profile::Pytorch),
    );
    assert_eq!(comp(&p, "driver").action, Action::Keep);
    let p = plan(
        &M::ubuntu().with(B300).driver("570.211.01"),
        &with_driver(Profile::Pytorch, "keep"),
    );
    assert_eq!(p.status, Status::Unsupported);
    assert!(p.reasons[0].contains("580.82.07"), "{:#?}", p.reasons);
    // gpus.toml knows the B300's PCI id.
    let c = Catalog::embedded();
    assert_eq!(
        c.gpus.lookup("10de:3182").unwrap().compute_capability,
        "10.3"
    );
}

/// #1: TensorFlow 2.20+ floats cuDNN; on a GTX 1080 Ti the plan bounds it below 9.11 (from the
/// cuDNN rows' GPU lists). Before: TF 2.21.0 "brings cuDNN 9.3" and pip took 9.28.
#[test]
fn gtx_1080_ti_tensorflow_gets_a_cudnn_constraint() {
    let p = plan(
        &M::ubuntu().with(GTX1080TI).driver("580.95.05"),
        &req(Profile::Tensorflow),
    );
    assert_eq!(version_of(&p, "tensorflow"), "2.21.0");
    assert_eq!(p.constraints.len(), 1, "{:#?}", p.constraints);
    assert_eq!(p.constraints[0].requirement, "nvidia-cudnn-cu12<9.11");
    assert!(
        p.constraints[0].reason.contains("sm_61"),
        "{}",
        p.constraints[0].reason
    );
    assert!(
        comp(&p, "tensorflow").reason.contains("9.10.2"),
        "{}",
        comp(&p, "tensorflow").reason
    );
    // A Turing-or-newer GPU needs no bound.
    let p = plan(
        &M::ubuntu().with(RTX3090).driver("580.95.05"),
        &req(Profile::Tensorflow),
    );
    assert!(p.constraints.is_empty(), "{:#?}", p.constraints);
    // TF releases that pin cuDNN exactly need none either.
    let p = plan(
        &M::ubuntu().with(GTX1080TI).driver("580.95.05"),
        &pinned(Profile::Tensorflow, |p| p.tensorflow = Some(pin("2.19"))),
    );
    assert!(p.constraints.is_empty());
    assert!(comp(&p, "tensorflow")
        .reason
        .contains("pins cuDNN 9.3.0.75"));
}

/// #14: TensorFlow patch releases are what users get. 2.15 - 2.17 pin cuDNN 8.9.4.25 / 8.9.7.29,
/// which the catalog has no row for: whether they have code for the GPU is unknown, so the plan
/// refuses them and says so (issue 34), never counting them as fitting.
#[test]
fn tensorflow_patch_releases_are_planned() {
    for (pin, want) in [
        ("2.15", None),
        ("2.16", None),
        ("2.17", None),
        ("2.18", Some("2.18.1")),
        ("2.19", Some("2.19.1")),
    ] {
        let p = plan(
            &M::ubuntu()
                .with(RTX3090)
                .driver("580.95.05")
                .python("3.11.9"),
            &pinned(Profile::Tensorflow, |p| {
                p.tensorflow = Some(cudaup::model::version::VersionPin::parse(pin).unwrap())
            }),
        );
        match want {
            Some(want) => assert_eq!(version_of(&p, "tensorflow"), want),
            None => {
                assert_eq!(p.status, Status::Unsupported, "{p:#?}");
                assert!(
                    p.reasons
                        .join("\n")
                        .contains("which the catalog has no row for"),
                    "{:#?}",
                    p.reasons
                );
            }
        }
    }
}

/// #5 and the torch 2.15 facts: Python 3.11-3.15, no CUDA 12 wheels, companions from PyPI.
#[test]
fn torch_2_15_facts() {
    let m = M::ubuntu().with(RTX4090).driver("580.95.05");
    let p = plan(&m, &req(Profile::Pytorch));
    let tv = comp(&p, "torchvision");
    assert_eq!(tv.version.as_deref(), Some("0.29.2"));
    assert_eq!(tv.variant, None, "no `+cu132` tag: PyPI's build");
    assert!(tv.reason.contains("not confirmed"), "{}", tv.reason);
    let p = plan(
        &m.python("3.10.12"),
        &pinned(Profile::Pytorch, |p| p.torch = Some(pin("2.15"))),
    );
    assert_eq!(
        comp(&p, "python").action,
        Action::Install,
        "Python 3.10 is dropped in 2.15"
    );
    // Pascal tops out at torch 2.14.x cu126.
    let p = plan(
        &M::ubuntu().with(GTX1080TI).driver("580.95.05"),
        &req(Profile::Pytorch),
    );
    assert_eq!(version_of(&p, "torch"), "2.14.1");
    assert!(
        p.rejected
            .iter()
            .any(|r| r.contains("2.15.0 cu132: no sm_61")),
        "{:#?}",
        p.rejected
    );
}

/// The plan names its catalog and warns when the catalog is older than 90 days.
#[test]
fn a_stale_catalog_is_named_in_the_plan() {
    let catalog = Catalog::embedded();
    let system = M::ubuntu().with(RTX4090).driver("580.95.05").system();
    let fresh = cudaup::resolve::resolve_on(&system, &req(Profile::Pytorch), &catalog, today());
    assert_eq!(fresh.catalog.date, "2026-12-01");
    assert_eq!(fresh.catalog.origin, "embedded");
    assert!(!fresh
        .warnings
        .iter()
        .any(|w| w.contains("manifests update")));
    let later = Date::from_days(today().days() + 91);
    let stale = cudaup::resolve::resolve_on(&system, &req(Profile::Pytorch), &catalog, later);
    assert_eq!(stale.catalog.age_days, 91);
    assert!(
        stale
            .warnings
            .iter()
            .any(|w| w.contains("91 days old") && w.contains("cudaup manifests update")),
        "{:#?}",
        stale.warnings
    );
}

/// The human plan shows the constraints and the catalog's date.
#[test]
fn human_plan_lists_constraints_and_the_catalog() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("pascal.json");
    let m = M::ubuntu().with(GTX1080TI).driver("580.95.05");
    fs_err::write(&file, serde_json::to_string(&m.system()).unwrap()).unwrap();
    let run = cudaup(
        &[
            "plan",
            "--system",
            &file.display().to_string(),
            "--profile",
            "tensorflow",
        ],
        home.path(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("Constraints"), "{}", run.stdout);
    assert!(
        run.stdout.contains("nvidia-cudnn-cu12<9.11"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("catalog: embedded, 2026-12-01"),
        "{}",
        run.stdout
    );
    let run = cudaup(
        &[
            "plan",
            "--system",
            &file.display().to_string(),
            "--profile",
            "tensorflow",
            "--json",
        ],
        home.path(),
    );
    assert_eq!(
        run.json()["constraints"][0]["requirement"],
        "nvidia-cudnn-cu12<9.11"
    );
    // An unknown cuDNN pin exits 5; a cuDNN pin on the cpu profile is a usage error.
    let run = cudaup(
        &[
            "plan",
            "--system",
            &file.display().to_string(),
            "--profile",
            "cuda-dev",
            "--cudnn",
            "9.99",
        ],
        home.path(),
    );
    assert_eq!(run.code, 5, "{}", run.stdout);
    let run = cudaup(
        &["plan", "--profile", "cpu", "--cudnn", "9.10"],
        home.path(),
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
}

/// Linux aarch64 machines (GH200, GB200/GB300, DGX Spark, Jetson): every fact comes from the
/// catalog's linux-sbsa rows; an x86_64 row never decides one of these plans.
mod aarch64 {
    use super::*;

    const GH200: (&str, &str, &str) = ("NVIDIA GH200 480GB", "9.0", "Hopper");
    const GB200: (&str, &str, &str) = ("NVIDIA GB200", "10.0", "Blackwell");
    const GB300: (&str, &str, &str) = ("NVIDIA GB300", "10.3", "Blackwell");
    const GB10: (&str, &str, &str) = ("NVIDIA GB10", "12.1", "Blackwell");

    fn arm() -> M {
        let mut m = M::ubuntu();
        m.os["arch"] = json!("aarch64");
        m
    }

    fn torch_variant<'c>(catalog: &'c Catalog, p: &Plan) -> &'c cudaup::catalog::TorchVariant {
        let t = comp(p, "torch");
        let release = catalog
            .pytorch
            .release
            .iter()
            .find(|r| Some(r.version.to_string()) == t.version)
            .unwrap();
        release
            .variants_for("linux-sbsa")
            .into_iter()
            .find(|v| Some(&v.name) == t.variant.as_ref())
            .expect("the planned variant is a linux-sbsa row")
    }

    #[test]
    fn gh200_full_plans_sbsa_rows_and_the_open_module() {
        let m = arm().with(GH200);
        let p = plan(&m, &req(Profile::Full));
        assert_eq!(p.status, Status::Ok, "{:#?}", p.reasons);
        let catalog = Catalog::embedded();
        let v = torch_variant(&catalog, &p);
        assert!(
            v.arch_list.contains(&super::v("11.0")),
            "an aarch64 arch list"
        );
        assert!(
            p.reasons.iter().any(|r| r.contains("sm_90 SASS")),
            "{:#?}",
            p.reasons
        );
        // The toolkit is a release NVIDIA publishes for linux-sbsa, with a cuDNN build for it.
        let cuda = version_of(&p, "cuda");
        let r = catalog
            .cuda
            .release
            .iter()
            .find(|r| r.version.to_string() == cuda)
            .unwrap();
        assert!(r.on_platform("linux-sbsa"), "CUDA {cuda}");
        let cudnn = comp(&p, "cudnn");
        assert!(catalog
            .cudnn
            .release
            .iter()
            .any(|x| Some(x.version.to_string()) == cudnn.version && x.on_platform("linux-sbsa")));
        // Grace Hopper is supported only with NVIDIA's open kernel modules.
        let d = comp(&p, "driver");
        assert_eq!(
            d.kernel_module,
            Some(cudaup::model::system::KernelModule::Open),
            "{d:?}"
        );
        assert!(
            d.commands.iter().any(|c| c.ends_with("nvidia-open")),
            "{:?}",
            d.commands
        );
    }

    #[test]
    fn gb200_and_gb300_run_sm100_sass_of_the_aarch64_wheel() {
        for g in [GB200, GB300] {
            let p = plan(&arm().with(g).driver("580.95.05"), &req(Profile::Pytorch));
            assert_eq!(p.status, Status::Ok, "{}: {:#?}", g.0, p.reasons);
            assert!(
                p.reasons.iter().any(|r| r.contains("sm_100 SASS")),
                "{}: {:#?}",
                g.0,
                p.reasons
            );
        }
    }

    #[test]
    fn gb10_runs_sm120_sass_not_ptx() {
        let p = plan(
            &arm().with(GB10).driver("580.95.05"),
            &req(Profile::Pytorch),
        );
        assert_eq!(p.status, Status::Ok, "{:#?}", p.reasons);
        assert!(
            p.reasons.iter().any(|r| r.contains("sm_120 SASS")),
            "{:#?}",
            p.reasons
        );
        assert!(
            !p.reasons.iter().any(|r| r.contains("PTX")),
            "{:#?}",
            p.reasons
        );
        // PyPI's aarch64 build of the release, an aarch64 row.
        let catalog = Catalog::embedded();
        let v = torch_variant(&catalog, &p);
        assert_eq!(v.platform, "linux-sbsa");
    }

    #[test]
    fn sm_110_sass_runs_only_on_thor_and_sm_120_on_gb10() {
        let c = Catalog::embedded().cuda;
        assert!(c.sass_runs_on(&v("12.0"), &v("12.1")), "GB10 runs sm_120");
        assert!(!c.sass_runs_on(&v("12.1"), &v("12.0")));
        assert!(c.sass_runs_on(&v("11.0"), &v("11.0")), "Thor runs sm_110");
        assert!(
            !c.sass_runs_on(&v("10.0"), &v("11.0")),
            "no other major's SASS"
        );
        assert!(c.sass_runs_on(&v("8.0"), &v("8.7")), "Orin runs sm_80");
        assert!(c.sass_runs_on(&v("10.0"), &v("10.3")), "GB300 runs sm_100");
    }

    #[test]
    fn aarch64_without_a_driver_installs_the_open_driver_and_an_aarch64_wheel() {
        let p = plan(&arm().with(GB200), &req(Profile::Pytorch));
        assert_eq!(p.status, Status::Ok, "{:#?}", p.reasons);
        let d = comp(&p, "driver");
        assert_eq!(d.action, Action::Install);
        assert_eq!(
            d.kernel_module,
            Some(cudaup::model::system::KernelModule::Open)
        );
        assert!(
            !d.commands.iter().any(|c| c.contains("x86_64")),
            "{:?}",
            d.commands
        );
        let catalog = Catalog::embedded();
        assert_eq!(torch_variant(&catalog, &p).platform, "linux-sbsa");
    }

    #[test]
    fn cuda_pin_on_aarch64_takes_an_sbsa_release() {
        let p = plan(
            &arm().with(GH200).driver("580.95.05"),
            &pinned(Profile::Full, |p| p.cuda = Some(pin("13.0"))),
        );
        assert_eq!(p.status, Status::Ok, "{:#?}", p.reasons);
        // 13.0.3 exists for x86_64 in the catalog, but only 13.0.2's redist is known to list sbsa.
        assert_eq!(version_of(&p, "cuda"), "13.0.2");
        assert_eq!(comp(&p, "torch").variant.as_deref(), Some("cu130"));
    }

    #[test]
    fn torch_pins_on_aarch64() {
        let m = arm().with(GH200).driver("580.95.05");
        // 2.10's aarch64 CUDA wheel is PyTorch's cu130 (PyPI's aarch64 2.10 is a CPU build).
        let p = plan(
            &m,
            &pinned(Profile::Pytorch, |p| p.torch = Some(pin("2.10.0"))),
        );
        assert_eq!(p.status, Status::Ok, "{:#?}", p.reasons);
        let t = comp(&p, "torch");
        assert_eq!(t.variant.as_deref(), Some("cu130"));
        assert_eq!(
            t.index_url.as_deref(),
            Some("https://download.pytorch.org/whl/cu130")
        );
        // 2.8 has no aarch64 CUDA wheel the catalog can vouch for: refused, with the reason.
        let p = plan(
            &m,
            &pinned(Profile::Pytorch, |p| p.torch = Some(pin("2.8.0"))),
        );
        assert_eq!(p.status, Status::Unsupported);
        let all = format!("{:?} {:?}", p.reasons, p.rejected);
        assert!(all.contains("linux-sbsa"), "{all}");
    }

    #[test]
    fn tensorflow_on_aarch64_says_the_wheels_are_cpu_builds() {
        let p = plan(
            &arm().with(GH200).driver("580.95.05"),
            &req(Profile::Tensorflow),
        );
        assert_eq!(p.status, Status::Unsupported);
        let all = format!("{:?} {:?}", p.reasons, p.rejected);
        assert!(all.contains("CPU builds"), "{all}");
    }

    #[test]
    fn an_unknown_architecture_is_refused_not_planned_with_x86_facts() {
        let mut m = arm().with(GH200).driver("580.95.05");
        m.os["arch"] = json!("riscv64");
        let p = plan(&m, &req(Profile::Pytorch));
        assert_eq!(p.status, Status::Unsupported);
        assert!(
            p.reasons.iter().any(|r| r.contains("riscv64")),
            "{:#?}",
            p.reasons
        );
    }

    fn jetson(model: &str, l4t: &str) -> M {
        let mut m = arm().no_python().python("3.10.12");
        m.os["jetson"] = json!({"model": model, "l4t": l4t});
        m
    }

    #[test]
    fn jetson_orin_on_jetpack_6_2_is_told_which_pytorch_fits() {
        let p = plan(
            &jetson("NVIDIA Jetson AGX Orin Developer Kit", "36.4.3"),
            &req(Profile::Pytorch),
        );
        assert_eq!(p.status, Status::Unsupported);
        let j = p.jetson.as_ref().expect("Jetson advice");
        assert_eq!(j.jetpack.as_deref(), Some("6.2"));
        assert_eq!(j.cuda.as_deref(), Some("12.6"));
        assert!(
            j.pytorch
                .iter()
                .any(|l| l.contains("pypi.jetson-ai-lab.dev/jp6/cu126")),
            "{:#?}",
            j.pytorch
        );
        assert!(
            p.reasons.iter().any(|r| r.contains("JetPack 6.2")),
            "{:#?}",
            p.reasons
        );
        // Orin has a newer JetPack (7.2, the SBSA stack): the plan says so.
        assert!(
            j.newest.as_deref().is_some_and(|n| n.contains("7.2")),
            "{j:?}"
        );
    }

    #[test]
    fn jetson_thor_gets_pytorchs_own_aarch64_wheels_with_sm110() {
        let p = plan(
            &jetson("NVIDIA Jetson AGX Thor Developer Kit", "38.2.0"),
            &req(Profile::Pytorch),
        );
        let j = p.jetson.as_ref().expect("Jetson advice");
        assert_eq!(j.jetpack.as_deref(), Some("7.0"));
        assert!(
            j.pytorch.iter().any(|l| l.contains("cu130")),
            "CUDA 13.0 wheels (JetPack 7.0 ships 13.0): {:#?}",
            j.pytorch
        );
        assert!(
            !j.pytorch.iter().any(|l| l.contains("cu132")),
            "13.2 > JetPack's 13.0"
        );
    }

    #[test]
    fn jetson_of_an_unknown_release_points_to_the_archive() {
        let p = plan(
            &jetson("NVIDIA Jetson Orin Nano Developer Kit", "36.9.9"),
            &req(Profile::Full),
        );
        assert_eq!(p.status, Status::Unsupported);
        assert!(
            p.reasons.iter().any(|r| r.contains("jetpack-archive")),
            "{:#?}",
            p.reasons
        );
    }
}

/// JAX (issue 41): which plugin each machine gets, and why not.
mod jax;
