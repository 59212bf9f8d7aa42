//! The write path: sequence numbers, the log, the memtable insert, and
//! visibility, for many writers at once without a leader.
//!
//! ```text
//! write ─► make_room_for_write (switch a full memtable; stall)
//!       ─► reserve the batch's sequence numbers (one compare-and-swap),
//!          and with the log its record's bytes in the same step
//!       ─► frame the batch's log record (checksums: in parallel)
//!       ─► write it at its bytes: a `pwrite` each into the log file, or,
//!          once two writers have met there, into a stripe file beside it
//!          (the default; with no stripes, always the log file), or a copy
//!          into the mapped log (see `direct_log`); without the log,
//!          nothing
//!       ─► insert into the memtable, beside everyone else
//!       ─► finish the range; wait until every earlier range is finished
//!
//! drained log (`allow_concurrent_log_write` off, or a file system that
//! supports neither direct way):
//!       ─► post the record to the log queue under its sequence range;
//!          whoever finds the drain free writes every posted record, in
//!          sequence order, with one append; the others wait for it and
//!          try again if their record was not in its pass
//!
//! sync write ─► make_room_for_write ─► join the write group: its leader
//!       reserves the group's numbers, writes one record for the group,
//!       syncs once and inserts every member's batch
//! ```
//!
//! Log order is sequence order (recovery stops at a gap): a record's bytes
//! are reserved with its sequence numbers, or, drained, it is posted under
//! its sequence range and drained in range order. A record reaches the
//! operating system before its batch touches the memtable, so a failed log
//! write leaves nothing in the memtable.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use parking_lot::MutexGuard;

use super::Shared;
use crate::batch::{GROUP_HEADER_LEN, WriteBatch, group_header};
use crate::env::{FileSync, SharedFile};
use crate::error::{Error, Result};
use crate::filename::log_path;
use crate::key::MAX_SEQUENCE;
use crate::memtable::Memtable;
use crate::options::WriteOptions;
use crate::perf::{self, PerfMetric};
use crate::wal::{LogWriter, frame_record};

/// The log file the drainer appends to; behind a mutex that the drainer,
/// the memtable switch and the close take (the sync goes through its own
/// handle, so it does not hold appends up).
pub(crate) struct LogFile {
    /// `None` once an append or sync failed: no record may follow.
    pub(crate) writer: Option<LogWriter>,
    pub(crate) number: u64,
    /// Syncs the file from a sync group's leader while appends go on.
    pub(crate) syncer: Option<Arc<dyn FileSync>>,
    /// The file's half that writers write their records into, when it has
    /// one (see `direct_log`): kept here, not only in the writer, so that it
    /// outlives a writer dropped after a failure while writers still write.
    pub(crate) shared: Option<Arc<SharedFile>>,
    /// The bytes of one drain pass, kept between passes.
    buffer: Vec<u8>,
    /// Where the writeback started behind the records has reached (see
    /// `writeback_due`).
    written_back: u64,
    /// Bytes appended to the logs since the database was opened, but for
    /// the records copied into this log directly (see
    /// `total_bytes_written`).
    pub(crate) bytes_written: u64,
}

impl LogFile {
    /// Bytes of records written to the logs since the database was
    /// opened, `reserved` the sequencer's byte count.
    pub(crate) fn total_bytes_written(&self, reserved: u64) -> u64 {
        let copied = match self.shared {
            Some(_) => reserved.saturating_sub(crate::wal::FILE_HEADER_LEN as u64),
            None => 0,
        };
        self.bytes_written + copied
    }

    /// With direct copies, tells the file where they end (`reserved`, the
    /// sequencer's byte count), before it is appended to, synced or
    /// dropped: for a caller that closed the sequencer (or the last
    /// handle), so no copy is under way.
    pub(crate) fn end_copies(&self, reserved: u64) {
        if let Some(shared) = &self.shared {
            shared.set_size(reserved);
        }
    }

    /// Once the records reach `end`, the writeback due of what lies more
    /// than `per` bytes behind them, in steps of `per` (RocksDB's
    /// `wal_bytes_per_sync`), from where the last one ended: the kernel
    /// writes the log out while writers go on, so the `fdatasync` of a
    /// switch, a close or a sync write finds little left to write. It stays
    /// a step behind the records, whose last pages may still be being
    /// written. Started after the log's lock is let go.
    fn writeback_due(&mut self, end: u64, per: u64) -> Option<Writeback> {
        let behind = writeback_target(end, per)?;
        if behind <= self.written_back {
            return None;
        }
        let from = std::mem::replace(&mut self.written_back, behind);
        Some(Writeback {
            syncer: self.syncer.clone()?,
            range: from..behind,
        })
    }

    pub(crate) fn new(writer: LogWriter, number: u64) -> Result<LogFile> {
        let syncer = Some(
            writer
                .sync_handle()
                .map_err(|e| Error::io(format!("opening a sync handle of log {number}"), e))?,
        );
        let shared = writer.shared_writes();
        Ok(LogFile {
            writer: Some(writer),
            number,
            syncer,
            shared,
            buffer: Vec::new(),
            written_back: 0,
            bytes_written: 0,
        })
    }
}

/// What a write's insert leaves behind if it unwinds (a comparator that
/// panicked): its range, were it left unfinished, would hold every later
/// write for ever, and its pending insert every memtable switch. Dropped
/// only while unwinding ([`disarm`](Self::disarm) forgets it), it finishes
/// the range, counts the insert ended, and stops writes: the batch may be
/// partly inserted, so the database takes no write until it is reopened
/// (`resume` refuses the error).
struct InsertUnwinding<'a> {
    shared: &'a Shared,
    /// The write's range, still to be finished.
    range: Option<Range<u64>>,
    /// The memtable whose `pending_inserts` counts this insert
    /// (`unordered_write`).
    pending: Option<&'a Memtable>,
}

impl InsertUnwinding<'_> {
    /// The insert returned: nothing to undo.
    #[inline]
    fn disarm(self) {
        std::mem::forget(self);
    }
}

impl Drop for InsertUnwinding<'_> {
    fn drop(&mut self) {
        if let Some(mem) = self.pending {
            // Release: as the insert's own decrement.
            mem.pending_inserts.fetch_sub(1, Ordering::Release);
        }
        if let Some(range) = self.range.take() {
            self.shared.seq.finish(range);
        }
        // After the two above: a switch may hold the state lock, which
        // this takes, while it waits for them.
        self.shared.set_bg_error(Error::Aborted(
            "a write panicked while it inserted (a comparator that panicked?); \
             its batch may be partly visible, and writes stop until the \
             database is reopened"
                .into(),
        ));
    }
}

/// A range of a log to start writing back (see `LogFile::writeback_due`).
struct Writeback {
    syncer: Arc<dyn FileSync>,
    range: Range<u64>,
}

impl Writeback {
    /// Best effort: a failure only leaves the pages to the next
    /// `fdatasync`.
    fn start(self) {
        let Range { start, end } = self.range;
        let _ = self.syncer.start_writeback(start, end - start);
    }
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
        // The group's record and its sync.
        let logging = perf::Timer::start();
        let logged = self.log_and_sync_group(members);
        logging.stop(PerfMetric::WriteWalTime);
        // The leader inserts every batch: waking each member to insert its
        // own was slower (fillrandom, 32 sync writers on 2 cores: 59-60 k
        // ops/s against 83-90 k), each wake-up a context switch.
        Ok(write_group::Lead::serial(logged?))
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
        // The group finishes its range whatever happens here (the write
        // group catches the panic); writes stop all the same.
        let unwinding = InsertUnwinding {
            shared: self,
            range: None,
            pending: None,
        };
        self.insert(mem, item.first, &item.batch, &WriteOptions::default());
        unwinding.disarm();
    }

    fn publish(&self, range: Range<u64>) {
        self.seq.finish(range);
    }
}

impl Shared {
    /// Writes `batch` (not empty, its sizes checked): see the module docs.
    pub(super) fn write(&self, batch: &WriteBatch, wo: &WriteOptions) -> Result<()> {
        let whole = perf::OutsidePartsTimer::start();
        let written = self.write_timed_in_parts(batch, wo);
        whole.stop(PerfMetric::WritePreAndPostProcessTime);
        written
    }

    /// [`Self::write`], less the timer of the whole write.
    fn write_timed_in_parts(&self, batch: &WriteBatch, wo: &WriteOptions) -> Result<()> {
        self.make_room_for_write(wo.no_slowdown)?;
        if wo.sync {
            return self.write_synced(batch);
        }
        let count = batch.len() as u64;
        let range = if wo.disable_wal {
            // Without the log, the queue is left alone: the drainers count
            // the range skipped once it is finished (see `drain_log`).
            self.reserve(count)?
        } else {
            let logging = perf::Timer::start();
            let logged = self.reserve_and_log(count, &[batch.records()]);
            logging.stop(PerfMetric::WriteWalTime);
            logged?
        };
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
            let unwinding = InsertUnwinding {
                shared: self,
                range: None,
                pending: Some(mem),
            };
            self.insert(mem, range.start, batch, wo);
            unwinding.disarm();
            // Release: pairs with the waiter's Acquire load.
            mem.pending_inserts.fetch_sub(1, Ordering::Release);
            // Reads stop at the published position: until every earlier
            // range is finished, ours is not visible, not even to us. Each
            // finishes before its insert, so this waits for no insert, only
            // for earlier writers between their reservation and their
            // finish (with the log, for their records: recovery keeps ours
            // only once theirs are in).
            self.wait_published(range.end);
            if wo.disable_wal || !self.opts.logs_take_shared_writes() {
                return Ok(());
            }
            return self.check_logged(range.start);
        }
        let unwinding = InsertUnwinding {
            shared: self,
            range: Some(range.clone()),
            pending: None,
        };
        self.insert(mem, range.start, batch, wo);
        unwinding.disarm();
        self.seq.finish(range.clone());
        // An earlier write may still be inserting: visible means everything
        // up to ours is.
        self.wait_published(range.end);
        if wo.disable_wal {
            return Ok(());
        }
        // Writing its own record beside ours, an earlier writer may have
        // failed the log since ours was checked: our record then follows
        // a gap that recovery stops at, and the write fails.
        self.check_logged(range.start)
    }

    /// Reserves `count` sequence numbers for the records of `batches` and
    /// logs them as one record: copied into the mapped log by this thread
    /// (see `direct_log`), or posted to the log queue and seen written (by
    /// this thread's drain pass or another's; the append may have failed,
    /// which `check_logged` tells). A failed copy fails the log, and the
    /// range is finished empty.
    fn reserve_and_log(&self, count: u64, batches: &[&[u8]]) -> Result<Range<u64>> {
        let records_len = batches.iter().map(|b| b.len()).sum();
        let (range, bytes) = self.reserve_logged(count, records_len)?;
        if let Some(log) = self.direct_log() {
            if let Err(e) = self.copy_record(log, bytes.clone(), range.start, count, batches) {
                return Err(self.fail_log(range, e));
            }
            self.start_writeback_behind(bytes);
        } else {
            let mut record = Vec::new();
            frame_group(range.start, count, batches, &mut record);
            self.log_queue
                .post_skipping(range.clone(), record, self.seq.tracker());
            // Returns once the pass that took our record has been handled,
            // whether the append worked or not.
            self.drain_log(range.end);
        }
        Ok(range)
    }

    /// A record numbered `range` could not be copied into the log: no
    /// record may follow it there (recovery stops at the gap), so the log
    /// is failed from it on, and the range is finished empty. Returns the
    /// error for the writer.
    fn fail_log(&self, range: Range<u64>, e: Error) -> Error {
        self.fail_log_from(self.log.lock(), range.start, e.clone());
        self.seq.finish(range);
        e
    }

    /// Fails the current log (`log`, locked) from sequence number `from` on:
    /// its end is now unknown (a record may be torn, or unsynced), so no
    /// record may follow. Its writer is dropped, which refuses writes until
    /// `resume` retires the log, and writes at or past `from` fail. The
    /// first failure sets the background error.
    pub(super) fn fail_log_from(&self, mut log: MutexGuard<'_, LogFile>, from: u64, e: Error) {
        let first_failure = log.writer.take().is_some();
        drop(log);
        // Release: the waiters' Acquire sees it with the position.
        self.log_failed_from.fetch_min(from, Ordering::AcqRel);
        if first_failure {
            self.set_bg_error(e);
        }
    }

    /// Reserves `count` sequence numbers; refuses (reserving nothing) once
    /// they are exhausted.
    pub(super) fn reserve(&self, count: u64) -> Result<Range<u64>> {
        self.refuse_exhausted(self.seq.reserve(count))
    }

    /// `range`, just reserved, unless it runs past the last sequence
    /// number: then it is finished empty and the write refused.
    pub(super) fn refuse_exhausted(&self, range: Range<u64>) -> Result<Range<u64>> {
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
        // A leader's logging and inserts for the group are its own parts;
        // the rest is waiting for the group.
        let in_group = perf::OutsidePartsTimer::start();
        let done = self.group.write_in_place(self, &mut item);
        in_group.stop(PerfMetric::WriteThreadWaitNanos);
        done.map_err(|e| match e {
            write_group::WriteError::Group(e) => e,
            write_group::WriteError::Stalled => Error::WriteStall,
            write_group::WriteError::LeaderPanicked => {
                Error::Aborted("the sync group's leader panicked; the write was not applied".into())
            }
        })?;
        // Earlier writes may still be inserting: visible means everything
        // up to ours is.
        self.wait_published(item.first + batch.len() as u64);
        Ok(())
    }

    /// Waits until every write numbered below `end` is visible, timed as
    /// a wait for other writers.
    fn wait_published(&self, end: u64) {
        let waiting = perf::Timer::start();
        self.seq.wait_published(end);
        waiting.stop(PerfMetric::WriteThreadWaitNanos);
    }

    /// Numbers a sync group's batches with one reservation, logs them as
    /// one record and syncs the log; tells each member its first number.
    /// Returns the group's range.
    fn log_and_sync_group(
        &self,
        members: &mut write_group::GroupMembers<'_, SyncItem>,
    ) -> Result<Range<u64>> {
        let total: u64 = members.iter().map(|m| m.batch.len() as u64).sum();
        let batches: Vec<&[u8]> = members.iter().map(|m| m.batch.records()).collect();
        let range = self.reserve_and_log(total, &batches)?;
        let target = if self.copies_directly() {
            // Every record before ours is in the log once the ranges before
            // ours are published (each is copied before it is finished).
            self.seq.wait_published(range.start);
            range.end
        } else {
            self.log_queue.taken()
        };
        let mut first = range.start;
        for m in members.iter_mut() {
            m.first = first;
            first += m.batch.len() as u64;
        }
        if let Err(e) = self.sync_log(range.start, target) {
            // Nothing was inserted: the range is finished empty.
            self.seq.finish(range);
            return Err(e);
        }
        Ok(range)
    }

    /// Syncs the log for a group whose record starts at `start`, once its
    /// append has been handled and every record below `target` is in the
    /// log: fails if the append failed, or the sync.
    pub(super) fn sync_log(&self, start: u64, target: u64) -> Result<()> {
        self.check_logged(start)?;
        // Acquire: a sync by another group that covered us is complete.
        if self.durable.load(Ordering::Acquire) >= target {
            return Ok(());
        }
        let (syncer, number) = self.log_syncer();
        let Some(syncer) =
            syncer.filter(|_| self.log_failed_from.load(Ordering::Acquire) >= target)
        else {
            return Err(self.background_error());
        };
        let start = Instant::now();
        self.sync_or_fail_log(&*syncer, number, target)?;
        self.note_sync_time(start.elapsed());
        // Release: pairs with the Acquire above, in a later group.
        self.durable.fetch_max(target, Ordering::AcqRel);
        Ok(())
    }

    /// The current log's sync handle (if it has one) and number, taken
    /// under the log's lock; the sync itself runs without it, so appends
    /// go on meanwhile.
    pub(super) fn log_syncer(&self) -> (Option<Arc<dyn FileSync>>, u64) {
        let log = self.log.lock();
        (log.syncer.clone(), log.number)
    }

    /// Syncs log `number` through `syncer`. What the log holds after a
    /// failed sync is unknown, so a failure fails the log from `from` on (no
    /// record may follow; writes are refused until `resume` retires the log)
    /// and is returned.
    pub(super) fn sync_or_fail_log(
        &self,
        syncer: &dyn FileSync,
        number: u64,
        from: u64,
    ) -> Result<()> {
        syncer.sync().map_err(|e| {
            let err = Error::io(
                format!("syncing {}", log_path(&self.dir, number).display()),
                e,
            );
            self.fail_log_from(self.log.lock(), from, err.clone());
            err
        })
    }

    fn insert(&self, mem: &Memtable, first: u64, batch: &WriteBatch, wo: &WriteOptions) {
        let inserting = perf::Timer::start();
        if self.opts.allow_concurrent_memtable_write {
            mem.insert_batch(first, batch, true);
        } else {
            let _serial = self.insert_lock.lock();
            mem.insert_batch(first, batch, false);
        }
        inserting.stop(PerfMetric::WriteMemtableTime);
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
                    _ if buffer.is_empty() => Ok(0),
                    Some(w) => w.add_framed(buffer).map(|()| w.size()).map_err(|e| {
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
                match appended {
                    Ok(end) => {
                        let due = log.writeback_due(end, self.opts.wal_bytes_per_sync);
                        drop(log);
                        if let Some(due) = due {
                            due.start();
                        }
                    }
                    // The log may now hold part of these records. The pass's
                    // writers fail; the positions still move on, so nothing
                    // waits forever.
                    Err(e) => self.fail_log_from(log, range.start, e),
                }
                // The queue's drained position moves past the pass once we
                // return: writers waiting for it see the append's outcome.
            });
    }

    /// Starts the writeback due (see `LogFile::writeback_due`) for a writer
    /// that wrote the bytes `record` of the current log itself (holding its
    /// range, so the log is still the current one). Only a writer whose
    /// record crossed a step takes the log's lock, and only if it is free:
    /// a later one catches up.
    fn start_writeback_behind(&self, record: Range<u64>) {
        let per = self.opts.wal_bytes_per_sync;
        if per == 0 || record.end / per == record.start / per {
            return;
        }
        let due = self
            .log
            .try_lock()
            .and_then(|mut log| log.writeback_due(record.end, per));
        if let Some(due) = due {
            due.start();
        }
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
        // The pool running low: the flush thread faults blocks in ahead, so
        // that no writer faults a fresh block's pages in (a 2 MiB page
        // takes hundreds of microseconds) while the writes after its own
        // wait for it. Asked once until it has warmed the pool. Relaxed: a
        // request; the lock orders the wake-up with the thread's check.
        let low = crate::memtable::pool_warm_target(self.opts.write_buffer_size) / 2;
        if !self.warm_wanted.load(Ordering::Relaxed)
            && self.block_pool.held_bytes() < low
            && !self.warm_wanted.swap(true, Ordering::Relaxed)
        {
            // Never waited for: a memtable switch holds the state lock while
            // it waits for `unordered_write` inserts, this one maybe among
            // them. When the lock is busy the request is withdrawn, and a
            // check after the next writes asks again. Relaxed: as above.
            match self.state.try_lock() {
                Some(_st) => {
                    self.bg_cv.notify_all();
                }
                None => self.warm_wanted.store(false, Ordering::Relaxed),
            }
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
}

/// Where writeback behind records ending at `end` may reach, in steps of
/// `per` bytes (0: none), a step behind the last step the records reached;
/// `None` if nowhere yet.
fn writeback_target(end: u64, per: u64) -> Option<u64> {
    if per == 0 {
        return None;
    }
    let behind = (end / per).checked_sub(1)? * per;
    (behind > 0).then_some(behind)
}

/// Frames into `out` the log record of `count` entries numbered from
/// `first`: the group header, then the records of `batches` back to back.
pub(super) fn frame_group(first: u64, count: u64, batches: &[&[u8]], out: &mut Vec<u8>) {
    let header = group_header(first, count as u32);
    // Sizes were checked against the record limit up front (a batch by
    // `check_batch_size`, a group by `Options::validate`'s
    // `max_group_bytes`).
    let framed = match batches {
        // One batch, the common case: no list of parts to allocate.
        [batch] => frame_record(&[&header, batch], out),
        _ => {
            let parts: Vec<&[u8]> = std::iter::once(&header[..])
                .chain(batches.iter().copied())
                .collect();
            frame_record(&parts, out)
        }
    };
    framed.expect("a batch or group within the log record limit");
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

/// What a closing database still owes the log: a sync of what was written
/// (`reserved`: the sequencer's byte count, the end of the direct copies).
/// A log written positionally then ends with the trailer of a closed log
/// ([`NO_NEXT_LOG`](crate::batch::NO_NEXT_LOG)), written once its records
/// are durable (pages reach the disk in any order: a trailer that reached
/// it before a record did would make a crash's writes in flight look like
/// damage), and synced.
pub(super) fn sync_on_close(log: &mut LogFile, reserved: u64) {
    log.end_copies(reserved);
    let positional = log.shared.as_ref().is_some_and(|s| s.is_positional());
    // A log whose write failed has no writer (see `fail_log_from`).
    if let Some(w) = log.writer.as_mut() {
        if positional && w.sync().is_ok() {
            let _ = w.add_record(&crate::batch::log_trailer(crate::batch::NO_NEXT_LOG));
        }
        let _ = w.sync();
    }
}

#[cfg(test)]
mod tests;
