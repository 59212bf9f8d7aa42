//! The property names the engine answers, with RocksDB's spelling (the
//! `rocksdb` crate's `properties` module has the same constants). Integer
//! properties answer [`DB::property_int_value`] and, as decimal text,
//! [`DB::property_value`]; `STATS` and `LEVELSTATS` are text only.
//!
//! [`DB::property_int_value`]: crate::DB::property_int_value
//! [`DB::property_value`]: crate::DB::property_value
//!
//! `rocksdb.num-files-at-level<N>` takes a level number from 0 to 6
//! ([`num_files_at_level`]).
//!
//! # Examples
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! use lsm_demo::{DB, properties};
//!
//! let db = DB::open_default(dir.path()).unwrap();
//! db.put(b"k", b"v").unwrap();
//! assert_eq!(db.property_int_value(properties::ESTIMATE_NUM_KEYS).unwrap(), Some(1));
//! ```

/// Entries in the memtables and tables, deletes and overwritten
/// versions included: an upper bound of the live keys.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, properties};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"1").unwrap();
/// db.put(b"k", b"2").unwrap(); // one live key, two versions
/// db.delete(b"gone").unwrap(); // a delete is an entry too
/// assert_eq!(db.property_int_value(properties::ESTIMATE_NUM_KEYS).unwrap(), Some(3));
/// ```
pub const ESTIMATE_NUM_KEYS: &str = "rocksdb.estimate-num-keys";

/// Bytes of the mutable memtable.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, properties};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// let bytes = || db.property_int_value(properties::CUR_SIZE_ACTIVE_MEM_TABLE).unwrap().unwrap();
/// let empty = bytes();
/// for i in 0..100u32 {
///     db.put(i.to_be_bytes(), [0; 1024]).unwrap();
/// }
/// assert!(bytes() >= empty + 100 * 1024); // the values are in it
/// ```
pub const CUR_SIZE_ACTIVE_MEM_TABLE: &str = "rocksdb.cur-size-active-mem-table";

/// Bytes of the mutable and the frozen memtables.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, properties};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// let int = |name: &str| db.property_int_value(name).unwrap().unwrap();
/// // No memtable is frozen: all of them is the active one.
/// assert_eq!(int(properties::NUM_IMMUTABLE_MEM_TABLE), 0);
/// assert_eq!(
///     int(properties::CUR_SIZE_ALL_MEM_TABLES),
///     int(properties::CUR_SIZE_ACTIVE_MEM_TABLE)
/// );
/// ```
pub const CUR_SIZE_ALL_MEM_TABLES: &str = "rocksdb.cur-size-all-mem-tables";

/// Bytes of the mutable and the frozen memtables (the engine does not
/// keep flushed memtables in memory, so the same as
/// [`CUR_SIZE_ALL_MEM_TABLES`]).
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, properties};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// let int = |name: &str| db.property_int_value(name).unwrap().unwrap();
/// assert!(int(properties::SIZE_ALL_MEM_TABLES) > 0);
/// assert_eq!(
///     int(properties::SIZE_ALL_MEM_TABLES),
///     int(properties::CUR_SIZE_ALL_MEM_TABLES)
/// );
/// ```
pub const SIZE_ALL_MEM_TABLES: &str = "rocksdb.size-all-mem-tables";

/// Frozen memtables waiting for a flush.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, properties};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// db.flush().unwrap(); // freezes the memtable and waits for its flush
/// let frozen = db.property_int_value(properties::NUM_IMMUTABLE_MEM_TABLE).unwrap();
/// assert_eq!(frozen, Some(0));
/// assert_eq!(db.stats().immutable_memtables, 0);
/// ```
pub const NUM_IMMUTABLE_MEM_TABLE: &str = "rocksdb.num-immutable-mem-table";

/// Entries in the mutable memtable.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, properties};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// let entries = || db.property_int_value(properties::NUM_ENTRIES_ACTIVE_MEM_TABLE).unwrap();
/// db.put(b"a", b"1").unwrap();
/// db.delete(b"b").unwrap();
/// assert_eq!(entries(), Some(2));
/// db.flush().unwrap(); // a new, empty memtable takes the writes
/// assert_eq!(entries(), Some(0));
/// ```
pub const NUM_ENTRIES_ACTIVE_MEM_TABLE: &str = "rocksdb.num-entries-active-mem-table";

/// Entries in the frozen memtables.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, properties};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// let int = |name: &str| db.property_int_value(name).unwrap().unwrap();
/// assert_eq!(int(properties::NUM_ENTRIES_ACTIVE_MEM_TABLE), 1);
/// assert_eq!(int(properties::NUM_ENTRIES_IMM_MEM_TABLES), 0); // none frozen yet
/// db.flush().unwrap(); // frozen, then written to a table
/// assert_eq!(int(properties::NUM_ENTRIES_IMM_MEM_TABLES), 0);
/// ```
pub const NUM_ENTRIES_IMM_MEM_TABLES: &str = "rocksdb.num-entries-imm-mem-tables";

/// 1 while a frozen memtable waits for a flush, else 0.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, properties};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// db.flush().unwrap(); // returns once the frozen memtable is flushed
/// let pending = db.property_int_value(properties::MEM_TABLE_FLUSH_PENDING).unwrap();
/// assert_eq!(pending, Some(0));
/// ```
pub const MEM_TABLE_FLUSH_PENDING: &str = "rocksdb.mem-table-flush-pending";

/// 1 while a level's compaction score is 1 or more, else 0.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, Options, WaitForCompactOptions, properties};
///
/// let mut opts = Options::default();
/// opts.create_if_missing(true).set_level_zero_file_num_compaction_trigger(2);
/// let db = DB::open(&opts, dir.path()).unwrap();
/// for k in [b"a", b"b"] {
///     db.put(k, b"v").unwrap();
///     db.flush().unwrap(); // the second level-0 file makes a compaction due
/// }
/// db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
/// let pending = db.property_int_value(properties::COMPACTION_PENDING).unwrap();
/// assert_eq!(pending, Some(0));
/// ```
pub const COMPACTION_PENDING: &str = "rocksdb.compaction-pending";

/// Flushes under way.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, WaitForCompactOptions, properties};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// let mut wait = WaitForCompactOptions::default();
/// wait.set_flush(true); // flush, then wait for the background work
/// db.wait_for_compact(&wait).unwrap();
/// assert_eq!(db.property_int_value(properties::NUM_RUNNING_FLUSHES).unwrap(), Some(0));
/// assert_eq!(db.stats().level_files[0], 1); // the flush's table
/// ```
pub const NUM_RUNNING_FLUSHES: &str = "rocksdb.num-running-flushes";

/// Compactions under way.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, Options, WaitForCompactOptions, properties};
///
/// let mut opts = Options::default();
/// opts.create_if_missing(true).set_level_zero_file_num_compaction_trigger(2);
/// let db = DB::open(&opts, dir.path()).unwrap();
/// for k in [b"a", b"b"] {
///     db.put(k, b"v").unwrap();
///     db.flush().unwrap();
/// }
/// db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
/// let running = db.property_int_value(properties::NUM_RUNNING_COMPACTIONS).unwrap();
/// assert_eq!(running, Some(0));
/// assert_eq!(db.stats().level_files[0], 0); // compacted down
/// ```
pub const NUM_RUNNING_COMPACTIONS: &str = "rocksdb.num-running-compactions";

/// Bytes compaction must still rewrite to bring every level within
/// its target (an estimate).
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, Options, WaitForCompactOptions, properties};
///
/// let mut opts = Options::default();
/// opts.create_if_missing(true).set_level_zero_file_num_compaction_trigger(2);
/// let db = DB::open(&opts, dir.path()).unwrap();
/// for k in [b"a", b"b"] {
///     db.put(k, b"v").unwrap();
///     db.flush().unwrap();
/// }
/// // Afterwards every level is within its target.
/// db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
/// let pending = db.property_int_value(properties::ESTIMATE_PENDING_COMPACTION_BYTES);
/// assert_eq!(pending.unwrap(), Some(0));
/// ```
pub const ESTIMATE_PENDING_COMPACTION_BYTES: &str = "rocksdb.estimate-pending-compaction-bytes";

/// Bytes of the live table files.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, properties};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// let size = || db.property_int_value(properties::TOTAL_SST_FILES_SIZE).unwrap().unwrap();
/// db.put(b"k", b"v").unwrap();
/// assert_eq!(size(), 0); // only in the memtable
/// db.flush().unwrap();
/// let mut files = dir.path().read_dir().unwrap().map(|e| e.unwrap().path());
/// let table = files.find(|p| p.extension().is_some_and(|x| x == "sst")).unwrap();
/// assert_eq!(size(), std::fs::metadata(table).unwrap().len());
/// ```
pub const TOTAL_SST_FILES_SIZE: &str = "rocksdb.total-sst-files-size";

/// Bytes of the live table files (no obsolete file is kept open, so
/// the same as [`TOTAL_SST_FILES_SIZE`]).
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, properties};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// db.flush().unwrap();
/// let int = |name: &str| db.property_int_value(name).unwrap().unwrap();
/// assert!(int(properties::LIVE_SST_FILES_SIZE) > 0);
/// assert_eq!(int(properties::LIVE_SST_FILES_SIZE), int(properties::TOTAL_SST_FILES_SIZE));
/// ```
pub const LIVE_SST_FILES_SIZE: &str = "rocksdb.live-sst-files-size";

/// Bytes of the live table files: an upper bound of the live data.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, properties};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// for i in 0..100u32 {
///     db.put(i.to_be_bytes(), [7; 100]).unwrap();
/// }
/// db.flush().unwrap();
/// let live = db.property_int_value(properties::ESTIMATE_LIVE_DATA_SIZE).unwrap().unwrap();
/// assert!(live >= 100 * 104); // at least the keys and values
/// ```
pub const ESTIMATE_LIVE_DATA_SIZE: &str = "rocksdb.estimate-live-data-size";

/// The level that level 0 compacts into.
///
/// # Examples
///
/// A small database compacts level 0 straight into the last level, unless
/// the level targets are static:
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, Options, properties};
///
/// let db = DB::open_default(dir.path().join("dynamic")).unwrap();
/// assert_eq!(db.property_int_value(properties::BASE_LEVEL).unwrap(), Some(6));
///
/// let mut opts = Options::default();
/// opts.create_if_missing(true).set_level_compaction_dynamic_level_bytes(false);
/// let db = DB::open(&opts, dir.path().join("static")).unwrap();
/// assert_eq!(db.property_int_value(properties::BASE_LEVEL).unwrap(), Some(1));
/// ```
pub const BASE_LEVEL: &str = "rocksdb.base-level";

/// Live snapshots.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, properties};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// let snapshots = || db.property_int_value(properties::NUM_SNAPSHOTS).unwrap();
/// assert_eq!(snapshots(), Some(0));
/// let snapshot = db.snapshot();
/// assert_eq!(snapshots(), Some(1));
/// drop(snapshot);
/// assert_eq!(snapshots(), Some(0));
/// ```
pub const NUM_SNAPSHOTS: &str = "rocksdb.num-snapshots";

/// 1 once a background error stopped writes, else 0.
///
/// # Examples
///
/// A failed log write stops writes until [`DB::resume`](crate::DB::resume):
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FaultOp};
/// use lsm_demo::{DB, Options, properties};
/// use std::sync::Arc;
///
/// let fs = FaultInjectionFs::new(); // a file system in memory
/// let mut opts = Options::default();
/// opts.create_if_missing(true);
/// let db = DB::open_with_fs(&opts, "/db", Arc::new(fs.clone())).unwrap();
/// let errors = || db.property_int_value(properties::BACKGROUND_ERRORS).unwrap();
/// assert_eq!(errors(), Some(0));
/// fs.fail_next(FaultOp::Append, 1); // the next log write fails
/// assert!(db.put(b"k", b"v").is_err());
/// assert_eq!(errors(), Some(1));
/// db.resume().unwrap();
/// assert_eq!(errors(), Some(0));
/// ```
pub const BACKGROUND_ERRORS: &str = "rocksdb.background-errors";

/// Per level: files, bytes, score, target, compactions, bytes read and
/// written; then the write stalls (text).
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, properties};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// db.flush().unwrap();
/// let stats = db.property_value(properties::STATS).unwrap().unwrap();
/// let l0 = stats.lines().find(|l| l.trim_start().starts_with("L0")).unwrap();
/// assert_eq!(l0.split_whitespace().nth(1), Some("1")); // the flush's file
/// assert!(stats.contains("Write stalls: 0 slowdowns"));
/// assert_eq!(db.property_int_value(properties::STATS).unwrap(), None); // text only
/// ```
pub const STATS: &str = "rocksdb.stats";

/// Per level: files and megabytes (text).
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, properties};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// db.flush().unwrap();
/// let text = db.property_value(properties::LEVELSTATS).unwrap().unwrap();
/// let mut rows = text.lines().skip(2); // after the header
/// assert_eq!(rows.clone().count(), 7); // levels 0 to 6
/// let l0: Vec<&str> = rows.next().unwrap().split_whitespace().collect();
/// assert_eq!(l0[..2], ["0", "1"]); // level 0 holds the flushed file
/// ```
pub const LEVELSTATS: &str = "rocksdb.levelstats";

/// The name of the property that counts the files on `level`
/// (`rocksdb.num-files-at-level<level>`).
///
/// # Examples
///
/// ```
/// use lsm_demo::properties::num_files_at_level;
/// assert_eq!(num_files_at_level(2), "rocksdb.num-files-at-level2");
/// ```
pub fn num_files_at_level(level: usize) -> String {
    format!("{NUM_FILES_AT_LEVEL_PREFIX}{level}")
}

pub(crate) const NUM_FILES_AT_LEVEL_PREFIX: &str = "rocksdb.num-files-at-level";
