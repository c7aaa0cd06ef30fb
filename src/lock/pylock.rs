//! The Python part of a lock as PEP 751 `pylock.toml` (`lock-version = "1.0"`): one
//! `[[packages]]` entry per locked distribution (the framework's and, when the lock holds
//! them, its dependencies), each wheel with its URL and sha256, and a
//! marker per host's platform so one file serves the fleet (`uv pip install -r pylock.toml`,
//! `pip install -r pylock.toml` with pip 25.1+ reading it).

use std::collections::BTreeMap;

use serde::Serialize;

use super::Lock;

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct PyLock {
    lock_version: String,
    created_by: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    requires_python: Option<String>,
    packages: Vec<Package>,
}

#[derive(Serialize)]
struct Package {
    name: String,
    version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    marker: Option<String>,
    /// The framework's index; left out for a dependency (its wheels' URLs say where they are).
    #[serde(skip_serializing_if = "Option::is_none")]
    index: Option<String>,
    wheels: Vec<Wheel>,
}

#[derive(Serialize)]
struct Wheel {
    name: String,
    url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    hashes: BTreeMap<String, String>,
}

/// `pylock.toml` for the framework wheels and their dependencies of every host of `lock`.
pub fn export(lock: &Lock) -> String {
    let mut packages: Vec<Package> = Vec::new();
    let machines: Vec<&str> = {
        let mut a: Vec<&str> = lock.hosts.iter().map(|h| h.arch.as_str()).collect();
        a.sort();
        a.dedup();
        a
    };
    for host in &lock.hosts {
        let index = host
            .framework
            .as_ref()
            .map(|f| f.index.clone())
            .unwrap_or_default();
        // One arch in the fleet needs no marker; several tell their wheels apart by it.
        let marker = (machines.len() > 1).then(|| format!("platform_machine == '{}'", host.arch));
        let own = host.wheel.iter().map(|w| (w, Some(index.clone())));
        let deps = host.dependency.iter().map(|w| (w, None));
        for (w, index) in own.chain(deps) {
            let wheel = Wheel {
                name: w.filename.clone(),
                url: w.url.clone(),
                size: w.size,
                hashes: BTreeMap::from([("sha256".to_owned(), w.sha256.clone())]),
            };
            match packages
                .iter_mut()
                .find(|p| p.name == w.name && p.version == w.version && p.marker == marker)
            {
                Some(p) if !p.wheels.iter().any(|x| x.name == wheel.name) => p.wheels.push(wheel),
                Some(_) => {}
                None => packages.push(Package {
                    name: w.name.clone(),
                    version: w.version.clone(),
                    marker: marker.clone(),
                    index,
                    wheels: vec![wheel],
                }),
            }
        }
    }
    let pythons: Vec<&str> = lock
        .hosts
        .iter()
        .filter_map(|h| h.python.as_deref())
        .collect();
    let doc = PyLock {
        lock_version: "1.0".into(),
        created_by: "cudaup".into(),
        requires_python: pythons.iter().min().map(|p| format!(">={p}")),
        packages,
    };
    toml::to_string(&doc).expect("a pylock serialises")
}
