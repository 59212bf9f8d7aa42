//! [`SliceTransform`]: the prefix extractor, as the `rocksdb` crate's.

use std::sync::Arc;

/// How a key's prefix is taken, for prefix iteration: set with
/// [`Options::set_prefix_extractor`](crate::Options::set_prefix_extractor),
/// used by iterators made with
/// [`ReadOptions::set_prefix_same_as_start`](crate::ReadOptions::set_prefix_same_as_start)
/// (and [`DB::prefix_iterator`](crate::DB::prefix_iterator)), which stop
/// once the key's prefix differs from the seek key's.
///
/// A key is in the extractor's *domain* when it has a prefix at all (a key
/// shorter than a fixed prefix has none). Unlike RocksDB, the engine builds
/// no prefix bloom filters from it (its filters are of whole keys) and does
/// not record it in the database: it changes what such iterators return,
/// nothing on disk, and may change between opens.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, Options, SliceTransform};
///
/// let mut opts = Options::default();
/// opts.create_if_missing(true);
/// opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(4));
/// let db = DB::open(&opts, dir.path()).unwrap();
/// db.put(b"user1", b"a").unwrap();
/// db.put(b"user2", b"b").unwrap();
/// db.put(b"zone1", b"c").unwrap();
/// assert_eq!(db.prefix_iterator(b"user").count(), 2);
/// ```
#[derive(Clone)]
pub struct SliceTransform {
    kind: Kind,
}

#[derive(Clone)]
enum Kind {
    /// The first `n` bytes; keys shorter than `n` are outside the domain.
    Fixed(usize),
    /// The whole key.
    Noop,
    /// The caller's functions. `Arc`: iterators clone nothing, but options
    /// are cloned whole.
    Custom(Arc<Custom>),
}

struct Custom {
    name: String,
    transform: fn(&[u8]) -> &[u8],
    in_domain: Option<fn(&[u8]) -> bool>,
}

impl std::fmt::Debug for SliceTransform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            Kind::Fixed(n) => write!(f, "SliceTransform::FixedPrefix({n})"),
            Kind::Noop => f.write_str("SliceTransform::Noop"),
            Kind::Custom(c) => write!(f, "SliceTransform({:?})", c.name),
        }
    }
}

impl SliceTransform {
    /// An extractor from the caller's functions, as the `rocksdb` crate's
    /// `create`: `transform_fn` gives a key's prefix, `in_domain_fn` says
    /// which keys have one (all of them when `None`). Plain functions, not
    /// closures, as there. The name is kept for `Debug`.
    ///
    /// # Examples
    ///
    /// Everything up to the first `:` is the prefix; keys without one are
    /// outside the domain:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options, SliceTransform};
    ///
    /// fn up_to_colon(key: &[u8]) -> &[u8] {
    ///     let end = key.iter().position(|&b| b == b':').map_or(key.len(), |i| i + 1);
    ///     &key[..end]
    /// }
    /// fn has_colon(key: &[u8]) -> bool {
    ///     key.contains(&b':')
    /// }
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true);
    /// opts.set_prefix_extractor(SliceTransform::create("colon", up_to_colon, Some(has_colon)));
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// for k in [&b"ab:1"[..], b"ab:2", b"abc:1"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// let keys: Vec<_> = db.prefix_iterator(b"ab:").map(|kv| kv.unwrap().0).collect();
    /// assert_eq!(keys, [&b"ab:1"[..], b"ab:2"].map(Box::from));
    /// ```
    pub fn create(
        name: impl Into<String>,
        transform_fn: fn(&[u8]) -> &[u8],
        in_domain_fn: Option<fn(&[u8]) -> bool>,
    ) -> SliceTransform {
        SliceTransform {
            kind: Kind::Custom(Arc::new(Custom {
                name: name.into(),
                transform: transform_fn,
                in_domain: in_domain_fn,
            })),
        }
    }

    /// The first `len` bytes of a key; keys shorter than `len` are outside
    /// the domain, as in RocksDB's `NewFixedPrefixTransform`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options, SliceTransform};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true);
    /// opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(2));
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// for k in [&b"aa1"[..], b"aa2", b"ab1"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// assert_eq!(db.prefix_iterator(b"aa").count(), 2);
    /// assert_eq!(db.prefix_iterator(b"ab0").count(), 1); // the prefix of "ab0" is "ab"
    /// ```
    pub fn create_fixed_prefix(len: usize) -> SliceTransform {
        SliceTransform {
            kind: Kind::Fixed(len),
        }
    }

    /// The whole key is its prefix, as RocksDB's `NewNoopTransform`: a
    /// prefix iterator then yields at most the key it was given.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options, SliceTransform};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true);
    /// opts.set_prefix_extractor(SliceTransform::create_noop());
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// db.put(b"a", b"v").unwrap();
    /// db.put(b"ab", b"v").unwrap();
    /// assert_eq!(db.prefix_iterator(b"a").count(), 1);
    /// ```
    pub fn create_noop() -> SliceTransform {
        SliceTransform { kind: Kind::Noop }
    }

    /// The prefix of `key`, or `None` when `key` is outside the domain.
    pub(crate) fn prefix_of<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        match &self.kind {
            Kind::Fixed(n) => key.get(..*n),
            Kind::Noop => Some(key),
            Kind::Custom(c) => c
                .in_domain
                .is_none_or(|in_domain| in_domain(key))
                .then(|| (c.transform)(key)),
        }
    }

    /// Whether `key` is in the domain with prefix `prefix`.
    #[inline]
    pub(crate) fn has_prefix(&self, key: &[u8], prefix: &[u8]) -> bool {
        match &self.kind {
            // `prefix` is `n` bytes long: it came from `prefix_of`.
            Kind::Fixed(_) => key.starts_with(prefix),
            _ => self.prefix_of(key) == Some(prefix),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SliceTransform;

    #[test]
    fn prefixes_and_domains() {
        let fixed = SliceTransform::create_fixed_prefix(2);
        assert_eq!(fixed.prefix_of(b"abc"), Some(&b"ab"[..]));
        assert_eq!(fixed.prefix_of(b"a"), None);
        assert!(fixed.has_prefix(b"abz", b"ab"));
        assert!(!fixed.has_prefix(b"a", b"ab"));
        let noop = SliceTransform::create_noop();
        assert!(noop.has_prefix(b"abc", b"abc"));
        assert!(!noop.has_prefix(b"abcd", b"abc"));
        let first = SliceTransform::create("first", |k| &k[..1], Some(|k| !k.is_empty()));
        assert_eq!(first.prefix_of(b""), None);
        assert!(first.has_prefix(b"xyz", b"x"));
        assert_eq!(format!("{first:?}"), "SliceTransform(\"first\")");
    }
}
