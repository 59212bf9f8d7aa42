//! Unit tests of the block pool; they run under miri too.

use std::alloc::Layout;

use crate::{AllocError, Arena, ArenaOptions, BlockPool, ConcurrentArena, INLINE_BLOCK_SIZE};

const BLOCK: usize = 4096;

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<BlockPool>();
};

/// Options of arenas with `BLOCK`-byte blocks drawing on `pool`.
fn pooled(pool: &BlockPool) -> ArenaOptions {
    ArenaOptions::new()
        .with_block_size(BLOCK)
        .with_block_pool(pool)
}

/// Fills `arena` past its inline block with `blocks` blocks' worth of
/// 64-byte values tagged `tag`, and checks that every value kept its tag.
fn fill_blocks(arena: &Arena, blocks: usize, tag: u8) {
    let values: Vec<&mut [u8; 64]> = (0..blocks * BLOCK / 64 + INLINE_BLOCK_SIZE / 64)
        .map(|_| arena.alloc([tag; 64]))
        .collect();
    assert!(values.iter().all(|v| v.iter().all(|&b| b == tag)));
}

#[test]
fn a_dropped_arena_leaves_its_blocks_to_the_next() {
    let pool = BlockPool::new(1 << 20);
    let first = pooled(&pool).build().unwrap();
    fill_blocks(&first, 4, 1);
    let blocks = first.stats().blocks;
    assert!(blocks >= 4);
    assert_eq!(first.stats().pooled_blocks, 0);
    drop(first);
    assert_eq!(pool.held_bytes(), blocks * BLOCK);

    let second = pooled(&pool).build().unwrap();
    fill_blocks(&second, 4, 2);
    let stats = second.stats();
    assert_eq!(
        stats.pooled_blocks, blocks,
        "every block came from the pool"
    );
    assert_eq!(
        stats.memory_allocated_bytes,
        INLINE_BLOCK_SIZE + blocks * BLOCK
    );
    assert_eq!(pool.held_bytes(), 0);
}

#[test]
fn the_pool_keeps_the_latest_blocks_within_its_capacity() {
    let pool = BlockPool::new(2 * BLOCK);
    let arena = pooled(&pool).build().unwrap();
    fill_blocks(&arena, 5, 1);
    drop(arena);
    assert_eq!(pool.held_bytes(), 2 * BLOCK);

    let tiny = BlockPool::new(BLOCK - 1);
    let arena = pooled(&tiny).build().unwrap();
    fill_blocks(&arena, 1, 1);
    drop(arena);
    assert_eq!(
        tiny.held_bytes(),
        0,
        "a block larger than the pool is released"
    );
}

#[test]
fn only_blocks_made_alike_are_reused() {
    let pool = BlockPool::new(1 << 20);
    let arena = pooled(&pool).build().unwrap();
    fill_blocks(&arena, 2, 1);
    // A dedicated block for a request over a quarter block: released, not
    // pooled.
    arena.alloc_layout(Layout::from_size_align(BLOCK / 2 + 1, 8).unwrap());
    assert_eq!(arena.stats().irregular_blocks, 1);
    let regular = arena.stats().blocks;
    drop(arena);
    assert_eq!(pool.held_bytes(), regular * BLOCK);

    let larger = ArenaOptions::new()
        .with_block_size(2 * BLOCK)
        .with_block_pool(&pool)
        .build()
        .unwrap();
    larger.alloc_slice_copy(&[0u8; 3 * INLINE_BLOCK_SIZE]);
    assert_eq!(larger.stats().pooled_blocks, 0, "another block size");
    assert_eq!(pool.held_bytes(), regular * BLOCK);
}

#[test]
fn blocks_kept_by_reset_go_to_the_pool_on_drop() {
    let pool = BlockPool::new(1 << 20);
    let mut arena = pooled(&pool).build().unwrap();
    fill_blocks(&arena, 3, 1);
    let blocks = arena.stats().blocks;
    arena.reset();
    assert_eq!(pool.held_bytes(), 0, "reset keeps the blocks itself");
    drop(arena);
    assert_eq!(pool.held_bytes(), blocks * BLOCK);
}

#[test]
fn a_pooled_block_counts_against_the_memory_limit() {
    let pool = BlockPool::new(1 << 20);
    let arena = pooled(&pool).build().unwrap();
    fill_blocks(&arena, 3, 1);
    drop(arena);
    let limited = pooled(&pool)
        .with_memory_limit(INLINE_BLOCK_SIZE + BLOCK)
        .build()
        .unwrap();
    let layout = Layout::from_size_align(64, 8).unwrap();
    let failure = loop {
        if let Err(error) = limited.try_alloc_layout(layout) {
            break error;
        }
    };
    assert!(matches!(failure, AllocError::LimitExceeded { .. }));
    assert_eq!(limited.stats().pooled_blocks, 1);
    assert_eq!(limited.memory_allocated_bytes(), INLINE_BLOCK_SIZE + BLOCK);
}

#[test]
fn clear_releases_every_block() {
    let pool = BlockPool::new(1 << 20);
    let arena = pooled(&pool).build().unwrap();
    fill_blocks(&arena, 2, 1);
    drop(arena);
    assert!(pool.held_bytes() > 0);
    pool.clear();
    assert_eq!(pool.held_bytes(), 0);
    let again = pooled(&pool).build().unwrap();
    fill_blocks(&again, 2, 3);
    assert_eq!(again.stats().pooled_blocks, 0);
}

#[test]
fn concurrent_arenas_share_a_pool_across_threads() {
    let pool = BlockPool::new(1 << 20);
    let options = ArenaOptions::new()
        .with_block_size(16 * BLOCK)
        .with_block_pool(&pool);
    for round in 0..3u8 {
        let arena: ConcurrentArena = options.build_concurrent().unwrap();
        std::thread::scope(|s| {
            for t in 0..2u8 {
                let arena = &arena;
                s.spawn(move || {
                    let tag = round * 2 + t;
                    let values: Vec<&mut [u8; 100]> =
                        (0..200).map(|_| arena.alloc([tag; 100])).collect();
                    assert!(values.iter().all(|v| v.iter().all(|&b| b == tag)));
                });
            }
        });
        if round > 0 {
            assert!(
                arena.stats().pooled_blocks > 0,
                "round {round} reused blocks"
            );
        }
    }
    assert!(pool.held_bytes() > 0);
    assert_eq!(pool, pool.clone());
    assert_ne!(pool, BlockPool::new(1 << 20));
}

#[test]
fn warmed_blocks_are_the_ones_arenas_take() {
    let pool = BlockPool::new(10 * BLOCK);
    let options = pooled(&pool);
    assert_eq!(pool.warm(&options, 3 * BLOCK).unwrap(), 3 * BLOCK);
    assert_eq!(pool.warm(&options, 3 * BLOCK).unwrap(), 0, "there already");
    // Up to the capacity, not past it.
    assert_eq!(pool.warm(&options, 100 * BLOCK).unwrap(), 7 * BLOCK);
    assert_eq!(pool.held_bytes(), 10 * BLOCK);

    let arena = options.build().unwrap();
    fill_blocks(&arena, 4, 7);
    let stats = arena.stats();
    assert_eq!(
        stats.pooled_blocks, stats.blocks,
        "no block from the system"
    );
    assert_eq!(pool.held_bytes(), (10 - stats.blocks) * BLOCK);

    // Blocks made otherwise stay in the pool, untouched by these arenas.
    let other = BlockPool::new(10 * BLOCK);
    other
        .warm(&ArenaOptions::new().with_block_size(2 * BLOCK), 2 * BLOCK)
        .unwrap();
    let arena = pooled(&other).build().unwrap();
    fill_blocks(&arena, 1, 8);
    assert_eq!(arena.stats().pooled_blocks, 0);
    assert_eq!(other.held_bytes(), 2 * BLOCK);
}

#[test]
fn warming_with_options_no_arena_takes_adds_nothing() {
    let pool = BlockPool::new(1 << 20);
    let zero = ArenaOptions::new().with_block_size(0);
    assert_eq!(pool.warm(&zero, 1 << 20).unwrap(), 0);
    // A block larger than the pool's capacity would be released at once.
    let large = ArenaOptions::new().with_block_size(2 << 20);
    assert_eq!(pool.warm(&large, 4 << 20).unwrap(), 0);
    assert_eq!(pool.held_bytes(), 0);
}
