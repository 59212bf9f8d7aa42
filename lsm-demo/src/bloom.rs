//! A bloom filter over byte-string keys, stored as plain bytes.
//!
//! Each table file carries one filter over the keys it holds, so that a point
//! lookup skips files that cannot contain its key. The filter answers "maybe"
//! or "definitely not"; at 10 bits per key about 1% of absent keys get a
//! "maybe".
//!
//! # Format
//!
//! `[bit array: m/8 bytes][probe count k: u8]`, `m` a multiple of 8 and at
//! least 64. Probe `i` (0-based) of a key tests bit
//! `(h1 + i * h2) mod m`, where `h1` and `h2` are the low and high halves of
//! [`hash_key`] (`h2` forced odd) — double hashing, so the key is hashed once.
//! `k = round(bits_per_key * ln 2)`, clamped to `1..=30`.
//!
//! The hash is this module's own (a multiply-xor mix over 8-byte words with a
//! murmur-style finaliser); it is part of the file format and must never
//! change. A filter that is too short or has a probe count outside `1..=30`
//! is treated as corrupt and answers "maybe" for every key: a damaged filter
//! costs speed, never a wrong answer.
//!
//! # Examples
//!
//! ```
//! use lsm_demo::bloom::{BloomBuilder, BloomFilter};
//!
//! let mut builder = BloomBuilder::new(10);
//! builder.add_key(b"apple");
//! builder.add_key(b"pear");
//! let filter = builder.finish();
//! assert!(BloomFilter::may_contain(&filter, b"apple"));
//! assert!(BloomFilter::may_contain(&filter, b"pear"));
//! // Absent keys are almost always rejected:
//! let rejected = (0..1000u32)
//!     .filter(|i| !BloomFilter::may_contain(&filter, &i.to_le_bytes()))
//!     .count();
//! assert!(rejected > 950);
//! ```

/// Most probes a filter may ask for; more is treated as corruption.
const MAX_PROBES: u8 = 30;
/// Smallest bit array, so tiny filters still have a sane false-positive rate.
const MIN_BITS: usize = 64;

/// The 64-bit hash a filter uses for a key. Part of the on-disk format.
///
/// Exposed so that a caller probing many filters for one key hashes it once
/// ([`BloomFilter::may_contain_hash`]).
///
/// # Examples
///
/// ```
/// use lsm_demo::bloom::hash_key;
/// assert_eq!(hash_key(b"k"), hash_key(b"k"));
/// assert_ne!(hash_key(b"k"), hash_key(b"l"));
/// ```
pub fn hash_key(key: &[u8]) -> u64 {
    const MUL: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = 0x6c73_6d2d_626c_6f6f ^ (key.len() as u64).wrapping_mul(MUL);
    let mut words = key.chunks_exact(8);
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(MUL);
        h ^= h >> 29;
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(MUL);
        h ^= h >> 29;
    }
    // Finaliser: every input bit affects every output bit.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// Collects key hashes and builds a filter over them.
///
/// # Examples
///
/// ```
/// use lsm_demo::bloom::{BloomBuilder, BloomFilter};
/// let mut b = BloomBuilder::new(10);
/// b.add_key(b"x");
/// assert_eq!(b.len(), 1);
/// let f = b.finish();
/// assert!(BloomFilter::may_contain(&f, b"x"));
/// assert!(b.is_empty(), "finish resets the builder");
/// ```
#[derive(Debug, Clone)]
pub struct BloomBuilder {
    bits_per_key: usize,
    hashes: Vec<u64>,
}

impl BloomBuilder {
    /// A builder giving `bits_per_key` bits to each key (at least 1; 10
    /// gives about 1% false positives).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::bloom::BloomBuilder;
    /// let mut builder = BloomBuilder::new(10);
    /// (0..100u32).for_each(|i| builder.add_key(&i.to_le_bytes()));
    /// // 100 keys * 10 bits = 125 bytes, then the probe count round(10 * ln 2):
    /// let filter = builder.finish();
    /// assert_eq!((filter.len(), filter[125]), (126, 7));
    /// // Even an empty filter gets 64 bits:
    /// assert_eq!(BloomBuilder::new(10).finish().len(), 9);
    /// ```
    pub fn new(bits_per_key: usize) -> Self {
        Self {
            bits_per_key: bits_per_key.max(1),
            hashes: Vec::new(),
        }
    }

    /// Adds a key (only its 8-byte hash is kept).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::bloom::{BloomBuilder, BloomFilter};
    /// let mut builder = BloomBuilder::new(10);
    /// builder.add_key(b"apple");
    /// builder.add_key(b"");
    /// let filter = builder.finish();
    /// assert!(BloomFilter::may_contain(&filter, b"apple"));
    /// assert!(BloomFilter::may_contain(&filter, b""));
    /// ```
    pub fn add_key(&mut self, key: &[u8]) {
        self.hashes.push(hash_key(key));
    }

    /// Adds a key by its [`hash_key`] hash.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::bloom::{hash_key, BloomBuilder};
    /// let mut by_key = BloomBuilder::new(10);
    /// by_key.add_key(b"apple");
    /// let mut by_hash = BloomBuilder::new(10);
    /// by_hash.add_hash(hash_key(b"apple"));
    /// assert_eq!(by_hash.finish(), by_key.finish());
    /// ```
    pub fn add_hash(&mut self, hash: u64) {
        self.hashes.push(hash);
    }

    /// How many keys were added since the last [`Self::finish`].
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::bloom::BloomBuilder;
    /// let mut builder = BloomBuilder::new(10);
    /// builder.add_key(b"a");
    /// builder.add_key(b"a"); // duplicates count too
    /// assert_eq!(builder.len(), 2);
    /// builder.finish();
    /// assert_eq!(builder.len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Whether no key was added since the last [`Self::finish`].
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::bloom::BloomBuilder;
    /// let mut builder = BloomBuilder::new(10);
    /// assert!(builder.is_empty());
    /// builder.add_key(b"a");
    /// assert!(!builder.is_empty());
    /// builder.finish();
    /// assert!(builder.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Builds the filter over the keys added, and empties the builder.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::bloom::{BloomBuilder, BloomFilter};
    /// let mut builder = BloomBuilder::new(10);
    /// builder.add_key(b"first");
    /// let first = builder.finish();
    /// assert!(BloomFilter::may_contain(&first, b"first"));
    /// // The builder starts over for the next table:
    /// builder.add_key(b"second");
    /// let second = builder.finish();
    /// assert!(BloomFilter::may_contain(&second, b"second"));
    /// ```
    pub fn finish(&mut self) -> Vec<u8> {
        let probes = ((self.bits_per_key as f64) * std::f64::consts::LN_2).round();
        let probes = (probes as u8).clamp(1, MAX_PROBES);
        let bits = self
            .hashes
            .len()
            .saturating_mul(self.bits_per_key)
            .max(MIN_BITS)
            .div_ceil(8)
            * 8;
        let mut filter = vec![0u8; bits / 8 + 1];
        for &hash in &self.hashes {
            for bit in probe_bits(hash, probes, bits as u64) {
                filter[(bit / 8) as usize] |= 1 << (bit % 8);
            }
        }
        filter[bits / 8] = probes;
        self.hashes.clear();
        filter
    }
}

/// The bit positions probed for `hash`: `(h1 + i * h2) % bits` for `i` in
/// `0..probes`, `h1` and `h2` the hash's low and high halves (`h2` made
/// odd); this is the filter's format. The halves are below 2^32 and
/// `probes` at most `MAX_PROBES`, so that sum never wraps and each
/// position is the one before plus `h2 % bits`, less `bits` if it passes:
/// two divisions per key instead of one per probe, which made up most of
/// building a filter and of each look-up.
#[inline]
fn probe_bits(hash: u64, probes: u8, bits: u64) -> impl Iterator<Item = u64> {
    let h1 = hash & 0xffff_ffff;
    let h2 = (hash >> 32) | 1;
    let step = h2 % bits;
    let mut bit = h1 % bits;
    (0..probes).map(move |_| {
        let probed = bit;
        // Below 2 * bits: no overflow for any filter that fits in memory.
        bit += step;
        if bit >= bits {
            bit -= bits;
        }
        probed
    })
}

/// Queries on filter bytes made by [`BloomBuilder::finish`].
///
/// # Examples
///
/// ```
/// use lsm_demo::bloom::{BloomBuilder, BloomFilter};
/// let mut builder = BloomBuilder::new(10);
/// builder.add_key(b"present");
/// let filter: Vec<u8> = builder.finish(); // stored as is, in a table file
/// assert!(BloomFilter::may_contain(&filter, b"present"));
/// // A filter over no keys rejects every key:
/// let empty = BloomBuilder::new(10).finish();
/// assert!(!BloomFilter::may_contain(&empty, b"present"));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct BloomFilter;

impl BloomFilter {
    /// Whether `key` may be in the set the filter was built from: `false`
    /// means certainly absent. Corrupt or empty filter bytes answer `true`.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::bloom::BloomFilter;
    /// assert!(BloomFilter::may_contain(b"", b"anything"));
    /// assert!(BloomFilter::may_contain(b"\x00\x00\x00", b"corrupt filters say maybe"));
    /// ```
    #[inline]
    pub fn may_contain(filter: &[u8], key: &[u8]) -> bool {
        Self::may_contain_hash(filter, hash_key(key))
    }

    /// [`Self::may_contain`] for a key given by its [`hash_key`] hash.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::bloom::{hash_key, BloomBuilder, BloomFilter};
    /// let mut builder = BloomBuilder::new(10);
    /// builder.add_key(b"k");
    /// let filters = [builder.finish(), BloomBuilder::new(10).finish()];
    /// let hash = hash_key(b"k"); // hashed once, probed against every filter
    /// let hits: Vec<bool> = filters.iter().map(|f| BloomFilter::may_contain_hash(f, hash)).collect();
    /// assert_eq!(hits, [true, false]);
    /// ```
    pub fn may_contain_hash(filter: &[u8], hash: u64) -> bool {
        let Some((&probes, array)) = filter.split_last() else {
            return true;
        };
        if array.is_empty() || probes == 0 || probes > MAX_PROBES {
            return true;
        }
        let bits = array.len() as u64 * 8;
        probe_bits(hash, probes, bits).all(|bit| array[(bit / 8) as usize] & (1 << (bit % 8)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u32) -> [u8; 4] {
        i.to_be_bytes()
    }

    #[test]
    fn no_false_negatives_and_about_one_percent_false_positives() {
        let n = 10_000u32;
        let mut builder = BloomBuilder::new(10);
        for i in 0..n {
            builder.add_key(&key(i));
        }
        let filter = builder.finish();
        assert_eq!(filter.len(), (n as usize * 10).div_ceil(8) + 1);
        assert!((0..n).all(|i| BloomFilter::may_contain(&filter, &key(i))));
        let probes = 100_000u32;
        let false_positives = (n..n + probes)
            .filter(|&i| BloomFilter::may_contain(&filter, &key(i)))
            .count();
        let rate = false_positives as f64 / f64::from(probes);
        assert!(rate < 0.015, "false-positive rate {rate}");
        assert!(rate > 0.002, "suspiciously low rate {rate}");
    }

    #[test]
    fn rate_at_several_sizes() {
        for n in [1u32, 10, 100, 1000] {
            let mut builder = BloomBuilder::new(10);
            (0..n).for_each(|i| builder.add_key(&key(i)));
            let filter = builder.finish();
            assert!((0..n).all(|i| BloomFilter::may_contain(&filter, &key(i))));
            let fp = (1_000_000..1_010_000u32)
                .filter(|&i| BloomFilter::may_contain(&filter, &key(i)))
                .count();
            assert!(fp < 300, "n={n}: {fp} false positives of 10000");
        }
    }

    #[test]
    fn empty_filter_rejects_everything() {
        let filter = BloomBuilder::new(10).finish();
        assert!(!BloomFilter::may_contain(&filter, b"x"));
    }

    #[test]
    fn corrupt_filters_say_maybe() {
        let mut builder = BloomBuilder::new(10);
        builder.add_key(b"a");
        let mut filter = builder.finish();
        *filter.last_mut().unwrap() = 0;
        assert!(BloomFilter::may_contain(&filter, b"zzz"));
        *filter.last_mut().unwrap() = 31;
        assert!(BloomFilter::may_contain(&filter, b"zzz"));
        assert!(BloomFilter::may_contain(&[7], b"zzz"));
        assert!(BloomFilter::may_contain(&[], b"zzz"));
    }

    /// The positions as the format defines them, one division per probe.
    fn defined_probe_bits(hash: u64, probes: u8, bits: u64) -> Vec<u64> {
        let h1 = hash & 0xffff_ffff;
        let h2 = (hash >> 32) | 1;
        (0..u64::from(probes))
            .map(|i| h1.wrapping_add(i.wrapping_mul(h2)) % bits)
            .collect()
    }

    #[test]
    fn probe_bits_are_the_formats() {
        // Hashes from a fixed generator, and the extremes of both halves.
        let mut hashes = vec![0, u64::MAX, 0xffff_ffff, 0xffff_ffff_0000_0000, 1 << 32];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            hashes.push(x);
        }
        // The smallest filter, odd multiples of 8, sizes past 2^32 bits.
        let sizes = [
            64,
            72,
            80 * 1000 + 8,
            (1 << 20) + 8,
            1 << 32,
            (1 << 32) + 8,
            1 << 35,
        ];
        for &bits in &sizes {
            for &hash in &hashes {
                for probes in [1, 6, 7, MAX_PROBES] {
                    let got: Vec<u64> = probe_bits(hash, probes, bits).collect();
                    assert_eq!(
                        got,
                        defined_probe_bits(hash, probes, bits),
                        "hash {hash:#x}, {probes} probes, {bits} bits"
                    );
                }
            }
        }
    }

    #[test]
    fn hash_is_stable() {
        // Part of the file format: these values must never change.
        assert_eq!(hash_key(b""), 0xf4a2_3bf6_7849_3ff1);
        assert_eq!(hash_key(b"a"), 0xca37_89f9_76e4_0448);
        assert_eq!(hash_key(b"0123456789"), 0xcc7f_943e_04c7_e6bc);
        assert_ne!(hash_key(b"a"), hash_key(b"a\0"));
        assert_ne!(hash_key(b"12345678"), hash_key(b"12345678\0"));
    }
}
