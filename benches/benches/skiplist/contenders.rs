//! The skiplist benchmark's workload and contenders, shared by the criterion
//! bench (`benches/skiplist.rs`) and the cache-miss driver
//! (`src/bin/skiplist_misses.rs`), so that both time and count the same
//! code.

use arena::{ArenaOptions, HugePages};
use concurrent_map::ConcurrentMap;
use crossbeam_skiplist::{SkipMap, SkipSet};
use inline_skiplist::{BytewiseComparator, SkipList, SkipListOptions};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use scc::TreeIndex;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Mutex;

pub const KEY: usize = 16;
pub const VALUE: usize = 100;
pub const ENTRY: usize = KEY + VALUE;

pub type Key = [u8; KEY];
pub type Value = [u8; VALUE];

pub fn entries() -> usize {
    std::env::var("SKIPLIST_BENCH_N")
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(1_000_000)
}

/// The value stored with `key`: derived from it, so every contender stores
/// the same bytes and lookups could verify them. Byte `i` is
/// `key[i % 16] ^ i`, computed 16 bytes at a time: a loop over single bytes
/// took about a fifth of our insert's time on a cache-resident list (perf,
/// 2026-12-04), work that every contender repeats and that only blurred the
/// ratios.
#[inline]
pub fn value_of(key: &Key) -> Value {
    /// Byte `t` of row `j` is `16 j + t`, the offset XORed into the value.
    const OFFSETS: [[u8; KEY]; VALUE.div_ceil(KEY)] = {
        let mut rows = [[0u8; KEY]; VALUE.div_ceil(KEY)];
        let mut i = 0;
        while i < KEY * rows.len() {
            rows[i / KEY][i % KEY] = i as u8;
            i += 1;
        }
        rows
    };
    let key = u128::from_ne_bytes(*key);
    let mut v = [0u8; VALUE];
    for (chunk, offsets) in v.chunks_mut(KEY).zip(OFFSETS) {
        let bytes = (key ^ u128::from_ne_bytes(offsets)).to_ne_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
    v
}

/// `value_of` as first written, one byte at a time: the reference the
/// vectorised one is checked against when the bench starts.
pub fn value_of_bytewise(key: &Key) -> Value {
    let mut v = [0u8; VALUE];
    for (i, b) in v.iter_mut().enumerate() {
        *b = key[i % KEY] ^ i as u8;
    }
    v
}

pub struct Data {
    pub random: Vec<Key>,
    pub sequential: Vec<Key>,
    /// `random` in another random order, for lookups.
    pub lookups: Vec<Key>,
}

impl Data {
    pub fn new(n: usize) -> Self {
        let mut rng = SmallRng::seed_from_u64(0x5eed);
        let random: Vec<Key> = (0..n).map(|_| rng.random()).collect();
        let sequential = (0..n as u128).map(u128::to_be_bytes).collect();
        let mut lookups = random.clone();
        lookups.shuffle(&mut rng);
        Self {
            random,
            sequential,
            lookups,
        }
    }
}

/// The operations a thread runs on a contender.
pub trait Worker {
    fn insert(&self, key: &Key);
    fn get(&self, key: &Key) -> bool;
}

impl<W: Worker + ?Sized> Worker for &W {
    #[inline]
    fn insert(&self, key: &Key) {
        (**self).insert(key);
    }

    #[inline]
    fn get(&self, key: &Key) -> bool {
        (**self).get(key)
    }
}

/// What every contender offers the benchmark.
pub trait Contender: Sync {
    const NAME: &'static str;
    /// What one thread inserts and looks up through: the contender itself,
    /// or, for a map that is not `Sync`, a per-thread clone.
    type Worker<'a>: Worker
    where
        Self: 'a;
    fn new() -> Self;
    fn worker(&self) -> Self::Worker<'_>;
    /// Visits every entry in order; returns a checksum.
    fn scan(&self) -> usize;
    /// Bytes the contender's own arena reports, if it has one.
    fn arena_bytes(&self) -> Option<usize> {
        None
    }
}

/// Ours with `SkipList::new` (arena blocks from the global allocator, 4 KiB
/// pages) when `THP` is false; with an arena of 2 MiB blocks backed by
/// transparent huge pages (`HugePages::Transparent`, as the engine's
/// memtables use) when it is true.
/// With `B2`, towers of branching 2 and 20 levels instead of RocksDB's
/// branching 4 and 12 levels. With `P`, key prefixes beside the links
/// (`SkipListOptions::with_key_prefixes`).
pub struct Ours<const THP: bool, const B2: bool = false, const P: bool = false>(pub SkipList);

impl<const THP: bool, const B2: bool, const P: bool> Worker for Ours<THP, B2, P> {
    #[inline]
    fn insert(&self, key: &Key) {
        // Zero-copy, as the engine does: encode the entry in its node.
        self.0.insert_with(ENTRY, None, |entry| {
            entry[..KEY].copy_from_slice(key);
            entry[KEY..].copy_from_slice(&value_of(key));
        });
    }

    #[inline]
    fn get(&self, key: &Key) -> bool {
        let mut cursor = self.0.cursor();
        cursor.seek(key);
        cursor.valid() && cursor.key().starts_with(key)
    }
}

impl<const THP: bool, const B2: bool, const P: bool> Contender for Ours<THP, B2, P> {
    const NAME: &'static str = match (THP, B2, P) {
        (false, false, false) => "skiplist",
        (true, false, false) => "skiplist_thp",
        (false, true, false) => "skiplist_b2",
        (true, true, false) => "skiplist_thp_b2",
        (false, false, true) => "skiplist_p",
        (true, false, true) => "skiplist_thp_p",
        (false, true, true) => "skiplist_b2p",
        (true, true, true) => "skiplist_thp_b2p",
    };
    type Worker<'a> = &'a Self;

    fn new() -> Self {
        let arena = if THP {
            ArenaOptions::new()
                .with_block_size(2 << 20)
                .with_huge_pages(HugePages::Transparent)
        } else {
            ArenaOptions::new()
        }
        .build_concurrent()
        .expect("valid arena options");
        let options = if B2 {
            SkipListOptions::new().with_branching(2).with_max_height(20)
        } else {
            SkipListOptions::new()
        }
        .with_key_prefixes(P);
        Self(SkipList::with_options(BytewiseComparator, arena, options))
    }

    fn worker(&self) -> &Self {
        self
    }

    fn scan(&self) -> usize {
        self.0.cursor().map(|e| usize::from(e[ENTRY - 1])).sum()
    }

    fn arena_bytes(&self) -> Option<usize> {
        Some(self.0.memory_usage())
    }
}

/// `crossbeam_skiplist::SkipMap<[u8; 16], [u8; 100]>`.
pub struct Map(SkipMap<Key, Value>);

impl Worker for Map {
    #[inline]
    fn insert(&self, key: &Key) {
        self.0.insert(*key, value_of(key));
    }

    #[inline]
    fn get(&self, key: &Key) -> bool {
        self.0.get(key).is_some()
    }
}

impl Contender for Map {
    const NAME: &'static str = "skipmap";
    type Worker<'a> = &'a Self;

    fn new() -> Self {
        Self(SkipMap::new())
    }

    fn worker(&self) -> &Self {
        self
    }

    fn scan(&self) -> usize {
        self.0
            .iter()
            .map(|e| usize::from(e.value()[VALUE - 1]))
            .sum()
    }
}

/// `SkipSet<[u8; 116]>`: the entry as one key, like ours.
pub struct Set(SkipSet<[u8; ENTRY]>);

#[inline]
fn entry_of(key: &Key, value: &Value) -> [u8; ENTRY] {
    let mut e = [0u8; ENTRY];
    e[..KEY].copy_from_slice(key);
    e[KEY..].copy_from_slice(value);
    e
}

impl Worker for Set {
    #[inline]
    fn insert(&self, key: &Key) {
        self.0.insert(entry_of(key, &value_of(key)));
    }

    #[inline]
    fn get(&self, key: &Key) -> bool {
        let probe = entry_of(key, &[0; VALUE]);
        self.0
            .lower_bound(Bound::Included(&probe))
            .is_some_and(|e| e.value().starts_with(key))
    }
}

impl Contender for Set {
    const NAME: &'static str = "skipset";
    type Worker<'a> = &'a Self;

    fn new() -> Self {
        Self(SkipSet::new())
    }

    fn worker(&self) -> &Self {
        self
    }

    fn scan(&self) -> usize {
        self.0
            .iter()
            .map(|e| usize::from(e.value()[ENTRY - 1]))
            .sum()
    }
}

/// `std::sync::Mutex<BTreeMap<[u8; 16], [u8; 100]>>`.
pub struct Locked(Mutex<BTreeMap<Key, Value>>);

impl Worker for Locked {
    #[inline]
    fn insert(&self, key: &Key) {
        let value = value_of(key);
        self.0.lock().unwrap().insert(*key, value);
    }

    #[inline]
    fn get(&self, key: &Key) -> bool {
        self.0.lock().unwrap().contains_key(key)
    }
}

impl Contender for Locked {
    const NAME: &'static str = "mutex_btreemap";
    type Worker<'a> = &'a Self;

    fn new() -> Self {
        Self(Mutex::new(BTreeMap::new()))
    }

    fn worker(&self) -> &Self {
        self
    }

    fn scan(&self) -> usize {
        self.0
            .lock()
            .unwrap()
            .values()
            .map(|v| usize::from(v[VALUE - 1]))
            .sum()
    }
}

/// `scc::TreeIndex<[u8; 16], [u8; 100]>`: a concurrent B+tree whose readers
/// take no locks (epoch-based reclamation through `sdd`).
pub struct Tree(TreeIndex<Key, Value>);

impl Worker for Tree {
    #[inline]
    fn insert(&self, key: &Key) {
        let _ = self.0.insert_sync(*key, value_of(key));
    }

    #[inline]
    fn get(&self, key: &Key) -> bool {
        self.0.contains(key)
    }
}

impl Contender for Tree {
    const NAME: &'static str = "scc_treeindex";
    type Worker<'a> = &'a Self;

    fn new() -> Self {
        Self(TreeIndex::new())
    }

    fn worker(&self) -> &Self {
        self
    }

    fn scan(&self) -> usize {
        let guard = scc::Guard::new();
        self.0
            .iter(&guard)
            .map(|(_, v)| usize::from(v[VALUE - 1]))
            .sum()
    }
}

/// `concurrent_map::ConcurrentMap<[u8; 16], [u8; 100]>` (default fanout 64):
/// a lock-free B+tree. It is `Send` but not `Sync`: each thread works on its
/// own clone (which sets up that thread's reclamation state), taken once per
/// thread and run, as its documentation asks.
pub struct CMap(Mutex<ConcurrentMap<Key, Value>>);

impl Worker for ConcurrentMap<Key, Value> {
    #[inline]
    fn insert(&self, key: &Key) {
        ConcurrentMap::insert(self, *key, value_of(key));
    }

    #[inline]
    fn get(&self, key: &Key) -> bool {
        self.contains_key(key)
    }
}

impl Contender for CMap {
    const NAME: &'static str = "concurrent_map";
    type Worker<'a> = ConcurrentMap<Key, Value>;

    fn new() -> Self {
        Self(Mutex::new(ConcurrentMap::new()))
    }

    fn worker(&self) -> ConcurrentMap<Key, Value> {
        self.0.lock().unwrap().clone()
    }

    fn scan(&self) -> usize {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(_, v)| usize::from(v[VALUE - 1]))
            .sum()
    }
}

/// A contender holding `keys`, inserted in order from this thread.
pub fn build<C: Contender>(keys: &[Key]) -> C {
    let c = C::new();
    let w = c.worker();
    for k in keys {
        w.insert(k);
    }
    drop(w);
    c
}
