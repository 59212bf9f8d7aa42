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
    InternalKeyComparator, ValueType, append_internal_key, parse_internal_key, user_key,
};
use crate::manifest::{FileMeta, NUM_LEVELS};
use crate::memtable::{Lookup, Memtable};
use crate::options::Options;
use crate::table::{Table, TableBuilder, TableError, TableIter, TableOptions};

/// A table file that is part of the database.
pub(crate) struct TableFile {
    pub(crate) meta: FileMeta,
    pub(crate) table: Arc<Table>,
}

impl TableFile {
    pub(crate) fn covers(&self, user_key: &[u8]) -> bool {
        crate::key::user_key(&self.meta.smallest) <= user_key
            && user_key <= crate::key::user_key(&self.meta.largest)
    }

    pub(crate) fn get(&self, user_key: &[u8], seq: u64) -> Result<Lookup> {
        if !self.covers(user_key) || !self.table.may_contain(user_key) {
            return Ok(Lookup::Missing);
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
                ValueType::Value => Lookup::Found(it.value().to_vec()),
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
        for m in std::iter::once(&self.mem).chain(self.imm.iter()) {
            match m.get(user_key, seq) {
                Lookup::Found(v) => return Ok(Some(v)),
                Lookup::Deleted => return Ok(None),
                Lookup::Missing => {}
            }
        }
        for t in &self.levels[0] {
            match t.get(user_key, seq)? {
                Lookup::Found(v) => return Ok(Some(v)),
                Lookup::Deleted => return Ok(None),
                Lookup::Missing => {}
            }
        }
        // Below level 0 a key lies in at most one file a level, and a
        // level holds only versions older than the levels above it.
        for level in &self.levels[1..] {
            let i = level.partition_point(|t| crate::key::user_key(&t.meta.largest) < user_key);
            if let Some(t) = level.get(i) {
                match t.get(user_key, seq)? {
                    Lookup::Found(v) => return Ok(Some(v)),
                    Lookup::Deleted => return Ok(None),
                    Lookup::Missing => {}
                }
            }
        }
        Ok(None)
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
        MergingIterator::new(children)
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
        let i = self.files.partition_point(|t| {
            crate::key::compare_internal_keys(&t.meta.largest, target) == std::cmp::Ordering::Less
        });
        if let Some(it) = self.open(i) {
            it.seek(target);
        }
        self.skip_forward();
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        // The last file whose smallest key is at or before the target.
        let i = self.files.partition_point(|t| {
            crate::key::compare_internal_keys(&t.meta.smallest, target)
                != std::cmp::Ordering::Greater
        });
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

pub(crate) fn table_comparator() -> Arc<dyn key_comparator::Comparator + Send + Sync> {
    Arc::new(InternalKeyComparator)
}

/// Opens the live table `meta` in `dir`. A missing file is corruption: the
/// manifest says it is there.
pub(crate) fn open_table(fs: &dyn FileSystem, dir: &Path, meta: &FileMeta) -> Result<TableFile> {
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
    let table = Table::open_named(file, meta.file_size, table_comparator(), user_key, &path)
        .map_err(table_error)?;
    Ok(TableFile {
        meta: meta.clone(),
        table,
    })
}

/// Writes the entries from `source`'s position on to table file `number`,
/// up to `max_size` bytes; syncs the file and the directory.
/// `None` when there was nothing to write. On error the partial file is
/// removed: this call created it and nothing refers to it.
pub(crate) fn build_table(
    fs: &dyn FileSystem,
    dir: &Path,
    opts: &Options,
    number: u64,
    source: &mut (impl EntrySource + ?Sized),
    max_size: Option<u64>,
) -> Result<Option<TableFile>> {
    if !source.valid() {
        source.status()?;
        return Ok(None);
    }
    let path = table_path(dir, number);
    let file = fs
        .create(&path)
        .map_err(|e| Error::io(format!("creating {}", path.display()), e))?;
    let built = write_table(fs, dir, opts, &path, file, source, max_size);
    let meta = match built {
        Ok(info) => FileMeta {
            number,
            level: 0,
            file_size: info.file_size,
            smallest: info.smallest,
            largest: info.largest,
            entries: info.entries,
        },
        Err(e) => {
            let _ = fs.remove_file(&path);
            return Err(e);
        }
    };
    open_table(fs, dir, &meta).map(Some)
}

fn write_table(
    fs: &dyn FileSystem,
    dir: &Path,
    opts: &Options,
    path: &Path,
    file: Box<dyn crate::env::WritableFile>,
    source: &mut (impl EntrySource + ?Sized),
    max_size: Option<u64>,
) -> Result<crate::table::TableInfo> {
    let build_error = |e: TableError| match e {
        TableError::Io { offset, source } => Error::io(
            format!("writing {} at offset {offset}", path.display()),
            source,
        ),
        other => Error::Corruption(format!("building {}: {other}", path.display())),
    };
    let mut builder = TableBuilder::new(file, table_options(opts), table_comparator(), user_key);
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
    let info = builder.finish().map_err(build_error)?;
    fs.sync_dir(dir)
        .map_err(|e| Error::io(format!("syncing {}", dir.display()), e))?;
    Ok(info)
}
