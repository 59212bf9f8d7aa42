//! Loom models of the insert protocol on tiny lists.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release -p inline-skiplist --test loom`.
//!
//! Under loom, node heights alternate 2, 1, 2, ... in each thread (see
//! `thread_state.rs`), so the first insert of every thread links two levels:
//! the models cover level-1 CAS races and the relaxed `max_height` raise.
#![cfg(loom)]

use arena::ConcurrentArena;
use inline_skiplist::{BytewiseComparator, SkipList, SkipListOptions, Splice};
use loom::thread;
use std::sync::Arc;

fn keys(list: &SkipList) -> Vec<Vec<u8>> {
    list.cursor().map(<[u8]>::to_vec).collect()
}

/// What a concurrent reader may see: a sorted subset of the final keys that
/// contains every key inserted before it started.
fn check_reader_view(seen: &[Vec<u8>], before: &[&[u8]], all: &[&[u8]]) {
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "unsorted: {seen:?}");
    for k in seen {
        assert!(all.contains(&k.as_slice()), "unknown key {k:?}");
    }
    for k in before {
        assert!(seen.iter().any(|s| s == k), "lost {k:?} in {seen:?}");
    }
}

/// A list with key prefixes beside the links (so with an entry index).
fn prefixed_list() -> Arc<SkipList> {
    let options = SkipListOptions::new().with_key_prefixes(true);
    Arc::new(SkipList::with_options(
        BytewiseComparator,
        ConcurrentArena::new(),
        options,
    ))
}

/// A thread per key, each inserting its key into `list`.
fn spawn_inserters(
    list: &Arc<SkipList>,
    keys: [&'static [u8; 1]; 2],
) -> Vec<thread::JoinHandle<()>> {
    keys.into_iter()
        .map(|k| {
            let list = Arc::clone(list);
            thread::spawn(move || assert!(list.insert(k)))
        })
        .collect()
}

/// Two inserters race for the same gap (both CAS the head's level-0 and
/// level-1 links away from "m", then race again at level 0) while the main
/// thread reads with every kind of cursor move.
#[test]
fn two_inserters_and_a_reader() {
    loom::model(|| {
        let list = Arc::new(SkipList::new(BytewiseComparator));
        assert!(list.insert(b"m"));
        let inserters: Vec<_> = [[b"b", b"d"], [b"c", b"e"]]
            .into_iter()
            .map(|ks| {
                let list = Arc::clone(&list);
                thread::spawn(move || {
                    for k in ks {
                        assert!(list.insert(k));
                    }
                })
            })
            .collect();

        let all: [&[u8]; 5] = [b"b", b"c", b"d", b"e", b"m"];
        check_reader_view(&keys(&list), &[b"m"], &all);
        let mut cursor = list.cursor();
        cursor.seek(b"a");
        assert!(all.contains(&cursor.key()));
        cursor.seek_to_last();
        assert_eq!(cursor.key(), b"m");
        cursor.prev();
        if cursor.valid() {
            assert!(all[..4].contains(&cursor.key()));
        }
        cursor.seek_for_prev(b"z");
        assert_eq!(cursor.key(), b"m");
        assert!(list.contains(b"m"));

        for t in inserters {
            t.join().unwrap();
        }
        assert_eq!(keys(&list), all);
        assert_eq!(list.len(), 5);
        let counts = list.check_invariants().unwrap();
        assert_eq!(counts[0], 5);
    });
}

/// With key prefixes beside the links: two inserters race for the head's
/// level-1 link (their first nodes have two levels), each writing the
/// prefix after its CAS, while the reader's seeks and `prev` step down on
/// the prefixes it reads. (Smaller than the model above: the prefix slots
/// add atomics for loom to interleave.)
#[test]
fn key_prefixes_two_inserters_and_a_reader() {
    loom::model(|| {
        let list = prefixed_list();
        assert!(list.insert(b"m"));
        let inserters = spawn_inserters(&list, [b"b", b"d"]);

        let mut cursor = list.cursor();
        cursor.seek(b"c");
        assert!([b"d".as_slice(), b"m"].contains(&cursor.key()));
        cursor.seek_for_prev(b"z");
        assert_eq!(cursor.key(), b"m");
        cursor.prev();
        if cursor.valid() {
            assert!([b"b".as_slice(), b"d"].contains(&cursor.key()));
        }
        assert!(list.contains(b"m"));

        for t in inserters {
            t.join().unwrap();
        }
        assert_eq!(keys(&list), [b"b".as_slice(), b"d", b"m"]);
        list.check_invariants().unwrap();
    });
}

/// Key prefixes under a single writer: release stores of link, then
/// prefix; a reader's seek meanwhile finds what was published.
#[test]
fn key_prefixes_single_writer_and_a_reader() {
    loom::model(|| {
        let options = SkipListOptions::new().with_key_prefixes(true);
        let mut list = SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options);
        let mut writer = list.single_writer().unwrap();
        let list = Arc::new(list);
        let reader = {
            let list = Arc::clone(&list);
            thread::spawn(move || {
                let mut cursor = list.cursor();
                cursor.seek(b"a");
                if cursor.valid() {
                    assert!([b"a".as_slice(), b"b"].contains(&cursor.key()));
                }
                cursor.seek_for_prev(b"z");
                if cursor.valid() {
                    assert_eq!(cursor.key(), b"b");
                }
            })
        };
        assert!(writer.insert(&list, b"b"));
        assert!(writer.insert(&list, b"a"));
        reader.join().unwrap();
        assert_eq!(keys(&list), [b"a", b"b"]);
        list.check_invariants().unwrap();
    });
}

/// Two threads insert the same key: exactly one wins, and the list holds
/// it once.
#[test]
fn racing_duplicates() {
    loom::model(|| {
        let list = Arc::new(SkipList::new(BytewiseComparator));
        let racers: Vec<_> = (0..2)
            .map(|_| {
                let list = Arc::clone(&list);
                thread::spawn(move || list.insert(b"k"))
            })
            .collect();
        let wins = racers
            .into_iter()
            .map(|t| t.join().unwrap())
            .filter(|&won| won)
            .count();
        assert_eq!(wins, 1);
        assert_eq!(keys(&list), [b"k"]);
        assert_eq!(list.len(), 1);
        list.check_invariants().unwrap();
    });
}

/// A hinted inserter and a plain one interleave around a stale hint.
#[test]
fn hinted_inserter_with_a_stale_hint() {
    loom::model(|| {
        let list = Arc::new(SkipList::new(BytewiseComparator));
        let mut hint = Splice::new();
        assert!(list.insert_with_hint(b"a", &mut hint));
        let other = {
            let list = Arc::clone(&list);
            thread::spawn(move || assert!(list.insert(b"c")))
        };
        // The hint brackets (a, end); "c" may land inside it meanwhile.
        assert!(list.insert_with_hint(b"d", &mut hint));
        other.join().unwrap();
        assert_eq!(keys(&list), [b"a".as_slice(), b"c", b"d"]);
        list.check_invariants().unwrap();
    });
}

/// The single writer publishes with release stores; a reader on another
/// thread sees a sorted prefix-closed view.
#[test]
fn single_writer_and_a_reader() {
    loom::model(|| {
        let mut list = SkipList::new(BytewiseComparator);
        let mut writer = list.single_writer().unwrap();
        let list = Arc::new(list);
        let reader = {
            let list = Arc::clone(&list);
            thread::spawn(move || {
                let seen = keys(&list);
                check_reader_view(&seen, &[], &[b"a", b"b"]);
                // "a" was linked in front of "b" after "b" was in: whoever
                // sees "a" must see "b" behind it.
                if seen.first().is_some_and(|k| k == b"a") {
                    assert_eq!(seen, [b"a", b"b"]);
                }
            })
        };
        assert!(writer.insert(&list, b"b"));
        assert!(writer.insert(&list, b"a"));
        reader.join().unwrap();
        assert_eq!(keys(&list), [b"a", b"b"]);
        list.check_invariants().unwrap();
    });
}

/// The entry index built in steps taken by different inserters: two nodes
/// of the indexed level a step (`loom_index_build_step(2)`), so the build
/// that the third insert begins is finished by the fourth, on the other
/// thread (or by neither, when the builder's lock is busy), and published
/// while the main thread seeks. The index then names nodes that other
/// threads linked, read in a step one thread took and copied in another's:
/// a search that starts from them must see them whole (the publication's
/// Release and the search's Acquire), and find what a walk from the top
/// finds. (It fails, a causality violation, with either made Relaxed.)
#[test]
fn key_prefixes_index_built_in_steps_by_two_inserters() {
    inline_skiplist::loom_index_build_step(2);
    loom::model(|| {
        let list = prefixed_list();
        // Heights 2, 1 in this thread, 2 in each inserter's: "c", "b" and
        // "d" are on the indexed level.
        for k in [b"c", b"k"] {
            assert!(list.insert(k));
        }
        let inserters = spawn_inserters(&list, [b"b", b"d"]);

        // Starts from "d" once the index holds it.
        let mut cursor = list.cursor();
        cursor.seek(b"e");
        assert_eq!(cursor.key(), b"k");

        for t in inserters {
            t.join().unwrap();
        }
        // Whatever index the steps published, every search agrees with
        // the list.
        let all: [&[u8]; 4] = [b"b", b"c", b"d", b"k"];
        assert_eq!(keys(&list), all);
        let probes: [(&[u8], &[u8]); 4] = [(b"a", b"b"), (b"c", b"c"), (b"cc", b"d"), (b"e", b"k")];
        for (probe, found) in probes {
            cursor.seek(probe);
            assert_eq!(cursor.key(), found, "seek {probe:?}");
        }
        cursor.seek_for_prev(b"j");
        assert_eq!(cursor.key(), b"d");
        list.check_invariants().unwrap();
    });
}
