//! The names of the files in a database directory, parsed strictly.
//!
//! The files themselves are listed in [`crate::recovery`].
//!
//! A numbered name is ours only in the form the engine writes (at least six
//! digits, no other leading zeros): `1.log` or `0000001.log` are somebody
//! else's files, never replayed and never deleted.

use std::path::{Path, PathBuf};

use crate::manifest::{MANIFEST_FILE, MANIFEST_TEMP_FILE};

/// The advisory lock file.
pub(crate) const LOCK_FILE: &str = "LOCK";
/// The info log of the current open.
pub(crate) const INFO_LOG_FILE: &str = "LOG";
/// The info log of the previous open.
pub(crate) const OLD_INFO_LOG_FILE: &str = "LOG.old";
/// The folder damaged files are moved to.
pub(crate) const LOST_DIR: &str = "lost";

/// What a file name in a database directory says about the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// A write-ahead log.
    Log(u64),
    /// A stripe of a write-ahead log (`000007.log.1`: see
    /// [`Options::set_wal_stripes`](crate::Options::set_wal_stripes)).
    LogStripe(u64),
    /// A table file.
    Table(u64),
    /// The manifest.
    Manifest,
    /// A manifest being written.
    ManifestTemp,
    /// The lock file.
    Lock,
    /// The info log (current or previous).
    InfoLog,
}

/// The name of log `number`.
pub(crate) fn log_file_name(number: u64) -> String {
    format!("{number:06}.log")
}

/// The name of table file `number`.
pub(crate) fn table_file_name(number: u64) -> String {
    format!("{number:06}.sst")
}

/// The path of log `number` in `dir`.
pub(crate) fn log_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(log_file_name(number))
}

/// The path of table file `number` in `dir`.
pub(crate) fn table_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(table_file_name(number))
}

/// What `name` is, if it is a name the engine writes; `None` for anything
/// else, including numbered names in a form the engine never writes.
pub(crate) fn parse_file_name(name: &str) -> Option<FileKind> {
    match name {
        MANIFEST_FILE => return Some(FileKind::Manifest),
        MANIFEST_TEMP_FILE => return Some(FileKind::ManifestTemp),
        LOCK_FILE => return Some(FileKind::Lock),
        INFO_LOG_FILE | OLD_INFO_LOG_FILE => return Some(FileKind::InfoLog),
        _ => {}
    }
    let (stem, ext) = name.split_once('.')?;
    if !stem.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let number: u64 = stem.parse().ok()?;
    let kind = match ext {
        "log" => FileKind::Log(number),
        "sst" => FileKind::Table(number),
        _ => {
            // A stripe: `log.` and a stripe number as `stripe_path` writes
            // it (from 1, no leading zeros).
            let index = ext.strip_prefix("log.")?;
            let strict = index.bytes().all(|b| b.is_ascii_digit())
                && !index.starts_with('0')
                && index.parse::<u32>().is_ok();
            if !strict {
                return None;
            }
            FileKind::LogStripe(number)
        }
    };
    // Strict: only the exact form `log_file_name` / `table_file_name` write.
    (format!("{number:06}") == stem).then_some(kind)
}

/// Whether `name` looks like a data file of some key-value store: one of our
/// logs or tables, a numbered file in another form, or the files by which
/// RocksDB and LevelDB recognise a database. A directory holding one and no
/// manifest of ours is not opened as a new database.
pub(crate) fn looks_like_database_file(name: &str) -> bool {
    if matches!(
        parse_file_name(name),
        Some(FileKind::Log(_) | FileKind::Table(_) | FileKind::Manifest)
    ) {
        return true;
    }
    let ext = name.rsplit_once('.').map(|(_, ext)| ext);
    matches!(ext, Some("log" | "sst" | "ldb" | "blob"))
        || matches!(name, "CURRENT" | "IDENTITY")
        || name.starts_with("MANIFEST-")
        || name.starts_with("OPTIONS-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_names_parse_only_in_the_form_written() {
        assert_eq!(parse_file_name("000001.log"), Some(FileKind::Log(1)));
        assert_eq!(
            parse_file_name("000001.log.1"),
            Some(FileKind::LogStripe(1))
        );
        assert_eq!(
            parse_file_name("000042.log.16"),
            Some(FileKind::LogStripe(42))
        );
        assert_eq!(parse_file_name("000123.sst"), Some(FileKind::Table(123)));
        assert_eq!(
            parse_file_name("1234567.sst"),
            Some(FileKind::Table(1_234_567))
        );
        assert_eq!(
            parse_file_name(&log_file_name(u64::MAX)),
            Some(FileKind::Log(u64::MAX))
        );
        for stray in [
            "1.log",
            "0000001.log",
            "01234567.sst",
            "000001.LOG",
            "000001.log.bak",
            "000001.log.0",
            "000001.log.01",
            "000001.log.",
            "1.log.1",
            "+00001.log",
            ".log",
            "000001",
            "99999999999999999999.log",
            "000001.ldb",
        ] {
            assert_eq!(parse_file_name(stray), None, "{stray}");
        }
    }

    #[test]
    fn fixed_names_parse() {
        assert_eq!(parse_file_name("MANIFEST"), Some(FileKind::Manifest));
        assert_eq!(
            parse_file_name("MANIFEST.tmp"),
            Some(FileKind::ManifestTemp)
        );
        assert_eq!(parse_file_name("LOCK"), Some(FileKind::Lock));
        assert_eq!(parse_file_name("LOG"), Some(FileKind::InfoLog));
        assert_eq!(parse_file_name("LOG.old"), Some(FileKind::InfoLog));
        assert_eq!(parse_file_name("MANIFEST-000005"), None);
        assert_eq!(parse_file_name("lost"), None);
    }

    #[test]
    fn database_files_of_other_stores_are_recognised() {
        for name in [
            "000001.log",
            "1.log",
            "000007.sst",
            "000007.ldb",
            "CURRENT",
            "IDENTITY",
            "MANIFEST",
            "MANIFEST-000005",
            "OPTIONS-000009",
            "000010.blob",
        ] {
            assert!(looks_like_database_file(name), "{name}");
        }
        for name in [
            "LOCK",
            "LOG",
            "LOG.old",
            "MANIFEST.tmp",
            "notes.txt",
            "lost",
            ".hidden",
        ] {
            assert!(!looks_like_database_file(name), "{name}");
        }
    }
}
