//! The write-ahead log: a file of checksummed records, appended before the
//! memtable is touched and replayed on open.
//!
//! The engine appends one record per write group (the group's batches
//! encoded together) with [`LogWriter::add_record`], then
//! [`LogWriter::sync`] when a member asked for durability. On open,
//! [`LogReader`] reads the records back in order, one at a time from the
//! file; [`DBRecoveryMode`] says what damage fails the open and what is
//! dropped (and reported).
//!
//! # File format (version 2)
//!
//! ```text
//! file   = "lsm-wal" version:u8(=2) previous_log:u64 LE  header_crc:u32 LE  record*
//! record = length:u32 LE  payload_crc:u32 LE  header_crc:u32 LE  payload
//! ```
//!
//! `previous_log` is the number of the log written before this one (0 when
//! none is known): recovery follows the chain and notices a log missing
//! from the middle, which sequence numbers alone cannot show (writes made
//! without the log leave gaps in them); `header_crc` is the masked CRC32C of
//! the 16 bytes before it. Version 1 has neither field; both versions are
//! read.
//!
//! `payload_crc` is the masked CRC32C of the payload; `header_crc` the
//! masked CRC32C of the 8 bytes before it (length and payload checksum), so a
//! damaged length is recognised as such instead of sending the reader to a
//! wrong place. Masking (rotate right by 15, add `0x6c736d64`) keeps
//! checksums of data that itself embeds checksums effective. Records are not
//! split into blocks: a record is as large as its payload (at most
//! `u32::MAX` bytes).
//!
//! A crash can leave a torn tail: a partial file header, a partial record
//! header, a record whose payload runs past the end, or (on file systems
//! that extend a file before its data is written) zeros or garbage, which
//! fail a checksum. All are reported as a [`WalCorruption`] with its offset
//! and [`CorruptionKind`].
//!
//! # Examples
//!
//! ```
//! use lsm_demo::env::{FaultInjectionFs, FileSystem};
//! use lsm_demo::wal::{LogReader, LogWriter, DBRecoveryMode};
//! use std::path::Path;
//!
//! let fs = FaultInjectionFs::new();
//! let path = Path::new("000003.log");
//! let mut log = LogWriter::new(fs.create(path).unwrap()).unwrap();
//! log.add_record(b"group 1").unwrap();
//! log.add_record(b"group 2").unwrap();
//! log.sync().unwrap();
//!
//! let mut reader = LogReader::open(&fs, path, DBRecoveryMode::AbsoluteConsistency).unwrap();
//! assert_eq!(reader.next_record().unwrap(), Some(&b"group 1"[..]));
//! assert_eq!(reader.next_record().unwrap(), Some(&b"group 2"[..]));
//! assert_eq!(reader.next_record().unwrap(), None);
//! assert!(reader.tail_report().is_none());
//! ```

use crate::env::WritableFile;
use crate::table::coding::masked_crc;
use std::fmt;
use std::io;
use std::path::PathBuf;

/// The first 7 bytes of every log file.
pub const MAGIC: [u8; 7] = *b"lsm-wal";
/// The format version this module writes (byte 7 of the file); it reads
/// this one and version 1.
pub const FORMAT_VERSION: u8 = 2;
/// Size of the file header (magic, version, previous log number, checksum).
pub const FILE_HEADER_LEN: usize = 20;
/// Size of a record header (length, payload checksum, header checksum).
pub const RECORD_HEADER_LEN: usize = 12;
/// Largest payload of one record.
pub const MAX_RECORD_LEN: usize = u32::MAX as usize;

/// What recovery does with a damaged log record: RocksDB's
/// `WALRecoveryMode`, under the `rocksdb` crate's names.
///
/// A reader ([`LogReader`]) applies the mode to one log; the database
/// applies it across its logs (under [`PointInTime`](Self::PointInTime) no
/// log after a damaged one is replayed). Whatever is dropped is reported:
/// [`LogReader::dropped`], the database's info log and its counters.
///
/// # Examples
///
/// ```
/// use lsm_demo::wal::{read_all, DBRecoveryMode, WalError};
/// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// # use lsm_demo::wal::LogWriter;
/// # use std::path::Path;
/// # let fs = FaultInjectionFs::new();
/// # let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
/// # log.add_record(b"kept").unwrap();
/// # log.add_record(b"torn").unwrap();
///
/// let mut bytes = fs.read_file(Path::new("l")).unwrap();
/// bytes.truncate(bytes.len() - 2); // a crash cut the last record short
/// let strict = read_all(bytes.clone(), DBRecoveryMode::AbsoluteConsistency);
/// assert!(matches!(strict, Err(WalError::Corruption(_))));
/// for mode in [DBRecoveryMode::PointInTime, DBRecoveryMode::TolerateCorruptedTailRecords] {
///     let lenient = read_all(bytes.clone(), mode).unwrap();
///     assert_eq!(lenient.records, [b"kept"]);
///     assert!(lenient.tail.is_some());
/// }
/// assert_eq!(DBRecoveryMode::default(), DBRecoveryMode::PointInTime);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DBRecoveryMode {
    /// Drop an incomplete record at the end of a log, what a crash in the
    /// middle of an append leaves (a short record, or zeros where the file
    /// grew before its data was written), and replay the later logs; any
    /// other damage fails the open.
    TolerateCorruptedTailRecords,
    /// Any damage, a torn tail included, fails the open.
    AbsoluteConsistency,
    /// Replay up to the first damaged record and nothing after it, in that
    /// log or any later one: the database comes back as of a moment before
    /// the damage, never with later writes over a gap (the default).
    #[default]
    PointInTime,
    /// Skip each damaged stretch and go on with the next intact record, in
    /// every log. For salvage: the result may not be any moment's state (a
    /// deleted key can come back).
    SkipAnyCorruptedRecord,
}

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
/// let err = LogReader::new(b"lsm-wal\x03".to_vec(), DBRecoveryMode::AbsoluteConsistency).unwrap_err();
/// assert!(matches!(err, WalError::UnsupportedVersion { version: 3, .. }));
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
    /// The file does not start with [`MAGIC`]: not a log file.
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
    /// A damaged record under [`DBRecoveryMode::AbsoluteConsistency`].
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

/// Appends one record to `out`, framed as the log stores it (length,
/// payload checksum, header checksum, payload), its payload the
/// concatenation of `payload_parts`: the expensive part of a log append,
/// which any thread can do before handing the bytes to
/// [`LogWriter::add_framed`].
///
/// # Errors
///
/// [`io::ErrorKind::InvalidInput`] for a payload over [`MAX_RECORD_LEN`]
/// bytes (nothing is appended).
///
/// # Examples
///
/// ```
/// use lsm_demo::wal::{frame_record, RECORD_HEADER_LEN};
/// let mut out = Vec::new();
/// frame_record(&[b"group header", b"entries"], &mut out).unwrap();
/// assert_eq!(out.len(), RECORD_HEADER_LEN + 19);
/// ```
pub fn frame_record(payload_parts: &[&[u8]], out: &mut Vec<u8>) -> io::Result<()> {
    let total: usize = payload_parts.iter().map(|p| p.len()).sum();
    let len = u32::try_from(total).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("log record of {total} bytes exceeds the limit of {MAX_RECORD_LEN}"),
        )
    })?;
    let start = out.len();
    out.reserve(RECORD_HEADER_LEN + total);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&masked_crc(payload_parts).to_le_bytes());
    let header_crc = masked_crc(&[&out[start..start + 8]]);
    out.extend_from_slice(&header_crc.to_le_bytes());
    for part in payload_parts {
        out.extend_from_slice(part);
    }
    Ok(())
}

/// Appends records to a log file.
///
/// Each [`Self::add_record`] is a single append of header and payload. After
/// a failed append or sync, the file's tail is unknown (a partial record, or
/// data the kernel dropped after a failed `fsync`), so the writer refuses
/// every later call: the engine must switch to a new log file.
///
/// # Examples
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
/// use lsm_demo::wal::LogWriter;
/// use std::path::Path;
///
/// let fs = FaultInjectionFs::new();
/// let mut log = LogWriter::new(fs.create(Path::new("1.log")).unwrap()).unwrap();
/// fs.fail_next(FaultOp::Sync, 1);
/// log.add_record(b"x").unwrap();
/// assert!(log.sync().is_err());
/// assert!(log.add_record(b"y").is_err(), "a failed writer stays failed");
/// assert!(log.is_failed());
/// ```
#[derive(Debug)]
pub struct LogWriter {
    file: Box<dyn WritableFile>,
    buf: Vec<u8>,
    failed: Option<String>,
}

impl LogWriter {
    /// Starts a new log in `file`, which must be empty: the file header is
    /// appended (not synced) at once.
    ///
    /// Fails with [`io::ErrorKind::InvalidInput`] if the file is not empty;
    /// use [`Self::resume`] to continue an intact log.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{LogWriter, FILE_HEADER_LEN};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use std::{io, path::Path};
    /// # let fs = FaultInjectionFs::new();
    /// let log = LogWriter::new(fs.create(Path::new("5.log")).unwrap()).unwrap();
    /// assert_eq!(log.size(), FILE_HEADER_LEN as u64); // the header is written at once
    /// // A file that already holds data is refused.
    /// let err = LogWriter::new(fs.open_append(Path::new("5.log")).unwrap()).unwrap_err();
    /// assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    /// ```
    pub fn new(file: Box<dyn WritableFile>) -> io::Result<Self> {
        Self::with_previous(file, 0)
    }

    /// [`Self::new`] for a log that follows log `previous_log` (its number
    /// goes into the file header, see [`LogReader::previous_log`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{DBRecoveryMode, LogReader, LogWriter};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// LogWriter::with_previous(fs.create(Path::new("000009.log")).unwrap(), 6).unwrap();
    /// let r = LogReader::open(&fs, Path::new("000009.log"), DBRecoveryMode::PointInTime).unwrap();
    /// assert_eq!(r.previous_log(), Some(6));
    /// ```
    pub fn with_previous(file: Box<dyn WritableFile>, previous_log: u64) -> io::Result<Self> {
        if file.size() != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a new log needs an empty file, this one has {} bytes",
                    file.size()
                ),
            ));
        }
        let mut writer = Self::resume(file);
        let mut header = [0u8; FILE_HEADER_LEN];
        header[..MAGIC.len()].copy_from_slice(&MAGIC);
        header[MAGIC.len()] = FORMAT_VERSION;
        header[MAGIC.len() + 1..16].copy_from_slice(&previous_log.to_le_bytes());
        let crc = masked_crc(&[&header[..16]]);
        header[16..].copy_from_slice(&crc.to_le_bytes());
        writer.append(&header)?;
        Ok(writer)
    }

    /// Continues a log opened for appending. Only for a log that a
    /// [`LogReader`] read to the end without damage
    /// ([`LogReader::valid_len`] equal to the file size): records appended
    /// after a damaged tail would be unreachable.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{read_all, LogReader, LogWriter, DBRecoveryMode};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let mut log = LogWriter::new(fs.create(Path::new("000005.log")).unwrap()).unwrap();
    /// # log.add_record(b"1").unwrap();
    /// # drop(log);
    ///
    /// let path = Path::new("000005.log");
    /// // Read the log to its end, finding no damage ...
    /// let mut r = LogReader::open(&fs, path, DBRecoveryMode::AbsoluteConsistency).unwrap();
    /// while r.next_record().unwrap().is_some() {}
    /// assert_eq!(r.valid_len(), fs.file_size(path).unwrap());
    /// // ... then keep appending to it.
    /// let mut log = LogWriter::resume(fs.open_append(path).unwrap());
    /// log.add_record(b"2").unwrap();
    /// let records = read_all(fs.read_file(path).unwrap(), DBRecoveryMode::AbsoluteConsistency).unwrap().records;
    /// assert_eq!(records, [b"1", b"2"]);
    /// ```
    pub fn resume(file: Box<dyn WritableFile>) -> Self {
        Self {
            file,
            buf: Vec::new(),
            failed: None,
        }
    }

    fn check_failed(&self) -> io::Result<()> {
        match &self.failed {
            None => Ok(()),
            Some(why) => Err(io::Error::other(format!(
                "log writer failed earlier and refuses further writes: {why}"
            ))),
        }
    }

    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.check_failed()?;
        self.file.append(bytes).inspect_err(|e| {
            self.failed = Some(e.to_string());
        })
    }

    /// Appends one record holding `payload` (at most [`MAX_RECORD_LEN`]
    /// bytes; an empty payload is allowed). Not synced.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{read_all, DBRecoveryMode, RECORD_HEADER_LEN};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let path = Path::new("000003.log");
    /// # let mut log = LogWriter::new(fs.create(path).unwrap()).unwrap();
    ///
    /// let before = log.size();
    /// log.add_record(b"").unwrap(); // an empty record is fine
    /// log.add_record(b"batch").unwrap();
    /// assert_eq!(log.size(), before + 2 * RECORD_HEADER_LEN as u64 + 5);
    /// let records = read_all(fs.read_file(path).unwrap(), DBRecoveryMode::AbsoluteConsistency).unwrap().records;
    /// assert_eq!(records, [b"".to_vec(), b"batch".to_vec()]);
    /// ```
    pub fn add_record(&mut self, payload: &[u8]) -> io::Result<()> {
        self.check_failed()?;
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let result = frame_record(&[payload], &mut buf).and_then(|()| self.append(&buf));
        // Keep the buffer for the next record unless it grew huge.
        if buf.capacity() <= 1 << 20 {
            self.buf = buf;
        }
        result
    }

    /// A handle that syncs this log from another thread while appends go
    /// on (see [`crate::env::WritableFile::sync_handle`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use lsm_demo::wal::LogWriter;
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    /// let syncer = log.sync_handle().unwrap();
    /// log.add_record(b"x").unwrap();
    /// syncer.sync().unwrap();
    /// ```
    pub fn sync_handle(&self) -> io::Result<std::sync::Arc<dyn crate::env::FileSync>> {
        self.file.sync_handle()
    }

    /// Appends records framed by [`frame_record`] (any number, back to
    /// back) with one append. Not synced.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{frame_record, read_all, DBRecoveryMode, LogWriter};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    /// let mut framed = Vec::new();
    /// frame_record(&[b"one"], &mut framed).unwrap(); // framed by any thread
    /// frame_record(&[b"tw", b"o"], &mut framed).unwrap();
    /// log.add_framed(&framed).unwrap();
    /// let all = read_all(fs.read_file(Path::new("l")).unwrap(), DBRecoveryMode::AbsoluteConsistency).unwrap();
    /// assert_eq!(all.records, [b"one".to_vec(), b"two".to_vec()]);
    /// ```
    pub fn add_framed(&mut self, framed: &[u8]) -> io::Result<()> {
        self.append(framed)
    }

    /// Pushes appended records to the operating system.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{read_all, DBRecoveryMode};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let path = Path::new("000003.log");
    /// # let mut log = LogWriter::new(fs.create(path).unwrap()).unwrap();
    ///
    /// log.add_record(b"x").unwrap();
    /// log.flush().unwrap();
    /// // Readers see the record, but it would not survive a crash before `sync`.
    /// let records = read_all(fs.read_file(path).unwrap(), DBRecoveryMode::AbsoluteConsistency).unwrap().records;
    /// assert_eq!(records, [b"x"]);
    /// assert!(fs.unsynced_bytes(path).unwrap() > 0);
    /// ```
    pub fn flush(&mut self) -> io::Result<()> {
        self.check_failed()?;
        self.file.flush().inspect_err(|e| {
            self.failed = Some(e.to_string());
        })
    }

    /// Makes every record appended so far durable.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{read_all, LogWriter, DBRecoveryMode};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # fs.create_dir_all(Path::new("/db")).unwrap();
    /// let path = Path::new("/db/000003.log");
    /// let mut log = LogWriter::new(fs.create(path).unwrap()).unwrap();
    /// fs.sync_dir(Path::new("/db")).unwrap(); // make the new file's name durable
    /// log.add_record(b"synced").unwrap();
    /// log.sync().unwrap();
    /// log.add_record(b"not synced").unwrap();
    /// fs.simulate_crash();
    /// let records = read_all(fs.read_file(path).unwrap(), DBRecoveryMode::AbsoluteConsistency).unwrap().records;
    /// assert_eq!(records, [b"synced"]);
    /// ```
    pub fn sync(&mut self) -> io::Result<()> {
        self.check_failed()?;
        self.file.sync().inspect_err(|e| {
            self.failed = Some(e.to_string());
        })
    }

    /// The log file's size in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{FILE_HEADER_LEN, RECORD_HEADER_LEN};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let path = Path::new("000003.log");
    /// # let mut log = LogWriter::new(fs.create(path).unwrap()).unwrap();
    ///
    /// log.add_record(b"abc").unwrap();
    /// assert_eq!(log.size(), (FILE_HEADER_LEN + RECORD_HEADER_LEN + 3) as u64);
    /// assert_eq!(log.size(), fs.file_size(path).unwrap());
    /// ```
    pub fn size(&self) -> u64 {
        self.file.size()
    }

    /// Whether an append or sync failed (every later call then fails).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::FaultOp;
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let path = Path::new("000003.log");
    /// # let mut log = LogWriter::new(fs.create(path).unwrap()).unwrap();
    ///
    /// assert!(!log.is_failed());
    /// fs.fail_next(FaultOp::Append, 1);
    /// assert!(log.add_record(b"lost").is_err());
    /// assert!(log.is_failed());
    /// // The fault has passed, but the writer still refuses: switch to a new log.
    /// assert!(log.add_record(b"retry").is_err());
    /// ```
    pub fn is_failed(&self) -> bool {
        self.failed.is_some()
    }
}

mod reader;
pub use reader::{LogReader, WalContents, read_all};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{FaultInjectionFs, FaultOp, FileSystem};
    use std::path::Path;

    fn log_bytes(records: &[&[u8]]) -> Vec<u8> {
        let fs = FaultInjectionFs::new();
        let mut w = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
        for r in records {
            w.add_record(r).unwrap();
        }
        fs.read_file(Path::new("l")).unwrap()
    }

    #[test]
    fn round_trip_including_empty_records() {
        let records: Vec<&[u8]> = vec![b"a", b"", &[7u8; 1000], b"last"];
        let bytes = log_bytes(&records);
        let all = read_all(bytes.clone(), DBRecoveryMode::AbsoluteConsistency).unwrap();
        assert_eq!(all.records, records);
        assert_eq!(all.valid_len, bytes.len() as u64);
        assert!(all.tail.is_none());
        assert_eq!(&bytes[..16], b"lsm-wal\x02\0\0\0\0\0\0\0\0");
        assert_eq!(bytes[16..20], masked_crc(&[&bytes[..16]]).to_le_bytes());
    }

    #[test]
    fn torn_tail_at_every_offset() {
        let records: Vec<&[u8]> = vec![b"first", b"second record", b"", b"fourth"];
        let bytes = log_bytes(&records);
        // Where each record ends: the good prefix for any cut.
        let mut ends = vec![FILE_HEADER_LEN];
        for r in &records {
            ends.push(ends.last().unwrap() + RECORD_HEADER_LEN + r.len());
        }
        for cut in 0..=bytes.len() {
            let complete = ends.iter().filter(|&&e| e <= cut).count().saturating_sub(1);
            let all = read_all(bytes[..cut].to_vec(), DBRecoveryMode::PointInTime).unwrap();
            assert_eq!(all.records, &records[..complete], "cut at {cut}");
            let clean = cut == 0 || ends.contains(&cut);
            assert_eq!(all.tail.is_none(), clean, "cut at {cut}");
            if let Some(tail) = &all.tail {
                assert!(tail.kind.is_truncation(), "cut at {cut}: {tail}");
                assert!(!tail.records_follow);
                assert_eq!(tail.offset + tail.dropped_bytes, cut as u64);
                assert_eq!(tail.offset, all.valid_len);
            }
            let strict = read_all(bytes[..cut].to_vec(), DBRecoveryMode::AbsoluteConsistency);
            assert_eq!(strict.is_ok(), clean, "cut at {cut}");
        }
    }

    #[test]
    fn every_bit_flip_is_detected() {
        let records: Vec<&[u8]> = vec![b"alpha", b"beta"];
        let bytes = log_bytes(&records);
        for byte in 0..bytes.len() {
            for bit in 0..8 {
                let mut damaged = bytes.clone();
                damaged[byte] ^= 1 << bit;
                match read_all(damaged.clone(), DBRecoveryMode::PointInTime) {
                    Ok(all) => {
                        // Never a wrong record, only a shorter prefix.
                        assert!(records.starts_with(
                            &all.records.iter().map(Vec::as_slice).collect::<Vec<_>>()
                        ));
                        assert!(all.tail.is_some(), "flip {byte}:{bit} went unnoticed");
                    }
                    Err(WalError::BadMagic { .. } | WalError::UnsupportedVersion { .. }) => {
                        assert!(byte < FILE_HEADER_LEN)
                    }
                    Err(e) => panic!("unexpected {e}"),
                }
                assert!(read_all(damaged, DBRecoveryMode::AbsoluteConsistency).is_err());
            }
        }
    }

    #[test]
    fn damage_before_intact_records_is_flagged() {
        let bytes = log_bytes(&[b"one", b"two", b"three"]);
        let mut damaged = bytes.clone();
        damaged[FILE_HEADER_LEN + RECORD_HEADER_LEN] ^= 1; // payload of "one"
        let all = read_all(damaged, DBRecoveryMode::PointInTime).unwrap();
        assert!(all.records.is_empty());
        let tail = all.tail.unwrap();
        assert_eq!(tail.kind, CorruptionKind::PayloadChecksumMismatch);
        assert!(tail.records_follow);
        assert!(tail.to_string().contains("not only a torn tail"), "{tail}");
    }

    #[test]
    fn zeroed_tail_is_a_checksum_mismatch() {
        let mut bytes = log_bytes(&[b"one"]);
        let good = bytes.len() as u64;
        bytes.extend_from_slice(&[0u8; 100]);
        let all = read_all(bytes, DBRecoveryMode::PointInTime).unwrap();
        assert_eq!(all.records, vec![b"one".to_vec()]);
        let tail = all.tail.unwrap();
        assert_eq!(tail.kind, CorruptionKind::HeaderChecksumMismatch);
        assert_eq!((tail.offset, tail.dropped_bytes), (good, 100));
        let all = read_all(vec![0u8; 20], DBRecoveryMode::PointInTime).unwrap();
        assert_eq!(all.tail.unwrap().kind, CorruptionKind::TornFileHeader);
    }

    #[test]
    fn garbage_never_panics() {
        let mut seed = 0x1234_5678_u64;
        for len in 0..300 {
            let mut data = Vec::with_capacity(len);
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                data.push(seed as u8);
            }
            if len > 8 && seed & 1 == 0 {
                data[..8].copy_from_slice(b"lsm-wal\x02");
            }
            let _ = read_all(data.clone(), DBRecoveryMode::PointInTime);
            let _ = read_all(data, DBRecoveryMode::AbsoluteConsistency);
        }
    }

    #[test]
    fn new_writer_needs_an_empty_file_and_resume_appends() {
        let fs = FaultInjectionFs::new();
        let mut w = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
        w.add_record(b"1").unwrap();
        w.sync().unwrap();
        drop(w);
        let file = fs.open_append(Path::new("l")).unwrap();
        let err = LogWriter::new(file).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let mut w = LogWriter::resume(fs.open_append(Path::new("l")).unwrap());
        w.add_record(b"2").unwrap();
        assert_eq!(w.size(), fs.file_size(Path::new("l")).unwrap());
        let all = read_all(
            fs.read_file(Path::new("l")).unwrap(),
            DBRecoveryMode::AbsoluteConsistency,
        )
        .unwrap();
        assert_eq!(all.records, vec![b"1".to_vec(), b"2".to_vec()]);
    }

    #[test]
    fn failed_append_poisons_the_writer() {
        let fs = FaultInjectionFs::new();
        fs.set_torn_appends(true);
        let mut w = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
        w.add_record(b"ok").unwrap();
        fs.fail_next(FaultOp::Append, 1);
        assert!(w.add_record(b"torn record").is_err());
        assert!(w.add_record(b"after").is_err());
        assert!(w.sync().is_err());
        let all = read_all(
            fs.read_file(Path::new("l")).unwrap(),
            DBRecoveryMode::PointInTime,
        )
        .unwrap();
        assert_eq!(all.records, vec![b"ok".to_vec()]);
        assert!(all.tail.is_some());
    }

    #[test]
    fn open_names_the_file() {
        let fs = FaultInjectionFs::new();
        let err = LogReader::open(
            &fs,
            Path::new("missing.log"),
            DBRecoveryMode::AbsoluteConsistency,
        )
        .unwrap_err();
        assert!(err.to_string().contains("missing.log"), "{err}");
        let mut f = fs.create(Path::new("bad.log")).unwrap();
        f.append(b"lsm-wal\x01\x05").unwrap();
        let mut r = LogReader::open(
            &fs,
            Path::new("bad.log"),
            DBRecoveryMode::AbsoluteConsistency,
        )
        .unwrap();
        let err = r.next_record().unwrap_err();
        assert!(err.to_string().contains("bad.log"), "{err}");
        assert!(err.to_string().contains("offset 8"), "{err}");
        assert_eq!(r.next_record().unwrap(), None);
    }
}
