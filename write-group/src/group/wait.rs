//! Waiting on a writer's own state word (spin, adaptive yield, futex
//! sleep), and moving it to a new state.

use std::ptr;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

#[cfg(doc)]
use crate::options::Options;
use crate::sync::{self, OwnedFutex};
use crate::waiter::{SLEEPING, Waiter, YieldCredit};

use super::WriteGroup;

impl<T, C> WriteGroup<T, C> {
    /// Moves `waiter` to `state` and wakes its owner if it sleeps.
    ///
    /// # Safety
    ///
    /// `waiter` must be live and its owner waiting for this transition; the
    /// caller must not touch it afterwards (the owner may return at once).
    #[inline]
    pub(super) unsafe fn set_state(waiter: *const Waiter<T>, state: u32) {
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
    pub(super) fn await_state(
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
        let outcome = loop {
            std::thread::yield_now();
            let now = Instant::now();
            // A clock too coarse to see the yield counts as slow.
            if now == yield_start || now - yield_start >= slow {
                slow_yields += 1;
            }
            // Acquire: as in `await_state`.
            let state = futex.state.load(Acquire);
            if state & goals != 0 {
                break Ok(state);
            }
            if slow_yields >= MAX_SLOW_YIELDS || now - start > budget {
                break Err(Some(state));
            }
            yield_start = now;
        };
        // A slow yield means other threads wanted this core; for a credit
        // that counts that against the phase (see `YieldCredit::for_roles`),
        // the phase fails even if its goal came.
        let crowded = credit.slow_yield_fails() && slow_yields > 0;
        let ended_slow = outcome.is_err() && slow_yields >= MAX_SLOW_YIELDS;
        let update_credit = sampled || crowded || ended_slow;
        if options.adaptive_yield && update_credit {
            credit.record(outcome.is_ok() && !crowded);
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
}

#[cfg(all(test, not(loom)))]
mod tests {
    use crate::options::Options;
    use crate::sync::OwnedFutex;
    use crate::waiter::{COMPLETED, YieldCredit};

    use super::WriteGroup;

    /// A yield phase whose goal is already there: it yields once, then sees
    /// it. With `slow_yield_usec` at 0 every yield is slow.
    fn yield_once(slow_yield_usec: u32, credit: &YieldCredit) {
        assert!(credit.slow_yield_fails());
        let options = Options::new().with_slow_yield_usec(slow_yield_usec);
        let group: WriteGroup<u8, ()> = WriteGroup::new(options);
        let futex = OwnedFutex::new(COMPLETED);
        if credit.favourable() {
            assert_eq!(group.yield_phase(&futex, COMPLETED, credit), Ok(COMPLETED));
        } else {
            // Skipped, unless this wait is one of the sampled ones.
            let _ = group.yield_phase(&futex, COMPLETED, credit);
        }
    }

    #[test]
    fn a_goal_reached_after_a_slow_yield_counts_against_the_credit() {
        let credit = YieldCredit::for_roles();
        for _ in 0..4 {
            yield_once(0, &credit);
        }
        assert!(!credit.favourable());
    }

    #[test]
    fn a_goal_reached_after_fast_yields_keeps_the_credit() {
        let credit = YieldCredit::for_roles();
        for _ in 0..16 {
            yield_once(u32::MAX, &credit);
        }
        assert!(credit.favourable());
    }
}
