//! The shape of a list's towers: [`SkipListOptions`], with its defaults and
//! limits.

#[cfg(doc)] // for the links in the docs
use crate::Comparator;
use crate::node;

/// The tallest node tower by default; RocksDB's value.
///
/// # Examples
///
/// ```
/// use inline_skiplist::{MAX_HEIGHT, SkipListOptions};
///
/// let default = SkipListOptions::default();
/// assert_eq!(SkipListOptions::new().with_max_height(MAX_HEIGHT), default);
/// assert_ne!(SkipListOptions::new().with_max_height(MAX_HEIGHT + 1), default);
/// ```
pub const MAX_HEIGHT: usize = 12;

/// By default, each level holds about one node in this many of the level
/// below; RocksDB's value.
///
/// # Examples
///
/// ```
/// use inline_skiplist::{BRANCHING, SkipListOptions};
///
/// let default = SkipListOptions::default();
/// assert_eq!(SkipListOptions::new().with_branching(BRANCHING), default);
/// assert_ne!(SkipListOptions::new().with_branching(2), default);
/// ```
pub const BRANCHING: usize = 4;

/// The tallest tower [`SkipListOptions::with_max_height`] accepts.
///
/// # Examples
///
/// ```
/// use arena::ConcurrentArena;
/// use inline_skiplist::{BytewiseComparator, MAX_HEIGHT_LIMIT, SkipList, SkipListOptions};
///
/// let build = |levels| {
///     let options = SkipListOptions::new().with_max_height(levels);
///     SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options)
/// };
/// assert!(build(MAX_HEIGHT_LIMIT).insert(b"k"));
/// assert!(std::panic::catch_unwind(|| build(MAX_HEIGHT_LIMIT + 1)).is_err()); // too tall
/// ```
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
    pub(crate) max_height: usize,
    branching: usize,
    pub(crate) key_prefixes: bool,
    pub(crate) entry_index: bool,
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
            entry_index: true,
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
    /// cache miss fewer per level. Beside the prefix sit two hints, the
    /// next node's successors at that level and one level down, which a
    /// search moving right prefetches, so that its next step finds its node
    /// on the way. It costs 24 bytes per link above level 0 (a third of the
    /// nodes have one with branching 4, half with branching 2) and, per
    /// insert, the prefix of each new successor, an atomic minimum beside
    /// each link CAS and four hint stores per level above 0. It pays only when the comparator's prefixes
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

    /// Whether a list with key prefixes also keeps an entry index: a
    /// sorted array of the prefixes of the nodes at the level that holds
    /// about one node in 16, with their handles, in the arena. A lookup,
    /// seek or insert binary-searches it and starts at that level beside
    /// its key, instead of walking down every level above: in a large list
    /// that takes about half of a search's dependent cache misses off its
    /// chain. On by default; it has no effect without key prefixes.
    ///
    /// The index is built when the list reaches 16,384 entries (64 in debug
    /// builds, so that tests of small lists use it) and rebuilt each time
    /// the list has doubled since the last build began. A build reads one
    /// node in 16 of the list and copies what it read into the arena, in
    /// steps of at most 256 nodes or 2,048 entries, one step taken by one
    /// insert in 256, so no insert stalls for a whole build. A search
    /// in between starts from the last index, which stays correct as the
    /// list grows. The indexes take less than 2 bytes per entry with
    /// branching 2, counted in [`memory_usage`](crate::SkipList::memory_usage).
    ///
    /// ```
    /// use arena::ConcurrentArena;
    /// use inline_skiplist::{BytewiseComparator, SkipList, SkipListOptions};
    ///
    /// let options = SkipListOptions::new().with_key_prefixes(true).with_entry_index(false);
    /// let list = SkipList::with_options(BytewiseComparator, ConcurrentArena::new(), options);
    /// for i in 0u32..20_000 {
    ///     assert!(list.insert(&i.wrapping_mul(2654435761).to_be_bytes()));
    /// }
    /// assert!(list.contains(&7u32.wrapping_mul(2654435761).to_be_bytes()));
    /// ```
    #[must_use]
    pub const fn with_entry_index(mut self, on: bool) -> Self {
        self.entry_index = on;
        self
    }

    /// Random bits per extra level, after checking both settings.
    pub(crate) fn bits_per_level(&self) -> u32 {
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
