//! The random numbers of `lsm-demo bench`: db_bench's key streams, drawn
//! exactly as db_bench 7.8.3 draws them, and the bytes of the values.
//!
//! db_bench gives every thread of every benchmark its own generator, the
//! 64-bit Mersenne Twister (C++'s `std::mt19937_64`) seeded with `--seed`
//! plus a count of the threads started so far in the run (1 for the first
//! thread of the first benchmark). A key is the next number modulo the key
//! range. Drawing the same numbers in the same order makes our benchmarks
//! read, write and delete the same keys as db_bench's on the same flags, so
//! counts such as readrandom's `(found of reads)` can be compared directly.

use rand::{RngCore, SeedableRng};

use crate::cli::ReplayRng;

/// The 64-bit Mersenne Twister, the generator C++ calls `std::mt19937_64`
/// (the `rand_mt` crate's), with the draws db_bench makes from it.
#[derive(Clone, Debug)]
pub(super) struct Mt64(rand_mt::Mt64);

impl Mt64 {
    /// The generator `std::mt19937_64(seed)` builds.
    pub(super) fn new(seed: u64) -> Mt64 {
        Mt64(rand_mt::Mt64::new(seed))
    }

    /// The next number, as `std::mt19937_64::operator()`.
    pub(super) fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A key in `0..range`: the next number modulo `range`, as db_bench's
    /// random key generators take it.
    pub(super) fn key(&mut self, range: u64) -> u64 {
        self.next_u64() % range.max(1)
    }

    /// One number drawn and dropped: where db_bench draws one to pick a
    /// database among several (`--num_multi_db`), which is always the one
    /// database here; drawn all the same to keep the streams in step.
    pub(super) fn skip(&mut self) {
        self.next_u64();
    }
}

/// The generator of thread `thread` (counted from 1 over the whole run) of
/// a run seeded with `seed`, as db_bench seeds it.
pub(super) fn key_stream(seed: u64, thread: u64) -> Mt64 {
    Mt64::new(seed.wrapping_add(thread))
}

/// Values: consecutive windows of a pool of random bytes, drawn from a
/// generator of their own so that the key streams stay db_bench's.
#[derive(Debug)]
pub(super) struct Values {
    pool: Vec<u8>,
    size: usize,
    pos: usize,
}

impl Values {
    /// Values of `size` bytes for the thread seeded with `seed`.
    pub(super) fn new(seed: u64, size: usize) -> Values {
        let mut pool = vec![0u8; (size * 64).max(1 << 16) + size];
        ReplayRng::seed_from_u64(seed).fill_bytes(&mut pool);
        Values { pool, size, pos: 0 }
    }

    /// The next value.
    pub(super) fn next_value(&mut self) -> &[u8] {
        if self.pos + self.size > self.pool.len() {
            self.pos = 0;
        }
        let v = &self.pool[self.pos..self.pos + self.size];
        // An odd step, so that successive values start at different offsets
        // within a cache line's worth of bytes.
        self.pos += self.size.max(1) + 7;
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mt64_is_cxx_mt19937_64() {
        // The C++ standard ([rand.predef]): the 10000th invocation of a
        // default-constructed std::mt19937_64 (seed 5489) produces this.
        let mut g = Mt64::new(5489);
        let mut v = 0;
        for _ in 0..10_000 {
            v = g.next_u64();
        }
        assert_eq!(v, 9_981_545_732_273_789_042);
    }

    #[test]
    fn threads_have_streams_of_their_own() {
        let mut a = key_stream(7, 1);
        let mut b = key_stream(7, 2);
        let a: Vec<u64> = (0..4).map(|_| a.key(1000)).collect();
        let b: Vec<u64> = (0..4).map(|_| b.key(1000)).collect();
        assert_ne!(a, b);
        assert!(a.iter().chain(&b).all(|&k| k < 1000));
        assert_eq!(key_stream(7, 1).next_u64(), Mt64::new(8).next_u64());
    }

    #[test]
    fn values_are_windows_of_the_pool() {
        let mut v = Values::new(3, 100);
        let first = v.next_value().to_vec();
        assert_eq!(first.len(), 100);
        for _ in 0..10_000 {
            assert_eq!(v.next_value().len(), 100);
        }
        assert_eq!(Values::new(3, 100).next_value(), &first[..]);
        assert!(Values::new(3, 0).next_value().is_empty());
    }
}
