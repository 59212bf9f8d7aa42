//! The options of one write and of one read.

/// Options of one write.
///
/// # Examples
///
/// ```
/// use lsm_demo::WriteOptions;
///
/// let mut wo = WriteOptions::default();
/// wo.set_sync(true);
/// wo.disable_wal(false);
/// ```
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    pub(crate) sync: bool,
    pub(crate) disable_wal: bool,
    pub(crate) no_slowdown: bool,
}

impl WriteOptions {
    /// Default options: no sync, log on.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, WriteOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.put_opt(b"k", b"v", &WriteOptions::new()).unwrap();
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }
    /// Make the write durable (the log is fdatasynced) before it returns.
    ///
    /// # Examples
    ///
    /// A synced write survives a power loss, simulated here by a fault-injecting
    /// file system; a later unsynced one is lost:
    ///
    /// ```
    /// use lsm_demo::env::FaultInjectionFs;
    /// use lsm_demo::{DB, Options, WriteOptions};
    /// use std::sync::Arc;
    ///
    /// let fs = FaultInjectionFs::new();
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true);
    /// let db = DB::open_with_fs(&opts, "/db", Arc::new(fs.clone())).unwrap();
    /// let mut wo = WriteOptions::default();
    /// wo.set_sync(true);
    /// db.put_opt(b"synced", b"2", &wo).unwrap();
    /// db.put(b"later", b"3").unwrap();
    /// fs.simulate_crash();
    /// drop(db);
    /// let db = DB::open_with_fs(&opts, "/db", Arc::new(fs)).unwrap();
    /// assert_eq!(db.get(b"synced").unwrap().as_deref(), Some(&b"2"[..]));
    /// assert_eq!(db.get(b"later").unwrap(), None);
    /// ```
    pub fn set_sync(&mut self, v: bool) {
        self.sync = v;
    }
    /// Skip the write-ahead log: the write is lost if the process dies
    /// before its memtable is flushed.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Error, WriteOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// let mut wo = WriteOptions::default();
    /// wo.disable_wal(true);
    /// db.put_opt(b"k", b"v", &wo).unwrap();
    /// drop(db); // a clean close flushes unlogged writes
    /// let db = DB::open_default(dir.path()).unwrap();
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    ///
    /// wo.set_sync(true); // there is no log to sync
    /// assert!(matches!(db.put_opt(b"k", b"v", &wo), Err(Error::InvalidArgument(_))));
    /// ```
    pub fn disable_wal(&mut self, v: bool) {
        self.disable_wal = v;
    }
    /// Fail with [`Error::WriteStall`](crate::Error::WriteStall) instead of waiting during a stall.
    ///
    /// # Examples
    ///
    /// Without a stall the write goes through as usual; during one it fails at
    /// once, and the caller decides what to do:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Error, WriteOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// let mut wo = WriteOptions::default();
    /// wo.set_no_slowdown(true);
    /// match db.put_opt(b"k", b"v", &wo) {
    ///     Ok(()) => {}
    ///     Err(Error::WriteStall) => unreachable!("nothing to flush, so no stall"),
    ///     Err(e) => panic!("{e}"),
    /// }
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn set_no_slowdown(&mut self, v: bool) {
        self.no_slowdown = v;
    }
}

/// Options of one read.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, ReadOptions};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v1").unwrap();
/// let snap = db.snapshot();
/// db.put(b"k", b"v2").unwrap();
/// let mut ro = ReadOptions::default();
/// ro.set_snapshot(&snap);
/// assert_eq!(db.get_opt(b"k", &ro).unwrap().as_deref(), Some(&b"v1"[..]));
/// ```
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    pub(crate) snapshot: Option<u64>,
    /// Iterators see no key below it (inclusive bound).
    pub(crate) lower_bound: Option<Vec<u8>>,
    /// Iterators see no key at or above it (exclusive bound).
    pub(crate) upper_bound: Option<Vec<u8>>,
    /// Iterators stay within the seek key's prefix (with an extractor).
    pub(crate) prefix_same_as_start: bool,
    /// Iterators ignore the prefix extractor.
    pub(crate) total_order_seek: bool,
}

impl ReadOptions {
    /// Iterators made with these options see no key below `key`: a seek
    /// to a smaller key lands on the first key at or above it, and
    /// iterating backward stops there (RocksDB's inclusive
    /// `iterate_lower_bound`). Point reads (`get`) ignore it.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, IteratorMode, ReadOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// for k in [b"a", b"b", b"c"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// let mut ro = ReadOptions::default();
    /// ro.set_iterate_lower_bound(b"b".to_vec());
    /// let keys: Vec<_> = db.iterator_opt(IteratorMode::End, ro).map(|kv| kv.unwrap().0).collect();
    /// assert_eq!(keys, [Box::from(&b"c"[..]), Box::from(&b"b"[..])]);
    /// ```
    pub fn set_iterate_lower_bound<K: Into<Vec<u8>>>(&mut self, key: K) {
        self.lower_bound = Some(key.into());
    }

    /// Iterators made with these options see no key at or above `key`
    /// (RocksDB's exclusive `iterate_upper_bound`): iterating forward stops
    /// before it, and a backward start at or past it lands on the last key
    /// below it. Point reads (`get`) ignore it.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, IteratorMode, ReadOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// for k in [b"a", b"b", b"c"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// let mut ro = ReadOptions::default();
    /// ro.set_iterate_upper_bound(b"c".to_vec());
    /// let keys: Vec<_> = db.iterator_opt(IteratorMode::Start, ro).map(|kv| kv.unwrap().0).collect();
    /// assert_eq!(keys, [Box::from(&b"a"[..]), Box::from(&b"b"[..])]);
    /// ```
    pub fn set_iterate_upper_bound<K: Into<Vec<u8>>>(&mut self, key: K) {
        self.upper_bound = Some(key.into());
    }

    /// Whether blocks read for this read should be cached (RocksDB's
    /// `fill_cache`, default true). The engine keeps no block cache (an
    /// iterator holds only the block it is on, and the operating system's
    /// page cache holds the files), so the setting is accepted and changes
    /// nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut ro = lsm_demo::ReadOptions::default();
    /// ro.fill_cache(false); // a one-off scan: accepted
    /// ```
    pub fn fill_cache(&mut self, _v: bool) {}

    /// Whether reads verify block checksums (RocksDB's `verify_checksums`,
    /// default true). The engine verifies every block it reads whatever the
    /// setting: a damaged block is always `Corruption`, never data.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut ro = lsm_demo::ReadOptions::default();
    /// ro.set_verify_checksums(false); // accepted; blocks are still checked
    /// ```
    pub fn set_verify_checksums(&mut self, _v: bool) {}

    /// Iterators made with these options stay within the prefix of the key
    /// they were positioned at (RocksDB's `prefix_same_as_start`, default
    /// false), in both directions: once the key's prefix, as the database's
    /// prefix extractor takes it
    /// ([`Options::set_prefix_extractor`](crate::Options::set_prefix_extractor)),
    /// differs from the seek key's, the iterator is no longer valid. A seek
    /// to the first or the last key stays within the prefix of the key it
    /// lands on. Bounds still apply.
    ///
    /// Without a prefix extractor, with
    /// [`set_total_order_seek`](Self::set_total_order_seek), or for a seek key
    /// outside the extractor's domain, it does nothing: the iterator goes on
    /// in total order, as in RocksDB. Point reads ignore it.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Direction, IteratorMode, Options, ReadOptions, SliceTransform};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true);
    /// opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(1));
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// for k in [b"a1", b"b1", b"b2", b"c1"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// let mut ro = ReadOptions::default();
    /// ro.set_prefix_same_as_start(true);
    /// let mode = IteratorMode::From(b"b9", Direction::Reverse);
    /// let keys: Vec<_> = db.iterator_opt(mode, ro).map(|kv| kv.unwrap().0).collect();
    /// assert_eq!(keys, [&b"b2"[..], b"b1"].map(Box::from)); // "a1" has another prefix
    /// ```
    pub fn set_prefix_same_as_start(&mut self, v: bool) {
        self.prefix_same_as_start = v;
    }

    /// Iterators made with these options ignore the prefix extractor and
    /// go in total order (RocksDB's `total_order_seek`, default false): it
    /// turns [`set_prefix_same_as_start`](Self::set_prefix_same_as_start)
    /// off. RocksDB needs it to iterate across prefixes with hash-based
    /// memtables or indexes, which this engine does not have.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Direction, IteratorMode, Options, ReadOptions, SliceTransform};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true);
    /// opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(1));
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// for k in [b"a1", b"b1"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// let mut ro = ReadOptions::default();
    /// ro.set_prefix_same_as_start(true);
    /// ro.set_total_order_seek(true);
    /// let mode = IteratorMode::From(b"a", Direction::Forward);
    /// assert_eq!(db.iterator_opt(mode, ro).count(), 2);
    /// ```
    pub fn set_total_order_seek(&mut self, v: bool) {
        self.total_order_seek = v;
    }

    /// Read as of `snapshot`.
    ///
    /// # Examples
    ///
    /// A deleted key is still there as of an earlier snapshot:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, IteratorMode, ReadOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let snap = db.snapshot();
    /// db.delete(b"a").unwrap();
    /// let mut ro = ReadOptions::default();
    /// ro.set_snapshot(&snap);
    /// assert_eq!(db.iterator_opt(IteratorMode::Start, ro).count(), 1);
    /// assert_eq!(db.iterator(IteratorMode::Start).count(), 0);
    /// ```
    pub fn set_snapshot<D: crate::DBAccess>(
        &mut self,
        snapshot: &crate::SnapshotWithThreadMode<'_, D>,
    ) {
        self.snapshot = Some(snapshot.sequence());
    }
}
