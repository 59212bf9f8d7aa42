//! [`BlockPool`]: blocks that dropped arenas leave for the next ones.

use std::collections::VecDeque;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, PoisonError};

use crate::block::{BackingCounts, Block, BlockKey, BlockSource, HUGE_PAGE_SIZE};
use crate::options::{AllocError, ArenaOptions, BLOCK_ALIGN, HugePages};
use crate::sync::{AtomicUsize, Mutex, Ordering::Relaxed};

/// Blocks kept between arenas: an arena built with
/// [`ArenaOptions::with_block_pool`](crate::ArenaOptions::with_block_pool)
/// gives its blocks to the pool when it drops, and takes a block from the
/// pool, when one of the same size and kind is there, before it asks the
/// system for a new one.
///
/// A block fresh from the system costs a page fault on the first write to
/// each of its pages (and the kernel zeroes each page, or each 2 MiB huge
/// page, on that fault), inside whatever allocation touches it first. A
/// memtable writes its whole arena once and drops it after the flush, so a
/// store that writes without pause pays that for every byte it writes; with
/// a pool, the next memtable writes into pages that are already there.
/// (jemalloc and glibc's heap keep freed memory too, but blocks mapped for
/// huge pages go back to the system at once.)
///
/// The pool holds at most [`capacity`](Self::capacity) bytes: past it, the
/// blocks it held longest are released to the system. Its blocks are not
/// counted by any arena until one takes them. It is a handle: clones share
/// one pool, and the blocks are released when the last handle and the last
/// arena using it are gone, or on [`clear`](Self::clear).
///
/// A reused block holds whatever the previous arena wrote there: arenas
/// hand out uninitialised memory either way.
///
/// # Examples
///
/// ```
/// use arena::{ArenaOptions, BlockPool};
///
/// let pool = BlockPool::new(8 << 20);
/// let options = ArenaOptions::new().with_block_size(64 << 10).with_block_pool(&pool);
/// let first = options.build_concurrent().unwrap();
/// for _ in 0..1000 {
///     first.alloc_slice_copy(&[1u8; 100]);
/// }
/// let blocks = first.stats().blocks;
/// drop(first); // its blocks go to the pool
/// assert_eq!(pool.held_bytes(), blocks * (64 << 10));
///
/// let second = options.build_concurrent().unwrap();
/// for _ in 0..1000 {
///     second.alloc_slice_copy(&[2u8; 100]);
/// }
/// assert_eq!(second.stats().pooled_blocks, blocks); // none new from the system
/// assert_eq!(pool.held_bytes(), 0);
/// ```
#[derive(Clone)]
pub struct BlockPool {
    inner: Arc<Inner>,
}

struct Inner {
    capacity: usize,
    held: Mutex<Held>,
    /// `held.bytes`, stored whenever it changes, for readers that would
    /// rather not take the lock (a writer checking the pool now and then).
    held_bytes: AtomicUsize,
}

/// The blocks held, the longest-held first, and their total size.
#[derive(Default)]
struct Held {
    blocks: VecDeque<Block>,
    bytes: usize,
}

impl BlockPool {
    /// An empty pool that holds at most `capacity` bytes of blocks.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = arena::BlockPool::new(64 << 20);
    /// assert_eq!((pool.capacity(), pool.held_bytes()), (64 << 20, 0));
    /// ```
    pub fn new(capacity: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                capacity,
                held: Mutex::new(Held::default()),
                held_bytes: AtomicUsize::new(0),
            }),
        }
    }

    /// The most bytes of blocks the pool holds.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(arena::BlockPool::new(1 << 20).capacity(), 1 << 20);
    /// ```
    pub fn capacity(&self) -> usize {
        self.inner.capacity
    }

    /// Bytes of the blocks the pool holds now.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{ArenaOptions, BlockPool};
    ///
    /// let pool = BlockPool::new(100 << 10); // room for one 64 KiB block, not two
    /// let options = ArenaOptions::new().with_block_size(64 << 10).with_block_pool(&pool);
    /// let (a, b) = (options.build().unwrap(), options.build().unwrap());
    /// a.alloc_slice_copy(&[1u8; 4000]); // past the inline block: one 64 KiB block each
    /// b.alloc_slice_copy(&[2u8; 4000]);
    /// assert_eq!(pool.held_bytes(), 0); // the arenas hold their blocks
    /// drop((a, b));
    /// assert_eq!(pool.held_bytes(), 64 << 10); // the second block passed the capacity
    /// ```
    pub fn held_bytes(&self) -> usize {
        // Relaxed: a snapshot; the lock orders the blocks themselves.
        self.inner.held_bytes.load(Relaxed)
    }

    /// Releases every block the pool holds to the system.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{ArenaOptions, BlockPool};
    ///
    /// let pool = BlockPool::new(1 << 20);
    /// let arena = ArenaOptions::new().with_block_size(4096).with_block_pool(&pool).build().unwrap();
    /// for _ in 0..64 {
    ///     arena.alloc([0u8; 64]); // past the inline block, into one block
    /// }
    /// drop(arena);
    /// assert_eq!(pool.held_bytes(), 4096);
    /// pool.clear();
    /// assert_eq!(pool.held_bytes(), 0);
    /// ```
    pub fn clear(&self) {
        let blocks = {
            let mut held = self.held();
            // Relaxed: the copy is only a size hint; the lock orders the
            // blocks.
            self.inner.held_bytes.store(0, Relaxed);
            std::mem::take(&mut *held)
        };
        // Released outside the lock: unmapping takes a while.
        drop(blocks);
    }

    /// Reserves blocks such as arenas built with `options` reserve (their
    /// regular blocks; with [`HugePages::WhenLarge`], those of an arena
    /// grown large), writes to every page of each, and keeps them, until
    /// one more would take the pool past `bytes` or its capacity. Returns
    /// the bytes it added.
    ///
    /// For a thread with time to spare, ahead of the arenas that draw on
    /// the pool: an arena that takes a warmed block writes into pages that
    /// are there already, while the first write to each page of a fresh
    /// block faults it in, and the kernel zeroes it (a 2 MiB huge page
    /// takes hundreds of microseconds), inside whatever allocation got
    /// there first. Options whose block size no arena accepts warm nothing.
    ///
    /// # Errors
    ///
    /// [`AllocError::OutOfMemory`] when a block cannot be reserved; the
    /// blocks added before stay.
    ///
    /// # Examples
    ///
    /// ```
    /// use arena::{ArenaOptions, BlockPool};
    ///
    /// let pool = BlockPool::new(1 << 20);
    /// let options = ArenaOptions::new().with_block_size(64 << 10).with_block_pool(&pool);
    /// assert_eq!(pool.warm(&options, 256 << 10).unwrap(), 256 << 10); // four blocks
    /// assert_eq!(pool.warm(&options, 256 << 10).unwrap(), 0); // there already
    ///
    /// let arena = options.build_concurrent().unwrap();
    /// for _ in 0..1000 {
    ///     arena.alloc_slice_copy(&[1u8; 100]); // into warmed blocks
    /// }
    /// assert_eq!(arena.stats().pooled_blocks, arena.stats().blocks);
    /// ```
    pub fn warm(&self, options: &ArenaOptions, bytes: usize) -> Result<usize, AllocError> {
        let Ok(size) = options.checked_block_size() else {
            return Ok(0);
        };
        let (size, huge_pages) = match options.huge_pages {
            HugePages::WhenLarge => (size.max(HUGE_PAGE_SIZE), HugePages::Transparent),
            other => (size, other),
        };
        let source = BlockSource {
            huge_pages,
            prefault: true,
        };
        // The counts of how blocks were backed are the arenas'; these
        // blocks are counted by the arena that takes one.
        let mut counts = BackingCounts::default();
        let limit = bytes.min(self.inner.capacity);
        let mut added = 0;
        while self.held_bytes() + size <= limit {
            let block = Block::reserve(size, BLOCK_ALIGN, source, &mut counts)?;
            added += block.len();
            self.give([block]);
        }
        Ok(added)
    }

    /// A held block made as `key` says, if there is one.
    pub(crate) fn take(&self, key: BlockKey) -> Option<Block> {
        let mut held = self.held();
        let at = held.blocks.iter().rposition(|b| b.key() == key)?;
        let block = held.blocks.remove(at)?;
        held.bytes -= block.len();
        // Relaxed: see `held_bytes`.
        self.inner.held_bytes.store(held.bytes, Relaxed);
        Some(block)
    }

    /// Keeps `blocks`, releasing the longest-held blocks past the capacity.
    pub(crate) fn give(&self, blocks: impl IntoIterator<Item = Block>) {
        let mut released = Vec::new();
        {
            let mut held = self.held();
            for block in blocks {
                if block.len() > self.inner.capacity {
                    released.push(block);
                    continue;
                }
                held.bytes += block.len();
                held.blocks.push_back(block);
                while held.bytes > self.inner.capacity {
                    let Some(old) = held.blocks.pop_front() else {
                        break;
                    };
                    held.bytes -= old.len();
                    released.push(old);
                }
            }
            // Relaxed: see `held_bytes`.
            self.inner.held_bytes.store(held.bytes, Relaxed);
        }
        // Released outside the lock, as in `clear`.
        drop(released);
    }

    fn held(&self) -> crate::sync::MutexGuard<'_, Held> {
        // A panic while the lock was held left the pool consistent: each
        // change is one push or pop with its count.
        self.inner
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for BlockPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockPool")
            .field("capacity", &self.capacity())
            .field("held_bytes", &self.held_bytes())
            .finish()
    }
}

/// Two handles are equal when they share one pool.
impl PartialEq for BlockPool {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for BlockPool {}

/// Hashes the pool's identity, as [`PartialEq`] compares it.
impl Hash for BlockPool {
    fn hash<H: Hasher>(&self, state: &mut H) {
        Arc::as_ptr(&self.inner).hash(state);
    }
}

#[cfg(test)]
mod tests;
