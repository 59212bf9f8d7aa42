//! Snapshots: a consistent read view at one sequence number.

use super::iter::{DBIteratorWithThreadMode, DBRawIteratorWithThreadMode, IteratorMode};
use super::{DB, DBAccess, DBWithThreadMode, Shared, ThreadMode};
use crate::error::Result;
use crate::options::ReadOptions;

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// A consistent point-in-time view for reads and iteration.
    ///
    /// # Examples
    ///
    /// Writes after the snapshot are invisible to it:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"old").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"k", b"new").unwrap();
    /// db.put(b"other", b"x").unwrap();
    /// assert_eq!(snap.get(b"k").unwrap().as_deref(), Some(&b"old"[..]));
    /// assert_eq!(snap.get(b"other").unwrap(), None);
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
    /// ```
    pub fn snapshot(&self) -> SnapshotWithThreadMode<'_, Self> {
        SnapshotWithThreadMode::new(self)
    }
}

/// A consistent read view; release it by dropping it. [`Snapshot`] names
/// it over [`DB`]; this generic name, the `rocksdb` crate's, takes any
/// [`DBAccess`].
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::IteratorMode;
///
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// db.put(b"a", b"1").unwrap();
/// let snap = db.snapshot();
/// db.delete(b"a").unwrap();
/// db.put(b"b", b"2").unwrap();
/// assert_eq!(snap.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
/// assert_eq!(snap.iterator(IteratorMode::Start).count(), 1);
/// drop(snap); // releases the old versions for compaction
/// assert_eq!(db.get(b"a").unwrap(), None);
/// ```
pub struct SnapshotWithThreadMode<'a, D: DBAccess> {
    db: &'a D,
    sequence: u64,
}

/// [`SnapshotWithThreadMode`] over [`DB`], the name code written for the
/// `rocksdb` crate uses.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::Snapshot;
///
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// let snap: Snapshot<'_> = db.snapshot();
/// db.put(b"k", b"v").unwrap();
/// assert_eq!(snap.get(b"k").unwrap(), None);
/// ```
pub type Snapshot<'a> = SnapshotWithThreadMode<'a, DB>;

impl<D: DBAccess> std::fmt::Debug for SnapshotWithThreadMode<'_, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("sequence", &self.sequence)
            .finish_non_exhaustive()
    }
}

impl<'a, D: DBAccess> SnapshotWithThreadMode<'a, D> {
    /// Takes a snapshot of `db`, as [`DB::snapshot`] does: the way to take
    /// one in code generic over [`DBAccess`] (the `rocksdb` crate's
    /// constructor).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DBAccess, SnapshotWithThreadMode};
    ///
    /// fn frozen<D: DBAccess>(db: &D) -> SnapshotWithThreadMode<'_, D> {
    ///     SnapshotWithThreadMode::new(db)
    /// }
    ///
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// let snap = frozen(&db);
    /// db.put(b"k", b"v").unwrap();
    /// assert_eq!(snap.get(b"k").unwrap(), None);
    /// ```
    pub fn new(db: &'a D) -> Self {
        let shared = db.shared();
        let mut snaps = shared.snapshots.lock();
        let sequence = shared.visible();
        *snaps.entry(sequence).or_default() += 1;
        SnapshotWithThreadMode { db, sequence }
    }
}

impl<D: DBAccess> SnapshotWithThreadMode<'_, D> {
    /// The sequence number the snapshot reads at.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// let first = db.snapshot();
    /// db.put(b"k", b"v").unwrap();
    /// let second = db.snapshot();
    /// assert_eq!(second.sequence(), first.sequence() + 1); // one write between them
    /// assert_eq!(second.sequence(), db.stats().last_sequence);
    /// ```
    pub fn sequence(&self) -> u64 {
        self.sequence
    }

    /// Reads `key` as of the snapshot.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"1").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"k", b"2").unwrap();
    /// assert_eq!(snap.get(b"k").unwrap().as_deref(), Some(&b"1"[..]));
    /// assert_eq!(snap.get(b"absent").unwrap(), None);
    /// ```
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, ReadOptions::default())
    }

    /// Reads `key` as of the snapshot with read options (taken by value, as
    /// the `rocksdb` crate does); their snapshot, if any, is replaced by this
    /// one.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::ReadOptions;
    ///
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"1").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"k", b"2").unwrap();
    /// let v = snap.get_opt(b"k", ReadOptions::default()).unwrap();
    /// assert_eq!(v.as_deref(), Some(&b"1"[..]));
    /// ```
    pub fn get_opt(&self, key: impl AsRef<[u8]>, mut ro: ReadOptions) -> Result<Option<Vec<u8>>> {
        ro.snapshot = Some(self.sequence);
        self.db.get_opt(key, &ro)
    }

    /// The values of `keys` as of the snapshot, in their order.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"b", b"2").unwrap();
    /// let values = snap.multi_get([b"a", b"b"]);
    /// assert_eq!(values[0].as_ref().unwrap().as_deref(), Some(&b"1"[..]));
    /// assert_eq!(values[1].as_ref().unwrap(), &None);
    /// ```
    pub fn multi_get<K, I>(&self, keys: I) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        self.multi_get_opt(keys, ReadOptions::default())
    }

    /// [`multi_get`](Self::multi_get) with read options (by value); their
    /// snapshot, if any, is replaced by this one.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::ReadOptions;
    ///
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"a", b"1").unwrap();
    /// let values = snap.multi_get_opt([b"a"], ReadOptions::default());
    /// assert_eq!(values[0].as_ref().unwrap(), &None);
    /// ```
    pub fn multi_get_opt<K, I>(&self, keys: I, mut ro: ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        ro.snapshot = Some(self.sequence);
        self.db.multi_get_opt(keys, &ro)
    }

    /// Iterates as of the snapshot.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::IteratorMode;
    ///
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"a", b"2").unwrap();
    /// db.put(b"b", b"3").unwrap();
    /// let pairs: Vec<_> = snap.iterator(IteratorMode::Start).map(Result::unwrap).collect();
    /// assert_eq!(pairs, [(Box::from(&b"a"[..]), Box::from(&b"1"[..]))]);
    /// ```
    pub fn iterator(&self, mode: IteratorMode<'_>) -> DBIteratorWithThreadMode<'_, D> {
        self.iterator_opt(mode, ReadOptions::default())
    }

    /// Iterates as of the snapshot with read options (bounds, by value);
    /// their snapshot, if any, is replaced by this one.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{IteratorMode, ReadOptions};
    ///
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// db.put(b"b", b"2").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"c", b"3").unwrap();
    /// let mut ro = ReadOptions::default();
    /// ro.set_iterate_lower_bound(b"b".to_vec());
    /// assert_eq!(snap.iterator_opt(IteratorMode::Start, ro).count(), 1);
    /// ```
    pub fn iterator_opt(
        &self,
        mode: IteratorMode<'_>,
        mut ro: ReadOptions,
    ) -> DBIteratorWithThreadMode<'_, D> {
        ro.snapshot = Some(self.sequence);
        DBIteratorWithThreadMode::new(self.db, ro, mode)
    }

    /// A cursor as of the snapshot.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"b", b"2").unwrap();
    /// let mut it = snap.raw_iterator();
    /// it.seek_to_last();
    /// assert_eq!(it.key(), Some(&b"a"[..]));
    /// ```
    pub fn raw_iterator(&self) -> DBRawIteratorWithThreadMode<'_, D> {
        self.raw_iterator_opt(ReadOptions::default())
    }

    /// A cursor as of the snapshot with read options (by value); their
    /// snapshot, if any, is replaced by this one.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::ReadOptions;
    ///
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// db.put(b"b", b"2").unwrap();
    /// let snap = db.snapshot();
    /// let mut ro = ReadOptions::default();
    /// ro.set_iterate_upper_bound(b"b".to_vec());
    /// let mut it = snap.raw_iterator_opt(ro);
    /// it.seek_to_last();
    /// assert_eq!(it.key(), Some(&b"a"[..]));
    /// ```
    pub fn raw_iterator_opt(&self, mut ro: ReadOptions) -> DBRawIteratorWithThreadMode<'_, D> {
        ro.snapshot = Some(self.sequence);
        DBRawIteratorWithThreadMode::new(self.db, ro)
    }
}

impl<D: DBAccess> Drop for SnapshotWithThreadMode<'_, D> {
    fn drop(&mut self) {
        let mut snaps = self.db.shared().snapshots.lock();
        if let Some(n) = snaps.get_mut(&self.sequence) {
            *n -= 1;
            if *n == 0 {
                snaps.remove(&self.sequence);
            }
        }
    }
}

impl Shared {
    pub(super) fn oldest_snapshot(&self) -> u64 {
        let snaps = self.snapshots.lock();
        snaps
            .keys()
            .next()
            .copied()
            .unwrap_or_else(|| self.visible())
    }
}
