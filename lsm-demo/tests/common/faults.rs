//! The harness of the power-loss and fault-injection tests: a model of
//! the database's contents, random writes whose values name their writer,
//! and the power loss of [`FaultInjectionFs`].

use std::collections::BTreeMap;
use std::sync::Arc;

use lsm_demo::env::FaultInjectionFs;
use lsm_demo::{DB, IteratorMode, MemtableKind, Options, WriteBatch, WriteOptions};

/// Where the tests' database lives, in the simulated file system.
pub const DIR: &str = "/fault-injection/db";

/// A database's contents: the model the tests check a scan against.
pub type State = BTreeMap<Vec<u8>, Vec<u8>>;

/// One write: its changes in order (`None` deletes).
pub type Op = Vec<(Vec<u8>, Option<Vec<u8>>)>;

/// A small deterministic generator (xorshift64*), so a failing seed replays.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }
}

/// Small memtables and files, so flushes and compactions happen every few
/// hundred writes.
pub fn options(kind: MemtableKind) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true)
        .set_write_buffer_size(64 << 10)
        .set_max_write_buffer_number(3)
        .set_memtable_kind(kind)
        .set_level_zero_file_num_compaction_trigger(2)
        .set_level_zero_stop_writes_trigger(8)
        .set_target_file_size_base(64 << 10)
        // Several levels within a few hundred kilobytes, and two
        // compaction threads: faults and crashes meet compactions into
        // every level, side by side.
        .set_max_bytes_for_level_multiplier(4.0)
        .set_max_background_jobs(3)
        .set_block_size(1024);
    o
}

pub fn open(fs: &FaultInjectionFs, o: &Options) -> lsm_demo::Result<DB> {
    DB::open_with_fs(o, DIR, Arc::new(fs.clone()))
}

pub fn write_options(sync: bool) -> WriteOptions {
    let mut wo = WriteOptions::default();
    wo.set_sync(sync);
    wo
}

/// Ends the engine that was running at the power loss (every call it makes
/// fails) and lets the file system work again.
pub fn reboot(fs: &FaultInjectionFs, db: DB) {
    drop(db);
    fs.clear_faults();
}

pub fn scan(db: &DB) -> State {
    db.iterator(IteratorMode::Start)
        .map(|kv| {
            let (k, v) = kv.expect("a clean scan");
            (k.into_vec(), v.into_vec())
        })
        .collect()
}

pub fn apply(state: &mut State, op: &Op) {
    for (k, v) in op {
        match v {
            Some(v) => state.insert(k.clone(), v.clone()),
            None => state.remove(k),
        };
    }
}

pub fn batch_of(op: &Op) -> WriteBatch {
    let mut b = WriteBatch::new();
    for (k, v) in op {
        match v {
            Some(v) => b.put(k, v),
            None => b.delete(k),
        }
    }
    b
}

/// A value names the op that wrote it (`tag`) and its key, so a value that
/// was never written, or lands under another key, is recognised.
pub fn value(tag: u64, key: &[u8], len: usize) -> Vec<u8> {
    let mut v = format!("{tag}/{}/", String::from_utf8_lossy(key)).into_bytes();
    v.resize(len.max(v.len()), b'a' + (tag % 26) as u8);
    v
}

pub fn tag_of(v: &[u8]) -> Option<u64> {
    let end = v.iter().position(|&b| b == b'/')?;
    std::str::from_utf8(&v[..end]).ok()?.parse().ok()
}

/// A put (60 %), a delete (15 %) or a batch of 2 to 5 distinct keys with a
/// quarter of deletes (25 %), over `keys` keys named by `name`.
pub fn random_op(rng: &mut Rng, tag: u64, keys: u64, name: &dyn Fn(u64) -> String) -> Op {
    let len = 40 + rng.below(400) as usize;
    match rng.below(100) {
        0..60 => {
            let k = name(rng.below(keys)).into_bytes();
            let v = value(tag, &k, len);
            vec![(k, Some(v))]
        }
        60..75 => vec![(name(rng.below(keys)).into_bytes(), None)],
        _ => {
            let mut ks: Vec<u64> = (0..2 + rng.below(4)).map(|_| rng.below(keys)).collect();
            ks.sort_unstable();
            ks.dedup();
            ks.into_iter()
                .map(|k| {
                    let k = name(k).into_bytes();
                    let v = (!rng.percent(25)).then(|| value(tag, &k, len));
                    (k, v)
                })
                .collect()
        }
    }
}

/// Key `k` of writer thread `t`: each thread writes keys of its own.
pub fn thread_key(t: usize, k: u64) -> String {
    format!("t{t}-{k:03}")
}

/// The entries of `state` under writer thread `t`'s keys.
pub fn thread_entries(state: &State, t: usize) -> State {
    let prefix = format!("t{t}-").into_bytes();
    state
        .iter()
        .filter(|(k, _)| k.starts_with(&prefix))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

pub fn key_name(k: u64) -> String {
    format!("key{k:04}")
}

/// Fills the database with `n` synced puts; returns the model.
pub fn synced_fill(db: &DB, tag: u64, n: u64) -> State {
    let mut model = State::new();
    assert!(
        try_synced_fill(db, tag, n, &mut model),
        "no faults: writes work"
    );
    model
}

/// Synced puts into `model` until one fails; whether all succeeded.
pub fn try_synced_fill(db: &DB, tag: u64, n: u64, model: &mut State) -> bool {
    for i in 0..n {
        let k = key_name(i % 300).into_bytes();
        let v = value(tag + i, &k, 200);
        if db.put_opt(&k, &v, &write_options(true)).is_err() {
            return false;
        }
        model.insert(k, v);
    }
    true
}
