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
//! A power loss here is `power_off` (in `common/faults.rs`).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use lsm_demo::MemtableKind;
use lsm_demo::env::FaultInjectionFs;

mod common;
use common::faults::*;

/// Four threads write synced puts, deletes and batches to keys of their own;
/// the power goes off while they run (during flushes and compactions, with
/// 64 KiB memtables); the reopened database holds every acknowledged write,
/// and the one write each thread had in flight entirely or not at all.
fn synced_writers_survive_power_loss(kind: MemtableKind, torn: bool, seed: u64) {
    const THREADS: usize = 4;
    let fs = FaultInjectionFs::new();
    let o = options(kind);
    let mut rng = Rng::new(seed);
    let mut models: Vec<State> = vec![State::new(); THREADS];
    for round in 0..3u64 {
        let db = open(&fs, &o).expect("open");
        let target = 100 + rng.below(1200);
        let acked = AtomicU64::new(0);
        let stop = AtomicBool::new(false);
        let results: Vec<(State, Option<Op>)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..THREADS)
                .map(|t| {
                    let (db, acked, stop) = (&db, &acked, &stop);
                    let mut model = models[t].clone();
                    s.spawn(move || {
                        let mut rng = Rng::new(seed ^ (round << 32) ^ (t as u64 + 1) << 48);
                        let wo = write_options(true);
                        let name = move |k: u64| thread_key(t, k);
                        for i in 0.. {
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
                    })
                })
                .collect();
            let deadline = Instant::now() + Duration::from_secs(20);
            while acked.load(Ordering::Relaxed) < target
                && !handles.iter().all(|h| h.is_finished())
                && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_micros(200));
            }
            power_off(&fs, torn.then_some(seed ^ round));
            stop.store(true, Ordering::Relaxed);
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(
            acked.load(Ordering::Relaxed) >= target,
            "seed {seed}: writers failed before the power loss"
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
    synced_writers_survive_power_loss(MemtableKind::SkipList, false, 1);
    synced_writers_survive_power_loss(MemtableKind::SkipList, true, 2);
}

#[test]
fn synced_writes_survive_power_loss_vector() {
    synced_writers_survive_power_loss(MemtableKind::Vector, false, 3);
    synced_writers_survive_power_loss(MemtableKind::Vector, true, 4);
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
fn unsynced_writes_lose_only_a_tail(kind: MemtableKind, sync_percent: u64, seed: u64) {
    let fs = FaultInjectionFs::new();
    let o = options(kind);
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
        power_off(&fs, torn);
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
    for seed in 0..3 {
        unsynced_writes_lose_only_a_tail(MemtableKind::SkipList, 0, 10 + seed);
        unsynced_writes_lose_only_a_tail(MemtableKind::SkipList, 3, 20 + seed);
    }
}

#[test]
fn unsynced_writes_lose_only_a_tail_vector() {
    for seed in 0..2 {
        unsynced_writes_lose_only_a_tail(MemtableKind::Vector, 0, 30 + seed);
        unsynced_writes_lose_only_a_tail(MemtableKind::Vector, 3, 40 + seed);
    }
}

/// `flush_wal(true)` makes every write acknowledged before it durable, as
/// if each had been written with `sync` (RocksDB's `FlushWAL(true)`);
/// writes after it may be lost, but only as a tail.
#[test]
fn flush_wal_makes_earlier_unsynced_writes_survive_power_loss() {
    for kind in [MemtableKind::SkipList, MemtableKind::Vector] {
        let fs = FaultInjectionFs::new();
        let o = options(kind);
        let db = open(&fs, &o).unwrap();
        for i in 0..200u32 {
            db.put(i.to_be_bytes(), i.to_le_bytes()).unwrap();
        }
        db.flush_wal(false).unwrap(); // nothing to do: no log buffer
        db.flush_wal(true).unwrap();
        for i in 200..300u32 {
            db.put(i.to_be_bytes(), i.to_le_bytes()).unwrap();
        }
        power_off(&fs, None);
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
