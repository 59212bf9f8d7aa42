//! The database: open and recovery, the write path (in `write`), reads,
//! snapshots; the flush and compaction threads are in `background`.
//!
//! # The write path
//!
//! ```text
//! put ─► make_room_for_write (switch a full memtable under the state lock
//!        and a closed sequencer; stall while flushes fall behind)
//!     ─► reserve sequence numbers and the record's bytes in the log,
//!        write the framed record there with a `pwrite` (with a mapped
//!        log, `allow_mmap_writes`, copy it), beside everyone else
//!        (`direct_log`). With `allow_concurrent_log_write` off: reserve
//!        the numbers, post the record to the log queue, and one writer at
//!        a time drains it (without the log: nothing)
//!     ─► insert beside everyone else ─► finish the range
//!     ─► wait until the sequencer's published position passes the write
//!        (every earlier write is in too)
//!
//! sync put ─► make_room_for_write ─► WriteGroup::write_in_place: the
//!        leader reserves the group's numbers, writes one record for the
//!        group (as above), fdatasyncs once, inserts every member's batch
//!        and finishes the group's range
//! ```
//!
//! Sequence numbers come from an [`ordered_publish::Sequencer`]: one
//! compare-and-swap reserves a range, and readers see everything below its
//! published position, which never passes a write still being inserted, so
//! nobody sees part of a batch and a writer reads its own write once it
//! returns. The log's bytes are reserved with the numbers (or, appended,
//! its records drained through an [`ordered_publish::OrderedQueue`]), so
//! it holds records in sequence order without a leader.
//!
//! # Shared memory one unsynced write touches
//!
//! Every atomic read-modify-write, lock and store to a cache line that other
//! writers use, on the path of one `put` without `sync`. Loads of lines that
//! are almost never written (the background-error flag, the memtable-full
//! flag, the memtable pointer) are not listed: they stay shared in every
//! core's cache.
//!
//! | step | through a write group (until 2026-12-05) | now, with the log | now, without the log |
//! |---|---|---|---|
//! | room in the memtable | `state` mutex (lock, unlock) and the arena's size counters read | a load of the memtable-full flag, set now and then by a writer; every 64 KiB a thread writes, a load of the block pool's size, and once per few megabytes one writer's swap of the warm request, and the `state` mutex to wake the flush thread (since session 31); while the flag is set, a load of the switch's claim, which the writer that makes the switch takes with a swap (since session 33) | the same |
//! | the memtable | `state` mutex (lock, unlock), `Arc<Version>` clone and drop, an `Arc<Memtable>` per member | none: a pointer, replaced only while the sequencer is closed | the same |
//! | sequence numbers | a counter in the log state, under its mutex | the sequencer's compare-and-swap; the room in its ring checked against a limit on the same line (until 2026-12-05 a load of the published position, a line every finish writes); a reservation whose compare-and-swap another beat adds its retries to its thread group's count (since session 32) | the same |
//! | the log record | the leader frames and appends one record for the group, under the `log` mutex | framed by the writer itself; posted with a compare-and-swap on a queue slot and a store to the posted position (or a ring slot), a fence; appended by whoever drains, one `log` mutex lock and one append per pass, then the queue's drained position moves (a store; until session 18 also a separate written position: a swap, a store, a fence). With a mapped log (since session 19): none of that; the record's bytes come with the sequence numbers' compare-and-swap (128 bits), the writer copies it (writing the lines it shares with its neighbours' records), and once per log a flag that the log's size is unknown until it ends; every megabyte or so one writer grows the log under the `log` mutex. With a `pwrite` per writer (since session 24): the same, the copy made by the kernel, which takes the file's lock for it (the file's reference count, its size and times, and the page being filled are lines the cores share). With the log in stripes (the default since session 29), once two writers met at the log file: the lock of the writer's own stripe (lines of its own since session 30), a store of the stripe's end, and the kernel's lock of that stripe's file, which no other core is writing. Either way, since session 26, the writer whose record crosses a `wal_bytes_per_sync` step (1 MiB) tries the `log` mutex, clones the log's sync handle and, the mutex let go, asks the kernel to start writing the step back (`sync_file_range`) | none: the queue counts the range skipped once it is finished (until 2026-12-05 a skip was posted and drained: a slot, the posted position, the drain lock) |
//! | the write group | joining and leaving its queue, the publish turn | none | none |
//! | the memtable insert | the skiplist's links, the arena shard's bump | the same | the same |
//! | visibility | one store of the visible sequence per group | finishing the range: a store to the published position (or a ring slot), a fence, a load of the lowest position a sleeping writer waits for (until session 30, a lock and a wake-up call whenever any writer slept); a writer that waited counts how its wait ended, an add on its thread group's line (eight groups, so shared only past eight threads; since session 31) | the same |
//!
//! The files in the directory, and how they are recognised, replayed and
//! retired, are described in [`crate::recovery`].

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};

use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex};
use std::thread::JoinHandle;

use crate::batch::WriteBatch;
use crate::env::{FileLock, FileSystem, SharedFile};
use crate::error::{Error, Result};
use crate::info_log::InfoLog;
use crate::manifest::{Manifest, write_manifest};
use crate::memtable::Memtable;
use crate::options::{MAX_KEY_LEN, MAX_VALUE_LEN, Options, ReadOptions, WriteOptions};
use crate::recovery::RecoveryStats;
use crate::version::Version;
use ordered_publish::{OrderedQueue, Sequencer};

mod background;
mod bg_error;
mod direct_log;
mod iter;
mod manual_compaction;
mod memtable_switch;
mod multi_get;
mod open;
mod pinned;
mod properties;
mod range_del;
mod snapshot;
mod stats;
mod thread_mode;
mod updates;
mod write;
use background::Background;
pub use iter::{
    DBIterator, DBIteratorWithThreadMode, DBRawIterator, DBRawIteratorWithThreadMode, Direction,
    IteratorMode, KvPair,
};
pub use pinned::DBPinnableSlice;
pub use snapshot::{Snapshot, SnapshotWithThreadMode};
pub use stats::{DbStats, LevelStats, WriteStallStats};
pub use thread_mode::{DBAccess, MultiThreaded, SingleThreaded, ThreadMode};
pub use updates::DBWALIterator;
use write::{LogFile, SyncItem, check_batch_size};

/// How far, in sequence numbers, a write's range may start past the
/// published position (the sequencer's ring): writers wait beyond it. So
/// the writes in flight at any moment (reserved, not yet published) all
/// start less than this many numbers apart, which recovery relies on to
/// tell a log's writes in flight at a crash from damage (see
/// `recovery::replay`).
pub(crate) const SEQUENCER_WINDOW: usize = 1 << 16;

/// State changed only under `Shared::state`.
struct State {
    version: Arc<Version>,
    manifest: Manifest,
    /// The background threads' work and counters.
    bg: Background,
}

/// The engine behind a database handle. `pub` only so that the sealed
/// trait behind [`DBAccess`] can return it; nothing outside the crate can
/// name it.
pub struct Shared {
    dir: PathBuf,
    opts: Options,
    fs: Arc<dyn FileSystem>,
    /// Sync writers gather here: the leader syncs the log once for them.
    group: write_group::WriteGroup<SyncItem, Shared>,
    /// Hands out sequence numbers and publishes them in order: everything
    /// below its published position is inserted, so readers see it.
    seq: Sequencer,
    /// Every write's log record (or a skip) under its sequence range,
    /// drained into the log in sequence order. Its drained position
    /// (`taken`) is how far the log is written: each record below it was
    /// appended, or its append failed (`log_failed_from` says which), by a
    /// pass whose handler returned.
    log_queue: OrderedQueue<Vec<u8>>,
    /// Every record below it is durable (synced).
    durable: CachePadded<AtomicU64>,
    /// The first sequence whose record failed to reach the log (`u64::MAX`
    /// while the log is healthy); set back by `install_new_log`.
    log_failed_from: AtomicU64,
    /// The log file, its sync handle, the drain buffer.
    log: CachePadded<Mutex<LogFile>>,
    /// The current log's shared half (`LogFile::shared`) when writers copy
    /// their own records into it, else null: only replaced while `seq` is
    /// closed (see `direct_log`).
    direct_log: AtomicPtr<SharedFile>,
    /// The mutable memtable: points into the `Arc` of `State::version.mem`,
    /// and is only replaced while `seq` is closed.
    current_mem: AtomicPtr<Memtable>,
    /// Arena blocks of dropped memtables, for the next ones.
    block_pool: arena::BlockPool,
    /// Set by a writer once the mutable memtable is full: writers take the
    /// slow path of `make_room_for_write` while it is set.
    memtable_full: AtomicBool,
    /// Held by the writer that prepares and makes the switch of a full
    /// memtable (see `make_room_for_write`): the others write on meanwhile.
    switch_claimed: AtomicBool,
    /// Set by a writer that found `block_pool` low (see `note_growth`): the
    /// flush thread faults blocks in ahead of the memtables, then clears it.
    warm_wanted: AtomicBool,
    /// Serialises memtable inserts when `allow_concurrent_memtable_write`
    /// is off.
    insert_lock: Mutex<()>,
    state: Mutex<State>,
    /// Signalled when the background threads have work, or finished some.
    bg_cv: Condvar,
    /// The first background (flush, compaction, log) error; writes fail once set.
    bg_error: Mutex<Option<Error>>,
    has_bg_error: AtomicBool,
    shutting_down: AtomicBool,
    /// Live snapshots: sequence → count.
    snapshots: Mutex<BTreeMap<u64, usize>>,
    /// Moving average of a log `fdatasync`, in nanoseconds (0 before the
    /// first): sizes a sync group's wait for more writers.
    sync_nanos: AtomicU64,
    info_log: InfoLog,
    /// What this open's recovery did.
    recovery: RecoveryStats,
    _lock: Box<dyn FileLock>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

/// An open database in thread mode `T`, the `rocksdb` crate's generic name;
/// code names it through [`DB`].
///
/// The mode only matters for column families in the `rocksdb` crate, and
/// this engine has none: [`SingleThreaded`] and [`MultiThreaded`] behave
/// the same in every method (see [`ThreadMode`]).
///
/// `DB` is `Send + Sync`: share it with `Arc` or scoped threads and call
/// everything through `&DB`. Dropping it stops the background threads (a
/// compaction under way ends first, none starts) and closes the files;
/// writes made without the log (`disable_wal`) are flushed first, so they
/// survive a clean close.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, Options, WriteBatch, WriteOptions};
///
/// let mut opts = Options::default();
/// opts.create_if_missing(true);
/// let db = DB::open(&opts, dir.path()).unwrap();
/// db.put(b"hello", b"world").unwrap();
/// assert_eq!(db.get(b"hello").unwrap().as_deref(), Some(&b"world"[..]));
///
/// let mut batch = WriteBatch::new();
/// batch.put(b"a", b"1");
/// batch.delete(b"hello");
/// let mut wo = WriteOptions::default();
/// wo.set_sync(true);
/// db.write_opt(batch, &wo).unwrap();
/// assert_eq!(db.get(b"hello").unwrap(), None);
/// ```
pub struct DBWithThreadMode<T: ThreadMode> {
    shared: Arc<Shared>,
    background: Vec<JoinHandle<()>>,
    _mode: PhantomData<T>,
}

/// The database type code names, as in the `rocksdb` crate:
/// [`DBWithThreadMode`] in the [`SingleThreaded`] mode (with the
/// `multi-threaded-cf` feature, [`MultiThreaded`], as the `rocksdb` crate's
/// feature of that name does). Both modes behave the same here.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, DBWithThreadMode, ThreadMode};
///
/// fn put_one<T: ThreadMode>(db: &DBWithThreadMode<T>) {
///     db.put(b"k", b"v").unwrap();
/// }
///
/// let db = DB::open_default(dir.path()).unwrap();
/// put_one(&db); // `DB` is one `DBWithThreadMode`
/// assert!(db.get(b"k").unwrap().is_some());
/// ```
#[cfg(not(feature = "multi-threaded-cf"))]
pub type DB = DBWithThreadMode<SingleThreaded>;

/// The database type code names, as in the `rocksdb` crate:
/// [`DBWithThreadMode`] in the [`MultiThreaded`] mode (the
/// `multi-threaded-cf` feature is on; without it, [`SingleThreaded`]). Both
/// modes behave the same here.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, DBWithThreadMode, ThreadMode};
///
/// fn put_one<T: ThreadMode>(db: &DBWithThreadMode<T>) {
///     db.put(b"k", b"v").unwrap();
/// }
///
/// let db = DB::open_default(dir.path()).unwrap();
/// put_one(&db); // `DB` is one `DBWithThreadMode`
/// assert!(db.get(b"k").unwrap().is_some());
/// ```
#[cfg(feature = "multi-threaded-cf")]
pub type DB = DBWithThreadMode<MultiThreaded>;

impl<T: ThreadMode> std::fmt::Debug for DBWithThreadMode<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DB")
            .field("path", &self.shared.dir)
            .finish_non_exhaustive()
    }
}

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// Writes `value` under `key`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"1").unwrap();
    /// db.put(b"k", b"2").unwrap(); // replaces the value
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"2"[..]));
    /// ```
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.put_opt(key, value, &WriteOptions::default())
    }

    /// Writes `value` under `key` with write options.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, WriteOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// let mut wo = WriteOptions::default();
    /// wo.set_sync(true); // durable when put_opt returns
    /// db.put_opt(b"k", b"v", &wo).unwrap();
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn put_opt(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        wo: &WriteOptions,
    ) -> Result<()> {
        self.write_one(wo, |b| b.put(key, value))
    }

    /// Deletes `key` (writes a tombstone).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// db.delete(b"k").unwrap();
    /// assert_eq!(db.get(b"k").unwrap(), None);
    /// db.delete(b"never-written").unwrap(); // not an error
    /// ```
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        self.delete_opt(key, &WriteOptions::default())
    }

    /// Deletes `key` with write options.
    ///
    /// # Examples
    ///
    /// A synced delete stays deleted after a reopen:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, WriteOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// let mut wo = WriteOptions::default();
    /// wo.set_sync(true);
    /// db.delete_opt(b"k", &wo).unwrap();
    /// drop(db);
    /// let db = DB::open_default(dir.path()).unwrap();
    /// assert_eq!(db.get(b"k").unwrap(), None);
    /// ```
    pub fn delete_opt(&self, key: impl AsRef<[u8]>, wo: &WriteOptions) -> Result<()> {
        self.write_one(wo, |b| b.delete(key))
    }

    /// Writes the one operation `fill` puts into a batch: the calling
    /// thread's, kept between calls, so a put allocates nothing (a fresh
    /// batch grew its buffer three times for each).
    fn write_one(&self, wo: &WriteOptions, fill: impl FnOnce(&mut WriteBatch)) -> Result<()> {
        thread_local! {
            static ONE: std::cell::RefCell<WriteBatch> = std::cell::RefCell::new(WriteBatch::new());
        }
        ONE.with(|one| match one.try_borrow_mut() {
            Ok(mut batch) => {
                fill(&mut batch);
                // A large value's buffer is not kept.
                let large = batch.size_in_bytes() > 64 << 10;
                let written = self.write_and_clear(&mut batch, wo);
                if large {
                    *batch = WriteBatch::new();
                }
                written
            }
            // Called again from inside a write (a comparator that writes,
            // say): a batch of its own.
            Err(_) => {
                let mut batch = WriteBatch::new();
                fill(&mut batch);
                self.write_opt(batch, wo)
            }
        })
    }

    /// Applies a batch atomically.
    ///
    /// # Examples
    ///
    /// A reader sees all of a batch or none of it, and its writes take
    /// consecutive sequence numbers:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, WriteBatch};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// let mut batch = WriteBatch::new();
    /// batch.put(b"from", b"-10");
    /// batch.put(b"to", b"+10");
    /// db.write(batch).unwrap();
    /// assert_eq!(db.get(b"to").unwrap().as_deref(), Some(&b"+10"[..]));
    /// assert_eq!(db.stats().last_sequence, 2);
    /// ```
    pub fn write(&self, batch: WriteBatch) -> Result<()> {
        self.write_opt(batch, &WriteOptions::default())
    }

    /// Applies a batch atomically with write options. With `sync`, the log
    /// has been fdatasynced when this returns.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for keys over [`MAX_KEY_LEN`] or values
    /// over [`MAX_VALUE_LEN`] (nothing of the batch is written), and for
    /// `sync` together with `disable_wal`;
    /// [`Error::WriteStall`] for `no_slowdown` writes during a stall;
    /// [`Error::Io`] when the log write failed (the batch is not applied and
    /// the database turns read-only: reopen it).
    ///
    /// # Examples
    ///
    /// One oversized key refuses the whole batch:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Error, MAX_KEY_LEN, WriteBatch, WriteOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// let mut batch = WriteBatch::new();
    /// batch.put(b"small", b"v");
    /// batch.put(vec![0; MAX_KEY_LEN + 1], b"v");
    /// let result = db.write_opt(batch, &WriteOptions::default());
    /// assert!(matches!(result, Err(Error::InvalidArgument(_))));
    /// assert_eq!(db.get(b"small").unwrap(), None);
    /// ```
    pub fn write_opt(&self, batch: WriteBatch, wo: &WriteOptions) -> Result<()> {
        self.write_batch(batch, wo).map(drop)
    }

    /// Applies `batch` as [`write_opt`](Self::write_opt) does, then leaves
    /// it empty with its buffer kept for the next batch, as RocksDB callers
    /// reuse one `WriteBatch` with `Clear()`: a writer in a loop then
    /// allocates nothing per write. On an error the batch is left empty too,
    /// without its buffer.
    ///
    /// # Errors
    ///
    /// As [`write_opt`](Self::write_opt).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, WriteBatch, WriteOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// let mut batch = WriteBatch::new();
    /// for i in 0..3u8 {
    ///     batch.put([i], b"v");
    ///     db.write_and_clear(&mut batch, &WriteOptions::default()).unwrap();
    ///     assert!(batch.is_empty());
    /// }
    /// assert_eq!(db.get([2]).unwrap().as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn write_and_clear(&self, batch: &mut WriteBatch, wo: &WriteOptions) -> Result<()> {
        let mut written = self.write_batch(std::mem::take(batch), wo)?;
        written.clear();
        *batch = written;
        Ok(())
    }

    /// The write path; gives the batch back once it is applied.
    fn write_batch(&self, batch: WriteBatch, wo: &WriteOptions) -> Result<WriteBatch> {
        if let Some(bad) = batch.malformed() {
            return Err(Error::InvalidArgument(format!(
                "a batch from data that does not decode: {}",
                bad.0
            )));
        }
        let (k, v) = batch.largest_key_and_value();
        if k > MAX_KEY_LEN {
            return Err(Error::InvalidArgument(format!(
                "key of {k} bytes exceeds {MAX_KEY_LEN}"
            )));
        }
        if v > MAX_VALUE_LEN {
            return Err(Error::InvalidArgument(format!(
                "value of {v} bytes exceeds {MAX_VALUE_LEN}"
            )));
        }
        check_batch_size(batch.data_size())?;
        if batch.has_range_deletion() && !self.shared.opts.comparator.is_bytewise() {
            // Tombstones are cut at file boundaries with the bytewise
            // successor of a key, which another order does not have.
            return Err(Error::NotSupported(
                "delete_range in a database with its own comparator (set_comparator)".into(),
            ));
        }
        if wo.sync && wo.disable_wal {
            // Nothing would be synced: acknowledging the write as durable
            // would be a lie (RocksDB refuses the same combination).
            return Err(Error::InvalidArgument(
                "a sync write needs the log (disable_wal is set)".into(),
            ));
        }
        if batch.is_empty() {
            return Ok(batch);
        }
        self.shared.check_bg_error()?;
        self.shared.write(&batch, wo)?;
        Ok(batch)
    }

    /// Reads the newest value of `key`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
    /// assert_eq!(db.get(b"missing").unwrap(), None);
    /// ```
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, &ReadOptions::default())
    }

    /// Reads `key` with read options (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, ReadOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// let before = db.snapshot();
    /// db.put(b"k", b"v").unwrap();
    /// let mut ro = ReadOptions::default();
    /// assert_eq!(db.get_opt(b"k", &ro).unwrap().as_deref(), Some(&b"v"[..]));
    /// ro.set_snapshot(&before);
    /// assert_eq!(db.get_opt(b"k", &ro).unwrap(), None);
    /// ```
    pub fn get_opt(&self, key: impl AsRef<[u8]>, ro: &ReadOptions) -> Result<Option<Vec<u8>>> {
        let seq = ro.snapshot.unwrap_or_else(|| self.shared.visible());
        let version = self.shared.current();
        version.get(key.as_ref(), seq)
    }

    /// The sequence number of the last write visible to readers (0 for a
    /// database never written): every batch numbers its operations with
    /// consecutive sequence numbers, so this grows by a batch's length.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, WriteBatch};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// assert_eq!(db.latest_sequence_number(), 0);
    /// db.put(b"a", b"1").unwrap();
    /// let mut batch = WriteBatch::new();
    /// batch.put(b"b", b"2");
    /// batch.delete(b"a");
    /// db.write(batch).unwrap();
    /// assert_eq!(db.latest_sequence_number(), 3);
    /// ```
    pub fn latest_sequence_number(&self) -> u64 {
        self.shared.visible()
    }

    /// Makes the log durable (RocksDB's `FlushWAL`): with `sync`, every
    /// write acknowledged so far is `fdatasync`ed, as if it had been written
    /// with `sync`. Unsynced writes reach the operating system before they
    /// return (the engine keeps no log buffer of its own), so without `sync`
    /// there is nothing to do.
    ///
    /// # Errors
    ///
    /// A failed sync (which also stops writes, as a failed log write does),
    /// or the background error that stopped them.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap(); // not synced
    /// db.put(b"b", b"2").unwrap();
    /// db.flush_wal(true).unwrap(); // now both survive a power loss
    /// ```
    pub fn flush_wal(&self, sync: bool) -> Result<()> {
        if !sync {
            return self.shared.check_bg_error();
        }
        // Every acknowledged write is published; with direct copies, every
        // record below the published position is in the log.
        let logged = if self.shared.copies_directly() {
            self.shared.seq.published()
        } else {
            self.shared.log_queue.taken()
        };
        self.shared.sync_log(logged, logged)
    }

    /// Flushes every memtable to table files and waits for it.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::DB;
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// db.flush().unwrap();
    /// let stats = db.stats();
    /// assert_eq!((stats.memtable_entries, stats.level_files[0]), (0, 1));
    /// drop(db);
    /// let db = DB::open_default(dir.path()).unwrap(); // read from the table file
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn flush(&self) -> Result<()> {
        self.shared.check_bg_error()?;
        {
            // Lock order: the sequencer's close, then the state lock.
            let closed = self.shared.seq.close();
            let st = self.shared.state.lock();
            if !st.version.mem.is_empty() {
                self.shared.switch_memtable(&closed, st)?;
            }
        }
        let mut st = self.shared.state.lock();
        // Acquire: pairs with `record_bg_error`'s Release, so the error it
        // stored is there to read.
        while !st.version.imm.is_empty() && !self.shared.has_bg_error.load(Ordering::Acquire) {
            self.shared.bg_cv.wait(&mut st);
        }
        drop(st);
        self.shared.check_bg_error()
    }

    /// Waits until no flush or compaction is under way or due, as the
    /// `rocksdb` crate's `wait_for_compact`: afterwards every level is
    /// within its target and level 0 below its trigger.
    ///
    /// # Errors
    ///
    /// A background error that stops the work, [`Error::TimedOut`] after
    /// the options' timeout, or the flush's error when the options flush
    /// first.
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
    /// for k in [b"a", b"b", b"c"] {
    ///     db.put(k, b"v").unwrap();
    ///     db.flush().unwrap();
    /// }
    /// db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    /// assert!(db.stats().level_files[0] < 2);
    /// ```
    pub fn wait_for_compact(&self, opts: &crate::WaitForCompactOptions) -> Result<()> {
        if opts.flush {
            self.flush()?;
        }
        self.shared.wait_for_background(opts.timeout)
    }

    /// Numbers about the engine, for benchmarks and tests.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let mut synced = lsm_demo::WriteOptions::default();
    /// synced.set_sync(true);
    /// db.put_opt(b"b", b"2", &synced).unwrap();
    /// let stats = db.stats();
    /// assert_eq!(stats.last_sequence, 2);
    /// assert_eq!(stats.memtable_entries, 2);
    /// assert_eq!(stats.write_group.members, 1); // only sync writes join a group
    /// ```
    pub fn stats(&self) -> DbStats {
        let st = self.shared.state.lock();
        let v = &st.version;
        let mem_bytes = v.mem.rep.memory_usage();
        let mem_entries = v.mem.rep.len();
        let levels = self.shared.level_stats(&st);
        DbStats {
            write_group: self.shared.group.stats(),
            sequencer_waits: self.shared.seq.tracker().wait_stats(),
            sequencer_retries: self.shared.seq.reservation_retries(),
            level_files: levels.map(|l| l.files),
            levels,
            base_level: st.bg.shape.base_level,
            pending_compaction_bytes: st.bg.pending_compaction_bytes,
            write_stalls: st.bg.stalls,
            log_bytes_written: (self.shared.log.lock())
                .total_bytes_written(self.shared.seq.reserved_bytes()),
            immutable_memtables: v.imm.len(),
            memtable_bytes: mem_bytes,
            memtable_entries: mem_entries,
            memtable_pool_bytes: self.shared.block_pool.held_bytes(),
            last_sequence: self.shared.visible(),
            recovery: self.shared.recovery.clone(),
        }
    }

    /// The directory of this database.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// assert_eq!(db.path(), dir.path());
    /// assert!(db.path().join("MANIFEST").exists());
    /// ```
    pub fn path(&self) -> &Path {
        &self.shared.dir
    }
}

impl<T: ThreadMode> Drop for DBWithThreadMode<T> {
    fn drop(&mut self) {
        // Writes made without the log live only in memory: flush them.
        let unlogged = {
            let st = self.shared.state.lock();
            std::iter::once(&st.version.mem)
                .chain(st.version.imm.iter())
                // Relaxed: every write returned before the drop; the state lock
                // orders the rest.
                .any(|m| m.has_unlogged.load(Ordering::Relaxed))
        };
        if unlogged {
            let _ = self.flush();
        }
        // Release: a background thread that sees it (Acquire) sees the flush
        // above done.
        self.shared.shutting_down.store(true, Ordering::Release);
        {
            let _st = self.shared.state.lock();
            self.shared.bg_cv.notify_all();
        }
        for h in self.background.drain(..) {
            let _ = h.join();
        }
        write::sync_on_close(
            &mut self.shared.log.lock(),
            self.shared.seq.reserved_bytes(),
        );
    }
}

impl Shared {
    #[inline]
    fn visible(&self) -> u64 {
        // The sequencer's published position is one past the last visible
        // sequence; its Acquire makes the inserts below it visible to us.
        self.seq.published() - 1
    }

    fn current(&self) -> Arc<Version> {
        self.state.lock().version.clone()
    }

    fn write_manifest(&self, manifest: &Manifest) -> Result<()> {
        write_manifest(&*self.fs, &self.dir, manifest).map_err(|e| {
            Error::io(
                format!(
                    "writing {}",
                    self.dir.join(crate::manifest::MANIFEST_FILE).display()
                ),
                e,
            )
        })
    }

    fn maybe_schedule_compaction(&self) {
        let _st = self.state.lock();
        self.bg_cv.notify_all();
    }
}
