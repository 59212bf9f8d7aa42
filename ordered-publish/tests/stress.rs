//! Many writers and readers over one sequencer: ranges of random lengths,
//! random work between reserve and finish, a closer now and then. Checked
//! invariants: the published position only grows, never passes a range
//! that is not finished, and ends at the total reserved; every reservation
//! is disjoint from the others and contiguous with them.

use std::sync::atomic::{
    AtomicBool, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};
use std::thread;

use ordered_publish::Sequencer;
use rand::{Rng, SeedableRng, rngs::SmallRng};

const THREADS: u64 = 6;
const RANGES_PER_THREAD: u64 = 20_000;
const MAX_LEN: u64 = 5;

#[test]
fn published_never_passes_unfinished_work() {
    let seq = Sequencer::new(0, 32);
    let total = THREADS * RANGES_PER_THREAD * MAX_LEN;
    // One flag per sequence number: set before the range is finished.
    let finished: Vec<AtomicBool> = (0..total).map(|_| AtomicBool::new(false)).collect();
    let owner: Vec<AtomicU64> = (0..total).map(|_| AtomicU64::new(u64::MAX)).collect();
    let writers_done = AtomicU64::new(0);
    // Acquire: pairs with each writer's Release count, after its last
    // finish. Below, the owners and the finished flags are Relaxed: an
    // owner's swap needs only the one variable's order, and a flag is read
    // after the joins or once the published position (Acquire) passed it.
    let stop = || writers_done.load(Acquire) == THREADS;
    thread::scope(|s| {
        for t in 0..THREADS {
            let (seq, finished, owner, writers_done) = (&seq, &finished, &owner, &writers_done);
            s.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(t);
                for _ in 0..RANGES_PER_THREAD {
                    let r = seq.reserve(rng.random_range(1..=MAX_LEN));
                    for n in r.clone() {
                        let was = owner[n as usize].swap(t, Relaxed);
                        assert_eq!(was, u64::MAX, "number {n} handed out twice");
                    }
                    for _ in 0..rng.random_range(0..50) {
                        std::hint::spin_loop();
                    }
                    if rng.random_ratio(1, 100) {
                        thread::yield_now();
                    }
                    for n in r.clone() {
                        finished[n as usize].store(true, Relaxed);
                    }
                    seq.finish(r.clone());
                    if rng.random_ratio(1, 4) {
                        seq.wait_published(r.end);
                        assert!(seq.published() >= r.end);
                    }
                }
                writers_done.fetch_add(1, Release);
            });
        }
        // Readers: the published position grows and covers finished work.
        for _ in 0..2 {
            let (seq, finished, stop) = (&seq, &finished, &stop);
            s.spawn(move || {
                let mut last = 0;
                while !stop() {
                    let p = seq.published();
                    assert!(p >= last, "published went back");
                    for n in last..p {
                        assert!(
                            finished[n as usize].load(Relaxed),
                            "{n} published unfinished"
                        );
                    }
                    last = p;
                }
            });
        }
        // A closer: while closed, everything reserved is finished.
        {
            let (seq, finished, stop) = (&seq, &finished, &stop);
            s.spawn(move || {
                while !stop() {
                    let closed = seq.close();
                    let p = closed.published();
                    assert!(p == 0 || finished[p as usize - 1].load(Relaxed));
                    drop(closed);
                    thread::sleep(std::time::Duration::from_millis(1));
                }
            });
        }
    });
    let p = seq.published();
    let handed_out = owner
        .iter()
        .take_while(|o| o.load(Relaxed) != u64::MAX)
        .count() as u64;
    assert_eq!(p, handed_out, "published stopped before the end");
    assert!(
        owner[p as usize..]
            .iter()
            .all(|o| o.load(Relaxed) == u64::MAX)
    );
}
