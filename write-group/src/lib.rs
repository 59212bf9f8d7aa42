//! Group commit for many threads writing to one log: a futex-based
//! leader/followers write queue with RocksDB's tree wake-up.
//!
//! # What it is
//!
//! Threads submit writes with [`WriteGroup::write`], or with
//! [`WriteGroup::write_in_place`], which borrows the item instead of moving
//! it in and out (the call for items larger than a few words). A writer
//! with no gather window that finds the queue idle takes the lead with one
//! CAS and no node; the others each push a node that lives on their own
//! stack onto a lock-free queue (one CAS), and the one that finds the queue
//! empty *leads*: it gathers the writers queued behind it into a group (up
//! to a byte cap, a member cap, and a compatibility predicate), runs the
//! group's shared step once for everyone ([`Commit::lead`]: in a storage
//! engine, assign sequence numbers, append one log record, `fdatasync`
//! once), then either applies every member's item itself or lets each
//! member apply its own in parallel ([`Commit::apply`]). The last member to
//! finish publishes the group ([`Commit::publish`]: the engine's visible
//! sequence number moves), hands leadership to the next queued writer and
//! wakes the members. Followers never take a lock: each waits on its own
//! `AtomicU32` state, first spinning, then yielding (RocksDB's adaptive
//! yield), then sleeping on it as a futex (`futex(2)` on Linux,
//! [`atomic-wait`](https://docs.rs/atomic-wait)'s calls on other
//! platforms).
//!
//! Large parallel groups are woken through a two-level tree (RocksDB PR
//! 12545): the leader wakes about `sqrt(n)` *callers*, each of which wakes
//! every `sqrt(n)`-th member after it, so no thread issues more than about
//! `2 * sqrt(n)` wake-ups.
//!
//! A writer that finds a short group running need not queue behind it:
//! unless it asked to gather ([`Commit::gather_window`], for writes whose
//! group step is expensive), it first watches the queue for a few
//! microseconds ([`Options::with_barge_spins`]) and, if the queue empties,
//! leads a group of its own, as a mutex lets a running thread barge in. Queueing
//! behind a 100-nanosecond group would cost a hand-off between cores per
//! write; a writer arriving during an `fdatasync` still queues and shares it.
//!
//! The same queue gives two more tools an engine needs:
//! [`WriteGroup::enter_unbatched`] waits for the writes before it and holds
//! off every group while, say, the memtable is switched; and
//! [`WriteGroup::stall`] holds new writes back (or fails the ones that asked
//! not to wait) while background work catches up.
//!
//! State that only the group step touches (the log file, its buffer, the
//! next sequence number) needs no lock of its own: a [`LeaderCell`] bound to
//! the write group hands `lead` a `&mut` to it on proof of leadership (the
//! `&mut GroupMembers` it is given, or an [`UnbatchedGuard`]). One leader
//! runs at a time and leadership passes with Release/Acquire, so a mutex
//! around such state would only add two uncontended atomic operations per
//! group.
//!
//! # When to use it
//!
//! When many threads write to something that serialises anyway and has a
//! large fixed cost per operation: a write-ahead log with `fdatasync`, a
//! single network connection, a file append. With one `fdatasync` per group
//! instead of one per write, throughput grows with the number of writers
//! until the device, not the sync, is the limit. It also helps, less, when
//! the per-write work is cheap: a group takes the shared cache lines once for
//! everyone.
//!
//! It does not help a single writer, nor writes that can proceed
//! independently (give each its own log). Callbacks run on other threads'
//! stacks and must not block on something only a queued writer can release.
//!
//! # Compared with the alternatives
//!
//! - **A plain `Mutex` around each write** (std or parking_lot): simplest,
//!   fastest when the critical section is tiny and there is no sync. With an
//!   `fdatasync` inside, every writer pays its own: throughput is one write
//!   per sync.
//! - **A `Mutex` + `Condvar` leader/follower**: the textbook group commit.
//!   It batches syncs, but every follower takes the mutex to enqueue and
//!   again to wake, and `notify_all` wakes the whole herd through one lock.
//!   Here joining is one CAS, each follower sleeps on its own word, and
//!   wake-ups go to exactly the threads that have something to do.
//! - **A channel feeding one writer thread** (agatedb's `do_writes`): batches
//!   naturally, but every write pays two thread hand-offs (to the writer
//!   thread and back) and the writer thread is one more thread to schedule;
//!   the leader here is whichever submitter arrived first, already running.
//! - **RocksDB's `WriteThread`**: what this crate follows (join by CAS,
//!   group limits, exclusion of incompatible writers, adaptive yield, tree
//!   wake-up, last finisher exits, stall, unbatched entry), minus RocksDB's
//!   two-queue pipelined write and unordered writes. It sleeps on a per-writer mutex and condvar; this
//!   crate sleeps on the state word itself, so a writer needs no lazy
//!   allocation and a wake-up is one syscall. It also adds what RocksDB
//!   lacks: a leader may wait, bounded and asleep, for the writers it
//!   expects before an expensive step ([`Commit::gather_window`]), so
//!   writers that each sync do not split into two cohorts that sync in turn.
//!   And its own pipelined mode ([`ApplyMode::Pipelined`]) lets a lone
//!   writer apply after handing leadership on, with publishes kept in
//!   order, without a second queue for memtable writers.
//!
//! # Example
//!
//! An append-only log whose groups share one "sync"; the log lives in a
//! [`LeaderCell`], since only leaders touch it:
//!
//! ```
//! use write_group::{Commit, GroupMembers, Lead, LeaderCell, Options, WriteGroup};
//!
//! struct Log {
//!     bytes: LeaderCell<Vec<u8>>,
//!     syncs: LeaderCell<usize>,
//! }
//!
//! impl Commit<Vec<u8>> for Log {
//!     type Token = ();
//!     type Error = std::io::ErrorKind;
//!
//!     fn size(&self, record: &Vec<u8>) -> usize {
//!         record.len()
//!     }
//!
//!     fn lead(&self, group: &mut GroupMembers<'_, Vec<u8>>) -> Result<Lead<()>, Self::Error> {
//!         let (bytes, members) = self.bytes.get_with_members(group);
//!         for record in members.iter() {
//!             bytes.extend_from_slice(record);
//!         }
//!         *self.syncs.get(group) += 1; // one sync for the whole group
//!         Ok(Lead::serial(()))
//!     }
//! }
//!
//! let group = WriteGroup::new(Options::default());
//! let log = Log { bytes: group.leader_cell(Vec::new()), syncs: group.leader_cell(0) };
//! std::thread::scope(|s| {
//!     for _ in 0..8 {
//!         s.spawn(|| {
//!             for _ in 0..50 {
//!                 group.write(&log, vec![7; 120]).unwrap();
//!             }
//!         });
//!     }
//! });
//! assert_eq!(log.bytes.into_inner().len(), 8 * 50 * 120);
//! assert!(log.syncs.into_inner() <= 8 * 50);
//! assert_eq!(group.stats().members, 8 * 50);
//! ```
//!
//! # Verification
//!
//! The protocol is checked by loom models (`tests/loom.rs`, futex waits
//! mapped to loom's park/unpark), by unit tests under miri, and by stress
//! tests (`tests/`); see the README for the commands.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod commit;
#[cfg(not(loom))]
mod futex;
mod gather;
mod group;
mod leader_cell;
mod members;
mod options;
mod stats;
mod sync;
mod waiter;

pub use commit::{ApplyMode, Commit, Lead, WriteError};
pub use group::{UnbatchedGuard, WriteGroup};
pub use leader_cell::LeaderCell;
pub use members::{GroupMembers, Iter, IterMut};
pub use options::{FanOut, Options};
pub use stats::{GROUP_SIZE_BUCKETS, Stats};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(all(test, not(loom)))]
mod tests;
