//! Multi-threaded stress tests with invariant checks.
#![cfg(not(loom))]

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};

use vecmem::{BytewiseComparator, Comparator, VecMem};

/// An entry: 4-byte big-endian key, then a value derived from it.
fn entry(key: u32) -> Vec<u8> {
    let mut bytes = key.to_be_bytes().to_vec();
    bytes.extend_from_slice(format!("value-{key}").as_bytes());
    bytes
}

fn key_of(entry: &[u8]) -> u32 {
    u32::from_be_bytes(entry[..4].try_into().unwrap())
}

fn scan<C: Comparator + Sync>(mem: &VecMem<C>) -> Vec<Vec<u8>> {
    let mut cursor = mem.cursor();
    cursor.seek_to_first();
    let mut out = Vec::with_capacity(cursor.snapshot_len());
    while cursor.valid() {
        out.push(cursor.key().to_vec());
        cursor.next();
    }
    out
}

/// RocksDB's `DBMemTableTest.VectorConcurrentInsert`, scaled up: 10 threads,
/// each writing batches of 100 distinct keys through a `Writer`.
#[test]
fn ten_writers_in_batches_of_100_scan_every_key_once_in_order() {
    const THREADS: u32 = 10;
    const BATCHES: u32 = 5;
    const PER_BATCH: u32 = 100;
    let mem = VecMem::new(BytewiseComparator);
    let start = Barrier::new(THREADS as usize);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (mem, start) = (&mem, &start);
            s.spawn(move || {
                start.wait();
                for b in 0..BATCHES {
                    let mut writer = mem.writer();
                    for i in 0..PER_BATCH {
                        // Interleave the threads' keys so batches overlap in order.
                        writer.insert(&entry((b * PER_BATCH + i) * THREADS + t));
                    }
                    writer.finish();
                }
            });
        }
    });
    let total = THREADS * BATCHES * PER_BATCH;
    assert_eq!(mem.len(), total as usize);
    mem.mark_read_only();
    let scanned = scan(&mem);
    assert_eq!(scanned.len(), total as usize);
    for (expected_key, got) in (0..total).zip(&scanned) {
        assert_eq!(got, &entry(expected_key), "key and value at {expected_key}");
    }
    assert_eq!(mem.sort_count(), 1);
}

#[test]
fn frozen_memtable_sorts_once_under_concurrent_first_readers() {
    const READERS: usize = 8;
    // Above the default parallel threshold, so the shared sort uses rayon.
    // 7919 is prime and does not divide `n`, so `i * 7919 % n` permutes 0..n.
    let n = vecmem::DEFAULT_PARALLEL_SORT_THRESHOLD as u32 + 1000;
    let mem = Arc::new(VecMem::new(BytewiseComparator));
    for i in 0..n {
        mem.insert(&entry(i * 7919 % n));
    }
    mem.mark_read_only();
    let start = Barrier::new(READERS);
    let scans: Vec<Vec<Vec<u8>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..READERS)
            .map(|r| {
                let (mem, start) = (&mem, &start);
                s.spawn(move || {
                    start.wait();
                    if r % 2 == 0 {
                        scan(mem)
                    } else {
                        // The owning cursor shares the same sorted vector.
                        let mut cursor = mem.cursor_arc();
                        cursor.seek_to_first();
                        let mut out = Vec::new();
                        while cursor.valid() {
                            out.push(cursor.key().to_vec());
                            cursor.next();
                        }
                        out
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(mem.sort_count(), 1, "exactly one sort for all readers");
    let expected: Vec<Vec<u8>> = {
        let keys: BTreeSet<u32> = (0..n).collect();
        keys.into_iter().map(entry).collect()
    };
    for scanned in &scans {
        assert_eq!(scanned, &expected);
    }
}

/// Readers running next to writers: `len` never goes back, a cursor made
/// after reading `len` holds at least that many entries, every snapshot is
/// sorted, and batches show up whole or not at all.
#[test]
fn readers_during_writes_see_whole_batches_and_monotone_len() {
    const WRITERS: u32 = 3;
    const BATCHES: u32 = 40;
    const PER_BATCH: u32 = 25;
    let mem = VecMem::new(BytewiseComparator);
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|t| {
                let mem = &mem;
                s.spawn(move || {
                    for b in 0..BATCHES {
                        let batch_id = t * BATCHES + b;
                        if b % 4 == 3 {
                            // Every fourth "batch" is a serial insert of one entry.
                            mem.insert(&entry(batch_id * PER_BATCH));
                            continue;
                        }
                        let mut writer = mem.writer();
                        for i in 0..PER_BATCH {
                            writer.insert(&entry(batch_id * PER_BATCH + i));
                        }
                        // Dropped: publishes.
                    }
                })
            })
            .collect();
        for _ in 0..2 {
            s.spawn(|| {
                let mut last_len = 0;
                let mut last_memory = 0;
                let mut rounds = 0;
                // Acquire: pairs with the Release below; only ends the loop.
                while !done.load(std::sync::atomic::Ordering::Acquire) || rounds < 2 {
                    rounds += 1;
                    let len = mem.len();
                    let memory = mem.memory_usage();
                    assert!(len >= last_len, "len went back: {last_len} -> {len}");
                    assert!(memory >= last_memory, "memory went back");
                    last_len = len;
                    last_memory = memory;
                    let snapshot = scan(&mem);
                    assert!(snapshot.len() >= len, "cursor saw fewer than len");
                    assert!(snapshot.windows(2).all(|w| w[0] < w[1]), "unsorted");
                    let mut per_batch = std::collections::BTreeMap::<u32, u32>::new();
                    for e in &snapshot {
                        *per_batch.entry(key_of(e) / PER_BATCH).or_default() += 1;
                    }
                    for (batch_id, count) in per_batch {
                        let expected = if batch_id % BATCHES % 4 == 3 {
                            1
                        } else {
                            PER_BATCH
                        };
                        assert_eq!(count, expected, "batch {batch_id} published in part");
                    }
                }
            });
        }
        for w in writers {
            w.join().unwrap();
        }
        // Release: pairs with the readers' Acquire; the writers are joined.
        done.store(true, std::sync::atomic::Ordering::Release);
    });
    let full = BATCHES - BATCHES / 4;
    let expected = WRITERS * (full * PER_BATCH + BATCHES / 4);
    assert_eq!(mem.len(), expected as usize);
    assert_eq!(scan(&mem).len(), expected as usize);
}

#[test]
fn concurrent_duplicates_are_all_kept() {
    let mem = VecMem::new(BytewiseComparator);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let mut writer = mem.writer();
                for k in 0..50u32 {
                    writer.insert(&entry(k));
                }
            });
        }
    });
    let scanned = scan(&mem);
    assert_eq!(scanned.len(), 200);
    for (i, chunk) in scanned.chunks(4).enumerate() {
        assert!(
            chunk.iter().all(|e| e == &entry(i as u32)),
            "duplicates adjacent"
        );
    }
}

/// Writers publish batches (large ones through the lock-free list, small
/// ones under the lock) while another thread freezes the memtable: every
/// batch either got in whole before the freeze, and the sorted vector holds
/// it, or its publish panicked and it is nowhere.
#[test]
fn a_freeze_racing_with_writers_keeps_exactly_the_batches_that_got_in() {
    for round in 0..20u32 {
        let mem = Arc::new(VecMem::new(BytewiseComparator));
        let start = Arc::new(Barrier::new(5));
        let writers: Vec<_> = (0..4u32)
            .map(|t| {
                let (mem, start) = (Arc::clone(&mem), Arc::clone(&start));
                std::thread::spawn(move || {
                    start.wait();
                    let mut kept = BTreeSet::new();
                    for batch in 0..200u32 {
                        // Sizes 1, 8 and 40: both publishing paths.
                        let size = [1, 8, 40][(batch % 3) as usize];
                        let keys: Vec<u32> =
                            (0..size).map(|i| ((t * 200 + batch) << 8) | i).collect();
                        let published =
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                let mut writer = mem.writer();
                                for &k in &keys {
                                    writer.insert(&entry(k));
                                }
                                writer.finish();
                            }));
                        match published {
                            Ok(()) => kept.extend(keys),
                            Err(_) => break, // frozen: every later publish would panic too
                        }
                    }
                    kept
                })
            })
            .collect();
        start.wait();
        // Let the writers get going for a moment, differently each round.
        for _ in 0..round * 500 {
            std::hint::spin_loop();
        }
        mem.mark_read_only();
        let mut kept = BTreeSet::new();
        for writer in writers {
            kept.extend(writer.join().unwrap());
        }
        let keys: Vec<u32> = scan(&mem).iter().map(|e| key_of(e)).collect();
        assert_eq!(keys, kept.into_iter().collect::<Vec<_>>(), "round {round}");
        assert_eq!(mem.len(), keys.len());
    }
}

/// Four threads write single entries (through `insert`, `insert_with` and
/// batches of one), each on its write lane, while two readers take cursors
/// and `len`; then the memtable is frozen. Every entry is there exactly
/// once, sorted, and `len` is exact.
#[test]
fn single_entry_writers_on_lanes_with_concurrent_cursors_then_freeze() {
    const THREADS: u32 = 4;
    const PER_THREAD: u32 = 50_000;
    let mem = VecMem::new(BytewiseComparator);
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..THREADS)
            .map(|t| {
                let mem = &mem;
                s.spawn(move || {
                    for i in 0..PER_THREAD {
                        let e = entry(i * THREADS + t);
                        match i % 3 {
                            0 => mem.insert(&e),
                            1 => mem.insert_with(e.len(), |buf| buf.copy_from_slice(&e)),
                            _ => {
                                let mut writer = mem.writer();
                                writer.insert(&e);
                                writer.finish();
                            }
                        }
                    }
                })
            })
            .collect();
        for _ in 0..2 {
            s.spawn(|| {
                let mut last_len = 0;
                let mut rounds = 0;
                // Acquire: pairs with the Release below; only ends the loop.
                while !done.load(std::sync::atomic::Ordering::Acquire) || rounds < 2 {
                    rounds += 1;
                    let len = mem.len();
                    assert!(len >= last_len, "len went back: {last_len} -> {len}");
                    last_len = len;
                    let snapshot = scan(&mem);
                    assert!(snapshot.len() >= len, "cursor saw fewer than len");
                    assert!(
                        snapshot.windows(2).all(|w| w[0] < w[1]),
                        "unsorted, or an entry twice"
                    );
                }
            });
        }
        for w in writers {
            w.join().unwrap();
        }
        // Release: pairs with the readers' Acquire; the writers are joined.
        done.store(true, std::sync::atomic::Ordering::Release);
    });
    let n = (THREADS * PER_THREAD) as usize;
    assert_eq!(mem.len(), n);
    mem.mark_read_only();
    assert_eq!(mem.len(), n);
    let keys: Vec<u32> = scan(&mem).iter().map(|e| key_of(e)).collect();
    assert_eq!(keys, (0..n as u32).collect::<Vec<_>>());
    assert_eq!(mem.len(), n);
}
