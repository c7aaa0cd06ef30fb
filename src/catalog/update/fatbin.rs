//! Which GPUs a library carries code for, read from its own bytes: the ELF `.nv_fatbin` section,
//! a run of fatbin containers (magic `0xBA55ED50`, version, header size, payload size), each a
//! run of entries whose header names the kind (1 = PTX, 2 = ELF with SASS) and the SM number.
//! The entry layout is the one NVIDIA's libraries ship (see tests/fixtures/sources/README.md).

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::pypi::WheelFile;
use super::{zip, Net, Observations, UpdateError};
use crate::catalog::{Catalog, Probe};
use crate::model::version::Version;

const FATBIN_MAGIC: u32 = 0xBA55_ED50;

/// What a library carries.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Targets {
    /// Compute capabilities with machine code (SASS).
    pub sass: BTreeSet<Version>,
    /// Compute capabilities with PTX.
    pub ptx: BTreeSet<Version>,
}

impl Targets {
    /// `sm_75 sm_80 … + PTX compute_120`.
    pub fn describe(&self) -> String {
        let sm = |v: &Version| format!("sm_{}{}", v.major(), v.minor());
        let mut s = self.sass.iter().map(sm).collect::<Vec<_>>().join(" ");
        if !self.ptx.is_empty() {
            s.push_str(&format!(
                " + PTX {}",
                self.ptx.iter().map(sm).collect::<Vec<_>>().join(" ")
            ));
        }
        s
    }
}

fn u16_at(b: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], i: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?))
}

/// The bytes of section `name` of a little-endian 64-bit ELF file.
pub fn elf_section<'a>(elf: &'a [u8], name: &str) -> Result<&'a [u8], String> {
    if elf.get(..4) != Some(b"\x7fELF") {
        return Err("not an ELF file".into());
    }
    if elf.get(4) != Some(&2) || elf.get(5) != Some(&1) {
        return Err("not a little-endian 64-bit ELF file".into());
    }
    let short = || "ELF header cut short".to_owned();
    let shoff = u64_at(elf, 0x28).ok_or_else(short)? as usize;
    let entsize = usize::from(u16_at(elf, 0x3a).ok_or_else(short)?);
    let count = usize::from(u16_at(elf, 0x3c).ok_or_else(short)?);
    let strndx = usize::from(u16_at(elf, 0x3e).ok_or_else(short)?);
    if entsize < 64 || strndx >= count {
        return Err("section header table does not parse".into());
    }
    let header = |i: usize| -> Option<(u32, usize, usize)> {
        let h = shoff.checked_add(i.checked_mul(entsize)?)?;
        let name = u32_at(elf, h)?;
        let off = u64_at(elf, h + 0x18)? as usize;
        let size = u64_at(elf, h + 0x20)? as usize;
        Some((name, off, size))
    };
    let slice = |off: usize, size: usize| elf.get(off..off.checked_add(size)?);
    let (_, stroff, strsize) = header(strndx).ok_or("section header table cut short")?;
    let strtab = slice(stroff, strsize).ok_or("section names out of the file")?;
    for i in 0..count {
        let (n, off, size) = header(i).ok_or("section header table cut short")?;
        let Some(rest) = strtab.get(n as usize..) else {
            continue;
        };
        let end = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
        if &rest[..end] == name.as_bytes() {
            return slice(off, size).ok_or_else(|| format!("{name} lies outside the file"));
        }
    }
    Err(format!(
        "no {name} section (the library carries no device code)"
    ))
}

/// The SASS and PTX targets in a `.nv_fatbin` section.
pub fn parse_section(section: &[u8]) -> Result<Targets, String> {
    let mut t = Targets::default();
    let mut p = 0usize;
    let mut containers = 0;
    while p + 16 <= section.len() {
        if u32_at(section, p) != Some(FATBIN_MAGIC) {
            // Containers are 8-byte aligned; padding sits between them.
            p += 8;
            continue;
        }
        containers += 1;
        let header = usize::from(u16_at(section, p + 6).ok_or("short fatbin header")?);
        // The header holds at least the 16 bytes just read; a smaller one would put the next
        // container where this one starts (a header and payload of 0 looped for ever).
        if header < 16 {
            return Err(format!("fatbin header of {header} bytes"));
        }
        let payload = u64_at(section, p + 8).ok_or("short fatbin header")? as usize;
        let start = p.checked_add(header).ok_or("fatbin header overflows")?;
        let end = start
            .checked_add(payload)
            .filter(|e| *e <= section.len())
            .ok_or("fatbin container runs past the section")?;
        let mut q = start;
        while q + 32 <= end {
            let kind = u16_at(section, q).ok_or("short entry")?;
            let entry_header = u32_at(section, q + 4).ok_or("short entry")? as usize;
            let size = u64_at(section, q + 8).ok_or("short entry")? as usize;
            let arch = u32_at(section, q + 28).ok_or("short entry")?;
            if entry_header < 32 {
                return Err(format!("fatbin entry header of {entry_header} bytes"));
            }
            let cc =
                Version::parse(&format!("{}.{}", arch / 10, arch % 10)).ok_or("bad SM number")?;
            match kind {
                1 => {
                    t.ptx.insert(cc);
                }
                2 => {
                    t.sass.insert(cc);
                }
                _ => {}
            }
            q = q
                .checked_add(entry_header)
                .and_then(|q| q.checked_add(size))
                .ok_or("fatbin entry overflows")?;
        }
        p = end.div_ceil(8) * 8;
    }
    if containers == 0 {
        return Err("no fatbin container in .nv_fatbin".into());
    }
    Ok(t)
}

/// The targets of an ELF library.
pub fn targets_of(elf: &[u8]) -> Result<Targets, String> {
    parse_section(elf_section(elf, ".nv_fatbin")?)
}

/// How many bytes fatbin reads may still fetch, and where results are cached.
#[derive(Debug)]
pub struct Budget {
    left: u64,
    cache: PathBuf,
}

impl Budget {
    /// `limit` bytes, caching under `cache`.
    pub fn new(limit: u64, cache: PathBuf) -> Self {
        Self { left: limit, cache }
    }
}

/// The stem of a cache entry for the wheel at `url` whose index claims `sha`: the claim and the
/// wheel's URL (its index) together. The wheel is read by ranges, so the sha256 is never
/// checked; keyed by it alone, a hostile index's result cached under an honest wheel's hash
/// was later served for the honest index (issue 33, finding 7). `None` for a malformed sha.
pub(super) fn cache_stem(sha: &str, url: &str) -> Option<String> {
    use sha2::{Digest, Sha256};
    let ok = sha.len() == 64 && sha.chars().all(|c| c.is_ascii_hexdigit());
    let source = hex::encode(Sha256::digest(url.as_bytes()));
    ok.then(|| format!("{}-{}", sha.to_ascii_lowercase(), &source[..16]))
}

/// The cached result for a wheel, keyed by its claimed sha256, its URL and the member read.
fn cache_path(budget: &Budget, sha: &str, url: &str, member: &str) -> Option<PathBuf> {
    let stem = cache_stem(sha, url)?;
    Some({
        let tag: String = member
            .rsplit('/')
            .next()
            .unwrap_or(member)
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        budget.cache.join(format!("{stem}-{tag}.json"))
    })
}

/// The targets of `probe.member` in `file`: from the cache, else by reading that member. `None`
/// (with a note) when the member is missing or would cost more than allowed.
pub fn probe(
    net: &mut Net<'_>,
    budget: &mut Budget,
    file: &WheelFile,
    probe: &Probe,
    notes: &mut Vec<String>,
) -> Result<Option<Targets>, UpdateError> {
    let cached = file
        .sha256
        .as_deref()
        .and_then(|sha| cache_path(budget, sha, &file.url.to_string(), &probe.member));
    if let Some(t) = cached
        .as_ref()
        .and_then(|p| fs_err::read(p).ok())
        .and_then(|b| serde_json::from_slice::<Targets>(&b).ok())
    {
        return Ok(Some(t));
    }
    let entries = zip::directory(net, &file.url)?;
    let Some(entry) = entries.iter().find(|e| e.name == probe.member) else {
        notes.push(format!(
            "{}: no {} in the wheel, so its GPU list was not read",
            file.filename, probe.member
        ));
        return Ok(None);
    };
    if entry.compressed > probe.max_bytes || entry.compressed > budget.left {
        notes.push(format!(
            "{}: reading {} would fetch {} bytes ({}), so its GPU list was not read",
            file.filename,
            probe.member,
            entry.compressed,
            if entry.compressed > probe.max_bytes {
                format!("more than the probe's {} bytes", probe.max_bytes)
            } else {
                format!("{} bytes are left of the run's fatbin budget", budget.left)
            }
        ));
        return Ok(None);
    }
    budget.left -= entry.compressed;
    let elf = zip::read(net, &file.url, entry, zip::MAX_LIBRARY)?;
    let targets = targets_of(&elf).map_err(|m| UpdateError::BadData {
        url: format!("{}#{}", file.url, probe.member),
        message: m,
    })?;
    if let Some(path) = cached {
        // A cache that cannot be written only costs the next run the same bytes again.
        let _ = crate::world::fs::write_atomic(
            &path,
            &serde_json::to_vec(&targets).unwrap_or_default(),
            crate::world::fs::Temp::Unique,
            crate::world::fs::Durability::Fast,
        );
    }
    Ok(Some(targets))
}

/// Probes every wheel the observations hold whose GPU list the catalog does not have: cuDNN
/// wheels newest first, then new torch builds.
pub fn probe_all(
    net: &mut Net<'_>,
    catalog: &Catalog,
    obs: &mut Observations,
    budget: &mut Budget,
    notes: &mut Vec<String>,
) -> Result<(), UpdateError> {
    obs.pypi.cudnn.sort_by(|a, b| b.version.cmp(&a.version));
    for c in &mut obs.pypi.cudnn {
        let catalogued = catalog
            .cudnn
            .release
            .iter()
            .any(|r| r.cuda_variant == c.major && r.version.prefix(3) == c.version.prefix(3));
        if catalogued {
            continue;
        }
        let Some(p) = catalog.meta.probe(&c.package) else {
            notes.push(format!("catalog.toml has no [[probe]] for {}", c.package));
            continue;
        };
        c.targets = probe(net, budget, &c.wheel, p, notes)?;
        if let Some(w) = &c.sbsa {
            c.sbsa_targets = probe(net, budget, w, p, notes)?;
        }
    }
    let newest = catalog
        .pytorch
        .release
        .iter()
        .map(|r| &r.version)
        .max()
        .cloned();
    if let Some(p) = catalog.meta.probe("torch") {
        for t in &mut obs.pypi.torch {
            if newest.as_ref().is_none_or(|n| &t.version > n) {
                t.targets = probe(net, budget, &t.wheel, p, notes)?;
            }
        }
        // An aarch64 wheel whose release has no linux-sbsa row of its variant yet.
        for t in &mut obs.pypi.torch_sbsa {
            let name = t
                .cuda
                .as_ref()
                .map(|c| format!("cu{}{}", c.major(), c.minor()));
            let known = catalog.pytorch.release.iter().any(|r| {
                r.version == t.version
                    && r.variants_for("linux-sbsa")
                        .iter()
                        .any(|v| Some(&v.name) == name.as_ref())
            });
            if !known {
                t.targets = probe(net, budget, &t.wheel, p, notes)?;
            }
        }
        for v in obs.torch_index.iter_mut().filter(|v| !v.known) {
            v.targets = probe(net, budget, &v.wheel, p, notes)?;
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_cache_entry_is_never_shared_across_indexes() {
        let sha = "ab".repeat(32);
        let honest = cache_stem(&sha, "https://pypi.org/packages/x.whl").unwrap();
        let hostile = cache_stem(&sha, "https://evil.example/packages/x.whl").unwrap();
        assert_ne!(honest, hostile);
        assert!(honest.starts_with(&sha));
        assert_eq!(cache_stem("not-a-sha", "https://pypi.org/x.whl"), None);
    }

    /// A tiny ELF64 with `.shstrtab` and a `.nv_fatbin` section holding `section`.
    pub(crate) fn elf_with_fatbin(section: &[u8]) -> Vec<u8> {
        let strtab = b"\0.shstrtab\0.nv_fatbin\0";
        let mut out = vec![0u8; 64];
        out[..4].copy_from_slice(b"\x7fELF");
        out[4] = 2;
        out[5] = 1;
        out[6] = 1;
        let str_off = out.len();
        out.extend_from_slice(strtab);
        while !out.len().is_multiple_of(8) {
            out.push(0);
        }
        let fat_off = out.len();
        out.extend_from_slice(section);
        while !out.len().is_multiple_of(8) {
            out.push(0);
        }
        let shoff = out.len();
        let sh = |name: u32, off: usize, size: usize| {
            let mut h = vec![0u8; 64];
            h[..4].copy_from_slice(&name.to_le_bytes());
            h[4..8].copy_from_slice(&1u32.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&(off as u64).to_le_bytes());
            h[0x20..0x28].copy_from_slice(&(size as u64).to_le_bytes());
            h
        };
        let headers = [
            vec![0u8; 64],
            sh(1, str_off, strtab.len()),
            sh(11, fat_off, section.len()),
        ];
        for h in headers {
            out.extend(h);
        }
        out[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        out[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        out[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
        out[0x3e..0x40].copy_from_slice(&1u16.to_le_bytes());
        out
    }

    #[test]
    fn the_real_section_of_nvidia_cufile_lists_its_targets() {
        // Cut from nvidia_cufile-1.20.0.107 (libcufile.so.0); tests/fixtures/sources/README.md.
        let section =
            include_bytes!("../../../tests/fixtures/sources/fatbin/libcufile.so.0.nv_fatbin");
        let t = targets_of(&elf_with_fatbin(section)).unwrap();
        assert_eq!(
            t.describe(),
            "sm_75 sm_80 sm_86 sm_87 sm_89 sm_90 + PTX sm_90"
        );
        assert_eq!(parse_section(section).unwrap(), t);
    }

    #[test]
    fn garbage_and_cut_files_are_errors_not_panics() {
        assert!(targets_of(b"MZ\x90\x00").is_err());
        assert!(targets_of(&elf_with_fatbin(b"no fatbin here at all..")).is_err());
        let section =
            include_bytes!("../../../tests/fixtures/sources/fatbin/libcufile.so.0.nv_fatbin");
        let elf = elf_with_fatbin(section);
        for cut in [10, 64, 200, elf.len() / 2, elf.len() - 1] {
            let _ = targets_of(&elf[..cut]);
        }
        // A container whose payload size claims more than the section holds.
        let mut lying = section[..64].to_vec();
        lying[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(parse_section(&lying).is_err());
    }

    /// Issue 25, finding 2: a container whose header size and payload size are 0 never moved
    /// the reader on (100% CPU for ever in `manifests update`).
    #[test]
    fn a_container_of_header_size_and_payload_0_is_an_error_not_an_endless_loop() {
        let mut empty = vec![0u8; 16];
        empty[..4].copy_from_slice(&FATBIN_MAGIC.to_le_bytes());
        empty[4..6].copy_from_slice(&1u16.to_le_bytes());
        let err = parse_section(&empty).unwrap_err();
        assert!(err.contains("header of 0 bytes"), "{err}");
        assert!(targets_of(&elf_with_fatbin(&empty)).is_err());
        // A header that claims just the 16 bytes and no payload is an empty container.
        empty[6..8].copy_from_slice(&16u16.to_le_bytes());
        assert_eq!(parse_section(&empty).unwrap(), Targets::default());
    }
}
