//! Blocks of sorted entries with prefix-compressed keys and restart points,
//! the unit in which table files store data and index entries.
//!
//! # Layout of a block's contents
//!
//! ```text
//! entry*  restart_offset: u32 LE * num_restarts  num_restarts: u32 LE
//! entry = shared: varint  unshared: varint  value_len: varint
//!         key[shared..]  value
//! ```
//!
//! `shared` is the length of the prefix the key has in common with the
//! previous key; it is 0 at a restart point (every `restart_interval`
//! entries), so a binary search over restart points can decode a full key
//! without the entries before it. All varints here fit in 32 bits.

use super::SharedComparator;
use super::coding::{get_varint64, put_varint64, read_u32_le};
use std::cmp::Ordering;
use std::sync::Arc;

/// Builds a block's contents from entries added in order.
#[derive(Debug)]
pub(crate) struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    since_restart: usize,
    restart_interval: usize,
    last_key: Vec<u8>,
    entries: usize,
}

impl BlockBuilder {
    pub(crate) fn new(restart_interval: usize) -> Self {
        Self {
            buf: Vec::new(),
            restarts: vec![0],
            since_restart: 0,
            restart_interval: restart_interval.max(1),
            last_key: Vec::new(),
            entries: 0,
        }
    }

    /// Adds an entry; keys must come in increasing order (the table builder
    /// checks). The block must stay under 4 GiB, which the table builder
    /// guarantees by bounding the block size and each key and value.
    pub(crate) fn add(&mut self, key: &[u8], value: &[u8]) {
        let shared = if self.since_restart < self.restart_interval {
            self.last_key
                .iter()
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count()
        } else {
            self.restarts.push(self.buf.len() as u32);
            self.since_restart = 0;
            0
        };
        put_varint64(&mut self.buf, shared as u64);
        put_varint64(&mut self.buf, (key.len() - shared) as u64);
        put_varint64(&mut self.buf, value.len() as u64);
        self.buf.extend_from_slice(&key[shared..]);
        self.buf.extend_from_slice(value);
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.since_restart += 1;
        self.entries += 1;
    }

    /// The size the contents will have once finished.
    pub(crate) fn size_estimate(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries == 0
    }

    pub(crate) fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// Appends the restart array and returns the finished contents; the
    /// builder must be [`Self::reset`] before reuse.
    pub(crate) fn finish(&mut self) -> &[u8] {
        let restarts = if self.entries == 0 {
            &[][..]
        } else {
            &self.restarts[..]
        };
        for &r in restarts {
            self.buf.extend_from_slice(&r.to_le_bytes());
        }
        self.buf
            .extend_from_slice(&(restarts.len() as u32).to_le_bytes());
        &self.buf
    }

    pub(crate) fn reset(&mut self) {
        self.buf.clear();
        self.restarts.clear();
        self.restarts.push(0);
        self.since_restart = 0;
        self.last_key.clear();
        self.entries = 0;
    }
}

/// A parsed block: its contents and where the restart array starts.
#[derive(Debug)]
pub(crate) struct Block {
    data: Vec<u8>,
    restarts_offset: usize,
    num_restarts: usize,
}

impl Block {
    /// Checks the restart array's bounds; entries are checked as they are
    /// decoded.
    pub(crate) fn new(data: Vec<u8>) -> Result<Self, &'static str> {
        let len = data.len();
        let count_at = len
            .checked_sub(4)
            .ok_or("block shorter than its restart count")?;
        let num_restarts =
            read_u32_le(&data, count_at).ok_or("block shorter than its restart count")? as usize;
        if num_restarts > count_at / 4 {
            return Err("restart count larger than the block");
        }
        let restarts_offset = count_at - 4 * num_restarts;
        if num_restarts == 0 && restarts_offset != 0 {
            return Err("entries without a restart point");
        }
        Ok(Self {
            data,
            restarts_offset,
            num_restarts,
        })
    }
}

/// Where an entry's parts lie in the block.
#[derive(Debug, Clone, Copy)]
struct EntryLayout {
    shared: usize,
    key_start: usize,
    key_end: usize,
    value_end: usize,
}

/// A cursor over one block. It owns an `Arc` of the block, so it lives as
/// long as needed. After a corrupt entry it is invalid and [`Self::error`]
/// says why; it never panics on bad contents.
pub(crate) struct BlockIter {
    block: Arc<Block>,
    cmp: SharedComparator,
    /// Offset of the current entry; `restarts_offset` when not valid.
    current: usize,
    /// Offset of the entry after the current one.
    next_offset: usize,
    /// The restart interval holding the current entry.
    restart_index: usize,
    key: Vec<u8>,
    value_start: usize,
    value_end: usize,
    error: Option<(usize, &'static str)>,
}

impl std::fmt::Debug for BlockIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockIter")
            .field("current", &self.current)
            .field("key", &self.key)
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl BlockIter {
    pub(crate) fn new(block: Arc<Block>, cmp: SharedComparator) -> Self {
        let end = block.restarts_offset;
        Self {
            block,
            cmp,
            current: end,
            next_offset: end,
            restart_index: 0,
            key: Vec::new(),
            value_start: 0,
            value_end: 0,
            error: None,
        }
    }

    #[inline]
    pub(crate) fn valid(&self) -> bool {
        self.error.is_none() && self.current < self.block.restarts_offset
    }

    /// The corruption found, as (offset in the block, what).
    pub(crate) fn error(&self) -> Option<(usize, &'static str)> {
        self.error
    }

    pub(crate) fn key(&self) -> &[u8] {
        &self.key
    }

    pub(crate) fn value(&self) -> &[u8] {
        &self.block.data[self.value_start..self.value_end]
    }

    fn invalidate(&mut self) {
        self.current = self.block.restarts_offset;
        self.next_offset = self.block.restarts_offset;
    }

    fn corrupt(&mut self, offset: usize, what: &'static str) {
        if self.error.is_none() {
            self.error = Some((offset, what));
        }
        self.invalidate();
    }

    fn restart_point(&self, index: usize) -> Result<usize, &'static str> {
        let at = self.block.restarts_offset + 4 * index;
        let point = read_u32_le(&self.block.data, at).ok_or("restart index out of range")? as usize;
        if point >= self.block.restarts_offset {
            return Err("restart point past the entries");
        }
        Ok(point)
    }

    /// Decodes the entry header at `offset` and checks its bounds.
    fn layout(&self, offset: usize, key_len_before: usize) -> Result<EntryLayout, &'static str> {
        let limit = self.block.restarts_offset;
        let data = &self.block.data[..limit];
        let mut pos = offset;
        let mut field = |what| -> Result<usize, &'static str> {
            let (v, n) = get_varint64(data.get(pos..).ok_or(what)?).ok_or(what)?;
            pos += n;
            usize::try_from(v)
                .ok()
                .filter(|&v| v <= u32::MAX as usize)
                .ok_or(what)
        };
        let shared = field("bad shared-prefix length")?;
        let unshared = field("bad key length")?;
        let value_len = field("bad value length")?;
        if shared > key_len_before {
            return Err("shared prefix longer than the previous key");
        }
        let key_end = pos
            .checked_add(unshared)
            .ok_or("entry past the block end")?;
        let value_end = key_end
            .checked_add(value_len)
            .ok_or("entry past the block end")?;
        if value_end > limit {
            return Err("entry past the block end");
        }
        Ok(EntryLayout {
            shared,
            key_start: pos,
            key_end,
            value_end,
        })
    }

    /// Moves to the entry at `next_offset`; false at the end or on error.
    fn parse_next(&mut self) -> bool {
        let offset = self.next_offset;
        if offset >= self.block.restarts_offset {
            self.invalidate();
            return false;
        }
        let entry = match self.layout(offset, self.key.len()) {
            Ok(e) => e,
            Err(what) => {
                self.corrupt(offset, what);
                return false;
            }
        };
        self.key.truncate(entry.shared);
        self.key
            .extend_from_slice(&self.block.data[entry.key_start..entry.key_end]);
        self.current = offset;
        self.value_start = entry.key_end;
        self.value_end = entry.value_end;
        self.next_offset = entry.value_end;
        while self.restart_index + 1 < self.block.num_restarts {
            match self.restart_point(self.restart_index + 1) {
                Ok(p) if p <= offset => self.restart_index += 1,
                Ok(_) => break,
                Err(what) => {
                    self.corrupt(offset, what);
                    return false;
                }
            }
        }
        true
    }

    fn seek_to_restart(&mut self, index: usize) -> bool {
        match self.restart_point(index) {
            Ok(point) => {
                self.key.clear();
                self.restart_index = index;
                self.next_offset = point;
                true
            }
            Err(what) => {
                self.corrupt(self.block.restarts_offset, what);
                false
            }
        }
    }

    /// The full key stored at restart point `index`.
    fn restart_key(&self, index: usize) -> Result<&[u8], (usize, &'static str)> {
        let offset = self
            .restart_point(index)
            .map_err(|w| (self.block.restarts_offset, w))?;
        let entry = self.layout(offset, 0).map_err(|w| (offset, w))?;
        if entry.shared != 0 {
            return Err((offset, "restart entry shares a prefix"));
        }
        Ok(&self.block.data[entry.key_start..entry.key_end])
    }

    pub(crate) fn seek_to_first(&mut self) {
        if self.error.is_some() || self.block.num_restarts == 0 {
            self.invalidate();
            return;
        }
        if self.seek_to_restart(0) {
            self.parse_next();
        }
    }

    pub(crate) fn seek_to_last(&mut self) {
        if self.error.is_some() || self.block.num_restarts == 0 {
            self.invalidate();
            return;
        }
        if self.seek_to_restart(self.block.num_restarts - 1) {
            while self.parse_next() && self.next_offset < self.block.restarts_offset {}
        }
    }

    pub(crate) fn next(&mut self) {
        if self.valid() {
            self.parse_next();
        }
    }

    pub(crate) fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        let original = self.current;
        // Find the last restart point before the current entry.
        loop {
            match self.restart_point(self.restart_index) {
                Ok(p) if p < original => break,
                Ok(_) if self.restart_index == 0 => {
                    self.invalidate();
                    return;
                }
                Ok(_) => self.restart_index -= 1,
                Err(what) => {
                    self.corrupt(original, what);
                    return;
                }
            }
        }
        if !self.seek_to_restart(self.restart_index) {
            return;
        }
        // Walk forward to the entry just before `original`.
        loop {
            if !self.parse_next() {
                if self.error.is_none() {
                    self.corrupt(original, "entries do not lead back to the current one");
                }
                return;
            }
            if self.next_offset >= original {
                if self.next_offset != original {
                    self.corrupt(original, "entries do not lead back to the current one");
                }
                return;
            }
        }
    }

    /// Moves to the first entry whose key is `>= target`.
    pub(crate) fn seek(&mut self, target: &[u8]) {
        if self.error.is_some() || self.block.num_restarts == 0 {
            self.invalidate();
            return;
        }
        // The last restart point whose key is < target (or 0).
        let (mut left, mut right) = (0usize, self.block.num_restarts - 1);
        while left < right {
            let mid = left + (right - left).div_ceil(2);
            match self.restart_key(mid) {
                Ok(key) if self.cmp.compare(key, target) == Ordering::Less => left = mid,
                Ok(_) => right = mid - 1,
                Err((offset, what)) => {
                    self.corrupt(offset, what);
                    return;
                }
            }
        }
        if !self.seek_to_restart(left) {
            return;
        }
        while self.parse_next() {
            if self.cmp.compare(&self.key, target) != Ordering::Less {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use key_comparator::BytewiseComparator;

    fn build(keys: &[Vec<u8>], interval: usize) -> Arc<Block> {
        let mut b = BlockBuilder::new(interval);
        for k in keys {
            b.add(k, &[k.as_slice(), b"-v"].concat());
        }
        Arc::new(Block::new(b.finish().to_vec()).unwrap())
    }

    fn keys(n: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| format!("key{:05}", i * 2).into_bytes())
            .collect()
    }

    fn iter(block: &Arc<Block>) -> BlockIter {
        BlockIter::new(Arc::clone(block), Arc::new(BytewiseComparator))
    }

    #[test]
    fn forward_backward_and_seek() {
        for interval in [1, 2, 16] {
            for n in [1, 2, 17, 100] {
                let ks = keys(n);
                let block = build(&ks, interval);
                let mut it = iter(&block);
                it.seek_to_first();
                for k in &ks {
                    assert!(it.valid());
                    assert_eq!(it.key(), k.as_slice());
                    assert_eq!(it.value(), [k.as_slice(), b"-v"].concat().as_slice());
                    it.next();
                }
                assert!(!it.valid());
                it.seek_to_last();
                for k in ks.iter().rev() {
                    assert_eq!(it.key(), k.as_slice());
                    it.prev();
                }
                assert!(!it.valid());
                for (i, k) in ks.iter().enumerate() {
                    it.seek(k);
                    assert_eq!(it.key(), k.as_slice());
                    // An absent key between k and the next one.
                    let mut between = k.clone();
                    between.push(0);
                    it.seek(&between);
                    if i + 1 < n {
                        assert_eq!(it.key(), ks[i + 1].as_slice());
                    } else {
                        assert!(!it.valid());
                    }
                }
                it.seek(b"");
                assert_eq!(it.key(), ks[0].as_slice());
                assert!(it.error().is_none());
            }
        }
    }

    #[test]
    fn empty_block() {
        let mut b = BlockBuilder::new(16);
        let block = Arc::new(Block::new(b.finish().to_vec()).unwrap());
        let mut it = iter(&block);
        it.seek_to_first();
        assert!(!it.valid());
        it.seek_to_last();
        assert!(!it.valid());
        it.seek(b"a");
        assert!(!it.valid());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 256, ..proptest::prelude::ProptestConfig::default()
        })]

        /// Garbage contents (with a plausible restart array, so parsing gets
        /// past `Block::new`) never panic and every walk terminates.
        #[test]
        fn garbage_blocks_never_panic(
            mut data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
            restarts in proptest::collection::vec(0u32..220, 0..6),
            target in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..6),
        ) {
            for r in &restarts {
                data.extend_from_slice(&r.to_le_bytes());
            }
            data.extend_from_slice(&(restarts.len() as u32).to_le_bytes());
            let Ok(block) = Block::new(data) else { return Ok(()) };
            let block = Arc::new(block);
            let mut it = iter(&block);
            it.seek_to_first();
            let mut steps = 0;
            while it.valid() {
                let _ = (it.key(), it.value());
                it.next();
                steps += 1;
                proptest::prop_assert!(steps <= 200);
            }
            it = iter(&block);
            it.seek_to_last();
            steps = 0;
            while it.valid() {
                it.prev();
                steps += 1;
                proptest::prop_assert!(steps <= 200);
            }
            it = iter(&block);
            it.seek(&target);
            it.prev();
            it.next();
            let _ = it.error();
        }
    }

    #[test]
    fn bad_restart_arrays_are_refused() {
        assert!(Block::new(vec![]).is_err());
        assert!(Block::new(vec![9, 0, 0, 0]).is_err());
        assert!(Block::new(vec![1, 2, 3, 0, 0, 0, 0]).is_err());
        // One restart pointing past the entries.
        let block = Arc::new(Block::new(vec![0, 0, 0, 99, 0, 0, 0, 1, 0, 0, 0]).unwrap());
        let mut it = iter(&block);
        it.seek_to_first();
        assert!(!it.valid());
        assert!(it.error().is_some());
    }
}
