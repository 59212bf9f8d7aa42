//! Property tests: a `VecMem` read through its cursors behaves like a
//! `BTreeSet` (distinct entries) or a counted `BTreeMap` (duplicates).
#![cfg(not(loom))]

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use proptest::prelude::*;
use vecmem::{BytewiseComparator, VecMem};

/// How the entries reach the memtable.
#[derive(Debug, Clone, Copy)]
enum Route {
    Serial,
    /// Writers of this many entries, dropped (not finished) for odd sizes.
    Batches(usize),
    /// Two threads, each with its own writer per batch.
    Threads(usize),
}

fn route() -> impl Strategy<Value = Route> {
    prop_oneof![
        Just(Route::Serial),
        (1usize..20).prop_map(Route::Batches),
        (1usize..20).prop_map(Route::Threads),
    ]
}

/// Keys over a small alphabet, so that seeks often hit and often miss.
fn key() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(b'a'..b'e', 0..6)
}

fn load(mem: &VecMem, entries: &[Vec<u8>], route: Route) {
    match route {
        Route::Serial => entries.iter().for_each(|e| mem.insert(e)),
        Route::Batches(size) => {
            for batch in entries.chunks(size) {
                let mut writer = mem.writer();
                batch.iter().for_each(|e| writer.insert(e));
                if size % 2 == 0 {
                    writer.finish();
                }
            }
        }
        Route::Threads(size) => std::thread::scope(|s| {
            for half in entries.chunks(entries.len().div_ceil(2).max(1)) {
                s.spawn(move || {
                    for batch in half.chunks(size) {
                        let mut writer = mem.writer();
                        batch.iter().for_each(|e| writer.insert(e));
                        writer.finish();
                    }
                });
            }
        }),
    }
}

fn scan(mem: &VecMem) -> Vec<Vec<u8>> {
    let mut cursor = mem.cursor();
    cursor.seek_to_first();
    let mut out = Vec::new();
    while cursor.valid() {
        out.push(cursor.key().to_vec());
        cursor.next();
    }
    out
}

fn scan_backwards(mem: &VecMem) -> Vec<Vec<u8>> {
    let mut cursor = mem.cursor();
    cursor.seek_to_last();
    let mut out = Vec::new();
    while cursor.valid() {
        out.push(cursor.key().to_vec());
        cursor.prev();
    }
    out.reverse();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 128 }))]

    #[test]
    fn distinct_entries_read_like_a_btreeset(
        keys in prop::collection::vec(key(), 0..200),
        targets in prop::collection::vec(key(), 1..20),
        route in route(),
        freeze in any::<bool>(),
    ) {
        let set: BTreeSet<Vec<u8>> = keys.iter().cloned().collect();
        // Distinct entries, in the generated (unsorted) order.
        let mut seen = BTreeSet::new();
        let distinct: Vec<Vec<u8>> =
            keys.into_iter().filter(|k| seen.insert(k.clone())).collect();

        let mem = VecMem::new(BytewiseComparator);
        load(&mem, &distinct, route);
        if freeze {
            mem.mark_read_only();
        }
        prop_assert_eq!(mem.len(), set.len());
        let expected: Vec<Vec<u8>> = set.iter().cloned().collect();
        prop_assert_eq!(scan(&mem), expected.clone());
        prop_assert_eq!(scan_backwards(&mem), expected);

        let mut cursor = mem.cursor();
        for target in &targets {
            cursor.seek(target);
            let want = set.range::<Vec<u8>, _>((Bound::Included(target), Bound::Unbounded)).next();
            let got = cursor.valid().then(|| cursor.key().to_vec());
            prop_assert_eq!(got.as_ref(), want);
            cursor.seek_for_prev(target);
            let want = set.range::<Vec<u8>, _>(..=target).next_back();
            let got = cursor.valid().then(|| cursor.key().to_vec());
            prop_assert_eq!(got.as_ref(), want);
        }
        if freeze {
            prop_assert_eq!(mem.sort_count(), 1);
        }
    }

    #[test]
    fn duplicates_read_like_a_counted_btreemap(
        keys in prop::collection::vec(key(), 0..100),
        route in route(),
    ) {
        let mut counts = BTreeMap::<Vec<u8>, usize>::new();
        for k in &keys {
            *counts.entry(k.clone()).or_default() += 1;
        }
        let mem = VecMem::new(BytewiseComparator);
        load(&mem, &keys, route);
        let expected: Vec<Vec<u8>> = counts
            .iter()
            .flat_map(|(k, &n)| std::iter::repeat_n(k.clone(), n))
            .collect();
        prop_assert_eq!(scan(&mem), expected);
    }
}
