//! A writer's node in the queue, and how its write ended.

use std::any::Any;
use std::panic::resume_unwind;
use std::ptr;

use crate::commit::{Commit, WriteError};
use crate::sync::UnsafeCell;
use crate::waiter::Waiter;

use super::parallel::GroupCtx;

/// A panic caught in a callback, to be resumed on its owner's thread.
pub(super) type Panic = Box<dyn Any + Send + 'static>;

/// How a write ended, stored in its node by whoever completes it.
pub(super) enum Outcome<E> {
    /// Applied and published (or not yet decided).
    Applied,
    /// The group's lead step failed.
    Failed(E),
    /// Failed for a stall (`no_slowdown`).
    Stalled,
    /// The leader's lead step panicked.
    LeaderPanicked,
    /// This write's own apply step panicked.
    Panicked(Panic),
}

/// A writer's node: lives on the submitter's stack (or in the box of an
/// unbatched guard) for as long as it is queued.
///
/// `#[repr(C)]` with the waiter first, so that the queue's `*const Waiter<T>`
/// links can be cast back to the node: every waiter linked into a
/// `WriteGroup<T, C>` is the head of a `Node<T, C>`.
#[repr(C)]
pub(super) struct Node<T, C: Commit<T>> {
    pub(super) waiter: Waiter<T>,
    /// The parallel group, set by whoever launches this member.
    pub(super) group: UnsafeCell<*const GroupCtx<T, C>>,
    outcome: UnsafeCell<Outcome<C::Error>>,
}

impl<T, C: Commit<T>> Node<T, C> {
    /// A write's node, pointing to its item, which must outlive the node.
    #[inline]
    pub(super) fn new(item: &mut T, size: usize, no_slowdown: bool) -> Self {
        Self::with_waiter(Waiter::new(ptr::from_mut(item), size, no_slowdown, false))
    }

    /// An unbatched entry's node, with no item.
    pub(super) fn unbatched() -> Self {
        Self::with_waiter(Waiter::new(ptr::null_mut(), 0, false, true))
    }

    #[inline]
    fn with_waiter(waiter: Waiter<T>) -> Self {
        Self {
            waiter,
            group: UnsafeCell::new(ptr::null()),
            outcome: UnsafeCell::new(Outcome::Applied),
        }
    }

    /// The node's waiter, with the provenance of the whole node.
    #[inline]
    pub(super) fn as_waiter(&self) -> *const Waiter<T> {
        (self as *const Self).cast()
    }

    /// The node a queued waiter heads.
    #[inline]
    pub(super) fn of(waiter: *const Waiter<T>) -> *const Self {
        waiter.cast()
    }

    /// Stores the outcome of the node `waiter` heads.
    ///
    /// # Safety
    ///
    /// `waiter` must be live, and the caller the only thread touching its
    /// outcome (its owner waits for `COMPLETED` or runs no callback).
    #[inline]
    pub(super) unsafe fn set_outcome(waiter: *const Waiter<T>, outcome: Outcome<C::Error>) {
        // SAFETY: the caller guarantees the node is live and ours to write.
        unsafe { (*Self::of(waiter)).outcome.with_mut(|slot| *slot = outcome) };
    }

    /// Turns the finished node of a write into its result, resuming a panic
    /// owed to this thread. Takes the outcome out in place rather than
    /// moving the node (a memcpy of the whole node per write).
    ///
    /// # Safety
    ///
    /// The node is a write's (not an unbatched entry's), called once, and
    /// nobody else refers to it any more.
    #[inline]
    pub(super) unsafe fn finish(
        &self,
        deferred: Option<Panic>,
    ) -> Result<(), WriteError<C::Error>> {
        // SAFETY: the caller's contract: the node is ours alone now; its
        // outcome is not read again.
        let outcome = unsafe {
            self.outcome
                .with_mut(|slot| ptr::replace(slot, Outcome::Applied))
        };
        let error = match outcome {
            Outcome::Applied => None,
            Outcome::Failed(error) => Some(WriteError::Group(error)),
            Outcome::Stalled => Some(WriteError::Stalled),
            Outcome::LeaderPanicked => Some(WriteError::LeaderPanicked),
            Outcome::Panicked(panic) => resume_unwind(panic),
        };
        if let Some(panic) = deferred {
            resume_unwind(panic);
        }
        match error {
            None => Ok(()),
            Some(error) => Err(error),
        }
    }
}

impl<E: Clone> Outcome<E> {
    /// A copy of a group-wide failure, for each member.
    pub(super) fn clone_failure(&self) -> Self {
        match self {
            Outcome::Failed(error) => Outcome::Failed(error.clone()),
            Outcome::LeaderPanicked => Outcome::LeaderPanicked,
            _ => unreachable!("only group-wide failures are copied"),
        }
    }
}
