//! A vector memtable: writers append, readers sort once.
//!
//! # What it is
//!
//! [`VecMem`] stores byte-string entries, ordered by a [`Comparator`], the way
//! RocksDB's `VectorRep` does: an insert copies the entry into a
//! [`ConcurrentArena`] and appends a pointer to an *unsorted* vector; the
//! vector is sorted only when somebody reads it. Concurrent writers (RocksDB
//! PR 13675) go through a [`Writer`]: it collects a batch in a buffer of its
//! own, with no shared state touched but the arena, and publishes the whole
//! batch **once** when it is finished or dropped: a batch of 16 entries or
//! more by pushing its buffer onto a lock-free list (one CAS, no waiting), a
//! smaller one (and a single [`insert`](VecMem::insert)) by copying it into
//! the thread's *write lane*. A memtable has a few lanes per CPU, each a
//! small lock around a vector, with its counters, on a cache line of its
//! own; a thread keeps to one lane (picked round-robin when it first writes,
//! changed only if it finds the lane held), so threads writing at once lock
//! and write different lines, and nothing shared is written per batch. The
//! lanes are PR 13675's thread-local vectors made to last across batches.
//! Once [`VecMem::mark_read_only`] freezes the memtable, the first reader
//! gathers the lanes and the batches into one vector, sorts it (in parallel
//! with rayon when it is large) and every later reader shares that sorted
//! vector.
//!
//! # The calls
//!
//! | to | call |
//! |---|---|
//! | insert one entry | [`insert`](VecMem::insert), or [`insert_with(len, fill)`](VecMem::insert_with) to encode it in place |
//! | insert a batch | [`writer`](VecMem::writer), then [`Writer::insert`] / [`Writer::insert_with`] and [`Writer::finish`] |
//! | freeze | [`mark_read_only`](VecMem::mark_read_only) |
//! | read | [`cursor`](VecMem::cursor) (borrowing) or [`cursor_arc`](VecMem::cursor_arc) (an [`ArcCursor`], owning an `Arc` of the memtable) |
//! | measure | [`len`](VecMem::len), [`is_empty`](VecMem::is_empty), [`memory_usage`](VecMem::memory_usage) |
//!
//! Both cursors are one type, [`Cursor<M>`](Cursor), generic over how it
//! holds the memtable (`&VecMem` or `Arc<VecMem>`). The workspace's other
//! memtable, `inline-skiplist`, uses the same names for the same
//! operations. One difference: a fresh `VecMem` cursor is invalid until a
//! `seek*`, while a skiplist cursor starts on the first entry.
//!
//! # When to use it
//!
//! For bulk loads: many writes, then one ordered pass (a flush), few or no
//! reads while writing. An append is a copy and a push, where a skiplist
//! insert is a search through cache-missing nodes; the sort at the end costs
//! `O(n log n)` once, on contiguous memory, and can use every core.
//!
//! It is the wrong choice when the memtable is read while it is written:
//! every cursor over a still-mutable `VecMem` copies and sorts the whole
//! vector.
//!
//! # Alternatives
//!
//! - **`Mutex<Vec<_>>`** (std or `parking_lot`), pushing each entry: the same
//!   data layout, but one lock acquisition per entry, so concurrent writers
//!   queue on the lock; `VecMem` takes no shared lock to write, only its
//!   thread's lane lock, once per batch.
//! - **A concurrent skiplist** (this workspace's `inline-skiplist`,
//!   `crossbeam-skiplist`): always sorted, so reads during writes are cheap,
//!   but every insert pays a search; use it for an engine's ordinary memtable.
//! - **RocksDB's `VectorRep`** (through `rust-rocksdb`'s
//!   `MemtableFactory::Vector`): the original, inside RocksDB, not usable as a
//!   Rust data structure.
//!
//! # Example
//!
//! ```
//! use vecmem::{BytewiseComparator, VecMem};
//!
//! let mem = VecMem::new(BytewiseComparator);
//! std::thread::scope(|s| {
//!     for t in 0..2u8 {
//!         let mem = &mem;
//!         s.spawn(move || {
//!             let mut writer = mem.writer();
//!             for i in 0..3u8 {
//!                 writer.insert(&[b'a' + i, b'0' + t]);
//!             }
//!             writer.finish(); // one lock of this thread's lane for the batch
//!         });
//!     }
//! });
//! mem.mark_read_only();
//!
//! let mut cursor = mem.cursor(); // the first reader sorts, once
//! cursor.seek(b"b");
//! let mut keys = Vec::new();
//! while cursor.valid() {
//!     keys.push(cursor.key());
//!     cursor.next();
//! }
//! assert_eq!(keys, [b"b0", b"b1", b"c0", b"c1"]);
//! ```
//!
//! # Duplicates
//!
//! `VecMem` does not look for duplicates: inserting two entries that compare
//! equal stores both, and a scan yields both, next to each other, in an
//! unspecified order (the sort is unstable). An LSM engine never inserts the
//! same internal key twice (keys carry a unique sequence number), so it never
//! sees this.

mod batches;
mod cursor;
mod entry;
mod lane;
mod sorted;
mod sync;
mod writer;

use std::fmt;
use std::sync::Arc;

use crossbeam_utils::CachePadded;

pub use arena::ConcurrentArena;
pub use cursor::{ArcCursor, Cursor};
pub use key_comparator::{BytewiseComparator, Comparator};
pub use writer::Writer;

#[cfg(loom)]
#[doc(hidden)]
pub use lane::mock_lane;

use batches::{FROZEN, ListedBatches};
use entry::Entry;
use lane::Lane;
use sync::{
    AtomicBool, AtomicPtr, AtomicUsize, MutexGuard, Ordering, RwLock, RwLockReadGuard,
    RwLockWriteGuard,
};

/// Vectors at least this long are sorted with rayon; shorter ones on the
/// calling thread. See [`VecMem::with_parallel_sort_threshold`].
///
/// # Examples
///
/// A memtable this long is sorted on rayon's pool, into the same order:
///
/// ```
/// use vecmem::{BytewiseComparator, DEFAULT_PARALLEL_SORT_THRESHOLD, VecMem};
/// let n = DEFAULT_PARALLEL_SORT_THRESHOLD as u32;
/// let mem = VecMem::new(BytewiseComparator);
/// for i in (0..n).rev() {
///     mem.insert(&i.to_be_bytes());
/// }
/// mem.mark_read_only();
/// let mut cursor = mem.cursor();
/// cursor.seek_to_first();
/// for i in 0..n {
///     assert_eq!(cursor.key(), i.to_be_bytes());
///     cursor.next();
/// }
/// assert!(!cursor.valid());
/// ```
pub const DEFAULT_PARALLEL_SORT_THRESHOLD: usize = 1 << 14;

/// A vector memtable: append concurrently, sort once, read in order.
///
/// See the [crate documentation](crate) for when to use it.
///
/// # Lifecycle
///
/// | state | [`insert`](VecMem::insert), [`Writer::finish`] | [`cursor`](VecMem::cursor) | leaves by |
/// |---|---|---|---|
/// | **mutable** | small batches: append to the thread's write lane under that lane's lock; batches of 16+: push onto the batch list (one CAS) | under a read lock, copies every lane (locking each briefly) and the listed batches, sorts the copy privately | [`mark_read_only`](VecMem::mark_read_only) (sets the flag, tags the list, passes through every lane lock) → read-only |
/// | **read-only** | panic (programmer error) | takes the write lock, moves the lanes' entries and the listed batches into one vector, sorts it in place, publishes it | the first cursor → sorted |
/// | **sorted** | panic (programmer error) | shares the sorted vector (an `Arc` clone under a read lock) | never |
///
/// [`len`](VecMem::len) adds up atomic counters, one per lane and one for
/// the list, in every state; [`memory_usage`](VecMem::memory_usage) adds
/// their bytes, the sorted vector's and the arena's usage (taken under the
/// arena's lock).
///
/// # Examples
///
/// ```
/// use vecmem::{BytewiseComparator, VecMem};
///
/// let mem = VecMem::new(BytewiseComparator);
/// mem.insert(b"banana");
/// mem.insert(b"apple");
/// assert_eq!(mem.len(), 2);
///
/// let mut cursor = mem.cursor();
/// cursor.seek_to_first();
/// assert_eq!(cursor.key(), b"apple");
/// ```
pub struct VecMem<C: Comparator = BytewiseComparator> {
    comparator: C,
    /// Owns every entry's bytes; `Entry` pointers stay valid while it lives.
    arena: ConcurrentArena,
    /// Where small batches go; see the `lane` module. A power-of-two count.
    lanes: Box<[CachePadded<Lane>]>,
    /// `lanes.len() - 1`: masks a thread's lane index.
    lane_mask: usize,
    /// Set (only) by [`mark_read_only`](VecMem::mark_read_only), under the
    /// write lock and before it passes through every lane lock. Read on
    /// every append (so it sits with the fields nobody writes while the
    /// memtable is mutable), under the lane's lock.
    read_only: AtomicBool,
    shared: RwLock<Shared>,
    /// Bytes reserved by `Shared::entries` (its capacity × entry size).
    vector_bytes: AtomicUsize,
    /// The lock-free side, on a cache line of its own so that its CASes do
    /// not contend with the fields every append reads.
    listed: CachePadded<ListedBatches>,
    /// Sorts performed, private copies included.
    sorts: AtomicUsize,
    parallel_sort_threshold: usize,
}

/// What the lock protects; see the lifecycle table on [`VecMem`].
struct Shared {
    /// Empty while the memtable is mutable. Its first reader after the
    /// freeze gathers the lanes' entries and the listed batches here, sorts
    /// them in place and moves them to `sorted`; they stay here if the sort
    /// panics, for the next reader to sort.
    entries: Vec<Entry>,
    /// The sorted entries of a read-only memtable, once its first reader
    /// sorted them.
    sorted: Option<Arc<Vec<Entry>>>,
}

impl<C: Comparator> VecMem<C> {
    /// An empty memtable with an arena of its own.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// assert!(mem.is_empty());
    /// ```
    pub fn new(comparator: C) -> Self {
        Self::with_arena(comparator, ConcurrentArena::new())
    }

    /// An empty memtable storing its entries in `arena` (for a chosen block
    /// size, say). The memtable owns the arena; entries live until it drops.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, ConcurrentArena, VecMem};
    /// let mem = VecMem::with_arena(BytewiseComparator, ConcurrentArena::with_block_size(1 << 20));
    /// mem.insert(b"k");
    /// assert_eq!(mem.len(), 1);
    /// ```
    pub fn with_arena(comparator: C, arena: ConcurrentArena) -> Self {
        let lane_count = lane::lane_count();
        debug_assert!(lane_count.is_power_of_two());
        Self {
            comparator,
            arena,
            lanes: (0..lane_count)
                .map(|_| CachePadded::new(Lane::new()))
                .collect(),
            lane_mask: lane_count - 1,
            read_only: AtomicBool::new(false),
            shared: RwLock::new(Shared {
                entries: Vec::new(),
                sorted: None,
            }),
            vector_bytes: AtomicUsize::new(0),
            listed: CachePadded::new(ListedBatches {
                head: AtomicPtr::new(std::ptr::null_mut()),
                entries: AtomicUsize::new(0),
                bytes: AtomicUsize::new(0),
            }),
            sorts: AtomicUsize::new(0),
            parallel_sort_threshold: DEFAULT_PARALLEL_SORT_THRESHOLD,
        }
    }

    /// Sets the vector length from which sorts run in parallel on rayon's
    /// global pool ([`DEFAULT_PARALLEL_SORT_THRESHOLD`] by default);
    /// `usize::MAX` keeps every sort on the reading thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let serial_only = VecMem::new(BytewiseComparator).with_parallel_sort_threshold(usize::MAX);
    /// # drop(serial_only);
    /// ```
    pub fn with_parallel_sort_threshold(mut self, min_entries: usize) -> Self {
        self.parallel_sort_threshold = min_entries;
        self
    }

    /// The comparator ordering this memtable.
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, Comparator, VecMem};
    /// use std::cmp::Ordering;
    ///
    /// let mem = VecMem::new(BytewiseComparator);
    /// assert_eq!(mem.comparator().compare(b"a", b"b"), Ordering::Less);
    /// ```
    #[inline]
    pub fn comparator(&self) -> &C {
        &self.comparator
    }

    /// Copies `entry` into the arena and appends it to the calling thread's
    /// write lane, under that lane's lock, which other threads rarely touch.
    /// A batch of entries goes through a [`writer`] (`VecMem::writer`)
    /// instead; for a single entry this is the cheaper call (a writer per
    /// entry also makes, fills and takes apart its handle each time).
    ///
    /// # Panics
    ///
    /// If the memtable is read-only ([`mark_read_only`](VecMem::mark_read_only)).
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// mem.insert(b"k");
    /// assert_eq!(mem.len(), 1);
    /// ```
    ///
    /// [`writer`]: VecMem::writer
    #[inline]
    pub fn insert(&self, entry: &[u8]) {
        let entry = Entry::copy_into(&self.arena, entry);
        self.append(entry, &[]);
    }

    /// Appends an entry of `len` bytes that `fill` writes straight into the
    /// arena (the bytes start zeroed), to the calling thread's write lane as
    /// [`insert`](VecMem::insert) does, without the intermediate buffer,
    /// for callers that encode their entries. A batch goes through
    /// [`Writer::insert_with`] instead.
    ///
    /// # Panics
    ///
    /// If the memtable is read-only, or if `fill` panics (the entry is then
    /// not added; its bytes stay unused in the arena).
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// let (key, value) = (b"key", b"value");
    /// mem.insert_with(key.len() + value.len(), |buf| {
    ///     buf[..key.len()].copy_from_slice(key);
    ///     buf[key.len()..].copy_from_slice(value);
    /// });
    /// let mut cursor = mem.cursor();
    /// cursor.seek_to_first();
    /// assert_eq!(cursor.key(), b"keyvalue");
    /// ```
    #[inline]
    pub fn insert_with(&self, len: usize, fill: impl FnOnce(&mut [u8])) {
        let entry = Entry::fill_into(&self.arena, len, fill);
        self.append(entry, &[]);
    }

    /// A write buffer for one batch: its entries are copied into the arena
    /// as they are inserted, and become visible to readers (and to
    /// [`len`](VecMem::len)) all at once when the writer is finished or
    /// dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// let mut writer = mem.writer();
    /// writer.insert(b"a");
    /// writer.insert(b"b");
    /// assert_eq!(mem.len(), 0); // not published yet
    /// writer.finish();
    /// assert_eq!(mem.len(), 2);
    /// ```
    #[inline]
    pub fn writer(&self) -> Writer<'_, C> {
        Writer::new(self)
    }

    /// Entries published so far. Safe to call while writers run: it adds up
    /// counters (one per write lane, one for the large batches), never reads
    /// a vector. Exact once the writers have returned.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// mem.insert(b"x");
    /// assert_eq!(mem.len(), 1);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        // Acquire (all): pairs with the writers' release stores and
        // increments, which follow the publication of what they count, so
        // that a cursor made after this call holds at least this many
        // entries. Each counter only grows, so the sum never goes back.
        self.lanes
            .iter()
            .map(|lane| lane.count.load(Ordering::Acquire))
            .sum::<usize>()
            + self.listed.entries.load(Ordering::Acquire)
    }

    /// Whether no entry is published yet.
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    ///
    /// let mem = VecMem::new(BytewiseComparator);
    /// assert!(mem.is_empty());
    /// let mut writer = mem.writer();
    /// writer.insert(b"k");
    /// assert!(mem.is_empty()); // still in the writer's buffer
    /// writer.finish();
    /// assert!(!mem.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held: the arena (every entry copied so far, published or still
    /// in a writer's buffer) plus the published pointers' vectors (the write
    /// lanes', the large batches', the sorted one). Safe to call while
    /// writers run. Writers' private buffers and readers' private copies are
    /// not counted.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// mem.insert(&[0; 100]);
    /// assert!(mem.memory_usage() >= 100);
    /// ```
    #[inline]
    pub fn memory_usage(&self) -> usize {
        // Relaxed (all): a statistic, read without ordering against the
        // vectors.
        self.arena.approximate_memory_usage()
            + self
                .lanes
                .iter()
                .map(|lane| lane.bytes.load(Ordering::Relaxed))
                .sum::<usize>()
            + self.vector_bytes.load(Ordering::Relaxed)
            + self.listed.bytes.load(Ordering::Relaxed)
    }

    /// The former name of [`memory_usage`](VecMem::memory_usage).
    ///
    /// # Examples
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// assert_eq!(mem.approximate_memory_usage(), mem.memory_usage());
    /// ```
    #[deprecated(note = "use `memory_usage`, the name `inline-skiplist` shares")]
    #[inline]
    pub fn approximate_memory_usage(&self) -> usize {
        self.memory_usage()
    }

    /// Freezes the memtable: later inserts panic, and the first cursor sorts
    /// everything once for every reader. Idempotent.
    ///
    /// Call it after every [`Writer`] has finished; a writer that publishes
    /// afterwards panics. When it returns, what the memtable holds is final:
    /// every publish that did not panic has completed, and
    /// [`len`](VecMem::len) no longer changes.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// mem.mark_read_only();
    /// assert!(mem.is_read_only());
    /// ```
    pub fn mark_read_only(&self) {
        let shared = self.write_shared();
        // Relaxed: readers of the flag hold the lock taken here, or a lane
        // lock that the pass below goes through after this store.
        self.read_only.store(true, Ordering::Relaxed);
        // Pass through every lane lock: an append that holds one now, having
        // seen the flag unset, completes before this returns, and every later
        // holder of that lock sees the flag (the lock orders the store
        // before it) and panics. So nothing gets into a lane after the
        // freeze. Under the write lock, so that no reader sorts before.
        for lane in self.lanes.iter() {
            drop(lane.entries.lock());
        }
        // Tag the list under the lock too: a listed batch either got in
        // before this CAS, and is sorted with the rest, or sees the tag and
        // panics.
        // Relaxed (load and failure): the value only feeds the CAS.
        let mut head = self.listed.head.load(Ordering::Relaxed);
        while head.addr() & FROZEN == 0 {
            // Relaxed (success): the tag publishes nothing; readers of the
            // list hold the lock taken here, or acquire the head themselves.
            match self.listed.head.compare_exchange_weak(
                head,
                head.map_addr(|addr| addr | FROZEN),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => head = now,
            }
        }
        drop(shared);
    }

    /// Whether [`mark_read_only`](VecMem::mark_read_only) was called.
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    ///
    /// let mem = VecMem::new(BytewiseComparator);
    /// assert!(!mem.is_read_only());
    /// mem.mark_read_only();
    /// assert!(mem.is_read_only());
    /// ```
    pub fn is_read_only(&self) -> bool {
        // Relaxed: a flag, ordering nothing; readers and writers that need
        // the freeze ordered get it from the locks it takes.
        self.read_only.load(Ordering::Relaxed)
    }

    /// How many sorts cursors have run so far: one per cursor over a mutable
    /// memtable, and one in all for a read-only memtable. A hook for this
    /// crate's tests and benchmarks (hidden from the docs, not part of the
    /// stable API).
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// mem.insert(b"k");
    /// mem.mark_read_only();
    /// let (_a, _b) = (mem.cursor(), mem.cursor());
    /// assert_eq!(mem.sort_count(), 1);
    /// ```
    #[doc(hidden)]
    pub fn sort_count(&self) -> usize {
        // Relaxed: a statistic; the sorted vector itself is published under
        // the lock.
        self.sorts.load(Ordering::Relaxed)
    }

    /// Appends one entry and a batch to the calling thread's write lane,
    /// under one acquisition of the lane's lock. Always inlined, so that
    /// `insert` and a writer's publish each get a copy fitted to their batch
    /// (an out-of-line copy cost a batch of one noticeably more per entry).
    #[inline(always)]
    fn append(&self, first: Entry, rest: &[Entry]) {
        let (lane, mut entries) = self.lock_lane();
        // Relaxed: the lane lock orders the freeze's store before this load
        // whenever the freeze's pass through this lock came first; see
        // `mark_read_only`.
        if self.read_only.load(Ordering::Relaxed) {
            drop(entries);
            write_after_freeze();
        }
        if rest.is_empty() {
            // Tested first: extending from an empty slice still calls
            // `memcpy`, which a batch of one should not pay for.
            entries.push(first);
        } else {
            entries.reserve(1 + rest.len());
            entries.push(first);
            entries.extend_from_slice(rest);
        }
        // Release: see `len`. Stored under the lane's lock, so it never goes
        // backwards.
        lane.count.store(entries.len(), Ordering::Release);
        // Relaxed: a statistic, ordered against nothing.
        lane.bytes
            .store(entries.capacity() * size_of::<Entry>(), Ordering::Relaxed);
    }

    /// Locks the calling thread's write lane. Inlined into `append`: one
    /// thread-local read and one `try_lock` when nobody else holds the lane.
    #[inline(always)]
    fn lock_lane(&self) -> (&Lane, MutexGuard<'_, Vec<Entry>>) {
        let lane = &self.lanes[lane::index() & self.lane_mask];
        match lane.entries.try_lock() {
            Some(entries) => (lane, entries),
            None => self.lock_other_lane(),
        }
    }

    /// The thread's lane is held by another thread (sharing it, or a reader
    /// copying it): move to another lane for good, and wait for its lock.
    #[cold]
    #[inline(never)]
    fn lock_other_lane(&self) -> (&Lane, MutexGuard<'_, Vec<Entry>>) {
        let index = lane::repick(lane::index(), self.lane_mask);
        let lane = &self.lanes[index & self.lane_mask];
        (lane, lane.entries.lock())
    }

    #[inline]
    fn read_shared(&self) -> RwLockReadGuard<'_, Shared> {
        // The lock does not poison: a panic under it (a comparator
        // panicking mid-sort) leaves `Shared` valid, its entries permuted
        // perhaps, but none lost.
        self.shared.read()
    }

    #[inline]
    fn write_shared(&self) -> RwLockWriteGuard<'_, Shared> {
        self.shared.write()
    }
}

/// The panic of a write to a read-only memtable, out of the hot path.
#[cold]
#[inline(never)]
#[track_caller]
fn write_after_freeze() -> ! {
    panic!("vecmem: write to a memtable marked read-only");
}

impl<C: Comparator> Drop for VecMem<C> {
    fn drop(&mut self) {
        // SAFETY: `&mut self`: no reader or writer is left.
        unsafe { self.take_listed_batches(drop) };
    }
}

impl<C: Comparator + Default> Default for VecMem<C> {
    fn default() -> Self {
        Self::new(C::default())
    }
}

impl<C: Comparator> fmt::Debug for VecMem<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VecMem")
            .field("len", &self.len())
            .field("read_only", &self.is_read_only())
            .field("memory_usage", &self.memory_usage())
            .finish_non_exhaustive()
    }
}

/// README examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(test)]
mod tests;
