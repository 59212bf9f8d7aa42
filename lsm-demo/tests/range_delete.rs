//! `delete_range` as the `rocksdb` crate documents it: the keys in
//! `[from, to)` disappear for every read that sees the write, in memtables
//! and tables, across flushes, compactions and reopens; snapshots keep the
//! old view; a later put comes back; compaction drops the covered data and
//! finally the tombstone.

mod common;
use common::{scan, scan_reverse};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use lsm_demo::env::PosixFs;
use lsm_demo::key::{InternalKeyComparator, user_key};
use lsm_demo::table::{BASE_FORMAT_VERSION, FOOTER_LEN, FORMAT_VERSION, Table};
use lsm_demo::{
    BatchOp, BottommostLevelCompaction, CompactOptions, DB, Direction, IteratorMode, Options,
    ReadOptions, WaitForCompactOptions, WriteBatch, WriteBatchIterator,
};

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o
}

fn open(dir: &Path) -> DB {
    DB::open(&options(), dir).unwrap()
}

fn k(i: u32) -> Vec<u8> {
    format!("k{i:03}").into_bytes()
}

/// Puts `k000..k{n}` = `v{i}`.
fn fill(db: &DB, n: u32) {
    for i in 0..n {
        db.put(k(i), format!("v{i}")).unwrap();
    }
}

fn keys(pairs: &[(Vec<u8>, Vec<u8>)]) -> Vec<Vec<u8>> {
    pairs.iter().map(|(k, _)| k.clone()).collect()
}

/// The keys `0..n` without those in `gone`.
fn expected_keys(n: u32, gone: impl Fn(u32) -> bool) -> Vec<Vec<u8>> {
    (0..n).filter(|&i| !gone(i)).map(k).collect()
}

/// Every read path agrees that `k0..k{n}` minus `gone` are there.
fn check_reads(db: &DB, n: u32, gone: impl Fn(u32) -> bool + Copy) {
    let want = expected_keys(n, gone);
    assert_eq!(keys(&scan(db)), want, "forward");
    assert_eq!(keys(&scan_reverse(db)), want, "reverse");
    let all: Vec<Vec<u8>> = (0..n).map(k).collect();
    let multi = db.multi_get(&all);
    let batched = db.batched_multi_get(&all, true);
    for i in 0..n {
        let expected = (!gone(i)).then(|| format!("v{i}").into_bytes());
        assert_eq!(db.get(k(i)).unwrap(), expected, "get {i}");
        assert_eq!(
            db.get_pinned(k(i)).unwrap().map(|p| p.to_vec()),
            expected,
            "get_pinned {i}"
        );
        assert_eq!(
            multi[i as usize].as_ref().unwrap(),
            &expected,
            "multi_get {i}"
        );
        assert_eq!(
            batched[i as usize].as_ref().unwrap(),
            &expected,
            "batched {i}"
        );
    }
}

/// The live table files of the database in `dir`: (entries, range deletions).
fn tables(dir: &Path) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "sst") {
            let t = Table::open_file(
                &PosixFs,
                &path,
                Arc::new(InternalKeyComparator::default()),
                user_key,
            )
            .unwrap();
            out.push((t.properties().entries, t.properties().range_deletions));
        }
    }
    out.sort();
    out
}

fn footer_version(path: &Path) -> u32 {
    footer_version_of(&std::fs::read(path).unwrap())
}

fn table_paths(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .collect();
    v.sort();
    v
}

#[test]
fn hides_keys_in_the_memtable() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    fill(&db, 20);
    db.delete_range(k(5), k(10)).unwrap();
    check_reads(&db, 20, |i| (5..10).contains(&i));
}

#[test]
fn hides_keys_after_a_flush() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    fill(&db, 20);
    db.delete_range(k(5), k(10)).unwrap();
    db.flush().unwrap();
    check_reads(&db, 20, |i| (5..10).contains(&i));
    // A tombstone in the memtable over keys in a table.
    db.delete_range(k(12), k(14)).unwrap();
    check_reads(&db, 20, |i| (5..10).contains(&i) || (12..14).contains(&i));
    db.flush().unwrap();
    check_reads(&db, 20, |i| (5..10).contains(&i) || (12..14).contains(&i));
}

#[test]
fn hides_keys_after_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    fill(&db, 20);
    db.flush().unwrap();
    db.delete_range(k(3), k(7)).unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    check_reads(&db, 20, |i| (3..7).contains(&i));
}

#[test]
fn survives_reopen_from_the_log_and_from_tables() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path());
        fill(&db, 20);
        db.flush().unwrap();
        db.delete_range(k(2), k(4)).unwrap(); // only in the log
    }
    // Reopening replays the log into a memtable (and writes it out as a
    // table).
    {
        let db = open(dir.path());
        check_reads(&db, 20, |i| (2..4).contains(&i));
        db.delete_range(k(15), k(18)).unwrap();
    }
    let db = open(dir.path());
    check_reads(&db, 20, |i| (2..4).contains(&i) || (15..18).contains(&i));
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    drop(db);
    let db = open(dir.path());
    check_reads(&db, 20, |i| (2..4).contains(&i) || (15..18).contains(&i));
}

#[test]
fn snapshots_keep_the_old_view() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    fill(&db, 10);
    let before = db.snapshot();
    db.delete_range(k(0), k(5)).unwrap();
    let check_before = |db: &DB, snap: &lsm_demo::Snapshot<'_>| {
        for i in 0..10 {
            assert_eq!(
                snap.get(k(i)).unwrap(),
                Some(format!("v{i}").into_bytes()),
                "{i}"
            );
        }
        let mut ro = ReadOptions::default();
        ro.set_snapshot(snap);
        let n = db.iterator_opt(IteratorMode::End, ro).count();
        assert_eq!(n, 10);
    };
    check_before(&db, &before);
    db.flush().unwrap();
    check_before(&db, &before);
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    // The snapshot still needs the covered keys: compaction keeps them.
    check_before(&db, &before);
    check_reads(&db, 10, |i| i < 5);
    drop(before);
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    check_reads(&db, 10, |i| i < 5);
}

#[test]
fn iterators_skip_covered_keys_both_ways_and_within_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    fill(&db, 30);
    db.flush().unwrap();
    db.delete_range(k(10), k(20)).unwrap();
    for flushed in [false, true] {
        if flushed {
            db.flush().unwrap();
        }
        // Seeks land past the covered keys, both ways.
        let mut it = db.raw_iterator();
        it.seek(k(12));
        assert_eq!(it.key(), Some(&k(20)[..]));
        it.prev();
        assert_eq!(it.key(), Some(&k(9)[..]));
        it.seek_for_prev(k(15));
        assert_eq!(it.key(), Some(&k(9)[..]));
        it.next();
        assert_eq!(it.key(), Some(&k(20)[..]));

        // Bounds around the range.
        let mut ro = ReadOptions::default();
        ro.set_iterate_lower_bound(k(8));
        ro.set_iterate_upper_bound(k(22));
        let fwd: Vec<_> = db
            .iterator_opt(IteratorMode::Start, ro)
            .map(|kv| kv.unwrap().0.into_vec())
            .collect();
        assert_eq!(fwd, [k(8), k(9), k(20), k(21)]);
        let mut ro = ReadOptions::default();
        ro.set_iterate_lower_bound(k(8));
        ro.set_iterate_upper_bound(k(22));
        let back: Vec<_> = db
            .iterator_opt(IteratorMode::End, ro)
            .map(|kv| kv.unwrap().0.into_vec())
            .collect();
        assert_eq!(back, [k(21), k(20), k(9), k(8)]);
        // Bounds inside the range: nothing.
        let mut ro = ReadOptions::default();
        ro.set_iterate_lower_bound(k(11));
        ro.set_iterate_upper_bound(k(19));
        assert_eq!(db.iterator_opt(IteratorMode::Start, ro).count(), 0);
        let from: Vec<_> = db
            .iterator(IteratorMode::From(&k(15), Direction::Reverse))
            .take(2)
            .map(|kv| kv.unwrap().0.into_vec())
            .collect();
        assert_eq!(from, [k(9), k(8)]);
    }
}

#[test]
fn overlapping_tombstones_and_later_puts() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    fill(&db, 40);
    db.delete_range(k(5), k(15)).unwrap();
    db.put(k(7), "v7").unwrap(); // after the first range: visible
    db.flush().unwrap();
    db.delete_range(k(10), k(25)).unwrap(); // overlaps the first
    db.put(k(20), "v20").unwrap();
    db.delete_range(k(30), k(35)).unwrap();
    db.delete_range(k(32), k(33)).unwrap(); // inside the last
    let gone = |i: u32| {
        ((5..15).contains(&i) && i != 7)
            || ((10..25).contains(&i) && i != 20)
            || (30..35).contains(&i)
    };
    check_reads(&db, 40, gone);
    db.flush().unwrap();
    check_reads(&db, 40, gone);
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    check_reads(&db, 40, gone);
    // A put after everything comes back in the middle of a range.
    db.put(k(12), "v12").unwrap();
    check_reads(&db, 40, |i| gone(i) && i != 12);
}

#[test]
fn empty_and_inverted_ranges_delete_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    fill(&db, 10);
    let seq = db.latest_sequence_number();
    db.delete_range(k(5), k(5)).unwrap();
    db.delete_range(k(8), k(2)).unwrap();
    assert_eq!(db.latest_sequence_number(), seq + 2, "each is a record");
    check_reads(&db, 10, |_| false);
    db.flush().unwrap();
    check_reads(&db, 10, |_| false);
}

#[test]
fn compaction_drops_covered_data_then_the_tombstone() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    fill(&db, 100);
    db.flush().unwrap();
    db.delete_range(k(0), k(90)).unwrap();
    db.flush().unwrap();
    let t = tables(dir.path());
    assert_eq!(t.iter().map(|&(e, _)| e).sum::<u64>(), 100);
    assert_eq!(t.iter().map(|&(_, r)| r).sum::<u64>(), 1);
    // Into the last level: the covered keys go, and with nothing older
    // below, the tombstone too.
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    assert_eq!(tables(dir.path()), [(10, 0)]);
    check_reads(&db, 100, |i| i < 90);

    // A tombstone over everything leaves no table at all.
    db.delete_range(b"".as_slice(), b"z".as_slice()).unwrap();
    db.flush().unwrap();
    assert_eq!(tables(dir.path()), [(0, 1), (10, 0)]);
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    assert_eq!(tables(dir.path()), []);
    assert!(scan(&db).is_empty());
}

#[test]
fn compaction_keeps_the_tombstone_while_older_data_lies_below() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options();
    // Static levels: level 0 compacts into level 1, above the data kept
    // on a lower level.
    o.set_level_compaction_dynamic_level_bytes(false);
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db, 50);
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    db.delete_range(k(10), k(20)).unwrap();
    db.flush().unwrap();
    db.wait_for_compact(&WaitForCompactOptions::default())
        .unwrap();
    check_reads(&db, 50, |i| (10..20).contains(&i));
    let db_tables = tables(dir.path());
    let range_dels: u64 = db_tables.iter().map(|&(_, r)| r).sum();
    let entries: u64 = db_tables.iter().map(|&(e, _)| e).sum();
    assert!(range_dels <= 1 && entries <= 50, "{db_tables:?}");
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    check_reads(&db, 50, |i| (10..20).contains(&i));
}

#[test]
fn a_database_of_the_old_format_opens_and_takes_range_deletions() {
    let dir = tempfile::tempdir().unwrap();
    {
        // Without range deletions the engine writes what it wrote before
        // them: format-1 tables.
        let db = open(dir.path());
        fill(&db, 20);
        db.flush().unwrap();
    }
    let old = table_paths(dir.path());
    assert_eq!(old.len(), 1);
    assert_eq!(footer_version(&old[0]), BASE_FORMAT_VERSION);
    let db = open(dir.path());
    check_reads(&db, 20, |_| false);
    db.delete_range(k(0), k(3)).unwrap();
    db.flush().unwrap();
    let versions: Vec<u32> = table_paths(dir.path())
        .iter()
        .map(|p| footer_version(p))
        .collect();
    assert!(versions.contains(&BASE_FORMAT_VERSION), "{versions:?}");
    assert!(versions.contains(&FORMAT_VERSION), "{versions:?}");
    drop(db);
    let db = open(dir.path());
    check_reads(&db, 20, |i| i < 3);
}

#[test]
fn batches_carry_range_deletions_to_the_log_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    fill(&db, 10);
    let mut batch = WriteBatch::new();
    batch.delete_range(k(1), k(4));
    batch.put(k(2), "v2");
    assert_eq!(batch.len(), 2);
    assert_eq!(
        batch.iter().collect::<Vec<_>>(),
        [
            BatchOp::DeleteRange(&k(1), &k(4)),
            BatchOp::Put(&k(2), b"v2")
        ]
    );
    assert_eq!(WriteBatch::from_data(batch.data()), batch);
    db.write(batch).unwrap();
    check_reads(&db, 10, |i| i == 1 || i == 3);

    // `get_updates_since` gives the range deletion back.
    let updates: Vec<(u64, WriteBatch)> = db
        .get_updates_since(11)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(updates.len(), 1);
    assert_eq!(
        updates[0].1.iter().next(),
        Some(BatchOp::DeleteRange(&k(1), &k(4)))
    );

    // A callback without `delete_range` still compiles and skips it.
    #[derive(Default)]
    struct PutsAndDeletes(usize);
    impl WriteBatchIterator for PutsAndDeletes {
        fn put(&mut self, _: Box<[u8]>, _: Box<[u8]>) {
            self.0 += 1;
        }
        fn delete(&mut self, _: Box<[u8]>) {
            self.0 += 1;
        }
    }
    let mut seen = PutsAndDeletes::default();
    updates[0].1.iterate(&mut seen);
    assert_eq!(seen.0, 1);
}

/// A model check over a database spread on several levels: random puts,
/// deletes and range deletions, with flushes, compactions, snapshots and
/// reopens. `RANGE_DEL_SEEDS=n` runs `n` seeds instead of one.
#[test]
fn random_operations_match_a_model_across_levels() {
    let seeds: u64 = std::env::var("RANGE_DEL_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    for seed in 0..seeds {
        random_operations(seed);
    }
}

fn random_operations(seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options();
    o.set_write_buffer_size(64 << 10)
        .set_target_file_size_base(64 << 10)
        .set_max_bytes_for_level_base(128 << 10)
        .set_max_bytes_for_level_multiplier(4.0)
        .set_level_zero_file_num_compaction_trigger(2);
    let mut db = DB::open(&o, dir.path()).unwrap();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15 ^ seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
    let mut rand = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let key = |i: u64| format!("key{i:05}").into_bytes();
    let check = |db: &DB, model: &BTreeMap<Vec<u8>, Vec<u8>>| {
        let want: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert_eq!(scan(db), want);
        assert_eq!(scan_reverse(db), want);
        for i in (0..2000).step_by(37) {
            assert_eq!(db.get(key(i)).unwrap().as_ref(), model.get(&key(i)), "{i}");
        }
    };
    for round in 0..6 {
        // A snapshot taken halfway through the round must read the model
        // of that moment after the compactions of the rest of it.
        let mut snap = None;
        for op in 0..3000u64 {
            if op == 1500 {
                snap = Some((db.snapshot(), model.clone()));
            }
            match rand(100) {
                0..=79 => {
                    let (kk, v) = (key(rand(2000)), format!("{round}-{op}-{}", "x".repeat(200)));
                    db.put(&kk, &v).unwrap();
                    model.insert(kk, v.into_bytes());
                }
                80..=94 => {
                    let kk = key(rand(2000));
                    db.delete(&kk).unwrap();
                    model.remove(&kk);
                }
                _ => {
                    let from = rand(2000);
                    // Mostly short ranges, sometimes one over many files.
                    let to = from + if rand(10) == 0 { rand(400) } else { rand(60) };
                    db.delete_range(key(from), key(to)).unwrap();
                    let gone: Vec<_> = model
                        .range(key(from)..key(to))
                        .map(|(k, _)| k.clone())
                        .collect();
                    for kk in gone {
                        model.remove(&kk);
                    }
                }
            }
        }
        db.wait_for_compact(&WaitForCompactOptions::default())
            .unwrap();
        check(&db, &model);
        let (snapshot, then) = snap.take().unwrap();
        let mut ro = ReadOptions::default();
        ro.set_snapshot(&snapshot);
        let seen: Vec<_> = db
            .iterator_opt(IteratorMode::End, ro)
            .map(|kv| kv.unwrap())
            .map(|(k, v)| (k.into_vec(), v.into_vec()))
            .collect();
        let want: Vec<_> = then
            .iter()
            .rev()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(seen, want, "seed {seed}: snapshot of round {round}");
        for i in (0..2000).step_by(41) {
            assert_eq!(
                snapshot.get(key(i)).unwrap().as_ref(),
                then.get(&key(i)),
                "{i}"
            );
        }
        drop(snapshot);
        drop(snap);
        if round % 2 == 1 {
            drop(db);
            db = DB::open(&o, dir.path()).unwrap();
            check(&db, &model);
        }
    }
    let levels_used = db.stats().levels.iter().filter(|l| l.files > 0).count();
    let tombstones: u64 = tables(dir.path()).iter().map(|&(_, r)| r).sum();
    assert!(
        levels_used >= 2 && tombstones > 0,
        "{levels_used} levels, {tombstones} tombstones"
    );
    // Everything into the last level, its files rewritten too (a file
    // moved there whole keeps its tombstones until then, as in RocksDB):
    // no tombstone is left.
    let mut co = CompactOptions::default();
    co.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &co)
        .unwrap();
    check(&db, &model);
    assert_eq!(tables(dir.path()).iter().map(|&(_, r)| r).sum::<u64>(), 0);
}

#[test]
fn memtables_of_range_deletions_fill_up_and_flush() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options();
    o.set_write_buffer_size(64 << 10);
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db, 10);
    // Tombstones count in the memtable's size: enough of them switch it.
    for i in 0..2000u32 {
        let from = format!("r{i:05}");
        let to = format!("r{i:05}~");
        db.delete_range(from.as_bytes(), to.as_bytes()).unwrap();
    }
    db.wait_for_compact(&WaitForCompactOptions::default())
        .unwrap();
    assert!(!tables(dir.path()).is_empty(), "a memtable was flushed");
    check_reads(&db, 10, |_| false);
}

/// A database written by the engine before range deletions existed (the
/// files of `tests/data/db-before-range-deletions`: a format-1 table, a log
/// and a manifest) opens, reads, and takes range deletions.
#[test]
fn a_database_written_before_range_deletions_opens() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/db-before-range-deletions");
    let dir = tempfile::tempdir().unwrap();
    for name in ["000002.log", "000003.sst", "MANIFEST"] {
        std::fs::copy(src.join(name), dir.path().join(name)).unwrap();
    }
    assert_eq!(
        footer_version(&dir.path().join("000003.sst")),
        BASE_FORMAT_VERSION
    );
    let db = open(dir.path());
    // 50 puts, k010 deleted before the flush, k011 deleted and k100 put
    // in the log.
    let gone = |i: u32| i == 10 || i == 11;
    assert_eq!(db.get(b"k100").unwrap().as_deref(), Some(&b"v100"[..]));
    db.delete_range(b"k050".as_slice(), b"k999".as_slice())
        .unwrap();
    check_reads(&db, 50, gone);
    db.delete_range(k(20), k(30)).unwrap();
    check_reads(&db, 50, |i| gone(i) || (20..30).contains(&i));
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    drop(db);
    let db = open(dir.path());
    check_reads(&db, 50, |i| gone(i) || (20..30).contains(&i));
}

#[test]
fn a_damaged_range_deletion_block_is_corruption() {
    use lsm_demo::env::{FaultInjectionFs, FileSystem};
    use lsm_demo::table::{BlockKind, TableBuilder, TableError, TableOptions};
    let fs = FaultInjectionFs::new();
    let path = Path::new("t.sst");
    let cmp = Arc::new(key_comparator::BytewiseComparator);
    let mut b = TableBuilder::new(
        fs.create(path).unwrap(),
        TableOptions::default(),
        cmp.clone(),
        |k| k,
    );
    b.add(b"k", b"v").unwrap();
    b.add_range_deletion(b"range-start", b"range-end").unwrap();
    let size = b.finish().unwrap().file_size;
    let bytes = fs.read_file(path).unwrap();
    let table = Table::open(Arc::new(bytes.clone()), size, cmp.clone(), |k| k).unwrap();
    assert_eq!(
        table.range_deletions(),
        [(b"range-start".to_vec(), b"range-end".to_vec())]
    );
    assert_eq!(footer_version_of(&bytes), FORMAT_VERSION);
    let at = bytes.windows(11).position(|w| w == b"range-start").unwrap();
    let mut damaged = bytes.clone();
    damaged[at] ^= 1;
    let err = Table::open(Arc::new(damaged), size, cmp, |k| k).unwrap_err();
    assert!(
        matches!(
            err,
            TableError::ChecksumMismatch {
                block: BlockKind::RangeDeletion,
                ..
            }
        ),
        "{err}"
    );
}

fn footer_version_of(bytes: &[u8]) -> u32 {
    let at = bytes.len() - FOOTER_LEN as usize + 48;
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

#[test]
fn repair_keeps_range_deletions_in_tables_and_logs() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path());
        fill(&db, 30);
        db.flush().unwrap();
        db.delete_range(k(3), k(6)).unwrap();
        db.flush().unwrap(); // a tombstone in a table
        db.delete_range(k(20), k(25)).unwrap(); // and one in the log
    }
    std::fs::remove_file(dir.path().join("MANIFEST")).unwrap();
    DB::repair(&options(), dir.path()).unwrap();
    let db = open(dir.path());
    check_reads(&db, 30, |i| (3..6).contains(&i) || (20..25).contains(&i));
}

/// Readers under a writer that alternates a batch filling a range with a
/// range deletion of it, while flushes and compactions run: every
/// snapshot sees the range whole (one version of every key) or empty.
#[test]
fn concurrent_readers_see_a_range_whole_or_empty() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options();
    o.set_write_buffer_size(64 << 10)
        .set_level_zero_file_num_compaction_trigger(2);
    let db = DB::open(&o, dir.path()).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            for round in 0..300u32 {
                let mut batch = WriteBatch::new();
                for i in 0..100 {
                    batch.put(k(i), format!("{round}:{}", "x".repeat(100)));
                }
                db.write(batch).unwrap();
                if round % 2 == 0 {
                    db.delete_range(k(0), k(100)).unwrap();
                }
            }
            // Relaxed, here and in the readers: a stop flag that publishes
            // nothing.
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        for reader in 0..2 {
            let (db, stop) = (&db, &stop);
            s.spawn(move || {
                let mut checks = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) || checks < 10 {
                    let snap = db.snapshot();
                    let mut ro = ReadOptions::default();
                    ro.set_snapshot(&snap);
                    let mode = if reader == 0 {
                        IteratorMode::Start
                    } else {
                        IteratorMode::End
                    };
                    let values: Vec<Vec<u8>> = db
                        .iterator_opt(mode, ro)
                        .map(|kv| kv.unwrap().1.into_vec())
                        .collect();
                    assert!(
                        values.is_empty()
                            || (values.len() == 100 && values.iter().all(|v| v == &values[0])),
                        "{} keys",
                        values.len()
                    );
                    let got = snap.get(k(50)).unwrap();
                    assert_eq!(got.is_some(), !values.is_empty());
                    checks += 1;
                }
            });
        }
    });
}
