//! State that only the leader of one write group touches, borrowed mutably
//! without a lock.

use std::cell::UnsafeCell;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::commit::Commit;
use crate::group::{UnbatchedGuard, WriteGroup};
use crate::members::GroupMembers;

/// A source of process-unique write group ids (0 is never handed out).
static NEXT_GROUP_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh id for a new write group. Relaxed: ids only need to be distinct,
/// which the read-modify-write gives; they order nothing.
///
/// A plain std atomic even under loom: it is not part of the protocol.
pub(crate) fn next_group_id() -> u64 {
    NEXT_GROUP_ID.fetch_add(1, Relaxed)
}

/// State owned by the leaders of one [`WriteGroup`]: mutable through proof
/// of leadership, with no lock of its own.
///
/// Only one thread at a time leads a given write group, so state that only
/// [`Commit::lead`] (or the holder of an [`UnbatchedGuard`]) touches needs
/// no mutex: the group's hand-off already orders one leader's writes before
/// the next leader's reads. A `LeaderCell` is bound to one write group when
/// it is created and hands out `&mut S` for:
/// - a `&mut` [`GroupMembers`] of that group ([`get`](Self::get),
///   [`get_with_members`](Self::get_with_members)): the argument of
///   [`Commit::lead`];
/// - a `&mut` [`UnbatchedGuard`] of that group
///   ([`get_unbatched`](Self::get_unbatched)): an unbatched entry excludes
///   every group, so an engine can, say, switch its log file there.
///
/// The [`apply`](Commit::apply) and [`publish`](Commit::publish) steps get
/// neither, so they cannot reach the cell: parallel members never race on it.
///
/// # Why it is sound
///
/// - *Exclusive*: a `GroupMembers` is only built by a write group for the
///   `lead` call of its current leader, and an `UnbatchedGuard` only exists
///   while its entry holds leadership; a write group has at most one leader
///   at a time (the queue's hand-off passes leadership from one writer to
///   the next), and lead calls and unbatched entries all happen while
///   leading. Within one lead call, the `&mut` borrow of the proof keeps a
///   second borrow of the cell from the same proof out until the first one
///   ends. The returned reference cannot outlive that borrow, so it cannot
///   leak into the token, a member's `apply` or a later group.
/// - *Ordered*: leadership passes either by a Release swap of the next
///   leader's state word, which it reads with Acquire, or by the Release
///   compare-exchange that empties the queue, which the next writer to find
///   it empty reads with the Acquire of its joining compare-exchange. Every
///   change of the queue head is a read-modify-write (joins, stalls,
///   rewiring), so a writer that finds it empty later still reads from the
///   emptying one's release sequence. In a parallel group the leader's
///   `lead` is ordered before the exit (by whichever member finishes last)
///   through the AcqRel count of running members. So everything one leader
///   wrote to the cell happens before the next leader's access. The loom
///   model `leader_cell_counter_without_mutex` checks it, and fails if the
///   emptying compare-exchange is made Relaxed.
/// - *Bound*: each write group has a process-unique id; a proof of another
///   group (whose leader may run at the same time) is refused with a panic.
///
/// `LeaderCell<S>` is `Sync` when `S` is `Send`, as for a `Mutex<S>`: the
/// value is only ever used by one thread at a time, but by different threads
/// over time.
///
/// # Examples
///
/// A log whose buffer is only touched by leaders, without a mutex:
///
/// ```
/// use write_group::{Commit, GroupMembers, Lead, LeaderCell, Options, WriteGroup};
///
/// struct Log {
///     bytes: LeaderCell<Vec<u8>>,
/// }
///
/// impl Commit<[u8; 4]> for Log {
///     type Token = ();
///     type Error = ();
///
///     fn lead(&self, group: &mut GroupMembers<'_, [u8; 4]>) -> Result<Lead<()>, ()> {
///         // The buffer mutably, the items shared: append them.
///         let (bytes, members) = self.bytes.get_with_members(group);
///         for record in members.iter() {
///             bytes.extend_from_slice(record);
///         }
///         Ok(Lead::serial(()))
///     }
/// }
///
/// let group = WriteGroup::new(Options::default());
/// let log = Log { bytes: group.leader_cell(Vec::new()) };
/// std::thread::scope(|s| {
///     for t in 0..4_u8 {
///         let (group, log) = (&group, &log);
///         s.spawn(move || {
///             for _ in 0..25 {
///                 group.write(log, [t; 4]).unwrap();
///             }
///         });
///     }
/// });
///
/// // An unbatched entry excludes every group: the cell is ours there too.
/// let mut guard = group.enter_unbatched();
/// assert_eq!(log.bytes.get_unbatched(&mut guard).len(), 4 * 25 * 4);
/// drop(guard);
///
/// let Log { bytes } = log;
/// assert_eq!(bytes.into_inner().len(), 400);
/// ```
pub struct LeaderCell<S: ?Sized> {
    group_id: u64,
    value: UnsafeCell<S>,
}

// SAFETY: the value is reached from `&self` only with a proof of leadership
// of the cell's group, and a group has one leader at a time whose accesses
// are ordered by the hand-off (see the type's docs), exactly as a mutex's
// holders are: hence `Send` suffices, as for `Mutex<S>`.
unsafe impl<S: ?Sized + Send> Sync for LeaderCell<S> {}

impl<S: ?Sized> fmt::Debug for LeaderCell<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The value is not shown: reading it needs leadership.
        f.debug_struct("LeaderCell")
            .field("group_id", &self.group_id)
            .finish_non_exhaustive()
    }
}

impl<S> LeaderCell<S> {
    /// A cell bound to `group`: only `group`'s leaders may borrow it.
    /// [`WriteGroup::leader_cell`] says the same.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{LeaderCell, WriteGroup};
    ///
    /// let group: WriteGroup<u8, ()> = WriteGroup::default();
    /// let mut cell = LeaderCell::new(&group, 0_u64);
    /// *cell.get_mut() += 1;
    /// assert_eq!(cell.into_inner(), 1);
    /// ```
    #[must_use]
    pub fn new<T, C>(group: &WriteGroup<T, C>, value: S) -> Self {
        Self {
            group_id: group.id(),
            value: UnsafeCell::new(value),
        }
    }

    /// The value, consuming the cell.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::WriteGroup;
    ///
    /// let group: WriteGroup<u8, ()> = WriteGroup::default();
    /// let log_name = group.leader_cell(String::from("000001.log"));
    /// assert_eq!(log_name.into_inner(), "000001.log");
    /// ```
    ///
    /// See also [`LeaderCell::new`].
    #[must_use]
    pub fn into_inner(self) -> S {
        self.value.into_inner()
    }
}

impl<S: ?Sized> LeaderCell<S> {
    /// The value mutably, for the leader of the group whose members these
    /// are (inside [`Commit::lead`]).
    ///
    /// The borrow lasts as long as the borrow of `members`; to read the
    /// items meanwhile, use [`get_with_members`](Self::get_with_members).
    ///
    /// # Panics
    ///
    /// If `members` belongs to another write group than the one the cell was
    /// created for (a programmer error).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, LeaderCell, WriteGroup};
    ///
    /// struct Counter(LeaderCell<u64>);
    /// impl Commit<u8> for Counter {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn lead(&self, group: &mut GroupMembers<'_, u8>) -> Result<Lead<()>, ()> {
    ///         let len = group.len() as u64;
    ///         *self.0.get(group) += len;
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// let counter = Counter(group.leader_cell(0));
    /// group.write(&counter, 1).unwrap();
    /// group.write(&counter, 2).unwrap();
    /// assert_eq!(counter.0.into_inner(), 2);
    /// ```
    #[track_caller]
    #[inline]
    #[must_use]
    pub fn get<'a, T>(&'a self, members: &'a mut GroupMembers<'_, T>) -> &'a mut S {
        self.check_group(members.group_id());
        // SAFETY: `members` proves that we lead the cell's group (checked
        // just above) and run its one `lead` call; its exclusive borrow,
        // which bounds ours, keeps any other borrow of the cell through it
        // out. Earlier leaders' accesses happen before ours through the
        // hand-off's Release/Acquire (see the type's docs).
        unsafe { &mut *self.value.get() }
    }

    /// The value mutably and the group's items shared, for the leader of
    /// the group whose members these are: to append the items to state in
    /// the cell.
    ///
    /// The members come back shared, so no second borrow of a cell can be
    /// taken through them while this one lives.
    ///
    /// # Panics
    ///
    /// If `members` belongs to another write group than the one the cell was
    /// created for (a programmer error).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, LeaderCell, WriteGroup};
    ///
    /// struct Log(LeaderCell<Vec<u8>>);
    /// impl Commit<u8> for Log {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn lead(&self, group: &mut GroupMembers<'_, u8>) -> Result<Lead<()>, ()> {
    ///         let (log, members) = self.0.get_with_members(group);
    ///         log.extend(members.iter());
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// let log = Log(group.leader_cell(vec![1]));
    /// assert_eq!((group.write(&log, 2), log.0.into_inner()), (Ok(2), vec![1, 2]));
    /// ```
    ///
    /// See also the [type's example](LeaderCell).
    #[track_caller]
    #[inline]
    #[must_use]
    pub fn get_with_members<'a, 'g, T>(
        &'a self,
        members: &'a mut GroupMembers<'g, T>,
    ) -> (&'a mut S, &'a GroupMembers<'g, T>) {
        self.check_group(members.group_id());
        // SAFETY: as in `get`; the members are handed back shared only, and
        // a borrow of the cell needs them exclusively.
        let value = unsafe { &mut *self.value.get() };
        (value, members)
    }

    /// The value mutably, for the holder of an unbatched entry of the cell's
    /// group (no group runs meanwhile).
    ///
    /// # Panics
    ///
    /// If `guard` belongs to another write group than the one the cell was
    /// created for (a programmer error).
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
    /// let group = WriteGroup::<u8, Nop>::default();
    /// let log_number = group.leader_cell(7_u64);
    /// let mut guard = group.enter_unbatched(); // say, to switch the log
    /// *log_number.get_unbatched(&mut guard) += 1;
    /// assert_eq!(*log_number.get_unbatched(&mut guard), 8);
    /// ```
    ///
    /// See also the [type's example](LeaderCell).
    #[track_caller]
    #[inline]
    #[must_use]
    pub fn get_unbatched<'a, T, C: Commit<T>>(
        &'a self,
        guard: &'a mut UnbatchedGuard<'_, T, C>,
    ) -> &'a mut S {
        self.check_group(guard.group_id());
        // SAFETY: the guard proves that its entry holds the leadership of
        // the cell's group (checked above) until it is dropped, which its
        // exclusive borrow, bounding ours, prevents meanwhile. Earlier
        // leaders' accesses happen before ours through the hand-off.
        unsafe { &mut *self.value.get() }
    }

    /// The value mutably, through exclusive access to the cell itself.
    ///
    /// # Examples
    ///
    /// No proof of leadership is needed while the cell is not shared:
    ///
    /// ```
    /// use write_group::WriteGroup;
    ///
    /// let group: WriteGroup<u8, ()> = WriteGroup::default();
    /// let mut next_sequence = group.leader_cell(0_u64);
    /// *next_sequence.get_mut() = 100; // say, recovered from the log
    /// assert_eq!(*next_sequence.get_mut(), 100);
    /// ```
    ///
    /// See also [`LeaderCell::new`].
    #[inline]
    #[must_use]
    pub fn get_mut(&mut self) -> &mut S {
        self.value.get_mut()
    }

    #[track_caller]
    #[inline]
    fn check_group(&self, group_id: u64) {
        if group_id != self.group_id {
            wrong_group(self.group_id, group_id);
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn wrong_group(cell: u64, proof: u64) -> ! {
    panic!(
        "LeaderCell of write group {cell} borrowed with a proof of leadership of write group {proof}"
    )
}
