//! Benchmark `skiplist`: the arena skiplist against the structures a user
//! would pick instead, in one run.
//!
//! Workload (issue 4): N entries (`SKIPLIST_BENCH_N`, default 1,000,000),
//! each a random 16-byte key with a 100-byte value. `BENCH_THREADS` (say
//! `1,2,4,8,16`) replaces the thread counts of the random inserts and the
//! lookups.
//!
//! | group | what is timed |
//! |---|---|
//! | `skiplist_insert_random/<contender>/<T>t` | N random inserts into a fresh structure from T threads (1, 2, 4) |
//! | `skiplist_insert_sequential/<contender>` | N ascending inserts from one thread; ours with a `Splice` hint, as the single writer, and without a hint |
//! | `skiplist_lookup/<contender>/<T>t` | N point lookups of present keys in random order, T threads (1, 2) |
//! | `skiplist_scan/<contender>` | one full in-order scan of N entries |
//!
//! Contenders: `skiplist` (this workspace, `SkipList::new`: arena blocks
//! from the global allocator on 4 KiB pages; key and value encoded in one
//! entry, written in place with `insert_with`), `skiplist_thp` (the same list on
//! an arena of 2 MiB blocks backed by transparent huge pages), `skiplist_b2`
//! (`SkipList` with `SkipListOptions::new().with_branching(2).with_max_height(20)`,
//! 4 KiB pages; random inserts and lookups only), `skiplist_thp_b2` (both:
//! branching 2 on the huge-page arena, as `lsm-demo` builds its memtables;
//! random inserts and lookups only), `skipmap`
//! (`crossbeam_skiplist::SkipMap<[u8; 16], [u8; 100]>`), `skipset`
//! (`SkipSet<[u8; 116]>`, the entry as one key, like ours) and
//! `mutex_btreemap` (`std::sync::Mutex<BTreeMap<[u8; 16], [u8; 100]>>`).
//! Throughput is in entries per second. Before timing, the memory per entry
//! of each contender is printed to stderr: the arena's own count for ours,
//! and the resident-memory delta (`/proc/self/statm`) for all.
//!
//! Quick run: `SKIPLIST_BENCH_N=20000 cargo bench -p benches --bench skiplist
//! -- --warm-up-time 0.2 --measurement-time 0.5 insert_random`.
#![allow(missing_docs)]

use arena::{ArenaOptions, HugePages};
use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use crossbeam_skiplist::{SkipMap, SkipSet};
use inline_skiplist::{BytewiseComparator, SkipList, SkipListOptions, Splice};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::ops::{Bound, Range};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

const KEY: usize = 16;
const VALUE: usize = 100;
const ENTRY: usize = KEY + VALUE;

type Key = [u8; KEY];
type Value = [u8; VALUE];

fn entries() -> usize {
    std::env::var("SKIPLIST_BENCH_N")
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(1_000_000)
}

/// The value stored with `key`: derived from it, so every contender stores
/// the same bytes and lookups could verify them. Byte `i` is
/// `key[i % 16] ^ i`, computed 16 bytes at a time: a loop over single bytes
/// took about a fifth of our insert's time on a cache-resident list (perf,
/// 2026-12-04), work that every contender repeats and that only blurred the
/// ratios.
#[inline]
fn value_of(key: &Key) -> Value {
    /// Byte `t` of row `j` is `16 j + t`, the offset XORed into the value.
    const OFFSETS: [[u8; KEY]; VALUE.div_ceil(KEY)] = {
        let mut rows = [[0u8; KEY]; VALUE.div_ceil(KEY)];
        let mut i = 0;
        while i < KEY * rows.len() {
            rows[i / KEY][i % KEY] = i as u8;
            i += 1;
        }
        rows
    };
    let key = u128::from_ne_bytes(*key);
    let mut v = [0u8; VALUE];
    for (chunk, offsets) in v.chunks_mut(KEY).zip(OFFSETS) {
        let bytes = (key ^ u128::from_ne_bytes(offsets)).to_ne_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
    v
}

/// `value_of` as first written, one byte at a time: the reference the
/// vectorised one is checked against when the bench starts.
fn value_of_bytewise(key: &Key) -> Value {
    let mut v = [0u8; VALUE];
    for (i, b) in v.iter_mut().enumerate() {
        *b = key[i % KEY] ^ i as u8;
    }
    v
}

struct Data {
    random: Vec<Key>,
    sequential: Vec<Key>,
    /// `random` in another random order, for lookups.
    lookups: Vec<Key>,
}

impl Data {
    fn new(n: usize) -> Self {
        let mut rng = SmallRng::seed_from_u64(0x5eed);
        let random: Vec<Key> = (0..n).map(|_| rng.random()).collect();
        let sequential = (0..n as u128).map(u128::to_be_bytes).collect();
        let mut lookups = random.clone();
        lookups.shuffle(&mut rng);
        Self {
            random,
            sequential,
            lookups,
        }
    }
}

/// What every contender offers the benchmark.
trait Contender: Sync {
    const NAME: &'static str;
    fn new() -> Self;
    fn insert(&self, key: &Key);
    fn get(&self, key: &Key) -> bool;
    /// Visits every entry in order; returns a checksum.
    fn scan(&self) -> usize;
}

/// Ours with `SkipList::new` (arena blocks from the global allocator, 4 KiB
/// pages) when `THP` is false; with an arena of 2 MiB blocks backed by
/// transparent huge pages (`HugePages::Transparent`, as the engine's
/// memtables use) when it is true.
/// With `B2`, towers of branching 2 and 20 levels instead of RocksDB's
/// branching 4 and 12 levels.
struct Ours<const THP: bool, const B2: bool = false>(SkipList);

impl<const THP: bool, const B2: bool> Contender for Ours<THP, B2> {
    const NAME: &'static str = match (THP, B2) {
        (false, false) => "skiplist",
        (true, false) => "skiplist_thp",
        (false, true) => "skiplist_b2",
        (true, true) => "skiplist_thp_b2",
    };

    fn new() -> Self {
        let arena = if THP {
            ArenaOptions::new()
                .with_block_size(2 << 20)
                .with_huge_pages(HugePages::Transparent)
        } else {
            ArenaOptions::new()
        }
        .build_concurrent()
        .expect("valid arena options");
        let options = if B2 {
            SkipListOptions::new().with_branching(2).with_max_height(20)
        } else {
            SkipListOptions::new()
        };
        Self(SkipList::with_options(BytewiseComparator, arena, options))
    }

    #[inline]
    fn insert(&self, key: &Key) {
        // Zero-copy, as the engine does: encode the entry in its node.
        self.0.insert_with(ENTRY, None, |entry| {
            entry[..KEY].copy_from_slice(key);
            entry[KEY..].copy_from_slice(&value_of(key));
        });
    }

    #[inline]
    fn get(&self, key: &Key) -> bool {
        let mut cursor = self.0.cursor();
        cursor.seek(key);
        cursor.valid() && cursor.key().starts_with(key)
    }

    fn scan(&self) -> usize {
        self.0.cursor().map(|e| usize::from(e[ENTRY - 1])).sum()
    }
}

struct Map(SkipMap<Key, Value>);

impl Contender for Map {
    const NAME: &'static str = "skipmap";

    fn new() -> Self {
        Self(SkipMap::new())
    }

    #[inline]
    fn insert(&self, key: &Key) {
        self.0.insert(*key, value_of(key));
    }

    #[inline]
    fn get(&self, key: &Key) -> bool {
        self.0.get(key).is_some()
    }

    fn scan(&self) -> usize {
        self.0
            .iter()
            .map(|e| usize::from(e.value()[VALUE - 1]))
            .sum()
    }
}

struct Set(SkipSet<[u8; ENTRY]>);

#[inline]
fn entry_of(key: &Key, value: &Value) -> [u8; ENTRY] {
    let mut e = [0u8; ENTRY];
    e[..KEY].copy_from_slice(key);
    e[KEY..].copy_from_slice(value);
    e
}

impl Contender for Set {
    const NAME: &'static str = "skipset";

    fn new() -> Self {
        Self(SkipSet::new())
    }

    #[inline]
    fn insert(&self, key: &Key) {
        self.0.insert(entry_of(key, &value_of(key)));
    }

    #[inline]
    fn get(&self, key: &Key) -> bool {
        let probe = entry_of(key, &[0; VALUE]);
        self.0
            .lower_bound(Bound::Included(&probe))
            .is_some_and(|e| e.value().starts_with(key))
    }

    fn scan(&self) -> usize {
        self.0
            .iter()
            .map(|e| usize::from(e.value()[ENTRY - 1]))
            .sum()
    }
}

struct Locked(Mutex<BTreeMap<Key, Value>>);

impl Contender for Locked {
    const NAME: &'static str = "mutex_btreemap";

    fn new() -> Self {
        Self(Mutex::new(BTreeMap::new()))
    }

    #[inline]
    fn insert(&self, key: &Key) {
        let value = value_of(key);
        self.0.lock().unwrap().insert(*key, value);
    }

    #[inline]
    fn get(&self, key: &Key) -> bool {
        self.0.lock().unwrap().contains_key(key)
    }

    fn scan(&self) -> usize {
        self.0
            .lock()
            .unwrap()
            .values()
            .map(|v| usize::from(v[VALUE - 1]))
            .sum()
    }
}

/// Runs `work(thread, chunk)` on `threads` threads over `0..n` split in
/// chunks, and times from a common start to the last thread's end (thread
/// creation excluded).
fn timed_parallel(threads: usize, n: usize, work: impl Fn(usize, Range<usize>) + Sync) -> Duration {
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (barrier, work) = (&barrier, &work);
                s.spawn(move || {
                    barrier.wait();
                    work(t, t * n / threads..(t + 1) * n / threads);
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        for h in handles {
            h.join().unwrap();
        }
        start.elapsed()
    })
}

fn build<C: Contender>(keys: &[Key]) -> C {
    let c = C::new();
    for k in keys {
        c.insert(k);
    }
    c
}

/// Bytes resident in this process.
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * usize::try_from(page).unwrap_or(4096)
}

/// Gives freed heap memory back to the kernel, so that the next resident
/// delta starts from a clean slate.
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn report_memory_one<C: Contender>(keys: &[Key], arena: impl Fn(&C) -> Option<usize>) {
    trim_heap();
    let before = resident_bytes();
    let c = build::<C>(keys);
    let rss = resident_bytes().saturating_sub(before) as f64 / keys.len() as f64;
    match arena(&c) {
        Some(bytes) => eprintln!(
            "memory per entry: {:<15} {rss:7.1} B resident, {:7.1} B by its arena",
            C::NAME,
            bytes as f64 / keys.len() as f64
        ),
        None => eprintln!("memory per entry: {:<15} {rss:7.1} B resident", C::NAME),
    }
    drop(c);
    trim_heap();
}

fn report_memory(data: &Data) {
    let n = data.random.len();
    eprintln!("memory per entry ({n} random entries of {KEY} + {VALUE} bytes, one thread):");
    report_memory_one::<Ours<false>>(&data.random, |c| Some(c.0.memory_usage()));
    report_memory_one::<Ours<true>>(&data.random, |c| Some(c.0.memory_usage()));
    report_memory_one::<Ours<false, true>>(&data.random, |c| Some(c.0.memory_usage()));
    report_memory_one::<Map>(&data.random, |_| None);
    report_memory_one::<Set>(&data.random, |_| None);
    report_memory_one::<Locked>(&data.random, |_| None);
}

fn insert_random<C: Contender>(c: &mut Criterion, data: &Data, group_threads: &[usize]) {
    let mut group = c.benchmark_group("skiplist_insert_random");
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    group.throughput(Throughput::Elements(data.random.len() as u64));
    for &threads in group_threads {
        group.bench_function(BenchmarkId::new(C::NAME, format!("{threads}t")), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let target = C::new();
                    total += timed_parallel(threads, data.random.len(), |_, range| {
                        for k in &data.random[range] {
                            target.insert(k);
                        }
                    });
                    drop(target);
                }
                total
            });
        });
    }
    group.finish();
}

fn insert_sequential(c: &mut Criterion, data: &Data) {
    let keys = &data.sequential;
    let mut group = c.benchmark_group("skiplist_insert_sequential");
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    group.throughput(Throughput::Elements(keys.len() as u64));

    group.bench_function("skiplist_hint", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let list = SkipList::new(BytewiseComparator);
                total += timed_parallel(1, keys.len(), |_, range| {
                    let mut hint = Splice::new();
                    for k in &keys[range] {
                        list.insert_with(ENTRY, Some(&mut hint), |e| {
                            e[..KEY].copy_from_slice(k);
                            e[KEY..].copy_from_slice(&value_of(k));
                        });
                    }
                });
            }
            total
        });
    });
    group.bench_function("skiplist_single_writer", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut list = SkipList::new(BytewiseComparator);
                let writer = Mutex::new(list.single_writer());
                let list = list;
                total += timed_parallel(1, keys.len(), |_, range| {
                    // One thread runs this closure; the token moves to it.
                    let mut writer = writer.lock().unwrap().take().unwrap();
                    for k in &keys[range] {
                        writer.insert_with(&list, ENTRY, |e| {
                            e[..KEY].copy_from_slice(k);
                            e[KEY..].copy_from_slice(&value_of(k));
                        });
                    }
                });
            }
            total
        });
    });
    sequential_one::<Ours<false>>(&mut group, keys, "skiplist_no_hint");
    sequential_one::<Map>(&mut group, keys, Map::NAME);
    sequential_one::<Set>(&mut group, keys, Set::NAME);
    sequential_one::<Locked>(&mut group, keys, Locked::NAME);
    group.finish();
}

fn sequential_one<C: Contender>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    keys: &[Key],
    name: &str,
) {
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let target = C::new();
                total += timed_parallel(1, keys.len(), |_, range| {
                    for k in &keys[range] {
                        target.insert(k);
                    }
                });
            }
            total
        });
    });
}

fn lookup<C: Contender>(c: &mut Criterion, data: &Data) {
    let target = build::<C>(&data.random);
    let mut group = c.benchmark_group("skiplist_lookup");
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    group.throughput(Throughput::Elements(data.lookups.len() as u64));
    for threads in benches::thread_counts(&[1, 2]) {
        group.bench_function(BenchmarkId::new(C::NAME, format!("{threads}t")), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += timed_parallel(threads, data.lookups.len(), |_, range| {
                        let mut found = 0usize;
                        for k in &data.lookups[range] {
                            found += usize::from(target.get(k));
                        }
                        assert_eq!(black_box(found), found);
                    });
                }
                total
            });
        });
    }
    group.finish();
}

fn scan<C: Contender>(c: &mut Criterion, data: &Data) {
    let target = build::<C>(&data.random);
    let mut group = c.benchmark_group("skiplist_scan");
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    group.throughput(Throughput::Elements(data.random.len() as u64));
    group.bench_function(C::NAME, |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(target.scan());
            }
            start.elapsed()
        });
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    let data = Data::new(entries());
    for key in data.random.iter().take(1000) {
        assert_eq!(
            value_of(key),
            value_of_bytewise(key),
            "value_of changed the values"
        );
    }
    report_memory(&data);

    let threads = benches::thread_counts(&[1, 2, 4]);
    insert_random::<Ours<false>>(c, &data, &threads);
    insert_random::<Ours<true>>(c, &data, &threads);
    insert_random::<Ours<false, true>>(c, &data, &threads);
    insert_random::<Ours<true, true>>(c, &data, &threads);
    insert_random::<Map>(c, &data, &threads);
    insert_random::<Set>(c, &data, &threads);
    insert_random::<Locked>(c, &data, &threads);

    insert_sequential(c, &data);

    lookup::<Ours<false>>(c, &data);
    lookup::<Ours<true>>(c, &data);
    lookup::<Ours<false, true>>(c, &data);
    lookup::<Ours<true, true>>(c, &data);
    lookup::<Map>(c, &data);
    lookup::<Set>(c, &data);
    lookup::<Locked>(c, &data);

    scan::<Ours<false>>(c, &data);
    scan::<Ours<true>>(c, &data);
    scan::<Map>(c, &data);
    scan::<Set>(c, &data);
    scan::<Locked>(c, &data);
}

criterion_group!(skiplist_benches, benches);
criterion_main!(skiplist_benches);
