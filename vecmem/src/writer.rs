//! The per-batch write buffer: RocksDB's thread-local vector plus its
//! `BatchPostProcess`, as an RAII handle.

use std::fmt;
use std::mem::ManuallyDrop;

use crate::batches::MIN_LISTED_BATCH;
use crate::entry::Entry;
use crate::{Comparator, VecMem};

/// A batch of entries for a [`VecMem`], published at once: with one CAS (16
/// entries or more) or under one lock of the thread's write lane.
///
/// [`insert`](Writer::insert) copies the entry into the memtable's arena and
/// keeps a pointer in this writer's own buffer; no lock is taken. The batch
/// becomes visible, all at once, on [`finish`](Writer::finish) or on drop.
/// Make one per batch per thread (`insert` takes `&mut self`). Batches of
/// concurrent writers land in the order they finish, which no reader can
/// observe: readers see the entries sorted.
///
/// # Panics
///
/// Publishing panics if the memtable was marked read-only in the meantime
/// (unless the thread is already panicking, in which case the batch is
/// dropped unpublished).
///
/// # Examples
///
/// ```
/// use vecmem::{BytewiseComparator, VecMem};
///
/// let mem = VecMem::new(BytewiseComparator);
/// std::thread::scope(|s| {
///     for t in 0..4u8 {
///         let mem = &mem;
///         s.spawn(move || {
///             let mut writer = mem.writer();
///             for i in 0..100u8 {
///                 writer.insert(&[t, i]);
///             }
///             // dropped here: 100 entries published with one CAS
///         });
///     }
/// });
/// assert_eq!(mem.len(), 400);
/// ```
pub struct Writer<'a, C: Comparator> {
    mem: &'a VecMem<C>,
    /// The batch's first entry, kept inline so that a batch of one does not
    /// allocate a buffer.
    first: Option<Entry>,
    rest: Vec<Entry>,
}

impl<'a, C: Comparator> Writer<'a, C> {
    #[inline]
    pub(crate) fn new(mem: &'a VecMem<C>) -> Self {
        Self {
            mem,
            first: None,
            rest: Vec::new(),
        }
    }

    /// Copies `entry` into the memtable's arena and adds it to this batch.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// let mut writer = mem.writer();
    /// writer.insert(b"k");
    /// assert_eq!(writer.len(), 1);
    /// ```
    #[inline]
    pub fn insert(&mut self, entry: &[u8]) {
        let entry = Entry::copy_into(&self.mem.arena, entry);
        self.push(entry);
    }

    /// Adds an entry of `len` bytes that `fill` writes straight into the
    /// memtable's arena (the bytes start zeroed): no intermediate buffer,
    /// for callers that encode their entries, as an engine does with its
    /// internal keys.
    ///
    /// # Panics
    ///
    /// If `fill` panics (the entry is then not added; its bytes stay unused
    /// in the arena).
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// let mut writer = mem.writer();
    /// writer.insert_with(3, |buf| buf.copy_from_slice(b"key"));
    /// writer.finish();
    /// let mut cursor = mem.cursor();
    /// cursor.seek_to_first();
    /// assert_eq!(cursor.key(), b"key");
    /// ```
    #[inline]
    pub fn insert_with(&mut self, len: usize, fill: impl FnOnce(&mut [u8])) {
        let entry = Entry::fill_into(&self.mem.arena, len, fill);
        self.push(entry);
    }

    #[inline]
    fn push(&mut self, entry: Entry) {
        if self.first.is_none() {
            self.first = Some(entry);
        } else {
            if self.rest.capacity() == 0 {
                self.rest = spare::take();
            }
            self.rest.push(entry);
        }
    }

    /// Entries in this batch, not yet published.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// let mut writer = mem.writer();
    /// writer.insert(b"a");
    /// writer.insert(b"b");
    /// assert_eq!(writer.len(), 2);
    /// assert_eq!(mem.len(), 0); // not published yet
    /// writer.finish();
    /// assert_eq!(mem.len(), 2);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.rest.len()
    }

    /// Whether this batch holds no entry.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// let mut writer = mem.writer();
    /// assert!(writer.is_empty());
    /// writer.insert(b"k");
    /// assert!(!writer.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// Publishes the batch and updates [`VecMem::len`]: a batch of 16 entries
    /// or more gives its buffer to the memtable with one CAS, a smaller one
    /// is appended to the thread's write lane under one acquisition of that
    /// lane's lock. Dropping the writer
    /// does the same; `finish` makes the point of publication explicit.
    ///
    /// # Panics
    ///
    /// If the memtable is read-only and the batch is not empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// let mut writer = mem.writer();
    /// writer.insert(b"k");
    /// writer.finish();
    /// assert_eq!(mem.len(), 1);
    /// ```
    #[inline(always)]
    pub fn finish(self) {
        // Taken apart rather than dropped, so that a batch of one costs what
        // `VecMem::insert` costs: inlined, with the append of a single entry
        // and nothing else (a batch never took a buffer unless it holds two
        // entries or more), while larger batches call out.
        ManuallyDrop::new(self).publish();
    }

    /// Publishes what the writer holds and leaves it empty: the body of
    /// both [`finish`](Self::finish) and `drop`.
    #[inline(always)]
    fn publish(&mut self) {
        if self.rest.capacity() != 0 {
            let rest = std::mem::take(&mut self.rest);
            Self::finish_batch(self.mem, self.first.take(), rest);
        } else if let Some(first) = self.first.take() {
            self.mem.append(first, &[]);
        }
    }

    /// Publishes a batch that took a buffer. `rest` is a local here: a panic
    /// while publishing still frees it.
    #[inline(never)]
    fn finish_batch(mem: &VecMem<C>, first: Option<Entry>, mut rest: Vec<Entry>) {
        let Some(first) = first else {
            return spare::give_back(rest);
        };
        if rest.len() + 1 >= MIN_LISTED_BATCH {
            // The buffer goes to the memtable; this thread's next batch
            // gets one of this size from the start.
            spare::expect(rest.len() + 1);
            rest.push(first);
            mem.push_batch(rest);
        } else {
            mem.append(first, &rest);
            spare::give_back(rest);
        }
    }
}

impl<C: Comparator> Drop for Writer<'_, C> {
    #[inline]
    fn drop(&mut self) {
        if self.first.is_some() && std::thread::panicking() && self.mem.is_read_only() {
            // Publishing would panic again and abort; an unwinding batch was
            // never acknowledged, so dropping it loses nothing promised.
            return;
        }
        self.publish();
    }
}

/// The capacity of this thread's spare writer buffer.
#[cfg(test)]
pub(crate) fn spare_capacity_for_tests() -> usize {
    spare::capacity()
}

/// Each thread keeps the buffer of its last finished writer, so that a
/// thread writing batch after batch allocates a buffer once, not per batch
/// (RocksDB's thread-local vector).
mod spare {
    use crate::entry::Entry;

    /// Buffers above this many entries are freed rather than kept.
    const MAX_KEPT: usize = 1 << 12;

    #[cfg(not(loom))]
    std::thread_local! {
        static SPARE: std::cell::Cell<Vec<Entry>> = const { std::cell::Cell::new(Vec::new()) };
        static EXPECTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// This thread's spare buffer (empty), or a new one of the size that
    /// [`expect`] last asked for.
    #[inline]
    pub(super) fn take() -> Vec<Entry> {
        #[cfg(not(loom))]
        if let Ok(buffer) = SPARE.try_with(std::cell::Cell::take) {
            if buffer.capacity() != 0 {
                return buffer;
            }
            let expected = EXPECTED.try_with(std::cell::Cell::get).unwrap_or(0);
            return Vec::with_capacity(expected);
        }
        Vec::new()
    }

    /// Remembers that this thread's batches hold about `entries` entries
    /// (at most [`MAX_KEPT`]): a listed batch leaves no buffer behind, so
    /// the next one is allocated at that size at once, not grown by
    /// doubling.
    #[inline]
    pub(super) fn expect(entries: usize) {
        #[cfg(not(loom))]
        let _ = EXPECTED.try_with(|expected| expected.set(entries.min(MAX_KEPT)));
        #[cfg(loom)]
        let _ = entries;
    }

    /// The capacity of this thread's spare buffer.
    #[cfg(test)]
    pub(super) fn capacity() -> usize {
        let buffer = take();
        let capacity = buffer.capacity();
        give_back(buffer);
        capacity
    }

    /// Keeps `buffer` (emptied) as this thread's spare.
    #[inline]
    pub(super) fn give_back(mut buffer: Vec<Entry>) {
        // Checked inline: a batch of one never had a buffer to give back.
        if buffer.capacity() == 0 || buffer.capacity() > MAX_KEPT {
            return;
        }
        buffer.clear();
        #[cfg(not(loom))]
        let _ = SPARE.try_with(|spare| spare.set(buffer));
    }
}

impl<C: Comparator> fmt::Debug for Writer<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Writer")
            .field("pending", &self.len())
            .finish_non_exhaustive()
    }
}
