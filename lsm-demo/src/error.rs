//! The engine's error type.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Everything that can go wrong in the engine.
///
/// I/O errors are shared (`Arc`) so that every writer of a group that failed
/// on one log write receives the same error.
///
/// # Examples
///
/// Match on the variant to tell the cases apart:
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// use lsm_demo::{DB, Error, Options, WriteOptions};
///
/// let missing = dir.path().join("missing");
/// let err = DB::open(&Options::default(), &missing).unwrap_err();
/// assert!(matches!(&err, Error::NotFound(p) if *p == missing));
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
        /// What the engine was doing.
        context: String,
        /// The underlying error.
        source: std::sync::Arc<io::Error>,
    },
    /// Stored data failed a check: a bad checksum, a truncated file, a
    /// malformed record.
    Corruption(String),
    /// An argument or option is out of range.
    InvalidArgument(String),
    /// The database directory is missing and `create_if_missing` is off.
    NotFound(PathBuf),
    /// The path exists but is not a directory.
    NotADirectory(PathBuf),
    /// Another `DB` (in this or another process) holds the directory's lock.
    Locked(PathBuf),
    /// A write with `no_slowdown` arrived during a write stall.
    WriteStall,
    /// An earlier background failure made the database read-only; reopen it.
    BackgroundError(String),
}

impl Error {
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source: std::sync::Arc::new(source),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { context, source } => write!(f, "I/O error while {context}: {source}"),
            Error::Corruption(m) => write!(f, "corruption: {m}"),
            Error::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
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
            Error::BackgroundError(m) => {
                write!(f, "database is read-only after a background error: {m}")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(&**source),
            _ => None,
        }
    }
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
