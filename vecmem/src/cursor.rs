//! Cursors over a sorted vector of entries: a borrowing one ([`Cursor`]) and
//! an owning one ([`ArcCursor`]) for callers that keep a cursor beyond a
//! borrow.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use crate::entry::Entry;
use crate::{Comparator, VecMem};

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

macro_rules! cursor_methods {
    () => {
        /// Whether the cursor is at an entry.
        #[inline]
        pub fn valid(&self) -> bool {
            self.position.valid()
        }

        /// Moves to the first entry (invalid if there is none).
        #[inline]
        pub fn seek_to_first(&mut self) {
            self.position.seek_to_first();
        }

        /// Moves to the last entry (invalid if there is none).
        #[inline]
        pub fn seek_to_last(&mut self) {
            self.position.seek_to_last();
        }

        /// Moves to the first entry that is not less than `target` (invalid
        /// if there is none): a binary search.
        #[inline]
        pub fn seek(&mut self, target: &[u8]) {
            // SAFETY: `self.mem` keeps the memtable, and so its arena, alive.
            unsafe { self.position.seek(&self.mem.comparator, target) }
        }

        /// Moves to the last entry that is not greater than `target` (invalid
        /// if there is none): a binary search.
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
        #[inline]
        #[track_caller]
        pub fn next(&mut self) {
            self.position.next();
        }

        /// Moves to the previous entry; before the first one the cursor
        /// becomes invalid.
        ///
        /// # Panics
        ///
        /// If the cursor is not valid.
        #[inline]
        #[track_caller]
        pub fn prev(&mut self) {
            self.position.prev();
        }

        /// How many entries this cursor ranges over (its snapshot's size).
        #[inline]
        pub fn snapshot_len(&self) -> usize {
            self.position.entries.len()
        }
    };
}

/// A cursor over a [`VecMem`]'s entries in comparator order, borrowing the
/// memtable; keys it returns live as long as that borrow.
///
/// Made by [`VecMem::cursor`]. A fresh cursor is invalid; position it with
/// [`seek`](Cursor::seek), [`seek_for_prev`](Cursor::seek_for_prev),
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
pub struct Cursor<'a, C: Comparator> {
    mem: &'a VecMem<C>,
    position: Position,
}

impl<'a, C: Comparator> Cursor<'a, C> {
    #[inline]
    pub(crate) fn new(mem: &'a VecMem<C>, entries: Arc<Vec<Entry>>) -> Self {
        Self {
            mem,
            position: Position::new(entries),
        }
    }

    /// The current entry's bytes, borrowed from the memtable.
    ///
    /// # Panics
    ///
    /// If the cursor is not valid.
    #[inline]
    #[track_caller]
    pub fn key(&self) -> &'a [u8] {
        let entry = self.position.entry();
        // SAFETY: the entry lives in `self.mem`'s arena, which lives at
        // least as long as the `'a` borrow of the memtable.
        unsafe { entry.bytes() }
    }

    cursor_methods!();
}

/// A cursor like [`Cursor`] that owns a share of its memtable, so it can be
/// kept beyond any borrow (in an engine's iterator, say).
///
/// Made by [`VecMem::cursor_arc`]. The memtable (and its arena) lives at
/// least as long as the cursor.
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
pub struct ArcCursor<C: Comparator = crate::BytewiseComparator> {
    mem: Arc<VecMem<C>>,
    position: Position,
}

impl<C: Comparator> ArcCursor<C> {
    #[inline]
    pub(crate) fn new(mem: Arc<VecMem<C>>, entries: Arc<Vec<Entry>>) -> Self {
        Self {
            mem,
            position: Position::new(entries),
        }
    }

    /// The current entry's bytes.
    ///
    /// # Panics
    ///
    /// If the cursor is not valid.
    #[inline]
    #[track_caller]
    pub fn key(&self) -> &[u8] {
        let entry = self.position.entry();
        // SAFETY: `self.mem` keeps the memtable, and its arena, alive for as
        // long as `self` is borrowed.
        unsafe { entry.bytes() }
    }

    /// The memtable this cursor reads.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use vecmem::{BytewiseComparator, VecMem};
    /// let mem = Arc::new(VecMem::new(BytewiseComparator));
    /// assert!(Arc::ptr_eq(mem.cursor_arc().get_ref(), &mem));
    /// ```
    #[inline]
    pub fn get_ref(&self) -> &Arc<VecMem<C>> {
        &self.mem
    }

    /// The former name of [`get_ref`](ArcCursor::get_ref).
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

    cursor_methods!();
}

impl<C: Comparator> Clone for Cursor<'_, C> {
    fn clone(&self) -> Self {
        Self {
            mem: self.mem,
            position: self.position.clone(),
        }
    }
}

impl<C: Comparator> Clone for ArcCursor<C> {
    fn clone(&self) -> Self {
        Self {
            mem: Arc::clone(&self.mem),
            position: self.position.clone(),
        }
    }
}

impl<C: Comparator> fmt::Debug for Cursor<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_position(f, "Cursor", &self.position)
    }
}

impl<C: Comparator> fmt::Debug for ArcCursor<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_position(f, "ArcCursor", &self.position)
    }
}

fn debug_position(f: &mut fmt::Formatter<'_>, name: &str, position: &Position) -> fmt::Result {
    f.debug_struct(name)
        .field("valid", &position.valid())
        .field("index", &position.pos)
        .field("snapshot_len", &position.entries.len())
        .finish()
}
