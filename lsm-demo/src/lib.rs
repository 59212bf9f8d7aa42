//! A persistent LSM key-value engine built from this workspace's write-path
//! primitives, with RocksDB's write path and the `rocksdb` crate's API.
//!
//! # What it is
//!
//! Writers reserve sequence numbers and their log record's bytes with one
//! compare-and-swap ([`ordered_publish`]'s sequencer), write the record
//! there themselves, beside each other (a [`shared_log_file`]: a `pwrite`
//! each, or a copy into a map of the log; with
//! `allow_concurrent_log_write` off, whoever finds the log free appends
//! every record posted so far with one `write`), and insert into the
//! memtable side by side; a write returns once every earlier one is
//! visible, so readers never see half a batch. `sync`
//! writers share one `fdatasync` through a [`write_group`] group.
//! Memtables are the [`inline_skiplist`] crate (default) or the [`vecmem`]
//! crate, both allocating from the [`arena`] crate. Full memtables are
//! frozen and a flush thread writes them to sorted table files (blocks with
//! restart points, an index, a bloom filter, CRC32C per block), recorded in
//! a manifest that is replaced atomically; compaction threads merge them
//! down seven levels, as RocksDB's leveled compaction does.
//!
//! # When to use it
//!
//! As a demonstration and a benchmark of the primitives on a real write
//! path, and as a small embedded store: acknowledged `sync` writes survive
//! power loss, recovery never panics on damaged files. For production data
//! with column families, compression, transactions and years of
//! hardening, use RocksDB (the `rocksdb` crate), or fjall in pure Rust.
//!
//! The default `cli` feature builds the `lsm-demo` command (bench, stress,
//! crashtest, verify, repair); as a library, depend on it with
//! `default-features = false` and none of the command's crates come along.
//!
//! | | lsm-demo | rocksdb crate | fjall | sled |
//! |---|---|---|---|---|
//! | group commit | yes (`sync` writes), futex wake-ups | yes | no (fjall #96) | n/a |
//! | concurrent memtable inserts | skiplist and vector | skiplist | no | n/a |
//! | leveled compaction | 7 levels, dynamic targets | yes | yes | n/a (B-tree) |
//! | pure Rust | yes | no (C++) | yes | yes |
//!
//! # Example
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! use lsm_demo::{DB, IteratorMode, Options, WriteOptions};
//!
//! let mut opts = Options::default();
//! opts.create_if_missing(true);
//! let db = DB::open(&opts, dir.path()).unwrap();
//! let mut sync = WriteOptions::default();
//! sync.set_sync(true);
//! db.put_opt(b"key", b"value", &sync).unwrap();
//! db.delete(b"gone").unwrap();
//! assert_eq!(db.get(b"key").unwrap().as_deref(), Some(&b"value"[..]));
//! let all: Vec<_> = db.iterator(IteratorMode::Start).collect::<Result<_, _>>().unwrap();
//! assert_eq!(all.len(), 1);
//! drop(db);
//! let db = DB::open(&opts, dir.path()).unwrap(); // recovers from the log
//! assert_eq!(db.get(b"key").unwrap().as_deref(), Some(&b"value"[..]));
//! ```
//!
//! # Limits and choices
//!
//! - Keys may be empty; keys are at most [`MAX_KEY_LEN`] bytes and values at
//!   most [`MAX_VALUE_LEN`] bytes ([`Error::InvalidArgument`] beyond).
//! - One directory is opened by one `DB` at a time (a `LOCK` file with an
//!   advisory lock): a second `open` gets [`Error::Locked`].
//! - A directory is a database when it holds a valid `MANIFEST`; recovery
//!   replays the logs to a point in time ([`DBRecoveryMode`]) and deletes
//!   only files the manifest retired ([`RecoveryStats`] says what it did);
//!   [`DB::repair`] rebuilds a database whose manifest is lost.
//! - Writes made with `disable_wal` survive a clean close (they are flushed
//!   on drop) but not a crash, as in RocksDB.
//! - `unordered_write` keeps the log and sequence order but publishes an
//!   unsynced write's numbers before its memtable insert ends: a reader may
//!   see part of a batch still being inserted, and a snapshot may later
//!   gain keys older than it. A writer's own key is visible once its call
//!   returns.
//! - Unlike RocksDB, the leader of a group of `sync` writes waits, asleep,
//!   for the writers that were recently in flight before it syncs (at most
//!   half the measured `fdatasync`, never when it writes alone), so that
//!   concurrent sync writers share one sync;
//!   [`Options::set_group_commit_wait`] turns it off.
//! - A write that panics while it inserts (a comparator that panicked)
//!   stops writes until the database is reopened, as a poisoned lock
//!   would: its batch may be partly visible, and no other write waits for
//!   it.
//! - Unix only: files are locked with `flock`, read with positioned reads
//!   (`std::os::unix::fs::FileExt`) and synced with `fdatasync`. It is
//!   tested on Linux and builds on macOS; it does not build on Windows.

mod batch;
pub(crate) mod compaction;
mod db;
pub mod env;
mod error;
pub(crate) mod filename;
pub(crate) mod info_log;
pub(crate) mod iter;
pub(crate) mod memtable;
mod options;
pub mod perf;
pub mod properties;
pub(crate) mod range_del;
pub(crate) mod version;

// The storage formats and the recovery machinery: public for the
// integration tests, the fuzz targets and the command line, hidden from the
// documentation, and not a stable API.
#[doc(hidden)]
pub mod bloom;
#[doc(hidden)]
pub mod key;
#[doc(hidden)]
pub mod manifest;
#[doc(hidden)]
pub mod recovery;
#[doc(hidden)]
pub mod repair;
#[doc(hidden)]
pub mod table;
#[doc(hidden)]
pub mod wal;

pub use batch::{BadRecord, BatchOp, WriteBatch, WriteBatchIterator};
pub use db::{
    DB, DBAccess, DBIterator, DBIteratorWithThreadMode, DBPinnableSlice, DBRawIterator,
    DBRawIteratorWithThreadMode, DBWALIterator, DBWithThreadMode, DbStats, Direction, IteratorMode,
    KvPair, LevelStats, MultiThreaded, SingleThreaded, Snapshot, SnapshotWithThreadMode,
    ThreadMode, WriteStallStats,
};
pub use error::{Error, ErrorKind, Result};
pub use options::{
    BottommostLevelCompaction, CompactOptions, CompareFn, MAX_KEY_LEN, MAX_VALUE_LEN, MemtableKind,
    Options, ReadOptions, SliceTransform, WaitForCompactOptions, WriteOptions,
};
pub use recovery::RecoveryStats;
pub use wal::DBRecoveryMode;

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
