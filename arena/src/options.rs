//! Configuration, statistics and errors shared by [`Arena`] and
//! [`ConcurrentArena`].

use std::fmt;

use crate::{Arena, BlockPool, ConcurrentArena};

/// Bytes of the block that lives inside the arena value itself (RocksDB's
/// `kInlineSize`): the first allocations use it, so an arena that stays small
/// reserves no block at all.
///
/// # Examples
///
/// ```
/// use arena::{Arena, INLINE_BLOCK_SIZE};
///
/// let arena = Arena::new();
/// arena.alloc([0u8; INLINE_BLOCK_SIZE]); // fills the inline block exactly
/// assert!(arena.is_in_inline_block());
/// assert_eq!(arena.memory_allocated_bytes(), INLINE_BLOCK_SIZE);
/// ```
pub const INLINE_BLOCK_SIZE: usize = 2048;

/// Smallest block size; smaller requests are raised to it (RocksDB's
/// `kMinBlockSize`).
///
/// # Examples
///
/// ```
/// use arena::{ArenaOptions, MIN_BLOCK_SIZE};
///
/// let arena = ArenaOptions::new().with_block_size(1).build_concurrent().unwrap();
/// assert_eq!(arena.block_size(), MIN_BLOCK_SIZE);
/// ```
pub const MIN_BLOCK_SIZE: usize = 4096;

/// Largest block size accepted: 2 GiB (RocksDB's `kMaxBlockSize`), 1 GiB on
/// 32-bit targets.
///
/// # Examples
///
/// ```
/// use arena::{ArenaOptions, ConfigError, MAX_BLOCK_SIZE};
///
/// let largest = ArenaOptions::new().with_block_size(MAX_BLOCK_SIZE).build().unwrap();
/// assert_eq!(largest.block_size(), MAX_BLOCK_SIZE); // no block reserved yet
/// let refused = ArenaOptions::new().with_block_size(MAX_BLOCK_SIZE + 1).build().unwrap_err();
/// assert_eq!(refused, ConfigError::BlockSizeTooLarge { requested: MAX_BLOCK_SIZE + 1 });
/// ```
pub const MAX_BLOCK_SIZE: usize = if usize::BITS >= 64 { 1 << 31 } else { 1 << 30 };

/// Block sizes are rounded up to a multiple of this, and every block starts
/// at an address aligned to it (`alignof(max_align_t)` on x86-64).
///
/// # Examples
///
/// ```
/// use arena::{Arena, BLOCK_ALIGN};
///
/// let arena = Arena::with_block_size(4100);
/// assert_eq!(arena.block_size(), 4112); // rounded up to a multiple of BLOCK_ALIGN
/// let bytes = arena.alloc_slice_copy(&[1u8; 3001]); // over a quarter block: a block of its own
/// assert_eq!(bytes.as_ptr() as usize % BLOCK_ALIGN, 0);
/// ```
pub const BLOCK_ALIGN: usize = 16;

/// Block size of [`Arena::new`] and [`ConcurrentArena::new`]: 1 MiB, the
/// size RocksDB gives the arena of a 64 MiB memtable. It makes the shard
/// blocks of a [`ConcurrentArena`] 128 KiB, the most they can be.
///
/// # Examples
///
/// ```
/// use arena::{Arena, ConcurrentArena, DEFAULT_BLOCK_SIZE, MAX_SHARD_BLOCK_SIZE};
///
/// assert_eq!(Arena::new().block_size(), DEFAULT_BLOCK_SIZE);
/// let arena = ConcurrentArena::new();
/// assert_eq!(arena.block_size(), DEFAULT_BLOCK_SIZE);
/// assert_eq!(arena.shard_block_size(), MAX_SHARD_BLOCK_SIZE);
/// ```
pub const DEFAULT_BLOCK_SIZE: usize = 1 << 20;

/// Largest shard block of a [`ConcurrentArena`] (RocksDB PR #4147): larger
/// per-CPU caches held so much memory that memtables flushed early.
///
/// # Examples
///
/// ```
/// use arena::{ConcurrentArena, MAX_SHARD_BLOCK_SIZE};
///
/// let arena = ConcurrentArena::with_block_size(64 << 20);
/// assert_eq!(arena.shard_block_size(), MAX_SHARD_BLOCK_SIZE); // not 64 MiB / 8
/// ```
pub const MAX_SHARD_BLOCK_SIZE: usize = 128 << 10;

/// Largest run a thread of a [`ConcurrentArena`] caches (see
/// [`ArenaOptions::with_thread_cache`]).
///
/// # Examples
///
/// ```
/// use arena::{ConcurrentArena, MAX_THREAD_CACHE_RUN};
///
/// assert_eq!(ConcurrentArena::new().thread_cache_run_size(), MAX_THREAD_CACHE_RUN);
/// for block_size in [4096, 64 << 10, 64 << 20] {
///     let arena = ConcurrentArena::with_block_size(block_size);
///     assert!(arena.thread_cache_run_size() <= MAX_THREAD_CACHE_RUN);
/// }
/// ```
pub const MAX_THREAD_CACHE_RUN: usize = 32 << 10;

/// Where an arena's blocks come from.
///
/// [`HugePages::Explicit`] gets huge pages only where the system has some
/// reserved (`vm.nr_hugepages`) and falls back otherwise;
/// [`HugePages::Transparent`] only asks, and the kernel backs the blocks
/// with transparent huge pages when its setting (`madvise` or `always`)
/// allows. Huge pages cut the TLB misses of random accesses over a large
/// arena (measurements: `benches/results/inline-skiplist/2026-12-02.md`).
///
/// The mapping is Linux's: on other systems (and under miri) every block
/// comes from the global allocator, whatever the mode.
///
/// # Examples
///
/// ```
/// use arena::{ArenaOptions, HugePages};
///
/// assert_eq!(HugePages::default(), HugePages::Off);
/// let options = ArenaOptions::new().with_block_size(4096).with_huge_pages(HugePages::Explicit);
/// let arena = options.build().unwrap();
/// arena.alloc([0u8; 3000]); // over a quarter block: one block reserved
/// let stats = arena.stats();
/// // Huge pages where the system has some reserved, a counted fallback elsewhere.
/// assert_eq!(stats.huge_page_blocks + stats.huge_page_fallbacks, 1);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HugePages {
    /// Blocks come from the global allocator (the default).
    #[default]
    Off,
    /// Blocks of at least 2 MiB are mapped with `mmap`, aligned to 2 MiB and
    /// marked `madvise(MADV_HUGEPAGE)`, so the kernel backs them with
    /// transparent huge pages when it can; smaller blocks come from the
    /// global allocator. Pick a block size that is a multiple of 2 MiB.
    Transparent,
    /// Each block is first mapped with `mmap(MAP_HUGETLB)` (its length
    /// rounded up to 2 MiB, all of it usable); when the system has no huge
    /// page to give, the block falls back to [`HugePages::Transparent`]'s
    /// way, and [`ArenaStats::huge_page_fallbacks`] counts it.
    Explicit,
    /// Blocks come from the global allocator until the arena has reserved
    /// [`HUGE_PAGES_WHEN_LARGE_FROM`] bytes; from then on each new block is
    /// at least 2 MiB and reserved as with [`HugePages::Transparent`]. A
    /// small arena keeps small blocks, a large one (a big memtable) gets
    /// huge pages. What one block can waste grows to 2 MiB, once the arena
    /// is that large.
    WhenLarge,
}

/// Bytes an arena with [`HugePages::WhenLarge`] reserves in ordinary blocks
/// before its blocks turn to huge pages: past it, one 2 MiB block is at most
/// an eighth more.
///
/// ```
/// use arena::{ArenaOptions, HUGE_PAGES_WHEN_LARGE_FROM, HugePages};
///
/// let arena = ArenaOptions::new()
///     .with_huge_pages(HugePages::WhenLarge)
///     .build_concurrent()
///     .unwrap();
/// arena.alloc_slice_copy(&[7u8; 4096]);
/// // Still small: heap blocks, no huge page.
/// assert!(arena.memory_allocated_bytes() < HUGE_PAGES_WHEN_LARGE_FROM);
/// assert_eq!(arena.stats().transparent_huge_page_blocks, 0);
/// ```
pub const HUGE_PAGES_WHEN_LARGE_FROM: usize = 16 << 20;

/// The settings of an arena, in builder form: start from
/// [`ArenaOptions::new()`] (or `default()`, the same) and change what you
/// need with the `with_*` setters.
///
/// ```
/// use arena::{ArenaOptions, HugePages};
///
/// let arena = ArenaOptions::new()
///     .with_block_size(4 << 20)
///     .with_memory_limit(64 << 20)
///     .with_huge_pages(HugePages::Transparent)
///     .with_prefault(true)
///     .build_concurrent()
///     .expect("valid options");
/// assert_eq!(arena.block_size(), 4 << 20);
/// assert_eq!(arena.shard_block_size(), 128 << 10);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArenaOptions {
    pub(crate) block_size: usize,
    pub(crate) memory_limit: Option<usize>,
    pub(crate) huge_pages: HugePages,
    pub(crate) prefault: bool,
    pub(crate) eager_shards: bool,
    pub(crate) thread_cache: bool,
    pub(crate) block_pool: Option<BlockPool>,
}

impl Default for ArenaOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl ArenaOptions {
    /// The defaults: [`DEFAULT_BLOCK_SIZE`], no memory limit, no huge pages,
    /// no prefaulting, shards used once contention is seen, no block pool.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{ArenaOptions, DEFAULT_BLOCK_SIZE};
    ///
    /// const MEMTABLE: ArenaOptions = ArenaOptions::new().with_block_size(64 << 10);
    /// assert_eq!(ArenaOptions::new(), ArenaOptions::default());
    /// assert_eq!(ArenaOptions::new().build().unwrap().block_size(), DEFAULT_BLOCK_SIZE);
    /// assert_eq!(MEMTABLE.build_concurrent().unwrap().block_size(), 64 << 10);
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self {
            block_size: DEFAULT_BLOCK_SIZE,
            memory_limit: None,
            huge_pages: HugePages::Off,
            prefault: false,
            eager_shards: false,
            thread_cache: true,
            block_pool: None,
        }
    }

    /// The size of each regular block. Values below [`MIN_BLOCK_SIZE`] are
    /// raised to it and every value is rounded up to a multiple of
    /// [`BLOCK_ALIGN`]; 0 and values above [`MAX_BLOCK_SIZE`] make the
    /// build fail with a [`ConfigError`].
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{ArenaOptions, ConfigError, MIN_BLOCK_SIZE};
    ///
    /// let raised = ArenaOptions::new().with_block_size(100).build()?;
    /// assert_eq!(raised.block_size(), MIN_BLOCK_SIZE);
    /// let rounded = ArenaOptions::new().with_block_size(5000).build()?;
    /// assert_eq!(rounded.block_size(), 5008);
    /// let zero = ArenaOptions::new().with_block_size(0).build();
    /// assert_eq!(zero.err(), Some(ConfigError::ZeroBlockSize));
    /// # Ok::<(), ConfigError>(())
    /// ```
    #[must_use]
    pub const fn with_block_size(mut self, bytes: usize) -> Self {
        self.block_size = bytes;
        self
    }

    /// Caps [`memory_allocated_bytes`](ConcurrentArena::memory_allocated_bytes)
    /// (the inline block included): a request that would need a block taking
    /// the total past `bytes` fails with [`AllocError::LimitExceeded`], while
    /// requests that fit in blocks already reserved still succeed.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::ArenaOptions;
    ///
    /// let options = ArenaOptions::new().with_block_size(4096).with_memory_limit(8192);
    /// let arena = options.build().unwrap();
    /// let mut served = 0;
    /// while arena.try_alloc([0u8; 1000]).is_ok() {
    ///     served += 1;
    /// }
    /// assert_eq!(served, 6); // 2 in the inline block, 4 in one block: a second would pass 8 KiB
    /// assert!(arena.memory_allocated_bytes() <= 8192);
    /// assert!(arena.try_alloc([0u8; 50]).is_ok()); // still fits in the current block
    /// ```
    #[must_use]
    pub const fn with_memory_limit(mut self, bytes: usize) -> Self {
        self.memory_limit = Some(bytes);
        self
    }

    /// Where blocks come from; see [`HugePages`].
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{ArenaOptions, HugePages};
    ///
    /// let options = ArenaOptions::new().with_block_size(64 << 10);
    /// let arena = options.with_huge_pages(HugePages::Transparent).build().unwrap();
    /// arena.alloc([0u8; 20 << 10]); // over a quarter block: a 20 KiB block
    /// // Blocks under 2 MiB come from the global allocator, whatever the system.
    /// assert_eq!(arena.stats().transparent_huge_page_blocks, 0);
    /// ```
    #[must_use]
    pub const fn with_huge_pages(mut self, huge_pages: HugePages) -> Self {
        self.huge_pages = huge_pages;
        self
    }

    /// Populate each block when it is reserved (`MAP_POPULATE` for
    /// explicit huge-page blocks; otherwise a write to each page, after the
    /// `madvise` of a transparent huge-page block), so that page faults are
    /// taken in one batch there and not one by one on the allocation path,
    /// where a first touch of a fresh page costs far more than a bump.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::ArenaOptions;
    ///
    /// let options = ArenaOptions::new().with_block_size(64 << 10);
    /// let plain = options.build().unwrap();
    /// let prefaulted = options.with_prefault(true).build().unwrap();
    /// for arena in [&plain, &prefaulted] {
    ///     arena.alloc([1u8; 3000]); // past the inline block
    /// }
    /// // Prefaulting changes when pages are faulted in, not what is reserved.
    /// assert_eq!(prefaulted.stats(), plain.stats());
    /// ```
    #[must_use]
    pub const fn with_prefault(mut self, prefault: bool) -> Self {
        self.prefault = prefault;
        self
    }

    /// [`ConcurrentArena`] only: send every thread to the per-CPU shards from
    /// its first allocation, instead of only after it has found the main
    /// arena locked. For arenas known to be written by many threads at once
    /// (the loom models use it to reach the shards deterministically).
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::ArenaOptions;
    ///
    /// let arena = ArenaOptions::new().with_eager_shards(true).build_concurrent().unwrap();
    /// for i in 0..1000u64 {
    ///     arena.alloc(i); // past the inline block
    /// }
    /// // With no contention at all, the thread still went to a shard, which took
    /// // slices of the main arena.
    /// assert!(arena.stats().shard_refills > 0);
    /// ```
    #[must_use]
    pub const fn with_eager_shards(mut self, eager: bool) -> Self {
        self.eager_shards = eager;
        self
    }

    /// [`ConcurrentArena`] only: whether each thread caches a run of the
    /// arena (at most 32 KiB) and serves small requests from it with no
    /// atomic operation (on by default). Off, every allocation takes a spin
    /// lock as in RocksDB, which costs an atomic read-modify-write per
    /// allocation; on, the lock is taken once per run, and up to one run per
    /// thread is held aside, counted as used.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::ArenaOptions;
    ///
    /// let on = ArenaOptions::new().build_concurrent().unwrap();
    /// let off = ArenaOptions::new().with_thread_cache(false).build_concurrent().unwrap();
    /// for i in 0..1000u64 {
    ///     on.alloc(i);
    ///     off.alloc(i);
    /// }
    /// assert!(on.stats().thread_cache_refills > 0);
    /// assert_eq!(off.stats().thread_cache_refills, 0); // every allocation took a lock
    /// ```
    #[must_use]
    pub const fn with_thread_cache(mut self, enabled: bool) -> Self {
        self.thread_cache = enabled;
        self
    }

    /// Takes blocks from `pool` before reserving new ones, and gives the
    /// blocks back to it when the arena drops (see [`BlockPool`]): for a
    /// series of arenas of one size, a memtable after another, that then
    /// write into pages already mapped instead of faulting fresh ones in.
    ///
    /// ```
    /// use arena::{ArenaOptions, BlockPool};
    ///
    /// let pool = BlockPool::new(64 << 20);
    /// let options = ArenaOptions::new().with_block_pool(&pool);
    /// let arena = options.build_concurrent().unwrap();
    /// assert_eq!(arena.stats().pooled_blocks, 0);
    /// ```
    #[must_use]
    pub fn with_block_pool(mut self, pool: &BlockPool) -> Self {
        self.block_pool = Some(pool.clone());
        self
    }

    /// The block size after clamping and rounding, or why it is refused.
    pub(crate) fn checked_block_size(&self) -> Result<usize, ConfigError> {
        match self.block_size {
            0 => Err(ConfigError::ZeroBlockSize),
            size if size > MAX_BLOCK_SIZE => {
                Err(ConfigError::BlockSizeTooLarge { requested: size })
            }
            size => Ok(size.max(MIN_BLOCK_SIZE).next_multiple_of(BLOCK_ALIGN)),
        }
    }

    /// A single-threaded [`Arena`] with these options.
    ///
    /// # Errors
    /// [`ConfigError`] for a block size of 0 or above [`MAX_BLOCK_SIZE`].
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{ArenaOptions, ConfigError};
    ///
    /// let options = ArenaOptions::new().with_block_size(64 << 10);
    /// let (first, second) = (options.build()?, options.build()?); // the options stay reusable
    /// assert_eq!((first.block_size(), second.block_size()), (64 << 10, 64 << 10));
    /// let zero = ArenaOptions::new().with_block_size(0).build();
    /// assert_eq!(zero.err(), Some(ConfigError::ZeroBlockSize));
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn build(&self) -> Result<Arena, ConfigError> {
        Arena::with_options(self.clone())
    }

    /// A [`ConcurrentArena`] with these options.
    ///
    /// # Errors
    /// [`ConfigError`] for a block size of 0 or above [`MAX_BLOCK_SIZE`].
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{ArenaOptions, ConfigError, MAX_BLOCK_SIZE};
    ///
    /// let arena = ArenaOptions::new().with_block_size(256 << 10).build_concurrent()?;
    /// let sum: u32 = std::thread::scope(|s| {
    ///     let other = s.spawn(|| *arena.alloc(1u32));
    ///     *arena.alloc(2u32) + other.join().unwrap()
    /// });
    /// assert_eq!(sum, 3);
    /// let too_large = ArenaOptions::new().with_block_size(MAX_BLOCK_SIZE + 1).build_concurrent();
    /// assert!(matches!(too_large, Err(ConfigError::BlockSizeTooLarge { .. })));
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn build_concurrent(&self) -> Result<ConcurrentArena, ConfigError> {
        ConcurrentArena::with_options(self.clone())
    }
}

/// Why [`ArenaOptions`] were refused.
///
/// # Examples
///
/// ```
/// use arena::{ArenaOptions, ConfigError};
///
/// let error = ArenaOptions::new().with_block_size(0).build().unwrap_err();
/// assert_eq!(error, ConfigError::ZeroBlockSize);
/// assert_eq!(error.to_string(), "arena block size is 0");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConfigError {
    /// A block size of 0, most likely an unset configuration value.
    ZeroBlockSize,
    /// A block size above [`MAX_BLOCK_SIZE`].
    BlockSizeTooLarge {
        /// The size asked for.
        requested: usize,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroBlockSize => f.write_str("arena block size is 0"),
            Self::BlockSizeTooLarge { requested } => write!(
                f,
                "arena block size {requested} is above the maximum of {MAX_BLOCK_SIZE}"
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Why an allocation failed.
///
/// # Examples
///
/// ```
/// use arena::{AllocError, ArenaOptions, INLINE_BLOCK_SIZE};
///
/// let options = ArenaOptions::new().with_block_size(4096).with_memory_limit(INLINE_BLOCK_SIZE);
/// let arena = options.build().unwrap();
/// let (_, error) = arena.try_alloc([0u8; 3000]).unwrap_err();
/// assert_eq!(error, AllocError::LimitExceeded { limit: 2048, allocated: 2048, block: 3000 });
/// assert_eq!(
///     error.to_string(),
///     "arena memory limit of 2048 bytes exceeded: 2048 reserved, a new block of 3000 needed"
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AllocError {
    /// Serving the request needs a new block, and that block would take the
    /// arena's reserved memory past its [memory limit](ArenaOptions::with_memory_limit).
    LimitExceeded {
        /// The limit.
        limit: usize,
        /// Bytes reserved before the request.
        allocated: usize,
        /// Bytes of the block the request needed.
        block: usize,
    },
    /// The layout's alignment is larger than the arena's block size.
    AlignmentTooLarge {
        /// The alignment asked for.
        align: usize,
        /// The arena's block size.
        block_size: usize,
    },
    /// The request, with the padding or rounding a block needs, does not fit
    /// in an `isize`.
    SizeOverflow {
        /// The size asked for.
        size: usize,
    },
    /// The system refused memory (the global allocator returned null, or
    /// `mmap` failed).
    OutOfMemory {
        /// Bytes of the block that could not be reserved.
        bytes: usize,
    },
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LimitExceeded {
                limit,
                allocated,
                block,
            } => write!(
                f,
                "arena memory limit of {limit} bytes exceeded: {allocated} reserved, \
                 a new block of {block} needed"
            ),
            Self::AlignmentTooLarge { align, block_size } => write!(
                f,
                "alignment {align} is larger than the arena block size {block_size}"
            ),
            Self::SizeOverflow { size } => {
                write!(
                    f,
                    "arena request of {size} bytes overflows with its padding"
                )
            }
            Self::OutOfMemory { bytes } => {
                write!(f, "the system refused an arena block of {bytes} bytes")
            }
        }
    }
}

impl std::error::Error for AllocError {}

/// A snapshot of an arena's accounting.
///
/// For a [`ConcurrentArena`] it is taken under the main arena's lock, so
/// the fields agree with each other:
/// `memory_allocated_bytes == approximate_memory_usage + allocated_and_unused`,
/// and usage is at least the bytes asked for.
///
/// # Examples
///
/// ```
/// use arena::ConcurrentArena;
///
/// let arena = ConcurrentArena::new();
/// arena.alloc_slice_copy(&[0u8; 100 << 10]); // past the inline block: a 1 MiB block
/// let stats = arena.stats();
/// assert_eq!((stats.blocks, stats.irregular_blocks), (1, 0));
/// let (used, unused) = (stats.approximate_memory_usage, stats.allocated_and_unused);
/// assert_eq!(stats.memory_allocated_bytes, used + unused);
/// assert!(stats.approximate_memory_usage >= 100 << 10);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ArenaStats {
    /// Bytes of every block the arena holds, the inline block included.
    pub memory_allocated_bytes: usize,
    /// Bytes reserved but not handed out yet: the free part of the current
    /// block, of each shard's slice, and of blocks kept by `reset`.
    pub allocated_and_unused: usize,
    /// `memory_allocated_bytes - allocated_and_unused`: the bytes handed out,
    /// with alignment padding, abandoned block tails and, for a
    /// [`ConcurrentArena`], the runs held by threads' caches. The arena's own
    /// bookkeeping is not counted.
    pub approximate_memory_usage: usize,
    /// Regular blocks held (not counting the inline block).
    pub blocks: usize,
    /// Dedicated blocks held for requests over a quarter block.
    pub irregular_blocks: usize,
    /// Blocks backed by explicit huge pages (`MAP_HUGETLB`).
    pub huge_page_blocks: usize,
    /// Blocks that asked for explicit huge pages and fell back to normal pages.
    pub huge_page_fallbacks: usize,
    /// Blocks mapped with `madvise(MADV_HUGEPAGE)`.
    pub transparent_huge_page_blocks: usize,
    /// Blocks taken from the [`BlockPool`] instead of reserved (the three
    /// counts above count reservations only).
    pub pooled_blocks: usize,
    /// [`ConcurrentArena`] only: slices the shards took from the main arena.
    pub shard_refills: usize,
    /// [`ConcurrentArena`] only: runs the threads' caches took.
    pub thread_cache_refills: usize,
}
