//! The background threads: one flushes frozen memtables into level 0, the
//! others run the compactions [`crate::compaction::picker`] chooses, side by
//! side when they share no file and write apart. A flush never waits
//! behind a compaction, and a compaction under way never holds the state
//! lock while it reads or writes tables.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::MutexGuard;

use super::stats::{LevelStats, WriteStallStats};
use super::{Shared, State};
use crate::compaction::picker::{self, LevelShape, Levels, Pick, Running};
use crate::compaction::{CompactionIterator, LevelsBelow};
use crate::error::{Error, Result};
use crate::filename::table_path;
use crate::info_log::info;
use crate::iter::{EntrySource, Forward, InternalIterator, MergingIterator};
use crate::manifest::NUM_LEVELS;
use crate::options::Options;
use crate::recovery::delete_obsolete_files;
use crate::version::{LevelIterator, TableFile, TableIterAdapter, Version, build_table};

/// What the background threads keep under the state lock, beside the
/// version and the manifest.
pub(super) struct Background {
    /// Flushes and compactions under way.
    pub(super) running_jobs: usize,
    /// The compactions under way, as later picks must avoid them.
    pub(super) compactions: Vec<Running>,
    /// The level targets of the current version.
    pub(super) shape: LevelShape,
    /// The current version's estimate (see `picker::pending_compaction_bytes`).
    pub(super) pending_compaction_bytes: u64,
    /// Flush (level 0) and compaction counters, by output level.
    pub(super) level_stats: [LevelStats; NUM_LEVELS],
    pub(super) stalls: WriteStallStats,
    /// When the last memtable switch happened: slowdowns space switches.
    pub(super) last_switch: Instant,
    /// A manual compaction (`DB::compact_range`) is under way: the
    /// compaction threads pick nothing meanwhile.
    pub(super) manual_compaction: bool,
}

impl Background {
    pub(super) fn new(version: &Version, opts: &Options) -> Background {
        let (shape, pending_compaction_bytes) = shape_of(version, opts);
        Background {
            running_jobs: 0,
            compactions: Vec::new(),
            shape,
            pending_compaction_bytes,
            level_stats: Default::default(),
            stalls: WriteStallStats::default(),
            last_switch: Instant::now(),
            manual_compaction: false,
        }
    }

    /// Recomputes what depends on the version's tables.
    fn refresh(&mut self, version: &Version, opts: &Options) {
        (self.shape, self.pending_compaction_bytes) = shape_of(version, opts);
    }
}

/// The level targets of `version`'s tables, and the compaction bytes they
/// leave pending.
fn shape_of(version: &Version, opts: &Options) -> (LevelShape, u64) {
    let bytes = version.level_bytes();
    let shape = picker::level_shape(&bytes, opts);
    let pending = picker::pending_compaction_bytes(&bytes, version.levels[0].len(), &shape, opts);
    (shape, pending)
}

/// The range tombstones of a compaction's input tables, as one set.
fn range_dels_of<'a>(
    tables: impl Iterator<Item = &'a Arc<TableFile>>,
) -> Option<Arc<crate::range_del::FragmentedTombstones>> {
    let sets: Vec<&Arc<_>> = tables.filter_map(|t| t.range_dels.as_ref()).collect();
    match sets.len() {
        0 => None,
        1 => Some(sets[0].clone()),
        _ => Some(Arc::new(crate::range_del::FragmentedTombstones::merge(
            sets.into_iter().map(|s| &**s),
        ))),
    }
}

/// The version's tables as the picker sees them.
pub(super) fn levels_of(version: &Version) -> Levels<'_> {
    std::array::from_fn(|l| version.levels[l].iter().map(|t| &t.meta).collect())
}

impl State {
    /// Makes `version` current, with the level targets and stall estimate
    /// that follow from its tables.
    fn install(&mut self, version: Version, opts: &Options) {
        self.bg.refresh(&version, opts);
        self.version = Arc::new(version);
    }
}

impl Shared {
    /// Starts the flush thread and `max_background_jobs - 1` compaction
    /// threads (at least one).
    pub(super) fn start_background(self: &Arc<Self>) -> Result<Vec<JoinHandle<()>>> {
        let compactors = self.opts.max_background_jobs.saturating_sub(1).max(1);
        let mut handles = Vec::new();
        let mut started = Ok(());
        for i in 0..=compactors {
            let shared = self.clone();
            let (name, body): (String, fn(&Shared)) = if i == 0 {
                ("lsm-demo-flush".into(), Shared::flush_loop)
            } else {
                (format!("lsm-demo-compact-{i}"), Shared::compaction_loop)
            };
            match std::thread::Builder::new()
                .name(name)
                .spawn(move || body(&shared))
            {
                Ok(h) => handles.push(h),
                Err(e) => {
                    started = Err(Error::io("starting a background thread", e));
                    break;
                }
            }
        }
        if let Err(e) = started {
            // Release: as in `Drop`; the threads already started read it
            // (Acquire) and stop.
            self.shutting_down.store(true, Ordering::Release);
            self.maybe_schedule_compaction();
            for h in handles {
                let _ = h.join();
            }
            return Err(e);
        }
        Ok(handles)
    }

    /// The flush thread: flushes frozen memtables oldest first, and after a
    /// background error idles (or, after a full disk, retries `resume`).
    fn flush_loop(&self) {
        let mut st = self.state.lock();
        let mut resume_attempts: u32 = 0;
        loop {
            // Acquire: pairs with `record_bg_error`'s Release (the error is
            // stored).
            if self.has_bg_error.load(Ordering::Acquire) {
                // Nothing more can be made durable; wake stalled writers so
                // they see the error, then idle until shutdown, or retry
                // after a full disk (RocksDB's auto-resume).
                self.bg_cv.notify_all();
                // Acquire: pairs with the closer's Release.
                if self.shutting_down.load(Ordering::Acquire) {
                    return;
                }
                let no_space = self.background_error().kind() == crate::ErrorKind::NoSpace;
                if !(no_space && resume_attempts < self.opts.max_bgerror_resume_count) {
                    self.bg_cv.wait(&mut st);
                    continue;
                }
                let interval = self.opts.bgerror_resume_retry_interval;
                self.bg_cv.wait_for(&mut st, interval);
                // Acquire, both: as at the top of the loop.
                if self.shutting_down.load(Ordering::Acquire)
                    || !self.has_bg_error.load(Ordering::Acquire)
                {
                    continue;
                }
                drop(st);
                resume_attempts += 1;
                match self.resume() {
                    Ok(()) => {
                        info!(
                            self.info_log,
                            "resumed on its own after {resume_attempts} tries"
                        );
                        resume_attempts = 0;
                    }
                    Err(e) => info!(self.info_log, "automatic resume failed: {e}"),
                }
                st = self.state.lock();
                continue;
            }
            // Below, Acquire on `shutting_down` pairs with the closer's
            // Release; Relaxed on `warm_wanted`: only a hint, which orders
            // nothing (`warm_pool` takes the pool's lock).
            if !st.version.imm.is_empty() {
                st.bg.running_jobs += 1;
                drop(st);
                let result = self.flush_oldest();
                st = self.state.lock();
                st.bg.running_jobs -= 1;
                if let Err(e) = result {
                    self.record_bg_error(e);
                }
                self.bg_cv.notify_all();
            } else if self.shutting_down.load(Ordering::Acquire) {
                return;
            } else if self.warm_wanted.load(Ordering::Relaxed) {
                drop(st);
                self.warm_pool();
                st = self.state.lock();
            } else {
                self.bg_cv.wait(&mut st);
            }
        }
    }

    /// Faults blocks into the memtables' pool until it holds
    /// `pool_warm_target`, for the writers asking (see `note_growth`). The
    /// request is cleared first: a writer that finds the pool low again
    /// meanwhile asks again. A block that cannot be reserved ends the
    /// warming; the arena that needs one then reserves its own, and fails
    /// there if it must.
    fn warm_pool(&self) {
        // Relaxed: see `note_growth`.
        self.warm_wanted.store(false, Ordering::Relaxed);
        let size = self.opts.write_buffer_size;
        let options = crate::memtable::memtable_arena_options(size);
        let _ = self
            .block_pool
            .warm(&options, crate::memtable::pool_warm_target(size));
    }

    /// A compaction thread: runs what the picker chooses until shutdown
    /// (a compaction under way ends first; none starts after).
    fn compaction_loop(&self) {
        let mut st = self.state.lock();
        loop {
            // Acquire: pairs with the closer's Release.
            if self.shutting_down.load(Ordering::Acquire) {
                return;
            }
            // Acquire: pairs with `record_bg_error`'s Release.
            let pick = if self.has_bg_error.load(Ordering::Acquire) {
                None
            } else {
                self.pick_compaction(&st)
            };
            let Some(pick) = pick else {
                self.bg_cv.wait(&mut st);
                continue;
            };
            // A failure is recorded as the background error.
            (st, _) = self.run_registered(st, &pick);
        }
    }

    /// Runs `pick` on the current version, listed as under way meanwhile
    /// (later picks avoid its files and its output range); a failure
    /// becomes the background error. Returns with the state lock taken
    /// again and the waiters woken.
    pub(super) fn run_registered<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        pick: &Pick,
    ) -> (MutexGuard<'a, State>, Result<()>) {
        let version = st.version.clone();
        let running = pick.running();
        st.bg.compactions.push(running.clone());
        st.bg.running_jobs += 1;
        drop(st);
        let result = self.run_compaction(pick, &version);
        drop(version);
        let mut st = self.state.lock();
        st.bg.running_jobs -= 1;
        st.bg.compactions.retain(|r| r.files != running.files);
        if let Err(e) = &result {
            self.record_bg_error(e.clone());
        }
        self.bg_cv.notify_all();
        (st, result)
    }

    /// The compaction to run next, as `st` stands.
    fn pick_compaction(&self, st: &State) -> Option<Pick> {
        if st.bg.manual_compaction {
            return None;
        }
        picker::pick(
            &levels_of(&st.version),
            &st.bg.shape,
            &self.opts,
            &st.bg.compactions,
        )
    }

    /// Whether a flush or compaction is under way or due.
    fn background_work_left(&self, st: &State) -> bool {
        st.bg.running_jobs > 0 || !st.version.imm.is_empty() || self.pick_compaction(st).is_some()
    }

    /// Waits until no flush or compaction is under way or due.
    pub(super) fn wait_for_background(&self, timeout: Option<Duration>) -> Result<()> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut st = self.state.lock();
        loop {
            self.check_bg_error()?;
            if !self.background_work_left(&st) {
                return Ok(());
            }
            match deadline {
                None => self.bg_cv.wait(&mut st),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(Error::TimedOut(
                            "flushes and compactions were still due".into(),
                        ));
                    }
                    self.bg_cv.wait_for(&mut st, left);
                }
            }
        }
    }

    /// Writes the oldest frozen memtable to a level-0 table.
    pub(super) fn flush_oldest(&self) -> Result<()> {
        let (mem, number) = {
            let mut st = self.state.lock();
            let Some(mem) = st.version.imm.last().cloned() else {
                return Ok(());
            };
            let n = st.manifest.next_file_number;
            st.manifest.next_file_number += 1;
            (mem, n)
        };
        let started = Instant::now();
        // unordered_write: wait for the writers still inserting into it.
        // Acquire: pairs with each inserter's Release decrement, so its entries
        // are in before the flush reads them.
        while mem.pending_inserts.load(Ordering::Acquire) > 0 {
            std::thread::yield_now();
        }
        let mut entries = mem.rep.clone().iter();
        entries.seek_to_first();
        let mut tombstones = mem.tombstone_output();
        let table = build_table(
            &*self.fs,
            &self.dir,
            &self.opts,
            number,
            &mut Forward(&mut *entries),
            None,
            tombstones.as_mut(),
        )?;
        let mut st = self.state.lock();
        let mut manifest = st.manifest.clone();
        if let Some(t) = &table {
            manifest.files.push(t.meta.clone());
        }
        // This memtable's log is retired: the oldest memtable still in
        // memory names the first log to replay.
        let remaining_oldest_log = st
            .version
            .imm
            .iter()
            .rev()
            .nth(1)
            .map(|m| m.log_number)
            .unwrap_or(st.version.mem.log_number);
        manifest.log_number = remaining_oldest_log;
        manifest.obsolete_logs.push(mem.log_number);
        manifest.last_sequence = manifest.last_sequence.max(self.visible());
        self.write_manifest(&manifest)?;
        st.manifest = manifest;
        match &table {
            Some(t) => info!(
                self.info_log,
                "flushed memtable of log {} to table {} ({} entries, {} bytes)",
                mem.log_number,
                t.meta.number,
                t.meta.entries,
                t.meta.file_size
            ),
            None => info!(
                self.info_log,
                "flushed empty memtable of log {}", mem.log_number
            ),
        }
        let flushed = &mut st.bg.level_stats[0];
        flushed.written_bytes += table.as_ref().map_or(0, |t| t.meta.file_size);
        flushed.micros += started.elapsed().as_micros() as u64;
        let table = table.map(Arc::new);
        let next = st.version.with(|v| {
            v.imm.pop();
            if let Some(t) = table {
                v.levels[0].insert(0, t);
            }
        });
        st.install(next, &self.opts);
        delete_obsolete_files(&*self.fs, &self.dir, &mut st.manifest, &self.info_log);
        Ok(())
    }

    /// Runs `pick` against `version`, the version it was picked from.
    pub(super) fn run_compaction(&self, pick: &Pick, version: &Version) -> Result<()> {
        let started = Instant::now();
        let files = |level: usize, numbers: &[u64]| -> Vec<Arc<TableFile>> {
            version.levels[level]
                .iter()
                .filter(|t| numbers.contains(&t.meta.number))
                .cloned()
                .collect()
        };
        let inputs = files(pick.level, &pick.inputs);
        let overlaps = files(pick.output_level, &pick.overlaps);
        if pick.trivial_move {
            return self.install_move(pick, &inputs, started);
        }
        // Below the output level, an older version of a key can lie only
        // in these files (see `LevelsBelow`).
        let below = LevelsBelow(version.levels[pick.output_level + 1..].to_vec());
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
        for t in &inputs {
            children.push(Box::new(TableIterAdapter(t.table.iter())));
        }
        if !overlaps.is_empty() {
            children.push(Box::new(LevelIterator::new(overlaps.clone())));
        }
        let mut merged = MergingIterator::new(self.opts.comparator.clone(), children);
        merged.seek_to_first();
        let range_dels = range_dels_of(inputs.iter().chain(&overlaps));
        let mut filtered =
            CompactionIterator::new(merged, self.oldest_snapshot(), below, range_dels);
        let mut outputs: Vec<Arc<TableFile>> = Vec::new();
        let built = self.write_outputs(pick.output_level, &mut filtered, &mut outputs);
        if let Err(e) = built {
            // Nothing names the finished outputs yet.
            for t in &outputs {
                let _ = self.fs.remove_file(&table_path(&self.dir, t.meta.number));
            }
            return Err(e);
        }

        let gone: Vec<u64> = pick.inputs.iter().chain(&pick.overlaps).copied().collect();
        let mut st = self.state.lock();
        let mut manifest = st.manifest.clone();
        manifest.files.retain(|f| !gone.contains(&f.number));
        manifest
            .files
            .extend(outputs.iter().map(|t| t.meta.clone()));
        manifest.obsolete_tables.extend(&gone);
        self.write_manifest(&manifest)?;
        st.manifest = manifest;
        let size = |ts: &[Arc<TableFile>]| ts.iter().map(|t| t.meta.file_size).sum::<u64>();
        info!(
            self.info_log,
            "compacted level {} {:?} and level {} {:?} into {:?} ({} bytes in, {} out)",
            pick.level,
            pick.inputs,
            pick.output_level,
            pick.overlaps,
            outputs.iter().map(|t| t.meta.number).collect::<Vec<_>>(),
            size(&inputs) + size(&overlaps),
            size(&outputs)
        );
        let counted = &mut st.bg.level_stats[pick.output_level];
        counted.compactions += 1;
        counted.read_input_bytes += size(&inputs);
        counted.read_output_level_bytes += size(&overlaps);
        counted.written_bytes += size(&outputs);
        counted.micros += started.elapsed().as_micros() as u64;
        let next = st.version.with(|v| {
            for level in [pick.level, pick.output_level] {
                v.levels[level].retain(|t| !gone.contains(&t.meta.number));
            }
            let out = &mut v.levels[pick.output_level];
            out.extend(outputs.iter().cloned());
            out.sort_by(|a, b| {
                self.opts
                    .comparator
                    .compare_internal(&a.meta.smallest, &b.meta.smallest)
            });
        });
        st.install(next, &self.opts);
        delete_obsolete_files(&*self.fs, &self.dir, &mut st.manifest, &self.info_log);
        Ok(())
    }

    /// Writes the filtered entries to new tables on `level`, cut at the
    /// level's target file size, into `outputs`.
    fn write_outputs(
        &self,
        level: usize,
        filtered: &mut CompactionIterator,
        outputs: &mut Vec<Arc<TableFile>>,
    ) -> Result<()> {
        let mut tombstones = filtered.output_tombstones.take();
        while filtered.valid() || tombstones.as_ref().is_some_and(|t| t.pending()) {
            let number = {
                let mut st = self.state.lock();
                let n = st.manifest.next_file_number;
                st.manifest.next_file_number += 1;
                n
            };
            let built = build_table(
                &*self.fs,
                &self.dir,
                &self.opts,
                number,
                filtered,
                Some(self.opts.target_file_size(level)),
                tombstones.as_mut(),
            )?;
            let Some(mut t) = built else { break };
            t.meta.level = level as u32;
            outputs.push(Arc::new(t));
        }
        filtered.status()
    }

    /// Moves `inputs` to the pick's output level by a manifest edit.
    fn install_move(&self, pick: &Pick, inputs: &[Arc<TableFile>], started: Instant) -> Result<()> {
        let level = pick.output_level as u32;
        let mut st = self.state.lock();
        let mut manifest = st.manifest.clone();
        for f in &mut manifest.files {
            if pick.inputs.contains(&f.number) {
                f.level = level;
            }
        }
        self.write_manifest(&manifest)?;
        st.manifest = manifest;
        info!(
            self.info_log,
            "moved tables {:?} from level {} to level {level}", pick.inputs, pick.level
        );
        let moved: Vec<Arc<TableFile>> = inputs
            .iter()
            .map(|t| {
                let mut meta = t.meta.clone();
                meta.level = level;
                Arc::new(TableFile {
                    meta,
                    table: t.table.clone(),
                    ucmp: t.ucmp.clone(),
                    range_dels: t.range_dels.clone(),
                })
            })
            .collect();
        let counted = &mut st.bg.level_stats[pick.output_level];
        counted.compactions += 1;
        counted.moved_bytes += moved.iter().map(|t| t.meta.file_size).sum::<u64>();
        counted.micros += started.elapsed().as_micros() as u64;
        let next = st.version.with(|v| {
            v.levels[pick.level].retain(|t| !pick.inputs.contains(&t.meta.number));
            let out = &mut v.levels[pick.output_level];
            out.extend(moved);
            out.sort_by(|a, b| {
                self.opts
                    .comparator
                    .compare_internal(&a.meta.smallest, &b.meta.smallest)
            });
        });
        st.install(next, &self.opts);
        Ok(())
    }

    /// Each level's size, target, score and counters.
    pub(super) fn level_stats(&self, st: &State) -> [LevelStats; NUM_LEVELS] {
        let levels = levels_of(&st.version);
        let busy = picker::busy_files(&st.bg.compactions);
        let scores = picker::scores(&levels, &st.bg.shape, &self.opts, &busy);
        std::array::from_fn(|l| {
            let mut s = st.bg.level_stats[l];
            s.files = levels[l].len();
            s.bytes = levels[l].iter().map(|f| f.file_size).sum();
            s.target_bytes = st.bg.shape.target_bytes[l];
            s.score = scores
                .iter()
                .find(|(level, _)| *level == l)
                .map_or(0.0, |s| s.1);
            s
        })
    }
}
