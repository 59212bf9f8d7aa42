//! Counts what threads share when they allocate from one `ConcurrentArena`:
//! how often a thread leaves its cached run for a lock, and how often a
//! shard goes to the main arena's lock. These counts do not depend on how
//! many cores the machine has, which makes them the first place to look for
//! contention before a many-core run.
//!
//! The workload is the arena bench's (`benches/benches/arena.rs`): each
//! thread makes 16,384 allocations of 16..=128 bytes and writes them; the
//! arena is reset between rounds, as the bench's prefaulted regime does.
//!
//! `cargo run --release -p arena --example shared_traffic -- [--eager-shards] [THREADS...]`
//! (1, 2, 4, 8 and 16 threads by default). A thread takes its runs from the
//! main arena until it first finds the main lock held, and from its CPU's
//! shard after that; on a machine with fewer cores than threads few threads
//! ever meet, so `--eager-shards` sends every thread to the shards at once,
//! as contention does on a many-core machine.

use std::alloc::Layout;
use std::sync::Barrier;

use arena::{ArenaOptions, ConcurrentArena};

const PER_THREAD: usize = 16 * 1024;
const ROUNDS: usize = 8;

fn main() {
    let mut eager = false;
    let mut threads = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--eager-shards" => eager = true,
            count => threads.push(count.parse().expect("a thread count")),
        }
    }
    let threads = if threads.is_empty() {
        vec![1, 2, 4, 8, 16]
    } else {
        threads
    };
    println!("per round, {PER_THREAD} allocations a thread (eager shards: {eager}):");
    println!("threads | bytes asked | runs (a lock each) | shard refills (main lock) | blocks");
    for t in threads {
        let (asked, stats) = run(t, eager);
        println!(
            "{t} | {asked} | {} | {} | {}",
            stats.thread_cache_refills, stats.shard_refills, stats.blocks,
        );
    }
}

/// Runs `ROUNDS` rounds on `threads` threads; returns the bytes asked in
/// one round and the arena's statistics after the last.
fn run(threads: usize, eager: bool) -> (usize, arena::ArenaStats) {
    let mut arena = ConcurrentArena::with_options(ArenaOptions::new().with_eager_shards(eager))
        .expect("valid options");
    let mut asked = 0;
    let mut stats = None;
    for _ in 0..ROUNDS {
        arena.reset();
        let start = Barrier::new(threads);
        asked = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let (arena, start) = (&arena, &start);
                    s.spawn(move || {
                        start.wait();
                        let mut state = 0x9e37_79b9_7f4a_7c15_u64 ^ t as u64;
                        let mut bytes = 0;
                        for _ in 0..PER_THREAD {
                            // xorshift: sizes 16..=128, 8-aligned.
                            state ^= state << 13;
                            state ^= state >> 7;
                            state ^= state << 17;
                            let size = 16 + (state % 15) as usize * 8;
                            let layout = Layout::from_size_align(size, 8).expect("a small layout");
                            let ptr = arena.alloc_layout(layout);
                            // SAFETY: `ptr` is `size` fresh bytes of the arena,
                            // this thread's alone.
                            unsafe { ptr.as_ptr().write_bytes(1, size) };
                            bytes += size;
                        }
                        bytes
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a worker"))
                .sum()
        });
        stats = Some(arena.stats());
    }
    (asked, stats.expect("at least one round"))
}
