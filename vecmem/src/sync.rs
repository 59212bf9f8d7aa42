//! The synchronisation primitives `vecmem` uses: std's atomics and
//! `parking_lot`'s `RwLock` and `Mutex`, or loom's models of them under
//! `--cfg loom`, so that `tests/loom.rs` explores the real code.
//!
//! The locks are `parking_lot`'s because they do not poison: a panic under
//! the `RwLock` (a comparator panicking mid-sort) leaves the shared vector
//! valid, and nothing under a lane's `Mutex` can panic but an allocation, so
//! std's poison flag would only be checked and ignored, twice per append.
//!
//! `Arc` is deliberately not here: the memtable's `Arc`s only keep memory
//! alive (their counts order nothing the crate relies on), and the public
//! `cursor_arc` takes a std `Arc` in both builds.
//!
//! The `UnsafeCell` holds a listed batch's fields, written by its writer and
//! read by whoever walks the list, so that loom checks those accesses too.

#[cfg(not(loom))]
pub(crate) use parking_lot::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{MutexGuard, RwLockReadGuard, RwLockWriteGuard};

/// loom's `Mutex` with `parking_lot`'s signatures (no poisoning).
#[cfg(loom)]
pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

#[cfg(loom)]
impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(loom::sync::Mutex::new(value))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        match self.0.try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }
}

/// loom's `RwLock` with `parking_lot`'s signatures (no poisoning).
#[cfg(loom)]
pub(crate) struct RwLock<T>(loom::sync::RwLock<T>);

#[cfg(loom)]
impl<T> RwLock<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(loom::sync::RwLock::new(value))
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, T> {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, T> {
        self.0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

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
