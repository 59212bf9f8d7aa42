//! Memtables: the two representations behind one trait.
//!
//! Both store one entry per write, `varint(internal key length) ++ internal
//! key ++ value` (see [`crate::key`]), ordered by [`EntryComparator`]. The
//! skiplist keeps entries ordered as they arrive and serves reads at any
//! time; the vector appends unordered and sorts once when read after being
//! frozen, which suits bulk loads.

use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Mutex};

use arena::BlockPool;

use crate::batch::WriteBatch;
use crate::iter::InternalIterator;
use crate::key::{
    EntryComparator, ValueType, decode_entry, encode_entry, entry_len, parse_internal_key,
    put_varint,
};
use crate::options::{MemtableKind, Options, UserComparator};
use crate::range_del::MemRangeDels;

/// What a memtable knows about a key as of a sequence.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// A value, and the sequence it was written at.
    Found(Vec<u8>, u64),
    Deleted,
    Missing,
}

/// A memtable representation.
pub(crate) trait MemRep: Send + Sync {
    /// Inserts a batch whose first operation has sequence `first_seq`.
    /// `concurrent` says other threads may insert at the same time.
    fn insert_batch(&self, first_seq: u64, batch: &WriteBatch, concurrent: bool);
    /// A sorted view of the entries.
    fn iter(self: Arc<Self>) -> Box<dyn InternalIterator>;
    /// Bytes taken, measured from the arena.
    fn memory_usage(&self) -> usize;
    /// Entries inserted.
    fn len(&self) -> usize;
    /// Called once when the memtable stops taking writes.
    fn mark_read_only(&self);
}

/// A memtable with the engine's bookkeeping around its representation.
pub(crate) struct Memtable {
    pub(crate) rep: Arc<dyn MemRep>,
    /// The database's order of user keys.
    pub(crate) ucmp: UserComparator,
    /// Number of the log file holding this memtable's writes.
    pub(crate) log_number: u64,
    /// Writers that were given this memtable by an `unordered_write` group
    /// and have not finished inserting; a flush waits for zero.
    pub(crate) pending_inserts: AtomicUsize,
    /// Whether any write reached it without the log (lost on a crash
    /// unless flushed).
    pub(crate) has_unlogged: AtomicBool,
    /// The range tombstones of `delete_range`, kept beside the entries.
    pub(crate) range_dels: MemRangeDels,
}

impl std::fmt::Debug for Memtable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memtable")
            .field("log_number", &self.log_number)
            .field("entries", &self.rep.len())
            .field("bytes", &self.rep.memory_usage())
            .finish()
    }
}

/// The arena of a memtable of `write_buffer_size` bytes: blocks of an
/// eighth of the buffer (RocksDB's rule) between 64 KiB and 4 MiB, on
/// transparent huge pages once they reach 2 MiB. A random insert into a
/// large memtable is bound by dependent cache and TLB misses, which huge
/// pages cut by about 40% on this machine (see the skiplist's README).
/// With `pool`, the blocks of memtables dropped before are reused.
fn memtable_arena(write_buffer_size: usize, pool: Option<&BlockPool>) -> arena::ConcurrentArena {
    let mut options = memtable_arena_options(write_buffer_size);
    if let Some(pool) = pool {
        options = options.with_block_pool(pool);
    }
    options.build_concurrent().unwrap_or_default()
}

/// The options of [`memtable_arena`], without the pool.
pub(crate) fn memtable_arena_options(write_buffer_size: usize) -> arena::ArenaOptions {
    arena::ArenaOptions::new()
        .with_block_size(memtable_block_size(write_buffer_size))
        .with_huge_pages(arena::HugePages::Transparent)
}

fn memtable_block_size(write_buffer_size: usize) -> usize {
    (write_buffer_size / 8).clamp(64 << 10, 4 << 20)
}

/// How much of the pool the flush thread keeps faulted in ahead of the
/// memtables while it has nothing to flush (see `Shared::warm_pool`): a
/// quarter of the write buffer (four 4 MiB blocks of a 64 MiB one), at
/// least a block and at most four. Writers ask again once half of it is
/// taken, so a few blocks ahead suffice; more only faults in, on a core
/// the writers may need, pages that no write reaches for a while (with a
/// 1 GiB buffer, a quarter made 2 threads 0.92x as fast on 2 cores).
pub(crate) fn pool_warm_target(write_buffer_size: usize) -> usize {
    let block = memtable_block_size(write_buffer_size);
    (write_buffer_size / 4).clamp(block, 4 * block)
}

/// The pool a database's memtables share: it keeps the blocks of one full
/// memtable, so that a memtable fills the pages of one flushed before it
/// instead of faulting fresh pages in (each fault also zeroes the page).
/// A full memtable's arena holds a little more than the write buffer (the
/// block it was filling, its shards' unused slices): a quarter more.
pub(crate) fn memtable_block_pool(write_buffer_size: usize) -> BlockPool {
    BlockPool::new(write_buffer_size + write_buffer_size / 4)
}

impl Memtable {
    /// An empty memtable of `opts`' kind and size, ordered by its
    /// comparator, for the log numbered `log_number`.
    pub(crate) fn new(opts: &Options, log_number: u64) -> Memtable {
        Self::new_in(opts, log_number, None)
    }

    /// [`new`](Self::new), with the arena drawing on `pool`'s blocks and
    /// leaving its own there when the memtable drops.
    pub(crate) fn new_in(opts: &Options, log_number: u64, pool: Option<&BlockPool>) -> Memtable {
        let arena = memtable_arena(opts.write_buffer_size, pool);
        let ucmp = opts.comparator.clone();
        let order = EntryComparator::new(ucmp.clone());
        let rep: Arc<dyn MemRep> = match opts.memtable_kind {
            MemtableKind::SkipList => Arc::new(SkipListRep::new(order, arena)),
            MemtableKind::Vector => Arc::new(VectorRep::new(order, arena)),
        };
        Memtable {
            rep,
            ucmp,
            log_number,
            pending_inserts: AtomicUsize::new(0),
            has_unlogged: AtomicBool::new(false),
            range_dels: MemRangeDels::default(),
        }
    }

    /// Inserts a batch whose first operation has sequence `first_seq`:
    /// its entries into the representation, its range deletions beside.
    #[inline]
    pub(crate) fn insert_batch(&self, first_seq: u64, batch: &WriteBatch, concurrent: bool) {
        self.rep.insert_batch(first_seq, batch, concurrent);
        if batch.has_range_deletion() {
            for (i, op) in batch.iter().enumerate() {
                if let crate::batch::BatchOp::DeleteRange(from, to) = op {
                    self.range_dels.add(from, to, first_seq + i as u64);
                }
            }
        }
    }

    /// The memtable's range tombstones, for the table a flush writes.
    pub(crate) fn tombstone_output(&self) -> Option<crate::range_del::TombstoneOutput> {
        self.range_dels
            .fragments()
            .and_then(crate::range_del::TombstoneOutput::new)
    }

    /// Bytes taken: the representation's arena and the range tombstones.
    #[inline]
    pub(crate) fn memory_usage(&self) -> usize {
        self.rep.memory_usage() + self.range_dels.memory_usage()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.rep.len() == 0 && self.range_dels.is_empty()
    }

    /// The newest version of `user_key` with sequence `<= seq`.
    pub(crate) fn get(&self, user_key: &[u8], seq: u64) -> Lookup {
        let mut it = self.rep.clone().iter();
        let mut target = Vec::with_capacity(user_key.len() + 8);
        crate::key::append_internal_key(&mut target, user_key, seq, ValueType::FOR_SEEK);
        it.seek(&target);
        if !it.valid() {
            return Lookup::Missing;
        }
        match parse_internal_key(it.key()) {
            Some(k) if k.user_key == user_key => match k.value_type {
                ValueType::Value => Lookup::Found(it.value().to_vec(), k.sequence),
                ValueType::Deletion => Lookup::Deleted,
            },
            _ => Lookup::Missing,
        }
    }
}

/// Writes `internal key` as a memtable entry with an empty value: the seek
/// target a memtable cursor understands.
fn seek_entry(buf: &mut Vec<u8>, ikey: &[u8]) {
    buf.clear();
    put_varint(buf, ikey.len() as u64);
    buf.extend_from_slice(ikey);
}

/// Encodes the operations of a batch as entries, one at a time, into the
/// closure's buffer; the closure also gets the entry's user key.
#[inline]
fn for_each_entry(
    first_seq: u64,
    batch: &WriteBatch,
    mut f: impl FnMut(&[u8], usize, &dyn Fn(&mut [u8])),
) {
    for (i, op) in batch.iter().enumerate() {
        // A range deletion takes its sequence number but makes no entry.
        let Some((t, value)) = op.value_type_and_value() else {
            continue;
        };
        let key = op.key();
        let seq = first_seq + i as u64;
        f(
            key,
            entry_len(key.len(), value.len()),
            &|buf: &mut [u8]| encode_entry(buf, key, seq, t, value),
        );
    }
}

// ---- skiplist -------------------------------------------------------------

/// A thread's insert hint, used once its keys have been ascending for a
/// while. RocksDB gives a memtable's one sequential splice to inserts made
/// one writer at a time; here writers insert side by side, so each thread
/// keeps a splice of its own. A splice saves a sequential insert its whole
/// search (callgrind, fillseq of 200 k keys on one thread: 848 M
/// instructions without, 507 M with), but costs a random one a climb up
/// the stale brackets (fillrandom: 1,015 M without, 1,196 M with), so it
/// is used only after `ASCENDING_RUN` ascending keys in a row, which
/// random keys give one time in 24.
struct ThreadHint {
    splice: inline_skiplist::Splice,
    /// The user key of this thread's last insert.
    last: Vec<u8>,
    /// How many inserts in a row came after the one before.
    ascending: u32,
}

/// See [`ThreadHint`].
const ASCENDING_RUN: u32 = 4;

impl ThreadHint {
    /// The hint for inserting `key`, if keys have been ascending.
    #[inline]
    fn for_key(
        &mut self,
        key: &[u8],
        ucmp: &UserComparator,
    ) -> Option<&mut inline_skiplist::Splice> {
        self.ascending = if ucmp.lt(&self.last, key) {
            self.ascending.saturating_add(1)
        } else {
            0
        };
        self.last.clear();
        self.last.extend_from_slice(key);
        (self.ascending >= ASCENDING_RUN).then_some(&mut self.splice)
    }
}

std::thread_local! {
    static THREAD_HINT: std::cell::RefCell<ThreadHint> = const {
        std::cell::RefCell::new(ThreadHint {
            splice: inline_skiplist::Splice::new(),
            last: Vec::new(),
            ascending: 0,
        })
    };
}

struct SkipListRep {
    list: Arc<inline_skiplist::SkipList<EntryComparator>>,
    /// The hint of inserts made one at a time (RocksDB's sequential splice):
    /// where the last serial insert landed, so that ascending keys insert
    /// in O(1). Only serial inserts take it, with `try_lock`: it is never
    /// waited for.
    serial_hint: Mutex<inline_skiplist::Splice>,
}

impl SkipListRep {
    fn new(order: EntryComparator, arena: arena::ConcurrentArena) -> Self {
        // Branching 2 rather than RocksDB's 4: a memtable search is a chain
        // of cache and TLB misses, and with two links per node it walks
        // fewer cold nodes per level. In five paired runs against branching
        // 4 (2026-12-03), readrandom ran 1.20x (1.01x-1.29x) and fills
        // moved within their noise. 20 levels suit memtables up to about
        // a million entries. Key prefixes beside the links (the first 8
        // bytes of the user key, see `EntryComparator::key_prefix`) settle
        // most steps of a search without loading the next node: callgrind,
        // 200 k random puts then 200 k gets on one thread, 1,901 M
        // instructions and 13.8 M L1 misses without, 1,313 M and 8.0 M
        // with, for 8 more bytes per link above level 0.
        SkipListRep {
            list: Arc::new(inline_skiplist::SkipList::with_options(
                order,
                arena,
                inline_skiplist::SkipListOptions::new()
                    .with_branching(2)
                    .with_max_height(20)
                    .with_key_prefixes(true),
            )),
            serial_hint: Mutex::new(inline_skiplist::Splice::new()),
        }
    }
}

impl MemRep for SkipListRep {
    fn insert_batch(&self, first_seq: u64, batch: &WriteBatch, concurrent: bool) {
        if concurrent {
            // Concurrent inserts would fight over one hint and spoil it for
            // each other: each thread has its own (see `ThreadHint`).
            THREAD_HINT.with(|hint| {
                // An insert from inside an insert on this thread (a
                // comparator that writes to another database) goes without.
                let mut hint = hint.try_borrow_mut().ok();
                for_each_entry(first_seq, batch, |key, len, fill| {
                    let ucmp = self.list.comparator().user();
                    let splice = hint.as_mut().and_then(|h| h.for_key(key, ucmp));
                    let inserted = self.list.insert_with(len, splice, fill);
                    debug_assert!(inserted, "duplicate internal key");
                });
            });
            return;
        }
        let mut hint = self.serial_hint.try_lock().ok();
        for_each_entry(first_seq, batch, |_, len, fill| {
            let inserted = self.list.insert_with(len, hint.as_deref_mut(), fill);
            // The engine never inserts one internal key twice: sequences are unique.
            debug_assert!(inserted, "duplicate internal key");
        });
    }

    fn iter(self: Arc<Self>) -> Box<dyn InternalIterator> {
        Box::new(EntryIter::new(self.list.cursor_arc()))
    }

    fn memory_usage(&self) -> usize {
        self.list.memory_usage()
    }

    fn len(&self) -> usize {
        self.list.len()
    }

    fn mark_read_only(&self) {}
}

// ---- vector ---------------------------------------------------------------

struct VectorRep {
    mem: Arc<vecmem::VecMem<EntryComparator>>,
}

impl VectorRep {
    fn new(order: EntryComparator, arena: arena::ConcurrentArena) -> Self {
        VectorRep {
            mem: Arc::new(vecmem::VecMem::with_arena(order, arena)),
        }
    }
}

impl MemRep for VectorRep {
    fn insert_batch(&self, first_seq: u64, batch: &WriteBatch, _concurrent: bool) {
        // One writer per batch: the shared vector's lock is taken once, when
        // the writer finishes, and the entries become visible together.
        let mut writer = self.mem.writer();
        for_each_entry(first_seq, batch, |_, len, fill| {
            writer.insert_with(len, fill)
        });
        writer.finish();
    }

    fn iter(self: Arc<Self>) -> Box<dyn InternalIterator> {
        Box::new(EntryIter::new(self.mem.cursor_arc()))
    }

    fn memory_usage(&self) -> usize {
        self.mem.memory_usage()
    }

    fn len(&self) -> usize {
        self.mem.len()
    }

    fn mark_read_only(&self) {
        self.mem.mark_read_only()
    }
}

/// The cursor calls both memtables' owning cursors share.
trait EntryCursor: Send {
    fn valid(&self) -> bool;
    fn seek_to_first(&mut self);
    fn seek_to_last(&mut self);
    fn seek(&mut self, target: &[u8]);
    fn seek_for_prev(&mut self, target: &[u8]);
    fn next(&mut self);
    fn prev(&mut self);
    fn entry(&self) -> &[u8];
}

macro_rules! entry_cursor {
    ($cursor:ty) => {
        impl EntryCursor for $cursor {
            fn valid(&self) -> bool {
                <$cursor>::valid(self)
            }
            fn seek_to_first(&mut self) {
                <$cursor>::seek_to_first(self)
            }
            fn seek_to_last(&mut self) {
                <$cursor>::seek_to_last(self)
            }
            fn seek(&mut self, target: &[u8]) {
                <$cursor>::seek(self, target)
            }
            fn seek_for_prev(&mut self, target: &[u8]) {
                <$cursor>::seek_for_prev(self, target)
            }
            fn next(&mut self) {
                <$cursor>::next(self)
            }
            fn prev(&mut self) {
                <$cursor>::prev(self)
            }
            fn entry(&self) -> &[u8] {
                <$cursor>::key(self)
            }
        }
    };
}

entry_cursor!(inline_skiplist::ArcCursor<EntryComparator>);
entry_cursor!(vecmem::ArcCursor<EntryComparator>);

/// A memtable cursor seen as an [`InternalIterator`]: entries split into
/// internal key and value, seek targets wrapped as entries.
struct EntryIter<Cu> {
    cursor: Cu,
    target: Vec<u8>,
}

impl<Cu: EntryCursor> EntryIter<Cu> {
    fn new(cursor: Cu) -> Self {
        EntryIter {
            cursor,
            target: Vec::new(),
        }
    }
}

impl<Cu: EntryCursor> InternalIterator for EntryIter<Cu> {
    fn valid(&self) -> bool {
        self.cursor.valid()
    }
    fn seek_to_first(&mut self) {
        self.cursor.seek_to_first()
    }
    fn seek_to_last(&mut self) {
        self.cursor.seek_to_last()
    }
    fn seek(&mut self, target: &[u8]) {
        seek_entry(&mut self.target, target);
        self.cursor.seek(&self.target)
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        seek_entry(&mut self.target, target);
        self.cursor.seek_for_prev(&self.target)
    }
    fn next(&mut self) {
        self.cursor.next()
    }
    fn prev(&mut self) {
        self.cursor.prev()
    }
    fn key(&self) -> &[u8] {
        decode_entry(self.cursor.entry()).0
    }
    fn value(&self) -> &[u8] {
        decode_entry(self.cursor.entry()).1
    }
    fn status(&self) -> crate::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_hint_is_used_only_on_an_ascending_run() {
        let ucmp = UserComparator::default();
        let mut hint = ThreadHint {
            splice: inline_skiplist::Splice::new(),
            last: Vec::new(),
            ascending: 0,
        };
        let used: Vec<bool> = [b"b", b"c", b"d", b"e", b"f", b"a", b"g", b"h"]
            .iter()
            .map(|k| hint.for_key(*k, &ucmp).is_some())
            .collect();
        // "b" follows the empty key: the run starts there; "a" breaks it.
        assert_eq!(used, [false, false, false, true, true, false, false, false]);
    }

    fn check_kind(kind: MemtableKind) {
        let mut opts = Options::default();
        opts.set_memtable_kind(kind).set_write_buffer_size(1 << 20);
        let m = Memtable::new(&opts, 1);
        let mut b = WriteBatch::new();
        b.put(b"a", b"1");
        b.put(b"b", b"2");
        m.rep.insert_batch(10, &b, false);
        let mut b = WriteBatch::new();
        b.delete(b"a");
        m.rep.insert_batch(12, &b, true);
        assert_eq!(m.get(b"a", 11), Lookup::Found(b"1".to_vec(), 10));
        assert_eq!(m.get(b"a", 12), Lookup::Deleted);
        assert_eq!(m.get(b"a", 9), Lookup::Missing);
        assert_eq!(m.get(b"b", 100), Lookup::Found(b"2".to_vec(), 11));
        assert_eq!(m.get(b"c", 100), Lookup::Missing);
        assert_eq!(m.rep.len(), 3);
        m.rep.mark_read_only();
        let mut it = m.rep.clone().iter();
        it.seek_to_first();
        let mut seen = Vec::new();
        while it.valid() {
            let k = parse_internal_key(it.key()).unwrap();
            seen.push((k.user_key.to_vec(), k.sequence));
            it.next();
        }
        assert_eq!(
            seen,
            [
                (b"a".to_vec(), 12),
                (b"a".to_vec(), 10),
                (b"b".to_vec(), 11)
            ]
        );
    }

    #[test]
    fn skiplist_memtable() {
        check_kind(MemtableKind::SkipList);
    }

    #[test]
    fn vector_memtable() {
        check_kind(MemtableKind::Vector);
    }

    #[test]
    fn the_pool_is_warmed_a_quarter_of_the_buffer_ahead_within_one_to_four_blocks() {
        const MIB: usize = 1 << 20;
        // (write buffer, block, warm target)
        for (buffer, block, target) in [
            (64 * MIB, 4 * MIB, 16 * MIB),   // a quarter: four blocks
            (1024 * MIB, 4 * MIB, 16 * MIB), // a quarter would be 64 blocks
            (8 * MIB, MIB, 2 * MIB),
            (256 << 10, 64 << 10, 64 << 10), // a quarter, and one block
            (64 << 10, 64 << 10, 64 << 10),  // at least a block
        ] {
            assert_eq!(memtable_block_size(buffer), block, "{buffer}");
            assert_eq!(pool_warm_target(buffer), target, "{buffer}");
        }
    }
}
