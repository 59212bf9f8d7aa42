//! [`PositionedFile`], what a positional [`SharedFile`](crate::SharedFile)
//! writes through.

use std::fmt;
use std::fs::File;
use std::io;

/// A file that a positional [`SharedFile`](crate::SharedFile) writes with
/// a positioned write each: a [`File`] (a `pwrite`), or a file of the
/// caller's own, such as a fault-injecting test file system's, or a
/// wrapper that counts or fails writes. Errors are the bare ones: the
/// shared file names itself in them.
///
/// # Examples
///
/// A file in memory (a test's stand-in for a disk):
///
/// ```
/// use shared_log_file::{PositionedFile, SharedFile};
/// use std::io;
/// use std::sync::{Arc, Mutex};
///
/// #[derive(Debug, Default, Clone)]
/// struct MemFile(Arc<Mutex<Vec<u8>>>);
///
/// impl PositionedFile for MemFile {
///     fn write_all_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
///         let mut bytes = self.0.lock().unwrap();
///         let (at, end) = (offset as usize, offset as usize + data.len());
///         if bytes.len() < end {
///             bytes.resize(end, 0);
///         }
///         bytes[at..end].copy_from_slice(data);
///         Ok(())
///     }
///     fn set_len(&self, len: u64) -> io::Result<()> {
///         self.0.lock().unwrap().resize(len as usize, 0);
///         Ok(())
///     }
///     fn sync_data(&self) -> io::Result<()> {
///         Ok(())
///     }
/// }
///
/// let mem = MemFile::default();
/// let shared = SharedFile::positional(mem.clone(), "in memory").unwrap();
/// // SAFETY: one writer.
/// unsafe { shared.write_at(2, b"cd") }.unwrap();
/// assert_eq!(*mem.0.lock().unwrap(), b"\0\0cd");
/// ```
pub trait PositionedFile: Send + Sync + fmt::Debug {
    /// Writes all of `data` at `offset`, extending the file as needed; the
    /// bytes are in the operating system (they survive a crash of the
    /// process) once it returns. Called from many threads at once, for
    /// ranges that do not overlap.
    ///
    /// # Errors
    ///
    /// Where the write fails; part of `data` may be written.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use shared_log_file::PositionedFile;
    ///
    /// let path = dir.path().join("log");
    /// let file = std::fs::File::create(&path).unwrap();
    /// PositionedFile::write_all_at(&file, b"cd", 2).unwrap(); // past the end: extends
    /// PositionedFile::write_all_at(&file, b"ab", 0).unwrap(); // any order
    /// assert_eq!(std::fs::read(&path).unwrap(), b"abcd");
    /// ```
    fn write_all_at(&self, data: &[u8], offset: u64) -> io::Result<()>;

    /// Cuts or extends the file to `len` bytes.
    ///
    /// # Errors
    ///
    /// Where the file cannot be resized.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use shared_log_file::PositionedFile;
    ///
    /// let path = dir.path().join("log");
    /// let file = std::fs::File::create(&path).unwrap();
    /// PositionedFile::write_all_at(&file, b"record", 0).unwrap();
    /// PositionedFile::set_len(&file, 3).unwrap(); // cuts
    /// assert_eq!(std::fs::read(&path).unwrap(), b"rec");
    /// PositionedFile::set_len(&file, 5).unwrap(); // extends with zeros
    /// assert_eq!(std::fs::read(&path).unwrap(), b"rec\0\0");
    /// ```
    fn set_len(&self, len: u64) -> io::Result<()>;

    /// Makes the file's data durable (`fdatasync`).
    ///
    /// # Errors
    ///
    /// Where the sync fails: what was written since the last sync may be
    /// lost.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use shared_log_file::PositionedFile;
    ///
    /// let path = dir.path().join("log");
    /// let file = std::fs::File::create(&path).unwrap();
    /// PositionedFile::write_all_at(&file, b"record", 0).unwrap();
    /// PositionedFile::sync_data(&file).unwrap(); // on the disk now, not only in the cache
    /// assert_eq!(std::fs::read(&path).unwrap(), b"record");
    /// ```
    fn sync_data(&self) -> io::Result<()>;

    /// Asks the operating system to start writing `len` bytes from
    /// `offset` back to the disk, without waiting (`sync_file_range(2)`
    /// with `SYNC_FILE_RANGE_WRITE` on Linux): a later
    /// [`sync_data`](Self::sync_data) then has less to write. It makes
    /// nothing durable. By default, nothing.
    ///
    /// # Errors
    ///
    /// Where the request fails; callers treat it as a hint and go on.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use shared_log_file::PositionedFile;
    ///
    /// let file = std::fs::File::create(dir.path().join("log")).unwrap();
    /// PositionedFile::write_all_at(&file, &[7; 8192], 0).unwrap();
    /// file.start_writeback(0, 4096).unwrap(); // the first page is on its way
    /// PositionedFile::sync_data(&file).unwrap(); // the rest, and the wait
    /// ```
    fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
        let _ = (offset, len);
        Ok(())
    }
}

#[cfg(unix)]
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

    #[cfg(target_os = "linux")]
    fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
            return Err(io::ErrorKind::InvalidInput.into()); // past what the call takes
        };
        // SAFETY: a plain system call on a descriptor `self` owns; it reads
        // no memory of ours.
        let started = unsafe {
            libc::sync_file_range(self.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
        };
        if started != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(windows)]
impl PositionedFile for File {
    fn write_all_at(&self, mut data: &[u8], mut offset: u64) -> io::Result<()> {
        use std::os::windows::fs::FileExt;
        while !data.is_empty() {
            match self.seek_write(data, offset) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    data = &data[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        File::set_len(self, len)
    }

    fn sync_data(&self) -> io::Result<()> {
        File::sync_data(self)
    }
}
