//! Reserving and releasing the blocks an arena carves up: from the global
//! allocator, or mapped with `mmap` for huge pages (Linux only; never under
//! miri, which has no `mmap`).

use std::alloc::Layout;
use std::ptr::NonNull;

use crate::options::{AllocError, BLOCK_ALIGN, HugePages};

/// Stride of prefaulting writes: the smallest common page size, so that no
/// page is missed (larger pages are merely written more than once).
const TOUCH_STRIDE: usize = 4096;

/// The huge page size assumed for `MAP_HUGETLB` and transparent huge pages
/// (the x86-64 and aarch64 default).
pub(crate) const HUGE_PAGE_SIZE: usize = 2 << 20;

/// How blocks are reserved.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockSource {
    pub(crate) huge_pages: HugePages,
    pub(crate) prefault: bool,
}

/// What a block was reserved as: a pooled block is reused only where an
/// arena would have reserved one just like it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BlockKey {
    /// The size asked for (the block may be larger: rounded to pages).
    pub(crate) size: usize,
    pub(crate) align: usize,
    pub(crate) huge_pages: HugePages,
}

/// How the blocks reserved so far were backed.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BackingCounts {
    pub(crate) huge_page_blocks: usize,
    pub(crate) huge_page_fallbacks: usize,
    pub(crate) transparent_huge_page_blocks: usize,
}

#[derive(Debug)]
enum Backing {
    Heap(Layout),
    #[cfg(all(target_os = "linux", not(miri)))]
    Mapped,
}

/// One block of memory, owned: released on drop.
#[derive(Debug)]
pub(crate) struct Block {
    ptr: NonNull<u8>,
    /// Bytes usable from `ptr`, and counted as reserved.
    len: usize,
    backing: Backing,
    key: BlockKey,
}

// SAFETY: a block is uniquely owned memory, with no thread affinity; the
// raw pointer is what makes the type `!Send` by default.
unsafe impl Send for Block {}

impl Block {
    pub(crate) fn ptr(&self) -> NonNull<u8> {
        self.ptr
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn key(&self) -> BlockKey {
        self.key
    }

    /// Reserves at least `size` bytes aligned to `align` (a power of two).
    pub(crate) fn reserve(
        size: usize,
        align: usize,
        source: BlockSource,
        counts: &mut BackingCounts,
    ) -> Result<Self, AllocError> {
        let key = BlockKey {
            size,
            align,
            huge_pages: source.huge_pages,
        };
        #[cfg(all(target_os = "linux", not(miri)))]
        if let Some(block) = mapped::reserve(key, source.prefault, counts)? {
            return Ok(block);
        }
        #[cfg(not(all(target_os = "linux", not(miri))))]
        if source.huge_pages == HugePages::Explicit {
            counts.huge_page_fallbacks += 1;
        }
        Self::reserve_heap(key, source.prefault)
    }

    fn reserve_heap(key: BlockKey, prefault: bool) -> Result<Self, AllocError> {
        let BlockKey { size, align, .. } = key;
        let layout = Layout::from_size_align(size.max(1), align.max(BLOCK_ALIGN))
            .map_err(|_| AllocError::SizeOverflow { size })?;
        // SAFETY: the layout's size is at least 1.
        let ptr = unsafe { std::alloc::alloc(layout) };
        let ptr = NonNull::new(ptr).ok_or(AllocError::OutOfMemory {
            bytes: layout.size(),
        })?;
        if prefault {
            touch_pages(ptr, layout.size());
        }
        Ok(Self {
            ptr,
            len: layout.size(),
            backing: Backing::Heap(layout),
            key,
        })
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        match self.backing {
            // SAFETY: `ptr` came from `alloc` with this layout and is freed
            // once, here.
            Backing::Heap(layout) => unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) },
            #[cfg(all(target_os = "linux", not(miri)))]
            Backing::Mapped => mapped::unmap(self.ptr, self.len),
        }
    }
}

/// Writes one byte in each page, so that the page faults happen now.
fn touch_pages(ptr: NonNull<u8>, len: usize) {
    for offset in (0..len).step_by(TOUCH_STRIDE) {
        // SAFETY: `offset < len` and the block owns `len` writable bytes;
        // nothing has been handed out from it yet. Volatile, so that the
        // store is not dropped as dead.
        unsafe { ptr.add(offset).write_volatile(0) };
    }
}

#[cfg(all(target_os = "linux", not(miri)))]
mod mapped {
    use std::ptr::{self, NonNull};

    use super::{BackingCounts, Block, BlockKey, HUGE_PAGE_SIZE, touch_pages};
    use crate::options::{AllocError, HugePages};

    /// A mapped block for the huge-page modes; `None` when the block should
    /// come from the global allocator instead.
    pub(super) fn reserve(
        key: BlockKey,
        prefault: bool,
        counts: &mut BackingCounts,
    ) -> Result<Option<Block>, AllocError> {
        let BlockKey {
            size,
            align,
            huge_pages,
        } = key;
        if huge_pages == HugePages::Off || align > HUGE_PAGE_SIZE {
            if huge_pages == HugePages::Explicit {
                counts.huge_page_fallbacks += 1;
            }
            return Ok(None);
        }
        let overflow = AllocError::SizeOverflow { size };
        let huge_len = size
            .checked_next_multiple_of(HUGE_PAGE_SIZE)
            .ok_or(overflow)?;
        if huge_len > isize::MAX as usize - HUGE_PAGE_SIZE {
            return Err(overflow);
        }
        if huge_pages == HugePages::Explicit {
            let populate = if prefault { libc::MAP_POPULATE } else { 0 };
            if let Some(ptr) = map(huge_len, libc::MAP_HUGETLB | populate) {
                counts.huge_page_blocks += 1;
                return Ok(Some(Block {
                    ptr,
                    len: huge_len,
                    backing: super::Backing::Mapped,
                    key,
                }));
            }
            counts.huge_page_fallbacks += 1;
        }
        if size < HUGE_PAGE_SIZE {
            // Too small to ever be backed by a huge page.
            return Ok(None);
        }
        // Over-map by one huge page and trim, so the block starts on a huge
        // page boundary: the kernel only uses a huge page for an aligned 2 MiB
        // range. The populate comes after the madvise, so that it faults in
        // huge pages rather than small ones.
        let len = size.next_multiple_of(4096);
        let map_len = len + HUGE_PAGE_SIZE;
        let Some(start) = map(map_len, 0) else {
            return Err(AllocError::OutOfMemory { bytes: len });
        };
        let head = start.as_ptr().align_offset(HUGE_PAGE_SIZE);
        // SAFETY: `head < HUGE_PAGE_SIZE`, so `head + len <= map_len` and both
        // pointers stay in the mapping.
        let (ptr, tail_start) = unsafe { (start.add(head), start.add(head + len)) };
        if head > 0 {
            unmap(start, head);
        }
        if map_len - head - len > 0 {
            unmap(tail_start, map_len - head - len);
        }
        // SAFETY: `ptr..ptr + len` is a mapping this function owns.
        let advised = unsafe { libc::madvise(ptr.as_ptr().cast(), len, libc::MADV_HUGEPAGE) } == 0;
        if advised {
            counts.transparent_huge_page_blocks += 1;
        }
        if prefault {
            touch_pages(ptr, len);
        }
        Ok(Some(Block {
            ptr,
            len,
            backing: super::Backing::Mapped,
            key,
        }))
    }

    /// An anonymous private read-write mapping of `len` bytes, or `None`.
    fn map(len: usize, extra_flags: libc::c_int) -> Option<NonNull<u8>> {
        // SAFETY: an anonymous mapping at an address the kernel picks
        // touches no existing memory; failure is reported as MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | extra_flags,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            None
        } else {
            NonNull::new(ptr.cast())
        }
    }

    /// Unmaps `len` bytes at `ptr`, a range of a mapping made by `map`.
    pub(super) fn unmap(ptr: NonNull<u8>, len: usize) {
        // SAFETY: the range is part of a mapping this crate made and owns,
        // and nothing refers to it any more.
        let result = unsafe { libc::munmap(ptr.as_ptr().cast(), len) };
        debug_assert_eq!(result, 0, "munmap of an arena block failed");
    }
}
