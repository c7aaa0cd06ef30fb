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
