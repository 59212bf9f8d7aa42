//! The `lsm-demo` engine against fjall, the pure-Rust LSM engine a user
//! would most likely pick instead, through each one's library API, in the
//! same process and run.
//!
//! Both engines run with their defaults, the same keys (16 random bytes)
//! and values (100 bytes), and the same durability:
//! - `fill/<engine>/<T>`: T threads put random keys into a fresh database,
//!   log on and unsynced (each engine's default put: the record reaches the
//!   operating system before the put returns). Each sample opens its own
//!   database in a temporary directory; opening and closing are not timed.
//!   `lsm-demo-mmap` is `lsm-demo` with its log written through a memory
//!   map (`allow_mmap_writes`, off by default), which keeps that guarantee.
//! - `read/<engine>`: one thread gets random keys of 100 000 put before
//!   (all present, most still in the memtable, as right after a fill).
//! - `fill_sync/<engine>/<T>`: T threads (8 by default) put with each write
//!   durable before it returns: `lsm-demo`'s `sync` write option (its
//!   writers share fdatasyncs through the write group); fjall's insert then
//!   `Database::persist(PersistMode::SyncData)`, fjall's way to make a
//!   write durable (it has no group commit).
//!
//! Throughput is in puts or gets per second. `BENCH_THREADS` replaces the
//! thread counts of `fill` (default 1, 2, 4) and `fill_sync` (default 8).
//! Quick run: `cargo bench -p benches --bench engine -- --quick`.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use std::hint::black_box;
use std::path::Path;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const KEY_LEN: usize = 16;
const VALUE_LEN: usize = 100;
const READ_KEYS: u64 = 100_000;

/// An engine as the benchmark drives it.
trait Engine: Sync + Sized {
    const NAME: &'static str;
    fn open(dir: &Path) -> Self;
    fn put(&self, key: &[u8], value: &[u8]);
    fn put_durable(&self, key: &[u8], value: &[u8]);
    fn get(&self, key: &[u8]) -> Option<Vec<u8>>;
}

/// `MMAP`: the log written through a memory map
/// (`Options::set_allow_mmap_writes`), the same durability.
struct LsmDemo<const MMAP: bool = false>(lsm_demo::DB);

impl<const MMAP: bool> Engine for LsmDemo<MMAP> {
    const NAME: &'static str = if MMAP { "lsm-demo-mmap" } else { "lsm-demo" };

    fn open(dir: &Path) -> Self {
        let mut opts = lsm_demo::Options::default();
        opts.create_if_missing(true).set_allow_mmap_writes(MMAP);
        LsmDemo(lsm_demo::DB::open(&opts, dir).unwrap())
    }

    fn put(&self, key: &[u8], value: &[u8]) {
        self.0.put(key, value).unwrap();
    }

    fn put_durable(&self, key: &[u8], value: &[u8]) {
        let mut synced = lsm_demo::WriteOptions::default();
        synced.set_sync(true);
        self.0.put_opt(key, value, &synced).unwrap();
    }

    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.0.get(key).unwrap()
    }
}

struct Fjall {
    db: fjall::Database,
    keyspace: fjall::Keyspace,
}

impl Engine for Fjall {
    const NAME: &'static str = "fjall";

    fn open(dir: &Path) -> Self {
        let db = fjall::Database::builder(dir).open().unwrap();
        let keyspace = db
            .keyspace("default", fjall::KeyspaceCreateOptions::default)
            .unwrap();
        Fjall { db, keyspace }
    }

    fn put(&self, key: &[u8], value: &[u8]) {
        self.keyspace.insert(key, value).unwrap();
    }

    fn put_durable(&self, key: &[u8], value: &[u8]) {
        self.keyspace.insert(key, value).unwrap();
        self.db.persist(fjall::PersistMode::SyncData).unwrap();
    }

    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.keyspace.get(key).unwrap().map(|v| v.to_vec())
    }
}

/// The `i`th key of stream `stream`: 16 bytes that look random, the same in
/// every run and for every engine.
fn key(stream: u64, i: u64) -> [u8; KEY_LEN] {
    let mut rng = SmallRng::seed_from_u64(stream << 40 ^ i);
    rng.random()
}

/// Puts `iters` keys from `threads` threads into a fresh database; only
/// the puts are timed.
fn fill<E: Engine>(threads: usize, iters: u64, durable: bool) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    let engine = E::open(dir.path());
    let per_thread = iters.div_ceil(threads as u64);
    let value = [b'v'; VALUE_LEN];
    let start_line = Barrier::new(threads + 1);
    let started = std::thread::scope(|s| {
        for t in 0..threads {
            let (engine, start_line, value) = (&engine, &start_line, &value);
            s.spawn(move || {
                start_line.wait();
                for i in 0..per_thread {
                    let k = key(t as u64 + 1, i);
                    if durable {
                        engine.put_durable(&k, value);
                    } else {
                        engine.put(&k, value);
                    }
                }
            });
        }
        start_line.wait();
        Instant::now()
    });
    // The scope joined every writer.
    let took = started.elapsed();
    drop(engine);
    took
}

fn bench_fill<E: Engine>(c: &mut Criterion, group: &str, threads: &[usize], durable: bool) {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(1));
    if durable {
        g.sample_size(10).measurement_time(Duration::from_secs(4));
    }
    for &t in threads {
        g.bench_function(BenchmarkId::new(E::NAME, t), |b| {
            b.iter_custom(|iters| fill::<E>(t, iters, durable));
        });
    }
    g.finish();
}

fn bench_read<E: Engine>(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let engine = E::open(dir.path());
    let value = [b'v'; VALUE_LEN];
    for i in 0..READ_KEYS {
        engine.put(&key(0, i), &value);
    }
    let mut g = c.benchmark_group("read");
    g.throughput(Throughput::Elements(1));
    let mut i = 0u64;
    g.bench_function(E::NAME, |b| {
        b.iter(|| {
            // Every key was put: a miss would mean a broken benchmark.
            i = (i + 7919) % READ_KEYS;
            assert!(black_box(engine.get(&key(0, i))).is_some());
        });
    });
    g.finish();
}

fn engines(c: &mut Criterion) {
    let fill_threads = benches::thread_counts(&[1, 2, 4]);
    let sync_threads = benches::thread_counts(&[8]);
    bench_fill::<LsmDemo>(c, "fill", &fill_threads, false);
    bench_fill::<LsmDemo<true>>(c, "fill", &fill_threads, false);
    bench_fill::<Fjall>(c, "fill", &fill_threads, false);
    bench_read::<LsmDemo>(c);
    bench_read::<Fjall>(c);
    bench_fill::<LsmDemo>(c, "fill_sync", &sync_threads, true);
    bench_fill::<Fjall>(c, "fill_sync", &sync_threads, true);
}

criterion_group!(benches, engines);
criterion_main!(benches);
