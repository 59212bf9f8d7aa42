//! `--histogram=1`: the time of every operation, kept per thread in an HDR
//! histogram (nanoseconds, three significant digits), merged when the
//! threads are done and printed in db_bench's layout: count, average and
//! standard deviation, minimum, median and maximum, five percentiles, then
//! the share of the operations in each of db_bench's buckets (in
//! microseconds: 1, 2, 3, 4, 6, 10, 15, 22, 34, ...).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

use hdrhistogram::Histogram;
use serde::Serialize;

/// The kinds of operations db_bench times apart, in db_bench's order; each
/// has a histogram of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Op {
    Read,
    Write,
    Delete,
    Seek,
    Update,
}

impl Op {
    /// db_bench's name, as in `Microseconds per write:`.
    pub(super) fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Delete => "delete",
            Op::Seek => "seek",
            Op::Update => "update",
        }
    }
}

/// One thread's histograms. An operation's time runs from the end of the
/// previous one (or from the thread's start) to its own end, as db_bench
/// measures it: one reading of the clock per operation (`Instant`, which
/// Linux answers from the vDSO without a system call). A batch of writes
/// is one operation.
#[derive(Debug)]
pub(super) struct Recorder {
    enabled: bool,
    last: Instant,
    hists: BTreeMap<Op, Histogram<u64>>,
}

impl Recorder {
    /// A recorder that keeps nothing unless `enabled`.
    pub(super) fn new(enabled: bool) -> Recorder {
        Recorder {
            enabled,
            last: Instant::now(),
            hists: BTreeMap::new(),
        }
    }

    /// The thread starts now: the first operation is timed from here.
    pub(super) fn start(&mut self) {
        self.last = Instant::now();
    }

    /// An operation of kind `op` ended now.
    #[inline]
    pub(super) fn finished(&mut self, op: Op) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        let nanos = now.duration_since(self.last).as_nanos();
        self.last = now;
        let nanos = u64::try_from(nanos).unwrap_or(u64::MAX);
        let h = self.hists.entry(op).or_insert_with(new_histogram);
        // `record` grows the histogram's range as needed;
        // `saturating_record` would clamp to the range it has.
        if h.record(nanos).is_err() {
            h.saturating_record(nanos);
        }
    }

    /// The histograms, to merge with the other threads'.
    pub(super) fn into_latencies(self) -> Latencies {
        Latencies(self.hists)
    }
}

fn new_histogram() -> Histogram<u64> {
    // Three significant digits; the range grows with the values recorded.
    Histogram::new(3).expect("3 significant digits is a valid precision")
}

/// Histograms of several threads, merged.
#[derive(Debug, Default)]
pub(super) struct Latencies(BTreeMap<Op, Histogram<u64>>);

impl Latencies {
    /// Adds `other`'s counts to these.
    pub(super) fn merge(&mut self, other: Latencies) {
        for (op, h) in other.0 {
            match self.0.get_mut(&op) {
                Some(mine) => mine
                    .add(&h)
                    .expect("histograms that grow on demand always add"),
                None => {
                    self.0.insert(op, h);
                }
            }
        }
    }

    /// One summary per kind of operation, in db_bench's order.
    pub(super) fn summaries(&self) -> Vec<LatencySummary> {
        self.0
            .iter()
            .map(|(op, h)| LatencySummary::new(*op, h))
            .collect()
    }

    /// db_bench's text: for each kind of operation, `Microseconds per
    /// <op>:` and its histogram, each followed by an empty line.
    pub(super) fn db_bench_text(&self) -> String {
        let mut s = String::new();
        for (op, h) in &self.0 {
            let _ = writeln!(s, "Microseconds per {}:", op.name());
            s.push_str(&histogram_text(h));
            s.push('\n');
        }
        s
    }
}

/// One kind of operation's times, in microseconds, as written to JSON.
#[derive(Debug, Clone, Serialize)]
pub struct LatencySummary {
    /// db_bench's name of the operation: read, write, delete, seek, update.
    pub op: &'static str,
    /// Operations timed (a batch of writes counts once).
    pub count: u64,
    /// Mean.
    pub average: f64,
    /// Standard deviation.
    pub stddev: f64,
    /// Fastest.
    pub min: f64,
    /// Slowest.
    pub max: f64,
    /// Median.
    pub p50: f64,
    /// 75th percentile.
    pub p75: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    #[serde(rename = "p99.9")]
    pub p99_9: f64,
    /// 99.99th percentile.
    #[serde(rename = "p99.99")]
    pub p99_99: f64,
}

impl LatencySummary {
    fn new(op: Op, h: &Histogram<u64>) -> LatencySummary {
        let us = |ns: u64| ns as f64 / 1000.0;
        let q = |q: f64| us(h.value_at_quantile(q));
        LatencySummary {
            op: op.name(),
            count: h.len(),
            average: h.mean() / 1000.0,
            stddev: h.stdev() / 1000.0,
            min: us(h.min()),
            max: us(h.max()),
            p50: q(0.50),
            p75: q(0.75),
            p99: q(0.99),
            p99_9: q(0.999),
            p99_99: q(0.9999),
        }
    }
}

/// db_bench's bucket limits in microseconds: 1, 2, then each 1.5 times the
/// last, kept to its two leading digits (3, 4, 6, 10, 15, 22, 34, 51, ...),
/// up to the largest `u64`.
pub(super) fn bucket_limits() -> Vec<u64> {
    let mut limits = vec![1u64, 2];
    let mut exact = 2.0f64;
    loop {
        exact *= 1.5;
        if exact > u64::MAX as f64 {
            break;
        }
        let mut v = exact as u64;
        let mut scale = 1u64;
        while v / 10 > 10 {
            v /= 10;
            scale *= 10;
        }
        limits.push(v * scale);
    }
    limits
}

/// The bucket of db_bench's that holds `micros`: the first whose limit is
/// at least `micros` (bucket `b` holds the values above limit `b - 1`, up
/// to and with limit `b`), the last for anything larger.
fn bucket_of(limits: &[u64], micros: f64) -> usize {
    limits
        .partition_point(|&l| (l as f64) < micros)
        .min(limits.len() - 1)
}

/// One histogram in db_bench's layout (HistogramStat::ToString in RocksDB).
fn histogram_text(h: &Histogram<u64>) -> String {
    let s = LatencySummary::new(Op::Read, h);
    let whole = |ns: u64| (ns + 500) / 1000;
    let count = h.len();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Count: {count} Average: {:.4}  StdDev: {:.2}",
        s.average, s.stddev
    );
    let (min, max) = if count == 0 {
        (0, 0)
    } else {
        (whole(h.min()), whole(h.max()))
    };
    let _ = writeln!(out, "Min: {min}  Median: {:.4}  Max: {max}", s.p50);
    let _ = writeln!(
        out,
        "Percentiles: P50: {:.2} P75: {:.2} P99: {:.2} P99.9: {:.2} P99.99: {:.2}",
        s.p50, s.p75, s.p99, s.p99_9, s.p99_99
    );
    out.push_str("------------------------------------------------------\n");
    if count == 0 {
        return out;
    }
    let limits = bucket_limits();
    let mut buckets: BTreeMap<usize, u64> = BTreeMap::new();
    for v in h.iter_recorded() {
        let micros = h.median_equivalent(v.value_iterated_to()) as f64 / 1000.0;
        *buckets.entry(bucket_of(&limits, micros)).or_default() += v.count_at_value();
    }
    let mult = 100.0 / count as f64;
    let mut cumulative = 0u64;
    for (b, n) in buckets {
        cumulative += n;
        let (open, left) = if b == 0 {
            ('[', 0)
        } else {
            ('(', limits[b - 1])
        };
        let marks = (mult * n as f64 / 5.0 + 0.5) as usize;
        let _ = writeln!(
            out,
            "{open} {left:7}, {:7} ] {n:8} {:7.3}% {:7.3}% {}",
            limits[b],
            mult * n as f64,
            mult * cumulative as f64,
            "#".repeat(marks)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_db_bench_s() {
        let l = bucket_limits();
        assert_eq!(
            &l[..24],
            &[
                1, 2, 3, 4, 6, 10, 15, 22, 34, 51, 76, 110, 170, 250, 380, 580, 870, 1300, 1900,
                2900, 4400, 6600, 9900, 14000
            ]
        );
        // RocksDB keeps 109 buckets.
        assert_eq!(l.len(), 109);
        assert_eq!(bucket_of(&l, 0.0), 0);
        assert_eq!(bucket_of(&l, 1.0), 0);
        assert_eq!(bucket_of(&l, 1.2), 1);
        assert_eq!(bucket_of(&l, 4400.0), 20);
        assert_eq!(bucket_of(&l, 1e30), l.len() - 1);
    }

    #[test]
    fn text_has_db_bench_layout() {
        let mut h = new_histogram();
        for _ in 0..150 {
            h.record(700).unwrap(); // 0.7 µs
        }
        for _ in 0..850 {
            h.record(2_500).unwrap(); // 2.5 µs
        }
        h.record(4_000_000).unwrap(); // 4 ms
        let mut l = Latencies::default();
        l.0.insert(Op::Write, h);
        let text = l.db_bench_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Microseconds per write:");
        assert!(lines[1].starts_with("Count: 1001 Average: "), "{text}");
        assert!(lines[2].starts_with("Min: 1  Median: 2.5"), "{text}");
        // HDR keeps the top of each value's bucket: 4 ms reads 4001.8 µs.
        assert!(lines[2].ends_with("  Max: 4002"), "{text}");
        assert!(lines[3].starts_with("Percentiles: P50: 2.50 P75: 2.50 P99: 2.50 P99.9: "));
        assert_eq!(lines[4], "-".repeat(54));
        assert_eq!(
            lines[5],
            "[       0,       1 ]      150  14.985%  14.985% ###"
        );
        assert_eq!(
            lines[6],
            "(       2,       3 ]      850  84.915%  99.900% #################"
        );
        assert_eq!(lines[7], "(    2900,    4400 ]        1   0.100% 100.000% ");
        assert_eq!(lines[8], "");
        assert_eq!(lines.len(), 9);
        let s = &l.summaries()[0];
        assert_eq!((s.op, s.count), ("write", 1001));
        assert!(
            (s.p50 - 2.5).abs() < 0.01 && (s.max - 4000.0).abs() < 4.0,
            "{s:?}"
        );
    }

    #[test]
    fn threads_merge() {
        let mut a = Recorder::new(true);
        a.start();
        a.finished(Op::Read);
        a.finished(Op::Write);
        let mut b = Recorder::new(true);
        b.finished(Op::Read);
        let mut all = a.into_latencies();
        all.merge(b.into_latencies());
        let s = all.summaries();
        assert_eq!(
            s.iter().map(|s| (s.op, s.count)).collect::<Vec<_>>(),
            [("read", 2), ("write", 1)]
        );
        let mut off = Recorder::new(false);
        off.finished(Op::Read);
        assert!(off.into_latencies().summaries().is_empty());
    }
}
