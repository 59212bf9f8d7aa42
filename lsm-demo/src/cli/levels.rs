//! `lsm-demo bench`'s compaction flags (db_bench's names) and the per-level
//! table it prints after a fill, as RocksDB's `rocksdb.stats` does.

use lsm_demo::{DbStats, Options};
use serde::Serialize;

/// db_bench's compaction and stall flags. Defaults are the engine's, which
/// are RocksDB's except three: `level_compaction_dynamic_level_bytes` is on
/// (off in db_bench 7.8.3, on in RocksDB since 8.4), and
/// `max_bytes_for_level_base` and `target_file_size_base` follow the
/// memtable size (256 MiB and 64 MiB in db_bench, what the engine derives
/// from 64 MiB memtables). Pass them to both programs to compare like with
/// like.
#[derive(Debug, Clone, clap::Args, Serialize)]
#[command(rename_all = "snake_case")]
pub struct CompactionArgs {
    /// Background threads: one flushes, the rest compact.
    #[arg(long, default_value_t = 2)]
    pub max_background_jobs: usize,
    /// Level-0 files that start a compaction.
    #[arg(long, default_value_t = 4)]
    pub level0_file_num_compaction_trigger: usize,
    /// Level-0 files at which writes slow down.
    #[arg(long, default_value_t = 20)]
    pub level0_slowdown_writes_trigger: usize,
    /// Level-0 files at which writes stop.
    #[arg(long, default_value_t = 36)]
    pub level0_stop_writes_trigger: usize,
    /// Target size of the level level 0 compacts into, in bytes (default:
    /// the engine's, write_buffer_size times the level-0 trigger; db_bench's
    /// is 256 MiB).
    #[arg(long)]
    pub max_bytes_for_level_base: Option<u64>,
    /// Each level's target over the one above.
    #[arg(long, default_value_t = 10.0)]
    pub max_bytes_for_level_multiplier: f64,
    /// Level targets computed from the bottom.
    #[arg(long, default_value = "true", value_parser = super::bench::parse_flag_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub level_compaction_dynamic_level_bytes: bool,
    /// Compaction output file size on level 1, in bytes (default: the
    /// engine's, write_buffer_size; db_bench's is 64 MiB).
    #[arg(long)]
    pub target_file_size_base: Option<u64>,
    /// Each level's file size over the one above.
    #[arg(long, default_value_t = 1)]
    pub target_file_size_multiplier: u32,
    /// Pending compaction bytes at which writes slow down (0: never).
    #[arg(long, default_value_t = 64 << 30)]
    pub soft_pending_compaction_bytes_limit: u64,
    /// Pending compaction bytes at which writes stop (0: never).
    #[arg(long, default_value_t = 256 << 30)]
    pub hard_pending_compaction_bytes_limit: u64,
    /// Bytes per second writes are held to during a slowdown.
    #[arg(long, default_value_t = 16 << 20)]
    pub delayed_write_rate: u64,
}

impl CompactionArgs {
    /// Sets these options on `o`.
    pub fn apply(&self, o: &mut Options) {
        o.set_max_background_jobs(self.max_background_jobs)
            .set_level_zero_file_num_compaction_trigger(self.level0_file_num_compaction_trigger)
            .set_level_zero_slowdown_writes_trigger(self.level0_slowdown_writes_trigger)
            .set_level_zero_stop_writes_trigger(self.level0_stop_writes_trigger)
            .set_max_bytes_for_level_multiplier(self.max_bytes_for_level_multiplier)
            .set_level_compaction_dynamic_level_bytes(self.level_compaction_dynamic_level_bytes)
            .set_target_file_size_multiplier(self.target_file_size_multiplier)
            .set_soft_pending_compaction_bytes_limit(self.soft_pending_compaction_bytes_limit)
            .set_hard_pending_compaction_bytes_limit(self.hard_pending_compaction_bytes_limit)
            .set_delayed_write_rate(self.delayed_write_rate);
        if let Some(bytes) = self.max_bytes_for_level_base {
            o.set_max_bytes_for_level_base(bytes);
        }
        if let Some(bytes) = self.target_file_size_base {
            o.set_target_file_size_base(bytes);
        }
    }
}

/// The tree after a write benchmark: per level, and the write
/// amplification over the benchmark's own key and value bytes.
#[derive(Debug, Clone, Serialize)]
pub struct LevelReport {
    /// Levels holding files or compaction counts, from level 0 down.
    pub levels: Vec<LevelRow>,
    /// Bytes written to tables (flushes and compactions).
    pub table_bytes_written: u64,
    /// Bytes appended to the logs.
    pub log_bytes_written: u64,
    /// The keys and values the benchmark wrote.
    pub user_bytes: u64,
    /// (tables + logs) / user bytes.
    pub write_amplification: f64,
    /// Pending compaction bytes at the end.
    pub pending_compaction_bytes: u64,
    /// Writes slowed down, and for how long (microseconds, summed over
    /// writers).
    pub slowdowns: (u64, u64),
    /// Writes stopped, and for how long.
    pub stops: (u64, u64),
}

/// One level of a [`LevelReport`].
#[derive(Debug, Clone, Serialize)]
pub struct LevelRow {
    pub level: usize,
    pub files: usize,
    pub bytes: u64,
    pub target_bytes: u64,
    pub score: f64,
    pub compactions: u64,
    /// Bytes compactions into this level read from the level above.
    pub read_input_bytes: u64,
    /// Bytes they read from this level.
    pub read_output_level_bytes: u64,
    pub written_bytes: u64,
    pub moved_bytes: u64,
    pub seconds: f64,
}

impl LevelReport {
    /// The report of `stats` (counters since open) for `user_bytes` written.
    pub fn new(stats: &DbStats, user_bytes: u64) -> LevelReport {
        let levels = stats
            .levels
            .iter()
            .enumerate()
            .filter(|(_, l)| l.files > 0 || l.written_bytes > 0 || l.moved_bytes > 0)
            .map(|(level, l)| LevelRow {
                level,
                files: l.files,
                bytes: l.bytes,
                target_bytes: l.target_bytes,
                score: l.score,
                compactions: l.compactions,
                read_input_bytes: l.read_input_bytes,
                read_output_level_bytes: l.read_output_level_bytes,
                written_bytes: l.written_bytes,
                moved_bytes: l.moved_bytes,
                seconds: l.micros as f64 / 1e6,
            })
            .collect();
        LevelReport {
            levels,
            table_bytes_written: stats.table_bytes_written(),
            log_bytes_written: stats.log_bytes_written,
            user_bytes,
            write_amplification: stats.write_amplification(user_bytes),
            pending_compaction_bytes: stats.pending_compaction_bytes,
            slowdowns: (
                stats.write_stalls.slowdowns,
                stats.write_stalls.slowdown_micros,
            ),
            stops: (stats.write_stalls.stops, stats.write_stalls.stop_micros),
        }
    }
}

impl std::fmt::Display for LevelReport {
    /// The table, in RocksDB's `rocksdb.stats` columns (MiB), then the
    /// write amplification and the stalls.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mb = |b: u64| b as f64 / (1024.0 * 1024.0);
        writeln!(
            f,
            "  Level Files   Size(MB) Target(MB) Score Rn(MB) Rnp1(MB) Write(MB) Moved(MB) W-Amp Comp(sec) Comp(cnt)"
        )?;
        for l in &self.levels {
            // RocksDB's per-level W-Amp: bytes written over bytes read from
            // the level above (the flush's input on level 0 is not known).
            let amp = if l.read_input_bytes > 0 {
                format!("{:.1}", l.written_bytes as f64 / l.read_input_bytes as f64)
            } else {
                "-".into()
            };
            writeln!(
                f,
                "  L{:<4} {:5} {:10.1} {:10.1} {:5.2} {:6.1} {:8.1} {:9.1} {:9.1} {:>5} {:9.2} {:9}",
                l.level,
                l.files,
                mb(l.bytes),
                mb(l.target_bytes),
                l.score,
                mb(l.read_input_bytes),
                mb(l.read_output_level_bytes),
                mb(l.written_bytes),
                mb(l.moved_bytes),
                amp,
                l.seconds,
                l.compactions
            )?;
        }
        writeln!(
            f,
            "  write amplification {:.2}: tables {:.1} MB + log {:.1} MB over {:.1} MB of keys and values",
            self.write_amplification,
            mb(self.table_bytes_written),
            mb(self.log_bytes_written),
            mb(self.user_bytes)
        )?;
        writeln!(
            f,
            "  stalls: {} slowdowns ({:.2} s), {} stops ({:.2} s); pending compaction {:.1} MB",
            self.slowdowns.0,
            self.slowdowns.1 as f64 / 1e6,
            self.stops.0,
            self.stops.1 as f64 / 1e6,
            mb(self.pending_compaction_bytes)
        )
    }
}
