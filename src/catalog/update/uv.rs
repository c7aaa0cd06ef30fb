//! `manifests update`, part `pypi`: the uv cudaup brings (`uv.toml`). The newest final uv on the
//! index that is newer than the catalog's pin becomes the pin when every system and architecture
//! the pin has gets its wheel (on Linux the statically linked, musllinux one; on Windows the one
//! of the pinned wheel's platform tag, `win_amd64`): file name, size and sha256 as the index
//! states them, and the `uv` (`uv.exe`) binary's sha256 and size from that wheel's RECORD (read
//! with HTTP ranges: the central directory, then that one member). The RECORD is covered by the wheel's
//! sha256, and an install checks the binary's bytes against it again before placing it. An
//! index that lacks a wheel, a size or a hash leaves the pin as it was, with a note.

use base64::Engine;

use super::pypi::{project, Project, WheelFile};
use super::{zip, Net, UpdateError};
use crate::catalog::uv::{UvPin, UvWheel, MAX_BINARY};
use crate::catalog::{Catalog, Date};
use crate::fetch::Location;
use crate::model::version::Version;

/// The most a RECORD may be: uv's is about 1 KiB.
const MAX_RECORD: u64 = 1 << 20;

/// The pin the index offers, when it is newer than `base`'s.
pub fn read(
    net: &mut Net<'_>,
    index: &Location,
    base: &Catalog,
    notes: &mut Vec<String>,
) -> Result<Option<UvPin>, UpdateError> {
    let Some(page) = project(net, index, "uv")? else {
        notes.push(format!("uv: {index} has no uv page; uv.toml is kept"));
        return Ok(None);
    };
    let pinned = Version::parse(&base.uv.version);
    let Some(newest) = newest(&page) else {
        return Ok(None);
    };
    if pinned.as_ref().is_some_and(|p| &newest <= p) {
        return Ok(None);
    }
    let mut wheels = Vec::new();
    for pinned in &base.uv.wheel {
        match wheel(net, &page, &newest, pinned)? {
            Ok(w) => wheels.push(w),
            Err(why) => {
                notes.push(format!(
                    "uv {newest} is on the index, but {why}; uv.toml keeps {}",
                    base.uv.version
                ));
                return Ok(None);
            }
        }
    }
    let pin = UvPin {
        schema_version: 1,
        version: newest.to_string(),
        source: page.page.to_string(),
        wheel: wheels,
    };
    pin.check().map_err(|message| UpdateError::BadData {
        url: page.page.to_string(),
        message,
    })?;
    Ok(Some(pin))
}

/// The newest final release with any wheel.
fn newest(page: &Project) -> Option<Version> {
    page.files
        .iter()
        .filter(|f| f.filename.ends_with(".whl"))
        .filter_map(|f| f.filename.split('-').nth(1))
        .filter(|v| super::pypi::is_final(v))
        .filter_map(Version::parse)
        .max()
}

/// The platform tag the wheel replacing `pinned` must carry: on Linux the statically linked
/// build's (`musllinux_1_1_<arch>`), elsewhere the pinned wheel's own (`win_amd64`).
fn platform_tag(pinned: &UvWheel) -> String {
    if pinned.os == crate::catalog::uv::LINUX {
        return format!("musllinux_1_1_{}", pinned.arch);
    }
    pinned
        .filename
        .trim_end_matches(".whl")
        .rsplit('-')
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// The wheel of `version` for `pinned`'s system and architecture, with its binary's hash from
/// RECORD; `Err` (inner) says why the index cannot pin it.
fn wheel(
    net: &mut Net<'_>,
    page: &Project,
    version: &Version,
    pinned: &UvWheel,
) -> Result<Result<UvWheel, String>, UpdateError> {
    let tag = platform_tag(pinned);
    let prefix = format!("uv-{version}-");
    let Some(file) = page.files.iter().find(|f| {
        f.filename.starts_with(&prefix)
            && f.filename.ends_with(".whl")
            && f.filename
                .trim_end_matches(".whl")
                .rsplit('-')
                .next()
                .is_some_and(|p| p.split('.').any(|t| t == tag))
    }) else {
        return Ok(Err(format!("it lists no {tag} wheel of it")));
    };
    let (Some(sha256), Some(size)) = (file.sha256.clone(), file.size) else {
        return Ok(Err(format!(
            "{} has no stated sha256 and size",
            file.filename
        )));
    };
    match binary(net, file, version, pinned.binary())? {
        Ok((binary_sha256, binary_size)) => Ok(Ok(UvWheel {
            arch: pinned.arch.clone(),
            os: pinned.os.clone(),
            filename: file.filename.clone(),
            size,
            sha256: sha256.to_ascii_lowercase(),
            binary_size,
            binary_sha256,
            source: format!(
                "{} (name, size and sha256: {}; the binary's sha256 and size: the wheel's uv-{version}.dist-info/RECORD)",
                file.url,
                page.page
            ),
        })),
        Err(why) => Ok(Err(why)),
    }
}

/// The sha256 (hex) and size RECORD gives `uv-<version>.data/scripts/<name>`.
fn binary(
    net: &mut Net<'_>,
    file: &WheelFile,
    version: &Version,
    name: &str,
) -> Result<Result<(String, u64), String>, UpdateError> {
    let record = format!("uv-{version}.dist-info/RECORD");
    let Some(entry) = zip::find(net, &file.url, &|e| e.name == record)? else {
        return Ok(Err(format!("{} has no {record}", file.filename)));
    };
    let text =
        String::from_utf8_lossy(&zip::read(net, &file.url, &entry, MAX_RECORD)?).into_owned();
    let member = format!("uv-{version}.data/scripts/{name},");
    let Some(line) = text.lines().find(|l| l.starts_with(&member)) else {
        return Ok(Err(format!("{}'s RECORD lists no {member}", file.filename)));
    };
    let mut parts = line[member.len()..].split(',');
    let hash = parts.next().and_then(|h| h.strip_prefix("sha256="));
    let size = parts.next().and_then(|s| s.parse::<u64>().ok());
    let digest = hash.and_then(|h| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(h.trim_end_matches('='))
            .ok()
    });
    match (digest, size) {
        (Some(d), Some(size)) if d.len() == 32 && size > 0 && size <= MAX_BINARY => {
            Ok(Ok((hex::encode(d), size)))
        }
        _ => Ok(Err(format!(
            "{}'s RECORD line for the binary is not `path,sha256=<base64>,<size>`: {line}",
            file.filename
        ))),
    }
}

/// uv.toml for `pin`, read on `today`.
pub fn render(pin: &UvPin, today: Date) -> String {
    let mut out = format!(
        "# uv, the installer cudaup drives for Python packages (`uv venv`, `uv pip install`). cudaup\n\
         # brings it itself: the wheel below is fetched from the same index or mirror as the framework\n\
         # (PyPI by default), checked against the sha256 here (the catalog is the trust root, not the\n\
         # index), and its `uv` binary is checked against the sha256 of the wheel's RECORD before it is\n\
         # placed in $CUDAUP_HOME/tools/. One wheel per system and machine architecture: on Linux (rows\n\
         # without `os`) the statically linked (musl) build, which runs on any Linux whatever its C\n\
         # library; on Windows (`os = \"windows\"`) the win_amd64 build, whose binary is `uv.exe`.\n\
         # Written by `cudaup manifests update` on {today} from {}: each wheel's name, size and\n\
         # sha256 as the index states them, the binary's sha256 and size from the wheel's\n\
         # uv-{}.dist-info/RECORD. Schema: manifests/README.md, \"uv.toml\".\n",
        pin.source, pin.version
    );
    out.push_str(&toml::to_string(pin).expect("a pin serializes"));
    out
}
