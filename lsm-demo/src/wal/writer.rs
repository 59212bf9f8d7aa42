//! Writing a log: framing records and appending them.

use std::io;

use super::{
    FILE_HEADER_LEN, FORMAT_VERSION, MAGIC, MAX_RECORD_LEN, POSITIONAL_VERSION, RECORD_HEADER_LEN,
};
use crate::env::WritableFile;
use crate::table::coding::masked_crc;

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
    out.extend_from_slice(&[0; RECORD_HEADER_LEN]);
    for part in payload_parts {
        out.extend_from_slice(part);
    }
    // One checksum pass over the payload, contiguous once copied, rather
    // than one per part.
    let payload_crc = masked_crc(&[&out[start + RECORD_HEADER_LEN..]]);
    let header = &mut out[start..start + RECORD_HEADER_LEN];
    header[..4].copy_from_slice(&len.to_le_bytes());
    header[4..8].copy_from_slice(&payload_crc.to_le_bytes());
    let header_crc = masked_crc(&[&header[..8]]);
    header[8..].copy_from_slice(&header_crc.to_le_bytes());
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
    /// goes into the file header, see [`LogReader::previous_log`]). The
    /// header's version is [`POSITIONAL_VERSION`] for a file that many
    /// writers write at once with positioned writes
    /// ([`FileSystem::create_positional`](crate::env::FileSystem::create_positional)),
    /// [`FORMAT_VERSION`] otherwise.
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
        // A file that writers write at once with positioned writes says so:
        // a crash can end it in a shape recovery otherwise takes for damage.
        let positional = file.shared_writes().is_some_and(|s| s.is_positional());
        let mut writer = Self::resume(file);
        let mut header = [0u8; FILE_HEADER_LEN];
        header[..MAGIC.len()].copy_from_slice(&MAGIC);
        header[MAGIC.len()] = if positional {
            POSITIONAL_VERSION
        } else {
            FORMAT_VERSION
        };
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

    /// The log file's half that many threads write at once (see
    /// [`crate::env::WritableFile::shared_writes`]): records framed by
    /// [`frame_record`], each copied at the offset its writer reserved. The
    /// log's size is then the end of the furthest record; while anyone
    /// writes there, this writer must neither add records nor sync.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use lsm_demo::wal::LogWriter;
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    /// assert!(log.shared_writes().is_none()); // not a mapped file
    /// ```
    pub fn shared_writes(&self) -> Option<std::sync::Arc<crate::env::SharedFile>> {
        self.file.shared_writes()
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
