//! Opening a database directory: recognising it as ours, checking its
//! manifest, replaying its logs to a point in time, and setting aside what
//! recovery drops.
//!
//! # The files in a database directory
//!
//! | name | what |
//! |---|---|
//! | `MANIFEST` | the live table files and the counters; its presence makes the directory a database |
//! | `MANIFEST.tmp` | a manifest being written, renamed over `MANIFEST` once durable |
//! | `NNNNNN.log` | write-ahead logs, replayed on open from the manifest's log number on |
//! | `NNNNNN.sst` | sorted table files |
//! | `LOCK` | advisory lock held while a `DB` is open |
//! | `LOG`, `LOG.old` | the info log of this open and of the one before |
//! | `lost/` | damaged logs and tables that recovery or repair set aside |
//!
//! # What is a database
//!
//! A directory is a database of this engine when it holds a valid
//! `MANIFEST`. A directory without one is created as a new database only
//! when `create_if_missing` is set and it holds no file that looks like a
//! database's (our logs and tables, RocksDB's or LevelDB's `CURRENT`,
//! `IDENTITY`, `MANIFEST-*`, `*.ldb`, any `*.log` or `*.sst`): such a
//! directory is refused, naming the files, and left as it was.
//!
//! # What is deleted
//!
//! Only files a manifest lists as obsolete: the logs and tables this
//! database retired. Anything else, a file with a name the engine never
//! writes (`1.log`), a table of ours no manifest knows (left by a crash in
//! the middle of a flush), is left alone and named in the info log.
//!
//! # Logs
//!
//! Logs numbered from the manifest's log number on are read one record at a
//! time and replayed into memtables, which are written out as level-0 tables
//! whenever they reach the write buffer size, so memory stays bounded by the
//! memtable and the largest record. Damage is handled as the
//! [`DBRecoveryMode`] says. A log from which anything beyond a torn tail was
//! dropped, and every later log dropped whole under
//! [`DBRecoveryMode::PointInTime`], is moved to `lost/` once the new
//! manifest no longer needs it, so the evidence survives.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::batch::{BatchOp, WriteBatch, decode_group, decode_log_trailer};
use crate::env::{FileLock, FileSystem};
use crate::error::{Error, Result};
use crate::filename::{
    FileKind, LOCK_FILE, LOST_DIR, log_path, looks_like_database_file, parse_file_name, table_path,
};
use crate::info_log::{InfoLog, info};
use crate::key::MAX_SEQUENCE;
use crate::manifest::{
    MANIFEST_FILE, Manifest, ManifestError, NUM_LEVELS, read_manifest, write_manifest,
};
use crate::memtable::Memtable;
use crate::options::{MAX_KEY_LEN, MAX_VALUE_LEN, Options};
use crate::version::{TableFile, build_table, open_table};
use crate::wal::{DBRecoveryMode, FILE_HEADER_LEN, LogReader, LogWriter, WalError};

/// What the last open's recovery found and did.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// drop(db);
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// let recovery = db.stats().recovery;
/// assert_eq!((recovery.logs_replayed, recovery.records_replayed), (1, 1));
/// assert_eq!(recovery.bytes_dropped, 0);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecoveryStats {
    /// Logs read and replayed (in whole or up to their damage).
    pub logs_replayed: u64,
    /// Log records (one per write group) replayed.
    pub records_replayed: u64,
    /// Stretches of damage dropped inside logs, torn tails included.
    pub damaged_ranges: u64,
    /// Logs not replayed at all because an earlier log was damaged
    /// ([`DBRecoveryMode::PointInTime`]).
    pub logs_dropped: u64,
    /// Bytes of log dropped, in damaged stretches and whole logs.
    pub bytes_dropped: u64,
    /// Files moved to `lost/`.
    pub files_set_aside: Vec<PathBuf>,
    /// Files with the names of ours that no manifest knows, left alone.
    pub unknown_files: Vec<PathBuf>,
}

/// The state an open database starts from.
pub(crate) struct Recovered {
    pub(crate) manifest: Manifest,
    pub(crate) levels: [Vec<Arc<TableFile>>; NUM_LEVELS],
    pub(crate) log: LogWriter,
    pub(crate) log_number: u64,
    pub(crate) next_sequence: u64,
    pub(crate) stats: RecoveryStats,
}

/// The numbered files of ours in a directory, and the names that look like
/// some database's.
#[derive(Debug, Default)]
pub(crate) struct Inventory {
    pub(crate) logs: BTreeSet<u64>,
    pub(crate) tables: BTreeSet<u64>,
    pub(crate) database_like: Vec<String>,
    /// The largest number of a log or table of ours.
    pub(crate) max_number: u64,
}

impl Inventory {
    pub(crate) fn of(fs: &dyn FileSystem, dir: &Path) -> Result<Inventory> {
        let names = fs
            .list_dir(dir)
            .map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
        let mut inv = Inventory::default();
        for name in names {
            match parse_file_name(&name) {
                Some(FileKind::Log(n)) => {
                    inv.logs.insert(n);
                    inv.max_number = inv.max_number.max(n);
                }
                Some(FileKind::Table(n)) => {
                    inv.tables.insert(n);
                    inv.max_number = inv.max_number.max(n);
                }
                _ => {}
            }
            if looks_like_database_file(&name) {
                inv.database_like.push(name);
            }
        }
        inv.database_like.sort();
        Ok(inv)
    }
}

/// Reads and checks the manifest of `dir`: `Some` for a database of ours,
/// `None` for a directory where a new one may be created. Writes nothing.
/// Honours `create_if_missing` and `error_if_exists`.
pub(crate) fn recognise(
    fs: &dyn FileSystem,
    dir: &Path,
    opts: &Options,
    inventory: &Inventory,
) -> Result<Option<Manifest>> {
    match read_manifest(fs, dir) {
        Ok(Some(manifest)) => {
            if opts.error_if_exists {
                return Err(Error::InvalidArgument(format!(
                    "database {} already exists (error_if_exists is set)",
                    dir.display()
                )));
            }
            manifest
                .check_consistency()
                .map_err(|e| manifest_error(dir, e))?;
            Ok(Some(manifest))
        }
        Err(e) => Err(manifest_error(dir, e)),
        Ok(None) => {
            if !inventory.database_like.is_empty() {
                return Err(not_a_database(dir, &inventory.database_like));
            }
            if !opts.create_if_missing {
                return Err(Error::NotFound(dir.to_path_buf()));
            }
            Ok(None)
        }
    }
}

/// Takes the directory's lock file, or reports that another `DB` holds it.
pub(crate) fn lock_dir(fs: &dyn FileSystem, dir: &Path) -> Result<Box<dyn FileLock>> {
    fs.lock(&dir.join(LOCK_FILE)).map_err(|e| {
        if e.kind() == std::io::ErrorKind::WouldBlock
            || e.kind() == std::io::ErrorKind::ResourceBusy
            || e.raw_os_error() == Some(libc::EWOULDBLOCK)
        {
            Error::Locked(dir.to_path_buf())
        } else {
            Error::io(format!("locking {}", dir.display()), e)
        }
    })
}

/// Deletes the database in `dir`: every file in it, and in its `lost/`
/// folder, that has a name the engine writes, then the folders once empty.
/// Refuses a directory that is not a database of ours; a missing one is
/// already destroyed.
pub(crate) fn destroy(fs: &dyn FileSystem, dir: &Path) -> Result<()> {
    if !fs.exists(dir) {
        return Ok(());
    }
    if !fs.is_dir(dir) {
        return Err(Error::NotADirectory(dir.to_path_buf()));
    }
    let inventory = Inventory::of(fs, dir)?;
    match read_manifest(fs, dir) {
        Ok(Some(_)) => {}
        Ok(None) if inventory.database_like.is_empty() => {}
        Ok(None) => return Err(not_a_database(dir, &inventory.database_like)),
        Err(ManifestError::Io { source, .. }) => {
            return Err(Error::io(
                format!("reading {}", dir.join(MANIFEST_FILE).display()),
                source,
            ));
        }
        Err(e @ (ManifestError::BadMagic { .. } | ManifestError::TooShort { .. })) => {
            return Err(Error::InvalidArgument(format!(
                "{} is not a database of this engine ({e}); it is left as it is",
                dir.display()
            )));
        }
        // A damaged manifest of ours: the database is still ours to delete.
        Err(_) => {}
    }
    let lock = lock_dir(fs, dir)?;
    let remove = |path: PathBuf| match fs.remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(format!("deleting {}", path.display()), e)),
    };
    let ours = |fs: &dyn FileSystem, folder: &Path| -> Result<Vec<PathBuf>> {
        let names = fs
            .list_dir(folder)
            .map_err(|e| Error::io(format!("listing {}", folder.display()), e))?;
        Ok(names
            .into_iter()
            .filter(|n| parse_file_name(n).is_some_and(|k| k != FileKind::Lock))
            .map(|n| folder.join(n))
            .collect())
    };
    let lost = dir.join(LOST_DIR);
    if fs.is_dir(&lost) {
        for path in ours(fs, &lost)? {
            remove(path)?;
        }
        let _ = fs.remove_dir(&lost);
    }
    // The manifest goes last but the lock: a crash halfway leaves a
    // database that still opens, or refuses to (files without a manifest),
    // never one that silently lost files.
    let mut files = ours(fs, dir)?;
    files.sort_by_key(|p| p.file_name().is_some_and(|n| n == MANIFEST_FILE));
    for path in files {
        remove(path)?;
    }
    drop(lock);
    remove(dir.join(LOCK_FILE))?;
    fs.sync_dir(dir)
        .map_err(|e| Error::io(format!("syncing {}", dir.display()), e))?;
    // Files that are not ours keep the directory.
    let _ = fs.remove_dir(dir);
    Ok(())
}

/// Writes the manifest of a new, empty database in `dir`.
pub(crate) fn create_database(fs: &dyn FileSystem, dir: &Path) -> Result<Manifest> {
    let manifest = Manifest {
        next_file_number: 1,
        ..Manifest::default()
    };
    write_manifest(fs, dir, &manifest)
        .map_err(|e| Error::io(format!("writing {}", dir.join(MANIFEST_FILE).display()), e))?;
    Ok(manifest)
}

pub(crate) fn manifest_error(dir: &Path, e: ManifestError) -> Error {
    match e {
        ManifestError::Io { source, .. } => Error::io(
            format!("reading {}", dir.join(MANIFEST_FILE).display()),
            source,
        ),
        other => Error::Corruption(format!(
            "{other}; DB::repair rebuilds a manifest from the tables and logs that read cleanly"
        )),
    }
}

/// The error for a directory with database files and no manifest: another
/// store's database (RocksDB's or LevelDB's marker files), or ours with its
/// manifest lost.
pub(crate) fn not_a_database(dir: &Path, files: &[String]) -> Error {
    const SHOWN: usize = 8;
    let mut list = files[..files.len().min(SHOWN)].join(", ");
    if files.len() > SHOWN {
        list.push_str(&format!(" and {} more", files.len() - SHOWN));
    }
    let foreign = files.iter().any(|f| {
        matches!(f.as_str(), "CURRENT" | "IDENTITY")
            || f.starts_with("MANIFEST-")
            || f.starts_with("OPTIONS-")
            || f.ends_with(".ldb")
    });
    if foreign {
        Error::InvalidArgument(format!(
            "{} holds another store's database ({list}) and no MANIFEST of this engine; \
             it is left as it is",
            dir.display()
        ))
    } else {
        Error::Corruption(format!(
            "{} holds database files ({list}) but no MANIFEST; DB::repair rebuilds one \
             from the tables and logs that read cleanly",
            dir.display()
        ))
    }
}

/// Opens the live tables, replays the logs, starts a new log and writes the
/// manifest that retires the replayed ones.
pub(crate) fn recover(
    fs: &dyn FileSystem,
    dir: &Path,
    opts: &Options,
    mut manifest: Manifest,
    inventory: &Inventory,
    log: &InfoLog,
) -> Result<Recovered> {
    let mut stats = RecoveryStats::default();
    note_unknown_files(dir, &manifest, inventory, Some(log), &mut stats);
    // No number of ours is given twice, even to a file no manifest knows.
    manifest.next_file_number = manifest.next_file_number.max(inventory.max_number + 1);

    let mut levels: [Vec<Arc<TableFile>>; NUM_LEVELS] = Default::default();
    for meta in &manifest.files {
        let table = open_table(fs, dir, meta)?;
        levels[meta.level as usize].push(Arc::new(table));
    }
    levels[0].sort_by_key(|t| std::cmp::Reverse(t.meta.number));
    levels[1].sort_by(|a, b| crate::key::compare_internal_keys(&a.meta.smallest, &b.meta.smallest));

    let logs: Vec<u64> = inventory
        .logs
        .range(manifest.log_number..)
        .copied()
        .collect();
    let replay = Replay::run(fs, dir, opts, &mut manifest, &logs, log, &mut stats)?;
    for table in replay.tables {
        manifest.files.push(table.meta.clone());
        levels[0].insert(0, Arc::new(table));
    }

    // A fresh log for new writes; the manifest then names it as the first
    // log to replay, which retires the replayed ones.
    let log_number = manifest.next_file_number;
    manifest.next_file_number += 1;
    let path = log_path(dir, log_number);
    let file = fs
        .create(&path)
        .map_err(|e| Error::io(format!("creating {}", path.display()), e))?;
    fs.sync_dir(dir)
        .map_err(|e| Error::io(format!("syncing {}", dir.display()), e))?;
    let previous = logs.last().copied().unwrap_or(0);
    let writer = LogWriter::with_previous(file, previous)
        .map_err(|e| Error::io(format!("starting {}", path.display()), e))?;
    manifest.log_number = log_number;
    manifest.last_sequence = replay.next_sequence - 1;
    manifest.obsolete_logs.extend(&replay.retired);
    write_manifest(fs, dir, &manifest)
        .map_err(|e| Error::io(format!("writing {}", dir.join(MANIFEST_FILE).display()), e))?;

    for n in replay.set_aside {
        set_aside(fs, dir, &log_path(dir, n), log, &mut stats);
    }
    delete_obsolete_files(fs, dir, &mut manifest, log);
    info!(
        log,
        "opened: {} tables, last sequence {}, log {log_number}; replayed {} logs ({} records), \
         dropped {} bytes",
        manifest.files.len(),
        manifest.last_sequence,
        stats.logs_replayed,
        stats.records_replayed,
        stats.bytes_dropped
    );
    Ok(Recovered {
        manifest,
        levels,
        log: writer,
        log_number,
        next_sequence: replay.next_sequence,
        stats,
    })
}

/// Names, in the info log and the counters, the files of ours that no
/// manifest knows: they are left alone.
pub(crate) fn note_unknown_files(
    dir: &Path,
    manifest: &Manifest,
    inventory: &Inventory,
    log: Option<&InfoLog>,
    stats: &mut RecoveryStats,
) {
    let live: BTreeSet<u64> = manifest.files.iter().map(|f| f.number).collect();
    let unknown_tables = inventory
        .tables
        .iter()
        .filter(|n| !live.contains(n) && !manifest.obsolete_tables.contains(n))
        .map(|&n| table_path(dir, n));
    let unknown_logs = inventory
        .logs
        .range(..manifest.log_number)
        .filter(|n| !manifest.obsolete_logs.contains(n))
        .map(|&n| log_path(dir, n));
    for path in unknown_tables.chain(unknown_logs) {
        if let Some(log) = log {
            info!(
                log,
                "{} is not known to the manifest (a crash during a flush or compaction may leave one); left alone",
                path.display()
            );
        }
        stats.unknown_files.push(path);
    }
}

/// What replaying one log found.
#[derive(Default)]
struct LogOutcome {
    /// More than a torn tail was dropped: the log is evidence.
    lost_more_than_a_tail: bool,
    /// Damage ended the log's replay before its end.
    stopped: bool,
    /// The next log, as named by the log's trailer.
    trailer: Option<u64>,
}

/// Why log `path`, whose header names `previous` as the log before it,
/// cannot follow the logs replayed so far (`replayed`, the last of them) in
/// a database whose first log to replay is `first_log`: a log between them
/// is missing. `None` when the chain holds or the log does not record it.
fn chain_break(
    path: &Path,
    previous: Option<u64>,
    replayed: Option<u64>,
    first_log: u64,
) -> Option<String> {
    let previous = previous.filter(|&p| p != 0)?;
    let holds = match replayed {
        Some(last) => previous == last,
        // The first log follows one the manifest retired.
        None => previous < first_log,
    };
    (!holds).then(|| {
        format!(
            "{} follows log {previous}, which is missing from the logs to replay",
            path.display()
        )
    })
}

/// Why a log that is not damaged in itself still ends the point in time:
/// one followed by another log (`next`) must end with a trailer naming it,
/// and a trailer in the last log names a log that is missing. Logs of
/// format version 1 have no trailers. `None` when all is well, or when
/// damage already ended the log's replay.
fn unfinished(
    path: &Path,
    version: Option<u8>,
    outcome: &LogOutcome,
    next: Option<u64>,
) -> Option<String> {
    if outcome.stopped || version == Some(1) {
        return None;
    }
    let path = path.display();
    match (next, outcome.trailer) {
        (Some(_), None) => Some(format!(
            "{path} ends without the trailer that names the next log: it was cut short"
        )),
        (Some(next), Some(named)) if named != next => Some(format!(
            "{path} names log {named} as the next one, but log {next} follows it"
        )),
        (None, Some(named)) => Some(format!(
            "{path} names log {named} as the next one, which is missing"
        )),
        _ => None,
    }
}

/// Replaying the logs: where their records go, and what came of it.
struct Replay<'a> {
    fs: &'a dyn FileSystem,
    dir: &'a Path,
    opts: &'a Options,
    log: &'a InfoLog,
    /// The memtable being replayed into.
    mem: Memtable,
    /// The last sequence replayed.
    last_sequence: Option<u64>,
    /// Level-0 tables written from the replayed records, oldest first.
    tables: Vec<TableFile>,
    next_sequence: u64,
    /// Logs fully replayed, or dropped only a torn tail: retired by the
    /// next manifest.
    retired: Vec<u64>,
    /// Logs that lost more than a torn tail: moved to `lost/`.
    set_aside: Vec<u64>,
}

impl<'a> Replay<'a> {
    fn run(
        fs: &'a dyn FileSystem,
        dir: &'a Path,
        opts: &'a Options,
        manifest: &mut Manifest,
        logs: &[u64],
        log: &'a InfoLog,
        stats: &mut RecoveryStats,
    ) -> Result<Replay<'a>> {
        let mode = opts.wal_recovery_mode;
        let mut replay = Replay {
            fs,
            dir,
            opts,
            log,
            mem: Memtable::new(opts.memtable_kind, 0, opts.write_buffer_size),
            last_sequence: None,
            tables: Vec::new(),
            next_sequence: manifest.last_sequence + 1,
            retired: Vec::new(),
            set_aside: Vec::new(),
        };
        // Under PointInTime, why the replay stopped, and the damaged log.
        let mut stopped: Option<String> = None;
        let mut damaged_log = None;
        let mut previous_replayed: Option<u64> = None;
        for (i, &n) in logs.iter().enumerate() {
            let path = log_path(dir, n);
            if stopped.is_none() {
                let reader = LogReader::open(fs, &path, mode).map_err(|e| wal_error(&path, e))?;
                let first_log = manifest.log_number;
                if let Some(why) =
                    chain_break(&path, reader.previous_log(), previous_replayed, first_log)
                {
                    match mode {
                        DBRecoveryMode::AbsoluteConsistency
                        | DBRecoveryMode::TolerateCorruptedTailRecords => {
                            return Err(Error::Corruption(why));
                        }
                        DBRecoveryMode::SkipAnyCorruptedRecord => {
                            info!(log, "{why}; replayed anyway (salvage)");
                        }
                        DBRecoveryMode::PointInTime => {
                            info!(log, "{why}; the replay stops before it");
                            stopped = Some(why);
                        }
                    }
                }
                if stopped.is_none() {
                    let version = reader.version();
                    let mut outcome = replay.replay_log(manifest, &path, reader, stats)?;
                    previous_replayed = Some(n);
                    stats.logs_replayed += 1;
                    let next = logs.get(i + 1).copied();
                    if let Some(next) = next
                        && outcome.stopped
                        && mode == DBRecoveryMode::TolerateCorruptedTailRecords
                    {
                        // Only the last log can have a torn tail: a switch
                        // to a new log syncs the old one first.
                        return Err(Error::Corruption(format!(
                            "{}: damaged before its end, and log {next} follows it",
                            path.display()
                        )));
                    }
                    if let Some(why) = unfinished(&path, version, &outcome, next) {
                        match mode {
                            DBRecoveryMode::AbsoluteConsistency
                            | DBRecoveryMode::TolerateCorruptedTailRecords => {
                                return Err(Error::Corruption(why));
                            }
                            DBRecoveryMode::SkipAnyCorruptedRecord => {
                                info!(log, "{why}; going on (salvage)");
                            }
                            DBRecoveryMode::PointInTime => {
                                info!(log, "{why}");
                                if next.is_none() {
                                    // The lost log came last: what was
                                    // replayed is a point in time already.
                                    stats.logs_dropped += 1;
                                } else {
                                    outcome.lost_more_than_a_tail = true;
                                    outcome.stopped = true;
                                }
                            }
                        }
                    }
                    if outcome.lost_more_than_a_tail {
                        replay.set_aside.push(n);
                    } else {
                        replay.retired.push(n);
                    }
                    if mode == DBRecoveryMode::PointInTime && outcome.stopped {
                        stopped = Some(format!("log {n} before it is damaged"));
                        damaged_log = Some(n);
                    }
                    continue;
                }
            }
            // After the point in time: dropped whole, kept as evidence
            // unless it holds nothing.
            let size = fs
                .file_size(&path)
                .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
            if size > FILE_HEADER_LEN as u64 {
                let why = stopped.as_deref().unwrap_or_default();
                info!(
                    log,
                    "{}: not replayed, {size} bytes dropped: {why} (point-in-time recovery)",
                    path.display()
                );
                stats.logs_dropped += 1;
                stats.bytes_dropped += size;
                replay.set_aside.push(n);
            } else {
                replay.retired.push(n);
            }
        }
        if !replay.mem.is_empty() {
            replay.flush(manifest)?;
        }
        // The damage that cost whole later logs is evidence too, even when
        // it looks like a torn tail.
        if let Some(stop) = damaged_log
            && stats.logs_dropped > 0
            && let Some(i) = replay.retired.iter().position(|&n| n == stop)
        {
            replay.retired.remove(i);
            replay.set_aside.insert(0, stop);
        }
        Ok(replay)
    }

    /// Replays one log's records into the memtable, as the mode says.
    fn replay_log(
        &mut self,
        manifest: &mut Manifest,
        path: &Path,
        mut reader: LogReader,
        stats: &mut RecoveryStats,
    ) -> Result<LogOutcome> {
        let log = self.log;
        let mut outcome = LogOutcome::default();
        while let Some(record) = reader.next_record().map_err(|e| wal_error(path, e))? {
            if let Some(next) = decode_log_trailer(record) {
                outcome.trailer = Some(next);
                continue;
            }
            let checked = match outcome.trailer {
                Some(next) => Err(format!("a record after the trailer naming log {next}")),
                None => check_group(record, self.last_sequence),
            };
            let offset = reader.last_record_offset();
            match checked {
                Ok(Some((first, batch))) => {
                    self.mem.rep.insert_batch(first, &batch, false);
                    let last = first + batch.len() as u64 - 1;
                    self.last_sequence = Some(last);
                    self.next_sequence = self.next_sequence.max(last + 1);
                    stats.records_replayed += 1;
                    if self.mem.rep.memory_usage() >= self.opts.write_buffer_size {
                        self.flush(manifest)?;
                    }
                }
                Ok(None) => {}
                Err(why) => {
                    let what = format!("{}: record at offset {offset}: {why}", path.display());
                    match self.opts.wal_recovery_mode {
                        DBRecoveryMode::AbsoluteConsistency
                        | DBRecoveryMode::TolerateCorruptedTailRecords => {
                            return Err(Error::Corruption(what));
                        }
                        DBRecoveryMode::PointInTime => {
                            let size = self.fs.file_size(path).unwrap_or(offset);
                            let dropped = size.saturating_sub(offset);
                            info!(log, "{what}; dropped it and the {dropped} bytes from it on");
                            stats.damaged_ranges += 1;
                            stats.bytes_dropped += dropped;
                            outcome.lost_more_than_a_tail = true;
                            outcome.stopped = true;
                            return Ok(outcome);
                        }
                        DBRecoveryMode::SkipAnyCorruptedRecord => {
                            info!(log, "{what}; skipped");
                            stats.damaged_ranges += 1;
                            outcome.lost_more_than_a_tail = true;
                        }
                    }
                }
            }
        }
        for damage in reader.dropped() {
            info!(log, "dropped {damage}");
            stats.damaged_ranges += 1;
            stats.bytes_dropped += damage.dropped_bytes;
            outcome.lost_more_than_a_tail |= !damage.is_torn_tail();
        }
        outcome.stopped |= reader.tail_report().is_some();
        Ok(outcome)
    }

    /// Writes the replayed memtable out as a level-0 table and starts an
    /// empty one.
    fn flush(&mut self, manifest: &mut Manifest) -> Result<()> {
        let opts = self.opts;
        self.mem.rep.mark_read_only();
        let number = manifest.next_file_number;
        manifest.next_file_number += 1;
        let source = self.mem.rep.clone().iter();
        if let Some(table) = build_table(self.fs, self.dir, opts, number, source, None)? {
            info!(
                self.log,
                "recovery wrote table {number} ({} entries, {} bytes)",
                table.meta.entries,
                table.meta.file_size
            );
            self.tables.push(table);
        }
        self.mem = Memtable::new(opts.memtable_kind, 0, opts.write_buffer_size);
        Ok(())
    }
}

/// Decodes a log record and checks it can be applied after
/// `last_sequence`: `None` for an empty group, an error for a record whose
/// checksums hold but whose contents cannot be right.
pub(crate) fn check_group(
    record: &[u8],
    last_sequence: Option<u64>,
) -> Result<Option<(u64, WriteBatch)>, String> {
    let (first, ops) = decode_group(record).map_err(|e| e.0.to_owned())?;
    if ops.is_empty() {
        return Ok(None);
    }
    let count = ops.len() as u64;
    let in_range = first > 0
        && first
            .checked_add(count - 1)
            .is_some_and(|last| last <= MAX_SEQUENCE);
    if !in_range {
        return Err(format!("sequence numbers {first}+{count} out of range"));
    }
    if let Some(previous) = last_sequence
        && first <= previous
    {
        return Err(format!(
            "sequence {first} does not follow {previous}, the last one replayed"
        ));
    }
    let mut batch = WriteBatch::new();
    for op in ops {
        match op {
            BatchOp::Put(k, v) => {
                if k.len() > MAX_KEY_LEN || v.len() > MAX_VALUE_LEN {
                    return Err(format!("a key or value of {} + {} bytes", k.len(), v.len()));
                }
                batch.put(k, v);
            }
            BatchOp::Delete(k) => {
                if k.len() > MAX_KEY_LEN {
                    return Err(format!("a key of {} bytes", k.len()));
                }
                batch.delete(k);
            }
        }
    }
    Ok(Some((first, batch)))
}

pub(crate) fn wal_error(path: &Path, e: WalError) -> Error {
    match e {
        WalError::Io { source, .. } => Error::io(format!("reading {}", path.display()), source),
        WalError::Corruption(report) => Error::Corruption(report.to_string()),
        other => Error::Corruption(other.to_string()),
    }
}

/// Moves `path` into the directory's `lost/` folder, durably; a failure is
/// logged and leaves the file where it was (no manifest refers to it).
pub(crate) fn set_aside(
    fs: &dyn FileSystem,
    dir: &Path,
    path: &Path,
    log: &InfoLog,
    stats: &mut RecoveryStats,
) {
    let lost = dir.join(LOST_DIR);
    let Some(name) = path.file_name() else { return };
    let target = lost.join(name);
    let moved = fs
        .create_dir_all(&lost)
        .and_then(|()| fs.sync_dir(dir))
        .and_then(|()| fs.rename(path, &target))
        .and_then(|()| fs.sync_dir(&lost))
        .and_then(|()| fs.sync_dir(dir));
    match moved {
        Ok(()) => {
            info!(log, "moved {} to {}", path.display(), target.display());
            stats.files_set_aside.push(target);
        }
        Err(e) => info!(
            log,
            "could not move {} to {}: {e}",
            path.display(),
            lost.display()
        ),
    }
}

/// Deletes the files the manifest lists as obsolete and forgets those that
/// are gone; a file that cannot be deleted stays listed for the next try.
pub(crate) fn delete_obsolete_files(
    fs: &dyn FileSystem,
    dir: &Path,
    manifest: &mut Manifest,
    log: &InfoLog,
) {
    let gone = |path: PathBuf| match fs.remove_file(&path) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => {
            info!(log, "could not delete obsolete {}: {e}", path.display());
            false
        }
    };
    manifest.obsolete_logs.retain(|&n| !gone(log_path(dir, n)));
    manifest
        .obsolete_tables
        .retain(|&n| !gone(table_path(dir, n)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::group_header;

    fn record(first: u64, ops: &[(&[u8], Option<&[u8]>)]) -> Vec<u8> {
        let mut batch = WriteBatch::new();
        for (k, v) in ops {
            match v {
                Some(v) => batch.put(k, v),
                None => batch.delete(k),
            }
        }
        let mut out = group_header(first, ops.len() as u32).to_vec();
        out.extend_from_slice(batch.records());
        out
    }

    #[test]
    fn groups_must_follow_the_last_sequence_and_stay_in_range() {
        let two: &[(&[u8], Option<&[u8]>)] = &[(b"a", Some(b"1")), (b"b", None)];
        let (first, batch) = check_group(&record(5, two), Some(4)).unwrap().unwrap();
        assert_eq!((first, batch.len()), (5, 2));
        assert!(check_group(&record(5, two), None).unwrap().is_some());
        let err = check_group(&record(5, two), Some(5)).unwrap_err();
        assert!(err.contains("does not follow 5"), "{err}");
        assert!(check_group(&record(0, two), None).is_err());
        assert!(check_group(&record(MAX_SEQUENCE, two), None).is_err());
        assert!(check_group(&record(u64::MAX, two), None).is_err());
        assert!(check_group(&record(MAX_SEQUENCE - 1, two), None).is_ok());
        assert_eq!(check_group(&record(9, &[]), Some(20)), Ok(None));
        assert!(check_group(b"short", None).is_err());
    }
}
