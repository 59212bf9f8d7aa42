//! `lsm-demo bench`'s benchmarks: db_bench's keys, and the threads that
//! run a workload and measure it.

use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use lsm_demo::{DB, IteratorMode, WriteBatch, WriteOptions};
use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};

use super::flags::BenchArgs;
use super::report::{BenchResult, WaitOutcomes};
use super::{Config, Row};
use crate::cli::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Workload {
    FillSeq,
    FillRandom,
    Overwrite,
    FillSync,
    ReadRandom,
    ReadSeq,
}

impl Workload {
    pub(super) fn parse(s: &str) -> Result<Workload, Error> {
        Ok(match s {
            "fillseq" => Workload::FillSeq,
            "fillrandom" => Workload::FillRandom,
            "overwrite" => Workload::Overwrite,
            "fillsync" => Workload::FillSync,
            "readrandom" => Workload::ReadRandom,
            "readseq" => Workload::ReadSeq,
            other => {
                return Err(Error::usage(format!(
                    "unknown benchmark {other:?}; known: fillseq, fillrandom, overwrite, fillsync, readrandom, readseq"
                )));
            }
        })
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Workload::FillSeq => "fillseq",
            Workload::FillRandom => "fillrandom",
            Workload::Overwrite => "overwrite",
            Workload::FillSync => "fillsync",
            Workload::ReadRandom => "readrandom",
            Workload::ReadSeq => "readseq",
        }
    }

    pub(super) fn fresh_db(self) -> bool {
        matches!(
            self,
            Workload::FillSeq | Workload::FillRandom | Workload::FillSync
        )
    }

    pub(super) fn is_write(self) -> bool {
        !matches!(self, Workload::ReadRandom | Workload::ReadSeq)
    }
}

/// db_bench's key: the integer big-endian in the first 8 bytes, padded
/// with '0' to `key_size`.
pub fn make_key(k: u64, key_size: usize, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&k.to_be_bytes());
    out.resize(key_size.max(8), b'0');
}

pub(super) fn run_one(cfg: &Config, db: &DB, row: &Row) -> Result<BenchResult, Error> {
    let a = &cfg.args;
    let (w, threads, rep) = (row.w, row.threads, row.rep);
    let per_thread = match w {
        Workload::FillSync => (row.num / 1000).max(1),
        Workload::ReadRandom | Workload::ReadSeq if a.reads >= 0 => a.reads as u64,
        _ => row.num,
    };
    let total = per_thread * threads as u64;
    let bar = if a.quiet {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(total);
        b.set_style(
            ProgressStyle::with_template(
                "{msg:>12} [{bar:40}] {pos}/{len} ops ({per_sec}, eta {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        b.set_message(w.name());
        b
    };
    let before = db.stats().write_group;
    let barrier = Barrier::new(threads);
    let found = AtomicU64::new(0);
    let busy_micros = AtomicU64::new(0);
    let first_start = std::sync::Mutex::new(None::<Instant>);
    let last_end = std::sync::Mutex::new(None::<Instant>);
    let error = std::sync::Mutex::new(None::<lsm_demo::Error>);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (barrier, found, busy, bar) = (&barrier, &found, &busy_micros, &bar);
            let (first_start, last_end, error) = (&first_start, &last_end, &error);
            s.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(cfg.seed.wrapping_add(t as u64));
                barrier.wait();
                let start = Instant::now();
                {
                    let mut f = first_start.lock().expect("lock");
                    if f.is_none_or(|f| start < f) {
                        *f = Some(start);
                    }
                }
                let r = thread_body(db, w, a, row.num, per_thread, &mut rng, bar, found);
                let end = Instant::now();
                busy.fetch_add((end - start).as_micros() as u64, Ordering::Relaxed);
                {
                    let mut l = last_end.lock().expect("lock");
                    if l.is_none_or(|l| end > l) {
                        *l = Some(end);
                    }
                }
                if let Err(e) = r {
                    *error.lock().expect("lock") = Some(e);
                }
            });
        }
    });
    bar.finish_and_clear();
    if let Some(e) = error.into_inner().expect("lock") {
        return Err(Error::Benchmark {
            name: w.name().to_string(),
            source: e,
        });
    }
    let wall = match (
        first_start.into_inner().expect("lock"),
        last_end.into_inner().expect("lock"),
    ) {
        (Some(s), Some(e)) => e - s,
        _ => Duration::ZERO,
    };
    let secs = wall.as_secs_f64().max(1e-9);
    let after = db.stats();
    let wg = &after.write_group;
    let groups = wg.groups - before.groups;
    let members = wg.members - before.members;
    let bytes = match w {
        Workload::ReadRandom => found.load(Ordering::Relaxed) * (a.key_size + a.value_size) as u64,
        _ => total * (a.key_size + a.value_size) as u64,
    };
    Ok(BenchResult {
        name: w.name().to_string(),
        threads,
        memtablerep: rep,
        ops: total,
        seconds: secs,
        micros_per_op: busy_micros.load(Ordering::Relaxed) as f64 / total as f64,
        ops_per_sec: total as f64 / secs,
        mb_per_sec: bytes as f64 / (1024.0 * 1024.0) / secs,
        found: (w == Workload::ReadRandom).then(|| found.load(Ordering::Relaxed)),
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
        gather_waits: (w.is_write() && wg.gather_waits > before.gather_waits).then(|| {
            (
                wg.gather_waits - before.gather_waits,
                wg.gather_timeouts - before.gather_timeouts,
            )
        }),
        memtable_bytes_per_entry: (w.is_write() && after.memtable_entries > 0)
            .then(|| after.memtable_bytes as f64 / after.memtable_entries as f64),
        levels: None,
    })
}

#[allow(clippy::too_many_arguments)]
fn thread_body(
    db: &DB,
    w: Workload,
    a: &BenchArgs,
    key_range: u64,
    ops: u64,
    rng: &mut SmallRng,
    bar: &ProgressBar,
    found: &AtomicU64,
) -> Result<(), lsm_demo::Error> {
    let mut key = Vec::with_capacity(a.key_size);
    // A pool of random bytes; each value is a window of it.
    let mut pool = vec![0u8; a.value_size.max(1) * 64 + 1024];
    rng.fill_bytes(&mut pool);
    let mut wo = WriteOptions::default();
    wo.set_sync(a.sync || w == Workload::FillSync);
    wo.disable_wal(a.disable_wal);
    let tick = 1024.min(ops.max(1));
    match w {
        Workload::FillSeq | Workload::FillRandom | Workload::Overwrite | Workload::FillSync => {
            let mut i = 0u64;
            let mut batch = WriteBatch::new();
            while i < ops {
                batch.clear();
                let n = (a.batch_size as u64).min(ops - i);
                for j in 0..n {
                    let k = if w == Workload::FillSeq {
                        i + j
                    } else {
                        rng.random_range(0..key_range)
                    };
                    make_key(k, a.key_size, &mut key);
                    let off = rng.random_range(0..pool.len() - a.value_size);
                    batch.put(&key, &pool[off..off + a.value_size]);
                }
                db.write_and_clear(&mut batch, &wo)?;
                let before = i;
                i += n;
                if i / tick != before / tick {
                    bar.inc(i - before);
                }
            }
            Ok(())
        }
        Workload::ReadRandom => {
            let mut hits = 0;
            for i in 0..ops {
                make_key(rng.random_range(0..key_range), a.key_size, &mut key);
                if db.get(&key)?.is_some() {
                    hits += 1;
                }
                if (i + 1) % tick == 0 {
                    bar.inc(tick);
                }
            }
            found.fetch_add(hits, Ordering::Relaxed);
            Ok(())
        }
        Workload::ReadSeq => {
            let mut n = 0;
            for kv in db.iterator(IteratorMode::Start).take(ops as usize) {
                kv?;
                n += 1;
                if n % tick == 0 {
                    bar.inc(tick);
                }
            }
            Ok(())
        }
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
}
