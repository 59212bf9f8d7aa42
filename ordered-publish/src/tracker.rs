//! The [`Tracker`]: a ring of finished ranges, the published position, and
//! the ways to wait for it.

use std::fmt;
use std::ops::Range;
use std::sync::PoisonError;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicU64, Condvar, Mutex, MutexGuard, fence, spin_loop, yield_now};
use crate::wait_stats::{Ended, WaitCounters, WaitStats};

/// Checks of a waited-for condition spent spinning before yielding.
pub(crate) const SPINS: u32 = 64;
/// The longest a waiter yields before it sleeps (RocksDB's
/// `write_thread_max_yield_usec`), unless its yields turn slow first.
const MAX_YIELDING: Duration = Duration::from_micros(100);
/// A yield that takes this long gave the core to another thread (RocksDB's
/// `write_thread_slow_yield_usec`): the cores are oversubscribed.
const SLOW_YIELD: Duration = Duration::from_micros(3);
/// Slow yields after which a waiter sleeps: with more runnable threads than
/// cores, a yielding waiter notices the change only when its turn comes
/// round, and takes turns from the threads it waits for.
const SLOW_YIELDS: u32 = 3;

/// The publishing half of a [`Sequencer`](crate::Sequencer), for ranges
/// numbered elsewhere: ranges are finished in any order, and the published
/// position is the end of the longest finished prefix.
///
/// A finished range's end goes into a ring slot named after its start;
/// whoever finishes the range that the published position points at moves
/// the position over every contiguous finished range after it. The ring
/// holds `capacity` slots: the ranges finished and not yet published must
/// all start less than `capacity` numbers past the published position
/// (a [`Sequencer`](crate::Sequencer) sees to it for its own ranges).
///
/// Everything a thread did before [`finish`](Self::finish)ing a range
/// happens before whatever a thread does after it sees the published
/// position pass the range ([`published`](Self::published) with its
/// Acquire, or the waits).
///
/// # Examples
///
/// A position moved by one thread at a time, that others wait for:
///
/// ```
/// use ordered_publish::Tracker;
///
/// let written = Tracker::new(0, 16);
/// std::thread::scope(|s| {
///     s.spawn(|| written.finish(0..5)); // say, bytes written out
///     written.wait_published(5);
/// });
/// assert_eq!(written.published(), 5);
/// ```
pub struct Tracker {
    /// Every number below it is finished (and so published).
    published: CachePadded<AtomicU64>,
    /// `slots[start % capacity]`: the end of the finished range that starts
    /// at `start`, or an older value at or below the published position.
    slots: Box<[AtomicU64]>,
    /// `capacity - 1`; the capacity is a power of two.
    mask: u64,
    /// The lowest position a thread asleep in a wait waits for (0: any
    /// move), `NO_SLEEPER` when none is: a finisher that moves the
    /// position there wakes the sleepers it reached. Kept on a line of its
    /// own, read by every finisher; written under `sleep`.
    wake_at: CachePadded<AtomicU64>,
    /// The sleepers (the slow path only), and their bell.
    sleep: Mutex<Sleepers>,
    bell: Condvar,
    /// How the waits ended (and, for a sequencer, its lost reservations).
    pub(crate) waits: WaitCounters,
}

/// `Tracker::wake_at` when no thread sleeps.
const NO_SLEEPER: u64 = u64::MAX;

/// The threads asleep in a tracker's waits that no waker has woken yet.
#[derive(Default)]
struct Sleepers {
    list: Vec<Sleeper>,
    /// The next sleeper's ticket.
    next_ticket: u64,
}

/// A thread asleep in a wait: the position whose publication wakes it,
/// and its ticket, by which it finds itself in the list.
#[derive(Clone, Copy)]
struct Sleeper {
    wake_at: u64,
    ticket: u64,
}

impl Sleepers {
    /// The lowest position a sleeper waits for, `NO_SLEEPER` for none.
    fn lowest(&self) -> u64 {
        self.list
            .iter()
            .map(|s| s.wake_at)
            .min()
            .unwrap_or(NO_SLEEPER)
    }
}

impl fmt::Debug for Tracker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Relaxed: a snapshot for display only.
        f.debug_struct("Tracker")
            .field("published", &self.published.load(Relaxed))
            .field("capacity", &self.slots.len())
            .finish()
    }
}

impl Tracker {
    /// A tracker whose published position starts at `first`, with a ring
    /// of `capacity` slots (rounded up to a power of two, at least 2).
    ///
    /// # Examples
    ///
    /// ```
    /// let t = ordered_publish::Tracker::new(10, 1000);
    /// assert_eq!((t.published(), t.capacity()), (10, 1024));
    /// ```
    pub fn new(first: u64, capacity: usize) -> Tracker {
        let capacity = capacity.max(2).next_power_of_two();
        // Slots start at `first`, which no range can end at: not finished.
        let slots = (0..capacity).map(|_| AtomicU64::new(first)).collect();
        Tracker {
            published: CachePadded::new(AtomicU64::new(first)),
            slots,
            mask: capacity as u64 - 1,
            wake_at: CachePadded::new(AtomicU64::new(NO_SLEEPER)),
            sleep: Mutex::new(Sleepers::default()),
            bell: Condvar::new(),
            waits: WaitCounters::new(),
        }
    }

    /// The ring's size: how far, in numbers, a finished range may start
    /// past the published position.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(ordered_publish::Tracker::new(0, 3).capacity(), 4);
    /// ```
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// `capacity - 1`.
    pub(crate) fn mask(&self) -> u64 {
        self.mask
    }

    /// Marks a range finished; if it was the first unpublished
    /// one, moves the published position over it and over every contiguous
    /// finished range after it, and wakes sleeping waiters.
    ///
    /// Release: whatever this thread did before is visible to whoever sees
    /// the published position pass `range`.
    ///
    /// Each range must be finished once, start at or past the published
    /// position and less than the capacity past it, and not overlap another
    /// range: finishing a range twice or a made-up one breaks the published
    /// position.
    ///
    /// # Examples
    ///
    /// ```
    /// let t = ordered_publish::Tracker::new(0, 8);
    /// t.finish(2..3);
    /// t.finish(0..1);
    /// assert_eq!(t.published(), 1);
    /// t.finish(1..2);
    /// assert_eq!(t.published(), 3);
    /// ```
    pub fn finish(&self, range: Range<u64>) {
        if range.is_empty() {
            return;
        }
        debug_assert!(
            range.start - self.published.load(Relaxed).min(range.start) <= self.mask,
            "a range beyond the ring"
        );
        // Acquire: see `advance`.
        if self.published.load(Acquire) == range.start {
            // At the head: nobody else can move the position from our
            // start (that takes our slot, which we leave alone), so a plain
            // store publishes us. Release, as the moves in `advance`.
            self.published.store(range.end, Release);
            // SeqCst fence: either a later range's finisher sees our move,
            // or our look at its slot in `advance` sees its end.
            fence(SeqCst);
            self.advance(true);
            return;
        }
        // Release: pairs with the Acquire load in `advance`, which passes
        // it on through the published position.
        self.slot(range.start).store(range.end, Release);
        // SeqCst fence: either our load of the published position below
        // sees the finisher before us reach our start, or that finisher's
        // load of our slot (after its own SeqCst fence) sees our store.
        fence(SeqCst);
        self.advance(false);
    }

    fn slot(&self, start: u64) -> &AtomicU64 {
        &self.slots[(start & self.mask) as usize]
    }

    /// Moves the published position over contiguous finished ranges;
    /// `moved` when the caller moved it already (then waiters are woken
    /// whether or not this call moves it further).
    fn advance(&self, mut moved: bool) {
        // Acquire: see the loop.
        let mut published = self.published.load(Acquire);
        loop {
            // Acquire: pairs with the finisher's Release store, so that its
            // work happens before our (Release) move of the position.
            let end = self.slot(published).load(Acquire);
            if end <= published {
                break;
            }
            // AcqRel: Release publishes the range (and, transitively, what
            // its finisher did); Acquire when another finisher moved it.
            match self
                .published
                .compare_exchange(published, end, AcqRel, Acquire)
            {
                Ok(_) => {
                    published = end;
                    moved = true;
                    // SeqCst fence: the other half of `finish`'s.
                    fence(SeqCst);
                }
                Err(current) => published = current,
            }
        }
        if moved {
            self.wake_sleepers_until(published);
        }
    }

    /// The published position: every number below it is finished.
    ///
    /// Acquire: whatever the finishers of those numbers did before
    /// finishing happens before what the caller does next.
    ///
    /// # Examples
    ///
    /// ```
    /// let t = ordered_publish::Tracker::new(5, 4);
    /// assert_eq!(t.published(), 5);
    /// t.finish(5..7);
    /// assert_eq!(t.published(), 7);
    /// ```
    pub fn published(&self) -> u64 {
        self.published.load(Acquire)
    }

    /// Waits until the published position reaches `end`: spinning a
    /// little, then yielding, then asleep.
    ///
    /// # Examples
    ///
    /// ```
    /// use ordered_publish::Tracker;
    ///
    /// let t = Tracker::new(0, 8);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| t.finish(0..1));
    ///     t.finish(1..2);
    ///     t.wait_published(2); // until 0..1 is finished too
    /// });
    /// assert_eq!(t.published(), 2);
    /// ```
    pub fn wait_published(&self, end: u64) {
        if self.published() < end {
            self.wait_until(end, || self.published() >= end);
        }
    }

    /// [`wait_published`](Self::wait_published), or until `stop` holds
    /// (say, an error that means the position will not get there): `true`
    /// when the position reached `end`. Whoever makes `stop` hold must call
    /// [`wake_waiters`](Self::wake_waiters) afterwards.
    ///
    /// # Examples
    ///
    /// ```
    /// use ordered_publish::Tracker;
    /// use std::sync::atomic::{AtomicBool, Ordering};
    ///
    /// let written = Tracker::new(0, 8);
    /// let failed = AtomicBool::new(false);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         failed.store(true, Ordering::Release);
    ///         written.wake_waiters();
    ///     });
    ///     assert!(!written.wait_published_or(1, || failed.load(Ordering::Acquire)));
    /// });
    /// ```
    pub fn wait_published_or(&self, end: u64, stop: impl Fn() -> bool) -> bool {
        self.wait_until(end, || self.published() >= end || stop());
        self.published() >= end
    }

    /// Waits until `done` holds, spinning, then yielding, then asleep on the
    /// bell. Asleep, the waiter is woken once the published position
    /// reaches `wake_at` (0: by any move of it), and by `wake_waiters`,
    /// which whoever changes anything else that `done` reads must call.
    pub(crate) fn wait_until(&self, wake_at: u64, done: impl Fn() -> bool) {
        // Under loom, straight to sleep: a model reaches a sleep past spins
        // and yields (each a yield to loom) only with more preemptions than
        // it can afford.
        if !cfg!(loom) {
            for _ in 0..SPINS {
                if done() {
                    self.waits.count(Ended::Spinning);
                    return;
                }
                spin_loop();
            }
            // Yielding while the yields are fast (the cores have room: a
            // sleep would only add a wake-up, a syscall for whoever rings),
            // for a while.
            let started = Instant::now();
            let mut slow = 0;
            loop {
                if done() {
                    self.waits.count(Ended::Yielding);
                    return;
                }
                let before = Instant::now();
                yield_now();
                let now = Instant::now();
                if now - before >= SLOW_YIELD {
                    slow += 1;
                }
                if slow >= SLOW_YIELDS || now - started >= MAX_YIELDING {
                    break;
                }
            }
        }
        // `NO_SLEEPER` itself would read as nobody asleep.
        let wake_at = wake_at.min(NO_SLEEPER - 1);
        let mut sleepers: MutexGuard<'_, Sleepers> =
            self.sleep.lock().unwrap_or_else(PoisonError::into_inner);
        let ticket = sleepers.next_ticket;
        sleepers.next_ticket += 1;
        let mut slept = false;
        loop {
            // On the list (again, if a waker took us off it and `done`
            // still does not hold: that waker's move was not enough).
            if !sleepers.list.iter().any(|s| s.ticket == ticket) {
                sleepers.list.push(Sleeper { wake_at, ticket });
                // Relaxed: written under the lock only; the fence below
                // orders it before our check for the wakers, who read it
                // without the lock.
                if wake_at < self.wake_at.load(Relaxed) {
                    self.wake_at.store(wake_at, Relaxed);
                }
            }
            // SeqCst fence: the other half of the fence in
            // `wake_sleepers_until` (Dekker): either the waker sees our
            // `wake_at`, or our check below sees its move.
            fence(SeqCst);
            if done() {
                break;
            }
            slept = true;
            sleepers = self
                .bell
                .wait(sleepers)
                .unwrap_or_else(PoisonError::into_inner);
        }
        // Off the list, unless a waker took us off already.
        if let Some(i) = sleepers.list.iter().position(|s| s.ticket == ticket) {
            sleepers.list.swap_remove(i);
            // Relaxed: as above; a higher value only spares a wake-up.
            self.wake_at.store(sleepers.lowest(), Relaxed);
        }
        drop(sleepers);
        // A wait that found `done` as it was about to sleep ended with the
        // yields (or, under loom, its spin).
        self.waits.count(if slept {
            Ended::Asleep
        } else if cfg!(loom) {
            Ended::Spinning
        } else {
            Ended::Yielding
        });
    }

    /// How this tracker's waits ended, since it was made (see
    /// [`WaitStats`]): those of [`wait_published`](Self::wait_published)
    /// and [`wait_published_or`](Self::wait_published_or), and of the
    /// [`Sequencer`](crate::Sequencer) or [`OrderedQueue`](crate::OrderedQueue)
    /// that waits on it.
    ///
    /// # Examples
    ///
    /// ```
    /// let t = ordered_publish::Tracker::new(0, 8);
    /// t.finish(0..2);
    /// t.wait_published(2); // reached: no wait
    /// assert_eq!(t.wait_stats().waits(), 0);
    /// ```
    pub fn wait_stats(&self) -> WaitStats {
        self.waits.snapshot()
    }

    /// The positions the sleepers not woken yet wait for, lowest first.
    #[cfg(test)]
    pub(crate) fn sleeping(&self) -> Vec<u64> {
        let sleepers = self.sleep.lock().unwrap_or_else(PoisonError::into_inner);
        let mut ends: Vec<u64> = sleepers.list.iter().map(|s| s.wake_at).collect();
        ends.sort_unstable();
        ends
    }

    /// Wakes the sleepers that wait for the published position to reach
    /// `position` or less (or for any move), taking them off the list, so
    /// that the moves after this one do not ring for them again while they
    /// wait for a core. Costs a fence and a load when nobody sleeps, or
    /// nobody for this position.
    fn wake_sleepers_until(&self, position: u64) {
        // SeqCst fence: see `wait_until`.
        fence(SeqCst);
        // Relaxed: the fence orders it (see `wait_until`).
        let lowest = self.wake_at.load(Relaxed);
        if lowest == NO_SLEEPER || lowest > position {
            return;
        }
        // Taking the lock orders our move after a sleeper's check, which it
        // makes holding the lock until it waits.
        let mut sleepers = self.sleep.lock().unwrap_or_else(PoisonError::into_inner);
        sleepers.list.retain(|s| s.wake_at > position);
        // Relaxed: see `wait_until`.
        self.wake_at.store(sleepers.lowest(), Relaxed);
        self.bell.notify_all();
    }

    /// Wakes the threads asleep in a wait of this tracker (or of its
    /// sequencer), if any, so that they look again at what they wait for:
    /// for a caller that changed what a `stop` condition reads. Costs a load
    /// when nobody sleeps.
    ///
    /// # Examples
    ///
    /// A waiter asleep until the position moves, or until it is cancelled
    /// (see also [`wait_published_or`](Self::wait_published_or)):
    ///
    /// ```
    /// use ordered_publish::Tracker;
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use std::time::Duration;
    ///
    /// let written = Tracker::new(0, 8);
    /// let cancelled = AtomicBool::new(false);
    /// let stop = || cancelled.load(Ordering::Acquire);
    /// std::thread::scope(|s| {
    ///     let waiter = s.spawn(|| written.wait_published_or(1, stop));
    ///     std::thread::sleep(Duration::from_millis(10)); // time for it to fall asleep
    ///     cancelled.store(true, Ordering::Release);
    ///     written.wake_waiters(); // a waiter asleep looks again only when woken
    ///     assert!(!waiter.join().unwrap()); // woken, and cancelled
    /// });
    /// assert_eq!(written.published(), 0);
    /// ```
    pub fn wake_waiters(&self) {
        self.wake_sleepers_until(NO_SLEEPER - 1);
    }
}
