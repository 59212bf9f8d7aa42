//! Range tombstones: what [`DB::delete_range`](crate::DB::delete_range)
//! leaves behind, and the sorted, non-overlapping fragments that reads,
//! flushes and compactions consult.
//!
//! A tombstone `[start, end)` at sequence `s` hides every version of a key
//! in the range whose sequence is below `s`, for a read at a sequence at or
//! above `s`. Tombstones may overlap; [`FragmentedTombstones`] cuts them at
//! every start and end into disjoint stretches, each with the sequences of
//! the tombstones over it, newest first, so that "which tombstone covers
//! this key" is one binary search.
//!
//! Every user-key comparison of this code goes through
//! [`compare_user_keys`], so that a pluggable comparator can replace the
//! bytewise order in one place.

use std::cmp::Ordering;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering as MemOrdering};

use parking_lot::Mutex;

/// Orders two user keys: the one comparison range-tombstone code uses.
/// Bytewise: a database with its own comparator refuses range deletions
/// (`Error::NotSupported`), because cutting a tombstone at a file's end
/// takes the successor of a key ([`user_key_successor`]), which only the
/// bytewise order gives.
#[inline]
pub(crate) fn compare_user_keys(a: &[u8], b: &[u8]) -> Ordering {
    key_comparator::compare_bytes(a, b)
}

/// The smallest user key after `key` in [`compare_user_keys`]'s order
/// (for the bytewise order, `key` followed by a zero byte).
pub(crate) fn user_key_successor(key: &[u8]) -> Vec<u8> {
    let mut next = Vec::with_capacity(key.len() + 1);
    next.extend_from_slice(key);
    next.push(0);
    next
}

/// The largest user key before `end` when `end` is the successor of one
/// (see [`user_key_successor`]): for the bytewise order, `end` without its
/// last byte when that byte is 0. A tombstone ending at such an `end`
/// covers up to that key, included, and no further.
pub(crate) fn user_key_predecessor(end: &[u8]) -> Option<&[u8]> {
    match end.split_last() {
        Some((0, before)) => Some(before),
        _ => None,
    }
}

/// The keys in `[start, end)` deleted at sequence `seq`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RangeTombstone {
    pub(crate) start: Vec<u8>,
    pub(crate) end: Vec<u8>,
    pub(crate) seq: u64,
}

impl RangeTombstone {
    pub(crate) fn new(start: &[u8], end: &[u8], seq: u64) -> Self {
        RangeTombstone {
            start: start.to_vec(),
            end: end.to_vec(),
            seq,
        }
    }

    /// Whether the range holds no key (an empty or inverted range, which
    /// deletes nothing, as in RocksDB).
    pub(crate) fn is_empty(&self) -> bool {
        compare_user_keys(&self.start, &self.end) != Ordering::Less
    }
}

/// A stretch `[start, end)` under the same tombstones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fragment {
    pub(crate) start: Vec<u8>,
    pub(crate) end: Vec<u8>,
    /// The sequences of the tombstones over the stretch, newest first,
    /// without repeats.
    pub(crate) seqs: Vec<u64>,
}

/// Range tombstones cut into sorted, disjoint fragments.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct FragmentedTombstones {
    fragments: Vec<Fragment>,
}

impl FragmentedTombstones {
    /// Fragments `tombstones` (in any order; empty ranges are left out).
    pub(crate) fn new(tombstones: impl IntoIterator<Item = RangeTombstone>) -> Self {
        let mut ts: Vec<RangeTombstone> =
            tombstones.into_iter().filter(|t| !t.is_empty()).collect();
        if ts.is_empty() {
            return Self::default();
        }
        ts.sort_by(|a, b| compare_user_keys(&a.start, &b.start));
        let mut points: Vec<&[u8]> = ts.iter().flat_map(|t| [&t.start[..], &t.end[..]]).collect();
        points.sort_by(|a, b| compare_user_keys(a, b));
        points.dedup_by(|a, b| compare_user_keys(a, b) == Ordering::Equal);
        let mut fragments: Vec<Fragment> = Vec::new();
        // (end, seq) of the tombstones started at or before the stretch.
        let mut active: Vec<(&[u8], u64)> = Vec::new();
        let mut next = 0;
        for pair in points.windows(2) {
            let (lo, hi) = (pair[0], pair[1]);
            while next < ts.len() && compare_user_keys(&ts[next].start, lo) != Ordering::Greater {
                active.push((&ts[next].end, ts[next].seq));
                next += 1;
            }
            // Ends are cut points, so a tombstone still open at `lo` runs
            // at least to `hi`.
            active.retain(|(end, _)| compare_user_keys(end, lo) == Ordering::Greater);
            if active.is_empty() {
                continue;
            }
            let mut seqs: Vec<u64> = active.iter().map(|&(_, s)| s).collect();
            seqs.sort_unstable_by(|a, b| b.cmp(a));
            seqs.dedup();
            if let Some(last) = fragments.last_mut()
                && last.seqs == seqs
                && compare_user_keys(&last.end, lo) == Ordering::Equal
            {
                last.end = hi.to_vec();
                continue;
            }
            fragments.push(Fragment {
                start: lo.to_vec(),
                end: hi.to_vec(),
                seqs,
            });
        }
        FragmentedTombstones { fragments }
    }

    /// The fragments of several sets as one set.
    pub(crate) fn merge<'a>(sets: impl IntoIterator<Item = &'a FragmentedTombstones>) -> Self {
        Self::new(sets.into_iter().flat_map(|s| s.tombstones()))
    }

    /// Whether no key is covered.
    pub(crate) fn is_empty(&self) -> bool {
        self.fragments.is_empty()
    }

    /// The fragments, in key order.
    #[cfg(test)]
    pub(crate) fn fragments(&self) -> &[Fragment] {
        &self.fragments
    }

    /// One tombstone per fragment and sequence.
    pub(crate) fn tombstones(&self) -> impl Iterator<Item = RangeTombstone> + '_ {
        self.fragments.iter().flat_map(|f| {
            f.seqs
                .iter()
                .map(|&seq| RangeTombstone::new(&f.start, &f.end, seq))
        })
    }

    /// The sequence of the newest tombstone covering `key` that a read at
    /// `read_seq` sees; 0 if none does.
    #[inline]
    pub(crate) fn max_covering_seq(&self, key: &[u8], read_seq: u64) -> u64 {
        let i = self
            .fragments
            .partition_point(|f| compare_user_keys(&f.end, key) != Ordering::Greater);
        match self.fragments.get(i) {
            Some(f) if compare_user_keys(&f.start, key) != Ordering::Greater => {
                f.seqs.iter().copied().find(|&s| s <= read_seq).unwrap_or(0)
            }
            _ => 0,
        }
    }

    /// Whether a tombstone read at `read_seq` or below hides the version
    /// of `key` at `seq`.
    #[inline]
    pub(crate) fn covers(&self, key: &[u8], seq: u64, read_seq: u64) -> bool {
        self.max_covering_seq(key, read_seq) > seq
    }

    /// The tombstones a compaction output keeps, given the oldest snapshot
    /// and whether a file below the output may hold keys in `[start, end)`:
    /// every sequence above the oldest snapshot (a snapshot may need it),
    /// and the newest one at or below it unless nothing older can lie
    /// below (the compaction drops what it covers in its own input).
    pub(crate) fn for_compaction_output(
        &self,
        oldest_snapshot: u64,
        below_may_hold: impl Fn(&[u8], &[u8]) -> bool,
    ) -> Self {
        let mut kept = Vec::new();
        for f in &self.fragments {
            let mut seqs: Vec<u64> = f
                .seqs
                .iter()
                .copied()
                .filter(|&s| s > oldest_snapshot)
                .collect();
            if let Some(&visible_to_all) = f.seqs.iter().find(|&&s| s <= oldest_snapshot)
                && below_may_hold(&f.start, &f.end)
            {
                seqs.push(visible_to_all);
            }
            if !seqs.is_empty() {
                kept.push(Fragment {
                    start: f.start.clone(),
                    end: f.end.clone(),
                    seqs,
                });
            }
        }
        FragmentedTombstones { fragments: kept }
    }

    /// The tombstones cut to `[lower, upper)` (`None`: no bound), with
    /// whether each was cut at `upper`.
    pub(crate) fn clipped(
        &self,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
    ) -> Vec<(RangeTombstone, bool)> {
        let mut out = Vec::new();
        for f in &self.fragments {
            let start = match lower {
                Some(l) if compare_user_keys(l, &f.start) == Ordering::Greater => l,
                _ => &f.start[..],
            };
            let (end, cut) = match upper {
                Some(u) if compare_user_keys(u, &f.end) == Ordering::Less => (u, true),
                _ => (&f.end[..], false),
            };
            if compare_user_keys(start, end) != Ordering::Less {
                continue;
            }
            for &seq in &f.seqs {
                out.push((RangeTombstone::new(start, end, seq), cut));
            }
        }
        out
    }
}

/// The tombstones a flush or a compaction writes, handed to its output
/// tables in key order: each table takes those from where the one before
/// stopped up to just past its last user key, the last table the rest.
/// Cut that way, the files of a sorted level stay disjoint, and each holds
/// the tombstones over its own key range.
#[derive(Debug)]
pub(crate) struct TombstoneOutput {
    set: Arc<FragmentedTombstones>,
    /// Where the next table's tombstones start (`None`: from the first).
    lower: Option<Vec<u8>>,
    done: bool,
}

impl TombstoneOutput {
    /// `None` when `set` is empty.
    pub(crate) fn new(set: Arc<FragmentedTombstones>) -> Option<Self> {
        (!set.is_empty()).then_some(TombstoneOutput {
            set,
            lower: None,
            done: false,
        })
    }

    /// Whether some tombstones are still to be written.
    pub(crate) fn pending(&self) -> bool {
        !self.done
    }

    /// The tombstones of the next table, cut to end before `upper`
    /// (`None`: the last table, which takes all the rest), each with
    /// whether it was cut there.
    pub(crate) fn take(&mut self, upper: Option<&[u8]>) -> Vec<(RangeTombstone, bool)> {
        if self.done {
            return Vec::new();
        }
        let out = self.set.clipped(self.lower.as_deref(), upper);
        match upper {
            Some(u) => self.lower = Some(u.to_vec()),
            None => self.done = true,
        }
        out
    }
}

/// The range tombstones of a memtable: appended by writers, read as
/// fragments. A memtable without any costs a reader one atomic load.
#[derive(Debug, Default)]
pub(crate) struct MemRangeDels {
    /// Set once the first tombstone is added.
    any: AtomicBool,
    /// Bytes the tombstones take, counted in the memtable's size.
    bytes: AtomicUsize,
    inner: Mutex<MemRangeDelsInner>,
}

#[derive(Debug, Default)]
struct MemRangeDelsInner {
    tombstones: Vec<RangeTombstone>,
    /// The fragments of `tombstones`, built on the first read after a change.
    fragmented: Option<Arc<FragmentedTombstones>>,
}

impl MemRangeDels {
    /// Adds the tombstone `[start, end)` at `seq`; an empty range deletes
    /// nothing and is not kept.
    pub(crate) fn add(&self, start: &[u8], end: &[u8], seq: u64) {
        let t = RangeTombstone::new(start, end, seq);
        if t.is_empty() {
            return;
        }
        let size = t.start.len() + t.end.len() + std::mem::size_of::<RangeTombstone>();
        let mut inner = self.inner.lock();
        inner.tombstones.push(t);
        // Relaxed: a size estimate, read to decide when the memtable is full.
        self.bytes.fetch_add(size, MemOrdering::Relaxed);
        inner.fragmented = None;
        // Release: a reader that sees the flag finds the tombstone under the
        // lock anyway; the flag only lets readers skip the lock.
        self.any.store(true, MemOrdering::Release);
    }

    /// Bytes the tombstones take (their keys and bookkeeping).
    #[inline]
    pub(crate) fn memory_usage(&self) -> usize {
        // Relaxed: an estimate (see `add`).
        self.bytes.load(MemOrdering::Relaxed)
    }

    /// Whether the memtable holds no tombstone.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        // Acquire: pairs with the Release in `add`.
        !self.any.load(MemOrdering::Acquire)
    }

    /// The tombstones as fragments; `None` when there are none.
    #[inline]
    pub(crate) fn fragments(&self) -> Option<Arc<FragmentedTombstones>> {
        if self.is_empty() {
            return None;
        }
        self.fragments_slow()
    }

    fn fragments_slow(&self) -> Option<Arc<FragmentedTombstones>> {
        let mut inner = self.inner.lock();
        let inner = &mut *inner;
        let tombstones = &inner.tombstones;
        let f = inner
            .fragmented
            .get_or_insert_with(|| Arc::new(FragmentedTombstones::new(tombstones.iter().cloned())));
        Some(f.clone())
    }

    /// [`FragmentedTombstones::max_covering_seq`] of the memtable's
    /// tombstones.
    #[inline]
    pub(crate) fn max_covering_seq(&self, key: &[u8], read_seq: u64) -> u64 {
        match self.fragments() {
            None => 0,
            Some(f) => f.max_covering_seq(key, read_seq),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(start: &str, end: &str, seq: u64) -> RangeTombstone {
        RangeTombstone::new(start.as_bytes(), end.as_bytes(), seq)
    }

    fn frags(set: &FragmentedTombstones) -> Vec<(String, String, Vec<u64>)> {
        set.fragments()
            .iter()
            .map(|f| {
                (
                    String::from_utf8(f.start.clone()).unwrap(),
                    String::from_utf8(f.end.clone()).unwrap(),
                    f.seqs.clone(),
                )
            })
            .collect()
    }

    #[test]
    fn overlapping_tombstones_are_cut_into_disjoint_fragments() {
        let set = FragmentedTombstones::new([t("c", "g", 5), t("a", "e", 3), t("f", "h", 9)]);
        assert_eq!(
            frags(&set),
            [
                ("a".into(), "c".into(), vec![3]),
                ("c".into(), "e".into(), vec![5, 3]),
                ("e".into(), "f".into(), vec![5]),
                ("f".into(), "g".into(), vec![9, 5]),
                ("g".into(), "h".into(), vec![9]),
            ]
        );
    }

    #[test]
    fn empty_and_inverted_ranges_delete_nothing() {
        let set = FragmentedTombstones::new([t("b", "b", 5), t("z", "a", 6)]);
        assert!(set.is_empty());
        assert_eq!(set.max_covering_seq(b"b", 100), 0);
    }

    #[test]
    fn adjacent_fragments_with_the_same_tombstones_join() {
        let set = FragmentedTombstones::new([t("a", "c", 4), t("c", "e", 4), t("e", "f", 5)]);
        assert_eq!(
            frags(&set),
            [
                ("a".into(), "e".into(), vec![4]),
                ("e".into(), "f".into(), vec![5])
            ]
        );
    }

    #[test]
    fn covering_respects_half_open_ranges_and_read_sequences() {
        let set = FragmentedTombstones::new([t("b", "d", 10), t("c", "e", 20)]);
        assert_eq!(set.max_covering_seq(b"a", 100), 0);
        assert_eq!(set.max_covering_seq(b"b", 100), 10);
        assert_eq!(set.max_covering_seq(b"c", 100), 20);
        assert_eq!(set.max_covering_seq(b"c", 15), 10); // a snapshot before 20
        assert_eq!(set.max_covering_seq(b"c", 5), 0); // before both
        assert_eq!(set.max_covering_seq(b"e", 100), 0); // the end is excluded
        assert!(set.covers(b"c", 19, 100));
        assert!(!set.covers(b"c", 21, 100)); // a later put shows
        assert!(!set.covers(b"b", 3, 9));
    }

    #[test]
    fn merged_sets_equal_the_set_of_all_tombstones() {
        let a = FragmentedTombstones::new([t("a", "m", 3)]);
        let b = FragmentedTombstones::new([t("k", "z", 7)]);
        let all = FragmentedTombstones::new([t("a", "m", 3), t("k", "z", 7)]);
        assert_eq!(FragmentedTombstones::merge([&a, &b]), all);
    }

    #[test]
    fn compaction_keeps_what_snapshots_or_lower_levels_need() {
        let set = FragmentedTombstones::new([t("a", "c", 5), t("a", "c", 8), t("a", "c", 20)]);
        // Oldest snapshot 10: 20 stays; of 8 and 5 only 8, and only with
        // something below.
        let kept = set.for_compaction_output(10, |_, _| true);
        assert_eq!(frags(&kept), [("a".into(), "c".into(), vec![20, 8])]);
        let kept = set.for_compaction_output(10, |_, _| false);
        assert_eq!(frags(&kept), [("a".into(), "c".into(), vec![20])]);
        assert!(set.for_compaction_output(30, |_, _| false).is_empty());
    }

    #[test]
    fn clipping_cuts_at_the_bounds() {
        let set = FragmentedTombstones::new([t("b", "f", 5)]);
        let cut = set.clipped(Some(b"c"), Some(b"e"));
        assert_eq!(cut, [(t("c", "e", 5), true)]);
        assert_eq!(set.clipped(None, Some(b"z")), [(t("b", "f", 5), false)]);
        assert!(set.clipped(Some(b"f"), None).is_empty());
        assert_eq!(user_key_successor(b"ab"), b"ab\0");
        assert_eq!(
            user_key_predecessor(&user_key_successor(b"ab")),
            Some(&b"ab"[..])
        );
        assert_eq!(user_key_predecessor(b"ab"), None);
        assert_eq!(user_key_predecessor(b""), None);
    }

    #[test]
    fn output_tables_take_the_tombstones_in_turn() {
        let set = FragmentedTombstones::new([t("a", "z", 5)]);
        let mut out = TombstoneOutput::new(Arc::new(set)).unwrap();
        assert_eq!(out.take(Some(b"g")), [(t("a", "g", 5), true)]);
        assert!(out.pending());
        assert_eq!(out.take(None), [(t("g", "z", 5), false)]);
        assert!(!out.pending());
        assert!(out.take(None).is_empty());
        assert!(TombstoneOutput::new(Arc::default()).is_none());
    }

    #[test]
    fn memtable_tombstones_are_read_as_fragments() {
        let m = MemRangeDels::default();
        assert!(m.is_empty());
        assert!(m.fragments().is_none());
        m.add(b"x", b"a", 1); // inverted: not kept
        assert!(m.is_empty());
        m.add(b"a", b"c", 2);
        assert_eq!(m.max_covering_seq(b"b", 5), 2);
        m.add(b"b", b"d", 3);
        assert_eq!(m.max_covering_seq(b"b", 5), 3);
        assert_eq!(m.max_covering_seq(b"c", 2), 0);
        assert_eq!(m.fragments().unwrap().fragments().len(), 3);
    }
}
