//! [`Arena`]: the single-threaded bump arena, RocksDB's `Arena`.

use std::alloc::Layout;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::mem::MaybeUninit;
use std::ptr::NonNull;

use crate::block::{BackingCounts, Block, BlockSource};
use crate::options::{
    AllocError, ArenaOptions, ArenaStats, BLOCK_ALIGN, ConfigError, INLINE_BLOCK_SIZE,
};
use crate::pool::BlockPool;

mod refill;

/// A single-threaded bump arena: RocksDB's `Arena`, the building block of
/// [`ConcurrentArena`](crate::ConcurrentArena).
///
/// - The first [`INLINE_BLOCK_SIZE`] bytes come from a block inside the
///   `Arena` value, so an arena that stays small reserves no block at all.
/// - Then blocks of [`block_size`](Self::block_size) bytes are reserved one
///   at a time. Inside a block, aligned requests are carved from the front
///   and alignment-1 requests from the back, so byte strings of odd lengths
///   never cost padding to the aligned values around them.
/// - A request over a quarter block gets a dedicated ("irregular") block of
///   its own size and leaves the current block as it is; a smaller request
///   that no longer fits abandons the rest of the current block (less than a
///   quarter block) and starts a new one.
///
/// Values are never dropped (as with bumpalo): the arena only returns its
/// memory, when it is dropped or [reset](Self::reset).
///
/// # Pointer validity
/// References from [`alloc`](Self::alloc) and friends borrow the arena, so
/// the compiler keeps it in place while they live. Raw pointers from
/// [`alloc_layout`](Self::alloc_layout) are valid until the arena is
/// dropped, reset **or moved**: the inline block moves with the value. Box
/// the arena (or use a [`ConcurrentArena`](crate::ConcurrentArena), which
/// keeps everything on the heap) if raw pointers must outlive a move.
///
/// ```
/// use std::alloc::Layout;
/// use arena::Arena;
///
/// let arena = Arena::new();
/// let x = arena.alloc(7u64);
/// let name = arena.alloc_str("memtable");
/// *x += 1;
/// assert_eq!((*x, &*name), (8, "memtable"));
/// assert!(arena.is_in_inline_block());
/// assert_eq!(arena.memory_allocated_bytes(), arena::INLINE_BLOCK_SIZE);
///
/// let big = arena.alloc_layout(Layout::from_size_align(1 << 19, 64).unwrap());
/// assert_eq!(big.as_ptr() as usize % 64, 0);
/// assert_eq!(arena.stats().irregular_blocks, 1);
/// ```
pub struct Arena {
    /// Start of the current block; null while it is the inline block (whose
    /// address changes when the arena moves, so it is never stored).
    block_start: Cell<*mut u8>,
    /// Offset of the first free byte of the current block.
    front: Cell<usize>,
    /// Offset one past the last free byte of the current block.
    back: Cell<usize>,
    block_size: usize,
    memory_limit: usize,
    source: BlockSource,
    /// Where blocks come from before the system, and go when the arena
    /// drops.
    pool: Option<BlockPool>,
    memory_allocated: Cell<usize>,
    /// Bytes of the blocks kept by `reset` for reuse.
    spare_bytes: Cell<usize>,
    blocks: RefCell<Blocks>,
    inline: InlineBlock,
}

/// The blocks an arena owns, touched only on slow paths.
#[derive(Debug, Default)]
struct Blocks {
    regular: Vec<Block>,
    irregular: Vec<Block>,
    spare: Vec<Block>,
    counts: BackingCounts,
    /// Blocks taken from the pool.
    pooled: usize,
}

#[repr(C, align(16))]
struct InlineBlock(std::cell::UnsafeCell<[MaybeUninit<u8>; INLINE_BLOCK_SIZE]>);

// SAFETY: an `Arena` owns its blocks outright, and its raw pointers only
// point into them or into its own inline block: nothing is tied to the
// creating thread (its pool handle is `Send + Sync`, a shared `Mutex`).
// (It is not `Sync`: the bump pointers are `Cell`s.)
unsafe impl Send for Arena {}

/// Gives the regular blocks (those `reset` keeps) to the pool, if any; the
/// rest are released to the system.
impl Drop for Arena {
    fn drop(&mut self) {
        if let Some(pool) = &self.pool {
            let blocks = self.blocks.get_mut();
            pool.give(blocks.regular.drain(..).chain(blocks.spare.drain(..)));
        }
    }
}

impl Default for Arena {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Arena {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Arena")
            .field("block_size", &self.block_size)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// Where `layout` fits in the free range `front..back` of a block starting at
/// `base`: `(offset, new_front, new_back)`. Alignment-1 requests come from
/// the back, the rest from the front after padding.
#[inline(always)]
pub(crate) fn carve(
    base: *mut u8,
    front: usize,
    back: usize,
    layout: Layout,
) -> Option<(usize, usize, usize)> {
    let size = layout.size();
    if layout.align() == 1 {
        let start = back.checked_sub(size)?;
        if start < front {
            return None;
        }
        Some((start, front, start))
    } else {
        let pad = base.addr().wrapping_add(front).wrapping_neg() & (layout.align() - 1);
        // `front <= back <= isize::MAX` and `pad < align <= isize::MAX + 1`,
        // so the sum cannot wrap.
        let start = front + pad;
        if start > back || size > back - start {
            return None;
        }
        Some((start, start + size, back))
    }
}

/// A dangling pointer aligned to `align`, for zero-size requests.
#[inline]
pub(crate) fn dangling(align: usize) -> NonNull<u8> {
    // `align` is a power of two, so never 0.
    NonNull::new(std::ptr::without_provenance_mut(align)).unwrap_or(NonNull::dangling())
}

/// Panics with `error`, or reports an out-of-memory as the global allocator
/// would.
#[cold]
#[inline(never)]
pub(crate) fn alloc_failed(layout: Layout, error: AllocError) -> ! {
    match error {
        AllocError::OutOfMemory { .. } => std::alloc::handle_alloc_error(layout),
        error => panic!("{error}"),
    }
}

impl Arena {
    /// An arena with [`DEFAULT_BLOCK_SIZE`](crate::DEFAULT_BLOCK_SIZE)
    /// blocks. It reserves nothing until its inline block is full.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{Arena, DEFAULT_BLOCK_SIZE, INLINE_BLOCK_SIZE};
    ///
    /// let arena = Arena::new();
    /// assert_eq!(arena.block_size(), DEFAULT_BLOCK_SIZE);
    /// // Only the inline block so far: no block reserved.
    /// assert_eq!(arena.memory_allocated_bytes(), INLINE_BLOCK_SIZE);
    /// assert_eq!(arena.stats().blocks, 0);
    /// ```
    pub fn new() -> Self {
        Self::from_checked(ArenaOptions::new(), crate::DEFAULT_BLOCK_SIZE)
    }

    /// An arena with blocks of `block_size` bytes, raised to
    /// [`MIN_BLOCK_SIZE`](crate::MIN_BLOCK_SIZE) and rounded up to a multiple
    /// of [`BLOCK_ALIGN`].
    ///
    /// # Panics
    /// If `block_size` is 0 or above [`MAX_BLOCK_SIZE`](crate::MAX_BLOCK_SIZE);
    /// [`ArenaOptions::build`] reports these as errors instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::Arena;
    ///
    /// let arena = Arena::with_block_size(64 << 10);
    /// assert_eq!(arena.block_size(), 64 << 10);
    /// arena.alloc([0u8; 20 << 10]); // over a quarter block: a block of its own
    /// assert_eq!(arena.stats().irregular_blocks, 1);
    /// // A block size of 0 panics here (`ArenaOptions::build` returns an error).
    /// assert!(std::panic::catch_unwind(|| Arena::with_block_size(0)).is_err());
    /// ```
    pub fn with_block_size(block_size: usize) -> Self {
        match ArenaOptions::new().with_block_size(block_size).build() {
            Ok(arena) => arena,
            Err(error) => panic!("{error}"),
        }
    }

    /// An arena with `options` (see [`ArenaOptions`];
    /// [`with_eager_shards`](ArenaOptions::with_eager_shards) does not apply).
    ///
    /// # Errors
    /// [`ConfigError`] for a block size of 0 or above
    /// [`MAX_BLOCK_SIZE`](crate::MAX_BLOCK_SIZE).
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{Arena, ArenaOptions, ConfigError};
    ///
    /// let arena = Arena::with_options(ArenaOptions::new().with_block_size(8192))?;
    /// assert_eq!(arena.block_size(), 8192);
    /// let refused = Arena::with_options(ArenaOptions::new().with_block_size(0));
    /// assert_eq!(refused.err(), Some(ConfigError::ZeroBlockSize));
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn with_options(options: ArenaOptions) -> Result<Self, ConfigError> {
        let block_size = options.checked_block_size()?;
        Ok(Self::from_checked(options, block_size))
    }

    fn from_checked(options: ArenaOptions, block_size: usize) -> Self {
        Self {
            block_start: Cell::new(std::ptr::null_mut()),
            front: Cell::new(0),
            back: Cell::new(INLINE_BLOCK_SIZE),
            block_size,
            memory_limit: options.memory_limit.unwrap_or(usize::MAX),
            source: BlockSource {
                huge_pages: options.huge_pages,
                prefault: options.prefault,
            },
            pool: options.block_pool,
            memory_allocated: Cell::new(INLINE_BLOCK_SIZE),
            spare_bytes: Cell::new(0),
            blocks: RefCell::new(Blocks::default()),
            inline: InlineBlock(std::cell::UnsafeCell::new(
                [MaybeUninit::uninit(); INLINE_BLOCK_SIZE],
            )),
        }
    }

    /// The size of regular blocks, after clamping and rounding.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{Arena, MIN_BLOCK_SIZE};
    ///
    /// assert_eq!(Arena::with_block_size(10_001).block_size(), 10_016); // a multiple of 16
    /// assert_eq!(Arena::with_block_size(100).block_size(), MIN_BLOCK_SIZE);
    /// ```
    pub fn block_size(&self) -> usize {
        self.block_size
    }

    #[inline(always)]
    fn current_base(&self) -> *mut u8 {
        let start = self.block_start.get();
        if start.is_null() {
            self.inline.0.get().cast()
        } else {
            start
        }
    }

    /// Allocates room for `layout`, or says why it cannot.
    ///
    /// The memory is uninitialised and aligned to `layout.align()`.
    /// A zero-size layout takes no memory (at most some padding): the
    /// pointer is aligned and valid for zero-size accesses only (it may be
    /// dangling). Like any other request it fails for an alignment above
    /// the block size.
    ///
    /// # Errors
    /// [`AllocError::AlignmentTooLarge`] for an alignment above the block
    /// size, [`AllocError::LimitExceeded`] when the request needs a block
    /// past the memory limit, [`AllocError::SizeOverflow`] or
    /// [`AllocError::OutOfMemory`] when the system cannot provide the block.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::alloc::Layout;
    /// use arena::{AllocError, Arena};
    ///
    /// let arena = Arena::with_block_size(4096);
    /// let ptr = arena.try_alloc_layout(Layout::from_size_align(24, 8).unwrap())?;
    /// assert_eq!(ptr.as_ptr() as usize % 8, 0);
    /// let too_aligned = Layout::from_size_align(64, 8192).unwrap();
    /// assert_eq!(
    ///     arena.try_alloc_layout(too_aligned),
    ///     Err(AllocError::AlignmentTooLarge { align: 8192, block_size: 4096 })
    /// );
    /// # Ok::<(), AllocError>(())
    /// ```
    #[inline]
    pub fn try_alloc_layout(&self, layout: Layout) -> Result<NonNull<u8>, AllocError> {
        if layout.align() > self.block_size {
            return Err(self.alignment_too_large(layout));
        }
        match self.bump(layout) {
            Some(ptr) => Ok(ptr),
            None => self.alloc_slow(layout),
        }
    }

    /// Allocates room for `layout`, as [`try_alloc_layout`](Self::try_alloc_layout).
    ///
    /// # Panics
    /// On the errors of `try_alloc_layout`, except that running out of
    /// system memory calls [`std::alloc::handle_alloc_error`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::alloc::Layout;
    /// use arena::Arena;
    ///
    /// let arena = Arena::new();
    /// let ptr = arena.alloc_layout(Layout::new::<[u32; 4]>()).cast::<[u32; 4]>();
    /// // SAFETY: fresh memory, aligned for a `[u32; 4]`, that nothing else uses.
    /// let words = unsafe {
    ///     ptr.write([1, 2, 3, 4]);
    ///     ptr.as_ref()
    /// };
    /// assert_eq!(words.iter().sum::<u32>(), 10);
    /// ```
    #[inline]
    pub fn alloc_layout(&self, layout: Layout) -> NonNull<u8> {
        match self.try_alloc_layout(layout) {
            Ok(ptr) => ptr,
            Err(error) => alloc_failed(layout, error),
        }
    }

    /// RocksDB's `Allocate`: `bytes` with no alignment, from the back of the
    /// current block.
    ///
    /// # Panics
    /// As [`alloc_layout`](Self::alloc_layout).
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::Arena;
    ///
    /// let arena = Arena::new();
    /// let a = arena.allocate(3);
    /// let b = arena.allocate(5);
    /// // Carved downwards from the back of the block: `b` ends where `a` starts.
    /// assert_eq!(b.as_ptr() as usize + 5, a.as_ptr() as usize);
    /// assert_eq!(arena.approximate_memory_usage(), 8); // no padding
    /// ```
    #[inline]
    pub fn allocate(&self, bytes: usize) -> NonNull<u8> {
        match Layout::from_size_align(bytes, 1) {
            Ok(layout) => self.alloc_layout(layout),
            Err(_) => alloc_failed(
                Layout::new::<u8>(),
                AllocError::SizeOverflow { size: bytes },
            ),
        }
    }

    /// RocksDB's `AllocateAligned`: `bytes` aligned to [`BLOCK_ALIGN`], from
    /// the front of the current block.
    ///
    /// # Panics
    /// As [`alloc_layout`](Self::alloc_layout).
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{Arena, BLOCK_ALIGN};
    ///
    /// let arena = Arena::new();
    /// let a = arena.allocate_aligned(10);
    /// let b = arena.allocate_aligned(10);
    /// assert_eq!(a.as_ptr() as usize % BLOCK_ALIGN, 0);
    /// // Carved upwards from the front: `b` follows `a`, padded to 16 bytes.
    /// assert_eq!(b.as_ptr() as usize - a.as_ptr() as usize, BLOCK_ALIGN);
    /// ```
    #[inline]
    pub fn allocate_aligned(&self, bytes: usize) -> NonNull<u8> {
        match Layout::from_size_align(bytes, BLOCK_ALIGN) {
            Ok(layout) => self.alloc_layout(layout),
            Err(_) => alloc_failed(
                Layout::new::<u8>(),
                AllocError::SizeOverflow { size: bytes },
            ),
        }
    }

    /// Moves `value` into the arena. It is never dropped.
    ///
    /// # Panics
    /// As [`alloc_layout`](Self::alloc_layout).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::rc::Rc;
    /// use arena::Arena;
    ///
    /// let arena = Arena::new();
    /// let counter = arena.alloc(0u32);
    /// *counter += 5;
    /// assert_eq!(*counter, 5);
    /// // Values are never dropped: this clone is leaked with the arena.
    /// let shared = Rc::new("node");
    /// arena.alloc(Rc::clone(&shared));
    /// drop(arena);
    /// assert_eq!(Rc::strong_count(&shared), 2);
    /// ```
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub fn alloc<T>(&self, value: T) -> &mut T {
        let ptr = self.alloc_layout(Layout::new::<T>());
        // SAFETY: fresh memory, valid and aligned for a `T`, that no one
        // else refers to and that lives as long as `&self`.
        unsafe { crate::write_value(ptr, value) }
    }

    /// Moves `value` into the arena, or gives it back with the error.
    ///
    /// # Errors
    /// As [`try_alloc_layout`](Self::try_alloc_layout).
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{AllocError, ArenaOptions, INLINE_BLOCK_SIZE};
    ///
    /// let arena = ArenaOptions::new().with_memory_limit(INLINE_BLOCK_SIZE).build()?;
    /// assert_eq!(*arena.try_alloc(1u64).unwrap(), 1);
    /// // No room for a block under the limit: the value comes back with the error.
    /// let (value, error) = arena.try_alloc([7u8; 4000]).unwrap_err();
    /// assert_eq!(value, [7u8; 4000]);
    /// assert!(matches!(error, AllocError::LimitExceeded { limit: INLINE_BLOCK_SIZE, .. }));
    /// # Ok::<(), arena::ConfigError>(())
    /// ```
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub fn try_alloc<T>(&self, value: T) -> Result<&mut T, (T, AllocError)> {
        match self.try_alloc_layout(Layout::new::<T>()) {
            // SAFETY: as in `alloc`.
            Ok(ptr) => Ok(unsafe { crate::write_value(ptr, value) }),
            Err(error) => Err((value, error)),
        }
    }

    /// Copies `src` into the arena.
    ///
    /// # Panics
    /// As [`alloc_layout`](Self::alloc_layout).
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::Arena;
    ///
    /// let arena = Arena::new();
    /// let mut source = vec![1u32, 2, 3];
    /// let copy = arena.alloc_slice_copy(&source);
    /// source[0] = 10;
    /// copy[2] = 30;
    /// assert_eq!(copy, &[1, 2, 30]);
    /// assert_eq!(source, [10, 2, 3]);
    /// assert_eq!(arena.approximate_memory_usage(), 12); // three `u32`s, no padding
    /// ```
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub fn alloc_slice_copy<T: Copy>(&self, src: &[T]) -> &mut [T] {
        let ptr = self.alloc_layout(Layout::for_value(src));
        // SAFETY: fresh memory with `src`'s layout, owned by this borrow.
        unsafe { crate::copy_slice(ptr, src) }
    }

    /// Copies `src` into the arena.
    ///
    /// # Panics
    /// As [`alloc_layout`](Self::alloc_layout).
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::Arena;
    ///
    /// let arena = Arena::new();
    /// let key = arena.alloc_str("user:42");
    /// key.make_ascii_uppercase();
    /// assert_eq!(key, "USER:42");
    /// // Alignment 1: taken from the back of the block, with no padding.
    /// assert_eq!(arena.approximate_memory_usage(), "user:42".len());
    /// ```
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub fn alloc_str(&self, src: &str) -> &mut str {
        let bytes = self.alloc_slice_copy(src.as_bytes());
        // SAFETY: a byte-for-byte copy of a `str` is UTF-8.
        unsafe { std::str::from_utf8_unchecked_mut(bytes) }
    }

    #[inline(always)]
    fn bump(&self, layout: Layout) -> Option<NonNull<u8>> {
        let base = self.current_base();
        let (offset, front, back) = carve(base, self.front.get(), self.back.get(), layout)?;
        self.front.set(front);
        self.back.set(back);
        // SAFETY: `offset <= back`, inside the current block (inline or
        // reserved), so the pointer is in bounds and not null.
        Some(unsafe { NonNull::new_unchecked(base.add(offset)) })
    }

    #[cold]
    fn alignment_too_large(&self, layout: Layout) -> AllocError {
        AllocError::AlignmentTooLarge {
            align: layout.align(),
            block_size: self.block_size,
        }
    }

    /// Free bytes of the current block once its front is aligned to
    /// [`BLOCK_ALIGN`]: what a [`BLOCK_ALIGN`]-aligned request can take
    /// without a new block.
    pub(crate) fn aligned_tail(&self) -> usize {
        let front = self.front.get();
        let pad = self
            .current_base()
            .addr()
            .wrapping_add(front)
            .wrapping_neg()
            & (BLOCK_ALIGN - 1);
        self.back.get().saturating_sub(front + pad)
    }

    /// Forgets every allocation, keeping the regular blocks for reuse (they
    /// stay counted in [`memory_allocated_bytes`](Self::memory_allocated_bytes),
    /// as unused) and freeing the irregular ones. Allocation starts again in
    /// the inline block.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{Arena, INLINE_BLOCK_SIZE};
    ///
    /// let mut arena = Arena::with_block_size(4096);
    /// arena.alloc([0u8; 3000]); // over a quarter block: an irregular block
    /// for _ in 0..3 {
    ///     arena.alloc([0u8; 1000]); // the third starts a regular 4 KiB block
    /// }
    /// arena.reset();
    /// assert!(arena.is_in_inline_block());
    /// // The regular block is kept, as unused; the irregular one is freed.
    /// assert_eq!(arena.memory_allocated_bytes(), INLINE_BLOCK_SIZE + 4096);
    /// assert_eq!(arena.approximate_memory_usage(), 0);
    /// ```
    pub fn reset(&mut self) {
        let blocks = self.blocks.get_mut();
        blocks.irregular.clear();
        let regular = std::mem::take(&mut blocks.regular);
        blocks.spare.extend(regular);
        let spare_bytes: usize = blocks.spare.iter().map(Block::len).sum();
        self.spare_bytes.set(spare_bytes);
        self.memory_allocated.set(INLINE_BLOCK_SIZE + spare_bytes);
        self.block_start.set(std::ptr::null_mut());
        self.front.set(0);
        self.back.set(INLINE_BLOCK_SIZE);
    }

    /// Bytes of every block held, the inline block included (RocksDB's
    /// `MemoryAllocatedBytes`).
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{Arena, INLINE_BLOCK_SIZE};
    ///
    /// let arena = Arena::with_block_size(4096);
    /// assert_eq!(arena.memory_allocated_bytes(), INLINE_BLOCK_SIZE);
    /// arena.alloc([0u8; 2000]);
    /// arena.alloc([0u8; 100]); // no room left inline: a 4 KiB block
    /// assert_eq!(arena.memory_allocated_bytes(), INLINE_BLOCK_SIZE + 4096);
    /// ```
    pub fn memory_allocated_bytes(&self) -> usize {
        self.memory_allocated.get()
    }

    /// Bytes held but not handed out yet: the free part of the current block
    /// and the blocks kept by [`reset`](Self::reset) (RocksDB's
    /// `AllocatedAndUnused`).
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{Arena, INLINE_BLOCK_SIZE};
    ///
    /// let mut arena = Arena::new();
    /// arena.alloc_str("abc");
    /// assert_eq!(arena.allocated_and_unused(), INLINE_BLOCK_SIZE - 3);
    /// arena.reset();
    /// assert_eq!(arena.allocated_and_unused(), INLINE_BLOCK_SIZE);
    /// ```
    pub fn allocated_and_unused(&self) -> usize {
        self.back.get() - self.front.get() + self.spare_bytes.get()
    }

    /// Bytes handed out, padding and abandoned block tails included:
    /// `memory_allocated_bytes() - allocated_and_unused()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::Arena;
    ///
    /// let arena = Arena::new();
    /// arena.alloc(1u32);
    /// arena.alloc(2u64); // after 4 bytes of padding, to align it
    /// assert_eq!(arena.approximate_memory_usage(), 16);
    /// let unused = arena.allocated_and_unused();
    /// assert_eq!(arena.approximate_memory_usage(), arena.memory_allocated_bytes() - unused);
    /// ```
    pub fn approximate_memory_usage(&self) -> usize {
        self.memory_allocated_bytes() - self.allocated_and_unused()
    }

    /// Whether the arena still allocates from its inline block and holds no
    /// irregular block: true until the first block is needed, and again
    /// after [`reset`](Self::reset).
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::Arena;
    ///
    /// let mut arena = Arena::with_block_size(4096);
    /// arena.alloc([0u8; 1000]);
    /// assert!(arena.is_in_inline_block());
    /// arena.alloc([0u8; 1500]); // over a quarter block: a block of its own
    /// assert!(!arena.is_in_inline_block());
    /// arena.reset();
    /// assert!(arena.is_in_inline_block());
    /// ```
    pub fn is_in_inline_block(&self) -> bool {
        self.block_start.get().is_null() && self.blocks.borrow().irregular.is_empty()
    }

    /// All the accounting at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::Arena;
    ///
    /// let arena = Arena::with_block_size(4096);
    /// arena.alloc([0u8; 2000]); // in the inline block
    /// arena.alloc([0u8; 3000]); // over a quarter block: in an irregular block
    /// arena.alloc([0u8; 500]); // in a regular block
    /// let stats = arena.stats();
    /// assert_eq!((stats.blocks, stats.irregular_blocks), (1, 1));
    /// assert_eq!(stats.memory_allocated_bytes, 2048 + 4096 + 3000);
    /// // What was asked for, and the 48 bytes left at the end of the inline block.
    /// assert_eq!(stats.approximate_memory_usage, 2000 + 48 + 500 + 3000);
    /// ```
    pub fn stats(&self) -> ArenaStats {
        let blocks = self.blocks.borrow();
        let allocated_and_unused = self.allocated_and_unused();
        ArenaStats {
            memory_allocated_bytes: self.memory_allocated_bytes(),
            allocated_and_unused,
            approximate_memory_usage: self.memory_allocated_bytes() - allocated_and_unused,
            blocks: blocks.regular.len() + blocks.spare.len(),
            irregular_blocks: blocks.irregular.len(),
            huge_page_blocks: blocks.counts.huge_page_blocks,
            huge_page_fallbacks: blocks.counts.huge_page_fallbacks,
            transparent_huge_page_blocks: blocks.counts.transparent_huge_page_blocks,
            pooled_blocks: blocks.pooled,
            shard_refills: 0,
            thread_cache_refills: 0,
        }
    }
}
