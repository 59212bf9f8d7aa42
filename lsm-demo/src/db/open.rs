//! Opening a database (recovery glue), destroying and repairing one.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64};

use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex};

use super::background::Background;
use super::write::LogFile;
use super::{DBWithThreadMode, Shared, State, ThreadMode};
use crate::env::{FileSystem, PosixFs};
use crate::error::{Error, Result};
use crate::info_log::{InfoLog, info};
use crate::memtable::Memtable;
use crate::options::Options;
use crate::recovery::{Inventory, create_database, lock_dir, recognise, recover};
use crate::version::Version;
use ordered_publish::{OrderedQueue, Sequencer};

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// Opens the database in `path` with default options, creating it if missing.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// ```
    pub fn open_default(path: impl AsRef<Path>) -> Result<Self> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        Self::open(&opts, path)
    }

    /// Opens (and recovers) the database in `path`.
    ///
    /// A directory is a database when it holds a valid `MANIFEST`. Its logs
    /// are replayed to a point in time as the recovery mode says
    /// ([`Options::set_wal_recovery_mode`]); only files the manifest retired
    /// are deleted, and damaged ones are set aside in `lost/`. What recovery
    /// did is in [`DbStats::recovery`](crate::DbStats::recovery) ([`DB::stats`](Self::stats)).
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
    pub fn open(opts: &Options, path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with_fs(opts, path, Arc::new(PosixFs))
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
    ) -> Result<Self> {
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
                let manifest = create_database(&*fs, &dir, opts)?;
                info!(info_log, "created a new database in {}", dir.display());
                manifest
            }
        };
        // Recovery's memtables leave their blocks for the first one.
        let block_pool = crate::memtable::memtable_block_pool(opts.write_buffer_size);
        let recovered = recover(
            &*fs,
            &dir,
            opts,
            manifest,
            &inventory,
            &info_log,
            &block_pool,
        )
        .inspect_err(|e| info!(info_log, "open failed: {e}"))?;
        let next_sequence = recovered.next_sequence;
        let version = Version {
            mem: Arc::new(Memtable::new_in(
                opts,
                recovered.log_number,
                Some(&block_pool),
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
            seq: Sequencer::new(next_sequence, super::SEQUENCER_WINDOW),
            log_queue: OrderedQueue::new(next_sequence, super::SEQUENCER_WINDOW),
            durable: CachePadded::new(AtomicU64::new(next_sequence)),
            log_failed_from: AtomicU64::new(u64::MAX),
            log: CachePadded::new(Mutex::new(log)),
            direct_log: AtomicPtr::new(std::ptr::null_mut()),
            current_mem: AtomicPtr::new(Arc::as_ptr(&version.mem).cast_mut()),
            block_pool,
            memtable_full: AtomicBool::new(false),
            switch_claimed: AtomicBool::new(false),
            warm_wanted: AtomicBool::new(false),
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
        {
            let closed = shared.seq.close();
            shared.install_direct_log(&closed, &shared.log.lock());
        }
        let background = shared.start_background()?;
        let db = DBWithThreadMode {
            shared,
            background,
            _mode: std::marker::PhantomData,
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
        Self::destroy_with_fs(opts, path, Arc::new(PosixFs))
    }

    /// [`DB::destroy`](Self::destroy) through a custom file system.
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
    /// go to `lost/`. The command `lsm-demo repair` does the same and
    /// prints what was salvaged.
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
