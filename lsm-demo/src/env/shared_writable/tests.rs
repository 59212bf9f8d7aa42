//! The handle over the `shared-log-file` crate, through `PosixFs`: what the
//! engine's log relies on beyond the crate's own tests.

use std::path::Path;

use crate::env::{FileSystem, PosixFs, WritableFile};
use crate::wal::{DBRecoveryMode, LogWriter, read_all};

/// Creates a file for shared writes, one way or the other.
type Create = fn(&Path) -> Box<dyn WritableFile>;

/// Both ways: through a map, and with a `pwrite` each. Every test runs on
/// both: they promise the same.
const BACKINGS: [(&str, Create); 2] = [
    ("mapped", |p| PosixFs.create_mapped(p).unwrap()),
    ("positional", |p| PosixFs.create_positional(p).unwrap()),
];

/// `len` bytes that differ from one offset to the next.
fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect()
}

#[test]
fn the_sync_handle_syncs_while_appends_go_on() {
    for (backing, create) in BACKINGS {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.log");
        let mut f = create(&path);
        assert!(f.shared_writes().is_some(), "{backing}");
        let syncer = f.sync_handle().unwrap();
        let expected: Vec<u8> = (0..200u32).flat_map(|i| pattern(1000, i as u8)).collect();
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..20 {
                    syncer.sync().unwrap();
                }
            });
            for chunk in expected.chunks(1000) {
                f.append(chunk).unwrap();
            }
        });
        syncer.sync().unwrap();
        assert_eq!(f.size(), expected.len() as u64);
        drop(f);
        assert_eq!(std::fs::read(&path).unwrap(), expected, "{backing}");
    }
}

/// A mapped file that its process left (no cut) ends in the zeros of its
/// growth, a torn tail to a log reader; a positional one ends at its last
/// write.
#[test]
fn a_dead_process_leaves_what_it_wrote_and_recovery_reads_it() {
    for (backing, create) in BACKINGS {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.log");
        let mut log = LogWriter::new(create(&path)).unwrap();
        let records: Vec<Vec<u8>> = (0..100).map(|i| pattern(100 + i, i as u8)).collect();
        for r in &records {
            log.add_record(r).unwrap();
        }
        let appended = log.size();
        // A process that dies does not cut the file back: the written
        // bytes stay in the page cache, and the rest of a growth is zeros.
        std::mem::forget(log);
        let data = std::fs::read(&path).unwrap();
        if backing == "positional" {
            assert_eq!(data.len() as u64, appended);
            let read = read_all(data, DBRecoveryMode::AbsoluteConsistency).unwrap();
            assert_eq!(read.records, records, "{backing}");
            continue;
        }
        assert!(data.len() as u64 > appended);
        for mode in [
            DBRecoveryMode::PointInTime,
            DBRecoveryMode::TolerateCorruptedTailRecords,
        ] {
            let read = read_all(data.clone(), mode).unwrap();
            assert_eq!(read.records, records, "{backing}");
            let tail = read.tail.unwrap();
            assert!(tail.zeroed && tail.is_torn_tail(), "{tail:?}");
        }
        assert!(read_all(data, DBRecoveryMode::AbsoluteConsistency).is_err());
    }
}

#[test]
fn creating_truncates_an_existing_file() {
    for (backing, create) in BACKINGS {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.log");
        std::fs::write(&path, pattern(200_000, 9)).unwrap();
        let mut f = create(&path);
        assert_eq!(f.size(), 0);
        f.append(b"new").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&path).unwrap(), b"new", "{backing}");
    }
}
