//! One member of a remote wheel, read with HTTP ranges: the end-of-central-directory record and
//! the central directory from the file's tail, then only the wanted member's local header and
//! data. A wheel is never downloaded whole.

use std::io::Read;

use super::{Net, UpdateError};
use crate::fetch::Location;

/// How much of the tail is read first: the end record, and often the whole central directory.
const TAIL: u64 = 64 * 1024;
/// The largest central directory cudaup reads (torch's is 1.2 MB).
const MAX_DIRECTORY: u64 = 16 << 20;
/// The largest library a fatbin probe inflates (a bomb guard; the probed libraries of cuDNN's and
/// torch's wheels are below 20 MB compressed).
pub const MAX_LIBRARY: u64 = 256 << 20;
/// The largest METADATA read (torch's is 36 KB; one that embeds a long README about 1 MB): a
/// member claiming more is refused before a byte of it is fetched.
pub const MAX_METADATA: u64 = 8 << 20;

/// A member as the central directory lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Path inside the archive.
    pub name: String,
    /// 0 stored, 8 deflated.
    pub method: u16,
    /// Compressed size.
    pub compressed: u64,
    /// Size after inflating.
    pub size: u64,
    /// Offset of the local header.
    pub offset: u64,
    /// The CRC-32 of the inflated bytes, as the directory states it.
    pub crc32: u32,
}

fn bad(url: &Location, message: impl Into<String>) -> UpdateError {
    UpdateError::BadData {
        url: url.to_string(),
        message: message.into(),
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

/// The central directory's location: `(offset, size, total file size)`, and the tail read.
struct Layout {
    offset: u64,
    size: u64,
    total: u64,
    tail: Vec<u8>,
}

impl Layout {
    fn tail_start(&self) -> u64 {
        self.total - self.tail.len() as u64
    }
}

/// The member `wanted` picks, reading as little of the central directory as possible: wheels put
/// `.dist-info/` last, so its records are usually in the directory's last 64 KiB (torch's whole
/// directory is 1.2 MB).
pub fn find(
    net: &mut Net<'_>,
    url: &Location,
    wanted: &dyn Fn(&Entry) -> bool,
) -> Result<Option<Entry>, UpdateError> {
    let l = layout(net, url)?;
    const PART: u64 = 64 * 1024;
    if l.size > PART {
        let start = l.offset + l.size - PART;
        let part = slice(net, url, &l, start, PART)?;
        // The first record signature from which the records chain exactly to the end.
        let found = part
            .windows(4)
            .enumerate()
            .filter(|(_, w)| *w == b"PK\x01\x02")
            .find_map(|(i, _)| parse_directory(&part[i..]));
        if let Some(e) = found.and_then(|entries| entries.into_iter().find(|e| wanted(e))) {
            return Ok(Some(e));
        }
        // Some wheels (TensorFlow's) put `.dist-info/` first instead.
        let head = slice(net, url, &l, l.offset, PART)?;
        if let Some(e) = parse_records(&head).into_iter().find(|e| wanted(e)) {
            return Ok(Some(e));
        }
    }
    Ok(entries(net, url, &l)?.into_iter().find(|e| wanted(e)))
}

/// The central directory of the zip at `url`.
pub fn directory(net: &mut Net<'_>, url: &Location) -> Result<Vec<Entry>, UpdateError> {
    let l = layout(net, url)?;
    entries(net, url, &l)
}

fn slice(
    net: &mut Net<'_>,
    url: &Location,
    l: &Layout,
    start: u64,
    len: u64,
) -> Result<Vec<u8>, UpdateError> {
    if start >= l.tail_start() {
        let a = (start - l.tail_start()) as usize;
        Ok(l.tail[a..a + len as usize].to_vec())
    } else {
        Ok(net.range(url, Some(start), len)?.0)
    }
}

fn entries(net: &mut Net<'_>, url: &Location, l: &Layout) -> Result<Vec<Entry>, UpdateError> {
    let dir = slice(net, url, l, l.offset, l.size)?;
    parse_directory(&dir).ok_or_else(|| bad(url, "the central directory does not parse"))
}

fn layout(net: &mut Net<'_>, url: &Location) -> Result<Layout, UpdateError> {
    let (tail, total) = net.range(url, None, TAIL)?;
    let eocd = tail
        .windows(4)
        .rposition(|w| w == b"PK\x05\x06")
        .ok_or_else(|| bad(url, "not a zip file (no end-of-central-directory record)"))?;
    let mut size = u64::from(u32_at(&tail, eocd + 12).ok_or_else(|| bad(url, "short end record"))?);
    let mut offset =
        u64::from(u32_at(&tail, eocd + 16).ok_or_else(|| bad(url, "short end record"))?);
    if offset == 0xffff_ffff || size == 0xffff_ffff {
        // Zip64: the locator sits just before the end record and points at the zip64 record.
        let loc = eocd
            .checked_sub(20)
            .filter(|l| tail.get(*l..*l + 4) == Some(b"PK\x06\x07"))
            .ok_or_else(|| bad(url, "zip64 archive without a locator"))?;
        let rec = u64_at(&tail, loc + 8).ok_or_else(|| bad(url, "short zip64 locator"))?;
        let tail_start = total - tail.len() as u64;
        let at = rec
            .checked_sub(tail_start)
            .map(|a| a as usize)
            .filter(|a| tail.get(*a..*a + 4) == Some(b"PK\x06\x06"))
            .ok_or_else(|| bad(url, "zip64 end record not where the locator says"))?;
        size = u64_at(&tail, at + 40).ok_or_else(|| bad(url, "short zip64 record"))?;
        offset = u64_at(&tail, at + 48).ok_or_else(|| bad(url, "short zip64 record"))?;
    }
    if size > MAX_DIRECTORY || offset.saturating_add(size) > total {
        return Err(bad(
            url,
            format!(
                "central directory of {size} bytes at {offset} does not fit a {total}-byte file"
            ),
        ));
    }
    Ok(Layout {
        offset,
        size,
        total,
        tail,
    })
}

/// The whole records at the start of `dir` (a directory's first bytes).
fn parse_records(dir: &[u8]) -> Vec<Entry> {
    let (entries, _) = records(dir);
    entries
}

fn parse_directory(dir: &[u8]) -> Option<Vec<Entry>> {
    let (entries, end) = records(dir);
    // The records must fill the directory exactly; anything left over is not a directory.
    (end == dir.len()).then_some(entries)
}

/// Records from the start of `dir`, and where the last whole one ends.
fn records(dir: &[u8]) -> (Vec<Entry>, usize) {
    let mut out = Vec::new();
    let mut p = 0;
    while let Some((e, next)) = record(dir, p) {
        out.push(e);
        p = next;
    }
    (out, p)
}

/// The record at `p`, and where the next begins.
fn record(dir: &[u8], p: usize) -> Option<(Entry, usize)> {
    {
        if dir.get(p..p + 4)? != b"PK\x01\x02" {
            return None;
        }
        let method = u16_at(dir, p + 10)?;
        let crc32 = u32_at(dir, p + 16)?;
        let mut compressed = u64::from(u32_at(dir, p + 20)?);
        let mut size = u64::from(u32_at(dir, p + 24)?);
        let name_len = usize::from(u16_at(dir, p + 28)?);
        let extra_len = usize::from(u16_at(dir, p + 30)?);
        let comment_len = usize::from(u16_at(dir, p + 32)?);
        let mut offset = u64::from(u32_at(dir, p + 42)?);
        let name = String::from_utf8_lossy(dir.get(p + 46..p + 46 + name_len)?).into_owned();
        let extra = dir.get(p + 46 + name_len..p + 46 + name_len + extra_len)?;
        let mut q = 0;
        while q + 4 <= extra.len() {
            let id = u16_at(extra, q)?;
            let len = usize::from(u16_at(extra, q + 2)?);
            if id == 1 {
                let mut k = q + 4;
                for field in [&mut size, &mut compressed, &mut offset] {
                    if *field == 0xffff_ffff {
                        *field = u64_at(extra, k)?;
                        k += 8;
                    }
                }
            }
            q += 4 + len;
        }
        let next = p + 46 + name_len + extra_len + comment_len;
        (next <= dir.len()).then_some((
            Entry {
                name,
                method,
                compressed,
                size,
                offset,
                crc32,
            },
            next,
        ))
    }
}

/// The inflated bytes of `entry`, which may inflate to at most `max` bytes. Neither the
/// directory's sizes nor the data can make it fetch or hold more: a member whose stated sizes pass
/// `max` is refused before it is fetched, and inflating stops at the first byte past the size
/// the directory states.
pub fn read(
    net: &mut Net<'_>,
    url: &Location,
    entry: &Entry,
    max: u64,
) -> Result<Vec<u8>, UpdateError> {
    // Deflate's stored blocks add 5 bytes per 64 KiB: data never grows by more than that.
    let max_compressed = max + max / 8192 + 64;
    if entry.size > max || entry.compressed > max_compressed {
        return Err(bad(
            url,
            format!(
                "{}: the directory says {} bytes ({} compressed), more than the {max} bytes such a member may have",
                entry.name, entry.size, entry.compressed
            ),
        ));
    }
    // The local header repeats name and extra with lengths of its own; 30 bytes say how long.
    let (head, _) = net.range(url, Some(entry.offset), 30)?;
    if head.get(..4) != Some(b"PK\x03\x04") {
        return Err(bad(
            url,
            format!("{}: no local header at its offset", entry.name),
        ));
    }
    let skip =
        30 + u64::from(u16_at(&head, 26).unwrap_or(0)) + u64::from(u16_at(&head, 28).unwrap_or(0));
    let start = entry
        .offset
        .checked_add(skip)
        .ok_or_else(|| bad(url, format!("{}: offset out of range", entry.name)))?;
    let (data, _) = net.range(url, Some(start), entry.compressed.max(1))?;
    if (data.len() as u64) < entry.compressed {
        return Err(bad(url, format!("{}: member ends early", entry.name)));
    }
    let data = &data[..entry.compressed as usize];
    let out = match entry.method {
        0 => data.to_vec(),
        8 => {
            let mut out = Vec::with_capacity(entry.size as usize);
            flate2::read::DeflateDecoder::new(data)
                .take(entry.size + 1)
                .read_to_end(&mut out)
                .map_err(|e| bad(url, format!("{}: {e}", entry.name)))?;
            out
        }
        m => {
            return Err(bad(
                url,
                format!("{}: compression method {m} is not supported", entry.name),
            ))
        }
    };
    if out.len() as u64 != entry.size {
        return Err(bad(
            url,
            format!(
                "{}: {} to {}{} bytes, the directory says {}",
                entry.name,
                if entry.method == 0 {
                    "stored as"
                } else {
                    "inflated"
                },
                out.len(),
                if out.len() as u64 > entry.size {
                    "+"
                } else {
                    ""
                },
                entry.size
            ),
        ));
    }
    // What a cache keeps of a member (ptxas targets, fatbin targets) is trusted later without
    // the wheel: the bytes must be the ones the archive's own CRC vouches for.
    let mut crc = flate2::Crc::new();
    crc.update(&out);
    if crc.sum() != entry.crc32 {
        return Err(bad(
            url,
            format!(
                "{}: the inflated bytes have CRC-32 {:08x}, the directory says {:08x}",
                entry.name,
                crc.sum(),
                entry.crc32
            ),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_member_of_a_real_zip_by_ranges() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x-1.0-py3-none-any.whl");
        {
            let f = fs_err::File::create(&path).unwrap();
            let mut z = zip::ZipWriter::new(f);
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            z.start_file("x/big.bin", opts).unwrap();
            std::io::Write::write_all(&mut z, &vec![7u8; 200_000]).unwrap();
            z.start_file("x-1.0.dist-info/METADATA", opts).unwrap();
            std::io::Write::write_all(&mut z, b"Name: x\nVersion: 1.0\n").unwrap();
            z.finish().unwrap();
        }
        let fetcher = super::super::tests::fetcher(dir.path());
        let mut net = Net::new(&fetcher);
        let loc = Location::File(path);
        let entries = directory(&mut net, &loc).unwrap();
        let meta = entries
            .iter()
            .find(|e| e.name.ends_with("METADATA"))
            .unwrap();
        assert_eq!(
            read(&mut net, &loc, meta, MAX_METADATA).unwrap(),
            b"Name: x\nVersion: 1.0\n"
        );
        assert!(net.bytes < 70_000, "read {} bytes", net.bytes);
        let found = find(&mut net, &loc, &|e| e.name.ends_with("METADATA")).unwrap();
        assert_eq!(found.as_ref(), Some(meta));
    }

    #[test]
    fn a_big_directory_is_read_from_its_tail_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("many-1.0-py3-none-any.whl");
        {
            let f = fs_err::File::create(&path).unwrap();
            let mut z = zip::ZipWriter::new(f);
            let opts = zip::write::SimpleFileOptions::default();
            for i in 0..3000 {
                z.start_file(format!("many/a/rather/long/path/to/module_{i:05}.py"), opts)
                    .unwrap();
            }
            z.start_file("many-1.0.dist-info/METADATA", opts).unwrap();
            std::io::Write::write_all(&mut z, b"Name: many\nVersion: 1.0\n").unwrap();
            z.finish().unwrap();
        }
        let fetcher = super::super::tests::fetcher(dir.path());
        let mut net = Net::new(&fetcher);
        let loc = Location::File(path);
        let e = find(&mut net, &loc, &|e| e.name.ends_with(".dist-info/METADATA"))
            .unwrap()
            .unwrap();
        assert_eq!(
            read(&mut net, &loc, &e, MAX_METADATA).unwrap(),
            b"Name: many\nVersion: 1.0\n"
        );
        assert!(
            net.bytes < 140_000,
            "read {} bytes of a bigger directory",
            net.bytes
        );
    }

    /// A wheel holding `x-1.0.dist-info/METADATA` of `len` bytes, deflated, whose central
    /// directory record then gets `compressed` and `size` written over its own.
    fn lying_wheel(dir: &std::path::Path, len: usize, compressed: u32, size: u32) -> Location {
        let path = dir.join("x-1.0-py3-none-any.whl");
        {
            let f = fs_err::File::create(&path).unwrap();
            let mut z = zip::ZipWriter::new(f);
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            z.start_file("x-1.0.dist-info/METADATA", opts).unwrap();
            let mut text = b"Name: x\nVersion: 1.0\n".to_vec();
            text.resize(len.max(text.len()), b'a');
            std::io::Write::write_all(&mut z, &text).unwrap();
            z.finish().unwrap();
        }
        let mut bytes = fs_err::read(&path).unwrap();
        let at = bytes.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
        bytes[at + 20..at + 24].copy_from_slice(&compressed.to_le_bytes());
        bytes[at + 24..at + 28].copy_from_slice(&size.to_le_bytes());
        fs_err::write(&path, bytes).unwrap();
        Location::File(path)
    }

    /// Issue 25, finding 4: a METADATA whose directory record claims 400 MB made `manifests
    /// update` fetch and hold 414 MiB; it is refused before any of it is fetched.
    #[test]
    fn a_member_claiming_400_mb_is_refused_before_it_is_fetched() {
        let dir = tempfile::tempdir().unwrap();
        let loc = lying_wheel(dir.path(), 100, 400_000_000, 400_000_000);
        let fetcher = super::super::tests::fetcher(dir.path());
        let mut net = Net::new(&fetcher);
        let e = find(&mut net, &loc, &|e| e.name.ends_with("METADATA"))
            .unwrap()
            .unwrap();
        assert_eq!(e.compressed, 400_000_000);
        let before = net.bytes;
        let err = read(&mut net, &loc, &e, MAX_METADATA).unwrap_err();
        assert!(err.to_string().contains("400000000 bytes"), "{err}");
        assert_eq!(net.bytes, before, "nothing of the member was fetched");
        // Only the size lies: still refused, still nothing fetched.
        let loc = lying_wheel(dir.path(), 100, 60, u32::MAX - 1);
        let e = find(&mut net, &loc, &|e| e.name.ends_with("METADATA"))
            .unwrap()
            .unwrap();
        let before = net.bytes;
        assert!(read(&mut net, &loc, &e, MAX_METADATA).is_err());
        assert_eq!(net.bytes, before);
    }

    /// Issue 25, finding 4: a member declared as 100 bytes was inflated up to 256 MiB before the
    /// mismatch was seen; inflating stops at the 101st byte.
    #[test]
    fn inflating_stops_at_the_first_byte_past_the_declared_size() {
        let dir = tempfile::tempdir().unwrap();
        let real = 4 << 20;
        let probe = lying_wheel(dir.path(), real, 0, 0);
        // The real compressed size, from the local header (left as written).
        let bytes = fs_err::read(probe.as_path().unwrap()).unwrap();
        let compressed = u32::from_le_bytes(bytes[18..22].try_into().unwrap());
        let loc = lying_wheel(dir.path(), real, compressed, 100);
        let fetcher = super::super::tests::fetcher(dir.path());
        let mut net = Net::new(&fetcher);
        let e = find(&mut net, &loc, &|e| e.name.ends_with("METADATA"))
            .unwrap()
            .unwrap();
        let err = read(&mut net, &loc, &e, MAX_METADATA).unwrap_err();
        assert!(
            err.to_string()
                .contains("inflated to 101+ bytes, the directory says 100"),
            "{err}"
        );
    }

    /// Issue 33, finding 8: a member whose bytes were changed (its sizes still right) is refused
    /// by its CRC, so nothing of it reaches a cache keyed by the wheel.
    #[test]
    fn a_member_whose_bytes_are_not_its_crcs_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x-1.0-py3-none-any.whl");
        {
            let mut z = zip::ZipWriter::new(fs_err::File::create(&path).unwrap());
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Stored);
            z.start_file("x-1.0.dist-info/METADATA", opts).unwrap();
            std::io::Write::write_all(&mut z, b"Name: x\nVersion: 1.0\n").unwrap();
            z.finish().unwrap();
        }
        let loc = Location::File(path.clone());
        let fetcher = super::super::tests::fetcher(dir.path());
        let mut net = Net::new(&fetcher);
        let e = find(&mut net, &loc, &|e| e.name.ends_with("METADATA"))
            .unwrap()
            .unwrap();
        assert_eq!(
            read(&mut net, &loc, &e, MAX_METADATA).unwrap(),
            b"Name: x\nVersion: 1.0\n"
        );
        let mut bytes = fs_err::read(&path).unwrap();
        let at = bytes.windows(11).position(|w| w == b"Version: 1.").unwrap();
        bytes[at + 9] = b'9';
        fs_err::write(&path, bytes).unwrap();
        let err = read(&mut net, &loc, &e, MAX_METADATA).unwrap_err();
        assert!(err.to_string().contains("the directory says"), "{err}");
        assert!(err.to_string().contains("CRC-32"), "{err}");
    }

    #[test]
    fn garbage_is_bad_data() {
        assert!(parse_directory(b"PK\x01\x02 not really").is_none());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("junk.whl");
        fs_err::write(&path, b"<html>503 Service Unavailable</html>").unwrap();
        let fetcher = super::super::tests::fetcher(dir.path());
        let mut net = Net::new(&fetcher);
        assert!(matches!(
            directory(&mut net, &Location::File(path)),
            Err(UpdateError::BadData { .. })
        ));
    }
}
