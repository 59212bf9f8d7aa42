//! Leading a group: the lead step, the serial apply, and the group's exit.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use crate::commit::{ApplyMode, Commit, Lead};
use crate::members::{GroupMembers, item_mut};
use crate::waiter::{COMPLETED, Waiter};

use super::WriteGroup;
use super::form::Formed;
use super::node::{Node, Outcome, Panic};

/// How a group ends.
pub(super) enum Exit<C: Commit<T>, T> {
    Publish(*const C, C::Token, u32),
    Failed(C::Error),
    LeaderPanicked,
}

impl<T, C> WriteGroup<T, C>
where
    T: Send,
    C: Commit<T> + Sync,
    C::Token: Send + Sync,
    C::Error: Send,
{
    /// Leads a group: waits up to `window` for more writers, gathers the
    /// group, runs the lead step, applies (or launches the parallel apply)
    /// and exits. Returns a panic owed to this thread.
    #[inline]
    pub(super) fn lead(&self, commit: &C, node: &Node<T, C>, window: Duration) -> Option<Panic> {
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

    /// Ends a group: publishes it (if it succeeded), hands leadership on,
    /// then completes every member but `me`, newest first, reading each link
    /// before waking its owner. Returns a panic owed to this thread.
    ///
    /// # Safety
    ///
    /// We lead `formed` or are its last member to finish; the other members
    /// wait for completion.
    pub(super) unsafe fn exit_group(
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
