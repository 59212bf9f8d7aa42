//! The cursor, generic over how it holds its list: borrowed
//! (`Cursor<&SkipList<C>>`, also a forward [`Iterator`]) or shared
//! ([`ArcCursor`], `Cursor<Arc<SkipList<C>>>`).

use crate::node::Node;
use crate::{BytewiseComparator, Comparator, SkipList};
use std::fmt;
use std::iter::FusedIterator;
use std::ops::Deref;
use std::sync::Arc;

/// A position in a [`SkipList`], reached through `L`: a borrow
/// `&SkipList<C>` ([`SkipList::cursor`]) or an `Arc<SkipList<C>>`
/// ([`SkipList::cursor_arc`], alias [`ArcCursor`]). Both have the same
/// methods and compile to the same code; only the lifetime of the keys
/// differs (see [`key`](Cursor::key)).
///
/// A cursor is either *valid*, on an entry, or *invalid*, off either end.
/// Both constructors return one on the first entry. Moving it never blocks
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
/// As an [`Iterator`], a borrowing cursor yields its current key and then
/// steps forward, until it becomes invalid. Note the inherent
/// [`Cursor::next`] (advance, returns nothing) takes precedence over
/// [`Iterator::next`] in method-call syntax. An [`ArcCursor`]'s keys borrow
/// the cursor rather than the list, so it is not an `Iterator`.
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
pub struct Cursor<L> {
    list: L,
    node: Option<Node>,
}

/// A cursor that owns a reference count on its list, so it can outlive any
/// borrow: store it in a struct, send it to another thread, keep it while
/// the list is being replaced elsewhere. Made by [`SkipList::cursor_arc`].
///
/// It has every method of the borrowing [`Cursor`]; its keys borrow the
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
pub type ArcCursor<C = BytewiseComparator> = Cursor<Arc<SkipList<C>>>;

/// The methods of every cursor, however it holds the list.
impl<L, C> Cursor<L>
where
    L: Deref<Target = SkipList<C>>,
    C: Comparator,
{
    #[inline]
    pub(crate) fn new(list: L) -> Self {
        let node = list.first();
        Self { list, node }
    }

    /// The list this cursor walks, as the cursor holds it (`&&SkipList` or
    /// `&Arc<SkipList>`).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let list = Arc::new(inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator));
    /// assert!(Arc::ptr_eq(list.cursor_arc().get_ref(), &list));
    /// assert!(std::ptr::eq(*list.cursor().get_ref(), &*list));
    /// ```
    #[inline]
    pub fn get_ref(&self) -> &L {
        &self.list
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

/// The borrowing cursor: keys live as long as the borrow of the list.
impl<'a, C: Comparator> Cursor<&'a SkipList<C>> {
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
}

/// The owning cursor: keys borrow the cursor, which holds the list alive.
impl<C: Comparator> Cursor<Arc<SkipList<C>>> {
    /// The current entry; it lives as long as the borrow of the cursor.
    ///
    /// # Panics
    ///
    /// If the cursor is not [`valid`](Cursor::valid).
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

    /// The former name of [`get_ref`](Cursor::get_ref).
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
}

impl<'a, C: Comparator> Iterator for Cursor<&'a SkipList<C>> {
    type Item = &'a [u8];

    /// Yields the current key, then steps forward.
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let node = self.node?;
        self.node = self.list.after(node);
        Some(self.list.key_of(node))
    }
}

impl<C: Comparator> FusedIterator for Cursor<&SkipList<C>> {}

impl<L: Clone> Clone for Cursor<L> {
    #[inline]
    fn clone(&self) -> Self {
        Self {
            list: self.list.clone(),
            node: self.node,
        }
    }
}

impl<L, C> fmt::Debug for Cursor<L>
where
    L: Deref<Target = SkipList<C>>,
    C: Comparator,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cursor")
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
