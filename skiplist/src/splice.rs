//! Splices: per-level brackets around an insert position, reused as hints.

use crate::node::{HEIGHT_LIMIT, Node};
use crate::{Comparator, SkipList};

/// For levels `0..height`, `prev[i]` and `next[i]` bracket an insert
/// position at level `i`: `prev[i] < key <= next[i]`, with `None` in `prev`
/// meaning the head (before every key) and `None` in `next` the end of the
/// level (after every key). The brackets nest, `prev[i + 1] <= prev[i]` and
/// `next[i] <= next[i + 1]`, and level `height` is always (head, end). They
/// need not be tight: other inserts may have put nodes between `prev[i]` and
/// `next[i]`, which the insert path detects and repairs.
///
/// `height == 0` marks a splice that holds nothing usable.
#[derive(Clone, Debug)]
pub(crate) struct Levels {
    pub(crate) height: usize,
    pub(crate) prev: [Option<Node>; HEIGHT_LIMIT + 1],
    pub(crate) next: [Option<Node>; HEIGHT_LIMIT + 1],
}

impl Levels {
    #[inline]
    pub(crate) const fn empty() -> Self {
        Self {
            height: 0,
            prev: [None; HEIGHT_LIMIT + 1],
            next: [None; HEIGHT_LIMIT + 1],
        }
    }
}

/// An insert hint: where the previous insert through it landed.
///
/// Pass the same `Splice` to consecutive
/// [`insert_with_hint`](crate::SkipList::insert_with_hint) calls whose keys
/// are close to each other (ascending keys, or keys clustered around a few
/// points). The insert then starts from the brackets around the previous key
/// instead of from the head: a sequential insert costs O(1) instead of
/// O(log n), a clustered one O(log d) for a distance of `d` nodes. A hint
/// that is far off, or stale because other threads inserted nearby, is
/// detected and repaired; it only costs speed, never correctness.
///
/// A splice remembers which list it was used with: using it with another list
/// silently starts it afresh, so it can never lead an insert into foreign
/// nodes. Keep one splice per thread and per stream of keys.
///
/// # Examples
///
/// ```
/// use inline_skiplist::{BytewiseComparator, SkipList, Splice};
///
/// let list = SkipList::new(BytewiseComparator);
/// let mut hint = Splice::new();
/// for i in 0u32..1000 {
///     assert!(list.insert_with_hint(&i.to_be_bytes(), &mut hint));
/// }
/// assert_eq!(list.len(), 1000);
/// ```
#[derive(Clone, Debug)]
pub struct Splice {
    /// The list the brackets belong to; 0 (no list has it) when unused.
    pub(crate) list_id: u64,
    pub(crate) levels: Levels,
}

impl Splice {
    /// An empty hint: its first insert searches from the head.
    ///
    /// # Examples
    ///
    /// ```
    /// let hint = inline_skiplist::Splice::new();
    /// # let _ = hint;
    /// ```
    #[inline]
    pub const fn new() -> Self {
        Self {
            list_id: 0,
            levels: Levels::empty(),
        }
    }

    /// The brackets, cleared first when they belong to another list.
    #[inline]
    pub(crate) fn levels_for(&mut self, list_id: u64) -> &mut Levels {
        if self.list_id != list_id {
            self.list_id = list_id;
            self.levels.height = 0;
        }
        &mut self.levels
    }
}

impl Default for Splice {
    #[inline]
    fn default() -> Self {
        Self::new()
    }
}

/// The right to insert into one list without CAS.
///
/// Obtained once per list from [`SkipList::single_writer`],
/// which needs `&mut` access to the list, i.e. a moment when no other thread
/// can be inserting. From then on the list accepts inserts only through this
/// token ([`insert`](SingleWriter::insert),
/// [`insert_with`](SingleWriter::insert_with), the list's own pair);
/// the CAS-based inserts panic. Since the token is neither `Clone` nor usable
/// without `&mut`, at most one insert runs at a time, and links can be
/// published with plain release stores while readers keep reading.
///
/// The token also carries the list's own splice, so sequential keys insert in
/// O(1) without a caller hint (RocksDB's non-concurrent `Insert` does the
/// same).
///
/// # Examples
///
/// ```
/// use inline_skiplist::{BytewiseComparator, SkipList};
/// use std::sync::Arc;
///
/// let mut list = SkipList::new(BytewiseComparator);
/// let mut writer = list.single_writer().expect("first call");
/// let list = Arc::new(list);
///
/// let reader = {
///     let list = Arc::clone(&list);
///     std::thread::spawn(move || list.cursor().count())
/// };
/// for i in 0u32..100 {
///     assert!(writer.insert(&list, &i.to_be_bytes()));
/// }
/// assert!(reader.join().unwrap() <= 100);
/// assert_eq!(list.len(), 100);
/// ```
#[derive(Debug)]
pub struct SingleWriter {
    pub(crate) list_id: u64,
    pub(crate) levels: Levels,
}

impl SingleWriter {
    /// Inserts a copy of `key` into `list` without CAS, as its single
    /// writer. Sequential keys take O(1): the token keeps the previous
    /// insert's brackets. Returns `false`, leaving the list unchanged, if an
    /// equal key is present.
    ///
    /// # Panics
    ///
    /// If the token belongs to another list, or `key` is longer than
    /// [`MAX_KEY_LEN`](crate::MAX_KEY_LEN).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// let mut w = list.single_writer().unwrap();
    /// assert!(w.insert(&list, b"a"));
    /// assert!(!w.insert(&list, b"a"));
    /// ```
    #[inline]
    pub fn insert<C: Comparator>(&mut self, list: &SkipList<C>, key: &[u8]) -> bool {
        list.check_writer(self);
        let (node, height) = list.alloc_copy(key);
        list.link::<false>(node, height, &mut self.levels, false)
    }

    /// Inserts into `list`, without CAS, an entry of `len` bytes that `fill`
    /// writes straight into the new node (the bytes start zeroed): the
    /// single writer's [`SkipList::insert_with`]. Returns `false`, leaving
    /// the list unchanged, if an equal key is present.
    ///
    /// # Panics
    ///
    /// As [`insert`](SingleWriter::insert), and if `fill` panics (the node
    /// then stays unused in the arena, the list unchanged).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// let mut w = list.single_writer().unwrap();
    /// assert!(w.insert_with(&list, 3, |buf| buf.copy_from_slice(b"abc")));
    /// assert!(list.contains(b"abc"));
    /// ```
    #[inline]
    pub fn insert_with<C: Comparator>(
        &mut self,
        list: &SkipList<C>,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> bool {
        list.check_writer(self);
        let (node, height) = list.alloc_with(len, fill);
        list.link::<false>(node, height, &mut self.levels, false)
    }
}
