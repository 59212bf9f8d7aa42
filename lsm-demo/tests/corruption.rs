//! Damage every kind of file of a database, then open it through `DB::open`
//! (in the spirit of RocksDB's `corruption_test.cc`).
//!
//! The database holds tables on level 0 and below, an older log waiting for
//! its flush and the current log, all written by acknowledged synced
//! writes. Each file gets each damage (bit flips, truncations, zeroed
//! stretches, deletion), and strangers are added beside them. Whatever the
//! recovery mode, opening and reading everything must end in one of two
//! ways: a clear error, or the state after some prefix of the acknowledged
//! writes (a consistent point in time). Never other data, never a panic,
//! and never a file the database did not write deleted.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lsm_demo::env::{FaultInjectionFs, FileSystem};
use lsm_demo::manifest::read_manifest;
use lsm_demo::{DB, DBRecoveryMode, ErrorKind, IteratorMode, Options, WriteOptions};

mod common;
use common::{GatedTables, Snapshot, restore_into, snapshot};

const DIR: &str = "/db";

type State = BTreeMap<Vec<u8>, Vec<u8>>;

fn dir() -> &'static Path {
    Path::new(DIR)
}

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true)
        .set_level_zero_file_num_compaction_trigger(2);
    o
}

fn open(fs: &FaultInjectionFs, o: &Options) -> lsm_demo::Result<DB> {
    DB::open_with_fs(o, DIR, Arc::new(fs.clone()))
}

fn contents(db: &DB) -> lsm_demo::Result<State> {
    db.iterator(IteratorMode::Start)
        .map(|kv| kv.map(|(k, v)| (k.to_vec(), v.to_vec())))
        .collect()
}

/// Acknowledged writes, and the state after each prefix of them.
struct History {
    states: Vec<State>,
}

impl History {
    fn new() -> History {
        History {
            states: vec![State::new()],
        }
    }

    /// One synced write: a put, or every fifth a delete.
    fn write(&mut self, db: &DB, i: u32) {
        let mut wo = WriteOptions::default();
        wo.set_sync(true);
        let key = format!("key{}", i % 13).into_bytes();
        let mut state = self.states.last().unwrap().clone();
        if i % 5 == 4 {
            db.delete_opt(&key, &wo).unwrap();
            state.remove(&key);
        } else {
            let value = format!("value{i}").into_bytes();
            db.put_opt(&key, &value, &wo).unwrap();
            state.insert(key, value);
        }
        self.states.push(state);
    }
}

fn restore(files: &Snapshot) -> FaultInjectionFs {
    let fs = FaultInjectionFs::new();
    restore_into(&fs, files);
    fs
}

/// The directory after a crash while a frozen memtable waited for its
/// flush, with tables on level 0 and below; and the writes it acknowledged.
fn build() -> (Snapshot, History) {
    let fs = FaultInjectionFs::new();
    let gated = GatedTables::new(fs.clone());
    gated.open_gate();
    let mut history = History::new();
    let mut i = 0;
    let db = DB::open_with_fs(&options(), DIR, Arc::new(gated.clone())).unwrap();
    let wait_for = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(2));
        }
    };
    for _ in 0..3 {
        for _ in 0..8 {
            history.write(&db, i);
            i += 1;
        }
        db.flush().unwrap();
        wait_for("a compaction", &|| db.stats().level_files[0] < 2);
    }
    for _ in 0..6 {
        history.write(&db, i);
        i += 1;
    }
    // The next flush freezes the memtable and moves to a new log, then
    // waits at the gate with its table unwritten.
    gated.close_gate();
    let files = std::thread::scope(|s| {
        let flush = s.spawn(|| db.flush());
        wait_for("a held flush", &|| gated.holding());
        for _ in 0..6 {
            history.write(&db, i);
            i += 1;
        }
        // Power fails here: every write was synced.
        let files = snapshot(&fs, dir());
        gated.open_gate();
        flush.join().unwrap().unwrap();
        files
    });
    drop(db);
    let manifest = read_manifest(&restore(&files), dir()).unwrap().unwrap();
    let levels = manifest.files.iter().map(|f| f.level).collect::<Vec<_>>();
    assert!(
        levels.contains(&0) && levels.iter().any(|&l| l > 0),
        "{levels:?}"
    );
    let logs = files
        .keys()
        .filter(|p| p.extension().is_some_and(|e| e == "log"));
    assert_eq!(logs.count(), 2, "{:?}", files.keys());
    (files, history)
}

/// One way to damage a directory.
#[derive(Debug, Clone)]
enum Damage {
    FlipBit(PathBuf, usize),
    Truncate(PathBuf, usize),
    Zero(PathBuf, usize, usize),
    Delete(PathBuf),
    /// A file of someone else's (or a stray name) beside the database.
    Add(PathBuf, Vec<u8>),
}

impl Damage {
    fn apply(&self, fs: &FaultInjectionFs) {
        let rewrite = |path: &Path, f: &dyn Fn(&mut Vec<u8>)| {
            let mut bytes = fs.read_file(path).unwrap();
            f(&mut bytes);
            let mut w = fs.create(path).unwrap();
            w.append(&bytes).unwrap();
            w.sync().unwrap();
        };
        match self {
            Damage::FlipBit(p, at) => rewrite(p, &|b| b[*at] ^= 0x10),
            Damage::Truncate(p, len) => rewrite(p, &|b| b.truncate(*len)),
            Damage::Zero(p, from, to) => rewrite(p, &|b| b[*from..*to].fill(0)),
            Damage::Delete(p) => fs.remove_file(p).unwrap(),
            Damage::Add(p, bytes) => {
                let mut w = fs.create(p).unwrap();
                w.append(bytes).unwrap();
                w.sync().unwrap();
            }
        }
    }

    /// The strangers a database must leave alone (a leftover
    /// `MANIFEST.tmp` is the database's own, overwritten by its next
    /// manifest).
    fn stranger(&self) -> Option<&Path> {
        match self {
            Damage::Add(p, _) if !p.ends_with("MANIFEST.tmp") => Some(p),
            _ => None,
        }
    }
}

fn damages(files: &Snapshot) -> Vec<Damage> {
    let mut out = Vec::new();
    for (path, bytes) in files {
        let len = bytes.len();
        let mut offsets = vec![
            0,
            7,
            8,
            16,
            19,
            20,
            24,
            len / 3,
            len / 2,
            2 * len / 3,
            len.saturating_sub(5),
            len.saturating_sub(1),
        ];
        offsets.retain(|&o| o < len);
        offsets.sort_unstable();
        offsets.dedup();
        out.extend(
            offsets
                .into_iter()
                .map(|o| Damage::FlipBit(path.clone(), o)),
        );
        let mut cuts = vec![0, 1, len / 2, len.saturating_sub(1)];
        cuts.retain(|&c| c < len);
        cuts.dedup();
        out.extend(cuts.into_iter().map(|c| Damage::Truncate(path.clone(), c)));
        if len > 0 {
            out.push(Damage::Zero(path.clone(), len / 2, (len / 2 + 32).min(len)));
            out.push(Damage::Zero(path.clone(), len / 2, len));
        }
        out.push(Damage::Delete(path.clone()));
    }
    let current_log = files
        .iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "log"))
        .max_by_key(|(p, _)| p.to_path_buf())
        .map(|(_, b)| b.clone())
        .unwrap();
    for (name, bytes) in [
        ("1.log", current_log.clone()),
        ("000999.log", current_log),
        ("CURRENT", b"MANIFEST-000005\n".to_vec()),
        ("000500.sst", b"a table nobody listed".to_vec()),
        ("MANIFEST.tmp", b"half a manifest".to_vec()),
        ("notes.txt", b"mine".to_vec()),
    ] {
        out.push(Damage::Add(dir().join(name), bytes));
    }
    out
}

#[test]
fn damage_to_any_file_gives_an_error_or_a_consistent_point_in_time() {
    let (files, history) = build();
    let full = history.states.last().unwrap();
    let cases = damages(&files);
    assert!(cases.len() > 100, "{}", cases.len());
    let (mut opened, mut refused) = (0, 0);
    for damage in &cases {
        for mode in [
            DBRecoveryMode::PointInTime,
            DBRecoveryMode::TolerateCorruptedTailRecords,
            DBRecoveryMode::AbsoluteConsistency,
        ] {
            let fs = restore(&files);
            damage.apply(&fs);
            let stranger = damage
                .stranger()
                .map(|p| (p.to_path_buf(), fs.read_file(p).unwrap()));
            let mut o = options();
            // No compaction after the open: the files it leaves are the
            // ones recovery chose.
            o.set_wal_recovery_mode(mode)
                .set_level_zero_file_num_compaction_trigger(100)
                .set_level_zero_stop_writes_trigger(200);
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                let db = open(&fs, &o)?;
                let state = contents(&db)?;
                drop(db);
                Ok::<State, lsm_demo::Error>(state)
            }));
            let what = format!("{damage:?} under {mode:?}");
            match outcome {
                Err(_) => panic!("{what}: panicked"),
                Ok(Ok(state)) => {
                    opened += 1;
                    assert!(
                        history.states.contains(&state),
                        "{what}: opened with a state no prefix of the writes gives: {state:?}"
                    );
                    if stranger.is_some() {
                        assert_eq!(&state, full, "{what}: a stranger cost data");
                    }
                }
                Ok(Err(e)) => {
                    refused += 1;
                    assert!(
                        matches!(
                            e.kind(),
                            ErrorKind::Corruption | ErrorKind::InvalidArgument | ErrorKind::IOError
                        ),
                        "{what}: {e}"
                    );
                }
            }
            if let Some((path, bytes)) = stranger {
                let lost = dir().join("lost").join(path.file_name().unwrap());
                let kept = fs.read_file(&path).or_else(|_| fs.read_file(&lost));
                assert_eq!(
                    kept.ok(),
                    Some(bytes),
                    "{what}: a stranger was deleted or changed"
                );
            }
        }
    }
    // Both outcomes occur: the suite exercises recovery, not only refusal.
    assert!(
        opened > 50 && refused > 50,
        "opened {opened}, refused {refused}"
    );
}

#[test]
fn undamaged_the_built_directory_opens_with_every_write() {
    let (files, history) = build();
    let fs = restore(&files);
    let db = open(&fs, &options()).unwrap();
    assert_eq!(&contents(&db).unwrap(), history.states.last().unwrap());
    assert_eq!(db.stats().recovery.logs_replayed, 2);
}
