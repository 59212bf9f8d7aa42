//! The write-ahead log: a file of checksummed records, appended before the
//! memtable is touched and replayed on open.
//!
//! The engine appends one record per write group (the group's batches
//! encoded together) with [`LogWriter::add_record`], then
//! [`LogWriter::sync`] when a member asked for durability. On open,
//! [`LogReader`] replays the records in order and stops at the first damaged
//! one; [`RecoveryMode`] says whether that is an error or an expected torn
//! tail to drop.
//!
//! # File format (version 1)
//!
//! ```text
//! file   = "lsm-wal" version:u8(=1)  record*
//! record = length:u32 LE  payload_crc:u32 LE  header_crc:u32 LE  payload
//! ```
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
//! use lsm_demo::wal::{LogReader, LogWriter, RecoveryMode};
//! use std::path::Path;
//!
//! let fs = FaultInjectionFs::new();
//! let path = Path::new("000003.log");
//! let mut log = LogWriter::new(fs.create(path).unwrap()).unwrap();
//! log.add_record(b"group 1").unwrap();
//! log.add_record(b"group 2").unwrap();
//! log.sync().unwrap();
//!
//! let mut reader = LogReader::open(&fs, path, RecoveryMode::Fail).unwrap();
//! assert_eq!(reader.next_record().unwrap(), Some(&b"group 1"[..]));
//! assert_eq!(reader.next_record().unwrap(), Some(&b"group 2"[..]));
//! assert_eq!(reader.next_record().unwrap(), None);
//! assert!(reader.tail_report().is_none());
//! ```

use crate::env::{FileSystem, WritableFile};
use crate::table::coding::{VERIFY_CHECKSUMS, masked_crc, read_u32_le};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The first 7 bytes of every log file.
pub const MAGIC: [u8; 7] = *b"lsm-wal";
/// The format version this module writes and reads (byte 7 of the file).
pub const FORMAT_VERSION: u8 = 1;
/// Size of the file header (magic and version).
pub const FILE_HEADER_LEN: usize = 8;
/// Size of a record header (length, payload checksum, header checksum).
pub const RECORD_HEADER_LEN: usize = 12;
/// Largest payload of one record.
pub const MAX_RECORD_LEN: usize = u32::MAX as usize;

/// What recovery does with a damaged record.
///
/// # Examples
///
/// ```
/// use lsm_demo::wal::{read_all, RecoveryMode, WalError};
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
/// let strict = read_all(bytes.clone(), RecoveryMode::Fail);
/// assert!(matches!(strict, Err(WalError::Corruption(_))));
/// let lenient = read_all(bytes, RecoveryMode::DropTail).unwrap();
/// assert_eq!(lenient.records, [b"kept"]);
/// assert!(lenient.tail.is_some());
/// assert_eq!(RecoveryMode::default(), RecoveryMode::Fail);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecoveryMode {
    /// Any damage is an error ([`WalError::Corruption`]).
    #[default]
    Fail,
    /// Keep the records before the first damaged one, drop everything from
    /// it on, and report what was dropped ([`LogReader::tail_report`]).
    ///
    /// This is point-in-time recovery. Check
    /// [`WalCorruption::records_follow`]: when well-formed records follow
    /// the damage, it is not a torn tail, and acknowledged synced writes
    /// may be among the dropped records.
    DropTail,
}

/// The kind of damage found in a log.
///
/// # Examples
///
/// ```
/// use lsm_demo::wal::{read_all, CorruptionKind, RecoveryMode};
/// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// # use lsm_demo::wal::LogWriter;
/// # use std::path::Path;
/// # let fs = FaultInjectionFs::new();
/// # let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
/// # log.add_record(b"one").unwrap();
///
/// let mut bytes = fs.read_file(Path::new("l")).unwrap();
/// bytes.extend_from_slice(&[0; 32]); // the file grew, but its data never got written
/// let tail = read_all(bytes, RecoveryMode::DropTail).unwrap().tail.unwrap();
/// assert_eq!(tail.kind, CorruptionKind::HeaderChecksumMismatch);
/// assert_eq!(tail.kind.to_string(), "record header checksum mismatch");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorruptionKind {
    /// The file is shorter than its 8-byte header, or the header is zeros.
    TornFileHeader,
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
    /// use lsm_demo::wal::{read_all, RecoveryMode};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    /// # log.add_record(b"record").unwrap();
    ///
    /// let mut bytes = fs.read_file(Path::new("l")).unwrap();
    /// let cut = read_all(bytes[..bytes.len() - 1].to_vec(), RecoveryMode::DropTail).unwrap();
    /// assert!(cut.tail.unwrap().kind.is_truncation()); // a short record
    /// *bytes.last_mut().unwrap() ^= 1;
    /// let flipped = read_all(bytes, RecoveryMode::DropTail).unwrap();
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
/// use lsm_demo::wal::{LogReader, RecoveryMode, FILE_HEADER_LEN, RECORD_HEADER_LEN};
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
/// let mut r = LogReader::open(&fs, path, RecoveryMode::DropTail).unwrap();
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
/// use lsm_demo::wal::{LogReader, RecoveryMode, WalError};
/// use std::io;
/// let err = LogReader::new(b"lsm-wal\x02".to_vec(), RecoveryMode::Fail).unwrap_err();
/// assert!(matches!(err, WalError::UnsupportedVersion { version: 2, .. }));
/// let err = LogReader::new(b"not a log".to_vec(), RecoveryMode::DropTail).unwrap_err();
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
    /// A damaged record under [`RecoveryMode::Fail`].
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
    /// use lsm_demo::wal::{read_all, LogReader, LogWriter, RecoveryMode};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let mut log = LogWriter::new(fs.create(Path::new("000005.log")).unwrap()).unwrap();
    /// # log.add_record(b"1").unwrap();
    /// # drop(log);
    ///
    /// let path = Path::new("000005.log");
    /// // Read the log to its end, finding no damage ...
    /// let mut r = LogReader::open(&fs, path, RecoveryMode::Fail).unwrap();
    /// while r.next_record().unwrap().is_some() {}
    /// assert_eq!(r.valid_len(), fs.file_size(path).unwrap());
    /// // ... then keep appending to it.
    /// let mut log = LogWriter::resume(fs.open_append(path).unwrap());
    /// log.add_record(b"2").unwrap();
    /// let records = read_all(fs.read_file(path).unwrap(), RecoveryMode::Fail).unwrap().records;
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
    /// use lsm_demo::wal::{read_all, RecoveryMode, RECORD_HEADER_LEN};
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
    /// let records = read_all(fs.read_file(path).unwrap(), RecoveryMode::Fail).unwrap().records;
    /// assert_eq!(records, [b"".to_vec(), b"batch".to_vec()]);
    /// ```
    pub fn add_record(&mut self, payload: &[u8]) -> io::Result<()> {
        self.check_failed()?;
        let len = u32::try_from(payload.len()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "log record of {} bytes exceeds the limit of {MAX_RECORD_LEN}",
                    payload.len()
                ),
            )
        })?;
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        buf.extend_from_slice(&len.to_le_bytes());
        buf.extend_from_slice(&masked_crc(&[payload]).to_le_bytes());
        let header_crc = masked_crc(&[&buf[..8]]);
        buf.extend_from_slice(&header_crc.to_le_bytes());
        buf.extend_from_slice(payload);
        let result = self.append(&buf);
        // Keep the buffer for the next record unless it grew huge.
        if buf.capacity() <= 1 << 20 {
            self.buf = buf;
        }
        result
    }

    /// Pushes appended records to the operating system.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{read_all, RecoveryMode};
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
    /// let records = read_all(fs.read_file(path).unwrap(), RecoveryMode::Fail).unwrap().records;
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
    /// use lsm_demo::wal::{read_all, LogWriter, RecoveryMode};
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
    /// let records = read_all(fs.read_file(path).unwrap(), RecoveryMode::Fail).unwrap().records;
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

// ---------------------------------------------------------------------------
// Reader
// ---------------------------------------------------------------------------

/// Reads the records of a log held in memory.
///
/// Never panics and never allocates from a length read from the file:
/// records are slices of the bytes given.
///
/// # Examples
///
/// A torn tail, dropped and reported:
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// use lsm_demo::wal::{CorruptionKind, LogReader, LogWriter, RecoveryMode, WalError};
/// use std::path::Path;
///
/// let fs = FaultInjectionFs::new();
/// let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
/// log.add_record(b"kept").unwrap();
/// log.add_record(b"torn").unwrap();
/// let mut bytes = fs.read_file(Path::new("l")).unwrap();
/// bytes.pop();
///
/// let mut r = LogReader::new(bytes.clone(), RecoveryMode::DropTail).unwrap();
/// assert_eq!(r.next_record().unwrap(), Some(&b"kept"[..]));
/// assert_eq!(r.next_record().unwrap(), None);
/// let report = r.tail_report().unwrap();
/// assert!(matches!(report.kind, CorruptionKind::ShortRecord { length: 4, available: 3 }));
/// assert_eq!(report.offset, r.valid_len());
///
/// let mut r = LogReader::new(bytes, RecoveryMode::Fail).unwrap();
/// r.next_record().unwrap();
/// assert!(matches!(r.next_record(), Err(WalError::Corruption(_))));
/// ```
#[derive(Debug)]
pub struct LogReader {
    data: Vec<u8>,
    pos: usize,
    mode: RecoveryMode,
    file: Option<PathBuf>,
    tail: Option<WalCorruption>,
    done: bool,
    record_offset: u64,
}

impl LogReader {
    /// A reader over a whole log file's bytes.
    ///
    /// Fails at once if the file header names another format
    /// ([`WalError::BadMagic`], [`WalError::UnsupportedVersion`]); an empty
    /// file is an empty log. A torn header is an error under
    /// [`RecoveryMode::Fail`] and an empty log with a tail report under
    /// [`RecoveryMode::DropTail`].
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{CorruptionKind, LogReader, RecoveryMode, WalError};
    /// // An empty file is an empty log.
    /// let mut r = LogReader::new(Vec::new(), RecoveryMode::Fail).unwrap();
    /// assert_eq!(r.next_record().unwrap(), None);
    /// // A torn file header is an error, or an empty log with a tail report.
    /// let torn = b"lsm-".to_vec();
    /// let strict = LogReader::new(torn.clone(), RecoveryMode::Fail);
    /// assert!(matches!(strict, Err(WalError::Corruption(_))));
    /// let r = LogReader::new(torn, RecoveryMode::DropTail).unwrap();
    /// assert_eq!(r.tail_report().unwrap().kind, CorruptionKind::TornFileHeader);
    /// ```
    pub fn new(data: Vec<u8>, mode: RecoveryMode) -> Result<Self, WalError> {
        Self::with_file(data, mode, None)
    }

    /// Reads the log at `path` through `fs`; errors and reports name it.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{LogReader, RecoveryMode, WalError};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let mut log = LogWriter::new(fs.create(Path::new("000007.log")).unwrap()).unwrap();
    /// # log.add_record(b"r").unwrap();
    ///
    /// let mut r = LogReader::open(&fs, Path::new("000007.log"), RecoveryMode::Fail).unwrap();
    /// assert_eq!(r.next_record().unwrap(), Some(&b"r"[..]));
    /// let err = LogReader::open(&fs, Path::new("000008.log"), RecoveryMode::Fail).unwrap_err();
    /// assert!(matches!(&err, WalError::Io { file: Some(f), .. } if f == Path::new("000008.log")));
    /// ```
    pub fn open(fs: &dyn FileSystem, path: &Path, mode: RecoveryMode) -> Result<Self, WalError> {
        let file = Some(path.to_path_buf());
        match fs.read_file(path) {
            Ok(data) => Self::with_file(data, mode, file),
            Err(source) => Err(WalError::Io { file, source }),
        }
    }

    fn with_file(
        data: Vec<u8>,
        mode: RecoveryMode,
        file: Option<PathBuf>,
    ) -> Result<Self, WalError> {
        let mut reader = Self {
            data,
            pos: 0,
            mode,
            file,
            tail: None,
            done: false,
            record_offset: 0,
        };
        if reader.data.is_empty() {
            reader.done = true;
            return Ok(reader);
        }
        let header = reader.data.get(..FILE_HEADER_LEN);
        match header {
            Some(h) if h.iter().any(|&b| b != 0) => {
                if h[..MAGIC.len()] != MAGIC {
                    let mut found = [0u8; 8];
                    found.copy_from_slice(h);
                    return Err(WalError::BadMagic {
                        file: reader.file,
                        found,
                    });
                }
                if h[MAGIC.len()] != FORMAT_VERSION {
                    return Err(WalError::UnsupportedVersion {
                        file: reader.file,
                        version: h[MAGIC.len()],
                    });
                }
                reader.pos = FILE_HEADER_LEN;
                Ok(reader)
            }
            // Shorter than a header, or zeros: a file whose header was never
            // durably written.
            _ => {
                reader.damaged(CorruptionKind::TornFileHeader)?;
                Ok(reader)
            }
        }
    }

    /// Records damage at the current position: an error under
    /// [`RecoveryMode::Fail`], a tail report otherwise. Reading ends.
    fn damaged(&mut self, kind: CorruptionKind) -> Result<(), WalError> {
        self.done = true;
        let report = WalCorruption {
            file: self.file.clone(),
            offset: self.pos as u64,
            kind,
            dropped_bytes: (self.data.len() - self.pos) as u64,
            records_follow: self.record_follows(self.pos + 1),
        };
        match self.mode {
            RecoveryMode::Fail => Err(WalError::Corruption(report)),
            RecoveryMode::DropTail => {
                self.tail = Some(report);
                Ok(())
            }
        }
    }

    /// Whether a well-formed record starts at any offset from `from` on.
    fn record_follows(&self, from: usize) -> bool {
        let data = &self.data;
        let first = from.max(FILE_HEADER_LEN);
        let last = data.len().saturating_sub(RECORD_HEADER_LEN);
        (first..=last).any(|at| matches!(check_record(data, at), Ok((_, _))))
    }

    /// The next record, `None` at the end (or after damage under
    /// [`RecoveryMode::DropTail`]). Under [`RecoveryMode::Fail`] damage is
    /// returned once as [`WalError::Corruption`]; later calls return `None`.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{LogReader, RecoveryMode};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    /// # log.add_record(b"a").unwrap();
    /// # log.add_record(b"b").unwrap();
    ///
    /// let mut bytes = fs.read_file(Path::new("l")).unwrap();
    /// *bytes.last_mut().unwrap() ^= 1; // damage the payload of "b"
    /// let mut r = LogReader::new(bytes, RecoveryMode::Fail).unwrap();
    /// assert_eq!(r.next_record().unwrap(), Some(&b"a"[..]));
    /// assert!(r.next_record().is_err()); // the damage, reported once
    /// assert_eq!(r.next_record().unwrap(), None);
    /// ```
    pub fn next_record(&mut self) -> Result<Option<&[u8]>, WalError> {
        if self.done {
            return Ok(None);
        }
        if self.pos == self.data.len() {
            self.done = true;
            return Ok(None);
        }
        match check_record(&self.data, self.pos) {
            Ok((start, end)) => {
                self.record_offset = self.pos as u64;
                self.pos = end;
                Ok(Some(&self.data[start..end]))
            }
            Err(kind) => {
                self.damaged(kind)?;
                Ok(None)
            }
        }
    }

    /// Offset of the record last returned by [`Self::next_record`].
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{LogReader, RecoveryMode, FILE_HEADER_LEN, RECORD_HEADER_LEN};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    /// # log.add_record(b"first").unwrap();
    /// # log.add_record(b"second").unwrap();
    ///
    /// let bytes = fs.read_file(Path::new("l")).unwrap();
    /// let mut r = LogReader::new(bytes, RecoveryMode::Fail).unwrap();
    /// r.next_record().unwrap();
    /// assert_eq!(r.last_record_offset(), FILE_HEADER_LEN as u64);
    /// r.next_record().unwrap();
    /// assert_eq!(r.last_record_offset(), (FILE_HEADER_LEN + RECORD_HEADER_LEN + 5) as u64);
    /// ```
    pub fn last_record_offset(&self) -> u64 {
        self.record_offset
    }

    /// The end of the last intact record read so far (the file header's
    /// end before any record): where the good prefix of the log stops once
    /// reading is over.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{read_all, LogReader, RecoveryMode};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    /// # log.add_record(b"kept").unwrap();
    /// # log.add_record(b"torn").unwrap();
    ///
    /// let mut bytes = fs.read_file(Path::new("l")).unwrap();
    /// bytes.pop(); // tear the last record
    /// let mut r = LogReader::new(bytes.clone(), RecoveryMode::DropTail).unwrap();
    /// while r.next_record().unwrap().is_some() {}
    /// // Cutting the file there leaves an intact log.
    /// bytes.truncate(r.valid_len() as usize);
    /// assert_eq!(read_all(bytes, RecoveryMode::Fail).unwrap().records, [b"kept"]);
    /// ```
    pub fn valid_len(&self) -> u64 {
        self.pos as u64
    }

    /// The damage dropped under [`RecoveryMode::DropTail`], once reading
    /// has reached it.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{LogReader, RecoveryMode};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    /// # log.add_record(b"a").unwrap();
    /// # log.add_record(b"b").unwrap();
    ///
    /// let mut bytes = fs.read_file(Path::new("l")).unwrap();
    /// bytes.pop(); // tear the last record
    /// let mut r = LogReader::new(bytes, RecoveryMode::DropTail).unwrap();
    /// assert_eq!(r.next_record().unwrap(), Some(&b"a"[..]));
    /// assert!(r.tail_report().is_none()); // the damage is not reached yet
    /// assert_eq!(r.next_record().unwrap(), None);
    /// assert!(r.tail_report().unwrap().kind.is_truncation());
    /// ```
    pub fn tail_report(&self) -> Option<&WalCorruption> {
        self.tail.as_ref()
    }
}

/// Checks the record at `at`: the payload's range, or what is wrong.
fn check_record(data: &[u8], at: usize) -> Result<(usize, usize), CorruptionKind> {
    let header = data
        .get(at..at.saturating_add(RECORD_HEADER_LEN))
        .ok_or(CorruptionKind::TornRecordHeader)?;
    let length = read_u32_le(header, 0).ok_or(CorruptionKind::TornRecordHeader)?;
    let payload_crc = read_u32_le(header, 4).ok_or(CorruptionKind::TornRecordHeader)?;
    let header_crc = read_u32_le(header, 8).ok_or(CorruptionKind::TornRecordHeader)?;
    if masked_crc(&[&header[..8]]) != header_crc && VERIFY_CHECKSUMS {
        return Err(CorruptionKind::HeaderChecksumMismatch);
    }
    let start = at + RECORD_HEADER_LEN;
    let available = (data.len() - start) as u64;
    if u64::from(length) > available {
        return Err(CorruptionKind::ShortRecord { length, available });
    }
    let end = start + length as usize;
    if masked_crc(&[&data[start..end]]) != payload_crc && VERIFY_CHECKSUMS {
        return Err(CorruptionKind::PayloadChecksumMismatch);
    }
    Ok((start, end))
}

/// Everything a log holds, as read by [`read_all`].
///
/// # Examples
///
/// ```
/// use lsm_demo::wal::{read_all, RecoveryMode, WalContents};
/// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// # use lsm_demo::wal::LogWriter;
/// # use std::path::Path;
/// # let fs = FaultInjectionFs::new();
/// # let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
/// # log.add_record(b"a").unwrap();
/// # log.add_record(b"b").unwrap();
///
/// let mut bytes = fs.read_file(Path::new("l")).unwrap();
/// let good_len = bytes.len() as u64;
/// bytes.extend_from_slice(b"garbage!");
/// let contents: WalContents = read_all(bytes, RecoveryMode::DropTail).unwrap();
/// assert_eq!(contents.records, [b"a", b"b"]);
/// assert_eq!(contents.valid_len, good_len);
/// assert_eq!(contents.tail.unwrap().dropped_bytes, 8);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WalContents {
    /// The intact records, in order.
    pub records: Vec<Vec<u8>>,
    /// The damage dropped under [`RecoveryMode::DropTail`].
    pub tail: Option<WalCorruption>,
    /// The end of the last intact record.
    pub valid_len: u64,
}

/// Reads every record of a log's bytes (see [`LogReader`]).
///
/// # Examples
///
/// ```
/// use lsm_demo::wal::{read_all, RecoveryMode};
/// let empty = read_all(Vec::new(), RecoveryMode::Fail).unwrap();
/// assert!(empty.records.is_empty() && empty.tail.is_none());
/// assert!(read_all(b"not a log".to_vec(), RecoveryMode::DropTail).is_err());
/// ```
pub fn read_all(data: Vec<u8>, mode: RecoveryMode) -> Result<WalContents, WalError> {
    let mut reader = LogReader::new(data, mode)?;
    let mut records = Vec::new();
    while let Some(record) = reader.next_record()? {
        records.push(record.to_vec());
    }
    Ok(WalContents {
        records,
        valid_len: reader.valid_len(),
        tail: reader.tail.take(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{FaultInjectionFs, FaultOp};

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
        let all = read_all(bytes.clone(), RecoveryMode::Fail).unwrap();
        assert_eq!(all.records, records);
        assert_eq!(all.valid_len, bytes.len() as u64);
        assert!(all.tail.is_none());
        assert_eq!(&bytes[..8], b"lsm-wal\x01");
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
            let all = read_all(bytes[..cut].to_vec(), RecoveryMode::DropTail).unwrap();
            assert_eq!(all.records, &records[..complete], "cut at {cut}");
            let clean = cut == 0 || ends.contains(&cut);
            assert_eq!(all.tail.is_none(), clean, "cut at {cut}");
            if let Some(tail) = &all.tail {
                assert!(tail.kind.is_truncation(), "cut at {cut}: {tail}");
                assert!(!tail.records_follow);
                assert_eq!(tail.offset + tail.dropped_bytes, cut as u64);
                assert_eq!(tail.offset, all.valid_len);
            }
            let strict = read_all(bytes[..cut].to_vec(), RecoveryMode::Fail);
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
                match read_all(damaged.clone(), RecoveryMode::DropTail) {
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
                assert!(read_all(damaged, RecoveryMode::Fail).is_err());
            }
        }
    }

    #[test]
    fn damage_before_intact_records_is_flagged() {
        let bytes = log_bytes(&[b"one", b"two", b"three"]);
        let mut damaged = bytes.clone();
        damaged[FILE_HEADER_LEN + RECORD_HEADER_LEN] ^= 1; // payload of "one"
        let all = read_all(damaged, RecoveryMode::DropTail).unwrap();
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
        let all = read_all(bytes, RecoveryMode::DropTail).unwrap();
        assert_eq!(all.records, vec![b"one".to_vec()]);
        let tail = all.tail.unwrap();
        assert_eq!(tail.kind, CorruptionKind::HeaderChecksumMismatch);
        assert_eq!((tail.offset, tail.dropped_bytes), (good, 100));
        let all = read_all(vec![0u8; 20], RecoveryMode::DropTail).unwrap();
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
                data[..8].copy_from_slice(b"lsm-wal\x01");
            }
            let _ = read_all(data.clone(), RecoveryMode::DropTail);
            let _ = read_all(data, RecoveryMode::Fail);
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
        let all = read_all(fs.read_file(Path::new("l")).unwrap(), RecoveryMode::Fail).unwrap();
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
            RecoveryMode::DropTail,
        )
        .unwrap();
        assert_eq!(all.records, vec![b"ok".to_vec()]);
        assert!(all.tail.is_some());
    }

    #[test]
    fn open_names_the_file() {
        let fs = FaultInjectionFs::new();
        let err = LogReader::open(&fs, Path::new("missing.log"), RecoveryMode::Fail).unwrap_err();
        assert!(err.to_string().contains("missing.log"), "{err}");
        let mut f = fs.create(Path::new("bad.log")).unwrap();
        f.append(b"lsm-wal\x01\x05").unwrap();
        let mut r = LogReader::open(&fs, Path::new("bad.log"), RecoveryMode::Fail).unwrap();
        let err = r.next_record().unwrap_err();
        assert!(err.to_string().contains("bad.log"), "{err}");
        assert!(err.to_string().contains("offset 8"), "{err}");
        assert_eq!(r.next_record().unwrap(), None);
    }
}
