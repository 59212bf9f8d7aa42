//! `lsm-demo crashtest`: a loop that kills the `stress` process at random
//! and verifies what survived.
//!
//! # What a kill tests
//!
//! `crashtest` kills with SIGKILL: the process dies, the operating system
//! keeps every byte the engine handed to `write`. So acknowledged writes
//! must all survive, with `--sync=1` and with `--sync=0` alike.
//! `crashtest --power_loss=1` loses power instead (see `power_loss.rs`):
//! only synced writes must survive.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use lsm_demo::DB;
use rand::{Rng, SeedableRng};

use super::Error;
use super::expected::{Expected, Verified, verify};
use super::stress::{check_workload, clock_seed, expected_path, options, parse_bool};
use super::{MemtableRep, ReplayRng};

/// Longest `--max_run_ms` of `crashtest` (a stress child runs an hour).
pub const MAX_RUN_MS: u64 = 3_600_000;

/// Flags of `lsm-demo crashtest`.
#[derive(Debug, Clone, clap::Args)]
#[command(rename_all = "snake_case")]
pub struct CrashArgs {
    /// Database directory (default: a temporary directory).
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Kill-and-verify rounds.
    #[arg(long, default_value_t = 24)]
    pub kills: u32,
    /// Longest time a stress run lives before its kill, in milliseconds.
    #[arg(long, default_value_t = 1500)]
    pub max_run_ms: u64,
    /// Worker threads of each stress run.
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// Distinct keys.
    #[arg(long, default_value_t = 5_000)]
    pub keys: u32,
    /// Sync every write (1) or none (0).
    #[arg(long, default_value = "1", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub sync: bool,
    /// Memtable representation.
    #[arg(long, value_enum, default_value_t = MemtableRep::SkipList)]
    pub memtablerep: MemtableRep,
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
    /// Random seed (0: from the clock).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Simulate power losses instead of kills: the workload runs in this
    /// process on the fault-injecting file system, which drops every
    /// unsynced byte (or a random part of it) at a random moment. Needs
    /// --sync=1; --db is not used.
    #[arg(long, default_value = "0", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub power_loss: bool,
}

/// `lsm-demo crashtest`: start `stress`, SIGKILL it at a random moment,
/// reopen and verify; repeat.
pub fn crashtest(a: CrashArgs) -> Result<(), Error> {
    check_workload(a.threads, a.keys)?;
    if let Some(dir) = &a.db {
        super::check_db_dir(dir, "crashtest")?;
    }
    if a.kills == 0 {
        return Err(Error::usage("--kills must be at least 1"));
    }
    if a.max_run_ms == 0 || a.max_run_ms > MAX_RUN_MS {
        return Err(Error::usage(format!(
            "--max_run_ms={} is outside [1, {MAX_RUN_MS}]",
            a.max_run_ms
        )));
    }
    let opts = options(
        a.memtablerep,
        256 << 10,
        a.mmap_write,
        a.allow_concurrent_log_write,
        a.wal_stripes,
    );
    if a.power_loss {
        return super::power_loss::run(&a, &opts);
    }
    let seed = if a.seed == 0 { clock_seed() } else { a.seed };
    println!(
        "crashtest: seed {seed} (replay with --seed={seed}), {} kills, sync={}, {} threads, {} keys, memtable {}{}",
        a.kills,
        a.sync as u8,
        a.threads,
        a.keys,
        a.memtablerep,
        if a.mmap_write {
            ", mmap writes"
        } else if a.allow_concurrent_log_write && a.wal_stripes == 0 {
            ", one log file"
        } else if a.allow_concurrent_log_write {
            ""
        } else {
            ", one log writer at a time"
        }
    );
    let tmp;
    let dir = match &a.db {
        Some(d) => d.clone(),
        None => {
            tmp =
                tempfile::tempdir().map_err(|e| Error::io("creating a temporary directory", e))?;
            tmp.path().join("db")
        }
    };
    let expected = expected_path(&dir, &None);
    if !dir.exists() && expected.exists() {
        // Ours, left by a database since deleted: this one starts empty.
        std::fs::remove_file(&expected)
            .map_err(|e| Error::io(format!("removing {}", expected.display()), e))?;
        println!(
            "crashtest: {} is new: the expected state in {} starts over",
            dir.display(),
            expected.display()
        );
    }
    let exe =
        std::env::current_exe().map_err(|e| Error::io("finding the lsm-demo executable", e))?;
    let mut rng = ReplayRng::seed_from_u64(seed);
    let mut total = Verified::default();
    let mut survived = 0;
    let mut acked_writes = 0u64;
    let started = Instant::now();
    for round in 0..a.kills {
        let run_ms = rng.random_range(a.max_run_ms / 4..=a.max_run_ms);
        let mut child = std::process::Command::new(&exe)
            .arg("stress")
            .arg(format!("--db={}", dir.display()))
            .arg(format!("--threads={}", a.threads))
            .arg(format!("--keys={}", a.keys))
            .arg("--ops=0")
            .arg("--duration=3600")
            .arg(format!("--seed={}", seed.wrapping_add(round as u64 + 1)))
            .arg(format!("--sync={}", a.sync as u8))
            .arg(format!("--memtablerep={}", a.memtablerep))
            .arg(format!("--mmap_write={}", a.mmap_write as u8))
            .arg(format!(
                "--allow_concurrent_log_write={}",
                a.allow_concurrent_log_write as u8
            ))
            .arg(format!("--wal_stripes={}", a.wal_stripes))
            .arg("--report_every_ms=20")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| Error::io("starting stress", e))?;
        // Keep the last progress line; reading also keeps the pipe from
        // filling up in long runs.
        let progress = child.stdout.take().map(|out| {
            std::thread::spawn(move || {
                use std::io::BufRead;
                let mut last = 0u64;
                for line in std::io::BufReader::new(out).lines() {
                    let Ok(line) = line else { break };
                    if let Some(n) = line
                        .strip_prefix("progress: ")
                        .and_then(|r| r.split(' ').next())
                        .and_then(|n| n.parse().ok())
                    {
                        last = n;
                    }
                }
                last
            })
        });
        std::thread::sleep(Duration::from_millis(run_ms));
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            if let Some(mut s) = child.stderr.take() {
                use std::io::Read;
                let _ = s.read_to_string(&mut err);
            }
            return Err(Error::Verification(format!(
                "round {round}: stress exited early ({status}): {err}"
            )));
        }
        child.kill().map_err(|e| Error::io("killing stress", e))?; // SIGKILL
        let _ = child.wait();
        let acked = progress.and_then(|h| h.join().ok()).unwrap_or(0);
        acked_writes += acked;
        survived += 1;
        let db = DB::open(&opts, &dir)
            .map_err(|e| Error::engine(format!("round {round}: reopening"), e))?;
        let exp = Expected::open(&expected, a.keys)
            .map_err(|e| Error::io("opening the expected state", e))?;
        let v = verify(&db, &exp, a.keys)?;
        total += v;
        println!(
            "round {round:3}: killed after {run_ms} ms, >= {acked} acknowledged writes; {} keys verified, {} in flight, {} lost or wrong",
            v.keys, v.pending, v.mismatches
        );
        if v.mismatches > 0 {
            return Err(Error::Verification(format!(
                "round {round}: {} acknowledged writes lost or wrong (seed {seed})",
                v.mismatches
            )));
        }
        // A kill keeps all the engine handed to the OS: what recovery
        // finds is a crash's leftovers, never damage to keep as evidence.
        let set_aside = db.stats().recovery.files_set_aside;
        if !set_aside.is_empty() {
            return Err(Error::Verification(format!(
                "round {round}: recovery set {set_aside:?} aside after a kill (seed {seed}): \
                 it took a crash's leftovers for damage"
            )));
        }
    }
    println!(
        "crashtest: sync={}: {survived} kills survived in {:.0} s, >= {acked_writes} acknowledged writes, {} key checks ({} exact, {} in flight) and {} scanned entries, acknowledged writes lost: {}",
        a.sync as u8,
        started.elapsed().as_secs_f64(),
        total.keys,
        total.exact,
        total.pending,
        total.scanned,
        total.mismatches
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::parse_flags;

    fn crash_args(flags: &[&str]) -> CrashArgs {
        let db = ["--db=/nonexistent/crash-db"];
        parse_flags(&[&db[..], flags].concat()).unwrap()
    }

    #[test]
    fn out_of_range_crashtest_flags_are_named() {
        for (flag, named) in [
            ("--kills=0", "--kills"),
            ("--max_run_ms=0", "--max_run_ms=0"),
            ("--max_run_ms=99999999", "--max_run_ms=99999999"),
            ("--threads=0", "--threads=0"),
            ("--keys=0", "--keys=0"),
        ] {
            let e = crashtest(crash_args(&[flag])).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{flag}: {e}");
            assert!(e.to_string().contains(named), "{flag}: {e}");
        }
        let bad_rep = parse_flags::<CrashArgs>(&["--memtablerep=hash"]).unwrap_err();
        assert!(bad_rep.to_string().contains("invalid value 'hash'"));
        let bad_bool = parse_flags::<CrashArgs>(&["--sync=2"]).unwrap_err();
        assert!(
            bad_bool
                .to_string()
                .contains("expected 0, 1, true or false")
        );
    }
}
