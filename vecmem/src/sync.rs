//! The synchronisation primitives `vecmem` uses: std's, or loom's models of
//! them under `--cfg loom`, so that `tests/loom.rs` explores the real code.
//!
//! `Arc` is deliberately not here: the memtable's `Arc`s only keep memory
//! alive (their counts order nothing the crate relies on), and the public
//! `cursor_arc` takes a std `Arc` in both builds.

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
