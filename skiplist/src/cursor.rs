//! Cursors: a borrowing [`Cursor`] (also a forward [`Iterator`]) and an
//! owning [`ArcCursor`].

use crate::node::Node;
use crate::{BytewiseComparator, Comparator, SkipList};
use std::fmt;
use std::iter::FusedIterator;
use std::sync::Arc;

/// A position in a [`SkipList`], borrowed from it.
///
/// A cursor is either *valid*, on an entry, or *invalid*, off either end.
/// [`SkipList::iter`] returns one on the first entry. Moving it never blocks
/// and never fails while other threads insert: it sees every entry inserted
/// before it was positioned, and possibly some inserted since.
///
/// | method | moves to |
/// |---|---|
/// | [`seek(t)`](Cursor::seek) | the first entry `>= t` |
/// | [`seek_for_prev(t)`](Cursor::seek_for_prev) | the last entry `<= t` |
/// | [`seek_to_first`](Cursor::seek_to_first) / [`seek_to_last`](Cursor::seek_to_last) | the first / last entry |
/// | [`next`](Cursor::next) | the following entry (one load) |
/// | [`prev`](Cursor::prev) | the preceding entry (a search from the head: nodes have no back links) |
///
/// Each moves to invalid when there is no such entry. [`next`](Cursor::next),
/// [`prev`](Cursor::prev) and [`key`](Cursor::key) panic on an invalid
/// cursor.
///
/// As an [`Iterator`], a cursor yields its current key and then steps
/// forward, until it becomes invalid. Note the inherent [`Cursor::next`]
/// (advance, returns nothing) takes precedence over [`Iterator::next`] in
/// method-call syntax.
///
/// # Examples
///
/// ```
/// use inline_skiplist::{BytewiseComparator, SkipList};
///
/// let list = SkipList::new(BytewiseComparator);
/// for k in [b"b", b"d", b"f"] {
///     list.insert(k);
/// }
/// let mut c = list.cursor();
/// c.seek(b"c");
/// assert_eq!(c.key(), b"d");
/// c.prev();
/// assert_eq!(c.key(), b"b");
/// c.seek_for_prev(b"e");
/// assert_eq!(c.key(), b"d");
/// c.seek(b"d");
/// let rest: Vec<&[u8]> = c.collect();
/// assert_eq!(rest, [b"d", b"f"]);
/// ```
pub struct Cursor<'a, C = BytewiseComparator> {
    list: &'a SkipList<C>,
    node: Option<Node>,
}

impl<'a, C: Comparator> Cursor<'a, C> {
    #[inline]
    pub(crate) fn new(list: &'a SkipList<C>) -> Self {
        Self {
            list,
            node: list.first(),
        }
    }

    /// Whether the cursor is on an entry.
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// assert!(!list.cursor().valid());
    /// list.insert(b"k");
    /// assert!(list.cursor().valid());
    /// ```
    #[inline]
    pub fn valid(&self) -> bool {
        self.node.is_some()
    }

    /// The current entry; it lives as long as the list.
    ///
    /// # Panics
    ///
    /// If the cursor is not [`valid`](Cursor::valid).
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// list.insert(b"k");
    /// assert_eq!(list.cursor().key(), b"k");
    /// ```
    #[inline]
    pub fn key(&self) -> &'a [u8] {
        self.list.key_of(valid_node(self.node))
    }

    /// Steps to the following entry, or to invalid after the last one.
    ///
    /// # Panics
    ///
    /// If the cursor is not [`valid`](Cursor::valid).
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// list.insert(b"a");
    /// let mut c = list.cursor();
    /// c.next();
    /// assert!(!c.valid());
    /// ```
    #[inline]
    #[allow(clippy::should_implement_trait)] // RocksDB's name; see the type docs.
    pub fn next(&mut self) {
        self.node = self.list.after(valid_node(self.node));
    }

    /// Steps to the preceding entry, or to invalid before the first one. It
    /// costs a search from the head (O(log n)): nodes have no back links.
    ///
    /// # Panics
    ///
    /// If the cursor is not [`valid`](Cursor::valid).
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// list.insert(b"a");
    /// list.insert(b"b");
    /// let mut c = list.cursor();
    /// c.seek_to_last();
    /// c.prev();
    /// assert_eq!(c.key(), b"a");
    /// ```
    #[inline]
    pub fn prev(&mut self) {
        self.node = self.list.before(valid_node(self.node));
    }

    /// Moves to the first entry `>= target`.
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// list.insert(b"b");
    /// let mut c = list.cursor();
    /// c.seek(b"a");
    /// assert_eq!(c.key(), b"b");
    /// c.seek(b"c");
    /// assert!(!c.valid());
    /// ```
    #[inline]
    pub fn seek(&mut self, target: &[u8]) {
        self.node = self.list.at_or_after(target);
    }

    /// Moves to the last entry `<= target`.
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// list.insert(b"b");
    /// let mut c = list.cursor();
    /// c.seek_for_prev(b"c");
    /// assert_eq!(c.key(), b"b");
    /// c.seek_for_prev(b"a");
    /// assert!(!c.valid());
    /// ```
    #[inline]
    pub fn seek_for_prev(&mut self, target: &[u8]) {
        self.node = self.list.at_or_before(target);
    }

    /// Moves to the first entry.
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// list.insert(b"b");
    /// list.insert(b"a");
    /// let mut c = list.cursor();
    /// c.seek_to_last();
    /// c.seek_to_first();
    /// assert_eq!(c.key(), b"a");
    /// ```
    #[inline]
    pub fn seek_to_first(&mut self) {
        self.node = self.list.first();
    }

    /// Moves to the last entry.
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// list.insert(b"b");
    /// list.insert(b"a");
    /// let mut c = list.cursor();
    /// c.seek_to_last();
    /// assert_eq!(c.key(), b"b");
    /// ```
    #[inline]
    pub fn seek_to_last(&mut self) {
        self.node = self.list.last();
    }
}

impl<'a, C: Comparator> Iterator for Cursor<'a, C> {
    type Item = &'a [u8];

    /// Yields the current key, then steps forward.
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let node = self.node?;
        self.node = self.list.after(node);
        Some(self.list.key_of(node))
    }
}

impl<C: Comparator> FusedIterator for Cursor<'_, C> {}

impl<C> Clone for Cursor<'_, C> {
    #[inline]
    fn clone(&self) -> Self {
        Self {
            list: self.list,
            node: self.node,
        }
    }
}

impl<C: Comparator> fmt::Debug for Cursor<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cursor")
            .field("key", &self.node.map(|n| self.list.key_of(n)))
            .finish()
    }
}

/// A cursor that owns a reference count on its list, so it can outlive any
/// borrow: store it in a struct, send it to another thread, keep it while
/// the list is being replaced elsewhere.
///
/// It has the same positioning methods as [`Cursor`]; its keys borrow the
/// cursor rather than the list, so it is not an [`Iterator`].
///
/// # Examples
///
/// ```
/// use inline_skiplist::{BytewiseComparator, SkipList};
/// use std::sync::Arc;
///
/// let list = Arc::new(SkipList::new(BytewiseComparator));
/// list.insert(b"a");
/// list.insert(b"b");
/// let mut cursor = list.cursor_arc();
/// drop(list);
/// let handle = std::thread::spawn(move || {
///     cursor.seek(b"b");
///     cursor.key().to_vec()
/// });
/// assert_eq!(handle.join().unwrap(), b"b");
/// ```
pub struct ArcCursor<C = BytewiseComparator> {
    list: Arc<SkipList<C>>,
    node: Option<Node>,
}

impl<C: Comparator> ArcCursor<C> {
    #[inline]
    pub(crate) fn new(list: Arc<SkipList<C>>) -> Self {
        let node = list.first();
        Self { list, node }
    }

    /// The list this cursor walks.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let list = Arc::new(inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator));
    /// assert!(Arc::ptr_eq(list.cursor_arc().get_ref(), &list));
    /// ```
    #[inline]
    pub fn get_ref(&self) -> &Arc<SkipList<C>> {
        &self.list
    }

    /// The former name of [`get_ref`](ArcCursor::get_ref).
    ///
    /// # Examples
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// use std::sync::Arc;
    /// let list = Arc::new(inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator));
    /// assert!(Arc::ptr_eq(list.cursor_arc().list(), &list));
    /// ```
    #[deprecated(note = "use `get_ref`, the name `vecmem` shares")]
    #[inline]
    pub fn list(&self) -> &Arc<SkipList<C>> {
        self.get_ref()
    }

    /// Whether the cursor is on an entry. See [`Cursor::valid`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let list = Arc::new(inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator));
    /// assert!(!list.cursor_arc().valid());
    /// ```
    #[inline]
    pub fn valid(&self) -> bool {
        self.node.is_some()
    }

    /// The current entry. See [`Cursor::key`].
    ///
    /// # Panics
    ///
    /// If the cursor is not [`valid`](ArcCursor::valid).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let list = Arc::new(inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator));
    /// list.insert(b"k");
    /// assert_eq!(list.cursor_arc().key(), b"k");
    /// ```
    #[inline]
    pub fn key(&self) -> &[u8] {
        self.list.key_of(valid_node(self.node))
    }

    /// Steps to the following entry. See [`Cursor::next`].
    ///
    /// # Panics
    ///
    /// If the cursor is not [`valid`](ArcCursor::valid).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let list = Arc::new(inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator));
    /// list.insert(b"a");
    /// list.insert(b"b");
    /// let mut c = list.cursor_arc();
    /// c.next();
    /// assert_eq!(c.key(), b"b");
    /// ```
    #[inline]
    #[allow(clippy::should_implement_trait)] // RocksDB's name; see `Cursor`.
    pub fn next(&mut self) {
        self.node = self.list.after(valid_node(self.node));
    }

    /// Steps to the preceding entry. See [`Cursor::prev`].
    ///
    /// # Panics
    ///
    /// If the cursor is not [`valid`](ArcCursor::valid).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let list = Arc::new(inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator));
    /// list.insert(b"a");
    /// let mut c = list.cursor_arc();
    /// c.prev();
    /// assert!(!c.valid());
    /// ```
    #[inline]
    pub fn prev(&mut self) {
        self.node = self.list.before(valid_node(self.node));
    }

    /// Moves to the first entry `>= target`. See [`Cursor::seek`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let list = Arc::new(inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator));
    /// list.insert(b"b");
    /// let mut c = list.cursor_arc();
    /// c.seek(b"a");
    /// assert_eq!(c.key(), b"b");
    /// ```
    #[inline]
    pub fn seek(&mut self, target: &[u8]) {
        self.node = self.list.at_or_after(target);
    }

    /// Moves to the last entry `<= target`. See [`Cursor::seek_for_prev`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let list = Arc::new(inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator));
    /// list.insert(b"b");
    /// let mut c = list.cursor_arc();
    /// c.seek_for_prev(b"z");
    /// assert_eq!(c.key(), b"b");
    /// ```
    #[inline]
    pub fn seek_for_prev(&mut self, target: &[u8]) {
        self.node = self.list.at_or_before(target);
    }

    /// Moves to the first entry.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let list = Arc::new(inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator));
    /// let mut c = list.cursor_arc();
    /// list.insert(b"a");
    /// c.seek_to_first();
    /// assert_eq!(c.key(), b"a");
    /// ```
    #[inline]
    pub fn seek_to_first(&mut self) {
        self.node = self.list.first();
    }

    /// Moves to the last entry.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let list = Arc::new(inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator));
    /// list.insert(b"a");
    /// list.insert(b"z");
    /// let mut c = list.cursor_arc();
    /// c.seek_to_last();
    /// assert_eq!(c.key(), b"z");
    /// ```
    #[inline]
    pub fn seek_to_last(&mut self) {
        self.node = self.list.last();
    }
}

impl<C> Clone for ArcCursor<C> {
    #[inline]
    fn clone(&self) -> Self {
        Self {
            list: Arc::clone(&self.list),
            node: self.node,
        }
    }
}

impl<C: Comparator> fmt::Debug for ArcCursor<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArcCursor")
            .field("key", &self.node.map(|n| self.list.key_of(n)))
            .finish()
    }
}

#[inline]
fn valid_node(node: Option<Node>) -> Node {
    match node {
        Some(node) => node,
        None => invalid_cursor(),
    }
}

#[cold]
#[inline(never)]
fn invalid_cursor() -> ! {
    panic!("skiplist: cursor is not on an entry (check `valid()` first)")
}
