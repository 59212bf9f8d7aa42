//! Table files: round trips against a `BTreeMap` model, custom comparators,
//! the bloom filter on a filter key, and damage to every part of the file.

use key_comparator::BytewiseComparator;
use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem, PosixFs};
use lsm_demo::table::{
    BlockKind, FOOTER_LEN, SharedComparator, Table, TableBuilder, TableError, TableIter,
    TableOptions,
};
use proptest::prelude::*;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

fn whole_key(key: &[u8]) -> &[u8] {
    key
}

fn bytewise() -> SharedComparator {
    Arc::new(BytewiseComparator)
}

/// Builds a table in memory from sorted entries; returns its bytes.
fn build(
    entries: &[(Vec<u8>, Vec<u8>)],
    opts: TableOptions,
    cmp: SharedComparator,
    filter_key: fn(&[u8]) -> &[u8],
) -> Vec<u8> {
    let fs = FaultInjectionFs::new();
    let path = Path::new("t.sst");
    let mut builder = TableBuilder::new(fs.create(path).unwrap(), opts, cmp, filter_key);
    for (k, v) in entries {
        builder.add(k, v).unwrap();
    }
    let info = builder.finish().unwrap();
    let bytes = fs.read_file(path).unwrap();
    assert_eq!(info.file_size, bytes.len() as u64);
    assert_eq!(info.entries, entries.len() as u64);
    if let (Some(first), Some(last)) = (entries.first(), entries.last()) {
        assert_eq!((&info.smallest, &info.largest), (&first.0, &last.0));
    }
    bytes
}

fn open(bytes: Vec<u8>, cmp: SharedComparator) -> Result<Arc<Table>, TableError> {
    let size = bytes.len() as u64;
    Table::open(Arc::new(bytes), size, cmp, whole_key)
}

fn numbered(n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n)
        .map(|i| {
            (
                format!("key{:06}", i * 3).into_bytes(),
                format!("value-{i}-{}", "x".repeat(i % 37)).into_bytes(),
            )
        })
        .collect()
}

fn collect_forward(it: &mut TableIter) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    out
}

#[test]
fn round_trip_many_blocks() {
    let entries = numbered(3000);
    for opts in [
        TableOptions::default(),
        TableOptions {
            block_size: 128,
            restart_interval: 3,
            bloom_bits_per_key: 0,
        },
        TableOptions {
            block_size: 1,
            restart_interval: 1,
            bloom_bits_per_key: 10,
        },
    ] {
        let table = open(build(&entries, opts, bytewise(), whole_key), bytewise()).unwrap();
        let props = table.properties();
        assert_eq!(props.entries, 3000);
        assert!(props.data_blocks > 1);
        let mut it = table.iter();
        assert!(!it.valid(), "a new iterator is unpositioned");
        assert_eq!(collect_forward(&mut it), entries);
        // Backward.
        it.seek_to_last();
        for (k, v) in entries.iter().rev() {
            assert_eq!((it.key(), it.value()), (k.as_slice(), v.as_slice()));
            it.prev();
        }
        assert!(!it.valid());
        // Seeks to present and absent keys.
        for (i, (k, _)) in entries.iter().enumerate().step_by(7) {
            it.seek(k);
            assert_eq!(it.key(), k.as_slice());
            let absent = format!("key{:06}", i * 3 + 1).into_bytes();
            it.seek(&absent);
            match entries.get(i + 1) {
                Some((next, _)) => assert_eq!(it.key(), next.as_slice()),
                None => assert!(!it.valid()),
            }
            it.seek_for_prev(&absent);
            assert_eq!(it.key(), k.as_slice());
            assert!(table.may_contain(k));
        }
        it.seek(b"zzz");
        assert!(!it.valid());
        it.seek_for_prev(b"a");
        assert!(!it.valid());
        it.seek_for_prev(b"zzz");
        assert_eq!(it.key(), entries.last().unwrap().0.as_slice());
        it.status().unwrap();
    }
}

#[test]
fn empty_table_and_large_values() {
    let table = open(
        build(&[], TableOptions::default(), bytewise(), whole_key),
        bytewise(),
    )
    .unwrap();
    let mut it = table.iter();
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    it.seek(b"");
    assert!(!it.valid());
    assert!(!table.may_contain(b"x"));
    it.status().unwrap();

    let big: Vec<(Vec<u8>, Vec<u8>)> = (0..5u8)
        .map(|i| (vec![i], vec![i; 20_000 + usize::from(i)]))
        .collect();
    let table = open(
        build(&big, TableOptions::default(), bytewise(), whole_key),
        bytewise(),
    )
    .unwrap();
    assert_eq!(collect_forward(&mut table.iter()), big);
}

#[test]
fn keys_must_increase() {
    let fs = FaultInjectionFs::new();
    let mut b = TableBuilder::new(
        fs.create(Path::new("t")).unwrap(),
        TableOptions::default(),
        bytewise(),
        whole_key,
    );
    b.add(b"b", b"").unwrap();
    let err = b.add(b"b", b"").unwrap_err();
    assert!(matches!(err, TableError::OutOfOrder { .. }));
    assert!(err.to_string().contains("\"b\""), "{err}");
    assert!(b.add(b"a", b"").is_err());
    b.add(b"c", b"").unwrap();
    assert_eq!(b.entries(), 2);
    let io: std::io::Error = err.into();
    assert_eq!(io.kind(), std::io::ErrorKind::InvalidInput);
    assert_eq!(b.finish().unwrap().entries, 2);
}

/// Internal keys: user key, then an 8-byte big-endian sequence number;
/// user keys ascending, sequences descending.
fn internal_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let (ua, sa) = a.split_at(a.len().saturating_sub(8));
    let (ub, sb) = b.split_at(b.len().saturating_sub(8));
    ua.cmp(ub).then_with(|| sb.cmp(sa))
}

fn user_key(internal: &[u8]) -> &[u8] {
    &internal[..internal.len().saturating_sub(8)]
}

fn internal(user: &[u8], seq: u64) -> Vec<u8> {
    [user, &seq.to_be_bytes()].concat()
}

#[test]
fn custom_comparator_and_filter_key() {
    let cmp: SharedComparator = Arc::new(internal_cmp);
    let mut entries = Vec::new();
    for u in 0..500u32 {
        let user = format!("user{u:05}").into_bytes();
        for seq in [30u64, 20, 10] {
            entries.push((
                internal(&user, seq + u64::from(u)),
                seq.to_le_bytes().to_vec(),
            ));
        }
    }
    let bytes = build(
        &entries,
        TableOptions {
            block_size: 256,
            ..TableOptions::default()
        },
        Arc::clone(&cmp),
        user_key,
    );
    let size = bytes.len() as u64;
    let table = Table::open(Arc::new(bytes), size, Arc::clone(&cmp), user_key).unwrap();
    assert_eq!(collect_forward(&mut table.iter()), entries);
    // The filter is keyed by user key.
    for u in 0..500u32 {
        let user = format!("user{u:05}").into_bytes();
        assert!(table.may_contain(&user));
        assert!(table.may_contain_key(&internal(&user, 1)));
    }
    let absent = (0..1000u32)
        .filter(|u| !table.may_contain(format!("other{u}").as_bytes()))
        .count();
    assert!(absent > 950, "{absent} of 1000 absent keys rejected");
    // A lookup of user key at snapshot 25: the newest entry with seq <= 25.
    let mut it = table.iter();
    it.seek(&internal(b"user00003", 25));
    assert_eq!(it.key(), internal(b"user00003", 23).as_slice());
    it.seek_for_prev(&internal(b"user00003", 25));
    assert_eq!(it.key(), internal(b"user00003", 33).as_slice());
    // Out of order under this comparator although bytewise greater.
    let fs = FaultInjectionFs::new();
    let mut b = TableBuilder::new(
        fs.create(Path::new("t")).unwrap(),
        TableOptions::default(),
        cmp,
        user_key,
    );
    b.add(&internal(b"k", 1), b"").unwrap();
    assert!(b.add(&internal(b"k", 2), b"").is_err());
}

#[derive(Debug, Clone)]
enum Op {
    First,
    Last,
    Seek(Vec<u8>),
    SeekForPrev(Vec<u8>),
    Next,
    Prev,
}

fn op() -> impl Strategy<Value = Op> {
    let key = proptest::collection::vec(0u8..4, 0..4);
    prop_oneof![
        Just(Op::First),
        Just(Op::Last),
        key.clone().prop_map(Op::Seek),
        key.prop_map(Op::SeekForPrev),
        Just(Op::Next),
        Just(Op::Next),
        Just(Op::Prev),
        Just(Op::Prev),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn iterator_matches_btreemap(
        model in proptest::collection::btree_map(
            proptest::collection::vec(0u8..4, 0..5),
            proptest::collection::vec(any::<u8>(), 0..40),
            0..200,
        ),
        block_size in 16usize..600,
        restart_interval in 1usize..20,
        ops in proptest::collection::vec(op(), 1..60),
    ) {
        let entries: Vec<(Vec<u8>, Vec<u8>)> = model.clone().into_iter().collect();
        let opts = TableOptions { block_size, restart_interval, bloom_bits_per_key: 10 };
        let table = open(build(&entries, opts, bytewise(), whole_key), bytewise()).unwrap();
        for k in model.keys() {
            prop_assert!(table.may_contain(k));
        }
        let mut it = table.iter();
        let mut pos: Option<Vec<u8>> = None;
        let model: BTreeMap<Vec<u8>, Vec<u8>> = model;
        for op in ops {
            pos = match op {
                Op::First => { it.seek_to_first(); model.keys().next().cloned() }
                Op::Last => { it.seek_to_last(); model.keys().next_back().cloned() }
                Op::Seek(t) => { it.seek(&t); model.range(t..).next().map(|e| e.0.clone()) }
                Op::SeekForPrev(t) => {
                    it.seek_for_prev(&t);
                    model.range(..=t).next_back().map(|e| e.0.clone())
                }
                Op::Next => {
                    it.next();
                    pos.and_then(|p| {
                        use std::ops::Bound::{Excluded, Unbounded};
                        model.range((Excluded(p), Unbounded)).next().map(|e| e.0.clone())
                    })
                }
                Op::Prev => {
                    it.prev();
                    pos.and_then(|p| model.range(..p).next_back().map(|e| e.0.clone()))
                }
            };
            match &pos {
                Some(k) => {
                    prop_assert!(it.valid());
                    prop_assert_eq!(it.key(), k.as_slice());
                    prop_assert_eq!(it.value(), model[k].as_slice());
                }
                None => prop_assert!(!it.valid()),
            }
        }
        prop_assert!(it.status().is_ok());
    }
}

/// The block handles in a footer: (index, filter, properties), each as
/// (offset, size), per the documented layout.
fn footer_handles(bytes: &[u8]) -> [(usize, usize); 3] {
    let footer = &bytes[bytes.len() - FOOTER_LEN as usize..];
    let field =
        |i: usize| u64::from_le_bytes(footer[8 * i..8 * i + 8].try_into().unwrap()) as usize;
    [
        (field(0), field(1)),
        (field(2), field(3)),
        (field(4), field(5)),
    ]
}

fn table_bytes() -> Vec<u8> {
    build(
        &numbered(200),
        TableOptions {
            block_size: 512,
            ..TableOptions::default()
        },
        bytewise(),
        whole_key,
    )
}

/// Opens and reads everything; the first error.
fn open_and_scan(bytes: Vec<u8>) -> Result<usize, TableError> {
    let table = open(bytes, bytewise())?;
    let mut it = table.iter();
    let n = collect_forward(&mut it).len();
    it.status()?;
    Ok(n)
}

#[test]
fn damage_to_each_block_kind_is_a_typed_error() {
    let bytes = table_bytes();
    let [index, filter, props] = footer_handles(&bytes);
    assert_eq!(open_and_scan(bytes.clone()).unwrap(), 200);
    let cases = [
        (index.0 + 1, BlockKind::Index),
        (filter.0 + 3, BlockKind::Filter),
        (props.0 + 2, BlockKind::Properties),
        (10, BlockKind::Data),
        (filter.0 - 10, BlockKind::Data), // the last data block
    ];
    for (at, expected) in cases {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x40;
        let err = open_and_scan(damaged).unwrap_err();
        match err {
            TableError::ChecksumMismatch { block, .. } => assert_eq!(block, expected, "byte {at}"),
            other => panic!("byte {at}: {other}"),
        }
    }
    // Footer: checksum, then magic.
    let n = bytes.len();
    let mut damaged = bytes.clone();
    damaged[n - 20] ^= 1;
    assert!(matches!(
        open_and_scan(damaged),
        Err(TableError::ChecksumMismatch {
            block: BlockKind::Footer,
            ..
        })
    ));
    let mut damaged = bytes.clone();
    damaged[n - 1] ^= 1;
    let err = open_and_scan(damaged).unwrap_err();
    assert!(matches!(err, TableError::BadMagic { .. }));
    assert!(err.to_string().contains("not a table file"), "{err}");
}

#[test]
fn data_corruption_found_mid_iteration() {
    let bytes = table_bytes();
    let mut damaged = bytes.clone();
    let [index, _, _] = footer_handles(&bytes);
    // Damage the middle of the data region.
    damaged[index.0 / 2] ^= 0xff;
    let table = open(damaged, bytewise()).unwrap();
    let mut it = table.iter();
    let got = collect_forward(&mut it).len();
    assert!(
        0 < got && got < 200,
        "read {got} entries before the bad block"
    );
    let err = it.status().unwrap_err();
    assert!(matches!(
        err,
        TableError::ChecksumMismatch {
            block: BlockKind::Data,
            ..
        }
    ));
    assert!(!it.valid());
    assert_eq!(it.key(), b"");
    it.seek_to_first();
    assert!(!it.valid(), "errors are sticky");
    // A fresh iterator can still read the blocks before it.
    let mut fresh = table.iter();
    fresh.seek_to_first();
    assert!(fresh.valid());
}

#[test]
fn truncation_and_short_files() {
    let bytes = table_bytes();
    let n = bytes.len();
    // Shorter than claimed.
    let short = bytes[..n - 1].to_vec();
    let err = Table::open(Arc::new(short), n as u64, bytewise(), whole_key).unwrap_err();
    assert!(matches!(err, TableError::Truncated { .. }), "{err}");
    // Every prefix opened as a whole file.
    for cut in (0..n).step_by(13) {
        let err = open(bytes[..cut].to_vec(), bytewise()).unwrap_err();
        assert!(
            matches!(
                err,
                TableError::TooShort { .. } | TableError::BadMagic { .. }
            ),
            "cut {cut}: {err}"
        );
    }
    // Garbage with a valid-looking tail: the footer checksum catches it.
    let mut fake = vec![0u8; 100];
    fake[92..].copy_from_slice(b"lsm-sst!");
    assert!(matches!(
        open(fake, bytewise()),
        Err(TableError::ChecksumMismatch { .. })
    ));
}

#[test]
fn io_errors_surface_as_typed_errors() {
    let fs = FaultInjectionFs::new();
    let path = Path::new("t.sst");
    let small = TableOptions {
        block_size: 64,
        ..TableOptions::default()
    };
    // A failed append poisons the builder.
    let mut b = TableBuilder::new(fs.create(path).unwrap(), small, bytewise(), whole_key);
    fs.fail_next(FaultOp::Append, 1);
    let mut err = None;
    for (k, v) in numbered(50) {
        if let Err(e) = b.add(&k, &v) {
            err = Some(e);
            break;
        }
    }
    assert!(matches!(err, Some(TableError::Io { .. })));
    assert!(matches!(b.add(b"zzz", b""), Err(TableError::BuilderFailed)));
    assert!(b.finish().is_err());
    // A failed sync in finish.
    let mut b = TableBuilder::new(fs.create(path).unwrap(), small, bytewise(), whole_key);
    b.add(b"k", b"v").unwrap();
    fs.fail_next(FaultOp::Sync, 1);
    match b.finish() {
        Err(TableError::Io { source, .. }) => assert!(FaultInjectionFs::is_injected(&source)),
        other => panic!("{other:?}"),
    }
    // Read errors at open and during iteration name the file.
    let mut b = TableBuilder::new(fs.create(path).unwrap(), small, bytewise(), whole_key);
    for (k, v) in numbered(50) {
        b.add(&k, &v).unwrap();
    }
    b.finish().unwrap();
    fs.fail_next(FaultOp::Read, 1);
    let err = Table::open_file(&fs, path, bytewise(), whole_key).unwrap_err();
    assert!(err.to_string().contains("t.sst"), "{err}");
    let table = Table::open_file(&fs, path, bytewise(), whole_key).unwrap();
    let mut it = table.iter();
    it.seek_to_first();
    fs.fail_after(FaultOp::Read, 2);
    while it.valid() {
        it.next();
    }
    fs.clear_faults();
    let err = it.status().unwrap_err();
    assert!(matches!(err, TableError::InFile { .. }), "{err}");
    assert!(
        err.to_string().contains("t.sst") && err.to_string().contains("injected"),
        "{err}"
    );
}

#[test]
fn posix_table_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000001.sst");
    let entries = numbered(1000);
    let mut b = TableBuilder::new(
        PosixFs.create(&path).unwrap(),
        TableOptions::default(),
        bytewise(),
        whole_key,
    );
    for (k, v) in &entries {
        b.add(k, v).unwrap();
    }
    let info = b.finish().unwrap();
    PosixFs.sync_dir(dir.path()).unwrap();
    let file = PosixFs.open_random(&path).unwrap();
    assert_eq!(file.size().unwrap(), info.file_size);
    let table = Table::open(file, info.file_size, bytewise(), whole_key).unwrap();
    assert_eq!(collect_forward(&mut table.iter()), entries);
    assert_eq!(table.file_size(), info.file_size);
}

#[test]
fn thread_safety_of_the_public_types() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Table>();
    send_sync::<Arc<Table>>();
    send::<TableIter>();
    send::<TableBuilder>();
    send_sync::<FaultInjectionFs>();
    send_sync::<PosixFs>();
    send::<lsm_demo::wal::LogWriter>();
    send_sync::<lsm_demo::wal::LogReader>();
    send_sync::<TableError>();
    send_sync::<lsm_demo::wal::WalError>();
    send_sync::<lsm_demo::manifest::ManifestError>();
}
