//! The `rocksdb` crate's API, used as that crate's documentation describes
//! it: the generic names and thread modes, prefix iteration, batches from
//! their representation, properties, iterator bounds, multi-gets and
//! `get_updates_since`.

mod common;
use common::{model_pairs, scan, small_opts};
use std::collections::BTreeMap;
use std::sync::Arc;

use lsm_demo::{
    DB, DBAccess, DBIteratorWithThreadMode, DBPinnableSlice, DBRawIteratorWithThreadMode,
    DBWithThreadMode, Direction, Error, IteratorMode, MemtableKind, MultiThreaded, Options,
    ReadOptions, SingleThreaded, SliceTransform, SnapshotWithThreadMode, ThreadMode,
    WaitForCompactOptions, WriteBatch, WriteOptions,
};

fn keys<D: DBAccess>(it: DBIteratorWithThreadMode<'_, D>) -> Vec<String> {
    it.map(|kv| String::from_utf8(kv.unwrap().0.into_vec()).unwrap())
        .collect()
}

/// Walks a cursor forward from where it stands.
fn forward<D: DBAccess>(it: &mut DBRawIteratorWithThreadMode<'_, D>) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(k) = it.key() {
        out.push(String::from_utf8(k.to_vec()).unwrap());
        it.next();
    }
    it.status().unwrap();
    out
}

/// Walks a cursor backward from where it stands.
fn backward<D: DBAccess>(it: &mut DBRawIteratorWithThreadMode<'_, D>) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(k) = it.key() {
        out.push(String::from_utf8(k.to_vec()).unwrap());
        it.prev();
    }
    out
}

/// Everything a function generic over `DBAccess` can do.
fn exercise<D: DBAccess>(db: &D) -> (Option<Vec<u8>>, usize, Vec<String>, Option<usize>) {
    let snap = SnapshotWithThreadMode::new(db);
    let mut ro = ReadOptions::default();
    ro.set_snapshot(&snap);
    let got = db.get_opt(b"b", &ro).unwrap();
    let present = db
        .multi_get_opt([&b"a"[..], b"b", b"zz"], &ro)
        .into_iter()
        .filter(|v| matches!(v, Ok(Some(_))))
        .count();
    let all = keys(snap.iterator(IteratorMode::Start));
    let pinned: Option<DBPinnableSlice<'_>> = db.get_pinned_opt(b"a", &ro).unwrap();
    (got, present, all, pinned.map(|p| p.len()))
}

fn open_mode<T: ThreadMode>(path: &std::path::Path, opts: &Options) -> DBWithThreadMode<T> {
    DBWithThreadMode::<T>::open(opts, path).unwrap()
}

fn created() -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts
}

fn run_mode<T: ThreadMode>(path: &std::path::Path) {
    let db = open_mode::<T>(path, &created());
    db.put(b"a", b"1").unwrap();
    db.put(b"b", b"22").unwrap();
    let (got, present, all, pinned) = exercise(&db);
    assert_eq!(got.as_deref(), Some(&b"22"[..]));
    assert_eq!(present, 2);
    assert_eq!(all, ["a", "b"]);
    assert_eq!(pinned, Some(1));
    // Shared across threads, then reopened.
    std::thread::scope(|s| {
        for t in 0..4u8 {
            let db = &db;
            s.spawn(move || db.put([b'c', t], b"v").unwrap());
        }
    });
    db.flush().unwrap();
    drop(db);
    let db = open_mode::<T>(path, &Options::default());
    assert_eq!(db.iterator(IteratorMode::Start).count(), 6);
    let mut it = db.raw_iterator();
    it.seek(b"b");
    assert_eq!(forward(&mut it).len(), 5);
}

#[test]
fn both_thread_modes_open_and_work_alike() {
    let dir = tempfile::tempdir().unwrap();
    run_mode::<SingleThreaded>(&dir.path().join("single"));
    run_mode::<MultiThreaded>(&dir.path().join("multi"));
    // One directory, opened in one mode then the other.
    let db = open_mode::<MultiThreaded>(&dir.path().join("single"), &Options::default());
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
}

#[cfg(not(feature = "multi-threaded-cf"))]
#[test]
fn db_is_the_single_threaded_mode_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let db: DBWithThreadMode<SingleThreaded> = DB::open_default(dir.path()).unwrap();
    let _: &DB = &db;
}

#[test]
fn snapshots_of_a_generic_database_read_their_point_in_time() {
    fn snapshot_reads<D: DBAccess>(db: &D) -> SnapshotWithThreadMode<'_, D> {
        SnapshotWithThreadMode::new(db)
    }
    let dir = tempfile::tempdir().unwrap();
    let db = DBWithThreadMode::<MultiThreaded>::open_default(dir.path()).unwrap();
    db.put(b"k", b"old").unwrap();
    let snap = snapshot_reads(&db);
    db.put(b"k", b"new").unwrap();
    db.put(b"l", b"new").unwrap();
    db.flush().unwrap();
    assert_eq!(snap.get(b"k").unwrap().as_deref(), Some(&b"old"[..]));
    assert_eq!(
        snap.get_opt(b"k", ReadOptions::default())
            .unwrap()
            .as_deref(),
        Some(&b"old"[..])
    );
    let values = snap.multi_get([b"k", b"l"]);
    assert_eq!(values[1].as_ref().unwrap(), &None);
    let mut it = snap.raw_iterator();
    it.seek_to_first();
    assert_eq!(forward(&mut it), ["k"]);
    let mut ro = ReadOptions::default();
    ro.set_iterate_lower_bound(b"l".to_vec());
    assert!(keys(snap.iterator_opt(IteratorMode::Start, ro)).is_empty());
    assert_eq!(snap.sequence(), 1);
}

fn prefixed_db(dir: &std::path::Path, extractor: Option<SliceTransform>) -> DB {
    let mut opts = created();
    if let Some(x) = extractor {
        opts.set_prefix_extractor(x);
    }
    let db = DB::open(&opts, dir).unwrap();
    for k in ["aa1", "aa2", "ab1", "ab2", "ab3", "ac1", "bb1"] {
        db.put(k, b"v").unwrap();
    }
    db
}

fn same_prefix() -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_prefix_same_as_start(true);
    ro
}

#[test]
fn prefix_iterator_stops_at_the_prefix_end_with_a_fixed_extractor() {
    let dir = tempfile::tempdir().unwrap();
    let db = prefixed_db(dir.path(), Some(SliceTransform::create_fixed_prefix(2)));
    assert_eq!(keys(db.prefix_iterator(b"ab")), ["ab1", "ab2", "ab3"]);
    // The seek key's prefix counts, not the whole seek key.
    assert_eq!(keys(db.prefix_iterator(b"ab2")), ["ab2", "ab3"]);
    assert!(keys(db.prefix_iterator(b"ad")).is_empty());
    // The same from table files, and with a tombstone inside the prefix.
    db.delete(b"ab2").unwrap();
    db.flush().unwrap();
    assert_eq!(keys(db.prefix_iterator(b"ab")), ["ab1", "ab3"]);
    // A seek key outside the domain (shorter than the prefix) is not
    // limited: total order from it.
    assert_eq!(keys(db.prefix_iterator(b"a")).len(), 6);
    // Without prefix_same_as_start, or with total_order_seek, iterators
    // are not limited.
    let from_ab = IteratorMode::From(b"ab", Direction::Forward);
    assert_eq!(keys(db.iterator(from_ab)).len(), 4);
    let mut ro = same_prefix();
    ro.set_total_order_seek(true);
    assert_eq!(keys(db.iterator_opt(from_ab, ro)).len(), 4);
    assert_eq!(keys(db.full_iterator(from_ab)).len(), 4);
}

#[test]
fn without_an_extractor_prefix_iteration_is_total_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = prefixed_db(dir.path(), None);
    assert_eq!(
        keys(db.prefix_iterator(b"ab")),
        ["ab1", "ab2", "ab3", "ac1", "bb1"]
    );
    let prefix = b"ab";
    let limited: Vec<_> = db
        .prefix_iterator(prefix)
        .map(|kv| kv.unwrap().0)
        .take_while(|k| k.starts_with(prefix))
        .collect();
    assert_eq!(limited.len(), 3);
}

#[test]
fn prefix_iteration_honours_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let db = prefixed_db(dir.path(), Some(SliceTransform::create_fixed_prefix(2)));
    let mut ro = same_prefix();
    ro.set_iterate_upper_bound(b"ab3".to_vec());
    let from_ab = IteratorMode::From(b"ab", Direction::Forward);
    assert_eq!(keys(db.iterator_opt(from_ab, ro)), ["ab1", "ab2"]);
    let mut ro = same_prefix();
    ro.set_iterate_lower_bound(b"ab2".to_vec());
    assert_eq!(keys(db.iterator_opt(from_ab, ro)), ["ab2", "ab3"]);
    // Backward from past the upper bound: the last key below it.
    let mut ro = same_prefix();
    ro.set_iterate_upper_bound(b"ab3".to_vec());
    let back = IteratorMode::From(b"ab9", Direction::Reverse);
    assert_eq!(keys(db.iterator_opt(back, ro)), ["ab2", "ab1"]);
}

#[test]
fn prefix_same_as_start_holds_in_both_directions() {
    let dir = tempfile::tempdir().unwrap();
    let db = prefixed_db(dir.path(), Some(SliceTransform::create_fixed_prefix(2)));
    let back = IteratorMode::From(b"ab9", Direction::Reverse);
    assert_eq!(
        keys(db.iterator_opt(back, same_prefix())),
        ["ab3", "ab2", "ab1"]
    );
    let mut it = db.raw_iterator_opt(same_prefix());
    it.seek(b"ab2");
    assert_eq!(backward(&mut it), ["ab2", "ab1"]);
    it.seek_for_prev(b"ab2");
    assert_eq!(forward(&mut it), ["ab2", "ab3"]);
    it.seek_for_prev(b"ab0"); // nothing <= "ab0" with prefix "ab"
    assert!(!it.valid());
    // A seek to the first or last key stays within that key's prefix.
    it.seek_to_first();
    assert_eq!(forward(&mut it), ["aa1", "aa2"]);
    it.seek_to_last();
    assert_eq!(backward(&mut it), ["bb1"]);
    // A snapshot's cursor does the same.
    let snap = db.snapshot();
    db.put(b"ab4", b"v").unwrap();
    let mut it = snap.raw_iterator_opt(same_prefix());
    it.seek(b"ab");
    assert_eq!(forward(&mut it), ["ab1", "ab2", "ab3"]);
    it.refresh().unwrap();
    it.seek(b"ab");
    assert_eq!(forward(&mut it), ["ab1", "ab2", "ab3"]); // still the snapshot
}

#[test]
fn custom_and_noop_extractors() {
    fn up_to_dash(k: &[u8]) -> &[u8] {
        let end = k.iter().position(|&b| b == b'-').map_or(k.len(), |i| i + 1);
        &k[..end]
    }
    let dir = tempfile::tempdir().unwrap();
    let mut opts = created();
    opts.set_prefix_extractor(SliceTransform::create(
        "dash",
        up_to_dash,
        Some(|k: &[u8]| k.contains(&b'-')),
    ));
    let db = DB::open(&opts, dir.path().join("custom")).unwrap();
    for k in ["x-1", "x-2", "x2", "xy-1"] {
        db.put(k, b"v").unwrap();
    }
    assert_eq!(keys(db.prefix_iterator(b"x-")), ["x-1", "x-2"]);
    // "x2" is outside the domain: the seek key has no prefix.
    assert_eq!(keys(db.prefix_iterator(b"x2")), ["x2", "xy-1"]);

    let mut opts = created();
    opts.set_prefix_extractor(SliceTransform::create_noop());
    let db = DB::open(&opts, dir.path().join("noop")).unwrap();
    for k in ["k", "k1", "k2"] {
        db.put(k, b"v").unwrap();
    }
    assert_eq!(keys(db.prefix_iterator(b"k")), ["k"]);
}

#[test]
fn get_pinned_is_a_copy_that_outlives_flushes_and_compactions() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open_default(dir.path()).unwrap();
    db.put(b"k", b"in the memtable").unwrap();
    let from_memtable = db.get_pinned(b"k").unwrap().unwrap();
    db.flush().unwrap();
    let from_table = db.get_pinned(b"k").unwrap().unwrap();
    db.put(b"k", b"replaced").unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    assert_eq!(&*from_memtable, b"in the memtable");
    assert_eq!(&*from_table, b"in the memtable");
    assert_eq!(
        db.get_pinned(b"k").unwrap().as_deref(),
        db.get(b"k").unwrap().as_deref()
    );
}

/// `WriteBatch::data` / `from_data` as the `rocksdb` crate documents them: a
/// batch's representation written later reproduces it; data that does not
/// decode is refused and changes nothing.
#[test]
fn batches_from_data_write_what_they_hold_and_bad_data_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&small_opts(MemtableKind::SkipList), dir.path()).unwrap();
    db.put(b"gone", b"0").unwrap();
    let mut batch = WriteBatch::new();
    batch.put(b"k", b"v");
    batch.single_delete(b"gone");
    let data = batch.data().to_vec();
    assert_eq!(data.len(), batch.size_in_bytes());

    let before = db.latest_sequence_number();
    let mut bad = data.clone();
    bad[8] = 3; // the count says three operations; there are two
    match db.write(WriteBatch::from_data(&bad)) {
        Err(Error::InvalidArgument(msg)) => assert!(msg.contains("does not decode"), "{msg}"),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    assert_eq!(db.latest_sequence_number(), before);
    assert_eq!(db.get(b"gone").unwrap().as_deref(), Some(&b"0"[..]));

    db.write(WriteBatch::from_data(&data)).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get(b"gone").unwrap(), None);
}

/// `property_value` / `property_int_value` under RocksDB's names, as the
/// `rocksdb` crate documents them: integers as decimal text, unknown names
/// `None`, text-only properties `None` as integers.
#[test]
fn properties_follow_the_engine_through_flush_and_compaction() {
    use lsm_demo::properties::{self as p, num_files_at_level};
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&small_opts(MemtableKind::SkipList), dir.path()).unwrap();
    let int = |name: &str| db.property_int_value(name).unwrap().unwrap();
    assert_eq!(int(p::ESTIMATE_NUM_KEYS), 0);
    for i in 0..100u32 {
        db.put(i.to_be_bytes(), [7u8; 100]).unwrap();
    }
    assert_eq!(int(p::NUM_ENTRIES_ACTIVE_MEM_TABLE), 100);
    assert_eq!(int(p::ESTIMATE_NUM_KEYS), 100);
    assert!(int(p::CUR_SIZE_ACTIVE_MEM_TABLE) >= 100 * 100);
    assert_eq!(
        int(p::CUR_SIZE_ALL_MEM_TABLES),
        int(p::CUR_SIZE_ACTIVE_MEM_TABLE)
    );
    assert_eq!(int(p::TOTAL_SST_FILES_SIZE), 0);

    db.flush().unwrap();
    assert_eq!(int(&num_files_at_level(0)), 1);
    assert_eq!(int(p::NUM_ENTRIES_ACTIVE_MEM_TABLE), 0);
    assert_eq!(int(p::NUM_IMMUTABLE_MEM_TABLE), 0);
    assert_eq!(int(p::ESTIMATE_NUM_KEYS), 100);
    assert!(int(p::TOTAL_SST_FILES_SIZE) > 0);
    assert_eq!(
        db.property_value(num_files_at_level(0)).unwrap().as_deref(),
        Some("1")
    );

    // A second level-0 file reaches the trigger (2): a compaction merges
    // both into the base level, keeping the newest version of each key.
    for i in 50..150u32 {
        db.put(i.to_be_bytes(), [1u8; 10]).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compact(&WaitForCompactOptions::default())
        .unwrap();
    let base = int(p::BASE_LEVEL) as usize;
    assert_eq!(int(&num_files_at_level(0)), 0);
    assert!(int(&num_files_at_level(base)) >= 1);
    assert_eq!(int(p::COMPACTION_PENDING), 0);
    assert_eq!(int(p::NUM_RUNNING_COMPACTIONS), 0);
    assert_eq!(int(p::ESTIMATE_NUM_KEYS), 150);
    let levels = db.property_value(p::LEVELSTATS).unwrap().unwrap();
    assert_eq!(levels.lines().count(), 2 + 7, "{levels}");
    let stats = db.property_value(p::STATS).unwrap().unwrap();
    assert!(stats.contains(&format!("  L{base} ")), "{stats}");
    assert_eq!(db.property_int_value(p::STATS).unwrap(), None);

    assert_eq!(int(p::NUM_SNAPSHOTS), 0);
    let (s1, s2) = (db.snapshot(), db.snapshot());
    assert_eq!(int(p::NUM_SNAPSHOTS), 2);
    drop((s1, s2));
    assert_eq!(int(p::NUM_SNAPSHOTS), 0);
    assert_eq!(int(p::BACKGROUND_ERRORS), 0);

    for unknown in [
        "rocksdb.no-such-property",
        "rocksdb.num-files-at-level7",
        "",
    ] {
        assert_eq!(db.property_value(unknown).unwrap(), None, "{unknown}");
        assert_eq!(db.property_int_value(unknown).unwrap(), None, "{unknown}");
    }
}

/// Iterator bounds as the `rocksdb` crate documents them: the lower bound
/// inclusive, the upper exclusive, in both directions and from every
/// start, over keys in tables and in the memtable.
#[test]
fn iterate_bounds_hold_in_every_direction() {
    use lsm_demo::ReadOptions;
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&small_opts(MemtableKind::SkipList), dir.path()).unwrap();
    let mut model = BTreeMap::new();
    for i in (0..60u8).step_by(2) {
        db.put([i], [i]).unwrap();
        model.insert(vec![i], vec![i]);
        if i == 30 {
            db.flush().unwrap(); // half in a table, half in the memtable
        }
    }
    let bounds = [
        None,
        Some(0u8),
        Some(7),
        Some(8),
        Some(31),
        Some(60),
        Some(99),
    ];
    for lower in bounds {
        for upper in bounds {
            let ro = || {
                let mut ro = ReadOptions::default();
                if let Some(l) = lower {
                    ro.set_iterate_lower_bound(vec![l]);
                }
                if let Some(u) = upper {
                    ro.set_iterate_upper_bound(vec![u]);
                }
                ro
            };
            let inside =
                |k: &Vec<u8>| lower.is_none_or(|l| k[0] >= l) && upper.is_none_or(|u| k[0] < u);
            let want: Vec<Vec<u8>> = model.keys().filter(|k| inside(k)).cloned().collect();
            fn collect(db: &DB, mode: IteratorMode<'_>, ro: ReadOptions) -> Vec<Vec<u8>> {
                db.iterator_opt(mode, ro)
                    .map(|kv| kv.unwrap().0.to_vec())
                    .collect()
            }
            let keys = |mode: IteratorMode<'_>| collect(&db, mode, ro());
            let what = format!("lower {lower:?} upper {upper:?}");
            assert_eq!(keys(IteratorMode::Start), want, "{what}");
            let mut reversed = want.clone();
            reversed.reverse();
            assert_eq!(keys(IteratorMode::End), reversed, "{what}");
            for from in [[0u8], [7], [8], [30], [31], [59], [80]] {
                let fwd: Vec<_> = want.iter().filter(|k| k[0] >= from[0]).cloned().collect();
                assert_eq!(
                    keys(IteratorMode::From(&from, Direction::Forward)),
                    fwd,
                    "{what} from {from:?}"
                );
                let back: Vec<_> = reversed
                    .iter()
                    .filter(|k| k[0] <= from[0])
                    .cloned()
                    .collect();
                assert_eq!(
                    keys(IteratorMode::From(&from, Direction::Reverse)),
                    back,
                    "{what} back from {from:?}"
                );
            }
            // The raw cursor: stepping out of bounds ends it, both ways.
            let mut it = db.raw_iterator_opt(ro());
            it.seek_to_first();
            assert_eq!(
                it.key().map(<[u8]>::to_vec),
                want.first().cloned(),
                "{what}"
            );
            it.seek_to_last();
            assert_eq!(it.key().map(<[u8]>::to_vec), want.last().cloned(), "{what}");
            if it.valid() {
                it.next();
                assert!(!it.valid() && it.item().is_none(), "{what}");
                it.status().unwrap();
            }
        }
    }
}

/// "Point reads (`get`) ignore" the iterate bounds and "point reads
/// ignore" `prefix_same_as_start` (`ReadOptions::set_iterate_lower_bound`,
/// `set_iterate_upper_bound`, `set_prefix_same_as_start`): read options
/// made for a scan and reused for lookups must not hide the keys outside
/// the scan's range. Every key is found, in a table and in the memtable,
/// through every point read that takes read options, with bounds that
/// leave out every key, that are empty, and that are inverted.
#[test]
fn point_reads_ignore_iterate_bounds_and_prefix_same_as_start() {
    let dir = tempfile::tempdir().unwrap();
    let db = prefixed_db(dir.path(), Some(SliceTransform::create_fixed_prefix(2)));
    db.flush().unwrap();
    db.put(b"ab2", b"newer").unwrap();
    db.put(b"zz1", b"in the memtable").unwrap();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = ["aa1", "aa2", "ab1", "ab3", "ac1", "bb1"]
        .into_iter()
        .map(|k| (k.as_bytes().to_vec(), b"v".to_vec()))
        .collect();
    model.insert(b"ab2".to_vec(), b"newer".to_vec());
    model.insert(b"zz1".to_vec(), b"in the memtable".to_vec());
    // Every key, and one absent.
    let probes: Vec<&[u8]> = model
        .keys()
        .map(Vec::as_slice)
        .chain([&b"ab9"[..]])
        .collect();
    let want: Vec<Option<Vec<u8>>> = probes.iter().map(|k| model.get(*k).cloned()).collect();
    for (lower, upper) in [("b", "bb1"), ("ab2", "ab2"), ("zz9", "a")] {
        let ro = || {
            let mut ro = same_prefix();
            ro.set_iterate_lower_bound(lower.as_bytes().to_vec());
            ro.set_iterate_upper_bound(upper.as_bytes().to_vec());
            ro
        };
        let what = format!("bounds [{lower}, {upper})");
        // The bounds and the prefix do limit an iterator made with them.
        let from_ab = IteratorMode::From(b"ab", Direction::Forward);
        assert!(keys(db.iterator_opt(from_ab, ro())).is_empty(), "{what}");
        let snap = db.snapshot();
        for (k, v) in probes.iter().zip(&want) {
            let k_str = String::from_utf8_lossy(k);
            assert_eq!(db.get_opt(k, &ro()).unwrap(), *v, "{what}: get_opt {k_str}");
            assert_eq!(
                db.get_pinned_opt(k, &ro()).unwrap().as_deref(),
                v.as_deref(),
                "{what}: get_pinned_opt {k_str}"
            );
            assert_eq!(
                snap.get_opt(k, ro()).unwrap(),
                *v,
                "{what}: snapshot {k_str}"
            );
        }
        let multi = |got: Vec<lsm_demo::Result<Option<Vec<u8>>>>| -> Vec<Option<Vec<u8>>> {
            got.into_iter().map(Result::unwrap).collect()
        };
        assert_eq!(multi(db.multi_get_opt(&probes, &ro())), want, "{what}");
        assert_eq!(
            multi(db.batched_multi_get_opt(&probes, false, &ro())),
            want,
            "{what}"
        );
    }
}

/// `multi_get` and `batched_multi_get` as the `rocksdb` crate documents
/// them: one result per key, in the callers' order, duplicates and absent
/// keys included; and, here, all keys as of one point in time.
#[test]
fn multi_gets_answer_every_key_at_one_point_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(DB::open(&small_opts(MemtableKind::SkipList), dir.path()).unwrap());
    let mut model = BTreeMap::new();
    for i in 0..300u32 {
        let k = (i * 7 % 300).to_be_bytes().to_vec();
        db.put(&k, i.to_le_bytes()).unwrap();
        model.insert(k, i.to_le_bytes().to_vec());
        if i % 100 == 99 {
            db.flush().unwrap();
        }
    }
    let keys: Vec<Vec<u8>> = [5u32, 1000, 299, 5, 0, 150]
        .iter()
        .map(|i| i.to_be_bytes().to_vec())
        .collect();
    let want: Vec<Option<Vec<u8>>> = keys.iter().map(|k| model.get(k).cloned()).collect();
    let got = |v: Vec<lsm_demo::Result<Option<Vec<u8>>>>| -> Vec<Option<Vec<u8>>> {
        v.into_iter().map(Result::unwrap).collect()
    };
    assert_eq!(got(db.multi_get(&keys)), want);
    assert_eq!(got(db.batched_multi_get(&keys, false)), want);
    let mut sorted = keys.clone();
    sorted.sort();
    let want_sorted: Vec<_> = sorted.iter().map(|k| model.get(k).cloned()).collect();
    assert_eq!(got(db.batched_multi_get(&sorted, true)), want_sorted);
    assert!(db.multi_get(Vec::<Vec<u8>>::new()).is_empty());

    // A writer keeps two keys equal with each batch: every multi-get sees
    // them equal.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (db, stop) = (Arc::clone(&db), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut i = 0u32;
            // Relaxed, here and below: a stop flag that publishes nothing.
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let mut batch = WriteBatch::new();
                batch.put(b"pair-a", i.to_le_bytes());
                batch.put(b"pair-b", i.to_le_bytes());
                db.write(batch).unwrap();
                i += 1;
            }
        })
    };
    for round in 0..2000 {
        let v = got(if round % 2 == 0 {
            db.multi_get([b"pair-a", b"pair-b"])
        } else {
            db.batched_multi_get([b"pair-b", b"pair-a"], false)
        });
        assert_eq!(v[0], v[1], "round {round}");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
}

/// `get_updates_since` as RocksDB's `GetUpdatesSince`: contiguous batches
/// from the one holding the sequence asked for, across memtable switches,
/// replaying to the same state; `NotFound` once a flush retired the logs.
#[test]
fn updates_since_replay_the_logged_batches() {
    // Flushes are held at the gate, so the frozen memtables keep their logs.
    let fs = common::GatedTables::new(lsm_demo::env::FaultInjectionFs::new());
    let mut o = small_opts(MemtableKind::SkipList);
    o.set_level_zero_file_num_compaction_trigger(20);
    o.set_max_write_buffer_number(16);
    let db = DB::open_with_fs(&o, "/db", Arc::new(fs.clone())).unwrap();
    let mut synced = WriteOptions::default();
    synced.set_sync(true);
    for i in 0..2_000u32 {
        let mut batch = WriteBatch::new();
        batch.put(i.to_be_bytes(), [7u8; 40]);
        if i % 3 == 0 {
            batch.delete((i / 2).to_be_bytes());
        }
        if i % 100 == 0 {
            batch.put_log_data(format!("mark {i}"));
        }
        if i % 10 == 0 {
            db.write_opt(batch, &synced).unwrap();
        } else {
            db.write(batch).unwrap();
        }
    }
    let latest = db.latest_sequence_number();
    let mut expected = BTreeMap::new();
    let mut next = 1;
    let mut marks = 0;
    for update in db.get_updates_since(1).unwrap() {
        let (first, batch) = update.unwrap();
        assert_eq!(first, next, "batches are contiguous");
        next = first + batch.len() as u64;
        marks += batch.log_data().count();
        for op in batch.iter() {
            match op {
                lsm_demo::BatchOp::Put(k, v) => expected.insert(k.to_vec(), v.to_vec()),
                lsm_demo::BatchOp::Delete(k) => expected.remove(k),
                lsm_demo::BatchOp::DeleteRange(..) => unreachable!("no range deletions here"),
            };
        }
    }
    assert_eq!(next, latest + 1);
    assert_eq!(marks, 20);
    assert_eq!(scan(&db), model_pairs(&expected));
    assert!(
        db.stats().immutable_memtables > 0,
        "the batches span several logs"
    );

    // From the middle: the batch holding the sequence comes first.
    let (first, batch) = db
        .get_updates_since(latest)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert!(first <= latest && latest < first + batch.len() as u64);
    // One past the last write: nothing yet; further: not written.
    assert_eq!(db.get_updates_since(latest + 1).unwrap().count(), 0);
    let err = db.get_updates_since(latest + 2).unwrap_err();
    assert_eq!(err.kind(), lsm_demo::ErrorKind::NotFound);

    fs.open_gate();
    db.flush().unwrap();
    let err = db.get_updates_since(1).unwrap_err();
    assert!(matches!(err, Error::UpdatesUnavailable(_)), "{err}");
    db.put(b"after", b"flush").unwrap();
    let after: Vec<_> = db
        .get_updates_since(latest + 1)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].0, latest + 1);

    // Log data is logged, never applied: a reopen replays around it.
    let mut batch = WriteBatch::new();
    batch.put_log_data(b"only in the log");
    batch.put(b"k", b"v");
    db.write(batch).unwrap();
    drop(db);
    let db = DB::open_with_fs(&o, "/db", Arc::new(fs)).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.latest_sequence_number(), latest + 2);
}

/// `put` and `delete` reuse one batch per thread; a put made from inside
/// another write on the same thread (here, by a comparator that writes to
/// a second database as it compares) gets a batch of its own.
#[test]
fn a_put_from_inside_a_write_on_the_same_thread_works() {
    for kind in [MemtableKind::SkipList, MemtableKind::Vector] {
        put_from_inside_a_write(kind);
    }
}

fn put_from_inside_a_write(kind: MemtableKind) {
    let dir = tempfile::tempdir().unwrap();
    let side = Arc::new(DB::open_default(dir.path().join("side")).unwrap());
    let in_compare = Arc::clone(&side);
    let mut o = small_opts(kind);
    o.set_comparator(
        "bytewise, noting each comparison",
        Box::new(move |a: &[u8], b: &[u8]| {
            in_compare.put(b"compared", a).unwrap();
            a.cmp(b)
        }),
    );
    let db = DB::open(&o, dir.path().join("main")).unwrap();
    for k in [&b"b"[..], b"a", b"c"] {
        db.put(k, b"v").unwrap();
    }
    db.delete(b"a").unwrap();
    assert_eq!(
        scan(&db),
        [
            (b"b".to_vec(), b"v".to_vec()),
            (b"c".to_vec(), b"v".to_vec())
        ]
    );
    assert!(
        side.get(b"compared").unwrap().is_some(),
        "the comparator wrote"
    );
}
