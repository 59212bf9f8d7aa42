//! The synchronisation primitives the crate is built on: std's, or loom's
//! models of them under `--cfg loom`, so that `tests/loom.rs` explores the
//! code that ships.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU64, fence};
#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicPtr, AtomicU64, fence};
#[cfg(not(loom))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};

#[cfg(not(loom))]
pub(crate) use portable_atomic::AtomicU128;

/// Loom has no 128-bit atomic: a mutex stands in for one. Loom then
/// explores the interleavings of whole operations on it, each ordered as
/// strongly as a lock orders (so it cannot find a too-weak ordering on this
/// one word; the orderings passed are those of the real atomic).
#[cfg(loom)]
#[derive(Debug)]
pub(crate) struct AtomicU128(loom::sync::Mutex<u128>);

#[cfg(loom)]
impl AtomicU128 {
    pub(crate) fn new(v: u128) -> Self {
        AtomicU128(loom::sync::Mutex::new(v))
    }

    fn with<R>(&self, f: impl FnOnce(&mut u128) -> R) -> R {
        f(&mut self.0.lock().unwrap())
    }

    pub(crate) fn load(&self, _: std::sync::atomic::Ordering) -> u128 {
        self.with(|v| *v)
    }

    pub(crate) fn compare_exchange_weak(
        &self,
        current: u128,
        new: u128,
        _: std::sync::atomic::Ordering,
        _: std::sync::atomic::Ordering,
    ) -> Result<u128, u128> {
        self.with(|v| {
            if *v == current {
                *v = new;
                Ok(current)
            } else {
                Err(*v)
            }
        })
    }

    pub(crate) fn fetch_or(&self, bits: u128, _: std::sync::atomic::Ordering) -> u128 {
        self.with(|v| std::mem::replace(v, *v | bits))
    }

    pub(crate) fn fetch_and(&self, bits: u128, _: std::sync::atomic::Ordering) -> u128 {
        self.with(|v| std::mem::replace(v, *v & bits))
    }
}

/// A busy-wait hint; under loom a yield, so that every wait stays finite.
#[inline]
pub(crate) fn spin_loop() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

/// Gives the time slice away.
#[inline]
pub(crate) fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}
