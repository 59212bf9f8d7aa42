//! Databases in a [`FaultInjectionFs`] at [`DIR`], and the helpers of the
//! tests that open, damage, repair and verify them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lsm_demo::env::{FaultInjectionFs, FileSystem};
use lsm_demo::manifest::read_manifest;
use lsm_demo::{DB, IteratorMode, MemtableKind, Options, WriteOptions};

use super::{GatedTables, restore_into, snapshot};

/// Where the tests put the database.
pub const DIR: &str = "/db";

/// The database directory, in the fault-injecting file system.
pub fn dir() -> &'static Path {
    Path::new(DIR)
}

/// Default options that create the database.
pub fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o
}

/// Opens the database in `fs`.
pub fn open(fs: &FaultInjectionFs, o: &Options) -> lsm_demo::Result<DB> {
    DB::open_with_fs(o, DIR, Arc::new(fs.clone()))
}

/// Write options with `sync` set.
pub fn sync() -> WriteOptions {
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    wo
}

/// Every key and value, by a forward scan.
pub fn contents(db: &DB) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db.iterator(IteratorMode::Start)
        .map(|kv| kv.map(|(k, v)| (k.to_vec(), v.to_vec())))
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The expected contents, from string pairs.
pub fn map(pairs: &[(&str, &str)]) -> BTreeMap<Vec<u8>, Vec<u8>> {
    pairs
        .iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect()
}

/// Every file in `dir` (not in subdirectories) with its bytes, but the
/// info logs, where a failed open says why.
pub fn files(fs: &FaultInjectionFs, dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs.list_dir(dir)
        .unwrap()
        .into_iter()
        .filter(|n| !fs.is_dir(&dir.join(n)) && n != "LOG" && n != "LOG.old")
        .map(|n| {
            let bytes = fs.read_file(&dir.join(&n)).unwrap();
            (n, bytes)
        })
        .collect()
}

/// Creates `path` holding `bytes`, synced.
pub fn write_file(fs: &FaultInjectionFs, path: &Path, bytes: &[u8]) {
    let mut f = fs.create(path).unwrap();
    f.append(bytes).unwrap();
    f.sync().unwrap();
}

/// The current info log (`LOG`).
pub fn info_log(fs: &FaultInjectionFs) -> String {
    String::from_utf8(fs.read_file(&dir().join("LOG")).unwrap()).unwrap()
}

/// A database whose directory holds two logs to replay: the state after a
/// crash while a frozen memtable waited for its flush. The older log holds
/// `k1=old`, `k2=old`, then a delete of `k1`; the newer one `k3=new`.
/// Returns both logs and the byte offset of the delete's record in the
/// older one.
pub fn two_logs(fs: &FaultInjectionFs, kind: MemtableKind) -> (PathBuf, PathBuf, u64) {
    let inner = FaultInjectionFs::new();
    let gated = GatedTables::new(inner.clone());
    let mut o = options();
    o.set_memtable_kind(kind);
    let db = DB::open_with_fs(&o, DIR, Arc::new(gated.clone())).unwrap();
    db.put_opt(b"k1", b"old", &sync()).unwrap();
    db.put_opt(b"k2", b"old", &sync()).unwrap();
    let (older, newer) = (dir().join("000001.log"), dir().join("000002.log"));
    let delete_at = inner.file_size(&older).unwrap();
    db.delete_opt(b"k1", &sync()).unwrap();
    let files = std::thread::scope(|s| {
        // The flush moves on to log 2, then waits with its table unwritten.
        let flush = s.spawn(|| db.flush());
        let deadline = Instant::now() + Duration::from_secs(10);
        while !gated.holding() {
            assert!(Instant::now() < deadline, "the flush did not start");
            std::thread::sleep(Duration::from_millis(1));
        }
        db.put_opt(b"k3", b"new", &sync()).unwrap();
        let files = snapshot(&inner, dir());
        gated.open_gate();
        flush.join().unwrap().unwrap();
        files
    });
    drop(db);
    restore_into(fs, &files);
    assert_eq!(read_manifest(fs, dir()).unwrap().unwrap().log_number, 1);
    assert!(fs.exists(&older) && fs.exists(&newer));
    (older, newer, delete_at)
}

/// Flips a bit of the byte at `at` in `path`.
pub fn damage(fs: &FaultInjectionFs, path: &Path, at: u64) {
    let mut bytes = fs.read_file(path).unwrap();
    bytes[at as usize] ^= 0x40;
    write_file(fs, path, &bytes);
}
