//! Reachability against loopback hosts: one that answers (a 404 counts: the host is there), a
//! port nothing listens on, a directory.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::*;
use crate::settings::InstallOptions;
use crate::world::process::Process;

fn fetcher() -> (tempfile::TempDir, Fetcher) {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = crate::fetch::Settings::new(dir.path().join("cache"));
    settings.allow_http = true;
    settings.attempts = 1;
    settings.connect_timeout = Duration::from_secs(2);
    settings.read_timeout = Duration::from_secs(2);
    let f = Fetcher::new(
        settings,
        Arc::new(AtomicBool::new(false)),
        Arc::new(crate::world::progress::Silent),
    );
    (dir, f)
}

/// A host answering every request with `status` (no body), until the test ends.
fn host(status: &'static str) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut c in l.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            let _ = write!(
                c,
                "HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
    });
    url
}

fn dead() -> String {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}")
}

fn settings(o: InstallOptions) -> InstallSettings {
    InstallSettings::resolve(
        o,
        &Process::with_vars(Vec::<(&str, &str)>::new(), "/"),
        None,
    )
    .unwrap()
}

#[test]
fn the_routes_are_the_settings_or_the_public_defaults() {
    let r = routes(&settings(InstallOptions::default()));
    let bases: Vec<(&str, &str)> = r
        .iter()
        .map(|r| (r.base.as_str(), r.origin.as_str()))
        .collect();
    assert_eq!(
        bases,
        [
            ("https://download.pytorch.org/whl", "default"),
            ("https://pypi.org/simple", "default"),
            ("https://developer.download.nvidia.com", "default"),
        ]
    );
    let r = routes(&settings(InstallOptions {
        pypi_index: crate::fetch::GivenLocation::parse("https://mirrors.example.cn/pypi/simple")
            .ok(),
        index_url: crate::fetch::GivenLocation::parse("/srv/bundle").ok(),
        ..Default::default()
    }));
    assert_eq!(r[1].origin, "--pypi-index");
    assert_eq!(r[3].service, Service::WheelIndex);
}

#[test]
fn only_pypi_answering_leaves_the_profiles_pypi_serves() {
    let (_d, f) = fetcher();
    let pypi = host("200 OK");
    let routes = vec![
        Route {
            service: Service::PytorchIndex,
            base: GivenLocation::parse(&format!("{}/whl", dead())).unwrap(),
            origin: "default".into(),
        },
        Route {
            service: Service::Pypi,
            base: GivenLocation::parse(&format!("{pypi}/simple")).unwrap(),
            origin: "default".into(),
        },
        Route {
            service: Service::NvidiaRedist,
            base: GivenLocation::parse(&dead()).unwrap(),
            origin: "default".into(),
        },
    ];
    let reach = probe(&f, &routes);
    assert_eq!(
        reach.answers.iter().map(|a| a.reached).collect::<Vec<_>>(),
        [false, true, false],
        "{reach:?}"
    );
    assert!(reach.answers[1].detail.starts_with("answered in"));
    assert_eq!(reach.answers[0].failure, Some(Failure::Refused));
    assert!(
        reach.answers[0].detail.contains("refused"),
        "{:?}",
        reach.answers[0]
    );
    // PyPI serves PyTorch (its build), TensorFlow, JAX and NVIDIA's CUDA wheels.
    for p in [
        Profile::Cpu,
        Profile::Pytorch,
        Profile::Full,
        Profile::CudaDev,
        Profile::Tensorflow,
        Profile::Jax,
    ] {
        assert!(reach.fits(p).is_ok(), "{p}: {:?}", reach.fits(p));
    }
}

#[test]
fn nothing_answering_greys_every_profile_with_the_hosts_and_the_fix() {
    let (_d, f) = fetcher();
    let forbidden = host("403 Forbidden");
    let missing = host("404 Not Found");
    let routes = vec![
        Route {
            service: Service::PytorchIndex,
            base: GivenLocation::parse(&format!("{missing}/whl")).unwrap(),
            origin: "--torch-index".into(),
        },
        Route {
            service: Service::Pypi,
            base: GivenLocation::parse(&format!("{forbidden}/simple")).unwrap(),
            origin: "default".into(),
        },
        Route {
            service: Service::NvidiaRedist,
            base: GivenLocation::parse("/nonexistent/mirror").unwrap(),
            origin: "--mirror".into(),
        },
    ];
    let reach = probe(&f, &routes);
    // A 404 is a host that is there; a proxy's 403 is not a way through.
    assert_eq!(
        reach.answers.iter().map(|a| a.reached).collect::<Vec<_>>(),
        [true, false, false],
        "{reach:?}"
    );
    assert!(reach.fits(Profile::Cpu).is_ok());
    let g = reach.fits(Profile::Tensorflow).unwrap_err();
    assert!(
        g.reason()
            .starts_with("nothing that serves TensorFlow answered: PyPI http://"),
        "{g:?}"
    );
    assert!(g.reason().contains("403"), "{g:?}");
    assert!(Greyed::FIX.contains("--pypi-index URL") && Greyed::FIX.contains("HTTPS_PROXY"));
    let g = reach.fits(Profile::CudaDev).unwrap_err();
    assert!(
        g.reason()
            .contains("/nonexistent/mirror is not a directory"),
        "{g:?}"
    );
}

#[test]
fn a_pinned_source_kind_leaves_the_other_routes_unasked() {
    use crate::model::request::{SourceKind, TorchSource};
    let services = |o: InstallOptions| -> Vec<Service> {
        routes_for(&settings(o)).iter().map(|r| r.service).collect()
    };
    // full, nothing pinned: every public host.
    assert_eq!(
        services(InstallOptions::default()),
        [Service::PytorchIndex, Service::Pypi, Service::NvidiaRedist]
    );
    // cuda-dev asks NVIDIA and PyPI (its CUDA wheels), never PyTorch's index.
    assert_eq!(
        services(InstallOptions {
            profile: Some(Profile::CudaDev),
            ..Default::default()
        }),
        [Service::Pypi, Service::NvidiaRedist]
    );
    // Both source kinds pinned: nothing left to decide, and only those routes.
    let pinned = settings(InstallOptions {
        source: Some(SourceKind::Redist),
        torch_source: Some(TorchSource::Pytorch),
        ..Default::default()
    });
    assert!(!wanted(&pinned));
    assert_eq!(
        routes_for(&pinned)
            .iter()
            .map(|r| r.service)
            .collect::<Vec<_>>(),
        [Service::PytorchIndex, Service::NvidiaRedist]
    );
    // A --mirror pins the toolkit to the archives, at the mirror; PyTorch is still decided here.
    let mirror = settings(InstallOptions {
        mirror: crate::fetch::GivenLocation::parse("/srv/mirror").ok(),
        ..Default::default()
    });
    assert!(wanted(&mirror));
    let r = routes_for(&mirror);
    assert_eq!(r[2].base.as_str(), "/srv/mirror");
    // TensorFlow from a given PyPI mirror: pinned, and that mirror is its route.
    let tf = settings(InstallOptions {
        profile: Some(Profile::Tensorflow),
        pypi_index: crate::fetch::GivenLocation::parse("https://mirrors.example.cn/pypi/simple")
            .ok(),
        ..Default::default()
    });
    assert!(!wanted(&tf));
    assert_eq!(
        routes_for(&tf)
            .iter()
            .map(|r| r.base.as_str())
            .collect::<Vec<_>>(),
        ["https://mirrors.example.cn/pypi/simple"]
    );
}

#[test]
fn a_part_is_greyed_only_when_every_route_asked_for_it_failed() {
    // PyPI answered: PyTorch and the toolkit (NVIDIA's wheels) both have a route.
    let answer = |service, reached| Answer {
        route: Route {
            service,
            base: GivenLocation::parse("http://127.0.0.1:9").unwrap(),
            origin: "default".into(),
        },
        reached,
        detail: String::new(),
        millis: None,
        failure: None,
    };
    let reach = Reach {
        answers: vec![
            answer(Service::PytorchIndex, false),
            answer(Service::Pypi, true),
        ],
    };
    assert!(reach.fits(Profile::Full).is_ok());
    let reach = Reach {
        answers: vec![
            answer(Service::PytorchIndex, false),
            answer(Service::Pypi, false),
        ],
    };
    let g = reach.fits(Profile::Pytorch).unwrap_err();
    assert_eq!(g.part, Part::Pytorch);
    assert_eq!(g.failed.len(), 2);
    // full's toolkit may come as NVIDIA's wheels from PyPI, which did not answer either.
    assert_eq!(reach.fits(Profile::Full).unwrap_err().part, Part::Toolkit);
}

#[test]
fn a_plain_http_site_without_allow_http_is_not_reached() {
    let dir = tempfile::tempdir().unwrap();
    let strict = Fetcher::new(
        crate::fetch::Settings::new(dir.path().join("cache")),
        Arc::new(AtomicBool::new(false)),
        Arc::new(crate::world::progress::Silent),
    );
    let reach = probe(
        &strict,
        &[Route {
            service: Service::Pypi,
            base: GivenLocation::parse(&format!("{}/simple", host("200 OK"))).unwrap(),
            origin: "--pypi-index".into(),
        }],
    );
    assert!(!reach.answers[0].reached, "{reach:?}");
    assert_eq!(reach.answers[0].failure, Some(Failure::PlainHttp));
}
