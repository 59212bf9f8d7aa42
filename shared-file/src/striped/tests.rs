use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::{ENTRY_HEADER_LEN, MAX_ENTRY_LEN, STRIPE_MAGIC, entry_header, writeback_due};
use crate::tests::{MemFile, append, pattern, write_at};
use crate::{PositionedFile, ReadAt, SharedFile, StripedView, stripe_path};

/// A striped file over files in memory: the primary and `n` stripes.
fn in_memory(n: usize) -> (SharedFile, MemFile, Vec<MemFile>) {
    let primary = MemFile::new();
    let stripes: Vec<MemFile> = (0..n).map(|_| MemFile::new()).collect();
    let boxed = stripes
        .iter()
        .map(|m| Box::new(m.clone()) as Box<dyn PositionedFile>)
        .collect();
    let f = SharedFile::striped(primary.clone(), boxed, "mem.log").unwrap();
    (f, primary, stripes)
}

/// Sends `f`'s shared writes to its stripes, as if two writers had met at
/// its primary.
fn write_beside_others(f: &SharedFile) {
    f.striped_backing().unwrap().write_beside_others();
}

/// The view of the files' bytes as they are now.
fn view_of(primary: &MemFile, stripes: &[MemFile]) -> io::Result<StripedView<Vec<u8>>> {
    StripedView::new(
        primary.bytes(),
        stripes.iter().map(MemFile::bytes).collect(),
    )
}

/// Threads write at reserved offsets into stripes in memory (under miri,
/// with its data-race detector watching the stripes' locks and
/// positions), into the primary until two of them meet there; the owner's
/// header and trailer go to the primary, and the view reads it all back in
/// place.
#[test]
fn threads_write_stripes_that_read_back_as_one_file() {
    let (mut f, primary, stripes) = in_memory(2);
    f.append(b"HEAD").unwrap();
    let next = AtomicU64::new(4);
    let per_thread = if cfg!(miri) { 4 } else { 300 };
    std::thread::scope(|s| {
        for t in 0..3u8 {
            let (f, next) = (&f, &next);
            s.spawn(move || {
                for i in 0..per_thread {
                    // Now and then a write longer than an entry: split.
                    let len = if i % 7 == 3 {
                        MAX_ENTRY_LEN + 11
                    } else {
                        3 + i % 5
                    };
                    let record = pattern(len, t ^ i as u8);
                    // Relaxed: only the offsets' uniqueness matters.
                    let at = next.fetch_add(len as u64, Ordering::Relaxed);
                    write_at(f, at, &record).unwrap();
                }
            });
        }
    });
    let end = next.into_inner();
    f.set_size(end);
    f.append(b"TAIL").unwrap();
    f.sync().unwrap();
    // The primary holds the owner's bytes, and perhaps some writers'.
    let p = primary.bytes();
    assert_eq!(p.len() as u64, end + 4);
    assert_eq!((&p[..4], &p[p.len() - 4..]), (&b"HEAD"[..], &b"TAIL"[..]));

    let view = view_of(&primary, &stripes).unwrap();
    assert_eq!(view.len(), end + 4);
    let bytes = view.read_to_vec().unwrap();
    assert_eq!(&bytes[..4], b"HEAD");
    assert_eq!(&bytes[bytes.len() - 4..], b"TAIL");
    // Every record is whole where it was written: walk each thread's
    // records in the order of their offsets, which the counter gave out.
    assert!(view.stripe_ends().iter().all(|e| e.valid_len == e.file_len));
    assert!(
        // Relaxed: the writers were joined.
        stripes.iter().all(|s| s.syncs.load(Ordering::Relaxed) <= 1),
        "one sync at most per stripe"
    );
}

/// Records at known offsets, then read back through the view: the bytes
/// must be exactly those written, holes as zeros.
#[test]
fn the_view_places_each_write_and_reads_holes_as_zeros() {
    let (f, primary, stripes) = in_memory(3);
    write_beside_others(&f);
    let writes = [
        (100u64, pattern(40, 1)),
        (10, pattern(5, 2)),
        (2500, pattern(2400, 3)),
    ];
    for (at, data) in &writes {
        write_at(&f, *at, data).unwrap();
    }
    let view = view_of(&primary, &stripes).unwrap();
    assert_eq!(view.len(), 4900);
    let mut expected = vec![0u8; 4900];
    for (at, data) in &writes {
        expected[*at as usize..*at as usize + data.len()].copy_from_slice(data);
    }
    assert_eq!(view.read_to_vec().unwrap(), expected);
    // Reads that start and end anywhere, across entries and holes.
    for start in [0u64, 9, 10, 12, 99, 139, 140, 2499, 3000, 4899, 4900, 5000] {
        for len in [1usize, 7, 100, 3000] {
            let mut buf = vec![0xaa; len];
            let n = view.read_at(start, &mut buf).unwrap();
            let s = (start as usize).min(4900);
            let want = &expected[s..(s + len).min(4900)];
            assert_eq!(&buf[..n], want, "{start}+{len}");
        }
    }
    f.set_size(4900);
}

/// Bytes in memory that count their reads and fail them on demand (the
/// counter and the switch shared among clones, read and set Relaxed
/// everywhere: by one thread, or across a join).
#[derive(Clone)]
struct Counted {
    bytes: Vec<u8>,
    reads: Arc<AtomicU64>,
    fail: Arc<AtomicBool>,
}

impl Counted {
    fn new(bytes: Vec<u8>) -> Counted {
        Counted {
            bytes,
            reads: Default::default(),
            fail: Default::default(),
        }
    }
}

impl ReadAt for Counted {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        // Relaxed: see the type.
        self.reads.fetch_add(1, Ordering::Relaxed);
        if self.fail.load(Ordering::Relaxed) {
            return Err(io::Error::other("disk on fire"));
        }
        self.bytes.read_at(offset, buf)
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.bytes.len() as u64)
    }
}

/// A view read in order reads each stripe a window at a time, not an
/// entry at a time; a failed read leaves nothing wrong in the window.
#[test]
fn the_view_reads_each_stripe_a_window_at_a_time() {
    let (f, primary, stripes) = in_memory(1);
    write_beside_others(&f);
    let (entries, len) = (100, 200);
    let expected: Vec<u8> = (0..entries).flat_map(|i| pattern(len, i as u8)).collect();
    for (i, record) in expected.chunks(len).enumerate() {
        write_at(&f, (i * len) as u64, record).unwrap();
    }
    let stripe = stripes[0].bytes();
    let windows = stripe.len().div_ceil(super::view::WINDOW) as u64;
    let stripe = Counted::new(stripe);
    let view = StripedView::new(Counted::new(primary.bytes()), vec![stripe.clone()]).unwrap();
    // Relaxed, the counter and the flag: see `Counted`.
    let scanned = stripe.reads.swap(0, Ordering::Relaxed);
    let mut read = vec![0; expected.len()];
    for (i, block) in read.chunks_mut(1000).enumerate() {
        assert_eq!(view.read_at((i * 1000) as u64, block).unwrap(), block.len());
    }
    assert!(read == expected);
    let reads = stripe.reads.swap(0, Ordering::Relaxed);
    assert!(
        reads <= windows + 1,
        "{reads} reads of a stripe of {windows} windows (the scan: {scanned})"
    );

    // Back to the start, outside the window held: the read fails, and
    // the next reads the bytes.
    stripe.fail.store(true, Ordering::Relaxed);
    let mut buf = vec![0; 300];
    assert!(view.read_at(100, &mut buf).is_err());
    stripe.fail.store(false, Ordering::Relaxed);
    assert_eq!(view.read_at(100, &mut buf).unwrap(), 300);
    assert!(buf == expected[100..400]);
    f.set_size(expected.len() as u64);

    // An entry longer than a window is read straight into the buffer.
    let long = pattern(super::view::WINDOW + 100, 7);
    let stripe = [
        &STRIPE_MAGIC[..],
        &entry_header(3, long.len() as u32),
        &long,
    ]
    .concat();
    let view = StripedView::new(Vec::new(), vec![stripe]).unwrap();
    assert!(view.read_to_vec().unwrap() == [&[0, 0, 0][..], &long].concat());
}

/// A crash can leave a stripe cut anywhere: the view never fails, and
/// every byte it reads is the written byte or zero; every entry whose
/// header and data survived reads whole.
#[test]
fn a_stripe_cut_anywhere_reads_as_a_prefix_of_its_entries() {
    let (f, primary, stripes) = in_memory(1);
    write_beside_others(&f);
    let writes: Vec<(u64, Vec<u8>)> = (0..6u64)
        .map(|i| (i * 50, pattern(20 + i as usize, i as u8)))
        .collect();
    for (at, data) in &writes {
        write_at(&f, *at, data).unwrap();
    }
    f.set_size(300);
    let stripe = stripes[0].bytes();
    let step = if cfg!(miri) { 37 } else { 1 };
    for cut in (0..=stripe.len()).step_by(step) {
        let view = StripedView::new(primary.bytes(), vec![stripe[..cut].to_vec()]).unwrap();
        let bytes = view.read_to_vec().unwrap();
        let mut pos = STRIPE_MAGIC.len();
        for (at, data) in &writes {
            let at = *at as usize;
            let got = bytes.get(at..at + data.len());
            let data_end = pos + ENTRY_HEADER_LEN + data.len();
            if data_end <= cut {
                assert_eq!(got, Some(&data[..]), "cut {cut}: whole entry at {at}");
            } else if let Some(got) = bytes.get(at..) {
                let got = &got[..got.len().min(data.len())];
                assert!(
                    got.iter().zip(data).all(|(g, d)| g == d || *g == 0),
                    "cut {cut}: bytes at {at} are neither written nor zeros"
                );
            }
            pos = data_end;
        }
        assert_eq!(view.stripe_ends()[0].file_len, cut as u64);
    }
}

/// Damage in a stripe (a header whose checksum fails) ends that stripe's
/// scan there; entries after it are not read, and entries of other
/// stripes are.
#[test]
fn a_damaged_header_ends_its_stripe() {
    let mut good = STRIPE_MAGIC.to_vec();
    good.extend_from_slice(&entry_header(0, 3));
    good.extend_from_slice(b"abc");
    let mut damaged = good.clone();
    damaged.extend_from_slice(&entry_header(3, 3));
    damaged.extend_from_slice(b"def");
    let flip = damaged.len() - 3 - ENTRY_HEADER_LEN; // the second header's offset
    damaged[flip] ^= 1;
    damaged.extend_from_slice(&entry_header(6, 3));
    damaged.extend_from_slice(b"ghi");
    let mut other = STRIPE_MAGIC.to_vec();
    other.extend_from_slice(&entry_header(9, 3));
    other.extend_from_slice(b"jkl");
    let view = StripedView::new(Vec::new(), vec![damaged.clone(), other]).unwrap();
    assert_eq!(view.read_to_vec().unwrap(), b"abc\0\0\0\0\0\0jkl");
    let end = &view.stripe_ends()[0];
    assert_eq!((end.entries, end.valid_len), (1, good.len() as u64));
    assert_eq!(end.file_len, damaged.len() as u64);
    // Zeros where a header should be (a file extended, its data lost).
    let mut zeros = good.clone();
    zeros.extend_from_slice(&[0; 40]);
    let view = StripedView::new(Vec::new(), vec![zeros]).unwrap();
    assert_eq!(view.read_to_vec().unwrap(), b"abc");
}

#[test]
fn stripes_that_claim_the_same_bytes_or_are_not_stripes_are_refused() {
    let entry = |at: u64, data: &[u8]| {
        let mut s = STRIPE_MAGIC.to_vec();
        s.extend_from_slice(&entry_header(at, data.len() as u32));
        s.extend_from_slice(data);
        s
    };
    let err = StripedView::new(Vec::new(), vec![entry(0, b"abcd"), entry(3, b"xy")]).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    assert!(err.to_string().contains("offset 3"), "{err}");
    // Touching is not overlapping.
    let view = StripedView::new(Vec::new(), vec![entry(0, b"abcd"), entry(4, b"xy")]).unwrap();
    assert_eq!(view.read_to_vec().unwrap(), b"abcdxy");
    let err = StripedView::new(Vec::new(), vec![b"SLFSTRP9".to_vec()]).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    // Created, never written (empty, or zeros): no entries.
    let view = StripedView::new(b"p".to_vec(), vec![Vec::new(), vec![0; 8], vec![0; 3]]).unwrap();
    assert_eq!(view.read_to_vec().unwrap(), b"p");
}

/// A failed write leaves its stripe to the others; once every stripe
/// failed, writes fail. The sync syncs only the stripes written since the
/// last sync.
#[test]
fn a_failed_stripe_is_left_and_syncs_skip_clean_stripes() {
    let (f, primary, stripes) = in_memory(2);
    write_beside_others(&f);
    write_at(&f, 0, b"one").unwrap();
    f.sync_data().unwrap();
    // Relaxed: one thread.
    let syncs = |s: &MemFile| s.syncs.load(Ordering::Relaxed);
    let synced: Vec<u64> = stripes.iter().map(syncs).collect();
    assert_eq!(synced.iter().sum::<u64>(), 1, "only the stripe written");
    f.sync_data().unwrap();
    assert_eq!(
        stripes.iter().map(syncs).sum::<u64>(),
        1,
        "nothing new to sync"
    );
    assert_eq!(syncs(&primary), 0, "the primary took no write");

    // This thread's stripe fails; the write after it goes to the other.
    let home = if synced[0] == 1 { 0 } else { 1 };
    stripes[home].fail_from.store(0, Ordering::Relaxed);
    let err = write_at(&f, 3, b"two").unwrap_err();
    let name = stripe_path("mem.log".as_ref(), home + 1);
    assert!(err.to_string().contains(&*name.to_string_lossy()), "{err}");
    write_at(&f, 6, b"three").unwrap();
    stripes[1 - home].fail_from.store(0, Ordering::Relaxed);
    assert!(write_at(&f, 11, b"four").is_err());
    let err = write_at(&f, 15, b"five").unwrap_err();
    assert!(err.to_string().contains("every stripe failed"), "{err}");
    f.set_size(20);
    let view = view_of(&primary, &stripes).unwrap();
    assert_eq!(&view.read_to_vec().unwrap()[..11], b"one\0\0\0three");
    // The owner's append changes the primary: the next sync syncs it, once.
    append(&f, b"+").unwrap();
    f.sync_data().unwrap();
    f.sync_data().unwrap();
    assert_eq!(syncs(&primary), 1, "synced once after its append");
}

#[test]
fn a_striped_file_needs_a_stripe_and_refuses_writes_past_2_64() {
    let err = SharedFile::striped(MemFile::new(), Vec::new(), "mem.log").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    let (f, _, stripes) = in_memory(1);
    let err = write_at(&f, u64::MAX - 1, b"abc").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::FileTooLarge);
    assert_eq!(stripes[0].bytes(), STRIPE_MAGIC, "nothing written");
    f.set_size(0);
}

/// Real files: threads through `writers()`, then the view opened by path.
#[test]
#[cfg_attr(miri, ignore = "real files")]
fn writers_fill_real_striped_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.log");
    let mut f = SharedFile::create_striped(&path, 2).unwrap();
    f.append(b"HEAD").unwrap();
    let writers = f.writers();
    let written: Vec<(u64, Vec<u8>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4u8)
            .map(|t| {
                let writers = &writers;
                s.spawn(move || {
                    (0..200usize)
                        .map(|i| {
                            let data = pattern(50 + 13 * (i % 40), t ^ i as u8);
                            (writers.write(&data).unwrap(), data)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    drop(writers);
    f.append(b"TAIL").unwrap();
    f.sync().unwrap();
    drop(f);
    let view = StripedView::open(&path).unwrap();
    assert_eq!(view.stripe_ends().len(), 2);
    let bytes = view.read_to_vec().unwrap();
    for (at, data) in &written {
        let at = *at as usize;
        assert!(bytes[at..at + data.len()] == data[..], "the write at {at}");
    }
    let total: usize = written.iter().map(|(_, d)| d.len()).sum();
    assert_eq!(bytes.len(), 4 + total + 4);
    assert_eq!(&bytes[bytes.len() - 4..], b"TAIL");
    // The primary is as long as the file, holes and all.
    assert_eq!(std::fs::metadata(&path).unwrap().len(), bytes.len() as u64);
}

/// Writeback a step behind the end, from where the last one ended, never
/// twice over the same bytes.
#[test]
fn writeback_runs_a_step_behind_each_stripe() {
    let mut back = 0;
    assert_eq!(
        writeback_due(10 << 20, 0, &mut back),
        None,
        "0 turns it off"
    );
    assert_eq!(
        writeback_due(150, 100, &mut back),
        None,
        "in the first step"
    );
    assert_eq!(writeback_due(250, 100, &mut back), Some((0, 100)));
    assert_eq!(writeback_due(299, 100, &mut back), None, "done already");
    assert_eq!(writeback_due(620, 100, &mut back), Some((100, 500)));
    assert_eq!(back, 500);
}

/// The stripe format, byte for byte: a change to it must be deliberate
/// (files written before would no longer read).
#[test]
fn the_entry_header_format_is_fixed() {
    let header = entry_header(4, 4);
    assert_eq!(&header[..12], &[4, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0]);
    assert_eq!(
        u32::from_le_bytes(header[12..].try_into().unwrap()),
        0x4b60_15e3
    );
    assert_eq!(&STRIPE_MAGIC, b"SLFSTRP1");
}

/// A primary whose writes wait at a gate: the test holds a writer inside
/// its write into the primary.
#[derive(Debug)]
struct Gated {
    file: MemFile,
    entered: std::sync::mpsc::SyncSender<()>,
    gate: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
}

impl PositionedFile for Gated {
    fn write_all_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        if offset >= 100 {
            self.entered.send(()).unwrap();
            self.gate.lock().unwrap().recv().unwrap();
        }
        self.file.write_all_at(data, offset)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.file.sync_data()
    }
}

/// A lone writer writes into the primary, at its offset, with no entry; a
/// thread that finds the primary busy writes into a stripe, and from then
/// on every writer does.
#[test]
fn a_lone_writer_writes_the_primary_and_one_beside_it_a_stripe() {
    let (entered, entered_rx) = std::sync::mpsc::sync_channel(1);
    let (open_gate, gate) = std::sync::mpsc::channel();
    let primary = MemFile::new();
    let stripe = MemFile::new();
    let gated = Gated {
        file: primary.clone(),
        entered,
        gate: std::sync::Mutex::new(gate),
    };
    let f = SharedFile::striped(gated, vec![Box::new(stripe.clone())], "mem.log").unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            write_at(&f, 0, b"alone").unwrap(); // the primary, at once
            write_at(&f, 100, b"held").unwrap(); // waits at the gate
        });
        entered_rx.recv().unwrap();
        s.spawn(|| {
            write_at(&f, 50, b"beside").unwrap(); // the primary is busy
            open_gate.send(()).unwrap();
            write_at(&f, 60, b"after").unwrap(); // free again: still a stripe
        })
        .join()
        .unwrap();
    });
    let p = primary.bytes();
    assert_eq!((&p[..5], &p[100..104]), (&b"alone"[..], &b"held"[..]));
    assert!(
        p[50..65].iter().all(|&b| b == 0),
        "a hole where the others belong"
    );
    let view = view_of(&primary, &[stripe]).unwrap();
    assert_eq!(view.stripe_ends()[0].entries, 2);
    let bytes = view.read_to_vec().unwrap();
    assert_eq!(
        (&bytes[50..56], &bytes[60..65]),
        (&b"beside"[..], &b"after"[..])
    );
    f.set_size(104);
}
