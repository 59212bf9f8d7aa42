//! Making room for a write: the stop and the slowdown while the background
//! threads fall behind, and the switch of a full memtable to a new one with
//! a new log.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::write::LogFile;
use super::{Shared, State};
use crate::error::{Error, Result};
use crate::filename::log_path;
use crate::memtable::Memtable;
use crate::perf::{self, PerfMetric};
use crate::wal::LogWriter;
use ordered_publish::Closed;

/// The claim on the switch of a full memtable (see `prepare_switch`),
/// given back when dropped.
struct SwitchClaim<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for SwitchClaim<'_> {
    fn drop(&mut self) {
        // Release: pairs with the next claimer's Acquire.
        self.0.store(false, Ordering::Release);
    }
}

/// What a writer must do before it writes (see `make_room_for_write`).
enum Room {
    /// The mutable memtable has room.
    Enough,
    /// It is full: freeze it and start a new one.
    Switch,
    /// It is full and the background threads are far behind: wait until
    /// they catch up (a stop).
    Stall,
    /// It is full and compaction is behind: switch no earlier than this,
    /// so that memtables fill at the delayed write rate (a slowdown).
    Slowdown(Instant),
}

impl Shared {
    /// Makes sure the mutable memtable has room, switching it when full,
    /// slowed down or stopped while compaction or flushes fall behind.
    pub(super) fn make_room_for_write(&self, no_slowdown: bool) -> Result<()> {
        loop {
            // Relaxed, both: hints; what follows re-checks. While another
            // writer prepares the switch, this one writes on into the full
            // memtable (which overshoots by those few milliseconds' writes).
            if !self.memtable_full.load(Ordering::Relaxed)
                || self.switch_claimed.load(Ordering::Relaxed)
            {
                return Ok(());
            }
            let mut st = self.state.lock();
            match self.room(&st, no_slowdown)? {
                Room::Enough => return Ok(()),
                Room::Stall => {
                    // Stop: writers wait here (no_slowdown ones fail) until
                    // the background threads catch up. Writes past this
                    // point hold sequence ranges, so they are let finish.
                    self.bg_cv.notify_all();
                    let waited = Instant::now();
                    let delayed = perf::Timer::start();
                    self.bg_cv.wait(&mut st);
                    delayed.stop(PerfMetric::WriteDelayTime);
                    st.bg.stalls.stops += 1;
                    st.bg.stalls.stop_micros += waited.elapsed().as_micros() as u64;
                    continue;
                }
                Room::Slowdown(due) => {
                    let waited = Instant::now();
                    let pause = due.saturating_duration_since(waited);
                    let delayed = perf::Timer::start();
                    self.bg_cv.wait_for(&mut st, pause);
                    delayed.stop(PerfMetric::WriteDelayTime);
                    st.bg.stalls.slowdowns += 1;
                    st.bg.stalls.slowdown_micros += waited.elapsed().as_micros() as u64;
                    continue;
                }
                Room::Switch => {}
            }
            // Lock order: the sequencer's close, then the state lock. A
            // writer holding a range may take the state lock (to report a
            // failed log write) before it finishes the range.
            drop(st);
            // The preparation is part of this writer's switch.
            let switching = perf::Timer::start();
            let Some(_claim) = self.prepare_switch()? else {
                return Ok(());
            };
            let closed = self.seq.close();
            let st = self.state.lock();
            if let Room::Switch = self.room(&st, no_slowdown)? {
                let switched = self.switch_memtable(&closed, st);
                switching.stop(PerfMetric::WriteSchedulingFlushesCompactionsTime);
                return switched;
            }
            // Another writer switched meanwhile, or a stall began.
        }
    }

    /// Claims the switch of the full memtable and, before the switch holds
    /// every writer, syncs what the current log holds so far while the
    /// others write on: the switch's own syncs then find little left to
    /// write. `None` when another writer holds the claim. A failed sync
    /// fails the log, as a sync group's does.
    fn prepare_switch(&self) -> Result<Option<SwitchClaim<'_>>> {
        // Acquire: the previous claimer's switch (Release below) happens
        // before this one's.
        if self.switch_claimed.swap(true, Ordering::Acquire) {
            return Ok(None);
        }
        let claim = SwitchClaim(&self.switch_claimed);
        self.check_bg_error()?;
        if let (Some(syncer), number) = self.log_syncer() {
            // A failed sync fails every write in flight now or later: none
            // may count on its record.
            self.sync_or_fail_log(&*syncer, number, self.seq.published())?;
        }
        Ok(Some(claim))
    }

    /// What a writer must do before it writes, as `st` stands.
    fn room(&self, st: &State, no_slowdown: bool) -> Result<Room> {
        if st.version.mem.memory_usage() < self.opts.write_buffer_size {
            return Ok(Room::Enough);
        }
        self.check_bg_error()?;
        let o = &self.opts;
        let level0 = st.version.levels[0].len();
        let pending = st.bg.pending_compaction_bytes;
        let over = |limit: u64| limit > 0 && pending >= limit;
        let stop = st.version.imm.len() + 1 >= o.max_write_buffer_number
            || level0 >= o.level0_stop_writes_trigger
            || over(o.hard_pending_compaction_bytes_limit);
        let slowdown = level0 >= o.level0_slowdown() || over(o.soft_pending_compaction_bytes_limit);
        if (stop || slowdown) && no_slowdown {
            return Err(Error::WriteStall);
        }
        if stop {
            return Ok(Room::Stall);
        }
        if slowdown {
            // One memtable per write_buffer_size / delayed_write_rate.
            let pause =
                Duration::from_secs_f64(o.write_buffer_size as f64 / o.delayed_write_rate as f64);
            let due = st.bg.last_switch + pause;
            if Instant::now() < due {
                return Ok(Room::Slowdown(due));
            }
        }
        Ok(Room::Switch)
    }

    /// Freezes the mutable memtable and starts a new one with a new log.
    /// The caller closed the sequencer (every write so far has finished),
    /// then took the state lock.
    pub(super) fn switch_memtable(
        &self,
        closed: &Closed<'_>,
        mut st: parking_lot::MutexGuard<'_, State>,
    ) -> Result<()> {
        // After a failed log write or sync, only `resume` replaces the log:
        // it retires the broken one before it lets writes in. (A broken log
        // always comes with the error; the second check keeps a switch
        // from ever leaving one without a trailer.)
        self.check_bg_error()?;
        if (self.log.lock().writer.as_ref()).is_none_or(LogWriter::is_failed) {
            return Err(self.background_error());
        }
        self.install_new_log(closed, &mut st)
    }

    /// The body of [`Self::switch_memtable`], without the error check.
    pub(super) fn install_new_log(
        &self,
        closed: &Closed<'_>,
        st: &mut parking_lot::MutexGuard<'_, State>,
    ) -> Result<()> {
        // The closed sequencer holds new writes off, and every write in
        // flight has finished: each is logged (or failed) and inserted. Sync
        // writers hold their ranges while their group syncs, so the last
        // sync group synced the old log before we got here.
        let mut log = self.log.lock();
        // Every copy into the old log is done: its records end there.
        log.end_copies(self.seq.reserved_bytes());
        let number = st.manifest.next_file_number;
        st.manifest.next_file_number += 1;
        let path = log_path(&self.dir, number);
        let file = crate::recovery::create_log(&*self.fs, &path, &self.opts)?;
        let old_number = log.number;
        // The new log's name must survive power loss before any synced
        // write lands in it.
        let started = self
            .fs
            .sync_dir(&self.dir)
            .map_err(|e| Error::io(format!("syncing {}", self.dir.display()), e))
            // The new log's header first: once the old log ends with its
            // trailer, no record may follow it there.
            .and_then(|()| {
                LogWriter::with_previous(file, old_number)
                    .map_err(|e| Error::io(format!("starting {}", path.display()), e))
            })
            .and_then(|writer| LogFile::new(writer, number));
        let next = match started {
            Ok(next) => next,
            Err(e) => {
                // The old log stays current. The new one never takes a
                // record; recovery skips it if it stays (see `recovery`).
                let _ = crate::wal::remove_log(&*self.fs, &path);
                return Err(e);
            }
        };
        // A broken writer (only `resume` replaces one) takes no trailer: its
        // log is retired, by flushing its memtables, before any write
        // reaches the new one.
        let side_by_side = log.shared.is_some();
        if let Some(old) = log.writer.as_mut().filter(|w| !w.is_failed()) {
            // The old log ends with a trailer naming the new one, so a
            // replay can tell a complete log from one cut short. Its
            // unsynced writes must be durable once a later synced write in
            // the new log is.
            //
            // Written side by side, its records are synced first: pages
            // reach the disk in any order, and a trailer that reached it
            // before a record did would make a crash's writes in flight
            // look like damage.
            let trailer = crate::batch::log_trailer(number);
            let records_synced = if side_by_side { old.sync() } else { Ok(()) };
            let ended = match records_synced.and_then(|()| old.add_record(&trailer)) {
                Ok(()) => old.sync(),
                Err(e) => {
                    // Nothing names the new log: as above.
                    let _ = crate::wal::remove_log(&*self.fs, &path);
                    Err(e)
                }
            };
            if let Err(e) = ended {
                // The old writer now refuses writes (it fails for good
                // after any error), and the old log may end in part of a
                // trailer: writes stop until `resume` retires it.
                let err = Error::io(
                    format!("ending {}", log_path(&self.dir, old_number).display()),
                    e,
                );
                self.log_failed_from
                    // AcqRel: as every write of `log_failed_from`; writers read
                    // it with Acquire.
                    .fetch_min(closed.published(), Ordering::AcqRel);
                self.record_bg_error(err.clone());
                self.bg_cv.notify_all();
                return Err(err);
            }
        }
        let bytes_written = log.total_bytes_written(self.seq.reserved_bytes());
        // Before the old log (and its map) goes.
        self.install_direct_log(closed, &next);
        *log = next;
        log.bytes_written = bytes_written;
        drop(log);
        // Every write so far is logged or failed; the new log starts clean.
        // Release: writes after the reopening acquire it.
        self.log_failed_from.store(u64::MAX, Ordering::Release);
        self.durable.fetch_max(closed.published(), Ordering::AcqRel);
        let old = st.version.mem.clone();
        // unordered_write: writers may still be inserting into the old
        // memtable (they insert after finishing their range). No range is
        // open now, so the count only falls; wait for it before freezing,
        // which refuses later inserts.
        while old.pending_inserts.load(Ordering::Acquire) > 0 {
            std::thread::yield_now();
        }
        old.rep.mark_read_only();
        let mem = Arc::new(Memtable::new_in(&self.opts, number, Some(&self.block_pool)));
        // Writes reach the memtable through the pointer (see `write`).
        // Release: reservations after the reopening acquire it.
        self.current_mem
            .store(Arc::as_ptr(&mem).cast_mut(), Ordering::Release);
        // Relaxed: read as a hint; writers re-check under the state lock.
        self.memtable_full.store(false, Ordering::Relaxed);
        st.version = Arc::new(st.version.with(|v| {
            v.imm.insert(0, old);
            v.mem = mem;
        }));
        st.bg.last_switch = Instant::now();
        self.bg_cv.notify_all();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::Ordering::Relaxed;

    use crate::env::{FaultInjectionFs, FaultOp};
    use crate::{DB, Options};

    /// Opens (creating it) a database in `dir` whose memtables hold
    /// `write_buffer_size` bytes; returns its options too.
    fn open(dir: &std::path::Path, write_buffer_size: usize) -> (Options, DB) {
        let mut o = Options::default();
        o.create_if_missing(true)
            .set_write_buffer_size(write_buffer_size);
        let db = DB::open(&o, dir).unwrap();
        (o, db)
    }

    /// Puts key `i` with a 100-byte value.
    fn put(db: &DB, i: u32) {
        db.put(format!("key-{i:08}"), [b'v'; 100]).unwrap();
    }

    /// A flushed memtable leaves its arena's blocks in the database's pool,
    /// and the next memtable fills them before it asks the system for more.
    #[test]
    fn flushed_memtables_leave_their_blocks_to_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let (_, db) = open(dir.path(), 512 << 10);
        let put_batch = |from: u32| (from..from + 2000).for_each(|i| put(&db, i));
        put_batch(0);
        // Nothing dropped yet: the pool holds at most the blocks the flush
        // thread faults in ahead.
        let warmed = crate::memtable::pool_warm_target(512 << 10);
        assert!(db.stats().memtable_pool_bytes <= warmed);
        db.flush().unwrap();
        let held = db.stats().memtable_pool_bytes;
        assert!(held > warmed, "the flushed memtable's blocks are pooled");
        put_batch(2000);
        let left = db.stats().memtable_pool_bytes;
        assert!(
            left < held,
            "the new memtable took pooled blocks: {left} of {held} left"
        );
        assert!(left <= db.shared.block_pool.capacity());
        for i in (0..4000).step_by(397) {
            let key = format!("key-{i:08}");
            assert_eq!(
                db.get(&key).unwrap().as_deref(),
                Some(&[b'v'; 100][..]),
                "{key}"
            );
        }
    }

    /// Writers that find the pool low have the flush thread fault blocks in
    /// ahead of them, up to the warm target, before any memtable is
    /// flushed.
    #[test]
    fn writers_get_blocks_faulted_in_ahead() {
        let dir = tempfile::tempdir().unwrap();
        let (_, db) = open(dir.path(), 4 << 20);
        assert_eq!(db.stats().memtable_pool_bytes, 0, "no writes, no warming");
        let target = crate::memtable::pool_warm_target(4 << 20);
        let started = std::time::Instant::now();
        let mut i = 0u32;
        while db.stats().memtable_pool_bytes == 0 {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(30),
                "the pool was never warmed"
            );
            put(&db, i);
            i += 1;
            if i.is_multiple_of(1000) {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        let stats = db.stats();
        assert!(stats.memtable_pool_bytes <= target);
        assert_eq!(stats.immutable_memtables, 0);
        assert_eq!(stats.level_files.iter().sum::<usize>(), 0, "no flush yet");
    }

    /// Puts keys from `from` on until a writer found the memtable full;
    /// returns the next key.
    fn fill_until_full(db: &DB, from: u32) -> u32 {
        let mut i = from;
        // Relaxed: the test's own thread set it, in a put.
        while !db.shared.memtable_full.load(Relaxed) {
            put(db, i);
            i += 1;
        }
        i
    }

    /// The log number of the mutable memtable.
    fn memtable_log(db: &DB) -> u64 {
        db.shared.state.lock().version.mem.log_number
    }

    /// While one writer prepares the switch of the full memtable, the
    /// others write on into it; the next writer after it switches.
    #[test]
    fn writers_write_on_while_another_prepares_the_switch() {
        let dir = tempfile::tempdir().unwrap();
        let (_, db) = open(dir.path(), 64 << 10);
        let next = fill_until_full(&db, 0);
        let log = memtable_log(&db);
        // Relaxed: no other thread; as if a writer held the claim.
        db.shared.switch_claimed.store(true, Relaxed);
        (next..next + 200).for_each(|i| put(&db, i));
        assert_eq!(memtable_log(&db), log, "no switch while it is claimed");
        // Relaxed: as above.
        db.shared.switch_claimed.store(false, Relaxed);
        put(&db, next + 200);
        assert_ne!(memtable_log(&db), log, "the next writer switched");
        for i in (0..next + 201).step_by(37) {
            assert!(db.get(format!("key-{i:08}")).unwrap().is_some(), "{i}");
        }
    }

    /// The sync that prepares a switch fails the log as a sync group's
    /// does: the writer that made it, and every write after it, fail, and
    /// the switch never starts (no new log's name is synced).
    #[test]
    fn a_failed_sync_before_a_switch_fails_the_log() {
        let fs = FaultInjectionFs::new();
        let mut o = Options::default();
        o.create_if_missing(true).set_write_buffer_size(64 << 10);
        let db = DB::open_with_fs(&o, "/db", Arc::new(fs.clone())).unwrap();
        let next = fill_until_full(&db, 0);
        let dir_syncs = fs.calls(FaultOp::SyncDir);
        fs.fail_next(FaultOp::Sync, 1);
        let err = db.put(format!("key-{next:08}"), b"v").unwrap_err();
        assert!(err.to_string().contains("injected fault: Sync"), "{err}");
        assert_eq!(fs.calls(FaultOp::SyncDir), dir_syncs, "no switch began");
        assert!(db.put(b"later", b"v").is_err(), "the log is failed");
        // Relaxed: the failing writer gave the claim back in this thread.
        assert!(!db.shared.switch_claimed.load(Relaxed));
    }

    /// The memtables that recovery replays the logs into leave their blocks
    /// to the database's first memtable.
    #[test]
    fn recovery_leaves_its_blocks_to_the_first_memtable() {
        let dir = tempfile::tempdir().unwrap();
        let (o, db) = open(dir.path(), 4 << 20);
        (0..5000).for_each(|i| put(&db, i));
        drop(db);
        let db = DB::open(&o, dir.path()).unwrap();
        assert!(
            db.stats().recovery.records_replayed > 0,
            "the log was replayed"
        );
        assert!(
            db.stats().memtable_pool_bytes > 0,
            "its memtable's blocks are pooled"
        );
        assert_eq!(
            db.get("key-00004999").unwrap().as_deref(),
            Some(&[b'v'; 100][..])
        );
    }
}
