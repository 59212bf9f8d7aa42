//! [`PosixFs`]: the real file system.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[cfg(target_os = "linux")]
use super::shared_writable::SharedWritableFile;
use super::{FileLock, FileSync, FileSystem, RandomAccessFile, WritableFile, annotate};

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
        // Positioned at the end we keep (`pwrite`): a plain `write` takes
        // the kernel's file-position lock once the file is shared (the
        // log's sync handle shares it), one more cache line bounced between
        // the threads that drain the log in turns. A file opened for append
        // appends anyway.
        match self.file.write_all_at(data, self.size) {
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
        sync_data(&self.file, &self.path)
    }

    fn size(&self) -> u64 {
        self.size
    }

    fn sync_handle(&self) -> io::Result<Arc<dyn FileSync>> {
        PosixFileSync::of(&self.file, &self.path)
    }
}

/// `fdatasync(2)`, its error naming the file.
pub(super) fn sync_data(file: &File, path: &Path) -> io::Result<()> {
    file.sync_data().map_err(|e| annotate(e, "sync", path))
}

/// A second descriptor of a file, for `fdatasync` from another thread.
#[derive(Debug)]
pub(super) struct PosixFileSync {
    file: File,
    path: PathBuf,
}

impl PosixFileSync {
    /// A sync handle of `file`, through a duplicate of its descriptor.
    pub(super) fn of(file: &File, path: &Path) -> io::Result<Arc<dyn FileSync>> {
        let file = file
            .try_clone()
            .map_err(|e| annotate(e, "duplicate", path))?;
        Ok(Arc::new(PosixFileSync {
            file,
            path: path.to_path_buf(),
        }))
    }
}

impl FileSync for PosixFileSync {
    fn sync(&self) -> io::Result<()> {
        sync_data(&self.file, &self.path)
    }

    fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
        // `sync_file_range` on Linux, nothing elsewhere (the crate's).
        shared_log_file::PositionedFile::start_writeback(&self.file, offset, len)
            .map_err(|e| annotate(e, "start writeback of", &self.path))
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

/// Creates `path`, or truncates it, for writing (and, if `read`, reading).
fn create_truncated(path: &Path, read: bool) -> io::Result<File> {
    OpenOptions::new()
        .read(read)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| annotate(e, "create", path))
}

impl FileSystem for PosixFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::create_dir_all(path).map_err(|e| annotate(e, "create directory", path))
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let file = create_truncated(path, false)?;
        Ok(Box::new(PosixWritableFile {
            file,
            path: path.to_path_buf(),
            size: 0,
        }))
    }

    /// On Linux, appends through a shared memory map of the file, a
    /// window at a time (see [`FileSystem::create_mapped`]); on a file
    /// system without `fallocate` or shared mappings, or off Linux, the
    /// file is written as by [`create`](FileSystem::create).
    fn create_mapped(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        #[cfg(target_os = "linux")]
        {
            // Readable too: a shared mapping of the file reads it.
            let file = create_truncated(path, true)?;
            let sync = PosixFileSync::of(&file, path)?;
            match shared_log_file::SharedFile::mapped(file, path) {
                Ok(mapped) => return Ok(Box::new(SharedWritableFile::new(mapped, sync))),
                // No `fallocate` (EOPNOTSUPP), or no shared mappings of
                // its files (ENODEV): this file system writes.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENODEV)) => {}
                Err(e) => return Err(annotate(e, "map", path)),
            }
        }
        self.create(path)
    }

    /// On Linux, a file that writers write at once with `pwrite`, at
    /// offsets they reserved (see [`FileSystem::create_positional`]); off
    /// Linux, the file is written as by [`create`](FileSystem::create).
    fn create_positional(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        #[cfg(target_os = "linux")]
        {
            let file = create_truncated(path, false)?;
            let sync = PosixFileSync::of(&file, path)?;
            // Tests hold or fail its writes (see `write_hooks`).
            #[cfg(test)]
            let file = write_hooks::Hooked::new(file, path);
            let shared = shared_log_file::SharedFile::positional(file, path)
                .map_err(|e| annotate(e, "create", path))?;
            Ok(Box::new(SharedWritableFile::new(shared, sync)))
        }
        #[cfg(not(target_os = "linux"))]
        self.create(path)
    }

    /// On Linux, a file whose writers write with `pwrite` into `stripes`
    /// stripe files beside it (see [`FileSystem::create_striped`]); off
    /// Linux, the file is written as by [`create`](FileSystem::create).
    fn create_striped(&self, path: &Path, stripes: usize) -> io::Result<Box<dyn WritableFile>> {
        #[cfg(target_os = "linux")]
        {
            let create = |p: &Path| {
                let file = create_truncated(p, false)?;
                // Tests hold or fail its writes (see `write_hooks`).
                #[cfg(test)]
                let file = write_hooks::Hooked::new(file, p);
                Ok(file)
            };
            let striped = SharedWritableFile::striped(path, stripes, create)
                .map_err(|e| annotate(e, "create", path))?;
            Ok(Box::new(striped))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = stripes;
            self.create(path)
        }
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

/// Unit tests' stand-in for the disk under a positional log: a hook, set
/// for a path, called with each positioned write's offset before the
/// write, whose error it returns instead.
#[cfg(all(test, target_os = "linux"))]
pub(crate) mod write_hooks {
    use std::fs::File;
    use std::io;
    use std::os::unix::fs::FileExt;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex};

    /// A hook: called with a write's offset; its error fails the write.
    pub(crate) type Hook = Arc<dyn Fn(u64) -> io::Result<()> + Send + Sync>;

    /// The hooks set, by path (each test has a directory of its own).
    static HOOKS: Mutex<Vec<(PathBuf, Hook)>> = Mutex::new(Vec::new());

    /// Calls `hook` before every positioned write to `path` from now on.
    pub(crate) fn set(path: &Path, hook: Hook) {
        let mut hooks = HOOKS.lock().unwrap();
        hooks.retain(|(p, _)| p != path);
        hooks.push((path.to_path_buf(), hook));
    }

    /// A positional file whose writes go through its path's hook.
    #[derive(Debug)]
    pub(in crate::env) struct Hooked {
        file: File,
        path: PathBuf,
    }

    impl Hooked {
        pub(in crate::env) fn new(file: File, path: &Path) -> Hooked {
            Hooked {
                file,
                path: path.to_path_buf(),
            }
        }
    }

    impl shared_log_file::PositionedFile for Hooked {
        fn write_all_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
            let hooks = HOOKS.lock().unwrap();
            let hook = hooks.iter().find(|(p, _)| *p == self.path);
            let hook = hook.map(|(_, hook)| hook.clone());
            drop(hooks);
            // Called with no lock held: a hook may block while other
            // writers go through theirs.
            if let Some(hook) = hook {
                hook(offset)?;
            }
            FileExt::write_all_at(&self.file, data, offset)
        }

        fn set_len(&self, len: u64) -> io::Result<()> {
            File::set_len(&self.file, len)
        }

        fn sync_data(&self) -> io::Result<()> {
            File::sync_data(&self.file)
        }

        fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
            shared_log_file::PositionedFile::start_writeback(&self.file, offset, len)
        }
    }
}
