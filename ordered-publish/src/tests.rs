use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::thread;

use crate::Sequencer;

#[test]
fn ranges_finished_out_of_order_publish_in_order() {
    let seq = Sequencer::new(10, 16);
    let ranges: Vec<_> = [3, 1, 4, 1, 5].iter().map(|&n| seq.reserve(n)).collect();
    assert_eq!(ranges[0], 10..13);
    assert_eq!(ranges[4], 19..24);
    for &i in &[4, 2, 3] {
        seq.finish(ranges[i].clone());
        assert_eq!(seq.published(), 10, "nothing before range 0 is finished");
    }
    seq.finish(ranges[0].clone());
    assert_eq!(seq.published(), 13, "range 1 is still open");
    seq.finish(ranges[1].clone());
    assert_eq!(seq.published(), 24);
}

#[test]
fn the_ring_wraps_many_times() {
    let seq = Sequencer::new(0, 4);
    for round in 0..100u64 {
        // b starts at most 3 past the published position: room in 4 slots.
        let a = seq.reserve(1 + round % 3);
        let b = seq.reserve(1);
        seq.finish(b.clone());
        seq.finish(a);
        assert_eq!(seq.published(), b.end);
    }
}

#[test]
fn a_reservation_waits_for_room_in_the_ring() {
    let seq = Sequencer::new(0, 2);
    let a = seq.reserve(1);
    let b = seq.reserve(1);
    let reserved = AtomicBool::new(false);
    thread::scope(|s| {
        let waiter = s.spawn(|| {
            let r = seq.reserve(1);
            // Relaxed: the flag is read after the join.
            reserved.store(true, Relaxed);
            r
        });
        thread::sleep(std::time::Duration::from_millis(if cfg!(miri) {
            1
        } else {
            20
        }));
        assert!(!reserved.load(Relaxed), "two slots, two ranges open");
        seq.finish(b);
        seq.finish(a);
        assert_eq!(waiter.join().unwrap(), 2..3);
    });
}

#[test]
fn close_waits_for_open_ranges_and_holds_off_new_ones() {
    let seq = Sequencer::new(0, 8);
    let open = seq.reserve(2);
    let after_close = AtomicU64::new(u64::MAX);
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(std::time::Duration::from_millis(if cfg!(miri) {
                1
            } else {
                10
            }));
            seq.finish(open);
        });
        let closed = seq.close();
        assert_eq!(closed.published(), 2);
        let reserver = s.spawn(|| {
            let r = seq.reserve(1);
            // Relaxed: read after the join.
            after_close.store(r.start, Relaxed);
            seq.finish(r);
        });
        thread::sleep(std::time::Duration::from_millis(if cfg!(miri) {
            1
        } else {
            10
        }));
        assert_eq!(after_close.load(Relaxed), u64::MAX, "reserved while closed");
        drop(closed);
        reserver.join().unwrap();
    });
    assert_eq!(after_close.into_inner(), 2);
    assert_eq!(seq.published(), 3);
}

#[test]
fn sleeping_waiters_are_woken_by_the_finisher() {
    let seq = Sequencer::new(0, 64);
    let ranges: Vec<_> = (0..4).map(|_| seq.reserve(1)).collect();
    thread::scope(|s| {
        let waiters: Vec<_> = ranges
            .iter()
            .map(|r| {
                let (seq, end) = (&seq, r.end);
                s.spawn(move || seq.wait_published(end))
            })
            .collect();
        thread::sleep(std::time::Duration::from_millis(if cfg!(miri) {
            1
        } else {
            20
        }));
        for r in ranges.iter().rev() {
            seq.finish(r.clone());
        }
        for w in waiters {
            w.join().unwrap();
        }
    });
    assert_eq!(seq.published(), 4);
}

/// A finisher wakes only the sleepers whose position it published, and
/// takes them off the list as it wakes them: the moves after it do not
/// ring for them again while they wait for a core to run on.
#[test]
fn a_move_wakes_only_the_sleepers_it_reached() {
    let t = crate::Tracker::new(0, 64);
    thread::scope(|s| {
        let waiters: Vec<_> = [2, 4]
            .into_iter()
            .map(|end| {
                let t = &t;
                s.spawn(move || t.wait_published(end))
            })
            .collect();
        while t.sleeping() != [2, 4] {
            thread::yield_now();
        }
        t.finish(0..1);
        assert_eq!(t.sleeping(), [2, 4], "nobody reached");
        t.finish(1..3);
        assert_eq!(t.sleeping(), [4], "the first woken and off the list");
        t.finish(3..4);
        assert_eq!(t.sleeping(), [0u64; 0]);
        for w in waiters {
            w.join().unwrap();
        }
    });
}

/// Each wait is counted once, by how it ended: its condition decides the
/// phase (its checks are counted), and a sleeper is woken by a move.
#[test]
fn wait_stats_count_each_wait_by_how_it_ended() {
    use crate::WaitStats;
    use crate::tracker::SPINS;
    use std::cell::Cell;

    let t = crate::Tracker::new(0, 8);
    let holds_at = |call: u32| {
        let calls = Cell::new(0);
        move || {
            calls.set(calls.get() + 1);
            calls.get() >= call
        }
    };
    t.wait_until(0, holds_at(1));
    t.wait_until(0, holds_at(SPINS));
    let stats = |spin_successes, yield_successes, sleeps| WaitStats {
        spin_successes,
        yield_successes,
        sleeps,
    };
    assert_eq!(t.wait_stats(), stats(2, 0, 0), "both within the spins");
    // One check past the spins: the first yield's (or, if even one yield
    // ran past the yielding time, the check before sleeping).
    t.wait_until(0, holds_at(SPINS + 2));
    assert_eq!(t.wait_stats(), stats(2, 1, 0));
    thread::scope(|s| {
        let waiter = s.spawn(|| t.wait_published(1));
        while t.sleeping().is_empty() {
            thread::yield_now();
        }
        t.finish(0..1);
        waiter.join().unwrap();
    });
    assert_eq!(t.wait_stats(), stats(2, 1, 1));
    t.wait_published(1); // reached: not a wait
    assert_eq!(t.wait_stats().waits(), 4);
}

#[test]
fn empty_ranges_take_nothing() {
    let seq = Sequencer::new(3, 4);
    let empty = seq.reserve(0);
    assert_eq!(empty, 3..3);
    seq.finish(empty);
    assert_eq!((seq.reserve(1), seq.published()), (3..4, 3));
}

#[test]
#[should_panic(expected = "exhausted")]
fn running_out_of_numbers_panics() {
    let seq = Sequencer::new(crate::SEQUENCE_LIMIT - 2, 4);
    let _ = seq.reserve(3);
}

#[test]
#[should_panic(expected = "the first sequence must be below 2^63")]
fn a_first_sequence_at_the_limit_is_refused() {
    let _ = Sequencer::new(crate::SEQUENCE_LIMIT, 4);
}

#[test]
#[should_panic(expected = "byte count exhausted (2^64)")]
fn running_out_of_bytes_panics() {
    let seq = Sequencer::new(0, 4);
    assert_eq!(
        seq.reserve_with_bytes(1, u64::MAX),
        Some((0..1, 0..u64::MAX))
    );
    let _ = seq.reserve_with_bytes(1, 1); // would end at 2^64
}

#[test]
fn concurrent_writers_each_see_their_own_work_published() {
    let threads = if cfg!(miri) { 2 } else { 4 };
    let per_thread = if cfg!(miri) { 20 } else { 2000 };
    let seq = Sequencer::new(0, 16);
    let done: Vec<AtomicBool> = (0..threads * per_thread)
        .map(|_| AtomicBool::new(false))
        .collect();
    thread::scope(|s| {
        for _ in 0..threads {
            let (seq, done) = (&seq, &done);
            s.spawn(move || {
                for _ in 0..per_thread {
                    let r = seq.reserve(1);
                    // Relaxed: the flags are read after the joins.
                    done[r.start as usize].store(true, Relaxed);
                    seq.finish(r.clone());
                    seq.wait_published(r.end);
                    // Everything published is done (Acquire in `published`).
                    let published = seq.published();
                    for d in &done[..published as usize] {
                        assert!(d.load(Relaxed), "published past unfinished work");
                    }
                }
            });
        }
    });
    assert_eq!(seq.published(), (threads * per_thread) as u64);
}

mod queue {
    use std::sync::Mutex;
    use std::sync::atomic::Ordering::Relaxed;
    use std::thread;

    use crate::{OrderedQueue, Sequencer};

    #[test]
    fn posts_in_any_order_drain_in_range_order_in_one_pass() {
        let q = OrderedQueue::new(10, 8);
        q.post(13..14, "d");
        q.post(11..13, "bc");
        let mut passes = Vec::new();
        assert!(q.drain(|range, pass| passes.push((range, std::mem::take(pass)))));
        assert!(passes.is_empty(), "10 is not posted");
        q.post(10..11, "a");
        q.drain(|range, pass| passes.push((range, std::mem::take(pass))));
        assert_eq!(
            passes,
            [(10..14, vec![(10..11, "a"), (11..13, "bc"), (13..14, "d")])]
        );
    }

    #[test]
    fn items_left_in_the_queue_are_dropped_with_it() {
        let counted = std::sync::Arc::new(());
        let q = OrderedQueue::new(0, 4);
        q.post(1..2, counted.clone());
        q.post(2..3, counted.clone());
        assert_eq!(std::sync::Arc::strong_count(&counted), 3);
        drop(q);
        assert_eq!(std::sync::Arc::strong_count(&counted), 1);
    }

    #[test]
    #[should_panic(expected = "beyond the queue's capacity")]
    fn a_post_into_an_occupied_slot_panics() {
        let q = OrderedQueue::new(0, 2);
        q.post(1..2, ());
        q.post(3..4, ()); // same slot as 1, not yet taken
    }

    #[test]
    #[should_panic(expected = "an empty range has nothing to post under")]
    fn posting_under_an_empty_range_panics() {
        let q = OrderedQueue::new(0, 4);
        q.post(2..2, ());
    }

    #[test]
    #[should_panic(expected = "an empty range has nothing to post under")]
    fn skipping_an_empty_range_panics() {
        let q = OrderedQueue::<()>::new(0, 4);
        q.post_skip(2..2);
    }

    #[test]
    #[should_panic(expected = "a range end too large to mark a skip")]
    fn skipping_a_range_ending_at_2_pow_63_panics() {
        let q = OrderedQueue::<()>::new((1 << 63) - 1, 4);
        q.post_skip((1 << 63) - 1..1 << 63); // in the window, but its end does not fit
    }

    #[test]
    fn concurrent_posters_drain_everything_once_in_order() {
        concurrent_posters(false);
    }

    #[test]
    fn concurrent_posters_each_see_their_own_item_taken() {
        concurrent_posters(true);
    }

    #[test]
    fn finished_ranges_nobody_posted_are_skipped() {
        let seq = Sequencer::new(0, 4);
        let q = OrderedQueue::new(0, 4);
        let logged = seq.reserve(2);
        q.post_skipping(logged.clone(), "a", seq.tracker());
        let mut passes = Vec::new();
        q.drain_until_skipping(logged.end, seq.tracker(), |range, pass| {
            passes.push((range, std::mem::take(pass)))
        });
        seq.finish(logged);
        // Far more unposted numbers than slots, in small ranges and a
        // large one.
        for n in [1, 3, 1, 9, 1] {
            let unlogged = seq.reserve(n);
            seq.finish(unlogged);
        }
        let logged = seq.reserve(1);
        q.post_skipping(logged.clone(), "b", seq.tracker());
        q.drain_until_skipping(logged.end, seq.tracker(), |range, pass| {
            passes.push((range, std::mem::take(pass)))
        });
        assert_eq!(
            passes,
            [(0..2, vec![(0..2, "a")]), (17..18, vec![(17..18, "b")])]
        );
        assert_eq!((q.taken(), q.posted()), (18, 18));
    }

    #[test]
    #[should_panic(expected = "finished before it was taken")]
    fn an_item_finished_before_it_was_taken_is_refused() {
        let seq = Sequencer::new(0, 4);
        let q = OrderedQueue::new(0, 4);
        let logged = seq.reserve(1);
        q.post(logged.clone(), ());
        seq.finish(logged); // not taken: the contract broken
        let unlogged = seq.reserve(1);
        seq.finish(unlogged);
        q.drain_until_skipping(2, seq.tracker(), |_, pass| pass.clear());
    }

    /// Writers of which some skip the queue (they only finish their
    /// range), one of them in long runs, so that posts find the posted
    /// position more than the capacity behind: every item is taken once,
    /// in order, and every logged writer returns once its item is written.
    #[test]
    fn concurrent_posters_and_skippers_drain_every_item_in_order() {
        let threads = if cfg!(miri) { 2 } else { 4 };
        let per_thread = if cfg!(miri) { 30 } else { 3000 };
        let seq = Sequencer::new(0, 16);
        let q = OrderedQueue::new(0, 16);
        // How far the drained records are written, over the skipped
        // numbers too (the handler's ranges leave them out).
        let written = crate::Tracker::new(0, 16);
        let written_to = std::sync::atomic::AtomicU64::new(0);
        let log = Mutex::new(Vec::new());
        let logged_count = std::sync::atomic::AtomicUsize::new(0);
        thread::scope(|s| {
            for t in 0..threads {
                let (seq, q, log, written, written_to, logged_count) =
                    (&seq, &q, &log, &written, &written_to, &logged_count);
                s.spawn(move || {
                    for i in 0..per_thread {
                        let range = seq.reserve(1 + i % 3);
                        // Thread 0 skips in runs of 40; the others one in 4.
                        let skip = if t == 0 { i % 50 < 40 } else { i % 4 == 3 };
                        if !skip {
                            q.post_skipping(range.clone(), (t, range.start), seq.tracker());
                            q.drain_until_skipping(range.end, seq.tracker(), |whole, pass| {
                                log.lock().unwrap().extend(pass.drain(..));
                                // Relaxed: drainers take turns under the
                                // drain, which orders them.
                                let from = written_to.swap(whole.end, Relaxed);
                                written.finish(from..whole.end);
                            });
                            assert!(q.taken() >= range.end);
                            assert!(written.published() >= range.end);
                            logged_count.fetch_add(1, Relaxed);
                        }
                        seq.finish(range);
                    }
                });
            }
        });
        let log = log.into_inner().unwrap();
        assert_eq!(log.len(), logged_count.into_inner());
        let mut next = 0;
        for (range, (_, start)) in log {
            assert_eq!(range.start, start, "an item under the wrong range");
            assert!(range.start >= next, "out of order");
            next = range.end;
        }
    }

    /// Posters that drain with `drain` (`until` false) or `drain_until`:
    /// everything is taken once, in range order.
    fn concurrent_posters(until: bool) {
        let threads = if cfg!(miri) { 2 } else { 4 };
        let per_thread = if cfg!(miri) { 20 } else { 2000 };
        let seq = Sequencer::new(0, 16);
        let q = OrderedQueue::new(0, 16);
        // As an engine's log: how far the drained records are written.
        let written = crate::Tracker::new(0, 16);
        let log = Mutex::new(Vec::new());
        thread::scope(|s| {
            for t in 0..threads {
                let (seq, q, log, written) = (&seq, &q, &log, &written);
                s.spawn(move || {
                    for i in 0..per_thread {
                        let range = seq.reserve(1 + i % 3);
                        let skip = i % 4 == 3;
                        if skip {
                            q.post_skip(range.clone());
                        } else {
                            q.post(range.clone(), (t, range.start));
                        }
                        let handle = |whole, pass: &mut Vec<_>| {
                            log.lock().unwrap().extend(pass.drain(..));
                            written.finish(whole);
                        };
                        if until {
                            q.drain_until(range.end, handle);
                            assert!(q.taken() >= range.end);
                            assert!(written.published() >= range.end);
                        } else {
                            q.drain(handle);
                        }
                        // Finished once written: reservations stay within
                        // the queue's capacity of the drained position.
                        written.wait_published(range.end);
                        seq.finish(range);
                    }
                });
            }
        });
        let log = log.into_inner().unwrap();
        // Every fourth range of each thread was skipped.
        assert_eq!(log.len(), threads * (per_thread - per_thread / 4) as usize);
        let mut next = 0;
        for (range, (_, start)) in log {
            assert_eq!(range.start, start, "an item under the wrong range");
            assert!(range.start >= next, "out of order");
            next = range.end;
        }
        assert_eq!(written.published(), seq.published(), "a range not drained");
    }
}

/// Threads reserve numbers and bytes together, some without bytes, under a
/// byte limit that one of them raises: sorted by sequence, the byte ranges
/// tile the count with no gap or overlap, and none passes the limit it was
/// reserved under.
#[test]
fn bytes_tile_in_sequence_order_under_a_raised_limit() {
    let seq = Sequencer::new(1, 64);
    seq.close().restart_bytes(100, 100 + 64 * 10);
    let threads = 4;
    let per_thread = if cfg!(miri) { 20 } else { 2_000 };
    let got: Vec<(std::ops::Range<u64>, std::ops::Range<u64>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let seq = &seq;
                s.spawn(move || {
                    let mut mine = Vec::new();
                    for i in 0..per_thread {
                        let bytes = if (t + i) % 5 == 0 { 0 } else { 1 + (t + i) % 9 };
                        let (range, reserved) = loop {
                            match seq.reserve_with_bytes(1 + i % 3, bytes) {
                                Some(r) => break r,
                                // Make room: the owner's part.
                                None => seq.raise_byte_limit(seq.reserved_bytes() + 64 * 10),
                            }
                        };
                        assert!(reserved.end <= seq.byte_limit());
                        seq.finish(range.clone());
                        mine.push((range, reserved));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut got = got;
    got.sort_by_key(|(range, _)| range.start);
    let mut at = 100;
    for (range, bytes) in &got {
        assert_eq!(bytes.start, at, "bytes of {range:?}");
        at = bytes.end;
    }
    assert_eq!(seq.reserved_bytes(), at);
}
