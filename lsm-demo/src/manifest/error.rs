//! What is wrong with a manifest that does not read.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::{CRC_LEN, FORMAT_VERSION, HEADER_LEN};

/// Why a manifest could not be read.
///
/// # Examples
///
/// ```
/// use lsm_demo::manifest::{Manifest, ManifestError};
/// use std::io;
/// assert!(matches!(Manifest::decode(b"lsm"), Err(ManifestError::TooShort { len: 3, .. })));
/// let err = Manifest::decode(b"not a manifest, just some text").unwrap_err();
/// assert!(matches!(err, ManifestError::BadMagic { .. }));
/// assert_eq!(io::Error::from(err).kind(), io::ErrorKind::InvalidData);
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum ManifestError {
    /// Reading the file failed.
    Io {
        /// The file.
        file: Option<PathBuf>,
        /// The underlying error.
        source: io::Error,
    },
    /// Shorter than the fixed header and checksum.
    TooShort {
        /// The file, when known.
        file: Option<PathBuf>,
        /// Its length.
        len: u64,
    },
    /// Does not start with [`MAGIC`](super::MAGIC): not a manifest.
    BadMagic {
        /// The file, when known.
        file: Option<PathBuf>,
        /// The first 8 bytes.
        found: [u8; 8],
    },
    /// A version this code does not read.
    UnsupportedVersion {
        /// The file, when known.
        file: Option<PathBuf>,
        /// The version found.
        version: u32,
    },
    /// The length recorded in the header disagrees with the file's.
    LengthMismatch {
        /// The file, when known.
        file: Option<PathBuf>,
        /// The total length the header implies.
        expected: u64,
        /// The actual length.
        actual: u64,
    },
    /// The checksum does not match the contents.
    ChecksumMismatch {
        /// The file, when known.
        file: Option<PathBuf>,
        /// The checksum stored.
        stored: u32,
        /// The checksum computed.
        computed: u32,
    },
    /// The body does not parse although its checksum matches.
    Corrupt {
        /// The file, when known.
        file: Option<PathBuf>,
        /// Offset in the file of the bad field.
        offset: u64,
        /// What is wrong.
        detail: &'static str,
    },
    /// The body parses but its contents contradict each other (a file
    /// listed twice, a level out of range, a counter behind a live file).
    Inconsistent {
        /// The file, when known.
        file: Option<PathBuf>,
        /// What is wrong.
        detail: String,
    },
}

impl ManifestError {
    pub(super) fn with_file(mut self, path: &Path) -> Self {
        let slot = match &mut self {
            Self::Io { file, .. }
            | Self::TooShort { file, .. }
            | Self::BadMagic { file, .. }
            | Self::UnsupportedVersion { file, .. }
            | Self::LengthMismatch { file, .. }
            | Self::ChecksumMismatch { file, .. }
            | Self::Corrupt { file, .. }
            | Self::Inconsistent { file, .. } => file,
        };
        *slot = Some(path.to_path_buf());
        self
    }
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |file: &Option<PathBuf>| {
            file.as_ref().map_or_else(
                || "manifest".to_owned(),
                |f| format!("manifest {}", f.display()),
            )
        };
        match self {
            Self::Io { file, source } => write!(f, "reading {}: {source}", name(file)),
            Self::TooShort { file, len } => write!(
                f,
                "{} is {len} bytes, shorter than its {} bytes of header and checksum",
                name(file),
                HEADER_LEN + CRC_LEN
            ),
            Self::BadMagic { file, found } => {
                write!(f, "{} has a bad magic number {found:02x?}", name(file))
            }
            Self::UnsupportedVersion { file, version } => write!(
                f,
                "{} has unsupported format version {version} (this build reads {FORMAT_VERSION})",
                name(file)
            ),
            Self::LengthMismatch {
                file,
                expected,
                actual,
            } => write!(
                f,
                "{} is {actual} bytes but its header says {expected}",
                name(file)
            ),
            Self::ChecksumMismatch {
                file,
                stored,
                computed,
            } => write!(
                f,
                "{} checksum mismatch: stored {stored:#010x}, computed {computed:#010x}",
                name(file)
            ),
            Self::Corrupt {
                file,
                offset,
                detail,
            } => write!(f, "{} corrupt at offset {offset}: {detail}", name(file)),
            Self::Inconsistent { file, detail } => {
                write!(f, "{} is inconsistent: {detail}", name(file))
            }
        }
    }
}

impl std::error::Error for ManifestError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<ManifestError> for io::Error {
    /// Read errors keep their kind; damage becomes
    /// [`io::ErrorKind::InvalidData`], with the manifest error as source.
    fn from(err: ManifestError) -> Self {
        let kind = match &err {
            ManifestError::Io { source, .. } => source.kind(),
            _ => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, err)
    }
}
