//! The manifest: the set of live table files and the counters recovery
//! needs, replaced atomically as a whole.
//!
//! Each change of the file set (a flush, a compaction) writes a complete new
//! [`Manifest`] with [`write_manifest`]: encode, write `MANIFEST.tmp`, sync
//! it, rename it over `MANIFEST`, sync the directory. A crash at any point
//! leaves either the old or the new manifest, whole: the rename is atomic,
//! and the new file's bytes are durable before its name can be.
//!
//! A valid `MANIFEST` is also what makes a directory a database: the engine
//! opens nothing else as one, and deletes only the files a manifest lists
//! as obsolete.
//!
//! # File format (version 2)
//!
//! ```text
//! magic "lsm-mfst" | version: u32 LE (=2) | body_len: u64 LE | body
//! | crc: u32 LE (masked CRC32C of everything before it)
//! body = next_file_number log_number last_sequence file_count  (varints)
//!        file*
//!        obsolete_log_count log_number*  obsolete_table_count table_number*
//! file = number level file_size entries  (varints)
//!        smallest_len smallest largest_len largest
//! ```
//!
//! Version 1 is version 2 without the obsolete lists; both are read.
//! Masking: rotate right by 15, add `0x6c736d64`. Decoding checks the
//! magic, version, length and checksum before parsing the body, and every
//! length in the body against the bytes left, so damaged input gives a
//! [`ManifestError`] and never a panic or a large allocation.
//! [`Manifest::check_consistency`] then checks that the contents make sense
//! (RocksDB's `force_consistency_checks`).
//!
//! # Examples
//!
//! ```
//! use lsm_demo::env::{FaultInjectionFs, FileSystem};
//! use lsm_demo::manifest::{read_manifest, write_manifest, FileMeta, Manifest};
//! use std::path::Path;
//!
//! let fs = FaultInjectionFs::new();
//! let dir = Path::new("/db");
//! fs.create_dir_all(dir).unwrap();
//! assert_eq!(read_manifest(&fs, dir).unwrap(), None);
//!
//! let m = Manifest {
//!     next_file_number: 8,
//!     last_sequence: 1000,
//!     log_number: 7,
//!     files: vec![FileMeta {
//!         number: 5, level: 0, file_size: 4096, entries: 10,
//!         smallest: b"a".to_vec(), largest: b"z".to_vec(),
//!     }],
//!     ..Manifest::default()
//! };
//! write_manifest(&fs, dir, &m).unwrap();
//! fs.simulate_crash();
//! assert_eq!(read_manifest(&fs, dir).unwrap(), Some(m));
//! ```

use crate::env::FileSystem;
use crate::table::coding::{
    Decoder, VERIFY_CHECKSUMS, masked_crc, put_length_prefixed, put_varint64, read_u32_le,
    read_u64_le,
};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The manifest's file name in the database directory.
pub const MANIFEST_FILE: &str = "MANIFEST";
/// The temporary file a new manifest is written to before the rename.
pub const MANIFEST_TEMP_FILE: &str = "MANIFEST.tmp";
/// The first 8 bytes of a manifest.
pub const MAGIC: [u8; 8] = *b"lsm-mfst";
/// The format version this module writes; it reads this one and version 1.
pub const FORMAT_VERSION: u32 = 2;
/// The number of levels, as RocksDB's default `num_levels`: level 0 holds
/// overlapping flushed tables, each level below sorted, disjoint ones.
/// Manifests written when the engine had two levels read unchanged.
pub const NUM_LEVELS: usize = 7;
/// Magic, version and body length.
const HEADER_LEN: usize = 8 + 4 + 8;
/// The trailing checksum.
const CRC_LEN: usize = 4;

/// One live table file.
///
/// # Examples
///
/// ```
/// use lsm_demo::manifest::{FileMeta, Manifest};
/// let table = FileMeta {
///     number: 12, level: 1, file_size: 2048, entries: 3,
///     smallest: b"apple".to_vec(), largest: b"pear".to_vec(),
/// };
/// let m = Manifest { files: vec![table.clone()], ..Manifest::default() };
/// assert_eq!(Manifest::decode(&m.encode()).unwrap().files, [table]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileMeta {
    /// The file's number (its name is derived from it).
    pub number: u64,
    /// The LSM level it belongs to.
    pub level: u32,
    /// Its size in bytes.
    pub file_size: u64,
    /// Its entry count.
    pub entries: u64,
    /// Its first key.
    pub smallest: Vec<u8>,
    /// Its last key.
    pub largest: Vec<u8>,
}

/// The engine's durable state besides the logs and table files.
///
/// # Examples
///
/// ```
/// use lsm_demo::manifest::Manifest;
/// let empty = Manifest::default(); // a new database: no files, all counters 0
/// assert!(empty.files.is_empty());
/// // 20 bytes of header, 6 one-byte varints, a 4-byte checksum:
/// assert_eq!(empty.encode().len(), 30);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Manifest {
    /// The next number to give a new file (log or table).
    pub next_file_number: u64,
    /// The largest sequence number in the table files.
    pub last_sequence: u64,
    /// Logs numbered `>= log_number` must be replayed on open; older ones
    /// are fully in table files.
    pub log_number: u64,
    /// The live table files.
    pub files: Vec<FileMeta>,
    /// Logs this database retired and may not have deleted yet: the only
    /// logs it deletes.
    pub obsolete_logs: Vec<u64>,
    /// Table files this database retired and may not have deleted yet: the
    /// only tables it deletes.
    pub obsolete_tables: Vec<u64>,
}

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
    /// Does not start with [`MAGIC`]: not a manifest.
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
    fn with_file(mut self, path: &Path) -> Self {
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

impl Manifest {
    /// The manifest's file bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::manifest::Manifest;
    /// let m = Manifest { next_file_number: 2, ..Manifest::default() };
    /// assert_eq!(Manifest::decode(&m.encode()).unwrap(), m);
    /// ```
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        for v in [
            self.next_file_number,
            self.log_number,
            self.last_sequence,
            self.files.len() as u64,
        ] {
            put_varint64(&mut body, v);
        }
        for f in &self.files {
            for v in [f.number, u64::from(f.level), f.file_size, f.entries] {
                put_varint64(&mut body, v);
            }
            put_length_prefixed(&mut body, &f.smallest);
            put_length_prefixed(&mut body, &f.largest);
        }
        for list in [&self.obsolete_logs, &self.obsolete_tables] {
            put_varint64(&mut body, list.len() as u64);
            for &n in list {
                put_varint64(&mut body, n);
            }
        }
        let mut out = Vec::with_capacity(HEADER_LEN + body.len() + CRC_LEN);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&body);
        let crc = masked_crc(&[&out]);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Parses manifest bytes; any damage gives a typed error.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::manifest::{Manifest, ManifestError};
    /// let mut bytes = Manifest::default().encode();
    /// bytes[20] ^= 1;
    /// assert!(matches!(Manifest::decode(&bytes), Err(ManifestError::ChecksumMismatch { .. })));
    /// ```
    pub fn decode(bytes: &[u8]) -> Result<Self, ManifestError> {
        let file = None;
        let len = bytes.len() as u64;
        if bytes.len() < HEADER_LEN + CRC_LEN {
            return Err(ManifestError::TooShort { file, len });
        }
        let mut found = [0u8; 8];
        found.copy_from_slice(&bytes[..8]);
        if found != MAGIC {
            return Err(ManifestError::BadMagic { file, found });
        }
        let version = read_u32_le(bytes, 8).unwrap_or_default();
        if version != FORMAT_VERSION && version != 1 {
            return Err(ManifestError::UnsupportedVersion { file, version });
        }
        let body_len = read_u64_le(bytes, 12).unwrap_or_default();
        let expected = body_len.saturating_add((HEADER_LEN + CRC_LEN) as u64);
        if expected != len {
            return Err(ManifestError::LengthMismatch {
                file,
                expected,
                actual: len,
            });
        }
        let crc_at = bytes.len() - CRC_LEN;
        let stored = read_u32_le(bytes, crc_at).unwrap_or_default();
        let computed = masked_crc(&[&bytes[..crc_at]]);
        if stored != computed && VERIFY_CHECKSUMS {
            return Err(ManifestError::ChecksumMismatch {
                file,
                stored,
                computed,
            });
        }
        let body = &bytes[HEADER_LEN..crc_at];
        let mut d = Decoder::new(body);
        Self::decode_body(&mut d, version).map_err(|detail| ManifestError::Corrupt {
            file: None,
            offset: (HEADER_LEN + d.position()) as u64,
            detail,
        })
    }

    fn decode_body(d: &mut Decoder<'_>, version: u32) -> Result<Self, &'static str> {
        let next_file_number = d.varint64("bad next file number")?;
        let log_number = d.varint64("bad log number")?;
        let last_sequence = d.varint64("bad last sequence")?;
        let count = d.varint64("bad file count")?;
        // Each file takes at least 6 bytes: refuse counts the body cannot
        // hold before reserving room for them.
        if count > (d.remaining() / 6) as u64 {
            return Err("file count larger than the manifest can hold");
        }
        let mut files = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let number = d.varint64("bad file number")?;
            let level =
                u32::try_from(d.varint64("bad level")?).map_err(|_| "level out of range")?;
            let file_size = d.varint64("bad file size")?;
            let entries = d.varint64("bad entry count")?;
            let smallest = d.length_prefixed("bad smallest key")?.to_vec();
            let largest = d.length_prefixed("bad largest key")?.to_vec();
            files.push(FileMeta {
                number,
                level,
                file_size,
                entries,
                smallest,
                largest,
            });
        }
        let (obsolete_logs, obsolete_tables) = if version == 1 {
            (Vec::new(), Vec::new())
        } else {
            (
                Self::decode_numbers(d, "bad obsolete log")?,
                Self::decode_numbers(d, "bad obsolete table")?,
            )
        };
        if d.remaining() != 0 {
            return Err("trailing bytes after the last field");
        }
        Ok(Self {
            next_file_number,
            last_sequence,
            log_number,
            files,
            obsolete_logs,
            obsolete_tables,
        })
    }

    fn decode_numbers(d: &mut Decoder<'_>, what: &'static str) -> Result<Vec<u64>, &'static str> {
        let count = d.varint64(what)?;
        // A varint takes at least one byte.
        if count > d.remaining() as u64 {
            return Err("list longer than the manifest can hold");
        }
        (0..count).map(|_| d.varint64(what)).collect()
    }

    /// Checks that the contents make sense together, as recovery needs
    /// them to: every file listed once, on a level that exists, with its
    /// smallest key at or below its largest and its sequence numbers within
    /// `last_sequence`; the files of each level below 0 disjoint; file numbers below
    /// `next_file_number`; sequence numbers in range.
    ///
    /// # Errors
    ///
    /// [`ManifestError::Inconsistent`] naming the first problem found.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::key::{internal_key, ValueType};
    /// use lsm_demo::manifest::{FileMeta, Manifest, ManifestError};
    /// let key = internal_key(b"a", 1, ValueType::Value);
    /// let table = FileMeta { number: 3, level: 0, file_size: 100, entries: 1,
    ///     smallest: key.clone(), largest: key };
    /// let mut m = Manifest { next_file_number: 5, last_sequence: 1, log_number: 4,
    ///     files: vec![table.clone()], ..Manifest::default() };
    /// assert!(m.check_consistency().is_ok());
    /// m.files.push(table); // listed twice
    /// let err = m.check_consistency().unwrap_err();
    /// assert!(matches!(err, ManifestError::Inconsistent { .. }));
    /// assert!(err.to_string().contains("listed twice"), "{err}");
    /// ```
    pub fn check_consistency(&self) -> Result<(), ManifestError> {
        self.find_inconsistency().map_or(Ok(()), |detail| {
            Err(ManifestError::Inconsistent { file: None, detail })
        })
    }

    fn find_inconsistency(&self) -> Option<String> {
        use crate::key::{MAX_SEQUENCE, compare_internal_keys, parse_internal_key, user_key};
        use std::cmp::Ordering;
        use std::collections::HashSet;

        if self.last_sequence > MAX_SEQUENCE {
            return Some(format!(
                "last sequence {} is above the largest sequence number {MAX_SEQUENCE}",
                self.last_sequence
            ));
        }
        if self.log_number >= self.next_file_number && self.log_number != 0 {
            return Some(format!(
                "log number {} is not below the next file number {}",
                self.log_number, self.next_file_number
            ));
        }
        let mut numbers = HashSet::new();
        for f in &self.files {
            let n = f.number;
            if !numbers.insert(n) {
                return Some(format!("table {n} is listed twice"));
            }
            if n >= self.next_file_number {
                return Some(format!(
                    "table {n} is not below the next file number {}",
                    self.next_file_number
                ));
            }
            if f.level as usize >= NUM_LEVELS {
                return Some(format!(
                    "table {n} is on level {}, beyond the last",
                    f.level
                ));
            }
            let (Some(lo), Some(hi)) = (
                parse_internal_key(&f.smallest),
                parse_internal_key(&f.largest),
            ) else {
                return Some(format!("table {n} has a malformed smallest or largest key"));
            };
            if compare_internal_keys(&f.smallest, &f.largest) == Ordering::Greater {
                return Some(format!("table {n} has its smallest key above its largest"));
            }
            if lo.sequence.max(hi.sequence) > self.last_sequence {
                return Some(format!(
                    "table {n} holds sequence {} above the last sequence {}",
                    lo.sequence.max(hi.sequence),
                    self.last_sequence
                ));
            }
        }
        for level in 1..NUM_LEVELS as u32 {
            let mut files: Vec<&FileMeta> =
                self.files.iter().filter(|f| f.level == level).collect();
            files.sort_by(|a, b| compare_internal_keys(&a.smallest, &b.smallest));
            for pair in files.windows(2) {
                if user_key(&pair[0].largest) >= user_key(&pair[1].smallest) {
                    return Some(format!(
                        "level-{level} tables {} and {} overlap",
                        pair[0].number, pair[1].number
                    ));
                }
            }
        }
        let mut retired = HashSet::new();
        for &n in self.obsolete_logs.iter().chain(&self.obsolete_tables) {
            if n >= self.next_file_number || numbers.contains(&n) || !retired.insert(n) {
                return Some(format!(
                    "obsolete file {n} is live, listed twice, or not below the next file number"
                ));
            }
        }
        None
    }
}

/// Replaces the manifest in `dir` with `manifest`, atomically and durably.
///
/// Steps: write [`MANIFEST_TEMP_FILE`], sync it, rename it to
/// [`MANIFEST_FILE`], sync `dir`. Returns once the new manifest is durable.
/// On error the durable manifest is the old or the new one (it is not known
/// which once the rename was issued): the caller should retry or stop
/// writing, and must not delete files the old manifest lists. A leftover
/// temporary file is harmless ([`read_manifest`] ignores it; the next write
/// replaces it).
///
/// # Examples
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// use lsm_demo::manifest::{read_manifest, write_manifest, Manifest, MANIFEST_FILE};
/// use std::path::Path;
///
/// let fs = FaultInjectionFs::new();
/// let dir = Path::new("/db");
/// fs.create_dir_all(dir).unwrap();
/// let m = Manifest { next_file_number: 4, ..Manifest::default() };
/// write_manifest(&fs, dir, &m).unwrap();
/// assert_eq!(fs.list_dir(dir).unwrap(), [MANIFEST_FILE]); // the temporary file was renamed
/// fs.simulate_crash(); // durable once the call returns
/// assert_eq!(read_manifest(&fs, dir).unwrap(), Some(m));
/// ```
pub fn write_manifest(fs: &dyn FileSystem, dir: &Path, manifest: &Manifest) -> io::Result<()> {
    let temp = dir.join(MANIFEST_TEMP_FILE);
    let bytes = manifest.encode();
    let written = fs.create(&temp).and_then(|mut file| {
        file.append(&bytes)?;
        file.flush()?;
        file.sync()
    });
    if let Err(e) = written {
        // Best effort: the next write truncates it anyway.
        let _ = fs.remove_file(&temp);
        return Err(e);
    }
    fs.rename(&temp, &dir.join(MANIFEST_FILE))?;
    fs.sync_dir(dir)
}

/// Reads the manifest in `dir`: `None` if there is none (a new database).
///
/// # Examples
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
/// use lsm_demo::manifest::{read_manifest, write_manifest, Manifest};
/// use std::path::Path;
///
/// let fs = FaultInjectionFs::new();
/// let dir = Path::new("db");
/// fs.create_dir_all(dir).unwrap();
/// let old = Manifest { next_file_number: 5, ..Manifest::default() };
/// let new = Manifest { next_file_number: 9, ..Manifest::default() };
/// write_manifest(&fs, dir, &old).unwrap();
/// // The rename happens but the directory sync fails, then power is lost:
/// fs.fail_next(FaultOp::SyncDir, 1);
/// assert!(write_manifest(&fs, dir, &new).is_err());
/// fs.simulate_crash();
/// assert_eq!(read_manifest(&fs, dir).unwrap(), Some(old));
/// ```
pub fn read_manifest(fs: &dyn FileSystem, dir: &Path) -> Result<Option<Manifest>, ManifestError> {
    let path = dir.join(MANIFEST_FILE);
    if !fs.exists(&path) {
        return Ok(None);
    }
    let bytes = fs
        .read_file(&path)
        .map_err(|source| ManifestError::Io { file: None, source }.with_file(&path))?;
    Manifest::decode(&bytes)
        .map(Some)
        .map_err(|e| e.with_file(&path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{FaultInjectionFs, FaultOp};

    fn sample(n: u64) -> Manifest {
        Manifest {
            next_file_number: 100 + n,
            last_sequence: 1 << 40,
            log_number: 99 + n,
            files: (0..n)
                .map(|i| FileMeta {
                    number: i + 1,
                    level: (i % 3) as u32,
                    file_size: 4096 * i,
                    entries: i * 10,
                    smallest: format!("key{i}").into_bytes(),
                    largest: format!("key{i}~").into_bytes(),
                })
                .collect(),
            obsolete_logs: vec![97 + n],
            obsolete_tables: (0..n).map(|i| 200 + i).collect(),
        }
    }

    #[test]
    fn round_trip() {
        for n in [0, 1, 50] {
            let m = sample(n);
            assert_eq!(Manifest::decode(&m.encode()).unwrap(), m);
        }
        let extreme = Manifest {
            next_file_number: u64::MAX,
            last_sequence: u64::MAX,
            log_number: u64::MAX,
            files: vec![FileMeta {
                number: u64::MAX,
                level: u32::MAX,
                file_size: u64::MAX,
                entries: u64::MAX,
                smallest: Vec::new(),
                largest: vec![0xff; 300],
            }],
            obsolete_logs: vec![u64::MAX],
            obsolete_tables: vec![0, u64::MAX],
        };
        assert_eq!(Manifest::decode(&extreme.encode()).unwrap(), extreme);
    }

    #[test]
    fn every_truncation_and_bit_flip_is_an_error() {
        let bytes = sample(3).encode();
        for cut in 0..bytes.len() {
            assert!(Manifest::decode(&bytes[..cut]).is_err(), "cut {cut}");
        }
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut damaged = bytes.clone();
                damaged[i] ^= 1 << bit;
                assert!(Manifest::decode(&damaged).is_err(), "flip {i}:{bit}");
            }
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(
            Manifest::decode(&longer),
            Err(ManifestError::LengthMismatch { .. })
        ));
    }

    /// Re-checksums a body so the parser itself is exercised.
    fn with_body(body: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(body);
        let crc = masked_crc(&[&out]);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    #[test]
    fn bad_bodies_with_good_checksums() {
        // Huge file count.
        let mut body = vec![1, 1, 1];
        put_varint64(&mut body, u64::MAX);
        let err = Manifest::decode(&with_body(&body)).unwrap_err();
        assert!(matches!(err, ManifestError::Corrupt { .. }), "{err}");
        // Key length past the end.
        let mut body = vec![1, 1, 1, 1, 1, 0, 0, 0];
        put_varint64(&mut body, 1 << 40);
        body.extend_from_slice(&[0; 8]);
        let err = Manifest::decode(&with_body(&body)).unwrap_err();
        assert!(err.to_string().contains("smallest key"), "{err}");
        // Level over u32.
        let mut body = vec![1, 1, 1, 1, 1];
        put_varint64(&mut body, 1 << 33);
        body.extend_from_slice(&[0; 8]);
        assert!(Manifest::decode(&with_body(&body)).is_err());
        // Trailing bytes.
        let mut body = sample(1).encode()[HEADER_LEN..].to_vec();
        body.truncate(body.len() - CRC_LEN);
        body.push(0);
        assert!(Manifest::decode(&with_body(&body)).is_err());
        // Other version.
        let mut bytes = sample(0).encode();
        bytes[8] = 3;
        assert!(matches!(
            Manifest::decode(&bytes),
            Err(ManifestError::UnsupportedVersion { version: 3, .. })
        ));
    }

    #[test]
    fn version_1_reads_without_obsolete_lists() {
        let mut m = sample(2);
        m.obsolete_logs.clear();
        m.obsolete_tables.clear();
        let mut body = m.encode()[HEADER_LEN..].to_vec();
        body.truncate(body.len() - CRC_LEN);
        // Version 1 ends before the two (empty) lists' counts.
        body.truncate(body.len() - 2);
        let mut bytes = with_body(&body);
        bytes[8] = 1;
        let crc_at = bytes.len() - CRC_LEN;
        let crc = masked_crc(&[&bytes[..crc_at]]);
        bytes[crc_at..].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(Manifest::decode(&bytes).unwrap(), m);
    }

    fn consistent() -> Manifest {
        use crate::key::{ValueType, internal_key};
        let table = |number, level, lo: &[u8], hi: &[u8]| FileMeta {
            number,
            level,
            file_size: 100,
            entries: 2,
            smallest: internal_key(lo, 5, ValueType::Value),
            largest: internal_key(hi, 7, ValueType::Deletion),
        };
        Manifest {
            next_file_number: 10,
            last_sequence: 7,
            log_number: 9,
            files: vec![
                table(4, 0, b"a", b"z"),
                table(5, 1, b"a", b"f"),
                table(6, 1, b"g", b"m"),
            ],
            obsolete_logs: vec![3],
            obsolete_tables: vec![1, 2],
        }
    }

    #[test]
    fn consistency_checks_name_each_problem() {
        assert!(consistent().check_consistency().is_ok());
        assert!(Manifest::default().check_consistency().is_ok());
        type Damage = fn(&mut Manifest);
        let cases: [(&str, Damage); 11] = [
            ("listed twice", |m| m.files.push(m.files[0].clone())),
            ("beyond the last", |m| m.files[0].level = 9),
            ("next file number", |m| m.next_file_number = 5),
            ("log number", |m| m.log_number = 10),
            ("largest sequence number", |m| {
                m.last_sequence = u64::MAX - 1
            }),
            ("above the last sequence", |m| m.last_sequence = 6),
            ("overlap", |m| {
                m.files[2].smallest = m.files[1].largest.clone()
            }),
            ("smallest key above", |m| {
                let f = &mut m.files[1];
                std::mem::swap(&mut f.smallest, &mut f.largest);
            }),
            ("malformed", |m| m.files[0].largest = b"short".to_vec()),
            ("obsolete file 5", |m| m.obsolete_tables.push(5)),
            ("obsolete file 12", |m| m.obsolete_logs.push(12)),
        ];
        for (what, damage) in cases {
            let mut m = consistent();
            damage(&mut m);
            let err = m.check_consistency().unwrap_err();
            assert!(matches!(err, ManifestError::Inconsistent { .. }));
            assert!(err.to_string().contains(what), "{what}: {err}");
        }
    }

    #[test]
    fn read_names_the_file() {
        let fs = FaultInjectionFs::new();
        let mut f = fs.create(Path::new("MANIFEST")).unwrap();
        f.append(b"garbage that is long enough to have a header")
            .unwrap();
        let err = read_manifest(&fs, Path::new("")).unwrap_err();
        assert!(matches!(err, ManifestError::BadMagic { .. }));
        assert!(err.to_string().contains("MANIFEST"), "{err}");
    }

    #[test]
    fn failure_at_each_step_leaves_old_or_new() {
        let dir = Path::new("/db");
        let (old, new) = (sample(2), sample(5));
        for op in [
            FaultOp::Create,
            FaultOp::Append,
            FaultOp::Sync,
            FaultOp::Rename,
            FaultOp::SyncDir,
        ] {
            for crash in [false, true] {
                let fs = FaultInjectionFs::new();
                fs.create_dir_all(dir).unwrap();
                write_manifest(&fs, dir, &old).unwrap();
                fs.fail_next(op, 1);
                assert!(write_manifest(&fs, dir, &new).is_err(), "{op:?}");
                if crash {
                    fs.simulate_crash();
                }
                let got = read_manifest(&fs, dir).unwrap().unwrap();
                let renamed = matches!(op, FaultOp::SyncDir);
                let expected = if renamed && !crash { &new } else { &old };
                assert_eq!(&got, expected, "{op:?} crash={crash}");
                // A retry succeeds and is durable.
                write_manifest(&fs, dir, &new).unwrap();
                fs.simulate_crash();
                assert_eq!(read_manifest(&fs, dir).unwrap().unwrap(), new);
            }
        }
    }

    #[test]
    fn torn_crashes_never_mix() {
        let dir = Path::new("db");
        for seed in 0..50 {
            let fs = FaultInjectionFs::new();
            fs.create_dir_all(dir).unwrap();
            write_manifest(&fs, dir, &sample(1)).unwrap();
            // Stop before the directory sync: the rename is not durable.
            fs.fail_next(FaultOp::SyncDir, 1);
            let _ = write_manifest(&fs, dir, &sample(4));
            fs.simulate_crash_torn(seed);
            assert_eq!(read_manifest(&fs, dir).unwrap().unwrap(), sample(1));
        }
        let fs = FaultInjectionFs::new();
        fs.create_dir_all(dir).unwrap();
        assert_eq!(read_manifest(&fs, dir).unwrap(), None);
        // A temporary file alone is not a manifest.
        fs.fail_next(FaultOp::Rename, 1);
        assert!(write_manifest(&fs, dir, &sample(1)).is_err());
        assert!(fs.exists(&dir.join(MANIFEST_TEMP_FILE)));
        assert_eq!(read_manifest(&fs, dir).unwrap(), None);
    }
}
