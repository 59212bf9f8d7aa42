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
