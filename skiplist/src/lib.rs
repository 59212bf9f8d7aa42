//! A concurrent, insert-only skiplist whose nodes live in an arena: RocksDB's
//! `InlineSkipList` in Rust, the default memtable of an LSM engine.
//!
//! # What it is
//!
//! A sorted set of opaque byte strings, ordered by a [`Comparator`]. Any
//! number of threads insert through `&self` while any number of readers walk
//! it with [`Cursor`]s; readers never block and never retry. Entries are never
//! removed or changed: the whole list is dropped at once, with its arena.
//!
//! Each node is *one* allocation from a [`ConcurrentArena`]:
//! a tower of 1 to 12 next-links (branching factor 4, so 1.33 links per node
//! on average; both are [`SkipListOptions`]) followed by a 4-byte length and
//! the key bytes. There is no
//! per-node heap allocation, no reference count, no epoch pinning, and no
//! cache line that every insert writes: heights come from a per-thread random
//! generator and the length is kept in per-thread stripes. An insert links
//! the new node level by level from the bottom up with one CAS per level, so
//! a key is present as soon as its level-0 link is in.
//!
//! An LSM engine stores an entry as one byte string (its internal key and
//! value encoded together) and orders entries with its own comparator. To
//! avoid a copy it can [`insert_with`](SkipList::insert_with) a length and a
//! closure that encodes the entry straight into the new node.
//!
//! # The calls
//!
//! | to | call |
//! |---|---|
//! | insert a copy of a key | [`insert`](SkipList::insert), or [`insert_with_hint`](SkipList::insert_with_hint) with a [`Splice`] |
//! | insert an entry encoded in place | [`insert_with(len, hint, fill)`](SkipList::insert_with) |
//! | insert as the list's one writer | [`SingleWriter::insert`], [`SingleWriter::insert_with`] |
//! | read | [`contains`](SkipList::contains); [`cursor`](SkipList::cursor) (borrowing, also an [`Iterator`]) or [`cursor_arc`](SkipList::cursor_arc) (an [`ArcCursor`], owning an `Arc` of the list) |
//! | measure | [`len`](SkipList::len), [`is_empty`](SkipList::is_empty), [`memory_usage`](SkipList::memory_usage) |
//!
//! Both cursors are one type, [`Cursor<L>`](Cursor), generic over how it
//! holds the list (`&SkipList` or `Arc<SkipList>`). The workspace's other
//! memtable, `vecmem`, uses the same names for the same operations, so an
//! engine can hold either behind one interface.
//!
//! # When to use it
//!
//! For an append-mostly sorted buffer that is written by many threads, read
//! concurrently, and thrown away whole: a memtable, a sorted run being built,
//! an in-memory index of a log segment. Sequential or clustered keys insert
//! in near O(1) with a [`Splice`] hint, and a list that has one writer at a
//! time can drop the CAS altogether with a [`SingleWriter`] token.
//!
//! Not for maps that delete or update in place, and not when memory must be
//! returned entry by entry: the arena only shrinks when the list is dropped.
//! A rejected duplicate also leaves its node in the arena.
//!
//! A random insert or lookup in a large list costs a chain of dependent
//! cache misses (about 30 nodes visited for a million entries), not
//! instructions. Searches prefetch the next level's successor while they wait
//! on the current node, which overlaps one miss per level; beyond that, give
//! large lists an arena whose blocks are backed by transparent huge pages,
//! which makes each miss cheaper (fewer TLB misses), and consider branching
//! 2 ([`SkipListOptions::with_branching`]): a search then makes about log2(n)
//! dependent moves to the right, against about 1.5 log2(n) with RocksDB's 4.
//! With [`SkipListOptions::with_key_prefixes`], each link above level 0
//! also holds the comparator's [`key_prefix`](Comparator::key_prefix) of the
//! node it points to, and a search steps down on the prefix alone instead
//! of loading that node: about one cache miss fewer per level. That layout
//! also keeps an entry index ([`SkipListOptions::with_entry_index`]): a
//! sorted array, in the arena, of the prefixes of the nodes one level in
//! 16 holds, which a search binary-searches to start at that level beside
//! its key, taking the levels above off its chain of misses. Because the
//! list is insert-only, an index built earlier stays a correct place to
//! start; it is rebuilt each time the list doubles.
//!
//! # Alternatives
//!
//! - **`crossbeam_skiplist::SkipMap`/`SkipSet`** are general concurrent
//!   ordered maps with removal. They pay for it: one global-allocator call per
//!   node (keys and values allocate separately), an epoch pin on every
//!   operation, SeqCst CAS on every level, and a shared hot cache line (height
//!   seed, length, max height) that every insert writes. No custom
//!   comparator is released, and iterators borrow the map. Pick them when you
//!   need removal or typed keys and values.
//! - **`scc::TreeIndex`** is a concurrent B+tree with removal, whose
//!   lookups read a few adjacent lines per level. With key prefixes and the
//!   entry index this list looks up about as fast and inserts faster; pick
//!   the tree when you need removal.
//! - **`Mutex<BTreeMap>`** (or `RwLock`) is compact and fast on one thread,
//!   but writers serialise and readers block behind them; a scan must hold
//!   the lock or copy.
//! - **agatedb's `skiplist`** (tikv/agatedb, unpublished) is also an arena
//!   skiplist with a comparator, but stores keys and values as `Bytes` outside
//!   the arena, and its growable arena is not safe with concurrent writers.
//!
//! # Example
//!
//! ```
//! use inline_skiplist::{BytewiseComparator, SkipList};
//! use std::sync::Arc;
//!
//! let list = Arc::new(SkipList::new(BytewiseComparator));
//! let writers: Vec<_> = (0u32..4)
//!     .map(|t| {
//!         let list = Arc::clone(&list);
//!         std::thread::spawn(move || {
//!             for i in 0u32..250 {
//!                 assert!(list.insert(&(i * 4 + t).to_be_bytes()));
//!             }
//!         })
//!     })
//!     .collect();
//! for w in writers {
//!     w.join().unwrap();
//! }
//! assert_eq!(list.len(), 1000);
//! assert!(!list.insert(&7u32.to_be_bytes()), "duplicates are rejected");
//!
//! let mut cursor = list.cursor();
//! cursor.seek(&500u32.to_be_bytes());
//! assert_eq!(cursor.key(), 500u32.to_be_bytes());
//! assert!(list.cursor().is_sorted());
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod cursor;
mod deprecated;
mod index;
mod invariants;
mod link;
mod node;
mod options;
mod search;
mod splice;
mod sync;
mod thread_state;

pub use cursor::{ArcCursor, Cursor};
#[allow(deprecated)]
pub use deprecated::Reserved;
#[cfg(loom)]
pub use index::loom_index_build_step;
pub use invariants::InvariantError;
pub use key_comparator::{BytewiseComparator, Comparator};
pub use options::{BRANCHING, MAX_HEIGHT, MAX_HEIGHT_LIMIT, SkipListOptions};
pub use splice::{SingleWriter, Splice};

use crate::node::{Node, Stride};
use crate::splice::Levels;
use crate::sync::{AtomicUsize, Ordering};
use crate::thread_state::LEN_STRIPES;
use arena::ConcurrentArena;
use crossbeam_utils::CachePadded;
use std::fmt;
use std::sync::Arc;

/// The longest entry a node can hold, in bytes.
///
/// # Examples
///
/// ```
/// use inline_skiplist::{BytewiseComparator, MAX_KEY_LEN, SkipList};
///
/// assert_eq!(MAX_KEY_LEN, u32::MAX as usize); // a node's 4-byte length
/// let list = SkipList::new(BytewiseComparator);
/// let long = vec![7u8; 1 << 20]; // far below the limit
/// assert!(list.insert(&long));
/// assert_eq!(list.cursor().key(), &long[..]); // a fresh cursor is on the first entry
/// ```
pub const MAX_KEY_LEN: usize = node::MAX_KEY_LEN;

/// A concurrent insert-only skiplist of byte strings stored in an arena.
///
/// See the [crate documentation](crate) for the design. The type is
/// `Send + Sync` when the comparator is; a comparator that is not `Sync`
/// (here, one holding an `Rc`) keeps the list on one thread:
///
/// ```compile_fail
/// use inline_skiplist::SkipList;
/// use std::rc::Rc;
///
/// let weight = Rc::new(1u8);
/// let list = SkipList::new(move |a: &[u8], b: &[u8]| (a.len() * *weight as usize).cmp(&b.len()));
/// std::thread::scope(|s| {
///     s.spawn(|| list.insert(b"k"));
/// });
/// ```
///
/// # Examples
///
/// ```
/// use inline_skiplist::{BytewiseComparator, SkipList};
///
/// let list = SkipList::new(BytewiseComparator);
/// assert!(list.insert(b"b"));
/// assert!(list.insert(b"a"));
/// assert!(!list.insert(b"a"));
/// assert!(list.contains(b"a"));
/// assert_eq!(list.cursor().collect::<Vec<_>>(), [b"a", b"b"]);
/// ```
pub struct SkipList<C = BytewiseComparator> {
    /// A node of height `height_cap` with an empty key, before every entry;
    /// searches treat it as smaller than any key without comparing.
    head: Node,
    /// The tallest tower this list builds (its options' `max_height`).
    height_cap: usize,
    /// Random bits per extra level: log2 of the branching factor.
    bits_per_level: u32,
    /// The node layout: with or without key prefixes beside the links.
    stride: Stride,
    /// The height of the tallest tower so far; searches start there. Only
    /// ever raised.
    max_height: AtomicUsize,
    /// Set once by `single_writer`: the CAS inserts then refuse to run.
    single_writer: bool,
    /// Unique for the process's lifetime; ties hints, tokens and reservations
    /// to this list.
    id: u64,
    cmp: C,
    /// Boxed so that the list can move (into an `Arc`, say) without moving
    /// the arena, whatever the arena keeps inline.
    arena: Box<ConcurrentArena>,
    /// Successful inserts, striped by thread so that inserts on different
    /// threads do not write the same cache line.
    len: [CachePadded<AtomicUsize>; LEN_STRIPES],
    /// The entry index of the prefixed layout (see `index`).
    index: index::IndexSlot,
}

impl<C: Comparator> SkipList<C> {
    /// An empty list with its own arena.
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// assert!(list.is_empty());
    /// ```
    pub fn new(cmp: C) -> Self {
        Self::with_arena(cmp, ConcurrentArena::new())
    }

    /// An empty list allocating from `arena`, for example one with large
    /// blocks (fewer page faults, and huge-page friendly if the arena maps
    /// them so).
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::ConcurrentArena;
    /// use inline_skiplist::{BytewiseComparator, SkipList};
    ///
    /// let list = SkipList::with_arena(BytewiseComparator, ConcurrentArena::with_block_size(4 << 20));
    /// list.insert(b"k");
    /// assert!(list.memory_usage() > 0);
    /// ```
    pub fn with_arena(cmp: C, arena: ConcurrentArena) -> Self {
        Self::with_options(cmp, arena, SkipListOptions::new())
    }

    /// An empty list allocating from `arena`, with towers shaped by
    /// `options`.
    ///
    /// # Panics
    ///
    /// If the options are out of range: a branching factor other than 2, 4,
    /// 8 or 16, or a `max_height` outside `1..=MAX_HEIGHT_LIMIT`.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::ConcurrentArena;
    /// use inline_skiplist::{BytewiseComparator, SkipList, SkipListOptions};
    ///
    /// let options = SkipListOptions::new().with_branching(2).with_max_height(20);
    /// let list = SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options);
    /// list.insert(b"k");
    /// assert!(list.contains(b"k"));
    /// ```
    pub fn with_options(cmp: C, arena: ConcurrentArena, options: SkipListOptions) -> Self {
        use std::sync::atomic::{AtomicU64, Ordering as StdOrdering};
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let bits_per_level = options.bits_per_level();
        let arena = Box::new(arena);
        let stride = if options.key_prefixes {
            Stride::PREFIXED
        } else {
            Stride::PLAIN
        };
        let head = Node::alloc(&arena, options.max_height, 0, stride);
        Self {
            head,
            height_cap: options.max_height,
            bits_per_level,
            stride,
            max_height: AtomicUsize::new(1),
            single_writer: false,
            // Relaxed: only uniqueness matters, which the RMW gives.
            id: NEXT_ID.fetch_add(1, StdOrdering::Relaxed),
            cmp,
            arena,
            len: std::array::from_fn(|_| CachePadded::new(AtomicUsize::new(0))),
            index: index::IndexSlot::new(
                options.key_prefixes && options.entry_index,
                bits_per_level,
            ),
        }
    }

    /// The comparator that orders the list.
    ///
    /// # Examples
    ///
    /// ```
    /// use inline_skiplist::{BytewiseComparator, Comparator, SkipList};
    /// let list = SkipList::new(BytewiseComparator);
    /// assert!(list.comparator().equal(b"x", b"x"));
    /// ```
    #[inline]
    pub fn comparator(&self) -> &C {
        &self.cmp
    }

    /// The arena holding the nodes. Other data allocated from it lives as
    /// long as the list and counts in [`memory_usage`](SkipList::memory_usage).
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// let before = list.memory_usage();
    /// list.arena().alloc_layout(std::alloc::Layout::new::<[u64; 64]>());
    /// assert!(list.memory_usage() >= before + 512);
    /// ```
    #[inline]
    pub fn arena(&self) -> &ConcurrentArena {
        &self.arena
    }

    /// Inserts a copy of `key`. Returns `false`, leaving the list unchanged,
    /// if an equal key is present (the node allocated for it stays in the
    /// arena). Safe to call from many threads at once.
    ///
    /// # Panics
    ///
    /// If the list was given a [`SingleWriter`], or `key` is longer than
    /// [`MAX_KEY_LEN`].
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// assert!(list.insert(b"k"));
    /// assert!(!list.insert(b"k"));
    /// assert_eq!(list.len(), 1);
    /// ```
    #[inline]
    pub fn insert(&self, key: &[u8]) -> bool {
        self.check_concurrent_mode();
        let (node, height) = self.alloc_copy(key);
        let mut levels = Levels::empty();
        self.link::<true>(node, height, &mut levels, false)
    }

    /// As [`insert`](SkipList::insert), starting from the brackets of the
    /// previous insert through `hint`: near O(1) for sequential or clustered
    /// keys. See [`Splice`].
    ///
    /// # Panics
    ///
    /// As [`insert`](SkipList::insert).
    ///
    /// # Examples
    ///
    /// ```
    /// use inline_skiplist::{BytewiseComparator, SkipList, Splice};
    /// let list = SkipList::new(BytewiseComparator);
    /// let mut hint = Splice::new();
    /// for i in 0u64..100 {
    ///     list.insert_with_hint(&i.to_be_bytes(), &mut hint);
    /// }
    /// assert_eq!(list.len(), 100);
    /// ```
    #[inline]
    pub fn insert_with_hint(&self, key: &[u8], hint: &mut Splice) -> bool {
        self.check_concurrent_mode();
        let (node, height) = self.alloc_copy(key);
        self.link::<true>(node, height, hint.levels_for(self.id), true)
    }

    /// Inserts an entry of `len` bytes that `fill` writes straight into the
    /// new node (the bytes start zeroed): [`insert`](SkipList::insert)
    /// without the intermediate buffer, for callers that encode their
    /// entries, as an LSM engine does with its internal key and value. With
    /// a `hint`, the insert starts from its brackets, as in
    /// [`insert_with_hint`](SkipList::insert_with_hint).
    ///
    /// Returns `false`, leaving the list unchanged, if an equal key is
    /// present (the node stays in the arena). Nobody else sees the bytes
    /// before `fill` returns, and they never change afterwards. Safe to call
    /// from many threads at once.
    ///
    /// # Panics
    ///
    /// As [`insert`](SkipList::insert), and if `fill` panics (the node then
    /// stays unused in the arena, the list and `hint` unchanged).
    ///
    /// # Examples
    ///
    /// ```
    /// use inline_skiplist::{BytewiseComparator, SkipList, Splice};
    ///
    /// let list = SkipList::new(BytewiseComparator);
    /// let (key, value) = (b"user-key", b"value");
    /// let inserted = list.insert_with(key.len() + value.len(), None, |buf| {
    ///     buf[..key.len()].copy_from_slice(key);
    ///     buf[key.len()..].copy_from_slice(value);
    /// });
    /// assert!(inserted);
    /// assert_eq!(list.cursor().key(), b"user-keyvalue");
    ///
    /// let mut hint = Splice::new();
    /// for i in 0u16..10 {
    ///     list.insert_with(2, Some(&mut hint), |buf| buf.copy_from_slice(&i.to_be_bytes()));
    /// }
    /// assert_eq!(list.len(), 11);
    /// ```
    #[inline]
    pub fn insert_with(
        &self,
        len: usize,
        hint: Option<&mut Splice>,
        fill: impl FnOnce(&mut [u8]),
    ) -> bool {
        self.check_concurrent_mode();
        let (node, height) = self.alloc_with(len, fill);
        // Two calls rather than one with a chosen splice: each inlines
        // `link` with `partial_fix` known, as the separate methods did.
        match hint {
            Some(hint) => self.link::<true>(node, height, hint.levels_for(self.id), true),
            None => {
                let mut levels = Levels::empty();
                self.link::<true>(node, height, &mut levels, false)
            }
        }
    }

    /// Turns the list into a single-writer list and returns the one
    /// [`SingleWriter`] token, or `None` if it was already handed out.
    ///
    /// `&mut self` proves that no insert is running now; from then on the
    /// CAS-based inserts panic, so every insert goes through the token
    /// ([`SingleWriter::insert`], [`SingleWriter::insert_with`]) and at most
    /// one runs at a time, while any number of readers read.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// let mut w = list.single_writer().unwrap();
    /// assert!(list.single_writer().is_none());
    /// assert!(w.insert(&list, b"k"));
    /// ```
    pub fn single_writer(&mut self) -> Option<SingleWriter> {
        if self.single_writer {
            return None;
        }
        self.single_writer = true;
        Some(SingleWriter {
            list_id: self.id,
            levels: Levels::empty(),
        })
    }

    /// Whether an entry equal to `key` is present.
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// list.insert(b"k");
    /// assert!(list.contains(b"k"));
    /// assert!(!list.contains(b"j"));
    /// ```
    #[inline]
    pub fn contains(&self, key: &[u8]) -> bool {
        self.at_or_after(key)
            .is_some_and(|n| self.cmp.equal(self.key_of(n), key))
    }

    /// The number of successful inserts. Exact when no insert is running;
    /// while inserts run it may miss those in flight. O(stripes), not O(n).
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// list.insert(b"a");
    /// list.insert(b"a");
    /// assert_eq!(list.len(), 1);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.len
            .iter()
            // Relaxed: a statistic; callers that need it exact synchronise
            // with the inserters some other way (join, a lock, a channel).
            .map(|stripe| stripe.load(Ordering::Relaxed))
            .sum()
    }

    /// Whether the list has no entries (see [`len`](SkipList::len)).
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// assert!(list.is_empty());
    /// list.insert(b"");
    /// assert!(!list.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.first().is_none()
    }

    /// Bytes of arena memory in use: nodes (including rejected duplicates
    /// and unused reservations), the head, and whatever else was allocated
    /// from [`arena`](SkipList::arena).
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// let empty = list.memory_usage();
    /// list.insert(&[0; 100]);
    /// assert!(list.memory_usage() >= empty + 100);
    /// ```
    #[inline]
    pub fn memory_usage(&self) -> usize {
        self.arena.approximate_memory_usage()
    }

    /// A cursor on the first entry (invalid if the list is empty), borrowing
    /// the list. It is also an [`Iterator`] over the keys from there on.
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// list.insert(b"b");
    /// list.insert(b"a");
    /// assert_eq!(list.cursor().collect::<Vec<_>>(), [b"a", b"b"]);
    /// ```
    #[inline]
    pub fn cursor(&self) -> Cursor<&Self> {
        Cursor::new(self)
    }

    /// A cursor on the first entry that holds the list alive by itself.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let list = Arc::new(inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator));
    /// list.insert(b"a");
    /// let cursor = list.cursor_arc();
    /// drop(list);
    /// assert_eq!(cursor.key(), b"a");
    /// ```
    #[inline]
    pub fn cursor_arc(self: &Arc<Self>) -> ArcCursor<C> {
        Cursor::new(Arc::clone(self))
    }
}

impl<C: Comparator + Default> Default for SkipList<C> {
    fn default() -> Self {
        Self::new(C::default())
    }
}

impl<C: Comparator> fmt::Debug for SkipList<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkipList")
            .field("len", &self.len())
            .field("max_height", &self.current_max_height())
            .field("memory_usage", &self.memory_usage())
            .field("single_writer", &self.single_writer)
            .finish_non_exhaustive()
    }
}

impl<'a, C: Comparator> IntoIterator for &'a SkipList<C> {
    type Item = &'a [u8];
    type IntoIter = Cursor<&'a SkipList<C>>;

    #[inline]
    fn into_iter(self) -> Cursor<&'a SkipList<C>> {
        self.cursor()
    }
}

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(all(test, not(loom)))]
mod tests;
