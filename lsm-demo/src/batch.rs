//! Write batches: several puts and deletes applied atomically.
//!
//! A batch's representation is RocksDB's: a 12-byte header (a sequence
//! number, little-endian 8 bytes, and the operation count, 4 bytes) and
//! records of `type byte, varint key length, key[, varint value length,
//! value]` (type 1 a put, 0 a delete, `0x0f` a range deletion whose
//! "value" is the end of the range), so [`WriteBatch::data`] and
//! [`WriteBatch::from_data`] exchange batches with RocksDB's. The records
//! are also the write-ahead-log payload: one log record holds a header
//! (first sequence, entry count) and the records of every batch written
//! with it, so their sequences are contiguous.

use crate::key::{ValueType, put_varint};

/// Length of the header of a group's log record.
pub(crate) const GROUP_HEADER_LEN: usize = 12;

/// The type byte of a log-data record: logged, not applied, no sequence
/// number (RocksDB's `kTypeLogData`).
const LOG_DATA_TYPE: u8 = 3;

/// The type byte of a range deletion, `type, varint begin length, begin,
/// varint end length, end` (RocksDB's `kTypeRangeDeletion`).
const RANGE_DELETION_TYPE: u8 = 0x0f;

/// An atomic group of puts and deletes, applied in order.
///
/// # Examples
///
/// ```
/// use lsm_demo::WriteBatch;
///
/// let mut batch = WriteBatch::new();
/// batch.put(b"a", b"1");
/// batch.delete(b"b");
/// assert_eq!(batch.len(), 2);
/// batch.clear();
/// assert!(batch.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteBatch {
    /// The header (its count kept up to date), then the records; empty
    /// until the first operation, so that an empty batch costs no
    /// allocation.
    rep: Vec<u8>,
    count: u32,
    max_key: usize,
    max_value: usize,
    /// Why the records are unreadable, for a batch from [`Self::from_data`]
    /// that did not decode: such a batch is refused by `DB::write`.
    malformed: Option<BadRecord>,
    /// Whether a range deletion is among the records: the memtable looks
    /// for them only then.
    has_range_deletion: bool,
}

impl Default for WriteBatch {
    fn default() -> Self {
        WriteBatch::with_capacity_bytes(0)
    }
}

/// The representation of an empty batch.
const EMPTY_DATA: [u8; GROUP_HEADER_LEN] = [0; GROUP_HEADER_LEN];

/// Receives the operations of a [`WriteBatch`], in order, from
/// [`WriteBatch::iterate`] (the `rocksdb` crate's callback interface;
/// [`WriteBatch::iter`] is the borrowing one).
///
/// # Examples
///
/// ```
/// use lsm_demo::{WriteBatch, WriteBatchIterator};
///
/// #[derive(Default)]
/// struct Keys(Vec<Box<[u8]>>);
/// impl WriteBatchIterator for Keys {
///     fn put(&mut self, key: Box<[u8]>, _value: Box<[u8]>) {
///         self.0.push(key);
///     }
///     fn delete(&mut self, key: Box<[u8]>) {
///         self.0.push(key);
///     }
/// }
///
/// let mut batch = WriteBatch::new();
/// batch.put(b"a", b"1");
/// batch.delete(b"b");
/// let mut keys = Keys::default();
/// batch.iterate(&mut keys);
/// assert_eq!(keys.0, [Box::from(&b"a"[..]), Box::from(&b"b"[..])]);
/// ```
pub trait WriteBatchIterator {
    /// Called with a key and value put into the batch.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::{WriteBatch, WriteBatchIterator};
    ///
    /// struct Sizes(usize);
    /// impl WriteBatchIterator for Sizes {
    ///     fn put(&mut self, key: Box<[u8]>, value: Box<[u8]>) {
    ///         self.0 += key.len() + value.len();
    ///     }
    ///     fn delete(&mut self, _key: Box<[u8]>) {}
    /// }
    ///
    /// let mut batch = WriteBatch::new();
    /// batch.put(b"key", b"value");
    /// let mut sizes = Sizes(0);
    /// batch.iterate(&mut sizes);
    /// assert_eq!(sizes.0, 8);
    /// ```
    fn put(&mut self, key: Box<[u8]>, value: Box<[u8]>);
    /// Called with a key deleted from the batch.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::{WriteBatch, WriteBatchIterator};
    ///
    /// struct Deletes(usize);
    /// impl WriteBatchIterator for Deletes {
    ///     fn put(&mut self, _key: Box<[u8]>, _value: Box<[u8]>) {}
    ///     fn delete(&mut self, _key: Box<[u8]>) {
    ///         self.0 += 1;
    ///     }
    /// }
    ///
    /// let mut batch = WriteBatch::new();
    /// batch.delete(b"a");
    /// batch.single_delete(b"b");
    /// let mut deletes = Deletes(0);
    /// batch.iterate(&mut deletes);
    /// assert_eq!(deletes.0, 2);
    /// ```
    fn delete(&mut self, key: Box<[u8]>);

    /// Called with the bounds `[from, to)` of a range deleted in the batch
    /// ([`WriteBatch::delete_range`]). The `rocksdb` crate's trait has only
    /// `put` and `delete`; this method does nothing unless implemented, so
    /// implementations written for that trait compile unchanged (and skip
    /// range deletions).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::{WriteBatch, WriteBatchIterator};
    ///
    /// #[derive(Default)]
    /// struct Ranges(Vec<(Box<[u8]>, Box<[u8]>)>);
    /// impl WriteBatchIterator for Ranges {
    ///     fn put(&mut self, _key: Box<[u8]>, _value: Box<[u8]>) {}
    ///     fn delete(&mut self, _key: Box<[u8]>) {}
    ///     fn delete_range(&mut self, from: Box<[u8]>, to: Box<[u8]>) {
    ///         self.0.push((from, to));
    ///     }
    /// }
    ///
    /// let mut batch = WriteBatch::new();
    /// batch.delete_range(b"a", b"m");
    /// let mut ranges = Ranges::default();
    /// batch.iterate(&mut ranges);
    /// assert_eq!(ranges.0, [(Box::from(&b"a"[..]), Box::from(&b"m"[..]))]);
    /// ```
    fn delete_range(&mut self, from: Box<[u8]>, to: Box<[u8]>) {
        let _ = (from, to);
    }
}

impl WriteBatch {
    /// An empty batch.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, WriteBatch};
    ///
    /// let batch = WriteBatch::new();
    /// assert!(batch.is_empty());
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.write(batch).unwrap(); // an empty batch writes nothing
    /// assert_eq!(db.stats().last_sequence, 0);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty batch with room for `capacity_bytes` of representation
    /// (header included, as [`size_in_bytes`](Self::size_in_bytes) counts).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::WriteBatch;
    ///
    /// let mut batch = WriteBatch::with_capacity_bytes(1 << 10);
    /// batch.put(b"k", b"v");
    /// assert_eq!(batch.len(), 1);
    /// ```
    pub fn with_capacity_bytes(capacity_bytes: usize) -> Self {
        WriteBatch {
            rep: Vec::with_capacity(capacity_bytes),
            count: 0,
            max_key: 0,
            max_value: 0,
            malformed: None,
            has_range_deletion: false,
        }
    }

    /// A batch from the representation [`data`](Self::data) returned, here
    /// or in RocksDB (puts, deletes and range deletions; RocksDB's other
    /// record types, such
    /// as merges or column families, are not read). Data that does not
    /// decode gives a batch that [`DB::write`](crate::DB::write) refuses
    /// with [`Error::InvalidArgument`](crate::Error::InvalidArgument), and
    /// whose [`iter`](Self::iter) stops before the bad record;
    /// [`try_from_data`](Self::try_from_data) says why instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::WriteBatch;
    ///
    /// let mut batch = WriteBatch::new();
    /// batch.put(b"k", b"v");
    /// let copy = WriteBatch::from_data(batch.data());
    /// assert_eq!(copy, batch);
    /// ```
    pub fn from_data(data: &[u8]) -> Self {
        Self::try_from_data(data).unwrap_or_else(|bad| {
            let mut batch = WriteBatch::new();
            batch.malformed = Some(bad);
            batch
        })
    }

    /// A batch from the representation [`data`](Self::data) returned, or
    /// what is wrong with it: too short for its header, a record that does
    /// not decode (or of a type other than put, delete and range
    /// deletion), or a count
    /// that does not match the records.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::WriteBatch;
    ///
    /// let mut batch = WriteBatch::new();
    /// batch.delete(b"k");
    /// let data = batch.data();
    /// assert_eq!(WriteBatch::try_from_data(data), Ok(batch.clone()));
    /// assert!(WriteBatch::try_from_data(&data[..data.len() - 1]).is_err());
    /// ```
    pub fn try_from_data(data: &[u8]) -> Result<Self, BadRecord> {
        // Checks the header and the count.
        decode_group(data)?;
        let mut batch = WriteBatch::with_capacity_bytes(data.len());
        let records = Records {
            rest: &data[GROUP_HEADER_LEN..],
        };
        for record in records {
            match record? {
                Record::Op(BatchOp::Put(k, v)) => batch.put(k, v),
                Record::Op(BatchOp::Delete(k)) => batch.delete(k),
                Record::Op(BatchOp::DeleteRange(from, to)) => batch.delete_range(from, to),
                Record::LogData(blob) => batch.put_log_data(blob),
            }
        }
        Ok(batch)
    }

    /// The batch's representation: RocksDB's, a 12-byte header (sequence
    /// 0, the operation count) and the records (see the module docs).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::WriteBatch;
    ///
    /// let mut batch = WriteBatch::new();
    /// batch.put(b"k", b"v");
    /// let data = batch.data();
    /// assert_eq!(data.len(), batch.size_in_bytes());
    /// assert_eq!(data[8..12], 1u32.to_le_bytes()); // the count
    /// assert_eq!(data[12..], [1, 1, b'k', 1, b'v']); // a put of k = v
    /// ```
    pub fn data(&self) -> &[u8] {
        if self.rep.is_empty() {
            &EMPTY_DATA
        } else {
            &self.rep
        }
    }

    /// Bytes of [`data`](Self::data): the header and the records.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::WriteBatch;
    ///
    /// let mut batch = WriteBatch::new();
    /// assert_eq!(batch.size_in_bytes(), 12);
    /// batch.put(b"k", b"v");
    /// assert_eq!(batch.size_in_bytes(), 12 + batch.data_size());
    /// ```
    pub fn size_in_bytes(&self) -> usize {
        self.data().len()
    }

    /// Queues a put of `value` under `key`.
    ///
    /// # Examples
    ///
    /// Operations apply in order, so the last put of a key wins:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, WriteBatch};
    ///
    /// let mut batch = WriteBatch::new();
    /// batch.put(b"k", b"old");
    /// batch.put(b"k", b"new");
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.write(batch).unwrap();
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
    /// ```
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        let (key, value) = (key.as_ref(), value.as_ref());
        self.start_record(&[key, value]);
        self.rep.push(ValueType::Value as u8);
        put_varint(&mut self.rep, key.len() as u64);
        self.rep.extend_from_slice(key);
        put_varint(&mut self.rep, value.len() as u64);
        self.rep.extend_from_slice(value);
        self.counted();
        self.max_key = self.max_key.max(key.len());
        self.max_value = self.max_value.max(value.len());
    }

    /// Makes room for a record of `fields` (a type byte, then each field
    /// with its length), so that adding it grows the buffer at most once,
    /// and writes the header before the first record.
    fn start_record(&mut self, fields: &[&[u8]]) {
        let record: usize = 1 + fields.iter().map(|f| 10 + f.len()).sum::<usize>();
        if self.rep.is_empty() {
            self.rep.reserve(EMPTY_DATA.len() + record);
            self.rep.extend_from_slice(&EMPTY_DATA);
        } else {
            self.rep.reserve(record);
        }
    }

    /// Counts one more operation, in the header too.
    fn counted(&mut self) {
        self.count += 1;
        self.rep[8..GROUP_HEADER_LEN].copy_from_slice(&self.count.to_le_bytes());
    }

    /// Queues a delete of `key`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, WriteBatch};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.put(b"old", b"1").unwrap();
    /// let mut batch = WriteBatch::new();
    /// batch.delete(b"old");
    /// batch.put(b"new", b"2");
    /// db.write(batch).unwrap(); // both at once: a rename
    /// assert_eq!(db.get(b"old").unwrap(), None);
    /// assert_eq!(db.get(b"new").unwrap().as_deref(), Some(&b"2"[..]));
    /// ```
    pub fn delete(&mut self, key: impl AsRef<[u8]>) {
        let key = key.as_ref();
        self.start_record(&[key]);
        self.rep.push(ValueType::Deletion as u8);
        put_varint(&mut self.rep, key.len() as u64);
        self.rep.extend_from_slice(key);
        self.counted();
        self.max_key = self.max_key.max(key.len());
    }

    /// Adds `blob` to the batch's log record only: it is written to the log
    /// with the batch and seen by [`DB::get_updates_since`], but not
    /// applied, takes no sequence number and does not count in
    /// [`len`](Self::len) (RocksDB's `PutLogData`). A batch holding only log
    /// data writes nothing: log records are ordered by their sequence
    /// numbers, and it has none.
    ///
    /// [`DB::get_updates_since`]: crate::DB::get_updates_since
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::{BatchOp, WriteBatch};
    ///
    /// let mut batch = WriteBatch::new();
    /// batch.put(b"k", b"v");
    /// batch.put_log_data(b"replicated from node 3");
    /// assert_eq!(batch.len(), 1);
    /// assert_eq!(batch.iter().collect::<Vec<_>>(), [BatchOp::Put(b"k", b"v")]);
    /// ```
    pub fn put_log_data(&mut self, blob: impl AsRef<[u8]>) {
        let blob = blob.as_ref();
        self.start_record(&[blob]);
        self.rep.push(LOG_DATA_TYPE);
        put_varint(&mut self.rep, blob.len() as u64);
        self.rep.extend_from_slice(blob);
    }

    /// The blobs added with [`put_log_data`](Self::put_log_data), in order.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::WriteBatch;
    ///
    /// let mut batch = WriteBatch::new();
    /// batch.put_log_data(b"a");
    /// batch.delete(b"k");
    /// batch.put_log_data(b"b");
    /// assert_eq!(batch.log_data().collect::<Vec<_>>(), [b"a", b"b"]);
    /// ```
    pub fn log_data(&self) -> impl Iterator<Item = &[u8]> + '_ {
        Records {
            rest: self.records(),
        }
        .map_while(Result::ok)
        .filter_map(|r| match r {
            Record::LogData(blob) => Some(blob),
            Record::Op(_) => None,
        })
    }

    /// Queues a delete of `key` meant for a key put once since it was last
    /// deleted (RocksDB's `SingleDelete`, whose result is undefined
    /// otherwise). Recorded as a [`delete`](Self::delete), which removes
    /// every version of the key: the result RocksDB documents for the
    /// defined case, and a defined one for the others.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::{BatchOp, WriteBatch};
    ///
    /// let mut batch = WriteBatch::new();
    /// batch.single_delete(b"k");
    /// assert_eq!(batch.iter().collect::<Vec<_>>(), [BatchOp::Delete(b"k")]);
    /// ```
    pub fn single_delete(&mut self, key: impl AsRef<[u8]>) {
        self.delete(key);
    }

    /// Queues a deletion of every key in `[from, to)`: `from` included,
    /// `to` not, as RocksDB's `DeleteRange`. The keys are hidden from every
    /// read that sees the write, in memtables and tables alike, until a
    /// later put of a key brings it back. An empty or inverted range
    /// (`from >= to`) deletes nothing but is still a record of the batch:
    /// it counts in [`len`](Self::len) and takes a sequence number.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, WriteBatch};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// for k in [b"a", b"b", b"c", b"d"] {
    ///     db.put(k, b"v").unwrap();
    /// }
    /// let mut batch = WriteBatch::new();
    /// batch.delete_range(b"b", b"d"); // deletes b and c, not d
    /// batch.put(b"c", b"new"); // later in the batch: visible
    /// db.write(batch).unwrap();
    /// assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"v"[..]));
    /// assert_eq!(db.get(b"b").unwrap(), None);
    /// assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"new"[..]));
    /// assert_eq!(db.get(b"d").unwrap().as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn delete_range<K: AsRef<[u8]>>(&mut self, from: K, to: K) {
        let (from, to) = (from.as_ref(), to.as_ref());
        self.start_record(&[from, to]);
        self.rep.push(RANGE_DELETION_TYPE);
        put_varint(&mut self.rep, from.len() as u64);
        self.rep.extend_from_slice(from);
        put_varint(&mut self.rep, to.len() as u64);
        self.rep.extend_from_slice(to);
        self.counted();
        self.max_key = self.max_key.max(from.len()).max(to.len());
        self.has_range_deletion = true;
    }

    /// Whether the batch holds a range deletion.
    pub(crate) fn has_range_deletion(&self) -> bool {
        self.has_range_deletion
    }

    /// Number of operations in the batch.
    ///
    /// # Examples
    ///
    /// Every queued operation counts, even two on the same key:
    ///
    /// ```
    /// use lsm_demo::WriteBatch;
    ///
    /// let mut batch = WriteBatch::new();
    /// batch.put(b"k", b"1");
    /// batch.put(b"k", b"2");
    /// batch.delete(b"k");
    /// assert_eq!(batch.len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether the batch holds no operation.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::WriteBatch;
    ///
    /// let mut batch = WriteBatch::new();
    /// assert!(batch.is_empty());
    /// batch.delete(b"k");
    /// assert!(!batch.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Removes every operation, keeping the allocation.
    ///
    /// # Examples
    ///
    /// A cleared batch can be filled again for the next write:
    ///
    /// ```
    /// use lsm_demo::{BatchOp, WriteBatch};
    ///
    /// let mut batch = WriteBatch::new();
    /// batch.put(b"a", b"1");
    /// batch.clear();
    /// assert_eq!((batch.len(), batch.data_size()), (0, 0));
    /// batch.put(b"b", b"2");
    /// assert_eq!(batch.iter().collect::<Vec<_>>(), [BatchOp::Put(b"b", b"2")]);
    /// ```
    pub fn clear(&mut self) {
        self.rep.clear();
        self.count = 0;
        self.max_key = 0;
        self.max_value = 0;
        self.malformed = None;
        self.has_range_deletion = false;
    }

    /// Bytes of the encoded operations (the records, without the header).
    ///
    /// # Examples
    ///
    /// A put of a one-byte key and value takes 5 bytes (type, key length, key,
    /// value length, value); a delete of a one-byte key takes 3:
    ///
    /// ```
    /// use lsm_demo::WriteBatch;
    ///
    /// let mut batch = WriteBatch::new();
    /// batch.put(b"k", b"v");
    /// assert_eq!(batch.data_size(), 5);
    /// batch.delete(b"k");
    /// assert_eq!(batch.data_size(), 8);
    /// ```
    pub fn data_size(&self) -> usize {
        self.records().len()
    }

    pub(crate) fn records(&self) -> &[u8] {
        self.rep.get(GROUP_HEADER_LEN..).unwrap_or_default()
    }

    /// Why the batch cannot be written: it came from data that did not
    /// decode (see [`from_data`](Self::from_data)).
    pub(crate) fn malformed(&self) -> Option<&BadRecord> {
        self.malformed.as_ref()
    }

    pub(crate) fn largest_key_and_value(&self) -> (usize, usize) {
        (self.max_key, self.max_value)
    }

    /// The operations in order.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::{BatchOp, WriteBatch};
    ///
    /// let mut batch = WriteBatch::new();
    /// batch.put(b"k", b"v");
    /// let ops: Vec<BatchOp<'_>> = batch.iter().collect();
    /// assert_eq!(ops, [BatchOp::Put(b"k", b"v")]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = BatchOp<'_>> + '_ {
        // Every batch decodes: one built through the methods, or from data
        // that decoded (other data leaves an empty batch).
        Records {
            rest: self.records(),
        }
        .map_while(Result::ok)
        .filter_map(|r| match r {
            Record::Op(op) => Some(op),
            Record::LogData(_) => None,
        })
    }

    /// Hands each operation, in order, to `callbacks` (the `rocksdb`
    /// crate's interface; the keys and values are copied into boxes).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::{WriteBatch, WriteBatchIterator};
    ///
    /// #[derive(Default)]
    /// struct Log(Vec<String>);
    /// impl WriteBatchIterator for Log {
    ///     fn put(&mut self, key: Box<[u8]>, value: Box<[u8]>) {
    ///         self.0.push(format!("put {key:?} {value:?}"));
    ///     }
    ///     fn delete(&mut self, key: Box<[u8]>) {
    ///         self.0.push(format!("delete {key:?}"));
    ///     }
    /// }
    ///
    /// let mut batch = WriteBatch::new();
    /// batch.put([1], [2]);
    /// batch.delete([1]);
    /// let mut log = Log::default();
    /// batch.iterate(&mut log);
    /// assert_eq!(log.0, ["put [1] [2]", "delete [1]"]);
    /// ```
    pub fn iterate(&self, callbacks: &mut dyn WriteBatchIterator) {
        for op in self.iter() {
            match op {
                BatchOp::Put(k, v) => callbacks.put(k.into(), v.into()),
                BatchOp::Delete(k) => callbacks.delete(k.into()),
                BatchOp::DeleteRange(from, to) => callbacks.delete_range(from.into(), to.into()),
            }
        }
    }
}

/// One operation of a [`WriteBatch`].
///
/// # Examples
///
/// ```
/// use lsm_demo::{BatchOp, WriteBatch};
///
/// let mut batch = WriteBatch::new();
/// batch.put(b"a", b"1");
/// batch.delete(b"b");
/// let mut puts = 0;
/// for op in batch.iter() {
///     match op {
///         BatchOp::Put(key, value) => {
///             assert_eq!((key, value), (&b"a"[..], &b"1"[..]));
///             puts += 1;
///         }
///         BatchOp::Delete(key) => assert_eq!(key, b"b"),
///         BatchOp::DeleteRange(..) => unreachable!("no range deletion here"),
///     }
/// }
/// assert_eq!(puts, 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchOp<'a> {
    /// Put the value under the key.
    Put(&'a [u8], &'a [u8]),
    /// Delete the key.
    Delete(&'a [u8]),
    /// Delete every key in `[from, to)` ([`WriteBatch::delete_range`]).
    DeleteRange(&'a [u8], &'a [u8]),
}

impl<'a> BatchOp<'a> {
    /// The key the operation touches (the start of a deleted range).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::WriteBatch;
    ///
    /// let mut batch = WriteBatch::new();
    /// batch.put(b"a", b"1");
    /// batch.delete(b"b");
    /// let keys: Vec<&[u8]> = batch.iter().map(|op| op.key()).collect();
    /// assert_eq!(keys, [&b"a"[..], &b"b"[..]]);
    /// ```
    pub fn key(&self) -> &'a [u8] {
        match *self {
            BatchOp::Put(k, _) | BatchOp::Delete(k) | BatchOp::DeleteRange(k, _) => k,
        }
    }

    /// The type and value of the memtable entry the operation makes; `None`
    /// for a range deletion, which the memtable keeps apart.
    #[inline]
    pub(crate) fn value_type_and_value(&self) -> Option<(ValueType, &'a [u8])> {
        match *self {
            BatchOp::Put(_, v) => Some((ValueType::Value, v)),
            BatchOp::Delete(_) => Some((ValueType::Deletion, &[])),
            BatchOp::DeleteRange(..) => None,
        }
    }
}

mod records;
pub use records::BadRecord;
pub(crate) use records::{
    NO_NEXT_LOG, Record, Records, decode_group, decode_log_trailer, group_header, log_trailer,
};

#[cfg(test)]
mod tests;
