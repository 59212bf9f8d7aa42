//! Options, in the shape of the `rocksdb` crate's.

use crate::error::{Error, Result};
use crate::wal::DBRecoveryMode;

mod compaction;
mod comparator;
mod log;
pub(crate) use log::MAX_WAL_STRIPES;
mod read_write;
pub use comparator::CompareFn;
pub(crate) use comparator::{BYTEWISE_NAME, UserComparator};
mod slice_transform;
pub use compaction::{BottommostLevelCompaction, CompactOptions, WaitForCompactOptions};
pub use read_write::{ReadOptions, WriteOptions};
pub use slice_transform::SliceTransform;

/// Largest key the engine accepts (bytes). Longer keys get
/// [`Error::InvalidArgument`].
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, Error, MAX_KEY_LEN};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// db.put(vec![b'k'; MAX_KEY_LEN], b"v").unwrap(); // the longest key
/// let longer = db.put(vec![b'k'; MAX_KEY_LEN + 1], b"v");
/// assert!(matches!(longer, Err(Error::InvalidArgument(_))));
/// ```
pub const MAX_KEY_LEN: usize = 1 << 20;
/// Largest value the engine accepts (bytes).
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, Error, MAX_VALUE_LEN};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// let longer = db.put(b"k", vec![0; MAX_VALUE_LEN + 1]);
/// assert!(matches!(longer, Err(Error::InvalidArgument(_))));
/// assert_eq!(db.get(b"k").unwrap(), None); // nothing was written
/// ```
pub const MAX_VALUE_LEN: usize = 64 << 20;

/// Which memtable representation takes writes.
///
/// # Examples
///
/// Both kinds read back in key order, whatever the write order:
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, IteratorMode, MemtableKind, Options};
///
/// assert_eq!(MemtableKind::default(), MemtableKind::SkipList);
/// let mut opts = Options::default();
/// opts.create_if_missing(true).set_memtable_kind(MemtableKind::Vector);
/// let db = DB::open(&opts, dir.path()).unwrap();
/// for k in [b"c", b"a", b"b"] {
///     db.put(k, b"v").unwrap();
/// }
/// let keys: Vec<_> = db.iterator(IteratorMode::Start).map(|kv| kv.unwrap().0).collect();
/// assert_eq!(keys, [&b"a"[..], b"b", b"c"].map(Box::from));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemtableKind {
    /// The concurrent skiplist: ordered inserts, reads at any time (the default).
    #[default]
    SkipList,
    /// The vector memtable: unordered appends, sorted once when read or
    /// flushed. Best for bulk loads.
    Vector,
}

/// Options for opening a database.
///
/// # Examples
///
/// ```
/// use lsm_demo::{MemtableKind, Options};
///
/// let mut opts = Options::default();
/// opts.create_if_missing(true);
/// opts.set_write_buffer_size(8 << 20);
/// opts.set_memtable_kind(MemtableKind::Vector);
/// assert!(opts.validate().is_ok());
/// ```
#[derive(Debug, Clone)]
pub struct Options {
    pub(crate) create_if_missing: bool,
    pub(crate) error_if_exists: bool,
    pub(crate) write_buffer_size: usize,
    pub(crate) max_write_buffer_number: usize,
    pub(crate) memtable_kind: MemtableKind,
    pub(crate) allow_concurrent_memtable_write: bool,
    pub(crate) unordered_write: bool,
    pub(crate) group_commit_wait: bool,
    pub(crate) level0_compaction_trigger: usize,
    pub(crate) level0_slowdown_writes_trigger: usize,
    pub(crate) level0_stop_writes_trigger: usize,
    /// `None`: derived from the write buffer and level-0 trigger.
    pub(crate) max_bytes_for_level_base: Option<u64>,
    pub(crate) max_bytes_for_level_multiplier: f64,
    pub(crate) level_compaction_dynamic_level_bytes: bool,
    pub(crate) target_file_size_multiplier: u32,
    pub(crate) max_background_jobs: usize,
    pub(crate) soft_pending_compaction_bytes_limit: u64,
    pub(crate) hard_pending_compaction_bytes_limit: u64,
    pub(crate) delayed_write_rate: u64,
    pub(crate) block_size: usize,
    pub(crate) bloom_bits_per_key: usize,
    /// `None`: the write buffer size.
    pub(crate) target_file_size: Option<u64>,
    pub(crate) wal_recovery_mode: DBRecoveryMode,
    pub(crate) allow_mmap_writes: bool,
    pub(crate) allow_concurrent_log_write: bool,
    pub(crate) wal_stripes: usize,
    pub(crate) wal_bytes_per_sync: u64,
    pub(crate) write_group: write_group::Options,
    pub(crate) max_bgerror_resume_count: u32,
    pub(crate) bgerror_resume_retry_interval: std::time::Duration,
    pub(crate) comparator: UserComparator,
    /// Iterators with `prefix_same_as_start` stay within a prefix it takes.
    pub(crate) prefix_extractor: Option<SliceTransform>,
}

impl Default for Options {
    fn default() -> Self {
        use compaction::CompactionDefaults as D;
        Options {
            create_if_missing: false,
            error_if_exists: false,
            write_buffer_size: 64 << 20,
            max_write_buffer_number: 2,
            memtable_kind: MemtableKind::SkipList,
            allow_concurrent_memtable_write: true,
            unordered_write: false,
            group_commit_wait: true,
            level0_compaction_trigger: D::LEVEL0_FILE_NUM_COMPACTION_TRIGGER,
            level0_slowdown_writes_trigger: D::LEVEL0_SLOWDOWN_WRITES_TRIGGER,
            level0_stop_writes_trigger: D::LEVEL0_STOP_WRITES_TRIGGER,
            max_bytes_for_level_base: None,
            max_bytes_for_level_multiplier: D::MAX_BYTES_FOR_LEVEL_MULTIPLIER,
            level_compaction_dynamic_level_bytes: true,
            target_file_size_multiplier: D::TARGET_FILE_SIZE_MULTIPLIER,
            max_background_jobs: D::MAX_BACKGROUND_JOBS,
            soft_pending_compaction_bytes_limit: D::SOFT_PENDING_COMPACTION_BYTES_LIMIT,
            hard_pending_compaction_bytes_limit: D::HARD_PENDING_COMPACTION_BYTES_LIMIT,
            delayed_write_rate: D::DELAYED_WRITE_RATE,
            block_size: 4096,
            bloom_bits_per_key: 10,
            target_file_size: None,
            wal_recovery_mode: DBRecoveryMode::PointInTime,
            allow_mmap_writes: false,
            allow_concurrent_log_write: true,
            wal_stripes: log::DEFAULT_WAL_STRIPES,
            wal_bytes_per_sync: 1 << 20,
            write_group: write_group::Options::default(),
            max_bgerror_resume_count: i32::MAX as u32,
            bgerror_resume_retry_interval: std::time::Duration::from_secs(1),
            comparator: UserComparator::default(),
            prefix_extractor: None,
        }
    }
}

impl Options {
    /// Create the directory and an empty database if none exists.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Error, Options};
    ///
    /// let path = dir.path().join("db");
    /// let mut opts = Options::default();
    /// assert!(matches!(DB::open(&opts, &path), Err(Error::NotFound(_))));
    /// opts.create_if_missing(true);
    /// let _db = DB::open(&opts, &path).unwrap();
    /// assert!(path.is_dir());
    /// ```
    pub fn create_if_missing(&mut self, v: bool) -> &mut Self {
        self.create_if_missing = v;
        self
    }
    /// Fail `open` if a database already exists.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Error, Options};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true).set_error_if_exists(true);
    /// drop(DB::open(&opts, dir.path()).unwrap()); // creates the database
    /// let again = DB::open(&opts, dir.path());
    /// assert!(matches!(again, Err(Error::InvalidArgument(_))));
    /// ```
    pub fn set_error_if_exists(&mut self, v: bool) -> &mut Self {
        self.error_if_exists = v;
        self
    }
    /// Bytes of memtable (measured from its arena) before it is frozen and
    /// flushed. At least 64 KiB. Once a flushed memtable is dropped, the
    /// database keeps its arena's memory, up to a quarter more than this,
    /// for the memtables after it (so they write into pages already
    /// mapped), and releases it on close. Once writes start, the flush
    /// thread keeps a quarter of this (at least one arena block and at most
    /// four, so at most 16 MiB) faulted in ahead of them there whenever the
    /// dropped memtables' memory runs low.
    ///
    /// # Examples
    ///
    /// A full memtable is frozen and a new one takes the later writes:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true).set_write_buffer_size(64 << 10);
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// for i in 0..200u32 {
    ///     db.put(i.to_be_bytes(), [7; 1024]).unwrap();
    /// }
    /// assert!(db.stats().memtable_entries < 200);
    /// assert_eq!(db.get(0u32.to_be_bytes()).unwrap().unwrap().len(), 1024);
    ///
    /// opts.set_write_buffer_size(1024); // below 64 KiB
    /// assert!(opts.validate().is_err());
    /// ```
    pub fn set_write_buffer_size(&mut self, bytes: usize) -> &mut Self {
        self.write_buffer_size = bytes;
        self
    }
    /// Memtables (the mutable one and the frozen ones waiting for flush)
    /// kept in memory before writes stall. At least 2.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::{Error, Options};
    ///
    /// let mut opts = Options::default();
    /// opts.set_max_write_buffer_number(4);
    /// assert!(opts.validate().is_ok());
    /// opts.set_max_write_buffer_number(1); // no room for a memtable being flushed
    /// assert!(matches!(opts.validate(), Err(Error::InvalidArgument(_))));
    /// ```
    pub fn set_max_write_buffer_number(&mut self, n: usize) -> &mut Self {
        self.max_write_buffer_number = n;
        self
    }
    /// Which memtable takes writes.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, MemtableKind, Options};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true).set_memtable_kind(MemtableKind::Vector);
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// db.put(b"k", b"1").unwrap();
    /// db.put(b"k", b"2").unwrap();
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"2"[..]));
    /// ```
    pub fn set_memtable_kind(&mut self, kind: MemtableKind) -> &mut Self {
        self.memtable_kind = kind;
        self
    }
    /// Lets writers insert into the memtable at the same time, each on its
    /// own thread (the default). Off, each insert takes a lock, so inserts
    /// run one at a time; writes become visible in the same order either
    /// way. The leader of a group of `sync` writes inserts its members'
    /// batches itself whichever is set. `unordered_write` needs it on.
    ///
    /// # Examples
    ///
    /// With it off, the results are the same:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true).set_allow_concurrent_memtable_write(false);
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// std::thread::scope(|s| {
    ///     for t in 0..4u8 {
    ///         let db = &db;
    ///         s.spawn(move || db.put([t], [t]).unwrap());
    ///     }
    /// });
    /// assert_eq!(db.get([3]).unwrap().as_deref(), Some(&[3][..]));
    /// assert_eq!(db.stats().last_sequence, 4);
    /// ```
    pub fn set_allow_concurrent_memtable_write(&mut self, v: bool) -> &mut Self {
        self.allow_concurrent_memtable_write = v;
        self
    }
    /// RocksDB's `unordered_write`: sequence numbers and the log stay in
    /// order, but an unsynced write's numbers are published before its
    /// memtable insert ends, so no write waits for such an insert. A reader
    /// may then see part of a batch still being inserted, and a snapshot
    /// may later gain keys older than it; a write is still visible to its
    /// writer once `put` returns.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true).set_unordered_write(true);
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..])); // own write visible
    ///
    /// // It needs concurrent inserts.
    /// opts.set_allow_concurrent_memtable_write(false);
    /// assert!(opts.validate().is_err());
    /// ```
    pub fn set_unordered_write(&mut self, v: bool) -> &mut Self {
        self.unordered_write = v;
        self
    }
    /// Let the leader of a group of `sync` writes wait, asleep, for the
    /// writers that were recently in flight to queue behind it before it
    /// syncs: at most half the measured `fdatasync` time, and never when it
    /// writes alone. Concurrent sync writers then share one sync instead of
    /// splitting into two groups that sync in turn. Default: on. RocksDB has
    /// no such wait; see `write_group::Commit::gather_window`.
    ///
    /// # Examples
    ///
    /// With the wait off, no group leader ever waits for more writers:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options, WriteOptions};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true).set_group_commit_wait(false);
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// let mut sync = WriteOptions::default();
    /// sync.set_sync(true);
    /// std::thread::scope(|s| {
    ///     for t in 0..2u8 {
    ///         let (db, sync) = (&db, &sync);
    ///         s.spawn(move || db.put_opt([t], b"v", sync).unwrap());
    ///     }
    /// });
    /// assert_eq!(db.stats().write_group.gather_waits, 0);
    /// ```
    pub fn set_group_commit_wait(&mut self, v: bool) -> &mut Self {
        self.group_commit_wait = v;
        self
    }
    /// Uncompressed size of a table file's data blocks.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true).set_block_size(256); // the smallest allowed
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// for i in 0..100u8 {
    ///     db.put([i], [i; 100]).unwrap();
    /// }
    /// db.flush().unwrap(); // a table of many small blocks
    /// assert_eq!(db.get([42]).unwrap(), Some(vec![42; 100]));
    ///
    /// opts.set_block_size(255);
    /// assert!(opts.validate().is_err());
    /// ```
    pub fn set_block_size(&mut self, bytes: usize) -> &mut Self {
        self.block_size = bytes;
        self
    }
    /// Bits per key of each table file's bloom filter (0 turns filters off).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true).set_bloom_bits_per_key(0); // no filters
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// db.flush().unwrap();
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    /// assert_eq!(db.get(b"absent").unwrap(), None);
    ///
    /// opts.set_bloom_bits_per_key(65);
    /// assert!(opts.validate().is_err());
    /// ```
    pub fn set_bloom_bits_per_key(&mut self, bits: usize) -> &mut Self {
        self.bloom_bits_per_key = bits;
        self
    }
    /// Orders keys with `compare_fn` instead of bytewise, as the `rocksdb`
    /// crate's `set_comparator` does. Iterators, seeks, bounds,
    /// `compact_range` and the files' key ranges follow this order.
    /// `compare_fn` must be a total order that says `Equal` only for
    /// identical keys. A panic in it during a write reaches that writer,
    /// and writes then stop (`Error::BackgroundError`, which `resume`
    /// refuses) until the database is reopened: that batch may be partly
    /// visible.
    ///
    /// The database records `name` when it is created, and `open` refuses
    /// (`Error::InvalidArgument`) a database created under another name:
    /// its files are sorted in another order. Bytewise is
    /// `"leveldb.BytewiseComparator"`, RocksDB's name for it. Range
    /// deletions (`delete_range`) need the bytewise order here: with
    /// another they fail with `Error::NotSupported`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, IteratorMode, Options};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true);
    /// opts.set_comparator("reverse", Box::new(|a: &[u8], b: &[u8]| b.cmp(a)));
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// for k in [b"a", b"c", b"b"] {
    ///     db.put(k, b"").unwrap();
    /// }
    /// let keys: Vec<_> = db.iterator(IteratorMode::Start).map(|kv| kv.unwrap().0).collect();
    /// assert_eq!(keys, [&b"c"[..], b"b", b"a"].map(Box::from));
    /// drop(db);
    ///
    /// // Another order cannot open it.
    /// assert!(DB::open(&Options::default(), dir.path()).is_err());
    /// ```
    pub fn set_comparator(
        &mut self,
        name: impl Into<String>,
        compare_fn: Box<CompareFn>,
    ) -> &mut Self {
        self.set_key_comparator(name, compare_fn)
    }

    /// [`set_comparator`](Self::set_comparator) with any
    /// [`key_comparator::Comparator`], the trait this workspace's memtables
    /// share.
    ///
    /// # Examples
    ///
    /// ```
    /// use key_comparator::Comparator;
    /// use lsm_demo::Options;
    /// use std::cmp::Ordering;
    ///
    /// /// Keys as little-endian `u32`s.
    /// struct LittleEndian;
    /// impl Comparator for LittleEndian {
    ///     fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
    ///         let n = |k: &[u8]| u32::from_le_bytes(k.try_into().unwrap_or([0xff; 4]));
    ///         n(a).cmp(&n(b)).then_with(|| a.cmp(b))
    ///     }
    /// }
    /// let mut opts = Options::default();
    /// opts.set_key_comparator("little-endian-u32", LittleEndian);
    /// ```
    pub fn set_key_comparator(
        &mut self,
        name: impl Into<String>,
        comparator: impl key_comparator::Comparator + Send + Sync + 'static,
    ) -> &mut Self {
        self.comparator = UserComparator::custom(name.into(), Box::new(comparator));
        self
    }

    /// The prefix extractor (none by default): iterators made with
    /// [`ReadOptions::set_prefix_same_as_start`] (as
    /// [`DB::prefix_iterator`](crate::DB::prefix_iterator)'s are) stop once
    /// the key's prefix differs from the seek key's. Without one, such
    /// iterators go on in total order, as in RocksDB.
    ///
    /// Only iteration uses it: RocksDB also builds prefix bloom filters
    /// from it, which this engine does not (its filters are of whole keys,
    /// for point reads).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options, SliceTransform};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true);
    /// opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(1));
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// for k in [b"a1", b"a2", b"b1"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// assert_eq!(db.prefix_iterator(b"a").count(), 2);
    /// ```
    pub fn set_prefix_extractor(&mut self, prefix_extractor: SliceTransform) -> &mut Self {
        self.prefix_extractor = Some(prefix_extractor);
        self
    }
    /// The tuning of the write group in which `sync` writers gather: its
    /// leader syncs the log once for all of them.
    ///
    /// # Examples
    ///
    /// Groups of one member: every sync writer that finds its record not
    /// yet synced syncs on its own.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options, WriteOptions};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true)
    ///     .set_write_group_options(write_group::Options::new().with_max_group_members(1));
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// let mut sync = WriteOptions::default();
    /// sync.set_sync(true);
    /// std::thread::scope(|s| {
    ///     for t in 0..4u8 {
    ///         let (db, sync) = (&db, &sync);
    ///         s.spawn(move || (0..10u8).for_each(|i| db.put_opt([t, i], b"v", sync).unwrap()));
    ///     }
    /// });
    /// let stats = db.stats().write_group;
    /// assert!(stats.members >= 1 && stats.members <= 40);
    /// assert_eq!(stats.groups, stats.members);
    /// ```
    pub fn set_write_group_options(&mut self, o: write_group::Options) -> &mut Self {
        self.write_group = o;
        self
    }

    /// The write group's tuning (see [`Options::set_write_group_options`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let opts = lsm_demo::Options::default();
    /// assert_eq!(opts.write_group_options().barge_spins(), write_group::Options::default().barge_spins());
    /// ```
    pub fn write_group_options(&self) -> &write_group::Options {
        &self.write_group
    }

    /// How many times the database retries, on its own, after a background
    /// step (a flush, a compaction, a log write) failed for want of space
    /// (RocksDB's `max_bgerror_resume_count`; default `i32::MAX`, 0 turns
    /// automatic resumption off; [`DB::resume`](crate::DB::resume) always
    /// works).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut opts = lsm_demo::Options::default();
    /// opts.set_max_bgerror_resume_count(0); // resume only when asked
    /// assert!(opts.validate().is_ok());
    /// ```
    pub fn set_max_bgerror_resume_count(&mut self, count: i32) -> &mut Self {
        self.max_bgerror_resume_count = count.max(0) as u32;
        self
    }

    /// The wait between two automatic tries, in microseconds (RocksDB's
    /// `bgerror_resume_retry_interval`; default one second).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut opts = lsm_demo::Options::default();
    /// opts.set_bgerror_resume_retry_interval(100_000); // every 100 ms
    /// ```
    pub fn set_bgerror_resume_retry_interval(&mut self, micros: u64) -> &mut Self {
        self.bgerror_resume_retry_interval = std::time::Duration::from_micros(micros);
        self
    }

    /// Checks every value; `open` calls it.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Error, Options};
    ///
    /// let mut opts = Options::default();
    /// assert!(opts.validate().is_ok());
    /// opts.create_if_missing(true).set_block_size(1);
    /// let Err(Error::InvalidArgument(why)) = opts.validate() else { panic!() };
    /// assert!(why.contains("block_size 1"));
    /// assert!(DB::open(&opts, dir.path()).is_err()); // open checks too
    /// ```
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidArgument(m));
        if self.write_buffer_size < 64 << 10 || self.write_buffer_size > 1 << 40 {
            return bad(format!(
                "write_buffer_size {} is outside [64 KiB, 1 TiB]",
                self.write_buffer_size
            ));
        }
        if self.max_write_buffer_number < 2 || self.max_write_buffer_number > 1024 {
            return bad(format!(
                "max_write_buffer_number {} is outside [2, 1024]",
                self.max_write_buffer_number
            ));
        }
        self.validate_compaction().or_else(bad)?;
        if self.block_size < 256 || self.block_size > 64 << 20 {
            return bad(format!(
                "block_size {} is outside [256, 64 MiB]",
                self.block_size
            ));
        }
        if self.bloom_bits_per_key > 64 {
            return bad(format!(
                "bloom_bits_per_key {} is above 64",
                self.bloom_bits_per_key
            ));
        }
        if self.unordered_write && !self.allow_concurrent_memtable_write {
            return bad("unordered_write needs allow_concurrent_memtable_write".into());
        }
        if self.allow_mmap_writes && self.wal_recovery_mode == DBRecoveryMode::AbsoluteConsistency {
            return bad(
                "allow_mmap_writes leaves zeros after the log's last record when the process dies, \
                 which the AbsoluteConsistency recovery mode refuses"
                    .into(),
            );
        }
        if self.wal_stripes > MAX_WAL_STRIPES {
            return bad(format!(
                "wal_stripes {} is above {MAX_WAL_STRIPES}",
                self.wal_stripes
            ));
        }
        // A group is one log record: its bytes and header must fit one.
        let group_limit = crate::wal::MAX_RECORD_LEN - crate::batch::GROUP_HEADER_LEN;
        if self.write_group.max_group_bytes() > group_limit {
            return bad(format!(
                "the write group's max_group_bytes {} is above {group_limit}, the most one log record holds",
                self.write_group.max_group_bytes()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
