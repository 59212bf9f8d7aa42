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
//! A node is written only before it is published (its links with relaxed
//! stores, its key with plain writes); afterwards its key never changes and
//! its links change only through the release CAS or store of an insert that
//! links a new node right after it. Nodes are never freed individually: they
//! live until the list's arena is dropped.

use crate::sync::{AtomicPtr, Ordering};
use arena::ConcurrentArena;
use std::alloc::Layout;
use std::ptr::{self, NonNull};

/// The tallest tower any list may be configured with: enough for branching
/// 2 up to 2^24 (16M) nodes. Splices hold this many levels.
pub(crate) const HEIGHT_LIMIT: usize = 24;

/// Bytes per link. Not hard-coded: loom's atomics are larger than a pointer.
const SLOT: usize = size_of::<AtomicPtr<u8>>();
/// Where the key length sits, relative to the handle.
const LEN_OFFSET: usize = SLOT;
/// Where the key bytes start, relative to the handle.
const KEY_OFFSET: usize = SLOT + size_of::<u32>();
/// Alignment of an allocation; every link is then aligned, since links are
/// whole slots apart.
const NODE_ALIGN: usize = align_of::<AtomicPtr<u8>>();

const _: () = assert!(SLOT.is_multiple_of(align_of::<u32>()));
const _: () = assert!(SLOT.is_multiple_of(NODE_ALIGN));

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
    pub(crate) fn alloc(arena: &ConcurrentArena, height: usize, key_len: usize) -> Node {
        assert!((1..=HEIGHT_LIMIT).contains(&height));
        if key_len > MAX_KEY_LEN {
            key_too_long(key_len);
        }
        let tower = (height - 1) * SLOT;
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
            // SAFETY: link `level` occupies `handle - level * SLOT ..+ SLOT`,
            // inside the allocation since `level < height`; it is aligned
            // because `base` is NODE_ALIGN-aligned and the offset is a
            // multiple of SLOT, itself a multiple of NODE_ALIGN.
            unsafe {
                handle
                    .sub(level * SLOT)
                    .cast::<AtomicPtr<u8>>()
                    .write(AtomicPtr::new(ptr::null_mut()));
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
    /// The node's arena outlives `'a` and `level` is below the node's height.
    #[inline]
    unsafe fn link<'a>(self, level: usize) -> &'a AtomicPtr<u8> {
        // SAFETY: the caller guarantees the link exists and stays allocated
        // for 'a; `alloc` initialised it as an atomic.
        unsafe { &*self.0.as_ptr().sub(level * SLOT).cast::<AtomicPtr<u8>>() }
    }

    /// The next node at `level`, or `None` at the end of the level.
    ///
    /// # Safety
    ///
    /// As for [`Node::link`]; the node is published, or owned by the caller.
    #[inline]
    pub(crate) unsafe fn next(self, level: usize) -> Option<Node> {
        // SAFETY: forwarded to the caller.
        let link = unsafe { self.link(level) };
        // Acquire: pairs with the Release publication in `cas_next` and
        // `store_next`, so the node we reach has its key and links visible.
        NonNull::new(link.load(Ordering::Acquire)).map(Node)
    }

    /// Points this node's `level` link at `next` while the node is not yet
    /// reachable at that level.
    ///
    /// # Safety
    ///
    /// As for [`Node::link`], and no other thread reads this link yet.
    #[inline]
    pub(crate) unsafe fn set_next_unpublished(self, level: usize, next: Option<Node>) {
        // SAFETY: forwarded to the caller.
        let link = unsafe { self.link(level) };
        // Relaxed: nobody can reach this link yet; the Release CAS or store
        // that publishes the node at this level carries it.
        link.store(as_ptr(next), Ordering::Relaxed);
    }

    /// Replaces this node's `level` link `expected -> new` if it still holds
    /// `expected`, publishing `new` at that level.
    ///
    /// # Safety
    ///
    /// As for [`Node::link`].
    #[inline]
    pub(crate) unsafe fn cas_next(self, level: usize, expected: Option<Node>, new: Node) -> bool {
        // SAFETY: forwarded to the caller.
        let link = unsafe { self.link(level) };
        link.compare_exchange(
            as_ptr(expected),
            new.0.as_ptr(),
            // Release on success: publishes `new` (key and links) to every
            // reader that acquires this link.
            Ordering::Release,
            // Relaxed on failure: the caller re-reads the level with Acquire
            // loads before it follows any pointer.
            Ordering::Relaxed,
        )
        .is_ok()
    }

    /// Publishes `new` at `level` right after this node, without a CAS: only
    /// for a list with a single writer.
    ///
    /// # Safety
    ///
    /// As for [`Node::link`], and no other thread writes this link
    /// concurrently.
    #[inline]
    pub(crate) unsafe fn store_next(self, level: usize, new: Node) {
        // SAFETY: forwarded to the caller.
        let link = unsafe { self.link(level) };
        // Release: publishes `new` (key and links) to every reader that
        // acquires this link.
        link.store(new.0.as_ptr(), Ordering::Release);
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
    pub(crate) fn prefetch(self, level: usize) {
        prefetch_read(self.0.as_ptr().wrapping_sub(level * SLOT));
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
