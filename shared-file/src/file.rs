//! [`SharedFile`]: its backings, the writes, and the owner's appends and
//! syncs; making one is in `open`, the growth of a mapped file in
//! `growth`, the stripes of a striped one in `crate::striped`.

// Off Linux only the positional backing exists: the map's sizes and chunk
// table go unused.
#![cfg_attr(not(target_os = "linux"), allow(dead_code, unused_imports))]

use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::PoisonError;
use std::sync::atomic::Ordering;

use crate::striped::Stripes;
use crate::sync::{AtomicBool, AtomicPtr, AtomicU64, Mutex, ptr_get_mut};
use crate::{PositionedFile, Writers};

mod growth;
mod open;
use growth::CHUNK;
#[cfg(target_os = "linux")]
use growth::page_size;

/// A file that many threads write at once, each at offsets it reserved (a
/// `fetch_add` on a counter, or `ordered_publish::Sequencer::
/// reserve_with_bytes` for bytes in sequence order): through a shared
/// memory map ([`SharedFile::mapped`]: no lock and no system call per
/// write), or with a positioned write each ([`SharedFile::positional`]).
///
/// Two ways to write it from many threads:
/// - **safe**: lend it with [`writers`](Self::writers), whose
///   [`write`](Writers::write) reserves the next bytes itself (one atomic
///   step) and writes there. The owner gets the file back, with its size at
///   the end of the reservations, to [`append`](Self::append) (a trailer)
///   and [`sync`](Self::sync) (cut to that size, then `fdatasync`).
/// - **at offsets reserved elsewhere** (with sequence numbers, say):
///   [`write_at`](Self::write_at), `unsafe`, since the offsets are the
///   caller's to keep apart. Once the writers are done, their owner says
///   where the writes end ([`set_size`](Self::set_size)); the unchecked
///   [`append_unchecked`](Self::append_unchecked) and
///   [`sync_unchecked`](Self::sync_unchecked) serve an owner that shares
///   the file (an `Arc`) and keeps writers off by its own protocol.
///
/// Bytes below the size that nobody wrote read as zeros. `write_at` adds
/// no shared counter of its own; `Writers` adds the one it reserves from.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use shared_log_file::SharedFile;
///
/// let path = dir.path().join("log");
/// let mut shared = SharedFile::create_positional(&path).unwrap();
/// let writers = shared.writers();
/// std::thread::scope(|s| {
///     s.spawn(|| writers.write(b"abc").unwrap());
///     writers.write(b"def").unwrap();
/// });
/// drop(writers); // the writers are done: their writes end at 6
/// shared.sync().unwrap(); // cut back to 6 bytes, and synced
/// let bytes = std::fs::read(&path).unwrap();
/// assert!(bytes == b"abcdef" || bytes == b"defabc"); // in reservation order
/// ```
pub struct SharedFile {
    path: PathBuf,
    /// How writes reach the file.
    backing: Backing,
    /// Mapped, `chunks[i]` maps the file's bytes from `i * CHUNK`; null
    /// until the file first grows into it. Empty when positional.
    chunks: Box<[AtomicPtr<u8>]>,
    /// Bytes the file is grown to (blocks reserved, chunks mapped): writes
    /// below it touch only memory. `u64::MAX` when positional.
    grown: AtomicU64,
    /// Held while growing, one grower at a time, and by a sync's cut.
    grow: Mutex<()>,
    /// The file's size: where appends go, what a sync or drop cuts to.
    written: AtomicU64,
    /// Set by a shared write, cleared by `set_size`: while set, the size is
    /// not known (appends and syncs refuse, a drop leaves the file long).
    size_unknown: AtomicBool,
}

/// How the writes of a [`SharedFile`] reach the file.
#[derive(Debug)]
enum Backing {
    /// Copies into a shared memory map of the file.
    #[cfg(target_os = "linux")]
    Mapped(File),
    /// A positioned write each.
    Positional(Box<dyn PositionedFile>),
    /// A positioned write each, into stripe files; the owner's appends go
    /// to the primary.
    Striped(Stripes),
}

impl Backing {
    /// The file, for the calls both kinds make.
    fn file(&self) -> &dyn PositionedFile {
        match self {
            #[cfg(target_os = "linux")]
            Backing::Mapped(file) => file,
            Backing::Positional(file) => &**file,
            Backing::Striped(stripes) => stripes.primary(),
        }
    }
}

impl fmt::Debug for SharedFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedFile")
            .field("path", &self.path)
            .field("backing", &self.backing)
            .field("grown", &self.grown())
            .field("size", &self.size())
            .finish_non_exhaustive()
    }
}

impl SharedFile {
    /// Writes `data` into the file at `offset`, growing the file first if
    /// it does not reach that far. Mapped, fails only where growing fails
    /// (a full disk, or past the largest size, 64 GiB); positional, where
    /// the positioned write fails (a full disk, an I/O error), which may
    /// leave part of `data` written. The file holds the bytes below
    /// `offset` it held before either way. The file's size is unknown from
    /// then on, until [`set_size`](Self::set_size).
    ///
    /// # Errors
    ///
    /// The growth's or the write's, naming the file.
    ///
    /// # Safety
    ///
    /// No other thread may write any byte of `offset..offset + data.len()`
    /// while this call runs (the ranges come from one reservation each),
    /// and none may [`append_unchecked`](Self::append_unchecked) or
    /// [`sync_unchecked`](Self::sync_unchecked) (a mapped file's cut would
    /// leave the copy outside the file). [`writers`](Self::writers) gives
    /// threads a safe `write` that reserves its bytes itself.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("log");
    /// let shared = shared_log_file::SharedFile::create_positional(&path).unwrap();
    /// // SAFETY: one writer.
    /// unsafe { shared.write_at(0, b"ab") }.unwrap();
    /// shared.set_size(2);
    /// assert_eq!(shared.size(), 2);
    /// ```
    pub unsafe fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        // Relaxed (both): a flag for the owner, who reads it once the
        // writers are done. Stored once: the line stays shared among them.
        if !self.size_unknown.load(Ordering::Relaxed) {
            self.size_unknown.store(true, Ordering::Relaxed);
        }
        if let Backing::Striped(stripes) = &self.backing {
            self.write_end(offset, data)?;
            return stripes.write(offset, data, &self.path);
        }
        // SAFETY: the caller's guarantee.
        unsafe { self.copy_at(offset, data) }
    }

    /// Where a write of `data` at `offset` ends; refused past 2^64 bytes.
    fn write_end(&self, offset: u64, data: &[u8]) -> io::Result<u64> {
        offset.checked_add(data.len() as u64).ok_or_else(|| {
            let err = io::Error::new(io::ErrorKind::FileTooLarge, "a write past 2^64 bytes");
            annotate(err, "write", &self.path)
        })
    }

    /// [`Self::write_at`] without marking the size unknown (for appends).
    ///
    /// # Safety
    ///
    /// As `write_at`.
    unsafe fn copy_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let end = self.write_end(offset, data)?;
        if end > self.grown() {
            self.grow_to(end)
                .map_err(|e| annotate(e, "grow", &self.path))?;
        }
        match &self.backing {
            Backing::Positional(_) | Backing::Striped(_) => self
                .backing
                .file()
                .write_all_at(data, offset)
                .map_err(|e| annotate(e, "write", &self.path)),
            #[cfg(target_os = "linux")]
            Backing::Mapped(_) => {
                // SAFETY: the caller's guarantee, and the file is grown
                // past `end`.
                unsafe { self.copy_into_map(offset, data) };
                Ok(())
            }
        }
    }

    /// Says where the shared writes end, once they are done: the file's
    /// size from now on (where appends go, what a sync or a drop cuts the
    /// file to). Until it is called after a shared write, appends and
    /// syncs fail, and a drop leaves the file as long as it was grown or
    /// written (mapped, zeros after the writes).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("log");
    /// let mut shared = shared_log_file::SharedFile::create_positional(&path).unwrap();
    /// // SAFETY: one writer, and the owner waits for it.
    /// unsafe { shared.write_at(0, b"abc") }.unwrap();
    /// assert!(shared.append(b"d").is_err()); // where would it go?
    /// shared.set_size(3);
    /// shared.append(b"d").unwrap();
    /// assert_eq!(shared.size(), 4);
    /// ```
    pub fn set_size(&self, size: u64) {
        // Relaxed (both): the caller orders this after the writes it
        // measures, and before its own appends and syncs.
        self.written.store(size, Ordering::Relaxed);
        self.size_unknown.store(false, Ordering::Relaxed);
    }

    /// The file's size: the end of the appends, or as last set (see
    /// [`set_size`](Self::set_size)); writes at reserved offsets since do
    /// not move it.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("log");
    /// let mut shared = shared_log_file::SharedFile::create_positional(&path).unwrap();
    /// shared.append(b"header").unwrap();
    /// assert_eq!(shared.size(), 6);
    /// ```
    pub fn size(&self) -> u64 {
        // Relaxed: see `set_size`.
        self.written.load(Ordering::Relaxed)
    }

    /// The size, or an error while shared writes left it unknown.
    fn known_size(&self) -> io::Result<u64> {
        // Relaxed: see `set_size`.
        if self.size_unknown.load(Ordering::Relaxed) {
            return Err(io::Error::other(format!(
                "{}: written at reserved offsets, and the size was not set since",
                self.path.display()
            )));
        }
        Ok(self.size())
    }

    /// Writes `data` at the end of the file (its [`size`](Self::size)), and
    /// moves the end past it: for the owner, between rounds of shared
    /// writes (a log's header before its writers start, its trailer after
    /// they are done).
    ///
    /// # Errors
    ///
    /// While shared writes left the size unknown (see
    /// [`set_size`](Self::set_size)), and where a write fails.
    ///
    /// # Examples
    ///
    /// A header, a round of shared writes, then a trailer:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("log");
    /// let mut shared = shared_log_file::SharedFile::create_positional(&path).unwrap();
    /// shared.append(b"head").unwrap();
    /// shared.writers().write(b"body").unwrap();
    /// shared.append(b"tail").unwrap();
    /// assert_eq!(shared.size(), 12);
    /// drop(shared);
    /// assert_eq!(std::fs::read(&path).unwrap(), b"headbodytail");
    /// ```
    pub fn append(&mut self, data: &[u8]) -> io::Result<()> {
        // SAFETY: `&mut self`: no other thread holds the file.
        unsafe { self.append_unchecked(data) }
    }

    /// [`append`](Self::append) through a shared reference, for an owner
    /// that keeps the writers off by its own protocol.
    ///
    /// # Errors
    ///
    /// As [`append`](Self::append).
    ///
    /// # Safety
    ///
    /// No thread may [`write_at`](Self::write_at), append or sync while
    /// this call runs.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("log");
    /// use std::sync::Arc;
    ///
    /// let shared = Arc::new(shared_log_file::SharedFile::create_positional(&path).unwrap());
    /// // SAFETY: no writer has started: the owner is alone.
    /// unsafe { shared.append_unchecked(b"head") }.unwrap();
    /// let writer = Arc::clone(&shared);
    /// // SAFETY: one writer, on bytes past the header, and no append meanwhile.
    /// std::thread::spawn(move || unsafe { writer.write_at(4, b"body") }.unwrap())
    ///     .join()
    ///     .unwrap();
    /// shared.set_size(8);
    /// // SAFETY: the writer is done.
    /// unsafe { shared.append_unchecked(b"tail") }.unwrap();
    /// assert_eq!(std::fs::read(&path).unwrap(), b"headbodytail");
    /// ```
    pub unsafe fn append_unchecked(&self, data: &[u8]) -> io::Result<()> {
        let at = self.known_size()?;
        // SAFETY: the caller holds every other writer off.
        unsafe { self.copy_at(at, data) }?;
        // Relaxed: see `set_size`.
        self.written
            .store(at + data.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Cuts the file back to its size, then makes it durable
    /// (`fdatasync`): the length that survives a power loss is exact, with
    /// no zeros of a growth after the last write. A mapped file grows again
    /// at the next write past the cut.
    ///
    /// # Errors
    ///
    /// While shared writes left the size unknown, and where the cut or the
    /// sync fails.
    ///
    /// # Examples
    ///
    /// A mapped file is grown ahead of its writes; the sync cuts it back
    /// (see also [`SharedFile`]):
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("log");
    /// # #[cfg(target_os = "linux")] {
    /// let mut shared = shared_log_file::SharedFile::create_mapped(&path).unwrap();
    /// shared.writers().write(b"record").unwrap();
    /// assert!(std::fs::metadata(&path).unwrap().len() >= 1 << 20); // zeros after it
    /// shared.sync().unwrap();
    /// assert_eq!(std::fs::read(&path).unwrap(), b"record");
    /// # }
    /// ```
    pub fn sync(&mut self) -> io::Result<()> {
        // SAFETY: `&mut self`: no other thread holds the file.
        unsafe { self.sync_unchecked() }
    }

    /// [`sync`](Self::sync) through a shared reference, for an owner that
    /// keeps the writers off by its own protocol.
    ///
    /// # Errors
    ///
    /// As [`sync`](Self::sync).
    ///
    /// # Safety
    ///
    /// No thread may [`write_at`](Self::write_at) or append while this call
    /// runs: the cut would leave their bytes outside the file (through a
    /// map, a fault that kills the process). To make shared writes durable
    /// while they go on, use [`sync_data`](Self::sync_data).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("log");
    /// let shared = std::sync::Arc::new(
    ///     shared_log_file::SharedFile::create_positional(&path).unwrap(),
    /// );
    /// // SAFETY: one writer, and no append or sync meanwhile.
    /// unsafe { shared.write_at(0, b"record") }.unwrap();
    /// shared.set_size(6);
    /// // SAFETY: the writer is done, and nobody writes while it syncs.
    /// unsafe { shared.sync_unchecked() }.unwrap();
    /// assert_eq!(std::fs::read(&path).unwrap(), b"record");
    /// ```
    pub unsafe fn sync_unchecked(&self) -> io::Result<()> {
        {
            let _guard = self.grow.lock().unwrap_or_else(PoisonError::into_inner);
            let written = self.known_size()?;
            self.backing
                .file()
                .set_len(written)
                .map_err(|e| annotate(e, "truncate", &self.path))?;
            // Mapped, the next write grows the file again, from the page
            // that holds the end (growths start page-aligned). Relaxed:
            // under the lock, and no writer is at work.
            #[cfg(target_os = "linux")]
            if let Backing::Mapped(_) = self.backing {
                let page = page_size();
                self.grown.store(written / page * page, Ordering::Relaxed);
            }
        }
        self.sync_data()
    }

    /// Makes every write that has returned durable (`fdatasync`, which
    /// writes back the pages dirtied through a map as it does written
    /// ones), without cutting the file: writers may go on meanwhile. A
    /// mapped file keeps the zeros of its growth after the writes.
    ///
    /// # Errors
    ///
    /// The sync's, naming the file.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("log");
    /// let shared = shared_log_file::SharedFile::create_positional(&path).unwrap();
    /// // SAFETY: one writer.
    /// unsafe { shared.write_at(0, b"durable") }.unwrap();
    /// shared.sync_data().unwrap();
    /// ```
    pub fn sync_data(&self) -> io::Result<()> {
        if let Backing::Striped(stripes) = &self.backing {
            return stripes.sync_data(&self.path);
        }
        self.backing
            .file()
            .sync_data()
            .map_err(|e| annotate(e, "sync", &self.path))
    }

    /// Lends the file to threads that each write at the next free bytes:
    /// see [`Writers`]. The reservations start at the file's
    /// [`size`](Self::size); once the `Writers` is dropped, the size is
    /// where they end.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("log");
    /// let mut shared = shared_log_file::SharedFile::create_positional(&path).unwrap();
    /// shared.append(b"header").unwrap();
    /// let writers = shared.writers();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| assert!(writers.write(b"one").unwrap() >= 6));
    ///     s.spawn(|| assert!(writers.write(b"two").unwrap() >= 6));
    /// });
    /// drop(writers);
    /// assert_eq!(shared.size(), 12);
    /// ```
    pub fn writers(&mut self) -> Writers<'_> {
        Writers::new(self)
    }

    /// Whether writes reach the file with a positioned write each (a file
    /// made by [`positional`](Self::positional)), not through a map.
    ///
    /// # Examples
    ///
    /// See also [`positional`](Self::positional).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use shared_log_file::SharedFile;
    ///
    /// let positional = SharedFile::create_positional(dir.path().join("a")).unwrap();
    /// assert!(positional.is_positional());
    /// # #[cfg(target_os = "linux")] {
    /// let mapped = SharedFile::create_mapped(dir.path().join("b")).unwrap();
    /// assert!(!mapped.is_positional());
    /// # }
    /// ```
    pub fn is_positional(&self) -> bool {
        matches!(self.backing, Backing::Positional(_) | Backing::Striped(_))
    }

    /// Asks the operating system to start writing `len` bytes of the file
    /// from `offset` back to the disk, without waiting
    /// ([`PositionedFile::start_writeback`]: `sync_file_range` on Linux),
    /// so that a later sync has less to write; it makes nothing durable.
    /// Of a [`striped`](Self::striped) file, the primary's bytes there
    /// (the stripes write back behind themselves: see
    /// [`set_stripe_writeback`](Self::set_stripe_writeback)).
    ///
    /// # Errors
    ///
    /// The request's, naming the file; callers treat it as a hint.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let mut log = shared_log_file::SharedFile::create_positional(dir.path().join("wal")).unwrap();
    /// log.writers().write(&[7; 8192]).unwrap();
    /// log.start_writeback(0, 4096).unwrap(); // the first page is on its way
    /// log.sync().unwrap(); // the rest, and the wait
    /// ```
    pub fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
        self.backing
            .file()
            .start_writeback(offset, len)
            .map_err(|e| annotate(e, "start writeback of", &self.path))
    }

    /// For a [`striped`](Self::striped) file: each stripe asks the
    /// operating system to start writing its entries back
    /// ([`PositionedFile::start_writeback`]) once they are `step` bytes
    /// behind its end, a step at a time, so that a later
    /// [`sync_data`](Self::sync_data) has little left to write (RocksDB's
    /// `wal_bytes_per_sync`, per stripe). 0, the default, turns it off;
    /// other backings ignore it (a positional file's owner can ask its
    /// file itself).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let mut log = shared_log_file::SharedFile::create_striped(dir.path().join("wal"), 2).unwrap();
    /// log.set_stripe_writeback(1 << 20);
    /// let writers = log.writers();
    /// for _ in 0..3000 {
    ///     writers.write(&[7; 1000]).unwrap(); // the writer that crosses a step starts its writeback
    /// }
    /// ```
    pub fn set_stripe_writeback(&self, step: u64) {
        if let Backing::Striped(stripes) = &self.backing {
            stripes.set_writeback_step(step);
        }
    }

    /// The stripes of a striped file, for tests.
    #[cfg(test)]
    pub(crate) fn striped_backing(&self) -> Option<&Stripes> {
        match &self.backing {
            Backing::Striped(stripes) => Some(stripes),
            _ => None,
        }
    }

    /// How many stripe files the shared writes go to: 0 unless the file is
    /// [`striped`](Self::striped).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use shared_log_file::SharedFile;
    ///
    /// let striped = SharedFile::create_striped(dir.path().join("a"), 4).unwrap();
    /// assert_eq!(striped.stripes(), 4);
    /// assert!(striped.is_positional()); // a positioned write each, into a stripe
    /// let positional = SharedFile::create_positional(dir.path().join("b")).unwrap();
    /// assert_eq!(positional.stripes(), 0);
    /// ```
    pub fn stripes(&self) -> usize {
        match &self.backing {
            Backing::Striped(stripes) => stripes.count(),
            _ => 0,
        }
    }
}

impl Drop for SharedFile {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        for slot in self.chunks.iter_mut() {
            let base = ptr_get_mut(slot);
            if !base.is_null() {
                // SAFETY: a live mapping of `CHUNK` bytes made by
                // `grow_to`; the file is being dropped, so nothing
                // writes through it any more. Its pages stay dirty in the
                // page cache.
                unsafe { libc::munmap(base.cast(), CHUNK as usize) };
            }
        }
        // The reserved rest goes; if this fails (or the process dies first,
        // or shared writes left the size unknown) the file keeps trailing
        // zeros. Not synced: a sync of the file later, or none, decides
        // whether the cut survives power loss.
        if let Ok(size) = self.known_size() {
            let _ = self.backing.file().set_len(size);
        }
    }
}

/// Creates `path` for writing (and reading, if `read`), emptied.
#[cfg(any(unix, windows))]
fn create_empty(path: &Path, read: bool) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(read)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| annotate(e, "create", path))
}

/// Wraps an error from `op` on `path` so its message names both.
pub(crate) fn annotate(err: io::Error, op: &str, path: &Path) -> io::Error {
    io::Error::new(err.kind(), format!("{op} {}: {err}", path.display()))
}
