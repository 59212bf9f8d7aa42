//! Key prefixes and the entry index: every read stays exact whether the
//! prefixes settle a search step or tie, with one writer or many, and as
//! the index lags behind the inserts made since its build.

use super::*;

/// Keys whose first eight bytes differ (prefixes settle the search steps)
/// and keys sharing them (every step falls back to comparing keys).
fn mixed_keys(n: u32) -> Vec<Vec<u8>> {
    shuffled(n)
        .into_iter()
        .map(|i| {
            if i % 3 == 0 {
                let mut k = b"shared8!".to_vec();
                k.extend_from_slice(&i.to_be_bytes());
                k
            } else {
                (i * 2).to_be_bytes().to_vec()
            }
        })
        .collect()
}

/// Every read of a list with key prefixes answers as the model does:
/// contains, seek, seek_for_prev, and walks both ways.
fn check_reads_against_model<C: Comparator>(list: &SkipList<C>, model: &BTreeSet<Vec<u8>>) {
    use std::ops::Bound::{Excluded, Included, Unbounded};
    assert_eq!(keys_of(list), model.iter().cloned().collect::<Vec<_>>());
    let mut c = list.cursor();
    c.seek_to_last();
    for k in model.iter().rev() {
        assert_eq!(c.key(), k.as_slice());
        c.prev();
    }
    assert!(!c.valid());
    let mut probes: Vec<Vec<u8>> = model.iter().cloned().collect();
    probes.extend(model.iter().map(|k| [k.as_slice(), b"\0"].concat()));
    probes.extend(model.iter().map(|k| k[..k.len() - 1].to_vec()));
    probes.push(Vec::new());
    probes.push(vec![0xff; 12]);
    for p in &probes {
        assert_eq!(list.contains(p), model.contains(p), "contains {p:?}");
        c.seek(p);
        let after = model
            .range::<[u8], _>((Included(p.as_slice()), Unbounded))
            .next();
        assert_eq!(
            c.valid().then(|| c.key()),
            after.map(Vec::as_slice),
            "seek {p:?}"
        );
        c.seek_for_prev(p);
        let before = model
            .range::<[u8], _>((Unbounded, Included(p.as_slice())))
            .next_back();
        assert_eq!(
            c.valid().then(|| c.key()),
            before.map(Vec::as_slice),
            "seek_for_prev {p:?}"
        );
        if c.valid() {
            c.prev();
            let earlier = model
                .range::<[u8], _>((Unbounded, Excluded(before.unwrap().as_slice())))
                .next_back();
            assert_eq!(
                c.valid().then(|| c.key()),
                earlier.map(Vec::as_slice),
                "prev {p:?}"
            );
        }
    }
    list.check_invariants().unwrap();
}

#[test]
fn key_prefixes_keep_every_read_exact() {
    let n = scaled(600, 60) as u32;
    let keys = mixed_keys(n);
    let model: BTreeSet<Vec<u8>> = keys.iter().cloned().collect();
    for options in [
        SkipListOptions::new().with_key_prefixes(true),
        SkipListOptions::new()
            .with_branching(2)
            .with_max_height(20)
            .with_key_prefixes(true),
    ] {
        let list = SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options);
        let mut hint = Splice::new();
        for (i, k) in keys.iter().enumerate() {
            let inserted = if i % 2 == 0 {
                list.insert(k)
            } else {
                list.insert_with_hint(k, &mut hint)
            };
            assert!(inserted);
        }
        assert!(!list.insert(&keys[0]), "duplicates are still rejected");
        check_reads_against_model(&list, &model);
    }
}

#[test]
fn key_prefixes_with_a_single_writer() {
    let n = scaled(400, 40) as u32;
    let keys = mixed_keys(n);
    let model: BTreeSet<Vec<u8>> = keys.iter().cloned().collect();
    let options = SkipListOptions::new()
        .with_branching(2)
        .with_max_height(20)
        .with_key_prefixes(true);
    let mut list = SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options);
    let mut writer = list.single_writer().unwrap();
    for k in &keys {
        assert!(writer.insert(&list, k));
    }
    check_reads_against_model(&list, &model);
}

#[test]
fn key_prefixes_with_a_comparator_that_has_none() {
    // A closure's `key_prefix` is 0 for every key: every step compares keys.
    let n = scaled(300, 30) as u32;
    let reverse = |a: &[u8], b: &[u8]| b.cmp(a);
    let options = SkipListOptions::new().with_key_prefixes(true);
    let list = SkipList::with_options(reverse, ConcurrentArena::new(), options);
    for i in shuffled(n) {
        assert!(list.insert(&i.to_be_bytes()));
    }
    let expected: Vec<u32> = (0..n).rev().collect();
    assert_eq!(u32_keys(&list), expected);
    let mut c = list.cursor();
    c.seek(&(n / 2).to_be_bytes());
    assert_eq!(c.key(), (n / 2).to_be_bytes());
    c.prev();
    assert_eq!(c.key(), (n / 2 + 1).to_be_bytes());
    list.check_invariants().unwrap();
}

#[test]
fn hints_name_nodes_after_the_next_one() {
    let n = scaled(3000, 200) as u32;
    let options = SkipListOptions::new()
        .with_branching(2)
        .with_max_height(20)
        .with_key_prefixes(true);
    let list = SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options);
    for i in shuffled(n) {
        assert!(list.insert(&(i * 2).to_be_bytes()));
    }
    list.check_invariants().unwrap();
    // Random inserts leave about half the hints exact (the rest name a node
    // further right): a search has the node after the next one prefetched.
    let (mut links, mut across, mut down) = (0, 0, 0);
    for level in 1..list.current_max_height() {
        let mut at = None;
        while let Some(next) = list.next_of(at, level) {
            links += 1;
            let from = at.unwrap_or(list.head);
            // SAFETY: `from` has `level`, prefixed layout.
            let hints = unsafe {
                (
                    from.hint(level, list.stride, Hint::Across),
                    from.hint(level, list.stride, Hint::Down),
                )
            };
            across += usize::from(hints.0 == list.next_of(Some(next), level));
            down += usize::from(hints.1 == list.next_of(Some(next), level - 1));
            at = Some(next);
        }
    }
    assert!(
        across * 3 >= links,
        "{across} of {links} across hints exact"
    );
    assert!(down * 3 >= links, "{down} of {links} down hints exact");
    // A hint that does not name a node after the next is caught.
    let first = list.next_of(None, 1).unwrap();
    for hint in [Hint::Across, Hint::Down] {
        // SAFETY: `first` has level 1, prefixed layout.
        let kept = unsafe { first.hint(1, list.stride, hint) };
        // SAFETY: as above.
        unsafe { first.set_hint(1, list.stride, hint, Some(first)) };
        assert_eq!(
            list.check_invariants(),
            Err(InvariantError::HintNotAfter { level: 1 })
        );
        // SAFETY: as above.
        unsafe { first.set_hint(1, list.stride, hint, kept) };
        list.check_invariants().unwrap();
    }
}

/// The entry index (prefixed layout): built once the list is large enough
/// (64 entries in debug builds), rebuilt as it doubles, and every read
/// stays exact while the index lags behind the inserts made since its
/// build, with prefixes that tie (`mixed_keys`) and with none at all.
#[test]
fn the_entry_index_keeps_every_read_exact_as_the_list_grows() {
    // Miri, slow, checks once, on one small list.
    let (n, chunks, shapes) = if cfg!(miri) { (80, 1, 1) } else { (3000, 4, 2) };
    let keys = mixed_keys(n);
    let options = [
        SkipListOptions::new().with_key_prefixes(true),
        SkipListOptions::new()
            .with_branching(2)
            .with_max_height(20)
            .with_key_prefixes(true),
    ];
    for options in &options[..shapes] {
        let list = SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), *options);
        let mut model = BTreeSet::new();
        let mut indexed = Vec::new();
        for chunk in keys.chunks(keys.len() / chunks) {
            for k in chunk {
                assert!(list.insert(k));
                model.insert(k.clone());
            }
            check_reads_against_model(&list, &model);
            indexed.push(list.indexed_nodes());
        }
        assert!(indexed.windows(2).all(|w| w[0] <= w[1]), "{indexed:?}");
        // (Miri's lists are too small for every random shape to have
        // nodes at the indexed level by then.)
        if !cfg!(miri) {
            assert!(indexed[0] > 0, "built: {indexed:?}");
            assert!(indexed[3] > indexed[0], "rebuilt: {indexed:?}");
        }
    }
}

/// With a comparator whose prefixes are all 0, every indexed node ties:
/// the index is searched by key, and reads stay exact.
#[test]
fn the_entry_index_with_prefixes_that_all_tie() {
    let n = scaled(2000, 100) as u32;
    let reverse = |a: &[u8], b: &[u8]| b.cmp(a);
    let options = SkipListOptions::new()
        .with_branching(2)
        .with_max_height(20)
        .with_key_prefixes(true);
    let list = SkipList::with_options(reverse, ConcurrentArena::new(), options);
    for i in shuffled(n) {
        assert!(list.insert(&(i * 2).to_be_bytes()));
    }
    assert!(cfg!(miri) || list.indexed_nodes() > 0);
    let mut c = list.cursor();
    for i in 0..n {
        assert!(list.contains(&(i * 2).to_be_bytes()));
        assert!(!list.contains(&(i * 2 + 1).to_be_bytes()));
        // In the reversed order, the first key at or after 2i + 1 is 2i.
        c.seek(&(i * 2 + 1).to_be_bytes());
        assert_eq!(c.key(), (i * 2).to_be_bytes());
    }
    list.check_invariants().unwrap();
}

/// Without key prefixes, or with the index turned off, none is built.
#[test]
fn no_entry_index_without_prefixes_or_when_off() {
    for options in [
        SkipListOptions::new(),
        SkipListOptions::new()
            .with_key_prefixes(true)
            .with_entry_index(false),
    ] {
        let list = SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options);
        for i in 0..scaled(1000, 100) as u32 {
            list.insert(&i.to_be_bytes());
        }
        assert_eq!(list.indexed_nodes(), 0);
    }
}
