//! Multi-threaded stress tests with invariant checks: 32 threads, thousands
//! of writes each, sleeping on futexes with spinning and yielding off (so a
//! lost wake-up hangs, and the watchdog turns the hang into a failure).
#![cfg(not(loom))]

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use write_group::{Commit, FanOut, GroupMembers, Lead, Options, Stats, WriteError, WriteGroup};

const THREADS: usize = 32;
/// Far longer than any healthy run; only a hang gets there.
const WATCHDOG: Duration = Duration::from_secs(300);

#[derive(Debug, Default)]
struct Write {
    thread: usize,
    index: usize,
    size: usize,
    sync: bool,
    no_slowdown: bool,
    sequence: u64,
}

/// An engine stand-in that checks the group protocol's promises.
struct Engine {
    options: Options,
    /// Written with plain loads and stores by `lead`: overlapping groups would
    /// hand out a sequence number twice, which `apply` catches.
    last_sequence: AtomicU64,
    /// Published sequence: `publish` checks groups arrive contiguous and in
    /// order.
    visible: AtomicU64,
    /// How often each sequence number was applied.
    applied: Vec<AtomicU32>,
    /// Groups between `lead` and `publish` (or a failed `lead`): at most one,
    /// or two with pipelined groups; no unbatched entry may see any.
    groups_in_flight: AtomicUsize,
    /// Every third group is pipelined instead of parallel.
    pipelined: bool,
    /// Fail every group whose leader's index is a multiple of this.
    fail_every: usize,
    failed_groups: AtomicUsize,
    /// The gather window of sync writes (zero: leaders never wait).
    gather: Duration,
    /// How long `lead` sleeps for a group with a sync write: a stand-in
    /// for `fdatasync`.
    sync_sleep: Duration,
    /// Busy-wait hints in every `lead`, a stand-in for a log append: long
    /// enough that writers arrive while a group runs and groups form (a
    /// lone writer's few-nanosecond group would rarely meet another).
    lead_spins: u32,
}

impl Engine {
    fn new(options: Options, writes: usize, fail_every: usize) -> Self {
        Self {
            options,
            last_sequence: AtomicU64::new(0),
            visible: AtomicU64::new(0),
            applied: (0..=writes).map(|_| AtomicU32::new(0)).collect(),
            groups_in_flight: AtomicUsize::new(0),
            pipelined: false,
            fail_every,
            failed_groups: AtomicUsize::new(0),
            gather: Duration::ZERO,
            sync_sleep: Duration::ZERO,
            lead_spins: 64,
        }
    }
}

impl Commit<Write> for Engine {
    type Token = (u64, u64);
    type Error = usize;

    fn size(&self, write: &Write) -> usize {
        write.size
    }

    fn no_slowdown(&self, write: &Write) -> bool {
        write.no_slowdown
    }

    fn compatible(&self, leader: &Write, other: &Write) -> bool {
        leader.sync || !other.sync
    }

    fn gather_window(&self, write: &Write) -> Duration {
        if write.sync {
            self.gather
        } else {
            Duration::ZERO
        }
    }

    fn lead(&self, group: &mut GroupMembers<'_, Write>) -> Result<Lead<(u64, u64)>, usize> {
        let limit = if self.pipelined { 2 } else { 1 };
        assert!(
            // Acquire: pairs with the Release that ended the group before, so
            // its work is done.
            self.groups_in_flight.fetch_add(1, Acquire) < limit,
            "more than {limit} groups in flight"
        );
        let leader = group.leader();
        if !leader.sync {
            assert!(
                group.iter().all(|w| !w.sync),
                "a sync write joined a non-sync leader"
            );
        }
        let eighth = self.options.max_group_bytes() / 8;
        let cap = if leader.size <= eighth {
            leader.size + eighth
        } else {
            self.options.max_group_bytes()
        };
        assert!(
            group.len() == 1 || group.bytes() <= cap,
            "group of {} bytes over its cap {cap}",
            group.bytes()
        );
        assert!(group.len() <= self.options.max_group_members());
        if leader.index.is_multiple_of(self.fail_every) {
            // Relaxed: a count, read after the joins. Release on
            // `groups_in_flight`: the next group's Acquire sees this one done.
            self.failed_groups.fetch_add(1, Relaxed);
            self.groups_in_flight.fetch_sub(1, Release);
            return Err(leader.thread);
        }
        // Relaxed: only one group is ever here, which is what this checks.
        let first = self.last_sequence.load(Relaxed) + 1;
        let mut sequence = first;
        for write in group.iter_mut() {
            write.sequence = sequence;
            sequence += 1;
        }
        let last = sequence - 1;
        self.last_sequence.store(last, Relaxed);
        for _ in 0..self.lead_spins {
            std::hint::spin_loop();
        }
        if group.leader().sync && !self.sync_sleep.is_zero() {
            thread::sleep(self.sync_sleep);
        }
        let token = (first, last);
        Ok(match first % 3 {
            0 => Lead::serial(token),
            1 if self.pipelined => Lead::pipelined(token),
            _ => Lead::parallel(token),
        })
    }

    fn apply(&self, write: &mut Write, &(first, last): &(u64, u64)) {
        assert!((first..=last).contains(&write.sequence));
        // Relaxed: each sequence's count, read after the joins; the returned
        // value is checked by this thread.
        let before = self.applied[write.sequence as usize].fetch_add(1, Relaxed);
        assert_eq!(before, 0, "sequence {} applied twice", write.sequence);
    }

    fn publish(&self, (first, last): (u64, u64)) {
        for sequence in first..=last {
            // Relaxed: the write group orders every apply before publish.
            assert_eq!(
                self.applied[sequence as usize].load(Relaxed),
                1,
                "published before applied"
            );
        }
        let visible = self.visible.load(Relaxed);
        assert_eq!(first, visible + 1, "groups published out of order");
        self.visible.store(last, Release);
        self.groups_in_flight.fetch_sub(1, Release);
    }
}

/// Runs `body` on its own thread and fails if it does not finish within the
/// watchdog's time: a lost wake-up shows up as a hang.
fn with_watchdog<R: Send + 'static>(name: &str, body: impl FnOnce() -> R + Send + 'static) -> R {
    let (done, finished) = mpsc::channel();
    let worker = thread::spawn(move || {
        let result = body();
        let _ = done.send(());
        result
    });
    match finished.recv_timeout(WATCHDOG) {
        Ok(()) => worker.join().unwrap(),
        // The body panicked: report its panic.
        Err(mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
            Ok(_) => unreachable!("the body sends before it returns"),
            Err(panic) => std::panic::resume_unwind(panic),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{name}: no progress for {WATCHDOG:?}: lost wake-up?")
        }
    }
}

/// 32 threads each submit `writes` random writes; returns the stats after
/// checking that every successful write was applied exactly once and is
/// visible, and that groups were published contiguously in order.
fn hammer(options: Options, writes: usize, fail_every: usize) -> Stats {
    hammer_engine(options, writes, fail_every, |_| {})
}

/// `hammer` with an engine adjusted by `adjust`.
fn hammer_engine(
    options: Options,
    writes: usize,
    fail_every: usize,
    adjust: impl FnOnce(&mut Engine),
) -> Stats {
    let mut engine = Engine::new(options.clone(), THREADS * writes, fail_every);
    adjust(&mut engine);
    let engine = std::sync::Arc::new(engine);
    let group = std::sync::Arc::new(WriteGroup::new(options));
    let (engine2, group2) = (engine.clone(), group.clone());
    let failed_writes = with_watchdog("hammer", move || {
        thread::scope(|s| {
            let handles: Vec<_> = (0..THREADS)
                .map(|thread| {
                    let (engine, group) = (&*engine2, &*group2);
                    s.spawn(move || {
                        let mut rng = SmallRng::seed_from_u64(thread as u64);
                        let mut failed = 0;
                        let mut last_sequence = 0;
                        for index in 1..=writes {
                            let write = Write {
                                thread,
                                index,
                                size: rng.random_range(1..400),
                                sync: rng.random_ratio(1, 4),
                                ..Write::default()
                            };
                            match group.write(engine, write) {
                                Ok(write) => {
                                    assert!(
                                        write.sequence > last_sequence,
                                        "a thread's writes in order"
                                    );
                                    last_sequence = write.sequence;
                                    assert!(
                                        // Acquire: pairs with the leader's
                                        // Release of `visible`.
                                        engine.visible.load(Acquire) >= write.sequence,
                                        "returned but not visible"
                                    );
                                }
                                Err(WriteError::Group(leader_thread)) => {
                                    assert!(leader_thread < THREADS);
                                    failed += 1;
                                }
                                Err(other) => panic!("unexpected {other:?}"),
                            }
                        }
                        failed
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .sum::<usize>()
        })
    });
    let applied = engine
        .applied
        .iter()
        // Relaxed, here and below: the threads were joined.
        .filter(|count| count.load(Relaxed) == 1)
        .count();
    assert_eq!(applied as u64, engine.visible.load(Relaxed));
    assert_eq!(
        applied + failed_writes,
        THREADS * writes,
        "every write applied exactly once or failed"
    );
    assert_eq!(
        engine.last_sequence.load(Relaxed),
        engine.visible.load(Relaxed)
    );
    let stats = group.stats();
    assert_eq!(stats.members as usize, THREADS * writes);
    assert_eq!(stats.group_sizes.iter().sum::<u64>(), stats.groups);
    if fail_every < usize::MAX {
        assert!(engine.failed_groups.load(Relaxed) > 0, "the error path ran");
    }
    stats
}

/// Waiters sleep at once (a lost wake-up hangs), small groups by bytes, and
/// the tree from 4 members.
fn futex_only_options() -> Options {
    Options::new()
        .with_spin_count(0)
        .with_max_yield_usec(0)
        .with_max_group_bytes(4096)
        .with_tree_threshold(4)
}

#[test]
fn futex_only_no_lost_wakeups_every_write_once_groups_in_order() {
    let stats = hammer(futex_only_options(), 1500, 97);
    eprintln!("{stats:?} mean group {:.2}", stats.mean_group_size());
    assert!(stats.futex_sleeps > 0, "waiters slept: {stats:?}");
    assert!(stats.groups < stats.members, "groups formed: {stats:?}");
}

#[test]
fn barging_writers_lose_nothing_and_keep_order() {
    // No write gathers here, so every writer that finds a group running
    // watches for the queue to empty (a long budget, so that many do) and
    // leads at once if it does; the rest queue and sleep. Invariants as for
    // every hammer: each write once, groups in order, nothing lost.
    let barging = Options::new()
        .with_spin_count(0)
        .with_max_yield_usec(0)
        .with_barge_spins(1 << 12);
    // Whether a writer meets a running group depends on the scheduler: on
    // a loaded machine writers can run one at a time and always find the
    // queue idle (CI saw 47,591 groups for 48,000 writes and no barge).
    // Every run checks the invariants; some run must have barged.
    let mut runs = Vec::new();
    for _ in 0..10 {
        let stats = hammer(barging.clone(), 1500, 101);
        eprintln!("{stats:?} mean group {:.2}", stats.mean_group_size());
        let barged = stats.barges > 0;
        runs.push(stats);
        if barged {
            break;
        }
    }
    assert!(
        runs.iter().any(|s| s.barges > 0),
        "writers barged in, in one of {} runs: {runs:?}",
        runs.len()
    );
    let queueing = barging.with_barge_spins(0);
    let stats = hammer(queueing, 500, 101);
    assert_eq!(stats.barges, 0, "no budget, no barging: {stats:?}");
}

#[test]
fn default_waiting_with_fixed_fan_out_and_member_cap() {
    let options = Options::new()
        .with_max_group_members(12)
        .with_tree_threshold(3)
        .with_fan_out(FanOut::Fixed(3));
    hammer(options, 800, usize::MAX);
}

#[test]
fn sync_leaders_waiting_for_more_writers_lose_nothing() {
    let stats = hammer_engine(futex_only_options(), 1000, 89, |engine| {
        engine.gather = Duration::from_micros(200);
    });
    eprintln!("{stats:?} mean group {:.2}", stats.mean_group_size());
    assert!(stats.gather_waits > 0, "leaders waited: {stats:?}");
    assert!(stats.gather_timeouts <= stats.gather_waits);
}

#[test]
fn pipelined_groups_publish_in_order_and_lose_nothing() {
    for spin_count in [0, 200] {
        let options = Options::new()
            .with_spin_count(spin_count)
            .with_max_yield_usec(0)
            .with_max_group_bytes(2048)
            .with_tree_threshold(4);
        let stats = hammer_engine(options, 1500, 101, |engine| engine.pipelined = true);
        eprintln!("{stats:?} mean group {:.2}", stats.mean_group_size());
    }
}

#[test]
fn sync_writers_that_wait_share_one_group() {
    // Four writers whose group step takes 5 ms. Without waiting they settle
    // into two groups that take turns; with a window far longer than a
    // wake-up, nearly every group holds all four.
    const WRITERS: usize = 4;
    const WRITES: usize = 40;
    let mean_group = |gather: Duration| {
        let mut engine = Engine::new(Options::default(), WRITERS * WRITES, usize::MAX);
        engine.gather = gather;
        engine.sync_sleep = Duration::from_millis(5);
        let group = WriteGroup::new(Options::default());
        thread::scope(|s| {
            for thread in 0..WRITERS {
                let (engine, group) = (&engine, &group);
                s.spawn(move || {
                    for index in 1..=WRITES {
                        let write = Write {
                            thread,
                            index,
                            sync: true,
                            ..Write::default()
                        };
                        group.write(engine, write).unwrap();
                    }
                });
            }
        });
        let stats = group.stats();
        assert_eq!(stats.members as usize, WRITERS * WRITES);
        stats
    };
    let waiting = mean_group(Duration::from_millis(500));
    let eager = mean_group(Duration::ZERO);
    eprintln!(
        "mean group: waiting {:.2} ({waiting:?}), eager {:.2}",
        waiting.mean_group_size(),
        eager.mean_group_size()
    );
    assert_eq!(eager.gather_waits, 0);
    assert!(
        waiting.mean_group_size() >= 3.0,
        "groups of all four writers: {waiting:?}"
    );
    assert!(waiting.mean_group_size() > eager.mean_group_size());
}

#[test]
fn stalls_and_unbatched_entries_interleaved_with_writers() {
    let options = Options::new().with_spin_count(0).with_max_yield_usec(0);
    let writes = 600;
    let mut engine = Engine::new(options.clone(), THREADS * writes, usize::MAX);
    // Sync writes wait for more writers: a stall or an unbatched entry must
    // cut the wait short, and never hang it.
    engine.gather = Duration::from_millis(2);
    // Pipelined groups: an unbatched entry must wait for their publishes.
    engine.pipelined = true;
    let engine = std::sync::Arc::new(engine);
    let group = std::sync::Arc::new(WriteGroup::new(options));
    let (engine2, group2) = (engine.clone(), group.clone());
    let (applied_writes, stalled_writes) = with_watchdog("stall", move || {
        let (engine, group) = (&*engine2, &*group2);
        let writers_done = AtomicUsize::new(0);
        thread::scope(|s| {
            let writers_done = &writers_done;
            let handles: Vec<_> = (0..THREADS)
                .map(|thread| {
                    s.spawn(move || {
                        let (mut applied, mut stalled) = (0, 0);
                        for index in 1..=writes {
                            let no_slowdown = thread % 2 == 0;
                            let write = Write {
                                thread,
                                index,
                                size: 100,
                                sync: thread % 4 == 1,
                                no_slowdown,
                                ..Write::default()
                            };
                            match group.write(engine, write) {
                                Ok(_) => applied += 1,
                                Err(WriteError::Stalled) => {
                                    assert!(no_slowdown, "only no_slowdown writes fail on a stall");
                                    stalled += 1;
                                }
                                Err(other) => panic!("unexpected {other:?}"),
                            }
                        }
                        // Release: the background thread's Acquire count sees
                        // our writes done.
                        writers_done.fetch_add(1, Release);
                        (applied, stalled)
                    })
                })
                .collect();
            // The "engine's background thread": stalls, switches memtables.
            s.spawn(move || {
                let mut round = 0;
                // Acquire: pairs with the writers' Release.
                while writers_done.load(Acquire) < THREADS {
                    round += 1;
                    if round % 2 == 0 {
                        group.stall();
                        thread::yield_now();
                        group.release_stall();
                    } else {
                        let _entry = group.enter_unbatched();
                        assert!(
                            engine.groups_in_flight.load(Acquire) == 0,
                            "a group overlapped an unbatched entry"
                        );
                    }
                    thread::yield_now();
                }
                // Make sure nobody is left waiting on a stall.
                group.release_stall();
            });
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        })
    });
    assert_eq!(applied_writes + stalled_writes, THREADS * writes);
    // Relaxed, here and below: the threads were joined.
    assert_eq!(engine.visible.load(Relaxed) as usize, applied_writes);
    let applied = engine
        .applied
        .iter()
        .filter(|count| count.load(Relaxed) == 1)
        .count();
    assert_eq!(applied, applied_writes);
}

/// Leaders keep a plain (non-atomic) counter and a checksum in a
/// `LeaderCell`, with no lock; unbatched entries, another kind of leader,
/// check and reset a copy of it while writes run.
struct CellTally {
    tally: write_group::LeaderCell<(u64, u64)>,
    /// Writes seen by unbatched entries, when each reset the counter.
    drained: AtomicU64,
}

impl Commit<u64> for CellTally {
    type Token = ();
    type Error = ();

    fn lead(&self, group: &mut GroupMembers<'_, u64>) -> Result<Lead<()>, ()> {
        let (tally, members) = self.tally.get_with_members(group);
        for value in members.iter() {
            // Read-modify-write of plain integers: a lost update shows up
            // in the final count.
            tally.0 += 1;
            tally.1 = tally.1.wrapping_add(*value);
        }
        Ok(Lead::parallel(()))
    }
}

#[test]
fn leader_cell_counts_every_write_under_contention() {
    let writes: u64 = if cfg!(debug_assertions) {
        2_000
    } else {
        20_000
    };
    for options in [
        Options::default(),
        Options::new().with_spin_count(0).with_max_yield_usec(0),
    ] {
        let group = std::sync::Arc::new(WriteGroup::new(options));
        let commit = std::sync::Arc::new(CellTally {
            tally: group.leader_cell((0, 0)),
            drained: AtomicU64::new(0),
        });
        let (group2, commit2) = (group.clone(), commit.clone());
        with_watchdog("leader cell", move || {
            let (group, commit) = (&*group2, &*commit2);
            thread::scope(|s| {
                for thread in 0..THREADS as u64 {
                    s.spawn(move || {
                        for i in 0..writes {
                            let value = thread * writes + i;
                            assert_eq!(group.write(commit, value), Ok(value));
                        }
                    });
                }
                s.spawn(move || {
                    for _ in 0..50 {
                        let mut entry = group.enter_unbatched();
                        let tally = commit.tally.get_unbatched(&mut entry);
                        // Relaxed: only this thread writes it.
                        commit.drained.fetch_add(tally.0, Relaxed);
                        tally.0 = 0;
                        drop(entry);
                        thread::yield_now();
                    }
                });
            });
        });
        let total = THREADS as u64 * writes;
        let (count, sum) = std::sync::Arc::try_unwrap(commit)
            .ok()
            .map(|c| (c.drained.into_inner(), c.tally.into_inner()))
            .map(|(drained, (count, sum))| (drained + count, sum))
            .expect("the writers are done");
        assert_eq!(count, total, "every write counted once");
        assert_eq!(sum, (0..total).fold(0_u64, u64::wrapping_add));
        assert_eq!(group.stats().members, total);
    }
}
