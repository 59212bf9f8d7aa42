use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::{PositionedFile, SharedFile};

/// Creates an empty file for shared writes, one way or the other.
type Create = fn(&Path) -> SharedFile;

/// Both ways over real files: through a map, and with a `pwrite` each.
/// Every test on real files runs on both: they promise the same.
#[cfg(target_os = "linux")]
const BACKINGS: [(&str, Create); 2] = [
    ("mapped", |p| SharedFile::create_mapped(p).unwrap()),
    ("positional", |p| SharedFile::create_positional(p).unwrap()),
];

/// Off Linux, positional writes only.
#[cfg(not(target_os = "linux"))]
const BACKINGS: [(&str, Create); 1] =
    [("positional", |p| SharedFile::create_positional(p).unwrap())];

/// `len` bytes that differ from one offset to the next.
pub(crate) fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect()
}

/// The owner's append, from tests that call it with no writer at work.
pub(crate) fn append(f: &SharedFile, data: &[u8]) -> io::Result<()> {
    // SAFETY: the tests append only while no thread writes the file.
    unsafe { f.append_unchecked(data) }
}

/// The owner's cut and sync, from tests that call it with no writer at
/// work.
fn sync(f: &SharedFile) -> io::Result<()> {
    // SAFETY: the tests sync only while no thread writes the file.
    unsafe { f.sync_unchecked() }
}

/// A shared write, from tests whose writers never overlap.
pub(crate) fn write_at(f: &SharedFile, at: u64, data: &[u8]) -> io::Result<()> {
    // SAFETY: every test gives each write a range of its own, and appends
    // or syncs only once its writers are done.
    unsafe { f.write_at(at, data) }
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

#[test]
#[cfg_attr(miri, ignore = "real files and mappings")]
fn appends_across_chunks_read_back_whole() {
    for (backing, create) in BACKINGS {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.log");
        let f = create(&path);
        let mut expected = Vec::new();
        // Odd sizes, one larger than a growth: appends straddle growths and
        // chunk boundaries.
        for (i, len) in [1, 4095, 70_000, 3 << 20, 17, 1 << 20, 333, 9 << 20]
            .into_iter()
            .enumerate()
        {
            let data = pattern(len, i as u8);
            append(&f, &data).unwrap();
            expected.extend_from_slice(&data);
            assert_eq!(f.size(), expected.len() as u64);
        }
        // While open, the file holds the appended bytes, then (mapped)
        // zeros up to the end of the growth.
        let open = std::fs::read(&path).unwrap();
        assert!(open.len() >= expected.len());
        assert_eq!(&open[..expected.len()], &expected[..]);
        assert!(open[expected.len()..].iter().all(|&b| b == 0));
        sync(&f).unwrap();
        drop(f);
        assert_eq!(std::fs::read(&path).unwrap(), expected, "{backing}");
    }
}

#[test]
#[cfg_attr(miri, ignore = "real files and mappings")]
fn sync_data_goes_on_beside_the_writers() {
    for (backing, create) in BACKINGS {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.log");
        let f = create(&path);
        let expected: Vec<u8> = (0..200u32).flat_map(|i| pattern(1000, i as u8)).collect();
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..20 {
                    f.sync_data().unwrap();
                }
            });
            for (i, chunk) in expected.chunks(1000).enumerate() {
                write_at(&f, i as u64 * 1000, chunk).unwrap();
            }
        });
        f.sync_data().unwrap();
        f.set_size(expected.len() as u64);
        drop(f);
        assert_eq!(std::fs::read(&path).unwrap(), expected, "{backing}");
    }
}

/// A file its process left without a cut (the process died) ends, mapped,
/// in the zeros of its growth; positional, at its furthest write.
#[test]
#[cfg_attr(miri, ignore = "real files and mappings")]
fn a_file_left_without_a_cut_keeps_its_writes() {
    for (backing, create) in BACKINGS {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.log");
        let f = create(&path);
        let data = pattern(10_000, 3);
        write_at(&f, 0, &data).unwrap();
        // No `set_size`: the drop leaves the file as it is, as a process
        // that died would.
        drop(f);
        let left = std::fs::read(&path).unwrap();
        assert_eq!(&left[..data.len()], &data[..], "{backing}");
        if backing == "positional" {
            assert_eq!(left.len(), data.len());
        } else {
            // One growth: a megabyte.
            assert_eq!(left.len(), 1 << 20);
            assert!(left[data.len()..].iter().all(|&b| b == 0));
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "real files and mappings")]
fn a_sync_cuts_the_file_back_and_appends_go_on() {
    for (backing, create) in BACKINGS {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.log");
        let f = create(&path);
        let first = pattern(5000, 1);
        append(&f, &first).unwrap();
        // Mapped, a growth is reserved past the bytes.
        assert_eq!(file_len(&path) > 5000, backing == "mapped");
        sync(&f).unwrap();
        // What a log that is moved on from, or closed, leaves durable: its
        // records and nothing after them.
        assert_eq!(file_len(&path), 5000);
        let second = pattern(200_000, 2);
        append(&f, &second).unwrap();
        sync(&f).unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            [first, second].concat(),
            "{backing}"
        );
    }
}

/// Threads write at offsets they reserve, in any order, across growths and
/// chunk boundaries: the file holds every write where it was reserved, and
/// its size is the end of the furthest one.
#[test]
#[cfg_attr(miri, ignore = "real files and mappings")]
fn shared_writers_fill_their_reserved_ranges() {
    for (backing, create) in BACKINGS {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shared.log");
        let f = create(&path);
        let next = AtomicU64::new(0);
        let (threads, per_thread) = (4u8, 300usize);
        // (offset, thread, index) of every write.
        let writes: Vec<Vec<(u64, u8, usize)>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let (f, next) = (&f, &next);
                    s.spawn(move || {
                        (0..per_thread)
                            .map(|i| {
                                let data = pattern(7_000 + 997 * (i % 13), t ^ i as u8);
                                // Relaxed: only the offsets' uniqueness
                                // matters.
                                let at = next.fetch_add(data.len() as u64, Ordering::Relaxed);
                                write_at(f, at, &data).unwrap();
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
        assert!(sync(&f).is_err(), "a sync before the size is set");
        f.set_size(total);
        assert_eq!(f.size(), total);
        sync(&f).unwrap();
        drop(f);
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len() as u64, total);
        for (at, t, i) in writes.into_iter().flatten() {
            let expected = pattern(7_000 + 997 * (i % 13), t ^ i as u8);
            let at = at as usize;
            assert!(
                data[at..at + expected.len()] == expected[..],
                "{backing}: write {t}/{i} at {at}"
            );
        }
    }
}

/// A file in memory, which can fail its writes: the positional backing
/// under miri. Its sync count and failure offset are read and set Relaxed,
/// everywhere: by one thread, or across a join.
#[derive(Debug, Default, Clone)]
pub(crate) struct MemFile {
    bytes: Arc<Mutex<Vec<u8>>>,
    pub(crate) syncs: Arc<AtomicU64>,
    /// Writes at or past this offset fail.
    pub(crate) fail_from: Arc<AtomicU64>,
}

impl MemFile {
    pub(crate) fn new() -> MemFile {
        let f = MemFile::default();
        // Relaxed: see the type.
        f.fail_from.store(u64::MAX, Ordering::Relaxed);
        f
    }

    pub(crate) fn bytes(&self) -> Vec<u8> {
        self.bytes.lock().unwrap().clone()
    }
}

impl PositionedFile for MemFile {
    fn write_all_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        if offset >= self.fail_from.load(Ordering::Relaxed) {
            return Err(io::Error::other("disk on fire"));
        }
        let mut bytes = self.bytes.lock().unwrap();
        let (at, end) = (offset as usize, offset as usize + data.len());
        if bytes.len() < end {
            bytes.resize(end, 0);
        }
        bytes[at..end].copy_from_slice(data);
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.bytes.lock().unwrap().resize(len as usize, 0);
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        // Relaxed: see the type.
        self.syncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

#[test]
fn shared_writes_leave_the_size_unknown_until_it_is_set() {
    let mem = MemFile::new();
    let f = SharedFile::positional(mem.clone(), "mem.log").unwrap();
    append(&f, b"head").unwrap();
    assert_eq!(f.size(), 4);
    write_at(&f, 6, b"gh").unwrap();
    write_at(&f, 4, b"ef").unwrap();
    let err = append(&f, b"x").unwrap_err();
    assert!(err.to_string().contains("mem.log"), "{err}");
    assert!(sync(&f).is_err());
    assert_eq!(
        // Relaxed, the count and the offset: see `MemFile`.
        mem.syncs.load(Ordering::Relaxed),
        0,
        "a refused sync syncs nothing"
    );
    // A concurrent sync needs no size.
    f.sync_data().unwrap();
    f.set_size(8);
    append(&f, b"tail").unwrap();
    sync(&f).unwrap();
    assert_eq!(mem.bytes(), b"headefghtail");
    assert_eq!(mem.syncs.load(Ordering::Relaxed), 2);
}

#[test]
fn a_sync_cuts_writes_past_the_size_set() {
    let mem = MemFile::new();
    let f = SharedFile::positional(mem.clone(), "mem.log").unwrap();
    write_at(&f, 0, b"kept, then dropped").unwrap();
    f.set_size(4);
    sync(&f).unwrap();
    assert_eq!(mem.bytes(), b"kept");
}

#[test]
fn a_failed_write_names_the_file_and_keeps_what_was_before() {
    let mem = MemFile::new();
    let f = SharedFile::positional(mem.clone(), "mem.log").unwrap();
    // Relaxed: see `MemFile`.
    mem.fail_from.store(10, Ordering::Relaxed);
    write_at(&f, 0, b"0123456789").unwrap();
    let err = write_at(&f, 10, b"lost").unwrap_err();
    assert_eq!(err.to_string(), "write mem.log: disk on fire");
    assert_eq!(mem.bytes(), b"0123456789");
}

#[test]
fn a_write_past_the_largest_offset_is_refused() {
    let mem = MemFile::new();
    let f = SharedFile::positional(mem.clone(), "mem.log").unwrap();
    let err = write_at(&f, u64::MAX - 1, b"abc").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::FileTooLarge);
    assert!(mem.bytes().is_empty());
}

#[test]
fn a_drop_cuts_to_the_size_once_it_is_known() {
    let mem = MemFile::new();
    let f = SharedFile::positional(mem.clone(), "mem.log").unwrap();
    write_at(&f, 0, b"abcdef").unwrap();
    f.set_size(3);
    drop(f);
    assert_eq!(mem.bytes(), b"abc");

    let mem = MemFile::new();
    let f = SharedFile::positional(mem.clone(), "mem.log").unwrap();
    write_at(&f, 0, b"abcdef").unwrap();
    drop(f); // size unknown: left as written
    assert_eq!(mem.bytes(), b"abcdef");
}

/// Threads write into memory at reserved offsets (under miri, with its
/// data-race detector watching the shared bookkeeping).
#[test]
fn threads_write_their_reserved_ranges_into_memory() {
    let mem = MemFile::new();
    let f = SharedFile::positional(mem.clone(), "mem.log").unwrap();
    let next = AtomicU64::new(0);
    let per_thread = if cfg!(miri) { 5 } else { 200 };
    std::thread::scope(|s| {
        for t in 0..3u8 {
            let (f, next) = (&f, &next);
            s.spawn(move || {
                for i in 0..per_thread {
                    let record = [t, i as u8, 0xee];
                    // Relaxed: only the offsets' uniqueness matters.
                    let at = next.fetch_add(3, Ordering::Relaxed);
                    write_at(f, at, &record).unwrap();
                }
            });
        }
    });
    f.set_size(next.into_inner());
    sync(&f).unwrap();
    let bytes = mem.bytes();
    assert_eq!(bytes.len(), 3 * 3 * per_thread);
    let mut seen: Vec<(u8, u8)> = bytes.chunks(3).map(|r| (r[0], r[1])).collect();
    assert!(bytes.chunks(3).all(|r| r[2] == 0xee));
    seen.sort_unstable();
    let expected: Vec<(u8, u8)> = (0..3u8)
        .flat_map(|t| (0..per_thread).map(move |i| (t, i as u8)))
        .collect();
    assert_eq!(seen, expected);
}

/// `writers()`: each write reserves the bytes after the last reservation,
/// from the size on; the drop makes the reservations' end the size, so the
/// owner's appends and sync follow on (under miri too).
#[test]
fn writers_reserve_after_the_size_and_leave_it_at_their_end() {
    let mem = MemFile::new();
    let mut f = SharedFile::positional(mem.clone(), "mem.log").unwrap();
    f.append(b"HEAD").unwrap();
    let per_thread = if cfg!(miri) { 5 } else { 200 };
    let writers = f.writers();
    let offsets: Vec<Vec<u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3u8)
            .map(|t| {
                let writers = &writers;
                s.spawn(move || {
                    (0..per_thread)
                        .map(|i| writers.write(&[t, i as u8, 0xee]).unwrap())
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(writers.reserved(), 4 + 3 * 3 * per_thread as u64);
    drop(writers);
    assert_eq!(f.size(), 4 + 3 * 3 * per_thread as u64);
    f.append(b"TAIL").unwrap();
    f.sync().unwrap();

    let bytes = mem.bytes();
    assert_eq!(&bytes[..4], b"HEAD");
    assert_eq!(&bytes[bytes.len() - 4..], b"TAIL");
    for (t, offsets) in offsets.iter().enumerate() {
        // Each thread's records lie where its writes said, in its order.
        assert!(offsets.windows(2).all(|w| w[0] < w[1]));
        for (i, &at) in offsets.iter().enumerate() {
            let at = at as usize;
            assert_eq!(bytes[at..at + 3], [t as u8, i as u8, 0xee]);
        }
    }
}

#[test]
fn a_reservation_past_2_64_bytes_is_refused_and_takes_nothing() {
    let mem = MemFile::new();
    let mut f = SharedFile::positional(mem.clone(), "mem.log").unwrap();
    f.set_size(u64::MAX - 2);
    let writers = f.writers();
    let err = writers.write(b"abc").unwrap_err();
    assert!(err.to_string().contains("mem.log"), "{err}");
    assert_eq!(writers.reserved(), u64::MAX - 2);
    drop(writers);
    assert_eq!(f.size(), u64::MAX - 2);
    assert!(mem.bytes().is_empty());
    f.set_size(0); // a drop cuts the file to its size: not to 2^64 in memory
}

/// A write that fails keeps its bytes: the size passes them, and the cut
/// and sync leave zeros there.
#[test]
fn a_failed_write_through_writers_keeps_its_bytes_reserved() {
    let mem = MemFile::new();
    let mut f = SharedFile::positional(mem.clone(), "mem.log").unwrap();
    // Relaxed: see `MemFile`.
    mem.fail_from.store(3, Ordering::Relaxed);
    let writers = f.writers();
    assert_eq!(writers.write(b"abc").unwrap(), 0);
    let err = writers.write(b"def").unwrap_err();
    assert_eq!(err.to_string(), "write mem.log: disk on fire");
    drop(writers);
    assert_eq!(f.size(), 6);
    f.sync().unwrap();
    assert_eq!(mem.bytes(), b"abc\0\0\0");
}

/// The same over real files, through a map and with a `pwrite` each:
/// records larger than a growth among small ones.
#[test]
#[cfg_attr(miri, ignore = "real files and mappings")]
fn writers_fill_real_files_both_ways() {
    for (backing, create) in BACKINGS {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.log");
        let mut f = create(&path);
        let writers = f.writers();
        let written: Vec<(u64, Vec<u8>)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4u8)
                .map(|t| {
                    let writers = &writers;
                    s.spawn(move || {
                        let mut mine = Vec::new();
                        for i in 0..40usize {
                            let len = if i == 17 { (1 << 20) + 5 } else { 100 + 37 * i };
                            let data = pattern(len, t ^ i as u8);
                            mine.push((writers.write(&data).unwrap(), data));
                        }
                        mine
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        drop(writers);
        f.sync().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let total: usize = written.iter().map(|(_, d)| d.len()).sum();
        assert_eq!(bytes.len(), total, "{backing}: cut to the reservations");
        for (at, data) in written {
            let at = at as usize;
            assert!(bytes[at..at + data.len()] == data[..], "{backing}: at {at}");
        }
    }
}
