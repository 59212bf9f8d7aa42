//! Inserts: linking a new node level by level (a CAS per level, or a store
//! under a `SingleWriter`), repairing stale hints, and the allocation and
//! checks that come before.

use crate::node::{self, Hint, Node, Stride};
use crate::splice::{Levels, SingleWriter};
use crate::sync::Ordering;
use crate::thread_state::{len_stripe, random_height};
use crate::{Comparator, SkipList};
use std::cmp::Ordering as CmpOrdering;

/// The insert machinery.
impl<C: Comparator> SkipList<C> {
    /// Raises `max_height` to at least `height`; returns the list's height.
    #[inline]
    fn raise_max_height(&self, height: usize) -> usize {
        let mut max = self.current_max_height();
        while height > max {
            // Relaxed: the height is only a starting point for searches (see
            // `current_max_height`); it orders no other memory. Raising it
            // before linking keeps `check_invariants`' bound true.
            match self.max_height.compare_exchange_weak(
                max,
                height,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return height,
                Err(current) => max = current,
            }
        }
        max
    }

    /// Links the unpublished node `x` of `height` levels, bottom up, using
    /// and updating `levels`. With `CONCURRENT`, each level is published by a
    /// CAS that retries from a fresh search on contention; without, by a
    /// release store (the caller holds the list's `SingleWriter`).
    /// `partial_fix` keeps the usable part of a stale hint (caller hints);
    /// otherwise a stale hint is recomputed from the top.
    ///
    /// Returns `false`, with nothing linked, if an equal key is present.
    #[inline]
    pub(crate) fn link<const CONCURRENT: bool>(
        &self,
        x: Node,
        height: usize,
        levels: &mut Levels,
        partial_fix: bool,
    ) -> bool {
        // The layout as a constant in each copy (see `next_in`).
        if self.stride.prefixed() {
            self.link_in::<CONCURRENT>(x, height, levels, partial_fix, Stride::PREFIXED)
        } else {
            self.link_in::<CONCURRENT>(x, height, levels, partial_fix, Stride::PLAIN)
        }
    }

    #[inline(always)]
    fn link_in<const CONCURRENT: bool>(
        &self,
        x: Node,
        height: usize,
        levels: &mut Levels,
        partial_fix: bool,
        stride: Stride,
    ) -> bool {
        let key = self.key_of(x);
        let max_height = self.raise_max_height(height);

        // Find the lowest level whose bracket is tight and holds the key;
        // every level below it is recomputed from there.
        let mut recompute = 0;
        if levels.height < max_height {
            // Unused hint, or the list grew taller since: start at the top.
            levels.prev[max_height] = None;
            levels.next[max_height] = None;
            levels.height = max_height;
            recompute = max_height;
            if CONCURRENT && !partial_fix && stride.prefixed() && height < max_height {
                // A fresh splice that no later insert reuses (every caller
                // without a hint passes an empty one): the levels above the
                // node's own need no bracket, only a node before the key to
                // step down from, which prefixes find while loading fewer
                // nodes. Below, brackets are exact again.
                debug_assert!(levels.prev.iter().chain(&levels.next).all(Option::is_none));
                levels.prev[height] = self.find_last_before_in(key, false, height, stride);
                levels.next[height] = None;
                recompute = height;
            }
        } else {
            while recompute < max_height {
                let prev = levels.prev[recompute];
                let next = levels.next[recompute];
                if self.next_in(prev, recompute, stride) != next {
                    // Not tight: someone inserted in between. Go up.
                    recompute += 1;
                } else if prev.is_some() && !self.key_is_after_node(key, prev) {
                    // The key is before the bracket.
                    recompute = skip_level(&levels.prev, recompute, max_height, partial_fix);
                } else if self.key_is_after_node(key, next) {
                    // The key is after the bracket.
                    recompute = skip_level(&levels.next, recompute, max_height, partial_fix);
                } else {
                    break;
                }
            }
        }
        if recompute > 0 {
            self.recompute_splice(key, levels, recompute, stride);
        }

        // In the prefixed layout, the prefix stored beside each link to `x`.
        let x_prefix = if stride.prefixed() {
            self.cmp.key_prefix(key)
        } else {
            0
        };
        let mut levels_nested = true;
        for level in 0..height {
            if CONCURRENT {
                loop {
                    if level == 0 && self.is_duplicate(key, levels) {
                        return false;
                    }
                    let next = levels.next[level];
                    // SAFETY: `x` is ours and not yet reachable at `level`.
                    unsafe {
                        x.set_next_unpublished(
                            level,
                            next,
                            stride,
                            self.link_prefix(next, level, stride),
                        )
                    };
                    self.set_hints_before_link(x, next, level, stride);
                    let prev = levels.prev[level].unwrap_or(self.head);
                    // SAFETY: `prev` belongs to this list and has `level`
                    // (it was found at that level, or is the head).
                    if unsafe { prev.cas_next(level, next, x, stride, x_prefix) } {
                        self.set_hints_after_link(prev, x, next, level, stride);
                        break;
                    }
                    self.retry_level(key, levels, level);
                    // The re-search may have moved `prev[level]` past
                    // `prev[level - 1]`: the hint no longer nests.
                    levels_nested &= level == 0;
                }
            } else {
                if level >= recompute
                    && self.next_in(levels.prev[level], level, stride) != levels.next[level]
                {
                    // Defensive: with one writer whose token holds the
                    // only splice, brackets stay tight between inserts, so
                    // this costs a cached load per level. Were one loose,
                    // storing without this search would drop nodes.
                    (levels.prev[level], levels.next[level]) =
                        self.find_splice_for_level(key, levels.prev[level], None, level, stride);
                }
                if level == 0 && self.is_duplicate(key, levels) {
                    return false;
                }
                let next = levels.next[level];
                // SAFETY: `x` is ours and not yet reachable at `level`.
                unsafe {
                    x.set_next_unpublished(
                        level,
                        next,
                        stride,
                        self.link_prefix(next, level, stride),
                    )
                };
                self.set_hints_before_link(x, next, level, stride);
                let prev = levels.prev[level].unwrap_or(self.head);
                // SAFETY: `prev` belongs to this list and has `level`; the
                // caller's `SingleWriter` token makes this the only writer.
                unsafe { prev.store_next(level, x, stride, x_prefix) };
                self.set_hints_after_link(prev, x, next, level, stride);
            }
        }

        if levels_nested {
            levels.prev[..height].fill(Some(x));
        } else {
            levels.height = 0;
        }
        self.len[len_stripe()].fetch_add(1, Ordering::Relaxed); // Relaxed: see `len`.
        self.maybe_build_index(height, stride);
        true
    }

    /// In the prefixed layout above level 0, before `x` is linked ahead of
    /// `next` at `level`: points `x`'s hints at `next`'s successors there
    /// and one level down (see `node`). `next` was compared with the key,
    /// so its tower is cached.
    #[inline(always)]
    fn set_hints_before_link(&self, x: Node, next: Option<Node>, level: usize, stride: Stride) {
        if stride.prefixed() && level > 0 {
            for (hint, at) in [(Hint::Across, level), (Hint::Down, level - 1)] {
                let after = next.and_then(|n| self.next_in(Some(n), at, stride));
                // SAFETY: `x` is ours, has `level`, and the layout is
                // prefixed.
                unsafe { x.set_hint(level, stride, hint, after) };
            }
        }
    }

    /// Once `x` is linked between `prev` and `next` at `level`: `prev`'s
    /// successor's successors are now the old `next` and `x`'s successor
    /// one level down, where `x` is already linked.
    #[inline(always)]
    fn set_hints_after_link(
        &self,
        prev: Node,
        x: Node,
        next: Option<Node>,
        level: usize,
        stride: Stride,
    ) {
        if stride.prefixed() && level > 0 {
            let down = self.next_in(Some(x), level - 1, stride);
            // SAFETY: `prev` belongs to this list and has `level` (it was
            // found at that level, or is the head); the layout is prefixed.
            unsafe {
                prev.set_hint(level, stride, Hint::Across, next);
                prev.set_hint(level, stride, Hint::Down, down);
            }
        }
    }

    /// The prefix to store beside a link at `level` to `next`: its key's,
    /// or `END_PREFIX` for the end; 0 where no prefix is stored.
    #[inline(always)]
    fn link_prefix(&self, next: Option<Node>, level: usize, stride: Stride) -> u64 {
        if stride.prefixed() && level > 0 {
            next.map_or(node::END_PREFIX, |n| self.cmp.key_prefix(self.key_of(n)))
        } else {
            0
        }
    }

    /// Whether the level-0 bracket shows `key` already present: the bracket
    /// holds `prev < key <= next`, so a duplicate is `next`.
    #[inline(always)]
    fn is_duplicate(&self, key: &[u8], levels: &Levels) -> bool {
        debug_assert!(
            levels.prev[0].is_none() || self.key_is_after_node(key, levels.prev[0]),
            "bracket's prev must be < key"
        );
        levels.next[0].is_some_and(|n| self.cmp.compare(key, self.key_of(n)) != CmpOrdering::Less)
    }

    /// After a lost CAS at `level`: the bracket's `prev` is still before the
    /// key, so search forward from it.
    #[cold]
    #[inline(never)]
    fn retry_level(&self, key: &[u8], levels: &mut Levels, level: usize) {
        (levels.prev[level], levels.next[level]) =
            self.find_splice_for_level(key, levels.prev[level], None, level, self.stride);
        #[cfg(loom)]
        loom::thread::yield_now();
    }

    #[inline]
    pub(crate) fn alloc_copy(&self, key: &[u8]) -> (Node, usize) {
        let height = random_height(self.bits_per_level, self.height_cap);
        let node = Node::alloc(&self.arena, height, key.len(), self.stride);
        // SAFETY: the node was just allocated from our arena with room for
        // `key.len()` bytes and is unpublished; nothing else refers to it.
        let (dst, len) = unsafe { node.key_ptr() };
        debug_assert_eq!(len, key.len());
        // SAFETY: `dst` has `len` writable bytes that cannot overlap `key`
        // (fresh arena memory).
        unsafe { std::ptr::copy_nonoverlapping(key.as_ptr(), dst.as_ptr(), len) };
        (node, height)
    }

    /// Allocates a node for an entry of `len` bytes and lets `fill` write
    /// them, zeroed first, before the node can be reached by anyone else.
    #[inline]
    pub(crate) fn alloc_with(&self, len: usize, fill: impl FnOnce(&mut [u8])) -> (Node, usize) {
        let height = random_height(self.bits_per_level, self.height_cap);
        let node = Node::alloc(&self.arena, height, len, self.stride);
        // SAFETY: the node was just allocated from our arena, which outlives
        // the borrow of `self`, and is unpublished; nothing else refers to it.
        let (key, len) = unsafe { node.key_ptr() };
        // SAFETY: `key .. key + len` is the node's key area, inside its
        // allocation, and nothing else refers to it until the node is
        // linked, after `fill` returns; zeroing makes it initialised, so it
        // can be lent as `&mut [u8]`.
        let buf = unsafe {
            key.write_bytes(0, len);
            std::slice::from_raw_parts_mut(key.as_ptr(), len)
        };
        fill(buf);
        (node, height)
    }

    #[inline(always)]
    pub(crate) fn check_concurrent_mode(&self) {
        if self.single_writer {
            single_writer_mode();
        }
    }

    #[inline(always)]
    pub(crate) fn check_writer(&self, writer: &SingleWriter) {
        if writer.list_id != self.id {
            foreign("SingleWriter");
        }
    }
}

/// In a stale hint, the level after those sharing the node that proved the
/// bracket wrong (they are wrong too); or the top, to recompute all, when
/// partial fixes are off.
#[inline]
fn skip_level(
    nodes: &[Option<Node>; node::HEIGHT_LIMIT + 1],
    level: usize,
    max_height: usize,
    partial_fix: bool,
) -> usize {
    if !partial_fix {
        return max_height;
    }
    let bad = nodes[level];
    let mut level = level;
    while level < max_height && nodes[level] == bad {
        level += 1;
    }
    level
}

#[cold]
#[inline(never)]
fn single_writer_mode() -> ! {
    panic!(
        "skiplist: this list has a SingleWriter; insert through it (`SingleWriter::insert` or \
         `SingleWriter::insert_with`)"
    )
}

#[cold]
#[inline(never)]
pub(crate) fn foreign(what: &str) -> ! {
    panic!("skiplist: the {what} belongs to another SkipList")
}
