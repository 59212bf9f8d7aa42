//! Logged writes that write their own records into the log, beside each
//! other: with a `pwrite` each (`allow_concurrent_log_write`, the default)
//! or a copy into a map of the log (`allow_mmap_writes`), where the file
//! system allows it. No drain pass, no queue slot; with stripes, one
//! uncontended lock of the stripe a writer writes.
//!
//! ```text
//! write ─► reserve the batch's sequence numbers and its record's bytes
//!          in the log (one compare-and-swap: the bytes follow sequence
//!          order, so log order is sequence order, as recovery needs)
//!       ─► frame the record and write it at its bytes
//!       ─► insert, finish the range, wait until it is published
//!       ─► check that no earlier record failed (then ours follows a gap)
//! ```
//!
//! A record is in the page cache once its write ends, so every record below
//! the published position is in the log: a sync group's leader waits for
//! the ranges before its own to be published, then syncs. A mapped log
//! grows (blocks reserved with `fallocate`, pages faulted in) ahead of the
//! reservations, by writers that hold no range: a reservation never runs
//! past the grown end (the sequencer's byte limit), so a copy never waits
//! for a growth and never fails. A `pwrite` extends the file itself, and
//! can fail (a full disk, an I/O error): its writer fails the log from its
//! record on, and every writer after it, already written or not, fails
//! too, since recovery stops at the gap. Growing takes the log mutex, which
//! also orders it with the switch to a new log.

use std::ops::Range;
use std::sync::atomic::Ordering;

use super::Shared;
use super::write::{LogFile, frame_group};
use crate::batch::GROUP_HEADER_LEN;
use crate::env::SharedFile;
use crate::error::{Error, Result};
use crate::filename::log_path;
use crate::wal::{LogWriter, RECORD_HEADER_LEN};

/// How far ahead of the reservations a writer grows the log: a writer that
/// finds less room grows it before it reserves.
const GROW_AHEAD: u64 = 1 << 20;

impl Shared {
    /// The log that writers write their records into, or `None` while
    /// the current log is written by drain passes (with neither option, or
    /// on a file system that supports neither way). Load it
    /// after reserving: the log is only replaced while the sequencer is
    /// closed, and the bytes of a reservation are that log's.
    pub(super) fn direct_log(&self) -> Option<&SharedFile> {
        // Acquire: pairs with the Release store in `install_direct_log`.
        let log = self.direct_log.load(Ordering::Acquire);
        // SAFETY: a non-null pointer points into the `Arc` held by the
        // current `LogFile::shared`, which is replaced only while the
        // sequencer is closed, so only once every range reserved before has
        // finished; callers use it while they hold an unfinished range
        // reserved before this load (or, closing, the closed sequencer).
        unsafe { log.as_ref() }
    }

    /// Whether writers write their own records into the current log (see
    /// `direct_log`); a snapshot for a caller holding no range.
    pub(super) fn copies_directly(&self) -> bool {
        // Relaxed: only the pointer's nullness is read, nothing behind it.
        !self.direct_log.load(Ordering::Relaxed).is_null()
    }

    /// Makes `log` (the new current log) the one writers copy into if it
    /// has a shared half, its bytes starting where its writer ends (after
    /// the log's header); for `install_new_log` and open, with the
    /// sequencer closed and the log mutex held.
    pub(super) fn install_direct_log(&self, closed: &ordered_publish::Closed<'_>, log: &LogFile) {
        let shared = log.shared.as_deref();
        match shared {
            // Reservations may run to the grown end; growing raises it.
            Some(shared) => {
                let size = log.writer.as_ref().map_or(0, LogWriter::size);
                closed.restart_bytes(size, shared.grown());
                // A striped log's stripes write back behind themselves (the
                // log's own writeback covers the log file).
                shared.set_stripe_writeback(self.opts.wal_bytes_per_sync);
            }
            // Drain passes take the records: the bytes mean nothing.
            None => closed.restart_bytes(0, u64::MAX),
        }
        let ptr = shared.map_or(std::ptr::null_mut(), |l| std::ptr::from_ref(l).cast_mut());
        // Release: reservations after the reopening acquire it.
        self.direct_log.store(ptr, Ordering::Release);
    }

    /// Reserves `count` sequence numbers for a logged batch of
    /// `records_len` bytes of records and, with `allow_mmap_writes`, its
    /// record's bytes in the log (used only if the log turns out to take
    /// direct copies: see `direct_log`). Grows the log first when it is
    /// short, holding no range.
    pub(super) fn reserve_logged(
        &self,
        count: u64,
        records_len: usize,
    ) -> Result<(Range<u64>, Range<u64>)> {
        if !self.opts.logs_take_shared_writes() {
            return Ok((self.reserve(count)?, 0..0));
        }
        let bytes = (RECORD_HEADER_LEN + GROUP_HEADER_LEN + records_len) as u64;
        // Only a mapped log grows ahead of the writes (a `pwrite` extends
        // the file itself: its byte limit is never reached), so only its
        // writers look: the reservation word's load is a read of the line
        // the compare-and-swap below takes anyway. Two loads, not one
        // snapshot: a switch in between can make them disagree, which at
        // worst grows early or late.
        if self.opts.allow_mmap_writes
            && self
                .seq
                .byte_limit()
                .saturating_sub(self.seq.reserved_bytes())
                < GROW_AHEAD
        {
            self.grow_log(bytes, false)?;
        }
        loop {
            if let Some((range, reserved)) = self.seq.reserve_with_bytes(count, bytes) {
                // Refused, its bytes stay a gap in the log, past which
                // recovery reads nothing; no record follows it: every later
                // range is exhausted too.
                return Ok((self.refuse_exhausted(range)?, reserved));
            }
            // Past the grown end: grow, then try again.
            self.grow_log(bytes, true)?;
        }
    }

    /// Grows the current log (if writers copy into it) to hold `need` more
    /// bytes past the reservations, and `GROW_AHEAD` beyond, then lets
    /// reservations run that far. Unless `wait`, leaves it to a thread
    /// already growing (or switching) the log.
    fn grow_log(&self, need: u64, wait: bool) -> Result<()> {
        let log = if wait {
            self.log.lock()
        } else {
            match self.log.try_lock() {
                Some(log) => log,
                None => return Ok(()),
            }
        };
        let Some(shared) = log.shared.as_deref() else {
            return Ok(());
        };
        let end = self.seq.reserved_bytes() + need + GROW_AHEAD;
        shared.grow_to(end).map_err(|e| {
            Error::io(
                format!("growing {}", log_path(&self.dir, log.number).display()),
                e,
            )
        })?;
        // Under the log mutex: the log is still the current one (a switch
        // takes the mutex to replace it), so the limit is its own.
        self.seq.raise_byte_limit(shared.grown());
        Ok(())
    }

    /// Frames the record of `count` entries numbered from `first` (the
    /// records of `batches`) and writes it into `log` at `at`, where its
    /// writer reserved its bytes. Fails where a `pwrite` fails; a copy into
    /// a map fails only if it had to grow the file and could not, which
    /// the byte limit rules out.
    pub(super) fn copy_record(
        &self,
        log: &SharedFile,
        at: Range<u64>,
        first: u64,
        count: u64,
        batches: &[&[u8]],
    ) -> Result<()> {
        thread_local! {
            /// A writer's framed record, kept between writes.
            static RECORD: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        RECORD.with_borrow_mut(|record| {
            record.clear();
            frame_group(first, count, batches, record);
            debug_assert_eq!(record.len() as u64, at.end - at.start);
            // SAFETY: `at` came from this writer's reservation, and the
            // sequencer hands out each byte once, so no other thread writes
            // these bytes; the log's own handle neither appends nor syncs
            // while the sequencer is open (only a switch, with it closed,
            // and the close do). The reservation ends below the byte limit,
            // which growing raises only once the log is grown past it, so
            // the write does not grow the file.
            let copied = unsafe { log.write_at(at.start, record) };
            if record.capacity() > 1 << 20 {
                *record = Vec::new();
            }
            copied.map_err(|e| Error::io(format!("writing a log in {}", self.dir.display()), e))
        })
    }
}
