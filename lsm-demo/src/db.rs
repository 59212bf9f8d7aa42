//! The database: open and recovery, the write path through the write group,
//! reads, snapshots, and the background flush and compaction thread.
//!
//! # The write path
//!
//! ```text
//! put ─► make_room_for_write ─┬─ with the log: WriteGroup::write(item)
//!          (switch a full       │    leader: reserve the group's sequence
//!           memtable under the  │            numbers, one log record, one
//!           unbatched entry and │            fdatasync if asked
//!           a closed sequencer; │    apply:  serial (leader inserts for all)
//!           stall while flushes │            or parallel (tree wake-up)
//!           fall behind)        │    publish: finish the group's range
//!                               └─ without the log: reserve, insert beside
//!                                  everyone else, finish, no group at all
//!                                  ▼
//!                       wait until the sequencer's published position
//!                       passes the write (every earlier write is in too)
//! ```
//!
//! Sequence numbers come from an [`ordered_publish::Sequencer`]: one
//! compare-and-swap reserves a range, and readers see everything below its
//! published position, which never passes a write still being inserted, so
//! nobody sees part of a batch and a writer reads its own write once it
//! returns.
//!
//! # Shared memory one unsynced write touches
//!
//! Every atomic read-modify-write, lock and store to a cache line that other
//! writers use, on the path of one `put` without `sync` (a group of one, as
//! unsynced writes from a few threads mostly are). Loads of lines that are
//! almost never written (the background-error flag, the memtable-full flag,
//! the memtable pointer) are not listed: they stay shared in every core's
//! cache.
//!
//! | step | until 2026-12-05 | with the log | without the log |
//! |---|---|---|---|
//! | room in the memtable | `state` mutex (lock, unlock) and the arena's size counters read | a load of the memtable-full flag, set now and then by a leader | the same, set now and then by a writer |
//! | the version for the leader | `state` mutex (lock, unlock), `Arc<Version>` clone and drop | none: the memtable sits in the [`LeaderCell`] | none: a pointer, replaced only while the sequencer is closed |
//! | the log and sequence state | `log` mutex (lock, unlock) | none: [`LeaderCell`], passed on with leadership | no log |
//! | the memtable for each member | `Arc<Memtable>` clone by the leader, drop by the member | none: a reference in the group's token | none |
//! | the log record | a heap buffer per group | a buffer reused by leaders | no log |
//! | the write group | joining and leaving its queue, the publish turn | the same | none |
//! | sequence numbers | a counter in the log state, under its mutex | the sequencer's compare-and-swap | the same |
//! | the memtable insert | the skiplist's links, the arena shard's bump | the same | the same |
//! | visibility | one store of the visible sequence per group | finishing the range: a store to the published position (or a ring slot), a fence | the same |
//!
//! [`LeaderCell`]: write_group::LeaderCell
//!
//! The files in the directory, and how they are recognised, replayed and
//! retired, are described in [`crate::recovery`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::batch::{GROUP_HEADER_LEN, WriteBatch, group_header};
use crate::compaction::CompactionFilter;
use crate::env::{FileLock, FileSystem, PosixFs};
use crate::error::{Error, Result};
use crate::filename::log_path;
use crate::info_log::{InfoLog, info};
use crate::iter::{InternalIterator, MergingIterator, UserIterator};
use crate::key::{MAX_SEQUENCE, user_key};
use crate::manifest::{Manifest, NUM_LEVELS, write_manifest};
use crate::memtable::Memtable;
use crate::options::{MAX_KEY_LEN, MAX_VALUE_LEN, Options, ReadOptions, WriteOptions};
use crate::recovery::{
    Inventory, RecoveryStats, create_database, delete_obsolete_files, lock_dir, recognise, recover,
};
use crate::version::{TableIterAdapter, Version, build_table};
use crate::wal::{LogWriter, MAX_RECORD_LEN};
use ordered_publish::Sequencer;

/// State changed only under `Shared::state`.
struct State {
    version: Arc<Version>,
    manifest: Manifest,
    /// A flush or compaction is running (only the background thread runs them).
    bg_busy: bool,
    /// The writer that stalled the write group, if any, so the background
    /// thread knows to lift it.
    stalled: bool,
}

/// What only a group's leader (one at a time) or the holder of the
/// unbatched entry touches: the log, the sequence allocator, and the
/// memtable that takes the groups' writes. Kept in a [`LeaderCell`], so a
/// write reaches it without a lock or a shared refcount.
///
/// [`LeaderCell`]: write_group::LeaderCell
struct LogState {
    writer: Option<LogWriter>,
    number: u64,
    /// The mutable memtable (also `Version::mem`): replaced only under the
    /// unbatched entry, after every group given the old one has finished.
    mem: Arc<Memtable>,
    /// Batch bytes given to `mem` since its last exact size check, and the
    /// count at which to check again (see `Shared::note_memtable_growth`).
    bytes_since_check: usize,
    next_check: usize,
    /// The buffer a group's log record is assembled in, kept between groups.
    record: Vec<u8>,
}

pub(crate) struct Shared {
    dir: PathBuf,
    opts: Options,
    fs: Arc<dyn FileSystem>,
    group: write_group::WriteGroup<WriteItem, Shared>,
    /// Hands out sequence numbers and publishes them in order: everything
    /// below its published position is inserted, so readers see it.
    seq: Sequencer,
    /// The mutable memtable, for writes that skip the write group (those
    /// without the log): points into `LogState::mem`'s `Arc`, and is only
    /// replaced while `seq` is closed.
    current_mem: AtomicPtr<Memtable>,
    log: write_group::LeaderCell<LogState>,
    /// Set by a leader once the mutable memtable is full: writers take the
    /// slow path of `make_room_for_write` while it is set.
    memtable_full: AtomicBool,
    state: Mutex<State>,
    /// Signalled when the background thread has work, or finished some.
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
/// everything through `&DB`. Dropping it stops the background thread and
/// closes the files; writes made without the log (`disable_wal`) are flushed
/// first, so they survive a clean close.
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
    bg: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for DB {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DB")
            .field("path", &self.shared.dir)
            .finish_non_exhaustive()
    }
}

/// One writer's request as it travels through the write group.
pub(crate) struct WriteItem {
    batch: WriteBatch,
    sync: bool,
    disable_wal: bool,
    no_slowdown: bool,
    /// Assigned by the leader.
    first_sequence: u64,
    /// The memtable the leader picked for this group.
    mem: Option<Arc<Memtable>>,
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
        let group = write_group::WriteGroup::new(opts.write_group.clone());
        let log = group.leader_cell(LogState {
            writer: Some(recovered.log),
            number: recovered.log_number,
            mem: version.mem.clone(),
            bytes_since_check: 0,
            next_check: first_size_check(opts.write_buffer_size),
            record: Vec::new(),
        });
        let shared = Arc::new(Shared {
            dir,
            opts: opts.clone(),
            fs,
            group,
            seq: Sequencer::new(next_sequence, SEQUENCER_WINDOW),
            current_mem: AtomicPtr::new(Arc::as_ptr(&version.mem).cast_mut()),
            log,
            memtable_full: AtomicBool::new(false),
            state: Mutex::new(State {
                version: Arc::new(version),
                manifest: recovered.manifest,
                bg_busy: false,
                stalled: false,
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
        let bg_shared = shared.clone();
        let bg = std::thread::Builder::new()
            .name("lsm-demo-bg".into())
            .spawn(move || bg_shared.background_loop())
            .map_err(|e| Error::io("starting the background thread", e))?;
        let db = DB {
            shared,
            bg: Some(bg),
        };
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
        self.shared.make_room_for_write(wo.no_slowdown)?;
        if wo.disable_wal {
            self.shared.write_unlogged(&batch)?;
            return Ok(batch);
        }
        let mut item = WriteItem {
            batch,
            sync: wo.sync,
            disable_wal: wo.disable_wal,
            no_slowdown: wo.no_slowdown,
            first_sequence: 0,
            mem: None,
        };
        // In place: the item stays in this frame while the group's leader
        // fills in its sequence and memtable.
        self.shared
            .group
            .write_in_place(&*self.shared, &mut item)
            .map_err(|e| match e {
                write_group::WriteError::Group(e) => e,
                write_group::WriteError::Stalled => Error::WriteStall,
                write_group::WriteError::LeaderPanicked => Error::Aborted(
                    "the write group's leader panicked; the write was not applied".into(),
                ),
            })?;
        // Our group is published; an earlier write (without the log) may
        // still be inserting: visible means everything up to ours is.
        let end = item.first_sequence + item.batch.len() as u64;
        self.shared.seq.wait_published(end);
        if self.shared.opts.unordered_write {
            // The group published our sequences already; insert now, on our own.
            let mem = item.mem.as_ref().expect("the leader assigns a memtable");
            mem.rep.insert_batch(item.first_sequence, &item.batch, true);
            // Release: the flush that waits for zero must see the inserts.
            mem.pending_inserts.fetch_sub(1, Ordering::Release);
        }
        Ok(item.batch)
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
            let mut unbatched = self.shared.group.enter_unbatched();
            let st = self.shared.state.lock().expect("state");
            if !st.version.mem.is_empty() {
                self.shared.switch_memtable(&mut unbatched, st)?;
            }
        }
        let mut st = self.shared.state.lock().expect("state");
        while !st.version.imm.is_empty() && !self.shared.has_bg_error.load(Ordering::Acquire) {
            st = self.shared.bg_cv.wait(st).expect("state");
        }
        drop(st);
        self.shared.check_bg_error()
    }

    /// Numbers about the engine, for benchmarks and tests.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// db.put(b"b", b"2").unwrap();
    /// let stats = db.stats();
    /// assert_eq!(stats.last_sequence, 2);
    /// assert_eq!(stats.memtable_entries, 2);
    /// assert_eq!(stats.write_group.members, 2);
    /// ```
    pub fn stats(&self) -> DbStats {
        let st = self.shared.state.lock().expect("state");
        let v = &st.version;
        let mem_bytes = v.mem.rep.memory_usage();
        let mem_entries = v.mem.rep.len();
        DbStats {
            write_group: self.shared.group.stats(),
            level_files: [v.levels[0].len(), v.levels[1].len()],
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
        if let Some(h) = self.bg.take() {
            let _ = h.join();
        }
        let mut unbatched = self.shared.group.enter_unbatched();
        if let Some(w) = self
            .shared
            .log
            .get_unbatched(&mut unbatched)
            .writer
            .as_mut()
        {
            let _ = w.sync();
        }
    }
}

/// Engine counters.
///
/// # Examples
///
/// A flush moves the memtable's entries into a level-0 table file:
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// db.put(b"a", b"1").unwrap();
/// db.put(b"b", b"2").unwrap();
/// assert_eq!(db.stats().memtable_entries, 2);
/// db.flush().unwrap();
/// let stats = db.stats();
/// assert_eq!(stats.memtable_entries, 0);
/// assert_eq!(stats.immutable_memtables, 0);
/// assert_eq!(stats.level_files, [1, 0]);
/// ```
#[derive(Debug, Clone)]
pub struct DbStats {
    /// The write group's counters (groups, members, wake-ups, sizes).
    pub write_group: write_group::Stats,
    /// Table files per level.
    pub level_files: [usize; NUM_LEVELS],
    /// Frozen memtables waiting for flush.
    pub immutable_memtables: usize,
    /// Bytes of the mutable memtable.
    pub memtable_bytes: usize,
    /// Entries of the mutable memtable.
    pub memtable_entries: usize,
    /// The last visible sequence number.
    pub last_sequence: u64,
    /// What recovery found and did when this database was opened.
    pub recovery: RecoveryStats,
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

// ---- the write group's callbacks -------------------------------------------

/// The token a group's leader hands to `apply` and `publish`.
#[derive(Debug)]
pub(crate) struct GroupEnd {
    /// The group's sequence numbers.
    range: std::ops::Range<u64>,
    /// Whether members insert into the memtable concurrently.
    parallel: bool,
    /// The memtable the group's writes go to.
    mem: MemtableRef,
}

/// The memtable a group's leader picked, for the group's `apply` calls,
/// without touching a shared reference count per write.
///
/// The pointer comes from the `Arc` in [`LogState::mem`], which is replaced
/// only under the write group's unbatched entry, and that entry first waits
/// for every group queued before it to finish (inserts done, sequence
/// published). So the memtable outlives every group handed a reference.
#[derive(Debug, Clone, Copy)]
struct MemtableRef(*const Memtable);

// SAFETY: a `MemtableRef` is a shared reference to a `Memtable`, which is
// `Sync`, used only while it is alive (see the type's docs): sending or
// sharing it is sending or sharing a `&Memtable`.
unsafe impl Send for MemtableRef {}
// SAFETY: as for `Send`.
unsafe impl Sync for MemtableRef {}

impl MemtableRef {
    /// The memtable.
    ///
    /// # Safety
    ///
    /// Only while the group this reference was made for runs.
    unsafe fn get(&self) -> &Memtable {
        // SAFETY: the caller keeps to the group's lifetime, during which
        // the `Arc` in `LogState::mem` keeps the memtable alive.
        unsafe { &*self.0 }
    }

    /// An owned reference, for a writer that inserts after its group
    /// (`unordered_write`).
    ///
    /// # Safety
    ///
    /// As for [`Self::get`].
    unsafe fn clone_arc(&self) -> Arc<Memtable> {
        // SAFETY: the pointer came from `Arc::as_ptr` of an `Arc` that is
        // alive (see `get`); counting one more strong reference and then
        // taking it makes an `Arc` of its own.
        unsafe {
            Arc::increment_strong_count(self.0);
            Arc::from_raw(self.0)
        }
    }
}

impl write_group::Commit<WriteItem> for Shared {
    type Error = Error;
    type Token = GroupEnd;

    fn size(&self, item: &WriteItem) -> usize {
        item.batch.data_size()
    }

    fn no_slowdown(&self, item: &WriteItem) -> bool {
        item.no_slowdown
    }

    fn gather_window(&self, item: &WriteItem) -> Duration {
        if !(item.sync && self.opts.group_commit_wait) {
            return Duration::ZERO;
        }
        // Half a sync: a wait that times out costs at most that; one that
        // succeeds saves a whole sync for every writer it gathers.
        // Relaxed: an estimate; any recent value will do.
        let half_sync = Duration::from_nanos(self.sync_nanos.load(Ordering::Relaxed) / 2);
        half_sync.min(MAX_SYNC_GATHER)
    }

    fn compatible(&self, leader: &WriteItem, other: &WriteItem) -> bool {
        // A sync writer must not ride in a group that will not sync, and the
        // log is written for all members or none.
        (leader.sync || !other.sync) && leader.disable_wal == other.disable_wal
    }

    fn lead(
        &self,
        members: &mut write_group::GroupMembers<'_, WriteItem>,
    ) -> Result<write_group::Lead<GroupEnd>> {
        let count: u64 = members.iter().map(|item| item.batch.len() as u64).sum();
        // One step for the whole group; the range must be finished on every
        // path, or the published position stops before it.
        let range = self.seq.reserve(count);
        let first = range.start;
        if range.end - 1 > MAX_SEQUENCE {
            self.seq.finish(range);
            return Err(Error::InvalidArgument("sequence numbers exhausted".into()));
        }
        let mut seq = first;
        let mut sync = false;
        let mut use_wal = false;
        let mut bytes = 0;
        for item in members.iter_mut() {
            item.first_sequence = seq;
            seq += item.batch.len() as u64;
            sync |= item.sync;
            use_wal |= !item.disable_wal;
            bytes += item.batch.data_size();
        }
        let (log, members) = self.log.get_with_members(members);
        if use_wal {
            let mut record = std::mem::take(&mut log.record);
            record.clear();
            record.extend_from_slice(&group_header(first, count as u32));
            for item in members.iter() {
                record.extend_from_slice(item.batch.records());
            }
            let log_number = log.number;
            let Some(writer) = log.writer.as_mut() else {
                self.seq.finish(range);
                return Err(self.background_error());
            };
            let result = writer.add_record(&record).and_then(|()| {
                if sync {
                    self.timed_sync(writer)
                } else {
                    Ok(())
                }
            });
            // Keep the buffer for the next group unless it grew huge.
            if record.capacity() <= 1 << 20 {
                log.record = record;
            }
            if let Err(e) = result {
                // The log may now hold part of the record: no later write may
                // follow it. Refuse writes until `resume` retires this log.
                // The group's sequence numbers stay used (finished with
                // nothing inserted): a whole record (a failed sync) may
                // still be read back from this log.
                log.writer = None;
                self.seq.finish(range);
                let err = Error::io(
                    format!("writing {}", log_path(&self.dir, log_number).display()),
                    e,
                );
                self.set_bg_error(err.clone());
                return Err(err);
            }
        } else if !log.mem.has_unlogged.load(Ordering::Relaxed) {
            // Relaxed: read on drop, after every write has returned. Stored
            // once, so the line stays shared among writers.
            log.mem.has_unlogged.store(true, Ordering::Relaxed);
        }
        self.note_memtable_growth(log, bytes);
        // A synced group's members slept through the sync: waking each to
        // insert a small batch costs more than the leader inserting it.
        let small_batches = count < PARALLEL_MIN_ENTRIES_PER_MEMBER * members.len() as u64;
        let parallel = self.opts.allow_concurrent_memtable_write
            && members.len() > 1
            && !(sync && small_batches);
        let token = GroupEnd {
            range,
            parallel,
            mem: MemtableRef(Arc::as_ptr(&log.mem)),
        };
        Ok(if self.opts.unordered_write {
            // Each writer inserts after the group (`apply` hands it the
            // memtable); count them so a flush of this memtable waits.
            // Relaxed: the flush reads it with Acquire after the switch,
            // which the unbatched entry orders after this group.
            log.mem
                .pending_inserts
                .fetch_add(members.len(), Ordering::Relaxed);
            write_group::Lead::serial(token)
        } else if parallel || (self.opts.allow_concurrent_memtable_write && members.len() == 1) {
            // Both memtables take concurrent inserts, so a group's inserts
            // may overlap the next group's; publishes stay in order. A lone
            // writer then hands leadership on before inserting, and two
            // writers insert at once instead of taking turns.
            write_group::Lead::pipelined(token)
        } else {
            write_group::Lead::serial(token)
        })
    }

    fn apply(&self, item: &mut WriteItem, token: &GroupEnd) {
        if self.opts.unordered_write {
            // The writer inserts after the group, with its own reference.
            // SAFETY: see `MemtableRef`: the group is running.
            item.mem = Some(unsafe { token.mem.clone_arc() });
            return;
        }
        // SAFETY: see `MemtableRef`: the group is running, so the memtable
        // its leader picked is alive.
        let mem = unsafe { token.mem.get() };
        mem.rep
            .insert_batch(item.first_sequence, &item.batch, token.parallel);
    }

    fn publish(&self, token: GroupEnd) {
        // Every insert of the group is done (the write group orders all
        // applies before publish): readers may see it once the ranges
        // before it are finished too.
        self.seq.finish(token.range);
    }
}

/// Refuses a batch that one log record cannot hold, before anything is
/// written: the database stays writable.
fn check_batch_size(data_size: usize) -> Result<()> {
    let limit = MAX_RECORD_LEN - GROUP_HEADER_LEN;
    if data_size > limit {
        return Err(Error::InvalidArgument(format!(
            "a batch of {data_size} bytes exceeds {limit}, the most one log record holds"
        )));
    }
    Ok(())
}

/// How far, in sequence numbers, a write's range may start past the
/// published position (the sequencer's ring): writers wait beyond it.
const SEQUENCER_WINDOW: usize = 1 << 16;

/// The write group's unbatched entry, as the engine holds it.
type Unbatched<'a> = write_group::UnbatchedGuard<'a, WriteItem, Shared>;

/// Batch bytes before the first exact size check of a new memtable of
/// `write_buffer_size` bytes: a batch byte takes at least a memtable byte,
/// so an eighth of the buffer cannot fill it.
fn first_size_check(write_buffer_size: usize) -> usize {
    (write_buffer_size / 8).max(MIN_SIZE_CHECK)
}

/// The closest two exact size checks of a memtable come, in batch bytes.
const MIN_SIZE_CHECK: usize = 4 << 10;

/// A group that syncs inserts into the memtable in parallel only when its
/// batches hold at least this many entries on average.
const PARALLEL_MIN_ENTRIES_PER_MEMBER: u64 = 16;

/// The longest a sync group's leader waits for more writers.
const MAX_SYNC_GATHER: Duration = Duration::from_millis(1);

impl Shared {
    /// Syncs the log and folds the time it took into `sync_nanos`.
    fn timed_sync(&self, writer: &mut LogWriter) -> std::io::Result<()> {
        let start = Instant::now();
        writer.sync()?;
        let took = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        // Relaxed: only leaders write it, one at a time; readers want an
        // estimate. An average over about eight syncs.
        let old = self.sync_nanos.load(Ordering::Relaxed);
        let average = if old == 0 {
            took
        } else {
            old - old / 8 + took / 8
        };
        self.sync_nanos.store(average, Ordering::Relaxed);
        Ok(())
    }

    /// Counts `bytes` of batches given to the mutable memtable and, now and
    /// then, checks its real size (the arena's per-shard counters, read on
    /// a schedule that shrinks with the room left, never per write); once
    /// it is full, sets `memtable_full` so the next writer switches it.
    fn note_memtable_growth(&self, log: &mut LogState, bytes: usize) {
        log.bytes_since_check += bytes;
        if log.bytes_since_check < log.next_check {
            return;
        }
        let used = log.mem.rep.memory_usage();
        let limit = self.opts.write_buffer_size;
        log.bytes_since_check = 0;
        if used >= limit {
            // Relaxed: a hint; writers re-check under the unbatched entry.
            self.memtable_full.store(true, Ordering::Relaxed);
            log.next_check = MIN_SIZE_CHECK;
        } else {
            // A batch byte takes at least a memtable byte, and entries cost
            // a few times their bytes at most: an eighth of the room left
            // is a safe distance to the next check.
            log.next_check = ((limit - used) / 8).max(MIN_SIZE_CHECK);
        }
    }

    /// A write without the log: no write group, no leader. The sequence
    /// numbers come from the sequencer in one step, the insert runs beside
    /// everyone else's, and the write returns once it is published.
    fn write_unlogged(&self, batch: &WriteBatch) -> Result<()> {
        let range = self.seq.reserve(batch.len() as u64);
        if range.end - 1 > MAX_SEQUENCE {
            self.seq.finish(range);
            return Err(Error::InvalidArgument("sequence numbers exhausted".into()));
        }
        // Acquire: pairs with the Release store in `install_new_log`.
        let mem = self.current_mem.load(Ordering::Acquire);
        // SAFETY: `current_mem` points into the `Arc` held by
        // `LogState::mem`, which `install_new_log` replaces only while the
        // sequencer is closed; closing waits for every reserved range to
        // be finished, ours included, so the memtable outlives this use.
        // The reservation (Acquire) made after the last reopening sees the
        // pointer stored before it.
        let mem = unsafe { &*mem };
        mem.rep.insert_batch(range.start, batch, true);
        if !mem.has_unlogged.load(Ordering::Relaxed) {
            // Relaxed: read on drop, after every write has returned.
            mem.has_unlogged.store(true, Ordering::Relaxed);
        }
        self.note_unlogged_growth(mem, batch.data_size());
        self.seq.finish(range.clone());
        self.seq.wait_published(range.end);
        Ok(())
    }

    /// The size check of [`Self::note_memtable_growth`] for writes without
    /// a leader: each thread counts its own bytes and looks at the real
    /// size once it has written a sixteenth of the buffer (at most 64 KiB).
    fn note_unlogged_growth(&self, mem: &Memtable, bytes: usize) {
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
        if mem.rep.memory_usage() >= self.opts.write_buffer_size {
            // Relaxed: a hint; writers re-check under the unbatched entry.
            self.memtable_full.store(true, Ordering::Relaxed);
        }
    }

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
    /// is the error cleared. Writers wait meanwhile (the unbatched entry).
    fn resume(&self) -> Result<()> {
        if !self.has_bg_error.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut unbatched = self.group.enter_unbatched();
        let mut st = self.state.lock().expect("state");
        // A flush or compaction that was running when the error came ends first.
        while st.bg_busy {
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
        let log = self.log.get_unbatched(&mut unbatched);
        let log_broken = log.writer.as_ref().is_none_or(LogWriter::is_failed);
        if log_broken {
            self.install_new_log(&mut unbatched, &mut st)?;
        }
        drop(st);
        while !self.state.lock().expect("state").version.imm.is_empty() {
            self.flush_oldest()?;
        }
        *self.bg_error.lock().expect("bg error") = None;
        self.has_bg_error.store(false, Ordering::Release);
        info!(self.info_log, "resumed; writes go on");
        let _st = self.state.lock().expect("state");
        self.bg_cv.notify_all();
        Ok(())
    }

    fn set_bg_error(&self, e: Error) {
        info!(self.info_log, "background error, writes stop: {e}");
        {
            let mut slot = self.bg_error.lock().expect("bg error");
            if slot.is_none() {
                *slot = Some(e);
            }
        }
        self.has_bg_error.store(true, Ordering::Release);
        // Wake writers waiting for room, so they see the error. The error
        // slot is released first: `make_room_for_write` holds the state
        // lock while it reads the slot, so holding both here would invert
        // the lock order.
        let _st = self.state.lock();
        self.bg_cv.notify_all();
    }

    /// Makes sure the mutable memtable has room, switching it when full and
    /// waiting (a stall) while too many frozen memtables or level-0 files
    /// wait for the background thread.
    fn make_room_for_write(&self, no_slowdown: bool) -> Result<()> {
        loop {
            // Relaxed: a hint a leader sets; what follows re-checks under
            // the unbatched entry and the state lock.
            if !self.memtable_full.load(Ordering::Relaxed) {
                return Ok(());
            }
            let mut unbatched = self.group.enter_unbatched();
            let mut st = self.state.lock().expect("state");
            if st.version.mem.rep.memory_usage() < self.opts.write_buffer_size {
                return Ok(());
            }
            self.check_bg_error()?;
            let too_many_imm = st.version.imm.len() + 1 >= self.opts.max_write_buffer_number;
            let too_many_l0 = st.version.levels[0].len() >= self.opts.level0_stop_writes_trigger;
            if too_many_imm || too_many_l0 {
                if no_slowdown {
                    return Err(Error::WriteStall);
                }
                // Stall: new writers wait in the write group (no_slowdown
                // ones fail) until the background thread catches up.
                if !st.stalled {
                    self.group.stall();
                    st.stalled = true;
                }
                self.bg_cv.notify_all();
                let _st = self.bg_cv.wait(st).expect("state");
                continue;
            }
            self.switch_memtable(&mut unbatched, st)?;
            return Ok(());
        }
    }

    /// Freezes the mutable memtable and starts a new one with a new log.
    /// The caller holds the write group's unbatched entry.
    fn switch_memtable(
        &self,
        unbatched: &mut Unbatched<'_>,
        mut st: MutexGuard<'_, State>,
    ) -> Result<()> {
        // After a failed log write (the lead step closes the log and sets
        // the background error before any later group or unbatched entry
        // runs), a fresh log would take writes that already passed
        // `check_bg_error` and wait in the queue, and acknowledge them while
        // the broken log is still needed by a replay, which stops at its
        // damage and would drop them. Only `resume` replaces a broken log,
        // and it retires the broken one before it lets writes in.
        self.check_bg_error()?;
        self.install_new_log(unbatched, &mut st)
    }

    /// The body of [`Self::switch_memtable`], without the error check.
    fn install_new_log(
        &self,
        unbatched: &mut Unbatched<'_>,
        st: &mut MutexGuard<'_, State>,
    ) -> Result<()> {
        let number = st.manifest.next_file_number;
        st.manifest.next_file_number += 1;
        let path = log_path(&self.dir, number);
        let file = self
            .fs
            .create(&path)
            .map_err(|e| Error::io(format!("creating {}", path.display()), e))?;
        // The new log must survive power loss before any synced write lands in it.
        self.fs
            .sync_dir(&self.dir)
            .map_err(|e| Error::io(format!("syncing {}", self.dir.display()), e))?;
        {
            let log = self.log.get_unbatched(unbatched);
            let old_number = log.number;
            // The new log's header first: once the old log ends with its
            // trailer, no record may follow it there.
            let writer = LogWriter::with_previous(file, old_number)
                .map_err(|e| Error::io(format!("starting {}", path.display()), e))?;
            // A failed writer (see `resume`) takes no trailer: its log is
            // retired before any write reaches the new one.
            if let Some(old) = log.writer.as_mut().filter(|w| !w.is_failed()) {
                // The old log ends with a trailer naming the new one, so a
                // replay can tell a complete log from one cut short. Its
                // unsynced writes must be durable once a later synced write
                // in the new log is. A failure leaves the old writer
                // refusing writes (it fails for good after any error).
                let trailer = crate::batch::log_trailer(number);
                old.add_record(&trailer)
                    .and_then(|()| old.sync())
                    .map_err(|e| {
                        Error::io(
                            format!("ending {}", log_path(&self.dir, old_number).display()),
                            e,
                        )
                    })?;
            }
            log.writer = Some(writer);
            log.number = number;
        }
        // Writes without the log skip the unbatched entry: closing the
        // sequencer waits for those in flight and holds new ones off until
        // the new memtable is in place.
        let closed = self.seq.close();
        let old = st.version.mem.clone();
        // unordered_write: writers of earlier groups may still be inserting
        // into the old memtable (they insert after leaving their group). No
        // group runs now, so the count only falls; wait for it before
        // freezing, which refuses later inserts.
        while old.pending_inserts.load(Ordering::Acquire) > 0 {
            std::thread::yield_now();
        }
        old.rep.mark_read_only();
        let mem = Arc::new(Memtable::new(
            self.opts.memtable_kind,
            number,
            self.opts.write_buffer_size,
        ));
        let log = self.log.get_unbatched(unbatched);
        log.mem = mem.clone();
        log.bytes_since_check = 0;
        log.next_check = first_size_check(self.opts.write_buffer_size);
        // Writes without the log reach the memtable through the pointer
        // (see `write_unlogged`). Release: reservations after the reopening
        // acquire it.
        self.current_mem
            .store(Arc::as_ptr(&mem).cast_mut(), Ordering::Release);
        // Relaxed: read as a hint; writers re-check under the unbatched
        // entry, which this thread holds.
        self.memtable_full.store(false, Ordering::Relaxed);
        st.version = Arc::new(st.version.with(|v| {
            v.imm.insert(0, old);
            v.mem = mem;
        }));
        drop(closed);
        self.bg_cv.notify_all();
        Ok(())
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

    fn background_loop(&self) {
        let mut st = self.state.lock().expect("state");
        let mut resume_attempts: u32 = 0;
        loop {
            if self.has_bg_error.load(Ordering::Acquire) {
                // Nothing more can be made durable; wake stalled writers so
                // they see the error, then idle until shutdown, or retry
                // after a full disk (RocksDB's auto-resume).
                if st.stalled {
                    st.stalled = false;
                    self.group.release_stall();
                }
                self.bg_cv.notify_all();
                if self.shutting_down.load(Ordering::Acquire) {
                    return;
                }
                let no_space = self.background_error().kind() == crate::ErrorKind::NoSpace;
                if !(no_space && resume_attempts < self.opts.max_bgerror_resume_count) {
                    st = self.bg_cv.wait(st).expect("state");
                    continue;
                }
                let interval = self.opts.bgerror_resume_retry_interval;
                st = self.bg_cv.wait_timeout(st, interval).expect("state").0;
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
                st = self.state.lock().expect("state");
                continue;
            }
            let work = if !st.version.imm.is_empty() {
                Some(true)
            } else if st.version.levels[0].len() >= self.opts.level0_compaction_trigger {
                Some(false)
            } else {
                None
            };
            match work {
                Some(is_flush) => {
                    st.bg_busy = true;
                    drop(st);
                    let result = if is_flush {
                        self.flush_oldest()
                    } else {
                        self.compact()
                    };
                    if let Err(e) = result {
                        self.set_bg_error(e);
                    }
                    st = self.state.lock().expect("state");
                    st.bg_busy = false;
                    let room = st.version.imm.len() + 1 < self.opts.max_write_buffer_number
                        && st.version.levels[0].len() < self.opts.level0_stop_writes_trigger;
                    if st.stalled && room {
                        st.stalled = false;
                        self.group.release_stall();
                    }
                    self.bg_cv.notify_all();
                }
                None => {
                    if self.shutting_down.load(Ordering::Acquire) {
                        return;
                    }
                    st = self.bg_cv.wait(st).expect("state");
                }
            }
        }
    }

    /// Writes the oldest frozen memtable to a level-0 table.
    fn flush_oldest(&self) -> Result<()> {
        let (mem, number) = {
            let mut st = self.state.lock().expect("state");
            let Some(mem) = st.version.imm.last().cloned() else {
                return Ok(());
            };
            let n = st.manifest.next_file_number;
            st.manifest.next_file_number += 1;
            (mem, n)
        };
        // unordered_write: wait for the writers still inserting into it.
        while mem.pending_inserts.load(Ordering::Acquire) > 0 {
            std::thread::yield_now();
        }
        let table = build_table(
            &*self.fs,
            &self.dir,
            &self.opts,
            number,
            mem.rep.clone().iter(),
            None,
        )?;
        let mut st = self.state.lock().expect("state");
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
        let table = table.map(Arc::new);
        st.version = Arc::new(st.version.with(|v| {
            v.imm.pop();
            if let Some(t) = table {
                v.levels[0].insert(0, t);
            }
        }));
        delete_obsolete_files(&*self.fs, &self.dir, &mut st.manifest, &self.info_log);
        Ok(())
    }

    /// Merges every level-0 file and the overlapping level-1 files into new
    /// level-1 files.
    fn compact(&self) -> Result<()> {
        let (inputs0, inputs1, keep1) = {
            let st = self.state.lock().expect("state");
            let l0 = st.version.levels[0].clone();
            if l0.is_empty() {
                return Ok(());
            }
            let lo = l0
                .iter()
                .map(|t| user_key(&t.meta.smallest))
                .min()
                .expect("non-empty")
                .to_vec();
            let hi = l0
                .iter()
                .map(|t| user_key(&t.meta.largest))
                .max()
                .expect("non-empty")
                .to_vec();
            let (overlap, keep): (Vec<_>, Vec<_>) =
                st.version.levels[1].iter().cloned().partition(|t| {
                    user_key(&t.meta.largest) >= &lo[..] && user_key(&t.meta.smallest) <= &hi[..]
                });
            (l0, overlap, keep)
        };
        let oldest_snapshot = self.oldest_snapshot();
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
        for t in inputs0.iter().chain(inputs1.iter()) {
            children.push(Box::new(TableIterAdapter(t.table.iter())));
        }
        let mut merged = MergingIterator::new(children);
        merged.seek_to_first();
        // Level 1 is the bottom and every level-1 file overlapping the inputs
        // is an input too: no older version of a key lies below, so
        // tombstones that no snapshot needs can go.
        let mut filtered = CompactionFilter::new(merged, oldest_snapshot, true);
        let mut outputs = Vec::new();
        loop {
            let number = {
                let mut st = self.state.lock().expect("state");
                let n = st.manifest.next_file_number;
                st.manifest.next_file_number += 1;
                n
            };
            match build_table(
                &*self.fs,
                &self.dir,
                &self.opts,
                number,
                Box::new(&mut filtered),
                Some(self.opts.target_file_size),
            )? {
                Some(mut t) => {
                    t.meta.level = 1;
                    outputs.push(Arc::new(t));
                }
                None => break,
            }
            if !filtered.valid() {
                break;
            }
        }
        filtered.status()?;
        let mut st = self.state.lock().expect("state");
        let mut manifest = st.manifest.clone();
        let gone: Vec<u64> = inputs0
            .iter()
            .chain(inputs1.iter())
            .map(|t| t.meta.number)
            .collect();
        manifest.files.retain(|f| !gone.contains(&f.number));
        manifest
            .files
            .extend(outputs.iter().map(|t| t.meta.clone()));
        manifest.obsolete_tables.extend(&gone);
        self.write_manifest(&manifest)?;
        st.manifest = manifest;
        info!(
            self.info_log,
            "compacted tables {gone:?} into {:?}",
            outputs.iter().map(|t| t.meta.number).collect::<Vec<_>>()
        );
        st.version = Arc::new(st.version.with(|v| {
            // Flushes may have added level-0 files meanwhile: keep those.
            v.levels[0].retain(|t| !gone.contains(&t.meta.number));
            let mut l1: Vec<_> = keep1.clone();
            l1.extend(outputs.iter().cloned());
            l1.sort_by(|a, b| {
                crate::key::compare_internal_keys(&a.meta.smallest, &b.meta.smallest)
            });
            v.levels[1] = l1;
        }));
        delete_obsolete_files(&*self.fs, &self.dir, &mut st.manifest, &self.info_log);
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_larger_than_a_log_record_is_refused_before_it_is_written() {
        let limit = MAX_RECORD_LEN - GROUP_HEADER_LEN;
        assert!(check_batch_size(limit).is_ok());
        let err = check_batch_size(limit + 1).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        assert!(err.to_string().contains("one log record holds"), "{err}");
    }
}
