//! The synchronisation primitives the list uses: std's, or loom's mocks under
//! `--cfg loom` so that `tests/loom.rs` can explore the interleavings.
//!
//! Only the atomics that order the list (links, `max_height`, the length
//! stripes, the entry index and its builder's lock) and the per-thread
//! state go through here. The global counter that hands out list ids stays
//! a std atomic (it is read once per list and orders nothing), and so do
//! the successor hints of the prefixed layout (they only steer
//! prefetching; see `node.rs`).

#[cfg(loom)]
pub(crate) use loom::sync::Mutex;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::thread_local;

#[cfg(not(loom))]
pub(crate) use std::sync::Mutex;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::thread_local;
