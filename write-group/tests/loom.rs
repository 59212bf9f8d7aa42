//! Loom models of the write group's protocol (at most 4 threads each).
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release -p write-group --test loom`
//!
//! The test commit keeps its log in a loom `UnsafeCell` that `lead` and
//! `publish` access *without* a lock: loom reports a data race if two groups'
//! steps ever overlap or are not ordered by the protocol. Items live in the
//! writers' nodes, also loom cells, so a member touching its item while the
//! leader does is caught too.
#![cfg(loom)]

use std::sync::atomic::Ordering::{Relaxed, SeqCst};

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::AtomicUsize;
use loom::thread;
use write_group::{Commit, FanOut, GroupMembers, Lead, Options, WriteError, WriteGroup};

#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Item {
    id: usize,
    no_slowdown: bool,
    sequence: usize,
    applied: usize,
}

#[derive(Default)]
struct Log {
    /// Each group's ids, and whether it failed.
    groups: Vec<(Vec<usize>, bool)>,
    last_sequence: usize,
}

#[derive(Default)]
struct Model {
    parallel: bool,
    /// Fail the group whose leader has this id.
    fail_led_by: Option<usize>,
    /// Every write asks its leader to wait for more writers.
    gathers: bool,
    /// Groups are pipelined: a lone writer hands off before applying.
    pipelined: bool,
    /// Touched by `lead` alone, without a lock.
    log: UnsafeCell<Log>,
    /// Each published group's last sequence; touched by `publish` alone,
    /// without a lock (pipelined groups publish while the next one leads).
    published: UnsafeCell<Vec<usize>>,
    applied: AtomicUsize,
    visible: AtomicUsize,
}

// SAFETY: `log` is touched only by `lead` and `published` only by
// `publish`, each of which the write group runs one group at a time and
// orders (this is what the models check: loom reports any unordered
// access); the rest are atomics.
unsafe impl Sync for Model {}

impl Commit<Item> for Model {
    type Token = usize;
    type Error = usize;

    fn no_slowdown(&self, item: &Item) -> bool {
        item.no_slowdown
    }

    fn gather_window(&self, _: &Item) -> std::time::Duration {
        if self.gathers {
            std::time::Duration::from_millis(1)
        } else {
            std::time::Duration::ZERO
        }
    }

    fn lead(&self, group: &mut GroupMembers<'_, Item>) -> Result<Lead<usize>, usize> {
        self.log.with_mut(|log| {
            // SAFETY: see `impl Sync for Model`.
            let log = unsafe { &mut *log };
            let ids = group.iter().map(|item| item.id).collect();
            let leader = group.leader().id;
            if self.fail_led_by == Some(leader) {
                log.groups.push((ids, true));
                return Err(leader);
            }
            log.groups.push((ids, false));
            for item in group.iter_mut() {
                log.last_sequence += 1;
                item.sequence = log.last_sequence;
            }
            let last = log.last_sequence;
            Ok(if self.pipelined {
                Lead::pipelined(last)
            } else if self.parallel {
                Lead::parallel(last)
            } else {
                Lead::serial(last)
            })
        })
    }

    fn apply(&self, item: &mut Item, _last: &usize) {
        item.applied += 1;
        // Relaxed: a count, read after the joins.
        self.applied.fetch_add(1, Relaxed);
    }

    fn publish(&self, last: usize) {
        // Every item up to `last` was applied before the last finisher got
        // here: the running count's AcqRel orders the Relaxed increments
        // (and the publish turn orders the earlier groups' applies). Only a
        // pipelined later group may have applied too.
        let applied = self.applied.load(Relaxed);
        if self.pipelined {
            assert!(applied >= last, "published before every member applied");
        } else {
            assert_eq!(applied, last, "published before every member applied");
        }
        self.published.with_mut(|published| {
            // SAFETY: see `impl Sync for Model`.
            unsafe { (*published).push(last) }
        });
        self.visible.store(last, Relaxed);
    }
}

fn loom_options() -> Options {
    Options::new()
        .with_spin_count(0)
        .with_max_yield_usec(0)
        // Barging has its own model; elsewhere writers queue at once, which
        // keeps the schedules to explore few.
        .with_barge_spins(0)
}

/// Writes item `id` and checks what a returning writer may rely on.
fn write(
    group: &WriteGroup<Item, Model>,
    model: &Model,
    id: usize,
) -> Result<Item, WriteError<usize>> {
    let result = group.write(
        model,
        Item {
            id,
            ..Item::default()
        },
    );
    if let Ok(item) = &result {
        assert_eq!(item.applied, 1);
        // A returned write is published (coherence: the publish happened
        // before our completion).
        // Relaxed: coherence suffices, as said above.
        assert!(model.visible.load(Relaxed) >= item.sequence);
    }
    result
}

/// Checks the log once every writer returned: every id in exactly one group,
/// sequences dense, one publish per successful group, in order.
fn check_log(model: &Model, writers: usize) {
    model.log.with(|log| {
        // SAFETY: every writer has returned.
        let log = unsafe { &*log };
        let mut ids: Vec<usize> = log.groups.iter().flat_map(|(ids, _)| ids.clone()).collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..writers).collect::<Vec<_>>());
        let mut expected = Vec::new();
        let mut sequence = 0;
        for (ids, failed) in &log.groups {
            if !failed {
                sequence += ids.len();
                expected.push(sequence);
            }
        }
        model.published.with(|published| {
            // SAFETY: as above.
            assert_eq!(unsafe { &*published }, &expected);
        });
        // Relaxed: read after the joins.
        assert_eq!(model.applied.load(Relaxed), sequence);
    });
}

fn run_writers(model: Model, options: Options, writers: usize) {
    let group = Arc::new(WriteGroup::new(options));
    let model = Arc::new(model);
    let handles: Vec<_> = (1..writers)
        .map(|id| {
            let (group, model) = (group.clone(), model.clone());
            thread::spawn(move || write(&group, &model, id))
        })
        .collect();
    let mut results = vec![write(&group, &model, 0)];
    results.extend(handles.into_iter().map(|h| h.join().unwrap()));
    check_results(&model, &results);
    check_log(&model, writers);
}

/// Each writer's result matches its group's fate.
fn check_results(model: &Model, results: &[Result<Item, WriteError<usize>>]) {
    model.log.with(|log| {
        // SAFETY: every writer has returned.
        let log = unsafe { &*log };
        for (id, result) in results.iter().enumerate() {
            let (ids, failed) = log
                .groups
                .iter()
                .find(|(ids, _)| ids.contains(&id))
                .unwrap();
            match result {
                Ok(item) => assert!(!failed && item.id == id),
                Err(WriteError::Group(leader)) => assert!(*failed && ids[0] == *leader),
                Err(other) => panic!("unexpected {other:?}"),
            }
        }
    });
}

#[test]
fn a_leader_counts_the_queue_while_writers_join() {
    // The leader walks the queue from its head while others push onto it;
    // a stale link would send the walk through freed or null memory.
    loom::model(|| {
        let model = Model {
            gathers: true,
            ..Model::default()
        };
        run_writers(model, loom_options(), 3);
    });
}

#[test]
fn join_and_leader_hand_off() {
    loom::model(|| run_writers(Model::default(), loom_options(), 3));
}

/// `loom_options` with barging on: two looks at the queue.
fn barging_options() -> Options {
    loom_options().with_barge_spins(2)
}

#[test]
fn writers_barge_in_when_a_group_ends() {
    // Writers that find a group running watch the queue (two looks, each
    // after a yield under loom) and lead at once if it empties: their CAS
    // from an empty queue must acquire the previous group's detach as a
    // queued writer's role does, or the log cell races.
    loom::model(|| run_writers(Model::default(), barging_options(), 3));
}

#[test]
fn parallel_completion_by_the_last_finisher() {
    loom::model(|| {
        run_writers(
            Model {
                parallel: true,
                ..Model::default()
            },
            loom_options(),
            3,
        )
    });
}

#[test]
fn an_error_from_the_group_step_reaches_every_member() {
    loom::model(|| {
        let model = Model {
            fail_led_by: Some(0),
            ..Model::default()
        };
        run_writers(model, loom_options(), 3);
    });
}

#[test]
fn tree_wake_up_with_threshold_three() {
    // Three writers queue behind an unbatched entry, so they form one group
    // of 3: with a stride of 2 the leader wakes member 1 as a caller (which
    // has nobody to wake: member 3 does not exist) and member 2 itself.
    loom::model(|| {
        let options = loom_options()
            .with_tree_threshold(3)
            .with_fan_out(FanOut::Fixed(2));
        let group = Arc::new(WriteGroup::new(options));
        let model = Arc::new(Model {
            parallel: true,
            ..Model::default()
        });
        let guard = group.enter_unbatched();
        // Queueing behind the guard is covered by the other models: take one
        // schedule for it, and explore from the guard's release on.
        loom::stop_exploring();
        let mut handles = Vec::new();
        let n = 3;
        for id in 0..n {
            let (group, model) = (group.clone(), model.clone());
            handles.push(thread::spawn(move || write(&group, &model, id)));
        }
        while guard.queued() < n {
            thread::yield_now();
        }
        loom::explore();
        drop(guard);
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let stats = group.stats();
        let stride = 2.min(n);
        let leader_wakeups = (stride - 1 + (n - 1) / stride) as u64;
        assert_eq!(
            (stats.groups, stats.leader_wakeups, stats.caller_wakeups),
            (1, leader_wakeups, 0)
        );
        // Enqueue order is not fixed here (the writers race to queue), so
        // only the set of ids is checked.
        assert!(
            results
                .iter()
                .all(|r| r.as_ref().is_ok_and(|item| item.applied == 1))
        );
        check_log(&model, n);
    });
}

#[test]
fn tree_wake_up_with_a_caller_waking_a_member() {
    // Four writers race; in the executions where they form one group of 4,
    // the stride is 2: member 1 is a caller and wakes member 3. They gather,
    // since a writer that finds the queue idle and does not gather leads a
    // group of one at once.
    static CALLER_WAKEUPS_SEEN: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);
    loom::model(|| {
        let options = loom_options().with_tree_threshold(3);
        let group = Arc::new(WriteGroup::new(options));
        let model = Arc::new(Model {
            parallel: true,
            gathers: true,
            ..Model::default()
        });
        let handles: Vec<_> = (1..4)
            .map(|id| {
                let (group, model) = (group.clone(), model.clone());
                thread::spawn(move || write(&group, &model, id))
            })
            .collect();
        let mut results = vec![write(&group, &model, 0)];
        results.extend(handles.into_iter().map(|h| h.join().unwrap()));
        check_results(&model, &results);
        check_log(&model, 4);
        let stats = group.stats();
        assert_eq!(
            stats.leader_wakeups + stats.caller_wakeups,
            stats.members - stats.groups
        );
        CALLER_WAKEUPS_SEEN.fetch_add(stats.caller_wakeups as usize, SeqCst);
    });
    assert!(
        CALLER_WAKEUPS_SEEN.load(SeqCst) > 0,
        "no execution reached a caller's wake-up"
    );
}

#[test]
fn pipelined_lone_writers_overlap_and_publish_in_order() {
    loom::model(|| {
        let model = Model {
            pipelined: true,
            ..Model::default()
        };
        run_writers(model, loom_options(), 3);
    });
}

#[test]
fn an_unbatched_entry_never_overlaps_a_group() {
    unbatched_entry_model(false);
}

#[test]
fn an_unbatched_entry_waits_for_pipelined_publishes() {
    unbatched_entry_model(true);
}

fn unbatched_entry_model(pipelined: bool) {
    loom::model(move || {
        let group = Arc::new(WriteGroup::new(loom_options()));
        let model = Arc::new(Model {
            parallel: true,
            pipelined,
            ..Model::default()
        });
        let handles: Vec<_> = (0..2)
            .map(|id| {
                let (group, model) = (group.clone(), model.clone());
                thread::spawn(move || write(&group, &model, id))
            })
            .collect();
        {
            let _entry = group.enter_unbatched();
            // Unlocked access: loom reports a race if a group's lead or
            // publish is not ordered with the entry.
            model.log.with_mut(|log| {
                // SAFETY: the entry holds off every group.
                unsafe { (*log).last_sequence += 0 };
            });
            model.published.with_mut(|published| {
                // SAFETY: the entry waits for every publish.
                let published = unsafe { &mut *published };
                published.push(0);
                published.pop();
            });
        }
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        check_results(&model, &results);
        check_log(&model, 2);
    });
}

#[test]
fn a_stall_holds_or_fails_writers_and_its_release_lets_them_on() {
    loom::model(|| {
        let group = Arc::new(WriteGroup::new(loom_options()));
        let model = Arc::new(Model::default());
        assert!(group.stall());
        let patient = {
            let (group, model) = (group.clone(), model.clone());
            thread::spawn(move || write(&group, &model, 0))
        };
        let impatient = Item {
            id: 1,
            no_slowdown: true,
            ..Item::default()
        };
        assert_eq!(group.write(&model, impatient), Err(WriteError::Stalled));
        assert!(group.release_stall());
        assert!(patient.join().unwrap().is_ok());
        check_log(&model, 1);
    });
}

#[test]
fn a_stall_that_begins_while_a_writer_barges() {
    // Writer 0 leads; writer 1 (no_slowdown) may find it running and watch
    // the queue while the main thread stalls. Its barging wait may then end
    // on the stalled word, which must send it to the stall check, never to
    // a CAS expecting that word. Writer 1 succeeds (it linked first) or fails
    // with `Stalled`; the model checks every schedule for a hang, a race on
    // the log, and an applied count that matches the outcomes.
    loom::model(|| {
        let group = Arc::new(WriteGroup::new(barging_options()));
        let model = Arc::new(Model::default());
        let first = {
            let (group, model) = (group.clone(), model.clone());
            thread::spawn(move || write(&group, &model, 0))
        };
        let impatient = {
            let (group, model) = (group.clone(), model.clone());
            thread::spawn(move || {
                let item = Item {
                    id: 1,
                    no_slowdown: true,
                    ..Item::default()
                };
                group.write(&*model, item)
            })
        };
        let stalled = group.stall();
        assert!(stalled);
        let impatient = impatient.join().unwrap();
        assert!(matches!(impatient, Ok(_) | Err(WriteError::Stalled)));
        assert!(group.release_stall());
        assert!(first.join().unwrap().is_ok());
        let applied = if impatient.is_ok() { 2 } else { 1 };
        // Relaxed: read after the joins.
        assert_eq!(model.applied.load(Relaxed), applied);
    });
}

/// Counts writes in a `LeaderCell` holding a loom cell: `lead` increments it
/// with no mutex, so loom reports a race if two leaders' accesses are not
/// ordered by the hand-off.
struct CellCounter {
    count: write_group::LeaderCell<UnsafeCell<usize>>,
}

impl Commit<usize> for CellCounter {
    type Token = ();
    type Error = ();

    fn lead(&self, group: &mut GroupMembers<'_, usize>) -> Result<Lead<()>, ()> {
        let len = group.len();
        self.count.get(group).with_mut(|count| {
            // SAFETY: the `&mut` from the leader cell makes us its only user;
            // loom checks that the previous leader's access happened before.
            unsafe { *count += len };
        });
        Ok(Lead::serial(()))
    }
}

#[test]
fn leader_cell_counter_without_mutex() {
    loom::model(|| {
        let group = Arc::new(WriteGroup::new(loom_options()));
        let counter = Arc::new(CellCounter {
            count: group.leader_cell(UnsafeCell::new(0)),
        });
        let handles: Vec<_> = (0..2)
            .map(|id| {
                let (group, counter) = (group.clone(), counter.clone());
                thread::spawn(move || group.write(&*counter, id))
            })
            .collect();
        for (id, handle) in handles.into_iter().enumerate() {
            assert_eq!(handle.join().unwrap(), Ok(id));
        }
        // An unbatched entry is a leader too: it reads both increments.
        let mut entry = group.enter_unbatched();
        let count = counter.count.get_unbatched(&mut entry).with(|count| {
            // SAFETY: as in `lead`.
            unsafe { *count }
        });
        assert_eq!(count, 2);
    });
}
