//! `lsm-demo crashtest --power_loss=1`: the stress workload over the
//! fault-injecting file system, with the power cut at random moments, as
//! RocksDB's `db_stress` does over `FaultInjectionTestFS`.
//!
//! Each round opens the database (recovering from the last power loss),
//! verifies every key and a full scan against the expected state, runs the
//! workers for a random time, then cuts the power while they write: every
//! byte not yet synced is dropped, or some of it is kept (a torn write: a
//! prefix of an appended file's, any set of a positional log's pages).
//! Every call fails from the cut until the next open, so the engine still
//! running in the process cannot reach the disk as it comes back. Writes
//! are synced, so every acknowledged write must come back;
//! a write in flight at the cut may come back or not. The expected state
//! lives in memory: the process itself never dies.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lsm_demo::env::FaultInjectionFs;
use lsm_demo::{DB, Options, WriteOptions};
use rand::{Rng, SeedableRng};

use super::crashtest::CrashArgs;
use super::expected::{Expected, Verified, verify};
use super::stress::{clock_seed, one_op};
use super::{Error, ReplayRng};

const DIR: &str = "/power-loss/db";

/// Runs `a.kills` power losses; an acknowledged write lost is an error.
pub fn run(a: &CrashArgs, opts: &Options) -> Result<(), Error> {
    if !a.sync {
        return Err(Error::usage(
            "--power_loss needs --sync=1: a power loss may drop unsynced writes",
        ));
    }
    let seed = if a.seed == 0 { clock_seed() } else { a.seed };
    println!(
        "crashtest: seed {seed} (replay with --seed={seed}), {} power losses, {} threads, {} keys, memtable {}",
        a.kills, a.threads, a.keys, a.memtablerep
    );
    let fs = FaultInjectionFs::new();
    let exp = Expected::in_memory(a.keys);
    let mut rng = ReplayRng::seed_from_u64(seed);
    let mut total = Verified::default();
    let mut acked_writes = 0;
    let started = Instant::now();
    for round in 0..a.kills {
        let db = DB::open_with_fs(opts, DIR, Arc::new(fs.clone())).map_err(|e| {
            Error::engine(
                format!("round {round}: reopening after a power loss (seed {seed})"),
                e,
            )
        })?;
        let v = verify(&db, &exp, a.keys)?;
        total += v;
        if v.mismatches > 0 {
            return Err(Error::Verification(format!(
                "round {round}: {} acknowledged writes lost or wrong (seed {seed})",
                v.mismatches
            )));
        }
        let run_ms = rng.random_range(a.max_run_ms / 4..=a.max_run_ms);
        let torn = rng.random_bool(0.5).then(|| rng.random::<u64>());
        let round_seed = seed.wrapping_add(round as u64 + 1);
        let acked = run_until_power_loss(
            &db,
            &exp,
            a,
            round_seed,
            Duration::from_millis(run_ms),
            || fs.simulate_power_loss(torn),
        )?;
        acked_writes += acked;
        drop(db);
        fs.clear_faults();
        println!(
            "round {round:3}: power lost after {run_ms} ms ({}), {acked} acknowledged writes; {} keys verified on open, {} were in flight",
            if torn.is_some() {
                "unsynced bytes torn"
            } else {
                "unsynced bytes dropped"
            },
            v.keys,
            v.pending
        );
    }
    let db = DB::open_with_fs(opts, DIR, Arc::new(fs.clone())).map_err(|e| {
        Error::engine(
            format!("reopening after the last power loss (seed {seed})"),
            e,
        )
    })?;
    let v = verify(&db, &exp, a.keys)?;
    total += v;
    println!(
        "crashtest: sync=1 power_loss=1: {} power losses survived in {:.0} s, {acked_writes} acknowledged writes, {} key checks ({} exact, {} in flight) and {} scanned entries, acknowledged writes lost: {}",
        a.kills,
        started.elapsed().as_secs_f64(),
        total.keys,
        total.exact,
        total.pending,
        total.scanned,
        total.mismatches
    );
    if v.mismatches > 0 {
        return Err(Error::Verification(format!(
            "after the last power loss: {} acknowledged writes lost or wrong (seed {seed})",
            v.mismatches
        )));
    }
    Ok(())
}

/// Runs the workers for `run_for`, then calls `cut_power` while they still
/// write and stops them. Errors after the cut are the expected effect of
/// the cut; one before it is a failure. Returns the acknowledged writes.
fn run_until_power_loss(
    db: &DB,
    exp: &Expected,
    a: &CrashArgs,
    seed: u64,
    run_for: Duration,
    cut_power: impl FnOnce(),
) -> Result<u64, Error> {
    let locks: Vec<Mutex<()>> = (0..a.keys).map(|_| Mutex::new(())).collect();
    let next_id = AtomicU64::new(1 + (seed % 1000) * 1_000_000);
    let acked = AtomicU64::new(0);
    let (stop, cut) = (AtomicBool::new(false), AtomicBool::new(false));
    let failure = Mutex::new(None::<Error>);
    std::thread::scope(|s| {
        for t in 0..a.threads {
            let (locks, next_id, acked, stop, cut, failure) =
                (&locks, &next_id, &acked, &stop, &cut, &failure);
            s.spawn(move || {
                let mut rng = ReplayRng::seed_from_u64(seed.wrapping_add(t as u64 * 7919));
                let mut wo = WriteOptions::default();
                wo.set_sync(true);
                // Relaxed: flags that end a loop; nothing is published
                // through them.
                while !stop.load(Ordering::Relaxed) {
                    match one_op(db, exp, locks, next_id, &wo, a.keys, &mut rng) {
                        Ok(wrote) => {
                            acked.fetch_add(u64::from(wrote), Ordering::Relaxed);
                        }
                        Err(e) => {
                            // SeqCst: the cut is stored before any error it causes.
                            if !cut.load(Ordering::SeqCst) {
                                *failure.lock().expect("lock") = Some(e);
                                // Relaxed: as the loop's load.
                                stop.store(true, Ordering::Relaxed);
                            }
                            break;
                        }
                    }
                }
            });
        }
        std::thread::sleep(run_for);
        cut.store(true, Ordering::SeqCst);
        cut_power();
        // Relaxed: as the loop's load; the scope's join orders the rest.
        stop.store(true, Ordering::Relaxed);
    });
    match failure.into_inner().expect("lock") {
        Some(e) => Err(e.context("before the power loss")),
        None => Ok(acked.into_inner()),
    }
}
