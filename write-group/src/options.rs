//! Tuning knobs of a [`WriteGroup`](crate::WriteGroup).

/// How many members start a parallel apply step, once a group is large
/// enough for the tree wake-up.
///
/// The leader wakes `stride - 1` *callers* and then every `stride`-th member
/// after itself; each caller wakes every `stride`-th member after itself. A
/// member at position `p >= stride` is woken by whoever sits at
/// `p % stride`. The leader therefore issues about `stride + n / stride`
/// wake-ups, which `stride = sqrt(n)` minimises (RocksDB PR 12545).
///
/// # Examples
///
/// ```
/// use write_group::FanOut;
///
/// assert_eq!(FanOut::Sqrt.stride(32), 5);
/// assert_eq!(FanOut::Fixed(4).stride(32), 4);
/// assert_eq!(FanOut::Fixed(0).stride(32), 1, "a stride is at least 1");
/// assert_eq!(FanOut::Fixed(64).stride(32), 32, "and at most the group size");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum FanOut {
    /// `floor(sqrt(n))` wakers for a group of `n`, RocksDB's choice.
    #[default]
    Sqrt,
    /// A fixed stride, clamped to `1..=n`.
    Fixed(usize),
}

impl FanOut {
    /// The stride (number of wakers, leader included) for a group of `n`.
    #[inline]
    #[must_use]
    pub fn stride(self, n: usize) -> usize {
        let stride = match self {
            FanOut::Sqrt => n.isqrt(),
            FanOut::Fixed(k) => k,
        };
        stride.clamp(1, n.max(1))
    }
}

/// Options of a [`WriteGroup`](crate::WriteGroup). Build with struct update
/// syntax from [`Options::default()`], whose values are RocksDB's.
///
/// # Examples
///
/// ```
/// use write_group::{FanOut, Options};
///
/// // Never spin or yield: waiters sleep at once (threads outnumber cores).
/// let sleepy = Options { spin_count: 0, max_yield_usec: 0, ..Options::default() };
/// // Tree wake-up from 8 members on, with a stride of 4.
/// let tree = Options { tree_threshold: 8, fan_out: FanOut::Fixed(4), ..Options::default() };
/// assert_eq!(sleepy.max_group_bytes, 1 << 20);
/// assert_eq!(tree.tree_threshold, 8);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Busy-wait checks of a waiter's state before it yields (RocksDB: 200).
    pub spin_count: u32,
    /// Busy-wait hints (`spin_loop`) a writer without a
    /// [gather window](crate::Commit::gather_window) may spend, when it
    /// finds a group running, watching for the queue to empty so that it
    /// leads a group of its own instead of queueing behind that one
    /// ("barging", as a mutex lets a running thread do). Its first look
    /// comes after 1 to 64 hints, a pace the group adapts to what first
    /// looks find (longer while the queue is still busy, shorter once it has
    /// emptied); each later look waits twice as long as the one before, at
    /// most 256 hints, and the writer queues once the budget is spent.
    /// `0`: always queue at once, as RocksDB does. Default 256: long enough
    /// to outlast a group that only touches memory, far shorter than an
    /// `fdatasync` (the measurements behind it are in
    /// `benches/results/write-group/2026-12-03.md`).
    pub barge_spins: u32,
    /// How long a waiter may yield its time slice before it sleeps on its
    /// futex, in microseconds; 0 skips the yield phase (RocksDB: 100). Also
    /// how long a leader waiting for writers to gather
    /// ([`Commit::gather_window`](crate::Commit::gather_window)) yields
    /// before it parks for the rest of its window.
    pub max_yield_usec: u32,
    /// A yield that takes at least this long (microseconds) is *slow*: another
    /// thread ran. Three slow yields end the yield phase (RocksDB: 3).
    pub slow_yield_usec: u32,
    /// Whether the yield phase is adaptive: tried only while a shared credit,
    /// fed by past outcomes, says it tends to succeed (plus one wait in 256 to
    /// keep the credit fresh). Off: every wait yields up to
    /// `max_yield_usec`. RocksDB: on.
    pub adaptive_yield: bool,
    /// The most bytes a group gathers, as counted by
    /// [`Commit::size`](crate::Commit::size) (default 1 MiB). When the
    /// leader's own write is at most an eighth of it, the cap becomes the
    /// leader's size plus an eighth (128 KiB by default), so a small write is
    /// not held back by a large group.
    pub max_group_bytes: usize,
    /// The most members of a group, leader included (default: no limit;
    /// values below 1 act as 1).
    pub max_group_members: usize,
    /// Parallel groups of at least this many members are woken through the
    /// tree; smaller ones by the leader alone (RocksDB: 20). `usize::MAX`
    /// turns the tree off.
    pub tree_threshold: usize,
    /// The tree's stride.
    pub fan_out: FanOut,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            spin_count: 200,
            barge_spins: 256,
            max_yield_usec: 100,
            slow_yield_usec: 3,
            adaptive_yield: true,
            max_group_bytes: 1 << 20,
            max_group_members: usize::MAX,
            tree_threshold: 20,
            fan_out: FanOut::Sqrt,
        }
    }
}

impl Options {
    /// The byte cap of a group led by a write of `leader_size` bytes.
    #[inline]
    pub(crate) fn group_byte_cap(&self, leader_size: usize) -> usize {
        let eighth = self.max_group_bytes / 8;
        if leader_size <= eighth {
            leader_size.saturating_add(eighth)
        } else {
            self.max_group_bytes
        }
    }

    /// The stride used to wake a parallel group of `n`: 1 (the leader wakes
    /// everyone) below the tree threshold.
    #[inline]
    pub(crate) fn launch_stride(&self, n: usize) -> usize {
        if n >= self.tree_threshold {
            self.fan_out.stride(n)
        } else {
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_leader_caps_the_group_at_its_size_plus_an_eighth() {
        let options = Options::default();
        assert_eq!(options.group_byte_cap(100), 100 + (128 << 10));
        assert_eq!(options.group_byte_cap(128 << 10), 256 << 10);
        assert_eq!(options.group_byte_cap(200 << 10), 1 << 20);
    }

    #[test]
    fn stride_is_one_below_the_threshold_and_sqrt_above() {
        let options = Options::default();
        assert_eq!(options.launch_stride(19), 1);
        assert_eq!(options.launch_stride(20), 4);
        assert_eq!(options.launch_stride(40), 6);
        let off = Options {
            tree_threshold: usize::MAX,
            ..Options::default()
        };
        assert_eq!(off.launch_stride(1000), 1);
    }
}
