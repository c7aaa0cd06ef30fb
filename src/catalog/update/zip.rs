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
/// The largest member inflated (a bomb guard; cuDNN's and torch's probes are below 20 MB).
const MAX_INFLATED: u64 = 256 << 20;

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

/// The central directory of the zip at `url`.
pub fn directory(net: &mut Net<'_>, url: &Location) -> Result<Vec<Entry>, UpdateError> {
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
            format!("central directory of {size} bytes at {offset} does not fit a {total}-byte file"),
        ));
    }
    let tail_start = total - tail.len() as u64;
    let dir = if offset >= tail_start {
        tail[(offset - tail_start) as usize..(offset - tail_start + size) as usize].to_vec()
    } else {
        net.range(url, Some(offset), size)?.0
    };
    parse_directory(&dir).ok_or_else(|| bad(url, "the central directory does not parse"))
}

fn parse_directory(dir: &[u8]) -> Option<Vec<Entry>> {
    let mut out = Vec::new();
    let mut p = 0;
    while p + 46 <= dir.len() {
        if dir.get(p..p + 4)? != b"PK\x01\x02" {
            return None;
        }
        let method = u16_at(dir, p + 10)?;
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
        out.push(Entry {
            name,
            method,
            compressed,
            size,
            offset,
        });
        p += 46 + name_len + extra_len + comment_len;
    }
    // The records must fill the directory exactly; anything left over is not a directory.
    (p == dir.len()).then_some(out)
}

/// The inflated bytes of `entry`.
pub fn read(net: &mut Net<'_>, url: &Location, entry: &Entry) -> Result<Vec<u8>, UpdateError> {
    if entry.size > MAX_INFLATED {
        return Err(bad(url, format!("{} would inflate to {} bytes", entry.name, entry.size)));
    }
    // The local header repeats name and extra with lengths of its own; 30 bytes say how long.
    let (head, _) = net.range(url, Some(entry.offset), 30)?;
    if head.get(..4) != Some(b"PK\x03\x04") {
        return Err(bad(url, format!("{}: no local header at its offset", entry.name)));
    }
    let skip = 30
        + u64::from(u16_at(&head, 26).unwrap_or(0))
        + u64::from(u16_at(&head, 28).unwrap_or(0));
    let (data, _) = net.range(url, Some(entry.offset + skip), entry.compressed.max(1))?;
    if (data.len() as u64) < entry.compressed {
        return Err(bad(url, format!("{}: member ends early", entry.name)));
    }
    match entry.method {
        0 => Ok(data),
        8 => {
            let mut out = Vec::with_capacity(entry.size as usize);
            flate2::read::DeflateDecoder::new(&data[..])
                .take(MAX_INFLATED + 1)
                .read_to_end(&mut out)
                .map_err(|e| bad(url, format!("{}: {e}", entry.name)))?;
            if out.len() as u64 != entry.size {
                return Err(bad(
                    url,
                    format!(
                        "{}: inflated to {} bytes, the directory says {}",
                        entry.name,
                        out.len(),
                        entry.size
                    ),
                ));
            }
            Ok(out)
        }
        m => Err(bad(url, format!("{}: compression method {m} is not supported", entry.name))),
    }
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
        assert_eq!(read(&mut net, &loc, meta).unwrap(), b"Name: x\nVersion: 1.0\n");
        assert!(net.bytes < 70_000, "read {} bytes", net.bytes);
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
