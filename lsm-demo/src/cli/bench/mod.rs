//! `lsm-demo bench`: db_bench's workloads, flags and result line.
//!
//! - `flags.rs`: the flags, db_bench's names and their checks;
//! - `workload.rs`: the benchmarks' threads;
//! - `report.rs`: the result line, the summary table and the JSON.

use std::path::PathBuf;

use lsm_demo::DB;

use super::{Error, MemtableRep};

mod flags;
mod report;
mod workload;

pub(crate) use flags::parse_flag_bool;
pub use flags::{BenchArgs, reject_rocksdb_only_flags};
use flags::{check_args, db_options};
pub use report::BenchResult;
use report::{print_header, print_summary};
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
    print_header(&cfg);
    let mut results = Vec::new();
    let mut db: Option<(DB, MemtableRep)> = None;
    // Keys and values written since the database was opened.
    let mut user_bytes: u64 = 0;
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
        let writing = || format!("writing {}", path.display());
        let text = serde_json::to_string_pretty(&results)
            .map_err(|e| Error::io(writing(), std::io::Error::from(e)))?;
        std::fs::write(path, text).map_err(|e| Error::io(writing(), e))?;
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
}
