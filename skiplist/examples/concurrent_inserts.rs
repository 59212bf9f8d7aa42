//! Threads insert keys into one skiplist while a reader scans it, then a
//! last scan reads everything back in order.
//!
//! Readers never block writers nor wait for them: each scan sees a sorted
//! list holding at least the keys inserted before it started.
//!
//! `cargo run -p inline-skiplist --example concurrent_inserts`

use std::sync::atomic::{AtomicBool, Ordering};

use inline_skiplist::{BytewiseComparator, SkipList, Splice};

fn main() {
    let list = SkipList::new(BytewiseComparator);
    let (writers, per_writer) = (4u32, 50_000u32);
    let done = AtomicBool::new(false);

    let scans = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut scans = 0;
            // Relaxed: a stop flag; the scan publishes nothing.
            while !done.load(Ordering::Relaxed) {
                // A cursor is an iterator over the keys, in order.
                let mut previous: Option<&[u8]> = None;
                for key in list.cursor() {
                    assert!(previous < Some(key), "a scan sees sorted keys");
                    previous = Some(key);
                }
                scans += 1;
            }
            scans
        });
        let inserters: Vec<_> = (0..writers)
            .map(|t| {
                let list = &list;
                s.spawn(move || {
                    // Each writer's keys ascend: a hint remembers where the
                    // last one went, so the next search starts there.
                    let mut hint = Splice::new();
                    for i in 0..per_writer {
                        let key = format!("key:{:08}", i * writers + t);
                        assert!(list.insert_with_hint(key.as_bytes(), &mut hint));
                    }
                })
            })
            .collect();
        for inserter in inserters {
            inserter.join().unwrap();
        }
        // Relaxed: a stop flag; the reader only needs to see it eventually.
        done.store(true, Ordering::Relaxed);
        reader.join().unwrap()
    });

    // Everything is there, in order; a duplicate is refused.
    let total = (writers * per_writer) as usize;
    assert_eq!(list.len(), total);
    assert!(
        list.cursor()
            .map(|k| k.to_vec())
            .eq((0..total).map(|i| format!("key:{i:08}").into_bytes()))
    );
    assert!(!list.insert(b"key:00000007"));

    // A range: seek to the first key at or after a bound, then walk.
    let mut cursor = list.cursor();
    cursor.seek(b"key:00100000");
    let mut range = Vec::new();
    while cursor.valid() && range.len() < 3 {
        range.push(String::from_utf8_lossy(cursor.key()).into_owned());
        cursor.next();
    }
    println!("{total} keys from {writers} threads; {scans} scans ran meanwhile");
    println!("from key:00100000: {range:?}");
    println!("memory: {} bytes", list.memory_usage());
}
