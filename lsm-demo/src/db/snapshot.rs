//! Snapshots: a consistent read view at one sequence number.

use super::iter::{DBIterator, IteratorMode};
use super::{DB, Shared};
use crate::error::Result;
use crate::options::ReadOptions;

impl DB {
    /// A consistent point-in-time view for reads and iteration.
    ///
    /// # Examples
    ///
    /// Writes after the snapshot are invisible to it:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"old").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"k", b"new").unwrap();
    /// db.put(b"other", b"x").unwrap();
    /// assert_eq!(snap.get(b"k").unwrap().as_deref(), Some(&b"old"[..]));
    /// assert_eq!(snap.get(b"other").unwrap(), None);
    /// assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
    /// ```
    pub fn snapshot(&self) -> Snapshot<'_> {
        let mut snaps = self.shared.snapshots.lock();
        let seq = self.shared.visible();
        *snaps.entry(seq).or_default() += 1;
        Snapshot {
            db: self,
            sequence: seq,
        }
    }
}

/// A consistent read view; release it by dropping it.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::IteratorMode;
///
/// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
/// db.put(b"a", b"1").unwrap();
/// let snap = db.snapshot();
/// db.delete(b"a").unwrap();
/// db.put(b"b", b"2").unwrap();
/// assert_eq!(snap.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
/// assert_eq!(snap.iterator(IteratorMode::Start).count(), 1);
/// drop(snap); // releases the old versions for compaction
/// assert_eq!(db.get(b"a").unwrap(), None);
/// ```
#[derive(Debug)]
pub struct Snapshot<'a> {
    db: &'a DB,
    sequence: u64,
}

impl Snapshot<'_> {
    /// The sequence number the snapshot reads at.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// let first = db.snapshot();
    /// db.put(b"k", b"v").unwrap();
    /// let second = db.snapshot();
    /// assert_eq!(second.sequence(), first.sequence() + 1); // one write between them
    /// assert_eq!(second.sequence(), db.stats().last_sequence);
    /// ```
    pub fn sequence(&self) -> u64 {
        self.sequence
    }

    /// Reads `key` as of the snapshot.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"k", b"1").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"k", b"2").unwrap();
    /// assert_eq!(snap.get(b"k").unwrap().as_deref(), Some(&b"1"[..]));
    /// assert_eq!(snap.get(b"absent").unwrap(), None);
    /// ```
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.db.get_opt(key, &self.read_options())
    }

    /// Iterates as of the snapshot.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::IteratorMode;
    ///
    /// let db = lsm_demo::DB::open_default(dir.path()).unwrap();
    /// db.put(b"a", b"1").unwrap();
    /// let snap = db.snapshot();
    /// db.put(b"a", b"2").unwrap();
    /// db.put(b"b", b"3").unwrap();
    /// let pairs: Vec<_> = snap.iterator(IteratorMode::Start).map(Result::unwrap).collect();
    /// assert_eq!(pairs, [(Box::from(&b"a"[..]), Box::from(&b"1"[..]))]);
    /// ```
    pub fn iterator(&self, mode: IteratorMode<'_>) -> DBIterator<'_> {
        self.db.iterator_opt(mode, self.read_options())
    }

    /// Read options that read as of this snapshot.
    fn read_options(&self) -> ReadOptions {
        ReadOptions {
            snapshot: Some(self.sequence),
            ..ReadOptions::default()
        }
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        let mut snaps = self.db.shared.snapshots.lock();
        if let Some(n) = snaps.get_mut(&self.sequence) {
            *n -= 1;
            if *n == 0 {
                snaps.remove(&self.sequence);
            }
        }
    }
}

impl Shared {
    pub(super) fn oldest_snapshot(&self) -> u64 {
        let snaps = self.snapshots.lock();
        snaps
            .keys()
            .next()
            .copied()
            .unwrap_or_else(|| self.visible())
    }
}
