//! A bulk load: threads write batches of entries in no particular order,
//! then the memtable is frozen and read back sorted.
//!
//! Writers only append (each batch is published once, when its writer
//! finishes); the sort happens once, for the first reader after
//! `mark_read_only`, and every later reader shares its result.
//!
//! `cargo run -p vecmem --example bulk_load`

use std::time::Instant;

use vecmem::{BytewiseComparator, VecMem};

fn main() {
    let mem = VecMem::new(BytewiseComparator);
    let (threads, batches, per_batch) = (4u64, 25u64, 2_000u64);
    let total = threads * batches * per_batch;

    let started = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let mem = &mem;
            s.spawn(move || {
                for b in 0..batches {
                    // A writer collects its batch in a buffer of its own and
                    // publishes it when finished: one step for the batch.
                    let mut writer = mem.writer();
                    for i in 0..per_batch {
                        let n = (t * batches + b) * per_batch + i;
                        // Scattered keys: 7919 is prime and does not divide
                        // `total`, so `n -> n * 7919 % total` is a permutation.
                        let key = n * 7919 % total;
                        writer.insert(format!("user{key:08}").as_bytes());
                    }
                    writer.finish();
                }
            });
        }
    });
    let loaded = started.elapsed();

    mem.mark_read_only();
    let started = Instant::now();
    let mut cursor = mem.cursor(); // the first reader sorts, once
    cursor.seek_to_first();
    let sorted = started.elapsed();

    let mut count = 0;
    let mut previous = Vec::new();
    while cursor.valid() {
        assert!(previous.as_slice() < cursor.key(), "sorted, no duplicates");
        previous = cursor.key().to_vec();
        count += 1;
        cursor.next();
    }
    assert_eq!(count, total);

    // A second reader shares the sorted vector.
    let mut cursor = mem.cursor();
    cursor.seek(b"user00123456");
    println!(
        "{total} entries from {threads} threads: loaded in {loaded:.1?}, sorted in {sorted:.1?}"
    );
    println!(
        "first at or after user00123456: {}",
        String::from_utf8_lossy(cursor.key())
    );
    println!("memory: {} bytes", mem.memory_usage());
}
