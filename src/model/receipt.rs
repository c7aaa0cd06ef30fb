//! Receipts: what an install put where, every file with its size and sha256, so doctor can tell
//! what changed, repair can put it back and uninstall can remove exactly it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The receipt's file name inside the prefix.
pub const FILE_NAME: &str = ".cudaup-receipt.json";

/// One installed component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptComponent {
    /// `cuda_nvcc`, `nvidia-cuda-nvcc`, `cudnn`.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Where it was fetched from.
    pub url: String,
    /// The archive's sha256 (the cache key for repair).
    pub sha256: String,
    /// The archive's size, when known.
    pub size: Option<u64>,
}

/// One installed path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptFile {
    /// Relative to the prefix.
    pub path: PathBuf,
    /// Size in bytes (files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// sha256 (files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Link target (symlinks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<PathBuf>,
}

/// A toolkit install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// Format version.
    pub schema_version: u32,
    /// The prefix (absolute).
    pub prefix: PathBuf,
    /// CUDA toolkit release.
    pub cuda: String,
    /// cuDNN version, if installed.
    pub cudnn: Option<String>,
    /// `redist <base>` or `wheels <index>`.
    pub source: String,
    /// Seconds since the Unix epoch.
    pub installed_at: u64,
    /// The components.
    pub components: Vec<ReceiptComponent>,
    /// Every file and symlink, sorted.
    pub files: Vec<ReceiptFile>,
}

impl Receipt {
    /// Reads the receipt inside `prefix`, if there is one.
    pub fn read(prefix: &Path) -> std::io::Result<Option<Receipt>> {
        let path = prefix.join(FILE_NAME);
        match fs_err::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{}: {e}", path.display()),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes the receipt into `dir` (the staging prefix, so it appears with the files), as a
    /// new file: nothing an archive put there is followed or overwritten.
    pub fn write_into(&self, dir: &Path) -> std::io::Result<()> {
        let text = serde_json::to_vec_pretty(self).expect("receipts serialise");
        let mut f = fs_err::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.join(FILE_NAME))?;
        std::io::Write::write_all(&mut f, &text)
    }
}

/// Where a toolkit's bytes came from, as its receipt records it (`redist <base>`, `wheels
/// <index>`): the location is the text written, for the install layer to parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiptSource<'a> {
    /// NVIDIA's redistributable layout under this base.
    Redist(&'a str),
    /// NVIDIA's wheels on this package index.
    Wheels(&'a str),
}

impl Receipt {
    /// The source the receipt records, read once; `None` when the text is not `<kind>
    /// <location>`. Any kind but `wheels` is the redistributable layout, the only other one
    /// an install writes.
    pub fn source(&self) -> Option<ReceiptSource<'_>> {
        match self.source.split_once(' ')? {
            ("wheels", l) => Some(ReceiptSource::Wheels(l)),
            (_, l) => Some(ReceiptSource::Redist(l)),
        }
    }

    /// Whether `other` records the same install (what was asked for and when), whatever the
    /// file lists say: how a journal is matched with the receipt its install left.
    pub fn same_install(&self, other: &Receipt) -> bool {
        self.prefix == other.prefix
            && self.cuda == other.cuda
            && self.cudnn == other.cudnn
            && self.source == other.source
            && self.installed_at == other.installed_at
            && self.components == other.components
    }
}
