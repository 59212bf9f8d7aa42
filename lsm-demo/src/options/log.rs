//! The options of the write-ahead log: how writers write it, how it is
//! written back, and what recovery does with its damage.

use super::Options;
use crate::wal::DBRecoveryMode;

impl Options {
    /// What recovery does with damaged log records (see [`DBRecoveryMode`];
    /// default [`DBRecoveryMode::PointInTime`]).
    ///
    /// # Examples
    ///
    /// A torn log tail (a crash in the middle of a log write) is dropped by
    /// default; [`DBRecoveryMode::AbsoluteConsistency`] refuses to open instead:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::wal::DBRecoveryMode;
    /// use lsm_demo::{DB, Error, Options};
    /// use std::io::Write;
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true);
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// drop(db);
    /// # let log = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path())
    /// #     .find(|p| p.extension().is_some_and(|e| e == "log")).unwrap();
    /// std::fs::OpenOptions::new().append(true).open(&log).unwrap().write_all(&[1, 2, 3]).unwrap();
    ///
    /// opts.set_wal_recovery_mode(DBRecoveryMode::AbsoluteConsistency);
    /// assert!(matches!(DB::open(&opts, dir.path()), Err(Error::Corruption(_))));
    /// opts.set_wal_recovery_mode(DBRecoveryMode::PointInTime);
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn set_wal_recovery_mode(&mut self, mode: DBRecoveryMode) -> &mut Self {
        self.wal_recovery_mode = mode;
        self
    }
    /// RocksDB's `allow_mmap_writes`, for the log: each writer copies its
    /// record into a shared memory map of the log file, at bytes it
    /// reserves together with its sequence numbers, instead of writing it
    /// with a `pwrite` (see [`Options::set_allow_concurrent_log_write`] and
    /// [`FileSystem::create_mapped`]; on a file system that cannot map, or
    /// off Linux, one writer at a time appends the records, as with
    /// `set_allow_concurrent_log_write(false)`). The guarantees stay: a
    /// record is in the operating system before its write returns (it
    /// survives a crash of the process), log order is sequence order, and a
    /// `sync` write returns once `fdatasync` made it durable. Tables are
    /// written as before. Default: off, as in RocksDB.
    ///
    /// One difference on failure: a write that fails because the log
    /// failed before it (a failed `fdatasync`) may have been copied into
    /// the log already, so recovery may bring it back, as with any write
    /// whose outcome an I/O error left unknown.
    ///
    /// After a crash the log ends in zeros (the rest of what it was grown
    /// to, and the bytes of writers that had reserved but not copied), and
    /// a writer that was still copying can leave its record torn with later
    /// writers' whole records after it. None of those writes was
    /// acknowledged (a write returns once every earlier one is in).
    /// Recovery, with this option set, takes such an end of the last log
    /// for a torn tail when the whole records after the damage are numbered
    /// after everything before it and start within the sequencer's window
    /// of each other (as writes in flight do) and zeros end the file (the
    /// rest of the growth: a log that was ended is cut to its records), and
    /// for damage otherwise:
    /// [`DBRecoveryMode::PointInTime`] and
    /// [`DBRecoveryMode::TolerateCorruptedTailRecords`] drop those writes;
    /// [`DBRecoveryMode::AbsoluteConsistency`], which refuses any torn
    /// tail, is refused with this option (by [`Options::validate`], so by
    /// `open`); [`DBRecoveryMode::SkipAnyCorruptedRecord`] replays the whole
    /// records after the torn one as well, so it may keep a write that was
    /// in flight without an earlier one. Reopened without this option, a
    /// database counts such an end as damage (its log set aside in `lost/`,
    /// or refused by `TolerateCorruptedTailRecords`). A disk error
    /// met through the map (reading back the log's last page) kills the
    /// process with `SIGBUS`, where a `pwrite` would return an error.
    ///
    /// [`FileSystem::create_mapped`]: crate::env::FileSystem::create_mapped
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::wal::DBRecoveryMode;
    /// use lsm_demo::{DB, Options};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true).set_allow_mmap_writes(true);
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// drop(db);
    /// let db = DB::open(&opts, dir.path()).unwrap(); // replays the log
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    ///
    /// opts.set_wal_recovery_mode(DBRecoveryMode::AbsoluteConsistency);
    /// assert!(opts.validate().is_err());
    /// ```
    pub fn set_allow_mmap_writes(&mut self, v: bool) -> &mut Self {
        self.allow_mmap_writes = v;
        self
    }
    /// Whether logged writers write their own records into the log, each
    /// with a `pwrite` at bytes it reserves together with its sequence
    /// numbers, beside the others (see [`FileSystem::create_positional`]),
    /// rather than hand them to one thread at a time, which appends every
    /// record handed to it so far with one `write` while the others wait.
    /// Default: on. It applies where the file system supports it (Linux),
    /// without [`Options::set_allow_mmap_writes`] (which
    /// copies through a map instead), and unless the recovery mode is
    /// [`DBRecoveryMode::AbsoluteConsistency`], which refuses the end such
    /// a log can have after a crash.
    ///
    /// The guarantees are those of the other logs: a record is in the
    /// operating system before its write returns, log order is sequence
    /// order, and a `sync` write returns once `fdatasync` made it durable.
    /// A crash can leave such a log with a record torn (or still zeros) by
    /// a write in flight and later writers' whole records after it, none of
    /// them acknowledged, ending right after them or in one cut short. The
    /// log's header says it was written this way (format version 3, see
    /// [`crate::wal`]), so recovery, `verify` and `repair` take that end
    /// for a torn tail as they take a mapped log's (see
    /// [`Options::set_allow_mmap_writes`]), whatever this option says when
    /// the database is reopened, and damage anywhere else for damage. A
    /// failed `pwrite` fails the log from its record on: that write, and
    /// every later one that has not returned, fails.
    ///
    /// With it off, the log takes one `write` per batch of records, and
    /// the writers queue for it: at 2 threads and more they wait for each
    /// other's system calls, and write slower than with it on.
    ///
    /// [`FileSystem::create_positional`]: crate::env::FileSystem::create_positional
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true).set_allow_concurrent_log_write(false);
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap(); // appended by a drain pass
    /// drop(db);
    /// opts.set_allow_concurrent_log_write(true);
    /// let db = DB::open(&opts, dir.path()).unwrap(); // replays the log
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn set_allow_concurrent_log_write(&mut self, v: bool) -> &mut Self {
        self.allow_concurrent_log_write = v;
        self
    }
    /// RocksDB's `wal_bytes_per_sync`: every `bytes` written to the log,
    /// asks the kernel to start writing the log out (`sync_file_range`,
    /// without waiting), a step of `bytes` behind the writes. It makes
    /// nothing durable; it keeps the log's dirty pages few, so that the
    /// `fdatasync` that a memtable switch, a close or a `sync` write pays
    /// (writers wait for the switch's) has little left to write. 0 turns it
    /// off. Default: 1 MiB (RocksDB's default is 0: its switch does not
    /// sync the log).
    ///
    /// The writer whose record crosses a step makes the call, and the log
    /// reaches the disk while the writes go on rather than at the switch:
    /// a load whose log would otherwise stay in the page cache until after
    /// it ends (a memtable far larger than what a short run writes) runs
    /// slower with it; one that switches memtables runs faster, and no
    /// switch waits for more than a step of log.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true).set_wal_bytes_per_sync(4 << 20);
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap();
    /// ```
    pub fn set_wal_bytes_per_sync(&mut self, bytes: u64) -> &mut Self {
        self.wal_bytes_per_sync = bytes;
        self
    }
    /// Into how many stripe files each log's writers write their records
    /// (default 8; 0 writes every record into the log file itself). With
    /// `n` stripes, under [`Options::set_allow_concurrent_log_write`] (and
    /// not [`Options::set_allow_mmap_writes`]), once two writers meet at
    /// the log file (one finds another writing it), each writer writes its
    /// record with a `pwrite` into a stripe that no other writer is writing
    /// (its own while writers are no more than stripes), beside the log
    /// file (`000007.log.1` to `000007.log.n`), as an entry that says where
    /// in the log its record belongs (see
    /// [`SharedFile::striped`](crate::env::SharedFile::striped)); a lone
    /// writer writes the log file itself. Linux takes a file's lock for
    /// every buffered write, so writers that share one log file queue in
    /// the kernel; a stripe each, they do not.
    ///
    /// Log order is still sequence order, and a log reads back (in
    /// recovery, `verify`, `repair` and [`DB::get_updates_since`]) as the
    /// log file with its stripes' records in place: the guarantees and the
    /// recovery are those of [`Options::set_allow_concurrent_log_write`].
    /// The cost falls on syncs: a `sync` write, a memtable switch and a
    /// close sync every stripe written since the last sync (a stripe that
    /// took no record since is skipped). Writers that outnumber the
    /// stripes share them, one at a time each: a stripe per writer thread
    /// that writes at once is enough, and more cost only empty files. The
    /// stripes of a log are deleted with it; a database written with
    /// stripes opens with any setting. At most 64.
    ///
    /// [`DB::get_updates_since`]: crate::DB::get_updates_since
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, Options};
    ///
    /// let mut opts = Options::default();
    /// opts.create_if_missing(true).set_wal_stripes(2);
    /// let db = DB::open(&opts, dir.path()).unwrap();
    /// db.put(b"k", b"v").unwrap(); // into a stripe of the log
    /// drop(db);
    /// # #[cfg(target_os = "linux")]
    /// assert!(std::fs::read_dir(dir.path()).unwrap()
    ///     .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".log.2")));
    /// opts.set_wal_stripes(0);
    /// let db = DB::open(&opts, dir.path()).unwrap(); // replays log and stripes
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    ///
    /// opts.set_wal_stripes(65);
    /// assert!(opts.validate().is_err());
    /// ```
    pub fn set_wal_stripes(&mut self, stripes: usize) -> &mut Self {
        self.wal_stripes = stripes;
        self
    }
    /// Whether logged writers write their own records, each at bytes it
    /// reserves with its sequence numbers (through a map, or with a
    /// `pwrite` each), where the file system allows it: else they hand
    /// them to one appender at a time.
    pub(crate) fn logs_take_shared_writes(&self) -> bool {
        self.allow_mmap_writes
            || (self.allow_concurrent_log_write
                && self.wal_recovery_mode != DBRecoveryMode::AbsoluteConsistency)
    }
    /// The stripes of a new log (see [`Options::set_wal_stripes`]): none
    /// unless writers write their own records with a `pwrite` each.
    pub(crate) fn log_stripes(&self) -> usize {
        if self.allow_mmap_writes || !self.logs_take_shared_writes() {
            return 0;
        }
        self.wal_stripes
    }
}

/// The most stripes a log may have.
pub(crate) const MAX_WAL_STRIPES: usize = 64;
/// The stripes of a log by default: enough for the writers of a 16-core
/// machine, whose `pwrite` is a third of a write or less (on 2 cores, 8
/// threads wrote faster with 8 stripes than with 2 or 4).
pub(crate) const DEFAULT_WAL_STRIPES: usize = 8;
