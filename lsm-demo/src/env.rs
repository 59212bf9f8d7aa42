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

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

mod fault;
mod posix;
#[cfg(target_os = "linux")]
mod shared_writable;
pub use fault::{FaultInjectionFs, FaultOp, InjectedFault};
pub use posix::PosixFs;
#[cfg(all(test, target_os = "linux"))]
pub(crate) use posix::write_hooks;
/// The file that writers of a log write at once, each at bytes it reserved
/// (see [`WritableFile::shared_writes`]): the `shared-log-file` crate's.
pub use shared_log_file::SharedFile;

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

    /// The file's half that many threads write at once, each at offsets
    /// it reserved, if it has one: a file made by
    /// [`FileSystem::create_mapped`] or [`FileSystem::create_positional`]
    /// on a file system that supports them. While anyone writes through
    /// it, this handle must neither append nor sync.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let log = fs.create_mapped(Path::new("log")).unwrap();
    /// assert!(log.shared_writes().is_none()); // written only through the handle
    /// ```
    fn shared_writes(&self) -> Option<Arc<SharedFile>> {
        None
    }
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

    /// Starts writing `len` bytes from `offset` back to the disk and
    /// returns without waiting (`sync_file_range(2)` with
    /// `SYNC_FILE_RANGE_WRITE` on Linux): a later [`sync`](Self::sync) then
    /// has less to write. It promises no durability, and a file system
    /// without such a call does nothing, the default.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::env::{FileSystem, PosixFs};
    /// let mut f = PosixFs.create(&dir.path().join("f")).unwrap();
    /// f.append(&[7; 8192]).unwrap();
    /// let sync = f.sync_handle().unwrap();
    /// sync.start_writeback(0, 4096).unwrap(); // the first page is on its way
    /// sync.sync().unwrap(); // the rest, and the wait
    /// ```
    fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
        let _ = (offset, len);
        Ok(())
    }
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
    /// Creates (or truncates) a file as [`create`](Self::create) does, for
    /// appends that a file system may make through a memory map instead of
    /// a `write` each: the log's, under
    /// [`Options::set_allow_mmap_writes`](crate::Options::set_allow_mmap_writes).
    /// The [durability contract](self#durability-contract) is the same;
    /// the file may hold zeros past its appended bytes until it is dropped
    /// (and after a crash). By default, the file of `create`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::env::{FileSystem, PosixFs};
    /// let path = dir.path().join("000007.log");
    /// let mut log = PosixFs.create_mapped(&path).unwrap();
    /// log.append(b"record").unwrap();
    /// log.sync().unwrap();
    /// drop(log); // cuts the file back to what was appended
    /// assert_eq!(PosixFs.read_file(&path).unwrap(), b"record");
    /// ```
    fn create_mapped(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.create(path)
    }
    /// Creates (or truncates) a file as [`create`](Self::create) does, for
    /// writes that many threads make at once, each with a positioned
    /// `write` at offsets it reserved (see
    /// [`WritableFile::shared_writes`]): the log's, under
    /// [`Options::set_allow_concurrent_log_write`](crate::Options::set_allow_concurrent_log_write).
    /// The [durability contract](self#durability-contract) is the same;
    /// after a crash, the file may hold zeros where writes below the
    /// furthest one had not been made. By default, the file of `create`,
    /// which has no shared half: its appends then come from one thread at
    /// a time.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::env::{FileSystem, PosixFs};
    /// let path = dir.path().join("000007.log");
    /// let log = PosixFs.create_positional(&path).unwrap();
    /// # #[cfg(target_os = "linux")] {
    /// let shared = log.shared_writes().expect("positioned writes on Linux");
    /// std::thread::scope(|s| {
    ///     // SAFETY: the two ranges do not overlap.
    ///     s.spawn(|| unsafe { shared.write_at(6, b"-two") }.unwrap());
    ///     unsafe { shared.write_at(0, b"record") }.unwrap();
    /// });
    /// shared.set_size(10); // the writers are done: their writes end at 10
    /// drop((shared, log)); // the last handle cuts the file to what was written
    /// assert_eq!(PosixFs.read_file(&path).unwrap(), b"record-two");
    /// # }
    /// ```
    fn create_positional(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.create(path)
    }
    /// Creates (or truncates) a file as
    /// [`create_positional`](Self::create_positional) does, with
    /// `stripes` stripe files beside it
    /// ([`stripe_path`](shared_log_file::stripe_path)`(path, 1)` on, emptied
    /// first), into which the shared writes go (see
    /// [`SharedFile::striped`]): the log's, under
    /// [`Options::set_wal_stripes`](crate::Options::set_wal_stripes). A
    /// [`sync`](FileSync::sync) through its handle syncs the stripes
    /// written since the last one too. By default, the file of
    /// `create_positional`, without stripes.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::env::{FileSystem, PosixFs};
    /// let path = dir.path().join("000007.log");
    /// let log = PosixFs.create_striped(&path, 2).unwrap();
    /// # #[cfg(target_os = "linux")] {
    /// let shared = log.shared_writes().expect("positioned writes on Linux");
    /// assert_eq!(shared.stripes(), 2);
    /// // SAFETY: one writer.
    /// unsafe { shared.write_at(0, b"record") }.unwrap();
    /// log.sync_handle().unwrap().sync().unwrap(); // the log file (a lone writer wrote it) and any stripe written
    /// assert!(dir.path().join("000007.log.2").exists());
    /// # }
    /// ```
    fn create_striped(&self, path: &Path, stripes: usize) -> io::Result<Box<dyn WritableFile>> {
        let _ = stripes;
        self.create_positional(path)
    }
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

#[cfg(test)]
mod tests;
