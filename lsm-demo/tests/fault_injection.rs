//! The engine over [`FaultInjectionFs`] with injected I/O errors on every
//! kind of file-system call, alone or followed by a simulated power loss
//! (`log_faults.rs` has the log's own failures, `power_loss.rs` the power
//! losses without errors).
//!
//! What must hold, whatever fails:
//!
//! - every write acknowledged with `sync = true` (or followed by a
//!   successful `flush`) survives a power loss;
//! - after a power loss the state is the model state after some prefix of
//!   the acknowledged writes (only a tail of unsynced writes may go, never an
//!   older write, never half a batch, never a value that was not written);
//! - without a power loss, every acknowledged write survives a reopen;
//! - a failed call gives the writer concerned an error, or the engine keeps
//!   working; and the database always reopens once the faults are cleared.
//!
//! A power loss here is `FaultInjectionFs::simulate_power_loss`: first every
//! file-system call starts to fail, so the engine that is still running in
//! this process (its writers, its background thread, its `Drop`) cannot
//! touch the disk as it comes back, then the unsynced data is dropped.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
use lsm_demo::{DB, Error, ErrorKind, IteratorMode, MemtableKind, Options, WriteBatch};

mod common;
use common::faults::*;
use common::{GatedTables, Snapshot, restore_into};

// ---------------------------------------------------------------------------
// Injected failures
// ---------------------------------------------------------------------------

/// One write of a single-writer history and what the engine said.
#[derive(Debug)]
struct Attempt {
    op: Op,
    acked: bool,
}

/// Checks a recovered state against a single-writer history whose writes
/// may have failed.
///
/// `durable` counts the attempts that must have survived (those before the
/// last acknowledged synced write or successful flush after a power loss;
/// every acknowledged one otherwise). Failed writes among them must not
/// show. From the newest write that shows, every older acknowledged write
/// must show too (or be overwritten by a newer one): only a tail is lost.
/// Batches show entirely or not at all, and no value appears that was
/// never written.
fn check_recovered(
    base: &State,
    history: &[Attempt],
    durable: usize,
    actual: &State,
) -> Result<(), String> {
    // The attempt that wrote each (key, value).
    let mut writer_of: HashMap<(&[u8], &[u8]), usize> = HashMap::new();
    let mut deleted_by: HashMap<&[u8], Vec<usize>> = HashMap::new();
    let mut touched: BTreeSet<&[u8]> = BTreeSet::new();
    for (i, a) in history.iter().enumerate() {
        for (k, v) in &a.op {
            touched.insert(k);
            match v {
                Some(v) => {
                    writer_of.insert((k, v), i);
                }
                None => deleted_by.entry(k).or_default().push(i),
            }
        }
    }
    // Which attempt each key's value comes from (None: the base state).
    let mut origin: BTreeMap<&[u8], Option<usize>> = BTreeMap::new();
    for (k, v) in actual {
        if base.get(k) == Some(v) && !writer_of.contains_key(&(&k[..], &v[..])) {
            origin.insert(k, None);
            continue;
        }
        match writer_of.get(&(&k[..], &v[..])) {
            Some(&i) => {
                origin.insert(k, Some(i));
            }
            None => {
                return Err(format!(
                    "key {:?} holds a value never written there (tag {:?})",
                    String::from_utf8_lossy(k),
                    tag_of(v)
                ));
            }
        }
    }
    for (k, v) in base {
        if !touched.contains(&k[..]) && actual.get(k) != Some(v) {
            return Err(format!(
                "key {:?}, never written in this history, changed",
                String::from_utf8_lossy(k)
            ));
        }
        if !actual.contains_key(k) && !deleted_by.contains_key(&k[..]) {
            return Err(format!(
                "key {:?} vanished without a delete",
                String::from_utf8_lossy(k)
            ));
        }
    }
    let shows = |i: usize| -> bool {
        history[i]
            .op
            .iter()
            .any(|(k, v)| v.is_some() && origin.get(&k[..]) == Some(&Some(i)))
    };
    // Failed writes before the durable point were never applied.
    for (i, a) in history.iter().enumerate().take(durable) {
        if !a.acked && shows(i) {
            return Err(format!(
                "write {i} failed, yet shows although later writes were acknowledged"
            ));
        }
    }
    // Whether write `j`'s change to `k` shows, or a newer write to `k` does.
    let in_effect = |j: usize, k: &[u8], change: &Option<Vec<u8>>| match (actual.get(k), change) {
        (Some(v), _) => origin
            .get(k)
            .copied()
            .flatten()
            .is_some_and(|i| i > j || (i == j && change.as_ref() == Some(v))),
        (None, None) => true,
        (None, Some(_)) => deleted_by
            .get(k)
            .is_some_and(|ds| ds.iter().any(|&d| d > j)),
    };
    let newest_shown = (0..history.len()).rev().find(|&i| shows(i));
    let must = durable.max(newest_shown.map_or(0, |i| i + 1));
    for (j, a) in history.iter().enumerate().take(must) {
        // Failed writes are optional, acknowledged ones are not; a batch
        // that shows in part must show whole.
        if !a.acked && !shows(j) {
            continue;
        }
        for (k, change) in &a.op {
            let ok = in_effect(j, k, change);
            if !ok {
                return Err(format!(
                    "write {j} ({}) to key {:?} is lost although {} (durable up to {durable}, \
                     newest write shown: {newest_shown:?}, key holds {:?})",
                    if a.acked { "acknowledged" } else { "failed" },
                    String::from_utf8_lossy(k),
                    if j < durable {
                        "it was durable"
                    } else {
                        "a newer write survived"
                    },
                    actual.get(k).map(|v| tag_of(v))
                ));
            }
        }
    }
    // A batch whose one key shows must show whole, wherever it lies.
    for (j, a) in history.iter().enumerate() {
        if a.op.len() < 2 || !shows(j) {
            continue;
        }
        for (k, change) in &a.op {
            let ok = in_effect(j, k, change);
            if !ok {
                return Err(format!(
                    "batch {j} shows in part: key {:?} lacks its change",
                    String::from_utf8_lossy(k)
                ));
            }
        }
    }
    Ok(())
}

/// Runs `n` single-writer operations (writes, some synced, some reads, a
/// few flushes), recording each write's outcome. In-process reads must
/// equal the model of acknowledged writes or fail. Returns the durable
/// point if the power fails now, and if the process merely exits.
fn run_history(
    db: &DB,
    rng: &mut Rng,
    round: u64,
    n: u64,
    base: &State,
    history: &mut Vec<Attempt>,
) -> (usize, usize) {
    let mut model = base.clone();
    let mut synced = 0;
    let mut acked = 0;
    for i in 0..n {
        if rng.percent(10) {
            let k = key_name(rng.below(120)).into_bytes();
            match db.get(&k) {
                Ok(v) => assert_eq!(v, model.get(&k).cloned(), "a read met a wrong value"),
                Err(Error::Io { .. } | Error::Corruption(_)) => {}
                Err(e) => panic!("unexpected read error: {e}"),
            }
            continue;
        }
        if rng.percent(2) {
            if db.flush().is_ok() {
                synced = history.len();
            }
            continue;
        }
        let op = random_op(rng, (round << 32) | i, 120, &key_name);
        let sync = rng.percent(30);
        let result = db.write_opt(batch_of(&op), &write_options(sync));
        let ok = result.is_ok();
        if ok {
            apply(&mut model, &op);
        }
        history.push(Attempt { op, acked: ok });
        if ok {
            acked = history.len();
            if sync {
                synced = history.len();
            }
        }
    }
    (synced, acked)
}

/// Enables one to three random fault rules (each call of the chosen kinds
/// failing with a small probability).
fn random_faults(fs: &FaultInjectionFs, rng: &mut Rng) -> Vec<(FaultOp, f64)> {
    const CANDIDATES: [FaultOp; 9] = [
        FaultOp::Create,
        FaultOp::Append,
        FaultOp::Sync,
        FaultOp::SyncDir,
        FaultOp::Rename,
        FaultOp::Remove,
        FaultOp::Read,
        FaultOp::Open,
        FaultOp::List,
    ];
    let mut rules = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let op = CANDIDATES[rng.below(CANDIDATES.len() as u64) as usize];
        let p = [0.005, 0.02, 0.05, 0.2][rng.below(4) as usize];
        fs.fail_randomly(op, p, rng.next());
        rules.push((op, p));
    }
    rules
}

/// Random faults of every kind, then a power loss (clean or torn) or a
/// plain exit, then a reopen without faults: the database opens and holds
/// what [`check_recovered`] demands. Open itself runs under the faults in
/// some rounds. Each seed starts from a database with history.
#[test]
fn random_faults_then_crash_or_exit() {
    let rounds: u64 = std::env::var("FAULT_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let mut opened_under_faults = 0;
    let mut injected = 0;
    for seed in 0..rounds {
        let fs = FaultInjectionFs::new();
        let kind = if seed % 3 == 2 {
            MemtableKind::Vector
        } else {
            MemtableKind::SkipList
        };
        let o = options(kind);
        let mut rng = Rng::new(1000 + seed);
        let mut base = State::new();
        for round in 0..2u64 {
            let faults_at_open = rng.percent(25);
            let mut rules = Vec::new();
            if faults_at_open {
                rules = random_faults(&fs, &mut rng);
            }
            let db = match open(&fs, &o) {
                Ok(db) => {
                    opened_under_faults += faults_at_open as u32;
                    db
                }
                Err(_) => {
                    // A failed open may leave anything behind but must not
                    // lose data: clear (maybe lose power) and open again.
                    if rng.percent(50) {
                        fs.simulate_power_loss(rng.percent(50).then(|| rng.next()));
                    }
                    fs.clear_faults();
                    open(&fs, &o).unwrap_or_else(|e| {
                        panic!("seed {seed}: no reopen after a failed open under {rules:?}: {e}")
                    })
                }
            };
            if !faults_at_open {
                rules = random_faults(&fs, &mut rng);
            }
            let mut history = Vec::new();
            let n = 40 + rng.below(140);
            let (synced, acked) = run_history(&db, &mut rng, round, n, &base, &mut history);
            injected += FaultOp::ALL.iter().map(|&op| fs.injected(op)).sum::<u64>();
            let crash = rng.percent(70);
            let durable = if crash {
                fs.simulate_power_loss(rng.percent(50).then(|| rng.next()));
                reboot(&fs, db);
                synced
            } else {
                // The process exits (its last calls may still fail), the OS
                // keeps what it was given.
                if rng.percent(50) {
                    fs.clear_faults();
                }
                drop(db);
                fs.clear_faults();
                acked
            };
            let db = open(&fs, &o).unwrap_or_else(|e| {
                panic!("seed {seed} round {round}: no reopen after faults {rules:?}: {e}")
            });
            let actual = scan(&db);
            if let Err(e) = check_recovered(&base, &history, durable, &actual) {
                panic!(
                    "seed {seed} round {round} ({kind:?}, faults {rules:?}, {}): {e}",
                    if crash { "power loss" } else { "exit" }
                );
            }
            // The recovered database takes writes again.
            db.put_opt(b"after", format!("{seed}"), &write_options(true))
                .expect("a write after recovery");
            db.delete(b"after").unwrap();
            base = actual;
            drop(db);
        }
    }
    assert!(
        injected > rounds,
        "too few faults were injected: {injected}"
    );
    assert!(opened_under_faults > 0);
}

/// Several synced writers under random log, flush and manifest failures,
/// then a power loss: every acknowledged write survives, each thread's
/// failed write shows whole or not at all.
#[test]
fn random_faults_with_concurrent_synced_writers() {
    const THREADS: usize = 3;
    // FAULT_SEEDS=3000 for a long run (a few seconds in release).
    let seeds: u64 = std::env::var("FAULT_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(48);
    for seed in 0..seeds {
        let fs = FaultInjectionFs::new();
        let o = options(MemtableKind::SkipList);
        let mut rng = Rng::new(5000 + seed);
        let db = open(&fs, &o).unwrap();
        let rules = random_faults(&fs, &mut rng);
        let results: Vec<(State, Option<Op>)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..THREADS)
                .map(|t| {
                    let db = &db;
                    s.spawn(move || {
                        let mut rng = Rng::new(seed << 8 | t as u64);
                        let wo = write_options(true);
                        let name = move |k: u64| thread_key(t, k);
                        let mut model = State::new();
                        for i in 0..300 {
                            let op = random_op(&mut rng, ((t as u64) << 32) | i, 50, &name);
                            // A thread stops at its first error, so at most
                            // one of its writes is in doubt.
                            match db.write_opt(batch_of(&op), &wo) {
                                Ok(()) => apply(&mut model, &op),
                                Err(_) => return (model, Some(op)),
                            }
                        }
                        (model, None)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        fs.simulate_power_loss(rng.percent(50).then(|| rng.next()));
        reboot(&fs, db);
        let db = open(&fs, &o)
            .unwrap_or_else(|e| panic!("seed {seed}: no reopen after faults {rules:?}: {e}"));
        let actual = scan(&db);
        for (t, (model, in_flight)) in results.into_iter().enumerate() {
            let mine = thread_entries(&actual, t);
            let mut with_op = model.clone();
            if let Some(op) = &in_flight {
                apply(&mut with_op, op);
            }
            assert!(
                mine == model || mine == with_op,
                "seed {seed} thread {t} faults {rules:?}: acknowledged synced writes lost"
            );
        }
    }
}

/// Every failure point of a flush, a compaction and their manifest writes:
/// for each kind of call, let `skip` calls pass and fail the rest while a
/// flush (and the compaction it triggers) runs. The flush reports the error
/// or succeeds; no acknowledged write is lost, with or without a power loss;
/// the database always reopens.
#[test]
fn flush_and_manifest_failures_at_every_step() {
    let mut failed_flushes = 0;
    for op in [
        FaultOp::Create,
        FaultOp::Append,
        FaultOp::Sync,
        FaultOp::Rename,
        FaultOp::SyncDir,
        FaultOp::Open,
        FaultOp::Read,
        FaultOp::Remove,
        FaultOp::List,
    ] {
        for skip in 0..10 {
            for crash in [false, true] {
                let fs = FaultInjectionFs::new();
                let o = options(MemtableKind::SkipList);
                let db = open(&fs, &o).unwrap();
                let mut model = synced_fill(&db, 0, 120);
                // One table exists, so the next flush triggers a compaction.
                db.flush().unwrap();
                model.extend(synced_fill(&db, 1000, 120));
                fs.fail_after(op, skip);
                let flushed = db.flush();
                failed_flushes += flushed.is_err() as u32;
                // Writes after the failure either work or fail cleanly.
                let k = b"after-failure".to_vec();
                let v = value(7777, &k, 10);
                let after = db.put_opt(&k, &v, &write_options(true));
                if crash {
                    fs.simulate_power_loss(Some(skip));
                    reboot(&fs, db);
                } else {
                    fs.clear_faults();
                    drop(db);
                }
                let db = open(&fs, &o).unwrap_or_else(|e| {
                    panic!("{op:?} after {skip} calls, crash={crash}: no reopen: {e}")
                });
                let mut actual = scan(&db);
                let survived = actual.remove(&k);
                if after.is_ok() {
                    assert_eq!(survived, Some(v), "{op:?} {skip}: acknowledged write lost");
                }
                assert!(
                    actual == model,
                    "{op:?} after {skip} calls, crash={crash}: {} of {} keys",
                    actual.len(),
                    model.len()
                );
            }
        }
    }
    assert!(failed_flushes > 20, "{failed_flushes}");
}

/// [`options`], but two level-0 tables start no compaction (the tests run
/// the one that must fail themselves, with `compact_range`), and nothing
/// resumes on its own: only `DB::resume` may clear a background error.
fn options_without_automatic_work() -> Options {
    let mut o = options(MemtableKind::SkipList);
    o.set_level_zero_file_num_compaction_trigger(4)
        .set_max_bgerror_resume_count(0);
    o
}

/// Two overlapping level-0 tables written by synced puts (the second
/// overwrites every key of the first), so that a compaction of level 0
/// must read both and write a new table. Returns the model.
fn two_overlapping_tables(db: &DB) -> State {
    let mut model = synced_fill(db, 0, 120);
    db.flush().unwrap();
    model.extend(synced_fill(db, 1000, 120));
    db.flush().unwrap();
    assert_eq!(
        db.stats().level_files[0],
        2,
        "two tables, no compaction yet"
    );
    model
}

/// Asserts that `result` is the error writes get while a background error
/// stops them (`Error::BackgroundError`), caused by an error of `kind`.
fn assert_stopped(result: lsm_demo::Result<()>, kind: ErrorKind, what: &str) {
    match result {
        Err(Error::BackgroundError(cause)) => {
            assert_eq!(cause.kind(), kind, "{what}: stopped by {cause}")
        }
        other => panic!("{what}: expected Error::BackgroundError, got {other:?}"),
    }
}

/// The README's "Typed errors": "After a failed log write, flush or
/// compaction, writes stop with `Error::BackgroundError` until
/// `DB::resume`". The other tests here only check that nothing is lost
/// around such failures; this one makes a compaction (not a flush) fail on
/// an injected I/O error and checks the promise itself: every kind of
/// write is refused with that variant (and changes nothing), reads still
/// return every acknowledged write, `resume` succeeds once the fault is
/// cleared, writes (and the compaction) work again, and a reopen keeps
/// everything acknowledged.
#[test]
fn a_failed_compaction_stops_writes_until_resume() {
    let fs = FaultInjectionFs::new();
    let o = options_without_automatic_work();
    let db = open(&fs, &o).unwrap();
    let mut model = two_overlapping_tables(&db);

    // The compaction cannot create its output table. (The memtable is
    // empty: `compact_range`'s flush writes nothing.)
    fs.fail_after(FaultOp::Create, 0);
    let compacted = db.compact_range(None::<&[u8]>, None::<&[u8]>);
    match &compacted {
        Err(Error::Io { context, source }) => {
            assert!(FaultInjectionFs::is_injected(source), "{context}: {source}");
            assert!(context.ends_with(".sst"), "the output table: {context}");
        }
        other => panic!("the compaction should fail on the injected error: {other:?}"),
    }
    assert_eq!(fs.injected(FaultOp::Create), 1);
    assert_eq!(
        db.stats().level_files[0],
        2,
        "the failed compaction changed nothing"
    );

    // Writes stop, each kind of them, with the documented variant.
    let mut batch = WriteBatch::new();
    batch.put(b"refused-batch", b"v");
    assert_stopped(db.put(b"refused", b"v"), ErrorKind::IOError, "put");
    assert_stopped(
        db.put_opt(b"refused", b"v", &write_options(true)),
        ErrorKind::IOError,
        "synced put",
    );
    assert_stopped(db.delete(key_name(0)), ErrorKind::IOError, "delete");
    assert_stopped(db.write(batch), ErrorKind::IOError, "batch");
    assert_stopped(db.flush(), ErrorKind::IOError, "flush");
    assert_eq!(
        fs.injected(FaultOp::Create),
        1,
        "a refused write created a file"
    );

    // Reads go on and see every acknowledged write, none of the refused.
    for (k, v) in &model {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
    }
    assert_eq!(db.get(b"refused").unwrap(), None);
    assert_eq!(db.get(b"refused-batch").unwrap(), None);
    assert!(scan(&db) == model, "a scan while writes are stopped");

    // Still stopped after the reads; `resume` lets writes in again.
    assert_stopped(
        db.put(b"refused", b"v"),
        ErrorKind::IOError,
        "put before resume",
    );
    fs.clear_faults();
    db.resume().expect("resume after the fault is cleared");
    db.put_opt(b"after-resume", b"v", &write_options(true))
        .expect("a write after resume");
    model.insert(b"after-resume".to_vec(), b"v".to_vec());
    model.extend(synced_fill(&db, 2000, 40));
    // The compaction that failed now runs.
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    assert_eq!(db.stats().level_files[0], 0);
    assert!(scan(&db) == model, "after resume");

    drop(db);
    let db = open(&fs, &o).unwrap();
    assert!(
        scan(&db) == model,
        "an acknowledged write lost across the reopen"
    );
    db.put(b"after-reopen", b"v").unwrap();
}

/// `DB::resume`'s docs: when the background error is not an I/O error
/// ("corruption is not resumed from") it fails with
/// `Error::BackgroundError` holding it, and writes stay stopped. Resuming after corruption would let writes go on
/// over damaged data. The cheapest deterministic way to that state: damage
/// a data block of a table while the database is closed (opening reads
/// only a table's footer, index, filter and properties), reopen, and let a
/// compaction read the block.
#[test]
fn resume_refuses_after_a_compaction_met_corruption() {
    let fs = FaultInjectionFs::new();
    let o = options_without_automatic_work();
    let db = open(&fs, &o).unwrap();
    let model = two_overlapping_tables(&db);
    drop(db);

    // One bit of the oldest table's first data block flips.
    let dir = Path::new(DIR);
    let mut tables: Vec<String> = (fs.list_dir(dir).unwrap().into_iter())
        .filter(|name| name.ends_with(".sst"))
        .collect();
    tables.sort();
    assert_eq!(tables.len(), 2, "{tables:?}");
    let path = dir.join(&tables[0]);
    let mut bytes = fs.read_file(&path).unwrap();
    bytes[20] ^= 0x40;
    restore_into(&fs, &Snapshot::from([(path, bytes)]));

    let db = open(&fs, &o).expect("open does not read data blocks");
    let compacted = db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert!(
        matches!(&compacted, Err(Error::Corruption(_))),
        "the compaction reads the damaged block: {compacted:?}"
    );
    assert_stopped(db.put(b"refused", b"v"), ErrorKind::Corruption, "put");

    // `resume` refuses, with the background error, every time; writes stay stopped.
    for attempt in 0..2 {
        match db.resume() {
            Err(Error::BackgroundError(cause)) => assert!(
                matches!(&*cause, Error::Corruption(_)),
                "attempt {attempt}: refused for {cause}"
            ),
            other => panic!("attempt {attempt}: resume after corruption gave {other:?}"),
        }
        assert_stopped(
            db.put(b"refused", b"v"),
            ErrorKind::Corruption,
            "put after resume",
        );
        assert_stopped(db.flush(), ErrorKind::Corruption, "flush after resume");
    }
    assert_eq!(db.get(b"refused").unwrap(), None);
    // The undamaged newer table still answers for every key.
    for (k, v) in &model {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
    }
}

/// Read errors (table blocks, the manifest, logs at open): reads return the
/// right value or an error, never a wrong one; a compaction that cannot
/// read stops with an error instead of dropping data; open fails cleanly
/// and works once the disk reads again.
#[test]
fn read_errors_never_give_wrong_answers() {
    let fs = FaultInjectionFs::new();
    let o = options(MemtableKind::SkipList);
    let db = open(&fs, &o).unwrap();
    let mut model = synced_fill(&db, 0, 600);
    db.flush().unwrap();
    // Every key is in a table now: reads go to the disk.
    let mut rng = Rng::new(77);
    fs.fail_randomly(FaultOp::Read, 0.2, 77);
    let (mut errors, mut reads) = (0, 0);
    for _ in 0..400 {
        let k = key_name(rng.below(320)).into_bytes();
        reads += 1;
        match db.get(&k) {
            Ok(v) => assert_eq!(v, model.get(&k).cloned()),
            Err(_) => errors += 1,
        }
    }
    let mut it = db.iterator(IteratorMode::Start);
    let mut scanned = 0;
    for kv in &mut it {
        match kv {
            Ok((k, v)) => {
                assert_eq!(model.get(&k[..]).map(|v| &v[..]), Some(&v[..]));
                scanned += 1;
            }
            Err(_) => break,
        }
    }
    assert!(errors > 0 && errors < reads, "{errors} of {reads}");
    // A flush and compaction under read errors: an error or success, no
    // loss. (A background error turns later writes away.)
    if try_synced_fill(&db, 4000, 300, &mut model) {
        let _ = db.flush();
    }
    fs.clear_faults();
    drop(db);
    let mut failed_opens = 0;
    for skip in 0..8 {
        fs.fail_after(FaultOp::Read, skip);
        let reopened = open(&fs, &o);
        fs.clear_faults();
        match reopened {
            Err(_) => failed_opens += 1,
            Ok(db) => assert!(scan(&db) == model, "open after {skip} reads"),
        }
    }
    assert!(failed_opens > 0);
    let db = open(&fs, &o).unwrap();
    assert!(scan(&db) == model, "scanned {scanned} before the error");
}

/// Open itself failing at every step (lock, list, manifest, logs, the
/// recovered table, the new log, the manifest write), with and without a
/// power loss after the failure: the next open works and loses nothing.
#[test]
fn open_failures_at_every_step() {
    for op in FaultOp::ALL {
        // Open makes at most one call of these, several of the others.
        let steps = match op {
            FaultOp::CreateDir | FaultOp::Lock => 2,
            _ => 7,
        };
        for skip in 0..steps {
            for crash in [false, true] {
                let fs = FaultInjectionFs::new();
                let o = options(MemtableKind::Vector);
                let db = open(&fs, &o).unwrap();
                let mut model = synced_fill(&db, 0, 120);
                db.flush().unwrap();
                model.extend(synced_fill(&db, 500, 100));
                fs.simulate_power_loss(None);
                reboot(&fs, db);
                fs.fail_after(op, skip);
                let first = open(&fs, &o);
                if let Ok(db) = first {
                    fs.clear_faults();
                    assert!(scan(&db) == model);
                    drop(db);
                } else if crash {
                    fs.simulate_power_loss(Some(skip));
                    fs.clear_faults();
                } else {
                    fs.clear_faults();
                }
                let db = open(&fs, &o)
                    .unwrap_or_else(|e| panic!("{op:?} after {skip}, crash={crash}: {e}"));
                assert!(scan(&db) == model, "{op:?} after {skip}, crash={crash}");
            }
        }
    }
}

/// `open_with_fs` goes through the given file system only: a path that
/// names a file on the real disk is a fresh directory in memory.
#[test]
fn a_custom_file_system_is_the_only_one_used() {
    let real = tempfile::NamedTempFile::new().unwrap();
    let fs = FaultInjectionFs::new();
    let o = options(MemtableKind::SkipList);
    let db = DB::open_with_fs(&o, real.path(), Arc::new(fs.clone()))
        .expect("the real disk's file is not in the in-memory file system");
    db.put(b"k", b"v").unwrap();
    drop(db);
    assert!(fs.is_dir(real.path()));
    assert!(fs.exists(&real.path().join("MANIFEST")));
    assert_eq!(std::fs::metadata(real.path()).unwrap().len(), 0);
    // And a file in the in-memory file system is not a directory.
    let file = Path::new("/a-file");
    fs.create(file).unwrap();
    assert!(matches!(
        DB::open_with_fs(&o, file, Arc::new(fs.clone())),
        Err(Error::NotADirectory(_))
    ));
}

/// Flushes fall behind (two frozen memtables wait, writes stall), then one
/// flush completes and the power fails: the log of the memtable still
/// waiting must not have been retired with the flushed one's.
#[test]
fn a_flush_backlog_keeps_the_logs_of_waiting_memtables() {
    for kind in [MemtableKind::SkipList, MemtableKind::Vector] {
        let fs = FaultInjectionFs::new();
        let gated = GatedTables::new(fs.clone());
        let mut o = options(kind);
        o.set_level_zero_file_num_compaction_trigger(4);
        let db = DB::open_with_fs(&o, DIR, Arc::new(gated.clone())).unwrap();
        let wait_for = |what: &str, cond: &dyn Fn() -> bool| {
            let deadline = Instant::now() + Duration::from_secs(20);
            while !cond() {
                assert!(Instant::now() < deadline, "timed out waiting for {what}");
                std::thread::sleep(Duration::from_millis(1));
            }
        };
        let model = std::thread::scope(|s| {
            let writer = s.spawn(|| {
                let mut model = State::new();
                for i in 0.. {
                    let k = format!("key{i:06}").into_bytes();
                    let v = value(i, &k, 300);
                    if db.put_opt(&k, &v, &write_options(true)).is_err() {
                        break;
                    }
                    model.insert(k, v);
                }
                model
            });
            // The first flush waits at the gate while the writer fills two
            // more memtables and stalls.
            wait_for("a backlog", &|| {
                db.stats().immutable_memtables == 2 && gated.holding()
            });
            // One flush goes through; the next one waits again.
            gated.permit(1);
            wait_for("one flush", &|| {
                db.stats().level_files[0] == 1 && gated.holding()
            });
            fs.simulate_power_loss(None);
            gated.open_gate();
            writer.join().unwrap()
        });
        assert!(model.len() > 300, "{}", model.len());
        reboot(&fs, db);
        let db = open(&fs, &o).unwrap();
        let actual = scan(&db);
        let lost: Vec<_> = model
            .keys()
            .filter(|k| !actual.contains_key(*k))
            .map(|k| String::from_utf8_lossy(k))
            .collect();
        assert!(
            lost.is_empty(),
            "{kind:?}: acknowledged synced writes lost, {} of {}: {lost:?}",
            lost.len(),
            model.len()
        );
        assert!(actual == model);
    }
}
