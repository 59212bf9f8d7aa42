//! Helpers shared by the integration tests.

// Each test file uses some of them.
#![allow(dead_code)]

pub mod faults;
pub mod in_memory;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lsm_demo::env::{FaultInjectionFs, FileSystem};

/// A file system that holds the creation of table files until the test
/// lets them through, so a test can make flushes fall behind.
#[derive(Debug, Clone)]
pub struct GatedTables {
    inner: FaultInjectionFs,
    gate: Arc<(std::sync::Mutex<Gate>, std::sync::Condvar)>,
}

#[derive(Debug, Default)]
pub struct Gate {
    open: bool,
    permits: u32,
    waiting: u32,
}

impl GatedTables {
    pub fn new(inner: FaultInjectionFs) -> Self {
        GatedTables {
            inner,
            gate: Arc::default(),
        }
    }

    /// Lets `n` more table files be created.
    #[allow(dead_code)] // not every test file uses it
    pub fn permit(&self, n: u32) {
        let (m, cv) = &*self.gate;
        m.lock().unwrap().permits += n;
        cv.notify_all();
    }

    /// Holds table files again from now on (none permitted).
    #[allow(dead_code)] // not every test file uses it
    pub fn close_gate(&self) {
        let (m, _) = &*self.gate;
        let mut g = m.lock().unwrap();
        g.open = false;
        g.permits = 0;
    }

    /// Lets every table file through from now on.
    pub fn open_gate(&self) {
        let (m, cv) = &*self.gate;
        m.lock().unwrap().open = true;
        cv.notify_all();
    }

    /// Whether a table creation is held at the gate.
    pub fn holding(&self) -> bool {
        self.gate.0.lock().unwrap().waiting > 0
    }
}

impl FileSystem for GatedTables {
    fn create_dir_all(&self, path: &Path) -> std::io::Result<()> {
        self.inner.create_dir_all(path)
    }
    fn create(&self, path: &Path) -> std::io::Result<Box<dyn lsm_demo::env::WritableFile>> {
        if path.extension().is_some_and(|e| e == "sst") {
            let (m, cv) = &*self.gate;
            let mut g = m.lock().unwrap();
            g.waiting += 1;
            while !g.open && g.permits == 0 {
                g = cv.wait(g).unwrap();
            }
            g.waiting -= 1;
            if !g.open {
                g.permits -= 1;
            }
        }
        self.inner.create(path)
    }
    fn open_append(&self, path: &Path) -> std::io::Result<Box<dyn lsm_demo::env::WritableFile>> {
        self.inner.open_append(path)
    }
    fn open_random(
        &self,
        path: &Path,
    ) -> std::io::Result<Arc<dyn lsm_demo::env::RandomAccessFile>> {
        self.inner.open_random(path)
    }
    fn read_file(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        self.inner.read_file(path)
    }
    fn file_size(&self, path: &Path) -> std::io::Result<u64> {
        self.inner.file_size(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> std::io::Result<()> {
        self.inner.remove_file(path)
    }
    fn remove_dir(&self, path: &Path) -> std::io::Result<()> {
        self.inner.remove_dir(path)
    }
    fn list_dir(&self, path: &Path) -> std::io::Result<Vec<String>> {
        self.inner.list_dir(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        self.inner.is_dir(path)
    }
    fn sync_dir(&self, path: &Path) -> std::io::Result<()> {
        self.inner.sync_dir(path)
    }
    fn lock(&self, path: &Path) -> std::io::Result<Box<dyn lsm_demo::env::FileLock>> {
        self.inner.lock(path)
    }
}

/// Every file under a directory, with its bytes.
pub type Snapshot = BTreeMap<PathBuf, Vec<u8>>;

/// The files under `dir` (subdirectories included) as they are now.
#[allow(dead_code)] // not every test file uses it
pub fn snapshot(fs: &FaultInjectionFs, dir: &Path) -> Snapshot {
    let mut out = Snapshot::new();
    for name in fs.list_dir(dir).unwrap() {
        let path = dir.join(&name);
        if fs.is_dir(&path) {
            out.extend(snapshot(fs, &path));
        } else {
            out.insert(path.clone(), fs.read_file(&path).unwrap());
        }
    }
    out
}

/// Writes `files` into `fs`, durably.
#[allow(dead_code)] // not every test file uses it
pub fn restore_into(fs: &FaultInjectionFs, files: &Snapshot) {
    for (path, bytes) in files {
        fs.create_dir_all(path.parent().unwrap()).unwrap();
        let mut f = fs.create(path).unwrap();
        f.append(bytes).unwrap();
        f.sync().unwrap();
        fs.sync_dir(path.parent().unwrap()).unwrap();
    }
}

/// The log files in `dir`, oldest first.
pub fn log_files(dir: &Path) -> Vec<PathBuf> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs
}

/// Cuts the trailer that a positional log the engine closed ends with (a
/// record header, then a group header no group has: first sequence 0 and
/// count `u32::MAX`, then the next log's number, 0 for none), as a process
/// that died would not have written it. Returns the log's bytes left.
#[allow(dead_code)] // not every test crate uses it
pub fn cut_closed_trailer(log: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(log).unwrap();
    let trailer = bytes.split_off(bytes.len() - 32);
    let mut payload = [0u8; 20];
    payload[8..12].fill(0xff);
    assert_eq!(
        trailer[12..],
        payload,
        "{} ends as a closed log",
        log.display()
    );
    std::fs::write(log, &bytes).unwrap();
    bytes
}

/// Every `(key, value)` of `db`, read forward.
pub fn scan(db: &lsm_demo::DB) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.iterator(lsm_demo::IteratorMode::Start)
        .map(|kv| {
            let (k, v) = kv.expect("iteration");
            (k.into_vec(), v.into_vec())
        })
        .collect()
}

/// Every `(key, value)` of `db`, read backward, in key order.
pub fn scan_reverse(db: &lsm_demo::DB) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut all: Vec<_> = db
        .iterator(lsm_demo::IteratorMode::End)
        .map(|kv| {
            let (k, v) = kv.expect("iteration");
            (k.into_vec(), v.into_vec())
        })
        .collect();
    all.reverse();
    all
}

/// Options that make a few kilobytes flush and compact: 64 KiB memtables
/// and tables, and a compaction once level 0 holds two tables.
pub fn small_opts(kind: lsm_demo::MemtableKind) -> lsm_demo::Options {
    let mut o = lsm_demo::Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(64 << 10);
    o.set_memtable_kind(kind);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_target_file_size_base(64 << 10);
    o
}

/// A model's pairs in key order, as [`scan`] returns the database's.
pub fn model_pairs(m: &BTreeMap<Vec<u8>, Vec<u8>>) -> Vec<(Vec<u8>, Vec<u8>)> {
    m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}
