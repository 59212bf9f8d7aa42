//! The engine's log over [`FaultInjectionFs`]: failed appends and syncs,
//! a log abandoned by a failed switch, syncs refused without the log, and
//! the writeback behind the writers (`fault_injection.rs` has the random
//! fault histories, flushes, reads and opens; `power_loss.rs` the power
//! losses without errors).

use std::sync::Arc;

use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
use lsm_demo::{DB, Error, MemtableKind, Options};

mod common;
use common::GatedTables;
use common::faults::*;

/// Options whose memtable takes the whole of a test's writes, so no
/// background work runs while a fault is armed.
fn no_flush_options() -> Options {
    let mut o = options(MemtableKind::SkipList);
    o.set_write_buffer_size(4 << 20);
    o
}

/// A failed log append or sync: the writer gets the error, later writers
/// get errors too (the log may hold part of the record), and the database
/// reopens, with or without a power loss, holding every acknowledged
/// write; the failed one entirely or not at all.
#[test]
fn log_append_and_sync_failures() {
    for op in [FaultOp::Append, FaultOp::Sync] {
        for torn_appends in [false, true] {
            for crash in [false, true] {
                let fs = FaultInjectionFs::new();
                fs.set_torn_appends(torn_appends);
                let o = no_flush_options();
                let db = open(&fs, &o).unwrap();
                let mut model = synced_fill(&db, 0, 500);
                // Unsynced writes before the failure: kept by the OS unless
                // the power fails.
                let mut unsynced = model.clone();
                for i in 0..20 {
                    let k = format!("unsynced{i}").into_bytes();
                    db.put(&k, b"v").unwrap();
                    unsynced.insert(k, b"v".to_vec());
                }
                fs.fail_next(op, 1);
                let failed = value(9999, b"failed", 50);
                let err = db
                    .put_opt(b"failed", &failed, &write_options(true))
                    .expect_err("the injected failure reaches the writer");
                assert!(matches!(err, Error::Io { .. }), "{err}");
                // Later writers are refused: the log's tail is unknown.
                let later = db.put_opt(b"later", b"x", &write_options(true));
                assert!(matches!(later, Err(Error::BackgroundError(_))), "{later:?}");
                // Reads still work.
                assert_eq!(
                    db.get(key_name(1)).unwrap(),
                    model.get(key_name(1).as_bytes()).cloned()
                );
                if crash {
                    fs.simulate_power_loss(None);
                    reboot(&fs, db);
                } else {
                    drop(db);
                    fs.clear_faults();
                    model = unsynced;
                }
                let db = open(&fs, &o).unwrap();
                let mut actual = scan(&db);
                if let Some(v) = actual.remove(&b"failed"[..]) {
                    assert_eq!(v, failed);
                    // Only a sync failure can leave the record whole.
                    assert_eq!(op, FaultOp::Sync, "a failed append was replayed");
                }
                if crash {
                    actual.retain(|k, _| !k.starts_with(b"unsynced"));
                }
                assert_eq!(actual.len(), model.len(), "{op:?} crash={crash}");
                assert!(actual == model, "{op:?} crash={crash}: writes lost");
                db.put(b"later", b"x").expect("writable after reopen");
            }
        }
    }
}

/// A memtable switch that fails after creating its new log (the directory
/// sync fails, and so does the removal of the new file) leaves an empty log
/// behind; a later switch makes a later log, while the memtable of the old
/// one still waits for its flush. After a power loss, recovery skips the
/// empty log instead of ending the point in time there, which would drop
/// every synced write of the later log.
///
/// A mapped log is grown (1 MiB of zeros) before its header is written, and
/// cut back only when dropped: an abandoned one may come back that long,
/// holding no record. Run both ways.
#[test]
fn a_log_abandoned_by_a_failed_switch_does_not_end_recovery() {
    for grown in [false, true] {
        abandoned_log_is_skipped(grown);
    }
}

fn abandoned_log_is_skipped(grown: bool) {
    let fs = FaultInjectionFs::new();
    let gated = GatedTables::new(fs.clone());
    let o = options(MemtableKind::SkipList);
    let db = DB::open_with_fs(&o, DIR, Arc::new(gated.clone())).unwrap();
    let mut model = synced_fill(&db, 0, 20);
    fs.fail_next(FaultOp::SyncDir, 1);
    fs.fail_next(FaultOp::Remove, 1);
    let err = db.flush().expect_err("the switch fails");
    assert!(matches!(err, Error::Io { .. }), "{err}");
    assert_eq!(log_names(&fs).len(), 2, "the abandoned log stays");
    // The old log is still current and takes writes, until the memtable
    // fills and switches to a later log; its flush waits at the gate.
    assert!(try_synced_fill(&db, 1000, 400, &mut model));
    assert_eq!(db.stats().immutable_memtables, 1);
    assert_eq!(log_names(&fs).len(), 3, "{:?}", log_names(&fs));
    fs.simulate_power_loss(None);
    gated.open_gate();
    reboot(&fs, db);
    if grown {
        let abandoned = std::path::Path::new(DIR).join(&log_names(&fs)[1]);
        let mut file = fs.open_append(&abandoned).unwrap();
        file.append(&vec![0; 1 << 20]).unwrap();
        file.sync().unwrap();
    }
    let db = open(&fs, &o).unwrap();
    let stats = db.stats().recovery;
    assert_eq!(stats.logs_dropped, 0, "grown {grown}: {stats:?}");
    assert!(scan(&db) == model, "grown {grown}: synced writes lost");
}

/// The names of the log files in the database directory.
fn log_names(fs: &FaultInjectionFs) -> Vec<String> {
    let mut logs: Vec<String> = fs
        .list_dir(std::path::Path::new(DIR))
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".log"))
        .collect();
    logs.sort();
    logs
}

/// A write cannot be both synced and kept out of the log: it would be
/// acknowledged as durable and lost at the next power failure.
#[test]
fn sync_without_the_log_is_refused() {
    let fs = FaultInjectionFs::new();
    let db = open(&fs, &options(MemtableKind::SkipList)).unwrap();
    let mut wo = write_options(true);
    wo.disable_wal(true);
    let err = db.put_opt(b"k", b"v", &wo).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert_eq!(db.get(b"k").unwrap(), None);
}

/// The log's writeback behind the writes (`wal_bytes_per_sync`) starts
/// about once a step, over both logs, and is only a hint: when every
/// writeback fails, every write still succeeds and survives a reopen.
#[test]
fn log_writeback_is_started_per_step_and_may_fail() {
    const STEP: u64 = 16 << 10;
    const WRITES: u64 = 1000;
    for positional in [true, false] {
        for failing in [false, true] {
            let fs = FaultInjectionFs::new();
            let mut o = options(MemtableKind::SkipList);
            // The log file's own writeback (stripes start theirs per stripe).
            o.set_write_buffer_size(4 << 20)
                .set_wal_bytes_per_sync(STEP)
                .set_allow_concurrent_log_write(positional)
                .set_wal_stripes(0);
            if failing {
                fs.fail_after(FaultOp::Writeback, 0);
            }
            let db = open(&fs, &o).unwrap();
            let mut model = State::new();
            for i in 0..WRITES {
                let k = format!("key{i:06}").into_bytes();
                let v = value(i, &k, 1000);
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            let started = fs.calls(FaultOp::Writeback);
            let steps = WRITES * 1024 / STEP;
            assert!(
                (steps / 2..=steps).contains(&started),
                "positional {positional}: {started} writebacks for {steps} steps"
            );
            assert_eq!(
                fs.injected(FaultOp::Writeback),
                if failing { started } else { 0 }
            );
            drop(db);
            fs.clear_faults();
            assert!(scan(&open(&fs, &o).unwrap()) == model);
        }
    }
}

/// Writers on four threads, a quarter of their writes synced, with the
/// log written back every 4 KiB across many memtable switches (64 KiB
/// memtables), over both logs: the writebacks run beside the writes, the
/// switches and the syncs, and every write survives a reopen.
#[test]
fn log_writeback_beside_concurrent_writers_and_switches() {
    const THREADS: u64 = 4;
    const WRITES: u64 = 400;
    for positional in [true, false] {
        let fs = FaultInjectionFs::new();
        let mut o = options(MemtableKind::SkipList);
        o.set_wal_bytes_per_sync(4 << 10)
            .set_allow_concurrent_log_write(positional)
            .set_wal_stripes(0);
        let db = open(&fs, &o).unwrap();
        let model = std::thread::scope(|s| {
            let writers: Vec<_> = (0..THREADS)
                .map(|t| {
                    let db = &db;
                    s.spawn(move || {
                        let mut model = State::new();
                        for i in 0..WRITES {
                            let k = format!("t{t}-key{i:06}").into_bytes();
                            let v = value(i, &k, 500);
                            db.put_opt(&k, &v, &write_options(i % 4 == 0)).unwrap();
                            model.insert(k, v);
                        }
                        model
                    })
                })
                .collect();
            let mut model = State::new();
            for w in writers {
                model.extend(w.join().unwrap());
            }
            model
        });
        assert!(
            fs.calls(FaultOp::Writeback) > 0,
            "positional {positional}: no writeback started"
        );
        drop(db);
        assert!(
            scan(&open(&fs, &o).unwrap()) == model,
            "positional {positional}"
        );
    }
}
