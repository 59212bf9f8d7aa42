//! The log written through a memory map (`allow_mmap_writes`): every
//! acknowledged write comes back on open, after a clean close and after a
//! process that died left its last mapped window as zeros. (Kills of a real
//! process: `.ci/crashtest.sh`, `--mmap_write=1`.)

use std::collections::BTreeMap;
use std::io::Write;

use lsm_demo::wal::{DBRecoveryMode, read_all};
use lsm_demo::{DB, Options, WriteOptions};

mod common;
use common::{log_files, scan};

fn options() -> Options {
    let mut o = Options::default();
    // Small memtables: the writes below switch logs many times.
    o.create_if_missing(true)
        .set_allow_mmap_writes(true)
        .set_write_buffer_size(64 << 10);
    o
}

fn contents(db: &DB) -> BTreeMap<Vec<u8>, Vec<u8>> {
    scan(db).into_iter().collect()
}

/// Four threads of puts, every seventh synced; returns what they wrote.
fn fill(db: &DB, round: u8) -> BTreeMap<Vec<u8>, Vec<u8>> {
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..4u8)
            .map(|t| {
                s.spawn(move || {
                    let mut wrote = BTreeMap::new();
                    for i in 0..1500u32 {
                        let key = format!("{t}-{i:05}").into_bytes();
                        let value = vec![round ^ t ^ i as u8; 100 + i as usize % 50];
                        let mut wo = WriteOptions::default();
                        wo.set_sync(i % 7 == 0);
                        db.put_opt(&key, &value, &wo).unwrap();
                        wrote.insert(key, value);
                    }
                    wrote
                })
            })
            .collect();
        writers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    })
}

#[test]
fn mapped_logs_replay_after_a_close_and_after_a_zero_tail() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options();
    let db = DB::open(&opts, dir.path()).unwrap();
    let mut expected = fill(&db, 1);
    assert_eq!(contents(&db), expected);
    drop(db);

    // A clean close (and a move to a new log) cuts the log back to its
    // records and syncs: no log ends in zeros that a power loss could keep.
    for log in log_files(dir.path()) {
        let read = read_all(
            std::fs::read(&log).unwrap(),
            DBRecoveryMode::AbsoluteConsistency,
        );
        assert!(read.unwrap().tail.is_none(), "{}", log.display());
    }
    let db = DB::open(&opts, dir.path()).unwrap();
    assert_eq!(contents(&db), expected);
    expected.extend(fill(&db, 2));
    drop(db);

    // What a killed process leaves: zeros after the last record of the
    // newest log (the rest of its mapped window).
    let newest = log_files(dir.path()).pop().unwrap();
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(&newest)
        .unwrap();
    log.write_all(&vec![0; 300 << 10]).unwrap();
    drop(log);
    let db = DB::open(&opts, dir.path()).unwrap();
    assert_eq!(contents(&db), expected);
    expected.extend(fill(&db, 3));
    assert_eq!(contents(&db), expected);
}

/// Writers copy into the mapped log at once, so a process that dies while
/// an earlier writer is still copying can leave that writer's record torn
/// (or still zeros) with a later writer's whole record after it, then the
/// zeros of the rest of the growth. Neither write was acknowledged (a
/// write returns once every earlier one is in), so recovery must drop
/// both: `PointInTime` stops at the torn record. `TolerateCorruptedTailRecords`
/// would refuse such a log (whole records follow the damage, which is what
/// it takes for corruption), so the mapped log refuses that mode up front,
/// as it refuses `AbsoluteConsistency`; `SkipAnyCorruptedRecord` replays
/// the whole record after the torn one, as its documentation says.
#[test]
fn a_torn_record_before_whole_ones_is_dropped_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true).set_allow_mmap_writes(true);
    let db = DB::open(&opts, dir.path()).unwrap();
    let value = |i: u32| format!("value-{i:06}-{}", "v".repeat(80)).into_bytes();
    for i in 0..100u32 {
        db.put(format!("k{i:03}"), value(i)).unwrap();
    }
    drop(db);

    // Tear the record of write 98 (its value lies inside it); write 99's
    // record follows whole, then zeros.
    let newest = log_files(dir.path()).pop().unwrap();
    let mut bytes = std::fs::read(&newest).unwrap();
    let torn = bytes
        .windows(12)
        .position(|w| w == b"value-000098")
        .expect("write 98 is in the newest log");
    assert!(
        bytes[torn..].windows(12).any(|w| w == b"value-000099"),
        "write 99's record follows"
    );
    bytes[torn..torn + 12].fill(0);
    bytes.extend(vec![0; 64 << 10]);
    std::fs::write(&newest, &bytes).unwrap();

    for mode in [
        DBRecoveryMode::AbsoluteConsistency,
        DBRecoveryMode::TolerateCorruptedTailRecords,
    ] {
        opts.set_wal_recovery_mode(mode);
        let Err(err) = DB::open(&opts, dir.path()) else {
            panic!("{mode:?}: opened");
        };
        assert!(
            matches!(err, lsm_demo::Error::InvalidArgument(_)),
            "{mode:?}: {err}"
        );
    }
    // Salvage first, on a copy: a recovery rewrites the directory.
    let salvage = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), salvage.path().join(entry.file_name())).unwrap();
    }
    let written = |range: std::ops::Range<u32>| -> BTreeMap<Vec<u8>, Vec<u8>> {
        range
            .map(|i| (format!("k{i:03}").into_bytes(), value(i)))
            .collect()
    };
    opts.set_wal_recovery_mode(DBRecoveryMode::SkipAnyCorruptedRecord);
    let db = DB::open(&opts, salvage.path()).unwrap();
    let mut kept = written(0..98);
    kept.extend(written(99..100));
    assert_eq!(contents(&db), kept);

    opts.set_wal_recovery_mode(DBRecoveryMode::PointInTime);
    let db = DB::open(&opts, dir.path()).unwrap();
    assert_eq!(contents(&db), written(0..98));
    // Counted as damage: the log is set aside, its prefix in tables.
    let recovery = db.stats().recovery;
    assert_eq!(recovery.damaged_ranges, 1);
    assert_eq!(recovery.files_set_aside.len(), 1);
}
