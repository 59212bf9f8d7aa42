//! `lsm-demo bench`'s report: db_bench's header and result line, the
//! summary table, and the results as written to JSON.

use std::io::Write as _;

use serde::Serialize;

use super::Config;
use super::flags::BenchArgs;
use super::latency::LatencySummary;
use super::run_info::{Machine, Program};
use crate::cli::MemtableRep;

/// Where the text goes: standard output, or standard error when the JSON
/// takes standard output (`--json=-`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Text {
    to_stderr: bool,
}

impl Text {
    pub(super) fn new(args: &BenchArgs) -> Text {
        Text {
            to_stderr: args.json.as_deref().is_some_and(|p| p.as_os_str() == "-"),
        }
    }

    /// Prints `s` (which may span lines) and a newline.
    pub(super) fn line(&self, s: impl std::fmt::Display) {
        if self.to_stderr {
            eprintln!("{s}");
        } else {
            println!("{s}");
        }
    }

    /// Prints `s` as it is.
    pub(super) fn text(&self, s: impl std::fmt::Display) {
        if self.to_stderr {
            eprint!("{s}");
        } else {
            print!("{s}");
        }
    }
}

/// What `--json` writes: the run, then one entry per benchmark.
#[derive(Debug, Serialize)]
pub(super) struct JsonReport<'a> {
    /// The program and the commit it was built from.
    pub program: Program,
    /// The machine.
    pub machine: Machine,
    /// When the run started, in seconds since the Unix epoch.
    pub started_unix_secs: u64,
    /// The seed the key streams were drawn from (the one picked when
    /// `--seed` was 0): `--seed=<this>` with the same flags replays them.
    pub seed: u64,
    /// Every flag, as given or defaulted.
    pub settings: &'a BenchArgs,
    /// The benchmarks' results, in order.
    pub results: &'a [BenchResult],
}

impl JsonReport<'_> {
    /// Writes the report to `--json`'s file, or to standard output for `-`.
    pub(super) fn write(&self, path: &std::path::Path) -> Result<(), crate::cli::Error> {
        let writing = || format!("writing {}", path.display());
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| crate::cli::Error::io(writing(), std::io::Error::from(e)))?;
        text.push('\n');
        if path.as_os_str() == "-" {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| crate::cli::Error::io(writing(), e))
        } else {
            std::fs::write(path, text).map_err(|e| crate::cli::Error::io(writing(), e))
        }
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
    pub memtablerep: MemtableRep,
    /// Operations done by all threads.
    pub ops: u64,
    /// Wall-clock seconds from the first thread's start to the last's end.
    pub seconds: f64,
    /// With more than one thread: seconds from the first thread's start to
    /// the first thread's end. Each thread does its share of the
    /// operations, as in db_bench, so a thread that got less of the cores
    /// (to a background flush, say) ends late, and for `seconds` minus this
    /// fewer threads ran than were asked for.
    pub first_done_seconds: Option<f64>,
    /// Sum of per-thread elapsed microseconds divided by the operations.
    pub micros_per_op: f64,
    /// ops / seconds.
    pub ops_per_sec: f64,
    /// Key and value bytes per second, in MiB (0 for readseq counts too).
    pub mb_per_sec: f64,
    /// Reads that found their key, over all threads (benchmarks that read
    /// keys; the result line, as db_bench's, shows the first thread's).
    pub found: Option<u64>,
    /// db_bench's note at the end of the result line, the first thread's:
    /// `(found of reads found)`, `( updates:n found:n)`, ...
    pub message: String,
    /// Key and value bytes written to the database (deletes: keys).
    pub written_bytes: u64,
    /// With `--histogram=1`: the operations' times in microseconds, one
    /// entry per kind of operation (read, write, delete, seek, update).
    pub latency: Option<Vec<LatencySummary>>,
    /// With `--histogram=1`: the histograms in db_bench's layout.
    #[serde(skip)]
    pub histogram_text: Option<String>,
    /// Mean members per write group (write benchmarks).
    pub mean_group_size: Option<f64>,
    /// Write groups formed.
    pub groups: Option<u64>,
    /// Wake-ups issued by leaders.
    pub leader_wakeups: Option<u64>,
    /// How the writers' waits for their groups ended (write benchmarks).
    pub waits: Option<WaitOutcomes>,
    /// How the writers' waits on the sequencer ended: for the writes
    /// before theirs to become visible, mostly (write benchmarks).
    pub sequencer_waits: Option<SequencerWaits>,
    /// Leaders that waited for more writers before syncing, and how many of
    /// those waits timed out.
    pub gather_waits: Option<(u64, u64)>,
    /// Memtable bytes per entry in the mutable memtable at the end.
    pub memtable_bytes_per_entry: Option<f64>,
    /// With `--perf_level` 2 or more: the perf counters of the threads in
    /// the result, summed.
    pub perf_context: Option<PerfCounts>,
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

/// How waits on the sequencer ended, from its statistics
/// (`DbStats::sequencer_waits`), and the reservations retried
/// (`DbStats::sequencer_retries`).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SequencerWaits {
    /// Ended while spinning.
    pub spun: u64,
    /// Ended while yielding the time slice.
    pub yielded: u64,
    /// Slept until a finisher woke them.
    pub slept: u64,
    /// Compare-and-swaps of reservations that another writer's beat.
    pub retried: u64,
}

impl SequencerWaits {
    /// The waits and retries counted between two readings of the stats.
    pub fn between(before: &lsm_demo::DbStats, after: &lsm_demo::DbStats) -> Self {
        let (b, a) = (&before.sequencer_waits, &after.sequencer_waits);
        SequencerWaits {
            spun: a.spin_successes - b.spin_successes,
            yielded: a.yield_successes - b.yield_successes,
            slept: a.sleeps - b.sleeps,
            retried: after.sequencer_retries - before.sequencer_retries,
        }
    }
}

/// Perf counters by RocksDB's names (`lsm_demo::perf`), in the order of
/// `PerfMetric::ALL`; a JSON object.
#[derive(Debug, Clone)]
pub struct PerfCounts(Vec<(&'static str, u64)>);

impl PerfCounts {
    /// The counts `values`, given in the order of `PerfMetric::ALL`.
    pub(super) fn new(values: &[u64]) -> PerfCounts {
        let names = lsm_demo::perf::PerfMetric::ALL.map(|m| m.name());
        PerfCounts(names.into_iter().zip(values.iter().copied()).collect())
    }

    /// `name = value` for those not zero, as RocksDB's report.
    pub fn report(&self) -> String {
        let set: Vec<String> = self
            .0
            .iter()
            .filter(|(_, v)| *v > 0)
            .map(|(n, v)| format!("{n} = {v}"))
            .collect();
        set.join(", ")
    }
}

impl Serialize for PerfCounts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl BenchResult {
    /// db_bench's result line: the rate in MB/s when bytes were counted,
    /// then the note, which for some benchmarks ends in a newline, as
    /// db_bench's does.
    pub fn db_bench_line(&self) -> String {
        let mut extra = String::new();
        if self.mb_per_sec > 0.0 {
            extra = format!("{:6.1} MB/s", self.mb_per_sec);
        }
        if !self.message.is_empty() {
            if !extra.is_empty() {
                extra.push(' ');
            }
            extra.push_str(&self.message);
        }
        format!(
            "{:<12} : {:11.3} micros/op {} ops/sec {:.3} seconds {} operations;{}{}",
            self.name,
            self.micros_per_op,
            self.ops_per_sec as u64,
            self.seconds,
            self.ops,
            if extra.is_empty() { "" } else { " " },
            extra
        )
    }
}

pub(super) fn print_header(cfg: &Config, out: Text) {
    let a = &cfg.args;
    out.line(format_args!("Keys:       {} bytes each", a.key_size));
    out.line(format_args!("Values:     {} bytes each", a.value_size));
    out.line(format_args!("Entries:    {}", a.num));
    out.line(format_args!("Memtablerep: {}", a.memtablerep));
    out.line(format_args!(
        "WAL:        {}{}{}",
        if a.disable_wal { "disabled" } else { "enabled" },
        if a.sync { ", sync" } else { "" },
        if a.mmap_write && !a.disable_wal {
            ", mmap writes"
        } else {
            ""
        }
    ));
    out.line("------------------------------------------------");
}

pub(super) fn print_summary(results: &[BenchResult], out: Text) {
    out.line("");
    out.line("| benchmark | threads | memtable | ops/sec | micros/op | MB/s | group size |");
    out.line("|---|---:|---|---:|---:|---:|---:|");
    for r in results {
        out.line(format_args!(
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
        ));
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
            first_done_seconds: None,
            micros_per_op: 5.65,
            ops_per_sec: 176_980.5,
            mb_per_sec: 19.6,
            found: None,
            message: String::new(),
            written_bytes: 0,
            latency: None,
            histogram_text: None,
            mean_group_size: None,
            groups: None,
            leader_wakeups: None,
            waits: None,
            sequencer_waits: None,
            gather_waits: None,
            memtable_bytes_per_entry: None,
            perf_context: None,
            levels: None,
        };
        assert_eq!(
            r.db_bench_line(),
            "fillrandom   :       5.650 micros/op 176980 ops/sec 5.650 seconds 1000000 operations;   19.6 MB/s"
        );
        // A note follows the rate; without bytes it stands alone.
        let mut r = r;
        r.message = "(100 of 150 found)\n".into();
        assert!(
            r.db_bench_line()
                .ends_with("operations;   19.6 MB/s (100 of 150 found)\n")
        );
        r.mb_per_sec = 0.0;
        r.message = "( updates:5 found:3)".into();
        assert!(
            r.db_bench_line()
                .ends_with("operations; ( updates:5 found:3)")
        );
        r.message.clear();
        assert!(r.db_bench_line().ends_with("1000000 operations;"));
    }
}
