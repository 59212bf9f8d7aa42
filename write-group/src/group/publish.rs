//! Publish tickets: groups publish in the order they led, even while a
//! pipelined group still applies.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

use crate::commit::Commit;
use crate::sync;

use super::WriteGroup;
use super::node::Panic;

/// Publish tickets wrap within these bits; a few groups at most are ever
/// between their lead and their publish.
const TICKET_MASK: u32 = u32::MAX >> 1;

/// The high bit of `publish_turn`: some finished group sleeps on it.
const PUBLISH_SLEEPERS: u32 = !TICKET_MASK;

impl<T, C> WriteGroup<T, C> {
    /// Takes the next publish ticket; only a leader calls this.
    #[inline]
    pub(super) fn take_ticket(&self) -> u32 {
        // Relaxed: leaders alone touch it, and leadership passes with
        // Release/Acquire.
        let ticket = self.hot.next_ticket.load(Relaxed);
        self.hot
            .next_ticket
            .store(ticket.wrapping_add(1) & TICKET_MASK, Relaxed);
        ticket
    }

    /// Whether every group before `ticket` has published. A pipelined group
    /// hands off early only then, so at most two groups apply at once: more
    /// would queue on the publish order, and with more threads than cores
    /// one descheduled applier would hold up every publish behind it.
    #[inline]
    pub(super) fn publishes_next(&self, ticket: u32) -> bool {
        // Relaxed: a hint; `await_publish_turn` synchronises.
        self.hot.publish_turn.load(Relaxed) & TICKET_MASK == ticket
    }

    /// Waits until the group with `ticket` may publish.
    #[inline]
    pub(super) fn await_publish_turn(&self, ticket: u32) {
        // Acquire: pairs with the Release in `end_publish_turn`, so the
        // previous group's publish happens before ours.
        let turn = self.hot.publish_turn.load(Acquire);
        if turn & TICKET_MASK != ticket {
            self.await_publish_turn_slow(ticket, turn);
        }
    }

    #[cold]
    fn await_publish_turn_slow(&self, ticket: u32, mut turn: u32) {
        for _ in 0..self.options.spin_count {
            sync::spin_loop();
            // Acquire: as in `await_publish_turn`.
            turn = self.hot.publish_turn.load(Acquire);
            if turn & TICKET_MASK == ticket {
                return;
            }
        }
        while turn & TICKET_MASK != ticket {
            if turn & PUBLISH_SLEEPERS == 0 {
                // AcqRel: the bit we add must carry the publish of the group
                // whose turn-store it overwrites, so that whoever reads our
                // value (Acquire) sees that publish. Acquire on failure: the
                // value read may say it is our turn.
                if let Err(actual) = self.hot.publish_turn.compare_exchange(
                    turn,
                    turn | PUBLISH_SLEEPERS,
                    AcqRel,
                    Acquire,
                ) {
                    turn = actual;
                    continue;
                }
                turn |= PUBLISH_SLEEPERS;
            }
            self.counters.futex_sleep();
            sync::shared_wait(&self.hot.publish_turn, turn);
            // Acquire: as in `await_publish_turn`.
            turn = self.hot.publish_turn.load(Acquire);
        }
    }

    /// Passes the publish turn from `ticket` to the next group.
    /// `handed_off`: whether our group handed leadership on before it
    /// published (a pipelined group of one).
    #[inline]
    fn end_publish_turn(&self, ticket: u32, handed_off: bool) {
        let next = ticket.wrapping_add(1) & TICKET_MASK;
        if !handed_off {
            // Tickets after ours are taken only after our hand-off, and
            // every group before ours has published, so nobody sleeps on the
            // turn: a plain store, one atomic read-modify-write less per
            // group. Release: our publish happens before the next group's.
            debug_assert_eq!(
                self.hot.publish_turn.load(Relaxed),
                ticket,
                "a sleeper on the publish turn of a group that has not handed off"
            );
            self.hot.publish_turn.store(next, Release);
            return;
        }
        // Release: as above.
        let old = self.hot.publish_turn.swap(next, Release);
        if old & PUBLISH_SLEEPERS != 0 {
            sync::shared_wake_all(&self.hot.publish_turn);
        }
    }
}

impl<T, C> WriteGroup<T, C>
where
    T: Send,
    C: Commit<T> + Sync,
    C::Token: Send + Sync,
    C::Error: Send,
{
    /// Waits for the group with `ticket` to be next, publishes it, and passes
    /// the turn on (see `end_publish_turn` for `handed_off`). Returns a panic
    /// of `publish`.
    #[inline]
    pub(super) fn publish_in_turn(
        &self,
        commit: &C,
        token: C::Token,
        ticket: u32,
        handed_off: bool,
    ) -> Option<Panic> {
        self.await_publish_turn(ticket);
        let deferred = catch_unwind(AssertUnwindSafe(|| commit.publish(token))).err();
        self.end_publish_turn(ticket, handed_off);
        deferred
    }
}
