//! Unit tests; small enough for miri
//! (`MIRIFLAGS=-Zmiri-strict-provenance cargo +nightly miri test -p inline-skiplist --lib`).

use super::*;
use crate::node::Hint;
use std::collections::BTreeSet;

/// A few hundred keys natively, a few dozen under miri.
fn scaled(native: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { native }
}

/// A deterministic shuffle of `0..n` (multiplicative hashing).
fn shuffled(n: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n).collect();
    v.sort_by_key(|&i| i.wrapping_mul(0x9e37_79b1).rotate_left(7));
    v
}

/// The keys of a list of big-endian `u32`s, in list order.
fn u32_keys<C: Comparator>(list: &SkipList<C>) -> Vec<u32> {
    list.cursor()
        .map(|k| u32::from_be_bytes(k.try_into().unwrap()))
        .collect()
}

fn keys_of<C: Comparator>(list: &SkipList<C>) -> Vec<Vec<u8>> {
    list.cursor().map(<[u8]>::to_vec).collect()
}

#[test]
fn empty_list() {
    let list = SkipList::new(BytewiseComparator);
    assert!(list.is_empty());
    assert_eq!(list.len(), 0);
    assert!(!list.contains(b""));
    let mut c = list.cursor();
    assert!(!c.valid());
    c.seek(b"a");
    assert!(!c.valid());
    c.seek_for_prev(b"a");
    assert!(!c.valid());
    c.seek_to_last();
    assert!(!c.valid());
    assert_eq!(list.check_invariants().unwrap(), [0; MAX_HEIGHT]);
}

#[test]
fn branching_2_builds_about_half_as_many_nodes_per_level() {
    let n = scaled(4000, 200) as u32;
    let options = SkipListOptions::new().with_branching(2).with_max_height(20);
    let list = SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options);
    for i in shuffled(n) {
        assert!(list.insert(&i.to_be_bytes()));
    }
    assert_eq!(u32_keys(&list), (0..n).collect::<Vec<_>>());
    let counts = list.check_invariants().unwrap();
    assert_eq!(counts.len(), 20);
    assert_eq!(counts[0], n as usize);
    // About n/2 on level 1 and n/4 on level 2; a wide band, so it cannot
    // flake (branching 4 would give n/4 and n/16).
    let (half, quarter) = (n as usize / 2, n as usize / 4);
    assert!(
        (half * 7 / 10..half * 13 / 10).contains(&counts[1]),
        "{counts:?}"
    );
    if !cfg!(miri) {
        assert!(
            (quarter * 7 / 10..quarter * 13 / 10).contains(&counts[2]),
            "{counts:?}"
        );
    }
}

#[test]
fn a_list_of_height_1_is_a_sorted_linked_list() {
    let options = SkipListOptions::new().with_max_height(1);
    let list = SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options);
    for i in shuffled(scaled(200, 30) as u32) {
        assert!(list.insert(&i.to_be_bytes()));
    }
    assert_eq!(list.check_invariants().unwrap().len(), 1);
    let mut c = list.cursor();
    c.seek(&7u32.to_be_bytes());
    assert_eq!(c.key(), 7u32.to_be_bytes());
}

#[test]
#[should_panic(expected = "branching must be 2, 4, 8 or 16")]
fn a_branching_factor_of_3_is_refused() {
    let options = SkipListOptions::new().with_branching(3);
    let _ = SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options);
}

#[test]
#[should_panic(expected = "max_height must be in 1..=24")]
fn a_max_height_above_the_limit_is_refused() {
    let options = SkipListOptions::new().with_max_height(MAX_HEIGHT_LIMIT + 1);
    let _ = SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options);
}

#[test]
fn insert_contains_and_order() {
    let n = scaled(500, 60) as u32;
    let list = SkipList::new(BytewiseComparator);
    for i in shuffled(n) {
        assert!(list.insert(&i.to_be_bytes()));
    }
    assert_eq!(list.len(), n as usize);
    for i in 0..n {
        assert!(list.contains(&i.to_be_bytes()));
    }
    assert!(!list.contains(&n.to_be_bytes()));
    assert_eq!(u32_keys(&list), (0..n).collect::<Vec<_>>());
    let counts = list.check_invariants().unwrap();
    assert_eq!(counts[0], n as usize);
}

#[test]
fn duplicates_are_rejected_and_leave_the_list_unchanged() {
    let list = SkipList::new(BytewiseComparator);
    for k in [b"b".as_slice(), b"a", b"c", b""] {
        assert!(list.insert(k));
    }
    let before = keys_of(&list);
    let mut hint = Splice::new();
    assert!(!list.insert(b"a"));
    assert!(!list.insert(b""));
    assert!(!list.insert_with_hint(b"c", &mut hint));
    assert!(!list.insert_with(1, None, |e| e.copy_from_slice(b"b")));
    assert!(!list.insert_with(1, Some(&mut hint), |e| e.copy_from_slice(b"b")));
    assert_eq!(keys_of(&list), before);
    assert_eq!(list.len(), 4);
    list.check_invariants().unwrap();
}

#[test]
fn empty_and_long_keys() {
    let list = SkipList::new(BytewiseComparator);
    let long = vec![0xabu8; 5000];
    assert!(list.insert(&long));
    assert!(list.insert(b""));
    assert!(list.contains(b""));
    assert!(list.contains(&long));
    assert_eq!(keys_of(&list), [Vec::new(), long]);
}

#[test]
fn cursor_walks_both_ways() {
    let list = SkipList::new(BytewiseComparator);
    let n = scaled(200, 40) as u32;
    for i in shuffled(n) {
        list.insert(&(i * 2).to_be_bytes());
    }
    let mut c = list.cursor();
    c.seek_to_last();
    for i in (0..n).rev() {
        assert_eq!(c.key(), (i * 2).to_be_bytes());
        c.prev();
    }
    assert!(!c.valid());
    for i in 0..n {
        // Odd targets fall between entries.
        let odd = (i * 2 + 1).to_be_bytes();
        c.seek(&odd);
        if i + 1 < n {
            assert_eq!(c.key(), ((i + 1) * 2).to_be_bytes());
        } else {
            assert!(!c.valid());
        }
        c.seek_for_prev(&odd);
        assert_eq!(c.key(), (i * 2).to_be_bytes());
        c.seek(&(i * 2).to_be_bytes());
        assert_eq!(c.key(), (i * 2).to_be_bytes());
        c.seek_for_prev(&(i * 2).to_be_bytes());
        assert_eq!(c.key(), (i * 2).to_be_bytes());
    }
    c.seek_to_first();
    c.prev();
    assert!(!c.valid());
}

#[test]
#[should_panic(expected = "not on an entry")]
fn key_of_invalid_cursor_panics() {
    let list = SkipList::new(BytewiseComparator);
    let _ = list.cursor().key();
}

#[test]
#[should_panic(expected = "not on an entry")]
fn next_of_invalid_cursor_panics() {
    let list = SkipList::new(BytewiseComparator);
    list.cursor().next();
}

#[test]
#[should_panic(expected = "not on an entry")]
fn prev_of_invalid_cursor_panics() {
    let list = SkipList::new(BytewiseComparator);
    list.insert(b"a");
    let mut c = list.cursor();
    c.prev(); // runs off the front
    assert!(!c.valid());
    c.prev();
}

#[test]
fn iterator_is_fused_and_starts_where_the_cursor_is() {
    let list = SkipList::new(BytewiseComparator);
    for k in [b"a", b"b", b"c"] {
        list.insert(k);
    }
    let mut c = list.cursor();
    c.seek(b"b");
    assert_eq!(Iterator::next(&mut c), Some(b"b".as_slice()));
    assert_eq!(Iterator::next(&mut c), Some(b"c".as_slice()));
    assert_eq!(Iterator::next(&mut c), None);
    assert_eq!(Iterator::next(&mut c), None);
    let all: Vec<&[u8]> = (&list).into_iter().collect();
    assert_eq!(all, [b"a", b"b", b"c"]);
}

#[test]
fn custom_comparator_orders_the_list() {
    let reverse = |a: &[u8], b: &[u8]| b.cmp(a);
    let list = SkipList::new(reverse);
    for k in [b"a", b"c", b"b"] {
        list.insert(k);
    }
    assert_eq!(keys_of(&list), [b"c", b"b", b"a"]);
    let mut c = list.cursor();
    c.seek(b"bb"); // first entry "at or after" bb in reverse order: b
    assert_eq!(c.key(), b"b");
    // A comparator that ignores everything after the first byte treats
    // "ax" as a duplicate of "a".
    let first_byte = |a: &[u8], b: &[u8]| a.first().cmp(&b.first());
    let list = SkipList::new(first_byte);
    assert!(list.insert(b"a"));
    assert!(!list.insert(b"ax"));
    assert!(list.contains(b"ay"));
}

#[test]
fn hints_sequential_descending_and_interleaved_streams() {
    let n = scaled(600, 60) as u32;
    let list = SkipList::new(BytewiseComparator);
    let mut up = Splice::new();
    let mut down = Splice::new();
    let mut streams: Vec<Splice> = (0..4).map(|_| Splice::new()).collect();
    let mut model = BTreeSet::new();
    for i in 0..n {
        // Ascending in one region, descending in another, and four
        // interleaved ascending streams in a third.
        let a = [0u8]
            .iter()
            .chain(&i.to_be_bytes())
            .copied()
            .collect::<Vec<_>>();
        let d = [1u8]
            .iter()
            .chain(&(n - i).to_be_bytes())
            .copied()
            .collect::<Vec<_>>();
        let s = (i % 4) as usize;
        let m = [2u8, s as u8]
            .iter()
            .chain(&i.to_be_bytes())
            .copied()
            .collect::<Vec<_>>();
        assert!(list.insert_with_hint(&a, &mut up));
        assert!(list.insert_with_hint(&d, &mut down));
        assert!(list.insert_with_hint(&m, &mut streams[s]));
        model.extend([a, d, m]);
    }
    // A hint far from the key, and a duplicate through a hint.
    assert!(!list.insert_with_hint(&[0, 0, 0, 0, 0], &mut down));
    assert!(list.insert_with_hint(&[0, 0, 0, 0, 0, 0], &mut down));
    model.insert(vec![0, 0, 0, 0, 0, 0]);
    assert_eq!(keys_of(&list), model.into_iter().collect::<Vec<_>>());
    list.check_invariants().unwrap();
}

#[test]
fn a_hint_moves_between_lists_safely() {
    let a = SkipList::new(BytewiseComparator);
    let b = SkipList::new(BytewiseComparator);
    let mut hint = Splice::new();
    for i in 0u8..20 {
        assert!(a.insert_with_hint(&[i], &mut hint));
        assert!(b.insert_with_hint(&[i, i], &mut hint));
    }
    drop(a);
    // The hint last pointed into `b`; a fresh list must not follow it.
    let c = SkipList::new(BytewiseComparator);
    assert!(c.insert_with_hint(&[5], &mut hint));
    assert_eq!(keys_of(&c), [vec![5]]);
    assert_eq!(b.len(), 20);
    b.check_invariants().unwrap();
}

#[test]
fn entries_filled_in_place() {
    let list = SkipList::new(BytewiseComparator);
    let mut hint = Splice::new();
    for i in 0u16..20 {
        assert!(list.insert_with(4, Some(&mut hint), |e| {
            assert_eq!(e, &[0; 4], "the bytes start zeroed");
            e[..2].copy_from_slice(&i.to_be_bytes());
            e[2..].copy_from_slice(b"vv");
        }));
    }
    // An entry whose filling panics is never inserted, and the hint is
    // still good.
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        list.insert_with(3, Some(&mut hint), |e| {
            e.copy_from_slice(b"zzz");
            panic!("encoder failed");
        })
    }));
    assert!(failed.is_err());
    assert!(!list.contains(b"zzz"));
    assert_eq!(list.len(), 20);
    assert!(list.insert_with(4, Some(&mut hint), |e| e.copy_from_slice(b"\0\x14vv")));
    assert_eq!(list.cursor().key(), [0, 0, b'v', b'v']);
    assert!(list.insert_with(0, None, |_| {}));
    assert!(list.contains(b""));
    assert_eq!(list.len(), 22);
    list.check_invariants().unwrap();
}

#[test]
#[allow(deprecated)]
fn the_deprecated_reserve_path_still_inserts() {
    let mut list = SkipList::new(BytewiseComparator);
    let mut hint = Splice::new();
    for i in 0u16..20 {
        let mut e = list.reserve(4);
        assert_eq!(&*e, &[0; 4]);
        e[..2].copy_from_slice(&i.to_be_bytes());
        e.as_mut()[2..].copy_from_slice(b"vv");
        assert_eq!(e.as_ref().len(), 4);
        assert!(list.insert_reserved_with_hint(e, &mut hint));
    }
    // A reservation that is never inserted is invisible.
    {
        let mut abandoned = list.reserve(3);
        abandoned.copy_from_slice(b"zzz");
    }
    assert!(!list.contains(b"zzz"));
    assert_eq!(list.len(), 20);
    assert_eq!(list.iter().key(), [0, 0, b'v', b'v']);
    let empty = list.reserve(0);
    assert!(format!("{empty:?}").contains("len: 0"));
    assert!(list.insert_reserved(empty));
    assert!(list.contains(b""));
    let mut w = list.single_writer().unwrap();
    assert!(list.insert_single_writer(&mut w, b"x"));
    let mut e = list.reserve(1);
    e[0] = b'y';
    assert!(list.insert_reserved_single_writer(&mut w, e));
    assert_eq!(list.len(), 23);
    list.check_invariants().unwrap();
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Reserved<'static>>();
}

#[test]
#[should_panic(expected = "belongs to another SkipList")]
#[allow(deprecated)]
fn reserved_entry_from_another_list_panics() {
    let a = SkipList::new(BytewiseComparator);
    let b = SkipList::new(BytewiseComparator);
    let e = a.reserve(1);
    b.insert_reserved(e);
}

#[test]
fn single_writer_inserts_and_rejects_duplicates() {
    let mut list = SkipList::new(BytewiseComparator);
    list.insert(b"m");
    let mut w = list.single_writer().unwrap();
    assert!(list.single_writer().is_none());
    let n = scaled(300, 40) as u32;
    let mut model: BTreeSet<Vec<u8>> = BTreeSet::from([b"m".to_vec()]);
    for i in shuffled(n).into_iter().chain(0..n) {
        let k = i.to_be_bytes();
        assert_eq!(w.insert(&list, &k), model.insert(k.to_vec()));
    }
    assert!(w.insert_with(&list, 1, |e| {
        assert_eq!(e, [0]);
        e.copy_from_slice(b"z");
    }));
    model.insert(b"z".to_vec());
    assert!(!w.insert(&list, b"m"));
    assert!(!w.insert_with(&list, 1, |e| e.copy_from_slice(b"z")));
    assert_eq!(keys_of(&list), model.into_iter().collect::<Vec<_>>());
    list.check_invariants().unwrap();
}

#[test]
#[should_panic(expected = "has a SingleWriter")]
fn concurrent_insert_on_a_single_writer_list_panics() {
    let mut list = SkipList::new(BytewiseComparator);
    let _w = list.single_writer().unwrap();
    list.insert(b"k");
}

#[test]
#[should_panic(expected = "belongs to another SkipList")]
fn a_single_writer_token_is_bound_to_its_list() {
    let mut a = SkipList::new(BytewiseComparator);
    let mut b = SkipList::new(BytewiseComparator);
    let mut wa = a.single_writer().unwrap();
    let _wb = b.single_writer().unwrap();
    wa.insert(&b, b"k");
}

/// `SingleWriter::insert_with` checks its token as `insert` does: the
/// token's splice holds nodes of its own list, which must never be linked
/// into another list (whose nodes would then point into a foreign arena).
#[test]
#[should_panic(expected = "belongs to another SkipList")]
fn a_single_writer_token_is_bound_to_its_list_when_filling_in_place() {
    let mut a = SkipList::new(BytewiseComparator);
    let mut b = SkipList::new(BytewiseComparator);
    let mut wa = a.single_writer().unwrap();
    let _wb = b.single_writer().unwrap();
    assert!(wa.insert(&a, b"m"));
    wa.insert_with(&b, 1, |buf| buf.copy_from_slice(b"k"));
}

#[test]
#[should_panic(expected = "has a SingleWriter")]
fn a_fill_insert_on_a_single_writer_list_panics() {
    let mut list = SkipList::new(BytewiseComparator);
    let _w = list.single_writer().unwrap();
    list.insert_with(1, None, |_| unreachable!("checked before the filling"));
}

#[test]
fn arc_cursor_outlives_the_borrow() {
    let list = Arc::new(SkipList::new(BytewiseComparator));
    for k in [b"a", b"b", b"c"] {
        list.insert(k);
    }
    let mut c = list.cursor_arc();
    drop(list);
    assert_eq!(c.key(), b"a");
    c.seek_to_last();
    assert_eq!(c.key(), b"c");
    c.prev();
    assert_eq!(c.key(), b"b");
    let d = c.clone();
    c.next();
    c.next();
    assert!(!c.valid());
    assert_eq!(d.key(), b"b");
    c.seek_for_prev(b"bz");
    assert_eq!(c.key(), b"b");
    c.seek(b"bz");
    assert_eq!(c.key(), b"c");
    c.seek_to_first();
    assert_eq!(c.key(), b"a");
    assert_eq!(c.get_ref().len(), 3);
}

#[test]
fn concurrent_inserts_and_a_reader() {
    // Under miri this checks the publication orderings for data races on
    // the key bytes.
    let per_thread = scaled(2000, 30) as u32;
    let threads = 3u32;
    let list = Arc::new(SkipList::new(BytewiseComparator));
    std::thread::scope(|s| {
        for t in 0..threads {
            let list = &list;
            s.spawn(move || {
                let mut hint = Splice::new();
                for i in 0..per_thread {
                    // Every key twice across threads: exactly one wins.
                    let k = (i * threads + t) / 2;
                    let bytes = k.to_be_bytes();
                    if i % 2 == 0 {
                        list.insert(&bytes);
                    } else {
                        list.insert_with_hint(&bytes, &mut hint);
                    }
                }
            });
        }
        let list = &list;
        s.spawn(move || {
            for _ in 0..3 {
                let keys: Vec<&[u8]> = list.cursor().collect();
                assert!(keys.windows(2).all(|w| w[0] < w[1]));
            }
        });
    });
    let expected: BTreeSet<u32> = (0..per_thread * threads).map(|x| x / 2).collect();
    assert_eq!(list.len(), expected.len());
    let got: Vec<u32> = list
        .cursor()
        .map(|k| u32::from_be_bytes(k.try_into().unwrap()))
        .collect();
    assert_eq!(got, expected.into_iter().collect::<Vec<_>>());
    list.check_invariants().unwrap();
}

#[test]
fn levels_thin_out_by_the_branching_factor() {
    let n = scaled(20_000, 200);
    let list = SkipList::new(BytewiseComparator);
    for i in 0..n as u32 {
        list.insert(&i.to_be_bytes());
    }
    let counts = list.check_invariants().unwrap();
    assert_eq!(counts[0], n);
    if !cfg!(miri) {
        let ratio = counts[1] as f64 / counts[0] as f64;
        assert!((0.2..0.3).contains(&ratio), "level 1 / level 0 = {ratio}");
    }
    assert!(counts.windows(2).all(|w| w[0] >= w[1]));
}

#[test]
fn memory_usage_counts_nodes() {
    let list = SkipList::new(BytewiseComparator);
    let empty = list.memory_usage();
    for i in 0u32..50 {
        let mut k = [0u8; 100];
        k[..4].copy_from_slice(&i.to_be_bytes());
        list.insert(&k);
    }
    // At least the key bytes, a link and the length of each node.
    assert!(list.memory_usage() >= empty + 50 * (100 + 8 + 4));
}

#[test]
fn list_and_cursors_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<SkipList>();
    check::<Cursor<&'static SkipList>>();
    check::<ArcCursor>();
    check::<Splice>();
    check::<SingleWriter>();
}

#[test]
fn debug_output() {
    let list = SkipList::new(BytewiseComparator);
    list.insert(b"k");
    assert!(format!("{list:?}").contains("len: 1"));
    assert!(format!("{:?}", list.cursor()).contains("107")); // b'k'
    assert_eq!(
        InvariantError::MissingBelow { level: 3 }.to_string(),
        "a node of level 3 is missing from the level below"
    );
}

mod prefixes;
