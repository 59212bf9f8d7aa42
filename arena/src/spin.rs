//! A small test-and-test-and-set spin lock, after RocksDB's `SpinMutex`.
//!
//! The critical sections it guards are a few dozen instructions (a bump of a
//! pointer, or a refill that takes a slice of the main arena), so spinning
//! beats parking; a holder that was preempted is waited out with
//! `yield_now` after a short spin.
//!
//! | state  | `locked` | entered by                       | left by            |
//! |--------|----------|----------------------------------|--------------------|
//! | free   | `false`  | `SpinGuard::drop` (Release)      | a winning CAS      |
//! | held   | `true`   | `try_lock`'s CAS (Acquire)       | `SpinGuard::drop`  |

use crate::sync::{AtomicBool, Ordering, UnsafeCell, spin_wait};

/// A mutual-exclusion lock that spins, then yields, while it waits.
pub(crate) struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the lock hands out access to `value` to one thread at a time (the
// guard exists only after a successful Acquire CAS, and its drop publishes
// with Release), so sharing the lock only ever moves `T` between threads:
// `T: Send` is enough, as for `std::sync::Mutex`.
unsafe impl<T: Send> Sync for SpinLock<T> {}

impl<T> SpinLock<T> {
    pub(crate) fn new(value: T) -> Self {
        Self {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Takes the lock if it is free right now; `None` means another thread
    /// holds it, which the arena reads as contention.
    #[inline]
    pub(crate) fn try_lock(&self) -> Option<SpinGuard<'_, T>> {
        // Relaxed: only a peek, so that a held lock does not cost a CAS that
        // would pull the cache line in exclusive mode; the CAS below orders.
        if self.locked.load(Ordering::Relaxed) {
            return None;
        }
        // Acquire: pairs with the Release store in `SpinGuard::drop`, so the
        // previous holder's writes to `value` are visible. A strong CAS: a
        // spurious failure would be taken for contention.
        self.locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| SpinGuard { lock: self })
    }

    /// Takes the lock, waiting for it if needed.
    #[inline]
    pub(crate) fn lock(&self) -> SpinGuard<'_, T> {
        match self.try_lock() {
            Some(guard) => guard,
            None => self.lock_contended(),
        }
    }

    #[cold]
    #[inline(never)]
    fn lock_contended(&self) -> SpinGuard<'_, T> {
        let mut rounds = 0;
        loop {
            // Relaxed: waiting for the holder's release; `try_lock` acquires.
            while self.locked.load(Ordering::Relaxed) {
                spin_wait(&mut rounds);
            }
            if let Some(guard) = self.try_lock() {
                return guard;
            }
        }
    }
}

/// Exclusive access to a [`SpinLock`]'s value; unlocks on drop.
///
/// Under loom each access through the guard is recorded on the lock's cell,
/// so that a broken lock is reported as a data race.
pub(crate) struct SpinGuard<'a, T> {
    lock: &'a SpinLock<T>,
}

impl<T> SpinGuard<'_, T> {
    /// Shared access to the value. The main arena is only ever used through
    /// this, never through `&mut`, so that a unique reborrow never covers the
    /// inline block that callers hold pointers into.
    #[inline]
    pub(crate) fn get(&self) -> &T {
        // Recorded as a write (`with_mut`), not a read: the main arena
        // mutates through `&T` (its counters are `Cell`s), so two holders
        // at once must be a race for loom even if both only call `get`.
        // SAFETY: the guard proves this thread holds the lock, so no other
        // thread accesses the value until the guard drops, and the returned
        // borrow cannot outlive the guard.
        self.lock.value.with_mut(|ptr| unsafe { &*ptr })
    }

    /// Exclusive access to the value.
    #[inline]
    pub(crate) fn get_mut(&mut self) -> &mut T {
        // SAFETY: as in `get`; `&mut self` makes this the only borrow
        // through the guard.
        self.lock.value.with_mut(|ptr| unsafe { &mut *ptr })
    }
}

impl<T> Drop for SpinGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // Release: publishes this holder's writes to the next `try_lock`.
        self.lock.locked.store(false, Ordering::Release);
    }
}
