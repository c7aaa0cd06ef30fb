//! `install --locked`: before anything is installed, what the mirror or bundle offers is held
//! against the lock — the plan made from the lock's pins must be the locked stack, every toolkit
//! archive its manifest lists must carry the locked sha256, and every locked wheel is fetched
//! and its bytes checked against the locked sha256. The first difference stops the install.

use crate::fetch::{Artifact, FetchError, Fetcher, Location};
use crate::install::locate::Located;
use crate::install::python::route::Layout;

use super::{Host, LockError, LockedFile};

/// Holds `located` (what the plan made from `host`'s pins found) against `host`.
pub fn against(host: &Host, located: &Located, fetcher: &Fetcher) -> Result<(), LockError> {
    let offered: Vec<(String, String)> = located
        .toolkit
        .iter()
        .flat_map(|t| &t.resolved.items)
        .map(|i| (i.artifact.location.file_name(), i.artifact.sha256.clone()))
        .collect();
    for (file, sha) in &offered {
        match host.toolkit.iter().find(|l| &l.filename == file) {
            Some(l) if &l.sha256 == sha => {}
            Some(l) => {
                return Err(LockError::Mismatch {
                    what: file.clone(),
                    found: sha.clone(),
                    locked: l.sha256.clone(),
                })
            }
            None => {
                return Err(LockError::Differs(format!(
                    "the toolkit needs {file}, which the lock does not hold"
                )))
            }
        }
    }
    if let Some(l) = host
        .toolkit
        .iter()
        .find(|l| !offered.iter().any(|(f, _)| f == &l.filename))
    {
        return Err(LockError::Differs(format!(
            "the lock holds {} for the toolkit, which this plan does not install",
            l.filename
        )));
    }
    let step = located.framework.as_ref();
    let route = step.and_then(|s| s.route.as_ref());
    match (&host.framework, route) {
        (None, None) => Ok(()),
        (Some(f), None) => Err(LockError::Differs(format!(
            "the lock holds {} {}, which this plan does not install",
            f.name, f.version
        ))),
        (None, Some(r)) => Err(LockError::Differs(format!(
            "this plan installs {}, which the lock does not hold",
            r.requirements.join(" ")
        ))),
        (Some(f), Some(r)) => {
            if f.requirements != r.requirements {
                return Err(LockError::Differs(format!(
                    "the plan asks for {}, the lock holds {}",
                    r.requirements.join(" "),
                    f.requirements.join(" ")
                )));
            }
            let base = match &r.layout {
                Layout::Index { url } | Layout::FindLinks { url } => url.clone(),
            };
            for (id, w) in host.wheel.iter().enumerate() {
                wheel(fetcher, id, &base, &r.layout, w)?;
            }
            Ok(())
        }
    }
}

/// Fetches the locked wheel from this route's index (by its file name: any mirror serves) and
/// checks its bytes.
fn wheel(
    fetcher: &Fetcher,
    id: usize,
    base: &str,
    layout: &Layout,
    w: &LockedFile,
) -> Result<(), LockError> {
    let location = match layout {
        Layout::Index { .. } => {
            let index = Location::parse(base)?;
            let (_, files) = crate::sources::pypi::list(fetcher, &index, &w.name)?;
            files
                .into_iter()
                .find(|f| f.filename == w.filename)
                .map(|f| {
                    if let Some(s) = f.sha256.filter(|s| s != &w.sha256) {
                        return Err(LockError::Mismatch {
                            what: format!("{} (as {base} lists it)", w.filename),
                            found: s,
                            locked: w.sha256.clone(),
                        });
                    }
                    Ok(f.location)
                })
                .transpose()?
        }
        Layout::FindLinks { .. } => {
            let at = Location::parse(base)?;
            Some(match at {
                Location::File(dir) => Location::File(dir.join(&w.filename)),
                Location::Http(_) => at.join(&w.filename),
            })
        }
    };
    let location = location.ok_or_else(|| LockError::NoWheel {
        index: base.to_owned(),
        name: w.name.clone(),
        version: w.version.clone(),
        target: w.filename.clone(),
    })?;
    let artifact = Artifact {
        name: w.filename.clone(),
        location,
        sha256: w.sha256.clone(),
        size: w.size,
        max: None,
    };
    match fetcher.fetch::<()>(id, &artifact, None) {
        Ok(_) => Ok(()),
        Err(FetchError::Checksum { actual, .. }) => Err(LockError::Mismatch {
            what: w.filename.clone(),
            found: actual,
            locked: w.sha256.clone(),
        }),
        Err(e) => Err(e.into()),
    }
}
