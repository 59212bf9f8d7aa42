//! Reserve ranges of sequence numbers with one atomic step, finish them in
//! any order, publish them in order.
//!
//! # What it is
//!
//! A [`Sequencer`] is the ordered-completion tracker of MySQL 8.0's
//! lock-free redo log (its `Link_buf`), for any work numbered in sequence.
//! Writers [`reserve`](Sequencer::reserve) a range of numbers with one
//! compare-and-swap, do their work concurrently (insert into a concurrent
//! memtable, copy into a log buffer), and [`finish`](Sequencer::finish) the
//! range. With [`reserve_with_bytes`](Sequencer::reserve_with_bytes) the
//! same compare-and-swap also takes a range of bytes, in sequence order:
//! writers that copy records into one log buffer at those bytes fill it in
//! sequence order without a lock. The [published](Sequencer::published)
//! position is the end of the
//! longest finished prefix: it never passes a range that is still being
//! worked on, so a reader that stops at it never sees half of anybody's
//! work, and everything before it is complete. A writer that must see its
//! own work published (read-your-writes) [waits](Sequencer::wait_published)
//! for the position, spinning, then yielding (for up to 100 us, less once
//! its yields turn slow: other threads want the cores), then asleep. A
//! finisher wakes only the sleepers whose position it published, and
//! takes them off the list as it does: with more threads than cores, a
//! woken thread may wait milliseconds for a core, and the moves meanwhile
//! cost a load, not a wake-up call each.
//!
//! Finishing stores the range's end in a ring slot named after its start;
//! whoever finishes the range at the published position moves the position
//! over every contiguous finished range after it. No thread waits for
//! another to finish unless it asked to, and no lock is taken unless a
//! thread sleeps. [`close`](Sequencer::close) holds new reservations off
//! until every reserved range is finished: the moment for work no range may
//! overlap (an engine switching the memtable its writers insert into).
//!
//! Two more types share the ring:
//! - a [`Tracker`] is the publishing half alone, for positions numbered
//!   elsewhere (how far a log is written, how far it is synced), with the
//!   same waits;
//! - an [`OrderedQueue`] takes items posted under ranges in any order and
//!   hands them out in range order to one drainer at a time: the combining
//!   writer of a log that many threads fill (each posts its record, whoever
//!   finds the drain free writes everything posted, in order, with one
//!   call). With `drain`, a drainer looks again after letting go, so nothing
//!   is left behind; with `drain_until`, each poster waits until its own
//!   item is taken and drains itself when it finds the drain free, so no
//!   drainer keeps writing for threads that arrive while it drains. With
//!   `drain_until_skipping`, ranges nobody posted count as skipped once the
//!   sequencer has finished them, so writes that skip the log never touch
//!   the queue.
//!
//! # When to use it
//!
//! When many threads produce work that must become visible in a global
//! order, and the work itself can run in parallel: log and memtable inserts
//! of a storage engine (RocksDB's `unordered_write` gives the ordering up;
//! its pipelined write keeps a leader hand-over; this keeps the order
//! without one). When the work itself must run in order, use a lock or a
//! group commit (this workspace's `write-group` crate) instead: here it is
//! the publication, not the work, that is ordered.
//!
//! | | ordered-publish | `Mutex<u64>` counter | write-group |
//! |---|---|---|---|
//! | reserving | one compare-and-swap | lock, add, unlock | join a queue |
//! | the work | concurrent | inside the lock | by the leader, or by members in parallel |
//! | publication | in order, by whoever finishes the first range | at unlock | in group order, after a hand-over |
//! | waiting | only for what one asks to see | for the lock | for the group |
//!
//! # Example
//!
//! ```
//! use ordered_publish::Sequencer;
//! use std::sync::Mutex;
//!
//! let seq = Sequencer::new(1, 1024);
//! let log = Mutex::new(Vec::new());
//! std::thread::scope(|s| {
//!     for t in 0..4u64 {
//!         let (seq, log) = (&seq, &log);
//!         s.spawn(move || {
//!             for _ in 0..100 {
//!                 let range = seq.reserve(1);
//!                 log.lock().unwrap().push((range.start, t)); // the work, any order
//!                 seq.finish(range.clone());
//!                 seq.wait_published(range.end); // see our own write
//!             }
//!         });
//!     }
//! });
//! assert_eq!(seq.published(), 401);
//! assert_eq!(log.into_inner().unwrap().len(), 400);
//! ```
//!
//! # Verification
//!
//! - loom models (`tests/loom.rs`, `LOOM_MAX_PREEMPTIONS=2`; waiters sleep
//!   at once there, without spinning first) of finishing in any order with
//!   the work published, sleeping waiters (one, and two for different
//!   positions), closing around a switch, a full ring, bytes reserved in
//!   sequence order across a restart, and posting and draining all three
//!   ways. They fail if any of these goes: `finish`'s fence, the drain's
//!   fence or its second look, `drain_until`'s wake-up after letting go,
//!   the skipping drain's skip or its sleep on the sequencer's bell, either
//!   fence between a sleeper and its waker, a sleeper's position on the
//!   list or its return to it; or if a move wakes only the sleepers below
//!   it, or the bell keeps the highest position sleepers wait for instead
//!   of the lowest. They caught an ordering bug in the ring.
//! - miri on the unit tests (the queue's `unsafe` boxes).
//! - A stress test checking that no thread ever sees the published
//!   position pass unfinished work (`tests/stress.rs`, also under
//!   ThreadSanitizer).

mod queue;
mod sequencer;
mod sync;
mod tracker;
mod wait_stats;

pub use queue::OrderedQueue;
pub use sequencer::{Closed, SEQUENCE_LIMIT, Sequencer};
pub use tracker::Tracker;
pub use wait_stats::WaitStats;

#[cfg(test)]
mod tests;

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
