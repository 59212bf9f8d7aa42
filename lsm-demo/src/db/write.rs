//! The write path: sequence numbers, the log, the memtable insert, and
//! visibility, for many writers at once without a leader.
//!
//! ```text
//! write ─► make_room_for_write (switch a full memtable; stall)
//!       ─► reserve the batch's sequence numbers (one compare-and-swap)
//!       ─► frame the batch's log record (checksums: in parallel)
//!       ─► post it to the log queue under its sequence range (without
//!          the log: nothing, the queue skips finished ranges nobody
//!          posted); whoever finds the drain free writes every posted
//!          record, in sequence order, with one append; the others wait for
//!          it and try again if their record was not in its pass
//!       ─► wait until the log holds it
//!       ─► insert into the memtable, beside everyone else
//!       ─► finish the range; wait until every earlier range is finished
//!
//! sync write ─► make_room_for_write ─► join the write group: its leader
//!       reserves the group's numbers, posts and drains one record for the
//!       group, syncs once and inserts every member's batch
//! ```
//!
//! Log order is sequence order (recovery stops at a gap), because records
//! are posted under their sequence ranges and drained in range order. A
//! record reaches the operating system before its batch touches the
//! memtable, so a failed log write leaves nothing in the memtable.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::{Shared, State};
use crate::batch::{GROUP_HEADER_LEN, WriteBatch, group_header};
use crate::env::FileSync;
use crate::error::{Error, Result};
use crate::filename::log_path;
use crate::key::MAX_SEQUENCE;
use crate::memtable::Memtable;
use crate::options::WriteOptions;
use crate::wal::{LogWriter, frame_record};
use ordered_publish::Closed;

/// The log file the drainer appends to; behind a mutex that the drainer,
/// the memtable switch and the close take (the sync goes through its own
/// handle, so it does not hold appends up).
pub(crate) struct LogFile {
    /// `None` once an append or sync failed: no record may follow.
    pub(crate) writer: Option<LogWriter>,
    pub(crate) number: u64,
    /// Syncs the file from a sync group's leader while appends go on.
    pub(crate) syncer: Option<Arc<dyn FileSync>>,
    /// The bytes of one drain pass, kept between passes.
    buffer: Vec<u8>,
    /// Bytes appended to the logs since the database was opened.
    pub(crate) bytes_written: u64,
}

impl LogFile {
    pub(crate) fn new(writer: LogWriter, number: u64) -> Result<LogFile> {
        let syncer = Some(
            writer
                .sync_handle()
                .map_err(|e| Error::io(format!("opening a sync handle of log {number}"), e))?,
        );
        Ok(LogFile {
            writer: Some(writer),
            number,
            syncer,
            buffer: Vec::new(),
            bytes_written: 0,
        })
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

/// A sync writer's request to the write group: its batch, which the
/// group's leader numbers, logs with the group's record, syncs and
/// inserts.
#[derive(Debug)]
pub(crate) struct SyncItem {
    batch: WriteBatch,
    /// The sequence number of the batch's first entry, set by the leader.
    first: u64,
}

/// The longest a sync group's leader waits for more writers.
const MAX_SYNC_GATHER: Duration = Duration::from_millis(1);

impl write_group::Commit<SyncItem> for Shared {
    type Error = Error;
    /// The group's sequence range, finished once every member inserted.
    type Token = Range<u64>;

    fn size(&self, item: &SyncItem) -> usize {
        item.batch.records().len()
    }

    fn gather_window(&self, _: &SyncItem) -> Duration {
        if !self.opts.group_commit_wait {
            return Duration::ZERO;
        }
        // Half a sync: a wait that times out costs at most that; one that
        // succeeds saves a whole sync for every writer it gathers.
        // Relaxed: an estimate; any recent value will do.
        let half_sync = Duration::from_nanos(self.sync_nanos.load(Ordering::Relaxed) / 2);
        half_sync.min(MAX_SYNC_GATHER)
    }

    /// Numbers the group's batches with one reservation, posts them as one
    /// log record and appends it (with every record before it), then syncs
    /// the log once. Reserving here, on the running leader, keeps the time
    /// between a reservation and its record short: a writer preempted
    /// there would hold up every later append.
    fn lead(
        &self,
        members: &mut write_group::GroupMembers<'_, SyncItem>,
    ) -> Result<write_group::Lead<Range<u64>>> {
        let total: u64 = members.iter().map(|m| m.batch.len() as u64).sum();
        let range = self.reserve(total)?;
        let header = group_header(range.start, total as u32);
        let parts: Vec<&[u8]> = std::iter::once(&header[..])
            .chain(members.iter().map(|m| m.batch.records()))
            .collect();
        let mut record = Vec::new();
        // The group's bytes are capped below the record limit
        // (`Options::validate` checks `max_group_bytes`).
        frame_record(&parts, &mut record).expect("a group within the log record limit");
        let mut first = range.start;
        for m in members.iter_mut() {
            m.first = first;
            first += m.batch.len() as u64;
        }
        self.log_queue
            .post_skipping(range.clone(), record, self.seq.tracker());
        self.drain_log(range.end);
        // The pass that took the record has been handled: `written` passes
        // it, whether the append worked or not.
        self.written.wait_published(range.end);
        if let Err(e) = self.sync_log(range.start) {
            // Nothing was inserted: the range is finished empty.
            self.seq.finish(range);
            return Err(e);
        }
        // The leader inserts every batch: waking each member to insert its
        // own was slower (fillrandom, 32 sync writers on 2 cores: 59-60 k
        // ops/s against 83-90 k), each wake-up a context switch.
        Ok(write_group::Lead::serial(range))
    }

    /// Inserts one member's batch (on the leader's thread: `lead` asks for
    /// serial apply).
    fn apply(&self, item: &mut SyncItem, _: &Range<u64>) {
        // Acquire: pairs with the Release store in `install_new_log`.
        let mem = self.current_mem.load(Ordering::Acquire);
        // SAFETY: `current_mem` points into the `Arc` of the state's mutable
        // memtable, which `install_new_log` replaces only while the
        // sequencer is closed; closing waits for every reserved range to be
        // finished, and the group's range is finished in `publish`, after
        // every member's insert. The leader reserved it, on this thread,
        // before this load, so it sees the pointer stored before the
        // reservation.
        let mem = unsafe { &*mem };
        self.insert(mem, item.first, &item.batch, &WriteOptions::default());
    }

    fn publish(&self, range: Range<u64>) {
        self.seq.finish(range);
    }
}

impl Shared {
    /// Writes `batch` (not empty, its sizes checked): see the module docs.
    pub(super) fn write(&self, batch: &WriteBatch, wo: &WriteOptions) -> Result<()> {
        self.make_room_for_write(wo.no_slowdown)?;
        if wo.sync {
            return self.write_synced(batch);
        }
        let count = batch.len() as u64;
        let range = self.reserve(count)?;
        // Without the log, the queue is left alone: the drainers count the
        // range skipped once it is finished (see `drain_log`).
        if !wo.disable_wal {
            let mut record = Vec::new();
            let header = group_header(range.start, count as u32);
            // The size was checked against the record limit up front.
            frame_record(&[&header, batch.records()], &mut record)
                .expect("a batch within the log record limit");
            self.log_queue
                .post_skipping(range.clone(), record, self.seq.tracker());
            self.drain_log(range.end);
            // The pass that took our record has been handled: `written`
            // passes it, whether the append worked or not (a load, no
            // wait).
            self.written.wait_published(range.end);
        }
        if let Err(e) = self.check_logged(range.start) {
            self.seq.finish(range);
            return Err(e);
        }
        // Acquire: pairs with the Release store in `install_new_log`.
        let mem = self.current_mem.load(Ordering::Acquire);
        // SAFETY: `current_mem` points into the `Arc` of the state's mutable
        // memtable, which `install_new_log` replaces only while the
        // sequencer is closed; closing waits for every reserved range to be
        // finished, ours included (and, with `unordered_write`, for the
        // memtable's pending inserts), so the memtable outlives this use.
        // Our reservation (Acquire) came after the last reopening, so it
        // sees the pointer stored before it.
        let mem = unsafe { &*mem };
        if self.opts.unordered_write {
            // Visible before it is inserted (the option's point): count
            // the insert so a switch or flush of this memtable waits.
            // Relaxed: the range's finish (Release) orders it before the
            // closer's Acquire.
            mem.pending_inserts.fetch_add(1, Ordering::Relaxed);
            self.seq.finish(range.clone());
            self.insert(mem, range.start, batch, wo);
            // Release: pairs with the waiter's Acquire load.
            mem.pending_inserts.fetch_sub(1, Ordering::Release);
            return Ok(());
        }
        self.insert(mem, range.start, batch, wo);
        self.seq.finish(range.clone());
        // An earlier write may still be inserting: visible means everything
        // up to ours is.
        self.seq.wait_published(range.end);
        Ok(())
    }

    /// Reserves `count` sequence numbers; refuses (reserving nothing) once
    /// they are exhausted.
    fn reserve(&self, count: u64) -> Result<Range<u64>> {
        let range = self.seq.reserve(count);
        if range.end - 1 > MAX_SEQUENCE {
            self.seq.finish(range);
            return Err(Error::InvalidArgument("sequence numbers exhausted".into()));
        }
        Ok(range)
    }

    /// Fails if the append of the record starting at `start` failed, with
    /// the error that failed the log, as the writers it failed see it
    /// (later writers get it wrapped as a background error).
    fn check_logged(&self, start: u64) -> Result<()> {
        // Acquire: pairs with the failing drainer's store.
        if self.log_failed_from.load(Ordering::Acquire) <= start {
            let cause = self.bg_error.lock().clone();
            return Err(cause.unwrap_or_else(|| self.background_error()));
        }
        Ok(())
    }

    /// A `sync` write: through the write group, whose leader numbers, logs,
    /// syncs and inserts the group's batches together (see
    /// `Commit::lead`); returns once the batch is visible.
    fn write_synced(&self, batch: &WriteBatch) -> Result<()> {
        let mut item = SyncItem {
            batch: batch.clone(),
            first: 0,
        };
        self.group
            .write_in_place(self, &mut item)
            .map_err(|e| match e {
                write_group::WriteError::Group(e) => e,
                write_group::WriteError::Stalled => Error::WriteStall,
                write_group::WriteError::LeaderPanicked => Error::Aborted(
                    "the sync group's leader panicked; the write was not applied".into(),
                ),
            })?;
        // Earlier writes may still be inserting: visible means everything
        // up to ours is.
        self.seq.wait_published(item.first + batch.len() as u64);
        Ok(())
    }

    /// Syncs the log for a group whose record starts at `start`, once its
    /// append has been handled: fails if the append failed, or the sync.
    pub(super) fn sync_log(&self, start: u64) -> Result<()> {
        self.check_logged(start)?;
        let target = self.written.published();
        // Acquire: a sync by another group that covered us is complete.
        if self.durable.load(Ordering::Acquire) >= target {
            return Ok(());
        }
        let (syncer, number) = {
            let log = self.log.lock();
            (log.syncer.clone(), log.number)
        };
        let Some(syncer) =
            syncer.filter(|_| self.log_failed_from.load(Ordering::Acquire) >= target)
        else {
            return Err(self.background_error());
        };
        let start = Instant::now();
        if let Err(e) = syncer.sync() {
            // What the log holds after a failed sync is unknown: no record
            // may follow. Refuse writes until `resume` retires the log.
            let err = Error::io(
                format!("syncing {}", log_path(&self.dir, number).display()),
                e,
            );
            self.log.lock().writer = None;
            self.log_failed_from.fetch_min(target, Ordering::AcqRel);
            self.set_bg_error(err.clone());
            self.written.wake_waiters();
            return Err(err);
        }
        self.note_sync_time(start.elapsed());
        // Release: pairs with the Acquire above, in a later group.
        self.durable.fetch_max(target, Ordering::AcqRel);
        Ok(())
    }

    fn insert(&self, mem: &Memtable, first: u64, batch: &WriteBatch, wo: &WriteOptions) {
        if self.opts.allow_concurrent_memtable_write {
            mem.insert_batch(first, batch, true);
        } else {
            let _serial = self.insert_lock.lock();
            mem.insert_batch(first, batch, false);
        }
        if wo.disable_wal && !mem.has_unlogged.load(Ordering::Relaxed) {
            // Relaxed: read on drop, after every write has returned. Stored
            // once, so the line stays shared among writers.
            mem.has_unlogged.store(true, Ordering::Relaxed);
        }
        self.note_growth(mem, batch.data_size());
    }

    /// Sees every record posted below `end` written: appends, in sequence
    /// order and with one append, every record posted so far, unless
    /// another thread is doing so (then waits for it, and tries again).
    ///
    /// Ranges of writes without the log are never posted: the queue counts
    /// them skipped once the sequencer has finished them, which is sound
    /// because a logged write waits here, before it finishes its range,
    /// until its record is taken. A logged write behind an unlogged one
    /// still inserting waits for that insert before its record is written.
    fn drain_log(&self, end: u64) {
        self.log_queue
            .drain_until_skipping(end, self.seq.tracker(), |range, pass| {
                if pass.is_empty() {
                    return;
                }
                let mut log = self.log.lock();
                let LogFile {
                    writer,
                    buffer,
                    number,
                    bytes_written,
                    ..
                } = &mut *log;
                buffer.clear();
                for (_, record) in pass.drain(..) {
                    buffer.extend_from_slice(&record);
                }
                *bytes_written += buffer.len() as u64;
                let appended = match writer {
                    _ if buffer.is_empty() => Ok(()),
                    Some(w) => w.add_framed(buffer).map_err(|e| {
                        Error::io(
                            format!("writing {}", log_path(&self.dir, *number).display()),
                            e,
                        )
                    }),
                    None => Err(self.background_error()),
                };
                if buffer.capacity() > 1 << 20 {
                    *buffer = Vec::new();
                }
                if let Err(e) = appended {
                    // The log may now hold part of these records: no later
                    // record may follow them. The pass's writers fail; the
                    // positions still move on, so nothing waits forever.
                    let first_failure = writer.take().is_some();
                    drop(log);
                    // Release: the waiters' Acquire sees it with the position.
                    self.log_failed_from
                        .fetch_min(range.start, Ordering::AcqRel);
                    if first_failure {
                        self.set_bg_error(e);
                    }
                } else {
                    drop(log);
                }
                // Relaxed: drainers take turns under the queue's drain lock,
                // which orders them.
                let from = self.written_to.swap(range.end, Ordering::Relaxed);
                self.written.finish(from..range.end);
            });
    }

    /// Counts `bytes` of batches this thread gave the memtable and, once it
    /// has given a sixteenth of the buffer (at most 64 KiB), checks the real
    /// size (the arena's per-shard counters: never per write); once the
    /// memtable is full, sets `memtable_full` so the next writer switches it.
    fn note_growth(&self, mem: &Memtable, bytes: usize) {
        thread_local! {
            static UNCHECKED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        }
        let every = (self.opts.write_buffer_size / 16).min(64 << 10);
        let unchecked = UNCHECKED.get() + bytes;
        if unchecked < every {
            UNCHECKED.set(unchecked);
            return;
        }
        UNCHECKED.set(0);
        if mem.memory_usage() >= self.opts.write_buffer_size {
            // Relaxed: a hint; writers re-check under the state lock.
            self.memtable_full.store(true, Ordering::Relaxed);
        }
    }

    /// Folds a sync's duration into `sync_nanos`: an average over about
    /// eight syncs.
    fn note_sync_time(&self, took: Duration) {
        let took = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        // Relaxed: only sync leaders write it, one at a time; readers want
        // an estimate.
        let old = self.sync_nanos.load(Ordering::Relaxed);
        let average = if old == 0 {
            took
        } else {
            old - old / 8 + took / 8
        };
        self.sync_nanos.store(average, Ordering::Relaxed);
    }

    /// Makes sure the mutable memtable has room, switching it when full,
    /// slowed down or stopped while compaction or flushes fall behind.
    fn make_room_for_write(&self, no_slowdown: bool) -> Result<()> {
        loop {
            // Relaxed: a hint writers set; what follows re-checks.
            if !self.memtable_full.load(Ordering::Relaxed) {
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
                    self.bg_cv.wait(&mut st);
                    st.bg.stalls.stops += 1;
                    st.bg.stalls.stop_micros += waited.elapsed().as_micros() as u64;
                    continue;
                }
                Room::Slowdown(due) => {
                    let waited = Instant::now();
                    let pause = due.saturating_duration_since(waited);
                    self.bg_cv.wait_for(&mut st, pause);
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
            let closed = self.seq.close();
            let st = self.state.lock();
            if let Room::Switch = self.room(&st, no_slowdown)? {
                return self.switch_memtable(&closed, st);
            }
            // Another writer switched meanwhile, or a stall began.
        }
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
                let _ = self.fs.remove_file(&path);
                return Err(e);
            }
        };
        // A broken writer (only `resume` replaces one) takes no trailer: its
        // log is retired, by flushing its memtables, before any write
        // reaches the new one.
        if let Some(old) = log.writer.as_mut().filter(|w| !w.is_failed()) {
            // The old log ends with a trailer naming the new one, so a
            // replay can tell a complete log from one cut short. Its
            // unsynced writes must be durable once a later synced write in
            // the new log is.
            let trailer = crate::batch::log_trailer(number);
            let ended = match old.add_record(&trailer) {
                Ok(()) => old.sync(),
                Err(e) => {
                    // Nothing names the new log: as above.
                    let _ = self.fs.remove_file(&path);
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
                    .fetch_min(closed.published(), Ordering::AcqRel);
                self.record_bg_error(err.clone());
                self.bg_cv.notify_all();
                return Err(err);
            }
        }
        let bytes_written = log.bytes_written;
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
        let mem = Arc::new(Memtable::new(&self.opts, number));
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

/// Refuses a batch that one log record cannot hold, before anything is
/// written: the database stays writable.
pub(super) fn check_batch_size(data_size: usize) -> Result<()> {
    let limit = crate::wal::MAX_RECORD_LEN - GROUP_HEADER_LEN;
    if data_size > limit {
        return Err(Error::InvalidArgument(format!(
            "a batch of {data_size} bytes exceeds {limit}, the most one log record holds"
        )));
    }
    Ok(())
}

/// What a closing database still owes the log: a sync of what was written.
pub(super) fn sync_on_close(log: &mut LogFile) {
    if let Some(w) = log.writer.as_mut() {
        let _ = w.sync();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{decode_group, decode_log_trailer};
    use crate::env::PosixFs;
    use crate::filename::{FileKind, parse_file_name};
    use crate::wal::{DBRecoveryMode, LogReader};
    use crate::{DB, Options};

    /// The sequence ranges of the records in the directory's logs, log by
    /// log in file-number order (trailers left out).
    fn logged_ranges(dir: &std::path::Path) -> Vec<Vec<(u64, u64)>> {
        let mut logs: Vec<u64> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(
                |e| match parse_file_name(e.unwrap().file_name().to_str()?) {
                    Some(FileKind::Log(n)) => Some(n),
                    _ => None,
                },
            )
            .collect();
        logs.sort_unstable();
        logs.iter()
            .map(|&n| {
                let path = log_path(dir, n);
                let mut reader =
                    LogReader::open(&PosixFs, &path, DBRecoveryMode::AbsoluteConsistency).unwrap();
                let mut ranges = Vec::new();
                while let Some(record) = reader.next_record().unwrap() {
                    if decode_log_trailer(record).is_some() {
                        continue;
                    }
                    let (first, ops) = decode_group(record).unwrap();
                    ranges.push((first, first + ops.len() as u64));
                }
                ranges
            })
            .collect()
    }

    /// Many writers, some synced (in groups), some unlogged, across
    /// memtable switches: every log holds its records in sequence order,
    /// and the logs follow each other in it (replay refuses anything else).
    #[test]
    fn concurrent_writers_fill_the_logs_in_sequence_order() {
        for buffer in [64 << 10, 64 << 20] {
            let dir = tempfile::tempdir().unwrap();
            let mut o = Options::default();
            o.create_if_missing(true);
            o.set_write_buffer_size(buffer);
            o.set_max_write_buffer_number(64); // keep the logs of frozen memtables a while
            let db = DB::open(&o, dir.path()).unwrap();
            let (threads, per_thread) = (4u64, 1500u64);
            let logged = std::sync::atomic::AtomicU64::new(0);
            std::thread::scope(|s| {
                for t in 0..threads {
                    let (db, logged) = (&db, &logged);
                    s.spawn(move || {
                        for i in 0..per_thread {
                            let mut wo = WriteOptions::default();
                            wo.set_sync(i % 50 == 0);
                            // Unlogged writes get the memtable flushed on
                            // close; with one memtable, keep its log.
                            wo.disable_wal(t == 3 && i % 2 == 1 && buffer < 1 << 20);
                            let mut batch = WriteBatch::new();
                            for k in 0..=(i % 3) {
                                batch.put(format!("{t}-{i}-{k}"), [b'v'; 40]);
                            }
                            let entries = batch.len() as u64;
                            db.write_opt(batch, &wo).unwrap();
                            if !wo.disable_wal {
                                logged.fetch_add(entries, Ordering::Relaxed);
                            }
                        }
                    });
                }
            });
            let switched =
                db.stats().level_files.iter().sum::<usize>() + db.stats().immutable_memtables > 0;
            drop(db);
            let logs = logged_ranges(dir.path());
            let all: Vec<(u64, u64)> = logs.iter().flatten().copied().collect();
            assert!(
                all.windows(2).all(|w| w[0].1 <= w[1].0),
                "out of order: {logs:?}"
            );
            assert!(all.iter().all(|(a, b)| a < b));
            if buffer > 1 << 20 {
                // One memtable, one log, every logged entry in it (sync
                // writes share their group's record).
                assert!(!switched);
                assert_eq!(logs.len(), 1);
                let entries: u64 = all.iter().map(|(a, b)| b - a).sum();
                assert_eq!(entries, logged.into_inner());
            } else {
                assert!(switched, "no memtable switch");
            }
        }
    }

    /// Unlogged writes never touch the log queue: a logged write after
    /// more unlogged sequence numbers than the queue has slots (its post
    /// counts them skipped first), and logged writers beside unlogged ones,
    /// are logged in order, and only they are.
    #[test]
    fn logged_writes_after_many_unlogged_numbers_are_logged_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = Options::default();
        o.create_if_missing(true);
        let db = DB::open(&o, dir.path()).unwrap();
        let mut unlogged = WriteOptions::default();
        unlogged.disable_wal(true);
        let window = db.shared.log_queue.capacity() as u64;
        let mut batch = WriteBatch::new();
        for i in 0..1000 {
            batch.put(format!("u{i}"), b"v");
        }
        for _ in 0..window / 1000 + 2 {
            db.write_opt(batch.clone(), &unlogged).unwrap();
        }
        db.put(b"logged-1", b"v").unwrap();
        let first_logged = db.shared.seq.published() - 1;
        assert!(first_logged > window);
        std::thread::scope(|s| {
            for t in 0..2 {
                let (db, unlogged) = (&db, &unlogged);
                s.spawn(move || {
                    for i in 0..300 {
                        let wo = if (i + t) % 3 == 0 {
                            unlogged.clone()
                        } else {
                            WriteOptions::default()
                        };
                        db.put_opt(format!("{t}-{i}"), b"v", &wo).unwrap();
                    }
                });
            }
        });
        // Read while open: closing flushes unlogged writes, retiring the log.
        let ranges: Vec<(u64, u64)> = logged_ranges(dir.path()).concat();
        drop(db);
        assert_eq!(ranges[0], (first_logged, first_logged + 1));
        assert!(ranges.windows(2).all(|w| w[0].1 <= w[1].0), "out of order");
        assert_eq!(
            ranges.len(),
            1 + 2 * 200,
            "a logged write missing, or an unlogged one logged"
        );
    }

    #[test]
    fn a_batch_larger_than_a_log_record_is_refused_before_it_is_written() {
        let limit = crate::wal::MAX_RECORD_LEN - GROUP_HEADER_LEN;
        assert!(check_batch_size(limit).is_ok());
        let err = check_batch_size(limit + 1).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        assert!(err.to_string().contains("one log record holds"), "{err}");
    }
}
