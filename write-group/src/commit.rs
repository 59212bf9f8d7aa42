//! What the caller plugs in: the [`Commit`] trait, what its leader returns
//! ([`Lead`]), and how a write fails ([`WriteError`]).

use std::fmt;
use std::time::Duration;

use crate::members::GroupMembers;

/// How a group's items are applied once its [`Commit::lead`] step succeeded.
///
/// # Examples
///
/// ```
/// use write_group::ApplyMode;
/// assert_ne!(ApplyMode::Serial, ApplyMode::Parallel);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ApplyMode {
    /// The leader applies every member's item, in enqueue order, on its own
    /// thread.
    Serial,
    /// Each member applies its own item on its own thread (woken through the
    /// tree for large groups). Worth it when applying is costly and
    /// thread-safe, such as inserting into a concurrent memtable. A group of
    /// one applies serially whatever the mode.
    Parallel,
    /// As `Parallel`, and `apply` may also overlap the next groups' `lead`
    /// and `apply` (RocksDB's concurrent memtable writes, without its
    /// separate pipelined queue). A group of one hands leadership on
    /// *before* applying when every earlier group has published, so two
    /// lone writers that would otherwise take turns apply at the same time
    /// (never more than two groups at once: with more threads than cores, a
    /// descheduled applier would hold up every publish behind it).
    /// `publish` still runs once per group, in group order, and before the
    /// group's members return; an unbatched entry waits for every publish.
    Pipelined,
}

/// What a successful [`Commit::lead`] step returns: how to apply the items,
/// and a token that [`Commit::apply`] borrows and [`Commit::publish`] then
/// consumes (an engine puts the group's last sequence number in it).
///
/// # Examples
///
/// ```
/// use write_group::{ApplyMode, Lead};
///
/// let lead = Lead::parallel(41_u64);
/// assert_eq!(lead.mode, ApplyMode::Parallel);
/// assert_eq!(Lead::serial(()).mode, ApplyMode::Serial);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lead<K> {
    /// How the items are applied.
    pub mode: ApplyMode,
    /// The group's token.
    pub token: K,
}

impl<K> Lead<K> {
    /// Apply in parallel, overlapping later groups; see
    /// [`ApplyMode::Pipelined`].
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{ApplyMode, Lead};
    ///
    /// let lead = Lead::pipelined(17_u64); // say, the group's last sequence number
    /// assert_eq!(lead.mode, ApplyMode::Pipelined);
    /// assert_eq!(lead.token, 17);
    /// ```
    #[inline]
    pub fn pipelined(token: K) -> Self {
        Self {
            mode: ApplyMode::Pipelined,
            token,
        }
    }

    /// Apply serially, on the leader's thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{ApplyMode, Lead};
    ///
    /// let lead = Lead::serial("token");
    /// assert_eq!(lead, Lead { mode: ApplyMode::Serial, token: "token" });
    /// ```
    #[inline]
    pub fn serial(token: K) -> Self {
        Self {
            mode: ApplyMode::Serial,
            token,
        }
    }

    /// Apply in parallel, each member on its own thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{ApplyMode, Lead};
    ///
    /// let lead = Lead::parallel(vec![1, 2]);
    /// assert_eq!(lead.mode, ApplyMode::Parallel);
    /// assert_eq!(lead.token, [1, 2]);
    /// ```
    #[inline]
    pub fn parallel(token: K) -> Self {
        Self {
            mode: ApplyMode::Parallel,
            token,
        }
    }
}

/// The caller's side of group commit: what a group does with its items.
///
/// A group runs entirely with its *leader's* `Commit` value: every write of a
/// [`WriteGroup`](crate::WriteGroup) should pass an equivalent one (an engine
/// passes the same `&Db` every time).
///
/// For each group, in order:
/// 1. [`lead`](Commit::lead) runs once, on the leader's thread, with mutable
///    access to every member's item in enqueue order. An engine assigns
///    sequence numbers, appends one log record for the whole group and syncs
///    it once. On `Err`, every member's write fails with a clone of the
///    error, and nothing is applied or published.
/// 2. [`apply`](Commit::apply) runs once per member, serially on the leader's
///    thread or on each member's own thread, as `lead` chose.
/// 3. [`publish`](Commit::publish) runs once, on the thread that finished
///    applying last, after every member applied and before any member's
///    write returns or the next group's leader starts (except after a
///    [pipelined](ApplyMode::Pipelined) group of one, whose successor may
///    lead and apply meanwhile): the place to make the group visible (an
///    engine stores its last sequence number there).
///
/// Groups are led one at a time and published one at a time, both in
/// enqueue order; only pipelined groups let the apply steps of two groups
/// overlap.
///
/// The callbacks must not call [`WriteGroup::write`](crate::WriteGroup::write)
/// or [`enter_unbatched`](crate::WriteGroup::enter_unbatched) on the same
/// group: the call would queue behind its own group and never return.
///
/// # Panics
///
/// A panic in a callback never leaves the group stuck: it is caught, the group
/// completes, and the panic resumes on a thread that owns it:
/// - in `lead`: on the leader's thread; every other member fails with
///   [`WriteError::LeaderPanicked`](crate::WriteError::LeaderPanicked) and
///   nothing is applied or published;
/// - in `apply`: on the thread of the member whose item it was (in serial
///   mode the leader catches it and the member resumes it). That item is left
///   as far as `apply` got; the rest of the group is applied and published as
///   usual, so an engine makes a partly applied write visible;
/// - in `publish`: on the thread that ran it, after the group completed (its
///   members return normally);
/// - in `compatible`: on the leader's thread once its own write completed;
///   the writer it was testing is treated as incompatible;
/// - in `size` or `no_slowdown`: on the submitter's thread, before it queues.
///
/// # Examples
///
/// A log where each group appends its members in one go:
///
/// ```
/// use write_group::{Commit, GroupMembers, Lead, Options, WriteGroup};
/// use std::sync::Mutex;
///
/// struct Log(Mutex<Vec<String>>);
///
/// impl Commit<String> for Log {
///     type Token = ();
///     type Error = std::convert::Infallible;
///
///     fn size(&self, line: &String) -> usize {
///         line.len()
///     }
///
///     fn lead(&self, group: &mut GroupMembers<'_, String>) -> Result<Lead<()>, Self::Error> {
///         let mut log = self.0.lock().unwrap();
///         log.extend(group.iter().cloned());
///         Ok(Lead::serial(()))
///     }
/// }
///
/// let log = Log(Mutex::new(Vec::new()));
/// let group = WriteGroup::new(Options::default());
/// std::thread::scope(|s| {
///     for t in 0..4 {
///         let (group, log) = (&group, &log);
///         s.spawn(move || {
///             for i in 0..10 {
///                 group.write(log, format!("{t}:{i}")).unwrap();
///             }
///         });
///     }
/// });
/// assert_eq!(log.0.lock().unwrap().len(), 40);
/// ```
pub trait Commit<T> {
    /// Produced by `lead`, borrowed by `apply`, consumed by `publish`.
    type Token;
    /// The error of a failed `lead` step; every member gets a clone.
    type Error: Clone;

    /// The item's size in bytes for the group's byte cap
    /// ([`Options::max_group_bytes`](crate::Options::max_group_bytes)).
    /// Called once per write on the submitter's thread. Default: 0 (only the
    /// member cap limits groups).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteGroup};
    ///
    /// /// Counts a record's bytes; the leader sees the group's sum.
    /// struct Log;
    /// impl Commit<Vec<u8>> for Log {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn size(&self, record: &Vec<u8>) -> usize {
    ///         record.len()
    ///     }
    ///     fn lead(&self, group: &mut GroupMembers<'_, Vec<u8>>) -> Result<Lead<()>, ()> {
    ///         assert_eq!(group.bytes(), group.iter().map(Vec::len).sum::<usize>());
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// assert_eq!(WriteGroup::default().write(&Log, vec![1; 10]), Ok(vec![1; 10]));
    /// ```
    #[inline]
    fn size(&self, item: &T) -> usize {
        let _ = item;
        0
    }

    /// Whether this write fails at once with
    /// [`WriteError::Stalled`](crate::WriteError::Stalled) instead of waiting
    /// while the group is stalled. Called once per write on the submitter's
    /// thread. Default: false.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteError, WriteGroup};
    ///
    /// /// Writes whose item is `true` would rather fail than wait.
    /// struct Log;
    /// impl Commit<bool> for Log {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn no_slowdown(&self, impatient: &bool) -> bool {
    ///         *impatient
    ///     }
    ///     fn lead(&self, _: &mut GroupMembers<'_, bool>) -> Result<Lead<()>, ()> {
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// group.stall();
    /// assert_eq!(group.write(&Log, true), Err(WriteError::Stalled)); // at once
    /// group.release_stall();
    /// assert_eq!(group.write(&Log, true), Ok(true));
    /// ```
    #[inline]
    fn no_slowdown(&self, item: &T) -> bool {
        let _ = item;
        false
    }

    /// Whether `other` may join a group led by `leader` (an engine keeps sync
    /// writes out of a non-sync leader's group, and does not mix writes with
    /// and without a log). Writers left out keep their order and lead or join
    /// the next group. Called by the leader while it gathers the group;
    /// keep it cheap. Default: always.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    /// use write_group::{Commit, GroupMembers, Lead, WriteGroup};
    ///
    /// /// Keeps synced (`true`) and unsynced writes in separate groups.
    /// struct Log(AtomicBool); // set if a group ever mixed them
    /// impl Commit<bool> for Log {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn compatible(&self, leader: &bool, other: &bool) -> bool {
    ///         leader == other
    ///     }
    ///     fn lead(&self, group: &mut GroupMembers<'_, bool>) -> Result<Lead<()>, ()> {
    ///         let sync = *group.leader();
    ///         if group.iter().any(|&s| s != sync) {
    ///             self.0.store(true, Relaxed);
    ///         }
    ///         Ok(Lead::serial(()))
    ///     }
    /// }
    /// let (group, log) = (WriteGroup::default(), Log(AtomicBool::new(false)));
    /// std::thread::scope(|s| {
    ///     let guard = group.enter_unbatched(); // holds the writers in the queue
    ///     for sync in [true, false, true, false] {
    ///         let (group, log) = (&group, &log);
    ///         s.spawn(move || group.write(log, sync).unwrap());
    ///     }
    ///     while guard.queued() < 4 {
    ///         std::thread::yield_now();
    ///     }
    /// }); // the guard goes: the four writers form their groups
    /// assert!(!log.0.into_inner());
    /// ```
    #[inline]
    fn compatible(&self, leader: &T, other: &T) -> bool {
        let _ = (leader, other);
        true
    }

    /// How long a leader whose own write is `item` may wait for more writers
    /// before it seals its group. Default: zero, never wait (RocksDB's
    /// behaviour).
    ///
    /// Return a non-zero window for writes whose shared step is expensive,
    /// such as one with an `fdatasync`: with `n` writers, groups otherwise
    /// settle into two cohorts of about `n / 2` (one syncs while the other
    /// queues), and each cohort pays a sync. A leader with a window waits,
    /// asleep, until as many writers with a window are queued as were in
    /// flight recently (those of the group that just finished come back
    /// within microseconds), or until the window ends, whichever is first;
    /// it never waits when it is the only such writer. The idea is
    /// PostgreSQL's `commit_delay` and MySQL's
    /// `binlog_group_commit_sync_delay`, with the count of writers to wait
    /// for learned instead of configured. A window of about half the shared
    /// step's duration bounds the cost of a wait that times out. Called
    /// once per write on the submitter's thread; writes with a window also
    /// pay two atomic counter updates and a fence.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use write_group::{Commit, GroupMembers, Lead, WriteGroup};
    ///
    /// /// Synced writes (`true`) wait up to 50 us for company before the sync.
    /// struct Log;
    /// impl Commit<bool> for Log {
    ///     type Token = ();
    ///     type Error = ();
    ///     fn gather_window(&self, sync: &bool) -> Duration {
    ///         if *sync { Duration::from_micros(50) } else { Duration::ZERO }
    ///     }
    ///     fn lead(&self, _: &mut GroupMembers<'_, bool>) -> Result<Lead<()>, ()> {
    ///         Ok(Lead::serial(())) // the fdatasync would go here
    ///     }
    /// }
    /// // A lone writer never waits out its window.
    /// let group = WriteGroup::default();
    /// assert_eq!(group.write(&Log, true), Ok(true));
    /// ```
    #[inline]
    fn gather_window(&self, item: &T) -> Duration {
        let _ = item;
        Duration::ZERO
    }

    /// The group's shared step, on the leader's thread; see the trait docs.
    ///
    /// # Errors
    ///
    /// An `Err` fails the whole group: every member's write returns
    /// [`WriteError::Group`](crate::WriteError::Group) with a clone of it.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteError, WriteGroup};
    ///
    /// /// A log that refuses records longer than 4 bytes, failing their group.
    /// struct Log;
    /// impl Commit<&'static str> for Log {
    ///     type Token = ();
    ///     type Error = String;
    ///     fn lead(&self, group: &mut GroupMembers<'_, &'static str>) -> Result<Lead<()>, String> {
    ///         match group.iter().find(|record| record.len() > 4) {
    ///             Some(record) => Err(format!("{record:?} is too long")),
    ///             None => Ok(Lead::serial(())),
    ///         }
    ///     }
    /// }
    /// let group = WriteGroup::default();
    /// assert_eq!(group.write(&Log, "ok"), Ok("ok"));
    /// let refused = group.write(&Log, "too long");
    /// assert_eq!(refused, Err(WriteError::Group("\"too long\" is too long".to_string())));
    /// ```
    fn lead(&self, group: &mut GroupMembers<'_, T>) -> Result<Lead<Self::Token>, Self::Error>;

    /// Applies one member's item. Default: nothing (all work done in `lead`).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{Commit, GroupMembers, Lead, WriteGroup};
    ///
    /// /// The leader numbers the group; each member's `apply` takes its number.
    /// struct Numbering;
    /// impl Commit<(u64, char)> for Numbering {
    ///     type Token = u64; // the group's first number
    ///     type Error = ();
    ///     fn lead(&self, _: &mut GroupMembers<'_, (u64, char)>) -> Result<Lead<u64>, ()> {
    ///         Ok(Lead::parallel(100)) // each member applies on its own thread
    ///     }
    ///     fn apply(&self, item: &mut (u64, char), first: &u64) {
    ///         item.0 = *first;
    ///     }
    /// }
    /// assert_eq!(WriteGroup::default().write(&Numbering, (0, 'a')), Ok((100, 'a')));
    /// ```
    #[inline]
    fn apply(&self, item: &mut T, token: &Self::Token) {
        let _ = (item, token);
    }

    /// Makes the group visible, once every member applied. Default: nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    /// use write_group::{Commit, GroupMembers, Lead, WriteGroup};
    ///
    /// /// Readers see a group's writes once `publish` moves the visible count.
    /// struct Counter {
    ///     written: AtomicU64,
    ///     visible: AtomicU64,
    /// }
    /// impl Commit<u64> for Counter {
    ///     type Token = u64; // how far this group's writes reach
    ///     type Error = ();
    ///     fn lead(&self, group: &mut GroupMembers<'_, u64>) -> Result<Lead<u64>, ()> {
    ///         let n = group.len() as u64;
    ///         Ok(Lead::serial(self.written.fetch_add(n, Relaxed) + n))
    ///     }
    ///     fn publish(&self, upto: u64) {
    ///         self.visible.store(upto, Relaxed);
    ///     }
    /// }
    /// let c = Counter { written: AtomicU64::new(0), visible: AtomicU64::new(0) };
    /// let group = WriteGroup::default();
    /// group.write(&c, 1).unwrap();
    /// group.write(&c, 2).unwrap();
    /// assert_eq!(c.visible.load(Relaxed), 2); // published before `write` returned
    /// ```
    #[inline]
    fn publish(&self, token: Self::Token) {
        let _ = token;
    }
}

/// Why a write failed.
///
/// # Examples
///
/// ```
/// use write_group::WriteError;
///
/// let error: WriteError<std::io::ErrorKind> = WriteError::Group(std::io::ErrorKind::Other);
/// assert_eq!(error.to_string(), "the write group's lead step failed: other error");
/// assert_eq!(WriteError::<std::io::ErrorKind>::Stalled.to_string(), "writes are stalled and the write asked not to wait");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum WriteError<E> {
    /// The group's [`Commit::lead`] step failed with this error; nothing of
    /// the group was applied or published.
    Group(E),
    /// The group is stalled ([`WriteGroup::stall`](crate::WriteGroup::stall))
    /// and the write is [`no_slowdown`](Commit::no_slowdown): it was not
    /// applied.
    Stalled,
    /// The group's leader panicked in [`Commit::lead`]; nothing of the group
    /// was applied or published. The panic itself resumes on the leader's
    /// thread.
    LeaderPanicked,
}

impl<E: fmt::Display> fmt::Display for WriteError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Group(error) => write!(f, "the write group's lead step failed: {error}"),
            WriteError::Stalled => {
                f.write_str("writes are stalled and the write asked not to wait")
            }
            WriteError::LeaderPanicked => f.write_str("the write group's leader panicked"),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for WriteError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteError::Group(error) => Some(error),
            _ => None,
        }
    }
}
