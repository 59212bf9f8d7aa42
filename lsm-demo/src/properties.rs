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
pub const ESTIMATE_NUM_KEYS: &str = "rocksdb.estimate-num-keys";
/// Bytes of the mutable memtable.
pub const CUR_SIZE_ACTIVE_MEM_TABLE: &str = "rocksdb.cur-size-active-mem-table";
/// Bytes of the mutable and the frozen memtables.
pub const CUR_SIZE_ALL_MEM_TABLES: &str = "rocksdb.cur-size-all-mem-tables";
/// Bytes of the mutable and the frozen memtables (the engine does not
/// keep flushed memtables in memory, so the same as
/// [`CUR_SIZE_ALL_MEM_TABLES`]).
pub const SIZE_ALL_MEM_TABLES: &str = "rocksdb.size-all-mem-tables";
/// Frozen memtables waiting for a flush.
pub const NUM_IMMUTABLE_MEM_TABLE: &str = "rocksdb.num-immutable-mem-table";
/// Entries in the mutable memtable.
pub const NUM_ENTRIES_ACTIVE_MEM_TABLE: &str = "rocksdb.num-entries-active-mem-table";
/// Entries in the frozen memtables.
pub const NUM_ENTRIES_IMM_MEM_TABLES: &str = "rocksdb.num-entries-imm-mem-tables";
/// 1 while a frozen memtable waits for a flush, else 0.
pub const MEM_TABLE_FLUSH_PENDING: &str = "rocksdb.mem-table-flush-pending";
/// 1 while a level's compaction score is 1 or more, else 0.
pub const COMPACTION_PENDING: &str = "rocksdb.compaction-pending";
/// Flushes under way.
pub const NUM_RUNNING_FLUSHES: &str = "rocksdb.num-running-flushes";
/// Compactions under way.
pub const NUM_RUNNING_COMPACTIONS: &str = "rocksdb.num-running-compactions";
/// Bytes compaction must still rewrite to bring every level within
/// its target (an estimate).
pub const ESTIMATE_PENDING_COMPACTION_BYTES: &str = "rocksdb.estimate-pending-compaction-bytes";
/// Bytes of the live table files.
pub const TOTAL_SST_FILES_SIZE: &str = "rocksdb.total-sst-files-size";
/// Bytes of the live table files (no obsolete file is kept open, so
/// the same as [`TOTAL_SST_FILES_SIZE`]).
pub const LIVE_SST_FILES_SIZE: &str = "rocksdb.live-sst-files-size";
/// Bytes of the live table files: an upper bound of the live data.
pub const ESTIMATE_LIVE_DATA_SIZE: &str = "rocksdb.estimate-live-data-size";
/// The level that level 0 compacts into.
pub const BASE_LEVEL: &str = "rocksdb.base-level";
/// Live snapshots.
pub const NUM_SNAPSHOTS: &str = "rocksdb.num-snapshots";
/// 1 once a background error stopped writes, else 0.
pub const BACKGROUND_ERRORS: &str = "rocksdb.background-errors";
/// Per level: files, bytes, score, target, compactions, bytes read and
/// written; then the write stalls (text).
pub const STATS: &str = "rocksdb.stats";
/// Per level: files and megabytes (text).
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
