//! [`Table`]: an open table file, its blocks read and verified.

#[cfg(doc)] // for the links in the docs
use super::TableBuilder;
use super::block::Block;
use super::coding::{VERIFY_CHECKSUMS, masked_crc, read_u32_le};
use super::{
    BlockHandle, BlockKind, FOOTER_LEN, FilterKeyFn, Footer, SharedComparator, TRAILER_LEN,
    TableError, TableProperties,
};
use crate::bloom::BloomFilter;
use crate::env::{FileSystem, RandomAccessFile};
use crate::perf::{self, PerfMetric};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    pub(super) file: Arc<dyn RandomAccessFile>,
    pub(super) file_size: u64,
    pub(super) cmp: SharedComparator,
    filter_key: FilterKeyFn,
    pub(super) index: Arc<Block>,
    pub(super) index_offset: u64,
    filter: Vec<u8>,
    props: TableProperties,
    range_deletions: Vec<(Vec<u8>, Vec<u8>)>,
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
pub(super) fn read_block(
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
    let timer = perf::Timer::start();
    let mut buf = vec![0u8; len];
    file.read_exact_at(handle.offset, &mut buf)
        .map_err(|source| TableError::Io {
            offset: handle.offset,
            source,
        })?;
    perf::count(PerfMetric::BlockReadCount, 1);
    perf::count(PerfMetric::BlockReadByte, len as u64);
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
    timer.stop(PerfMetric::BlockReadTime);
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
        let (props, range_del_handle) =
            TableProperties::decode(&props, footer.version).map_err(|detail| {
                TableError::Corruption {
                    block: BlockKind::Properties,
                    offset: footer.properties.offset,
                    detail,
                }
            })?;
        let range_deletions = match range_del_handle {
            None => Vec::new(),
            Some(handle) => {
                let block = read_block(
                    file.as_ref(),
                    handle,
                    BlockKind::RangeDeletion,
                    footer_offset,
                )?;
                super::range_del::decode(&block, props.range_deletions).map_err(|detail| {
                    TableError::Corruption {
                        block: BlockKind::RangeDeletion,
                        offset: handle.offset,
                        detail,
                    }
                })?
            }
        };
        Ok(Self {
            file,
            file_size,
            cmp,
            filter_key,
            index: Arc::new(index),
            index_offset: footer.index.offset,
            filter,
            props,
            range_deletions,
            name,
        })
    }

    pub(super) fn named(&self, err: TableError) -> TableError {
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

    /// Whether the table has a bloom filter (a table built with
    /// `bloom_bits_per_key` 0 has none, and lets every key in).
    pub(crate) fn has_filter(&self) -> bool {
        !self.filter.is_empty()
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

    /// The range deletions stored with
    /// [`TableBuilder::add_range_deletion`], as `(key, end)` pairs in the
    /// order added; empty for a table without (and for every format
    /// version 1 table). Read and verified when the table is opened.
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
    /// let mut b = TableBuilder::new(fs.create(Path::new("t.sst")).unwrap(), TableOptions::default(), cmp.clone(), |k| k);
    /// b.add(b"apple", b"red").unwrap();
    /// b.finish().unwrap();
    /// let table = Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap();
    /// assert!(table.range_deletions().is_empty());
    /// ```
    pub fn range_deletions(&self) -> &[(Vec<u8>, Vec<u8>)] {
        &self.range_deletions
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
}
