//! [`WaitStats`]: how the waits of a tracker ended, and the reservations
//! that lost a race, counted on lines of their own per group of threads.

use std::cell::Cell;
// Statistics order nothing, so they are std's atomics even under loom:
// kept out of the model, they add no states for it to explore.
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

use crossbeam_utils::CachePadded;

/// How the waits of a [`Tracker`](crate::Tracker) (and of the
/// [`Sequencer`](crate::Sequencer) or [`OrderedQueue`](crate::OrderedQueue)
/// it serves) ended, since it was made: a wait spins first, then yields,
/// then sleeps until a finisher or
/// [`wake_waiters`](crate::Tracker::wake_waiters) wakes it. A wait whose
/// condition held at the caller's first look is not counted.
///
/// The same counts as `write_group::Stats`' `spin_successes`,
/// `yield_successes` and `futex_sleeps`: many waits ending in their sleep
/// mean more threads than cores, or work held up long (a writer preempted
/// while it holds a range).
///
/// # Examples
///
/// ```
/// use ordered_publish::{Tracker, WaitStats};
///
/// let t = Tracker::new(0, 8);
/// t.finish(0..1);
/// t.wait_published(1); // reached already: not a wait
/// assert_eq!(t.wait_stats(), WaitStats::default());
/// std::thread::scope(|s| {
///     s.spawn(|| t.finish(1..2));
///     t.wait_published(2);
/// });
/// assert!(t.wait_stats().waits() <= 1); // one, unless the finisher came first
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct WaitStats {
    /// Waits that ended while spinning.
    pub spin_successes: u64,
    /// Waits that ended while yielding.
    pub yield_successes: u64,
    /// Waits that slept (once or more) before they ended.
    pub sleeps: u64,
}

impl WaitStats {
    /// Every counted wait, however it ended.
    ///
    /// # Examples
    ///
    /// ```
    /// let stats = ordered_publish::WaitStats { spin_successes: 3, yield_successes: 2, sleeps: 1 };
    /// assert_eq!(stats.waits(), 6);
    /// ```
    pub fn waits(&self) -> u64 {
        self.spin_successes + self.yield_successes + self.sleeps
    }
}

/// How a wait ended.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ended {
    Spinning = 0,
    Yielding = 1,
    Asleep = 2,
}

/// The slot, beside the three of [`Ended`], of the reservations' lost
/// compare-and-swaps.
const RETRIES: usize = 3;

/// Groups of threads whose counts share a line: threads past this many
/// share groups.
const STRIPES: usize = 8;

/// The live counters behind [`WaitStats`] and
/// [`Sequencer::reservation_retries`](crate::Sequencer::reservation_retries):
/// a thread counts on its group's line, so that threads counting at once
/// on different cores do not pass one line between them (a waiter counts
/// as it returns, on the write's path).
pub(crate) struct WaitCounters {
    stripes: [CachePadded<[AtomicU64; 4]>; STRIPES],
}

impl WaitCounters {
    pub(crate) fn new() -> Self {
        WaitCounters {
            stripes: std::array::from_fn(|_| CachePadded::new(Default::default())),
        }
    }

    pub(crate) fn count(&self, ended: Ended) {
        // Relaxed: a count, ordered with nothing.
        self.stripes[stripe()][ended as usize].fetch_add(1, Relaxed);
    }

    /// Counts `n` compare-and-swaps of a reservation that another
    /// reservation beat.
    pub(crate) fn count_retries(&self, n: u64) {
        // Relaxed: a count, ordered with nothing.
        self.stripes[stripe()][RETRIES].fetch_add(n, Relaxed);
    }

    pub(crate) fn retries(&self) -> u64 {
        // Relaxed: as in `count`.
        self.stripes.iter().map(|s| s[RETRIES].load(Relaxed)).sum()
    }

    pub(crate) fn snapshot(&self) -> WaitStats {
        // Relaxed: as in `count`; a snapshot need not be one instant.
        let sum = |ended: Ended| -> u64 {
            self.stripes
                .iter()
                .map(|s| s[ended as usize].load(Relaxed))
                .sum()
        };
        WaitStats {
            spin_successes: sum(Ended::Spinning),
            yield_successes: sum(Ended::Yielding),
            sleeps: sum(Ended::Asleep),
        }
    }
}

/// This thread's group: threads take groups in turn as they first count.
fn stripe() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    std::thread_local! {
        static STRIPE: Cell<Option<usize>> = const { Cell::new(None) };
    }
    STRIPE
        .try_with(|s| match s.get() {
            Some(n) => n,
            None => {
                // Relaxed: only hands out distinct numbers.
                let n = NEXT.fetch_add(1, Relaxed) % STRIPES;
                s.set(Some(n));
                n
            }
        })
        // During thread teardown the thread-local is gone: any group will
        // do.
        .unwrap_or(0)
}
