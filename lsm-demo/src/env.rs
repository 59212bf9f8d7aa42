//! The file-system layer the engine goes through.
//!
//! Every byte the engine reads or writes passes through a [`FileSystem`], so
//! that tests can swap the real disk for one that loses power on command.
//! Two implementations:
//!
//! - [`PosixFs`]: the real file system (`std::fs`), with `fdatasync` for file
//!   syncs, an `fsync` of the directory for [`FileSystem::sync_dir`], and
//!   `flock(2)` for the advisory database lock.
//! - [`FaultInjectionFs`]: an in-memory file system that remembers, per file,
//!   which prefix was synced and, per directory, which entries were made
//!   durable by a directory sync. [`FaultInjectionFs::simulate_crash`] throws
//!   away everything else, as a power loss would; chosen calls can be made to
//!   fail with I/O errors ([`FaultInjectionFs::fail_next`],
//!   [`FaultInjectionFs::fail_after`], [`FaultInjectionFs::fail_randomly`]).
//!
//! # Durability contract
//!
//! The engine may rely on exactly this, on both implementations:
//!
//! | operation | survives a process crash | survives power loss |
//! |---|---|---|
//! | [`WritableFile::append`] | yes (the bytes are in the OS) | only after [`WritableFile::sync`] |
//! | [`FileSystem::create`], [`FileSystem::rename`], [`FileSystem::remove_file`] | yes | only after [`FileSystem::sync_dir`] of the parent directory |
//! | [`FileSystem::create_dir_all`] | yes | yes (simplification of the in-memory model; see [`FaultInjectionFs`]) |
//!
//! A file that is created, written, synced and renamed is durable under its
//! new name only once its directory is synced too.
//!
//! # Examples
//!
//! ```
//! use lsm_demo::env::{FaultInjectionFs, FileSystem};
//! use std::path::Path;
//!
//! let fs = FaultInjectionFs::new();
//! fs.create_dir_all(Path::new("/db")).unwrap();
//! let mut f = fs.create(Path::new("/db/a")).unwrap();
//! f.append(b"synced").unwrap();
//! f.sync().unwrap();
//! f.append(b" lost").unwrap();
//! fs.sync_dir(Path::new("/db")).unwrap();
//! fs.simulate_crash();
//! assert_eq!(fs.read_file(Path::new("/db/a")).unwrap(), b"synced");
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// A file open for appending.
///
/// Appends reach the operating system at once (they survive a crash of the
/// process); [`WritableFile::sync`] makes everything appended so far survive
/// a power loss. After an error from `append` or `sync` the file's content is
/// unknown: callers should stop using it (the WAL writer does).
///
/// # Examples
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FileSystem, WritableFile};
/// use std::path::Path;
/// let fs = FaultInjectionFs::new();
/// let mut log: Box<dyn WritableFile> = fs.create(Path::new("log")).unwrap();
/// log.append(b"record").unwrap();
/// log.sync().unwrap();
/// assert_eq!(log.size(), 6);
/// assert_eq!(fs.read_file(Path::new("log")).unwrap(), b"record");
/// ```
pub trait WritableFile: Send + fmt::Debug {
    /// Appends `data` at the end of the file.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::env::{FileSystem, PosixFs};
    /// let path = dir.path().join("log");
    /// let mut f = PosixFs.create(&path).unwrap();
    /// f.append(b"ab").unwrap();
    /// f.append(b"cd").unwrap();
    /// assert_eq!(f.size(), 4);
    /// assert_eq!(PosixFs.read_file(&path).unwrap(), b"abcd"); // readable before any sync
    /// ```
    fn append(&mut self, data: &[u8]) -> io::Result<()>;
    /// Pushes buffered bytes to the operating system (a no-op for the
    /// implementations here, which do not buffer).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut f = fs.create(Path::new("f")).unwrap();
    /// fs.sync_dir(Path::new("")).unwrap();
    /// f.append(b"abc").unwrap();
    /// f.flush().unwrap();
    /// assert_eq!(fs.read_file(Path::new("f")).unwrap(), b"abc");
    /// assert_eq!(fs.unsynced_bytes(Path::new("f")), Some(3)); // flushing is not syncing
    /// ```
    fn flush(&mut self) -> io::Result<()>;
    /// Makes every byte appended so far durable (`fdatasync`).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut f = fs.create(Path::new("wal")).unwrap();
    /// fs.sync_dir(Path::new("")).unwrap(); // makes the file's name durable
    /// f.append(b"kept").unwrap();
    /// f.sync().unwrap();
    /// f.append(b" lost").unwrap();
    /// fs.simulate_crash();
    /// assert_eq!(fs.read_file(Path::new("wal")).unwrap(), b"kept");
    /// ```
    fn sync(&mut self) -> io::Result<()>;
    /// The file's size in bytes, counting every successful append.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut f = fs.create(Path::new("f")).unwrap();
    /// assert_eq!(f.size(), 0);
    /// f.append(b"hello").unwrap();
    /// assert_eq!(f.size(), 5);
    /// drop(f);
    /// assert_eq!(fs.open_append(Path::new("f")).unwrap().size(), 5); // counts existing bytes
    /// ```
    fn size(&self) -> u64;

    /// A handle that syncs this file from another thread while this one
    /// goes on appending: what a log's group commit needs, so that a sync
    /// does not hold up the next appends. Syncing through it makes durable
    /// everything appended before the call (through any handle), as
    /// [`WritableFile::sync`] does.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut log = fs.create(Path::new("log")).unwrap();
    /// let syncer = log.sync_handle().unwrap();
    /// log.append(b"record").unwrap();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| syncer.sync().unwrap());
    /// });
    /// assert_eq!(fs.unsynced_bytes(Path::new("log")), Some(6)); // the name is not synced yet
    /// fs.sync_dir(Path::new("")).unwrap();
    /// assert_eq!(fs.unsynced_bytes(Path::new("log")), Some(0));
    /// ```
    fn sync_handle(&self) -> io::Result<Arc<dyn FileSync>>;
}

/// Syncs a file, from any thread: see [`WritableFile::sync_handle`].
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::env::{FileSystem, PosixFs};
/// let mut f = PosixFs.create(&dir.path().join("f")).unwrap();
/// f.append(b"data").unwrap();
/// f.sync_handle().unwrap().sync().unwrap(); // fdatasync through a second descriptor
/// ```
pub trait FileSync: Send + Sync + fmt::Debug {
    /// Makes everything appended to the file so far durable.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut f = fs.create(Path::new("f")).unwrap();
    /// fs.sync_dir(Path::new("")).unwrap();
    /// f.append(b"data").unwrap();
    /// f.sync_handle().unwrap().sync().unwrap();
    /// assert_eq!(fs.unsynced_bytes(Path::new("f")), Some(0));
    /// ```
    fn sync(&self) -> io::Result<()>;
}

/// A file read at arbitrary offsets, shareable between threads.
///
/// `Vec<u8>` implements it, so the readers of this crate also work on bytes
/// held in memory:
///
/// ```
/// use lsm_demo::env::RandomAccessFile;
/// let file = b"hello".to_vec();
/// let mut buf = [0u8; 3];
/// file.read_exact_at(1, &mut buf).unwrap();
/// assert_eq!(&buf, b"ell");
/// assert!(file.read_exact_at(4, &mut buf).is_err());
/// ```
pub trait RandomAccessFile: Send + Sync + fmt::Debug {
    /// Reads up to `buf.len()` bytes at `offset`; returns how many were read
    /// (0 at or past the end of the file).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::RandomAccessFile;
    /// let file = b"hello".to_vec();
    /// let mut buf = [0u8; 4];
    /// assert_eq!(file.read_at(3, &mut buf).unwrap(), 2); // a short read at the end
    /// assert_eq!(&buf[..2], b"lo");
    /// assert_eq!(file.read_at(5, &mut buf).unwrap(), 0);
    /// ```
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;

    /// Fills `buf` from `offset`, or fails with
    /// [`io::ErrorKind::UnexpectedEof`] if the file ends first.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::env::{FileSystem, PosixFs};
    /// use std::io::ErrorKind;
    /// let path = dir.path().join("table");
    /// PosixFs.create(&path).unwrap().append(b"header|body").unwrap();
    /// let file = PosixFs.open_random(&path).unwrap();
    /// let mut buf = [0u8; 4];
    /// file.read_exact_at(7, &mut buf).unwrap();
    /// assert_eq!(&buf, b"body");
    /// assert_eq!(file.read_exact_at(8, &mut buf).unwrap_err().kind(), ErrorKind::UnexpectedEof);
    /// ```
    fn read_exact_at(&self, mut offset: u64, mut buf: &mut [u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(offset, buf) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("read past the end of the file at offset {offset}"),
                    ));
                }
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The file's current size in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut w = fs.create(Path::new("f")).unwrap();
    /// w.append(b"abc").unwrap();
    /// let r = fs.open_random(Path::new("f")).unwrap();
    /// assert_eq!(r.size().unwrap(), 3);
    /// w.append(b"de").unwrap();
    /// assert_eq!(r.size().unwrap(), 5); // the current size, not the size at open
    /// ```
    fn size(&self) -> io::Result<u64>;
}

impl RandomAccessFile for Vec<u8> {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        Ok(copy_at(self, offset, buf))
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.len() as u64)
    }
}

/// Copies from `data[offset..]` into `buf`; returns the count copied.
fn copy_at(data: &[u8], offset: u64, buf: &mut [u8]) -> usize {
    let Ok(start) = usize::try_from(offset) else {
        return 0;
    };
    if start >= data.len() {
        return 0;
    }
    let n = buf.len().min(data.len() - start);
    buf[..n].copy_from_slice(&data[start..start + n]);
    n
}

/// A held advisory lock on a file; dropping it releases the lock.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::env::{FileSystem, PosixFs};
/// let path = dir.path().join("LOCK");
/// let lock = PosixFs.lock(&path).unwrap();
/// assert!(PosixFs.lock(&path).is_err()); // held
/// drop(lock);
/// assert!(PosixFs.lock(&path).is_ok()); // released by the drop
/// ```
pub trait FileLock: Send + Sync + fmt::Debug {
    /// The locked path.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::env::{FileSystem, PosixFs};
    /// let path = dir.path().join("LOCK");
    /// let lock = PosixFs.lock(&path).unwrap();
    /// assert_eq!(lock.path(), path);
    /// ```
    fn path(&self) -> &Path;
}

/// The file-system operations the engine uses.
///
/// Errors are [`io::Error`]s whose message names the path concerned. The
/// engine holds one as `Arc<dyn FileSystem>`, so tests can hand it a
/// [`FaultInjectionFs`] and keep a handle to crash it.
///
/// # Examples
///
/// Creating a file durably: sync the file, then its directory.
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// use std::{path::Path, sync::Arc};
///
/// fn write_durably(fs: &dyn FileSystem, dir: &Path, name: &str, data: &[u8]) -> std::io::Result<()> {
///     let mut file = fs.create(&dir.join(name))?;
///     file.append(data)?;
///     file.sync()?;
///     fs.sync_dir(dir)
/// }
///
/// let fault_fs = FaultInjectionFs::new();
/// let fs: Arc<dyn FileSystem> = Arc::new(fault_fs.clone());
/// fs.create_dir_all(Path::new("/db")).unwrap();
/// write_durably(fs.as_ref(), Path::new("/db"), "CURRENT", b"1").unwrap();
/// fault_fs.simulate_crash();
/// assert_eq!(fs.list_dir(Path::new("/db")).unwrap(), vec!["CURRENT"]);
/// ```
pub trait FileSystem: Send + Sync + fmt::Debug {
    /// Creates a directory and its missing parents.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::env::{FileSystem, PosixFs};
    /// let nested = dir.path().join("a/b/c");
    /// PosixFs.create_dir_all(&nested).unwrap();
    /// assert!(PosixFs.is_dir(&nested));
    /// PosixFs.create_dir_all(&nested).unwrap(); // already there: fine
    /// ```
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Creates a file for writing, truncating it if it exists.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.create(Path::new("f")).unwrap().append(b"old contents").unwrap();
    /// let f = fs.create(Path::new("f")).unwrap(); // truncates
    /// assert_eq!(f.size(), 0);
    /// assert_eq!(fs.read_file(Path::new("f")).unwrap(), b"");
    /// assert!(fs.create(Path::new("no/such/dir/f")).is_err());
    /// ```
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>>;
    /// Opens a file for appending, creating it if it does not exist.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.create(Path::new("log")).unwrap().append(b"one,").unwrap();
    /// let mut log = fs.open_append(Path::new("log")).unwrap();
    /// log.append(b"two").unwrap();
    /// assert_eq!(fs.read_file(Path::new("log")).unwrap(), b"one,two");
    /// fs.open_append(Path::new("new")).unwrap();
    /// assert!(fs.exists(Path::new("new"))); // created when missing
    /// ```
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>>;
    /// Opens an existing file for reads at arbitrary offsets.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.create(Path::new("t")).unwrap().append(b"table").unwrap();
    /// let t = fs.open_random(Path::new("t")).unwrap();
    /// let mut buf = [0u8; 3];
    /// t.read_exact_at(2, &mut buf).unwrap();
    /// assert_eq!(&buf, b"ble");
    /// assert!(fs.open_random(Path::new("missing")).is_err());
    /// ```
    fn open_random(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>>;
    /// Reads a whole file.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::env::{FileSystem, PosixFs};
    /// let path = dir.path().join("data");
    /// std::fs::write(&path, b"hello").unwrap();
    /// assert_eq!(PosixFs.read_file(&path).unwrap(), b"hello");
    /// let err = PosixFs.read_file(&dir.path().join("missing")).unwrap_err();
    /// assert!(err.to_string().contains("missing")); // errors name the path
    /// ```
    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// The size of a file in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::{io::ErrorKind, path::Path};
    /// let fs = FaultInjectionFs::new();
    /// fs.create(Path::new("f")).unwrap().append(b"12345").unwrap();
    /// assert_eq!(fs.file_size(Path::new("f")).unwrap(), 5);
    /// assert_eq!(fs.file_size(Path::new("missing")).unwrap_err().kind(), ErrorKind::NotFound);
    /// ```
    fn file_size(&self, path: &Path) -> io::Result<u64>;
    /// Renames a file, replacing `to` if it exists (atomically on POSIX).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::env::{FileSystem, PosixFs};
    /// let (tmp, dst) = (dir.path().join("MANIFEST.tmp"), dir.path().join("MANIFEST"));
    /// PosixFs.create(&dst).unwrap().append(b"old").unwrap();
    /// PosixFs.create(&tmp).unwrap().append(b"new").unwrap();
    /// PosixFs.rename(&tmp, &dst).unwrap();
    /// assert_eq!(PosixFs.read_file(&dst).unwrap(), b"new");
    /// assert!(!PosixFs.exists(&tmp));
    /// ```
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file. Open handles to it keep working.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.create(Path::new("old.sst")).unwrap().append(b"data").unwrap();
    /// let reader = fs.open_random(Path::new("old.sst")).unwrap();
    /// fs.remove_file(Path::new("old.sst")).unwrap();
    /// assert!(!fs.exists(Path::new("old.sst")));
    /// let mut buf = [0u8; 4];
    /// reader.read_exact_at(0, &mut buf).unwrap(); // the open handle still reads
    /// assert_eq!(&buf, b"data");
    /// ```
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Removes an empty directory; fails if it holds anything.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.create_dir_all(Path::new("/db/lost")).unwrap();
    /// fs.create(Path::new("/db/f")).unwrap();
    /// assert!(fs.remove_dir(Path::new("/db")).is_err()); // not empty
    /// fs.remove_dir(Path::new("/db/lost")).unwrap();
    /// assert!(!fs.exists(Path::new("/db/lost")));
    /// ```
    fn remove_dir(&self, path: &Path) -> io::Result<()>;
    /// The names (not paths) of the entries of a directory, sorted.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.create_dir_all(Path::new("/db/archive")).unwrap();
    /// fs.create(Path::new("/db/b.log")).unwrap();
    /// fs.create(Path::new("/db/a.sst")).unwrap();
    /// assert_eq!(fs.list_dir(Path::new("/db")).unwrap(), ["a.sst", "archive", "b.log"]);
    /// ```
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>>;
    /// Whether a file or directory exists at `path`.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.create_dir_all(Path::new("/db")).unwrap();
    /// fs.create(Path::new("/db/f")).unwrap();
    /// assert!(fs.exists(Path::new("/db")) && fs.exists(Path::new("/db/f")));
    /// assert!(!fs.exists(Path::new("/db/g")));
    /// ```
    fn exists(&self, path: &Path) -> bool;
    /// Whether `path` is an existing directory.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.create_dir_all(Path::new("/db")).unwrap();
    /// fs.create(Path::new("/db/f")).unwrap();
    /// assert!(fs.is_dir(Path::new("/db")));
    /// assert!(!fs.is_dir(Path::new("/db/f")) && !fs.is_dir(Path::new("/nope")));
    /// ```
    fn is_dir(&self, path: &Path) -> bool;
    /// Makes the directory's entries (creations, renames, removals) durable.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.create_dir_all(Path::new("/db")).unwrap();
    /// fs.create(Path::new("/db/before")).unwrap();
    /// fs.sync_dir(Path::new("/db")).unwrap();
    /// fs.create(Path::new("/db/after")).unwrap();
    /// fs.simulate_crash();
    /// assert_eq!(fs.list_dir(Path::new("/db")).unwrap(), ["before"]);
    /// ```
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
    /// Takes an exclusive advisory lock on `path` (created if missing).
    ///
    /// A second lock of the same path fails with
    /// [`io::ErrorKind::ResourceBusy`] while the first is held, whether it is
    /// held by this process or another.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::{io::ErrorKind, path::Path};
    /// let fs = FaultInjectionFs::new();
    /// let lock = fs.lock(Path::new("LOCK")).unwrap();
    /// let err = fs.lock(Path::new("LOCK")).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::ResourceBusy);
    /// drop(lock);
    /// assert!(fs.lock(Path::new("LOCK")).is_ok());
    /// ```
    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>>;
}

/// Wraps an error from `op` on `path` so its message names both.
fn annotate(err: io::Error, op: &str, path: &Path) -> io::Error {
    io::Error::new(err.kind(), format!("{op} {}: {err}", path.display()))
}

// ---------------------------------------------------------------------------
// PosixFs
// ---------------------------------------------------------------------------

/// The real file system, through `std::fs`.
///
/// File syncs use `File::sync_data` (`fdatasync(2)`, which also persists the
/// file size), directory syncs open the directory and `fsync` it, and locks
/// use `flock(2)` with `LOCK_EX | LOCK_NB`. Writes are not buffered: each
/// [`WritableFile::append`] is one `write` call (or more if the kernel
/// accepts the bytes piecewise).
///
/// # Examples
///
/// ```
/// use lsm_demo::env::{FileSystem, PosixFs};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("f");
/// let mut f = PosixFs.create(&path).unwrap();
/// f.append(b"abc").unwrap();
/// f.sync().unwrap();
/// PosixFs.sync_dir(dir.path()).unwrap();
/// assert_eq!(PosixFs.read_file(&path).unwrap(), b"abc");
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct PosixFs;

#[derive(Debug)]
struct PosixWritableFile {
    file: File,
    path: PathBuf,
    size: u64,
}

impl WritableFile for PosixWritableFile {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        match self.file.write_all(data) {
            Ok(()) => {
                self.size += data.len() as u64;
                Ok(())
            }
            Err(e) => {
                // Part of `data` may have been written: re-read the true size.
                if let Ok(meta) = self.file.metadata() {
                    self.size = meta.len();
                }
                Err(annotate(e, "append to", &self.path))
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        self.file
            .sync_data()
            .map_err(|e| annotate(e, "sync", &self.path))
    }

    fn size(&self) -> u64 {
        self.size
    }

    fn sync_handle(&self) -> io::Result<Arc<dyn FileSync>> {
        let file = self
            .file
            .try_clone()
            .map_err(|e| annotate(e, "duplicate", &self.path))?;
        Ok(Arc::new(PosixFileSync {
            file,
            path: self.path.clone(),
        }))
    }
}

/// A second descriptor of a file, for `fdatasync` from another thread.
#[derive(Debug)]
struct PosixFileSync {
    file: File,
    path: PathBuf,
}

impl FileSync for PosixFileSync {
    fn sync(&self) -> io::Result<()> {
        self.file
            .sync_data()
            .map_err(|e| annotate(e, "sync", &self.path))
    }
}

#[derive(Debug)]
struct PosixRandomAccessFile {
    file: File,
    path: PathBuf,
}

impl RandomAccessFile for PosixRandomAccessFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.file.read_at(buf, offset) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => return other.map_err(|e| annotate(e, "read", &self.path)),
            }
        }
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self
            .file
            .metadata()
            .map_err(|e| annotate(e, "stat", &self.path))?
            .len())
    }
}

#[derive(Debug)]
struct PosixFileLock {
    // Closing the descriptor releases the flock.
    _file: File,
    path: PathBuf,
}

impl FileLock for PosixFileLock {
    fn path(&self) -> &Path {
        &self.path
    }
}

impl FileSystem for PosixFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::create_dir_all(path).map_err(|e| annotate(e, "create directory", path))
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| annotate(e, "create", path))?;
        Ok(Box::new(PosixWritableFile {
            file,
            path: path.to_path_buf(),
            size: 0,
        }))
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| annotate(e, "open for append", path))?;
        let size = file
            .metadata()
            .map_err(|e| annotate(e, "stat", path))?
            .len();
        Ok(Box::new(PosixWritableFile {
            file,
            path: path.to_path_buf(),
            size,
        }))
    }

    fn open_random(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        let file = File::open(path).map_err(|e| annotate(e, "open", path))?;
        Ok(Arc::new(PosixRandomAccessFile {
            file,
            path: path.to_path_buf(),
        }))
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        fs::read(path).map_err(|e| annotate(e, "read", path))
    }

    fn file_size(&self, path: &Path) -> io::Result<u64> {
        Ok(fs::metadata(path)
            .map_err(|e| annotate(e, "stat", path))?
            .len())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("rename {} to {}: {e}", from.display(), to.display()),
            )
        })
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path).map_err(|e| annotate(e, "remove", path))
    }

    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        fs::remove_dir(path).map_err(|e| annotate(e, "remove directory", path))
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(path).map_err(|e| annotate(e, "list", path))? {
            let entry = entry.map_err(|e| annotate(e, "list", path))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(names)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        File::open(path)
            .and_then(|dir| dir.sync_all())
            .map_err(|e| annotate(e, "sync directory", path))
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| annotate(e, "open lock file", path))?;
        // SAFETY: `flock` only reads its two integer arguments; the descriptor
        // is owned by `file`, which is alive for the whole call.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::WouldBlock {
                return Err(io::Error::new(
                    io::ErrorKind::ResourceBusy,
                    format!(
                        "lock {}: already held by another process or by another \
                         open of the same database in this process",
                        path.display()
                    ),
                ));
            }
            return Err(annotate(err, "lock", path));
        }
        Ok(Box::new(PosixFileLock {
            _file: file,
            path: path.to_path_buf(),
        }))
    }
}

// ---------------------------------------------------------------------------
// FaultInjectionFs
// ---------------------------------------------------------------------------

/// The kinds of call [`FaultInjectionFs`] can make fail.
///
/// # Examples
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
/// use std::path::Path;
/// let fs = FaultInjectionFs::new();
/// fs.fail_next(FaultOp::Rename, 1);
/// fs.create(Path::new("a")).unwrap(); // other kinds of call are unaffected
/// assert!(fs.rename(Path::new("a"), Path::new("b")).is_err());
/// assert_eq!(fs.injected(FaultOp::Rename), 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultOp {
    /// [`FileSystem::create_dir_all`].
    CreateDir,
    /// [`FileSystem::create`] and [`FileSystem::open_append`].
    Create,
    /// [`FileSystem::open_random`].
    Open,
    /// [`WritableFile::append`].
    Append,
    /// [`WritableFile::sync`].
    Sync,
    /// [`FileSystem::sync_dir`].
    SyncDir,
    /// [`FileSystem::rename`].
    Rename,
    /// [`FileSystem::remove_file`] and [`FileSystem::remove_dir`].
    Remove,
    /// [`RandomAccessFile::read_at`] on a file of this file system, and
    /// [`FileSystem::read_file`].
    Read,
    /// [`FileSystem::list_dir`].
    List,
    /// [`FileSystem::lock`].
    Lock,
}

/// The error carried by every I/O error that [`FaultInjectionFs`] injects
/// (as the inner error of an [`io::ErrorKind::Other`] error).
///
/// # Examples
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
/// use std::path::Path;
/// let fs = FaultInjectionFs::new();
/// fs.fail_next(FaultOp::Create, 1);
/// let err = fs.create(Path::new("f")).unwrap_err();
/// assert!(FaultInjectionFs::is_injected(&err));
/// assert!(fs.create(Path::new("f")).is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectedFault {
    /// The call that failed.
    pub op: FaultOp,
    /// The path it concerned.
    pub path: PathBuf,
}

impl fmt::Display for InjectedFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "injected fault: {:?} on {}",
            self.op,
            self.path.display()
        )
    }
}

impl std::error::Error for InjectedFault {}

#[derive(Debug, Clone)]
enum FaultRule {
    /// The next `remaining` calls fail, then calls succeed again.
    FailNext { remaining: u64 },
    /// `ok_left` more calls succeed, then every call fails.
    FailAfter { ok_left: u64 },
    /// Each call fails with this probability, drawn from a seeded generator.
    Random { threshold: u64, rng: u64 },
}

#[derive(Debug, Default, Clone, Copy)]
struct OpStats {
    calls: u64,
    injected: u64,
}

#[derive(Debug, Default)]
struct Inode {
    data: Vec<u8>,
    synced_len: usize,
}

type InodeRef = Arc<Mutex<Inode>>;

#[derive(Default)]
struct MemState {
    /// Bumped by every simulated crash; handles from an older generation fail.
    generation: u64,
    /// The namespace as the running process sees it.
    live: BTreeMap<PathBuf, InodeRef>,
    /// The namespace as it would come back after a power loss.
    durable: BTreeMap<PathBuf, InodeRef>,
    dirs: BTreeSet<PathBuf>,
    locks: HashMap<PathBuf, u64>,
    next_lock_id: u64,
    rules: HashMap<FaultOp, FaultRule>,
    /// The kind injected errors of an op carry (default `Other`).
    kinds: HashMap<FaultOp, io::ErrorKind>,
    stats: HashMap<FaultOp, OpStats>,
    torn_appends: bool,
}

#[derive(Default)]
struct MemShared {
    state: Mutex<MemState>,
}

fn lock_ignoring_poison<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl MemShared {
    fn state(&self) -> MutexGuard<'_, MemState> {
        lock_ignoring_poison(&self.state)
    }
}

/// Lexical normal form: `a/./b/` and `a/b` name the same entry.
fn normalize(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

fn parent_of(path: &Path) -> PathBuf {
    path.parent().map(Path::to_path_buf).unwrap_or_default()
}

fn not_found(what: &str, path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{what} {}: no such file or directory", path.display()),
    )
}

impl MemState {
    /// Counts a call of `op` and decides whether it fails.
    fn check(&mut self, op: FaultOp, path: &Path) -> io::Result<()> {
        let stats = self.stats.entry(op).or_default();
        stats.calls += 1;
        let fail = match self.rules.get_mut(&op) {
            None => false,
            Some(FaultRule::FailNext { remaining }) => {
                let fail = *remaining > 0;
                *remaining = remaining.saturating_sub(1);
                fail
            }
            Some(FaultRule::FailAfter { ok_left }) => {
                let fail = *ok_left == 0;
                *ok_left = ok_left.saturating_sub(1);
                fail
            }
            Some(FaultRule::Random { threshold, rng }) => {
                // xorshift64*: deterministic for a given seed and call order.
                *rng ^= *rng >> 12;
                *rng ^= *rng << 25;
                *rng ^= *rng >> 27;
                let draw = rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
                draw < *threshold
            }
        };
        if fail {
            stats.injected += 1;
            let kind = self.kinds.get(&op).copied().unwrap_or(io::ErrorKind::Other);
            return Err(io::Error::new(
                kind,
                InjectedFault {
                    op,
                    path: path.to_path_buf(),
                },
            ));
        }
        Ok(())
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.as_os_str().is_empty() || path == Path::new("/") || self.dirs.contains(path)
    }

    fn require_parent_dir(&self, path: &Path, what: &str) -> io::Result<()> {
        if self.is_dir(&parent_of(path)) {
            Ok(())
        } else {
            Err(not_found(what, path))
        }
    }

    fn require_not_dir(&self, path: &Path, what: &str) -> io::Result<()> {
        if self.is_dir(path) {
            Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                format!("{what} {}: is a directory", path.display()),
            ))
        } else {
            Ok(())
        }
    }
}

/// An in-memory file system that simulates power loss and injects errors.
///
/// It keeps, for each file, the bytes written and the prefix made durable by
/// [`WritableFile::sync`], and two namespaces: the *live* one every call sees
/// and the *durable* one, which takes a directory's entries from the live one
/// on [`FileSystem::sync_dir`] of that directory. [`Self::simulate_crash`]
/// replaces the live namespace by the durable one, cuts every file back to
/// its synced prefix, releases all locks and invalidates every open handle
/// (their calls then fail), as if the machine lost power and the process
/// died; the engine can then reopen on the same instance.
///
/// Directories are a simplification: [`FileSystem::create_dir_all`] is
/// durable at once, and directories cannot be removed.
///
/// Error injection is per [`FaultOp`], one rule per op (a new rule replaces
/// the old one), deterministic for a given sequence of calls. An injected
/// error is an [`io::ErrorKind::Other`] error wrapping an [`InjectedFault`];
/// [`Self::is_injected`] recognises it. A failed call changes nothing,
/// except a failed append when [`Self::set_torn_appends`] is on.
///
/// Cloning gives another handle to the same file system.
///
/// # Examples
///
/// A rename becomes durable only once its directory is synced:
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// use std::path::Path;
///
/// let fs = FaultInjectionFs::new();
/// let mut f = fs.create(Path::new("tmp")).unwrap();
/// f.append(b"x").unwrap();
/// f.sync().unwrap();
/// fs.sync_dir(Path::new("")).unwrap();
/// fs.rename(Path::new("tmp"), Path::new("final")).unwrap();
/// fs.simulate_crash();
/// assert!(fs.exists(Path::new("tmp")) && !fs.exists(Path::new("final")));
/// ```
#[derive(Clone, Default)]
pub struct FaultInjectionFs {
    shared: Arc<MemShared>,
}

impl fmt::Debug for FaultInjectionFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.state();
        f.debug_struct("FaultInjectionFs")
            .field("generation", &state.generation)
            .field("live_files", &state.live.len())
            .field("durable_files", &state.durable.len())
            .field("dirs", &state.dirs.len())
            .finish_non_exhaustive()
    }
}

impl FaultInjectionFs {
    /// An empty file system; the root (`/`) and the current directory (the
    /// empty path) exist.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// assert!(fs.is_dir(Path::new("/")) && fs.is_dir(Path::new("")));
    /// assert!(fs.list_dir(Path::new("")).unwrap().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Simulates a power loss: every unsynced byte, and every directory
    /// change not made durable by [`FileSystem::sync_dir`], is lost; locks
    /// are released and open handles fail from now on.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut f = fs.create(Path::new("log")).unwrap();
    /// f.append(b"durable").unwrap();
    /// f.sync().unwrap();
    /// fs.sync_dir(Path::new("")).unwrap();
    /// f.append(b", lost").unwrap();
    /// fs.simulate_crash();
    /// assert_eq!(fs.read_file(Path::new("log")).unwrap(), b"durable");
    /// assert!(f.append(b"!").is_err()); // handles from before the crash are dead
    /// ```
    pub fn simulate_crash(&self) {
        self.crash(None);
    }

    /// Like [`Self::simulate_crash`], but each file keeps a random-length
    /// prefix of its unsynced bytes (chosen from `seed`), as a disk that
    /// wrote some of its cache before the power went off.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut f = fs.create(Path::new("log")).unwrap();
    /// fs.sync_dir(Path::new("")).unwrap();
    /// f.append(b"0123").unwrap();
    /// f.sync().unwrap();
    /// f.append(b"456789").unwrap();
    /// fs.simulate_crash_torn(42);
    /// let data = fs.read_file(Path::new("log")).unwrap();
    /// assert!(data.len() >= 4 && b"0123456789".starts_with(&data));
    /// ```
    pub fn simulate_crash_torn(&self, seed: u64) {
        self.crash(Some(seed | 1));
    }

    fn crash(&self, mut rng: Option<u64>) {
        let mut state = self.shared.state();
        state.generation += 1;
        state.locks.clear();
        let durable = state.durable.clone();
        for inode in durable.values() {
            let mut inode = lock_ignoring_poison(inode);
            let unsynced = inode.data.len() - inode.synced_len;
            let keep = match rng.as_mut() {
                Some(r) if unsynced > 0 => {
                    *r ^= *r << 13;
                    *r ^= *r >> 7;
                    *r ^= *r << 17;
                    (*r % (unsynced as u64 + 1)) as usize
                }
                _ => 0,
            };
            let len = inode.synced_len + keep;
            inode.data.truncate(len);
            inode.synced_len = len;
        }
        state.live = durable;
    }

    /// Makes the next `count` calls of `op` fail.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut f = fs.create(Path::new("f")).unwrap();
    /// fs.fail_next(FaultOp::Append, 2);
    /// assert!(f.append(b"a").is_err());
    /// assert!(f.append(b"a").is_err());
    /// f.append(b"b").unwrap(); // the third call succeeds
    /// assert_eq!(fs.read_file(Path::new("f")).unwrap(), b"b");
    /// ```
    pub fn fail_next(&self, op: FaultOp, count: u64) {
        self.shared
            .state()
            .rules
            .insert(op, FaultRule::FailNext { remaining: count });
    }

    /// Lets `successes` more calls of `op` succeed, then makes every later
    /// call of `op` fail until [`Self::clear_fault`].
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut f = fs.create(Path::new("f")).unwrap();
    /// fs.fail_after(FaultOp::Sync, 1);
    /// f.sync().unwrap();
    /// assert!(f.sync().is_err());
    /// assert!(f.sync().is_err()); // and so on, until the rule is cleared
    /// fs.clear_fault(FaultOp::Sync);
    /// f.sync().unwrap();
    /// ```
    pub fn fail_after(&self, op: FaultOp, successes: u64) {
        self.shared
            .state()
            .rules
            .insert(op, FaultRule::FailAfter { ok_left: successes });
    }

    /// Makes each call of `op` fail with `probability` (clamped to [0, 1]),
    /// drawn from a generator seeded with `seed`: the same calls fail on
    /// every run.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let run = |seed| {
    ///     let fs = FaultInjectionFs::new();
    ///     let mut f = fs.create(Path::new("f")).unwrap();
    ///     fs.fail_randomly(FaultOp::Append, 0.5, seed);
    ///     (0..64).map(|_| f.append(b"x").is_ok()).collect::<Vec<bool>>()
    /// };
    /// let outcomes = run(7);
    /// assert_eq!(outcomes, run(7)); // the same calls fail for the same seed
    /// assert!(outcomes.contains(&true) && outcomes.contains(&false));
    /// ```
    pub fn fail_randomly(&self, op: FaultOp, probability: f64, seed: u64) {
        let p = if probability.is_nan() {
            0.0
        } else {
            probability.clamp(0.0, 1.0)
        };
        let threshold = if p >= 1.0 {
            u64::MAX
        } else {
            (p * u64::MAX as f64) as u64
        };
        // A zero state would make xorshift return zeros forever.
        let rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        self.shared
            .state()
            .rules
            .insert(op, FaultRule::Random { threshold, rng });
    }

    /// Removes the rule for `op`.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.fail_after(FaultOp::Create, 0); // every create fails
    /// fs.fail_after(FaultOp::List, 0);
    /// assert!(fs.create(Path::new("f")).is_err());
    /// fs.clear_fault(FaultOp::Create);
    /// assert!(fs.create(Path::new("f")).is_ok());
    /// assert!(fs.list_dir(Path::new("")).is_err()); // other rules stay
    /// ```
    pub fn clear_fault(&self, op: FaultOp) {
        self.shared.state().rules.remove(&op);
    }

    /// Sets the [`io::ErrorKind`] of the errors injected into `op` from now
    /// on (`Other` until set): [`io::ErrorKind::StorageFull`] simulates a
    /// full disk.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::{io::ErrorKind, path::Path};
    /// let fs = FaultInjectionFs::new();
    /// fs.set_error_kind(FaultOp::Append, ErrorKind::StorageFull);
    /// fs.fail_next(FaultOp::Append, 1);
    /// let err = fs.create(Path::new("f")).unwrap().append(b"x").unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::StorageFull);
    /// assert!(FaultInjectionFs::is_injected(&err));
    /// ```
    pub fn set_error_kind(&self, op: FaultOp, kind: io::ErrorKind) {
        self.shared.state().kinds.insert(op, kind);
    }

    /// Removes every rule.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.fail_after(FaultOp::Create, 0);
    /// fs.fail_after(FaultOp::List, 0);
    /// fs.clear_faults();
    /// assert!(fs.create(Path::new("f")).is_ok());
    /// assert!(fs.list_dir(Path::new("")).is_ok());
    /// ```
    pub fn clear_faults(&self) {
        self.shared.state().rules.clear();
    }

    /// When on, an append that fails by injection first writes the first
    /// half of its bytes (a torn write). Off by default.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.set_torn_appends(true);
    /// let mut f = fs.create(Path::new("f")).unwrap();
    /// fs.fail_next(FaultOp::Append, 1);
    /// assert!(f.append(b"abcd").is_err());
    /// assert_eq!(fs.read_file(Path::new("f")).unwrap(), b"ab"); // half was written
    /// ```
    pub fn set_torn_appends(&self, on: bool) {
        self.shared.state().torn_appends = on;
    }

    /// How many calls of `op` were made (failed ones included).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.fail_next(FaultOp::Create, 1);
    /// assert!(fs.create(Path::new("f")).is_err());
    /// fs.create(Path::new("f")).unwrap();
    /// fs.open_append(Path::new("f")).unwrap(); // counted as a Create too
    /// assert_eq!(fs.calls(FaultOp::Create), 3);
    /// assert_eq!(fs.calls(FaultOp::Rename), 0);
    /// ```
    pub fn calls(&self, op: FaultOp) -> u64 {
        self.shared.state().stats.get(&op).map_or(0, |s| s.calls)
    }

    /// How many calls of `op` failed by injection.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.fail_randomly(FaultOp::List, 0.5, 1);
    /// let failed = (0..100).filter(|_| fs.list_dir(Path::new("")).is_err()).count();
    /// assert_eq!(fs.injected(FaultOp::List), failed as u64);
    /// assert_eq!(fs.calls(FaultOp::List), 100);
    /// ```
    pub fn injected(&self, op: FaultOp) -> u64 {
        self.shared.state().stats.get(&op).map_or(0, |s| s.injected)
    }

    /// Whether `err` was injected by a [`FaultInjectionFs`].
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.fail_next(FaultOp::Open, 1);
    /// let injected = fs.open_random(Path::new("missing")).unwrap_err();
    /// let genuine = fs.open_random(Path::new("missing")).unwrap_err(); // NotFound
    /// assert!(FaultInjectionFs::is_injected(&injected));
    /// assert!(!FaultInjectionFs::is_injected(&genuine));
    /// ```
    pub fn is_injected(err: &io::Error) -> bool {
        err.get_ref()
            .is_some_and(|inner| inner.downcast_ref::<InjectedFault>().is_some())
    }

    /// How many bytes of the file at `path` a crash would lose now (`None`
    /// if there is no such file). A file whose entry is not durable loses
    /// all its bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut f = fs.create(Path::new("f")).unwrap();
    /// f.append(b"abc").unwrap();
    /// f.sync().unwrap();
    /// assert_eq!(fs.unsynced_bytes(Path::new("f")), Some(3)); // its name is not durable yet
    /// fs.sync_dir(Path::new("")).unwrap();
    /// assert_eq!(fs.unsynced_bytes(Path::new("f")), Some(0));
    /// f.append(b"de").unwrap();
    /// assert_eq!(fs.unsynced_bytes(Path::new("f")), Some(2));
    /// assert_eq!(fs.unsynced_bytes(Path::new("missing")), None);
    /// ```
    pub fn unsynced_bytes(&self, path: &Path) -> Option<u64> {
        let path = normalize(path);
        let state = self.shared.state();
        let inode = state.live.get(&path)?;
        let durable = state
            .durable
            .get(&path)
            .is_some_and(|d| Arc::ptr_eq(d, inode));
        let inode = lock_ignoring_poison(inode);
        let kept = if durable { inode.synced_len } else { 0 };
        Some((inode.data.len() - kept) as u64)
    }

    fn open_writable(
        &self,
        path: &Path,
        truncate: bool,
        what: &str,
    ) -> io::Result<Box<dyn WritableFile>> {
        let path = normalize(path);
        let mut state = self.shared.state();
        state.check(FaultOp::Create, &path)?;
        state.require_parent_dir(&path, what)?;
        state.require_not_dir(&path, what)?;
        let existing = if truncate {
            None
        } else {
            state.live.get(&path).cloned()
        };
        let inode = match existing {
            Some(inode) => inode,
            None => {
                // A fresh inode: until the directory is synced, a crash brings
                // back whatever entry (if any) was durable under this name.
                let inode = InodeRef::default();
                state.live.insert(path.clone(), Arc::clone(&inode));
                inode
            }
        };
        let size = lock_ignoring_poison(&inode).data.len() as u64;
        Ok(Box::new(MemWritableFile {
            shared: Arc::clone(&self.shared),
            inode,
            path,
            generation: state.generation,
            size,
        }))
    }
}

struct MemWritableFile {
    shared: Arc<MemShared>,
    inode: InodeRef,
    path: PathBuf,
    generation: u64,
    size: u64,
}

impl fmt::Debug for MemWritableFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemWritableFile")
            .field("path", &self.path)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

fn stale_handle(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::BrokenPipe,
        format!("{}: handle opened before a simulated crash", path.display()),
    )
}

impl WritableFile for MemWritableFile {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        let mut state = self.shared.state();
        if state.generation != self.generation {
            return Err(stale_handle(&self.path));
        }
        let mut inode = lock_ignoring_poison(&self.inode);
        if let Err(e) = state.check(FaultOp::Append, &self.path) {
            if state.torn_appends {
                let half = &data[..data.len() / 2];
                inode.data.extend_from_slice(half);
                self.size += half.len() as u64;
            }
            return Err(e);
        }
        inode.data.extend_from_slice(data);
        self.size += data.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        let state = self.shared.state();
        if state.generation != self.generation {
            return Err(stale_handle(&self.path));
        }
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        mem_sync(&self.shared, &self.inode, &self.path, self.generation)
    }

    fn size(&self) -> u64 {
        self.size
    }

    fn sync_handle(&self) -> io::Result<Arc<dyn FileSync>> {
        Ok(Arc::new(MemFileSync {
            shared: Arc::clone(&self.shared),
            inode: Arc::clone(&self.inode),
            path: self.path.clone(),
            generation: self.generation,
        }))
    }
}

/// A sync of an in-memory file: injected faults, stale handles and all.
fn mem_sync(shared: &MemShared, inode: &InodeRef, path: &Path, generation: u64) -> io::Result<()> {
    let mut state = shared.state();
    if state.generation != generation {
        return Err(stale_handle(path));
    }
    state.check(FaultOp::Sync, path)?;
    let mut inode = lock_ignoring_poison(inode);
    inode.synced_len = inode.data.len();
    Ok(())
}

/// A sync handle of an in-memory file.
struct MemFileSync {
    shared: Arc<MemShared>,
    inode: InodeRef,
    path: PathBuf,
    generation: u64,
}

impl fmt::Debug for MemFileSync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemFileSync")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl FileSync for MemFileSync {
    fn sync(&self) -> io::Result<()> {
        mem_sync(&self.shared, &self.inode, &self.path, self.generation)
    }
}

struct MemRandomAccessFile {
    shared: Arc<MemShared>,
    inode: InodeRef,
    path: PathBuf,
    generation: u64,
}

impl fmt::Debug for MemRandomAccessFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemRandomAccessFile")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl RandomAccessFile for MemRandomAccessFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut state = self.shared.state();
        if state.generation != self.generation {
            return Err(stale_handle(&self.path));
        }
        state.check(FaultOp::Read, &self.path)?;
        let inode = lock_ignoring_poison(&self.inode);
        Ok(copy_at(&inode.data, offset, buf))
    }

    fn size(&self) -> io::Result<u64> {
        let state = self.shared.state();
        if state.generation != self.generation {
            return Err(stale_handle(&self.path));
        }
        Ok(lock_ignoring_poison(&self.inode).data.len() as u64)
    }
}

struct MemFileLock {
    shared: Arc<MemShared>,
    path: PathBuf,
    id: u64,
}

impl fmt::Debug for MemFileLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemFileLock")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl FileLock for MemFileLock {
    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for MemFileLock {
    fn drop(&mut self) {
        let mut state = self.shared.state();
        // After a crash the path may have been locked again by someone else.
        if state.locks.get(&self.path) == Some(&self.id) {
            state.locks.remove(&self.path);
        }
    }
}

impl FileSystem for FaultInjectionFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let path = normalize(path);
        let mut state = self.shared.state();
        state.check(FaultOp::CreateDir, &path)?;
        let mut ancestors: Vec<&Path> = path.ancestors().collect();
        ancestors.reverse();
        for dir in ancestors {
            if state.live.contains_key(dir) {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("create directory {}: not a directory", dir.display()),
                ));
            }
        }
        for dir in path.ancestors() {
            if !state.is_dir(dir) {
                state.dirs.insert(dir.to_path_buf());
            }
        }
        Ok(())
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.open_writable(path, true, "create")
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.open_writable(path, false, "open for append")
    }

    fn open_random(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        let path = normalize(path);
        let mut state = self.shared.state();
        state.check(FaultOp::Open, &path)?;
        let inode = state
            .live
            .get(&path)
            .cloned()
            .ok_or_else(|| not_found("open", &path))?;
        Ok(Arc::new(MemRandomAccessFile {
            shared: Arc::clone(&self.shared),
            inode,
            path,
            generation: state.generation,
        }))
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        let path = normalize(path);
        let mut state = self.shared.state();
        state.check(FaultOp::Read, &path)?;
        let inode = state
            .live
            .get(&path)
            .ok_or_else(|| not_found("read", &path))?;
        Ok(lock_ignoring_poison(inode).data.clone())
    }

    fn file_size(&self, path: &Path) -> io::Result<u64> {
        let path = normalize(path);
        let state = self.shared.state();
        let inode = state
            .live
            .get(&path)
            .ok_or_else(|| not_found("stat", &path))?;
        Ok(lock_ignoring_poison(inode).data.len() as u64)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let (from, to) = (normalize(from), normalize(to));
        let mut state = self.shared.state();
        state.check(FaultOp::Rename, &from)?;
        state.require_parent_dir(&to, "rename to")?;
        state.require_not_dir(&to, "rename to")?;
        let inode = state
            .live
            .remove(&from)
            .ok_or_else(|| not_found("rename", &from))?;
        state.live.insert(to, inode);
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let path = normalize(path);
        let mut state = self.shared.state();
        state.check(FaultOp::Remove, &path)?;
        state
            .live
            .remove(&path)
            .map(drop)
            .ok_or_else(|| not_found("remove", &path))
    }

    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        let path = normalize(path);
        let mut state = self.shared.state();
        state.check(FaultOp::Remove, &path)?;
        if !state.dirs.contains(&path) {
            return Err(not_found("remove directory", &path));
        }
        let inside = |p: &PathBuf| p.starts_with(&path) && *p != path;
        if state.live.keys().any(inside) || state.dirs.iter().any(inside) {
            return Err(io::Error::new(
                io::ErrorKind::DirectoryNotEmpty,
                format!("remove directory {}: not empty", path.display()),
            ));
        }
        state.dirs.remove(&path);
        Ok(())
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let path = normalize(path);
        let mut state = self.shared.state();
        state.check(FaultOp::List, &path)?;
        if !state.is_dir(&path) {
            return Err(not_found("list", &path));
        }
        let files = state.live.keys();
        let dirs = state.dirs.iter();
        let mut names: Vec<String> = files
            .chain(dirs)
            .filter(|p| p.parent() == Some(path.as_path()))
            .filter_map(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }

    fn exists(&self, path: &Path) -> bool {
        let path = normalize(path);
        let state = self.shared.state();
        state.live.contains_key(&path) || state.is_dir(&path)
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.shared.state().is_dir(&normalize(path))
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        let path = normalize(path);
        let mut state = self.shared.state();
        state.check(FaultOp::SyncDir, &path)?;
        if !state.is_dir(&path) {
            return Err(not_found("sync directory", &path));
        }
        let in_dir = |p: &Path| parent_of(p) == path;
        state.durable.retain(|p, _| !in_dir(p));
        let entries: Vec<(PathBuf, InodeRef)> = state
            .live
            .iter()
            .filter(|(p, _)| in_dir(p))
            .map(|(p, i)| (p.clone(), Arc::clone(i)))
            .collect();
        state.durable.extend(entries);
        Ok(())
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        let path = normalize(path);
        let mut state = self.shared.state();
        state.check(FaultOp::Lock, &path)?;
        state.require_parent_dir(&path, "lock")?;
        state.require_not_dir(&path, "lock")?;
        if state.locks.contains_key(&path) {
            return Err(io::Error::new(
                io::ErrorKind::ResourceBusy,
                format!(
                    "lock {}: already held by another open of the same database",
                    path.display()
                ),
            ));
        }
        if !state.live.contains_key(&path) {
            state.live.insert(path.clone(), InodeRef::default());
        }
        state.next_lock_id += 1;
        let id = state.next_lock_id;
        state.locks.insert(path.clone(), id);
        Ok(Box::new(MemFileLock {
            shared: Arc::clone(&self.shared),
            path,
            id,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> &Path {
        Path::new(s)
    }

    fn write(fs: &dyn FileSystem, path: &str, data: &[u8], sync: bool) {
        let mut f = fs.create(p(path)).unwrap();
        f.append(data).unwrap();
        if sync {
            f.sync().unwrap();
        }
    }

    #[test]
    fn crash_drops_unsynced_bytes() {
        let fs = FaultInjectionFs::new();
        fs.create_dir_all(p("/db")).unwrap();
        let mut f = fs.create(p("/db/log")).unwrap();
        f.append(b"one").unwrap();
        f.sync().unwrap();
        f.append(b"two").unwrap();
        assert_eq!(fs.unsynced_bytes(p("/db/log")), Some(6));
        fs.sync_dir(p("/db")).unwrap();
        assert_eq!(fs.unsynced_bytes(p("/db/log")), Some(3));
        assert_eq!(fs.read_file(p("/db/log")).unwrap(), b"onetwo");
        fs.simulate_crash();
        assert_eq!(fs.read_file(p("/db/log")).unwrap(), b"one");
        // Old handles are dead; new ones work.
        assert!(f.append(b"x").is_err());
        assert!(f.sync().is_err());
        let mut g = fs.open_append(p("/db/log")).unwrap();
        assert_eq!(g.size(), 3);
        g.append(b"!").unwrap();
        assert_eq!(fs.read_file(p("/db/log")).unwrap(), b"one!");
    }

    #[test]
    fn crash_drops_unsynced_creations_and_removals() {
        let fs = FaultInjectionFs::new();
        fs.create_dir_all(p("d")).unwrap();
        write(&fs, "d/kept", b"k", true);
        fs.sync_dir(p("d")).unwrap();
        write(&fs, "d/new", b"n", true); // synced data, unsynced entry
        fs.remove_file(p("d/kept")).unwrap();
        assert_eq!(fs.list_dir(p("d")).unwrap(), vec!["new"]);
        fs.simulate_crash();
        assert_eq!(fs.list_dir(p("d")).unwrap(), vec!["kept"]);
        assert_eq!(fs.read_file(p("d/kept")).unwrap(), b"k");
    }

    #[test]
    fn unsynced_rename_is_undone() {
        let fs = FaultInjectionFs::new();
        write(&fs, "MANIFEST", b"old", true);
        fs.sync_dir(p("")).unwrap();
        write(&fs, "MANIFEST.tmp", b"new", true);
        fs.rename(p("MANIFEST.tmp"), p("MANIFEST")).unwrap();
        assert_eq!(fs.read_file(p("MANIFEST")).unwrap(), b"new");
        fs.simulate_crash();
        assert_eq!(fs.read_file(p("MANIFEST")).unwrap(), b"old");
        assert!(!fs.exists(p("MANIFEST.tmp")));

        write(&fs, "MANIFEST.tmp", b"new", true);
        fs.rename(p("MANIFEST.tmp"), p("MANIFEST")).unwrap();
        fs.sync_dir(p("")).unwrap();
        fs.simulate_crash();
        assert_eq!(fs.read_file(p("MANIFEST")).unwrap(), b"new");
        assert!(!fs.exists(p("MANIFEST.tmp")));
    }

    #[test]
    fn torn_crash_keeps_a_prefix() {
        for seed in 0..20 {
            let fs = FaultInjectionFs::new();
            let mut f = fs.create(p("f")).unwrap();
            f.append(b"0123").unwrap();
            f.sync().unwrap();
            fs.sync_dir(p("")).unwrap();
            f.append(b"456789").unwrap();
            fs.simulate_crash_torn(seed);
            let data = fs.read_file(p("f")).unwrap();
            assert!(data.len() >= 4 && b"0123456789".starts_with(&data));
        }
    }

    #[test]
    fn removed_file_stays_readable_through_open_handle() {
        let fs = FaultInjectionFs::new();
        write(&fs, "t", b"table", true);
        let r = fs.open_random(p("t")).unwrap();
        fs.remove_file(p("t")).unwrap();
        let mut buf = [0u8; 5];
        r.read_exact_at(0, &mut buf).unwrap();
        assert_eq!(&buf, b"table");
        assert!(fs.open_random(p("t")).is_err());
    }

    #[test]
    fn injected_errors_surface() {
        let fs = FaultInjectionFs::new();
        let mut f = fs.create(p("f")).unwrap();
        fs.fail_next(FaultOp::Append, 2);
        assert!(FaultInjectionFs::is_injected(&f.append(b"a").unwrap_err()));
        assert!(f.append(b"a").is_err());
        f.append(b"b").unwrap();
        assert_eq!(fs.injected(FaultOp::Append), 2);
        assert_eq!(fs.calls(FaultOp::Append), 3);

        fs.fail_after(FaultOp::Sync, 1);
        f.sync().unwrap();
        assert!(f.sync().is_err());
        assert!(f.sync().is_err());
        fs.clear_fault(FaultOp::Sync);
        f.sync().unwrap();

        for op in [
            FaultOp::Rename,
            FaultOp::Read,
            FaultOp::Open,
            FaultOp::SyncDir,
        ] {
            fs.fail_next(op, 1);
        }
        assert!(fs.rename(p("f"), p("g")).is_err());
        assert!(fs.exists(p("f")), "a failed rename changes nothing");
        assert!(fs.read_file(p("f")).is_err());
        assert!(fs.open_random(p("f")).is_err());
        assert!(fs.sync_dir(p("")).is_err());
        let r = fs.open_random(p("f")).unwrap();
        fs.fail_next(FaultOp::Read, 1);
        let mut buf = [0u8; 1];
        let err = r.read_exact_at(0, &mut buf).unwrap_err();
        assert!(err.to_string().contains("Read on f"), "{err}");
        r.read_exact_at(0, &mut buf).unwrap();
        assert_eq!(&buf, b"b");
    }

    #[test]
    fn torn_appends_write_half() {
        let fs = FaultInjectionFs::new();
        fs.set_torn_appends(true);
        let mut f = fs.create(p("f")).unwrap();
        fs.fail_next(FaultOp::Append, 1);
        assert!(f.append(b"abcd").is_err());
        assert_eq!(fs.read_file(p("f")).unwrap(), b"ab");
        assert_eq!(f.size(), 2);
    }

    #[test]
    fn random_faults_are_deterministic() {
        let run = |seed| {
            let fs = FaultInjectionFs::new();
            let mut f = fs.create(p("f")).unwrap();
            fs.fail_randomly(FaultOp::Append, 0.3, seed);
            (0..200).map(|_| f.append(b"x").is_ok()).collect::<Vec<_>>()
        };
        let a = run(7);
        assert_eq!(a, run(7));
        let failures = a.iter().filter(|ok| !**ok).count();
        assert!((30..=90).contains(&failures), "{failures}");
        let fs = FaultInjectionFs::new();
        fs.fail_randomly(FaultOp::Create, 1.0, 1);
        assert!(fs.create(p("x")).is_err());
        fs.fail_randomly(FaultOp::Create, 0.0, 1);
        assert!(fs.create(p("x")).is_ok());
    }

    #[test]
    fn namespace_errors() {
        let fs = FaultInjectionFs::new();
        assert_eq!(
            fs.create(p("/no/such/f")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        fs.create_dir_all(p("/a/b")).unwrap();
        assert!(fs.is_dir(p("/a")) && fs.is_dir(p("/a/b/")));
        assert_eq!(fs.list_dir(p("/a")).unwrap(), vec!["b"]);
        assert!(fs.create(p("/a/b")).is_err());
        write(&fs, "/a/file", b"", false);
        assert!(fs.create_dir_all(p("/a/file/x")).is_err());
        assert_eq!(fs.list_dir(p("/a/./")).unwrap(), vec!["b", "file"]);
        assert!(fs.remove_file(p("/a/missing")).is_err());
        assert!(fs.rename(p("/a/missing"), p("/a/x")).is_err());
        assert!(fs.list_dir(p("/nope")).is_err());
        assert_eq!(fs.file_size(p("/a/file")).unwrap(), 0);
    }

    #[test]
    fn mem_lock_is_exclusive() {
        let fs = FaultInjectionFs::new();
        let lock = fs.lock(p("LOCK")).unwrap();
        assert_eq!(lock.path(), p("LOCK"));
        let err = fs.lock(p("LOCK")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ResourceBusy);
        drop(lock);
        let lock = fs.lock(p("LOCK")).unwrap();
        fs.simulate_crash();
        let again = fs.lock(p("LOCK")).unwrap();
        drop(lock); // the stale lock must not release the new one
        assert!(fs.lock(p("LOCK")).is_err());
        drop(again);
    }

    #[test]
    fn posix_round_trip_and_lock() {
        let dir = tempfile::tempdir().unwrap();
        let fs = PosixFs;
        let sub = dir.path().join("db");
        fs.create_dir_all(&sub).unwrap();
        assert!(fs.is_dir(&sub));
        let path = sub.join("f");
        let mut f = fs.create(&path).unwrap();
        f.append(b"hello ").unwrap();
        f.sync().unwrap();
        drop(f);
        let mut f = fs.open_append(&path).unwrap();
        assert_eq!(f.size(), 6);
        f.append(b"world").unwrap();
        f.flush().unwrap();
        f.sync().unwrap();
        fs.sync_dir(&sub).unwrap();
        let r = fs.open_random(&path).unwrap();
        assert_eq!(r.size().unwrap(), 11);
        let mut buf = [0u8; 5];
        r.read_exact_at(6, &mut buf).unwrap();
        assert_eq!(&buf, b"world");
        assert_eq!(
            r.read_exact_at(8, &mut buf).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
        fs.rename(&path, &sub.join("g")).unwrap();
        assert_eq!(fs.list_dir(&sub).unwrap(), vec!["g"]);
        assert_eq!(fs.file_size(&sub.join("g")).unwrap(), 11);
        fs.remove_file(&sub.join("g")).unwrap();
        assert!(!fs.exists(&sub.join("g")));
        let err = fs.read_file(&sub.join("g")).unwrap_err();
        assert!(err.to_string().contains("g"), "{err}");

        let lock_path = sub.join("LOCK");
        let lock = fs.lock(&lock_path).unwrap();
        let err = fs.lock(&lock_path).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ResourceBusy);
        assert!(err.to_string().contains("LOCK"), "{err}");
        drop(lock);
        fs.lock(&lock_path).unwrap();
    }
}
