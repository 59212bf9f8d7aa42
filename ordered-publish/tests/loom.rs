//! Loom models of the sequencer: publication in order with the work it
//! covers, sleeping waiters (one, and two for different positions),
//! closing, and a full ring. Under loom a waiter
//! sleeps at once, without spinning or yielding first, so that the models
//! reach the sleep within their preemptions.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release -p ordered-publish --test loom`
#![cfg(loom)]

use std::sync::Arc;

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicU64, Ordering::Relaxed};
use loom::thread;
use ordered_publish::Sequencer;

/// Work done under sequence number `n`: a cell per number, written by the
/// range's holder before `finish`, read by anyone once published.
struct Work(Vec<UnsafeCell<u64>>);

// SAFETY: every access goes through loom's cell, which reports any race.
unsafe impl Sync for Work {}

impl Work {
    fn new(n: usize) -> Work {
        Work((0..n).map(|_| UnsafeCell::new(0)).collect())
    }

    fn write(&self, n: u64, value: u64) {
        // SAFETY: loom checks that no access races with this one.
        self.0[n as usize].with_mut(|p| unsafe { *p = value });
    }

    fn read(&self, n: u64) -> u64 {
        // SAFETY: as in `write`.
        self.0[n as usize].with(|p| unsafe { *p })
    }
}

/// Two writers finish in either order while the main thread reads the
/// published position: all work below it is there (no race on it), and the
/// position ends past both.
#[test]
fn published_work_is_visible_and_finished_in_any_order() {
    loom::model(|| {
        let seq = Arc::new(Sequencer::new(0, 4));
        let work = Arc::new(Work::new(2));
        let writers: Vec<_> = (0..2)
            .map(|t| {
                let (seq, work) = (seq.clone(), work.clone());
                thread::spawn(move || {
                    let r = seq.reserve(1);
                    work.write(r.start, 10 + t);
                    seq.finish(r);
                })
            })
            .collect();
        let published = seq.published();
        for n in 0..published {
            assert!(work.read(n) >= 10, "published {n} before its work");
        }
        for w in writers {
            w.join().unwrap();
        }
        assert_eq!(seq.published(), 2);
    });
}

/// A waiter that may go to sleep is woken by the finisher, and sees the
/// work.
#[test]
fn a_sleeping_waiter_is_woken_and_sees_the_work() {
    loom::model(|| {
        let seq = Arc::new(Sequencer::new(0, 4));
        let work = Arc::new(Work::new(1));
        let r = seq.reserve(1);
        let waiter = {
            let (seq, work, end) = (seq.clone(), work.clone(), r.end);
            thread::spawn(move || {
                seq.wait_published(end);
                assert_eq!(work.read(0), 7);
            })
        };
        work.write(r.start, 7);
        seq.finish(r);
        waiter.join().unwrap();
    });
}

/// Two waiters asleep for different positions: the first finishes the
/// range the second waits for, once the move that reaches its own
/// position wakes it. A wake-up that comes late (for the higher position
/// only) or never leaves both asleep; each sees the work below its
/// position.
#[test]
fn sleepers_for_different_positions_are_each_woken_by_their_move() {
    loom::model(|| {
        let seq = Arc::new(Sequencer::new(0, 4));
        let work = Arc::new(Work::new(2));
        let (first, second) = (seq.reserve(1), seq.reserve(1));
        let relay = {
            let (seq, work, second) = (seq.clone(), work.clone(), second.clone());
            thread::spawn(move || {
                seq.wait_published(second.start);
                assert_eq!(work.read(0), 10);
                work.write(second.start, 11);
                seq.finish(second);
            })
        };
        let last = {
            let (seq, work, end) = (seq.clone(), work.clone(), second.end);
            thread::spawn(move || {
                seq.wait_published(end);
                assert_eq!((work.read(0), work.read(1)), (10, 11));
            })
        };
        work.write(first.start, 10);
        seq.finish(first);
        relay.join().unwrap();
        last.join().unwrap();
        assert_eq!(seq.published(), 2);
    });
}

/// A closer waits for a range reserved before it, and a range reserved
/// after it reopens sees what the closer did while closed (an engine's
/// memtable switch).
#[test]
fn close_orders_reservations_around_the_closers_work() {
    loom::model(|| {
        let seq = Arc::new(Sequencer::new(0, 4));
        let work = Arc::new(Work::new(2));
        let switched = Arc::new(Work::new(1));
        let boundary = Arc::new(AtomicU64::new(u64::MAX));
        let writer = {
            let (seq, work, switched, boundary) = (
                seq.clone(),
                work.clone(),
                switched.clone(),
                boundary.clone(),
            );
            thread::spawn(move || {
                let r = seq.reserve(1);
                // Relaxed: a reservation after the reopening synchronises
                // with it, and so sees the boundary stored before.
                if r.start >= boundary.load(Relaxed) {
                    assert_eq!(
                        switched.read(0),
                        1,
                        "reserved after the switch, did not see it"
                    );
                }
                work.write(r.start, 1);
                seq.finish(r);
            })
        };
        let closed = seq.close();
        let p = closed.published();
        for n in 0..p {
            assert_eq!(
                work.read(n),
                1,
                "a range reserved before the close is unfinished"
            );
        }
        switched.write(0, 1);
        boundary.store(p, Relaxed);
        drop(closed);
        writer.join().unwrap();
        assert_eq!(seq.published(), 1);
    });
}

/// Two writers reserve numbers and bytes in one step while a closer
/// restarts the byte count: the byte ranges follow the sequence ranges'
/// order with no gap, from 0 before the close and from the new count after
/// it (a log whose writers copy at the places they reserve, switched to a
/// new file).
#[test]
fn bytes_follow_sequence_order_across_a_restart() {
    loom::model(|| {
        let seq = Arc::new(Sequencer::new(0, 4));
        let writers: Vec<_> = (0..2u64)
            .map(|t| {
                let seq = seq.clone();
                thread::spawn(move || {
                    let (r, bytes) = seq.reserve_with_bytes(1, 10 + t).unwrap();
                    assert_eq!(bytes.end - bytes.start, 10 + t);
                    seq.finish(r.clone());
                    (r, bytes)
                })
            })
            .collect();
        let closed_at = {
            let closed = seq.close();
            closed.restart_bytes(1000, u64::MAX);
            closed.published()
        };
        let mut got: Vec<_> = writers.into_iter().map(|w| w.join().unwrap()).collect();
        got.sort_by_key(|(r, _)| r.start);
        let mut at = 0;
        for (r, bytes) in &got {
            if r.start == closed_at {
                at = 1000;
            }
            assert_eq!(bytes.start, at, "a gap or an overlap before {r:?}");
            at = bytes.end;
        }
        assert_eq!(seq.reserved_bytes(), at.max(1000));
    });
}

/// With a ring of two, a third reservation waits (maybe asleep) until the
/// first range is published.
#[test]
fn a_reservation_waits_for_room_and_is_woken() {
    loom::model(|| {
        let seq = Arc::new(Sequencer::new(0, 2));
        let a = seq.reserve(1);
        let b = seq.reserve(1);
        let third = {
            let seq = seq.clone();
            thread::spawn(move || {
                let r = seq.reserve(1);
                assert_eq!(r, 2..3);
                seq.finish(r);
            })
        };
        seq.finish(b);
        seq.finish(a);
        third.join().unwrap();
        assert_eq!(seq.published(), 3);
    });
}

/// With a ring of two, two writers reserve past the ring while its slots
/// are still in use: one of them looks at the published position and
/// raises the reservation limit, the other may reserve on that limit alone
/// and finish first, storing its end into a slot an earlier range used.
/// That store must come after the earlier one, or the published position
/// stops short (fails if the limit is read or raised Relaxed).
#[test]
fn a_reservation_on_a_limit_raised_by_another_reuses_the_slot_safely() {
    loom::model(|| {
        let seq = Arc::new(Sequencer::new(0, 2));
        let a = seq.reserve(1);
        let b = seq.reserve(1);
        let finish_b = {
            let seq = seq.clone();
            thread::spawn(move || seq.finish(b))
        };
        let writers: Vec<_> = (0..2)
            .map(|_| {
                let seq = seq.clone();
                thread::spawn(move || {
                    let r = seq.reserve(1);
                    seq.finish(r);
                })
            })
            .collect();
        seq.finish(a);
        finish_b.join().unwrap();
        for w in writers {
            w.join().unwrap();
        }
        assert_eq!(seq.published(), 4, "a finished range was lost");
    });
}

/// Two posters post and drain while the other may hold the drain: every
/// item is taken once, in range order, and none is left behind (the
/// drainer looks again after letting go).
#[test]
fn posted_items_are_drained_once_in_order_by_whoever_is_free() {
    use ordered_publish::OrderedQueue;
    use std::sync::Mutex;

    loom::model(|| {
        let seq = Arc::new(Sequencer::new(0, 4));
        let queue = Arc::new(OrderedQueue::new(0, 4));
        let taken = Arc::new(Mutex::new(Vec::new()));
        let posters: Vec<_> = (0..2u64)
            .map(|t| {
                let (seq, queue, taken) = (seq.clone(), queue.clone(), taken.clone());
                thread::spawn(move || {
                    let range = seq.reserve(1 + t);
                    queue.post(range.clone(), t);
                    queue.drain(|_, pass| taken.lock().unwrap().extend(pass.drain(..)));
                })
            })
            .collect();
        for p in posters {
            p.join().unwrap();
        }
        let taken = taken.lock().unwrap();
        assert_eq!(taken.len(), 2, "an item left behind: {taken:?}");
        assert_eq!(taken[0].0.start, 0);
        assert_eq!(taken[0].0.end, taken[1].0.start, "out of order");
    });
}

/// Three posters, the middle one posting a skip, each drain until their
/// own range is taken: every item is taken once, in range order, the skip
/// is passed over, each poster returns only once its own range is taken,
/// and nobody waits forever for a drainer that let go.
#[test]
fn drain_until_returns_once_the_posters_own_item_is_taken() {
    use ordered_publish::OrderedQueue;
    use std::sync::Mutex;

    loom::model(|| {
        let seq = Arc::new(Sequencer::new(0, 4));
        let queue = Arc::new(OrderedQueue::new(0, 4));
        let taken = Arc::new(Mutex::new(Vec::new()));
        let posters: Vec<_> = (0..3u64)
            .map(|t| {
                let (seq, queue, taken) = (seq.clone(), queue.clone(), taken.clone());
                thread::spawn(move || {
                    let range = seq.reserve(1);
                    // The middle poster skips: nothing to take, but the
                    // range must pass.
                    if t == 1 {
                        queue.post_skip(range.clone());
                    } else {
                        queue.post(range.clone(), t);
                    }
                    queue.drain_until(range.end, |_, pass| {
                        taken.lock().unwrap().extend(pass.drain(..))
                    });
                    assert!(queue.taken() >= range.end, "returned too early");
                    let mine = taken.lock().unwrap().iter().any(|(r, _)| *r == range);
                    assert_eq!(mine, t != 1, "an item not taken, or a skip taken");
                    seq.finish(range);
                })
            })
            .collect();
        for p in posters {
            p.join().unwrap();
        }
        let taken = taken.lock().unwrap();
        let items: Vec<u64> = taken.iter().map(|(_, t)| *t).collect();
        assert_eq!(items.len(), 2, "an item lost or repeated: {items:?}");
        assert!(taken[0].0.start < taken[1].0.start, "out of order");
        assert_eq!(queue.taken(), 3, "the skip was not passed");
    });
}

/// Two logged writers and one that skips the queue (it only finishes its
/// range), in the order of an engine whose writes may skip the log: the
/// logged ones post, drain until their own item is taken, then finish;
/// the middle range is never posted. Both items are taken once, in order,
/// the unposted range is passed over once finished, and nobody waits
/// forever (a logged writer behind the unposted range sleeps on the
/// sequencer's bell, which the finisher rings).
#[test]
fn drain_until_skipping_passes_finished_ranges_nobody_posted() {
    use ordered_publish::OrderedQueue;
    use std::sync::Mutex;

    loom::model(|| {
        let seq = Arc::new(Sequencer::new(0, 4));
        let queue = Arc::new(OrderedQueue::new(0, 4));
        let taken = Arc::new(Mutex::new(Vec::new()));
        // Reserved up front, so that the model spends its preemptions on
        // posting, draining and waking.
        let writers: Vec<_> = (0..3u64)
            .map(|t| {
                let (seq, queue, taken) = (seq.clone(), queue.clone(), taken.clone());
                let range = seq.reserve(1);
                thread::spawn(move || {
                    if t != 1 {
                        queue.post_skipping(range.clone(), t, seq.tracker());
                        queue.drain_until_skipping(range.end, seq.tracker(), |_, pass| {
                            taken.lock().unwrap().extend(pass.drain(..))
                        });
                        assert!(queue.taken() >= range.end, "returned too early");
                        let mine = taken.lock().unwrap().iter().any(|(r, _)| *r == range);
                        assert!(mine, "returned before its item was taken");
                    }
                    seq.finish(range);
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        let taken = taken.lock().unwrap();
        let starts: Vec<u64> = taken.iter().map(|(r, _)| r.start).collect();
        assert_eq!(starts, [0, 2], "an item lost, repeated or out of order");
    });
}

/// Two reservations race for the word: in the schedules where one reads it
/// before the other's compare-and-swap lands, its own fails once and is
/// counted; the ranges stay distinct either way.
#[test]
fn a_reservation_that_loses_the_race_is_counted() {
    // Std's atomic: it outlives the model's runs, which it sums up.
    static SAW_A_RETRY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    loom::model(|| {
        let seq = Arc::new(Sequencer::new(0, 4));
        let other = {
            let seq = Arc::clone(&seq);
            thread::spawn(move || seq.reserve(1))
        };
        let mine = seq.reserve(1);
        let theirs = other.join().unwrap();
        assert_ne!(mine, theirs);
        let retries = seq.reservation_retries();
        assert!(retries <= 1, "{retries} retries for one race");
        if retries == 1 {
            // Relaxed: read after the model's runs, on this thread.
            SAW_A_RETRY.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    });
    // Relaxed: as above.
    assert!(
        SAW_A_RETRY.load(std::sync::atomic::Ordering::Relaxed),
        "no schedule counted the lost race"
    );
}
