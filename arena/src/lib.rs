//! PLACEHOLDER: a stand-in with the final public API of `ConcurrentArena`
//! (a global-allocator call per allocation behind a mutex), so that dependent
//! crates compile while the real sharded arena is written.
#![allow(clippy::undocumented_unsafe_blocks, clippy::mut_from_ref, missing_docs)]

use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::Mutex;

#[derive(Debug)]
pub struct ConcurrentArena {
    blocks: Mutex<Vec<(NonNull<u8>, Layout)>>,
    bytes: std::sync::atomic::AtomicUsize,
}

unsafe impl Send for ConcurrentArena {}
unsafe impl Sync for ConcurrentArena {}

impl Default for ConcurrentArena {
    fn default() -> Self {
        Self::new()
    }
}

impl ConcurrentArena {
    pub fn new() -> Self {
        Self {
            blocks: Mutex::new(Vec::new()),
            bytes: Default::default(),
        }
    }
    pub fn with_block_size(_block_size: usize) -> Self {
        Self::new()
    }
    pub fn alloc_layout(&self, layout: Layout) -> NonNull<u8> {
        let layout = Layout::from_size_align(layout.size().max(1), layout.align()).unwrap();
        let p = NonNull::new(unsafe { std::alloc::alloc(layout) }).unwrap();
        self.blocks.lock().unwrap().push((p, layout));
        self.bytes
            .fetch_add(layout.size(), std::sync::atomic::Ordering::Relaxed);
        p
    }
    pub fn alloc<T>(&self, value: T) -> &mut T {
        let p = self.alloc_layout(Layout::new::<T>()).cast::<T>();
        unsafe {
            p.as_ptr().write(value);
            &mut *p.as_ptr()
        }
    }
    pub fn alloc_slice_copy<T: Copy>(&self, src: &[T]) -> &mut [T] {
        let p = self.alloc_layout(Layout::for_value(src)).cast::<T>();
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), p.as_ptr(), src.len());
            std::slice::from_raw_parts_mut(p.as_ptr(), src.len())
        }
    }
    pub fn memory_allocated_bytes(&self) -> usize {
        self.bytes.load(std::sync::atomic::Ordering::Relaxed)
    }
    pub fn approximate_memory_usage(&self) -> usize {
        self.memory_allocated_bytes()
    }
    pub fn allocated_and_unused(&self) -> usize {
        0
    }
}

impl Drop for ConcurrentArena {
    fn drop(&mut self) {
        for (p, l) in self.blocks.get_mut().unwrap().drain(..) {
            unsafe { std::alloc::dealloc(p.as_ptr(), l) };
        }
    }
}
