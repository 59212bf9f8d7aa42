//! Which shard a thread uses: a thread-local hint, as RocksDB's `tls_cpuid`.
//!
//! | hint                  | meaning                         | set by            |
//! |-----------------------|---------------------------------|-------------------|
//! | `0`                   | never contended: main arena,    | thread start      |
//! |                       | or shard 0 when it has bytes    |                   |
//! | `cpu \| CONTENDED`    | use shard `cpu & (shards - 1)`  | [`repick`]        |
//!
//! The hint is shared by every arena the thread uses (the shard index is
//! taken modulo each arena's shard count). A thread that migrates keeps its
//! shard until a `try_lock` on it fails, then re-reads its CPU: every shard is
//! behind a lock, so a stale CPU costs speed, never correctness.

use std::cell::Cell;

/// Set in every hint of a thread that has seen contention, so that such a
/// hint is never 0; the low bits pick the shard.
const CONTENDED: usize = 1 << (usize::BITS - 1);

#[cfg(not(loom))]
std::thread_local! {
    static SHARD_HINT: Cell<usize> = const { Cell::new(0) };
}

#[cfg(loom)]
loom::thread_local! {
    static SHARD_HINT: Cell<usize> = Cell::new(0);
}

/// This thread's hint: 0 until it has seen contention.
#[inline]
pub(crate) fn shard_hint() -> usize {
    SHARD_HINT.with(Cell::get)
}

/// Re-reads the current CPU after a failed `try_lock` and remembers it;
/// returns the new hint (never 0).
#[cold]
pub(crate) fn repick() -> usize {
    let hint = current_cpu() | CONTENDED;
    SHARD_HINT.with(|cell| cell.set(hint));
    hint
}

/// The CPU this thread runs on now, from the vDSO's `sched_getcpu`.
#[cfg(all(target_os = "linux", not(miri), not(loom)))]
fn current_cpu() -> usize {
    // SAFETY: `sched_getcpu` takes no arguments and only reads the CPU
    // number (vDSO or rseq area); it reports failure as -1.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).unwrap_or_else(|_| fallback_cpu())
}

/// Without `sched_getcpu` (other systems, miri): a per-thread index handed
/// out round-robin, which spreads threads over the shards as CPUs would.
#[cfg(all(not(all(target_os = "linux", not(miri))), not(loom)))]
fn current_cpu() -> usize {
    fallback_cpu()
}

#[cfg(not(loom))]
fn fallback_cpu() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    std::thread_local! {
        static INDEX: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    INDEX.with(|index| {
        if index.get() == usize::MAX {
            // Relaxed: a counter; only distinctness matters, not order.
            index.set(NEXT.fetch_add(1, Ordering::Relaxed) & (CONTENDED - 1));
        }
        index.get()
    })
}

#[cfg(loom)]
loom::thread_local! {
    static MOCK_CPU: Cell<usize> = Cell::new(0);
}

/// Under loom the CPU is a per-thread mock, 0 unless a model sets it with
/// [`mock_current_cpu`].
#[cfg(loom)]
fn current_cpu() -> usize {
    MOCK_CPU.with(Cell::get)
}

/// Loom only: sets the CPU that the calling (loom) thread reports from now on.
#[cfg(loom)]
pub fn mock_current_cpu(cpu: usize) {
    MOCK_CPU.with(|mock| mock.set(cpu & (CONTENDED - 1)));
}
