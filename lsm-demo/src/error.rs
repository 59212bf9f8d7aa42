//! The engine's error type, and its kinds under the `rocksdb` crate's names.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

/// Everything that can go wrong in the engine.
///
/// Match on the variant for the details, or on [`Error::kind`] for the
/// class of failure under the `rocksdb` crate's names. I/O errors are shared
/// (`Arc`) so that every writer of a group that failed on one log write
/// receives the same error, and stay reachable through
/// [`std::error::Error::source`].
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, Error, ErrorKind, Options, WriteOptions};
///
/// let missing = dir.path().join("missing");
/// let err = DB::open(&Options::default(), &missing).unwrap_err();
/// assert!(matches!(&err, Error::NotFound(p) if *p == missing));
/// assert_eq!(err.kind(), ErrorKind::InvalidArgument); // as RocksDB says it
///
/// let db = DB::open_default(dir.path()).unwrap();
/// let second = DB::open_default(dir.path()).unwrap_err();
/// assert!(matches!(second, Error::Locked(_)));
///
/// let mut wo = WriteOptions::default();
/// wo.set_sync(true);
/// wo.disable_wal(true); // nothing to sync
/// let err = db.put_opt(b"k", b"v", &wo).unwrap_err();
/// assert!(matches!(err, Error::InvalidArgument(_)));
/// assert!(err.to_string().starts_with("invalid argument: "));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Error {
    /// A file-system call failed.
    Io {
        /// What the engine was doing, naming the file.
        context: String,
        /// The underlying error.
        source: Arc<io::Error>,
    },
    /// The file system is full (`ENOSPC`). Nothing acknowledged is lost:
    /// the database waits for space and resumes on its own when a
    /// background step failed, or on [`DB::resume`](crate::DB::resume).
    NoSpace {
        /// What the engine was doing, naming the file.
        context: String,
        /// The underlying error.
        source: Arc<io::Error>,
    },
    /// Stored data failed a check: a bad checksum, a truncated file, a
    /// malformed record, a manifest that contradicts itself. The message
    /// names the file and, where there is one, the offset.
    Corruption(String),
    /// An argument or option is out of range, or the directory is not a
    /// database this engine may open as asked.
    InvalidArgument(String),
    /// The operation is not supported with the database's options (a
    /// range deletion in a database with its own comparator).
    NotSupported(String),
    /// The database directory is missing and `create_if_missing` is off.
    NotFound(PathBuf),
    /// The path exists but is not a directory.
    NotADirectory(PathBuf),
    /// Another `DB` (in this or another process) holds the directory's lock.
    Locked(PathBuf),
    /// A write with `no_slowdown` arrived during a write stall.
    WriteStall,
    /// A wait with a time limit ended before what it waited for
    /// ([`DB::wait_for_compact`](crate::DB::wait_for_compact)).
    TimedOut(String),
    /// The operation was abandoned and had no effect (the leader of its
    /// write group panicked).
    Aborted(String),
    /// The logs do not hold the sequence number asked for
    /// ([`DB::get_updates_since`](crate::DB::get_updates_since)): a flush
    /// retired them, or it is not written yet.
    UpdatesUnavailable(String),
    /// An earlier background failure (a log write, a flush, a compaction)
    /// stopped writes; the error is the one that stopped them. See
    /// [`DB::resume`](crate::DB::resume).
    BackgroundError(Arc<Error>),
}

/// The class of an [`Error`], under the `rocksdb` crate's names (RocksDB's
/// `Status::Code`), plus [`ErrorKind::NoSpace`], which RocksDB reports as an
/// I/O error with a sub-code.
///
/// The engine returns `NotFound` never for a key (a missing key is
/// `Ok(None)`), and never returns the kinds that belong to features it does
/// not have (merge operators, transactions, column families); they exist so
/// that code written for the `rocksdb` crate compiles unchanged.
///
/// # Examples
///
/// ```
/// use lsm_demo::{Error, ErrorKind};
/// let stall = Error::WriteStall;
/// assert_eq!(stall.kind(), ErrorKind::Incomplete); // RocksDB's "Write stall" status
/// assert_eq!(Error::Corruption("bad block".into()).kind(), ErrorKind::Corruption);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Something asked for does not exist.
    NotFound,
    /// Stored data failed a check.
    Corruption,
    /// The operation is not supported.
    NotSupported,
    /// A bad argument or option, or a directory that cannot be opened as asked.
    InvalidArgument,
    /// A file-system call failed, or the lock is held elsewhere.
    IOError,
    /// The file system is full.
    NoSpace,
    /// (Merge operators; not produced by this engine.)
    MergeInProgress,
    /// The operation could not finish now: a `no_slowdown` write during a stall.
    Incomplete,
    /// The database is closing.
    ShutdownInProgress,
    /// (Timeouts; not produced by this engine.)
    TimedOut,
    /// The operation was abandoned without effect.
    Aborted,
    /// (Transactions; not produced by this engine.)
    Busy,
    /// (Transactions; not produced by this engine.)
    Expired,
    /// (Transactions; not produced by this engine.)
    TryAgain,
    /// (Compaction limits; not produced by this engine.)
    CompactionTooLarge,
    /// (Column families; not produced by this engine.)
    ColumnFamilyDropped,
    /// Anything else.
    Unknown,
}

impl Error {
    /// An I/O error while doing `context`; `ENOSPC` becomes
    /// [`Error::NoSpace`].
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Error {
        let context = context.into();
        let source = Arc::new(source);
        if source.kind() == io::ErrorKind::StorageFull {
            Error::NoSpace { context, source }
        } else {
            Error::Io { context, source }
        }
    }

    /// The class of this error, under the `rocksdb` crate's names.
    ///
    /// A missing directory is `InvalidArgument`, as RocksDB reports it
    /// ("does not exist (create_if_missing is false)"); a held lock is
    /// `IOError`; a background error has the kind of the error that caused it.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use lsm_demo::{DB, ErrorKind};
    /// let db = DB::open_default(dir.path()).unwrap();
    /// let err = DB::open_default(dir.path()).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::IOError); // the lock is held
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Io { .. } | Error::NotADirectory(_) | Error::Locked(_) => ErrorKind::IOError,
            Error::NoSpace { .. } => ErrorKind::NoSpace,
            Error::Corruption(_) => ErrorKind::Corruption,
            Error::NotSupported(_) => ErrorKind::NotSupported,
            Error::InvalidArgument(_) | Error::NotFound(_) => ErrorKind::InvalidArgument,
            Error::WriteStall => ErrorKind::Incomplete,
            Error::TimedOut(_) => ErrorKind::TimedOut,
            Error::Aborted(_) => ErrorKind::Aborted,
            Error::UpdatesUnavailable(_) => ErrorKind::NotFound,
            Error::BackgroundError(cause) => cause.kind(),
        }
    }

    /// The message, as the `rocksdb` crate's `Error::into_string` gives it.
    ///
    /// # Examples
    ///
    /// ```
    /// let err = lsm_demo::Error::InvalidArgument("key too long".into());
    /// assert_eq!(err.into_string(), "invalid argument: key too long");
    /// ```
    pub fn into_string(self) -> String {
        self.to_string()
    }
}

impl PartialEq for Error {
    /// Two errors are equal when they have the same kind and message (the
    /// underlying I/O errors are compared by their text).
    fn eq(&self, other: &Self) -> bool {
        self.kind() == other.kind() && self.to_string() == other.to_string()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { context, source } => write!(f, "I/O error while {context}: {source}"),
            Error::NoSpace { context, source } => {
                write!(f, "no space left while {context}: {source}")
            }
            Error::Corruption(m) => write!(f, "corruption: {m}"),
            Error::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            Error::NotSupported(m) => write!(f, "not supported: {m}"),
            Error::NotFound(p) => write!(
                f,
                "database {} does not exist (set create_if_missing to create it)",
                p.display()
            ),
            Error::NotADirectory(p) => write!(f, "{} exists and is not a directory", p.display()),
            Error::Locked(p) => {
                write!(
                    f,
                    "database {} is already open (lock file held)",
                    p.display()
                )
            }
            Error::WriteStall => write!(f, "write stall: a no_slowdown write was refused"),
            Error::TimedOut(m) => write!(f, "timed out: {m}"),
            Error::Aborted(m) => write!(f, "aborted: {m}"),
            Error::UpdatesUnavailable(m) => write!(f, "not found: {m}"),
            Error::BackgroundError(cause) => {
                write!(f, "database is read-only after a background error: {cause}")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } | Error::NoSpace { source, .. } => Some(&**source),
            Error::BackgroundError(cause) => Some(&**cause),
            _ => None,
        }
    }
}

/// The engine's result type.
///
/// # Examples
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, ErrorKind, MAX_KEY_LEN, Result};
///
/// fn rename(db: &DB, from: &[u8], to: &[u8]) -> Result<()> {
///     let value = db.get(from)?.unwrap_or_default();
///     db.put(to, value)?;
///     db.delete(from)
/// }
///
/// let db = DB::open_default(dir.path())?;
/// db.put(b"old", b"v")?;
/// rename(&db, b"old", b"new")?;
/// assert_eq!(db.get(b"new")?.as_deref(), Some(&b"v"[..]));
/// let err = rename(&db, b"new", &vec![0; MAX_KEY_LEN + 1]).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InvalidArgument);
/// # Ok::<(), lsm_demo::Error>(())
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enospc_is_no_space_and_keeps_its_source() {
        let full = io::Error::from_raw_os_error(libc::ENOSPC);
        let err = Error::io("writing /db/000007.sst", full);
        assert_eq!(err.kind(), ErrorKind::NoSpace);
        assert!(err.to_string().contains("/db/000007.sst"), "{err}");
        let source = std::error::Error::source(&err).unwrap();
        let io = source.downcast_ref::<io::Error>().unwrap();
        assert_eq!(io.raw_os_error(), Some(libc::ENOSPC));
        let other = Error::io("reading", io::Error::other("boom"));
        assert_eq!(other.kind(), ErrorKind::IOError);
    }

    #[test]
    fn a_background_error_has_the_kind_and_source_of_its_cause() {
        let cause = Error::io("flushing", io::Error::from_raw_os_error(libc::ENOSPC));
        let err = Error::BackgroundError(Arc::new(cause.clone()));
        assert_eq!(err.kind(), ErrorKind::NoSpace);
        let source = std::error::Error::source(&err).unwrap();
        assert_eq!(source.to_string(), cause.to_string());
        assert_eq!(err, err.clone());
        assert_ne!(err, cause);
    }
}
