//! Loom models of the publication protocol: writers hand their batches to
//! their write lanes (small ones) or to the lock-free list (large ones) while
//! readers take the length and cursors, and the freeze closes both.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release -p vecmem --test loom`
#![cfg(loom)]

use std::sync::Arc;

use loom::thread;
use vecmem::{BytewiseComparator, VecMem};

fn scan(mem: &VecMem) -> Vec<Vec<u8>> {
    let mut cursor = mem.cursor();
    cursor.seek_to_first();
    let mut out = Vec::new();
    while cursor.valid() {
        out.push(cursor.key().to_vec());
        cursor.next();
    }
    out
}

fn spawn_writer(mem: &Arc<VecMem>, keys: [&'static [u8]; 2]) -> thread::JoinHandle<()> {
    let mem = Arc::clone(mem);
    thread::spawn(move || {
        let mut writer = mem.writer();
        for key in keys {
            writer.insert(key);
        }
        writer.finish();
    })
}

/// Two writers finish their buffers while a reader takes the length, then a
/// cursor: the length is a whole number of batches, the cursor holds at
/// least that many entries, also whole batches, and everything is there at
/// the end.
#[test]
fn two_writers_finish_while_a_reader_takes_the_length() {
    loom::model(|| {
        let mem = Arc::new(VecMem::new(BytewiseComparator));
        let a = spawn_writer(&mem, [b"a1", b"a2"]);
        let b = spawn_writer(&mem, [b"b1", b"b2"]);

        let len = mem.len();
        assert!(matches!(len, 0 | 2 | 4), "torn batch: len {len}");
        let snapshot = scan(&mem);
        assert!(
            snapshot.len() >= len,
            "cursor saw {} < len {len}",
            snapshot.len()
        );
        let has = |k: &[u8]| snapshot.iter().any(|e| e == k);
        assert_eq!(has(b"a1"), has(b"a2"), "batch a published in part");
        assert_eq!(has(b"b1"), has(b"b2"), "batch b published in part");

        a.join().unwrap();
        b.join().unwrap();
        assert_eq!(mem.len(), 4);
        assert_eq!(scan(&mem), [b"a1", b"a2", b"b1", b"b2"]);
    });
}

/// Two first readers of a frozen memtable race: one sorts, the other shares
/// the result.
#[test]
fn concurrent_first_readers_of_a_frozen_memtable_sort_once() {
    loom::model(|| {
        let mem = Arc::new(VecMem::new(BytewiseComparator));
        for key in [b"c", b"a", b"b"] {
            mem.insert(key);
        }
        mem.mark_read_only();
        let other = {
            let mem = Arc::clone(&mem);
            thread::spawn(move || scan(&mem))
        };
        let mine = scan(&mem);
        let theirs = other.join().unwrap();
        assert_eq!(mine, [b"a", b"b", b"c"]);
        assert_eq!(theirs, mine);
        assert_eq!(mem.sort_count(), 1);
    });
}

/// A writer publishing while the memtable is frozen, with the engine's rule
/// (finish before freezing) kept by a join: whatever the interleaving, the
/// frozen reader sees the batch.
#[test]
fn batch_finished_before_freeze_is_in_the_sorted_vector() {
    loom::model(|| {
        let mem = Arc::new(VecMem::new(BytewiseComparator));
        let writer = spawn_writer(&mem, [b"y", b"x"]);
        let reader = {
            let mem = Arc::clone(&mem);
            thread::spawn(move || {
                let n = mem.len();
                assert!(matches!(n, 0 | 2));
                assert!(scan(&mem).len() >= n);
            })
        };
        writer.join().unwrap();
        mem.mark_read_only();
        assert_eq!(scan(&mem), [b"x", b"y"]);
        reader.join().unwrap();
    });
}

/// A writer publishes a listed batch while another thread freezes the
/// memtable and reads it, against the engine's rule: whatever the
/// interleaving, either the publish panicked and the batch is nowhere, or
/// it returned and the frozen reader sees it whole.
#[test]
fn a_batch_racing_the_freeze_is_in_whole_or_its_publish_panics() {
    loom::model(|| {
        let mem = Arc::new(VecMem::new(BytewiseComparator));
        let writer = {
            let mem = Arc::clone(&mem);
            thread::spawn(move || {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let mut writer = mem.writer();
                    writer.insert(b"y");
                    writer.insert(b"x");
                    writer.finish();
                }))
                .is_ok()
            })
        };
        mem.mark_read_only();
        let seen = scan(&mem);
        let published = writer.join().unwrap();
        if published {
            assert_eq!(seen, [b"x", b"y"]);
        } else {
            assert!(seen.is_empty(), "a failed publish left {seen:?}");
        }
    });
}

fn spawn_single(mem: &Arc<VecMem>, lane: usize, key: &'static [u8]) -> thread::JoinHandle<()> {
    let mem = Arc::clone(mem);
    thread::spawn(move || {
        vecmem::mock_lane(lane);
        mem.insert(key);
    })
}

/// Two writers publish single entries through their lanes (`lanes` picks
/// each writer's lane) while a reader takes the length and a cursor; then
/// the memtable is frozen and read. The cursor holds at least what `len`
/// counted, no entry twice; at the end every entry is there once, `len` is
/// exact, and a write after the freeze panics.
fn single_entry_writers_and_a_reader(lanes: [usize; 2]) {
    loom::model(move || {
        let mem = Arc::new(VecMem::new(BytewiseComparator));
        let a = spawn_single(&mem, lanes[0], b"a");
        let b = spawn_single(&mem, lanes[1], b"b");

        let len = mem.len();
        let snapshot = scan(&mem);
        assert!(
            snapshot.len() >= len,
            "cursor saw {} < len {len}",
            snapshot.len()
        );
        assert!(
            snapshot.windows(2).all(|w| w[0] < w[1]),
            "an entry twice: {snapshot:?}"
        );
        assert!(mem.len() >= len, "len went back");

        a.join().unwrap();
        b.join().unwrap();
        assert_eq!(mem.len(), 2);
        mem.mark_read_only();
        assert_eq!(scan(&mem), [b"a", b"b"]);
        assert_eq!(mem.len(), 2);
        let late = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| mem.insert(b"c")));
        assert!(late.is_err(), "a write after the freeze went in");
        assert_eq!(scan(&mem), [b"a", b"b"]);
    });
}

#[test]
fn single_entry_writers_on_two_lanes_while_a_reader_reads() {
    single_entry_writers_and_a_reader([0, 1]);
}

/// Both writers start on one lane: the one whose `try_lock` fails moves.
#[test]
fn single_entry_writers_sharing_a_lane_while_a_reader_reads() {
    single_entry_writers_and_a_reader([0, 0]);
}

/// A single entry is written while another thread freezes the memtable,
/// against the engine's rule: either the insert panicked and the entry is
/// nowhere, or it returned, and then it was complete when the freeze
/// returned: counted by the `len` taken right after, and in the sorted
/// vector.
#[test]
fn a_single_entry_racing_the_freeze_is_in_when_the_freeze_returns_or_panics() {
    loom::model(|| {
        let mem = Arc::new(VecMem::new(BytewiseComparator));
        let writer = {
            let mem = Arc::clone(&mem);
            thread::spawn(move || {
                vecmem::mock_lane(1);
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| mem.insert(b"x"))).is_ok()
            })
        };
        mem.mark_read_only();
        let len = mem.len();
        let seen = scan(&mem);
        let published = writer.join().unwrap();
        if published {
            assert_eq!(len, 1, "a write completed after the freeze returned");
            assert_eq!(seen, [b"x"]);
        } else {
            assert_eq!(len, 0);
            assert!(seen.is_empty(), "a failed insert left {seen:?}");
        }
        assert_eq!(mem.len(), len);
    });
}
