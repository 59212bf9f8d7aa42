//! [`TableBuilder`]: writes a table file.

use super::block::BlockBuilder;
use super::coding::masked_crc;
use super::{
    BASE_FORMAT_VERSION, BlockHandle, BlockKind, FORMAT_VERSION, FilterKeyFn, Footer,
    MAX_BLOCK_SIZE, MAX_ENTRY_PART_LEN, SharedComparator, TableError, TableInfo, TableOptions,
    TableProperties,
};
use crate::bloom::BloomBuilder;
use crate::env::WritableFile;
use std::cmp::Ordering;
use std::fmt;

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
    /// The range-deletion block being built.
    range_deletions: Vec<u8>,
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
            range_deletions: Vec::new(),
        }
    }

    /// Adds a range deletion: a key and the end of a range, both opaque
    /// to the table, kept in a block of their own in the order added (the
    /// engine stores a tombstone's start and sequence as the key). A table
    /// with range deletions is written in format version 2
    /// ([`FORMAT_VERSION`](super::FORMAT_VERSION)); one without stays
    /// version 1.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::table::{Table, TableBuilder, TableOptions};
    /// # use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// # use std::{path::Path, sync::Arc};
    /// # let fs = FaultInjectionFs::new();
    /// let cmp = Arc::new(key_comparator::BytewiseComparator);
    /// let file = fs.create(Path::new("t.sst")).unwrap();
    /// let mut b = TableBuilder::new(file, TableOptions::default(), cmp.clone(), |k| k);
    /// b.add(b"k", b"v").unwrap();
    /// b.add_range_deletion(b"a", b"h").unwrap();
    /// b.finish().unwrap();
    /// let table = Table::open_file(&fs, Path::new("t.sst"), cmp, |k| k).unwrap();
    /// assert_eq!(table.properties().range_deletions, 1);
    /// assert_eq!(table.range_deletions(), [(b"a".to_vec(), b"h".to_vec())]);
    /// ```
    pub fn add_range_deletion(&mut self, key: &[u8], end: &[u8]) -> Result<(), TableError> {
        if self.failed {
            return Err(TableError::BuilderFailed);
        }
        if key.len() > MAX_ENTRY_PART_LEN || end.len() > MAX_ENTRY_PART_LEN {
            return Err(TableError::EntryTooLarge {
                key_len: key.len(),
                value_len: end.len(),
            });
        }
        super::range_del::encode_to(&mut self.range_deletions, key, end);
        self.props.range_deletions += 1;
        Ok(())
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

    /// Writes the pending data block, the filter, range-deletion (if any),
    /// properties and index blocks and the footer, then syncs the file. The caller must still
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
        let range_del_handle = if self.props.range_deletions > 0 {
            let mut block = std::mem::take(&mut self.range_deletions);
            Some(self.write_block(&mut block, BlockKind::RangeDeletion)?)
        } else {
            None
        };
        let mut props = self.props.encode(range_del_handle);
        let props_handle = self.write_block(&mut props, BlockKind::Properties)?;
        let mut index = self.index_block.finish().to_vec();
        let index_handle = self.write_block(&mut index, BlockKind::Index)?;
        let footer = Footer {
            index: index_handle,
            filter: filter_handle,
            properties: props_handle,
            version: if range_del_handle.is_some() {
                FORMAT_VERSION
            } else {
                BASE_FORMAT_VERSION
            },
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
