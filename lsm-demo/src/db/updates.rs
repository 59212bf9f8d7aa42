//! The logged batches from a sequence number on, as RocksDB's
//! `GetUpdatesSince`: for replication and change capture.

use std::collections::VecDeque;
use std::path::PathBuf;

use super::{DBWithThreadMode, ThreadMode};
use crate::batch::{WriteBatch, decode_log_trailer};
use crate::error::{Error, Result};
use crate::filename::log_path;
use crate::recovery::wal_error;
use crate::wal::{DBRecoveryMode, LogReader};

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// An iterator over the batches in the logs from the one holding
    /// sequence number `seq` on, each with the sequence number of its first
    /// operation, up to the last write visible when it was made (RocksDB's
    /// `GetUpdatesSince`). A batch is a log record: the writes of one sync
    /// group come as one batch, as in RocksDB, and carry their
    /// [`put_log_data`](WriteBatch::put_log_data) blobs
    /// ([`WriteBatch::log_data`]). A range deletion comes as
    /// [`BatchOp::DeleteRange`](crate::BatchOp::DeleteRange) (and to a
    /// [`WriteBatchIterator`](crate::WriteBatchIterator) through its
    /// `delete_range`). Writes made with `disable_wal` are not in it.
    ///
    /// The engine keeps only the logs of memtables not yet flushed (it has
    /// no log archive): once a flush retired the log holding `seq`, the
    /// call fails.
    ///
    /// # Errors
    ///
    /// [`Error::UpdatesUnavailable`] when the logs no longer reach back to `seq`, or
    /// `seq` is past the next sequence number to be written;
    /// [`Error::Corruption`] or an I/O error when a log cannot be read.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, WriteBatch};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap(); // sequence 1
    /// let mut batch = WriteBatch::new();
    /// batch.put(b"b", b"2"); // sequence 2
    /// batch.delete(b"a"); // sequence 3
    /// batch.put_log_data(b"from the primary");
    /// db.write(batch).unwrap();
    ///
    /// let updates: Vec<(u64, WriteBatch)> =
    ///     db.get_updates_since(2).unwrap().collect::<Result<_, _>>().unwrap();
    /// assert_eq!(updates.len(), 1);
    /// let (first, batch) = &updates[0];
    /// assert_eq!((*first, batch.len()), (2, 2));
    /// assert_eq!(batch.log_data().collect::<Vec<_>>(), [b"from the primary"]);
    ///
    /// db.flush().unwrap(); // retires the log
    /// assert!(db.get_updates_since(1).is_err());
    /// ```
    pub fn get_updates_since(&self, seq: u64) -> Result<DBWALIterator> {
        let visible = self.shared.visible();
        if seq > visible + 1 {
            return Err(Error::UpdatesUnavailable(format!(
                "sequence {seq} is not written yet (the last is {visible})"
            )));
        }
        // The logs of the frozen memtables, oldest first, then the current
        // one; open now, so that a flush that deletes one later does not
        // take it from under the iterator.
        let numbers: Vec<u64> = {
            let v = self.shared.current();
            v.imm
                .iter()
                .rev()
                .chain([&v.mem])
                .map(|m| m.log_number)
                .collect()
        };
        let mut logs = VecDeque::new();
        for number in numbers {
            let path = log_path(&self.shared.dir, number);
            let mode = DBRecoveryMode::TolerateCorruptedTailRecords;
            match LogReader::open(&*self.shared.fs, &path, mode) {
                Ok(reader) => logs.push_back((path, reader)),
                // A memtable replayed at open keeps its log number after
                // the log itself is gone: nothing of it can be read.
                Err(_) if !self.shared.fs.exists(&path) => {}
                Err(e) => return Err(wal_error(&path, e)),
            }
        }
        let mut it = DBWALIterator {
            logs,
            from: seq,
            visible,
            peeked: None,
        };
        // The first batch must hold `seq`: one that starts later means the
        // records before it are gone.
        match it.peek_first()? {
            Some(first) if first > seq => Err(Error::UpdatesUnavailable(format!(
                "the logs no longer reach back to sequence {seq} (the oldest kept is {first})"
            ))),
            None if seq <= visible => Err(Error::UpdatesUnavailable(format!(
                "the logs no longer reach back to sequence {seq}: it was flushed"
            ))),
            _ => Ok(it),
        }
    }
}

/// The batches of [`DB::get_updates_since`], in sequence order: each
/// `(first sequence number, batch)`, or the error that ended the reading.
///
/// [`DB::get_updates_since`]: crate::DBWithThreadMode::get_updates_since
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// for k in [b"a", b"b", b"c"] {
///     db.put(k, b"v").unwrap();
/// }
/// let firsts: Vec<u64> = db.get_updates_since(1).unwrap().map(|u| u.unwrap().0).collect();
/// assert_eq!(firsts, [1, 2, 3]);
/// ```
pub struct DBWALIterator {
    /// The logs left to read, the one being read first.
    logs: VecDeque<(PathBuf, LogReader)>,
    /// Batches ending at or below it are skipped.
    from: u64,
    /// Batches starting above it are not returned (not visible yet when the
    /// iterator was made).
    visible: u64,
    /// The first batch, read ahead when the iterator was made.
    peeked: Option<(u64, WriteBatch)>,
}

impl std::fmt::Debug for DBWALIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DBWALIterator")
            .field("logs_left", &self.logs.len())
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

impl DBWALIterator {
    /// The next batch that ends after `from`, as `(first, batch)`.
    fn next_batch(&mut self) -> Result<Option<(u64, WriteBatch)>> {
        while let Some((path, reader)) = self.logs.front_mut() {
            let Some(record) = reader.next_record().map_err(|e| wal_error(path, e))? else {
                self.logs.pop_front();
                continue;
            };
            if decode_log_trailer(record).is_some() {
                continue;
            }
            // A log record is a batch's representation with its first
            // sequence number in the header; the batch rebuilt from it
            // carries none, as `WriteBatch::data` gives it.
            let batch = WriteBatch::try_from_data(record).map_err(|e| {
                Error::Corruption(format!(
                    "{}: a record that does not decode: {}",
                    path.display(),
                    e.0
                ))
            })?;
            let first = u64::from_le_bytes(record[..8].try_into().expect("a decoded header"));
            if batch.is_empty() || first + batch.len() as u64 <= self.from {
                continue;
            }
            if first > self.visible {
                self.logs.clear();
                return Ok(None);
            }
            return Ok(Some((first, batch)));
        }
        Ok(None)
    }

    /// Reads ahead to the first batch and keeps it for `next`; its first
    /// sequence number.
    fn peek_first(&mut self) -> Result<Option<u64>> {
        self.peeked = self.next_batch()?;
        Ok(self.peeked.as_ref().map(|(first, _)| *first))
    }
}

impl Iterator for DBWALIterator {
    type Item = Result<(u64, WriteBatch)>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(peeked) = self.peeked.take() {
            return Some(Ok(peeked));
        }
        match self.next_batch() {
            Ok(next) => next.map(Ok),
            Err(e) => {
                // An error ends the iteration.
                self.logs.clear();
                Some(Err(e))
            }
        }
    }
}
