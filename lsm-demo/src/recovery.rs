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
//! | `NNNNNN.log.K` | the stripes of a log written into stripes (`Options::set_wal_stripes`), read, moved and deleted with it |
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
//! Only files a manifest lists as obsolete (the logs and tables this
//! database retired, and their stripes), and the empty stripes of a log
//! never made (a crash while a log was being created). Anything else, a file with a name the engine never
//! writes (`1.log`), a table of ours no manifest knows (left by a crash in
//! the middle of a flush), is left alone and named in the info log.
//!
//! # Logs
//!
//! Logs numbered from the manifest's log number on are read one record at a
//! time and replayed into memtables, which are written out as level-0 tables
//! whenever they reach the write buffer size, so memory stays bounded by the
//! memtable and the largest record. Damage is handled as the
//! [`DBRecoveryMode`](crate::DBRecoveryMode) says. A log from which anything beyond a torn tail was
//! dropped, and every later log dropped whole under
//! [`DBRecoveryMode::PointInTime`](crate::DBRecoveryMode::PointInTime), is moved to `lost/` once the new
//! manifest no longer needs it, so the evidence survives.
//!
//! Each log names the log before it in its header and, once the engine
//! switched away from it, the log after it in a trailer; a log missing from
//! that chain, or one cut short before its trailer, ends the point in time
//! like damage does. A log that holds no record (a header or less, and
//! zeros: a mapped log is grown before it is written) never took a write.
//! One that a later log follows is skipped and retired: a memtable switch
//! created it and failed before the log took any record. A last one is
//! what a switch leaves when the process dies after creating the new log
//! and before ending the old one: the old one is then the last that took
//! writes and may end as a last log does, without its trailer (and,
//! mapped, in zeros), and the unused one is retired. In the last log that
//! took writes, if writers wrote it side by side (mapped under
//! `allow_mmap_writes`, or positionally as its header says), damage followed
//! by whole records that can only be writes in flight at a crash is a torn
//! tail too (see `replay::copies_in_flight`). A positional log the engine
//! closed ends with a trailer that names no log (`batch::NO_NEXT_LOG`),
//! written once its records are durable: its damage is damage.

mod replay;
use replay::Replay;
pub(crate) use replay::check_group;
pub(crate) use replay::{copies_in_flight, holds_no_record, last_written, written_positionally};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arena::BlockPool;

use crate::env::{FileLock, FileSystem, WritableFile};
use crate::error::{Error, Result};
use crate::filename::{
    FileKind, LOCK_FILE, LOST_DIR, log_path, looks_like_database_file, parse_file_name, table_path,
};
use crate::info_log::{InfoLog, info};
use crate::manifest::{
    MANIFEST_FILE, Manifest, ManifestError, NUM_LEVELS, read_manifest, write_manifest,
};
use crate::options::Options;
use crate::version::{TableFile, open_table};
use crate::wal::{LogWriter, WalError};

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
    /// Log records (one per write, or per group of `sync` writes) replayed.
    pub records_replayed: u64,
    /// Stretches of damage dropped inside logs, torn tails included.
    pub damaged_ranges: u64,
    /// Logs not replayed at all because an earlier log was damaged
    /// ([`DBRecoveryMode::PointInTime`](crate::DBRecoveryMode::PointInTime)).
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
    /// The stripes of logs (see `wal::stripes`): their log's number and
    /// their name.
    pub(crate) stripes: Vec<(u64, String)>,
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
                // Never a number for a new file: a stripe left behind
                // would be read as part of it.
                Some(FileKind::LogStripe(n)) => {
                    inv.stripes.push((n, name.clone()));
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
            if manifest.comparator_name() != opts.comparator.name() {
                return Err(Error::InvalidArgument(format!(
                    "database {} orders its keys by the comparator {:?}, not {:?}",
                    dir.display(),
                    manifest.comparator_name(),
                    opts.comparator.name()
                )));
            }
            manifest
                .check_consistency_with(&opts.comparator)
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

/// Creates a log file: through a memory map under `allow_mmap_writes`,
/// for positioned writes from many threads under
/// `allow_concurrent_log_write`, else for appends.
pub(crate) fn create_log(
    fs: &dyn FileSystem,
    path: &Path,
    opts: &Options,
) -> Result<Box<dyn WritableFile>> {
    let file = if opts.allow_mmap_writes {
        fs.create_mapped(path)
    } else if opts.log_stripes() > 0 {
        fs.create_striped(path, opts.log_stripes())
    } else if opts.logs_take_shared_writes() {
        fs.create_positional(path)
    } else {
        fs.create(path)
    };
    file.map_err(|e| {
        // The stripes made before the failure go (and the file, if made):
        // the log's number is not used again.
        let _ = crate::wal::remove_log(fs, path);
        Error::io(format!("creating {}", path.display()), e)
    })
}

/// Writes the manifest of a new, empty database in `dir`.
pub(crate) fn create_database(fs: &dyn FileSystem, dir: &Path, opts: &Options) -> Result<Manifest> {
    let manifest = Manifest {
        next_file_number: 1,
        comparator: manifest_comparator(opts),
        ..Manifest::default()
    };
    write_manifest(fs, dir, &manifest)
        .map_err(|e| Error::io(format!("writing {}", dir.join(MANIFEST_FILE).display()), e))?;
    Ok(manifest)
}

/// The comparator name a new manifest records: none for the bytewise
/// order, so that builds from before names were recorded open it.
pub(crate) fn manifest_comparator(opts: &Options) -> String {
    if opts.comparator.is_bytewise() {
        String::new()
    } else {
        opts.comparator.name().to_owned()
    }
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

/// Opens the live tables, replays the logs (into memtables whose arenas
/// draw on `pool`, and leave their blocks there for the database's), starts
/// a new log and writes the manifest that retires the replayed ones.
pub(crate) fn recover(
    fs: &dyn FileSystem,
    dir: &Path,
    opts: &Options,
    mut manifest: Manifest,
    inventory: &Inventory,
    log: &InfoLog,
    pool: &BlockPool,
) -> Result<Recovered> {
    let mut stats = RecoveryStats::default();
    note_unknown_files(dir, &manifest, inventory, Some(log), &mut stats);
    remove_orphan_stripes(fs, dir, inventory, log, &mut stats);
    // No number of ours is given twice, even to a file no manifest knows.
    manifest.next_file_number = manifest.next_file_number.max(inventory.max_number + 1);

    let mut levels: [Vec<Arc<TableFile>>; NUM_LEVELS] = Default::default();
    for meta in &manifest.files {
        let table = open_table(fs, dir, meta, &opts.comparator)?;
        levels[meta.level as usize].push(Arc::new(table));
    }
    levels[0].sort_by_key(|t| std::cmp::Reverse(t.meta.number));
    for level in &mut levels[1..] {
        level.sort_by(|a, b| {
            opts.comparator
                .compare_internal(&a.meta.smallest, &b.meta.smallest)
        });
    }

    let logs: Vec<u64> = inventory
        .logs
        .range(manifest.log_number..)
        .copied()
        .collect();
    let replay = Replay::run(fs, dir, opts, pool, &mut manifest, &logs, log, &mut stats)?;
    for table in replay.tables {
        manifest.files.push(table.meta.clone());
        levels[0].insert(0, Arc::new(table));
    }

    // A fresh log for new writes; the manifest then names it as the first
    // log to replay, which retires the replayed ones.
    let log_number = manifest.next_file_number;
    manifest.next_file_number += 1;
    let path = log_path(dir, log_number);
    let file = create_log(fs, &path, opts)?;
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

/// Deletes the stripes of logs without a file that hold no entry: a crash
/// while a log was being made, after its stripes and before its file,
/// leaves them (stripes are moved and deleted before their log file, so
/// nothing else does), and nothing was written into them. A stripe without
/// its log that holds entries, or is no stripe, is not the engine's to
/// delete: it is named as unknown and left alone.
fn remove_orphan_stripes(
    fs: &dyn FileSystem,
    dir: &Path,
    inventory: &Inventory,
    log: &InfoLog,
    stats: &mut RecoveryStats,
) {
    for (number, name) in &inventory.stripes {
        if inventory.logs.contains(number) {
            continue;
        }
        let path = dir.join(name);
        match crate::wal::stripe_entries(fs, &path) {
            Ok(0) => match fs.remove_file(&path) {
                Ok(()) => info!(log, "deleted {}: its log was never made", path.display()),
                Err(e) => info!(log, "could not delete {}: {e}", path.display()),
            },
            held => {
                let held = match held {
                    Ok(n) => format!("{n} entries"),
                    Err(e) => e.to_string(),
                };
                info!(
                    log,
                    "{} is a stripe without its log file ({held}); left alone",
                    path.display()
                );
                stats.unknown_files.push(path);
            }
        }
    }
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
        // A log's stripes go with it (a table has none).
        .and_then(|()| crate::wal::rename_log(fs, path, &target))
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
    let gone = |path: PathBuf, removed: std::io::Result<()>| match removed {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => {
            info!(log, "could not delete obsolete {}: {e}", path.display());
            false
        }
    };
    manifest.obsolete_logs.retain(|&n| {
        let path = log_path(dir, n);
        // With its stripes, if it has any.
        let removed = crate::wal::remove_log(fs, &path);
        !gone(path, removed)
    });
    manifest.obsolete_tables.retain(|&n| {
        let path = table_path(dir, n);
        let removed = fs.remove_file(&path);
        !gone(path, removed)
    });
}
