//! [`SharedFile`], a file that many threads write at once, each at offsets
//! it reserved, and the handle that [`PosixFs`](super::PosixFs) gives it on
//! Linux: through a shared memory map
//! ([`FileSystem::create_mapped`](super::FileSystem::create_mapped)) or with
//! a positioned write each
//! ([`FileSystem::create_positional`](super::FileSystem::create_positional)).
//!
//! Appends from one thread at a time need the writers to hand their bytes
//! to that thread and wait for it. Writes at reserved offsets need neither:
//! each writer writes its own bytes, beside the others, and they are in the
//! page cache as soon as its write ends: they survive a crash of the
//! process. A copy into a mapping of the file costs no system call; a
//! `pwrite` does, and the kernel takes the file's lock for each, but only
//! for the copy into the page cache. (Figures:
//! `benches/results/2026-12-05-engine-write-path.md`, Sessions 17 and 19,
//! and `2026-12-06-engine-write-path.md`, Session 24.)
//!
//! A mapped file grows `GROW` bytes at a time, ahead of the writes:
//! `fallocate` extends it and reserves the blocks first, so a full disk
//! fails that call, never a page fault in the middle of a copy. It is
//! mapped in chunks of `CHUNK` bytes, each mapped once and kept until the
//! file is dropped, so an address handed to one writer stays valid while
//! others extend the file; its new pages are faulted in writable
//! (`MADV_POPULATE_WRITE`) as it grows rather than one fault per page in
//! the middle of a copy. `fdatasync` writes back the pages
//! dirtied through the map as it does written ones (on Linux
//! `msync(MS_SYNC)` is the same call on a range), so sync handles are the
//! plain file's. A sync through the file itself, and dropping it, cut it
//! back to the bytes written; after a crash, the rest of the last growth
//! stays as zeros, which log recovery reads as a torn tail.
//!
//! A positional file reserves nothing ahead: each `pwrite` extends the
//! file as an append does, so a full disk fails the write that meets it,
//! and after a crash the file ends where the furthest write ended. Blocks
//! reserved ahead cost more than they save there: on ext4 a `fdatasync` of
//! writes into reserved (or sparse) space inside the file's size was
//! slower than one of writes past its end under load, and sync writers
//! from 32 threads wrote at 0.69x-0.80x the appending log's rate with
//! `fallocate` ahead, against 0.97x-1.09x without (Session 24's figures).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use self::sync::{AtomicBool, AtomicPtr, AtomicU64, Mutex, ptr_get_mut};
use super::posix::PosixFileSync;
use super::{FileSync, WritableFile, annotate};

mod sync;

/// Bytes per mapping: a file is mapped this much at a time.
#[cfg(not(loom))]
const CHUNK: u64 = 8 << 20;
/// The most chunks a file has: its largest size is `CHUNKS * CHUNK`
/// (64 GiB).
#[cfg(not(loom))]
const CHUNKS: usize = 8192;
/// Bytes the file grows by at least (blocks reserved and pages faulted in).
#[cfg(not(loom))]
const GROW: u64 = 1 << 20;

// Under loom, smaller: each iteration of a model makes, grows and maps a
// fresh file, and with 8192 loom atomics per file and 1 MiB faulted in per
// growth the models ran about 25 times slower. A model's writes cross
// growths and chunks within a few hundred KiB. Still multiples of any page
// size Linux uses (up to 64 KiB): mappings and populated ranges start at a
// page. (`tests/loom.rs` assumes these sizes.)
#[cfg(loom)]
const CHUNK: u64 = 128 << 10;
#[cfg(loom)]
const CHUNKS: usize = 4;
#[cfg(loom)]
const GROW: u64 = 64 << 10;

/// A file that many threads write at once, each at offsets it reserved
/// (say, with `ordered_publish::Sequencer::reserve_with_bytes`): through a
/// shared memory map (no lock and no system call per write), or with a
/// `pwrite` each. Reached through [`WritableFile::shared_writes`] of a file
/// made by [`FileSystem::create_mapped`](super::FileSystem::create_mapped)
/// or [`FileSystem::create_positional`](super::FileSystem::create_positional).
///
/// The writers' offsets are theirs to track: once they are done, their
/// owner says where the writes end ([`set_size`](Self::set_size)), which
/// is then the file's size (where appends go, what a sync cuts to). Bytes
/// below it that nobody wrote read as zeros, which a log reader takes for
/// damage (or, in a log that says it was written this way, a crash's
/// writes in flight). Writes add no shared counter of their own.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::env::{FileSystem, PosixFs};
///
/// let path = dir.path().join("log");
/// let mut file = PosixFs.create_mapped(&path).unwrap();
/// # #[cfg(target_os = "linux")] {
/// let shared = file.shared_writes().expect("mapped on Linux");
/// std::thread::scope(|s| {
///     let shared = &shared;
///     // SAFETY: the two ranges do not overlap.
///     s.spawn(move || unsafe { shared.write_at(3, b"def") }.unwrap());
///     unsafe { shared.write_at(0, b"abc") }.unwrap();
/// });
/// shared.set_size(6); // the writers are done: their writes end at 6
/// file.sync().unwrap(); // cut back and synced
/// assert_eq!(std::fs::read(&path).unwrap(), b"abcdef");
/// # }
/// ```
#[derive(Debug)]
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
    /// Held while growing, one grower at a time.
    grow: Mutex<()>,
    /// The file's size: where appends go, what a sync or drop cuts to.
    written: AtomicU64,
    /// Set by a shared write, cleared by `set_size`: while set, the size is
    /// not known (appends and syncs refuse, a drop leaves the file long).
    size_unknown: AtomicBool,
    /// Unit tests' stand-in for the disk: called with each positional
    /// write's offset before the write, whose error it returns instead.
    #[cfg(test)]
    pub(crate) before_write: WriteHook,
}

/// See `SharedFile::before_write`.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct WriteHook(pub(crate) std::sync::Mutex<Option<WriteHookFn>>);

#[cfg(test)]
impl WriteHook {
    /// Calls the hook, if one is set, with no lock held: a hook may block
    /// while other writers go through theirs.
    fn call(&self, offset: u64) -> io::Result<()> {
        let hook = self.0.lock().unwrap().clone();
        hook.map_or(Ok(()), |hook| hook(offset))
    }
}

/// A unit test's stand-in for the disk (see `WriteHook`).
#[cfg(test)]
pub(crate) type WriteHookFn = Arc<dyn Fn(u64) -> io::Result<()> + Send + Sync>;

#[cfg(test)]
impl std::fmt::Debug for WriteHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WriteHook")
    }
}

/// How the writes of a [`SharedFile`] reach the file.
#[derive(Debug)]
pub(super) enum Backing {
    /// Copies into a shared memory map of the file.
    Mapped(File),
    /// A positioned write each: a `pwrite` (a [`File`]'s), or a file
    /// system's own (the fault-injecting one's).
    Positional(Box<dyn PositionedFile>),
}

impl Backing {
    /// The file, for the calls both kinds make.
    fn file(&self) -> &dyn PositionedFile {
        match self {
            Backing::Mapped(file) => file,
            Backing::Positional(file) => &**file,
        }
    }
}

/// A file that a [`SharedFile`] writes with a positioned write each: a
/// [`File`], or a file of a file system of this crate's own. Errors are
/// the bare ones: the shared file names itself in them.
pub(super) trait PositionedFile: Send + Sync + std::fmt::Debug {
    /// Writes all of `data` at `offset`, extending the file as needed.
    fn write_all_at(&self, data: &[u8], offset: u64) -> io::Result<()>;
    /// Cuts or extends the file to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// Makes the file's data durable (`fdatasync`).
    fn sync_data(&self) -> io::Result<()>;
    /// A handle that makes it durable from another thread; `path` names
    /// the file in its errors.
    fn sync_handle(&self, path: &Path) -> io::Result<Arc<dyn FileSync>>;
}

impl PositionedFile for File {
    fn write_all_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::write_all_at(self, data, offset)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        File::set_len(self, len)
    }

    fn sync_data(&self) -> io::Result<()> {
        File::sync_data(self)
    }

    fn sync_handle(&self, path: &Path) -> io::Result<Arc<dyn FileSync>> {
        PosixFileSync::of(self, path)
    }
}

impl SharedFile {
    /// Grows `file` (created empty) a first time, or returns the error of a
    /// file system that cannot reserve blocks or (`Mapped`) map its files
    /// (`EOPNOTSUPP`, `ENODEV`: the caller then writes the file normally).
    fn new(backing: Backing, path: PathBuf) -> io::Result<SharedFile> {
        // A positional file is grown to the end from the start: each
        // `pwrite` extends it, and no growth step ever runs.
        let (chunks, grown) = match backing {
            Backing::Mapped(_) => (CHUNKS, 0),
            Backing::Positional(_) => (0, u64::MAX),
        };
        let shared = SharedFile {
            path,
            backing,
            chunks: (0..chunks)
                .map(|_| AtomicPtr::new(ptr::null_mut()))
                .collect(),
            grown: AtomicU64::new(grown),
            grow: Mutex::new(()),
            written: AtomicU64::new(0),
            size_unknown: AtomicBool::new(false),
            #[cfg(test)]
            before_write: WriteHook::default(),
        };
        shared.grow_to(1)?;
        Ok(shared)
    }

    /// Writes `data` into the file at `offset`, growing the file first if
    /// it does not reach that far. Mapped, fails only where growing fails
    /// (a full disk, or past the largest size, 64 GiB); positional, where
    /// the `pwrite` fails (a full disk, an I/O error), which may leave part
    /// of `data` written. The file holds the bytes below `offset` it held
    /// before either way. The file's size is unknown from then on, until
    /// [`set_size`](Self::set_size).
    ///
    /// # Safety
    ///
    /// No other thread may write any byte of `offset..offset + data.len()`
    /// while this call runs (the ranges come from one reservation each), and
    /// none may call [`WritableFile::sync`] or [`WritableFile::append`] on
    /// the file's own handle, which cut and extend it.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::env::{FileSystem, PosixFs};
    /// let path = dir.path().join("f");
    /// let file = PosixFs.create_mapped(&path).unwrap();
    /// # #[cfg(target_os = "linux")] {
    /// let shared = file.shared_writes().unwrap();
    /// // SAFETY: one writer.
    /// unsafe { shared.write_at(0, b"ab") }.unwrap();
    /// shared.set_size(2);
    /// assert_eq!(file.size(), 2);
    /// # }
    /// ```
    pub unsafe fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        // Relaxed (both): a flag for the owner, who reads it once the
        // writers are done. Stored once: the line stays shared among them.
        if !self.size_unknown.load(Ordering::Relaxed) {
            self.size_unknown.store(true, Ordering::Relaxed);
        }
        // SAFETY: the caller's guarantee.
        unsafe { self.copy_at(offset, data) }
    }

    /// [`Self::write_at`] without marking the size unknown (for appends).
    ///
    /// # Safety
    ///
    /// As `write_at`.
    unsafe fn copy_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let end = offset + data.len() as u64;
        if end > self.grown() {
            self.grow_to(end)
                .map_err(|e| annotate(e, "grow", &self.path))?;
        }
        if let Backing::Positional(file) = &self.backing {
            #[cfg(test)]
            self.before_write.call(offset)?;
            return file
                .write_all_at(data, offset)
                .map_err(|e| annotate(e, "write", &self.path));
        }
        let mut at = offset;
        let mut rest = data;
        while !rest.is_empty() {
            let chunk = (at / CHUNK) as usize;
            let within = at % CHUNK;
            let n = rest.len().min((CHUNK - within) as usize);
            // Relaxed: `grown` (Acquire, above or in `grow_to`) passed this
            // chunk, so its mapping was stored before.
            let base = self.chunks[chunk].load(Ordering::Relaxed);
            // Checked under loom in release builds too (its models run
            // there): a null base is how a too-weak ordering shows.
            if cfg!(any(debug_assertions, loom)) {
                assert!(!base.is_null(), "a chunk below the grown end is mapped");
            }
            // SAFETY: the chunk's mapping is live until the file is dropped,
            // and `within + n <= CHUNK` keeps the copy inside it, below the
            // grown end, so inside the file (no SIGBUS); the caller
            // guarantees nobody else writes these bytes meanwhile, and `rest`
            // is the caller's memory, not the mapping's.
            unsafe { ptr::copy_nonoverlapping(rest.as_ptr(), base.add(within as usize), n) };
            at += n as u64;
            rest = &rest[n..];
        }
        Ok(())
    }

    /// Says where the shared writes end, once they are done: the file's
    /// size from now on (where appends go, what a sync or a drop cuts the
    /// file to). Until it is called after a shared write, appends and
    /// syncs through the file's handle fail, and a drop leaves the file as
    /// long as it was grown or written (mapped, zeros after the writes: a
    /// torn tail to a log reader).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::env::{FileSystem, PosixFs};
    /// let mut file = PosixFs.create_mapped(&dir.path().join("f")).unwrap();
    /// # #[cfg(target_os = "linux")] {
    /// let shared = file.shared_writes().unwrap();
    /// // SAFETY: one writer.
    /// unsafe { shared.write_at(0, b"abc") }.unwrap();
    /// assert!(file.append(b"d").is_err()); // where would it go?
    /// shared.set_size(3);
    /// file.append(b"d").unwrap();
    /// assert_eq!(file.size(), 4);
    /// # }
    /// ```
    pub fn set_size(&self, size: u64) {
        // Relaxed (both): the caller orders this after the writes it
        // measures, and before its own appends and syncs.
        self.written.store(size, Ordering::Relaxed);
        self.size_unknown.store(false, Ordering::Relaxed);
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
        Ok(self.written())
    }

    /// Whether writes reach the file with a `pwrite` each (a file made by
    /// [`FileSystem::create_positional`](super::FileSystem::create_positional)),
    /// not through a map.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::env::{FileSystem, PosixFs};
    /// let file = PosixFs.create_positional(&dir.path().join("f")).unwrap();
    /// # #[cfg(target_os = "linux")]
    /// assert!(file.shared_writes().unwrap().is_positional());
    /// ```
    pub fn is_positional(&self) -> bool {
        matches!(self.backing, Backing::Positional(_))
    }

    /// How far the file is grown: writes that end there touch only memory
    /// (a [`write_at`](Self::write_at) past it grows the file first);
    /// `u64::MAX` for a positional file, which never needs a growth.
    ///
    /// Acquire: pairs with the grower's Release, so that a write below it
    /// finds its chunk mapped.
    ///
    /// # Examples
    ///
    /// See [`grow_to`](Self::grow_to).
    pub fn grown(&self) -> u64 {
        self.grown.load(Ordering::Acquire)
    }

    /// Grows the file to hold at least `end` bytes (in steps of 1 MiB):
    /// reserves the blocks (`fallocate`), maps what is not mapped yet and
    /// faults the new pages in; nothing for a positional file, whose writes
    /// extend it themselves. Waits for another thread that grows it. For
    /// an owner that grows the file ahead of its writers, so that no write
    /// waits for a growth while others wait for it.
    ///
    /// # Errors
    ///
    /// A full disk, a file system that cannot reserve blocks, or `end` past
    /// 64 GiB: the file is as it was.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::env::{FileSystem, PosixFs};
    /// let file = PosixFs.create_mapped(&dir.path().join("f")).unwrap();
    /// # #[cfg(target_os = "linux")] {
    /// let shared = file.shared_writes().unwrap();
    /// shared.grow_to(3 << 20).unwrap();
    /// assert!(shared.grown() >= 3 << 20);
    /// assert_eq!(file.size(), 0); // grown is not written
    /// # }
    /// ```
    pub fn grow_to(&self, end: u64) -> io::Result<()> {
        let _guard = self.grow.lock().unwrap_or_else(PoisonError::into_inner);
        // Relaxed: only growers store it, under the lock we hold.
        let grown = self.grown.load(Ordering::Relaxed);
        // Always, for a positional file (grown to `u64::MAX`): only a mapped
        // one goes on.
        if end <= grown {
            return Ok(());
        }
        let target = end.div_ceil(GROW) * GROW;
        if target > CHUNK * CHUNKS as u64 {
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                "a mapped file grows to 64 GiB at most",
            ));
        }
        let Backing::Mapped(file) = &self.backing else {
            unreachable!("a positional file is grown to the end from the start");
        };
        let (start, len) = file_range(grown, target - grown)?;
        // SAFETY: a plain system call on a descriptor we own.
        if unsafe { libc::fallocate(file.as_raw_fd(), 0, start, len) } != 0 {
            return Err(io::Error::last_os_error());
        }
        self.map(file, grown, target)?;
        // Release: writers that read the new end (Acquire) see the chunks.
        self.grown.store(target, Ordering::Release);
        Ok(())
    }

    /// Maps the chunks of `grown..target` of `file` not mapped yet, and
    /// faults the pages in: for `grow_to`, which holds the grow lock and
    /// reserved the blocks.
    fn map(&self, file: &File, grown: u64, target: u64) -> io::Result<()> {
        let fd = file.as_raw_fd();
        for chunk in (grown / CHUNK)..target.div_ceil(CHUNK) {
            let slot = &self.chunks[chunk as usize];
            // Relaxed: only growers store the chunks, under the lock.
            if !slot.load(Ordering::Relaxed).is_null() {
                continue;
            }
            let (offset, len) = file_range(chunk * CHUNK, CHUNK)?;
            // SAFETY: a fresh mapping at an address of the kernel's choice.
            // The file reaches only part of it; writes go below the grown
            // end, which the fallocate above placed inside the file, so no
            // access faults with SIGBUS unless another process shrinks it.
            let base = unsafe {
                libc::mmap(
                    ptr::null_mut(),
                    len as usize,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    fd,
                    offset,
                )
            };
            if base == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            slot.store(base.cast(), Ordering::Relaxed);
        }
        // Fault the new pages in writable now, rather than one fault at a
        // time inside the writers' copies. Only a hint: where the kernel
        // lacks `MADV_POPULATE_WRITE` (before Linux 5.14) the copies fault.
        let mut at = grown;
        while at < target {
            let chunk = at / CHUNK;
            let upto = target.min((chunk + 1) * CHUNK);
            let base = self.chunks[chunk as usize].load(Ordering::Relaxed);
            // SAFETY: `at..upto` lies inside the chunk's live mapping and
            // inside the file; populating writes nothing the file does not
            // already hold. `at` is page-aligned: growths are `GROW`
            // multiples, and a cut (`sync`) leaves `grown` at a page.
            unsafe {
                libc::madvise(
                    base.add((at % CHUNK) as usize).cast(),
                    (upto - at) as usize,
                    libc::MADV_POPULATE_WRITE,
                )
            };
            at = upto;
        }
        Ok(())
    }

    /// The file's size: the end of the appends, or as last set (see
    /// [`set_size`](Self::set_size)).
    fn written(&self) -> u64 {
        // Relaxed: see `set_size`.
        self.written.load(Ordering::Relaxed)
    }
}

impl Drop for SharedFile {
    fn drop(&mut self) {
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
        // zeros, which log recovery reads as a torn tail. Not synced: a
        // sync of the file later, or none, decides whether the cut survives
        // power loss.
        if let Ok(size) = self.known_size() {
            let _ = self.backing.file().set_len(size);
        }
    }
}

/// The handle [`FileSystem::create_mapped`](super::FileSystem::create_mapped)
/// and [`FileSystem::create_positional`](super::FileSystem::create_positional)
/// return on Linux: appends at the end of the shared file, which
/// [`WritableFile::shared_writes`] hands out.
#[derive(Debug)]
pub(super) struct SharedWritableFile {
    shared: Arc<SharedFile>,
}

impl SharedWritableFile {
    /// See [`SharedFile::new`].
    pub(super) fn new(backing: Backing, path: PathBuf) -> io::Result<SharedWritableFile> {
        Ok(SharedWritableFile {
            shared: Arc::new(SharedFile::new(backing, path)?),
        })
    }
}

/// The page size (the alignment of a mapping's file offset).
fn page_size() -> u64 {
    // SAFETY: `sysconf` only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(page).ok().filter(|&p| p > 0).unwrap_or(4096)
}

/// `offset` and `len` as `off_t`s, or an error past the largest file.
fn file_range(offset: u64, len: u64) -> io::Result<(libc::off_t, libc::off_t)> {
    let too_large = || io::Error::new(io::ErrorKind::FileTooLarge, "the log is too large to map");
    let start = libc::off_t::try_from(offset).map_err(|_| too_large())?;
    let bytes = libc::off_t::try_from(len).map_err(|_| too_large())?;
    start.checked_add(bytes).ok_or_else(too_large)?;
    Ok((start, bytes))
}

impl WritableFile for SharedWritableFile {
    /// Writes at the end of the furthest write: while no other thread
    /// writes through [`shared_writes`](WritableFile::shared_writes).
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        let at = self.shared.known_size()?;
        // SAFETY: appends take `&mut self` and shared writers are held off
        // by the caller (see `write_at`), so nothing else writes these bytes.
        unsafe { self.shared.copy_at(at, data) }?;
        // Relaxed: appends take `&mut self`; see `set_size`.
        self.shared
            .written
            .store(at + data.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        // The writes are in the page cache already.
        Ok(())
    }

    /// Cuts the file back to the bytes written, then syncs: the length
    /// that survives is exact, so a log ended this way (the engine syncs
    /// the old log as it moves to a new one, and the last as it closes)
    /// has no zeros after its last record. No shared writer may be at work
    /// (see `write_at`): the cut would leave its bytes outside the file.
    fn sync(&mut self) -> io::Result<()> {
        let shared = &*self.shared;
        {
            let _guard = shared.grow.lock().unwrap_or_else(PoisonError::into_inner);
            let written = shared.known_size()?;
            shared
                .backing
                .file()
                .set_len(written)
                .map_err(|e| annotate(e, "truncate", &shared.path))?;
            // Mapped, the next write grows the file again, from the page
            // that holds the end (growths start page-aligned). Relaxed:
            // under the lock, and no writer is at work.
            if let Backing::Mapped(_) = shared.backing {
                let page = page_size();
                shared.grown.store(written / page * page, Ordering::Relaxed);
            }
        }
        // fdatasync writes back the pages dirtied through the map too.
        shared
            .backing
            .file()
            .sync_data()
            .map_err(|e| annotate(e, "sync", &shared.path))
    }

    fn size(&self) -> u64 {
        self.shared.written()
    }

    fn sync_handle(&self) -> io::Result<Arc<dyn FileSync>> {
        self.shared.backing.file().sync_handle(&self.shared.path)
    }

    fn shared_writes(&self) -> Option<Arc<SharedFile>> {
        Some(self.shared.clone())
    }
}

#[cfg(test)]
mod tests;
