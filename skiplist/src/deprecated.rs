//! Names kept for one release so that old callers get a warning, not an
//! error: the reserve-then-insert path (replaced by
//! [`SkipList::insert_with`]) and the former spellings of kept operations.
#![allow(deprecated)] // This module defines and uses them.

use crate::node::Node;
use crate::splice::{Levels, SingleWriter, Splice};
use crate::thread_state::random_height;
use crate::{Comparator, Cursor, SkipList};
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Deprecated names; each says what replaces it.
impl<C: Comparator> SkipList<C> {
    /// Allocates a node for an entry of `len` bytes and returns its key
    /// buffer (zeroed) to fill in place; then insert it with
    /// [`insert_reserved`](SkipList::insert_reserved) or a variant. Until
    /// then nobody else can see it. Dropping it without inserting leaves the
    /// node unused in the arena.
    ///
    /// Replaced by [`insert_with`](SkipList::insert_with), which takes the
    /// filling as a closure.
    ///
    /// # Panics
    ///
    /// If `len` exceeds [`MAX_KEY_LEN`](crate::MAX_KEY_LEN).
    ///
    /// # Examples
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// let mut entry = list.reserve(5);
    /// entry.copy_from_slice(b"hello");
    /// assert!(list.insert_reserved(entry));
    /// assert!(list.contains(b"hello"));
    /// ```
    #[deprecated(note = "use `insert_with(len, hint, |buf| ...)`, which fills the node in place")]
    #[inline]
    pub fn reserve(&self, len: usize) -> Reserved<'_> {
        let height = random_height(self.bits_per_level, self.height_cap);
        let node = Node::alloc(&self.arena, height, len, self.stride);
        // SAFETY: the node was just allocated from our arena, which outlives
        // the borrow of `self`, and is unpublished; nothing else refers to it.
        let (key, len) = unsafe { node.key_ptr() };
        // SAFETY: `key .. key + len` is the node's key area, inside its
        // allocation; zeroing makes it initialised, so `Reserved` can hand out
        // `&mut [u8]`.
        unsafe { key.write_bytes(0, len) };
        Reserved {
            node,
            key,
            len,
            height,
            list_id: self.id,
            _list: PhantomData,
        }
    }

    /// Inserts an entry filled in place after [`reserve`](SkipList::reserve).
    /// Returns `false` if an equal key is present; the list is then unchanged.
    ///
    /// # Panics
    ///
    /// If `entry` was reserved from another list, or as
    /// [`insert`](SkipList::insert).
    ///
    /// # Examples
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// let mut e = list.reserve(1);
    /// e[0] = 7;
    /// assert!(list.insert_reserved(e));
    /// assert!(list.contains(&[7]));
    /// ```
    #[deprecated(note = "use `insert_with(len, None, |buf| ...)`")]
    #[inline]
    pub fn insert_reserved(&self, entry: Reserved<'_>) -> bool {
        self.check_concurrent_mode();
        let (node, height) = self.take_reserved(entry);
        let mut levels = Levels::empty();
        self.link::<true>(node, height, &mut levels, false)
    }

    /// [`insert_reserved`](SkipList::insert_reserved) with a [`Splice`]
    /// hint.
    ///
    /// # Panics
    ///
    /// As [`insert_reserved`](SkipList::insert_reserved).
    ///
    /// # Examples
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// use inline_skiplist::{BytewiseComparator, SkipList, Splice};
    /// let list = SkipList::new(BytewiseComparator);
    /// let mut hint = Splice::new();
    /// for i in 0u16..10 {
    ///     let mut e = list.reserve(2);
    ///     e.copy_from_slice(&i.to_be_bytes());
    ///     assert!(list.insert_reserved_with_hint(e, &mut hint));
    /// }
    /// assert_eq!(list.len(), 10);
    /// ```
    #[deprecated(note = "use `insert_with(len, Some(hint), |buf| ...)`")]
    #[inline]
    pub fn insert_reserved_with_hint(&self, entry: Reserved<'_>, hint: &mut Splice) -> bool {
        self.check_concurrent_mode();
        let (node, height) = self.take_reserved(entry);
        self.link::<true>(node, height, hint.levels_for(self.id), true)
    }

    /// The former spelling of [`SingleWriter::insert`], to which it
    /// forwards.
    ///
    /// # Panics
    ///
    /// As [`SingleWriter::insert`].
    ///
    /// # Examples
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// let mut list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// let mut w = list.single_writer().unwrap();
    /// assert!(list.insert_single_writer(&mut w, b"a"));
    /// assert!(!list.insert_single_writer(&mut w, b"a"));
    /// ```
    #[deprecated(note = "use `writer.insert(&list, key)`")]
    #[inline]
    pub fn insert_single_writer(&self, writer: &mut SingleWriter, key: &[u8]) -> bool {
        writer.insert(self, key)
    }

    /// [`insert_reserved`](SkipList::insert_reserved) without CAS, as the
    /// list's single writer.
    ///
    /// # Panics
    ///
    /// If `writer` or `entry` belongs to another list.
    ///
    /// # Examples
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// let mut list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// let mut w = list.single_writer().unwrap();
    /// let mut e = list.reserve(3);
    /// e.copy_from_slice(b"abc");
    /// assert!(list.insert_reserved_single_writer(&mut w, e));
    /// assert!(list.contains(b"abc"));
    /// ```
    #[deprecated(note = "use `writer.insert_with(&list, len, |buf| ...)`")]
    #[inline]
    pub fn insert_reserved_single_writer(
        &self,
        writer: &mut SingleWriter,
        entry: Reserved<'_>,
    ) -> bool {
        self.check_writer(writer);
        let (node, height) = self.take_reserved(entry);
        self.link::<false>(node, height, &mut writer.levels, false)
    }

    /// The former name of [`cursor`](SkipList::cursor).
    ///
    /// # Examples
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// list.insert(b"a");
    /// assert_eq!(list.iter().key(), b"a");
    /// ```
    #[deprecated(note = "use `cursor`, the name `vecmem` shares")]
    #[inline]
    pub fn iter(&self) -> Cursor<&Self> {
        self.cursor()
    }

    #[inline]
    pub(crate) fn take_reserved(&self, entry: Reserved<'_>) -> (Node, usize) {
        if entry.list_id != self.id {
            crate::link::foreign("Reserved entry");
        }
        (entry.node, entry.height)
    }
}

/// A node allocated by [`SkipList::reserve`] whose entry is being filled in
/// place; it dereferences to the entry's bytes (zeroed at first).
///
/// Insert it with [`SkipList::insert_reserved`],
/// [`insert_reserved_with_hint`](SkipList::insert_reserved_with_hint) or
/// [`insert_reserved_single_writer`](SkipList::insert_reserved_single_writer)
/// on the list it came from. Nobody else sees the bytes until then, and they
/// never change afterwards. Replaced by [`SkipList::insert_with`] and
/// [`SingleWriter::insert_with`], which lend the bytes to a closure.
///
/// # Examples
///
/// ```
/// # #![allow(deprecated)]
/// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
/// let (key, value) = (b"user-key", b"value");
/// let mut entry = list.reserve(key.len() + value.len());
/// entry[..key.len()].copy_from_slice(key);
/// entry[key.len()..].copy_from_slice(value);
/// assert!(list.insert_reserved(entry));
/// assert_eq!(list.cursor().key(), b"user-keyvalue");
/// ```
#[deprecated(note = "use `SkipList::insert_with`, which fills the node in place")]
pub struct Reserved<'a> {
    node: Node,
    key: NonNull<u8>,
    len: usize,
    height: usize,
    list_id: u64,
    /// Borrows the list, which keeps its arena (and so this node) alive.
    _list: PhantomData<&'a ()>,
}

// SAFETY: a `Reserved` is the only handle on its unpublished bytes, like a
// `&'a mut [u8]`, which is Send.
unsafe impl Send for Reserved<'_> {}
// SAFETY: shared access only reads the bytes, like `&'a mut [u8]`, which is
// Sync.
unsafe impl Sync for Reserved<'_> {}

impl Deref for Reserved<'_> {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: `len` initialised (zeroed) bytes at `key` that live for 'a;
        // the only mutable access is through `&mut self`.
        unsafe { std::slice::from_raw_parts(self.key.as_ptr(), self.len) }
    }
}

impl DerefMut for Reserved<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` makes this the only access.
        unsafe { std::slice::from_raw_parts_mut(self.key.as_ptr(), self.len) }
    }
}

impl AsRef<[u8]> for Reserved<'_> {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl AsMut<[u8]> for Reserved<'_> {
    #[inline]
    fn as_mut(&mut self) -> &mut [u8] {
        self
    }
}

impl fmt::Debug for Reserved<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reserved")
            .field("len", &self.len)
            .field("height", &self.height)
            .finish_non_exhaustive()
    }
}
