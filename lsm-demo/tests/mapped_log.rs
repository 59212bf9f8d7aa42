//! The log written through a memory map (`allow_mmap_writes`): every
//! acknowledged write comes back on open, after a clean close and after a
//! process that died left its last mapped window as zeros. (Kills of a real
//! process: `.ci/crashtest.sh`, `--mmap_write=1`.)

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use lsm_demo::wal::{DBRecoveryMode, read_all};
use lsm_demo::{DB, Options, RecoveryStats, WriteBatch, WriteOptions};

mod common;
use common::{cut_closed_trailer, log_files, scan};

fn options() -> Options {
    let mut o = Options::default();
    // Small memtables: the writes below switch logs many times.
    o.create_if_missing(true)
        .set_allow_mmap_writes(true)
        .set_write_buffer_size(64 << 10);
    o
}

/// A database's keys and values.
type Contents = BTreeMap<Vec<u8>, Vec<u8>>;

fn contents(db: &DB) -> Contents {
    scan(db).into_iter().collect()
}

/// Four threads of puts, every seventh synced; returns what they wrote.
fn fill(db: &DB, round: u8) -> BTreeMap<Vec<u8>, Vec<u8>> {
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..4u8)
            .map(|t| {
                s.spawn(move || {
                    let mut wrote = BTreeMap::new();
                    for i in 0..1500u32 {
                        let key = format!("{t}-{i:05}").into_bytes();
                        let value = vec![round ^ t ^ i as u8; 100 + i as usize % 50];
                        let mut wo = WriteOptions::default();
                        wo.set_sync(i % 7 == 0);
                        db.put_opt(&key, &value, &wo).unwrap();
                        wrote.insert(key, value);
                    }
                    wrote
                })
            })
            .collect();
        writers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    })
}

#[test]
fn mapped_logs_replay_after_a_close_and_after_a_zero_tail() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options();
    let db = DB::open(&opts, dir.path()).unwrap();
    let mut expected = fill(&db, 1);
    assert_eq!(contents(&db), expected);
    drop(db);

    // A clean close (and a move to a new log) cuts the log back to its
    // records and syncs: no log ends in zeros that a power loss could keep.
    for log in log_files(dir.path()) {
        let read = read_all(
            std::fs::read(&log).unwrap(),
            DBRecoveryMode::AbsoluteConsistency,
        );
        assert!(read.unwrap().tail.is_none(), "{}", log.display());
    }
    let db = DB::open(&opts, dir.path()).unwrap();
    assert_eq!(contents(&db), expected);
    expected.extend(fill(&db, 2));
    drop(db);

    // What a killed process leaves: zeros after the last record of the
    // newest log (the rest of its mapped window).
    let newest = log_files(dir.path()).pop().unwrap();
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(&newest)
        .unwrap();
    log.write_all(&vec![0; 300 << 10]).unwrap();
    drop(log);
    let db = DB::open(&opts, dir.path()).unwrap();
    assert_eq!(contents(&db), expected);
    expected.extend(fill(&db, 3));
    assert_eq!(contents(&db), expected);
}

/// A copy of the database directory `from` (its files, not `lost/`).
fn copy_of(from: &Path) -> tempfile::TempDir {
    let to = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.path().join(entry.file_name())).unwrap();
        }
    }
    to
}

/// The value of write `i` in the tests below: found in the log by its
/// first 12 bytes.
fn value(i: u32) -> Vec<u8> {
    format!("value-{i:06}-{}", "v".repeat(80)).into_bytes()
}

/// The mode that drops only a torn tail.
const TOLERATE: DBRecoveryMode = DBRecoveryMode::TolerateCorruptedTailRecords;

/// What the puts of `range` wrote (see `database_of`).
fn written(range: std::ops::Range<u32>) -> Contents {
    range
        .map(|i| (format!("k{i:03}").into_bytes(), value(i)))
        .collect()
}

/// A mapped-log database in a fresh directory holding `puts` single puts
/// (write `i`: key `k{i:03}`, `value(i)`) and then `batches`, closed;
/// returns the directory, its newest log and the log's bytes.
fn database_of(puts: u32, batches: Vec<WriteBatch>) -> (tempfile::TempDir, PathBuf, Vec<u8>) {
    database_written(puts, batches, true)
}

/// `database_of`, its log mapped or (`mapped` false) written with a
/// `pwrite` per writer into the log file itself (no stripes).
fn database_written(
    puts: u32,
    batches: Vec<WriteBatch>,
    mapped: bool,
) -> (tempfile::TempDir, PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true)
        .set_allow_mmap_writes(mapped)
        .set_wal_stripes(0);
    let db = DB::open(&opts, dir.path()).unwrap();
    for i in 0..puts {
        db.put(format!("k{i:03}"), value(i)).unwrap();
    }
    for batch in batches {
        db.write(batch).unwrap();
    }
    drop(db);
    let newest = log_files(dir.path()).pop().unwrap();
    let bytes = match mapped {
        // A process that died leaves no trailer of a closed log.
        false => cut_closed_trailer(&newest),
        true => std::fs::read(&newest).unwrap(),
    };
    (dir, newest, bytes)
}

/// Where write `i`'s value lies in `log`.
fn value_at(log: &[u8], i: u32) -> usize {
    let needle = &value(i)[..12];
    log.windows(12)
        .position(|w| w == needle)
        .unwrap_or_else(|| panic!("write {i} is in the log"))
}

/// What a crash can leave while writers copy into a mapped log: a
/// database of `puts` puts (see `database_of`) whose second-to-last record
/// is torn, the last whole after it, then `zeros` zero bytes. Returns the
/// directory, the log, the log's bytes and where the torn value starts.
fn writes_in_flight(puts: u32, zeros: usize) -> (tempfile::TempDir, PathBuf, Vec<u8>, usize) {
    writes_in_flight_in(puts, zeros, true)
}

/// `writes_in_flight` in a log mapped or (`mapped` false) written with a
/// `pwrite` per writer.
fn writes_in_flight_in(
    puts: u32,
    zeros: usize,
    mapped: bool,
) -> (tempfile::TempDir, PathBuf, Vec<u8>, usize) {
    let (dir, log, mut bytes) = database_written(puts, Vec::new(), mapped);
    let torn = value_at(&bytes, puts - 2);
    assert!(value_at(&bytes, puts - 1) > torn);
    bytes[torn..torn + 12].fill(0);
    bytes.extend(vec![0; zeros]);
    std::fs::write(&log, &bytes).unwrap();
    (dir, log, bytes, torn)
}

/// Opens `dir` in `mode` with the mapped log: the contents and what
/// recovery counted, or the error.
fn reopen(dir: &Path, mode: DBRecoveryMode) -> lsm_demo::Result<(Contents, RecoveryStats)> {
    let mut opts = Options::default();
    opts.set_allow_mmap_writes(true).set_wal_recovery_mode(mode);
    let db = DB::open(&opts, dir)?;
    Ok((contents(&db), db.stats().recovery))
}

/// Writers copy into the mapped log at once, so a process that dies while
/// an earlier writer is still copying can leave that writer's record torn
/// (or still zeros) with a later writer's whole record after it, then the
/// zeros of the rest of the growth. Neither write was acknowledged (a
/// write returns once every earlier one is in): recovery takes this for a
/// torn tail, drops both, and keeps the log out of `lost/`, in the modes
/// that drop a torn tail; `SkipAnyCorruptedRecord` replays the whole
/// record after the torn one, as its documentation says.
#[test]
fn writes_in_flight_at_a_crash_are_a_torn_tail() {
    // Write 98's record torn, 99's whole after it, then zeros.
    let (dir, _, _, _) = writes_in_flight(100, 64 << 10);

    let salvage = copy_of(dir.path());
    let (kept, _) = reopen(salvage.path(), DBRecoveryMode::SkipAnyCorruptedRecord).unwrap();
    let mut expected = written(0..98);
    expected.extend(written(99..100));
    assert_eq!(kept, expected);

    let tolerant = copy_of(dir.path());
    let (kept, stats) = reopen(tolerant.path(), TOLERATE).unwrap();
    assert_eq!(kept, written(0..98));
    assert!(stats.files_set_aside.is_empty(), "{stats:?}");

    let (kept, stats) = reopen(dir.path(), DBRecoveryMode::PointInTime).unwrap();
    assert_eq!(kept, written(0..98));
    assert_eq!(stats.damaged_ranges, 1);
    assert!(stats.files_set_aside.is_empty(), "{stats:?}");
}

/// A log that writers write with a `pwrite` each (the default) ends where
/// the furthest write ended: after a crash, a record torn (or still zeros)
/// then a later writer's whole record, and the end of the file right
/// there, or a record cut short after it. Its header says how it was
/// written, so recovery takes this for a torn tail, dropped as the zeros
/// of a mapped log are; garbage there instead is damage. A mapped log
/// ends in zeros, so in it any of these endings is damage.
#[test]
fn writes_in_flight_that_end_the_file_are_a_torn_tail() {
    for mapped in [false, true] {
        let (dir, log, bytes, _) = writes_in_flight_in(100, 0, mapped);
        // The last record, write 99's, header and all.
        let mut reader =
            lsm_demo::wal::LogReader::new(bytes.clone(), DBRecoveryMode::SkipAnyCorruptedRecord)
                .unwrap();
        let version = reader.version();
        while reader.next_record().unwrap().is_some() {}
        assert_eq!(version, Some(if mapped { 2 } else { 3 }));
        let record_99 = bytes[reader.last_record_offset() as usize..].to_vec();
        for (name, after, in_flight) in [
            ("the end", Vec::new(), true),
            ("part of a header", record_99[..7].to_vec(), true),
            (
                "a payload cut short",
                record_99[..record_99.len() - 3].to_vec(),
                true,
            ),
            ("garbage", vec![0xab; 40], false),
        ] {
            let torn_tail = in_flight && !mapped;
            let shape = copy_of(dir.path());
            let log = shape.path().join(log.file_name().unwrap());
            std::fs::write(&log, [&bytes[..], &after[..]].concat()).unwrap();
            let mut opts = Options::default();
            opts.set_allow_mmap_writes(mapped);
            let report =
                lsm_demo::repair::verify_with_fs(&opts, shape.path(), &lsm_demo::env::PosixFs)
                    .unwrap();
            assert_eq!(
                report.is_clean(),
                torn_tail,
                "{name}, mapped {mapped}: {report}"
            );
            for mode in [DBRecoveryMode::PointInTime, TOLERATE] {
                let mut opts = Options::default();
                opts.set_allow_mmap_writes(mapped)
                    .set_wal_recovery_mode(mode);
                let opened = DB::open(&opts, copy_of(shape.path()).path())
                    .map(|db| (contents(&db), db.stats().recovery));
                let what = format!("{name}, mapped {mapped}, {mode:?}");
                if torn_tail {
                    let (kept, stats) = opened.unwrap();
                    assert_eq!(kept, written(0..98), "{what}");
                    assert!(stats.files_set_aside.is_empty(), "{what}: {stats:?}");
                } else if mode == TOLERATE {
                    assert!(opened.is_err(), "{what}");
                } else {
                    let (kept, stats) = opened.unwrap();
                    assert_eq!(kept, written(0..98), "{what}");
                    assert!(!stats.files_set_aside.is_empty(), "{what}: {stats:?}");
                }
            }
        }
    }
}

/// A writer that died in the middle of its copy, the last in the log: the
/// record's first part, then zeros. A torn tail, like zeros alone.
#[test]
fn a_copy_cut_short_at_the_end_is_a_torn_tail() {
    let (dir, log, mut bytes) = database_of(50, Vec::new());
    let cut = value_at(&bytes, 49) + 20;
    bytes.truncate(cut);
    bytes.extend(vec![0; 64 << 10]);
    std::fs::write(&log, &bytes).unwrap();

    let tolerant = copy_of(dir.path());
    let (kept, _) = reopen(tolerant.path(), TOLERATE).unwrap();
    assert_eq!(kept, written(0..49));
    let (kept, stats) = reopen(dir.path(), DBRecoveryMode::PointInTime).unwrap();
    assert_eq!(kept, written(0..49));
    assert!(stats.files_set_aside.is_empty(), "{stats:?}");
}

/// Whole records after the damage that start further apart than writes in
/// flight can (the sequencer's window, 65,536 numbers) mean damage: the
/// point in time ends there and the log is set aside as evidence, and
/// `TolerateCorruptedTailRecords` refuses to open.
#[test]
fn records_after_damage_beyond_the_window_are_damage() {
    // Write 20 (to tear), a batch of 70,000 entries (one record, 70,000
    // numbers), then one more write: the last two start more than 65,536
    // numbers apart.
    let mut large = WriteBatch::new();
    for i in 0..70_000u32 {
        large.put(format!("b{i:05}"), b"");
    }
    let mut after = WriteBatch::new();
    after.put(b"after", b"the large batch");
    let (dir, log, mut bytes) = database_of(21, vec![large, after]);
    let torn = value_at(&bytes, 20);
    bytes[torn..torn + 12].fill(0);
    std::fs::write(&log, &bytes).unwrap();
    assert_damage(dir.path(), written(0..20));
}

/// Damage, not a torn tail: `TolerateCorruptedTailRecords` refuses (tried
/// on a copy), `PointInTime` keeps `kept` and sets the log aside.
fn assert_damage(dir: &Path, kept: Contents) {
    let tolerant = copy_of(dir);
    let err = reopen(tolerant.path(), TOLERATE).expect_err("refused");
    assert!(matches!(err, lsm_demo::Error::Corruption(_)), "{err}");
    let (found, stats) = reopen(dir, DBRecoveryMode::PointInTime).unwrap();
    assert_eq!(found, kept);
    assert_eq!(stats.files_set_aside.len(), 1, "{stats:?}");
}

/// A mapped log that was ended (a clean close cuts it to its records) and
/// then damaged before whole records: not a crash's copies in flight, which
/// leave the rest of the growth as zeros at the end. Damage: the point in
/// time ends there, the log is set aside, `TolerateCorruptedTailRecords`
/// refuses.
#[test]
fn damage_in_a_log_that_was_ended_is_damage() {
    // Damage before the last record, then damage in the last record.
    for damaged in [98, 99] {
        let (dir, log, mut bytes) = database_of(100, Vec::new());
        let at = value_at(&bytes, damaged);
        bytes[at..at + 12].fill(0);
        std::fs::write(&log, &bytes).unwrap();
        assert_damage(dir.path(), written(0..damaged));
    }
}

/// `verify` on the directory a crash left: the zeros after the last log's
/// records (and a new log that a cut-short switch left unused) are a
/// crash's leftovers, reported as a torn tail, not damage.
#[test]
fn verify_reports_a_crash_s_zeros_as_a_torn_tail() {
    use lsm_demo::env::{FileSystem, PosixFs};
    use lsm_demo::repair::verify_with_fs;
    for switch_cut_short in [false, true] {
        let (dir, log, mut bytes) = database_of(20, Vec::new());
        let records = bytes.len() as u64;
        bytes.extend(vec![0; 64 << 10]);
        std::fs::write(&log, &bytes).unwrap();
        if switch_cut_short {
            let number: u64 = log.file_stem().unwrap().to_str().unwrap().parse().unwrap();
            let new = dir.path().join(format!("{:06}.log", number + 1));
            drop(PosixFs.create(&new).unwrap());
            std::fs::write(&new, vec![0; 1 << 20]).unwrap();
        }
        let report = verify_with_fs(&Options::default(), dir.path(), &PosixFs).unwrap();
        assert!(report.is_clean(), "{report}");
        assert_eq!(report.torn_tails, [(log.clone(), 64 << 10)], "{report}");
        assert!(PosixFs.file_size(&log).unwrap() > records);
        let (kept, _) = reopen(dir.path(), DBRecoveryMode::PointInTime).unwrap();
        assert_eq!(kept, written(0..20));
    }
}

/// `verify` told the log was mapped takes writes in flight (a torn record,
/// a whole one after it, zeros) for a torn tail, as recovery does; not
/// told, for damage.
#[test]
fn verify_told_the_log_is_mapped_reports_writes_in_flight_as_a_torn_tail() {
    use lsm_demo::env::PosixFs;
    use lsm_demo::repair::verify_with_fs;
    let (dir, log, bytes, torn) = writes_in_flight(100, 64 << 10);
    let mut mapped = Options::default();
    mapped.set_allow_mmap_writes(true);
    let report = verify_with_fs(&mapped, dir.path(), &PosixFs).unwrap();
    assert!(report.is_clean(), "{report}");
    let from_value = bytes.len() - torn;
    assert_eq!(report.torn_tails.len(), 1, "{report}");
    assert!(report.torn_tails[0].1 > from_value as u64, "{report}");
    let report = verify_with_fs(&Options::default(), dir.path(), &PosixFs).unwrap();
    assert!(!report.is_clean(), "{report}");
    assert_eq!(report.damaged[0].0, log);
}

/// Repairs `dir` with or without `allow_mmap_writes`: the report, and the
/// logs it set aside.
fn repair(dir: &Path, mapped: bool) -> (lsm_demo::repair::RepairReport, Vec<PathBuf>) {
    let mut opts = Options::default();
    opts.set_allow_mmap_writes(mapped);
    let report = lsm_demo::repair::repair_with_fs(&opts, dir, &lsm_demo::env::PosixFs).unwrap();
    let logs = report
        .files_set_aside
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .cloned()
        .collect();
    (report, logs)
}

/// `repair` reads the end of the last log that took writes as recovery
/// does: the zeros a crash leaves after a mapped log's records, an unused
/// new log after it, and writes still in flight are a torn tail, dropped
/// and reported, and the log is not set aside. Told the log was not
/// mapped, repair salvages the whole record after the torn one and sets
/// the log aside as damaged.
#[test]
fn repair_drops_a_crash_s_torn_tail_and_writes_in_flight() {
    // Zeros after the records, then a new log that a cut-short switch left
    // unused.
    let (dir, log, mut bytes) = database_of(20, Vec::new());
    bytes.extend(vec![0; 64 << 10]);
    std::fs::write(&log, &bytes).unwrap();
    let number: u64 = log.file_stem().unwrap().to_str().unwrap().parse().unwrap();
    let unused = dir.path().join(format!("{:06}.log", number + 1));
    std::fs::write(&unused, vec![0; 1 << 20]).unwrap();
    let logs = log_files(dir.path()).len() as u64;
    let (report, set_aside) = repair(dir.path(), true);
    assert_eq!(report.torn_tails, [(log.clone(), 64 << 10)], "{report}");
    assert_eq!((report.records_dropped, report.bytes_dropped), (0, 0));
    assert!(set_aside.is_empty(), "{report}");
    assert_eq!(report.logs_replayed, logs - 1, "{report}");
    let (kept, _) = reopen(dir.path(), DBRecoveryMode::PointInTime).unwrap();
    assert_eq!(kept, written(0..20));

    // Write 98's record torn, 99's whole after it, then zeros.
    let (dir, log, _, _) = writes_in_flight(100, 64 << 10);
    let salvage = copy_of(dir.path());

    let (report, set_aside) = repair(dir.path(), true);
    assert_eq!(report.torn_tails.len(), 1, "{report}");
    assert_eq!(report.torn_tails[0].0, log);
    assert!(report.torn_tails[0].1 > 64 << 10, "{report}");
    assert!(set_aside.is_empty(), "{report}");
    let (kept, _) = reopen(dir.path(), DBRecoveryMode::PointInTime).unwrap();
    assert_eq!(kept, written(0..98));

    let (report, set_aside) = repair(salvage.path(), false);
    assert!(report.torn_tails.is_empty(), "{report}");
    assert_eq!(set_aside.len(), 1, "{report}");
    let (kept, _) = reopen(salvage.path(), DBRecoveryMode::PointInTime).unwrap();
    let mut expected = written(0..98);
    expected.extend(written(99..100));
    assert_eq!(kept, expected);
}

/// `lsm-demo repair --mmap_write` drops writes in flight as a torn tail;
/// without the flag it salvages the record after the torn one.
#[test]
fn the_repair_command_takes_the_log_kind() {
    let (dir, _, _, _) = writes_in_flight(10, 4096);
    let salvage = copy_of(dir.path());
    for (dir, flag, kept) in [
        (dir.path(), "--mmap_write", 8),
        (salvage.path(), "--mmap_write=0", 9),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_lsm-demo"))
            .args(["repair", &format!("--db={}", dir.display()), flag])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains(&format!("salvaged 0 tables and {kept} log records")),
            "{stdout}"
        );
        assert_eq!(stdout.contains("torn tail"), kept == 8, "{stdout}");
    }
}
