//! A zip archive read front to back, as its bytes arrive: local headers, member data (stored or
//! inflated), data descriptors, then the central directory and end records kept whole.
//!
//! This is the layer under [`super::wheel`]: it knows the zip format and nothing of paths or
//! trees. Everything a local header claims is re-checked against the central directory once it
//! arrives ([`Central`]); an archive this reader cannot follow with certainty is
//! [`Step::Unusual`], and the caller goes back to reading the archive from a file (where the
//! central directory is read first, as every zip reader does).

use std::io::{self, BufRead};

use flate2::{Decompress, FlushDecompress, Status};

use super::UnpackError;

const LOCAL: u32 = 0x0403_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const END: u32 = 0x0605_4b50;
const END64: u32 = 0x0606_4b50;
const LOCATOR64: u32 = 0x0706_4b50;
const DESCRIPTOR: u32 = 0x0807_4b50;
/// The zip64 extra field's id.
const ZIP64: u16 = 0x0001;
/// The most central directory and end records kept in memory (about 300,000 members with
/// 200-byte names); a larger one is read from a file instead.
const MAX_TAIL: usize = 64 << 20;

/// The bytes of the archive, read in place from the reader's buffer, with the count consumed
/// so far (the archive offset).
pub(crate) struct Input<R> {
    reader: R,
    offset: u64,
}

impl<R: BufRead> Input<R> {
    pub(crate) fn new(reader: R) -> Self {
        Input { reader, offset: 0 }
    }

    /// The archive offset of the next unconsumed byte.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// Buffered bytes, reading more when none are; empty at the end of the input.
    fn available(&mut self) -> Result<&[u8], UnpackError> {
        loop {
            match self.reader.fill_buf() {
                // Reborrowed: the loop's borrow ends with this arm.
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(UnpackError::Io(e)),
            }
        }
        Ok(self.reader.fill_buf()?)
    }

    fn consume(&mut self, n: usize) {
        self.reader.consume(n);
        self.offset += n as u64;
    }

    /// Exactly `n` bytes; the input ending first is an error naming `what`.
    fn exact(&mut self, n: usize, what: &str) -> Result<Vec<u8>, UnpackError> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let avail = self.available()?;
            if avail.is_empty() {
                return Err(ended(what));
            }
            let k = avail.len().min(n - out.len());
            out.extend_from_slice(&avail[..k]);
            self.consume(k);
        }
        Ok(out)
    }

    fn u32(&mut self, what: &str) -> Result<u32, UnpackError> {
        let b = self.exact(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Everything up to the end of the input, at most `max` bytes (`None` past it).
    fn rest(&mut self, max: usize) -> Result<Option<Vec<u8>>, UnpackError> {
        let mut out = Vec::new();
        loop {
            let avail = self.available()?;
            if avail.is_empty() {
                return Ok(Some(out));
            }
            if out.len() + avail.len() > max {
                return Ok(None);
            }
            out.extend_from_slice(avail);
            let n = avail.len();
            self.consume(n);
        }
    }
}

fn ended(what: &str) -> UnpackError {
    UnpackError::Corrupt(format!("the archive ends inside {what}"))
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// A member's local header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Local {
    /// Where the header starts in the archive.
    pub(crate) offset: u64,
    /// The name's bytes as stored.
    pub(crate) name: Vec<u8>,
    /// General purpose flags (bit 0: encrypted, bit 3: data descriptor, bit 11: UTF-8 name).
    pub(crate) flags: u16,
    /// 0 stored, 8 deflated.
    pub(crate) method: u16,
    /// CRC-32, compressed and uncompressed size; from the data descriptor when bit 3 is set
    /// (zero until the member has been read).
    pub(crate) crc: u32,
    pub(crate) compressed: u64,
    pub(crate) size: u64,
    /// Whether the sizes are zip64 (8 bytes in a data descriptor).
    zip64: bool,
}

impl Local {
    /// Whether a data descriptor after the data gives the CRC and sizes.
    pub(crate) fn described(&self) -> bool {
        self.flags & 8 != 0
    }
}

/// What comes next in the archive.
pub(crate) enum Step {
    /// A member's header: its data follows, to be read with [`read_data`].
    Member(Local),
    /// The central directory and end records, whole.
    End(Vec<u8>),
    /// Something this reader does not follow (a prefix before the first member, a stored member
    /// of unknown length, an oversized central directory): read the archive from a file.
    Unusual(String),
}

/// Reads the next record's signature and, for a member, its local header.
pub(crate) fn next<R: BufRead>(input: &mut Input<R>) -> Result<Step, UnpackError> {
    let offset = input.offset();
    let sig = input.u32("a record signature")?;
    match sig {
        LOCAL => {}
        CENTRAL | END | END64 => {
            let mut tail = sig.to_le_bytes().to_vec();
            return Ok(match input.rest(MAX_TAIL)? {
                Some(rest) => {
                    tail.extend_from_slice(&rest);
                    Step::End(tail)
                }
                None => Step::Unusual(format!(
                    "its central directory is over {} MiB",
                    MAX_TAIL >> 20
                )),
            });
        }
        other => {
            return Ok(Step::Unusual(format!(
                "an unknown record {other:#010x} at byte {offset}"
            )))
        }
    }
    let h = input.exact(26, "a local header")?;
    let (flags, method) = (le16(&h, 2), le16(&h, 4));
    let (crc, compressed, size) = (le32(&h, 10), le32(&h, 14), le32(&h, 18));
    let (name_len, extra_len) = (le16(&h, 22) as usize, le16(&h, 24) as usize);
    let name = input.exact(name_len, "a local header's name")?;
    let extra = input.exact(extra_len, "a local header's extra field")?;
    let mut local = Local {
        offset,
        name,
        flags,
        method,
        crc,
        compressed: u64::from(compressed),
        size: u64::from(size),
        zip64: false,
    };
    if let Some(z) = extra_field(&extra, ZIP64) {
        // In a local header the zip64 field holds both sizes, uncompressed first.
        if z.len() < 16 {
            return Ok(Step::Unusual(
                "a short zip64 field in a local header".into(),
            ));
        }
        local.zip64 = true;
        if size == u32::MAX {
            local.size = le64(z, 0);
        }
        if compressed == u32::MAX {
            local.compressed = le64(z, 8);
        }
    } else if size == u32::MAX || compressed == u32::MAX {
        return Ok(Step::Unusual(
            "a member of zip64 size without its zip64 field".into(),
        ));
    }
    if local.described() && method != 8 {
        return Ok(Step::Unusual(
            "a member whose length only its data descriptor gives".into(),
        ));
    }
    if method != 0 && method != 8 {
        return Ok(Step::Unusual(format!("compression method {method}")));
    }
    Ok(Step::Member(local))
}

fn extra_field(extra: &[u8], id: u16) -> Option<&[u8]> {
    let mut at = 0;
    while at + 4 <= extra.len() {
        let (tag, len) = (le16(extra, at), le16(extra, at + 2) as usize);
        let body = extra.get(at + 4..at + 4 + len)?;
        if tag == id {
            return Some(body);
        }
        at += 4 + len;
    }
    None
}

/// Reads a member's data, stored or inflated, into `sink` in pieces of at most `out.len()`
/// bytes; more than `max` bytes of output stop with [`UnpackError::Corrupt`] before the excess
/// reaches the sink. Fills in the descriptor's CRC and sizes when the header defers them, and
/// checks the CRC and both sizes. `tick` runs between pieces (the cancel check).
pub(crate) fn read_data<R: BufRead>(
    input: &mut Input<R>,
    local: &mut Local,
    out: &mut [u8],
    max: u64,
    sink: &mut dyn FnMut(&[u8]) -> Result<(), UnpackError>,
    tick: &dyn Fn() -> Result<(), UnpackError>,
) -> Result<(), UnpackError> {
    let described = local.described();
    let mut crc = crc32fast::Hasher::new();
    let mut produced = 0u64;
    let mut taken = 0u64;
    let mut emit = |piece: &[u8], produced: &mut u64| -> Result<(), UnpackError> {
        *produced += piece.len() as u64;
        if *produced > max {
            return Err(UnpackError::Corrupt(format!(
                "a member holds more than the {max} bytes it declared"
            )));
        }
        crc.update(piece);
        sink(piece)
    };
    if local.method == 0 {
        while taken < local.compressed {
            tick()?;
            let avail = input.available()?;
            if avail.is_empty() {
                return Err(ended("a member's data"));
            }
            let k = (avail.len() as u64).min(local.compressed - taken) as usize;
            let k = k.min(out.len());
            out[..k].copy_from_slice(&avail[..k]);
            input.consume(k);
            taken += k as u64;
            emit(&out[..k], &mut produced)?;
        }
    } else {
        let mut inflate = Decompress::new(false);
        loop {
            tick()?;
            let room = if described {
                u64::MAX
            } else {
                local.compressed - taken
            };
            let avail = input.available()?;
            let avail = &avail[..(avail.len() as u64).min(room) as usize];
            let starved = avail.is_empty();
            let (in0, out0) = (inflate.total_in(), inflate.total_out());
            let status = inflate
                .decompress(avail, out, FlushDecompress::None)
                .map_err(|e| UnpackError::Corrupt(format!("bad deflate data: {e}")))?;
            let used = (inflate.total_in() - in0) as usize;
            let made = (inflate.total_out() - out0) as usize;
            input.consume(used);
            taken += used as u64;
            emit(&out[..made], &mut produced)?;
            if status == Status::StreamEnd {
                break;
            }
            if used == 0 && made == 0 && starved {
                return Err(ended("a member's compressed data"));
            }
        }
        if !described && taken < local.compressed {
            // Bytes after the end of the deflate stream but inside the member: skipped, as a
            // reader that takes the compressed size from the header does.
            let skip = local.compressed - taken;
            input.exact(
                usize::try_from(skip).map_err(|_| ended("a member's data"))?,
                "a member's data",
            )?;
            taken = local.compressed;
        }
    }
    if described {
        let mut first = input.u32("a data descriptor")?;
        if first == DESCRIPTOR {
            first = input.u32("a data descriptor")?;
        }
        local.crc = first;
        if local.zip64 {
            let b = input.exact(16, "a data descriptor")?;
            (local.compressed, local.size) = (le64(&b, 0), le64(&b, 8));
        } else {
            let b = input.exact(8, "a data descriptor")?;
            (local.compressed, local.size) = (u64::from(le32(&b, 0)), u64::from(le32(&b, 4)));
        }
    }
    let sum = crc.finalize();
    if sum != local.crc {
        return Err(UnpackError::Corrupt(format!(
            "CRC-32 {:08x} does not match the {:08x} the archive records",
            sum, local.crc
        )));
    }
    if produced != local.size || taken != local.compressed {
        return Err(UnpackError::Corrupt(format!(
            "a member holds {produced} bytes ({taken} compressed) but declared {} ({})",
            local.size, local.compressed
        )));
    }
    Ok(())
}

/// One central directory record: what the local header must agree with, and the attributes
/// only the central directory has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Central {
    pub(crate) offset: u64,
    pub(crate) name: Vec<u8>,
    pub(crate) flags: u16,
    pub(crate) method: u16,
    pub(crate) crc: u32,
    pub(crate) compressed: u64,
    pub(crate) size: u64,
    /// The external attributes' high half (the Unix mode), as [`super::zip`] reads it.
    pub(crate) mode: u32,
}

/// Parses the central directory and end records (`tail`, which started at archive offset
/// `start`). `Err(reason)` when they do not describe exactly the archive that was read.
pub(crate) fn central(tail: &[u8], start: u64) -> Result<Vec<Central>, String> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while tail.len() >= at + 4 && le32(tail, at) == CENTRAL {
        let h = tail
            .get(at..at + 46)
            .ok_or("a central directory record is cut short")?;
        let (name_len, extra_len, comment_len) = (
            le16(h, 28) as usize,
            le16(h, 30) as usize,
            le16(h, 32) as usize,
        );
        let name = tail
            .get(at + 46..at + 46 + name_len)
            .ok_or("a central directory name is cut short")?
            .to_vec();
        let extra = tail
            .get(at + 46 + name_len..at + 46 + name_len + extra_len)
            .ok_or("a central directory extra field is cut short")?;
        let (mut size, mut compressed, mut offset) = (
            u64::from(le32(h, 24)),
            u64::from(le32(h, 20)),
            u64::from(le32(h, 42)),
        );
        // The zip64 field holds, in this order, only the values whose 32-bit field is full.
        let mut z = extra_field(extra, ZIP64).unwrap_or(&[]);
        for v in [&mut size, &mut compressed, &mut offset] {
            if *v == u64::from(u32::MAX) {
                let b = z.get(..8).ok_or("a zip64 value is missing")?;
                *v = le64(b, 0);
                z = &z[8..];
            }
        }
        out.push(Central {
            offset,
            name,
            flags: le16(h, 8),
            method: le16(h, 10),
            crc: le32(h, 16),
            compressed,
            size,
            mode: le32(h, 38) >> 16,
        });
        at += 46 + name_len + extra_len + comment_len;
    }
    let cd_size = at as u64;
    // The zip64 end record and its locator, when the archive has them.
    let mut counts = None;
    if tail.len() >= at + 4 && le32(tail, at) == END64 {
        let h = tail
            .get(at..at + 56)
            .ok_or("the zip64 end record is cut short")?;
        let len = usize::try_from(le64(h, 4)).map_err(|_| "a zip64 end record too long")?;
        counts = Some((le64(h, 32), le64(h, 40), le64(h, 48)));
        at += 12 + len;
        if tail.len() < at + 20 || le32(tail, at) != LOCATOR64 {
            return Err("a zip64 end record without its locator".into());
        }
        at += 20;
    }
    let h = tail
        .get(at..at + 22)
        .filter(|h| le32(h, 0) == END)
        .ok_or("no end of central directory record where it should be")?;
    let comment = le16(h, 20) as usize;
    if tail.len() != at + 22 + comment {
        return Err("bytes after the end of central directory record".into());
    }
    let (entries, size, offset) = match counts {
        Some(c) => c,
        None => (
            u64::from(le16(h, 10)),
            u64::from(le32(h, 12)),
            u64::from(le32(h, 16)),
        ),
    };
    if le16(h, 4) != 0 || le16(h, 6) != 0 {
        return Err("a multi-disk archive".into());
    }
    if entries != out.len() as u64 || size != cd_size || offset != start {
        return Err(format!(
            "the end record says {entries} members, {size} bytes at {offset}; \
             the central directory has {}, {cd_size} bytes at {start}",
            out.len()
        ));
    }
    Ok(out)
}

/// Whether a local header and its central directory record describe the same member.
pub(crate) fn agree(local: &Local, central: &Central) -> bool {
    local.offset == central.offset
        && local.name == central.name
        && local.method == central.method
        && local.crc == central.crc
        && local.compressed == central.compressed
        && local.size == central.size
        && (local.flags & 1) == (central.flags & 1)
}
