//! The state behind a [`ConcurrentArena`](super::ConcurrentArena): the
//! main arena, the per-CPU shards and the slices they cache, and the
//! routing of what a thread's cached run cannot serve.
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
use std::ptr::NonNull;

use crossbeam_utils::CachePadded;

use crate::Arena;
use crate::arena::{alloc_failed, carve, dangling};
use crate::options::{AllocError, BLOCK_ALIGN, INLINE_BLOCK_SIZE};
use crate::spin::{SpinGuard, SpinLock};
use crate::sync::{AtomicUsize, Ordering};
use crate::{cpu, thread_cache};

pub(super) struct Inner {
    /// This arena's id in the threads' run caches; renewed by `reset`.
    pub(super) id: u64,
    pub(super) main: SpinLock<Main>,
    pub(super) block_size: usize,
    /// Copy of the main arena's `memory_allocated_bytes`, refreshed under
    /// its lock, for lock-free readers.
    pub(super) memory_allocated: AtomicUsize,
    /// Copy of the main arena's `allocated_and_unused`, likewise.
    pub(super) main_unused: AtomicUsize,
    pub(super) shard_block_size: usize,
    /// Requests needing more than this go to the main arena.
    pub(super) shard_request_limit: usize,
    pub(super) shard_mask: usize,
    pub(super) eager_shards: bool,
    /// Bytes of a thread-cache run; 0 when the thread cache is off.
    pub(super) cache_run: usize,
    /// Requests needing more than this bypass the thread cache.
    pub(super) cache_request_limit: usize,
    pub(super) shards: Box<[CachePadded<Shard>]>,
}

pub(super) struct Main {
    pub(super) arena: Arena,
    pub(super) shard_refills: Cell<usize>,
    /// Thread-cache runs taken from the main arena itself.
    pub(super) runs: Cell<usize>,
}

pub(super) struct Shard {
    pub(super) slice: SpinLock<Slice>,
    /// Free bytes of `slice`, stored under its lock, read without it by the
    /// statistics (and by threads choosing between shard 0 and the main
    /// arena).
    pub(super) unused: AtomicUsize,
    /// Thread-cache runs taken from this shard: stored under its lock (a
    /// load and a store, no read-modify-write: the line is this CPU's
    /// already), summed by the statistics. Counting runs here rather than in
    /// one arena-wide counter keeps a shared line out of every refill.
    pub(super) runs: AtomicUsize,
}

/// What a request to the shared paths is for: the statistics count
/// thread-cache runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Request {
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
pub(super) struct Slice {
    pub(super) base: *mut u8,
    pub(super) front: usize,
    pub(super) back: usize,
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

impl Inner {
    /// [`alloc_slow`](Self::alloc_slow) for the panicking API: the pointer
    /// comes back in a register, so the fast path around it keeps no
    /// `Result` on the stack.
    #[inline(never)]
    pub(super) fn alloc_slow_or_fail(&self, layout: Layout) -> NonNull<u8> {
        match self.alloc_slow(layout) {
            Ok(ptr) => ptr,
            Err(error) => alloc_failed(layout, error),
        }
    }

    /// Everything the thread's cached run cannot serve.
    #[inline(never)]
    pub(super) fn alloc_slow(&self, layout: Layout) -> Result<NonNull<u8>, AllocError> {
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
    pub(super) fn publish(&self, arena: &Arena) {
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
