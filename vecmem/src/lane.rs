//! Write lanes: where small batches and single entries are published.
//!
//! A memtable holds a power-of-two number of lanes, each a small lock around
//! a vector of entries, on a cache line of its own. A thread appends to the
//! lane its index picks (the index is the thread's, the same for every
//! memtable, masked by each memtable's lane count), so threads that write
//! at the same time lock and write different lines: no lock, counter or
//! vector is shared between them per batch.
//!
//! Indexes are handed out round-robin, once per thread, from one global
//! counter. Two threads can still meet on a lane (more threads than lanes,
//! or a reader copying the lane); the one whose `try_lock` fails draws a
//! new index for good, as the arena's shards do, then waits for the lock of
//! its new lane. Every lane is behind its lock, so a shared lane costs
//! speed, never correctness.

use crate::entry::Entry;
use crate::sync::{AtomicUsize, Mutex};

/// One lane; see the module docs.
pub(crate) struct Lane {
    /// The entries published through this lane, in the order they came
    /// (emptied when a frozen memtable's first reader moves them into the
    /// sorted vector).
    pub(crate) entries: Mutex<Vec<Entry>>,
    /// Entries ever published through this lane: a copy of `entries`'
    /// length, stored (release) under the lock after each append, so that
    /// it never goes backwards; kept when the entries move out.
    pub(crate) count: AtomicUsize,
    /// Bytes `entries` reserves (capacity × entry size), stored under the
    /// lock; 0 once its entries have moved out.
    pub(crate) bytes: AtomicUsize,
}

impl Lane {
    pub(crate) fn new() -> Self {
        Self {
            entries: Mutex::new(Vec::new()),
            count: AtomicUsize::new(0),
            bytes: AtomicUsize::new(0),
        }
    }
}

/// How many lanes a memtable gets: a power of two, at least 8 and at least
/// twice the CPUs, so that threads that run at once rarely share one. A
/// fixed 2 under loom, so that models do not depend on the machine and one
/// model can put two threads on one lane or on two.
pub(crate) fn lane_count() -> usize {
    #[cfg(loom)]
    {
        2
    }
    #[cfg(not(loom))]
    {
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        cpus.saturating_mul(2).max(8).next_power_of_two()
    }
}

/// This thread's lane index (unmasked; the caller masks it by its lane
/// count). The first call on a thread draws it from the global counter.
#[cfg(not(loom))]
#[inline(always)]
pub(crate) fn index() -> usize {
    // `try_with` fails only while the thread's locals are being destroyed:
    // any index is correct, lane 0 will do.
    INDEX
        .try_with(|index| match index.get() {
            UNASSIGNED => assign(index),
            assigned => assigned,
        })
        .unwrap_or(0)
}

/// Gives up `old` (whose lane's `try_lock` failed) for good and returns the
/// thread's new index, which lands on another lane of a memtable of
/// `mask + 1` lanes.
#[cfg(not(loom))]
#[cold]
#[inline(never)]
pub(crate) fn repick(old: usize, mask: usize) -> usize {
    let mut new = draw();
    if new & mask == old & mask {
        new = (new + 1) & !UNASSIGNED;
    }
    let _ = INDEX.try_with(|index| index.set(new));
    new
}

/// An index no thread has: the top bit is never set in a drawn one.
#[cfg(not(loom))]
const UNASSIGNED: usize = 1 << (usize::BITS - 1);

#[cfg(not(loom))]
std::thread_local! {
    static INDEX: std::cell::Cell<usize> = const { std::cell::Cell::new(UNASSIGNED) };
}

#[cfg(not(loom))]
#[cold]
#[inline(never)]
fn assign(index: &std::cell::Cell<usize>) -> usize {
    let new = draw();
    index.set(new);
    new
}

/// The next index of the round-robin, below [`UNASSIGNED`].
#[cfg(not(loom))]
fn draw() -> usize {
    // Not the crate's `sync` atomics: a process-wide counter that loom
    // never sees (the loom build has no counter, see `mock_lane`).
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    // Relaxed: only distinct values matter; the counter orders nothing.
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) & !UNASSIGNED
}

#[cfg(loom)]
loom::thread_local! {
    static INDEX: std::cell::Cell<usize> = std::cell::Cell::new(0);
}

/// Under loom every thread starts on lane 0 (a global counter would differ
/// between the executions of a model); [`mock_lane`] moves it.
#[cfg(loom)]
pub(crate) fn index() -> usize {
    INDEX.with(std::cell::Cell::get)
}

/// Under loom a thread whose `try_lock` failed moves to the next lane.
#[cfg(loom)]
pub(crate) fn repick(old: usize, _mask: usize) -> usize {
    let new = old.wrapping_add(1);
    INDEX.with(|index| index.set(new));
    new
}

/// Loom only: puts the calling (loom) thread on lane `index` (masked by each
/// memtable's lane count, 2 under loom) from now on.
///
/// # Examples
///
/// ```ignore
/// loom::model(|| {
///     vecmem::mock_lane(1);
/// });
/// ```
#[cfg(loom)]
pub fn mock_lane(index: usize) {
    INDEX.with(|cell| cell.set(index));
}
