//! Rewiring the queue, detaching it, and handing leadership on.

use std::ptr;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

use crate::waiter::{LEADER, Waiter};

use super::{STALL_TAG, WriteGroup, tagged_like, untagged};

impl<T, C> WriteGroup<T, C> {
    /// Fills in `link_newer` from `from` down towards `stop`, until it meets
    /// a waiter whose link is already set.
    ///
    /// # Safety
    ///
    /// The caller leads, acquired the head `from` was read from, and `stop`
    /// is queued below `from`.
    pub(super) unsafe fn link_newer_chain(from: *const Waiter<T>, stop: *const Waiter<T>) {
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
    pub(super) unsafe fn replace_newest(&self, old: *const Waiter<T>, new: *const Waiter<T>) {
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
    pub(super) unsafe fn hand_off(&self, last: *const Waiter<T>, successor: *const Waiter<T>) {
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
