use super::*;
use crate::batch::{decode_group, decode_log_trailer};
use crate::env::{FileSystem, PosixFs};
use crate::filename::{FileKind, parse_file_name};
use crate::wal::{DBRecoveryMode, LogReader};
use crate::{DB, Options};

/// The sequence ranges of the records in the directory's logs, log by
/// log in file-number order (trailers left out).
fn logged_ranges(dir: &std::path::Path) -> Vec<Vec<(u64, u64)>> {
    let mut logs: Vec<u64> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(
            |e| match parse_file_name(e.unwrap().file_name().to_str()?) {
                Some(FileKind::Log(n)) => Some(n),
                _ => None,
            },
        )
        .collect();
    logs.sort_unstable();
    logs.iter()
        .map(|&n| {
            let path = log_path(dir, n);
            let mut reader =
                LogReader::open(&PosixFs, &path, DBRecoveryMode::AbsoluteConsistency).unwrap();
            let mut ranges = Vec::new();
            while let Some(record) = reader.next_record().unwrap() {
                if decode_log_trailer(record).is_some() {
                    continue;
                }
                let (first, ops) = decode_group(record).unwrap();
                ranges.push((first, first + ops.len() as u64));
            }
            ranges
        })
        .collect()
}

/// Many writers, some synced (in groups), some unlogged, across
/// memtable switches: every log holds its records in sequence order,
/// and the logs follow each other in it (replay refuses anything else),
/// whether drain passes write the records or their writers do (with a
/// `pwrite` each, into the log file or into two stripes, or, with
/// `allow_mmap_writes`, a copy into the map).
#[test]
fn concurrent_writers_fill_the_logs_in_sequence_order() {
    for buffer in [64 << 10, 64 << 20] {
        for (concurrent, mapped, stripes) in [
            (false, false, 0),
            (true, false, 0),
            (true, false, 2),
            (false, true, 0),
        ] {
            fill_logs_from_concurrent_writers(buffer, concurrent, mapped, stripes);
        }
    }
}

fn fill_logs_from_concurrent_writers(
    buffer: usize,
    concurrent: bool,
    mapped: bool,
    stripes: usize,
) {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(buffer);
    o.set_max_write_buffer_number(64); // keep the logs of frozen memtables a while
    o.set_allow_mmap_writes(mapped);
    o.set_allow_concurrent_log_write(concurrent)
        .set_wal_stripes(stripes);
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(db.shared.copies_directly(), mapped || concurrent);
    let current = log_path(dir.path(), db.shared.log.lock().number);
    let stripe = shared_log_file::stripe_path(&current, stripes.max(1));
    assert_eq!(stripe.exists(), stripes > 0);
    let (threads, per_thread) = (4u64, 1500u64);
    let logged = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (db, logged) = (&db, &logged);
            s.spawn(move || {
                for i in 0..per_thread {
                    let mut wo = WriteOptions::default();
                    wo.set_sync(i % 50 == 0);
                    // Unlogged writes get the memtable flushed on
                    // close; with one memtable, keep its log.
                    wo.disable_wal(t == 3 && i % 2 == 1 && buffer < 1 << 20);
                    let mut batch = WriteBatch::new();
                    for k in 0..=(i % 3) {
                        batch.put(format!("{t}-{i}-{k}"), [b'v'; 40]);
                    }
                    let entries = batch.len() as u64;
                    db.write_opt(batch, &wo).unwrap();
                    if !wo.disable_wal {
                        // Relaxed: a count, read after the writers are joined.
                        logged.fetch_add(entries, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let switched =
        db.stats().level_files.iter().sum::<usize>() + db.stats().immutable_memtables > 0;
    drop(db);
    let logs = logged_ranges(dir.path());
    let all: Vec<(u64, u64)> = logs.iter().flatten().copied().collect();
    assert!(
        all.windows(2).all(|w| w[0].1 <= w[1].0),
        "out of order: {logs:?}"
    );
    assert!(all.iter().all(|(a, b)| a < b));
    if buffer > 1 << 20 {
        // One memtable, one log, every logged entry in it (sync
        // writes share their group's record).
        assert!(!switched);
        assert_eq!(logs.len(), 1);
        let entries: u64 = all.iter().map(|(a, b)| b - a).sum();
        assert_eq!(entries, logged.into_inner());
    } else {
        assert!(switched, "no memtable switch");
    }
}

/// Under the `AbsoluteConsistency` recovery mode writers do not write the
/// log side by side, whatever `allow_concurrent_log_write` says (its docs;
/// DESIGN.md, "The write path"): that mode refuses the end such a log can
/// have after a crash. After writes from several threads the log is
/// therefore an appended one (format version 2, not the positional 3),
/// with no stripe files beside it, and every record went through the
/// queue that one appender at a time drains, in sequence order. The same
/// writes under the default mode, the control, do write side by side
/// (on Linux).
#[test]
fn absolute_consistency_logs_are_appended_one_writer_at_a_time() {
    for mode in [
        DBRecoveryMode::AbsoluteConsistency,
        DBRecoveryMode::PointInTime,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = Options::default();
        o.create_if_missing(true)
            .set_wal_recovery_mode(mode)
            .set_allow_concurrent_log_write(true)
            .set_wal_stripes(2);
        let db = DB::open(&o, dir.path()).unwrap();
        // Off Linux no log is written side by side (no positioned writes).
        let side_by_side = mode != DBRecoveryMode::AbsoluteConsistency && cfg!(target_os = "linux");
        assert_eq!(db.shared.copies_directly(), side_by_side, "{mode:?}");
        let current = log_path(dir.path(), db.shared.log.lock().number);
        let drained_before = db.shared.log_queue.taken();
        let (threads, per_thread) = (4u64, 200u64);
        std::thread::scope(|s| {
            for t in 0..threads {
                let db = &db;
                s.spawn(move || {
                    for i in 0..per_thread {
                        db.put(format!("{t}-{i}"), [b'v'; 40]).unwrap();
                    }
                });
            }
        });
        let writes = threads * per_thread;
        let drained = db.shared.log_queue.taken() - drained_before;
        let version = std::fs::read(&current).unwrap()[crate::wal::MAGIC.len()];
        let stripes: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.contains(".log."))
            .collect();
        if side_by_side {
            assert_eq!(version, crate::wal::POSITIONAL_VERSION);
            assert_eq!(stripes.len(), 2, "{stripes:?}");
            assert_eq!(drained, 0, "writers wrote their own records");
        } else {
            assert_eq!(version, crate::wal::FORMAT_VERSION, "an appended log");
            assert!(stripes.is_empty(), "stripe files: {stripes:?}");
            assert_eq!(drained, writes, "every record through the queue");
            // One log, its records in sequence order, each write once.
            let logs = logged_ranges(dir.path());
            assert_eq!(logs.len(), 1);
            assert!(logs[0].windows(2).all(|w| w[0].1 <= w[1].0), "{logs:?}");
            let entries: u64 = logs[0].iter().map(|(a, b)| b - a).sum();
            assert_eq!(entries, writes);
        }
    }
}

/// Unlogged writes never touch the log queue: a logged write after
/// more unlogged sequence numbers than the queue has slots (its post
/// counts them skipped first), and logged writers beside unlogged ones,
/// are logged in order, and only they are.
#[test]
fn logged_writes_after_many_unlogged_numbers_are_logged_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true)
        .set_allow_concurrent_log_write(false);
    let db = DB::open(&o, dir.path()).unwrap();
    let mut unlogged = WriteOptions::default();
    unlogged.disable_wal(true);
    let window = db.shared.log_queue.capacity() as u64;
    let mut batch = WriteBatch::new();
    for i in 0..1000 {
        batch.put(format!("u{i}"), b"v");
    }
    for _ in 0..window / 1000 + 2 {
        db.write_opt(batch.clone(), &unlogged).unwrap();
    }
    db.put(b"logged-1", b"v").unwrap();
    let first_logged = db.shared.seq.published() - 1;
    assert!(first_logged > window);
    std::thread::scope(|s| {
        for t in 0..2 {
            let (db, unlogged) = (&db, &unlogged);
            s.spawn(move || {
                for i in 0..300 {
                    let wo = if (i + t) % 3 == 0 {
                        unlogged.clone()
                    } else {
                        WriteOptions::default()
                    };
                    db.put_opt(format!("{t}-{i}"), b"v", &wo).unwrap();
                }
            });
        }
    });
    // Read while open: closing flushes unlogged writes, retiring the log.
    let ranges: Vec<(u64, u64)> = logged_ranges(dir.path()).concat();
    drop(db);
    assert_eq!(ranges[0], (first_logged, first_logged + 1));
    assert!(ranges.windows(2).all(|w| w[0].1 <= w[1].0), "out of order");
    assert_eq!(
        ranges.len(),
        1 + 2 * 200,
        "a logged write missing, or an unlogged one logged"
    );
}

#[test]
fn a_batch_larger_than_a_log_record_is_refused_before_it_is_written() {
    let limit = crate::wal::MAX_RECORD_LEN - GROUP_HEADER_LEN;
    assert!(check_batch_size(limit).is_ok());
    let err = check_batch_size(limit + 1).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert!(err.to_string().contains("one log record holds"), "{err}");
}

/// The log that writers write at once, with `hook` called before each
/// `pwrite` (see `env::write_hooks`), into the log file or its stripes.
fn fail_log_writes(db: &DB, hook: impl Fn(u64) -> std::io::Result<()> + Send + Sync + 'static) {
    let log = db.shared.log.lock();
    let shared = log
        .shared
        .as_ref()
        .expect("writers write the log themselves");
    let path = crate::filename::log_path(&db.shared.dir, log.number);
    let hook: crate::env::write_hooks::Hook = std::sync::Arc::new(hook);
    for i in 1..=shared.stripes() {
        crate::env::write_hooks::set(&shared_log_file::stripe_path(&path, i), hook.clone());
    }
    crate::env::write_hooks::set(&path, hook);
}

/// Options for the failure tests: the default log, or the same written
/// into `stripes` stripes.
fn failing_options(stripes: usize) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true).set_wal_stripes(stripes);
    o
}

fn disk_error() -> std::io::Error {
    std::io::Error::from_raw_os_error(libc::EIO)
}

/// A writer whose `pwrite` fails gets the error, the log takes no record
/// after it, and the database reopens at the writes before it.
#[test]
fn a_failed_log_write_fails_its_writer_and_every_later_one() {
    for stripes in [0, 2] {
        failed_log_write_fails_later_ones(stripes);
    }
}

fn failed_log_write_fails_later_ones(stripes: usize) {
    let dir = tempfile::tempdir().unwrap();
    let o = failing_options(stripes);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"before", b"v").unwrap();
    let failed = std::sync::atomic::AtomicBool::new(false);
    fail_log_writes(&db, move |_| {
        // Relaxed: only which call fails matters.
        if failed.swap(true, Ordering::Relaxed) {
            Ok(())
        } else {
            Err(disk_error())
        }
    });
    let err = db.put(b"failed", b"v").unwrap_err();
    assert!(err.to_string().contains("Input/output error"), "{err}");
    assert!(db.put(b"after", b"v").is_err(), "a record after the gap");
    assert_eq!(db.get(b"failed").unwrap(), None);
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(db.get(b"before").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get(b"failed").unwrap(), None);
    assert_eq!(db.get(b"after").unwrap(), None);
}

/// A writer that wrote its record after an earlier writer's, and inserted,
/// while the earlier one was still writing, fails once that one fails: its
/// record follows a gap, which recovery stops at. With `unordered_write`
/// too, though its range was published before its insert.
#[test]
fn a_write_behind_a_failed_one_fails_though_its_own_record_was_written() {
    for (unordered, stripes) in [(false, 0), (true, 0), (false, 2), (true, 2)] {
        write_behind_a_failed_one(unordered, stripes);
    }
}

fn write_behind_a_failed_one(unordered: bool, stripes: usize) {
    use std::sync::mpsc;
    let dir = tempfile::tempdir().unwrap();
    let mut o = failing_options(stripes);
    o.set_unordered_write(unordered);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"before", b"v").unwrap();
    let (entered, first_entered) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let (entered, released) = (
        std::sync::Mutex::new(Some(entered)),
        std::sync::Mutex::new(released),
    );
    // The first write waits inside its `pwrite` until released, then fails;
    // later ones go through.
    fail_log_writes(&db, move |_| {
        let first = entered.lock().unwrap().take();
        match first {
            Some(entered) => {
                entered.send(()).unwrap();
                released.lock().unwrap().recv().unwrap();
                Err(disk_error())
            }
            None => Ok(()),
        }
    });
    std::thread::scope(|s| {
        let first = s.spawn(|| db.put(b"first", b"v"));
        first_entered.recv().unwrap();
        // Reserved after the first, written before it fails.
        let second = s.spawn(|| db.put(b"second", b"v"));
        std::thread::sleep(Duration::from_millis(50));
        release.send(()).unwrap();
        assert!(first.join().unwrap().is_err());
        let second = second.join().unwrap();
        assert!(
            second.is_err(),
            "acknowledged after a gap (unordered {unordered})"
        );
    });
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(db.get(b"before").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get(b"first").unwrap(), None);
}

/// Writers from four threads while one `pwrite` in the middle fails (and
/// stalls a moment, so later writers write past it): every write that
/// returned `Ok` is there after a reopen, ordered or not. The log fails at
/// that record; writes acknowledged before it are all in front of it.
#[test]
fn no_write_acknowledged_behind_a_failed_log_write_is_lost() {
    use std::collections::BTreeSet;
    use std::sync::atomic::AtomicUsize;
    for (unordered, fail_at, stripes) in [
        (false, 1, 0),
        (false, 150, 0),
        (false, 700, 0),
        (true, 150, 0),
        (true, 700, 0),
        (false, 150, 2),
        (true, 700, 3),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = failing_options(stripes);
        o.set_unordered_write(unordered);
        let db = DB::open(&o, dir.path()).unwrap();
        let calls = AtomicUsize::new(0);
        fail_log_writes(&db, move |_| {
            // Relaxed: only the count matters.
            if calls.fetch_add(1, Ordering::Relaxed) + 1 == fail_at {
                std::thread::sleep(Duration::from_millis(5));
                return Err(disk_error());
            }
            Ok(())
        });
        let acknowledged: BTreeSet<String> = std::thread::scope(|s| {
            let writers: Vec<_> = (0..4)
                .map(|t| {
                    let db = &db;
                    s.spawn(move || {
                        (0..300)
                            .map(|i| format!("{t}-{i:03}"))
                            .filter(|k| db.put(k, b"v").is_ok())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            writers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect()
        });
        assert!(acknowledged.len() < 1200, "the failure failed no write");
        drop(db);
        let db = DB::open(&o, dir.path()).unwrap();
        for key in &acknowledged {
            assert!(
                db.get(key).unwrap().is_some(),
                "{key} acknowledged and lost (unordered {unordered}, failed at {fail_at})"
            );
        }
    }
}

#[test]
fn writeback_stays_a_step_behind_the_records() {
    assert_eq!(writeback_target(10 << 20, 0), None, "0 turns it off");
    assert_eq!(writeback_target(150, 100), None, "in the first step");
    assert_eq!(writeback_target(199, 100), None);
    assert_eq!(writeback_target(200, 100), Some(100));
    assert_eq!(writeback_target(299, 100), Some(100));
    assert_eq!(writeback_target(1234, 100), Some(1100));
}

/// Records the ranges whose writeback a log started.
#[derive(Debug, Default)]
struct WritebackLog(std::sync::Mutex<Vec<Range<u64>>>);

impl FileSync for WritebackLog {
    fn sync(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn start_writeback(&self, offset: u64, len: u64) -> std::io::Result<()> {
        self.0.lock().unwrap().push(offset..offset + len);
        Ok(())
    }
}

/// Each writeback starts where the last one ended, whatever steps the
/// records crossed meanwhile, and none starts twice.
#[test]
fn writeback_covers_the_log_once_in_order() {
    let fs = crate::env::FaultInjectionFs::new();
    let writer = LogWriter::new(fs.create(std::path::Path::new("log")).unwrap()).unwrap();
    let mut log = LogFile::new(writer, 7).unwrap();
    let started = Arc::new(WritebackLog::default());
    log.syncer = Some(started.clone());
    for end in [50, 150, 199, 200, 260, 299, 720, 730, 801, 805] {
        if let Some(due) = log.writeback_due(end, 100) {
            due.start();
        }
    }
    assert_eq!(*started.0.lock().unwrap(), [0..100, 100..600, 600..700]);
}

/// A writer that finds the block pool low asks the flush thread to warm
/// it without waiting for the state lock: a memtable switch holds that lock
/// while it waits for `unordered_write` inserts, and an insert that waited
/// for it would never end. With the lock held elsewhere, the request is
/// withdrawn, to be made again at a later check.
#[test]
fn a_warm_request_never_waits_for_the_state_lock() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true).set_unordered_write(true);
    let db = DB::open(&o, dir.path()).unwrap();
    // Relaxed, here and below: the writer thread is joined before the
    // last load, and nothing else sets it while the test holds the lock.
    db.shared.warm_wanted.store(false, Ordering::Relaxed);
    assert_eq!(db.shared.block_pool.held_bytes(), 0, "the pool is low");
    let (done, written) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        let held = db.shared.state.lock();
        s.spawn(|| {
            // Past the 64 KiB after which a writer checks the sizes.
            db.put(b"big", vec![7u8; 80 << 10]).unwrap();
            done.send(()).unwrap();
        });
        let waited = written.recv_timeout(Duration::from_secs(20));
        drop(held);
        assert!(waited.is_ok(), "the write waited for the state lock");
    });
    assert!(!db.shared.warm_wanted.load(Ordering::Relaxed), "withdrawn");
    assert_eq!(db.get(b"big").unwrap().map(|v| v.len()), Some(80 << 10));
}

/// With `unordered_write` a write is published before its insert ends, but
/// it returns only once every write before it is published too, so its
/// writer reads it at once, with or without the log: here an earlier
/// writer is held between its reservation and its finish.
#[test]
fn an_unordered_write_returns_once_it_is_visible() {
    for (disable_wal, concurrent_log) in
        [(true, true), (true, false), (false, true), (false, false)]
    {
        let dir = tempfile::tempdir().unwrap();
        let mut o = Options::default();
        o.create_if_missing(true)
            .set_unordered_write(true)
            .set_allow_concurrent_log_write(concurrent_log);
        let db = DB::open(&o, dir.path()).unwrap();
        let held = db.shared.seq.reserve(1);
        let (done, returned) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut wo = WriteOptions::default();
                wo.disable_wal(disable_wal);
                db.put_opt(b"k", b"v", &wo).unwrap();
                done.send(db.get(b"k").unwrap()).unwrap();
            });
            let early = returned.recv_timeout(Duration::from_millis(200));
            db.shared.seq.finish(held);
            assert!(
                early.is_err(),
                "returned before an earlier write was published, reading {early:?} \
                 (disable_wal {disable_wal}, concurrent log {concurrent_log})"
            );
            let read = returned.recv_timeout(Duration::from_secs(20)).unwrap();
            assert_eq!(read.as_deref(), Some(&b"v"[..]));
        });
    }
}
