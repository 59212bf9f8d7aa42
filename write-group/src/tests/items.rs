//! The values a group's writers and leaders own: a leader's cell, counted
//! without a lock, and each writer's item, dropped when its write fails and
//! updated where it stands when it is written in place.

use super::*;

/// Counts writes in a `LeaderCell`, without a lock.
struct CellCounter {
    writes: crate::LeaderCell<usize>,
    groups: crate::LeaderCell<Vec<usize>>,
}

impl Commit<usize> for CellCounter {
    type Token = ();
    type Error = ();

    fn lead(&self, group: &mut GroupMembers<'_, usize>) -> Result<Lead<()>, ()> {
        let len = group.len();
        *self.writes.get(group) += len;
        let (sizes, members) = self.groups.get_with_members(group);
        assert_eq!(members.iter().count(), len);
        sizes.push(len);
        Ok(Lead::parallel(()))
    }
}

#[test]
fn a_leader_cell_counts_every_write_without_a_lock() {
    let group = WriteGroup::new(quiet_options());
    let counter = CellCounter {
        writes: group.leader_cell(0),
        groups: crate::LeaderCell::new(&group, Vec::new()),
    };
    let (threads, per_thread) = if cfg!(miri) { (3, 5) } else { (4, 200) };
    thread::scope(|s| {
        for t in 0..threads {
            let (group, counter) = (&group, &counter);
            s.spawn(move || {
                for i in 0..per_thread {
                    assert_eq!(group.write(counter, t * 1000 + i), Ok(t * 1000 + i));
                }
            });
        }
    });
    let mut guard = group.enter_unbatched();
    assert_eq!(
        *counter.writes.get_unbatched(&mut guard),
        threads * per_thread
    );
    *counter.writes.get_unbatched(&mut guard) = 0;
    drop(guard);
    let CellCounter { mut writes, groups } = counter;
    assert_eq!(*writes.get_mut(), 0);
    let sizes = groups.into_inner();
    assert_eq!(sizes.iter().sum::<usize>(), threads * per_thread);
    let stats = group.stats();
    assert_eq!(sizes.len() as u64, stats.groups);
    assert_eq!(stats.members, (threads * per_thread) as u64);
}

#[test]
fn a_leader_cell_of_another_group_panics() {
    let group = WriteGroup::new(quiet_options());
    let other: WriteGroup<usize, CellCounter> = WriteGroup::new(quiet_options());
    let counter = CellCounter {
        writes: other.leader_cell(0),
        groups: group.leader_cell(Vec::new()),
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| group.write(&counter, 1)));
    let panic = outcome.expect_err("the lead step borrowed another group's cell");
    let message = panic
        .downcast_ref::<String>()
        .expect("a formatted panic message");
    assert!(message.contains("LeaderCell of write group"), "{message}");
    // The panic in `lead` left nothing stuck: the group still works once the
    // cell is its own.
    let counter = CellCounter {
        writes: group.leader_cell(0),
        groups: group.leader_cell(Vec::new()),
    };
    assert_eq!(group.write(&counter, 2), Ok(2));
    assert_eq!(counter.writes.into_inner(), 1);
    // An unbatched guard of another group is refused too.
    let mut guard = other.enter_unbatched();
    let cell = group.leader_cell(5_u32);
    let refused = catch_unwind(AssertUnwindSafe(|| *cell.get_unbatched(&mut guard)));
    assert!(refused.is_err());
    drop(guard);
    assert_ne!(group.id(), other.id());
}

/// `get_with_members` checks its proof of leadership as `get` does: the
/// cell of another write group, whose own leader may be using it at this
/// moment, is refused with a panic before any borrow of it is handed out,
/// and the group goes on once its cells are its own.
#[test]
fn get_with_members_refuses_the_members_of_another_group() {
    struct Appender(crate::LeaderCell<Vec<usize>>);

    impl Commit<usize> for Appender {
        type Token = ();
        type Error = ();

        fn lead(&self, group: &mut GroupMembers<'_, usize>) -> Result<Lead<()>, ()> {
            let (log, members) = self.0.get_with_members(group);
            log.extend(members.iter().copied());
            Ok(Lead::serial(()))
        }
    }

    let group = WriteGroup::new(quiet_options());
    let other: WriteGroup<usize, Appender> = WriteGroup::new(quiet_options());
    let foreign = Appender(other.leader_cell(Vec::new()));
    let outcome = catch_unwind(AssertUnwindSafe(|| group.write(&foreign, 1)));
    let panic = outcome.expect_err("the lead step borrowed another group's cell");
    let message = panic
        .downcast_ref::<String>()
        .expect("a formatted panic message");
    assert_eq!(
        *message,
        format!(
            "LeaderCell of write group {} borrowed with a proof of leadership of write group {}",
            other.id(),
            group.id()
        )
    );
    assert!(
        foreign.0.into_inner().is_empty(),
        "the cell was not reached"
    );
    let own = Appender(group.leader_cell(Vec::new()));
    assert_eq!(group.write(&own, 2), Ok(2));
    assert_eq!(own.0.into_inner(), [2]);
}

#[test]
fn a_leader_cell_is_sync_only_for_send_values() {
    fn assert_sync<S: Sync>() {}
    assert_sync::<crate::LeaderCell<Vec<u8>>>();
    assert_sync::<crate::LeaderCell<std::cell::Cell<u8>>>();
}

/// Fails at will, to check that a failed write's item is dropped.
struct Refuser {
    fail: bool,
    panic_in_apply: bool,
}

impl Commit<std::sync::Arc<()>> for Refuser {
    type Token = ();
    type Error = ();

    fn no_slowdown(&self, _: &std::sync::Arc<()>) -> bool {
        true
    }

    fn lead(&self, _: &mut GroupMembers<'_, std::sync::Arc<()>>) -> Result<Lead<()>, ()> {
        if self.fail {
            Err(())
        } else {
            Ok(Lead::serial(()))
        }
    }

    fn apply(&self, _: &mut std::sync::Arc<()>, (): &()) {
        assert!(!self.panic_in_apply, "apply panics on request");
    }
}

#[test]
fn a_failed_or_panicked_write_drops_its_item() {
    let group = WriteGroup::new(quiet_options());
    let item = std::sync::Arc::new(());
    let (ok, fail, panic) = (
        Refuser {
            fail: false,
            panic_in_apply: false,
        },
        Refuser {
            fail: true,
            panic_in_apply: false,
        },
        Refuser {
            fail: false,
            panic_in_apply: true,
        },
    );
    assert!(group.stall());
    assert_eq!(group.write(&ok, item.clone()), Err(WriteError::Stalled));
    assert_eq!(std::sync::Arc::strong_count(&item), 1);
    assert!(group.release_stall());
    assert_eq!(group.write(&fail, item.clone()), Err(WriteError::Group(())));
    assert_eq!(std::sync::Arc::strong_count(&item), 1);
    assert!(catch_unwind(AssertUnwindSafe(|| group.write(&panic, item.clone()))).is_err());
    assert_eq!(std::sync::Arc::strong_count(&item), 1);
    let back = group.write(&ok, item.clone()).unwrap();
    assert_eq!(std::sync::Arc::strong_count(&item), 2);
    drop(back);
}

/// Writes in place leave each item in its submitter's frame: a queued
/// group's leader (serial) or each member (parallel) updates it through the
/// borrow, and a failed or stalled write leaves it with its submitter.
#[test]
fn writes_in_place_are_updated_where_they_stand_and_kept_on_failure() {
    let n = if cfg!(miri) { 3 } else { 6 };
    for (parallel, fail_with) in [(false, None), (true, None), (false, Some("log full"))] {
        let group = Group::new(quiet_options());
        let recorder = Recorder {
            parallel,
            fail_with,
            ..Recorder::default()
        };
        thread::scope(|s| {
            let guard = group.enter_unbatched();
            let mut handles = Vec::new();
            for id in 0..n {
                let (group, recorder) = (&group, &recorder);
                handles.push(s.spawn(move || {
                    let mut item = Item::new(id);
                    let outcome = group.write_in_place(recorder, &mut item);
                    (outcome, item, thread::current().id())
                }));
                while guard.queued() < id + 1 {
                    thread::yield_now();
                }
            }
            drop(guard);
            let leader_thread = handles[0].thread().id();
            for (id, handle) in handles.into_iter().enumerate() {
                let (outcome, item, thread) = handle.join().unwrap();
                assert_eq!(item.id, id);
                if let Some(error) = fail_with {
                    assert_eq!(outcome, Err(WriteError::Group(error)));
                    assert_eq!((item.applied, item.applied_on), (0, None));
                } else {
                    assert_eq!(outcome, Ok(()));
                    assert_eq!(item.applied, 1);
                    let applier = if parallel { thread } else { leader_thread };
                    assert_eq!(item.applied_on, Some(applier));
                }
            }
        });
        assert_eq!(recorder.groups.lock().unwrap().len(), 1);
    }
    let group = Group::new(quiet_options());
    let recorder = Recorder::default();
    let mut item = Item {
        no_slowdown: true,
        ..Item::new(7)
    };
    assert!(group.stall());
    assert_eq!(
        group.write_in_place(&recorder, &mut item),
        Err(WriteError::Stalled)
    );
    assert!(group.release_stall());
    assert_eq!(group.write_in_place(&recorder, &mut item), Ok(()));
    assert_eq!((item.id, item.applied), (7, 1));
}
