//! `lsm-demo bench`: db_bench's workloads, flags and result line.

use std::path::PathBuf;
use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use lsm_demo::{
    DB, IteratorMode, MAX_KEY_LEN, MAX_VALUE_LEN, MemtableKind, Options, WriteBatch, WriteOptions,
};
use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};
use serde::Serialize;

/// db_bench's flags that `lsm-demo bench` understands, with db_bench's names,
/// meanings and defaults.
#[derive(Debug, Clone, clap::Args)]
#[command(rename_all = "snake_case")]
#[command(about = "Run db_bench's workloads on the engine (same flags, same result line)")]
pub struct BenchArgs {
    /// Comma-separated benchmarks: fillseq, fillrandom, overwrite, fillsync,
    /// readrandom, readseq. Without any flag, a default suite runs.
    #[arg(long)]
    pub benchmarks: Option<String>,
    /// Number of keys (and of writes per thread).
    #[arg(long, default_value_t = 1_000_000)]
    pub num: u64,
    /// Reads per thread for the read benchmarks (-1: num).
    #[arg(long, default_value_t = -1, allow_hyphen_values = true)]
    pub reads: i64,
    /// Concurrent threads; each runs the full count.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Bytes per value.
    #[arg(long, default_value_t = 100)]
    pub value_size: usize,
    /// Bytes per key (at least 8).
    #[arg(long, default_value_t = 16)]
    pub key_size: usize,
    /// Writes per batch.
    #[arg(long, default_value_t = 1)]
    pub batch_size: usize,
    /// skip_list or vector.
    #[arg(long, default_value = "skip_list")]
    pub memtablerep: String,
    /// Parallel memtable inserts by the members of a write group.
    #[arg(long, default_value = "true", value_parser = parse_flag_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub allow_concurrent_memtable_write: bool,
    /// RocksDB's unordered_write.
    #[arg(long, default_value = "false", value_parser = parse_flag_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub unordered_write: bool,
    /// Ours, not db_bench's: a sync group's leader waits (at most half an
    /// fdatasync) for the writers in flight before it syncs.
    #[arg(long, default_value = "true", value_parser = parse_flag_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub group_commit_wait: bool,
    /// Skip the write-ahead log.
    #[arg(long, default_value = "false", value_parser = parse_flag_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub disable_wal: bool,
    /// fdatasync the log on every write.
    #[arg(long, default_value = "false", value_parser = parse_flag_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub sync: bool,
    /// Memtable size before a flush, in bytes.
    #[arg(long, default_value_t = 64 << 20)]
    pub write_buffer_size: usize,
    /// Memtables kept before writes stall.
    #[arg(long, default_value_t = 2)]
    pub max_write_buffer_number: usize,
    /// How long a writer waiting for its group may yield its time slice
    /// before it sleeps, in microseconds; 0: no yielding.
    #[arg(long, default_value_t = 100)]
    pub write_thread_max_yield_usec: u32,
    /// A yield that takes this long (microseconds) means another thread
    /// ran; three of them end the yielding.
    #[arg(long, default_value_t = 3)]
    pub write_thread_slow_yield_usec: u32,
    /// Yield only while past waits say yielding tends to succeed.
    #[arg(long, default_value = "true", value_parser = parse_flag_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub enable_write_thread_adaptive_yield: bool,
    /// Ours, not db_bench's: busy-wait hints a writer that finds a group
    /// running may spend watching for the queue to empty, to lead a group
    /// of its own instead of queueing (0: always queue, as RocksDB does).
    #[arg(long, default_value_t = 256)]
    pub write_group_barge_spins: u32,
    /// Random seed; 0 picks one from the clock and prints it.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Database directory (default: a fresh temporary directory).
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Run the benchmarks on the database as it is, without wiping it first.
    #[arg(long, default_value = "false", value_parser = parse_flag_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub use_existing_db: bool,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Compaction and write-stall flags.
    #[command(flatten)]
    pub compaction: super::levels::CompactionArgs,
    /// Hide the progress bars.
    #[arg(long, default_value = "false", value_parser = parse_flag_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub quiet: bool,
}

/// db_bench writes booleans as 0/1; accept those and true/false.
pub(super) fn parse_flag_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(format!("expected 0, 1, true or false, got {s:?}")),
    }
}

/// db_bench flags that exist in RocksDB but not here: named in the error so
/// a script that passes them learns which one.
pub const ROCKSDB_ONLY_FLAGS: &[&str] = &[
    "compression_type",
    "disable_auto_compactions",
    "min_write_buffer_number_to_merge",
    "enable_pipelined_write",
    "statistics",
    "cache_size",
    "bloom_bits",
    "compression_ratio",
    "histogram",
    "duration",
    "writes",
    "max_background_compactions",
    "max_background_flushes",
    "num_levels",
    "arena_block_size",
    "use_direct_reads",
    "use_direct_io_for_flush_and_compaction",
    "mmap_read",
    "mmap_write",
    "open_files",
    "bytes_per_sync",
    "wal_bytes_per_sync",
    "keys_per_prefix",
    "prefix_size",
    "key_id_range",
    "perf_level",
    "stats_interval",
    "report_interval_seconds",
];

/// Checks the raw arguments for db_bench flags we lack, before clap sees them.
pub fn reject_rocksdb_only_flags(args: &[String]) -> Result<(), String> {
    for a in args {
        let Some(name) = a.strip_prefix("--") else {
            continue;
        };
        let name = name.split('=').next().unwrap_or(name);
        if ROCKSDB_ONLY_FLAGS.contains(&name) {
            return Err(format!(
                "--{name} is a RocksDB db_bench flag that lsm-demo does not support; remove it"
            ));
        }
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Workload {
    FillSeq,
    FillRandom,
    Overwrite,
    FillSync,
    ReadRandom,
    ReadSeq,
}

impl Workload {
    fn parse(s: &str) -> Result<Workload, String> {
        Ok(match s {
            "fillseq" => Workload::FillSeq,
            "fillrandom" => Workload::FillRandom,
            "overwrite" => Workload::Overwrite,
            "fillsync" => Workload::FillSync,
            "readrandom" => Workload::ReadRandom,
            "readseq" => Workload::ReadSeq,
            other => {
                return Err(format!(
                    "unknown benchmark {other:?}; known: fillseq, fillrandom, overwrite, fillsync, readrandom, readseq"
                ));
            }
        })
    }

    fn name(self) -> &'static str {
        match self {
            Workload::FillSeq => "fillseq",
            Workload::FillRandom => "fillrandom",
            Workload::Overwrite => "overwrite",
            Workload::FillSync => "fillsync",
            Workload::ReadRandom => "readrandom",
            Workload::ReadSeq => "readseq",
        }
    }

    fn fresh_db(self) -> bool {
        matches!(
            self,
            Workload::FillSeq | Workload::FillRandom | Workload::FillSync
        )
    }

    fn is_write(self) -> bool {
        !matches!(self, Workload::ReadRandom | Workload::ReadSeq)
    }
}

/// One benchmark's outcome, as printed and as written to JSON.
#[derive(Debug, Clone, Serialize)]
pub struct BenchResult {
    /// db_bench's benchmark name.
    pub name: String,
    /// Threads.
    pub threads: usize,
    /// Memtable representation.
    pub memtablerep: String,
    /// Operations done by all threads.
    pub ops: u64,
    /// Wall-clock seconds from the first thread's start to the last's end.
    pub seconds: f64,
    /// Sum of per-thread elapsed microseconds divided by the operations.
    pub micros_per_op: f64,
    /// ops / seconds.
    pub ops_per_sec: f64,
    /// Key and value bytes per second, in MiB (0 for readseq counts too).
    pub mb_per_sec: f64,
    /// Reads that found their key (read benchmarks).
    pub found: Option<u64>,
    /// Mean members per write group (write benchmarks).
    pub mean_group_size: Option<f64>,
    /// Write groups formed.
    pub groups: Option<u64>,
    /// Wake-ups issued by leaders.
    pub leader_wakeups: Option<u64>,
    /// How the writers' waits for their groups ended (write benchmarks).
    pub waits: Option<WaitOutcomes>,
    /// Leaders that waited for more writers before syncing, and how many of
    /// those waits timed out.
    pub gather_waits: Option<(u64, u64)>,
    /// Memtable bytes per entry in the mutable memtable at the end.
    pub memtable_bytes_per_entry: Option<f64>,
    /// The tree at the end, with compaction counters and the write
    /// amplification since the database was opened (write benchmarks).
    pub levels: Option<super::levels::LevelReport>,
}

/// How waits for a write group ended, from the group's statistics.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct WaitOutcomes {
    /// Ended while spinning.
    pub spun: u64,
    /// Ended while yielding the time slice.
    pub yielded: u64,
    /// Slept on the futex until woken.
    pub slept: u64,
    /// Writers that barged: led a group of their own instead of queueing.
    pub barged: u64,
}

impl BenchResult {
    /// db_bench's result line.
    pub fn db_bench_line(&self) -> String {
        let mut extra = String::new();
        if self.mb_per_sec > 0.0 {
            extra = format!(" {:6.1} MB/s", self.mb_per_sec);
        }
        if let Some(found) = self.found {
            extra.push_str(&format!(" ({found} of {} found)", self.ops));
        }
        format!(
            "{:<12} : {:11.3} micros/op {} ops/sec {:.3} seconds {} operations;{}",
            self.name, self.micros_per_op, self.ops_per_sec as u64, self.seconds, self.ops, extra
        )
    }
}

/// db_bench's key: the integer big-endian in the first 8 bytes, padded
/// with '0' to `key_size`.
pub fn make_key(k: u64, key_size: usize, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&k.to_be_bytes());
    out.resize(key_size.max(8), b'0');
}

struct Config {
    args: BenchArgs,
    seed: u64,
    dir: PathBuf,
    _tmp: Option<tempfile::TempDir>,
}

/// The most bytes of keys and values one `--batch_size` batch may hold.
const MAX_BATCH_BYTES: u64 = 1 << 30;

/// Checks every flag before anything is created, naming the flag at fault.
fn check_args(args: &BenchArgs) -> Result<(), String> {
    if args.key_size < 8 || args.key_size > MAX_KEY_LEN {
        return Err(format!(
            "--key_size={} is outside [8, {MAX_KEY_LEN}]",
            args.key_size
        ));
    }
    if args.value_size > MAX_VALUE_LEN {
        return Err(format!(
            "--value_size={} is above the engine's limit of {MAX_VALUE_LEN}",
            args.value_size
        ));
    }
    if args.threads == 0 || args.threads > 1024 {
        return Err(format!("--threads={} is outside [1, 1024]", args.threads));
    }
    if args.batch_size == 0 {
        return Err("--batch_size must be at least 1".into());
    }
    let batch_bytes =
        (args.batch_size as u64).saturating_mul(args.key_size as u64 + args.value_size as u64);
    if batch_bytes > MAX_BATCH_BYTES {
        return Err(format!(
            "--batch_size={} of {}-byte keys and {}-byte values makes batches above 1 GiB",
            args.batch_size, args.key_size, args.value_size
        ));
    }
    if args.num == 0 {
        return Err("--num must be at least 1".into());
    }
    if args.reads < -1 {
        return Err(format!(
            "--reads={} is below -1 (-1 means --num)",
            args.reads
        ));
    }
    let syncs = args.sync
        || args
            .benchmarks
            .as_deref()
            .is_some_and(|b| b.split(',').any(|w| w == "fillsync"));
    if args.disable_wal && syncs {
        return Err("--disable_wal=1 with --sync=1 or fillsync: a sync write needs the WAL".into());
    }
    // The engine's own checks (write_buffer_size, max_write_buffer_number,
    // unordered_write), before anything is created.
    db_options(args, &args.memtablerep)?
        .validate()
        .map_err(|e| e.to_string())
}

/// Runs `bench`; returns the results.
pub fn run(args: BenchArgs, default_suite: bool) -> Result<Vec<BenchResult>, String> {
    check_args(&args)?;
    if let Some(d) = &args.db {
        super::check_db_dir(d, "bench")?;
    }
    let seed = if args.seed == 0 {
        let s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(1);
        println!("Set seed to {s} because --seed was 0");
        s
    } else {
        args.seed
    };
    let (dir, tmp) = match &args.db {
        Some(d) => (d.clone(), None),
        None => {
            let t = tempfile::Builder::new()
                .prefix("lsm-demo-bench")
                .tempdir()
                .map_err(|e| format!("creating a temporary directory: {e}"))?;
            (t.path().join("db"), Some(t))
        }
    };
    let cfg = Config {
        args,
        seed,
        dir,
        _tmp: tmp,
    };
    let plan: Vec<Row> = if default_suite {
        let row = |w, threads, rep: &str, num| Row {
            w,
            threads,
            rep: rep.to_string(),
            num,
        };
        let rep = cfg.args.memtablerep.clone();
        let mut p: Vec<Row> = [
            Workload::FillSeq,
            Workload::FillRandom,
            Workload::Overwrite,
            Workload::ReadRandom,
            Workload::ReadSeq,
        ]
        .into_iter()
        .map(|w| row(w, 1, &rep, cfg.args.num))
        .collect();
        // The thread rows split the same total work, as vs-rocksdb.sh does.
        for rep in ["skip_list", "vector"] {
            for t in [1, 2, 8] {
                p.push(row(Workload::FillRandom, t, rep, cfg.args.num / t as u64));
            }
        }
        p
    } else {
        let list = cfg
            .args
            .benchmarks
            .clone()
            .unwrap_or_else(|| "fillrandom".into());
        list.split(',')
            .filter(|s| !s.is_empty())
            .map(|s| {
                Workload::parse(s).map(|w| Row {
                    w,
                    threads: cfg.args.threads,
                    rep: cfg.args.memtablerep.clone(),
                    num: cfg.args.num,
                })
            })
            .collect::<Result<_, _>>()?
    };
    print_header(&cfg);
    let mut results = Vec::new();
    let mut db: Option<(DB, String)> = None;
    // Keys and values written since the database was opened.
    let mut user_bytes: u64 = 0;
    for row in plan {
        let wipe = row.w.fresh_db() && !cfg.args.use_existing_db;
        if wipe || db.as_ref().is_none_or(|(_, rep)| *rep != row.rep) {
            drop(db.take());
            if wipe {
                DB::destroy(&lsm_demo::Options::default(), &cfg.dir)
                    .map_err(|e| format!("wiping {}: {e}", cfg.dir.display()))?;
            }
            db = Some((open_db(&cfg, &row.rep)?, row.rep.clone()));
            user_bytes = 0;
        }
        let open = &db.as_ref().expect("opened").0;
        let mut r = run_one(&cfg, open, &row)?;
        println!("{}", r.db_bench_line());
        if row.w.is_write() {
            user_bytes += r.ops * (cfg.args.key_size + cfg.args.value_size) as u64;
            r.levels = Some(super::levels::LevelReport::new(&open.stats(), user_bytes));
        }
        if let (Some(g), Some(m)) = (r.mean_group_size, r.groups) {
            println!(
                "  write group: {g:.2} members per group over {m} groups, {} leader wake-ups; memtable {:.1} bytes/entry",
                r.leader_wakeups.unwrap_or(0),
                r.memtable_bytes_per_entry.unwrap_or(0.0)
            );
        }
        if let Some(w) = r.waits {
            println!(
                "  waits: {} ended spinning, {} yielding, {} asleep; {} writers barged",
                w.spun, w.yielded, w.slept, w.barged
            );
        }
        if let Some((waits, timeouts)) = r.gather_waits {
            println!(
                "  group commit wait: {waits} leaders waited for more writers, {timeouts} until the window ended"
            );
        }
        if let Some(levels) = &r.levels {
            levels.print();
        }
        results.push(r);
    }
    drop(db);
    if default_suite || results.len() > 1 {
        print_summary(&results);
    }
    if let Some(path) = &cfg.args.json {
        let text = serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    Ok(results)
}

/// One benchmark to run.
struct Row {
    w: Workload,
    threads: usize,
    rep: String,
    /// Keys (and writes per thread) for this row.
    num: u64,
}

fn memtable_kind(rep: &str) -> Result<MemtableKind, String> {
    match rep {
        "skip_list" => Ok(MemtableKind::SkipList),
        "vector" => Ok(MemtableKind::Vector),
        other => Err(format!(
            "--memtablerep={other} is not supported; use skip_list or vector"
        )),
    }
}

fn db_options(args: &BenchArgs, rep: &str) -> Result<Options, String> {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(args.write_buffer_size);
    o.set_max_write_buffer_number(args.max_write_buffer_number);
    o.set_memtable_kind(memtable_kind(rep)?);
    o.set_allow_concurrent_memtable_write(args.allow_concurrent_memtable_write);
    o.set_unordered_write(args.unordered_write);
    o.set_group_commit_wait(args.group_commit_wait);
    args.compaction.apply(&mut o);
    o.set_write_group_options(
        write_group::Options::new()
            .with_max_yield_usec(args.write_thread_max_yield_usec)
            .with_slow_yield_usec(args.write_thread_slow_yield_usec)
            .with_adaptive_yield(args.enable_write_thread_adaptive_yield)
            .with_barge_spins(args.write_group_barge_spins),
    );
    Ok(o)
}

fn open_db(cfg: &Config, rep: &str) -> Result<DB, String> {
    let o = db_options(&cfg.args, rep)?;
    DB::open(&o, &cfg.dir).map_err(|e| format!("opening {}: {e}", cfg.dir.display()))
}

fn print_header(cfg: &Config) {
    let a = &cfg.args;
    println!("Keys:       {} bytes each", a.key_size);
    println!("Values:     {} bytes each", a.value_size);
    println!("Entries:    {}", a.num);
    println!("Memtablerep: {}", a.memtablerep);
    println!(
        "WAL:        {}{}",
        if a.disable_wal { "disabled" } else { "enabled" },
        if a.sync { ", sync" } else { "" }
    );
    println!("------------------------------------------------");
}

fn run_one(cfg: &Config, db: &DB, row: &Row) -> Result<BenchResult, String> {
    let a = &cfg.args;
    let (w, threads, rep) = (row.w, row.threads, &row.rep);
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
    let error = std::sync::Mutex::new(None::<String>);
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
        return Err(format!("{}: {e}", w.name()));
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
        memtablerep: rep.to_string(),
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
) -> Result<(), String> {
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
                db.write_and_clear(&mut batch, &wo)
                    .map_err(|e| e.to_string())?;
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
                if db.get(&key).map_err(|e| e.to_string())?.is_some() {
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
                kv.map_err(|e| e.to_string())?;
                n += 1;
                if n % tick == 0 {
                    bar.inc(tick);
                }
            }
            Ok(())
        }
    }
}

fn print_summary(results: &[BenchResult]) {
    println!();
    println!("| benchmark | threads | memtable | ops/sec | micros/op | MB/s | group size |");
    println!("|---|---:|---|---:|---:|---:|---:|");
    for r in results {
        println!(
            "| {} | {} | {} | {:.0} | {:.3} | {:.1} | {} |",
            r.name,
            r.threads,
            r.memtablerep,
            r.ops_per_sec,
            r.micros_per_op,
            r.mb_per_sec,
            r.mean_group_size
                .map(|g| format!("{g:.2}"))
                .unwrap_or_else(|| "-".into())
        );
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
    fn result_line_has_db_bench_fields() {
        let r = BenchResult {
            name: "fillrandom".into(),
            threads: 1,
            memtablerep: "skip_list".into(),
            ops: 1_000_000,
            seconds: 5.65,
            micros_per_op: 5.65,
            ops_per_sec: 176_980.5,
            mb_per_sec: 19.6,
            found: None,
            mean_group_size: None,
            groups: None,
            leader_wakeups: None,
            waits: None,
            gather_waits: None,
            memtable_bytes_per_entry: None,
            levels: None,
        };
        assert_eq!(
            r.db_bench_line(),
            "fillrandom   :       5.650 micros/op 176980 ops/sec 5.650 seconds 1000000 operations;   19.6 MB/s"
        );
    }

    fn bench_args(flags: &[&str]) -> BenchArgs {
        #[derive(Debug, clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: BenchArgs,
        }
        use clap::Parser;
        Cli::try_parse_from(["bench"].iter().chain(flags))
            .unwrap()
            .args
    }

    #[test]
    fn out_of_range_flags_are_named() {
        for (flags, named) in [
            (&["--key_size=4"][..], "--key_size=4"),
            (&["--key_size=2000000"], "--key_size=2000000"),
            (&["--value_size=100000000"], "--value_size=100000000"),
            (&["--threads=0"], "--threads=0"),
            (&["--threads=2000"], "--threads=2000"),
            (&["--batch_size=0"], "--batch_size"),
            (&["--batch_size=100000000"], "--batch_size=100000000"),
            (&["--num=0"], "--num"),
            (&["--reads=-2"], "--reads=-2"),
            (&["--memtablerep=hash"], "--memtablerep=hash"),
            (&["--disable_wal=1", "--sync=1"], "--disable_wal"),
            (
                &["--disable_wal=1", "--benchmarks=fillseq,fillsync"],
                "--disable_wal",
            ),
            (&["--write_buffer_size=1"], "write_buffer_size 1 "),
            (
                &["--max_write_buffer_number=1"],
                "max_write_buffer_number 1 ",
            ),
            (
                &["--unordered_write=1", "--allow_concurrent_memtable_write=0"],
                "unordered_write",
            ),
        ] {
            let e = check_args(&bench_args(flags)).unwrap_err();
            assert!(e.contains(named), "{flags:?}: {e}");
            // `run` refuses before creating anything.
            let mut a = bench_args(flags);
            a.db = Some(PathBuf::from("/nonexistent/bench-db"));
            assert_eq!(run(a, false).unwrap_err(), e);
        }
        assert!(check_args(&bench_args(&[])).is_ok());
        assert!(check_args(&bench_args(&["--reads=-1", "--disable_wal=1"])).is_ok());
        let bad_bool = bench_args_err(&["--sync=yes"]);
        assert!(
            bad_bool.contains("expected 0, 1, true or false"),
            "{bad_bool}"
        );
    }

    fn bench_args_err(flags: &[&str]) -> String {
        #[derive(Debug, clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: BenchArgs,
        }
        use clap::Parser;
        Cli::try_parse_from(["bench"].iter().chain(flags))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn bench_deletes_only_a_database_of_its_own() {
        let root = tempfile::tempdir().unwrap();
        let foreign = root.path().join("photos");
        std::fs::create_dir(&foreign).unwrap();
        std::fs::write(foreign.join("cat.jpg"), b"meow").unwrap();
        let mut a = bench_args(&["--benchmarks=fillseq", "--num=10"]);
        a.db = Some(foreign.clone());
        let err = run(a.clone(), false).unwrap_err();
        assert!(
            err.contains("bench only deletes a database of its own"),
            "{err}"
        );
        assert_eq!(std::fs::read(foreign.join("cat.jpg")).unwrap(), b"meow");
        // A missing directory, then the database bench made there, then
        // that database with a file of the user's beside it.
        let ours = root.path().join("db");
        a.db = Some(ours.clone());
        run(a.clone(), false).unwrap();
        std::fs::write(ours.join("notes.txt"), b"mine").unwrap();
        run(a, false).unwrap();
        assert_eq!(std::fs::read(ours.join("notes.txt")).unwrap(), b"mine");
    }

    #[test]
    fn rocksdb_only_flags_are_named() {
        let e = reject_rocksdb_only_flags(&["--compression_type=none".into()]).unwrap_err();
        assert!(e.contains("--compression_type"));
        assert!(reject_rocksdb_only_flags(&["--num=5".into()]).is_ok());
    }

    #[test]
    fn write_thread_wait_flags_are_taken() {
        let flags = [
            "--write_thread_max_yield_usec=0",
            "--write_thread_slow_yield_usec=7",
            "--enable_write_thread_adaptive_yield=0",
            "--write_group_barge_spins=0",
        ];
        let owned: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        assert!(reject_rocksdb_only_flags(&owned).is_ok());
        let a = bench_args(&flags);
        assert_eq!(a.write_thread_max_yield_usec, 0);
        assert_eq!(a.write_thread_slow_yield_usec, 7);
        assert!(!a.enable_write_thread_adaptive_yield);
        assert_eq!(a.write_group_barge_spins, 0);
        // db_bench's defaults otherwise (RocksDB's: 100 µs, 3 µs, adaptive).
        let d = bench_args(&[]);
        assert_eq!(d.write_thread_max_yield_usec, 100);
        assert_eq!(d.write_thread_slow_yield_usec, 3);
        assert!(d.enable_write_thread_adaptive_yield);
        assert_eq!(d.write_group_barge_spins, 256);
        // They reach the write group, which sync writers gather in.
        let o = db_options(&a, "skip_list").unwrap();
        let wg = o.write_group_options();
        assert_eq!(
            (
                wg.max_yield_usec(),
                wg.slow_yield_usec(),
                wg.adaptive_yield(),
                wg.barge_spins()
            ),
            (0, 7, false, 0)
        );
    }
}
