//! Bad input to the three readers (WAL, table, manifest): random bytes,
//! bit-flipped and truncated valid files, and random contents behind valid
//! checksums. The readers must never panic and must always answer with the
//! data written or a typed error — never with altered data.

use key_comparator::BytewiseComparator;
use lsm_demo::env::{FaultInjectionFs, FileSystem};
use lsm_demo::manifest::{FileMeta, Manifest, ManifestError};
use lsm_demo::table::{
    FOOTER_LEN, SharedComparator, Table, TableBuilder, TableError, TableOptions,
};
use lsm_demo::wal::{DBRecoveryMode, LogWriter, WalContents, WalError, read_all};
use proptest::prelude::*;
use std::path::Path;
use std::sync::Arc;

fn masked_crc(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
        .rotate_right(15)
        .wrapping_add(0x6c73_6d64)
}

// --- WAL -------------------------------------------------------------------

fn wal_bytes(records: &[Vec<u8>]) -> Vec<u8> {
    let fs = FaultInjectionFs::new();
    let mut w = LogWriter::new(fs.create(Path::new("l")).unwrap()).unwrap();
    for r in records {
        w.add_record(r).unwrap();
    }
    fs.read_file(Path::new("l")).unwrap()
}

fn read_wal(bytes: &[u8], mode: DBRecoveryMode) -> Result<WalContents, WalError> {
    let result = read_all(bytes.to_vec(), mode);
    if let Ok(contents) = &result {
        assert!(contents.valid_len <= bytes.len() as u64);
        if let Some(tail) = &contents.tail {
            assert_eq!(tail.offset, contents.valid_len);
            assert_eq!(tail.offset + tail.dropped_bytes, bytes.len() as u64);
            assert!(!tail.to_string().is_empty());
        }
    }
    if let Err(e) = &result {
        assert!(!e.to_string().is_empty());
    }
    result
}

/// Records returned from a damaged log must be a prefix of those written.
fn assert_prefix(read: &[Vec<u8>], written: &[Vec<u8>]) -> Result<(), TestCaseError> {
    prop_assert!(read.len() <= written.len());
    prop_assert_eq!(read, &written[..read.len()]);
    Ok(())
}

fn records() -> impl Strategy<Value = Vec<Vec<u8>>> {
    proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..8)
}

// --- tables ----------------------------------------------------------------

type Entry = (Vec<u8>, Vec<u8>);

fn whole_key(k: &[u8]) -> &[u8] {
    k
}

fn cmp() -> SharedComparator {
    Arc::new(BytewiseComparator)
}

fn table_bytes(entries: &[Entry], block_size: usize) -> Vec<u8> {
    let fs = FaultInjectionFs::new();
    let opts = TableOptions {
        block_size,
        restart_interval: 4,
        bloom_bits_per_key: 10,
    };
    let mut b = TableBuilder::new(fs.create(Path::new("t")).unwrap(), opts, cmp(), whole_key);
    for (k, v) in entries {
        b.add(k, v).unwrap();
    }
    b.finish().unwrap();
    fs.read_file(Path::new("t")).unwrap()
}

/// Opens, scans both ways and seeks; returns the entries of the forward
/// scan, or the first error.
fn exercise_table(bytes: &[u8], probes: &[Vec<u8>]) -> Result<Vec<Entry>, TableError> {
    let table = Table::open(
        Arc::new(bytes.to_vec()),
        bytes.len() as u64,
        cmp(),
        whole_key,
    )?;
    let _ = table.properties();
    let mut it = table.iter();
    let mut forward = Vec::new();
    it.seek_to_first();
    while it.valid() && forward.len() < 10_000 {
        forward.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status()?;
    let mut back = table.iter();
    back.seek_to_last();
    let mut steps = 0;
    while back.valid() && steps < 10_000 {
        back.prev();
        steps += 1;
    }
    back.status()?;
    for probe in probes {
        let _ = table.may_contain(probe);
        let mut it = table.iter();
        it.seek(probe);
        it.next();
        it.prev();
        it.seek_for_prev(probe);
        it.prev();
        it.status()?;
    }
    Ok(forward)
}

fn entries() -> impl Strategy<Value = Vec<Entry>> {
    proptest::collection::btree_map(
        proptest::collection::vec(any::<u8>(), 0..12),
        proptest::collection::vec(any::<u8>(), 0..40),
        1..60,
    )
    .prop_map(|m| m.into_iter().collect())
}

/// Writes a block trailer (kind byte and masked CRC32C) after
/// `buf[offset..offset + size]`, per the documented table format.
fn seal(buf: &mut [u8], offset: usize, size: usize, kind: u8) {
    buf[offset + size] = kind;
    let crc = masked_crc(&buf[offset..offset + size + 1]);
    buf[offset + size + 1..offset + size + 5].copy_from_slice(&crc.to_le_bytes());
}

/// A file of random blocks with valid trailers, and a valid footer pointing
/// at three of them: the parsers behind the checksums see garbage.
fn sealed_garbage_table(mut body: Vec<u8>, cuts: [usize; 6]) -> Vec<u8> {
    let len = body.len();
    let mut handles = [(0usize, 0usize); 3];
    let kinds = [4u8, 2, 3]; // index, filter, properties
    for i in 0..3 {
        let a = cuts[2 * i] % (len - 4);
        let size = cuts[2 * i + 1] % (len - 4 - a);
        seal(&mut body, a, size, kinds[i]);
        handles[i] = (a, size);
    }
    let mut footer = Vec::with_capacity(FOOTER_LEN as usize);
    for (offset, size) in handles {
        footer.extend_from_slice(&(offset as u64).to_le_bytes());
        footer.extend_from_slice(&(size as u64).to_le_bytes());
    }
    footer.extend_from_slice(&1u32.to_le_bytes());
    let crc = masked_crc(&footer);
    footer.extend_from_slice(&crc.to_le_bytes());
    footer.extend_from_slice(b"lsm-sst!");
    body.extend_from_slice(&footer);
    body
}

// --- manifests -------------------------------------------------------------

fn manifest() -> impl Strategy<Value = Manifest> {
    let file = (
        any::<u64>(),
        any::<u32>(),
        any::<u64>(),
        any::<u64>(),
        proptest::collection::vec(any::<u8>(), 0..10),
        proptest::collection::vec(any::<u8>(), 0..10),
    )
        .prop_map(
            |(number, level, file_size, entries, smallest, largest)| FileMeta {
                number,
                level,
                file_size,
                entries,
                smallest,
                largest,
            },
        );
    (
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        proptest::collection::vec(file, 0..6),
        proptest::collection::vec(any::<u64>(), 0..4),
        proptest::collection::vec(any::<u64>(), 0..4),
        // Empty (bytewise, written as version 2) or a name (version 3).
        proptest::option::of("[a-z.]{1,12}"),
    )
        .prop_map(
            |(
                next_file_number,
                last_sequence,
                log_number,
                files,
                obsolete_logs,
                obsolete_tables,
                comparator,
            )| {
                Manifest {
                    next_file_number,
                    last_sequence,
                    log_number,
                    files,
                    obsolete_logs,
                    obsolete_tables,
                    comparator: comparator.unwrap_or_default(),
                }
            },
        )
}

/// A manifest file around `body`, with a correct length and checksum.
fn sealed_manifest(body: &[u8]) -> Vec<u8> {
    let mut out = b"lsm-mfst".to_vec();
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
    let crc = masked_crc(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

fn decode_manifest(bytes: &[u8]) -> Result<Manifest, ManifestError> {
    let result = Manifest::decode(bytes);
    if let Err(e) = &result {
        assert!(!e.to_string().is_empty());
    }
    result
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn wal_random_bytes(mut data in proptest::collection::vec(any::<u8>(), 0..600), header in any::<bool>()) {
        if header && data.len() >= 8 {
            data[..8].copy_from_slice(b"lsm-wal\x01");
        }
        let _ = read_wal(&data, DBRecoveryMode::PointInTime);
        let _ = read_wal(&data, DBRecoveryMode::AbsoluteConsistency);
    }

    #[test]
    fn wal_bit_flips(written in records(), flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..), 1..4)) {
        let mut bytes = wal_bytes(&written);
        for (at, mask) in &flips {
            let i = at.index(bytes.len());
            bytes[i] ^= mask;
        }
        match read_wal(&bytes, DBRecoveryMode::PointInTime) {
            Ok(contents) => assert_prefix(&contents.records, &written)?,
            Err(WalError::BadMagic { .. } | WalError::UnsupportedVersion { .. }) => {}
            Err(e) => prop_assert!(false, "DropTail gave {}", e),
        }
        if flips.len() == 1 {
            // One damaged byte is always detected.
            let strict = read_wal(&bytes, DBRecoveryMode::AbsoluteConsistency);
            prop_assert!(strict.is_err());
        }
    }

    #[test]
    fn wal_truncation(written in records(), cut in any::<prop::sample::Index>()) {
        let bytes = wal_bytes(&written);
        let cut = cut.index(bytes.len() + 1);
        let contents = read_wal(&bytes[..cut], DBRecoveryMode::PointInTime).unwrap();
        assert_prefix(&contents.records, &written)?;
        if let Some(tail) = contents.tail {
            prop_assert!(tail.kind.is_truncation(), "{}", tail);
        }
    }

    #[test]
    fn table_random_bytes(mut data in proptest::collection::vec(any::<u8>(), 0..1500), magic in any::<bool>()) {
        if magic && data.len() >= 8 {
            let n = data.len();
            data[n - 8..].copy_from_slice(b"lsm-sst!");
        }
        let _ = exercise_table(&data, &[vec![], vec![0x80]]);
    }

    #[test]
    fn table_sealed_garbage(body in proptest::collection::vec(any::<u8>(), 8..1500), cuts in any::<[usize; 6]>()) {
        let bytes = sealed_garbage_table(body, cuts);
        let _ = exercise_table(&bytes, &[vec![], vec![1, 2, 3]]);
    }

    #[test]
    fn table_bit_flips(
        written in entries(),
        block_size in 32usize..512,
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..), 1..4),
    ) {
        let mut bytes = table_bytes(&written, block_size);
        for (at, mask) in &flips {
            let i = at.index(bytes.len());
            bytes[i] ^= mask;
        }
        let probes: Vec<Vec<u8>> = written.iter().take(3).map(|e| e.0.clone()).collect();
        let result = exercise_table(&bytes, &probes);
        if flips.len() == 1 {
            prop_assert!(result.is_err(), "a damaged byte went unnoticed");
        }
        if let Ok(read) = result {
            prop_assert_eq!(&read, &written);
        }
        // Whatever the outcome, a scan never yields an entry not written.
        if let Ok(table) = Table::open(Arc::new(bytes.clone()), bytes.len() as u64, cmp(), whole_key) {
            let mut it = table.iter();
            it.seek_to_first();
            let mut i = 0;
            while it.valid() {
                prop_assert_eq!((it.key(), it.value()), (written[i].0.as_slice(), written[i].1.as_slice()));
                i += 1;
                it.next();
            }
        }
    }

    #[test]
    fn table_truncation(written in entries(), cut in any::<prop::sample::Index>()) {
        let bytes = table_bytes(&written, 128);
        let cut = cut.index(bytes.len());
        prop_assert!(exercise_table(&bytes[..cut], &[]).is_err());
        let claimed = Table::open(Arc::new(bytes[..cut].to_vec()), bytes.len() as u64, cmp(), whole_key);
        prop_assert!(matches!(claimed, Err(TableError::Truncated { .. })), "{:?}", claimed.err());
    }

    #[test]
    fn manifest_random_bytes(mut data in proptest::collection::vec(any::<u8>(), 0..300), magic in any::<bool>()) {
        if magic && data.len() >= 8 {
            data[..8].copy_from_slice(b"lsm-mfst");
        }
        let _ = decode_manifest(&data);
    }

    #[test]
    fn manifest_sealed_garbage(body in proptest::collection::vec(any::<u8>(), 0..300)) {
        if let Ok(m) = decode_manifest(&sealed_manifest(&body)) {
            // Anything accepted survives a round trip.
            prop_assert_eq!(Manifest::decode(&m.encode()).unwrap(), m);
        }
    }

    #[test]
    fn manifest_bit_flips_and_truncation(
        m in manifest(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let bytes = m.encode();
        prop_assert_eq!(&decode_manifest(&bytes).unwrap(), &m);
        let mut damaged = bytes.clone();
        for (at, mask) in &flips {
            let i = at.index(damaged.len());
            damaged[i] ^= mask;
        }
        if let Ok(got) = decode_manifest(&damaged) {
            prop_assert!(flips.len() > 1 && got == m, "damage went unnoticed");
        }
        let cut = cut.index(bytes.len());
        prop_assert!(decode_manifest(&bytes[..cut]).is_err());
    }
}
