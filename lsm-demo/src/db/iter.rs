//! The iterators: [`DBIterator`] and the cursor [`DBRawIterator`], and
//! their generic names over any [`DBAccess`].

use std::sync::Arc;

use super::{DB, DBAccess, DBWithThreadMode, ThreadMode};
use crate::error::Result;
use crate::iter::UserIterator;
use crate::options::{ReadOptions, SliceTransform};
use crate::version::Version;

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// Iterates key-value pairs from where `mode` says.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Direction, IteratorMode};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// for k in [b"a", b"b", b"c"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// let keys: Vec<_> = db
    ///     .iterator(IteratorMode::From(b"b", Direction::Reverse))
    ///     .map(|kv| kv.unwrap().0)
    ///     .collect();
    /// assert_eq!(keys, [b"b".to_vec().into_boxed_slice(), b"a".to_vec().into_boxed_slice()]);
    /// ```
    pub fn iterator(&self, mode: IteratorMode<'_>) -> DBIteratorWithThreadMode<'_, Self> {
        self.iterator_opt(mode, ReadOptions::default())
    }

    /// Iterates with read options: a snapshot, bounds (taken by value, as
    /// the `rocksdb` crate does).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, IteratorMode, ReadOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"b", b"2").unwrap();
    /// let mut ro = ReadOptions::default();
    /// ro.set_snapshot(&snap);
    /// let keys: Vec<_> = db.iterator_opt(IteratorMode::Start, ro).map(|kv| kv.unwrap().0).collect();
    /// assert_eq!(keys, [Box::from(&b"a"[..])]);
    /// ```
    pub fn iterator_opt(
        &self,
        mode: IteratorMode<'_>,
        ro: ReadOptions,
    ) -> DBIteratorWithThreadMode<'_, Self> {
        DBIteratorWithThreadMode::new(self, ro, mode)
    }

    /// Iterates forward from `prefix` with
    /// [`set_prefix_same_as_start`](ReadOptions::set_prefix_same_as_start),
    /// as the `rocksdb` crate's `prefix_iterator`.
    ///
    /// With a prefix extractor set
    /// ([`Options::set_prefix_extractor`](crate::Options::set_prefix_extractor)),
    /// the iteration stops at the first key whose prefix differs from
    /// `prefix`'s. Without one, as in RocksDB, the option does nothing: the
    /// iterator goes on in total order from `prefix` to the last key, and
    /// the caller stops it (with `take_while`, or an upper bound). The same
    /// holds when `prefix` itself is outside the extractor's domain (shorter
    /// than a fixed prefix).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options, SliceTransform};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true);
    /// opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(3));
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// for k in [&b"aaa1"[..], b"bbb1", b"bbb2", b"ccc1"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// let keys: Vec<_> = db.prefix_iterator(b"bbb").map(|kv| kv.unwrap().0).collect();
    /// assert_eq!(keys, [&b"bbb1"[..], b"bbb2"].map(Box::from));
    /// ```
    pub fn prefix_iterator<P: AsRef<[u8]>>(&self, prefix: P) -> DBIteratorWithThreadMode<'_, Self> {
        let mut ro = ReadOptions::default();
        ro.set_prefix_same_as_start(true);
        let mode = IteratorMode::From(prefix.as_ref(), Direction::Forward);
        DBIteratorWithThreadMode::new(self, ro, mode)
    }

    /// Iterates with
    /// [`set_total_order_seek`](ReadOptions::set_total_order_seek), as the
    /// `rocksdb` crate's `full_iterator`: every key from where `mode` says,
    /// whatever the prefix extractor.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, IteratorMode, Options, SliceTransform};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true);
    /// opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(1));
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// db.put(b"a1", b"v").unwrap();
    /// db.put(b"b1", b"v").unwrap();
    /// assert_eq!(db.full_iterator(IteratorMode::Start).count(), 2);
    /// ```
    pub fn full_iterator(&self, mode: IteratorMode<'_>) -> DBIteratorWithThreadMode<'_, Self> {
        let mut ro = ReadOptions::default();
        ro.set_total_order_seek(true);
        DBIteratorWithThreadMode::new(self, ro, mode)
    }

    /// A cursor with explicit positioning.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// for k in [b"a", b"b", b"c"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// let mut it = db.raw_iterator();
    /// let mut keys = Vec::new();
    /// it.seek_to_first();
    /// while let Some(k) = it.key() {
    ///     keys.push(k.to_vec());
    ///     it.next();
    /// }
    /// it.status().unwrap(); // the end, not an error
    /// assert_eq!(keys, [b"a", b"b", b"c"]);
    /// ```
    pub fn raw_iterator(&self) -> DBRawIteratorWithThreadMode<'_, Self> {
        self.raw_iterator_opt(ReadOptions::default())
    }

    /// A cursor with read options: a snapshot, bounds (taken by value, as
    /// the `rocksdb` crate does).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, ReadOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"b", b"2").unwrap();
    /// let mut ro = ReadOptions::default();
    /// ro.set_snapshot(&snap);
    /// let mut it = db.raw_iterator_opt(ro);
    /// it.seek_to_last();
    /// assert_eq!(it.key(), Some(&b"a"[..])); // "b" came after the snapshot
    /// ```
    pub fn raw_iterator_opt(&self, ro: ReadOptions) -> DBRawIteratorWithThreadMode<'_, Self> {
        DBRawIteratorWithThreadMode::new(self, ro)
    }
}

/// Iteration direction.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, Direction, IteratorMode};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// for k in [b"a", b"b", b"c"] {
///     db.put(k, b"v").unwrap();
/// }
/// let from_b = |d| -> Vec<_> {
///     db.iterator(IteratorMode::From(b"b", d)).map(|kv| kv.unwrap().0[0]).collect()
/// };
/// assert_eq!(from_b(Direction::Forward), b"bc");
/// assert_eq!(from_b(Direction::Reverse), b"ba");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Ascending keys.
    Forward,
    /// Descending keys.
    Reverse,
}

/// Where an iterator starts.
///
/// # Examples
///
/// `From` a key that is not there starts at its neighbour in the direction of
/// travel:
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, Direction, IteratorMode};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// for k in [b"a", b"c", b"e"] {
///     db.put(k, b"v").unwrap();
/// }
/// let first = |mode| db.iterator(mode).next().unwrap().unwrap().0;
/// assert_eq!(&*first(IteratorMode::Start), b"a");
/// assert_eq!(&*first(IteratorMode::End), b"e");
/// assert_eq!(&*first(IteratorMode::From(b"b", Direction::Forward)), b"c");
/// assert_eq!(&*first(IteratorMode::From(b"d", Direction::Reverse)), b"c");
/// ```
#[derive(Debug, Clone, Copy)]
pub enum IteratorMode<'a> {
    /// The first key, going forward.
    Start,
    /// The last key, going backward.
    End,
    /// At `key` (forward: the first key `>=` it; reverse: the last `<=` it).
    From(&'a [u8], Direction),
}

/// Key-value pairs in order; yields the first error met and then stops.
/// [`DBIterator`] names it over [`DB`]; this generic name, the `rocksdb`
/// crate's, takes any [`DBAccess`].
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, IteratorMode, KvPair};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// db.put(b"b", b"2").unwrap();
/// db.put(b"a", b"1").unwrap();
/// let pairs: Vec<KvPair> = db.iterator(IteratorMode::Start).collect::<Result<_, _>>().unwrap();
/// assert_eq!(&*pairs[0].0, b"a");
/// assert_eq!(&*pairs[1].1, b"2");
/// ```
///
/// A function for the iterators of any database:
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DBAccess, DBIteratorWithThreadMode, IteratorMode};
///
/// fn keys<D: DBAccess>(it: DBIteratorWithThreadMode<'_, D>) -> Vec<Box<[u8]>> {
///     it.map(|kv| kv.unwrap().0).collect()
/// }
///
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// db.put(b"a", b"1").unwrap();
/// assert_eq!(keys(db.iterator(IteratorMode::Start)), [Box::from(&b"a"[..])]);
/// let snap = db.snapshot();
/// assert_eq!(keys(snap.iterator(IteratorMode::End)).len(), 1);
/// ```
pub struct DBIteratorWithThreadMode<'a, D: DBAccess> {
    raw: DBRawIteratorWithThreadMode<'a, D>,
    direction: Direction,
    done: bool,
}

/// [`DBIteratorWithThreadMode`] over [`DB`], the name code written for the
/// `rocksdb` crate uses.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DBIterator, IteratorMode};
///
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// let it: DBIterator<'_> = db.iterator(IteratorMode::Start);
/// assert_eq!(it.count(), 1);
/// ```
pub type DBIterator<'a> = DBIteratorWithThreadMode<'a, DB>;

impl<D: DBAccess> std::fmt::Debug for DBIteratorWithThreadMode<'_, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DBIterator")
            .field("direction", &self.direction)
            .finish()
    }
}

/// The items of a [`DBIterator`].
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, IteratorMode, KvPair};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// let mut it = db.iterator(IteratorMode::Start);
/// let (key, value): KvPair = it.next().unwrap().unwrap();
/// assert_eq!((&*key, &*value), (&b"k"[..], &b"v"[..]));
/// assert!(it.next().is_none());
/// ```
pub type KvPair = (Box<[u8]>, Box<[u8]>);

impl<'a, D: DBAccess> DBIteratorWithThreadMode<'a, D> {
    /// An iterator over `db` with read options, positioned as `mode` says.
    pub(crate) fn new(db: &'a D, ro: ReadOptions, mode: IteratorMode<'_>) -> Self {
        let mut it = DBIteratorWithThreadMode {
            raw: DBRawIteratorWithThreadMode::new(db, ro),
            direction: Direction::Forward,
            done: false,
        };
        it.set_mode(mode);
        it
    }
}

impl<D: DBAccess> DBIteratorWithThreadMode<'_, D> {
    /// Moves to where `mode` says, in its direction (the `rocksdb` crate's
    /// `set_mode`): the next item is the first from there.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Direction, IteratorMode};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// for k in [b"a", b"b", b"c"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// let mut it = db.iterator(IteratorMode::Start);
    /// assert_eq!(&*it.next().unwrap().unwrap().0, b"a");
    /// it.set_mode(IteratorMode::From(b"b", Direction::Reverse));
    /// let rest: Vec<_> = it.map(|kv| kv.unwrap().0[0]).collect();
    /// assert_eq!(rest, b"ba");
    /// ```
    pub fn set_mode(&mut self, mode: IteratorMode<'_>) {
        self.done = false;
        self.direction = match mode {
            IteratorMode::Start => {
                self.raw.seek_to_first();
                Direction::Forward
            }
            IteratorMode::End => {
                self.raw.seek_to_last();
                Direction::Reverse
            }
            IteratorMode::From(k, Direction::Forward) => {
                self.raw.seek(k);
                Direction::Forward
            }
            IteratorMode::From(k, Direction::Reverse) => {
                self.raw.seek_for_prev(k);
                Direction::Reverse
            }
        };
    }
}

impl<D: DBAccess> Iterator for DBIteratorWithThreadMode<'_, D> {
    type Item = Result<KvPair>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let Some((key, value)) = self.raw.item() else {
            self.done = true;
            return self.raw.status().err().map(Err);
        };
        let item = (Box::from(key), Box::from(value));
        // On an entry within the bounds (just checked): step the inner
        // cursor without checking them again.
        match self.direction {
            Direction::Forward => self.raw.inner.next(),
            Direction::Reverse => self.raw.inner.prev(),
        }
        Some(Ok(item))
    }
}

/// A cursor over the database as of one sequence: `seek`, `seek_for_prev`,
/// `next`, `prev`. [`DBRawIterator`] names it over [`DB`]; this generic
/// name, the `rocksdb` crate's, takes any [`DBAccess`].
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// db.put(b"a", b"1").unwrap();
/// db.put(b"c", b"3").unwrap();
/// let mut it = db.raw_iterator();
/// it.seek(b"b");
/// assert_eq!(it.key(), Some(&b"c"[..]));
/// it.prev();
/// assert_eq!(it.value(), Some(&b"1"[..]));
/// ```
///
/// A function for the cursors of any database:
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DBAccess, DBRawIteratorWithThreadMode};
///
/// fn last_key<D: DBAccess>(mut it: DBRawIteratorWithThreadMode<'_, D>) -> Option<Vec<u8>> {
///     it.seek_to_last();
///     it.key().map(<[u8]>::to_vec)
/// }
///
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// db.put(b"a", b"1").unwrap();
/// db.put(b"b", b"2").unwrap();
/// assert_eq!(last_key(db.raw_iterator()).as_deref(), Some(&b"b"[..]));
/// ```
pub struct DBRawIteratorWithThreadMode<'a, D: DBAccess> {
    inner: UserIterator,
    /// The read options' bounds: the cursor is valid only on keys in
    /// `[lower_bound, upper_bound)`.
    lower_bound: Option<Vec<u8>>,
    upper_bound: Option<Vec<u8>>,
    /// The database's prefix extractor, when the read options ask to stay
    /// within the seek key's prefix (`prefix_same_as_start` without
    /// `total_order_seek`).
    prefix_extractor: Option<&'a SliceTransform>,
    /// The prefix the cursor stays within, taken from the last seek: it is
    /// valid only on keys with this prefix. `None` when not limited.
    prefix: Option<Vec<u8>>,
    /// The read options' snapshot: what `refresh` keeps reading.
    snapshot: Option<u64>,
    /// Keeps the memtables and files the cursor reads alive.
    version: Arc<Version>,
    db: &'a D,
}

/// [`DBRawIteratorWithThreadMode`] over [`DB`], the name code written for
/// the `rocksdb` crate uses.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::DBRawIterator;
///
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// let mut it: DBRawIterator<'_> = db.raw_iterator();
/// it.seek_to_first();
/// assert_eq!(it.key(), Some(&b"k"[..]));
/// ```
pub type DBRawIterator<'a> = DBRawIteratorWithThreadMode<'a, DB>;

impl<D: DBAccess> std::fmt::Debug for DBRawIteratorWithThreadMode<'_, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DBRawIterator")
            .field("valid", &self.inner.valid())
            .finish()
    }
}

impl<'a, D: DBAccess> DBRawIteratorWithThreadMode<'a, D> {
    /// A cursor over `db` with read options, not positioned yet.
    pub(crate) fn new(db: &'a D, ro: ReadOptions) -> Self {
        let shared = db.shared();
        let seq = ro.snapshot.unwrap_or_else(|| shared.visible());
        let version = shared.current();
        let inner = UserIterator::new(version.iter(), seq);
        let prefix_extractor = if ro.prefix_same_as_start && !ro.total_order_seek {
            shared.opts.prefix_extractor.as_ref()
        } else {
            None
        };
        DBRawIteratorWithThreadMode {
            inner,
            lower_bound: ro.lower_bound,
            upper_bound: ro.upper_bound,
            prefix_extractor,
            prefix: None,
            snapshot: ro.snapshot,
            version,
            db,
        }
    }
}

impl<D: DBAccess> DBRawIteratorWithThreadMode<'_, D> {
    /// Moves the cursor to the database as it is now (or, made with a
    /// snapshot, keeps reading the snapshot) and leaves it unpositioned, as
    /// RocksDB's `Iterator::Refresh`: the files and memtables it held are
    /// let go.
    ///
    /// # Errors
    ///
    /// None today; the `Result` is the `rocksdb` crate's signature.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let mut it = db.raw_iterator();
    /// db.put(b"b", b"2").unwrap();
    /// it.seek_to_last();
    /// assert_eq!(it.key(), Some(&b"a"[..])); // as of its creation
    /// it.refresh().unwrap();
    /// it.seek_to_last();
    /// assert_eq!(it.key(), Some(&b"b"[..]));
    /// ```
    pub fn refresh(&mut self) -> Result<()> {
        let shared = self.db.shared();
        let seq = self.snapshot.unwrap_or_else(|| shared.visible());
        let version = shared.current();
        self.inner = UserIterator::new(version.iter(), seq);
        self.version = version;
        Ok(())
    }

    /// Whether the cursor is on an entry.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let mut it = db.raw_iterator();
    /// assert!(!it.valid()); // not positioned yet
    /// it.seek_to_first();
    /// assert!(it.valid());
    /// it.next();
    /// assert!(!it.valid()); // past the last key
    /// ```
    pub fn valid(&self) -> bool {
        self.inner.valid() && self.in_range(self.inner.key())
    }

    /// Whether `key` is within the bounds and the prefix.
    #[inline]
    fn in_range(&self, key: &[u8]) -> bool {
        let ucmp = &self.version.mem.ucmp;
        self.lower_bound
            .as_deref()
            .is_none_or(|lower| ucmp.le(lower, key))
            && self
                .upper_bound
                .as_deref()
                .is_none_or(|upper| ucmp.lt(key, upper))
            && match (&self.prefix, self.prefix_extractor) {
                (Some(prefix), Some(extractor)) => extractor.has_prefix(key, prefix),
                _ => true,
            }
    }

    /// With `prefix_same_as_start`, limits the cursor to the prefix of
    /// `key` (no limit when `key` is outside the extractor's domain).
    fn limit_to_prefix_of(&mut self, key: &[u8]) {
        if let Some(extractor) = self.prefix_extractor {
            self.prefix = extractor.prefix_of(key).map(<[u8]>::to_vec);
        }
    }

    /// With `prefix_same_as_start`, after a seek to the first or the last
    /// key: limits the cursor to the prefix of the key it landed on.
    fn limit_to_current_prefix(&mut self) {
        if let Some(extractor) = self.prefix_extractor {
            self.prefix = None;
            if self.valid() {
                self.prefix = extractor.prefix_of(self.inner.key()).map(<[u8]>::to_vec);
            }
        }
    }

    /// The current key and value, or `None` when not on an entry.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// let mut it = db.raw_iterator();
    /// assert_eq!(it.item(), None);
    /// it.seek_to_first();
    /// assert_eq!(it.item(), Some((&b"k"[..], &b"v"[..])));
    /// ```
    pub fn item(&self) -> Option<(&[u8], &[u8])> {
        self.valid().then(|| (self.inner.key(), self.inner.value()))
    }
    /// The first error met, if any.
    ///
    /// # Examples
    ///
    /// A table file that cannot be read (here an injected read failure) ends the
    /// iteration with an error rather than silently:
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp};
    /// use lsm_demo::{DB, Options};
    /// use std::sync::Arc;
    ///
    /// let fs = FaultInjectionFs::new();
    /// # let mut opts = Options::default();
    /// # opts.create_if_missing(true);
    /// let db = DB::open_with_fs(&opts, "/db", Arc::new(fs.clone())).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// db.flush().unwrap(); // "k" now lives in a table file
    /// fs.fail_next(FaultOp::Read, 1);
    /// let mut it = db.raw_iterator();
    /// it.seek_to_first();
    /// assert!(!it.valid());
    /// assert!(it.status().is_err());
    /// ```
    pub fn status(&self) -> Result<()> {
        self.inner.status()
    }
    /// Moves to the first key.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"b", b"2").unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let mut it = db.raw_iterator();
    /// it.seek_to_first();
    /// assert_eq!(it.key(), Some(&b"a"[..]));
    /// ```
    pub fn seek_to_first(&mut self) {
        match &self.lower_bound {
            Some(lower) => self.inner.seek(lower),
            None => self.inner.seek_to_first(),
        }
        self.limit_to_current_prefix();
    }
    /// Moves to the last key.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"b", b"2").unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let mut it = db.raw_iterator();
    /// it.seek_to_last();
    /// assert_eq!(it.key(), Some(&b"b"[..]));
    /// ```
    pub fn seek_to_last(&mut self) {
        match &self.upper_bound {
            Some(upper) => {
                self.inner.seek_for_prev(upper);
                if self.inner.valid() && self.inner.key() == &upper[..] {
                    self.inner.prev();
                }
            }
            None => self.inner.seek_to_last(),
        }
        self.limit_to_current_prefix();
    }
    /// Moves to the first key `>= key`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"apple", b"1").unwrap();
    /// db.put(b"cherry", b"2").unwrap();
    /// let mut it = db.raw_iterator();
    /// it.seek(b"b"); // the first key >= "b"
    /// assert_eq!(it.key(), Some(&b"cherry"[..]));
    /// it.seek(b"d"); // nothing >= "d"
    /// assert!(!it.valid());
    /// ```
    pub fn seek(&mut self, key: impl AsRef<[u8]>) {
        self.limit_to_prefix_of(key.as_ref());
        match &self.lower_bound {
            Some(lower) if self.version.mem.ucmp.lt(key.as_ref(), lower) => self.inner.seek(lower),
            _ => self.inner.seek(key.as_ref()),
        }
    }
    /// Moves to the last key `<= key`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"apple", b"1").unwrap();
    /// db.put(b"cherry", b"2").unwrap();
    /// let mut it = db.raw_iterator();
    /// it.seek_for_prev(b"b"); // the last key <= "b"
    /// assert_eq!(it.key(), Some(&b"apple"[..]));
    /// it.seek_for_prev(b"a"); // nothing <= "a"
    /// assert!(!it.valid());
    /// ```
    pub fn seek_for_prev(&mut self, key: impl AsRef<[u8]>) {
        match &self.upper_bound {
            Some(upper) if self.version.mem.ucmp.le(upper, key.as_ref()) => self.seek_to_last(),
            _ => self.inner.seek_for_prev(key.as_ref()),
        }
        self.limit_to_prefix_of(key.as_ref());
    }
    /// Moves to the next key; no-op when not valid.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// db.put(b"b", b"2").unwrap();
    /// let mut it = db.raw_iterator();
    /// it.seek(b"a");
    /// it.next();
    /// assert_eq!(it.key(), Some(&b"b"[..]));
    /// it.next();
    /// it.next(); // past the end: stays invalid
    /// assert_eq!(it.key(), None);
    /// ```
    pub fn next(&mut self) {
        if self.valid() {
            self.inner.next()
        }
    }
    /// Moves to the previous key; no-op when not valid.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// db.put(b"b", b"2").unwrap();
    /// let mut it = db.raw_iterator();
    /// it.seek_to_last();
    /// it.prev();
    /// assert_eq!(it.key(), Some(&b"a"[..]));
    /// it.prev(); // before the first key
    /// assert!(!it.valid());
    /// ```
    pub fn prev(&mut self) {
        if self.valid() {
            self.inner.prev()
        }
    }
    /// The current key.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// let mut it = db.raw_iterator();
    /// assert_eq!(it.key(), None); // not on an entry
    /// it.seek(b"k");
    /// assert_eq!(it.key(), Some(&b"k"[..]));
    /// ```
    pub fn key(&self) -> Option<&[u8]> {
        self.item().map(|(k, _)| k)
    }
    /// The current value.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// db.delete(b"gone").unwrap();
    /// let mut it = db.raw_iterator();
    /// it.seek(b"gone"); // tombstones are skipped
    /// assert_eq!(it.value(), Some(&b"v"[..]));
    /// it.seek(b"z");
    /// assert_eq!(it.value(), None);
    /// ```
    pub fn value(&self) -> Option<&[u8]> {
        self.item().map(|(_, v)| v)
    }
}
