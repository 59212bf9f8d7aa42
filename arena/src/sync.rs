//! The arena's synchronisation primitives, from `std` or, under `--cfg loom`,
//! from loom, so that loom models (ours and those of the crates built on the
//! arena) see every atomic access, every access to lock-protected data, and
//! every spin.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

#[cfg(loom)]
pub(crate) use loom::cell::{MutPtr, UnsafeCell};

/// `std::cell::UnsafeCell` with the access-guard API of `loom::cell::UnsafeCell`.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    /// A pointer for exclusive access; loom checks that no other access overlaps it.
    #[inline]
    pub(crate) fn get_mut(&self) -> MutPtr<T> {
        MutPtr(self.0.get())
    }
}

/// The pointer of [`UnsafeCell::get_mut`].
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct MutPtr<T>(*mut T);

#[cfg(not(loom))]
impl<T> MutPtr<T> {
    /// The raw pointer, to be dereferenced by the caller.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0)
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
