//! Arbitrary bytes as a WAL file, read in both recovery modes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lsm_demo::wal::{LogReader, RecoveryMode};

fuzz_target!(|data: &[u8]| {
    for mode in [RecoveryMode::Fail, RecoveryMode::DropTail] {
        let Ok(mut reader) = LogReader::new(data.to_vec(), mode) else {
            continue;
        };
        let mut total = 0usize;
        while let Ok(Some(record)) = reader.next_record() {
            total += record.len();
            assert!(reader.last_record_offset() < data.len() as u64);
        }
        assert!(total <= data.len());
        assert!(reader.valid_len() <= data.len() as u64);
        if let Some(tail) = reader.tail_report() {
            assert_eq!(tail.offset + tail.dropped_bytes, data.len() as u64);
            let _ = tail.to_string();
        }
    }
});
