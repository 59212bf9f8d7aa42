//! The database: open and recovery, the write path (in `write`), reads,
//! snapshots; the flush and compaction threads are in `background`.
//!
//! # The write path
//!
//! ```text
//! put ─► make_room_for_write (switch a full memtable under the state lock
//!        and a closed sequencer; stall while flushes fall behind)
//!     ─► reserve sequence numbers ─► post the framed record to the log
//!        queue (a skip without the log); one writer at a time drains it
//!     ─► insert beside everyone else ─► finish the range
//!     ─► wait until the sequencer's published position passes the write
//!        (every earlier write is in too)
//!
//! sync put ─► make_room_for_write ─► WriteGroup::write_in_place: the
//!        leader reserves the group's numbers, posts one record for the
//!        group and drains the queue, fdatasyncs once, inserts every
//!        member's batch and finishes the group's range
//! ```
//!
//! Sequence numbers come from an [`ordered_publish::Sequencer`]: one
//! compare-and-swap reserves a range, and readers see everything below its
//! published position, which never passes a write still being inserted, so
//! nobody sees part of a batch and a writer reads its own write once it
//! returns. The log is filled through an [`ordered_publish::OrderedQueue`],
//! so it holds records in sequence order without a leader.
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
//! | room in the memtable | `state` mutex (lock, unlock) and the arena's size counters read | a load of the memtable-full flag, set now and then by a writer | the same |
//! | the memtable | `state` mutex (lock, unlock), `Arc<Version>` clone and drop, an `Arc<Memtable>` per member | none: a pointer, replaced only while the sequencer is closed | the same |
//! | sequence numbers | a counter in the log state, under its mutex | the sequencer's compare-and-swap | the same |
//! | the log record | the leader frames and appends one record for the group, under the `log` mutex | framed by the writer itself; posted with a compare-and-swap on a queue slot; appended by whoever drains, one `log` mutex lock and one append per pass, then the written position moves (a store, a fence) | a skip posted (no allocation); drained, without the `log` mutex |
//! | the write group | joining and leaving its queue, the publish turn | none | none |
//! | the memtable insert | the skiplist's links, the arena shard's bump | the same | the same |
//! | visibility | one store of the visible sequence per group | finishing the range: a store to the published position (or a ring slot), a fence | the same |
//!
//! The files in the directory, and how they are recognised, replayed and
//! retired, are described in [`crate::recovery`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use crate::batch::WriteBatch;
use crate::env::{FileLock, FileSystem, PosixFs};
use crate::error::{Error, Result};
use crate::info_log::{InfoLog, info};
use crate::iter::UserIterator;
use crate::manifest::{Manifest, write_manifest};
use crate::memtable::Memtable;
use crate::options::{MAX_KEY_LEN, MAX_VALUE_LEN, Options, ReadOptions, WriteOptions};
use crate::recovery::{Inventory, RecoveryStats, create_database, lock_dir, recognise, recover};
use crate::version::Version;
use crate::wal::LogWriter;
use ordered_publish::{OrderedQueue, Sequencer, Tracker};

mod background;
mod properties;
mod stats;
mod write;
use background::Background;
pub use stats::{DbStats, LevelStats, WriteStallStats};
use write::{LogFile, SyncItem, check_batch_size};

/// State changed only under `Shared::state`.
struct State {
    version: Arc<Version>,
    manifest: Manifest,
    /// The background threads' work and counters.
    bg: Background,
}

pub(crate) struct Shared {
    dir: PathBuf,
    opts: Options,
    fs: Arc<dyn FileSystem>,
    /// Sync writers gather here: the leader syncs the log once for them.
    group: write_group::WriteGroup<SyncItem, Shared>,
    /// Hands out sequence numbers and publishes them in order: everything
    /// below its published position is inserted, so readers see it.
    seq: Sequencer,
    /// Every write's log record (or a skip) under its sequence range,
    /// drained into the log in sequence order.
    log_queue: OrderedQueue<Vec<u8>>,
    /// How far, in sequence numbers, the drained records are appended (or
    /// failed): the log holds every record below it that did not fail.
    /// Moved by passes with records; a pass of skips alone leaves it to
    /// the next.
    written: Tracker,
    /// Where `written` ends: touched only by drainers, one at a time.
    written_to: AtomicU64,
    /// Every record below it is durable (synced).
    durable: AtomicU64,
    /// The first sequence whose record failed to reach the log (`u64::MAX`
    /// while the log is healthy); set back by `install_new_log`.
    log_failed_from: AtomicU64,
    /// The log file, its sync handle, the drain buffer.
    log: Mutex<LogFile>,
    /// The mutable memtable: points into the `Arc` of `State::version.mem`,
    /// and is only replaced while `seq` is closed.
    current_mem: AtomicPtr<Memtable>,
    /// Set by a writer once the mutable memtable is full: writers take the
    /// slow path of `make_room_for_write` while it is set.
    memtable_full: AtomicBool,
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

/// An open database.
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
pub struct DB {
    shared: Arc<Shared>,
    background: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for DB {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DB")
            .field("path", &self.shared.dir)
            .finish_non_exhaustive()
    }
}

impl DB {
    /// Opens the database in `path` with default options, creating it if missing.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// ```
    pub fn open_default(path: impl AsRef<Path>) -> Result<DB> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        DB::open(&opts, path)
    }

    /// Opens (and recovers) the database in `path`: see
    /// [`crate::recovery`] for what makes a directory a database, how logs
    /// are replayed to a point in time and what is deleted.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for bad options, for `error_if_exists` on
    /// a database, and for another store's database; [`Error::NotFound`]
    /// when there is no database and `create_if_missing` is off;
    /// [`Error::NotADirectory`]; [`Error::Locked`] when another `DB` has it
    /// open; [`Error::Corruption`] for database files without a manifest,
    /// an inconsistent manifest, or damage the recovery mode does not drop
    /// ([`Options::set_wal_recovery_mode`]); [`Error::Io`] and
    /// [`Error::NoSpace`].
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Error, Options};
    ///
    /// let path = dir.path().join("db");
    /// let mut opts = Options::default();
    /// assert!(matches!(DB::open(&opts, &path), Err(Error::NotFound(_))));
    /// opts.create_if_missing(true);
    /// let db = DB::open(&opts, &path).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// drop(db);
    /// let db = DB::open(&opts, &path).unwrap(); // recovers the write from the log
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn open(opts: &Options, path: impl AsRef<Path>) -> Result<DB> {
        DB::open_with_fs(opts, path, Arc::new(PosixFs))
    }

    /// Opens the database through a custom file system (fault injection).
    ///
    /// # Examples
    ///
    /// A failed log sync, injected by the fault-injecting file system, fails the
    /// write and turns the database read-only:
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
    /// let mut sync = WriteOptions::default();
    /// sync.set_sync(true);
    /// fs.fail_next(FaultOp::Sync, 1);
    /// assert!(matches!(db.put_opt(b"k", b"v", &sync), Err(Error::Io { .. })));
    /// assert!(matches!(db.put(b"k", b"v"), Err(Error::BackgroundError(_))));
    /// ```
    pub fn open_with_fs(
        opts: &Options,
        path: impl AsRef<Path>,
        fs: Arc<dyn FileSystem>,
    ) -> Result<DB> {
        opts.validate()?;
        let dir = path.as_ref().to_path_buf();
        prepare_dir(&*fs, &dir, opts)?;
        // Refuse a directory that is not ours before touching it, lock
        // file included.
        recognise(&*fs, &dir, opts, &Inventory::of(&*fs, &dir)?)?;
        let lock = lock_dir(&*fs, &dir)?;
        // Again under the lock: another process may have changed it.
        let inventory = Inventory::of(&*fs, &dir)?;
        let found = recognise(&*fs, &dir, opts, &inventory)?;
        let info_log = InfoLog::open(&*fs, &dir);
        info!(
            info_log,
            "opening {} (recovery mode {:?}, memtable {:?}, write buffer {} bytes)",
            dir.display(),
            opts.wal_recovery_mode,
            opts.memtable_kind,
            opts.write_buffer_size
        );
        let manifest = match found {
            Some(manifest) => manifest,
            None => {
                let manifest = create_database(&*fs, &dir)?;
                info!(info_log, "created a new database in {}", dir.display());
                manifest
            }
        };
        let recovered = recover(&*fs, &dir, opts, manifest, &inventory, &info_log)
            .inspect_err(|e| info!(info_log, "open failed: {e}"))?;
        let next_sequence = recovered.next_sequence;
        let version = Version {
            mem: Arc::new(Memtable::new(
                opts.memtable_kind,
                recovered.log_number,
                opts.write_buffer_size,
            )),
            imm: Vec::new(),
            levels: recovered.levels,
        };
        let log = LogFile::new(recovered.log, recovered.log_number)?;
        let shared = Arc::new(Shared {
            dir,
            opts: opts.clone(),
            fs,
            group: write_group::WriteGroup::new(opts.write_group.clone()),
            seq: Sequencer::new(next_sequence, SEQUENCER_WINDOW),
            log_queue: OrderedQueue::new(next_sequence, SEQUENCER_WINDOW),
            written: Tracker::new(next_sequence, SEQUENCER_WINDOW),
            written_to: AtomicU64::new(next_sequence),
            durable: AtomicU64::new(next_sequence),
            log_failed_from: AtomicU64::new(u64::MAX),
            log: Mutex::new(log),
            current_mem: AtomicPtr::new(Arc::as_ptr(&version.mem).cast_mut()),
            memtable_full: AtomicBool::new(false),
            insert_lock: Mutex::new(()),
            state: Mutex::new(State {
                bg: Background::new(&version, opts),
                version: Arc::new(version),
                manifest: recovered.manifest,
            }),
            info_log,
            recovery: recovered.stats,
            bg_cv: Condvar::new(),
            bg_error: Mutex::new(None),
            has_bg_error: AtomicBool::new(false),
            shutting_down: AtomicBool::new(false),
            sync_nanos: AtomicU64::new(0),
            snapshots: Mutex::new(BTreeMap::new()),
            _lock: lock,
        });
        let background = shared.start_background()?;
        let db = DB { shared, background };
        db.shared.maybe_schedule_compaction();
        Ok(db)
    }

    /// Deletes the database in `path`, as RocksDB's `DestroyDB`: every file
    /// of the database (the names the engine writes, in the directory and
    /// its `lost/` folder), then the directory if nothing else is in it.
    /// Files of other programs stay. A missing directory is not an error.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a directory that holds database files
    /// but no manifest of this engine (another store's database): nothing
    /// is deleted. [`Error::Locked`] while a `DB` has it open.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options};
    ///
    /// let path = dir.path().join("db");
    /// let db = DB::open_default(&path).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// assert!(DB::destroy(&Options::default(), &path).is_err()); // open
    /// drop(db);
    /// std::fs::write(path.join("notes.txt"), b"mine").unwrap();
    /// DB::destroy(&Options::default(), &path).unwrap();
    /// let left: Vec<_> = std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().file_name()).collect();
    /// assert_eq!(left, ["notes.txt"]);
    /// ```
    pub fn destroy(opts: &Options, path: impl AsRef<Path>) -> Result<()> {
        DB::destroy_with_fs(opts, path, Arc::new(PosixFs))
    }

    /// [`DB::destroy`] through a custom file system.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use lsm_demo::{DB, Options};
    /// use std::{path::Path, sync::Arc};
    ///
    /// let fs = Arc::new(FaultInjectionFs::new());
    /// drop(DB::open_with_fs(Options::default().create_if_missing(true), "/db", fs.clone()).unwrap());
    /// DB::destroy_with_fs(&Options::default(), "/db", fs.clone()).unwrap();
    /// assert!(!fs.exists(Path::new("/db")));
    /// ```
    pub fn destroy_with_fs(
        _opts: &Options,
        path: impl AsRef<Path>,
        fs: Arc<dyn FileSystem>,
    ) -> Result<()> {
        crate::recovery::destroy(&*fs, path.as_ref())
    }

    /// Rebuilds the database in `path` from the tables and logs that read
    /// cleanly, as RocksDB's `RepairDB`: for a database whose manifest is
    /// lost or damaged, or whose files fail their checksums. Damaged files
    /// go to `lost/`. See [`crate::repair::repair_with_fs`], which also
    /// reports what was salvaged.
    ///
    /// # Errors
    ///
    /// A directory that is another store's database or no database;
    /// [`Error::Locked`] while a `DB` has it open; I/O errors.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// drop(db);
    /// std::fs::remove_file(dir.path().join("MANIFEST")).unwrap();
    /// DB::repair(&Options::default(), dir.path()).unwrap();
    /// let db = DB::open_default(dir.path()).unwrap();
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn repair(opts: &Options, path: impl AsRef<Path>) -> Result<()> {
        crate::repair::repair_with_fs(opts, path.as_ref(), &PosixFs).map(drop)
    }

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
        let mut b = WriteBatch::new();
        b.put(key, value);
        self.write_opt(b, wo)
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
        let mut b = WriteBatch::new();
        b.delete(key);
        self.write_opt(b, wo)
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

    /// A consistent point-in-time view for reads and iteration.
    ///
    /// # Examples
    ///
    /// Writes after the snapshot are invisible to it:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"old").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"k", b"new").unwrap();
    /// db.put(b"other", b"x").unwrap();
    /// assert_eq!(snap.get(b"k").unwrap().as_deref(), Some(&b"old"[..]));
    /// assert_eq!(snap.get(b"other").unwrap(), None);
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
    /// ```
    pub fn snapshot(&self) -> Snapshot<'_> {
        let mut snaps = self.shared.snapshots.lock().expect("snapshot list");
        let seq = self.shared.visible();
        *snaps.entry(seq).or_default() += 1;
        Snapshot {
            db: self,
            sequence: seq,
        }
    }

    /// Iterates key-value pairs from where `mode` says.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Direction, IteratorMode};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// for k in [b"a", b"b", b"c"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// let keys: Vec<_> = db
    ///     .iterator(IteratorMode::From(b"b", Direction::Reverse))
    ///     .map(|kv| kv.unwrap().0)
    ///     .collect();
    /// assert_eq!(keys, [b"b".to_vec().into_boxed_slice(), b"a".to_vec().into_boxed_slice()]);
    /// ```
    pub fn iterator<'a>(&'a self, mode: IteratorMode<'_>) -> DBIterator<'a> {
        self.iterator_opt(mode, &ReadOptions::default())
    }

    /// Iterates with read options (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, IteratorMode, ReadOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"b", b"2").unwrap();
    /// let mut ro = ReadOptions::default();
    /// ro.set_snapshot(&snap);
    /// let keys: Vec<_> = db.iterator_opt(IteratorMode::Start, &ro).map(|kv| kv.unwrap().0).collect();
    /// assert_eq!(keys, [Box::from(&b"a"[..])]);
    /// ```
    pub fn iterator_opt<'a>(&'a self, mode: IteratorMode<'_>, ro: &ReadOptions) -> DBIterator<'a> {
        let mut raw = self.raw_iterator_opt(ro);
        let direction = match mode {
            IteratorMode::Start => {
                raw.seek_to_first();
                Direction::Forward
            }
            IteratorMode::End => {
                raw.seek_to_last();
                Direction::Reverse
            }
            IteratorMode::From(k, Direction::Forward) => {
                raw.seek(k);
                Direction::Forward
            }
            IteratorMode::From(k, Direction::Reverse) => {
                raw.seek_for_prev(k);
                Direction::Reverse
            }
        };
        DBIterator {
            raw,
            direction,
            done: false,
        }
    }

    /// A cursor with explicit positioning.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// for k in [b"a", b"b", b"c"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// let mut it = db.raw_iterator();
    /// let mut keys = Vec::new();
    /// it.seek_to_first();
    /// while let Some(k) = it.key() {
    ///     keys.push(k.to_vec());
    ///     it.next();
    /// }
    /// it.status().unwrap(); // the end, not an error
    /// assert_eq!(keys, [b"a", b"b", b"c"]);
    /// ```
    pub fn raw_iterator(&self) -> DBRawIterator<'_> {
        self.raw_iterator_opt(&ReadOptions::default())
    }

    /// A cursor with read options.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, ReadOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"b", b"2").unwrap();
    /// let mut ro = ReadOptions::default();
    /// ro.set_snapshot(&snap);
    /// let mut it = db.raw_iterator_opt(&ro);
    /// it.seek_to_last();
    /// assert_eq!(it.key(), Some(&b"a"[..])); // "b" came after the snapshot
    /// ```
    pub fn raw_iterator_opt(&self, ro: &ReadOptions) -> DBRawIterator<'_> {
        let seq = ro.snapshot.unwrap_or_else(|| self.shared.visible());
        let version = self.shared.current();
        let inner = UserIterator::new(version.iter(), seq);
        DBRawIterator {
            inner,
            _version: version,
            _db: std::marker::PhantomData,
        }
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
            let st = self.shared.state.lock().expect("state");
            if !st.version.mem.is_empty() {
                self.shared.switch_memtable(&closed, st)?;
            }
        }
        let mut st = self.shared.state.lock().expect("state");
        while !st.version.imm.is_empty() && !self.shared.has_bg_error.load(Ordering::Acquire) {
            st = self.shared.bg_cv.wait(st).expect("state");
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
        let st = self.shared.state.lock().expect("state");
        let v = &st.version;
        let mem_bytes = v.mem.rep.memory_usage();
        let mem_entries = v.mem.rep.len();
        let levels = self.shared.level_stats(&st);
        DbStats {
            write_group: self.shared.group.stats(),
            level_files: levels.map(|l| l.files),
            levels,
            base_level: st.bg.shape.base_level,
            pending_compaction_bytes: st.bg.pending_compaction_bytes,
            write_stalls: st.bg.stalls,
            log_bytes_written: self.shared.log.lock().expect("log").bytes_written,
            immutable_memtables: v.imm.len(),
            memtable_bytes: mem_bytes,
            memtable_entries: mem_entries,
            last_sequence: self.shared.visible(),
            recovery: self.shared.recovery.clone(),
        }
    }

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
    /// which writes stay stopped; or the background error itself when it is
    /// not an I/O error (corruption is not resumed from).
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

impl Drop for DB {
    fn drop(&mut self) {
        // Writes made without the log live only in memory: flush them.
        let unlogged = {
            let st = self.shared.state.lock().expect("state");
            std::iter::once(&st.version.mem)
                .chain(st.version.imm.iter())
                .any(|m| m.has_unlogged.load(Ordering::Relaxed))
        };
        if unlogged {
            let _ = self.flush();
        }
        self.shared.shutting_down.store(true, Ordering::Release);
        {
            let _st = self.shared.state.lock().expect("state");
            self.shared.bg_cv.notify_all();
        }
        for h in self.background.drain(..) {
            let _ = h.join();
        }
        write::sync_on_close(&mut self.shared.log.lock().expect("log"));
    }
}

/// A consistent read view; release it by dropping it.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::IteratorMode;
///
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// db.put(b"a", b"1").unwrap();
/// let snap = db.snapshot();
/// db.delete(b"a").unwrap();
/// db.put(b"b", b"2").unwrap();
/// assert_eq!(snap.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
/// assert_eq!(snap.iterator(IteratorMode::Start).count(), 1);
/// drop(snap); // releases the old versions for compaction
/// assert_eq!(db.get(b"a").unwrap(), None);
/// ```
#[derive(Debug)]
pub struct Snapshot<'a> {
    db: &'a DB,
    sequence: u64,
}

impl Snapshot<'_> {
    /// The sequence number the snapshot reads at.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// let first = db.snapshot();
    /// db.put(b"k", b"v").unwrap();
    /// let second = db.snapshot();
    /// assert_eq!(second.sequence(), first.sequence() + 1); // one write between them
    /// assert_eq!(second.sequence(), db.stats().last_sequence);
    /// ```
    pub fn sequence(&self) -> u64 {
        self.sequence
    }

    /// Reads `key` as of the snapshot.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"1").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"k", b"2").unwrap();
    /// assert_eq!(snap.get(b"k").unwrap().as_deref(), Some(&b"1"[..]));
    /// assert_eq!(snap.get(b"absent").unwrap(), None);
    /// ```
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.db.get_opt(
            key,
            &ReadOptions {
                snapshot: Some(self.sequence),
            },
        )
    }

    /// Iterates as of the snapshot.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::IteratorMode;
    ///
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"a", b"2").unwrap();
    /// db.put(b"b", b"3").unwrap();
    /// let pairs: Vec<_> = snap.iterator(IteratorMode::Start).map(Result::unwrap).collect();
    /// assert_eq!(pairs, [(Box::from(&b"a"[..]), Box::from(&b"1"[..]))]);
    /// ```
    pub fn iterator(&self, mode: IteratorMode<'_>) -> DBIterator<'_> {
        self.db.iterator_opt(
            mode,
            &ReadOptions {
                snapshot: Some(self.sequence),
            },
        )
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        let mut snaps = self.db.shared.snapshots.lock().expect("snapshot list");
        if let Some(n) = snaps.get_mut(&self.sequence) {
            *n -= 1;
            if *n == 0 {
                snaps.remove(&self.sequence);
            }
        }
    }
}

/// Iteration direction.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, Direction, IteratorMode};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// for k in [b"a", b"b", b"c"] {
///     db.put(k, b"v").unwrap();
/// }
/// let from_b = |d| -> Vec<_> {
///     db.iterator(IteratorMode::From(b"b", d)).map(|kv| kv.unwrap().0[0]).collect()
/// };
/// assert_eq!(from_b(Direction::Forward), b"bc");
/// assert_eq!(from_b(Direction::Reverse), b"ba");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Ascending keys.
    Forward,
    /// Descending keys.
    Reverse,
}

/// Where an iterator starts.
///
/// # Examples
///
/// `From` a key that is not there starts at its neighbour in the direction of
/// travel:
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, Direction, IteratorMode};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// for k in [b"a", b"c", b"e"] {
///     db.put(k, b"v").unwrap();
/// }
/// let first = |mode| db.iterator(mode).next().unwrap().unwrap().0;
/// assert_eq!(&*first(IteratorMode::Start), b"a");
/// assert_eq!(&*first(IteratorMode::End), b"e");
/// assert_eq!(&*first(IteratorMode::From(b"b", Direction::Forward)), b"c");
/// assert_eq!(&*first(IteratorMode::From(b"d", Direction::Reverse)), b"c");
/// ```
#[derive(Debug, Clone, Copy)]
pub enum IteratorMode<'a> {
    /// The first key, going forward.
    Start,
    /// The last key, going backward.
    End,
    /// At `key` (forward: the first key `>=` it; reverse: the last `<=` it).
    From(&'a [u8], Direction),
}

/// Key-value pairs in order; yields the first error met and then stops.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, IteratorMode, KvPair};
///
/// let db = DB::open_default(dir.path()).unwrap();
/// db.put(b"b", b"2").unwrap();
/// db.put(b"a", b"1").unwrap();
/// let pairs: Vec<KvPair> = db.iterator(IteratorMode::Start).collect::<Result<_, _>>().unwrap();
/// assert_eq!(&*pairs[0].0, b"a");
/// assert_eq!(&*pairs[1].1, b"2");
/// ```
pub struct DBIterator<'a> {
    raw: DBRawIterator<'a>,
    direction: Direction,
    done: bool,
}

impl std::fmt::Debug for DBIterator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DBIterator")
            .field("direction", &self.direction)
            .finish()
    }
}

/// The items of a [`DBIterator`].
pub type KvPair = (Box<[u8]>, Box<[u8]>);

impl Iterator for DBIterator<'_> {
    type Item = Result<KvPair>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if !self.raw.valid() {
            self.done = true;
            return self.raw.status().err().map(Err);
        }
        let item = (
            Box::from(self.raw.inner.key()),
            Box::from(self.raw.inner.value()),
        );
        match self.direction {
            Direction::Forward => self.raw.next(),
            Direction::Reverse => self.raw.prev(),
        }
        Some(Ok(item))
    }
}

/// A cursor over the database as of one sequence: `seek`, `seek_for_prev`,
/// `next`, `prev`.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// db.put(b"a", b"1").unwrap();
/// db.put(b"c", b"3").unwrap();
/// let mut it = db.raw_iterator();
/// it.seek(b"b");
/// assert_eq!(it.key(), Some(&b"c"[..]));
/// it.prev();
/// assert_eq!(it.value(), Some(&b"1"[..]));
/// ```
pub struct DBRawIterator<'a> {
    inner: UserIterator,
    _version: Arc<Version>,
    _db: std::marker::PhantomData<&'a DB>,
}

impl std::fmt::Debug for DBRawIterator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DBRawIterator")
            .field("valid", &self.inner.valid())
            .finish()
    }
}

impl DBRawIterator<'_> {
    /// Whether the cursor is on an entry.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let mut it = db.raw_iterator();
    /// assert!(!it.valid()); // not positioned yet
    /// it.seek_to_first();
    /// assert!(it.valid());
    /// it.next();
    /// assert!(!it.valid()); // past the last key
    /// ```
    pub fn valid(&self) -> bool {
        self.inner.valid()
    }
    /// The first error met, if any.
    ///
    /// # Examples
    ///
    /// A table file that cannot be read (here an injected read failure) ends the
    /// iteration with an error rather than silently:
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp};
    /// use lsm_demo::{DB, Options};
    /// use std::sync::Arc;
    ///
    /// let fs = FaultInjectionFs::new();
    /// # let mut opts = Options::default();
    /// # opts.create_if_missing(true);
    /// let db = DB::open_with_fs(&opts, "/db", Arc::new(fs.clone())).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// db.flush().unwrap(); // "k" now lives in a table file
    /// fs.fail_next(FaultOp::Read, 1);
    /// let mut it = db.raw_iterator();
    /// it.seek_to_first();
    /// assert!(!it.valid());
    /// assert!(it.status().is_err());
    /// ```
    pub fn status(&self) -> Result<()> {
        self.inner.status()
    }
    /// Moves to the first key.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"b", b"2").unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let mut it = db.raw_iterator();
    /// it.seek_to_first();
    /// assert_eq!(it.key(), Some(&b"a"[..]));
    /// ```
    pub fn seek_to_first(&mut self) {
        self.inner.seek_to_first()
    }
    /// Moves to the last key.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"b", b"2").unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let mut it = db.raw_iterator();
    /// it.seek_to_last();
    /// assert_eq!(it.key(), Some(&b"b"[..]));
    /// ```
    pub fn seek_to_last(&mut self) {
        self.inner.seek_to_last()
    }
    /// Moves to the first key `>= key`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"apple", b"1").unwrap();
    /// db.put(b"cherry", b"2").unwrap();
    /// let mut it = db.raw_iterator();
    /// it.seek(b"b"); // the first key >= "b"
    /// assert_eq!(it.key(), Some(&b"cherry"[..]));
    /// it.seek(b"d"); // nothing >= "d"
    /// assert!(!it.valid());
    /// ```
    pub fn seek(&mut self, key: impl AsRef<[u8]>) {
        self.inner.seek(key.as_ref())
    }
    /// Moves to the last key `<= key`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"apple", b"1").unwrap();
    /// db.put(b"cherry", b"2").unwrap();
    /// let mut it = db.raw_iterator();
    /// it.seek_for_prev(b"b"); // the last key <= "b"
    /// assert_eq!(it.key(), Some(&b"apple"[..]));
    /// it.seek_for_prev(b"a"); // nothing <= "a"
    /// assert!(!it.valid());
    /// ```
    pub fn seek_for_prev(&mut self, key: impl AsRef<[u8]>) {
        self.inner.seek_for_prev(key.as_ref())
    }
    /// Moves to the next key; no-op when not valid.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// db.put(b"b", b"2").unwrap();
    /// let mut it = db.raw_iterator();
    /// it.seek(b"a");
    /// it.next();
    /// assert_eq!(it.key(), Some(&b"b"[..]));
    /// it.next();
    /// it.next(); // past the end: stays invalid
    /// assert_eq!(it.key(), None);
    /// ```
    pub fn next(&mut self) {
        if self.inner.valid() {
            self.inner.next()
        }
    }
    /// Moves to the previous key; no-op when not valid.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// db.put(b"b", b"2").unwrap();
    /// let mut it = db.raw_iterator();
    /// it.seek_to_last();
    /// it.prev();
    /// assert_eq!(it.key(), Some(&b"a"[..]));
    /// it.prev(); // before the first key
    /// assert!(!it.valid());
    /// ```
    pub fn prev(&mut self) {
        if self.inner.valid() {
            self.inner.prev()
        }
    }
    /// The current key.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// let mut it = db.raw_iterator();
    /// assert_eq!(it.key(), None); // not on an entry
    /// it.seek(b"k");
    /// assert_eq!(it.key(), Some(&b"k"[..]));
    /// ```
    pub fn key(&self) -> Option<&[u8]> {
        self.inner.valid().then(|| self.inner.key())
    }
    /// The current value.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// db.delete(b"gone").unwrap();
    /// let mut it = db.raw_iterator();
    /// it.seek(b"gone"); // tombstones are skipped
    /// assert_eq!(it.value(), Some(&b"v"[..]));
    /// it.seek(b"z");
    /// assert_eq!(it.value(), None);
    /// ```
    pub fn value(&self) -> Option<&[u8]> {
        self.inner.valid().then(|| self.inner.value())
    }
}

/// How far, in sequence numbers, a write's range may start past the
/// published position (the sequencer's ring): writers wait beyond it.
const SEQUENCER_WINDOW: usize = 1 << 16;

impl Shared {
    #[inline]
    fn visible(&self) -> u64 {
        // The sequencer's published position is one past the last visible
        // sequence; its Acquire makes the inserts below it visible to us.
        self.seq.published() - 1
    }

    fn current(&self) -> Arc<Version> {
        self.state.lock().expect("state").version.clone()
    }

    fn check_bg_error(&self) -> Result<()> {
        if self.has_bg_error.load(Ordering::Acquire) {
            return Err(self.background_error());
        }
        Ok(())
    }

    /// The error writers get while a background error stops writes.
    fn background_error(&self) -> Error {
        let cause = self.bg_error.lock().expect("bg error").clone();
        Error::BackgroundError(Arc::new(cause.unwrap_or_else(|| {
            Error::Aborted("writes were stopped by an earlier error".into())
        })))
    }

    /// Lets writes in again after a background error: a broken log is
    /// replaced (freezing the memtable it held), every frozen memtable is
    /// flushed, so that no replay ever needs the broken log, and only then
    /// is the error cleared. Writers fail meanwhile (the error is still set).
    fn resume(&self) -> Result<()> {
        if !self.has_bg_error.load(Ordering::Acquire) {
            return Ok(());
        }
        // Lock order: the sequencer's close (writes wait until the log is
        // replaced), then the state lock.
        let closed = self.seq.close();
        let mut st = self.state.lock().expect("state");
        // A flush or compaction that was running when the error came ends first.
        while st.bg.running_jobs > 0 {
            st = self.bg_cv.wait(st).expect("state");
        }
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
        let log_broken =
            (self.log.lock().expect("log").writer.as_ref()).is_none_or(LogWriter::is_failed);
        if log_broken {
            self.install_new_log(&closed, &mut st)?;
        }
        drop(st);
        // Writes stay held off until no replay can need the broken log: a
        // record in the new log could not be replayed past it.
        while !self.state.lock().expect("state").version.imm.is_empty() {
            self.flush_oldest()?;
        }
        *self.bg_error.lock().expect("bg error") = None;
        self.has_bg_error.store(false, Ordering::Release);
        drop(closed);
        info!(self.info_log, "resumed; writes go on");
        let _st = self.state.lock().expect("state");
        self.bg_cv.notify_all();
        Ok(())
    }

    fn set_bg_error(&self, e: Error) {
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
    fn record_bg_error(&self, e: Error) {
        info!(self.info_log, "background error, writes stop: {e}");
        {
            let mut slot = self.bg_error.lock().expect("bg error");
            if slot.is_none() {
                *slot = Some(e);
            }
        }
        self.has_bg_error.store(true, Ordering::Release);
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
        let _st = self.state.lock().expect("state");
        self.bg_cv.notify_all();
    }

    fn oldest_snapshot(&self) -> u64 {
        let snaps = self.snapshots.lock().expect("snapshot list");
        snaps
            .keys()
            .next()
            .copied()
            .unwrap_or_else(|| self.visible())
    }
}

fn prepare_dir(fs: &dyn FileSystem, dir: &Path, opts: &Options) -> Result<()> {
    // Through `fs` only: a custom file system must not see the real disk.
    if fs.is_dir(dir) {
        return Ok(());
    }
    if fs.exists(dir) {
        return Err(Error::NotADirectory(dir.to_path_buf()));
    }
    if !opts.create_if_missing {
        return Err(Error::NotFound(dir.to_path_buf()));
    }
    fs.create_dir_all(dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs.sync_dir(parent)
            .map_err(|e| Error::io(format!("syncing {}", parent.display()), e))?;
    }
    Ok(())
}
