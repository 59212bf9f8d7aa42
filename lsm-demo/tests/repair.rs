//! Destroying, repairing and verifying a database through the library:
//! each refuses another store's files, and touches only the files it
//! names.

use std::collections::BTreeMap;
use std::sync::Arc;

use lsm_demo::env::{FaultInjectionFs, FileSystem};
use lsm_demo::manifest::read_manifest;
use lsm_demo::{DB, Error, ErrorKind, MemtableKind};

mod common;
use common::in_memory::{
    DIR, contents, damage, dir, files, map, open, options, sync, two_logs, write_file,
};

#[test]
fn destroy_deletes_the_database_files_and_nothing_else() {
    let fs = FaultInjectionFs::new();
    let arc: Arc<dyn FileSystem> = Arc::new(fs.clone());
    // Missing: nothing to do.
    DB::destroy_with_fs(&options(), DIR, arc.clone()).unwrap();
    let (older, _, delete_at) = two_logs(&fs, MemtableKind::SkipList);
    damage(&fs, &older, delete_at + 12 + 13);
    let db = open(&fs, &options()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    assert!(matches!(
        DB::destroy_with_fs(&options(), DIR, arc.clone()),
        Err(Error::Locked(_))
    ));
    drop(db);
    assert!(fs.exists(&dir().join("lost/000002.log")));
    write_file(&fs, &dir().join("notes.txt"), b"mine");
    write_file(&fs, &dir().join("lost/readme"), b"mine too");
    DB::destroy_with_fs(&options(), DIR, arc.clone()).unwrap();
    assert_eq!(fs.list_dir(dir()).unwrap(), ["lost", "notes.txt"]);
    assert_eq!(fs.list_dir(&dir().join("lost")).unwrap(), ["readme"]);
    // Without those, the directory goes too.
    fs.remove_file(&dir().join("notes.txt")).unwrap();
    fs.remove_file(&dir().join("lost/readme")).unwrap();
    drop(open(&fs, &options()).unwrap());
    DB::destroy_with_fs(&options(), DIR, arc).unwrap();
    assert!(!fs.exists(dir()));
}

#[test]
fn destroy_refuses_another_stores_database() {
    let fs = FaultInjectionFs::new();
    fs.create_dir_all(dir()).unwrap();
    write_file(&fs, &dir().join("CURRENT"), b"MANIFEST-000005\n");
    write_file(&fs, &dir().join("000004.log"), b"");
    write_file(&fs, &dir().join("000005.sst"), b"rocksdb");
    let before = files(&fs, dir());
    let err = DB::destroy_with_fs(&options(), DIR, Arc::new(fs.clone())).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert_eq!(files(&fs, dir()), before);
    // A file named MANIFEST that is not ours.
    let fs = FaultInjectionFs::new();
    fs.create_dir_all(dir()).unwrap();
    write_file(
        &fs,
        &dir().join("MANIFEST"),
        b"somebody's list of things to ship",
    );
    write_file(&fs, &dir().join("000001.sst"), b"data");
    let err = DB::destroy_with_fs(&options(), DIR, Arc::new(fs.clone())).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(fs.exists(&dir().join("000001.sst")));
}

#[test]
fn repair_rebuilds_a_database_without_its_manifest() {
    let fs = FaultInjectionFs::new();
    let mut o = options();
    o.set_write_buffer_size(64 << 10);
    let db = open(&fs, &o).unwrap();
    let mut expected = BTreeMap::new();
    for i in 0..3000u32 {
        let (k, v) = (format!("key{:05}", i % 1000), format!("value{i}"));
        db.put(&k, &v).unwrap();
        expected.insert(k.into_bytes(), v.into_bytes());
    }
    db.delete(b"key00007").unwrap();
    expected.remove(&b"key00007"[..]);
    drop(db);
    fs.remove_file(&dir().join("MANIFEST")).unwrap();
    let report = lsm_demo::repair::repair_with_fs(&o, dir(), &fs).unwrap();
    assert!(
        report.tables_salvaged >= 1 && report.records_replayed >= 1,
        "{report}"
    );
    assert_eq!(report.entries_written, expected.len() as u64);
    let db = open(&fs, &o).unwrap();
    assert_eq!(contents(&db), expected);
    assert_eq!(db.stats().level_files[0], 0);
    drop(db);
    let verified = lsm_demo::repair::verify_with_fs(&options(), dir(), &fs).unwrap();
    assert!(verified.is_clean(), "{verified}");
}

#[test]
fn repair_sets_damaged_files_aside_and_keeps_the_rest() {
    let fs = FaultInjectionFs::new();
    let db = open(&fs, &options()).unwrap();
    db.put(b"in-table", b"1").unwrap();
    db.flush().unwrap();
    db.put(b"in-second-table", b"2").unwrap();
    db.flush().unwrap();
    db.put(b"in-log", b"3").unwrap();
    drop(db);
    let manifest = read_manifest(&fs, dir()).unwrap().unwrap();
    let first = dir().join(format!("{:06}.sst", manifest.files[0].number));
    damage(&fs, &first, 3);
    let verified = lsm_demo::repair::verify_with_fs(&options(), dir(), &fs).unwrap();
    assert_eq!(verified.damaged.len(), 1, "{verified}");
    assert_eq!(verified.damaged[0].0, first);
    let report = lsm_demo::repair::repair_with_fs(&options(), dir(), &fs).unwrap();
    let lost = dir().join("lost");
    assert!(
        report
            .files_set_aside
            .contains(&lost.join(first.file_name().unwrap()))
    );
    assert!(report.files_set_aside.contains(&lost.join("MANIFEST")));
    let db = open(&fs, &options()).unwrap();
    assert_eq!(
        contents(&db),
        map(&[("in-log", "3"), ("in-second-table", "2")])
    );
}

#[test]
fn repair_and_verify_refuse_another_stores_database() {
    let fs = FaultInjectionFs::new();
    fs.create_dir_all(dir()).unwrap();
    write_file(&fs, &dir().join("CURRENT"), b"MANIFEST-000005\n");
    write_file(&fs, &dir().join("000004.log"), b"");
    let before = files(&fs, dir());
    let err = lsm_demo::repair::repair_with_fs(&options(), dir(), &fs).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    let err = lsm_demo::repair::verify_with_fs(&options(), dir(), &fs).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert_eq!(files(&fs, dir()), before);
}

#[test]
fn verify_names_a_damaged_log_record() {
    let fs = FaultInjectionFs::new();
    let mut o = options();
    // The records in the log file itself, where the test damages them.
    o.set_wal_stripes(0);
    let db = open(&fs, &o).unwrap();
    db.put_opt(b"a", b"1", &sync()).unwrap();
    db.put_opt(b"b", b"2", &sync()).unwrap();
    drop(db);
    let log = dir().join("000001.log");
    damage(&fs, &log, 20 + 12 + 3);
    let report = lsm_demo::repair::verify_with_fs(&options(), dir(), &fs).unwrap();
    assert_eq!(report.logs_checked, 1);
    assert_eq!(report.damaged.len(), 1, "{report}");
    assert!(report.damaged[0].1.contains("offset 20"), "{report}");
    assert!(report.to_string().ends_with("DAMAGED"));
}
