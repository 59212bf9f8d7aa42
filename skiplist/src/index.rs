//! The entry index of the prefixed layout: a packed, sorted copy of the key
//! prefixes of the nodes at one level, with their handles, that a search
//! binary-searches to start at that level beside its key instead of
//! walking down every level above it.
//!
//! A search from the top moves right about once per level, each move a
//! dependent cache miss on a node allocated in arrival order, on a page of
//! its own; a B+tree finds a key in a few reads of adjacent lines. The
//! index takes the levels above the indexed one off that chain: a search
//! reads a summary (one prefix in [`LINE`], small enough to stay cached),
//! one line of prefixes, one handle, and goes on from that node.
//!
//! Why an index goes on serving while inserts run: the list is insert-only,
//! so a node linked at a level stays linked there, and a node whose key is
//! before the searched key stays before it. A search may start at any
//! indexed node before its key, at the indexed level, whatever was inserted
//! since the index was built; those inserts only lengthen its walk along
//! that level. So the index is rebuilt, by the insert that notices, each
//! time the list has doubled since the last build. The indexed level holds
//! about one node in [`SPACING`], so a build reads that many fewer nodes
//! than the list holds.
//!
//! Prefixes only order keys when they differ. Where indexed nodes share the
//! searched key's prefix, their keys decide, with a binary search of their
//! own: a comparator whose prefixes settle nothing (the default
//! `key_prefix`, 0 for every key) makes the index a binary search over the
//! nodes, no worse than walking down the levels.
//!
//! Every index lives in the list's arena, as the nodes do, because a search
//! may still be reading an older one; each is at most half the size of the
//! next, so together they take less than twice the last, about two bytes
//! per entry with branching 2. A build that the arena refuses (its memory
//! limit) leaves the previous index in place.

use crate::node::{Node, Stride};
use crate::sync::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use crate::{Comparator, SkipList};
use std::alloc::Layout;
use std::ptr::NonNull;

/// Prefixes in one 64-byte line of the index, and entries per summary
/// entry: a search reads one line of prefixes after the summary.
const LINE: usize = 8;

/// The first index is built once the list holds this many entries: in a
/// smaller list the upper levels stay cached anyway. (Smaller in debug
/// builds, and tiny under loom, so that the small lists of tests, miri and
/// loom models build and use indexes; at three entries, a loom model of
/// three inserts builds one while its other threads run.)
const FIRST_BUILD: usize = if cfg!(loom) {
    3
} else if cfg!(debug_assertions) {
    64
} else {
    1 << 14
};

/// The indexed level holds about one node in this many (the first level
/// that does, for the list's branching factor).
const SPACING: usize = if cfg!(loom) { 2 } else { 16 };

/// An insert looks at the list's length (to see whether it doubled) only
/// when its node is at least this many levels above the indexed one: about
/// one insert in 2^8 with any branching factor. (Every insert in debug
/// builds and under loom.)
const CHECK_BITS: u32 = if cfg!(any(debug_assertions, loom)) {
    0
} else {
    8
};

/// An index, as built: see the module docs. Never written once published.
struct EntryIndex {
    /// The level whose nodes it holds, above 0.
    level: usize,
    /// Every `LINE`th entry of `prefixes`.
    summary: NonNull<[u64]>,
    /// The key prefix of each node, ascending (with ties).
    prefixes: NonNull<[u64]>,
    /// The nodes, in key order.
    nodes: NonNull<[Node]>,
}

/// A list's entry index, and when to build the next one.
pub(crate) struct IndexSlot {
    /// The newest index, in the arena; null until the first build.
    current: AtomicPtr<EntryIndex>,
    /// The length at which the next build starts.
    next_build: AtomicUsize,
    /// Held by the insert that builds, so that no other starts a build.
    building: AtomicBool,
    /// Whether the list builds indexes (`SkipListOptions::with_entry_index`
    /// and the prefixed layout).
    enabled: bool,
}

impl IndexSlot {
    pub(crate) fn new(enabled: bool) -> Self {
        Self {
            current: AtomicPtr::new(std::ptr::null_mut()),
            next_build: AtomicUsize::new(FIRST_BUILD),
            building: AtomicBool::new(false),
            enabled,
        }
    }
}

/// The entry index: using and building it.
impl<C: Comparator> SkipList<C> {
    /// Where a read-only search of the prefixed layout for `key`, whose
    /// prefix is `prefix`, starts when it stops at `bottom`: the node
    /// (`None`: the head) and level. An indexed node before the key at the
    /// indexed level when there is an index at or above `bottom`; the head
    /// at the top otherwise.
    #[inline(always)]
    pub(crate) fn search_start(
        &self,
        key: &[u8],
        prefix: u64,
        bottom: usize,
        stride: Stride,
    ) -> (Option<Node>, usize) {
        if stride.prefixed() {
            // Acquire: pairs with the Release store in `build_index`, so
            // the index's contents and the nodes it names are visible.
            let index = self.index.current.load(Ordering::Acquire);
            // SAFETY: a non-null pointer is an `EntryIndex` written in the
            // list's arena before it was published, never written again,
            // and freed with the arena when the list drops.
            if let Some(index) = unsafe { index.as_ref() }
                && index.level >= bottom
            {
                return (self.indexed_node_before(index, key, prefix), index.level);
            }
        }
        (None, self.current_max_height() - 1)
    }

    /// The last node of `index` before `key` (whose prefix is `prefix`),
    /// or `None`.
    #[inline(always)]
    fn indexed_node_before(&self, index: &EntryIndex, key: &[u8], prefix: u64) -> Option<Node> {
        // SAFETY: the slices lie in the list's arena, which outlives
        // `index` (see `search_start`), and were written before it was
        // published.
        let (summary, prefixes, nodes) = unsafe {
            (
                index.summary.as_ref(),
                index.prefixes.as_ref(),
                index.nodes.as_ref(),
            )
        };
        // summary[j] == prefixes[j * LINE]: the entries below `prefix` end
        // in the line after the last summary entry below it.
        let line = summary.partition_point(|&p| p < prefix);
        let from = line.saturating_sub(1) * LINE;
        let to = (line * LINE).min(prefixes.len());
        let mut before = from + prefixes[from..to].partition_point(|&p| p < prefix);
        if prefixes.get(before) == Some(&prefix) {
            // Nodes sharing the key's prefix: their keys decide.
            let ties = before + prefixes[before..].partition_point(|&p| p == prefix);
            before +=
                nodes[before..ties].partition_point(|&n| self.key_is_after_node(key, Some(n)));
        }
        before.checked_sub(1).map(|i| nodes[i])
    }

    /// After inserting a node `height` levels tall: now and then (after a
    /// tall node only), checks whether the list has doubled since the last
    /// index, and if so builds the next one.
    #[inline(always)]
    pub(crate) fn maybe_build_index(&self, height: usize, stride: Stride) {
        if !stride.prefixed() || !self.index.enabled {
            return;
        }
        let tall = self.indexed_level() + CHECK_BITS.div_ceil(self.bits_per_level) as usize;
        // Relaxed: a threshold; a stale one moves a build by an insert or
        // two, and `building` decides who builds.
        if height < tall || self.len() < self.index.next_build.load(Ordering::Relaxed) {
            return;
        }
        self.build_index_once(stride);
    }

    /// Builds the next index unless another insert is building one or has
    /// just built it.
    #[cold]
    #[inline(never)]
    fn build_index_once(&self, stride: Stride) {
        // Acquire: pairs with the Release below, so that the last builder's
        // threshold is seen.
        if self
            .index
            .building
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        let len = self.len();
        // Relaxed: written only under `building`.
        if len >= self.index.next_build.load(Ordering::Relaxed) {
            self.build_index(stride);
            self.index
                .next_build
                .store(len.saturating_mul(2), Ordering::Relaxed);
        }
        // Release: see the Acquire above.
        self.index.building.store(false, Ordering::Release);
    }

    /// How many nodes the newest index holds (0 before the first build).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn indexed_nodes(&self) -> usize {
        // Acquire: as in `search_start`.
        let index = self.index.current.load(Ordering::Acquire);
        // SAFETY: as in `search_start`.
        unsafe { index.as_ref() }.map_or(0, |index| index.nodes.len())
    }

    /// The level an index holds: the first that holds about one node in
    /// `SPACING`.
    #[inline(always)]
    fn indexed_level(&self) -> usize {
        SPACING.trailing_zeros().div_ceil(self.bits_per_level) as usize
    }

    /// Reads the indexed level and publishes its index; leaves the last
    /// one if the list is not that tall yet or the arena refuses the
    /// memory.
    fn build_index(&self, stride: Stride) {
        let level = self.indexed_level();
        if level >= self.current_max_height() {
            return;
        }
        let (mut prefixes, mut nodes) = (Vec::new(), Vec::new());
        let mut at = self.head;
        // SAFETY: `at` is the head or a node reached at `level`, so it
        // belongs to this list and has `level`.
        while let Some(next) = unsafe { at.next(level, stride) } {
            // Not the prefix beside the link, which can be that of a larger
            // node the link held before (see `node`): the node's own.
            prefixes.push(self.cmp.key_prefix(self.key_of(next)));
            nodes.push(next);
            at = next;
        }
        if nodes.is_empty() {
            return;
        }
        let summary: Vec<u64> = prefixes.iter().step_by(LINE).copied().collect();
        let (Some(summary), Some(prefixes), Some(nodes)) = (
            self.copy_to_arena(&summary),
            self.copy_to_arena(&prefixes),
            self.copy_to_arena(&nodes),
        ) else {
            return;
        };
        let index = EntryIndex {
            level,
            summary,
            prefixes,
            nodes,
        };
        if let Ok(index) = self.arena.try_alloc(index) {
            // Release: pairs with the Acquire in `search_start`.
            self.index.current.store(index, Ordering::Release);
        }
    }

    /// `items` copied into a line-aligned allocation of the arena, or
    /// `None` if the arena refuses it.
    fn copy_to_arena<T: Copy>(&self, items: &[T]) -> Option<NonNull<[T]>> {
        let layout = Layout::array::<T>(items.len()).ok()?.align_to(64).ok()?;
        let to = self.arena.try_alloc_layout(layout).ok()?.cast::<T>();
        // SAFETY: the allocation holds `items.len()` values of `T`, is
        // aligned for `T` and does not overlap `items`.
        unsafe { std::ptr::copy_nonoverlapping(items.as_ptr(), to.as_ptr(), items.len()) };
        Some(NonNull::slice_from_raw_parts(to, items.len()))
    }
}
