//! The calls of [`FaultInjectionFs`] and its open files.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{
    FaultInjectionFs, FaultOp, Inode, InodeRef, MemShared, MemState, lock_ignoring_poison,
    normalize, not_found, parent_of,
};
#[cfg(target_os = "linux")]
use crate::env::shared_writable::SharedWritableFile;
use crate::env::{FileLock, FileSync, FileSystem, RandomAccessFile, WritableFile, copy_at};

/// How [`FaultInjectionFs::open_writable`] opens a file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Opening {
    /// Keeps the file if there is one (`open_append`).
    Append,
    /// A fresh, empty file (`create`).
    Create,
    /// A fresh, empty file written at offsets (`create_positional`).
    CreatePositional,
}

impl FaultInjectionFs {
    fn open_writable(
        &self,
        path: &Path,
        opening: Opening,
        what: &str,
    ) -> io::Result<MemWritableFile> {
        let path = normalize(path);
        let mut state = self.shared.state();
        state.check(FaultOp::Create, &path)?;
        state.require_parent_dir(&path, what)?;
        state.require_not_dir(&path, what)?;
        let existing = match opening {
            Opening::Append => state.live.get(&path).cloned(),
            Opening::Create | Opening::CreatePositional => None,
        };
        let inode = match existing {
            Some(inode) => inode,
            None => {
                // A fresh inode: until the directory is synced, a crash brings
                // back whatever entry (if any) was durable under this name.
                let inode = Arc::new(Mutex::new(Inode::new(opening == Opening::CreatePositional)));
                state.live.insert(path.clone(), Arc::clone(&inode));
                inode
            }
        };
        let size = lock_ignoring_poison(&inode).data.len() as u64;
        Ok(MemWritableFile {
            handle: MemHandle {
                shared: Arc::clone(&self.shared),
                inode,
                path,
                generation: state.generation,
            },
            size,
        })
    }
}

/// A handle of an in-memory file, opened in one generation of the file
/// system: every call through it fails once a simulated crash started
/// another. Syncs the file, reads it, and writes it at offsets (for the
/// `SharedFile` that `create_positional` makes of it).
#[derive(Clone)]
struct MemHandle {
    shared: Arc<MemShared>,
    inode: InodeRef,
    path: PathBuf,
    generation: u64,
}

impl fmt::Debug for MemHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemHandle")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn stale_handle(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::BrokenPipe,
        format!("{}: handle opened before a simulated crash", path.display()),
    )
}

impl MemHandle {
    /// The file system's state, unless a crash since made the handle stale.
    fn state(&self) -> io::Result<MutexGuard<'_, MemState>> {
        let state = self.shared.state();
        if state.generation != self.generation {
            return Err(stale_handle(&self.path));
        }
        Ok(state)
    }

    /// Writes `data` with `write`, or fails as an injected `Append` fault
    /// says (with torn appends, after writing its first half). Returns the
    /// bytes written, and the outcome.
    fn write(&self, data: &[u8], write: impl Fn(&mut Inode, &[u8])) -> (usize, io::Result<()>) {
        let mut state = match self.state() {
            Ok(state) => state,
            Err(e) => return (0, Err(e)),
        };
        let mut inode = lock_ignoring_poison(&self.inode);
        if let Err(e) = state.check(FaultOp::Append, &self.path) {
            if !state.torn_appends {
                return (0, Err(e));
            }
            let half = &data[..data.len() / 2];
            write(&mut inode, half);
            return (half.len(), Err(e));
        }
        write(&mut inode, data);
        (data.len(), Ok(()))
    }
}

impl FileSync for MemHandle {
    /// Injected faults, stale handles and all.
    fn sync(&self) -> io::Result<()> {
        // The state stays locked until the inode is synced: a crash (which
        // takes it) comes before the check or after the sync, never
        // between them, where it would drop bytes a sync then reports
        // synced.
        let mut state = self.state()?;
        state.check(FaultOp::Sync, &self.path)?;
        lock_ignoring_poison(&self.inode).sync();
        Ok(())
    }

    fn start_writeback(&self, _: u64, _: u64) -> io::Result<()> {
        self.state()?.check(FaultOp::Writeback, &self.path)
    }
}

#[cfg(target_os = "linux")]
impl shared_log_file::PositionedFile for MemHandle {
    /// Fails as an append does ([`FaultOp::Append`], torn appends
    /// included).
    fn write_all_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        let offset = usize::try_from(offset).map_err(|_| io::ErrorKind::FileTooLarge)?;
        self.write(data, |inode, bytes| inode.write_at(offset, bytes))
            .1
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let _state = self.state()?;
        let len = usize::try_from(len).map_err(|_| io::ErrorKind::FileTooLarge)?;
        lock_ignoring_poison(&self.inode).set_len(len);
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        FileSync::sync(self)
    }
}

impl RandomAccessFile for MemHandle {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        // Locked through the read, as in `sync`: a stale handle never
        // reads what a crash left.
        let mut state = self.state()?;
        state.check(FaultOp::Read, &self.path)?;
        let inode = lock_ignoring_poison(&self.inode);
        Ok(copy_at(&inode.data, offset, buf))
    }

    fn size(&self) -> io::Result<u64> {
        let _state = self.state()?;
        Ok(lock_ignoring_poison(&self.inode).data.len() as u64)
    }
}

#[derive(Debug)]
struct MemWritableFile {
    handle: MemHandle,
    size: u64,
}

impl WritableFile for MemWritableFile {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        let (written, appended) = self.handle.write(data, Inode::append);
        self.size += written as u64;
        appended
    }

    fn flush(&mut self) -> io::Result<()> {
        self.handle.state().map(drop)
    }

    fn sync(&mut self) -> io::Result<()> {
        FileSync::sync(&self.handle)
    }

    fn size(&self) -> u64 {
        self.size
    }

    fn sync_handle(&self) -> io::Result<Arc<dyn FileSync>> {
        Ok(Arc::new(self.handle.clone()))
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
        Ok(Box::new(self.open_writable(
            path,
            Opening::Create,
            "create",
        )?))
    }

    /// On Linux, a file that writers write at once, each at offsets it
    /// reserved (see [`FileSystem::create_positional`]); a power loss
    /// keeps any set of its unsynced pages (see
    /// [`FaultInjectionFs::simulate_crash_torn`]). Off Linux, as
    /// [`create`](FileSystem::create).
    fn create_positional(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let file = self.open_writable(path, Opening::CreatePositional, "create")?;
        #[cfg(target_os = "linux")]
        {
            let path = file.handle.path.clone();
            let sync = Arc::new(file.handle.clone());
            let shared = shared_log_file::SharedFile::positional(file.handle, path)?;
            Ok(Box::new(SharedWritableFile::new(shared, sync)))
        }
        #[cfg(not(target_os = "linux"))]
        Ok(Box::new(file))
    }

    /// On Linux, a file whose shared writes go into `stripes` stripe files
    /// (see [`FileSystem::create_striped`]), each written positionally: a
    /// power loss keeps any set of each file's unsynced pages. Off Linux,
    /// as [`create`](FileSystem::create).
    fn create_striped(&self, path: &Path, stripes: usize) -> io::Result<Box<dyn WritableFile>> {
        #[cfg(target_os = "linux")]
        {
            let create = |p: &Path| {
                let file = self.open_writable(p, Opening::CreatePositional, "create")?;
                Ok(file.handle)
            };
            Ok(Box::new(SharedWritableFile::striped(
                path, stripes, create,
            )?))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = stripes;
            self.create(path)
        }
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        Ok(Box::new(self.open_writable(
            path,
            Opening::Append,
            "open for append",
        )?))
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
        Ok(Arc::new(MemHandle {
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
