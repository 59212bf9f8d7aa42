//! Background errors: how they stop writes, and how writes resume.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{DBWithThreadMode, Shared, ThreadMode};
use crate::error::{Error, Result};
use crate::info_log::info;
#[cfg(doc)] // for the links in the docs
use crate::options::Options;
use crate::wal::LogWriter;

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// Lets writes in again after a background error stopped them (a log
    /// write, a flush or a compaction that failed), as RocksDB's
    /// `DB::Resume`: a broken log is replaced, every frozen memtable is
    /// flushed so that the broken log is no longer needed, and the error is
    /// cleared. Nothing acknowledged is lost. Does nothing without an error.
    /// After a full disk the database also retries on its own
    /// ([`Options::set_max_bgerror_resume_count`]).
    ///
    /// # Errors
    ///
    /// The error that stops the steps (the disk is still full, say), after
    /// which writes stay stopped; or, when the background error is not an
    /// I/O error (corruption is not resumed from), `Error::BackgroundError`
    /// holding it, as writes get it.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp};
    /// use lsm_demo::{DB, Error, Options, WriteOptions};
    /// use std::sync::Arc;
    ///
    /// let fs = FaultInjectionFs::new();
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true);
    /// let db = DB::open_with_fs(&opts, "/db", Arc::new(fs.clone())).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// fs.fail_next(FaultOp::Append, 1); // the next log write fails
    /// assert!(db.put(b"b", b"2").is_err());
    /// assert!(matches!(db.put(b"c", b"3"), Err(Error::BackgroundError(_))));
    /// db.resume().unwrap();
    /// db.put(b"c", b"3").unwrap();
    /// assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    /// assert_eq!(db.get(b"b").unwrap(), None); // the failed write
    /// ```
    pub fn resume(&self) -> Result<()> {
        self.shared.resume()
    }
}

impl Shared {
    pub(super) fn check_bg_error(&self) -> Result<()> {
        // Acquire: pairs with `record_bg_error`'s Release, so
        // `background_error` finds the error.
        if self.has_bg_error.load(Ordering::Acquire) {
            return Err(self.background_error());
        }
        Ok(())
    }

    /// The error writers get while a background error stops writes.
    pub(super) fn background_error(&self) -> Error {
        let cause = self.bg_error.lock().clone();
        Error::BackgroundError(Arc::new(cause.unwrap_or_else(|| {
            Error::Aborted("writes were stopped by an earlier error".into())
        })))
    }

    /// Lets writes in again after a background error: a broken log is
    /// replaced (freezing the memtable it held), every frozen memtable is
    /// flushed, so that no replay ever needs the broken log, and only then
    /// is the error cleared. Writers fail meanwhile (the error is still set).
    pub(super) fn resume(&self) -> Result<()> {
        // Acquire: pairs with `record_bg_error`'s Release.
        if !self.has_bg_error.load(Ordering::Acquire) {
            return Ok(());
        }
        // Lock order: the sequencer's close (writes wait until the log is
        // replaced), then the state lock.
        let closed = self.seq.close();
        let mut st = self.state.lock();
        // A flush or compaction that was running when the error came ends first.
        while st.bg.running_jobs > 0 {
            self.bg_cv.wait(&mut st);
        }
        // Acquire: as above; another `resume` may have cleared it.
        if !self.has_bg_error.load(Ordering::Acquire) {
            return Ok(()); // resumed meanwhile
        }
        let cause = self.background_error();
        if !matches!(
            cause.kind(),
            crate::ErrorKind::IOError | crate::ErrorKind::NoSpace
        ) {
            return Err(cause);
        }
        info!(self.info_log, "resuming after: {cause}");
        let log_broken = (self.log.lock().writer.as_ref()).is_none_or(LogWriter::is_failed);
        if log_broken {
            self.install_new_log(&closed, &mut st)?;
        }
        drop(st);
        // Writes stay held off until no replay can need the broken log: a
        // record in the new log could not be replayed past it.
        while !self.state.lock().version.imm.is_empty() {
            self.flush_oldest()?;
        }
        *self.bg_error.lock() = None;
        // Release: a writer that sees it clear (Acquire) sees the new log and
        // the flushes.
        self.has_bg_error.store(false, Ordering::Release);
        drop(closed);
        info!(self.info_log, "resumed; writes go on");
        let _st = self.state.lock();
        self.bg_cv.notify_all();
        Ok(())
    }

    pub(super) fn set_bg_error(&self, e: Error) {
        self.record_bg_error(e);
        // Wake writers waiting for room, so they see the error. The error
        // slot is released first: `make_room_for_write` holds the state
        // lock while it reads the slot, so holding both here would invert
        // the lock order.
        let _st = self.state.lock();
        self.bg_cv.notify_all();
    }

    /// [`Self::set_bg_error`] for a caller that holds the state lock (and
    /// notifies `bg_cv` itself).
    pub(super) fn record_bg_error(&self, e: Error) {
        info!(self.info_log, "background error, writes stop: {e}");
        {
            let mut slot = self.bg_error.lock();
            if slot.is_none() {
                *slot = Some(e);
            }
        }
        // Release: whoever sees the flag (Acquire) finds the error in the slot.
        self.has_bg_error.store(true, Ordering::Release);
    }
}
