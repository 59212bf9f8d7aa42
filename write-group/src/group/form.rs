//! Group forming: waiting for writers, gathering the group behind the
//! leader, and rewiring the queue around the writers left out.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::atomic::Ordering::{Acquire, Relaxed};
use std::time::Duration;

use crate::commit::Commit;
use crate::gather::Queued;
use crate::members::item_ref;
use crate::waiter::{COMPLETED, Waiter};

use super::node::{Node, Outcome, Panic};
use super::{WriteGroup, is_stalled, untagged};

/// What a leader gathered.
pub(super) struct Formed<T> {
    pub(super) leader: *const Waiter<T>,
    pub(super) last: *const Waiter<T>,
    pub(super) len: usize,
    pub(super) bytes: usize,
    /// The writer right after the group when known at forming time (excluded
    /// writers or a cut-off); null when the group reached the queue's head.
    pub(super) successor: *const Waiter<T>,
}

impl<T> Clone for Formed<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Formed<T> {}

impl<T, C> WriteGroup<T, C>
where
    T: Send,
    C: Commit<T> + Sync,
    C::Token: Send + Sync,
    C::Error: Send,
{
    /// Waits up to `window` for the writers recently in flight to queue
    /// behind leader `me`; see `gather.rs`.
    #[cold]
    pub(super) fn wait_for_writers(&self, me: *const Waiter<T>, window: Duration) {
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
    pub(super) unsafe fn form_group(
        &self,
        commit: &C,
        me: *const Waiter<T>,
    ) -> (Formed<T>, Option<Panic>) {
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
}
