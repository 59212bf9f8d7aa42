//! The write-ahead log: a file of checksummed records, appended before the
//! memtable is touched and replayed on open.
//!
//! Each write is one record: the writer writes it itself at bytes it
//! reserved, or, when the log is drained, [`LogWriter::add_record`]
//! appends it with the records before it. A group of `sync` writes is one
//! record (the group's batches encoded together), synced once. On open,
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
//! A log written into stripes
//! ([`Options::set_wal_stripes`](crate::Options::set_wal_stripes)) is a
//! version-3 log whose records lie in stripe files beside it (`NNNNNN.log.1`
//! on; see [`SharedFile::striped`](crate::env::SharedFile::striped)), a
//! hole in the log file where each belongs. [`LogReader::open`] reads it
//! as the log file with its stripes' records in place.
//!
//! `previous_log` is the number of the log written before this one (0 when
//! none is known): recovery follows the chain and notices a log missing
//! from the middle, which sequence numbers alone cannot show (writes made
//! without the log leave gaps in them); `header_crc` is the masked CRC32C of
//! the 16 bytes before it. Version 1 has neither field. Version 3 is
//! version 2 written by many writers at once, each at bytes it reserved
//! with a positioned write
//! ([`Options::set_allow_concurrent_log_write`](crate::Options::set_allow_concurrent_log_write)):
//! a crash can leave such a log ending right after a later writer's whole
//! record, with an earlier writer's torn before it, which recovery tells
//! from damage only in a log that says so. All three versions are read.
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

/// The first 7 bytes of every log file.
pub const MAGIC: [u8; 7] = *b"lsm-wal";
/// The format version this module writes (byte 7 of the file) for logs
/// appended in order; it reads this one, version 1 and
/// [`POSITIONAL_VERSION`].
pub const FORMAT_VERSION: u8 = 2;
/// The format version of a log that many writers write at once with
/// positioned writes ([`crate::env::FileSystem::create_positional`]): the
/// layout of [`FORMAT_VERSION`].
pub const POSITIONAL_VERSION: u8 = 3;
/// Size of the file header (magic, version, previous log number, checksum).
pub const FILE_HEADER_LEN: usize = 20;
/// Size of a record header (length, payload checksum, header checksum).
pub const RECORD_HEADER_LEN: usize = 12;
/// Largest payload of one record.
pub const MAX_RECORD_LEN: usize = u32::MAX as usize;

/// What recovery does with a damaged log record: RocksDB's
/// `WALRecoveryMode`, under the `rocksdb` crate's names.
///
/// The log reader applies the mode to one log; the database applies it
/// across its logs (under [`PointInTime`](Self::PointInTime) no log after a
/// damaged one is replayed). Whatever is dropped is reported: in the
/// database's info log and in [`RecoveryStats`](crate::RecoveryStats).
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

mod error;
mod writer;
pub use error::{CorruptionKind, WalCorruption, WalError};
pub use writer::{LogWriter, frame_record};

mod reader;
pub(crate) use reader::is_record_cut_short;
mod stripes;
pub use reader::{LogReader, WalContents, read_all};
pub(crate) use stripes::{log_size, open_log, remove_log, rename_log, stripe_entries};

#[cfg(test)]
mod tests;
