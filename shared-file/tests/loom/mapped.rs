//! Loom models of the mapped backing, the file that many threads copy into
//! through a shared memory map, run on the shipped code (its atomics and
//! its grow lock are loom's under `--cfg loom`; the file, its mappings and
//! the system calls are real, one fresh file per iteration):
//!
//! - `a_growth_maps_the_chunk_a_writer_beside_it_writes`: one writer's
//!   write crosses the grown end and a chunk boundary, so it grows the file
//!   and maps a new chunk, while another writes below the grown end and
//!   then into that new chunk. The second writer either grows the file
//!   itself or sees the first's growth (`grown`, Release/Acquire), and then
//!   must find the chunk mapped (`chunks`, Relaxed behind `grown`): a null
//!   chunk fails the writer's assert. After the join, the owner sets the
//!   size, and the file synced and read back holds exactly the writes.
//! - `concurrent_growths_only_raise_the_grown_end`: two threads grow the
//!   file to different ends while a third writes across a chunk boundary
//!   that both growths map. Every thread sees `grown` reach at least its
//!   own end and never fall; it ends at the larger growth whichever came
//!   last; the write lands.
//! - `set_size_after_the_writers_hand_off`: two writers (one growing the
//!   file) hand off to the owner with a Release/Acquire counter. Until the
//!   owner calls `set_size`, `append` and `sync` refuse (the writers' flag,
//!   Relaxed, reaches the owner through the hand-off); after it, appends
//!   and syncs go on from the size set, growing again after the sync's cut.
//!
//! The models assume `file/growth.rs`'s sizes under loom: `GROW` 64 KiB
//! (checked here through `grown` after the first growth), `CHUNK` 128 KiB.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;
use shared_log_file::SharedFile;

use super::write;

/// `file/growth.rs`'s `GROW` under loom.
const GROW: u64 = 64 << 10;
/// `file/growth.rs`'s `CHUNK` under loom.
const CHUNK: u64 = 128 << 10;

/// A fresh mapped file.
struct Log {
    path: PathBuf,
    shared: Arc<SharedFile>,
    // Dropped last (fields drop in order): the file lives in it.
    _dir: tempfile::TempDir,
}

impl Log {
    fn new() -> Log {
        // On tmpfs where there is one: each iteration syncs its file, and
        // a sync there costs no disk write.
        let shm = Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            tempfile::tempdir_in(shm)
        } else {
            tempfile::tempdir()
        }
        .unwrap();
        let path = dir.path().join("log");
        let shared = Arc::new(SharedFile::create_mapped(&path).unwrap());
        assert_eq!(
            shared.grown(),
            GROW,
            "file/growth.rs's GROW under loom changed"
        );
        Log {
            path,
            shared,
            _dir: dir,
        }
    }

    /// Appends through the owner's side.
    fn append(&self, data: &[u8]) -> std::io::Result<()> {
        // SAFETY: the models append only once their writers are done.
        unsafe { self.shared.append_unchecked(data) }
    }

    /// Cuts and syncs through the owner's side.
    fn sync(&self) -> std::io::Result<()> {
        // SAFETY: the models sync only once their writers are done.
        unsafe { self.shared.sync_unchecked() }
    }

    /// Sets the size, syncs (which cuts the file to it) and checks the file
    /// holds `writes` at their offsets and zeros elsewhere.
    fn check(self, size: u64, writes: &[(u64, &[u8])]) {
        self.shared.set_size(size);
        assert_eq!(self.shared.size(), size);
        self.sync().unwrap();
        let mut expected = vec![0; size as usize];
        for &(at, data) in writes {
            expected[at as usize..at as usize + data.len()].copy_from_slice(data);
        }
        assert!(std::fs::read(&self.path).unwrap() == expected);
    }
}

#[test]
fn a_growth_maps_the_chunk_a_writer_beside_it_writes() {
    // Past the grown end (GROW) and across into chunk 1, not mapped yet.
    const CROSSING: (u64, &[u8]) = (CHUNK - 4, b"abcdefgh");
    // Below the grown end: no growth.
    const BELOW: (u64, &[u8]) = (8, b"ijkl");
    // In chunk 1, inside the growth CROSSING makes.
    const NEW_CHUNK: (u64, &[u8]) = (CHUNK + 4, b"mnop");
    loom::model(|| {
        let log = Log::new();
        let grower = {
            let shared = log.shared.clone();
            thread::spawn(move || write(&shared, CROSSING.0, CROSSING.1))
        };
        let beside = {
            let shared = log.shared.clone();
            thread::spawn(move || {
                write(&shared, BELOW.0, BELOW.1);
                write(&shared, NEW_CHUNK.0, NEW_CHUNK.1);
            })
        };
        grower.join().unwrap();
        beside.join().unwrap();
        let end = NEW_CHUNK.0 + NEW_CHUNK.1.len() as u64;
        assert_eq!(log.shared.grown(), end.div_ceil(GROW) * GROW, "one growth");
        log.check(end, &[CROSSING, BELOW, NEW_CHUNK]);
    });
}

#[test]
fn concurrent_growths_only_raise_the_grown_end() {
    // Maps chunk 1.
    const SMALL: u64 = CHUNK + 1;
    // Maps chunks 1 and 2 (whichever the other growth left unmapped).
    const LARGE: u64 = 2 * CHUNK + GROW + 1;
    // Across chunks 1 and 2: grows the file itself, or finds either growth.
    const WRITE: (u64, &[u8]) = (2 * CHUNK - 4, b"abcdefgh");
    loom::model(|| {
        let log = Log::new();
        let growers: Vec<_> = [SMALL, LARGE]
            .into_iter()
            .map(|end| {
                let shared = log.shared.clone();
                thread::spawn(move || {
                    let before = shared.grown();
                    shared.grow_to(end).unwrap();
                    let after = shared.grown();
                    assert!(after >= end && after >= before, "{before} -> {after}");
                })
            })
            .collect();
        let writer = {
            let shared = log.shared.clone();
            thread::spawn(move || {
                let before = shared.grown();
                write(&shared, WRITE.0, WRITE.1);
                let after = shared.grown();
                let end = WRITE.0 + WRITE.1.len() as u64;
                assert!(after >= end && after >= before, "{before} -> {after}");
            })
        };
        for t in growers {
            t.join().unwrap();
        }
        writer.join().unwrap();
        // The largest growth's end, rounded up to GROW, whatever the order.
        assert_eq!(log.shared.grown(), LARGE.div_ceil(GROW) * GROW);
        log.check(WRITE.0 + WRITE.1.len() as u64, &[WRITE]);
    });
}

#[test]
fn set_size_after_the_writers_hand_off() {
    const FIRST: (u64, &[u8]) = (0, b"ab");
    // Crosses the first growth's end: this writer grows the file.
    const GROWING: (u64, &[u8]) = (GROW - 2, b"cdef");
    const SIZE: u64 = GROW + 2;
    loom::model(|| {
        let log = Log::new();
        let done = Arc::new(AtomicUsize::new(0));
        let writers: Vec<_> = [FIRST, GROWING]
            .into_iter()
            .map(|(at, data)| {
                let (shared, done) = (log.shared.clone(), done.clone());
                thread::spawn(move || {
                    write(&shared, at, data);
                    // Release: hands the write (and the size flag) over.
                    done.fetch_add(1, Ordering::Release);
                })
            })
            .collect();
        // Acquire: pairs with the writers' Release.
        while done.load(Ordering::Acquire) < 2 {
            thread::yield_now();
        }
        assert!(log.append(b"x").is_err(), "append, size unknown");
        assert!(log.sync().is_err(), "sync, size unknown");
        log.shared.set_size(SIZE);
        log.append(b"gh").unwrap();
        assert_eq!(log.shared.size(), SIZE + 2);
        // Cuts the file to SIZE + 2: the next append grows it again.
        log.sync().unwrap();
        log.append(b"ij").unwrap();
        for t in writers {
            t.join().unwrap();
        }
        log.check(
            SIZE + 4,
            &[FIRST, GROWING, (SIZE, b"gh"), (SIZE + 2, b"ij")],
        );
    });
}
