//! Per-thread counters of where an operation's time went: RocksDB's
//! `PerfContext`, with the `rocksdb` crate's `perf` API.
//!
//! A thread sets how much it measures with [`set_perf_stats`] (nothing, by
//! default); the engine then adds to that thread's counters as it works on
//! the thread's calls, and [`PerfContext`] reads and resets them. Counts
//! cost an add to a thread-local; times read the clock on each side of
//! what they time, tens of nanoseconds a reading, which a write of a few
//! hundred nanoseconds feels: measure with times on to learn where the
//! time goes, not how much there is.
//!
//! What is measured ([`PerfMetric`] lists each; counts from
//! [`PerfStatsLevel::EnableCount`] on, times from
//! [`PerfStatsLevel::EnableTimeExceptForMutex`] on):
//!
//! - a write: its log record ([`WriteWalTime`](PerfMetric::WriteWalTime):
//!   the reservation of its sequence numbers and bytes, the record's
//!   write, and for a `sync` group's leader the sync), its memtable
//!   insert, the stalls and slowdowns it waited through, the memtable
//!   switches it made, the time it waited for other writers (for the writes
//!   numbered before it to become visible, or for its sync group), and the
//!   rest;
//! - a point read: the memtables it searched and the time there, the
//!   time in table files, the blocks it read from them and the bloom
//!   filters that ruled a table out or let the read in.
//!
//! Unlike RocksDB there is no block cache and no mutex on these paths, so
//! [`PerfStatsLevel::EnableTime`] measures what
//! [`EnableTimeExceptForMutex`](PerfStatsLevel::EnableTimeExceptForMutex)
//! does, and no CPU times are taken.
//!
//! # Examples
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! use lsm_demo::perf::{PerfContext, PerfMetric, PerfStatsLevel, set_perf_stats};
//! use lsm_demo::{DB, Options};
//!
//! let mut opts = Options::default();
//! opts.create_if_missing(true);
//! let db = DB::open(&opts, dir.path()).unwrap();
//! set_perf_stats(PerfStatsLevel::EnableTime);
//! let mut ctx = PerfContext::default();
//! ctx.reset();
//! db.put(b"key", b"value").unwrap();
//! db.get(b"key").unwrap();
//! assert!(ctx.metric(PerfMetric::WriteMemtableTime) > 0);
//! assert_eq!(ctx.metric(PerfMetric::GetFromMemtableCount), 1);
//! assert!(ctx.report(true).contains("write_wal_time = "));
//! set_perf_stats(PerfStatsLevel::Disable);
//! ```

use std::cell::Cell;
use std::fmt::Write as _;
use std::marker::PhantomData;
use std::time::Instant;

/// How much a thread measures (the `rocksdb` crate's names for RocksDB's
/// `PerfLevel`s). Each level measures what the levels below it do.
///
/// # Examples
///
/// ```
/// use lsm_demo::perf::{PerfStatsLevel, set_perf_stats};
///
/// set_perf_stats(PerfStatsLevel::EnableCount); // counts only, no clock readings
/// set_perf_stats(PerfStatsLevel::Disable);
/// ```
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
#[repr(i32)]
pub enum PerfStatsLevel {
    /// Not set: measures nothing, as `Disable`.
    Uninitialized = 0,
    /// Measures nothing (the default).
    Disable,
    /// Counts ([`PerfMetric`]s named `...Count` and `...Byte`).
    EnableCount,
    /// Counts and times.
    EnableTimeExceptForMutex,
    /// As `EnableTimeExceptForMutex`: no CPU times are taken here.
    EnableTimeAndCPUTimeExceptForMutex,
    /// As `EnableTimeExceptForMutex`: these paths take no mutex to time.
    EnableTime,
    /// Past the last level: measures nothing, as `Disable`.
    OutOfBound,
}

/// What a [`PerfContext`] counts, under RocksDB's names; times are in
/// nanoseconds.
///
/// # Examples
///
/// ```
/// use lsm_demo::perf::PerfMetric;
///
/// assert_eq!(PerfMetric::WriteWalTime.name(), "write_wal_time");
/// assert!(PerfMetric::ALL.contains(&PerfMetric::BlockReadCount));
/// ```
#[derive(Debug, Copy, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PerfMetric {
    /// Blocks read from table files (index and filter blocks included).
    BlockReadCount,
    /// Bytes of those blocks.
    BlockReadByte,
    /// Time reading them, checksums included.
    BlockReadTime,
    /// Time point reads spent in memtables.
    GetFromMemtableTime,
    /// Memtables point reads searched.
    GetFromMemtableCount,
    /// Time point reads spent in table files.
    GetFromOutputFilesTime,
    /// Time writes spent reserving their sequence numbers and log bytes,
    /// writing their log records, and syncing them (a sync group's
    /// leader, for the group).
    WriteWalTime,
    /// Time writes spent inserting into the memtable.
    WriteMemtableTime,
    /// Time writes waited in stalls and slowdowns.
    WriteDelayTime,
    /// Time writes spent switching full memtables to new ones and logs.
    WriteSchedulingFlushesCompactionsTime,
    /// Time writes spent on anything else; it includes
    /// `WriteThreadWaitNanos`.
    WritePreAndPostProcessTime,
    /// Time writes waited for other writers: for the writes numbered
    /// before theirs to become visible, or for their sync group.
    WriteThreadWaitNanos,
    /// Table lookups whose bloom filter let the key in.
    BloomSstHitCount,
    /// Table lookups whose bloom filter ruled the key out.
    BloomSstMissCount,
}

/// Counts and times need these levels.
const COUNTS_FROM: PerfStatsLevel = PerfStatsLevel::EnableCount;
const TIMES_FROM: PerfStatsLevel = PerfStatsLevel::EnableTimeExceptForMutex;

impl PerfMetric {
    /// Every metric, in the order of [`PerfContext::report`].
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::perf::{PerfContext, PerfMetric};
    ///
    /// let ctx = PerfContext::default();
    /// let nothing_yet = PerfMetric::ALL.iter().all(|&m| ctx.metric(m) == 0);
    /// assert!(nothing_yet);
    /// ```
    pub const ALL: [PerfMetric; 14] = [
        PerfMetric::BlockReadCount,
        PerfMetric::BlockReadByte,
        PerfMetric::BlockReadTime,
        PerfMetric::GetFromMemtableTime,
        PerfMetric::GetFromMemtableCount,
        PerfMetric::GetFromOutputFilesTime,
        PerfMetric::WriteWalTime,
        PerfMetric::WriteMemtableTime,
        PerfMetric::WriteDelayTime,
        PerfMetric::WriteSchedulingFlushesCompactionsTime,
        PerfMetric::WritePreAndPostProcessTime,
        PerfMetric::WriteThreadWaitNanos,
        PerfMetric::BloomSstHitCount,
        PerfMetric::BloomSstMissCount,
    ];

    /// RocksDB's name for it, as [`PerfContext::report`] prints it.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(lsm_demo::perf::PerfMetric::BloomSstMissCount.name(), "bloom_sst_miss_count");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            PerfMetric::BlockReadCount => "block_read_count",
            PerfMetric::BlockReadByte => "block_read_byte",
            PerfMetric::BlockReadTime => "block_read_time",
            PerfMetric::GetFromMemtableTime => "get_from_memtable_time",
            PerfMetric::GetFromMemtableCount => "get_from_memtable_count",
            PerfMetric::GetFromOutputFilesTime => "get_from_output_files_time",
            PerfMetric::WriteWalTime => "write_wal_time",
            PerfMetric::WriteMemtableTime => "write_memtable_time",
            PerfMetric::WriteDelayTime => "write_delay_time",
            PerfMetric::WriteSchedulingFlushesCompactionsTime => {
                "write_scheduling_flushes_compactions_time"
            }
            PerfMetric::WritePreAndPostProcessTime => "write_pre_and_post_process_time",
            PerfMetric::WriteThreadWaitNanos => "write_thread_wait_nanos",
            PerfMetric::BloomSstHitCount => "bloom_sst_hit_count",
            PerfMetric::BloomSstMissCount => "bloom_sst_miss_count",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

const METRICS: usize = PerfMetric::ALL.len();

std::thread_local! {
    static LEVEL: Cell<PerfStatsLevel> = const { Cell::new(PerfStatsLevel::Disable) };
    static COUNTERS: [Cell<u64>; METRICS] = const { [const { Cell::new(0) }; METRICS] };
}

/// Sets how much the calling thread measures from now on.
///
/// # Examples
///
/// ```
/// use lsm_demo::perf::{PerfStatsLevel, set_perf_stats};
///
/// set_perf_stats(PerfStatsLevel::EnableTimeExceptForMutex);
/// set_perf_stats(PerfStatsLevel::Disable);
/// ```
pub fn set_perf_stats(lvl: PerfStatsLevel) {
    LEVEL.with(|l| l.set(lvl));
}

/// Whether the calling thread measures `from`'s metrics.
#[inline]
fn enabled(from: PerfStatsLevel) -> bool {
    let level = LEVEL.with(Cell::get);
    level != PerfStatsLevel::OutOfBound && level as i32 >= from as i32
}

fn value(m: PerfMetric) -> u64 {
    COUNTERS.with(|c| c[m.index()].get())
}

fn add(m: PerfMetric, n: u64) {
    COUNTERS.with(|c| {
        let cell = &c[m.index()];
        cell.set(cell.get().wrapping_add(n));
    });
}

/// Adds `n` to a count of the calling thread, if it counts.
#[inline]
pub(crate) fn count(m: PerfMetric, n: u64) {
    if enabled(COUNTS_FROM) {
        add(m, n);
    }
}

/// A clock reading taken only when the calling thread measures times.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timer(Option<Instant>);

impl Timer {
    #[inline]
    pub(crate) fn start() -> Timer {
        Timer(enabled(TIMES_FROM).then(Instant::now))
    }

    /// Adds the time since the start to `m`.
    #[inline]
    pub(crate) fn stop(self, m: PerfMetric) {
        if let Some(start) = self.0 {
            add(m, nanos_since(start));
        }
    }
}

fn nanos_since(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// The parts of a write timed on their own; the rest of it is
/// `WritePreAndPostProcessTime`.
const WRITE_PARTS: [PerfMetric; 4] = [
    PerfMetric::WriteWalTime,
    PerfMetric::WriteMemtableTime,
    PerfMetric::WriteDelayTime,
    PerfMetric::WriteSchedulingFlushesCompactionsTime,
];

fn write_parts() -> u64 {
    WRITE_PARTS
        .iter()
        .map(|&m| value(m))
        .fold(0, u64::wrapping_add)
}

/// A clock reading, with what the calling thread's write parts had taken
/// by then.
#[derive(Debug, Clone, Copy)]
struct Mark {
    at: Instant,
    parts: u64,
}

impl Mark {
    #[inline]
    fn now() -> Option<Mark> {
        enabled(TIMES_FROM).then(|| Mark {
            at: Instant::now(),
            parts: write_parts(),
        })
    }

    /// The time since, less what the write parts took meanwhile.
    fn outside_parts(self) -> u64 {
        let in_parts = write_parts().wrapping_sub(self.parts);
        nanos_since(self.at).saturating_sub(in_parts)
    }
}

/// Times a span of a write less what the write parts took in it, on this
/// thread: a whole write (the rest goes to `WritePreAndPostProcessTime`),
/// or a wait for other writers that may hold work of the thread's own (a
/// sync group's leader writes, syncs and inserts for the group; the rest
/// goes to `WriteThreadWaitNanos`).
#[derive(Debug)]
pub(crate) struct OutsidePartsTimer(Option<Mark>);

impl OutsidePartsTimer {
    #[inline]
    pub(crate) fn start() -> OutsidePartsTimer {
        OutsidePartsTimer(Mark::now())
    }

    /// Adds the span's time outside the write parts to `m`.
    #[inline]
    pub(crate) fn stop(self, m: PerfMetric) {
        if let Some(mark) = self.0 {
            add(m, mark.outside_parts());
        }
    }
}

/// The calling thread's counters (RocksDB's `PerfContext`, which is per
/// thread): every `PerfContext` of a thread reads and resets the same ones.
/// Not `Send`: it stands for the thread that made it.
///
/// # Examples
///
/// ```
/// use lsm_demo::perf::{PerfContext, PerfMetric};
///
/// let mut ctx = PerfContext::default();
/// ctx.reset();
/// assert_eq!(ctx.metric(PerfMetric::WriteWalTime), 0);
/// assert_eq!(ctx.report(true), ""); // nothing measured yet
/// ```
#[derive(Debug, Default)]
pub struct PerfContext {
    _this_thread: PhantomData<*const ()>,
}

impl PerfContext {
    /// Sets the thread's counters to zero.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut ctx = lsm_demo::perf::PerfContext::default();
    /// ctx.reset();
    /// ```
    pub fn reset(&mut self) {
        COUNTERS.with(|c| c.iter().for_each(|v| v.set(0)));
    }

    /// The thread's counters as RocksDB prints them, `name = value`
    /// separated by `, `; without those at zero if `exclude_zero_counters`.
    ///
    /// # Examples
    ///
    /// ```
    /// let ctx = lsm_demo::perf::PerfContext::default();
    /// assert!(ctx.report(false).starts_with("block_read_count = "));
    /// ```
    pub fn report(&self, exclude_zero_counters: bool) -> String {
        let mut out = String::new();
        for m in PerfMetric::ALL {
            let v = value(m);
            if exclude_zero_counters && v == 0 {
                continue;
            }
            if !out.is_empty() {
                out.push_str(", ");
            }
            let _ = write!(out, "{} = {v}", m.name());
        }
        out
    }

    /// The thread's count or time of `id`.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::perf::{PerfContext, PerfMetric};
    ///
    /// let mut ctx = PerfContext::default();
    /// ctx.reset();
    /// assert_eq!(ctx.metric(PerfMetric::GetFromMemtableCount), 0);
    /// ```
    pub fn metric(&self, id: PerfMetric) -> u64 {
        value(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each metric's counter is the one at its place in `ALL`, so that
    /// every metric has a counter and reports come in `ALL`'s order.
    #[test]
    fn every_metric_has_its_own_counter() {
        for (i, m) in PerfMetric::ALL.iter().enumerate() {
            assert_eq!(m.index(), i, "{m:?}");
        }
    }
}
