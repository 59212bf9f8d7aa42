//! Where the [`Arena`]'s next block comes from, once the current one is
//! full: a spare block kept by `reset`, a block of the [`BlockPool`](crate::BlockPool), or a
//! fresh reservation, always within the memory limit.

use std::alloc::Layout;
use std::ptr::NonNull;

use super::{Arena, dangling};
use crate::block::{Block, BlockKey, BlockSource, HUGE_PAGE_SIZE};
use crate::options::{AllocError, BLOCK_ALIGN, HUGE_PAGES_WHEN_LARGE_FROM, HugePages};

impl Arena {
    /// An allocation the current block has no room for: a block of its
    /// own when it is over a quarter block, else the next regular block.
    #[cold]
    #[inline(never)]
    pub(super) fn alloc_slow(&self, layout: Layout) -> Result<NonNull<u8>, AllocError> {
        let (size, align) = (layout.size(), layout.align());
        if size == 0 {
            return Ok(dangling(align));
        }
        // A fresh block starts BLOCK_ALIGN-aligned: this is the room a
        // request needs there, padding included.
        let need = size
            .checked_add(align.saturating_sub(BLOCK_ALIGN))
            .ok_or(AllocError::SizeOverflow { size })?;
        if need > self.block_size / 4 {
            let block = self.reserve_block(size, align)?;
            let ptr = block.ptr();
            self.blocks.borrow_mut().irregular.push(block);
            return Ok(ptr);
        }
        self.start_new_block()?;
        Ok(self
            .bump(layout)
            .expect("a fresh block has room for any request of at most a quarter block"))
    }

    /// Whether [`HugePages::WhenLarge`] has turned to huge pages,
    /// `allocated` bytes in.
    fn huge_pages_turned(&self, allocated: usize) -> bool {
        self.source.huge_pages == HugePages::WhenLarge && allocated >= HUGE_PAGES_WHEN_LARGE_FROM
    }

    /// Where the next block comes from, `allocated` bytes in:
    /// [`HugePages::WhenLarge`] reserves as `Transparent` once turned, as
    /// `Off` before.
    fn block_source(&self, allocated: usize) -> BlockSource {
        if self.source.huge_pages != HugePages::WhenLarge {
            return self.source;
        }
        let huge_pages = if self.huge_pages_turned(allocated) {
            HugePages::Transparent
        } else {
            HugePages::Off
        };
        BlockSource {
            huge_pages,
            ..self.source
        }
    }

    /// The size of the next ordinary block: the configured one, or at least
    /// a huge page once [`HugePages::WhenLarge`] has turned.
    fn next_block_size(&self) -> usize {
        if self.huge_pages_turned(self.memory_allocated.get()) {
            self.block_size.max(HUGE_PAGE_SIZE)
        } else {
            self.block_size
        }
    }

    /// Reserves a block, within the memory limit, and counts it.
    fn reserve_block(&self, size: usize, align: usize) -> Result<Block, AllocError> {
        let allocated = self.memory_allocated.get();
        let room = self.memory_limit.saturating_sub(allocated);
        let exceeded = |block| AllocError::LimitExceeded {
            limit: self.memory_limit,
            allocated,
            block,
        };
        if size > room {
            return Err(exceeded(size));
        }
        let source = self.block_source(allocated);
        let pooled = self.pool.as_ref().and_then(|pool| {
            pool.take(BlockKey {
                size,
                align,
                huge_pages: source.huge_pages,
            })
        });
        let block = match pooled {
            Some(block) => {
                self.blocks.borrow_mut().pooled += 1;
                block
            }
            None => Block::reserve(size, align, source, &mut self.blocks.borrow_mut().counts)?,
        };
        // Rounding (to pages, or to a huge page) may have grown it.
        if block.len() > room {
            let len = block.len();
            if let Some(pool) = &self.pool {
                pool.give([block]);
            }
            return Err(exceeded(len));
        }
        self.memory_allocated.set(allocated + block.len());
        Ok(block)
    }

    /// Makes a block, spare or new, the current one; the old one's free
    /// bytes are abandoned.
    fn start_new_block(&self) -> Result<(), AllocError> {
        let spare = self.blocks.borrow_mut().spare.pop();
        let block = match spare {
            Some(block) => {
                self.spare_bytes.set(self.spare_bytes.get() - block.len());
                block
            }
            None => self.reserve_block(self.next_block_size(), BLOCK_ALIGN)?,
        };
        self.block_start.set(block.ptr().as_ptr());
        self.front.set(0);
        self.back.set(block.len());
        self.blocks.borrow_mut().regular.push(block);
        Ok(())
    }
}
