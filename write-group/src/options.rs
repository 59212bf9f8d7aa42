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
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::FanOut;
    ///
    /// assert_eq!(FanOut::Sqrt.stride(100), 10);
    /// assert_eq!(FanOut::Sqrt.stride(99), 9, "rounded down");
    /// assert_eq!(FanOut::Sqrt.stride(0), 1, "never below 1");
    /// ```
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

/// Options of a [`WriteGroup`](crate::WriteGroup), in builder form: start
/// from [`Options::new()`] (or [`Options::default()`], the same values,
/// RocksDB's) and change what you need with the `with_*` setters; each
/// setting has a getter of its own name.
///
/// # Examples
///
/// ```
/// use write_group::{FanOut, Options};
///
/// // Never spin or yield: waiters sleep at once (threads outnumber cores).
/// let sleepy = Options::new().with_spin_count(0).with_max_yield_usec(0);
/// // Tree wake-up from 8 members on, with a stride of 4.
/// let tree = Options::new()
///     .with_tree_threshold(8)
///     .with_fan_out(FanOut::Fixed(4));
/// assert_eq!(sleepy.max_group_bytes(), 1 << 20);
/// assert_eq!(tree.tree_threshold(), 8);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    pub(crate) spin_count: u32,
    pub(crate) barge_spins: u32,
    pub(crate) max_yield_usec: u32,
    pub(crate) slow_yield_usec: u32,
    pub(crate) adaptive_yield: bool,
    pub(crate) max_group_bytes: usize,
    pub(crate) max_group_members: usize,
    pub(crate) tree_threshold: usize,
    pub(crate) fan_out: FanOut,
}

impl Default for Options {
    fn default() -> Self {
        Self::new()
    }
}

impl Options {
    /// The defaults, RocksDB's values where RocksDB has the setting; each
    /// setter below gives its own.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{FanOut, Options};
    ///
    /// let options = Options::new();
    /// assert_eq!(options, Options::default());
    /// assert_eq!(options.spin_count(), 200);
    /// assert_eq!(options.fan_out(), FanOut::Sqrt);
    /// ```
    #[must_use]
    pub const fn new() -> Self {
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

    /// Busy-wait checks of a waiter's state before it yields (RocksDB: 200).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Options;
    ///
    /// // A `const` fn: options can be built at compile time.
    /// const NO_SPIN: Options = Options::new().with_spin_count(0);
    /// assert_eq!(NO_SPIN.spin_count(), 0);
    /// ```
    #[must_use]
    pub const fn with_spin_count(mut self, checks: u32) -> Self {
        self.spin_count = checks;
        self
    }

    /// See [`with_spin_count`](Self::with_spin_count).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Options;
    ///
    /// assert_eq!(Options::new().spin_count(), 200);
    /// assert_eq!(Options::new().with_spin_count(50).spin_count(), 50);
    /// ```
    #[must_use]
    pub const fn spin_count(&self) -> u32 {
        self.spin_count
    }

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
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Options;
    ///
    /// let queue_at_once = Options::new().with_barge_spins(0);
    /// assert_eq!(queue_at_once.barge_spins(), 0);
    /// assert_eq!(Options::new().barge_spins(), 256);
    /// ```
    #[must_use]
    pub const fn with_barge_spins(mut self, hints: u32) -> Self {
        self.barge_spins = hints;
        self
    }

    /// See [`with_barge_spins`](Self::with_barge_spins).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Options;
    ///
    /// assert_eq!(Options::new().barge_spins(), 256);
    /// assert_eq!(Options::new().with_barge_spins(1024).barge_spins(), 1024);
    /// ```
    #[must_use]
    pub const fn barge_spins(&self) -> u32 {
        self.barge_spins
    }

    /// How long a waiter may yield its time slice before it sleeps on its
    /// futex, in microseconds; 0 skips the yield phase (RocksDB: 100). Also
    /// how long a leader waiting for writers to gather
    /// ([`Commit::gather_window`](crate::Commit::gather_window)) yields
    /// before it parks for the rest of its window.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Options;
    ///
    /// // Skip the yield phase: waiters sleep once they have spun.
    /// let options = Options::new().with_max_yield_usec(0);
    /// assert_eq!(options.max_yield_usec(), 0);
    /// ```
    #[must_use]
    pub const fn with_max_yield_usec(mut self, usec: u32) -> Self {
        self.max_yield_usec = usec;
        self
    }

    /// See [`with_max_yield_usec`](Self::with_max_yield_usec).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Options;
    ///
    /// assert_eq!(Options::new().max_yield_usec(), 100);
    /// assert_eq!(Options::new().with_max_yield_usec(20).max_yield_usec(), 20);
    /// ```
    #[must_use]
    pub const fn max_yield_usec(&self) -> u32 {
        self.max_yield_usec
    }

    /// A yield that takes at least this long (microseconds) is *slow*: another
    /// thread ran. Three slow yields end the yield phase (RocksDB: 3).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Options;
    ///
    /// let options = Options::new().with_slow_yield_usec(10);
    /// assert_eq!(options.slow_yield_usec(), 10);
    /// ```
    #[must_use]
    pub const fn with_slow_yield_usec(mut self, usec: u32) -> Self {
        self.slow_yield_usec = usec;
        self
    }

    /// See [`with_slow_yield_usec`](Self::with_slow_yield_usec).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Options;
    ///
    /// assert_eq!(Options::new().slow_yield_usec(), 3);
    /// assert_eq!(Options::new().with_slow_yield_usec(5).slow_yield_usec(), 5);
    /// ```
    #[must_use]
    pub const fn slow_yield_usec(&self) -> u32 {
        self.slow_yield_usec
    }

    /// Whether the yield phase is adaptive: tried only while a shared credit,
    /// fed by past outcomes, says it tends to succeed (plus one wait in 256 to
    /// keep the credit fresh). A yield phase counts as a success only if its
    /// goal came without a slow yield ([`with_slow_yield_usec`](Self::with_slow_yield_usec)):
    /// a slow yield means other threads wanted the core, and there a
    /// yielding waiter, still runnable, takes its turn among them after its
    /// role has come, where a sleeping one is woken by the role itself; so
    /// with more writers than cores waiters soon skip the yield phase and
    /// sleep after spinning. Off: every wait yields up to
    /// [`max_yield_usec`](Self::with_max_yield_usec). RocksDB: on (where a
    /// phase whose goal comes after a slow yield counts as a success).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Options;
    ///
    /// // Every wait yields for up to `max_yield_usec` before it sleeps.
    /// let options = Options::new().with_adaptive_yield(false);
    /// assert!(!options.adaptive_yield());
    /// ```
    #[must_use]
    pub const fn with_adaptive_yield(mut self, adaptive: bool) -> Self {
        self.adaptive_yield = adaptive;
        self
    }

    /// See [`with_adaptive_yield`](Self::with_adaptive_yield).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Options;
    ///
    /// assert!(Options::new().adaptive_yield());
    /// assert!(!Options::new().with_adaptive_yield(false).adaptive_yield());
    /// ```
    #[must_use]
    pub const fn adaptive_yield(&self) -> bool {
        self.adaptive_yield
    }

    /// The most bytes a group gathers, as counted by
    /// [`Commit::size`](crate::Commit::size) (default 1 MiB). When the
    /// leader's own write is at most an eighth of it, the cap becomes the
    /// leader's size plus an eighth (128 KiB by default), so a small write is
    /// not held back by a large group.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Options;
    ///
    /// let options = Options::new().with_max_group_bytes(4 << 20);
    /// assert_eq!(options.max_group_bytes(), 4 << 20);
    /// ```
    #[must_use]
    pub const fn with_max_group_bytes(mut self, bytes: usize) -> Self {
        self.max_group_bytes = bytes;
        self
    }

    /// See [`with_max_group_bytes`](Self::with_max_group_bytes).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Options;
    ///
    /// assert_eq!(Options::new().max_group_bytes(), 1 << 20);
    /// assert_eq!(Options::new().with_max_group_bytes(64 << 10).max_group_bytes(), 64 << 10);
    /// ```
    #[must_use]
    pub const fn max_group_bytes(&self) -> usize {
        self.max_group_bytes
    }

    /// The most members of a group, leader included (default: no limit;
    /// values below 1 act as 1).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Options;
    ///
    /// // At most 32 writes share a group step.
    /// let options = Options::new().with_max_group_members(32);
    /// assert_eq!(options.max_group_members(), 32);
    /// ```
    #[must_use]
    pub const fn with_max_group_members(mut self, members: usize) -> Self {
        self.max_group_members = members;
        self
    }

    /// See [`with_max_group_members`](Self::with_max_group_members).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Options;
    ///
    /// assert_eq!(Options::new().max_group_members(), usize::MAX, "no limit");
    /// assert_eq!(Options::new().with_max_group_members(4).max_group_members(), 4);
    /// ```
    #[must_use]
    pub const fn max_group_members(&self) -> usize {
        self.max_group_members
    }

    /// Parallel groups of at least this many members are woken through the
    /// tree; smaller ones by the leader alone (RocksDB: 20). `usize::MAX`
    /// turns the tree off.
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Options;
    ///
    /// // The leader alone wakes every member of a parallel group.
    /// let no_tree = Options::new().with_tree_threshold(usize::MAX);
    /// assert_eq!(no_tree.tree_threshold(), usize::MAX);
    /// ```
    #[must_use]
    pub const fn with_tree_threshold(mut self, members: usize) -> Self {
        self.tree_threshold = members;
        self
    }

    /// See [`with_tree_threshold`](Self::with_tree_threshold).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::Options;
    ///
    /// assert_eq!(Options::new().tree_threshold(), 20);
    /// assert_eq!(Options::new().with_tree_threshold(8).tree_threshold(), 8);
    /// ```
    #[must_use]
    pub const fn tree_threshold(&self) -> usize {
        self.tree_threshold
    }

    /// The tree's stride (default [`FanOut::Sqrt`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{FanOut, Options};
    ///
    /// let options = Options::new().with_fan_out(FanOut::Fixed(4));
    /// assert_eq!(options.fan_out(), FanOut::Fixed(4));
    /// assert_eq!(options.fan_out().stride(64), 4);
    /// ```
    #[must_use]
    pub const fn with_fan_out(mut self, fan_out: FanOut) -> Self {
        self.fan_out = fan_out;
        self
    }

    /// See [`with_fan_out`](Self::with_fan_out).
    ///
    /// # Examples
    ///
    /// ```
    /// use write_group::{FanOut, Options};
    ///
    /// assert_eq!(Options::new().fan_out(), FanOut::Sqrt);
    /// assert_eq!(Options::new().fan_out().stride(64), 8);
    /// ```
    #[must_use]
    pub const fn fan_out(&self) -> FanOut {
        self.fan_out
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
        let off = Options::new().with_tree_threshold(usize::MAX);
        assert_eq!(off.launch_stride(1000), 1);
    }
}
