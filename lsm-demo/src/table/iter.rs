//! [`TableIter`]: a cursor over a table's entries.

use super::block::{Block, BlockIter};
use super::error::copy_error;
use super::reader::{Table, read_block};
use super::{BlockHandle, BlockKind, FOOTER_LEN, TableError};
use std::cmp::Ordering;
use std::sync::Arc;

impl Table {
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
