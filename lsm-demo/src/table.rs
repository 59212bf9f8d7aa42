//! Sorted table files: immutable files of key-value entries in key order,
//! written once by a flush or a compaction and then read by point lookups and
//! iterators.
//!
//! Keys are opaque byte strings ordered by a caller-supplied
//! [`Comparator`]; each key appears once. A caller-supplied *filter key*
//! function picks the part of a key the bloom filter is built on (the engine
//! stores internal keys — user key plus sequence and type — but looks up by
//! user key, so its filter key strips the 8-byte suffix).
//!
//! # File format (version 1)
//!
//! ```text
//! data block 0 | ... | data block n-1 | filter block | properties block
//! | index block | footer (64 bytes)
//! ```
//!
//! Every block is followed by a 5-byte trailer: its kind (`u8`: 1 data,
//! 2 filter, 3 properties, 4 index) and the masked CRC32C of the contents and
//! kind byte (`u32` LE; mask: rotate right 15, add `0x6c736d64`). The kind
//! byte makes a handle that points at the wrong block fail as corruption.
//!
//! - **Data blocks** (about [`TableOptions::block_size`] bytes before the
//!   trailer): entries with prefix-compressed keys and a restart point every
//!   [`TableOptions::restart_interval`] entries (see the `block` module:
//!   `shared, unshared, value_len` varints, key suffix, value; then the
//!   restart offsets and their count as `u32` LE).
//! - **Index block**: same encoding, restart interval 1; one entry per data
//!   block, key = the block's last key, value = the block's handle
//!   (`offset`, `size` as varints; `size` excludes the trailer).
//! - **Filter block**: a [`crate::bloom`] filter over the filter keys of all
//!   entries (empty when [`TableOptions::bloom_bits_per_key`] is 0).
//! - **Properties block**: varints `entries`, `data_blocks`,
//!   `raw_key_bytes`, `raw_value_bytes`, `bloom_bits_per_key`, then the
//!   smallest and largest keys, each as a varint length and bytes.
//! - **Footer**: handles of the index, filter and properties blocks (offset
//!   and size, each a `u64` LE), the format version (`u32` LE), the masked
//!   CRC32C of the 52 bytes before it (`u32` LE), and the magic `lsm-sst!`.
//!
//! Every block's checksum is verified on every read (fuzzing builds, with
//! `--cfg fuzzing`, ignore mismatches to reach the parsers); bad input of any kind
//! gives a [`TableError`], never a panic, and no allocation is sized by a
//! length read from the file before that length is checked against the file
//! size.
//!
//! # Examples
//!
//! ```
//! use lsm_demo::env::{FaultInjectionFs, FileSystem};
//! use lsm_demo::table::{Table, TableBuilder, TableOptions};
//! use key_comparator::BytewiseComparator;
//! use std::{path::Path, sync::Arc};
//!
//! let fs = FaultInjectionFs::new();
//! let path = Path::new("000007.sst");
//! let cmp = Arc::new(BytewiseComparator);
//! fn whole_key(k: &[u8]) -> &[u8] { k } // bloom on the whole key
//! let mut builder = TableBuilder::new(
//!     fs.create(path).unwrap(), TableOptions::default(), cmp.clone(), whole_key);
//! builder.add(b"apple", b"red").unwrap();
//! builder.add(b"pear", b"green").unwrap();
//! let info = builder.finish().unwrap();
//! assert_eq!(info.entries, 2);
//!
//! let table = Table::open(fs.open_random(path).unwrap(), info.file_size, cmp, whole_key).unwrap();
//! assert!(table.may_contain(b"pear"));
//! let mut it = table.iter();
//! it.seek(b"b");
//! assert_eq!((it.key(), it.value()), (&b"pear"[..], &b"green"[..]));
//! it.next();
//! assert!(!it.valid());
//! it.status().unwrap();
//! ```

mod block;
pub(crate) mod coding;

use crate::bloom::{BloomBuilder, BloomFilter};
use crate::env::{FileSystem, RandomAccessFile, WritableFile};
use block::{Block, BlockBuilder, BlockIter};
use coding::{
    Decoder, VERIFY_CHECKSUMS, masked_crc, put_length_prefixed, put_varint64, read_u32_le,
    read_u64_le,
};
pub use key_comparator::Comparator;
use std::cmp::Ordering;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A comparator shared by builders, tables and iterators.
pub type SharedComparator = Arc<dyn Comparator + Send + Sync>;

/// Picks the part of a table key that the bloom filter is keyed by.
pub type FilterKeyFn = fn(&[u8]) -> &[u8];

/// The table format version this module writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// The last 8 bytes of every table file.
pub const MAGIC: [u8; 8] = *b"lsm-sst!";
/// Size of the footer at the end of every table file.
pub const FOOTER_LEN: u64 = 64;
/// Bytes after each block: kind (1) and masked CRC32C (4).
const TRAILER_LEN: u64 = 5;
/// Largest key or value a table accepts.
pub const MAX_ENTRY_PART_LEN: usize = u32::MAX as usize;
/// Largest block size a table accepts; larger settings are clamped.
const MAX_BLOCK_SIZE: usize = 1 << 30;

/// The kinds of block in a table file, named in errors.
///
/// # Examples
///
/// Errors about damage name the block it was found in:
///
/// ```
/// use lsm_demo::table::{BlockKind, Table, TableError};
/// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// # use lsm_demo::table::{TableBuilder, TableOptions};
/// # use std::{path::Path, sync::Arc};
/// # let fs = FaultInjectionFs::new();
/// # let cmp = Arc::new(key_comparator::BytewiseComparator);
/// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), TableOptions::default(), cmp.clone(), |k| k);
/// # b.add(b"apple", b"red").unwrap();
/// # b.add(b"pear", b"green").unwrap();
/// # let size = b.finish().unwrap().file_size;
/// let mut bytes = fs.read_file(Path::new("t.sst")).unwrap();
/// bytes[size as usize - 20] ^= 1; // damage the footer
/// let err = Table::open(Arc::new(bytes), size, cmp, |k| k).unwrap_err();
/// assert!(matches!(err, TableError::ChecksumMismatch { block: BlockKind::Footer, .. }));
/// assert_eq!(BlockKind::Footer.to_string(), "footer");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// Sorted key-value entries.
    Data,
    /// The bloom filter.
    Filter,
    /// Entry count and key range.
    Properties,
    /// Last key and handle of each data block.
    Index,
    /// The fixed-size footer at the end of the file.
    Footer,
}

impl BlockKind {
    fn tag(self) -> u8 {
        match self {
            Self::Data => 1,
            Self::Filter => 2,
            Self::Properties => 3,
            Self::Index => 4,
            Self::Footer => 0,
        }
    }
}

impl fmt::Display for BlockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Data => "data block",
            Self::Filter => "filter block",
            Self::Properties => "properties block",
            Self::Index => "index block",
            Self::Footer => "footer",
        })
    }
}

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
                "unsupported table format version {version} (this build reads {FORMAT_VERSION})"
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

/// How a table is laid out.
///
/// # Examples
///
/// ```
/// use lsm_demo::table::TableOptions;
/// let opts = TableOptions { block_size: 16 << 10, ..TableOptions::default() };
/// assert_eq!(opts.restart_interval, 16);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableOptions {
    /// Target size of a data block's contents (a block closes once it
    /// reaches this size; clamped to 1 GiB). Default 4096.
    pub block_size: usize,
    /// Entries between restart points in data blocks (at least 1).
    /// Default 16.
    pub restart_interval: usize,
    /// Bloom filter bits per filter key; 0 writes no filter. Default 10.
    pub bloom_bits_per_key: usize,
}

impl Default for TableOptions {
    fn default() -> Self {
        Self {
            block_size: 4096,
            restart_interval: 16,
            bloom_bits_per_key: 10,
        }
    }
}

/// What [`TableBuilder::finish`] wrote.
///
/// # Examples
///
/// ```
/// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// # use lsm_demo::table::{TableBuilder, TableOptions};
/// # use std::{path::Path, sync::Arc};
/// # let fs = FaultInjectionFs::new();
/// # let cmp = Arc::new(key_comparator::BytewiseComparator);
/// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), TableOptions::default(), cmp, |k| k);
/// b.add(b"apple", b"red").unwrap();
/// b.add(b"pear", b"green").unwrap();
/// let info = b.finish().unwrap();
/// assert_eq!((info.entries, info.file_size), (2, fs.file_size(Path::new("t.sst")).unwrap()));
/// assert_eq!((info.smallest, info.largest), (b"apple".to_vec(), b"pear".to_vec()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableInfo {
    /// Size of the file in bytes.
    pub file_size: u64,
    /// Number of entries.
    pub entries: u64,
    /// The first key (empty if there are no entries).
    pub smallest: Vec<u8>,
    /// The last key (empty if there are no entries).
    pub largest: Vec<u8>,
}

/// Summary stored in a table's properties block.
///
/// # Examples
///
/// ```
/// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// # use lsm_demo::table::{Table, TableBuilder, TableOptions};
/// # use std::{path::Path, sync::Arc};
/// # let fs = FaultInjectionFs::new();
/// # let cmp = Arc::new(key_comparator::BytewiseComparator);
/// let opts = TableOptions { block_size: 1, ..TableOptions::default() }; // an entry per block
/// let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), opts, cmp.clone(), |k| k);
/// b.add(b"apple", b"red").unwrap();
/// b.add(b"pear", b"green").unwrap();
/// b.finish().unwrap();
/// let table = Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap();
/// let props = table.properties();
/// assert_eq!((props.entries, props.data_blocks, props.bloom_bits_per_key), (2, 2, 10));
/// assert_eq!((props.raw_key_bytes, props.raw_value_bytes), (9, 8));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TableProperties {
    /// Number of entries.
    pub entries: u64,
    /// Number of data blocks.
    pub data_blocks: u64,
    /// Sum of the key lengths.
    pub raw_key_bytes: u64,
    /// Sum of the value lengths.
    pub raw_value_bytes: u64,
    /// Bits per key of the filter (0: no filter).
    pub bloom_bits_per_key: u64,
    /// The first key (empty if there are no entries).
    pub smallest: Vec<u8>,
    /// The last key (empty if there are no entries).
    pub largest: Vec<u8>,
}

impl TableProperties {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for v in [
            self.entries,
            self.data_blocks,
            self.raw_key_bytes,
            self.raw_value_bytes,
            self.bloom_bits_per_key,
        ] {
            put_varint64(&mut out, v);
        }
        put_length_prefixed(&mut out, &self.smallest);
        put_length_prefixed(&mut out, &self.largest);
        out
    }

    fn decode(input: &[u8]) -> Result<Self, &'static str> {
        let mut d = Decoder::new(input);
        let props = Self {
            entries: d.varint64("bad entry count")?,
            data_blocks: d.varint64("bad data block count")?,
            raw_key_bytes: d.varint64("bad key byte count")?,
            raw_value_bytes: d.varint64("bad value byte count")?,
            bloom_bits_per_key: d.varint64("bad bloom setting")?,
            smallest: d.length_prefixed("bad smallest key")?.to_vec(),
            largest: d.length_prefixed("bad largest key")?.to_vec(),
        };
        if d.remaining() != 0 {
            return Err("trailing bytes after the properties");
        }
        Ok(props)
    }
}

/// Where a block lies in the file (`size` excludes the trailer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct BlockHandle {
    offset: u64,
    size: u64,
}

impl BlockHandle {
    fn encode_to(self, out: &mut Vec<u8>) {
        put_varint64(out, self.offset);
        put_varint64(out, self.size);
    }

    fn decode(input: &[u8]) -> Option<Self> {
        let mut d = Decoder::new(input);
        let handle = Self {
            offset: d.varint64("").ok()?,
            size: d.varint64("").ok()?,
        };
        (d.remaining() == 0).then_some(handle)
    }
}

struct Footer {
    index: BlockHandle,
    filter: BlockHandle,
    properties: BlockHandle,
}

impl Footer {
    fn encode(&self) -> [u8; FOOTER_LEN as usize] {
        let mut out = [0u8; FOOTER_LEN as usize];
        let fields = [
            self.index.offset,
            self.index.size,
            self.filter.offset,
            self.filter.size,
            self.properties.offset,
            self.properties.size,
        ];
        for (i, v) in fields.iter().enumerate() {
            out[8 * i..8 * i + 8].copy_from_slice(&v.to_le_bytes());
        }
        out[48..52].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        let crc = masked_crc(&[&out[..52]]);
        out[52..56].copy_from_slice(&crc.to_le_bytes());
        out[56..64].copy_from_slice(&MAGIC);
        out
    }

    fn decode(bytes: &[u8; FOOTER_LEN as usize], offset: u64) -> Result<Self, TableError> {
        let mut magic = [0u8; 8];
        magic.copy_from_slice(&bytes[56..64]);
        if magic != MAGIC {
            return Err(TableError::BadMagic { found: magic });
        }
        let field = |i: usize| read_u64_le(bytes, 8 * i).unwrap_or_default();
        let stored = read_u32_le(bytes, 52).unwrap_or_default();
        let computed = masked_crc(&[&bytes[..52]]);
        if stored != computed && VERIFY_CHECKSUMS {
            return Err(TableError::ChecksumMismatch {
                block: BlockKind::Footer,
                offset,
                stored,
                computed,
            });
        }
        let version = read_u32_le(bytes, 48).unwrap_or_default();
        if version != FORMAT_VERSION {
            return Err(TableError::UnsupportedVersion { version });
        }
        let handle = |i: usize| BlockHandle {
            offset: field(2 * i),
            size: field(2 * i + 1),
        };
        Ok(Self {
            index: handle(0),
            filter: handle(1),
            properties: handle(2),
        })
    }
}

// ---------------------------------------------------------------------------
// Builder
// ---------------------------------------------------------------------------

/// Writes a table file from entries added in increasing key order.
///
/// The builder issues one append per block. [`Self::finish`] writes the
/// metadata and syncs the file; the caller then syncs the directory (and
/// records the file in the manifest). After an I/O error every further call
/// fails with [`TableError::BuilderFailed`]; delete the file.
///
/// # Examples
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// use lsm_demo::table::{TableBuilder, TableError, TableOptions};
/// use std::{path::Path, sync::Arc};
///
/// let fs = FaultInjectionFs::new();
/// let file = fs.create(Path::new("t.sst")).unwrap();
/// let by_bytes = |a: &[u8], b: &[u8]| a.cmp(b);
/// let mut b = TableBuilder::new(file, TableOptions::default(), Arc::new(by_bytes), |k| k);
/// b.add(b"b", b"1").unwrap();
/// assert!(matches!(b.add(b"a", b"2"), Err(TableError::OutOfOrder { .. })));
/// assert_eq!(b.finish().unwrap().entries, 1);
/// ```
pub struct TableBuilder {
    file: Box<dyn WritableFile>,
    opts: TableOptions,
    cmp: SharedComparator,
    filter_key: FilterKeyFn,
    data_block: BlockBuilder,
    index_block: BlockBuilder,
    bloom: Option<BloomBuilder>,
    last_filter_key: Option<Vec<u8>>,
    props: TableProperties,
    offset: u64,
    failed: bool,
    scratch: Vec<u8>,
}

impl fmt::Debug for TableBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableBuilder")
            .field("file", &self.file)
            .field("opts", &self.opts)
            .field("entries", &self.props.entries)
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

impl TableBuilder {
    /// A builder writing to `file` (which should be empty).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::table::{Table, TableBuilder, TableOptions};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// let opts = TableOptions { bloom_bits_per_key: 0, ..TableOptions::default() }; // no filter
    /// let b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), opts, cmp.clone(), |k| k);
    /// assert_eq!(b.entries(), 0);
    /// b.finish().unwrap(); // an empty table is a valid table
    /// let table = Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap();
    /// assert_eq!(table.properties().entries, 0);
    /// assert!(table.may_contain(b"anything")); // without a filter, every key may be there
    /// ```
    pub fn new(
        file: Box<dyn WritableFile>,
        opts: TableOptions,
        cmp: SharedComparator,
        filter_key: FilterKeyFn,
    ) -> Self {
        let opts = TableOptions {
            block_size: opts.block_size.clamp(1, MAX_BLOCK_SIZE),
            restart_interval: opts.restart_interval.max(1),
            bloom_bits_per_key: opts.bloom_bits_per_key,
        };
        let offset = file.size();
        Self {
            file,
            data_block: BlockBuilder::new(opts.restart_interval),
            index_block: BlockBuilder::new(1),
            bloom: (opts.bloom_bits_per_key > 0)
                .then(|| BloomBuilder::new(opts.bloom_bits_per_key)),
            last_filter_key: None,
            props: TableProperties {
                bloom_bits_per_key: opts.bloom_bits_per_key as u64,
                ..TableProperties::default()
            },
            opts,
            cmp,
            filter_key,
            offset,
            failed: false,
            scratch: Vec::new(),
        }
    }

    /// Adds an entry. Keys must be strictly increasing under the
    /// comparator; a key out of order is refused with
    /// [`TableError::OutOfOrder`] and the builder stays usable.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::table::TableError;
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), TableOptions::default(), cmp, |k| k);
    /// b.add(b"b", b"1").unwrap();
    /// // An equal key is out of order too; it is refused and the builder goes on.
    /// let err = b.add(b"b", b"2").unwrap_err();
    /// assert!(matches!(&err, TableError::OutOfOrder { previous, key } if previous == b"b" && key == b"b"));
    /// b.add(b"c", b"3").unwrap();
    /// assert_eq!(b.finish().unwrap().entries, 2);
    /// ```
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<(), TableError> {
        if self.failed {
            return Err(TableError::BuilderFailed);
        }
        if key.len() > MAX_ENTRY_PART_LEN || value.len() > MAX_ENTRY_PART_LEN {
            return Err(TableError::EntryTooLarge {
                key_len: key.len(),
                value_len: value.len(),
            });
        }
        if self.props.entries > 0 && self.cmp.compare(key, &self.props.largest) != Ordering::Greater
        {
            return Err(TableError::OutOfOrder {
                previous: self.props.largest.clone(),
                key: key.to_vec(),
            });
        }
        if let Some(bloom) = &mut self.bloom {
            let fk = (self.filter_key)(key);
            if self.last_filter_key.as_deref() != Some(fk) {
                bloom.add_key(fk);
                let last = self.last_filter_key.get_or_insert_with(Vec::new);
                last.clear();
                last.extend_from_slice(fk);
            }
        }
        if self.props.entries == 0 {
            self.props.smallest = key.to_vec();
        }
        self.props.largest.clear();
        self.props.largest.extend_from_slice(key);
        self.props.entries += 1;
        self.props.raw_key_bytes += key.len() as u64;
        self.props.raw_value_bytes += value.len() as u64;
        self.data_block.add(key, value);
        if self.data_block.size_estimate() >= self.opts.block_size {
            self.flush_data_block()?;
        }
        Ok(())
    }

    /// Entries added so far.
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), TableOptions::default(), cmp, |k| k);
    /// assert_eq!(b.entries(), 0);
    /// b.add(b"a", b"1").unwrap();
    /// b.add(b"b", b"2").unwrap();
    /// assert!(b.add(b"a", b"3").is_err()); // refused entries are not counted
    /// assert_eq!(b.entries(), 2);
    /// ```
    pub fn entries(&self) -> u64 {
        self.props.entries
    }

    /// Bytes written so far plus the pending data block: what the file
    /// would be without its metadata if finished now.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::table::FOOTER_LEN;
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), TableOptions::default(), cmp, |k| k);
    /// let empty = b.estimated_size();
    /// b.add(b"key", b"value").unwrap();
    /// let estimate = b.estimated_size();
    /// assert!(estimate > empty);
    /// // Finishing adds the filter, properties and index blocks and the footer.
    /// assert!(b.finish().unwrap().file_size > estimate + FOOTER_LEN);
    /// ```
    pub fn estimated_size(&self) -> u64 {
        self.offset + self.data_block.size_estimate() as u64
    }

    fn flush_data_block(&mut self) -> Result<(), TableError> {
        if self.data_block.is_empty() {
            return Ok(());
        }
        let mut contents = std::mem::take(&mut self.scratch);
        contents.clear();
        contents.extend_from_slice(self.data_block.finish());
        let handle = self.write_block(&mut contents, BlockKind::Data);
        self.scratch = contents;
        let handle = handle?;
        let mut encoded = Vec::with_capacity(20);
        handle.encode_to(&mut encoded);
        self.index_block.add(self.data_block.last_key(), &encoded);
        self.data_block.reset();
        self.props.data_blocks += 1;
        Ok(())
    }

    /// Appends `contents` plus its trailer in one write; `contents` is
    /// used as the write buffer.
    fn write_block(
        &mut self,
        contents: &mut Vec<u8>,
        kind: BlockKind,
    ) -> Result<BlockHandle, TableError> {
        let handle = BlockHandle {
            offset: self.offset,
            size: contents.len() as u64,
        };
        contents.push(kind.tag());
        let crc = masked_crc(&[contents]);
        contents.extend_from_slice(&crc.to_le_bytes());
        self.append(contents)?;
        Ok(handle)
    }

    fn append(&mut self, bytes: &[u8]) -> Result<(), TableError> {
        if let Err(source) = self.file.append(bytes) {
            self.failed = true;
            return Err(TableError::Io {
                offset: self.offset,
                source,
            });
        }
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Writes the pending data block, the filter, properties and index
    /// blocks and the footer, then syncs the file. The caller must still
    /// sync the directory for the file's name to be durable.
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{Table, TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # fs.create_dir_all(Path::new("/db")).unwrap();
    /// let path = Path::new("/db/000012.sst");
    /// let mut b = TableBuilder::new(fs.create(path).unwrap(), TableOptions::default(), cmp.clone(), |k| k);
    /// b.add(b"k", b"v").unwrap();
    /// let info = b.finish().unwrap(); // syncs the file ...
    /// fs.sync_dir(Path::new("/db")).unwrap(); // ... and the caller syncs its directory
    /// fs.simulate_crash();
    /// assert_eq!(fs.file_size(path).unwrap(), info.file_size);
    /// assert_eq!(Table::open_file(&fs, path, cmp, |k| k).unwrap().properties().entries, 1);
    /// ```
    pub fn finish(mut self) -> Result<TableInfo, TableError> {
        if self.failed {
            return Err(TableError::BuilderFailed);
        }
        self.flush_data_block()?;
        let mut filter = self
            .bloom
            .as_mut()
            .map(BloomBuilder::finish)
            .unwrap_or_default();
        let filter_handle = self.write_block(&mut filter, BlockKind::Filter)?;
        let mut props = self.props.encode();
        let props_handle = self.write_block(&mut props, BlockKind::Properties)?;
        let mut index = self.index_block.finish().to_vec();
        let index_handle = self.write_block(&mut index, BlockKind::Index)?;
        let footer = Footer {
            index: index_handle,
            filter: filter_handle,
            properties: props_handle,
        }
        .encode();
        self.append(&footer)?;
        let offset = self.offset;
        let io_err = |source| TableError::Io { offset, source };
        self.file.flush().map_err(io_err)?;
        self.file.sync().map_err(io_err)?;
        Ok(TableInfo {
            file_size: self.offset,
            entries: self.props.entries,
            smallest: std::mem::take(&mut self.props.smallest),
            largest: std::mem::take(&mut self.props.largest),
        })
    }
}

// ---------------------------------------------------------------------------
// Reader
// ---------------------------------------------------------------------------

/// An open table file. Cheap to share: iterators hold an `Arc` of it.
///
/// Opening reads the footer, index, filter and properties blocks into
/// memory; data blocks are read (and their checksums verified) on demand,
/// with no cache beyond the block an iterator is on.
///
/// # Examples
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// use lsm_demo::table::{Table, TableBuilder, TableError, TableOptions};
/// use key_comparator::BytewiseComparator;
/// use std::{path::Path, sync::Arc};
///
/// let fs = FaultInjectionFs::new();
/// let path = Path::new("000009.sst");
/// let mut b = TableBuilder::new(fs.create(path).unwrap(), TableOptions::default(),
///     Arc::new(BytewiseComparator), |k| k);
/// b.add(b"k", b"v").unwrap();
/// b.finish().unwrap();
///
/// let table = Table::open_file(&fs, path, Arc::new(BytewiseComparator), |k| k).unwrap();
/// assert_eq!(table.properties().entries, 1);
/// assert!(!table.may_contain(b"absent") || table.may_contain(b"k"));
///
/// // Damage is a typed error naming the file.
/// let mut bytes = fs.read_file(path).unwrap();
/// bytes[0] ^= 1;
/// let mut f = fs.create(path).unwrap();
/// f.append(&bytes).unwrap();
/// let table = Table::open_file(&fs, path, Arc::new(BytewiseComparator), |k| k).unwrap();
/// let mut it = table.iter();
/// it.seek_to_first();
/// assert!(!it.valid());
/// let err = it.status().unwrap_err();
/// assert!(matches!(err, TableError::InFile { .. }));
/// assert!(err.to_string().starts_with("000009.sst: checksum mismatch in data block"));
/// ```
pub struct Table {
    file: Arc<dyn RandomAccessFile>,
    file_size: u64,
    cmp: SharedComparator,
    filter_key: FilterKeyFn,
    index: Arc<Block>,
    index_offset: u64,
    filter: Vec<u8>,
    props: TableProperties,
    name: Option<PathBuf>,
}

impl fmt::Debug for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Table")
            .field("name", &self.name)
            .field("file_size", &self.file_size)
            .field("props", &self.props)
            .finish_non_exhaustive()
    }
}

/// Reads and verifies the block at `handle`, which must end at or before
/// `limit`. The buffer is allocated only after that bounds check.
fn read_block(
    file: &dyn RandomAccessFile,
    handle: BlockHandle,
    kind: BlockKind,
    limit: u64,
) -> Result<Vec<u8>, TableError> {
    let corrupt = |detail| TableError::Corruption {
        block: kind,
        offset: handle.offset,
        detail,
    };
    let end = handle
        .offset
        .checked_add(handle.size)
        .and_then(|e| e.checked_add(TRAILER_LEN))
        .ok_or_else(|| corrupt("block handle overflows"))?;
    if end > limit {
        return Err(corrupt("block handle points past the end of its region"));
    }
    let len = usize::try_from(handle.size + TRAILER_LEN).map_err(|_| corrupt("block too large"))?;
    let mut buf = vec![0u8; len];
    file.read_exact_at(handle.offset, &mut buf)
        .map_err(|source| TableError::Io {
            offset: handle.offset,
            source,
        })?;
    let contents_len = len - TRAILER_LEN as usize;
    let stored = read_u32_le(&buf, contents_len + 1).unwrap_or_default();
    let computed = masked_crc(&[&buf[..contents_len + 1]]);
    if stored != computed && VERIFY_CHECKSUMS {
        return Err(TableError::ChecksumMismatch {
            block: kind,
            offset: handle.offset,
            stored,
            computed,
        });
    }
    if buf[contents_len] != kind.tag() {
        return Err(corrupt("handle points at a block of another kind"));
    }
    buf.truncate(contents_len);
    Ok(buf)
}

impl Table {
    /// Opens a table of `file_size` bytes (the size [`TableBuilder::finish`]
    /// reported). `cmp` and `filter_key` must be the ones it was built with.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::table::{Table, TableError};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), TableOptions::default(), cmp.clone(), |k| k);
    /// # b.add(b"apple", b"red").unwrap();
    /// # b.add(b"pear", b"green").unwrap();
    /// # let size = b.finish().unwrap().file_size;
    /// // Any `RandomAccessFile` will do, such as the file's bytes in memory.
    /// let bytes = fs.read_file(Path::new("t.sst")).unwrap();
    /// let table = Table::open(Arc::new(bytes.clone()), size, cmp.clone(), |k| k).unwrap();
    /// assert_eq!(table.properties().entries, 2);
    /// // A file shorter than the size it was written with is refused.
    /// let short = bytes[..bytes.len() - 1].to_vec();
    /// let err = Table::open(Arc::new(short), size, cmp, |k| k).unwrap_err();
    /// assert!(matches!(err, TableError::Truncated { expected, actual } if actual == expected - 1));
    /// ```
    pub fn open(
        file: Arc<dyn RandomAccessFile>,
        file_size: u64,
        cmp: SharedComparator,
        filter_key: FilterKeyFn,
    ) -> Result<Arc<Self>, TableError> {
        Self::open_inner(file, file_size, cmp, filter_key, None).map(Arc::new)
    }

    /// [`Table::open`] for the file at `path`: errors, including those met
    /// later by iterators, name the file ([`TableError::InFile`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::table::{Table, TableError};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # let mut b = TableBuilder::new(fs.create(Path::new("7.sst")).unwrap(), TableOptions::default(), cmp.clone(), |k| k);
    /// # b.add(b"apple", b"red").unwrap();
    /// # let size = b.finish().unwrap().file_size;
    /// let path = Path::new("7.sst");
    /// let file = fs.open_random(path).unwrap();
    /// let err = Table::open_named(file, size + 1, cmp, |k| k, path).unwrap_err();
    /// assert!(matches!(err, TableError::InFile { .. }));
    /// assert!(err.to_string().starts_with("7.sst: table file truncated"), "{err}");
    /// ```
    pub fn open_named(
        file: Arc<dyn RandomAccessFile>,
        file_size: u64,
        cmp: SharedComparator,
        filter_key: FilterKeyFn,
        path: &Path,
    ) -> Result<Arc<Self>, TableError> {
        Self::open_inner(file, file_size, cmp, filter_key, Some(path.to_path_buf()))
            .map(Arc::new)
            .map_err(|e| TableError::InFile {
                file: path.to_path_buf(),
                source: Box::new(e),
            })
    }

    /// Opens the table file at `path` through `fs`, taking its size from
    /// the file system. Errors, including those met later by iterators,
    /// name the file ([`TableError::InFile`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::table::{Table, TableError};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), TableOptions::default(), cmp.clone(), |k| k);
    /// # b.add(b"apple", b"red").unwrap();
    /// # b.add(b"pear", b"green").unwrap();
    /// # let size = b.finish().unwrap().file_size;
    /// let table = Table::open_file(&fs, Path::new("t.sst"), cmp.clone(), |k| k).unwrap();
    /// assert_eq!(table.file_size(), size);
    /// let err = Table::open_file(&fs, Path::new("000006.sst"), cmp, |k| k).unwrap_err();
    /// assert!(matches!(err, TableError::InFile { .. }));
    /// assert!(err.to_string().starts_with("000006.sst: "));
    /// ```
    pub fn open_file(
        fs: &dyn FileSystem,
        path: &Path,
        cmp: SharedComparator,
        filter_key: FilterKeyFn,
    ) -> Result<Arc<Self>, TableError> {
        let in_file = |e| TableError::InFile {
            file: path.to_path_buf(),
            source: Box::new(e),
        };
        let io = |source| in_file(TableError::Io { offset: 0, source });
        let file = fs.open_random(path).map_err(io)?;
        let size = file.size().map_err(io)?;
        Self::open_inner(file, size, cmp, filter_key, Some(path.to_path_buf()))
            .map(Arc::new)
            .map_err(in_file)
    }

    fn open_inner(
        file: Arc<dyn RandomAccessFile>,
        file_size: u64,
        cmp: SharedComparator,
        filter_key: FilterKeyFn,
        name: Option<PathBuf>,
    ) -> Result<Self, TableError> {
        if file_size < FOOTER_LEN {
            return Err(TableError::TooShort { file_size });
        }
        let actual = file
            .size()
            .map_err(|source| TableError::Io { offset: 0, source })?;
        if actual < file_size {
            return Err(TableError::Truncated {
                expected: file_size,
                actual,
            });
        }
        let footer_offset = file_size - FOOTER_LEN;
        let mut footer = [0u8; FOOTER_LEN as usize];
        file.read_exact_at(footer_offset, &mut footer)
            .map_err(|source| TableError::Io {
                offset: footer_offset,
                source,
            })?;
        let footer = Footer::decode(&footer, footer_offset)?;
        let index = read_block(file.as_ref(), footer.index, BlockKind::Index, footer_offset)?;
        let index = Block::new(index).map_err(|detail| TableError::Corruption {
            block: BlockKind::Index,
            offset: footer.index.offset,
            detail,
        })?;
        let filter = read_block(
            file.as_ref(),
            footer.filter,
            BlockKind::Filter,
            footer_offset,
        )?;
        let props = read_block(
            file.as_ref(),
            footer.properties,
            BlockKind::Properties,
            footer_offset,
        )?;
        let props = TableProperties::decode(&props).map_err(|detail| TableError::Corruption {
            block: BlockKind::Properties,
            offset: footer.properties.offset,
            detail,
        })?;
        Ok(Self {
            file,
            file_size,
            cmp,
            filter_key,
            index: Arc::new(index),
            index_offset: footer.index.offset,
            filter,
            props,
            name,
        })
    }

    fn named(&self, err: TableError) -> TableError {
        match &self.name {
            Some(file) => TableError::InFile {
                file: file.clone(),
                source: Box::new(err),
            },
            None => err,
        }
    }

    /// Whether an entry whose filter key is `filter_key` may be in the
    /// table: `false` means certainly not. Always `true` without a filter.
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::table::Table;
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), TableOptions::default(), cmp.clone(), |k| k);
    /// # b.add(b"apple", b"red").unwrap();
    /// # b.add(b"pear", b"green").unwrap();
    /// # let size = b.finish().unwrap().file_size;
    /// # let table = Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap();
    /// assert!(table.may_contain(b"apple")); // never a false negative
    /// // With 10 bits per key, about 1% of absent keys get a false "maybe".
    /// let maybe = (0..100).filter(|i| table.may_contain(format!("fig{i}").as_bytes())).count();
    /// assert!(maybe < 10);
    /// ```
    #[inline]
    pub fn may_contain(&self, filter_key: &[u8]) -> bool {
        self.filter.is_empty() || BloomFilter::may_contain(&self.filter, filter_key)
    }

    /// [`Self::may_contain`] for a filter key given by its
    /// [`crate::bloom::hash_key`] hash (hash once, probe many tables).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::bloom::hash_key;
    /// # use lsm_demo::table::Table;
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), TableOptions::default(), cmp.clone(), |k| k);
    /// # b.add(b"apple", b"red").unwrap();
    /// # b.add(b"pear", b"green").unwrap();
    /// # let size = b.finish().unwrap().file_size;
    /// # let tables = [
    /// #     Table::open_file(&fs, Path::new("t.sst"), cmp.clone(), |k| k).unwrap(),
    /// #     Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap(),
    /// # ];
    /// let hash = hash_key(b"apple"); // hash once ...
    /// for table in &tables {
    ///     // ... probe many tables, with the same answers as `may_contain`.
    ///     assert!(table.may_contain_hash(hash));
    ///     assert_eq!(table.may_contain_hash(hash_key(b"fig")), table.may_contain(b"fig"));
    /// }
    /// ```
    #[inline]
    pub fn may_contain_hash(&self, hash: u64) -> bool {
        self.filter.is_empty() || BloomFilter::may_contain_hash(&self.filter, hash)
    }

    /// [`Self::may_contain`] for a full table key (its filter key is taken
    /// with the table's filter-key function).
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{Table, TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// // Table keys carry an 8-byte suffix; the filter is on the key without it.
    /// fn user_key(k: &[u8]) -> &[u8] { &k[..k.len() - 8] }
    /// let file = fs.create(Path::new("t.sst")).unwrap();
    /// let mut b = TableBuilder::new(file, TableOptions::default(), cmp.clone(), user_key);
    /// b.add(b"apple\0\0\0\0\0\0\0\x07", b"red").unwrap();
    /// b.finish().unwrap();
    /// let table = Table::open_file(&fs, Path::new("t.sst"), cmp, user_key).unwrap();
    /// assert!(table.may_contain(b"apple"));
    /// assert!(table.may_contain_key(b"apple\0\0\0\0\0\0\0\x09")); // any suffix
    /// ```
    pub fn may_contain_key(&self, key: &[u8]) -> bool {
        self.may_contain((self.filter_key)(key))
    }

    /// The table's stored properties (entry count, key range, ...).
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::table::Table;
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), TableOptions::default(), cmp.clone(), |k| k);
    /// # b.add(b"apple", b"red").unwrap();
    /// # b.add(b"pear", b"green").unwrap();
    /// # let size = b.finish().unwrap().file_size;
    /// let table = Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap();
    /// let props = table.properties();
    /// assert_eq!(props.entries, 2);
    /// // The key range, to skip tables that cannot hold a key.
    /// assert_eq!((&props.smallest[..], &props.largest[..]), (&b"apple"[..], &b"pear"[..]));
    /// ```
    pub fn properties(&self) -> &TableProperties {
        &self.props
    }

    /// The file size the table was opened with.
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::table::Table;
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), TableOptions::default(), cmp.clone(), |k| k);
    /// # b.add(b"apple", b"red").unwrap();
    /// # b.add(b"pear", b"green").unwrap();
    /// # let size = b.finish().unwrap().file_size;
    /// let mut bytes = fs.read_file(Path::new("t.sst")).unwrap();
    /// bytes.extend_from_slice(b"padding"); // bytes past `size` are ignored
    /// let table = Table::open(Arc::new(bytes), size, cmp, |k| k).unwrap();
    /// assert_eq!(table.file_size(), size);
    /// ```
    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    /// An iterator over the table, not positioned yet (call a seek first).
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{Table, TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # // One entry per data block, so that moves cross blocks.
    /// # let opts = TableOptions { block_size: 1, ..TableOptions::default() };
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), opts, cmp.clone(), |k| k);
    /// # for (k, v) in [(b"a", b"1"), (b"c", b"3"), (b"e", b"5")] {
    /// #     b.add(k, v).unwrap();
    /// # }
    /// # b.finish().unwrap();
    /// # let table = Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap();
    /// let mut it = table.iter();
    /// assert!(!it.valid()); // not positioned yet
    /// it.seek_to_first();
    /// let mut keys = Vec::new();
    /// while it.valid() {
    ///     keys.push(it.key().to_vec());
    ///     it.next();
    /// }
    /// assert_eq!(keys, [b"a", b"c", b"e"]);
    /// ```
    pub fn iter(self: &Arc<Self>) -> TableIter {
        TableIter {
            index: BlockIter::new(Arc::clone(&self.index), Arc::clone(&self.cmp)),
            table: Arc::clone(self),
            data: None,
            data_offset: 0,
            status: None,
        }
    }
}

/// A cursor over a table's entries in key order, forward and backward.
///
/// It owns an `Arc` of its table. A corrupt block or a read error makes it
/// invalid and is kept in [`Self::status`]; the iterator then stays invalid
/// (make a new one to retry). [`Self::key`] and [`Self::value`] return empty
/// slices when the iterator is not valid; moving an invalid iterator with
/// [`Self::next`] or [`Self::prev`] does nothing.
///
/// # Examples
///
/// ```
/// use lsm_demo::table::{Table, TableBuilder, TableOptions};
/// use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// use std::{path::Path, sync::Arc};
///
/// let fs = FaultInjectionFs::new();
/// let cmp = Arc::new(|a: &[u8], b: &[u8]| a.cmp(b));
/// let mut b = TableBuilder::new(fs.create(Path::new("t")).unwrap(),
///     TableOptions::default(), cmp.clone(), |k| k);
/// for k in [b"a", b"c", b"e"] { b.add(k, b"").unwrap(); }
/// let size = b.finish().unwrap().file_size;
/// let t = Table::open(fs.open_random(Path::new("t")).unwrap(), size, cmp, |k| k).unwrap();
/// let mut it = t.iter();
/// it.seek_for_prev(b"d");
/// assert_eq!(it.key(), b"c");
/// it.prev();
/// assert_eq!(it.key(), b"a");
/// it.prev();
/// assert!(!it.valid());
/// assert!(it.status().is_ok());
/// ```
#[derive(Debug)]
pub struct TableIter {
    table: Arc<Table>,
    index: BlockIter,
    data: Option<BlockIter>,
    data_offset: u64,
    status: Option<TableError>,
}

impl TableIter {
    /// Whether the iterator is at an entry.
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{Table, TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # // One entry per data block, so that moves cross blocks.
    /// # let opts = TableOptions { block_size: 1, ..TableOptions::default() };
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), opts, cmp.clone(), |k| k);
    /// # for (k, v) in [(b"a", b"1"), (b"c", b"3"), (b"e", b"5")] {
    /// #     b.add(k, v).unwrap();
    /// # }
    /// # b.finish().unwrap();
    /// # let table = Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap();
    /// let mut it = table.iter();
    /// assert!(!it.valid());
    /// it.seek(b"e");
    /// assert!(it.valid());
    /// it.next(); // past the last entry
    /// assert!(!it.valid());
    /// assert!(it.status().is_ok()); // the end, not an error
    /// ```
    #[inline]
    pub fn valid(&self) -> bool {
        self.status.is_none() && self.data.as_ref().is_some_and(BlockIter::valid)
    }

    /// The current key (empty if not valid).
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{Table, TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # // One entry per data block, so that moves cross blocks.
    /// # let opts = TableOptions { block_size: 1, ..TableOptions::default() };
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), opts, cmp.clone(), |k| k);
    /// # for (k, v) in [(b"a", b"1"), (b"c", b"3"), (b"e", b"5")] {
    /// #     b.add(k, v).unwrap();
    /// # }
    /// # b.finish().unwrap();
    /// # let table = Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap();
    /// let mut it = table.iter();
    /// it.seek_to_last();
    /// assert_eq!(it.key(), b"e");
    /// it.next();
    /// assert_eq!(it.key(), b""); // empty once not valid
    /// ```
    #[inline]
    pub fn key(&self) -> &[u8] {
        match &self.data {
            Some(d) if self.status.is_none() && d.valid() => d.key(),
            _ => &[],
        }
    }

    /// The current value (empty if not valid).
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{Table, TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # // One entry per data block, so that moves cross blocks.
    /// # let opts = TableOptions { block_size: 1, ..TableOptions::default() };
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), opts, cmp.clone(), |k| k);
    /// # for (k, v) in [(b"a", b"1"), (b"c", b"3"), (b"e", b"5")] {
    /// #     b.add(k, v).unwrap();
    /// # }
    /// # b.finish().unwrap();
    /// # let table = Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap();
    /// let mut it = table.iter();
    /// it.seek(b"c");
    /// assert_eq!((it.key(), it.value()), (&b"c"[..], &b"3"[..]));
    /// it.seek(b"f");
    /// assert_eq!(it.value(), b""); // empty once not valid
    /// ```
    #[inline]
    pub fn value(&self) -> &[u8] {
        match &self.data {
            Some(d) if self.status.is_none() && d.valid() => d.value(),
            _ => &[],
        }
    }

    /// `Ok` unless a read error or corruption was met.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::table::{BlockKind, Table, TableError};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), TableOptions::default(), cmp.clone(), |k| k);
    /// # b.add(b"apple", b"red").unwrap();
    /// # b.add(b"pear", b"green").unwrap();
    /// # let size = b.finish().unwrap().file_size;
    /// let mut bytes = fs.read_file(Path::new("t.sst")).unwrap();
    /// bytes[0] ^= 1; // damage the first data block
    /// let table = Table::open(Arc::new(bytes), size, cmp, |k| k).unwrap();
    /// let mut it = table.iter();
    /// it.seek_to_first();
    /// assert!(!it.valid());
    /// let err = it.status().unwrap_err();
    /// assert!(matches!(err, TableError::ChecksumMismatch { block: BlockKind::Data, offset: 0, .. }));
    /// ```
    pub fn status(&self) -> Result<(), TableError> {
        match &self.status {
            None => Ok(()),
            Some(e) => Err(copy_error(e)),
        }
    }

    fn fail(&mut self, err: TableError) {
        if self.status.is_none() {
            self.status = Some(self.table.named(err));
        }
        self.data = None;
    }

    /// Records an error of the index iterator; true if there is none.
    fn index_ok(&mut self) -> bool {
        match self.index.error() {
            None => true,
            Some((_, detail)) => {
                let offset = self.table_index_offset();
                self.fail(TableError::Corruption {
                    block: BlockKind::Index,
                    offset,
                    detail,
                });
                false
            }
        }
    }

    fn table_index_offset(&self) -> u64 {
        self.table.index_offset
    }

    /// Loads the data block the index iterator points at; false on error.
    fn load_data_block(&mut self) -> bool {
        let Some(handle) = BlockHandle::decode(self.index.value()) else {
            let offset = self.table_index_offset();
            self.fail(TableError::Corruption {
                block: BlockKind::Index,
                offset,
                detail: "bad block handle",
            });
            return false;
        };
        if let Some(data) = &self.data
            && self.data_offset == handle.offset
            && data.error().is_none()
        {
            return true;
        }
        let table = &self.table;
        let limit = table.file_size - FOOTER_LEN;
        let block = read_block(table.file.as_ref(), handle, BlockKind::Data, limit).and_then(|b| {
            Block::new(b).map_err(|detail| TableError::Corruption {
                block: BlockKind::Data,
                offset: handle.offset,
                detail,
            })
        });
        match block {
            Ok(block) => {
                self.data = Some(BlockIter::new(Arc::new(block), Arc::clone(&table.cmp)));
                self.data_offset = handle.offset;
                true
            }
            Err(e) => {
                self.fail(e);
                false
            }
        }
    }

    /// Checks the data iterator for corruption; true if there is none.
    fn data_ok(&mut self) -> bool {
        match self.data.as_ref().and_then(BlockIter::error) {
            None => true,
            Some((_, detail)) => {
                let offset = self.data_offset;
                self.fail(TableError::Corruption {
                    block: BlockKind::Data,
                    offset,
                    detail,
                });
                false
            }
        }
    }

    /// Moves forward past exhausted (or empty) data blocks.
    fn skip_forward(&mut self) {
        loop {
            if !self.data_ok() {
                return;
            }
            if self.data.as_ref().is_some_and(BlockIter::valid) || !self.index.valid() {
                return;
            }
            self.index.next();
            if !self.index_ok() {
                return;
            }
            if !self.index.valid() {
                self.data = None;
                return;
            }
            if !self.load_data_block() {
                return;
            }
            if let Some(d) = &mut self.data {
                d.seek_to_first();
            }
        }
    }

    /// Moves backward past exhausted (or empty) data blocks.
    fn skip_backward(&mut self) {
        loop {
            if !self.data_ok() {
                return;
            }
            if self.data.as_ref().is_some_and(BlockIter::valid) || !self.index.valid() {
                return;
            }
            self.index.prev();
            if !self.index_ok() {
                return;
            }
            if !self.index.valid() {
                self.data = None;
                return;
            }
            if !self.load_data_block() {
                return;
            }
            if let Some(d) = &mut self.data {
                d.seek_to_last();
            }
        }
    }

    /// Positions the index iterator with `position` and loads its data
    /// block; false if there is none or on error.
    fn position_index(&mut self, position: impl FnOnce(&mut BlockIter)) -> bool {
        if self.status.is_some() {
            return false;
        }
        position(&mut self.index);
        if !self.index_ok() {
            return false;
        }
        if !self.index.valid() {
            self.data = None;
            return false;
        }
        self.load_data_block()
    }

    /// Moves to the first entry whose key is `>= target`.
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{Table, TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # // One entry per data block, so that moves cross blocks.
    /// # let opts = TableOptions { block_size: 1, ..TableOptions::default() };
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), opts, cmp.clone(), |k| k);
    /// # for (k, v) in [(b"a", b"1"), (b"c", b"3"), (b"e", b"5")] {
    /// #     b.add(k, v).unwrap();
    /// # }
    /// # b.finish().unwrap();
    /// # let table = Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap();
    /// let mut it = table.iter();
    /// it.seek(b"b"); // between two keys: lands on the next one
    /// assert_eq!(it.key(), b"c");
    /// it.seek(b"c"); // an exact match
    /// assert_eq!(it.value(), b"3");
    /// it.seek(b"f"); // past the last key
    /// assert!(!it.valid());
    /// ```
    pub fn seek(&mut self, target: &[u8]) {
        if self.position_index(|i| i.seek(target)) {
            if let Some(d) = &mut self.data {
                d.seek(target);
            }
            self.skip_forward();
        }
    }

    /// Moves to the last entry whose key is `<= target`.
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{Table, TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # // One entry per data block, so that moves cross blocks.
    /// # let opts = TableOptions { block_size: 1, ..TableOptions::default() };
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), opts, cmp.clone(), |k| k);
    /// # for (k, v) in [(b"a", b"1"), (b"c", b"3"), (b"e", b"5")] {
    /// #     b.add(k, v).unwrap();
    /// # }
    /// # b.finish().unwrap();
    /// # let table = Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap();
    /// let mut it = table.iter();
    /// it.seek_for_prev(b"d"); // between two keys: lands on the previous one
    /// assert_eq!(it.key(), b"c");
    /// it.seek_for_prev(b"z");
    /// assert_eq!(it.key(), b"e");
    /// it.seek_for_prev(b"0"); // before the first key
    /// assert!(!it.valid());
    /// ```
    pub fn seek_for_prev(&mut self, target: &[u8]) {
        self.seek(target);
        if self.status.is_some() {
            return;
        }
        if !self.valid() {
            self.seek_to_last();
        } else if self.table.cmp.compare(self.key(), target) == Ordering::Greater {
            self.prev();
        }
    }

    /// Moves to the first entry.
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{Table, TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # // One entry per data block, so that moves cross blocks.
    /// # let opts = TableOptions { block_size: 1, ..TableOptions::default() };
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), opts, cmp.clone(), |k| k);
    /// # for (k, v) in [(b"a", b"1"), (b"c", b"3"), (b"e", b"5")] {
    /// #     b.add(k, v).unwrap();
    /// # }
    /// # b.finish().unwrap();
    /// # let table = Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap();
    /// let mut it = table.iter();
    /// it.seek_to_first();
    /// assert_eq!((it.key(), it.value()), (&b"a"[..], &b"1"[..]));
    /// it.prev();
    /// assert!(!it.valid());
    /// ```
    pub fn seek_to_first(&mut self) {
        if self.position_index(BlockIter::seek_to_first) {
            if let Some(d) = &mut self.data {
                d.seek_to_first();
            }
            self.skip_forward();
        }
    }

    /// Moves to the last entry.
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{Table, TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # // One entry per data block, so that moves cross blocks.
    /// # let opts = TableOptions { block_size: 1, ..TableOptions::default() };
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), opts, cmp.clone(), |k| k);
    /// # for (k, v) in [(b"a", b"1"), (b"c", b"3"), (b"e", b"5")] {
    /// #     b.add(k, v).unwrap();
    /// # }
    /// # b.finish().unwrap();
    /// # let table = Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap();
    /// let mut it = table.iter();
    /// it.seek_to_last();
    /// let mut keys = Vec::new();
    /// while it.valid() {
    ///     keys.push(it.key().to_vec());
    ///     it.prev();
    /// }
    /// assert_eq!(keys, [b"e", b"c", b"a"]);
    /// ```
    pub fn seek_to_last(&mut self) {
        if self.position_index(BlockIter::seek_to_last) {
            if let Some(d) = &mut self.data {
                d.seek_to_last();
            }
            self.skip_backward();
        }
    }

    /// Moves to the next entry (no-op if not valid).
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{Table, TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # // One entry per data block, so that moves cross blocks.
    /// # let opts = TableOptions { block_size: 1, ..TableOptions::default() };
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), opts, cmp.clone(), |k| k);
    /// # for (k, v) in [(b"a", b"1"), (b"c", b"3"), (b"e", b"5")] {
    /// #     b.add(k, v).unwrap();
    /// # }
    /// # b.finish().unwrap();
    /// # let table = Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap();
    /// let mut it = table.iter();
    /// it.seek_to_first();
    /// it.next(); // into the next data block
    /// assert_eq!(it.key(), b"c");
    /// it.next();
    /// it.next();
    /// assert!(!it.valid());
    /// it.next(); // a no-op once not valid
    /// assert!(!it.valid() && it.status().is_ok());
    /// ```
    pub fn next(&mut self) {
        if !self.valid() {
            return;
        }
        if let Some(d) = &mut self.data {
            d.next();
        }
        self.skip_forward();
    }

    /// Moves to the previous entry (no-op if not valid).
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use lsm_demo::table::{Table, TableBuilder, TableOptions};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// # let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// # // One entry per data block, so that moves cross blocks.
    /// # let opts = TableOptions { block_size: 1, ..TableOptions::default() };
    /// # let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), opts, cmp.clone(), |k| k);
    /// # for (k, v) in [(b"a", b"1"), (b"c", b"3"), (b"e", b"5")] {
    /// #     b.add(k, v).unwrap();
    /// # }
    /// # b.finish().unwrap();
    /// # let table = Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap();
    /// let mut it = table.iter();
    /// it.seek(b"c");
    /// it.prev();
    /// assert_eq!(it.key(), b"a");
    /// it.prev(); // before the first entry
    /// assert!(!it.valid());
    /// it.prev(); // a no-op once not valid
    /// assert!(!it.valid() && it.status().is_ok());
    /// ```
    pub fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        if let Some(d) = &mut self.data {
            d.prev();
        }
        self.skip_backward();
    }
}

/// `TableError` holds an `io::Error`, which is not `Clone`: copies keep the
/// kind and message.
fn copy_error(err: &TableError) -> TableError {
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
