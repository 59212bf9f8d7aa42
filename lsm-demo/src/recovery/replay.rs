//! Replaying logs into memtables, as the recovery mode says: the chain of
//! logs, their trailers, and the records whose checksums hold but whose
//! contents cannot be right.

use std::path::Path;

use arena::BlockPool;

use super::{RecoveryStats, wal_error};
use crate::batch::{BatchOp, NO_NEXT_LOG, WriteBatch, decode_group, decode_log_trailer};
use crate::db::SEQUENCER_WINDOW;
use crate::env::FileSystem;
use crate::error::{Error, Result};
use crate::filename::log_path;
use crate::info_log::{InfoLog, info};
use crate::iter::Forward;
use crate::key::MAX_SEQUENCE;
use crate::manifest::Manifest;
use crate::memtable::Memtable;
use crate::options::{MAX_KEY_LEN, MAX_VALUE_LEN, Options};
use crate::version::{TableFile, build_table};
use crate::wal::{DBRecoveryMode, FILE_HEADER_LEN, LogReader, RECORD_HEADER_LEN, WalError};
use crate::wal::{POSITIONAL_VERSION, is_record_cut_short};

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
/// a trailer in the last log names a log that is missing, and a log the
/// engine closed ([`NO_NEXT_LOG`]) has no log after it that took writes.
/// Logs of format version 1 have no trailers. `None` when all is well, or
/// when damage already ended the log's replay.
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
        (Some(next), Some(NO_NEXT_LOG)) => Some(format!(
            "{path} was closed, but log {next} took writes after it"
        )),
        (None, Some(NO_NEXT_LOG)) => None,
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

/// What `mode` does with damage that the log reader cannot see (a log
/// missing or cut short, a record whose checksums hold but whose contents
/// cannot be right): the strict modes refuse to open, salvage goes on, and
/// point-in-time recovery ends there (then `true`).
fn stops_at(mode: DBRecoveryMode, why: &str, log: &InfoLog) -> Result<bool> {
    match mode {
        DBRecoveryMode::AbsoluteConsistency | DBRecoveryMode::TolerateCorruptedTailRecords => {
            Err(Error::Corruption(why.to_owned()))
        }
        DBRecoveryMode::SkipAnyCorruptedRecord => {
            info!(log, "{why}; going on (salvage)");
            Ok(false)
        }
        DBRecoveryMode::PointInTime => {
            info!(log, "{why}; the point in time ends here");
            Ok(true)
        }
    }
}

/// Replaying the logs: where their records go, and what came of it.
pub(super) struct Replay<'a> {
    fs: &'a dyn FileSystem,
    dir: &'a Path,
    opts: &'a Options,
    log: &'a InfoLog,
    /// Where the memtables' arenas take their blocks from and leave them.
    pool: &'a BlockPool,
    /// The memtable being replayed into.
    mem: Memtable,
    /// The last sequence replayed.
    last_sequence: Option<u64>,
    /// Level-0 tables written from the replayed records, oldest first.
    pub(super) tables: Vec<TableFile>,
    pub(super) next_sequence: u64,
    /// Logs fully replayed, or dropped only a torn tail: retired by the
    /// next manifest.
    pub(super) retired: Vec<u64>,
    /// Logs that lost more than a torn tail: moved to `lost/`.
    pub(super) set_aside: Vec<u64>,
}

impl<'a> Replay<'a> {
    #[expect(
        clippy::too_many_arguments,
        reason = "the replay's context and its outputs, each used once"
    )]
    pub(super) fn run(
        fs: &'a dyn FileSystem,
        dir: &'a Path,
        opts: &'a Options,
        pool: &'a BlockPool,
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
            pool,
            mem: Memtable::new_in(opts, 0, Some(pool)),
            last_sequence: None,
            tables: Vec::new(),
            next_sequence: manifest.last_sequence + 1,
            retired: Vec::new(),
            set_aside: Vec::new(),
        };
        let logs = &replay.skip_abandoned(logs)?;
        let last_written = last_written(fs, dir, logs)?.unwrap_or(0);
        // Whether the last log may end in records its writers were writing
        // side by side when the process died (see `copies_in_flight`): a
        // mapped log, or one that says it was written positionally; in the
        // modes that stop at its damage (salvage reads on).
        let last_positional = match logs.get(last_written) {
            Some(&n) => written_positionally(fs, &log_path(dir, n))?,
            None => false,
        };
        let in_flight_at_end = |i: usize| {
            (opts.allow_mmap_writes || last_positional)
                && i == last_written
                && matches!(
                    mode,
                    DBRecoveryMode::PointInTime | DBRecoveryMode::TolerateCorruptedTailRecords
                )
        };
        // Under PointInTime, why the replay stopped, and the damaged log.
        let mut stopped: Option<String> = None;
        let mut damaged_log = None;
        let mut previous_replayed: Option<u64> = None;
        for (i, &n) in logs.iter().enumerate() {
            let path = log_path(dir, n);
            if stopped.is_none() {
                // The reader would refuse damage with whole records after
                // it; whether that is a crash's copies in flight is decided
                // below, and this mode refuses anything else there.
                let read_mode = match mode {
                    DBRecoveryMode::TolerateCorruptedTailRecords if in_flight_at_end(i) => {
                        DBRecoveryMode::PointInTime
                    }
                    _ => mode,
                };
                let reader =
                    LogReader::open(fs, &path, read_mode).map_err(|e| wal_error(&path, e))?;
                let first_log = manifest.log_number;
                if let Some(why) =
                    chain_break(&path, reader.previous_log(), previous_replayed, first_log)
                    && stops_at(mode, &why, log)?
                {
                    stopped = Some(why);
                }
                if stopped.is_none() {
                    let version = reader.version();
                    let mut outcome =
                        replay.replay_log(manifest, &path, reader, stats, in_flight_at_end(i))?;
                    previous_replayed = Some(n);
                    stats.logs_replayed += 1;
                    let next = logs.get(i + 1).copied();
                    // The next log that took writes (see `last_written`).
                    let next_written = next.filter(|_| i < last_written);
                    if let Some(next) = next_written
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
                    // A trailer must name the next log, used or not; a
                    // closed log may be followed by one that took nothing
                    // (a crash in the next open, before its manifest).
                    let expected_next = match outcome.trailer {
                        Some(NO_NEXT_LOG) | None => next_written,
                        Some(_) => next,
                    };
                    if let Some(why) = unfinished(&path, version, &outcome, expected_next)
                        && stops_at(mode, &why, log)?
                    {
                        if expected_next.is_none() {
                            // The lost log came last: what was replayed is
                            // a point in time already.
                            stats.logs_dropped += 1;
                        } else {
                            outcome.lost_more_than_a_tail = true;
                            outcome.stopped = true;
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
            // unless it holds nothing (an unused last log is known to).
            let size = crate::wal::log_size(fs, &path)
                .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
            if size > FILE_HEADER_LEN as u64 && i <= last_written {
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

    /// `logs` without the abandoned ones, which go to `retired`: a log that
    /// holds nothing (see `holds_no_record`) and that a later log follows was
    /// never written to. A memtable switch created it, then failed (a
    /// directory sync, say) before the log took any record; the next switch
    /// made a later log, and the logs around it chain as they were written.
    /// A log that ever took a record holds it still: the switch away from
    /// it synced it before any later log took a write.
    fn skip_abandoned(&mut self, logs: &[u64]) -> Result<Vec<u64>> {
        let Some((&last, earlier)) = logs.split_last() else {
            return Ok(Vec::new());
        };
        let mut kept = Vec::with_capacity(logs.len());
        for &n in earlier {
            let path = log_path(self.dir, n);
            let size = crate::wal::log_size(self.fs, &path)
                .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
            if size <= FILE_HEADER_LEN as u64 || holds_no_record(self.fs, &path)? {
                info!(
                    self.log,
                    "{}: {size} bytes and no record, never written to (a later log follows it); \
                     skipped",
                    path.display()
                );
                self.retired.push(n);
            } else {
                kept.push(n);
            }
        }
        kept.push(last);
        Ok(kept)
    }

    /// Replays one log's records into the memtable, as the mode says.
    /// `in_flight_at_end`: the log is the last, written side by side
    /// (mapped, or positionally as its header says), so its damage may be
    /// a crash's writes in flight (see `copies_in_flight`), which counts as
    /// a torn tail.
    fn replay_log(
        &mut self,
        manifest: &mut Manifest,
        path: &Path,
        mut reader: LogReader,
        stats: &mut RecoveryStats,
        in_flight_at_end: bool,
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
                    self.mem.insert_batch(first, &batch, false);
                    let last = first + batch.len() as u64 - 1;
                    self.last_sequence = Some(last);
                    self.next_sequence = self.next_sequence.max(last + 1);
                    stats.records_replayed += 1;
                    if self.mem.memory_usage() >= self.opts.write_buffer_size {
                        self.flush(manifest)?;
                    }
                }
                Ok(None) => {}
                Err(why) => {
                    let what = format!("{}: record at offset {offset}: {why}", path.display());
                    let stop = stops_at(self.opts.wal_recovery_mode, &what, log)?;
                    stats.damaged_ranges += 1;
                    outcome.lost_more_than_a_tail = true;
                    if stop {
                        let size = crate::wal::log_size(self.fs, path).unwrap_or(offset);
                        stats.bytes_dropped += size.saturating_sub(offset);
                        outcome.stopped = true;
                        return Ok(outcome);
                    }
                }
            }
        }
        for damage in reader.dropped() {
            let in_flight = in_flight_at_end
                && !damage.is_torn_tail()
                && copies_in_flight(self.fs, path, damage.offset, self.last_sequence)?;
            if in_flight {
                info!(
                    log,
                    "dropped {damage}: writes in flight when the process died (a torn tail)"
                );
            } else {
                info!(log, "dropped {damage}");
            }
            let torn_tail = damage.is_torn_tail() || in_flight;
            if !torn_tail
                && self.opts.wal_recovery_mode == DBRecoveryMode::TolerateCorruptedTailRecords
            {
                // As the reader would have refused it in this mode.
                return Err(wal_error(path, WalError::Corruption(damage.clone())));
            }
            stats.damaged_ranges += 1;
            stats.bytes_dropped += damage.dropped_bytes;
            outcome.lost_more_than_a_tail |= !torn_tail;
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
        let mut entries = self.mem.rep.clone().iter();
        entries.seek_to_first();
        let mut tombstones = self.mem.tombstone_output();
        if let Some(table) = build_table(
            self.fs,
            self.dir,
            opts,
            number,
            &mut Forward(&mut *entries),
            None,
            tombstones.as_mut(),
        )? {
            info!(
                self.log,
                "recovery wrote table {number} ({} entries, {} bytes)",
                table.meta.entries,
                table.meta.file_size
            );
            self.tables.push(table);
        }
        self.mem = Memtable::new_in(opts, 0, Some(self.pool));
        Ok(())
    }
}

/// Whether the damage at offset `from` of the log at `path`, and every
/// record after it, can be the writes in flight when the process died, in
/// a log that writers write at once (positional or mapped): then it is a
/// torn tail, not corruption.
///
/// Writers write such a log at once, each at bytes reserved with its
/// sequence numbers, so a crash can leave a record torn (or still zeros)
/// with later writers' whole records after it. None of those writes was
/// acknowledged: a write returns once every earlier one is in. Writes in
/// flight all start less than `SEQUENCER_WINDOW` numbers apart (the
/// sequencer holds writers back beyond it), and follow everything
/// replayed. So whole records after the damage are taken for writes in
/// flight when they are groups numbered after `last_sequence` (the last
/// write replayed before the damage) whose starts lie within that window,
/// and the file ends after them as a log being written does: in zeros (the
/// rest of a mapped log's growth: a log that was ended, cut to its
/// records, ends in a whole record) or, in a log whose header says it was
/// written positionally ([`POSITIONAL_VERSION`]), also right there (such a
/// log ends at its furthest write) or in a record cut short
/// (that write, torn). A trailer, a record that does not decode, records
/// spread wider or a log that ends otherwise mean damage. (A positional
/// log that the engine closed ends with a trailer, synced after its
/// records, so its damage is damage; one whose process died, then damaged
/// before its last whole records, reads as writes in flight: dropped from
/// the damage on, as damage would be, but not set aside.)
pub(crate) fn copies_in_flight(
    fs: &dyn FileSystem,
    path: &Path,
    from: u64,
    last_sequence: Option<u64>,
) -> Result<bool> {
    let mut reader = LogReader::open(fs, path, DBRecoveryMode::SkipAnyCorruptedRecord)
        .map_err(|e| wal_error(path, e))?;
    let positionally = reader.version() == Some(POSITIONAL_VERSION);
    let (mut lowest, mut highest) = (u64::MAX, 0);
    // Where the last whole record after the damage ends.
    let mut records_end = from;
    while let Some(record) = reader.next_record().map_err(|e| wal_error(path, e))? {
        let len = record.len() as u64;
        let first = match decode_log_trailer(record) {
            Some(_) => None,
            None => decode_group(record)
                .ok()
                .filter(|(_, ops)| !ops.is_empty())
                .map(|(first, _)| first),
        };
        if reader.last_record_offset() < from {
            continue; // replayed already
        }
        let Some(first) = first.filter(|&f| last_sequence.is_none_or(|l| f > l)) else {
            return Ok(false);
        };
        lowest = lowest.min(first);
        highest = highest.max(first);
        records_end = reader.last_record_offset() + (RECORD_HEADER_LEN as u64) + len;
    }
    if highest.saturating_sub(lowest) >= SEQUENCER_WINDOW as u64 {
        return Ok(false);
    }
    let read = |e| Error::io(format!("reading {}", path.display()), e);
    // With stripes, the view of the log and its stripes.
    let file = crate::wal::open_log(fs, path).map_err(read)?;
    let size = file.size().map_err(read)?;
    // Positional: right after the records, or in a record cut short.
    let after = size - records_end;
    if positionally {
        if after == 0 {
            return Ok(true);
        }
        let mut header = [0u8; RECORD_HEADER_LEN];
        let header = &mut header[..after.min(RECORD_HEADER_LEN as u64) as usize];
        file.read_exact_at(records_end, header).map_err(read)?;
        if is_record_cut_short(header, after) {
            return Ok(true);
        }
    }
    // In zeros.
    let mut end = [0u8; RECORD_HEADER_LEN];
    if size < records_end + end.len() as u64 {
        return Ok(false);
    }
    file.read_exact_at(size - end.len() as u64, &mut end)
        .map_err(read)?;
    Ok(end.iter().all(|&b| b == 0))
}

/// Whether the log at `path` says it was written by many writers at once
/// with positioned writes: its intact file header has
/// [`POSITIONAL_VERSION`]. A missing file, or one that is not a log, does
/// not say so (the reader that replays it reports what it is).
pub(crate) fn written_positionally(fs: &dyn FileSystem, path: &Path) -> Result<bool> {
    match LogReader::open(fs, path, DBRecoveryMode::SkipAnyCorruptedRecord) {
        Ok(reader) => Ok(reader.version() == Some(POSITIONAL_VERSION)),
        Err(WalError::Io { source, .. }) if source.kind() != std::io::ErrorKind::NotFound => {
            Err(Error::io(format!("reading {}", path.display()), source))
        }
        Err(_) => Ok(false),
    }
}

/// Where, in `logs` (the numbers of the logs to replay, in order), the last
/// log that took writes is: the last, or the one before when the last
/// holds nothing. That is what a memtable switch leaves when the process
/// dies after creating the new log and before ending the old one with its
/// trailer (and, mapped, its cut): the old one then ends as a last log
/// does. `None` without logs.
pub(crate) fn last_written(fs: &dyn FileSystem, dir: &Path, logs: &[u64]) -> Result<Option<usize>> {
    Ok(match logs {
        [] => None,
        [.., last] if logs.len() >= 2 && holds_no_record(fs, &log_path(dir, *last))? => {
            Some(logs.len() - 2)
        }
        _ => Some(logs.len() - 1),
    })
}

/// Whether the log at `path` holds nothing: no record, only zeros after
/// its header (or in its place). Such a log never took a write. A mapped
/// log is grown with zeros before its header is written, and cut back only
/// when its writer is dropped, so an unused one can be long. `false` for a
/// log that cannot be opened: whoever reads it reports what is wrong.
pub(crate) fn holds_no_record(fs: &dyn FileSystem, path: &Path) -> Result<bool> {
    let Ok(mut reader) = LogReader::open(fs, path, DBRecoveryMode::PointInTime) else {
        return Ok(false);
    };
    if reader
        .next_record()
        .map_err(|e| wal_error(path, e))?
        .is_some()
    {
        return Ok(false);
    }
    Ok(reader
        .tail_report()
        .is_none_or(|tail| tail.zeroed && !tail.records_follow))
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
            BatchOp::DeleteRange(from, to) => {
                if from.len().max(to.len()) > MAX_KEY_LEN {
                    return Err(format!("a range of {} and {} bytes", from.len(), to.len()));
                }
                batch.delete_range(from, to);
            }
        }
    }
    Ok(Some((first, batch)))
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
