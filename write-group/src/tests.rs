//! Unit tests of the protocol, sized to run under miri too.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::thread::{self, ThreadId};
use std::time::Duration;

use crate::{Commit, FanOut, GroupMembers, Lead, Options, UnbatchedGuard, WriteError, WriteGroup};

/// A test item: who submitted it, and flags the test commit reads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Item {
    id: usize,
    sync: bool,
    no_slowdown: bool,
    size: usize,
    panic_in_apply: bool,
    /// `compatible` panics when it tests this item against a leader's.
    panic_in_compatible: bool,
    /// `size` panics for this item, naming the thread that called it.
    panic_in_size: bool,
    /// `no_slowdown` panics for this item, naming the thread that called it.
    panic_in_no_slowdown: bool,
    applied_on: Option<ThreadId>,
    applied: usize,
}

impl Item {
    fn new(id: usize) -> Self {
        Self {
            id,
            ..Self::default()
        }
    }
}

/// Records what each step saw.
#[derive(Default)]
struct Recorder {
    parallel: bool,
    /// Return `Lead::pipelined` (takes precedence over `parallel`).
    pipelined: bool,
    /// The gather window of sync items.
    gather: Duration,
    fail_with: Option<&'static str>,
    panic_in_lead: bool,
    /// `publish` panics, naming the thread that ran it.
    panic_in_publish: bool,
    /// The ids of each group, in the order groups were led.
    groups: Mutex<Vec<Vec<usize>>>,
    published: Mutex<Vec<usize>>,
    applies: AtomicUsize,
}

impl Commit<Item> for Recorder {
    type Token = usize;
    type Error = &'static str;

    fn size(&self, item: &Item) -> usize {
        if item.panic_in_size {
            panic!(
                "size panics for {} on {:?}",
                item.id,
                thread::current().id()
            );
        }
        item.size
    }

    fn no_slowdown(&self, item: &Item) -> bool {
        if item.panic_in_no_slowdown {
            panic!(
                "no_slowdown panics for {} on {:?}",
                item.id,
                thread::current().id()
            );
        }
        item.no_slowdown
    }

    fn compatible(&self, leader: &Item, other: &Item) -> bool {
        if other.panic_in_compatible {
            panic!("compatible panics for {}", other.id);
        }
        leader.sync || !other.sync
    }

    fn gather_window(&self, item: &Item) -> Duration {
        if item.sync {
            self.gather
        } else {
            Duration::ZERO
        }
    }

    fn lead(&self, group: &mut GroupMembers<'_, Item>) -> Result<Lead<usize>, &'static str> {
        let ids: Vec<usize> = group.iter().map(|item| item.id).collect();
        assert_eq!(ids.len(), group.len());
        assert_eq!(
            group.bytes(),
            group.iter().map(|item| item.size).sum::<usize>()
        );
        assert_eq!(group.leader().id, ids[0]);
        self.groups.lock().unwrap().push(ids);
        if self.panic_in_lead {
            panic!("lead panics");
        }
        if let Some(error) = self.fail_with {
            return Err(error);
        }
        let token = group.len();
        Ok(if self.pipelined {
            Lead::pipelined(token)
        } else if self.parallel {
            Lead::parallel(token)
        } else {
            Lead::serial(token)
        })
    }

    fn apply(&self, item: &mut Item, token: &usize) {
        assert!(*token >= 1);
        item.applied += 1;
        item.applied_on = Some(thread::current().id());
        // Relaxed: a count, read after the writers are joined.
        self.applies.fetch_add(1, Relaxed);
        if item.panic_in_apply {
            panic!("apply panics for {}", item.id);
        }
    }

    fn publish(&self, token: usize) {
        self.published.lock().unwrap().push(token);
        if self.panic_in_publish {
            panic!("publish panics on {:?}", thread::current().id());
        }
    }
}

type Group = WriteGroup<Item, Recorder>;
type Outcome = thread::Result<Result<Item, WriteError<&'static str>>>;

fn quiet_options() -> Options {
    // Small waits keep miri fast; the protocol does not depend on them.
    Options::new().with_spin_count(4).with_max_yield_usec(0)
}

/// Queues `items` behind `guard` one at a time, so that their enqueue order
/// is the order given, and returns the submitting threads' handles. The
/// submitter of each item checks the item came back on its own thread.
fn queue_behind<'s>(
    s: &'s thread::Scope<'s, '_>,
    group: &'s Group,
    recorder: &'s Recorder,
    guard: &UnbatchedGuard<'_, Item, Recorder>,
    items: Vec<Item>,
) -> Vec<thread::ScopedJoinHandle<'s, (ThreadId, Outcome)>> {
    let mut handles = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        handles.push(s.spawn(move || {
            let outcome = catch_unwind(AssertUnwindSafe(|| group.write(recorder, item)));
            (thread::current().id(), outcome)
        }));
        while guard.queued() < i + 1 {
            thread::yield_now();
        }
    }
    handles
}

/// Joins the submitters, checking each write succeeded and applied once.
fn join_applied(handles: Vec<thread::ScopedJoinHandle<'_, (ThreadId, Outcome)>>) {
    for handle in handles {
        assert_eq!(handle.join().unwrap().1.unwrap().unwrap().applied, 1);
    }
}

fn ids(n: usize) -> Vec<Item> {
    (0..n).map(Item::new).collect()
}

#[test]
fn a_lone_writer_leads_a_group_of_one() {
    let group = Group::new(quiet_options());
    let recorder = Recorder::default();
    let item = group.write(&recorder, Item::new(7)).unwrap();
    assert_eq!(item.applied, 1);
    assert_eq!(item.applied_on, Some(thread::current().id()));
    assert_eq!(*recorder.groups.lock().unwrap(), vec![vec![7]]);
    assert_eq!(*recorder.published.lock().unwrap(), vec![1]);
    let stats = group.stats();
    assert_eq!(
        (stats.groups, stats.members, stats.group_sizes[0]),
        (1, 1, 1)
    );
}

#[test]
fn a_queued_group_is_led_once_in_enqueue_order_and_applied_serially() {
    let n = if cfg!(miri) { 4 } else { 12 };
    let group = Group::new(quiet_options());
    let recorder = Recorder::default();
    thread::scope(|s| {
        let guard = group.enter_unbatched();
        let handles = queue_behind(s, &group, &recorder, &guard, ids(n));
        assert_eq!(
            group.stats().groups,
            0,
            "nothing runs while the guard is held"
        );
        drop(guard);
        let leader_thread = handles[0].thread().id();
        for handle in handles {
            let (_, outcome) = handle.join().unwrap();
            let item = outcome.unwrap().unwrap();
            assert_eq!(item.applied, 1);
            assert_eq!(
                item.applied_on,
                Some(leader_thread),
                "serial: the leader applies"
            );
        }
    });
    assert_eq!(
        *recorder.groups.lock().unwrap(),
        vec![(0..n).collect::<Vec<_>>()]
    );
    assert_eq!(*recorder.published.lock().unwrap(), vec![n]);
    assert_eq!(group.stats().leader_wakeups, 0);
}

/// The wake-up count: with the tree on, the leader issues at most
/// `2 * ceil(sqrt n)` wake-ups, and every member is woken exactly once.
fn tree_wakeups(n: usize, options: Options) {
    let group = Group::new(options);
    let recorder = Recorder {
        parallel: true,
        ..Recorder::default()
    };
    thread::scope(|s| {
        let guard = group.enter_unbatched();
        let handles = queue_behind(s, &group, &recorder, &guard, ids(n));
        drop(guard);
        for handle in handles {
            let (thread, outcome) = handle.join().unwrap();
            let item = outcome.unwrap().unwrap();
            assert_eq!(item.applied, 1);
            // Parallel: each member applied its own item, so each non-leader
            // was woken at least once.
            assert_eq!(item.applied_on, Some(thread));
        }
    });
    let stats = group.stats();
    assert_eq!(
        (stats.groups, stats.members),
        (1, n as u64),
        "one group of {n}"
    );
    let ceil_sqrt = if n.isqrt().pow(2) == n {
        n.isqrt()
    } else {
        n.isqrt() + 1
    };
    let bound = 2 * ceil_sqrt;
    assert!(
        stats.leader_wakeups as usize <= bound,
        "leader woke {} > {bound}",
        stats.leader_wakeups
    );
    // Woken at least once each, and n - 1 wake-ups in all: exactly once each.
    assert_eq!(stats.leader_wakeups + stats.caller_wakeups, n as u64 - 1);
    // Relaxed: the writers were joined.
    assert_eq!(recorder.applies.load(Relaxed), n);
    assert_eq!(*recorder.published.lock().unwrap(), vec![n]);
}

#[test]
fn tree_wakeup_leader_wakes_at_most_twice_sqrt_n_and_each_member_once() {
    if cfg!(miri) {
        tree_wakeups(9, quiet_options().with_tree_threshold(3));
    } else {
        for n in [20, 32, 41] {
            tree_wakeups(n, quiet_options());
        }
    }
}

#[test]
fn fixed_fan_outs_wake_each_member_once() {
    let n = if cfg!(miri) { 7 } else { 24 };
    for stride in [2, 3, 8] {
        let group = Group::new(
            quiet_options()
                .with_tree_threshold(2)
                .with_fan_out(FanOut::Fixed(stride)),
        );
        let recorder = Recorder {
            parallel: true,
            ..Recorder::default()
        };
        thread::scope(|s| {
            let guard = group.enter_unbatched();
            let handles = queue_behind(s, &group, &recorder, &guard, ids(n));
            drop(guard);
            for handle in handles {
                let (thread, outcome) = handle.join().unwrap();
                assert_eq!(outcome.unwrap().unwrap().applied_on, Some(thread));
            }
        });
        let stats = group.stats();
        assert_eq!(
            stats.leader_wakeups + stats.caller_wakeups,
            n as u64 - 1,
            "stride {stride}"
        );
        let stride = stride.min(n);
        let expected_leader = (stride - 1) + (n - 1) / stride;
        assert_eq!(
            stats.leader_wakeups as usize, expected_leader,
            "stride {stride}"
        );
    }
}

#[test]
fn below_the_threshold_the_leader_wakes_everyone() {
    let n = if cfg!(miri) { 4 } else { 10 };
    let group = Group::new(quiet_options());
    let recorder = Recorder {
        parallel: true,
        ..Recorder::default()
    };
    thread::scope(|s| {
        let guard = group.enter_unbatched();
        let handles = queue_behind(s, &group, &recorder, &guard, ids(n));
        drop(guard);
        join_applied(handles);
    });
    let stats = group.stats();
    assert_eq!(
        (stats.leader_wakeups, stats.caller_wakeups),
        (n as u64 - 1, 0)
    );
}

#[test]
fn a_failed_lead_step_fails_every_member_and_publishes_nothing() {
    let n = if cfg!(miri) { 3 } else { 6 };
    for parallel in [false, true] {
        let group = Group::new(quiet_options());
        let recorder = Recorder {
            parallel,
            fail_with: Some("log full"),
            ..Recorder::default()
        };
        thread::scope(|s| {
            let guard = group.enter_unbatched();
            let handles = queue_behind(s, &group, &recorder, &guard, ids(n));
            drop(guard);
            for handle in handles {
                let (_, outcome) = handle.join().unwrap();
                assert_eq!(outcome.unwrap(), Err(WriteError::Group("log full")));
            }
        });
        assert_eq!(recorder.groups.lock().unwrap().len(), 1);
        // Relaxed: the writers were joined.
        assert_eq!(recorder.applies.load(Relaxed), 0);
        assert!(recorder.published.lock().unwrap().is_empty());
    }
}

#[test]
fn incompatible_writers_keep_their_order_and_wait_for_the_next_group() {
    // Non-sync leader 0 leaves the sync writers out; they lead the next group.
    let syncs = [false, true, false, true, false, true];
    let items: Vec<Item> = syncs
        .iter()
        .enumerate()
        .map(|(id, &sync)| Item {
            sync,
            ..Item::new(id)
        })
        .collect();
    let group = Group::new(quiet_options());
    let recorder = Recorder::default();
    thread::scope(|s| {
        let guard = group.enter_unbatched();
        let handles = queue_behind(s, &group, &recorder, &guard, items);
        drop(guard);
        handles
            .into_iter()
            .for_each(|h| assert_eq!(h.join().unwrap().1.unwrap().unwrap().applied, 1));
    });
    assert_eq!(
        *recorder.groups.lock().unwrap(),
        vec![vec![0, 2, 4], vec![1, 3, 5]]
    );
}

#[test]
fn member_and_byte_caps_cut_groups_in_order() {
    let group = Group::new(quiet_options().with_max_group_members(3));
    let recorder = Recorder::default();
    thread::scope(|s| {
        let guard = group.enter_unbatched();
        let handles = queue_behind(s, &group, &recorder, &guard, ids(7));
        drop(guard);
        join_applied(handles);
    });
    assert_eq!(
        *recorder.groups.lock().unwrap(),
        vec![vec![0, 1, 2], vec![3, 4, 5], vec![6]]
    );

    // A 10-byte leader caps its group at 10 + 1000 / 8 = 135 bytes.
    let group = Group::new(quiet_options().with_max_group_bytes(1000));
    let recorder = Recorder::default();
    let sizes = [10, 60, 60, 30, 10, 900, 10];
    let items = sizes
        .iter()
        .enumerate()
        .map(|(id, &size)| Item {
            size,
            ..Item::new(id)
        })
        .collect();
    thread::scope(|s| {
        let guard = group.enter_unbatched();
        let handles = queue_behind(s, &group, &recorder, &guard, items);
        drop(guard);
        join_applied(handles);
    });
    // 10+60+60 = 130 fits; +30 would not. Then 30+10 (cap 155) stops at 900;
    // the 900-byte leader caps at 1000 and takes the last 10.
    assert_eq!(
        *recorder.groups.lock().unwrap(),
        vec![vec![0, 1, 2], vec![3, 4], vec![5, 6]]
    );
}

#[test]
fn a_stall_fails_no_slowdown_writes_and_holds_the_others() {
    let group = Group::new(quiet_options());
    let recorder = Recorder::default();
    // Queued before the stall: the no_slowdown writer fails when the group
    // forms, the others are admitted.
    thread::scope(|s| {
        let guard = group.enter_unbatched();
        let items = vec![
            Item::new(0),
            Item {
                no_slowdown: true,
                ..Item::new(1)
            },
            Item::new(2),
        ];
        let handles = queue_behind(s, &group, &recorder, &guard, items);
        assert!(group.stall());
        assert!(!group.stall(), "already stalled");
        drop(guard);
        let outcomes: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().unwrap().1.unwrap())
            .collect();
        assert_eq!(outcomes[0].as_ref().unwrap().applied, 1);
        assert_eq!(outcomes[1], Err(WriteError::Stalled));
        assert_eq!(outcomes[2].as_ref().unwrap().applied, 1);
    });
    assert_eq!(*recorder.groups.lock().unwrap(), vec![vec![0, 2]]);

    // New writes: no_slowdown fails at once, the others wait for the release.
    let impatient = Item {
        no_slowdown: true,
        ..Item::new(3)
    };
    assert_eq!(group.write(&recorder, impatient), Err(WriteError::Stalled));
    thread::scope(|s| {
        let patient = s.spawn(|| group.write(&recorder, Item::new(4)));
        for _ in 0..100 {
            thread::yield_now();
        }
        assert!(!patient.is_finished(), "a stalled write waits");
        assert_eq!(recorder.groups.lock().unwrap().len(), 1);
        assert!(group.release_stall());
        assert_eq!(patient.join().unwrap().unwrap().applied, 1);
    });
    assert!(!group.release_stall(), "not stalled any more");
    assert!(!group.is_stalled());
}

#[test]
fn an_unbatched_entry_ignores_the_stall_and_waits_for_earlier_writes() {
    let group = Group::new(quiet_options());
    let recorder = Recorder::default();
    assert!(group.stall());
    let guard = group.enter_unbatched();
    assert_eq!(guard.queued(), 0);
    drop(guard);
    assert!(group.release_stall());
    thread::scope(|s| {
        let first = group.enter_unbatched();
        let handles = queue_behind(s, &group, &recorder, &first, ids(2));
        // A second entry queues behind the writers and gets in once they are done.
        let second = s.spawn(|| {
            let _entry = group.enter_unbatched();
            recorder.groups.lock().unwrap().len()
        });
        while first.queued() < 3 {
            thread::yield_now();
        }
        drop(first);
        assert_eq!(
            second.join().unwrap(),
            1,
            "the entry saw the writers' group done"
        );
        join_applied(handles);
    });
}

#[test]
fn an_apply_panic_reaches_its_own_submitter_and_the_group_completes() {
    let n = if cfg!(miri) { 3 } else { 5 };
    for parallel in [false, true] {
        let group = Group::new(quiet_options());
        let recorder = Recorder {
            parallel,
            ..Recorder::default()
        };
        let mut items = ids(n);
        items[1].panic_in_apply = true;
        thread::scope(|s| {
            let guard = group.enter_unbatched();
            let handles = queue_behind(s, &group, &recorder, &guard, items);
            drop(guard);
            for (i, handle) in handles.into_iter().enumerate() {
                let (_, outcome) = handle.join().unwrap();
                if i == 1 {
                    let panic = outcome.unwrap_err();
                    assert_eq!(
                        panic.downcast_ref::<String>().unwrap(),
                        "apply panics for 1"
                    );
                } else {
                    assert_eq!(outcome.unwrap().unwrap().applied, 1);
                }
            }
        });
        // Relaxed: the writers were joined.
        assert_eq!(recorder.applies.load(Relaxed), n);
        assert_eq!(
            *recorder.published.lock().unwrap(),
            vec![n],
            "the group is still published"
        );
        // The group is usable afterwards.
        assert_eq!(group.write(&recorder, Item::new(9)).unwrap().applied, 1);
    }
}

#[test]
fn a_lead_panic_reaches_the_leader_and_fails_the_members() {
    let group = Group::new(quiet_options());
    let recorder = Recorder {
        panic_in_lead: true,
        ..Recorder::default()
    };
    thread::scope(|s| {
        let guard = group.enter_unbatched();
        let handles = queue_behind(s, &group, &recorder, &guard, ids(3));
        drop(guard);
        for (i, handle) in handles.into_iter().enumerate() {
            let (_, outcome) = handle.join().unwrap();
            if i == 0 {
                assert_eq!(
                    *outcome.unwrap_err().downcast_ref::<&str>().unwrap(),
                    "lead panics"
                );
            } else {
                assert_eq!(outcome.unwrap(), Err(WriteError::LeaderPanicked));
            }
        }
    });
    // Relaxed: the writers were joined.
    assert_eq!(recorder.applies.load(Relaxed), 0);
    assert!(recorder.published.lock().unwrap().is_empty());
}

/// A panic in `publish` resumes on the thread that ran it, once the group is
/// complete: every other member's write returns normally, and the publish
/// turn is handed on, so later writes are not held up. A lone writer, a
/// serial group (the leader publishes) and a parallel one (the last member
/// to finish applying publishes) each take their own path there.
#[test]
fn a_publish_panic_reaches_the_thread_that_ran_it_and_the_group_completes() {
    let n = if cfg!(miri) { 3 } else { 5 };
    let group = Group::new(quiet_options());
    let recorder = Recorder {
        panic_in_publish: true,
        ..Recorder::default()
    };
    let panic = catch_unwind(AssertUnwindSafe(|| group.write(&recorder, Item::new(0))))
        .expect_err("the lone writer ran publish");
    assert_eq!(
        *panic.downcast_ref::<String>().unwrap(),
        format!("publish panics on {:?}", thread::current().id())
    );
    assert_eq!(*recorder.published.lock().unwrap(), vec![1]);
    let calm = Recorder::default();
    assert_eq!(group.write(&calm, Item::new(1)).unwrap().applied, 1);
    for parallel in [false, true] {
        let group = Group::new(quiet_options());
        let recorder = Recorder {
            parallel,
            panic_in_publish: true,
            ..Recorder::default()
        };
        thread::scope(|s| {
            let guard = group.enter_unbatched();
            let handles = queue_behind(s, &group, &recorder, &guard, ids(n));
            drop(guard);
            let leader_thread = handles[0].thread().id();
            let mut panicked = Vec::new();
            for handle in handles {
                let (thread, outcome) = handle.join().unwrap();
                match outcome {
                    Ok(write) => assert_eq!(write.unwrap().applied, 1),
                    Err(panic) => {
                        assert_eq!(
                            *panic.downcast_ref::<String>().unwrap(),
                            format!("publish panics on {thread:?}"),
                            "the panic resumed on the thread that ran publish"
                        );
                        panicked.push(thread);
                    }
                }
            }
            assert_eq!(panicked.len(), 1, "one publish, one panic");
            if !parallel {
                assert_eq!(panicked, [leader_thread], "serial: the leader publishes");
            }
        });
        // Relaxed: the writers were joined.
        assert_eq!(recorder.applies.load(Relaxed), n);
        assert_eq!(*recorder.published.lock().unwrap(), vec![n]);
        // The publish turn was handed on: the next group leads and returns.
        assert_eq!(group.write(&calm, Item::new(9)).unwrap().applied, 1);
    }
}

/// Item 0, whose `size` panics, and item 1, whose `no_slowdown` does, each
/// with the callback's name.
fn panicking_before_they_queue() -> [(Item, &'static str); 2] {
    let in_size = Item {
        panic_in_size: true,
        ..Item::new(0)
    };
    let in_no_slowdown = Item {
        panic_in_no_slowdown: true,
        ..Item::new(1)
    };
    [(in_size, "size"), (in_no_slowdown, "no_slowdown")]
}

/// A panic in `size` or `no_slowdown` resumes on the submitting writer's
/// thread before it queues (the `Commit` docs, "Panics"): the writer never
/// becomes part of a group, so no leader waits for it or leads its item,
/// and the group goes on taking writes, queued ones included. The queue is
/// held while the writer submits, so it takes the queued path, where both
/// are called; had it queued, the held queue would show it. (A writer that
/// finds the queue idle: the next test.)
#[test]
fn a_size_or_no_slowdown_panic_reaches_its_submitter_before_it_queues() {
    let group = Group::new(quiet_options());
    let recorder = Recorder::default();
    for (item, callback) in panicking_before_they_queue() {
        let id = item.id;
        thread::scope(|s| {
            let guard = group.enter_unbatched();
            let writer = s.spawn(|| {
                let outcome = catch_unwind(AssertUnwindSafe(|| group.write(&recorder, item)));
                (thread::current().id(), outcome)
            });
            // Until the writer has panicked, or queued behind the guard
            // (where it would wait for the guard to go).
            while !writer.is_finished() && guard.queued() == 0 {
                thread::yield_now();
            }
            let queued = guard.queued();
            drop(guard);
            let (thread, outcome) = writer.join().unwrap();
            assert_eq!(queued, 0, "the writer queued before {callback} panicked");
            let panic = outcome.expect_err("the callback panicked");
            assert_eq!(
                *panic.downcast_ref::<String>().unwrap(),
                format!("{callback} panics for {id} on {thread:?}"),
                "the panic resumed on the submitter's thread"
            );
        });
        // No group led, applied or published the item.
        assert!(recorder.groups.lock().unwrap().is_empty());
        // Relaxed: the writer was joined.
        assert_eq!(recorder.applies.load(Relaxed), 0);
        assert!(recorder.published.lock().unwrap().is_empty());
        assert_eq!((group.stats().groups, group.stats().members), (0, 0));
    }
    // Later writes go through, alone and queued.
    assert_eq!(group.write(&recorder, Item::new(2)).unwrap().applied, 1);
    thread::scope(|s| {
        let guard = group.enter_unbatched();
        let items = (3..6).map(Item::new).collect();
        let handles = queue_behind(s, &group, &recorder, &guard, items);
        drop(guard);
        join_applied(handles);
    });
    let mut seen: Vec<usize> = recorder.groups.lock().unwrap().concat();
    seen.sort_unstable();
    assert_eq!(seen, [2, 3, 4, 5]);
}

/// The same for a writer that finds the queue idle (the path with no
/// node): `size` and `no_slowdown` are asked before it takes the lead, so a
/// panic in either leaves no lead behind to hold every later writer. (It
/// did: `size` was asked once the lone writer led, and the next write
/// waited for ever.)
#[test]
fn a_size_or_no_slowdown_panic_of_a_lone_writer_leaves_the_group_idle() {
    // Shared with unscoped threads: a write left waiting would keep a
    // scope from ending, and the test from failing.
    let group = std::sync::Arc::new(Group::new(quiet_options()));
    let recorder = std::sync::Arc::new(Recorder::default());
    for (item, callback) in panicking_before_they_queue() {
        let id = item.id;
        let panic = catch_unwind(AssertUnwindSafe(|| group.write(&recorder, item)))
            .expect_err("the callback panicked");
        assert_eq!(
            *panic.downcast_ref::<String>().unwrap(),
            format!("{callback} panics for {id} on {:?}", thread::current().id())
        );
        let (done, written) = std::sync::mpsc::channel();
        let (group, recorder) = (group.clone(), recorder.clone());
        let writer = thread::spawn(move || {
            let applied = group.write(&recorder, Item::new(10 + id)).unwrap().applied;
            done.send(applied).unwrap();
        });
        let applied = written
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("the write after the {callback} panic is stuck"));
        assert_eq!(applied, 1);
        writer.join().unwrap();
    }
    assert_eq!(*recorder.groups.lock().unwrap(), vec![vec![10], vec![11]]);
}

/// A panic in `compatible` resumes on the leader's thread once its own
/// write completed, and the writer it was testing is treated as
/// incompatible: left out of the group, then written in a group of its
/// own, not lost, while the writers after it still join the leader's.
#[test]
fn a_compatible_panic_reaches_the_leader_and_excludes_the_writer_tested() {
    let group = Group::new(quiet_options());
    let recorder = Recorder::default();
    let mut items = ids(3);
    items[1].panic_in_compatible = true;
    thread::scope(|s| {
        let guard = group.enter_unbatched();
        let handles = queue_behind(s, &group, &recorder, &guard, items);
        drop(guard);
        for (i, handle) in handles.into_iter().enumerate() {
            let (_, outcome) = handle.join().unwrap();
            if i == 0 {
                assert_eq!(
                    *outcome.unwrap_err().downcast_ref::<String>().unwrap(),
                    "compatible panics for 1"
                );
            } else {
                assert_eq!(outcome.unwrap().unwrap().applied, 1);
            }
        }
    });
    // The leader's group went on without writer 1, which led its own next.
    assert_eq!(*recorder.groups.lock().unwrap(), vec![vec![0, 2], vec![1]]);
    // Relaxed: the writers were joined.
    assert_eq!(recorder.applies.load(Relaxed), 3, "the leader's item too");
    assert_eq!(*recorder.published.lock().unwrap(), vec![2, 1]);
}

#[test]
fn concurrent_writers_each_apply_once_with_and_without_sleeping() {
    let (threads, writes) = if cfg!(miri) { (3, 6) } else { (8, 300) };
    let configs = [
        Options::new()
            .with_spin_count(0)
            .with_max_yield_usec(0)
            .with_tree_threshold(2),
        Options::new()
            .with_tree_threshold(3)
            .with_fan_out(FanOut::Fixed(2)),
    ];
    for options in configs {
        let group = Group::new(options);
        for parallel in [false, true] {
            let recorder = Recorder {
                parallel,
                ..Recorder::default()
            };
            thread::scope(|s| {
                for t in 0..threads {
                    let (group, recorder) = (&group, &recorder);
                    s.spawn(move || {
                        for i in 0..writes {
                            let item = group.write(recorder, Item::new(t * writes + i)).unwrap();
                            assert_eq!(item.applied, 1);
                        }
                    });
                }
            });
            let mut seen: Vec<usize> = recorder.groups.lock().unwrap().concat();
            seen.sort_unstable();
            assert_eq!(seen, (0..threads * writes).collect::<Vec<_>>());
            // Relaxed: the writers were joined.
            assert_eq!(recorder.applies.load(Relaxed), threads * writes);
        }
    }
}

#[test]
fn pipelined_and_gathering_writers_apply_once_and_publish_in_lead_order() {
    // Runs the early hand-off of pipelined groups of one, and the leader's
    // walk of the queue while it waits for sync writers, under miri too.
    let (threads, writes) = if cfg!(miri) { (3, 6) } else { (8, 300) };
    let recorder = Recorder {
        pipelined: true,
        gather: Duration::from_millis(1),
        ..Recorder::default()
    };
    let group = Group::new(quiet_options());
    thread::scope(|s| {
        for t in 0..threads {
            let (group, recorder) = (&group, &recorder);
            s.spawn(move || {
                for i in 0..writes {
                    let mut item = Item::new(t * writes + i);
                    item.sync = i % 2 == 0;
                    let item = group.write(recorder, item).unwrap();
                    assert_eq!(item.applied, 1);
                }
            });
        }
    });
    let groups = recorder.groups.lock().unwrap();
    let mut seen: Vec<usize> = groups.concat();
    seen.sort_unstable();
    assert_eq!(seen, (0..threads * writes).collect::<Vec<_>>());
    // Relaxed: the writers were joined.
    assert_eq!(recorder.applies.load(Relaxed), threads * writes);
    // Each token is its group's size: publishes came in the order the
    // groups were led.
    let led: Vec<usize> = groups.iter().map(Vec::len).collect();
    assert_eq!(*recorder.published.lock().unwrap(), led);
}

mod items;
