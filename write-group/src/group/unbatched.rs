//! Unbatched entries: holding off every group while, say, the memtable is
//! switched.

use std::fmt;
use std::ptr;
use std::sync::atomic::Ordering::{Acquire, Relaxed};

use crate::commit::Commit;
use crate::waiter::{LEADER, Waiter};

use super::node::Node;
use super::{WriteGroup, untagged};

impl<T, C> WriteGroup<T, C>
where
    T: Send,
    C: Commit<T> + Sync,
    C::Token: Send + Sync,
    C::Error: Send,
{
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
}

/// A held unbatched entry, from [`WriteGroup::enter_unbatched`]: no group
/// runs until it is dropped, which lets the writes queued behind it go on.
///
/// The guard is neither `Send` nor `Sync`: drop it on the thread that
/// entered.
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
/// let guard = group.enter_unbatched();
/// drop(guard); // lets the writes after it go on
/// assert_eq!(group.write(&Nop, 1), Ok(1));
/// assert_eq!(group.stats().groups, 1, "the entry itself is not a group");
/// ```
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
    /// let guard = group.enter_unbatched();
    /// assert_eq!(guard.queued(), 0, "nobody waits behind it yet");
    /// drop(guard);
    /// ```
    ///
    /// See also [`WriteGroup::enter_unbatched`], where a writer queues
    /// behind the guard.
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
