//! What can go wrong in a command of the command line, and the exit status
//! each failure gives.

use std::fmt;
use std::io;

/// A command's failure. `main` prints it after `error: ` and exits with
/// [`Error::exit_code`].
///
/// The message ([`Display`](fmt::Display)) already ends with the message of
/// the underlying error, if any, which [`source`](std::error::Error::source)
/// also returns: print one or the other, not the whole chain.
#[derive(Debug)]
pub enum Error {
    /// A flag's value is out of range, conflicts with another flag, or
    /// names something the command refuses (a `--db` that is not a database
    /// of ours). Exit status 2, as clap's own usage errors.
    Usage(String),
    /// The engine failed.
    Engine {
        /// What the command was doing, if it says more than the engine's
        /// own message.
        context: Option<String>,
        /// The engine's error.
        source: lsm_demo::Error,
    },
    /// A file-system or process call of the command itself failed.
    Io {
        /// What the command was doing, naming the file.
        context: String,
        /// The underlying error.
        source: io::Error,
    },
    /// `stress`, `crashtest` or `verify` found the database wrong: a lost
    /// acknowledged write, a value never written, a damaged file; or a
    /// `stress` child of `crashtest` died before its kill.
    Verification(String),
    /// A benchmark's operation failed.
    Benchmark {
        /// db_bench's name of the benchmark.
        name: String,
        /// The engine's error.
        source: lsm_demo::Error,
    },
}

impl Error {
    /// A usage error with this message (exit status 2).
    pub fn usage(message: impl Into<String>) -> Error {
        Error::Usage(message.into())
    }

    /// The engine's `source` while doing `context`.
    pub fn engine(context: impl Into<String>, source: lsm_demo::Error) -> Error {
        Error::Engine {
            context: Some(context.into()),
            source,
        }
    }

    /// The I/O error `source` while doing `context`.
    pub fn io(context: impl Into<String>, source: io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// The same error, its message prefixed with `what: `.
    pub fn context(self, what: impl fmt::Display) -> Error {
        match self {
            Error::Usage(m) => Error::Usage(format!("{what}: {m}")),
            Error::Verification(m) => Error::Verification(format!("{what}: {m}")),
            Error::Engine { context, source } => Error::Engine {
                context: Some(match context {
                    Some(c) => format!("{what}: {c}"),
                    None => what.to_string(),
                }),
                source,
            },
            Error::Io { context, source } => Error::Io {
                context: format!("{what}: {context}"),
                source,
            },
            Error::Benchmark { name, source } => Error::Benchmark {
                name: format!("{what}: {name}"),
                source,
            },
        }
    }

    /// The process's exit status for this error: 2 for a usage error, as
    /// clap's, 1 for any other failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => 2,
            _ => 1,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m) | Error::Verification(m) => f.write_str(m),
            Error::Engine {
                context: Some(c),
                source,
            } => write!(f, "{c}: {source}"),
            Error::Engine {
                context: None,
                source,
            } => write!(f, "{source}"),
            Error::Io { context, source } => write!(f, "{context}: {source}"),
            Error::Benchmark { name, source } => write!(f, "{name}: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Usage(_) | Error::Verification(_) => None,
            Error::Engine { source, .. } | Error::Benchmark { source, .. } => Some(source),
            Error::Io { source, .. } => Some(source),
        }
    }
}

impl From<lsm_demo::Error> for Error {
    /// The engine's error, with no more context than its own message.
    fn from(source: lsm_demo::Error) -> Error {
        Error::Engine {
            context: None,
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn messages_sources_and_exit_codes() {
        let usage = Error::usage("--num must be at least 1");
        assert_eq!(usage.to_string(), "--num must be at least 1");
        assert_eq!(usage.exit_code(), 2);
        assert!(usage.source().is_none());

        let engine = lsm_demo::Error::Corruption("bad block".into());
        let bare = Error::from(engine.clone());
        assert_eq!(bare.to_string(), engine.to_string());
        assert_eq!(bare.exit_code(), 1);
        let opening = Error::engine("opening /db", engine.clone());
        assert_eq!(opening.to_string(), format!("opening /db: {engine}"));
        let source = opening.source().unwrap();
        assert_eq!(source.to_string(), engine.to_string());
        assert!(source.downcast_ref::<lsm_demo::Error>().is_some());

        let io = Error::io("writing out.json", io::Error::other("disk on fire"));
        assert_eq!(io.to_string(), "writing out.json: disk on fire");
        assert!(io.source().unwrap().downcast_ref::<io::Error>().is_some());
        assert_eq!(io.exit_code(), 1);

        let lost = Error::Verification("3 keys differ from the expected state".into());
        assert_eq!(lost.exit_code(), 1);
        assert!(lost.source().is_none());

        let bench = Error::Benchmark {
            name: "fillrandom".into(),
            source: engine.clone(),
        };
        assert_eq!(bench.to_string(), format!("fillrandom: {engine}"));
        assert!(bench.source().is_some());
    }

    #[test]
    fn context_prefixes_every_kind() {
        let engine = lsm_demo::Error::Corruption("bad block".into());
        for (e, want) in [
            (Error::usage("u"), "round 1: u".to_string()),
            (Error::Verification("v".into()), "round 1: v".into()),
            (Error::from(engine.clone()), format!("round 1: {engine}")),
            (
                Error::engine("reopening", engine.clone()),
                format!("round 1: reopening: {engine}"),
            ),
            (
                Error::io("killing stress", io::Error::other("gone")),
                "round 1: killing stress: gone".into(),
            ),
        ] {
            let code = e.exit_code();
            let e = e.context("round 1");
            assert_eq!(e.to_string(), want);
            assert_eq!(e.exit_code(), code, "{want}");
        }
    }
}
