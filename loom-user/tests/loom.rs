//! Loom models of user code built on the workspace's crates, through their
//! public APIs only (see the crate documentation for what they cover).
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release -p loom-user --test loom`
#![cfg(loom)]

use std::sync::Arc;

use arena::{ArenaOptions, ConcurrentArena};
use inline_skiplist::{BytewiseComparator, SkipList};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicU64, Ordering};
use loom::thread;
use vecmem::VecMem;
use write_group::{Commit, GroupMembers, Lead, Options, WriteGroup};

/// Write-group options for models: never spin or yield before sleeping.
/// Under loom every spin is a yield, and each yield multiplies the
/// schedules to explore.
fn model_options() -> Options {
    Options::new()
        .with_spin_count(0)
        .with_max_yield_usec(0)
        .with_barge_spins(0)
}

/// A record of the user's journal: who wrote it, its place among that
/// writer's records, and the sequence number the journal gave it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Record {
    writer: u8,
    nth: u8,
    sequence: u64,
}

/// The user's code: a journal whose leader numbers and appends a whole group
/// of records at once.
///
/// `records` has no lock: the journal relies on the write group's promise
/// that groups are led one at a time, each lead after the previous one. It
/// is a loom cell, so loom reports a race if that promise broke.
#[derive(Default)]
struct Journal {
    records: UnsafeCell<Vec<Record>>,
    /// The last sequence number made visible by `publish`.
    visible: AtomicU64,
}

// SAFETY: `records` is only touched by `lead`, which the write group runs
// for one group at a time and in order, and by the model once every writer
// has returned; loom checks both. `visible` is an atomic.
unsafe impl Sync for Journal {}

impl Commit<Record> for Journal {
    type Token = u64;
    type Error = ();

    fn lead(&self, group: &mut GroupMembers<'_, Record>) -> Result<Lead<u64>, ()> {
        self.records.with_mut(|records| {
            // SAFETY: see `impl Sync for Journal`.
            let records = unsafe { &mut *records };
            let mut last = records.last().map_or(0, |r| r.sequence);
            for record in group.iter_mut() {
                last += 1;
                record.sequence = last;
                records.push(*record);
            }
            Ok(Lead::serial(last))
        })
    }

    fn publish(&self, last: u64) {
        // Relaxed: the write group orders each publish after the previous
        // one and before its members return; only the value matters.
        self.visible.store(last, Ordering::Relaxed);
    }
}

/// Two threads write two records each through one write group: every
/// record gets a distinct, dense sequence number, each writer's records
/// keep its order, and a write has been published when it returns.
#[test]
fn write_group_numbers_each_writers_records_in_order() {
    loom::model(|| {
        let group = Arc::new(WriteGroup::new(model_options()));
        let journal = Arc::new(Journal::default());
        let write_two = |writer: u8, group: &WriteGroup<Record, Journal>, journal: &Journal| {
            let mut last = 0;
            for nth in 0..2 {
                let record = Record {
                    writer,
                    nth,
                    sequence: 0,
                };
                let written = group.write(journal, record).unwrap();
                assert!(written.sequence > last, "a writer's records out of order");
                last = written.sequence;
                // Relaxed: `publish` happened before `write` returned.
                assert!(journal.visible.load(Ordering::Relaxed) >= last);
            }
        };
        let other = {
            let (group, journal) = (Arc::clone(&group), Arc::clone(&journal));
            thread::spawn(move || write_two(1, &group, &journal))
        };
        write_two(0, &group, &journal);
        other.join().unwrap();

        journal.records.with(|records| {
            // SAFETY: every writer has returned; no lead runs any more.
            let records = unsafe { &*records };
            let sequences: Vec<u64> = records.iter().map(|r| r.sequence).collect();
            assert_eq!(sequences, [1, 2, 3, 4]);
            for writer in 0..2 {
                let mine: Vec<u8> = records
                    .iter()
                    .filter(|r| r.writer == writer)
                    .map(|r| r.nth)
                    .collect();
                assert_eq!(mine, [0, 1]);
            }
        });
        assert_eq!(journal.visible.load(Ordering::Relaxed), 4);
    });
}

/// What a reader may see of a list being filled: sorted keys, all of them
/// among `all`, and every key of `before` (inserted before it started).
fn check_view(seen: &[Vec<u8>], before: &[&[u8]], all: &[&[u8]]) {
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "unsorted: {seen:?}");
    assert!(seen.iter().all(|k| all.contains(&k.as_slice())), "{seen:?}");
    assert!(
        before.iter().all(|k| seen.iter().any(|s| s == k)),
        "{seen:?}"
    );
}

/// Two threads insert into a skiplist that lives in a small arena of the
/// user's choosing, one of them encoding its entry in place, while the main
/// thread reads: the reader sees a sorted view, and the list ends whole.
#[test]
fn skiplist_in_an_arena_two_inserters_and_a_reader() {
    loom::model(|| {
        let arena = ArenaOptions::new()
            .with_block_size(4096)
            .build_concurrent()
            .unwrap();
        let list = Arc::new(SkipList::with_arena(BytewiseComparator, arena));
        assert!(list.insert(b"m"));
        let plain = {
            let list = Arc::clone(&list);
            thread::spawn(move || assert!(list.insert(b"c")))
        };
        let in_place = {
            let list = Arc::clone(&list);
            thread::spawn(move || {
                // A key and a value encoded together, straight into the node.
                assert!(list.insert_with(2, None, |buf| buf.copy_from_slice(b"x1")));
            })
        };

        let all: [&[u8]; 3] = [b"c", b"m", b"x1"];
        let seen: Vec<Vec<u8>> = list.cursor().map(<[u8]>::to_vec).collect();
        check_view(&seen, &[b"m"], &all);

        plain.join().unwrap();
        in_place.join().unwrap();
        let keys: Vec<&[u8]> = list.cursor().collect();
        assert_eq!(keys, all);
        assert_eq!(list.len(), 3);
        assert!(list.memory_usage() <= list.arena().memory_allocated_bytes());
    });
}

/// A put into the user's memtable: its key and the sequence number its
/// group's leader gives it.
#[derive(Clone, Copy, Debug, Default)]
struct Put {
    key: u8,
    sequence: u8,
}

/// The user's code: an engine in miniature. The write group's leader numbers
/// a group, each writer inserts its own entry (key, sequence) into a shared
/// skiplist on its own thread, and `publish` makes the group's last sequence
/// number visible to readers.
struct Engine {
    memtable: SkipList,
    /// The last sequence number handed out; touched by `lead` alone, without
    /// a lock (a loom cell, so that loom checks it).
    last_sequence: UnsafeCell<u8>,
    /// The last sequence number readers may see.
    visible: AtomicU64,
}

// SAFETY: `last_sequence` is only touched by `lead`, which the write group
// runs for one group at a time and in order; loom checks it. The skiplist is
// Sync and `visible` is an atomic.
unsafe impl Sync for Engine {}

impl Commit<Put> for Engine {
    type Token = u8;
    type Error = ();

    fn lead(&self, group: &mut GroupMembers<'_, Put>) -> Result<Lead<u8>, ()> {
        self.last_sequence.with_mut(|last| {
            // SAFETY: see `impl Sync for Engine`.
            let last = unsafe { &mut *last };
            for put in group.iter_mut() {
                *last += 1;
                put.sequence = *last;
            }
            // Pipelined: writers insert on their own threads, and a lone
            // writer's insert may overlap the next group's.
            Ok(Lead::pipelined(*last))
        })
    }

    fn apply(&self, put: &mut Put, _last: &u8) {
        let entry = [put.key, put.sequence];
        assert!(
            self.memtable
                .insert_with(2, None, |buf| buf.copy_from_slice(&entry))
        );
    }

    fn publish(&self, last: u8) {
        // Release: a reader that loads `last` with Acquire sees every insert
        // of this group and of the groups before it (the write group runs
        // `publish` after them).
        self.visible.store(u64::from(last), Ordering::Release);
    }
}

/// Two writers put through a write group into a skiplist memtable while the
/// main thread reads: a reader that sees sequence number `v` published finds
/// every entry up to `v` in the memtable, and a writer finds its own entry
/// once its write returns.
#[test]
fn write_group_into_a_skiplist_publishes_whole_groups() {
    loom::model(|| {
        let group = Arc::new(WriteGroup::new(model_options()));
        let engine = Arc::new(Engine {
            memtable: SkipList::new(BytewiseComparator),
            last_sequence: UnsafeCell::new(0),
            visible: AtomicU64::new(0),
        });
        let writers: Vec<_> = [b'a', b'b']
            .into_iter()
            .map(|key| {
                let (group, engine) = (Arc::clone(&group), Arc::clone(&engine));
                thread::spawn(move || {
                    let put = group.write(&*engine, Put { key, sequence: 0 }).unwrap();
                    assert!(engine.memtable.contains(&[key, put.sequence]));
                    // Relaxed: `publish` happened before `write` returned.
                    assert!(engine.visible.load(Ordering::Relaxed) >= u64::from(put.sequence));
                })
            })
            .collect();

        // Acquire: pairs with the Release in `publish`.
        let visible = engine.visible.load(Ordering::Acquire);
        let published = engine
            .memtable
            .cursor()
            .filter(|entry| u64::from(entry[1]) <= visible)
            .count();
        assert_eq!(published as u64, visible, "a published write is missing");

        for writer in writers {
            writer.join().unwrap();
        }
        assert_eq!(engine.memtable.len(), 2);
        assert_eq!(engine.visible.load(Ordering::Relaxed), 2);
    });
}

/// Every key of a vecmem, in cursor order.
fn scan(mem: &VecMem) -> Vec<Vec<u8>> {
    let mut cursor = mem.cursor();
    cursor.seek_to_first();
    let mut keys = Vec::new();
    while cursor.valid() {
        keys.push(cursor.key().to_vec());
        cursor.next();
    }
    keys
}

/// Two threads fill a vecmem, one key at a time and as a batch, while the
/// main thread takes a cursor; once both are done the memtable is frozen and
/// its sorted iteration holds every key.
#[test]
fn vecmem_inserts_then_a_sorted_iteration() {
    loom::model(|| {
        let mem = Arc::new(VecMem::new(BytewiseComparator));
        let single = {
            let mem = Arc::clone(&mem);
            thread::spawn(move || mem.insert(b"b"))
        };
        let batch = {
            let mem = Arc::clone(&mem);
            thread::spawn(move || {
                let mut writer = mem.writer();
                writer.insert(b"c");
                writer.insert(b"a");
                writer.finish();
            })
        };

        let all: [&[u8]; 3] = [b"a", b"b", b"c"];
        let seen = scan(&mem);
        check_view(&seen, &[], &all);
        // A batch is published whole or not at all.
        let has = |k: &[u8]| seen.iter().any(|s| s == k);
        assert_eq!(has(b"a"), has(b"c"), "half a batch: {seen:?}");

        single.join().unwrap();
        batch.join().unwrap();
        mem.mark_read_only();
        assert_eq!(scan(&mem), all);
        assert_eq!(mem.len(), 3);
    });
}

/// An allocation's address range, as the model's threads report it.
type Span = std::ops::Range<usize>;

/// Interns `strings` in the arena (the user's code): each copy is checked
/// after all were made, and their address ranges are returned.
fn intern(arena: &ConcurrentArena, strings: &[&str]) -> Vec<Span> {
    let copies: Vec<&str> = strings.iter().map(|s| &*arena.alloc_str(s)).collect();
    assert_eq!(copies, strings, "an allocation was overwritten");
    copies
        .iter()
        .map(|c| c.as_ptr() as usize..c.as_ptr() as usize + c.len())
        .collect()
}

/// Two threads allocate from one concurrent arena with small blocks: no two
/// allocations overlap, and each keeps its contents.
#[test]
fn arena_allocations_from_two_threads_do_not_overlap() {
    loom::model(|| {
        let arena = Arc::new(
            ArenaOptions::new()
                .with_block_size(4096)
                .with_eager_shards(true)
                .build_concurrent()
                .unwrap(),
        );
        let words = ["alpha", "beta", "gamma"];
        let numbers = ["one", "two", "three"];
        let other = {
            let arena = Arc::clone(&arena);
            thread::spawn(move || intern(&arena, &numbers))
        };
        let mut spans = intern(&arena, &words);
        spans.extend(other.join().unwrap());

        spans.sort_by_key(|s| s.start);
        for pair in spans.windows(2) {
            assert!(pair[0].end <= pair[1].start, "overlap: {spans:?}");
        }
        let interned: usize = words.iter().chain(&numbers).map(|s| s.len()).sum();
        assert!(arena.approximate_memory_usage() >= interned);
    });
}
