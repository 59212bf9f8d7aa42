//! The `rocksdb` crate's generic names and prefix iteration, used as that
//! crate's documentation describes them.

use lsm_demo::{
    DB, DBAccess, DBIteratorWithThreadMode, DBPinnableSlice, DBRawIteratorWithThreadMode,
    DBWithThreadMode, Direction, IteratorMode, MultiThreaded, Options, ReadOptions, SingleThreaded,
    SliceTransform, SnapshotWithThreadMode, ThreadMode,
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
