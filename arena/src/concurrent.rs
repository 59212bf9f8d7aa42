//! [`ConcurrentArena`]: RocksDB's `ConcurrentArena`, an [`Arena`] behind a
//! spin lock plus per-CPU shards that cache slices of it. This file holds
//! the public type; `shards` holds its state and where a request goes.

use std::alloc::Layout;
use std::cell::Cell;
use std::fmt;
use std::ptr::NonNull;

use crossbeam_utils::CachePadded;

use crate::Arena;
use crate::options::{
    AllocError, ArenaOptions, ArenaStats, ConfigError, MAX_SHARD_BLOCK_SIZE, MAX_THREAD_CACHE_RUN,
};
use crate::spin::SpinLock;
use crate::sync::{AtomicUsize, Ordering, available_cpus};
use crate::thread_cache;

mod shards;
use shards::{Inner, Main, Shard, Slice};

/// A bump arena that many threads allocate from at once: RocksDB's
/// `ConcurrentArena`, in bumpalo's shape, with a per-thread run cache in
/// front.
///
/// One [`Arena`] (the *main arena*) sits behind a spin lock. Next to it is a
/// power-of-two number (at least 8, at least the CPU count) of cache-padded
/// *shards*, each a spin lock over a slice of the main arena.
///
/// - A thread starts on the main arena. Once it finds the main arena
///   locked (or shard 0 holding bytes) it takes from shard 0; only when a
///   shard's lock is taken does it read its CPU (`sched_getcpu`) and move,
///   for good, to that CPU's shard, reading its CPU again each time that
///   shard is locked in turn. So a single writer fragments nothing, and
///   contended writers rarely share a lock or a cache line.
/// - An empty shard takes a slice of [`shard_block_size`](Self::shard_block_size)
///   bytes (`min(128 KiB, block_size / 8)`) from the main arena, or the main
///   arena's whole current tail when that is within a factor of two of it.
/// - Requests over a quarter shard block go straight to the main arena.
/// - **Thread cache** (on by default, [`ArenaOptions::with_thread_cache`]): a
///   thread that keeps allocating from an arena takes a *run* of
///   [`thread_cache_run_size`](Self::thread_cache_run_size) bytes (32 KiB by
///   default) through the path above, and serves requests of up to an eighth
///   of it from the run with no atomic operation. Each pass through a spin
///   lock is an atomic read-modify-write that waits for the caller's previous
///   writes to drain; the run pays it once per few hundred small
///   allocations. Each thread caches runs of at most four arenas; a thread
///   that interleaves more arenas uses the shard path instead of abandoning
///   a run at every switch. Runs held by threads count as used memory.
///
/// Values are never dropped; all memory is returned when the arena drops.
/// Moving a `ConcurrentArena` does not move its memory (its state lives on
/// the heap), so pointers from [`alloc_layout`](Self::alloc_layout) stay
/// valid until it is dropped or [`reset`](Self::reset).
///
/// ```
/// use arena::ConcurrentArena;
///
/// let arena = ConcurrentArena::new();
/// std::thread::scope(|s| {
///     for t in 0..4u64 {
///         let arena = &arena;
///         s.spawn(move || {
///             for i in 0..1000 {
///                 let slot = arena.alloc(t * 1000 + i);
///                 assert_eq!(*slot, t * 1000 + i);
///             }
///         });
///     }
/// });
/// assert!(arena.approximate_memory_usage() >= 4 * 1000 * 8);
/// ```
pub struct ConcurrentArena {
    /// Owned like a `Box`, but held as a raw pointer: moving the arena must
    /// not assert uniqueness over memory that callers hold pointers into
    /// (the main arena's inline block lives here).
    inner: NonNull<Inner>,
}

// SAFETY: `ConcurrentArena` owns its `Inner` as a `Box` would, and `Inner`
// is `Send + Sync` (checked below): its mutable state is behind spin locks
// and atomics.
unsafe impl Send for ConcurrentArena {}
// SAFETY: as above; every `&self` method synchronises through the locks or
// atomics of `Inner`.
unsafe impl Sync for ConcurrentArena {}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Inner>();
};

impl Default for ConcurrentArena {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for ConcurrentArena {
    fn drop(&mut self) {
        // SAFETY: `inner` came from `Box::into_raw` in `with_options` and is
        // released once, here; `&mut self` means no borrow of it remains.
        drop(unsafe { Box::from_raw(self.inner.as_ptr()) });
    }
}

impl fmt::Debug for ConcurrentArena {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConcurrentArena")
            .field("block_size", &self.block_size())
            .field("shards", &self.shard_count())
            .field("shard_block_size", &self.shard_block_size())
            .field("memory_allocated_bytes", &self.memory_allocated_bytes())
            .field("allocated_and_unused", &self.allocated_and_unused())
            .finish_non_exhaustive()
    }
}

impl ConcurrentArena {
    /// An arena with [`DEFAULT_BLOCK_SIZE`](crate::DEFAULT_BLOCK_SIZE)
    /// blocks (1 MiB, so 128 KiB shard blocks). It reserves no block until
    /// its 2 KiB inline block is full.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{ConcurrentArena, DEFAULT_BLOCK_SIZE, INLINE_BLOCK_SIZE};
    ///
    /// let arena = ConcurrentArena::new();
    /// assert_eq!(arena.block_size(), DEFAULT_BLOCK_SIZE);
    /// assert_eq!(arena.shard_block_size(), 128 << 10);
    /// assert_eq!(arena.memory_allocated_bytes(), INLINE_BLOCK_SIZE); // no block yet
    /// ```
    pub fn new() -> Self {
        Self::with_options(ArenaOptions::new()).expect("the default options are valid")
    }

    /// An arena with blocks of `block_size` bytes, raised to
    /// [`MIN_BLOCK_SIZE`](crate::MIN_BLOCK_SIZE) and rounded up to a multiple
    /// of [`BLOCK_ALIGN`](crate::BLOCK_ALIGN).
    ///
    /// # Panics
    /// If `block_size` is 0 or above [`MAX_BLOCK_SIZE`](crate::MAX_BLOCK_SIZE);
    /// [`ArenaOptions::build_concurrent`] reports these as errors instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{ConcurrentArena, MAX_BLOCK_SIZE};
    ///
    /// assert_eq!(ConcurrentArena::with_block_size(5000).block_size(), 5008);
    /// // Sizes that `ArenaOptions::build_concurrent` refuses panic here.
    /// let too_large = MAX_BLOCK_SIZE + 1;
    /// assert!(std::panic::catch_unwind(|| ConcurrentArena::with_block_size(too_large)).is_err());
    /// ```
    pub fn with_block_size(block_size: usize) -> Self {
        match ArenaOptions::new()
            .with_block_size(block_size)
            .build_concurrent()
        {
            Ok(arena) => arena,
            Err(error) => panic!("{error}"),
        }
    }

    /// An arena with the default block size whose reserved memory (the
    /// inline block included) never exceeds `limit` bytes: see
    /// [`ArenaOptions::with_memory_limit`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::alloc::Layout;
    /// use arena::ConcurrentArena;
    ///
    /// let arena = ConcurrentArena::with_limit(4 << 20);
    /// let big = Layout::from_size_align(1 << 20, 16).unwrap(); // a block of its own each
    /// let mut served = 0;
    /// while arena.try_alloc_layout(big).is_ok() {
    ///     served += 1;
    /// }
    /// // The inline block counts too: three 1 MiB blocks fit under 4 MiB, not four.
    /// assert_eq!(served, 3);
    /// assert!(arena.memory_allocated_bytes() <= 4 << 20);
    /// ```
    pub fn with_limit(limit: usize) -> Self {
        Self::with_options(ArenaOptions::new().with_memory_limit(limit))
            .expect("the default block size is valid")
    }

    /// An arena with `options`.
    ///
    /// # Errors
    /// [`ConfigError`] for a block size of 0 or above
    /// [`MAX_BLOCK_SIZE`](crate::MAX_BLOCK_SIZE).
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{ArenaOptions, ConcurrentArena, ConfigError, MAX_BLOCK_SIZE};
    ///
    /// let options = ArenaOptions::new().with_block_size(64 << 10).with_thread_cache(false);
    /// let arena = ConcurrentArena::with_options(options)?;
    /// assert_eq!((arena.block_size(), arena.thread_cache_run_size()), (64 << 10, 0));
    /// let too_large = ArenaOptions::new().with_block_size(MAX_BLOCK_SIZE + 1);
    /// assert_eq!(
    ///     ConcurrentArena::with_options(too_large).err(),
    ///     Some(ConfigError::BlockSizeTooLarge { requested: MAX_BLOCK_SIZE + 1 })
    /// );
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn with_options(options: ArenaOptions) -> Result<Self, ConfigError> {
        let (eager_shards, thread_cache) = (options.eager_shards, options.thread_cache);
        let arena = Arena::with_options(options)?;
        let shard_count = available_cpus().max(8).next_power_of_two();
        let arena_block_size = arena.block_size();
        let shard_block_size = (arena_block_size / 8).min(MAX_SHARD_BLOCK_SIZE);
        let shards = (0..shard_count)
            .map(|_| {
                CachePadded::new(Shard {
                    slice: SpinLock::new(Slice {
                        base: std::ptr::null_mut(),
                        front: 0,
                        back: 0,
                    }),
                    unused: AtomicUsize::new(0),
                    runs: AtomicUsize::new(0),
                })
            })
            .collect();
        // A run is a quarter shard block at most (so it is a shard-path
        // request), and 32 KiB at most; it serves requests of an eighth of it.
        let cache_run = if thread_cache {
            (shard_block_size / 4).min(MAX_THREAD_CACHE_RUN)
        } else {
            0
        };
        let inner = Box::new(Inner {
            id: thread_cache::new_arena_id(),
            cache_run,
            cache_request_limit: cache_run / 8,
            memory_allocated: AtomicUsize::new(arena.memory_allocated_bytes()),
            main_unused: AtomicUsize::new(arena.allocated_and_unused()),
            main: SpinLock::new(Main {
                arena,
                shard_refills: Cell::new(0),
                runs: Cell::new(0),
            }),
            block_size: arena_block_size,
            shard_block_size,
            shard_request_limit: shard_block_size / 4,
            shard_mask: shard_count - 1,
            eager_shards,
            shards,
        });
        Ok(Self {
            inner: NonNull::from(Box::leak(inner)),
        })
    }

    #[inline(always)]
    fn inner(&self) -> &Inner {
        // SAFETY: `inner` is valid from construction until `drop`, and only
        // ever shared (all mutation goes through its locks and atomics).
        unsafe { self.inner.as_ref() }
    }

    /// The size of the main arena's regular blocks.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{ArenaOptions, MIN_BLOCK_SIZE};
    ///
    /// let arena = ArenaOptions::new().with_block_size(1000).build_concurrent().unwrap();
    /// assert_eq!(arena.block_size(), MIN_BLOCK_SIZE); // raised to the minimum
    /// assert_eq!(arena.shard_block_size(), MIN_BLOCK_SIZE / 8);
    /// ```
    pub fn block_size(&self) -> usize {
        self.inner().block_size
    }

    /// How many shards there are: the smallest power of two at least
    /// `max(8, available CPUs)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::ConcurrentArena;
    ///
    /// let shards = ConcurrentArena::new().shard_count();
    /// let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    /// assert!(shards.is_power_of_two());
    /// assert!(shards >= 8 && shards >= cpus);
    /// ```
    pub fn shard_count(&self) -> usize {
        self.inner().shards.len()
    }

    /// The size of the run a thread's cache takes at a time (0 when the
    /// thread cache is off): `min(32 KiB, shard_block_size / 4)`. Requests of
    /// at most an eighth of it are served from the run.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{ArenaOptions, ConcurrentArena};
    ///
    /// assert_eq!(ConcurrentArena::new().thread_cache_run_size(), 32 << 10);
    /// // 64 KiB blocks make 8 KiB shard blocks, and runs of a quarter of that.
    /// assert_eq!(ConcurrentArena::with_block_size(64 << 10).thread_cache_run_size(), 2 << 10);
    /// let off = ArenaOptions::new().with_thread_cache(false).build_concurrent().unwrap();
    /// assert_eq!(off.thread_cache_run_size(), 0);
    /// ```
    pub fn thread_cache_run_size(&self) -> usize {
        self.inner().cache_run
    }

    /// The size of the slice a shard takes from the main arena:
    /// `min(128 KiB, block_size / 8)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::ConcurrentArena;
    ///
    /// // An eighth of the block size, up to 128 KiB.
    /// assert_eq!(ConcurrentArena::with_block_size(256 << 10).shard_block_size(), 32 << 10);
    /// assert_eq!(ConcurrentArena::with_block_size(8 << 20).shard_block_size(), 128 << 10);
    /// ```
    pub fn shard_block_size(&self) -> usize {
        self.inner().shard_block_size
    }

    /// Allocates room for `layout`, or says why it cannot.
    ///
    /// The memory is uninitialised and aligned to `layout.align()`; it stays
    /// valid until the arena is dropped or reset, wherever the arena moves.
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
    /// use arena::{AllocError, ConcurrentArena};
    ///
    /// let arena = ConcurrentArena::with_block_size(4096);
    /// let ptr = arena.try_alloc_layout(Layout::new::<u64>())?.cast::<u64>();
    /// let moved = arena; // the memory does not move with the arena
    /// // SAFETY: fresh memory for a `u64`, still valid after the move.
    /// unsafe { ptr.write(42) };
    /// assert_eq!(unsafe { ptr.read() }, 42);
    /// let error = moved.try_alloc_layout(Layout::from_size_align(8, 8192).unwrap()).unwrap_err();
    /// assert_eq!(error, AllocError::AlignmentTooLarge { align: 8192, block_size: 4096 });
    /// # Ok::<(), AllocError>(())
    /// ```
    #[inline(always)]
    pub fn try_alloc_layout(&self, layout: Layout) -> Result<NonNull<u8>, AllocError> {
        let inner = self.inner();
        match thread_cache::bump(inner.id, layout) {
            Some(ptr) => Ok(ptr),
            None => inner.alloc_slow(layout),
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
    /// use arena::ConcurrentArena;
    ///
    /// let arena = ConcurrentArena::new();
    /// let layout = Layout::from_size_align(64, 64).unwrap();
    /// let (a, b) = std::thread::scope(|s| {
    ///     let a = s.spawn(|| arena.alloc_layout(layout).as_ptr() as usize);
    ///     let b = s.spawn(|| arena.alloc_layout(layout).as_ptr() as usize);
    ///     (a.join().unwrap(), b.join().unwrap())
    /// });
    /// assert_eq!((a % 64, b % 64), (0, 0));
    /// assert!(a.abs_diff(b) >= 64); // the two allocations do not overlap
    /// ```
    #[inline(always)]
    pub fn alloc_layout(&self, layout: Layout) -> NonNull<u8> {
        let inner = self.inner();
        match thread_cache::bump(inner.id, layout) {
            Some(ptr) => ptr,
            None => inner.alloc_slow_or_fail(layout),
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
    /// use arena::ConcurrentArena;
    ///
    /// let arena = ConcurrentArena::new();
    /// let (a, b) = std::thread::scope(|s| {
    ///     let a = s.spawn(|| &*arena.alloc([1u64, 2]));
    ///     let b = s.spawn(|| &*arena.alloc(3u64));
    ///     (a.join().unwrap(), b.join().unwrap())
    /// });
    /// // The values outlive the threads that moved them in.
    /// assert_eq!((a, b), (&[1, 2], &3));
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
    /// use arena::{AllocError, ConcurrentArena};
    ///
    /// #[derive(Debug, PartialEq)]
    /// #[repr(align(8192))]
    /// struct Page(u8);
    ///
    /// let arena = ConcurrentArena::with_block_size(4096);
    /// let (page, error) = arena.try_alloc(Page(7)).unwrap_err();
    /// assert_eq!(page, Page(7)); // the value comes back with the error
    /// assert_eq!(error, AllocError::AlignmentTooLarge { align: 8192, block_size: 4096 });
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
    /// use arena::ConcurrentArena;
    ///
    /// let arena = ConcurrentArena::new();
    /// let key: &[u8] = std::thread::scope(|s| {
    ///     let thread = s.spawn(|| {
    ///         let source = b"key-7".to_vec();
    ///         &*arena.alloc_slice_copy(&source) // `source` is freed, the copy stays
    ///     });
    ///     thread.join().unwrap()
    /// });
    /// assert_eq!(key, b"key-7");
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
    /// use arena::ConcurrentArena;
    ///
    /// let arena = ConcurrentArena::new();
    /// let names: [&str; 2] = std::thread::scope(|s| {
    ///     let a = s.spawn(|| &*arena.alloc_str("alpha"));
    ///     let b = s.spawn(|| &*arena.alloc_str("beta"));
    ///     [a.join().unwrap(), b.join().unwrap()]
    /// });
    /// assert_eq!(names, ["alpha", "beta"]);
    /// assert!(arena.approximate_memory_usage() >= "alphabeta".len());
    /// ```
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub fn alloc_str(&self, src: &str) -> &mut str {
        let bytes = self.alloc_slice_copy(src.as_bytes());
        // SAFETY: a byte-for-byte copy of a `str` is UTF-8.
        unsafe { std::str::from_utf8_unchecked_mut(bytes) }
    }

    /// Forgets every allocation: the main arena keeps its regular blocks for
    /// reuse (see [`Arena::reset`]) and the shards drop their slices.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::ConcurrentArena;
    ///
    /// let mut arena = ConcurrentArena::with_block_size(64 << 10);
    /// for i in 0..1000u32 {
    ///     arena.alloc(i);
    /// }
    /// let held = arena.memory_allocated_bytes();
    /// arena.reset();
    /// assert_eq!(arena.approximate_memory_usage(), 0);
    /// assert_eq!(arena.memory_allocated_bytes(), held); // regular blocks kept for reuse
    /// ```
    pub fn reset(&mut self) {
        // SAFETY: `&mut self` excludes every other access to `inner`.
        let inner = unsafe { self.inner.as_mut() };
        // Retire the id, so that no thread's cached run of the old blocks
        // is used again.
        inner.id = thread_cache::new_arena_id();
        let inner = &*inner;
        for shard in inner.shards.iter() {
            *shard.slice.lock().get_mut() = Slice {
                base: std::ptr::null_mut(),
                front: 0,
                back: 0,
            };
            // Relaxed: `&mut self` excludes every other user.
            shard.unused.store(0, Ordering::Relaxed);
            shard.runs.store(0, Ordering::Relaxed);
        }
        let mut main = inner.main.lock();
        main.get_mut().arena.reset();
        main.get_mut().shard_refills.set(0);
        main.get_mut().runs.set(0);
        inner.publish(&main.get().arena);
    }

    /// Bytes of every block held, the inline block included. Lock-free; it
    /// only grows (until [`reset`](Self::reset)).
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{ConcurrentArena, INLINE_BLOCK_SIZE};
    ///
    /// let arena = ConcurrentArena::with_block_size(64 << 10);
    /// assert_eq!(arena.memory_allocated_bytes(), INLINE_BLOCK_SIZE);
    /// arena.alloc_slice_copy(&[0u8; 20 << 10]); // over a quarter block: a block of its own
    /// assert_eq!(arena.memory_allocated_bytes(), INLINE_BLOCK_SIZE + (20 << 10));
    /// ```
    pub fn memory_allocated_bytes(&self) -> usize {
        // Relaxed: a statistic; each store is a complete value.
        self.inner().memory_allocated.load(Ordering::Relaxed)
    }

    /// Bytes reserved but not handed out: the main arena's and every shard's
    /// (runs held by threads' caches count as handed out). Lock-free, and so
    /// only approximate while other threads allocate (the parts are read one
    /// after another); exact when none does.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{ConcurrentArena, INLINE_BLOCK_SIZE};
    ///
    /// let arena = ConcurrentArena::new();
    /// arena.alloc_str("abc");
    /// // No other thread allocates, so the sum is exact.
    /// assert_eq!(arena.allocated_and_unused(), INLINE_BLOCK_SIZE - 3);
    /// let used = arena.approximate_memory_usage();
    /// assert_eq!(arena.allocated_and_unused(), arena.memory_allocated_bytes() - used);
    /// ```
    pub fn allocated_and_unused(&self) -> usize {
        let inner = self.inner();
        // Relaxed: statistics; each load is a complete value.
        let shards: usize = inner
            .shards
            .iter()
            .map(|shard| shard.unused.load(Ordering::Relaxed))
            .sum();
        inner.main_unused.load(Ordering::Relaxed) + shards
    }

    /// Bytes handed out, padding and abandoned tails included. Takes the
    /// main arena's lock briefly (as RocksDB does), which makes it exact with
    /// respect to refills: it never decreases (until [`reset`](Self::reset)),
    /// never exceeds [`memory_allocated_bytes`](Self::memory_allocated_bytes),
    /// and is at least the sum of the sizes asked for.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::ConcurrentArena;
    ///
    /// let arena = ConcurrentArena::new();
    /// std::thread::scope(|s| {
    ///     for _ in 0..4 {
    ///         s.spawn(|| arena.alloc([7u64; 100]).len());
    ///     }
    /// });
    /// let usage = arena.approximate_memory_usage();
    /// assert!(usage >= 4 * 100 * 8); // at least what was asked for
    /// assert!(usage <= arena.memory_allocated_bytes());
    /// ```
    pub fn approximate_memory_usage(&self) -> usize {
        self.stats().approximate_memory_usage
    }

    /// All the accounting at once, consistent (taken under the main arena's
    /// lock; shard slices are refilled only under it).
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::ConcurrentArena;
    ///
    /// let arena = ConcurrentArena::with_block_size(64 << 10);
    /// for i in 0..10_000u32 {
    ///     arena.alloc(i);
    /// }
    /// let stats = arena.stats();
    /// let (used, unused) = (stats.approximate_memory_usage, stats.allocated_and_unused);
    /// assert_eq!(stats.memory_allocated_bytes, used + unused);
    /// assert!(stats.approximate_memory_usage >= 10_000 * 4);
    /// assert!(stats.thread_cache_refills > 0); // small requests were served from runs
    /// ```
    pub fn stats(&self) -> ArenaStats {
        let inner = self.inner();
        let main = inner.main.lock();
        let mut stats = main.get().arena.stats();
        // Relaxed: under the main lock no refill can raise a shard's count,
        // and the lock's Acquire makes the last refill's store visible, so
        // these are at most the slice sizes the arena counts as handed out.
        let shard_unused: usize = inner
            .shards
            .iter()
            .map(|shard| shard.unused.load(Ordering::Relaxed))
            .sum();
        stats.allocated_and_unused += shard_unused;
        stats.approximate_memory_usage =
            stats.approximate_memory_usage.saturating_sub(shard_unused);
        stats.shard_refills = main.get().shard_refills.get();
        // Relaxed: statistics, exact once the threads that took runs are
        // done (each count is stored under its shard's lock).
        let shard_runs: usize = inner
            .shards
            .iter()
            .map(|shard| shard.runs.load(Ordering::Relaxed))
            .sum();
        stats.thread_cache_refills = main.get().runs.get() + shard_runs;
        stats
    }
}
