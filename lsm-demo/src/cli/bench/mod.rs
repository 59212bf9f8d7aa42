//! `lsm-demo bench`: db_bench's workloads, flags and result line.
//!
//! - `flags.rs`: the flags, db_bench's names and their checks;
//! - `workload.rs`: the benchmarks' threads;
//! - `steps.rs`: how long each thread runs (`--duration`);
//! - `random.rs`: db_bench's key streams, and the values;
//! - `latency.rs`: `--histogram=1`'s per-thread histograms;
//! - `progress.rs`: the progress bar;
//! - `report.rs`: the result line, the summary table and the JSON;
//! - `run_info.rs`: the program and machine the JSON names.

use std::path::PathBuf;

use lsm_demo::DB;

use super::{Error, MemtableRep};

mod flags;
mod latency;
mod progress;
mod random;
mod report;
mod run_info;
mod steps;
mod workload;

pub(crate) use flags::parse_flag_bool;
pub use flags::{BenchArgs, reject_rocksdb_only_flags};
use flags::{check_args, db_options};
pub use report::BenchResult;
use report::{JsonReport, Text, print_header, print_summary};
use workload::{Workload, run_one};

struct Config {
    args: BenchArgs,
    seed: u64,
    dir: PathBuf,
    _tmp: Option<tempfile::TempDir>,
}

/// Runs `bench`; returns the results.
pub fn run(args: BenchArgs, default_suite: bool) -> Result<Vec<BenchResult>, Error> {
    check_args(&args)?;
    if let Some(d) = &args.db {
        super::check_db_dir(d, "bench")?;
    }
    let out = Text::new(&args);
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(1);
    let seed = if args.seed == 0 {
        out.line(format_args!("Set seed to {started} because --seed was 0"));
        started
    } else {
        args.seed
    };
    let (dir, tmp) = match &args.db {
        Some(d) => (d.clone(), None),
        None => {
            let t = tempfile::Builder::new()
                .prefix("lsm-demo-bench")
                .tempdir()
                .map_err(|e| Error::io("creating a temporary directory", e))?;
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
        let row = |w, threads, rep, num| Row {
            w,
            threads,
            rep,
            num,
        };
        let rep = cfg.args.memtablerep;
        let mut p: Vec<Row> = [
            Workload::FillSeq,
            Workload::FillRandom,
            Workload::Overwrite,
            Workload::ReadRandom,
            Workload::ReadSeq,
        ]
        .into_iter()
        .map(|w| row(w, 1, rep, cfg.args.num))
        .collect();
        // The thread rows split the same total work, as vs-rocksdb.sh does.
        for rep in [MemtableRep::SkipList, MemtableRep::Vector] {
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
                    rep: cfg.args.memtablerep,
                    num: cfg.args.num,
                })
            })
            .collect::<Result<_, _>>()?
    };
    print_header(&cfg, out);
    let mut results = Vec::new();
    let mut db: Option<(DB, MemtableRep)> = None;
    // Keys and values written since the database was opened.
    let mut user_bytes: u64 = 0;
    // Threads started so far: db_bench seeds each thread's key stream with
    // the seed plus this count (so the first thread's is seed + 1).
    let mut streams: u64 = 0;
    for row in plan {
        let wipe = row.w.fresh_db() && !cfg.args.use_existing_db;
        if wipe || db.as_ref().is_none_or(|(_, rep)| *rep != row.rep) {
            drop(db.take());
            if wipe {
                DB::destroy(&lsm_demo::Options::default(), &cfg.dir)
                    .map_err(|e| Error::engine(format!("wiping {}", cfg.dir.display()), e))?;
            }
            db = Some((open_db(&cfg, row.rep)?, row.rep));
            user_bytes = 0;
        }
        let open = &db.as_ref().expect("opened").0;
        let mut r = run_one(&cfg, open, &row, streams + 1)?;
        streams += row.w.threads(row.threads) as u64;
        out.line(r.db_bench_line());
        if let Some(h) = &r.histogram_text {
            out.text(h);
        }
        if row.w.is_write() {
            user_bytes += r.written_bytes;
            r.levels = Some(super::levels::LevelReport::new(&open.stats(), user_bytes));
        }
        if let (Some(g), Some(m)) = (r.mean_group_size, r.groups) {
            out.line(format_args!(
                "  write group: {g:.2} members per group over {m} groups, {} leader wake-ups; memtable {:.1} bytes/entry",
                r.leader_wakeups.unwrap_or(0),
                r.memtable_bytes_per_entry.unwrap_or(0.0)
            ));
        }
        if let Some(w) = r.waits
            && w.spun + w.yielded + w.slept + w.barged > 0
        {
            out.line(format_args!(
                "  group waits: {} ended spinning, {} yielding, {} asleep; {} writers barged",
                w.spun, w.yielded, w.slept, w.barged
            ));
        }
        if let Some(first) = r.first_done_seconds {
            out.line(format_args!(
                "  threads: the first done at {first:.3} s of {:.3} s",
                r.seconds
            ));
        }
        if let Some(w) = r.sequencer_waits
            && w.spun + w.yielded + w.slept + w.retried > 0
        {
            out.line(format_args!(
                "  sequencer waits: {} ended spinning, {} yielding, {} asleep; {} reservations retried",
                w.spun, w.yielded, w.slept, w.retried
            ));
        }
        if let Some(perf) = &r.perf_context {
            out.line(format_args!(
                "  perf context (all threads): {}",
                perf.report()
            ));
        }
        if let Some((waits, timeouts)) = r.gather_waits {
            out.line(format_args!(
                "  group commit wait: {waits} leaders waited for more writers, {timeouts} until the window ended"
            ));
        }
        if let Some(levels) = &r.levels {
            out.text(levels);
        }
        results.push(r);
    }
    drop(db);
    if default_suite || results.len() > 1 {
        print_summary(&results, out);
    }
    if let Some(path) = &cfg.args.json {
        JsonReport {
            program: run_info::Program::this(),
            machine: run_info::Machine::this(),
            started_unix_secs: started,
            seed: cfg.seed,
            settings: &cfg.args,
            results: &results,
        }
        .write(path)?;
    }
    Ok(results)
}

/// One benchmark to run.
struct Row {
    w: Workload,
    threads: usize,
    rep: MemtableRep,
    /// Keys (and writes per thread) for this row.
    num: u64,
}

fn open_db(cfg: &Config, rep: MemtableRep) -> Result<DB, Error> {
    let o = db_options(&cfg.args, rep);
    DB::open(&o, &cfg.dir).map_err(|e| Error::engine(format!("opening {}", cfg.dir.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flags::bench_args;

    #[test]
    fn bench_deletes_only_a_database_of_its_own() {
        let root = tempfile::tempdir().unwrap();
        let foreign = root.path().join("photos");
        std::fs::create_dir(&foreign).unwrap();
        std::fs::write(foreign.join("cat.jpg"), b"meow").unwrap();
        let mut a = bench_args(&["--benchmarks=fillseq", "--num=10"]);
        a.db = Some(foreign.clone());
        let err = run(a.clone(), false).unwrap_err().to_string();
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

    /// Runs `flags` (with `--quiet` and a fresh database) and returns the
    /// results.
    fn bench(flags: &[&str]) -> Vec<BenchResult> {
        let root = tempfile::tempdir().unwrap();
        let mut a = bench_args(flags);
        a.quiet = true;
        a.db = Some(root.path().join("db"));
        run(a, false).unwrap()
    }

    #[test]
    fn readrandom_after_fillrandom_finds_one_minus_one_over_e() {
        // fillrandom draws --num keys with replacement: a key is written
        // with probability 1 - (1 - 1/n)^n, about 1 - 1/e (63.2%).
        let n = 20_000;
        let r = bench(&[
            "--benchmarks=fillrandom,readrandom",
            &format!("--num={n}"),
            "--seed=42",
        ]);
        let found = r[1].found.unwrap() as f64 / n as f64;
        let expected = 1.0 - (-1.0f64).exp();
        assert!((found - expected).abs() < 0.01, "{found} vs {expected}");
        // The very keys db_bench 7.8.3 draws: `db_bench --seed=42
        // --num=20000 --benchmarks=fillrandom,readrandom` finds 12616.
        assert_eq!(r[1].message, "(12616 of 20000 found)\n");
        // Another run of the same seed draws the same keys; another seed
        // other ones.
        let again = bench(&[
            "--benchmarks=fillrandom,readrandom",
            "--num=20000",
            "--seed=42",
        ]);
        assert_eq!(again[1].found, r[1].found);
        let other = bench(&[
            "--benchmarks=fillrandom,readrandom",
            "--num=20000",
            "--seed=43",
        ]);
        assert_ne!(other[1].found, r[1].found);
    }

    #[test]
    fn new_workloads_count_as_db_bench() {
        // Counts checked against db_bench 7.8.3 with the same flags
        // (--seed=42 --num=20000 and the flags named).
        let r = bench(&[
            "--benchmarks=fillrandom,readrandomwriterandom,updaterandom,deleterandom,readrandom",
            "--num=20000",
            "--seed=42",
        ]);
        assert_eq!(
            r[1].message,
            "( reads:18000 writes:2000 total:20000 found:11651)"
        );
        assert_eq!(r[2].message, "( updates:20000 found:15749)");
        assert_eq!((r[3].name.as_str(), r[3].ops), ("deleterandom", 20000));
        assert_eq!(r[4].message, "(6497 of 20000 found)\n");
        let r = bench(&[
            "--benchmarks=fillrandom,seekrandom,multireadrandom",
            "--num=20000",
            "--seed=42",
            "--seek_nexts=10",
            "--batch_size=8",
        ]);
        assert_eq!(r[0].ops, 20000);
        assert_eq!(r[1].message, "(12722 of 20000 found)\n");
        assert!(r[1].mb_per_sec > 0.0);
        assert_eq!(r[2].ops, 20000);
        assert_eq!(r[2].message, "(12705 of 20000 found)");
        let r = bench(&[
            "--benchmarks=fillbatch,readreverse,readseq,readwhilewriting",
            "--num=3000",
            "--reads=1000",
            "--threads=2",
        ]);
        assert_eq!(r[0].ops, 6000);
        assert_eq!((r[1].ops, r[2].ops), (2000, 2000));
        // Two readers' reads; the writer is not counted.
        assert_eq!(r[3].ops, 2000);
        assert_eq!(r[3].threads, 2);
        // Whole entries (16-byte keys, 100-byte values); maybe none: the
        // writer may first run after the readers are done, as db_bench's.
        assert_eq!(r[3].written_bytes % 116, 0);
        let m = &r[3].message;
        assert!(
            m.starts_with('(') && m.ends_with(" of 1000 found)\n"),
            "{m}"
        );
    }

    #[test]
    fn the_bar_ends_at_the_operations_done() {
        let root = tempfile::tempdir().unwrap();
        for (benchmarks, batch, threads) in [
            ("fillrandom", 1, 1),
            ("fillrandom", 7, 3),
            ("fillseq,fillbatch", 1, 2),
            ("fillrandom,readrandom,multireadrandom,seekrandom", 16, 2),
            ("fillseq,readseq,readreverse", 1, 1),
            ("fillrandom,readwhilewriting", 1, 2),
            (
                "fillrandom,readrandomwriterandom,updaterandom,deleterandom",
                5,
                2,
            ),
            ("fillsync", 1, 2),
        ] {
            let mut a = bench_args(&[
                &format!("--benchmarks={benchmarks}"),
                "--num=5000",
                &format!("--batch_size={batch}"),
                &format!("--threads={threads}"),
                "--seed=9",
                "--disable_wal=1",
            ]);
            if benchmarks == "fillsync" {
                a.disable_wal = false;
            }
            let cfg = Config {
                args: a,
                seed: 9,
                dir: root.path().join(benchmarks),
                _tmp: None,
            };
            let db = open_db(&cfg, MemtableRep::SkipList).unwrap();
            let mut streams = 1;
            for name in benchmarks.split(',') {
                let row = Row {
                    w: Workload::parse(name).unwrap(),
                    threads,
                    rep: MemtableRep::SkipList,
                    num: 5000,
                };
                let bar = progress::bar(name, workload::bar_total(&cfg, &row), false);
                let r = workload::run_with_bar(&cfg, &db, &row, streams, &bar).unwrap();
                streams += row.w.threads(threads) as u64;
                assert_eq!(
                    Some(bar.position()),
                    bar.length(),
                    "{name} {batch} {threads}"
                );
                assert_eq!(bar.position(), r.ops, "{name} {batch} {threads}");
                assert!(r.ops > 0, "{name}");
            }
        }
    }

    #[test]
    fn json_records_the_run() {
        let root = tempfile::tempdir().unwrap();
        let json = root.path().join("out.json");
        let mut a = bench_args(&[
            "--benchmarks=fillrandom,readrandom",
            "--num=2000",
            "--histogram=1",
            "--seed=5",
            "--quiet",
        ]);
        a.json = Some(json.clone());
        a.db = Some(root.path().join("db"));
        let results = run(a, false).unwrap();
        // Both histograms were printed in db_bench's layout and kept.
        let text = results[0].histogram_text.as_deref().unwrap();
        assert!(
            text.starts_with("Microseconds per write:\nCount: 2000 Average: "),
            "{text}"
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(v["program"]["name"], "lsm-demo");
        assert_eq!(v["program"]["version"], env!("CARGO_PKG_VERSION"));
        assert!(
            v["program"]["git_commit"]
                .as_str()
                .is_some_and(|c| !c.is_empty())
        );
        assert_eq!(v["seed"], 5);
        assert_eq!(v["settings"]["num"], 2000);
        assert_eq!(v["settings"]["histogram"], true);
        assert_eq!(v["settings"]["compaction"]["max_background_jobs"], 2);
        assert!(v["machine"]["cores"].as_u64().unwrap() >= 1);
        assert!(v["machine"]["cpu"].is_string() && v["machine"]["kernel"].is_string());
        let r = &v["results"];
        assert_eq!(r[0]["name"], "fillrandom");
        let write = &r[0]["latency"][0];
        assert_eq!(write["op"], "write");
        assert_eq!(write["count"], 2000);
        for p in ["p50", "p75", "p99", "p99.9", "p99.99"] {
            assert!(write[p].as_f64().unwrap() > 0.0, "{p}: {write}");
        }
        assert!(write["p50"].as_f64() <= write["p99.9"].as_f64());
        assert_eq!(r[1]["latency"][0]["op"], "read");
        assert_eq!(r[1]["found"], results[1].found.unwrap());
        // Without --histogram, no latency.
        let mut a = bench_args(&["--benchmarks=fillseq", "--num=10", "--quiet"]);
        a.json = Some(json.clone());
        a.db = Some(root.path().join("db2"));
        run(a, false).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert!(v["results"][0]["latency"].is_null());
    }
}
