//! The striped backing: shared writes land in stripe files, each written
//! by one thread at a time, as entries that say where in the file their
//! bytes belong; [`StripedView`] reads the file back as one.
//!
//! Linux takes a file's lock for every buffered write into it, so threads
//! that `pwrite` one file queue in the kernel; each stripe is a file of its
//! own, with a lock of its own. The owner's appends (a header, a trailer)
//! go to the primary file at the file's size. So does a shared write that
//! finds the primary free, at its own offset (no entry: a lone writer pays
//! nothing for the stripes), until two writers meet there: from then on
//! every writer writes into stripes (appends, each stripe's pages filled
//! in turn), leaving holes in the primary where their bytes belong.
//!
//! # Stripe format
//!
//! ```text
//! stripe = magic:"SLFSTRP1" entry*
//! entry  = offset:u64 LE  len:u32 LE  header_crc:u32 LE  data[len]
//! ```
//!
//! `offset` is where `data` belongs in the file; `header_crc` is the masked
//! CRC32C of the 12 bytes before it, so a torn or zeroed header ends the
//! stripe's scan instead of placing bytes at a wrong offset. The data is
//! not checksummed here: like the other backings, a torn write reads as
//! part of its bytes and zeros, for the reader of the file to tell.

#[cfg(not(loom))]
use std::cell::Cell;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::PoisonError;
use std::sync::atomic::Ordering;

use crossbeam_utils::CachePadded;

use crate::PositionedFile;
use crate::file::annotate;
use crate::sync::{AtomicBool, AtomicU64, Mutex};

mod view;
pub use view::{ReadAt, StripeEnd, StripedView};

/// The first bytes of every stripe file.
const STRIPE_MAGIC: [u8; 8] = *b"SLFSTRP1";
/// The bytes of an entry's header: offset, length, checksum.
const ENTRY_HEADER_LEN: usize = 16;
/// The largest entry; a longer write is split (small in tests, to split
/// some).
const MAX_ENTRY_LEN: usize = if cfg!(test) { 1000 } else { u32::MAX as usize };

/// The path of stripe `index` (from 1) of the file at `path`: the path
/// with `.index` added (`wal` has stripes `wal.1`, `wal.2`, ...).
///
/// # Examples
///
/// ```
/// use shared_log_file::stripe_path;
/// use std::path::Path;
///
/// assert_eq!(stripe_path(Path::new("/db/000007.log"), 2), Path::new("/db/000007.log.2"));
/// ```
pub fn stripe_path(path: &Path, index: usize) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{index}"));
    PathBuf::from(name)
}

/// The masked CRC32C of an entry's offset and length (masked as
/// LevelDB's logs mask theirs, so that a checksum of bytes holding
/// checksums stays effective).
fn header_crc(header: &[u8]) -> u32 {
    let crc = crc32c::crc32c(header);
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// The header of an entry of `len` bytes belonging at `offset`.
fn entry_header(offset: u64, len: u32) -> [u8; ENTRY_HEADER_LEN] {
    let mut header = [0u8; ENTRY_HEADER_LEN];
    header[..8].copy_from_slice(&offset.to_le_bytes());
    header[8..12].copy_from_slice(&len.to_le_bytes());
    let crc = header_crc(&header[..12]);
    header[12..].copy_from_slice(&crc.to_le_bytes());
    header
}

/// The primary file and its stripes.
pub(crate) struct Stripes {
    primary: Primary,
    /// Each on lines of its own: writers on different stripes must not
    /// pull each other's lock and positions back and forth.
    stripes: Box<[CachePadded<Stripe>]>,
    /// Each stripe asks for its entries to be written back once they are
    /// this many bytes behind its end, a step at a time (0: never).
    writeback_step: AtomicU64,
}

/// The primary file, which counts its changes, so that a sync skips it
/// when nothing changed since the last (when writers write into stripes,
/// the owner appends only a header and a trailer: most syncs find it
/// clean).
#[derive(Debug)]
struct Primary {
    file: Box<dyn PositionedFile>,
    /// Held for a shared write into the primary: one at a time, so that a
    /// thread that finds it held knows another writes beside it.
    writer: Mutex<()>,
    /// Set once two writers met at the primary: it takes no more shared
    /// writes, which go to the stripes.
    met: AtomicBool,
    /// Set once a shared write into it failed: it takes no more.
    failed: AtomicBool,
    /// Writes and cuts so far.
    changes: AtomicU64,
    /// The changes that a completed sync covered.
    synced: AtomicU64,
}

impl Primary {
    /// Counts a change, once it is made.
    fn changed<T>(&self, made: io::Result<T>) -> io::Result<T> {
        // Release: a sync that loads it (Acquire) covers the change.
        self.changes.fetch_add(1, Ordering::Release);
        made
    }

    /// Syncs the file unless no change came since a sync covered them all.
    fn sync_data(&self) -> io::Result<()> {
        // Acquire: pairs with `changed`; every change made before this
        // call is counted in it.
        let changes = self.changes.load(Ordering::Acquire);
        // Relaxed: as a stripe's `synced`.
        if self.synced.load(Ordering::Relaxed) >= changes {
            return Ok(());
        }
        self.file.sync_data()?;
        self.synced.fetch_max(changes, Ordering::Relaxed);
        Ok(())
    }
}

impl PositionedFile for Primary {
    fn write_all_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        self.changed(self.file.write_all_at(data, offset))
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.changed(self.file.set_len(len))
    }

    fn sync_data(&self) -> io::Result<()> {
        Primary::sync_data(self)
    }

    fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
        self.file.start_writeback(offset, len)
    }
}

/// One stripe file.
struct Stripe {
    file: Box<dyn PositionedFile>,
    /// Held for each write: one writer at a time, so the stripe is written
    /// in order and only its last entry can be torn by a crash.
    tail: Mutex<Tail>,
    /// The end of the entries written, for syncs; stored under `tail`.
    written: AtomicU64,
    /// The end of the entries that a completed sync covered.
    synced: AtomicU64,
    /// Set once a write failed: the stripe takes no more writes (its tail
    /// is unknown), and writers go to the others.
    failed: AtomicBool,
}

/// What a stripe's writer needs under its lock.
struct Tail {
    /// Where the next entry goes.
    end: u64,
    /// Where the writeback asked for so far ends.
    written_back: u64,
    /// The entry being written (header and data in one write), kept
    /// between writes.
    buf: Vec<u8>,
}

impl fmt::Debug for Stripes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stripes")
            .field("primary", &self.primary)
            .field("stripes", &self.stripes.len())
            .finish_non_exhaustive()
    }
}

#[cfg(not(loom))]
thread_local! {
    /// This thread's stripe, modulo their number: threads spread over the
    /// stripes in the order they first write.
    static HOME: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The stripe this thread tries first, of `n`.
#[cfg(not(loom))]
fn home(n: usize) -> usize {
    // Not loom's: a hint that spreads threads, no part of any protocol.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let home = HOME.get().unwrap_or_else(|| {
        // Relaxed: any distinct-enough number will do.
        let h = NEXT.fetch_add(1, Ordering::Relaxed);
        HOME.set(Some(h));
        h
    });
    home % n
}

/// Under loom, the first stripe for every thread: loom runs its threads on
/// one thread of the system, whose thread-locals they would share, and
/// writers that all try the same stripe first meet there, which the models
/// want.
#[cfg(loom)]
fn home(_: usize) -> usize {
    0
}

impl Stripes {
    /// The stripes over `primary` and `stripes` (each empty), with the
    /// stripes' magic written.
    pub(crate) fn new(
        primary: Box<dyn PositionedFile>,
        stripes: Vec<Box<dyn PositionedFile>>,
        path: &Path,
    ) -> io::Result<Stripes> {
        if stripes.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: a striped file needs a stripe", path.display()),
            ));
        }
        let stripes = stripes
            .into_iter()
            .enumerate()
            .map(|(i, file)| {
                file.write_all_at(&STRIPE_MAGIC, 0)
                    .map_err(|e| stripe_error(e, "write", path, i))?;
                let end = STRIPE_MAGIC.len() as u64;
                Ok(CachePadded::new(Stripe {
                    file,
                    tail: Mutex::new(Tail {
                        end,
                        written_back: 0,
                        buf: Vec::new(),
                    }),
                    written: AtomicU64::new(end),
                    // The magic alone needs no sync: a stripe without it
                    // reads as one without entries.
                    synced: AtomicU64::new(end),
                    failed: AtomicBool::new(false),
                }))
            })
            .collect::<io::Result<_>>()?;
        Ok(Stripes {
            primary: Primary {
                file: primary,
                writer: Mutex::new(()),
                met: AtomicBool::new(false),
                failed: AtomicBool::new(false),
                changes: AtomicU64::new(0),
                synced: AtomicU64::new(0),
            },
            stripes,
            writeback_step: AtomicU64::new(0),
        })
    }

    /// See [`SharedFile::set_stripe_writeback`](crate::SharedFile::set_stripe_writeback).
    pub(crate) fn set_writeback_step(&self, step: u64) {
        // Relaxed: a setting, read by each write; any recent value will do.
        self.writeback_step.store(step, Ordering::Relaxed);
    }

    /// Sends every shared write to the stripes from now on, as if two
    /// writers had met at the primary: for tests of the stripes.
    #[cfg(test)]
    pub(crate) fn write_beside_others(&self) {
        self.primary.met.store(true, Ordering::Relaxed);
    }

    /// The primary file: where the owner's appends go, what cuts cut.
    pub(crate) fn primary(&self) -> &dyn PositionedFile {
        &self.primary
    }

    /// How many stripes there are.
    pub(crate) fn count(&self) -> usize {
        self.stripes.len()
    }

    /// Writes `data`, which belongs at `offset`: into the primary at
    /// `offset` while no two writers have met there, else as entries in a
    /// stripe (this thread's, or a free one if another thread is writing
    /// that, or, all busy, this thread's once it is free).
    pub(crate) fn write(&self, offset: u64, data: &[u8], path: &Path) -> io::Result<()> {
        // Relaxed (all three): hints, read on every write and stored
        // once; a writer that misses a store writes into the primary once
        // more, which is as correct.
        let primary = &self.primary;
        // Relaxed, both: hints that route writes; the writer lock orders the
        // writes.
        if !primary.met.load(Ordering::Relaxed) && !primary.failed.load(Ordering::Relaxed) {
            match primary.writer.try_lock() {
                Ok(_alone) => {
                    let written = primary.write_all_at(data, offset);
                    if written.is_err() {
                        // As a stripe that failed: nothing more goes there.
                        // Relaxed: a hint, as the loads above.
                        primary.failed.store(true, Ordering::Relaxed);
                    }
                    return written.map_err(|e| annotate(e, "write", path));
                }
                // Relaxed: a hint, as the loads above.
                Err(_) => primary.met.store(true, Ordering::Relaxed),
            }
        }
        let mut offset = offset;
        for part in data.chunks(MAX_ENTRY_LEN) {
            self.write_entry(offset, part, path)?;
            offset += part.len() as u64;
        }
        Ok(())
    }

    fn write_entry(&self, offset: u64, data: &[u8], path: &Path) -> io::Result<()> {
        let n = self.stripes.len();
        let home = home(n);
        // Relaxed: a failed stripe is only avoided; one that fails while we
        // wait for it is seen under its lock.
        let usable = |i: &usize| !self.stripes[*i].failed.load(Ordering::Relaxed);
        let mut order = (0..n).map(|k| (home + k) % n).filter(usable);
        let first = order.next().ok_or_else(|| {
            io::Error::other(format!(
                "{}: every stripe failed a write before",
                path.display()
            ))
        })?;
        let free = std::iter::once(first)
            .chain(order)
            .find_map(|i| Some((i, self.stripes[i].tail.try_lock().ok()?)));
        let (index, mut tail) = match free {
            Some(found) => found,
            None => (
                first,
                self.stripes[first]
                    .tail
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner),
            ),
        };
        let stripe = &self.stripes[index];
        // Relaxed: set under this lock, which we hold.
        if stripe.failed.load(Ordering::Relaxed) {
            drop(tail);
            return self.write_entry(offset, data, path);
        }
        let Tail {
            end,
            written_back,
            buf,
        } = &mut *tail;
        buf.clear();
        buf.extend_from_slice(&entry_header(offset, data.len() as u32));
        buf.extend_from_slice(data);
        let written = stripe.file.write_all_at(buf, *end);
        if buf.capacity() > 1 << 20 {
            *buf = Vec::new();
        }
        match written {
            Ok(()) => {
                *end += (ENTRY_HEADER_LEN + data.len()) as u64;
                // Release: a sync that loads it (Acquire) and then syncs
                // covers this write, which came before.
                stripe.written.store(*end, Ordering::Release);
                // Relaxed: see `set_writeback_step`.
                let due = writeback_due(
                    *end,
                    self.writeback_step.load(Ordering::Relaxed),
                    written_back,
                );
                drop(tail);
                if let Some((from, to)) = due {
                    // A hint: a failure only leaves the pages to the sync.
                    let _ = stripe.file.start_writeback(from, to - from);
                }
                Ok(())
            }
            Err(e) => {
                // Part of the entry may be written: nothing may follow it
                // in this stripe (a torn header ends the stripe's scan).
                // Relaxed: read under the lock, or as a hint.
                stripe.failed.store(true, Ordering::Relaxed);
                Err(stripe_error(e, "write", path, index))
            }
        }
    }

    /// Makes every returned write durable: the primary's, then each
    /// stripe's, each synced only if written since a sync last covered it.
    pub(crate) fn sync_data(&self, path: &Path) -> io::Result<()> {
        self.primary
            .sync_data()
            .map_err(|e| annotate(e, "sync", path))?;
        for (i, stripe) in self.stripes.iter().enumerate() {
            // Acquire: pairs with the writer's Release store; every write
            // that returned before this call is below it.
            let written = stripe.written.load(Ordering::Acquire);
            // Relaxed: a position only; the sync that stored it completed
            // before its store, and a stale smaller value costs a sync.
            if stripe.synced.load(Ordering::Relaxed) >= written {
                continue;
            }
            stripe
                .file
                .sync_data()
                .map_err(|e| stripe_error(e, "sync", path, i))?;
            // Relaxed: see the load above.
            stripe.synced.fetch_max(written, Ordering::Relaxed);
        }
        Ok(())
    }
}

/// The writeback due once a stripe's entries reach `end`: from where the
/// last one ended to a step behind the last step `end` reached (not the
/// pages still being filled), in steps of `step` (0: none); moves
/// `written_back` there.
fn writeback_due(end: u64, step: u64, written_back: &mut u64) -> Option<(u64, u64)> {
    if step == 0 {
        return None;
    }
    let behind = (end / step).checked_sub(1)? * step;
    if behind <= *written_back {
        return None;
    }
    Some((std::mem::replace(written_back, behind), behind))
}

/// An error of stripe `index` (from 0) of the file at `path`, naming the
/// stripe's path.
fn stripe_error(err: io::Error, op: &str, path: &Path, index: usize) -> io::Error {
    annotate(err, op, &stripe_path(path, index + 1))
}

#[cfg(test)]
mod tests;
