//! The sort for readers: a cursor over a mutable memtable sorts a private
//! copy of the entries; the first cursor over a read-only one sorts them once,
//! in place, and every later cursor shares that sorted vector.

use std::sync::Arc;

use rayon::slice::ParallelSliceMut;

use crate::entry::Entry;
use crate::sync::Ordering;
use crate::{ArcCursor, Comparator, Cursor, VecMem};

impl<C: Comparator + Sync> VecMem<C> {
    /// A cursor over the entries published so far, sorted; it starts invalid
    /// (call a `seek*` first). On a mutable memtable it is a private snapshot:
    /// later inserts do not show up in it.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// for key in [b"c", b"a", b"b"] {
    ///     mem.insert(key);
    /// }
    /// let mut cursor = mem.cursor();
    /// cursor.seek_to_last();
    /// assert_eq!(cursor.key(), b"c");
    /// cursor.prev();
    /// assert_eq!(cursor.key(), b"b");
    /// ```
    pub fn cursor(&self) -> Cursor<&Self> {
        Cursor::new(self, self.sorted_entries())
    }

    /// Like [`cursor`](VecMem::cursor), but owning a share of the memtable,
    /// so that the cursor can outlive the borrow it was made from.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use vecmem::{BytewiseComparator, VecMem};
    ///
    /// let mem = Arc::new(VecMem::new(BytewiseComparator));
    /// mem.insert(b"k");
    /// let mut cursor = mem.cursor_arc();
    /// drop(mem);
    /// cursor.seek_to_first();
    /// assert_eq!(cursor.key(), b"k");
    /// ```
    pub fn cursor_arc(self: &Arc<Self>) -> ArcCursor<C> {
        Cursor::new(Arc::clone(self), self.sorted_entries())
    }

    /// The published entries, sorted: shared if read-only, else a copy.
    #[inline]
    fn sorted_entries(&self) -> Arc<Vec<Entry>> {
        {
            let shared = self.read_shared();
            if let Some(sorted) = &shared.sorted {
                return Arc::clone(sorted);
            }
            // Relaxed: stored under the write lock, which the read lock
            // held here orders before or after this whole block.
            if !self.read_only.load(Ordering::Relaxed) {
                // Acquire: as in `len`, so the copy holds at least what was
                // counted; later batches may slip in, whole.
                let mut copy = Vec::with_capacity(self.len());
                // Each lane under its lock, briefly: a batch in a lane is
                // there whole or not yet. (While mutable, `shared.entries`
                // is empty.)
                for lane in self.lanes.iter() {
                    copy.extend_from_slice(&lane.entries.lock());
                }
                self.for_each_listed_batch(&shared, |batch| copy.extend_from_slice(batch));
                drop(shared);
                self.sort(&mut copy);
                return Arc::new(copy);
            }
        }
        self.sort_shared_once()
    }

    /// The first reader of a read-only memtable: gathers the lanes and the
    /// listed batches into the shared vector and sorts it in place under the
    /// write lock, so concurrent first readers wait for that one sort and
    /// then share it.
    #[cold]
    fn sort_shared_once(&self) -> Arc<Vec<Entry>> {
        let mut shared = self.write_shared();
        if let Some(sorted) = &shared.sorted {
            return Arc::clone(sorted);
        }
        // The lanes' entries and the listed batches join the shared vector
        // first (the lanes and the list are closed: no batch gets in after
        // `mark_read_only`), then the sort runs in place and the vector
        // moves out after it: a panicking comparator leaves every entry in
        // `shared.entries`.
        let entries = &mut shared.entries;
        entries.reserve_exact(self.len().saturating_sub(entries.len()));
        for lane in self.lanes.iter() {
            let mut lane_entries = lane.entries.lock();
            entries.extend_from_slice(&lane_entries);
            *lane_entries = Vec::new();
            // Relaxed: a statistic; frozen, so no writer races it.
            lane.bytes.store(0, Ordering::Relaxed);
        }
        // SAFETY: this thread holds the write lock (`shared`).
        unsafe { self.take_listed_batches(|batch| entries.extend_from_slice(&batch)) };
        // The entry counts stay as they are: `len` adds them up, and moving
        // a count from one to another could show a reader both. The bytes
        // move (the lanes' and the list's vectors are freed): a reader may
        // see the sum in passing, which an estimate allows.
        // Relaxed (both): statistics; frozen, so no writer races these.
        self.listed.bytes.store(0, Ordering::Relaxed);
        self.vector_bytes
            .store(entries.capacity() * size_of::<Entry>(), Ordering::Relaxed);
        self.sort(&mut shared.entries);
        let sorted = Arc::new(std::mem::take(&mut shared.entries));
        shared.sorted = Some(Arc::clone(&sorted));
        sorted
    }

    fn sort(&self, entries: &mut [Entry]) {
        // Relaxed: a statistic for tests and reports.
        self.sorts.fetch_add(1, Ordering::Relaxed);
        let by_key = |a: &Entry, b: &Entry| {
            // SAFETY: every entry in this memtable's vectors was copied into
            // `self.arena`, which lives as long as `self`, borrowed here.
            let (a, b) = unsafe { (a.bytes(), b.bytes()) };
            self.comparator.compare(a, b)
        };
        if entries.len() >= self.parallel_sort_threshold {
            entries.par_sort_unstable_by(by_key);
        } else {
            entries.sort_unstable_by(by_key);
        }
    }
}
