//! A small write-ahead log that threads fill at once, in sequence order,
//! with no lock: `ordered-publish` numbers each record and places its bytes
//! in one compare-and-swap, `shared-log-file` lets each writer write its
//! own bytes, and the owner ends the log and reads it back.
//!
//! Each writer reserves a sequence number and its record's bytes together,
//! so the bytes follow sequence order; writes its record there; finishes
//! its number and waits until every earlier one is finished too (so that,
//! once `append` returns, everything before the record is in the file as
//! well). Every 64th write asks for durability with `sync_data`, beside the
//! others. At the end the owner sets the size, appends a trailer, syncs,
//! and replays the file: the records come back in sequence order, with no
//! hole.
//!
//! `cargo run --release -p shared-log-file --example wal [-- --mapped]`

use std::ops::Range;

use ordered_publish::Sequencer;
use shared_log_file::SharedFile;

/// A record: its length (u32), its sequence number (u64), the payload.
const HEADER: usize = 12;
/// The last record: length 0.
const TRAILER: [u8; HEADER] = [0; HEADER];

struct Wal {
    seq: Sequencer,
    file: SharedFile,
}

impl Wal {
    /// Logs `payload`; returns its sequence number once it, and every record
    /// numbered before it, is in the file (and durable, if `sync`).
    fn append(&self, payload: &[u8], sync: bool) -> u64 {
        let len = (HEADER + payload.len()) as u64;
        let (range, at): (Range<u64>, Range<u64>) = self
            .seq
            .reserve_with_bytes(1, len)
            .expect("no byte limit was set");
        let mut record = Vec::with_capacity(len as usize);
        record.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        record.extend_from_slice(&range.start.to_le_bytes());
        record.extend_from_slice(payload);
        // SAFETY: `at` came from this writer's reservation alone, and the
        // owner appends and syncs only once the writers are done.
        unsafe { self.file.write_at(at.start, &record) }.expect("a write");
        self.seq.finish(range.clone());
        self.seq.wait_published(range.end);
        if sync {
            self.file.sync_data().expect("a sync");
        }
        range.start
    }
}

fn main() {
    let mapped = std::env::args().any(|a| a == "--mapped");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("000001.log");
    let file = if mapped {
        SharedFile::create_mapped(&path)
    } else {
        SharedFile::create_positional(&path)
    };
    let mut wal = Wal {
        seq: Sequencer::new(1, 1024),
        file: file.expect("a new log"),
    };
    let (writers, per_writer) = (4u64, 10_000u64);
    let started = std::time::Instant::now();
    std::thread::scope(|s| {
        for w in 0..writers {
            let wal = &wal;
            s.spawn(move || {
                for i in 0..per_writer {
                    let payload = format!("writer {w} record {i}");
                    wal.append(payload.as_bytes(), i % 64 == 63);
                }
            });
        }
    });
    let elapsed = started.elapsed();
    // The writers are done: their bytes end where the reservations do.
    wal.file.set_size(wal.seq.reserved_bytes());
    wal.file.append(&TRAILER).expect("the trailer");
    wal.file.sync().expect("the last sync");
    drop(wal);

    // Replay: every record in sequence order, then the trailer.
    let data = std::fs::read(&path).expect("the log");
    let (mut at, mut expected_seq) = (0, 1u64);
    loop {
        let len = u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
        if len == 0 {
            break;
        }
        let seq = u64::from_le_bytes(data[at + 4..at + HEADER].try_into().unwrap());
        assert_eq!(seq, expected_seq, "records in sequence order, no hole");
        let payload = std::str::from_utf8(&data[at + HEADER..at + HEADER + len]).unwrap();
        assert!(payload.starts_with("writer "), "{payload}");
        expected_seq += 1;
        at += HEADER + len;
    }
    assert_eq!(at + HEADER, data.len(), "the trailer ends the log");
    let records = expected_seq - 1;
    assert_eq!(records, writers * per_writer);
    println!(
        "{records} records from {writers} writers in {elapsed:.2?} ({}), replayed in order",
        if mapped { "mapped" } else { "positional" }
    );
}
