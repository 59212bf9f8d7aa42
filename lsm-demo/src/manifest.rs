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
//! # File format (version 3)
//!
//! ```text
//! magic "lsm-mfst" | version: u32 LE (=3) | body_len: u64 LE | body
//! | crc: u32 LE (masked CRC32C of everything before it)
//! body = next_file_number log_number last_sequence file_count  (varints)
//!        file*
//!        obsolete_log_count log_number*  obsolete_table_count table_number*
//!        comparator_len comparator
//! file = number level file_size entries  (varints)
//!        smallest_len smallest largest_len largest
//! ```
//!
//! Version 2 is version 3 without the comparator's name, and is what a
//! database ordered bytewise still writes (so that older builds open it);
//! version 1 is version 2 without the obsolete lists. All three are read.
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
use crate::options::UserComparator;
use crate::table::coding::{
    Decoder, VERIFY_CHECKSUMS, masked_crc, put_length_prefixed, put_varint64, read_u32_le,
    read_u64_le,
};
use std::io;
use std::path::Path;

/// The manifest's file name in the database directory.
pub const MANIFEST_FILE: &str = "MANIFEST";
/// The temporary file a new manifest is written to before the rename.
pub const MANIFEST_TEMP_FILE: &str = "MANIFEST.tmp";
/// The first 8 bytes of a manifest.
pub const MAGIC: [u8; 8] = *b"lsm-mfst";
/// The newest format version this module writes (a manifest without a
/// comparator name is written as version 2); it reads versions 1 to 3.
pub const FORMAT_VERSION: u32 = 3;
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
    /// The name of the order of the user keys (`Options::set_comparator`);
    /// empty for the default, bytewise order.
    pub comparator: String,
}

mod error;
pub use error::ManifestError;

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
        let version = if self.comparator.is_empty() {
            2
        } else {
            put_length_prefixed(&mut body, self.comparator.as_bytes());
            FORMAT_VERSION
        };
        let mut out = Vec::with_capacity(HEADER_LEN + body.len() + CRC_LEN);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&version.to_le_bytes());
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
        if !(1..=FORMAT_VERSION).contains(&version) {
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
        let comparator = if version >= 3 {
            let name = d.length_prefixed("bad comparator name")?;
            match std::str::from_utf8(name) {
                Ok(name) if !name.is_empty() => name.to_owned(),
                _ => return Err("comparator name empty or not UTF-8"),
            }
        } else {
            String::new()
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
            comparator,
        })
    }

    /// The name of the database's order of user keys: `comparator`, or
    /// RocksDB's name for the bytewise order when that is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::manifest::Manifest;
    /// assert_eq!(Manifest::default().comparator_name(), "leveldb.BytewiseComparator");
    /// ```
    pub fn comparator_name(&self) -> &str {
        if self.comparator.is_empty() {
            crate::options::BYTEWISE_NAME
        } else {
            &self.comparator
        }
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
        self.check_consistency_with(&UserComparator::default())
    }

    /// [`check_consistency`](Self::check_consistency) with the database's
    /// order of user keys; the order of the files' keys is checked only
    /// when `ucmp` is the order the manifest names.
    pub(crate) fn check_consistency_with(
        &self,
        ucmp: &UserComparator,
    ) -> Result<(), ManifestError> {
        self.find_inconsistency(ucmp).map_or(Ok(()), |detail| {
            Err(ManifestError::Inconsistent { file: None, detail })
        })
    }

    fn find_inconsistency(&self, ucmp: &UserComparator) -> Option<String> {
        use crate::key::{MAX_SEQUENCE, parse_internal_key, user_key};
        let ordered = ucmp.name() == self.comparator_name();
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
            if ordered && ucmp.compare_internal(&f.smallest, &f.largest) == Ordering::Greater {
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
        for level in (1..NUM_LEVELS as u32).filter(|_| ordered) {
            let mut files: Vec<&FileMeta> =
                self.files.iter().filter(|f| f.level == level).collect();
            files.sort_by(|a, b| ucmp.compare_internal(&a.smallest, &b.smallest));
            for pair in files.windows(2) {
                if ucmp.le(user_key(&pair[1].smallest), user_key(&pair[0].largest)) {
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
mod tests;
