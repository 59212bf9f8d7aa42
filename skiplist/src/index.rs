//! The entry index of the prefixed layout: a packed, sorted copy of the key
//! prefixes of the nodes at one level, with their handles, that a search
//! binary-searches to start at that level beside its key instead of
//! walking down every level above it.
//!
//! A search from the top moves right about once per level, each move a
//! dependent cache miss on a node allocated in arrival order, on a page of
//! its own; a B+tree finds a key in a few reads of adjacent lines. The
//! index takes the levels above the indexed one off that chain: a search
//! reads a summary (one prefix in [`LINE`], small enough to stay cached),
//! one line of prefixes, one handle, and goes on from that node.
//!
//! Why an index goes on serving while inserts run: the list is insert-only,
//! so a node linked at a level stays linked there, and a node whose key is
//! before the searched key stays before it. A search may start at any
//! indexed node before its key, at the indexed level, whatever was inserted
//! since the index was built; those inserts only lengthen its walk along
//! that level. So the index is rebuilt each time the list has doubled
//! since the last build began. The indexed level holds about one node in
//! [`SPACING`], so a build reads that many fewer nodes than the list holds,
//! and the build is spread over inserts: an insert that looks (one in 2^8)
//! reads at most [`BUILD_STEP`] nodes, or copies eight times as many
//! entries into the arena, and leaves the rest to the next, so none stalls
//! for long. Inserts made meanwhile before the build's position are missed
//! by this index, which is only a place to start.
//!
//! Prefixes only order keys when they differ. Where indexed nodes share the
//! searched key's prefix, their keys decide, with a binary search of their
//! own: a comparator whose prefixes settle nothing (the default
//! `key_prefix`, 0 for every key) makes the index a binary search over the
//! nodes, no worse than walking down the levels.
//!
//! Every index lives in the list's arena, as the nodes do, because a search
//! may still be reading an older one; each is at most half the size of the
//! next, so together they take less than twice the last, about two bytes
//! per entry with branching 2. A build that the arena refuses (its memory
//! limit) leaves the previous index in place.

use crate::node::{Node, Stride};
use crate::sync::{AtomicPtr, AtomicUsize, Mutex, Ordering};
use crate::{Comparator, SkipList};
use std::alloc::Layout;
use std::ptr::NonNull;

/// Prefixes in one 64-byte line of the index, and entries per summary
/// entry: a search reads one line of prefixes after the summary.
const LINE: usize = 8;

/// The first index is built once the list holds this many entries: in a
/// smaller list the upper levels stay cached anyway. (Smaller in debug
/// builds, and tiny under loom, so that the small lists of tests, miri and
/// loom models build and use indexes; at three entries, a loom model of
/// three inserts builds one while its other threads run.)
const FIRST_BUILD: usize = if cfg!(loom) {
    3
} else if cfg!(debug_assertions) {
    64
} else {
    1 << 14
};

/// The indexed level holds about one node in this many (the first level
/// that does, for the list's branching factor).
const SPACING: usize = if cfg!(loom) { 2 } else { 16 };

/// An insert looks at the list's length (to see whether it doubled) and
/// takes a step of a build only when its node is tall enough that about
/// one insert in 2^CHECK_BITS is, whatever the branching factor. (Every
/// insert in debug builds and under loom.)
const CHECK_BITS: u32 = if cfg!(any(debug_assertions, loom)) {
    0
} else {
    8
};

/// Nodes of the indexed level an insert reads when it takes a step of a
/// build (two cache misses each), or eight times as many entries it copies
/// into the arena (a few fresh pages): tens of microseconds at most. (Small
/// in debug builds, so that tests resume builds across inserts; a whole
/// build in one step under loom, which would otherwise explore every
/// resumption, unless a model asks for steps with `loom_index_build_step`.)
const BUILD_STEP: usize = if cfg!(loom) {
    usize::MAX / 8
} else if cfg!(debug_assertions) {
    4
} else {
    256
};

#[cfg(loom)]
std::thread_local! {
    /// A loom model's `BUILD_STEP` (see [`loom_index_build_step`]): a std
    /// thread-local of the thread running the model, which every loom
    /// thread of the model runs on.
    static LOOM_BUILD_STEP: std::cell::Cell<usize> = const { std::cell::Cell::new(BUILD_STEP) };
}

/// Loom only: the entry index's builds in the models this thread runs from
/// now on read `nodes` nodes a step (copy eight times as many entries), so
/// that a model covers a build taken in steps by different inserters. By
/// default a build is one step under loom.
#[cfg(loom)]
pub fn loom_index_build_step(nodes: usize) {
    LOOM_BUILD_STEP.with(|step| step.set(nodes.max(1)));
}

/// `BUILD_STEP`, or a loom model's.
#[inline(always)]
fn build_step() -> usize {
    #[cfg(loom)]
    return LOOM_BUILD_STEP.with(std::cell::Cell::get);
    #[cfg(not(loom))]
    BUILD_STEP
}

/// An index, as built: see the module docs. Never written once published.
#[derive(Clone, Copy)]
struct EntryIndex {
    /// The level whose nodes it holds, above 0.
    level: usize,
    /// Every `LINE`th entry of `prefixes`.
    summary: NonNull<[u64]>,
    /// The key prefix of each node, ascending (with ties).
    prefixes: NonNull<[u64]>,
    /// The nodes, in key order.
    nodes: NonNull<[Node]>,
}

/// An index being built, a step at a time: the indexed level is read into
/// `read`, then copied into the arena, then published.
struct Builder {
    /// The list's length when the build began: the next begins at twice
    /// that.
    began_at: usize,
    level: usize,
    read: Entries,
    phase: Phase,
}

/// The entries read so far: each node of the indexed level and its prefix.
struct Entries {
    prefixes: Vec<u64>,
    nodes: Vec<Node>,
}

/// Where a build stands.
enum Phase {
    /// Reading the level; `at` is the last node read (`None`: the head).
    Read { at: Option<Node> },
    /// Copying into `to`, whose first `copied` entries are written (the
    /// summary's up to the line of the last entry written).
    Copy { to: EntryIndex, copied: usize },
}

// SAFETY: a `Builder` is only an index's entries under construction:
// handles and pointers into the list's arena, which outlives it, written
// by the one thread holding the builder's lock, and read by nobody before
// the index is published.
unsafe impl Send for Builder {}

/// A list's entry index, and when to build the next one.
pub(crate) struct IndexSlot {
    /// The newest index, in the arena; null until the first build.
    current: AtomicPtr<EntryIndex>,
    /// The length at which the next build begins; at most the length while
    /// one runs, so that inserts go on with it.
    next_build: AtomicUsize,
    /// The build under way, if any: held by the insert taking a step, so
    /// that no other does meanwhile. (A panic in the comparator's
    /// `key_prefix` during a step poisons it: builds stop, and searches
    /// keep the last index.)
    builder: Mutex<Option<Builder>>,
    /// The level an index holds: the first that holds about one node in
    /// `SPACING` for the list's branching factor.
    level: usize,
    /// The height from which an insert looks at the length: one node in
    /// about 2^CHECK_BITS is this tall. `usize::MAX` (none is) when the
    /// list builds no index (`SkipListOptions::with_entry_index`, or no
    /// prefixes). Computed once: inserts compare with it.
    check_height: usize,
}

impl IndexSlot {
    /// The slot of a list whose levels thin out by `2^bits_per_level`.
    pub(crate) fn new(enabled: bool, bits_per_level: u32) -> Self {
        Self {
            current: AtomicPtr::new(std::ptr::null_mut()),
            next_build: AtomicUsize::new(FIRST_BUILD),
            builder: Mutex::new(None),
            level: SPACING.trailing_zeros().div_ceil(bits_per_level) as usize,
            check_height: if enabled {
                1 + CHECK_BITS.div_ceil(bits_per_level) as usize
            } else {
                usize::MAX
            },
        }
    }
}

/// The entry index: using and building it.
impl<C: Comparator> SkipList<C> {
    /// Where a read-only search of the prefixed layout for `key`, whose
    /// prefix is `prefix`, starts when it stops at `bottom`: the node
    /// (`None`: the head) and level. An indexed node before the key at the
    /// indexed level when there is an index at or above `bottom`; the head
    /// at the top otherwise.
    #[inline(always)]
    pub(crate) fn search_start(
        &self,
        key: &[u8],
        prefix: u64,
        bottom: usize,
        stride: Stride,
    ) -> (Option<Node>, usize) {
        if stride.prefixed() {
            // Acquire: pairs with the Release store in `build_index_step`,
            // so the index's contents and the nodes it names are visible.
            let index = self.index.current.load(Ordering::Acquire);
            // SAFETY: a non-null pointer is an `EntryIndex` written in the
            // list's arena before it was published, never written again,
            // and freed with the arena when the list drops.
            if let Some(index) = unsafe { index.as_ref() }
                && index.level >= bottom
            {
                return (self.indexed_node_before(index, key, prefix), index.level);
            }
        }
        (None, self.current_max_height() - 1)
    }

    /// The last node of `index` before `key` (whose prefix is `prefix`),
    /// or `None`.
    #[inline(always)]
    fn indexed_node_before(&self, index: &EntryIndex, key: &[u8], prefix: u64) -> Option<Node> {
        // SAFETY: the slices lie in the list's arena, which outlives
        // `index` (see `search_start`), and were written before it was
        // published.
        let (summary, prefixes, nodes) = unsafe {
            (
                index.summary.as_ref(),
                index.prefixes.as_ref(),
                index.nodes.as_ref(),
            )
        };
        // summary[j] == prefixes[j * LINE]: the entries below `prefix` end
        // in the line after the last summary entry below it.
        let line = summary.partition_point(|&p| p < prefix);
        let from = line.saturating_sub(1) * LINE;
        let to = (line * LINE).min(prefixes.len());
        let mut before = from + prefixes[from..to].partition_point(|&p| p < prefix);
        if prefixes.get(before) == Some(&prefix) {
            // Nodes sharing the key's prefix: their keys decide.
            let ties = before + prefixes[before..].partition_point(|&p| p == prefix);
            before +=
                nodes[before..ties].partition_point(|&n| self.key_is_after_node(key, Some(n)));
        }
        before.checked_sub(1).map(|i| nodes[i])
    }

    /// After inserting a node `height` levels tall: now and then (after a
    /// tall node only), checks whether the list has doubled since the last
    /// index began, or a build is under way, and if so takes a step of it.
    #[inline(always)]
    pub(crate) fn maybe_build_index(&self, height: usize, stride: Stride) {
        // Relaxed: a threshold; a stale one moves a step by an insert or
        // two, and the builder's lock decides who takes it.
        if !stride.prefixed()
            || height < self.index.check_height
            || self.len() < self.index.next_build.load(Ordering::Relaxed)
        {
            return;
        }
        self.build_index_step(stride);
    }

    /// Takes one step of the build under way, beginning one if the list
    /// has doubled: reads up to `BUILD_STEP` more nodes of the indexed
    /// level, or copies up to `8 * BUILD_STEP` entries into the arena, or
    /// publishes the index. Does nothing while another insert takes a step.
    #[cold]
    #[inline(never)]
    fn build_index_step(&self, stride: Stride) {
        let Ok(mut builder) = self.index.builder.try_lock() else {
            return;
        };
        let build = match &mut *builder {
            Some(build) => build,
            None => {
                let (len, level) = (self.len(), self.index.level);
                // Relaxed: written under the builder's lock, which orders it.
                if len < self.index.next_build.load(Ordering::Relaxed)
                    || level >= self.current_max_height()
                {
                    return;
                }
                // Room for the level as it stands, and a quarter more for
                // what is inserted during the build: a step never waits for
                // a vector to grow and move.
                let room = len / SPACING + len / (4 * SPACING);
                builder.insert(Builder {
                    began_at: len,
                    level,
                    read: Entries {
                        prefixes: Vec::with_capacity(room),
                        nodes: Vec::with_capacity(room),
                    },
                    phase: Phase::Read { at: None },
                })
            }
        };
        let mut outcome = match &mut build.phase {
            Phase::Read { at } => self.read_index_step(build.level, &mut build.read, at, stride),
            Phase::Copy { to, copied } => copy_index_step(&build.read, to, copied),
        };
        if let StepOutcome::Copy(mut to) = outcome {
            // The first copy in the same step: a short level is then
            // published at once.
            let mut copied = 0;
            outcome = copy_index_step(&build.read, &mut to, &mut copied);
            if let StepOutcome::Again = outcome {
                build.phase = Phase::Copy { to, copied };
            }
        }
        match outcome {
            StepOutcome::Again | StepOutcome::Copy(_) => {}
            StepOutcome::Done(index) => {
                if let Some(index) = index
                    && let Ok(index) = self.arena.try_alloc(index)
                {
                    // Release: pairs with the Acquire in `search_start`.
                    self.index.current.store(index, Ordering::Release);
                }
                let began_at = build.began_at;
                *builder = None;
                // Relaxed: as above.
                self.index
                    .next_build
                    .store(began_at.saturating_mul(2), Ordering::Relaxed);
            }
        }
    }

    /// Reads up to `BUILD_STEP` nodes of the indexed level after `at`; at
    /// its end, allocates the index in the arena (`Done(None)` if there is
    /// nothing to index or the arena refuses).
    fn read_index_step(
        &self,
        level: usize,
        read: &mut Entries,
        at: &mut Option<Node>,
        stride: Stride,
    ) -> StepOutcome {
        let mut node = at.unwrap_or(self.head);
        for _ in 0..build_step() {
            // SAFETY: `node` is the head or a node reached at `level`, so it
            // belongs to this list and has that level.
            let Some(next) = (unsafe { node.next(level, stride) }) else {
                return match self.alloc_index(level, read.nodes.len()) {
                    Some(to) => StepOutcome::Copy(to),
                    None => StepOutcome::Done(None),
                };
            };
            // Not the prefix beside the link, which can be that of a larger
            // node the link held before (see `node`): the node's own.
            read.prefixes.push(self.cmp.key_prefix(self.key_of(next)));
            read.nodes.push(next);
            node = next;
        }
        *at = Some(node);
        StepOutcome::Again
    }

    /// How many nodes the newest index holds (0 before the first build).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn indexed_nodes(&self) -> usize {
        // Acquire: as in `search_start`.
        let index = self.index.current.load(Ordering::Acquire);
        // SAFETY: as in `search_start`.
        unsafe { index.as_ref() }.map_or(0, |index| index.nodes.len())
    }

    /// An index of `n` entries at `level` in the arena, not yet written;
    /// `None` for no entries or if the arena refuses the memory.
    fn alloc_index(&self, level: usize, n: usize) -> Option<EntryIndex> {
        if n == 0 {
            return None;
        }
        Some(EntryIndex {
            level,
            summary: self.alloc_in_arena(n.div_ceil(LINE))?,
            prefixes: self.alloc_in_arena(n)?,
            nodes: self.alloc_in_arena(n)?,
        })
    }

    /// Room for `len` values of `T` in a line-aligned allocation of the
    /// arena, not yet written, or `None` if the arena refuses it.
    fn alloc_in_arena<T>(&self, len: usize) -> Option<NonNull<[T]>> {
        let layout = Layout::array::<T>(len).ok()?.align_to(64).ok()?;
        let to = self.arena.try_alloc_layout(layout).ok()?.cast::<T>();
        Some(NonNull::slice_from_raw_parts(to, len))
    }
}

/// What a step of a build came to.
enum StepOutcome {
    /// More steps to take.
    Again,
    /// The level is read; copy it into this index.
    Copy(EntryIndex),
    /// The index to publish, if any.
    Done(Option<EntryIndex>),
}

/// Copies up to `8 * BUILD_STEP` more of the entries `read` into `to`,
/// `copied` of them written so far; `Done` with the index once all are.
fn copy_index_step(read: &Entries, to: &mut EntryIndex, copied: &mut usize) -> StepOutcome {
    let from = *copied;
    let end = read
        .nodes
        .len()
        .min(from.saturating_add(build_step().saturating_mul(8)));
    // SAFETY: `to`'s slices were allocated with room for every entry (and
    // one summary entry per `LINE` of them), are written only here, under
    // the builder's lock, and read by nobody before the index is published.
    unsafe {
        let (prefixes, nodes) = (to.prefixes.cast::<u64>(), to.nodes.cast::<Node>());
        std::ptr::copy_nonoverlapping(
            read.prefixes[from..end].as_ptr(),
            prefixes.as_ptr().add(from),
            end - from,
        );
        std::ptr::copy_nonoverlapping(
            read.nodes[from..end].as_ptr(),
            nodes.as_ptr().add(from),
            end - from,
        );
        let summary = to.summary.cast::<u64>();
        for line in from.div_ceil(LINE)..end.div_ceil(LINE) {
            summary.add(line).write(read.prefixes[line * LINE]);
        }
    }
    *copied = end;
    if end < read.nodes.len() {
        return StepOutcome::Again;
    }
    StepOutcome::Done(Some(*to))
}
