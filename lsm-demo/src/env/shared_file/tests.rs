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

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

#[test]
fn appends_across_windows_read_back_whole() {
    for (backing, create) in BACKINGS {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.log");
        let mut f = create(&path);
        let mut expected = Vec::new();
        // Odd sizes, one larger than a whole window: appends straddle every
        // window boundary up to the largest windows.
        for (i, len) in [1, 4095, 70_000, 3 << 20, 17, 1 << 20, 333]
            .into_iter()
            .enumerate()
        {
            let data = pattern(len, i as u8);
            f.append(&data).unwrap();
            expected.extend_from_slice(&data);
            assert_eq!(f.size(), expected.len() as u64);
        }
        // While open, the file holds the appended bytes, then zeros up to the
        // end of the growth.
        let open = std::fs::read(&path).unwrap();
        assert!(open.len() >= expected.len());
        assert_eq!(&open[..expected.len()], &expected[..]);
        assert!(open[expected.len()..].iter().all(|&b| b == 0));
        f.sync().unwrap();
        drop(f);
        assert_eq!(std::fs::read(&path).unwrap(), expected, "{backing}");
    }
}

#[test]
fn the_sync_handle_syncs_while_appends_go_on() {
    for (backing, create) in BACKINGS {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.log");
        let mut f = create(&path);
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
            assert_eq!(file_len(&path), appended);
            let read = read_all(data, DBRecoveryMode::AbsoluteConsistency).unwrap();
            assert_eq!(read.records, records, "{backing}");
            continue;
        }
        assert!(file_len(&path) > appended);
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
fn a_sync_cuts_the_file_back_and_appends_go_on() {
    for (backing, create) in BACKINGS {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.log");
        let mut f = create(&path);
        let first = pattern(5000, 1);
        f.append(&first).unwrap();
        // Mapped, a growth is reserved past the bytes.
        assert_eq!(file_len(&path) > 5000, backing == "mapped");
        f.sync().unwrap();
        // What a log that is moved on from, or closed, leaves durable: its
        // records and nothing after them.
        assert_eq!(file_len(&path), 5000);
        let second = pattern(200_000, 2);
        f.append(&second).unwrap();
        f.sync().unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            [first, second].concat(),
            "{backing}"
        );
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

/// Threads write at offsets they reserve, in any order, across growths and
/// chunk boundaries: the file holds every write where it was reserved, and
/// its size is the end of the furthest one.
#[test]
fn shared_writers_fill_their_reserved_ranges() {
    for (backing, create) in BACKINGS {
        use std::sync::atomic::{AtomicU64, Ordering};

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shared.log");
        let mut f = create(&path);
        let shared = f.shared_writes().expect(backing);
        let next = AtomicU64::new(0);
        let (threads, per_thread) = (4u8, 300usize);
        // (offset, thread, index) of every write.
        let writes: Vec<Vec<(u64, u8, usize)>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let (shared, next) = (&shared, &next);
                    s.spawn(move || {
                        (0..per_thread)
                            .map(|i| {
                                let data = pattern(7_000 + 997 * (i % 13), t ^ i as u8);
                                let at = next.fetch_add(data.len() as u64, Ordering::Relaxed);
                                // SAFETY: each range comes from one reservation.
                                unsafe { shared.write_at(at, &data) }.unwrap();
                                (at, t, i)
                            })
                            .collect()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let total = next.into_inner();
        assert!(total > 8 << 20, "the writes cross a chunk boundary");
        assert!(f.sync().is_err(), "a sync before the size is set");
        shared.set_size(total);
        assert_eq!(f.size(), total);
        f.sync().unwrap();
        drop((f, shared));
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len() as u64, total);
        for (at, t, i) in writes.into_iter().flatten() {
            let expected = pattern(7_000 + 997 * (i % 13), t ^ i as u8);
            let at = at as usize;
            assert!(
                data[at..at + expected.len()] == expected[..],
                "write {t}/{i} at {at}"
            );
        }
    }
}
