//! The storage layer under simulated power loss and injected I/O errors,
//! driven by a miniature engine that follows the durability protocol the
//! real one must follow:
//!
//! - a write is appended to the WAL and acknowledged as durable once a
//!   `sync` of the WAL succeeded;
//! - a new WAL file is made durable by a directory sync before writes to it
//!   are acknowledged;
//! - a flush writes a table (synced by `finish`), syncs the directory, then
//!   replaces the manifest (which records the new WAL number), and only then
//!   deletes the old WAL.
//!
//! After any crash (clean or torn) and any injected failure, recovery must
//! succeed and give the state after some prefix of the writes that includes
//! every acknowledged one.

use key_comparator::BytewiseComparator;
use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem, PosixFs};
use lsm_demo::manifest::{FileMeta, Manifest, read_manifest, write_manifest};
use lsm_demo::table::{SharedComparator, Table, TableBuilder, TableOptions};
use lsm_demo::wal::{DBRecoveryMode, LogReader, LogWriter};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

type State = BTreeMap<Vec<u8>, Vec<u8>>;

const DIR: &str = "/db";

fn cmp() -> SharedComparator {
    Arc::new(BytewiseComparator)
}

fn whole_key(k: &[u8]) -> &[u8] {
    k
}

fn log_path(n: u64) -> PathBuf {
    Path::new(DIR).join(format!("{n:06}.log"))
}

fn table_path(n: u64) -> PathBuf {
    Path::new(DIR).join(format!("{n:06}.sst"))
}

fn encode(key: &[u8], value: &[u8]) -> Vec<u8> {
    [&[key.len() as u8][..], key, value].concat()
}

fn decode(record: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let n = usize::from(record[0]);
    (record[1..1 + n].to_vec(), record[1 + n..].to_vec())
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct MiniEngine {
    fs: FaultInjectionFs,
    manifest: Manifest,
    log: LogWriter,
    log_number: u64,
    memtable: State,
}

impl MiniEngine {
    fn create(fs: &FaultInjectionFs) -> io::Result<Self> {
        fs.create_dir_all(Path::new(DIR))?;
        let manifest = Manifest {
            next_file_number: 2,
            last_sequence: 0,
            log_number: 1,
            ..Manifest::default()
        };
        let log = LogWriter::new(fs.create(&log_path(1))?)?;
        fs.sync_dir(Path::new(DIR))?;
        write_manifest(fs, Path::new(DIR), &manifest)?;
        Ok(Self {
            fs: fs.clone(),
            manifest,
            log,
            log_number: 1,
            memtable: State::new(),
        })
    }

    fn put(&mut self, key: &[u8], value: &[u8], sync: bool) -> io::Result<()> {
        self.log.add_record(&encode(key, value))?;
        if sync {
            self.log.sync()?;
        }
        self.memtable.insert(key.to_vec(), value.to_vec());
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        let dir = Path::new(DIR);
        let new_log = self.manifest.next_file_number;
        let table = new_log + 1;
        let log = LogWriter::new(self.fs.create(&log_path(new_log))?)?;
        let mut builder = TableBuilder::new(
            self.fs.create(&table_path(table))?,
            TableOptions {
                block_size: 64,
                ..TableOptions::default()
            },
            cmp(),
            whole_key,
        );
        for (k, v) in &self.memtable {
            builder.add(k, v)?;
        }
        let info = builder.finish()?;
        self.fs.sync_dir(dir)?;
        let mut next = self.manifest.clone();
        next.next_file_number = table + 1;
        next.log_number = new_log;
        next.files.push(FileMeta {
            number: table,
            level: 0,
            file_size: info.file_size,
            entries: info.entries,
            smallest: info.smallest,
            largest: info.largest,
        });
        write_manifest(&self.fs, dir, &next)?;
        self.fs.remove_file(&log_path(self.log_number))?;
        self.manifest = next;
        self.log = log;
        self.log_number = new_log;
        self.memtable.clear();
        Ok(())
    }
}

/// Recovers the state from the durable files; every failure is an error.
fn recover(fs: &dyn FileSystem) -> Result<State, String> {
    let dir = Path::new(DIR);
    let manifest = read_manifest(fs, dir)
        .map_err(|e| e.to_string())?
        .ok_or("no manifest")?;
    let mut state = State::new();
    let mut files = manifest.files.clone();
    files.sort_by_key(|f| f.number);
    for f in &files {
        let table = Table::open_file(fs, &table_path(f.number), cmp(), whole_key)
            .map_err(|e| e.to_string())?;
        if table.file_size() != f.file_size {
            return Err(format!("table {} has the wrong size", f.number));
        }
        let mut it = table.iter();
        it.seek_to_first();
        while it.valid() {
            state.insert(it.key().to_vec(), it.value().to_vec());
            it.next();
        }
        it.status().map_err(|e| e.to_string())?;
    }
    let mut logs: Vec<u64> = fs
        .list_dir(dir)
        .map_err(|e| e.to_string())?
        .iter()
        .filter_map(|name| name.strip_suffix(".log")?.parse().ok())
        .filter(|&n| n >= manifest.log_number)
        .collect();
    logs.sort_unstable();
    for n in logs {
        let mut reader = LogReader::open(fs, &log_path(n), DBRecoveryMode::PointInTime)
            .map_err(|e| e.to_string())?;
        while let Some(record) = reader.next_record().map_err(|e| e.to_string())? {
            let (k, v) = decode(record);
            state.insert(k, v);
        }
        if let Some(tail) = reader.tail_report()
            && tail.records_follow
        {
            return Err(format!("damage before intact records: {tail}"));
        }
    }
    Ok(state)
}

/// One run: writes with random syncs and flushes, random injected
/// failures, then a crash; checks the recovered state.
fn run(seed: u64, fault_probability: f64) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let fs = FaultInjectionFs::new();
    let mut engine = MiniEngine::create(&fs).unwrap();
    for (i, op) in [
        FaultOp::Append,
        FaultOp::Sync,
        FaultOp::SyncDir,
        FaultOp::Rename,
        FaultOp::Create,
        FaultOp::Remove,
    ]
    .into_iter()
    .enumerate()
    {
        fs.fail_randomly(op, fault_probability, seed + i as u64);
    }
    // The state after each prefix of the attempted writes.
    let mut states = vec![State::new()];
    let mut acknowledged = 0;
    for _ in 0..rng.below(60) {
        let key = vec![b'a' + rng.below(8) as u8];
        let value = rng.next().to_le_bytes()[..1 + rng.below(7) as usize].to_vec();
        let mut next = states.last().unwrap().clone();
        next.insert(key.clone(), value.clone());
        states.push(next);
        let sync = rng.below(3) == 0;
        if engine.put(&key, &value, sync).is_err() {
            break;
        }
        if sync {
            acknowledged = states.len() - 1;
        }
        if rng.below(10) == 0 {
            if engine.flush().is_err() {
                break;
            }
            acknowledged = states.len() - 1;
        }
    }
    fs.clear_faults();
    if rng.below(2) == 0 {
        fs.simulate_crash();
    } else {
        fs.simulate_crash_torn(rng.next());
    }
    let recovered = recover(&fs).unwrap_or_else(|e| panic!("seed {seed}: recovery failed: {e}"));
    let prefix = states.iter().rposition(|s| *s == recovered);
    match prefix {
        Some(k) if k >= acknowledged => {}
        Some(k) => panic!(
            "seed {seed}: lost acknowledged writes: state after {k} writes, {acknowledged} acknowledged"
        ),
        None => panic!(
            "seed {seed}: recovered a state that no prefix of the writes gives: {recovered:?}"
        ),
    }
}

#[test]
fn crashes_keep_acknowledged_writes() {
    for seed in 0..300 {
        run(seed, 0.0);
    }
}

#[test]
fn crashes_after_injected_failures_still_recover() {
    for seed in 0..300 {
        run(seed, 0.03);
    }
}

#[test]
fn posix_lock_excludes_another_process() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("LOCK");
    let lock = PosixFs.lock(&path).unwrap();
    // util-linux flock(1): exit status 1 when the lock is busy.
    let busy = std::process::Command::new("flock")
        .arg("-n")
        .arg(&path)
        .arg("true")
        .status();
    let Ok(busy) = busy else {
        eprintln!("flock(1) not available; skipped the cross-process check");
        return;
    };
    assert!(!busy.success(), "another process took a held lock");
    drop(lock);
    let free = std::process::Command::new("flock")
        .arg("-n")
        .arg(&path)
        .arg("true")
        .status()
        .unwrap();
    assert!(free.success(), "the lock was not released on drop");
}
