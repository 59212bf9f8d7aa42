use super::*;
use crate::env::{FaultInjectionFs, FaultOp};

fn sample(n: u64) -> Manifest {
    Manifest {
        next_file_number: 100 + n,
        last_sequence: 1 << 40,
        log_number: 99 + n,
        files: (0..n)
            .map(|i| FileMeta {
                number: i + 1,
                level: (i % 3) as u32,
                file_size: 4096 * i,
                entries: i * 10,
                smallest: format!("key{i}").into_bytes(),
                largest: format!("key{i}~").into_bytes(),
            })
            .collect(),
        obsolete_logs: vec![97 + n],
        obsolete_tables: (0..n).map(|i| 200 + i).collect(),
        comparator: String::new(),
    }
}

#[test]
fn round_trip() {
    for n in [0, 1, 50] {
        let m = sample(n);
        assert_eq!(Manifest::decode(&m.encode()).unwrap(), m);
    }
    let extreme = Manifest {
        next_file_number: u64::MAX,
        last_sequence: u64::MAX,
        log_number: u64::MAX,
        files: vec![FileMeta {
            number: u64::MAX,
            level: u32::MAX,
            file_size: u64::MAX,
            entries: u64::MAX,
            smallest: Vec::new(),
            largest: vec![0xff; 300],
        }],
        obsolete_logs: vec![u64::MAX],
        obsolete_tables: vec![0, u64::MAX],
        comparator: "a comparator's name, in UTF-8: ≠".to_owned(),
    };
    assert_eq!(Manifest::decode(&extreme.encode()).unwrap(), extreme);
    // Without a comparator name, version 2 (which builds from before
    // names were recorded read); with one, version 3.
    assert_eq!(sample(1).encode()[8..12], 2u32.to_le_bytes());
    assert_eq!(extreme.encode()[8..12], 3u32.to_le_bytes());
}

#[test]
fn every_truncation_and_bit_flip_is_an_error() {
    let bytes = sample(3).encode();
    for cut in 0..bytes.len() {
        assert!(Manifest::decode(&bytes[..cut]).is_err(), "cut {cut}");
    }
    for i in 0..bytes.len() {
        for bit in 0..8 {
            let mut damaged = bytes.clone();
            damaged[i] ^= 1 << bit;
            assert!(Manifest::decode(&damaged).is_err(), "flip {i}:{bit}");
        }
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        Manifest::decode(&longer),
        Err(ManifestError::LengthMismatch { .. })
    ));
}

/// Re-checksums a version-2 body so the parser itself is exercised.
fn with_body(body: &[u8]) -> Vec<u8> {
    with_versioned_body(2, body)
}

fn with_versioned_body(version: u32, body: &[u8]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
    let crc = masked_crc(&[&out]);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

#[test]
fn bad_bodies_with_good_checksums() {
    // Huge file count.
    let mut body = vec![1, 1, 1];
    put_varint64(&mut body, u64::MAX);
    let err = Manifest::decode(&with_body(&body)).unwrap_err();
    assert!(matches!(err, ManifestError::Corrupt { .. }), "{err}");
    // Key length past the end.
    let mut body = vec![1, 1, 1, 1, 1, 0, 0, 0];
    put_varint64(&mut body, 1 << 40);
    body.extend_from_slice(&[0; 8]);
    let err = Manifest::decode(&with_body(&body)).unwrap_err();
    assert!(err.to_string().contains("smallest key"), "{err}");
    // Level over u32.
    let mut body = vec![1, 1, 1, 1, 1];
    put_varint64(&mut body, 1 << 33);
    body.extend_from_slice(&[0; 8]);
    assert!(Manifest::decode(&with_body(&body)).is_err());
    // Trailing bytes.
    let mut body = sample(1).encode()[HEADER_LEN..].to_vec();
    body.truncate(body.len() - CRC_LEN);
    body.push(0);
    assert!(Manifest::decode(&with_body(&body)).is_err());
    // Version 3: a comparator name must follow, whole, not empty, UTF-8.
    let v2_body = &body[..body.len() - 1];
    for (name, ok) in [
        (&b""[..], false),
        (&b"\xff"[..], false),
        (&b"my.order"[..], true),
    ] {
        let mut body = v2_body.to_vec();
        put_length_prefixed(&mut body, name);
        let decoded = Manifest::decode(&with_versioned_body(3, &body));
        assert_eq!(decoded.is_ok(), ok, "{name:?}: {decoded:?}");
        body.push(0);
        assert!(Manifest::decode(&with_versioned_body(3, &body)).is_err());
    }
    // Other version.
    let mut bytes = sample(0).encode();
    bytes[8] = 4;
    assert!(matches!(
        Manifest::decode(&bytes),
        Err(ManifestError::UnsupportedVersion { version: 4, .. })
    ));
}

#[test]
fn version_1_reads_without_obsolete_lists() {
    let mut m = sample(2);
    m.obsolete_logs.clear();
    m.obsolete_tables.clear();
    let mut body = m.encode()[HEADER_LEN..].to_vec();
    body.truncate(body.len() - CRC_LEN);
    // Version 1 ends before the two (empty) lists' counts.
    body.truncate(body.len() - 2);
    let mut bytes = with_body(&body);
    bytes[8] = 1;
    let crc_at = bytes.len() - CRC_LEN;
    let crc = masked_crc(&[&bytes[..crc_at]]);
    bytes[crc_at..].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(Manifest::decode(&bytes).unwrap(), m);
}

fn consistent() -> Manifest {
    use crate::key::{ValueType, internal_key};
    let table = |number, level, lo: &[u8], hi: &[u8]| FileMeta {
        number,
        level,
        file_size: 100,
        entries: 2,
        smallest: internal_key(lo, 5, ValueType::Value),
        largest: internal_key(hi, 7, ValueType::Deletion),
    };
    Manifest {
        next_file_number: 10,
        last_sequence: 7,
        log_number: 9,
        files: vec![
            table(4, 0, b"a", b"z"),
            table(5, 1, b"a", b"f"),
            table(6, 1, b"g", b"m"),
        ],
        obsolete_logs: vec![3],
        obsolete_tables: vec![1, 2],
        comparator: String::new(),
    }
}

#[test]
fn consistency_checks_name_each_problem() {
    assert!(consistent().check_consistency().is_ok());
    assert!(Manifest::default().check_consistency().is_ok());
    type Damage = fn(&mut Manifest);
    let cases: [(&str, Damage); 11] = [
        ("listed twice", |m| m.files.push(m.files[0].clone())),
        ("beyond the last", |m| m.files[0].level = 9),
        ("next file number", |m| m.next_file_number = 5),
        ("log number", |m| m.log_number = 10),
        ("largest sequence number", |m| {
            m.last_sequence = u64::MAX - 1
        }),
        ("above the last sequence", |m| m.last_sequence = 6),
        ("overlap", |m| {
            m.files[2].smallest = m.files[1].largest.clone()
        }),
        ("smallest key above", |m| {
            let f = &mut m.files[1];
            std::mem::swap(&mut f.smallest, &mut f.largest);
        }),
        ("malformed", |m| m.files[0].largest = b"short".to_vec()),
        ("obsolete file 5", |m| m.obsolete_tables.push(5)),
        ("obsolete file 12", |m| m.obsolete_logs.push(12)),
    ];
    for (what, damage) in cases {
        let mut m = consistent();
        damage(&mut m);
        let err = m.check_consistency().unwrap_err();
        assert!(matches!(err, ManifestError::Inconsistent { .. }));
        assert!(err.to_string().contains(what), "{what}: {err}");
    }
}

#[test]
fn read_names_the_file() {
    let fs = FaultInjectionFs::new();
    let mut f = fs.create(Path::new("MANIFEST")).unwrap();
    f.append(b"garbage that is long enough to have a header")
        .unwrap();
    let err = read_manifest(&fs, Path::new("")).unwrap_err();
    assert!(matches!(err, ManifestError::BadMagic { .. }));
    assert!(err.to_string().contains("MANIFEST"), "{err}");
}

#[test]
fn failure_at_each_step_leaves_old_or_new() {
    let dir = Path::new("/db");
    let (old, new) = (sample(2), sample(5));
    for op in [
        FaultOp::Create,
        FaultOp::Append,
        FaultOp::Sync,
        FaultOp::Rename,
        FaultOp::SyncDir,
    ] {
        for crash in [false, true] {
            let fs = FaultInjectionFs::new();
            fs.create_dir_all(dir).unwrap();
            write_manifest(&fs, dir, &old).unwrap();
            fs.fail_next(op, 1);
            assert!(write_manifest(&fs, dir, &new).is_err(), "{op:?}");
            if crash {
                fs.simulate_crash();
            }
            let got = read_manifest(&fs, dir).unwrap().unwrap();
            let renamed = matches!(op, FaultOp::SyncDir);
            let expected = if renamed && !crash { &new } else { &old };
            assert_eq!(&got, expected, "{op:?} crash={crash}");
            // A retry succeeds and is durable.
            write_manifest(&fs, dir, &new).unwrap();
            fs.simulate_crash();
            assert_eq!(read_manifest(&fs, dir).unwrap().unwrap(), new);
        }
    }
}

#[test]
fn torn_crashes_never_mix() {
    let dir = Path::new("db");
    for seed in 0..50 {
        let fs = FaultInjectionFs::new();
        fs.create_dir_all(dir).unwrap();
        write_manifest(&fs, dir, &sample(1)).unwrap();
        // Stop before the directory sync: the rename is not durable.
        fs.fail_next(FaultOp::SyncDir, 1);
        let _ = write_manifest(&fs, dir, &sample(4));
        fs.simulate_crash_torn(seed);
        assert_eq!(read_manifest(&fs, dir).unwrap().unwrap(), sample(1));
    }
    let fs = FaultInjectionFs::new();
    fs.create_dir_all(dir).unwrap();
    assert_eq!(read_manifest(&fs, dir).unwrap(), None);
    // A temporary file alone is not a manifest.
    fs.fail_next(FaultOp::Rename, 1);
    assert!(write_manifest(&fs, dir, &sample(1)).is_err());
    assert!(fs.exists(&dir.join(MANIFEST_TEMP_FILE)));
    assert_eq!(read_manifest(&fs, dir).unwrap(), None);
}
