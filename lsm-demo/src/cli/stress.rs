//! `lsm-demo stress`: many threads of random operations checked against an
//! expected state kept in a file beside the database (see `expected.rs`).
//! `crashtest.rs` kills it at random and verifies what survived.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use lsm_demo::{DB, IteratorMode, Options, WriteBatch, WriteOptions};
use rand::{Rng, SeedableRng};

use super::expected::{Expected, key_bytes, value_bytes, value_id, verify};
use super::{Error, MemtableRep, ReplayRng};

/// Flags of `lsm-demo stress`.
#[derive(Debug, Clone, clap::Args)]
#[command(rename_all = "snake_case")]
pub struct StressArgs {
    /// Database directory.
    #[arg(long)]
    pub db: PathBuf,
    /// Expected-state file (default: the database path with `.expected`);
    /// refused when it exists and the database does not.
    #[arg(long)]
    pub expected: Option<PathBuf>,
    /// Worker threads.
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// Distinct keys.
    #[arg(long, default_value_t = 10_000)]
    pub keys: u32,
    /// Operations per thread (0: until --duration ends).
    #[arg(long, default_value_t = 10_000)]
    pub ops: u64,
    /// Seconds to run when --ops is 0.
    #[arg(long, default_value_t = 10)]
    pub duration: u64,
    /// Random seed (0: from the clock); printed for replay.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Sync every write (1) or none (0).
    #[arg(long, default_value = "1", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub sync: bool,
    /// Memtable representation.
    #[arg(long, value_enum, default_value_t = MemtableRep::SkipList)]
    pub memtablerep: MemtableRep,
    /// Small memtables, so flushes and compactions run often.
    #[arg(long, default_value_t = 256 << 10)]
    pub write_buffer_size: usize,
    /// Copy log records into a memory map of the log (db_bench's name).
    #[arg(long, default_value = "0", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub mmap_write: bool,
    /// Ours: each writer writes its own log record with a pwrite (0: one
    /// thread at a time appends the records handed to it).
    #[arg(long, default_value = "1", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub allow_concurrent_log_write: bool,
    /// Ours: the stripe files each log's writers write into (0: the log
    /// file itself; see Options::set_wal_stripes).
    #[arg(long, default_value_t = 8)]
    pub wal_stripes: usize,
    /// Print a `progress:` line (acknowledged writes, operations) every
    /// this many milliseconds (0: never). `crashtest` reads it.
    #[arg(long, default_value_t = 0)]
    pub report_every_ms: u64,
}

/// Most `--threads` of `stress` and `crashtest`.
pub const MAX_THREADS: usize = 1024;
/// Most `--keys`: the expected state holds 8 bytes and a lock per key.
pub const MAX_KEYS: u32 = 10_000_000;

pub(crate) fn check_workload(threads: usize, keys: u32) -> Result<(), Error> {
    if threads == 0 || threads > MAX_THREADS {
        return Err(Error::usage(format!(
            "--threads={threads} is outside [1, {MAX_THREADS}]"
        )));
    }
    if keys == 0 || keys > MAX_KEYS {
        return Err(Error::usage(format!(
            "--keys={keys} is outside [1, {MAX_KEYS}]"
        )));
    }
    Ok(())
}

pub(crate) fn parse_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(format!("expected 0, 1, true or false, got {s:?}")),
    }
}

pub(crate) fn options(
    memtablerep: MemtableRep,
    write_buffer_size: usize,
    mmap_write: bool,
    concurrent_log_write: bool,
    wal_stripes: usize,
) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true)
        .set_allow_mmap_writes(mmap_write)
        .set_allow_concurrent_log_write(concurrent_log_write)
        .set_wal_stripes(wal_stripes);
    o.set_write_buffer_size(write_buffer_size);
    // Up to three frozen memtables: flushes can fall behind, so recovery
    // meets several logs that are still needed.
    o.set_max_write_buffer_number(4);
    o.set_level_zero_file_num_compaction_trigger(3);
    // Small levels of small files and two compaction threads: a megabyte
    // spreads over several levels, and crashes land while compactions run
    // side by side.
    o.set_max_bytes_for_level_base(write_buffer_size as u64);
    o.set_max_bytes_for_level_multiplier(4.0);
    o.set_target_file_size_base((write_buffer_size as u64 / 4).max(64 << 10));
    o.set_max_background_jobs(3);
    o.set_memtable_kind(memtablerep.kind());
    o
}

pub(crate) fn expected_path(db: &Path, explicit: &Option<PathBuf>) -> PathBuf {
    explicit.clone().unwrap_or_else(|| {
        let mut p = db.as_os_str().to_owned();
        p.push(".expected");
        PathBuf::from(p)
    })
}

/// `lsm-demo stress`: verifies what the last run left, then runs the workload.
pub fn stress(a: StressArgs) -> Result<(), Error> {
    check_workload(a.threads, a.keys)?;
    let opts = options(
        a.memtablerep,
        a.write_buffer_size,
        a.mmap_write,
        a.allow_concurrent_log_write,
        a.wal_stripes,
    );
    opts.validate().map_err(|e| Error::usage(e.to_string()))?;
    let expected = expected_path(&a.db, &a.expected);
    if !a.db.exists() && expected.exists() {
        // Checked against it, the new database would lose every key.
        return Err(Error::usage(format!(
            "{} does not exist, but the expected state {} does: it belongs to another \
             database (remove it, or name another with --expected)",
            a.db.display(),
            expected.display()
        )));
    }
    let db = DB::open(&opts, &a.db)
        .map_err(|e| Error::engine(format!("opening {}", a.db.display()), e))?;
    let seed = if a.seed == 0 { clock_seed() } else { a.seed };
    println!("stress: seed {seed} (replay with --seed={seed})");
    let exp = Expected::open(&expected, a.keys)
        .map_err(|e| Error::io("opening the expected state", e))?;
    let v = verify(&db, &exp, a.keys)?;
    println!(
        "stress: verified {} keys on open ({} pending resolved, {} mismatches)",
        v.keys, v.pending, v.mismatches
    );
    if v.mismatches > 0 {
        return Err(Error::Verification(format!(
            "{} keys differ from the expected state",
            v.mismatches
        )));
    }
    let locks: Vec<Mutex<()>> = (0..a.keys).map(|_| Mutex::new(())).collect();
    let next_id = AtomicU64::new(1 + (seed % 1000) * 1_000_000);
    let ops_done = AtomicU64::new(0);
    let writes_acked = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let failure = Mutex::new(None::<Error>);
    let deadline = Instant::now() + Duration::from_secs(a.duration);
    let workers_done = AtomicU64::new(0);
    std::thread::scope(|s| {
        if a.report_every_ms > 0 {
            let (ops_done, writes_acked, workers_done) = (&ops_done, &writes_acked, &workers_done);
            let every = Duration::from_millis(a.report_every_ms);
            let threads = a.threads as u64;
            s.spawn(move || {
                // Relaxed, here and in the workers: progress counts and a stop
                // flag; nothing is published through them, and the scope's join
                // orders the final counts.
                while workers_done.load(Ordering::Relaxed) < threads {
                    std::thread::sleep(every);
                    println!(
                        "progress: {} acknowledged writes, {} operations",
                        writes_acked.load(Ordering::Relaxed),
                        ops_done.load(Ordering::Relaxed)
                    );
                }
            });
        }
        for t in 0..a.threads {
            let (db, exp, locks, next_id, ops_done, stop, failure, a) =
                (&db, &exp, &locks, &next_id, &ops_done, &stop, &failure, &a);
            let (writes_acked, workers_done) = (&writes_acked, &workers_done);
            s.spawn(move || {
                let mut rng = ReplayRng::seed_from_u64(seed.wrapping_add(t as u64 * 7919));
                let mut wo = WriteOptions::default();
                wo.set_sync(a.sync);
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    if a.ops > 0 && i >= a.ops || a.ops == 0 && Instant::now() >= deadline {
                        break;
                    }
                    i += 1;
                    match one_op(db, exp, locks, next_id, &wo, a.keys, &mut rng) {
                        Ok(wrote) => {
                            writes_acked.fetch_add(wrote as u64, Ordering::Relaxed);
                        }
                        Err(e) => {
                            *failure.lock().expect("lock") = Some(e);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    ops_done.fetch_add(1, Ordering::Relaxed);
                }
                workers_done.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    if let Some(e) = failure.into_inner().expect("lock") {
        return Err(e);
    }
    let v = verify(&db, &exp, a.keys)?;
    println!(
        "stress: {} operations ({} acknowledged writes), final verification of {} keys: {} mismatches",
        ops_done.load(Ordering::Relaxed),
        writes_acked.load(Ordering::Relaxed),
        v.keys,
        v.mismatches
    );
    if v.mismatches > 0 {
        return Err(Error::Verification(format!(
            "{} keys differ from the expected state",
            v.mismatches
        )));
    }
    Ok(())
}

fn new_id(next_id: &AtomicU64) -> u32 {
    // Ids wrap within u32, skipping 0 (absent) and u32::MAX (pending delete).
    // Relaxed: only the ids' uniqueness matters.
    let id = (next_id.fetch_add(1, Ordering::Relaxed) % (u32::MAX as u64 - 2)) as u32 + 1;
    id.min(u32::MAX - 1)
}

pub(crate) fn one_op(
    db: &DB,
    exp: &Expected,
    locks: &[Mutex<()>],
    next_id: &AtomicU64,
    wo: &WriteOptions,
    keys: u32,
    rng: &mut ReplayRng,
) -> Result<bool, Error> {
    let k = rng.random_range(0..keys);
    let mut wrote = false;
    match rng.random_range(0..100) {
        // Put.
        0..45 => {
            let _g = locks[k as usize].lock().expect("key lock");
            let id = new_id(next_id);
            let (cur, _) = exp.read(k);
            exp.write(k, cur, id);
            db.put_opt(key_bytes(k), value_bytes(k, id), wo)?;
            exp.write(k, id, 0);
            wrote = true;
        }
        // Delete (pending id u32::MAX stands for "absent").
        45..52 => {
            let _g = locks[k as usize].lock().expect("key lock");
            let (cur, _) = exp.read(k);
            exp.write(k, cur, u32::MAX);
            db.delete_opt(key_bytes(k), wo)?;
            exp.write(k, 0, 0);
            wrote = true;
        }
        // A range deletion of up to 8 consecutive keys (keys are
        // fixed-width, so the range holds exactly those), locked in order.
        52..55 => {
            let end = k.saturating_add(rng.random_range(1..=8)).min(keys);
            let _guards: Vec<_> = (k..end)
                .map(|k| locks[k as usize].lock().expect("key lock"))
                .collect();
            for k in k..end {
                let (cur, _) = exp.read(k);
                exp.write(k, cur, u32::MAX);
            }
            db.delete_range_opt(key_bytes(k), key_bytes(end), wo)?;
            for k in k..end {
                exp.write(k, 0, 0);
            }
            wrote = true;
        }
        // A batch over a few distinct keys, locked in order.
        55..65 => {
            let mut ks: Vec<u32> = (0..rng.random_range(2..6))
                .map(|_| rng.random_range(0..keys))
                .collect();
            ks.sort_unstable();
            ks.dedup();
            let _guards: Vec<_> = ks
                .iter()
                .map(|&k| locks[k as usize].lock().expect("key lock"))
                .collect();
            let mut batch = WriteBatch::new();
            let mut planned = Vec::new();
            for &k in &ks {
                let (cur, _) = exp.read(k);
                if rng.random_range(0..4) == 0 {
                    exp.write(k, cur, u32::MAX);
                    batch.delete(key_bytes(k));
                    planned.push((k, 0));
                } else {
                    let id = new_id(next_id);
                    exp.write(k, cur, id);
                    batch.put(key_bytes(k), value_bytes(k, id));
                    planned.push((k, id));
                }
            }
            db.write_opt(batch, wo)?;
            for (k, id) in planned {
                exp.write(k, id, 0);
            }
            wrote = true;
        }
        // A read checked against the model.
        65..90 => {
            let _g = locks[k as usize].lock().expect("key lock");
            let (cur, _) = exp.read(k);
            let got = db.get(key_bytes(k))?;
            let id = match &got {
                None => Some(0),
                Some(v) => value_id(k, v),
            };
            if id != Some(cur) {
                return Err(Error::Verification(format!(
                    "read of key {k}: got {id:?}, expected {cur}"
                )));
            }
        }
        // A short scan: every value must belong to its key.
        90..96 => {
            for kv in db
                .iterator(IteratorMode::From(
                    &key_bytes(k),
                    lsm_demo::Direction::Forward,
                ))
                .take(20)
            {
                let (key, v) = kv?;
                let kk: u32 = std::str::from_utf8(&key[3..])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| {
                        Error::Verification(format!(
                            "scan met a key that was never written: {key:?}"
                        ))
                    })?;
                if value_id(kk, &v).is_none() {
                    return Err(Error::Verification(format!(
                        "scan: value of key {kk} is damaged"
                    )));
                }
            }
        }
        // A snapshot reads the same value twice while writers run.
        _ => {
            let snap = db.snapshot();
            let a = snap.get(key_bytes(k))?;
            std::thread::yield_now();
            let b = snap.get(key_bytes(k))?;
            if a != b {
                return Err(Error::Verification(format!(
                    "snapshot read of key {k} changed"
                )));
            }
        }
    }
    Ok(wrote)
}

pub(crate) fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
        | 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::parse_flags;

    fn stress_args(flags: &[&str]) -> StressArgs {
        let db = ["--db=/nonexistent/stress-db"];
        parse_flags(&[&db[..], flags].concat()).unwrap()
    }

    #[test]
    fn out_of_range_stress_flags_are_named() {
        for (flag, named) in [
            ("--threads=0", "--threads=0"),
            ("--threads=5000", "--threads=5000"),
            ("--keys=0", "--keys=0"),
            ("--keys=4000000000", "--keys=4000000000"),
            ("--write_buffer_size=10", "write_buffer_size 10"),
        ] {
            let e = stress(stress_args(&[flag])).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{flag}: {e}");
            assert!(e.to_string().contains(named), "{flag}: {e}");
        }
        // Nothing was created for a refused run.
        assert!(!Path::new("/nonexistent/stress-db").exists());
    }

    #[test]
    fn memtablerep_is_one_of_db_bench_names() {
        assert_eq!(stress_args(&[]).memtablerep, MemtableRep::SkipList);
        let v = stress_args(&["--memtablerep=vector"]);
        assert_eq!(v.memtablerep, MemtableRep::Vector);
        let e = parse_flags::<StressArgs>(&["--db=x", "--memtablerep=hash"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid value 'hash' for '--memtablerep"), "{e}");
    }
}
