//! The `rocksdb` crate's generic names: [`ThreadMode`] with its two modes,
//! and [`DBAccess`], what snapshots and iterators borrow.

use super::{DBPinnableSlice, DBWithThreadMode, Shared};
use crate::error::Result;
use crate::options::ReadOptions;

/// What keeps [`ThreadMode`] and [`DBAccess`] to this crate's types: the
/// engine behind them is reached through here.
pub(crate) mod sealed {
    /// A thread mode of this crate.
    pub trait Mode {}

    /// A database of this crate: snapshots and iterators over a generic
    /// [`DBAccess`](super::DBAccess) reach its engine through it.
    pub trait Engine {
        /// The engine's shared state.
        fn shared(&self) -> &super::Shared;
    }
}

/// How a [`DBWithThreadMode`] changes its column families, as the
/// `rocksdb` crate's marker trait: [`SingleThreaded`] or [`MultiThreaded`].
///
/// In the `rocksdb` crate the mode decides whether creating and dropping a
/// column family takes `&mut self` or `&self` (behind a lock). This engine
/// has no column families, so the two modes behave the same in every
/// method: the parameter is here so that code naming it compiles. Every
/// other operation is thread-safe in both modes, as in RocksDB. The trait
/// is sealed: the two modes are the only ones.
///
/// # Examples
///
/// A function for either mode:
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DBWithThreadMode, MultiThreaded, SingleThreaded, ThreadMode};
///
/// fn count<T: ThreadMode>(db: &DBWithThreadMode<T>) -> usize {
///     db.iterator(lsm_demo::IteratorMode::Start).count()
/// }
///
/// let db = DBWithThreadMode::<MultiThreaded>::open_default(dir.path().join("multi")).unwrap();
/// db.put(b"k", b"v").unwrap();
/// assert_eq!(count(&db), 1);
/// let db = DBWithThreadMode::<SingleThreaded>::open_default(dir.path().join("single")).unwrap();
/// assert_eq!(count(&db), 0);
/// ```
pub trait ThreadMode: sealed::Mode + Send + Sync + 'static {}

/// The `rocksdb` crate's default mode (without its `multi-threaded-cf`
/// feature): column families change through `&mut self`. Here it behaves
/// exactly as [`MultiThreaded`] (see [`ThreadMode`]).
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DBWithThreadMode, SingleThreaded};
///
/// let db: DBWithThreadMode<SingleThreaded> = DBWithThreadMode::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// let db: lsm_demo::DB = db; // the default `DB` is this mode
/// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SingleThreaded;

/// The `rocksdb` crate's mode for column families changed through `&self`
/// from any thread (the default `DB` with its `multi-threaded-cf`
/// feature). Here it behaves exactly as [`SingleThreaded`] (see
/// [`ThreadMode`]): both are `Send + Sync`, shared with `Arc` or scoped
/// threads.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DBWithThreadMode, MultiThreaded};
///
/// let db = DBWithThreadMode::<MultiThreaded>::open_default(dir.path()).unwrap();
/// std::thread::scope(|s| {
///     for t in 0..4u8 {
///         let db = &db;
///         s.spawn(move || db.put([t], b"v").unwrap());
///     }
/// });
/// assert_eq!(db.iterator(lsm_demo::IteratorMode::Start).count(), 4);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MultiThreaded;

impl sealed::Mode for SingleThreaded {}
impl sealed::Mode for MultiThreaded {}
impl ThreadMode for SingleThreaded {}
impl ThreadMode for MultiThreaded {}

/// What snapshots and iterators borrow: a database in either thread mode,
/// as the `rocksdb` crate's trait of that name. Code generic over it takes
/// a [`SnapshotWithThreadMode`](crate::SnapshotWithThreadMode),
/// [`DBIteratorWithThreadMode`](crate::DBIteratorWithThreadMode) or
/// [`DBRawIteratorWithThreadMode`](crate::DBRawIteratorWithThreadMode) of
/// any database, and reads through the methods below.
///
/// The trait is sealed: [`DBWithThreadMode`] is its only implementation
/// (the `rocksdb` crate's other one, its transaction databases, has no
/// counterpart here). Its `rocksdb` methods that hand out raw C pointers
/// (`create_snapshot`, `create_iterator`) and those of column families are
/// not part of it; [`SnapshotWithThreadMode::new`](crate::SnapshotWithThreadMode::new)
/// takes a snapshot of any `D: DBAccess`.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DBAccess, DBRawIteratorWithThreadMode, ReadOptions, SnapshotWithThreadMode};
///
/// /// The keys a cursor has from where it stands.
/// fn rest<D: DBAccess>(mut it: DBRawIteratorWithThreadMode<'_, D>) -> Vec<Vec<u8>> {
///     let mut keys = Vec::new();
///     while let Some(k) = it.key() {
///         keys.push(k.to_vec());
///         it.next();
///     }
///     keys
/// }
///
/// /// Reads `key` as of a snapshot, through the trait.
/// fn read_at_snapshot<D: DBAccess>(db: &D, key: &[u8]) -> Option<Vec<u8>> {
///     let snap = SnapshotWithThreadMode::new(db);
///     let mut ro = ReadOptions::default();
///     ro.set_snapshot(&snap);
///     db.get_opt(key, &ro).unwrap()
/// }
///
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// db.put(b"a", b"1").unwrap();
/// db.put(b"b", b"2").unwrap();
/// let mut it = db.raw_iterator();
/// it.seek(b"a");
/// assert_eq!(rest(it), [b"a", b"b"]);
/// assert_eq!(read_at_snapshot(&db, b"b").as_deref(), Some(&b"2"[..]));
/// ```
pub trait DBAccess: sealed::Engine {
    /// Reads `key` with read options (a snapshot), as
    /// [`DBWithThreadMode::get_opt`].
    ///
    /// # Errors
    ///
    /// As [`DBWithThreadMode::get_opt`]: a table that cannot be read.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DBAccess, ReadOptions};
    ///
    /// fn get<D: DBAccess>(db: &D, key: &[u8]) -> Option<Vec<u8>> {
    ///     db.get_opt(key, &ReadOptions::default()).unwrap()
    /// }
    ///
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// assert_eq!(get(&db, b"k").as_deref(), Some(&b"v"[..]));
    /// assert_eq!(get(&db, b"other"), None);
    /// ```
    fn get_opt<K: AsRef<[u8]>>(&self, key: K, readopts: &ReadOptions) -> Result<Option<Vec<u8>>>;

    /// Reads `key` into a [`DBPinnableSlice`] (a copy: see there), as
    /// [`DBWithThreadMode::get_pinned_opt`].
    ///
    /// # Errors
    ///
    /// As [`get_opt`](Self::get_opt).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DBAccess, ReadOptions};
    ///
    /// fn value_len<D: DBAccess>(db: &D, key: &[u8]) -> Option<usize> {
    ///     let v = db.get_pinned_opt(key, &ReadOptions::default()).unwrap()?;
    ///     Some(v.len())
    /// }
    ///
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"value").unwrap();
    /// assert_eq!(value_len(&db, b"k"), Some(5));
    /// ```
    fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>>;

    /// The values of `keys`, in their order, all read as of one point in
    /// time, as [`DBWithThreadMode::multi_get_opt`].
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DBAccess, ReadOptions};
    ///
    /// fn present<D: DBAccess>(db: &D, keys: &[&[u8]]) -> usize {
    ///     let values = db.multi_get_opt(keys, &ReadOptions::default());
    ///     values.into_iter().filter(|v| matches!(v, Ok(Some(_)))).count()
    /// }
    ///
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// db.put(b"c", b"3").unwrap();
    /// assert_eq!(present(&db, &[b"a", b"b", b"c"]), 2);
    /// ```
    fn multi_get_opt<K, I>(&self, keys: I, readopts: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>;
}

impl<T: ThreadMode> sealed::Engine for DBWithThreadMode<T> {
    #[inline]
    fn shared(&self) -> &Shared {
        &self.shared
    }
}

// Each method calls the inherent one of the same name (inherent methods
// come first in method resolution), so the two cannot drift apart.
impl<T: ThreadMode> DBAccess for DBWithThreadMode<T> {
    #[inline]
    fn get_opt<K: AsRef<[u8]>>(&self, key: K, readopts: &ReadOptions) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, readopts)
    }

    #[inline]
    fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.get_pinned_opt(key, readopts)
    }

    #[inline]
    fn multi_get_opt<K, I>(&self, keys: I, readopts: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        self.multi_get_opt(keys, readopts)
    }
}
