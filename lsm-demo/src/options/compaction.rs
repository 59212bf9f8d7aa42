//! The options of leveled compaction and of write stalls, with RocksDB's
//! names and defaults.

use super::Options;

/// What the options of this file default to (RocksDB's defaults, with
/// `level_compaction_dynamic_level_bytes` on as since RocksDB 8.4).
pub(super) struct CompactionDefaults;

impl CompactionDefaults {
    pub(super) const MAX_BYTES_FOR_LEVEL_MULTIPLIER: f64 = 10.0;
    pub(super) const TARGET_FILE_SIZE_MULTIPLIER: u32 = 1;
    pub(super) const LEVEL0_FILE_NUM_COMPACTION_TRIGGER: usize = 4;
    pub(super) const LEVEL0_SLOWDOWN_WRITES_TRIGGER: usize = 20;
    pub(super) const LEVEL0_STOP_WRITES_TRIGGER: usize = 36;
    pub(super) const SOFT_PENDING_COMPACTION_BYTES_LIMIT: u64 = 64 << 30;
    pub(super) const HARD_PENDING_COMPACTION_BYTES_LIMIT: u64 = 256 << 30;
    pub(super) const DELAYED_WRITE_RATE: u64 = 16 << 20;
    pub(super) const MAX_BACKGROUND_JOBS: usize = 2;
}

impl Options {
    /// Level-0 files that trigger a compaction into the level below.
    ///
    /// # Examples
    ///
    /// With a trigger of 2, the second flushed file starts a compaction of both
    /// out of level 0 (closing the database waits for a compaction under way):
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options, WaitForCompactOptions};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true).set_level_zero_file_num_compaction_trigger(2);
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// for k in [b"a", b"b"] {
    ///     db.put(k, b"v").unwrap();
    ///     db.flush().unwrap(); // one level-0 file each
    /// }
    /// db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    /// assert_eq!(db.stats().level_files[0], 0);
    /// assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn set_level_zero_file_num_compaction_trigger(&mut self, n: usize) -> &mut Self {
        self.level0_compaction_trigger = n;
        self
    }
    /// Level-0 files at which writes slow down to
    /// [`set_delayed_write_rate`](Self::set_delayed_write_rate) until
    /// compaction catches up. A value above the stop trigger acts as the
    /// stop trigger: writes stop at the stop trigger (RocksDB instead
    /// raises its stop trigger to this value).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options, WaitForCompactOptions};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true)
    ///     .set_level_zero_file_num_compaction_trigger(2)
    ///     .set_level_zero_slowdown_writes_trigger(3)
    ///     .set_level_zero_stop_writes_trigger(6);
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// assert_eq!(db.stats().write_stalls.slowdowns, 0);
    /// ```
    pub fn set_level_zero_slowdown_writes_trigger(&mut self, n: usize) -> &mut Self {
        self.level0_slowdown_writes_trigger = n;
        self
    }
    /// Level-0 files at which writes stop until compaction catches up.
    ///
    /// # Examples
    ///
    /// It must exceed the compaction trigger, or writes would stop before a
    /// compaction starts:
    ///
    /// ```
    /// use lsm_demo::Options;
    ///
    /// let mut opts = Options::default();
    /// opts.set_level_zero_file_num_compaction_trigger(8);
    /// opts.set_level_zero_stop_writes_trigger(8);
    /// assert!(opts.validate().is_err());
    /// opts.set_level_zero_stop_writes_trigger(20);
    /// assert!(opts.validate().is_ok());
    /// ```
    pub fn set_level_zero_stop_writes_trigger(&mut self, n: usize) -> &mut Self {
        self.level0_stop_writes_trigger = n;
        self
    }
    /// Size at which a compaction starts a new file on level 1; level `n`
    /// files are `multiplier^(n-1)` times larger (see
    /// [`set_target_file_size_multiplier`](Self::set_target_file_size_multiplier)).
    /// Default: `write_buffer_size` (64 MiB with the default memtables,
    /// RocksDB's default), so that a level holds many files and a
    /// compaction out of it rewrites a slice of the level below, not all of
    /// it.
    ///
    /// # Examples
    ///
    /// A compaction of two overlapping 200 KiB tables, with 64 KiB files,
    /// writes several files:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options, WaitForCompactOptions};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true)
    ///     .set_target_file_size_base(64 << 10)
    ///     .set_level_zero_file_num_compaction_trigger(2);
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// for round in 0..2u8 {
    ///     for i in 0..200u32 {
    ///         db.put(i.to_be_bytes(), [round; 1024]).unwrap();
    ///     }
    ///     db.flush().unwrap();
    /// }
    /// db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    /// assert!(db.stats().level_files[1..].iter().sum::<usize>() >= 3);
    /// ```
    pub fn set_target_file_size_base(&mut self, bytes: u64) -> &mut Self {
        self.target_file_size = Some(bytes);
        self
    }
    /// How much larger each level's files are than the level above's
    /// (default 1: the same size on every level).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::Options;
    ///
    /// let mut opts = Options::default();
    /// opts.set_target_file_size_multiplier(2);
    /// assert!(opts.validate().is_ok());
    /// opts.set_target_file_size_multiplier(0);
    /// assert!(opts.validate().is_err());
    /// ```
    pub fn set_target_file_size_multiplier(&mut self, multiplier: u32) -> &mut Self {
        self.target_file_size_multiplier = multiplier;
        self
    }
    /// The size the level that level 0 compacts into may reach before it
    /// is compacted into the level below. Default: what level 0 holds when
    /// it compacts, `write_buffer_size` times
    /// `level0_file_num_compaction_trigger` (256 MiB with the default
    /// memtables, RocksDB's default), as RocksDB's tuning guide advises: a
    /// base level much larger than level 0 rewrites itself for every
    /// level-0 compaction, and the write rate falls as the database grows.
    ///
    /// # Examples
    ///
    /// Small levels push data down the tree early:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options, WaitForCompactOptions};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true)
    ///     .set_write_buffer_size(64 << 10)
    ///     .set_target_file_size_base(64 << 10)
    ///     .set_max_bytes_for_level_base(128 << 10);
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// for i in 0..20_000u32 {
    ///     db.put(i.wrapping_mul(2_654_435_761).to_be_bytes(), [7; 100]).unwrap();
    /// }
    /// db.flush().unwrap();
    /// db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    /// let levels = db.stats().level_files;
    /// assert!(levels[1..].iter().filter(|&&n| n > 0).count() >= 2, "{levels:?}");
    /// ```
    pub fn set_max_bytes_for_level_base(&mut self, bytes: u64) -> &mut Self {
        self.max_bytes_for_level_base = Some(bytes);
        self
    }
    /// How much larger each level's target is than the one above it
    /// (default 10).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::Options;
    ///
    /// let mut opts = Options::default();
    /// opts.set_max_bytes_for_level_multiplier(8.0);
    /// assert!(opts.validate().is_ok());
    /// opts.set_max_bytes_for_level_multiplier(1.0);
    /// assert!(opts.validate().is_err());
    /// ```
    pub fn set_max_bytes_for_level_multiplier(&mut self, multiplier: f64) -> &mut Self {
        self.max_bytes_for_level_multiplier = multiplier;
        self
    }
    /// Compute the level targets from the bottom (default on, as in
    /// RocksDB since 8.4): the last level's target is its size, each level
    /// above a multiplier smaller, and level 0 compacts into the first level
    /// whose target reaches
    /// [`set_max_bytes_for_level_base`](Self::set_max_bytes_for_level_base).
    /// Off, level 1's target is the base and each level below a multiplier
    /// larger. Either way, most data lives on the last level, so the bytes
    /// written per byte of user data stay bounded as the database grows.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options, WaitForCompactOptions};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true)
    ///     .set_level_compaction_dynamic_level_bytes(false)
    ///     .set_level_zero_file_num_compaction_trigger(1);
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// db.flush().unwrap();
    /// db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    /// assert_eq!(db.stats().level_files[1], 1); // level 1 is the base
    /// ```
    pub fn set_level_compaction_dynamic_level_bytes(&mut self, v: bool) -> &mut Self {
        self.level_compaction_dynamic_level_bytes = v;
        self
    }
    /// Background threads for flushes and compactions (default 2): one
    /// flushes, the others compact (at least one, so 1 still starts two
    /// threads), so a flush never waits behind a long compaction, and
    /// compactions of disjoint key ranges run together.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::Options;
    ///
    /// let mut opts = Options::default();
    /// opts.set_max_background_jobs(4); // one flush thread, three compacting
    /// assert!(opts.validate().is_ok());
    /// opts.set_max_background_jobs(0);
    /// assert!(opts.validate().is_err());
    /// ```
    pub fn set_max_background_jobs(&mut self, jobs: usize) -> &mut Self {
        self.max_background_jobs = jobs;
        self
    }
    /// Estimated bytes waiting for compaction at which writes slow down
    /// (default 64 GiB; 0 turns the check off).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::Options;
    ///
    /// let mut opts = Options::default();
    /// opts.set_soft_pending_compaction_bytes_limit(1 << 30)
    ///     .set_hard_pending_compaction_bytes_limit(4 << 30);
    /// assert!(opts.validate().is_ok());
    /// ```
    pub fn set_soft_pending_compaction_bytes_limit(&mut self, bytes: u64) -> &mut Self {
        self.soft_pending_compaction_bytes_limit = bytes;
        self
    }
    /// Estimated bytes waiting for compaction at which writes stop (default
    /// 256 GiB; 0 turns the check off).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::Options;
    ///
    /// let mut opts = Options::default();
    /// opts.set_hard_pending_compaction_bytes_limit(0); // never stop on it
    /// assert!(opts.validate().is_ok());
    /// ```
    pub fn set_hard_pending_compaction_bytes_limit(&mut self, bytes: u64) -> &mut Self {
        self.hard_pending_compaction_bytes_limit = bytes;
        self
    }
    /// The rate, in bytes of memtable a second, writes are held to while
    /// slowed down (default 16 MiB/s, RocksDB's).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::Options;
    ///
    /// let mut opts = Options::default();
    /// opts.set_delayed_write_rate(64 << 20);
    /// assert!(opts.validate().is_ok());
    /// opts.set_delayed_write_rate(0);
    /// assert!(opts.validate().is_err());
    /// ```
    pub fn set_delayed_write_rate(&mut self, bytes_per_second: u64) -> &mut Self {
        self.delayed_write_rate = bytes_per_second;
        self
    }

    /// The checks of [`Options::validate`] on the options of this file.
    pub(super) fn validate_compaction(&self) -> Result<(), String> {
        if self.level0_compaction_trigger < 1 {
            return Err("level0_file_num_compaction_trigger must be at least 1".into());
        }
        if self.level0_stop_writes_trigger <= self.level0_compaction_trigger {
            return Err(format!(
                "level0_stop_writes_trigger {} must exceed the compaction trigger {}",
                self.level0_stop_writes_trigger, self.level0_compaction_trigger
            ));
        }
        if self.target_file_size.is_some_and(|b| b < 64 << 10) {
            return Err(format!(
                "target_file_size_base {} is below 64 KiB",
                self.target_file_size(1)
            ));
        }
        if self.target_file_size_multiplier < 1 {
            return Err("target_file_size_multiplier must be at least 1".into());
        }
        if self.max_bytes_for_level_base.is_some_and(|b| b < 64 << 10) {
            return Err(format!(
                "max_bytes_for_level_base {} is below 64 KiB",
                self.level_base_bytes()
            ));
        }
        let m = self.max_bytes_for_level_multiplier;
        if !(m > 1.0 && m <= 1000.0) {
            return Err(format!(
                "max_bytes_for_level_multiplier {m} is outside (1, 1000]"
            ));
        }
        if !(1..=64).contains(&self.max_background_jobs) {
            return Err(format!(
                "max_background_jobs {} is outside [1, 64]",
                self.max_background_jobs
            ));
        }
        if self.delayed_write_rate == 0 {
            return Err("delayed_write_rate must be above 0".into());
        }
        Ok(())
    }

    /// The level-0 file count at which writes slow down: the slowdown
    /// trigger, at most the stop trigger.
    pub(crate) fn level0_slowdown(&self) -> usize {
        self.level0_slowdown_writes_trigger
            .min(self.level0_stop_writes_trigger)
    }

    /// The base level's target (see
    /// [`set_max_bytes_for_level_base`](Self::set_max_bytes_for_level_base)).
    pub(crate) fn level_base_bytes(&self) -> u64 {
        self.max_bytes_for_level_base.unwrap_or(
            (self.write_buffer_size as u64).saturating_mul(self.level0_compaction_trigger as u64),
        )
    }

    /// Where a compaction into `level` cuts its output files.
    pub(crate) fn target_file_size(&self, level: usize) -> u64 {
        let steps = level.saturating_sub(1) as u32;
        self.target_file_size
            .unwrap_or(self.write_buffer_size as u64)
            .saturating_mul(u64::from(self.target_file_size_multiplier).saturating_pow(steps))
    }
}

/// Options of [`DB::wait_for_compact`](crate::DB::wait_for_compact), with
/// the `rocksdb` crate's names.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, Options, WaitForCompactOptions};
///
/// let mut opts = Options::default();
/// opts.create_if_missing(true);
/// let db = DB::open(&opts, dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// let mut wait = WaitForCompactOptions::default();
/// wait.set_flush(true).set_timeout(10_000_000); // flush first; at most 10 s
/// db.wait_for_compact(&wait).unwrap();
/// assert_eq!(db.stats().memtable_entries, 0);
/// ```
#[derive(Debug, Clone, Default)]
pub struct WaitForCompactOptions {
    pub(crate) flush: bool,
    pub(crate) timeout: Option<std::time::Duration>,
}

impl WaitForCompactOptions {
    /// Flush the memtables before waiting (default off).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut wait = lsm_demo::WaitForCompactOptions::default();
    /// wait.set_flush(true);
    /// ```
    pub fn set_flush(&mut self, v: bool) -> &mut Self {
        self.flush = v;
        self
    }
    /// Give up with [`Error::TimedOut`](crate::Error::TimedOut) after this
    /// many microseconds (0, the default: wait as long as it takes).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut wait = lsm_demo::WaitForCompactOptions::default();
    /// wait.set_timeout(5_000_000); // five seconds
    /// ```
    pub fn set_timeout(&mut self, microseconds: u64) -> &mut Self {
        self.timeout = (microseconds > 0).then(|| std::time::Duration::from_micros(microseconds));
        self
    }
}

/// Whether a manual compaction ([`DB::compact_range_opt`]) also rewrites
/// the files of the last level in its range (the `rocksdb` crate's names).
///
/// [`DB::compact_range_opt`]: crate::DB::compact_range_opt
///
/// # Examples
///
/// ```
/// use lsm_demo::{BottommostLevelCompaction, CompactOptions};
///
/// let mut opts = CompactOptions::default();
/// opts.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BottommostLevelCompaction {
    /// Leave the last level as it is.
    Skip,
    /// Rewrite the last level only with a compaction filter; the engine has
    /// none, so the same as `Skip` (RocksDB's default).
    #[default]
    IfHaveCompactionFilter,
    /// Rewrite the last level's files in the range too: drops the versions
    /// and tombstones there that no snapshot needs any more.
    Force,
    /// As `Force` (RocksDB skips the files the same compaction just wrote;
    /// the engine rewrites them too).
    ForceOptimized,
}

/// Options of [`DB::compact_range_opt`], with the `rocksdb` crate's names.
///
/// [`DB::compact_range_opt`]: crate::DB::compact_range_opt
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{BottommostLevelCompaction, CompactOptions, DB};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// let mut opts = CompactOptions::default();
/// opts.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
/// db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &opts).unwrap();
/// ```
#[derive(Debug, Clone, Default)]
pub struct CompactOptions {
    pub(crate) bottommost_level_compaction: BottommostLevelCompaction,
}

impl CompactOptions {
    /// Whether the last level is rewritten too (default
    /// [`BottommostLevelCompaction::IfHaveCompactionFilter`]: no).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::{BottommostLevelCompaction, CompactOptions};
    ///
    /// let mut opts = CompactOptions::default();
    /// opts.set_bottommost_level_compaction(BottommostLevelCompaction::Skip);
    /// ```
    pub fn set_bottommost_level_compaction(&mut self, v: BottommostLevelCompaction) {
        self.bottommost_level_compaction = v;
    }
}
