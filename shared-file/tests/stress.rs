//! Stress: many writers fill one file at offsets they reserve, beside a
//! thread that grows it ahead of them and one that syncs it, on each
//! backing (striped: 8 writers over 3 stripes, so writers meet at a
//! stripe's lock); then the file is read back record by record.
//!
//! Each record names its writer and its index and carries a payload that
//! depends on both, at a length that varies from 1 byte to past a growth.
//! The reservations tile the file, so the records read back one after
//! another from offset 0 must cover it exactly, each intact, each writer's
//! every index once.
//!
//! `STRESS_ROUNDS` (default 3) sets the rounds per backing.
#![cfg(target_os = "linux")]

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use shared_log_file::{SharedFile, StripedView};

#[derive(Debug, Clone, Copy)]
enum Backing {
    Mapped,
    Positional,
    Striped,
}

/// Header: length (u32), writer (u8), index (u32).
const HEADER: usize = 9;

fn record(writer: u8, index: u32) -> Vec<u8> {
    // Mostly small records, now and then one past a growth (1 MiB).
    let len = match index % 97 {
        0 => (1 << 20) + 4097,
        n if n % 7 == 0 => 9_000 + 13 * n as usize,
        n => 1 + 3 * n as usize,
    };
    let mut r = Vec::with_capacity(HEADER + len);
    r.extend_from_slice(&(len as u32).to_le_bytes());
    r.push(writer);
    r.extend_from_slice(&index.to_le_bytes());
    r.extend((0..len).map(|i| (i as u8) ^ writer ^ (index as u8).rotate_left(3)));
    r
}

fn round(backing: Backing, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    let file = match backing {
        Backing::Mapped => SharedFile::create_mapped(&path).unwrap(),
        Backing::Positional => SharedFile::create_positional(&path).unwrap(),
        Backing::Striped => SharedFile::create_striped(&path, 3).unwrap(),
    };
    let next = AtomicU64::new(0);
    let writers_done = AtomicBool::new(false);
    let (writers, per_writer) = (8u8, 400u32);
    std::thread::scope(|s| {
        // Grows the file a few megabytes ahead of the reservations, as an
        // owner that keeps growths off the writers' path does.
        s.spawn(|| {
            // Acquire: pairs with the writers' Release at the end. Relaxed on
            // `next`: the grower only reads how far to grow.
            while !writers_done.load(Ordering::Acquire) {
                let reserved = next.load(Ordering::Relaxed);
                file.grow_to(reserved + (4 << 20)).unwrap();
                std::thread::yield_now();
            }
        });
        // Syncs what is written while the writers go on.
        s.spawn(|| {
            while !writers_done.load(Ordering::Acquire) {
                file.sync_data().unwrap();
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        });
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                let (file, next) = (&file, &next);
                s.spawn(move || {
                    // Each writer takes its indexes in an order of its own.
                    let step = [1, 3, 7, 9, 11, 13, 17, 19][w as usize];
                    for k in 0..per_writer {
                        let index = (k * step + seed as u32) % per_writer;
                        let r = record(w, index);
                        // Relaxed: only the offsets' uniqueness matters.
                        let at = next.fetch_add(r.len() as u64, Ordering::Relaxed);
                        // SAFETY: `at..at + len` is this writer's alone, and
                        // nobody appends or syncs with a cut until the
                        // writers are done.
                        unsafe { file.write_at(at, &r) }.unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        writers_done.store(true, Ordering::Release);
    });
    let size = next.into_inner();
    file.set_size(size);
    // SAFETY: the writers, the grower and the syncer are done.
    unsafe { file.sync_unchecked() }.unwrap();
    drop(file);

    let data = match backing {
        Backing::Striped => StripedView::open(&path).unwrap().read_to_vec().unwrap(),
        _ => std::fs::read(&path).unwrap(),
    };
    assert_eq!(data.len() as u64, size, "the file is cut to the writes");
    let mut seen = HashSet::new();
    let mut at = 0;
    while at < data.len() {
        let len = u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
        let writer = data[at + 4];
        let index = u32::from_le_bytes(data[at + 5..at + 9].try_into().unwrap());
        assert!(
            writer < writers && index < per_writer,
            "a record header at {at}"
        );
        let expected = record(writer, index);
        assert!(
            data[at..at + expected.len()] == expected[..],
            "record {writer}/{index} at {at} ({backing:?}) is damaged"
        );
        assert_eq!(expected.len(), HEADER + len);
        assert!(seen.insert((writer, index)), "{writer}/{index} twice");
        at += expected.len();
    }
    assert_eq!(seen.len(), writers as usize * per_writer as usize);
}

#[test]
fn writers_beside_a_grower_and_a_syncer_fill_the_file_exactly() {
    let rounds: u64 = std::env::var("STRESS_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    for seed in 0..rounds {
        round(Backing::Mapped, seed);
        round(Backing::Positional, seed);
        round(Backing::Striped, seed);
    }
}
