//! `ConcurrentArena` against the arenas a user would pick instead.
//!
//! Each thread makes `BATCH` allocations of 16..=128 bytes (8-aligned, sizes
//! from a fixed seed) and writes every byte of each. Contenders, at 1, 2 and
//! 4 threads (`BENCH_THREADS=1,2,4,8,16` for other counts):
//! - `ConcurrentArena` (default options), without its thread cache (RocksDB's
//!   algorithm alone: a spin lock per allocation), and, on fresh memory, with
//!   `prefault`,
//! - `Mutex<bumpalo::Bump>` (parking_lot), one arena shared by all,
//! - bumpalo-herd, a `Bump` checked out per thread from a pool,
//! - one `Bump` per thread: no sharing at all, the bound,
//! - the global allocator (glibc malloc here).
//!
//! Two memory regimes:
//! - `fresh`: every round starts on new arenas, and glibc maps blocks of
//!   128 KiB or more afresh and returns freed memory (`mallopt`,
//!   `malloc_trim`), so first-touch page faults are in the time.
//! - `prefaulted`: every contender is reset and reused (untimed, with
//!   warm-up rounds until its memory covers a round), so the pages are
//!   already mapped: the allocators alone are timed.
//!
//! A round runs on persistent threads that start together at a barrier;
//! its time is that of the slowest thread (`iter_custom`). Before the
//! benchmarks it prints the waste (reserved minus asked) of each arena
//! against the bound, shard count x shard block + one block.
//!
//! `cargo bench -p benches --bench arena`
#![allow(missing_docs)]

use std::alloc::Layout;
use std::hint::black_box;
use std::ptr::NonNull;
use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use arena::{ArenaOptions, ConcurrentArena};
use bumpalo::Bump;
use bumpalo_herd::Herd;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use crossbeam_utils::CachePadded;
use parking_lot::{Mutex, MutexGuard, RwLock};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Allocations per thread per round (about 1.2 MB of 72-byte average).
const BATCH: usize = 16 * 1024;
/// The thread counts measured: `BENCH_THREADS`, else 1, 2, 4.
fn thread_counts() -> &'static [usize] {
    static THREADS: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    THREADS.get_or_init(|| benches::thread_counts(&[1, 2, 4]))
}
/// Untimed rounds before the timed ones in the prefaulted regime: bumpalo
/// keeps only its last chunk on `reset`, so it needs a few rounds before that
/// chunk holds a whole round.
const WARM_UP_ROUNDS: u64 = 4;
const ALIGN: usize = 8;

/// Request sizes, `BATCH` per thread.
fn sizes() -> &'static [usize] {
    static SIZES: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    SIZES.get_or_init(|| {
        let mut rng = SmallRng::seed_from_u64(0x5EED);
        let max_threads = thread_counts().iter().copied().max().unwrap_or(1);
        (0..BATCH * max_threads)
            .map(|_| rng.random_range(16..=128))
            .collect()
    })
}

/// One allocator under test.
trait Contender: Send + Sync + Sized {
    /// A thread's handle for one round, taken before the clock starts.
    type Worker<'a>
    where
        Self: 'a;
    fn new(threads: usize) -> Self;
    fn worker(&self, thread: usize) -> Self::Worker<'_>;
    fn alloc(worker: &mut Self::Worker<'_>, layout: Layout) -> NonNull<u8>;
    /// Between rounds, untimed: fresh memory, or reuse what is reserved.
    fn recycle(&mut self, threads: usize, fresh: bool);
}

struct Concurrent(ConcurrentArena, ArenaOptions);

impl Concurrent {
    fn with(options: ArenaOptions) -> Self {
        Self(options.build_concurrent().unwrap(), options)
    }
}

impl Contender for Concurrent {
    type Worker<'a> = &'a ConcurrentArena;
    fn new(_: usize) -> Self {
        Self::with(ArenaOptions::new())
    }
    fn worker(&self, _: usize) -> Self::Worker<'_> {
        &self.0
    }
    #[inline]
    fn alloc(worker: &mut Self::Worker<'_>, layout: Layout) -> NonNull<u8> {
        worker.alloc_layout(layout)
    }
    fn recycle(&mut self, _: usize, fresh: bool) {
        if fresh {
            self.0 = self.1.build_concurrent().unwrap();
        } else {
            self.0.reset();
        }
    }
}

/// RocksDB's algorithm alone: a spin lock per allocation.
struct ConcurrentNoCache(Concurrent);

impl Contender for ConcurrentNoCache {
    type Worker<'a> = &'a ConcurrentArena;
    fn new(_: usize) -> Self {
        Self(Concurrent::with(
            ArenaOptions::new().with_thread_cache(false),
        ))
    }
    fn worker(&self, _: usize) -> Self::Worker<'_> {
        &self.0.0
    }
    #[inline]
    fn alloc(worker: &mut Self::Worker<'_>, layout: Layout) -> NonNull<u8> {
        worker.alloc_layout(layout)
    }
    fn recycle(&mut self, threads: usize, fresh: bool) {
        self.0.recycle(threads, fresh);
    }
}

struct ConcurrentPrefault(Concurrent);

impl Contender for ConcurrentPrefault {
    type Worker<'a> = &'a ConcurrentArena;
    fn new(_: usize) -> Self {
        Self(Concurrent::with(ArenaOptions::new().with_prefault(true)))
    }
    fn worker(&self, _: usize) -> Self::Worker<'_> {
        &self.0.0
    }
    #[inline]
    fn alloc(worker: &mut Self::Worker<'_>, layout: Layout) -> NonNull<u8> {
        worker.alloc_layout(layout)
    }
    fn recycle(&mut self, threads: usize, fresh: bool) {
        self.0.recycle(threads, fresh);
    }
}

struct MutexBump(Mutex<Bump>);

impl Contender for MutexBump {
    type Worker<'a> = &'a Mutex<Bump>;
    fn new(_: usize) -> Self {
        Self(Mutex::new(Bump::new()))
    }
    fn worker(&self, _: usize) -> Self::Worker<'_> {
        &self.0
    }
    #[inline]
    fn alloc(worker: &mut Self::Worker<'_>, layout: Layout) -> NonNull<u8> {
        worker.lock().alloc_layout(layout)
    }
    fn recycle(&mut self, _: usize, fresh: bool) {
        if fresh {
            *self.0.get_mut() = Bump::new();
        } else {
            self.0.get_mut().reset();
        }
    }
}

struct HerdContender(Herd);

impl Contender for HerdContender {
    type Worker<'a> = bumpalo_herd::Member<'a>;
    fn new(_: usize) -> Self {
        Self(Herd::new())
    }
    fn worker(&self, _: usize) -> Self::Worker<'_> {
        self.0.get()
    }
    #[inline]
    fn alloc(worker: &mut Self::Worker<'_>, layout: Layout) -> NonNull<u8> {
        worker.alloc_layout(layout)
    }
    fn recycle(&mut self, _: usize, fresh: bool) {
        if fresh {
            self.0 = Herd::new();
        } else {
            self.0.reset();
        }
    }
}

/// One `Bump` per thread; the mutex is taken once per round, untimed.
struct BumpPerThread(Vec<CachePadded<Mutex<Bump>>>);

impl Contender for BumpPerThread {
    type Worker<'a> = MutexGuard<'a, Bump>;
    fn new(threads: usize) -> Self {
        Self(
            (0..threads)
                .map(|_| CachePadded::new(Mutex::new(Bump::new())))
                .collect(),
        )
    }
    fn worker(&self, thread: usize) -> Self::Worker<'_> {
        self.0[thread].lock()
    }
    #[inline]
    fn alloc(worker: &mut Self::Worker<'_>, layout: Layout) -> NonNull<u8> {
        worker.alloc_layout(layout)
    }
    fn recycle(&mut self, threads: usize, fresh: bool) {
        if fresh {
            *self = Self::new(threads);
        } else {
            self.0.iter_mut().for_each(|bump| bump.get_mut().reset());
        }
    }
}

/// The global allocator; each thread frees its blocks after the clock stops.
struct Global;

struct GlobalWorker(Vec<(NonNull<u8>, Layout)>);

impl Drop for GlobalWorker {
    fn drop(&mut self) {
        for &(ptr, layout) in &self.0 {
            // SAFETY: allocated by `std::alloc::alloc` with this layout.
            unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) };
        }
    }
}

impl Contender for Global {
    type Worker<'a> = GlobalWorker;
    fn new(_: usize) -> Self {
        Self
    }
    fn worker(&self, _: usize) -> Self::Worker<'_> {
        GlobalWorker(Vec::with_capacity(BATCH))
    }
    #[inline]
    fn alloc(worker: &mut Self::Worker<'_>, layout: Layout) -> NonNull<u8> {
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { std::alloc::alloc(layout) }).expect("out of memory");
        worker.0.push((ptr, layout));
        ptr
    }
    fn recycle(&mut self, _: usize, _: bool) {}
}

/// Makes glibc's malloc, under every contender (arena blocks and bumpalo
/// chunks come from it too), match the regime: for fresh rounds, blocks of
/// 128 KiB or more are mapped and unmapped each time and freed memory goes
/// back to the system; for prefaulted rounds, freed memory is kept for reuse.
fn configure_malloc(fresh: bool) {
    // SAFETY: glibc tuning calls, with no pointers involved.
    unsafe {
        if fresh {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 10);
        } else {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        }
    }
}

/// Gives freed memory back to the system, so that the next round faults.
fn trim_malloc() {
    // SAFETY: a glibc call with no pointers involved.
    unsafe { libc::malloc_trim(0) };
}

/// Runs `iters` timed rounds (after warm-up rounds when prefaulted) on
/// `threads` persistent threads; returns the sum of the slowest thread's time
/// of each round.
fn measure<C: Contender>(threads: usize, iters: u64, fresh: bool) -> Duration {
    configure_malloc(fresh);
    let warm_up = if fresh { 0 } else { WARM_UP_ROUNDS };
    let rounds = warm_up + iters;
    let contender = RwLock::new(C::new(threads));
    let start = Barrier::new(threads + 1);
    let end = Barrier::new(threads + 1);
    let nanos: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
    let sizes = sizes();
    std::thread::scope(|s| {
        for thread in 0..threads {
            let (contender, start, end, nanos) = (&contender, &start, &end, &nanos);
            s.spawn(move || {
                let sizes = &sizes[thread * BATCH..(thread + 1) * BATCH];
                for _ in 0..rounds {
                    start.wait();
                    {
                        let contender = contender.read();
                        let mut worker = contender.worker(thread);
                        let clock = Instant::now();
                        for (i, &size) in sizes.iter().enumerate() {
                            let layout = Layout::from_size_align(size, ALIGN).unwrap();
                            let ptr = C::alloc(&mut worker, layout);
                            // SAFETY: a fresh allocation of `size` bytes.
                            unsafe { ptr.as_ptr().write_bytes(i as u8, size) };
                            black_box(ptr);
                        }
                        // Relaxed: read after the barrier below, which orders
                        // it.
                        nanos[thread].store(clock.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    }
                    end.wait();
                }
            });
        }
        let mut total = Duration::ZERO;
        for round in 0..rounds {
            contender.write().recycle(threads, fresh);
            if fresh {
                trim_malloc();
            }
            start.wait();
            end.wait();
            if round >= warm_up {
                let slowest = nanos
                    .iter()
                    .map(|n| n.load(Ordering::Relaxed))
                    .max()
                    .unwrap();
                total += Duration::from_nanos(slowest);
            }
        }
        total
    })
}

fn bench_regime(c: &mut Criterion, fresh: bool) {
    let mut group = c.benchmark_group(if fresh {
        "arena/fresh"
    } else {
        "arena/prefaulted"
    });
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    for &threads in thread_counts() {
        group.throughput(Throughput::Elements((threads * BATCH) as u64));
        let mut run = |name: &str, f: fn(usize, u64, bool) -> Duration| {
            group.bench_function(BenchmarkId::new(name, threads), |b| {
                b.iter_custom(|iters| f(threads, iters, fresh))
            });
        };
        run("ConcurrentArena", measure::<Concurrent>);
        run(
            "ConcurrentArena, no thread cache",
            measure::<ConcurrentNoCache>,
        );
        if fresh {
            run("ConcurrentArena+prefault", measure::<ConcurrentPrefault>);
        }
        run("Mutex<Bump>", measure::<MutexBump>);
        run("bumpalo-herd", measure::<HerdContender>);
        run("Bump per thread", measure::<BumpPerThread>);
        run("global allocator", measure::<Global>);
    }
    group.finish();
}

fn fresh_memory(c: &mut Criterion) {
    bench_regime(c, true);
}

fn prefaulted_memory(c: &mut Criterion) {
    bench_regime(c, false);
}

/// Reserved minus asked, after one round of `threads` x `BATCH`
/// allocations; "asked" counts each request rounded to its 8-byte alignment
/// (padding any 8-aligned allocator pays).
fn waste_report(_: &mut Criterion) {
    println!("\nwaste after one round ({BATCH} allocations of 16..=128 bytes per thread):");
    println!(
        "{:>7} | {:>12} | {:>12} | {:>10} | {:>9} | {:>9} | {:>12} | {:>15}",
        "threads",
        "thread cache",
        "asked",
        "arena",
        "waste",
        "bound",
        "Mutex<Bump>",
        "Bump per thread"
    );
    for (threads, cache) in thread_counts()
        .iter()
        .flat_map(|&t| [(t, true), (t, false)])
    {
        let arena = ArenaOptions::new()
            .with_thread_cache(cache)
            .build_concurrent()
            .unwrap();
        let shared = Mutex::new(Bump::new());
        let mut per_thread = BumpPerThread::new(threads);
        let asked: usize = sizes()[..threads * BATCH]
            .iter()
            .map(|s| s.next_multiple_of(ALIGN))
            .sum();
        std::thread::scope(|s| {
            for thread in 0..threads {
                let (arena, shared, mine) = (&arena, &shared, &per_thread.0[thread]);
                s.spawn(move || {
                    let mine = mine.lock();
                    for &size in &sizes()[thread * BATCH..(thread + 1) * BATCH] {
                        let layout = Layout::from_size_align(size, ALIGN).unwrap();
                        for ptr in [
                            arena.alloc_layout(layout),
                            shared.lock().alloc_layout(layout),
                            mine.alloc_layout(layout),
                        ] {
                            // SAFETY: a fresh allocation of `size` bytes.
                            unsafe { ptr.as_ptr().write_bytes(1, size) };
                        }
                    }
                });
            }
        });
        let reserved = arena.memory_allocated_bytes();
        let bound = arena.shard_count() * arena.shard_block_size() + arena.block_size();
        let waste = reserved - asked;
        let per_thread_bytes: usize = per_thread
            .0
            .iter_mut()
            .map(|b| b.get_mut().allocated_bytes())
            .sum();
        println!(
            "{threads:>7} | {:>12} | {asked:>12} | {reserved:>10} | {waste:>9} | {bound:>9} | {:>12} | {per_thread_bytes:>15}   {}",
            if cache { "on" } else { "off" },
            shared.lock().allocated_bytes(),
            if waste <= bound {
                "within bound"
            } else {
                "OVER BOUND"
            },
        );
    }
    println!();
}

criterion_group!(benches, waste_report, prefaulted_memory, fresh_memory);
criterion_main!(benches);
