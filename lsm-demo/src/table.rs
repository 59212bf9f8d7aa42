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
//! # File format (versions 1 and 2)
//!
//! ```text
//! data block 0 | ... | data block n-1 | filter block
//! [| range-deletion block] | properties block | index block | footer (64 bytes)
//! ```
//!
//! Every block is followed by a 5-byte trailer: its kind (`u8`: 1 data,
//! 2 filter, 3 properties, 4 index, 5 range deletion) and the masked CRC32C
//! of the contents and kind byte (`u32` LE; mask: rotate right 15, add
//! `0x6c736d64`). The kind byte makes a handle that points at the wrong
//! block fail as corruption.
//!
//! A table without range deletions is written as version 1, byte for byte
//! as before they existed; one with range deletions
//! ([`TableBuilder::add_range_deletion`]) as version 2, which older builds
//! refuse with [`TableError::UnsupportedVersion`] rather than misread.
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
//! - **Range-deletion block** (version 2 only): the range deletions in the
//!   order added, each a key and an end as varint lengths and bytes
//!   (opaque to the table: the engine stores a tombstone's start and
//!   sequence as an internal key, and its end as a user key).
//! - **Properties block**: varints `entries`, `data_blocks`,
//!   `raw_key_bytes`, `raw_value_bytes`, `bloom_bits_per_key`, then the
//!   smallest and largest keys, each as a varint length and bytes; in
//!   version 2 then varints `range_deletions` and the range-deletion
//!   block's handle (`offset`, `size`).
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
mod builder;
pub(crate) mod coding;
mod error;
mod iter;
mod range_del;
mod reader;

pub use builder::TableBuilder;
use coding::{
    Decoder, VERIFY_CHECKSUMS, masked_crc, put_length_prefixed, put_varint64, read_u32_le,
    read_u64_le,
};
pub use error::TableError;
pub use iter::TableIter;
pub use key_comparator::Comparator;
pub use reader::Table;
use std::fmt;
use std::sync::Arc;

/// A comparator shared by builders, tables and iterators.
pub type SharedComparator = Arc<dyn Comparator + Send + Sync>;

/// Picks the part of a table key that the bloom filter is keyed by.
pub type FilterKeyFn = fn(&[u8]) -> &[u8];

/// The newest table format version this module writes and reads: tables
/// with range deletions. Tables without are written as
/// [`BASE_FORMAT_VERSION`].
///
/// # Examples
///
/// ```
/// use lsm_demo::table::{BASE_FORMAT_VERSION, FORMAT_VERSION};
/// assert_eq!((BASE_FORMAT_VERSION, FORMAT_VERSION), (1, 2));
/// ```
pub const FORMAT_VERSION: u32 = 2;
/// The format version of tables without range deletions: the format from
/// before range deletions, unchanged.
///
/// # Examples
///
/// ```
/// use lsm_demo::table::BASE_FORMAT_VERSION;
/// assert_eq!(BASE_FORMAT_VERSION, 1);
/// ```
pub const BASE_FORMAT_VERSION: u32 = 1;
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
    /// The range deletions (format version 2).
    RangeDeletion,
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
            Self::RangeDeletion => 5,
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
            Self::RangeDeletion => "range-deletion block",
            Self::Footer => "footer",
        })
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
    /// Number of range deletions ([`TableBuilder::add_range_deletion`]).
    pub range_deletions: u64,
}

impl TableProperties {
    /// Encodes the properties; with the handle of the range-deletion block
    /// when there is one (format version 2).
    fn encode(&self, range_deletions: Option<BlockHandle>) -> Vec<u8> {
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
        if let Some(handle) = range_deletions {
            put_varint64(&mut out, self.range_deletions);
            handle.encode_to(&mut out);
        }
        out
    }

    /// Decodes the properties of a table of format `version`, with the
    /// handle of its range-deletion block in version 2.
    fn decode(input: &[u8], version: u32) -> Result<(Self, Option<BlockHandle>), &'static str> {
        let mut d = Decoder::new(input);
        let mut props = Self {
            entries: d.varint64("bad entry count")?,
            data_blocks: d.varint64("bad data block count")?,
            raw_key_bytes: d.varint64("bad key byte count")?,
            raw_value_bytes: d.varint64("bad value byte count")?,
            bloom_bits_per_key: d.varint64("bad bloom setting")?,
            smallest: d.length_prefixed("bad smallest key")?.to_vec(),
            largest: d.length_prefixed("bad largest key")?.to_vec(),
            range_deletions: 0,
        };
        let mut handle = None;
        if version >= FORMAT_VERSION {
            props.range_deletions = d.varint64("bad range deletion count")?;
            handle = Some(BlockHandle {
                offset: d.varint64("bad range-deletion block handle")?,
                size: d.varint64("bad range-deletion block handle")?,
            });
        }
        if d.remaining() != 0 {
            return Err("trailing bytes after the properties");
        }
        Ok((props, handle))
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
    version: u32,
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
        out[48..52].copy_from_slice(&self.version.to_le_bytes());
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
        if !(BASE_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
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
            version,
        })
    }
}
