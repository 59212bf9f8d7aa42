//! [`ConcurrentArena`]: RocksDB's `ConcurrentArena`, an [`Arena`] behind a
//! spin lock plus per-CPU shards that cache slices of it.
//!
//! Where a request of `need` bytes (size plus alignment beyond 16) goes,
//! when the thread's cached run (see `thread_cache`) cannot serve it:
//!
//! | thread's hint | condition                                   | path                          |
//! |---------------|---------------------------------------------|-------------------------------|
//! | any           | `need > shard_block / 4`                    | main arena, waiting for it    |
//! | 0             | shard 0 empty and main `try_lock` succeeds  | main arena                    |
//! | 0             | otherwise                                   | shard 0                       |
//! | `cpu \| flag` | always                                      | shard `cpu & (shards - 1)`    |
//! | any           | the shard's `try_lock` fails                | repick CPU, wait for its shard |
//! | any           | the shard's slice is too small              | refill under the main lock    |

use std::alloc::Layout;
use std::cell::Cell;
use std::fmt;
use std::ptr::NonNull;

use crossbeam_utils::CachePadded;

use crate::Arena;
use crate::arena::{alloc_failed, carve, dangling};
use crate::options::{
    AllocError, ArenaOptions, ArenaStats, BLOCK_ALIGN, ConfigError, INLINE_BLOCK_SIZE,
    MAX_SHARD_BLOCK_SIZE, MAX_THREAD_CACHE_RUN,
};
use crate::spin::{SpinGuard, SpinLock};
use crate::sync::{AtomicUsize, Ordering, available_cpus};
use crate::{cpu, thread_cache};

/// A bump arena that many threads allocate from at once: RocksDB's
/// `ConcurrentArena`, in bumpalo's shape, with a per-thread run cache in
/// front.
///
/// One [`Arena`] (the *main arena*) sits behind a spin lock. Next to it is a
/// power-of-two number (at least 8, at least the CPU count) of cache-padded
/// *shards*, each a spin lock over a slice of the main arena.
///
/// - A thread starts on the main arena. Only once it has found the main
///   arena locked does it move to a shard, the one of its current CPU
///   (`sched_getcpu`, remembered per thread); when that shard is locked in
///   turn it reads its CPU again. So a single writer fragments nothing, and
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

struct Inner {
    /// This arena's id in the threads' run caches; renewed by `reset`.
    id: u64,
    main: SpinLock<Main>,
    block_size: usize,
    /// Copy of the main arena's `memory_allocated_bytes`, refreshed under
    /// its lock, for lock-free readers.
    memory_allocated: AtomicUsize,
    /// Copy of the main arena's `allocated_and_unused`, likewise.
    main_unused: AtomicUsize,
    shard_block_size: usize,
    /// Requests needing more than this go to the main arena.
    shard_request_limit: usize,
    shard_mask: usize,
    eager_shards: bool,
    /// Bytes of a thread-cache run; 0 when the thread cache is off.
    cache_run: usize,
    /// Requests needing more than this bypass the thread cache.
    cache_request_limit: usize,
    shards: Box<[CachePadded<Shard>]>,
}

struct Main {
    arena: Arena,
    shard_refills: Cell<usize>,
    /// Thread-cache runs taken from the main arena itself.
    runs: Cell<usize>,
}

struct Shard {
    slice: SpinLock<Slice>,
    /// Free bytes of `slice`, stored under its lock, read without it by the
    /// statistics (and by threads choosing between shard 0 and the main
    /// arena).
    unused: AtomicUsize,
    /// Thread-cache runs taken from this shard: stored under its lock (a
    /// load and a store, no read-modify-write: the line is this CPU's
    /// already), summed by the statistics. Counting runs here rather than in
    /// one arena-wide counter keeps a shared line out of every refill.
    runs: AtomicUsize,
}

/// What a request to the shared paths is for: the statistics count
/// thread-cache runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Request {
    /// A caller's allocation.
    User,
    /// A run for the calling thread's cache.
    Run,
}

impl Shard {
    /// Counts a run served by this shard; called with its slice locked.
    #[inline]
    fn count(&self, request: Request) {
        if request == Request::Run {
            // Relaxed: stored only under the shard's lock, so a load and a
            // store cannot lose a count; `stats` sums the counts.
            self.runs
                .store(self.runs.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        }
    }
}

/// The free range `front..back` of a slice taken from the main arena.
struct Slice {
    base: *mut u8,
    front: usize,
    back: usize,
}

// SAFETY: `base` points into a block owned by the same `ConcurrentArena`,
// which outlives the slice; the slice is only touched under its lock.
unsafe impl Send for Slice {}

impl Slice {
    #[inline(always)]
    fn bump(&mut self, layout: Layout) -> Option<NonNull<u8>> {
        let (offset, front, back) = carve(self.base, self.front, self.back, layout)?;
        self.front = front;
        self.back = back;
        debug_assert!(layout.size() != 0 && !self.base.is_null());
        // SAFETY: callers never pass zero-size layouts, so `carve` only
        // succeeds on a non-empty slice, whose base points into a block of
        // the main arena; `offset <= back` keeps the pointer inside it.
        Some(unsafe { NonNull::new_unchecked(self.base.add(offset)) })
    }

    fn unused(&self) -> usize {
        self.back - self.front
    }
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
    /// of [`BLOCK_ALIGN`].
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

impl Inner {
    /// [`alloc_slow`](Self::alloc_slow) for the panicking API: the pointer
    /// comes back in a register, so the fast path around it keeps no
    /// `Result` on the stack.
    #[inline(never)]
    fn alloc_slow_or_fail(&self, layout: Layout) -> NonNull<u8> {
        match self.alloc_slow(layout) {
            Ok(ptr) => ptr,
            Err(error) => alloc_failed(layout, error),
        }
    }

    /// Everything the thread's cached run cannot serve.
    #[inline(never)]
    fn alloc_slow(&self, layout: Layout) -> Result<NonNull<u8>, AllocError> {
        // Room the request needs in a fresh (BLOCK_ALIGN-aligned) run or slice.
        let need = layout
            .size()
            .saturating_add(layout.align().saturating_sub(BLOCK_ALIGN));
        if need <= self.cache_request_limit
            && layout.size() != 0
            && let Some(ptr) = self.alloc_cached(layout)
        {
            return Ok(ptr);
        }
        self.alloc_routed(layout, need, Request::User)
    }

    /// RocksDB's routing: large requests and uncontended threads to the
    /// main arena, the others to their CPU's shard.
    fn alloc_routed(
        &self,
        layout: Layout,
        need: usize,
        request: Request,
    ) -> Result<NonNull<u8>, AllocError> {
        if need > self.shard_request_limit {
            return self.alloc_main(&self.main.lock(), layout, request);
        }
        let hint = cpu::shard_hint();
        // Relaxed: a heuristic peek; shard 0 is used once it holds bytes, so
        // that uncontended threads finish its slice before going back to the
        // main arena.
        if hint == 0
            && !self.eager_shards
            && self.shards[0].unused.load(Ordering::Relaxed) == 0
            && let Some(main) = self.main.try_lock()
        {
            return self.alloc_main(&main, layout, request);
        }
        self.alloc_shard(layout, need, hint, request)
    }

    /// Serves a small request from a fresh run of this thread's cache, taken
    /// through the shard path; `None` sends it to the shard path itself
    /// (no cache entry for this arena yet, the main arena still in its
    /// inline block, or no memory for a run).
    fn alloc_cached(&self, layout: Layout) -> Option<NonNull<u8>> {
        if !thread_cache::claim(self.id) {
            return None;
        }
        // The claimed entry may be one that was not first and has room.
        if let Some(ptr) = thread_cache::bump(self.id, layout) {
            return Some(ptr);
        }
        // Relaxed: a heuristic; while only the inline block exists, small
        // requests go to the main arena, so that a small arena takes no block.
        if self.memory_allocated.load(Ordering::Relaxed) <= INLINE_BLOCK_SIZE {
            return None;
        }
        let run_layout = Layout::from_size_align(self.cache_run, BLOCK_ALIGN)
            .expect("a run is far below isize::MAX");
        let run = self
            .alloc_routed(run_layout, self.cache_run, Request::Run)
            .ok()?;
        // SAFETY: `run` is `cache_run` fresh bytes of this arena, handed to
        // this thread alone, valid until the arena drops or is reset, and
        // `reset` retires `self.id`.
        unsafe { thread_cache::install(self.id, run, self.cache_run) };
        thread_cache::bump(self.id, layout)
    }

    /// Serves `layout` from the main arena, whose lock the caller holds.
    #[inline]
    fn alloc_main(
        &self,
        main: &SpinGuard<'_, Main>,
        layout: Layout,
        request: Request,
    ) -> Result<NonNull<u8>, AllocError> {
        let arena = &main.get().arena;
        let result = arena.try_alloc_layout(layout);
        self.publish(arena);
        if request == Request::Run && result.is_ok() {
            main.get().runs.set(main.get().runs.get() + 1);
        }
        result
    }

    /// Copies the main arena's counters for lock-free readers; called with
    /// its lock held, after every change.
    #[inline]
    fn publish(&self, arena: &Arena) {
        // Relaxed: statistics; the lock serialises the writers, so the
        // values only move forward.
        self.memory_allocated
            .store(arena.memory_allocated_bytes(), Ordering::Relaxed);
        self.main_unused
            .store(arena.allocated_and_unused(), Ordering::Relaxed);
    }

    /// The shard path: a thread that has seen contention (or any thread
    /// while shard 0 holds bytes).
    #[inline(never)]
    fn alloc_shard(
        &self,
        layout: Layout,
        need: usize,
        hint: usize,
        request: Request,
    ) -> Result<NonNull<u8>, AllocError> {
        let (shard, mut slice) = match self.shards[hint & self.shard_mask].slice.try_lock() {
            Some(slice) => (&self.shards[hint & self.shard_mask], slice),
            None => {
                let shard = &self.shards[cpu::repick() & self.shard_mask];
                (shard, shard.slice.lock())
            }
        };
        // An empty slice (null base) has `front == back == 0`, and `carve`
        // can only return offset 0 of it for a zero-size request: keep those
        // away from the null pointer.
        if layout.size() != 0
            && let Some(ptr) = slice.get_mut().bump(layout)
        {
            // Relaxed: a statistic, read by `stats` under the main lock;
            // this store only lowers it.
            shard.unused.store(slice.get().unused(), Ordering::Relaxed);
            shard.count(request);
            return Ok(ptr);
        }
        self.refill_and_alloc(shard, &mut slice, layout, need, request)
    }

    /// The shard's slice is too small for `layout`: serve it with a new slice
    /// from the main arena (or from the main arena itself while that is still
    /// in its inline block, so that a small arena takes no block).
    #[cold]
    #[inline(never)]
    fn refill_and_alloc(
        &self,
        shard: &Shard,
        slice: &mut SpinGuard<'_, Slice>,
        layout: Layout,
        need: usize,
        request: Request,
    ) -> Result<NonNull<u8>, AllocError> {
        if layout.size() == 0 {
            return Ok(dangling(layout.align()));
        }
        let main = self.main.lock();
        let arena = &main.get().arena;
        let exact = arena.aligned_tail();
        if arena.is_in_inline_block() && exact >= need {
            return self.alloc_main(&main, layout, request);
        }
        let shard_block = self.shard_block_size;
        // Take the main arena's whole tail rather than strand it, when it is
        // within 2x of a shard block.
        let take = if shard_block / 2 <= exact && exact < 2 * shard_block {
            exact
        } else {
            shard_block
        };
        let slice_layout = Layout::from_size_align(take, BLOCK_ALIGN)
            .expect("a shard block is far below isize::MAX");
        let start = match arena.try_alloc_layout(slice_layout) {
            Ok(start) => start,
            // No room for a slice (memory limit): the request itself may
            // still fit in the main arena's current block.
            Err(_) => return self.alloc_main(&main, layout, request),
        };
        let slice = slice.get_mut();
        // The old slice's free bytes are abandoned (less than `need`).
        *slice = Slice {
            base: start.as_ptr(),
            front: 0,
            back: take,
        };
        // Relaxed: stored under the main lock, so `stats` (which holds it)
        // sees each refill together with the main arena's counters.
        shard.unused.store(take, Ordering::Relaxed);
        main.get()
            .shard_refills
            .set(main.get().shard_refills.get() + 1);
        self.publish(arena);
        drop(main);
        let ptr = slice
            .bump(layout)
            .expect("a fresh slice has room for any request of at most a quarter shard block");
        // Relaxed: as in `alloc_shard`.
        shard.unused.store(slice.unused(), Ordering::Relaxed);
        shard.count(request);
        Ok(ptr)
    }
}
