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
//! random inserts and lookups only), `skiplist_b2p` and `skiplist_thp_b2p`
//! (those two with key prefixes beside the links,
//! `SkipListOptions::with_key_prefixes(true)`), `skipmap`
//! (`crossbeam_skiplist::SkipMap<[u8; 16], [u8; 100]>`), `skipset`
//! (`SkipSet<[u8; 116]>`, the entry as one key, like ours),
//! `mutex_btreemap` (`std::sync::Mutex<BTreeMap<[u8; 16], [u8; 100]>>`),
//! and two concurrent B+trees: `scc_treeindex` (`scc::TreeIndex<[u8; 16],
//! [u8; 100]>`) and `concurrent_map` (`concurrent_map::ConcurrentMap<[u8;
//! 16], [u8; 100]>`, fanout 64, one clone per thread as it asks).
//! Throughput is in entries per second. Before timing, the memory per entry
//! of each contender is printed to stderr: the arena's own count for ours,
//! and the resident-memory delta (`/proc/self/statm`) for all.
//!
//! Quick run: `SKIPLIST_BENCH_N=20000 cargo bench -p benches --bench skiplist
//! -- --warm-up-time 0.2 --measurement-time 0.5 insert_random`.
#![allow(missing_docs)]

#[path = "skiplist/contenders.rs"]
mod contenders;

use contenders::{
    CMap, Contender, Data, ENTRY, KEY, Key, Locked, Map, Ours, Set, Tree, VALUE, Worker, build,
    entries, value_of, value_of_bytewise,
};
use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use inline_skiplist::{BytewiseComparator, SkipList, Splice};
use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

fn report_memory_one<C: Contender>(keys: &[Key]) {
    benches::trim_heap();
    let before = benches::resident_bytes();
    let c = build::<C>(keys);
    let rss = benches::resident_bytes().saturating_sub(before) as f64 / keys.len() as f64;
    match c.arena_bytes() {
        Some(bytes) => eprintln!(
            "memory per entry: {:<15} {rss:7.1} B resident, {:7.1} B by its arena",
            C::NAME,
            bytes as f64 / keys.len() as f64
        ),
        None => eprintln!("memory per entry: {:<15} {rss:7.1} B resident", C::NAME),
    }
    drop(c);
    benches::trim_heap();
}

fn report_memory(data: &Data) {
    let n = data.random.len();
    eprintln!("memory per entry ({n} random entries of {KEY} + {VALUE} bytes, one thread):");
    report_memory_one::<Ours<false>>(&data.random);
    report_memory_one::<Ours<true>>(&data.random);
    report_memory_one::<Ours<false, true>>(&data.random);
    report_memory_one::<Ours<false, true, true>>(&data.random);
    report_memory_one::<Map>(&data.random);
    report_memory_one::<Set>(&data.random);
    report_memory_one::<Locked>(&data.random);
    report_memory_one::<Tree>(&data.random);
    report_memory_one::<CMap>(&data.random);
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
                    total += benches::timed_parallel(threads, data.random.len(), |range| {
                        let w = target.worker();
                        for k in &data.random[range] {
                            w.insert(k);
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
                total += benches::timed_parallel(1, keys.len(), |range| {
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
                total += benches::timed_parallel(1, keys.len(), |range| {
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
    sequential_one::<Tree>(&mut group, keys, Tree::NAME);
    sequential_one::<CMap>(&mut group, keys, CMap::NAME);
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
                total += benches::timed_parallel(1, keys.len(), |range| {
                    let w = target.worker();
                    for k in &keys[range] {
                        w.insert(k);
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
                    total += benches::timed_parallel(threads, data.lookups.len(), |range| {
                        let w = target.worker();
                        let mut found = 0usize;
                        for k in &data.lookups[range] {
                            found += usize::from(w.get(k));
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
    insert_random::<Ours<false, true, true>>(c, &data, &threads);
    insert_random::<Ours<true, true, true>>(c, &data, &threads);
    insert_random::<Map>(c, &data, &threads);
    insert_random::<Set>(c, &data, &threads);
    insert_random::<Locked>(c, &data, &threads);
    insert_random::<Tree>(c, &data, &threads);
    insert_random::<CMap>(c, &data, &threads);

    insert_sequential(c, &data);

    lookup::<Ours<false>>(c, &data);
    lookup::<Ours<true>>(c, &data);
    lookup::<Ours<false, true>>(c, &data);
    lookup::<Ours<true, true>>(c, &data);
    lookup::<Ours<false, true, true>>(c, &data);
    lookup::<Ours<true, true, true>>(c, &data);
    lookup::<Map>(c, &data);
    lookup::<Set>(c, &data);
    lookup::<Locked>(c, &data);
    lookup::<Tree>(c, &data);
    lookup::<CMap>(c, &data);

    scan::<Ours<false>>(c, &data);
    scan::<Ours<true>>(c, &data);
    scan::<Map>(c, &data);
    scan::<Set>(c, &data);
    scan::<Locked>(c, &data);
    scan::<Tree>(c, &data);
    scan::<CMap>(c, &data);
}

criterion_group!(skiplist_benches, benches);
criterion_main!(skiplist_benches);
