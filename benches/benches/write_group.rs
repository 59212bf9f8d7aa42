//! `write-group` against the ways a user would serialise writers instead.
//!
//! T writers (1, 2, 4, 8, 16, 32 threads) each submit small writes: a
//! 120-byte record appended to a shared in-memory log (a `Vec<u8>`, cleared
//! when it passes 1 MiB). Criterion ids are `write_group/<variant>/<contender>/<T>`:
//!
//! Variants:
//! - `mem`: the append only.
//! - `fsync`: the append is also written to a temporary file and synced with
//!   `fdatasync` (`File::sync_data`) once per critical section: once per
//!   write for the mutexes, once per group for the group commits.
//! - `parallel`: after the append, each write has an apply step (about a
//!   microsecond of hashing, standing in for a memtable insert). The mutexes
//!   apply inside the lock (a per-write lock keeps writes ordered that way),
//!   the naive group commit's leader applies the whole batch, and `ours`
//!   lets each member apply its own item in parallel, overlapping the next
//!   groups (`Lead::pipelined`: a writer alone in its group hands the lead
//!   on before it applies).
//! - `fsync_parallel`: both, as in an engine's synced writes: the append is
//!   synced once per critical section, then each write is applied (in
//!   parallel by `ours`' members, after the group's sync).
//!
//! Contenders:
//! - `std_mutex`: a `std::sync::Mutex` around each write.
//! - `parking_lot`: a `parking_lot::Mutex` around each write.
//! - `condvar_group`: a naive leader/follower group commit on one `Mutex` and
//!   one `Condvar` (written below): followers queue their record under the
//!   lock and wait for `notify_all`; a leader takes the whole queue, appends
//!   it outside the lock, then wakes everyone.
//! - `ours_tree_off`: `WriteGroup` with the tree wake-up off. The leader
//!   keeps the sink in a `write_group::LeaderCell` rather than a `Mutex`:
//!   only one leader runs at a time, so the cell hands it `&mut Sink` with
//!   no second lock. That is how a user should write it; the mutex
//!   contenders keep their mutex, which is their whole synchronisation.
//! - `ours_tree_on`: `WriteGroup` with the default options (tree from 20
//!   members).
//!
//! With a sync, both `ours` contenders let a leader wait for the writers
//! in flight before it syncs (`Commit::gather_window`, at most half the
//! average sync), the feature that sets this crate apart from the naive
//! group commit.
//!
//! A second group, `write_group_fanout/<fan-out>/<T>` (T = 16, 32), runs the
//! `fsync_parallel` variant (synced groups are the ones that grow large)
//! with the tree always on (threshold 2) and the stride `sqrt`, or fixed at
//! 2, 4, 8, next to `off`: the tree off, the leader waking every member.
//!
//! One criterion iteration is one write; throughput is in writes/s. After
//! each benchmark a line `write_group-bench <id>: ...` on stderr gives the
//! mean group size (group commits) and the process CPU time per write
//! (`getrusage(RUSAGE_SELF)`, user + system, over the timed sections): CPU
//! time above the wall time per write means waiters burn CPU. The same
//! line gives the process's voluntary context switches per write (a thread
//! blocked on a futex or yielded to another) and involuntary ones (a thread
//! was preempted), and for `ours` how its waits ended (`write_group::Stats`:
//! barges, waits that ended spinning, yielding, or asleep on a futex).
//!
//! `WRITE_GROUP_BENCH_SPIN` and `WRITE_GROUP_BENCH_YIELD_USEC` override
//! `write-group`'s spin count and yield budget (default: RocksDB's 200 and
//! 100 us), to see how waiting affects group sizes and CPU time.
//!
//! `BENCH_THREADS` (say `1,4,16,64`) replaces the writer counts of both
//! groups.
//!
//! Quick run: `cargo bench -p benches --bench write_group -- --warm-up-time 0.2
//! --measurement-time 0.5 'write_group/mem/.*/8'`.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use std::collections::VecDeque;
use std::fs::File;
use std::hint::black_box;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Barrier, Condvar, Mutex};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use crossbeam_utils::CachePadded;
use write_group::{Commit, FanOut, GroupMembers, Lead, LeaderCell, Options, WriteGroup};

const RECORD: usize = 120;
type Record = [u8; RECORD];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    Mem,
    Fsync,
    Parallel,
    FsyncParallel,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Mem => "mem",
            Variant::Fsync => "fsync",
            Variant::Parallel => "parallel",
            Variant::FsyncParallel => "fsync_parallel",
        }
    }

    /// Whether a critical section ends with `fdatasync`.
    fn syncs(self) -> bool {
        matches!(self, Variant::Fsync | Variant::FsyncParallel)
    }

    /// Whether each write has an apply step after the append.
    fn applies(self) -> bool {
        matches!(self, Variant::Parallel | Variant::FsyncParallel)
    }
}

/// The shared log every contender appends to.
struct Sink {
    buffer: Vec<u8>,
    file: Option<File>,
}

impl Sink {
    fn new(variant: Variant) -> Self {
        let file = variant
            .syncs()
            .then(|| tempfile::tempfile().expect("a temporary file"));
        Self {
            buffer: Vec::with_capacity(2 << 20),
            file,
        }
    }

    /// Appends records; with a file, writes them and syncs once.
    fn append<'a>(&mut self, records: impl IntoIterator<Item = &'a Record>) {
        if self.buffer.len() > 1 << 20 {
            self.buffer.clear();
        }
        let start = self.buffer.len();
        for record in records {
            self.buffer.extend_from_slice(record);
        }
        if let Some(file) = &mut self.file {
            file.write_all(&self.buffer[start..]).expect("write");
            file.sync_data().expect("fdatasync");
        }
    }
}

/// The stand-in for a memtable insert: about a microsecond of hashing.
#[inline(never)]
fn apply_work(record: &Record) {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    for _ in 0..8 {
        for &byte in record {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    black_box(hash);
}

/// `write-group`'s wait counters ([`write_group::Stats`]).
struct Waits {
    barges: u64,
    spins: u64,
    yields: u64,
    sleeps: u64,
}

/// What each contender offers the driver: submit one record.
trait Contender: Sync {
    fn write(&self, record: Record);
    /// Groups and members so far, for group commits.
    fn groups(&self) -> Option<(u64, u64)> {
        None
    }
    /// How writes waited so far, for `write-group`.
    fn waits(&self) -> Option<Waits> {
        None
    }
}

struct StdMutex {
    sink: Mutex<Sink>,
    variant: Variant,
}

impl Contender for StdMutex {
    fn write(&self, record: Record) {
        let mut sink = self.sink.lock().unwrap();
        sink.append([&record]);
        if self.variant.applies() {
            apply_work(&record);
        }
    }
}

struct ParkingLot {
    sink: parking_lot::Mutex<Sink>,
    variant: Variant,
}

impl Contender for ParkingLot {
    fn write(&self, record: Record) {
        let mut sink = self.sink.lock();
        sink.append([&record]);
        if self.variant.applies() {
            apply_work(&record);
        }
    }
}

/// The textbook group commit on one mutex and one condition variable.
struct CondvarGroup {
    state: Mutex<CondvarState>,
    done: Condvar,
    sink: Mutex<Sink>,
    variant: Variant,
}

#[derive(Default)]
struct CondvarState {
    pending: VecDeque<Record>,
    next_ticket: u64,
    /// Every ticket below this is done.
    done_below: u64,
    leader_active: bool,
    groups: u64,
    members: u64,
}

impl CondvarGroup {
    fn new(variant: Variant) -> Self {
        Self {
            state: Mutex::new(CondvarState::default()),
            done: Condvar::new(),
            sink: Mutex::new(Sink::new(variant)),
            variant,
        }
    }
}

impl Contender for CondvarGroup {
    fn write(&self, record: Record) {
        let mut state = self.state.lock().unwrap();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        state.pending.push_back(record);
        loop {
            if state.done_below > ticket {
                return;
            }
            if !state.leader_active {
                state.leader_active = true;
                let batch: Vec<Record> = state.pending.drain(..).collect();
                let end = state.next_ticket;
                drop(state);
                self.sink.lock().unwrap().append(&batch);
                if self.variant.applies() {
                    batch.iter().for_each(apply_work);
                }
                state = self.state.lock().unwrap();
                state.done_below = end;
                state.leader_active = false;
                state.groups += 1;
                state.members += batch.len() as u64;
                self.done.notify_all();
                continue;
            }
            state = self.done.wait(state).unwrap();
        }
    }

    fn groups(&self) -> Option<(u64, u64)> {
        let state = self.state.lock().unwrap();
        Some((state.groups, state.members))
    }
}

/// `write-group`'s side: the leader appends the group's records at once.
/// The sink is in a `LeaderCell`, not a `Mutex`: only the group's leader of
/// the moment touches it, which the cell proves without a second lock.
///
/// With `fsync`, a leader may wait for the writers in flight before it syncs
/// (`Commit::gather_window`), for at most half the average sync so far, as
/// the `lsm-demo` engine does.
struct OursCommit {
    sink: LeaderCell<Sink>,
    variant: Variant,
    /// Moving average of the lead step in nanoseconds (`fsync` only). On
    /// a line of its own: every writer reads it, and the sink's length next
    /// to it changes with every group.
    lead_nanos: CachePadded<AtomicU64>,
}

impl Commit<Record> for OursCommit {
    type Token = ();
    type Error = ();

    #[inline]
    fn size(&self, _: &Record) -> usize {
        RECORD
    }

    #[inline]
    fn gather_window(&self, _: &Record) -> Duration {
        if !self.variant.syncs() {
            // Only a sync is worth waiting for.
            return Duration::ZERO;
        }
        // Relaxed: an estimate.
        Duration::from_nanos(self.lead_nanos.load(Relaxed) / 2)
    }

    #[inline]
    fn lead(&self, group: &mut GroupMembers<'_, Record>) -> Result<Lead<()>, ()> {
        let timed = self.variant.syncs();
        let start = timed.then(Instant::now);
        let (sink, records) = self.sink.get_with_members(group);
        sink.append(records.iter());
        if let Some(start) = start {
            let took = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
            // Relaxed: only leaders write it, one at a time.
            let old = self.lead_nanos.load(Relaxed);
            let average = if old == 0 {
                took
            } else {
                old - old / 8 + took / 8
            };
            self.lead_nanos.store(average, Relaxed);
        }
        // Pipelined: members apply their own items, and a lone writer hands
        // the lead on before it applies, so two lone writers apply at once
        // (`Lead::parallel` would have them take turns, as the mutexes do).
        Ok(if self.variant.applies() {
            Lead::pipelined(())
        } else {
            Lead::serial(())
        })
    }

    #[inline]
    fn apply(&self, record: &mut Record, (): &()) {
        if self.variant.applies() {
            apply_work(record);
        }
    }
}

struct Ours {
    group: WriteGroup<Record, OursCommit>,
    commit: OursCommit,
}

impl Ours {
    fn new(variant: Variant, options: Options) -> Self {
        let group = WriteGroup::new(options);
        let commit = OursCommit {
            sink: group.leader_cell(Sink::new(variant)),
            variant,
            lead_nanos: CachePadded::new(AtomicU64::new(0)),
        };
        Self { group, commit }
    }
}

impl Contender for Ours {
    fn write(&self, mut record: Record) {
        // In place, as the mutexes append from the caller's record.
        self.group
            .write_in_place(&self.commit, &mut record)
            .expect("no lead step fails here");
    }

    fn groups(&self) -> Option<(u64, u64)> {
        let stats = self.group.stats();
        Some((stats.groups, stats.members))
    }

    fn waits(&self) -> Option<Waits> {
        let stats = self.group.stats();
        Some(Waits {
            barges: stats.barges,
            spins: stats.spin_successes,
            yields: stats.yield_successes,
            sleeps: stats.futex_sleeps,
        })
    }
}

/// User plus system CPU time of the whole process, and its voluntary and
/// involuntary context switches.
fn process_usage() -> (Duration, u64, u64) {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `getrusage` fills the whole `rusage` it is given.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (
        time(usage.ru_utime) + time(usage.ru_stime),
        usage.ru_nvcsw as u64,
        usage.ru_nivcsw as u64,
    )
}

/// What a benchmark accumulated over its timed sections.
#[derive(Default)]
struct Tally {
    writes: u64,
    cpu: Duration,
    /// Voluntary context switches (a thread blocked or yielded).
    voluntary: u64,
    /// Involuntary ones (a thread was preempted).
    involuntary: u64,
}

/// Runs `iters` writes split over `threads` writers; returns the wall time,
/// scaled to exactly `iters` writes.
fn run(contender: &dyn Contender, threads: usize, iters: u64, tally: &mut Tally) -> Duration {
    let per_thread = iters.div_ceil(threads as u64);
    let start_line = Barrier::new(threads + 1);
    let (started, before) = std::thread::scope(|s| {
        for t in 0..threads {
            let start_line = &start_line;
            s.spawn(move || {
                let mut record = [t as u8; RECORD];
                start_line.wait();
                for i in 0..per_thread {
                    record[..8].copy_from_slice(&i.to_le_bytes());
                    contender.write(record);
                }
            });
        }
        start_line.wait();
        let before = process_usage();
        let start = Instant::now();
        // Leaving the scope joins the writers; time is read after that.
        (start, before)
    });
    let wall = started.elapsed();
    let after = process_usage();
    let written = per_thread * threads as u64;
    tally.writes += written;
    tally.cpu += after.0.saturating_sub(before.0);
    tally.voluntary += after.1.saturating_sub(before.1);
    tally.involuntary += after.2.saturating_sub(before.2);
    wall.mul_f64(iters as f64 / written as f64)
}

fn report(id: &str, contender: &dyn Contender, tally: &Tally) {
    if tally.writes == 0 {
        return; // filtered out
    }
    let groups = match contender.groups() {
        Some((groups, members)) if groups > 0 => {
            format!("mean group {:.2}", members as f64 / groups as f64)
        }
        _ => "mean group -".to_owned(),
    };
    let per_write = |n: u64| n as f64 / tally.writes as f64;
    let waits = match contender.waits() {
        Some(waits) => format!(
            ", per write: barges {:.4}, waits ended spinning {:.4}, yielding {:.4}, \
             asleep (futex sleeps) {:.4}",
            per_write(waits.barges),
            per_write(waits.spins),
            per_write(waits.yields),
            per_write(waits.sleeps)
        ),
        None => String::new(),
    };
    let cpu_per_write = tally.cpu.as_secs_f64() * 1e6 / tally.writes.max(1) as f64;
    eprintln!(
        "write_group-bench {id}: {groups}, cpu {cpu_per_write:.2} us/write over {} writes, \
         context switches per write {:.4} voluntary, {:.4} involuntary{waits}",
        tally.writes,
        per_write(tally.voluntary),
        per_write(tally.involuntary)
    );
}

const CONTENDERS: [&str; 5] = [
    "std_mutex",
    "parking_lot",
    "condvar_group",
    "ours_tree_off",
    "ours_tree_on",
];

/// `Options::default()`, with `WRITE_GROUP_BENCH_SPIN`,
/// `WRITE_GROUP_BENCH_YIELD_USEC` and `WRITE_GROUP_BENCH_BARGE` overriding
/// the spin count, the yield budget and the barging budget, for experiments.
fn ours_options() -> Options {
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .map(|v| v.parse::<u32>().expect(name))
    };
    let defaults = Options::default();
    Options::new()
        .with_spin_count(env("WRITE_GROUP_BENCH_SPIN").unwrap_or(defaults.spin_count()))
        .with_max_yield_usec(
            env("WRITE_GROUP_BENCH_YIELD_USEC").unwrap_or(defaults.max_yield_usec()),
        )
        .with_barge_spins(env("WRITE_GROUP_BENCH_BARGE").unwrap_or(defaults.barge_spins()))
}

fn make_contender(name: &str, variant: Variant) -> Box<dyn Contender> {
    match name {
        "std_mutex" => Box::new(StdMutex {
            sink: Mutex::new(Sink::new(variant)),
            variant,
        }),
        "parking_lot" => Box::new(ParkingLot {
            sink: parking_lot::Mutex::new(Sink::new(variant)),
            variant,
        }),
        "condvar_group" => Box::new(CondvarGroup::new(variant)),
        "ours_tree_off" => Box::new(Ours::new(
            variant,
            Options::new().with_tree_threshold(usize::MAX),
        )),
        "ours_tree_on" => Box::new(Ours::new(variant, ours_options())),
        _ => unreachable!("unknown contender {name}"),
    }
}

fn bench_one(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: BenchmarkId,
    label: String,
    threads: usize,
    make: &dyn Fn() -> Box<dyn Contender>,
) {
    // A fresh contender per benchmark, so the counters cover it alone.
    let contender = make();
    let mut tally = Tally::default();
    group.bench_function(id, |b| {
        b.iter_custom(|iters| run(&*contender, threads, iters, &mut tally))
    });
    report(&label, &*contender, &tally);
}

fn write_group(c: &mut Criterion) {
    for variant in [
        Variant::Mem,
        Variant::Parallel,
        Variant::Fsync,
        Variant::FsyncParallel,
    ] {
        let mut group = c.benchmark_group(format!("write_group/{}", variant.name()));
        group.throughput(Throughput::Elements(1));
        if variant.syncs() {
            // A sync costs ~100 us or more: fewer, longer samples.
            group
                .sample_size(10)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(5));
        } else {
            group
                .sample_size(20)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(3));
        }
        for threads in benches::thread_counts(&[1, 2, 4, 8, 16, 32]) {
            for name in CONTENDERS {
                let label = format!("write_group/{}/{name}/{threads}", variant.name());
                let make = || make_contender(name, variant);
                bench_one(
                    &mut group,
                    BenchmarkId::new(name, threads),
                    label,
                    threads,
                    &make,
                );
            }
        }
        group.finish();
    }
}

fn fan_out(c: &mut Criterion) {
    let mut group = c.benchmark_group("write_group_fanout");
    group.throughput(Throughput::Elements(1));
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    // `off`: the leader wakes every member itself, the baseline the tree
    // must beat.
    let fan_outs = [
        ("off", None),
        ("sqrt", Some(FanOut::Sqrt)),
        ("fixed2", Some(FanOut::Fixed(2))),
        ("fixed4", Some(FanOut::Fixed(4))),
        ("fixed8", Some(FanOut::Fixed(8))),
    ];
    for threads in benches::thread_counts(&[16, 32]) {
        for (name, fan_out) in fan_outs {
            let options = match fan_out {
                Some(fan_out) => Options::new().with_tree_threshold(2).with_fan_out(fan_out),
                None => Options::new().with_tree_threshold(usize::MAX),
            };
            let label = format!("write_group_fanout/{name}/{threads}");
            // Synced groups: only they grow large enough for the tree to
            // matter (without a sync, writers barge and groups stay near 1).
            let make = || {
                Box::new(Ours::new(Variant::FsyncParallel, options.clone())) as Box<dyn Contender>
            };
            bench_one(
                &mut group,
                BenchmarkId::new(name, threads),
                label,
                threads,
                &make,
            );
        }
    }
    group.finish();
}

criterion_group!(benches, write_group, fan_out);
criterion_main!(benches);
