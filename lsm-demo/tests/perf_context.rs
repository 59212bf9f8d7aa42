//! `lsm_demo::perf`: each thread's counters move with that thread's calls,
//! by the level it set, and each part of a write and a point read lands in
//! its own metric.

use std::path::Path;
use std::sync::Arc;

use lsm_demo::env::{FaultInjectionFs, FileSystem};
use lsm_demo::key::{InternalKeyComparator, user_key};
use lsm_demo::perf::{PerfContext, PerfMetric, PerfStatsLevel, set_perf_stats};
use lsm_demo::table::Table;
use lsm_demo::{DB, Options, WriteOptions};

fn open(o: &Options) -> DB {
    DB::open_with_fs(o, "/db", Arc::new(FaultInjectionFs::new())).unwrap()
}

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o
}

/// The calling thread's counters, reset, measuring at `level`.
fn measuring(level: PerfStatsLevel) -> PerfContext {
    set_perf_stats(level);
    let mut ctx = PerfContext::default();
    ctx.reset();
    ctx
}

fn all(ctx: &PerfContext) -> Vec<(PerfMetric, u64)> {
    PerfMetric::ALL
        .iter()
        .map(|&m| (m, ctx.metric(m)))
        .collect()
}

#[test]
fn nothing_is_measured_by_default_or_when_disabled() {
    let db = open(&options());
    for level in [
        None,
        Some(PerfStatsLevel::Disable),
        Some(PerfStatsLevel::OutOfBound),
    ] {
        std::thread::scope(|s| {
            s.spawn(|| {
                // A fresh thread measures nothing until it asks.
                let ctx = match level {
                    None => PerfContext::default(),
                    Some(l) => measuring(l),
                };
                db.put(b"k", b"v").unwrap();
                db.get(b"k").unwrap();
                assert!(all(&ctx).iter().all(|&(_, v)| v == 0), "{:?}", all(&ctx));
                assert_eq!(ctx.report(true), "");
            });
        });
    }
}

#[test]
fn counts_take_no_times_and_times_take_counts_too() {
    let db = open(&options());
    db.put(b"k", b"v").unwrap();
    let ctx = measuring(PerfStatsLevel::EnableCount);
    db.get(b"k").unwrap();
    assert_eq!(ctx.metric(PerfMetric::GetFromMemtableCount), 1);
    assert_eq!(ctx.metric(PerfMetric::GetFromMemtableTime), 0);
    let ctx = measuring(PerfStatsLevel::EnableTime);
    db.get(b"k").unwrap();
    assert_eq!(ctx.metric(PerfMetric::GetFromMemtableCount), 1);
    assert!(ctx.metric(PerfMetric::GetFromMemtableTime) > 0);
    set_perf_stats(PerfStatsLevel::Disable);
}

#[test]
fn a_write_splits_into_its_log_its_insert_and_the_rest() {
    let db = open(&options());
    let ctx = measuring(PerfStatsLevel::EnableTimeExceptForMutex);
    db.put(b"k", b"v").unwrap();
    for m in [
        PerfMetric::WriteWalTime,
        PerfMetric::WriteMemtableTime,
        PerfMetric::WritePreAndPostProcessTime,
    ] {
        assert!(ctx.metric(m) > 0, "{}", ctx.report(false));
    }
    // Nothing stalled, switched or read.
    for m in [
        PerfMetric::WriteDelayTime,
        PerfMetric::WriteSchedulingFlushesCompactionsTime,
        PerfMetric::GetFromMemtableCount,
    ] {
        assert_eq!(ctx.metric(m), 0, "{}", ctx.report(false));
    }
    // Without the log, no log time.
    let mut ctx = measuring(PerfStatsLevel::EnableTime);
    let mut no_log = WriteOptions::default();
    no_log.disable_wal(true);
    db.put_opt(b"k", b"v2", &no_log).unwrap();
    assert_eq!(ctx.metric(PerfMetric::WriteWalTime), 0);
    assert!(ctx.metric(PerfMetric::WriteMemtableTime) > 0);
    // A sync write's leader logs and syncs for its group.
    ctx.reset();
    let mut sync = WriteOptions::default();
    sync.set_sync(true);
    db.put_opt(b"k", b"v3", &sync).unwrap();
    assert!(ctx.metric(PerfMetric::WriteWalTime) > 0);
    assert!(ctx.metric(PerfMetric::WriteMemtableTime) > 0);
    let report = ctx.report(true);
    assert!(report.starts_with("write_wal_time = "), "{report}");
    assert!(report.contains(", write_memtable_time = "), "{report}");
    assert!(!report.contains(" = 0"), "{report}");
    set_perf_stats(PerfStatsLevel::Disable);
}

#[test]
fn other_threads_writes_are_theirs() {
    let db = open(&options());
    let ctx = measuring(PerfStatsLevel::EnableTime);
    std::thread::scope(|s| {
        s.spawn(|| {
            let theirs = measuring(PerfStatsLevel::EnableTime);
            for i in 0..100u32 {
                db.put(i.to_be_bytes(), b"v").unwrap();
            }
            assert!(theirs.metric(PerfMetric::WriteMemtableTime) > 0);
        });
    });
    assert_eq!(ctx.metric(PerfMetric::WriteMemtableTime), 0);
    set_perf_stats(PerfStatsLevel::Disable);
}

#[test]
fn a_point_read_from_tables_counts_blocks_and_filters() {
    let db = open(&options());
    for i in 0..1000u32 {
        db.put(format!("key{i:05}"), [7u8; 100]).unwrap();
    }
    db.flush().unwrap();
    let mut ctx = measuring(PerfStatsLevel::EnableTime);
    assert!(db.get(b"key00500").unwrap().is_some());
    // The memtable was searched first, then the table: its filter let the
    // key in and a data block was read.
    assert_eq!(ctx.metric(PerfMetric::GetFromMemtableCount), 1);
    assert!(ctx.metric(PerfMetric::GetFromOutputFilesTime) > 0);
    assert_eq!(ctx.metric(PerfMetric::BloomSstHitCount), 1);
    assert!(ctx.metric(PerfMetric::BlockReadCount) >= 1);
    assert!(ctx.metric(PerfMetric::BlockReadByte) > 100);
    assert!(ctx.metric(PerfMetric::BlockReadTime) > 0);
    // Absent keys within the table's range: nearly all are ruled out by
    // the filter without a block read.
    ctx.reset();
    for i in 0..100u32 {
        assert!(db.get(format!("key{i:05}x")).unwrap().is_none());
    }
    let (hits, misses) = (
        ctx.metric(PerfMetric::BloomSstHitCount),
        ctx.metric(PerfMetric::BloomSstMissCount),
    );
    assert_eq!(hits + misses, 100);
    assert!(misses >= 90, "{}", ctx.report(false));
    assert!(ctx.metric(PerfMetric::BlockReadCount) <= hits * 2);
    set_perf_stats(PerfStatsLevel::Disable);
}

/// `Options::set_bloom_bits_per_key(0)` "turns filters off": the table
/// is built without a filter (it lets every key in) and point reads
/// consult none, so reads of absent keys within the table's range count
/// neither a filter hit nor a miss and each reads a data block. The same
/// reads with the default setting, the control, are nearly all ruled out
/// by the filter.
#[test]
fn bloom_bits_per_key_0_builds_and_consults_no_filter() {
    for bits in [None, Some(0)] {
        let mut o = options();
        if let Some(bits) = bits {
            o.set_bloom_bits_per_key(bits);
        }
        let fs = FaultInjectionFs::new();
        let db = DB::open_with_fs(&o, "/db", Arc::new(fs.clone())).unwrap();
        for i in 0..1000u32 {
            db.put(format!("key{i:05}"), [7u8; 100]).unwrap();
        }
        db.flush().unwrap();
        let absent: Vec<String> = (0..100u32).map(|i| format!("key{i:05}x")).collect();
        let ctx = measuring(PerfStatsLevel::EnableCount);
        for k in &absent {
            assert!(db.get(k).unwrap().is_none());
        }
        let (hits, misses, blocks) = (
            ctx.metric(PerfMetric::BloomSstHitCount),
            ctx.metric(PerfMetric::BloomSstMissCount),
            ctx.metric(PerfMetric::BlockReadCount),
        );
        set_perf_stats(PerfStatsLevel::Disable);
        let tables: Vec<String> = fs
            .list_dir(Path::new("/db"))
            .unwrap()
            .into_iter()
            .filter(|name| name.ends_with(".sst"))
            .collect();
        assert_eq!(tables.len(), 1, "{tables:?}");
        let table = Table::open_file(
            &fs,
            &Path::new("/db").join(&tables[0]),
            Arc::new(InternalKeyComparator::default()),
            user_key,
        )
        .unwrap();
        let let_in = absent
            .iter()
            .filter(|k| table.may_contain(k.as_bytes()))
            .count();
        let report = ctx.report(false);
        if bits == Some(0) {
            assert_eq!((hits, misses), (0, 0), "{report}");
            assert!(blocks >= 100, "{report}");
            assert_eq!(let_in, 100, "the table has a filter");
            assert_eq!(table.properties().bloom_bits_per_key, 0);
        } else {
            assert_eq!(hits + misses, 100, "{report}");
            assert!(misses >= 90, "{report}");
            assert!(let_in <= 10, "{let_in} of 100 let in");
            assert_eq!(table.properties().bloom_bits_per_key, 10);
        }
    }
}

#[test]
fn switches_and_slowdowns_are_timed_apart() {
    let mut o = options();
    // Tiny memtables switch often; one level-0 file slows writes down
    // until compaction meets a second (the setting of `leveled.rs`'s
    // slowdown test).
    o.set_write_buffer_size(64 << 10)
        .set_target_file_size_base(64 << 10)
        .set_max_bytes_for_level_base(128 << 10)
        .set_max_bytes_for_level_multiplier(4.0)
        .set_max_background_jobs(2)
        .set_level_zero_file_num_compaction_trigger(2)
        .set_level_zero_slowdown_writes_trigger(1)
        .set_level_zero_stop_writes_trigger(3)
        .set_delayed_write_rate(1 << 20);
    let db = open(&o);
    let ctx = measuring(PerfStatsLevel::EnableTime);
    let started = std::time::Instant::now();
    for round in 0..3u32 {
        for i in 0..4000u32 {
            let k = i.wrapping_mul(2_654_435_761) % 1_000_000;
            let v = format!("{round}-{i}-{}", "v".repeat(60));
            db.put(format!("key{k:08}"), v).unwrap();
        }
    }
    let took = started.elapsed().as_nanos() as u64;
    let stalls = db.stats().write_stalls;
    assert!(stalls.slowdowns > 0, "{stalls:?}");
    assert!(
        ctx.metric(PerfMetric::WriteDelayTime) > 0,
        "{}",
        ctx.report(false)
    );
    assert!(ctx.metric(PerfMetric::WriteSchedulingFlushesCompactionsTime) > 0);
    // The parts and the rest of the writes never overlap: together they
    // took no longer than the loop.
    let parts: u64 = [
        PerfMetric::WriteWalTime,
        PerfMetric::WriteMemtableTime,
        PerfMetric::WriteDelayTime,
        PerfMetric::WriteSchedulingFlushesCompactionsTime,
        PerfMetric::WritePreAndPostProcessTime,
    ]
    .iter()
    .map(|&m| ctx.metric(m))
    .sum();
    assert!(0 < parts && parts <= took, "{parts} > {took}");
    set_perf_stats(PerfStatsLevel::Disable);
}
