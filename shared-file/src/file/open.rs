//! Making a [`SharedFile`]: over a file of the caller's, or one created at
//! a path, with each of the three backings.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use super::{Backing, SharedFile, annotate, create_empty};
use crate::PositionedFile;
use crate::striped::Stripes;
use crate::sync::{AtomicBool, AtomicPtr, AtomicU64, Mutex};

#[cfg(target_os = "linux")]
use super::growth::CHUNKS;

impl SharedFile {
    /// A file whose writers copy into a shared memory map of `file`, which
    /// must be empty (it is written from offset 0) and open for reading and
    /// writing (a shared writable mapping needs both); `path` names it in
    /// errors. It grows `GROW` bytes (1 MiB) at a time, ahead of the writes:
    /// `fallocate` extends it and reserves the blocks first, so a full disk
    /// fails that call, never a page fault in the middle of a copy; its new
    /// pages are faulted in writable (`MADV_POPULATE_WRITE`) as it grows.
    /// It is mapped in chunks of 8 MiB, each mapped once and kept until the
    /// file is dropped, so an address handed to one writer stays valid while
    /// others grow the file. Its largest size is 64 GiB.
    ///
    /// A [`sync`](Self::sync) cuts the file back to its size; after a crash
    /// (or a drop that could not cut it) the rest of the last growth stays
    /// as zeros.
    ///
    /// # Errors
    ///
    /// The first growth's: `EOPNOTSUPP` from a file system without
    /// `fallocate`, `ENODEV` from one whose files cannot be mapped (write
    /// the file otherwise there), a full disk.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use shared_log_file::SharedFile;
    /// use std::fs::OpenOptions;
    ///
    /// let path = dir.path().join("log");
    /// let file = OpenOptions::new().read(true).write(true).create(true).open(&path).unwrap();
    /// let shared = SharedFile::mapped(file, &path).unwrap();
    /// assert!(!shared.is_positional());
    /// // SAFETY: one writer, and nobody appends or syncs meanwhile.
    /// unsafe { shared.write_at(0, b"mapped") }.unwrap();
    /// shared.set_size(6);
    /// drop(shared); // cuts the file to its size
    /// assert_eq!(std::fs::read(&path).unwrap(), b"mapped");
    /// ```
    #[cfg(target_os = "linux")]
    pub fn mapped(file: File, path: impl Into<PathBuf>) -> io::Result<SharedFile> {
        SharedFile::new(Backing::Mapped(file), path.into())
    }

    /// A file whose writers write with a positioned write each
    /// ([`PositionedFile::write_all_at`]: a `pwrite` for a [`File`]), which
    /// extends the file as an append does: a full disk fails the write that
    /// meets it, and after a crash the file ends where the furthest write
    /// ended. `file` must be empty; `path` names it in errors.
    ///
    /// # Errors
    ///
    /// None for a file of std's; `Result` for symmetry with
    /// [`mapped`](Self::mapped).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use shared_log_file::SharedFile;
    /// use std::fs::File;
    ///
    /// let path = dir.path().join("log");
    /// let shared = SharedFile::positional(File::create(&path).unwrap(), &path).unwrap();
    /// assert!(shared.is_positional());
    /// assert_eq!(shared.grown(), u64::MAX); // nothing to grow
    /// ```
    pub fn positional(
        file: impl PositionedFile + 'static,
        path: impl Into<PathBuf>,
    ) -> io::Result<SharedFile> {
        SharedFile::new(Backing::Positional(Box::new(file)), path.into())
    }

    /// A file whose writers write with a positioned write each, as
    /// [`positional`](Self::positional), but, once two writers met at
    /// `primary` (one finds another writing it), into `stripes` files
    /// beside it: each write goes, as an entry that says where its bytes
    /// belong, to a stripe that no other thread is writing (the thread's
    /// own while threads are no more than stripes), so writers on
    /// different cores do not queue on one file's lock in the kernel. A
    /// lone writer writes `primary` at its offsets, and pays nothing for
    /// the stripes. The owner's appends go to `primary`, and its syncs and
    /// cuts apply to it; [`sync_data`](Self::sync_data) syncs `primary` if
    /// it changed and every stripe written since the last sync. Read the
    /// file back with a [`StripedView`](crate::StripedView).
    ///
    /// Every file must be empty; `path` names the file in errors, and its
    /// [`stripe_path`](crate::stripe_path)s name the stripes. A write that
    /// fails leaves its stripe to the others (part of its entry may be
    /// written; nothing follows it there).
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::InvalidInput`] without a stripe, and where a
    /// stripe's first bytes (its magic) cannot be written.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use shared_log_file::{PositionedFile, SharedFile, stripe_path};
    /// use std::fs::File;
    ///
    /// let path = dir.path().join("wal");
    /// let stripes = (1..=2)
    ///     .map(|i| Box::new(File::create(stripe_path(&path, i)).unwrap()) as Box<dyn PositionedFile>)
    ///     .collect();
    /// let shared = SharedFile::striped(File::create(&path).unwrap(), stripes, &path).unwrap();
    /// assert_eq!(shared.stripes(), 2);
    /// ```
    pub fn striped(
        primary: impl PositionedFile + 'static,
        stripes: Vec<Box<dyn PositionedFile>>,
        path: impl Into<PathBuf>,
    ) -> io::Result<SharedFile> {
        let path = path.into();
        let stripes = Stripes::new(Box::new(primary), stripes, &path)?;
        SharedFile::new(Backing::Striped(stripes), path)
    }

    /// Creates the file at `path` and `stripes` stripe files beside it (at
    /// [`stripe_path`](crate::stripe_path)`(path, 1)` and on), emptying any
    /// that are there, and makes them a [`striped`](Self::striped) shared
    /// file. The stripes are emptied before the primary, so a crash in
    /// between leaves no stripe bytes newer than the primary's.
    ///
    /// # Errors
    ///
    /// Where a file cannot be created, naming it, and as
    /// [`striped`](Self::striped).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use shared_log_file::{SharedFile, StripedView};
    ///
    /// let path = dir.path().join("wal");
    /// let mut log = SharedFile::create_striped(&path, 2).unwrap();
    /// log.writers().write(b"record").unwrap();
    /// log.sync().unwrap(); // the primary and every stripe written
    /// drop(log);
    /// assert_eq!(StripedView::open(&path).unwrap().read_to_vec().unwrap(), b"record");
    /// ```
    #[cfg(any(unix, windows))]
    pub fn create_striped(path: impl Into<PathBuf>, stripes: usize) -> io::Result<SharedFile> {
        let path = path.into();
        let files = (1..=stripes)
            .map(|i| {
                let file = create_empty(&crate::stripe_path(&path, i), false)?;
                Ok(Box::new(file) as Box<dyn PositionedFile>)
            })
            .collect::<io::Result<_>>()?;
        let primary = create_empty(&path, false)?;
        SharedFile::striped(primary, files, path)
    }

    /// Creates the file at `path` (emptying one that is there) and makes it
    /// a [`mapped`](Self::mapped) shared file.
    ///
    /// # Errors
    ///
    /// Where the file cannot be created, and as [`mapped`](Self::mapped),
    /// naming the path.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let shared = shared_log_file::SharedFile::create_mapped(dir.path().join("log")).unwrap();
    /// assert!(!shared.is_positional());
    /// ```
    #[cfg(target_os = "linux")]
    pub fn create_mapped(path: impl Into<PathBuf>) -> io::Result<SharedFile> {
        let path = path.into();
        // Readable too: a shared writable mapping needs both.
        let file = create_empty(&path, true)?;
        SharedFile::mapped(file, &path).map_err(|e| annotate(e, "map", &path))
    }

    /// Creates the file at `path` (emptying one that is there) and makes it
    /// a [`positional`](Self::positional) shared file.
    ///
    /// # Errors
    ///
    /// Where the file cannot be created, naming the path.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let shared = shared_log_file::SharedFile::create_positional(dir.path().join("log")).unwrap();
    /// assert!(shared.is_positional());
    /// ```
    #[cfg(any(unix, windows))]
    pub fn create_positional(path: impl Into<PathBuf>) -> io::Result<SharedFile> {
        let path = path.into();
        let file = create_empty(&path, false)?;
        SharedFile::positional(file, path)
    }

    /// Grows a mapped file a first time.
    fn new(backing: Backing, path: PathBuf) -> io::Result<SharedFile> {
        // A positional file is grown to the end from the start: each
        // positioned write extends it, and no growth step ever runs.
        let (chunks, grown) = match backing {
            #[cfg(target_os = "linux")]
            Backing::Mapped(_) => (CHUNKS, 0),
            Backing::Positional(_) | Backing::Striped(_) => (0, u64::MAX),
        };
        let shared = SharedFile {
            path,
            backing,
            chunks: (0..chunks)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            grown: AtomicU64::new(grown),
            grow: Mutex::new(()),
            written: AtomicU64::new(0),
            size_unknown: AtomicBool::new(false),
        };
        shared.grow_to(1)?;
        Ok(shared)
    }

    /// The path the file was made with, which its errors name.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("log");
    /// let shared = shared_log_file::SharedFile::create_positional(&path).unwrap();
    /// assert_eq!(shared.path(), path);
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }
}
