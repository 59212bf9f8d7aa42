//! Searches: the walks that find a node, or the splice around a key, with
//! the prefetching that overlaps their cache misses.

use crate::node::{Hint, Node, Stride};
use crate::splice::Levels;
use crate::sync::Ordering;
use crate::{Comparator, SkipList};
use std::cmp::Ordering as CmpOrdering;

/// Prefetching during searches (see `prefetch_step`) hides part of the
/// dependent-miss latency. It adds loads per step, which loom would have to
/// explore, and miri gains nothing from it.
const PREFETCH: bool = cfg!(not(any(loom, miri)));

/// A step of a read-only search settled by a key prefix (prefixed layout).
enum PrefixStep {
    /// The next node is before the key: move to it.
    Right(Node),
    /// The next node is not before the key, or may not be: step down.
    Down,
    /// Equal prefixes: compare the keys.
    Compare,
}

/// The search machinery.
impl<C: Comparator> SkipList<C> {
    /// The key of a node of this list; the list outlives the returned slice.
    #[inline(always)]
    pub(crate) fn key_of(&self, node: Node) -> &[u8] {
        // SAFETY: every node a list method sees was allocated from
        // `self.arena` (reached from the head, or from a hint, token or
        // reservation whose list id matched), so it lives as long as `self`.
        // Published nodes have initialised keys that never change; an
        // unpublished one reaches here only in `link`, after the only `&mut`
        // to its key (the `fill` closure's buffer, or a `Reserved`) is gone.
        unsafe { node.key() }
    }

    /// The successor of `node` (the head for `None`) at `level`.
    #[inline(always)]
    pub(crate) fn next_of(&self, node: Option<Node>, level: usize) -> Option<Node> {
        self.next_in(node, level, self.stride)
    }

    /// [`next_of`](Self::next_of) with the list's layout passed in: the hot
    /// paths take it as a constant (see `at_or_after`), so that RocksDB's
    /// layout pays nothing for the option of the other.
    #[inline(always)]
    pub(crate) fn next_in(&self, node: Option<Node>, level: usize, stride: Stride) -> Option<Node> {
        debug_assert_eq!(stride, self.stride);
        // SAFETY: the node belongs to this list (see `key_of`), and `level`
        // is below its height: callers only walk a node at levels through
        // which they reached it, or at levels below a splice level that holds
        // it, and the head has every level; `stride` is the list's layout.
        unsafe { node.unwrap_or(self.head).next(level, stride) }
    }

    /// Whether `key` sorts after `node`; `None` is the end, after every key.
    #[inline(always)]
    pub(crate) fn key_is_after_node(&self, key: &[u8], node: Option<Node>) -> bool {
        node.is_some_and(|n| self.cmp.compare(self.key_of(n), key) == CmpOrdering::Less)
    }

    /// Issues prefetches while the caller waits for `next` (the successor
    /// of `at` at `level`) to compare it with the key. A search step is one
    /// dependent cache miss; these start the next one or two early:
    ///
    /// - the node after `next` at `level`, needed if the key is after `next`
    ///   (the search moves right);
    /// - the successor of `at` one level down, needed if the key is not after
    ///   `next` (the search descends at `at`). Its address sits in `at`'s
    ///   tower, already in cache, so this miss overlaps with the one on
    ///   `next`, which shortens random inserts and lookups in a large list.
    ///
    /// The first looks redundant, since its address arrives with `next`'s
    /// tower, about when the comparison completes; dropping it saves
    /// instructions and simulated cache misses, yet paired timings ran
    /// slower without it (`benches/results/inline-skiplist/2026-12-02.md`,
    /// "Tried and not kept"), so it stays.
    #[inline(always)]
    fn prefetch_step(&self, at: Option<Node>, next: Option<Node>, level: usize, stride: Stride) {
        if !PREFETCH {
            return;
        }
        if let Some(n) = next
            && let Some(after) = self.next_in(Some(n), level, stride)
        {
            after.prefetch(level, stride);
        }
        if level > 0
            && let Some(down) = self.next_in(at, level - 1, stride)
            && Some(down) != next
        {
            down.prefetch(level - 1, stride);
        }
    }

    /// The key prefix a read-only search compares with the prefixes beside
    /// the links; 0, unused, in the plain layout.
    #[inline(always)]
    fn search_prefix(&self, key: &[u8], stride: Stride) -> u64 {
        if stride.prefixed() {
            self.cmp.key_prefix(key)
        } else {
            0
        }
    }

    /// In the prefixed layout at `level > 0`, settles the step from `at`
    /// by the prefix beside its link, without loading the next node. Only
    /// for searches that may step down early: a prefix can be that of a
    /// larger node the link held before (see `node`), so `Down` does not
    /// prove the next node to be after the key.
    #[inline(always)]
    fn prefix_step(
        &self,
        at: Option<Node>,
        level: usize,
        key_prefix: u64,
        stride: Stride,
    ) -> PrefixStep {
        debug_assert!(stride == self.stride && stride.prefixed() && level > 0);
        // SAFETY: `at` (or the head) belongs to this list and has `level`
        // (see `next_of`), which is above 0 in the prefixed layout.
        let (prefix, next) = unsafe { at.unwrap_or(self.head).prefix_and_next(level, stride) };
        match key_prefix.cmp(&prefix) {
            // The key's prefix is above the next node's: so is the key.
            CmpOrdering::Greater => match next {
                Some(n) => {
                    if PREFETCH {
                        // The nodes after `n`, here and one level down, for
                        // the step after `n`: their misses overlap with
                        // `n`'s.
                        let at = at.unwrap_or(self.head);
                        // SAFETY: as above.
                        unsafe { at.prefetch_hint(level, stride, Hint::Across) };
                        // SAFETY: as above.
                        unsafe { at.prefetch_hint(level, stride, Hint::Down) };
                    }
                    PrefixStep::Right(n)
                }
                None => PrefixStep::Down,
            },
            CmpOrdering::Less => PrefixStep::Down,
            CmpOrdering::Equal => PrefixStep::Compare,
        }
    }

    #[inline(always)]
    pub(crate) fn current_max_height(&self) -> usize {
        // Relaxed: a stale, lower height only makes a search start below the
        // top, which is correct (the head's upper links are a shortcut); a
        // height whose head link is not in yet reads as null and the search
        // steps down.
        self.max_height.load(Ordering::Relaxed)
    }

    #[inline]
    pub(crate) fn first(&self) -> Option<Node> {
        self.next_of(None, 0)
    }

    #[inline]
    pub(crate) fn after(&self, node: Node) -> Option<Node> {
        self.next_of(Some(node), 0)
    }

    #[inline]
    pub(crate) fn before(&self, node: Node) -> Option<Node> {
        self.find_last_before(self.key_of(node), false, 0)
    }

    #[inline]
    pub(crate) fn at_or_before(&self, target: &[u8]) -> Option<Node> {
        self.find_last_before(target, true, 0)
    }

    /// The first node `>= key`.
    #[inline]
    pub(crate) fn at_or_after(&self, key: &[u8]) -> Option<Node> {
        if self.stride.prefixed() {
            self.at_or_after_in(key, Stride::PREFIXED)
        } else {
            self.at_or_after_in(key, Stride::PLAIN)
        }
    }

    #[inline(always)]
    fn at_or_after_in(&self, key: &[u8], stride: Stride) -> Option<Node> {
        let key_prefix = self.search_prefix(key, stride);
        let (mut at, mut level) = self.search_start(key, key_prefix, 0, stride);
        // The node that stopped us one level up: known to be > key, so it
        // needs no second comparison when we meet it again below.
        let mut known_greater: Option<Node> = None;
        loop {
            if stride.prefixed() && level > 0 {
                match self.prefix_step(at, level, key_prefix, stride) {
                    PrefixStep::Right(n) => {
                        at = Some(n);
                        continue;
                    }
                    PrefixStep::Down => {
                        level -= 1;
                        continue;
                    }
                    PrefixStep::Compare => {}
                }
            }
            let next = self.next_in(at, level, stride);
            let order = match next {
                None => CmpOrdering::Greater,
                Some(n) if Some(n) == known_greater => CmpOrdering::Greater,
                Some(n) => {
                    self.prefetch_step(at, next, level, stride);
                    self.cmp.compare(self.key_of(n), key)
                }
            };
            match order {
                CmpOrdering::Less => at = next,
                CmpOrdering::Equal => return next,
                CmpOrdering::Greater if level == 0 => return next,
                CmpOrdering::Greater => {
                    known_greater = next;
                    level -= 1;
                }
            }
        }
    }

    /// The last node `< key` (or `<= key` when `inclusive`); `None` if it
    /// would be the head. With `bottom > 0`, the search stops at that level
    /// and returns a node before the key there, the last one unless a
    /// prefix made it step down early.
    #[inline]
    pub(crate) fn find_last_before(
        &self,
        key: &[u8],
        inclusive: bool,
        bottom: usize,
    ) -> Option<Node> {
        if self.stride.prefixed() {
            self.find_last_before_in(key, inclusive, bottom, Stride::PREFIXED)
        } else {
            self.find_last_before_in(key, inclusive, bottom, Stride::PLAIN)
        }
    }

    #[inline(always)]
    pub(crate) fn find_last_before_in(
        &self,
        key: &[u8],
        inclusive: bool,
        bottom: usize,
        stride: Stride,
    ) -> Option<Node> {
        let key_prefix = self.search_prefix(key, stride);
        let (mut at, mut level) = self.search_start(key, key_prefix, bottom, stride);
        let mut known_not_before: Option<Node> = None;
        loop {
            if stride.prefixed() && level > 0 {
                match self.prefix_step(at, level, key_prefix, stride) {
                    PrefixStep::Right(n) => {
                        at = Some(n);
                        continue;
                    }
                    PrefixStep::Down if level == bottom => return at,
                    PrefixStep::Down => {
                        level -= 1;
                        continue;
                    }
                    PrefixStep::Compare => {}
                }
            }
            let next = self.next_in(at, level, stride);
            let advance = match next {
                None => false,
                Some(n) if Some(n) == known_not_before => false,
                Some(n) => {
                    self.prefetch_step(at, next, level, stride);
                    match self.cmp.compare(self.key_of(n), key) {
                        CmpOrdering::Less => true,
                        CmpOrdering::Equal => inclusive,
                        CmpOrdering::Greater => false,
                    }
                }
            };
            if advance {
                at = next;
            } else if level == bottom {
                return at;
            } else {
                known_not_before = next;
                level -= 1;
            }
        }
    }

    /// The last node (`None` when empty).
    #[inline]
    pub(crate) fn last(&self) -> Option<Node> {
        let mut at: Option<Node> = None;
        let mut level = self.current_max_height() - 1;
        loop {
            match self.next_of(at, level) {
                Some(next) => at = Some(next),
                None if level == 0 => return at,
                None => level -= 1,
            }
        }
    }

    /// Narrows the bracket `(before, after)` at `level` to the tight one
    /// around `key`: `before < key <= next`, `next` the successor of
    /// `before`. `after` must be `>= key` (or the end).
    #[inline]
    pub(crate) fn find_splice_for_level(
        &self,
        key: &[u8],
        mut before: Option<Node>,
        after: Option<Node>,
        level: usize,
        stride: Stride,
    ) -> (Option<Node>, Option<Node>) {
        loop {
            let next = self.next_in(before, level, stride);
            if next == after {
                return (before, next);
            }
            self.prefetch_step(before, next, level, stride);
            if !self.key_is_after_node(key, next) {
                return (before, next);
            }
            before = next;
        }
    }

    /// Recomputes levels `0..top` of `levels` top-down, each within the
    /// bracket of the level above.
    #[inline]
    pub(crate) fn recompute_splice(
        &self,
        key: &[u8],
        levels: &mut Levels,
        top: usize,
        stride: Stride,
    ) {
        for level in (0..top).rev() {
            let (prev, next) = self.find_splice_for_level(
                key,
                levels.prev[level + 1],
                levels.next[level + 1],
                level,
                stride,
            );
            levels.prev[level] = prev;
            levels.next[level] = next;
        }
    }
}
