//! Leveled compaction through `DB`: databases spread over several levels by
//! small level targets, checked against a model after compactions, with
//! snapshots, deletes that must stay deleted, several compactions at once,
//! and reopening (the manifest's level checks run on every open).

mod common;
use common::{GatedTables, scan, scan_reverse};
use std::collections::BTreeMap;
use std::sync::Arc;

use lsm_demo::env::FaultInjectionFs;
use lsm_demo::{DB, Error, ErrorKind, IteratorMode, Options, WaitForCompactOptions, WriteOptions};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Levels of 64 KiB files, a 128 KiB base and a multiplier of 4: a few
/// megabytes fill four or five levels.
fn options(jobs: usize) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true)
        .set_write_buffer_size(64 << 10)
        .set_target_file_size_base(64 << 10)
        .set_max_bytes_for_level_base(128 << 10)
        .set_max_bytes_for_level_multiplier(4.0)
        .set_level_zero_file_num_compaction_trigger(2)
        .set_max_background_jobs(jobs);
    o
}

fn key(i: u32) -> Vec<u8> {
    // Spread over the key space, so that every compaction overlaps.
    format!("key{:08}", i.wrapping_mul(2_654_435_761) % 1_000_000).into_bytes()
}

fn check(db: &DB, model: &Model) {
    let expected: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(scan(db), expected);
    assert_eq!(scan_reverse(db), expected);
    for (k, v) in model.iter().step_by(17) {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v), "{k:?}");
    }
}

fn wait(db: &DB) {
    db.wait_for_compact(&WaitForCompactOptions::default())
        .unwrap();
}

/// Writes rounds of puts over a shrinking key range and deletes of every
/// seventh key, so old versions and tombstones meet on every level.
fn fill(db: &DB, model: &mut Model, rounds: u32) {
    for round in 0..rounds {
        for i in 0..4000u32 {
            let k = key(i % (4000 - round * 300));
            if i % 7 == round % 7 {
                db.delete(&k).unwrap();
                model.remove(&k);
            } else {
                let v = format!("{round}-{i}-{}", "v".repeat(60)).into_bytes();
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
        }
    }
}

#[test]
fn data_spreads_over_several_levels_and_reads_back() {
    let fs = FaultInjectionFs::new();
    let o = options(2);
    let mut model = Model::new();
    let db = DB::open_with_fs(&o, "/db", Arc::new(fs.clone())).unwrap();
    fill(&db, &mut model, 8);
    db.flush().unwrap();
    wait(&db);
    let stats = db.stats();
    let used = stats.level_files[1..].iter().filter(|&&n| n > 0).count();
    assert!(used >= 2, "several levels in use: {:?}", stats.level_files);
    assert!(stats.level_files[0] < 2, "level 0 compacted: {stats:?}");
    for (level, l) in stats.levels.iter().enumerate().skip(1) {
        assert!(
            l.score < 1.0,
            "level {level} within its target after the wait: {l:?}"
        );
    }
    assert!(stats.levels[stats.base_level].compactions > 0);
    check(&db, &model);
    drop(db);
    // The manifest's consistency checks (disjoint files on every level)
    // run on open.
    let db = DB::open_with_fs(&o, "/db", Arc::new(fs)).unwrap();
    check(&db, &model);
}

#[test]
fn deleted_keys_stay_deleted_as_tombstones_reach_the_bottom() {
    let o = options(2);
    let fs = FaultInjectionFs::new();
    let db = DB::open_with_fs(&o, "/db", Arc::new(fs)).unwrap();
    let mut model = Model::new();
    fill(&db, &mut model, 4);
    db.flush().unwrap();
    wait(&db);
    // Delete half of what is there, then push the tombstones down with
    // more writes elsewhere: an older version below a dropped tombstone
    // would come back.
    let victims: Vec<Vec<u8>> = model.keys().step_by(2).cloned().collect();
    for k in &victims {
        db.delete(k).unwrap();
        model.remove(k);
    }
    for i in 0..20_000u32 {
        let k = format!("other{i:06}").into_bytes();
        let v = vec![b'x'; 80];
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    db.flush().unwrap();
    wait(&db);
    for k in &victims {
        assert_eq!(db.get(k).unwrap(), None, "{k:?} came back");
    }
    check(&db, &model);
}

#[test]
fn a_snapshot_keeps_its_versions_through_compactions() {
    let o = options(3);
    let db = DB::open_with_fs(&o, "/db", Arc::new(FaultInjectionFs::new())).unwrap();
    let mut model = Model::new();
    fill(&db, &mut model, 3);
    let snap = db.snapshot();
    let frozen = model.clone();
    fill(&db, &mut model, 6);
    db.flush().unwrap();
    wait(&db);
    assert!(db.stats().levels.iter().map(|l| l.compactions).sum::<u64>() > 0);
    let seen: Model = snap
        .iterator(IteratorMode::Start)
        .map(|kv| {
            let (k, v) = kv.unwrap();
            (k.into_vec(), v.into_vec())
        })
        .collect();
    assert_eq!(seen, frozen);
    drop(snap);
    check(&db, &model);
}

#[test]
fn compactions_run_beside_writers_and_readers() {
    let o = options(4);
    let db = DB::open_with_fs(&o, "/db", Arc::new(FaultInjectionFs::new())).unwrap();
    // Each writer owns a key prefix; readers check that a key, once
    // written with round r, never reads back older than r.
    std::thread::scope(|s| {
        for t in 0..3u32 {
            let db = &db;
            s.spawn(move || {
                for round in 0..6u32 {
                    for i in 0..3000u32 {
                        let k = format!("w{t}-{:06}", i * 7919 % 3000);
                        db.put(k.as_bytes(), format!("{round:03}{}", "p".repeat(50)))
                            .unwrap();
                    }
                }
            });
        }
        let db = &db;
        s.spawn(move || {
            let mut last: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
            for i in 0..20_000u32 {
                let k = format!("w{}-{:06}", i % 3, i * 31 % 3000).into_bytes();
                if let Some(v) = db.get(&k).unwrap() {
                    let round = v[..3].to_vec();
                    if let Some(prev) = last.get(&k) {
                        assert!(round >= *prev, "{k:?} went back in time");
                    }
                    last.insert(k, round);
                }
            }
        });
    });
    db.flush().unwrap();
    wait(&db);
    for t in 0..3u32 {
        for i in 0..3000u32 {
            let k = format!("w{t}-{i:06}");
            let v = db.get(k.as_bytes()).unwrap().expect("written");
            assert_eq!(&v[..3], b"005", "{k}");
        }
    }
    let stats = db.stats();
    assert!(stats.table_bytes_written() > 0);
}

#[test]
fn wait_for_compact_times_out_and_flushes_when_asked() {
    let o = options(2);
    let db = DB::open_with_fs(&o, "/db", Arc::new(FaultInjectionFs::new())).unwrap();
    let mut model = Model::new();
    fill(&db, &mut model, 2);
    let mut wait = WaitForCompactOptions::default();
    wait.set_flush(true);
    db.wait_for_compact(&wait).unwrap();
    let stats = db.stats();
    assert_eq!((stats.memtable_entries, stats.immutable_memtables), (0, 0));
    // Work due, and a timeout too short to see it done.
    fill(&db, &mut model, 3);
    wait.set_flush(false).set_timeout(1);
    match db.wait_for_compact(&wait) {
        Ok(()) | Err(lsm_demo::Error::TimedOut(_)) => {}
        Err(e) => panic!("unexpected {e}"),
    }
    check(&db, &model);
}

#[test]
fn writes_slow_down_and_stop_on_level_0_and_still_finish() {
    let mut o = options(2);
    // One level-0 file slows writes down and is never compacted alone, so
    // every memtable switch after the first flush meets a slowdown until a
    // second file arrives; three stop writes.
    o.set_level_zero_file_num_compaction_trigger(2)
        .set_level_zero_slowdown_writes_trigger(1)
        .set_level_zero_stop_writes_trigger(3)
        // A slowdown only delays a switch that comes sooner than a
        // memtable's worth at this rate (64 ms at 1 MiB/s): slow enough
        // that a machine busy with other work still fills faster.
        .set_delayed_write_rate(1 << 20);
    let db = DB::open_with_fs(&o, "/db", Arc::new(FaultInjectionFs::new())).unwrap();
    let mut model = Model::new();
    fill(&db, &mut model, 3);
    let stalls = db.stats().write_stalls;
    assert!(stalls.slowdowns > 0, "{stalls:?}");
    check(&db, &model);
}

/// Write options that fail a write with `Error::WriteStall` instead of
/// waiting out a stall.
fn no_slowdown() -> WriteOptions {
    let mut o = WriteOptions::default();
    o.set_no_slowdown(true);
    o
}

/// Writes `new00000`, `new00001`, ... (200-byte values; 64 KiB of memtable
/// fills within a few hundred) with `no_slowdown`, each acknowledged one
/// into `model`, until one is refused (returned, with its error) or, before
/// a write, `done` holds (`None`).
fn write_until_refused(
    db: &DB,
    model: &mut Model,
    done: impl Fn(&DB) -> bool,
) -> Option<(Vec<u8>, Error)> {
    let no_slowdown = no_slowdown();
    for i in 0..10_000u32 {
        if done(db) {
            return None;
        }
        let (k, v) = (format!("new{i:05}").into_bytes(), vec![b'v'; 200]);
        match db.put_opt(&k, &v, &no_slowdown) {
            Ok(()) => {
                model.insert(k, v);
            }
            Err(e) => return Some((k, e)),
        }
    }
    None
}

/// `WriteOptions::set_no_slowdown` promises `Error::WriteStall` instead
/// of a wait during a stall: a caller that must not block (a request
/// handler with a deadline) relies on it. One level-0 file is a slowdown
/// here and is never compacted alone, so the first write that finds the
/// memtable full meets a stall: with `no_slowdown` it fails at once,
/// writes nothing and has the `rocksdb` crate's kind `Incomplete`; the
/// same write without it waits and goes through.
#[test]
fn a_no_slowdown_write_during_a_stall_fails_with_write_stall() {
    let mut o = options(2);
    o.set_level_zero_file_num_compaction_trigger(8)
        .set_level_zero_slowdown_writes_trigger(1)
        .set_level_zero_stop_writes_trigger(16);
    let db = DB::open_with_fs(&o, "/db", Arc::new(FaultInjectionFs::new())).unwrap();
    db.put(b"first", b"v").unwrap();
    db.flush().unwrap();
    assert_eq!(db.stats().level_files[0], 1);

    let mut model = Model::new();
    model.insert(b"first".to_vec(), b"v".to_vec());
    let (refused, err) = write_until_refused(&db, &mut model, |_| false)
        .expect("the memtable filled, yet no write met the stall");
    assert!(matches!(err, Error::WriteStall), "{err:?}");
    assert_eq!(err.kind(), ErrorKind::Incomplete);
    assert_eq!(db.get(&refused).unwrap(), None, "a refused write wrote");
    assert_eq!(db.stats().level_files[0], 1, "no switch, no flush");
    check(&db, &model);

    // Without `no_slowdown` the same write waits out the slowdown.
    db.put(&refused, b"later").unwrap();
    model.insert(refused, b"later".to_vec());
    check(&db, &model);
}

/// `set_level_zero_slowdown_writes_trigger`: "A value above the stop
/// trigger acts as the stop trigger". A slowdown trigger far above the
/// stop trigger neither slows writes down before level 0 reaches the stop
/// trigger nor lets them go on once it does: one file short of it, a
/// memtable switch goes through; at it, writes stop. `no_slowdown` turns a
/// stall into `Error::WriteStall` instead of a wait, and level 0 holds its
/// files: they are flushed where they do not compact yet, and the
/// database reopened where they do, its table creations held at a gate.
#[test]
fn a_slowdown_trigger_above_the_stop_trigger_acts_as_the_stop_trigger() {
    for files in [2, 3] {
        slowdown_above_stop(files);
    }
}

/// Opens the gate on drop, so that a failed check leaves no
/// compaction waiting at it (the database waits for its compactions).
struct GateOpener(GatedTables);

impl Drop for GateOpener {
    fn drop(&mut self) {
        self.0.open_gate();
    }
}

fn slowdown_above_stop(files: usize) {
    let fs = FaultInjectionFs::new();
    let mut o = options(2);
    o.set_level_zero_file_num_compaction_trigger(8)
        .set_level_zero_stop_writes_trigger(16);
    let db = DB::open_with_fs(&o, "/db", Arc::new(fs.clone())).unwrap();
    let mut model = Model::new();
    // Files over the same range: a compaction must merge them into a new
    // table (a file alone in its range would move down without one).
    for i in 0..files {
        for k in ["a", "z"] {
            let v = format!("file {i}").into_bytes();
            db.put(k, &v).unwrap();
            model.insert(k.as_bytes().to_vec(), v);
        }
        db.flush().unwrap();
    }
    drop(db);

    // Two files compact, three stop writes, and a hundred would slow them.
    let mut o = options(2);
    o.set_level_zero_file_num_compaction_trigger(2)
        .set_level_zero_stop_writes_trigger(3)
        .set_level_zero_slowdown_writes_trigger(100)
        .set_max_write_buffer_number(4); // a frozen memtable stops nothing
    let gated = GatedTables::new(fs.clone());
    let db = DB::open_with_fs(&o, "/db", Arc::new(gated.clone())).unwrap();
    let gate = GateOpener(gated);
    assert_eq!(db.stats().level_files[0], files);
    // Up to the first switch (its flush waits at the gate) or stall.
    let refused = write_until_refused(&db, &mut model, |db| db.stats().immutable_memtables > 0);
    let stats = db.stats();
    assert_eq!(stats.level_files[0], files, "no compaction got through");
    if files < 3 {
        if let Some((_, e)) = refused {
            panic!("{files} level-0 files: a write stalled: {e:?}");
        }
        assert_eq!(stats.immutable_memtables, 1, "{files} files: no switch");
        assert_eq!(
            (stats.write_stalls.slowdowns, stats.write_stalls.stops),
            (0, 0)
        );
    } else {
        let Some((k, err)) = refused else {
            panic!("{files} level-0 files: the memtable switched without a stop");
        };
        assert!(matches!(err, Error::WriteStall), "{err:?}");
        assert_eq!(stats.immutable_memtables, 0, "a stop, before any switch");
        assert_eq!(db.get(&k).unwrap(), None, "a refused write wrote");
        // Once compaction catches up, the write goes through.
        drop(gate);
        db.put(&k, b"later").unwrap();
        model.insert(k, b"later".to_vec());
    }
    check(&db, &model);
}

/// "0 turns the check off" for `set_soft_pending_compaction_bytes_limit`
/// and `set_hard_pending_compaction_bytes_limit`, as RocksDB's users set
/// them: a 0 taken for a limit of 0 bytes would slow every memtable switch
/// down, and stop writes for good (no estimate is ever below 0). The other
/// stall triggers are out of reach here, so writes must never stall;
/// `no_slowdown` turns a stall into `Error::WriteStall` instead of a hang.
#[test]
fn pending_compaction_bytes_limits_of_0_never_stall_writes() {
    let mut o = options(2);
    o.set_soft_pending_compaction_bytes_limit(0)
        .set_hard_pending_compaction_bytes_limit(0)
        .set_max_write_buffer_number(1024)
        .set_level_zero_slowdown_writes_trigger(10_000)
        .set_level_zero_stop_writes_trigger(10_000);
    let db = DB::open_with_fs(&o, "/db", Arc::new(FaultInjectionFs::new())).unwrap();
    let no_slowdown = no_slowdown();
    let mut model = Model::new();
    // About 500 KiB: several memtable switches, flushes and compactions.
    for i in 0..5000u32 {
        let (k, v) = (key(i), format!("{i}-{}", "v".repeat(80)).into_bytes());
        if let Err(e) = db.put_opt(&k, &v, &no_slowdown) {
            panic!("write {i} stalled: {e}");
        }
        model.insert(k, v);
    }
    wait(&db);
    let stats = db.stats();
    assert!(stats.level_files.iter().sum::<usize>() > 1, "{stats:?}");
    assert_eq!(
        (stats.write_stalls.slowdowns, stats.write_stalls.stops),
        (0, 0)
    );
    check(&db, &model);
}

/// `compact_range` as RocksDB's `CompactRange`: the range ends on one level,
/// older versions and tombstones no snapshot needs are gone, a snapshot's
/// view survives, and files outside the range are left alone.
#[test]
fn compact_range_merges_the_range_down_and_keeps_what_snapshots_need() {
    use lsm_demo::properties::{self as p, num_files_at_level};
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_level_zero_file_num_compaction_trigger(20); // no automatic compaction here
    let db = DB::open(&o, dir.path()).unwrap();
    let files_at = |l: usize| {
        db.property_int_value(num_files_at_level(l))
            .unwrap()
            .unwrap()
    };
    let keys = |db: &DB| {
        db.property_int_value(p::ESTIMATE_NUM_KEYS)
            .unwrap()
            .unwrap()
    };

    // Level-0 files far from the range: nothing moves.
    for k in 0..50u32 {
        db.put(format!("x{k:03}"), b"1").unwrap();
    }
    db.flush().unwrap();
    db.compact_range(Some(b"a"), Some(b"b")).unwrap();
    assert_eq!(files_at(0), 1);

    for round in 0..3u32 {
        for k in 0..50u32 {
            db.put(format!("k{k:03}"), round.to_le_bytes()).unwrap();
        }
        db.flush().unwrap();
    }
    let snap = db.snapshot(); // sees every k at round 2
    for k in 0..25u32 {
        db.delete(format!("k{k:03}")).unwrap();
    }
    db.flush().unwrap();
    assert_eq!(files_at(0), 5);
    assert_eq!(keys(&db), 50 + 3 * 50 + 25);

    db.compact_range(Some(b"k"), Some(b"l")).unwrap();
    // Level 0 went down whole (its files overlap), and with it the x file.
    assert_eq!(files_at(0), 0);
    let total: u64 = (1..7).map(files_at).sum();
    assert!(total >= 1);
    // The snapshot still needs round 2 of every k and the tombstones.
    assert_eq!(keys(&db), 50 + 50 + 25);
    for k in 0..50u32 {
        let key = format!("k{k:03}");
        assert_eq!(snap.get(&key).unwrap(), Some(2u32.to_le_bytes().to_vec()));
        let now = db.get(&key).unwrap();
        assert_eq!(now, (k >= 25).then(|| 2u32.to_le_bytes().to_vec()), "{key}");
    }
    drop(snap);
    // The data is on the last level: a plain compact_range leaves it.
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    assert_eq!(keys(&db), 50 + 50 + 25);
    // Rewriting the last level drops what nothing needs any more.
    let mut force = lsm_demo::CompactOptions::default();
    force.set_bottommost_level_compaction(lsm_demo::BottommostLevelCompaction::Force);
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &force)
        .unwrap();
    assert_eq!(keys(&db), 50 + 25);
    assert_eq!(db.iterator(lsm_demo::IteratorMode::Start).count(), 75);
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(db.iterator(lsm_demo::IteratorMode::Start).count(), 75);
}

/// Writers and automatic compactions go on beside a manual compaction.
#[test]
fn compact_range_runs_beside_writers() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(64 << 10);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_target_file_size_base(64 << 10);
    let db = std::sync::Arc::new(DB::open(&o, dir.path()).unwrap());
    let writer = {
        let db = std::sync::Arc::clone(&db);
        std::thread::spawn(move || {
            for i in 0..20_000u32 {
                db.put((i % 5_000).to_be_bytes(), i.to_le_bytes()).unwrap();
            }
        })
    };
    for _ in 0..5 {
        db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    }
    writer.join().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    for k in 0..5_000u32 {
        let last = 15_000 + k;
        assert_eq!(
            db.get(k.to_be_bytes()).unwrap(),
            Some(last.to_le_bytes().to_vec())
        );
    }
}
