use super::*;
use crate::env::{FaultInjectionFs, FaultOp, FileSystem};
use crate::table::coding::masked_crc;
use std::io;
use std::path::Path;

fn log_bytes(records: &[&[u8]]) -> Vec<u8> {
    let fs = FaultInjectionFs::new();
    let mut w = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    for r in records {
        w.add_record(r).unwrap();
    }
    fs.read_file(Path::new("l")).unwrap()
}

#[test]
fn round_trip_including_empty_records() {
    let records: Vec<&[u8]> = vec![b"a", b"", &[7u8; 1000], b"last"];
    let bytes = log_bytes(&records);
    let all = read_all(bytes.clone(), DBRecoveryMode::AbsoluteConsistency).unwrap();
    assert_eq!(all.records, records);
    assert_eq!(all.valid_len, bytes.len() as u64);
    assert!(all.tail.is_none());
    assert_eq!(&bytes[..16], b"lsm-wal\x02\0\0\0\0\0\0\0\0");
    assert_eq!(bytes[16..20], masked_crc(&[&bytes[..16]]).to_le_bytes());
}

#[test]
fn torn_tail_at_every_offset() {
    let records: Vec<&[u8]> = vec![b"first", b"second record", b"", b"fourth"];
    let bytes = log_bytes(&records);
    // Where each record ends: the good prefix for any cut.
    let mut ends = vec![FILE_HEADER_LEN];
    for r in &records {
        ends.push(ends.last().unwrap() + RECORD_HEADER_LEN + r.len());
    }
    for cut in 0..=bytes.len() {
        let complete = ends.iter().filter(|&&e| e <= cut).count().saturating_sub(1);
        let all = read_all(bytes[..cut].to_vec(), DBRecoveryMode::PointInTime).unwrap();
        assert_eq!(all.records, &records[..complete], "cut at {cut}");
        let clean = cut == 0 || ends.contains(&cut);
        assert_eq!(all.tail.is_none(), clean, "cut at {cut}");
        if let Some(tail) = &all.tail {
            assert!(tail.kind.is_truncation(), "cut at {cut}: {tail}");
            assert!(!tail.records_follow);
            assert_eq!(tail.offset + tail.dropped_bytes, cut as u64);
            assert_eq!(tail.offset, all.valid_len);
        }
        let strict = read_all(bytes[..cut].to_vec(), DBRecoveryMode::AbsoluteConsistency);
        assert_eq!(strict.is_ok(), clean, "cut at {cut}");
    }
}

#[test]
fn every_bit_flip_is_detected() {
    let records: Vec<&[u8]> = vec![b"alpha", b"beta"];
    let bytes = log_bytes(&records);
    for byte in 0..bytes.len() {
        for bit in 0..8 {
            let mut damaged = bytes.clone();
            damaged[byte] ^= 1 << bit;
            match read_all(damaged.clone(), DBRecoveryMode::PointInTime) {
                Ok(all) => {
                    // Never a wrong record, only a shorter prefix.
                    assert!(
                        records.starts_with(
                            &all.records.iter().map(Vec::as_slice).collect::<Vec<_>>()
                        )
                    );
                    assert!(all.tail.is_some(), "flip {byte}:{bit} went unnoticed");
                }
                Err(WalError::BadMagic { .. } | WalError::UnsupportedVersion { .. }) => {
                    assert!(byte < FILE_HEADER_LEN)
                }
                Err(e) => panic!("unexpected {e}"),
            }
            assert!(read_all(damaged, DBRecoveryMode::AbsoluteConsistency).is_err());
        }
    }
}

#[test]
fn damage_before_intact_records_is_flagged() {
    let bytes = log_bytes(&[b"one", b"two", b"three"]);
    let mut damaged = bytes.clone();
    damaged[FILE_HEADER_LEN + RECORD_HEADER_LEN] ^= 1; // payload of "one"
    let all = read_all(damaged, DBRecoveryMode::PointInTime).unwrap();
    assert!(all.records.is_empty());
    let tail = all.tail.unwrap();
    assert_eq!(tail.kind, CorruptionKind::PayloadChecksumMismatch);
    assert!(tail.records_follow);
    assert!(tail.to_string().contains("not only a torn tail"), "{tail}");
}

#[test]
fn zeroed_tail_is_a_checksum_mismatch() {
    let mut bytes = log_bytes(&[b"one"]);
    let good = bytes.len() as u64;
    bytes.extend_from_slice(&[0u8; 100]);
    let all = read_all(bytes, DBRecoveryMode::PointInTime).unwrap();
    assert_eq!(all.records, vec![b"one".to_vec()]);
    let tail = all.tail.unwrap();
    assert_eq!(tail.kind, CorruptionKind::HeaderChecksumMismatch);
    assert_eq!((tail.offset, tail.dropped_bytes), (good, 100));
    let all = read_all(vec![0u8; 20], DBRecoveryMode::PointInTime).unwrap();
    assert_eq!(all.tail.unwrap().kind, CorruptionKind::TornFileHeader);
}

#[test]
fn garbage_never_panics() {
    let mut seed = 0x1234_5678_u64;
    for len in 0..300 {
        let mut data = Vec::with_capacity(len);
        for _ in 0..len {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            data.push(seed as u8);
        }
        if len > 8 && seed & 1 == 0 {
            data[..8].copy_from_slice(b"lsm-wal\x02");
        }
        let _ = read_all(data.clone(), DBRecoveryMode::PointInTime);
        let _ = read_all(data, DBRecoveryMode::AbsoluteConsistency);
    }
}

#[test]
fn new_writer_needs_an_empty_file_and_resume_appends() {
    let fs = FaultInjectionFs::new();
    let mut w = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    w.add_record(b"1").unwrap();
    w.sync().unwrap();
    drop(w);
    let file = fs.open_append(Path::new("l")).unwrap();
    let err = LogWriter::new(file).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    let mut w = LogWriter::resume(fs.open_append(Path::new("l")).unwrap());
    w.add_record(b"2").unwrap();
    assert_eq!(w.size(), fs.file_size(Path::new("l")).unwrap());
    let all = read_all(
        fs.read_file(Path::new("l")).unwrap(),
        DBRecoveryMode::AbsoluteConsistency,
    )
    .unwrap();
    assert_eq!(all.records, vec![b"1".to_vec(), b"2".to_vec()]);
}

#[test]
fn failed_append_poisons_the_writer() {
    let fs = FaultInjectionFs::new();
    fs.set_torn_appends(true);
    let mut w = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    w.add_record(b"ok").unwrap();
    fs.fail_next(FaultOp::Append, 1);
    assert!(w.add_record(b"torn record").is_err());
    assert!(w.add_record(b"after").is_err());
    assert!(w.sync().is_err());
    let all = read_all(
        fs.read_file(Path::new("l")).unwrap(),
        DBRecoveryMode::PointInTime,
    )
    .unwrap();
    assert_eq!(all.records, vec![b"ok".to_vec()]);
    assert!(all.tail.is_some());
}

#[test]
fn open_names_the_file() {
    let fs = FaultInjectionFs::new();
    let err = LogReader::open(
        &fs,
        Path::new("missing.log"),
        DBRecoveryMode::AbsoluteConsistency,
    )
    .unwrap_err();
    assert!(err.to_string().contains("missing.log"), "{err}");
    let mut f = fs.create(Path::new("bad.log")).unwrap();
    f.append(b"lsm-wal\x01\x05").unwrap();
    let mut r = LogReader::open(
        &fs,
        Path::new("bad.log"),
        DBRecoveryMode::AbsoluteConsistency,
    )
    .unwrap();
    let err = r.next_record().unwrap_err();
    assert!(err.to_string().contains("bad.log"), "{err}");
    assert!(err.to_string().contains("offset 8"), "{err}");
    assert_eq!(r.next_record().unwrap(), None);
}
