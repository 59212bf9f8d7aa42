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
//! of loading that node: about one cache miss fewer per level.
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
mod link;
mod node;
mod search;
mod splice;
mod sync;
mod thread_state;

pub use cursor::{ArcCursor, Cursor};
#[allow(deprecated)]
pub use deprecated::Reserved;
pub use key_comparator::{BytewiseComparator, Comparator};
pub use splice::{SingleWriter, Splice};

use crate::node::{Node, Stride};
use crate::splice::Levels;
use crate::sync::{AtomicUsize, Ordering};
use crate::thread_state::LEN_STRIPES;
use arena::ConcurrentArena;
use crossbeam_utils::CachePadded;
use std::cmp::Ordering as CmpOrdering;
use std::fmt;
use std::sync::Arc;

/// The tallest node tower by default; RocksDB's value.
pub const MAX_HEIGHT: usize = 12;

/// By default, each level holds about one node in this many of the level
/// below; RocksDB's value.
pub const BRANCHING: usize = 4;

/// The tallest tower [`SkipListOptions::with_max_height`] accepts.
pub const MAX_HEIGHT_LIMIT: usize = node::HEIGHT_LIMIT;

/// The shape of a list's towers: its tallest tower and its branching factor.
///
/// The defaults are RocksDB's, 12 levels with branching 4 (1.33 links per
/// node). Branching 2 takes 2 links per node (8 more bytes for every
/// other node) and more levels (about log2 of the entry count), and on
/// machines where a search is bound by dependent cache and TLB misses it
/// searches faster: a search makes about log2(n) dependent moves to the
/// right instead of about 1.5 log2(n) (measurements:
/// `benches/results/inline-skiplist/2026-12-03.md`, "Branching 2").
///
/// # Examples
///
/// ```
/// use arena::ConcurrentArena;
/// use inline_skiplist::{BytewiseComparator, SkipList, SkipListOptions};
///
/// let options = SkipListOptions::new().with_branching(2).with_max_height(20);
/// let list = SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options);
/// for i in 0u32..1000 {
///     assert!(list.insert(&i.to_be_bytes()));
/// }
/// assert!(list.contains(&999u32.to_be_bytes()));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkipListOptions {
    max_height: usize,
    branching: usize,
    key_prefixes: bool,
}

impl SkipListOptions {
    /// RocksDB's shape: [`MAX_HEIGHT`] levels, branching [`BRANCHING`].
    ///
    /// ```
    /// use inline_skiplist::SkipListOptions;
    /// assert_eq!(SkipListOptions::new(), SkipListOptions::default());
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self {
            max_height: MAX_HEIGHT,
            branching: BRANCHING,
            key_prefixes: false,
        }
    }

    /// The tallest tower, in `1..=MAX_HEIGHT_LIMIT` (checked when the list
    /// is built). About log(entries) / log(branching) levels serve a list
    /// well; fewer leave long runs on the top level.
    ///
    /// ```
    /// use arena::ConcurrentArena;
    /// use inline_skiplist::{BytewiseComparator, SkipList, SkipListOptions};
    ///
    /// let options = SkipListOptions::new().with_max_height(16);
    /// let list = SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options);
    /// assert!(list.insert(b"k"));
    /// ```
    #[must_use]
    pub const fn with_max_height(mut self, levels: usize) -> Self {
        self.max_height = levels;
        self
    }

    /// The branching factor: 2, 4, 8 or 16 (checked when the list is
    /// built).
    ///
    /// ```should_panic
    /// use arena::ConcurrentArena;
    /// use inline_skiplist::{BytewiseComparator, SkipList, SkipListOptions};
    ///
    /// let options = SkipListOptions::new().with_branching(3);
    /// SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options); // panics
    /// ```
    #[must_use]
    pub const fn with_branching(mut self, factor: usize) -> Self {
        self.branching = factor;
        self
    }

    /// Whether each link above level 0 keeps, beside it, the comparator's
    /// [`key_prefix`](Comparator::key_prefix) of the node it points to.
    /// Off by default (RocksDB's layout).
    ///
    /// On, a lookup or cursor seek decides most steps down from the prefix
    /// alone, without loading the next node: in a large list that is one
    /// cache miss fewer per level. It costs 8 bytes per link above level 0
    /// (a third of the nodes with branching 4, half with branching 2) and,
    /// per insert, the prefix of each new successor and an atomic minimum
    /// beside each link CAS. It pays only when the comparator's prefixes
    /// differ between most neighbouring keys; with the default `key_prefix`
    /// (0 for every key) it settles nothing.
    ///
    /// ```
    /// use arena::ConcurrentArena;
    /// use inline_skiplist::{BytewiseComparator, SkipList, SkipListOptions};
    ///
    /// let options = SkipListOptions::new().with_branching(2).with_max_height(20).with_key_prefixes(true);
    /// let list = SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options);
    /// for i in 0u32..1000 {
    ///     assert!(list.insert(&i.wrapping_mul(2654435761).to_be_bytes()));
    /// }
    /// assert!(list.contains(&7u32.wrapping_mul(2654435761).to_be_bytes()));
    /// ```
    #[must_use]
    pub const fn with_key_prefixes(mut self, on: bool) -> Self {
        self.key_prefixes = on;
        self
    }

    /// Random bits per extra level, after checking both settings.
    fn bits_per_level(&self) -> u32 {
        assert!(
            matches!(self.branching, 2 | 4 | 8 | 16),
            "skiplist: branching must be 2, 4, 8 or 16, not {}",
            self.branching
        );
        assert!(
            (1..=MAX_HEIGHT_LIMIT).contains(&self.max_height),
            "skiplist: max_height must be in 1..={MAX_HEIGHT_LIMIT}, not {}",
            self.max_height
        );
        self.branching.trailing_zeros()
    }
}

impl Default for SkipListOptions {
    fn default() -> Self {
        Self::new()
    }
}

/// The longest entry a node can hold, in bytes.
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

    /// Walks every level and checks the structure: each level is strictly
    /// ascending, every node of a level is linked in the level below, and no
    /// level at or above `max_height` is used. Returns how many nodes each
    /// level holds, one count per level of the list's options' `max_height`
    /// (`counts[0] == len()` when no insert is running). O(n · height).
    ///
    /// A test hook, hidden from the docs and not part of the stable API:
    /// this crate's tests (unit, proptest, stress, loom) call it after
    /// their inserts.
    ///
    /// # Errors
    ///
    /// The first violation found, which means a bug in this crate or an
    /// inconsistent comparator.
    ///
    /// # Examples
    ///
    /// ```
    /// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
    /// for i in 0u32..100 {
    ///     list.insert(&i.to_le_bytes());
    /// }
    /// let counts = list.check_invariants().unwrap();
    /// assert_eq!(counts[0], 100);
    /// assert!(counts[1] < 100);
    /// ```
    #[doc(hidden)]
    pub fn check_invariants(&self) -> Result<Vec<usize>, InvariantError> {
        let mut counts = vec![0; self.height_cap];
        // Relaxed: a raise we miss only means the levels above are checked
        // against a lower bound, which the next check repeats.
        let max_height = self.max_height.load(Ordering::Relaxed);
        for (level, count) in counts.iter_mut().enumerate() {
            let mut below: Option<Node> = None;
            let mut prev: Option<Node> = None;
            let mut at = self.next_of(None, level);
            while let Some(node) = at {
                *count += 1;
                if level >= max_height {
                    return Err(InvariantError::AboveMaxHeight { level });
                }
                let key = self.key_of(node);
                if let Some(p) = prev
                    && self.cmp.compare(self.key_of(p), key) != CmpOrdering::Less
                {
                    return Err(InvariantError::OutOfOrder { level });
                }
                if level > 0 && self.stride.prefixed() {
                    // SAFETY: `prev` (or the head) is of this list and has
                    // `level`, which is above 0 in the prefixed layout.
                    let (prefix, next) = unsafe {
                        prev.unwrap_or(self.head)
                            .prefix_and_next(level, self.stride)
                    };
                    // Another insert may have linked a node since `at` was
                    // read: the prefix is then that node's or `at`'s.
                    if next.is_none_or(|n| prefix < self.cmp.key_prefix(self.key_of(n))) {
                        return Err(InvariantError::PrefixBelow { level });
                    }
                }
                if level > 0 {
                    loop {
                        below = self.next_of(below, level - 1);
                        match below {
                            Some(b) if b == node => break,
                            Some(b)
                                if self.cmp.compare(self.key_of(b), key) == CmpOrdering::Less => {}
                            _ => return Err(InvariantError::MissingBelow { level }),
                        }
                    }
                }
                prev = at;
                at = self.next_of(at, level);
            }
        }
        Ok(counts)
    }
}

/// A structural violation found by [`SkipList::check_invariants`]; like it,
/// a test hook, hidden from the docs and not part of the stable API.
///
/// # Examples
///
/// ```
/// let list = inline_skiplist::SkipList::new(inline_skiplist::BytewiseComparator);
/// let _: Result<_, inline_skiplist::InvariantError> = list.check_invariants();
/// ```
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvariantError {
    /// Two neighbours at `level` are not in strictly ascending order.
    OutOfOrder {
        /// The level.
        level: usize,
    },
    /// A node linked at `level` is missing from `level - 1`.
    MissingBelow {
        /// The level.
        level: usize,
    },
    /// A node is linked at a level at or above the list's recorded height.
    AboveMaxHeight {
        /// The level.
        level: usize,
    },
    /// In the prefixed layout, a prefix beside a link at `level` is below
    /// the prefix of the node the link points to.
    PrefixBelow {
        /// The level.
        level: usize,
    },
}

impl fmt::Display for InvariantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfOrder { level } => write!(f, "level {level} is not strictly ascending"),
            Self::MissingBelow { level } => {
                write!(f, "a node of level {level} is missing from the level below")
            }
            Self::AboveMaxHeight { level } => {
                write!(f, "level {level} is in use above the recorded max height")
            }
            Self::PrefixBelow { level } => {
                write!(f, "a key prefix at level {level} is below its node's")
            }
        }
    }
}

impl std::error::Error for InvariantError {}

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
