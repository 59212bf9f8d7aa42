//! A per-CPU sharded concurrent bump arena, modelled on RocksDB's `Arena`
//! and `ConcurrentArena`.
//!
//! # What it is
//! A bump arena hands out memory by moving a pointer through large blocks
//! and frees everything at once, when the arena drops. That is the shape of
//! a memtable: millions of small nodes and keys, written once, never freed
//! one by one, dropped together after a flush.
//!
//! - [`Arena`] is the single-threaded building block: a 2 KiB inline first
//!   block (an empty arena reserves nothing), blocks of a configurable size,
//!   dedicated blocks for requests over a quarter block, aligned requests
//!   from one end of a block and unaligned ones from the other, and
//!   RocksDB's accounting ([`memory_allocated_bytes`](Arena::memory_allocated_bytes),
//!   [`allocated_and_unused`](Arena::allocated_and_unused),
//!   [`approximate_memory_usage`](Arena::approximate_memory_usage)).
//! - [`ConcurrentArena`] is `Send + Sync`: one `Arena` behind a spin lock,
//!   plus per-CPU shards that cache slices of it. A thread uses the main
//!   arena until it finds it locked, then shard 0, and moves to the shard
//!   of its CPU once it finds a shard locked, so one writer costs an
//!   uncontended lock and no fragmentation, while many writers each bump in
//!   their own cache line. In front of that, each
//!   thread caches a small run of the arena and serves small requests from
//!   it with no atomic operation at all (the *thread cache*, on by default:
//!   a lock per allocation costs an atomic read-modify-write, as much as the
//!   allocation and its writes together). Its statistics can be read from any
//!   thread while others allocate.
//!
//! Both are shaped like [bumpalo](https://docs.rs/bumpalo)'s `Bump`: `new`,
//! `alloc(value) -> &mut T`, `alloc_slice_copy`, `alloc_str`, `alloc_layout`,
//! `try_alloc_layout`, `reset`; values are never dropped. [`ArenaOptions`]
//! adds a block size, a memory limit (a typed [`AllocError`] once a new block
//! would pass it), huge pages ([`HugePages`]), prefaulting, and a
//! [`BlockPool`] that passes the blocks of a dropped arena on to the next
//! (a memtable after another), so that they are not faulted in again.
//!
//! # When to use it
//! When many threads allocate many small, same-lifetime objects into one
//! shared region that is freed at once: a concurrent memtable (skiplist
//! nodes and keys), an interner, a graph built in parallel. When each thread
//! can own its own arena, do that instead: a `bumpalo::Bump` per thread has
//! no lock at all.
//!
//! # Alternatives
//! - **bumpalo**: the reference single-threaded bump arena. `Bump` is `!Sync`
//!   (its pointer is a `Cell`), so sharing one needs a `Mutex<Bump>`, which
//!   serialises every allocation.
//! - **bumpalo-herd**: a pool of `Bump`s, one checked out per thread
//!   (`herd.get()`); allocations borrow the member, so they cannot outlive
//!   the thread's use of it, and the pool holds one arena per thread that
//!   ever allocated.
//! - **blink-alloc**: `SyncBlinkAlloc` bumps with an atomic `fetch_add`,
//!   which every thread contends on, and takes a lock to add a chunk.
//!
//! `ConcurrentArena` sits between them: one shared arena with `&self`
//! allocation, whose hot path is a thread-local bump (like a `Bump` per
//! thread) refilled through per-CPU spin locks (like RocksDB), and whose
//! memory and waste are accounted as RocksDB does.
//!
//! # Example
//! ```
//! use std::alloc::Layout;
//! use arena::{AllocError, ArenaOptions, ConcurrentArena};
//!
//! let arena = ConcurrentArena::new();
//! std::thread::scope(|s| {
//!     for t in 0..4 {
//!         let arena = &arena;
//!         s.spawn(move || {
//!             let key = arena.alloc_slice_copy(format!("key-{t}").as_bytes());
//!             let node = arena.alloc([0u64; 4]);
//!             node[0] = key.len() as u64;
//!         });
//!     }
//! });
//! assert!(arena.memory_allocated_bytes() >= arena.approximate_memory_usage());
//!
//! // A memory limit turns "needs another block" into a typed error.
//! let small = ArenaOptions::new().with_block_size(4096).with_memory_limit(8192).build_concurrent()?;
//! let layout = Layout::from_size_align(1024, 8)?;
//! let mut failure = None;
//! for _ in 0..16 {
//!     if let Err(error) = small.try_alloc_layout(layout) {
//!         failure = Some(error);
//!         break;
//!     }
//! }
//! assert!(matches!(failure, Some(AllocError::LimitExceeded { .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Platforms
//! Written for Linux, built everywhere. On Linux a thread's shard follows
//! its CPU (`sched_getcpu`) and the [`HugePages`] modes map blocks with
//! `mmap`; on other systems (and under miri) threads get shard indexes
//! round-robin and every block comes from the global allocator: the
//! huge-page modes get no huge pages (`Explicit` counts each block as a
//! fallback), and prefaulting writes to each page.
//!
//! # Verification
//! Unit tests run under miri (`MIRIFLAGS=-Zmiri-strict-provenance cargo
//! +nightly-2026-10-30 miri test -p arena --lib`); a loom model runs two
//! threads on one shard across a refill (`RUSTFLAGS="--cfg loom"
//! LOOM_MAX_PREEMPTIONS=2 cargo test --release -p arena --test loom`), with
//! every lock, atomic and spin of this crate routed through loom, so crates
//! built on the arena can run their own loom models over it; a stress test
//! has 8 threads tag every byte they get and checks that no two allocations
//! overlap.

mod arena;
mod block;
mod concurrent;
mod cpu;
mod options;
mod pool;
mod spin;
mod sync;
mod thread_cache;

use std::ptr::NonNull;

pub use crate::arena::Arena;
pub use crate::concurrent::ConcurrentArena;
#[cfg(loom)]
pub use crate::cpu::mock_current_cpu;
pub use crate::options::{
    AllocError, ArenaOptions, ArenaStats, BLOCK_ALIGN, ConfigError, DEFAULT_BLOCK_SIZE,
    HUGE_PAGES_WHEN_LARGE_FROM, HugePages, INLINE_BLOCK_SIZE, MAX_BLOCK_SIZE, MAX_SHARD_BLOCK_SIZE,
    MAX_THREAD_CACHE_RUN, MIN_BLOCK_SIZE,
};
pub use crate::pool::BlockPool;

/// Writes `value` at `ptr` and borrows it.
///
/// # Safety
/// `ptr` must be valid for writes of a `T`, aligned for it, and not referred
/// to by anything else for `'a`.
#[inline(always)]
unsafe fn write_value<'a, T>(ptr: NonNull<u8>, value: T) -> &'a mut T {
    let ptr = ptr.cast::<T>();
    // SAFETY: the caller's contract.
    unsafe {
        ptr.write(value);
        &mut *ptr.as_ptr()
    }
}

/// Copies `src` to `ptr` and borrows the copy.
///
/// # Safety
/// `ptr` must be valid for writes of `Layout::for_value(src)`, aligned for
/// it, and not referred to by anything else for `'a`.
#[inline(always)]
unsafe fn copy_slice<'a, T: Copy>(ptr: NonNull<u8>, src: &[T]) -> &'a mut [T] {
    let ptr = ptr.cast::<T>();
    // SAFETY: the caller's contract; `src` cannot overlap fresh memory.
    unsafe {
        std::ptr::copy_nonoverlapping(src.as_ptr(), ptr.as_ptr(), src.len());
        std::slice::from_raw_parts_mut(ptr.as_ptr(), src.len())
    }
}

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

#[cfg(test)]
mod tests;
