//! `delete_range`: deleting every key of a range with one write (a range
//! tombstone; see `crate::range_del`).

use super::{DBWithThreadMode, ThreadMode};
use crate::batch::WriteBatch;
use crate::error::Result;
use crate::options::WriteOptions;

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// Deletes every key in `[from, to)` (`from` included, `to` not) with
    /// one write, as the `rocksdb` crate's `delete_range_cf` does on the
    /// default column family: a range tombstone, however many keys the
    /// range holds. Reads that see the write (`get`, `multi_get`,
    /// iterators) skip the keys, in memtables and tables alike; snapshots
    /// taken before keep seeing them; a later put of a key in the range
    /// brings it back. The tombstone survives flushes, compactions and
    /// reopens, and compaction drops the data it covers once no snapshot
    /// needs it, then the tombstone itself once nothing older lies below.
    /// An empty or inverted range (`from >= to`) deletes nothing.
    ///
    /// # Errors
    ///
    /// As [`write`](Self::write); [`Error::NotSupported`](crate::Error::NotSupported)
    /// in a database with its own comparator (`Options::set_comparator`).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::DB;
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// for k in [&b"a"[..], b"b", b"b2", b"c"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// let before = db.snapshot();
    /// db.delete_range(b"b", b"c").unwrap();
    /// let keys: Vec<Box<[u8]>> = db
    ///     .iterator(lsm_demo::IteratorMode::Start)
    ///     .map(|kv| kv.unwrap().0)
    ///     .collect();
    /// assert_eq!(keys, [Box::from(&b"a"[..]), Box::from(&b"c"[..])]);
    /// assert_eq!(before.get(b"b").unwrap().as_deref(), Some(&b"v"[..]));
    /// db.put(b"b", b"again").unwrap(); // a later put is visible
    /// assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"again"[..]));
    /// ```
    pub fn delete_range<K: AsRef<[u8]>>(&self, from: K, to: K) -> Result<()> {
        self.delete_range_opt(from, to, &WriteOptions::default())
    }

    /// [`delete_range`](Self::delete_range) with write options (the
    /// `rocksdb` crate's `delete_range_cf_opt` on the default column
    /// family).
    ///
    /// # Errors
    ///
    /// As [`write_opt`](Self::write_opt).
    ///
    /// # Examples
    ///
    /// A synced range deletion stays after a reopen:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, WriteOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.put(b"k1", b"v").unwrap();
    /// db.put(b"k2", b"v").unwrap();
    /// db.flush().unwrap(); // the keys are in a table, the tombstone in the log
    /// let mut wo = WriteOptions::default();
    /// wo.set_sync(true);
    /// db.delete_range_opt(b"k", b"l", &wo).unwrap();
    /// drop(db);
    /// let db = DB::open_default(dir.path()).unwrap();
    /// assert_eq!(db.get(b"k1").unwrap(), None);
    /// assert_eq!(db.get(b"k2").unwrap(), None);
    /// ```
    pub fn delete_range_opt<K: AsRef<[u8]>>(
        &self,
        from: K,
        to: K,
        writeopts: &WriteOptions,
    ) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete_range(from, to);
        self.write_opt(b, writeopts)
    }
}
