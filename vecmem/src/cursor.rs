//! The cursor over a sorted vector of entries, generic over how it holds
//! its memtable: borrowed (`Cursor<&VecMem<C>>`) or shared ([`ArcCursor`],
//! `Cursor<Arc<VecMem<C>>>`) for callers that keep a cursor beyond a borrow.

use std::cmp::Ordering;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use crate::entry::Entry;
use crate::{BytewiseComparator, Comparator, VecMem};

/// A position in a sorted vector; `pos == entries.len()` is "invalid".
#[derive(Clone)]
struct Position {
    entries: Arc<Vec<Entry>>,
    pos: usize,
}

impl Position {
    #[inline]
    fn new(entries: Arc<Vec<Entry>>) -> Self {
        let pos = entries.len();
        Self { entries, pos }
    }

    #[inline]
    fn valid(&self) -> bool {
        self.pos < self.entries.len()
    }

    /// The current entry.
    ///
    /// # Panics
    ///
    /// If the cursor is not valid.
    #[inline]
    #[track_caller]
    fn entry(&self) -> Entry {
        match self.entries.get(self.pos) {
            Some(&entry) => entry,
            None => invalid_cursor(),
        }
    }

    #[inline]
    fn invalidate(&mut self) {
        self.pos = self.entries.len();
    }

    #[inline]
    fn seek_to_first(&mut self) {
        // An empty vector makes 0 the invalid position too.
        self.pos = 0;
    }

    #[inline]
    fn seek_to_last(&mut self) {
        self.pos = self.entries.len().saturating_sub(1);
    }

    /// The first entry at or after `target`.
    ///
    /// # Safety
    ///
    /// The arena holding the entries must be alive.
    #[inline]
    unsafe fn seek(&mut self, cmp: &impl Comparator, target: &[u8]) {
        self.pos = self.entries.partition_point(|e| {
            // SAFETY: the caller keeps the entries' arena alive.
            cmp.compare(unsafe { e.bytes() }, target) == Ordering::Less
        });
    }

    /// The last entry at or before `target`.
    ///
    /// # Safety
    ///
    /// The arena holding the entries must be alive.
    #[inline]
    unsafe fn seek_for_prev(&mut self, cmp: &impl Comparator, target: &[u8]) {
        let after = self.entries.partition_point(|e| {
            // SAFETY: the caller keeps the entries' arena alive.
            cmp.compare(unsafe { e.bytes() }, target) != Ordering::Greater
        });
        match after.checked_sub(1) {
            Some(pos) => self.pos = pos,
            None => self.invalidate(),
        }
    }

    #[inline]
    #[track_caller]
    fn next(&mut self) {
        if !self.valid() {
            invalid_cursor();
        }
        self.pos += 1;
    }

    #[inline]
    #[track_caller]
    fn prev(&mut self) {
        match self.pos {
            0 if self.valid() => self.invalidate(),
            pos if self.valid() => self.pos = pos - 1,
            _ => invalid_cursor(),
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn invalid_cursor() -> ! {
    panic!("vecmem: cursor is not valid (check `valid()` before `key`, `next` or `prev`)");
}

/// A cursor over a [`VecMem`]'s entries in comparator order, reached
/// through `M`: a borrow `&VecMem<C>` ([`VecMem::cursor`]; keys live as long
/// as that borrow) or an `Arc<VecMem<C>>` ([`VecMem::cursor_arc`], alias
/// [`ArcCursor`]; keys borrow the cursor). Both have the same methods and
/// compile to the same code.
///
/// A fresh cursor is invalid; position it with [`seek`](Cursor::seek),
/// [`seek_for_prev`](Cursor::seek_for_prev),
/// [`seek_to_first`](Cursor::seek_to_first) or
/// [`seek_to_last`](Cursor::seek_to_last). Equal entries (duplicates) are
/// adjacent, in no specified order.
///
/// # Examples
///
/// ```
/// use vecmem::{BytewiseComparator, VecMem};
///
/// let mem = VecMem::new(BytewiseComparator);
/// for key in [b"b", b"d", b"a", b"c"] {
///     mem.insert(key);
/// }
/// let mut cursor = mem.cursor();
/// cursor.seek(b"bb");
/// assert_eq!(cursor.key(), b"c");
/// cursor.seek_for_prev(b"bb");
/// assert_eq!(cursor.key(), b"b");
/// cursor.next();
/// cursor.next();
/// cursor.next();
/// assert!(!cursor.valid());
/// ```
pub struct Cursor<M> {
    /// Only this crate builds cursors, with a `&VecMem` or an `Arc<VecMem>`:
    /// both dereference to the one memtable whose arena holds `position`'s
    /// entries, and keep it alive for as long as the cursor holds them.
    mem: M,
    position: Position,
}

/// A cursor that owns a share of its memtable, so it can be kept beyond any
/// borrow (in an engine's iterator, say).
///
/// Made by [`VecMem::cursor_arc`]. The memtable (and its arena) lives at
/// least as long as the cursor. It has every method of the borrowing
/// [`Cursor`]; its keys borrow the cursor.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use vecmem::{ArcCursor, BytewiseComparator, VecMem};
///
/// fn open_scan(mem: &Arc<VecMem>) -> ArcCursor {
///     let mut cursor = mem.cursor_arc();
///     cursor.seek_to_first();
///     cursor
/// }
///
/// let mem = Arc::new(VecMem::new(BytewiseComparator));
/// mem.insert(b"only");
/// let cursor = open_scan(&mem);
/// drop(mem);
/// assert_eq!(cursor.key(), b"only");
/// ```
pub type ArcCursor<C = BytewiseComparator> = Cursor<Arc<VecMem<C>>>;

/// The methods of every cursor, however it holds the memtable.
impl<M, C> Cursor<M>
where
    M: Deref<Target = VecMem<C>>,
    C: Comparator,
{
    #[inline]
    pub(crate) fn new(mem: M, entries: Arc<Vec<Entry>>) -> Self {
        Self {
            mem,
            position: Position::new(entries),
        }
    }

    /// The memtable this cursor reads, as the cursor holds it (`&&VecMem`
    /// or `&Arc<VecMem>`).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = Arc::new(VecMem::new(BytewiseComparator));
    /// assert!(Arc::ptr_eq(mem.cursor_arc().get_ref(), &mem));
    /// assert!(std::ptr::eq(*mem.cursor().get_ref(), &*mem));
    /// ```
    #[inline]
    pub fn get_ref(&self) -> &M {
        &self.mem
    }

    /// Whether the cursor is at an entry.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// mem.insert(b"k");
    /// let mut cursor = mem.cursor();
    /// assert!(!cursor.valid()); // a fresh cursor is invalid
    /// cursor.seek_to_first();
    /// assert!(cursor.valid());
    /// ```
    #[inline]
    pub fn valid(&self) -> bool {
        self.position.valid()
    }

    /// Moves to the first entry (invalid if there is none).
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// mem.insert(b"b");
    /// mem.insert(b"a");
    /// let mut cursor = mem.cursor();
    /// cursor.seek_to_first();
    /// assert_eq!(cursor.key(), b"a");
    /// ```
    #[inline]
    pub fn seek_to_first(&mut self) {
        self.position.seek_to_first();
    }

    /// Moves to the last entry (invalid if there is none).
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// mem.insert(b"b");
    /// mem.insert(b"a");
    /// let mut cursor = mem.cursor();
    /// cursor.seek_to_last();
    /// assert_eq!(cursor.key(), b"b");
    /// ```
    #[inline]
    pub fn seek_to_last(&mut self) {
        self.position.seek_to_last();
    }

    /// Moves to the first entry that is not less than `target` (invalid
    /// if there is none): a binary search.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// mem.insert(b"b");
    /// let mut cursor = mem.cursor();
    /// cursor.seek(b"a");
    /// assert_eq!(cursor.key(), b"b");
    /// cursor.seek(b"c");
    /// assert!(!cursor.valid());
    /// ```
    #[inline]
    pub fn seek(&mut self, target: &[u8]) {
        // SAFETY: `self.mem` keeps the memtable, and so its arena, alive.
        unsafe { self.position.seek(&self.mem.comparator, target) }
    }

    /// Moves to the last entry that is not greater than `target` (invalid
    /// if there is none): a binary search.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// mem.insert(b"b");
    /// let mut cursor = mem.cursor();
    /// cursor.seek_for_prev(b"c");
    /// assert_eq!(cursor.key(), b"b");
    /// cursor.seek_for_prev(b"a");
    /// assert!(!cursor.valid());
    /// ```
    #[inline]
    pub fn seek_for_prev(&mut self, target: &[u8]) {
        // SAFETY: `self.mem` keeps the memtable, and so its arena, alive.
        unsafe { self.position.seek_for_prev(&self.mem.comparator, target) }
    }

    /// Moves to the next entry; past the last one the cursor becomes
    /// invalid.
    ///
    /// # Panics
    ///
    /// If the cursor is not valid.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// mem.insert(b"a");
    /// let mut cursor = mem.cursor();
    /// cursor.seek_to_first();
    /// cursor.next();
    /// assert!(!cursor.valid());
    /// ```
    #[inline]
    #[track_caller]
    #[allow(clippy::should_implement_trait)] // RocksDB's name; not an `Iterator`.
    pub fn next(&mut self) {
        self.position.next();
    }

    /// Moves to the previous entry; before the first one the cursor
    /// becomes invalid.
    ///
    /// # Panics
    ///
    /// If the cursor is not valid.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// mem.insert(b"a");
    /// mem.insert(b"b");
    /// let mut cursor = mem.cursor();
    /// cursor.seek_to_last();
    /// cursor.prev();
    /// assert_eq!(cursor.key(), b"a");
    /// ```
    #[inline]
    #[track_caller]
    pub fn prev(&mut self) {
        self.position.prev();
    }

    /// How many entries this cursor ranges over (its snapshot's size).
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// mem.insert(b"a");
    /// let cursor = mem.cursor();
    /// mem.insert(b"b"); // after the snapshot
    /// assert_eq!(cursor.snapshot_len(), 1);
    /// ```
    #[inline]
    pub fn snapshot_len(&self) -> usize {
        self.position.entries.len()
    }
}

/// The borrowing cursor: keys live as long as the borrow of the memtable.
impl<'a, C: Comparator> Cursor<&'a VecMem<C>> {
    /// The current entry's bytes, borrowed from the memtable.
    ///
    /// # Panics
    ///
    /// If the cursor is not valid.
    ///
    /// # Examples
    ///
    /// ```
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = VecMem::new(BytewiseComparator);
    /// mem.insert(b"k");
    /// let mut cursor = mem.cursor();
    /// cursor.seek_to_first();
    /// let key = cursor.key();
    /// drop(cursor); // the key borrows the memtable, not the cursor
    /// assert_eq!(key, b"k");
    /// ```
    #[inline]
    #[track_caller]
    pub fn key(&self) -> &'a [u8] {
        let entry = self.position.entry();
        // SAFETY: the entry lives in `self.mem`'s arena, which lives at
        // least as long as the `'a` borrow of the memtable.
        unsafe { entry.bytes() }
    }
}

/// The owning cursor: keys borrow the cursor, which holds the memtable alive.
impl<C: Comparator> Cursor<Arc<VecMem<C>>> {
    /// The current entry's bytes.
    ///
    /// # Panics
    ///
    /// If the cursor is not valid.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = Arc::new(VecMem::new(BytewiseComparator));
    /// mem.insert(b"k");
    /// let mut cursor = mem.cursor_arc();
    /// cursor.seek_to_first();
    /// assert_eq!(cursor.key(), b"k");
    /// ```
    #[inline]
    #[track_caller]
    pub fn key(&self) -> &[u8] {
        let entry = self.position.entry();
        // SAFETY: `self.mem` keeps the memtable, and its arena, alive for as
        // long as `self` is borrowed.
        unsafe { entry.bytes() }
    }

    /// The former name of [`get_ref`](Cursor::get_ref).
    ///
    /// # Examples
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// use std::sync::Arc;
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = Arc::new(VecMem::new(BytewiseComparator));
    /// assert!(Arc::ptr_eq(mem.cursor_arc().memtable(), &mem));
    /// ```
    #[deprecated(note = "use `get_ref`, the name `inline-skiplist` shares")]
    #[inline]
    pub fn memtable(&self) -> &Arc<VecMem<C>> {
        self.get_ref()
    }
}

impl<M: Clone> Clone for Cursor<M> {
    fn clone(&self) -> Self {
        Self {
            mem: self.mem.clone(),
            position: self.position.clone(),
        }
    }
}

impl<M> fmt::Debug for Cursor<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let position = &self.position;
        f.debug_struct("Cursor")
            .field("valid", &position.valid())
            .field("index", &position.pos)
            .field("snapshot_len", &position.entries.len())
            .finish()
    }
}
