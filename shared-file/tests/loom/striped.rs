//! Loom models of the striped backing, over files in memory that keep
//! apart what was written and what a sync made durable:
//!
//! - `a_sync_covers_every_write_that_returned_before_it`: one writer
//!   writes a record, another two, each handing its records over with a
//!   Release flag. The first two may meet at the primary: then the one
//!   that found it taken, and every write after, goes to a stripe. The
//!   model's thread loads the flags (Acquire) and syncs: every record
//!   handed over must read back from the durable bytes, whichever file it
//!   went to and whatever the sync skipped. This is a sync group's leader
//!   syncing the records of the writers before it. A write may also land
//!   while the sync syncs its stripe: the owner's last sync must still
//!   find that stripe unsynced (it fails if a sync counts as covered the
//!   entries written while it ran).
//! - `writers_that_sync_their_own_writes_beside_each_other`: two threads
//!   each write a record and sync; each must find its own record durable,
//!   though the other's sync may have run between its write and its own
//!   sync and left a position where it skips.
//!
//! Both end with the owner setting the size and syncing: the durable
//! bytes then read back as exactly the records, at their offsets.
//!
//! The striped backing's writers try stripe 1 first under loom (see
//! `home` in `src/striped.rs`), so writers that meet there find it taken
//! and take the next.

use std::fmt;
use std::io;
use std::sync::Arc;

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::thread;
use shared_log_file::{PositionedFile, SharedFile, StripedView};

/// A file in memory: every write lands in `written`; a sync takes a copy
/// of it, counts itself (a step of the model, so other threads may write
/// in between, as they may while a real `fdatasync` runs) and makes the
/// copy `durable`, unless a sync that started later already made its own.
/// The lock is std's, held for no loom operation, so it adds no
/// interleavings.
#[derive(Clone, Default)]
struct ModelFile {
    pages: Arc<std::sync::Mutex<Pages>>,
    syncs: Arc<AtomicUsize>,
}

#[derive(Default)]
struct Pages {
    written: Vec<u8>,
    /// Writes and cuts so far.
    version: u64,
    durable: Vec<u8>,
    /// The version `durable` holds.
    durable_version: u64,
}

impl ModelFile {
    fn durable(&self) -> Vec<u8> {
        self.pages.lock().unwrap().durable.clone()
    }
}

impl fmt::Debug for ModelFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ModelFile")
    }
}

impl PositionedFile for ModelFile {
    fn write_all_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        let mut pages = self.pages.lock().unwrap();
        let (at, end) = (offset as usize, offset as usize + data.len());
        if pages.written.len() < end {
            pages.written.resize(end, 0);
        }
        pages.written[at..end].copy_from_slice(data);
        pages.version += 1;
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut pages = self.pages.lock().unwrap();
        pages.written.resize(len as usize, 0);
        pages.version += 1;
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        let (copy, version) = {
            let pages = self.pages.lock().unwrap();
            (pages.written.clone(), pages.version)
        };
        // Relaxed: a count; the step is the point.
        self.syncs.fetch_add(1, Ordering::Relaxed);
        let mut pages = self.pages.lock().unwrap();
        if version > pages.durable_version {
            pages.durable = copy;
            pages.durable_version = version;
        }
        Ok(())
    }
}

/// A striped file over files in memory: a primary and two stripes.
struct Log {
    shared: Arc<SharedFile>,
    primary: ModelFile,
    stripes: Vec<ModelFile>,
}

impl Log {
    fn new() -> Log {
        let primary = ModelFile::default();
        let stripes = vec![ModelFile::default(), ModelFile::default()];
        let boxed = stripes
            .iter()
            .map(|f| Box::new(f.clone()) as Box<dyn PositionedFile>)
            .collect();
        let shared = SharedFile::striped(primary.clone(), boxed, "model.log").unwrap();
        Log {
            shared: Arc::new(shared),
            primary,
            stripes,
        }
    }

    /// The file as a crash would leave it: the durable bytes, read back
    /// as one.
    fn durable(&self) -> Vec<u8> {
        StripedView::new(
            self.primary.durable(),
            self.stripes.iter().map(ModelFile::durable).collect(),
        )
        .unwrap()
        .read_to_vec()
        .unwrap()
    }

    /// Panics unless the durable file holds `record` at its offset.
    fn assert_durable(&self, (at, data): Record) {
        let durable = self.durable();
        let at = at as usize;
        assert!(
            durable.get(at..at + data.len()) == Some(data),
            "record at {at} not durable: {durable:?}"
        );
    }

    /// Sets the size past every record, syncs, and checks the durable
    /// file is exactly `records`, at their offsets.
    fn check(&self, records: &[Record]) {
        let size = records
            .iter()
            .map(|(at, data)| at + data.len() as u64)
            .max()
            .unwrap();
        self.shared.set_size(size);
        self.shared.sync_data().unwrap();
        let mut expected = vec![0; size as usize];
        for &(at, data) in records {
            expected[at as usize..at as usize + data.len()].copy_from_slice(data);
        }
        assert_eq!(self.durable(), expected);
    }
}

/// A record's offset and bytes.
type Record = (u64, &'static [u8]);

const FIRST: Record = (0, b"aaaa");
const SECOND: Record = (4, b"bbbb");
const THIRD: Record = (8, b"cccc");

/// Writes `record` from a writer thread.
fn write_record(shared: &SharedFile, (at, data): Record) {
    super::write(shared, at, data);
}

/// Runs `f` under loom with at least 4 preemptions, more than CI's
/// `LOOM_MAX_PREEMPTIONS=2`: a write that lands while another thread syncs
/// its stripe takes three, two of them to send writes to the stripes at
/// all. The models are small enough (about a second).
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(builder.preemption_bound.map_or(4, |b| b.max(4)));
    builder.check(f);
}

#[test]
fn a_sync_covers_every_write_that_returned_before_it() {
    model(|| {
        let log = Arc::new(Log::new());
        let first_done = Arc::new(AtomicBool::new(false));
        let others_done = Arc::new(AtomicBool::new(false));
        let first = {
            let (log, done) = (log.clone(), first_done.clone());
            thread::spawn(move || {
                write_record(&log.shared, FIRST);
                // Release: hands the write over to the syncer.
                done.store(true, Ordering::Release);
            })
        };
        let others = {
            let (log, done) = (log.clone(), others_done.clone());
            thread::spawn(move || {
                write_record(&log.shared, SECOND);
                write_record(&log.shared, THIRD);
                // Release: as above.
                done.store(true, Ordering::Release);
            })
        };
        // Acquire (both): pairs with the writers' Release.
        let handed_over = [
            (first_done.load(Ordering::Acquire), FIRST),
            (others_done.load(Ordering::Acquire), SECOND),
        ];
        log.shared.sync_data().unwrap();
        for (done, record) in handed_over {
            if done {
                log.assert_durable(record);
                if record == SECOND {
                    log.assert_durable(THIRD);
                }
            }
        }
        first.join().unwrap();
        others.join().unwrap();
        log.check(&[FIRST, SECOND, THIRD]);
    });
}

#[test]
fn writers_that_sync_their_own_writes_beside_each_other() {
    model(|| {
        let log = Arc::new(Log::new());
        let writers: Vec<_> = [FIRST, SECOND]
            .into_iter()
            .map(|record| {
                let log = log.clone();
                thread::spawn(move || {
                    write_record(&log.shared, record);
                    log.shared.sync_data().unwrap();
                    log.assert_durable(record);
                })
            })
            .collect();
        for t in writers {
            t.join().unwrap();
        }
        log.check(&[FIRST, SECOND]);
    });
}
