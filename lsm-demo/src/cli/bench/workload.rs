//! `lsm-demo bench`'s benchmarks: db_bench's workloads, keys and counts,
//! and the threads that run and measure them.
//!
//! Each benchmark runs as db_bench 7.8.3 runs it: the same number of
//! operations per thread (a batch of `--batch_size` writes is one step;
//! only whole batches are written), the same keys drawn in the same order
//! from each thread's own stream (`random.rs`), the same per-thread
//! counters merged the same way, and the same result line.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use lsm_demo::perf::{PerfContext, PerfMetric, PerfStatsLevel, set_perf_stats};
use lsm_demo::{DB, IteratorMode, WriteBatch, WriteOptions};

use super::flags::BenchArgs;
use super::latency::{Latencies, Op, Recorder};
use super::progress::{self, Ticker};
use super::random::{Mt64, Values, key_stream};
use super::report::{BenchResult, PerfCounts, SequencerWaits, WaitOutcomes};
use super::steps::Steps;
use super::{Config, Row};
use crate::cli::Error;

/// db_bench's benchmarks that `lsm-demo bench` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Workload {
    FillSeq,
    FillBatch,
    FillRandom,
    Overwrite,
    FillSync,
    ReadRandom,
    MultiReadRandom,
    ReadSeq,
    ReadReverse,
    SeekRandom,
    ReadWhileWriting,
    ReadRandomWriteRandom,
    UpdateRandom,
    DeleteRandom,
}

impl Workload {
    /// Every benchmark, in the order `--help` lists them.
    pub(super) const ALL: [Workload; 14] = [
        Workload::FillSeq,
        Workload::FillBatch,
        Workload::FillRandom,
        Workload::Overwrite,
        Workload::FillSync,
        Workload::ReadRandom,
        Workload::MultiReadRandom,
        Workload::ReadSeq,
        Workload::ReadReverse,
        Workload::SeekRandom,
        Workload::ReadWhileWriting,
        Workload::ReadRandomWriteRandom,
        Workload::UpdateRandom,
        Workload::DeleteRandom,
    ];

    pub(super) fn parse(s: &str) -> Result<Workload, Error> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = Workload::ALL.iter().map(|w| w.name()).collect();
                Error::usage(format!(
                    "unknown benchmark {s:?}; known: {}",
                    known.join(", ")
                ))
            })
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Workload::FillSeq => "fillseq",
            Workload::FillBatch => "fillbatch",
            Workload::FillRandom => "fillrandom",
            Workload::Overwrite => "overwrite",
            Workload::FillSync => "fillsync",
            Workload::ReadRandom => "readrandom",
            Workload::MultiReadRandom => "multireadrandom",
            Workload::ReadSeq => "readseq",
            Workload::ReadReverse => "readreverse",
            Workload::SeekRandom => "seekrandom",
            Workload::ReadWhileWriting => "readwhilewriting",
            Workload::ReadRandomWriteRandom => "readrandomwriterandom",
            Workload::UpdateRandom => "updaterandom",
            Workload::DeleteRandom => "deleterandom",
        }
    }

    /// Starts on an empty database (unless `--use_existing_db`).
    pub(super) fn fresh_db(self) -> bool {
        matches!(
            self,
            Workload::FillSeq | Workload::FillBatch | Workload::FillRandom | Workload::FillSync
        )
    }

    /// Writes to the database (the write group's and the levels' reports
    /// follow its result line).
    pub(super) fn is_write(self) -> bool {
        !matches!(
            self,
            Workload::ReadRandom
                | Workload::MultiReadRandom
                | Workload::ReadSeq
                | Workload::ReadReverse
                | Workload::SeekRandom
        )
    }

    /// Runs for `--duration` when one is given: db_bench's benchmarks of
    /// random keys.
    pub(super) fn timed(self) -> bool {
        !matches!(
            self,
            Workload::FillSeq | Workload::FillBatch | Workload::ReadSeq | Workload::ReadReverse
        )
    }

    /// Threads for `--threads=n`: readwhilewriting adds its writer.
    pub(super) fn threads(self, n: usize) -> usize {
        if self == Workload::ReadWhileWriting {
            n + 1
        } else {
            n
        }
    }
}

/// db_bench's key: the integer big-endian in the first 8 bytes, padded
/// with '0' to `key_size`.
pub fn make_key(k: u64, key_size: usize, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&k.to_be_bytes());
    out.resize(key_size.max(8), b'0');
}

/// The counts db_bench derives from its flags for one benchmark.
#[derive(Debug, Clone, Copy)]
struct Plan {
    /// Keys are drawn from `0..num` (`--num`; a thousandth of it for
    /// fillsync).
    num: u64,
    /// Steps per thread: writes, reads, seeks, updates, deletes.
    ops: u64,
    /// Operations per step: `--batch_size`, 1000 for fillbatch.
    batch: u64,
}

impl Plan {
    fn new(w: Workload, a: &BenchArgs, num: u64) -> Plan {
        let or_num = |v: i64| if v < 0 { num } else { v as u64 };
        let reads = or_num(a.reads);
        let batch = a.batch_size as u64;
        let (num, ops, batch) = match w {
            Workload::FillSeq | Workload::FillRandom | Workload::Overwrite => (num, num, batch),
            Workload::FillBatch => (num, num, 1000),
            // db_bench 7.8.3 makes --num synced writes to a thousandth of
            // the keys (and notes that thousandth as "(n ops)").
            Workload::FillSync => ((num / 1000).max(1), num, batch),
            Workload::ReadRandom
            | Workload::ReadSeq
            | Workload::ReadReverse
            | Workload::SeekRandom
            | Workload::ReadWhileWriting => (num, reads, 1),
            Workload::MultiReadRandom => (num, reads, batch),
            Workload::ReadRandomWriteRandom | Workload::UpdateRandom => (num, reads, 1),
            Workload::DeleteRandom => (num, or_num(a.deletes), batch),
        };
        Plan { num, ops, batch }
    }

    /// Operations one thread does: whole batches only, as db_bench.
    fn per_thread(&self) -> u64 {
        self.ops / self.batch * self.batch
    }

    /// A thread's steps from `start`: `--duration`'s, or this plan's
    /// operations.
    fn steps(&self, w: Workload, a: &BenchArgs, start: Instant) -> Steps {
        if a.duration > 0 && w.timed() {
            let run = Duration::from_secs(a.duration);
            Steps::timed(start, run, a.ops_between_duration_checks)
        } else {
            Steps::counted(self.ops)
        }
    }
}

/// What one thread did, merged with the others' as db_bench merges them.
#[derive(Debug)]
struct Outcome {
    start: Instant,
    end: Instant,
    /// Operations (a batch counts its writes).
    done: u64,
    /// Key and value bytes read or written, for MB/s.
    bytes: u64,
    /// Reads that found their key.
    found: u64,
    /// Key and value bytes written to the database.
    written: u64,
    /// The thread's note for the result line, `(found of reads found)`.
    message: String,
    /// readwhilewriting's writer: left out of the result, as in db_bench.
    excluded: bool,
    latencies: Latencies,
    /// With `--perf_level` 2 or more: the thread's perf counters, in the
    /// order of `PerfMetric::ALL`.
    perf: Option<[u64; PerfMetric::ALL.len()]>,
}

/// `--perf_level`'s number (RocksDB 7.8.3's `PerfLevel`) as a level; `None`
/// for one that measures nothing.
fn perf_level(n: u8) -> Option<PerfStatsLevel> {
    Some(match n {
        2 => PerfStatsLevel::EnableCount,
        3 => PerfStatsLevel::EnableTimeExceptForMutex,
        4 => PerfStatsLevel::EnableTimeAndCPUTimeExceptForMutex,
        5 => PerfStatsLevel::EnableTime,
        _ => return None,
    })
}

/// One thread's state while it runs.
struct Worker<'a> {
    db: &'a DB,
    a: &'a BenchArgs,
    plan: Plan,
    keys: Mt64,
    values: Values,
    key: Vec<u8>,
    wo: WriteOptions,
    recorder: Recorder,
    ticker: Option<Ticker<'a>>,
    steps: Steps,
    done: u64,
    bytes: u64,
    found: u64,
    written: u64,
    message: String,
}

impl Worker<'_> {
    /// `n` operations of kind `op` ended now.
    #[inline]
    fn finished(&mut self, n: u64, op: Op) {
        self.recorder.finished(op);
        if let Some(t) = &mut self.ticker {
            t.add(n);
        }
        self.done += n;
    }

    /// Sets `self.key` to key `k`.
    fn set_key(&mut self, k: u64) {
        make_key(k, self.a.key_size, &mut self.key);
    }

    fn random_key(&mut self) {
        let k = self.keys.key(self.plan.num);
        self.set_key(k);
    }

    fn put(&mut self) -> Result<(), lsm_demo::Error> {
        self.db
            .put_opt(&self.key, self.values.next_value(), &self.wo)?;
        let n = (self.key.len() + self.a.value_size) as u64;
        self.bytes += n;
        self.written += n;
        Ok(())
    }

    /// Point read of `self.key`; counts a hit and its bytes.
    fn get(&mut self) -> Result<(), lsm_demo::Error> {
        if let Some(v) = self.db.get(&self.key)? {
            self.found += 1;
            self.bytes += (self.key.len() + v.len()) as u64;
        }
        Ok(())
    }

    /// fillseq, fillbatch, fillrandom, overwrite, fillsync.
    fn fill(&mut self, sequential: bool) -> Result<(), lsm_demo::Error> {
        let batch_len = self.plan.batch;
        let mut batch = WriteBatch::new();
        let mut next = 0u64;
        while self.steps.next(batch_len) {
            if !sequential {
                self.keys.skip();
            }
            for _ in 0..batch_len {
                let k = if sequential {
                    next += 1;
                    next - 1
                } else {
                    self.keys.key(self.plan.num)
                };
                make_key(k, self.a.key_size, &mut self.key);
                batch.put(&self.key, self.values.next_value());
            }
            self.db.write_and_clear(&mut batch, &self.wo)?;
            let n = batch_len * (self.a.key_size + self.a.value_size) as u64;
            self.bytes += n;
            self.written += n;
            self.finished(batch_len, Op::Write);
        }
        if self.plan.num != self.plan.ops {
            self.message = format!("({} ops)", self.plan.num);
        }
        Ok(())
    }

    fn read_random(&mut self) -> Result<(), lsm_demo::Error> {
        while self.steps.next(1) {
            self.keys.skip();
            self.random_key();
            self.get()?;
            self.finished(1, Op::Read);
        }
        self.message = format!("({} of {} found)\n", self.found, self.done);
        Ok(())
    }

    fn multi_read_random(&mut self) -> Result<(), lsm_demo::Error> {
        let n = self.plan.batch as usize;
        let mut keys = vec![Vec::with_capacity(self.a.key_size); n];
        let mut read = 0;
        while self.steps.next(self.plan.batch) {
            self.keys.skip();
            for k in &mut keys {
                make_key(self.keys.key(self.plan.num), self.a.key_size, k);
            }
            let values = if self.a.multiread_batched {
                self.db.batched_multi_get(&keys, false)
            } else {
                self.db.multi_get(&keys)
            };
            for (k, v) in keys.iter().zip(values) {
                if let Some(v) = v? {
                    self.found += 1;
                    self.bytes += (k.len() + v.len()) as u64;
                }
            }
            read += n as u64;
            self.finished(n as u64, Op::Read);
        }
        self.message = format!("({} of {read} found)", self.found);
        Ok(())
    }

    fn seek_random(&mut self) -> Result<(), lsm_demo::Error> {
        while self.steps.next(1) {
            self.random_key();
            // A fresh iterator for every seek, as db_bench.
            let mut it = self.db.raw_iterator();
            it.seek(&self.key);
            if it.key() == Some(&self.key[..]) {
                self.found += 1;
            }
            for _ in 0..self.a.seek_nexts {
                let Some((k, v)) = it.item() else { break };
                self.bytes += (k.len() + v.len()) as u64;
                it.next();
            }
            it.status()?;
            self.finished(1, Op::Seek);
        }
        self.message = format!("({} of {} found)\n", self.found, self.done);
        Ok(())
    }

    fn read_seq(&mut self) -> Result<(), lsm_demo::Error> {
        let it = self.db.iterator(IteratorMode::Start);
        for kv in it.take(usize::try_from(self.plan.ops).unwrap_or(usize::MAX)) {
            let (k, v) = kv?;
            self.bytes += (k.len() + v.len()) as u64;
            self.finished(1, Op::Read);
        }
        Ok(())
    }

    fn read_reverse(&mut self) -> Result<(), lsm_demo::Error> {
        let mut it = self.db.raw_iterator();
        it.seek_to_last();
        let mut i = 0;
        while i < self.plan.ops {
            let Some((k, v)) = it.item() else { break };
            self.bytes += (k.len() + v.len()) as u64;
            self.finished(1, Op::Read);
            i += 1;
            it.prev();
        }
        it.status()
    }

    fn read_random_write_random(&mut self) -> Result<(), lsm_demo::Error> {
        let percent = self.a.readwritepercent;
        let (mut gets, mut puts) = (0, 0);
        let (mut reads, mut writes) = (0u64, 0u64);
        while self.steps.next(1) {
            self.keys.skip();
            self.random_key();
            if gets == 0 && puts == 0 {
                gets = percent;
                puts = 100 - percent;
            }
            if gets > 0 {
                // db_bench counts no bytes here: no MB/s on the line.
                if self.db.get(&self.key)?.is_some() {
                    self.found += 1;
                }
                gets -= 1;
                reads += 1;
                self.finished(1, Op::Read);
            } else if puts > 0 {
                self.put()?;
                puts -= 1;
                writes += 1;
                self.finished(1, Op::Write);
            }
        }
        self.bytes = 0;
        self.message = format!(
            "( reads:{reads} writes:{writes} total:{} found:{})",
            self.plan.ops, self.found
        );
        Ok(())
    }

    fn update_random(&mut self) -> Result<(), lsm_demo::Error> {
        while self.steps.next(1) {
            self.keys.skip();
            self.random_key();
            self.get()?;
            self.put()?;
            self.finished(1, Op::Update);
        }
        self.message = format!("( updates:{} found:{})", self.plan.ops, self.found);
        Ok(())
    }

    fn delete_random(&mut self) -> Result<(), lsm_demo::Error> {
        let mut batch = WriteBatch::new();
        while self.steps.next(self.plan.batch) {
            self.keys.skip();
            for _ in 0..self.plan.batch {
                self.random_key();
                batch.delete(&self.key);
                self.written += self.key.len() as u64;
            }
            self.db.write_and_clear(&mut batch, &self.wo)?;
            self.finished(self.plan.batch, Op::Delete);
        }
        Ok(())
    }

    /// readwhilewriting's writer: random puts until every reader is done.
    fn write_until(
        &mut self,
        readers_done: &AtomicUsize,
        readers: usize,
    ) -> Result<(), lsm_demo::Error> {
        loop {
            self.keys.skip();
            // Relaxed: a stop signal only; nothing is read through it.
            if readers_done.load(Ordering::Relaxed) >= readers {
                return Ok(());
            }
            self.random_key();
            self.put()?;
            self.finished(1, Op::Write);
        }
    }
}

/// Runs one benchmark with a progress bar as `--quiet` and the terminal
/// allow. Thread `t` draws its keys from stream `first_stream + t` of the
/// run (db_bench numbers its threads over the whole run, from 1).
pub(super) fn run_one(
    cfg: &Config,
    db: &DB,
    row: &Row,
    first_stream: u64,
) -> Result<BenchResult, Error> {
    let total = bar_total(cfg, row);
    let bar = progress::bar(row.w.name(), total, progress::visible(cfg.args.quiet));
    let r = run_with_bar(cfg, db, row, first_stream, &bar);
    bar.finish_and_clear();
    r
}

/// The operations the bar counts: those of the threads in the result;
/// `None` when they run for `--duration`.
pub(super) fn bar_total(cfg: &Config, row: &Row) -> Option<u64> {
    if cfg.args.duration > 0 && row.w.timed() {
        return None;
    }
    let plan = Plan::new(row.w, &cfg.args, row.num);
    Some(plan.per_thread() * row.threads as u64)
}

/// [`run_one`] with the caller's bar, whose position ends at the
/// operations the result counts.
pub(super) fn run_with_bar(
    cfg: &Config,
    db: &DB,
    row: &Row,
    first_stream: u64,
    bar: &ProgressBar,
) -> Result<BenchResult, Error> {
    let a = &cfg.args;
    let w = row.w;
    let plan = Plan::new(w, a, row.num);
    let threads = w.threads(row.threads);
    let readers = if w == Workload::ReadWhileWriting {
        threads - 1
    } else {
        threads
    };
    let before = db.stats();
    let barrier = Barrier::new(threads);
    let readers_done = AtomicUsize::new(0);
    let outcomes: Mutex<Vec<Option<Outcome>>> = Mutex::new((0..threads).map(|_| None).collect());
    let error = Mutex::new(None::<lsm_demo::Error>);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (barrier, readers_done, outcomes, error) =
                (&barrier, &readers_done, &outcomes, &error);
            s.spawn(move || {
                let stream = first_stream + t as u64;
                let writer = w == Workload::ReadWhileWriting && t == 0;
                let mut wo = WriteOptions::default();
                wo.set_sync(a.sync || w == Workload::FillSync);
                wo.disable_wal(a.disable_wal);
                let mut me = Worker {
                    db,
                    a,
                    plan,
                    keys: key_stream(cfg.seed, stream),
                    values: Values::new(cfg.seed.wrapping_add(stream), a.value_size),
                    key: Vec::with_capacity(a.key_size),
                    wo,
                    recorder: Recorder::new(a.histogram),
                    ticker: (!writer).then(|| Ticker::new(bar)),
                    steps: Steps::counted(0),
                    done: 0,
                    bytes: 0,
                    found: 0,
                    written: 0,
                    message: String::new(),
                };
                let perf = perf_level(a.perf_level);
                if let Some(level) = perf {
                    set_perf_stats(level);
                }
                barrier.wait();
                if perf.is_some() {
                    PerfContext::default().reset();
                }
                let start = Instant::now();
                me.steps = plan.steps(w, a, start);
                me.recorder.start();
                let r = match w {
                    Workload::FillSeq | Workload::FillBatch => me.fill(true),
                    Workload::FillRandom | Workload::Overwrite | Workload::FillSync => {
                        me.fill(false)
                    }
                    Workload::ReadRandom => me.read_random(),
                    Workload::MultiReadRandom => me.multi_read_random(),
                    Workload::ReadSeq => me.read_seq(),
                    Workload::ReadReverse => me.read_reverse(),
                    Workload::SeekRandom => me.seek_random(),
                    Workload::ReadWhileWriting if writer => me.write_until(readers_done, readers),
                    Workload::ReadWhileWriting => me.read_random(),
                    Workload::ReadRandomWriteRandom => me.read_random_write_random(),
                    Workload::UpdateRandom => me.update_random(),
                    Workload::DeleteRandom => me.delete_random(),
                };
                let end = Instant::now();
                let perf = perf.map(|_| {
                    let ctx = PerfContext::default();
                    set_perf_stats(PerfStatsLevel::Disable);
                    PerfMetric::ALL.map(|m| ctx.metric(m))
                });
                if !writer {
                    // Relaxed: the writer only stops on it; the counts are
                    // handed over through the scope's join.
                    readers_done.fetch_add(1, Ordering::Relaxed);
                }
                drop(me.ticker.take());
                if let Err(e) = r {
                    *error.lock().expect("lock") = Some(e);
                }
                outcomes.lock().expect("lock")[t] = Some(Outcome {
                    start,
                    end,
                    done: me.done,
                    bytes: me.bytes,
                    found: me.found,
                    written: me.written,
                    message: me.message,
                    excluded: writer,
                    latencies: me.recorder.into_latencies(),
                    perf,
                });
            });
        }
    });
    if let Some(e) = error.into_inner().expect("lock") {
        return Err(Error::Benchmark {
            name: w.name().to_string(),
            source: e,
        });
    }
    let outcomes: Vec<Outcome> = outcomes
        .into_inner()
        .expect("lock")
        .into_iter()
        .map(|o| o.expect("every thread reports"))
        .collect();
    Ok(merge(cfg, db, row, &before, outcomes))
}

/// The threads' outcomes merged as db_bench merges its threads' stats:
/// operations and bytes add up, the time runs from the first start to the
/// last end, micros/op is the threads' summed time over the operations,
/// and the note on the line is the first thread's.
fn merge(
    cfg: &Config,
    db: &DB,
    row: &Row,
    before: &lsm_demo::DbStats,
    outcomes: Vec<Outcome>,
) -> BenchResult {
    let a = &cfg.args;
    let w = row.w;
    let mut done = 0u64;
    let mut bytes = 0u64;
    let mut found = 0u64;
    let mut written = 0u64;
    let mut busy = Duration::ZERO;
    let mut first_start = None::<Instant>;
    let mut last_end = None::<Instant>;
    let mut first_end = None::<Instant>;
    let mut threads_timed = 0usize;
    let mut message = String::new();
    let mut latencies = Latencies::default();
    let mut perf = None::<[u64; PerfMetric::ALL.len()]>;
    for o in outcomes {
        written += o.written;
        if o.excluded {
            continue;
        }
        done += o.done;
        bytes += o.bytes;
        found += o.found;
        busy += o.end - o.start;
        first_start = Some(first_start.map_or(o.start, |s| s.min(o.start)));
        last_end = Some(last_end.map_or(o.end, |e| e.max(o.end)));
        first_end = Some(first_end.map_or(o.end, |e| e.min(o.end)));
        threads_timed += 1;
        if message.is_empty() {
            message = o.message;
        }
        latencies.merge(o.latencies);
        if let Some(counts) = o.perf {
            let sum = perf.get_or_insert([0; PerfMetric::ALL.len()]);
            for (s, c) in sum.iter_mut().zip(counts) {
                *s += c;
            }
        }
    }
    let wall = match (first_start, last_end) {
        (Some(s), Some(e)) => e - s,
        _ => Duration::ZERO,
    };
    let secs = wall.as_secs_f64().max(1e-9);
    let first_done_seconds = match (first_start, first_end) {
        (Some(s), Some(e)) if threads_timed > 1 => Some((e - s).as_secs_f64()),
        _ => None,
    };
    let ops = done.max(1);
    let after = db.stats();
    let sequencer_waits = w
        .is_write()
        .then(|| SequencerWaits::between(before, &after));
    let (wg, before) = (&after.write_group, &before.write_group);
    let groups = wg.groups - before.groups;
    let members = wg.members - before.members;
    let reads_keys = matches!(
        w,
        Workload::ReadRandom
            | Workload::MultiReadRandom
            | Workload::SeekRandom
            | Workload::ReadWhileWriting
            | Workload::ReadRandomWriteRandom
            | Workload::UpdateRandom
    );
    BenchResult {
        name: w.name().to_string(),
        threads: row.threads,
        memtablerep: row.rep,
        ops: done,
        seconds: secs,
        first_done_seconds,
        micros_per_op: busy.as_secs_f64() * 1e6 / ops as f64,
        ops_per_sec: ops as f64 / secs,
        mb_per_sec: bytes as f64 / (1024.0 * 1024.0) / secs,
        found: reads_keys.then_some(found),
        message,
        written_bytes: written,
        latency: a.histogram.then(|| latencies.summaries()),
        histogram_text: a.histogram.then(|| latencies.db_bench_text()),
        mean_group_size: (w.is_write() && groups > 0).then(|| members as f64 / groups as f64),
        groups: w.is_write().then_some(groups),
        leader_wakeups: w
            .is_write()
            .then(|| wg.leader_wakeups - before.leader_wakeups),
        waits: w.is_write().then(|| WaitOutcomes {
            spun: wg.spin_successes - before.spin_successes,
            yielded: wg.yield_successes - before.yield_successes,
            slept: wg.futex_sleeps - before.futex_sleeps,
            barged: wg.barges - before.barges,
        }),
        sequencer_waits,
        gather_waits: (w.is_write() && wg.gather_waits > before.gather_waits).then(|| {
            (
                wg.gather_waits - before.gather_waits,
                wg.gather_timeouts - before.gather_timeouts,
            )
        }),
        memtable_bytes_per_entry: (w.is_write() && after.memtable_entries > 0)
            .then(|| after.memtable_bytes as f64 / after.memtable_entries as f64),
        perf_context: perf.map(|sum| PerfCounts::new(&sum)),
        levels: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_match_db_bench() {
        let mut k = Vec::new();
        make_key(0x0102, 16, &mut k);
        assert_eq!(&k[..8], &[0, 0, 0, 0, 0, 0, 1, 2]);
        assert_eq!(&k[8..], b"00000000");
    }

    #[test]
    fn names_round_trip() {
        for w in Workload::ALL {
            assert_eq!(Workload::parse(w.name()).unwrap(), w);
        }
        let e = Workload::parse("fillrandum").unwrap_err().to_string();
        assert!(e.contains("known: fillseq, fillbatch,"), "{e}");
    }
}
