//! How two keys compare: the ordering trait shared by this workspace's
//! memtables.
//!
//! A memtable orders opaque byte strings. RocksDB calls the ordering a
//! `Comparator`; an LSM engine plugs in one that understands its internal keys
//! (user key, then sequence number descending). This crate holds only that
//! trait and the bytewise default, so that `skiplist` and `vecmem` can each be
//! used alone and still take the *same* comparator value: both re-export
//! [`Comparator`] and [`BytewiseComparator`] from here.
//!
//! Closures work as comparators too, which keeps tests and one-off orderings
//! short:
//!
//! ```
//! use comparator::{BytewiseComparator, Comparator};
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
/// use comparator::Comparator;
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
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering;

    /// Whether two keys are equal under this order.
    ///
    /// # Examples
    ///
    /// ```
    /// use comparator::{BytewiseComparator, Comparator};
    /// assert!(BytewiseComparator.equal(b"k", b"k"));
    /// ```
    #[inline]
    fn equal(&self, a: &[u8], b: &[u8]) -> bool {
        self.compare(a, b) == Ordering::Equal
    }
}

/// Lexicographic byte order, the order of `<[u8] as Ord>` and of RocksDB's
/// `BytewiseComparator`.
///
/// # Examples
///
/// ```
/// use comparator::{BytewiseComparator, Comparator};
/// use std::cmp::Ordering;
/// assert_eq!(BytewiseComparator.compare(b"ab", b"b"), Ordering::Less);
/// assert_eq!(BytewiseComparator.compare(b"ab", b"a"), Ordering::Greater);
/// ```
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BytewiseComparator;

impl Comparator for BytewiseComparator {
    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        a.cmp(b)
    }
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
    fn closures_are_comparators() {
        let rev = |a: &[u8], b: &[u8]| b.cmp(a);
        assert_eq!(rev.compare(b"a", b"b"), Ordering::Greater);
        assert!(rev.equal(b"x", b"x"));
    }
}
