//! A program written for the `rocksdb` crate, run on `lsm-demo` by changing
//! one line: the `use` below (it reads `use rocksdb;` against the real
//! crate). Everything after it is the `rocksdb` crate's API as its
//! documentation shows it.
//!
//! `cargo run -p lsm-demo --example rocksdb_compat`

use lsm_demo as rocksdb;

use rocksdb::{
    DB, DBAccess, DBWithThreadMode, Direction, IteratorMode, MultiThreaded, Options, ReadOptions,
    SliceTransform, SnapshotWithThreadMode, WriteBatch, properties,
};

/// Code generic over the database type, as the `rocksdb` crate's
/// `DBAccess` allows: the keys a fresh snapshot sees, and one value read
/// as of it.
fn snapshot_view<D: DBAccess>(
    db: &D,
    key: &[u8],
) -> Result<(usize, Option<Vec<u8>>), rocksdb::Error> {
    let snapshot = SnapshotWithThreadMode::new(db);
    let mut read_opts = ReadOptions::default();
    read_opts.set_snapshot(&snapshot);
    let value = db.get_opt(key, &read_opts)?;
    Ok((snapshot.iterator(IteratorMode::Start).count(), value))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("db");

    let mut opts = Options::default();
    opts.create_if_missing(true);
    let db = DB::open(&opts, &path)?;

    // Puts, gets, deletes.
    db.put(b"my key", b"my value")?;
    match db.get(b"my key")? {
        Some(value) => println!("retrieved value {}", String::from_utf8_lossy(&value)),
        None => println!("value not found"),
    }
    db.delete(b"my key")?;
    assert!(db.get(b"my key")?.is_none());

    // An atomic batch.
    let mut batch = WriteBatch::default();
    batch.put(b"key1", b"value1");
    batch.put(b"key2", b"value2");
    batch.put(b"key3", b"value3");
    batch.delete(b"key1");
    batch.put(b"key4", b"value4");
    batch.delete_range(b"key4", b"key9"); // [key4, key9): key4 goes again
    db.write(batch)?;

    // Iteration, both ways, and from a key.
    let keys: Vec<Box<[u8]>> = db
        .iterator(IteratorMode::Start)
        .map(|kv| kv.map(|(k, _)| k))
        .collect::<Result<_, _>>()?;
    assert_eq!(keys, [Box::from(&b"key2"[..]), Box::from(&b"key3"[..])]);
    for item in db.iterator(IteratorMode::From(b"key3", Direction::Reverse)) {
        let (key, value) = item?;
        println!(
            "{} = {}",
            String::from_utf8_lossy(&key),
            String::from_utf8_lossy(&value)
        );
    }

    // A snapshot, and read options with an upper bound.
    let snapshot = db.snapshot();
    db.put(b"key4", b"value4")?;
    assert!(snapshot.get(b"key4")?.is_none());
    let mut read_opts = ReadOptions::default();
    read_opts.set_iterate_upper_bound(b"key3".to_vec());
    assert_eq!(db.iterator_opt(IteratorMode::Start, read_opts).count(), 1);

    // Several keys at once, one point in time.
    let values = db.multi_get([b"key2".as_slice(), b"key9".as_slice()]);
    assert_eq!(
        values[0].as_ref().map(Option::as_deref),
        Ok(Some(&b"value2"[..]))
    );
    assert_eq!(values[1].as_ref().map(Option::as_deref), Ok(None));

    // Durability, compaction and what the engine reports.
    db.flush_wal(true)?;
    db.flush()?;
    // The rocksdb crate's compact_range returns nothing; lsm-demo's returns
    // a Result, which `let _` accepts either way.
    let _ = db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let keys = db.property_int_value(properties::ESTIMATE_NUM_KEYS)?;
    println!(
        "about {} keys; latest sequence {}",
        keys.unwrap_or(0),
        db.latest_sequence_number()
    );
    if let Some(stats) = db.property_value(properties::STATS)? {
        println!("{stats}");
    }
    assert_eq!(snapshot_view(&db, b"key2")?, (3, Some(b"value2".to_vec())));
    drop(snapshot);
    drop(db);
    DB::destroy(&Options::default(), &path)?;

    // The multi-threaded mode, and iteration within a key prefix.
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(5));
    let db = DBWithThreadMode::<MultiThreaded>::open(&opts, dir.path().join("prefixed"))?;
    for key in ["post:1", "user:1", "user:2", "zone:1"] {
        db.put(key, b"v")?;
    }
    let users: Vec<Box<[u8]>> = db
        .prefix_iterator(b"user:")
        .map(|kv| kv.map(|(k, _)| k))
        .collect::<Result<_, _>>()?;
    assert_eq!(
        users,
        [Box::from(&b"user:1"[..]), Box::from(&b"user:2"[..])]
    );
    let mut read_opts = ReadOptions::default();
    read_opts.set_prefix_same_as_start(true);
    let mut it = db.raw_iterator_opt(read_opts);
    it.seek_for_prev(b"user:9");
    let mut backward = Vec::new();
    while let Some(key) = it.key() {
        backward.push(String::from_utf8_lossy(key).into_owned());
        it.prev();
    }
    assert_eq!(backward, ["user:2", "user:1"]);
    assert_eq!(snapshot_view(&db, b"zone:1")?, (4, Some(b"v".to_vec())));

    // Keys in an order of the program's own: newest timestamp first.
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_comparator("newest-first", Box::new(|a: &[u8], b: &[u8]| b.cmp(a)));
    let db = DB::open(&opts, dir.path().join("ordered"))?;
    for ts in [20261203u32, 20261205, 20261204] {
        db.put(ts.to_be_bytes(), b"event")?;
    }
    let newest = db.iterator(IteratorMode::Start).next().transpose()?;
    assert_eq!(
        newest.map(|(k, _)| k),
        Some(Box::from(&20261205u32.to_be_bytes()[..]))
    );
    Ok(())
}
