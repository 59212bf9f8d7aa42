//! The [`Sequencer`]: reservations in one step, on top of a [`Tracker`]
//! that publishes them in order, and closing.

use std::fmt;
use std::ops::Range;
use std::sync::PoisonError;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicU64, AtomicU128, Mutex, MutexGuard};
use crate::tracker::Tracker;

/// Bit 63 of the next sequence number: new reservations wait (see
/// [`Sequencer::close`]).
const CLOSED: u64 = 1 << 63;

/// `Reservations::next` holds the next sequence number (and the
/// [`CLOSED`] bit) in its high half and the byte count in its low half.
fn pack(seq: u64, bytes: u64) -> u128 {
    u128::from(seq) << 64 | u128::from(bytes)
}

/// The next sequence number with the [`CLOSED`] bit, and the byte count.
fn unpack(next: u128) -> (u64, u64) {
    ((next >> 64) as u64, next as u64)
}

/// One past the largest sequence number a [`Sequencer`] hands out: numbers
/// are below 2^63.
///
/// # Examples
///
/// ```
/// assert_eq!(ordered_publish::SEQUENCE_LIMIT, 1 << 63);
/// ```
pub const SEQUENCE_LIMIT: u64 = CLOSED;

/// Hands out ranges of sequence numbers with one atomic step, lets their
/// holders finish them in any order, and publishes them in order: the
/// published position is the end of the longest finished prefix.
///
/// The publishing is a [`Tracker`]'s: a ring of `capacity` slots, so a
/// reservation waits while its start would be `capacity` or more numbers
/// past the published position (a range uses one slot however long it is:
/// a long range only holds back the ranges after it). A thread must not
/// wait for room while it holds an unfinished range itself.
///
/// Everything a thread did before [`finish`](Self::finish)ing a range
/// happens before whatever a thread does after it sees the published
/// position pass the range ([`published`](Self::published) with its
/// Acquire, or the waits).
///
/// # Examples
///
/// ```
/// use ordered_publish::Sequencer;
///
/// let seq = Sequencer::new(100, 64);
/// let a = seq.reserve(3); // 100..103
/// let b = seq.reserve(1); // 103..104
/// seq.finish(b.clone());
/// assert_eq!(seq.published(), 100); // b waits for a
/// seq.finish(a);
/// assert_eq!(seq.published(), 104); // both at once
/// seq.wait_published(b.end); // returns at once
/// ```
pub struct Sequencer {
    /// What a reservation reads and writes, on one cache line.
    res: CachePadded<Reservations>,
    /// Publishes the finished ranges in order.
    tracker: Tracker,
    /// Held by a [`Closed`] guard: one closer at a time.
    closing: Mutex<()>,
}

/// The reservation side of a [`Sequencer`].
struct Reservations {
    /// The next number to hand out with the [`CLOSED`] bit, and the byte
    /// count (see [`pack`]): one word, so that one compare-and-swap takes
    /// both.
    next: AtomicU128,
    /// A range may start up to here: the published position as some
    /// reservation last read it, plus the ring's mask. It only trails the
    /// real limit, so a reservation below it needs no look at the published
    /// position, whose line every finish writes.
    room_until: AtomicU64,
    /// Byte ranges end at or below it (see
    /// [`Sequencer::reserve_with_bytes`]).
    byte_limit: AtomicU64,
}

impl fmt::Debug for Sequencer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Relaxed: a snapshot for display only.
        let (next, bytes) = unpack(self.res.next.load(Relaxed));
        f.debug_struct("Sequencer")
            .field("next", &(next & !CLOSED))
            .field("closed", &(next & CLOSED != 0))
            .field("bytes", &bytes)
            .field("tracker", &self.tracker)
            .finish()
    }
}

impl Sequencer {
    /// A sequencer whose first reservation starts at `first`, with a ring
    /// of `capacity` slots (rounded up to a power of two, at least 2): a
    /// range may start at most that many numbers past the published
    /// position.
    ///
    /// # Panics
    ///
    /// If `first` is not below [`SEQUENCE_LIMIT`].
    ///
    /// # Examples
    ///
    /// ```
    /// let seq = ordered_publish::Sequencer::new(1, 1000);
    /// assert_eq!(seq.capacity(), 1024);
    /// assert_eq!(seq.published(), 1);
    /// ```
    pub fn new(first: u64, capacity: usize) -> Sequencer {
        assert!(
            first < SEQUENCE_LIMIT,
            "the first sequence must be below 2^63"
        );
        let tracker = Tracker::new(first, capacity);
        Sequencer {
            res: CachePadded::new(Reservations {
                next: AtomicU128::new(pack(first, 0)),
                room_until: AtomicU64::new(first + tracker.mask()),
                byte_limit: AtomicU64::new(u64::MAX),
            }),
            tracker,
            closing: Mutex::new(()),
        }
    }

    /// The ring's size: how far, in sequence numbers, a range may start
    /// past the published position.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(ordered_publish::Sequencer::new(0, 3).capacity(), 4);
    /// ```
    pub fn capacity(&self) -> usize {
        self.tracker.capacity()
    }

    /// The tracker that publishes this sequencer's ranges: its waits, and
    /// [`Tracker::wake_waiters`] for callers that wait with a `stop`
    /// condition.
    ///
    /// # Examples
    ///
    /// ```
    /// let seq = ordered_publish::Sequencer::new(0, 8);
    /// let r = seq.reserve(1);
    /// seq.finish(r);
    /// assert!(seq.tracker().wait_published_or(1, || false));
    /// ```
    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// Reserves the next `n` sequence numbers with one compare-and-swap
    /// (retried only when another reservation got in first). Waits, without
    /// holding anything, while the sequencer is [closed](Self::close) or the
    /// ring has no slot for the range's start.
    ///
    /// The range must be [`finish`](Self::finish)ed once, or the published
    /// position stops before it for good. An empty range (`n == 0`) takes
    /// nothing and needs no finishing.
    ///
    /// Acquire: a reservation made after a [`Closed`] guard was dropped
    /// sees everything its holder did before dropping it.
    ///
    /// # Panics
    ///
    /// If the range would pass [`SEQUENCE_LIMIT`].
    ///
    /// # Examples
    ///
    /// ```
    /// let seq = ordered_publish::Sequencer::new(7, 16);
    /// assert_eq!(seq.reserve(2), 7..9);
    /// assert_eq!(seq.reserve(0), 9..9);
    /// assert_eq!(seq.reserve(5), 9..14);
    /// ```
    pub fn reserve(&self, n: u64) -> Range<u64> {
        let (range, _) = self
            .reserve_with_bytes(n, 0)
            .expect("an empty byte range is within any limit");
        range
    }

    /// [`reserve`](Self::reserve)s `n` sequence numbers and, in the same
    /// compare-and-swap, `bytes` of the sequencer's byte count: the byte
    /// ranges come in the order of the sequence ranges, with no gap. For
    /// work that fills a buffer in sequence order (a log whose writers copy
    /// their records at the places they reserve, each record in the order
    /// of its sequence numbers). The count starts at 0, and only a
    /// [`Closed`] guard sets it elsewhere ([`Closed::restart_bytes`]).
    ///
    /// Byte ranges end at or below the byte limit (unlimited unless set,
    /// [`raise_byte_limit`](Self::raise_byte_limit)): `None`, reserving
    /// nothing, when this one would pass it. The buffer's owner makes room
    /// (grows a file), raises the limit, and the caller tries again, holding
    /// no range meanwhile, so nobody waits for it.
    ///
    /// The sequence range must be finished as `reserve`'s; the bytes need
    /// nothing. An empty sequence range takes no slot, so it never waits
    /// for room, only while the sequencer is closed (unless `bytes` is 0
    /// too: then it takes nothing at all).
    ///
    /// # Panics
    ///
    /// If the sequence range would pass [`SEQUENCE_LIMIT`], or the byte
    /// range would reach 2^64.
    ///
    /// # Examples
    ///
    /// ```
    /// let seq = ordered_publish::Sequencer::new(7, 16);
    /// let a = seq.reserve_with_bytes(2, 100).unwrap();
    /// assert_eq!(a, (7..9, 0..100));
    /// let b = seq.reserve(1); // no bytes
    /// let c = seq.reserve_with_bytes(1, 30).unwrap();
    /// assert_eq!(c, (10..11, 100..130));
    /// assert_eq!(seq.reserved_bytes(), 130);
    /// for range in [a.0, b, c.0] {
    ///     seq.finish(range);
    /// }
    /// seq.close().restart_bytes(0, 50); // a close waits for every range
    /// assert_eq!(seq.byte_limit(), 50);
    /// assert_eq!(seq.reserve_with_bytes(1, 60), None); // past 50
    /// assert_eq!(seq.reserve_with_bytes(1, 40), Some((11..12, 0..40)));
    /// ```
    pub fn reserve_with_bytes(&self, n: u64, bytes: u64) -> Option<(Range<u64>, Range<u64>)> {
        let mask = self.tracker.mask();
        // Acquire: the compare-and-swap below decides, but the byte limit
        // read after this must be the one set for this count (by the
        // closer that restarted it, whose reopening this then acquires),
        // not an older one.
        let mut next = self.res.next.load(Acquire);
        let mut retries = 0;
        loop {
            let (seq, at) = unpack(next);
            let start = seq & !CLOSED;
            if n == 0 && bytes == 0 {
                return Some((start..start, at..at));
            }
            // Acquire: the slot our range will use last held the end of a
            // range `capacity` numbers back, published by the position that
            // whoever raised the limit read (with Acquire, then a Release
            // raise); so that store comes before ours in the slot's
            // modification order (with Relaxed, loom finds the old end
            // overwriting our new one). A stale limit can only make the
            // ring look fuller than it is. An empty range uses no slot.
            let room = n == 0
                || start <= self.res.room_until.load(Acquire)
                || self.raise_room_until(start, mask);
            if seq & CLOSED != 0 || !room {
                // Woken by any move (room) and by the reopening.
                self.tracker.wait_until(0, || {
                    // Relaxed: only a reason to try the compare-and-swap.
                    let (now, _) = unpack(self.res.next.load(Relaxed));
                    now & CLOSED == 0 && now.saturating_sub(self.tracker.published()) <= mask
                });
                // Acquire: as above.
                next = self.res.next.load(Acquire);
                continue;
            }
            let end = start
                .checked_add(n)
                .filter(|&end| end <= SEQUENCE_LIMIT)
                .expect("sequence numbers exhausted (2^63)");
            let bytes_end = at.checked_add(bytes).expect("byte count exhausted (2^64)");
            // Acquire: whatever the raiser did to make room (a file grown,
            // mapped) happens before the caller uses the bytes.
            if bytes > 0 && bytes_end > self.res.byte_limit.load(Acquire) {
                self.count_retries(retries);
                return None;
            }
            // Acquire on failure: as the first load.
            match self
                .res
                .next
                .compare_exchange_weak(next, pack(end, bytes_end), Acquire, Acquire)
            {
                Ok(_) => {
                    self.count_retries(retries);
                    return Some((start..end, at..bytes_end));
                }
                Err(current) => {
                    next = current;
                    retries += 1;
                }
            }
        }
    }

    /// The compare-and-swaps of [`reserve`](Self::reserve) and
    /// [`reserve_with_bytes`](Self::reserve_with_bytes) that another
    /// reservation beat, since the sequencer was made (a spurious failure
    /// of the weak compare-and-swap counts too). Each cost the reserving
    /// thread another trip of the reservation word's cache line: many per
    /// reservation mean many cores reserving at once, the word their
    /// bottleneck.
    ///
    /// Counted per group of threads, on lines of their own, and only when
    /// a reservation retried: an uncontended reservation writes nothing
    /// more.
    ///
    /// # Examples
    ///
    /// ```
    /// let seq = ordered_publish::Sequencer::new(0, 64);
    /// for _ in 0..3 {
    ///     let r = seq.reserve(1);
    ///     seq.finish(r);
    /// }
    /// assert_eq!(seq.reservation_retries(), 0); // nobody to lose a race to
    /// std::thread::scope(|s| {
    ///     for _ in 0..4 {
    ///         s.spawn(|| {
    ///             for _ in 0..8 {
    ///                 let r = seq.reserve(1);
    ///                 seq.finish(r);
    ///             }
    ///         });
    ///     }
    /// });
    /// // However many times the threads' reservations met.
    /// println!("{} lost races in 32 reservations", seq.reservation_retries());
    /// ```
    pub fn reservation_retries(&self) -> u64 {
        self.tracker.waits.retries()
    }

    /// The byte count: where the next
    /// [`reserve_with_bytes`](Self::reserve_with_bytes) range starts.
    ///
    /// Relaxed: a snapshot, ordered with nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// let seq = ordered_publish::Sequencer::new(0, 16);
    /// let (_, bytes) = seq.reserve_with_bytes(1, 12).unwrap();
    /// assert_eq!((bytes, seq.reserved_bytes()), (0..12, 12));
    /// ```
    pub fn reserved_bytes(&self) -> u64 {
        unpack(self.res.next.load(Relaxed)).1
    }

    /// Lets byte ranges end up to `limit` (if it is above the current
    /// limit): for the owner of the buffer the bytes stand for, once it has
    /// made room up to there.
    ///
    /// Release: a reservation that reads the new limit sees what the caller
    /// did to make room.
    ///
    /// # Examples
    ///
    /// ```
    /// let seq = ordered_publish::Sequencer::new(0, 16);
    /// seq.close().restart_bytes(0, 10);
    /// assert_eq!(seq.reserve_with_bytes(1, 20), None);
    /// seq.raise_byte_limit(64);
    /// assert_eq!(seq.byte_limit(), 64);
    /// assert_eq!(seq.reserve_with_bytes(1, 20), Some((0..1, 0..20)));
    /// ```
    pub fn raise_byte_limit(&self, limit: u64) {
        self.res.byte_limit.fetch_max(limit, Release);
    }

    /// The byte limit: how far byte ranges may end now.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(ordered_publish::Sequencer::new(0, 4).byte_limit(), u64::MAX);
    /// ```
    pub fn byte_limit(&self) -> u64 {
        // Acquire: pairs with `raise_byte_limit`'s Release.
        self.res.byte_limit.load(Acquire)
    }

    /// Adds a reservation's lost compare-and-swaps to
    /// [`reservation_retries`](Self::reservation_retries); most reservations
    /// lost none and write nothing.
    #[inline]
    fn count_retries(&self, retries: u64) {
        if retries > 0 {
            self.tracker.waits.count_retries(retries);
        }
    }

    /// Looks at the published position (Acquire: see `reserve`) and raises
    /// `room_until` to what it allows: whether a range may start at
    /// `start` now.
    #[cold]
    fn raise_room_until(&self, start: u64, mask: u64) -> bool {
        let limit = self.tracker.published() + mask;
        // Release: passes on what the Acquire load above saw.
        self.res.room_until.fetch_max(limit, Release);
        start <= limit
    }

    /// Marks a reserved range finished; if it was the first unpublished
    /// one, moves the published position over it and over every contiguous
    /// finished range after it, and wakes sleeping waiters (see
    /// [`Tracker::finish`]).
    ///
    /// # Panics
    ///
    /// May panic (in debug builds) on a range that was not reserved from
    /// this sequencer; finishing a range twice or a made-up one breaks the
    /// published position.
    ///
    /// # Examples
    ///
    /// ```
    /// let seq = ordered_publish::Sequencer::new(0, 8);
    /// let (a, b, c) = (seq.reserve(1), seq.reserve(1), seq.reserve(1));
    /// seq.finish(c);
    /// seq.finish(a);
    /// assert_eq!(seq.published(), 1);
    /// seq.finish(b);
    /// assert_eq!(seq.published(), 3);
    /// ```
    pub fn finish(&self, range: Range<u64>) {
        debug_assert!(
            // Relaxed: a debug check; our own reservation is in the count.
            range.is_empty() || range.end <= unpack(self.res.next.load(Relaxed)).0 & !CLOSED,
            "not reserved"
        );
        self.tracker.finish(range);
    }

    /// The published position: every number below it is finished (see
    /// [`Tracker::published`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let seq = ordered_publish::Sequencer::new(5, 4);
    /// assert_eq!(seq.published(), 5);
    /// let r = seq.reserve(2);
    /// seq.finish(r);
    /// assert_eq!(seq.published(), 7);
    /// ```
    pub fn published(&self) -> u64 {
        self.tracker.published()
    }

    /// Waits until the published position reaches `end`: spinning a
    /// little, then yielding, then asleep.
    ///
    /// # Examples
    ///
    /// ```
    /// use ordered_publish::Sequencer;
    ///
    /// let seq = Sequencer::new(0, 8);
    /// let (first, second) = (seq.reserve(1), seq.reserve(1));
    /// std::thread::scope(|s| {
    ///     s.spawn(|| seq.finish(first));
    ///     seq.finish(second.clone());
    ///     seq.wait_published(second.end); // until `first` is finished too
    /// });
    /// assert_eq!(seq.published(), 2);
    /// ```
    pub fn wait_published(&self, end: u64) {
        self.tracker.wait_published(end);
    }

    /// Holds off new reservations and waits until every range reserved so
    /// far is finished; reservations resume when the guard is dropped. For
    /// work that no range may overlap (an engine switching the memtable its
    /// writers insert into). One closer at a time: a second waits.
    ///
    /// Acquire: everything the finishers did happens before the caller's
    /// next step. Dropping the guard is a Release that later reservations
    /// acquire.
    ///
    /// # Examples
    ///
    /// ```
    /// use ordered_publish::Sequencer;
    ///
    /// let seq = Sequencer::new(0, 8);
    /// let held = seq.reserve(1);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| seq.finish(held));
    ///     let closed = seq.close(); // waits for `held`
    ///     assert_eq!(closed.published(), 1);
    /// });
    /// assert_eq!(seq.reserve(1), 1..2); // open again
    /// ```
    pub fn close(&self) -> Closed<'_> {
        let lock = self.closing.lock().unwrap_or_else(PoisonError::into_inner);
        // AcqRel: Acquire orders our read of `end` after every reservation
        // before it in `next`'s order; Release is not needed by anyone but
        // keeps the pair with `Closed::drop` simple to argue.
        let (end, _) = unpack(self.res.next.fetch_or(pack(CLOSED, 0), AcqRel));
        let end = end & !CLOSED;
        self.wait_published(end);
        Closed {
            seq: self,
            _lock: lock,
        }
    }
}

/// Reservations held off by [`Sequencer::close`], until the guard is
/// dropped.
///
/// # Examples
///
/// ```
/// let seq = ordered_publish::Sequencer::new(0, 8);
/// let closed = seq.close();
/// assert_eq!(closed.published(), 0);
/// drop(closed); // reservations resume
/// assert_eq!(seq.reserve(1), 0..1);
/// ```
#[must_use = "dropping the guard opens the sequencer again at once"]
pub struct Closed<'a> {
    seq: &'a Sequencer,
    _lock: MutexGuard<'a, ()>,
}

impl fmt::Debug for Closed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Closed").field("seq", self.seq).finish()
    }
}

impl Closed<'_> {
    /// The published position, which is also where the next reservation
    /// will start: every reserved range is finished.
    ///
    /// # Examples
    ///
    /// ```
    /// let seq = ordered_publish::Sequencer::new(0, 8);
    /// let r = seq.reserve(4);
    /// seq.finish(r);
    /// assert_eq!(seq.close().published(), 4);
    /// ```
    pub fn published(&self) -> u64 {
        self.seq.published()
    }

    /// Sets the byte count, where the next
    /// [`reserve_with_bytes`](Sequencer::reserve_with_bytes) range starts,
    /// and the byte limit (say, at the end of a new log's header, and the
    /// end of the file grown so far, once the old log is full).
    ///
    /// # Examples
    ///
    /// ```
    /// let seq = ordered_publish::Sequencer::new(0, 8);
    /// let (range, _) = seq.reserve_with_bytes(1, 500).unwrap();
    /// seq.finish(range); // a close waits for every reserved range
    /// seq.close().restart_bytes(20, 100);
    /// assert_eq!(seq.reserve_with_bytes(1, 10), Some((1..2, 20..30)));
    /// assert_eq!(seq.byte_limit(), 100);
    /// ```
    pub fn restart_bytes(&self, at: u64, limit: u64) {
        // Relaxed: the guard's drop (Release) publishes it with the
        // reopening, and the reservations that read the new count acquire
        // that before they read the limit.
        self.seq.res.byte_limit.store(limit, Relaxed);
        // Relaxed: while closed, only a closer writes the word (waiting
        // reservations only read it); the guard's drop (Release) publishes
        // the new count with the reopening.
        let mut next = self.seq.res.next.load(Relaxed);
        loop {
            let (seq, _) = unpack(next);
            match self
                .seq
                .res
                .next
                .compare_exchange_weak(next, pack(seq, at), Relaxed, Relaxed)
            {
                Ok(_) => return,
                Err(now) => next = now,
            }
        }
    }
}

impl Drop for Closed<'_> {
    fn drop(&mut self) {
        // Release: a reservation that reads the cleared bit (Acquire) sees
        // what the closer did meanwhile.
        self.seq.res.next.fetch_and(!pack(CLOSED, 0), Release);
        self.seq.tracker.wake_waiters();
    }
}
