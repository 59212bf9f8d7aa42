//! Joining the queue: the push, and the barging wait that lets a writer
//! lead instead of queueing behind a short group.

use std::ptr;
use std::sync::atomic::Ordering::{AcqRel, Relaxed};

use crate::sync;
#[cfg(doc)]
use crate::waiter::FirstLook;
use crate::waiter::Waiter;

use super::{WriteGroup, is_stalled, tagged_like, untagged};

/// The most busy-wait hints between two looks at the queue while barging.
const BARGE_MAX_STEP: u32 = 256;

impl<T, C> WriteGroup<T, C> {
    /// Pushes `waiter` onto the queue. `Ok(true)`: the queue was empty and
    /// the caller leads at once. `Err(())`: stalled and `no_slowdown`.
    #[inline]
    pub(super) fn link(
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
}
