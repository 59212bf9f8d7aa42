//! The write group: queue, leader election, group forming, parallel launch,
//! completion and hand-off.
//!
//! This file holds the group's state and the entry points of a write; each
//! part of the protocol has a file of its own: the writer's node (`node`),
//! joining the queue and barging (`join`), the lone writer's fast path
//! (`alone`), waiting and waking (`wait`), leading a group (`lead`), group
//! forming (`form`), parallel groups (`parallel`), publish tickets
//! (`publish`), queue rewiring and hand-off (`queue`), stalls (`stall`) and
//! unbatched entries (`unbatched`).

mod alone;
mod form;
mod join;
mod lead;
mod node;
mod parallel;
mod publish;
mod queue;
mod stall;
mod unbatched;
mod wait;

pub use unbatched::UnbatchedGuard;

use std::fmt;
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use crossbeam_utils::CachePadded;

use crate::commit::{Commit, WriteError};
use crate::gather::Gathering;
use crate::leader_cell::{LeaderCell, next_group_id};
use crate::options::Options;
use crate::stats::{Counters, Stats};
use crate::sync::{AtomicPtr, AtomicU32};
use crate::waiter::{
    FirstLook, JOIN_GOALS, LEADER, PARALLEL_CALLER, PARALLEL_WRITER, Waiter, YieldCredit,
};

use node::Node;

/// The low bit of the queue head: set while the group is stalled.
const STALL_TAG: usize = 1;

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
    /// let group: WriteGroup<Vec<u8>, ()> = WriteGroup::new(Options::new().with_spin_count(0));
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
            join_credit: YieldCredit::for_roles(),
            complete_credit: YieldCredit::for_completion(),
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
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, LeaderCell, WriteGroup};
    ///
    /// struct CountGroups(LeaderCell<u64>);
    /// impl Commit<u8> for CountGroups {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn lead(&self, group: &mut GroupMembers<'_, u8>) -> Result<Lead<()>, ()> {
    ///         *self.0.get(group) += 1; // this group's leader: no lock needed
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// let groups = CountGroups(group.leader_cell(0));
    /// (1..=3).for_each(|item| assert_eq!(group.write(&groups, item), Ok(item)));
    /// assert_eq!(groups.0.into_inner(), group.stats().groups);
    /// ```
    ///
    /// See also [`LeaderCell`].
    #[must_use]
    pub fn leader_cell<S>(&self, value: S) -> LeaderCell<S> {
        LeaderCell::new(self, value)
    }

    /// The options the group was built with.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Options, WriteGroup};
    ///
    /// let group: WriteGroup<u8, ()> = WriteGroup::new(Options::new().with_max_group_members(8));
    /// assert_eq!(group.options().max_group_members(), 8);
    /// assert_eq!(WriteGroup::<u8, ()>::default().options(), &Options::default());
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, Stats, WriteGroup};
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
    /// group.reset_stats();
    /// assert_eq!(group.stats(), Stats::default(), "every counter, histogram included");
    /// ```
    pub fn reset_stats(&self) {
        self.counters.reset(&self.hot.groups_of_one);
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
        // Asked before the writer takes any role: a panic in either resumes
        // with the group as it was (a lone writer's lead, once taken, would
        // have to be given back).
        let size = commit.size(item);
        let no_slowdown = commit.no_slowdown(item);
        // A writer that gathers expects an expensive group step: it queues
        // at once, to share it.
        if window.is_zero() && self.try_lead_alone() {
            return self.write_alone(commit, item, size);
        }
        self.write_queued(commit, item, window, size, no_slowdown)
    }

    /// A write that queues: the writer leads a group of the writers queued
    /// behind it, or waits for the group that takes its item.
    fn write_queued(
        &self,
        commit: &C,
        item: &mut T,
        window: Duration,
        size: usize,
        no_slowdown: bool,
    ) -> Result<(), WriteError<C::Error>> {
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
}
