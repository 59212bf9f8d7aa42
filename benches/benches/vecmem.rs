//! `vecmem` against the vectors a user would reach for instead, and against
//! the workspace's skiplist, on the same entries.
//!
//! Groups (criterion ids `group/contender/parameter`):
//!
//! - `append_fresh/<contender>/t<threads>_b<batch>` and
//!   `append_prefaulted/...`: append N entries (16-byte random key + 100-byte
//!   value) from 1, 2 and 4 threads (`BENCH_THREADS` for others); throughput in elements/s. `vecmem` runs
//!   with batches of 1 and of 100 entries (one `Writer` per batch), and
//!   `vecmem_insert` calls `VecMem::insert` per entry; the other contenders
//!   do the same work per entry whatever the batch, so they run once per
//!   thread count, under `_b1`.
//! - `sort_on_freeze/<contender>`: the first cursor of a frozen memtable
//!   (which sorts it), with and without rayon, next to sorting a plain
//!   `Vec<&[u8]>`.
//!
//! Every contender copies each entry into a `ConcurrentArena` (the skiplist
//! into its own) and keeps a reference in its vector, so the contenders
//! differ only in how references reach the shared structure.
//!
//! Memory (glibc): `fresh` trims freed memory on free and hands the rest back
//! to the kernel (`malloc_trim`) before each iteration, so the iteration pays
//! first-touch page faults; `prefaulted` keeps freed memory resident (trim
//! threshold raised, heaps padded, large blocks kept off `mmap`) and warms each benchmark
//! up once, so iterations reuse resident pages. After each append benchmark
//! a line `vecmem-bench faults ...` gives the minor page faults per entry
//! taken inside the timed sections, which shows whether `prefaulted` took the
//! faults out. (An arena configured for mmapped huge pages would bypass
//! this: the benchmark uses `ConcurrentArena::new()`, heap blocks.)
//!
//! `VECMEM_BENCH_N` sets N (default 1,000,000), for quick runs:
//! `VECMEM_BENCH_N=20000 cargo bench -p benches --bench vecmem -- 'append_prefaulted/vecmem/t2'`.
#![allow(missing_docs)]

use std::cell::Cell;
use std::hint::black_box;
use std::time::{Duration, Instant};

use arena::ConcurrentArena;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use inline_skiplist::SkipList;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::slice::ParallelSliceMut;
use vecmem::{BytewiseComparator, VecMem};

const KEY_LEN: usize = 16;
const VALUE_LEN: usize = 100;
const ENTRY_LEN: usize = KEY_LEN + VALUE_LEN;
const BATCHES: [usize; 2] = [1, 100];

/// Entries per iteration: `VECMEM_BENCH_N`, or 1,000,000.
fn entry_count() -> usize {
    match std::env::var("VECMEM_BENCH_N") {
        Ok(text) => text
            .parse()
            .unwrap_or_else(|_| panic!("VECMEM_BENCH_N={text:?} is not a count")),
        Err(_) => 1_000_000,
    }
}

/// `n` entries back to back, `ENTRY_LEN` bytes each, from a fixed seed.
fn random_entries(n: usize) -> Vec<u8> {
    let mut rng = SmallRng::seed_from_u64(0x5eed_0fe0_7ec0_0001);
    let mut bytes = vec![0u8; n * ENTRY_LEN];
    rng.fill(&mut bytes[..]);
    bytes
}

fn entries(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.chunks_exact(ENTRY_LEN)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Memory {
    Fresh,
    Prefaulted,
}

impl Memory {
    fn group_name(self) -> &'static str {
        match self {
            Memory::Fresh => "append_fresh",
            Memory::Prefaulted => "append_prefaulted",
        }
    }
}

/// Sets glibc's heap trimming for `memory`. `Prefaulted`: freed memory stays
/// resident (glibc otherwise trims heap tops, and the next iteration faults
/// the pages in again). `Fresh`: heap tops are trimmed on free, as by
/// default, so that `release_free_memory` can hand back the rest.
fn configure_malloc(memory: Memory) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets allocator tunables; no benchmark thread is
    // running when it is called.
    unsafe {
        // The largest threshold glibc accepts (HEAP_MAX_SIZE / 2 on 64-bit):
        // blocks below it come from a heap, whose pages can stay resident,
        // not from a fresh mmap.
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        let (trim_threshold, top_pad) = match memory {
            Memory::Fresh => (128 << 10, 128 << 10),
            // The pad keeps a thread's heap other than the main one from
            // emptying entirely when an iteration frees it, which would
            // unmap the heap whatever the threshold (glibc's `heap_trim`).
            Memory::Prefaulted => (i32::MAX, 64 << 20),
        };
        libc::mallopt(libc::M_TRIM_THRESHOLD, trim_threshold);
        libc::mallopt(libc::M_TOP_PAD, top_pad);
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    eprintln!("vecmem-bench: not glibc; `fresh` and `prefaulted` may not differ ({memory:?})");
}

/// Hands every free page back to the kernel, so the next iteration faults.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` walks glibc's own free lists; no pointer of ours
    // is involved.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn minor_faults() -> u64 {
    #[cfg(unix)]
    {
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
        // SAFETY: `getrusage` fills the whole `rusage` it is given.
        let usage = unsafe {
            libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr());
            usage.assume_init()
        };
        usage.ru_minflt as u64
    }
    #[cfg(not(unix))]
    0
}

/// One timed section: wall time and the page faults taken in it.
struct Sample {
    elapsed: Duration,
    faults: u64,
}

fn timed(work: impl FnOnce()) -> Sample {
    let faults = minor_faults();
    let start = Instant::now();
    work();
    let elapsed = start.elapsed();
    Sample {
        elapsed,
        faults: minor_faults() - faults,
    }
}

/// What one append iteration is given.
struct Input<'a> {
    entries: &'a [u8],
    threads: usize,
    batch: usize,
}

impl Input<'_> {
    /// Runs `work` on `threads` scoped threads, each with an equal share.
    fn on_threads(&self, work: impl Fn(&[u8]) + Sync) {
        let per_thread = self.entries.len().div_ceil(ENTRY_LEN * self.threads) * ENTRY_LEN;
        std::thread::scope(|s| {
            for share in self.entries.chunks(per_thread) {
                let work = &work;
                s.spawn(move || work(share));
            }
        });
    }
}

/// An append contender: builds its structure, times the appends, and drops
/// the structure after the clock stops.
type Contender = fn(&Input<'_>) -> Sample;

fn vecmem(input: &Input<'_>) -> Sample {
    let mem = VecMem::new(BytewiseComparator);
    let sample = timed(|| {
        input.on_threads(|share| {
            for batch in share.chunks(ENTRY_LEN * input.batch) {
                let mut writer = mem.writer();
                for entry in entries(batch) {
                    writer.insert(entry);
                }
                writer.finish();
            }
        })
    });
    assert_eq!(mem.len() * ENTRY_LEN, input.entries.len());
    sample
}

/// `VecMem::insert`: the lock per entry, no writer handle.
fn vecmem_insert(input: &Input<'_>) -> Sample {
    let mem = VecMem::new(BytewiseComparator);
    let sample = timed(|| {
        input.on_threads(|share| {
            for entry in entries(share) {
                mem.insert(entry);
            }
        })
    });
    assert_eq!(mem.len() * ENTRY_LEN, input.entries.len());
    sample
}

fn std_mutex_vec(input: &Input<'_>) -> Sample {
    let arena = ConcurrentArena::new();
    let shared = std::sync::Mutex::new(Vec::<&[u8]>::new());
    let sample = timed(|| {
        input.on_threads(|share| {
            for entry in entries(share) {
                let entry: &[u8] = arena.alloc_slice_copy(entry);
                shared.lock().unwrap().push(entry);
            }
        })
    });
    assert_eq!(
        shared.lock().unwrap().len() * ENTRY_LEN,
        input.entries.len()
    );
    sample
}

fn parking_lot_mutex_vec(input: &Input<'_>) -> Sample {
    let arena = ConcurrentArena::new();
    let shared = parking_lot::Mutex::new(Vec::<&[u8]>::new());
    let sample = timed(|| {
        input.on_threads(|share| {
            for entry in entries(share) {
                let entry: &[u8] = arena.alloc_slice_copy(entry);
                shared.lock().push(entry);
            }
        })
    });
    assert_eq!(shared.lock().len() * ENTRY_LEN, input.entries.len());
    sample
}

/// The bound: no sharing until each thread is done.
fn per_thread_vec_bound(input: &Input<'_>) -> Sample {
    let arena = ConcurrentArena::new();
    let shared = std::sync::Mutex::new(Vec::<&[u8]>::new());
    let sample = timed(|| {
        input.on_threads(|share| {
            let mut local = Vec::new();
            for entry in entries(share) {
                local.push(&*arena.alloc_slice_copy(entry));
            }
            shared.lock().unwrap().extend_from_slice(&local);
        })
    });
    assert_eq!(
        shared.lock().unwrap().len() * ENTRY_LEN,
        input.entries.len()
    );
    sample
}

fn skiplist(input: &Input<'_>) -> Sample {
    let list = SkipList::new(BytewiseComparator);
    timed(|| {
        input.on_threads(|share| {
            for entry in entries(share) {
                assert!(list.insert(entry), "random 16-byte keys do not repeat");
            }
        })
    })
    // `list` drops here, after the clock stopped.
}

/// Contenders whose work depends on the batch size, and those that do the
/// same per-entry work for any batch (run under `_b1` only).
const BATCHED: &[(&str, Contender)] = &[("vecmem", vecmem)];
const PER_ENTRY: &[(&str, Contender)] = &[
    ("vecmem_insert", vecmem_insert),
    ("std_mutex_vec", std_mutex_vec),
    ("parking_lot_mutex_vec", parking_lot_mutex_vec),
    ("per_thread_vec_bound", per_thread_vec_bound),
    ("skiplist", skiplist),
];

fn append(c: &mut Criterion) {
    let n = entry_count();
    let bytes = random_entries(n);
    for memory in [Memory::Fresh, Memory::Prefaulted] {
        configure_malloc(memory);
        let mut group = c.benchmark_group(memory.group_name());
        group
            .throughput(Throughput::Elements(n as u64))
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(4));
        for threads in benches::thread_counts(&[1, 2, 4]) {
            for batch in BATCHES {
                let contenders = BATCHED
                    .iter()
                    .chain(if batch == 1 { PER_ENTRY } else { &[] });
                for &(name, contender) in contenders {
                    let input = Input {
                        entries: &bytes,
                        threads,
                        batch,
                    };
                    let parameter = format!("t{threads}_b{batch}");
                    let id = BenchmarkId::new(name, &parameter);
                    let faults = Cell::new((0u64, 0u64));
                    let mut warmed = false;
                    group.bench_function(id, |b| {
                        b.iter_custom(|iters| {
                            if memory == Memory::Prefaulted && !warmed {
                                black_box(contender(&input));
                                warmed = true;
                            }
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                if memory == Memory::Fresh {
                                    release_free_memory();
                                }
                                let sample = contender(&input);
                                total += sample.elapsed;
                                let (f, e) = faults.get();
                                faults.set((f + sample.faults, e + n as u64));
                            }
                            total
                        })
                    });
                    let (f, e) = faults.get();
                    if e == 0 {
                        continue; // filtered out
                    }
                    eprintln!(
                        "vecmem-bench faults {}/{name}/{parameter}: {:.4} minor faults per entry",
                        memory.group_name(),
                        f as f64 / e.max(1) as f64
                    );
                }
            }
        }
        group.finish();
    }
}

/// Times the first cursor of a frozen memtable holding `bytes`' entries.
fn frozen_memtable_sort(
    bytes: &[u8],
    parallel_threshold: usize,
) -> impl FnMut(u64) -> Duration + '_ {
    move |iters| {
        let n = bytes.len() / ENTRY_LEN;
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            let mem =
                VecMem::new(BytewiseComparator).with_parallel_sort_threshold(parallel_threshold);
            for batch in bytes.chunks(ENTRY_LEN * 100) {
                let mut writer = mem.writer();
                entries(batch).for_each(|e| writer.insert(e));
            }
            mem.mark_read_only();
            let start = Instant::now();
            let cursor = mem.cursor();
            total += start.elapsed();
            assert_eq!((cursor.snapshot_len(), mem.sort_count()), (n, 1));
        }
        total
    }
}

fn sort_on_freeze(c: &mut Criterion) {
    let n = entry_count();
    let bytes = random_entries(n);
    let mut group = c.benchmark_group("sort_on_freeze");
    group
        .throughput(Throughput::Elements(n as u64))
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));

    group.bench_function("vecmem_rayon", |b| {
        b.iter_custom(frozen_memtable_sort(
            &bytes,
            vecmem::DEFAULT_PARALLEL_SORT_THRESHOLD,
        ))
    });
    group.bench_function("vecmem_serial", |b| {
        b.iter_custom(frozen_memtable_sort(&bytes, usize::MAX))
    });

    // The same sorts on a plain vector of fat `&[u8]` references.
    let arena = ConcurrentArena::new();
    let unsorted: Vec<&[u8]> = entries(&bytes)
        .map(|e| &*arena.alloc_slice_copy(e))
        .collect();
    let vec_sort = |parallel: bool| {
        let unsorted = &unsorted;
        move |iters: u64| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut refs = unsorted.clone();
                let start = Instant::now();
                if parallel {
                    refs.par_sort_unstable();
                } else {
                    refs.sort_unstable();
                }
                total += start.elapsed();
                black_box(&refs);
            }
            total
        }
    };
    group.bench_function("vec_of_slices_par_sort_unstable", |b| {
        b.iter_custom(vec_sort(true))
    });
    group.bench_function("vec_of_slices_sort_unstable", |b| {
        b.iter_custom(vec_sort(false))
    });
    group.finish();
}

criterion_group!(benches, append, sort_on_freeze);
criterion_main!(benches);
