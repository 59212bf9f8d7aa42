//! The synchronisation primitives the crate is built on: std's, or loom's
//! models of them under `--cfg loom`, so that `tests/loom.rs` explores the
//! code that ships.

#[cfg(loom)]
pub(crate) use loom::sync::Mutex;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64};
#[cfg(not(loom))]
pub(crate) use std::sync::Mutex;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64};

/// The pointer `slot` holds, read through the exclusive borrow.
#[cfg(not(loom))]
pub(crate) fn ptr_get_mut<T>(slot: &mut AtomicPtr<T>) -> *mut T {
    *slot.get_mut()
}

/// Loom's `AtomicPtr` has no `get_mut`: `with_mut` reads it, and checks
/// that no access races the read.
#[cfg(loom)]
pub(crate) fn ptr_get_mut<T>(slot: &mut AtomicPtr<T>) -> *mut T {
    slot.with_mut(|p| *p)
}
