//! The engine's counters: [`DbStats`], with the per-level compaction figures
//! of RocksDB's `rocksdb.stats`.

use crate::manifest::NUM_LEVELS;
use crate::recovery::RecoveryStats;

/// Engine counters.
///
/// # Examples
///
/// A flush moves the memtable's entries into a level-0 table file:
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// db.put(b"a", b"1").unwrap();
/// db.put(b"b", b"2").unwrap();
/// assert_eq!(db.stats().memtable_entries, 2);
/// // One writer never waits for the writes before its own:
/// assert_eq!(db.stats().sequencer_waits.waits(), 0);
/// assert_eq!(db.stats().sequencer_retries, 0);
/// db.flush().unwrap();
/// let stats = db.stats();
/// assert_eq!(stats.memtable_entries, 0);
/// assert_eq!(stats.immutable_memtables, 0);
/// assert_eq!(stats.level_files, [1, 0, 0, 0, 0, 0, 0]);
/// assert!(stats.levels[0].written_bytes > 0); // the flush's table
/// ```
#[derive(Debug, Clone)]
pub struct DbStats {
    /// The write group's counters (groups, members, wake-ups, sizes): the
    /// group syncs the log for `sync` writes; other writes never join it.
    pub write_group: write_group::Stats,
    /// How the writers' waits on the sequencer ended: for the writes
    /// before theirs to become visible (a write returns once every earlier
    /// one is), for a memtable switch, for room among the writes in flight,
    /// and, with the drained log, for the thread appending the records.
    /// Many waits that sleep mean more writers than cores, or writers held
    /// up while they write (preempted, or faulting pages in).
    pub sequencer_waits: ordered_publish::WaitStats,
    /// Reservations of sequence numbers (and log bytes) whose
    /// compare-and-swap another writer's beat, so that they tried again
    /// ([`Sequencer::reservation_retries`](ordered_publish::Sequencer::reservation_retries)):
    /// many mean many cores reserving at once, the reservation word their
    /// bottleneck. Never more than zero with one writer.
    pub sequencer_retries: u64,
    /// Table files per level.
    pub level_files: [usize; NUM_LEVELS],
    /// Each level's size, target and compaction counters.
    pub levels: [LevelStats; NUM_LEVELS],
    /// The level that level 0 compacts into.
    pub base_level: usize,
    /// An estimate of the bytes compaction must still read and write to
    /// bring every level within its target.
    pub pending_compaction_bytes: u64,
    /// How often, and how long, writes were slowed down or stopped.
    pub write_stalls: WriteStallStats,
    /// Bytes appended to the logs since the database was opened.
    pub log_bytes_written: u64,
    /// Frozen memtables waiting for flush.
    pub immutable_memtables: usize,
    /// Bytes of the mutable memtable.
    pub memtable_bytes: usize,
    /// Entries of the mutable memtable.
    pub memtable_entries: usize,
    /// Bytes of arena blocks kept for the next memtables: those of dropped
    /// memtables, and those the flush thread faults in ahead of the writers
    /// (at most a quarter more than the write buffer size; see
    /// [`Options::set_write_buffer_size`](crate::Options::set_write_buffer_size)).
    pub memtable_pool_bytes: usize,
    /// The last visible sequence number.
    pub last_sequence: u64,
    /// What recovery found and did when this database was opened.
    pub recovery: RecoveryStats,
}

impl DbStats {
    /// Bytes written to table files (by flushes and compactions) since the
    /// database was opened.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// assert_eq!(db.stats().table_bytes_written(), 0);
    /// db.flush().unwrap();
    /// assert!(db.stats().table_bytes_written() > 0);
    /// ```
    pub fn table_bytes_written(&self) -> u64 {
        self.levels.iter().map(|l| l.written_bytes).sum()
    }

    /// Bytes written to tables and logs per byte of `user_bytes` (the keys
    /// and values the caller wrote): the write amplification.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// for i in 0..1000u32 {
    ///     db.put(i.to_be_bytes(), [0u8; 100]).unwrap();
    /// }
    /// db.flush().unwrap();
    /// // About twice: once in the log, once in a level-0 table.
    /// let amp = db.stats().write_amplification(1000 * 104);
    /// assert!((1.5..3.0).contains(&amp), "{amp}");
    /// ```
    pub fn write_amplification(&self, user_bytes: u64) -> f64 {
        (self.table_bytes_written() + self.log_bytes_written) as f64 / user_bytes.max(1) as f64
    }
}

/// One level's size and compaction counters. As in RocksDB's
/// `rocksdb.stats`, a compaction counts on its output level; level 0's
/// `written_bytes` are the flushes'.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, Options, WaitForCompactOptions};
///
/// let mut opts = Options::default();
/// opts.create_if_missing(true).set_level_zero_file_num_compaction_trigger(2);
/// let db = DB::open(&opts, dir.path()).unwrap();
/// for v in [b"1", b"2"] {
///     db.put(b"k", v).unwrap();
///     db.flush().unwrap();
/// }
/// db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
/// let stats = db.stats();
/// let base = &stats.levels[stats.base_level];
/// assert_eq!((base.files, base.compactions), (1, 1));
/// assert_eq!(base.read_input_bytes, stats.levels[0].written_bytes);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LevelStats {
    /// Table files on the level.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
    /// The level's target size (0 above the base level and on level 0).
    pub target_bytes: u64,
    /// Its compaction score: a compaction is due at 1 or more.
    pub score: f64,
    /// Compactions into this level (trivial moves included).
    pub compactions: u64,
    /// Bytes those compactions read from the level above (RocksDB's `Rn`).
    pub read_input_bytes: u64,
    /// Bytes they read from this level (RocksDB's `Rnp1`).
    pub read_output_level_bytes: u64,
    /// Bytes written to this level's tables (on level 0: by flushes).
    pub written_bytes: u64,
    /// Bytes moved into this level without a rewrite.
    pub moved_bytes: u64,
    /// Time spent compacting into this level (flushing, on level 0), in
    /// microseconds.
    pub micros: u64,
}

/// Write stalls: a slowdown holds writes to the delayed write rate, a stop
/// holds them until compaction catches up. Each writer held counts once per
/// wait.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// let stalls = db.stats().write_stalls;
/// assert_eq!((stalls.slowdowns, stalls.stops), (0, 0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteStallStats {
    /// Waits because level 0 reached `level0_slowdown_writes_trigger` or
    /// the pending compaction bytes the soft limit.
    pub slowdowns: u64,
    /// Their total, in microseconds.
    pub slowdown_micros: u64,
    /// Waits because level 0 reached `level0_stop_writes_trigger`, the
    /// pending compaction bytes the hard limit, or the frozen memtables
    /// `max_write_buffer_number`.
    pub stops: u64,
    /// Their total, in microseconds.
    pub stop_micros: u64,
}
