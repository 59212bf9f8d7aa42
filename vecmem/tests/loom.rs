//! Loom models of the publication protocol: writers hand their buffers to the
//! shared vector under the lock while readers take the length and cursors.
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
