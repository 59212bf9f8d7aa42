//! Arbitrary bytes as a WAL file, read in every recovery mode.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lsm_demo::wal::{DBRecoveryMode, LogReader};

fuzz_target!(|data: &[u8]| {
    let len = data.len() as u64;
    for mode in [
        DBRecoveryMode::AbsoluteConsistency,
        DBRecoveryMode::TolerateCorruptedTailRecords,
        DBRecoveryMode::PointInTime,
        DBRecoveryMode::SkipAnyCorruptedRecord,
    ] {
        let Ok(mut reader) = LogReader::new(data.to_vec(), mode) else {
            continue;
        };
        let mut total = 0usize;
        while let Ok(Some(record)) = reader.next_record() {
            total += record.len();
            assert!(reader.last_record_offset() < len);
        }
        assert!(total <= data.len());
        assert!(reader.valid_len() <= len);
        // Dropped stretches lie in the file, in order, without overlap.
        let mut end = 0;
        for d in reader.dropped() {
            assert!(d.offset >= end && d.offset + d.dropped_bytes <= len);
            end = d.offset + d.dropped_bytes;
            let _ = d.to_string();
        }
        if mode != DBRecoveryMode::SkipAnyCorruptedRecord {
            assert!(reader.dropped().len() <= 1);
            if let Some(tail) = reader.tail_report() {
                assert_eq!(tail.offset + tail.dropped_bytes, len);
            }
        }
    }
});
