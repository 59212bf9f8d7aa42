//! Iterators over internal keys: the merge of every source, and the user
//! view on top of it (one version per user key, as of a snapshot, without
//! tombstones), in both directions.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::Result;
use crate::key::{ValueType, append_internal_key, parse_internal_key};
use crate::options::UserComparator;
use crate::range_del::FragmentedTombstones;

/// A sorted source of `(internal key, value)` pairs: a memtable, a table
/// file, or a merge of them.
pub(crate) trait InternalIterator: Send {
    fn valid(&self) -> bool;
    fn seek_to_first(&mut self);
    fn seek_to_last(&mut self);
    /// Positions at the first entry `>= target`.
    fn seek(&mut self, target: &[u8]);
    /// Positions at the last entry `<= target`.
    fn seek_for_prev(&mut self, target: &[u8]);
    fn next(&mut self);
    fn prev(&mut self);
    fn key(&self) -> &[u8];
    fn value(&self) -> &[u8];
    /// The first error met (a corrupt block), if any.
    fn status(&self) -> Result<()>;
}

/// A forward-only sorted stream of `(internal key, value)` pairs, already
/// positioned at its first entry: what a table is built from. A
/// compaction's [`CompactionIterator`], which can only go forward, is one;
/// any [`InternalIterator`] is one through [`Forward`].
///
/// [`CompactionIterator`]: crate::compaction::CompactionIterator
pub(crate) trait EntrySource {
    fn valid(&self) -> bool;
    fn next(&mut self);
    fn key(&self) -> &[u8];
    fn value(&self) -> &[u8];
    /// The first error met, if any.
    fn status(&self) -> Result<()>;
}

/// An [`InternalIterator`] read forward from where it stands.
pub(crate) struct Forward<'a, I: ?Sized>(pub(crate) &'a mut I);

impl<I: InternalIterator + ?Sized> EntrySource for Forward<'_, I> {
    fn valid(&self) -> bool {
        self.0.valid()
    }
    fn next(&mut self) {
        self.0.next();
    }
    fn key(&self) -> &[u8] {
        self.0.key()
    }
    fn value(&self) -> &[u8] {
        self.0.value()
    }
    fn status(&self) -> Result<()> {
        self.0.status()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

/// Merges sorted children into one sorted stream. The valid children sit
/// in a binary heap ordered by their current keys (smallest on top going
/// forward, largest going back), so a step costs a logarithm of the
/// children, not their number: a compaction out of level 0 merges many.
pub(crate) struct MergingIterator {
    ucmp: UserComparator,
    children: Vec<Box<dyn InternalIterator>>,
    /// The range tombstones of the merged sources, for the user view on
    /// top to apply (the merge itself returns every entry).
    pub(crate) range_dels: Option<Arc<FragmentedTombstones>>,
    /// Indices of the valid children, a heap in `direction`'s order; the
    /// top is the current child.
    heap: Vec<usize>,
    direction: Direction,
}

impl MergingIterator {
    pub(crate) fn new(ucmp: UserComparator, children: Vec<Box<dyn InternalIterator>>) -> Self {
        MergingIterator {
            ucmp,
            children,
            range_dels: None,
            heap: Vec::new(),
            direction: Direction::Forward,
        }
    }

    /// Whether heap slot `a` belongs above slot `b` in the current direction.
    fn above(&self, a: usize, b: usize) -> bool {
        let order = self.ucmp.compare_internal(
            self.children[self.heap[a]].key(),
            self.children[self.heap[b]].key(),
        );
        match self.direction {
            Direction::Forward => order == Ordering::Less,
            Direction::Reverse => order == Ordering::Greater,
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let mut top = i;
            for child in [2 * i + 1, 2 * i + 2] {
                if child < n && self.above(child, top) {
                    top = child;
                }
            }
            if top == i {
                return;
            }
            self.heap.swap(i, top);
            i = top;
        }
    }

    /// Rebuilds the heap from every child, after they all moved.
    fn rebuild(&mut self) {
        // A child that met an error (a block that could not be read) may
        // hide newer versions of keys the others still show: stop the
        // whole merge rather than yield a stale value.
        self.heap.clear();
        if self.children.iter().any(|c| c.status().is_err()) {
            return;
        }
        self.heap
            .extend((0..self.children.len()).filter(|&i| self.children[i].valid()));
        for i in (0..self.heap.len() / 2).rev() {
            self.sift_down(i);
        }
    }

    /// Puts the top child, which just moved, back in its place.
    fn top_moved(&mut self) {
        let top = self.heap[0];
        if self.children[top].status().is_err() {
            self.heap.clear();
        } else if self.children[top].valid() {
            self.sift_down(0);
        } else {
            self.heap.swap_remove(0);
            if !self.heap.is_empty() {
                self.sift_down(0);
            }
        }
    }

    fn current(&self) -> Option<usize> {
        self.heap.first().copied()
    }
}

impl InternalIterator for MergingIterator {
    fn valid(&self) -> bool {
        !self.heap.is_empty()
    }

    fn seek_to_first(&mut self) {
        self.children.iter_mut().for_each(|c| c.seek_to_first());
        self.direction = Direction::Forward;
        self.rebuild();
    }

    fn seek_to_last(&mut self) {
        self.children.iter_mut().for_each(|c| c.seek_to_last());
        self.direction = Direction::Reverse;
        self.rebuild();
    }

    fn seek(&mut self, target: &[u8]) {
        self.children.iter_mut().for_each(|c| c.seek(target));
        self.direction = Direction::Forward;
        self.rebuild();
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.children
            .iter_mut()
            .for_each(|c| c.seek_for_prev(target));
        self.direction = Direction::Reverse;
        self.rebuild();
    }

    fn next(&mut self) {
        let Some(cur) = self.current() else { return };
        if self.direction != Direction::Forward {
            // Every other child sits before the current key: move each to
            // the first entry after it.
            let key = self.children[cur].key().to_vec();
            for (i, c) in self.children.iter_mut().enumerate() {
                if i != cur {
                    c.seek(&key);
                    if c.valid() && c.key() == &key[..] {
                        c.next();
                    }
                }
            }
            self.direction = Direction::Forward;
            self.children[cur].next();
            self.rebuild();
            return;
        }
        self.children[cur].next();
        self.top_moved();
    }

    fn prev(&mut self) {
        let Some(cur) = self.current() else { return };
        if self.direction != Direction::Reverse {
            // Every other child sits after the current key: move each to the
            // last entry before it.
            let key = self.children[cur].key().to_vec();
            for (i, c) in self.children.iter_mut().enumerate() {
                if i != cur {
                    c.seek(&key);
                    if c.valid() {
                        c.prev();
                    } else {
                        c.seek_to_last();
                    }
                }
            }
            self.direction = Direction::Reverse;
            self.children[cur].prev();
            self.rebuild();
            return;
        }
        self.children[cur].prev();
        self.top_moved();
    }

    fn key(&self) -> &[u8] {
        self.children[self.current().expect("valid iterator")].key()
    }

    fn value(&self) -> &[u8] {
        self.children[self.current().expect("valid iterator")].value()
    }

    fn status(&self) -> Result<()> {
        self.children.iter().try_for_each(|c| c.status())
    }
}

/// The user's view of a merged stream as of a sequence number: the newest
/// visible version of each user key, tombstoned keys hidden. A version
/// under a range tombstone the view sees counts as a tombstone.
pub(crate) struct UserIterator {
    inner: MergingIterator,
    /// Taken from `inner`; `None` (the usual case) skips the check.
    range_dels: Option<Arc<FragmentedTombstones>>,
    sequence: u64,
    direction: Direction,
    valid: bool,
    /// Forward: the user key to skip past. Reverse: the current user key.
    saved_key: Vec<u8>,
    saved_value: Vec<u8>,
}

impl UserIterator {
    pub(crate) fn new(mut inner: MergingIterator, sequence: u64) -> Self {
        UserIterator {
            range_dels: inner.range_dels.take(),
            inner,
            sequence,
            direction: Direction::Forward,
            valid: false,
            saved_key: Vec::new(),
            saved_value: Vec::new(),
        }
    }

    pub(crate) fn valid(&self) -> bool {
        self.valid
    }

    pub(crate) fn status(&self) -> Result<()> {
        self.inner.status()
    }

    pub(crate) fn key(&self) -> &[u8] {
        match self.direction {
            Direction::Forward => crate::key::user_key(self.inner.key()),
            Direction::Reverse => &self.saved_key,
        }
    }

    pub(crate) fn value(&self) -> &[u8] {
        match self.direction {
            Direction::Forward => self.inner.value(),
            Direction::Reverse => &self.saved_value,
        }
    }

    pub(crate) fn seek_to_first(&mut self) {
        self.direction = Direction::Forward;
        self.saved_value.clear();
        self.inner.seek_to_first();
        self.find_next_user_entry(false);
    }

    pub(crate) fn seek_to_last(&mut self) {
        self.direction = Direction::Reverse;
        self.saved_value.clear();
        self.inner.seek_to_last();
        self.find_prev_user_entry();
    }

    pub(crate) fn seek(&mut self, target: &[u8]) {
        self.direction = Direction::Forward;
        self.saved_value.clear();
        self.saved_key.clear();
        append_internal_key(
            &mut self.saved_key,
            target,
            self.sequence,
            ValueType::FOR_SEEK,
        );
        let seek_key = std::mem::take(&mut self.saved_key);
        self.inner.seek(&seek_key);
        self.saved_key = seek_key;
        self.find_next_user_entry(false);
    }

    pub(crate) fn seek_for_prev(&mut self, target: &[u8]) {
        self.direction = Direction::Reverse;
        self.saved_value.clear();
        // (target, 0, Deletion) is the last internal key of user key `target`.
        let mut k = Vec::with_capacity(target.len() + 8);
        append_internal_key(&mut k, target, 0, ValueType::Deletion);
        self.inner.seek_for_prev(&k);
        self.find_prev_user_entry();
    }

    pub(crate) fn next(&mut self) {
        debug_assert!(self.valid);
        if self.direction == Direction::Reverse {
            self.direction = Direction::Forward;
            // The inner iterator sits just before the current user key's
            // entries; `saved_key` holds the key to skip past.
            if self.inner.valid() {
                self.inner.next();
            } else {
                self.inner.seek_to_first();
            }
        } else {
            self.saved_key.clear();
            self.saved_key
                .extend_from_slice(crate::key::user_key(self.inner.key()));
            self.inner.next();
        }
        self.find_next_user_entry(true);
    }

    pub(crate) fn prev(&mut self) {
        debug_assert!(self.valid);
        if self.direction == Direction::Forward {
            // Step back past every entry of the current user key.
            self.saved_key.clear();
            self.saved_key
                .extend_from_slice(crate::key::user_key(self.inner.key()));
            loop {
                self.inner.prev();
                if !self.inner.valid() {
                    self.valid = false;
                    self.saved_key.clear();
                    self.saved_value.clear();
                    return;
                }
                // Entries of one user key are adjacent: the first other
                // key going back is the previous one.
                if crate::key::user_key(self.inner.key()) != &self.saved_key[..] {
                    break;
                }
            }
            self.direction = Direction::Reverse;
        }
        self.find_prev_user_entry();
    }

    /// The type a visible version counts as: a tombstone when a range
    /// tombstone the view sees covers it.
    #[inline]
    fn effective_type(&self, k: &crate::key::ParsedKey<'_>) -> ValueType {
        match &self.range_dels {
            Some(r) if r.covers(k.user_key, k.sequence, self.sequence) => ValueType::Deletion,
            _ => k.value_type,
        }
    }

    fn find_next_user_entry(&mut self, mut skipping: bool) {
        while self.inner.valid() {
            if let Some(k) = parse_internal_key(self.inner.key())
                && k.sequence <= self.sequence
            {
                match self.effective_type(&k) {
                    ValueType::Deletion => {
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(k.user_key);
                        skipping = true;
                    }
                    ValueType::Value => {
                        // Going forward every key is at or after the saved
                        // one: only an equal key is hidden.
                        if !(skipping && k.user_key == &self.saved_key[..]) {
                            self.valid = true;
                            self.saved_key.clear();
                            return;
                        }
                    }
                }
            }
            self.inner.next();
        }
        self.saved_key.clear();
        self.valid = false;
    }

    fn find_prev_user_entry(&mut self) {
        let mut last_type = ValueType::Deletion;
        while self.inner.valid() {
            if let Some(k) = parse_internal_key(self.inner.key())
                && k.sequence <= self.sequence
            {
                // Going back every key is at or before the saved one.
                if last_type != ValueType::Deletion && k.user_key != &self.saved_key[..] {
                    // A live value of a later key is already saved.
                    break;
                }
                last_type = self.effective_type(&k);
                if last_type == ValueType::Deletion {
                    self.saved_key.clear();
                    self.saved_value.clear();
                } else {
                    self.saved_key.clear();
                    self.saved_key.extend_from_slice(k.user_key);
                    self.saved_value.clear();
                    self.saved_value.extend_from_slice(self.inner.value());
                }
            }
            self.inner.prev();
        }
        if last_type == ValueType::Deletion {
            self.valid = false;
            self.saved_key.clear();
            self.saved_value.clear();
            self.direction = Direction::Forward;
        } else {
            self.valid = true;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::key::{compare_internal_keys, internal_key};

    /// An in-memory sorted source, for tests.
    pub(crate) struct VecIter {
        entries: Vec<(Vec<u8>, Vec<u8>)>,
        pos: Option<usize>,
    }

    impl VecIter {
        pub(crate) fn new(mut entries: Vec<(Vec<u8>, Vec<u8>)>) -> Self {
            entries.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
            VecIter { entries, pos: None }
        }
    }

    impl InternalIterator for VecIter {
        fn valid(&self) -> bool {
            self.pos.is_some()
        }
        fn seek_to_first(&mut self) {
            self.pos = (!self.entries.is_empty()).then_some(0);
        }
        fn seek_to_last(&mut self) {
            self.pos = self.entries.len().checked_sub(1);
        }
        fn seek(&mut self, t: &[u8]) {
            let i = self
                .entries
                .partition_point(|e| compare_internal_keys(&e.0, t).is_lt());
            self.pos = (i < self.entries.len()).then_some(i);
        }
        fn seek_for_prev(&mut self, t: &[u8]) {
            let i = self
                .entries
                .partition_point(|e| compare_internal_keys(&e.0, t).is_le());
            self.pos = i.checked_sub(1);
        }
        fn next(&mut self) {
            self.pos = self.pos.map(|p| p + 1).filter(|&p| p < self.entries.len());
        }
        fn prev(&mut self) {
            self.pos = self.pos.and_then(|p| p.checked_sub(1));
        }
        fn key(&self) -> &[u8] {
            &self.entries[self.pos.unwrap()].0
        }
        fn value(&self) -> &[u8] {
            &self.entries[self.pos.unwrap()].1
        }
        fn status(&self) -> Result<()> {
            Ok(())
        }
    }

    fn put(k: &str, seq: u64, v: &str) -> (Vec<u8>, Vec<u8>) {
        (
            internal_key(k.as_bytes(), seq, ValueType::Value),
            v.as_bytes().to_vec(),
        )
    }
    fn del(k: &str, seq: u64) -> (Vec<u8>, Vec<u8>) {
        (
            internal_key(k.as_bytes(), seq, ValueType::Deletion),
            Vec::new(),
        )
    }

    fn collect_forward(it: &mut UserIterator) -> Vec<(String, String)> {
        let mut out = Vec::new();
        it.seek_to_first();
        while it.valid() {
            out.push((
                String::from_utf8(it.key().to_vec()).unwrap(),
                String::from_utf8(it.value().to_vec()).unwrap(),
            ));
            it.next();
        }
        out
    }

    fn collect_backward(it: &mut UserIterator) -> Vec<(String, String)> {
        let mut out = Vec::new();
        it.seek_to_last();
        while it.valid() {
            out.push((
                String::from_utf8(it.key().to_vec()).unwrap(),
                String::from_utf8(it.value().to_vec()).unwrap(),
            ));
            it.prev();
        }
        out.reverse();
        out
    }

    fn sources() -> MergingIterator {
        let newer = VecIter::new(vec![put("a", 10, "a10"), del("b", 11), put("d", 12, "d12")]);
        let older = VecIter::new(vec![
            put("a", 1, "a1"),
            put("b", 2, "b2"),
            put("c", 3, "c3"),
            del("d", 4),
            put("e", 5, "e5"),
        ]);
        MergingIterator::new(
            UserComparator::default(),
            vec![Box::new(newer), Box::new(older)],
        )
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn newest_visible_version_wins_both_ways() {
        let want = pairs(&[("a", "a10"), ("c", "c3"), ("d", "d12"), ("e", "e5")]);
        let mut it = UserIterator::new(sources(), u64::MAX >> 8);
        assert_eq!(collect_forward(&mut it), want);
        assert_eq!(collect_backward(&mut it), want);
        let old = pairs(&[("a", "a1"), ("b", "b2"), ("c", "c3"), ("e", "e5")]);
        let mut it = UserIterator::new(sources(), 5);
        assert_eq!(collect_forward(&mut it), old);
        assert_eq!(collect_backward(&mut it), old);
    }

    /// A source whose next block could not be read.
    struct FailedIter;

    impl InternalIterator for FailedIter {
        fn valid(&self) -> bool {
            false
        }
        fn seek_to_first(&mut self) {}
        fn seek_to_last(&mut self) {}
        fn seek(&mut self, _: &[u8]) {}
        fn seek_for_prev(&mut self, _: &[u8]) {}
        fn next(&mut self) {}
        fn prev(&mut self) {}
        fn key(&self) -> &[u8] {
            unreachable!("never valid")
        }
        fn value(&self) -> &[u8] {
            unreachable!("never valid")
        }
        fn status(&self) -> Result<()> {
            Err(crate::Error::Corruption("unreadable block".into()))
        }
    }

    #[test]
    fn a_failed_child_stops_the_merge_instead_of_showing_older_versions() {
        // The failed child may hold the newest version of "a": the older
        // one must not be shown in its place.
        let older = VecIter::new(vec![put("a", 1, "a1")]);
        let merged = MergingIterator::new(
            UserComparator::default(),
            vec![Box::new(FailedIter), Box::new(older)],
        );
        let mut it = UserIterator::new(merged, u64::MAX >> 8);
        it.seek_to_first();
        assert!(!it.valid());
        assert!(it.status().is_err());
        it.seek(b"a");
        assert!(!it.valid());
        it.seek_to_last();
        assert!(!it.valid());
    }

    #[test]
    fn direction_changes_and_seeks() {
        let mut it = UserIterator::new(sources(), u64::MAX >> 8);
        it.seek(b"b");
        assert_eq!(it.key(), b"c");
        it.prev();
        assert_eq!(it.key(), b"a");
        it.next();
        assert_eq!(it.key(), b"c");
        it.next();
        assert_eq!((it.key(), it.value()), (&b"d"[..], &b"d12"[..]));
        it.prev();
        assert_eq!(it.key(), b"c");
        it.seek_for_prev(b"b");
        assert_eq!(it.key(), b"a");
        it.seek_for_prev(b"dd");
        assert_eq!(it.key(), b"d");
        it.next();
        assert_eq!(it.key(), b"e");
        it.next();
        assert!(!it.valid());
        it.seek(b"f");
        assert!(!it.valid());
    }
}
