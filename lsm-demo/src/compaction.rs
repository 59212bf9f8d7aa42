//! Dropping what no reader can see any more while merging tables: the
//! filter between a compaction's (or a repair's) merged input and its
//! output tables.

use crate::error::Result;
use crate::iter::{InternalIterator, MergingIterator};
use crate::key::{ValueType, parse_internal_key};

/// Drops the versions no reader can see from a compaction's input: for each
/// user key, every version newer than the oldest snapshot plus the newest
/// one at or below it; that one too when it is a tombstone and the output is
/// the bottom of the tree.
pub(crate) struct CompactionFilter {
    inner: MergingIterator,
    oldest_snapshot: u64,
    bottom: bool,
    last_user_key: Option<Vec<u8>>,
    /// Sequence of the previous kept-or-dropped entry of the same user key.
    last_sequence_for_key: u64,
}

impl CompactionFilter {
    pub(crate) fn new(inner: MergingIterator, oldest_snapshot: u64, bottom: bool) -> Self {
        let mut f = CompactionFilter {
            inner,
            oldest_snapshot,
            bottom,
            last_user_key: None,
            last_sequence_for_key: u64::MAX,
        };
        f.skip_dropped();
        f
    }

    /// Whether the entry under the inner cursor is dropped; updates the
    /// per-key state.
    fn drop_current(&mut self) -> bool {
        let Some(k) = parse_internal_key(self.inner.key()) else {
            return false;
        };
        let same = self.last_user_key.as_deref() == Some(k.user_key);
        if !same {
            self.last_user_key = Some(k.user_key.to_vec());
            self.last_sequence_for_key = u64::MAX;
        }
        let drop = if self.last_sequence_for_key <= self.oldest_snapshot {
            // A newer version already visible to every snapshot hides this one.
            true
        } else {
            k.value_type == ValueType::Deletion && k.sequence <= self.oldest_snapshot && self.bottom
        };
        self.last_sequence_for_key = k.sequence;
        drop
    }

    fn skip_dropped(&mut self) {
        while self.inner.valid() && self.drop_current() {
            self.inner.next();
        }
    }
}

impl InternalIterator for &mut CompactionFilter {
    fn valid(&self) -> bool {
        self.inner.valid()
    }
    fn seek_to_first(&mut self) {}
    fn seek_to_last(&mut self) {}
    fn seek(&mut self, _: &[u8]) {}
    fn seek_for_prev(&mut self, _: &[u8]) {}
    fn next(&mut self) {
        self.inner.next();
        self.skip_dropped();
    }
    fn prev(&mut self) {}
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        self.inner.status()
    }
}

impl CompactionFilter {
    pub(crate) fn valid(&self) -> bool {
        self.inner.valid()
    }
    pub(crate) fn status(&self) -> Result<()> {
        self.inner.status()
    }
}
