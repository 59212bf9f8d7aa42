//! The engine's targets against RocksDB, as a table.

use std::fmt::Write as _;

use super::markdown;

/// The engine issue's targets: ratio of our ops/s to RocksDB 7.8.3's in
/// each `vs-rocksdb.sh` scenario (median of 3 alternating runs there).
pub const ENGINE_TARGETS: [(&str, f64); 9] = [
    ("fillseq-skiplist-t1", 1.5),
    ("fillrandom-skiplist-t1", 1.5),
    ("fillrandom-skiplist-t2", 1.5),
    ("fillrandom-skiplist-t8", 2.0),
    ("fillrandom-vector-t1", 1.0),
    ("fillrandom-vector-t2-cc", 1.5),
    ("fillrandom-wal-t2", 1.3),
    ("fillsync-wal-t8", 1.5),
    ("readrandom-t1", 1.0),
];

/// The engine table from `vs-rocksdb.sh`'s output (a header line, then
/// `scenario rocksdb_ops/s lsm-demo_ops/s ratio` lines), with each
/// scenario's target, whether it was met and, for a miss, where the profile
/// that explains it is: a link to the `### <scenario>` section of
/// `profiles` (`benches/PROFILES.md`, quoted at the end of the report), or
/// a note that none is recorded.
///
/// # Examples
///
/// ```
/// let md = benches::report::engine_target_table("fillsync-wal-t8 100 110 1.10\n", "### fillsync-wal-t8\n");
/// assert!(md.contains("| 1.5 | no | [profile](#fillsync-wal-t8) |"));
/// ```
pub fn engine_target_table(vs_rocksdb_output: &str, profiles: &str) -> String {
    let mut md = String::from(
        "| scenario | RocksDB 7.8.3 ops/s | lsm-demo ops/s | ratio | target | met | cause of a miss |\n\
         |---|---:|---:|---:|---:|---|---|\n",
    );
    for line in vs_rocksdb_output.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [name, rocks, ours, ratio] = f[..] else {
            continue;
        };
        let Ok(measured) = ratio.parse::<f64>() else {
            continue; // the header, or "n/a"
        };
        let target = ENGINE_TARGETS.iter().find(|(n, _)| *n == name).map(|t| t.1);
        let (target_cell, met, cause) = match target {
            None => ("-".to_string(), "", String::new()),
            Some(t) if measured >= t => (format!("{t:.1}"), "yes", String::new()),
            Some(t) => {
                let cause = if profiles.contains(&format!("### {name}")) {
                    format!("[profile](#{})", markdown::slug(name))
                } else {
                    "no profile recorded yet".to_string()
                };
                (format!("{t:.1}"), "no", cause)
            }
        };
        let count = |s: &str| {
            s.parse::<f64>()
                .map_or_else(|_| s.to_string(), |v| group_digits(v.round() as u64))
        };
        let _ = writeln!(
            md,
            "| {name} | {} | {} | {ratio} | {target_cell} | {met} | {cause} |",
            count(rocks),
            count(ours)
        );
    }
    md
}

/// `1234567` as `1,234,567`.
fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
