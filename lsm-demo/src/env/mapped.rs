//! Appends through a shared memory map: [`PosixFs`](super::PosixFs)'s
//! [`FileSystem::create_mapped`](super::FileSystem::create_mapped) on Linux.
//!
//! A `write` per append costs a system call and, when the appends come from
//! threads on different cores in turn, the kernel's per-file state moving
//! between those cores with them. A copy into a mapped window of the file
//! costs neither, and the bytes are in the page cache as soon as it ends,
//! as after a `write`: they survive a crash of the process. (Figures:
//! `benches/results/2026-12-05-engine-write-path.md`, Session 17.)
//!
//! The file grows a window at a time: `fallocate` extends it and reserves
//! the window's blocks first (so a full disk fails that call, never a later
//! page fault), then the window is mapped `MAP_SHARED`. Windows start at
//! 64 KiB and double up to 1 MiB; their pages are faulted in 64 KiB at a
//! time ahead of the appends (`MADV_POPULATE_WRITE`), rather than one fault
//! per page in the middle of a copy (the engine's drainer copies while
//! every writer behind it waits). `fdatasync` writes back the pages dirtied
//! through the map as it does written ones (on Linux `msync(MS_SYNC)` is the
//! same call on a range), so sync handles are the plain file's. A sync
//! through the file itself, and dropping it, cut it back to the bytes
//! appended; after a crash, the rest of the last window stays as zeros,
//! which log recovery reads as a torn tail.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::ptr::NonNull;
use std::sync::Arc;

use super::posix::{PosixFileSync, sync_data};
use super::{FileSync, WritableFile, annotate};

/// The first window's size; each later one doubles it, up to `MAX_WINDOW`.
const FIRST_WINDOW: usize = 64 << 10;
const MAX_WINDOW: usize = 1 << 20;
/// Pages are faulted in writable this many bytes at a time, ahead of the
/// appends: one `madvise` instead of a fault per page, and never inside a
/// copy (a drainer that faults holds every writer behind it).
const PREFAULT: usize = 64 << 10;

/// A file appended through mapped windows (see the module docs).
#[derive(Debug)]
pub(super) struct MappedWritableFile {
    file: File,
    path: PathBuf,
    /// Bytes appended: where the next append goes.
    size: u64,
    /// The mapped window the appends go to, if any.
    window: Option<Window>,
    /// The size of the next window.
    next_window: usize,
}

/// One mapping of `len` bytes of the file from `offset` (page-aligned).
#[derive(Debug)]
struct Window {
    base: NonNull<u8>,
    offset: u64,
    len: usize,
    /// Bytes from `base` already faulted in writable (or tried).
    prefaulted: usize,
}

impl Window {
    /// Faults in, writable, the pages from where the last call stopped to
    /// at least `PREFAULT` bytes past `to`, if `to` passed it. Only a
    /// hint: where the kernel lacks `MADV_POPULATE_WRITE` (before Linux
    /// 5.14) the copies fault instead.
    fn prefault(&mut self, to: usize) {
        if to < self.prefaulted {
            return;
        }
        // A multiple of `PREFAULT` (so of the page size), or the window's
        // end: where the next call starts must be page-aligned.
        let end = ((to / PREFAULT + 2) * PREFAULT).min(self.len);
        // SAFETY: `prefaulted..end` lies inside the live mapping (a page
        // multiple from its page-aligned base, or its end); populating it
        // writes nothing the file does not already hold.
        unsafe {
            libc::madvise(
                self.base.as_ptr().add(self.prefaulted).cast(),
                end - self.prefaulted,
                libc::MADV_POPULATE_WRITE,
            )
        };
        self.prefaulted = end;
    }
}

// SAFETY: the mapping belongs to this file alone (nothing else has its
// address) and is only touched through `&mut self`, so moving the owner to
// another thread moves every access with it.
unsafe impl Send for MappedWritableFile {}

impl MappedWritableFile {
    /// Maps the first window of `file` (created empty), or returns the
    /// error of a file system that cannot reserve blocks or map its files
    /// (`EOPNOTSUPP`, `ENODEV`: the caller then writes the file normally).
    pub(super) fn new(file: File, path: PathBuf) -> io::Result<MappedWritableFile> {
        let mut mapped = MappedWritableFile {
            file,
            path,
            size: 0,
            window: None,
            next_window: FIRST_WINDOW,
        };
        mapped.map_next_window()?;
        Ok(mapped)
    }

    /// Unmaps the full window and maps the next one, from the page that
    /// holds `size`, after reserving its blocks.
    fn map_next_window(&mut self) -> io::Result<()> {
        self.unmap();
        let page = page_size();
        let offset = self.size / page * page;
        let len = self.next_window;
        let fd = self.file.as_raw_fd();
        let (start, bytes) = file_range(offset, len)?;
        // SAFETY: a plain system call on a descriptor we own.
        if unsafe { libc::fallocate(fd, 0, start, bytes) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh mapping at an address of the kernel's choice, of a
        // file range that now exists (the fallocate above extended the
        // file past it), so no access inside it faults with SIGBUS unless
        // another process shrinks the file.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                start,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = NonNull::new(base.cast()).expect("mmap returned a null address");
        self.window = Some(Window {
            base,
            offset,
            len,
            prefaulted: 0,
        });
        self.next_window = (len * 2).min(MAX_WINDOW);
        Ok(())
    }

    fn unmap(&mut self) {
        if let Some(w) = self.window.take() {
            // SAFETY: `w` is a live mapping made by `map_next_window` with
            // this length, and it was just taken out of `self`, so nothing
            // refers to it any more. The pages stay dirty in the page cache.
            unsafe { libc::munmap(w.base.as_ptr().cast(), w.len) };
        }
    }
}

/// The page size (the alignment of a mapping's file offset).
fn page_size() -> u64 {
    // SAFETY: `sysconf` only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(page).ok().filter(|&p| p > 0).unwrap_or(4096)
}

/// `offset` and `len` as `off_t`s, or an error past the largest file.
fn file_range(offset: u64, len: usize) -> io::Result<(libc::off_t, libc::off_t)> {
    let too_large = || io::Error::new(io::ErrorKind::FileTooLarge, "the log is too large to map");
    let start = libc::off_t::try_from(offset).map_err(|_| too_large())?;
    let bytes = libc::off_t::try_from(len).map_err(|_| too_large())?;
    start.checked_add(bytes).ok_or_else(too_large)?;
    Ok((start, bytes))
}

impl WritableFile for MappedWritableFile {
    fn append(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            if !matches!(&self.window, Some(w) if self.size < w.offset + w.len as u64) {
                self.map_next_window()
                    .map_err(|e| annotate(e, "map a window of", &self.path))?;
            }
            let window = self.window.as_mut().expect("a window is mapped");
            let at = (self.size - window.offset) as usize;
            let n = data.len().min(window.len - at);
            window.prefault(at + n);
            // SAFETY: `at + n <= window.len`, so the destination lies in the
            // live mapping, which is ours alone (`&mut self`); `data` is a
            // separate allocation of ours, so the two cannot overlap.
            unsafe {
                std::ptr::copy_nonoverlapping(data.as_ptr(), window.base.as_ptr().add(at), n);
            }
            self.size += n as u64;
            data = &data[n..];
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        // The copies are in the page cache already.
        Ok(())
    }

    /// Cuts the file back to the appended bytes, then syncs: the length
    /// that survives is exact, so a log ended this way (the engine syncs
    /// the old log as it moves to a new one, and the last as it closes)
    /// has no zeros after its last record. The next append maps a new
    /// window.
    fn sync(&mut self) -> io::Result<()> {
        self.unmap();
        self.file
            .set_len(self.size)
            .map_err(|e| annotate(e, "truncate", &self.path))?;
        // fdatasync writes back the pages dirtied through the map too.
        sync_data(&self.file, &self.path)
    }

    fn size(&self) -> u64 {
        self.size
    }

    fn sync_handle(&self) -> io::Result<Arc<dyn FileSync>> {
        PosixFileSync::of(&self.file, &self.path)
    }
}

impl Drop for MappedWritableFile {
    fn drop(&mut self) {
        self.unmap();
        // The reserved rest of the window goes; if this fails (or the
        // process dies first) the file keeps trailing zeros, which log
        // recovery reads as a torn tail. Not synced: a sync of the file
        // later, or none, decides whether the cut survives power loss.
        let _ = self.file.set_len(self.size);
    }
}

#[cfg(test)]
mod tests;
