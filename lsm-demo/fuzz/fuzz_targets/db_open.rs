//! A database directory built from arbitrary files, opened through
//! `DB::open` in a recovery mode the input picks, read in whole, written to,
//! and repaired. No panic, no unbounded allocation, and the files that are
//! not the database's (`CURRENT`, `1.log`, `notes.txt`) are never deleted.
//!
//! Input: one byte for the recovery mode, then entries of
//! `name index: u8, length: u16 LE, bytes` (names from `NAMES`, index
//! modulo their count; a later entry replaces an earlier one of the same
//! name). `seeds/db_open` holds real databases in this form.
#![no_main]

use std::path::Path;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use lsm_demo::env::{FaultInjectionFs, FileSystem};
use lsm_demo::repair::repair_with_fs;
use lsm_demo::{DB, DBRecoveryMode, IteratorMode, Options};

const DIR: &str = "/db";
const NAMES: [&str; 22] = [
    "MANIFEST",
    "000001.log",
    "000002.log",
    "000003.log",
    "000004.log",
    "000005.log",
    "000006.log",
    "000007.log",
    "000008.log",
    "000001.sst",
    "000002.sst",
    "000003.sst",
    "000004.sst",
    "000005.sst",
    "000006.sst",
    "000007.sst",
    "000008.sst",
    "MANIFEST.tmp",
    "LOG",
    "CURRENT",
    "1.log",
    "notes.txt",
];
/// Names that are not the database's: they must survive.
const STRANGERS: [&str; 3] = ["CURRENT", "1.log", "notes.txt"];

fn files(data: &[u8]) -> Vec<(&'static str, &[u8])> {
    let mut out: Vec<(&'static str, &[u8])> = Vec::new();
    let mut rest = data;
    while let [index, a, b, tail @ ..] = rest {
        let name = NAMES[*index as usize % NAMES.len()];
        let len = (u16::from_le_bytes([*a, *b]) as usize).min(tail.len());
        let (bytes, after) = tail.split_at(len);
        out.retain(|(n, _)| *n != name);
        out.push((name, bytes));
        rest = after;
    }
    out
}

fn directory(files: &[(&str, &[u8])]) -> FaultInjectionFs {
    let fs = FaultInjectionFs::new();
    fs.create_dir_all(Path::new(DIR)).unwrap();
    for (name, bytes) in files {
        let mut f = fs.create(&Path::new(DIR).join(name)).unwrap();
        f.append(bytes).unwrap();
        f.sync().unwrap();
    }
    fs
}

fn strangers_kept(fs: &FaultInjectionFs, files: &[(&str, &[u8])]) {
    for (name, bytes) in files.iter().filter(|(n, _)| STRANGERS.contains(n)) {
        let here = Path::new(DIR).join(name);
        let lost = Path::new(DIR).join("lost").join(name);
        let kept = fs.read_file(&here).or_else(|_| fs.read_file(&lost));
        assert_eq!(kept.ok().as_deref(), Some(*bytes), "{name} was deleted or changed");
    }
}

fn exercise(fs: &FaultInjectionFs, opts: &Options) {
    let Ok(db) = DB::open_with_fs(opts, DIR, Arc::new(fs.clone())) else {
        return;
    };
    for kv in db.iterator(IteratorMode::Start).take(100_000) {
        if kv.is_err() {
            break;
        }
    }
    let _ = db.get(b"key");
    let _ = db.put(b"fuzz", b"value");
    let _ = db.flush();
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mode = [
        DBRecoveryMode::PointInTime,
        DBRecoveryMode::TolerateCorruptedTailRecords,
        DBRecoveryMode::AbsoluteConsistency,
        DBRecoveryMode::SkipAnyCorruptedRecord,
    ][mode as usize % 4];
    let files = files(rest);
    let mut opts = Options::default();
    opts.create_if_missing(true)
        .set_write_buffer_size(64 << 10)
        .set_wal_recovery_mode(mode);

    let fs = directory(&files);
    exercise(&fs, &opts);
    strangers_kept(&fs, &files);

    let fs = directory(&files);
    if repair_with_fs(&opts, Path::new(DIR), &fs).is_ok() {
        exercise(&fs, &opts);
    }
    strangers_kept(&fs, &files);
});
