//! What readers and the background threads see of the database: the
//! memtables and table files as of one moment ([`Version`]), and making and
//! opening the table files in it.

use std::path::Path;
use std::sync::Arc;

use crate::env::FileSystem;
use crate::error::{Error, Result};
use crate::filename::table_path;
use crate::iter::{EntrySource, InternalIterator, MergingIterator};
use crate::key::{
    InternalKeyComparator, ValueType, append_internal_key, compare_internal_keys, internal_key,
    parse_internal_key, user_key,
};
use crate::manifest::{FileMeta, NUM_LEVELS};
use crate::memtable::{Lookup, Memtable};
use crate::options::{Options, UserComparator};
use crate::perf::{self, PerfMetric};
use crate::range_del::{
    FragmentedTombstones, RangeTombstone, TombstoneOutput, user_key_predecessor, user_key_successor,
};
use crate::table::{Table, TableBuilder, TableError, TableIter, TableOptions};

/// A table file that is part of the database.
pub(crate) struct TableFile {
    pub(crate) meta: FileMeta,
    pub(crate) table: Arc<Table>,
    /// The database's order of user keys, which sorted the file.
    pub(crate) ucmp: UserComparator,
    /// The table's range tombstones; `None` for a table without.
    pub(crate) range_dels: Option<Arc<FragmentedTombstones>>,
}

impl TableFile {
    /// [`FragmentedTombstones::max_covering_seq`] of the table's
    /// tombstones: 0 at once for a table without.
    #[inline]
    pub(crate) fn max_covering_seq(&self, user_key: &[u8], seq: u64) -> u64 {
        match &self.range_dels {
            Some(r) if self.covers(user_key) => r.max_covering_seq(user_key, seq),
            _ => 0,
        }
    }

    pub(crate) fn covers(&self, user_key: &[u8]) -> bool {
        self.ucmp
            .le(crate::key::user_key(&self.meta.smallest), user_key)
            && self
                .ucmp
                .le(user_key, crate::key::user_key(&self.meta.largest))
    }

    pub(crate) fn get(&self, user_key: &[u8], seq: u64) -> Result<Lookup> {
        if !self.covers(user_key) {
            return Ok(Lookup::Missing);
        }
        if self.table.has_filter() {
            let maybe = self.table.may_contain(user_key);
            perf::count(
                if maybe {
                    PerfMetric::BloomSstHitCount
                } else {
                    PerfMetric::BloomSstMissCount
                },
                1,
            );
            if !maybe {
                return Ok(Lookup::Missing);
            }
        }
        let mut it = self.table.iter();
        let mut target = Vec::with_capacity(user_key.len() + 8);
        append_internal_key(&mut target, user_key, seq, ValueType::FOR_SEEK);
        it.seek(&target);
        if !it.valid() {
            it.status().map_err(table_error)?;
            return Ok(Lookup::Missing);
        }
        Ok(match parse_internal_key(it.key()) {
            Some(k) if k.user_key == user_key => match k.value_type {
                ValueType::Value => Lookup::Found(it.value().to_vec(), k.sequence),
                ValueType::Deletion => Lookup::Deleted,
            },
            _ => Lookup::Missing,
        })
    }
}

/// A table error as the engine reports it: an I/O error stays one (and
/// `ENOSPC` is [`Error::NoSpace`]); anything else is corruption. Both name
/// the file when the table knows it.
pub(crate) fn table_error(e: TableError) -> Error {
    let (file, inner) = match e {
        TableError::InFile { file, source } => (Some(file), *source),
        other => (None, other),
    };
    let name = file.map_or_else(|| "a table".to_owned(), |f| f.display().to_string());
    match inner {
        TableError::Io { offset, source } => {
            Error::io(format!("accessing {name} at offset {offset}"), source)
        }
        other => Error::Corruption(format!("{name}: {other}")),
    }
}

/// What a reader needs: every memtable and table file, as of one moment.
/// Replaced as a whole (copy on write), so a reader holds one `Arc`.
#[derive(Clone)]
pub(crate) struct Version {
    pub(crate) mem: Arc<Memtable>,
    /// Frozen memtables waiting for flush, newest first.
    pub(crate) imm: Vec<Arc<Memtable>>,
    /// `levels[0]` newest first; every level below sorted by smallest key,
    /// its files disjoint.
    pub(crate) levels: [Vec<Arc<TableFile>>; NUM_LEVELS],
}

impl Version {
    /// A copy of this version changed by `f`.
    pub(crate) fn with(&self, f: impl FnOnce(&mut Version)) -> Version {
        let mut next = self.clone();
        f(&mut next);
        next
    }

    pub(crate) fn get(&self, user_key: &[u8], seq: u64) -> Result<Option<Vec<u8>>> {
        // The newest range tombstone over the key seen so far, from the
        // newest source down: a version found below it is deleted. Sources
        // without tombstones leave it 0 after a flag check.
        let mut covered_below = 0;
        let in_memtables = perf::Timer::start();
        let found = self.get_from_memtables(user_key, seq, &mut covered_below);
        in_memtables.stop(PerfMetric::GetFromMemtableTime);
        if let Some(found) = found {
            return Ok(found);
        }
        let in_files = perf::Timer::start();
        let found = self.get_from_files(user_key, seq, covered_below);
        in_files.stop(PerfMetric::GetFromOutputFilesTime);
        found
    }

    /// [`Self::get`] in the memtables, newest first: `Some` once one of
    /// them settles it.
    fn get_from_memtables(
        &self,
        user_key: &[u8],
        seq: u64,
        covered_below: &mut u64,
    ) -> Option<Option<Vec<u8>>> {
        for m in std::iter::once(&self.mem).chain(self.imm.iter()) {
            perf::count(PerfMetric::GetFromMemtableCount, 1);
            *covered_below = (*covered_below).max(m.range_dels.max_covering_seq(user_key, seq));
            if let Some(found) = resolve(m.get(user_key, seq), *covered_below) {
                return Some(found);
            }
        }
        None
    }

    /// [`Self::get`] in the table files, level by level, below memtables
    /// whose tombstones cover the key up to `covered_below`.
    fn get_from_files(
        &self,
        user_key: &[u8],
        seq: u64,
        mut covered_below: u64,
    ) -> Result<Option<Vec<u8>>> {
        for t in &self.levels[0] {
            covered_below = covered_below.max(t.max_covering_seq(user_key, seq));
            if let Some(found) = resolve(t.get(user_key, seq)?, covered_below) {
                return Ok(found);
            }
        }
        // Below level 0 a key lies in at most one file a level, and a
        // level holds only versions older than the levels above it.
        for level in &self.levels[1..] {
            let i = level
                .partition_point(|t| t.ucmp.lt(crate::key::user_key(&t.meta.largest), user_key));
            if let Some(t) = level.get(i) {
                covered_below = covered_below.max(t.max_covering_seq(user_key, seq));
                if let Some(found) = resolve(t.get(user_key, seq)?, covered_below) {
                    return Ok(found);
                }
            }
        }
        Ok(None)
    }

    /// Every range tombstone of the version, as one set; `None` when it
    /// has none (the usual case, which costs a flag check a source).
    pub(crate) fn range_dels(&self) -> Option<Arc<FragmentedTombstones>> {
        let mut sets: Vec<Arc<FragmentedTombstones>> = Vec::new();
        for m in std::iter::once(&self.mem).chain(self.imm.iter()) {
            sets.extend(m.range_dels.fragments());
        }
        for level in &self.levels {
            sets.extend(level.iter().filter_map(|t| t.range_dels.clone()));
        }
        match sets.len() {
            0 => None,
            1 => sets.pop(),
            _ => Some(Arc::new(FragmentedTombstones::merge(
                sets.iter().map(|s| &**s),
            ))),
        }
    }

    /// The bytes of table files on each level.
    pub(crate) fn level_bytes(&self) -> [u64; NUM_LEVELS] {
        std::array::from_fn(|l| self.levels[l].iter().map(|t| t.meta.file_size).sum())
    }

    pub(crate) fn iter(&self) -> MergingIterator {
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
        for m in std::iter::once(&self.mem).chain(self.imm.iter()) {
            children.push(m.rep.clone().iter());
        }
        for t in &self.levels[0] {
            children.push(Box::new(TableIterAdapter(t.table.iter())));
        }
        for level in self.levels[1..].iter().filter(|l| !l.is_empty()) {
            children.push(Box::new(LevelIterator::new(level.clone())));
        }
        let mut merged = MergingIterator::new(self.mem.ucmp.clone(), children);
        merged.range_dels = self.range_dels();
        merged
    }
}

/// What a source's answer means for a read, given the newest range
/// tombstone over the key in it or above: `None` to look further down.
#[inline]
fn resolve(lookup: Lookup, covered_below: u64) -> Option<Option<Vec<u8>>> {
    match lookup {
        Lookup::Found(v, s) => Some((s > covered_below).then_some(v)),
        Lookup::Deleted => Some(None),
        Lookup::Missing => None,
    }
}

/// The files of one sorted level as one stream: a table iterator open on
/// one file at a time, moving to the next file (or the previous) at the
/// end of one.
pub(crate) struct LevelIterator {
    /// Sorted by smallest key, disjoint.
    files: Vec<Arc<TableFile>>,
    /// The file `iter` is open on.
    index: usize,
    iter: Option<TableIterAdapter>,
}

impl LevelIterator {
    pub(crate) fn new(files: Vec<Arc<TableFile>>) -> Self {
        LevelIterator {
            files,
            index: 0,
            iter: None,
        }
    }

    /// Opens file `index`, or none past either end.
    fn open(&mut self, index: usize) -> Option<&mut TableIterAdapter> {
        self.index = index;
        self.iter = self
            .files
            .get(index)
            .map(|t| TableIterAdapter(t.table.iter()));
        self.iter.as_mut()
    }

    /// Moves past files that end, forward, until an entry or an error.
    fn skip_forward(&mut self) {
        while let Some(it) = &self.iter {
            if it.valid() || it.status().is_err() {
                return;
            }
            if let Some(it) = self.open(self.index + 1) {
                it.seek_to_first();
            }
        }
    }

    /// Moves past files that end, backward, until an entry or an error.
    fn skip_backward(&mut self) {
        while let Some(it) = &self.iter {
            if it.valid() || it.status().is_err() {
                return;
            }
            if self.index == 0 {
                self.iter = None;
                return;
            }
            if let Some(it) = self.open(self.index - 1) {
                it.seek_to_last();
            }
        }
    }
}

impl InternalIterator for LevelIterator {
    fn valid(&self) -> bool {
        self.iter.as_ref().is_some_and(|it| it.valid())
    }
    fn seek_to_first(&mut self) {
        if let Some(it) = self.open(0) {
            it.seek_to_first();
        }
        self.skip_forward();
    }
    fn seek_to_last(&mut self) {
        if let Some(it) = self.open(self.files.len().wrapping_sub(1)) {
            it.seek_to_last();
        }
        self.skip_backward();
    }
    fn seek(&mut self, target: &[u8]) {
        // The first file whose largest key is at or after the target.
        let i = self
            .files
            .partition_point(|t| t.ucmp.compare_internal(&t.meta.largest, target).is_lt());
        if let Some(it) = self.open(i) {
            it.seek(target);
        }
        self.skip_forward();
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        // The last file whose smallest key is at or before the target.
        let i = self
            .files
            .partition_point(|t| t.ucmp.compare_internal(&t.meta.smallest, target).is_le());
        if i == 0 {
            self.iter = None;
            return;
        }
        if let Some(it) = self.open(i - 1) {
            it.seek_for_prev(target);
        }
        self.skip_backward();
    }
    fn next(&mut self) {
        if let Some(it) = &mut self.iter {
            it.next();
        }
        self.skip_forward();
    }
    fn prev(&mut self) {
        if let Some(it) = &mut self.iter {
            it.prev();
        }
        self.skip_backward();
    }
    fn key(&self) -> &[u8] {
        self.iter.as_ref().expect("valid iterator").key()
    }
    fn value(&self) -> &[u8] {
        self.iter.as_ref().expect("valid iterator").value()
    }
    fn status(&self) -> Result<()> {
        self.iter.as_ref().map_or(Ok(()), |it| it.status())
    }
}

pub(crate) struct TableIterAdapter(pub(crate) TableIter);

impl InternalIterator for TableIterAdapter {
    fn valid(&self) -> bool {
        self.0.valid()
    }
    fn seek_to_first(&mut self) {
        self.0.seek_to_first()
    }
    fn seek_to_last(&mut self) {
        self.0.seek_to_last()
    }
    fn seek(&mut self, target: &[u8]) {
        self.0.seek(target)
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.0.seek_for_prev(target)
    }
    fn next(&mut self) {
        self.0.next()
    }
    fn prev(&mut self) {
        self.0.prev()
    }
    fn key(&self) -> &[u8] {
        self.0.key()
    }
    fn value(&self) -> &[u8] {
        self.0.value()
    }
    fn status(&self) -> Result<()> {
        self.0.status().map_err(table_error)
    }
}

pub(crate) fn table_options(opts: &Options) -> TableOptions {
    TableOptions {
        block_size: opts.block_size,
        restart_interval: 16,
        bloom_bits_per_key: opts.bloom_bits_per_key,
    }
}

/// How a table of a database ordered by `ucmp` sorts its internal keys.
pub(crate) fn table_comparator(
    ucmp: &UserComparator,
) -> Arc<dyn key_comparator::Comparator + Send + Sync> {
    Arc::new(InternalKeyComparator::new(ucmp.clone()))
}

/// Opens the live table `meta` in `dir`. A missing file is corruption: the
/// manifest says it is there.
pub(crate) fn open_table(
    fs: &dyn FileSystem,
    dir: &Path,
    meta: &FileMeta,
    ucmp: &UserComparator,
) -> Result<TableFile> {
    let path = table_path(dir, meta.number);
    let file = fs.open_random(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::Corruption(format!(
                "{} is listed in the manifest but missing ({e})",
                path.display()
            ))
        } else {
            Error::io(format!("opening {}", path.display()), e)
        }
    })?;
    let table = Table::open_named(
        file,
        meta.file_size,
        table_comparator(ucmp),
        user_key,
        &path,
    )
    .map_err(table_error)?;
    let range_dels = table_range_dels(&table, &path)?;
    Ok(TableFile {
        meta: meta.clone(),
        table,
        ucmp: ucmp.clone(),
        range_dels,
    })
}

/// The range tombstones stored in `table` (at `path`), as fragments.
pub(crate) fn table_range_dels(
    table: &Table,
    path: &Path,
) -> Result<Option<Arc<FragmentedTombstones>>> {
    if table.range_deletions().is_empty() {
        return Ok(None);
    }
    let mut tombstones = Vec::with_capacity(table.range_deletions().len());
    for (key, end) in table.range_deletions() {
        let k = parse_internal_key(key).ok_or_else(|| {
            Error::Corruption(format!(
                "{}: a malformed range tombstone start",
                path.display()
            ))
        })?;
        tombstones.push(RangeTombstone::new(k.user_key, end, k.sequence));
    }
    let set = FragmentedTombstones::new(tombstones);
    Ok((!set.is_empty()).then(|| Arc::new(set)))
}

/// Writes the entries from `source`'s position on to table file `number`,
/// up to `max_size` bytes, with their share of `tombstones` (see
/// [`TombstoneOutput`]); syncs the file and the directory.
/// `None` when there was nothing to write. On error the partial file is
/// removed: this call created it and nothing refers to it.
pub(crate) fn build_table(
    fs: &dyn FileSystem,
    dir: &Path,
    opts: &Options,
    number: u64,
    source: &mut (impl EntrySource + ?Sized),
    max_size: Option<u64>,
    tombstones: Option<&mut TombstoneOutput>,
) -> Result<Option<TableFile>> {
    let tombstones_pending = tombstones.as_ref().is_some_and(|t| t.pending());
    if !source.valid() && !tombstones_pending {
        source.status()?;
        return Ok(None);
    }
    let path = table_path(dir, number);
    let file = fs
        .create(&path)
        .map_err(|e| Error::io(format!("creating {}", path.display()), e))?;
    let built = write_table(fs, dir, opts, &path, file, source, max_size, tombstones);
    let meta = match built {
        Ok((info, smallest, largest)) => FileMeta {
            number,
            level: 0,
            file_size: info.file_size,
            smallest,
            largest,
            entries: info.entries,
        },
        Err(e) => {
            let _ = fs.remove_file(&path);
            return Err(e);
        }
    };
    open_table(fs, dir, &meta, &opts.comparator).map(Some)
}

/// Writes the table; returns what the builder reported and the file's
/// smallest and largest internal keys, which cover its range tombstones
/// too (a tombstone's end, which it excludes, stands as the largest user
/// key unless the tombstone was cut at the file's end).
#[allow(clippy::too_many_arguments)]
fn write_table(
    fs: &dyn FileSystem,
    dir: &Path,
    opts: &Options,
    path: &Path,
    file: Box<dyn crate::env::WritableFile>,
    source: &mut (impl EntrySource + ?Sized),
    max_size: Option<u64>,
    tombstones: Option<&mut TombstoneOutput>,
) -> Result<(crate::table::TableInfo, Vec<u8>, Vec<u8>)> {
    let build_error = |e: TableError| match e {
        TableError::Io { offset, source } => Error::io(
            format!("writing {} at offset {offset}", path.display()),
            source,
        ),
        other => Error::Corruption(format!("building {}: {other}", path.display())),
    };
    let mut builder = TableBuilder::new(
        file,
        table_options(opts),
        table_comparator(&opts.comparator),
        user_key,
    );
    let mut written: u64 = 0;
    let mut last_user_key: Vec<u8> = Vec::new();
    while source.valid() {
        // Split only between user keys: the files of a sorted level must
        // not share one.
        if max_size.is_some_and(|m| written >= m) && user_key(source.key()) != &last_user_key[..] {
            break;
        }
        last_user_key.clear();
        last_user_key.extend_from_slice(user_key(source.key()));
        builder
            .add(source.key(), source.value())
            .map_err(build_error)?;
        written += (source.key().len() + source.value().len()) as u64;
        source.next();
    }
    source.status()?;
    // The bounds the tombstones add to the data's.
    let (mut tombstones_lo, mut tombstones_hi) = (None, None);
    if let Some(tombstones) = tombstones {
        // More entries follow in the next table: this one's tombstones end
        // just past its last user key.
        let upper = source.valid().then(|| user_key_successor(&last_user_key));
        for (t, cut) in tombstones.take(upper.as_deref()) {
            let start = internal_key(&t.start, t.seq, ValueType::Deletion);
            builder
                .add_range_deletion(&start, &t.end)
                .map_err(build_error)?;
            tombstones_lo = Some(match tombstones_lo {
                None => start,
                Some(lo) => min_key(lo, start),
            });
            let end = if cut {
                // The last data entry bounds the file.
                continue;
            } else if let Some(last) = user_key_predecessor(&t.end) {
                // The tombstone ends just past `last` (as one cut at a
                // file's end did in an earlier compaction): `last` is the
                // largest key it covers, and its last internal key bounds
                // the file. Counting the end itself would make the file
                // overlap its neighbour, which starts there.
                internal_key(last, 0, ValueType::Deletion)
            } else {
                // The end, which the tombstone excludes, counts as covered:
                // the file claims one key too many, which keeps it
                // disjoint from the files beside it all the same (the
                // file the end came from claimed it too).
                internal_key(&t.end, t.seq, ValueType::Value)
            };
            tombstones_hi = Some(match tombstones_hi {
                None => end,
                Some(hi) => max_key(hi, end),
            });
        }
    }
    let info = builder.finish().map_err(build_error)?;
    fs.sync_dir(dir)
        .map_err(|e| Error::io(format!("syncing {}", dir.display()), e))?;
    let has_data = info.entries > 0;
    let smallest = [has_data.then(|| info.smallest.clone()), tombstones_lo]
        .into_iter()
        .flatten()
        .reduce(min_key)
        .unwrap_or_default();
    // A tombstone is cut only where data follows it in the same table.
    let largest = [has_data.then(|| info.largest.clone()), tombstones_hi]
        .into_iter()
        .flatten()
        .reduce(max_key)
        .unwrap_or_default();
    Ok((info, smallest, largest))
}

fn min_key(a: Vec<u8>, b: Vec<u8>) -> Vec<u8> {
    if compare_internal_keys(&a, &b) == std::cmp::Ordering::Greater {
        b
    } else {
        a
    }
}

fn max_key(a: Vec<u8>, b: Vec<u8>) -> Vec<u8> {
    if compare_internal_keys(&a, &b) == std::cmp::Ordering::Less {
        b
    } else {
        a
    }
}
