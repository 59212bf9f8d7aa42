//! `Options::set_comparator`: a database ordered by the user's comparator
//! (here the reverse of bytewise, so that any step still ordering bytewise
//! shows) through memtables, flushes, compactions over several levels,
//! iterators with seeks and bounds, `compact_range`, reopening and repair;
//! and a database refused under another comparator.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use lsm_demo::env::FaultInjectionFs;
use lsm_demo::{
    DB, Direction, Error, ErrorKind, IteratorMode, MemtableKind, Options, ReadOptions,
    WaitForCompactOptions, WriteBatch,
};

/// The model: keys in the database's order (reverse bytewise).
type Model = BTreeMap<std::cmp::Reverse<Vec<u8>>, Vec<u8>>;

fn reverse(a: &[u8], b: &[u8]) -> Ordering {
    b.cmp(a)
}

/// Small files and levels, so that a few thousand keys reach several levels.
fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true)
        .set_write_buffer_size(64 << 10)
        .set_target_file_size_base(64 << 10)
        .set_max_bytes_for_level_base(128 << 10)
        .set_max_bytes_for_level_multiplier(4.0)
        .set_level_zero_file_num_compaction_trigger(2)
        .set_comparator("test.reverse", Box::new(reverse));
    o
}

fn key(i: u32) -> Vec<u8> {
    format!("key{:06}", i.wrapping_mul(2_654_435_761) % 100_000).into_bytes()
}

fn scan(db: &DB, mode: IteratorMode<'_>) -> Vec<Vec<u8>> {
    db.iterator(mode).map(|kv| kv.unwrap().0.to_vec()).collect()
}

fn check(db: &DB, model: &Model) {
    let expected: Vec<Vec<u8>> = model.keys().map(|k| k.0.clone()).collect();
    assert_eq!(scan(db, IteratorMode::Start), expected);
    let mut backward = expected.clone();
    backward.reverse();
    assert_eq!(scan(db, IteratorMode::End), backward);
    for (k, v) in model.iter().step_by(13) {
        assert_eq!(db.get(&k.0).unwrap().as_ref(), Some(v), "{:?}", k.0);
    }
    // A seek lands on the first key at or after the target in the
    // database's order: here the largest key bytewise at or below it.
    let target = b"key050000".to_vec();
    let after: Vec<Vec<u8>> = model
        .range(std::cmp::Reverse(target.clone())..)
        .map(|(k, _)| k.0.clone())
        .collect();
    assert_eq!(
        scan(db, IteratorMode::From(&target, Direction::Forward)),
        after
    );
}

fn fill(db: &DB, model: &mut Model, rounds: u32) {
    for round in 0..rounds {
        for i in 0..20_000u32 {
            let k = key(i % (20_000 - round * 2000));
            if i % 7 == round % 7 {
                db.delete(&k).unwrap();
                model.remove(&std::cmp::Reverse(k));
            } else {
                let v = format!("{round}-{i}-{}", "v".repeat(40)).into_bytes();
                db.put(&k, &v).unwrap();
                model.insert(std::cmp::Reverse(k), v);
            }
        }
    }
}

#[test]
fn every_level_follows_the_comparator() {
    let fs = FaultInjectionFs::new();
    let o = options();
    let db = DB::open_with_fs(&o, "/db", Arc::new(fs.clone())).unwrap();
    let mut model = Model::new();
    fill(&db, &mut model, 6);
    check(&db, &model); // memtables and level 0, while compactions run
    db.flush().unwrap();
    db.wait_for_compact(&WaitForCompactOptions::default())
        .unwrap();
    let stats = db.stats();
    let used = stats.level_files[1..].iter().filter(|&&n| n > 0).count();
    assert!(used >= 2, "several levels in use: {:?}", stats.level_files);
    check(&db, &model);

    // `compact_range` takes its bounds in the database's order: "key09"
    // comes before "key02" here.
    db.compact_range(Some(b"key09"), Some(b"key02")).unwrap();
    check(&db, &model);
    db.compact_range::<&[u8], &[u8]>(None, None).unwrap();
    check(&db, &model);
    drop(db);

    // The manifest's level checks run in the comparator's order on open.
    let db = DB::open_with_fs(&o, "/db", Arc::new(fs)).unwrap();
    check(&db, &model);
}

#[test]
fn bounds_and_seeks_follow_the_comparator() {
    for kind in [MemtableKind::SkipList, MemtableKind::Vector] {
        let fs = FaultInjectionFs::new();
        let mut o = options();
        o.set_memtable_kind(kind);
        let db = DB::open_with_fs(&o, "/db", Arc::new(fs)).unwrap();
        for k in [b"a", b"b", b"c", b"d", b"e"] {
            db.put(k, k).unwrap();
        }
        for flushed in [false, true] {
            if flushed {
                db.flush().unwrap();
            }
            let all = scan(&db, IteratorMode::Start);
            assert_eq!(all, [b"e", b"d", b"c", b"b", b"a"].map(|k| k.to_vec()));

            // [lower, upper) in the database's order: "d", "c".
            let mut ro = ReadOptions::default();
            ro.set_iterate_lower_bound(b"d".to_vec());
            ro.set_iterate_upper_bound(b"b".to_vec());
            let bounded: Vec<Vec<u8>> = db
                .iterator_opt(IteratorMode::Start, ro.clone())
                .map(|kv| kv.unwrap().0.to_vec())
                .collect();
            assert_eq!(
                bounded,
                [b"d".to_vec(), b"c".to_vec()],
                "{kind:?} {flushed}"
            );
            let back: Vec<Vec<u8>> = db
                .iterator_opt(IteratorMode::End, ro.clone())
                .map(|kv| kv.unwrap().0.to_vec())
                .collect();
            assert_eq!(back, [b"c".to_vec(), b"d".to_vec()]);

            let mut raw = db.raw_iterator_opt(ro);
            raw.seek(b"z"); // before the lower bound: lands on it
            assert_eq!(raw.key(), Some(&b"d"[..]));
            raw.seek_for_prev(b"a"); // past the upper bound: the last key in range
            assert_eq!(raw.key(), Some(&b"c"[..]));

            let mut raw = db.raw_iterator();
            raw.seek(b"cc"); // the first key at or after "cc": "c"
            assert_eq!(raw.key(), Some(&b"c"[..]));
            raw.seek_for_prev(b"cc"); // the last key at or before "cc": "d"
            assert_eq!(raw.key(), Some(&b"d"[..]));

            let got = db.batched_multi_get([b"a", b"e", b"x"], false);
            let got: Vec<_> = got.into_iter().map(|r| r.unwrap()).collect();
            assert_eq!(got, [Some(b"a".to_vec()), Some(b"e".to_vec()), None]);
        }
    }
}

#[test]
fn another_comparator_cannot_open_or_repair_the_database() {
    let fs = FaultInjectionFs::new();
    let o = options();
    let db = DB::open_with_fs(&o, "/db", Arc::new(fs.clone())).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    drop(db);

    let mut bytewise = Options::default();
    bytewise.create_if_missing(true);
    let mut renamed = options();
    renamed.set_comparator("test.other", Box::new(reverse));
    for other in [&bytewise, &renamed] {
        match DB::open_with_fs(other, "/db", Arc::new(fs.clone())) {
            Err(Error::InvalidArgument(why)) => {
                assert!(why.contains("test.reverse"), "{why}")
            }
            other => panic!("opened under another comparator: {other:?}"),
        }
        let repaired = lsm_demo::repair::repair_with_fs(other, std::path::Path::new("/db"), &fs);
        assert!(
            matches!(repaired, Err(Error::InvalidArgument(_))),
            "{repaired:?}"
        );
    }

    // The database is untouched, and repair under its own comparator works.
    lsm_demo::repair::repair_with_fs(&o, std::path::Path::new("/db"), &fs).unwrap();
    let db = DB::open_with_fs(&o, "/db", Arc::new(fs.clone())).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    drop(db);

    // A database created bytewise records no name and opens as before.
    let db = DB::open_with_fs(&bytewise, "/plain", Arc::new(fs.clone())).unwrap();
    drop(db);
    assert!(DB::open_with_fs(&o, "/plain", Arc::new(fs)).is_err());
}

#[test]
fn range_deletions_are_refused_under_a_comparator() {
    let fs = FaultInjectionFs::new();
    let db = DB::open_with_fs(&options(), "/db", Arc::new(fs)).unwrap();
    db.put(b"b", b"1").unwrap();
    let err = db.delete_range(b"c", b"a").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotSupported, "{err}");
    let mut batch = WriteBatch::new();
    batch.put(b"a", b"2");
    batch.delete_range(b"c", b"a");
    assert!(matches!(db.write(batch), Err(Error::NotSupported(_))));
    // Nothing of the refused batch was applied.
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"a").unwrap(), None);
}

/// A comparator that panics on one key: the write that meets it panics
/// (on its own thread), and the database neither hangs nor takes more
/// writes. Its sequence range is finished for it (else every later write
/// would wait for it for ever) and, with `unordered_write`, its pending
/// insert counted ended (else the close's memtable switch would wait for
/// it); writes then fail with `Error::BackgroundError` (kind `Aborted`),
/// which `resume` refuses; reads go on; a reopen starts afresh. With the
/// log, with it disabled, unordered, and synced (where the write group
/// finishes the range itself). (Before, the next write waited for ever.)
#[test]
fn a_comparator_that_panics_stops_writes_without_hanging_them() {
    fn touchy(a: &[u8], b: &[u8]) -> Ordering {
        if a == b"boom" || b == b"boom" {
            panic!("the comparator refuses boom");
        }
        a.cmp(b)
    }
    for (disable_wal, unordered, sync) in [
        (false, false, false),
        (true, false, false),
        (false, true, false),
        (false, false, true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_owned();
        let (done, finished) = std::sync::mpsc::channel();
        // On a thread of its own, so that a hang fails the test.
        std::thread::spawn(move || {
            let mut o = Options::default();
            o.create_if_missing(true)
                .set_unordered_write(unordered)
                .set_comparator("test.touchy", Box::new(touchy));
            let mut wo = lsm_demo::WriteOptions::default();
            wo.disable_wal(disable_wal);
            wo.set_sync(sync);
            let db = DB::open(&o, &path).unwrap();
            db.put_opt(b"a", b"1", &wo).unwrap();
            let boom = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                db.put_opt(b"boom", b"x", &wo)
            }));
            assert!(boom.is_err(), "the comparator panicked in the write");
            let next = db.put_opt(b"c", b"3", &wo);
            let Err(Error::BackgroundError(cause)) = &next else {
                panic!("a write after the panic: {next:?}");
            };
            assert_eq!(cause.kind(), ErrorKind::Aborted, "{cause}");
            assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
            assert!(db.resume().is_err(), "resume after a panicked insert");
            drop(db);
            // The log holds the panicked write's record: replayed, it would
            // panic again. The user's fixed comparator, under its name.
            o.set_comparator("test.touchy", Box::new(|a: &[u8], b: &[u8]| a.cmp(b)));
            let db = DB::open(&o, &path).unwrap();
            db.put(b"d", b"4").unwrap();
            assert_eq!(db.get(b"d").unwrap().as_deref(), Some(&b"4"[..]));
            if !disable_wal {
                assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
            }
            done.send(()).unwrap();
        });
        finished
            .recv_timeout(std::time::Duration::from_secs(30))
            .unwrap_or_else(|_| {
                panic!(
                    "hung or failed (disable_wal {disable_wal}, unordered {unordered}, sync {sync})"
                )
            });
    }
}
