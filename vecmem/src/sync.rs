//! The synchronisation primitives `vecmem` uses: std's atomics and
//! `parking_lot`'s `RwLock`, or loom's models of them under `--cfg loom`, so
//! that `tests/loom.rs` explores the real code.
//!
//! The lock is `parking_lot`'s because it does not poison: a panic under it
//! (a comparator panicking mid-sort) leaves the shared vector valid, so
//! std's poison flag would only be checked and ignored, twice per append.
//!
//! `Arc` is deliberately not here: the memtable's `Arc`s only keep memory
//! alive (their counts order nothing the crate relies on), and the public
//! `cursor_arc` takes a std `Arc` in both builds.

#[cfg(not(loom))]
pub(crate) use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicUsize, Ordering};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{RwLockReadGuard, RwLockWriteGuard};

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
