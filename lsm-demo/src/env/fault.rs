//! [`FaultInjectionFs`]: the in-memory file system that loses power on
//! command, its state and the faults it injects; its calls and open files
//! are in `files`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

#[cfg(doc)] // for the links in the docs
use super::{FileSync, FileSystem, RandomAccessFile, WritableFile};

mod files;
mod inode;

use inode::Inode;

/// The kinds of call [`FaultInjectionFs`] can make fail.
///
/// # Examples
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
/// use std::path::Path;
/// let fs = FaultInjectionFs::new();
/// fs.fail_next(FaultOp::Rename, 1);
/// fs.create(Path::new("a")).unwrap(); // other kinds of call are unaffected
/// assert!(fs.rename(Path::new("a"), Path::new("b")).is_err());
/// assert_eq!(fs.injected(FaultOp::Rename), 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultOp {
    /// [`FileSystem::create_dir_all`].
    CreateDir,
    /// [`FileSystem::create`] and [`FileSystem::open_append`].
    Create,
    /// [`FileSystem::open_random`].
    Open,
    /// [`WritableFile::append`], and each write through the
    /// [`WritableFile::shared_writes`] of a file made by
    /// [`FileSystem::create_positional`].
    Append,
    /// [`WritableFile::sync`] and [`FileSync::sync`].
    Sync,
    /// [`FileSync::start_writeback`]: counted, and fails when told to, but
    /// changes nothing (a torn crash already keeps any unsynced bytes the
    /// disk may have been sent).
    Writeback,
    /// [`FileSystem::sync_dir`].
    SyncDir,
    /// [`FileSystem::rename`].
    Rename,
    /// [`FileSystem::remove_file`] and [`FileSystem::remove_dir`].
    Remove,
    /// [`RandomAccessFile::read_at`] on a file of this file system, and
    /// [`FileSystem::read_file`].
    Read,
    /// [`FileSystem::list_dir`].
    List,
    /// [`FileSystem::lock`].
    Lock,
}

impl FaultOp {
    /// Every kind of call: what
    /// [`FaultInjectionFs::simulate_power_loss`] fails before it crashes,
    /// so that the engine still running in the process cannot write to the
    /// disk as it comes back.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// for op in FaultOp::ALL {
    ///     fs.fail_after(op, 0); // the power goes off
    /// }
    /// fs.simulate_crash();
    /// assert!(fs.create(Path::new("after")).is_err());
    /// fs.clear_faults(); // the machine comes back
    /// assert!(fs.create(Path::new("after")).is_ok());
    /// ```
    pub const ALL: [FaultOp; 12] = [
        FaultOp::CreateDir,
        FaultOp::Create,
        FaultOp::Open,
        FaultOp::Append,
        FaultOp::Sync,
        FaultOp::Writeback,
        FaultOp::SyncDir,
        FaultOp::Rename,
        FaultOp::Remove,
        FaultOp::Read,
        FaultOp::List,
        FaultOp::Lock,
    ];
}

/// The error carried by every I/O error that [`FaultInjectionFs`] injects
/// (as the inner error of an [`io::ErrorKind::Other`] error).
///
/// # Examples
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
/// use std::path::Path;
/// let fs = FaultInjectionFs::new();
/// fs.fail_next(FaultOp::Create, 1);
/// let err = fs.create(Path::new("f")).unwrap_err();
/// assert!(FaultInjectionFs::is_injected(&err));
/// assert!(fs.create(Path::new("f")).is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectedFault {
    /// The call that failed.
    pub op: FaultOp,
    /// The path it concerned.
    pub path: PathBuf,
}

impl fmt::Display for InjectedFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "injected fault: {:?} on {}",
            self.op,
            self.path.display()
        )
    }
}

impl std::error::Error for InjectedFault {}

#[derive(Debug, Clone)]
enum FaultRule {
    /// The next `remaining` calls fail, then calls succeed again.
    FailNext { remaining: u64 },
    /// `ok_left` more calls succeed, then every call fails.
    FailAfter { ok_left: u64 },
    /// Each call fails with this probability, drawn from a seeded generator.
    Random { threshold: u64, rng: u64 },
}

#[derive(Debug, Default, Clone, Copy)]
struct OpStats {
    calls: u64,
    injected: u64,
}

type InodeRef = Arc<Mutex<Inode>>;

#[derive(Default)]
struct MemState {
    /// Bumped by every simulated crash; handles from an older generation fail.
    generation: u64,
    /// The namespace as the running process sees it.
    live: BTreeMap<PathBuf, InodeRef>,
    /// The namespace as it would come back after a power loss.
    durable: BTreeMap<PathBuf, InodeRef>,
    dirs: BTreeSet<PathBuf>,
    locks: HashMap<PathBuf, u64>,
    next_lock_id: u64,
    rules: HashMap<FaultOp, FaultRule>,
    /// The kind injected errors of an op carry (default `Other`).
    kinds: HashMap<FaultOp, io::ErrorKind>,
    stats: HashMap<FaultOp, OpStats>,
    torn_appends: bool,
}

#[derive(Default)]
struct MemShared {
    state: Mutex<MemState>,
}

fn lock_ignoring_poison<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl MemShared {
    fn state(&self) -> MutexGuard<'_, MemState> {
        lock_ignoring_poison(&self.state)
    }
}

/// Lexical normal form: `a/./b/` and `a/b` name the same entry.
fn normalize(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

fn parent_of(path: &Path) -> PathBuf {
    path.parent().map(Path::to_path_buf).unwrap_or_default()
}

fn not_found(what: &str, path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{what} {}: no such file or directory", path.display()),
    )
}

impl MemState {
    /// Counts a call of `op` and decides whether it fails.
    fn check(&mut self, op: FaultOp, path: &Path) -> io::Result<()> {
        let stats = self.stats.entry(op).or_default();
        stats.calls += 1;
        let fail = match self.rules.get_mut(&op) {
            None => false,
            Some(FaultRule::FailNext { remaining }) => {
                let fail = *remaining > 0;
                *remaining = remaining.saturating_sub(1);
                fail
            }
            Some(FaultRule::FailAfter { ok_left }) => {
                let fail = *ok_left == 0;
                *ok_left = ok_left.saturating_sub(1);
                fail
            }
            Some(FaultRule::Random { threshold, rng }) => {
                // xorshift64*: deterministic for a given seed and call order.
                *rng ^= *rng >> 12;
                *rng ^= *rng << 25;
                *rng ^= *rng >> 27;
                let draw = rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
                draw < *threshold
            }
        };
        if fail {
            stats.injected += 1;
            let kind = self.kinds.get(&op).copied().unwrap_or(io::ErrorKind::Other);
            return Err(io::Error::new(
                kind,
                InjectedFault {
                    op,
                    path: path.to_path_buf(),
                },
            ));
        }
        Ok(())
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.as_os_str().is_empty() || path == Path::new("/") || self.dirs.contains(path)
    }

    fn require_parent_dir(&self, path: &Path, what: &str) -> io::Result<()> {
        if self.is_dir(&parent_of(path)) {
            Ok(())
        } else {
            Err(not_found(what, path))
        }
    }

    fn require_not_dir(&self, path: &Path, what: &str) -> io::Result<()> {
        if self.is_dir(path) {
            Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                format!("{what} {}: is a directory", path.display()),
            ))
        } else {
            Ok(())
        }
    }
}

/// An in-memory file system that simulates power loss and injects errors.
///
/// It keeps, for each file, the bytes written and the prefix made durable by
/// [`WritableFile::sync`], and two namespaces: the *live* one every call sees
/// and the *durable* one, which takes a directory's entries from the live one
/// on [`FileSystem::sync_dir`] of that directory. [`Self::simulate_crash`]
/// replaces the live namespace by the durable one, cuts every file back to
/// its synced prefix, releases all locks and invalidates every open handle
/// (their calls then fail), as if the machine lost power and the process
/// died; the engine can then reopen on the same instance.
///
/// Directories are a simplification: [`FileSystem::create_dir_all`] is
/// durable at once, and directories cannot be removed.
///
/// Error injection is per [`FaultOp`], one rule per op (a new rule replaces
/// the old one), deterministic for a given sequence of calls. An injected
/// error is an [`io::ErrorKind::Other`] error wrapping an [`InjectedFault`];
/// [`Self::is_injected`] recognises it. A failed call changes nothing,
/// except a failed append when [`Self::set_torn_appends`] is on.
///
/// Cloning gives another handle to the same file system.
///
/// # Examples
///
/// A rename becomes durable only once its directory is synced:
///
/// ```
/// use lsm_demo::env::{FaultInjectionFs, FileSystem};
/// use std::path::Path;
///
/// let fs = FaultInjectionFs::new();
/// let mut f = fs.create(Path::new("tmp")).unwrap();
/// f.append(b"x").unwrap();
/// f.sync().unwrap();
/// fs.sync_dir(Path::new("")).unwrap();
/// fs.rename(Path::new("tmp"), Path::new("final")).unwrap();
/// fs.simulate_crash();
/// assert!(fs.exists(Path::new("tmp")) && !fs.exists(Path::new("final")));
/// ```
#[derive(Clone, Default)]
pub struct FaultInjectionFs {
    shared: Arc<MemShared>,
}

impl fmt::Debug for FaultInjectionFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.state();
        f.debug_struct("FaultInjectionFs")
            .field("generation", &state.generation)
            .field("live_files", &state.live.len())
            .field("durable_files", &state.durable.len())
            .field("dirs", &state.dirs.len())
            .finish_non_exhaustive()
    }
}

impl FaultInjectionFs {
    /// An empty file system; the root (`/`) and the current directory (the
    /// empty path) exist.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// assert!(fs.is_dir(Path::new("/")) && fs.is_dir(Path::new("")));
    /// assert!(fs.list_dir(Path::new("")).unwrap().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Simulates a power loss: every unsynced byte, and every directory
    /// change not made durable by [`FileSystem::sync_dir`], is lost; locks
    /// are released and open handles fail from now on.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut f = fs.create(Path::new("log")).unwrap();
    /// f.append(b"durable").unwrap();
    /// f.sync().unwrap();
    /// fs.sync_dir(Path::new("")).unwrap();
    /// f.append(b", lost").unwrap();
    /// fs.simulate_crash();
    /// assert_eq!(fs.read_file(Path::new("log")).unwrap(), b"durable");
    /// assert!(f.append(b"!").is_err()); // handles from before the crash are dead
    /// ```
    pub fn simulate_crash(&self) {
        self.crash(None);
    }

    /// Like [`Self::simulate_crash`], but each file keeps a random-length
    /// prefix of its unsynced bytes (chosen from `seed`), as a disk that
    /// wrote some of its cache before the power went off. A file made by
    /// [`FileSystem::create_positional`] keeps a random set of its unsynced
    /// pages (4 KiB, each whole or zeros) instead, writes below its synced
    /// length included, and ends after the last page kept: a disk writes
    /// dirty pages back in no particular order.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut f = fs.create(Path::new("log")).unwrap();
    /// fs.sync_dir(Path::new("")).unwrap();
    /// f.append(b"0123").unwrap();
    /// f.sync().unwrap();
    /// f.append(b"456789").unwrap();
    /// fs.simulate_crash_torn(42);
    /// let data = fs.read_file(Path::new("log")).unwrap();
    /// assert!(data.len() >= 4 && b"0123456789".starts_with(&data));
    /// ```
    pub fn simulate_crash_torn(&self, seed: u64) {
        self.crash(Some(seed | 1));
    }

    /// A power loss as a process that keeps running meets it: every call
    /// fails from now on (as [`fail_after`](Self::fail_after) with no
    /// successes, for each of [`FaultOp::ALL`]), then the file system
    /// crashes, clean ([`Self::simulate_crash`]) or, given a seed, torn
    /// ([`Self::simulate_crash_torn`]). An engine still running in the
    /// process then cannot reach the disk as it comes back: handles opened
    /// before the crash fail on their own, but a rename or removal by path
    /// would land in the new namespace, as a dead process's never would.
    /// [`Self::clear_faults`] brings the machine back.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut f = fs.create(Path::new("log")).unwrap();
    /// fs.sync_dir(Path::new("")).unwrap();
    /// f.append(b"lost").unwrap();
    /// fs.simulate_power_loss(None);
    /// assert!(fs.create(Path::new("after")).is_err());
    /// fs.clear_faults();
    /// assert_eq!(fs.read_file(Path::new("log")).unwrap(), b"");
    /// ```
    pub fn simulate_power_loss(&self, torn: Option<u64>) {
        for op in FaultOp::ALL {
            self.fail_after(op, 0);
        }
        match torn {
            Some(seed) => self.simulate_crash_torn(seed),
            None => self.simulate_crash(),
        }
    }

    fn crash(&self, mut rng: Option<u64>) {
        let mut state = self.shared.state();
        state.generation += 1;
        state.locks.clear();
        let durable = state.durable.clone();
        for inode in durable.values() {
            lock_ignoring_poison(inode).lose_power(rng.as_mut());
        }
        state.live = durable;
    }

    /// Makes the next `count` calls of `op` fail.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut f = fs.create(Path::new("f")).unwrap();
    /// fs.fail_next(FaultOp::Append, 2);
    /// assert!(f.append(b"a").is_err());
    /// assert!(f.append(b"a").is_err());
    /// f.append(b"b").unwrap(); // the third call succeeds
    /// assert_eq!(fs.read_file(Path::new("f")).unwrap(), b"b");
    /// ```
    pub fn fail_next(&self, op: FaultOp, count: u64) {
        self.shared
            .state()
            .rules
            .insert(op, FaultRule::FailNext { remaining: count });
    }

    /// Lets `successes` more calls of `op` succeed, then makes every later
    /// call of `op` fail until [`Self::clear_fault`].
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut f = fs.create(Path::new("f")).unwrap();
    /// fs.fail_after(FaultOp::Sync, 1);
    /// f.sync().unwrap();
    /// assert!(f.sync().is_err());
    /// assert!(f.sync().is_err()); // and so on, until the rule is cleared
    /// fs.clear_fault(FaultOp::Sync);
    /// f.sync().unwrap();
    /// ```
    pub fn fail_after(&self, op: FaultOp, successes: u64) {
        self.shared
            .state()
            .rules
            .insert(op, FaultRule::FailAfter { ok_left: successes });
    }

    /// Makes each call of `op` fail with `probability` (clamped to [0, 1]),
    /// drawn from a generator seeded with `seed`: the same calls fail on
    /// every run.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let run = |seed| {
    ///     let fs = FaultInjectionFs::new();
    ///     let mut f = fs.create(Path::new("f")).unwrap();
    ///     fs.fail_randomly(FaultOp::Append, 0.5, seed);
    ///     (0..64).map(|_| f.append(b"x").is_ok()).collect::<Vec<bool>>()
    /// };
    /// let outcomes = run(7);
    /// assert_eq!(outcomes, run(7)); // the same calls fail for the same seed
    /// assert!(outcomes.contains(&true) && outcomes.contains(&false));
    /// ```
    pub fn fail_randomly(&self, op: FaultOp, probability: f64, seed: u64) {
        let p = if probability.is_nan() {
            0.0
        } else {
            probability.clamp(0.0, 1.0)
        };
        let threshold = if p >= 1.0 {
            u64::MAX
        } else {
            (p * u64::MAX as f64) as u64
        };
        // A zero state would make xorshift return zeros forever.
        let rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        self.shared
            .state()
            .rules
            .insert(op, FaultRule::Random { threshold, rng });
    }

    /// Removes the rule for `op`.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.fail_after(FaultOp::Create, 0); // every create fails
    /// fs.fail_after(FaultOp::List, 0);
    /// assert!(fs.create(Path::new("f")).is_err());
    /// fs.clear_fault(FaultOp::Create);
    /// assert!(fs.create(Path::new("f")).is_ok());
    /// assert!(fs.list_dir(Path::new("")).is_err()); // other rules stay
    /// ```
    pub fn clear_fault(&self, op: FaultOp) {
        self.shared.state().rules.remove(&op);
    }

    /// Sets the [`io::ErrorKind`] of the errors injected into `op` from now
    /// on (`Other` until set): [`io::ErrorKind::StorageFull`] simulates a
    /// full disk.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::{io::ErrorKind, path::Path};
    /// let fs = FaultInjectionFs::new();
    /// fs.set_error_kind(FaultOp::Append, ErrorKind::StorageFull);
    /// fs.fail_next(FaultOp::Append, 1);
    /// let err = fs.create(Path::new("f")).unwrap().append(b"x").unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::StorageFull);
    /// assert!(FaultInjectionFs::is_injected(&err));
    /// ```
    pub fn set_error_kind(&self, op: FaultOp, kind: io::ErrorKind) {
        self.shared.state().kinds.insert(op, kind);
    }

    /// Removes every rule.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.fail_after(FaultOp::Create, 0);
    /// fs.fail_after(FaultOp::List, 0);
    /// fs.clear_faults();
    /// assert!(fs.create(Path::new("f")).is_ok());
    /// assert!(fs.list_dir(Path::new("")).is_ok());
    /// ```
    pub fn clear_faults(&self) {
        self.shared.state().rules.clear();
    }

    /// When on, an append that fails by injection first writes the first
    /// half of its bytes (a torn write). Off by default.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.set_torn_appends(true);
    /// let mut f = fs.create(Path::new("f")).unwrap();
    /// fs.fail_next(FaultOp::Append, 1);
    /// assert!(f.append(b"abcd").is_err());
    /// assert_eq!(fs.read_file(Path::new("f")).unwrap(), b"ab"); // half was written
    /// ```
    pub fn set_torn_appends(&self, on: bool) {
        self.shared.state().torn_appends = on;
    }

    /// How many calls of `op` were made (failed ones included).
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.fail_next(FaultOp::Create, 1);
    /// assert!(fs.create(Path::new("f")).is_err());
    /// fs.create(Path::new("f")).unwrap();
    /// fs.open_append(Path::new("f")).unwrap(); // counted as a Create too
    /// assert_eq!(fs.calls(FaultOp::Create), 3);
    /// assert_eq!(fs.calls(FaultOp::Rename), 0);
    /// ```
    pub fn calls(&self, op: FaultOp) -> u64 {
        self.shared.state().stats.get(&op).map_or(0, |s| s.calls)
    }

    /// How many calls of `op` failed by injection.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.fail_randomly(FaultOp::List, 0.5, 1);
    /// let failed = (0..100).filter(|_| fs.list_dir(Path::new("")).is_err()).count();
    /// assert_eq!(fs.injected(FaultOp::List), failed as u64);
    /// assert_eq!(fs.calls(FaultOp::List), 100);
    /// ```
    pub fn injected(&self, op: FaultOp) -> u64 {
        self.shared.state().stats.get(&op).map_or(0, |s| s.injected)
    }

    /// Whether `err` was injected by a [`FaultInjectionFs`].
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FaultOp, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// fs.fail_next(FaultOp::Open, 1);
    /// let injected = fs.open_random(Path::new("missing")).unwrap_err();
    /// let genuine = fs.open_random(Path::new("missing")).unwrap_err(); // NotFound
    /// assert!(FaultInjectionFs::is_injected(&injected));
    /// assert!(!FaultInjectionFs::is_injected(&genuine));
    /// ```
    pub fn is_injected(err: &io::Error) -> bool {
        err.get_ref()
            .is_some_and(|inner| inner.downcast_ref::<InjectedFault>().is_some())
    }

    /// How many bytes of the file at `path` a crash would lose now (`None`
    /// if there is no such file). A file whose entry is not durable loses
    /// all its bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use lsm_demo::env::{FaultInjectionFs, FileSystem};
    /// use std::path::Path;
    /// let fs = FaultInjectionFs::new();
    /// let mut f = fs.create(Path::new("f")).unwrap();
    /// f.append(b"abc").unwrap();
    /// f.sync().unwrap();
    /// assert_eq!(fs.unsynced_bytes(Path::new("f")), Some(3)); // its name is not durable yet
    /// fs.sync_dir(Path::new("")).unwrap();
    /// assert_eq!(fs.unsynced_bytes(Path::new("f")), Some(0));
    /// f.append(b"de").unwrap();
    /// assert_eq!(fs.unsynced_bytes(Path::new("f")), Some(2));
    /// assert_eq!(fs.unsynced_bytes(Path::new("missing")), None);
    /// ```
    pub fn unsynced_bytes(&self, path: &Path) -> Option<u64> {
        let path = normalize(path);
        let state = self.shared.state();
        let inode = state.live.get(&path)?;
        let durable = state
            .durable
            .get(&path)
            .is_some_and(|d| Arc::ptr_eq(d, inode));
        let inode = lock_ignoring_poison(inode);
        Some(if durable {
            inode.unsynced()
        } else {
            inode.data.len()
        } as u64)
    }
}
