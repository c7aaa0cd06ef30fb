//! The decisions of an install, on machine pictures: no I/O, the same plan every time.

use std::path::{Path, PathBuf};

use super::*;
use crate::model::request::Profile;
use crate::settings::InstallOptions;
use crate::world::process::Process;

fn h200() -> System {
    serde_json::from_str(include_str!("../../../tests/fixtures/h200-detect.json")).unwrap()
}

fn settings(options: InstallOptions) -> InstallSettings {
    InstallSettings::resolve(
        options,
        &Process::with_vars(Vec::<(&str, &str)>::new(), "/"),
        None,
    )
    .unwrap()
}

fn home() -> Home {
    Home::at(Path::new("/h/.cudaup"))
}

#[test]
fn a_toolkit_goes_into_the_home_unless_a_prefix_is_given() {
    let catalog = Catalog::embedded();
    let s = settings(InstallOptions {
        profile: Some(Profile::CudaDev),
        ..Default::default()
    });
    // The pictured machine's own toolkit of the planned series stays.
    let plan = InstallPlan::new(&s, &h200(), &catalog, &home(), Target::Picture).unwrap();
    assert!(
        matches!(&plan.toolkit, Some(ToolkitPlan::Keep { path, .. }) if plan.kept_toolkit().as_ref() == Some(path)),
        "{:?}",
        plan.toolkit
    );
    let mut bare = h200();
    bare.toolkits.clear();
    let plan = InstallPlan::new(&s, &bare, &catalog, &home(), Target::Picture).unwrap();
    let Some(ToolkitPlan::Install {
        cuda, prefix, arch, ..
    }) = &plan.toolkit
    else {
        panic!("{:?}", plan.toolkit)
    };
    assert_eq!(prefix, &home().toolkit(cuda));
    assert_eq!(arch, "x86_64");
    assert_eq!(plan.venv, home().venv("cuda-dev"));
    assert_eq!(plan.driver, None, "a picture's driver is never changed");
    let mine = settings(InstallOptions {
        profile: Some(Profile::CudaDev),
        prefix: Some(PathBuf::from("/opt/cuda")),
        ..Default::default()
    });
    let plan = InstallPlan::new(&mine, &bare, &catalog, &home(), Target::Picture).unwrap();
    assert!(
        matches!(&plan.toolkit, Some(ToolkitPlan::Install { prefix, .. }) if prefix == Path::new("/opt/cuda"))
    );
}

#[test]
fn the_same_inputs_make_the_same_plan() {
    let catalog = Catalog::embedded();
    let s = settings(InstallOptions::default());
    let a = InstallPlan::new(&s, &h200(), &catalog, &home(), Target::Here).unwrap();
    let b = InstallPlan::new(&s, &h200(), &catalog, &home(), Target::Here).unwrap();
    assert_eq!(a.plan, b.plan);
    assert_eq!(a.toolkit, b.toolkit);
    assert_eq!(a.venv, home().venv("full"));
}

#[test]
fn no_fitting_stack_is_an_error_carrying_the_reasons() {
    let catalog = Catalog::embedded();
    let mut machine = h200();
    machine.os.family = crate::model::system::OsFamily::Macos;
    let s = settings(InstallOptions {
        profile: Some(Profile::CudaDev),
        ..Default::default()
    });
    match InstallPlan::new(&s, &machine, &catalog, &home(), Target::Here) {
        Err(PlanError::Unsupported(plan)) => assert!(!plan.reasons.is_empty()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn tensorrt_without_pytorch_and_an_unknown_component_are_refused_before_the_world_is_asked() {
    let catalog = Catalog::embedded();
    let mut bare = h200();
    bare.toolkits.clear();
    let trt = settings(InstallOptions {
        profile: Some(Profile::CudaDev),
        with: Some(vec![WithComponent::Tensorrt]),
        ..Default::default()
    });
    assert!(matches!(
        InstallPlan::new(&trt, &bare, &catalog, &home(), Target::Picture),
        Err(PlanError::TensorrtNeedsTorch)
    ));
    let odd = settings(InstallOptions {
        profile: Some(Profile::CudaDev),
        components: Some("no-such-component".into()),
        ..Default::default()
    });
    match InstallPlan::new(&odd, &bare, &catalog, &home(), Target::Picture) {
        Err(PlanError::Components(why)) => assert!(why.contains("no-such-component"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_framework_and_the_env_intent_are_decided_in_the_plan() {
    use crate::install::python::route::Framework;
    use crate::shell::Shell;
    let catalog = Catalog::embedded();
    let s = settings(InstallOptions::default());
    let here = InstallPlan::new(&s, &h200(), &catalog, &home(), Target::Here).unwrap();
    let fw = here.framework.as_ref().expect("full installs PyTorch");
    assert_eq!(fw.want.framework, Framework::Torch);
    let torch = here.plan.component("torch").unwrap();
    assert_eq!(fw.want.variant, torch.variant);
    assert_eq!(fw.want.packages[0].version, torch.version.clone().unwrap());
    assert_eq!(
        fw.want,
        crate::install::python::route::want(&here.plan, &here.system, &catalog).unwrap(),
        "the want the routes are asked for is the plan's"
    );
    // The check expects the GPUs only when they are this machine's and its driver stays.
    assert_eq!(fw.gpus_here, here.driver.is_none());
    let picture = InstallPlan::new(&s, &h200(), &catalog, &home(), Target::Picture).unwrap();
    assert!(!picture.framework.unwrap().gpus_here);
    // No shell named: those set up here, hooked; named ones and --no-modify-path are kept.
    assert_eq!(
        here.env,
        EnvPlan {
            shells: None,
            modify_path: true
        }
    );
    let named = settings(InstallOptions {
        profile: Some(Profile::CudaDev),
        shells: Some(vec![Shell::Fish]),
        modify_path: Some(false),
        ..Default::default()
    });
    let plan = InstallPlan::new(&named, &h200(), &catalog, &home(), Target::Here).unwrap();
    assert_eq!(
        plan.env,
        EnvPlan {
            shells: Some(vec![Shell::Fish]),
            modify_path: false
        }
    );
    assert_eq!(plan.framework, None, "cuda-dev installs no framework");
}

/// `install --profile cuda-dev` detects no Pythons (`cli::detect::detect_live_without_pythons`):
/// that is sound only while a plan without a framework never reads them. The H200 picture has
/// two, one with a CUDA torch; the cuda-dev plan is the same with them and without them, with
/// the picture's toolkit kept and with a toolkit to install.
#[test]
fn a_plan_without_a_framework_does_not_depend_on_the_pythons() {
    let catalog = Catalog::embedded();
    let s = settings(InstallOptions {
        profile: Some(Profile::CudaDev),
        ..Default::default()
    });
    let mut bare = h200();
    bare.toolkits.clear();
    for system in [h200(), bare] {
        assert!(!system.pythons.is_empty());
        let mut none = system.clone();
        none.pythons.clear();
        for target in [Target::Picture, Target::Here] {
            let with = InstallPlan::new(&s, &system, &catalog, &home(), target).unwrap();
            let without = InstallPlan::new(&s, &none, &catalog, &home(), target).unwrap();
            assert_eq!(
                serde_json::to_value(&with.plan).unwrap(),
                serde_json::to_value(&without.plan).unwrap()
            );
            assert_eq!(with.toolkit, without.toolkit);
            assert_eq!(with.driver, without.driver);
            assert_eq!(with.venv, without.venv);
            assert!(with.framework.is_none() && without.framework.is_none());
        }
    }
}
