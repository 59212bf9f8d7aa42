//! The order of user keys: bytewise by default, or one the user names and
//! gives (`Options::set_comparator`).

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use key_comparator::Comparator;

/// A comparison function of user keys, as the `rocksdb` crate's
/// `set_comparator` takes it. It must be a total order, and say `Equal`
/// only for identical keys (the engine finds keys by their bytes, in bloom
/// filters and when it sets versions of one key apart).
///
/// # Examples
///
/// ```
/// use lsm_demo::CompareFn;
/// let reverse: Box<CompareFn> = Box::new(|a: &[u8], b: &[u8]| b.cmp(a));
/// assert!(reverse(b"a", b"b").is_gt());
/// ```
pub type CompareFn = dyn Fn(&[u8], &[u8]) -> std::cmp::Ordering + Send + Sync;

/// The name RocksDB gives its default, bytewise order; a database created
/// without `set_comparator` records it.
pub(crate) const BYTEWISE_NAME: &str = "leveldb.BytewiseComparator";

/// How the engine orders user keys: a cheap handle, cloned into every
/// structure that compares keys.
#[derive(Clone, Default)]
pub(crate) struct UserComparator(Option<Arc<Custom>>);

struct Custom {
    name: String,
    order: Box<dyn Comparator + Send + Sync>,
}

impl UserComparator {
    /// A comparator the user gave, under the name the database records.
    pub(crate) fn custom(name: String, order: Box<dyn Comparator + Send + Sync>) -> Self {
        UserComparator(Some(Arc::new(Custom { name, order })))
    }

    /// The name recorded in the manifest and checked when a database opens.
    pub(crate) fn name(&self) -> &str {
        self.0.as_ref().map_or(BYTEWISE_NAME, |c| &c.name)
    }

    /// Whether keys are ordered bytewise (the memtable's fast comparison
    /// relies on it).
    pub(crate) fn is_bytewise(&self) -> bool {
        self.0.is_none()
    }

    /// Compares two user keys.
    #[inline]
    pub(crate) fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        match &self.0 {
            None => key_comparator::compare_bytes(a, b),
            Some(custom) => custom.order.compare(a, b),
        }
    }

    /// Compares two internal keys: user key ascending, then sequence and
    /// type descending (newest first).
    #[inline]
    pub(crate) fn compare_internal(&self, a: &[u8], b: &[u8]) -> Ordering {
        use crate::key::{tag_of, user_key};
        self.compare(user_key(a), user_key(b))
            .then_with(|| tag_of(b).cmp(&tag_of(a)))
    }

    /// An order-preserving summary of a user key (see
    /// [`Comparator::key_prefix`]): its first eight bytes for the bytewise
    /// order, the user comparator's own otherwise.
    #[inline]
    pub(crate) fn key_prefix(&self, key: &[u8]) -> u64 {
        match &self.0 {
            None => key_comparator::bytewise_prefix(key),
            Some(custom) => custom.order.key_prefix(key),
        }
    }

    /// `a < b` as user keys.
    #[inline]
    pub(crate) fn lt(&self, a: &[u8], b: &[u8]) -> bool {
        self.compare(a, b).is_lt()
    }

    /// `a <= b` as user keys.
    #[inline]
    pub(crate) fn le(&self, a: &[u8], b: &[u8]) -> bool {
        self.compare(a, b).is_le()
    }
}

impl fmt::Debug for UserComparator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("UserComparator").field(&self.name()).finish()
    }
}
