//! The lock-free list of large batches: a batch of [`MIN_LISTED_BATCH`]
//! entries or more is published by pushing its writer's buffer onto the list
//! with one CAS, and the readers' sort walks or takes the list.

use crate::entry::Entry;
use crate::sync::{AtomicPtr, AtomicUsize, Ordering, UnsafeCell};
use crate::{Comparator, Shared, VecMem, write_after_freeze};

/// Batches of at least this many entries are published without a lock:
/// the writer's buffer becomes a node of a lock-free list with one CAS.
/// Under the one shared lock small batches once took, waiters that fell
/// asleep had to be woken one hand-off at a time, and batches of 100
/// stopped scaling with more threads (measurements in
/// `benches/results/vecmem/2026-12-04.md`). Smaller batches and single
/// entries go to the thread's write lane: a node apiece would cost them
/// more than it saves. (2 under loom, so that its models, with their
/// two-entry batches, take the list.)
pub(crate) const MIN_LISTED_BATCH: usize = if cfg!(loom) { 2 } else { 16 };

/// The low bit of the listed batches' head: the memtable is read-only and
/// the list takes no more batches. Nodes are at least 8-aligned.
pub(crate) const FROZEN: usize = 1;

/// Large batches, newest first; see [`MIN_LISTED_BATCH`].
pub(crate) struct ListedBatches {
    /// The newest node, with [`FROZEN`] as a tag. A node is freed only under
    /// the write lock (when a read-only memtable is sorted) or on drop, so
    /// readers that hold the read lock can walk the list.
    pub(crate) head: AtomicPtr<BatchNode>,
    /// Entries in the listed batches.
    pub(crate) entries: AtomicUsize,
    /// Bytes their buffers and nodes reserve.
    pub(crate) bytes: AtomicUsize,
}

/// A published batch: its writer's buffer, moved in whole. Immutable from
/// its publication until the memtable is sorted or dropped.
pub(crate) struct BatchNode {
    entries: UnsafeCell<Vec<Entry>>,
    /// The batch published before this one (null for the first); written
    /// once, before the node is published.
    older: UnsafeCell<*mut BatchNode>,
}

impl<C: Comparator> VecMem<C> {
    /// Publishes a batch of at least [`MIN_LISTED_BATCH`] entries by pushing
    /// its buffer onto the lock-free list: one CAS, no waiting.
    #[inline(never)]
    pub(crate) fn push_batch(&self, entries: Vec<Entry>) {
        let (count, bytes) = (
            entries.len(),
            entries.capacity() * size_of::<Entry>() + size_of::<BatchNode>(),
        );
        let node = Box::into_raw(Box::new(BatchNode {
            entries: UnsafeCell::new(entries),
            older: UnsafeCell::new(std::ptr::null_mut()),
        }));
        // Relaxed: the value only becomes the node's link, published by the
        // CAS below.
        let mut head = self.listed.head.load(Ordering::Relaxed);
        loop {
            if head.addr() & FROZEN != 0 {
                // SAFETY: `node` came from `Box::into_raw` above and was
                // never published.
                drop(unsafe { Box::from_raw(node) });
                write_after_freeze();
            }
            // SAFETY: `node` is this thread's alone until the CAS succeeds.
            unsafe { (*node).older.with_mut(|older| *older = head) };
            // Release (success): publishes the node (its entries and link)
            // to readers that acquire the head; every successful CAS on the
            // head also continues the release sequences of the older pushes,
            // so those readers see the whole list. Relaxed (failure): the
            // value is only the next attempt's link.
            match self.listed.head.compare_exchange_weak(
                head,
                node,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => head = now,
            }
        }
        // Release: see `len`; the increment follows the push.
        self.listed.entries.fetch_add(count, Ordering::Release);
        // Relaxed: a statistic, ordered against nothing.
        self.listed.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Calls `each` on every listed batch, newest first. The caller holds
    /// the read or the write lock, so no node is freed meanwhile.
    pub(crate) fn for_each_listed_batch(&self, _locked: &Shared, mut each: impl FnMut(&[Entry])) {
        // Acquire: pairs with the pushes' release CAS; see `push_batch`.
        let mut node = self
            .listed
            .head
            .load(Ordering::Acquire)
            .map_addr(|addr| addr & !FROZEN);
        while !node.is_null() {
            // SAFETY: a listed node stays allocated and unchanged until it
            // is freed under the write lock or on drop, and the caller holds
            // the lock (`_locked` is borrowed from its guard).
            let batch = unsafe { &*node };
            batch.entries.with(|entries| {
                // SAFETY: a published node's fields are never written again,
                // and the node is not freed while the caller holds the lock.
                each(unsafe { &*entries });
            });
            // SAFETY: as above.
            node = batch.older.with(|older| unsafe { *older });
        }
    }

    /// Unlinks the whole list (leaving only the tag) and hands each node's
    /// entries to `each`, freeing the nodes.
    ///
    /// # Safety
    ///
    /// The caller holds the write lock or `&mut self`: no reader walks the
    /// list meanwhile (readers hold the read lock).
    pub(crate) unsafe fn take_listed_batches(&self, mut each: impl FnMut(Vec<Entry>)) {
        // Acquire: as in `for_each_listed_batch`, and the nodes are freed
        // here. The tag stays, so no push gets in after.
        let mut node = self
            .listed
            .head
            .swap(std::ptr::without_provenance_mut(FROZEN), Ordering::Acquire)
            .map_addr(|addr| addr & !FROZEN);
        while !node.is_null() {
            // SAFETY: the node was pushed through `Box::into_raw`; the list
            // is unlinked above, and no reader walks it (the caller's
            // contract), so nothing else can reach the node.
            let batch = unsafe { Box::from_raw(node) };
            // SAFETY: the node is this thread's alone now (above).
            node = batch.older.with(|older| unsafe { *older });
            each(batch.entries.into_inner());
        }
    }
}
