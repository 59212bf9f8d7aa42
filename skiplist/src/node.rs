//! One node: a tower of links and the key, in a single arena allocation.
//!
//! ```text
//!  allocation start                       handle (Node)
//!  |                                      |
//!  v                                      v
//!  [ link h-1 ] [ link h-2 ] ... [ link 1 ] [ link 0 ] [ len: u32 ] [ key bytes ... ]
//!  <------------- (h - 1) * SLOT ---------> <- SLOT -> <--- 4 ----> <-- len bytes -->
//! ```
//!
//! The handle points at the level-0 link, so level `i` is `i` slots below it
//! and the key sits at a fixed offset above it: no height field is needed to
//! find the key, and a search that only walks level 0 touches one cache line
//! for the link and the start of the key. A link holds the handle of the next
//! node at that level, or null at the end of the level.
//!
//! That is RocksDB's layout ([`Stride::PLAIN`]). In the prefixed layout
//! ([`Stride::PREFIXED`]) each link above level 0 has a `u64` beside it, the
//! comparator's [`key_prefix`](crate::Comparator::key_prefix) of the node it
//! points to (`u64::MAX` for the end):
//!
//! ```text
//!  [ link h-1 | prefix h-1 ] ... [ link 1 | prefix 1 ] [ link 0 ] [ len: u32 ] [ key bytes ... ]
//! ```
//!
//! so that a search can decide to step down without loading the next node.
//! Level 0 has no prefix: a search ends there on the node it returns, which
//! it reads anyway. Each link above level 0, pointing at a node `n`, also
//! has two *hints* beside its prefix: `n`'s successor at the same level
//! (across) and one level down (down):
//!
//! ```text
//!  [ link h-1 | prefix h-1 | across h-1 | down h-1 ] ... [ link 1 | prefix 1 | across 1 | down 1 ] [ link 0 ] [ len ] [ key ... ]
//! ```
//!
//! A search that moves right to `n` prefetches both, so that whichever
//! way it goes from `n` (right again, or down and then right) that node is
//! already on its way: a chain of dependent misses overlaps pairwise. A
//! hint only steers prefetching and is never needed for a result. An
//! insert sets its new node's hints from its successor (whose tower it
//! read to compare keys) and, once linked, its predecessor's; inserts
//! elsewhere leave some hints stale (naming a node further right, or
//! null), which costs a prefetch that does not help, nothing else.
//!
//! A node is written only before it is published (its links with relaxed
//! stores, its key with plain writes); afterwards its key never changes and
//! its links change only through the release CAS or store of an insert that
//! links a new node right after it. Nodes are never freed individually: they
//! live until the list's arena is dropped.
//!
//! A prefix is written after the link it describes, with a release
//! `fetch_min` (a release store under a single writer), and read before it,
//! with an acquire load. In an insert-only list a link only ever moves to a
//! smaller node, so a prefix a reader sees is that of the node it then loads
//! from the link, or of a larger node that was there before: `prefix(key) >
//! prefix` still proves that the key is after the node loaded, while
//! `prefix(key) < prefix` may make a search step down one node early, which
//! only costs it a step. Searches that must bracket the key exactly (the
//! insert paths) compare keys instead.

use crate::sync::{AtomicPtr, AtomicU64, Ordering};
use arena::ConcurrentArena;
use std::alloc::Layout;
use std::ptr::{self, NonNull};

/// The tallest tower any list may be configured with: enough for branching
/// 2 up to 2^24 (16M) nodes. Splices hold this many levels.
pub(crate) const HEIGHT_LIMIT: usize = 24;

/// Bytes per link. Not hard-coded: loom's atomics are larger than a pointer.
const SLOT: usize = size_of::<AtomicPtr<u8>>();
/// Bytes per key prefix, in the prefixed layout.
const PREFIX_SLOT: usize = size_of::<AtomicU64>();
/// A hint, in the prefixed layout: a std atomic even under loom, which
/// need not explore a value that only steers prefetching.
type HintSlot = std::sync::atomic::AtomicPtr<u8>;
/// Bytes per hint.
const HINT_SLOT: usize = size_of::<HintSlot>();
/// Where the key length sits, relative to the handle.
const LEN_OFFSET: usize = SLOT;
/// Where the key bytes start, relative to the handle.
const KEY_OFFSET: usize = SLOT + size_of::<u32>();
/// Alignment of an allocation; every link and prefix is then aligned, since
/// they are whole slots apart.
const NODE_ALIGN: usize = if align_of::<AtomicPtr<u8>>() > align_of::<AtomicU64>() {
    align_of::<AtomicPtr<u8>>()
} else {
    align_of::<AtomicU64>()
};

const _: () = assert!(SLOT.is_multiple_of(align_of::<u32>()));
const _: () = assert!(SLOT.is_multiple_of(NODE_ALIGN));
const _: () = assert!(PREFIX_SLOT.is_multiple_of(NODE_ALIGN));

/// The prefix slot's value for a link at the end of its level: no key's
/// prefix is above it, so it never proves a key after the end.
pub(crate) const END_PREFIX: u64 = u64::MAX;

/// A list's node layout: the distance between the links of two adjacent
/// levels above level 0, whose size says whether a prefix sits beside each.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Stride(usize);

impl Stride {
    /// RocksDB's layout: links only.
    pub(crate) const PLAIN: Stride = Stride(SLOT);
    /// A key prefix and two hints beside each link above level 0.
    pub(crate) const PREFIXED: Stride = Stride(SLOT + PREFIX_SLOT + 2 * HINT_SLOT);

    /// Whether links above level 0 carry prefixes.
    #[inline(always)]
    pub(crate) fn prefixed(self) -> bool {
        self.0 != SLOT
    }
}

/// The two hints beside a link above level 0, in the prefixed layout, each
/// a node a search may need one step after the link's node `n`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Hint {
    /// `n`'s successor at the link's level: the node after the next one.
    Across,
    /// `n`'s successor one level down: where the search goes if it steps
    /// down at `n` and then moves right.
    Down,
}

impl Hint {
    /// The hint's offset from its link.
    const fn offset(self) -> usize {
        match self {
            Hint::Across => SLOT + PREFIX_SLOT,
            Hint::Down => SLOT + PREFIX_SLOT + HINT_SLOT,
        }
    }
}

/// The longest key a node can hold (its length is stored as a `u32`).
pub(crate) const MAX_KEY_LEN: usize = u32::MAX as usize;

/// A handle on a node: the address of its level-0 link, with the provenance
/// of the whole allocation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Node(NonNull<u8>);

// SAFETY: a `Node` is only an address into arena memory. Every dereference
// goes through an `unsafe fn` below whose caller guarantees that the arena is
// alive; the memory behind it is immutable once published except for the
// links, which are atomics. Moving or sharing the address between threads
// adds nothing to that.
unsafe impl Send for Node {}
// SAFETY: as for `Send`.
unsafe impl Sync for Node {}

impl Node {
    /// Allocates a node of `height` levels with room for `key_len` key bytes
    /// from `arena`. Its links are null, its key length is set, its key bytes
    /// are uninitialised.
    ///
    /// # Panics
    ///
    /// If `key_len` exceeds [`MAX_KEY_LEN`], or `height` is not in
    /// `1..=HEIGHT_LIMIT`.
    #[inline]
    pub(crate) fn alloc(
        arena: &ConcurrentArena,
        height: usize,
        key_len: usize,
        stride: Stride,
    ) -> Node {
        assert!((1..=HEIGHT_LIMIT).contains(&height));
        if key_len > MAX_KEY_LEN {
            key_too_long(key_len);
        }
        let tower = (height - 1) * stride.0;
        // Cannot overflow on 64-bit targets (key_len <= u32::MAX); checked for
        // the others.
        let size = (tower + KEY_OFFSET)
            .checked_add(key_len)
            .unwrap_or_else(|| key_too_long(key_len));
        let layout =
            Layout::from_size_align(size, NODE_ALIGN).unwrap_or_else(|_| key_too_long(key_len));
        let base = arena.alloc_layout(layout);
        // SAFETY: `tower < size`, so the handle lies inside the allocation.
        let handle = unsafe { base.add(tower) };
        for level in 0..height {
            // SAFETY: link `level` occupies `handle - level * stride ..+
            // SLOT`, inside the allocation since `level < height`; it is
            // aligned because `base` is NODE_ALIGN-aligned and the offset is
            // a multiple of SLOT and PREFIX_SLOT, themselves multiples of
            // NODE_ALIGN.
            unsafe {
                handle
                    .sub(level * stride.0)
                    .cast::<AtomicPtr<u8>>()
                    .write(AtomicPtr::new(ptr::null_mut()));
            }
            if stride.prefixed() && level > 0 {
                // SAFETY: in the prefixed layout, the prefix of level
                // `level > 0` occupies `handle - level * stride + SLOT ..+
                // PREFIX_SLOT`, below link `level - 1` and inside the
                // allocation; aligned as above.
                unsafe {
                    handle
                        .sub(level * stride.0)
                        .add(SLOT)
                        .cast::<AtomicU64>()
                        .write(AtomicU64::new(END_PREFIX));
                }
                for hint in [Hint::Across, Hint::Down] {
                    // SAFETY: the hints of level `level > 0` occupy `handle -
                    // level * stride + SLOT + PREFIX_SLOT ..+ 2 * HINT_SLOT`,
                    // below link `level - 1`; aligned as above.
                    unsafe {
                        handle
                            .sub(level * stride.0)
                            .add(hint.offset())
                            .cast::<HintSlot>()
                            .write(HintSlot::new(ptr::null_mut()));
                    }
                }
            }
        }
        // SAFETY: `LEN_OFFSET..KEY_OFFSET` lies inside the allocation and is
        // aligned for u32 (SLOT is a multiple of 4 and the handle is aligned).
        unsafe { handle.add(LEN_OFFSET).cast::<u32>().write(key_len as u32) };
        Node(handle)
    }

    /// The link of this node at `level`.
    ///
    /// # Safety
    ///
    /// The node's arena outlives `'a`, `level` is below the node's height
    /// and `stride` is the layout it was allocated with.
    #[inline]
    unsafe fn link<'a>(self, level: usize, stride: Stride) -> &'a AtomicPtr<u8> {
        // SAFETY: the caller guarantees the link exists and stays allocated
        // for 'a; `alloc` initialised it as an atomic.
        unsafe {
            &*self
                .0
                .as_ptr()
                .sub(level * stride.0)
                .cast::<AtomicPtr<u8>>()
        }
    }

    /// The prefix beside this node's link at `level`.
    ///
    /// # Safety
    ///
    /// As for [`Node::link`], and `stride` is prefixed and `level > 0`.
    #[inline]
    unsafe fn prefix_slot<'a>(self, level: usize, stride: Stride) -> &'a AtomicU64 {
        debug_assert!(stride.prefixed() && level > 0);
        // SAFETY: the caller guarantees the slot exists and stays allocated
        // for 'a; `alloc` initialised it as an atomic.
        unsafe {
            &*self
                .0
                .as_ptr()
                .sub(level * stride.0)
                .add(SLOT)
                .cast::<AtomicU64>()
        }
    }

    /// One of the hints beside this node's link at `level`.
    ///
    /// # Safety
    ///
    /// As for [`Node::prefix_slot`].
    #[inline]
    unsafe fn hint_slot<'a>(self, level: usize, stride: Stride, hint: Hint) -> &'a HintSlot {
        debug_assert!(stride.prefixed() && level > 0);
        // SAFETY: the caller guarantees the slot exists and stays allocated
        // for 'a; `alloc` initialised it as an atomic.
        unsafe {
            &*self
                .0
                .as_ptr()
                .sub(level * stride.0)
                .add(hint.offset())
                .cast::<HintSlot>()
        }
    }

    /// Starts loading the node a hint beside this node's link at `level`
    /// names, at the level a search would walk it (`level` across, `level
    /// - 1` down).
    ///
    /// # Safety
    ///
    /// As for [`Node::prefix_slot`].
    #[inline(always)]
    pub(crate) unsafe fn prefetch_hint(self, level: usize, stride: Stride, hint: Hint) {
        // SAFETY: forwarded to the caller.
        let slot = unsafe { self.hint_slot(level, stride, hint) };
        // Relaxed: the address is only prefetched, never dereferenced.
        let node = slot.load(std::sync::atomic::Ordering::Relaxed);
        if !node.is_null() {
            let at = match hint {
                Hint::Across => level,
                Hint::Down => level - 1,
            };
            prefetch_read(node.wrapping_sub(at * stride.0));
        }
    }

    /// The node a hint at `level` names, if any.
    ///
    /// # Safety
    ///
    /// As for [`Node::prefix_slot`]; the node is published.
    #[inline]
    pub(crate) unsafe fn hint(self, level: usize, stride: Stride, hint: Hint) -> Option<Node> {
        // SAFETY: forwarded to the caller.
        let slot = unsafe { self.hint_slot(level, stride, hint) };
        // Acquire: pairs with `set_hint`'s Release, so the named node (which
        // its writer reached through an Acquire link load) is visible.
        NonNull::new(slot.load(std::sync::atomic::Ordering::Acquire)).map(Node)
    }

    /// Points a hint at `level` at `node`, a published node of this list
    /// after this node's successor there (or `None`).
    ///
    /// # Safety
    ///
    /// As for [`Node::prefix_slot`].
    #[inline(always)]
    pub(crate) unsafe fn set_hint(
        self,
        level: usize,
        stride: Stride,
        hint: Hint,
        node: Option<Node>,
    ) {
        // SAFETY: forwarded to the caller.
        let slot = unsafe { self.hint_slot(level, stride, hint) };
        // Release: see `hint`.
        slot.store(as_ptr(node), std::sync::atomic::Ordering::Release);
    }

    /// The next node at `level`, or `None` at the end of the level.
    ///
    /// # Safety
    ///
    /// As for [`Node::link`]; the node is published, or owned by the caller.
    #[inline]
    pub(crate) unsafe fn next(self, level: usize, stride: Stride) -> Option<Node> {
        // SAFETY: forwarded to the caller.
        let link = unsafe { self.link(level, stride) };
        // Acquire: pairs with the Release publication in `cas_next` and
        // `store_next`, so the node we reach has its key and links visible.
        NonNull::new(link.load(Ordering::Acquire)).map(Node)
    }

    /// The prefix stored beside the link at `level`, then the next node
    /// there: the prefix is that of the node returned or of a larger one
    /// (see the module documentation).
    ///
    /// # Safety
    ///
    /// As for [`Node::prefix_slot`]; the node is published.
    #[inline]
    pub(crate) unsafe fn prefix_and_next(
        self,
        level: usize,
        stride: Stride,
    ) -> (u64, Option<Node>) {
        // SAFETY: forwarded to the caller.
        let slot = unsafe { self.prefix_slot(level, stride) };
        // Acquire: pairs with the Release `fetch_min` (or store) that wrote
        // the prefix after its link, so the link loaded next is that node
        // or a later, smaller one.
        let prefix = slot.load(Ordering::Acquire);
        // SAFETY: forwarded to the caller.
        (prefix, unsafe { self.next(level, stride) })
    }

    /// Points this node's `level` link at `next` while the node is not yet
    /// reachable at that level.
    ///
    /// # Safety
    ///
    /// As for [`Node::link`], and no other thread reads this link yet.
    #[inline]
    /// `prefix` is `next`'s key prefix (`END_PREFIX` for the end); unused
    /// at level 0 and in the plain layout.
    pub(crate) unsafe fn set_next_unpublished(
        self,
        level: usize,
        next: Option<Node>,
        stride: Stride,
        prefix: u64,
    ) {
        // SAFETY: forwarded to the caller.
        let link = unsafe { self.link(level, stride) };
        // Relaxed: nobody can reach this link yet; the Release CAS or store
        // that publishes the node at this level carries it.
        link.store(as_ptr(next), Ordering::Relaxed);
        if stride.prefixed() && level > 0 {
            // SAFETY: forwarded to the caller; prefixed and level > 0.
            let slot = unsafe { self.prefix_slot(level, stride) };
            // Relaxed: as for the link.
            slot.store(prefix, Ordering::Relaxed);
        }
    }

    /// Replaces this node's `level` link `expected -> new` if it still holds
    /// `expected`, publishing `new` at that level; then, in the prefixed
    /// layout above level 0, lowers the prefix beside it to `prefix`,
    /// `new`'s key prefix.
    ///
    /// # Safety
    ///
    /// As for [`Node::link`].
    #[inline]
    pub(crate) unsafe fn cas_next(
        self,
        level: usize,
        expected: Option<Node>,
        new: Node,
        stride: Stride,
        prefix: u64,
    ) -> bool {
        // SAFETY: forwarded to the caller.
        let link = unsafe { self.link(level, stride) };
        let linked = link
            .compare_exchange(
                as_ptr(expected),
                new.0.as_ptr(),
                // Release on success: publishes `new` (key and links) to every
                // reader that acquires this link.
                Ordering::Release,
                // Relaxed on failure: the caller re-reads the level with Acquire
                // loads before it follows any pointer.
                Ordering::Relaxed,
            )
            .is_ok();
        if linked && stride.prefixed() && level > 0 {
            // SAFETY: forwarded to the caller; prefixed and level > 0.
            let slot = unsafe { self.prefix_slot(level, stride) };
            // Release: a reader that acquires this prefix then loads the
            // link as of our CAS or later. The minimum, because inserts
            // racing at this link store in any order, and the link's
            // latest node is the smallest it has held.
            slot.fetch_min(prefix, Ordering::Release);
        }
        linked
    }

    /// Publishes `new` at `level` right after this node, without a CAS: only
    /// for a list with a single writer.
    ///
    /// # Safety
    ///
    /// As for [`Node::link`], and no other thread writes this link
    /// concurrently.
    #[inline]
    pub(crate) unsafe fn store_next(self, level: usize, new: Node, stride: Stride, prefix: u64) {
        // SAFETY: forwarded to the caller.
        let link = unsafe { self.link(level, stride) };
        // Release: publishes `new` (key and links) to every reader that
        // acquires this link.
        link.store(new.0.as_ptr(), Ordering::Release);
        if stride.prefixed() && level > 0 {
            // SAFETY: forwarded to the caller; prefixed and level > 0.
            let slot = unsafe { self.prefix_slot(level, stride) };
            // Release: as in `cas_next`; the only writer stores in link
            // order, so a plain store keeps the minimum.
            slot.store(prefix, Ordering::Release);
        }
    }

    /// The key stored in the node.
    ///
    /// # Safety
    ///
    /// The node's arena outlives `'a`, the key bytes are initialised, and no
    /// `&mut` to them (from [`Node::key_mut`]) is alive during `'a`.
    #[inline]
    pub(crate) unsafe fn key<'a>(self) -> &'a [u8] {
        // SAFETY: `alloc` wrote the length at LEN_OFFSET and reserved that
        // many bytes at KEY_OFFSET; the caller guarantees they are
        // initialised and live for 'a.
        unsafe {
            let len = self.0.add(LEN_OFFSET).cast::<u32>().read() as usize;
            std::slice::from_raw_parts(self.0.as_ptr().add(KEY_OFFSET), len)
        }
    }

    /// The key bytes of a node that is not published yet, for filling.
    ///
    /// # Safety
    ///
    /// The node's arena outlives `'a`, the node is not published, and no
    /// other reference to its key exists during `'a`. The bytes may be
    /// uninitialised: the caller must not read them before writing.
    #[inline]
    pub(crate) unsafe fn key_ptr(self) -> (NonNull<u8>, usize) {
        // SAFETY: as in `key`; no reference is created here.
        unsafe {
            let len = self.0.add(LEN_OFFSET).cast::<u32>().read() as usize;
            (self.0.add(KEY_OFFSET), len)
        }
    }

    /// Asks the CPU to start loading the node's level-`level` link and the
    /// start of its key (one line when the tower is short), so that the miss
    /// overlaps with the work on the current node.
    #[inline(always)]
    pub(crate) fn prefetch(self, level: usize, stride: Stride) {
        prefetch_read(self.0.as_ptr().wrapping_sub(level * stride.0));
    }
}

#[inline(always)]
fn as_ptr(node: Option<Node>) -> *mut u8 {
    node.map_or(ptr::null_mut(), |n| n.0.as_ptr())
}

#[cold]
#[inline(never)]
fn key_too_long(len: usize) -> ! {
    panic!("skiplist: a key of {len} bytes exceeds the limit of {MAX_KEY_LEN} bytes")
}

/// A read prefetch of the line holding `p`. A hint only: it never faults and
/// has no effect on program semantics.
#[inline(always)]
fn prefetch_read(p: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch does not access memory as far as the abstract
        // machine is concerned and never faults, whatever the address. (The
        // intrinsic is a safe fn in newer toolchains, hence the allow.)
        #[allow(unused_unsafe)]
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>())
        };
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = p;
}
