use super::records::LOG_TRAILER_LEN;
use super::*;

#[test]
fn log_trailers_are_no_group() {
    let t = log_trailer(77);
    assert_eq!(decode_log_trailer(&t), Some(77));
    assert!(decode_group(&t).is_err());
    let mut group = group_header(5, 1).to_vec();
    let mut batch = WriteBatch::new();
    batch.put(b"k", b"v");
    group.extend_from_slice(batch.records());
    assert_eq!(decode_log_trailer(&group), None);
    assert_eq!(decode_log_trailer(&t[..LOG_TRAILER_LEN - 1]), None);
}

#[test]
fn data_is_rocksdbs_representation() {
    // RocksDB's WriteBatch for Put("a", "1"), Delete("bc"): sequence 0
    // (8 bytes), count 2 (4 bytes), kTypeValue (1) with varint-prefixed
    // key and value, kTypeDeletion (0) with its key.
    let rocksdb: &[u8] = &[
        0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 1, b'a', 1, b'1', 0, 2, b'b', b'c',
    ];
    let mut batch = WriteBatch::new();
    batch.put(b"a", b"1");
    batch.delete(b"bc");
    assert_eq!(batch.data(), rocksdb);
    assert_eq!(batch.size_in_bytes(), rocksdb.len());
    let read = WriteBatch::from_data(rocksdb);
    assert_eq!(read, batch);
    assert_eq!(read.largest_key_and_value(), (2, 1));
    // A sequence number set by RocksDB does not matter.
    let mut stamped = rocksdb.to_vec();
    stamped[0] = 9;
    assert_eq!(WriteBatch::try_from_data(&stamped), Ok(batch));
}

#[test]
fn data_that_does_not_decode_gives_a_malformed_batch() {
    let mut batch = WriteBatch::new();
    batch.put(b"k", b"v");
    let data = batch.data().to_vec();
    let mut wrong_count = data.clone();
    wrong_count[8] = 2;
    let mut merge = data.clone();
    merge[GROUP_HEADER_LEN] = 2; // kTypeMerge: not read
    for bad in [&data[..5], &data[..data.len() - 1], &wrong_count, &merge] {
        assert!(WriteBatch::try_from_data(bad).is_err(), "{bad:?}");
        let b = WriteBatch::from_data(bad);
        assert!(b.malformed().is_some());
        assert_eq!((b.len(), b.iter().count()), (0, 0));
    }
    let mut cleared = WriteBatch::from_data(&merge);
    cleared.clear();
    assert!(cleared.malformed().is_none());
}

#[test]
fn an_empty_batch_allocates_nothing_and_has_a_header() {
    let mut batch = WriteBatch::new();
    assert_eq!(batch.rep.capacity(), 0);
    assert_eq!(batch.data(), [0; GROUP_HEADER_LEN]);
    batch.put(b"k", b"v");
    batch.clear();
    assert_eq!(
        (batch.size_in_bytes(), batch.data_size()),
        (GROUP_HEADER_LEN, 0)
    );
    assert_eq!(WriteBatch::from_data(batch.data()), WriteBatch::new());
}

#[test]
fn log_data_is_logged_not_counted_and_survives_the_representation() {
    let mut batch = WriteBatch::new();
    batch.put_log_data(b"first");
    batch.put(b"k", b"v");
    batch.put_log_data(b"");
    batch.delete(b"d");
    assert_eq!(batch.len(), 2);
    assert_eq!(batch.data()[8..12], 2u32.to_le_bytes());
    let (_, ops) = decode_group(batch.data()).unwrap();
    assert_eq!(ops, [BatchOp::Put(b"k", b"v"), BatchOp::Delete(b"d")]);
    let copy = WriteBatch::try_from_data(batch.data()).unwrap();
    assert_eq!(copy, batch);
    assert_eq!(copy.log_data().collect::<Vec<_>>(), [&b"first"[..], b""]);
    // A truncated blob is malformed.
    let mut only = WriteBatch::new();
    only.put_log_data(b"blob");
    let data = only.data();
    assert!(WriteBatch::try_from_data(&data[..data.len() - 1]).is_err());
}

#[test]
fn group_record_round_trips() {
    let mut a = WriteBatch::new();
    a.put(b"x", b"1");
    a.delete(b"y");
    let mut rec = group_header(41, 2).to_vec();
    rec.extend_from_slice(a.records());
    let (first, ops) = decode_group(&rec).unwrap();
    assert_eq!(first, 41);
    assert_eq!(ops, [BatchOp::Put(b"x", b"1"), BatchOp::Delete(b"y")]);
    rec.pop();
    assert!(decode_group(&rec).is_err());
    assert!(decode_group(&rec[..5]).is_err());
    let mut bad = group_header(1, 1).to_vec();
    bad.push(9);
    assert!(decode_group(&bad).is_err());
}
