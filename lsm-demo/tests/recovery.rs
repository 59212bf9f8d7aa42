//! Opening damaged or unexpected directories through `DB::open`: the
//! database refuses with a clear error, or comes back as a consistent point
//! in time of the acknowledged writes, and never deletes a file it did not
//! retire itself.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
use lsm_demo::manifest::{FileMeta, Manifest, read_manifest, write_manifest};

mod common;
use common::in_memory::{
    contents, damage, dir, files, info_log, map, open, options, sync, two_logs, write_file,
};
use lsm_demo::{DB, DBRecoveryMode, Error, ErrorKind, MemtableKind, Options};

#[test]
fn a_directory_without_its_manifest_is_refused_and_left_alone() {
    let fs = FaultInjectionFs::new();
    let db = open(&fs, &options()).unwrap();
    db.put_opt(b"k", b"v", &sync()).unwrap();
    db.flush().unwrap();
    db.put_opt(b"k2", b"v2", &sync()).unwrap();
    drop(db);
    fs.remove_file(&dir().join("MANIFEST")).unwrap();
    let before = files(&fs, dir());
    for create in [true, false] {
        let mut o = options();
        o.create_if_missing(create);
        let err = open(&fs, &o).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corruption, "{err}");
        let msg = err.to_string();
        assert!(msg.contains("no MANIFEST") && msg.contains(".sst"), "{msg}");
        assert!(msg.contains("repair"), "{msg}");
        assert_eq!(files(&fs, dir()), before, "the directory changed");
    }
}

#[test]
fn another_stores_database_is_refused_and_left_alone() {
    let fs = FaultInjectionFs::new();
    fs.create_dir_all(dir()).unwrap();
    // What RocksDB 7.8.3's `ldb` leaves: a live log that is empty.
    for (name, bytes) in [
        ("CURRENT", &b"MANIFEST-000005\n"[..]),
        ("MANIFEST-000005", b"\x01\x02rocksdb manifest"),
        ("IDENTITY", b"5a7e1c2e-0000-4000-8000-000000000000"),
        ("OPTIONS-000007", b"[Version]\n"),
        ("000004.log", b""),
        ("000009.sst", b"a rocksdb table"),
        ("LOG", b"rocksdb info log"),
    ] {
        write_file(&fs, &dir().join(name), bytes);
    }
    let before = files(&fs, dir());
    let rocksdb_log = fs.read_file(&dir().join("LOG")).unwrap();
    let err = open(&fs, &options()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(err.to_string().contains("CURRENT"), "{err}");
    assert_eq!(files(&fs, dir()), before, "the directory changed");
    assert_eq!(fs.read_file(&dir().join("LOG")).unwrap(), rocksdb_log);
    assert!(!fs.exists(&dir().join("LOCK")) && !fs.exists(&dir().join("LOG.old")));
}

#[test]
fn unrelated_files_do_not_stop_a_new_database_and_are_kept() {
    let fs = FaultInjectionFs::new();
    fs.create_dir_all(dir()).unwrap();
    write_file(&fs, &dir().join("notes.txt"), b"mine");
    let mut o = options();
    o.create_if_missing(false);
    assert!(matches!(open(&fs, &o), Err(Error::NotFound(_))));
    let db = open(&fs, &options()).unwrap();
    db.put(b"k", b"v").unwrap();
    drop(db);
    let mut o = options();
    o.set_error_if_exists(true);
    assert_eq!(
        open(&fs, &o).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    drop(open(&fs, &options()).unwrap());
    assert_eq!(fs.read_file(&dir().join("notes.txt")).unwrap(), b"mine");
}

#[test]
fn two_intact_logs_replay_in_order() {
    let fs = FaultInjectionFs::new();
    two_logs(&fs, MemtableKind::SkipList);
    let db = open(&fs, &options()).unwrap();
    assert_eq!(contents(&db), map(&[("k2", "old"), ("k3", "new")]));
    assert_eq!(db.stats().recovery.logs_replayed, 2);
}

#[test]
fn damage_in_an_older_log_stops_the_replay_there() {
    for kind in [MemtableKind::SkipList, MemtableKind::Vector] {
        let fs = FaultInjectionFs::new();
        let (older, newer, delete_at) = two_logs(&fs, kind);
        // A byte of the delete's payload: its record fails its checksum.
        damage(&fs, &older, delete_at + 12 + 13);
        let mut o = options();
        o.set_memtable_kind(kind);
        let db = open(&fs, &o).unwrap();
        // The state before the damaged record, not the deleted key back
        // beside a later write.
        assert_eq!(
            contents(&db),
            map(&[("k1", "old"), ("k2", "old")]),
            "{kind:?}"
        );
        let recovery = db.stats().recovery;
        assert_eq!((recovery.damaged_ranges, recovery.logs_dropped), (1, 1));
        assert!(recovery.bytes_dropped > 0);
        let lost = dir().join("lost");
        assert_eq!(
            recovery.files_set_aside,
            [lost.join("000001.log"), lost.join("000002.log")]
        );
        assert!(!fs.exists(&older) && !fs.exists(&newer));
        assert!(fs.exists(&lost.join("000002.log")));
        let log = info_log(&fs);
        assert!(
            log.contains("000001.log") && log.contains("payload checksum"),
            "{log}"
        );
        assert!(log.contains("not replayed"), "{log}");
        // Later writes and reopens see that state and build on it.
        db.put(b"k4", b"later").unwrap();
        drop(db);
        let db = open(&fs, &o).unwrap();
        let expected = map(&[("k1", "old"), ("k2", "old"), ("k4", "later")]);
        assert_eq!(contents(&db), expected, "{kind:?}");
        assert_eq!(db.stats().recovery.bytes_dropped, 0);
    }
}

#[test]
fn a_log_missing_from_the_middle_stops_the_replay_before_the_gap() {
    for mode in [
        DBRecoveryMode::PointInTime,
        DBRecoveryMode::AbsoluteConsistency,
    ] {
        let fs = FaultInjectionFs::new();
        let (older, newer, _) = two_logs(&fs, MemtableKind::SkipList);
        fs.remove_file(&older).unwrap();
        let mut o = options();
        o.set_wal_recovery_mode(mode);
        if mode == DBRecoveryMode::AbsoluteConsistency {
            let err = open(&fs, &o).unwrap_err();
            assert!(
                err.to_string().contains("follows log 1, which is missing"),
                "{err}"
            );
            continue;
        }
        // Not k3 without the writes before it: nothing after the gap.
        let db = open(&fs, &o).unwrap();
        assert_eq!(contents(&db), map(&[]));
        assert_eq!(db.stats().recovery.logs_dropped, 1);
        assert!(!fs.exists(&newer) && fs.exists(&dir().join("lost/000002.log")));
    }
}

#[test]
fn each_recovery_mode_on_damage_in_an_older_log() {
    for mode in [
        DBRecoveryMode::AbsoluteConsistency,
        DBRecoveryMode::TolerateCorruptedTailRecords,
        DBRecoveryMode::SkipAnyCorruptedRecord,
    ] {
        let fs = FaultInjectionFs::new();
        let (older, _, delete_at) = two_logs(&fs, MemtableKind::SkipList);
        damage(&fs, &older, delete_at + 12 + 13);
        let before = files(&fs, dir());
        let mut o = options();
        o.set_wal_recovery_mode(mode);
        match mode {
            DBRecoveryMode::SkipAnyCorruptedRecord => {
                let db = open(&fs, &o).unwrap();
                // Salvage: the damaged delete is skipped, the rest applied.
                let expected = map(&[("k1", "old"), ("k2", "old"), ("k3", "new")]);
                assert_eq!(contents(&db), expected);
                assert_eq!(db.stats().recovery.damaged_ranges, 1);
            }
            _ => {
                // Damage with an intact record after it is no torn tail.
                let err = open(&fs, &o).unwrap_err();
                assert_eq!(err.kind(), ErrorKind::Corruption, "{mode:?}: {err}");
                assert!(err.to_string().contains("000001.log"), "{err}");
                assert_eq!(files(&fs, dir()), before, "{mode:?} changed the directory");
                assert!(info_log(&fs).contains("open failed: corruption"));
            }
        }
    }
}

#[test]
fn a_torn_tail_is_dropped_in_every_mode_but_absolute_consistency() {
    for mode in [
        DBRecoveryMode::AbsoluteConsistency,
        DBRecoveryMode::TolerateCorruptedTailRecords,
        DBRecoveryMode::PointInTime,
        DBRecoveryMode::SkipAnyCorruptedRecord,
    ] {
        let fs = FaultInjectionFs::new();
        let db = open(&fs, &options()).unwrap();
        db.put_opt(b"a", b"1", &sync()).unwrap();
        drop(db);
        // A crash in the middle of the next append.
        let log = dir().join("000001.log");
        let mut bytes = fs.read_file(&log).unwrap();
        bytes.extend_from_within(20..32);
        write_file(&fs, &log, &bytes);
        let mut o = options();
        o.set_wal_recovery_mode(mode);
        if mode == DBRecoveryMode::AbsoluteConsistency {
            assert_eq!(open(&fs, &o).unwrap_err().kind(), ErrorKind::Corruption);
            continue;
        }
        let db = open(&fs, &o).unwrap();
        assert_eq!(contents(&db), map(&[("a", "1")]), "{mode:?}");
        let recovery = db.stats().recovery;
        assert_eq!((recovery.damaged_ranges, recovery.bytes_dropped), (1, 12));
        // A torn tail is what a crash leaves: logged, not set aside.
        assert!(recovery.files_set_aside.is_empty(), "{mode:?}");
        assert!(!fs.exists(&log), "the replayed log is retired");
    }
}

#[test]
fn stray_log_names_are_neither_replayed_nor_deleted() {
    for kind in [MemtableKind::SkipList, MemtableKind::Vector] {
        let fs = FaultInjectionFs::new();
        let mut o = options();
        o.set_memtable_kind(kind);
        let db = open(&fs, &o).unwrap();
        db.put(b"k", b"v").unwrap();
        drop(db);
        let real = fs.read_file(&dir().join("000001.log")).unwrap();
        write_file(&fs, &dir().join("1.log"), b"");
        write_file(&fs, &dir().join("0000001.log"), &real);
        for round in 0..3 {
            let db = open(&fs, &o).unwrap();
            assert_eq!(contents(&db), map(&[("k", "v")]), "{kind:?}");
            let replayed = db.stats().recovery.records_replayed;
            assert_eq!(replayed, u64::from(round == 0), "{kind:?} round {round}");
            drop(db);
        }
        assert!(fs.exists(&dir().join("1.log")));
        assert_eq!(fs.read_file(&dir().join("0000001.log")).unwrap(), real);
    }
}

#[test]
fn only_files_the_database_retired_are_deleted() {
    let fs = FaultInjectionFs::new();
    let mut o = options();
    // One file per log, so the listing below is the same on every system.
    o.set_level_zero_file_num_compaction_trigger(2)
        .set_wal_stripes(0);
    let db = open(&fs, &o).unwrap();
    // A table-named file of ours that no manifest knows, numbered ahead.
    write_file(&fs, &dir().join("000077.sst"), b"not ours after all");
    for round in 0..3u8 {
        db.put([round], b"v").unwrap();
        db.flush().unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while db.stats().level_files[0] > 1 {
        assert!(Instant::now() < deadline, "no compaction");
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(db);
    let db = open(&fs, &o).unwrap();
    assert_eq!(
        db.stats().recovery.unknown_files,
        [dir().join("000077.sst")]
    );
    db.put(b"x", b"y").unwrap();
    db.flush().unwrap();
    // The flush makes a compaction due; closing does not start one.
    db.wait_for_compact(&lsm_demo::WaitForCompactOptions::default())
        .unwrap();
    drop(db);
    assert_eq!(
        fs.read_file(&dir().join("000077.sst")).unwrap(),
        b"not ours after all"
    );
    let manifest = read_manifest(&fs, dir()).unwrap().unwrap();
    // New files are numbered past the stranger; retired ones are gone.
    assert!(manifest.files.iter().all(|f| f.number > 77 || f.level > 0));
    let mut expected: Vec<String> = manifest
        .files
        .iter()
        .map(|f| format!("{:06}.sst", f.number))
        .chain([
            format!("{:06}.log", manifest.log_number),
            "000077.sst".into(),
        ])
        .chain(["LOCK", "LOG", "LOG.old", "MANIFEST"].map(String::from))
        .collect();
    expected.sort();
    let mut actual = fs.list_dir(dir()).unwrap();
    actual.sort();
    assert_eq!(actual, expected);
}

fn table(number: u64, level: u32, lo: &[u8], hi: &[u8], seq: u64) -> FileMeta {
    use lsm_demo::key::{ValueType, internal_key};
    FileMeta {
        number,
        level,
        file_size: 100,
        entries: 2,
        smallest: internal_key(lo, seq, ValueType::Value),
        largest: internal_key(hi, seq, ValueType::Value),
    }
}

#[test]
fn manifests_that_contradict_themselves_are_refused_without_a_panic() {
    let good = Manifest {
        next_file_number: 10,
        last_sequence: 100,
        log_number: 9,
        files: vec![table(3, 0, b"a", b"m", 5), table(4, 1, b"a", b"c", 4)],
        ..Manifest::default()
    };
    let cases: Vec<(&str, Manifest)> = vec![
        ("listed twice", {
            let mut m = good.clone();
            m.files.push(m.files[0].clone());
            m
        }),
        ("level", {
            let mut m = good.clone();
            m.files[0].level = 9;
            m
        }),
        ("next file number", {
            let mut m = good.clone();
            m.next_file_number = 4;
            m.log_number = 2;
            m
        }),
        ("largest sequence", {
            let mut m = good.clone();
            m.last_sequence = u64::MAX - 1;
            m
        }),
    ];
    for (what, manifest) in cases {
        let fs = FaultInjectionFs::new();
        fs.create_dir_all(dir()).unwrap();
        write_manifest(&fs, dir(), &manifest).unwrap();
        let err = open(&fs, &options()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corruption, "{what}: {err}");
        assert!(err.to_string().contains(what), "{what}: {err}");
    }
}

#[test]
fn a_full_disk_during_a_flush_is_no_space_and_the_database_resumes_on_its_own() {
    let fs = FaultInjectionFs::new();
    let mut o = options();
    // One file per log: the flush's new log is one `create`.
    o.set_bgerror_resume_retry_interval(5_000)
        .set_wal_stripes(0);
    let db = open(&fs, &o).unwrap();
    db.put_opt(b"a", b"1", &sync()).unwrap();
    fs.set_error_kind(FaultOp::Create, io::ErrorKind::StorageFull);
    // The flush's new log is created; its table file is not.
    fs.fail_after(FaultOp::Create, 1);
    let err = db.flush().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NoSpace, "{err}");
    assert!(err.to_string().contains(".sst"), "{err}");
    let refused = db.put(b"b", b"2").unwrap_err();
    assert!(matches!(refused, Error::BackgroundError(_)));
    assert_eq!(refused.kind(), ErrorKind::NoSpace);
    // Space comes back: the database resumes without being asked.
    fs.clear_fault(FaultOp::Create);
    let deadline = Instant::now() + Duration::from_secs(10);
    while db.put(b"b", b"2").is_err() {
        assert!(Instant::now() < deadline, "did not resume");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(db.stats().level_files[0], 1);
    assert!(info_log(&fs).contains("resumed"));
    drop(db);
    fs.simulate_crash();
    let db = open(&fs, &o).unwrap();
    assert_eq!(contents(&db), map(&[("a", "1"), ("b", "2")]));
}

#[test]
fn a_failed_log_write_stops_writes_until_resume_and_loses_nothing_acknowledged() {
    for kind in [MemtableKind::SkipList, MemtableKind::Vector] {
        let fs = FaultInjectionFs::new();
        fs.set_torn_appends(true);
        let mut o = options();
        o.set_memtable_kind(kind).set_max_bgerror_resume_count(0);
        let db = open(&fs, &o).unwrap();
        db.put_opt(b"a", b"1", &sync()).unwrap();
        fs.set_error_kind(FaultOp::Append, io::ErrorKind::StorageFull);
        fs.fail_next(FaultOp::Append, 1);
        let err = db.put_opt(b"torn", b"x", &sync()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NoSpace, "{err}");
        let stopped = db.put_opt(b"b", b"2", &sync()).unwrap_err();
        assert!(matches!(stopped, Error::BackgroundError(_)), "{stopped}");
        db.resume().unwrap();
        db.put_opt(b"b", b"2", &sync()).unwrap();
        db.resume().unwrap(); // nothing to do
        drop(db);
        // Power fails: the torn record in the retired log must not cost
        // the write acknowledged after it.
        fs.simulate_crash();
        let db = open(&fs, &o).unwrap();
        assert_eq!(contents(&db), map(&[("a", "1"), ("b", "2")]), "{kind:?}");
        assert!(db.stats().recovery.files_set_aside.is_empty());
    }
}

#[test]
fn a_batch_one_log_record_cannot_hold_is_refused_by_validation() {
    let mut o = options();
    o.set_write_group_options(write_group::Options::new().with_max_group_bytes(usize::MAX));
    let err = o.validate().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("max_group_bytes"), "{err}");
}

#[test]
fn the_info_log_tells_each_open_and_keeps_the_previous_one() {
    let fs = FaultInjectionFs::new();
    let db = open(&fs, &options()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    drop(db);
    let first = info_log(&fs);
    assert!(
        first.contains("created a new database") || first.contains("opening"),
        "{first}"
    );
    assert!(first.contains("flushed memtable"), "{first}");
    drop(open(&fs, &options()).unwrap());
    let old = fs.read_file(&dir().join("LOG.old")).unwrap();
    assert_eq!(String::from_utf8(old).unwrap(), first);
    assert!(info_log(&fs).contains("opened:"));
}

#[test]
fn a_failed_table_read_is_an_io_error_that_names_the_file() {
    let fs = FaultInjectionFs::new();
    let db = open(&fs, &options()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    fs.fail_next(FaultOp::Read, 1);
    let err = db.get(b"k").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IOError, "{err}");
    assert!(err.to_string().contains(".sst"), "{err}");
    let source = std::error::Error::source(&err).unwrap();
    let io = source.downcast_ref::<io::Error>().unwrap();
    assert!(io.to_string().contains("injected fault: Read"), "{io}");
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

/// A memtable switch creates the new log, then ends the old one with a
/// trailer naming it (and, for a mapped log, cuts its zeros away) and syncs
/// it. A process that dies in between leaves the new log holding nothing
/// (a header, not even that, or the zeros a mapped log is grown with) and
/// the old one without its trailer (mapped: ending in zeros). No write was
/// lost: the old log is the last that took writes, and recovery treats it
/// as the last log, in every mode that drops a torn tail, and sets nothing
/// aside. The same holds when the old log was closed (a positional one
/// then ends with the trailer of a closed log) and the next open died
/// after creating its log, before its manifest.
#[test]
fn a_switch_cut_short_by_a_crash_leaves_the_old_log_last() {
    use lsm_demo::env::PosixFs;
    use std::io::Write;
    // (mapped log, the new log's header written: else empty, or zeros;
    // the old log closed)
    for (mapped, header, closed) in [
        (false, true, false),
        (false, false, false),
        (false, true, true),
        (true, true, false),
        (true, false, false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = options();
        o.set_allow_mmap_writes(mapped);
        let db = DB::open(&o, dir.path()).unwrap();
        let mut expected = BTreeMap::new();
        for i in 0..10 {
            let (k, v) = (format!("k{i}"), format!("v{i}"));
            db.put(&k, &v).unwrap();
            expected.insert(k.into_bytes(), v.into_bytes());
        }
        drop(db);
        let old = common::log_files(dir.path()).pop().unwrap();
        if !mapped && !closed {
            common::cut_closed_trailer(&old);
        }
        let number: u64 = old.file_stem().unwrap().to_str().unwrap().parse().unwrap();
        let new = dir.path().join(format!("{:06}.log", number + 1));
        let append = |path: &Path| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .unwrap()
        };
        let file = PosixFs.create(&new).unwrap();
        if header {
            drop(lsm_demo::wal::LogWriter::with_previous(file, number).unwrap());
        }
        if mapped {
            // Not cut: the rest of the old log's growth; the new log grown.
            append(&old).write_all(&[0; 64 << 10]).unwrap();
            let len = std::fs::metadata(&new).map_or(0, |m| m.len());
            append(&new)
                .write_all(&vec![0; (1 << 20) - len as usize])
                .unwrap();
        }
        for mode in [
            DBRecoveryMode::PointInTime,
            DBRecoveryMode::TolerateCorruptedTailRecords,
        ] {
            // Each mode on a copy: recovery rewrites the directory.
            let copy = tempfile::tempdir().unwrap();
            for entry in std::fs::read_dir(dir.path()).unwrap() {
                let entry = entry.unwrap();
                if entry.file_type().unwrap().is_file() {
                    std::fs::copy(entry.path(), copy.path().join(entry.file_name())).unwrap();
                }
            }
            let mut o = Options::default();
            o.set_allow_mmap_writes(mapped).set_wal_recovery_mode(mode);
            let what = format!("mapped {mapped}, header {header}, closed {closed}, {mode:?}");
            let db = DB::open(&o, copy.path()).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(contents(&db), expected, "{what}");
            let recovery = db.stats().recovery;
            assert!(recovery.files_set_aside.is_empty(), "{what}: {recovery:?}");
            assert_eq!(recovery.logs_dropped, 0, "{what}: {recovery:?}");
        }
    }
}
