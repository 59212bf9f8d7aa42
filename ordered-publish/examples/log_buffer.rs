//! Threads fill one shared buffer at places they reserve, in any order; a
//! reader follows the published position and never finds a hole before it.
//!
//! Each writer reserves a range of slots with one compare-and-swap, fills
//! it with no lock, and finishes it. The published position only moves over
//! finished ranges, in order: what lies before it is complete.
//!
//! `cargo run -p ordered-publish --example log_buffer`

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use ordered_publish::Sequencer;

/// Slots a writer's `i`th record takes: 1 to 4.
fn record_len(writer: u64, i: u64) -> u64 {
    1 + (i * 7 + writer) % 4
}

fn main() {
    let (writers, records_per_writer) = (4u64, 5_000u64);
    let total: u64 = (0..writers)
        .flat_map(|t| (0..records_per_writer).map(move |i| record_len(t, i)))
        .sum();
    // 0 is a slot not written yet.
    let slots: Vec<AtomicU64> = (0..total).map(|_| AtomicU64::new(0)).collect();
    // Positions start at 0; up to 1024 ranges may be in flight at once.
    let seq = Sequencer::new(0, 1024);
    let done = AtomicBool::new(false);

    let looks = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let (mut checked, mut looks) = (0, 0);
            loop {
                // Acquire: pairs with the Release store after the last
                // publication, so the last look sees everything.
                let last = done.load(Ordering::Acquire);
                let published = seq.published();
                // Every slot before the published position is written.
                // Relaxed loads suffice: `published` is an Acquire load,
                // and `finish` orders each range's writes before it.
                for slot in &slots[checked as usize..published as usize] {
                    assert_ne!(slot.load(Ordering::Relaxed), 0, "a hole before {published}");
                }
                checked = published;
                looks += 1;
                if last {
                    return looks;
                }
            }
        });
        let handles: Vec<_> = (0..writers)
            .map(|t| {
                let (seq, slots) = (&seq, &slots);
                s.spawn(move || {
                    for i in 0..records_per_writer {
                        let range = seq.reserve(record_len(t, i));
                        for pos in range.clone() {
                            // Relaxed: `finish` publishes these writes.
                            slots[pos as usize].store(t + 1, Ordering::Relaxed);
                        }
                        seq.finish(range);
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
        seq.wait_published(total);
        // Release: the reader's last look sees the whole buffer published.
        done.store(true, Ordering::Release);
        reader.join().unwrap()
    });

    assert_eq!(seq.published(), total);
    assert!(slots.iter().all(|s| s.load(Ordering::Relaxed) != 0));
    println!("{writers} writers published {total} slots in order");
    println!("a reader looked {looks} times meanwhile and never saw a hole");
}
