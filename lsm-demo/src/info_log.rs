//! The info log: a text file `LOG` in the database directory with one line
//! per event (open, recovery and every record it dropped, flushes,
//! compactions, background errors, files set aside or deleted), as RocksDB
//! writes one. The previous open's log is kept as `LOG.old`.
//!
//! Writing it is best effort: a failure to write a line never fails the
//! operation it describes (the event also shows in the result or the
//! counters), and after the first failure the log stops.

use parking_lot::Mutex;
use std::fmt;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::env::{FileSystem, WritableFile};
use crate::filename::{INFO_LOG_FILE, OLD_INFO_LOG_FILE};

/// The info log of one open database.
#[derive(Debug)]
pub(crate) struct InfoLog {
    file: Mutex<Option<Box<dyn WritableFile>>>,
}

impl InfoLog {
    /// Starts `LOG` in `dir`, keeping the previous one as `LOG.old`.
    pub(crate) fn open(fs: &dyn FileSystem, dir: &Path) -> InfoLog {
        let path = dir.join(INFO_LOG_FILE);
        if fs.exists(&path) {
            let _ = fs.rename(&path, &dir.join(OLD_INFO_LOG_FILE));
        }
        InfoLog {
            file: Mutex::new(fs.create(&path).ok()),
        }
    }

    /// Appends one line: a UTC timestamp, then `message`.
    pub(crate) fn log(&self, message: fmt::Arguments<'_>) {
        let mut slot = self.file.lock();
        let Some(file) = slot.as_mut() else { return };
        let line = format!("{} {message}\n", timestamp(SystemTime::now()));
        if file
            .append(line.as_bytes())
            .and_then(|()| file.flush())
            .is_err()
        {
            *slot = None;
        }
    }
}

/// Writes a line to an [`InfoLog`] with `format!` arguments.
macro_rules! info {
    ($log:expr, $($arg:tt)*) => {
        $log.log(format_args!($($arg)*))
    };
}
pub(crate) use info;

/// `YYYY/MM/DD-hh:mm:ss.uuuuuu` in UTC, the form of RocksDB's info log.
fn timestamp(now: SystemTime) -> String {
    let since = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (year, month, day) = civil_from_days(secs / 86_400);
    let rem = secs % 86_400;
    format!(
        "{year:04}/{month:02}/{day:02}-{:02}:{:02}:{:02}.{:06}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        since.subsec_micros()
    )
}

/// The proleptic Gregorian date of day `days` after 1970-01-01 (Howard
/// Hinnant's `civil_from_days`, for non-negative days).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::FaultInjectionFs;
    use std::time::Duration;

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        assert_eq!(timestamp(UNIX_EPOCH), "1970/01/01-00:00:00.000000");
        // 2024-02-29 12:34:56.789012 UTC (a leap day).
        let t = UNIX_EPOCH + Duration::new(1_709_210_096, 789_012_000);
        assert_eq!(timestamp(t), "2024/02/29-12:34:56.789012");
        let t = UNIX_EPOCH + Duration::from_secs(1_798_761_599); // 2026-12-31 23:59:59
        assert_eq!(timestamp(t), "2026/12/31-23:59:59.000000");
    }

    #[test]
    fn lines_go_to_log_and_the_previous_open_to_log_old() {
        let fs = FaultInjectionFs::new();
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let first = InfoLog::open(&fs, dir);
        info!(first, "first open, {} files", 3);
        drop(first);
        let second = InfoLog::open(&fs, dir);
        info!(second, "second open");
        let old = String::from_utf8(fs.read_file(&dir.join("LOG.old")).unwrap()).unwrap();
        let new = String::from_utf8(fs.read_file(&dir.join("LOG")).unwrap()).unwrap();
        assert!(old.ends_with(" first open, 3 files\n"), "{old}");
        assert!(
            new.ends_with(" second open\n") && new.lines().count() == 1,
            "{new}"
        );
    }
}
