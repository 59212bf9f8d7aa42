//! Per-thread state: the random generator that picks node heights and the
//! stripe of the length counter a thread bumps.
//!
//! Both live in a thread-local so that no insert writes a cache line shared
//! with other threads: crossbeam-skiplist's shared height seed is one of the
//! costs this crate avoids. Each thread is seeded once from a global counter
//! (one relaxed `fetch_add` per thread, not per insert).

use crate::sync::thread_local;
use std::cell::Cell;

/// How many length stripes a list has. Threads beyond this share stripes,
/// which costs contention, never correctness.
#[cfg(not(loom))]
pub(crate) const LEN_STRIPES: usize = 8;
/// One stripe under loom: every stripe is an atomic loom must track.
#[cfg(loom)]
pub(crate) const LEN_STRIPES: usize = 1;

struct ThreadState {
    /// wyrand state; advanced by a constant, so any value is a valid state.
    rng: Cell<u64>,
    stripe: usize,
}

impl ThreadState {
    #[cfg(not(loom))]
    fn new() -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static THREADS: AtomicU64 = AtomicU64::new(0);
        // Relaxed: the counter only has to hand each thread a distinct
        // number; it orders nothing.
        let n = THREADS.fetch_add(1, Ordering::Relaxed);
        Self {
            rng: Cell::new(splitmix64(n)),
            stripe: (n as usize) % LEN_STRIPES,
        }
    }

    /// Under loom every model run must replay identically, so the state
    /// restarts at the same value in every thread of every run.
    #[cfg(loom)]
    fn new() -> Self {
        Self {
            rng: Cell::new(0),
            stripe: 0,
        }
    }
}

thread_local! {
    static STATE: ThreadState = ThreadState::new();
}

/// A node height in `1..=max_height`, each further level with probability
/// `2^-bits_per_level` (branching 4 takes 2 bits), from one random number.
#[inline]
#[cfg(not(loom))]
pub(crate) fn random_height(bits_per_level: u32, max_height: usize) -> usize {
    let r = STATE
        .try_with(|s| {
            let (next, out) = wyrand(s.rng.get());
            s.rng.set(next);
            out
        })
        // During thread teardown the thread-local is gone: height 1 is a
        // valid height, it only makes that node slower to skip over.
        .unwrap_or(1);
    // `bits_per_level` trailing zero bits per extra level: with branching 4,
    // P(height > h) = 4^-h.
    (1 + (r.trailing_zeros() / bits_per_level) as usize).min(max_height)
}

/// Under loom, heights alternate 2, 1, 2, ... in each thread, so that a
/// tiny model still links a second level and raises `max_height`.
#[inline]
#[cfg(loom)]
pub(crate) fn random_height(_bits_per_level: u32, max_height: usize) -> usize {
    STATE.with(|s| {
        let n = s.rng.get();
        s.rng.set(n + 1);
        if n % 2 == 0 { 2.min(max_height) } else { 1 }
    })
}

/// The length stripe this thread bumps.
#[inline]
pub(crate) fn len_stripe() -> usize {
    STATE.try_with(|s| s.stripe).unwrap_or(0)
}

/// One step of wyrand: returns the next state and a 64-bit output.
#[cfg(not(loom))]
#[inline]
fn wyrand(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0xa076_1d64_78bd_642f);
    let t = u128::from(s) * u128::from(s ^ 0xe703_7ed1_a0b4_28db);
    (s, (t >> 64) as u64 ^ t as u64)
}

/// Spreads consecutive thread numbers over the whole seed space.
#[cfg(not(loom))]
fn splitmix64(n: u64) -> u64 {
    let mut z = n.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Draws `n` heights and checks the range and the first two level
    /// ratios against `1 / branching` (a wide band, so it cannot flake).
    fn check_heights(bits_per_level: u32, max_height: usize) {
        let n = if cfg!(miri) { 2_000 } else { 200_000 };
        let p = 0.5f64.powi(bits_per_level as i32);
        let mut at_least = vec![0usize; max_height + 2];
        for _ in 0..n {
            let h = random_height(bits_per_level, max_height);
            assert!((1..=max_height).contains(&h), "height {h}");
            for c in &mut at_least[..=h] {
                *c += 1;
            }
        }
        assert_eq!(at_least[1], n);
        let frac = at_least[2] as f64 / n as f64;
        assert!(
            (p * 0.8..p * 1.2).contains(&frac),
            "P(h>=2) = {frac}, want {p}"
        );
        if !cfg!(miri) {
            let frac3 = at_least[3] as f64 / at_least[2] as f64;
            assert!(
                (p * 0.8..p * 1.2).contains(&frac3),
                "P(h>=3|h>=2) = {frac3}"
            );
        }
    }

    #[test]
    fn heights_are_in_range_and_roughly_geometric() {
        check_heights(2, 12); // branching 4, RocksDB's
        check_heights(1, 24); // branching 2
        check_heights(3, 8); // branching 8
    }

    #[test]
    fn heights_stop_at_the_list_maximum() {
        for _ in 0..1000 {
            assert!(random_height(1, 2) <= 2);
        }
        assert!((0..1000).all(|_| random_height(1, 1) == 1));
    }

    #[test]
    fn threads_get_different_streams() {
        let a: Vec<u64> = std::thread::spawn(|| {
            (0..64)
                .map(|_| STATE.with(|s| s.rng.get()))
                .inspect(|_| {
                    random_height(2, 12);
                })
                .collect()
        })
        .join()
        .unwrap();
        let b: Vec<u64> = std::thread::spawn(|| {
            (0..64)
                .map(|_| STATE.with(|s| s.rng.get()))
                .inspect(|_| {
                    random_height(2, 12);
                })
                .collect()
        })
        .join()
        .unwrap();
        assert_ne!(a, b);
    }
}
