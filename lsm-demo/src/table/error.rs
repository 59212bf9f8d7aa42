//! [`TableError`]: why building, opening or reading a table failed.

#[cfg(doc)] // for the links in the docs
use super::TableBuilder;
use super::{
    BASE_FORMAT_VERSION, BlockKind, FOOTER_LEN, FORMAT_VERSION, MAGIC, MAX_ENTRY_PART_LEN,
};
use std::fmt;
use std::io;
use std::path::PathBuf;

/// Why building, opening or reading a table failed.
///
/// # Examples
///
/// ```
/// use lsm_demo::table::{Table, TableError};
/// use std::{io, sync::Arc};
/// # let cmp = Arc::new(key_comparator::BytewiseComparator);
/// let err = Table::open(Arc::new(vec![0u8; 10]), 10, cmp.clone(), |k| k).unwrap_err();
/// assert!(matches!(err, TableError::TooShort { file_size: 10 }));
/// let err = Table::open(Arc::new(vec![0u8; 64]), 64, cmp, |k| k).unwrap_err();
/// assert!(matches!(err, TableError::BadMagic { found } if found == [0; 8]));
/// // As an I/O error, a damaged file is `InvalidData`.
/// assert_eq!(io::Error::from(err).kind(), io::ErrorKind::InvalidData);
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum TableError {
    /// The file system failed (a read or a write).
    Io {
        /// File offset of the operation.
        offset: u64,
        /// The underlying error.
        source: io::Error,
    },
    /// The file is shorter than a footer.
    TooShort {
        /// The file size given.
        file_size: u64,
    },
    /// The file is shorter than the size it was opened with.
    Truncated {
        /// The size it should have.
        expected: u64,
        /// The size it has.
        actual: u64,
    },
    /// The last 8 bytes are not [`MAGIC`]: not a table file.
    BadMagic {
        /// The bytes found.
        found: [u8; 8],
    },
    /// A format version this code does not read.
    UnsupportedVersion {
        /// The version found.
        version: u32,
    },
    /// A block's (or the footer's) checksum does not match its contents.
    ChecksumMismatch {
        /// Which block.
        block: BlockKind,
        /// File offset of the block.
        offset: u64,
        /// The checksum stored in the file.
        stored: u32,
        /// The checksum of the bytes read.
        computed: u32,
    },
    /// A block's contents are inconsistent although its checksum matches
    /// (or a handle points outside the file).
    Corruption {
        /// Which block.
        block: BlockKind,
        /// File offset of the block.
        offset: u64,
        /// What is wrong.
        detail: &'static str,
    },
    /// [`TableBuilder::add`] got a key not greater than the previous one.
    OutOfOrder {
        /// The previous key.
        previous: Vec<u8>,
        /// The key refused.
        key: Vec<u8>,
    },
    /// A key or value longer than [`MAX_ENTRY_PART_LEN`].
    EntryTooLarge {
        /// Key length.
        key_len: usize,
        /// Value length.
        value_len: usize,
    },
    /// The builder already failed on an I/O error and cannot continue.
    BuilderFailed,
    /// An error in a named file.
    InFile {
        /// The file.
        file: PathBuf,
        /// The error.
        source: Box<TableError>,
    },
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { offset, source } => write!(f, "I/O error at offset {offset}: {source}"),
            Self::TooShort { file_size } => write!(
                f,
                "table file of {file_size} bytes is shorter than its {FOOTER_LEN}-byte footer"
            ),
            Self::Truncated { expected, actual } => write!(
                f,
                "table file truncated: {actual} bytes, expected {expected}"
            ),
            Self::BadMagic { found } => {
                write!(
                    f,
                    "not a table file: magic {found:02x?}, expected {MAGIC:02x?}"
                )
            }
            Self::UnsupportedVersion { version } => write!(
                f,
                "unsupported table format version {version} (this build reads {BASE_FORMAT_VERSION} to {FORMAT_VERSION})"
            ),
            Self::ChecksumMismatch {
                block,
                offset,
                stored,
                computed,
            } => write!(
                f,
                "checksum mismatch in {block} at offset {offset}: stored {stored:#010x}, computed {computed:#010x}"
            ),
            Self::Corruption {
                block,
                offset,
                detail,
            } => write!(f, "corrupt {block} at offset {offset}: {detail}"),
            Self::OutOfOrder { previous, key } => write!(
                f,
                "key {} added after {}: keys must be strictly increasing",
                escape(key),
                escape(previous)
            ),
            Self::EntryTooLarge { key_len, value_len } => write!(
                f,
                "entry too large: key {key_len} bytes, value {value_len} bytes (limit {MAX_ENTRY_PART_LEN} each)"
            ),
            Self::BuilderFailed => f.write_str("table builder already failed on an I/O error"),
            Self::InFile { file, source } => write!(f, "{}: {source}", file.display()),
        }
    }
}

impl std::error::Error for TableError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::InFile { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

impl TableError {
    /// The [`io::ErrorKind`] this error maps to.
    fn io_kind(&self) -> io::ErrorKind {
        match self {
            Self::Io { source, .. } => source.kind(),
            Self::InFile { source, .. } => source.io_kind(),
            Self::OutOfOrder { .. } | Self::EntryTooLarge { .. } | Self::BuilderFailed => {
                io::ErrorKind::InvalidInput
            }
            _ => io::ErrorKind::InvalidData,
        }
    }
}

impl From<TableError> for io::Error {
    /// I/O errors keep their kind; misuse by the caller becomes
    /// [`io::ErrorKind::InvalidInput`] and damaged files
    /// [`io::ErrorKind::InvalidData`], with the table error as the source.
    fn from(err: TableError) -> Self {
        io::Error::new(err.io_kind(), err)
    }
}

/// Printable form of a key for error messages (truncated, escaped).
fn escape(key: &[u8]) -> String {
    let shown: String = key
        .iter()
        .take(64)
        .flat_map(|&b| std::ascii::escape_default(b))
        .map(char::from)
        .collect();
    if key.len() > 64 {
        format!("\"{shown}\"... ({} bytes)", key.len())
    } else {
        format!("\"{shown}\"")
    }
}

/// `TableError` holds an `io::Error`, which is not `Clone`: copies keep the
/// kind and message.
pub(super) fn copy_error(err: &TableError) -> TableError {
    match err {
        TableError::Io { offset, source } => TableError::Io {
            offset: *offset,
            source: io::Error::new(source.kind(), source.to_string()),
        },
        TableError::TooShort { file_size } => TableError::TooShort {
            file_size: *file_size,
        },
        TableError::Truncated { expected, actual } => TableError::Truncated {
            expected: *expected,
            actual: *actual,
        },
        TableError::BadMagic { found } => TableError::BadMagic { found: *found },
        TableError::UnsupportedVersion { version } => {
            TableError::UnsupportedVersion { version: *version }
        }
        TableError::ChecksumMismatch {
            block,
            offset,
            stored,
            computed,
        } => TableError::ChecksumMismatch {
            block: *block,
            offset: *offset,
            stored: *stored,
            computed: *computed,
        },
        TableError::Corruption {
            block,
            offset,
            detail,
        } => TableError::Corruption {
            block: *block,
            offset: *offset,
            detail,
        },
        TableError::OutOfOrder { previous, key } => TableError::OutOfOrder {
            previous: previous.clone(),
            key: key.clone(),
        },
        TableError::EntryTooLarge { key_len, value_len } => TableError::EntryTooLarge {
            key_len: *key_len,
            value_len: *value_len,
        },
        TableError::BuilderFailed => TableError::BuilderFailed,
        TableError::InFile { file, source } => TableError::InFile {
            file: file.clone(),
            source: Box::new(copy_error(source)),
        },
    }
}
