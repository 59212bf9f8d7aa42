//! [`DBPinnableSlice`]: the `rocksdb` crate's borrowed value, as a copy.

use std::marker::PhantomData;
use std::ops::Deref;

use super::{DBWithThreadMode, ThreadMode};
use crate::error::Result;
use crate::options::ReadOptions;

/// A value read by [`DB::get_pinned`](crate::DB::get_pinned): derefs to
/// the bytes, as the `rocksdb` crate's type does, but owns them.
///
/// RocksDB pins the memtable or the cached block the value lies in and
/// hands out a pointer into it. This engine does not: the lookup copies
/// the value's bytes once into a `Vec<u8>` that the slice owns, exactly as
/// [`DB::get`](crate::DB::get) does, from the memtable's arena when the
/// newest version is in a memtable, or else out of the data block read from
/// the table file (the engine keeps no block cache, so that block is read
/// into a buffer of its own and dropped after the copy). So the slice
/// holds no memtable, block or file: flushes and compactions go on while it
/// lives, and it costs what `get` costs, no less. The type is here so that
/// code written for the `rocksdb` crate compiles; zero-copy reads are not
/// done.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"value").unwrap();
/// let v = db.get_pinned(b"k").unwrap().unwrap();
/// db.put(b"k", b"newer").unwrap();
/// db.flush().unwrap(); // the memtable it was read from is gone
/// assert_eq!(&*v, b"value"); // the copy stays
/// assert_eq!(v.len(), 5);
/// ```
pub struct DBPinnableSlice<'a> {
    value: Vec<u8>,
    /// The `rocksdb` crate's slice borrows the database; this one only
    /// keeps the lifetime, for the same signatures.
    _db: PhantomData<&'a ()>,
}

impl Deref for DBPinnableSlice<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.value
    }
}

impl AsRef<[u8]> for DBPinnableSlice<'_> {
    fn as_ref(&self) -> &[u8] {
        &self.value
    }
}

impl std::fmt::Debug for DBPinnableSlice<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("DBPinnableSlice").field(&self.value).finish()
    }
}

impl PartialEq<[u8]> for DBPinnableSlice<'_> {
    fn eq(&self, other: &[u8]) -> bool {
        self.value == other
    }
}

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// The value of `key` as a [`DBPinnableSlice`] (a copy; see there).
    ///
    /// # Errors
    ///
    /// As [`get`](Self::get).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// assert_eq!(db.get_pinned(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    /// assert!(db.get_pinned(b"absent").unwrap().is_none());
    /// ```
    pub fn get_pinned(&self, key: impl AsRef<[u8]>) -> Result<Option<DBPinnableSlice<'_>>> {
        self.get_pinned_opt(key, &ReadOptions::default())
    }

    /// [`get_pinned`](Self::get_pinned) with read options (a snapshot).
    ///
    /// # Errors
    ///
    /// As [`get_opt`](Self::get_opt).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, ReadOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"k", b"v").unwrap();
    /// let mut ro = ReadOptions::default();
    /// ro.set_snapshot(&snap);
    /// assert!(db.get_pinned_opt(b"k", &ro).unwrap().is_none());
    /// ```
    pub fn get_pinned_opt(
        &self,
        key: impl AsRef<[u8]>,
        ro: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        Ok(self.get_opt(key, ro)?.map(|value| DBPinnableSlice {
            value,
            _db: PhantomData,
        }))
    }
}
