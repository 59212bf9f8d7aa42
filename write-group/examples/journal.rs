//! A tiny journal with group commit: threads append records to one file,
//! and each group of writers shares one `write` and one `fdatasync`.
//!
//! Every `append` returns once its record is durable, yet the file is
//! synced once per group, not once per record.
//!
//! `cargo run -p write-group --example journal`

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use write_group::{Commit, GroupMembers, Lead, LeaderCell, Options, WriteGroup};

/// The file and a buffer reused by each group; only the group's leader
/// touches them, so they live in a `LeaderCell` and need no lock.
struct Log {
    file: File,
    buf: Vec<u8>,
}

struct Journal {
    group: WriteGroup<Vec<u8>, Journal>,
    log: LeaderCell<Log>,
}

impl Commit<Vec<u8>> for Journal {
    type Token = ();
    /// `io::Error` is not `Clone`; every member of a failed group gets a
    /// share of it.
    type Error = Arc<io::Error>;

    fn size(&self, record: &Vec<u8>) -> usize {
        record.len()
    }

    /// A sync is expensive: let the leader wait a little for writers that
    /// are about to arrive, so that they share it.
    fn gather_window(&self, _record: &Vec<u8>) -> Duration {
        Duration::from_micros(200)
    }

    fn lead(&self, group: &mut GroupMembers<'_, Vec<u8>>) -> Result<Lead<()>, Self::Error> {
        let (log, members) = self.log.get_with_members(group);
        log.buf.clear();
        for record in members.iter() {
            // A record is its length (4 bytes, little-endian), then its bytes.
            log.buf
                .extend_from_slice(&(record.len() as u32).to_le_bytes());
            log.buf.extend_from_slice(record);
        }
        log.file.write_all(&log.buf)?;
        log.file.sync_data()?;
        Ok(Lead::serial(()))
    }
}

impl Journal {
    fn create(path: &Path) -> io::Result<Self> {
        let group = WriteGroup::new(Options::default());
        let file = File::create(path)?;
        let log = group.leader_cell(Log {
            file,
            buf: Vec::new(),
        });
        Ok(Self { group, log })
    }

    /// Appends `record`; returns once it is on disk.
    fn append(&self, record: Vec<u8>) -> io::Result<()> {
        self.group
            .write(self, record)
            .map(drop)
            .map_err(|e| io::Error::other(e.to_string()))
    }
}

fn main() -> io::Result<()> {
    let path = std::env::temp_dir().join(format!("write-group-journal-{}.log", std::process::id()));
    let journal = Journal::create(&path)?;
    let (threads, per_thread) = (8, 50);

    let started = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let journal = &journal;
            s.spawn(move || {
                for i in 0..per_thread {
                    let record = format!("thread {t} record {i}").into_bytes();
                    journal.append(record).expect("append");
                }
            });
        }
    });
    let elapsed = started.elapsed();

    // Read the journal back: every record is there, whole.
    let bytes = fs::read(&path)?;
    fs::remove_file(&path)?;
    let mut records = 0;
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        let len = u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize;
        let record = std::str::from_utf8(&rest[4..4 + len]).expect("a whole record");
        assert!(record.starts_with("thread "));
        rest = &rest[4 + len..];
        records += 1;
    }
    assert_eq!(records, threads * per_thread);

    let stats = journal.group.stats();
    println!(
        "{records} durable appends from {threads} threads in {elapsed:.1?}: \
         {} fdatasyncs, {:.1} records per sync",
        stats.groups,
        stats.mean_group_size()
    );
    Ok(())
}
