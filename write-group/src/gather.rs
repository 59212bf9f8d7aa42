//! A leader's bounded wait for more writers before it seals its group
//! ([`Commit::gather_window`](crate::Commit::gather_window)).
//!
//! Without it, `n` writers that each pay for an expensive shared step settle
//! into two cohorts: while one group syncs, the other half queue, and when
//! the sync ends the first queued writer leads at once, before the writers
//! it just woke are back. Each cohort pays a sync. Waiting, asleep, until
//! the woken writers have queued again merges the cohorts into one group per
//! sync.
//!
//! How many writers to wait for is learned, not configured: the larger of
//! the writers with a window in flight right now (queued, in a group, or
//! just woken and not yet returned) and the number the previous wait ended
//! with. A wait that times out lowers the count to what it saw, so a writer
//! that stopped writing costs one window, once.
//!
//! | step | leader | joiner |
//! |---|---|---|
//! | 1 | counts the queue; enough, or alone: seals | pushes itself (one CAS) |
//! | 2 | publishes its thread, sets `waiting` | |
//! | 3 | stores how many joiners are `missing`, `SeqCst` fence | `SeqCst` fence |
//! | 4 | recounts; enough or past the window: clears `waiting`, seals; more than before: back to 3 | reads `waiting`; if set, takes one from `missing` |
//! | 5 | yields its time slice, or once the yield budget is spent parks until the window ends or a joiner unparks it; back to 3 | took the last one: unparks the leader |
//!
//! The two fences make step 3 and step 4 a Dekker handshake: the joiner
//! takes its share of the `missing` the leader stored, or the leader's
//! recount sees the joiner. So the last joiner the leader waits for wakes
//! it, and the others do not: at 32 writers waking the leader for every
//! joiner cost a context switch each, on the cores the writers about to
//! join needed. A joiner may also both be counted and take a share; the
//! leader then wakes early, recounts and parks again. A missed wake-up
//! would only cost the rest of the window, never correctness: the group is
//! formed from the queue as it stands when the leader stops waiting.
//! Joiners without a window of their own count in the recount as well, so
//! they take a share too; they peek at `waiting` before the fence (see
//! `Gathering::joined`).
//!
//! The leader yields before it parks, for at most `Options::max_yield_usec`
//! (100 µs by default) of the window: while the writers it waits for are
//! being woken and come back, the cores have runnable threads, so a yield
//! hands its slice to one of them and costs no context switch back, while a
//! park costs one out and one in on the path between two syncs. It shortens
//! the gap from one lead step's end to the next one's start, and the CPU
//! spent per write (measurements in
//! `benches/results/write-group/2026-12-04.md`, "A gathering leader yields
//! before it parks"). The yield phase is bounded like every other wait's: a
//! leader whose writers do not come burns at most that budget, then sleeps.
//!
//! Under loom the leader recounts twice with a yield between, and joiners
//! wake nobody: the model checks the walk over a queue that grows while it
//! is read, not timing.

// The counters and the flag are std atomics even under loom, like the
// statistics: they steer how long a leader waits, never what it may touch.
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;
#[cfg(not(loom))]
use std::sync::atomic::{AtomicBool, Ordering::SeqCst, fence};
use std::time::Duration;

use crossbeam_utils::CachePadded;

/// What a count of the queue found.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Queued {
    /// Writers queued, the leader included.
    pub(crate) writers: usize,
    /// Someone queued who should not be kept waiting: an unbatched entry
    /// (a memtable switch) or a stall.
    pub(crate) urgent: bool,
}

/// How a leader's wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Waited {
    /// It did not wait: alone, already enough writers, or someone urgent.
    No,
    /// Enough writers came (or someone urgent) before the window ended.
    Gathered,
    /// The window ended first.
    TimedOut,
}

/// The shared state of gathering, one per write group.
#[derive(Debug, Default)]
pub(crate) struct Gathering {
    /// Writers with a window between their entry and their return. Relaxed
    /// throughout: a stale value changes how long a leader waits, within its
    /// window, and nothing else.
    in_flight: CachePadded<AtomicUsize>,
    /// The count the previous wait ended with. Only leaders touch it, and
    /// leadership passes with Release/Acquire, so Relaxed suffices.
    learned: AtomicUsize,
    /// Set while a leader waits; joiners then take their share of
    /// `missing`.
    #[cfg(not(loom))]
    waiting: AtomicBool,
    /// While a leader waits: how many more joiners it waits for. A joiner
    /// that sees `waiting` takes one, and the one that takes
    /// the last wakes the leader; later ones wrap it below zero, harmlessly
    /// (the leader stores it afresh before each recount). Relaxed: ordered
    /// by the handshake's fences.
    #[cfg(not(loom))]
    missing: AtomicUsize,
    /// The waiting leader's thread.
    #[cfg(not(loom))]
    sleeper: std::sync::Mutex<Option<std::thread::Thread>>,
}

impl Gathering {
    /// A writer with a window enters.
    #[inline]
    pub(crate) fn enter(&self) {
        // Relaxed: see `in_flight`.
        self.in_flight.fetch_add(1, Relaxed);
    }

    /// A writer with a window returns.
    #[inline]
    pub(crate) fn leave(&self) {
        // Relaxed: see `in_flight`.
        self.in_flight.fetch_sub(1, Relaxed);
    }

    /// A writer has queued behind a leader: takes its share of what a
    /// waiting leader misses, and wakes it if it was the last.
    ///
    /// Writers without a window count in the leader's recount too, so they
    /// take a share as well, or a wait that they complete would sleep on to
    /// the end of its window. They peek at `waiting` before the fence: a
    /// writer that never gathers then pays one relaxed load, and one that
    /// misses a wait which just began costs at most the rest of that window
    /// (before this count, writers without a window never woke a leader).
    #[inline]
    pub(crate) fn joined(&self, has_window: bool) {
        #[cfg(not(loom))]
        {
            // Relaxed: a peek; the fence and the load below decide.
            if !has_window && !self.waiting.load(Relaxed) {
                return;
            }
            // SeqCst fence: the joiner's half of the handshake in the module
            // docs, ordering our push before the read of `waiting`.
            fence(SeqCst);
            // Relaxed (both): ordered by the fence above.
            if self.waiting.load(Relaxed) && self.missing.fetch_sub(1, Relaxed) == 1 {
                self.wake_leader();
            }
        }
        #[cfg(loom)]
        let _ = has_window;
    }

    #[cfg(not(loom))]
    #[cold]
    fn wake_leader(&self) {
        let sleeper = self.sleeper.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(thread) = sleeper.as_ref() {
            thread.unpark();
        }
    }

    /// The leader's wait: returns once `count` finds as many writers as were
    /// recently in flight (at most `max_members`), someone urgent, or when
    /// `window` has passed. `count` walks the queue.
    #[cold]
    pub(crate) fn wait_for_writers(
        &self,
        window: Duration,
        yield_for: Duration,
        max_members: usize,
        mut count: impl FnMut() -> Queued,
    ) -> Waited {
        // Relaxed: see the fields.
        let wanted = self
            .in_flight
            .load(Relaxed)
            .max(self.learned.load(Relaxed))
            .min(max_members);
        let first = count();
        if wanted <= 1 || first.writers >= wanted || first.urgent {
            self.learned.store(first.writers, Relaxed);
            return Waited::No;
        }
        let (waited, last) =
            self.sleep_until_counted(window, yield_for, wanted, first.writers, &mut count);
        // Relaxed: see `learned`.
        self.learned.store(last.writers, Relaxed);
        waited
    }

    /// Recounts until `wanted` writers or someone urgent are queued,
    /// yielding in between for up to `yield_for` and sleeping after that,
    /// for at most `window`.
    #[cfg(not(loom))]
    fn sleep_until_counted(
        &self,
        window: Duration,
        yield_for: Duration,
        wanted: usize,
        first: usize,
        count: &mut impl FnMut() -> Queued,
    ) -> (Waited, Queued) {
        use std::time::Instant;

        let start = Instant::now();
        let deadline = start + window;
        let yield_until = start + yield_for.min(window);
        *self.sleeper.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::thread::current());
        // Relaxed: the fence below orders it before the recount.
        self.waiting.store(true, Relaxed);
        let mut counted = first;
        let outcome = loop {
            // Relaxed store, then the SeqCst fence: the leader's half of the
            // handshake, ordering the count of joiners still missing before
            // the recount's read of the head.
            self.missing.store(wanted - counted, Relaxed);
            fence(SeqCst);
            let queued = count();
            if queued.writers >= wanted || queued.urgent {
                break (Waited::Gathered, queued);
            }
            if queued.writers != counted {
                // Writers joined since `missing` was set, and some of them
                // may not take their share of it: set it again first.
                counted = queued.writers;
                continue;
            }
            let now = Instant::now();
            if now >= deadline {
                break (Waited::TimedOut, queued);
            }
            if now < yield_until {
                std::thread::yield_now();
            } else {
                std::thread::park_timeout(deadline - now);
            }
        };
        // Relaxed: a joiner that still sees the flag only unparks us
        // spuriously, which `park` allows.
        self.waiting.store(false, Relaxed);
        *self.sleeper.lock().unwrap_or_else(|e| e.into_inner()) = None;
        outcome
    }

    /// Under loom: two recounts with a yield before each, no clock.
    #[cfg(loom)]
    fn sleep_until_counted(
        &self,
        window: Duration,
        yield_for: Duration,
        wanted: usize,
        first: usize,
        count: &mut impl FnMut() -> Queued,
    ) -> (Waited, Queued) {
        let _ = (window, yield_for, first);
        let mut queued = count();
        for _ in 0..2 {
            loom::thread::yield_now();
            queued = count();
            if queued.writers >= wanted || queued.urgent {
                return (Waited::Gathered, queued);
            }
        }
        (Waited::TimedOut, queued)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn queued(writers: usize) -> Queued {
        Queued {
            writers,
            urgent: false,
        }
    }

    #[test]
    fn a_lone_writer_never_waits() {
        let gathering = Gathering::default();
        gathering.enter();
        let waited =
            gathering.wait_for_writers(Duration::from_secs(60), Duration::ZERO, usize::MAX, || {
                queued(1)
            });
        assert_eq!(waited, Waited::No);
    }

    #[test]
    fn waits_for_the_writers_in_flight_until_they_queue() {
        let gathering = Gathering::default();
        (0..3).for_each(|_| gathering.enter());
        // The recount after the handshake finds everyone; a shortfall would
        // park and time out after the window.
        let mut counts = [1, 3].into_iter();
        let waited = gathering.wait_for_writers(
            Duration::from_millis(20),
            Duration::ZERO,
            usize::MAX,
            || queued(counts.next().expect("stops counting at three")),
        );
        assert_eq!(waited, Waited::Gathered);
        // Relaxed, in these tests: one thread.
        assert_eq!(gathering.learned.load(Relaxed), 3);
    }

    #[test]
    fn a_timeout_lowers_the_count_to_what_came() {
        let gathering = Gathering::default();
        (0..4).for_each(|_| gathering.enter());
        let waited = gathering.wait_for_writers(
            Duration::from_millis(1),
            Duration::ZERO,
            usize::MAX,
            || queued(2),
        );
        assert_eq!(waited, Waited::TimedOut);
        // Relaxed: one thread.
        assert_eq!(gathering.learned.load(Relaxed), 2);
        // Two writers leave for good: the next leader no longer waits.
        gathering.leave();
        gathering.leave();
        let waited =
            gathering.wait_for_writers(Duration::from_secs(60), Duration::ZERO, usize::MAX, || {
                queued(2)
            });
        assert_eq!(waited, Waited::No);
    }

    #[test]
    fn the_member_cap_and_urgent_writers_end_the_wait() {
        let gathering = Gathering::default();
        (0..8).for_each(|_| gathering.enter());
        let capped =
            gathering.wait_for_writers(Duration::from_secs(60), Duration::ZERO, 2, || queued(2));
        assert_eq!(capped, Waited::No);
        let mut counts = [
            queued(1),
            Queued {
                writers: 1,
                urgent: true,
            },
        ]
        .into_iter();
        let urgent =
            gathering.wait_for_writers(Duration::from_secs(60), Duration::ZERO, usize::MAX, || {
                counts.next().expect("stops at the urgent writer")
            });
        assert_eq!(urgent, Waited::Gathered);
    }

    /// A leader that yields recounts between yields: it sees writers that
    /// queue without waking it, and still gives up after its window.
    #[test]
    fn a_yielding_leader_recounts_and_times_out() {
        let gathering = Gathering::default();
        (0..3).for_each(|_| gathering.enter());
        let mut counts = [1, 1, 1, 1, 3].into_iter();
        let window = Duration::from_secs(60);
        let gathered = gathering.wait_for_writers(window, window, usize::MAX, || {
            queued(counts.next().expect("stops counting at three"))
        });
        assert_eq!(gathered, Waited::Gathered);
        let (budget, window) = (Duration::from_millis(1), Duration::from_millis(5));
        let started = std::time::Instant::now();
        let timed_out = gathering.wait_for_writers(window, budget, usize::MAX, || queued(1));
        assert_eq!(timed_out, Waited::TimedOut);
        assert!(started.elapsed() >= window);
    }

    /// Long enough that only a wake-up ends a wait in time; a wait that
    /// times out fails the test instead of hanging it.
    const TEST_WINDOW: Duration = Duration::from_secs(30);

    /// Yields until `done`, failing after `TEST_WINDOW`.
    fn wait_until(done: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + TEST_WINDOW;
        while !done() {
            assert!(std::time::Instant::now() < deadline, "timed out");
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_joiner_wakes_the_waiting_leader() {
        let gathering = Gathering::default();
        (0..2).for_each(|_| gathering.enter());
        let joined = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                wait_until(|| gathering.waiting.load(SeqCst));
                joined.store(true, SeqCst);
                gathering.joined(true);
            });
            // Only the joiner's wake-up ends the wait before the window does.
            let waited =
                gathering.wait_for_writers(TEST_WINDOW, Duration::ZERO, usize::MAX, || {
                    queued(if joined.load(SeqCst) { 2 } else { 1 })
                });
            assert_eq!(waited, Waited::Gathered);
        });
    }

    /// A leader that counts itself alone waits for three writers; two join
    /// one after the other, the first with or without a window of its own.
    /// The wait must end by the second one's wake-up, before the window.
    fn two_joiners_end_the_wait(gathering: &Gathering, first_has_window: bool) {
        let queued_now = AtomicUsize::new(1);
        std::thread::scope(|s| {
            s.spawn(|| {
                wait_until(|| gathering.waiting.load(SeqCst));
                queued_now.store(2, SeqCst);
                gathering.joined(first_has_window);
                // The first joiner took its share of `missing`: the leader
                // still waits, for one more.
                wait_until(|| gathering.missing.load(SeqCst) == 1);
                assert!(gathering.waiting.load(SeqCst));
                queued_now.store(3, SeqCst);
                gathering.joined(true);
            });
            let waited =
                gathering.wait_for_writers(TEST_WINDOW, Duration::ZERO, usize::MAX, || {
                    queued(queued_now.load(SeqCst))
                });
            assert_eq!(waited, Waited::Gathered);
        });
    }

    #[test]
    fn the_last_missing_joiner_wakes_the_leader() {
        let gathering = Gathering::default();
        (0..3).for_each(|_| gathering.enter());
        two_joiners_end_the_wait(&gathering, true);
        // Relaxed, here and below: one thread.
        assert_eq!(gathering.learned.load(Relaxed), 3);
    }

    #[test]
    fn a_writer_without_a_window_takes_its_share_too() {
        let gathering = Gathering::default();
        // A previous wait saw three writers, of which only the leader now
        // has a window in flight. If the first joiner took no share, the
        // second would leave one missing, nobody would wake the leader, and
        // the window would end the wait.
        gathering.learned.store(3, Relaxed);
        gathering.enter();
        two_joiners_end_the_wait(&gathering, false);
    }
}
