//! The iterators: [`DBIterator`] and the cursor [`DBRawIterator`].

use std::sync::Arc;

use super::DB;
use crate::error::Result;
use crate::iter::UserIterator;
use crate::options::ReadOptions;
use crate::version::Version;

impl DB {
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
    pub fn iterator<'a>(&'a self, mode: IteratorMode<'_>) -> DBIterator<'a> {
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
    pub fn iterator_opt<'a>(&'a self, mode: IteratorMode<'_>, ro: ReadOptions) -> DBIterator<'a> {
        let mut it = DBIterator {
            raw: self.raw_iterator_opt(ro),
            direction: Direction::Forward,
            done: false,
        };
        it.set_mode(mode);
        it
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
    pub fn raw_iterator(&self) -> DBRawIterator<'_> {
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
    pub fn raw_iterator_opt(&self, ro: ReadOptions) -> DBRawIterator<'_> {
        let seq = ro.snapshot.unwrap_or_else(|| self.shared.visible());
        let version = self.shared.current();
        let inner = UserIterator::new(version.iter(), seq);
        DBRawIterator {
            inner,
            lower_bound: ro.lower_bound,
            upper_bound: ro.upper_bound,
            snapshot: ro.snapshot,
            version,
            db: self,
        }
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
pub struct DBIterator<'a> {
    raw: DBRawIterator<'a>,
    direction: Direction,
    done: bool,
}

impl std::fmt::Debug for DBIterator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DBIterator")
            .field("direction", &self.direction)
            .finish()
    }
}

/// The items of a [`DBIterator`].
pub type KvPair = (Box<[u8]>, Box<[u8]>);

impl DBIterator<'_> {
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

impl Iterator for DBIterator<'_> {
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
/// `next`, `prev`.
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
pub struct DBRawIterator<'a> {
    inner: UserIterator,
    /// The read options' bounds: the cursor is valid only on keys in
    /// `[lower_bound, upper_bound)`.
    lower_bound: Option<Vec<u8>>,
    upper_bound: Option<Vec<u8>>,
    /// The read options' snapshot: what `refresh` keeps reading.
    snapshot: Option<u64>,
    /// Keeps the memtables and files the cursor reads alive.
    version: Arc<Version>,
    db: &'a DB,
}

impl std::fmt::Debug for DBRawIterator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DBRawIterator")
            .field("valid", &self.inner.valid())
            .finish()
    }
}

impl DBRawIterator<'_> {
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
        let seq = self.snapshot.unwrap_or_else(|| self.db.shared.visible());
        let version = self.db.shared.current();
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
        self.inner.valid() && self.in_bounds(self.inner.key())
    }

    fn in_bounds(&self, key: &[u8]) -> bool {
        self.lower_bound.as_deref().is_none_or(|lower| key >= lower)
            && self.upper_bound.as_deref().is_none_or(|upper| key < upper)
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
        match &self.lower_bound {
            Some(lower) if key.as_ref() < &lower[..] => self.inner.seek(lower),
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
            Some(upper) if key.as_ref() >= &upper[..] => self.seek_to_last(),
            _ => self.inner.seek_for_prev(key.as_ref()),
        }
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
