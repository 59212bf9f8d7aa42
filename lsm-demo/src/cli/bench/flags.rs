//! `lsm-demo bench`'s flags, with db_bench's names, meanings and defaults,
//! and their checks.

use std::path::PathBuf;

use lsm_demo::{MAX_KEY_LEN, MAX_VALUE_LEN, Options};

use crate::cli::{Error, MemtableRep};

/// db_bench's flags that `lsm-demo bench` understands, with db_bench's names,
/// meanings and defaults.
#[derive(Debug, Clone, clap::Args, serde::Serialize)]
#[command(rename_all = "snake_case")]
#[command(about = "Run db_bench's workloads on the engine (same flags, same result line)")]
pub struct BenchArgs {
    /// Comma-separated benchmarks: fillseq, fillbatch, fillrandom,
    /// overwrite, fillsync, readrandom, multireadrandom, readseq,
    /// readreverse, seekrandom, readwhilewriting, readrandomwriterandom,
    /// updaterandom, deleterandom. Without any flag, a default suite runs.
    #[arg(long)]
    pub benchmarks: Option<String>,
    /// Number of keys (and of writes per thread).
    #[arg(long, default_value_t = 1_000_000)]
    pub num: u64,
    /// Reads per thread for the read benchmarks, and operations per thread
    /// for readrandomwriterandom and updaterandom (-1: num).
    #[arg(long, default_value_t = -1, allow_hyphen_values = true)]
    pub reads: i64,
    /// Deletes per thread for deleterandom (-1: num).
    #[arg(long, default_value_t = -1, allow_hyphen_values = true)]
    pub deletes: i64,
    /// Seconds each thread runs the benchmarks of random keys for
    /// (fillrandom, overwrite, fillsync, readrandom, multireadrandom,
    /// seekrandom, readwhilewriting's readers, readrandomwriterandom,
    /// updaterandom, deleterandom), however many operations that takes;
    /// 0: --num, --reads and --deletes set the counts.
    #[arg(long, default_value_t = 0)]
    pub duration: u64,
    /// With --duration, the operations a thread does between looks at the
    /// clock.
    #[arg(long, default_value_t = 1000)]
    pub ops_between_duration_checks: u64,
    /// Concurrent threads; each runs the full count. readwhilewriting runs
    /// this many readers and one writer more.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Bytes per value.
    #[arg(long, default_value_t = 100)]
    pub value_size: usize,
    /// Bytes per key (at least 8).
    #[arg(long, default_value_t = 16)]
    pub key_size: usize,
    /// Writes per batch (fills, deleterandom) and keys per multireadrandom
    /// lookup.
    #[arg(long, default_value_t = 1)]
    pub batch_size: usize,
    /// Percentage of reads among readrandomwriterandom's operations.
    #[arg(long, default_value_t = 90)]
    pub readwritepercent: u32,
    /// Next() calls after each seek of seekrandom.
    #[arg(long, default_value_t = 0)]
    pub seek_nexts: u32,
    /// multireadrandom through `batched_multi_get` (lookups in key order)
    /// instead of `multi_get`.
    #[arg(long, default_value = "false", value_parser = parse_flag_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub multiread_batched: bool,
    /// How much each thread measures of where its operations' time goes
    /// (RocksDB 7.8.3's PerfLevel): 0 or 1 nothing, 2 counts, 3 to 5 counts
    /// and times. From 2, the threads' counters, summed, follow the result
    /// (`perf context:`; `perf_context` in --json).
    #[arg(long, default_value_t = 1)]
    pub perf_level: u8,
    /// Print a histogram of the operations' times, in db_bench's layout.
    #[arg(long, default_value = "false", value_parser = parse_flag_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub histogram: bool,
    /// Memtable representation.
    #[arg(long, value_enum, default_value_t = MemtableRep::SkipList)]
    pub memtablerep: MemtableRep,
    /// Memtable inserts by many writers at once (off: one at a time).
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
    /// Copy log records into a memory map of the log (RocksDB's
    /// allow_mmap_writes) instead of writing each.
    #[arg(long, default_value = "false", value_parser = parse_flag_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub mmap_write: bool,
    /// Ours, not db_bench's: each writer writes its own log record with a
    /// pwrite, beside the others, rather than one thread at a time
    /// appending every record handed to it.
    #[arg(long, default_value = "true", value_parser = parse_flag_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub allow_concurrent_log_write: bool,
    /// Ours: the stripe files each log's writers write into (0: the log
    /// file itself), so that they do not queue on one file in the kernel.
    #[arg(long, default_value_t = 8)]
    pub wal_stripes: usize,
    /// Start writing the log back every this many bytes (0: never).
    #[arg(long, default_value_t = 1 << 20)]
    pub wal_bytes_per_sync: u64,
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
    /// Also write the results as JSON to this file (`-`: standard output,
    /// the text then going to standard error), with the flags, the seed,
    /// the program's version and commit, and the machine.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Compaction and write-stall flags.
    #[command(flatten)]
    pub compaction: crate::cli::levels::CompactionArgs,
    /// Hide the progress bars (hidden too when standard output is not a
    /// terminal).
    #[arg(long, default_value = "false", value_parser = parse_flag_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub quiet: bool,
}

/// db_bench writes booleans as 0/1; accept those and true/false.
pub(crate) fn parse_flag_bool(s: &str) -> Result<bool, String> {
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
    "writes",
    "max_background_compactions",
    "max_background_flushes",
    "num_levels",
    "arena_block_size",
    "use_direct_reads",
    "use_direct_io_for_flush_and_compaction",
    "mmap_read",
    "open_files",
    "bytes_per_sync",
    "keys_per_prefix",
    "prefix_size",
    "key_id_range",
    "stats_interval",
    "report_interval_seconds",
];

/// Checks the raw arguments for db_bench flags we lack, before clap sees them.
pub fn reject_rocksdb_only_flags(args: &[String]) -> Result<(), Error> {
    for a in args {
        let Some(name) = a.strip_prefix("--") else {
            continue;
        };
        let name = name.split('=').next().unwrap_or(name);
        if ROCKSDB_ONLY_FLAGS.contains(&name) {
            return Err(Error::usage(format!(
                "--{name} is a RocksDB db_bench flag that lsm-demo does not support; remove it"
            )));
        }
    }
    Ok(())
}

/// The most bytes of keys and values one `--batch_size` batch may hold.
const MAX_BATCH_BYTES: u64 = 1 << 30;

/// Checks every flag before anything is created, naming the flag at fault.
pub(super) fn check_args(args: &BenchArgs) -> Result<(), Error> {
    if args.key_size < 8 || args.key_size > MAX_KEY_LEN {
        return Err(Error::usage(format!(
            "--key_size={} is outside [8, {MAX_KEY_LEN}]",
            args.key_size
        )));
    }
    if args.value_size > MAX_VALUE_LEN {
        return Err(Error::usage(format!(
            "--value_size={} is above the engine's limit of {MAX_VALUE_LEN}",
            args.value_size
        )));
    }
    if args.threads == 0 || args.threads > 1024 {
        return Err(Error::usage(format!(
            "--threads={} is outside [1, 1024]",
            args.threads
        )));
    }
    if args.batch_size == 0 {
        return Err(Error::usage("--batch_size must be at least 1"));
    }
    let batch_bytes =
        (args.batch_size as u64).saturating_mul(args.key_size as u64 + args.value_size as u64);
    if batch_bytes > MAX_BATCH_BYTES {
        return Err(Error::usage(format!(
            "--batch_size={} of {}-byte keys and {}-byte values makes batches above 1 GiB",
            args.batch_size, args.key_size, args.value_size
        )));
    }
    if args.perf_level > 5 {
        return Err(Error::usage(format!(
            "--perf_level={} is above 5 (RocksDB 7.8.3's kEnableTime)",
            args.perf_level
        )));
    }
    if args.ops_between_duration_checks == 0 {
        return Err(Error::usage(
            "--ops_between_duration_checks must be at least 1",
        ));
    }
    if args.num == 0 {
        return Err(Error::usage("--num must be at least 1"));
    }
    for (flag, v) in [("reads", args.reads), ("deletes", args.deletes)] {
        if v < -1 {
            return Err(Error::usage(format!(
                "--{flag}={v} is below -1 (-1 means --num)"
            )));
        }
    }
    if args.readwritepercent > 100 {
        return Err(Error::usage(format!(
            "--readwritepercent={} is above 100",
            args.readwritepercent
        )));
    }
    let syncs = args.sync
        || args
            .benchmarks
            .as_deref()
            .is_some_and(|b| b.split(',').any(|w| w == "fillsync"));
    if args.disable_wal && syncs {
        return Err(Error::usage(
            "--disable_wal=1 with --sync=1 or fillsync: a sync write needs the WAL",
        ));
    }
    // The engine's own checks (write_buffer_size, max_write_buffer_number,
    // unordered_write), before anything is created.
    db_options(args, args.memtablerep)
        .validate()
        .map_err(|e| Error::usage(e.to_string()))
}

pub(super) fn db_options(args: &BenchArgs, rep: MemtableRep) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(args.write_buffer_size);
    o.set_max_write_buffer_number(args.max_write_buffer_number);
    o.set_memtable_kind(rep.kind());
    o.set_allow_concurrent_memtable_write(args.allow_concurrent_memtable_write);
    o.set_unordered_write(args.unordered_write);
    o.set_allow_mmap_writes(args.mmap_write);
    o.set_allow_concurrent_log_write(args.allow_concurrent_log_write)
        .set_wal_stripes(args.wal_stripes)
        .set_wal_bytes_per_sync(args.wal_bytes_per_sync);
    o.set_group_commit_wait(args.group_commit_wait);
    args.compaction.apply(&mut o);
    o.set_write_group_options(
        write_group::Options::new()
            .with_max_yield_usec(args.write_thread_max_yield_usec)
            .with_slow_yield_usec(args.write_thread_slow_yield_usec)
            .with_adaptive_yield(args.enable_write_thread_adaptive_yield)
            .with_barge_spins(args.write_group_barge_spins),
    );
    o
}

#[cfg(test)]
pub(super) fn bench_args(flags: &[&str]) -> BenchArgs {
    crate::cli::parse_flags(flags).unwrap()
}

#[cfg(test)]
mod tests {
    use super::super::run;
    use super::*;

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
            (&["--deletes=-3"], "--deletes=-3"),
            (&["--readwritepercent=101"], "--readwritepercent=101"),
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
            assert!(matches!(e, Error::Usage(_)), "{flags:?}: {e:?}");
            assert_eq!(e.exit_code(), 2);
            let e = e.to_string();
            assert!(e.contains(named), "{flags:?}: {e}");
            // `run` refuses before creating anything.
            let mut a = bench_args(flags);
            a.db = Some(PathBuf::from("/nonexistent/bench-db"));
            assert_eq!(run(a, false).unwrap_err().to_string(), e);
        }
        assert!(check_args(&bench_args(&[])).is_ok());
        assert!(check_args(&bench_args(&["--reads=-1", "--disable_wal=1"])).is_ok());
        let bad_bool = bench_args_err(&["--sync=yes"]);
        assert!(
            bad_bool.contains("expected 0, 1, true or false"),
            "{bad_bool}"
        );
    }

    #[test]
    fn memtablerep_takes_db_bench_names() {
        assert_eq!(bench_args(&[]).memtablerep, MemtableRep::SkipList);
        for (flags, rep) in [
            (&["--memtablerep=skip_list"][..], MemtableRep::SkipList),
            (&["--memtablerep", "vector"], MemtableRep::Vector),
        ] {
            assert_eq!(bench_args(flags).memtablerep, rep, "{flags:?}");
        }
        // Anything else is clap's usage error, which lists the choices.
        let e = bench_args_err(&["--memtablerep=hash"]);
        assert!(
            e.contains("invalid value 'hash' for '--memtablerep")
                && e.contains("[possible values: skip_list, vector]"),
            "{e}"
        );
    }

    fn bench_args_err(flags: &[&str]) -> String {
        crate::cli::parse_flags::<BenchArgs>(flags)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn rocksdb_only_flags_are_named() {
        let e = reject_rocksdb_only_flags(&["--compression_type=none".into()]).unwrap_err();
        assert!(e.to_string().contains("--compression_type"));
        assert_eq!(e.exit_code(), 2);
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
        let o = db_options(&a, MemtableRep::SkipList);
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
