//! The synchronisation primitives the crate is built on, switched between std
//! and loom by `cfg(loom)`.
//!
//! Everything that takes part in the writer protocol (the queue head, each
//! writer's state word, the group's running count, cells shared between
//! threads) comes from here, so that `--cfg loom` models exactly the code that
//! ships. Statistics counters deliberately use std atomics in both builds:
//! they are not part of the protocol, and leaving them out of the model keeps
//! loom's search small.
//!
//! Futex waits map to loom's `park`/`unpark` for a writer's own state word
//! (each word has one owner thread, so a park token models it exactly and a
//! lost wake-up shows up as a loom deadlock), and to `yield_now` for the
//! stall word, which any number of threads may wait on.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize};

/// A cell whose accesses loom checks for data races.
#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// A cell whose accesses loom checks for data races (std build: a zero-cost
/// wrapper of [`std::cell::UnsafeCell`] with the closure API of
/// `loom::cell::UnsafeCell`).
///
/// `arena`, `vecmem` and `write-group` each carry this shim, word for word,
/// so that each crate builds alone and a reader meets one shape.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
#[allow(
    dead_code,
    reason = "the shim is the same in every crate, and not every crate calls every method"
)]
impl<T> UnsafeCell<T> {
    /// Wraps `value`.
    #[inline]
    pub(crate) const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a shared pointer to the value (loom records a read).
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` with a mutable pointer to the value (loom records a write).
    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }

    /// The value, out of the cell.
    #[inline]
    pub(crate) fn into_inner(self) -> T {
        self.0.into_inner()
    }
}

/// A busy-wait hint; under loom a yield, so that spin loops stay finite.
#[inline]
pub(crate) fn spin_loop() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

/// A futex word owned by one thread: only the owner waits on it, anyone may
/// wake it.
#[derive(Debug)]
pub(crate) struct OwnedFutex {
    /// The word itself.
    pub(crate) state: AtomicU32,
    /// Under loom the owner's handle stands in for the futex address.
    #[cfg(loom)]
    owner: loom::thread::Thread,
}

impl OwnedFutex {
    /// A futex holding `value`, owned by the calling thread.
    #[inline]
    pub(crate) fn new(value: u32) -> Self {
        Self {
            state: AtomicU32::new(value),
            #[cfg(loom)]
            owner: loom::thread::current(),
        }
    }

    /// Sleeps while the word holds `expected`. May return spuriously; only the
    /// owner calls it, with a value it saw there.
    ///
    /// Under loom this is a bare `park`: every change away from a sleeping
    /// value is followed by an `unpark` of the owner, and a park token
    /// remembers an unpark that came first, which is what the futex's value
    /// check gives (without an extra load for loom to branch on).
    #[inline]
    pub(crate) fn wait(&self, expected: u32) {
        #[cfg(not(loom))]
        crate::futex::wait(&self.state, expected);
        #[cfg(loom)]
        {
            let _ = expected;
            loom::thread::park();
        }
    }

    /// Captures what is needed to wake the owner *without* touching this
    /// futex again: call it before the store that may let the owner return
    /// and free the word.
    ///
    /// # Safety
    ///
    /// `this` must point to a live `OwnedFutex`.
    #[inline]
    pub(crate) unsafe fn waker(this: *const Self) -> Waker {
        Waker {
            // SAFETY: the caller guarantees `this` is live; we only take the
            // address of the word, which the futex syscall accepts even once
            // it dangles.
            #[cfg(not(loom))]
            word: unsafe { std::ptr::addr_of!((*this).state) },
            // SAFETY: the caller guarantees `this` is live.
            #[cfg(loom)]
            owner: unsafe { (*this).owner.clone() },
        }
    }
}

/// Wakes the owner of an [`OwnedFutex`]; valid even after the futex is gone.
#[derive(Debug)]
pub(crate) struct Waker {
    #[cfg(not(loom))]
    word: *const AtomicU32,
    #[cfg(loom)]
    owner: loom::thread::Thread,
}

impl Waker {
    /// Wakes the owner if it sleeps on the word.
    #[inline]
    pub(crate) fn wake(self) {
        // A dangling address is fine for FUTEX_WAKE: at worst it wakes an
        // unrelated waiter spuriously, and every wait here loops.
        #[cfg(not(loom))]
        crate::futex::wake_one(self.word);
        #[cfg(loom)]
        self.owner.unpark();
    }
}

/// Sleeps while `word` holds `expected` (any number of waiters; spurious
/// returns allowed). Under loom, a yield.
#[inline]
pub(crate) fn shared_wait(word: &AtomicU32, expected: u32) {
    #[cfg(not(loom))]
    crate::futex::wait(word, expected);
    #[cfg(loom)]
    {
        let _ = (word, expected);
        loom::thread::yield_now();
    }
}

/// Wakes every thread sleeping in [`shared_wait`] on `word`.
#[inline]
pub(crate) fn shared_wake_all(word: &AtomicU32) {
    #[cfg(not(loom))]
    crate::futex::wake_all(word);
    #[cfg(loom)]
    let _ = word;
}
