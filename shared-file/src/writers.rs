//! [`Writers`]: the safe way to share a [`SharedFile`] among threads that
//! reserve their bytes from one counter.

use std::io;
use std::sync::atomic::Ordering;

use crate::SharedFile;
use crate::sync::AtomicU64;

/// A [`SharedFile`] lent to threads that each [`write`](Self::write) a
/// record at the next free bytes, reserved with one atomic step: the
/// offsets are this type's to track, so nothing about them is left to the
/// caller and no `unsafe` is needed. From
/// [`SharedFile::writers`]; when it is dropped, the file's
/// [`size`](SharedFile::size) is the end of the last reservation.
///
/// The records land in the order their writers reserved them, which is not
/// the order the writes finish: after a crash the file may hold a later
/// record whole and an earlier one not at all (zeros) or torn. Where
/// records must also be numbered in that order, reserve the bytes with the
/// numbers (`ordered_publish::Sequencer::reserve_with_bytes`) and write with
/// [`SharedFile::write_at`].
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use shared_log_file::SharedFile;
///
/// let path = dir.path().join("log");
/// let mut log = SharedFile::create_positional(&path).unwrap();
/// log.append(b"HEAD").unwrap();
/// let writers = log.writers();
/// std::thread::scope(|s| {
///     for t in 0..4u8 {
///         let writers = &writers;
///         s.spawn(move || {
///             for i in 0..100u8 {
///                 writers.write(&[t, i]).unwrap();
///             }
///             writers.sync_data().unwrap(); // durable, while the others go on
///         });
///     }
/// });
/// drop(writers); // the size is now where the reservations end
/// log.append(b"TAIL").unwrap();
/// log.sync().unwrap();
/// assert_eq!(std::fs::read(&path).unwrap().len(), 4 + 4 * 100 * 2 + 4);
/// ```
#[derive(Debug)]
pub struct Writers<'a> {
    file: &'a SharedFile,
    /// Where the next reservation starts.
    next: AtomicU64,
}

impl<'a> Writers<'a> {
    pub(crate) fn new(file: &'a SharedFile) -> Self {
        Writers {
            file,
            next: AtomicU64::new(file.size()),
        }
    }

    /// Reserves the next `data.len()` bytes of the file and writes `data`
    /// there, beside the other writers; returns the offset. The write is in
    /// the operating system (it survives a crash of the process) once this
    /// returns.
    ///
    /// # Errors
    ///
    /// The write's, naming the file (a full disk, for a positional file),
    /// or a reservation that would pass 2^64 bytes. The bytes a failed
    /// write reserved stay reserved: they read as zeros, or as much of the
    /// record as reached the file.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("log");
    /// let mut log = shared_log_file::SharedFile::create_positional(&path).unwrap();
    /// let writers = log.writers();
    /// assert_eq!(writers.write(b"abc").unwrap(), 0);
    /// assert_eq!(writers.write(b"de").unwrap(), 3); // right after the first
    /// drop(writers);
    /// assert_eq!(log.size(), 5);
    /// ```
    pub fn write(&self, data: &[u8]) -> io::Result<u64> {
        let len = data.len() as u64;
        // Relaxed (both): the counter hands out disjoint ranges, which its
        // read-modify-write alone guarantees; the bytes themselves are
        // ordered by whoever later reads them (a join, then the owner).
        let at = self
            .next
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |at| {
                at.checked_add(len)
            })
            .map_err(|at| {
                io::Error::other(format!(
                    "{}: a write of {len} bytes at {at} would pass 2^64 bytes",
                    self.file.path().display()
                ))
            })?;
        // SAFETY: the compare-and-swap gave `at..at + len` to this call
        // alone, and the file is borrowed from its owner's `&mut` for as
        // long as `self` lives, so no append or sync runs meanwhile.
        unsafe { self.file.write_at(at, data) }?;
        Ok(at)
    }

    /// Makes every write that has returned durable (`fdatasync`), while
    /// the others go on: [`SharedFile::sync_data`].
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
    /// let mut log = shared_log_file::SharedFile::create_positional(&path).unwrap();
    /// let writers = log.writers();
    /// writers.write(b"record").unwrap();
    /// writers.sync_data().unwrap(); // the record survives a power loss
    /// assert_eq!(std::fs::read(&path).unwrap(), b"record");
    /// ```
    pub fn sync_data(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    /// Where the reservations end so far: the file's size once `self` is
    /// dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("log");
    /// let mut log = shared_log_file::SharedFile::create_positional(&path).unwrap();
    /// log.append(b"header").unwrap();
    /// let writers = log.writers();
    /// assert_eq!(writers.reserved(), 6); // they start at the file's size
    /// writers.write(b"abc").unwrap();
    /// assert_eq!(writers.reserved(), 9);
    /// ```
    pub fn reserved(&self) -> u64 {
        // Relaxed: a snapshot; `drop` reads it once the writers are done.
        self.next.load(Ordering::Relaxed)
    }
}

impl Drop for Writers<'_> {
    fn drop(&mut self) {
        // Every writer borrowed `self`, so all of them are done.
        self.file.set_size(self.reserved());
    }
}
