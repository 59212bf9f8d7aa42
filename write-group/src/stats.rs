//! Counters of what the write group did.

// Statistics are std atomics even under loom: they are not part of the
// protocol, and keeping them out of the model keeps loom's search small.
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::gather::Waited;

/// Number of buckets of [`Stats::group_sizes`].
///
/// # Examples
///
/// ```
/// use write_group::{GROUP_SIZE_BUCKETS, Stats};
///
/// assert_eq!(Stats::default().group_sizes.len(), GROUP_SIZE_BUCKETS);
/// // The last bucket counts every group larger than the one before it.
/// assert_eq!(Stats::bucket_range(GROUP_SIZE_BUCKETS - 1), (129, usize::MAX));
/// ```
pub const GROUP_SIZE_BUCKETS: usize = 9;

/// A snapshot of a write group's counters, from
/// [`WriteGroup::stats`](crate::WriteGroup::stats).
///
/// The counters are relaxed atomics bumped while writers run: a snapshot
/// taken during writes may mix counts from slightly different moments (a
/// group counted in `groups` but not yet in `members`). Taken while no write
/// is in flight it is exact.
///
/// # Examples
///
/// ```
/// use write_group::Stats;
///
/// assert_eq!(Stats::bucket_range(0), (1, 1));
/// assert_eq!(Stats::bucket_range(3), (5, 8));
/// assert_eq!(Stats::bucket_of(6), 3);
/// assert_eq!(Stats::default().mean_group_size(), 0.0);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Groups formed (each has one leader; unbatched entries not counted).
    pub groups: u64,
    /// Writes that went through a group, leaders included.
    pub members: u64,
    /// Wake-ups the leaders issued to launch parallel apply steps.
    pub leader_wakeups: u64,
    /// Wake-ups issued by tree callers on the leaders' behalf.
    pub caller_wakeups: u64,
    /// Waits that ended up sleeping on their futex.
    pub futex_sleeps: u64,
    /// Waits that ended while spinning.
    pub spin_successes: u64,
    /// Waits that ended while yielding.
    pub yield_successes: u64,
    /// Writes that found a group running, watched the queue empty (see
    /// [`Options::with_barge_spins`](crate::Options::with_barge_spins)) and led a
    /// group of their own instead of queueing.
    pub barges: u64,
    /// Leaders that waited for more writers before sealing their group
    /// ([`Commit::gather_window`](crate::Commit::gather_window)).
    pub gather_waits: u64,
    /// Of those waits, the ones that ran to the end of their window.
    pub gather_timeouts: u64,
    /// Histogram of group sizes: bucket `i` counts groups whose size lies in
    /// [`Stats::bucket_range(i)`](Stats::bucket_range): 1, 2, 3-4, 5-8, ...,
    /// 129 and more.
    pub group_sizes: [u64; GROUP_SIZE_BUCKETS],
}

impl Stats {
    /// The mean number of members per group (0 before the first group).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Stats;
    ///
    /// let stats = Stats { groups: 4, members: 10, ..Stats::default() };
    /// assert_eq!(stats.mean_group_size(), 2.5);
    /// assert_eq!(Stats::default().mean_group_size(), 0.0);
    /// ```
    #[must_use]
    pub fn mean_group_size(&self) -> f64 {
        if self.groups == 0 {
            0.0
        } else {
            self.members as f64 / self.groups as f64
        }
    }

    /// The bucket of [`group_sizes`](Stats::group_sizes) that counts groups
    /// of `size` members.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{GROUP_SIZE_BUCKETS, Stats};
    ///
    /// assert_eq!(Stats::bucket_of(1), 0);
    /// assert_eq!(Stats::bucket_of(2), 1);
    /// assert_eq!((Stats::bucket_of(3), Stats::bucket_of(4)), (2, 2));
    /// assert_eq!(Stats::bucket_of(1000), GROUP_SIZE_BUCKETS - 1);
    /// ```
    #[inline]
    #[must_use]
    pub fn bucket_of(size: usize) -> usize {
        let rounded_log2 = usize::BITS - size.max(1).saturating_sub(1).leading_zeros();
        (rounded_log2 as usize).min(GROUP_SIZE_BUCKETS - 1)
    }

    /// The smallest and largest group size bucket `i` counts (the last
    /// bucket's upper end is `usize::MAX`).
    ///
    /// # Panics
    ///
    /// If `i >= GROUP_SIZE_BUCKETS`.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{GROUP_SIZE_BUCKETS, Stats};
    ///
    /// assert_eq!(Stats::bucket_range(1), (2, 2));
    /// assert_eq!(Stats::bucket_range(4), (9, 16));
    /// assert!(std::panic::catch_unwind(|| Stats::bucket_range(GROUP_SIZE_BUCKETS)).is_err());
    /// ```
    #[must_use]
    pub fn bucket_range(i: usize) -> (usize, usize) {
        assert!(i < GROUP_SIZE_BUCKETS, "bucket {i} out of range");
        let low = if i == 0 { 1 } else { (1 << (i - 1)) + 1 };
        let high = if i == GROUP_SIZE_BUCKETS - 1 {
            usize::MAX
        } else {
            1 << i
        };
        (low, high)
    }
}

/// The live counters behind [`Stats`].
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Members of groups of two or more: a group of one is counted by the
    /// caller's groups-of-one counter alone (see `group`), so that a lone
    /// writer bumps one counter. `groups` and `members` are derived in
    /// `snapshot`.
    members_of_larger: AtomicU64,
    leader_wakeups: AtomicU64,
    caller_wakeups: AtomicU64,
    futex_sleeps: AtomicU64,
    spin_successes: AtomicU64,
    yield_successes: AtomicU64,
    barges: AtomicU64,
    gather_waits: AtomicU64,
    gather_timeouts: AtomicU64,
    /// Buckets 1 and up of `group_sizes`; bucket 0, groups of one, is the
    /// caller's (see `group`).
    larger_group_sizes: [AtomicU64; GROUP_SIZE_BUCKETS - 1],
}

/// Bumps a counter that several threads may bump at once. Relaxed:
/// counters order nothing; readers accept a snapshot that is not a single
/// instant.
#[inline]
fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Relaxed);
}

/// Bumps a counter that only the leader of the moment writes, with a plain
/// load and store: cheaper than a read-modify-write, and no count is lost
/// because leaders follow one another through Release/Acquire hand-offs.
/// Relaxed: as in `bump`.
#[inline]
fn bump_as_leader(counter: &AtomicU64, by: u64) {
    counter.store(counter.load(Relaxed).wrapping_add(by), Relaxed);
}

impl Counters {
    /// Counts a group; only its leader calls this. `groups_of_one` is kept
    /// by the caller, on a cache line a lone writer touches anyway.
    #[inline]
    pub(crate) fn group(&self, size: usize, groups_of_one: &AtomicU64) {
        if size <= 1 {
            bump_as_leader(groups_of_one, 1);
        } else {
            self.larger_group(size);
        }
    }

    #[cold]
    fn larger_group(&self, size: usize) {
        bump_as_leader(&self.members_of_larger, size as u64);
        // `size >= 2`, so its bucket is 1 or more.
        bump_as_leader(&self.larger_group_sizes[Stats::bucket_of(size) - 1], 1);
    }

    /// Counts a leader's launch wake-ups; only the leader calls this.
    #[inline]
    pub(crate) fn leader_wakeups(&self, n: usize) {
        if n > 0 {
            bump_as_leader(&self.leader_wakeups, n as u64);
        }
    }

    #[inline]
    pub(crate) fn caller_wakeups(&self, n: usize) {
        if n > 0 {
            bump(&self.caller_wakeups, n as u64);
        }
    }

    /// Counts how a leader's wait for more writers ended; only the leader
    /// calls this.
    pub(crate) fn gathered(&self, waited: Waited) {
        match waited {
            Waited::No => {}
            Waited::Gathered => bump_as_leader(&self.gather_waits, 1),
            Waited::TimedOut => {
                bump_as_leader(&self.gather_waits, 1);
                bump_as_leader(&self.gather_timeouts, 1);
            }
        }
    }

    #[inline]
    pub(crate) fn futex_sleep(&self) {
        bump(&self.futex_sleeps, 1);
    }

    #[inline]
    pub(crate) fn spin_success(&self) {
        bump(&self.spin_successes, 1);
    }

    #[inline]
    pub(crate) fn barge(&self) {
        bump(&self.barges, 1);
    }

    #[inline]
    #[cfg_attr(loom, allow(dead_code))] // no yield phase under loom
    pub(crate) fn yield_success(&self) {
        bump(&self.yield_successes, 1);
    }

    /// The counters, with `groups_of_one` (see `group`) as bucket 0.
    pub(crate) fn snapshot(&self, groups_of_one: &AtomicU64) -> Stats {
        // Relaxed: see `bump`.
        let read = |counter: &AtomicU64| counter.load(Relaxed);
        let group_sizes: [u64; GROUP_SIZE_BUCKETS] = std::array::from_fn(|i| {
            if i == 0 {
                read(groups_of_one)
            } else {
                read(&self.larger_group_sizes[i - 1])
            }
        });
        Stats {
            groups: group_sizes.iter().sum(),
            members: group_sizes[0] + read(&self.members_of_larger),
            leader_wakeups: read(&self.leader_wakeups),
            caller_wakeups: read(&self.caller_wakeups),
            futex_sleeps: read(&self.futex_sleeps),
            spin_successes: read(&self.spin_successes),
            yield_successes: read(&self.yield_successes),
            barges: read(&self.barges),
            gather_waits: read(&self.gather_waits),
            gather_timeouts: read(&self.gather_timeouts),
            group_sizes,
        }
    }

    pub(crate) fn reset(&self, groups_of_one: &AtomicU64) {
        // Relaxed: see `bump`.
        let zero = |counter: &AtomicU64| counter.store(0, Relaxed);
        zero(groups_of_one);
        zero(&self.members_of_larger);
        zero(&self.leader_wakeups);
        zero(&self.caller_wakeups);
        zero(&self.futex_sleeps);
        zero(&self.spin_successes);
        zero(&self.yield_successes);
        zero(&self.barges);
        zero(&self.gather_waits);
        zero(&self.gather_timeouts);
        self.larger_group_sizes.iter().for_each(zero);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_size_once() {
        for size in 1..=300usize {
            let (low, high) = Stats::bucket_range(Stats::bucket_of(size));
            assert!(low <= size && size <= high, "size {size} in {low}..={high}");
        }
        assert_eq!(Stats::bucket_of(0), 0);
        assert_eq!(Stats::bucket_of(usize::MAX), GROUP_SIZE_BUCKETS - 1);
    }

    #[test]
    fn counters_snapshot_and_reset() {
        let counters = Counters::default();
        let groups_of_one = AtomicU64::new(0);
        counters.group(3, &groups_of_one);
        counters.group(1, &groups_of_one);
        counters.leader_wakeups(2);
        let stats = counters.snapshot(&groups_of_one);
        assert_eq!(
            (stats.groups, stats.members, stats.leader_wakeups),
            (2, 4, 2)
        );
        assert_eq!(stats.group_sizes[0], 1);
        assert_eq!(stats.group_sizes[2], 1);
        assert_eq!(stats.mean_group_size(), 2.0);
        counters.reset(&groups_of_one);
        assert_eq!(counters.snapshot(&groups_of_one), Stats::default());
    }
}
