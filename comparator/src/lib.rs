//! How two keys compare: the ordering trait shared by this workspace's
//! memtables.
//!
//! A memtable orders opaque byte strings. RocksDB calls the ordering a
//! `Comparator`; an LSM engine plugs in one that understands its internal keys
//! (user key, then sequence number descending). This crate holds only that
//! trait, the bytewise default and its two helpers ([`compare_bytes`],
//! [`bytewise_prefix`]), so that `inline-skiplist` and `vecmem` can each be
//! used alone and still take the *same* comparator value: both re-export
//! [`Comparator`] and [`BytewiseComparator`] from here.
//!
//! Closures work as comparators too, which keeps tests and one-off orderings
//! short:
//!
//! ```
//! use key_comparator::{BytewiseComparator, Comparator};
//! use std::cmp::Ordering;
//!
//! assert_eq!(BytewiseComparator.compare(b"a", b"b"), Ordering::Less);
//! let by_length = |a: &[u8], b: &[u8]| a.len().cmp(&b.len());
//! assert_eq!(by_length.compare(b"zz", b"aaa"), Ordering::Less);
//! ```
//!
//! Alternatives: `std::cmp::Ord` on a key type works when keys are typed
//! values; it cannot carry state (a comparator chosen at run time, or one
//! that ignores a suffix), which storage engines need.
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::cmp::Ordering;

/// A total order on byte strings.
///
/// Implementations must be consistent: `compare` is a total order (reflexive,
/// antisymmetric, transitive) and never changes for the same pair of keys.
/// A memtable built on an inconsistent comparator stays memory-safe but may
/// lose track of keys.
///
/// The trait is `Send + Sync`-agnostic; a memtable is `Sync` when its
/// comparator is.
///
/// # Examples
///
/// A comparator that orders keys by their first 8 bytes only:
///
/// ```
/// use key_comparator::Comparator;
/// use std::cmp::Ordering;
///
/// struct Prefix8;
/// impl Comparator for Prefix8 {
///     fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
///         a[..a.len().min(8)].cmp(&b[..b.len().min(8)])
///     }
/// }
/// assert_eq!(Prefix8.compare(b"12345678x", b"12345678y"), Ordering::Equal);
/// ```
pub trait Comparator {
    /// Compares two keys.
    ///
    /// ```
    /// use key_comparator::{BytewiseComparator, Comparator};
    /// use std::cmp::Ordering;
    ///
    /// assert_eq!(BytewiseComparator.compare(b"ab", b"b"), Ordering::Less);
    /// assert_eq!(BytewiseComparator.compare(b"ab", b"a"), Ordering::Greater);
    /// ```
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering;

    /// Whether two keys are equal under this order.
    ///
    /// # Examples
    ///
    /// ```
    /// use key_comparator::{BytewiseComparator, Comparator};
    /// assert!(BytewiseComparator.equal(b"k", b"k"));
    /// ```
    #[inline]
    fn equal(&self, a: &[u8], b: &[u8]) -> bool {
        self.compare(a, b) == Ordering::Equal
    }

    /// An order-preserving summary of a key, which a memtable may store
    /// beside its links to settle comparisons without reading the key.
    ///
    /// The contract: whenever `compare(a, b)` is `Less`, `key_prefix(a) <=
    /// key_prefix(b)`. Then `key_prefix(a) < key_prefix(b)` proves `a < b`
    /// and only equal summaries need the full comparison. The default, 0 for
    /// every key, meets the contract and settles nothing; a comparator whose
    /// keys differ early (hashes, random ids) should return their first
    /// bytes as a big-endian number, as [`BytewiseComparator`] does.
    ///
    /// # Examples
    ///
    /// ```
    /// use key_comparator::{BytewiseComparator, Comparator};
    /// let by_length = |a: &[u8], b: &[u8]| a.len().cmp(&b.len());
    /// assert_eq!(by_length.key_prefix(b"anything"), 0);
    /// assert!(BytewiseComparator.key_prefix(b"apple") < BytewiseComparator.key_prefix(b"b"));
    /// ```
    #[inline]
    fn key_prefix(&self, key: &[u8]) -> u64 {
        let _ = key;
        0
    }
}

/// Lexicographic byte order, the order of `<[u8] as Ord>` and of RocksDB's
/// `BytewiseComparator`, computed by [`compare_bytes`].
///
/// # Examples
///
/// ```
/// use key_comparator::{BytewiseComparator, Comparator};
/// use std::cmp::Ordering;
/// assert_eq!(BytewiseComparator.compare(b"ab", b"b"), Ordering::Less);
/// assert_eq!(BytewiseComparator.compare(b"ab", b"a"), Ordering::Greater);
/// ```
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BytewiseComparator;

impl Comparator for BytewiseComparator {
    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        compare_bytes(a, b)
    }

    /// The first eight bytes as a big-endian number, zero-padded: padding
    /// with the smallest byte keeps the lexicographic order.
    #[inline]
    fn key_prefix(&self, key: &[u8]) -> u64 {
        bytewise_prefix(key)
    }
}

/// The first eight bytes of `key` as a big-endian number, zero-padded when
/// the key is shorter: [`BytewiseComparator`]'s
/// [`key_prefix`](Comparator::key_prefix). A comparator that orders a
/// bytewise part first may return this of that part.
///
/// # Examples
///
/// ```
/// use key_comparator::bytewise_prefix;
/// assert_eq!(bytewise_prefix(b"\x01\x02"), 0x0102 << 48);
/// assert!(bytewise_prefix(b"ab") <= bytewise_prefix(b"ab\0"));
/// ```
#[inline]
#[must_use]
pub fn bytewise_prefix(key: &[u8]) -> u64 {
    if let Some(head) = key.first_chunk::<8>() {
        return u64::from_be_bytes(*head);
    }
    let mut word = [0u8; 8];
    word[..key.len()].copy_from_slice(key);
    u64::from_be_bytes(word)
}

/// Lexicographic order of two byte strings, as `a.cmp(b)`, with the first
/// eight bytes compared inline.
///
/// `<[u8] as Ord>` calls `memcmp`: an out-of-line call of some 30
/// instructions for what, on keys that differ early (hashes, random ids, the
/// upper levels of a skiplist), one comparison of two big-endian words
/// decides. glibc's AVX2 `memcmp` also loads 32 bytes from each side, so a
/// search comparing 16-byte keys touches cache lines past the key. Here the
/// first eight bytes of each side are loaded as one word; only when they
/// are equal (or a side is shorter) does `memcmp` see the rest.
///
/// # Examples
///
/// ```
/// use key_comparator::compare_bytes;
/// use std::cmp::Ordering;
/// assert_eq!(compare_bytes(b"user0001", b"user0002"), Ordering::Less);
/// assert_eq!(compare_bytes(b"abcdefgh-long", b"abcdefgh"), Ordering::Greater);
/// assert_eq!(compare_bytes(b"", b""), Ordering::Equal);
/// ```
#[inline]
#[must_use]
pub fn compare_bytes(a: &[u8], b: &[u8]) -> Ordering {
    if let (Some(a_head), Some(b_head)) = (a.first_chunk::<8>(), b.first_chunk::<8>()) {
        // Big-endian: the first differing byte decides the integer order.
        let (a_word, b_word) = (u64::from_be_bytes(*a_head), u64::from_be_bytes(*b_head));
        if a_word != b_word {
            return a_word.cmp(&b_word);
        }
        return a[8..].cmp(&b[8..]);
    }
    a.cmp(b)
}

impl<F> Comparator for F
where
    F: Fn(&[u8], &[u8]) -> Ordering,
{
    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        self(a, b)
    }
}

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytewise_matches_slice_order() {
        let keys: [&[u8]; 5] = [b"", b"a", b"ab", b"b", b"\xff"];
        for a in keys {
            for b in keys {
                assert_eq!(BytewiseComparator.compare(a, b), a.cmp(b));
            }
        }
    }

    #[test]
    fn compare_bytes_matches_slice_order() {
        // Every pair from a set with shared prefixes of every length around
        // the 8-byte word, differing bytes at each end of it (0x00, 0x7f,
        // 0x80, 0xff: a signed comparison would misorder the high ones), and
        // proper prefixes of each other.
        let mut keys: Vec<Vec<u8>> = vec![Vec::new()];
        for len in [1, 7, 8, 9, 15, 16, 17, 40] {
            for last in [0x00, 0x7f, 0x80, 0xff] {
                for position in [0, len / 2, len - 1] {
                    let mut key = vec![0x61; len];
                    key[position] = last;
                    keys.push(key);
                }
            }
        }
        for a in &keys {
            for b in &keys {
                assert_eq!(compare_bytes(a, b), a.cmp(b), "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn bytewise_prefix_preserves_the_order() {
        let keys: [&[u8]; 9] = [
            b"",
            b"\0",
            b"a",
            b"a\0",
            b"ab",
            b"abcdefgh",
            b"abcdefgh\0",
            b"abcdefgi",
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff",
        ];
        for a in keys {
            for b in keys {
                if a < b {
                    assert!(BytewiseComparator.key_prefix(a) <= BytewiseComparator.key_prefix(b));
                }
            }
        }
    }

    #[test]
    fn closures_are_comparators() {
        let rev = |a: &[u8], b: &[u8]| b.cmp(a);
        assert_eq!(rev.compare(b"a", b"b"), Ordering::Greater);
        assert!(rev.equal(b"x", b"x"));
    }
}
