//! Manual compaction, as RocksDB's `CompactRange`: every file holding a key
//! in a range is merged down, level by level, to the last level that holds
//! data.

use super::background::levels_of;
use super::{DBWithThreadMode, Shared, ThreadMode};
use crate::compaction::picker;
use crate::error::Result;
use crate::manifest::NUM_LEVELS;
use crate::options::{BottommostLevelCompaction, CompactOptions};

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// Compacts every key in `[start, end]` (an open end unbounded; both
    /// `None`: the whole database) down to the last level that holds data:
    /// the memtables are flushed, then each level's files in the range are
    /// merged into the level below with the files they overlap there. Older
    /// versions and tombstones no snapshot needs are dropped on the way, so
    /// the range then takes the least space and reads go through the fewest
    /// files. The automatic compactions wait meanwhile; writes go on. Files
    /// already on the last level are not rewritten (RocksDB's default; see
    /// [`compact_range_opt`](Self::compact_range_opt)).
    ///
    /// # Errors
    ///
    /// The first flush or compaction error (it also stops writes, as a
    /// background error does). Unlike the `rocksdb` crate, whose
    /// `compact_range` returns nothing, the error is returned.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, properties};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// for round in 0..3u8 {
    ///     for k in 0..100u8 {
    ///         db.put([k], [round]).unwrap();
    ///     }
    ///     db.flush().unwrap(); // three level-0 files with the same keys
    /// }
    /// db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    /// let at = |l: usize| db.property_int_value(properties::num_files_at_level(l)).unwrap();
    /// assert_eq!(at(0), Some(0));
    /// assert_eq!(db.property_int_value(properties::ESTIMATE_NUM_KEYS).unwrap(), Some(100));
    /// assert_eq!(db.get([7]).unwrap(), Some(vec![2]));
    /// ```
    pub fn compact_range<S: AsRef<[u8]>, E: AsRef<[u8]>>(
        &self,
        start: Option<S>,
        end: Option<E>,
    ) -> Result<()> {
        self.compact_range_opt(start, end, &CompactOptions::default())
    }

    /// [`compact_range`](Self::compact_range) with options: whether the
    /// last level's files in the range are rewritten too, which drops the
    /// versions and tombstones there that no snapshot needs any more.
    ///
    /// # Errors
    ///
    /// As [`compact_range`](Self::compact_range).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{BottommostLevelCompaction, CompactOptions, DB, properties};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// let snap = db.snapshot();
    /// db.delete(b"k").unwrap();
    /// db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    /// drop(snap); // the put and its tombstone were kept for it
    /// let mut force = CompactOptions::default();
    /// force.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
    /// db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &force).unwrap();
    /// assert_eq!(db.property_int_value(properties::ESTIMATE_NUM_KEYS).unwrap(), Some(0));
    /// ```
    pub fn compact_range_opt<S: AsRef<[u8]>, E: AsRef<[u8]>>(
        &self,
        start: Option<S>,
        end: Option<E>,
        opts: &CompactOptions,
    ) -> Result<()> {
        self.flush()?;
        let (start, end) = (
            start.as_ref().map(AsRef::as_ref),
            end.as_ref().map(AsRef::as_ref),
        );
        let bottommost = matches!(
            opts.bottommost_level_compaction,
            BottommostLevelCompaction::Force | BottommostLevelCompaction::ForceOptimized
        );
        self.shared.compact_range(start, end, bottommost)
    }
}

impl Shared {
    /// Pauses the compaction threads, waits for the compactions under way,
    /// runs the manual steps on this thread, and lets the threads go on.
    fn compact_range(
        &self,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        bottommost: bool,
    ) -> Result<()> {
        let mut st = self.state.lock();
        // One manual compaction at a time.
        while st.bg.manual_compaction {
            self.bg_cv.wait(&mut st);
        }
        st.bg.manual_compaction = true;
        while !st.bg.compactions.is_empty() {
            self.bg_cv.wait(&mut st);
        }
        drop(st);
        let result = self.compact_range_steps(start, end, bottommost);
        self.state.lock().bg.manual_compaction = false;
        // The compaction threads may have work, and another manual
        // compaction may wait.
        self.bg_cv.notify_all();
        result
    }

    /// Moves the range down one level at a time, from level 0 to the last
    /// level with data (or the base level, whichever is deeper), then, with
    /// `bottommost`, rewrites that level's files in the range in place.
    fn compact_range_steps(
        &self,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        bottommost: bool,
    ) -> Result<()> {
        let last = {
            let st = self.state.lock();
            let deepest = (0..NUM_LEVELS)
                .rev()
                .find(|&l| !st.version.levels[l].is_empty())
                .unwrap_or(0);
            deepest.max(st.bg.shape.base_level)
        };
        let steps = (0..last).chain(bottommost.then_some(last));
        for level in steps {
            let st = self.state.lock();
            self.check_bg_error()?;
            // Level 0 goes to the base level (the levels between are empty);
            // the last level into itself.
            let output_level = match level {
                _ if level == last => level,
                0 => st.bg.shape.base_level,
                _ => level + 1,
            };
            let pick = picker::pick_range(
                &levels_of(&st.version),
                level,
                output_level,
                start,
                end,
                &st.bg.compactions,
                &self.opts.comparator,
            );
            let Some(pick) = pick else { continue };
            // A failure is also recorded as the background error.
            self.run_registered(st, &pick).1?;
        }
        Ok(())
    }
}
