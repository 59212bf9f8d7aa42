//! [`StripedView`]: a striped file read back as one, its primary's bytes
//! with each stripe entry's bytes over them.

use std::fmt;
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use super::{ENTRY_HEADER_LEN, STRIPE_MAGIC, header_crc, stripe_path};
use crate::file::annotate;

/// A file read at offsets: what a [`StripedView`] reads the primary file
/// and the stripes through. Implemented for [`File`] and for bytes in
/// memory; implement it for a file of your own (a test file system's).
///
/// # Examples
///
/// ```
/// use shared_log_file::ReadAt;
///
/// let bytes = b"striped".to_vec();
/// let mut buf = [0u8; 3];
/// assert_eq!(bytes.read_at(4, &mut buf).unwrap(), 3);
/// assert_eq!(&buf, b"ped");
/// assert_eq!(bytes.size().unwrap(), 7);
/// ```
pub trait ReadAt {
    /// Reads into `buf` from `offset`; returns how many bytes were read,
    /// fewer than asked only at the end of the file.
    ///
    /// # Errors
    ///
    /// Where the read fails.
    ///
    /// # Examples
    ///
    /// ```
    /// use shared_log_file::ReadAt;
    /// let mut buf = [0u8; 4];
    /// assert_eq!(b"ab".to_vec().read_at(1, &mut buf).unwrap(), 1); // the end
    /// ```
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;

    /// The file's length in bytes.
    ///
    /// # Errors
    ///
    /// Where it cannot be known.
    ///
    /// # Examples
    ///
    /// ```
    /// use shared_log_file::ReadAt;
    /// assert_eq!(vec![0u8; 5].size().unwrap(), 5);
    /// ```
    fn size(&self) -> io::Result<u64>;
}

impl ReadAt for Vec<u8> {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.len());
        let n = buf.len().min(self.len() - start);
        buf[..n].copy_from_slice(&self[start..start + n]);
        Ok(n)
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.len() as u64)
    }
}

#[cfg(any(unix, windows))]
impl ReadAt for File {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            #[cfg(unix)]
            let read =
                std::os::unix::fs::FileExt::read_at(self, &mut buf[done..], offset + done as u64);
            #[cfg(windows)]
            let read = std::os::windows::fs::FileExt::seek_read(
                self,
                &mut buf[done..],
                offset + done as u64,
            );
            match read {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }
}

/// Where the scan of one stripe stopped.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use shared_log_file::{SharedFile, StripedView};
///
/// let path = dir.path().join("wal");
/// let shared = SharedFile::create_striped(&path, 2).unwrap();
/// // SAFETY: one writer.
/// unsafe { shared.write_at(0, b"record") }.unwrap();
/// shared.set_size(6);
/// drop(shared);
/// let view = StripedView::open(&path).unwrap();
/// // A lone writer wrote into the primary file: no entries in the stripes.
/// let entries: u64 = view.stripe_ends().iter().map(|e| e.entries).sum();
/// assert_eq!(entries, 0);
/// assert!(view.stripe_ends().iter().all(|e| e.valid_len == e.file_len)); // nothing torn
/// assert_eq!(view.read_to_vec().unwrap(), b"record");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StripeEnd {
    /// Entries read from the stripe.
    pub entries: u64,
    /// Where the last whole entry header's entry ends: the scan stopped
    /// there.
    pub valid_len: u64,
    /// The stripe file's length. Longer than `valid_len` where a crash
    /// tore an entry's header (or its data ran past the end: then the
    /// entry is read as far as it goes), or where damage stopped the scan.
    pub file_len: u64,
}

/// One entry: `len` bytes belonging at `offset`, found in stripe `stripe`
/// at `at`.
#[derive(Debug, Clone, Copy)]
struct Entry {
    offset: u64,
    len: u64,
    stripe: usize,
    at: u64,
}

/// A striped file ([`SharedFile::striped`](crate::SharedFile::striped))
/// read back as one: the primary file's bytes, with the bytes of every
/// stripe entry at their offsets. A stripe is read up to its first torn or
/// damaged entry header; an entry whose data runs past its stripe's end
/// (a torn write) reads as far as it goes, then zeros. After a crash the
/// view holds, as a positional file would, any combination of the writes
/// that reached the operating system; holes read as zeros.
///
/// The view keeps an index of the entries (32 bytes each) and reads their
/// bytes from the files as asked, each stripe a window of 64 KiB at a
/// time: a reader that reads the file in order finds each stripe's entries
/// one after another, so one read of a stripe serves many entries.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use shared_log_file::{SharedFile, StripedView};
///
/// let path = dir.path().join("wal");
/// let mut log = SharedFile::create_striped(&path, 2).unwrap();
/// log.append(b"HEAD:").unwrap(); // the owner's bytes go to the primary file
/// let writers = log.writers();
/// std::thread::scope(|s| {
///     s.spawn(|| writers.write(b"one;").unwrap()); // each into a stripe
///     s.spawn(|| writers.write(b"two;").unwrap());
/// });
/// drop(writers);
/// log.append(b"TAIL").unwrap();
/// log.sync().unwrap();
/// drop(log);
///
/// let view = StripedView::open(&path).unwrap();
/// let bytes = view.read_to_vec().unwrap();
/// assert!(bytes == b"HEAD:one;two;TAIL" || bytes == b"HEAD:two;one;TAIL");
/// ```
pub struct StripedView<R> {
    primary: R,
    primary_len: u64,
    stripes: Vec<R>,
    /// Sorted by offset; no two overlap.
    entries: Vec<Entry>,
    len: u64,
    ends: Vec<StripeEnd>,
    /// The window of each stripe read last.
    windows: Vec<Mutex<Window>>,
}

/// Bytes of a stripe from `at` on, read ahead of the entries asked for.
#[derive(Default)]
struct Window {
    at: u64,
    bytes: Vec<u8>,
}

/// How many bytes of a stripe one read brings into its window (small in
/// tests, to need several).
pub(super) const WINDOW: usize = if cfg!(test) { 4 << 10 } else { 64 << 10 };

impl<R> fmt::Debug for StripedView<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StripedView")
            .field("len", &self.len)
            .field("primary_len", &self.primary_len)
            .field("entries", &self.entries.len())
            .field("ends", &self.ends)
            .finish_non_exhaustive()
    }
}

#[cfg(any(unix, windows))]
impl StripedView<File> {
    /// Opens the striped file at `path`: the primary there, and its stripes
    /// at [`stripe_path`]`(path, 1)`, `2`, ... up to the first missing one.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), and where a file cannot be opened, naming it.
    ///
    /// # Examples
    ///
    /// See also [`StripedView`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use shared_log_file::{SharedFile, StripedView};
    ///
    /// let path = dir.path().join("wal");
    /// let mut log = SharedFile::create_striped(&path, 3).unwrap();
    /// log.writers().write(b"record").unwrap();
    /// drop(log);
    /// let view = StripedView::open(&path).unwrap();
    /// assert_eq!(view.stripe_ends().len(), 3);
    /// assert_eq!(view.read_to_vec().unwrap(), b"record");
    /// ```
    pub fn open(path: &Path) -> io::Result<StripedView<File>> {
        let open = |p: &Path| File::open(p).map_err(|e| annotate(e, "open", p));
        let primary = open(path)?;
        let mut stripes = Vec::new();
        loop {
            let p = stripe_path(path, stripes.len() + 1);
            match File::open(&p) {
                Ok(f) => stripes.push(f),
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                Err(e) => return Err(annotate(e, "open", &p)),
            }
        }
        StripedView::new(primary, stripes).map_err(|e| annotate(e, "read", path))
    }
}

/// How many bytes a stripe's scan reads at a time.
const SCAN_CHUNK: usize = 64 << 10;

impl<R: ReadAt> StripedView<R> {
    /// The view of the primary file `primary` and its `stripes`, in any
    /// order. Reads every stripe's entry headers.
    ///
    /// # Errors
    ///
    /// Where a read fails; [`io::ErrorKind::InvalidData`] for a stripe
    /// that does not start with a stripe's magic (an empty one, or one
    /// of zeros, is a stripe that a crash left before its first write),
    /// or for two entries that claim the same bytes (whole entry headers
    /// with matching checksums cannot do that but by damage).
    ///
    /// # Examples
    ///
    /// ```
    /// use shared_log_file::StripedView;
    /// use std::io;
    ///
    /// // A primary of 4 bytes and one stripe that a crash left empty.
    /// let view = StripedView::new(b"head".to_vec(), vec![Vec::new()]).unwrap();
    /// assert_eq!(view.read_to_vec().unwrap(), b"head");
    /// // A stripe that is not one.
    /// let err = StripedView::new(Vec::new(), vec![b"not a stripe".to_vec()]).unwrap_err();
    /// assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    /// ```
    pub fn new(primary: R, stripes: Vec<R>) -> io::Result<StripedView<R>> {
        let primary_len = primary.size()?;
        let mut entries = Vec::new();
        let mut ends = Vec::with_capacity(stripes.len());
        for (i, stripe) in stripes.iter().enumerate() {
            ends.push(scan(stripe, i, &mut entries)?);
        }
        entries.sort_unstable_by_key(|e| e.offset);
        for pair in entries.windows(2) {
            if pair[0].offset + pair[0].len > pair[1].offset {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "stripes {} and {} both hold bytes at offset {}",
                        pair[0].stripe + 1,
                        pair[1].stripe + 1,
                        pair[1].offset
                    ),
                ));
            }
        }
        let entries_end = entries.last().map_or(0, |e| e.offset + e.len);
        Ok(StripedView {
            primary,
            primary_len,
            entries,
            len: primary_len.max(entries_end),
            ends,
            windows: (0..stripes.len()).map(|_| Mutex::default()).collect(),
            stripes,
        })
    }

    /// The file's length: the primary's, or the end of the furthest entry
    /// if that is further.
    ///
    /// # Examples
    ///
    /// ```
    /// use shared_log_file::StripedView;
    /// let view = StripedView::new(b"head".to_vec(), Vec::new()).unwrap();
    /// assert_eq!(view.len(), 4);
    /// assert!(!view.is_empty());
    /// ```
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use shared_log_file::StripedView;
    /// assert!(StripedView::new(Vec::new(), vec![Vec::new()]).unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where each stripe's scan stopped, in the order the stripes were
    /// given.
    ///
    /// # Examples
    ///
    /// See [`StripeEnd`].
    ///
    /// ```
    /// use shared_log_file::StripedView;
    /// let view = StripedView::new(Vec::new(), vec![Vec::new(), Vec::new()]).unwrap();
    /// assert_eq!(view.stripe_ends().len(), 2);
    /// ```
    pub fn stripe_ends(&self) -> &[StripeEnd] {
        &self.ends
    }

    /// Reads into `buf` from `offset`; returns how many bytes were read,
    /// fewer than asked only at the end of the view. Bytes that no file
    /// holds read as zeros.
    ///
    /// # Errors
    ///
    /// Where a read of the primary or a stripe fails.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use shared_log_file::{SharedFile, StripedView};
    ///
    /// let path = dir.path().join("wal");
    /// let shared = SharedFile::create_striped(&path, 1).unwrap();
    /// // SAFETY: one writer.
    /// unsafe { shared.write_at(4, b"late") }.unwrap(); // nothing below it yet
    /// drop(shared);
    /// let view = StripedView::open(&path).unwrap();
    /// let mut buf = [0xff; 8];
    /// assert_eq!(view.read_at(0, &mut buf).unwrap(), 8);
    /// assert_eq!(&buf, b"\0\0\0\0late"); // a hole reads as zeros
    /// ```
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let want = (buf.len() as u64).min(self.len.saturating_sub(offset)) as usize;
        let mut done = 0;
        // The first entry that ends past `offset`.
        let mut next = self.entries.partition_point(|e| e.offset + e.len <= offset);
        while done < want {
            let at = offset + done as u64;
            let out = &mut buf[done..want];
            let n = match self.entries.get(next) {
                Some(e) if e.offset <= at => {
                    let skip = at - e.offset;
                    let n = out.len().min((e.len - skip) as usize);
                    self.read_stripe(e.stripe, e.at + skip, &mut out[..n])?;
                    next += 1;
                    n
                }
                entry => {
                    let gap_end = entry.map_or(u64::MAX, |e| e.offset);
                    let n = out
                        .len()
                        .min((gap_end - at).min(usize::MAX as u64) as usize);
                    let from_primary = if at < self.primary_len {
                        let n = n.min((self.primary_len - at) as usize);
                        read_fully(&self.primary, at, &mut out[..n])?;
                        n
                    } else {
                        0
                    };
                    out[from_primary..n].fill(0);
                    n
                }
            };
            done += n;
        }
        Ok(done)
    }

    /// Reads all of `buf` from stripe `index` at `at`, through its window:
    /// bytes the window holds are copied, others read with the window's
    /// next 64 KiB (a read as long as a window goes straight to `buf`).
    fn read_stripe(&self, index: usize, at: u64, buf: &mut [u8]) -> io::Result<()> {
        let stripe = &self.stripes[index];
        if buf.len() >= WINDOW {
            return read_fully(stripe, at, buf);
        }
        // A cache, no invariant between its fields across a panic.
        let mut window = self.windows[index]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let Window { at: from, bytes } = &mut *window;
        let held = at
            .checked_sub(*from)
            .and_then(|skip| usize::try_from(skip).ok())
            .filter(|&skip| skip + buf.len() <= bytes.len());
        let skip = match held {
            Some(skip) => skip,
            None => {
                bytes.resize(WINDOW, 0);
                match stripe.read_at(at, bytes) {
                    Ok(n) => bytes.truncate(n),
                    Err(e) => {
                        // Nothing held: a later read tries again.
                        bytes.clear();
                        return Err(e);
                    }
                }
                *from = at;
                0
            }
        };
        let Some(held) = bytes.get(skip..skip + buf.len()) else {
            return Err(shrank(at));
        };
        buf.copy_from_slice(held);
        Ok(())
    }

    /// The whole file's bytes.
    ///
    /// # Errors
    ///
    /// As [`read_at`](Self::read_at); [`io::ErrorKind::OutOfMemory`] for a
    /// view longer than memory can be addressed.
    ///
    /// # Examples
    ///
    /// See [`StripedView`].
    ///
    /// ```
    /// use shared_log_file::StripedView;
    /// let view = StripedView::new(b"only the primary".to_vec(), Vec::new()).unwrap();
    /// assert_eq!(view.read_to_vec().unwrap(), b"only the primary");
    /// ```
    pub fn read_to_vec(&self) -> io::Result<Vec<u8>> {
        let len = usize::try_from(self.len)
            .map_err(|_| io::Error::new(io::ErrorKind::OutOfMemory, "a view past memory"))?;
        let mut bytes = vec![0; len];
        let n = self.read_at(0, &mut bytes)?;
        bytes.truncate(n);
        Ok(bytes)
    }
}

/// Reads all of `buf` at `offset` from `file`, or fails: for ranges the
/// index found inside the file.
fn read_fully<R: ReadAt>(file: &R, offset: u64, buf: &mut [u8]) -> io::Result<()> {
    let n = file.read_at(offset, buf)?;
    if n < buf.len() {
        return Err(shrank(offset));
    }
    Ok(())
}

/// The error of a read that found less than the index said was there.
fn shrank(offset: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("a file shrank while it was read (at {offset})"),
    )
}

/// Reads the entry headers of stripe `index` into `entries`, up to the
/// first that is torn or damaged.
fn scan<R: ReadAt>(stripe: &R, index: usize, entries: &mut Vec<Entry>) -> io::Result<StripeEnd> {
    let file_len = stripe.size()?;
    let mut end = StripeEnd {
        entries: 0,
        valid_len: 0,
        file_len,
    };
    let mut magic = [0u8; STRIPE_MAGIC.len()];
    let have = stripe.read_at(0, &mut magic)?;
    if have < magic.len() || magic.iter().all(|&b| b == 0) {
        // Created, and the crash came before its first write reached it.
        return Ok(end);
    }
    if magic != STRIPE_MAGIC {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("stripe {} does not start as a stripe does", index + 1),
        ));
    }
    let mut pos = magic.len() as u64;
    end.valid_len = pos;
    // A window of the stripe, read a chunk at a time.
    let mut chunk = vec![0u8; SCAN_CHUNK];
    let (mut chunk_at, mut chunk_len) = (0u64, 0usize);
    while pos + ENTRY_HEADER_LEN as u64 <= file_len {
        if pos < chunk_at || pos + ENTRY_HEADER_LEN as u64 > chunk_at + chunk_len as u64 {
            chunk_at = pos;
            chunk_len = stripe.read_at(pos, &mut chunk)?;
            if chunk_len < ENTRY_HEADER_LEN {
                break;
            }
        }
        let h = (pos - chunk_at) as usize;
        let header = &chunk[h..h + ENTRY_HEADER_LEN];
        let stored = u32::from_le_bytes(header[12..].try_into().expect("4 bytes"));
        if header_crc(&header[..12]) != stored {
            break;
        }
        let offset = u64::from_le_bytes(header[..8].try_into().expect("8 bytes"));
        let len = u64::from(u32::from_le_bytes(
            header[8..12].try_into().expect("4 bytes"),
        ));
        let data_at = pos + ENTRY_HEADER_LEN as u64;
        if offset.checked_add(len).is_none() {
            break;
        }
        // A torn write: as much of its data as reached the stripe.
        let present = len.min(file_len - data_at);
        if present > 0 {
            entries.push(Entry {
                offset,
                len: present,
                stripe: index,
                at: data_at,
            });
        }
        end.entries += 1;
        pos = data_at + len;
        end.valid_len = pos.min(file_len);
    }
    Ok(end)
}
