//! Point reads of many keys at once, as the `rocksdb` crate's `multi_get`
//! family: every key is read as of one sequence number and one version.

use super::{DBWithThreadMode, ThreadMode};
use crate::error::Result;
use crate::options::ReadOptions;

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// The values of `keys`, in their order, each `Ok(None)` when absent;
    /// all read as of one point in time (the same sequence number and the
    /// same set of memtables and files), so a concurrent write is seen for
    /// every key or for none.
    ///
    /// Each key is looked up in turn (bloom filters first); see
    /// [`batched_multi_get`](Self::batched_multi_get) to have the lookups
    /// made in key order.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// db.put(b"c", b"3").unwrap();
    /// let values = db.multi_get([b"c", b"b", b"a"]);
    /// let values: Vec<_> = values.into_iter().map(Result::unwrap).collect();
    /// assert_eq!(values, [Some(b"3".to_vec()), None, Some(b"1".to_vec())]);
    /// ```
    pub fn multi_get<K, I>(&self, keys: I) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        self.multi_get_opt(keys, &ReadOptions::default())
    }

    /// [`multi_get`](Self::multi_get) with read options (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, ReadOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"old").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"a", b"new").unwrap();
    /// db.put(b"b", b"new").unwrap();
    /// let mut ro = ReadOptions::default();
    /// ro.set_snapshot(&snap);
    /// let values = db.multi_get_opt([b"a", b"b"], &ro);
    /// assert_eq!(values[0].as_ref().unwrap().as_deref(), Some(&b"old"[..]));
    /// assert_eq!(values[1].as_ref().unwrap(), &None);
    /// ```
    pub fn multi_get_opt<K, I>(&self, keys: I, ro: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        let seq = ro.snapshot.unwrap_or_else(|| self.shared.visible());
        let version = self.shared.current();
        keys.into_iter()
            .map(|k| version.get(k.as_ref(), seq))
            .collect()
    }

    /// The values of `keys`, in their order, as [`multi_get`](Self::multi_get)
    /// (one point in time), with the lookups made in key order: keys in
    /// the same table block are read one after the other. `sorted_input`
    /// says the keys are sorted already (bytewise); otherwise they are
    /// sorted here and the results put back in the callers' order. The
    /// `rocksdb` crate has this only per column family
    /// (`batched_multi_get_cf`); values are returned as vectors, not pinned
    /// slices.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// for i in 0..100u32 {
    ///     db.put(i.to_be_bytes(), i.to_le_bytes()).unwrap();
    /// }
    /// db.flush().unwrap();
    /// let keys = [7u32, 3, 200].map(u32::to_be_bytes);
    /// let values = db.batched_multi_get(&keys, false);
    /// assert_eq!(values[0].as_ref().unwrap().as_deref(), Some(&7u32.to_le_bytes()[..]));
    /// assert_eq!(values[1].as_ref().unwrap().as_deref(), Some(&3u32.to_le_bytes()[..]));
    /// assert_eq!(values[2].as_ref().unwrap(), &None);
    /// ```
    pub fn batched_multi_get<K, I>(
        &self,
        keys: I,
        sorted_input: bool,
    ) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        self.batched_multi_get_opt(keys, sorted_input, &ReadOptions::default())
    }

    /// [`batched_multi_get`](Self::batched_multi_get) with read options (a
    /// snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, ReadOptions};
    ///
    /// let db = DB::open_default(dir.path()).unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"k", b"v").unwrap();
    /// let mut ro = ReadOptions::default();
    /// ro.set_snapshot(&snap);
    /// let values = db.batched_multi_get_opt([b"k"], true, &ro);
    /// assert_eq!(values[0].as_ref().unwrap(), &None);
    /// ```
    pub fn batched_multi_get_opt<K, I>(
        &self,
        keys: I,
        sorted_input: bool,
        ro: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        let keys: Vec<K> = keys.into_iter().collect();
        let mut order: Vec<usize> = (0..keys.len()).collect();
        if !sorted_input {
            let ucmp = &self.shared.opts.comparator;
            order.sort_by(|&a, &b| ucmp.compare(keys[a].as_ref(), keys[b].as_ref()));
        }
        let seq = ro.snapshot.unwrap_or_else(|| self.shared.visible());
        let version = self.shared.current();
        let mut values: Vec<Option<Result<Option<Vec<u8>>>>> = keys.iter().map(|_| None).collect();
        for i in order {
            values[i] = Some(version.get(keys[i].as_ref(), seq));
        }
        values
            .into_iter()
            .map(|v| v.expect("every key looked up"))
            .collect()
    }
}
