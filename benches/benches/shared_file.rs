//! `shared-log-file` against the ways a user would fill one log file from
//! many threads instead.
//!
//! T writers (1, 2, 4, 8 threads) each write 120-byte records into one
//! file on disk, and a write returns once its record is in the operating
//! system (it survives a crash of the process; nothing is synced). Each
//! measured batch writes a fresh file in the temporary directory. Criterion
//! ids are `shared_file/<group>/<contender>/<T>`; throughput is in records
//! per second. Two groups:
//!
//! - `append`: writers do nothing but write records;
//! - `append_work`: after each record a writer does a fixed hash chain
//!   outside any lock (`benches::hash_chain`, 1,300 rounds: the memtable
//!   insert that follows a log append in an engine).
//!
//! Contenders:
//! - `mutex_file`: a `Mutex<File>`: lock, `write`, unlock.
//! - `write_group`: `write-group`'s group commit: the leader writes every
//!   member's record with one `write`.
//! - `positional`: `SharedFile::positional`: a `fetch_add` reserves the
//!   record's bytes, a `pwrite` writes them, no lock.
//! - `mapped`: `SharedFile::mapped`: the same reservation, a copy into the
//!   shared map, no lock and no system call.
//! - `striped`: `SharedFile::striped` with as many stripes as writers: the
//!   same reservation, a `pwrite` into the writer's own stripe file (its
//!   lock taken and let go, never contended), so no two writers queue on
//!   one file in the kernel.
//!
//! `BENCH_THREADS` replaces the writer counts. Quick run:
//! `cargo bench -p benches --bench shared_file -- --warm-up-time 0.2 --measurement-time 0.5`.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use shared_log_file::SharedFile;
use write_group::{Commit, GroupMembers, Lead, Options, WriteGroup};

const RECORD: [u8; 120] = [7; 120];

/// The work after each record: `ordered_publish`'s unit.
fn work() -> u64 {
    benches::hash_chain(0, 1300)
}

trait Contender: Sync {
    /// Writes one record; it is in the operating system when this returns.
    fn write_record(&self);
}

struct MutexFile(Mutex<File>);

impl Contender for MutexFile {
    fn write_record(&self) {
        self.0.lock().unwrap().write_all(&RECORD).unwrap();
    }
}

struct GroupFile {
    group: WriteGroup<(), GroupSink>,
    sink: GroupSink,
}

/// Only the leader writes; the mutex makes the file `Sync`.
struct GroupSink(Mutex<File>);

impl Commit<()> for GroupSink {
    type Token = ();
    type Error = ();

    fn lead(&self, members: &mut GroupMembers<'_, ()>) -> Result<Lead<()>, ()> {
        let batch: Vec<u8> = members.iter().flat_map(|_| RECORD).collect();
        self.0.lock().unwrap().write_all(&batch).unwrap();
        Ok(Lead::serial(()))
    }
}

impl Contender for GroupFile {
    fn write_record(&self) {
        self.group.write_in_place(&self.sink, &mut ()).unwrap();
    }
}

/// Either backing, with the offsets reserved by a `fetch_add`.
struct Shared {
    file: SharedFile,
    next: AtomicU64,
}

impl Contender for Shared {
    fn write_record(&self) {
        // Relaxed: the counter only hands out disjoint ranges.
        let at = self.next.fetch_add(RECORD.len() as u64, Ordering::Relaxed);
        // SAFETY: `at..at + 120` is this writer's alone (one reservation),
        // and nobody appends or syncs while the writers run.
        unsafe { self.file.write_at(at, &RECORD) }.unwrap();
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // The writers are done: their writes end here.
        self.file.set_size(*self.next.get_mut());
    }
}

/// The contenders, each over a fresh file at `path`, for `threads`
/// writers.
fn contender(name: &str, path: &Path, threads: usize) -> Box<dyn Contender> {
    match name {
        "mutex_file" => Box::new(MutexFile(Mutex::new(File::create(path).unwrap()))),
        "write_group" => Box::new(GroupFile {
            group: WriteGroup::new(Options::default()),
            sink: GroupSink(Mutex::new(File::create(path).unwrap())),
        }),
        "positional" => Box::new(Shared {
            file: SharedFile::create_positional(path).unwrap(),
            next: AtomicU64::new(0),
        }),
        "mapped" => Box::new(Shared {
            file: SharedFile::create_mapped(path).unwrap(),
            next: AtomicU64::new(0),
        }),
        "striped" => Box::new(Shared {
            file: SharedFile::create_striped(path, threads).unwrap(),
            next: AtomicU64::new(0),
        }),
        _ => unreachable!("{name}"),
    }
}

const CONTENDERS: [&str; 5] = [
    "mutex_file",
    "write_group",
    "positional",
    "mapped",
    "striped",
];

/// `iters` records from `threads` writers into a fresh file of
/// `contender`'s, each followed by the work when `with_work`.
fn run(name: &str, threads: usize, iters: u64, with_work: bool) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    let contender = contender(name, &dir.path().join("log"), threads);
    let contender = &*contender;
    let per_thread = iters.div_ceil(threads as u64);
    let start_line = Barrier::new(threads + 1);
    let started = std::thread::scope(|s| {
        for _ in 0..threads {
            let start_line = &start_line;
            s.spawn(move || {
                start_line.wait();
                for _ in 0..per_thread {
                    contender.write_record();
                    if with_work {
                        work();
                    }
                }
            });
        }
        start_line.wait();
        Instant::now()
    });
    started
        .elapsed()
        .mul_f64(iters as f64 / (per_thread * threads as u64) as f64)
}

fn shared_file(c: &mut Criterion) {
    for (group_name, with_work) in [("append", false), ("append_work", true)] {
        let mut group = c.benchmark_group(format!("shared_file/{group_name}"));
        group.throughput(Throughput::Elements(1));
        for threads in benches::thread_counts(&[1, 2, 4, 8]) {
            for name in CONTENDERS {
                group.bench_function(BenchmarkId::new(name, threads), |b| {
                    b.iter_custom(|iters| run(name, threads, iters, with_work))
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, shared_file);
criterion_main!(benches);
