//! The expected state of `stress`, `crashtest` and `crashtest
//! --power_loss=1`, and the verification of a database against it.
//!
//! # The expected state
//!
//! One 8-byte slot per key: the low 32 bits hold the value id the database
//! must hold (0: absent), the high 32 bits a pending value id (0: none).
//! A writer, holding the key's lock, first records `pending = new`, then
//! writes to the database, then, once the write is acknowledged, records
//! `current = new, pending = 0`. Each slot update is one `pwrite` of 8
//! aligned bytes, which a killed process cannot tear. After a crash a key
//! with a pending id may hold either id; any other key must hold exactly
//! `current`.
//!
//! Besides each key's value, verification scans the whole database: every
//! key must be one of the stress keys and hold a well-formed value equal to
//! what a point read returns, so nothing appears that was never written.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use lsm_demo::{DB, IteratorMode};

use super::Error;

/// What a verification found.
#[derive(Debug, Default, Clone, Copy)]
pub struct Verified {
    /// Keys checked.
    pub keys: u64,
    /// Keys whose state the expected-state file pinned exactly.
    pub exact: u64,
    /// Keys with a write in flight at the crash (either value allowed).
    pub pending: u64,
    /// Acknowledged writes missing, or values never written: must be 0.
    pub mismatches: u64,
    /// Entries met by the full scan.
    pub scanned: u64,
}

impl std::ops::AddAssign for Verified {
    fn add_assign(&mut self, v: Verified) {
        self.keys += v.keys;
        self.exact += v.exact;
        self.pending += v.pending;
        self.mismatches += v.mismatches;
        self.scanned += v.scanned;
    }
}

/// The expected state: one slot per key.
pub(crate) struct Expected {
    slots: Slots,
}

enum Slots {
    /// In a file beside the database, so it survives a killed process.
    File(File),
    /// In memory, for a power loss simulated inside the process.
    Memory(Vec<AtomicU64>),
}

const PENDING_SHIFT: u32 = 32;

impl Expected {
    /// The expected state of `keys` keys in memory, all absent.
    pub(crate) fn in_memory(keys: u32) -> Expected {
        Expected {
            slots: Slots::Memory((0..keys).map(|_| AtomicU64::new(0)).collect()),
        }
    }

    pub(crate) fn open(path: &Path, keys: u32) -> std::io::Result<Expected> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        let want = keys as u64 * 8;
        if file.metadata()?.len() < want {
            file.set_len(want)?;
        }
        Ok(Expected {
            slots: Slots::File(file),
        })
    }

    pub(crate) fn read(&self, k: u32) -> (u32, u32) {
        let v = match &self.slots {
            Slots::File(file) => {
                let mut b = [0u8; 8];
                file.read_exact_at(&mut b, k as u64 * 8)
                    .expect("reading the expected state");
                u64::from_le_bytes(b)
            }
            // Relaxed: a slot is read and written under its key's lock, or
            // while no worker runs.
            Slots::Memory(slots) => slots[k as usize].load(Ordering::Relaxed),
        };
        (v as u32, (v >> PENDING_SHIFT) as u32)
    }

    pub(crate) fn write(&self, k: u32, current: u32, pending: u32) {
        let v = (current as u64) | ((pending as u64) << PENDING_SHIFT);
        match &self.slots {
            Slots::File(file) => file
                .write_all_at(&v.to_le_bytes(), k as u64 * 8)
                .expect("writing the expected state"),
            // Relaxed: as in `read`.
            Slots::Memory(slots) => slots[k as usize].store(v, Ordering::Relaxed),
        }
    }
}

pub(crate) fn key_bytes(k: u32) -> Vec<u8> {
    format!("key{k:08}").into_bytes()
}

/// A value names its key and id, so a misplaced or damaged value is caught.
pub(crate) fn value_bytes(k: u32, id: u32) -> Vec<u8> {
    let mut v = format!("{k}:{id}:").into_bytes();
    let fill = b'a' + (id % 26) as u8;
    v.resize(v.len() + 16 + (id % 64) as usize, fill);
    v
}

pub(crate) fn value_id(k: u32, v: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(v).ok()?;
    let mut parts = s.splitn(3, ':');
    let key: u32 = parts.next()?.parse().ok()?;
    let id: u32 = parts.next()?.parse().ok()?;
    (key == k && value_bytes(k, id) == v).then_some(id)
}

/// Checks every key of `db` against the expected state and resolves pending
/// slots to what the database holds.
pub(crate) fn verify(db: &DB, exp: &Expected, keys: u32) -> Result<Verified, Error> {
    let mut r = Verified::default();
    for k in 0..keys {
        let (current, pending) = exp.read(k);
        let got = match db.get(key_bytes(k))? {
            None => Some(0),
            Some(v) => value_id(k, &v),
        };
        r.keys += 1;
        let ok = match got {
            Some(id) if pending != 0 => {
                r.pending += 1;
                id == current || id == pending || (pending == u32::MAX && id == 0)
            }
            Some(id) => {
                r.exact += 1;
                id == current
            }
            None => false,
        };
        if !ok {
            r.mismatches += 1;
            if r.mismatches <= 10 {
                eprintln!(
                    "MISMATCH key {k}: database holds {got:?}, expected {current} (pending {pending})"
                );
            }
            continue;
        }
        if pending != 0 {
            exp.write(k, got.unwrap_or(0), 0);
        }
    }
    // The scan must agree with the point reads (now recorded as current),
    // and meet no key outside the stress keys.
    let mut expect_next = 0u32;
    for kv in db.iterator(IteratorMode::Start) {
        let (key, v) = kv.map_err(|e| Error::engine("scanning", e))?;
        r.scanned += 1;
        let k = match parse_key(&key) {
            Some(k) if k < keys && k >= expect_next => k,
            _ => {
                r.mismatches += 1;
                if r.mismatches <= 10 {
                    eprintln!("MISMATCH scan met {key:?}, not a stress key in order");
                }
                continue;
            }
        };
        // Keys skipped by the scan must be absent.
        for missing in expect_next..k {
            if exp.read(missing).0 != 0 {
                r.mismatches += 1;
                if r.mismatches <= 10 {
                    eprintln!("MISMATCH scan skipped key {missing}");
                }
            }
        }
        expect_next = k + 1;
        let (current, _) = exp.read(k);
        if value_id(k, &v) != Some(current) {
            r.mismatches += 1;
            if r.mismatches <= 10 {
                eprintln!(
                    "MISMATCH scan: key {k} holds {:?}, expected {current}",
                    value_id(k, &v)
                );
            }
        }
    }
    for missing in expect_next..keys {
        if exp.read(missing).0 != 0 {
            r.mismatches += 1;
            if r.mismatches <= 10 {
                eprintln!("MISMATCH scan skipped key {missing}");
            }
        }
    }
    Ok(r)
}

fn parse_key(key: &[u8]) -> Option<u32> {
    let digits = key.strip_prefix(b"key")?;
    if digits.len() != 8 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_values_round_trip() {
        assert_eq!(parse_key(&key_bytes(1234)), Some(1234));
        assert_eq!(parse_key(b"key1234"), None);
        assert_eq!(parse_key(b"other"), None);
        assert_eq!(value_id(7, &value_bytes(7, 99)), Some(99));
        assert_eq!(
            value_id(8, &value_bytes(7, 99)),
            None,
            "another key's value"
        );
        let mut damaged = value_bytes(7, 99);
        damaged.pop();
        assert_eq!(value_id(7, &damaged), None);
    }
}
