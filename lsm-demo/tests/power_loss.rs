//! The engine over [`FaultInjectionFs`] through simulated power losses
//! (clean and torn), without injected errors; `fault_injection.rs` injects
//! them.
//!
//! What must hold:
//!
//! - every write acknowledged with `sync = true` (or followed by a
//!   successful `flush` or `flush_wal(true)`) survives a power loss;
//! - after a power loss the state is the model state after some prefix of
//!   the acknowledged writes (only a tail of unsynced writes may go, never an
//!   older write, never half a batch, never a value that was not written).
//!
//! A power loss here is `FaultInjectionFs::simulate_power_loss`.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use lsm_demo::MemtableKind;
use lsm_demo::env::FaultInjectionFs;

mod common;
use common::faults::*;

/// Writer threads of each power-loss test.
const THREADS: usize = 4;

/// Runs `write(t, stop, acked)` on `THREADS` threads, each until `stop` is
/// set or one of its writes fails, counting its acknowledged writes in
/// `acked`; cuts the power (torn from the seed `torn`) once `target` writes
/// were acknowledged, every writer stopped or 20 s passed, and returns each
/// thread's result. Fails if the writers stopped short of `target`.
fn write_until_power_loss<R: Send>(
    fs: &FaultInjectionFs,
    target: u64,
    torn: Option<u64>,
    write: impl Fn(usize, &AtomicBool, &AtomicU64) -> R + Sync,
) -> Vec<R> {
    let acked = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (write, stop, acked) = (&write, &stop, &acked);
                s.spawn(move || write(t, stop, acked))
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(20);
        // Relaxed, here and in the writers: counts and a stop flag that publish
        // nothing; the joins order the rest.
        while acked.load(Ordering::Relaxed) < target
            && !handles.iter().all(|h| h.is_finished())
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_micros(100));
        }
        fs.simulate_power_loss(torn);
        stop.store(true, Ordering::Relaxed);
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(
        acked.load(Ordering::Relaxed) >= target,
        "writers failed before the power loss"
    );
    results
}

/// Four threads write synced puts, deletes and batches to keys of their own;
/// the power goes off while they run (during flushes and compactions, with
/// 64 KiB memtables); the reopened database holds every acknowledged write,
/// and the one write each thread had in flight entirely or not at all.
/// `log` picks how records reach the log.
fn synced_writers_survive_power_loss(kind: MemtableKind, log: LogWrites, torn: bool, seed: u64) {
    let fs = FaultInjectionFs::new();
    let o = log.options(kind);
    let mut rng = Rng::new(seed);
    let mut models: Vec<State> = vec![State::new(); THREADS];
    for round in 0..3u64 {
        let db = open(&fs, &o).expect("open");
        let target = 100 + rng.below(1200);
        let results: Vec<(State, Option<Op>)> = write_until_power_loss(
            &fs,
            target,
            torn.then_some(seed ^ round),
            |t, stop, acked| {
                let mut model = models[t].clone();
                let mut rng = Rng::new(seed ^ (round << 32) ^ (t as u64 + 1) << 48);
                let wo = write_options(true);
                let name = move |k: u64| thread_key(t, k);
                for i in 0.. {
                    // Relaxed, the flag and the count: they publish nothing.
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let tag = (round << 40) | ((t as u64) << 32) | i;
                    let op = random_op(&mut rng, tag, 60, &name);
                    match db.write_opt(batch_of(&op), &wo) {
                        Ok(()) => {
                            apply(&mut model, &op);
                            acked.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => return (model, Some(op)),
                    }
                }
                (model, None)
            },
        );
        reboot(&fs, db);
        let db = open(&fs, &o).unwrap_or_else(|e| panic!("seed {seed} round {round}: {e}"));
        let actual = scan(&db);
        let mut seen = 0;
        for (t, (model, in_flight)) in results.into_iter().enumerate() {
            let mine = thread_entries(&actual, t);
            seen += mine.len();
            let mut with_op = model.clone();
            if let Some(op) = &in_flight {
                apply(&mut with_op, op);
            }
            assert!(
                mine == model || mine == with_op,
                "seed {seed} round {round} thread {t}: acknowledged synced writes lost \
                 ({} keys expected, {} found)",
                model.len(),
                mine.len()
            );
            models[t] = mine;
        }
        assert_eq!(seen, actual.len(), "seed {seed}: keys nobody wrote");
        drop(db);
    }
}

#[test]
fn synced_writes_survive_power_loss_skiplist() {
    use LogWrites::*;
    synced_writers_survive_power_loss(MemtableKind::SkipList, Positional, false, 1);
    synced_writers_survive_power_loss(MemtableKind::SkipList, Positional, true, 2);
    synced_writers_survive_power_loss(MemtableKind::SkipList, Appended, true, 5);
    synced_writers_survive_power_loss(MemtableKind::SkipList, Striped, true, 7);
}

#[test]
fn synced_writes_survive_power_loss_vector() {
    use LogWrites::*;
    synced_writers_survive_power_loss(MemtableKind::Vector, Positional, false, 3);
    synced_writers_survive_power_loss(MemtableKind::Vector, Positional, true, 4);
    synced_writers_survive_power_loss(MemtableKind::Vector, Appended, false, 6);
}

/// Four threads write to keys of their own, a quarter of their writes
/// synced, the rest not; the power goes off while they run. Each thread's
/// keys come back as its model after a prefix of its writes (its write in
/// flight last) that holds every write it saw acknowledged up to its last
/// synced one. The log is written positionally: a synced write's sync
/// must cover every earlier write's record, synced or not, or a power loss
/// that keeps the synced record's page and drops an earlier one leaves a
/// gap that recovery stops at, before the synced write.
fn mixed_writers_keep_every_synced_write(kind: MemtableKind, log: LogWrites, seed: u64) {
    let fs = FaultInjectionFs::new();
    let o = log.options(kind);
    let mut rng = Rng::new(seed);
    let mut bases: Vec<State> = vec![State::new(); THREADS];
    for round in 0..8u64 {
        let db = open(&fs, &o).expect("open");
        let target = 200 + rng.below(2000);
        let torn = rng.percent(75).then(|| rng.next());
        // Per thread: its writes (the one in flight last) and how many of
        // them a synced write made durable.
        let results: Vec<(Vec<Op>, usize)> =
            write_until_power_loss(&fs, target, torn, |t, stop, acked| {
                let mut rng = Rng::new(seed ^ (round << 32) ^ (t as u64 + 1) << 48);
                let name = move |k: u64| thread_key(t, k);
                let (mut history, mut durable) = (Vec::new(), 0);
                for i in 0.. {
                    // Relaxed, the flag and the count: they publish nothing.
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let tag = (round << 40) | ((t as u64) << 32) | i;
                    let op = random_op(&mut rng, tag, 60, &name);
                    let sync = rng.percent(25);
                    let written = db.write_opt(batch_of(&op), &write_options(sync));
                    history.push(op);
                    match written {
                        Ok(()) if sync => durable = history.len(),
                        Ok(()) => {}
                        Err(_) => break,
                    }
                    acked.fetch_add(1, Ordering::Relaxed);
                }
                (history, durable)
            });
        reboot(&fs, db);
        let db = open(&fs, &o).unwrap_or_else(|e| panic!("seed {seed} round {round}: {e}"));
        let actual = scan(&db);
        let mut seen = 0;
        for (t, (history, durable)) in results.into_iter().enumerate() {
            let mine = thread_entries(&actual, t);
            seen += mine.len();
            let prefixes = matching_prefixes(&bases[t], &history, &mine);
            assert!(
                prefixes.last().is_some_and(|&k| k >= durable),
                "seed {seed} round {round} thread {t}: its keys are its model after prefixes \
                 {prefixes:?} of {} writes, but writes up to {durable} were synced",
                history.len()
            );
            bases[t] = mine;
        }
        assert_eq!(seen, actual.len(), "seed {seed}: keys nobody wrote");
        drop(db);
    }
}

#[test]
fn mixed_writers_keep_every_synced_write_skiplist() {
    for seed in 0..4 {
        mixed_writers_keep_every_synced_write(
            MemtableKind::SkipList,
            LogWrites::Positional,
            70 + seed,
        );
    }
    mixed_writers_keep_every_synced_write(MemtableKind::SkipList, LogWrites::Appended, 80);
    // A synced write's sync covers the records of every stripe.
    for seed in 0..3 {
        mixed_writers_keep_every_synced_write(
            MemtableKind::SkipList,
            LogWrites::Striped,
            100 + seed,
        );
    }
}

#[test]
fn mixed_writers_keep_every_synced_write_vector() {
    mixed_writers_keep_every_synced_write(MemtableKind::Vector, LogWrites::Positional, 90);
}

/// How records reach the log: each writer's with a positioned write of its
/// own into the log file, the same into three stripe files (`wal_stripes`), or
/// appended by one thread at a time (`allow_concurrent_log_write` off). A
/// power loss keeps any set of the unsynced pages of the first two (of
/// each file), a prefix of the unsynced bytes of the last (see
/// `FaultInjectionFs::simulate_crash_torn`).
#[derive(Clone, Copy, Debug)]
enum LogWrites {
    Positional,
    Striped,
    Appended,
}

impl LogWrites {
    fn options(self, kind: MemtableKind) -> lsm_demo::Options {
        let mut o = options(kind);
        o.set_allow_concurrent_log_write(!matches!(self, LogWrites::Appended))
            .set_wal_stripes(match self {
                LogWrites::Striped => 3,
                _ => 0,
            });
        o
    }
}

/// The prefixes `k` of `history` whose model state (from `base`) equals
/// `actual`, in increasing order. Keeps a count of the keys where the
/// model and `actual` differ, updated per change, so it is linear.
fn matching_prefixes(base: &State, history: &[Op], actual: &State) -> Vec<usize> {
    let mut model = base.clone();
    let keys: BTreeSet<&Vec<u8>> = base.keys().chain(actual.keys()).collect();
    let mut differ = keys
        .iter()
        .filter(|k| model.get(**k) != actual.get(**k))
        .count();
    let mut out = Vec::new();
    if differ == 0 {
        out.push(0);
    }
    for (i, op) in history.iter().enumerate() {
        for (k, v) in op {
            let before = model.get(k) == actual.get(k);
            match v {
                Some(v) => model.insert(k.clone(), v.clone()),
                None => model.remove(k),
            };
            let after = model.get(k) == actual.get(k);
            match (before, after) {
                (true, false) => differ += 1,
                (false, true) => differ -= 1,
                _ => {}
            }
        }
        if differ == 0 {
            out.push(i + 1);
        }
    }
    out
}

/// One writer, mostly unsynced writes: after each power loss the state is
/// the model after a prefix of the acknowledged writes that reaches the
/// last synced write (or successful `flush`).
fn unsynced_writes_lose_only_a_tail(
    kind: MemtableKind,
    log: LogWrites,
    sync_percent: u64,
    seed: u64,
) {
    let fs = FaultInjectionFs::new();
    let o = log.options(kind);
    let mut rng = Rng::new(seed);
    let mut base = State::new();
    for round in 0..4u64 {
        let db = open(&fs, &o).expect("open");
        assert_eq!(scan(&db), base);
        let n = 50 + rng.below(1500);
        let mut history = Vec::new();
        let mut durable = 0;
        let mut model = base.clone();
        for i in 0..n {
            let op = random_op(&mut rng, (round << 32) | i, 150, &key_name);
            let sync = rng.percent(sync_percent);
            db.write_opt(batch_of(&op), &write_options(sync))
                .expect("no faults: every write succeeds");
            apply(&mut model, &op);
            history.push(op);
            if sync {
                durable = history.len();
            }
            if rng.percent(1) {
                db.flush().expect("flush");
                durable = history.len();
            }
            if rng.percent(2) {
                let k = key_name(rng.below(150)).into_bytes();
                assert_eq!(db.get(&k).unwrap(), model.get(&k).cloned());
            }
        }
        let torn = rng.percent(50).then(|| rng.next());
        fs.simulate_power_loss(torn);
        reboot(&fs, db);
        let db = open(&fs, &o).unwrap_or_else(|e| panic!("seed {seed} round {round}: {e}"));
        let actual = scan(&db);
        let prefixes = matching_prefixes(&base, &history, &actual);
        assert!(
            prefixes.last().is_some_and(|&k| k >= durable),
            "seed {seed} round {round}: the state after the power loss is the model after \
             prefixes {prefixes:?} of {} writes, but writes up to {durable} were durable",
            history.len()
        );
        base = actual;
    }
}

#[test]
fn unsynced_writes_lose_only_a_tail_skiplist() {
    use LogWrites::*;
    for seed in 0..3 {
        unsynced_writes_lose_only_a_tail(MemtableKind::SkipList, Positional, 0, 10 + seed);
        unsynced_writes_lose_only_a_tail(MemtableKind::SkipList, Positional, 3, 20 + seed);
    }
    unsynced_writes_lose_only_a_tail(MemtableKind::SkipList, Appended, 3, 50);
    unsynced_writes_lose_only_a_tail(MemtableKind::SkipList, Striped, 0, 51);
    unsynced_writes_lose_only_a_tail(MemtableKind::SkipList, Striped, 3, 52);
}

#[test]
fn unsynced_writes_lose_only_a_tail_vector() {
    use LogWrites::*;
    for seed in 0..2 {
        unsynced_writes_lose_only_a_tail(MemtableKind::Vector, Positional, 0, 30 + seed);
        unsynced_writes_lose_only_a_tail(MemtableKind::Vector, Positional, 3, 40 + seed);
    }
    unsynced_writes_lose_only_a_tail(MemtableKind::Vector, Appended, 0, 60);
}

/// `flush_wal(true)` makes every write acknowledged before it durable, as
/// if each had been written with `sync` (RocksDB's `FlushWAL(true)`);
/// writes after it may be lost, but only as a tail.
#[test]
fn flush_wal_makes_earlier_unsynced_writes_survive_power_loss() {
    for (kind, log) in [
        (MemtableKind::SkipList, LogWrites::Positional),
        (MemtableKind::SkipList, LogWrites::Striped),
        (MemtableKind::Vector, LogWrites::Appended),
    ] {
        let fs = FaultInjectionFs::new();
        let o = log.options(kind);
        let db = open(&fs, &o).unwrap();
        for i in 0..200u32 {
            db.put(i.to_be_bytes(), i.to_le_bytes()).unwrap();
        }
        db.flush_wal(false).unwrap(); // nothing to do: no log buffer
        db.flush_wal(true).unwrap();
        for i in 200..300u32 {
            db.put(i.to_be_bytes(), i.to_le_bytes()).unwrap();
        }
        fs.simulate_power_loss(None);
        reboot(&fs, db);
        let db = open(&fs, &o).unwrap();
        let state = scan(&db);
        for i in 0..200u32 {
            let v = state.get(i.to_be_bytes().as_slice());
            assert_eq!(
                v.map(Vec::as_slice),
                Some(&i.to_le_bytes()[..]),
                "{kind:?} key {i}"
            );
        }
        // The later, unsynced writes: a prefix of them at most.
        let later: Vec<u32> = (200..300u32)
            .filter(|i| state.contains_key(i.to_be_bytes().as_slice()))
            .collect();
        assert!(
            later.iter().copied().eq(200..200 + later.len() as u32),
            "{kind:?}: {later:?}"
        );
    }
}

/// A closing database ends a positional log with a trailer only once a
/// sync made its records durable. When that sync fails, the log gets no
/// trailer: a power loss that keeps some of its pages and drops earlier
/// ones leaves what recovery reads as writes in flight, a torn tail that
/// even `TolerateCorruptedTailRecords` opens past. (A trailer after
/// unsynced records could survive where a record did not: damage before
/// a closed log's end, which that mode refuses.)
#[test]
fn a_log_whose_records_were_not_synced_at_close_gets_no_trailer() {
    for seed in 1..30u64 {
        let fs = FaultInjectionFs::new();
        let mut o = LogWrites::Positional.options(MemtableKind::SkipList);
        o.set_wal_recovery_mode(lsm_demo::wal::DBRecoveryMode::TolerateCorruptedTailRecords);
        let db = open(&fs, &o).expect("open");
        // About six pages of log, none synced.
        for i in 0..100u32 {
            db.put(i.to_be_bytes(), [7u8; 200]).unwrap();
        }
        fs.fail_next(lsm_demo::env::FaultOp::Sync, 2);
        drop(db);
        fs.simulate_power_loss(Some(seed));
        fs.clear_faults();
        let db = open(&fs, &o).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let kept: Vec<u32> = scan(&db)
            .keys()
            .map(|k| u32::from_be_bytes(k[..].try_into().unwrap()))
            .collect();
        assert!(
            kept.iter().copied().eq(0..kept.len() as u32),
            "seed {seed}: {kept:?}"
        );
    }
}
