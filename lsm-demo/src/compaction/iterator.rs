//! Dropping what no reader can see any more while merging tables: the
//! forward-only stream between a compaction's (or a repair's) merged input
//! and its output tables (RocksDB's compaction iterator; not a compaction
//! filter, which in RocksDB is a user's hook).

use std::sync::Arc;

use crate::error::Result;
use crate::iter::{EntrySource, InternalIterator, MergingIterator};
use crate::key::{ValueType, parse_internal_key};
use crate::range_del::{FragmentedTombstones, TombstoneOutput, compare_user_keys};
use crate::version::TableFile;
use std::cmp::Ordering;

/// The files on the levels below a compaction's output, as of the moment it
/// was picked: a tombstone may go only where none of them covers its key.
/// Later compactions only move those files further down, so the check
/// stays true for the compaction's whole run.
#[derive(Default)]
pub(crate) struct LevelsBelow(pub(crate) Vec<Vec<Arc<TableFile>>>);

impl LevelsBelow {
    /// Whether a file below may hold a version of a key in `[start, end)`.
    pub(crate) fn may_hold_range(&self, start: &[u8], end: &[u8]) -> bool {
        self.0.iter().flatten().any(|t| {
            compare_user_keys(crate::key::user_key(&t.meta.smallest), end) == Ordering::Less
                && compare_user_keys(crate::key::user_key(&t.meta.largest), start) != Ordering::Less
        })
    }

    /// Whether a file below may hold a version of `user_key`.
    fn may_hold(&self, user_key: &[u8]) -> bool {
        self.0.iter().any(|level| {
            let i = level
                .partition_point(|t| t.ucmp.lt(crate::key::user_key(&t.meta.largest), user_key));
            level.get(i).is_some_and(|t| t.covers(user_key))
        })
    }
}

/// Drops the versions no reader can see from a compaction's input: for each
/// user key, every version newer than the oldest snapshot plus the newest
/// one at or below it; that one too when it is a tombstone and no older
/// version of the key can lie below the output level, or when a range
/// tombstone every snapshot sees covers it. The range tombstones go to the
/// output as [`FragmentedTombstones::for_compaction_output`] keeps them.
pub(crate) struct CompactionIterator {
    inner: MergingIterator,
    oldest_snapshot: u64,
    below: LevelsBelow,
    /// Every range tombstone of the input, to drop what they cover.
    range_dels: Option<Arc<FragmentedTombstones>>,
    /// The range tombstones the output keeps, for the tables to take.
    pub(crate) output_tombstones: Option<TombstoneOutput>,
    last_user_key: Option<Vec<u8>>,
    /// Sequence of the previous kept-or-dropped entry of the same user key.
    last_sequence_for_key: u64,
}

impl CompactionIterator {
    /// `range_dels`: the range tombstones of the input tables.
    pub(crate) fn new(
        inner: MergingIterator,
        oldest_snapshot: u64,
        below: LevelsBelow,
        range_dels: Option<Arc<FragmentedTombstones>>,
    ) -> Self {
        let output_tombstones = range_dels.as_ref().and_then(|r| {
            let kept = r.for_compaction_output(oldest_snapshot, |start, end| {
                below.may_hold_range(start, end)
            });
            TombstoneOutput::new(Arc::new(kept))
        });
        let mut f = CompactionIterator {
            inner,
            oldest_snapshot,
            below,
            range_dels,
            output_tombstones,
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
        } else if let Some(r) = &self.range_dels
            && r.covers(k.user_key, k.sequence, self.oldest_snapshot)
        {
            // A range tombstone every snapshot sees hides it.
            true
        } else {
            k.value_type == ValueType::Deletion
                && k.sequence <= self.oldest_snapshot
                && !self.below.may_hold(k.user_key)
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

/// Forward only: a compaction reads its input once, in order.
impl EntrySource for CompactionIterator {
    fn valid(&self) -> bool {
        self.inner.valid()
    }
    fn next(&mut self) {
        self.inner.next();
        self.skip_dropped();
    }
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
