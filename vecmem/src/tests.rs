//! Unit tests; they exercise every `unsafe` path, so they run under miri.

use std::sync::Arc;

use super::*;
use crate::batches::MIN_LISTED_BATCH;

/// Every key of a full forward scan.
fn scan<C: Comparator + Sync>(mem: &VecMem<C>) -> Vec<Vec<u8>> {
    let mut cursor = mem.cursor();
    let mut keys = Vec::new();
    cursor.seek_to_first();
    while cursor.valid() {
        keys.push(cursor.key().to_vec());
        cursor.next();
    }
    keys
}

fn key(i: u32) -> [u8; 4] {
    i.to_be_bytes()
}

#[test]
fn empty_memtable_has_invalid_cursors() {
    let mem = VecMem::new(BytewiseComparator);
    assert!(mem.is_empty());
    let mut cursor = mem.cursor();
    assert!(!cursor.valid());
    cursor.seek_to_first();
    assert!(!cursor.valid());
    cursor.seek_to_last();
    assert!(!cursor.valid());
    cursor.seek(b"x");
    assert!(!cursor.valid());
    cursor.seek_for_prev(b"x");
    assert!(!cursor.valid());
}

#[test]
fn scan_is_sorted_whatever_the_insert_order() {
    let mem = VecMem::new(BytewiseComparator);
    let n = if cfg!(miri) { 50 } else { 1000 };
    // A permutation of 0..n (7919 is prime, so coprime with n).
    for i in 0..n {
        mem.insert(&key(i * 7919 % n));
    }
    assert_eq!(mem.len(), n as usize);
    let expected: Vec<Vec<u8>> = (0..n).map(|i| key(i).to_vec()).collect();
    assert_eq!(scan(&mem), expected);
}

#[test]
fn seek_and_seek_for_prev_find_neighbours() {
    let mem = VecMem::new(BytewiseComparator);
    for k in [b"b", b"d", b"f"] {
        mem.insert(k);
    }
    let mut cursor = mem.cursor();
    /// (target, first at or after, last at or before)
    type Case<'a> = (&'a [u8], Option<&'a [u8]>, Option<&'a [u8]>);
    let cases: [Case<'_>; 7] = [
        (b"a", Some(b"b"), None),
        (b"b", Some(b"b"), Some(b"b")),
        (b"c", Some(b"d"), Some(b"b")),
        (b"d", Some(b"d"), Some(b"d")),
        (b"e", Some(b"f"), Some(b"d")),
        (b"f", Some(b"f"), Some(b"f")),
        (b"g", None, Some(b"f")),
    ];
    for (target, at_or_after, at_or_before) in cases {
        cursor.seek(target);
        assert_eq!(
            cursor.valid().then(|| cursor.key()),
            at_or_after,
            "seek {target:?}"
        );
        cursor.seek_for_prev(target);
        assert_eq!(
            cursor.valid().then(|| cursor.key()),
            at_or_before,
            "seek_for_prev {target:?}"
        );
    }
}

#[test]
fn prev_walks_back_and_falls_off_the_front() {
    let mem = VecMem::new(BytewiseComparator);
    for k in [b"c", b"a", b"b"] {
        mem.insert(k);
    }
    let mut cursor = mem.cursor();
    cursor.seek_to_last();
    let mut keys = Vec::new();
    while cursor.valid() {
        keys.push(cursor.key());
        cursor.prev();
    }
    assert_eq!(keys, [b"c", b"b", b"a"]);
}

#[test]
#[should_panic(expected = "cursor is not valid")]
fn key_of_an_invalid_cursor_panics() {
    let mem = VecMem::new(BytewiseComparator);
    mem.insert(b"k");
    let cursor = mem.cursor();
    let _ = cursor.key();
}

#[test]
#[should_panic(expected = "cursor is not valid")]
fn next_past_the_end_panics() {
    let mem = VecMem::new(BytewiseComparator);
    mem.insert(b"k");
    let mut cursor = mem.cursor();
    cursor.seek_to_first();
    cursor.next();
    cursor.next();
}

#[test]
fn empty_and_long_entries_round_trip() {
    let mem = VecMem::new(BytewiseComparator);
    let long = vec![0xab; if cfg!(miri) { 200 } else { 100_000 }];
    mem.insert(b"");
    mem.insert(&long);
    assert_eq!(scan(&mem), [Vec::new(), long]);
}

#[test]
fn duplicates_are_kept_and_adjacent() {
    let mem = VecMem::new(BytewiseComparator);
    for k in [b"b", b"a", b"b", b"c", b"b"] {
        mem.insert(k);
    }
    assert_eq!(mem.len(), 5);
    assert_eq!(scan(&mem), [&b"a"[..], b"b", b"b", b"b", b"c"]);
    let mut cursor = mem.cursor();
    cursor.seek(b"b");
    cursor.prev();
    assert_eq!(cursor.key(), b"a", "seek lands on the first duplicate");
    cursor.seek_for_prev(b"b");
    cursor.next();
    assert_eq!(
        cursor.key(),
        b"c",
        "seek_for_prev lands on the last duplicate"
    );
}

#[test]
fn custom_comparator_orders_the_scan() {
    let reverse = |a: &[u8], b: &[u8]| b.cmp(a);
    let mem = VecMem::new(reverse);
    for k in [b"a", b"c", b"b"] {
        mem.insert(k);
    }
    let mut cursor = mem.cursor();
    cursor.seek_to_first();
    assert_eq!(cursor.key(), b"c");
    cursor.seek(b"bb"); // first key not less than "bb" in reverse order
    assert_eq!(cursor.key(), b"b");
}

#[test]
fn writer_entries_appear_only_when_published() {
    let mem = VecMem::new(BytewiseComparator);
    let mut writer = mem.writer();
    writer.insert(b"b");
    writer.insert(b"a");
    assert_eq!((writer.len(), mem.len()), (2, 0));
    assert!(scan(&mem).is_empty(), "an unfinished batch is invisible");
    assert!(mem.memory_usage() > 0, "the arena already holds the batch");
    writer.finish();
    assert_eq!(scan(&mem), [b"a", b"b"]);
}

#[test]
fn dropping_a_writer_publishes_its_batch() {
    let mem = VecMem::new(BytewiseComparator);
    {
        let mut writer = mem.writer();
        writer.insert(b"x");
    }
    let empty = mem.writer();
    assert!(empty.is_empty());
    drop(empty);
    assert_eq!(scan(&mem), [b"x"]);
}

#[test]
fn cursor_over_mutable_memtable_is_a_snapshot() {
    let mem = VecMem::new(BytewiseComparator);
    mem.insert(b"b");
    let mut before = mem.cursor();
    mem.insert(b"a");
    before.seek_to_first();
    assert_eq!(before.key(), b"b");
    assert_eq!(before.snapshot_len(), 1);
    assert_eq!(scan(&mem), [b"a", b"b"]);
    assert_eq!(
        mem.sort_count(),
        2,
        "each mutable reader sorts a private copy"
    );
}

#[test]
fn read_only_memtable_sorts_once_and_shares() {
    let mem = VecMem::new(BytewiseComparator);
    for i in (0..10).rev() {
        mem.insert(&key(i));
    }
    mem.mark_read_only();
    mem.mark_read_only();
    assert!(mem.is_read_only());
    assert_eq!(mem.sort_count(), 0, "freezing does not sort");
    let first = scan(&mem);
    let second = scan(&mem);
    assert_eq!(first, second);
    assert_eq!(first.len(), 10);
    assert_eq!(mem.sort_count(), 1);
    assert_eq!(
        mem.len(),
        10,
        "len survives the move into the sorted vector"
    );
}

#[test]
#[should_panic(expected = "read-only")]
fn insert_after_freeze_panics() {
    let mem = VecMem::new(BytewiseComparator);
    mem.mark_read_only();
    mem.insert(b"late");
}

#[test]
#[should_panic(expected = "read-only")]
fn writer_finishing_after_freeze_panics() {
    let mem = VecMem::new(BytewiseComparator);
    let mut writer = mem.writer();
    writer.insert(b"late");
    mem.mark_read_only();
    writer.finish();
}

#[test]
fn unwinding_writer_of_frozen_memtable_does_not_abort() {
    let mem = VecMem::new(BytewiseComparator);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut writer = mem.writer();
        writer.insert(b"late");
        mem.mark_read_only();
        panic!("batch failed");
    }));
    assert!(result.is_err());
    assert!(mem.is_empty());
}

#[test]
fn panicking_comparator_loses_no_entry() {
    let fuse = std::sync::atomic::AtomicBool::new(true);
    let cmp = |a: &[u8], b: &[u8]| {
        // Relaxed: one thread sorts; only the flag's own value matters.
        if fuse.swap(false, std::sync::atomic::Ordering::Relaxed) {
            panic!("comparator failed");
        }
        a.cmp(b)
    };
    let mem = VecMem::new(cmp);
    for k in [b"c", b"a", b"b"] {
        mem.insert(k);
    }
    mem.mark_read_only();
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| mem.cursor()));
    assert!(failed.is_err());
    let mut cursor = mem.cursor();
    cursor.seek_to_first();
    let mut keys = Vec::new();
    while cursor.valid() {
        keys.push(cursor.key());
        cursor.next();
    }
    assert_eq!(keys, [b"a", b"b", b"c"]);
}

#[test]
fn arc_cursor_outlives_the_callers_handle() {
    let mem = Arc::new(VecMem::new(BytewiseComparator));
    mem.insert(b"b");
    mem.insert(b"a");
    mem.mark_read_only();
    let mut cursor = mem.cursor_arc();
    let clone = cursor.clone();
    drop(mem);
    cursor.seek_to_last();
    assert_eq!(cursor.key(), b"b");
    assert_eq!(Arc::strong_count(cursor.get_ref()), 2);
    drop(clone);
    cursor.prev();
    assert_eq!(cursor.key(), b"a");
}

#[test]
fn parallel_sort_matches_serial_sort() {
    let n = if cfg!(miri) { 64 } else { 5000 };
    let serial = VecMem::new(BytewiseComparator).with_parallel_sort_threshold(usize::MAX);
    let parallel = VecMem::new(BytewiseComparator).with_parallel_sort_threshold(0);
    for i in 0..n {
        let k = key(i * 7919 % n);
        serial.insert(&k);
        parallel.insert(&k);
    }
    parallel.mark_read_only();
    assert_eq!(scan(&serial), scan(&parallel));
}

#[test]
fn memory_usage_counts_arena_and_vector() {
    let mem = VecMem::new(BytewiseComparator);
    let before = mem.memory_usage();
    for _ in 0..10 {
        mem.insert(&[7; 100]);
    }
    let after = mem.memory_usage();
    assert!(
        after - before >= 10 * 100 + 10 * size_of::<usize>(),
        "{before} -> {after}"
    );
}

#[test]
fn writers_on_threads_publish_whole_batches() {
    let mem = VecMem::new(BytewiseComparator);
    let (threads, per_batch) = if cfg!(miri) { (2, 5) } else { (4, 100) };
    std::thread::scope(|s| {
        for t in 0..threads {
            let mem = &mem;
            s.spawn(move || {
                let mut writer = mem.writer();
                for i in 0..per_batch {
                    writer.insert(&key(t * 1000 + i));
                }
                writer.finish();
            });
        }
        s.spawn(|| {
            let seen = mem.len();
            assert_eq!(seen % per_batch as usize, 0, "a batch is published whole");
        });
    });
    assert_eq!(mem.len(), (threads * per_batch) as usize);
    let expected: Vec<Vec<u8>> = (0..threads)
        .flat_map(|t| (0..per_batch).map(move |i| key(t * 1000 + i).to_vec()))
        .collect();
    assert_eq!(scan(&mem), expected);
}

#[test]
fn debug_output_names_the_state() {
    let mem = VecMem::new(BytewiseComparator);
    mem.insert(b"k");
    let text = format!("{mem:?}");
    assert!(
        text.contains("len: 1") && text.contains("read_only: false"),
        "{text}"
    );
    let cursor = mem.cursor();
    assert!(format!("{cursor:?}").contains("valid: false"));
    let writer = mem.writer();
    assert!(format!("{writer:?}").contains("pending: 0"));
}

#[test]
fn handles_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<VecMem>();
    send_sync::<Cursor<&'static VecMem>>();
    send_sync::<ArcCursor>();
    send_sync::<Writer<'static, BytewiseComparator>>();
}

#[test]
fn insert_with_writes_in_place_and_mixes_with_insert() {
    let mem = VecMem::new(BytewiseComparator);
    let mut writer = mem.writer();
    // Lengths on both sides of a one-byte varint prefix.
    for (i, len) in [0usize, 1, 127, 128, 300].into_iter().enumerate() {
        writer.insert_with(len + 1, |buf| {
            assert!(buf.iter().all(|&b| b == 0), "the bytes start zeroed");
            buf[0] = i as u8;
            buf[1..].fill(0xAB);
        });
    }
    writer.insert(&[9]);
    writer.finish();
    let keys = scan(&mem);
    assert_eq!(keys.len(), 6);
    for (i, len) in [0usize, 1, 127, 128, 300].into_iter().enumerate() {
        assert_eq!(keys[i].len(), len + 1);
        assert_eq!(keys[i][0], i as u8);
        assert!(keys[i][1..].iter().all(|&b| b == 0xAB));
    }
    assert_eq!(keys[5], [9]);
}

#[test]
fn a_panicking_fill_adds_nothing() {
    let mem = VecMem::new(BytewiseComparator);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut writer = mem.writer();
        writer.insert(b"kept");
        writer.insert_with(4, |_| panic!("encoder failed"));
    }));
    assert!(caught.is_err());
    // The writer published what it held when it was dropped by the unwind.
    assert_eq!(scan(&mem), [b"kept".to_vec()]);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        mem.insert_with(4, |_| panic!("encoder failed"));
    }));
    assert!(caught.is_err());
    assert_eq!(mem.len(), 1);
}

#[test]
fn insert_with_on_the_memtable_appends_one_entry() {
    let mem = VecMem::new(BytewiseComparator);
    mem.insert_with(3, |buf| {
        assert_eq!(buf, [0, 0, 0], "the bytes start zeroed");
        buf.copy_from_slice(b"abc");
    });
    mem.insert(b"ab");
    assert_eq!(mem.len(), 2);
    assert_eq!(scan(&mem), [b"ab".to_vec(), b"abc".to_vec()]);
}

#[test]
fn finished_writers_leave_their_buffer_to_the_next_one() {
    let mem = VecMem::new(BytewiseComparator);
    // A small batch is copied into the thread's lane: its buffer (the
    // entries after the first) stays with the thread, emptied.
    let small = MIN_LISTED_BATCH - 1;
    let mut writer = mem.writer();
    for i in 0..small as u32 {
        writer.insert(&key(i));
    }
    writer.finish();
    let spare = writer::spare_capacity_for_tests();
    assert!(spare >= small - 1, "spare buffer of {spare} entries");
    let mut writer = mem.writer();
    writer.insert(&key(100));
    writer.insert(&key(101));
    assert_eq!(writer::spare_capacity_for_tests(), 0, "taken by the writer");
    drop(writer);
    // A large batch gives its buffer to the memtable's list; the thread's
    // next buffer is allocated at that batch's size.
    let mut writer = mem.writer();
    for i in 200..250 {
        writer.insert(&key(i));
    }
    writer.finish();
    assert_eq!(writer::spare_capacity_for_tests(), 50);
    assert_eq!(mem.len(), small + 2 + 50);
    assert_eq!(scan(&mem).len(), small + 2 + 50);
}

#[test]
fn listed_and_copied_batches_read_as_one_sorted_vector() {
    let mem = VecMem::new(BytewiseComparator).with_parallel_sort_threshold(usize::MAX);
    let mut expected = std::collections::BTreeSet::new();
    let mut next = 0u32;
    let mut memory = mem.memory_usage();
    // Batch sizes on both sides of the threshold, single inserts between;
    // keys interleave across batches so that the sort has work to do.
    for size in [
        1,
        2,
        MIN_LISTED_BATCH - 1,
        MIN_LISTED_BATCH,
        3 * MIN_LISTED_BATCH,
        1,
    ] {
        let mut writer = mem.writer();
        for _ in 0..size {
            // A bijection on 0..10_007 (a prime): distinct, shuffled keys.
            let k = key(next * 7_919 % 10_007);
            next += 1;
            writer.insert(&k);
            expected.insert(k);
        }
        writer.finish();
        let k = key(20_000 + next);
        next += 1;
        mem.insert(&k);
        expected.insert(k);
        assert_eq!(mem.len(), expected.len());
        let now = mem.memory_usage();
        assert!(now > memory, "memory usage {now} after {memory}");
        memory = now;
    }
    let expected: Vec<Vec<u8>> = expected.into_iter().map(|k| k.to_vec()).collect();
    // A mutable memtable's cursor sorts a private copy of both kinds.
    assert_eq!(scan(&mem), expected);
    mem.mark_read_only();
    // The frozen memtable joins the list to the vector once, sorts once,
    // and shares the result.
    assert_eq!(scan(&mem), expected);
    assert_eq!(scan(&mem), expected);
    assert_eq!(mem.sort_count(), 2);
    assert_eq!(mem.len(), expected.len());
}

#[test]
fn a_listed_batch_after_freeze_panics_and_leaves_the_memtable_as_it_was() {
    let mem = VecMem::new(BytewiseComparator);
    mem.insert(b"before");
    mem.mark_read_only();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut writer = mem.writer();
        for i in 0..MIN_LISTED_BATCH as u32 {
            writer.insert(&key(i));
        }
        writer.finish();
    }));
    assert!(caught.is_err());
    assert_eq!(mem.len(), 1);
    assert_eq!(scan(&mem), [b"before".to_vec()]);
}

#[test]
fn lanes_are_a_power_of_two_and_at_least_eight() {
    let mem = VecMem::new(BytewiseComparator);
    assert!(mem.lanes.len().is_power_of_two());
    assert!(mem.lanes.len() >= 8);
    assert_eq!(mem.lane_mask, mem.lanes.len() - 1);
}

#[test]
fn single_entries_go_to_the_threads_lane() {
    let mem = VecMem::new(BytewiseComparator);
    mem.insert(b"b");
    let mut writer = mem.writer();
    writer.insert(b"a");
    writer.finish();
    let mine = lane::index() & mem.lane_mask;
    for (i, lane) in mem.lanes.iter().enumerate() {
        let expected = if i == mine { 2 } else { 0 };
        assert_eq!(lane.entries.lock().len(), expected, "lane {i}");
        // Relaxed: the writers were joined.
        assert_eq!(lane.count.load(Ordering::Relaxed), expected, "lane {i}");
    }
    assert_eq!(scan(&mem), [b"a".to_vec(), b"b".to_vec()]);
}

#[test]
fn a_thread_finding_its_lane_held_moves_to_another_for_good() {
    let mem = VecMem::new(BytewiseComparator);
    std::thread::scope(|s| {
        s.spawn(|| {
            let before = lane::index();
            // Held here, as another thread sharing the lane would hold it:
            // the lock is not reentrant, so the insert's `try_lock` fails.
            let held = mem.lanes[before & mem.lane_mask].entries.lock();
            mem.insert(b"moved");
            drop(held);
            let after = lane::index();
            assert_ne!(before & mem.lane_mask, after & mem.lane_mask);
            mem.insert(b"stays");
            assert_eq!(lane::index(), after, "the new lane is kept");
            assert_eq!(mem.lanes[after & mem.lane_mask].entries.lock().len(), 2);
            assert!(mem.lanes[before & mem.lane_mask].entries.lock().is_empty());
        });
    });
    assert_eq!(mem.len(), 2);
    assert_eq!(scan(&mem), [b"moved".to_vec(), b"stays".to_vec()]);
}

#[test]
fn threads_on_lanes_with_concurrent_cursors_keep_every_entry_once() {
    let (threads, per_thread) = if cfg!(miri) {
        (3u32, 20u32)
    } else {
        (4, 2_000)
    };
    let mem = VecMem::new(BytewiseComparator).with_parallel_sort_threshold(usize::MAX);
    std::thread::scope(|s| {
        for t in 0..threads {
            let mem = &mem;
            s.spawn(move || {
                for i in 0..per_thread {
                    let k = key(i * threads + t);
                    if i % 2 == 0 {
                        mem.insert(&k);
                    } else {
                        let mut writer = mem.writer();
                        writer.insert(&k);
                        writer.finish();
                    }
                }
            });
        }
        s.spawn(|| {
            for _ in 0..if cfg!(miri) { 2 } else { 20 } {
                let len = mem.len();
                let seen = scan(&mem);
                assert!(seen.len() >= len, "cursor saw {} < len {len}", seen.len());
                assert!(seen.windows(2).all(|w| w[0] < w[1]), "unsorted or twice");
            }
        });
    });
    let n = (threads * per_thread) as usize;
    assert_eq!(mem.len(), n);
    let bytes = mem.memory_usage();
    mem.mark_read_only();
    let expected: Vec<Vec<u8>> = (0..n as u32).map(|i| key(i).to_vec()).collect();
    assert_eq!(scan(&mem), expected);
    assert_eq!(mem.len(), n, "the counts stay with the lanes");
    assert!(mem.lanes.iter().all(|lane| lane.entries.lock().is_empty()));
    assert!(mem.memory_usage() <= bytes, "the lanes' vectors were freed");
}

#[test]
#[should_panic(expected = "read-only")]
fn a_batch_of_one_from_a_writer_after_freeze_panics() {
    let mem = VecMem::new(BytewiseComparator);
    mem.insert(b"before");
    mem.mark_read_only();
    let mut writer = mem.writer();
    writer.insert(b"late");
    writer.finish();
}
