//! Stress tests of `ConcurrentArena` with invariant checks: 8 threads
//! allocate random sizes and alignments, tag every byte, and then every
//! allocation must still hold its tag, lie apart from all others and be
//! aligned; statistics read meanwhile must be monotonic and consistent; and
//! the waste stays bounded.
#![cfg(not(loom))]

use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};

use arena::{ArenaOptions, ConcurrentArena, INLINE_BLOCK_SIZE};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const THREADS: usize = 8;

/// One allocation: where, how long, which alignment, which tag.
#[derive(Clone, Copy)]
struct Allocation {
    ptr: NonNull<u8>,
    size: usize,
    align: usize,
    tag: u8,
}

// SAFETY: the pointer is into the arena, which outlives every use; it is
// read only after its writer was joined.
unsafe impl Send for Allocation {}

/// Mostly small requests (the shard path), some past a quarter shard block
/// (the main arena), a few past a quarter block (irregular blocks).
fn random_layout(rng: &mut SmallRng, block_size: usize) -> Layout {
    let size = match rng.random_range(0..1000) {
        0..=979 => rng.random_range(1..=256),
        980..=997 => rng.random_range(256..=block_size / 4),
        _ => rng.random_range(block_size / 4..=block_size),
    };
    let align = match rng.random_range(0..100) {
        0..=39 => 1,
        40..=89 => 8,
        90..=97 => 1 << rng.random_range(1..=6),
        _ => 4096,
    };
    Layout::from_size_align(size, align).unwrap()
}

fn run_stress(options: ArenaOptions, per_thread: usize) {
    let arena = options.build_concurrent().unwrap();
    let block_size = arena.block_size();
    let start = Barrier::new(THREADS + 1);
    let done = AtomicBool::new(false);
    let (all, requested) = std::thread::scope(|s| {
        let writers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (arena, start) = (&arena, &start);
                s.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(t as u64);
                    let mut mine = Vec::with_capacity(per_thread);
                    start.wait();
                    for i in 0..per_thread {
                        let layout = random_layout(&mut rng, block_size);
                        let ptr = arena.alloc_layout(layout);
                        let tag = (t * 31 + i) as u8;
                        // SAFETY: a fresh allocation of `layout.size()` bytes.
                        unsafe { ptr.as_ptr().write_bytes(tag, layout.size()) };
                        mine.push(Allocation {
                            ptr,
                            size: layout.size(),
                            align: layout.align(),
                            tag,
                        });
                    }
                    mine
                })
            })
            .collect();
        // The statistics reader.
        let reader = s.spawn(|| {
            start.wait();
            let (mut allocated, mut usage, mut samples) = (0, 0, 0u64);
            // Relaxed, here and in the writers: a stop flag that publishes
            // nothing.
            while !done.load(Ordering::Relaxed) {
                let now_allocated = arena.memory_allocated_bytes();
                let stats = arena.stats();
                let now_usage = arena.approximate_memory_usage();
                assert!(
                    now_allocated >= allocated,
                    "memory_allocated_bytes went back"
                );
                assert!(stats.approximate_memory_usage >= usage, "usage went back");
                assert!(
                    now_usage >= stats.approximate_memory_usage,
                    "usage went back"
                );
                assert_eq!(
                    stats.memory_allocated_bytes,
                    stats.approximate_memory_usage + stats.allocated_and_unused
                );
                assert!(stats.memory_allocated_bytes >= now_allocated);
                (allocated, usage) = (stats.memory_allocated_bytes, now_usage);
                samples += 1;
            }
            samples
        });
        let all: Vec<Allocation> = writers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect();
        done.store(true, Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
        let requested: usize = all.iter().map(|a| a.size).sum();
        (all, requested)
    });

    // Every byte still holds its allocation's tag: nothing overlapped.
    for a in &all {
        assert_eq!(a.ptr.as_ptr() as usize % a.align, 0, "misaligned");
        // SAFETY: live arena memory of `a.size` bytes, its writer joined.
        let bytes = unsafe { std::slice::from_raw_parts(a.ptr.as_ptr(), a.size) };
        assert!(
            bytes.iter().all(|&b| b == a.tag),
            "an allocation was overwritten"
        );
    }
    // And, independently of the tags, the ranges are disjoint.
    let mut ranges: Vec<(usize, usize)> = all
        .iter()
        .map(|a| (a.ptr.as_ptr() as usize, a.size))
        .collect();
    ranges.sort_unstable();
    for pair in ranges.windows(2) {
        assert!(
            pair[0].0 + pair[0].1 <= pair[1].0,
            "overlapping allocations"
        );
    }

    let stats = arena.stats();
    assert!(stats.memory_allocated_bytes >= stats.approximate_memory_usage);
    assert!(stats.approximate_memory_usage >= requested);
    assert!(stats.irregular_blocks > 0);
}

#[test]
fn eight_threads_default_blocks() {
    run_stress(ArenaOptions::new(), 20_000);
}

#[test]
fn eight_threads_small_blocks() {
    // 64 KiB blocks: 8 KiB shard slices, so refills and main-arena
    // contention are frequent.
    run_stress(ArenaOptions::new().with_block_size(64 << 10), 20_000);
}

#[test]
fn eight_threads_without_thread_cache() {
    // RocksDB's algorithm alone: every request through the shard locks.
    run_stress(
        ArenaOptions::new()
            .with_block_size(64 << 10)
            .with_thread_cache(false),
        20_000,
    );
}

#[test]
fn eight_threads_eager_shards_and_a_memory_budget() {
    run_stress(
        ArenaOptions::new()
            .with_block_size(64 << 10)
            .with_eager_shards(true)
            .with_memory_limit(1 << 30),
        10_000,
    );
}

/// Waste (reserved bytes minus bytes asked for, alignment padding aside)
/// on the benchmark's workload: 16..=128-byte, 8-aligned requests.
fn waste(arena: &ConcurrentArena, threads: usize, per_thread: usize) -> (usize, usize) {
    let asked: usize = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(100 + t as u64);
                    let mut asked = 0;
                    for _ in 0..per_thread {
                        let size = rng.random_range(16..=128usize);
                        let ptr = arena.alloc_layout(Layout::from_size_align(size, 8).unwrap());
                        // SAFETY: fresh allocation of `size` bytes.
                        unsafe { ptr.as_ptr().write_bytes(1, size) };
                        // Padding to the next 8-aligned request is the
                        // caller's alignment, not the arena's waste.
                        asked += size.next_multiple_of(8);
                    }
                    asked
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    let stats = arena.stats();
    assert!(stats.approximate_memory_usage >= asked);
    (stats.memory_allocated_bytes - asked, asked)
}

#[test]
fn waste_is_bounded() {
    for (threads, cache) in [1, 2, 4, 8]
        .into_iter()
        .flat_map(|t| [(t, true), (t, false)])
    {
        let arena = ArenaOptions::new()
            .with_thread_cache(cache)
            .build_concurrent()
            .unwrap();
        let (waste, asked) = waste(&arena, threads, 50_000);
        let stats = arena.stats();
        let (shards, shard_block, block) = (
            arena.shard_count(),
            arena.shard_block_size(),
            arena.block_size(),
        );
        // What the design guarantees: the main arena's current block, each
        // shard's slice (up to 2 shard blocks when it took a block's tail),
        // the inline block, each abandoned block tail (under half a shard
        // block), each abandoned slice or run tail (under one request), and
        // each thread's cached run.
        let run = arena.thread_cache_run_size();
        let guaranteed = INLINE_BLOCK_SIZE
            + block
            + shards * 2 * shard_block
            + stats.blocks * shard_block / 2
            + (stats.shard_refills + stats.thread_cache_refills) * 128
            + threads * run;
        assert!(
            waste <= guaranteed,
            "{threads} threads: waste {waste} > {guaranteed}"
        );
        // The target: shard count x shard block + one block.
        let target = shards * shard_block + block;
        assert!(
            waste <= target,
            "{threads} threads: waste {waste} of {asked} asked > {target}"
        );
        eprintln!(
            "{threads} threads, thread cache {cache}: waste {waste} of {asked} bytes asked; \
             target {target}"
        );
    }
}
