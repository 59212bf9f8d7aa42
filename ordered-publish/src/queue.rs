//! [`OrderedQueue`]: items posted under sequence ranges in any order, taken
//! out in range order by one drainer at a time.

use std::fmt;
use std::ops::Range;
use std::ptr;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};
use std::sync::{PoisonError, TryLockError};

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicPtr, AtomicU64, Mutex, fence};
use crate::tracker::Tracker;

/// An item and the end of the range it was posted under.
struct Posted<T> {
    end: u64,
    item: T,
}

/// What only the drainer touches: where the next pass starts, and the
/// items of the pass (a buffer kept between passes).
struct DrainState<T> {
    taken: u64,
    pass: Vec<(Range<u64>, T)>,
}

/// Items posted under ranges of sequence numbers, in any order, and taken
/// out in the ranges' order by one thread at a time: the combining writer
/// of a log that many threads fill (each posts its record, whoever finds
/// the drain free writes every record posted so far, in order, with one
/// call).
///
/// Every range of the numbering must be posted once
/// ([`post_skip`](Self::post_skip) where there is nothing to take), or
/// draining stops before it (unless the queue skips finished ranges, see
/// below); a range may start at most `capacity` numbers past the drained
/// position (ranges reserved from a [`Sequencer`](crate::Sequencer) of the
/// same capacity, each finished only after it was drained, keep to that).
///
/// Whoever posts should then call [`drain`](Self::drain): either it drains,
/// or another thread is draining and will take the new item before it lets
/// go (it looks again after letting go), so no posted item is left behind.
///
/// Where only some ranges carry an item (an engine whose writes may skip
/// the log) and the ranges come from a [`Sequencer`](crate::Sequencer), the
/// others need not be posted at all: with
/// [`post_skipping`](Self::post_skipping) and
/// [`drain_until_skipping`](Self::drain_until_skipping), every number below
/// the sequencer's published position that nobody posted counts as
/// skipped. That holds when each item is taken before its range is
/// finished, which `drain_until_skipping`'s callers do by waiting for it.
/// A write that skips then touches nothing of the queue.
///
/// # Examples
///
/// ```
/// use ordered_publish::{OrderedQueue, Sequencer};
///
/// let seq = Sequencer::new(0, 64);
/// let log = OrderedQueue::new(0, 64);
/// let mut written = Vec::new();
/// let (a, b) = (seq.reserve(2), seq.reserve(1));
/// log.post(b.clone(), "second");
/// assert!(log.drain(|_, pass| written.extend(pass.drain(..).map(|(_, r)| r))));
/// assert!(written.is_empty()); // "first" is not posted yet
/// log.post(a, "first");
/// log.drain(|range, pass| {
///     assert_eq!(range, 0..3); // one pass, both records
///     written.extend(pass.drain(..).map(|(_, r)| r));
/// });
/// assert_eq!(written, ["first", "second"]);
/// ```
pub struct OrderedQueue<T> {
    /// Which ranges are posted; its published position is where the first
    /// unposted range starts.
    posted: Tracker,
    /// `slots[start % capacity]`: the item posted under the range starting
    /// at `start` and not yet taken, or null.
    slots: Box<[AtomicPtr<Posted<T>>]>,
    /// What every pass writes, on lines of its own: posters read `slots`
    /// on every post, and would miss it after every pass if they shared.
    drainer: CachePadded<Drainer<T>>,
}

/// The drain role and what waiters read of it.
struct Drainer<T> {
    /// The drain role.
    drain: Mutex<DrainState<T>>,
    /// How many times a drainer let go, for `drain_until`'s waiters (a
    /// mutex cannot be looked at without taking it).
    releases: AtomicU64,
    /// Where the next pass starts (`DrainState::taken`), for waiters.
    taken: AtomicU64,
}

// SAFETY: the queue owns the posted items (boxed, reached through its
// slots) and hands each to exactly one drainer: it moves `T`s between
// threads, so it is `Send` and `Sync` when `T` is `Send`, as a channel is.
unsafe impl<T: Send> Send for OrderedQueue<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send> Sync for OrderedQueue<T> {}

impl<T> fmt::Debug for OrderedQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OrderedQueue")
            .field("posted", &self.posted)
            .finish_non_exhaustive()
    }
}

impl<T> OrderedQueue<T> {
    /// A queue whose first range starts at `first`, with `capacity` slots
    /// (rounded up to a power of two, at least 2).
    ///
    /// # Examples
    ///
    /// ```
    /// let q: ordered_publish::OrderedQueue<Vec<u8>> = ordered_publish::OrderedQueue::new(1, 100);
    /// assert_eq!((q.posted(), q.capacity()), (1, 128));
    /// ```
    pub fn new(first: u64, capacity: usize) -> OrderedQueue<T> {
        let posted = Tracker::new(first, capacity);
        let slots = (0..posted.capacity())
            .map(|_| AtomicPtr::new(ptr::null_mut()))
            .collect();
        OrderedQueue {
            posted,
            slots,
            drainer: CachePadded::new(Drainer {
                drain: Mutex::new(DrainState {
                    taken: first,
                    pass: Vec::new(),
                }),
                releases: AtomicU64::new(0),
                taken: AtomicU64::new(first),
            }),
        }
    }

    /// The number of slots.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(ordered_publish::OrderedQueue::<u8>::new(0, 5).capacity(), 8);
    /// ```
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Where the first range not yet posted starts: everything below is
    /// posted (maybe taken).
    ///
    /// # Examples
    ///
    /// ```
    /// let q = ordered_publish::OrderedQueue::new(0, 8);
    /// q.post(0..2, ());
    /// assert_eq!(q.posted(), 2);
    /// ```
    pub fn posted(&self) -> u64 {
        self.posted.published()
    }

    fn slot(&self, start: u64) -> &AtomicPtr<Posted<T>> {
        &self.slots[(start & self.mask()) as usize]
    }

    /// Posts `item` under `range` (not empty, not posted before, starting
    /// less than the capacity past the drained position).
    ///
    /// Release: whatever the caller did before is visible to the drainer
    /// that takes the item.
    ///
    /// # Panics
    ///
    /// If `range` is empty, or its slot still holds an untaken item (the
    /// range starts too far ahead).
    ///
    /// # Examples
    ///
    /// ```
    /// let q = ordered_publish::OrderedQueue::new(0, 8);
    /// q.post(1..2, 'b'); // in any order
    /// q.post(0..1, 'a');
    /// let mut got = String::new();
    /// q.drain(|_, pass| got.extend(pass.drain(..).map(|(_, c)| c)));
    /// assert_eq!(got, "ab");
    /// ```
    pub fn post(&self, range: Range<u64>, item: T) {
        assert!(
            !range.is_empty(),
            "an empty range has nothing to post under"
        );
        let posted = Box::into_raw(Box::new(Posted {
            end: range.end,
            item,
        }));
        // Release: the drainer's Acquire swap sees the item; the tracker's
        // finish below orders this store before the published position's
        // move, which the drainer acquires before it looks at the slot.
        // Relaxed on failure: we only panic then.
        let slot = self.slot(range.start);
        if slot
            .compare_exchange(ptr::null_mut(), posted, Release, Relaxed)
            .is_err()
        {
            // SAFETY: the box is still ours: it went into no slot.
            drop(unsafe { Box::from_raw(posted) });
            panic!("a range posted beyond the queue's capacity");
        }
        self.posted.finish(range);
    }

    /// Posts `range` with nothing to take (a write that skips the log):
    /// drainers pass over it, and their handlers see it only in the pass's
    /// whole range. Costs no allocation. As [`post`](Self::post) otherwise.
    ///
    /// # Panics
    ///
    /// As [`post`](Self::post), and if `range.end` is 2^63 or more (2^31 on
    /// 32-bit targets): the slot holds it shifted into a pointer's width.
    ///
    /// # Examples
    ///
    /// ```
    /// let q = ordered_publish::OrderedQueue::new(0, 8);
    /// q.post(0..1, 'a');
    /// q.post_skip(1..3);
    /// q.post(3..4, 'b');
    /// let mut passes = Vec::new();
    /// q.drain(|range, pass| passes.push((range, pass.drain(..).collect::<Vec<_>>())));
    /// assert_eq!(passes, [(0..4, vec![(0..1, 'a'), (3..4, 'b')])]);
    /// ```
    pub fn post_skip(&self, range: Range<u64>) {
        assert!(
            !range.is_empty(),
            "an empty range has nothing to post under"
        );
        assert!(
            range.end < 1 << 63 && usize::try_from(range.end << 1 | 1).is_ok(),
            "a range end too large to mark a skip"
        );
        // Release, Relaxed on failure: as in `post`.
        if self
            .slot(range.start)
            .compare_exchange(ptr::null_mut(), skip_mark(range.end), Release, Relaxed)
            .is_err()
        {
            panic!("a range posted beyond the queue's capacity");
        }
        self.posted.finish(range);
    }

    /// Posts `item` under `range`, as [`post`](Self::post), for a queue
    /// drained with [`drain_until_skipping`](Self::drain_until_skipping):
    /// when ranges below that nobody posted hold the posted position more
    /// than the capacity behind `range`, first counts those that `finished`
    /// has published as skipped (taking the drain, so this may wait for a
    /// pass). `range` must start less than the capacity past `finished`'s
    /// published position, as a [`Sequencer`](crate::Sequencer)'s
    /// reservations do.
    ///
    /// # Panics
    ///
    /// As [`post`](Self::post).
    ///
    /// # Examples
    ///
    /// Ranges that skip the queue are never posted; a later post does not
    /// run out of slots:
    ///
    /// ```
    /// use ordered_publish::{OrderedQueue, Sequencer};
    ///
    /// let seq = Sequencer::new(0, 4);
    /// let log = OrderedQueue::new(0, 4);
    /// for _ in 0..10 {
    ///     let unlogged = seq.reserve(1);
    ///     seq.finish(unlogged);
    /// }
    /// let logged = seq.reserve(1);
    /// log.post_skipping(logged.clone(), "record", seq.tracker());
    /// let mut written = Vec::new();
    /// log.drain_until_skipping(logged.end, seq.tracker(), |range, pass| {
    ///     assert_eq!(range, 10..11); // the skipped numbers are left out
    ///     written.extend(pass.drain(..));
    /// });
    /// assert_eq!(written, [(10..11, "record")]);
    /// ```
    pub fn post_skipping(&self, range: Range<u64>, item: T, finished: &Tracker) {
        if range.start - self.posted().min(range.start) > self.mask() {
            {
                // As in `pass`: the count moves once the drain is free.
                let _released: Released<'_>;
                let mut state = self
                    .drainer
                    .drain
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                _released = Released(&self.drainer.releases);
                self.skip_finished(&mut state, finished);
            }
            // Waiters that found the drain busy sleep on `finished`'s bell.
            finished.wake_waiters();
        }
        self.post(range, item);
    }

    fn mask(&self) -> u64 {
        self.slots.len() as u64 - 1
    }

    /// Takes the numbers from the drained position up to `finished`'s
    /// published position, when nothing is posted at the posted position
    /// and `finished` is past it; the caller holds the drain.
    ///
    /// Nobody posted under the unposted numbers among them, nor will: each
    /// was finished, and an item is taken before its range is finished, so
    /// an item posted there would have been taken, and the drain would be
    /// past it. For the same reason whatever is posted and untaken below the
    /// posted position is a skip. Passes' ranges leave these numbers out.
    fn skip_finished(&self, state: &mut DrainState<T>, finished: &Tracker) {
        // Acquire (both): the finishes, and through them the takes, happen
        // before what follows.
        let to = finished.published();
        let from = self.posted();
        if to <= from {
            return;
        }
        let mut at = state.taken;
        while at < from {
            let slot = self.slot(at);
            // Relaxed (both): a skip mark carries nothing to see, and a
            // slot is emptied under the drain, as in `pass`. An item stays
            // in its slot (dropped with the queue) when the check fails.
            let end = skipped_to(slot.load(Relaxed))
                .expect("an item posted under a range finished before it was taken");
            slot.store(ptr::null_mut(), Relaxed);
            at = end;
        }
        // Counted as posted, with nothing in the slots: `from` is at the
        // posted position, and nobody else posts under it.
        self.posted.finish(from..to);
        state.taken = to;
        // Release: as a pass's end (`PassDone`).
        self.drainer.taken.store(to, Release);
    }

    /// Drains, if no other thread is draining: takes every posted item in
    /// range order, from where the last pass stopped up to the first range
    /// not yet posted, and hands them to `handle` as one pass (with the
    /// pass's whole range), still holding the drain, so passes are handled
    /// in order. The handler should empty the `Vec` (items left in it are
    /// dropped after it returns). Looks again after letting go, so an item
    /// posted while it drained is not left behind.
    ///
    /// Returns `false` when another thread holds the drain (it will take
    /// whatever is posted), `true` otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// let q = ordered_publish::OrderedQueue::new(0, 8);
    /// q.post(0..3, "three entries");
    /// let mut passes = Vec::new();
    /// q.drain(|range, pass| passes.push((range, pass.len())));
    /// assert_eq!(passes, [(0..3, 1)]);
    /// assert!(q.drain(|_, _| unreachable!("nothing new")));
    /// ```
    pub fn drain(&self, mut handle: impl FnMut(Range<u64>, &mut Vec<(Range<u64>, T)>)) -> bool {
        loop {
            let Some(taken) = self.pass(&mut handle, None) else {
                return false;
            };
            // SeqCst fence: either a poster that found the drain busy sees
            // it free when it tries again (it tries after its own post and
            // fence, in `finish`), or our look below sees its post.
            fence(SeqCst);
            if self.posted.published() <= taken {
                return true;
            }
        }
    }

    /// Sees the items posted below `end` taken (the caller posted one
    /// ending there): drains one pass if no other thread is draining, else
    /// waits until the drainer took them or let go, and tries again.
    ///
    /// Unlike [`drain`](Self::drain), a drainer here never looks again for
    /// items posted while it drained: their posters take them, each with
    /// everything posted before it in one pass. So a drainer writes for
    /// writers that were already waiting, not for those still arriving,
    /// and nobody is kept draining for everyone else. Use one of the two
    /// for a queue, not both.
    ///
    /// # Examples
    ///
    /// ```
    /// use ordered_publish::{OrderedQueue, Sequencer};
    ///
    /// let seq = Sequencer::new(0, 64);
    /// let log = OrderedQueue::new(0, 64);
    /// let written = std::sync::Mutex::new(Vec::new());
    /// std::thread::scope(|s| {
    ///     for name in ["a", "b", "c"] {
    ///         let (seq, log, written) = (&seq, &log, &written);
    ///         s.spawn(move || {
    ///             let range = seq.reserve(1);
    ///             log.post(range.clone(), (range.start, name));
    ///             log.drain_until(range.end, |_, pass| {
    ///                 written.lock().unwrap().extend(pass.drain(..).map(|(_, item)| item));
    ///             });
    ///             assert!(log.taken() >= range.end); // ours is written
    ///             seq.finish(range);
    ///         });
    ///     }
    /// });
    /// let written = written.into_inner().unwrap();
    /// assert!(written.windows(2).all(|w| w[0].0 < w[1].0)); // in sequence order
    /// ```
    pub fn drain_until(&self, end: u64, handle: impl FnMut(Range<u64>, &mut Vec<(Range<u64>, T)>)) {
        self.drain_until_inner(end, None, handle);
    }

    /// [`drain_until`](Self::drain_until) for a queue whose ranges come
    /// from a sequencer, `finished` its tracker, and that only some ranges
    /// are posted to (with [`post_skipping`](Self::post_skipping)): every
    /// number below `finished`'s published position that nobody posted
    /// counts as skipped, so ranges with nothing to take need no post.
    ///
    /// The caller waits here before it finishes its range (so each item is
    /// taken before its range is finished: what makes the skipping sound),
    /// and a range with nothing to take is simply finished. The ranges
    /// handed to `handle` leave the skipped numbers out. Waiting for an
    /// earlier range that is still unposted lasts until it is posted or
    /// finished; sleeping waiters are woken by `finished`'s finishers.
    ///
    /// # Panics
    ///
    /// If an item was posted under a range that `finished` finished before
    /// the item was taken.
    ///
    /// # Examples
    ///
    /// ```
    /// use ordered_publish::{OrderedQueue, Sequencer};
    ///
    /// let seq = Sequencer::new(0, 64);
    /// let log = OrderedQueue::new(0, 64);
    /// let written = std::sync::Mutex::new(Vec::new());
    /// std::thread::scope(|s| {
    ///     for t in 0..4 {
    ///         let (seq, log, written) = (&seq, &log, &written);
    ///         s.spawn(move || {
    ///             let range = seq.reserve(1);
    ///             if t % 2 == 0 {
    ///                 // Logged: posted and taken before it is finished.
    ///                 log.post_skipping(range.clone(), range.start, seq.tracker());
    ///                 log.drain_until_skipping(range.end, seq.tracker(), |_, pass| {
    ///                     written.lock().unwrap().extend(pass.drain(..).map(|(_, n)| n));
    ///                 });
    ///             }
    ///             seq.finish(range); // unlogged ones only this
    ///         });
    ///     }
    /// });
    /// let written = written.into_inner().unwrap();
    /// assert_eq!(written.len(), 2);
    /// assert!(written[0] < written[1]); // in sequence order
    /// ```
    pub fn drain_until_skipping(
        &self,
        end: u64,
        finished: &Tracker,
        handle: impl FnMut(Range<u64>, &mut Vec<(Range<u64>, T)>),
    ) {
        self.drain_until_inner(end, Some(finished), handle);
    }

    /// `drain_until`, skipping what `finished` published when there is one
    /// (its bell is then the one waiters sleep on).
    fn drain_until_inner(
        &self,
        end: u64,
        finished: Option<&Tracker>,
        mut handle: impl FnMut(Range<u64>, &mut Vec<(Range<u64>, T)>),
    ) {
        let bell = finished.unwrap_or(&self.posted);
        // Whether a pass would move the drain: something posted past it, or
        // (skipping) something finished past it.
        let movable = |taken: u64| {
            self.posted.published() > taken || finished.is_some_and(|f| f.published() > taken)
        };
        loop {
            // Acquire: the drainer's pass (what its handler did) happens
            // before our return.
            let taken = self.drainer.taken.load(Acquire);
            if taken >= end {
                return;
            }
            // Acquire, with the Release increment: a drainer's pass
            // happens before we see it let go.
            let released = self.drainer.releases.load(Acquire);
            if movable(taken) {
                if self.pass(&mut handle, finished).is_some() {
                    // Wake the threads that waited for the drain to be free.
                    bell.wake_waiters();
                    continue;
                }
                // Busy: wait until the drainer took ours or let go. It
                // rings the bell after letting go.
                bell.wait_until(0, || {
                    // Acquire, both: pairs with the drainer's Release stores.
                    self.drainer.taken.load(Acquire) >= end
                        || self.drainer.releases.load(Acquire) != released
                });
            } else {
                // An earlier range is not posted yet (skipping: nor
                // finished): its poster will take ours with it, or post and
                // leave the drain to us. Posting rings the queue's bell;
                // skipping, the poster's pass rings `finished`'s, and so
                // does finishing.
                bell.wait_until(0, || {
                    // Acquire: pairs with the drainer's Release store of
                    // `taken`.
                    self.drainer.taken.load(Acquire) >= end || movable(taken)
                });
            }
        }
    }

    /// Where the next drain pass starts: every item posted below was
    /// taken by a drainer (and handed to its handler, which has returned).
    ///
    /// # Examples
    ///
    /// ```
    /// let q = ordered_publish::OrderedQueue::new(0, 8);
    /// q.post(0..2, ());
    /// assert_eq!(q.taken(), 0);
    /// q.drain_until(2, |_, pass| pass.clear());
    /// assert_eq!(q.taken(), 2);
    /// ```
    pub fn taken(&self) -> u64 {
        // Acquire: see `drain_until`.
        self.drainer.taken.load(Acquire)
    }

    /// One pass, if no other thread holds the drain: takes every item
    /// posted so far, in range order, and hands them to `handle`. Returns
    /// where the next pass starts, or `None` when the drain was busy.
    /// With `finished`, first counts the finished numbers nobody posted as
    /// skipped (see `drain_until_skipping`).
    fn pass(
        &self,
        handle: &mut impl FnMut(Range<u64>, &mut Vec<(Range<u64>, T)>),
        finished: Option<&Tracker>,
    ) -> Option<u64> {
        // Declared before the lock's guard, so dropped after it: the count
        // moves only once the drain is free, however the handler ends.
        let _released: Released<'_>;
        let mut state = match self.drainer.drain.try_lock() {
            Ok(state) => state,
            // A handler panicked mid-pass: the positions are still right.
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        _released = Released(&self.drainer.releases);
        // Items a panicking handler left behind were taken already.
        state.pass.clear();
        if let Some(finished) = finished {
            self.skip_finished(&mut state, finished);
        }
        // Acquire: the posts below the position happen before our takes
        // of their slots.
        let target = self.posted.published();
        let start = state.taken;
        if target > start {
            let mut at = start;
            while at < target {
                // Acquire: pairs with the poster's Release swap.
                let posted = self.slot(at).swap(ptr::null_mut(), Acquire);
                assert!(!posted.is_null(), "a posted range without its item");
                if let Some(end) = skipped_to(posted) {
                    at = end;
                    continue;
                }
                // SAFETY: the pointer came from `Box::into_raw` in `post`,
                // and swapping null in took it out of the slot for us alone
                // (the drain lock keeps other drainers out, and no poster
                // reuses the slot before we take it).
                let Posted { end, item } = *unsafe { Box::from_raw(posted) };
                state.pass.push((at..end, item));
                at = end;
            }
            state.taken = at;
            let DrainState { pass, .. } = &mut *state;
            // However the handler ends (it may panic), the items count as
            // taken.
            let _done = PassDone {
                taken: &self.drainer.taken,
                at,
            };
            handle(start..at, pass);
            pass.clear();
        }
        Some(state.taken)
    }
}

/// The slot value of a skipped range ending at `end`: odd, so that it is
/// never the address of a `Posted` (aligned to at least 8 bytes), and no
/// pointer to anything.
fn skip_mark<T>(end: u64) -> *mut Posted<T> {
    // `post_skip` checked that it fits.
    ptr::without_provenance_mut((end << 1 | 1) as usize)
}

/// The end of the skipped range `posted` marks, or `None` for an item.
fn skipped_to<T>(posted: *mut Posted<T>) -> Option<u64> {
    let bits = posted.addr() as u64;
    (bits & 1 == 1).then_some(bits >> 1)
}

/// Publishes a pass's end when dropped.
struct PassDone<'a> {
    taken: &'a AtomicU64,
    at: u64,
}

impl Drop for PassDone<'_> {
    fn drop(&mut self) {
        // Release: the handler's work happens before a waiter's Acquire
        // load of the position.
        self.taken.store(self.at, Release);
    }
}

/// Counts a drainer's letting go when dropped.
struct Released<'a>(&'a AtomicU64);

impl Drop for Released<'_> {
    fn drop(&mut self) {
        // Release: see `OrderedQueue::drain_until`.
        self.0.fetch_add(1, Release);
    }
}

impl<T> Drop for OrderedQueue<T> {
    fn drop(&mut self) {
        for slot in &*self.slots {
            // Acquire: we own everything now; any item left is ours to drop.
            let posted = slot.swap(ptr::null_mut(), Acquire);
            if !posted.is_null() && skipped_to(posted).is_none() {
                // SAFETY: as in `drain`: the box came from `post` and is in
                // no slot any more.
                drop(unsafe { Box::from_raw(posted) });
            }
        }
    }
}
