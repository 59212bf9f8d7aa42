//! Every cursor operation and every insert path against a `BTreeSet` model,
//! with inserts interleaved between cursor moves.

use arena::ConcurrentArena;
use inline_skiplist::{BytewiseComparator, SingleWriter, SkipList, SkipListOptions, Splice};
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::ops::Bound::{Excluded, Included, Unbounded};
use std::sync::Arc;

#[derive(Debug, Clone, Copy)]
enum InsertKind {
    Plain,
    Hint,
    Fill,
    FillHint,
}

#[derive(Debug, Clone)]
enum Op {
    Insert(Vec<u8>, InsertKind),
    Contains(Vec<u8>),
    Seek(Vec<u8>),
    SeekForPrev(Vec<u8>),
    SeekToFirst,
    SeekToLast,
    Next,
    Prev,
}

/// Short keys over a tiny alphabet, so that seeks hit, miss and collide.
fn key() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![Just(0u8), Just(1), Just(b'a'), Just(0xff)],
        0..4,
    )
}

fn insert_kind() -> impl Strategy<Value = InsertKind> {
    prop_oneof![
        Just(InsertKind::Plain),
        Just(InsertKind::Hint),
        Just(InsertKind::Fill),
        Just(InsertKind::FillHint),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (key(), insert_kind()).prop_map(|(k, kind)| Op::Insert(k, kind)),
        1 => key().prop_map(Op::Contains),
        2 => key().prop_map(Op::Seek),
        2 => key().prop_map(Op::SeekForPrev),
        1 => Just(Op::SeekToFirst),
        1 => Just(Op::SeekToLast),
        3 => Just(Op::Next),
        3 => Just(Op::Prev),
    ]
}

/// The model cursor: the key it is on, or `None` when invalid.
type Pos = Option<Vec<u8>>;

fn model_move(model: &BTreeSet<Vec<u8>>, pos: &Pos, op: &Op) -> Pos {
    let first_ge = |k: &[u8]| {
        model
            .range::<[u8], _>((Included(k), Unbounded))
            .next()
            .cloned()
    };
    let last_le = |k: &[u8]| {
        model
            .range::<[u8], _>((Unbounded, Included(k)))
            .next_back()
            .cloned()
    };
    match op {
        Op::Seek(k) => first_ge(k),
        Op::SeekForPrev(k) => last_le(k),
        Op::SeekToFirst => model.first().cloned(),
        Op::SeekToLast => model.last().cloned(),
        Op::Next => {
            let cur = pos.as_deref()?;
            model
                .range::<[u8], _>((Excluded(cur), Unbounded))
                .next()
                .cloned()
        }
        Op::Prev => {
            let cur = pos.as_deref()?;
            model
                .range::<[u8], _>((Unbounded, Excluded(cur)))
                .next_back()
                .cloned()
        }
        Op::Insert(..) | Op::Contains(_) => pos.clone(),
    }
}

enum Writer {
    Concurrent(Splice),
    Single(SingleWriter),
}

fn insert(list: &SkipList, writer: &mut Writer, key: &[u8], kind: InsertKind) -> bool {
    match writer {
        Writer::Concurrent(hint) => match kind {
            InsertKind::Plain => list.insert(key),
            InsertKind::Hint => list.insert_with_hint(key, hint),
            InsertKind::Fill => list.insert_with(key.len(), None, |e| e.copy_from_slice(key)),
            InsertKind::FillHint => {
                list.insert_with(key.len(), Some(hint), |e| e.copy_from_slice(key))
            }
        },
        Writer::Single(w) => match kind {
            InsertKind::Plain | InsertKind::Hint => w.insert(list, key),
            InsertKind::Fill | InsertKind::FillHint => {
                w.insert_with(list, key.len(), |e| e.copy_from_slice(key))
            }
        },
    }
}

fn run(ops: &[Op], single_writer: bool, options: SkipListOptions) {
    let mut list = SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options);
    let mut writer = if single_writer {
        Writer::Single(list.single_writer().unwrap())
    } else {
        Writer::Concurrent(Splice::new())
    };
    let list = Arc::new(list);
    let mut model = BTreeSet::new();
    let mut pos: Pos = model.first().cloned();
    let mut cursor = list.cursor();
    let mut arc_cursor = list.cursor_arc();

    for op in ops {
        match op {
            Op::Insert(k, kind) => {
                let inserted = insert(&list, &mut writer, k, *kind);
                assert_eq!(inserted, model.insert(k.clone()), "insert {k:?}");
            }
            Op::Contains(k) => assert_eq!(list.contains(k), model.contains(k), "contains {k:?}"),
            Op::Seek(k) => {
                cursor.seek(k);
                arc_cursor.seek(k);
            }
            Op::SeekForPrev(k) => {
                cursor.seek_for_prev(k);
                arc_cursor.seek_for_prev(k);
            }
            Op::SeekToFirst => {
                cursor.seek_to_first();
                arc_cursor.seek_to_first();
            }
            Op::SeekToLast => {
                cursor.seek_to_last();
                arc_cursor.seek_to_last();
            }
            // Stepping an invalid cursor is a documented panic; skip it.
            Op::Next if pos.is_some() => {
                cursor.next();
                arc_cursor.next();
            }
            Op::Prev if pos.is_some() => {
                cursor.prev();
                arc_cursor.prev();
            }
            Op::Next | Op::Prev => {}
        }
        pos = model_move(&model, &pos, op);
        assert_eq!(cursor.valid(), pos.is_some(), "after {op:?}");
        assert_eq!(arc_cursor.valid(), pos.is_some(), "after {op:?}");
        if let Some(p) = &pos {
            assert_eq!(cursor.key(), p.as_slice(), "after {op:?}");
            assert_eq!(arc_cursor.key(), p.as_slice(), "after {op:?}");
        }
    }

    assert_eq!(list.len(), model.len());
    assert_eq!(list.is_empty(), model.is_empty());
    let all: Vec<&[u8]> = list.cursor().collect();
    assert_eq!(all, model.iter().map(Vec::as_slice).collect::<Vec<_>>());
    // The iterator yields from the cursor's position on.
    if let Some(p) = &pos {
        let rest: Vec<&[u8]> = cursor.clone().collect();
        let expected: Vec<&[u8]> = model
            .range::<[u8], _>((Included(p.as_slice()), Unbounded))
            .map(Vec::as_slice)
            .collect();
        assert_eq!(rest, expected);
    }
    let counts = list.check_invariants().unwrap();
    assert_eq!(counts[0], model.len());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(debug_assertions) { 96 } else { 1024 }))]

    #[test]
    fn cursor_and_inserts_match_btreeset(ops in prop::collection::vec(op(), 0..200)) {
        run(&ops, false, SkipListOptions::new());
    }

    #[test]
    fn key_prefixes_match_btreeset(ops in prop::collection::vec(op(), 0..200)) {
        run(&ops, false, SkipListOptions::new().with_branching(2).with_key_prefixes(true));
    }

    #[test]
    fn single_writer_matches_btreeset(ops in prop::collection::vec(op(), 0..200)) {
        run(&ops, true, SkipListOptions::new());
    }

    #[test]
    fn single_writer_with_key_prefixes_matches_btreeset(ops in prop::collection::vec(op(), 0..200)) {
        run(&ops, true, SkipListOptions::new().with_key_prefixes(true));
    }
}
