//! The write group: queue, leader election, group forming, parallel launch,
//! completion and hand-off.

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::ptr;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst};
use std::time::Duration;

use crossbeam_utils::CachePadded;

use crate::commit::{ApplyMode, Commit, GroupMembers, Lead, WriteError, item_mut, item_ref};
use crate::gather::{Gathering, Queued};
use crate::leader_cell::{LeaderCell, next_group_id};
use crate::options::Options;
use crate::stats::{Counters, Stats};
use crate::sync::{self, AtomicPtr, AtomicU32, AtomicUsize, OwnedFutex, UnsafeCell};
use crate::waiter::{
    COMPLETED, FirstLook, JOIN_GOALS, LEADER, PARALLEL_CALLER, PARALLEL_WRITER, SLEEPING, Waiter,
    YieldCredit,
};

/// A panic caught in a callback, to be resumed on its owner's thread.
type Panic = Box<dyn Any + Send + 'static>;

/// The low bit of the queue head: set while the group is stalled.
const STALL_TAG: usize = 1;

/// Publish tickets wrap within these bits; a few groups at most are ever
/// between their lead and their publish.
const TICKET_MASK: u32 = u32::MAX >> 1;
/// The most busy-wait hints between two looks at the queue while barging.
const BARGE_MAX_STEP: u32 = 256;

/// The high bit of `publish_turn`: some finished group sleeps on it.
const PUBLISH_SLEEPERS: u32 = !TICKET_MASK;

#[inline]
fn untagged<T>(word: *mut Waiter<T>) -> *mut Waiter<T> {
    word.map_addr(|addr| addr & !STALL_TAG)
}

#[inline]
fn is_stalled<T>(word: *mut Waiter<T>) -> bool {
    word.addr() & STALL_TAG != 0
}

/// `waiter` carrying `like`'s stall tag.
#[inline]
fn tagged_like<T>(waiter: *const Waiter<T>, like: *mut Waiter<T>) -> *mut Waiter<T> {
    waiter
        .cast_mut()
        .map_addr(|addr| addr | (like.addr() & STALL_TAG))
}

/// Futex-based group commit: writers queue lock-free, the first leads a group
/// that does one shared step for everyone; see the [crate docs](crate).
///
/// `T` is the work item; `C` the [`Commit`] that says what a group does.
/// Every method takes `&self`: share the group between threads by reference
/// or in an `Arc`.
///
/// # Examples
///
/// ```
/// use write_group::{Commit, GroupMembers, Lead, Options, WriteGroup};
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// /// Numbers each write; the group's last number becomes visible at publish.
/// #[derive(Default)]
/// struct Sequencer {
///     next: AtomicU64,
///     visible: AtomicU64,
/// }
///
/// impl Commit<u64> for Sequencer {
///     type Token = u64;
///     type Error = ();
///     fn lead(&self, group: &mut GroupMembers<'_, u64>) -> Result<Lead<u64>, ()> {
///         let first = self.next.fetch_add(group.len() as u64, Ordering::Relaxed) + 1;
///         for (i, seq) in group.iter_mut().enumerate() {
///             *seq = first + i as u64;
///         }
///         Ok(Lead::parallel(first + group.len() as u64 - 1))
///     }
///     fn publish(&self, last: u64) {
///         self.visible.store(last, Ordering::Release);
///     }
/// }
///
/// let sequencer = Sequencer::default();
/// let group = WriteGroup::new(Options::default());
/// std::thread::scope(|s| {
///     for _ in 0..4 {
///         s.spawn(|| {
///             for _ in 0..100 {
///                 let seq = group.write(&sequencer, 0).unwrap();
///                 // A returned write is visible.
///                 assert!(sequencer.visible.load(Ordering::Acquire) >= seq);
///             }
///         });
///     }
/// });
/// assert_eq!(sequencer.visible.load(Ordering::Relaxed), 400);
/// assert_eq!(group.stats().members, 400);
/// ```
pub struct WriteGroup<T, C> {
    /// What every group touches; see [`Hot`].
    hot: CachePadded<Hot<T>>,
    /// Bumped when a stall is released; stalled writers sleep on it.
    stall_epoch: AtomicU32,
    options: Options,
    counters: CachePadded<Counters>,
    /// Yield credit of waits for a role.
    join_credit: YieldCredit,
    /// Yield credit of parallel members waiting for their group to complete.
    complete_credit: YieldCredit,
    /// When a barging writer first looks at the queue.
    first_look: FirstLook,
    /// Writers in flight that may wait for more, and the leader's wait.
    gathering: Gathering,
    /// Process-unique: binds [`LeaderCell`]s to this group.
    id: u64,
    _commit: PhantomData<fn(&C)>,
}

/// The words every group touches, on one cache line: when consecutive
/// writes run on different cores, a lone writer's group then moves one line
/// between them, not four (the queue head, the ticket, the publish turn and
/// the statistics each had a line of their own).
struct Hot<T> {
    /// The newest queued writer (null when idle), tagged with `STALL_TAG`.
    /// Anyone pushes; only the leader of the moment rewires or detaches.
    newest: AtomicPtr<Waiter<T>>,
    /// The publish ticket of the next successful group (wrapping in
    /// `TICKET_MASK`). Only leaders touch it.
    next_ticket: AtomicU32,
    /// The ticket whose group publishes next, plus `PUBLISH_SLEEPERS` while
    /// a finished group sleeps waiting for its turn.
    publish_turn: AtomicU32,
    /// Groups of one, the statistic a lone writer bumps (leaders only; see
    /// `Counters::group`).
    groups_of_one: AtomicU64,
}

impl<T, C> fmt::Debug for WriteGroup<T, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteGroup")
            .field("options", &self.options)
            .field("stalled", &self.is_stalled())
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl<T, C> Default for WriteGroup<T, C> {
    fn default() -> Self {
        Self::new(Options::default())
    }
}

/// How a write ended, stored in its node by whoever completes it.
enum Outcome<E> {
    /// Applied and published (or not yet decided).
    Applied,
    /// The group's lead step failed.
    Failed(E),
    /// Failed for a stall (`no_slowdown`).
    Stalled,
    /// The leader's lead step panicked.
    LeaderPanicked,
    /// This write's own apply step panicked.
    Panicked(Panic),
}

/// A writer's node: lives on the submitter's stack (or in the box of an
/// unbatched guard) for as long as it is queued.
///
/// `#[repr(C)]` with the waiter first, so that the queue's `*const Waiter<T>`
/// links can be cast back to the node: every waiter linked into a
/// `WriteGroup<T, C>` is the head of a `Node<T, C>`.
#[repr(C)]
struct Node<T, C: Commit<T>> {
    waiter: Waiter<T>,
    /// The parallel group, set by whoever launches this member.
    group: UnsafeCell<*const GroupCtx<T, C>>,
    outcome: UnsafeCell<Outcome<C::Error>>,
}

impl<T, C: Commit<T>> Node<T, C> {
    /// A write's node, pointing to its item, which must outlive the node.
    #[inline]
    fn new(item: &mut T, size: usize, no_slowdown: bool) -> Self {
        Self::with_waiter(Waiter::new(ptr::from_mut(item), size, no_slowdown, false))
    }

    /// An unbatched entry's node, with no item.
    fn unbatched() -> Self {
        Self::with_waiter(Waiter::new(ptr::null_mut(), 0, false, true))
    }

    #[inline]
    fn with_waiter(waiter: Waiter<T>) -> Self {
        Self {
            waiter,
            group: UnsafeCell::new(ptr::null()),
            outcome: UnsafeCell::new(Outcome::Applied),
        }
    }

    /// The node's waiter, with the provenance of the whole node.
    #[inline]
    fn as_waiter(&self) -> *const Waiter<T> {
        (self as *const Self).cast()
    }

    /// The node a queued waiter heads.
    #[inline]
    fn of(waiter: *const Waiter<T>) -> *const Self {
        waiter.cast()
    }

    /// Stores the outcome of the node `waiter` heads.
    ///
    /// # Safety
    ///
    /// `waiter` must be live, and the caller the only thread touching its
    /// outcome (its owner waits for `COMPLETED` or runs no callback).
    #[inline]
    unsafe fn set_outcome(waiter: *const Waiter<T>, outcome: Outcome<C::Error>) {
        // SAFETY: the caller guarantees the node is live and ours to write.
        unsafe { (*Self::of(waiter)).outcome.with_mut(|slot| *slot = outcome) };
    }

    /// Turns the finished node of a write into its result, resuming a panic
    /// owed to this thread. Takes the outcome out in place rather than
    /// moving the node (a memcpy of the whole node per write).
    ///
    /// # Safety
    ///
    /// The node is a write's (not an unbatched entry's), called once, and
    /// nobody else refers to it any more.
    #[inline]
    unsafe fn finish(&self, deferred: Option<Panic>) -> Result<(), WriteError<C::Error>> {
        // SAFETY: the caller's contract: the node is ours alone now; its
        // outcome is not read again.
        let outcome = unsafe {
            self.outcome
                .with_mut(|slot| ptr::replace(slot, Outcome::Applied))
        };
        let error = match outcome {
            Outcome::Applied => None,
            Outcome::Failed(error) => Some(WriteError::Group(error)),
            Outcome::Stalled => Some(WriteError::Stalled),
            Outcome::LeaderPanicked => Some(WriteError::LeaderPanicked),
            Outcome::Panicked(panic) => resume_unwind(panic),
        };
        if let Some(panic) = deferred {
            resume_unwind(panic);
        }
        match error {
            None => Ok(()),
            Some(error) => Err(error),
        }
    }
}

/// What a leader gathered.
struct Formed<T> {
    leader: *const Waiter<T>,
    last: *const Waiter<T>,
    len: usize,
    bytes: usize,
    /// The writer right after the group when known at forming time (excluded
    /// writers or a cut-off); null when the group reached the queue's head.
    successor: *const Waiter<T>,
}

impl<T> Clone for Formed<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Formed<T> {}

/// A parallel group's shared context, on the leader's stack. The leader
/// cannot return before it is completed, which happens after every member
/// stopped using the context.
struct GroupCtx<T, C: Commit<T>> {
    commit: *const C,
    formed: Formed<T>,
    stride: usize,
    /// Members still applying; the one that brings it to 0 exits the group.
    running: AtomicUsize,
    /// Shared by `apply` calls, then taken by `publish`.
    token: UnsafeCell<Option<C::Token>>,
    /// The group's publish ticket.
    ticket: u32,
}

/// How a group ends.
enum Exit<C: Commit<T>, T> {
    Publish(*const C, C::Token, u32),
    Failed(C::Error),
    LeaderPanicked,
}

/// Aborts the process if dropped: armed while our node is linked, where an
/// unwind would free a node other threads still point to. Only our own code
/// runs there (callbacks are caught), so this is a bug net, not a path.
struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        // Under loom a panic here is a model failure (say, a race loom
        // caught): let it reach loom, which stops the execution and reports.
        #[cfg(not(loom))]
        {
            eprintln!("write-group: internal panic while a writer was queued; aborting");
            std::process::abort();
        }
    }
}

impl<T, C> WriteGroup<T, C> {
    /// An idle write group.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Options, WriteGroup};
    ///
    /// let group: WriteGroup<Vec<u8>, ()> = WriteGroup::new(Options { spin_count: 0, ..Options::default() });
    /// assert!(!group.is_stalled());
    /// ```
    #[must_use]
    pub fn new(options: Options) -> Self {
        Self {
            hot: CachePadded::new(Hot {
                newest: AtomicPtr::new(ptr::null_mut()),
                next_ticket: AtomicU32::new(0),
                publish_turn: AtomicU32::new(0),
                groups_of_one: AtomicU64::new(0),
            }),
            stall_epoch: AtomicU32::new(0),
            options,
            counters: CachePadded::new(Counters::default()),
            join_credit: YieldCredit::default(),
            complete_credit: YieldCredit::default(),
            first_look: FirstLook::default(),
            gathering: Gathering::default(),
            id: next_group_id(),
            _commit: PhantomData,
        }
    }

    /// The group's process-unique id.
    #[inline]
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// A [`LeaderCell`] bound to this group: state that this group's leaders
    /// borrow mutably without a lock.
    ///
    /// # Examples
    ///
    /// See [`LeaderCell`].
    #[must_use]
    pub fn leader_cell<S>(&self, value: S) -> LeaderCell<S> {
        LeaderCell::new(self, value)
    }

    /// The options the group was built with.
    #[must_use]
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// A snapshot of the counters; see [`Stats`].
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteGroup};
    ///
    /// struct Nop;
    /// impl Commit<u8> for Nop {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn lead(&self, _: &mut GroupMembers<'_, u8>) -> Result<Lead<()>, ()> {
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// group.write(&Nop, 1).unwrap();
    /// assert_eq!((group.stats().groups, group.stats().members), (1, 1));
    /// group.reset_stats();
    /// assert_eq!(group.stats().groups, 0);
    /// ```
    #[must_use]
    pub fn stats(&self) -> Stats {
        self.counters.snapshot(&self.hot.groups_of_one)
    }

    /// Sets every counter to 0. Call it while no write is in flight: a
    /// leader's count in progress may otherwise survive the reset.
    pub fn reset_stats(&self) {
        self.counters.reset(&self.hot.groups_of_one);
    }

    /// Whether the group is stalled.
    #[must_use]
    pub fn is_stalled(&self) -> bool {
        // Relaxed: a report; the stall protocol itself uses SeqCst.
        is_stalled(self.hot.newest.load(Relaxed))
    }

    /// Stalls writes: until [`release_stall`](Self::release_stall), new
    /// writes wait (or fail with [`WriteError::Stalled`] when
    /// [`no_slowdown`](Commit::no_slowdown)). Writes already queued are
    /// admitted and complete, except `no_slowdown` ones that a leader
    /// gathers while the stall is on: those fail with
    /// [`WriteError::Stalled`] when the next group forms (that is, once the
    /// group in flight, if any, is done: do not wait for the stall to end
    /// inside a callback). A `no_slowdown` writer that becomes leader is
    /// admitted. Unbatched entries are not held back. Returns false if the
    /// group was already stalled.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteError, WriteGroup};
    ///
    /// struct Impatient;
    /// impl Commit<u8> for Impatient {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn no_slowdown(&self, _: &u8) -> bool {
    ///         true
    ///     }
    ///     fn lead(&self, _: &mut GroupMembers<'_, u8>) -> Result<Lead<()>, ()> {
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// assert!(group.stall());
    /// assert_eq!(group.write(&Impatient, 1), Err(WriteError::Stalled));
    /// assert!(group.release_stall());
    /// assert_eq!(group.write(&Impatient, 1), Ok(1));
    /// ```
    pub fn stall(&self) -> bool {
        // SeqCst: cold path; keeps the tag/epoch handshake with stalled
        // writers obviously free of lost wake-ups.
        let mut word = self.hot.newest.load(SeqCst);
        loop {
            if is_stalled(word) {
                return false;
            }
            let stalled = word.map_addr(|addr| addr | STALL_TAG);
            // SeqCst: as above.
            match self
                .hot
                .newest
                .compare_exchange_weak(word, stalled, SeqCst, SeqCst)
            {
                Ok(_) => return true,
                Err(actual) => word = actual,
            }
        }
    }

    /// Lifts a stall and wakes the writes it held. Returns false if the group
    /// was not stalled.
    pub fn release_stall(&self) -> bool {
        // SeqCst: see `stall`.
        let mut word = self.hot.newest.load(SeqCst);
        loop {
            if !is_stalled(word) {
                return false;
            }
            // SeqCst: see `stall`.
            match self
                .hot
                .newest
                .compare_exchange_weak(word, untagged(word), SeqCst, SeqCst)
            {
                Ok(_) => break,
                Err(actual) => word = actual,
            }
        }
        // SeqCst: a stalled writer reads the epoch before the tag; seeing the
        // tag set means it read the old epoch, so its futex wait returns.
        self.stall_epoch.fetch_add(1, SeqCst);
        sync::shared_wake_all(&self.stall_epoch);
        true
    }

    /// Sleeps until the stall is lifted (or spuriously).
    #[cold]
    fn wait_for_stall_release(&self) {
        loop {
            // SeqCst: see `release_stall`.
            let epoch = self.stall_epoch.load(SeqCst);
            // SeqCst: see `release_stall`.
            if !is_stalled(self.hot.newest.load(SeqCst)) {
                return;
            }
            sync::shared_wait(&self.stall_epoch, epoch);
        }
    }

    /// Pushes `waiter` onto the queue. `Ok(true)`: the queue was empty and
    /// the caller leads at once. `Err(())`: stalled and `no_slowdown`.
    #[inline]
    fn link(
        &self,
        waiter: *const Waiter<T>,
        no_slowdown: bool,
        ignore_stall: bool,
        mut barge_budget: u32,
    ) -> Result<bool, ()> {
        // Guess an idle queue: the CAS checks the guess, and a new waiter's
        // `link_older` is already null.
        let mut word = ptr::null_mut::<Waiter<T>>();
        let mut barged = false;
        loop {
            // AcqRel: Release publishes our node to the leader that acquires
            // the head; Acquire, when the queue was empty, pairs with the
            // previous group's Release detach so we see it published.
            // Relaxed on failure: the value is only the next guess.
            match self.hot.newest.compare_exchange_weak(
                word,
                tagged_like(waiter, word),
                AcqRel,
                Relaxed,
            ) {
                Ok(_) => {
                    let leads = untagged(word).is_null();
                    if leads && barged {
                        self.counters.barge();
                    }
                    return Ok(leads);
                }
                Err(actual) => word = actual,
            }
            if barge_budget > 0 && !untagged(word).is_null() && !is_stalled(word) {
                word = self.wait_to_barge(&mut barge_budget);
                barged = word.is_null();
            }
            // After the barging wait, which may end on a stall that began
            // while it watched: the CAS must never expect a stalled word.
            while is_stalled(word) && !ignore_stall {
                if no_slowdown {
                    return Err(());
                }
                self.wait_for_stall_release();
                // Relaxed: a guess, as above.
                word = self.hot.newest.load(Relaxed);
            }
            // SAFETY: `waiter` is our own, not yet shared. Relaxed: published
            // by the Release CAS.
            unsafe { (*waiter).link_older.store(untagged(word), Relaxed) };
        }
    }

    /// Watches a busy queue, hoping it empties so that the caller leads at
    /// once instead of queueing behind a group that may be short; spends up
    /// to `budget` busy-wait hints. The first look comes after the group's
    /// adaptive pace ([`FirstLook`]), and each later one after twice as many
    /// hints as the last (at most `BARGE_MAX_STEP`), so that a writer
    /// submitting back to back keeps its cache lines between writes. Returns
    /// the last word seen; a spent budget is left at zero.
    #[cold]
    fn wait_to_barge(&self, budget: &mut u32) -> *mut Waiter<T> {
        let first = self.first_look.hints();
        let mut step = first;
        let mut first_look = true;
        loop {
            let pauses = step.min(*budget);
            for _ in 0..pauses {
                sync::spin_loop();
            }
            *budget -= pauses;
            // Relaxed: only a guess for the CAS in `link`, which checks it.
            let word = self.hot.newest.load(Relaxed);
            let empty = untagged(word).is_null();
            if first_look {
                self.first_look.record(first, !empty);
                first_look = false;
            }
            if empty || is_stalled(word) || *budget == 0 {
                return word;
            }
            step = step.saturating_mul(2).min(BARGE_MAX_STEP);
        }
    }

    /// Moves `waiter` to `state` and wakes its owner if it sleeps.
    ///
    /// # Safety
    ///
    /// `waiter` must be live and its owner waiting for this transition; the
    /// caller must not touch it afterwards (the owner may return at once).
    #[inline]
    unsafe fn set_state(waiter: *const Waiter<T>, state: u32) {
        // SAFETY: the waiter is live (caller's contract); the waker keeps
        // only what it needs to wake the owner once the node is gone.
        let waker = unsafe { OwnedFutex::waker(ptr::addr_of!((*waiter).futex)) };
        // SAFETY: as above; after this swap we no longer touch the node.
        // Release: publishes everything we wrote for the owner (its outcome,
        // item, links, group) to its Acquire load of the state.
        let old = unsafe { (*waiter).futex.state.swap(state, Release) };
        if old & SLEEPING != 0 {
            waker.wake();
        }
    }

    /// Waits until our own waiter's state has a bit of `goals`; returns it.
    /// `busy_wait`: spin and yield first (see [`Options`]); without it, sleep
    /// at once.
    #[inline]
    fn await_state(
        &self,
        futex: &OwnedFutex,
        goals: u32,
        credit: &YieldCredit,
        busy_wait: bool,
    ) -> u32 {
        // Acquire: pairs with the Release swap in `set_state`, so what the
        // waker wrote for us is visible.
        let state = futex.state.load(Acquire);
        if state & goals != 0 {
            return state;
        }
        if !busy_wait {
            return self.sleep_until(futex, goals, state);
        }
        self.await_state_slow(futex, goals, credit, state)
    }

    #[cold]
    fn await_state_slow(
        &self,
        futex: &OwnedFutex,
        goals: u32,
        credit: &YieldCredit,
        mut state: u32,
    ) -> u32 {
        for _ in 0..self.options.spin_count {
            sync::spin_loop();
            // Acquire: as in `await_state`.
            state = futex.state.load(Acquire);
            if state & goals != 0 {
                self.counters.spin_success();
                return state;
            }
        }
        #[cfg(not(loom))]
        match self.yield_phase(futex, goals, credit) {
            Ok(state) => {
                self.counters.yield_success();
                return state;
            }
            Err(Some(last_seen)) => state = last_seen,
            Err(None) => {}
        }
        #[cfg(loom)]
        let _ = credit;
        self.sleep_until(futex, goals, state)
    }

    /// The adaptive yield phase: `Ok(state)` if the goal came while
    /// yielding, else the last state seen, if it looked.
    #[cfg(not(loom))]
    fn yield_phase(
        &self,
        futex: &OwnedFutex,
        goals: u32,
        credit: &YieldCredit,
    ) -> Result<u32, Option<u32>> {
        use std::time::{Duration, Instant};
        /// Slow yields (another thread ran) that end the phase early.
        const MAX_SLOW_YIELDS: u32 = 3;

        let options = &self.options;
        if options.max_yield_usec == 0 {
            return Err(None);
        }
        let sampled = options.adaptive_yield && YieldCredit::sample();
        if options.adaptive_yield && !sampled && !credit.favourable() {
            return Err(None);
        }
        let budget = Duration::from_micros(options.max_yield_usec.into());
        let slow = Duration::from_micros(options.slow_yield_usec.into());
        let start = Instant::now();
        let mut yield_start = start;
        let mut slow_yields = 0;
        let mut update_credit = sampled;
        let outcome = loop {
            std::thread::yield_now();
            // Acquire: as in `await_state`.
            let state = futex.state.load(Acquire);
            if state & goals != 0 {
                break Ok(state);
            }
            let now = Instant::now();
            // A clock too coarse to see the yield counts as slow.
            if now == yield_start || now - yield_start >= slow {
                slow_yields += 1;
                if slow_yields >= MAX_SLOW_YIELDS {
                    update_credit = true;
                    break Err(Some(state));
                }
            }
            if now - start > budget {
                break Err(Some(state));
            }
            yield_start = now;
        };
        if options.adaptive_yield && update_credit {
            credit.record(outcome.is_ok());
        }
        outcome
    }

    /// Sleeps on our futex until the state has a bit of `goals`; `state` is
    /// the last value seen.
    fn sleep_until(&self, futex: &OwnedFutex, goals: u32, mut state: u32) -> u32 {
        let mut counted = false;
        while state & goals == 0 {
            if state & SLEEPING == 0 {
                // Relaxed: only announces that we sleep; the state we act on
                // is re-read with Acquire.
                match futex
                    .state
                    .compare_exchange(state, state | SLEEPING, Relaxed, Relaxed)
                {
                    Ok(_) => state |= SLEEPING,
                    Err(_) => {
                        // Acquire: as in `await_state`.
                        state = futex.state.load(Acquire);
                        continue;
                    }
                }
            }
            if !counted {
                counted = true;
                self.counters.futex_sleep();
            }
            futex.wait(state);
            // Acquire: as in `await_state`.
            state = futex.state.load(Acquire);
        }
        state
    }

    /// Takes the next publish ticket; only a leader calls this.
    #[inline]
    fn take_ticket(&self) -> u32 {
        // Relaxed: leaders alone touch it, and leadership passes with
        // Release/Acquire.
        let ticket = self.hot.next_ticket.load(Relaxed);
        self.hot
            .next_ticket
            .store(ticket.wrapping_add(1) & TICKET_MASK, Relaxed);
        ticket
    }

    /// Whether every group before `ticket` has published. A pipelined group
    /// hands off early only then, so at most two groups apply at once: more
    /// would queue on the publish order, and with more threads than cores
    /// one descheduled applier would hold up every publish behind it.
    #[inline]
    fn publishes_next(&self, ticket: u32) -> bool {
        // Relaxed: a hint; `await_publish_turn` synchronises.
        self.hot.publish_turn.load(Relaxed) & TICKET_MASK == ticket
    }

    /// Waits until the group with `ticket` may publish.
    #[inline]
    fn await_publish_turn(&self, ticket: u32) {
        // Acquire: pairs with the Release in `end_publish_turn`, so the
        // previous group's publish happens before ours.
        let turn = self.hot.publish_turn.load(Acquire);
        if turn & TICKET_MASK != ticket {
            self.await_publish_turn_slow(ticket, turn);
        }
    }

    #[cold]
    fn await_publish_turn_slow(&self, ticket: u32, mut turn: u32) {
        for _ in 0..self.options.spin_count {
            sync::spin_loop();
            // Acquire: as in `await_publish_turn`.
            turn = self.hot.publish_turn.load(Acquire);
            if turn & TICKET_MASK == ticket {
                return;
            }
        }
        while turn & TICKET_MASK != ticket {
            if turn & PUBLISH_SLEEPERS == 0 {
                // AcqRel: the bit we add must carry the publish of the group
                // whose turn-store it overwrites, so that whoever reads our
                // value (Acquire) sees that publish. Acquire on failure: the
                // value read may say it is our turn.
                if let Err(actual) = self.hot.publish_turn.compare_exchange(
                    turn,
                    turn | PUBLISH_SLEEPERS,
                    AcqRel,
                    Acquire,
                ) {
                    turn = actual;
                    continue;
                }
                turn |= PUBLISH_SLEEPERS;
            }
            self.counters.futex_sleep();
            sync::shared_wait(&self.hot.publish_turn, turn);
            // Acquire: as in `await_publish_turn`.
            turn = self.hot.publish_turn.load(Acquire);
        }
    }

    /// Passes the publish turn from `ticket` to the next group.
    /// `handed_off`: whether our group handed leadership on before it
    /// published (a pipelined group of one).
    #[inline]
    fn end_publish_turn(&self, ticket: u32, handed_off: bool) {
        let next = ticket.wrapping_add(1) & TICKET_MASK;
        if !handed_off {
            // Tickets after ours are taken only after our hand-off, and
            // every group before ours has published, so nobody sleeps on the
            // turn: a plain store, one atomic read-modify-write less per
            // group. Release: our publish happens before the next group's.
            debug_assert_eq!(
                self.hot.publish_turn.load(Relaxed),
                ticket,
                "a sleeper on the publish turn of a group that has not handed off"
            );
            self.hot.publish_turn.store(next, Release);
            return;
        }
        // Release: as above.
        let old = self.hot.publish_turn.swap(next, Release);
        if old & PUBLISH_SLEEPERS != 0 {
            sync::shared_wake_all(&self.hot.publish_turn);
        }
    }

    /// Fills in `link_newer` from `from` down towards `stop`, until it meets
    /// a waiter whose link is already set.
    ///
    /// # Safety
    ///
    /// The caller leads, acquired the head `from` was read from, and `stop`
    /// is queued below `from`.
    unsafe fn link_newer_chain(from: *const Waiter<T>, stop: *const Waiter<T>) {
        let mut waiter = from;
        while waiter != stop {
            // SAFETY: every waiter from the head down to `stop` is queued,
            // hence live. Relaxed: links are leader-only; the head's Acquire
            // covers the owners' own stores of `link_older`.
            unsafe {
                let older = (*waiter).link_older.load(Relaxed);
                debug_assert!(!older.is_null(), "the chain reaches the leader");
                if !(*older).link_newer.load(Relaxed).is_null() {
                    break;
                }
                (*older).link_newer.store(waiter.cast_mut(), Relaxed);
                waiter = older;
            }
        }
    }

    /// Makes `new` take the place of `old` as the newest kept writer: swaps
    /// the head if `old` is still it, otherwise re-points the arrival that
    /// linked onto `old`.
    ///
    /// # Safety
    ///
    /// The caller leads, and `old` was the head it gathered up to.
    unsafe fn replace_newest(&self, old: *const Waiter<T>, new: *const Waiter<T>) {
        // Acquire: if writers arrived, we walk their links below.
        let mut word = self.hot.newest.load(Acquire);
        while untagged(word).cast_const() == old {
            // Relaxed on success: arrivals read nothing through the head, and
            // the next leader gets our links with its leadership. Acquire on
            // failure: as above.
            match self.hot.newest.compare_exchange_weak(
                word,
                tagged_like(new, word),
                Relaxed,
                Acquire,
            ) {
                Ok(_) => return,
                Err(actual) => word = actual,
            }
        }
        let mut waiter = untagged(word).cast_const();
        loop {
            // SAFETY: the writers above `old` are queued, hence live; only
            // the leader writes their links. Relaxed: as in `link_newer_chain`.
            unsafe {
                let older = (*waiter).link_older.load(Relaxed);
                if older.cast_const() == old {
                    (*waiter).link_older.store(new.cast_mut(), Relaxed);
                    return;
                }
                waiter = older;
            }
        }
    }

    /// Detaches the queue if `last` is still its newest writer (returns
    /// null), otherwise returns the writer queued right after `last`.
    ///
    /// # Safety
    ///
    /// The caller leads (or exits the group `last` ends), and every writer
    /// linked so far below the head is consistent with `link_newer_chain`.
    unsafe fn detach_or_next(&self, last: *const Waiter<T>) -> *const Waiter<T> {
        // Guess that nobody queued behind `last` and no stall is on; the CAS
        // checks the guess.
        let mut word = last.cast_mut();
        while untagged(word).cast_const() == last {
            let empty = word.map_addr(|addr| addr & STALL_TAG);
            // Release: the next writer to find the queue empty acquires this
            // in `link` and sees our group published. Acquire on failure: if
            // writers arrived, we walk their links below.
            match self
                .hot
                .newest
                .compare_exchange_weak(word, empty, Release, Acquire)
            {
                Ok(_) => return ptr::null(),
                Err(actual) => word = actual,
            }
        }
        // SAFETY: the caller's contract; `last` is live until we complete it.
        unsafe {
            Self::link_newer_chain(untagged(word), last);
            // Relaxed: leader-only link, written just above or by a leader.
            (*last).link_newer.load(Relaxed)
        }
    }

    /// Hands leadership to the writer after `last` (`successor`, or found in
    /// the queue when null), or leaves the queue empty.
    ///
    /// # Safety
    ///
    /// As for `detach_or_next`; `successor`, when not null, is queued right
    /// after `last`.
    unsafe fn hand_off(&self, last: *const Waiter<T>, successor: *const Waiter<T>) {
        let next = if successor.is_null() {
            // SAFETY: the caller's contract.
            unsafe { self.detach_or_next(last) }
        } else {
            successor
        };
        if next.is_null() {
            return;
        }
        // SAFETY: `next` is queued and waits for a role, so it is live; its
        // `link_older` names a member of the finishing group, which it must
        // never follow. Relaxed: published by `set_state`'s Release.
        unsafe {
            (*next).link_older.store(ptr::null_mut(), Relaxed);
            Self::set_state(next, LEADER);
        }
    }
}

impl<T, C> WriteGroup<T, C>
where
    T: Send,
    C: Commit<T> + Sync,
    C::Token: Send + Sync,
    C::Error: Send,
{
    /// Submits `item`: queues it, and either leads its group or waits for the
    /// group's leader; returns the item once its group was published.
    ///
    /// # Errors
    ///
    /// - [`WriteError::Group`] with a clone of the error if the group's
    ///   [`Commit::lead`] step failed;
    /// - [`WriteError::Stalled`] if the group is stalled and the write is
    ///   [`no_slowdown`](Commit::no_slowdown);
    /// - [`WriteError::LeaderPanicked`] if the leader panicked in `lead`.
    ///
    /// In every error case the item was not applied.
    ///
    /// # Panics
    ///
    /// Resumes a panic of a callback that ran for this write; see
    /// [`Commit`]'s panic section.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteError, WriteGroup};
    ///
    /// struct FailingLog;
    /// impl Commit<u32> for FailingLog {
    ///     type Token = ();
    ///     type Error = &'static str;
    ///     fn lead(&self, _: &mut GroupMembers<'_, u32>) -> Result<Lead<()>, &'static str> {
    ///         Err("disk full")
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// assert_eq!(group.write(&FailingLog, 7), Err(WriteError::Group("disk full")));
    /// ```
    #[inline]
    pub fn write(&self, commit: &C, mut item: T) -> Result<T, WriteError<C::Error>> {
        self.write_in_place(commit, &mut item)?;
        Ok(item)
    }

    /// Submits the item behind `item` without moving it: [`write`](Self::write)
    /// with the item left in the caller's frame, where the group's leader
    /// (and, in a parallel group, the member or caller that applies it) reads
    /// and updates it through the borrow. A write then costs no copy of the
    /// item in or out, which counts for large items: by value, the item is
    /// copied into the writer's frame and back out into the result, and for
    /// an item of more than a few words those copies are a large part of a
    /// lone write's cost (measurements in
    /// `benches/results/write-group/2026-12-04.md`, "Writes in place"). The
    /// caller keeps the item whatever the outcome, including after a failed
    /// group step, with any changes the callbacks made to it.
    ///
    /// # Errors
    ///
    /// As [`write`](Self::write); in every error case the item was not applied.
    ///
    /// # Panics
    ///
    /// As [`write`](Self::write).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteGroup};
    ///
    /// /// Stamps each record with a sequence number, as a log's leader would.
    /// struct Stamp;
    /// impl Commit<[u8; 128]> for Stamp {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn lead(&self, group: &mut GroupMembers<'_, [u8; 128]>) -> Result<Lead<()>, ()> {
    ///         for (sequence, record) in (1u8..).zip(group.iter_mut()) {
    ///             record[0] = sequence;
    ///         }
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// let mut record = [0; 128];
    /// group.write_in_place(&Stamp, &mut record).unwrap();
    /// assert_eq!(record[0], 1);
    /// ```
    #[inline]
    pub fn write_in_place(&self, commit: &C, item: &mut T) -> Result<(), WriteError<C::Error>> {
        let window = commit.gather_window(item);
        // A writer that gathers expects an expensive group step: it queues
        // at once, to share it.
        if window.is_zero() && self.try_lead_alone() {
            return self.write_alone(commit, item);
        }
        self.write_queued(commit, item, window)
    }

    /// Takes the lead of an idle queue without a node: the lone-writer
    /// fast path, one CAS as a mutex's lock.
    #[inline]
    fn try_lead_alone(&self) -> bool {
        // Acquire: pairs with the Release that emptied the queue, so we see
        // the previous group published. Relaxed on failure: we then queue,
        // and `link` reads the head again.
        self.hot
            .newest
            .compare_exchange(ptr::null_mut(), self.lone_marker(), Acquire, Relaxed)
            .is_ok()
    }

    /// What the queue head holds while a writer that found it idle leads
    /// without a node: an address no node can have (our own), never
    /// dereferenced as a waiter. Writers that arrive meanwhile link onto it
    /// and get the lead from `release_alone_slow`. Stable while it is in
    /// the queue, since a write borrows the group.
    #[inline]
    fn lone_marker(&self) -> *mut Waiter<T> {
        ptr::from_ref(self).cast_mut().cast()
    }

    /// Leads a group of one whose item stays in the caller's frame: lead,
    /// apply, publish and hand on, with no node and no queue walk. What
    /// `write_queued` does for a writer that finds the queue empty, at the
    /// cost of a mutex's lock and unlock in atomic operations.
    #[inline]
    fn write_alone(&self, commit: &C, item: &mut T) -> Result<(), WriteError<C::Error>> {
        let size = commit.size(item);
        self.counters.group(1, &self.hot.groups_of_one);
        // SAFETY: we lead (the marker is at the head), and the view lives
        // only for this `lead` call.
        let mut members = unsafe { GroupMembers::alone(item, size, self.id) };
        let led = catch_unwind(AssertUnwindSafe(|| commit.lead(&mut members)));
        let Lead { mode, token } = match led {
            Ok(Ok(lead)) => lead,
            Ok(Err(error)) => {
                self.release_alone();
                return Err(WriteError::Group(error));
            }
            Err(panic) => {
                self.release_alone();
                resume_unwind(panic);
            }
        };
        let ticket = self.take_ticket();
        let early_hand_off = mode == ApplyMode::Pipelined && self.publishes_next(ticket);
        if early_hand_off {
            self.release_alone();
        }
        let applied = catch_unwind(AssertUnwindSafe(|| commit.apply(item, &token)));
        let published = self.publish_in_turn(commit, token, ticket, early_hand_off);
        if !early_hand_off {
            self.release_alone();
        }
        // As for a write in a node: a panic of `apply` first, then one of
        // `publish`.
        if let Err(panic) = applied {
            resume_unwind(panic);
        }
        if let Some(panic) = published {
            resume_unwind(panic);
        }
        Ok(())
    }

    /// Ends a lone writer's lead: empties the queue, or hands the lead to
    /// the oldest writer that linked onto the marker meanwhile.
    #[inline]
    fn release_alone(&self) {
        // Release: the next writer to find the queue empty acquires this and
        // sees our group published. Relaxed on failure: the slow path
        // re-reads with Acquire.
        if self
            .hot
            .newest
            .compare_exchange(self.lone_marker(), ptr::null_mut(), Release, Relaxed)
            .is_err()
        {
            self.release_alone_slow();
        }
    }

    #[cold]
    fn release_alone_slow(&self) {
        let marker = self.lone_marker();
        // Acquire: pairs with the Release CASes in `link`, so the links of
        // the writers queued above the marker are visible.
        let mut word = self.hot.newest.load(Acquire);
        while untagged(word) == marker {
            // Only a stall came meanwhile: keep its tag. Release: as in
            // `release_alone`; Acquire on failure: as above.
            match self.hot.newest.compare_exchange_weak(
                word,
                word.map_addr(|addr| addr & STALL_TAG),
                Release,
                Acquire,
            ) {
                Ok(_) => return,
                Err(actual) => word = actual,
            }
        }
        let mut oldest = untagged(word).cast_const();
        loop {
            // SAFETY: the writers above the marker are queued and wait for a
            // role that only we can give, so they are live. Relaxed: covered
            // by the head's Acquire.
            let older = unsafe { (*oldest).link_older.load(Relaxed) };
            if older == marker {
                break;
            }
            oldest = older;
        }
        // SAFETY: `oldest` waits for a role, so it is live; it must never
        // follow its link to the marker. Relaxed: published by `set_state`'s
        // Release, which also publishes our group to the new leader.
        unsafe {
            (*oldest).link_older.store(ptr::null_mut(), Relaxed);
            Self::set_state(oldest, LEADER);
        }
    }

    /// A write that queues: the writer leads a group of the writers queued
    /// behind it, or waits for the group that takes its item.
    fn write_queued(
        &self,
        commit: &C,
        item: &mut T,
        window: Duration,
    ) -> Result<(), WriteError<C::Error>> {
        let size = commit.size(item);
        let no_slowdown = commit.no_slowdown(item);
        let gathers = !window.is_zero();
        if gathers {
            self.gathering.enter();
        }
        let owned = Node::<T, C>::new(item, size, no_slowdown);
        // From here the node stays put: others reach it through raw pointers
        // until it is completed (or, as leader, completes everyone else).
        let node = &owned;
        let me = node.as_waiter();
        let barge_budget = if gathers { 0 } else { self.options.barge_spins };
        let leads_at_once = match self.link(me, no_slowdown, false, barge_budget) {
            Ok(leads) => leads,
            Err(()) => {
                if gathers {
                    self.gathering.leave();
                }
                return Err(WriteError::Stalled);
            }
        };
        let armed = AbortOnUnwind;
        // One call site for `lead`, inlined: a lone writer then pays for one
        // stack frame, not two.
        let role = if leads_at_once {
            LEADER
        } else {
            self.gathering.joined(gathers);
            // A writer that gathers expects the group ahead of it to take
            // long (an `fdatasync`): it sleeps at once, leaving the cores to
            // the writers about to join and to the leader. Spinning and
            // yielding through a sync cost 32 µs of CPU per write at 32
            // writers on 2 cores, against 24 µs, and made groups smaller.
            self.await_state(&node.waiter.futex, JOIN_GOALS, &self.join_credit, !gathers)
        };
        let deferred = match role {
            LEADER => self.lead(commit, node, window),
            PARALLEL_WRITER => self.run_member(node, false),
            PARALLEL_CALLER => self.run_member(node, true),
            _completed => None,
        };
        std::mem::forget(armed);
        if gathers {
            self.gathering.leave();
        }
        // SAFETY: nobody refers to the node any more: it was completed, or it
        // led and completed everyone else.
        unsafe { owned.finish(deferred) }
    }

    /// Waits until every write queued before is done, then holds off every
    /// group until the guard is dropped: for work that must not overlap a
    /// group, such as switching an engine's memtable. Writes submitted
    /// meanwhile queue behind the guard and go on when it is dropped. Not
    /// held back by a stall.
    ///
    /// Forgetting the guard (`mem::forget`) blocks all writes forever.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteGroup};
    ///
    /// struct Nop;
    /// impl Commit<u8> for Nop {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn lead(&self, _: &mut GroupMembers<'_, u8>) -> Result<Lead<()>, ()> {
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// std::thread::scope(|s| {
    ///     let guard = group.enter_unbatched();
    ///     let writer = s.spawn(|| group.write(&Nop, 1));
    ///     while guard.queued() == 0 {
    ///         std::thread::yield_now();
    ///     }
    ///     // The write waits behind the guard...
    ///     assert_eq!(group.stats().groups, 0);
    ///     drop(guard);
    ///     // ...and goes on once it is dropped.
    ///     assert_eq!(writer.join().unwrap(), Ok(1));
    /// });
    /// ```
    pub fn enter_unbatched(&self) -> UnbatchedGuard<'_, T, C> {
        let node = Box::into_raw(Box::new(Node::<T, C>::unbatched()));
        let me = node.cast_const().cast::<Waiter<T>>();
        let leads_at_once = match self.link(me, false, true, 0) {
            Ok(leads) => leads,
            Err(()) => unreachable!("an unbatched entry ignores stalls"),
        };
        if !leads_at_once {
            // SAFETY: the node is ours and live until the guard frees it.
            let futex = unsafe { &(*me).futex };
            self.await_state(futex, LEADER, &self.join_credit, true);
        }
        // Pipelined groups may still be applying: wait until every group
        // that took a ticket has published. Relaxed: we lead, and leaders
        // alone touch `next_ticket`.
        self.await_publish_turn(self.hot.next_ticket.load(Relaxed));
        UnbatchedGuard { group: self, node }
    }

    /// Leads a group: waits up to `window` for more writers, gathers the
    /// group, runs the lead step, applies (or launches the parallel apply)
    /// and exits. Returns a panic owed to this thread.
    #[inline]
    fn lead(&self, commit: &C, node: &Node<T, C>, window: Duration) -> Option<Panic> {
        let me = node.as_waiter();
        if !window.is_zero() {
            self.wait_for_writers(me, window);
        }
        // SAFETY: we lead.
        let (formed, compatible_panic) = unsafe { self.form_group(commit, me) };
        self.counters.group(formed.len, &self.hot.groups_of_one);
        // SAFETY: the members wait for a role and only we touch their items
        // until we launch or complete them.
        let mut members = unsafe { GroupMembers::new(me, formed.len, formed.bytes, self.id) };
        let led = catch_unwind(AssertUnwindSafe(|| commit.lead(&mut members)));
        let deferred = match led {
            Err(panic) => {
                // SAFETY: we lead the group `formed` describes.
                unsafe { self.exit_group(formed, me, Exit::LeaderPanicked) };
                Some(panic)
            }
            // SAFETY: as above.
            Ok(Err(error)) => unsafe { self.exit_group(formed, me, Exit::Failed(error)) },
            Ok(Ok(Lead { mode, token })) => {
                let ticket = self.take_ticket();
                match mode {
                    _ if formed.len == 1 => {
                        let early_hand_off =
                            mode == ApplyMode::Pipelined && self.publishes_next(ticket);
                        // SAFETY: as above.
                        unsafe { self.finish_alone(commit, formed, token, ticket, early_hand_off) }
                    }
                    // SAFETY: as above; `node` is ours.
                    ApplyMode::Parallel | ApplyMode::Pipelined => unsafe {
                        self.run_parallel(commit, node, formed, token, ticket)
                    },
                    // SAFETY: as above.
                    ApplyMode::Serial => unsafe {
                        Self::apply_serially(commit, formed, &token);
                        self.exit_group(formed, me, Exit::Publish(commit, token, ticket))
                    },
                }
            }
        };
        deferred.or(compatible_panic)
    }

    /// Waits up to `window` for the writers recently in flight to queue
    /// behind leader `me`; see `gather.rs`.
    #[cold]
    fn wait_for_writers(&self, me: *const Waiter<T>, window: Duration) {
        let max_members = self.options.max_group_members.max(1);
        let yield_for = Duration::from_micros(self.options.max_yield_usec.into());
        // SAFETY: we lead, so `me` stays queued and nobody else gives the
        // writers above us a role while we count.
        let waited = self
            .gathering
            .wait_for_writers(window, yield_for, max_members, || unsafe {
                self.count_queued(me)
            });
        self.counters.gathered(waited);
    }

    /// Counts the writers queued from the head down to leader `me`, and
    /// whether one of them is an unbatched entry or the queue is stalled.
    ///
    /// # Safety
    ///
    /// `me` leads.
    unsafe fn count_queued(&self, me: *const Waiter<T>) -> Queued {
        // Acquire: pairs with the Release CAS in `link`, so the links of
        // every queued writer are visible.
        let head_word = self.hot.newest.load(Acquire);
        let mut queued = Queued {
            writers: 1,
            urgent: is_stalled(head_word),
        };
        let mut waiter = untagged(head_word).cast_const();
        while waiter != me {
            // SAFETY: every writer from the head down to us is queued and
            // waits for a role only we can give, so it is live. Relaxed: the
            // owner's store of its link is covered by the head's Acquire.
            let w = unsafe { &*waiter };
            queued.writers += 1;
            queued.urgent |= w.unbatched;
            waiter = w.link_older.load(Relaxed).cast_const();
        }
        queued
    }

    /// Gathers the group behind leader `me` and rewires the queue: group,
    /// then excluded writers in their order, then the rest.
    ///
    /// # Safety
    ///
    /// `me` leads.
    #[inline]
    unsafe fn form_group(&self, commit: &C, me: *const Waiter<T>) -> (Formed<T>, Option<Panic>) {
        // Acquire: pairs with the Release CAS in `link`, so the fields of
        // every queued writer are visible.
        let head_word = self.hot.newest.load(Acquire);
        let head = untagged(head_word).cast_const();
        // SAFETY: our own waiter.
        let size = unsafe { (*me).size };
        let alone = Formed {
            leader: me,
            last: me,
            len: 1,
            bytes: size,
            successor: ptr::null(),
        };
        if head == me {
            return (alone, None);
        }
        // SAFETY: we lead and acquired the head.
        unsafe { self.gather(commit, alone, head, is_stalled(head_word)) }
    }

    /// The slow part of `form_group`, when writers are queued behind us.
    ///
    /// # Safety
    ///
    /// `formed` is our lone group, we lead, and `head` is the head we
    /// acquired.
    unsafe fn gather(
        &self,
        commit: &C,
        mut formed: Formed<T>,
        head: *const Waiter<T>,
        stalled: bool,
    ) -> (Formed<T>, Option<Panic>) {
        let me = formed.leader;
        // For every dereference in this function: the writers from us up to
        // `head` are queued and wait for a role, so they are live, and their
        // links are ours to read and write. Relaxed link accesses: see
        // `Waiter`.
        // SAFETY: we lead and acquired `head`, which is above us.
        unsafe { Self::link_newer_chain(head, me) };
        // SAFETY: our own item; nobody mutates it while we gather.
        let leader_item = unsafe { item_ref(me) };
        let cap = self.options.group_byte_cap(formed.bytes);
        let max_members = self.options.max_group_members.max(1);
        let mut panic = None;
        let (mut excluded_first, mut excluded_last) =
            (ptr::null::<Waiter<T>>(), ptr::null::<Waiter<T>>());
        let mut stalled_out = ptr::null_mut::<Waiter<T>>();
        let mut rest = ptr::null::<Waiter<T>>();
        // Until a writer is left out, the queue's links already describe
        // the group and need no writes.
        let mut rewired = false;
        // SAFETY: see above.
        let mut next = unsafe { (*me).link_newer.load(Relaxed).cast_const() };
        while !next.is_null() {
            let waiter = next;
            // SAFETY: see above.
            let w = unsafe { &*waiter };
            next = if waiter == head {
                ptr::null()
            } else {
                w.link_newer.load(Relaxed).cast_const()
            };
            if w.unbatched || formed.len >= max_members || formed.bytes.saturating_add(w.size) > cap
            {
                rest = waiter;
                break;
            }
            if stalled && w.no_slowdown {
                rewired = true;
                w.link_older.store(stalled_out, Relaxed);
                stalled_out = waiter.cast_mut();
                continue;
            }
            // SAFETY: see above; the item is shared while we gather.
            let other = unsafe { item_ref(waiter) };
            let compatible =
                match catch_unwind(AssertUnwindSafe(|| commit.compatible(leader_item, other))) {
                    Ok(compatible) => compatible,
                    Err(caught) => {
                        panic.get_or_insert(caught);
                        false
                    }
                };
            if compatible {
                if rewired {
                    w.link_older.store(formed.last.cast_mut(), Relaxed);
                    // SAFETY: see above.
                    unsafe { (*formed.last).link_newer.store(waiter.cast_mut(), Relaxed) };
                }
                formed.last = waiter;
                formed.len += 1;
                formed.bytes += w.size;
            } else {
                rewired = true;
                w.link_older.store(excluded_last.cast_mut(), Relaxed);
                if excluded_last.is_null() {
                    excluded_first = waiter;
                } else {
                    // SAFETY: see above.
                    unsafe {
                        (*excluded_last)
                            .link_newer
                            .store(waiter.cast_mut(), Relaxed)
                    };
                }
                excluded_last = waiter;
            }
        }
        // Splice: group, excluded writers, the rest of the queue.
        formed.successor = if excluded_first.is_null() {
            rest
        } else {
            excluded_first
        };
        if !rewired {
            return (formed, panic);
        }
        // SAFETY: see above.
        unsafe {
            (*formed.last)
                .link_newer
                .store(formed.successor.cast_mut(), Relaxed);
            if !excluded_first.is_null() {
                (*excluded_first)
                    .link_older
                    .store(formed.last.cast_mut(), Relaxed);
                (*excluded_last).link_newer.store(rest.cast_mut(), Relaxed);
            }
        }
        let newest_kept = if excluded_last.is_null() {
            formed.last
        } else {
            excluded_last
        };
        if !rest.is_null() {
            // SAFETY: see above.
            unsafe { (*rest).link_older.store(newest_kept.cast_mut(), Relaxed) };
        } else if newest_kept != head {
            // SAFETY: we lead and gathered up to `head`.
            unsafe { self.replace_newest(head, newest_kept) };
        }
        // Unlinked now: fail the stalled no_slowdown writers.
        while !stalled_out.is_null() {
            let waiter = stalled_out;
            // SAFETY: see above; read before completing, after which the
            // waiter may vanish.
            unsafe {
                stalled_out = (*waiter).link_older.load(Relaxed);
                Node::<T, C>::set_outcome(waiter, Outcome::Stalled);
                Self::set_state(waiter, COMPLETED);
            }
        }
        (formed, panic)
    }

    /// Applies, publishes and exits a successful group of one: what
    /// `apply_serially` and `exit_group` do, without their walks over the
    /// members (the common case when writes do not overlap).
    ///
    /// With `early_hand_off` (a pipelined group whose predecessors have all
    /// published) leadership passes on first, so that the next group's lead
    /// and apply overlap ours; the hand-off costs what it would after the
    /// publish.
    ///
    /// # Safety
    ///
    /// We lead `formed`, a group of one: our own write.
    #[inline]
    unsafe fn finish_alone(
        &self,
        commit: &C,
        formed: Formed<T>,
        token: C::Token,
        ticket: u32,
        early_hand_off: bool,
    ) -> Option<Panic> {
        if early_hand_off {
            // SAFETY: we lead `formed`; after the hand-off nobody reaches our
            // node through the queue (the successor's `link_older` is
            // cleared).
            unsafe { self.hand_off(formed.last, formed.successor) };
        }
        // SAFETY: our own node, a group of one, queued or not.
        unsafe { Self::apply_alone(commit, formed.leader, &token) };
        let deferred = self.publish_in_turn(commit, token, ticket, early_hand_off);
        if !early_hand_off {
            // SAFETY: we lead the group `formed` describes, which is over.
            unsafe { self.hand_off(formed.last, formed.successor) };
        }
        deferred
    }

    /// Applies the item of a group of one, recording a panic in its outcome.
    ///
    /// # Safety
    ///
    /// `me` is our own node, whose item and outcome only we touch.
    #[inline]
    unsafe fn apply_alone(commit: &C, me: *const Waiter<T>, token: &C::Token) {
        // SAFETY: the caller's contract.
        let item = unsafe { item_mut(me) };
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| commit.apply(item, token))) {
            // SAFETY: as above.
            unsafe { Node::<T, C>::set_outcome(me, Outcome::Panicked(panic)) };
        }
    }

    /// Waits for the group with `ticket` to be next, publishes it, and passes
    /// the turn on (see `end_publish_turn` for `handed_off`). Returns a panic
    /// of `publish`.
    #[inline]
    fn publish_in_turn(
        &self,
        commit: &C,
        token: C::Token,
        ticket: u32,
        handed_off: bool,
    ) -> Option<Panic> {
        self.await_publish_turn(ticket);
        let deferred = catch_unwind(AssertUnwindSafe(|| commit.publish(token))).err();
        self.end_publish_turn(ticket, handed_off);
        deferred
    }

    /// Applies every member's item on the leader's thread.
    ///
    /// # Safety
    ///
    /// We lead `formed`, whose members wait for completion.
    unsafe fn apply_serially(commit: &C, formed: Formed<T>, token: &C::Token) {
        let mut waiter = formed.leader;
        for i in 0..formed.len {
            // SAFETY: members are live and only we touch their items and
            // outcomes until we complete them.
            let item = unsafe { item_mut(waiter) };
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| commit.apply(item, token))) {
                // SAFETY: as above.
                unsafe { Node::<T, C>::set_outcome(waiter, Outcome::Panicked(panic)) };
            }
            if i + 1 < formed.len {
                // SAFETY: as above. Relaxed: leader-only link.
                waiter = unsafe { (*waiter).link_newer.load(Relaxed) };
            }
        }
    }

    /// Launches a parallel group, applies the leader's own item, and finishes.
    ///
    /// # Safety
    ///
    /// We lead `formed` (at least 2 members), and `node` is ours.
    unsafe fn run_parallel(
        &self,
        commit: &C,
        node: &Node<T, C>,
        formed: Formed<T>,
        token: C::Token,
        ticket: u32,
    ) -> Option<Panic> {
        let ctx = GroupCtx::<T, C> {
            commit,
            formed,
            stride: self.options.launch_stride(formed.len),
            running: AtomicUsize::new(formed.len),
            token: UnsafeCell::new(Some(token)),
            ticket,
        };
        let ctx: *const GroupCtx<T, C> = &ctx;
        let mut woken = 0;
        let mut waiter = formed.leader;
        // SAFETY: `ctx` lives on our stack until we are completed or finish
        // the group ourselves; members are live until the group completes,
        // which needs our own `finish_parallel` first.
        unsafe {
            for _ in 1..(*ctx).stride {
                // Relaxed: leader-only link.
                waiter = (*waiter).link_newer.load(Relaxed);
                Self::launch(waiter, ctx, PARALLEL_CALLER);
                woken += 1;
            }
            woken += Self::wake_every_stride(ctx, formed.leader);
            self.counters.leader_wakeups(woken);
            Self::apply_parallel(ctx, node.as_waiter());
            self.finish_parallel(ctx, node)
        }
    }

    /// Gives `waiter` its group and role.
    ///
    /// # Safety
    ///
    /// `waiter` is a member of `ctx`'s group waiting for a role, woken only
    /// by us.
    #[inline]
    unsafe fn launch(waiter: *const Waiter<T>, ctx: *const GroupCtx<T, C>, role: u32) {
        // SAFETY: the caller's contract; published by `set_state`'s Release.
        unsafe {
            (*Node::<T, C>::of(waiter))
                .group
                .with_mut(|group| *group = ctx);
            Self::set_state(waiter, role);
        }
    }

    /// Wakes every stride-th member after `from` as a parallel writer;
    /// returns how many.
    ///
    /// # Safety
    ///
    /// `ctx` is live, `from` a member of its group, and we have not yet
    /// finished our own apply (so no member can complete and vanish).
    unsafe fn wake_every_stride(ctx: *const GroupCtx<T, C>, from: *const Waiter<T>) -> usize {
        // SAFETY: the caller's contract.
        let (stride, last) = unsafe { ((*ctx).stride, (*ctx).formed.last) };
        let mut woken = 0;
        let mut waiter = from;
        loop {
            for _ in 0..stride {
                if waiter == last {
                    return woken;
                }
                // SAFETY: the caller's contract; a woken member keeps its
                // links. Relaxed: the group's links, ordered before our role
                // by the leader's Release.
                waiter = unsafe { (*waiter).link_newer.load(Relaxed) };
            }
            // SAFETY: the caller's contract: this member is ours to wake.
            unsafe { Self::launch(waiter, ctx, PARALLEL_WRITER) };
            woken += 1;
        }
    }

    /// Applies our own item in a parallel group.
    ///
    /// # Safety
    ///
    /// `ctx` is live and `me` is our member of its group.
    unsafe fn apply_parallel(ctx: *const GroupCtx<T, C>, me: *const Waiter<T>) {
        // SAFETY: the caller's contract: the leader's commit outlives the
        // group, the token is shared until the last member takes it, and our
        // item and outcome are ours alone.
        unsafe {
            let commit = &*(*ctx).commit;
            let token = (*ctx).token.with(|token| &*token);
            let token = token
                .as_ref()
                .unwrap_or_else(|| unreachable!("taken only after all applied"));
            let item = item_mut(me);
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| commit.apply(item, token))) {
                Node::<T, C>::set_outcome(me, Outcome::Panicked(panic));
            }
        }
    }

    /// Counts our member out; the last one exits the group, the others wait
    /// for it.
    ///
    /// # Safety
    ///
    /// `ctx` is live, `node` ours and a member that has applied.
    unsafe fn finish_parallel(
        &self,
        ctx: *const GroupCtx<T, C>,
        node: &Node<T, C>,
    ) -> Option<Panic> {
        // SAFETY: the context lives until we count out; copy what the exit
        // needs first.
        let (formed, commit, ticket) = unsafe { ((*ctx).formed, (*ctx).commit, (*ctx).ticket) };
        // SAFETY: as above; after this we touch the context only if we are
        // the last. AcqRel: Release hands our apply to the last member;
        // Acquire, for the last one, makes every apply visible to `publish`.
        let running = unsafe { (*ctx).running.fetch_sub(1, AcqRel) };
        if running == 1 {
            // SAFETY: every other member counted out and waits for
            // completion; the leader's stack (the context) lives until then.
            unsafe {
                let token = (*ctx).token.with_mut(|token| (*token).take());
                let token = token.unwrap_or_else(|| unreachable!("taken once"));
                self.exit_group(
                    formed,
                    node.as_waiter(),
                    Exit::Publish(commit, token, ticket),
                )
            }
        } else {
            self.await_state(&node.waiter.futex, COMPLETED, &self.complete_credit, true);
            None
        }
    }

    /// Runs a parallel member's role.
    fn run_member(&self, node: &Node<T, C>, caller: bool) -> Option<Panic> {
        let ctx = node.group.with(|group| {
            // SAFETY: set by our waker before our role, which we acquired.
            unsafe { *group }
        });
        // SAFETY: the context and the group's members are live until we count
        // out in `finish_parallel`.
        unsafe {
            if caller {
                self.counters
                    .caller_wakeups(Self::wake_every_stride(ctx, node.as_waiter()));
            }
            Self::apply_parallel(ctx, node.as_waiter());
            self.finish_parallel(ctx, node)
        }
    }

    /// Ends a group: publishes it (if it succeeded), hands leadership on,
    /// then completes every member but `me`, newest first, reading each link
    /// before waking its owner. Returns a panic owed to this thread.
    ///
    /// # Safety
    ///
    /// We lead `formed` or are its last member to finish; the other members
    /// wait for completion.
    unsafe fn exit_group(
        &self,
        formed: Formed<T>,
        me: *const Waiter<T>,
        exit: Exit<C, T>,
    ) -> Option<Panic> {
        let (failure, deferred) = match exit {
            Exit::Publish(commit, token, ticket) => {
                // SAFETY: the leader's commit outlives its group, which is
                // not completed yet.
                let commit = unsafe { &*commit };
                // The hand-off below comes after the publish.
                (None, self.publish_in_turn(commit, token, ticket, false))
            }
            Exit::Failed(error) => (Some(Outcome::Failed(error)), None),
            Exit::LeaderPanicked => (Some(Outcome::LeaderPanicked), None),
        };
        // SAFETY: the caller's contract.
        unsafe { self.hand_off(formed.last, formed.successor) };
        let mut waiter = formed.last;
        loop {
            // SAFETY: members are live until completed; read the link first,
            // as a completed member's frame may vanish at once. Relaxed: the
            // group's links, ordered before us by the launch or by `running`.
            unsafe {
                let older = if waiter == formed.leader {
                    ptr::null()
                } else {
                    (*waiter).link_older.load(Relaxed)
                };
                if let Some(failure) = &failure {
                    Node::<T, C>::set_outcome(waiter, failure.clone_failure());
                }
                if waiter != me {
                    Self::set_state(waiter, COMPLETED);
                }
                if waiter == formed.leader {
                    break;
                }
                waiter = older;
            }
        }
        deferred
    }
}

impl<E: Clone> Outcome<E> {
    /// A copy of a group-wide failure, for each member.
    fn clone_failure(&self) -> Self {
        match self {
            Outcome::Failed(error) => Outcome::Failed(error.clone()),
            Outcome::LeaderPanicked => Outcome::LeaderPanicked,
            _ => unreachable!("only group-wide failures are copied"),
        }
    }
}

/// A held unbatched entry, from [`WriteGroup::enter_unbatched`]: no group
/// runs until it is dropped, which lets the writes queued behind it go on.
///
/// The guard is neither `Send` nor `Sync`: drop it on the thread that
/// entered.
#[must_use = "the entry ends when the guard is dropped"]
pub struct UnbatchedGuard<'g, T, C: Commit<T>> {
    group: &'g WriteGroup<T, C>,
    /// Boxed so that it stays put while the guard moves; freed on drop.
    node: *mut Node<T, C>,
}

impl<T, C: Commit<T>> fmt::Debug for UnbatchedGuard<'_, T, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnbatchedGuard")
            .field("queued", &self.queued())
            .finish()
    }
}

impl<T, C: Commit<T>> UnbatchedGuard<'_, T, C> {
    /// The id of the group whose leadership the guard holds.
    #[inline]
    pub(crate) fn group_id(&self) -> u64 {
        self.group.id
    }

    /// How many writers (and unbatched entries) are queued behind this
    /// guard, waiting for it.
    ///
    /// # Examples
    ///
    /// See [`WriteGroup::enter_unbatched`].
    #[must_use]
    pub fn queued(&self) -> usize {
        let me = self.node.cast_const().cast::<Waiter<T>>();
        // Acquire: pairs with the Release CAS in `link`, so the links of the
        // writers queued behind us are visible.
        let mut waiter = untagged(self.group.hot.newest.load(Acquire)).cast_const();
        let mut queued = 0;
        while waiter != me {
            queued += 1;
            // SAFETY: we lead, so the writers above us are queued (live) and
            // only we may touch their links. Relaxed: covered by the Acquire
            // above.
            waiter = unsafe { (*waiter).link_older.load(Relaxed) };
        }
        queued
    }
}

impl<T, C: Commit<T>> Drop for UnbatchedGuard<'_, T, C> {
    fn drop(&mut self) {
        let me = self.node.cast_const().cast::<Waiter<T>>();
        // SAFETY: our entry leads a group of one, with nothing known after it.
        unsafe { self.group.hand_off(me, ptr::null()) };
        // SAFETY: the node came from `Box::into_raw` and nobody refers to it
        // any more: the next leader never follows its `link_older`.
        drop(unsafe { Box::from_raw(self.node) });
    }
}
