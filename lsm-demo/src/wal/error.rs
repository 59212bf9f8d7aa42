//! What goes wrong reading a log: the kinds of damage, the report of one,
//! and the reader's errors.

use std::fmt;
use std::io;
use std::path::PathBuf;

use super::FORMAT_VERSION;

/// The kind of damage found in a log.
///
/// # Examples
///
/// ```
/// use lsm_demo::wal::{read_all, CorruptionKind, DBRecoveryMode};
/// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// # use lsm_demo::wal::LogWriter;
/// # use std::path::Path;
/// # let fs = FaultInjectionFs::new();
/// # let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
/// # log.add_record(b"one").unwrap();
///
/// let mut bytes = fs.read_file(Path::new("l")).unwrap();
/// bytes.extend_from_slice(&[0; 32]); // the file grew, but its data never got written
/// let tail = read_all(bytes, DBRecoveryMode::PointInTime).unwrap().tail.unwrap();
/// assert_eq!(tail.kind, CorruptionKind::HeaderChecksumMismatch);
/// assert_eq!(tail.kind.to_string(), "record header checksum mismatch");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorruptionKind {
    /// The file is shorter than its header, or the header is zeros.
    TornFileHeader,
    /// The file header fails its checksum.
    FileHeaderChecksumMismatch,
    /// Fewer bytes are left than a record header needs.
    TornRecordHeader,
    /// A record header fails its checksum (damaged, or zeros/garbage).
    HeaderChecksumMismatch,
    /// A record's payload runs past the end of the file.
    ShortRecord {
        /// The payload length the header claims.
        length: u32,
        /// The bytes left after the header.
        available: u64,
    },
    /// A record's payload fails its checksum.
    PayloadChecksumMismatch,
}

impl CorruptionKind {
    /// Whether this damage is what an interrupted append leaves (a partial
    /// header or record), as opposed to bytes that are present but wrong.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{read_all, DBRecoveryMode};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    /// # log.add_record(b"record").unwrap();
    ///
    /// let mut bytes = fs.read_file(Path::new("l")).unwrap();
    /// let cut = read_all(bytes[..bytes.len() - 1].to_vec(), DBRecoveryMode::PointInTime).unwrap();
    /// assert!(cut.tail.unwrap().kind.is_truncation()); // a short record
    /// *bytes.last_mut().unwrap() ^= 1;
    /// let flipped = read_all(bytes, DBRecoveryMode::PointInTime).unwrap();
    /// assert!(!flipped.tail.unwrap().kind.is_truncation()); // a payload checksum mismatch
    /// ```
    pub fn is_truncation(self) -> bool {
        matches!(
            self,
            Self::TornFileHeader | Self::TornRecordHeader | Self::ShortRecord { .. }
        )
    }
}

impl fmt::Display for CorruptionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TornFileHeader => f.write_str("torn file header"),
            Self::FileHeaderChecksumMismatch => f.write_str("file header checksum mismatch"),
            Self::TornRecordHeader => f.write_str("torn record header"),
            Self::HeaderChecksumMismatch => f.write_str("record header checksum mismatch"),
            Self::ShortRecord { length, available } => write!(
                f,
                "short record: {length}-byte payload, {available} bytes left in the file"
            ),
            Self::PayloadChecksumMismatch => f.write_str("record payload checksum mismatch"),
        }
    }
}

/// Where and how a log is damaged, and what recovery drops.
///
/// # Examples
///
/// ```
/// use lsm_demo::wal::{LogReader, DBRecoveryMode, FILE_HEADER_LEN, RECORD_HEADER_LEN};
/// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// # use lsm_demo::wal::LogWriter;
/// # use std::path::Path;
/// # let fs = FaultInjectionFs::new();
/// # let mut log = LogWriter::new(fs.create(Path::new("000004.log")).unwrap()).unwrap();
/// # log.add_record(b"one").unwrap();
/// # log.add_record(b"two").unwrap();
///
/// let path = Path::new("000004.log");
/// let mut bytes = fs.read_file(path).unwrap();
/// bytes[FILE_HEADER_LEN + RECORD_HEADER_LEN] ^= 1; // damage the payload of "one"
/// fs.create(path).unwrap().append(&bytes).unwrap();
/// let mut r = LogReader::open(&fs, path, DBRecoveryMode::PointInTime).unwrap();
/// assert_eq!(r.next_record().unwrap(), None);
/// let report = r.tail_report().unwrap();
/// assert_eq!(report.file.as_deref(), Some(path));
/// assert_eq!(report.offset, FILE_HEADER_LEN as u64);
/// assert_eq!(report.dropped_bytes, (bytes.len() - FILE_HEADER_LEN) as u64);
/// assert!(report.records_follow); // "two" is intact: more than a torn tail
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalCorruption {
    /// The log file, when known.
    pub file: Option<PathBuf>,
    /// Offset of the damaged record (or of the file header).
    pub offset: u64,
    /// What is wrong.
    pub kind: CorruptionKind,
    /// Bytes from `offset` to the end of the file, all dropped.
    pub dropped_bytes: u64,
    /// Whether a well-formed record (both checksums valid) starts somewhere
    /// after the damage: if so, this is not a plain torn tail.
    pub records_follow: bool,
    /// Whether no record follows and every dropped byte is zero: a file
    /// that grew before its data was written.
    pub zeroed: bool,
}

impl WalCorruption {
    /// Whether this is what a crash in the middle of an append leaves: an
    /// incomplete record, or zeros, at the end of the log, with no intact
    /// record after it.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{read_all, DBRecoveryMode};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    /// # log.add_record(b"one").unwrap();
    /// # log.add_record(b"two").unwrap();
    ///
    /// let bytes = fs.read_file(Path::new("l")).unwrap();
    /// let mut zeros = bytes.clone();
    /// zeros.extend_from_slice(&[0; 40]);
    /// let tail = read_all(zeros, DBRecoveryMode::PointInTime).unwrap().tail.unwrap();
    /// assert!(tail.zeroed && tail.is_torn_tail());
    /// let mut flipped = bytes;
    /// flipped[20 + 12] ^= 1; // the payload of "one": "two" follows
    /// let damage = read_all(flipped, DBRecoveryMode::PointInTime).unwrap().tail.unwrap();
    /// assert!(!damage.is_torn_tail());
    /// ```
    pub fn is_torn_tail(&self) -> bool {
        !self.records_follow && (self.kind.is_truncation() || self.zeroed)
    }
}

impl fmt::Display for WalCorruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        write!(
            f,
            "{} at offset {} ({} bytes to the end",
            self.kind, self.offset, self.dropped_bytes
        )?;
        if self.records_follow {
            f.write_str("; well-formed records follow, so this is not only a torn tail")?;
        }
        f.write_str(")")
    }
}

/// Why a log could not be read.
///
/// # Examples
///
/// ```
/// use lsm_demo::wal::{LogReader, DBRecoveryMode, WalError};
/// use std::io;
/// let err = LogReader::new(b"lsm-wal\x04".to_vec(), DBRecoveryMode::AbsoluteConsistency).unwrap_err();
/// assert!(matches!(err, WalError::UnsupportedVersion { version: 4, .. }));
/// let err = LogReader::new(b"not a log".to_vec(), DBRecoveryMode::PointInTime).unwrap_err();
/// assert!(matches!(err, WalError::BadMagic { file: None, .. }));
/// // As an I/O error, anything but a failed read is `InvalidData`.
/// assert_eq!(io::Error::from(err).kind(), io::ErrorKind::InvalidData);
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum WalError {
    /// Reading the file failed.
    Io {
        /// The file, when known.
        file: Option<PathBuf>,
        /// The underlying error.
        source: io::Error,
    },
    /// The file does not start with [`MAGIC`](super::MAGIC): not a log file.
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
        /// The version byte found.
        version: u8,
    },
    /// A damaged record under
    /// [`DBRecoveryMode::AbsoluteConsistency`](super::DBRecoveryMode::AbsoluteConsistency).
    Corruption(WalCorruption),
}

fn file_prefix(file: &Option<PathBuf>) -> String {
    file.as_ref()
        .map(|f| format!("{}: ", f.display()))
        .unwrap_or_default()
}

impl fmt::Display for WalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { file, source } => {
                write!(f, "{}reading the log: {source}", file_prefix(file))
            }
            Self::BadMagic { file, found } => write!(
                f,
                "{}not a log file: header {found:02x?}",
                file_prefix(file)
            ),
            Self::UnsupportedVersion { file, version } => write!(
                f,
                "{}unsupported log format version {version} (this build reads {FORMAT_VERSION})",
                file_prefix(file)
            ),
            Self::Corruption(c) => write!(f, "corrupt log: {c}"),
        }
    }
}

impl std::error::Error for WalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<WalError> for io::Error {
    /// Read errors keep their kind; damage becomes
    /// [`io::ErrorKind::InvalidData`], with the log error as the source.
    fn from(err: WalError) -> Self {
        let kind = match &err {
            WalError::Io { source, .. } => source.kind(),
            _ => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, err)
    }
}

// ---------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------
