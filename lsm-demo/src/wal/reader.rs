//! Reading a log back: record by record from the file, in memory bounded by
//! the largest record, with damage handled as the [`DBRecoveryMode`] says.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{
    CorruptionKind, DBRecoveryMode, FILE_HEADER_LEN, FORMAT_VERSION, MAGIC, POSITIONAL_VERSION,
    RECORD_HEADER_LEN, WalCorruption, WalError,
};

/// The file header of a version-1 log: magic and version.
const V1_FILE_HEADER_LEN: usize = 8;
use crate::env::{FileSystem, RandomAccessFile};
use crate::table::coding::{VERIFY_CHECKSUMS, mask_crc, masked_crc, read_u32_le};

/// How many bytes a scan for the next intact record reads at a time.
const SCAN_CHUNK: usize = 64 << 10;

/// Reads the records of a log, one at a time, from its file.
///
/// Holds one record in memory at a time and never allocates from a length
/// read from the file before checking it against the file's size, so any
/// bytes give records or a typed error, never a panic or a huge allocation.
///
/// # Examples
///
/// A torn tail, dropped and reported:
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// use lsm_demo::wal::{CorruptionKind, DBRecoveryMode, LogReader, LogWriter, WalError};
/// use std::path::Path;
///
/// let fs = FaultInjectionFs::new();
/// let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
/// log.add_record(b"kept").unwrap();
/// log.add_record(b"torn").unwrap();
/// let mut bytes = fs.read_file(Path::new("l")).unwrap();
/// bytes.pop();
///
/// let mut r = LogReader::new(bytes.clone(), DBRecoveryMode::PointInTime).unwrap();
/// assert_eq!(r.next_record().unwrap(), Some(&b"kept"[..]));
/// assert_eq!(r.next_record().unwrap(), None);
/// let report = r.tail_report().unwrap();
/// assert!(matches!(report.kind, CorruptionKind::ShortRecord { length: 4, available: 3 }));
/// assert_eq!(report.offset, r.valid_len());
///
/// let mut r = LogReader::new(bytes, DBRecoveryMode::AbsoluteConsistency).unwrap();
/// r.next_record().unwrap();
/// assert!(matches!(r.next_record(), Err(WalError::Corruption(_))));
/// ```
#[derive(Debug)]
pub struct LogReader {
    source: Arc<dyn RandomAccessFile>,
    /// The file's size when the reader was made: a log being read is not
    /// appended to.
    len: u64,
    pos: u64,
    mode: DBRecoveryMode,
    file: Option<PathBuf>,
    /// The payload of the record last returned.
    record: Vec<u8>,
    dropped: Vec<WalCorruption>,
    done: bool,
    record_offset: u64,
    /// Where records start: after the file header of its version.
    records_start: u64,
    previous_log: Option<u64>,
    /// The format version of an intact file header.
    version: Option<u8>,
}

impl LogReader {
    /// A reader over a whole log file's bytes.
    ///
    /// Fails at once if the file header names another format
    /// ([`WalError::BadMagic`], [`WalError::UnsupportedVersion`]); an empty
    /// file is an empty log. A torn header is damage like any other: an
    /// error under [`DBRecoveryMode::AbsoluteConsistency`], an empty log
    /// with a report under the other modes.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{CorruptionKind, DBRecoveryMode, LogReader, WalError};
    /// // An empty file is an empty log.
    /// let mut r = LogReader::new(Vec::new(), DBRecoveryMode::AbsoluteConsistency).unwrap();
    /// assert_eq!(r.next_record().unwrap(), None);
    /// // A torn file header is an error, or an empty log with a report.
    /// let torn = b"lsm-".to_vec();
    /// let strict = LogReader::new(torn.clone(), DBRecoveryMode::AbsoluteConsistency);
    /// assert!(matches!(strict, Err(WalError::Corruption(_))));
    /// let r = LogReader::new(torn, DBRecoveryMode::PointInTime).unwrap();
    /// assert_eq!(r.tail_report().unwrap().kind, CorruptionKind::TornFileHeader);
    /// ```
    pub fn new(data: Vec<u8>, mode: DBRecoveryMode) -> Result<Self, WalError> {
        let len = data.len() as u64;
        Self::with_source(Arc::new(data), len, mode, None)
    }

    /// Reads the log at `path` through `fs`; errors and reports name it.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{DBRecoveryMode, LogReader, WalError};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let mut log = LogWriter::new(fs.create(Path::new("000007.log")).unwrap()).unwrap();
    /// # log.add_record(b"r").unwrap();
    ///
    /// let mode = DBRecoveryMode::AbsoluteConsistency;
    /// let mut r = LogReader::open(&fs, Path::new("000007.log"), mode).unwrap();
    /// assert_eq!(r.next_record().unwrap(), Some(&b"r"[..]));
    /// let err = LogReader::open(&fs, Path::new("000008.log"), mode).unwrap_err();
    /// assert!(matches!(&err, WalError::Io { file: Some(f), .. } if f == Path::new("000008.log")));
    /// ```
    pub fn open(fs: &dyn FileSystem, path: &Path, mode: DBRecoveryMode) -> Result<Self, WalError> {
        let file = Some(path.to_path_buf());
        // A striped log reads as its file with its stripes' records in place.
        let opened =
            super::open_log(fs, path).and_then(|source| source.size().map(|len| (source, len)));
        match opened {
            Ok((source, len)) => Self::with_source(source, len, mode, file),
            Err(source) => Err(WalError::Io { file, source }),
        }
    }

    fn with_source(
        source: Arc<dyn RandomAccessFile>,
        len: u64,
        mode: DBRecoveryMode,
        file: Option<PathBuf>,
    ) -> Result<Self, WalError> {
        let mut reader = Self {
            source,
            len,
            pos: 0,
            mode,
            file,
            record: Vec::new(),
            dropped: Vec::new(),
            done: false,
            record_offset: 0,
            records_start: FILE_HEADER_LEN as u64,
            previous_log: None,
            version: None,
        };
        if len == 0 {
            reader.done = true;
            return Ok(reader);
        }
        let mut header = [0u8; FILE_HEADER_LEN];
        let have = (len as usize).min(FILE_HEADER_LEN);
        reader
            .source
            .read_exact_at(0, &mut header[..have])
            .map_err(|e| reader.io_error(e))?;
        let version = header[MAGIC.len()];
        let header_len = if version == 1 {
            V1_FILE_HEADER_LEN
        } else {
            FILE_HEADER_LEN
        };
        if have < V1_FILE_HEADER_LEN || header[..have].iter().all(|&b| b == 0) {
            // Shorter than a header, or zeros: a file whose header was
            // never durably written.
            reader.damaged(CorruptionKind::TornFileHeader)?;
            return Ok(reader);
        }
        let mut found = [0u8; V1_FILE_HEADER_LEN];
        found.copy_from_slice(&header[..V1_FILE_HEADER_LEN]);
        if header[..MAGIC.len()] != MAGIC {
            return Err(WalError::BadMagic {
                file: reader.file,
                found,
            });
        }
        if ![1, FORMAT_VERSION, POSITIONAL_VERSION].contains(&version) {
            return Err(WalError::UnsupportedVersion {
                file: reader.file,
                version,
            });
        }
        reader.records_start = header_len as u64;
        if have < header_len {
            reader.damaged(CorruptionKind::TornFileHeader)?;
            return Ok(reader);
        }
        if version != 1 {
            let stored = read_u32_le(&header, 16).unwrap_or_default();
            if masked_crc(&[&header[..16]]) != stored && VERIFY_CHECKSUMS {
                reader.damaged(CorruptionKind::FileHeaderChecksumMismatch)?;
                return Ok(reader);
            }
            let previous = header[MAGIC.len() + 1..16].try_into().expect("8 bytes");
            reader.previous_log = Some(u64::from_le_bytes(previous));
        }
        reader.version = Some(version);
        reader.pos = header_len as u64;
        Ok(reader)
    }

    fn io_error(&self, source: io::Error) -> WalError {
        WalError::Io {
            file: self.file.clone(),
            source,
        }
    }

    /// Handles damage at the current position as the mode says: an error,
    /// or a report and either the end of reading or a jump to the next
    /// intact record.
    fn damaged(&mut self, kind: CorruptionKind) -> Result<(), WalError> {
        let at = self.pos;
        let next = self.find_record(at + 1).map_err(|e| self.io_error(e))?;
        let skip = self.mode == DBRecoveryMode::SkipAnyCorruptedRecord;
        let end = if skip {
            next.unwrap_or(self.len)
        } else {
            self.len
        };
        let zeroed = next.is_none() && self.zeros_from(at).map_err(|e| self.io_error(e))?;
        let report = WalCorruption {
            file: self.file.clone(),
            offset: at,
            kind,
            dropped_bytes: end - at,
            records_follow: next.is_some(),
            zeroed,
        };
        let tolerated = match self.mode {
            DBRecoveryMode::AbsoluteConsistency => false,
            DBRecoveryMode::TolerateCorruptedTailRecords => report.is_torn_tail(),
            DBRecoveryMode::PointInTime | DBRecoveryMode::SkipAnyCorruptedRecord => true,
        };
        if !tolerated {
            self.done = true;
            return Err(WalError::Corruption(report));
        }
        self.dropped.push(report);
        match next {
            Some(next) if skip => self.pos = next,
            _ => self.done = true,
        }
        Ok(())
    }

    /// Whether every byte from `at` to the end is zero (a file that grew
    /// before its data was written).
    fn zeros_from(&self, mut at: u64) -> io::Result<bool> {
        let mut buf = vec![0u8; SCAN_CHUNK];
        while at < self.len {
            let n = ((self.len - at) as usize).min(SCAN_CHUNK);
            self.source.read_exact_at(at, &mut buf[..n])?;
            if buf[..n].iter().any(|&b| b != 0) {
                return Ok(false);
            }
            at += n as u64;
        }
        Ok(true)
    }

    /// The first offset at or after `from` where an intact record starts
    /// (both checksums valid), if any. Reads the file in chunks.
    fn find_record(&self, from: u64) -> io::Result<Option<u64>> {
        let header_len = RECORD_HEADER_LEN as u64;
        let mut at = from.max(self.records_start);
        let mut window = vec![0u8; SCAN_CHUNK + RECORD_HEADER_LEN - 1];
        while at + header_len <= self.len {
            let n = ((self.len - at) as usize).min(window.len());
            self.source.read_exact_at(at, &mut window[..n])?;
            for i in 0..=n - RECORD_HEADER_LEN {
                let header = &window[i..i + RECORD_HEADER_LEN];
                let start = at + i as u64;
                if let Some(length) = intact_header(header, self.len - start - header_len)
                    && self.payload_matches(start + header_len, length, header)?
                {
                    return Ok(Some(start));
                }
            }
            at += (n - RECORD_HEADER_LEN + 1) as u64;
        }
        Ok(None)
    }

    /// Whether the `length` bytes at `at` have the payload checksum of
    /// `header`, read in chunks.
    fn payload_matches(&self, mut at: u64, length: u32, header: &[u8]) -> io::Result<bool> {
        let stored = read_u32_le(header, 4).unwrap_or_default();
        let mut crc = 0;
        let mut left = u64::from(length);
        let mut buf = vec![0u8; (left as usize).min(SCAN_CHUNK)];
        while left > 0 {
            let n = (left as usize).min(buf.len());
            self.source.read_exact_at(at, &mut buf[..n])?;
            crc = crc32c::crc32c_append(crc, &buf[..n]);
            at += n as u64;
            left -= n as u64;
        }
        Ok(mask_crc(crc) == stored || !VERIFY_CHECKSUMS)
    }

    /// Reads the record at the current position into `self.record`: its
    /// end, or what is wrong with it.
    fn read_record(&mut self) -> io::Result<Result<u64, CorruptionKind>> {
        let header_len = RECORD_HEADER_LEN as u64;
        let at = self.pos;
        if self.len - at < header_len {
            return Ok(Err(CorruptionKind::TornRecordHeader));
        }
        let mut header = [0u8; RECORD_HEADER_LEN];
        self.source.read_exact_at(at, &mut header)?;
        let available = self.len - at - header_len;
        let Some(length) = intact_header(&header, u64::MAX) else {
            return Ok(Err(CorruptionKind::HeaderChecksumMismatch));
        };
        if u64::from(length) > available {
            return Ok(Err(CorruptionKind::ShortRecord { length, available }));
        }
        // The length was checked against the file's size first.
        self.record.resize(length as usize, 0);
        self.source
            .read_exact_at(at + header_len, &mut self.record)?;
        let stored = read_u32_le(&header, 4).unwrap_or_default();
        if masked_crc(&[&self.record]) != stored && VERIFY_CHECKSUMS {
            return Ok(Err(CorruptionKind::PayloadChecksumMismatch));
        }
        Ok(Ok(at + header_len + u64::from(length)))
    }

    /// The next record, `None` at the end, or once damage ended reading.
    /// Damage the mode does not tolerate is returned once as
    /// [`WalError::Corruption`]; later calls return `None`.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{DBRecoveryMode, LogReader};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    /// # log.add_record(b"a").unwrap();
    /// # log.add_record(b"b").unwrap();
    /// # log.add_record(b"c").unwrap();
    ///
    /// let mut bytes = fs.read_file(Path::new("l")).unwrap();
    /// bytes[20 + 12 + 1 + 12] ^= 1; // damage the payload of "b"
    /// let mut r = LogReader::new(bytes.clone(), DBRecoveryMode::AbsoluteConsistency).unwrap();
    /// assert_eq!(r.next_record().unwrap(), Some(&b"a"[..]));
    /// assert!(r.next_record().is_err()); // the damage, reported once
    /// assert_eq!(r.next_record().unwrap(), None);
    /// // Salvage skips the damaged record and goes on.
    /// let mut r = LogReader::new(bytes, DBRecoveryMode::SkipAnyCorruptedRecord).unwrap();
    /// assert_eq!(r.next_record().unwrap(), Some(&b"a"[..]));
    /// assert_eq!(r.next_record().unwrap(), Some(&b"c"[..]));
    /// assert_eq!(r.dropped().len(), 1);
    /// ```
    pub fn next_record(&mut self) -> Result<Option<&[u8]>, WalError> {
        loop {
            if self.done {
                return Ok(None);
            }
            if self.pos == self.len {
                self.done = true;
                return Ok(None);
            }
            match self.read_record().map_err(|e| self.io_error(e))? {
                Ok(end) => {
                    self.record_offset = self.pos;
                    self.pos = end;
                    return Ok(Some(&self.record));
                }
                Err(kind) => self.damaged(kind)?,
            }
        }
    }

    /// Offset of the record last returned by [`Self::next_record`].
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{DBRecoveryMode, LogReader, FILE_HEADER_LEN, RECORD_HEADER_LEN};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    /// # log.add_record(b"first").unwrap();
    /// # log.add_record(b"second").unwrap();
    ///
    /// let bytes = fs.read_file(Path::new("l")).unwrap();
    /// let mut r = LogReader::new(bytes, DBRecoveryMode::AbsoluteConsistency).unwrap();
    /// r.next_record().unwrap();
    /// assert_eq!(r.last_record_offset(), FILE_HEADER_LEN as u64);
    /// r.next_record().unwrap();
    /// assert_eq!(r.last_record_offset(), (FILE_HEADER_LEN + RECORD_HEADER_LEN + 5) as u64);
    /// ```
    pub fn last_record_offset(&self) -> u64 {
        self.record_offset
    }

    /// Where reading stands: the end of the last intact record read so far
    /// (the file header's end before any record), or the start of the
    /// damage that ended reading.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{read_all, DBRecoveryMode, LogReader};
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
    /// let mut r = LogReader::new(bytes.clone(), DBRecoveryMode::PointInTime).unwrap();
    /// while r.next_record().unwrap().is_some() {}
    /// // Cutting the file there leaves an intact log.
    /// bytes.truncate(r.valid_len() as usize);
    /// let strict = read_all(bytes, DBRecoveryMode::AbsoluteConsistency).unwrap();
    /// assert_eq!(strict.records, [b"kept"]);
    /// ```
    pub fn valid_len(&self) -> u64 {
        self.pos
    }

    /// The first stretch of damage dropped so far, if any: under
    /// [`DBRecoveryMode::PointInTime`] and
    /// [`DBRecoveryMode::TolerateCorruptedTailRecords`] the one that ended
    /// reading.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{DBRecoveryMode, LogReader};
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
    /// let mut r = LogReader::new(bytes, DBRecoveryMode::PointInTime).unwrap();
    /// assert_eq!(r.next_record().unwrap(), Some(&b"a"[..]));
    /// assert!(r.tail_report().is_none()); // the damage is not reached yet
    /// assert_eq!(r.next_record().unwrap(), None);
    /// assert!(r.tail_report().unwrap().kind.is_truncation());
    /// ```
    pub fn tail_report(&self) -> Option<&WalCorruption> {
        self.dropped.first()
    }

    /// The number of the log written before this one, from the file header
    /// (0 when the writer knew none); `None` for a version-1 log or a torn
    /// header.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{DBRecoveryMode, LogReader, LogWriter};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    /// let bytes = fs.read_file(Path::new("l")).unwrap();
    /// assert_eq!(LogReader::new(bytes, DBRecoveryMode::PointInTime).unwrap().previous_log(), Some(0));
    /// let v1 = b"lsm-wal\x01".to_vec();
    /// assert_eq!(LogReader::new(v1, DBRecoveryMode::PointInTime).unwrap().previous_log(), None);
    /// ```
    pub fn previous_log(&self) -> Option<u64> {
        self.previous_log
    }

    /// The format version of the file header, `None` for an empty file or a
    /// damaged header.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{DBRecoveryMode, LogReader, FORMAT_VERSION};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    /// let bytes = fs.read_file(Path::new("l")).unwrap();
    /// let r = LogReader::new(bytes, DBRecoveryMode::PointInTime).unwrap();
    /// assert_eq!(r.version(), Some(FORMAT_VERSION));
    /// assert_eq!(LogReader::new(Vec::new(), DBRecoveryMode::PointInTime).unwrap().version(), None);
    /// ```
    pub fn version(&self) -> Option<u8> {
        self.version
    }

    /// Every stretch of damage dropped so far, in file order.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::wal::{DBRecoveryMode, LogReader};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::wal::LogWriter;
    /// # use std::path::Path;
    /// # let fs = FaultInjectionFs::new();
    /// # let mut log = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    /// # for r in [b"a", b"b", b"c"] { log.add_record(r).unwrap(); }
    ///
    /// let mut bytes = fs.read_file(Path::new("l")).unwrap();
    /// bytes[20 + 12] ^= 1; // the payload of "a"
    /// bytes[20 + 2 * (12 + 1) + 12] ^= 1; // the payload of "c"
    /// let mut r = LogReader::new(bytes, DBRecoveryMode::SkipAnyCorruptedRecord).unwrap();
    /// assert_eq!(r.next_record().unwrap(), Some(&b"b"[..]));
    /// assert_eq!(r.next_record().unwrap(), None);
    /// let offsets: Vec<u64> = r.dropped().iter().map(|d| d.offset).collect();
    /// assert_eq!(offsets, [20, 20 + 2 * 13]);
    /// ```
    pub fn dropped(&self) -> &[WalCorruption] {
        &self.dropped
    }
}

/// Whether the last `after` bytes of a log, which start with `header`
/// (their first `RECORD_HEADER_LEN` bytes, or all of them if fewer), are
/// a record cut short: part of a header, or an intact header whose
/// payload runs past the end.
pub(crate) fn is_record_cut_short(header: &[u8], after: u64) -> bool {
    if after < RECORD_HEADER_LEN as u64 {
        return after > 0;
    }
    let available = after - RECORD_HEADER_LEN as u64;
    intact_header(header, u64::MAX).is_some_and(|length| u64::from(length) > available)
}

/// The payload length of a record header whose checksum holds and whose
/// payload fits in `available` bytes.
fn intact_header(header: &[u8], available: u64) -> Option<u32> {
    let length = read_u32_le(header, 0)?;
    let header_crc = read_u32_le(header, 8)?;
    if masked_crc(&[&header[..8]]) != header_crc && VERIFY_CHECKSUMS {
        return None;
    }
    (u64::from(length) <= available).then_some(length)
}

/// Everything a log holds, as read by [`read_all`].
///
/// # Examples
///
/// ```
/// use lsm_demo::wal::{read_all, DBRecoveryMode, WalContents};
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
/// let contents: WalContents = read_all(bytes, DBRecoveryMode::PointInTime).unwrap();
/// assert_eq!(contents.records, [b"a", b"b"]);
/// assert_eq!(contents.valid_len, good_len);
/// assert_eq!(contents.tail.unwrap().dropped_bytes, 8);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WalContents {
    /// The intact records, in order.
    pub records: Vec<Vec<u8>>,
    /// The first stretch of damage dropped ([`LogReader::tail_report`]).
    pub tail: Option<WalCorruption>,
    /// Every stretch of damage dropped ([`LogReader::dropped`]).
    pub dropped: Vec<WalCorruption>,
    /// Where reading stopped ([`LogReader::valid_len`]).
    pub valid_len: u64,
}

/// Reads every record of a log's bytes (see [`LogReader`]).
///
/// # Examples
///
/// ```
/// use lsm_demo::wal::{read_all, DBRecoveryMode};
/// let empty = read_all(Vec::new(), DBRecoveryMode::AbsoluteConsistency).unwrap();
/// assert!(empty.records.is_empty() && empty.tail.is_none());
/// assert!(read_all(b"not a log".to_vec(), DBRecoveryMode::PointInTime).is_err());
/// ```
pub fn read_all(data: Vec<u8>, mode: DBRecoveryMode) -> Result<WalContents, WalError> {
    let mut reader = LogReader::new(data, mode)?;
    let mut records = Vec::new();
    while let Some(record) = reader.next_record()? {
        records.push(record.to_vec());
    }
    Ok(WalContents {
        records,
        tail: reader.dropped.first().cloned(),
        valid_len: reader.valid_len(),
        dropped: reader.dropped,
    })
}
