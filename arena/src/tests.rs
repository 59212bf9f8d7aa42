//! Unit tests; they run under miri too (sizes scaled down with `cfg!(miri)`).

use std::alloc::Layout;
use std::ptr::NonNull;

use crate::{
    AllocError, Arena, ArenaOptions, ConcurrentArena, ConfigError, HUGE_PAGES_WHEN_LARGE_FROM,
    HugePages, INLINE_BLOCK_SIZE, MAX_BLOCK_SIZE, MAX_SHARD_BLOCK_SIZE, MIN_BLOCK_SIZE,
};

fn layout(size: usize, align: usize) -> Layout {
    Layout::from_size_align(size, align).unwrap()
}

/// Fills `len` bytes at `ptr` with `tag`.
fn fill(ptr: NonNull<u8>, len: usize, tag: u8) {
    // SAFETY: tests only pass fresh arena allocations of `len` bytes.
    unsafe { ptr.as_ptr().write_bytes(tag, len) };
}

/// Whether all `len` bytes at `ptr` still hold `tag`.
fn holds(ptr: NonNull<u8>, len: usize, tag: u8) -> bool {
    // SAFETY: tests only pass arena allocations of `len` bytes they filled.
    unsafe { std::slice::from_raw_parts(ptr.as_ptr(), len) }
        .iter()
        .all(|&byte| byte == tag)
}

/// A deterministic xorshift, so that miri and native runs see the same sizes.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn scaled(native: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { native }
}

const _: () = {
    const fn assert_send<T: Send>() {}
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send::<Arena>();
    assert_send_sync::<ConcurrentArena>();
};

#[test]
fn an_empty_arena_reserves_no_block() {
    let arena = Arena::with_block_size(4096);
    assert!(arena.is_in_inline_block());
    assert_eq!(arena.memory_allocated_bytes(), INLINE_BLOCK_SIZE);
    assert_eq!(arena.approximate_memory_usage(), 0);
    for i in 0..(INLINE_BLOCK_SIZE / 64) as u64 {
        *arena.alloc([i; 8]) = [i + 1; 8];
    }
    assert!(arena.is_in_inline_block());
    assert_eq!(arena.memory_allocated_bytes(), INLINE_BLOCK_SIZE);
    assert_eq!(arena.allocated_and_unused(), 0);
    arena.alloc(1u8);
    assert!(!arena.is_in_inline_block());
    assert_eq!(arena.memory_allocated_bytes(), INLINE_BLOCK_SIZE + 4096);
    assert_eq!(arena.stats().blocks, 1);
}

#[test]
fn block_size_is_clamped_rounded_or_refused() {
    assert_eq!(Arena::with_block_size(1).block_size(), MIN_BLOCK_SIZE);
    assert_eq!(Arena::with_block_size(5000).block_size(), 5008);
    assert_eq!(Arena::with_block_size(1 << 20).block_size(), 1 << 20);
    assert_eq!(
        ArenaOptions::new()
            .with_block_size(MAX_BLOCK_SIZE)
            .build()
            .unwrap()
            .block_size(),
        MAX_BLOCK_SIZE
    );
    assert_eq!(
        ArenaOptions::new().with_block_size(0).build().unwrap_err(),
        ConfigError::ZeroBlockSize
    );
    assert_eq!(
        ArenaOptions::new()
            .with_block_size(usize::MAX)
            .build_concurrent()
            .unwrap_err(),
        ConfigError::BlockSizeTooLarge {
            requested: usize::MAX
        }
    );
    assert!(
        ConfigError::ZeroBlockSize
            .to_string()
            .contains("block size")
    );
}

#[test]
#[should_panic(expected = "block size is 0")]
fn zero_block_size_panics() {
    let _ = ConcurrentArena::with_block_size(0);
}

#[test]
fn requests_over_a_quarter_block_get_their_own_block() {
    let arena = Arena::with_block_size(4096);
    // What fits in the current block is served there, whatever its size.
    arena.alloc_layout(layout(1500, 8));
    assert!(arena.is_in_inline_block());
    let big = arena.alloc_layout(layout(1025, 8));
    fill(big, 1025, 1);
    let stats = arena.stats();
    assert_eq!((stats.irregular_blocks, stats.blocks), (1, 0));
    assert_eq!(stats.memory_allocated_bytes, INLINE_BLOCK_SIZE + 1025);
    // The current (inline) block was kept.
    assert_eq!(arena.allocated_and_unused(), INLINE_BLOCK_SIZE - 1500);
    // A quarter block is still a regular request.
    arena.alloc_layout(layout(1024, 8));
    assert_eq!(arena.stats().irregular_blocks, 1);
    assert!(holds(big, 1025, 1));
}

#[test]
fn aligned_requests_grow_from_the_front_unaligned_from_the_back() {
    let arena = Arena::with_block_size(4096);
    arena.alloc_layout(layout(INLINE_BLOCK_SIZE, 1)); // use up the inline block
    let a = arena.alloc_layout(layout(24, 8)).as_ptr() as usize;
    let b = arena.alloc_layout(layout(8, 8)).as_ptr() as usize;
    let u1 = arena.alloc_layout(layout(5, 1)).as_ptr() as usize;
    let u2 = arena.alloc_layout(layout(3, 1)).as_ptr() as usize;
    assert_eq!(b, a + 24);
    assert_eq!(u2 + 3, u1);
    assert!(b + 8 <= u2);
    assert_eq!(u1 + 5 - a, 4096, "both ends of one block");
    // No padding between odd-sized unaligned requests and aligned ones.
    assert_eq!(
        arena.approximate_memory_usage(),
        INLINE_BLOCK_SIZE + 24 + 8 + 5 + 3
    );
}

#[test]
fn every_alignment_up_to_the_block_size_is_honoured() {
    let arena = Arena::with_block_size(8192);
    let mut rng = Rng(7);
    let mut live = Vec::new();
    for i in 0..scaled(2000, 200) {
        let align = 1 << rng.below(14); // 1 ..= 8192
        let size = 1 + rng.below(300) as usize;
        let ptr = arena.alloc_layout(layout(size, align));
        assert_eq!(ptr.as_ptr() as usize % align, 0, "align {align}");
        fill(ptr, size, i as u8);
        live.push((ptr, size, i as u8));
    }
    for (ptr, size, tag) in live {
        assert!(holds(ptr, size, tag));
    }
    let stats = arena.stats();
    assert_eq!(
        stats.memory_allocated_bytes,
        stats.approximate_memory_usage + stats.allocated_and_unused
    );
}

#[test]
fn alignment_above_the_block_size_is_an_error() {
    let arena = Arena::with_block_size(4096);
    assert_eq!(
        arena.try_alloc_layout(layout(8, 8192)),
        Err(AllocError::AlignmentTooLarge {
            align: 8192,
            block_size: 4096
        })
    );
    let concurrent = ConcurrentArena::with_block_size(4096);
    assert!(matches!(
        concurrent.try_alloc_layout(layout(1, 1 << 20)),
        Err(AllocError::AlignmentTooLarge { .. })
    ));
}

#[test]
#[should_panic(expected = "larger than the arena block size")]
fn alloc_layout_panics_on_a_bad_alignment() {
    ConcurrentArena::with_block_size(4096).alloc_layout(layout(8, 8192));
}

#[test]
fn zero_size_requests_take_nothing() {
    let arena = Arena::with_block_size(4096);
    let concurrent = ArenaOptions::new()
        .with_block_size(4096)
        .with_eager_shards(true)
        .build_concurrent()
        .unwrap();
    for align in [1, 8, 64, 4096] {
        for ptr in [
            arena.try_alloc_layout(layout(0, align)).unwrap(),
            concurrent.try_alloc_layout(layout(0, align)).unwrap(),
        ] {
            assert_eq!(ptr.as_ptr() as usize % align, 0);
        }
    }
    // A thread-cache entry claimed while the arena is still in its inline
    // block has no run yet: zero-size requests must not carve from it.
    let cached = ConcurrentArena::new();
    for _ in 0..3 {
        cached.alloc(7u64);
    }
    for align in [1, 8] {
        let ptr = cached.try_alloc_layout(layout(0, align)).unwrap();
        assert_eq!(ptr.as_ptr() as usize % align, 0);
    }
    cached.alloc(());
    assert!(arena.try_alloc_layout(layout(0, 8192)).is_err());
    assert!(concurrent.try_alloc_layout(layout(0, 8192)).is_err());
    arena.alloc(());
    assert!(arena.alloc_slice_copy::<u32>(&[]).is_empty());
    assert!(concurrent.alloc_slice_copy::<u64>(&[]).is_empty());
    assert_eq!(concurrent.alloc_str(""), "");
    assert_eq!(arena.memory_allocated_bytes(), INLINE_BLOCK_SIZE);
    assert!(arena.approximate_memory_usage() < 4096);
    assert_eq!(concurrent.memory_allocated_bytes(), INLINE_BLOCK_SIZE);
}

#[test]
fn the_memory_limit_is_a_typed_error() {
    let arena = ArenaOptions::new()
        .with_block_size(4096)
        .with_memory_limit(INLINE_BLOCK_SIZE + 4096)
        .build()
        .unwrap();
    arena.alloc_layout(layout(2000, 8)); // inline
    arena.alloc_layout(layout(1000, 8)); // the one block the limit allows
    arena.alloc_layout(layout(1000, 8));
    let error = arena.try_alloc_layout(layout(2100, 8)).unwrap_err();
    assert_eq!(
        error,
        AllocError::LimitExceeded {
            limit: INLINE_BLOCK_SIZE + 4096,
            allocated: INLINE_BLOCK_SIZE + 4096,
            block: 2100
        }
    );
    assert!(error.to_string().contains("limit"));
    // What fits in the current block still succeeds.
    arena.alloc_layout(layout(1000, 8));
    assert_eq!(arena.memory_allocated_bytes(), INLINE_BLOCK_SIZE + 4096);

    let (value, error) = arena.try_alloc([0u8; 4000]).unwrap_err();
    assert_eq!(value.len(), 4000);
    assert!(matches!(error, AllocError::LimitExceeded { .. }));
}

#[test]
fn the_concurrent_arena_stops_at_its_limit() {
    for eager in [false, true] {
        let limit = INLINE_BLOCK_SIZE + 3 * 4096;
        let arena = ArenaOptions::new()
            .with_block_size(4096)
            .with_memory_limit(limit)
            .with_eager_shards(eager)
            .build_concurrent()
            .unwrap();
        let mut served = 0;
        while let Ok(ptr) = arena.try_alloc_layout(layout(48, 8)) {
            fill(ptr, 48, 3);
            served += 48;
            assert!(served <= limit);
        }
        assert!(served > 2 * 4096, "served {served}");
        assert!(arena.memory_allocated_bytes() <= limit);
        assert!(matches!(
            arena.try_alloc_layout(layout(2000, 8)),
            Err(AllocError::LimitExceeded { .. })
        ));
    }
    let default_limit = ConcurrentArena::with_limit(INLINE_BLOCK_SIZE);
    default_limit.alloc_layout(layout(2000, 1));
    assert!(default_limit.try_alloc_layout(layout(100, 1)).is_err());
}

#[test]
#[should_panic(expected = "memory limit")]
fn alloc_panics_past_the_limit() {
    let arena = ConcurrentArena::with_limit(INLINE_BLOCK_SIZE);
    for _ in 0..100 {
        arena.alloc([0u64; 8]);
    }
}

#[cfg(all(target_os = "linux", not(miri)))]
#[test]
fn absurd_sizes_are_errors_not_ub() {
    let huge = layout(isize::MAX as usize - (1 << 21), 16);
    let transparent = ArenaOptions::new()
        .with_huge_pages(HugePages::Transparent)
        .build()
        .unwrap();
    assert_eq!(
        transparent.try_alloc_layout(huge),
        Err(AllocError::SizeOverflow { size: huge.size() })
    );
    let heap = Arena::new();
    assert!(matches!(
        heap.try_alloc_layout(huge),
        Err(AllocError::OutOfMemory { .. })
    ));
    assert_eq!(heap.memory_allocated_bytes(), INLINE_BLOCK_SIZE);
}

#[test]
fn reset_keeps_regular_blocks_for_reuse() {
    let mut arena = Arena::with_block_size(4096);
    let round = |arena: &Arena| {
        for i in 0..100u64 {
            arena.alloc([i; 16]);
        }
        arena.alloc_layout(layout(3000, 16)); // irregular
    };
    round(&arena);
    let before = arena.stats();
    assert_eq!(before.irregular_blocks, 1);
    arena.reset();
    assert!(arena.is_in_inline_block());
    assert_eq!(arena.approximate_memory_usage(), 0);
    assert_eq!(
        arena.memory_allocated_bytes(),
        before.memory_allocated_bytes - 3000
    );
    round(&arena);
    assert_eq!(arena.stats(), before, "the second round reuses the blocks");

    let mut concurrent = ArenaOptions::new()
        .with_block_size(4096)
        .with_eager_shards(true)
        .build_concurrent()
        .unwrap();
    for _ in 0..2 {
        for i in 0..200u64 {
            concurrent.alloc([i; 4]);
        }
        let allocated = concurrent.memory_allocated_bytes();
        concurrent.reset();
        assert_eq!(concurrent.memory_allocated_bytes(), allocated);
        assert_eq!(concurrent.approximate_memory_usage(), 0);
        assert_eq!(concurrent.allocated_and_unused(), allocated);
    }
}

#[test]
fn huge_page_modes_fall_back_and_say_so() {
    let explicit = ArenaOptions::new()
        .with_block_size(4096)
        .with_huge_pages(HugePages::Explicit)
        .with_prefault(true)
        .build()
        .unwrap();
    explicit.alloc_layout(layout(INLINE_BLOCK_SIZE, 1));
    let ptr = explicit.alloc_layout(layout(64, 8));
    fill(ptr, 64, 9);
    let stats = explicit.stats();
    assert_eq!(stats.blocks, 1);
    assert_eq!(stats.huge_page_blocks + stats.huge_page_fallbacks, 1);
    if cfg!(miri) {
        assert_eq!(stats.huge_page_fallbacks, 1);
    }

    let transparent = ArenaOptions::new()
        .with_block_size(2 << 20)
        .with_huge_pages(HugePages::Transparent)
        .with_prefault(true)
        .build_concurrent()
        .unwrap();
    transparent.alloc_layout(layout(INLINE_BLOCK_SIZE, 1));
    let ptr = transparent.alloc_layout(layout(4096, 64));
    assert_eq!(ptr.as_ptr() as usize % 64, 0);
    fill(ptr, 4096, 5);
    let stats = transparent.stats();
    assert_eq!(stats.blocks, 1);
    assert_eq!(stats.huge_page_fallbacks, 0);
    assert!(stats.transparent_huge_page_blocks <= 1);
    if cfg!(miri) {
        assert_eq!(stats.transparent_huge_page_blocks, 0);
    }
    assert!(holds(ptr, 4096, 5));
}

#[test]
// 16 MiB of allocations and fills take minutes under miri, where blocks
// never come from `mmap` anyway.
#[cfg_attr(miri, ignore)]
fn huge_pages_when_large_turn_on_past_the_threshold() {
    let arena = ArenaOptions::new()
        .with_block_size(1 << 20)
        .with_huge_pages(HugePages::WhenLarge)
        .build_concurrent()
        .unwrap();
    let chunk = layout(64 << 10, 8);
    let mut chunks = Vec::new();
    while arena.memory_allocated_bytes() < HUGE_PAGES_WHEN_LARGE_FROM {
        chunks.push(arena.alloc_layout(chunk));
    }
    let before = arena.stats();
    assert_eq!(before.transparent_huge_page_blocks, 0);
    let small_blocks = before.blocks;
    // Past the threshold the next blocks are huge-page sized (and, where
    // the system has `mmap`, marked for transparent huge pages).
    while arena.stats().blocks < small_blocks + 2 {
        chunks.push(arena.alloc_layout(chunk));
    }
    let after = arena.stats();
    let grown = arena.memory_allocated_bytes() - before.memory_allocated_bytes;
    assert!(
        grown >= 2 * (2 << 20),
        "two new blocks of 2 MiB, grew {grown}"
    );
    if cfg!(all(target_os = "linux", not(miri))) {
        assert!(after.transparent_huge_page_blocks >= 1);
    }
    for (i, &ptr) in chunks.iter().enumerate() {
        fill(ptr, chunk.size(), i as u8);
    }
    assert!(
        chunks
            .iter()
            .enumerate()
            .all(|(i, &ptr)| holds(ptr, chunk.size(), i as u8))
    );
}

#[test]
fn shard_geometry_follows_rocksdb() {
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    for (block, shard_block) in [
        (4096, 512),
        (1 << 20, 128 << 10),
        (64 << 20, MAX_SHARD_BLOCK_SIZE),
    ] {
        let arena = ConcurrentArena::with_block_size(block);
        assert_eq!(arena.block_size(), block);
        assert_eq!(arena.shard_block_size(), shard_block);
        assert!(arena.shard_count().is_power_of_two());
        assert!(arena.shard_count() >= cpus.max(8));
        assert!(arena.shard_count() < 2 * cpus.max(8));
    }
    assert_eq!(
        ConcurrentArena::new().block_size(),
        crate::DEFAULT_BLOCK_SIZE
    );
    let debug = format!("{:?}", ConcurrentArena::default());
    assert!(
        debug.starts_with("ConcurrentArena {") && debug.contains("shard_block_size"),
        "{debug}"
    );
    assert!(format!("{:?}", Arena::default()).starts_with("Arena {"));
}

#[test]
fn one_thread_never_touches_the_shards() {
    let arena = ConcurrentArena::with_block_size(4096);
    let mut requested = 0;
    for i in 0..scaled(5000, 300) {
        let size = 16 + i % 113;
        fill(arena.alloc_layout(layout(size, 8)), size, 1);
        requested += size;
    }
    let stats = arena.stats();
    assert_eq!(stats.shard_refills, 0);
    assert_eq!(arena.allocated_and_unused(), stats.allocated_and_unused);
    assert!(stats.approximate_memory_usage >= requested);
    assert_eq!(
        stats.memory_allocated_bytes,
        stats.approximate_memory_usage + stats.allocated_and_unused
    );
}

#[test]
fn shards_refill_from_the_main_arena() {
    let arena = ArenaOptions::new()
        .with_block_size(4096)
        .with_eager_shards(true)
        .build_concurrent()
        .unwrap();
    let mut live = Vec::new();
    let mut requested = 0;
    for i in 0..scaled(2000, 200) {
        let size = 1 + i % 128;
        let align = if i % 3 == 0 { 1 } else { 8 };
        let ptr = arena.alloc_layout(layout(size, align));
        assert_eq!(ptr.as_ptr() as usize % align, 0);
        fill(ptr, size, i as u8);
        live.push((ptr, size, i as u8));
        requested += size;
        let stats = arena.stats();
        assert!(stats.memory_allocated_bytes >= stats.approximate_memory_usage);
        assert!(stats.approximate_memory_usage >= requested);
    }
    for (ptr, size, tag) in live {
        assert!(holds(ptr, size, tag));
    }
    let stats = arena.stats();
    assert!(stats.shard_refills > 1, "{stats:?}");
    assert_eq!(
        stats.memory_allocated_bytes,
        stats.approximate_memory_usage + stats.allocated_and_unused
    );
    // Requests over a quarter shard block (128 bytes here) bypass the shards.
    let refills = stats.shard_refills;
    arena.alloc_layout(layout(129, 8));
    assert_eq!(arena.stats().shard_refills, refills);
}

#[test]
fn pointers_survive_moving_the_arena() {
    let arena = ConcurrentArena::new();
    let first = arena.alloc_layout(layout(32, 8)); // in the inline block
    fill(first, 32, 0xAB);
    let moved = Box::new(arena);
    let second = moved.alloc_layout(layout(32, 8));
    fill(second, 32, 0xCD);
    assert!(holds(first, 32, 0xAB));
    let moved_again = *moved;
    assert!(holds(first, 32, 0xAB) && holds(second, 32, 0xCD));
    assert_eq!(moved_again.approximate_memory_usage(), 64);
}

#[test]
fn an_arena_can_move_between_uses() {
    let arena = Arena::with_block_size(4096);
    assert_eq!(*arena.alloc(5u32), 5);
    let moved = arena;
    let slice = moved.alloc_slice_copy(&[1u16, 2, 3]);
    assert_eq!(slice, &[1, 2, 3]);
    assert_eq!(moved.approximate_memory_usage(), 4 + 6);
}

#[test]
fn threads_get_disjoint_memory() {
    let threads = scaled(4, 2);
    let per_thread = scaled(2000, 60);
    for eager in [false, true] {
        let arena = ArenaOptions::new()
            .with_block_size(4096)
            .with_eager_shards(eager)
            .build_concurrent()
            .unwrap();
        std::thread::scope(|s| {
            for t in 0..threads {
                let arena = &arena;
                s.spawn(move || {
                    let mut rng = Rng(t as u64 + 1);
                    let mut live = Vec::new();
                    for _ in 0..per_thread {
                        let size = 16 + rng.below(113) as usize;
                        let ptr = arena.alloc_layout(layout(size, 8));
                        fill(ptr, size, t as u8);
                        live.push((ptr, size));
                    }
                    for &(ptr, size) in &live {
                        assert!(holds(ptr, size, t as u8));
                    }
                });
            }
        });
        let stats = arena.stats();
        assert_eq!(
            stats.memory_allocated_bytes,
            stats.approximate_memory_usage + stats.allocated_and_unused
        );
    }
}

#[test]
fn small_requests_come_from_the_thread_cache() {
    let arena = ConcurrentArena::new();
    assert_eq!(arena.thread_cache_run_size(), crate::MAX_THREAD_CACHE_RUN);
    arena.alloc_layout(layout(INLINE_BLOCK_SIZE, 1)); // leave the inline block
    let mut live = Vec::new();
    for i in 0..scaled(2000, 300) {
        let ptr = arena.alloc_layout(layout(64, 8));
        fill(ptr, 64, i as u8);
        live.push((ptr, i as u8));
    }
    for (ptr, tag) in live {
        assert!(holds(ptr, 64, tag));
    }
    let stats = arena.stats();
    let runs = (scaled(2000, 300) * 64).div_ceil(crate::MAX_THREAD_CACHE_RUN);
    assert!(
        (runs..=runs + 1).contains(&stats.thread_cache_refills),
        "{stats:?}"
    );
    assert_eq!(stats.shard_refills, 0);
    assert_eq!(
        stats.memory_allocated_bytes,
        stats.approximate_memory_usage + stats.allocated_and_unused
    );

    let off = ArenaOptions::new()
        .with_thread_cache(false)
        .build_concurrent()
        .unwrap();
    assert_eq!(off.thread_cache_run_size(), 0);
    off.alloc_layout(layout(INLINE_BLOCK_SIZE, 1));
    for _ in 0..100 {
        off.alloc([0u64; 8]);
    }
    assert_eq!(off.stats().thread_cache_refills, 0);
}

#[test]
fn interleaving_many_arenas_does_not_strand_runs() {
    // More arenas than cache entries, used round-robin: no run is ever
    // taken, so none is abandoned at each switch.
    let arenas: Vec<ConcurrentArena> = (0..crate::thread_cache::ENTRIES + 2)
        .map(|_| ConcurrentArena::new())
        .collect();
    for arena in &arenas {
        arena.alloc_layout(layout(INLINE_BLOCK_SIZE, 1));
    }
    for _ in 0..scaled(500, 40) {
        for arena in &arenas {
            fill(arena.alloc_layout(layout(64, 8)), 64, 1);
        }
    }
    for arena in &arenas {
        assert_eq!(arena.stats().thread_cache_refills, 0);
    }
    // Two arenas fit in the cache: both get runs.
    let (a, b) = (ConcurrentArena::new(), ConcurrentArena::new());
    for arena in [&a, &b] {
        arena.alloc_layout(layout(INLINE_BLOCK_SIZE, 1));
    }
    for _ in 0..scaled(500, 40) {
        fill(a.alloc_layout(layout(64, 8)), 64, 2);
        fill(b.alloc_layout(layout(64, 8)), 64, 3);
    }
    let runs = (scaled(500, 40) * 64).div_ceil(crate::MAX_THREAD_CACHE_RUN);
    assert_eq!(a.stats().thread_cache_refills, runs);
    assert_eq!(b.stats().thread_cache_refills, runs);
}

#[test]
fn cached_runs_die_with_reset_and_drop() {
    // A run of a reset or dropped arena must never be used again: miri
    // reports a use after free, and the tags an overlap.
    for _ in 0..3 {
        let mut arena = ArenaOptions::new()
            .with_block_size(64 << 10)
            .build_concurrent()
            .unwrap();
        for round in 0..2u8 {
            arena.alloc_layout(layout(INLINE_BLOCK_SIZE, 1));
            let live: Vec<_> = (0..scaled(400, 60))
                .map(|i| {
                    let ptr = arena.alloc_layout(layout(48, 8));
                    fill(ptr, 48, round ^ i as u8);
                    (ptr, round ^ i as u8)
                })
                .collect();
            for (ptr, tag) in live {
                assert!(holds(ptr, 48, tag));
            }
            assert!(arena.stats().thread_cache_refills > 0);
            arena.reset();
            assert_eq!(arena.stats().thread_cache_refills, 0);
        }
    }
}
