//! The lone writer's fast path: a writer that finds the queue idle leads
//! a group of one without a node.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::ptr;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

use crate::commit::{ApplyMode, Commit, Lead, WriteError};
use crate::members::GroupMembers;
use crate::waiter::{LEADER, Waiter};

use super::{STALL_TAG, WriteGroup, untagged};

impl<T, C> WriteGroup<T, C>
where
    T: Send,
    C: Commit<T> + Sync,
    C::Token: Send + Sync,
    C::Error: Send,
{
    /// Takes the lead of an idle queue without a node: the lone-writer
    /// fast path, one CAS as a mutex's lock.
    #[inline]
    pub(super) fn try_lead_alone(&self) -> bool {
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
    pub(super) fn write_alone(
        &self,
        commit: &C,
        item: &mut T,
        size: usize,
    ) -> Result<(), WriteError<C::Error>> {
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
}
