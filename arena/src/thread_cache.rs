//! The per-thread run cache of [`ConcurrentArena`](crate::ConcurrentArena):
//! a few runs of arena memory, one per arena, that the owning thread bumps
//! through with no atomic operation at all.
//!
//! Why: every pass through a spin lock is an atomic read-modify-write, which
//! on x86-64 waits for the store buffer to drain, that is for the writes the
//! caller just made into its previous allocation: a cost of the order of
//! the bump and the writes themselves. A run of a few KiB taken through the
//! shard path amortises one lock over hundreds of small allocations.
//!
//! Each thread keeps [`ENTRIES`] entries, most recently used first. An entry
//! names its arena by a process-unique id (never reused, and renewed by
//! `reset`), so an entry of an arena that was dropped or reset is never
//! matched again and its pointers are never followed; entries hold no
//! ownership and need no destructor.
//!
//! | slow path of arena `id`            | action                                |
//! |------------------------------------|---------------------------------------|
//! | an entry for `id` exists           | move it first; refill its run if need |
//! | none; `id` in the `recent` ring    | take the last entry (abandon its run) |
//! | none; `id` not in the ring         | put `id` in the ring; the shard path  |
//!
//! The `recent` ring holds the arenas of the thread's last `ENTRIES`
//! entry-less slow paths.
//!
//! The last rule keeps a thread that interleaves more arenas than it has
//! entries from abandoning a run at every switch: it then simply uses the
//! shard path, while a thread that sticks to a few arenas caches them all.

use std::alloc::Layout;
use std::cell::Cell;
use std::ptr::NonNull;

/// Entries per thread: enough for a memtable's arenas and one more.
pub(crate) const ENTRIES: usize = 4;

/// A run of one arena's memory, carved from its end downwards: the
/// addresses `start .. top` are free.
///
/// Downwards, as bumpalo does: one subtraction, one mask and one comparison
/// per request, whatever its alignment. (The two-ended carving of the shared
/// blocks, which saves padding between aligned and unaligned requests,
/// costs a few more instructions, and the padding a run can lose is bounded
/// by its size.)
struct Entry {
    /// The arena's id; 0 for none.
    arena: Cell<u64>,
    /// The address of the run's first byte.
    start: Cell<usize>,
    /// One past the last free byte, with the run's provenance.
    top: Cell<*mut u8>,
}

struct Cache {
    entries: [Entry; ENTRIES],
    /// The arenas of this thread's last `ENTRIES` slow paths without an
    /// entry (a ring).
    recent: [Cell<u64>; ENTRIES],
    recent_next: Cell<usize>,
}

#[cfg(not(loom))]
std::thread_local! {
    static CACHE: Cache = const {
        Cache {
            entries: [const { Entry::empty() }; ENTRIES],
            recent: [const { Cell::new(0) }; ENTRIES],
            recent_next: Cell::new(0),
        }
    };
}

#[cfg(loom)]
loom::thread_local! {
    static CACHE: Cache = Cache {
        entries: [const { Entry::empty() }; ENTRIES],
        recent: [const { Cell::new(0) }; ENTRIES],
        recent_next: Cell::new(0),
    };
}

impl Entry {
    const fn empty() -> Self {
        Self {
            arena: Cell::new(0),
            start: Cell::new(0),
            top: Cell::new(std::ptr::null_mut()),
        }
    }

    fn copy_from(&self, other: &Self) {
        self.arena.set(other.arena.get());
        self.start.set(other.start.get());
        self.top.set(other.top.get());
    }
}

/// Carves `layout` from this thread's first entry if it belongs to `arena`
/// and has room.
#[inline(always)]
pub(crate) fn bump(arena: u64, layout: Layout) -> Option<NonNull<u8>> {
    CACHE.with(|cache| {
        let entry = &plain_address(cache).entries[0];
        if entry.arena.get() != arena {
            return None;
        }
        let top = entry.top.get();
        // `align` is a power of two, so the mask rounds down to it.
        let new_top = top.addr().checked_sub(layout.size())? & !(layout.align() - 1);
        if new_top < entry.start.get() {
            return None;
        }
        let ptr = top.with_addr(new_top);
        entry.top.set(ptr);
        // SAFETY: an entry with a non-zero id holds a run of that arena (see
        // `install`), and `start <= new_top <= top` keeps the pointer inside
        // it, so it is not null.
        Some(unsafe { NonNull::new_unchecked(ptr) })
    })
}

/// `cache`, through an address the optimiser cannot trace back to the
/// thread pointer.
///
/// Why: left alone, the optimiser folds the cache's address into
/// `fs`-relative operands on x86-64, and a load through a segment with a
/// non-zero base can take longer than one through a plain register. The
/// run's `top` is loaded and stored by every allocation, one chain through
/// a whole loop of them, so the segment shows in the allocation rate (see
/// `benches/results/arena/2026-12-03.md`, "The thread pointer on the hot
/// path"). Through a register, the address is computed once per loop.
/// (x86-64 only; miri and loom get the plain reference.)
#[inline(always)]
fn plain_address(cache: &Cache) -> &Cache {
    #[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
    {
        let mut address: *const Cache = cache;
        #[expect(
            clippy::pointers_in_nomem_asm_block,
            reason = "the block only passes the address through a register"
        )]
        // SAFETY: an empty assembly block that hands the pointer back
        // unchanged: it reads and writes no memory, touches no stack or
        // flags, and only hides the value's origin from the optimiser.
        unsafe {
            std::arch::asm!(
                "/* {0} */",
                inout(reg) address,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        // SAFETY: `address` is `cache`'s address, handed back unchanged by a
        // block that was given it, so it is as valid as `cache`.
        unsafe { &*address }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri), not(loom))))]
    cache
}

/// Makes an entry for `arena` the first one, if it has one or deserves one
/// (see the module's table); false sends the caller to the shard path.
pub(crate) fn claim(arena: u64) -> bool {
    CACHE.with(|cache| {
        let entries = &cache.entries;
        let found = entries.iter().position(|entry| entry.arena.get() == arena);
        let slot = match found {
            Some(slot) => slot,
            None if cache.recent.iter().any(|recent| recent.get() == arena) => ENTRIES - 1,
            None => {
                let next = cache.recent_next.get();
                cache.recent[next].set(arena);
                cache.recent_next.set((next + 1) % ENTRIES);
                return false;
            }
        };
        if slot > 0 {
            // Rotate `slot` to the front, keeping the others in order.
            let moved = Entry::empty();
            moved.copy_from(&entries[slot]);
            for i in (1..=slot).rev() {
                entries[i].copy_from(&entries[i - 1]);
            }
            entries[0].copy_from(&moved);
        }
        if found.is_none() {
            // The evicted entry's run (if any) is abandoned here. The entry
            // stays unnamed (id 0) until `install` gives it a run, so that
            // `bump` never carves from its null base.
            entries[0].copy_from(&Entry::empty());
        }
        true
    })
}

/// Gives the first entry, just claimed for `arena`, a fresh run of `len`
/// bytes at `run` (its previous run's free bytes are abandoned).
///
/// # Safety
/// `run` must be `len` bytes of `arena`'s memory handed out to this thread
/// alone, valid until the arena with id `arena` is dropped or reset (which
/// retires the id).
pub(crate) unsafe fn install(arena: u64, run: NonNull<u8>, len: usize) {
    CACHE.with(|cache| {
        let entry = &cache.entries[0];
        debug_assert!(entry.arena.get() == arena || entry.arena.get() == 0);
        entry.arena.set(arena);
        entry.start.set(run.as_ptr().addr());
        // SAFETY: `run .. run + len` is one allocation (the caller's
        // contract), so its end is in bounds of it.
        entry.top.set(unsafe { run.as_ptr().add(len) });
    });
}

/// A fresh arena id: never 0, never reused.
pub(crate) fn new_arena_id() -> u64 {
    // A plain std atomic even under loom: it only hands out distinct
    // numbers and orders nothing. Relaxed: only distinctness matters.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}
