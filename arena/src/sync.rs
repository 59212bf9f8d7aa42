//! The arena's synchronisation primitives, from `std` or, under `--cfg loom`,
//! from loom, so that loom models (ours and those of the crates built on the
//! arena) see every atomic access, every access to lock-protected data, and
//! every spin.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The block pool's lock (a slow path: once per block).
#[cfg(loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};

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

/// One round of a spin-wait: a CPU pause for the first `SPINS_BEFORE_YIELD`
/// rounds, then a yield to the scheduler (the lock holder may have been
/// preempted on an oversubscribed machine). Under loom every round yields, so
/// that the model checker can schedule the holder.
#[inline]
pub(crate) fn spin_wait(rounds: &mut u32) {
    #[cfg(loom)]
    {
        let _ = rounds;
        loom::thread::yield_now();
    }
    #[cfg(not(loom))]
    {
        /// RocksDB's SpinMutex yields after 100 failed attempts.
        const SPINS_BEFORE_YIELD: u32 = 100;
        if *rounds < SPINS_BEFORE_YIELD {
            *rounds += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// The number of CPUs the process may run on; a fixed 2 under loom (as tokio
/// mocks it), so models do not depend on the machine.
pub(crate) fn available_cpus() -> usize {
    #[cfg(loom)]
    {
        2
    }
    #[cfg(not(loom))]
    {
        std::thread::available_parallelism().map_or(1, usize::from)
    }
}
