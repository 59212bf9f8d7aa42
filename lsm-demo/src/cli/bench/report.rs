//! `lsm-demo bench`'s report: db_bench's header and result line, the
//! summary table, and the results as written to JSON.

use serde::Serialize;

use super::Config;
use crate::cli::MemtableRep;

/// One benchmark's outcome, as printed and as written to JSON.
#[derive(Debug, Clone, Serialize)]
pub struct BenchResult {
    /// db_bench's benchmark name.
    pub name: String,
    /// Threads.
    pub threads: usize,
    /// Memtable representation.
    pub memtablerep: MemtableRep,
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
    pub levels: Option<crate::cli::levels::LevelReport>,
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

pub(super) fn print_header(cfg: &Config) {
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

pub(super) fn print_summary(results: &[BenchResult]) {
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
    fn result_line_has_db_bench_fields() {
        let r = BenchResult {
            name: "fillrandom".into(),
            threads: 1,
            memtablerep: MemtableRep::SkipList,
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
}
