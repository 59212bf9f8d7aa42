//! The mapped backing's growth: the file is reserved (`fallocate`), mapped
//! a chunk at a time and faulted in ahead of the writers, who copy into the
//! chunks below the grown end.

use std::fs::File;
use std::io;
use std::sync::PoisonError;
use std::sync::atomic::Ordering;

#[cfg(target_os = "linux")]
use std::{os::fd::AsRawFd, ptr};

use super::{Backing, SharedFile};

/// Bytes per mapping: a file is mapped this much at a time.
#[cfg(not(loom))]
pub(super) const CHUNK: u64 = 8 << 20;
/// The most chunks a file has: its largest size is `CHUNKS * CHUNK`
/// (64 GiB).
#[cfg(not(loom))]
pub(super) const CHUNKS: usize = 8192;
/// Bytes the file grows by at least (blocks reserved and pages faulted in).
#[cfg(not(loom))]
pub(super) const GROW: u64 = 1 << 20;

// Under loom, smaller: each iteration of a model makes, grows and maps a
// fresh file, and with 8192 loom atomics per file and 1 MiB faulted in per
// growth the models ran about 25 times slower. A model's writes cross
// growths and chunks within a few hundred KiB. Still multiples of any page
// size Linux uses (up to 64 KiB): mappings and populated ranges start at a
// page. (`tests/loom.rs` assumes these sizes.)
#[cfg(loom)]
pub(super) const CHUNK: u64 = 128 << 10;
#[cfg(loom)]
pub(super) const CHUNKS: usize = 4;
#[cfg(loom)]
pub(super) const GROW: u64 = 64 << 10;

impl SharedFile {
    /// Copies `data` into the mapped chunks from `offset`.
    ///
    /// # Safety
    ///
    /// As `write_at`, and the file is grown past the copy's end.
    #[cfg(target_os = "linux")]
    pub(super) unsafe fn copy_into_map(&self, offset: u64, data: &[u8]) {
        let mut at = offset;
        let mut rest = data;
        while !rest.is_empty() {
            let chunk = (at / CHUNK) as usize;
            let within = at % CHUNK;
            let n = rest.len().min((CHUNK - within) as usize);
            // Relaxed: `grown` (Acquire, in the caller or in `grow_to`)
            // passed this chunk, so its mapping was stored before.
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
    /// See also [`grow_to`](Self::grow_to).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use shared_log_file::SharedFile;
    ///
    /// let positional = SharedFile::create_positional(dir.path().join("a")).unwrap();
    /// assert_eq!(positional.grown(), u64::MAX);
    /// # #[cfg(target_os = "linux")] {
    /// let mapped = SharedFile::create_mapped(dir.path().join("b")).unwrap();
    /// let grown = mapped.grown(); // the first growth, made by `create_mapped`
    /// assert!(grown > 0);
    /// // SAFETY: one writer, and no append or sync meanwhile.
    /// unsafe { mapped.write_at(grown, b"past it") }.unwrap(); // grows the file first
    /// assert!(mapped.grown() > grown);
    /// # }
    /// ```
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
    /// # let path = dir.path().join("log");
    /// # #[cfg(target_os = "linux")] {
    /// let shared = shared_log_file::SharedFile::create_mapped(&path).unwrap();
    /// shared.grow_to(3 << 20).unwrap();
    /// assert!(shared.grown() >= 3 << 20);
    /// assert_eq!(shared.size(), 0); // grown is not written
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
        #[cfg(target_os = "linux")]
        if let Backing::Mapped(file) = &self.backing {
            let target = end.div_ceil(GROW) * GROW;
            if target > CHUNK * CHUNKS as u64 {
                return Err(io::Error::new(
                    io::ErrorKind::FileTooLarge,
                    "a mapped file grows to 64 GiB at most",
                ));
            }
            let (start, len) = file_range(grown, target - grown)?;
            // SAFETY: a plain system call on a descriptor we own.
            if unsafe { libc::fallocate(file.as_raw_fd(), 0, start, len) } != 0 {
                return Err(io::Error::last_os_error());
            }
            self.map(file, grown, target)?;
            // Release: writers that read the new end (Acquire) see the
            // chunks.
            self.grown.store(target, Ordering::Release);
            return Ok(());
        }
        unreachable!("a positional file is grown to the end from the start")
    }

    /// Maps the chunks of `grown..target` of `file` not mapped yet, and
    /// faults the pages in: for `grow_to`, which holds the grow lock and
    /// reserved the blocks.
    #[cfg(target_os = "linux")]
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
            // Relaxed: the Release store of `grown` after the mapping publishes
            // it.
            slot.store(base.cast(), Ordering::Relaxed);
        }
        // Fault the new pages in writable now, rather than one fault at a
        // time inside the writers' copies. Only a hint: where the kernel
        // lacks `MADV_POPULATE_WRITE` (before Linux 5.14) the copies fault.
        let mut at = grown;
        while at < target {
            let chunk = at / CHUNK;
            let upto = target.min((chunk + 1) * CHUNK);
            // Relaxed: growers store the chunks under the grow lock, which
            // we hold.
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
}

/// The page size (the alignment of a mapping's file offset).
#[cfg(target_os = "linux")]
pub(super) fn page_size() -> u64 {
    // SAFETY: `sysconf` only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(page).ok().filter(|&p| p > 0).unwrap_or(4096)
}

/// `offset` and `len` as `off_t`s, or an error past the largest file.
#[cfg(target_os = "linux")]
fn file_range(offset: u64, len: u64) -> io::Result<(libc::off_t, libc::off_t)> {
    let too_large = || io::Error::new(io::ErrorKind::FileTooLarge, "the file is too large to map");
    let start = libc::off_t::try_from(offset).map_err(|_| too_large())?;
    let bytes = libc::off_t::try_from(len).map_err(|_| too_large())?;
    start.checked_add(bytes).ok_or_else(too_large)?;
    Ok((start, bytes))
}
