//! How one entry is stored: its length as a LEB128 varint, then its bytes,
//! copied into the arena; the vectors hold a thin pointer to the prefix.
//!
//! A thin pointer keeps the shared vector at 8 bytes per entry (half a fat
//! `&[u8]`), so appends, copies and sorts move half the memory. The length is
//! next to the bytes a comparison reads anyway, so decoding it costs no
//! extra cache miss.

use std::alloc::Layout;
use std::fmt;
use std::ptr::NonNull;

use arena::ConcurrentArena;

/// A pointer to a length-prefixed entry in an arena.
///
/// Copying an `Entry` copies the pointer only. Its bytes are written once, in
/// [`Entry::copy_into`], and never again, so any number of threads may read
/// them as long as the arena is alive.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry(NonNull<u8>);

// SAFETY: an `Entry` is a pointer to bytes that are immutable from the moment
// `copy_into` returns; sending the pointer to another thread only lets that
// thread read them, and the owner of the arena (`VecMem`) keeps them alive.
unsafe impl Send for Entry {}
// SAFETY: as for `Send`: shared access only ever reads immutable bytes.
unsafe impl Sync for Entry {}

impl Entry {
    /// Copies `bytes` into `arena`, behind their length, and points at them.
    ///
    /// # Panics
    ///
    /// If the prefixed entry would exceed `isize::MAX` bytes, which no slice
    /// in memory can reach.
    #[inline]
    pub(crate) fn copy_into(arena: &ConcurrentArena, bytes: &[u8]) -> Self {
        let (start, body) = Self::allocate(arena, bytes.len());
        // SAFETY: `body` is valid for `bytes.len()` bytes (see `allocate`),
        // and a fresh allocation cannot overlap `bytes`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), body, bytes.len()) };
        start
    }

    /// Allocates an entry of `len` bytes in `arena`, behind its length, and
    /// lets `fill` write them (they start zeroed); points at them.
    ///
    /// # Panics
    ///
    /// As [`copy_into`](Self::copy_into); a panic of `fill` leaves the
    /// allocation unused in the arena.
    #[inline]
    pub(crate) fn fill_into(
        arena: &ConcurrentArena,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Self {
        let (start, body) = Self::allocate(arena, len);
        // SAFETY: `body` is valid for `len` bytes that nothing else
        // references until the entry is published; zeroing initialises them
        // before `fill` borrows them.
        unsafe {
            body.write_bytes(0, len);
            fill(std::slice::from_raw_parts_mut(body, len));
        }
        start
    }

    /// Allocates room for an entry of `len` bytes and writes its length
    /// prefix; returns the entry and a pointer to its (uninitialised) body,
    /// valid for writes of `len` bytes and referenced by nobody else.
    #[inline]
    fn allocate(arena: &ConcurrentArena, len: usize) -> (Self, *mut u8) {
        let prefix_len = varint_len(len);
        let layout =
            Layout::from_size_align(prefix_len + len, 1).expect("an entry's length fits in isize");
        let start = arena.alloc_layout(layout);
        // SAFETY: `start` is a fresh arena allocation of `prefix_len + len`
        // bytes that nothing else references yet. The loop writes exactly
        // `prefix_len` varint bytes (`varint_len` counts the same 7-bit
        // groups), so the body pointer is in bounds, `len` bytes before the
        // end.
        unsafe {
            let mut cursor = start.as_ptr();
            let mut rest = len;
            while rest >= 0x80 {
                cursor.write((rest as u8) | 0x80);
                cursor = cursor.add(1);
                rest >>= 7;
            }
            cursor.write(rest as u8);
            (Entry(start), cursor.add(1))
        }
    }

    /// The entry's bytes.
    ///
    /// # Safety
    ///
    /// The arena this entry was copied into must stay alive (not dropped)
    /// for all of `'a`.
    #[inline]
    pub(crate) unsafe fn bytes<'a>(self) -> &'a [u8] {
        let start = self.0.as_ptr();
        let mut len = 0usize;
        let mut shift = 0;
        let mut offset = 0;
        loop {
            // SAFETY: `copy_into` wrote a complete varint at `start`, so every
            // byte read up to and including its last (high bit clear) one is
            // inside the allocation, initialised, and never written again;
            // the caller keeps the arena alive.
            let byte = unsafe { *start.add(offset) };
            offset += 1;
            len |= usize::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        // SAFETY: `copy_into` wrote `len` bytes right after the varint in the
        // same allocation; they are initialised and immutable, and the caller
        // keeps the arena alive for `'a`.
        unsafe { std::slice::from_raw_parts(start.add(offset), len) }
    }
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The bytes are not shown: `Debug` cannot prove the arena is alive.
        f.debug_tuple("Entry").field(&self.0).finish()
    }
}

/// Bytes of the LEB128 varint of `value`: one per started group of 7 bits.
#[inline]
fn varint_len(value: usize) -> usize {
    // Tested first: most entries are shorter than 128 bytes, and the count
    // below costs a bit scan and a division by 7 (a multiply and a shift).
    if value < 0x80 {
        return 1;
    }
    let significant_bits = usize::BITS - (value | 1).leading_zeros();
    significant_bits.div_ceil(7) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_lengths_at_every_byte_boundary() {
        assert_eq!(varint_len(0), 1);
        assert_eq!(varint_len(0x7f), 1);
        assert_eq!(varint_len(0x80), 2);
        assert_eq!(varint_len((1 << 14) - 1), 2);
        assert_eq!(varint_len(1 << 14), 3);
        assert_eq!(varint_len(usize::MAX), usize::BITS.div_ceil(7) as usize);
    }

    #[test]
    fn entries_round_trip_across_prefix_sizes() {
        let arena = ConcurrentArena::new();
        let sizes: &[usize] = if cfg!(miri) {
            &[0, 1, 127, 128, 300]
        } else {
            &[0, 1, 127, 128, 300, 16_383, 16_384, 70_000]
        };
        let entries: Vec<(Vec<u8>, Entry)> = sizes
            .iter()
            .map(|&n| {
                let bytes: Vec<u8> = (0..n).map(|i| (i * 7 + n) as u8).collect();
                let entry = Entry::copy_into(&arena, &bytes);
                (bytes, entry)
            })
            .collect();
        for (bytes, entry) in &entries {
            // SAFETY: `arena` outlives this loop.
            assert_eq!(unsafe { entry.bytes() }, bytes.as_slice());
        }
    }

    #[test]
    fn entries_read_from_other_threads() {
        let arena = ConcurrentArena::new();
        let entry = Entry::copy_into(&arena, b"shared");
        std::thread::scope(|s| {
            for _ in 0..2 {
                // SAFETY: `arena` outlives the scope.
                s.spawn(|| assert_eq!(unsafe { entry.bytes() }, b"shared"));
            }
        });
    }
}
