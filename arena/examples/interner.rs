//! A string interner shared by threads: each distinct string is copied once
//! into a `ConcurrentArena` and named by a small id; every thread gets the
//! same id for the same string.
//!
//! The arena holds the bytes, so the table stores `&str`s borrowed from it
//! and nothing is freed one by one: the strings go when the arena does.
//!
//! `cargo run -p arena --example interner`

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Mutex;

use arena::ConcurrentArena;

/// Tables, each behind its own lock, so that threads interning different
/// strings rarely wait for each other (and allocate from the arena at the
/// same time).
const SHARDS: usize = 16;

/// Strings to ids and back, the strings living in `arena`.
struct Interner<'a> {
    arena: &'a ConcurrentArena,
    hasher: std::collections::hash_map::RandomState,
    shards: Vec<Mutex<Table<'a>>>,
}

#[derive(Default)]
struct Table<'a> {
    ids: HashMap<&'a str, u32>,
    strings: Vec<&'a str>,
}

impl<'a> Interner<'a> {
    fn new(arena: &'a ConcurrentArena) -> Self {
        Self {
            arena,
            hasher: Default::default(),
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }

    /// The id of `s`, copying it into the arena the first time it is seen.
    /// An id is the string's place in its shard, times `SHARDS`, plus the
    /// shard.
    fn intern(&self, s: &str) -> u32 {
        let shard = self.hasher.hash_one(s) as usize % SHARDS;
        let mut table = self.shards[shard].lock().unwrap();
        if let Some(&id) = table.ids.get(s) {
            return id;
        }
        // Copied under the shard's lock so that two threads never both copy
        // one string; the arena is shared by all shards and needs no lock
        // of ours.
        let stored: &'a str = self.arena.alloc_str(s);
        let id = u32::try_from(table.strings.len() * SHARDS + shard).expect("ids fit in u32");
        table.ids.insert(stored, id);
        table.strings.push(stored);
        id
    }

    fn resolve(&self, id: u32) -> &'a str {
        let (place, shard) = (id as usize / SHARDS, id as usize % SHARDS);
        self.shards[shard].lock().unwrap().strings[place]
    }

    fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|t| t.lock().unwrap().strings.len())
            .sum()
    }
}

fn main() {
    let arena = ConcurrentArena::new();
    let interner = Interner::new(&arena);
    let threads = 4;
    let words_per_thread = 20_000;

    // Each thread interns words from an overlapping range, so most strings
    // are met by several threads.
    let ids: Vec<Vec<(String, u32)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let interner = &interner;
                s.spawn(move || {
                    (0..words_per_thread)
                        .map(|i| {
                            let word = format!("word-{}", (i * 7 + t * 1000) % 30_000);
                            let id = interner.intern(&word);
                            (word, id)
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    // Every thread got the same id for the same word, and ids resolve back.
    let mut seen = HashMap::new();
    for (word, id) in ids.iter().flatten() {
        assert_eq!(*seen.entry(word.as_str()).or_insert(*id), *id);
        assert_eq!(interner.resolve(*id), word);
    }
    let distinct = interner.len();
    assert_eq!(distinct, seen.len());

    println!(
        "{} lookups from {threads} threads, {distinct} distinct strings",
        threads * words_per_thread
    );
    println!(
        "arena: {} bytes reserved, {} in use",
        arena.memory_allocated_bytes(),
        arena.approximate_memory_usage()
    );
}
