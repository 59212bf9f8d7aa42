//! A writer's node and its state machine, and how a writer waits.
//!
//! # States
//!
//! Each writer owns one `AtomicU32` state word, which is also its futex. The
//! word holds one of the states below, plus the [`SLEEPING`] bit while its
//! owner sleeps in `futex_wait` (whoever changes the state then wakes it).
//!
//! | state             | meaning                                          | set by                                   | next states                                      |
//! |-------------------|--------------------------------------------------|------------------------------------------|--------------------------------------------------|
//! | `WAITING`         | queued, waits for a role                         | the owner, before linking                | `LEADER`, `PARALLEL_WRITER`, `PARALLEL_CALLER`, `COMPLETED` |
//! | `LEADER`          | leads the next group (or holds an unbatched entry)| the previous group's exit, or a lone writer's unlock (a writer that finds the queue empty leads in state `WAITING`, or with no node at all) | `COMPLETED` (parallel group), or none: the leader finishes its own call |
//! | `PARALLEL_WRITER` | applies its own item in a parallel group         | the leader or a caller                   | `COMPLETED`                                      |
//! | `PARALLEL_CALLER` | wakes every stride-th member after it, then applies | the leader                            | `COMPLETED`                                      |
//! | `COMPLETED`       | done; the outcome is in the node                 | the group's exit, or a leader failing it for a stall | none: terminal, the owner returns and the node vanishes |
//!
//! `SLEEPING` is only ever added by the owner (a relaxed CAS from the state it
//! last saw) and only ever cleared by a waker's swap to the next state, so a
//! waker that sees it knows a `futex_wake` is needed and one that does not
//! knows the owner will re-check before sleeping. Every transition is a
//! single swap by a single waker: the protocol never has two threads racing
//! to move the same writer.
//!
//! # Waiting
//!
//! A writer waits in three phases, as RocksDB's `AwaitState` does: a bounded
//! spin (`spin_count` checks), then a yield phase of up to `max_yield_usec`
//! with slow-yield detection and a shared yield credit, then sleep on its
//! own futex. Unlike RocksDB, a wait for a role whose goal came only after
//! a slow yield (another thread ran) counts against the credit: with more
//! runnable threads than cores, a waiter that yields gets its role only
//! when its turn among them comes, while a sleeper is woken by it. Waits
//! for a parallel group to complete keep RocksDB's rule (see
//! `YieldCredit`). A writer with a gather window
//! ([`Commit::gather_window`](crate::Commit::gather_window)) expects the
//! group ahead of it to sync, and waits for its role asleep from the start.
//! Under loom the spin yields to the model and the yield phase is compiled
//! out (it depends on wall-clock time).
//!
//! Before any of this, before it even queues, a writer without a gather
//! window may watch a running group end and lead at once instead
//! ([`Options::with_barge_spins`](crate::Options::with_barge_spins)); it is in no
//! state then, since it is not linked yet.
//!
//! # A lone writer has no node
//!
//! A writer without a gather window that finds the queue idle puts a marker
//! (the write group's own address, never dereferenced) at the queue head
//! instead of a node, and leads a group of one with its item where it is:
//! a lock is one CAS, an unlock another. Writers that arrive meanwhile link
//! onto the marker as onto any leader; the lone writer's unlock CAS then
//! fails, and it walks to the oldest of them, clears that writer's link to
//! the marker and sets it `LEADER`. The marker is therefore never a state,
//! only a head and a `link_older` value that no walk follows: a leader's
//! walks end at itself, and the oldest writer's link is cleared before it
//! leads.

use crate::sync::{AtomicPtr, OwnedFutex, UnsafeCell};

/// Queued, waiting for a role.
pub(crate) const WAITING: u32 = 1;
/// Leads the next group (or holds an unbatched entry).
pub(crate) const LEADER: u32 = 1 << 1;
/// Applies its own item in a parallel group.
pub(crate) const PARALLEL_WRITER: u32 = 1 << 2;
/// Wakes every stride-th member after it, then applies its own item.
pub(crate) const PARALLEL_CALLER: u32 = 1 << 3;
/// Done: the outcome is in the node. Terminal.
pub(crate) const COMPLETED: u32 = 1 << 4;
/// Set on top of the state while the owner sleeps on the futex.
pub(crate) const SLEEPING: u32 = 1 << 8;

/// The states a queued writer waits for.
pub(crate) const JOIN_GOALS: u32 = LEADER | PARALLEL_WRITER | PARALLEL_CALLER | COMPLETED;

/// The type-independent part of a writer's node: everything the queue and a
/// group's leader touch. It is the first field of a `#[repr(C)]` node, so a
/// pointer to it is also a pointer to the node.
///
/// Links are atomics for loom's and miri's sake, accessed with relaxed
/// ordering: a writer's `link_older` is written by its owner before the
/// Release CAS that links it, and from then on links are only read and
/// written by the leader of the moment, whose leadership is handed over with
/// Release/Acquire.
#[derive(Debug)]
pub(crate) struct Waiter<T> {
    /// The state word (see the module's table), which is also the futex.
    pub(crate) futex: OwnedFutex,
    /// The next older writer in the queue (null for the oldest; the lone
    /// marker while the oldest waits for a lone writer's hand-off).
    pub(crate) link_older: AtomicPtr<Waiter<T>>,
    /// The next newer writer, filled in lazily by leaders (null until then,
    /// and for the newest).
    pub(crate) link_newer: AtomicPtr<Waiter<T>>,
    /// The work item, which stays in its submitter's frame (borrowed for
    /// the write, so live while the waiter is queued): a writer's item is
    /// never moved, however large. Null in an unbatched entry. In a cell so
    /// that loom checks every access to the item through it (`with` for a
    /// shared access, `with_mut` for a mutable one).
    pub(crate) item: UnsafeCell<*mut T>,
    /// The item's size for the group's byte cap.
    pub(crate) size: usize,
    /// Fail rather than wait when the group is stalled.
    pub(crate) no_slowdown: bool,
    /// An unbatched entry: never grouped, stops a group from growing past it.
    pub(crate) unbatched: bool,
}

impl<T> Waiter<T> {
    /// A waiter in state `WAITING`, owned by the calling thread; `item` is
    /// null exactly when `unbatched`.
    #[inline]
    pub(crate) fn new(item: *mut T, size: usize, no_slowdown: bool, unbatched: bool) -> Self {
        Self {
            futex: OwnedFutex::new(WAITING),
            link_older: AtomicPtr::new(std::ptr::null_mut()),
            link_newer: AtomicPtr::new(std::ptr::null_mut()),
            item: UnsafeCell::new(item),
            size,
            no_slowdown,
            unbatched,
        }
    }
}

/// A shared estimate of whether yielding tends to end a wait in time
/// (RocksDB's yield credit): positive when recent yield phases succeeded.
///
/// It is a heuristic, not part of the protocol: a std atomic in both builds,
/// updated with a plain load and store (a lost update only delays the
/// estimate).
#[derive(Debug, Default)]
#[cfg_attr(loom, allow(dead_code))] // no yield phase under loom
pub(crate) struct YieldCredit {
    credit: std::sync::atomic::AtomicI32,
    /// Whether a phase whose goal came only after a slow yield counts as a
    /// failure; see [`YieldCredit::for_roles`].
    slow_yield_fails: bool,
}

impl YieldCredit {
    /// The credit of waits for a role. A writer waiting for its role waits
    /// for one thread, the leader, to hand it on; with more runnable threads
    /// than cores, a slow yield lets in writers that only queue and yield
    /// behind it, and a yielding waiter stays runnable, so the role reaches it
    /// only when its turn among them comes, while a sleeping one is woken by
    /// the hand-off itself. So a phase whose goal came only after a slow yield
    /// counts as a failure: with 64 writers on 2 cores, phases that
    /// "succeeded" that way kept the credit up and writes ran at a quarter
    /// of a per-write mutex's rate (`benches/results/write-group/2026-12-05.md`).
    pub(crate) fn for_roles() -> Self {
        Self {
            credit: std::sync::atomic::AtomicI32::new(0),
            slow_yield_fails: true,
        }
    }

    /// The credit of parallel members waiting for their group to complete,
    /// RocksDB's rule: a phase fails only on its third slow yield. Such a
    /// member waits for the other members' applies, which need the very
    /// cores its yields hand over, so a slow yield there is not wasted; and
    /// the synced parallel groups, where these waits matter, are measured
    /// with it.
    pub(crate) fn for_completion() -> Self {
        Self::default()
    }
}

#[cfg(not(loom))]
impl YieldCredit {
    /// One sample's weight; the credit decays by 1/1024 per sample, so it
    /// stays within `±1024 * STEP` (2^27).
    const STEP: i32 = 1 << 17;

    /// Whether the credit says a yield phase is worth trying.
    #[inline]
    pub(crate) fn favourable(&self) -> bool {
        // Relaxed: a heuristic; any recent value will do.
        self.credit.load(std::sync::atomic::Ordering::Relaxed) >= 0
    }

    /// Whether a phase whose goal came only after a slow yield failed.
    #[inline]
    pub(crate) fn slow_yield_fails(&self) -> bool {
        self.slow_yield_fails
    }

    /// Records one yield phase's outcome.
    pub(crate) fn record(&self, succeeded: bool) {
        use std::sync::atomic::Ordering::Relaxed;
        // Relaxed: a heuristic; a lost update only delays the estimate.
        let credit = self.credit.load(Relaxed);
        let step = if succeeded { Self::STEP } else { -Self::STEP };
        self.credit.store(credit - credit / 1024 + step, Relaxed);
    }

    /// True once in 256 calls on average (per thread): such waits try the
    /// yield phase whatever the credit says, and update it.
    #[inline]
    pub(crate) fn sample() -> bool {
        use std::cell::Cell;
        thread_local! {
            static STATE: Cell<u32> = const { Cell::new(0) };
        }
        STATE.with(|state| {
            let mut x = state.get();
            if x == 0 {
                // Seed from the thread-local's address: distinct per thread.
                x = (state as *const Cell<u32>).addr() as u32 | 1;
            }
            // xorshift32
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            state.set(x);
            x & 0xff == 0
        })
    }
}

/// How many busy-wait hints a barging writer lets pass before its first
/// look at a busy queue, shared by every writer of a group and adapted to
/// what first looks find: doubled when the queue is still busy, halved when
/// it has emptied, so it settles where a first look finds it empty about half
/// the time.
///
/// A group that ends for good (the writer that led it goes on to other work)
/// keeps the pace short, and a watcher leads soon after. A queue that stays
/// busy because its writers submit back to back (no work between writes, as
/// in a microbenchmark) drives the pace up: there, each early look that
/// caught the gap between two writes moved the queue, the log and every
/// other line a group touches to the watcher's core, and the writer it
/// displaced became a watcher in turn, so two cores traded those lines on
/// nearly every write.
///
/// A heuristic, not part of the protocol: a std atomic in both builds,
/// updated with a plain load and store (a lost update only delays the pace).
#[derive(Debug)]
pub(crate) struct FirstLook(std::sync::atomic::AtomicU32);

impl FirstLook {
    /// The shortest pace: look after one hint.
    pub(crate) const MIN: u32 = 1;
    /// The longest pace: a quarter of the default barging budget
    /// ([`Options::with_barge_spins`](crate::Options::with_barge_spins)).
    pub(crate) const MAX: u32 = 64;

    /// The hints to let pass before the first look.
    #[inline]
    pub(crate) fn hints(&self) -> u32 {
        // Relaxed: a heuristic; any recent value will do.
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Records what a first look after `hints` hints found.
    #[inline]
    pub(crate) fn record(&self, hints: u32, found_busy: bool) {
        let next = if found_busy {
            hints.saturating_mul(2).min(Self::MAX)
        } else {
            (hints / 2).max(Self::MIN)
        };
        // Relaxed: as in `hints`; a lost update only delays the pace.
        self.0.store(next, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Default for FirstLook {
    fn default() -> Self {
        Self(std::sync::atomic::AtomicU32::new(Self::MIN))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn credit_turns_negative_after_failures_and_back_after_successes() {
        let credit = YieldCredit::default();
        assert!(credit.favourable());
        for _ in 0..4 {
            credit.record(false);
        }
        assert!(!credit.favourable());
        for _ in 0..8 {
            credit.record(true);
        }
        assert!(credit.favourable());
        for _ in 0..if cfg!(miri) { 3_000 } else { 100_000 } {
            credit.record(true);
        }
        let bound = 1024 * YieldCredit::STEP;
        // Relaxed: the threads were joined.
        assert!(credit.credit.load(std::sync::atomic::Ordering::Relaxed) <= bound);
    }

    #[test]
    fn first_look_doubles_while_busy_and_halves_once_empty_within_bounds() {
        let pace = FirstLook::default();
        assert_eq!(pace.hints(), FirstLook::MIN);
        let mut seen = Vec::new();
        for _ in 0..10 {
            pace.record(pace.hints(), true);
            seen.push(pace.hints());
        }
        assert_eq!(seen, [2, 4, 8, 16, 32, 64, 64, 64, 64, 64]);
        pace.record(pace.hints(), false);
        assert_eq!(pace.hints(), 32);
        for _ in 0..10 {
            pace.record(pace.hints(), false);
        }
        assert_eq!(pace.hints(), FirstLook::MIN);
        // Alternating outcomes hold the pace where it is, give or take one step.
        pace.record(16, true);
        for _ in 0..5 {
            pace.record(pace.hints(), false);
            assert_eq!(pace.hints(), 16);
            pace.record(pace.hints(), true);
            assert_eq!(pace.hints(), 32);
        }
    }

    #[test]
    fn sampling_hits_about_one_in_256() {
        let hits = (0..256 * 64).filter(|_| YieldCredit::sample()).count();
        assert!((16..=256).contains(&hits), "{hits} hits in {}", 256 * 64);
    }
}
