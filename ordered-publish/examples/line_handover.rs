//! What one cache line handed between two cores costs on this machine: the
//! floor under any ordering of writes from two threads.
//!
//! Two threads take turns incrementing one counter (each waits until the
//! count's parity is its own), so every increment moves the line to the
//! other core and back. Prints the time per hand-over, three runs.
//!
//! ```sh
//! cargo run --release -p ordered-publish --example line_handover
//! ```
//!
//! A sequencer's write takes at least two such hand-overs when two threads
//! alternate: its reservation (a read-modify-write of the line the other
//! thread reserved on last) and the check that the write before it is
//! published (a read of the line the other thread published on last).

use std::hint::spin_loop;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crossbeam_utils::CachePadded;

const TURNS: u64 = 2_000_000;

fn main() {
    for _ in 0..3 {
        let turn = CachePadded::new(AtomicU64::new(0));
        let started = Instant::now();
        std::thread::scope(|s| {
            for me in 0..2 {
                let turn = &turn;
                s.spawn(move || {
                    for _ in 0..TURNS {
                        // Acquire / Release: a hand-over, as a publication is.
                        while turn.load(Ordering::Acquire) % 2 != me {
                            spin_loop();
                        }
                        turn.fetch_add(1, Ordering::Release);
                    }
                });
            }
        });
        let per = started.elapsed().as_nanos() as f64 / (2 * TURNS) as f64;
        println!("{per:.1} ns per hand-over");
    }
}
