//! Checking every checksum of a database without opening it
//! ([`verify_with_fs`], `lsm-demo verify`, as `ldb verify_checksum`), and
//! rebuilding a database whose manifest is lost or damaged from the tables
//! and logs that read cleanly ([`repair_with_fs`], [`DB::repair`](crate::DB::repair),
//! `lsm-demo repair`, as RocksDB's `RepairDB`).
//!
//! # Examples
//!
//! ```
//! use lsm_demo::env::{FaultInjectionFs, FileSystem};
//! use lsm_demo::repair::{repair_with_fs, verify_with_fs};
//! use lsm_demo::{DB, Options};
//! use std::{path::Path, sync::Arc};
//!
//! let fs = Arc::new(FaultInjectionFs::new());
//! let mut opts = Options::default();
//! opts.create_if_missing(true);
//! let db = DB::open_with_fs(&opts, "/db", fs.clone()).unwrap();
//! db.put(b"k", b"v").unwrap();
//! db.flush().unwrap();
//! db.put(b"k2", b"v2").unwrap();
//! drop(db);
//! assert!(verify_with_fs(&opts, Path::new("/db"), &*fs).unwrap().is_clean());
//!
//! fs.remove_file(Path::new("/db/MANIFEST")).unwrap();
//! assert!(DB::open_with_fs(&opts, "/db", fs.clone()).is_err()); // refused, not emptied
//! let report = repair_with_fs(&opts, Path::new("/db"), &*fs).unwrap();
//! assert_eq!((report.tables_salvaged, report.records_replayed), (1, 1));
//! let db = DB::open_with_fs(&opts, "/db", fs.clone()).unwrap();
//! assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
//! assert_eq!(db.get(b"k2").unwrap().as_deref(), Some(&b"v2"[..]));
//! ```

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::compaction::{CompactionIterator, LevelsBelow};
use crate::env::FileSystem;
use crate::error::{Error, Result};
use crate::filename::{log_path, table_path};
use crate::info_log::{InfoLog, info};
use crate::iter::{EntrySource, Forward, InternalIterator, MergingIterator};
use crate::key::{MAX_SEQUENCE, parse_internal_key};
use crate::manifest::{MANIFEST_FILE, Manifest, read_manifest, write_manifest};
use crate::memtable::Memtable;
use crate::options::{Options, UserComparator};
use crate::recovery::{
    Inventory, RecoveryStats, check_group, copies_in_flight, lock_dir, manifest_error,
    not_a_database, set_aside,
};
use crate::table::Table;
use crate::version::{
    TableIterAdapter, build_table, table_comparator, table_error, table_range_dels,
};
use crate::wal::{DBRecoveryMode, LogReader, WalCorruption, WalError};

/// What [`verify_with_fs`] found.
///
/// # Examples
///
/// ```
/// let report = lsm_demo::repair::VerifyReport::default();
/// assert!(report.is_clean());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifyReport {
    /// Live tables read in whole, every block's checksum checked.
    pub tables_checked: u64,
    /// Entries in them.
    pub entries_checked: u64,
    /// Logs read in whole, every record's checksums checked.
    pub logs_checked: u64,
    /// Every damaged file, with what is wrong with it (a message that
    /// names the file).
    pub damaged: Vec<(PathBuf, String)>,
    /// The last log that took writes, with the bytes at its end that a
    /// crash tore (a record cut short, or zeros): not damage, the end of
    /// what was written, which recovery drops. With `allow_mmap_writes` in
    /// the options, so are whole records after a torn one that can only be
    /// a mapped log's copies in flight; without it they count as damage.
    pub torn_tails: Vec<(PathBuf, u64)>,
    /// Files with names of ours that the manifest does not know.
    pub unknown_files: Vec<PathBuf>,
}

impl VerifyReport {
    /// Whether nothing was damaged.
    ///
    /// # Examples
    ///
    /// ```
    /// # use lsm_demo::repair::VerifyReport;
    /// assert!(VerifyReport::default().is_clean());
    /// ```
    pub fn is_clean(&self) -> bool {
        self.damaged.is_empty()
    }
}

impl fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "checked {} tables ({} entries) and {} logs",
            self.tables_checked, self.entries_checked, self.logs_checked
        )?;
        for (_, why) in &self.damaged {
            writeln!(f, "damaged: {why}")?;
        }
        for (path, bytes) in &self.torn_tails {
            writeln!(
                f,
                "torn tail (a crash's, dropped on open): {bytes} bytes at the end of {}",
                path.display()
            )?;
        }
        for path in &self.unknown_files {
            writeln!(f, "not in the manifest (left alone): {}", path.display())?;
        }
        write!(f, "{}", if self.is_clean() { "OK" } else { "DAMAGED" })
    }
}

/// Reads every live file of the database in `dir` in whole and checks every
/// checksum: the manifest and its consistency, each block of each table,
/// each record of each log still to be replayed. A crash's leftovers are
/// not damage: the torn end of the last log that took writes (reported
/// apart, in `torn_tails`; with `allow_mmap_writes` in `opts`, a mapped
/// log's copies in flight too) and logs that never took a record. Writes
/// nothing and takes the lock, so the database must be closed. Of `opts`,
/// only `allow_mmap_writes` matters: tables are read in their own order.
///
/// # Errors
///
/// When the manifest itself cannot be read or is inconsistent (there is
/// then nothing to verify against), the directory is not a database, or
/// another `DB` has it open. Damage to tables and logs is reported, not
/// returned as an error.
///
/// # Examples
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// use lsm_demo::repair::verify_with_fs;
/// use lsm_demo::{DB, Options};
/// use std::{path::Path, sync::Arc};
///
/// let fs = Arc::new(FaultInjectionFs::new());
/// let db = DB::open_with_fs(Options::default().create_if_missing(true), "/db", fs.clone()).unwrap();
/// db.put(b"k", b"v").unwrap();
/// db.flush().unwrap();
/// drop(db);
/// let report = verify_with_fs(&Options::default(), Path::new("/db"), &*fs).unwrap();
/// assert_eq!((report.tables_checked, report.entries_checked), (1, 1));
/// assert!(report.is_clean());
/// ```
pub fn verify_with_fs(opts: &Options, dir: &Path, fs: &dyn FileSystem) -> Result<VerifyReport> {
    let inventory = Inventory::of(fs, dir)?;
    let manifest = read_manifest(fs, dir)
        .map_err(|e| manifest_error(dir, e))?
        .ok_or_else(|| match inventory.database_like.is_empty() {
            true => Error::NotFound(dir.to_path_buf()),
            false => not_a_database(dir, &inventory.database_like),
        })?;
    manifest
        .check_consistency()
        .map_err(|e| manifest_error(dir, e))?;
    let _lock = lock_dir(fs, dir)?;
    let mut report = VerifyReport::default();
    for meta in &manifest.files {
        let path = table_path(dir, meta.number);
        // Reading in order checks every checksum whatever the key order.
        match read_table(fs, &path, Some(meta.file_size), &UserComparator::default()) {
            Ok(t) => {
                report.tables_checked += 1;
                report.entries_checked += t.entries;
                if t.entries != meta.entries {
                    let why = format!(
                        "{}: {} entries, the manifest says {}",
                        path.display(),
                        t.entries,
                        meta.entries
                    );
                    report.damaged.push((path, why));
                }
            }
            Err(e) => report.damaged.push((path, e.to_string())),
        }
    }
    let logs: Vec<u64> = inventory
        .logs
        .range(manifest.log_number..)
        .copied()
        .collect();
    // The last log that took writes may end torn by a crash, as recovery
    // sees it; one after it holds nothing.
    let last_written = crate::recovery::last_written(fs, dir, &logs)?;
    // The last write read, which copies in flight must follow: only needed,
    // so only decoded, with the mapped log.
    let mut last_sequence = None;
    for (i, &n) in logs.iter().enumerate() {
        let path = log_path(dir, n);
        report.logs_checked += 1;
        if last_written.is_some_and(|w| i > w) || crate::recovery::holds_no_record(fs, &path)? {
            continue; // never written to: recovery retires it
        }
        let last = Some(i) == last_written;
        let positional = last && crate::recovery::written_positionally(fs, &path)?;
        // Written side by side: mapped, or positionally as its header says.
        let side_by_side = last && (opts.allow_mmap_writes || positional);
        let mode = if side_by_side {
            // Stops at the damage, which may be copies in flight.
            DBRecoveryMode::PointInTime
        } else if last {
            DBRecoveryMode::TolerateCorruptedTailRecords
        } else {
            DBRecoveryMode::AbsoluteConsistency
        };
        let dropped = read_log(fs, &path, mode, |record| {
            if side_by_side
                && let Ok((first, ops)) = crate::batch::decode_group(record)
                && !ops.is_empty()
            {
                last_sequence = Some(first + ops.len() as u64 - 1);
            }
        });
        match dropped.as_deref() {
            Ok([]) => {}
            Ok([tail]) if tail.is_torn_tail() => report.torn_tails.push((path, tail.dropped_bytes)),
            Ok([damage])
                if side_by_side && copies_in_flight(fs, &path, damage.offset, last_sequence)? =>
            {
                report.torn_tails.push((path, damage.dropped_bytes))
            }
            Ok([damage, ..]) => report.damaged.push((path, damage.to_string())),
            Err(e) => report.damaged.push((path, e.to_string())),
        }
    }
    let mut stats = RecoveryStats::default();
    crate::recovery::note_unknown_files(dir, &manifest, &inventory, None, &mut stats);
    report.unknown_files = stats.unknown_files;
    Ok(report)
}

/// A table read in whole.
struct TableScan {
    table: Arc<Table>,
    entries: u64,
    max_sequence: u64,
}

/// Opens the table at `path` (of `size` bytes, or the file's size) and reads
/// every entry, which checks every block's checksum.
fn read_table(
    fs: &dyn FileSystem,
    path: &Path,
    size: Option<u64>,
    ucmp: &UserComparator,
) -> Result<TableScan> {
    let file = fs
        .open_random(path)
        .map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
    let size = match size {
        Some(size) => size,
        None => file
            .size()
            .map_err(|e| Error::io(format!("reading {}", path.display()), e))?,
    };
    let table = Table::open_named(
        file,
        size,
        table_comparator(ucmp),
        crate::key::user_key,
        path,
    )
    .map_err(table_error)?;
    let mut it = table.iter();
    it.seek_to_first();
    let (mut entries, mut max_sequence) = (0, 0);
    while it.valid() {
        let key = parse_internal_key(it.key()).ok_or_else(|| {
            Error::Corruption(format!(
                "{}: entry {entries} has a malformed key",
                path.display()
            ))
        })?;
        max_sequence = max_sequence.max(key.sequence);
        entries += 1;
        it.next();
    }
    it.status().map_err(table_error)?;
    Ok(TableScan {
        table,
        entries,
        max_sequence,
    })
}

/// Reads the log at `path` in `mode`, handing each record to `each`;
/// returns the damage dropped.
fn read_log(
    fs: &dyn FileSystem,
    path: &Path,
    mode: DBRecoveryMode,
    mut each: impl FnMut(&[u8]),
) -> Result<Vec<WalCorruption>> {
    let wal = |e: WalError| crate::recovery::wal_error(path, e);
    let mut reader = LogReader::open(fs, path, mode).map_err(wal)?;
    while let Some(record) = reader.next_record().map_err(wal)? {
        each(record);
    }
    Ok(reader.dropped().to_vec())
}

/// How a log read by [`salvage_log`] ended.
enum LogEnd {
    /// Every byte read as whole records.
    Whole,
    /// The end of the last log that took writes, as a crash left it: this
    /// many bytes of a record cut short, zeros, or (mapped) copies in
    /// flight. Never acknowledged, so dropped as recovery drops them.
    TornTail(u64),
    /// Damage: this many bytes skipped.
    Damaged(u64),
}

/// What [`salvage_log`] read.
struct SalvagedLog {
    end: LogEnd,
    records_replayed: u64,
    /// Records whose checksums hold but whose contents cannot be applied.
    records_skipped: u64,
}

/// Reads the log at `path` for a repair, handing `apply` each group that
/// follows `last_replayed` (which it advances) and skipping damage
/// ([`DBRecoveryMode::SkipAnyCorruptedRecord`]), except at the end of the
/// last log that took writes (`last`), where a crash's leftovers are a
/// torn tail, as on open: a record cut short or zeros, and, for a log
/// that writers wrote side by side (mapped, per `opts`, or positionally,
/// as its header says), a torn record followed
/// by whole ones that can only be writes in flight (see
/// `recovery::copies_in_flight`). Those are not replayed, so the repair
/// keeps a point in time there.
fn salvage_log(
    fs: &dyn FileSystem,
    path: &Path,
    last: bool,
    opts: &Options,
    last_replayed: &mut Option<u64>,
    log: &InfoLog,
    mut apply: impl FnMut(u64, crate::batch::WriteBatch),
) -> Result<SalvagedLog> {
    let wal = |e: WalError| crate::recovery::wal_error(path, e);
    let mut reader =
        LogReader::open(fs, path, DBRecoveryMode::SkipAnyCorruptedRecord).map_err(wal)?;
    let mut read = SalvagedLog {
        end: LogEnd::Whole,
        records_replayed: 0,
        records_skipped: 0,
    };
    // Whether damage seen before a record may be copies in flight.
    let positional = reader.version() == Some(crate::wal::POSITIONAL_VERSION);
    let mut in_flight_possible = last && (opts.allow_mmap_writes || positional);
    while let Some(record) = reader.next_record().map_err(wal)? {
        let checked = match crate::batch::decode_log_trailer(record) {
            Some(_) => Ok(None),
            None => check_group(record, *last_replayed),
        };
        if in_flight_possible && let Some(damage) = reader.dropped().first() {
            in_flight_possible = false;
            if copies_in_flight(fs, path, damage.offset, *last_replayed)? {
                // From the damage to the end of the file.
                let size = crate::wal::log_size(fs, path)
                    .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
                read.end = LogEnd::TornTail(size - damage.offset);
                return Ok(read);
            }
        }
        match checked {
            Ok(Some((first, batch))) => {
                *last_replayed = Some(first + batch.len() as u64 - 1);
                apply(first, batch);
                read.records_replayed += 1;
            }
            Ok(None) => {}
            Err(why) => {
                let offset = reader.last_record_offset();
                info!(
                    log,
                    "{}: record at offset {offset} skipped: {why}",
                    path.display()
                );
                read.records_skipped += 1;
            }
        }
    }
    read.end = match reader.dropped() {
        [] => LogEnd::Whole,
        [tail] if last && tail.is_torn_tail() => LogEnd::TornTail(tail.dropped_bytes),
        dropped => LogEnd::Damaged(dropped.iter().map(|d| d.dropped_bytes).sum()),
    };
    Ok(read)
}

/// What [`repair_with_fs`] salvaged and set aside.
///
/// # Examples
///
/// ```
/// let report = lsm_demo::repair::RepairReport::default();
/// assert_eq!(report.to_string(), "salvaged 0 tables and 0 log records from 0 logs \
///     (0 records, 0 bytes dropped); wrote 0 entries");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RepairReport {
    /// Tables that read cleanly and went into the rebuilt database.
    pub tables_salvaged: u64,
    /// Logs read (each damaged record skipped).
    pub logs_replayed: u64,
    /// Log records replayed.
    pub records_replayed: u64,
    /// Log records or stretches of log that could not be used.
    pub records_dropped: u64,
    /// Bytes of log dropped as damage.
    pub bytes_dropped: u64,
    /// The last log that took writes, with the bytes at its end that a
    /// crash tore (as in [`VerifyReport::torn_tails`], and with
    /// `allow_mmap_writes` a mapped log's copies in flight too): writes never
    /// acknowledged, dropped as on open, not counted as damage.
    pub torn_tails: Vec<(PathBuf, u64)>,
    /// Entries in the rebuilt database's tables.
    pub entries_written: u64,
    /// Files moved to `lost/`: damaged tables and logs.
    pub files_set_aside: Vec<PathBuf>,
}

impl fmt::Display for RepairReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "salvaged {} tables and {} log records from {} logs ({} records, {} bytes dropped); \
             wrote {} entries",
            self.tables_salvaged,
            self.records_replayed,
            self.logs_replayed,
            self.records_dropped,
            self.bytes_dropped,
            self.entries_written
        )?;
        for (path, bytes) in &self.torn_tails {
            write!(
                f,
                "\ntorn tail (a crash's, dropped): {bytes} bytes at the end of {}",
                path.display()
            )?;
        }
        for path in &self.files_set_aside {
            write!(f, "\nset aside: {}", path.display())?;
        }
        Ok(())
    }
}

/// Rebuilds the database in `dir` from what reads cleanly, as RocksDB's
/// `RepairDB`, whatever state its manifest is in.
///
/// Every table of ours that reads in whole (every checksum) is kept; every
/// log is replayed, skipping damaged records
/// ([`DBRecoveryMode::SkipAnyCorruptedRecord`]), except that the end of the
/// last log that took writes is read as on open: what a crash left there
/// (a record cut short, zeros and, with `allow_mmap_writes` in `opts`, the
/// copies of writes in flight) is a torn tail, dropped and reported in
/// [`RepairReport::torn_tails`], and the log is not set aside. Their union
/// is merged into new level-1 tables, newest version of each key first,
/// and a new manifest lists them; the tables and logs merged are then
/// deleted, and damaged ones moved to `lost/`. Files of other programs are
/// left alone. The result opens as a normal database; it holds every write
/// that reached a readable table or log record (but a torn tail's), so
/// keys deleted by a lost record may come back.
///
/// # Errors
///
/// A directory that is another store's database, or not a database at all;
/// a held lock; I/O errors (the old files stay until the new manifest is
/// durable).
///
/// # Examples
///
/// A damaged table is set aside; what the log holds is kept:
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// use lsm_demo::repair::repair_with_fs;
/// use lsm_demo::{DB, Options};
/// use std::{path::Path, sync::Arc};
///
/// let fs = Arc::new(FaultInjectionFs::new());
/// let mut opts = Options::default();
/// opts.create_if_missing(true);
/// let db = DB::open_with_fs(&opts, "/db", fs.clone()).unwrap();
/// db.put(b"old", b"1").unwrap();
/// db.flush().unwrap();
/// db.put(b"new", b"2").unwrap();
/// drop(db);
/// let table = fs.list_dir(Path::new("/db")).unwrap().into_iter().find(|n| n.ends_with(".sst")).unwrap();
/// fs.create(&Path::new("/db").join(&table)).unwrap().append(b"garbage").unwrap();
///
/// let report = repair_with_fs(&opts, Path::new("/db"), &*fs).unwrap();
/// assert_eq!((report.tables_salvaged, report.records_replayed), (0, 1));
/// assert!(fs.exists(&Path::new("/db/lost").join(&table)));
/// let db = DB::open_with_fs(&opts, "/db", fs.clone()).unwrap();
/// assert_eq!(db.get(b"new").unwrap().as_deref(), Some(&b"2"[..]));
/// assert_eq!(db.get(b"old").unwrap(), None);
/// ```
pub fn repair_with_fs(opts: &Options, dir: &Path, fs: &dyn FileSystem) -> Result<RepairReport> {
    opts.validate()?;
    let inventory = Inventory::of(fs, dir)?;
    let ours = match read_manifest(fs, dir) {
        Ok(Some(m)) if m.comparator_name() != opts.comparator.name() => {
            // Rebuilding in another order would misfile every table.
            return Err(Error::InvalidArgument(format!(
                "database {} orders its keys by the comparator {:?}, not {:?}",
                dir.display(),
                m.comparator_name(),
                opts.comparator.name()
            )));
        }
        Ok(Some(_)) => true,
        Ok(None) => !inventory.database_like.is_empty(),
        Err(e) => !matches!(e, crate::manifest::ManifestError::BadMagic { .. }),
    };
    let foreign = inventory
        .database_like
        .iter()
        .any(|f| f != MANIFEST_FILE && !f.ends_with(".log") && !f.ends_with(".sst"));
    if !ours || foreign {
        return Err(not_a_database(dir, &inventory.database_like));
    }
    let _lock = lock_dir(fs, dir)?;
    let log = InfoLog::open(fs, dir);
    info!(log, "repairing {}", dir.display());
    let mut report = RepairReport::default();
    let mut set_aside_stats = RecoveryStats::default();
    let mut next_file_number = inventory.max_number + 1;
    let mut last_sequence = 0;

    // The tables that read in whole.
    let mut inputs: Vec<Arc<Table>> = Vec::new();
    let mut retired_tables = Vec::new();
    for &n in &inventory.tables {
        let path = table_path(dir, n);
        match read_table(fs, &path, None, &opts.comparator) {
            Ok(scan) => {
                info!(log, "table {n}: {} entries read cleanly", scan.entries);
                last_sequence = last_sequence.max(scan.max_sequence);
                report.tables_salvaged += 1;
                inputs.push(scan.table);
                retired_tables.push(n);
            }
            Err(e) => {
                info!(log, "table {n} is damaged: {e}");
                set_aside(fs, dir, &path, &log, &mut set_aside_stats);
            }
        }
    }

    // Every log, in order, into memtables written out as tables when full.
    let logs: Vec<u64> = inventory.logs.iter().copied().collect();
    let last_written = crate::recovery::last_written(fs, dir, &logs)?;
    let mut retired_logs = Vec::new();
    let mut mem = Memtable::new(opts, 0);
    let mut last_replayed = None;
    let mut built = Vec::new();
    for (i, &n) in logs.iter().enumerate() {
        let path = log_path(dir, n);
        if crate::recovery::holds_no_record(fs, &path)? {
            info!(log, "{}: holds no record, never written to", path.display());
            retired_logs.push(n);
            continue;
        }
        report.logs_replayed += 1;
        let mut flush_error = None;
        let read = salvage_log(
            fs,
            &path,
            Some(i) == last_written,
            opts,
            &mut last_replayed,
            &log,
            |first, batch| {
                mem.insert_batch(first, &batch, false);
                last_sequence = last_sequence.max(first + batch.len() as u64 - 1);
                if mem.memory_usage() >= opts.write_buffer_size && flush_error.is_none() {
                    flush_error =
                        flush_memtable(fs, dir, opts, &mut mem, &mut next_file_number, &mut built)
                            .err();
                }
            },
        );
        if let Some(e) = flush_error {
            return Err(e);
        }
        let read = match read {
            Ok(read) => read,
            Err(e) => {
                info!(log, "{} is unreadable: {e}", path.display());
                set_aside(fs, dir, &path, &log, &mut set_aside_stats);
                continue;
            }
        };
        report.records_replayed += read.records_replayed;
        report.records_dropped += read.records_skipped;
        match read.end {
            LogEnd::Whole => retired_logs.push(n),
            LogEnd::TornTail(bytes) => {
                info!(
                    log,
                    "{}: a crash's torn tail of {bytes} bytes dropped",
                    path.display()
                );
                report.torn_tails.push((path, bytes));
                retired_logs.push(n);
            }
            LogEnd::Damaged(bytes) => {
                info!(log, "{}: {bytes} damaged bytes skipped", path.display());
                report.records_dropped += 1;
                report.bytes_dropped += bytes;
                set_aside(fs, dir, &path, &log, &mut set_aside_stats);
            }
        }
    }
    if !mem.is_empty() {
        flush_memtable(fs, dir, opts, &mut mem, &mut next_file_number, &mut built)?;
    }
    retired_tables.extend(built.iter().map(|(n, _)| *n));
    inputs.extend(built.into_iter().map(|(_, t)| t));

    // Merge everything into level 1, newest version of each key only.
    let children: Vec<Box<dyn InternalIterator>> = inputs
        .iter()
        .map(|t| Box::new(TableIterAdapter(t.iter())) as Box<dyn InternalIterator>)
        .collect();
    let mut merged = MergingIterator::new(opts.comparator.clone(), children);
    merged.seek_to_first();
    // Range tombstones drop what they cover in the merge, and go with it:
    // nothing lies below.
    let mut range_dels = Vec::new();
    for t in &inputs {
        range_dels.extend(table_range_dels(t, dir)?);
    }
    let range_dels = (!range_dels.is_empty()).then(|| {
        Arc::new(crate::range_del::FragmentedTombstones::merge(
            range_dels.iter().map(|r| &**r),
        ))
    });
    let mut filtered =
        CompactionIterator::new(merged, MAX_SEQUENCE, LevelsBelow::default(), range_dels);
    let mut tombstones = filtered.output_tombstones.take();
    let mut files = Vec::new();
    while filtered.valid() || tombstones.as_ref().is_some_and(|t| t.pending()) {
        let number = next_file_number;
        next_file_number += 1;
        let Some(mut table) = build_table(
            fs,
            dir,
            opts,
            number,
            &mut filtered,
            Some(opts.target_file_size(1)),
            tombstones.as_mut(),
        )?
        else {
            break;
        };
        table.meta.level = 1;
        report.entries_written += table.meta.entries;
        files.push(table.meta);
    }
    filtered.status()?;
    // The old manifest, if any, is evidence: kept in lost/.
    if fs.exists(&dir.join(MANIFEST_FILE)) {
        set_aside(
            fs,
            dir,
            &dir.join(MANIFEST_FILE),
            &log,
            &mut set_aside_stats,
        );
    }
    let manifest = Manifest {
        // No log of before the repair is ever replayed again.
        log_number: next_file_number,
        next_file_number: next_file_number + 1,
        last_sequence,
        files,
        obsolete_logs: retired_logs,
        obsolete_tables: retired_tables,
        comparator: crate::recovery::manifest_comparator(opts),
    };
    manifest
        .check_consistency_with(&opts.comparator)
        .map_err(|e| Error::Corruption(format!("the repaired manifest: {e}")))?;
    write_manifest(fs, dir, &manifest)
        .map_err(|e| Error::io(format!("writing {}", dir.join(MANIFEST_FILE).display()), e))?;
    let mut manifest = manifest;
    crate::recovery::delete_obsolete_files(fs, dir, &mut manifest, &log);
    report.files_set_aside = set_aside_stats.files_set_aside;
    info!(log, "repaired: {report}");
    Ok(report)
}

/// Writes a repair's memtable out as a table (merged later) and starts an
/// empty one.
fn flush_memtable(
    fs: &dyn FileSystem,
    dir: &Path,
    opts: &Options,
    mem: &mut Memtable,
    next_file_number: &mut u64,
    built: &mut Vec<(u64, Arc<Table>)>,
) -> Result<()> {
    mem.rep.mark_read_only();
    let number = *next_file_number;
    *next_file_number += 1;
    let mut entries = mem.rep.clone().iter();
    entries.seek_to_first();
    let mut tombstones = mem.tombstone_output();
    if let Some(table) = build_table(
        fs,
        dir,
        opts,
        number,
        &mut Forward(&mut *entries),
        None,
        tombstones.as_mut(),
    )? {
        built.push((number, table.table));
    }
    *mem = Memtable::new(opts, 0);
    Ok(())
}
