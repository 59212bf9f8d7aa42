//! Loom models of the `ConcurrentArena`: every lock, atomic and spin in the
//! arena goes through loom under `--cfg loom`, and the CPU id is mocked
//! (0 unless a thread calls `arena::mock_current_cpu`).
//!
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release -p arena --test loom`
#![cfg(loom)]

use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

use arena::{ArenaOptions, ConcurrentArena, INLINE_BLOCK_SIZE};
use loom::sync::Arc;
use loom::thread;

/// An allocation handed back from a thread: start, length, tag.
struct Allocation(NonNull<u8>, usize, u8);

// SAFETY: the pointer is into the arena, which outlives the test's use of it;
// it is only read after the writing thread was joined.
unsafe impl Send for Allocation {}

/// 4 KiB blocks, so 512-byte shard slices and 128-byte shard requests.
fn small_arena(eager: bool) -> Arc<ConcurrentArena> {
    let arena = ArenaOptions::new()
        .with_block_size(4096)
        .with_eager_shards(eager)
        .build_concurrent()
        .unwrap();
    // Use up the inline block (2 x 1000 bytes: over a quarter shard block, so
    // straight to the main arena) before any thread starts, so that the
    // first shard allocation has to take a slice of a heap block.
    for _ in 0..2 {
        arena.alloc_layout(Layout::from_size_align(1000, 8).unwrap());
    }
    Arc::new(arena)
}

fn allocate(arena: &ConcurrentArena, count: usize, size: usize, tag: u8) -> Vec<Allocation> {
    (0..count)
        .map(|i| {
            let ptr = arena.alloc_layout(Layout::from_size_align(size, 8).unwrap());
            assert_eq!(ptr.as_ptr() as usize % 8, 0);
            let tag = tag + i as u8;
            // SAFETY: a fresh allocation of `size` bytes.
            unsafe { ptr.as_ptr().write_bytes(tag, size) };
            Allocation(ptr, size, tag)
        })
        .collect()
}

/// No two allocations overlap and each still holds its own tag.
fn check_disjoint(mut all: Vec<Allocation>) {
    all.sort_by_key(|a| a.0.as_ptr() as usize);
    for pair in all.windows(2) {
        assert!(pair[0].0.as_ptr() as usize + pair[0].1 <= pair[1].0.as_ptr() as usize);
    }
    for Allocation(ptr, size, tag) in all {
        // SAFETY: live arena memory of `size` bytes, its writer joined.
        let bytes = unsafe { std::slice::from_raw_parts(ptr.as_ptr(), size) };
        assert!(bytes.iter().all(|&b| b == tag));
    }
}

/// The model: two threads on one shard (both on mocked CPU 0, shards
/// used from the start), six 128-byte allocations against 512-byte slices:
/// two refills, the second one racing the other thread's bumps.
#[test]
fn two_threads_share_one_shard_across_a_refill() {
    loom::model(|| {
        let arena = small_arena(true);
        let handles: Vec<_> = (0..2u8)
            .map(|t| {
                let arena = arena.clone();
                thread::spawn(move || allocate(&arena, 3, 128, 10 * t + 1))
            })
            .collect();
        let all: Vec<_> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        check_disjoint(all);

        let stats = arena.stats();
        assert_eq!(stats.shard_refills, 2);
        assert_eq!(stats.memory_allocated_bytes, INLINE_BLOCK_SIZE + 4096);
        // 2000 + the stranded 48-byte inline tail + 6 x 128.
        assert_eq!(stats.approximate_memory_usage, 2000 + 48 + 768);
        assert_eq!(
            stats.memory_allocated_bytes,
            stats.approximate_memory_usage + stats.allocated_and_unused
        );
        assert_eq!(arena.allocated_and_unused(), stats.allocated_and_unused);
    });
}

/// Shards only after contention: a thread that finds the main arena locked
/// moves to shard 0, and on to its CPU's shard (mocked: 1) if shard 0 is
/// locked too.
/// Most shard refills seen in one execution (a plain std atomic: it outlives
/// the executions).
static MOST_REFILLS: AtomicUsize = AtomicUsize::new(0);

#[test]
fn contention_moves_threads_to_shards() {
    loom::model(|| {
        let arena = small_arena(false);
        let other = {
            let arena = arena.clone();
            thread::spawn(move || {
                arena::mock_current_cpu(1);
                allocate(&arena, 2, 64, 1)
            })
        };
        let mut all = allocate(&arena, 2, 64, 11);
        all.extend(other.join().unwrap());
        check_disjoint(all);

        let stats = arena.stats();
        assert!(stats.shard_refills <= 2);
        // Relaxed: a std atomic across loom's runs, read after them.
        MOST_REFILLS.fetch_max(stats.shard_refills, Ordering::Relaxed);
        assert!(stats.approximate_memory_usage >= 2000 + 4 * 64);
        assert_eq!(
            stats.memory_allocated_bytes,
            stats.approximate_memory_usage + stats.allocated_and_unused
        );
    });
    // Some interleavings did find the main arena locked.
    // Relaxed: the runs are over.
    assert!(MOST_REFILLS.load(Ordering::Relaxed) > 0);
}

/// The thread cache: two threads take runs (128 bytes with these blocks)
/// through one shard and carve 8-byte requests from them without any
/// atomic; the second run of each thread is a refill while the other thread
/// may be taking its own.
#[test]
fn thread_cache_runs_are_disjoint() {
    loom::model(|| {
        let arena = small_arena(true);
        // Leave the inline block: runs are only taken from heap blocks.
        arena.alloc_layout(Layout::from_size_align(1000, 8).unwrap());
        let run = arena.thread_cache_run_size();
        assert_eq!(run, 128);
        let other = {
            let arena = arena.clone();
            thread::spawn(move || allocate(&arena, 18, 8, 101))
        };
        let mut all = allocate(&arena, 18, 8, 1);
        all.extend(other.join().unwrap());
        check_disjoint(all);

        let stats = arena.stats();
        // Each thread: its first request through the shard path, the next
        // 16 from one run, the last one from a second.
        assert_eq!(stats.thread_cache_refills, 4);
        assert_eq!(
            stats.memory_allocated_bytes,
            stats.approximate_memory_usage + stats.allocated_and_unused
        );
        assert!(stats.approximate_memory_usage >= 3000 + 36 * 8);
    });
}

/// Statistics read while a thread allocates across a refill never go
/// backwards and stay within the reserved memory.
#[test]
fn statistics_are_monotonic_during_a_refill() {
    loom::model(|| {
        let arena = small_arena(true);
        let writer = {
            let arena = arena.clone();
            thread::spawn(move || allocate(&arena, 5, 128, 1))
        };
        let mut last_usage = 0;
        let mut last_allocated = 0;
        for _ in 0..2 {
            let allocated = arena.memory_allocated_bytes();
            let usage = arena.approximate_memory_usage();
            assert!(allocated >= last_allocated);
            assert!(usage >= last_usage);
            assert!(usage <= arena.memory_allocated_bytes());
            (last_usage, last_allocated) = (usage, allocated);
        }
        check_disjoint(writer.join().unwrap());
        assert_eq!(arena.approximate_memory_usage(), 2000 + 48 + 5 * 128);
    });
}
