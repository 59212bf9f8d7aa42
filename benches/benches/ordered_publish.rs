//! `ordered-publish` against the ways a user would order concurrent work
//! instead.
//!
//! T writers (1, 2, 4, 8 threads) each do small units of work that must
//! become visible in one global order: take the next sequence number, do the
//! work (about a microsecond of hashing, standing in for a memtable insert),
//! make it visible, and return only once it is (read-your-writes). Criterion ids
//! are `ordered_publish/<contender>/<T>`; throughput is in units per second.
//!
//! Contenders:
//! - `mutex`: a `std::sync::Mutex<u64>` counter; the work runs inside the
//!   lock, so it is visible at unlock.
//! - `write_group`: `write-group`'s group commit with pipelined groups, as
//!   the engine used it: the leader numbers the group, each member does its
//!   work, publishes go in group order.
//! - `ordered_publish`: `Sequencer::reserve(1)`, the work outside any lock,
//!   `finish`, `wait_published`.
//!
//! A second group, `ordered_log/<contender>/<T>`, fills a log: each writer
//! appends a 120-byte record, in sequence order, and returns once the
//! record is "written" (the sink pays about half a microsecond per write
//! call, standing in for the `write(2)` of a log append, plus the copy),
//! then does the unit of work above outside any lock (the memtable insert
//! that follows a log append):
//! - `mutex_vec`: a `Mutex<Vec<u8>>`: lock, append, write, unlock.
//! - `write_group`: `write-group`'s group commit: the leader appends every
//!   member's record and writes once for the group.
//! - `ordered_queue`: `Sequencer::reserve`, `OrderedQueue::post`, then
//!   `drain_until` (whoever finds the drain free writes every record
//!   posted so far with one call; the others wait for it) and a `Tracker`
//!   wait until the record is written, as the `lsm-demo` engine fills its
//!   log.
//!
//! A third group, `log_buffer/<contender>/<T>`, fills one in-memory buffer
//! (a mapped log's stand-in: no write call) with numbered 120-byte records
//! in number order; each writer waits until its record and every record
//! before it are in, then does the unit of work outside any lock:
//! - `mutex_vec`: a `Mutex<Vec<u8>>` and a counter: lock, number, append,
//!   unlock.
//! - `reserved_bytes`: `Sequencer::reserve_with_bytes` numbers the record
//!   and places it in the same compare-and-swap, the writer copies it there
//!   with no lock, `finish`, `wait_published`; a writer that finds the
//!   buffer full closes the sequencer and starts it over (`restart_bytes`),
//!   as the `lsm-demo` engine moves to a new log.
//!
//! `BENCH_THREADS` replaces the writer counts. Quick run:
//! `cargo bench -p benches --bench ordered_publish -- --warm-up-time 0.2 --measurement-time 0.5`.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ordered_publish::{OrderedQueue, Sequencer, Tracker};
use write_group::{Commit, GroupMembers, Lead, LeaderCell, Options, WriteGroup};

/// About a microsecond of work on the 2-core VM (a random memtable insert
/// costs 1-3 us there): a hash chain over the number.
fn work(seq: u64) -> u64 {
    benches::hash_chain(seq, 1300)
}

trait Contender: Sync {
    /// One unit: numbered, worked, visible when this returns.
    fn unit(&self);
}

struct MutexCounter(Mutex<u64>);

impl Contender for MutexCounter {
    fn unit(&self) {
        let mut next = self.0.lock().unwrap();
        work(*next);
        *next += 1;
    }
}

struct Ordered(Sequencer);

impl Contender for Ordered {
    fn unit(&self) {
        let range = self.0.reserve(1);
        work(range.start);
        self.0.finish(range.clone());
        self.0.wait_published(range.end);
    }
}

/// `write-group` as an engine uses it: the leader numbers the group from a
/// counter in a `LeaderCell`, members work in parallel (pipelined groups),
/// publishes go in group order.
struct Grouped {
    group: WriteGroup<u64, GroupCommit>,
    commit: GroupCommit,
}

struct GroupCommit {
    next: LeaderCell<u64>,
    visible: AtomicU64,
}

impl Commit<u64> for GroupCommit {
    type Token = u64;
    type Error = ();

    fn lead(&self, members: &mut GroupMembers<'_, u64>) -> Result<Lead<u64>, ()> {
        let first = *self.next.get(members);
        let mut seq = first;
        for item in members.iter_mut() {
            *item = seq;
            seq += 1;
        }
        *self.next.get(members) = seq;
        Ok(Lead::pipelined(seq))
    }

    fn apply(&self, item: &mut u64, _: &u64) {
        work(*item);
    }

    fn publish(&self, end: u64) {
        // Relaxed: the benchmark reads nothing through it.
        self.visible.store(end, Ordering::Relaxed);
    }
}

impl Grouped {
    fn new() -> Grouped {
        let group = WriteGroup::new(Options::default());
        let commit = GroupCommit {
            next: group.leader_cell(0),
            visible: AtomicU64::new(0),
        };
        Grouped { group, commit }
    }
}

impl Contender for Grouped {
    fn unit(&self) {
        let mut item = 0;
        self.group.write_in_place(&self.commit, &mut item).unwrap();
    }
}

fn run(contender: &dyn Contender, threads: usize, iters: u64) -> Duration {
    let per_thread = iters.div_ceil(threads as u64);
    let start_line = Barrier::new(threads + 1);
    let started = std::thread::scope(|s| {
        for _ in 0..threads {
            let start_line = &start_line;
            s.spawn(move || {
                start_line.wait();
                for _ in 0..per_thread {
                    contender.unit();
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

fn ordered_publish(c: &mut Criterion) {
    let mut group = c.benchmark_group("ordered_publish");
    group.throughput(Throughput::Elements(1));
    for threads in benches::thread_counts(&[1, 2, 4, 8]) {
        let contenders: [(&str, Box<dyn Contender>); 3] = [
            ("mutex", Box::new(MutexCounter(Mutex::new(0)))),
            ("write_group", Box::new(Grouped::new())),
            (
                "ordered_publish",
                Box::new(Ordered(Sequencer::new(0, 1 << 16))),
            ),
        ];
        for (name, contender) in contenders {
            group.bench_function(BenchmarkId::new(name, threads), |b| {
                b.iter_custom(|iters| run(&*contender, threads, iters))
            });
        }
    }
    group.finish();
}

const RECORD: [u8; 120] = [7; 120];

/// The log's sink: a buffer and the cost of one write call.
#[derive(Default)]
struct Sink {
    bytes: Vec<u8>,
}

impl Sink {
    fn write(&mut self, records: &[u8]) {
        // About half a microsecond, as a small `write(2)` on the 2-core VM.
        half_work();
        self.bytes.extend_from_slice(records);
        if self.bytes.len() > 1 << 20 {
            self.bytes.clear();
        }
    }
}

/// `work` is about a microsecond; the sink's call is half of one.
fn half_work() -> u64 {
    benches::hash_chain(0, 650)
}

struct MutexLog(Mutex<Sink>);

impl Contender for MutexLog {
    fn unit(&self) {
        self.0.lock().unwrap().write(&RECORD);
        work(0);
    }
}

struct QueueLog {
    seq: Sequencer,
    queue: OrderedQueue<Vec<u8>>,
    written: Tracker,
    sink: Mutex<Sink>,
}

impl Contender for QueueLog {
    fn unit(&self) {
        let range = self.seq.reserve(1);
        self.queue.post(range.clone(), RECORD.to_vec());
        self.queue.drain_until(range.end, |pass_range, pass| {
            let mut sink = self.sink.lock().unwrap();
            let mut batch = Vec::with_capacity(pass.len() * RECORD.len());
            for (_, record) in pass.drain(..) {
                batch.extend_from_slice(&record);
            }
            sink.write(&batch);
            drop(sink);
            self.written.finish(pass_range);
        });
        self.written.wait_published(range.end);
        work(range.start);
        self.seq.finish(range);
    }
}

struct GroupLog {
    group: WriteGroup<(), GroupSink>,
    sink: GroupSink,
}

struct GroupSink(Mutex<Sink>);

impl Commit<()> for GroupSink {
    type Token = ();
    type Error = ();

    fn lead(&self, members: &mut GroupMembers<'_, ()>) -> Result<Lead<()>, ()> {
        let batch: Vec<u8> = members.iter().flat_map(|_| RECORD).collect();
        self.0.lock().unwrap().write(&batch);
        Ok(Lead::serial(()))
    }
}

impl Contender for GroupLog {
    fn unit(&self) {
        self.group.write_in_place(&self.sink, &mut ()).unwrap();
        work(0);
    }
}

fn ordered_log(c: &mut Criterion) {
    let mut group = c.benchmark_group("ordered_log");
    group.throughput(Throughput::Elements(1));
    for threads in benches::thread_counts(&[1, 2, 4, 8]) {
        let contenders: [(&str, Box<dyn Contender>); 3] = [
            ("mutex_vec", Box::new(MutexLog(Mutex::default()))),
            (
                "write_group",
                Box::new(GroupLog {
                    group: WriteGroup::new(Options::default()),
                    sink: GroupSink(Mutex::default()),
                }),
            ),
            (
                "ordered_queue",
                Box::new(QueueLog {
                    seq: Sequencer::new(0, 1 << 16),
                    queue: OrderedQueue::new(0, 1 << 16),
                    written: Tracker::new(0, 1 << 16),
                    sink: Mutex::default(),
                }),
            ),
        ];
        for (name, contender) in contenders {
            group.bench_function(BenchmarkId::new(name, threads), |b| {
                b.iter_custom(|iters| run(&*contender, threads, iters))
            });
        }
    }
    group.finish();
}

/// Bytes of the `log_buffer` group's buffers before they start over.
const LOG_BUFFER: usize = 1 << 20;

/// The records and the next number.
struct MutexBuffer(Mutex<(Vec<u8>, u64)>);

impl Contender for MutexBuffer {
    fn unit(&self) {
        let number = {
            let mut log = self.0.lock().unwrap();
            let (buffer, next) = &mut *log;
            if buffer.len() + RECORD.len() > LOG_BUFFER {
                buffer.clear();
            }
            buffer.extend_from_slice(&RECORD);
            *next += 1;
            *next
        };
        work(number);
    }
}

struct ReservedBuffer {
    seq: Sequencer,
    bytes: Box<[UnsafeCell<u8>]>,
}

// SAFETY: writers write only the bytes their reservation handed them, each
// byte to one writer per round of the buffer, and a round ends only once
// every range of it is finished (`close`), so no two threads touch a byte
// at once.
unsafe impl Sync for ReservedBuffer {}

impl ReservedBuffer {
    fn new() -> ReservedBuffer {
        let seq = Sequencer::new(0, 1 << 16);
        seq.close().restart_bytes(0, LOG_BUFFER as u64);
        ReservedBuffer {
            seq,
            bytes: (0..LOG_BUFFER).map(|_| UnsafeCell::new(0)).collect(),
        }
    }
}

impl Contender for ReservedBuffer {
    fn unit(&self) {
        let (range, at) = loop {
            match self.seq.reserve_with_bytes(1, RECORD.len() as u64) {
                Some(reserved) => break reserved,
                // Full: start over once every record of this round is in
                // (a second writer that found it full starts over again,
                // harmlessly).
                None => self.seq.close().restart_bytes(0, LOG_BUFFER as u64),
            }
        };
        let to = UnsafeCell::raw_get(&self.bytes[at.start as usize]);
        // SAFETY: `at` lies inside the buffer (the byte limit is its
        // length) and is this writer's alone until the round ends (see
        // `Sync`); `RECORD` is not part of the buffer.
        unsafe { std::ptr::copy_nonoverlapping(RECORD.as_ptr(), to, RECORD.len()) };
        self.seq.finish(range.clone());
        self.seq.wait_published(range.end);
        work(range.start);
    }
}

fn log_buffer(c: &mut Criterion) {
    let mut group = c.benchmark_group("log_buffer");
    group.throughput(Throughput::Elements(1));
    for threads in benches::thread_counts(&[1, 2, 4, 8]) {
        let contenders: [(&str, Box<dyn Contender>); 2] = [
            (
                "mutex_vec",
                Box::new(MutexBuffer(Mutex::new((Vec::with_capacity(LOG_BUFFER), 0)))),
            ),
            ("reserved_bytes", Box::new(ReservedBuffer::new())),
        ];
        for (name, contender) in contenders {
            group.bench_function(BenchmarkId::new(name, threads), |b| {
                b.iter_custom(|iters| run(&*contender, threads, iters))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, ordered_publish, ordered_log, log_buffer);
criterion_main!(benches);
