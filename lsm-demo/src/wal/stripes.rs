//! A log written into stripes ([`Options::set_wal_stripes`]) as the rest of
//! the engine reads, sizes, moves and deletes it: the log file with its
//! stripes' records in place, read through a
//! [`StripedView`]. A log without stripes is its file.
//!
//! A log's stripes are `NNNNNN.log.1` on, beside it, numbered without a
//! gap. They are moved and deleted before the log file, from the last, so
//! a crash in between leaves the log file with a first run of them. They
//! are made before it: a crash in between leaves stripes without a log
//! file, which nothing reads, whose number no new file takes (see
//! `recovery::Inventory`), and which the next open deletes.
//!
//! [`Options::set_wal_stripes`]: crate::Options::set_wal_stripes

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shared_log_file::{ReadAt, StripedView, stripe_path};

use crate::env::{FileSystem, RandomAccessFile};
use crate::options::MAX_WAL_STRIPES;

/// The stripes of the log at `path` that exist, in order.
pub(crate) fn stripe_paths(fs: &dyn FileSystem, path: &Path) -> Vec<PathBuf> {
    (1..=MAX_WAL_STRIPES)
        .map(|i| stripe_path(path, i))
        .take_while(|p| fs.exists(p))
        .collect()
}

/// Opens the log at `path` for reading: its file, or with stripes the
/// view of the file and its stripes.
pub(crate) fn open_log(fs: &dyn FileSystem, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
    let file = fs.open_random(path)?;
    let stripes = stripe_paths(fs, path);
    if stripes.is_empty() {
        return Ok(file);
    }
    let stripes = stripes
        .iter()
        .map(|p| fs.open_random(p).map(FsFile))
        .collect::<io::Result<_>>()?;
    let view = StripedView::new(FsFile(file), stripes).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("reading the stripes of {}: {e}", path.display()),
        )
    })?;
    Ok(Arc::new(LogView(view)))
}

/// The size of the log at `path`: its file's, or with stripes its view's
/// (the furthest of the file and the stripes' records).
pub(crate) fn log_size(fs: &dyn FileSystem, path: &Path) -> io::Result<u64> {
    if !fs.exists(&stripe_path(path, 1)) {
        return fs.file_size(path);
    }
    open_log(fs, path)?.size()
}

/// Deletes the log at `path`, its stripes first (from the last); `Ok` if
/// it is already gone.
pub(crate) fn remove_log(fs: &dyn FileSystem, path: &Path) -> io::Result<()> {
    for stripe in stripe_paths(fs, path).iter().rev() {
        fs.remove_file(stripe)?;
    }
    match fs.remove_file(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        done => done,
    }
}

/// Renames the log at `path` to `to`, its stripes first (from the last)
/// to `to`'s stripe names.
pub(crate) fn rename_log(fs: &dyn FileSystem, path: &Path, to: &Path) -> io::Result<()> {
    let stripes = stripe_paths(fs, path);
    for (i, stripe) in stripes.iter().enumerate().rev() {
        fs.rename(stripe, &stripe_path(to, i + 1))?;
    }
    fs.rename(path, to)
}

/// How many entries the stripe at `path` holds, read without its log
/// file; [`io::ErrorKind::InvalidData`] for a file that is not a stripe.
pub(crate) fn stripe_entries(fs: &dyn FileSystem, path: &Path) -> io::Result<u64> {
    let stripe = FsFile(fs.open_random(path)?);
    let no_file = FsFile(Arc::new(Vec::new()));
    let view = StripedView::new(no_file, vec![stripe])?;
    Ok(view.stripe_ends().iter().map(|end| end.entries).sum())
}

/// A file of the engine's file system, as a stripe view reads it.
#[derive(Debug)]
struct FsFile(Arc<dyn RandomAccessFile>);

impl ReadAt for FsFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.0.read_at(offset + done as u64, &mut buf[done..])? {
                0 => break,
                n => done += n,
            }
        }
        Ok(done)
    }

    fn size(&self) -> io::Result<u64> {
        self.0.size()
    }
}

/// A striped log read as one file.
#[derive(Debug)]
struct LogView(StripedView<FsFile>);

impl RandomAccessFile for LogView {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read_at(offset, buf)
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.0.len())
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::env::{FaultInjectionFs, FileSystem};
    use crate::filename::{FileKind, log_path, parse_file_name};
    use crate::{DB, Options};

    /// The logs and the stripes in `dir`, by log number.
    fn logs_and_stripes(fs: &dyn FileSystem, dir: &Path) -> (Vec<u64>, Vec<u64>) {
        let (mut logs, mut stripes) = (Vec::new(), Vec::new());
        for name in fs.list_dir(dir).unwrap() {
            match parse_file_name(&name) {
                Some(FileKind::Log(n)) => logs.push(n),
                Some(FileKind::LogStripe(n)) => stripes.push(n),
                _ => {}
            }
        }
        (logs, stripes)
    }

    /// Two threads write across memtable switches (into each log's file
    /// until they meet there, then into its two stripes); retired logs go
    /// with their stripes, a reopen without stripes replays them, and
    /// `destroy` deletes them.
    #[test]
    fn stripes_are_read_retired_and_deleted_with_their_log() {
        let fs = Arc::new(FaultInjectionFs::new());
        let dir = Path::new("/db");
        let mut o = Options::default();
        o.create_if_missing(true)
            .set_wal_stripes(2)
            .set_write_buffer_size(64 << 10)
            .set_max_write_buffer_number(8);
        let db = DB::open_with_fs(&o, dir, fs.clone()).unwrap();
        std::thread::scope(|s| {
            for t in 0..2 {
                let db = &db;
                s.spawn(move || {
                    for i in 0..3000u32 {
                        db.put(format!("{t}-{i:05}"), [b'v'; 50]).unwrap();
                    }
                });
            }
        });
        let (logs, stripes) = logs_and_stripes(&*fs, dir);
        assert!(!stripes.is_empty(), "the records went to stripes");
        assert!(
            stripes.iter().all(|n| logs.contains(n)),
            "a stripe without its log: {logs:?} {stripes:?}"
        );
        // The current log reads at least as far as its file (further where
        // its last records are in stripes).
        let current = crate::filename::log_path(dir, *logs.last().unwrap());
        assert!(log_size(&*fs, &current).unwrap() >= fs.file_size(&current).unwrap());
        drop(db);

        o.set_wal_stripes(0);
        let db = DB::open_with_fs(&o, dir, fs.clone()).unwrap();
        for t in 0..2 {
            for i in (0..3000u32).step_by(97) {
                let key = format!("{t}-{i:05}");
                assert!(db.get(&key).unwrap().is_some(), "{key}");
            }
        }
        db.flush().unwrap();
        drop(db);
        let db = DB::open_with_fs(&o, dir, fs.clone()).unwrap();
        drop(db);
        let (logs, stripes) = logs_and_stripes(&*fs, dir);
        assert!(
            stripes.is_empty(),
            "retired with their logs: {logs:?} {stripes:?}"
        );

        o.set_wal_stripes(3);
        let db = DB::open_with_fs(&o, dir, fs.clone()).unwrap();
        db.put(b"k", b"v").unwrap();
        drop(db);
        assert!(!logs_and_stripes(&*fs, dir).1.is_empty());
        DB::destroy_with_fs(&o, dir, fs.clone()).unwrap();
        assert!(!fs.exists(dir) || logs_and_stripes(&*fs, dir) == (Vec::new(), Vec::new()));
    }

    /// A stripe file of one entry, `data` at `offset`, as the stripes'
    /// writers write them.
    fn stripe_holding(offset: u64, data: &[u8]) -> Vec<u8> {
        let mut header = Vec::new();
        header.extend_from_slice(&offset.to_le_bytes());
        header.extend_from_slice(&(data.len() as u32).to_le_bytes());
        let crc = crc32c::crc32c(&header)
            .rotate_right(15)
            .wrapping_add(0xa282_ead8);
        [b"SLFSTRP1", &header[..], &crc.to_le_bytes(), data].concat()
    }

    /// Stripes that a crash while their log was made left without its file
    /// go at the next open. A stripe without its log that holds an entry,
    /// or is no stripe, stays and is named as unknown.
    #[test]
    fn an_open_deletes_the_stripes_of_a_log_never_made() {
        let fs = Arc::new(FaultInjectionFs::new());
        let dir = Path::new("/db");
        let mut o = Options::default();
        o.create_if_missing(true).set_wal_stripes(2);
        let db = DB::open_with_fs(&o, dir, fs.clone()).unwrap();
        db.put(b"k", b"v").unwrap();
        drop(db);

        let never_made = log_path(dir, 100);
        drop(fs.create_striped(&never_made, 2).unwrap());
        fs.remove_file(&never_made).unwrap();
        let holding = stripe_path(&log_path(dir, 101), 1);
        let record = stripe_holding(0, b"record");
        assert_eq!(stripe_entries(&*fs, &holding).ok(), None, "not there yet");
        fs.create(&holding).unwrap().append(&record).unwrap();
        assert_eq!(stripe_entries(&*fs, &holding).unwrap(), 1);
        let foreign = stripe_path(&log_path(dir, 102), 1);
        fs.create(&foreign)
            .unwrap()
            .append(b"not a stripe")
            .unwrap();

        let db = DB::open_with_fs(&o, dir, fs.clone()).unwrap();
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
        assert_eq!(
            db.stats().recovery.unknown_files,
            [holding.clone(), foreign.clone()]
        );
        db.put(b"k2", b"v2").unwrap();
        drop(db);
        assert!(stripe_paths(&*fs, &never_made).is_empty());
        assert!(fs.exists(&holding) && fs.exists(&foreign));
        let (logs, _) = logs_and_stripes(&*fs, dir);
        assert!(
            logs.iter().all(|&n| n > 102),
            "no new log took a stripe's number: {logs:?}"
        );
    }

    /// A log's stripes move and go with it, from the last, and a log
    /// without stripes is its file.
    #[test]
    fn a_log_moves_and_goes_with_its_stripes() {
        let fs = FaultInjectionFs::new();
        fs.create_dir_all(Path::new("/d/lost")).unwrap();
        let path = Path::new("/d/000005.log");
        let log = fs.create_striped(path, 3).unwrap();
        let shared = log.shared_writes().unwrap();
        // SAFETY: one writer, and nobody appends or syncs meanwhile.
        unsafe { shared.write_at(100, b"record") }.unwrap();
        assert_eq!(stripe_paths(&fs, path).len(), 3);
        assert_eq!(log_size(&fs, path).unwrap(), 106);
        let mut bytes = vec![0; 6];
        open_log(&fs, path)
            .unwrap()
            .read_exact_at(100, &mut bytes)
            .unwrap();
        assert_eq!(bytes, b"record");
        drop((shared, log));

        let to = Path::new("/d/lost/000005.log");
        rename_log(&fs, path, to).unwrap();
        assert!(stripe_paths(&fs, path).is_empty() && !fs.exists(path));
        assert_eq!(stripe_paths(&fs, to).len(), 3);
        assert_eq!(log_size(&fs, to).unwrap(), 106);
        remove_log(&fs, to).unwrap();
        assert!(fs.list_dir(Path::new("/d/lost")).unwrap().is_empty());
        remove_log(&fs, to).unwrap(); // gone already

        // Without stripes: the file.
        let plain = Path::new("/d/000006.log");
        fs.create(plain).unwrap().append(b"abc").unwrap();
        assert_eq!(log_size(&fs, plain).unwrap(), 3);
        remove_log(&fs, plain).unwrap();
        assert!(!fs.exists(plain));
    }
}
